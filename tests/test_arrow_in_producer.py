"""write_arrow against a hand-made producer (ctypes, no Arrow library):
well-formed arrays of each string type, malformed ones refused with a clear
error and the writer unchanged, and every release callback called once."""
import gc

import pytest

from support.arrow_producer import (
    ArrayProducer,
    StreamProducer,
    offsets32,
    offsets64,
    view,
)
from utf8pfx import BufferWriter, decode_all

PREFILL = b"\x03abc"


def fresh():
    w = BufferWriter()
    w.write_raw(PREFILL)
    return w


def utf8(values, fmt="u", **kw):
    offs, data, o = [0], b"", 0
    for v in values:
        data += v
        offs.append(len(data))
    pack = offsets32 if fmt == "u" else offsets64
    return ArrayProducer(fmt, len(values), [None, pack(*offs), data], **kw)


def released(p):
    gc.collect()
    return p.released_once


@pytest.mark.parametrize("fmt", ["u", "U"])
def test_wellformed_offsets(fmt):
    vals = [b"h\xc3\xa9llo", b"", "東京".encode(), b"x" * 200]
    p = utf8(vals, fmt)
    w = fresh()
    n = w.write_arrow(p)
    expect = BufferWriter()
    expect.write_strings([v.decode() for v in vals])
    assert w.getvalue() == PREFILL + expect.getvalue()
    assert n == len(expect.getvalue())
    assert released(p)


def test_wellformed_offset_and_nulls():
    # rows 1.. of 5, validity 0b11101 -> row 1 of the slice (bit 2) is valid,
    # bit 1 is null; the slice starts at array offset 1
    data = b"aabbbcdd"
    p = ArrayProducer("u", 4, [bytes([0b11101]), offsets32(0, 2, 5, 6, 6, 8), data],
                      offset=1, null_count=1)
    w = BufferWriter()
    w.write_arrow(p, nulls="skip")
    assert decode_all(w.getvalue()) == ["c", "", "dd"]
    assert released(p)
    w.clear()
    w.write_arrow(p, nulls="empty")
    assert decode_all(w.getvalue()) == ["", "c", "", "dd"]
    with pytest.raises(ValueError, match=r"row 0 is null"):
        w.write_arrow(p)


def test_wellformed_view():
    long1 = "a string longer than twelve bytes: é".encode()
    long2 = "東京東京東京東京".encode()
    buf0 = b"junk" + long1
    buf1 = long2
    views = view(b"short") + view(long1, 0, 4) + view(b"") + view(long2, 1, 0)
    p = ArrayProducer("vu", 4, [None, views, buf0, buf1,
                                offsets64(len(buf0), len(buf1))])
    w = BufferWriter()
    w.write_arrow(p)
    assert decode_all(w.getvalue()) == ["short", long1.decode(), "", long2.decode()]
    assert released(p)


MALFORMED = [
    # (producer factory, message pattern)
    (lambda: utf8([b"ab"], fmt="z"), r"got Arrow format 'z'.*binary"),
    (lambda: utf8([b"ab"], fmt="i"), r"got Arrow format 'i'"),
    (lambda: utf8([b"ab"], fmt="+s"), r"struct"),
    (lambda: ArrayProducer("u", 2, [None, offsets32(0, 3, 1), b"abc"]),
     r"offsets decrease at row 1: offset\[1\]=3 > offset\[2\]=1"),
    (lambda: ArrayProducer("u", 1, [None, offsets32(-4, 1), b"abc"]),
     r"row 0 starts at offset -4 \(negative\)"),
    (lambda: ArrayProducer("U", 2, [None, offsets64(0, 2, -1), b"abc"]),
     r"offsets decrease at row 1"),
    (lambda: ArrayProducer("u", 1, [None, offsets32(0, 1)], n_buffers=2),
     r"3 buffers .* got n_buffers=2"),
    (lambda: ArrayProducer("u", 1, [None, offsets32(0, 1), b"a", b"x"]),
     r"got n_buffers=4"),
    (lambda: ArrayProducer("u", 1, [None, None, b"a"]), r"offsets buffer is NULL"),
    (lambda: ArrayProducer("u", 1, [None, offsets32(0, 1), None]),
     r"values buffer is NULL"),
    (lambda: ArrayProducer("u", 1, [None, offsets32(0, 1), b"a"], null_count=1),
     r"validity buffer is NULL"),
    (lambda: ArrayProducer("u", -1, [None, offsets32(0), b""]), r"length -1 is negative"),
    (lambda: ArrayProducer("u", 1, [None, offsets32(0, 1), b"a"], offset=-2),
     r"offset -2 is negative"),
    (lambda: ArrayProducer("u", 1, [None, offsets32(0, 1), b"a"], n_children=1),
     r"n_children=1"),
    (lambda: ArrayProducer("u", 1, [None, offsets32(0, 1), b"a"], buffers_null=True),
     r"buffers is NULL"),
    (lambda: ArrayProducer("u", 1, [None, offsets32(0, 1), b"a"], null_count=5),
     r"null_count 5 exceeds the length 1"),
    (lambda: ArrayProducer("vu", 1, [None, view(b"x" * 20, 0, 0), b"x" * 20],
                           n_buffers=3),
     r"buffer index 0 is outside the 0 variadic"),
    (lambda: ArrayProducer("vu", 1, [None, view(b"x" * 20, 0, 10), b"x" * 20,
                                     offsets64(20)]),
     r"row 0: string_view range \[10, 30\) is outside variadic buffer 0 of 20 bytes"),
    (lambda: ArrayProducer("vu", 1, [None, view(b"x" * 20, 3, 0), b"x" * 20,
                                     offsets64(20)]),
     r"buffer index 3 is outside the 1 variadic"),
    (lambda: ArrayProducer("vu", 1, [None, view(b"", length=-3), offsets64()]),
     r"length -3 is negative"),
    (lambda: ArrayProducer("vu", 1, [None, view(b"x" * 20, 0, 0), None, offsets64(20)]),
     r"variadic buffer 0 is NULL"),
    (lambda: ArrayProducer("vu", 1, [None, view(b"x" * 20, 0, 0)]),
     r"at least 3 buffers"),
]


@pytest.mark.parametrize("make,pattern", MALFORMED)
def test_malformed_refused(make, pattern):
    p = make()
    w = fresh()
    with pytest.raises((ValueError, TypeError), match=pattern):
        w.write_arrow(p)
    assert w.getvalue() == PREFILL
    assert released(p)
    # write_strings hands it to the same path
    with pytest.raises((ValueError, TypeError), match=pattern):
        w.write_strings(p)
    assert w.getvalue() == PREFILL


LONG = b"a value of more than twelve bytes"
LATE_VIEW_FAULTS = [
    # (the third view, message pattern): the first two rows are well formed
    (view(LONG, 0, 10), r"row 2: string_view range \[10, 43\) is outside variadic buffer 0"),
    (view(LONG, 0, -1), r"row 2: string_view range \[-1, 32\) is outside"),
    (view(LONG, 1, 0), r"row 2: string_view buffer index 1 is outside the 1 variadic"),
    (view(LONG, -1, 0), r"row 2: string_view buffer index -1 is outside"),
    (view(b"", length=-20), r"row 2: string_view length -20 is negative"),
]


@pytest.mark.parametrize("bad,pattern", LATE_VIEW_FAULTS)
def test_view_fault_after_wellformed_rows_names_its_row(bad, pattern):
    # no nulls, so the chunk takes the lean size pass, which must send any
    # fault to the careful pass that names it, before anything is written
    views = view(b"short") + view(LONG, 0, 0) + bad + view(b"tail")
    p = ArrayProducer("vu", 4, [None, views, LONG, offsets64(len(LONG))])
    w = fresh()
    with pytest.raises(ValueError, match=pattern):
        w.write_arrow(p)
    assert w.getvalue() == PREFILL
    assert released(p)


def test_view_fault_in_a_later_chunk_leaves_earlier_chunks_unwritten():
    good = ArrayProducer("vu", 2, [None, view(b"ok") + view(LONG, 0, 0), LONG,
                                   offsets64(len(LONG))])
    bad = ArrayProducer("vu", 2, [None, view(b"ok") + view(LONG, 0, 5), LONG,
                                  offsets64(len(LONG))])
    w = fresh()
    with pytest.raises(ValueError, match=r"row 3: string_view range \[5, 38\)"):
        w.write_arrow(StreamProducer([good, bad]))
    assert w.getvalue() == PREFILL


def test_invalid_utf8_names_row_and_offset():
    vals = [b"ok", b"fine\xc3", b"x\xffy"]
    p = utf8(vals)
    w = fresh()
    with pytest.raises(UnicodeDecodeError) as ei:
        w.write_arrow(p)
    e = ei.value
    try:
        b"fine\xc3".decode("utf-8")
    except UnicodeDecodeError as ref:
        assert (e.object, e.start, e.end, e.reason) == (ref.object, ref.start, ref.end,
                                                         ref.reason)
    assert e.row == 1 and e.data_offset == 2 + 4
    assert w.getvalue() == PREFILL
    assert released(p)


def test_value_that_splits_a_code_point_is_invalid():
    # "é" = c3 a9 split across two rows: the whole range is valid UTF-8,
    # each row alone is not
    p = utf8([b"a\xc3", b"\xa9b"])
    with pytest.raises(UnicodeDecodeError) as ei:
        BufferWriter().write_arrow(p)
    assert ei.value.row == 0 and ei.value.reason == "unexpected end of data"


def test_garbage_under_a_null_is_ignored():
    p = ArrayProducer("u", 2, [bytes([0b10]), offsets32(0, 2, 3), b"\xff\xfeA"],
                      null_count=1)
    w = BufferWriter()
    w.write_arrow(p, nulls="skip")
    assert decode_all(w.getvalue()) == ["A"]


@pytest.mark.parametrize("errors", ["replace", "ignore", "surrogateescape",
                                    "backslashreplace"])
def test_error_handlers_as_decode_then_write(errors):
    vals = [b"ok", b"bad\xff\xfe", b"\xed\xa0\x80x", "东".encode()]
    p = utf8(vals)
    w = BufferWriter(errors=errors)
    w.write_arrow(p)
    ref = BufferWriter(errors=errors)
    for v in vals:
        ref.write_string(v.decode("utf-8", errors))
    assert w.getvalue() == ref.getvalue()


def test_surrogatepass_keeps_encoded_surrogates():
    vals = [b"\xed\xa0\x80", b"a"]
    w = BufferWriter(errors="surrogatepass")
    w.write_arrow(utf8(vals))
    assert w.getvalue() == b"\x03\xed\xa0\x80\x01a"
    with pytest.raises(UnicodeDecodeError):
        BufferWriter().write_arrow(utf8(vals))


def test_nulls_argument():
    p = utf8([b"a"])
    with pytest.raises(ValueError, match="'error', 'skip', 'empty' or 'null'"):
        BufferWriter().write_arrow(p, nulls="zero")
    with pytest.raises(TypeError):
        BufferWriter().write_arrow(p, nulls=1)
    # None: the preset's default ('error' here; 'null' under varint+1)
    with pytest.raises(ValueError, match="row 0 is null"):
        BufferWriter().write_arrow(
            ArrayProducer("u", 1, [b"\x00", offsets32(0, 1), b"a"], null_count=1), nulls=None)
    with pytest.raises(TypeError, match="must export Arrow data"):
        BufferWriter().write_arrow([b"a"])


def test_stream_chunks_and_rollback():
    good1 = utf8([b"a", b"bc"])
    good2 = utf8([b"d"])
    bad = ArrayProducer("u", 2, [None, offsets32(0, 2, 1), b"xy"])
    s = StreamProducer([good1, good2])
    w = fresh()
    assert w.write_arrow(s) == 2 + 3 + 2
    assert decode_all(w.getvalue()[len(PREFILL):]) == ["a", "bc", "d"]
    gc.collect()
    assert s.arrays_released() == [1, 1]
    assert s.schema_released.n == 1 and s.stream_released.n == 1

    good1, good2 = utf8([b"a"]), utf8([b"b"])
    s = StreamProducer([good1, good2, bad])
    w = fresh()
    with pytest.raises(ValueError, match=r"chunk 2 of the stream.*offsets decrease at row 3"):
        w.write_strings(s)
    assert w.getvalue() == PREFILL
    gc.collect()
    assert s.arrays_released() == [1, 1, 1]
    assert s.schema_released.n == 1 and s.stream_released.n == 1


def test_stream_row_numbers_count_earlier_chunks():
    s = StreamProducer([utf8([b"a", b"b"]), utf8([b"c", b"\xff"])])
    with pytest.raises(UnicodeDecodeError) as ei:
        BufferWriter().write_arrow(s)
    assert ei.value.row == 3


def test_stream_error_is_reported_and_everything_released():
    c1 = utf8([b"a"])
    s = StreamProducer([c1, utf8([b"b"])], fail_at=1)
    w = fresh()
    with pytest.raises(OSError, match="get_next.*planted failure"):
        w.write_arrow(s)
    assert w.getvalue() == PREFILL
    gc.collect()
    assert s.arrays_released() == [1, 0]  # the second was never handed out
    assert s.schema_released.n == 1 and s.stream_released.n == 1


def test_stream_wrong_type():
    s = StreamProducer([utf8([b"a"])], schema_fmt=b"z")
    with pytest.raises(TypeError, match="format 'z'"):
        BufferWriter().write_arrow(s)
    gc.collect()
    assert s.arrays_released() == [0]
    assert s.schema_released.n == 1 and s.stream_released.n == 1


def test_writer_busy_and_views():
    p = utf8([b"abc"] * 100)
    w = BufferWriter()
    m = memoryview(w)
    with pytest.raises(BufferError):
        w.write_arrow(p)
    assert len(w) == 0
    m.release()
    assert w.write_arrow(p) == 400
    assert released(p) is False  # exported twice now: two releases
    assert p.array_released.n == 2


def test_stream_with_a_null_callback_is_refused():
    s = StreamProducer([utf8([b"a"])], null_get_next=True)
    w = fresh()
    with pytest.raises(ValueError, match="get_next callback is NULL"):
        w.write_arrow(s)
    assert w.getvalue() == PREFILL
    gc.collect()
    assert s.stream_released.n == 1 and s.schema_released.n == 0


def _dict_values():
    return utf8([b"zero", b"one"])


@pytest.mark.parametrize("make,pattern", [
    (lambda: ArrayProducer("c", 2, [None, bytes([1, 0])], dictionary=_dict_values()), None),
    (lambda: ArrayProducer("c", 2, [None, bytes([1, 0]), b""], dictionary=_dict_values()),
     r"2 buffers \(validity, indices\), got n_buffers=3"),
    (lambda: ArrayProducer("c", 2, [None, bytes([1, 0])], dictionary=_dict_values(),
                           array_dictionary=False),
     r"no dictionary"),
    (lambda: ArrayProducer("f", 2, [None, bytes(8)], dictionary=_dict_values()),
     r"dictionary indices of format 'f'"),
    (lambda: ArrayProducer("c", 2, [None, bytes([1, 2])], dictionary=_dict_values()),
     r"row 1: dictionary index 2 is outside the dictionary of 2 value"),
    (lambda: ArrayProducer("c", 1, [None, bytes([0])], dictionary=ArrayProducer(
        "u", 2, [None, offsets32(0, 3, 1), b"abc"])),
     r"dictionary offsets decrease at value 1"),
    (lambda: ArrayProducer("c", 1, [None, bytes([0])], dictionary=ArrayProducer(
        "vu", 1, [None, view(b"x" * 20, 2, 0), offsets64()])),
     r"dictionary value 0: string_view buffer index 2 is outside"),
])
def test_dictionary_producer(make, pattern):
    p = make()
    w = fresh()
    if pattern is None:
        w.write_arrow(p)
        assert decode_all(w.getvalue()[len(PREFILL):]) == ["one", "zero"]
    else:
        with pytest.raises(ValueError, match=pattern):
            w.write_arrow(p)
        assert w.getvalue() == PREFILL
    assert released(p)
    if p._array_dictionary:  # released through its parent, once
        assert p.dictionary.array_released.n == 1
    assert p.dictionary.schema_released.n == 1
