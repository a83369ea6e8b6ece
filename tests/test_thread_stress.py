"""Concurrency: 8 threads share one writer, 8 share one reader.

The package keeps the GIL requirement (README, Guarantees); the few calls
that release it for large bodies hold the object's own lock, so calls on one
object never overlap.  These tests hold for any implementation that makes
each call atomic, and check every record whole.  A tiny switch interval makes the interpreter hand
the GIL over as often as it can.
"""
import sys
import threading

import pytest

from utf8pfx import BufferReader, BufferWriter, decode_all
from reference import ref_encode

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
