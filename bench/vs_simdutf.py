"""utf8pfx's encode and decode kernels against simdutf, kernel level, in C: the driver.

    python3 bench/vs_simdutf.py --simdutf-src DIR [--repeats N] [--runs N] [--build-dir DIR]
    SIMDUTF_SRC=DIR python3 bench/vs_simdutf.py

DIR is a simdutf checkout (git clone https://github.com/simdutf/simdutf);
nothing is downloaded and nothing of simdutf is written into this repository.
The driver

  1. builds the workloads from ../shared/corpus/ (or $UTF8PFX_CORPUS_DIR) and
     writes them, with CPython's UTF-8 of every string, to a binary input
     file (format: the header comment of bench/c/vs_simdutf.cpp);
  2. runs simdutf's singleheader/amalgamate.py into a temporary folder (or
     --build-dir) and compiles there: csrc/kernels/**/*.c with gcc and
     setup.py's flags (plus CPython's -DNDEBUG -fwrapv), simdutf.cpp and the
     harness bench/c/vs_simdutf.cpp with g++ -O3, then links them;
  3. runs the harness, which checks that every contender gives CPython's
     bytes and prints the table (ns per string, best of --repeats), then
     the decoders' table (UTF-8 back to each str's storage, validated;
     every contender must give the str's code units);
  4. with --runs N, runs it N times in all (fresh processes, one after the
     other) and prints per row every run's ratio, their median and range,
     and judges the targets by the median: on a shared machine one run's
     ratio can land on either side of a target that the row sits near.

Workloads (long ones: --nstr strings of --n-cp code points, each cut from
the records of one kind joined by "\\n" (paragraphs) or " " (emoji records),
taken at an even stride over all the cuts):

  long_latin1      German and French man-page paragraphs whose str is UCS1
                   (Latin-1 letters, ~1.9 % non-ASCII)
  long_ascii_l1    English man-page paragraphs whose str is ASCII or UCS1;
                   only the cuts that hold a Latin-1 character (a handful
                   each: ©, á, ...), so the str is UCS1, not ASCII
  long_cyrillic    Russian man-page paragraphs (UCS2; ~62 % Cyrillic, the
                   rest the ASCII of commands and options)
  long_cjk         Japanese and Chinese man-page paragraphs without astral
                   characters (UCS2)
  long_emoji       cldr_emoji.tsv records "emoji name" joined by spaces,
                   only the cuts with an astral code point (UCS4)
  short_ucs2_names --short-names CLDR names (cldr_names.tsv) whose str is
                   UCS2, an even stride over the file (every script of the
                   file), a few code points each; ns per name

No input holds a surrogate (checked).  Without the corpus the driver prints a
note and exits 0; without a simdutf source it says how to get one and exits 2.
"""
import argparse
import hashlib
import os
import shlex
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
CORPUS_DIR = os.environ.get("UTF8PFX_CORPUS_DIR",
                            os.path.join(REPO, "..", "shared", "corpus"))
HARNESS = os.path.join(HERE, "c", "vs_simdutf.cpp")
KERNELS = os.path.join(REPO, "csrc", "kernels")

# setup.py's flags for gcc/clang (-O3 -falign-functions=64 -Wall -Wextra
# -fvisibility=hidden, include dir csrc) plus what CPython's CFLAGS add to every
# extension (-DNDEBUG -fwrapv): without the alignment, a change to one kernel
# moves the loops of the others in its file, and their speed with them
def kernel_cflags(tree=REPO):
    """the flags for the kernels of `tree` (a checkout of this repository)"""
    return ["-DNDEBUG", "-fwrapv", "-O3", "-falign-functions=64", "-Wall", "-Wextra",
            "-fvisibility=hidden", "-I" + os.path.join(tree, "csrc")]


KERNEL_CFLAGS = kernel_cflags()
CXXFLAGS = ["-O3", "-DNDEBUG", "-std=c++17"]

NO_SIMDUTF = """\
vs_simdutf: no simdutf source given.
  Get one (outside this repository), then pass it with --simdutf-src or SIMDUTF_SRC:
    git clone https://github.com/simdutf/simdutf /tmp/simdutf
    python3 bench/vs_simdutf.py --simdutf-src /tmp/simdutf"""


def kind_of(s):
    m = max(map(ord, s)) if s else 0
    return 0 if m < 0x80 else 1 if m < 0x100 else 2 if m < 0x10000 else 4


def read_tsv(name):
    path = os.path.join(CORPUS_DIR, name)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n").split("\t") for line in f if "\t" in line]


def even(items, count):
    """count items at an even stride over the list (all of them if fewer)"""
    if len(items) <= count:
        return list(items)
    return [items[i * len(items) // count] for i in range(count)]


def cuts(text, n_cp):
    return [text[i:i + n_cp] for i in range(0, len(text) - n_cp + 1, n_cp)]


def build_workloads(n_cp, nstr, n_short):
    """[(name, kind, is_short, [str])]; notes for what was skipped"""
    out, notes = [], []
    paras = read_tsv("manpage_paragraphs.tsv")
    emoji = read_tsv("cldr_emoji.tsv")
    names = read_tsv("cldr_names.tsv")

    def add_long(name, kind, text, keep=lambda s: True):
        cand = [s for s in cuts(text, n_cp) if keep(s)]
        if not cand:
            notes.append(f"{name}: the corpus gives no {n_cp}-code-point string; skipped")
            return
        if len(cand) < nstr:
            notes.append(f"{name}: only {len(cand)} strings of {n_cp} code points")
        out.append((name, kind, False, even(cand, nstr)))

    if paras is None:
        notes.append("manpage_paragraphs.tsv not found: long_latin1, long_ascii_l1, "
                     "long_cyrillic, long_cjk skipped")
    else:
        by_lang = {}
        for rec in paras:
            by_lang.setdefault(rec[0], []).append(rec[1])

        def text(langs, max_kind):
            return "\n".join(p for lang in langs for p in by_lang.get(lang, ())
                             if kind_of(p) <= max_kind)

        add_long("long_latin1", 1, text(("de", "fr"), 1), lambda s: kind_of(s) == 1)
        add_long("long_ascii_l1", 1, text(("en",), 1), lambda s: kind_of(s) == 1)
        add_long("long_cyrillic", 2, text(("ru",), 2), lambda s: kind_of(s) == 2)
        add_long("long_cjk", 2, text(("ja", "zh"), 2), lambda s: kind_of(s) == 2)
    if emoji is None:
        notes.append("cldr_emoji.tsv not found: long_emoji skipped")
    else:
        add_long("long_emoji", 4, " ".join(" ".join(r[1:]) for r in emoji),
                 lambda s: kind_of(s) == 4)
    if names is None:
        notes.append("cldr_names.tsv not found: short_ucs2_names skipped")
    else:
        ucs2 = [r[1] for r in names if len(r) > 1 and kind_of(r[1]) == 2]
        if ucs2:
            out.append(("short_ucs2_names", 2, True, even(ucs2, n_short)))
        else:
            notes.append("short_ucs2_names: no UCS2 name in cldr_names.tsv; skipped")
    return out, notes


def write_input(path, workloads):
    fmt = {1: "latin-1", 2: "utf-16-le", 4: "utf-32-le"}
    with open(path, "wb") as f:
        f.write(b"U8PVS001" + struct.pack("<I", len(workloads)))
        for name, kind, is_short, strs in workloads:
            f.write(struct.pack("<I", len(name)) + name.encode("ascii"))
            f.write(struct.pack("<III", kind, int(is_short), len(strs)))
            for s in strs:
                if kind_of(s) != kind:
                    raise SystemExit(f"vs_simdutf: internal: {name}: a string of storage "
                                     f"ucs{kind_of(s)} in a ucs{kind} workload")
                if any("\ud800" <= c <= "\udfff" for c in s):
                    raise SystemExit(f"vs_simdutf: internal: {name}: a surrogate in the input")
                units = s.encode(fmt[kind])
                assert len(units) == len(s) * kind
                u8 = s.encode("utf-8")
                f.write(struct.pack("<II", len(s), len(u8)) + units + u8)


def sh(cmd, verbose, **kw):
    if verbose:
        print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        sys.stdout.write(r.stdout)
        raise SystemExit(f"vs_simdutf: command failed ({r.returncode}): {' '.join(cmd)}")
    return r.stdout


def git_rev(src):
    """the checkout's commit and `git describe`, or why there is none"""
    def git(*a):
        r = subprocess.run(["git", "-C", src, *a], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        return r.stdout.strip() if r.returncode == 0 else ""
    commit = git("rev-parse", "HEAD")
    if not commit:
        return "unknown (not a git checkout)"
    desc = git("describe", "--tags", "--always", "--dirty")
    return f"{commit} ({desc})" if desc else commit


def build(src, bdir, cc, cxx, verbose):
    """the harness binary in bdir; simdutf.o is reused when its source and
    flags are unchanged (with --build-dir)"""
    amal = os.path.join(bdir, "simdutf")
    objs = os.path.join(bdir, "obj")
    os.makedirs(amal, exist_ok=True)
    os.makedirs(objs, exist_ok=True)
    sh([sys.executable, os.path.join(src, "singleheader", "amalgamate.py"),
        "--output-dir", amal, "--no-zip", "--no-readme"], verbose)
    sd_cpp = os.path.join(amal, "simdutf.cpp")
    sd_obj = os.path.join(objs, "simdutf.o")
    with open(sd_cpp, "rb") as f:
        h = hashlib.sha256(f.read())
    h.update(repr((cxx, CXXFLAGS)).encode())
    stamp = os.path.join(objs, "simdutf.o.sha256")
    if not (os.path.exists(sd_obj) and os.path.exists(stamp)
            and open(stamp).read() == h.hexdigest()):
        print("compiling simdutf.cpp (about half a minute) ...", flush=True)
        sh([cxx, *CXXFLAGS, "-c", sd_cpp, "-o", sd_obj], verbose)
        with open(stamp, "w") as f:
            f.write(h.hexdigest())
    kobjs = []
    for root, _, files in os.walk(KERNELS):
        for fn in sorted(files):
            if fn.endswith(".c"):
                o = os.path.join(objs, "k_" + fn[:-2] + ".o")
                sys.stdout.write(sh([cc, *KERNEL_CFLAGS, "-c", os.path.join(root, fn), "-o", o],
                                    verbose))
                kobjs.append(o)
    exe = os.path.join(bdir, "vs_simdutf")
    sys.stdout.write(sh([cxx, *CXXFLAGS, "-Wall", "-Wextra", "-I" + amal, "-I" + KERNELS,
                         HARNESS, *sorted(kobjs), sd_obj, "-o", exe], verbose))
    return exe


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("--simdutf-src", default=os.environ.get("SIMDUTF_SRC"),
                    help="a simdutf checkout (default: $SIMDUTF_SRC)")
    ap.add_argument("--repeats", type=int, default=300,
                    help="timed loops per contender and workload, best kept (default 300)")
    ap.add_argument("--runs", type=int, default=1,
                    help="run the harness this many times and summarise the ratios (default 1)")
    ap.add_argument("--n-cp", type=int, default=8192, help="code points per long string")
    ap.add_argument("--nstr", type=int, default=16, help="strings per long workload")
    ap.add_argument("--short-names", type=int, default=8192, help="names in the short row")
    ap.add_argument("--build-dir", help="build here and keep it (simdutf.o is reused); "
                                        "default: a temporary folder, removed afterwards")
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    ap.add_argument("-v", "--verbose", action="store_true", help="print the build commands")
    args = ap.parse_args(argv)

    if not args.simdutf_src:
        print(NO_SIMDUTF, file=sys.stderr)
        return 2
    src = os.path.abspath(args.simdutf_src)
    if not os.path.exists(os.path.join(src, "singleheader", "amalgamate.py")):
        print(f"vs_simdutf: {src} has no singleheader/amalgamate.py: not a simdutf checkout.\n"
              + NO_SIMDUTF.split("\n", 1)[1], file=sys.stderr)
        return 2
    if not os.path.isdir(CORPUS_DIR):
        print(f"vs_simdutf: no corpus at {os.path.normpath(CORPUS_DIR)} "
              "(set UTF8PFX_CORPUS_DIR); skipped")
        return 0
    workloads, notes = build_workloads(args.n_cp, args.nstr, args.short_names)
    for n in notes:
        print("note: " + n)
    if not workloads:
        print("vs_simdutf: no workload could be built from the corpus; skipped")
        return 0

    bdir = os.path.abspath(args.build_dir) if args.build_dir else \
        tempfile.mkdtemp(prefix="u8p-vs-simdutf-")
    try:
        os.makedirs(bdir, exist_ok=True)
        exe = build(src, bdir, args.cc, args.cxx, args.verbose)
        inp = os.path.join(bdir, "input.bin")
        write_input(inp, workloads)
        cmd = [exe, inp, "--repeats", str(args.repeats), "--simdutf-rev", git_rev(src)]
        if args.verbose:
            print("+ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
        print(f"compilers: {args.cc} / {args.cxx}: "
              + sh([args.cxx, "--version"], False).splitlines()[0], flush=True)
        if args.runs <= 1:
            return subprocess.run(cmd).returncode
        runs = []
        for k in range(args.runs):
            tsv = os.path.join(bdir, f"run{k + 1}.tsv")
            if k:
                print(f"\nrun {k + 1} of {args.runs} ...", flush=True)
                r = subprocess.run(cmd + ["--tsv", tsv], stdout=subprocess.DEVNULL)
            else:
                r = subprocess.run(cmd + ["--tsv", tsv])
            if r.returncode != 0:
                return r.returncode
            runs.append(read_rows(tsv))
        summarise(runs)
        return 0
    finally:
        if not args.build_dir:
            shutil.rmtree(bdir, ignore_errors=True)


def read_rows(path):
    """a harness's --tsv file: a list of fields per row"""
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f]


def summarise(runs):
    """every run's ratio per row, their median and range; the targets judged
    by the median; returns whether every row with a target meets it"""
    n = len(runs)
    print(f"\nratios over {n} runs (utf8pfx default / simdutf, best of each run's loops)\n")
    print(f"{'table':<7} {'workload':<20} {'median':>7} {'range':>15} {'target':>7}  "
          f"{'verdict':<10} runs")
    all_met = True
    for rows in zip(*runs):
        table, name, limit, short = rows[0][0], rows[0][1], float(rows[0][4]), rows[0][5] == "1"
        q = sorted(float(r[2]) for r in rows)
        med = statistics.median(q)
        scale = table == "decode" and short
        met = med <= limit
        if not scale:
            all_met = all_met and met
        verdict = "(scale)" if scale else ("met" if met else "MISSED")
        if not scale:
            verdict += f" {sum(float(r[2]) <= limit for r in rows)}/{n}"
        print(f"{table:<7} {name:<20} {med:7.3f} {f'{q[0]:.3f}-{q[-1]:.3f}':>15} "
              f"{'-' if scale else f'{limit:.3f}':>7}  {verdict:<10} "
              + " ".join(f"{float(r[2]):.3f}" for r in rows))
    print(f"\nverdict: the median of the runs against the target; n/{n}: the runs that met "
          f"it.  Targets: {'all met' if all_met else 'some MISSED'} by the median")
    return all_met


if __name__ == "__main__":
    sys.exit(main())
