"""Sizes beyond memory or beyond Py_ssize_t: MemoryError or
OverflowError, never a wrap-around, and the object unchanged.

The one test marked `slow` writes and reads back a single string of more
than 2**31 bytes (about 4.5 GiB of RAM, a minute or so); it runs only when
asked for:

    UTF8PFX_SLOW=1 pytest -m slow tests/test_robustness_limits.py
"""
import os
import sys

import pytest

import utf8pfx
from utf8pfx import BufferReader, BufferWriter
from support.reference import vint

MAX = sys.maxsize  # PY_SSIZE_T_MAX


@pytest.mark.parametrize("n, exc", [
    (MAX, MemoryError), (MAX // 2, MemoryError), (2**62, MemoryError),
    (MAX + 1, OverflowError), (2**64, OverflowError), (2**200, OverflowError),
])
def test_capacity_beyond_memory(n, exc):
    with pytest.raises(exc):
        BufferWriter(n)


@pytest.mark.parametrize("extra, exc", [
    (MAX, MemoryError), (MAX - 3, MemoryError), (2**62, MemoryError),
    (MAX + 1, OverflowError), (2**100, OverflowError),
])
def test_reserve_beyond_memory_leaves_the_writer(extra, exc):
    w = BufferWriter(16)
    w.write_string("abc")
    with pytest.raises(exc):
        w.reserve(extra)
    assert w.getvalue() == b"\x03abc" and w.capacity == 16
    # len + extra would pass PY_SSIZE_T_MAX: MemoryError, not a small wrapped size
    with pytest.raises(MemoryError):
        w.reserve(MAX - 1)
    assert w.capacity == 16
    w.write_string("d")
    assert w.getvalue() == b"\x03abc\x01d"


def test_huge_declared_lengths_do_not_allocate():
    for n in (2**31, 2**32 + 5, 2**63 - 1, 2**63, 2**64 - 1, MAX):
        blob = vint(n) + b"abc"
        r = BufferReader(blob)
        for call in (r.read_string, r.read_bytes, r.skip_string, r.read_strings):
            with pytest.raises(ValueError, match="runs past the end"):
                call()
            assert r.position == 0
        with pytest.raises(ValueError):
            utf8pfx.decode(blob)


@pytest.mark.parametrize("n, exc", [
    (2**62, ValueError), (MAX, ValueError), (MAX + 1, OverflowError), (2**64, OverflowError),
])
def test_read_raw_and_read_strings_counts_beyond_data(n, exc):
    r = BufferReader(b"\x01a")
    with pytest.raises(exc):
        r.read_raw(n)
    with pytest.raises(exc):
        r.read_strings(n)
    assert r.position == 0 and r.read_string() == "a"


def test_vint_limits():
    w = BufferWriter()
    assert w.write_vint(2**64 - 1) == 10 and w.getvalue() == vint(2**64 - 1)
    for bad, exc in ((2**64, OverflowError), (2**70, OverflowError), (-1, ValueError)):
        with pytest.raises(exc):
            w.write_vint(bad)
        with pytest.raises(exc):
            utf8pfx.vint_size(bad)
    assert w.getvalue() == vint(2**64 - 1)
    r = BufferReader(w.getvalue())
    assert r.read_vint() == 2**64 - 1


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("UTF8PFX_SLOW") != "1",
                    reason="needs ~4.5 GiB and a minute: UTF8PFX_SLOW=1 pytest -m slow")
def test_one_string_of_more_than_2_gib():
    n = 2**31 + 77  # bytes of UTF-8: past every int32 boundary
    s = "\u00e9" * ((n - 3) // 2) + "abc"  # UCS1: 2 bytes per code point but 3
    body = 2 * ((n - 3) // 2) + 3
    w = BufferWriter()
    written = w.write_string(s)
    assert written == len(vint(body)) + body
    v = memoryview(w)
    assert bytes(v[:len(vint(body))]) == vint(body)
    assert bytes(v[-5:]) == b"\xc3\xa9abc"
    r = BufferReader(v)
    back = r.read_string()
    assert r.remaining == 0
    assert len(back) == len(s) and back == s
    del back, r
    v.release()
    assert utf8pfx.utf8_length(s) == body
