"""The long-ASCII read path: payloads of 64+ bytes whose first 64
and last 8 bytes are ASCII get a str allocated first and the copy_ascii
kernel (check fused with the copy); a byte >= 0x80 anywhere else makes the
kernel refuse, the str is dropped and the payload goes the general way.
Every decode level (the ``level`` fixture of conftest.py), against
CPython's codec, values and errors alike."""
import random

import pytest

from reference import pfx, vint
from utf8pfx import BufferReader, decode, decode_all

LENGTHS = (64, 65, 71, 72, 127, 128, 129, 255, 256, 257, 1000, 4095, 4096, 4097, 65537)


def ascii_bytes(rng, n):
    return bytes(rng.randrange(0x80) for _ in range(n))


def ours(payload, errors="strict"):
    try:
        return decode(pfx(payload), errors)
    except UnicodeDecodeError as e:
        return ("err", e.start, e.end, e.reason, e.data_offset)


def cpython(payload, errors="strict"):
    try:
        return payload.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        return ("err", e.start, e.end, e.reason, len(vint(len(payload))) + e.start)


def test_pure_ascii_every_length(level):
    rng = random.Random(7)
    for n in LENGTHS:
        p = ascii_bytes(rng, n)
        s = decode(pfx(p))
        assert s == p.decode("ascii") and s.isascii() and len(s) == n


def test_ascii_with_one_foreign_sequence_everywhere(level):
    """The probe passes (first 64 and last 8 ASCII) but the kernel meets a
    non-ASCII byte in the middle: the result is CPython's, valid or not."""
    rng = random.Random(11)
    inserts = ["é".encode(), "Ж".encode(), "中".encode(), "😀".encode(), b"\x80", b"\xff",
               b"\xc3", b"\xed\xa0\x80"]
    for n in (136, 200, 300, 1000, 4096, 4097):
        base = ascii_bytes(rng, n)
        positions = sorted({64, 65, n // 2, n - 9 - 4, rng.randrange(64, n - 12)})
        for pos in positions:
            for ins in inserts:
                p = base[:pos] + ins + base[pos + len(ins):]
                assert len(p) == n
                for errors in ("strict", "replace", "surrogatepass"):
                    assert ours(p, errors) == cpython(p, errors), (n, pos, ins, errors)


def test_foreign_in_probe_region(level):
    """A non-ASCII byte in the first 64 or last 8 bytes skips the fused path."""
    rng = random.Random(13)
    for n in (64, 100, 4096):
        base = ascii_bytes(rng, n)
        for pos in (0, 1, 31, 63, n - 8, n - 2):
            p = base[:pos] + "é".encode() + base[pos + 2:]
            p = p[:n]
            assert ours(p) == cpython(p), (n, pos)


def test_reader_and_decode_all_on_long_ascii_records(level):
    rng = random.Random(17)
    payloads = [ascii_bytes(rng, n) for n in (64, 5000, 70, 3)]
    payloads.insert(2, ascii_bytes(rng, 100)[:80] + "ß".encode() + ascii_bytes(rng, 20))
    data = b"".join(map(pfx, payloads))
    want = [p.decode() for p in payloads]
    assert decode_all(data) == want
    r = BufferReader(data)
    assert r.read_strings() == want
    # an invalid record after valid long ASCII ones: nothing consumed
    bad = data + pfx(ascii_bytes(rng, 90) + b"\xff" + ascii_bytes(rng, 9))
    r = BufferReader(bad)
    with pytest.raises(UnicodeDecodeError):
        r.read_strings()
    assert r.read_string() == want[0]
