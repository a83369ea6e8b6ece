"""Memory facts of the C core.

1. For strings without lone surrogates the core reads PEP 393 storage and
   never fills the str's cached UTF-8 copy (which would grow the str for the
   rest of its life).  sys.getsizeof(s) counts that cache, so it must not
   change.  A call known to fill the cache (PyUnicode_AsUTF8AndSize) proves
   the probe sees the cache.
2. Writing into a pre-sized writer allocates nothing per string: tracemalloc
   over 100,000 writes shows (almost) no net or peak growth.  A loop that
   keeps s.encode() results proves the probe sees allocations.
"""
import ctypes
import sys
import tracemalloc

import pytest

import utf8pfx
from utf8pfx import BufferWriter
from utf8pfx._reference import STORAGE_KINDS, storage_kind
from support.reference import ref_encode

_as_utf8 = ctypes.pythonapi.PyUnicode_AsUTF8AndSize
_as_utf8.restype = ctypes.c_void_p
_as_utf8.argtypes = [ctypes.py_object, ctypes.c_void_p]

SAMPLES = {
    "ascii": "plain ascii text",
    "ucs1": "caf\u00e9 cr\u00e8me br\u00fbl\u00e9e",
    "ucs2": "\u20ac 100 \u2014 \u65e5\u672c\u8a9e",
    "ucs4": "emoji \U0001F600\U0001F680 and \U00010348",
}


def fresh(kind, repeat=1):
    """A new str object (never interned, never cached) of the given kind."""
    s = "".join(list(SAMPLES[kind] * repeat))
    assert storage_kind(s) == kind
    return s


@pytest.mark.parametrize("repeat", [1, 40])  # short: one-pass path; long: counting pass
@pytest.mark.parametrize("kind", STORAGE_KINDS)
def test_utf8_cache_is_not_filled(kind, repeat):
    calls = [
        lambda s: BufferWriter().write_string(s),
        lambda s: BufferWriter(1 << 16).write_string(s),
        lambda s: BufferWriter().write_strings([s, s]),
        lambda s: BufferWriter().write_strings(iter([s])),
        utf8pfx.encode,
        lambda s: utf8pfx.encode(s, "surrogatepass"),
        lambda s: utf8pfx.encode(s, "backslashreplace"),  # codec-handled name
        utf8pfx.utf8_length,
        lambda s: utf8pfx.utf8_length(s, "replace"),
    ]
    for call in calls:
        s = fresh(kind, repeat)
        size = sys.getsizeof(s)
        call(s)
        assert sys.getsizeof(s) == size, (kind, call)

    # The probe works: filling the cache is visible for every non-ASCII kind
    # (an ASCII str is its own UTF-8, so it has no separate cache).
    s = fresh(kind, repeat)
    size = sys.getsizeof(s)
    assert _as_utf8(s, None)
    if kind == "ascii":
        assert sys.getsizeof(s) == size
    else:
        assert sys.getsizeof(s) == size + len(s.encode()) + 1


def _strings(kind):
    # short strings of the kind, a few distinct objects reused
    base = SAMPLES[kind]
    return [base[:k] for k in (3, 7, 11, 16) if storage_kind(base[:k]) == kind] or [base]


def _measure(fn):
    """Net and peak bytes traced by tracemalloc while fn() runs."""
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        keep = fn()
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del keep
    return after - before, peak - before


N = 100_000
SLACK = 4096  # bytes: well under one byte per write


@pytest.mark.parametrize("kind", STORAGE_KINDS)
def test_presized_writer_allocates_nothing_per_string(kind):
    strings = _strings(kind)
    items = [strings[i % len(strings)] for i in range(N)]
    total = sum(len(ref_encode(x)) for x in strings) * (N // len(strings) + 1)
    w = BufferWriter(total)
    cap = w.capacity
    write = w.write_string

    def loop():
        for x in items:
            write(x)

    net, peak = _measure(loop)
    assert w.capacity == cap  # no growth happened
    assert len(w) == sum(len(ref_encode(x)) for x in items)
    assert net < SLACK and peak < SLACK, (net, peak)

    # utf8_length allocates nothing at all
    x = strings[-1]
    length = utf8pfx.utf8_length

    def lengths():
        for _ in range(N):
            length(x)

    net, peak = _measure(lengths)
    assert net < SLACK and peak < SLACK, (net, peak)


@pytest.mark.parametrize("kind", STORAGE_KINDS)
def test_presized_writer_write_strings_does_not_grow(kind):
    # An exactly pre-sized writer has room for the whole batch: write_strings
    # must neither grow it nor allocate per item.
    strings = _strings(kind)
    items = [strings[i % len(strings)] for i in range(N)]
    w = BufferWriter(sum(len(ref_encode(x)) for x in items))
    cap = w.capacity
    net, peak = _measure(lambda: w.write_strings(items))
    assert w.getvalue()[:len(ref_encode(items[0]))] == ref_encode(items[0])
    assert w.capacity == cap
    assert net < SLACK and peak < SLACK, (net, peak)


@pytest.mark.parametrize("kind", STORAGE_KINDS)
def test_the_allocation_probe_sees_allocations(kind):
    # Control: the same loop keeping s.encode() results must show growth of
    # at least N small bytes objects, so a pass above is meaningful.
    strings = _strings(kind)
    items = [strings[i % len(strings)] for i in range(N)]

    def loop():
        keep = []
        for x in items:
            keep.append(x.encode())
        return keep

    net, peak = _measure(loop)
    assert net > N * 20 and peak > N * 20, (net, peak)

    # and a writer that starts empty shows its growth
    def growing():
        w = BufferWriter()
        for x in items:
            w.write_string(x)
        return w

    net, peak = _measure(growing)
    assert net >= N * 4, (net, peak)
