"""Growth policy: a writer grows only for bytes it needs, at most once per
string, and never while a view is exported."""
import pytest

from utf8pfx import BufferWriter

BATCHES = {
    "ascii": ["order-%d" % i for i in range(3000)],
    "ucs1": ["Ärger im Büro %d" % i for i in range(3000)],
    "ucs2": ["東京 %d" % i for i in range(3000)] + ["x" * 50 + "€" * 50],
    "ucs4": ["😀 x%d" % i for i in range(3000)] + ["y" * 40000 + "😀"],
    "mixed": ["a", "é", "€", "😀"] * 800,
}


def expected(items):
    w = BufferWriter()
    w.write_strings(items)
    return w.getvalue()


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
    caps = set()
    for i in range(20000):
        w.write_string("entry %d" % i)
        caps.add(w.capacity)
    # doubling: about log2(final size) distinct capacities, not one per write
    assert len(caps) <= len(w).bit_length() + 1


def test_one_growth_for_a_batch_that_does_not_fit():
    items = BATCHES["ucs2"]
    w = BufferWriter(16)
    w.write_strings(items)
    grown = w.capacity
    assert grown >= len(w)
    # worst case of the batch, reserved once: 3 bytes a code point + prefixes
    assert grown <= sum(3 * len(s) + 3 for s in items)
