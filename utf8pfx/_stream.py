"""Streaming helpers of the command line: blobs and text read in chunks.

Nothing here holds a whole input in memory.  Text is read chunk by chunk and
cut at its last newline; a blob is fed chunk by chunk to a ``StreamReader``,
which finds and decodes its records and keeps the one a chunk cut until the
next chunk completes it.  Memory is therefore about one chunk plus the
longest record (or line).  What is here is the command line's own: reading
the chunks (and reporting them to the progress meter), turning the reader's
errors into messages, and outputs that appear only on success.

Offsets in every error are absolute: counted from the first byte of the
input, not of the chunk that was being read.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from typing import IO, Any, Callable, Iterator, List, Optional, Tuple

from . import StreamReader

CHUNK = 1 << 20  # bytes read at a time
SAMPLE = "data/sample.txt"  # the input of `utf8pfx encode` without INPUT, in the package


class BadData(Exception):
    """The input is not what the command expects (exit status 1).

    ``offset`` is the absolute byte offset of the bad data (or None),
    ``index`` the 0-based record (or 1-based line) it belongs to.
    """

    def __init__(self, message: str, offset: Optional[int] = None, index: Optional[int] = None):
        super().__init__(message)
        self.offset = offset
        self.index = index


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


class Source:
    """A binary file read by a StreamReader, its bytes kept until taken.

    ``inspect`` shows each record's prefix exactly as the file has it
    (padding included), not as the reader understood it: the bytes read are
    kept until ``take`` hands out those of a record.
    """

    def __init__(self, f: IO[bytes]):
        self.f = f
        self.kept = bytearray()     # bytes read and not yet taken
        self.kept_from = 0          # the offset of kept[0] in the file

    def read(self, n: int) -> Optional[bytes]:
        data = self.f.read(n)
        if data:
            self.kept += data
        return data

    def take(self, start: int, end: int) -> bytes:
        """The bytes from offset start to end, forgetting those before end."""
        lo, hi = start - self.kept_from, end - self.kept_from
        data = bytes(self.kept[lo:hi])
        del self.kept[:hi]
        self.kept_from = end
        return data

    def peek(self, start: int, n: int) -> bytes:
        """Up to n bytes from offset start, reading on if fewer are kept (for
        showing the bytes of a record the reader refused: the reading stops
        there, so the file is read past what the reader took)."""
        lo = start - self.kept_from
        short = lo + n - len(self.kept)
        if short > 0:
            self.read(short)
        return bytes(self.kept[lo:lo + n])


def bad_record(exc: ValueError, prefix_at: int, size: Optional[int] = None) -> BadData:
    """BadData for the error a StreamReader raised at the record whose
    prefix is at offset ``prefix_at`` (its offsets are already absolute).

    ``size`` is the input's size when it was the reader's ``max_record``:
    a length larger than the whole input is then said to be so.
    """
    index = getattr(exc, "record_index")
    if isinstance(exc, UnicodeDecodeError):
        bad = getattr(exc, "data_offset")
        return BadData(
            f"record {index} (prefix at offset {prefix_at}): invalid UTF-8 at offset {bad}: "
            f"byte(s) {exc.object[exc.start:exc.end].hex(' ')}: {exc.reason}",
            bad, index)
    message = str(exc)
    suffix = f" (record index {index})"  # said first in the CLI's message
    if message.endswith(suffix):
        message = message[:-len(suffix)]
    if size is not None:
        message = message.replace(f"exceeds max_record={size}",
                                  f"is more than the whole input ({size} bytes)")
    return BadData(f"record {index}: {message}", getattr(exc, "data_offset"), index)


BATCH = 8192  # records decoded by one call at most


def batches(f: IO[bytes], reader: StreamReader, *, chunk: int = CHUNK,
            size: Optional[int] = None,
            progress: Optional[Callable[[int], None]] = None) -> Iterator[List[Any]]:
    """The records of the blob in f, in lists of at most BATCH.

    Each chunk read is fed to ``reader`` (push mode), and every complete
    record it then holds is returned before the next chunk is read, the
    incomplete one staying in the reader: a list holds records of about one
    chunk of input whatever their lengths (``StreamReader.batches(n)`` alone
    counts records: in pull mode, n short records and then n long ones would
    all be held at once).  ``progress`` gets the bytes read so far.  Raises
    BadData (``size`` as for ``bad_record``) after yielding every record
    before the bad one: a batch is all or nothing, so the records held
    before the bad one are read again on their own.
    """
    done = 0  # records yielded
    read = 0  # bytes read
    eof = False
    while not eof:
        data = f.read(chunk)
        if data:
            read += len(data)
            if progress:
                progress(read)
            reader.feed(data)
        else:
            eof = True
            reader.feed_eof()
        del data
        try:
            for batch in reader.batches(BATCH):
                done += len(batch)
                yield batch
                del batch  # not held while the next one is decoded
            # fewer than BATCH complete records are left: they go now, so that
            # the reader holds only the incomplete record when the next chunk comes
            batch = reader.read_strings()
        except ValueError as exc:
            index = getattr(exc, "record_index", None)
            if index is None:
                raise
            if index > done:
                yield reader.read_strings(index - done)
            raise bad_record(exc, reader.position, size) from None
        if batch:
            done += len(batch)
            yield batch
        del batch  # released before the next chunk is read and decoded


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

    def write(self, data: Any) -> int:
        # the count, which a StreamWriter reads as io.BufferedWriter reads its raw stream's
        return self.f.write(data)

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
