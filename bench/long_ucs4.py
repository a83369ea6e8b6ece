"""Long UCS4 on real text: write_string and encode() against str.encode.

    python -m bench.long_ucs4 [--rounds N]

Strings: the records of ../shared/corpus/cldr_emoji.tsv (or
$UTF8PFX_CORPUS_DIR; "emoji, its name in every CLDR locale") joined with
spaces and cut into 8192-code-point strings, the first 64 of them that hold
an astral code point (UCS4 storage).  Each round times, over the 64
strings, str.encode(), utf8pfx.encode() and write_string into a writer
cleared before each call (it keeps its capacity: the one-pass path); the
best round of each is kept.  The same strings every round (warm: what the
kernels do, not the memory); ratios are t(str.encode) / t(utf8pfx).
Exits 0 with a note when the corpus is absent.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(HERE))

from bench import workloads  # noqa: E402


def strings(n_cp=8192, count=64):
    corpus_dir = os.environ.get("UTF8PFX_CORPUS_DIR", workloads.CORPUS_DIR)
    path = os.path.join(corpus_dir, "cldr_emoji.tsv")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        text = " ".join(" ".join(line.rstrip("\n").split("\t")) for line in f if "\t" in line)
    cut = [text[i:i + n_cp] for i in range(0, len(text) - n_cp, n_cp)]
    return [s for s in cut if max(s) > "\uffff"][:count]


def main(argv=None):
    import utf8pfx
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args(argv)
    L = strings()
    if not L:
        print("long_ucs4: no ../shared/corpus/cldr_emoji.tsv (set UTF8PFX_CORPUS_DIR); skipped")
        return 0
    w = utf8pfx.BufferWriter()

    def one(s):
        w.clear()
        w.write_string(s)

    for s in L:  # same bytes as CPython, and the writer sized once
        one(s)
        assert w.getvalue()[-len(s.encode()):] == s.encode()
    best = {}
    for _ in range(args.rounds):
        for name, f in (("str.encode", str.encode), ("utf8pfx.encode", utf8pfx.encode),
                        ("write_string", one)):
            t0 = time.perf_counter()
            for s in L:
                f(s)
            dt = (time.perf_counter() - t0) / len(L) * 1e9
            best[name] = min(best.get(name, dt), dt)
    base = best["str.encode"]
    print(f"{len(L)} strings x 8192 code points (cldr_emoji), isa={utf8pfx.isa()}, "
          f"python={sys.version.split()[0]}, best of {args.rounds} rounds, ns per string:")
    for name, t in best.items():
        print(f"  {name:15s} {t:9.0f}   {base / t:5.2f}x str.encode")
    return 0


if __name__ == "__main__":
    sys.exit(main())
