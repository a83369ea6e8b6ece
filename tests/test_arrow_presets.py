"""Arrow in and out under every wire-format preset (prefix=, encoding=).

write_arrow(pa.array(values)) must give exactly the bytes of
write_strings(values) on a writer with the same preset, and
decode_arrow(blob, prefix=, encoding=) exactly pa.array(decode_all(blob,
prefix=, encoding=)), null markers (varint+1) as Arrow nulls.  The pyarrow
tests skip, with the reason, where pyarrow is missing; the ones over the
ctypes producer (tests/support/arrow_producer.py) always run.
"""
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from utf8pfx import BufferReader, BufferWriter, decode_all, decode_arrow
from support.arrow_producer import ArrayProducer, offsets32, view
from support.strategies import text_scalar

try:
    import pyarrow as pa
except ImportError:  # pragma: no cover - the arrow extra is optional
    pa = None

needs_pa = pytest.mark.skipif(pa is None,
                              reason="pyarrow is not installed (pip install '.[arrow]')")

PREFIXES = ["varint", "zigzag", "varint+1", "u16be", "i32be", "u32le"]
ENCODINGS = ["utf-8", "mutf-8"]
PREFILL = b"\x07prefill"

# MUTF-8 differs from UTF-8 exactly on U+0000 and supplementary characters:
# weight them in, beside the project's boundary-heavy scalar strings
special = st.lists(st.sampled_from(["\0", "\U0001F600", "\U0010FFFF", "a", "\xe9", "\u6771"]),
                   max_size=8).map("".join)
text = st.one_of(text_scalar, special)
values = st.lists(st.one_of(st.none(), text), max_size=40)


def writer(pf, enc):
    w = BufferWriter(prefix=pf, encoding=enc)
    w.write_raw(PREFILL)
    return w


def expected(pf, enc, vals, nulls):
    """write_strings of the values as the nulls rule means them."""
    w = writer(pf, enc)
    items = []
    for v in vals:
        if v is not None:
            items.append(v)
        elif nulls == "empty":
            items.append("")
        elif nulls == "null":
            items.append(None)
    w.write_strings(items)
    return w.getvalue()


def arrow_types():
    types = [pa.utf8(), pa.large_utf8()]
    if hasattr(pa, "string_view"):
        types.append(pa.string_view())
    return types


# ------------------------------------------------------------- in (pyarrow)

@needs_pa
@pytest.mark.parametrize("enc", ENCODINGS)
@pytest.mark.parametrize("pf", PREFIXES)
@given(vals=values, pick=st.integers(0, 2), dict_encode=st.booleans())
def test_write_arrow_equals_write_strings(pf, enc, vals, pick, dict_encode):
    typ = arrow_types()[pick % len(arrow_types())]
    arr = pa.array(vals, type=typ)
    if dict_encode and typ != pa.string_view():
        arr = arr.dictionary_encode()
    has_null = any(v is None for v in vals)
    # the default: varint+1 writes its null marker, the others refuse nulls
    w = writer(pf, enc)
    if pf == "varint+1":
        n = w.write_arrow(arr)
        assert w.getvalue() == expected(pf, enc, vals, "null")
        assert n == len(w.getvalue()) - len(PREFILL)
        # write_strings hands Arrow to write_arrow with the same default
        w2 = writer(pf, enc)
        w2.write_strings(arr)
        assert w2.getvalue() == w.getvalue()
    elif has_null:
        with pytest.raises(ValueError, match=r"row \d+ is null"):
            w.write_arrow(arr)
        assert w.getvalue() == PREFILL
    else:
        w.write_arrow(arr)
        assert w.getvalue() == expected(pf, enc, vals, "skip")
    for nulls in ["skip", "empty"]:
        w = writer(pf, enc)
        w.write_arrow(arr, nulls=nulls)
        assert w.getvalue() == expected(pf, enc, vals, nulls)


@needs_pa
@pytest.mark.parametrize("enc", ENCODINGS)
@given(vals=st.lists(st.one_of(st.none(), text), max_size=30), cut=st.integers(0, 30))
def test_chunked_varint1_nulls(enc, vals, cut):
    cut = min(cut, len(vals))
    arr = pa.chunked_array([pa.array(vals[:cut], pa.utf8()), pa.array(vals[cut:], pa.utf8())])
    w = writer("varint+1", enc)
    w.write_arrow(arr)
    assert w.getvalue() == expected("varint+1", enc, vals, "null")


@needs_pa
def test_nulls_rules_per_preset():
    arr = pa.array(["a", None])
    w = BufferWriter(prefix="varint+1")
    assert w.write_arrow(arr) == 3
    assert w.getvalue() == b"\x02a\x00"
    assert decode_all(w.getvalue(), prefix="varint+1") == ["a", None]
    w = BufferWriter(prefix="varint+1")
    w.write_arrow(arr, nulls="empty")          # an empty string: length 0 + 1
    assert w.getvalue() == b"\x02a\x01"
    w = BufferWriter(prefix="varint+1")
    with pytest.raises(ValueError, match="row 1 is null"):
        w.write_arrow(arr, nulls="error")      # asked for explicitly
    assert w.getvalue() == b""
    for pf in ["varint", "zigzag", "u16be", "i32be", "u32le"]:
        w = BufferWriter(prefix=pf)
        with pytest.raises(ValueError, match="null marker"):
            w.write_arrow(arr, nulls="null")
        assert w.getvalue() == b""
        w.write_arrow(arr, nulls="empty")
        assert decode_all(w.getvalue(), prefix=pf) == ["a", ""]


@needs_pa
@pytest.mark.parametrize("enc", ENCODINGS)
def test_u16be_too_long_refused(enc):
    long_ = "x" * 65536
    ok = "y" * 65535
    for typ in arrow_types():
        for arr in [pa.array(["a", ok, long_, "b"], typ),
                    pa.chunked_array([pa.array(["a", ok], typ), pa.array([long_, "b"], typ)])]:
            w = writer("u16be", enc)
            with pytest.raises(OverflowError, match=r"row 2 is 65536 bytes.*'u16be'"):
                w.write_arrow(arr)
            assert w.getvalue() == PREFILL
            with pytest.raises(OverflowError):
                w.write_strings(arr)
            assert w.getvalue() == PREFILL
    # dictionary-encoded
    w = writer("u16be", enc)
    with pytest.raises(OverflowError, match="row 1 is 65536 bytes"):
        w.write_arrow(pa.array(["a", long_, None]).dictionary_encode(), nulls="skip")
    assert w.getvalue() == PREFILL
    # the limit itself is fine
    w = writer("u16be", enc)
    w.write_arrow(pa.array([ok]))
    assert w.getvalue() == PREFILL + b"\xff\xff" + ok.encode()


@needs_pa
def test_u16be_too_long_only_as_mutf8():
    # 40000 NULs: 40000 bytes of UTF-8, 80000 of MUTF-8 (C0 80 each)
    arr = pa.array(["ok", "\0" * 40000])
    w = writer("u16be", "utf-8")
    w.write_arrow(arr)
    w = writer("u16be", "mutf-8")
    with pytest.raises(OverflowError, match="row 1 is 80000 bytes long as MUTF-8"):
        w.write_arrow(arr)
    assert w.getvalue() == PREFILL
    with pytest.raises(OverflowError):  # as write_strings of the same values
        writer("u16be", "mutf-8").write_strings(["ok", "\0" * 40000])


@needs_pa
def test_mutf8_conversion_bytes():
    w = BufferWriter(prefix="u16be", encoding="mutf-8")
    w.write_arrow(pa.array(["A\0\U0001F600"]))
    assert w.getvalue() == b"\x00\tA\xc0\x80\xed\xa0\xbd\xed\xb8\x80"  # Java's writeUTF


# ----------------------------------------------------------- out (pyarrow)

def blob_of(pf, enc, vals):
    w = BufferWriter(prefix=pf, encoding=enc)
    w.write_strings(vals)
    return w.getvalue()


@needs_pa
@pytest.mark.parametrize("enc", ENCODINGS)
@pytest.mark.parametrize("pf", PREFIXES)
@given(vals=values, k=st.integers(0, 40))
def test_decode_arrow_equals_decode_all(pf, enc, vals, k):
    if pf != "varint+1":
        vals = [v for v in vals if v is not None]
    blob = blob_of(pf, enc, vals)
    got = decode_arrow(blob, prefix=pf, encoding=enc)
    want = decode_all(blob, prefix=pf, encoding=enc)
    assert want == vals
    arr = pa.array(got)
    assert arr.type == pa.utf8()
    assert arr.to_pylist() == want
    assert arr.null_count == got.null_count == sum(v is None for v in vals)
    arr.validate(full=True)
    # the reader, in two parts
    k = min(k, len(vals))
    r = BufferReader(blob, prefix=pf, encoding=enc)
    first = pa.array(r.read_strings_arrow(k))
    rest = pa.array(r.read_strings_arrow())
    assert first.to_pylist() + rest.to_pylist() == want
    assert r.position == len(blob)


@needs_pa
def test_null_marker_read_as_arrow_null():
    blob = b"\x00\x02a\x00\x01"  # null, "a", null, ""
    got = decode_arrow(blob, prefix="varint+1")
    assert got.null_count == 2
    arr = pa.array(got)
    assert arr.to_pylist() == [None, "a", None, ""]
    assert arr.null_count == 2
    r = BufferReader(blob, prefix="varint+1")
    part = pa.array(r.read_strings_arrow(1))
    assert part.to_pylist() == [None] and part.null_count == 1
    assert pa.array(r.read_strings_arrow()).to_pylist() == ["a", None, ""]
    # under the other varint presets 00 is an empty string, never a null
    assert pa.array(decode_arrow(b"\x00\x00")).to_pylist() == ["", ""]
    assert decode_arrow(b"\x00\x00", prefix="zigzag").null_count == 0


@needs_pa
def test_mutf8_read_converted_and_errors():
    blob = blob_of("u16be", "mutf-8", ["A\0\U0001F600", "plain"])
    arr = pa.array(decode_arrow(blob, prefix="u16be", encoding="mutf-8"))
    assert arr.to_pylist() == ["A\0\U0001F600", "plain"]
    # a raw 4-byte sequence is not MUTF-8: the reader's error
    bad = b"\x00\x04\xf0\x9f\x98\x80"
    with pytest.raises(UnicodeDecodeError) as ei:
        decode_arrow(bad, prefix="u16be", encoding="mutf-8")
    with pytest.raises(UnicodeDecodeError) as ej:
        decode_all(bad, prefix="u16be", encoding="mutf-8")
    assert (ei.value.encoding, ei.value.start, ei.value.end) == (
        ej.value.encoding, ej.value.start, ej.value.end)
    rep = pa.array(decode_arrow(bad, "replace", prefix="u16be", encoding="mutf-8"))
    assert rep.to_pylist() == decode_all(bad, "replace", prefix="u16be", encoding="mutf-8")
    # a lone surrogate form: Arrow utf8 cannot hold it
    lone = b"\x00\x03\xed\xa0\x80"
    with pytest.raises(ValueError, match="lone surrogates"):
        decode_arrow(lone, "surrogatepass", prefix="u16be", encoding="mutf-8")


def test_decode_arrow_bad_prefixes():
    # zigzag: an odd varint is a negative length, named with its offset
    with pytest.raises(ValueError, match="offset 2"):
        decode_arrow(b"\x02a\x01", prefix="zigzag")
    r = BufferReader(b"\x02a\x01", prefix="zigzag")
    with pytest.raises(ValueError, match="offset 2"):
        r.read_strings_arrow()
    assert r.position == 0
    with pytest.raises(ValueError, match="offset 0"):
        decode_arrow(b"\x80\x00\x00\x01", prefix="i32be")
    with pytest.raises(ValueError):  # truncated fixed-width prefix
        decode_arrow(b"\x00", prefix="u16be")
    with pytest.raises(ValueError, match="prefix"):
        decode_arrow(b"", prefix="nope")
    with pytest.raises(ValueError):
        decode_arrow(b"", encoding="latin-1")


# -------------------------------------- in (ctypes producer: always runs)

def utf8_arr(vals, validity=None, null_count=0):
    offs, data = [0], b""
    for v in vals:
        data += v
        offs.append(len(data))
    return ArrayProducer("u", len(vals), [validity, offsets32(*offs), data],
                         null_count=null_count)


def view_arr(vals):
    data = b"".join(v for v in vals if len(v) > 12)
    views, at = b"", 0
    for v in vals:
        if len(v) > 12:
            views += view(v, 0, at)
            at += len(v)
        else:
            views += view(v)
    return ArrayProducer("vu", len(vals), [None, views, data, struct.pack("<q", len(data))])


# A value ending in a truncated sequence (C3) followed by a prefix whose
# first byte is 0x80 would read as the valid "C3 80" if the fused validation
# took that prefix for ASCII: each preset's first non-ASCII prefix length.
NON_ASCII_FIRST = {"varint": 128, "zigzag": 64, "varint+1": 127, "u32le": 128}


@pytest.mark.parametrize("make", [utf8_arr, view_arr], ids=["utf8", "string_view"])
@pytest.mark.parametrize("pf", sorted(NON_ASCII_FIRST))
def test_fused_validation_across_non_ascii_prefix(pf, make):
    n = NON_ASCII_FIRST[pf]
    w = writer(pf, "utf-8")
    with pytest.raises(UnicodeDecodeError) as ei:
        w.write_arrow(make([b"ok", b"a\xc3", b"x" * n]))
    assert ei.value.row == 1
    assert w.getvalue() == PREFILL
    # and a value starting with a continuation byte after such a prefix
    w = writer(pf, "utf-8")
    with pytest.raises(UnicodeDecodeError) as ei:
        w.write_arrow(make([b"\xc3\xa9" * (n // 2) + b"x" * (n % 2), b"\x80z"]))
    assert ei.value.row == 1
    assert w.getvalue() == PREFILL


@pytest.mark.parametrize("enc", ENCODINGS)
@pytest.mark.parametrize("pf", PREFIXES)
def test_producer_every_preset(pf, enc):
    vals = [b"", b"a", "\xe9\u6771".encode(), b"x" * 130, "\0\U0001F600".encode(), b"y" * 300]
    strs = [v.decode() for v in vals]
    for make in (utf8_arr, view_arr):
        w = writer(pf, enc)
        w.write_arrow(make(vals))
        want = writer(pf, enc)
        want.write_strings(strs)
        assert w.getvalue() == want.getvalue()
    # nulls: validity 0b101 (row 1 null)
    w = writer(pf, enc)
    arr = utf8_arr([b"a", b"junk\xff", b"c"], validity=bytes([0b101]), null_count=1)
    if pf == "varint+1":
        w.write_arrow(arr)
        assert decode_all(w.getvalue()[len(PREFILL):], prefix=pf, encoding=enc) == [
            "a", None, "c"]
    else:
        with pytest.raises(ValueError, match="row 1 is null"):
            w.write_arrow(arr)
        assert w.getvalue() == PREFILL


@pytest.mark.parametrize("enc", ENCODINGS)
@pytest.mark.parametrize("pf", PREFIXES)
def test_producer_invalid_under_handlers(pf, enc):
    vals = [b"a\xffb", b"\x00ok", b"\xed\xa0\x80", b"\xf0\x9f\x98\x80"]
    for errors in ["replace", "surrogateescape", "ignore"]:
        w = BufferWriter(errors=errors, prefix=pf, encoding=enc)
        w.write_arrow(utf8_arr(vals))
        want = BufferWriter(errors=errors, prefix=pf, encoding=enc)
        want.write_strings([v.decode("utf-8", errors) for v in vals])
        assert w.getvalue() == want.getvalue(), errors
    w = writer(pf, enc)
    with pytest.raises(UnicodeDecodeError) as ei:
        w.write_arrow(utf8_arr(vals))
    assert ei.value.row == 0 and ei.value.start == 1
    assert w.getvalue() == PREFILL


# ---------------------------- out: arbitrary payloads, differential (pyarrow)

payload = st.one_of(
    st.binary(max_size=12),
    st.lists(st.sampled_from([b"a", b"\x00", b"\xc0\x80", b"\xc0", b"\xed\xa0\xbd",
                              b"\xed\xb8\x80", b"\xed\xa0\x80", b"\xf0\x9f\x98\x80", b"\xc3\xa9",
                              b"\xe6\x9d\xb1", b"\x80", b"\xff"]), max_size=6).map(b"".join))


def _has_surrogate(items):
    return any(s is not None and any(0xD800 <= ord(ch) <= 0xDFFF for ch in s) for s in items)


@needs_pa
@pytest.mark.parametrize("enc", ENCODINGS)
@pytest.mark.parametrize("pf", ["varint", "varint+1", "u16be"])
@pytest.mark.parametrize("errors", ["strict", "replace", "surrogateescape"])
@given(items=st.lists(st.one_of(st.none(), payload), max_size=12))
def test_decode_arrow_differential(pf, enc, errors, items):
    w = BufferWriter(prefix=pf)
    for b in items:
        if b is None:
            if pf == "varint+1":
                w.write_raw(b"\x00")
        else:
            w.write_bytes(b)
    blob = w.getvalue()
    try:
        want = decode_all(blob, errors, prefix=pf, encoding=enc)
    except UnicodeDecodeError as e:
        with pytest.raises(UnicodeDecodeError) as ei:
            decode_arrow(blob, errors, prefix=pf, encoding=enc)
        assert (ei.value.encoding, ei.value.object, ei.value.start, ei.value.end,
                ei.value.reason) == (e.encoding, e.object, e.start, e.end, e.reason)
        r = BufferReader(blob, errors=errors, prefix=pf, encoding=enc)
        with pytest.raises(UnicodeDecodeError):
            r.read_strings_arrow()
        assert r.position == 0
        return
    if _has_surrogate(want):
        with pytest.raises(ValueError, match="lone surrogates"):
            decode_arrow(blob, errors, prefix=pf, encoding=enc)
        return
    got = decode_arrow(blob, errors, prefix=pf, encoding=enc)
    arr = pa.array(got)
    arr.validate(full=True)
    assert arr.to_pylist() == want
    assert got.null_count == sum(v is None for v in want)
