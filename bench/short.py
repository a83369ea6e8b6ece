"""Short strings at the cost of a call: per-string cost of
utf8pfx's writer and reader on real names, beside the call floors and the
general-purpose serializers, and the two-thread speed-up of large bodies.

    python -m bench --short [--quick|--full] [--json PATH] [--no-threads]

Strings: every 19th name of ../shared/corpus/cldr_names.tsv (or
$UTF8PFX_CORPUS_DIR), split by PEP 393 storage kind (ascii, ucs1, ucs2,
ucs4) and all together (mixed, in file order).  Every timed pass gets fresh
`str` objects (timing.fresh_copies: no cached UTF-8, no hash), made before
the clock starts: first touch, as users meet new data.  Rows of one table run
interleaved round by round (order rotated) in one process, clock = this
thread's CPU time; tables give the median ns per string and ratios of medians.

Rows, one call per string:
  len        floor: for s in L: len(s)
  count      floor: for s in L: count(s), count = ().count (a bound C method,
             METH_O like write_string, that never reads the str)
  get        for s in L: get(s), get = {}.get (the targets' "do-nothing bound
             C method"; it hashes the fresh str, so it costs more than count)
  one        for s in L: ws(s), ws = w.write_string (writer cleared, capacity kept)
  encode     for s in L: s.encode()
  py         pure Python: s.encode(), a varint loop, bytearray +=
Rows, one call per list:
  batch      w.clear(); w.write_strings(L)
  pb         protobuf (upb): m = Strings(); m.s.extend(L); m.SerializeToString()
  msgpack    msgpack.packb(L)
  msgspec    msgspec.msgpack.Encoder().encode(L)   (encoder made once)
  orjson     orjson.dumps(L)
  ormsgpack  ormsgpack.packb(L)
Reader rows (input serialized once per table, before timing):
  read       BufferReader(blob).read_strings()
  r_msgpack  msgpack.unpackb(packed)
  r_msgspec  msgspec.msgpack.Decoder(list[str]).decode(packed)
  r_pb       list(Strings.FromString(pb).s)   (strs made, as read_strings does)
  r_orjson   orjson.loads(json)
Peers that are not installed are left out (pip install .[bench]).

Threads: one thread writes a large str (1 MiB of UCS2 storage, where
write_string starts to release the GIL: Russian text from the corpus's man
pages, or generated Cyrillic words; see thread_body) 192 times into a
writer; then two
threads each do the same into their own writer at the same time.
Speed-up = 2 x one-thread wall time / two-thread wall time (2.0 is perfect
on two free cores; it needs the GIL released during the encode).  Two
patterns: writers reused (cleared before each str: the bytes stay in the
cache; the target's) and appended (about 192 MiB streamed to memory per
thread).
Controls the same way: hashlib.sha256 (compute-bound) and, with numpy,
numpy.copyto of the same bytes in each pattern (memory-bound, like the
writes).
"""
import gc
import json
import os
import platform
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(HERE))

from bench import mode_parser, package_module, timing, workloads  # noqa: E402
from bench.report import cpu_model  # noqa: E402

MODES = {"quick": {"rounds": 9, "warmup": 1, "passes": 3},
         "full": {"rounds": 25, "warmup": 2, "passes": 5}}
KINDS = ("ascii", "ucs1", "ucs2", "ucs4", "mixed")
CALL_ROWS = ("len", "count", "get", "one", "encode", "py")
BATCH_ROWS = ("batch", "pb", "msgpack", "msgspec", "orjson", "ormsgpack")
READ_ROWS = ("read", "r_msgpack", "r_msgspec", "r_pb", "r_orjson")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def corpus_names(stride=19):
    base = workloads.cldr_names()
    return None if base is None else base[::stride]


def _try(mod):
    try:
        return __import__(mod, fromlist=["_"])
    except ImportError:
        return None


def writer_rows(mod, L):
    """utf8pfx's two writer rows over list L for the build `mod` (the
    package module): one write_string per string, and write_strings; each
    on its own writer, sized by one pass over L and cleared before a run."""
    w = mod.BufferWriter()
    w.write_strings(L)  # capacity for one pass, kept by clear()
    wb = mod.BufferWriter()
    wb.write_strings(L)

    def one(L):
        w.clear()
        ws = w.write_string
        for s in L:
            ws(s)

    def batch(L):
        wb.clear()
        wb.write_strings(L)

    return one, batch


def writers(L):
    """{row: run(list)} for the writer table of list L."""
    import utf8pfx

    r_one, r_batch = writer_rows(utf8pfx, L)

    def r_len(L):
        for s in L:
            len(s)

    count = ().count

    def r_count(L):
        for s in L:
            count(s)

    get = {}.get

    def r_get(L):
        for s in L:
            get(s)

    def r_encode(L):
        for s in L:
            s.encode()

    rows = {"len": r_len, "count": r_count, "get": r_get, "one": r_one,
            "encode": r_encode, "py": package_module("_peers").py_write, "batch": r_batch}
    try:
        from bench.approaches import _pb_class
        cls = _pb_class()

        def r_pb(L):
            m = cls()
            m.s.extend(L)
            return m.SerializeToString()
        rows["pb"] = r_pb
    except ImportError:
        pass
    mp = _try("msgpack")
    if mp:
        rows["msgpack"] = lambda L: mp.packb(L)
    ms = _try("msgspec")
    if ms:
        enc = ms.msgpack.Encoder()
        rows["msgspec"] = enc.encode
    oj = _try("orjson")
    if oj:
        rows["orjson"] = oj.dumps
    om = _try("ormsgpack")
    if om:
        rows["ormsgpack"] = om.packb
    return rows


def readers(L):
    """{row: (run(data), data)} for the reader table of list L."""
    import utf8pfx

    w = utf8pfx.BufferWriter()
    w.write_strings(L)
    blob = w.getvalue()
    rows = {"read": (lambda b: utf8pfx.BufferReader(b).read_strings(), blob)}
    mp = _try("msgpack")
    if mp:
        rows["r_msgpack"] = (lambda b: mp.unpackb(b), mp.packb(L))
    ms = _try("msgspec")
    if ms:
        dec = ms.msgpack.Decoder(list)
        rows["r_msgspec"] = (dec.decode, ms.msgpack.encode(L))
    try:
        from bench.approaches import _pb_class
        cls = _pb_class()
        m = cls()
        m.s.extend(L)
        rows["r_pb"] = (lambda b: list(cls.FromString(b).s), m.SerializeToString())
    except ImportError:
        pass
    oj = _try("orjson")
    if oj:
        rows["r_orjson"] = (oj.loads, oj.dumps(L))
    for k, (run, data) in rows.items():
        got = run(data)
        if list(got) != L:
            raise SystemExit(f"bench.short: {k} did not give back the list")
    return rows


def check_writers(rows, L):
    import utf8pfx

    want = b"".join(utf8pfx.encode(s) for s in L)
    assert bytes(rows["py"](L)) == want
    rows["one"](L)
    rows["batch"](L)
    # the writers are closures over their BufferWriter: check through them
    w = utf8pfx.BufferWriter()
    w.write_strings(L)
    assert w.getvalue() == want


def time_rows(rows, L, mode, fresh):
    """{row: [ns per string, per round]}; each sample is `passes` passes,
    each over its own input made just before its clock starts (fresh strs
    for the writer rows, so every pass is a first touch of new objects that
    the copy has just brought into the cache, as a just-parsed list is)."""
    clock = time.thread_time_ns
    n = len(L)
    keys = list(rows)
    out = {k: [] for k in keys}
    passes = mode["passes"]
    for rnd in range(mode["warmup"] + mode["rounds"]):
        k0 = rnd % len(keys)
        for k in keys[k0:] + keys[:k0]:
            run, data = rows[k]
            took = 0
            for _ in range(passes):
                x = fresh(data)
                gc.disable()
                t0 = clock()
                run(x)
                t1 = clock()
                gc.enable()
                took += t1 - t0
                del x
            if rnd >= mode["warmup"]:
                out[k].append(took / (passes * n))
    return out


def med(xs):
    return statistics.median(xs)


def run_tables(mode, L_all):
    storage_kind = package_module("_reference").storage_kind
    by = {k: [] for k in KINDS}
    for s in L_all:
        by[storage_kind(s)].append(s)
    by["mixed"] = list(L_all)
    res = {}
    for kind in KINDS:
        L = by[kind]
        if not L:
            continue
        w = writers(L)
        check_writers(w, L)
        wrows = {k: (f, L) for k, f in w.items()}
        log(f"  {kind}: {len(L)} names, writer rows ...")
        t_w = time_rows(wrows, L, mode, timing.fresh_copies)
        log(f"  {kind}: reader rows ...")
        r = readers(L)
        t_r = time_rows(r, L, mode, lambda b: b)
        res[kind] = {"n": len(L), "cps": sum(map(len, L)) / len(L),
                     "ns": {k: med(v) for k, v in {**t_w, **t_r}.items()},
                     "spread": {k: (statistics.quantiles(v, n=4)[2] - statistics.quantiles(v, n=4)[0])
                                / 2 / med(v) * 100 if len(v) >= 4 and med(v) else 0.0
                                for k, v in {**t_w, **t_r}.items()}}
    return res


def _one_then_two(work, reps):
    """reps rounds of work(0) alone, then work(0) and work(1) in two threads
    at once: the medians of the one-thread and two-thread wall times and of
    the process CPU time / wall time while both ran (cores busy)."""
    one, two, cores = [], [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        work(0)
        one.append(time.perf_counter() - t0)
        ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        c0 = time.process_time()
        t0 = time.perf_counter()
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        two.append(time.perf_counter() - t0)
        cores.append((time.process_time() - c0) / two[-1])
    return med(one), med(two), med(cores)


def thread_body(mib=1, corpus_dir=None):
    """(str, source): mib MiB of UCS2 storage (mib << 19 code points, the
    size from which write_string releases the GIL) of Russian text: the
    corpus's translated man-page paragraphs (manpage_paragraphs.tsv, "ru")
    joined and repeated, or, where the corpus is absent, generated words of
    Cyrillic letters between spaces and punctuation.

    Not one letter repeated: a body whose UTF-8 is byte for byte as long as
    its storage (every code point U+0080..U+07FF in UCS2) keeps the
    encoder's loads and stores a fixed distance apart, and where that
    distance modulo 4096 falls in a bad range (it depends on where the str
    and the writer's buffer happen to be allocated) loads wait on stores
    they only seem to depend on (4K aliasing): the one-thread time then
    depends on where the allocator put the two buffers, and a slow one-thread
    run makes the two-thread speed-up read high.  Real text has spaces and
    punctuation: the distance drifts, and no placement stands out from the
    noise (README, FAQ)."""
    n = mib << 19
    corpus_dir = corpus_dir or os.environ.get("UTF8PFX_CORPUS_DIR", workloads.CORPUS_DIR)
    path = os.path.join(corpus_dir, "manpage_paragraphs.tsv")
    paras = []
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            paras = [ln.rstrip("\n").split("\t", 1)[1] for ln in f
                     if ln.startswith("ru\t")]
        paras = [p for p in paras if p and max(p) < "\U00010000"]
    if paras:
        text, source = "\n".join(paras), "ru man-page paragraphs of the corpus"
    else:
        import random
        rnd = random.Random(19)
        words = []
        # a few thousand words, repeated below like the corpus text: the
        # drift needs spaces and punctuation, not a body with no period
        for _ in range(8192):
            words.append("".join(chr(0x430 + rnd.randrange(32))
                                 for _ in range(rnd.randint(2, 11))))
            words.append(rnd.choice((" ", " ", " ", " ", ", ", ". ")))
        text, source = "".join(words), "generated Cyrillic words (no corpus)"
    body = (text * (n // len(text) + 1))[:n]
    if max(body) < "\u0100":  # keep it UCS2 whatever the text
        body = body[:-1] + "\u0416"
    return body, source


def threads_speedup(mib=1, reps=15):
    """Two threads, two writers, each writing the same large str (mib MiB
    of UCS2 storage of Russian text, thread_body; 1 MiB is where
    write_string starts to release the GIL) k times, in two patterns:
      reuse   the writer cleared before each body: source and destination
              stay in the cache, so the figure shows what releasing the GIL
              gives (the target's pattern);
      append  k bodies appended to one writer (k MiB, pages touched first):
              streams k MiB per thread to memory, so on a machine whose
              memory two cores share it shows the memory's limit.
    Each beside numpy.copyto of the same bytes in the same pattern (it
    releases the GIL too; None without numpy), and hashlib.sha256 (compute
    bound) once: what two threads can get on this machine right now."""
    import utf8pfx

    k = max(192 // mib, 2)
    s, source = thread_body(mib)
    bodies = [(s + "\0")[:-1] for _ in range(2)]
    one_size = len(utf8pfx.encode(s))
    try:
        import numpy as np
    except ImportError:
        np = None
    out = {"mib_per_call": mib, "calls": k, "body": source,
           "utf8_bytes": one_size, "patterns": {}}
    for pattern in ("reuse", "append"):
        reuse = pattern == "reuse"
        size = one_size * (1 if reuse else k)
        ws = [utf8pfx.BufferWriter(size) for _ in range(2)]
        for w, b in zip(ws, bodies):  # touch every page once: no page faults timed
            for _ in range(1 if reuse else k):
                w.write_string(b)

        def work(t):
            w, b = ws[t], bodies[t]
            w.clear()
            for _ in range(k):
                if reuse:
                    w.clear()
                w.write_string(b)

        one, two, cores = _one_then_two(work, reps)
        got = {"one_thread_s": one, "two_threads_s": two, "speedup": 2 * one / two,
               "cores_busy": cores, "copy_speedup": None}
        del ws
        if np is not None:
            srcs = [np.frombuffer(bodies[t].encode(), dtype=np.uint8) for t in range(2)]
            dsts = [np.ones(size, dtype=np.uint8) for _ in range(2)]
            step = srcs[0].size

            def mwork(t):
                src, dst = srcs[t], dsts[t]
                for i in range(k):
                    j = 0 if reuse else i
                    np.copyto(dst[j * step:(j + 1) * step], src)

            mone, mtwo, _ = _one_then_two(mwork, reps)
            got["copy_speedup"] = 2 * mone / mtwo
            del dsts
        out["patterns"][pattern] = got
    import hashlib
    hbufs = [bytes(bodies[t].encode()) * 4 for t in range(2)]

    def hwork(t):
        for _ in range(3):
            hashlib.sha256(hbufs[t]).digest()

    hone, htwo, _ = _one_then_two(hwork, reps)
    out["hashlib_speedup"] = 2 * hone / htwo
    return out


def threads_lines(thr):
    """The two-thread section's report lines."""
    body = f"; {thr['body']}, {thr['utf8_bytes'] / 2**20:.2f} MiB of UTF-8" \
        if "body" in thr else ""
    lines = [f"threads: {thr['calls']} x write_string({thr['mib_per_call']} MiB UCS2{body}) "
             f"per thread, two threads into two writers; control hashlib.sha256 the same "
             f"way: {thr['hashlib_speedup']:.2f}x"]
    for pattern, g in thr["patterns"].items():
        c = g["copy_speedup"]
        lines.append(f"  {pattern}: one thread {g['one_thread_s'] * 1e3:.1f} ms, two threads "
                     f"{g['two_threads_s'] * 1e3:.1f} ms -> speed-up {g['speedup']:.2f}x "
                     f"(process CPU time / wall time while both ran: {g['cores_busy']:.2f} "
                     f"cores)" + ("" if c is None else
                                  f"; memory-bound control, numpy.copyto of the same bytes "
                                  f"in the same pattern: {c:.2f}x"))
    return lines


def fmt_table(res, rows, floor, title):
    lines = [f"### {title}", "",
             "| ns per string | " + " | ".join(res) + " |",
             "|---|" + "--:|" * len(res)]
    for r in rows:
        if not any(r in res[k]["ns"] for k in res):
            continue
        cells = []
        for k in res:
            ns = res[k]["ns"].get(r)
            if ns is None:
                cells.append("-")
            elif floor and r != floor and floor in res[k]["ns"]:
                cells.append(f"{ns:.1f} ({ns / res[k]['ns'][floor]:.2f}x)")
            else:
                cells.append(f"{ns:.1f}")
        lines.append(f"| `{r}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def targets(res, thr):
    out = []

    def chk(ok, text):
        out.append(("MET " if ok else "MISSED ") + text)

    for k, v in res.items():
        ns = v["ns"]
        lim = 1.3 if k == "mixed" else 1.5
        chk(ns["one"] <= lim * ns["count"],
            f"{k}: write_string {ns['one']:.1f} ns <= {lim}x count {ns['count']:.1f} "
            f"({ns['one'] / ns['count']:.2f}x; {ns['one'] / ns['get']:.2f}x {{}}.get, "
            f"{ns['one'] / ns['len']:.2f}x len)")
        chk(ns["encode"] >= 1.5 * ns["one"],
            f"{k}: s.encode() / write_string = {ns['encode'] / ns['one']:.2f}x (>= 1.5x)")
        chk(ns["py"] >= 3 * ns["one"],
            f"{k}: pure Python / write_string = {ns['py'] / ns['one']:.2f}x (>= 3x)")
        if k in ("ascii", "mixed"):
            lim_b = 8 if k == "ascii" else 20
            chk(ns["batch"] <= lim_b, f"{k}: write_strings {ns['batch']:.1f} ns/string (<= {lim_b})")
            for p in ("pb", "msgpack", "msgspec", "orjson"):
                if p in ns:
                    chk(ns[p] >= 2 * ns["batch"],
                        f"{k}: {p} / write_strings = {ns[p] / ns['batch']:.2f}x (>= 2x)")
        if k == "mixed":
            for p, lim_r in (("r_msgpack", 2), ("r_pb", 3)):
                if p in ns:
                    chk(ns[p] >= lim_r * ns["read"],
                        f"{k}: {p} / read_strings = {ns[p] / ns['read']:.2f}x (>= {lim_r}x)")
    if thr:
        g, a = thr["patterns"]["reuse"], thr["patterns"]["append"]
        ac = "" if a["copy_speedup"] is None else f", numpy.copyto {a['copy_speedup']:.2f}x"
        chk(g["speedup"] >= 1.7,
            f"two threads, two writers, {thr['mib_per_call']} MiB bodies, writers reused: "
            f"{g['speedup']:.2f}x one thread (>= 1.7x; appended: {a['speedup']:.2f}x{ac})")
    return out


def main(argv=None):
    p = mode_parser("python -m bench --short", __doc__)
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--no-threads", action="store_true")
    p.add_argument("--threads-only", action="store_true", help="only the two-thread section")
    p.add_argument("--only", nargs="+", choices=KINDS, help="these kinds only")
    p.set_defaults(mode="quick")
    args = p.parse_args(argv)
    import utf8pfx

    L = corpus_names()
    if L is None:
        print("bench.short: no corpus (../shared/corpus/cldr_names.tsv); skipped")
        return 0
    mode = MODES[args.mode]
    hdr = {"cpu": cpu_model(), "isa": utf8pfx.isa(), "python": platform.python_version(),
           "mode": args.mode, "names": len(L), "utf8pfx": utf8pfx.__version__}
    for mod in ("google.protobuf", "msgpack", "msgspec", "orjson", "ormsgpack"):
        x = _try(mod)
        hdr[mod] = getattr(x, "__version__", "?") if x else None
    print("## Short strings", " ".join(f"{k}={v}" for k, v in hdr.items()))
    if args.threads_only:
        print("\n".join(threads_lines(threads_speedup())))
        return 0
    log("bench.short: timing ...")
    res = run_tables(mode, L)
    if args.only:
        res = {k: v for k, v in res.items() if k in args.only}
    print()
    print(fmt_table(res, CALL_ROWS, "count", "one call per string (x = / `().count` floor)"))
    print()
    print(fmt_table(res, BATCH_ROWS, "batch", "one call per list, first touch (x = / write_strings)"))
    print()
    print(fmt_table(res, READ_ROWS, "read", "reading the list back (x = / read_strings)"))
    print()
    print("names per kind:", ", ".join(f"{k} {v['n']} ({v['cps']:.1f} cp)" for k, v in res.items()))
    thr = None
    if not args.no_threads:
        log("bench.short: threads ...")
        thr = threads_speedup()
        print()
        print("\n".join(threads_lines(thr)))
    print()
    for line in targets(res, thr):
        print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": hdr, "tables": res, "threads": thr}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
