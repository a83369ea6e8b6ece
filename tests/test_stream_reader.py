"""StreamReader: records of a stream (pull from a file object, or push with
feed()), split anywhere between reads, against decode_all of the whole."""
import codecs
import gzip
import io
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from utf8pfx import BufferReader, BufferWriter, StreamReader, decode_all
from utf8pfx._reference import PREFIXES

from support.checks import held_by_others
from support.reference import vint
from support.strategies import text_any

ENCODINGS = ("utf-8", "mutf-8")


# ---------------------------------------------------------------- helpers

class Pieces:
    """A binary source that hands out `pieces` one by one: short reads.
    readinto=False gives it only read(n)."""

    def __init__(self, pieces, readinto=True):
        self.pieces = [bytes(p) for p in pieces if p]
        self.calls = 0
        if not readinto:
            self.readinto = None
            del self.readinto

    def _next(self, n):
        self.calls += 1
        if not self.pieces:
            return b""
        p = self.pieces[0]
        take, rest = p[:n], p[n:]
        if rest:
            self.pieces[0] = rest
        else:
            self.pieces.pop(0)
        return take

    def readinto(self, view):
        b = self._next(len(view))
        view[: len(b)] = b
        return len(b)

    def read(self, n=-1):
        return self._next(n if n >= 0 else 1 << 30)


class ReadOnly:
    """Only read(n), no readinto."""

    def __init__(self, pieces):
        self.src = Pieces(pieces)

    def read(self, n=-1):
        return self.src.read(n)


def split(blob, cuts):
    cuts = sorted(set(c for c in cuts if 0 < c < len(blob)))
    bounds = [0] + cuts + [len(blob)]
    return [blob[a:b] for a, b in zip(bounds, bounds[1:])]


def blob_of(records, prefix, encoding, errors="surrogatepass"):
    w = BufferWriter(errors=errors, prefix=prefix, encoding=encoding)
    w.write_strings(records)
    return w.getvalue()


@st.composite
def stream_case(draw, prefix, encoding):
    # short text over the whole code space (lone surrogates included), and
    # a few lengths around the one-byte varint limit
    long = st.sampled_from([126, 127, 128, 300, 5000]).map(lambda n: "\u00e9" * (n // 2))
    item = st.one_of(text_any, text_any, long)
    if prefix == "varint+1":
        item = st.one_of(st.none(), item)
    records = draw(st.lists(item, max_size=12))
    blob = blob_of(records, prefix, encoding)
    cuts = draw(st.lists(st.integers(0, max(len(blob), 1)), max_size=12))
    return records, blob, split(blob, cuts)


def drain(r, how):
    """What a push-mode caller collects now, by one of the APIs."""
    if how == 0:
        return list(r)
    if how == 1:
        return r.read_strings()
    if how == 2:
        out = []
        for b in r.batches(3):
            assert len(b) == 3
            out += b
        return out
    out = []  # read_strings(2) until it returns [] (nothing consumed then)
    while True:
        before = r.position
        got = r.read_strings(2)
        if not got:
            assert r.position == before
            return out
        assert len(got) == 2
        out += got


# ------------------------------------------------------ the main property

@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("prefix", PREFIXES)
@settings(max_examples=30)
@given(data=st.data())
def test_push_any_split_equals_decode_all(prefix, encoding, data):
    records, blob, pieces = data.draw(stream_case(prefix, encoding))
    want = decode_all(blob, "surrogatepass", prefix=prefix, encoding=encoding)
    if encoding == "utf-8":
        assert want == records
    how = data.draw(st.integers(0, 3))
    r = StreamReader(prefix=prefix, encoding=encoding, errors="surrogatepass")
    got = []
    fed = 0
    for p in pieces:
        r.feed(p)
        fed += len(p)
        got += drain(r, how)
        assert r.position + r.buffered == fed
        # an incomplete tail before feed_eof is not an error
    r.feed_eof()
    if how == 2:
        for b in r.batches(3):
            got += b
    else:
        got += r.read_strings()
    assert got == want
    assert r.position == len(blob) and r.buffered == 0
    assert list(r) == [] and r.read_strings() == []


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("prefix", PREFIXES)
@settings(max_examples=30)
@given(data=st.data())
def test_pull_short_reads_equal_decode_all(prefix, encoding, data):
    records, blob, pieces = data.draw(stream_case(prefix, encoding))
    want = decode_all(blob, "surrogatepass", prefix=prefix, encoding=encoding)
    read_size = data.draw(st.sampled_from([1, 2, 7, 64, 1 << 20]))
    src = data.draw(st.sampled_from(["readinto", "read"]))
    how = data.draw(st.integers(0, 2))
    source = Pieces(pieces) if src == "readinto" else ReadOnly(pieces)
    r = StreamReader(source, prefix=prefix, encoding=encoding, errors="surrogatepass",
                     read_size=read_size)
    if how == 0:
        got = list(r)
    elif how == 1:
        got = r.read_strings()
    else:
        got = [x for b in r.batches(2) for x in b]
        assert all(len(b) == 2 for b in list(StreamReader(
            Pieces(pieces), prefix=prefix, encoding=encoding, errors="surrogatepass",
            read_size=read_size).batches(2))[:-1])
    assert got == want
    assert r.position == len(blob) and r.buffered == 0


def test_pull_read_strings_n_and_raw_batches():
    xs = [str(i) * (i % 5) for i in range(50)]
    blob = blob_of(xs, "varint", "utf-8")
    r = StreamReader(Pieces(split(blob, range(0, len(blob), 3))), read_size=2)
    assert r.read_strings(7) == xs[:7]
    assert r.read_strings(0) == []
    assert [b for b in r.batches(20, raw=True)] == [
        [x.encode() for x in xs[7:27]], [x.encode() for x in xs[27:47]],
        [x.encode() for x in xs[47:]]]


def test_batches_hold_every_256th_item_of_the_last_batch_only():
    """As BufferReader's batches(): the first small object of every 256 of
    the last batch (here every 256th) is held until the next batch, the end of the stream, an error, or (push
    mode) a pause for data, and never across one."""
    blob = blob_of(["r%05d" % i for i in range(1000)], "varint", "utf-8")
    for source in (Pieces(split(blob, range(0, len(blob), 999))), None):
        r = StreamReader(source, read_size=4096)
        if source is None:
            r.feed(blob)
        it = r.batches(600)
        b1 = next(it)
        assert held_by_others(b1) == [1 if i % 256 == 0 else 0 for i in range(600)]
        if source is None:
            with pytest.raises(StopIteration):  # 400 held: a pause for data
                next(it)
            assert held_by_others(b1) == [0] * 600
            r.feed_eof()
        b2 = next(it)
        assert held_by_others(b1) == [0] * 600 and held_by_others(b2)[:257:256] == [1, 1]
        with pytest.raises(StopIteration):
            next(it)
        assert held_by_others(b2) == [0] * 400
    r = StreamReader(Pieces([blob, b"\x05ab"]))
    it = r.batches(500)
    next(it)
    b2 = next(it)
    with pytest.raises(ValueError, match="runs past the end of the data"):
        next(it)
    assert held_by_others(b2) == [0] * 500


@pytest.mark.parametrize("read_size, piece", [(64, 64), (4096, 999)],
                         ids=["first_list_short_of_room", "first_list_has_room"])
def test_pull_batch_over_several_reads_holds_each_str_once(read_size, piece):
    """A batch whose records come in over several reads is joined from a
    list per read: into the room of the first list (made for the smaller of
    the batch and the bytes held), or into a new list when that room is
    short.  Every record once, in order, with no reference left behind or
    missing (only the iterator's pins)."""
    xs = ["r%05d" % i for i in range(1001)]
    blob = blob_of(xs, "varint", "utf-8")
    r = StreamReader(Pieces(split(blob, range(0, len(blob), piece))), read_size=read_size)
    assert r.read_string() == xs[0]  # the first list starts from bytes already held
    it = r.batches(600)
    b1 = next(it)
    assert b1 == xs[1:601]
    assert held_by_others(b1) == [1 if i % 256 == 0 else 0 for i in range(600)]
    b2 = next(it)
    assert b2 == xs[601:]
    assert held_by_others(b1) == [0] * 600
    r = StreamReader(Pieces(split(blob, range(0, len(blob), piece))), read_size=read_size)
    assert r.read_string() == xs[0]
    got = r.read_strings(700)
    assert got == xs[1:701] and held_by_others(got) == [0] * 700
    assert r.read_strings() == xs[701:]


def test_batches_arrow_matches_read_strings_arrow():
    pa = pytest.importorskip("pyarrow")
    xs = ["r%d" % i + "\u00e9" * (i % 3) for i in range(100)] + [None, "x"]
    blob = blob_of(xs, "varint+1", "utf-8")
    r = StreamReader(Pieces(split(blob, range(0, len(blob), 7))), prefix="varint+1",
                     read_size=5)
    got = [pa.array(a) for a in r.batches_arrow(30)]
    assert [len(a) for a in got] == [30, 30, 30, 12]
    assert [x for a in got for x in a.to_pylist()] == xs
    p = StreamReader()
    p.feed(blob_of(["a", "b", "c"], "varint", "utf-8") + b"\x02\xff")
    assert [pa.array(a).to_pylist() for a in p.batches_arrow(2)] == [["a", "b"]]
    p.feed(b"\x00")
    p.feed_eof()
    with pytest.raises(UnicodeDecodeError) as ei:
        list(p.batches_arrow(2))
    assert (ei.value.record_index, ei.value.row, ei.value.data_offset) == (3, 1, 7)
    assert p.position == 4


def test_gzip_file_source(tmp_path):
    xs = ["r%d \u00e9\U0001F600" % i for i in range(3000)]
    path = tmp_path / "s.gz"
    with gzip.open(path, "wb") as f:
        f.write(blob_of(xs, "varint", "utf-8"))
    with gzip.open(path, "rb") as f, StreamReader(f, read_size=4096) as r:
        assert list(r) == xs


# ----------------------------------------------------- truncation and EOF

@pytest.mark.parametrize("prefix", PREFIXES)
def test_truncated_at_eof_pull_and_push(prefix):
    xs = ["ab", "cde", "f" * 300]
    blob = blob_of(xs, prefix, "utf-8")
    cut = blob[:-5]
    last = len(blob_of(xs[:2], prefix, "utf-8"))
    ref = None
    try:
        BufferReader(cut, prefix=prefix).read_strings()
    except ValueError as e:
        ref = str(e)
    assert ref is not None
    r = StreamReader(Pieces([cut]), prefix=prefix, read_size=7)
    it = iter(r)
    assert [next(it), next(it)] == xs[:2]
    with pytest.raises(ValueError) as ei:
        next(it)
    e = ei.value
    assert e.data_offset == last and e.record_index == 2
    assert str(e) == ref  # BufferReader's own message names record index 2 too
    assert "offset %d" % last in str(e)
    assert r.position == last  # the records returned stay returned

    p = StreamReader(prefix=prefix)
    p.feed(cut)
    assert p.read_strings() == xs[:2]  # before feed_eof: not an error
    assert p.buffered == len(cut) - last
    p.feed_eof()
    with pytest.raises(ValueError) as ei:
        p.read_strings()
    assert (ei.value.data_offset, ei.value.record_index) == (last, 2)
    with pytest.raises(ValueError):
        list(p)


def test_read_strings_pull_all_or_nothing():
    xs = ["a", "bb", "ccc"]
    blob = blob_of(xs, "varint", "utf-8")
    r = StreamReader(Pieces(split(blob + b"\x05xy", [1, 4])), read_size=1)
    with pytest.raises(ValueError) as ei:
        r.read_strings()
    assert ei.value.record_index == 3 and ei.value.data_offset == len(blob)
    assert r.position == 0 and r.buffered == len(blob) + 3  # nothing consumed
    with pytest.raises(ValueError):
        r.read_strings(4)
    assert r.read_strings(3) == xs
    with pytest.raises(ValueError, match="record index 3"):
        r.read_string()


def test_read_strings_n_exact_after_eof_like_buffer_reader():
    blob = blob_of(["a", "b"], "varint", "utf-8")
    with pytest.raises(ValueError) as ref:
        BufferReader(blob).read_strings(3)
    r = StreamReader()
    r.feed(blob)
    assert r.read_strings(3) == []  # before feed_eof: not enough yet
    assert r.position == 0
    r.feed_eof()
    with pytest.raises(ValueError) as ei:
        r.read_strings(3)
    assert str(ei.value) == str(ref.value)
    assert str(ei.value).endswith(" (record index 2)")
    assert r.read_strings(2) == ["a", "b"]


def test_push_single_item_methods_before_and_after_eof():
    r = StreamReader()
    r.feed(b"\x05ab")
    for m in (r.read_string, r.read_bytes, r.skip_string):
        with pytest.raises(BlockingIOError, match="offset 0 .*record index 0.*feed"):
            m()
    with pytest.raises(BlockingIOError):
        r.read_raw(4)
    assert r.position == 0 and r.buffered == 3
    r.feed(b"cde\x96\x01")
    assert r.read_bytes() == b"abcde"
    assert r.read_vint() == 150
    r.feed(b"\x80")
    with pytest.raises(BlockingIOError):
        r.read_vint()
    r.feed(b"\x01xyz\x02hi\x02ok")
    assert r.read_vint() == 128
    assert r.read_raw(3) == b"xyz"
    assert r.skip_string() is None
    assert r.read_string() == "ok"
    assert r.position == 19
    r.feed_eof()
    with pytest.raises(ValueError, match="expected a varint length prefix at offset 19"):
        r.read_string()
    with pytest.raises(ValueError, match="read_raw.* offset 19"):
        r.read_raw(1)


def test_push_resumes_and_iteration_restarts():
    blob = blob_of(["x" * 10, "y", "z" * 200], "varint", "utf-8")
    r = StreamReader()
    r.feed(blob[:5])
    assert list(r) == []
    r.feed(blob[5:12])
    assert list(r) == ["x" * 10]
    assert list(r.batches(1)) == []  # "y" has not fully arrived
    r.feed(blob[12:13])
    assert list(r.batches(1)) == [["y"]]
    r.feed(blob[13:])
    assert next(iter(r)) == "z" * 200
    with pytest.raises(StopIteration):
        next(r)


def test_big_record_in_small_feeds():
    big = "\u00e9" * (1 << 20) + "end"
    blob = blob_of([big, "tail"], "varint", "utf-8")
    r = StreamReader()
    t0 = time.perf_counter()
    for i in range(0, len(blob), 4096):
        r.feed(blob[i:i + 4096])
        got = list(r)
        if got:
            assert got[0] == big
    assert time.perf_counter() - t0 < 5
    r.feed_eof()
    assert r.position == len(blob)


# ---------------------------------------------------------------- limits

def test_max_record_refuses_before_allocating():
    r = StreamReader(max_record=1000)
    r.feed(vint(2 ** 40) + b"abc")
    with pytest.raises(ValueError) as ei:
        next(r)
    e = ei.value
    assert (e.data_offset, e.record_index) == (0, 0)
    assert "1099511627776" in str(e) and "max_record=1000" in str(e)
    # fine below the limit, and at an absolute offset
    r = StreamReader(max_record=3)
    r.feed(b"\x03abc\x02de" + vint(4) + b"wxyz")
    assert r.read_strings(2) == ["abc", "de"]
    with pytest.raises(ValueError) as ei:
        r.read_string()
    assert (ei.value.data_offset, ei.value.record_index) == (7, 2)


def test_huge_declared_length_allocates_nothing():
    r = StreamReader()
    r.feed(vint(2 ** 62) + b"abc")
    assert list(r) == [] and r.read_strings() == []
    assert r.buffered == 12
    r.feed_eof()
    with pytest.raises(ValueError, match="runs past the end"):
        r.read_string()
    r = StreamReader(Pieces([vint(2 ** 40) + b"x" * 10]))
    with pytest.raises(ValueError, match="record index 0"):
        list(r)


def test_bad_prefix_errors_are_absolute():
    r = StreamReader(strict_vint=True)
    r.feed(b"\x01a\x81\x00b")
    assert r.read_string() == "a"
    with pytest.raises(ValueError, match="non-minimal varint at offset 2") as ei:
        r.read_string()
    assert ei.value.record_index == 1
    r = StreamReader(prefix="zigzag")
    r.feed(b"\x04ab\x03")
    assert next(r) == "ab"
    with pytest.raises(ValueError, match="negative string length .* offset 3"):
        next(r)


# ------------------------------------------------ invalid UTF-8, handlers

def raw_blob(payloads):
    return b"".join(vint(len(p)) + p for p in payloads)


PAYLOADS = [b"ok", b"a\xffb", b"\xed\xa0\x80x", b"\xe2\x82", b"\xf0\x9f\x98\x80", b"z\x80"]


def _stream_handler(exc):
    return ("<%d:%d>" % (exc.start, exc.end), exc.end)


codecs.register_error("utf8pfx-test-stream", _stream_handler)


@pytest.mark.parametrize("errors", ["replace", "surrogateescape", "backslashreplace",
                                    "ignore", "utf8pfx-test-stream"])
def test_error_handlers_match_cpython(errors):
    blob = raw_blob(PAYLOADS)
    want = [p.decode("utf-8", errors) for p in PAYLOADS]
    r = StreamReader(errors=errors)
    got = []
    for i in range(len(blob)):
        r.feed(blob[i:i + 1])
        got += list(r)
    assert got == want
    assert StreamReader(Pieces([blob]), errors=errors, read_size=3).read_strings() == want


def test_strict_decode_error_offsets_and_nothing_consumed():
    blob = raw_blob(PAYLOADS)
    r = StreamReader(Pieces(split(blob, range(len(blob)))), read_size=1)
    assert next(r) == "ok"
    with pytest.raises(UnicodeDecodeError) as ei:
        next(r)
    e = ei.value
    ref = pytest.raises(UnicodeDecodeError, b"a\xffb".decode, "utf-8").value
    assert (e.start, e.end, e.reason, e.object) == (ref.start, ref.end, ref.reason, ref.object)
    assert (e.payload_offset, e.data_offset, e.record_index) == (4, 5, 1)
    assert r.position == 3
    assert r.read_bytes() == b"a\xffb"  # the record is still there
    # read_strings: the first error in stream order, nothing consumed
    r = StreamReader()
    r.feed(blob)
    r.feed_eof()
    with pytest.raises(UnicodeDecodeError) as ei:
        r.read_strings()
    assert ei.value.record_index == 1 and r.position == 0


# --------------------------------------------- sources that fail or stall

class Flaky(Pieces):
    """Raises OSError on every third call until `failures` have happened."""

    def __init__(self, pieces, failures=3):
        super().__init__(pieces)
        self.failures = failures

    def readinto(self, view):
        if self.failures and self.calls % 3 == 2:
            self.failures -= 1
            self.calls += 1
            raise OSError("transient")
        return super().readinto(view)


@pytest.mark.parametrize("api", ["iter", "read_strings", "batches"])
def test_source_that_raises_then_recovers(api):
    xs = ["rec%d" % i + "\u00e9" * (i % 7) for i in range(200)]
    blob = blob_of(xs, "varint", "utf-8")
    r = StreamReader(Flaky(split(blob, range(0, len(blob), 5)), failures=20), read_size=3)
    got, errors = [], 0
    while True:
        try:
            if api == "iter":
                for x in r:
                    got.append(x)
            elif api == "read_strings":
                got += r.read_strings()
            else:
                for b in r.batches(7):
                    got += b
            break
        except OSError:
            errors += 1
    assert errors == 20
    assert got == xs


class NonBlocking(Pieces):
    """readinto returns None (no data now) before every piece."""

    def __init__(self, pieces):
        super().__init__(pieces)
        self.ready = False

    def readinto(self, view):
        if not self.ready:
            self.ready = True
            return None
        self.ready = False
        return super().readinto(view)


def test_non_blocking_source_none_means_not_now():
    xs = ["a", "bcd", "e" * 40]
    blob = blob_of(xs, "varint", "utf-8")
    r = StreamReader(NonBlocking(split(blob, [1, 3, 6, 20])), read_size=64)
    got, rounds = [], 0
    while len(got) < 3:
        got += list(r)
        rounds += 1
    assert got == xs and rounds > 3
    r2 = StreamReader(NonBlocking([blob]))
    with pytest.raises(BlockingIOError, match="returned None"):
        r2.read_string()
    assert r2.read_string() == "a"
    assert list(r2) == xs[1:]
    assert list(r2) == []  # the next read: None again, then EOF
    assert list(r2) == []


_LIST_CALLS = {
    "read_strings": lambda r: r.read_strings(),
    "read_strings_n": lambda r: r.read_strings(3),
    "batches": lambda r: next(r.batches(3)),
}


@pytest.mark.parametrize("call", sorted(_LIST_CALLS))
@pytest.mark.parametrize("read_size", [1, 4, 1 << 20])
def test_pull_list_calls_stop_at_what_the_probe_refuses(call, read_size):
    """Pulled lists decode the records held as they read them and stop at one
    that is too long for max_record or not minimal under strict_vint, even
    when its bytes are all held: the error names it, nothing is consumed,
    and the records before it are read again by the next call."""
    read = _LIST_CALLS[call]
    blob = b"\x03abc\x02de" + vint(4) + b"wxyz" + b"\x01z"
    r = StreamReader(Pieces([blob]), max_record=3, read_size=read_size)
    with pytest.raises(ValueError, match="max_record=3") as ei:
        read(r)
    assert (ei.value.data_offset, ei.value.record_index) == (7, 2)
    assert r.position == 0 and r.read_strings(2) == ["abc", "de"]
    blob = b"\x01a" + b"\x82\x00" + b"bb" + b"\x01c"
    r = StreamReader(Pieces([blob]), strict_vint=True, read_size=read_size)
    with pytest.raises(ValueError, match="non-minimal") as ei:
        read(r)
    assert (ei.value.data_offset, ei.value.record_index) == (2, 1)
    assert r.position == 0 and r.read_string() == "a"


@pytest.mark.parametrize("call", sorted(_LIST_CALLS))
def test_pull_list_calls_on_a_source_with_no_data_now(call):
    """A pulled list call that meets "no data now" returns what read_strings
    and batches return then and consumes nothing; later calls get every
    record once, in order."""
    xs = ["r%d-\u00e9" % i for i in range(10)]
    blob = blob_of(xs, "varint", "utf-8")
    r = StreamReader(NonBlocking(split(blob, range(0, len(blob), 7))), read_size=5)
    got, rounds = [], 0
    while len(got) < len(xs) and rounds < 1000:
        rounds += 1
        if call == "batches":
            for b in r.batches(3):
                assert len(b) == 3 or len(got) + len(b) == len(xs)
                got += b
        elif call == "read_strings_n":
            b = r.read_strings(3) if len(xs) - len(got) >= 3 else r.read_strings()
            assert len(b) in (0, 3) or len(got) + len(b) == len(xs)
            got += b
        else:
            got += r.read_strings()
    assert got == xs and r.position == len(blob)


def test_pull_lists_longer_than_one_part_of_the_list_builder():
    """The list builder takes at most 65536 records a call: a longer pulled
    list, its records all held in one window or not, joins the parts in
    order."""
    xs = [str(i) for i in range(70000)]
    blob = blob_of(xs, "varint", "utf-8")
    for read_size in (1 << 20, 1000):
        assert StreamReader(Pieces([blob]), read_size=read_size).read_strings() == xs
        b = list(StreamReader(Pieces([blob]), read_size=read_size).batches(66000))
        assert [len(x) for x in b] == [66000, 4000] and b[0] + b[1] == xs


def test_pull_list_calls_decode_each_record_once():
    """An error handler is called once per bad record of a pulled list, whatever
    the chunks (the records are decoded as they are read, never again)."""
    calls = []

    def count(e):
        calls.append(e.object[e.start:e.end])
        return ("?", e.end)

    codecs.register_error("utf8pfx-test-count-stream", count)
    payloads = [b"ok", b"\xff1", b"fine", b"\xfe2", b"x" * 300]
    blob = b"".join(vint(len(x)) + x for x in payloads)
    for read_size in (1, 3, 64, 1 << 20):
        calls.clear()
        r = StreamReader(Pieces(split(blob, range(0, len(blob), 5))),
                         errors="utf8pfx-test-count-stream", read_size=read_size)
        assert r.read_strings() == ["ok", "?1", "fine", "?2", "x" * 300]
        assert calls == [b"\xff", b"\xfe"]


# ----------------------------------------------------- buffers and state

def test_feed_keeps_no_export():
    b = bytearray(b"\x03abc\x02d")
    r = StreamReader()
    r.feed(b)
    b.extend(b"x")  # BufferError if the reader still held an export
    b[:] = b"e"
    r.feed(memoryview(b))
    b.clear()
    assert list(r) == ["abc", "de"]


def test_state_closed_and_with():
    r = StreamReader()
    assert (r.position, r.buffered, r.closed) == (0, 0, False)
    r.feed(b"\x02ab\x01")
    assert (r.position, r.buffered) == (0, 4)
    assert r.read_string() == "ab"
    assert (r.position, r.buffered) == (3, 1)
    with pytest.raises(AttributeError):
        r.position = 0
    with r as same:
        assert same is r
    assert r.closed
    for call in (lambda: r.position, lambda: r.buffered,
                 lambda: r.feed(b"x"), r.feed_eof, r.read_string, r.read_strings,
                 r.read_bytes, r.read_vint, lambda: r.read_raw(1), r.skip_string,
                 lambda: next(r), lambda: r.batches(2), lambda: r.__enter__()):
        with pytest.raises(ValueError, match="closed"):
            call()
    r.close()  # twice is fine
    assert "closed" in repr(r)


def test_modes_and_arguments():
    r = StreamReader()
    r.feed_eof()
    with pytest.raises(ValueError, match="after feed_eof"):
        r.feed(b"x")
    p = StreamReader(io.BytesIO(b"\x01a"))
    with pytest.raises(io.UnsupportedOperation):
        p.feed(b"x")
    with pytest.raises(ValueError):  # UnsupportedOperation is a ValueError too
        p.feed_eof()
    assert list(p) == ["a"]
    with pytest.raises(TypeError, match="readinto\\(\\) or read\\(\\)"):
        StreamReader(object())
    with pytest.raises(ValueError, match="read_size"):
        StreamReader(read_size=0)
    with pytest.raises(ValueError, match="max_record"):
        StreamReader(max_record=-1)
    with pytest.raises(ValueError):
        StreamReader(prefix="nope")
    with pytest.raises(LookupError):
        StreamReader(errors="no-such-handler")
    with pytest.raises(TypeError):
        StreamReader(None, None)
    with pytest.raises(TypeError):
        r2 = StreamReader()
        r2.feed("str")
    with pytest.raises(ValueError, match="n must be"):
        StreamReader().batches(0)
    x = StreamReader(prefix="u16be", encoding="mutf-8", errors="replace", strict_vint=True)
    assert (x.prefix, x.encoding, x.errors, x.strict_vint) == ("u16be", "mutf-8", "replace",
                                                               True)
    with pytest.raises(TypeError):
        StreamReader(io.BytesIO(b"")).read_strings("1")


def test_source_returning_bad_values():
    class Liar:
        def readinto(self, view):
            return len(view) + 1

    with pytest.raises(OSError, match="readinto"):
        list(StreamReader(Liar(), read_size=4))

    class Text:
        def read(self, n):
            return "text"

    with pytest.raises(TypeError):
        list(StreamReader(Text()))

    class Keeper:
        """keeps the view it was given: the reader must not be hurt by it."""
        kept = []

        def readinto(self, view):
            self.kept.append(view)
            if len(self.kept) > 3:
                return 0
            view[:2] = b"\x01a"
            return 2

    r = StreamReader(Keeper(), read_size=2)
    assert list(r) == ["a", "a", "a"]
    with pytest.raises(ValueError):
        Keeper.kept[0][0]  # released


# ------------------------------------------------- re-entrancy and threads

def test_reentrant_source_raises_runtimeerror():
    blob = blob_of(["a", "b"], "varint", "utf-8")

    class Reentrant(Pieces):
        seen = []

        def readinto(self, view):
            if not self.seen:
                for call in (r.read_string, r.read_strings, lambda: list(r), r.close,
                             lambda: r.feed(b"x")):
                    try:
                        call()
                    except RuntimeError as e:
                        self.seen.append(str(e))
                # the read-only state answers with what is committed
                self.seen.append((r.position, r.buffered, r.closed))
            return super().readinto(view)

    r = StreamReader(Reentrant([blob]))
    assert list(r) == ["a", "b"]
    assert len(Reentrant.seen) == 6
    assert all("re-entrant" in s for s in Reentrant.seen[:5])
    assert Reentrant.seen[5] == (0, 0, False)

    class Raising(Pieces):
        def readinto(self, view):
            r2.read_string()  # RuntimeError propagates out of the outer call

    r2 = StreamReader(Raising([blob]))
    with pytest.raises(RuntimeError, match="re-entrant"):
        r2.read_string()
    assert not r2.closed and r2.position == 0


def test_state_seen_by_the_source_during_a_call():
    """position stays where the call started; buffered counts what the
    source has given so far, this call's reads included (docs/api.md)."""
    data = bytes([5]) + b"hello"
    seen = []

    class TwoBytes:
        at = 0

        def readinto(self, view):
            seen.append((r.position, r.buffered))
            b = data[self.at:self.at + 2]
            self.at += len(b)
            view[:len(b)] = b
            return len(b)

    r = StreamReader(TwoBytes(), read_size=2)
    assert r.read_string() == "hello"
    assert seen == [(0, 0), (0, 2), (0, 4)]
    assert (r.position, r.buffered) == (6, 0)


def test_reentrant_error_handler():
    def handler(exc):
        r.read_string()
        return ("?", exc.end)

    codecs.register_error("utf8pfx-test-stream-reenter", handler)
    r = StreamReader(errors="utf8pfx-test-stream-reenter")
    r.feed(b"\x02a\xff\x01b")
    with pytest.raises(RuntimeError, match="re-entrant"):
        r.read_string()
    assert r.position == 0
    assert r.read_bytes() == b"a\xff"
    assert r.read_string() == "b"


class Slow(Pieces):
    def readinto(self, view):
        time.sleep(0.0005)  # lets the other thread in, with the GIL released
        return super().readinto(view)


@pytest.mark.parametrize("api", ["iter", "read_strings"])
def test_two_threads_partition_the_records(api):
    xs = ["%06d" % i for i in range(1500)]
    blob = blob_of(xs, "varint", "utf-8")
    r = StreamReader(Slow(split(blob, range(0, len(blob), 37))), read_size=16)
    seen = [[], []]
    errors = []

    def work(k):
        try:
            if api == "iter":
                for x in r:
                    seen[k].append(x)
            else:
                # 1500 records: read_strings(3) at the clean end is the
                # reader's "expected a length prefix" error
                while True:
                    try:
                        seen[k] += r.read_strings(3)
                    except ValueError as e:
                        assert e.record_index == 1500
                        break
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in (0, 1)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    assert sorted(seen[0] + seen[1]) == xs
    for s in seen:
        assert s == sorted(s)  # each thread sees the stream in order


def test_dealloc_frees_and_gc_collects_cycles():
    import gc
    import weakref

    class Src(Pieces):
        pass

    src = Src([b"\x01a" * 10])
    r = StreamReader(src)
    src.reader = r  # a cycle through the source
    ref = weakref.ref(src)
    assert next(r) == "a"
    del r, src
    gc.collect()
    assert ref() is None


def test_index_of_an_argument_may_use_the_reader():
    # n is converted before the call takes the reader: a plain earlier call
    r = StreamReader()
    r.feed(blob_of(["a", "b", "c", "d"], "varint", "utf-8"))

    class N:
        def __index__(self):
            assert r.read_string() == "a"
            return 2

    assert r.read_strings(N()) == ["b", "c"]
    assert r.read_raw(2) == b"\x01d"
