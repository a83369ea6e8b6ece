"""Arrow in / Arrow out benchmark: utf8pfx's Arrow path against
what a user has to do without it, on the names of the shared corpus
(../shared/corpus/cldr_names.tsv, or $UTF8PFX_CORPUS_DIR/cldr_names.tsv)
repeated to a million values.

    python -m bench.arrow [--quick|--full] [--values N] [--json PATH]

Every row of a table runs in the same process, interleaved round by round
(order rotated each round) so that load from other jobs on a shared machine
hits every row alike; the clock is this thread's CPU time (see
bench/timing.py); tables give the median and the ratios of medians.

Rows, Arrow in (the input is one pyarrow utf8 array, made before timing):
  arrow        w.clear(); w.write_arrow(arr)          (writer reused, pre-sized)
  strings      w.clear(); w.write_strings(list_of_str) (the str list made before timing)
  pylist       w.clear(); w.write_strings(arr.to_pylist())  (what a user does today)
  copy         floor: memcpy of the array's value bytes into an existing buffer
  pl_arrow     w.clear(); w.write_arrow(polars_series)     (string_view)
  pl_list      w.clear(); w.write_strings(polars_series.to_list())
Arrow out (the input is the blob of those values):
  decode_arrow pyarrow.array(utf8pfx.decode_arrow(blob))   (Arrow array, no str)
  read_arrow   pyarrow.array(BufferReader(blob).read_strings_arrow())
  via_list     pyarrow.array(BufferReader(blob).read_strings())  (today)
  read_strings BufferReader(blob).read_strings()  (the str list alone)
  copy_blob    floor: memcpy of the blob into an existing buffer
Targets: arrow >= 10x faster than pylist; arrow <= 3x copy;
decode_arrow >= 20x faster than via_list; decode_arrow <= 3x copy_blob;
pl_arrow <= 1.5x arrow (polars' string_view against pyarrow's utf8).
The copy floors write into an existing buffer, which is stricter than a
copy into a fresh bytes (that one also pays for the new pages).
"""
import json
import os
import platform
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(HERE))

from bench import mode_parser, timing, workloads  # noqa: E402
from bench.report import cpu_model  # noqa: E402

MODES = {"quick": {"rounds": 7, "warmup": 1}, "full": {"rounds": 21, "warmup": 2}}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def names(n):
    """n names of the corpus, the file repeated as often as needed; None
    without it."""
    base = workloads.cldr_names()
    return None if base is None else (base * (n // len(base) + 1))[:n]


def rows(values):
    import pyarrow as pa

    import utf8pfx

    arr = pa.array(values, type=pa.utf8())
    strs = list(values)
    vbuf = memoryview(arr.buffers()[2])[: arr.buffers()[2].size]
    vdst = bytearray(len(vbuf))
    w = utf8pfx.BufferWriter()
    w.write_strings(values)
    blob = w.getvalue()
    w.reserve(len(blob) + 64)
    bdst = bytearray(len(blob))

    def clear_write_arrow():
        w.clear()
        w.write_arrow(arr)

    def clear_write_strings():
        w.clear()
        w.write_strings(strs)

    def clear_pylist():
        w.clear()
        w.write_strings(arr.to_pylist())

    def copy_values():
        vdst[:] = vbuf

    def decode_arrow():
        return pa.array(utf8pfx.decode_arrow(blob))

    def read_arrow():
        return pa.array(utf8pfx.BufferReader(blob).read_strings_arrow())

    def via_list():
        return pa.array(utf8pfx.BufferReader(blob).read_strings())

    def read_strings():
        return utf8pfx.BufferReader(blob).read_strings()

    def copy_blob():
        bdst[:] = blob

    writer_rows = {"arrow": clear_write_arrow, "strings": clear_write_strings,
                   "pylist": clear_pylist, "copy": copy_values}
    try:
        import polars as pl
        ser = pl.Series(values)

        def pl_arrow():
            w.clear()
            w.write_arrow(ser)

        def pl_list():
            w.clear()
            w.write_strings(ser.to_list())

        writer_rows.update(pl_arrow=pl_arrow, pl_list=pl_list)
    except ImportError:
        log("note: polars not installed: pl_* rows skipped")
    reader_rows = {"decode_arrow": decode_arrow, "read_arrow": read_arrow,
                   "via_list": via_list, "read_strings": read_strings, "copy_blob": copy_blob}

    # the rows must produce the same thing before they are timed
    clear_write_arrow()
    a = w.getvalue()
    clear_pylist()
    assert a == w.getvalue() == blob
    if "pl_arrow" in writer_rows:
        writer_rows["pl_arrow"]()
        assert w.getvalue() == blob
    assert decode_arrow().equals(arr) and read_arrow().equals(arr) and via_list().equals(arr)
    info = {"values": len(values), "value_bytes": len(vbuf), "blob_bytes": len(blob),
            "pyarrow": pa.__version__, "isa": utf8pfx.isa()}
    return writer_rows, reader_rows, info


def measure(fns, rounds, warmup):
    return timing.interleaved(fns, rounds, warmup, clock=time.thread_time_ns, gc_off=True)


def table(title, samples, n):
    med = {k: statistics.median(v) for k, v in samples.items()}
    print(f"\n{title}")
    print("| row | ns/value | ms/run | ±IQR/2 % |")
    print("|---|--:|--:|--:|")
    for k, v in samples.items():
        q = statistics.quantiles(v, n=4) if len(v) >= 4 else [min(v), 0, max(v)]
        print(f"| {k} | {med[k] / n:.1f} | {med[k] / 1e6:.1f} | "
              f"{100 * (q[2] - q[0]) / (2 * med[k]):.0f} |")
    return med


def main(argv=None):
    p = mode_parser("python -m bench.arrow", __doc__)
    p.add_argument("--values", type=int, default=1_000_000)
    p.add_argument("--json", metavar="PATH")
    a = p.parse_args(argv)
    mode = MODES[a.mode or "quick"]
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        print("SKIP: pyarrow is not installed (pip install '.[arrow]')")
        return 0
    values = names(a.values)
    if values is None:
        print("SKIP: ../shared/corpus/cldr_names.tsv is absent")
        return 0
    writer_rows, reader_rows, info = rows(values)
    n = len(values)
    print(f"CPU: {cpu_model()}, {os.cpu_count()} logical CPUs, load average "
          f"{os.getloadavg()[0]:.2f}; CPython {platform.python_version()}; "
          f"utf8pfx isa()={info['isa']}; pyarrow {info['pyarrow']}")
    print(f"input: {n} names of cldr_names.tsv (repeated), {info['value_bytes']} value bytes, "
          f"blob {info['blob_bytes']} bytes; {mode['rounds']} rounds + {mode['warmup']} "
          "warm-up, rows interleaved, thread CPU time")
    ws = measure(writer_rows, mode["rounds"], mode["warmup"])
    wm = table("Arrow in", ws, n)
    rs = measure(reader_rows, mode["rounds"], mode["warmup"])
    rm = table("Arrow out", rs, n)
    checks = [
        ("arrow vs pylist (>= 10x faster)", wm["pylist"] / wm["arrow"], ">=", 10),
        ("arrow / copy (<= 3x)", wm["arrow"] / wm["copy"], "<=", 3),
        ("decode_arrow vs via_list (>= 20x faster)", rm["via_list"] / rm["decode_arrow"],
         ">=", 20),
        ("read_arrow vs via_list (>= 20x faster)", rm["via_list"] / rm["read_arrow"], ">=", 20),
    ]
    checks.append(("decode_arrow / copy_blob (<= 3x)", rm["decode_arrow"] / rm["copy_blob"],
                   "<=", 3))
    if "pl_arrow" in wm:
        checks.append(("pl_arrow / arrow (<= 1.5x)", wm["pl_arrow"] / wm["arrow"], "<=", 1.5))
        checks.append(("pl_arrow vs pl_list (info)", wm["pl_list"] / wm["pl_arrow"], None, 0))
    checks.append(("arrow vs strings (info: list of str already made)",
                   wm["strings"] / wm["arrow"], None, 0))
    print("\n| target | ratio | result |")
    print("|---|--:|---|")
    ok = True
    for name, r, op, lim in checks:
        if op is None:
            res = "info"
        else:
            passed = r >= lim if op == ">=" else r <= lim
            ok &= passed
            res = "PASS" if passed else "FAIL"
        print(f"| {name} | {r:.2f}x | {res} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"info": info, "writer": ws, "reader": rs}, f)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
