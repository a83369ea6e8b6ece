"""StreamWriter: prefixed records written to a sink with bounded memory.

A StreamWriter owns a BufferWriter and hands its bytes to ``sink.write``
whenever they reach ``flush_size``.  The records are encoded by the
BufferWriter's C methods unchanged.  Its base class, ``_StreamWriterCore``
(csrc/stream/stream_writer.c), holds the buffer, the position, the call
lock and the one-record methods (write_string, write_bytes, write_raw,
write_vint: a Python method around each would cost several times the
record); this module cuts long inputs into chunks and moves bytes to the
sink, taking the same lock through ``_enter()`` / ``_leave()``:

- ``write_strings`` takes a list or tuple in slices and any other iterable
  in lists its items are pulled into (``_pull``); each chunk is one
  ``write_strings`` call of the BufferWriter (its list path, the fastest it
  has), and the bytes are flushed between chunks.  A chunk's count is sized
  to fill half the room left before ``flush_size`` at the bytes per record
  of the recent chunks, so a cycle costs a few dozen chunk calls; and the
  C core cuts a chunk short once its items could take the room left (each
  str weighed by the most its storage kind can take: ``_pull``, ``_fit``),
  so the buffer ends a flush cycle at about ``flush_size`` plus one record
  even when the records grow much longer than the recent ones.
- The sink gets a ``memoryview`` of the BufferWriter, released as soon as
  ``sink.write`` returns: no copy, and a sink that keeps the view holds a
  released view.  A sink that keeps a view derived from it (a slice, a
  ``memoryview()`` of it) keeps the BufferWriter exported; the StreamWriter
  then leaves that BufferWriter to the view (its bytes stay valid) and goes
  on in a new one.
- ``sink.write``'s result is read as ``io.BufferedWriter`` reads its raw
  stream's: a count below the length means "write the rest again", None
  means a non-blocking sink would block (``BlockingIOError``),
  ``InterruptedError`` is retried.
"""
from __future__ import annotations

import errno
from operator import index as _index
from typing import TYPE_CHECKING, Any, Iterable, List, Optional, Union

from ._core import BufferWriter, _StreamWriterCore

if TYPE_CHECKING:  # names of the stubs only (typing_extensions is no runtime dependency)
    from typing_extensions import Buffer, Literal

    from ._core import _ArrowStrings, _Encoding, _Prefix

    _Nulls = Optional[Literal["error", "skip", "empty", "null"]]

__all__ = ["StreamWriter"]

_DEFAULT_FLUSH = 1 << 20
_FIRST_CHUNK = 1024  # records in a chunk before any bytes per record are known
_MAX_CHUNK = 8192    # records per chunk at most: the strs of a chunk stay alive meanwhile
_ITEM_MSG = "write_strings() item "
_MAX_PREALLOC = 64 << 20  # bytes allocated up front at most


def _set_accepted(exc: BaseException, accepted: Optional[int]) -> None:
    """Records on `exc` how many of the call's records were accepted."""
    try:
        exc.records_accepted = accepted  # type: ignore[attr-defined]
    except Exception:  # pragma: no cover - an exception type that refuses attributes
        pass


_NONE = object()  # no count noted yet in this call


def _taken(r: Any, done: int, n: int) -> int:
    """The bytes a sink.write() call took, read as io.BufferedWriter reads its
    raw stream's result, with `done` of `n` bytes taken before it."""
    if r is None:
        raise BlockingIOError(
            errno.EAGAIN, "sink.write() could not complete without blocking (it returned None)",
            done)
    k: int = _index(r)
    if k < 0 or k > n - done:
        raise OSError(
            f"sink.write() returned invalid length {k} (should have been between 0 and {n - done})")
    return k


def _write_once(write: Any, view: memoryview, done: int, n: int) -> int:
    """One sink.write() call of the bytes from `done` of `n` (`view`):
    returns `done` moved by what the sink took (unmoved when the call was
    interrupted: io makes it again).  The bytes are the sink's once it
    returns, so they are counted before anything else can fail, and in the
    common case (all taken) with no allocation: no MemoryError or signal
    between the call and the count can leave taken bytes buffered, to be
    written twice."""
    rest = n - done
    try:
        r = write(view)
    except InterruptedError:
        return done
    if r.__class__ is int and r == rest:
        return n
    return done + _taken(r, done, n)


def _rows(array: Any) -> Optional[int]:
    """len(array), or None for an object without one (an Arrow stream)."""
    try:
        return len(array)
    except Exception:
        return None


def _release(view: memoryview) -> None:
    try:
        view.release()
    except BufferError:
        pass  # exported further by the sink: _replace sees it


def _shift_index(exc: BaseException, base: int) -> None:
    """Makes BufferWriter's "write_strings() item i" count from the call's
    first item, not the chunk's."""
    if not base or not isinstance(exc, TypeError) or len(exc.args) != 1:
        return
    msg = exc.args[0]
    if isinstance(msg, str) and msg.startswith(_ITEM_MSG):
        num, sep, rest = msg[len(_ITEM_MSG):].partition(" ")
        if num.isdigit():
            exc.args = (_ITEM_MSG + str(int(num) + base) + sep + rest,)


class _ArrowFlush:
    """write_arrow's flush(data): the C calls it with the bytes it has emptied
    its buffer into, once the buffer passes flush_size; it hands them to the
    sink and keeps the counts the caller settles a failure with.  The C puts
    the bytes into ``parcel[0]`` first, and the call takes them out as it
    starts: a call that fails before its first line leaves them there.  An
    object made per call, not a closure: CPython 3.12 and 3.13 (3.12.1 and
    3.13.0 at least) corrupt a code object when making a function fails for
    want of memory."""

    __slots__ = ("_writer", "_write", "handed", "entered", "uncounted", "rest", "parcel")

    def __init__(self, writer: "StreamWriter", write: Any) -> None:
        self._writer = writer
        self._write = write
        self.handed = 0             # bytes handed over, counted
        self.entered = False        # called: the C has emptied its buffer into it
        self.uncounted: Optional[bytes] = None  # handed over, not yet in `handed`
        self.rest = b""             # what a failing call did not get the sink to take
        self.parcel: List[Optional[bytes]] = [None]

    def __call__(self, data: bytes) -> None:
        # the data is no longer the C's: bound before anything can fail
        # (`rest` until the sink takes it, `uncounted` until counted)
        self.entered = True
        self.rest = data
        self.parcel[0] = None
        self.uncounted = data
        self.handed += len(data)
        self.uncounted = None
        n, done = len(data), 0
        view = memoryview(data)  # of immutable bytes: the sink may keep it
        try:
            while done < n:
                done = _write_once(self._write, view[done:] if done else view, done, n)
        except BaseException:
            self.rest = data[done:]
            raise
        self.rest = b""
        self._writer._flushed += 1


class StreamWriter(_StreamWriterCore):
    """Writes length-prefixed records to a sink (``sink.write``) with bounded memory.

    ``StreamWriter(sink, /, *, flush_size=1 << 20, prefix="varint",
    encoding="utf-8", errors="strict")`` has BufferWriter's write methods,
    with the same results and errors, and hands its bytes to
    ``sink.write`` whenever they reach ``flush_size``, at ``flush()`` and at
    ``close()``.  Every exception a write method raises carries
    ``records_accepted``: how many of the call's records are written or
    buffered.  ``close()`` (also the end of a ``with`` block) flushes and
    does not close the sink.  See docs/api.md for the exact rules.
    """

    # the core holds _w (the BufferWriter), _flush_size, _produced, _closed
    # and the lock
    __slots__ = ("_sink", "_preset", "_bsum", "_rsum", "_flushed", "_settled", "__weakref__")

    def __init__(
        self,
        sink: Any,
        /,
        *,
        flush_size: int = _DEFAULT_FLUSH,
        prefix: _Prefix = "varint",
        encoding: _Encoding = "utf-8",
        errors: str = "strict",
    ) -> None:
        flush_size = _index(flush_size)
        if flush_size < 1:
            raise ValueError(f"StreamWriter() flush_size must be >= 1, got {flush_size}")
        if not callable(getattr(sink, "write", None)):
            raise TypeError(
                f"StreamWriter() sink must have a write() method, not {type(sink).__name__}")
        # the preset and the handler are checked (and looked up) here, as
        # BufferWriter() does; the room for one flush cycle is allocated now
        # (up to a limit), with slack for the record that passes flush_size,
        # so that the buffer does not double past it
        try:
            self._w = BufferWriter(min(flush_size, _MAX_PREALLOC) + max(4096, flush_size >> 3),
                                   errors=errors, prefix=prefix, encoding=encoding)
        except (TypeError, ValueError, LookupError) as e:
            if len(e.args) == 1 and isinstance(e.args[0], str):
                e.args = (e.args[0].replace("BufferWriter()", "StreamWriter()"),)
            raise
        self._preset = (errors, prefix, encoding)
        self._sink = sink
        self._flush_size = flush_size
        self._closed = False
        self._produced = 0
        # bytes and records of the recent chunks, each sum decayed by a
        # quarter per chunk: bytes per record, weighted by records, so that a
        # chunk of one odd record does not swing the next chunk's size
        self._bsum = 0.0
        self._rsum = 0.0
        self._flushed = 0   # flushes so far (a call compares it before and after)
        self._settled: Any = _NONE  # the count noted last in the current call

    def _note(self, exc: BaseException, accepted: Optional[int]) -> None:
        """Records on `exc` how many of the call's records were accepted, and
        keeps the count for the call's last handler (_unnoted)."""
        self._settled = accepted
        _set_accepted(exc, accepted)

    def _unnoted(self, exc: BaseException) -> None:
        """For an exception that reaches a write method's last handler with no
        count: raised before anything was written (0), or one that CPython
        put in place of a noted one as it left a frame (a MemoryError for a
        traceback entry it could not make, sometimes with the first one
        lost), whose count then stands."""
        k = self._settled
        _set_accepted(exc, 0 if k is _NONE else k)

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("I/O operation on closed StreamWriter")

    # --- moving bytes to the sink ---------------------------------------------

    def _replace(self, rest: bytes) -> None:
        """The buffer becomes `rest`: in the same BufferWriter, or in a new one
        when a view the sink kept still exports the old one."""
        w = self._w
        try:
            w.clear()
        except BufferError:
            errors, prefix, encoding = self._preset
            w = BufferWriter(w.capacity, errors=errors, prefix=prefix, encoding=encoding)
            self._w = w
        if rest:
            w.write_raw(rest)

    def _flush_locked(self) -> None:
        """Hands every buffered byte to the sink, as io.BufferedWriter flushes
        into its raw stream.  On an exception the bytes the sink did not take
        stay buffered, first in line."""
        w = self._w
        n = len(w)
        if not n:
            return
        done = 0
        write = self._sink.write
        try:
            while done < n:
                # a view per call, released when it returns (the sink may
                # have released it itself)
                base = memoryview(w)
                view = base[done:] if done else base
                try:
                    done = _write_once(write, view, done, n)
                finally:
                    _release(view)
                    _release(base)
        finally:
            # the bytes not taken move to the front of the buffer (a copy,
            # on this rare path only); _replace also leaves a BufferWriter
            # that a view kept by the sink still exports
            self._replace(w.getvalue()[done:] if done < n else b"")
        self._flushed += 1

    def _after_write(self, accepted: Optional[int]) -> None:
        if len(self._w) >= self._flush_size:
            try:
                self._flush_locked()
            except BaseException as e:
                self._note(e, accepted)
                raise

    # --- Arrow ------------------------------------------------------------------

    def write_arrow(self, array: _ArrowStrings, /, *, nulls: _Nulls = None) -> int:
        """Append one record per value of an Arrow string array or stream, as
        BufferWriter.write_arrow, flushing whenever the buffer passes flush_size."""
        self._enter()
        self._settled = _NONE
        try:
            return self._arrow_locked(array, nulls)
        except BaseException as e:
            if not hasattr(e, "records_accepted"):
                self._unnoted(e)
            raise
        finally:
            self._leave()

    def _arrow_locked(self, array: Any, nulls: _Nulls) -> int:
        # The C writes the array in slices of rows and calls fl whenever
        # its buffer passes flush_size, handing over the buffer's bytes as a
        # bytes object (the buffer is emptied): memory stays about
        # flush_size plus a slice, whatever the array's size.
        try:
            self._check_open()
        except BaseException as e:
            self._note(e, 0)
            raise
        w = self._w
        start_len = len(w)
        start_flushed = self._flushed
        start_produced = self._produced
        fl = _ArrowFlush(self, self._sink.write)
        try:
            n: int = w._write_arrow_flushing(array, nulls, self._flush_size, fl, fl.parcel)
        except BaseException as e:
            lost = fl.parcel[0]
            if lost is not None:  # handed over to a call of fl that never ran
                fl.parcel[0] = None
                fl.entered = True
                fl.rest = fl.uncounted = lost
            if not fl.entered:
                self._note(e, 0)  # all or nothing: the C took the call's rows back
            else:
                # the rows before the failing one stay (the C put
                # records_accepted on the exception); the bytes a failing
                # sink did not take go back to the front of the buffer
                handed = fl.handed
                if fl.uncounted is not None:
                    handed += len(fl.uncounted)
                self._produced = start_produced + handed - start_len + len(w)
                if fl.rest:
                    self._replace(fl.rest + w.getvalue())
            raise
        rows: Optional[int] = None
        try:
            self._produced = start_produced + n
            rows = _rows(array)
            self._after_write(rows)
        except BaseException as e:
            if not hasattr(e, "records_accepted"):
                # every row is in, and what failed came after them: kept
                # after a flush during the call, else taken back (all or
                # nothing, as write_strings)
                self._keep_or_roll_back(_rows(array) if rows is None else rows, n, start_len,
                                        start_flushed, start_produced, e)
            raise
        return n

    # --- write_strings ----------------------------------------------------------

    def write_strings(self, iterable: Union[Iterable[Optional[str]], _ArrowStrings], /) -> int:
        """Append one record per item, as BufferWriter.write_strings; return the bytes.

        Long inputs are flushed as they go (memory stays about flush_size
        plus one record).  Without a flush during the call, it is all or
        nothing; see docs/api.md for what a failure after a flush keeps.
        """
        self._enter()
        self._settled = _NONE
        try:
            try:
                self._check_open()
            except BaseException as e:
                self._note(e, 0)
                raise
            t = type(iterable)
            if t is not list and t is not tuple and (
                    hasattr(t, "__arrow_c_array__") or hasattr(t, "__arrow_c_stream__")):
                # what BufferWriter.write_strings does with an Arrow exporter
                return self._arrow_locked(iterable, None)
            return self._strings_locked(iterable)
        except BaseException as e:
            if not hasattr(e, "records_accepted"):
                self._unnoted(e)
            raise
        finally:
            self._leave()

    def _chunk_size(self, seq: bool) -> int:
        room = self._flush_size - len(self._w)
        if self._rsum <= 0:
            k = min(_FIRST_CHUNK, room // 32)
        elif seq:
            # a list or tuple holds its strs anyway: a chunk may fill the
            # whole room, so a batch that fits goes to the C in one call
            k = int(room * self._rsum / self._bsum)
        else:
            k = int(room * self._rsum / (2 * self._bsum))
            if k > _MAX_CHUNK:
                k = _MAX_CHUNK
        return 1 if k < 1 else k

    def _strings_locked(self, iterable: Any) -> int:
        w = self._w
        start_len = len(w)
        start_flushed = self._flushed
        start_produced = self._produced
        accepted = 0  # records of this call in the buffer or written
        total = 0     # bytes of this call
        # An exception that no handler below settled (a MemoryError or a
        # KeyboardInterrupt in this bookkeeping) is settled by _settle from
        # the state at the start and `pending`: the buffer's length before
        # the chunk being written, set until both counts include that chunk.
        pending: Optional[int] = None
        chunk: Any = None
        settled: Optional[BaseException] = None  # the exception a handler below settled
        try:
            seq = type(iterable) is list or type(iterable) is tuple
            try:
                it = None if seq else iter(iterable)  # TypeError as BufferWriter's
            except BaseException as e:
                self._note(e, 0)
                settled = e
                raise
            pos = 0
            ended = False
            if seq and len(w) and self._rsum > 0 and \
                    self._chunk_size(seq) < len(iterable) <= self._flush_size * self._rsum / self._bsum:
                # a sequence that fits an empty buffer but not the room left:
                # flush first, and it goes to the C in one call, not sliced
                try:
                    self._flush_locked()
                except BaseException as e:
                    self._note(e, 0)
                    settled = e
                    raise
            while True:
                k = self._chunk_size(seq)
                # the count is cut short where the records weigh more than the
                # room left (_pull, _fit): longer records than the recent ones
                # must not pile up past flush_size in one chunk
                budget = self._flush_size - len(self._w)
                pulled: Optional[BaseException] = None
                if seq:
                    m = self._fit(iterable, pos, k, budget)
                    # the sequence itself when the rest of it is all of it: a
                    # slice would copy (and count references to) every item
                    chunk = iterable if pos == 0 and m == len(iterable) else iterable[pos:pos + m]
                    pos += m
                else:
                    # the iterator's exception comes after the items it gave:
                    # those are written first
                    chunk, pulled, ended = self._pull(it, k, budget)  # type: ignore[arg-type]
                if not chunk and pulled is None:
                    break
                w = self._w
                pending = len(w)
                try:
                    n = w.write_strings(chunk)
                except BaseException as e:
                    # the C takes a failing chunk back whole (every record
                    # adds a byte at least); a buffer that grew means the
                    # chunk went in and the exception was raised after the
                    # call had returned (a signal handler's): _settle
                    # counts it below
                    if len(w) == pending:
                        pending = None
                        _shift_index(e, accepted)
                        self._fail(e, chunk, accepted, total, start_len, start_flushed,
                                   start_produced)
                        settled = e
                    raise
                # both counts take the chunk in one step (the additions come
                # before either store); `pending` goes after them
                accepted, total = accepted + len(chunk), total + n
                pending = None
                self._produced = start_produced + total
                if pulled is not None:
                    self._keep_or_roll_back(accepted, total, start_len, start_flushed,
                                            start_produced, pulled)
                    settled = pulled
                    raise pulled
                self._bsum = self._bsum * 0.75 + n
                self._rsum = self._rsum * 0.75 + len(chunk)
                if len(self._w) >= self._flush_size:
                    try:
                        self._flush_locked()
                    except BaseException as e:
                        self._note(e, accepted)  # the sink's: every record stays
                        settled = e
                        raise
                if pos >= len(iterable) if seq else ended:
                    break  # the input has no more
        except BaseException as e:
            if e is not settled:
                self._settle(e, chunk, pending, accepted, total, start_len, start_flushed,
                             start_produced)
            raise
        return total

    def _settle(self, exc: BaseException, chunk: Any, pending: Optional[int], accepted: int,
                total: int, start_len: int, start_flushed: int, start_produced: int) -> None:
        """An exception that left write_strings between its steps: the
        records of the chunk written last are counted if they are in the
        buffer (`pending`), and the call is then kept or rolled back as for
        any failure that is not the sink's."""
        if pending is not None and len(self._w) != pending:
            total += len(self._w) - pending
            accepted += len(chunk)
        self._keep_or_roll_back(accepted, total, start_len, start_flushed, start_produced, exc)

    def _keep_or_roll_back(self, accepted: Optional[int], total: int, start_len: int,
                           start_flushed: int, start_produced: int, exc: BaseException) -> None:
        """For an error that is not the sink's, after `accepted` records of
        the call (`total` bytes) went into the buffer: without a flush during
        the call, they are taken back (all or nothing); after one, they stay.
        Idempotent: it sets the state, it does not adjust it."""
        if self._flushed == start_flushed:
            self._roll_back(start_len, start_produced, exc)
        else:
            self._count(start_produced, total)  # no int made: nothing to fail
            self._note(exc, accepted)

    def _roll_back(self, start_len: int, start_produced: int, exc: BaseException) -> None:
        """The buffer and position as they were before a call that flushed
        nothing (its records are dropped from the buffer's end): in place,
        allocating nothing, so that it holds when the failure being settled
        was a MemoryError; a copy only when the sink kept a view."""
        if not self._rewind(start_len, start_produced):
            w = self._w
            if len(w) != start_len:
                self._replace(w.getvalue()[:start_len])
            self._produced = start_produced
        self._note(exc, 0)

    def _fail(self, exc: BaseException, chunk: Any, accepted: int, total: int,
              start_len: int, start_flushed: int, start_produced: int) -> None:
        """A chunk failed in BufferWriter.write_strings (which took it back
        whole).  Without a flush during the call, the call's earlier chunks
        are taken back too.  After one, the chunk's records before the
        failing item are written again (they were accepted once; the failing
        one is found by writing them one by one), so that every record
        before it is kept."""
        if self._flushed == start_flushed:
            self._keep_or_roll_back(0, total, start_len, start_flushed, start_produced, exc)
            return
        w = self._w
        before = len(w)
        kept = start_produced + total
        base = kept - before  # the ints made before any record is written again
        good = 0
        try:
            for s in chunk:
                try:
                    w.write_string(s)
                except BaseException:
                    break
                good += 1
        except BaseException:
            # this bookkeeping failed (good's int): the records written again
            # go, so that the call's settling (accepted, total) holds
            if not self._rewind(before, kept):
                self._replace(w.getvalue()[:before])
            raise
        self._count_buffer(base)
        self._note(exc, accepted + good)

    # --- flushing and closing ------------------------------------------------------

    def flush(self) -> None:
        """Hand every buffered byte to sink.write (the sink's own flush is not called)."""
        self._enter()
        try:
            self._check_open()
            self._flush_locked()
        finally:
            self._leave()

    def close(self) -> None:
        """Flush and mark the writer closed; the sink stays open.

        If the flush raises, the writer stays open with the bytes the sink did
        not take, so that close() can be called again.  A second close() does
        nothing.
        """
        self._enter()
        try:
            if self._closed:
                return
            self._flush_locked()
            self._closed = True
            # the buffer is freed now, as a closed io object frees its own
            errors, prefix, encoding = self._preset
            self._w = BufferWriter(0, errors=errors, prefix=prefix, encoding=encoding)
        finally:
            self._leave()

    def __enter__(self) -> "StreamWriter":
        """Return the writer itself (ValueError if it is closed)."""
        self._enter()
        try:
            self._check_open()
        finally:
            self._leave()
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the writer (flushing it); the sink stays open."""
        self.close()

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise TypeError(f"cannot pickle {type(self).__name__!r} object")

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"buffered={len(self._w)}"
        return (f"<{type(self).__name__} {state} position={self._produced} "
                f"flush_size={self._flush_size} prefix={self._w.prefix!r} "
                f"encoding={self._w.encoding!r} errors={self._w.errors!r}>")

    # --- attributes ------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True after close() (or the end of a with block)."""
        return self._closed

    @property
    def sink(self) -> Any:
        """The object whose write() receives the bytes."""
        return self._sink

    @property
    def flush_size(self) -> int:
        """Buffered bytes that trigger a flush."""
        return self._flush_size

    @property
    def buffered(self) -> int:
        """Bytes held that sink.write() has not taken yet."""
        return len(self._w)

    @property
    def position(self) -> int:
        """Bytes produced so far: taken by the sink plus buffered."""
        return self._produced

    @property
    def prefix(self) -> str:
        """The wire-format preset of every prefixed record."""
        return self._w.prefix

    @property
    def encoding(self) -> str:
        """The encoding of every string: "utf-8" or "mutf-8"."""
        return self._w.encoding

    @property
    def errors(self) -> str:
        """The error handler for lone surrogates."""
        return self._w.errors
