"""Arrow in: write_arrow (and write_strings' Arrow hook) from real
producers: pyarrow (utf8, large_utf8, string_view, slices, chunked arrays,
nulls, dictionary-encoded arrays), pandas and polars categoricals, nanoarrow;
and the round trips through them (written in, read back out with
decode_arrow).

Skipped, with the reason printed, where pyarrow is not installed (README's
default test command installs only [test]; the `arrow` extra and
.ci/steps/70-arrow.sh install it).  Elsewhere: Arrow out in
test_arrow_out.py; malformed input from a hand-made producer (no pyarrow
needed) in test_arrow_in_producer.py; both ways under every preset in
test_arrow_presets.py.
"""
import gc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from utf8pfx import ArrowUtf8Array, BufferWriter, decode_all, decode_arrow
from support.strategies import payload_lists, text_scalar

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (pip install '.[arrow]')")

TYPES = [pa.utf8(), pa.large_utf8()]
if hasattr(pa, "string_view"):
    TYPES.append(pa.string_view())

values = st.lists(st.one_of(st.none(), text_scalar), max_size=60)


def expected_blob(vals, nulls):
    w = BufferWriter()
    for v in vals:
        if v is None:
            if nulls == "empty":
                w.write_string("")
        else:
            w.write_string(v)
    return w.getvalue()


@pytest.mark.parametrize("typ", TYPES, ids=str)
@pytest.mark.parametrize("nulls", ["skip", "empty"])
@given(vals=values, cut=st.tuples(st.integers(0, 60), st.integers(0, 60)))
def test_round_trip_pyarrow(typ, nulls, vals, cut):
    arr = pa.array(vals, type=typ)
    a, b = sorted(cut)
    arr, vals = arr.slice(a, b - a), vals[a:b]  # non-zero offsets
    w = BufferWriter()
    n = w.write_arrow(arr, nulls=nulls)
    blob = expected_blob(vals, nulls)
    assert w.getvalue() == blob and n == len(blob)
    back = decode_arrow(blob)
    assert isinstance(back, ArrowUtf8Array) and len(back) == len(decode_all(blob))
    got = pa.array(back)
    assert got.type == pa.utf8()
    assert got.to_pylist() == decode_all(blob)
    got.validate(full=True)


@given(chunks=st.lists(st.lists(st.one_of(st.none(), text_scalar), max_size=8), max_size=5))
def test_chunked_arrays(chunks):
    ca = pa.chunked_array([pa.array(c, type=pa.utf8()) for c in chunks], type=pa.utf8())
    flat = [v for c in chunks for v in c]
    w = BufferWriter()
    w.write_arrow(ca, nulls="skip")
    assert w.getvalue() == expected_blob(flat, "skip")
    w2 = BufferWriter()
    if any(v is None for v in flat):
        with pytest.raises(ValueError, match="row %d is null" % flat.index(None)):
            w2.write_strings(ca)
        assert len(w2) == 0
    else:
        w2.write_strings(ca)  # write_strings takes Arrow exporters too
        assert w2.getvalue() == w.getvalue()


def test_write_strings_accepts_arrow_and_keeps_lists():
    arr = pa.array(["a", "é", "東京"])
    w = BufferWriter()
    w.write_strings(arr)
    w.write_strings(["a", "é", "東京"])
    half = len(w) // 2
    assert w.getvalue()[:half] == w.getvalue()[half:]


def test_all_or_nothing_on_null_and_bad_utf8():
    w = BufferWriter()
    w.write_string("keep")
    before = w.getvalue()
    with pytest.raises(ValueError, match="row 2 is null"):
        w.write_arrow(pa.array(["a", "b", None, "c"]))
    assert w.getvalue() == before
    bad = pa.Array.from_buffers(pa.utf8(), 3, [None, pa.py_buffer(
        (b"\x00\x00\x00\x00" b"\x02\x00\x00\x00" b"\x05\x00\x00\x00" b"\x06\x00\x00\x00")),
        pa.py_buffer(b"ok\xe2\x82x!")])
    with pytest.raises(UnicodeDecodeError) as ei:
        w.write_arrow(bad)
    assert ei.value.row == 1 and ei.value.data_offset == 2
    ref = pytest.raises(UnicodeDecodeError, b"\xe2\x82x".decode).value
    assert (ei.value.start, ei.value.end, ei.value.reason) == (ref.start, ref.end, ref.reason)
    assert w.getvalue() == before
    w2 = BufferWriter(errors="replace")
    w2.write_arrow(bad)
    assert decode_all(w2.getvalue()) == ["ok", "\ufffdx", "!"]


def test_invalid_utf8_planted_in_a_slice_and_in_string_view():
    arr = pa.Array.from_buffers(pa.large_utf8(), 2, [None, pa.py_buffer(
        bytes(8) + (3).to_bytes(8, "little") + (20).to_bytes(8, "little")),
        pa.py_buffer(b"abc" + b"y" * 16 + b"\xc0")], offset=0)
    with pytest.raises(UnicodeDecodeError) as ei:
        BufferWriter().write_arrow(arr.slice(1))
    assert ei.value.row == 0 and ei.value.data_offset == 19
    if hasattr(pa, "string_view"):
        sv = pa.array(["fine", "x" * 30], type=pa.string_view())
        bufs = sv.buffers()
        data = bytearray(bufs[2].to_pybytes())
        data[5] = 0xFF
        sv_bad = pa.Array.from_buffers(pa.string_view(), 2,
                                       [None, bufs[1], pa.py_buffer(bytes(data))])
        with pytest.raises(UnicodeDecodeError) as ei:
            BufferWriter().write_arrow(sv_bad)
        assert ei.value.row == 1 and ei.value.start == 5


def test_binary_and_tables_are_refused_clearly():
    with pytest.raises(TypeError, match="binary"):
        BufferWriter().write_arrow(pa.array([b"a"]))
    with pytest.raises(TypeError, match="struct"):
        BufferWriter().write_arrow(pa.record_batch({"s": ["a"]}))
    with pytest.raises(TypeError, match="got Arrow format 'l'"):
        BufferWriter().write_arrow(pa.array([1, 2]).dictionary_encode())


INDEX_TYPES = [pa.int8(), pa.uint8(), pa.int16(), pa.uint16(), pa.int32(), pa.uint32(),
               pa.int64(), pa.uint64()]


@pytest.mark.parametrize("index_type", INDEX_TYPES, ids=str)
@pytest.mark.parametrize("value_type", TYPES, ids=str)
@given(vals=st.lists(st.one_of(st.none(), st.sampled_from(["a", "é", "", "東京", "x" * 20])),
                     max_size=40),
       cut=st.tuples(st.integers(0, 40), st.integers(0, 40)))
def test_dictionary_encoded(index_type, value_type, vals, cut):
    dictionary = pa.array(["a", "é", "", "東京", "x" * 20, None], type=value_type)
    lookup = {v: i for i, v in enumerate(["a", "é", "", "東京", "x" * 20])}
    # a None value points either at a null index slot or at the null entry
    idx = [None if v is None and i % 2 else (5 if v is None else lookup[v])
           for i, v in enumerate(vals)]
    arr = pa.DictionaryArray.from_arrays(pa.array(idx, type=index_type), dictionary)
    a, b = sorted(cut)
    arr, vals = arr.slice(a, b - a), vals[a:b]
    for nulls in ("skip", "empty"):
        w = BufferWriter()
        w.write_arrow(arr, nulls=nulls)
        assert w.getvalue() == expected_blob(vals, nulls)
    if None in vals:
        with pytest.raises(ValueError, match="row %d is null" % vals.index(None)):
            BufferWriter().write_arrow(arr)


def test_dictionary_from_pandas_and_polars_categoricals():
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    w = BufferWriter()
    w.write_arrow(pd.Series(["p", "q", "p"], dtype="category"))
    assert decode_all(w.getvalue()) == ["p", "q", "p"]
    pl = pytest.importorskip("polars", reason="polars is not installed")
    w = BufferWriter()
    w.write_arrow(pl.Series(["x", "y", "x"], dtype=pl.Categorical))
    assert decode_all(w.getvalue()) == ["x", "y", "x"]


def test_dictionary_bad_index_and_bad_utf8():
    dictionary = pa.Array.from_buffers(pa.utf8(), 3, [None, pa.py_buffer(
        (0).to_bytes(4, "little") + (2).to_bytes(4, "little") + (4).to_bytes(4, "little")
        + (5).to_bytes(4, "little")), pa.py_buffer(b"okb\xffz")])
    bad_idx = pa.DictionaryArray.from_arrays(pa.array([0, 7], type=pa.int8()), dictionary,
                                             safe=False)
    w = BufferWriter()
    w.write_string("keep")
    with pytest.raises(ValueError, match=r"row 1: dictionary index 7 is outside the "
                                         r"dictionary of 3 value\(s\)"):
        w.write_arrow(bad_idx)
    neg = pa.DictionaryArray.from_arrays(pa.array([-1], type=pa.int16()), dictionary,
                                         safe=False)
    with pytest.raises(ValueError, match="dictionary index -1"):
        w.write_arrow(neg)
    uses_bad = pa.DictionaryArray.from_arrays(pa.array([0, 2, 1], type=pa.int32()),
                                              dictionary)
    w.write_arrow(uses_bad.slice(0, 2))  # the invalid entry is not used: fine
    assert decode_all(w.getvalue()) == ["keep", "ok", "z"]
    with pytest.raises(UnicodeDecodeError) as ei:
        w.write_arrow(uses_bad)
    assert ei.value.row == 2 and ei.value.data_offset == 3 and ei.value.start == 1
    assert decode_all(w.getvalue()) == ["keep", "ok", "z"]
    w2 = BufferWriter(errors="replace")
    w2.write_arrow(uses_bad)
    assert decode_all(w2.getvalue()) == ["ok", "z", "b\ufffd"]


@pytest.mark.parametrize("case", ["ok", "null_error", "chunked", "chunked_error"])
def test_pyarrow_buffers_freed_after_write(case):
    # pyarrow frees an array's buffers only once every export of it is
    # released: the pool's allocated bytes come back to the baseline only if
    # write_arrow released what it imported, on success and on error alike
    gc.collect()
    base = pa.total_allocated_bytes()
    vals = ["x" * 100] * 1000 + ([None] if "error" in case else [])
    arr = pa.array(vals)
    if case.startswith("chunked"):
        arr = pa.chunked_array([arr, pa.array(["y" * 50] * 100)])
    assert pa.total_allocated_bytes() > base
    w = BufferWriter()
    if "error" in case:
        with pytest.raises(ValueError, match="row 1000 is null"):
            w.write_arrow(arr)
    else:
        w.write_arrow(arr)
    del arr
    gc.collect()
    assert pa.total_allocated_bytes() == base


# ----------------------------------- round trips: polars, nanoarrow (in, out)

def test_polars_round_trip():
    pl = pytest.importorskip("polars", reason="polars is not installed")
    s = pl.Series("s", ["héllo", None, "", "東京", "x" * 40])
    w = BufferWriter()
    w.write_arrow(s, nulls="empty")
    assert decode_all(w.getvalue()) == ["héllo", "", "", "東京", "x" * 40]
    with pytest.raises(ValueError, match="row 1 is null"):
        w.write_strings(s)
    back = pl.Series(decode_arrow(w.getvalue()))
    assert back.to_list() == ["héllo", "", "", "東京", "x" * 40]
    df = pl.DataFrame({"s": ["a", "b"]})
    w = BufferWriter()
    w.write_arrow(df["s"])
    assert decode_all(w.getvalue()) == ["a", "b"]
    assert pl.from_arrow(pa.array(decode_arrow(w.getvalue()))).to_list() == ["a", "b"]
    assert pl.from_arrow(decode_arrow(w.getvalue())).to_list() == ["a", "b"]


def test_nanoarrow_consumer():
    na = pytest.importorskip("nanoarrow", reason="nanoarrow is not installed")
    arr = na.Array(decode_arrow(b"\x01a\x02bc"))
    assert arr.to_pylist() == ["a", "bc"]
    w = BufferWriter()
    w.write_arrow(na.Array(["x", "yz"], na.string()))
    assert decode_all(w.getvalue()) == ["x", "yz"]


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
@given(vals=payload_lists)
def test_write_arrow_any_bytes_matches_decode_then_write(errors, vals):
    binary = pa.array(vals, type=pa.binary())
    arr = pa.Array.from_buffers(pa.utf8(), len(binary), binary.buffers())  # unvalidated

    def ours():
        w = BufferWriter(errors=errors)
        w.write_arrow(arr)
        return w.getvalue()

    def reference():
        w = BufferWriter(errors=errors)
        for v in vals:
            w.write_string(v.decode("utf-8", errors))
        return w.getvalue()

    got, want = _outcome(ours), _outcome(reference)
    assert got == want
