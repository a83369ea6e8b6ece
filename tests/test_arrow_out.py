"""Arrow out: BufferReader.read_strings_arrow and decode_arrow, read by
pyarrow: the same strings as read_strings / decode_all, errors that keep the
position and name row and offsets, the utf8 / large_utf8 choice, the result
object and its capsules.

Skipped, with the reason printed, where pyarrow is not installed (README's
default test command installs only [test]; the `arrow` extra and
.ci/steps/70-arrow.sh install it).  Elsewhere: Arrow in, and the round
trips through pyarrow, polars and nanoarrow, in test_arrow_in.py; both ways
under every preset in test_arrow_presets.py.
"""
import gc
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from utf8pfx import ArrowUtf8Array, BufferReader, BufferWriter, decode_all, decode_arrow
from utf8pfx import _core
from support.strategies import payload_lists, text_scalar

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (pip install '.[arrow]')")


@given(vals=st.lists(text_scalar, max_size=50), n=st.integers(-1, 50))
def test_read_strings_arrow_matches_read_strings(vals, n):
    w = BufferWriter()
    w.write_string("head")
    w.write_strings(vals)
    r1, r2 = BufferReader(w), BufferReader(w)
    r1.read_string(), r2.read_string()
    n = min(n, len(vals))
    arr = r1.read_strings_arrow(n)
    assert pa.array(arr).to_pylist() == r2.read_strings(n)
    assert r1.position == r2.position
    r1.close(), r2.close()


def test_reader_errors_keep_position_and_name_offsets():
    blob = b"\x02ok" + b"\x03a\xffb" + b"\x01z"
    r = BufferReader(blob)
    r.read_string()
    with pytest.raises(UnicodeDecodeError) as ei:
        r.read_strings_arrow()
    e = ei.value
    assert (e.row, e.payload_offset, e.data_offset, e.start) == (0, 4, 5, 1)
    assert r.position == 3
    with pytest.raises(UnicodeDecodeError) as ref:
        BufferReader(blob[3:]).read_strings()
    assert (e.object, e.start, e.end, e.reason) == (ref.value.object, ref.value.start,
                                                     ref.value.end, ref.value.reason)
    trunc = b"\x01a\x05abc"
    r = BufferReader(trunc)
    with pytest.raises(ValueError, match=r"string length 5 \(prefix at offset 2\)"):
        r.read_strings_arrow()
    assert r.position == 0
    # an invalid payload before the bad prefix is the error reported (data order)
    with pytest.raises(UnicodeDecodeError):
        decode_arrow(b"\x01\xff\x05abc")
    with pytest.raises(ValueError, match="n must be >= 0 or -1"):
        BufferReader(b"").read_strings_arrow(-2)
    with pytest.raises(ValueError, match=r"found the end of the data"):
        BufferReader(b"\x01a").read_strings_arrow(2)
    r = BufferReader(b"\x01a")
    r.close()
    with pytest.raises(ValueError, match="closed"):
        r.read_strings_arrow()


def test_strings_split_across_records_are_invalid():
    blob = b"\x02a\xc3" + b"\x02\xa9b"  # valid as one range, not per record
    with pytest.raises(UnicodeDecodeError) as ei:
        decode_arrow(blob)
    assert ei.value.row == 0 and ei.value.reason == "unexpected end of data"


@pytest.mark.parametrize("errors", ["replace", "ignore", "backslashreplace"])
def test_decode_arrow_error_handlers(errors):
    blob = b"\x02ok" + b"\x04a\xff\xfeb" + b"\x03\xed\xa0\x80" + b"\x01z"
    assert pa.array(decode_arrow(blob, errors)).to_pylist() == decode_all(blob, errors)
    r = BufferReader(blob, errors=errors)
    assert pa.array(r.read_strings_arrow()).to_pylist() == decode_all(blob, errors)


@pytest.mark.parametrize("errors", ["surrogateescape", "surrogatepass"])
def test_decode_arrow_refuses_lone_surrogates(errors):
    with pytest.raises(ValueError, match="lone surrogates.*Arrow utf8"):
        decode_arrow(b"\x01a\x03\xed\xa0\x80", errors)


def test_large_utf8_past_the_threshold():
    old = _core._arrow_large_threshold(10)
    try:
        small = decode_arrow(b"\x03abc\x03def")
        big = decode_arrow(b"\x06abcdef\x06ghijkl")
        assert small.type == "utf8" and big.type == "large_utf8"
        # 11 bytes of data (past the threshold) but 9 of values: utf8
        narrowed = decode_arrow(b"\x04abcd\x05efghi")
        assert narrowed.type == "utf8"
        assert pa.array(narrowed).to_pylist() == ["abcd", "efghi"]
        r = BufferReader(b"\x06abcdef\x06ghijkl\x01z")
        assert r.read_strings_arrow(2).type == "large_utf8" and r.position == 14
        assert pa.array(r.read_strings_arrow(1)).to_pylist() == ["z"]
        assert pa.array(big).type == pa.large_utf8()
        assert pa.array(big).to_pylist() == ["abcdef", "ghijkl"]
        bad = decode_arrow(b"\x06abcdef\x06ghi\xffkl", "replace")
        assert pa.array(bad).type == pa.large_utf8()
        assert pa.array(bad).to_pylist() == ["abcdef", "ghi\ufffdkl"]
    finally:
        _core._arrow_large_threshold(old)


def test_decode_arrow_result_object():
    arr = decode_arrow(b"\x01a\x00\x02\xc3\xa9")
    assert len(arr) == 3 and arr.null_count == 0 and arr.value_bytes == 3
    assert arr.nbytes == 3 + 4 * 4
    assert "utf8 length=3" in repr(arr)
    with pytest.raises(TypeError, match="decode_arrow"):
        ArrowUtf8Array()
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(arr)
    assert pa.array(decode_arrow(b"")).to_pylist() == []
    # every export is independent and outlives the object; no copy is made
    a1, a2 = pa.array(arr), pa.array(arr)
    assert a1.buffers()[2].address == a2.buffers()[2].address
    del arr
    gc.collect()
    assert a1.to_pylist() == ["a", "", "é"] and a2.to_pylist() == ["a", "", "é"]
    arr = decode_arrow(b"\x01a")
    assert pa.DataType._import_from_c_capsule(arr.__arrow_c_schema__()) == pa.utf8()
    assert pa.chunked_array(arr).to_pylist() == ["a"]  # through __arrow_c_stream__
    assert pa.array(arr, type=pa.utf8()).to_pylist() == ["a"]  # a requested schema


def test_capsules_release_when_not_consumed():
    arr = decode_arrow(b"\x01a" * 1000)
    for _ in range(100):
        caps = arr.__arrow_c_array__()
        del caps
        stream = arr.__arrow_c_stream__()
        del stream
    assert pa.array(arr).to_pylist() == ["a"] * 1000


# ------------------------------------------------ differential, any bytes

ERRORS = ["strict", "replace", "ignore", "surrogateescape", "backslashreplace"]


def _outcome(f):
    try:
        return "ok", f()
    except UnicodeDecodeError as e:
        return "ude", (e.object, e.start, e.end, e.reason)
    except ValueError as e:
        return "value", type(e)


@pytest.mark.parametrize("errors", ERRORS)
@given(vals=payload_lists, tail=st.binary(max_size=3))
def test_decode_arrow_any_bytes_matches_decode_all(errors, vals, tail):
    w = BufferWriter()
    for v in vals:
        w.write_bytes(v)
    blob = w.getvalue() + tail  # tail: maybe a truncated or lying prefix

    def ours():
        return pa.array(decode_arrow(blob, errors)).to_pylist()

    def reference():
        out = decode_all(blob, errors)
        for s in out:
            try:
                s.encode("utf-8")  # what Arrow utf8 can hold
            except UnicodeEncodeError:
                raise ValueError("lone surrogates") from None
        return out

    assert _outcome(ours) == _outcome(reference)
