"""The pure-Python peers the benchmarks time utf8pfx against, and the CPU's name.

Shared by ``utf8pfx bench`` (``_bench.py``) and the repository's ``bench/``
suite, so that both time the same pure-Python code.  Nothing here imports
the rest of the package, not even the compiled core: ``bench/`` loads this
file straight from a checkout that is not built, where its peers still run.
"""
from __future__ import annotations

import platform
from typing import Any, List, Union


def py_write(strings: List[str]) -> bytearray:
    """Each string's VInt length and UTF-8, appended into one bytearray, in Python.

    The VInt loop is written out here rather than calling
    ``_reference.leb128``: this is a timed peer, and a call and a bytes
    object per string would slow it down and flatter utf8pfx's ratios.
    """
    out = bytearray()
    for s in strings:
        b = s.encode()
        n = len(b)
        while n >= 0x80:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)
        out += b
    return out


def py_read(blob: Union[bytes, bytearray]) -> List[str]:
    """The strings of a blob of VInt-prefixed UTF-8, in Python: the VInt loop
    and bytes.decode per string (no checks: the blob is the peer's own)."""
    out = []
    pos, end = 0, len(blob)
    while pos < end:
        n = shift = 0
        while True:
            byte = blob[pos]
            pos += 1
            n |= (byte & 0x7F) << shift
            if byte < 0x80:
                break
            shift += 7
        out.append(blob[pos:pos + n].decode("utf-8"))
        pos += n
    return out


def strings_message_class() -> Any:
    """A protobuf message class with one ``repeated string s = 1``, built at
    run time from a FileDescriptorProto (no protoc, no generated code) in a
    descriptor pool of its own.  ImportError without protobuf."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # type: ignore[import, unused-ignore]

    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="utf8pfx_peers.proto",
                                             package="utf8pfx_peers", syntax="proto3")
    msg = fdp.message_type.add(name="Strings")
    msg.field.add(name="s", number=1, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    desc = pool.FindMessageTypeByName("utf8pfx_peers.Strings")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)  # protobuf < 4.22


def cpuinfo_field(key: str) -> Union[str, None]:
    """The first `key` line's value in /proc/cpuinfo (Linux), or None."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), else what platform knows."""
    return cpuinfo_field("model name") or platform.processor() or platform.machine()
