"""utf8pfx writer and reader benchmarks: one command, see bench/README.md.

    python -m bench [--reader] [--quick|--full] [--isa] [--json PATH] [--plot PATH]
    python -m bench --arrow [--quick|--full] [--values N] [--json PATH]   (bench/arrow.py)
    python -m bench --streams [--quick|--full] [--mb N] [--names N] [--json PATH]   (bench/streams.py)
    python -m bench --short [--quick|--full] [--json PATH]   (bench/short.py)
    python bench/run.py ...            (same thing)
"""
import argparse
import dataclasses
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc

HERE = os.path.dirname(os.path.abspath(__file__))
if __package__ in (None, ""):           # python bench/run.py
    sys.path.insert(0, os.path.dirname(HERE))

from bench import approaches, mode_parser, report, timing, workloads  # noqa: E402

MODES = {
    # repeats: samples kept per approach and process; warmup: samples dropped;
    # min_time_ms: length of one sample; corpus_max: strings per corpus file
    # (an even stride over the file; None = all of it).
    "quick": {"repeats": 11, "warmup": 1, "min_time_ms": 2.0, "processes": 1,
              "corpus_max": 20000},
    "full": {"repeats": 21, "warmup": 2, "min_time_ms": 10.0, "processes": 3,
             "corpus_max": None},
}
PLOT_KEYS = ("py", "encode", "pb", "mp", "one", "batch", "copy")


@dataclasses.dataclass(frozen=True)
class Suite:
    """What differs between the writer and the reader suite; workloads,
    timing, tables and targets are the same code."""
    approaches: tuple      # every row (approaches.ALL / READERS)
    check: object          # check(workload, approaches) before timing
    main: tuple            # utf8pfx rows of the summary table
    ratios: tuple          # its ratio columns
    targets: tuple
    plot_keys: tuple
    isa_keys: tuple        # utf8pfx rows of the --isa table
    what: str              # GB/s of UTF-8 <what>
    fresh_note: str        # how inputs are made, for the approach list


SUITES = {
    "writer": Suite(approaches.ALL, approaches.check, report.MAIN, report.RATIOS,
                    report.TARGETS, PLOT_KEYS, ("one", "batch", "length"),
                    "produced", "fresh: every run gets new str objects, see README"),
    "reader": Suite(approaches.READERS, approaches.check_reader, report.READER_MAIN,
                    report.READER_RATIOS, report.READER_TARGETS,
                    ("py", "decode", "pb", "mp", "read", "all", "copy"),
                    ("read", "all"), "consumed",
                    "each decodes its serialized input, made once per workload "
                    "before timing"),
    # every prefix= preset beside "varint" on the same strings
    "presets": Suite(approaches.PRESETS, approaches.check_presets, report.PRESET_MAIN,
                     report.PRESET_RATIOS, report.PRESET_TARGETS, (),
                     ("b:varint", "b:u16be"), "produced",
                     "writers: fresh strs every run; readers: the preset's blob, "
                     "made once per workload before timing"),
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def parse(argv):
    p = mode_parser("python -m bench", __doc__, quick_help="a few minutes (default)",
                    full_help="more samples, 3 processes, whole corpus files")
    p.add_argument("--reader", action="store_true",
                   help="the reader suite (decode back into str) instead of "
                        "the writer suite")
    p.add_argument("--presets", action="store_true",
                   help="the wire-format presets suite: every prefix= "
                        "beside 'varint' on the same strings")
    p.add_argument("--isa", action="store_true",
                   help="also run the utf8pfx rows once per available ISA level "
                        "(subprocesses with UTF8PFX_ISA set)")
    p.add_argument("--json", metavar="PATH", help="results file "
                   "(default bench/results/<time>-<mode>.json)")
    p.add_argument("--plot", metavar="PATH", help="PNG of GB/s per workload "
                   "(needs matplotlib)")
    p.add_argument("--pyperf", metavar="PATH", help="also save the samples as a "
                   "pyperf suite (for `python -m pyperf compare_to`)")
    p.add_argument("--only", nargs="+", metavar="PATTERN",
                   help="only workloads whose name matches one of these shell "
                        "patterns, e.g. 'ascii_*' cjk_4096 'corpus_*'")
    p.add_argument("--repeats", type=int, help="override the mode's repeats")
    p.add_argument("--processes", type=int, help="override the mode's processes")
    p.add_argument("--clock", choices=sorted(timing.CLOCKS), default="cpu",
                   help="cpu: this thread's CPU time (default, robust on a shared "
                        "machine); wall: perf_counter")
    p.add_argument("--no-memory", action="store_true", help="skip the memory section")
    p.add_argument("--worker-out", help=argparse.SUPPRESS)
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    a.mode = a.mode or "quick"
    a.params = dict(MODES[a.mode], clock=a.clock)
    a.suite_name = "presets" if a.presets else "reader" if a.reader else "writer"
    a.suite = SUITES[a.suite_name]
    for k in ("repeats", "processes"):
        if getattr(a, k) is not None:
            a.params[k] = getattr(a, k)
    return a


def load_workloads(args):
    wls = workloads.all_workloads(corpus_max=args.params["corpus_max"],
                                  only=args.only, log=log)
    if args.presets:
        keep = [w for w in wls if approaches.presets_fit(w)]
        for w in wls:
            if w not in keep:
                log(f"note: {w.name} left out of --presets: a string is too long "
                    "for prefix='u16be'")
        wls = keep
    return wls


def available(args, log=log):
    return approaches.available(log=log, approaches=args.suite.approaches)


def measure(wls, aps, params, check):
    """{workload: {approach: {"loops", "samples"}}} in this process."""
    results = {}
    t_start = time.perf_counter()
    for i, wl in enumerate(wls, 1):
        check(wl, aps)
        runners = [(a, a.setup(wl)) for a in aps]
        results[wl.name] = timing.sample_workload(
            runners, wl.strings, warmup=params["warmup"], repeats=params["repeats"],
            min_time_ns=params["min_time_ms"] * 1e6)
        log(f"  [{i:2d}/{len(wls)}] {wl.name:<18} {time.perf_counter() - t_start:6.1f} s")
    return results


def _worker_cmd(args):
    cmd = [sys.executable, os.path.join(HERE, "run.py"), "--" + args.mode,
           "--repeats", str(args.params["repeats"]), "--clock", args.clock]
    if args.reader:
        cmd.append("--reader")
    if args.presets:
        cmd.append("--presets")
    return cmd + (["--only"] + args.only if args.only else [])


def spawn(args):
    """Run one measuring process (same workloads, same parameters) and
    return its results."""
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        subprocess.run(_worker_cmd(args) + ["--worker-out", out], check=True,
                       stdout=subprocess.DEVNULL)
        with open(out) as f:
            return json.load(f)
    finally:
        os.unlink(out)


def worker(args):
    results = measure(load_workloads(args), available(args), args.params,
                      args.suite.check)
    with open(args.worker_out, "w") as f:
        json.dump(results, f)


def merge(parts):
    """Samples of several processes pooled per (workload, approach)."""
    out = {}
    for part in parts:
        for wl, rows in part.items():
            for k, r in rows.items():
                slot = out.setdefault(wl, {}).setdefault(k, {"loops": [], "samples": []})
                slot["loops"].append(r["loops"])
                slot["samples"] += r["samples"]
    return out


def measure_memory(wl, aps):
    """tracemalloc peak of one run on fresh strings, and how much the str
    objects themselves grew (sys.getsizeof counts a cached UTF-8 copy)."""
    out = {}
    for a in aps:
        if not a.fresh or a.make_input or a.key == "noop":
            continue
        run = a.setup(wl)
        strings = timing.fresh_copies(wl.strings)
        before = sum(map(sys.getsizeof, strings))
        gc.collect()
        tracemalloc.start()
        blob = run(strings)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        after = sum(map(sys.getsizeof, strings))
        out[a.key] = {"peak": peak, "blob": len(blob) if blob is not None else 0,
                      "str_before": before, "str_growth": after - before,
                      "str_growth_pct": 100.0 * (after - before) / before}
        del blob, strings
    return out


def isa_levels(args):
    u8p = approaches.utf8pfx_module()
    if u8p is None:
        return []
    levels = getattr(u8p._core, "_decode_isa_levels" if args.reader
                     else "_isa_levels", None)
    return levels() if levels else ["scalar", "sse", "avx2", "avx512"]


def _say(obj, stream=None):
    stream = stream or sys.stdout
    stream.write(json.dumps(obj) + "\n")
    stream.flush()


def serve(args):
    """--serve (one process per ISA level, UTF8PFX_ISA set by the parent):
    {"wl": name} sets up and calibrates the utf8pfx rows on that workload and
    answers {"loops"}; {"round": i} takes one round and answers {key: ns}."""
    wls = {w.name: w for w in load_workloads(args)}
    # One list reused (not fresh copies): nothing in these processes fills
    # a str's UTF-8 cache, and every level gets the same inputs, so each
    # sample can run the full min_time instead of one capped fresh run.
    aps = [dataclasses.replace(a, fresh=False)
           for a in available(args) if a.u8p]
    u8p = approaches.utf8pfx_module()
    _say({"isa": u8p._core._decode_isa() if args.reader else u8p.isa()})
    rounds = None
    for line in sys.stdin:
        req = json.loads(line)
        if "wl" in req:
            rounds = None
            wl = wls[req["wl"]]
            rounds = timing.Rounds([(a, a.setup(wl)) for a in aps], wl.strings,
                                   args.params["min_time_ms"] * 1e6)
            _say({"loops": rounds.loops})
        else:
            _say(rounds.round(req["round"]))


def recheck_isa_inprocess(args, wls, comps, tolerance=0.90):
    """The rows of the per-level table under the tolerance, timed again in
    this process: scalar and the flagged level alternated sample by sample
    through the testing hook that switches the kernel tables (_set_isa, or
    _set_decode_isa for the reader: the tables UTF8PFX_ISA picks at import),
    so both see the same heap, inputs and core (across processes the same
    code measured up to 30 % apart).  Returns {(workload, row, level):
    t_scalar / t_level}; empty without the hook."""
    u8p = approaches.utf8pfx_module()
    setter = getattr(getattr(u8p, "_core", None),
                     "_set_decode_isa" if args.reader else "_set_isa", None)
    flagged = [c for c in comps if c[3] < tolerance]
    if setter is None or not flagged:
        return {}
    by = {w.name: w for w in wls}
    aps = {a.key: dataclasses.replace(a, fresh=False) for a in available(args) if a.u8p}
    warmup, reps = args.params["warmup"], max(15, args.params["repeats"])
    out = {}
    log(f"  re-timing {len(flagged)} flagged per-level row(s) in one process ...")
    for wname, key, lv, _ in flagged:
        wl, a = by[wname], aps[key]
        prev = setter("scalar")
        try:
            rounds = timing.Rounds([(a, a.setup(wl))], wl.strings,
                                   args.params["min_time_ms"] * 1e6)
            got = {"scalar": [], lv: []}
            for i in range(warmup + reps):
                for level in (("scalar", lv) if i % 2 == 0 else (lv, "scalar")):
                    setter(level)
                    t = rounds.round(i)[key]
                    if i >= warmup:
                        got[level].append(t)
        finally:
            setter(prev)
        out[(wname, key, lv)] = (statistics.median(got["scalar"])
                                 / statistics.median(got[lv]))
    return out


def run_isa(args, wls, levels):
    """The utf8pfx rows once per ISA level.  Each level runs in processes
    started with UTF8PFX_ISA=<level> (the kernel is chosen at import), at
    least 2 per level: the same code measured 30 % apart in two processes
    (heap layout, which core), so one process per level is not enough.
    The parent asks every process in turn for one round at a time, rotating
    the order, so all levels of a workload are sampled in the same time
    window, as the approaches of the main table are; samples of a level's
    processes are pooled."""
    n = max(2, args.params["processes"])
    procs = {}                          # (level, i) -> Popen
    for lv in levels:
        for i in range(n):
            p = subprocess.Popen(_worker_cmd(args) + ["--serve"], text=True,
                                 env=dict(os.environ, UTF8PFX_ISA=lv),
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            first = p.stdout.readline()  # empty if the level made import fail
            got = json.loads(first)["isa"] if first else "an import error"
            if got != lv:
                log(f"note: UTF8PFX_ISA={lv} runs {got}: not available, skipped")
                p.stdin.close()
                p.wait()
                break
            procs[(lv, i)] = p
    if not procs:
        return {}

    def ask(who, req):
        _say(req, procs[who].stdin)
        return json.loads(procs[who].stdout.readline())

    parts = {who: {} for who in procs}  # (level, i) -> {wl: {key: samples}}
    order = list(procs)
    try:
        t0 = time.perf_counter()
        for i, wl in enumerate(wls, 1):
            loops = {(who, k): n for who in order
                     for k, n in ask(who, {"wl": wl.name})["loops"].items()}

            def take(rnd):
                r = rnd % len(order)
                return {(who, k): t for who in order[r:] + order[:r]
                        for k, t in ask(who, {"round": rnd}).items()}
            res = timing.collect(take, loops, args.params["warmup"],
                                 args.params["repeats"])
            for (who, k), r in res.items():
                parts[who].setdefault(wl.name, {})[k] = r
            log(f"  ISA [{i:2d}/{len(wls)}] {wl.name:<18} "
                f"{time.perf_counter() - t0:6.1f} s")
    finally:
        for p in procs.values():
            p.stdin.close()
            p.wait()
    return {lv: report.medians(merge([parts[who] for who in order if who[0] == lv]))
            for lv in dict.fromkeys(who[0] for who in order)}


def save_pyperf(path, wls, results):
    import pyperf
    benches = []
    for wl in wls:
        for k, r in results.get(wl.name, {}).items():
            per_str = [t / 1e9 / len(wl.strings) for t in r["samples"]]
            run = pyperf.Run(per_str, metadata={"name": f"{wl.name}/{k}",
                                                "unit": "second"},
                             collect_metadata=False)
            benches.append(pyperf.Benchmark([run]))
    pyperf.BenchmarkSuite(benches).dump(path, replace=True)
    print(f"pyperf suite: {path}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--short" in argv:  # short strings, call floors, threads: bench/short.py
        from bench import short
        argv.remove("--short")
        return short.main(argv)
    if "--streams" in argv:  # StreamReader / StreamWriter: bench/streams.py
        from bench import streams
        argv.remove("--streams")
        return streams.main(argv)
    if "--arrow" in argv:  # the Arrow in/out suite: bench/arrow.py
        from bench import arrow
        argv.remove("--arrow")
        return arrow.main(argv)
    args = parse(argv)
    timing.set_clock(args.clock)
    if args.worker_out:
        return worker(args)
    if args.serve:
        return serve(args)
    t0 = time.perf_counter()
    u8p = approaches.utf8pfx_module()
    suite = args.suite
    hdr = report.header(args.mode, args.params, u8p, approaches.protobuf_info(),
                        approaches.msgpack_info(), suite=args.suite_name)
    report.print_header(hdr)
    aps = available(args, log=print)
    wls = load_workloads(args)
    print(f"\n## approaches ({suite.fresh_note})")
    for a in aps:
        same = not a.fresh and not args.reader   # reader: every row is
        print(f"  {a.key:<12} {a.label}{'  [same strs every run]' if same else ''}")
    print()

    n = args.params["processes"]
    if n <= 1:
        results = measure(wls, aps, args.params, suite.check)
    else:
        parts = []
        for i in range(n):
            log(f"process {i + 1}/{n}:")
            parts.append(spawn(args))
        results = merge(parts)
    med = report.medians(results)

    print("## ns per string, median ± half the interquartile range")
    report.print_approach_table(wls, results, [a.key for a in aps])
    if u8p is not None and args.presets:
        print("\n## presets per workload (same strings, same run)")
        report.print_preset_tables(wls, med)
    elif u8p is not None:
        print("\n## utf8pfx per workload (ratios: t_peer / t_utf8pfx, "
              "> 1 = utf8pfx faster)" if not args.reader else
              "\n## utf8pfx per workload (GB/s: UTF-8 bytes consumed per ns; "
              "ratios: t_peer / t_read_strings, > 1 = read_strings faster)")
        report.print_summary_table(wls, med, main=suite.main, ratios=suite.ratios)

    memory = {}
    if not args.no_memory and args.suite_name == "writer":  # str cache growth
        for wl in wls:
            if wl.kind == "corpus":
                memory[wl.name] = measure_memory(wl, aps)
        if memory:
            print("\n## memory on the corpus (one run, fresh strs)")
            report.print_memory(memory)

    levels = isa_levels(args) if args.isa else []
    isa, isa_comps = {}, []
    if len(levels) > 1:                 # scalar alone: nothing to compare
        isa = run_isa(args, wls, levels)
        if len(isa) > 1:
            print("\n## utf8pfx per ISA level (scalar ns per string; "
                  "ratio = t_scalar / t_level, > 1 = faster than scalar)")
            isa_comps = report.print_isa(wls, isa, list(isa), suite.isa_keys)

    print()
    targets = report.evaluate_targets(wls, med, suite.targets)
    report.print_targets(targets)
    recheck = {}
    if args.isa:
        recheck = recheck_isa_inprocess(args, wls, isa_comps) if isa_comps else {}
        report.print_isa_check(isa_comps, list(isa) or levels, recheck=recheck)

    path = args.json or os.path.join(
        HERE, "results", time.strftime("%Y%m%d-%H%M%S")
        + ("-reader" if args.reader else "-presets" if args.presets else "")
        + f"-{args.mode}.json")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"header": hdr, "workloads": [w.meta() for w in wls],
                   "approaches": {a.key: {"label": a.label, "fresh": a.fresh}
                                  for a in aps},
                   "results": results, "medians_ns": med, "memory": memory,
                   "isa_medians_ns": isa, "isa_comparisons": isa_comps,
                   "isa_recheck_in_one_process": {" ".join(k): r for k, r in recheck.items()},
                   "targets": targets}, f, indent=1)
    print(f"\nresults: {path}  ({time.perf_counter() - t0:.0f} s)")
    if args.plot:
        report.plot(wls, med, args.plot, [k for k in suite.plot_keys
                                          if any(k == a.key for a in aps)],
                    what=suite.what)
    if args.pyperf:
        save_pyperf(args.pyperf, wls, results)


if __name__ == "__main__":
    main()
