"""The ``utf8pfx`` command line (also ``python -m utf8pfx``).

    utf8pfx encode  [INPUT] [-o OUT] [--json] [--errors H] [--prefix P] [--encoding E]
    utf8pfx decode  BLOB    [-o OUT] [--json] [--errors H] [--prefix P] [--encoding E]
    utf8pfx inspect BLOB    [--hex] [--limit N] [--prefix P] [--encoding E]
    utf8pfx bench   [--plot FILE.png] [--repeat N]

Every command streams: inputs are read in chunks, never whole, so memory
stays about one chunk plus the longest string however big the file is.
Exit status: 0 success, 1 bad data (the message gives the byte offset),
2 usage (bad option, unreadable input, a feature this build lacks).
"""
from __future__ import annotations

import argparse
import codecs
import contextlib
import json
import os
import sys
from typing import IO, Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from . import BufferReader, BufferWriter, StreamReader, StreamWriter, __version__, isa, utf8_length
from ._reference import ENCODINGS, PREFIXES, storage_kind
from ._reference import STORAGE_KINDS as KINDS
# split_lines is not used here, but stays importable from utf8pfx.__main__ with
# the command line's other helpers (storage_kind, read_sample)
from ._stream import (CHUNK, BadData, Output, Progress, Source, bad_record, batches, lines_of,
                      read_sample, split_lines)  # noqa: F401


class UsageError(Exception):
    """A problem with the command line or its files (exit status 2)."""


# --- presets: keywords passed to the core only when given --------------------

def format_kw(args: argparse.Namespace) -> Dict[str, Any]:
    kw: Dict[str, Any] = {}
    if getattr(args, "prefix", None) is not None:
        kw["prefix"] = args.prefix
    if getattr(args, "encoding", None) is not None:
        kw["encoding"] = args.encoding
    return kw


def check_core_accepts(kw: Dict[str, Any]) -> None:
    """UsageError when this build of the core has no wire-format presets."""
    if not kw:
        return
    try:
        BufferWriter(**kw)
        BufferReader(b"", **kw)
    except TypeError as exc:
        flags = " and ".join("--" + k for k in kw)
        raise UsageError(
            f"{flags}: this build of utf8pfx ({__version__}) writes and reads only the "
            f"default format (VInt prefix, UTF-8); it has no wire-format presets "
            f"({exc})") from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# --- files -------------------------------------------------------------------

def open_input(path: Optional[str]) -> Tuple[IO[bytes], Optional[int], str]:
    """(binary file, size if known, name for messages)."""
    if path is None or path == "-":
        return sys.stdin.buffer, None, "<stdin>"
    try:
        f = open(path, "rb")
    except OSError as exc:
        raise UsageError(f"cannot open {path}: {exc.strerror}") from None
    try:
        st = os.fstat(f.fileno())
        size = st.st_size if os.path.isfile(path) else None
    except OSError:
        size = None
    return f, size, path


def open_output(path: Optional[str]) -> Output:
    """An Output (temporary file beside ``path``, renamed on success)."""
    try:
        return Output(path)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def make_progress(args: argparse.Namespace, label: str, size: Optional[int]) -> Optional[Progress]:
    want = args.progress
    if want is None:
        want = sys.stderr.isatty()
    if not want:
        return None
    delay = 0.5 if args.progress is None else 0.0
    return Progress(label, size, sys.stderr, delay=delay)


@contextlib.contextmanager
def converting(f: IO[bytes], out: Any, progress: Optional[Progress]) -> Iterator[None]:
    """Around a conversion of f into out: out is committed if the block ends
    normally and aborted otherwise (no half-written output is left behind);
    the progress line is ended and f closed (unless it is stdin) either way."""
    try:
        yield
        out.commit()
    except BaseException:
        out.abort()
        raise
    finally:
        if progress:
            progress.close()
        if f is not sys.stdin.buffer:
            f.close()


class Stats:
    """Counts of strings, code points, UTF-8 bytes and storage kinds."""

    def __init__(self) -> None:
        self.strings = 0
        self.code_points = 0
        self.utf8 = 0
        self.kinds = dict.fromkeys(KINDS, 0)

    def add(self, strings: Iterable[str], errors: str) -> None:
        for s in strings:
            self.strings += 1
            self.code_points += len(s)
            self.utf8 += utf8_length(s, errors)
            self.kinds[storage_kind(s)] += 1

    def text(self, blob_bytes: int) -> str:
        parts = ", ".join(f"{k} {v}" for k, v in self.kinds.items())
        return (f"strings: {self.strings}\n"
                f"code points: {self.code_points}\n"
                f"UTF-8 bytes: {self.utf8}\n"
                f"prefix bytes: {blob_bytes - self.utf8}\n"
                f"blob bytes: {blob_bytes}\n"
                f"storage kinds: {parts}\n"
                f"kernels: {isa()}")


# --- encode ------------------------------------------------------------------

class _Discard:
    def write(self, data: Any) -> int:
        return len(data)

    def commit(self) -> None:
        pass

    def abort(self) -> None:
        pass


def _json_strings(lines: List[bytes], first: int) -> List[str]:
    out = []
    for i, raw in enumerate(lines):
        if not raw.strip():
            continue  # blank lines carry no value
        try:
            value = json.loads(raw)
        except UnicodeDecodeError as exc:
            raise BadData(f"line {first + i}: not UTF-8: {exc.reason} at byte {exc.start}",
                          None, first + i) from None
        except ValueError as exc:  # json.JSONDecodeError
            raise BadData(f"line {first + i}: not JSON: {exc}", None, first + i) from None
        if not isinstance(value, str):
            raise BadData(f"line {first + i}: expected a JSON string, found "
                          f"{type(value).__name__ if value is not None else 'null'}",
                          None, first + i)
        out.append(value)
    return out


_REFUSED = (UnicodeEncodeError, ValueError, OverflowError)  # a string the format cannot hold


def _encode_failure(strings: List[str], first: int, args: argparse.Namespace,
                    kw: Dict[str, Any], exc: Exception) -> BadData:
    # find the culprit one string at a time, after those the writer took
    # (write_strings is all or nothing while it has not flushed)
    probe = BufferWriter(errors=args.errors, **kw)
    taken = getattr(exc, "records_accepted", None) or 0
    for i in range(taken, len(strings)):
        s = strings[i]
        try:
            probe.write_string(s)
        except _REFUSED as e:
            what = "record" if args.json else "line"
            return BadData(f"{what} {first + i}: {e}", None, first + i)
        probe.clear()
    return BadData(str(exc))  # pragma: no cover - the batch failed, so one string does


def cmd_encode(args: argparse.Namespace) -> int:
    kw = format_kw(args)
    check_core_accepts(kw)
    sample = args.input is None
    if sample:
        import io

        f: IO[bytes] = io.BytesIO(read_sample())
        size: Optional[int] = None
        name = "built-in sample"
    else:
        f, size, name = open_input(args.input)
    show = sample or args.summary
    stats = Stats() if show else None
    progress = make_progress(args, "encode", size)
    # the sample alone only prints its summary; with -o it is written too
    out: Any = open_output(args.output) if (args.output is not None or not sample) else _Discard()
    with converting(f, out, progress):
        w = StreamWriter(out, flush_size=args.chunk_size, errors=args.errors, **kw)
        for first, lines in lines_of(f, args.errors, chunk=args.chunk_size, progress=progress,
                                     decode=not args.json):
            strings = _json_strings(lines, first) if args.json else lines
            try:
                w.write_strings(strings)
            except _REFUSED as exc:
                raise _encode_failure(strings, first, args, kw, exc) from None
            if stats is not None:
                stats.add(strings, args.errors)
        w.close()
        total = w.position
    if stats is not None:
        to_stdout = sample and args.output is None
        print(f"source: {name}\n" + stats.text(total),
              file=sys.stdout if to_stdout else sys.stderr)
    return 0


# --- decode ------------------------------------------------------------------

def _json_line(s: Optional[str]) -> str:
    text = json.dumps(s, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: only \\uXXXX can carry it
        text = json.dumps(s)
    return text


def cmd_decode(args: argparse.Namespace) -> int:
    kw = format_kw(args)
    check_core_accepts(kw)
    f, size, name = open_input(args.blob)
    progress = make_progress(args, "decode", size)
    # a declared length beyond the file's size fails at once, not at its end
    reader = StreamReader(errors=args.errors, max_record=size, **kw)
    newlines = 0
    count = 0  # records written
    out = open_output(args.output)
    with converting(f, out, progress):
        for strings in batches(f, reader, chunk=args.chunk_size, size=size, progress=progress):
            count += len(strings)
            if args.json:
                text = "\n".join(map(_json_line, strings)) + "\n"
                data = text.encode("utf-8")
            else:
                if None in strings:
                    at = count - len(strings) + strings.index(None)
                    raise BadData(f"record {at} is null, which text lines cannot show: use --json",
                                  None, at)
                text = "\n".join(strings) + "\n"
                newlines += text.count("\n") - len(strings)
                try:
                    data = text.encode("utf-8", args.errors)
                except UnicodeEncodeError:
                    for i, s in enumerate(strings):
                        try:
                            s.encode("utf-8", args.errors)
                        except UnicodeEncodeError as exc:
                            at = count - len(strings) + i
                            raise BadData(f"record {at} cannot be written as UTF-8 text ({exc}): "
                                          f"use --json, or --errors surrogatepass", None, at) from None
                    raise
            out.write(data)
            # drop this batch before the next is decoded: otherwise its strings,
            # its text and its bytes live on beside the next batch's and double
            # the peak (memory must stay flat, whatever the input's size)
            del strings, text, data
    if newlines:
        print(f"utf8pfx: warning: {newlines} newline(s) inside the strings of {name}: the "
              f"lines written do not split back into the same strings; --json does",
              file=sys.stderr)
    return 0


# --- inspect -----------------------------------------------------------------

def preview(s: Optional[str], width: int) -> str:
    """s on one line: control characters, quotes and lone surrogates escaped."""
    if s is None:
        return "null"
    body = repr(s[:width])[1:-1]
    return body + ("…" if len(s) > width else "")


def _bucket(n: int) -> str:
    if n == 0:
        return "0"
    lo = 1 << (n.bit_length() - 1)
    hi = (lo << 1) - 1
    return str(lo) if lo == hi else f"{lo}-{hi}"


def cmd_inspect(args: argparse.Namespace) -> int:
    kw = format_kw(args)
    check_core_accepts(kw)
    f, size, name = open_input(args.blob)
    # the source keeps the bytes read, so each record's prefix is shown as the
    # file has it; the reader finds the records and checks them
    src = Source(f)
    reader = StreamReader(src, errors="strict", read_size=args.chunk_size, max_record=size, **kw)
    kinds = dict.fromkeys(KINDS + ("null",), 0)
    widths: Dict[int, int] = {}
    hist: Dict[int, int] = {}
    payload = prefix_bytes = code_points = 0
    longest = -1
    shortest: Optional[int] = None
    shown = count = 0
    limit = args.limit
    say = sys.stdout.write
    if limit:
        say(f"{'offset':>10}  {'prefix':<12} {'length':>7}  {'kind':<5}  "
            f"{'bytes' if args.hex else 'text'}\n")
    failure: Optional[BadData] = None
    there = b""
    start = 0
    try:
        for value in reader:
            end = reader.position
            record = src.take(start, end)
            body = BufferReader(record, **kw).read_bytes()  # None: the null marker
            n = len(body) if body is not None else 0
            hw = len(record) - n
            count += 1
            prefix_bytes += hw
            payload += n
            widths[hw] = widths.get(hw, 0) + 1
            key = n.bit_length()
            hist[key] = hist.get(key, 0) + 1
            longest = max(longest, n)
            shortest = n if shortest is None else min(shortest, n)
            kind = "null" if value is None else storage_kind(value)
            kinds[kind] += 1
            if value is not None:
                code_points += len(value)
            if shown < limit:
                shown += 1
                p = record[:hw].hex(" ")
                if args.hex:
                    raw = record[hw:]
                    col = raw[:24].hex(" ") + (" …" if len(raw) > 24 else "")
                else:
                    col = preview(value, 48)
                say(f"{start:>10}  {p:<12} {n:>7}  {kind:<5}  {col}\n")
            start = end
    except ValueError as exc:
        if getattr(exc, "record_index", None) is None:
            raise
        failure = bad_record(exc, reader.position, size)
        there = src.peek(reader.position, 16)  # the bytes of the refused record
    finally:
        if f is not sys.stdin.buffer:
            f.close()
    end = reader.position
    say("\n")
    if limit and count > shown:
        say(f"(first {shown} of {count} records listed; --limit N shows more)\n")
    say(f"source: {name}\n")
    say(f"records: {count}{' before the bad data' if failure else ''}\n")
    say(f"bytes: {end} ({prefix_bytes} prefix, {payload} payload)\n")
    say(f"code points: {code_points}\n")
    say("kinds: " + ", ".join(f"{k} {v}" for k, v in kinds.items() if v or k != "null") + "\n")
    if widths:
        say("prefix widths: " + ", ".join(f"{k} B: {v}" for k, v in sorted(widths.items())) + "\n")
    if count:
        say(f"payload length: min {shortest}, max {longest}, mean {payload / count:.1f} bytes\n")
        say("length distribution (payload bytes):\n")
        top = max(hist.values())
        for key in sorted(hist):
            label = _bucket((1 << (key - 1)) if key else 0)
            bar = "#" * max(1, round(40 * hist[key] / top))
            say(f"  {label:>13}  {hist[key]:>10}  {bar}\n")
    if failure is not None:
        say(f"bad data at offset {failure.offset}: {failure}\n")
        if there:
            say(f"bytes there: {there.hex(' ')}{' …' if len(there) == 16 else ''}\n")
        print(f"utf8pfx: {name}: {failure}", file=sys.stderr)
        return 1
    return 0


# --- bench -------------------------------------------------------------------

def cmd_bench(args: argparse.Namespace) -> int:
    from . import _bench

    return _bench.main(repeat=args.repeat, plot=args.plot, scale=args.scale)


# --- parser ------------------------------------------------------------------

EPILOG = """\
exit status: 0 success; 1 bad data (the message says where: byte offset
from 0, record from 0, or line from 1); 2 usage (bad option, unreadable
input, a feature this build lacks).  Output files appear only on success: they are written to a
temporary file beside them and renamed.  Inputs are streamed in chunks, so
files of any size take about one chunk plus the longest string of memory.
"""


def _para(text: str) -> str:
    import textwrap

    return textwrap.fill(" ".join(text.split()), width=78)


def _add_format(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prefix", choices=PREFIXES, default=None,
                   help="length prefix format (default: varint, unsigned LEB128)")
    p.add_argument("--encoding", choices=ENCODINGS, default=None,
                   help="payload encoding (default: utf-8)")


def _add_common(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="show progress on stderr (default: when stderr is a terminal)")
    g.add_argument("--no-progress", dest="progress", action="store_false",
                   help="never show progress")
    p.add_argument("--chunk-size", type=_size, default=CHUNK, metavar="BYTES",
                   help=f"bytes read at a time (default {CHUNK}; suffixes k, M)")


def _size(text: str) -> int:
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    t = text.strip().lower()
    try:
        n = int(t[:-1]) * mult[t[-1]] if t and t[-1] in mult else int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return n


def _handler(name: str) -> str:
    try:
        codecs.lookup_error(name)
    except LookupError:
        raise argparse.ArgumentTypeError(f"unknown error handler {name!r}") from None
    return name


def _add_command(sub: Any, name: str, func: Any, help: str,
                 description: str) -> argparse.ArgumentParser:
    """A sub-command that streams a file, run by func(args): its description
    filled as written, the exit statuses and streaming note (EPILOG) after
    its options."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help, description=_para(description), epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(func=func)
    return p


def _add_conversion(p: argparse.ArgumentParser, output: str, json_: str, errors: str) -> None:
    """-o, --json and --errors, which encode and decode share (with their own help)."""
    p.add_argument("-o", "--output", metavar="OUT", help=output)
    p.add_argument("--json", action="store_true", help=json_)
    p.add_argument("--errors", type=_handler, default="strict", metavar="HANDLER", help=errors)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the command line (all sub-commands and options)."""
    p = argparse.ArgumentParser(
        prog="utf8pfx",
        description=_para("Length-prefixed UTF-8 blobs (VInt/LEB128 prefix, as Lucene's writeString "
                    "and protobuf string fields) from text lines or JSON strings, and back."),
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version",
                   version=f"utf8pfx {__version__} (kernels: {isa()})")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    e = _add_command(
        sub, "encode", cmd_encode, "text lines or JSON strings -> blob",
        "Turn text lines (UTF-8, split on \\n only; a \\r before it is kept) or, with "
        "--json, one JSON string per line into a blob of length-prefixed strings. "
        "Without INPUT, encode a multilingual sample shipped in the package and print "
        "a summary.")
    e.add_argument("input", nargs="?", metavar="INPUT",
                   help="text file, '-' for stdin (default: the built-in sample)")
    _add_conversion(
        e, output="blob file; '-' or none: stdout",
        json_="each line is a JSON string (escapes such as \\n or \\ud800 allowed); "
              "blank lines are skipped",
        errors="error handler for reading text and for lone surrogates, as in "
               "str.encode: strict (default), surrogateescape (bytes that are not "
               "UTF-8 pass through), surrogatepass, replace, ignore, ...")
    e.add_argument("--summary", action="store_true",
                   help="print strings, bytes and storage kinds on stderr")
    _add_format(e)
    _add_common(e)

    d = _add_command(
        sub, "decode", cmd_decode, "blob -> text lines or JSON strings",
        "Turn a blob back into one line per string.  Plain lines cannot tell a "
        "newline inside a string from the end of a line, and need --errors "
        "surrogateescape/surrogatepass for lone surrogates: --json (one JSON "
        "string per line, \\n and \\udXXX escaped) is the only lossless output.")
    d.add_argument("blob", metavar="BLOB", help="blob file, '-' for stdin")
    _add_conversion(
        d, output="output file; '-' or none: stdout",
        json_="write one JSON string per line (lossless)",
        errors="error handler for invalid UTF-8 in the blob, as in bytes.decode "
               "(default strict: report its offset and stop)")
    _add_format(d)
    _add_common(d)

    i = _add_command(
        sub, "inspect", cmd_inspect, "list a blob's records and summarise it",
        "List each record (offset, prefix bytes, payload length, storage kind, "
        "a preview), then a summary: counts, bytes, kinds, prefix widths and the "
        "length distribution.  On bad data: what was wrong, where, and the "
        "summary of what was read before.")
    i.add_argument("blob", metavar="BLOB", help="blob file, '-' for stdin")
    i.add_argument("--hex", action="store_true", help="show payload bytes instead of text")
    i.add_argument("--limit", type=int, default=20, metavar="N",
                   help="records to list (default 20; 0: summary only)")
    _add_format(i)
    i.add_argument("--chunk-size", type=_size, default=CHUNK, metavar="BYTES",
                   help=f"bytes read at a time (default {CHUNK})")

    b = sub.add_parser(
        "bench", help="a quick benchmark on this machine",
        description=_para("Time utf8pfx's writer and reader against pure Python and str.encode / "
                    "bytes.decode (and protobuf / msgpack when installed) on a few synthetic "
                    "workloads, and print a table.  Ratios above 1: utf8pfx is faster."))
    b.add_argument("--plot", metavar="FILE.png", help="also save a bar chart (needs matplotlib)")
    b.add_argument("--repeat", type=int, default=7, metavar="N",
                   help="timed runs per approach; the best is kept (default 7)")
    b.add_argument("--scale", type=float, default=1.0, metavar="X",
                   help="workload size factor (default 1.0, about 256 kB of UTF-8 each)")
    b.set_defaults(func=cmd_bench)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help, --version (0) or a usage error (2)
        return int(exc.code or 0)
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"utf8pfx {args.command}: {exc}", file=sys.stderr)
        return 2
    except BadData as exc:
        where = getattr(args, "input", None) or getattr(args, "blob", None) or "<stdin>"
        if where == "-":
            where = "<stdin>"
        print(f"utf8pfx: {where}: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # the reader of our output went away (e.g. `| head`): stop quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return 1
    except KeyboardInterrupt:
        print("utf8pfx: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        print(f"utf8pfx: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
