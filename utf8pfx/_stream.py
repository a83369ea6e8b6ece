"""Streaming helpers of the command line: blobs and text read in chunks.

Nothing here holds a whole input in memory: text is read chunk by chunk and
cut at its last newline; a blob is read chunk by chunk and cut after its
last complete record, the incomplete record being carried over to the next
chunk.  Memory is therefore about one chunk plus the longest record (or line).

Offsets in every error are absolute: counted from the first byte of the
input, not of the chunk that was being read.
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from typing import IO, Any, Callable, Dict, Iterator, List, Optional, Tuple

from . import BufferReader

CHUNK = 1 << 20  # bytes read at a time
SAMPLE = "data/sample.txt"  # the input of `utf8pfx encode` without INPUT, in the package

_VARINT_MAX = 10
_FIXED = {"u16be": (2, False), "i32be": (4, True), "u32le": (4, False)}  # width, signed
_HUGE = 1 << 62


class BadData(Exception):
    """The input is not what the command expects (exit status 1).

    ``offset`` is the absolute byte offset of the bad data (or None),
    ``index`` the 0-based record (or 1-based line) it belongs to.
    """

    def __init__(self, message: str, offset: Optional[int] = None, index: Optional[int] = None):
        super().__init__(message)
        self.offset = offset
        self.index = index


def header(prefix: str, buf: bytes, pos: int) -> Optional[Tuple[int, int]]:
    """(prefix bytes, declared payload length) of the record at buf[pos:].

    None when buf ends inside the prefix.  Only used to decide whether a
    record the reader refused is incomplete (more input may complete it) or
    bad: a header it cannot make sense of is reported as needing no more
    bytes, so the reader's own error is what the user sees.  A length below
    zero (a null marker in some formats) declares no payload.
    """
    avail = len(buf) - pos
    if prefix in ("varint", "zigzag", "varint+1"):
        value = 0
        for i in range(min(avail, _VARINT_MAX)):
            byte = buf[pos + i]
            value |= (byte & 0x7F) << (7 * i)
            if not byte & 0x80:
                if prefix == "zigzag":
                    value = (value >> 1) ^ -(value & 1)
                elif prefix == "varint+1":
                    value -= 1
                return i + 1, (value if value < _HUGE else 0)
        return None if avail < _VARINT_MAX else (_VARINT_MAX, 0)
    if prefix in _FIXED:
        width, signed = _FIXED[prefix]
        if avail < width:
            return None
        raw = buf[pos:pos + width]
        if prefix.endswith("be"):
            return width, int.from_bytes(raw, "big", signed=signed)
        return width, int.from_bytes(raw, "little", signed=signed)
    return None  # a format this module does not know: wait for more input


def read_sample() -> bytes:
    """The multilingual sample shipped in the package, as UTF-8 bytes."""
    from importlib import resources

    return (resources.files(__package__) / SAMPLE).read_bytes()


def split_lines(text: str) -> List[str]:
    """Lines split on "\\n" only; a final newline does not make an empty line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


_OFFSET = re.compile(r"(offset )(\d+)")


def shift_offsets(message: str, base: int) -> str:
    """The reader's message with its chunk-relative offsets made absolute."""
    if not base:
        return message
    return _OFFSET.sub(lambda m: m.group(1) + str(int(m.group(2)) + base), message)


def _describe(exc: ValueError, base: int, start: int, index: int, buf: bytes) -> BadData:
    where = base + start
    if isinstance(exc, UnicodeDecodeError):
        data_offset = getattr(exc, "data_offset", None)
        bad = base + data_offset if data_offset is not None else where
        chunk = exc.object[exc.start:exc.end]
        return BadData(
            f"record {index} (prefix at offset {where}): invalid UTF-8 at offset {bad}: "
            f"byte(s) {chunk.hex(' ')}: {exc.reason}",
            bad, index)
    return BadData(f"record {index}: {shift_offsets(str(exc), base)}", where, index)


Record = Tuple[int, int, Any]  # (absolute start, absolute end, str or None)


class RecordStream:
    """The records of a blob, read chunk by chunk from a binary file.

    ``batches()`` yields lists of decoded strings (fast path, one C call per
    chunk's worth of records); ``records()`` yields (start, end, value)
    with absolute offsets (one call per record, for ``inspect``).  Both
    raise BadData after yielding every record before the bad one.
    """

    def __init__(self, f: IO[bytes], *, size: Optional[int] = None, chunk: int = CHUNK,
                 prefix: str = "varint", reader_kw: Optional[Dict[str, Any]] = None,
                 progress: Optional[Callable[[int], None]] = None):
        self.f = f
        self.size = size
        self.chunk = max(1, chunk)
        self.prefix = prefix
        self.kw = reader_kw or {}
        self.progress = progress
        self.count = 0      # records read so far
        self.consumed = 0   # bytes of complete records read so far
        self.head = b""     # up to 16 bytes of the record after the last one read

    def _chunks(self, detail: bool) -> Iterator[Tuple[int, List[Any], bytes]]:
        buf = b""
        base = 0       # absolute offset of buf[0]
        read = 0       # bytes read from the file
        need = 0       # bytes the carried-over record needs in buf
        eof = False
        while True:
            if not eof:
                want = max(self.chunk, need - len(buf))
                data = self.f.read(want)
                if data:
                    read += len(data)
                    buf = buf + data if buf else data
                    if self.progress:
                        self.progress(read)
                    if len(buf) < need:
                        continue
                else:
                    eof = True
            if not buf and eof:
                return
            r = BufferReader(buf, **self.kw)
            out: List[Any] = []
            failure: Optional[ValueError] = None
            try:
                if detail:
                    rs = r.read_string
                    pos = 0
                    while pos < len(buf):
                        value = rs()
                        end = r.position
                        out.append((base + pos, base + end, value))
                        pos = end
                else:
                    out.extend(r)
            except ValueError as exc:
                failure = exc
            stop = r.position
            r.close()
            self.count += len(out)
            self.consumed = base + stop
            if out:
                yield base, out, buf
                out = []  # released before the next chunk is read and decoded
            if failure is None:
                base += len(buf)
                buf = b""
                need = 0
                if eof:
                    return
                continue
            self.head = buf[stop:stop + 16]
            h = header(self.prefix, buf, stop)
            avail = len(buf) - stop
            needed = h[0] + max(h[1], 0) if h else avail + 1
            if isinstance(failure, UnicodeDecodeError) or needed <= avail or eof:
                raise _describe(failure, base, stop, self.count, buf)
            if self.size is not None and base + stop + needed > self.size:
                raise BadData(
                    f"record {self.count} (prefix at offset {base + stop}) declares "
                    f"{needed - h[0] if h else '?'} byte(s) of payload after its "
                    f"{h[0] if h else '?'}-byte prefix, but the input ends at offset {self.size}",
                    base + stop, self.count)
            buf = buf[stop:]
            base += stop
            need = needed

    def batches(self) -> Iterator[List[Any]]:
        for _, out, _ in self._chunks(False):
            yield out

    def records(self) -> Iterator[Tuple[List[Record], bytes, int]]:
        """Lists of (start, end, value), with the chunk and its offset."""
        for base, out, buf in self._chunks(True):
            yield out, buf, base


def lines_of(f: IO[bytes], errors: str, *, chunk: int = CHUNK,
             progress: Optional[Callable[[int], None]] = None,
             decode: bool = True) -> Iterator[Tuple[int, List[Any]]]:
    """Lines of a UTF-8 text file, split on "\\n" only, a chunk at a time.

    Yields (number of the first line, lines): str when ``decode`` (decoded
    with ``errors``), bytes otherwise.  A final newline does not make an
    empty last line.  Invalid UTF-8 raises BadData with its line and offset.
    """
    lineno = 1
    base = 0          # absolute offset of the first byte of pending
    pending: List[bytes] = []
    read = 0
    while True:
        data = f.read(chunk)
        eof = not data
        if not eof:
            read += len(data)
            if progress:
                progress(read)
            cut = data.rfind(b"\n")
            if cut < 0:
                pending.append(data)
                continue
            pending.append(data[:cut + 1])
            block = b"".join(pending)
            pending = [data[cut + 1:]] if cut + 1 < len(data) else []
        else:
            block = b"".join(pending)
            pending = []
            if not block:
                return
        if decode:
            try:
                text = block.decode("utf-8", errors)
            except UnicodeDecodeError as exc:
                line = lineno + block.count(b"\n", 0, exc.start)
                col = exc.start - (block.rfind(b"\n", 0, exc.start) + 1)
                raise BadData(
                    f"line {line}: invalid UTF-8 at offset {base + exc.start} (byte {col} of the line): "
                    f"byte(s) {block[exc.start:exc.end].hex(' ')}: {exc.reason}",
                    base + exc.start, line) from None
            lines: List[Any] = text.split("\n")
        else:
            lines = block.split(b"\n")
        if not eof:
            lines.pop()  # the block ends with "\n": the last item is empty
        yield lineno, lines
        lineno += len(lines)
        base += len(block)
        if eof:
            return


class Output:
    """A binary output that only appears when the command succeeds.

    A path is written through a temporary file beside it, renamed over it
    by ``commit()``; ``abort()`` (or leaving a ``with`` block on an
    exception) deletes the temporary file, so bad data never leaves a
    half-written output.  A symlink is followed (its target is replaced, not
    the link); an existing path that is not a regular file (/dev/null, a
    fifo) is written directly.  None or "-" is standard output, written as
    it goes.
    """

    def __init__(self, path: Optional[str]):
        self.path = path if path not in (None, "-") else None
        self.tmp: Optional[str] = None
        self.direct = False
        if self.path is None:
            self.f: IO[bytes] = sys.stdout.buffer
            return
        if os.path.exists(self.path) and not os.path.isfile(self.path):
            # a device or a pipe (-o /dev/null, a fifo): write to it as it is
            self.f = open(self.path, "wb")
            self.direct = True
            return
        self.path = os.path.realpath(self.path)  # through a symlink, not over it
        folder = os.path.dirname(self.path)
        fd, self.tmp = tempfile.mkstemp(prefix="." + os.path.basename(self.path) + ".",
                                        suffix=".part", dir=folder)
        self.f = os.fdopen(fd, "wb")

    def write(self, data: Any) -> None:
        self.f.write(data)

    def commit(self) -> None:
        if self.direct:
            self.f.close()
            return
        if self.tmp is None:
            self.f.flush()
            return
        assert self.path is not None
        self.f.close()
        try:
            mode = os.stat(self.path).st_mode & 0o7777
        except OSError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(self.tmp, mode)
        os.replace(self.tmp, self.path)
        self.tmp = None

    def abort(self) -> None:
        if self.direct:
            self.f.close()
            return
        if self.tmp is None:
            return
        try:
            self.f.close()
        finally:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None

    def __enter__(self) -> "Output":
        return self

    def __exit__(self, kind: Any, *rest: Any) -> None:
        if kind is None:
            self.commit()
        else:
            self.abort()


def human(n: float) -> str:
    """Bytes in B, kB, MB, GB (powers of 1000)."""
    for unit in ("B", "kB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"  # pragma: no cover


class Progress:
    """A one-line progress meter on a text stream (standard error).

    Draws nothing for the first ``delay`` seconds (short runs stay quiet),
    then at most every ``every`` seconds: bytes read, of the total when
    known, and the rate.  ``close()`` ends the line.
    """

    def __init__(self, label: str, total: Optional[int], stream: IO[str], *,
                 delay: float = 0.5, every: float = 0.2, clock: Callable[[], float] = time.monotonic):
        self.label = label
        self.total = total
        self.stream = stream
        self.delay = delay
        self.every = every
        self.clock = clock
        self.start = clock()
        self.last = -1.0
        self.drawn = False
        self.pos = 0

    def line(self, pos: int) -> str:
        elapsed = max(self.clock() - self.start, 1e-9)
        text = f"{self.label}: {human(pos)}"
        if self.total:
            text += f" of {human(self.total)} ({100 * pos / self.total:.0f}%)"
        return text + f", {human(pos / elapsed)}/s"

    def __call__(self, pos: int) -> None:
        self.pos = pos
        now = self.clock()
        if now - self.start < self.delay or now - self.last < self.every:
            return
        self.last = now
        self.stream.write("\r" + self.line(pos) + "\x1b[K")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r" + self.line(self.pos) + "\x1b[K\n")
            self.stream.flush()
