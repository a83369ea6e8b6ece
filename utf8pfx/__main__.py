"""Command-line interface: ``python -m utf8pfx encode|decode``.

encode [INPUT] [-o OUTPUT]
    Turn text lines (UTF-8, split on "\\n") into a blob of VInt-prefixed
    UTF-8 strings.  INPUT "-" reads standard input.  Without INPUT, encode
    the multilingual sample shipped with the package and print a summary.
decode BLOB [-o OUTPUT]
    Turn a blob back into lines of text.
"""
from __future__ import annotations

import argparse
import codecs
import sys
from typing import BinaryIO, Dict, List, Optional, Sequence

from . import BufferWriter, __version__, isa, utf8_length, vint_size

SAMPLE = "data/sample.txt"


def storage_kind(s: str) -> str:
    """The PEP 393 storage kind CPython uses for s."""
    if s.isascii():
        return "ascii"
    top = max(map(ord, s))
    return "ucs1" if top < 0x100 else "ucs2" if top < 0x10000 else "ucs4"


def split_lines(text: str) -> List[str]:
    """Lines split on "\\n" only; a final newline does not make an empty line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def read_sample() -> str:
    from importlib import resources

    return (resources.files(__package__) / SAMPLE).read_text(encoding="utf-8")


def summary(lines: Sequence[str], blob_len: int, errors: str) -> str:
    kinds: Dict[str, int] = {"ascii": 0, "ucs1": 0, "ucs2": 0, "ucs4": 0}
    body = 0
    for s in lines:
        kinds[storage_kind(s)] += 1
        body += utf8_length(s, errors)
    parts = ", ".join(f"{k} {v}" for k, v in kinds.items())
    return (
        f"strings: {len(lines)}\n"
        f"code points: {sum(map(len, lines))}\n"
        f"UTF-8 bytes: {body}\n"
        f"prefix bytes: {blob_len - body}\n"
        f"blob bytes: {blob_len}\n"
        f"storage kinds: {parts}\n"
        f"kernels: {isa()}"
    )


def _open_out(path: Optional[str]) -> BinaryIO:
    if path is None or path == "-":
        return sys.stdout.buffer
    return open(path, "wb")


def cmd_encode(args: argparse.Namespace) -> int:
    if args.input is None:
        text = read_sample()
        source = "built-in sample"
    elif args.input == "-":
        text = sys.stdin.buffer.read().decode("utf-8", args.errors)
        source = "<stdin>"
    else:
        with open(args.input, "rb") as f:
            text = f.read().decode("utf-8", args.errors)
        source = args.input
    lines = split_lines(text)
    w = BufferWriter(errors=args.errors)
    for lineno, s in enumerate(lines, 1):
        try:
            w.write_string(s)
        except UnicodeEncodeError as exc:
            print(f"utf8pfx: {source}:{lineno}: {exc}", file=sys.stderr)
            return 1
    if args.output is not None or args.input is not None:
        out = _open_out(args.output)
        try:
            out.write(memoryview(w))
        finally:
            if out is not sys.stdout.buffer:
                out.close()
            else:
                out.flush()
    if args.input is None or args.summary:
        stream = sys.stderr if (args.input is not None and args.output is None) else sys.stdout
        print(f"source: {source}\n" + summary(lines, len(w), args.errors), file=stream)
    return 0


def cmd_decode(args: argparse.Namespace) -> int:
    from . import decode_all

    if args.blob == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(args.blob, "rb") as f:
            data = f.read()
    try:
        strings = decode_all(data, errors=args.errors)
    except (ValueError, UnicodeDecodeError) as exc:
        print(f"utf8pfx: {args.blob}: {exc}", file=sys.stderr)
        return 1
    text = "".join(s + "\n" for s in strings)
    out = _open_out(args.output)
    try:
        out.write(text.encode("utf-8", args.errors))
    finally:
        if out is not sys.stdout.buffer:
            out.close()
        else:
            out.flush()
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m utf8pfx",
        description="VInt-prefixed UTF-8 blobs from text lines, and back.",
    )
    p.add_argument("--version", action="version", version=f"utf8pfx {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    e = sub.add_parser("encode", help="text lines -> prefixed blob")
    e.add_argument("input", nargs="?", help="UTF-8 text file, '-' for stdin; default: built-in sample")
    e.add_argument("-o", "--output", help="blob file ('-' for stdout)")
    e.add_argument("--errors", default="strict", help="error handler (default: strict)")
    e.add_argument("--summary", action="store_true", help="print a summary even with INPUT")
    e.set_defaults(func=cmd_encode)

    d = sub.add_parser("decode", help="prefixed blob -> text lines")
    d.add_argument("blob", help="blob file, '-' for stdin")
    d.add_argument("-o", "--output", help="text file ('-' for stdout)")
    d.add_argument("--errors", default="strict", help="error handler (default: strict)")
    d.set_defaults(func=cmd_decode)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        codecs.lookup_error(args.errors)
    except LookupError as exc:
        print(f"utf8pfx: --errors: {exc}", file=sys.stderr)
        return 2
    try:
        return int(args.func(args))
    except OSError as exc:
        print(f"utf8pfx: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
