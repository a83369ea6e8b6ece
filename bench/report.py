"""The one table printer, the run header, the targets and the plot."""
import os
import platform
import sys
import sysconfig

from . import package_module
from .timing import summary

# Ratio columns of the summary table: (column, peer key, utf8pfx key).
# Value = t_peer / t_utf8pfx, so > 1 means utf8pfx is faster.  Per-call
# peers compare with write_string per call; the whole-list peers (protobuf,
# msgpack, which return bytes) with write_strings + getvalue().
RATIOS = (("x py", "py", "one"), ("x encode", "encode", "one"),
          ("x pb", "pb", "batch_bytes"), ("x pb warm", "pb_warm", "batch_bytes"),
          ("x mp", "mp", "batch_bytes"), ("x copy", "copy", "one"),
          ("x noop", "noop", "one"))
# The utf8pfx rows of the summary table: (key, column prefix); ns/str and
# GB/s of each.
MAIN = (("one", ""), ("batch", "batch "))

# Reader suite: every ratio is t_peer / t_read_strings (> 1: read_strings
# faster); decode_all gets its own ns/str and GB/s.
READER_RATIOS = (("x py", "py", "read"), ("x decode", "decode", "read"),
                 ("x pb", "pb", "read"), ("x mp", "mp", "read"),
                 ("x copy", "copy", "read"), ("x copy_new", "copy_new", "read"))
READER_MAIN = (("read", ""), ("all", "decode_all "))


def table(headers, rows, out=print):
    """A Markdown pipe table, padded so it also reads as plain text.
    Numbers are right-aligned."""
    cells = [[str(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    right = [bool(cells) and all(_numeric(r[i]) for r in cells)
             for i in range(len(headers))]

    def line(vals):
        return "| " + " | ".join(v.rjust(w) if r else v.ljust(w)
                                 for v, w, r in zip(vals, widths, right)) + " |"
    out(line(headers))
    out("|" + "|".join(("-" * (w + 1) + ":") if r else ("-" * (w + 2))
                       for w, r in zip(widths, right)) + "|")
    for r in cells:
        out(line(r))


def _numeric(s):
    try:
        float(s.rstrip("x%").replace(",", ""))
        return True
    except ValueError:
        return s in ("-", "")


# --- header -------------------------------------------------------------------------
def cpu_model():
    """The CPU's model name, as `utf8pfx bench` names it."""
    return package_module("_peers").cpu_model()


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    return [x for x in ("sse4_1", "sse4_2", "avx2", "avx512f",
                                        "avx512bw", "avx512vbmi2") if x in have]
    except OSError:
        pass
    return []


def header(mode, params, u8p, pb, mp, suite="writer"):
    h = {
        "mode": mode,
        "params": params,
        "cpu": cpu_model(),
        "cpu_flags": cpu_flags(),
        "cpus": os.cpu_count(),
        "loadavg": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "python": sys.version.split()[0] + " " + platform.python_implementation(),
        "cc": sysconfig.get_config_var("CC"),
        "cflags": (sysconfig.get_config_var("CFLAGS") or "")
                  + " + setup.py: -Wall -Wextra -fvisibility=hidden "
                  + ("-O0 -g (UTF8PFX_DEBUG=1)" if os.environ.get("UTF8PFX_DEBUG") == "1"
                     else "-O3"),
        "utf8pfx": None, "utf8pfx_isa": None, "UTF8PFX_ISA": os.environ.get("UTF8PFX_ISA"),
        "protobuf": pb, "msgpack": mp,
    }
    if u8p is not None:
        h["utf8pfx"] = f"{u8p.__version__} ({os.path.dirname(u8p.__file__)})"
        h["utf8pfx_isa"] = u8p.isa()
    if suite != "writer":               # the writer's header stays as it was
        h["suite"] = suite
        h["utf8pfx_decode_isa"] = (u8p._core._decode_isa()
                                   if u8p is not None else None)
    return h


def print_header(h, out=print):
    pb, mp = h["protobuf"], h["msgpack"]
    out(f"# utf8pfx {h.get('suite', 'writer')} benchmark ({h['mode']}: {h['params']})")
    out(f"CPU      : {h['cpu']} ({h['cpus']} logical CPUs; "
        f"{' '.join(h['cpu_flags']) or 'no SIMD flags listed'})")
    if h["loadavg"]:
        out(f"load avg : {' '.join('%.2f' % x for x in h['loadavg'])} "
            "(shared machine: other jobs may run during the benchmark)")
    out(f"Python   : {h['python']}")
    out(f"build    : {h['cc']} {h['cflags']}")
    out(f"utf8pfx  : {h['utf8pfx'] or 'not importable'}; isa() = {h['utf8pfx_isa']}"
        + (f"; decode kernels: {h['utf8pfx_decode_isa']}"
           if h.get("utf8pfx_decode_isa") else "")
        + (f" (UTF8PFX_ISA={h['UTF8PFX_ISA']})" if h["UTF8PFX_ISA"] else ""))
    out("protobuf : " + (f"{pb['version']}, api_implementation.Type() = {pb['backend']!r}"
                         if pb else "not installed"))
    out("msgpack  : " + (f"{mp['version']}, C extension: {mp['extension']}"
                         if mp else "not installed"))


# --- results ------------------------------------------------------------------------
def medians(results):
    """{workload: {approach: median ns per run}}"""
    return {wl: {k: summary(r["samples"])["median"] for k, r in rows.items()}
            for wl, rows in results.items()}


def _ns(t, n):
    return f"{t / n:.1f}" if t is not None else "-"


def _ratio(num, den):
    return f"{num / den:.2f}x" if num is not None and den else "-"


def print_approach_table(workloads, results, keys, out=print):
    """ns per string of every approach, spread of each in %."""
    rows = []
    for wl in workloads:
        r = results.get(wl.name)
        if not r:
            continue
        row = [wl.name, wl.storage, len(wl.strings)]
        for k in keys:
            if k in r:
                s = summary(r[k]["samples"])
                row.append(f"{s['median'] / len(wl.strings):.1f} ±{s['spread_pct']:.0f}%")
            else:
                row.append("-")
        rows.append(row)
    table(["workload", "storage", "strings"] + list(keys), rows, out)


def print_summary_table(workloads, med, out=print, main=MAIN, ratios=RATIOS):
    """Per workload: UTF-8 bytes per string, ns/str and GB/s (UTF-8 bytes
    per ns) of each `main` utf8pfx row, then the `ratios` columns."""
    rows = []
    for wl in workloads:
        m = med.get(wl.name)
        if not m or main[0][0] not in m:
            continue
        n, b = len(wl.strings), wl.utf8_bytes
        row = [wl.name, wl.storage, f"{b / n:.0f}"]
        for k, _ in main:
            row += [_ns(m.get(k), n), f"{b / m[k]:.2f}" if k in m else "-"]
        row += [_ratio(m.get(peer), m.get(mine)) for _, peer, mine in ratios]
        rows.append(row)
    table(["workload", "storage", "B/str"]
          + [h for _, p in main for h in (f"{p}ns/str", f"{p}GB/s")]
          + [c for c, _, _ in ratios], rows, out)


# --- targets --------------------------------------------------------------------
def _long(wl, storage):
    return wl.group == "long" and wl.storage == storage


def _short(wl):
    return wl.group == "short"


def _short_ascii(wl):
    return wl.group == "short" and wl.storage == "ascii"


# (description, workload filter, value(m, wl) or None, pass(value), format)
TARGETS = (
    ("ASCII, >= 4096 cp: write_string >= 0.8x the plain copy (t_copy/t_one)",
     lambda w: _long(w, "ascii"), lambda m, w: _div(m, "copy", "one"),
     lambda v: v >= 0.8, "{:.2f}x"),
    ("UCS1, >= 4096 cp: write_string >= 8x str.encode",
     lambda w: _long(w, "ucs1"), lambda m, w: _div(m, "encode", "one"),
     lambda v: v >= 8, "{:.2f}x"),
    ("UCS2, >= 4096 cp: write_string >= 3x str.encode",
     lambda w: _long(w, "ucs2"), lambda m, w: _div(m, "encode", "one"),
     lambda v: v >= 3, "{:.2f}x"),
    ("UCS4, >= 4096 cp: write_string >= 8x str.encode",
     lambda w: _long(w, "ucs4"), lambda m, w: _div(m, "encode", "one"),
     lambda v: v >= 8, "{:.2f}x"),
    ("short (<= 40 cp), one call: write_string within 1.5x of a no-op call "
     "(t_one/t_noop)", _short, lambda m, w: _div(m, "one", "noop"),
     lambda v: v <= 1.5, "{:.2f}x"),
    ("short, one call: write_string >= 5x the pure-Python baseline",
     _short, lambda m, w: _div(m, "py", "one"), lambda v: v >= 5, "{:.2f}x"),
    ("short, one call: write_string faster than str.encode alone "
     "(t_encode/t_one > 1)", _short, lambda m, w: _div(m, "encode", "one"),
     lambda v: v > 1, "{:.2f}x"),
    ("short ASCII batch: write_strings <= 6 ns per string",
     _short_ascii, lambda m, w: m["batch"] / len(w.strings) if "batch" in m else None,
     lambda v: v <= 6, "{:.2f} ns"),
    ("short batch: write_strings+getvalue >= 2x protobuf upb (fresh strs)",
     _short, lambda m, w: _div(m, "pb", "batch_bytes"), lambda v: v >= 2, "{:.2f}x"),
    ("short batch: write_strings+getvalue >= 2x msgpack (fresh strs)",
     _short, lambda m, w: _div(m, "mp", "batch_bytes"), lambda v: v >= 2, "{:.2f}x"),
    ("utf8_length, >= 4096 cp: >= 2x faster than transcoding with "
     "write_string (t_one/t_length)", lambda w: w.group == "long",
     lambda m, w: _div(m, "one", "length"), lambda v: v >= 2, "{:.2f}x"),
)


# Reader targets, all on BufferReader.read_strings ("read"): short strings
# >= 3x pure Python and faster than protobuf and msgpack; long ASCII within
# 1.3x a plain copy (its bytes are checked and copied in one pass, so the
# copy is the floor) and within 1.1x of allocating a new bytes per record
# (copy_new: what the allocation alone costs); long non-ASCII >= 2x
# bytes.decode.
READER_TARGETS = (
    ("short (<= 40 cp): read_strings >= 3x the pure-Python reference (t_py/t_read)",
     _short, lambda m, w: _div(m, "py", "read"), lambda v: v >= 3, "{:.2f}x"),
    ("short: read_strings faster than protobuf upb (t_pb/t_read > 1)",
     _short, lambda m, w: _div(m, "pb", "read"), lambda v: v > 1, "{:.2f}x"),
    ("short: read_strings faster than msgpack (t_mp/t_read > 1)",
     _short, lambda m, w: _div(m, "mp", "read"), lambda v: v > 1, "{:.2f}x"),
    ("ASCII, >= 4096 cp: read_strings within 1.3x of the plain copy "
     "(one pass over the bytes; t_read/t_copy <= 1.3)", lambda w: _long(w, "ascii"),
     lambda m, w: _div(m, "read", "copy"), lambda v: v <= 1.3, "{:.2f}x"),
    ("ASCII, >= 4096 cp: read_strings within 1.1x of a new bytes per record "
     "(allocation + copy; t_read/t_copy_new <= 1.1)", lambda w: _long(w, "ascii"),
     lambda m, w: _div(m, "read", "copy_new"), lambda v: v <= 1.1, "{:.2f}x"),
    ("non-ASCII, >= 4096 cp: read_strings >= 2x bytes.decode (t_decode/t_read)",
     lambda w: w.group == "long" and w.storage != "ascii",
     lambda m, w: _div(m, "decode", "read"), lambda v: v >= 2, "{:.2f}x"),
)


def _div(m, a, b):
    return m[a] / m[b] if a in m and b in m and m[b] else None


def evaluate_targets(workloads, med, targets=TARGETS):
    """Each target over its workloads: PASS only if every one passes; the
    worst workload is named with its number."""
    out = []
    for desc, pick, value, ok, fmt in targets:
        vals = [(wl.name, value(med[wl.name], wl)) for wl in workloads
                if pick(wl) and wl.name in med]
        vals = [(n, v) for n, v in vals if v is not None]
        if not vals:
            out.append({"target": desc, "status": "SKIP", "detail": "no data"})
            continue
        failing = [(n, v) for n, v in vals if not ok(v)]
        # worst: the failing one furthest from passing, else the closest pass
        key = (lambda nv: nv[1]) if ok(float("inf")) else (lambda nv: -nv[1])
        worst = min(vals, key=key)
        out.append({
            "target": desc, "status": "FAIL" if failing else "PASS",
            "passed": len(vals) - len(failing), "of": len(vals),
            "worst": worst[0], "worst_value": worst[1],
            "detail": f"worst {worst[0]} = {fmt.format(worst[1])}"
                      + (f"; failing: " + ", ".join(f"{n} {fmt.format(v)}"
                                                    for n, v in failing)
                         if failing else ""),
        })
    return out


def print_targets(evals, out=print):
    out("## targets")
    for e in evals:
        count = f" {e['passed']}/{e['of']}" if "of" in e else ""
        out(f"{e['status']}{count}  {e['target']}: {e['detail']}")


# --- memory, ISA -------------------------------------------------------------
def print_memory(mem, out=print):
    rows = [[wl, k, f"{r['blob'] / 1024:.0f}", f"{r['peak'] / 1024:.0f}",
             f"{r['str_growth'] / 1024:.0f}", f"{r['str_growth_pct']:.1f}%"]
            for wl, per in mem.items() for k, r in per.items()]
    table(["corpus", "approach", "blob KiB", "tracemalloc peak KiB",
           "str growth KiB", "str growth"], rows, out)


def print_isa(workloads, isa_results, levels, keys, out=print):
    """One row per workload: for each utf8pfx row, scalar ns/str and the
    ratio t_scalar / t_level of every other level (> 1: faster than scalar).
    Returns every comparison as (workload, row, level, ratio)."""
    rows, comps = [], []
    for wl in workloads:
        row = [wl.name]
        for k in keys:
            ts = {lv: isa_results[lv].get(wl.name, {}).get(k) for lv in levels}
            base = ts.get("scalar")
            row.append(f"{base / len(wl.strings):.1f}" if base else "-")
            for lv in levels[1:]:
                row.append(_ratio(base, ts[lv]))
                if base and ts[lv]:
                    comps.append((wl.name, k, lv, base / ts[lv]))
        rows.append(row)
    hdr = ["workload"]
    for k in keys:
        hdr += [f"{k} scalar ns/str"] + [f"{k} {lv}" for lv in levels[1:]]
    table(hdr, rows, out)
    return comps


def print_isa_check(comps, levels, tolerance=0.90, out=print, recheck=None):
    """The "no workload slower than the scalar path" line.  recheck:
    {(workload, row, level): ratio} of the flagged rows timed again in one
    process (run.recheck_isa_inprocess); a row fails only if it is under
    the tolerance in both."""
    if len(levels) < 2:
        out("SKIP  no ISA level slower than scalar: only "
            f"{', '.join(levels) or 'no utf8pfx'} available in this build/CPU")
        return
    flagged = [c for c in comps if c[3] < tolerance]
    recheck = recheck or {}
    bad = [c for c in flagged if recheck.get(c[:3], c[3]) < tolerance]
    # the worst row as finally judged (a re-timed row by its one-process ratio)
    worst = min(((w, k, lv, recheck.get((w, k, lv), r)) for w, k, lv, r in comps),
                key=lambda c: c[3])
    out(f"{'FAIL' if bad else 'PASS'} {len(comps) - len(bad)}/{len(comps)}  no ISA "
        f"level slower than scalar on any workload (t_scalar/t_level >= "
        f"{tolerance}, {1 - tolerance:.0%} allowed for noise; levels: "
        f"{', '.join(levels)}): worst {worst[0]} {worst[1]} {worst[2]} = "
        f"{worst[3]:.2f}x" + ("; failing: " + ", ".join(
            f"{w} {k} {lv} {r:.2f}x" + (f" (in one process {recheck[(w, k, lv)]:.2f}x)"
                                         if (w, k, lv) in recheck else "")
            for w, k, lv, r in bad) if bad else ""))
    cleared = [c for c in flagged if c not in bad]
    if cleared:
        out(f"      {len(cleared)} row(s) under {tolerance} across processes were "
            "within it timed again in one process (scalar and the level "
            "alternated, same heap): " + ", ".join(
                f"{w} {k} {lv} {r:.2f}x -> {recheck[(w, k, lv)]:.2f}x"
                for w, k, lv, r in cleared))


def plot(workloads, med, path, keys, log=print, what="produced"):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("note: matplotlib not installed: no plot")
        return
    names = [w.name for w in workloads if w.name in med]
    by = {w.name: w for w in workloads}
    fig, ax = plt.subplots(figsize=(max(10, len(names) * 0.22), 5))
    width = 0.8 / len(keys)
    for i, k in enumerate(keys):
        ys = [by[n].utf8_bytes / med[n][k] if k in med[n] else 0 for n in names]
        ax.bar([x + i * width for x in range(len(names))], ys, width, label=k)
    ax.set_yscale("log")
    ax.set_ylabel(f"GB/s of UTF-8 {what} (log)")
    ax.set_xticks([x + (len(keys) - 1) * width / 2 for x in range(len(names))])
    ax.set_xticklabels(names, rotation=90, fontsize=6)
    ax.legend(fontsize=7, ncol=len(keys))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    log(f"plot: {path}")


# --- the presets suite (python -m bench --presets) -----------------
def _preset_keys(mode):
    from .approaches import PRESETS_MEASURED, preset_name
    return [f"{mode}:{preset_name(p, e)}" for p, e in PRESETS_MEASURED]


PRESET_MODES = (("b", "write_strings"), ("w", "write_string per call"),
                ("r", "read_strings"))
PRESET_MAIN = (("b:varint", "varint batch "),)
# ratio = t_preset / t_varint for the same strings (<= 1.10: within 10 %)
PRESET_RATIOS = tuple((k.split(":", 1)[1] + "/varint", k, "b:varint")
                      for k in _preset_keys("b")[1:])
PRESET_TARGETS = tuple(
    (f"{label}: prefix={k.split(':', 1)[1]} within 10 % of varint "
     f"(t_preset / t_varint <= 1.10)",
     lambda wl: True,
     (lambda m, wl, k=k, base=f"{mode}:varint": _div(m, k, base)),
     lambda v: v <= 1.10, "{:.2f}x")
    for mode, label in PRESET_MODES for k in _preset_keys(mode)[1:])


def print_preset_tables(workloads, med, out=print):
    """One table per mode: varint's ns/str, then t_preset / t_varint."""
    for mode, label in PRESET_MODES:
        keys = _preset_keys(mode)
        rows = []
        for wl in workloads:
            m = med.get(wl.name)
            if not m or keys[0] not in m:
                continue
            n = len(wl.strings)
            rows.append([wl.name, wl.storage, f"{wl.utf8_bytes / n:.0f}",
                         _ns(m[keys[0]], n)]
                        + [_ratio(m.get(k), m.get(keys[0])) for k in keys[1:]])
        out(f"\n### {label}: varint ns/str, then t_preset / t_varint "
            "(< 1: the preset is faster)")
        table(["workload", "storage", "B/str", "varint ns/str"]
              + [k.split(":", 1)[1] for k in keys[1:]], rows, out)
