"""Wire-format presets (prefix=) and encoding="mutf-8": the C core against
the pure-Python reference in utf8pfx._reference, every preset both ways.
(A pickled writer keeps its preset: test_writer.py, with the writer's other
pickling tests; Arrow under every preset: test_arrow_presets.py.)"""
import codecs
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

import utf8pfx
from utf8pfx import BufferReader, BufferWriter, decode, decode_all, encode
from utf8pfx._reference import (
    PREFIX_MAX,
    PREFIXES,
    mutf8_decode,
    reference_body,
    reference_decode_all,
    reference_encode,
)
from utf8pfx.testing import boundary_examples, strings

ENCODINGS = ("utf-8", "mutf-8")
HANDLERS = ("strict", "surrogatepass", "surrogateescape", "replace", "ignore",
            "backslashreplace")


def outcome(fn, *args, **kwargs):
    try:
        return ("ok", fn(*args, **kwargs))
    except Exception as e:  # compared by type and fields
        fields = (getattr(e, "start", None), getattr(e, "end", None),
                  getattr(e, "reason", None), getattr(e, "encoding", None))
        return ("raise", type(e), fields if isinstance(e, UnicodeError) else None)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("prefix", PREFIXES)
def test_boundary_examples_all_paths(prefix, encoding, kernels):
    """Every fixed boundary string through encode, the writer (one string and
    a batch), and back through decode / decode_all / the reader."""
    xs = boundary_examples(prefix, encoding)
    w = BufferWriter(prefix=prefix, encoding=encoding)
    for s in xs:
        want = reference_encode(s, prefix, encoding)
        assert encode(s, prefix=prefix, encoding=encoding) == want, (prefix, len(s))
        assert decode(want, prefix=prefix, encoding=encoding) == s
        before = len(w)
        assert w.write_string(s) == len(want)
        assert w.getvalue()[before:] == want
    blob = w.getvalue()
    w2 = BufferWriter(prefix=prefix, encoding=encoding)
    w2.write_strings(xs)
    assert w2.getvalue() == blob
    assert decode_all(blob, prefix=prefix, encoding=encoding) == xs
    with BufferReader(blob, prefix=prefix, encoding=encoding) as r:
        assert r.read_strings() == xs


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("prefix", PREFIXES)
@given(data=st.data())
def test_encode_matches_reference(prefix, encoding, data):
    errors = data.draw(st.sampled_from(HANDLERS))
    s = data.draw(strings(prefix, encoding, surrogates=True))
    want = outcome(reference_encode, s, prefix, encoding, errors)
    assert outcome(encode, s, errors, prefix=prefix, encoding=encoding) == want
    w = BufferWriter(errors=errors, prefix=prefix, encoding=encoding)
    w.write_raw(b"head")
    got = outcome(w.write_string, s)
    if want[0] == "ok":
        assert got == ("ok", len(want[1]))
        assert w.getvalue() == b"head" + want[1]
    else:
        assert got[:2] == want[:2]
        assert w.getvalue() == b"head"  # nothing written


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("prefix", PREFIXES)
@given(xs=st.lists(st.one_of(st.text(), st.text(st.characters(max_codepoint=0x10FFFF)))))
def test_batch_and_reader_roundtrip(prefix, encoding, xs):
    xs = [x for x in xs if not any(0xD800 <= ord(c) <= 0xDFFF for c in x)]
    w = BufferWriter(prefix=prefix, encoding=encoding)
    n = w.write_strings(xs)
    want = b"".join(reference_encode(x, prefix, encoding) for x in xs)
    assert n == len(want) and w.getvalue() == want
    assert decode_all(want, prefix=prefix, encoding=encoding) == xs
    assert reference_decode_all(want, prefix, encoding) == xs
    r = BufferReader(want, prefix=prefix, encoding=encoding)
    assert list(r) == xs


@pytest.mark.parametrize("handler", HANDLERS)
@given(payload=st.binary(max_size=24) | st.lists(st.sampled_from(
    [b"\xc0\x80", b"\xed\xa0\xbd", b"\xed\xb8\x80", b"\xf0\x9f\x98\x80", b"a", b"\x00",
     b"\xc3\xa9", b"\xe6\x9d\xb1", b"\xe0\x80\x80", b"\xed\xa0", b"\xc0", b"\xc1\x81"]),
    max_size=8).map(b"".join))
def test_mutf8_decode_matches_reference(handler, payload):
    """Any bytes as a MUTF-8 payload: the same str or the same error
    (type, start, end, reason) as the reference, under every handler."""
    blob = reference_encode_bytes(payload)
    want = outcome(mutf8_decode, payload, handler)
    assert outcome(decode, blob, handler, encoding="mutf-8") == want
    if want[0] == "ok":
        # what was read writes back to bytes that read the same again
        again = encode(want[1], "surrogatepass", encoding="mutf-8")
        assert decode(again, "surrogatepass", encoding="mutf-8") == want[1]


def reference_encode_bytes(payload):
    from utf8pfx._reference import leb128
    return leb128(len(payload)) + payload


def test_mutf8_bytes():
    assert encode("\0", encoding="mutf-8") == b"\x02\xc0\x80"
    assert encode("\U0001f600", encoding="mutf-8") == b"\x06\xed\xa0\xbd\xed\xb8\x80"
    assert encode("a\0\u00e9\u6771", encoding="mutf-8") == b"\x08a\xc0\x80\xc3\xa9\xe6\x9d\xb1"
    # Java's readUTF takes a raw 00 too; C0 80 and 00 both read as U+0000
    assert decode(b"\x03\xc0\x80\x00", encoding="mutf-8") == "\0\0"
    # a 4-byte UTF-8 sequence is not MUTF-8
    with pytest.raises(UnicodeDecodeError) as ei:
        decode(b"\x05a\xf0\x9f\x98\x80", encoding="mutf-8")
    assert (ei.value.encoding, ei.value.start, ei.value.end) == ("mutf-8", 1, 2)
    assert ei.value.data_offset == 2 and ei.value.payload_offset == 1


def test_mutf8_surrogates():
    pair = "\ud83d\ude00"  # a Python str holding an explicit surrogate pair
    with pytest.raises(UnicodeEncodeError):
        encode(pair, encoding="mutf-8")
    b = encode(pair, "surrogatepass", encoding="mutf-8")
    # the same bytes as the supplementary character, as Java writes it ...
    assert b == encode("\U0001f600", encoding="mutf-8")
    # ... so it reads back as that character (documented: not a round trip)
    assert decode(b, "surrogatepass", encoding="mutf-8") == "\U0001f600"
    # a lone surrogate needs surrogatepass both ways
    lone = encode("x\udc00", "surrogatepass", encoding="mutf-8")
    assert lone == b"\x04x\xed\xb0\x80"
    assert decode(lone, "surrogatepass", encoding="mutf-8") == "x\udc00"
    with pytest.raises(UnicodeDecodeError) as ei:
        decode(lone, encoding="mutf-8")
    assert (ei.value.start, ei.value.end) == (1, 4)
    assert decode(lone, "replace", encoding="mutf-8") == "x\ufffd"


@pytest.mark.parametrize("prefix,width", [("u16be", 2), ("i32be", 4), ("u32le", 4)])
def test_fixed_width_bytes(prefix, width):
    assert encode("ab", prefix=prefix)[:width] == (2).to_bytes(
        width, "little" if prefix == "u32le" else "big")
    assert encode("", prefix=prefix) == b"\0" * width


def test_prefix_bytes():
    assert encode("a" * 64, prefix="zigzag")[:2] == b"\x80\x01"
    assert encode("a" * 63, prefix="zigzag")[:1] == b"\x7e"
    assert encode("a" * 127, prefix="varint+1")[:2] == b"\x80\x01"
    assert encode("a" * 126, prefix="varint+1")[:1] == b"\x7f"


def test_overflow_writes_nothing():
    big = "a" * 65536
    with pytest.raises(OverflowError, match="u16be"):
        encode(big, prefix="u16be")
    assert len(encode("a" * 65535, prefix="u16be")) == 65537
    w = BufferWriter(prefix="u16be", encoding="mutf-8")
    w.write_string("keep")
    before = w.getvalue()
    for s in (big, "\u00e9" * 32768, "\0" * 32768, "\U0001f600" * 10923):
        with pytest.raises(OverflowError):
            w.write_string(s)
        assert w.getvalue() == before
    with pytest.raises(OverflowError):
        w.write_strings(["x", "y", "\u6771" * 21846])  # all or nothing
    assert w.getvalue() == before
    with pytest.raises(OverflowError):
        w.write_bytes(b"\0" * 65536)
    assert w.getvalue() == before


def test_varint1_null():
    w = BufferWriter(prefix="varint+1")
    assert w.write_string(None) == 1
    w.write_strings(["a", None, ""])
    blob = w.getvalue()
    assert blob == b"\x00\x02a\x00\x01"
    assert encode(None, prefix="varint+1") == b"\x00"
    assert decode(b"\x00", prefix="varint+1") is None
    assert decode_all(blob, prefix="varint+1") == [None, "a", None, ""]
    r = BufferReader(blob, prefix="varint+1")
    assert r.read_string() is None
    assert r.read_strings(2) == ["a", None]
    r.skip_string()
    assert r.remaining == 0
    assert BufferReader(b"\x00\x01", prefix="varint+1").read_bytes() is None
    for p in PREFIXES:
        if p == "varint+1":
            continue
        with pytest.raises(TypeError, match="NoneType"):
            BufferWriter(prefix=p).write_string(None)
        w = BufferWriter(prefix=p)
        with pytest.raises(TypeError, match="item 1"):
            w.write_strings(["a", None])
        assert len(w) == 0
        with pytest.raises(TypeError):
            encode(None, prefix=p)


@pytest.mark.parametrize("blob,prefix,msg", [
    (b"\x04ab\x03", "zigzag", r"negative string length -2 .*offset 3"),
    (b"\x00\x00\x00\x01a\xff\xff\xff\xff", "i32be", r"negative string length -1 .*offset 5"),
    (b"\x00\x01a\x00", "u16be", r"truncated string length prefix at offset 3: expected 2 bytes"),
    (b"\x01\x00\x00\x00a\x09\x00\x00\x00", "u32le", r"length 9 \(prefix at offset 5\) runs past"),
    (b"\x02a\x80", "varint+1", r"truncated varint at offset 2"),
])
def test_bad_prefix_errors(blob, prefix, msg):
    r = BufferReader(blob, prefix=prefix)
    with pytest.raises(ValueError, match=msg):
        r.read_strings()
    assert r.position == 0
    assert r.read_string() is not None or prefix == "varint+1"
    pos = r.position
    with pytest.raises(ValueError, match=msg):
        r.read_string()
    assert r.position == pos
    with pytest.raises(ValueError, match=msg):
        decode_all(blob, prefix=prefix)


def test_strict_vint_presets():
    assert decode(b"\x84\x00ab", prefix="zigzag") == "ab"
    with pytest.raises(ValueError, match="non-minimal"):
        BufferReader(b"\x84\x00ab", prefix="zigzag", strict_vint=True).read_string()
    with pytest.raises(ValueError, match="non-minimal"):
        BufferReader(b"\x80\x00", prefix="varint+1", strict_vint=True).read_string()


def test_arguments():
    w = BufferWriter(prefix="i32be", encoding="mutf-8")
    assert (w.prefix, w.encoding) == ("i32be", "mutf-8")
    r = BufferReader(b"", prefix="zigzag")
    assert (r.prefix, r.encoding) == ("zigzag", "utf-8")
    assert BufferWriter().prefix == "varint"
    for bad in ("varint32", "VARINT", "u16"):
        with pytest.raises(ValueError, match="prefix"):
            BufferWriter(prefix=bad)
        with pytest.raises(ValueError, match="prefix"):
            encode("a", prefix=bad)
        with pytest.raises(ValueError, match="prefix"):
            decode(b"\x00", prefix=bad)
    with pytest.raises(ValueError, match="encoding"):
        BufferReader(b"", encoding="latin-1")
    with pytest.raises(TypeError):
        encode("a", prefix=3)
    with pytest.raises(TypeError):
        decode_all(b"", encoding=b"utf-8")
    with pytest.raises(TypeError):
        encode("a", "strict", "varint")  # keyword-only


def test_custom_handler_mutf8():
    seen = []

    def handler(exc):
        seen.append((exc.start, exc.end))
        return ("<%d>" % (exc.end - exc.start), exc.end)

    codecs.register_error("utf8pfx-test-presets", handler)
    s = "\0\ud800\ud801z\U0001f600\udfff"
    want = reference_encode(s, "u16be", "mutf-8", "utf8pfx-test-presets")
    assert want == b"\x00\x0f\xc0\x80<2>z\xed\xa0\xbd\xed\xb8\x80<1>"
    seen.clear()
    assert encode(s, "utf8pfx-test-presets", prefix="u16be", encoding="mutf-8") == want
    assert seen == [(1, 3), (5, 6)]
    w = BufferWriter(errors="utf8pfx-test-presets", prefix="u16be", encoding="mutf-8")
    w.write_string(s)
    assert w.getvalue() == want


def test_prefix_max_table():
    assert PREFIX_MAX["u16be"] == 65535 and PREFIX_MAX["i32be"] == 2**31 - 1


@pytest.mark.parametrize("handler", ["strict", "surrogateescape", "replace", "backslashreplace"])
def test_mutf8_error_positions_match_cpython_utf8(handler):
    """MUTF-8 hands a surrogate run to the handler where CPython's UTF-8
    encoder does, also when the string takes the MUTF-8-only path (a NUL or
    a supplementary character in it): under surrogateescape the run's
    U+DC80..U+DCFF head is escaped first and the error starts after it."""
    alphabet = ["a", "\x00", "\U0001f600", "\udc80", "\udcff", "\udc7f", "\ud800"]
    for n in range(1, 4):
        for t in itertools.product(alphabet, repeat=n):
            s = "".join(t)
            try:
                s.encode("utf-8", handler)
                continue  # no error: the bytes are compared elsewhere
            except UnicodeEncodeError as e:
                want = (e.start, e.end, e.reason, e.encoding)
            for fn in (lambda: encode(s, handler, encoding="mutf-8"),
                       lambda: BufferWriter(errors=handler, encoding="mutf-8").write_string(s)):
                with pytest.raises(UnicodeEncodeError) as ei:
                    fn()
                got = ei.value
                assert (got.start, got.end, got.reason, got.encoding) == want, repr(s)


@pytest.mark.parametrize("prefix", ["varint", "zigzag", "varint+1", "u16be", "i32be", "u32le"])
def test_short_ascii_every_preset(prefix):
    for n in range(0, 40):
        s = "q" * n
        w = utf8pfx.BufferWriter(prefix=prefix)
        w.write_string(s)
        r = utf8pfx.BufferReader(w.getvalue(), prefix=prefix)
        assert r.read_string() == s and r.remaining == 0
        assert w.getvalue() == utf8pfx.encode(s, prefix=prefix)
