"""The per-call short paths of the writer (issue 7): inline copies of short
ASCII bodies (no memcpy call, overlapping 4/8-byte moves) and the scalar
encoders inlined for non-ASCII bodies of up to 16 code points, with a
surrogate at every position falling back to the handler.  Byte-exact
against CPython's codec at every length around those cut-overs, for every
handler and preset, one call and batch."""
import pytest

import utf8pfx

HANDLERS = ("strict", "surrogatepass", "surrogateescape", "replace", "ignore",
            "backslashreplace")
FILL = {"ascii": "abcdefghij", "ucs1": "aé\xffbc", "ucs2": "aжé中", "ucs4": "a😀ж\xe9"}


def vint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def ref(s, errors):
    return vint(len(s.encode("utf-8", errors))) + s.encode("utf-8", errors)


def texts(kind, n):
    base = (FILL[kind] * (n // len(FILL[kind]) + 2))[:n]
    if kind == "ucs4" and n and max(map(ord, base)) < 0x10000:
        base = base[:-1] + "😀"
    return base


@pytest.mark.parametrize("kind", sorted(FILL))
def test_lengths_around_cutovers(kind):
    for n in range(0, 41):
        s = texts(kind, n)
        want = ref(s, "strict")
        w = utf8pfx.BufferWriter()
        w.write_string("x")
        assert w.write_string(s) == len(want)
        assert w.getvalue() == b"\x01x" + want, (kind, n)
        w2 = utf8pfx.BufferWriter(1 << 12)
        w2.write_strings([s, s, "y", s, s])
        assert w2.getvalue() == want * 2 + b"\x01y" + want * 2
        assert utf8pfx.encode(s) == want


@pytest.mark.parametrize("kind", ["ucs2", "ucs4"])
@pytest.mark.parametrize("errors", HANDLERS)
def test_surrogate_at_every_position(kind, errors):
    for n in (1, 2, 5, 11, 16, 17, 20):
        for i in range(n):
            s = texts(kind, n)
            s = s[:i] + "\udc80" + s[i + 1:]
            if kind == "ucs4" and max(map(ord, s)) < 0x10000:
                s = s + "😀"
            w = utf8pfx.BufferWriter(256, errors=errors)
            w.write_string("k")
            try:
                want = ref(s, errors)
            except UnicodeEncodeError as ce:
                with pytest.raises(UnicodeEncodeError) as ei:
                    w.write_string(s)
                assert (ei.value.start, ei.value.end) == (ce.start, ce.end)
                assert w.getvalue() == b"\x01k"
                continue
            w.write_string(s)
            assert w.getvalue() == b"\x01k" + want, (kind, errors, n, i)


@pytest.mark.parametrize("prefix", ["varint", "zigzag", "varint+1", "u16be", "i32be", "u32le"])
def test_short_ascii_every_preset(prefix):
    for n in range(0, 40):
        s = "q" * n
        w = utf8pfx.BufferWriter(prefix=prefix)
        w.write_string(s)
        r = utf8pfx.BufferReader(w.getvalue(), prefix=prefix)
        assert r.read_string() == s and r.remaining == 0
        assert w.getvalue() == utf8pfx.encode(s, prefix=prefix)


@pytest.mark.parametrize("errors", ["strict", "replace", "surrogateescape"])
def test_reader_short_payloads_every_high_byte_position(errors):
    """The reader's inline ASCII check (overlapping loads, payloads <= 32
    bytes) must see a byte >= 0x80 at every position: valid 2-byte
    sequences decode, invalid bytes raise or go to the handler exactly as
    bytes.decode does."""
    for n in range(0, 41):
        base = bytes(b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH"[:n])
        cases = [base]
        for i in range(n):
            cases.append(base[:i] + b"\xff" + base[i + 1:])
            if i + 1 < n:
                cases.append(base[:i] + "é".encode() + base[i + 2:])
        for payload in cases:
            blob = vint(len(payload)) + payload + b"\x01z"
            r = utf8pfx.BufferReader(blob, errors=errors)
            try:
                want = payload.decode("utf-8", errors)
            except UnicodeDecodeError as ce:
                with pytest.raises(UnicodeDecodeError) as ei:
                    r.read_string()
                assert (ei.value.start, ei.value.end) == (ce.start, ce.end)
                assert r.position == 0
                continue
            assert r.read_string() == want
            assert r.read_string() == "z"
            assert utf8pfx.BufferReader(blob, errors=errors).read_strings() == [want, "z"]
