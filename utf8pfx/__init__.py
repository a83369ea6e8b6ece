"""utf8pfx: length-prefixed (VInt / unsigned LEB128) UTF-8 from Python str.

The C core reads a str's PEP 393 storage directly and writes
``vint(len(e)) + e`` with ``e = s.encode("utf-8", errors)``, byte for byte,
without creating intermediate bytes or filling the str's UTF-8 cache.
"""
from ._core import BufferWriter, encode, isa, utf8_length, vint_size
# --- reader (issue 4) ---
from ._core import BufferReader, decode, decode_all
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
