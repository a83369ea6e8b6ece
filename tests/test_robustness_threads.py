"""Threads: large bodies run without the GIL and a second thread on the same
object waits; 8 threads share one writer, 8 share one reader.

write_string, encode() and read_string transcode a body of 1 MiB or more
(U8P_NOGIL_MIN) with the GIL released.  These tests show it from Python:

* release: a helper thread that wakes every fraction of a millisecond keeps
  logging timestamps *during* the call (in the middle half of the call's
  window).  The same probe around ``str.encode`` of the same text, which holds
  the GIL, logs none there: the probe can fail.
* waiting: while thread A is inside a GIL-free write_string / read_string,
  thread B calls methods of the same object.  B must come back only after A's
  call has finished and must see the state after it (never the length or
  position from before, never a half-written body, no error).

No timings are asserted beyond the ordering of events; the text is sized so
one call takes tens of milliseconds, far above the switch interval used.

Stress: the package keeps the GIL requirement (README, Guarantees); the few
calls that release it for large bodies hold the object's own lock, so calls
on one object never overlap.  The stress tests hold for any implementation
that makes each call atomic, and check every record whole.  A tiny switch
interval makes the interpreter hand the GIL over as often as it can.

Shared bytes: a buffer that another thread writes while it is read (a
bytearray, an mmap, a view a stream's source kept) never makes the reader
write outside a str or hand out a malformed one: each read returns some mix
of the old and the new bytes, or raises.  Checked in child processes, each
racing a writer against one kind of read for a second; the same children
crash (heap corruption) where the decoders size a str by one pass over the
bytes and fill it in another.

StreamReader: threads share one reader pulling from a pipe, or pushed by
a feeder thread, each thread with its own kind of call; every record comes
once, each call's records in stream order.  A thread waiting for another's
call on the same reader releases the GIL (checked in a child process: a
waiter holding it would hang, which the child's timeout turns into a
failure).
"""
import os
import random
import subprocess
import sys
import threading
import time

import pytest

import utf8pfx
from utf8pfx import BufferReader, BufferWriter, decode_all
from support.reference import ref_encode
from support.subproc import run_python

BIG = 1 << 20  # U8P_NOGIL_MIN


def _sized(make, call, target=0.04, limit=1 << 25, control=None):
    """The smallest text from make(n), n doubling from 2**21, whose call (and
    control call, if given) takes >= target seconds (or n == limit)."""
    n = 1 << 21
    while True:
        s = make(n)
        took = []
        for f in (call, control):
            if f is not None:
                t = time.perf_counter()
                f(s)
                took.append(time.perf_counter() - t)
        if min(took) >= target or n >= limit:
            return s
        n *= 2


class _Probe:
    """A thread that logs perf_counter() every ~0.2 ms while it can run."""

    def __init__(self):
        self.stamps = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            self.stamps.append(time.perf_counter())
            time.sleep(0.0002)

    def __enter__(self):
        self._t.start()
        while not self.stamps:
            time.sleep(0.001)
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()

    def middle(self, t0, t1):
        a, b = t0 + (t1 - t0) / 4, t1 - (t1 - t0) / 4
        return sum(1 for x in self.stamps if a <= x <= b)


@pytest.fixture
def fast_switch():
    old = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    yield
    sys.setswitchinterval(old)


def _stamps_during(call, s):
    with _Probe() as p:
        time.sleep(0.005)
        t0 = time.perf_counter()
        call(s)
        t1 = time.perf_counter()
    return p.middle(t0, t1)


def _released(call, control, s, attempts=6, more=20):
    """(most stamps in the middle of `call`, fewest in the middle of
    `control`) over a few tries, stopping once both are clear: a loaded
    machine may deschedule the probe during one call, or the caller right
    before one control call (the GIL handed to the probe between reading
    the clock and calling, and taken back late, puts stamps into a short
    control's window).  While either is still unclear after `attempts`,
    up to `more` tries are made: on a busy machine (a sanitizer build,
    another test process on the other core) a clear pair takes longer to
    come by, and a few more tries cost tenths of a second."""
    got, ctl = 0, None
    for _ in range(attempts + more):
        got = max(got, _stamps_during(call, s))
        c = _stamps_during(control, s)
        ctl = c if ctl is None else min(ctl, c)
        if got >= 1 and ctl == 0:
            break
    return got, ctl


TEXTS = {
    "ascii": lambda n: "a" * n,
    "ucs1": lambda n: "é" * n,
    "ucs2": lambda n: "жx" * (n // 2),
    "ucs4": lambda n: "ab😀" * (n // 3),
}


@pytest.mark.parametrize("kind", sorted(TEXTS))
def test_write_string_releases_the_gil(kind, fast_switch):
    s = _sized(TEXTS[kind], lambda s: utf8pfx.BufferWriter().write_string(s), control=str.encode)
    got, ctl = _released(lambda s: utf8pfx.BufferWriter().write_string(s), lambda s: s.encode(), s)
    assert ctl == 0, "the probe logged while str.encode held the GIL: it cannot tell"
    assert got >= 1, f"another thread made no progress during write_string ({kind})"


@pytest.mark.parametrize("kind", ["ascii", "ucs2", "ucs4"])
def test_encode_releases_the_gil(kind, fast_switch):
    s = _sized(TEXTS[kind], utf8pfx.encode, control=str.encode)
    got, ctl = _released(utf8pfx.encode, lambda s: s.encode(), s)
    assert ctl == 0
    assert got >= 1, f"another thread made no progress during encode() ({kind})"


def _record_to_read(kind):
    """(text, its record, its UTF-8): a text whose read and decode both take
    long enough for the probe to tell."""
    s = _sized(
        TEXTS[kind],
        lambda s: utf8pfx.BufferReader(utf8pfx.encode(s)).read_string(),
        control=lambda s: s.encode().decode(),
    )
    return s, utf8pfx.encode(s), s.encode()


@pytest.mark.parametrize("kind", ["ascii", "ucs2", "ucs4"])
def test_read_string_releases_the_gil(kind, fast_switch):
    s, data, body = _record_to_read(kind)
    got, ctl = _released(
        lambda _: utf8pfx.BufferReader(data).read_string(), lambda _: body.decode(), s
    )
    assert ctl == 0
    assert got >= 1, f"another thread made no progress during read_string ({kind})"


_STREAM_CALLS = {
    "read_string": lambda r: r.read_string(),
    "read_strings": lambda r: r.read_strings(1)[0],  # the list builder
    "batches": lambda r: next(r.batches(1))[0],
}


@pytest.mark.parametrize("call", sorted(_STREAM_CALLS))
@pytest.mark.parametrize("kind", ["ucs2", "ucs4"])
def test_stream_reader_releases_the_gil_on_a_big_record(kind, call, fast_switch):
    """A StreamReader decodes a record of 1 MiB or more without the GIL too,
    alone or in a list.  The readers are fed before the timed calls (a feed
    is a copy, made with the GIL), so the call's middle half is the
    decode."""
    s, data, body = _record_to_read(kind)
    readers = []
    for _ in range(6):
        r = utf8pfx.StreamReader()
        r.feed(data)
        readers.append(r)

    out = []
    read = _STREAM_CALLS[call]
    got, ctl = _released(lambda _: out.append(read(readers.pop())), lambda _: body.decode(), s)
    assert out and all(x == s for x in out)
    assert ctl == 0
    assert got >= 1, f"another thread made no progress during StreamReader.{call} ({kind})"


def test_write_strings_keeps_the_gil(fast_switch):
    """Only the three single-body calls release the GIL: write_strings of
    strings just under 1 MiB holds it throughout (the probe logs nothing in
    the middle of the call)."""
    items = ["ж" * ((BIG // 2) - 1)] * 24
    got = min(
        _stamps_during(lambda L: utf8pfx.BufferWriter().write_strings(L), items)
        for _ in range(3)
    )
    assert got == 0


def _in_thread(fn):
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # pragma: no cover - reported below
            out["error"] = e
        out["done"] = time.perf_counter()

    t = threading.Thread(target=run)
    return t, out


def _race(setup, attempts=3):
    """setup() gives (fa, fb, ok).  Runs fa() in thread A and, once A is
    about to call, fb() in thread B after a short sleep (A is then inside its
    call of tens of ms).  Returns (A's result, B's result) of the first
    attempt where ok(a, b) held (B did not run before A's call began: a
    loaded machine can delay A), else of the last attempt."""
    for _ in range(attempts):
        fa, fb, ok = setup()
        started = threading.Event()

        def run_a():
            started.set()
            return fa()

        def run_b():
            started.wait()
            time.sleep(0.003)
            return fb()

        a, ra = _in_thread(run_a)
        b, rb = _in_thread(run_b)
        a.start()
        b.start()
        a.join()
        b.join()
        assert "error" not in ra and "error" not in rb, (ra, rb)
        if ok(ra["value"], rb["value"]):
            break
    return ra["value"], rb["value"]


@pytest.mark.parametrize("prefix", ["varint", "u32le"])
def test_writer_other_thread_waits(prefix, fast_switch):
    s = _sized(TEXTS["ucs2"], lambda s: utf8pfx.BufferWriter(prefix=prefix).write_string(s), 0.04)
    big = utf8pfx.encode(s, prefix=prefix)
    head = utf8pfx.encode("head", prefix=prefix)

    def setup():
        w = utf8pfx.BufferWriter(prefix=prefix)
        w.write_string("head")

        def other():  # B: a look, a small write, a copy
            return len(w), w.write_string("x"), w.getvalue()

        return (lambda: w.write_string(s)), other, (lambda a, b: b[0] != len(head))

    got, (seen_len, small, value) = _race(setup)
    assert got == len(big)
    # B waited: its first look came after A's body was committed, and its own
    # write landed after it (without the lock it would see len == 5 and write
    # into the bytes A was filling)
    assert seen_len == len(head) + len(big)
    assert value == head + big + utf8pfx.encode("x", prefix=prefix)
    assert small == len(utf8pfx.encode("x", prefix=prefix))


def test_writer_buffer_export_waits(fast_switch):
    s = _sized(TEXTS["ucs4"], lambda s: utf8pfx.BufferWriter().write_string(s), 0.04)

    def setup():
        w = utf8pfx.BufferWriter()

        def other():
            with memoryview(w) as m:
                return bytes(m)

        return (lambda: w.write_string(s)), other, (lambda a, b: b != b"")

    _, view = _race(setup)
    assert view == utf8pfx.encode(s)


def test_reader_other_thread_waits(fast_switch):
    s = _sized(TEXTS["ucs2"], lambda s: utf8pfx.BufferReader(utf8pfx.encode(s)).read_string(), 0.04)
    data = utf8pfx.encode(s) + utf8pfx.encode("tail")

    def setup():
        r = utf8pfx.BufferReader(data)

        def other():
            pos = r.position
            nxt = r.read_string()
            r.close()  # must not pull the data from under A
            return pos, nxt, r.closed

        return r.read_string, other, (lambda a, b: b[0] != 0)

    got, (pos, nxt, closed) = _race(setup)
    assert got == s
    assert (pos, nxt, closed) == (len(data) - 5, "tail", True)


def test_errors_unchanged_for_big_bodies():
    """A lone surrogate in a big str goes the ordinary road: the same
    exception as CPython, the writer unchanged; every handler byte-exact."""
    s = "ж" * BIG + "\ud800" + "a" * 10
    w = utf8pfx.BufferWriter()
    w.write_string("keep")
    with pytest.raises(UnicodeEncodeError) as ei:
        w.write_string(s)
    with pytest.raises(UnicodeEncodeError) as ce:
        s.encode()
    assert (ei.value.start, ei.value.end, ei.value.reason) == (
        ce.value.start,
        ce.value.end,
        ce.value.reason,
    )
    assert w.getvalue() == b"\x04keep"
    for eh in ("surrogatepass", "replace", "ignore", "backslashreplace"):
        e = s.encode("utf-8", eh)
        w = utf8pfx.BufferWriter(errors=eh)
        w.write_string(s)
        assert w.getvalue() == utf8pfx.encode(s, errors=eh)
        assert w.getvalue().endswith(e) and len(w) == utf8pfx.vint_size(len(e)) + len(e)
    bad = utf8pfx.encode("x" * BIG + "?")[:-1] + b"\xff"
    r = utf8pfx.BufferReader(bad)
    with pytest.raises(UnicodeDecodeError):
        r.read_string()
    assert r.position == 0
    r = utf8pfx.BufferReader(bad, errors="replace")
    assert r.read_string() == "x" * BIG + "\ufffd"


def test_two_writers_two_threads_byte_exact():
    """Two threads, two writers, big and small strings interleaved: each
    writer holds exactly its own records in order."""
    texts = [TEXTS[k](BIG + 3) for k in sorted(TEXTS)] + ["small", "ж", ""]
    writers = [utf8pfx.BufferWriter(), utf8pfx.BufferWriter(prefix="i32be")]

    def work(w):
        for _ in range(3):
            for t in texts:
                w.write_string(t)

    ts = [threading.Thread(target=work, args=(w,)) for w in writers]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for w in writers:
        want = b"".join(utf8pfx.encode(t, prefix=w.prefix) for t in texts) * 3
        assert w.getvalue() == want


# ============================================================ stress: 8 threads

THREADS = 8
ROUNDS = 1500


def _texts(tid):
    # every storage kind, a length that crosses the one-pass / counted paths
    return ["t%d-%d-%s" % (tid, i, "\u00e9\u20ac\U0001F600"[i % 3] * (i % 70))
            for i in range(ROUNDS)]


@pytest.fixture
def busy_switching():
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _run(target, n=THREADS):
    errors = []
    barrier = threading.Barrier(n)

    def wrap(tid):
        try:
            barrier.wait()
            target(tid)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append((tid, e))

    ts = [threading.Thread(target=wrap, args=(t,)) for t in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[:3]


def test_eight_threads_share_one_writer(busy_switching):
    w = BufferWriter()

    def work(tid):
        texts = _texts(tid)
        for i, s in enumerate(texts):
            while True:
                try:
                    if i % 3 == 0:
                        w.write_strings([s, s.upper()])
                    else:
                        w.write_string(s)
                    break
                except BufferError:
                    # another thread's view blocks growth: nothing was written
                    continue
            if i % 50 == 0:
                with memoryview(w) as v:  # a view taken mid-run sees whole records
                    decode_all(v)

    _run(work)
    got = decode_all(w)
    # every record whole; each thread's records in its own order
    per = {}
    for s in got:
        per.setdefault(s.split("-")[0].lower(), []).append(s)
    assert sorted(per) == sorted("t%d" % t for t in range(THREADS))
    for tid in range(THREADS):
        want = []
        for i, s in enumerate(_texts(tid)):
            want += [s, s.upper()] if i % 3 == 0 else [s]
        assert per["t%d" % tid] == want
    assert len(w) == sum(len(ref_encode(s)) for s in got)


def test_eight_threads_share_one_reader(busy_switching):
    texts = [s for t in range(THREADS) for s in _texts(t)]
    w = BufferWriter()
    w.write_strings(texts)
    r = BufferReader(w)
    got = [[] for _ in range(THREADS)]
    lock = threading.Lock()

    def work(tid):
        mine = got[tid]
        while True:
            try:
                if tid % 2:
                    xs = r.read_strings(min(3, len(texts)))
                else:
                    xs = [r.read_string()]
            except ValueError:
                # the end: fewer strings left than asked for
                with lock:
                    if r.remaining == 0:
                        return
                    continue
            mine.extend(xs)

    _run(work)
    flat = sorted(s for part in got for s in part)
    assert flat == sorted(texts)  # each string read exactly once, whole
    for part in got:  # and each thread saw them in data order
        idx = [texts.index(s) for s in part]
        assert idx == sorted(idx)
    r.close()
    w.clear()


def test_threads_with_their_own_objects_and_errors(busy_switching):
    """Errors raised in one thread never leak state into another's objects."""
    def work(tid):
        w = BufferWriter(errors="strict" if tid % 2 else "surrogateescape")
        for i in range(200):
            s = "ok%d" % i if i % 5 else "bad\udcff%d" % i
            try:
                w.write_string(s)
            except UnicodeEncodeError as e:
                assert tid % 2 and e.start == 3
        back = decode_all(w, "surrogateescape")
        assert len(back) == (160 if tid % 2 else 200)
    _run(work)


# ====================================================== StreamReader: threads

S_RECORDS = 3000


def _stream_records():
    # each record names its index; every storage kind, some long enough to
    # straddle the small reads and feeds below
    return ["%05d %s" % (i, "\u00e9\u20ac\U0001F600x"[i % 4] * (i % 97)) for i in range(S_RECORDS)]


def _check_calls(calls):
    """calls: per thread, the record lists of its calls.  Every record once,
    each call's records consecutive, each thread's calls in stream order."""
    want = _stream_records()
    flat = sorted(s for part in calls for call in part for s in call)
    assert flat == want
    for part in calls:
        idx = [int(s[:5]) for call in part for s in call]
        assert idx == sorted(idx)
        for call in part:
            ci = [int(s[:5]) for s in call]
            assert ci and ci == list(range(ci[0], ci[0] + len(ci))), ci
    return sum(1 for part in calls if part)


def _shared(scenario):
    """Runs a scenario (which checks every record once and returns how many
    threads got records) until at least two threads took part: whether a
    woken waiter gets the reader before the thread that just left it is the
    scheduler's choice, and one run in a few can leave it all to one."""
    for _ in range(5):
        if scenario() >= 2:
            return
    pytest.fail("in 5 runs, one thread made every call")


def _chunks(blob, seed):
    rnd = random.Random(seed)
    i = 0
    while i < len(blob):
        n = rnd.choice((1, 3, 17, 250, 4096))
        yield blob[i:i + n]
        i += n


def test_threads_share_one_pull_stream_reader_over_a_pipe(busy_switching):
    """A writer thread puts the stream into a pipe in pieces of every size;
    four threads read it through one StreamReader, each with another call."""
    _shared(_pull_over_a_pipe)


def _pull_over_a_pipe():
    records = _stream_records()
    blob = b"".join(utf8pfx.encode(s) for s in records)
    rfd, wfd = os.pipe()
    src = os.fdopen(rfd, "rb", buffering=0)

    def feed():
        with os.fdopen(wfd, "wb", buffering=0) as f:
            for c in _chunks(blob, 1):
                f.write(c)

    r = utf8pfx.StreamReader(src, read_size=64)
    calls = [[] for _ in range(4)]
    end = len(blob)

    def work(tid):
        mine = calls[tid]
        batches = r.batches(5)
        single = False
        while True:
            # between calls the GIL goes to another thread: a woken waiter
            # otherwise often finds the reader taken again by the same thread
            time.sleep(0)
            if single or tid == 0:
                x = next(r, None)
                if x is None:
                    return
                mine.append([x])
                continue
            try:
                if tid == 1:
                    mine.append(r.read_strings(3))
                elif tid == 2:
                    mine.append([r.read_bytes().decode()])
                else:
                    b = next(batches, None)
                    if b is None:
                        return
                    mine.append(b)
            except ValueError as e:
                # the clean end, fewer records left than asked for: the
                # rest (if any) one at a time
                assert e.data_offset == end, e
                single = True

    feeder = threading.Thread(target=feed)
    feeder.start()
    try:
        _run(work, 4)
    finally:
        feeder.join()
        src.close()
    assert r.position == end and r.buffered == 0
    return _check_calls(calls)


def test_threads_share_one_push_stream_reader(busy_switching):
    """One thread feeds the stream in pieces, three read it, each with
    another call; before feed_eof() an empty answer means "not yet"."""
    _shared(_push_with_a_feeder)


def _push_with_a_feeder():
    records = _stream_records()
    blob = b"".join(utf8pfx.encode(s) for s in records)
    r = utf8pfx.StreamReader()
    # two marks around feed_eof(): a reader that raised at the end must have
    # met a feed_eof() already entered, and a reader that saw the call over
    # before its own call knows an empty answer is final
    eof_entered, eof = threading.Event(), threading.Event()
    calls = [[] for _ in range(4)]

    def work(tid):
        if tid == 3:  # the feeder
            for c in _chunks(blob, 2):
                r.feed(c)
            eof_entered.set()
            r.feed_eof()
            eof.set()
            return
        mine = calls[tid]
        single = False
        while True:
            time.sleep(0)
            ended = eof.is_set()  # read before the call: then it sees the end
            try:
                if single or tid == 0:
                    x = next(r, None)  # None: no complete record held now
                    got = [] if x is None else [x]
                elif tid == 1:
                    got = r.read_strings(3)
                else:
                    got = next(r.batches(4), [])
            except ValueError as e:
                assert eof_entered.is_set() and e.data_offset == len(blob), e
                single = True
                continue
            if got:
                mine.append(got)
            if not got:
                if ended:
                    return
                time.sleep(0.0002)

    _run(work, 4)
    assert r.position == len(blob) and r.buffered == 0
    return _check_calls(calls)


_WAITER = r'''
import dis, sys, threading, time
from utf8pfx import StreamReader, encode

inside, go = threading.Event(), threading.Event()

class Source:
    """Holds the reader's first call in its readinto until `go`."""
    def __init__(self):
        self.data = [encode("first") + encode("second")]
    def readinto(self, view):
        if not self.data:
            return 0
        inside.set()
        go.wait()
        d = self.data.pop()
        view[:len(d)] = d
        return len(d)

r = StreamReader(Source())
out = {}

def run_a():
    out["a"] = r.read_string()

def run_b():
    out["b"] = r.read_string()

# the offset of B's call of read_string: a frame inside a C call has its
# f_lasti there
call_at = [i.offset for i in dis.get_instructions(run_b)
           if i.opname.startswith("CALL")][-1]  # CALL_METHOD before 3.11
a = threading.Thread(target=run_a)
b = threading.Thread(target=run_b)
a.start()
inside.wait()  # A is inside its call, in the source's readinto
b.start()
deadline = time.monotonic() + 10
while True:  # until B is inside its own call of read_string
    f = sys._current_frames().get(b.ident)
    if f is not None and f.f_code is run_b.__code__ and f.f_lasti == call_at:
        break
    if time.monotonic() > deadline:
        go.set()
        sys.exit("B was never seen inside its call")
    time.sleep(0.0005)
# B waits for A's call to end.  This thread runs meanwhile: B does not hold
# the GIL while it waits (if it did, nothing below would run and A could not
# finish either)
spins = 0
t0 = time.perf_counter()
while time.perf_counter() - t0 < 0.03:
    spins += 1
f = sys._current_frames().get(b.ident)
still = "b" not in out and f is not None and f.f_lasti == call_at
go.set()
a.join()
b.join()
print(out["a"], out["b"], spins > 0, still)
'''


def test_stream_reader_waiting_thread_releases_the_gil():
    """Thread A is inside a call on a StreamReader (its source blocks); thread
    B calls the same reader and waits.  The main thread keeps running while
    B waits, and B then gets the record after A's.  A waiter holding the GIL
    would hang the child, which the timeout turns into a failure."""
    try:
        p = run_python(["-c", _WAITER], timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("the child hung: a thread waiting for the reader holds the GIL")
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout.decode().split() == ["first", "second", "True", "True"]


# A child racing a writer against one kind of read (see the docstring at
# the top); it prints "ok errors bad": reads that gave a mix of the two
# texts, that raised, and that gave anything else.
_SHARED_CHILD = r'''
import os, sys, tempfile, threading, time
import utf8pfx

mode, seconds = sys.argv[1], float(sys.argv[2])
sys.setswitchinterval(1e-6)
CJK, ASCII = "中", "a"
stop = threading.Event()
counts = {"ok": 0, "error": 0, "bad": 0}


def check(s, nbytes):
    # a snapshot of bytes being rewritten may mix the two texts, never
    # anything else, and a str's UTF-8 is as long as the payload was
    if set(s) <= {CJK, ASCII} and len(s.encode()) == nbytes:
        counts["ok"] += 1
    else:
        counts["bad"] += 1


def run(call):
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        try:
            call()
        except (ValueError, RuntimeError):  # UnicodeDecodeError included
            counts["error"] += 1


def python_flipper(target, start, size, region):
    # slice assignments of equal length: the bytearray is never resized
    a, c = b"a" * region, CJK.encode() * (region // 3)
    def loop():
        j, regions = 0, size // region
        while not stop.is_set():
            o = start + (j % regions) * region
            target[o:o + region] = a if (j // regions) % 2 == 0 else c
            j += 7
    return threading.Thread(target=loop, daemon=True)


def kernel_flipper(mv, *versions):
    # os.preadv releases the GIL: the kernel writes into the buffer while
    # the main thread holds the GIL inside a read
    fd, path = tempfile.mkstemp()
    os.write(fd, b"".join(versions))
    os.unlink(path)
    def loop():
        while not stop.is_set():
            for i in range(len(versions)):
                os.preadv(fd, [mv], i * len(versions[0]))
    return threading.Thread(target=loop, daemon=True)


if mode in ("big", "stream"):
    # one record of 3 MiB: scanned and transcoded without the GIL
    N = 3 << 20
    rec = utf8pfx.encode(CJK * (N // 3))
    hdr = len(rec) - N
    if mode == "big":
        ba = bytearray(rec)
        flip = python_flipper(ba, hdr, N, 3 << 12)
        call = lambda: check(utf8pfx.BufferReader(ba).read_string(), N)
    else:
        kept = [bytearray(len(rec))]  # what the source's kept view writes into

        class Source:
            def __init__(self):
                self.done = False

            def readinto(self, view):
                if self.done:
                    return 0
                self.done = True
                view[:len(rec)] = rec
                kept[0] = view[:]  # a slice outlives the view's release
                return len(rec)

        class Kept:  # the flipper writes through whatever the source kept
            def __setitem__(self, key, value):
                kept[0][key] = value
        flip = python_flipper(Kept(), hdr, N, 3 << 12)
        call = lambda: check(utf8pfx.StreamReader(Source(), read_size=len(rec)).read_string(), N)
elif mode == "held":
    # records of 3 KiB, decoded with the GIL held (scan, then transcode)
    M = 3 << 10
    x = utf8pfx.encode(CJK * (M // 3))
    y = utf8pfx.encode(ASCII * M)
    ba = bytearray(x)
    flip = kernel_flipper(memoryview(ba), x, y)
    def call():
        check(utf8pfx.BufferReader(ba).read_string(), M)
elif mode == "arrow":
    # read_strings_arrow(n) sums the lengths first, then copies: prefixes
    # rewritten in between must not make it copy more than it sized
    K = 100000
    x, y = b"\x01a" * K, b"\x05a" * K
    ba = bytearray(x)
    flip = kernel_flipper(memoryview(ba), x, y)
    def call():
        utf8pfx.BufferReader(ba).read_strings_arrow(K // 3)
        counts["ok"] += 1
flip.start()
run(call)
stop.set()
flip.join()
print(counts["ok"], counts["error"], counts["bad"])
'''


@pytest.mark.parametrize("mode", ["big", "stream", "held", "arrow"])
def test_reads_of_bytes_another_thread_writes(mode):
    """big: a 3 MiB record of a bytearray, decoded without the GIL while a
    thread rewrites it; stream: the same through a StreamReader whose
    source kept a slice of the view it filled, and writes through it;
    held: 3 KiB records decoded with the GIL held while the kernel writes
    the bytearray (os.preadv releases the GIL); arrow: read_strings_arrow(n)
    while its prefixes are rewritten between its walk and its copy."""
    if mode in ("held", "arrow") and not hasattr(os, "preadv"):
        pytest.skip("os.preadv: POSIX only")
    p = run_python(["-c", _SHARED_CHILD, mode, "1"], timeout=60)
    assert p.returncode == 0, f"the child died ({p.returncode}): {p.stderr.decode()[-2000:]}"
    ok, errors, bad = map(int, p.stdout.split())
    assert bad == 0, (ok, errors, bad)
    assert ok + errors > 0, "the child read nothing"
