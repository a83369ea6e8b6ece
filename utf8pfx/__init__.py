"""utf8pfx: length-prefixed (VInt / unsigned LEB128) UTF-8 from Python str, and back.

The C core reads a str's PEP 393 storage directly and writes
``vint(len(e)) + e`` with ``e = s.encode("utf-8", errors)``, byte for byte,
without creating intermediate bytes or filling the str's UTF-8 cache; the
reader builds each str straight in its final storage kind.
"""
from ._core import (
    BufferReader,
    BufferWriter,
    decode,
    decode_all,
    encode,
    isa,
    utf8_length,
    vint_size,
)
from ._version import __version__

__all__ = [
    "BufferReader",
    "BufferWriter",
    "decode",
    "decode_all",
    "encode",
    "isa",
    "utf8_length",
    "vint_size",
    "__version__",
]
