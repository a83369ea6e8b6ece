"""Streams benchmark: StreamReader and StreamWriter against BufferReader over
an mmap, BufferWriter plus one write, and msgpack's Unpacker, on the names
of the shared corpus (../shared/corpus/cldr_names.tsv, or
$UTF8PFX_CORPUS_DIR/cldr_names.tsv), one record per name.

    python -m bench.streams [--quick|--full] [--mb N] [--names N] [--json PATH]

The blob file (--mb MB of records, 1024 in --full, 128 in --quick) is
written once to a temporary folder and read once before timing (warm page
cache).  Every row of a table runs in the same process, interleaved round
by round (order rotated each round); the clock is wall time (the rows read
a file).  Peak memory is measured in a fresh process per row: ru_maxrss
after the row minus ru_maxrss after the imports.

Reading rows (records per second; deque(..., maxlen=0) consumes in C, so
the rows time the readers, not a Python loop):
  mmap_iter       BufferReader(mmap) iterated
  stream_iter     StreamReader(file) iterated
  mmap_batches    BufferReader(mmap).batches(65536)
  stream_batches  StreamReader(file).batches(65536)
  push_4k         StreamReader() fed 4 KiB reads of the file, iterated after each feed
  msgpack         msgpack.Unpacker(file) iterated, over the same names packed
                  with msgpack.Packer.pack (when msgpack is installed)
  ascii_batches   stream_batches over the names made ASCII, each payload as
                  many "x" as its UTF-8 has bytes (same framing, same record
                  sizes): no target; what stream_batches costs above it is
                  what validating and transcoding the names costs
  floor_batches   no reader and no file: as many new strs as the file has
                  records, each a copy of its corpus name (same kind, length
                  and code points) from one packed buffer, made by
                  bench/ext/str_floor.c in lists of 65536, each dropped when
                  the next is full: what any reader of these records into
                  batches of str pays for the objects alone (no target;
                  built with the C compiler and CPython's headers at run
                  time, left out without them)
  readinto        no reader: the file read with readinto in read_size
                  chunks into one buffer, what every pull reader pays for
                  the bytes alone (no target)
Writing rows (--names N, 10 M in --full, 2 M in --quick, from a generator):
  stream_writer   StreamWriter(file).write_strings(gen); close()
  buffer_writer   BufferWriter().write_strings(gen); file.write(memoryview(writer))
  stream_each     StreamWriter(file).write_string(s) for each name; close()
  buffer_each     BufferWriter().write_string(s) for each name; one file.write
Targets: stream_iter >= 0.8x mmap_iter; stream_batches >= 0.8x mmap_batches
and >= 3x msgpack; push_4k >= 0.7x stream_iter; reader peak RSS growth <=
read_size + longest record + 32 MB; stream_writer >= 0.9x buffer_writer.
"""
import collections
import itertools
import json
import mmap
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(HERE))

from bench import mode_parser, timing, workloads  # noqa: E402
from bench.report import cpu_model  # noqa: E402

MODES = {"quick": {"rounds": 5, "warmup": 1, "mb": 128, "names": 2_000_000},
         "full": {"rounds": 7, "warmup": 1, "mb": 1024, "names": 10_000_000}}
READ_SIZE = 1 << 20
BATCH = 65536


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def make_files(folder, mb):
    """(blob path, msgpack path or None, ASCII twin path, records, longest
    record): the corpus names, repeated, one record each, until the blob
    holds mb MB; the twin has the same records made ASCII."""
    import utf8pfx

    base = workloads.cldr_names()
    if base is None:
        return None
    units = []
    for names in (base, ["x" * len(s.encode("utf-8")) for s in base]):
        w = utf8pfx.BufferWriter()
        w.write_strings(names)
        units.append(w.getvalue())
    unit = units[0]
    reps = max(1, (mb << 20) // len(unit))
    blob = os.path.join(folder, "names.u8p")
    twin = os.path.join(folder, "names_ascii.u8p")
    for path, u in ((blob, unit), (twin, units[1])):
        with open(path, "wb") as f:
            for _ in range(reps):
                f.write(u)
    packed = None
    try:
        import msgpack

        pk = msgpack.Packer()
        munit = b"".join(pk.pack(s) for s in base)
        packed = os.path.join(folder, "names.msgpack")
        with open(packed, "wb") as f:
            for _ in range(reps):
                f.write(munit)
    except ImportError:
        log("note: msgpack not installed: the msgpack row is skipped")
    longest = max(len(s.encode("utf-8", "surrogatepass")) for s in base) + 10
    return blob, packed, twin, reps * len(base), longest


def load_str_floor(folder):
    """bench/ext/str_floor.c built into folder and imported, or None (with a
    note) when there is no C compiler or no CPython headers."""
    import importlib.util
    import sysconfig

    src = os.path.join(HERE, "ext", "str_floor.c")
    out = os.path.join(folder, "str_floor" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    cmd = [os.environ.get("CC", cc), "-O2", "-shared", "-fPIC",
           "-I" + sysconfig.get_paths()["include"], src, "-o", out]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        log(f"note: floor_batches left out: {e}")
        return None
    if r.returncode:
        log(f"note: floor_batches left out: {' '.join(cmd)} failed:\n{r.stderr}")
        return None
    spec = importlib.util.spec_from_file_location("str_floor", out)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def reader_rows(blob, packed, twin, floor=None, nrec=0):
    import utf8pfx

    def mmap_iter():
        with open(blob, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            r = utf8pfx.BufferReader(mm)
            collections.deque(r, maxlen=0)
            r.close()

    def stream_iter():
        with open(blob, "rb", buffering=0) as f:
            collections.deque(utf8pfx.StreamReader(f, read_size=READ_SIZE), maxlen=0)

    def mmap_batches():
        with open(blob, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            r = utf8pfx.BufferReader(mm)
            for b in r.batches(BATCH):
                pass
            del b
            r.close()

    def stream_batches():
        with open(blob, "rb", buffering=0) as f:
            for b in utf8pfx.StreamReader(f, read_size=READ_SIZE).batches(BATCH):
                pass

    def push_4k():
        r = utf8pfx.StreamReader()
        with open(blob, "rb", buffering=0) as f:
            buf = bytearray(4096)
            n = f.readinto(buf)
            while n:
                r.feed(memoryview(buf)[:n])
                collections.deque(r, maxlen=0)
                n = f.readinto(buf)
        r.feed_eof()
        collections.deque(r, maxlen=0)

    def ascii_batches():
        with open(twin, "rb", buffering=0) as f:
            for b in utf8pfx.StreamReader(f, read_size=READ_SIZE).batches(BATCH):
                pass

    rows = {"mmap_iter": mmap_iter, "stream_iter": stream_iter,
            "mmap_batches": mmap_batches, "stream_batches": stream_batches, "push_4k": push_4k,
            "ascii_batches": ascii_batches}
    if packed:
        import msgpack

        def msgpack_unpacker():
            with open(packed, "rb", buffering=0) as f:
                collections.deque(msgpack.Unpacker(f, read_size=READ_SIZE), maxlen=0)

        rows["msgpack"] = msgpack_unpacker
    if floor is not None:
        floor.prepare(list(workloads.cldr_names()))

        def floor_batches():
            floor.build(nrec, BATCH)

        rows["floor_batches"] = floor_batches

    def readinto():
        with open(blob, "rb", buffering=0) as f:
            buf = bytearray(READ_SIZE)
            while f.readinto(buf):
                pass

    rows["readinto"] = readinto
    return rows


_NAMES = []


def gen_names(n):
    """n corpus names from a generator (the file is read once per process)."""
    if not _NAMES:
        _NAMES.extend(workloads.cldr_names())
    return itertools.islice(itertools.cycle(_NAMES), n)


def writer_rows(folder, n):
    import utf8pfx

    out = os.path.join(folder, "out.u8p")

    def stream_writer():
        with open(out, "wb", buffering=0) as f:
            w = utf8pfx.StreamWriter(f)
            w.write_strings(gen_names(n))
            w.close()

    def buffer_writer():
        with open(out, "wb", buffering=0) as f:
            w = utf8pfx.BufferWriter()
            w.write_strings(gen_names(n))
            f.write(memoryview(w))

    def stream_each():
        with open(out, "wb", buffering=0) as f:
            w = utf8pfx.StreamWriter(f)
            put = w.write_string
            for s in gen_names(n):
                put(s)
            w.close()

    def buffer_each():
        with open(out, "wb", buffering=0) as f:
            w = utf8pfx.BufferWriter()
            put = w.write_string
            for s in gen_names(n):
                put(s)
            f.write(memoryview(w))

    return {"stream_writer": stream_writer, "buffer_writer": buffer_writer,
            "stream_each": stream_each, "buffer_each": buffer_each}


def measure(fns, rounds, warmup):
    samples = timing.interleaved(fns, rounds, warmup)
    return {k: statistics.median(v) for k, v in samples.items()}, samples


def peak_rss(kind, row, folder, arg):
    """ru_maxrss growth (bytes) of one row in a fresh process, above what it
    was after the imports and the setup."""
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork and exec, so a
    # child of this (large) process would start at its parent's peak
    code = (
        "import sys, resource; sys.path.insert(0, %r)\n"
        "from bench import streams\n"
        "def peak():\n"
        "    try:\n"
        "        with open('/proc/self/status') as f:\n"
        "            return [int(l.split()[1]) for l in f if l.startswith('VmHWM')][0]\n"
        "    except OSError:\n"
        "        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "fns = streams.%s\n"
        "streams.gen_names(0)\n"
        "base = peak()\n"
        "fns[%r]()\n"
        "print((peak() - base) * 1024)\n"
    ) % (os.path.dirname(HERE),
         ("reader_rows(%r, %r, %r)" % arg) if kind == "reader" else ("writer_rows(%r, %d)" % arg),
         row)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if r.returncode:
        log(r.stderr)
        return None
    return int(r.stdout.split()[-1])


def main(argv=None):
    p = mode_parser("python -m bench.streams", __doc__)
    p.add_argument("--mb", type=int, help="size of the blob file in MB")
    p.add_argument("--names", type=int, help="names the writer rows write")
    p.add_argument("--json", metavar="PATH")
    a = p.parse_args(argv)
    mode = dict(MODES[a.mode or "quick"])
    mb = a.mb or mode["mb"]
    nnames = a.names or mode["names"]
    import utf8pfx

    if not hasattr(utf8pfx, "StreamReader"):
        print("SKIP: this utf8pfx has no StreamReader")
        return 0
    folder = tempfile.mkdtemp(prefix="utf8pfx-streams-")
    try:
        made = make_files(folder, mb)
        if made is None:
            print("SKIP: ../shared/corpus/cldr_names.tsv is absent")
            return 0
        blob, packed, twin, nrec, longest = made
        for path in (blob, packed, twin):  # warm the page cache
            if path:
                with open(path, "rb") as f:
                    while f.read(1 << 24):
                        pass
        print(f"CPU: {cpu_model()}, {os.cpu_count()} logical CPUs, load average "
              f"{os.getloadavg()[0]:.2f}; CPython {platform.python_version()}; "
              f"utf8pfx isa()={utf8pfx.isa()}")
        print(f"input: {nrec} records of cldr_names.tsv (repeated), "
              f"{os.path.getsize(blob) >> 20} MB; read_size {READ_SIZE}; "
              f"{mode['rounds']} rounds + {mode['warmup']} warm-up, rows interleaved, wall time")
        floor = load_str_floor(folder)
        rmed, _ = measure(reader_rows(blob, packed, twin, floor, nrec), mode["rounds"],
                          mode["warmup"])
        print("\n| reading row | M records/s | ms/run | peak RSS growth MB |")
        print("|---|--:|--:|--:|")
        rss = {}
        for k, v in rmed.items():
            # the floor rows are no readers: their memory is not a reader's
            rss[k] = None if k in ("floor_batches", "readinto") else peak_rss(
                "reader", k, folder, (blob, packed, twin))
            print(f"| {k} | {nrec / v * 1e3:.1f} | {v / 1e6:.0f} | "
                  f"{'?' if rss[k] is None else '%.1f' % (rss[k] / 2**20)} |")
        wmed, _ = measure(writer_rows(folder, nnames), mode["rounds"], mode["warmup"])
        print(f"\n| writing row ({nnames} names from a generator) | M records/s | ms/run "
              "| peak RSS growth MB |")
        print("|---|--:|--:|--:|")
        for k, v in wmed.items():
            rss[k] = peak_rss("writer", k, folder, (folder, nnames))
            print(f"| {k} | {nnames / v * 1e3:.1f} | {v / 1e6:.0f} | "
                  f"{'?' if rss[k] is None else '%.1f' % (rss[k] / 2**20)} |")
        bound = READ_SIZE + longest + (32 << 20)
        checks = [
            ("stream_iter / mmap_iter (>= 0.8)", rmed["mmap_iter"] / rmed["stream_iter"], 0.8),
            ("stream_batches / mmap_batches (>= 0.8)",
             rmed["mmap_batches"] / rmed["stream_batches"], 0.8),
            ("push_4k / stream_iter (>= 0.7)", rmed["stream_iter"] / rmed["push_4k"], 0.7),
            ("stream_writer / buffer_writer (>= 0.9)",
             wmed["buffer_writer"] / wmed["stream_writer"], 0.9),
        ]
        # no target: what a record costs through StreamWriter's one-record
        # method against BufferWriter's (printed for the record)
        print(f"\nstream_each / buffer_each: "
              f"{wmed['buffer_each'] / wmed['stream_each']:.2f}x the records per second")
        # no target: the same framing without the decoding (module doc)
        print(f"stream_batches: {rmed['ascii_batches'] / rmed['stream_batches']:.2f}x "
              "ascii_batches' records per second")
        if "msgpack" in rmed:
            checks.append(("stream_batches / msgpack (>= 3)",
                           rmed["msgpack"] / rmed["stream_batches"], 3))
            print(f"ascii_batches: {rmed['msgpack'] / rmed['ascii_batches']:.2f}x msgpack's "
                  "records per second")
        if "floor_batches" in rmed:
            # no target: how close the batches come to the objects' own cost,
            # and where that cost puts any reader against msgpack
            print(f"stream_batches: {rmed['floor_batches'] / rmed['stream_batches']:.2f}x "
                  "floor_batches' records per second")
            if "msgpack" in rmed:
                fl = rmed["floor_batches"] + rmed["readinto"]
                print(f"floor_batches: {rmed['msgpack'] / rmed['floor_batches']:.2f}x msgpack's "
                      "records per second; floor_batches + readinto (the most a pull reader "
                      f"into batches of new strs reaches here): {rmed['msgpack'] / fl:.2f}x; "
                      f"stream_batches: {fl / rmed['stream_batches']:.2f}x that")
        print("\n| target | measured | met |")
        print("|---|--:|:-:|")
        for name, val, want in checks:
            print(f"| {name} | {val:.2f}x | {'yes' if val >= want else 'NO'} |")
        for k in ("stream_iter", "stream_batches", "push_4k"):
            if rss.get(k) is not None:
                print(f"| {k} peak RSS growth <= read_size + longest + 32 MB "
                      f"({bound / 2**20:.1f} MB) | {rss[k] / 2**20:.1f} MB | "
                      f"{'yes' if rss[k] <= bound else 'NO'} |")
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"reader_ns": rmed, "writer_ns": wmed, "rss": rss, "records": nrec,
                           "names": nnames, "isa": utf8pfx.isa(), "cpu": cpu_model()}, f,
                          indent=1)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
