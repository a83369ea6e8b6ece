"""Reader benchmark (issue 4): decode VInt-prefixed UTF-8 back into str.

Self-contained (the shared harness lives beside it):

    python bench/bench_reader.py [--quick] [--repeat N]

For each workload (a seeded list of strings whose UTF-8 adds up to ~256 KB,
the size the writer's suite uses) every approach turns the *serialized*
form back into the list of str; the timings are interleaved, each sample
is a loop long enough to last ~2 ms, and the median of the samples is
reported per string.

Approaches
  utf8pfx      BufferReader(blob).read_strings()
  decode_all   utf8pfx.decode_all(blob)
  pyref        pure-Python reference: varint loop + bytes.decode
  protobuf     Message.FromString(blob) + list(m.s), one `repeated string`
               field, message class built from a FileDescriptorProto (upb)
  msgpack      msgpack.unpackb(blob) of the packed list
  decode       [p.decode() for p in payloads]: CPython's decoder alone on
               pre-sliced payloads (the "bytes.decode" baseline)
  copy         [mv[a:b].tobytes() for (a, b) in spans]: a plain copy of
               every payload into a new object (the "copy" baseline)

Targets (issue 4), checked at the end, same run:
  short strings   utf8pfx >= 3x pyref, faster than protobuf and msgpack
  long ASCII      utf8pfx within 1.5x of copy
  long non-ASCII  utf8pfx >= 2x decode
"""
import argparse
import gc
import random
import statistics
import sys
import time
import zlib
import os

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import utf8pfx  # noqa: E402
from utf8pfx import BufferReader, BufferWriter, decode_all  # noqa: E402

SEED = 20261130
TARGET_BYTES = 256 * 1024
MAX_STRINGS = 16384

_LETTERS = "eeeeeeeeeeeetttttttttaaaaaaaaoooooooiiiiiiinnnnnnnssssssrrrrrrhhhhhhllllddddcccuuummwwffggyyppbbvkjxqz"
_LATIN1 = [chr(c) for c in range(0xC0, 0x100) if c not in (0xD7, 0xF7)]
_CYR = [chr(c) for c in range(0x430, 0x450)]
_EMOJI = [chr(c) for c in range(0x1F600, 0x1F650)]


def _word(rng, kind):
    if kind == "cjk":
        return "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(rng.randint(2, 12)))
    if kind == "cyrillic":
        return "".join(rng.choices(_CYR, k=rng.randint(1, 11)))
    w = "".join(rng.choices(_LETTERS, k=rng.randint(1, 10)))
    if kind == "latin1" and rng.random() < 0.3:
        i = rng.randrange(len(w))
        w = w[:i] + rng.choice(_LATIN1) + w[i + 1:]
    if kind == "emoji" and rng.random() < 0.3:
        w = rng.choice(_EMOJI)
    if kind == "mixed":
        w = _word(rng, rng.choice(("ascii", "latin1", "cyrillic", "cjk", "emoji")))
    return w


_MARK = {"ascii": "", "latin1": "é", "cyrillic": "ж", "cjk": "中", "emoji": "😀", "mixed": "😀"}


def make_strings(kind, length):
    """Distinct strings of `length` code points (all of the kind's PEP 393 width)."""
    rng = random.Random(SEED ^ zlib.crc32(f"{kind}/{length}".encode()))
    out, total = [], 0
    while total < TARGET_BYTES and len(out) < MAX_STRINGS:
        parts, n = [], 0
        while n < length:
            w = _word(rng, kind)
            parts.append(w)
            n += len(w) + 1
        s = " ".join(parts)[:length]
        if _MARK[kind] and not any(ord(c) >= ord(_MARK[kind]) for c in s):
            s = _MARK[kind] + s[1:]
        s = s[:length]
        out.append(s)
        total += len(s.encode())
    return out


WORKLOADS = [(k, n) for k in ("ascii", "latin1", "cyrillic", "cjk", "emoji", "mixed")
             for n in (8, 20)] + \
            [(k, n) for k in ("ascii", "latin1", "cyrillic", "cjk", "emoji") for n in (4096,)]


# ------------------------------------------------------------ approaches


def py_reference(blob):
    out, pos, n = [], 0, len(blob)
    while pos < n:
        v = shift = 0
        while True:
            b = blob[pos]
            pos += 1
            v |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
        out.append(blob[pos:pos + v].decode("utf-8"))
        pos += v
    return out


def pb_class():
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="u8p_reader_bench.proto",
                                             package="u8p_reader_bench", syntax="proto3")
    msg = fdp.message_type.add(name="Strings")
    msg.field.add(name="s", number=1, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    desc = pool.FindMessageTypeByName("u8p_reader_bench.Strings")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


def approaches(strings):
    w = BufferWriter()
    w.write_strings(strings)
    blob = w.getvalue()
    spans, pos, r = [], 0, BufferReader(blob)
    while r.remaining:
        n = r.read_vint()
        spans.append((r.position, r.position + n))
        r.position += n
    r.close()
    payloads = [blob[a:b] for a, b in spans]
    mv = memoryview(blob)
    out = {
        "utf8pfx": lambda: BufferReader(blob).read_strings(),
        "decode_all": lambda: decode_all(blob),
        "pyref": lambda: py_reference(blob),
        "decode": lambda: [p.decode() for p in payloads],
        "copy": lambda: [mv[a:b].tobytes() for a, b in spans],
    }
    try:
        cls = pb_class()
        m = cls()
        m.s.extend(strings)
        pb = m.SerializeToString()
        out["protobuf"] = lambda: list(cls.FromString(pb).s)
    except ImportError:
        pass
    try:
        import msgpack
        mp = msgpack.packb(strings)
        out["msgpack"] = lambda: msgpack.unpackb(mp)
    except ImportError:
        pass
    for name, fn in out.items():
        got = fn()
        if name != "copy" and got != strings:
            raise SystemExit(f"{name} decoded something else")
    return out


def measure(fns, repeat, budget_s=0.002):
    loops = {}
    for name, fn in fns.items():
        k, t = 1, 0.0
        while True:
            t0 = time.perf_counter()
            for _ in range(k):
                fn()
            t = time.perf_counter() - t0
            if t >= budget_s:
                break
            k *= 2
        loops[name] = k
    samples = {name: [] for name in fns}
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for name, fn in fns.items():  # interleaved
                k = loops[name]
                t0 = time.perf_counter_ns()
                for _ in range(k):
                    fn()
                samples[name].append((time.perf_counter_ns() - t0) / k)
    finally:
        if gc_was:
            gc.enable()
    return {name: statistics.median(v) for name, v in samples.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=31)
    ap.add_argument("--quick", action="store_true", help="3 repeats, fewer workloads")
    args = ap.parse_args(argv)
    repeat = 3 if args.quick else args.repeat
    wls = WORKLOADS[::3] if args.quick else WORKLOADS
    try:
        from google.protobuf import __version__ as pbv
        from google.protobuf.internal import api_implementation
        pbinfo = f"{pbv} ({api_implementation.Type()})"
    except ImportError:
        pbinfo = "not installed"
    try:
        import msgpack
        mpinfo = ".".join(map(str, msgpack.version))
    except ImportError:
        mpinfo = "not installed"
    print(f"python {sys.version.split()[0]}  utf8pfx decode kernels: "
          f"{utf8pfx._core._decode_isa()}  protobuf {pbinfo}  msgpack {mpinfo}  "
          f"repeat={repeat} (median)")
    cols = ["utf8pfx", "decode_all", "pyref", "protobuf", "msgpack", "decode", "copy"]
    print(f"{'workload':<15}{'n':>6} " + "".join(f"{c:>15}" for c in cols) +
          "   ns/string; x = speedup of utf8pfx over each")
    verdicts = []
    for kind, length in wls:
        strings = make_strings(kind, length)
        fns = approaches(strings)
        med = measure(fns, repeat)
        n = len(strings)
        ours = med["utf8pfx"]
        cells = []
        for c in cols:
            if c not in med:
                cells.append(f"{'-':>15}")
                continue
            t = med[c] / n
            cells.append(f"{t:>15.1f}" if c == "utf8pfx" else f"{t:>9.1f} {med[c] / ours:>4.1f}x")
        print(f"{kind + '/' + str(length):<15}{n:>6} " + "".join(cells))
        if length <= 40:
            verdicts.append((f"{kind}/{length} >= 3x pyref", med["pyref"] / ours >= 3))
            for peer in ("protobuf", "msgpack"):
                if peer in med:
                    verdicts.append((f"{kind}/{length} faster than {peer}", med[peer] > ours))
        elif kind == "ascii":
            verdicts.append((f"{kind}/{length} within 1.5x of copy "
                             f"({ours / med['copy']:.2f}x)", ours <= 1.5 * med["copy"]))
        else:
            verdicts.append((f"{kind}/{length} >= 2x bytes.decode "
                             f"({med['decode'] / ours:.2f}x)", med["decode"] >= 2 * ours))
    print()
    ok = sum(v for _, v in verdicts)
    for name, v in verdicts:
        print(f"  {'PASS' if v else 'MISS'}  {name}")
    print(f"targets: {ok} of {len(verdicts)} met")


if __name__ == "__main__":
    main()
