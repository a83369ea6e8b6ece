"""Two builds of utf8pfx in one process, row by row: did a change make
anything slower?

    python -m bench.ab BASELINE [--quick|--full] [--only PATTERN ...] [--json PATH]

BASELINE is a folder that holds another build of the package (its utf8pfx/
folder with the compiled core), e.g. a worktree of the commit to compare
against, built in place:

    git worktree add /tmp/base <commit>
    (cd /tmp/base && python setup.py build_ext --inplace)
    python -m bench.ab /tmp/base

The other side is the utf8pfx this interpreter imports (an installed build,
or this checkout built in place).  Both are loaded side by side, the
baseline under another package name, and every row runs for A (the
baseline) and B (this build) in alternation, round after round, the order
flipped each round.  A shared machine whose speed changes from minute to
minute then slows both sides alike; separate runs of the suites on such a
machine can differ by more than the few per cent a change is judged by.

Workloads:
  names_<kind>  the short suite's strings (`bench --short`): every 19th name
                of the corpus's cldr_names.tsv by PEP 393 storage kind
                (ascii, ucs1, ucs2, ucs4) and all of them (mixed); skipped
                without the corpus
  <kind>_<n>    the long suites' synthetic workloads (`bench --quick`): every
                kind at 8, 30, 512 and 4096 code points and "long"
                (--full: every length of the suites)
Rows, per workload:
  one           w.write_string(s) per string, the writer cleared, capacity kept
  batch         w.write_strings(L), the same
  read          BufferReader(blob).read_strings()
The writer rows take fresh str objects every pass (timing.fresh_copies), made
before the clock starts, as the suites do; the clock is this thread's CPU
time.  Before timing, both builds must write the same bytes for every
workload (a difference is reported and the workload skipped).

Printed per row: A's and B's median ns per string and B/A, the median of the
per-round ratios; then the rows whose B/A is above 1.05.  A measurement,
not a test: the exit status is 0 unless the builds disagree on bytes.

One process is one sample.  Two copies of the same build, compared this
way, can differ by 10 % in one process and the other way in the
next (where each copy's code lands, and a host whose speed for some
instruction mixes changes from second to second, move the ratio), so a
single process's B/A cannot tell a 5 % change.  --processes N (default: 1
with --quick, 3 with --full) runs the comparison in N fresh processes, one
after the other, and reports per row the median of their B/A and each
one's, with the rows whose B/A differs by more than 10 % between them.
"""
import gc
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(HERE))

from bench import mode_parser, package_module, short, timing, workloads  # noqa: E402
from bench.report import cpu_model  # noqa: E402

MODES = {"quick": {"rounds": 9, "warmup": 1, "lengths": (8, 30, 512, 4096, "long")},
         "full": {"rounds": 21, "warmup": 2,
                  "lengths": workloads.LENGTHS + tuple(workloads.NAMED)}}
ROWS = ("one", "batch", "read")
# a sample is at least this much work, in passes over the workload
SAMPLE_NS = 2_000_000
SLOWER = 1.05
# processes by default, per mode
PROCESSES = {"quick": 1, "full": 3}
# per-process B/A of a row this far apart: noise to name, not a change
SPREAD = 1.10


def load_baseline(root):
    """The package in root/utf8pfx, imported as utf8pfx_baseline."""
    init = os.path.join(root, "utf8pfx", "__init__.py")
    if not os.path.exists(init):
        raise SystemExit(f"bench.ab: {root} has no utf8pfx/__init__.py: give the folder "
                         "that holds the baseline's utf8pfx package, built in place")
    name = "utf8pfx_baseline"
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[mod]  # a baseline loaded before, from another folder
    spec = importlib.util.spec_from_file_location(
        name, init, submodule_search_locations=[os.path.dirname(init)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except ImportError as e:
        del sys.modules[name]
        raise SystemExit(f"bench.ab: the baseline in {root} does not import ({e}); build it "
                         "in place: python setup.py build_ext --inplace") from None
    return module


def short_workloads():
    names = workloads.cldr_names()
    if names is None:
        return []
    names = names[::19]
    kind = package_module("_reference").storage_kind
    by = {}
    for s in names:
        by.setdefault(kind(s), []).append(s)
    out = [(f"names_{k}", by[k]) for k in ("ascii", "ucs1", "ucs2", "ucs4") if k in by]
    return out + [("names_mixed", names)]


def rows_for(mod, strings):
    """{row: (run, make_input)} for one build over one workload."""
    w = mod.BufferWriter()
    w.write_strings(strings)
    blob = w.getvalue()
    one, batch = short.writer_rows(mod, strings)

    def read(b):
        return mod.BufferReader(b).read_strings()

    return {"one": (one, timing.fresh_copies), "batch": (batch, timing.fresh_copies),
            "read": (read, lambda _s: blob)}, blob


def same_output(a, b, strings):
    ra, blob_a = rows_for(a, strings)
    rb, blob_b = rows_for(b, strings)
    if blob_a != blob_b:
        return None
    for rows in (ra, rb):
        rows["one"][0](strings)
        rows["batch"][0](strings)
        if rows["read"][0](blob_a) != strings:
            return None
    return ra, rb


def passes_for(run, make, strings):
    x = make(strings)
    t0 = time.thread_time_ns()
    run(x)
    took = max(time.thread_time_ns() - t0, 1)
    return max(1, min(50, -(-SAMPLE_NS // took)))


def measure(ra, rb, strings, mode):
    """{row: (A samples, B samples)} in ns per string, A and B alternating."""
    n = len(strings)
    out = {}
    for row in ROWS:
        sides = [ra[row], rb[row]]
        passes = passes_for(*sides[1], strings)
        samples = ([], [])
        for rnd in range(mode["warmup"] + mode["rounds"]):
            order = (0, 1) if rnd % 2 == 0 else (1, 0)
            for side in order:
                run, make = sides[side]
                took = 0
                for _ in range(passes):
                    x = make(strings)
                    gc.disable()
                    t0 = time.thread_time_ns()
                    run(x)
                    took += time.thread_time_ns() - t0
                    gc.enable()
                    del x
                if rnd >= mode["warmup"]:
                    samples[side].append(took / (passes * n))
        out[row] = samples
    return out


def main(argv=None):
    p = mode_parser("python -m bench.ab", __doc__,
                    quick_help="9 rounds, the long suites' main lengths (default)",
                    full_help="21 rounds, every length")
    p.add_argument("baseline", help="folder holding the baseline's utf8pfx package, built")
    p.add_argument("--only", nargs="+", metavar="PATTERN",
                   help="only workloads whose name matches one of these shell patterns")
    p.add_argument("--json", metavar="PATH", help="write the samples here")
    p.add_argument("--processes", type=int, metavar="N",
                   help="run the comparison in N fresh processes (default: 1 with "
                        "--quick, 3 with --full) and report the median per row")
    a = p.parse_args(argv)
    mode = MODES[a.mode or "quick"]
    nproc = a.processes if a.processes is not None else PROCESSES[a.mode or "quick"]
    if nproc < 1:
        raise SystemExit("bench.ab: --processes must be at least 1")
    import fnmatch

    import utf8pfx as b_mod
    a_mod = load_baseline(os.path.abspath(a.baseline))
    if os.path.samefile(os.path.dirname(a_mod.__file__), os.path.dirname(b_mod.__file__)):
        raise SystemExit("bench.ab: the baseline is the build this interpreter imports")
    if nproc > 1:
        return run_processes(a, nproc, os.path.dirname(os.path.dirname(b_mod.__file__)))

    def chosen(nm):
        return not a.only or any(fnmatch.fnmatchcase(nm, o) for o in a.only)

    wls = short_workloads()
    if not wls:
        print("note: the corpus's cldr_names.tsv is absent: names_* workloads skipped")
    # the synthetic strings are made only for the workloads chosen
    wls = [(nm, s) for nm, s in wls if chosen(nm)]
    wls += [(f"{k}_{n}", workloads.synthetic(k, n).strings)
            for k in workloads.KINDS for n in mode["lengths"] if chosen(f"{k}_{n}")]

    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical CPUs, load average "
          f"{os.getloadavg()[0]:.2f}; CPython {platform.python_version()}")
    print(f"A (baseline): {os.path.dirname(a_mod.__file__)}, isa()={a_mod.isa()}")
    print(f"B (this build): {os.path.dirname(b_mod.__file__)}, isa()={b_mod.isa()}")
    print(f"{len(wls)} workloads x {len(ROWS)} rows, {mode['rounds']} rounds + "
          f"{mode['warmup']} warm-up, A and B alternating; ns per string (medians)\n")
    print("| workload | row | A ns | B ns | B/A |")
    print("|---|---|--:|--:|--:|")
    results, slower, differ = {}, [], []
    for name, strings in wls:
        pair = same_output(a_mod, b_mod, strings)
        if pair is None:
            differ.append(name)
            print(f"| {name} | - | - | - | bytes differ: skipped |")
            continue
        got = measure(*pair, strings, mode)
        results[name] = got
        for row, (sa, sb) in got.items():
            ratio = statistics.median(y / x for x, y in zip(sa, sb))
            flag = " **" if ratio > SLOWER else ""
            print(f"| {name} | {row} | {statistics.median(sa):.1f} | "
                  f"{statistics.median(sb):.1f} | {ratio:.3f}{flag} |", flush=True)
            if ratio > SLOWER:
                slower.append(f"{name}/{row} {ratio:.3f}")
    summary([statistics.median(y / x for x, y in zip(*s))
             for got in results.values() for s in got.values()], slower, differ)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"baseline": os.path.abspath(a.baseline), "results": results,
                       "differ": differ}, f)
    return 1 if differ else 0


def summary(ratios, slower, differ, spread=None):
    """The lines under the table: every row's B/A, the rows over SLOWER,
    the rows that moved between processes (spread: with --processes), and
    the workloads whose bytes differ."""
    if ratios:
        print(f"\nB/A over all {len(ratios)} rows: median {statistics.median(ratios):.3f}, "
              f"range {min(ratios):.3f}-{max(ratios):.3f}")
    print(f"rows more than {round((SLOWER - 1) * 100)} % slower in B: "
          + (", ".join(slower) if slower else "none"))
    if spread is not None:
        print(f"rows whose B/A differs by more than {round((SPREAD - 1) * 100)} % between "
              "processes: " + (", ".join(spread) if spread else "none"))
    if differ:
        print("workloads where the builds wrote different bytes: " + ", ".join(differ))


def run_processes(a, nproc, this):
    """main() in nproc fresh processes, one after the other, then per row
    the median of their B/A."""
    with tempfile.TemporaryDirectory(prefix="utf8pfx-ab-") as tmp:
        runs = []
        for i in range(nproc):
            out = os.path.join(tmp, f"p{i}.json")
            args = [os.path.abspath(a.baseline), "--" + (a.mode or "quick"),
                    "--processes", "1", "--json", out]
            if a.only:
                args += ["--only"] + a.only
            # B from where this process has it (before the checkout, whose
            # utf8pfx/ may hold no compiled core), bench from the checkout
            cmd = [sys.executable, "-c",
                   "import sys; sys.path[:0] = %r; from bench.ab import main; "
                   "sys.exit(main(%r))" % ([this, os.path.dirname(HERE)], args)]
            t0 = time.monotonic()
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True)
            if r.returncode not in (0, 1) or not os.path.exists(out):
                print(r.stdout)
                raise SystemExit(f"bench.ab: process {i + 1} of {nproc} failed "
                                 f"(exit status {r.returncode})")
            if i == 0:  # its header: the CPU, the builds, the rounds
                print(r.stdout.split("\n| workload")[0].rstrip())
            print(f"process {i + 1} of {nproc}: {time.monotonic() - t0:.0f} s", flush=True)
            with open(out) as f:
                runs.append(json.load(f))
    print(f"\n{nproc} processes; per row the median of their B/A (each the median of "
          "its rounds), A and B ns the median of theirs\n")
    print("| workload | row | A ns | B ns | B/A | B/A per process |")
    print("|---|---|--:|--:|--:|---|")
    medians, slower, spread = [], [], []
    for name, rows in runs[0]["results"].items():
        for row in rows:
            per = [r["results"][name][row] for r in runs if name in r["results"]]
            ratios = [statistics.median(y / x for x, y in zip(sa, sb)) for sa, sb in per]
            ratio = statistics.median(ratios)
            medians.append(ratio)
            flag = " **" if ratio > SLOWER else ""
            a_ns = statistics.median(statistics.median(sa) for sa, _ in per)
            b_ns = statistics.median(statistics.median(sb) for _, sb in per)
            print(f"| {name} | {row} | {a_ns:.1f} | {b_ns:.1f} | {ratio:.3f}{flag} "
                  f"| {' '.join(f'{x:.3f}' for x in ratios)} |", flush=True)
            if ratio > SLOWER:
                slower.append(f"{name}/{row} {ratio:.3f}")
            if max(ratios) > SPREAD * min(ratios):
                spread.append(f"{name}/{row} {min(ratios):.3f}-{max(ratios):.3f}")
    differ = sorted({w for r in runs for w in r.get("differ", [])})
    summary(medians, slower, differ, spread)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"baseline": os.path.abspath(a.baseline),
                       "processes": [r["results"] for r in runs], "differ": differ}, f)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
