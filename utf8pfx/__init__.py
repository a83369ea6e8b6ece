"""utf8pfx: length-prefixed (VInt / unsigned LEB128) UTF-8 from Python str, and back.

The C core reads a str's PEP 393 storage directly and writes
``vint(len(e)) + e`` with ``e = s.encode("utf-8", errors)``, byte for byte,
without creating intermediate bytes or filling the str's UTF-8 cache; the
reader builds each str straight in its final storage kind.
"""
try:
    from ._core import (
        ArrowUtf8Array,
        BufferReader,
        BufferWriter,
        StreamReader,
        decode,
        decode_all,
        decode_arrow,
        encode,
        isa,
        utf8_length,
        vint_size,
    )
except ModuleNotFoundError as _missing:  # pragma: no cover - depends on how it was run
    if _missing.name != __name__ + "._core":
        raise
    raise ImportError(
        "utf8pfx's compiled core (utf8pfx._core) is not in "
        + __path__[0]
        + ": this looks like a source checkout that was not built in place. "
        "Install the package (pip install .) and run from another folder, "
        "or build in place with: python setup.py build_ext --inplace"
    ) from _missing
from ._streamwriter import StreamWriter
from ._version import __version__

__all__ = [
    "ArrowUtf8Array",
    "BufferReader",
    "BufferWriter",
    "StreamReader",
    "StreamWriter",
    "decode",
    "decode_all",
    "decode_arrow",
    "encode",
    "isa",
    "utf8_length",
    "vint_size",
    "__version__",
]
