"""StreamWriter: BufferWriter's records handed to a sink with bounded memory.

The bytes and results against BufferWriter's for every preset and several
flush sizes; sinks that take part of the bytes, return None or raise; what
a failure keeps; the memory bound; closing, views, threads, re-entrancy.
"""
import copy
import gc
import os
import io
import pickle
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from utf8pfx import BufferWriter, StreamWriter, decode_all, encode
from utf8pfx._reference import PREFIXES
from support.strategies import text_scalar

FLUSH_SIZES = (1, 7, 4096, 1 << 20)


class Sink:
    """Collects what it is given; takes at most `take` bytes a call (None:
    everything); `fail_at` maps a call number (0-based) to an exception
    raised instead, `none_at` to a call that returns None."""

    def __init__(self, take=None, fail_at=(), none_at=()):
        self.data = bytearray()
        self.calls = []   # len of what each call was given
        self.take = take
        self.fail_at = dict(fail_at) if not isinstance(fail_at, dict) else fail_at
        self.none_at = set(none_at)

    def write(self, b):
        i = len(self.calls)
        self.calls.append(len(b))
        if i in self.fail_at:
            raise self.fail_at[i]
        if i in self.none_at:
            return None
        n = len(b) if self.take is None else min(self.take, len(b))
        self.data += bytes(b[:n])
        return n


def names(n, start=0):
    return [f"n{i}-é" if i % 3 else f"名前{i}" for i in range(start, start + n)]


def apply(w, call):
    kind, arg = call
    if kind == "string":
        return w.write_string(arg)
    if kind == "strings":
        return w.write_strings(arg)
    if kind == "strings_gen":
        return w.write_strings(iter(arg))
    if kind == "strings_tuple":
        return w.write_strings(tuple(arg))
    if kind == "strings_bad":  # a list with an int at some index: TypeError
        items, at = arg
        return w.write_strings(items[:at] + [42] + items[at:])
    if kind == "bytes":
        return w.write_bytes(arg)
    if kind == "vint":
        return w.write_vint(arg)
    return w.write_raw(arg)


# most items short names, some drawn from every storage kind and edge
item_text = st.one_of(st.sampled_from(["", "a", "Zoë", "Ελένη", "小明", "🙂x", "n" * 130]),
                      text_scalar)


def calls_for(prefix):
    item = item_text if prefix != "varint+1" else st.one_of(item_text, st.none())
    return st.lists(st.one_of(
        st.tuples(st.just("string"), item),
        st.tuples(st.sampled_from(["strings", "strings_gen", "strings_tuple"]),
                  st.lists(item, max_size=25)),
        st.tuples(st.just("strings_bad"), st.tuples(st.lists(item, max_size=25),
                                                    st.integers(0, 25))),
        st.tuples(st.just("bytes"), st.binary(max_size=50)),
        st.tuples(st.just("vint"), st.integers(0, 2**64 - 1)),
        st.tuples(st.just("raw"), st.binary(max_size=20)),
    ), max_size=8)


@pytest.mark.parametrize("prefix", PREFIXES)
@given(data=st.data())
def test_same_bytes_and_results_as_buffer_writer(prefix, data):
    encoding = data.draw(st.sampled_from(["utf-8", "mutf-8"]))
    flush_size = data.draw(st.sampled_from(FLUSH_SIZES))
    take = data.draw(st.sampled_from([None, None, 2, 5]))
    calls = data.draw(calls_for(prefix))
    bw = BufferWriter(prefix=prefix, encoding=encoding)
    sink = Sink(take=take)
    sw = StreamWriter(sink, flush_size=flush_size, prefix=prefix, encoding=encoding)
    for call in calls:
        if call[0] == "strings_bad":
            with pytest.raises(TypeError) as want:
                apply(bw, call)
            with pytest.raises(TypeError) as got:
                apply(sw, call)
            assert str(got.value) == str(want.value)
            # without a flush during the call: nothing; after one: the records
            # before the bad item, as many as the exception says
            items, at = call[1]
            kept = got.value.records_accepted
            assert kept in (0, min(at, len(items)))
            bw.write_strings(items[:kept])
        else:
            assert apply(sw, call) == apply(bw, call)
        assert sw.position == len(bw)
        assert sw.buffered < flush_size + 200 or flush_size == 1
        assert bytes(sink.data) + sw._w.getvalue() == bw.getvalue()
    sw.close()
    assert bytes(sink.data) == bw.getvalue()
    assert sw.buffered == 0 and sw.closed


@pytest.mark.parametrize("prefix", PREFIXES)
def test_long_batch_every_preset(prefix):
    xs = names(30000)
    if prefix == "varint+1":
        xs[::7] = [None] * len(xs[::7])
    bw = BufferWriter(prefix=prefix)
    want = bw.write_strings(xs)
    for flush_size in (7, 4096):
        sink = Sink()
        with StreamWriter(sink, flush_size=flush_size, prefix=prefix) as sw:
            assert sw.write_strings(iter(xs)) == want
        assert bytes(sink.data) == bw.getvalue()
        assert max(sink.calls) <= flush_size + 64


def test_attributes_and_repr():
    sink = Sink()
    sw = StreamWriter(sink, flush_size=100, prefix="u16be", encoding="mutf8", errors="replace")
    assert (sw.prefix, sw.encoding, sw.errors) == ("u16be", "mutf-8", "replace")
    assert sw.sink is sink and sw.flush_size == 100
    assert (sw.position, sw.buffered, sw.closed) == (0, 0, False)
    sw.write_string("abc")
    assert (sw.position, sw.buffered) == (5, 5)
    assert "buffered=5" in repr(sw) and "position=5" in repr(sw)


def test_bad_arguments():
    with pytest.raises(ValueError, match="flush_size"):
        StreamWriter(Sink(), flush_size=0)
    with pytest.raises(TypeError):
        StreamWriter(Sink(), flush_size=1.5)
    with pytest.raises(TypeError, match="write"):
        StreamWriter(object())
    with pytest.raises(LookupError):
        StreamWriter(Sink(), errors="no-such-handler")
    with pytest.raises(ValueError):
        StreamWriter(Sink(), prefix="u64")


# --- what sink.write returns ------------------------------------------------------

def test_short_counts_write_the_rest_again():
    xs = names(5000)
    sink = Sink(take=5)
    with StreamWriter(sink, flush_size=4096) as sw:
        sw.write_strings(xs)
    assert decode_all(bytes(sink.data)) == xs


def test_none_is_blocking_io_error_and_nothing_is_lost():
    sink = Sink(take=10, none_at={1})
    sw = StreamWriter(sink, flush_size=64)
    xs = names(10)
    with pytest.raises(BlockingIOError) as ei:
        sw.write_strings(xs)
    assert ei.value.characters_written == 10  # what the sink took in that flush
    assert ei.value.records_accepted == 10    # every record is in (buffer or sink)
    bw = BufferWriter()
    bw.write_strings(xs)
    assert bytes(sink.data) + sw._w.getvalue() == bw.getvalue()
    assert sw.buffered == len(bw) - 10
    sink.take = None
    sw.close()
    assert decode_all(bytes(sink.data)) == xs


@pytest.mark.parametrize("bad", [-1, 10**6])
def test_invalid_count_is_os_error(bad):
    class Liar:
        def write(self, b):
            return bad
    sw = StreamWriter(Liar(), flush_size=1)
    with pytest.raises(OSError, match="invalid length") as ei:
        sw.write_string("abc")
    assert ei.value.records_accepted == 1
    assert sw.buffered == 4


def test_interrupted_write_is_made_again():
    sink = Sink(fail_at={0: InterruptedError()})
    with StreamWriter(sink, flush_size=1) as sw:
        sw.write_string("x")
    assert bytes(sink.data) == b"\x01x" and sink.calls == [2, 2]


# --- the sink fails ----------------------------------------------------------------

@pytest.mark.parametrize("k", [0, 1, 3])
@pytest.mark.parametrize("take", [None, 7])
@pytest.mark.parametrize("source", ["generator", "arrow"])
def test_sink_failure_keeps_every_record_once(k, take, source):
    xs = names(40000)
    sink = Sink(take=take, fail_at={k: OSError("disk full")})
    sw = StreamWriter(sink, flush_size=4096)
    if source == "arrow":  # write_arrow flushes between slices of rows
        arr = pytest.importorskip("pyarrow").array(xs)
        with pytest.raises(OSError, match="disk full") as ei:
            sw.write_arrow(arr)
    else:
        gen = iter(xs)
        with pytest.raises(OSError, match="disk full") as ei:
            sw.write_strings(gen)
    got = ei.value.records_accepted
    assert 0 < got < len(xs)
    bw = BufferWriter()
    assert sw.position == bw.write_strings(xs[:got])
    sw.flush()  # the bytes left behind go first
    assert decode_all(bytes(sink.data)) == xs[:got]
    if source == "arrow":
        sw.write_arrow(arr.slice(got))
    else:
        # the records not accepted are still in the iterator, the first of them next
        assert next(gen) == xs[got]
        sw.write_string(xs[got])
        sw.write_strings(gen)
    sw.close()
    assert decode_all(bytes(sink.data)) == xs


def test_sink_failure_on_single_records():
    sink = Sink(fail_at={1: OSError("once")})
    sw = StreamWriter(sink, flush_size=1)
    sw.write_string("a")
    with pytest.raises(OSError) as ei:
        sw.write_bytes(b"bc")
    assert ei.value.records_accepted == 1
    sw.write_vint(5)
    sw.close()
    assert bytes(sink.data) == b"\x01a\x02bc\x05"


def test_sink_failure_with_a_list_counts_from_the_call():
    xs = names(20000)
    sink = Sink(fail_at={2: ValueError("sink says no")})
    sw = StreamWriter(sink, flush_size=4096)
    sw.write_string("first")
    with pytest.raises(ValueError) as ei:
        sw.write_strings(xs)
    got = ei.value.records_accepted
    assert 0 < got < len(xs)
    sw.write_strings(xs[got:])
    sw.close()
    assert decode_all(bytes(sink.data)) == ["first"] + xs


# --- failures that are not the sink's -------------------------------------------------

@pytest.mark.parametrize("kind", ["list", "tuple", "gen"])
@pytest.mark.parametrize("bad_at", [0, 5, 3000])
def test_bad_item_without_flush_is_all_or_nothing(kind, bad_at):
    xs = names(4000)
    xs[bad_at] = 42
    sink = Sink()
    sw = StreamWriter(sink)  # 1 MiB: no flush during the call
    sw.write_string("before")
    arg = {"list": xs, "tuple": tuple(xs), "gen": iter(xs)}[kind]
    with pytest.raises(TypeError) as ei:
        sw.write_strings(arg)
    with pytest.raises(TypeError) as want:
        BufferWriter().write_strings(xs)
    assert str(ei.value) == str(want.value)  # the index counts from the call's first item
    assert ei.value.records_accepted == 0
    assert sw.buffered == 7 and sw.position == 7 and sink.calls == []
    if kind == "gen":  # consumed up to the bad item at least, as BufferWriter does
        rest = list(arg)
        assert rest == xs[len(xs) - len(rest):] and len(rest) <= len(xs) - bad_at - 1
    sw.close()
    assert decode_all(bytes(sink.data)) == ["before"]


@pytest.mark.parametrize("prefix", ["varint", "u16be"])
def test_surrogate_without_flush_is_all_or_nothing(prefix):
    sw = StreamWriter(Sink(), prefix=prefix)
    with pytest.raises(UnicodeEncodeError) as ei:
        sw.write_strings(["ok", "bad \ud800"])
    assert ei.value.records_accepted == 0 and sw.buffered == 0
    if prefix == "u16be":
        with pytest.raises(OverflowError) as ei:
            sw.write_strings(["ok", "x" * 70000])
        assert ei.value.records_accepted == 0 and sw.buffered == 0


@pytest.mark.parametrize("kind", ["list", "gen"])
def test_bad_item_after_a_flush_keeps_the_records_before_it(kind):
    xs = names(20000)
    xs[15000] = "bad \udc00 surrogate"
    sink = Sink()
    sw = StreamWriter(sink, flush_size=4096)
    arg = xs if kind == "list" else iter(xs)
    with pytest.raises(UnicodeEncodeError) as ei:
        sw.write_strings(arg)
    assert ei.value.records_accepted == 15000
    assert sink.calls  # flushes happened
    sw.close()
    assert decode_all(bytes(sink.data)) == xs[:15000]  # never half a record


def test_failing_iterator():
    def gen(n, fail_at):
        for i, s in enumerate(names(n)):
            if i == fail_at:
                raise KeyError("iterator broke")
            yield s
    sink = Sink()
    sw = StreamWriter(sink)
    with pytest.raises(KeyError) as ei:
        sw.write_strings(gen(100, 50))
    assert ei.value.records_accepted == 0 and sw.buffered == 0
    sw2 = StreamWriter(sink, flush_size=1024)
    with pytest.raises(KeyError) as ei:
        sw2.write_strings(gen(20000, 15000))
    assert ei.value.records_accepted == 15000
    sw2.close()
    assert decode_all(bytes(sink.data)) == names(15000)


def test_non_iterable_and_arrow_dispatch():
    sw = StreamWriter(Sink())
    with pytest.raises(TypeError, match="not iterable") as ei:
        sw.write_strings(5)
    assert ei.value.records_accepted == 0
    assert sw.write_strings("ab") == BufferWriter().write_strings("ab")


def test_arrow_matches_buffer_writer():
    pa = pytest.importorskip("pyarrow")
    arr = pa.chunked_array([pa.array(names(3000)), pa.array(["x", None, "y"])])
    for prefix in ("varint", "varint+1"):
        bw = BufferWriter(prefix=prefix)
        sink = Sink()
        with StreamWriter(sink, flush_size=512, prefix=prefix) as sw:
            if prefix == "varint":
                with StreamWriter(Sink(), flush_size=1 << 20) as big:
                    with pytest.raises(ValueError, match="row 3001") as ei:
                        big.write_strings(arr)  # the null, with no flush before it
                    assert ei.value.records_accepted == 0 and big.buffered == 0
                assert sw.write_arrow(arr, nulls="skip") == bw.write_arrow(arr, nulls="skip")
            else:
                assert sw.write_strings(arr) == bw.write_strings(arr)
        assert bytes(sink.data) == bw.getvalue()


# --- memory --------------------------------------------------------------------

def test_memory_stays_bounded():
    flush_size = 64 << 10
    longest = 0
    seen = []

    def gen():
        nonlocal longest
        for i in range(200000):
            s = "x" * (i % 37) + ("ü" * (i % 11)) + ("long " * 40 if i % 9973 == 0 else "")
            longest = max(longest, len(s.encode()) + 2)
            seen.append(sw.buffered)
            yield s

    sink = Sink()
    sw = StreamWriter(sink, flush_size=flush_size)
    sw.write_strings(gen())
    bound = flush_size + longest
    assert max(sink.calls) <= bound
    assert max(seen) <= bound
    assert sw._w.capacity <= flush_size + (flush_size >> 3) + 4096
    sw.close()
    assert len(decode_all(bytes(sink.data))) == 200000


@pytest.mark.parametrize("as_list", [False, True], ids=["generator", "list"])
def test_records_longer_than_the_recent_ones_do_not_pile_up(as_list):
    """A chunk's count comes from the bytes per record of the recent ones;
    records far longer (20 K characters after 5,000 empty strings) cut the
    chunk short by what they can weigh, so the sink gets about flush_size
    plus one record a call, and a generator is not read far ahead of it."""
    flush_size = 64 << 10
    longs = ["%04d" % i + "\u0101" * 20000 for i in range(100)]
    long_bytes = len(encode(longs[0]))
    items = [""] * 5000 + longs
    pulled = [0]  # long records the generator has given
    at_call = []  # ... when each sink.write came

    def gen():
        for s in items:
            pulled[0] += len(s) > 0
            yield s

    class Counting(Sink):
        def write(self, b):
            at_call.append(pulled[0])
            return super().write(b)

    sink = Counting()
    sw = StreamWriter(sink, flush_size=flush_size)
    whole = b"".join(map(encode, items))
    assert sw.write_strings(items if as_list else gen()) == len(whole)
    assert max(sink.calls) <= flush_size + 2 * long_bytes
    if not as_list:
        assert at_call[0] <= flush_size // long_bytes + 2
    sw.close()
    assert bytes(sink.data) == whole


def test_an_iterator_that_walks_the_collectors_objects_finds_no_half_filled_chunk():
    """The chunk's list is filled while the iterator runs Python code: code
    that reaches it through gc.get_objects() must not find empty slots."""
    seen = [0]

    def gen():
        for i in range(3000):
            if i % 1000 == 1:
                for o in gc.get_objects():
                    if type(o) is list:
                        o[:]  # copies every item: an empty slot would crash
                        seen[0] += 1
            yield "x%d" % i

    sink = Sink()
    sw = StreamWriter(sink)
    sw.write_strings(gen())
    sw.close()
    assert seen[0] > 0
    assert decode_all(bytes(sink.data)) == ["x%d" % i for i in range(3000)]


# --- closing, views, pickling ----------------------------------------------------------

def test_close_and_with():
    f = io.BytesIO()
    with StreamWriter(f, flush_size=1 << 20) as sw:
        sw.write_strings(["a", "b"])
        assert f.getvalue() == b""
    assert sw.closed and not f.closed
    assert f.getvalue() == b"\x01a\x01b"
    sw.close()  # again: nothing
    for call in (lambda: sw.write_string("x"), lambda: sw.write_strings(["x"]),
                 lambda: sw.write_bytes(b"x"), lambda: sw.write_raw(b"x"),
                 lambda: sw.write_vint(1), lambda: sw.write_arrow(None)):
        with pytest.raises(ValueError, match="closed") as ei:
            call()
        assert ei.value.records_accepted == 0
    with pytest.raises(ValueError, match="closed"):
        sw.flush()
    with pytest.raises(ValueError, match="closed"):
        with sw:
            pass


def test_close_that_cannot_flush_stays_open():
    sink = Sink(fail_at={0: OSError("no")})
    sw = StreamWriter(sink)
    sw.write_string("abc")
    with pytest.raises(OSError):
        sw.close()
    assert not sw.closed and sw.buffered == 4
    sw.close()
    assert sw.closed and bytes(sink.data) == b"\x03abc"


def test_flush_without_sink_flush():
    class F(Sink):
        def flush(self):  # pragma: no cover - must not be called
            raise AssertionError
    sink = F()
    sw = StreamWriter(sink)
    sw.write_string("a")
    sw.flush()
    sw.flush()  # nothing buffered: no call
    assert sink.calls == [2]


def test_a_kept_view_is_released():
    kept = []

    class Keeper:
        def write(self, b):
            kept.append(b)
            return len(b)

    with StreamWriter(Keeper(), flush_size=1) as sw:
        sw.write_string("abc")
        sw.write_string("defg")
    assert kept and all(isinstance(v, memoryview) for v in kept)
    for v in kept:
        with pytest.raises(ValueError):
            bytes(v)


@pytest.mark.parametrize("derive", [lambda b: b[0:], memoryview])
def test_a_derived_view_stays_valid_and_the_writer_goes_on(derive):
    kept = []

    class Keeper:
        def write(self, b):
            kept.append(derive(b))
            return len(b)

    sw = StreamWriter(Keeper(), flush_size=8)
    xs = names(3000)
    sw.write_strings(xs)
    sw.close()
    assert decode_all(b"".join(bytes(v) for v in kept)) == xs


def test_pickle_and_copy_refused():
    sw = StreamWriter(io.BytesIO())
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(sw)
    with pytest.raises(TypeError):
        copy.copy(sw)


# --- re-entrancy and threads ------------------------------------------------------------

def test_sink_calling_back_is_runtime_error():
    class Back:
        def write(self, b):
            sw.write_string("again")
            return len(b)

    sw = StreamWriter(Back(), flush_size=1)
    with pytest.raises(RuntimeError, match="middle") as ei:
        sw.write_string("a")
    assert ei.value.records_accepted == 1
    assert sw.buffered == 2  # the record waits for the next flush


def test_iterator_calling_back_is_runtime_error():
    sw = StreamWriter(Sink())

    def gen():
        yield "a"
        sw.write_string("inside")
        yield "b"

    with pytest.raises(RuntimeError):
        sw.write_strings(gen())
    assert sw.buffered == 0


def test_two_threads_write_whole_records():
    sink = Sink(take=13)
    sw = StreamWriter(sink, flush_size=256)
    per = 3000
    start = threading.Barrier(2)

    def work(tag):
        start.wait()
        for i in range(0, per, 100):
            sw.write_strings([f"{tag}{j}" for j in range(i, i + 50)])
            for j in range(i + 50, i + 100):
                sw.write_string(f"{tag}{j}")

    ts = [threading.Thread(target=work, args=(t,)) for t in "AB"]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    sw.close()
    out = decode_all(bytes(sink.data))
    assert len(out) == 2 * per
    for tag in "AB":
        assert [s for s in out if s[0] == tag] == [f"{tag}{j}" for j in range(per)]


@pytest.mark.skipif(not hasattr(os, "set_blocking"), reason="needs os.set_blocking")
def test_non_blocking_pipe():
    """A real non-blocking sink: FileIO on a full pipe returns None."""
    r, wfd = os.pipe()
    os.set_blocking(wfd, False)
    os.set_blocking(r, False)
    xs = names(60000)
    out = bytearray()

    def drain():
        while True:
            chunk = reader.read(1 << 20)
            if not chunk:  # None: empty for now
                return
            out.extend(chunk)

    with open(r, "rb", buffering=0) as reader, open(wfd, "wb", buffering=0) as raw:
        sw = StreamWriter(raw, flush_size=1 << 16)
        pos, blocked = 0, 0
        while pos < len(xs):
            try:
                sw.write_strings(xs[pos:])
                pos = len(xs)
            except BlockingIOError as e:
                pos += e.records_accepted
                blocked += 1
                drain()
        while True:
            try:
                sw.close()
                break
            except BlockingIOError:
                drain()
        drain()
    assert blocked and decode_all(bytes(out)) == xs


def test_errors_name_the_stream_writer():
    with pytest.raises(ValueError, match=r"^StreamWriter\(\) unknown prefix"):
        StreamWriter(Sink(), prefix="u64")


def test_close_frees_the_buffer():
    sw = StreamWriter(Sink(), flush_size=1 << 20)
    sw.write_string("a")
    sw.close()
    assert sw._w.capacity == 0 and sw.position == 2 and sw.prefix == "varint"


def test_a_sink_that_releases_the_view_itself():
    out = bytearray()

    class Releaser:
        def write(self, b):
            n = min(3, len(b))
            out.extend(b[:n])
            b.release()
            return n

    with StreamWriter(Releaser(), flush_size=16) as sw:
        sw.write_strings(names(500))
    assert decode_all(bytes(out)) == names(500)


def test_error_handler_calling_back_is_runtime_error():
    import codecs

    def handler(exc):
        sw.write_string("inside")
        return ("?", exc.end)

    codecs.register_error("utf8pfx-test-stream-writer-callback", handler)
    sink = Sink()
    sw = StreamWriter(sink, errors="utf8pfx-test-stream-writer-callback")
    with pytest.raises(RuntimeError) as ei:
        sw.write_strings(["a", "b\ud800"])
    assert ei.value.records_accepted == 0 and sw.buffered == 0
    sw.write_string("ok")
    sw.close()
    assert bytes(sink.data) == b"\x02ok"


# --- write_arrow in bounded memory ------------------------------------------------

def arrow_inputs(pa):
    xs = names(5000)
    with_nulls = [None if i % 7 == 3 else x for i, x in enumerate(xs)]
    out = {
        "utf8": pa.array(xs),
        "large_utf8": pa.array(xs, type=pa.large_string()),
        "sliced": pa.array(xs).slice(123, 4000),
        "chunked": pa.chunked_array([pa.array(xs[:10]), pa.array(xs[10:3000]),
                                     pa.array([], pa.string()), pa.array(xs[3000:])]),
        "nulls": pa.array(with_nulls),
        "dictionary": pa.array(with_nulls).dictionary_encode(),
    }
    if hasattr(pa, "string_view"):
        out["string_view"] = pa.array(xs, type=pa.string_view())
    return out


@pytest.mark.parametrize("flush_size", [1, 100, 4096, 1 << 20])
@pytest.mark.parametrize("prefix", ["varint", "varint+1", "u16be"])
def test_arrow_bytes_equal_buffer_writer_at_every_flush_size(flush_size, prefix):
    pa = pytest.importorskip("pyarrow")
    for kind, arr in arrow_inputs(pa).items():
        nulls = "skip" if prefix != "varint+1" else None
        bw = BufferWriter(prefix=prefix)
        expected = bw.write_arrow(arr, nulls=nulls)
        sink = Sink()
        with StreamWriter(sink, flush_size=flush_size, prefix=prefix) as sw:
            sw.write_string("head")
            assert sw.write_arrow(arr, nulls=nulls) == expected, kind
            assert sw.position == len(bw.getvalue()) + BufferWriter(prefix=prefix).write_string("head")
        assert bytes(sink.data) == BufferWriter(prefix=prefix).getvalue() + \
            _prefixed("head", prefix) + bw.getvalue(), kind


def _prefixed(s, prefix):
    w = BufferWriter(prefix=prefix)
    w.write_string(s)
    return w.getvalue()


def test_arrow_memory_stays_bounded():
    pa = pytest.importorskip("pyarrow")
    flush_size = 64 << 10
    xs = [("x" * (i % 37)) + ("ü" * (i % 11)) for i in range(300000)]
    arr = pa.chunked_array([pa.array(xs[:100000]), pa.array(xs[100000:])])
    sink = Sink()
    sw = StreamWriter(sink, flush_size=flush_size)
    total = sw.write_arrow(arr)
    assert total > 20 * flush_size
    # a flush happens once the buffer passes flush_size, between slices of
    # about an eighth of it (the first slice: 64 rows)
    assert max(sink.calls) <= flush_size + flush_size // 4 + 64 * 60
    assert sw._w.capacity <= 3 * flush_size  # the writer grows by half or doubles
    sw.close()
    assert decode_all(bytes(sink.data)) == xs


def _bad_utf8_array(pa, xs, bad_row):
    """A utf8 array of xs whose row bad_row holds the invalid byte 0xff."""
    body = bytearray()
    offsets = [0]
    for i, x in enumerate(xs):
        b = x.encode()
        body += b"\xff" if i == bad_row else b
        offsets.append(len(body))
    return pa.Array.from_buffers(pa.string(), len(xs), [
        None, pa.py_buffer(bytes(memoryview(__import__("array").array("i", offsets)))),
        pa.py_buffer(bytes(body))])


@pytest.mark.parametrize("bad_row", [0, 37, 2999, 4999])
def test_arrow_bad_value_after_a_flush_keeps_the_rows_before_it(bad_row):
    pa = pytest.importorskip("pyarrow")
    xs = names(5000)
    arr = _bad_utf8_array(pa, xs, bad_row)
    sink = Sink()
    sw = StreamWriter(sink, flush_size=1000)
    with pytest.raises(UnicodeDecodeError) as ei:
        sw.write_arrow(arr)
    assert ei.value.row == bad_row
    flushed = len(sink.calls) > 0
    assert ei.value.records_accepted == (bad_row if flushed else 0)
    assert sw.position == len(bytes(sink.data)) + sw.buffered
    sw.close()
    assert decode_all(bytes(sink.data)) == (xs[:bad_row] if flushed else [])


@pytest.mark.parametrize("null_row", [5, 2500, 4999])
def test_arrow_refused_null_after_a_flush_keeps_the_rows_before_it(null_row):
    pa = pytest.importorskip("pyarrow")
    xs = names(5000)
    ys = [None if i == null_row else x for i, x in enumerate(xs)]
    arr = pa.chunked_array([pa.array(ys[:2000]), pa.array(ys[2000:])])
    sink = Sink()
    sw = StreamWriter(sink, flush_size=500)
    with pytest.raises(ValueError, match="row %d" % null_row) as ei:
        sw.write_arrow(arr)
    flushed = len(sink.calls) > 0
    assert ei.value.records_accepted == (null_row if flushed else 0)
    sw.close()
    assert decode_all(bytes(sink.data)) == (xs[:null_row] if flushed else [])


# --- the one-record methods ----------------------------------------------------------


def test_one_record_handler_calling_back_is_runtime_error():
    import codecs

    def handler(exc):
        sw.write_vint(7)
        return ("?", exc.end)

    codecs.register_error("utf8pfx-test-stream-writer-one-callback", handler)
    sink = Sink()
    sw = StreamWriter(sink, errors="utf8pfx-test-stream-writer-one-callback")
    sw.write_string("a")
    with pytest.raises(RuntimeError, match="middle") as ei:
        sw.write_string("b\ud800")
    assert ei.value.records_accepted == 0 and sw.buffered == 2 and sw.position == 2
    sw.close()
    assert bytes(sink.data) == b"\x01a"


@pytest.mark.parametrize("method,arg", [("write_string", "x"), ("write_bytes", b"x"),
                                        ("write_raw", b"x"), ("write_vint", 1)])
def test_one_record_methods_on_a_closed_writer(method, arg):
    sw = StreamWriter(Sink())
    sw.close()
    with pytest.raises(ValueError, match="closed") as ei:
        getattr(sw, method)(arg)
    assert ei.value.records_accepted == 0


@pytest.mark.parametrize("method,arg,exc", [("write_string", b"x", TypeError),
                                            ("write_bytes", "x", TypeError),
                                            ("write_raw", 3, TypeError),
                                            ("write_vint", -1, ValueError)])
def test_one_record_refusals_are_buffer_writers(method, arg, exc):
    sw, bw = StreamWriter(Sink()), BufferWriter()
    with pytest.raises(exc) as want:
        getattr(bw, method)(arg)
    with pytest.raises(exc) as ei:
        getattr(sw, method)(arg)
    assert str(ei.value) == str(want.value)
    assert ei.value.records_accepted == 0 and sw.buffered == 0 and sw.position == 0


def test_a_second_thread_waits_without_the_gil_for_a_call_in_a_sink():
    entered, go = threading.Event(), threading.Event()

    class Slow(Sink):
        def write(self, b):
            if not entered.is_set():
                entered.set()
                assert go.wait(10)
            return super().write(b)

    sink = Slow()
    sw = StreamWriter(sink, flush_size=1)
    a = threading.Thread(target=sw.write_string, args=("first",))
    a.start()
    assert entered.wait(10)  # a is inside sink.write, holding the writer
    b = threading.Thread(target=sw.write_string, args=("second",))
    b.start()
    # this thread runs while b waits (b does not hold the GIL), and b's
    # record stays out of the buffer until a's call is over
    for _ in range(50):
        assert sw.buffered == 6 and b.is_alive()
        threading.Event().wait(0.002)
    go.set()
    a.join(10)
    b.join(10)
    sw.close()
    assert decode_all(bytes(sink.data)) == ["first", "second"]


def test_the_buffer_must_stay_a_buffer_writer():
    sw = StreamWriter(Sink())
    with pytest.raises(TypeError, match="BufferWriter"):
        sw._w = b"not a writer"
    sw.write_string("ok")
    assert sw.buffered == 3
