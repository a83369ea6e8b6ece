"""``utf8pfx bench``: a quick benchmark that ships with the package.

It times utf8pfx against the peers a user could pick instead, on the same
strings, in the same run, and prints ns per string and ratios (the peer's
time / utf8pfx's time: above 1 means utf8pfx is faster).

Writer (one blob of all the strings of a workload):
  utf8pfx    BufferWriter().write_strings(strings); getvalue()
  python     s.encode() and the VInt appended into one bytearray, in Python
  str.encode s.encode() per string, result dropped (transcoding alone)
  protobuf   one ``repeated string`` field: extend + SerializeToString
  msgpack    msgpack.packb(strings)
Reader (back to a list of str):
  utf8pfx    BufferReader(blob).read_strings()
  python     the VInt parsed and bytes.decode() per string, in Python
  decode     bytes.decode() per string from ready-made bytes (no prefix)
  protobuf   ParseFromString + list(field)
  msgpack    msgpack.unpackb(blob)

protobuf and msgpack are optional (``pip install utf8pfx[bench]``): missing,
their columns are left out.  The strings are rebuilt before every timed run,
so no approach can reuse a UTF-8 copy cached in a str object.  Each figure
is the best of ``repeat`` runs of the process CPU time.  The repository's
``bench/`` suite (``python -m bench`` in a checkout) is the thorough one.
"""
from __future__ import annotations

import platform
import random
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import BufferReader, BufferWriter, __version__, isa
from ._peers import cpu_model, py_read, py_write, strings_message_class
from ._reference import storage_kind
from ._stream import read_sample, split_lines

# (name, alphabet, code points per string)
_ALPHABETS = {
    "ascii": "etaoinshrdlucmfwypvbgkjqxz     ,.ETAOIN0123456789",
    "latin1": "etaoinsrdlcmu  éèàçüöäßñ",
    "cyrillic": "оеаинтсрвлкмдпуяыь  ,.ЁАБВ",
    "cjk": "".join(map(chr, range(0x4E00, 0x4E60))) + "、。",
    "emoji": "abcdefgh  " + "".join(map(chr, range(0x1F600, 0x1F610))),
}
WORKLOADS: List[Tuple[str, str, int]] = [
    (f"{kind}_{n}", kind, n) for kind in _ALPHABETS for n in (8, 1000)
] + [("sample", "sample", 0)]
TARGET = 256 * 1024  # UTF-8 bytes per workload at scale 1


def make_workload(kind: str, length: int, scale: float = 1.0) -> List[str]:
    """Seeded strings of one kind (or the package's sample lines), ~TARGET bytes."""
    target = max(1, int(TARGET * scale))
    if kind == "sample":
        base = split_lines(read_sample().decode("utf-8"))[1:]
        out = []
        size = 0
        while size < target:
            out.extend(base)
            size += sum(len(s.encode()) for s in base)
        return out
    rng = random.Random(f"utf8pfx-bench-{kind}-{length}")
    alphabet = _ALPHABETS[kind]
    out = []
    size = 0
    while size < target or len(out) < 2:
        s = "".join(rng.choices(alphabet, k=length))
        if kind != "ascii" and s.isascii():
            s = alphabet[-1] + s[1:]
        out.append(s)
        size += len(s.encode())
    return out


def _fresh(strings: List[str]) -> List[str]:
    # new str objects with no cached UTF-8
    return [s.encode("utf-8").decode("utf-8") for s in strings]


def _u8p_write(strings: List[str]) -> bytes:
    w = BufferWriter()
    w.write_strings(strings)
    return w.getvalue()


def _str_encode(strings: List[str]) -> None:
    for s in strings:
        s.encode()


def peers() -> Dict[str, Any]:
    """The optional peer modules that can be imported, by column name."""
    found: Dict[str, Any] = {}
    try:
        found["protobuf"] = strings_message_class()
    except Exception:  # not installed, or too old to build a class at run time
        pass
    try:
        import msgpack  # type: ignore[import, unused-ignore]

        found["msgpack"] = msgpack
    except ImportError:
        pass
    return found


SAMPLE_SECONDS = 0.005  # one timed sample runs the approach this long at least
MAX_LOOPS = 8  # x 256 kB of prepared strings: stays near the caches


def best_time(run: Callable[[Any], Any], prepare: Callable[[], Any], repeat: int) -> float:
    """Best time of one run(prepare()) over ``repeat`` samples; prepare is untimed.

    A sample runs the approach ``loops`` times in a row (each on its own
    prepared argument), enough to last SAMPLE_SECONDS, so one page fault or
    timer tick does not decide a figure.  Process CPU time, not wall time:
    other work on a shared machine counts less.
    """
    arg = prepare()
    t0 = time.perf_counter()
    run(arg)  # warm-up, and the calibration of loops
    once = max(time.perf_counter() - t0, 1e-7)
    loops = max(1, min(MAX_LOOPS, int(SAMPLE_SECONDS / once) + 1))
    best = float("inf")
    for _ in range(max(1, repeat)):
        args = [prepare() for _ in range(loops)]
        t0 = time.process_time()
        for a in args:
            run(a)
        best = min(best, (time.process_time() - t0) / loops)
        del args
    return best


def measure(strings: List[str], repeat: int, have: Dict[str, Any]) -> Dict[str, float]:
    """ns per string of every approach on one workload (keys 'w:NAME', 'r:NAME')."""
    n = len(strings)
    blob = _u8p_write(strings)
    assert py_write(strings) == blob and BufferReader(blob).read_strings() == strings
    payloads = [s.encode() for s in strings]
    res: Dict[str, float] = {}

    def fresh() -> List[str]:
        return _fresh(strings)

    def put(key: str, run: Callable[[Any], Any], prepare: Callable[[], Any]) -> None:
        res[key] = best_time(run, prepare, repeat) / n * 1e9

    put("w:utf8pfx", _u8p_write, fresh)
    put("w:python", lambda ss: bytes(py_write(ss)), fresh)  # bytes, as getvalue() gives
    put("w:str.encode", _str_encode, fresh)
    put("r:utf8pfx", lambda b: BufferReader(b).read_strings(), lambda: blob)
    put("r:python", py_read, lambda: blob)
    put("r:decode", lambda ps: [p.decode() for p in ps], lambda: payloads)
    if "protobuf" in have:
        cls = have["protobuf"]

        def pb_write(ss: List[str]) -> bytes:
            m = cls()
            m.s.extend(ss)
            return bytes(m.SerializeToString())

        pb_blob = pb_write(strings)

        def pb_read(b: bytes) -> List[str]:
            m = cls()
            m.ParseFromString(b)
            return list(m.s)

        put("w:protobuf", pb_write, fresh)
        put("r:protobuf", pb_read, lambda: pb_blob)
    if "msgpack" in have:
        mp = have["msgpack"]
        mp_blob = mp.packb(strings)
        put("w:msgpack", mp.packb, fresh)
        put("r:msgpack", mp.unpackb, lambda: mp_blob)
    return res


def _kind(strings: List[str]) -> str:
    kinds = {storage_kind(s) for s in strings}
    return kinds.pop() if len(kinds) == 1 else "mix"


def table(rows: List[Tuple[str, str, float, Dict[str, float]]], side: str, peers_: List[str]) -> str:
    head = ["workload", "kind", "B/str", "utf8pfx ns/str"] + [f"x {p}" for p in peers_]
    lines = ["| " + " | ".join(head) + " |",
             "|---|---|" + "--:|" * (len(head) - 2)]
    for name, kind, bps, res in rows:
        me = res[f"{side}:utf8pfx"]
        cells = [name, kind, f"{bps:.0f}", f"{me:.1f}"]
        cells += [f"{res[f'{side}:{p}'] / me:.2f}x" for p in peers_]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def save_plot(rows: List[Tuple[str, str, float, Dict[str, float]]], path: str, title: str) -> None:
    """Bars of GB/s of UTF-8 per workload and approach, writer and reader side by side."""
    import matplotlib  # type: ignore[import, unused-ignore]

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # type: ignore[import, unused-ignore]

    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=False)
    for ax, side, label in ((axes[0], "w", "str -> blob (writer)"),
                            (axes[1], "r", "blob -> str (reader)")):
        names = [r[0] for r in rows]
        keys = [k.split(":", 1)[1] for k in rows[0][3] if k.startswith(side + ":")]
        width = 0.8 / len(keys)
        for j, key in enumerate(keys):
            gbps = [r[2] / r[3][f"{side}:{key}"] for r in rows]  # bytes per ns = GB/s
            ax.bar([i + j * width for i in range(len(rows))], gbps, width, label=key)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(rows))])
        ax.set_xticklabels(names, rotation=60, ha="right", fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("GB/s of UTF-8 (log)")
        ax.set_title(label)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def machine() -> str:
    return (f"utf8pfx {__version__}, kernels {isa()}, CPython {platform.python_version()}, "
            f"{cpu_model()}, {platform.system()} {platform.machine()}")


def main(repeat: int = 7, plot: Optional[str] = None, scale: float = 1.0,
         out: Any = None) -> int:
    """Run the quick benchmark, print both tables; 2 when --plot cannot be made."""
    out = out or sys.stdout
    if plot:
        try:
            import matplotlib  # type: ignore[import, unused-ignore]  # noqa: F401
        except ImportError:
            print("utf8pfx bench: --plot needs matplotlib: pip install matplotlib "
                  "(or pip install 'utf8pfx[bench]')", file=sys.stderr)
            return 2
    have = peers()
    missing = [p for p in ("protobuf", "msgpack") if p not in have]
    print(f"# {machine()}", file=out)
    if missing:
        print(f"# not installed, left out: {', '.join(missing)} "
              f"(pip install 'utf8pfx[bench]')", file=out)
    rows = []
    for name, kind, length in WORKLOADS:
        strings = make_workload(kind, length, scale)
        bps = sum(len(s.encode()) for s in strings) / len(strings)
        rows.append((name, _kind(strings), bps, measure(strings, repeat, have)))
        print(f"# {name}: {len(strings)} strings", file=sys.stderr)
    pw = ["python", "str.encode"] + [p for p in ("protobuf", "msgpack") if p in have]
    pr = ["python", "decode"] + [p for p in ("protobuf", "msgpack") if p in have]
    print("\nWriter: ns per string; x = peer's time / utf8pfx's time\n", file=out)
    print(table(rows, "w", pw), file=out)
    print("\nReader: ns per string; x = peer's time / utf8pfx's time\n", file=out)
    print(table(rows, "r", pr), file=out)
    if plot:
        save_plot(rows, plot, machine())
        print(f"\nplot saved to {plot}", file=out)
    return 0
