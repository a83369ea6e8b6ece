"""Growth policy: a writer grows only for bytes it needs, at most once per
string, and never while a view is exported."""
import pytest

from utf8pfx import BufferWriter
from reference import MAX_BYTES_PER_CP, kind_of, ref_encode_many, vint_size

BATCHES = {
    "ascii": ["order-%d" % i for i in range(3000)],
    "ucs1": ["Ärger im Büro %d" % i for i in range(3000)],
    "ucs2": ["東京 %d" % i for i in range(3000)] + ["x" * 50 + "€" * 50],
    "ucs4": ["😀 x%d" % i for i in range(3000)] + ["y" * 40000 + "😀"],
    "mixed": ["a", "é", "€", "😀"] * 800,
}


def expected(items):
    return ref_encode_many(items)  # the pure-Python reference, not the writer


@pytest.mark.parametrize("name", sorted(BATCHES))
def test_exactly_sized_writer_never_grows(name):
    items = BATCHES[name]
    blob = expected(items)
    w = BufferWriter(len(blob))
    assert w.write_strings(items) == len(blob)
    assert w.capacity == len(blob) and w.getvalue() == blob
    w = BufferWriter(len(blob))
    for s in items:
        w.write_string(s)
    assert w.capacity == len(blob) and w.getvalue() == blob


@pytest.mark.parametrize("name", sorted(BATCHES))
def test_exactly_sized_writer_accepts_a_view_during_writes(name):
    # no growth is needed, so an exported view does not get in the way
    items = BATCHES[name]
    blob = expected(items)
    w = BufferWriter(len(blob))
    with memoryview(w) as view:
        w.write_strings(items)
        assert len(view) == 0
    assert w.getvalue() == blob


def test_growth_is_geometric():
    w = BufferWriter()
    caps = []
    for i in range(20000):
        w.write_string("entry %d" % i)
        if not caps or caps[-1] != w.capacity:
            caps.append(w.capacity)
    # the first growth allocates 64 bytes, each later one doubles: exactly
    # 64 * 2**k, never a growth by just the bytes one write needs
    assert caps == [64 * 2**k for k in range(len(caps))]
    assert caps[-1] >= len(w) > caps[-1] // 2


def _worst(items):
    """What a batch can take at most: vint(worst) + worst for each string,
    worst = code points x the kind's widest UTF-8 (ASCII: exactly 1)."""
    total = 0
    for s in items:
        n = len(s) * MAX_BYTES_PER_CP[kind_of(s)]
        total += vint_size(n) + n
    return total


def _short_path_takes(items, cap):
    """How many leading items write_strings' short path writes into a fresh
    writer of capacity cap before the first it cannot (UTF-8 that may take
    128 bytes or more, or no room for that most), and the bytes they take:
    the batch is sized from that item on, when it gets there."""
    used = 0
    for k, s in enumerate(items):
        most = len(s) * MAX_BYTES_PER_CP[kind_of(s)]
        if most >= 128 or most >= cap - used:
            return k, used
        used += len(expected([s]))
    return len(items), used


@pytest.mark.parametrize("name", ["ucs1", "ucs2", "mixed"])
def test_one_growth_for_a_batch_that_does_not_fit(name):
    items = BATCHES[name]
    w = BufferWriter(16)
    w.write_strings(items)
    assert w.getvalue() == expected(items)
    # grown once, to what it had written plus the worst case of the rest
    # (far more than twice the 16 bytes it had): neither a doubling sequence
    # nor one growth per string lands here
    k, used = _short_path_takes(items, 16)
    assert k < len(items)
    assert w.capacity == used + _worst(items[k:])


def test_a_batch_that_fits_as_it_is_does_not_grow():
    items = BATCHES["ucs2"][:100]
    need = len(expected(items))
    w = BufferWriter(need)  # room for the real size, not the worst case
    w.write_strings(items)
    assert w.capacity == need and w.getvalue() == expected(items)
