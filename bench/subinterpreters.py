"""Two isolated subinterpreters encoding at once, against one.

    python -m bench.subinterpreters [--rounds N]

Needs CPython 3.13+ (the private ``_interpreters`` module).  Each worker
runs its own isolated interpreter (its own GIL) and writes the same text
into a BufferWriter: 1 MiB bodies (transcoded without the GIL in any case)
and 16 KiB bodies (under the GIL-free threshold: only a per-interpreter
GIL lets two of them run at once).  The text is the two-thread section's
(bench.short.thread_body: Russian man pages from the corpus, or generated
Cyrillic words): real text, so that no placement of the str against the
writer's buffer makes one worker's time stand out (4K aliasing, see the
docstring there).  Printed: the wall time of one
interpreter doing the work, of two doing twice the work side by side, and
the speed-up (2 x one / two; 2.0 is perfect on two cores).  The control row
runs the same two workers as two threads of one interpreter.
"""
import argparse
import os
import sys
import tempfile
import threading
import time

WORK = r'''
import time, utf8pfx
with open(BODY_FILE, encoding="utf-8") as f:
    body = f.read()[: BODY_BYTES // 2]
w = utf8pfx.BufferWriter(4 * BODY_BYTES)
t0 = time.perf_counter()
for _ in range(ROUNDS):
    w.clear()
    for _ in range(PER_ROUND):
        w.write_string(body)
        if len(w) > 2 * BODY_BYTES:
            w.clear()
'''

HERE = os.path.dirname(os.path.abspath(__file__))
if __package__ in (None, ""):           # python bench/subinterpreters.py
    # after the installed packages: utf8pfx is the one installed (as in the
    # interpreters it starts), bench the checkout's
    sys.path.append(os.path.dirname(HERE))


def _code(body_file, body_bytes, rounds):
    per_round = max(1, (8 << 20) // body_bytes)
    head = "BODY_FILE = %r\nBODY_BYTES = %d\nROUNDS = %d\nPER_ROUND = %d\n" % (
        body_file, body_bytes, rounds, per_round)
    return head + WORK


def _run_interps(interps, code):
    import _interpreters

    errors = []

    def one(i):
        err = _interpreters.exec(i, code)
        if err is not None:
            errors.append(err.formatted)

    threads = [threading.Thread(target=one, args=(i,)) for i in interps]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    if errors:
        raise SystemExit("\n".join(errors))
    return elapsed


def _run_threads(n, code):
    threads = [threading.Thread(target=exec, args=(code, {})) for _ in range(n)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = ap.parse_args(argv)
    try:
        import _interpreters
    except ImportError:
        print("needs CPython 3.13+ (_interpreters); this is %s" % sys.version.split()[0])
        return 0
    import utf8pfx
    from bench.short import thread_body

    body, source = thread_body(1)
    fd, body_file = tempfile.mkstemp(suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(body)
    print("utf8pfx isa()=%s, CPython %s; text: %s" % (utf8pfx.isa(), sys.version.split()[0],
                                                     source))
    interps = [_interpreters.create("isolated") for _ in range(2)]
    try:
        _run_interps(interps, "import utf8pfx")  # imports out of the timing
        print("%-34s %10s %10s %9s" % ("workload", "one (s)", "two (s)", "speed-up"))
        for size in (1 << 20, 16 << 10):
            code = _code(body_file, size, args.rounds)
            one = min(_run_interps(interps[:1], code) for _ in range(args.repeat))
            two = min(_run_interps(interps, code) for _ in range(args.repeat))
            label = "%d KiB bodies, isolated interps" % (size >> 10)
            print("%-34s %10.3f %10.3f %8.2fx" % (label, one, two, 2 * one / two))
            one_t = min(_run_threads(1, code) for _ in range(args.repeat))
            two_t = min(_run_threads(2, code) for _ in range(args.repeat))
            label = "%d KiB bodies, threads (control)" % (size >> 10)
            print("%-34s %10.3f %10.3f %8.2fx" % (label, one_t, two_t, 2 * one_t / two_t))
    finally:
        for i in interps:
            _interpreters.destroy(i)
        os.unlink(body_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
