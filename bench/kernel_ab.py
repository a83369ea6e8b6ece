"""utf8pfx's kernels from two source trees, side by side in one C program: the driver.

    python3 bench/kernel_ab.py BASE [--table ID] [--dec-table ID] [--repeats N]
                               [--build-dir DIR]

BASE is another checkout of this repository, e.g. a worktree of the commit
to compare against (git worktree add /tmp/base <commit>).  A is BASE's
csrc/kernels, B this tree's.  The driver

  1. builds vs_simdutf's workloads from ../shared/corpus/ (or
     $UTF8PFX_CORPUS_DIR: German/French, English, Russian and CJK man-page
     paragraphs, emoji records, UCS2 names) into an input file;
  2. compiles each tree's csrc/kernels/**/*.c with setup.py's flags (as
     vs_simdutf does), links each build into one object with `ld -r` and
     prefixes every symbol it defines ("A_", "B_") with `objcopy`, so both
     builds link into one program;
  3. links bench/c/kernel_ab.cpp with both, twice: A's code first, then
     B's, since where a loop lands can move its time by several per cent
     (a tree against itself shows it); each program checks that both builds
     give CPython's bytes and the strs' code units, then times each row
     (the encoder alone, length + encoder, the reader's decode) for A and B
     in alternation;
  4. prints per row B/A in each layout and their geometric mean, and the
     rows whose two layouts disagree by more than 5 %.

The harness compiles against this tree's kernels.h and decode.h: the two
trees must share the kernel tables' layout (the check before timing stops
at a build whose tables do not give the same results).  `python3
bench/kernel_ab.py .` compares this tree with itself: every row near 1.00,
the harness's own check.  A measurement, not a test: the exit status is 0
unless a build fails or a check does.  Without the corpus it says so and
exits 0.

Where bench.ab answers "did the package get slower" through Python calls,
this isolates the kernels: a change of a few per cent in one loop shows
here before the call overhead and the allocation of each str dilute it.
"""
import argparse
import concurrent.futures
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import vs_simdutf as vs  # noqa: E402  (the workloads, input file and flags)

HARNESS = os.path.join(HERE, "c", "kernel_ab.cpp")


def kernel_sources(tree):
    root = os.path.join(tree, "csrc", "kernels")
    out = []
    for d, _, files in os.walk(root):
        out += [os.path.join(d, f) for f in sorted(files) if f.endswith(".c")]
    return sorted(out)


def build_side(tree, prefix, bdir, cc, verbose):
    """tree's kernels as one object whose defined symbols carry `prefix`"""
    odir = os.path.join(bdir, prefix.rstrip("_"))
    os.makedirs(odir, exist_ok=True)
    flags = vs.kernel_cflags(tree)
    srcs = kernel_sources(tree)
    if not srcs:
        raise SystemExit(f"kernel_ab: {tree} has no csrc/kernels/*.c: not a utf8pfx checkout")
    objs = [os.path.join(odir, os.path.relpath(s, tree).replace(os.sep, "_")[:-2] + ".o")
            for s in srcs]
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as ex:
        for out in ex.map(lambda so: vs.sh([cc, *flags, "-c", so[0], "-o", so[1]], verbose),
                          zip(srcs, objs)):
            sys.stdout.write(out)
    whole = os.path.join(odir, "kernels.o")
    vs.sh(["ld", "-r", "-o", whole, *objs], verbose)
    nm = vs.sh(["nm", "-g", "--defined-only", whole], verbose)
    names = sorted({line.split()[-1] for line in nm.splitlines() if len(line.split()) >= 3})
    mapping = os.path.join(odir, "symbols.map")
    with open(mapping, "w") as f:
        f.writelines(f"{n} {prefix}{n}\n" for n in names)
    renamed = os.path.join(bdir, prefix + "kernels.o")
    vs.sh(["objcopy", "--redefine-syms=" + mapping, whole, renamed], verbose)
    return renamed


def headers_differ(base):
    out = []
    for h in ("kernels.h", "decode.h"):
        a, b = (os.path.join(t, "csrc", "kernels", h) for t in (base, vs.REPO))
        try:
            with open(a, "rb") as fa, open(b, "rb") as fb:
                if fa.read() != fb.read():
                    out.append(h)
        except OSError:
            out.append(h)
    return out


def report(runs):
    """the two layouts' rows side by side, and their geometric mean"""
    print(f"{'workload':<20} {'row':<8} {'A ns':>9} {'B ns':>9} {'B/A 1':>7} {'B/A 2':>7} "
          f"{'B/A':>7}")
    slower, faster, unsure = [], [], []
    for r1, r2 in zip(*runs):
        name = f"{r1[0]}/{r1[1]}"
        q1, q2 = float(r1[4]), float(r2[4])
        g = math.sqrt(q1 * q2)
        print(f"{r1[0]:<20} {r1[1]:<8} {float(r1[2]):9.1f} {float(r1[3]):9.1f} {q1:7.3f} "
              f"{q2:7.3f} {g:7.3f}")
        (slower if g > 1.05 else faster if g < 1 / 1.05 else []).append(name)
        if max(q1, q2) / min(q1, q2) > 1.05:
            unsure.append(name)
    print("\nB/A 1, B/A 2: the median of the per-round ratios with A's code first, then "
          "B's; B/A: their geometric mean (A and B ns: layout 1)")
    for label, rows in (("more than 5 % slower in B", slower),
                        ("more than 5 % faster in B", faster),
                        ("whose layouts differ by more than 5 % (rerun them)", unsure)):
        print(f"rows {label}: {', '.join(rows) if rows else 'none'}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("base", help="another checkout of utf8pfx (side A)")
    ap.add_argument("--table", help="encode table id (default: each side's choice here)")
    ap.add_argument("--dec-table", help="decode table id (default: each side's choice here)")
    ap.add_argument("--repeats", type=int, default=200, help="rounds per row (default 200)")
    ap.add_argument("--min-loop-us", type=float, default=20.0,
                    help="the least time of one timed loop (default 20 us)")
    ap.add_argument("--n-cp", type=int, default=8192, help="code points per long string")
    ap.add_argument("--nstr", type=int, default=16, help="strings per long workload")
    ap.add_argument("--short-names", type=int, default=8192, help="names in the short row")
    ap.add_argument("--build-dir", help="build here and keep it (default: a temporary folder)")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    ap.add_argument("-v", "--verbose", action="store_true", help="print the build commands")
    args = ap.parse_args(argv)

    base = os.path.abspath(args.base)
    if not os.path.isfile(os.path.join(base, "csrc", "kernels", "kernels.h")):
        print(f"kernel_ab: {base} has no csrc/kernels/kernels.h: not a utf8pfx checkout "
              "(make one with: git worktree add /tmp/base <commit>)", file=sys.stderr)
        return 2
    if not os.path.isdir(vs.CORPUS_DIR):
        print(f"kernel_ab: no corpus at {os.path.normpath(vs.CORPUS_DIR)} "
              "(set UTF8PFX_CORPUS_DIR); skipped")
        return 0
    workloads, notes = vs.build_workloads(args.n_cp, args.nstr, args.short_names)
    for n in notes:
        print("note: " + n)
    if not workloads:
        print("kernel_ab: no workload could be built from the corpus; skipped")
        return 0
    for h in headers_differ(base):
        print(f"note: {h} differs between the trees; the harness uses this tree's, so the "
              "tables must still have the same layout")

    bdir = os.path.abspath(args.build_dir) if args.build_dir else \
        tempfile.mkdtemp(prefix="u8p-kernel-ab-")
    try:
        os.makedirs(bdir, exist_ok=True)
        a = build_side(base, "A_", bdir, args.cc, args.verbose)
        b = build_side(vs.REPO, "B_", bdir, args.cc, args.verbose)
        inp = os.path.join(bdir, "input.bin")
        vs.write_input(inp, workloads)
        print(f"A: {base} ({vs.git_rev(base)})\nB: {vs.REPO} ({vs.git_rev(vs.REPO)})", flush=True)
        runs = []
        for layout, objs in enumerate(((a, b), (b, a)), 1):
            exe = os.path.join(bdir, f"kernel_ab{layout}")
            sys.stdout.write(vs.sh([args.cxx, *vs.CXXFLAGS, "-Wall", "-Wextra",
                                    "-I" + vs.KERNELS, HARNESS, *objs, "-o", exe], args.verbose))
            tsv = os.path.join(bdir, f"rows{layout}.tsv")
            cmd = [exe, inp, "--repeats", str(args.repeats), "--min-loop-us",
                   str(args.min_loop_us), "--tsv", tsv]
            if args.table:
                cmd += ["--table", args.table]
            if args.dec_table:
                cmd += ["--dec-table", args.dec_table]
            if args.verbose:
                print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
            print(f"layout {layout} ({'A' if objs[0] == a else 'B'}'s code first) ...", flush=True)
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode != 0:
                sys.stdout.write(r.stdout)
                return r.returncode
            if layout == 1:
                sys.stdout.write(r.stdout.split("\n\n", 1)[0] + "\n\n")
            runs.append(vs.read_rows(tsv))
        report(runs)
        return 0
    finally:
        if not args.build_dir:
            shutil.rmtree(bdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
