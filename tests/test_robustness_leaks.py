"""Leaks and reference counts: a million mixed writer and reader
operations (BufferWriter, BufferReader, the streams), every error path among them (each exception type the API
raises, custom handlers that raise, iterators that raise mid-batch), with
tracemalloc's traced memory and the process RSS flat afterwards and
sys.getrefcount of the inputs, handlers and error objects unchanged; a read
loop with its errors; writers and readers giving back the references they
held.

UTF8PFX_LEAK_OPS sets the number of operations (default 1,000,000; the
sanitizer run uses fewer and skips the RSS bound: ASan's allocator keeps
freed memory in quarantine).  tests/support/leak_workload.py is the same
loop for valgrind (.ci/steps/25-valgrind.sh).
"""
import gc
import io
import os
import sys
import tracemalloc

import pytest

from utf8pfx import BufferReader, BufferWriter, StreamReader, StreamWriter, decode
from support.leak_workload import CYCLE_OPS, Workload
from support.reference import pfx

SANITIZED = os.environ.get("UTF8PFX_SANITIZED") == "1"
OPS = int(os.environ.get("UTF8PFX_LEAK_OPS", 100_000 if SANITIZED else 1_000_000))


def _rss_kib():
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, ValueError, AttributeError):
        return None


@pytest.mark.slow  # a million operations: CI runs it (pytest -m slow)
def test_a_million_mixed_operations_leak_nothing():
    wl = Workload()
    wl.run(200)  # warm up: caches, interned names, freelists, the writer's capacity
    gc.collect()
    watched = wl.watched()
    refs = [sys.getrefcount(o) for o in watched]
    rss0 = _rss_kib()
    tracemalloc.start()
    try:
        wl.run(20)
        gc.collect()
        traced0, _ = tracemalloc.get_traced_memory()
        cycles = max(1, OPS // CYCLE_OPS)
        wl.run(cycles)
        gc.collect()
        traced1, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    rss1 = _rss_kib()
    assert wl.errors_seen >= set(wl.EXPECTED_ERRORS), set(wl.EXPECTED_ERRORS) - wl.errors_seen
    # a leak of even one small object per cycle would add cycles * 32 bytes
    assert traced1 - traced0 < 64 * 1024, (traced0, traced1, cycles)
    now = [sys.getrefcount(o) for o in watched]
    assert now == refs, [(repr(o)[:40], a, b) for o, a, b in zip(watched, refs, now) if a != b]
    if rss0 is not None and not SANITIZED:
        # tracemalloc's own tables grow with the peak; 16 MiB is far below
        # what a million leaked objects (tens of MiB) would add
        assert rss1 - rss0 < 16 * 1024, (rss0, rss1)


def test_the_probes_see_a_leak():
    """The same bounds fail on a loop that keeps one object per cycle."""
    wl = Workload()
    wl.run(50)
    kept = []
    tracemalloc.start()
    try:
        gc.collect()
        t0, _ = tracemalloc.get_traced_memory()
        # 2000 objects of about 90 bytes each, traced: near three times the
        # bound
        for i in range(2000):
            wl.run(1)
            kept.append(wl.writer.getvalue()[:40] + bytes([i & 0xFF]))
        gc.collect()
        t1, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert t1 - t0 >= 64 * 1024
    s = wl.watched()[0]
    r0 = sys.getrefcount(s)
    kept.append(s)
    assert sys.getrefcount(s) == r0 + 1


def _traced_growth(run, warm, settle, measure):
    """Bytes tracemalloc sees grow over run(measure), after run(warm)
    untraced and run(settle) traced (caches and free lists filled)."""
    run(warm)
    gc.collect()
    tracemalloc.start()
    try:
        run(settle)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        run(measure)
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_no_leak_in_read_loop():
    w = BufferWriter()
    w.write_strings(["short", "héllo wörld", "日本語テキスト", "😀 emoji"] * 50)
    data = w.getvalue()
    bad = pfx(b"x" * 10 + b"\xff")

    sink = io.BytesIO()
    items = ["short", "héllo", "😀"] * 3
    sdata = BufferWriter()
    sdata.write_strings(items)
    sdata = sdata.getvalue()

    def run(k):
        for _ in range(k):
            r = BufferReader(data)
            r.read_strings()
            r.close()
            # the streams: a pull reader, a push reader with a record cut
            # between feeds and its not-now and decode errors, a writer
            # flushing to its sink
            StreamReader(io.BytesIO(sdata), read_size=16).read_strings()
            s = StreamReader()
            s.feed(sdata[:10])
            s.read_strings()
            try:
                s.read_string()
            except BlockingIOError:
                pass
            s.feed(sdata[10:])
            s.feed(bad)
            s.feed_eof()
            try:
                s.read_strings()
            except UnicodeDecodeError:
                pass
            sink.seek(0)
            sink.truncate()
            with StreamWriter(sink, flush_size=64) as sw:
                sw.write_strings(items)
            try:
                decode(bad)
            except UnicodeDecodeError:
                pass
            try:
                decode(b"\x85")
            except ValueError:
                pass

    assert _traced_growth(run, 200, 500, 1000) < 64 * 1024


def test_no_leak_in_stream_writer_arrow():
    # StreamWriter.write_arrow's flushing path: flushes, a bad value after a
    # flush (the rows before it written again), a sink that fails mid-call
    pa = pytest.importorskip("pyarrow")
    arr = pa.array(["héllo", "wörld", "日本語"] * 200)
    bad = pa.array(["x"] * 300 + [None] + ["y"] * 10)

    class FailingSink:
        def __init__(self):
            self.n = 0

        def write(self, b):
            self.n += 1
            if self.n == 2:
                raise OSError("full")
            return len(b)

    def run(k):
        for _ in range(k):
            with StreamWriter(io.BytesIO(), flush_size=256) as sw:
                sw.write_arrow(arr)
                try:
                    sw.write_arrow(bad)
                except ValueError:
                    pass
            sw = StreamWriter(FailingSink(), flush_size=256)
            try:
                sw.write_arrow(arr)
            except OSError:
                pass
            sw.close()

    assert _traced_growth(run, 50, 100, 300) < 64 * 1024


def test_writers_and_readers_release_what_they_hold():
    name = "".join(["surrogate", "pass"])  # a fresh str object, not interned
    data = bytearray(b"\x01a")
    src = io.BytesIO(b"\x01a\x01b")
    sink = io.BytesIO()
    watched = (name, data, src, sink)
    before = [sys.getrefcount(o) for o in watched]
    for _ in range(500):
        w = BufferWriter(16, errors=name)
        w.write_string("x")
        r = BufferReader(data, errors=name)
        r.read_string()
        src.seek(0)
        sr = StreamReader(src, errors=name, read_size=3)
        sr.read_string()  # the rest stays held
        pr = StreamReader(errors=name)
        pr.feed(data)  # a copy: no export of data kept
        pr.read_string()
        sw = StreamWriter(sink, errors=name, flush_size=1)
        sw.write_string("y")
        del w, r, sr, pr, sw  # the StreamWriter not closed: nothing keeps it
    gc.collect()
    assert [sys.getrefcount(o) for o in watched] == before
    data.extend(b"ok")  # no export left behind
