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
import sys
from functools import partial

import pytest

import io

import utf8pfx
from utf8pfx import BufferReader, BufferWriter, StreamReader
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
    # a bytearray: bytes others may write, whose long records are decoded
    # from a copy (an allocation of its own); a body of 1 MiB, copied
    # without the GIL
    walk(make_reader(bytearray(BLOB)), lambda r: r.read_strings, reader_state, exp_list)
    big = "\u0101" * (1 << 19)
    walk(make_reader(bytearray(ref_encode(big))), lambda r: r.read_string, reader_state,
         lambda b, v, r: (v == big) or pytest.fail("wrong str"))


def test_reader_long_latin1_read_without_a_count():
    """A Latin-1 record of a kilobyte or more is read into a str with room for
    a code point a byte, then shrunk: each of its allocations (the str, the
    shrink's realloc) fails once in turn."""
    want = ["caf\u00e9 " * 250, "tail"]
    blob = ref_encode_many(want)
    walk(make_reader(blob), lambda r: r.read_strings, reader_state,
         lambda b, v, r: (v == want and r.remaining == 0) or pytest.fail(repr(v)))
    walk(make_reader(blob), lambda r: r.read_string, reader_state,
         lambda b, v, r: (v == want[0]) or pytest.fail(repr(v)))


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


# ------------------------------------------------------------ StreamReader
#
# The state of a stream reader is its position and the bytes it holds, and
# what a later call can still read.  A pull reader that read from its source
# before the failure keeps those bytes (an exception loses no record), so
# there the bytes held plus those left in the source are compared instead
# of `buffered` alone; a push reader must hold exactly what it held.  The
# records still readable are those of a twin built the same way when the
# snapshot is taken before the call, and the failed reader's own, drained
# with the failures off, after it.

S_WANT = [v for k, v in sorted(STRS.items()) if k != "surrogate"] + ["", "tail"]
S_BLOB = BLOB  # the long_ucs2 record (6000 bytes) straddles small reads and feeds


class _Stream:
    """A reader built by build() (and, for batches, its iterator); `rest`
    the records a twin still reads.  A push reader is drained after
    feeding it `tail` and feed_eof()."""

    def __init__(self, build, batch=None, tail=()):
        self.tail = tail
        self.r, self.src = build()
        twin, _ = build()
        self.rest = self.drain(twin)
        self.it = self.r.batches(batch) if batch else None
        self.taken = False

    def drain(self, r=None):
        r = self.r if r is None else r
        if self.src is None:  # push mode
            for c in self.tail:
                r.feed(c)
            r.feed_eof()
        try:
            return r.read_strings()
        except ValueError as e:  # a UnicodeDecodeError too: where it is
            return (type(e).__name__, e.data_offset, e.record_index)


def stream_state(h):
    held = h.r.buffered
    if h.src is not None:
        held += len(h.src.getbuffer()) - h.src.tell()
    if not h.taken:  # before the call: the twin says what is left to read
        h.taken = True
        return (h.r.position, held, h.rest)
    return (h.r.position, held, h.drain())


class _Source(io.BytesIO):
    """A BytesIO whose readinto raises with nothing consumed.  BytesIO's own
    moves its position before it builds the count it returns, so a failure
    there would lose the bytes inside the source; the reader keeps what a
    source gave it, it cannot get back what a source dropped."""

    def readinto(self, view):
        pos = self.tell()
        try:
            return super().readinto(view)
        except BaseException:
            self.seek(pos)
            raise


class _KeepingSource(_Source):
    """A source that keeps a slice of every view it fills: an export of the
    reader's window, which the reader then reads as bytes others may write
    and leaves for a window of its own at its next read (an allocation)."""

    def __init__(self, data):
        super().__init__(data)
        self.kept = []

    def readinto(self, view):
        pos = self.tell()
        n = super().readinto(view)
        try:
            self.kept.append(view[:])
        except BaseException:  # as _Source: nothing consumed on failure
            self.seek(pos)
            raise
        return n


def pull(data=S_BLOB, read_size=2500, skip=0, source=_Source):
    def build():
        src = source(data)
        r = StreamReader(src, read_size=read_size)
        for _ in range(skip):
            next(r)
        return r, src
    return build


def push(chunks, skip=0):
    def build():
        r = StreamReader()
        for c in chunks:
            r.feed(c)
        for _ in range(skip):
            next(r)
        return r, None
    return build


def _expect_stream(value, rest):
    """expect() for walk: the call returned `value` and `rest` is left."""
    def expect(before, v, h):
        assert v == value, v
        assert h.drain() == rest
    return expect


# the stream in three pieces: the long record (6000 bytes of payload) cut
# inside its payload, and the next cut one byte after it
LONG_AT = len(ref_encode_many(S_WANT[:S_WANT.index("\u0101" * 3000)]))
PIECES = [S_BLOB[:LONG_AT + 1000], S_BLOB[LONG_AT + 1000:LONG_AT + 6003],
          S_BLOB[LONG_AT + 6003:]]


@pytest.mark.parametrize("mode", ["pull", "push", "pull, a source that keeps views"])
def test_stream_read_strings(mode):
    build = (pull() if mode == "pull" else push(PIECES) if mode == "push"
             else pull(source=_KeepingSource))
    raised = walk(lambda: _Stream(build), lambda h: h.r.read_strings, stream_state,
                  _expect_stream(S_WANT, []))
    assert raised >= 1


@pytest.mark.parametrize("mode", ["pull", "push"])
def test_stream_next_and_read_bytes(mode):
    make_build = (lambda skip: pull(skip=skip)) if mode == "pull" else (
        lambda skip: push(PIECES, skip=skip))
    i = S_WANT.index("\u0101" * 3000)  # the record that straddles reads or feeds
    raised = walk(lambda: _Stream(make_build(i)), lambda h: h.r.__next__, stream_state,
                  _expect_stream(S_WANT[i], S_WANT[i + 1:]))
    assert raised >= 1
    walk(lambda: _Stream(make_build(i)), lambda h: h.r.read_bytes, stream_state,
         _expect_stream(S_WANT[i].encode(), S_WANT[i + 1:]))
    walk(lambda: _Stream(make_build(0)), lambda h: h.r.read_string, stream_state,
         _expect_stream(S_WANT[0], S_WANT[1:]))


@pytest.mark.parametrize("mode", ["pull", "push"])
def test_stream_batches_step(mode):
    build = pull() if mode == "pull" else push(PIECES)
    raised = walk(lambda: _Stream(build, batch=3), lambda h: h.it.__next__, stream_state,
                  _expect_stream(S_WANT[:3], S_WANT[3:]))
    assert raised >= 1


def test_stream_feed():
    """feed() of the piece that completes the straddling record: the copy
    into a window that must grow."""
    def expect(before, v, h):
        assert v is None and h.r.buffered == before[1] + len(PIECES[1])
        h.tail = PIECES[2:]
        assert h.drain() == S_WANT

    raised = walk(lambda: _Stream(push(PIECES[:1]), tail=PIECES[1:]),
                  lambda h: partial(h.r.feed, PIECES[1]), stream_state, expect)
    assert raised >= 1


@pytest.mark.parametrize("mode", ["pull", "push"])
@pytest.mark.parametrize("errors", ["strict", "replace"])
def test_stream_error_paths(mode, errors):
    """The annotated errors (record_index, the note, the ValueError rebuilt
    with data_offset) and a handler's replacement under allocation failure;
    the bad record comes after the straddling one."""
    data = S_BLOB + BAD
    if mode == "pull":
        def build():
            src = _Source(data)
            return StreamReader(src, read_size=2500, errors=errors), src
    else:
        def build():
            r = StreamReader(errors=errors)
            r.feed(data[:LONG_AT + 1000])
            r.feed(data[LONG_AT + 1000:])
            r.feed_eof()
            return r, None
    bad_at = len(S_BLOB) + 3  # the prefix of the bad record

    def expect(before, v, h):
        assert errors == "replace" and v == S_WANT + ["ok", "ab\ufffdcd"], v

    def expected_error(e):
        assert errors == "strict"
        assert type(e) is UnicodeDecodeError, e
        assert (e.data_offset, e.record_index) == (bad_at + 1 + 2, len(S_WANT) + 1)

    walk(lambda: _Stream(build), lambda h: h.r.read_strings, stream_state, expect,
         expected_error)
    # a prefix error, rebuilt as a ValueError with its offsets
    def build_prefix():
        r = StreamReader()
        r.feed(S_BLOB + b"\xff" * 11)
        r.feed_eof()
        return r, None

    def expected_prefix_error(e):
        assert type(e) is ValueError and "(record index %d)" % len(S_WANT) in str(e)
        assert (e.data_offset, e.record_index) == (len(S_BLOB), len(S_WANT))

    walk(lambda: _Stream(build_prefix), lambda h: h.r.read_strings, stream_state,
         lambda b, v, h: pytest.fail(repr(v)), expected_prefix_error)


def _lost_by_the_interpreter(v):
    """CPython 3.9's eval loop can lose the MemoryError of an allocation
    that fails while a Python frame (a generator, StreamWriter's methods)
    unwinds: the frame returns NULL with no exception set, and the
    interpreter reports that as a SystemError naming its own eval loop, or
    with no message at all when making the message failed too.  A C
    function of ours that did so would be named instead (the call's result
    is checked as it returns), and ours always say what went wrong.  Such
    a loss, anywhere in the chain, cut StreamWriter's own Python code short
    (its settling never ran): nothing of that point can be checked."""
    if sys.version_info >= (3, 10):
        return False
    while v is not None:
        if isinstance(v, SystemError) and (
                not v.args or
                str(v) == "_PyEval_EvalFrameDefault returned NULL without setting an error"):
            return True
        v = v.__context__
    return False


def walk_calls(make_call, on_ok, on_fail, max_points=MAX_POINTS, settle=3):
    """walk() for calls whose state is checked from their output: make_call()
    -> (call, ctx), fresh for each point; the call runs with the i-th
    allocation failing; on_ok(i, ctx) checks a success, on_fail(i, exc,
    ctx) a MemoryError; `settle` successes in a row end the walk.  Returns
    the number of MemoryErrors."""
    raised = ok_streak = 0
    gc.collect()
    for i in range(max_points):
        call, ctx = make_call()
        gc.disable()
        try:
            kind, v = _fail_at(i, call)
        finally:
            gc.enable()
        if kind == "ok":
            on_ok(i, ctx)
            ok_streak += 1
            if ok_streak >= settle:
                return raised
            continue
        ok_streak = 0
        if _lost_by_the_interpreter(v):
            continue
        assert isinstance(v, MemoryError), (i, type(v), v)
        raised += 1
        on_fail(i, v, ctx)
    raise AssertionError("still failing after %d allocation points" % max_points)


def test_write_arrow_flushing():
    """StreamWriter's Arrow path (BufferWriter._write_arrow_flushing): a
    failed allocation before the first flush leaves the writer as it was;
    after one, the bytes flushed and those left in the writer are exactly
    the records before the failure (records_accepted of the call's rows)."""
    pa = pytest.importorskip("pyarrow")
    xs = ["h\u00e9llo %d" % i for i in range(300)]
    arr = pa.array(xs)
    pre = ref_encode("pre", "strict")

    def make_call():
        w = BufferWriter()
        w.write_string("pre")
        # a sink with its room already allocated: writing into it allocates
        # nothing (its result int may, and fails like any other point)
        sink = io.BytesIO(bytes(1 << 16))
        return partial(w._write_arrow_flushing, arr, None, 256, sink.write, [None]), (w, sink)

    def out(w, sink):
        return sink.getvalue()[:sink.tell()] + w.getvalue()

    def on_ok(i, ctx):
        assert utf8pfx.decode_all(out(*ctx)) == ["pre"] + xs, i

    def on_fail(i, v, ctx):
        w, sink = ctx
        if sink.tell() == 0:
            assert w.getvalue() == pre, i  # all or nothing before a flush
        else:
            assert utf8pfx.decode_all(out(w, sink)) == ["pre"] + xs[:v.records_accepted], i

    assert walk_calls(make_call, on_ok, on_fail) >= 1


class _TakingSink:
    """A sink that allocates nothing after it has taken the bytes: what it
    raises, it raises before taking them (so a failure inside it is a
    failure of the write, as io's raw streams report theirs)."""

    def __init__(self):
        self.parts = []

    def write(self, b):
        n = len(b)
        data = bytes(b)
        self.parts.append(data)
        return n


SW_ITEMS = ["h\u00e9llo %d" % i for i in range(24)] + ["\u20ac" * 30, "x", "\U0001F600 y"] * 3


@pytest.mark.parametrize("form", ["list", "generator", "arrow"])
@pytest.mark.parametrize("flush_size", [64, 1 << 20])
def test_stream_writer_many(form, flush_size):
    """StreamWriter.write_strings (its Python chunking, _pull or _fit, the
    BufferWriter's C, the flushes between chunks) and write_arrow (the C's
    flush callback) with each allocation failing in turn.  Each failure
    raises MemoryError carrying records_accepted; the bytes the sink took
    plus those still buffered are exactly the records before it, `position`
    counts them, and a call that flushed nothing is all or nothing.  (A
    failure in the call's own frame, before its code runs, raises with
    nothing written.)"""
    from utf8pfx import StreamWriter
    import traceback

    arr = pytest.importorskip("pyarrow").array(SW_ITEMS) if form == "arrow" else None
    pre = ref_encode("pre", "strict")

    def make_call():
        sink = _TakingSink()
        w = StreamWriter(sink, flush_size=flush_size)
        w.write_string("pre")
        if form == "arrow":
            return partial(w.write_arrow, arr), (w, sink)
        items = list(SW_ITEMS) if form == "list" else (s for s in list(SW_ITEMS))
        return partial(w.write_strings, items), (w, sink)

    def out(i, w, sink):
        data = b"".join(sink.parts) + bytes(memoryview(w._w))
        assert w.position == len(data), (i, w.position, len(data))
        return data

    def on_ok(i, ctx):
        assert utf8pfx.decode_all(out(i, *ctx)) == ["pre"] + SW_ITEMS, i

    def on_fail(i, v, ctx):
        w, sink = ctx
        data = out(i, w, sink)
        frames = traceback.extract_tb(v.__traceback__)
        if not hasattr(v, "records_accepted"):
            # only from the call's own frame, before any of its code ran
            assert not any(f.filename.endswith("_streamwriter.py") for f in frames), i
            assert data == pre, i
            return
        accepted = v.records_accepted
        # records kept that the sink never got come from a failed flush, and
        # a flush is tried only once the buffer passes flush_size: below
        # that, the call is all or nothing
        if not sink.parts and len(data) < flush_size:
            assert accepted == 0 and data == pre, (i, accepted)
        assert utf8pfx.decode_all(data) == ["pre"] + SW_ITEMS[:accepted], (i, accepted)

    # CPython 3.9 absorbs a few failures in a row early in the call (its
    # caches): a longer run of successes marks the end
    assert walk_calls(make_call, on_ok, on_fail, max_points=1000, settle=12) >= 1


# a record strict UTF-8 refuses, after 20 good ones
SW_BAD = SW_ITEMS[:20] + ["a\ud800b"] + SW_ITEMS[20:]


@pytest.mark.parametrize("width", [1, 2, 3])
@pytest.mark.parametrize("form", ["list", "generator"])
@pytest.mark.parametrize("flush_size", [64, 1 << 20])
def test_stream_writer_failure_settled_under_failing_allocations(width, form, flush_size):
    """A write_strings call that fails on a record (UnicodeEncodeError), with
    `width` allocations in a row failing at every point in turn: the
    settling of one failure meets another.  Whatever the call raises, the
    bytes the sink took plus those buffered are exactly the records its
    records_accepted counts, `position` counts them, and a call that
    flushed nothing leaves nothing.  The exceptions without a count are
    those the interpreter raises in the caller's frame after the call has
    returned (a traceback entry it cannot make): the state is then still
    whole records, each counted."""
    import traceback
    from utf8pfx import StreamWriter

    pre = ["pre"]
    raised_after = 0
    ok_streak = 0
    for i in range(300):
        sink = _TakingSink()
        w = StreamWriter(sink, flush_size=flush_size)
        w.write_string("pre")
        items = list(SW_BAD) if form == "list" else (s for s in list(SW_BAD))
        gc.disable()
        _testcapi.set_nomemory(i, i + width)
        try:
            w.write_strings(items)
            exc = None
        except BaseException as e:  # noqa: BLE001 - inspected below
            exc = e
        finally:
            _testcapi.remove_mem_hooks()
            gc.enable()
        assert exc is not None, i  # the bad record is always met
        if _lost_by_the_interpreter(exc):
            ok_streak = 0
            continue
        # CPython 3.11+ can lose the exception being raised when it cannot
        # make a frame object as it pops a frame: SystemError then
        assert isinstance(exc, (UnicodeEncodeError, MemoryError, SystemError)), (i, exc)
        data = b"".join(sink.parts) + bytes(memoryview(w._w))
        got = utf8pfx.decode_all(data)
        assert w.position == len(data), (i, w.position, len(data))
        assert got == pre + SW_BAD[:len(got) - 1], i
        if not hasattr(exc, "records_accepted"):
            frames = traceback.extract_tb(exc.__traceback__)
            assert not any(f.filename.endswith("_streamwriter.py") for f in frames), i
            raised_after += 1
            continue
        accepted = exc.records_accepted
        assert got == pre + SW_BAD[:accepted], (i, accepted, len(got))
        if not sink.parts and len(data) < flush_size:
            assert accepted == 0, (i, accepted)  # no flush: all or nothing
        if isinstance(exc, UnicodeEncodeError):
            ok_streak += 1
            if ok_streak >= 12:
                break
        else:
            ok_streak = 0
    else:
        raise AssertionError("still failing after 300 allocation points")
    assert i > width  # the walk met failures before it settled
