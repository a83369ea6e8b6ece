"""Allocation failure: every allocation a public operation makes
can fail, and each failure must surface as MemoryError with the writer or
reader exactly as before the call.

_testcapi.set_nomemory(i, i + 1) makes exactly the i-th allocation after the
call fail (PyMem_Raw*, PyMem_* and PyObject_* alike: the C core allocates
only through those).  Each operation is walked from i = 0 upwards until it
succeeds with the failure point past its last allocation; every run in
between must either raise MemoryError with the state unchanged, or succeed
with the right result (a failure the interpreter absorbs, e.g. in a cache).

Every pyenv CPython 3.9-3.13 ships _testcapi; where an interpreter does not,
the tests skip (the C core has no allocator of its own to hook).
"""
import gc
from functools import partial

import pytest

import utf8pfx
from utf8pfx import BufferReader, BufferWriter
from support.reference import ref_encode, ref_encode_many

_testcapi = pytest.importorskip("_testcapi")
if not hasattr(_testcapi, "set_nomemory"):
    pytest.skip("this _testcapi has no set_nomemory", allow_module_level=True)

MAX_POINTS = 200  # no operation below makes more allocations than this

STRS = {
    "ascii": "plain text",
    "ucs1": "caf\u00e9 " * 3,
    "ucs2": "\u20ac\u65e5\u672c" * 5,
    "ucs4": "\U0001F600 x" * 5,
    "long_ucs2": "\u0101" * 3000,  # counted path, growth
    "surrogate": "a\udcff\ud800b",
}


def _fail_at(i, fn):
    """Run fn with the i-th allocation failing; returns ("ok", v) or
    ("raise", exc)."""
    _testcapi.set_nomemory(i, i + 1)
    try:
        v = fn()
    except BaseException as e:  # noqa: BLE001 - inspected by the caller
        _testcapi.remove_mem_hooks()
        return ("raise", e)
    _testcapi.remove_mem_hooks()
    return ("ok", v)


def walk(make, op, state, expect, expected_error=None):
    """make() -> a fresh object (allocations not failed); op(obj) -> the call
    under test as a C callable (a bound method or functools.partial: no
    Python frame between the failure and _fail_at, whose own allocations,
    tracebacks and the like, are the interpreter's business); state(obj) ->
    a comparable snapshot; expect(state_before, value, obj) checks a
    successful result.  Returns the number of failure points that raised
    MemoryError."""
    raised = 0
    ok_streak = 0
    # One collection up front, none per point: a full collection walks every
    # object of the test process (Hypothesis, pyarrow) and would cost more
    # than the operation; with the collector disabled during the call, no
    # finalizer can run inside the failure window either way.
    gc.collect()
    for i in range(MAX_POINTS):
        obj = make()
        before = state(obj)
        gc.disable()
        try:
            kind, v = _fail_at(i, op(obj))
        finally:
            gc.enable()
        if kind == "raise" and expected_error is not None and not isinstance(v, MemoryError):
            expected_error(v)  # the error the call raises without any failure
            assert state(obj) == before, (i, "state changed by a failed call")
            ok_streak += 1
            if ok_streak >= 3:
                return raised
            continue
        if kind == "raise":
            assert isinstance(v, MemoryError), (i, type(v), v)
            assert state(obj) == before, (i, "state changed by a failed call")
            raised += 1
            ok_streak = 0
        else:
            expect(before, v, obj)
            ok_streak += 1
            if ok_streak >= 3:  # past the last allocation of the operation
                return raised
    raise AssertionError("operation still failing after %d allocation points" % MAX_POINTS)


def writer_state(w):
    return (w.getvalue(), len(w), w.errors)


def make_writer(capacity=0, errors="strict", pre=b"\x00pre\xff"):
    def make():
        w = BufferWriter(capacity, errors=errors)
        w.write_raw(pre)
        return w
    return make


@pytest.mark.parametrize("name", sorted(STRS))
@pytest.mark.parametrize("capacity", [0, 1 << 16])
@pytest.mark.parametrize("errors", ["surrogatepass", "replace", "backslashreplace"])
def test_write_string(name, capacity, errors):
    s = STRS[name]
    want = ref_encode(s, errors)

    def expect(before, v, w):
        assert v == len(want)
        assert w.getvalue() == before[0] + want

    raised = walk(make_writer(capacity, errors), lambda w: partial(w.write_string, s), writer_state,
                  expect)
    # the walk reached our allocations where there are some: the growth past
    # the 64 bytes a first write allocates, or the codec path's bytes
    if (capacity == 0 and len(want) > 59) or (errors == "backslashreplace" and
                                              name == "surrogate"):
        assert raised >= 1


@pytest.mark.parametrize("form", ["list", "tuple", "iter"])
@pytest.mark.parametrize("errors", ["surrogatepass", "xmlcharrefreplace"])
def test_write_strings(form, errors):
    items = list(STRS.values()) * 2
    want = ref_encode_many(items, errors)
    wrap = {"list": list, "tuple": tuple, "iter": iter}[form]

    def expect(before, v, w):
        assert v == len(want)
        assert w.getvalue() == before[0] + want

    raised = walk(make_writer(0, errors), lambda w: partial(w.write_strings, wrap(items)),
                  writer_state, expect)
    assert raised >= 1


@pytest.mark.parametrize("call, want", [
    (lambda w: partial(w.write_vint, 2**64 - 1), b"\xff" * 9 + b"\x01"),
    (lambda w: partial(w.write_bytes, b"x" * 500), b"\xf4\x03" + b"x" * 500),
    (lambda w: partial(w.write_raw, bytearray(b"y" * 300)), b"y" * 300),
    (lambda w: partial(w.write_bytes, w), None),  # the writer into itself
])
def test_write_buffers(call, want):
    def expect(before, v, w):
        tail = want if want is not None else bytes([len(before[0])]) + before[0]
        assert w.getvalue() == before[0] + tail

    walk(make_writer(), call, writer_state, expect)


def test_reserve_getvalue_and_construction():
    def expect_reserve(before, v, w):
        assert v is None and w.capacity - len(w) >= 100000 and w.getvalue() == before[0]
    walk(make_writer(), lambda w: partial(w.reserve, 100000), writer_state, expect_reserve)

    def expect_value(before, v, w):
        assert v == before[0]
    walk(make_writer(), lambda w: w.getvalue, writer_state, expect_value)

    def expect_new(before, v, w):
        assert isinstance(v, BufferWriter) and v.capacity == 5000 and v.errors == "replace"
    walk(lambda: None, lambda _: partial(BufferWriter, 5000, errors="replace"), lambda _: None,
         expect_new)


@pytest.mark.parametrize("name", sorted(STRS))
@pytest.mark.parametrize("errors", ["surrogatepass", "namereplace"])
def test_module_functions(name, errors):
    s = STRS[name]
    want = ref_encode(s, errors)
    walk(lambda: None, lambda _: partial(utf8pfx.encode, s, errors), lambda _: None,
         lambda b, v, o: (v == want) or pytest.fail("encode: %r" % (v,)))
    n = len(s.encode("utf-8", errors))
    walk(lambda: None, lambda _: partial(utf8pfx.utf8_length, s, errors), lambda _: None,
         lambda b, v, o: (v == n) or pytest.fail("utf8_length: %r" % (v,)))


# ------------------------------------------------------------------ reader

BLOB = ref_encode_many([v for k, v in sorted(STRS.items()) if k != "surrogate"]
                       + ["", "tail"])
BAD = ref_encode_many(["ok"]) + b"\x05ab\xffcd"  # the second string has bad UTF-8


def reader_state(r):
    return (r.position, r.remaining, r.closed)


def make_reader(data=BLOB, errors="strict", pos=0):
    def make():
        r = BufferReader(data, errors=errors)
        r.position = pos
        return r
    return make


def test_reader_operations():
    want = [v for k, v in sorted(STRS.items()) if k != "surrogate"] + ["", "tail"]

    def exp_list(before, v, r):
        assert v == want and r.remaining == 0

    walk(make_reader(), lambda r: r.read_strings, reader_state, exp_list)
    # iteration: each next() is the operation (list(r) itself may fail after
    # a string was read and handed over, like any iterator)
    walk(make_reader(pos=len(ref_encode(want[0]))), lambda r: r.__next__, reader_state,
         lambda b, v, r: (v == want[1]) or pytest.fail(repr(v)))

    def exp_one(before, v, r):
        assert v == want[0]
    walk(make_reader(), lambda r: r.read_string, reader_state, exp_one)

    def exp_bytes(before, v, r):
        assert v == want[0].encode()
    walk(make_reader(), lambda r: r.read_bytes, reader_state, exp_bytes)
    walk(make_reader(), lambda r: partial(r.read_raw, 7), reader_state,
         lambda b, v, r: (v == BLOB[:7]) or pytest.fail(repr(v)))
    walk(make_reader(), lambda r: r.read_vint, reader_state,
         lambda b, v, r: (v == len(want[0].encode())) or pytest.fail(repr(v)))
    walk(lambda: None, lambda _: partial(utf8pfx.decode_all, BLOB), lambda _: None,
         lambda b, v, o: (v == want) or pytest.fail(repr(v)))
    walk(lambda: None, lambda _: partial(BufferReader, bytearray(BLOB), errors="replace"),
         lambda _: None, lambda b, v, o: (v.read_strings() == want) or pytest.fail(""))


@pytest.mark.parametrize("errors", ["strict", "replace", "backslashreplace", "surrogateescape"])
def test_reader_error_paths(errors):
    """The decode error itself (building UnicodeDecodeError and its offsets,
    or a handler's replacement) under allocation failure."""
    def ref():
        out = []
        for p in (b"ok", b"ab\xffcd"):
            out.append(p.decode("utf-8", errors))
        return out

    try:
        want = ("ok", ref())
    except UnicodeDecodeError as e:
        want = ("raise", (e.start, e.end, e.reason))

    def expect(before, v, r):
        assert want[0] == "ok" and v == want[1], (v, want)

    def expected_error(e):
        assert want[0] == "raise", e
        assert type(e) is UnicodeDecodeError, e
        assert (e.start, e.end, e.reason) == want[1]
        assert e.payload_offset == 3 + 1 and e.data_offset == 3 + 1 + e.start

    walk(make_reader(BAD, errors), lambda r: r.read_strings, reader_state, expect,
         expected_error)
