"""Arrow in/out under each wire-format preset, beside the default, in one run.

    UTF8PFX_CORPUS_DIR=/work/shared/corpus python -m bench.arrow_presets [--rounds N] [--n N]

The same column (cldr_names.tsv repeated, as `python -m bench --arrow`) is
written with write_arrow and read back with decode_arrow under every preset
and both encodings; every row runs once per round, interleaved, timed in
thread CPU time; the table gives the median ns/value and the ratio to
prefix="varint", encoding="utf-8" measured in the same rounds (below 1 =
faster).  A "with nulls" column (every 8th value null) compares varint+1
(null markers, the default) with varint (nulls="empty").
"""
import argparse
import statistics
import sys
import time

from bench.arrow import names
from bench.report import cpu_model

PRESETS = ["varint", "zigzag", "varint+1", "u16be", "i32be", "u32le"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--n", type=int, default=1_000_000)
    args = ap.parse_args(argv)
    try:
        import pyarrow as pa
    except ImportError:
        print("pyarrow is not installed (pip install '.[arrow]')", file=sys.stderr)
        return 1
    import utf8pfx
    from utf8pfx import BufferWriter, decode_arrow

    vals = names(args.n)
    if vals is None:
        print("cldr_names.tsv not found: set UTF8PFX_CORPUS_DIR", file=sys.stderr)
        return 1
    arr = pa.array(vals, pa.utf8())
    with_nulls = pa.array([None if i % 8 == 0 else v for i, v in enumerate(vals)], pa.utf8())
    combos = [(p, "utf-8") for p in PRESETS] + [(p, "mutf-8") for p in ("varint", "u16be")]
    blobs = {}
    for pf, enc in combos:
        w = BufferWriter(prefix=pf, encoding=enc)
        w.write_arrow(arr)
        blobs[pf, enc] = w.getvalue()
    rows = {}
    for pf, enc in combos:
        def wr(pf=pf, enc=enc):
            BufferWriter(prefix=pf, encoding=enc).write_arrow(arr)

        def rd(pf=pf, enc=enc):
            decode_arrow(blobs[pf, enc], prefix=pf, encoding=enc)

        rows["write_arrow", pf, enc] = wr
        rows["decode_arrow", pf, enc] = rd
    rows["write_arrow nulls", "varint", "utf-8"] = (
        lambda: BufferWriter().write_arrow(with_nulls, nulls="empty"))
    rows["write_arrow nulls", "varint+1", "utf-8"] = (
        lambda: BufferWriter(prefix="varint+1").write_arrow(with_nulls))
    nb = BufferWriter(prefix="varint+1")
    nb.write_arrow(with_nulls)
    nblob = nb.getvalue()
    eb = BufferWriter()
    eb.write_arrow(with_nulls, nulls="empty")
    eblob = eb.getvalue()
    rows["decode_arrow nulls", "varint", "utf-8"] = lambda: decode_arrow(eblob)
    rows["decode_arrow nulls", "varint+1", "utf-8"] = (
        lambda: decode_arrow(nblob, prefix="varint+1"))

    times = {k: [] for k in rows}
    for f in rows.values():  # warm-up
        f()
    for _ in range(args.rounds):
        for k, f in rows.items():
            t0 = time.thread_time_ns()
            f()
            times[k].append(time.thread_time_ns() - t0)
    import os
    print("CPU: %s, %d logical CPUs, load average %.2f; CPython %s; utf8pfx isa()=%s; "
          "pyarrow %s" % (cpu_model(), os.cpu_count() or 0, os.getloadavg()[0],
                          sys.version.split()[0], utf8pfx.isa(), pa.__version__))
    print("input: %d names of cldr_names.tsv, %d bytes of Arrow buffers; %d rounds + 1 warm-up, rows "
          "interleaved, thread CPU time, median" % (len(vals), arr.nbytes, args.rounds))
    print()
    print("| row | prefix | encoding | ns/value | vs varint/utf-8 (same run) |")
    print("|---|---|---|--:|--:|")
    for k in rows:
        med = statistics.median(times[k]) / len(vals)
        base_key = (k[0], "varint", "utf-8")
        base = statistics.median(times[base_key]) / len(vals)
        print("| %s | %s | %s | %.1f | %.2f |" % (k[0], k[1], k[2], med, med / base))
    return 0


if __name__ == "__main__":
    sys.exit(main())
