"""A loop of mixed utf8pfx operations that touches every error path, for
the leak test (tests/test_robustness_leaks.py) and the valgrind run
(python tests/support/leak_workload.py CYCLES).  Not a test module itself."""
import codecs
import io
import sys

import utf8pfx
from utf8pfx import BufferReader, BufferWriter, StreamReader, StreamWriter

CYCLE_OPS = 56  # operations per cycle (counted by hand below)

_ERR = ValueError("handler refuses")  # one error object, raised again and again


def _raising_handler(exc):
    # (an exception object raised again keeps its old traceback and grows it:
    # Python's doing, not a leak, so it starts from none each time)
    raise _ERR.with_traceback(None)


def _garbage_handler(exc):
    return 42


def _replacing_handler(exc):
    return ("?" * (exc.end - exc.start), exc.end)


codecs.register_error("utf8pfx-leak-raise", _raising_handler)
codecs.register_error("utf8pfx-leak-garbage", _garbage_handler)
codecs.register_error("utf8pfx-leak-replace", _replacing_handler)


class Boom(Exception):
    pass


class BoomSource:
    """A pull source whose read fails."""

    def readinto(self, view):
        raise Boom()


class BoomSink:
    """A StreamWriter sink whose write fails."""

    def write(self, b):
        raise Boom()


class Reentrant:
    """A pull source that calls back into its reader: RuntimeError."""

    def __init__(self):
        self.reader = None

    def readinto(self, view):
        return self.reader.read_string()


class Workload:
    EXPECTED_ERRORS = ("UnicodeEncodeError", "UnicodeDecodeError", "ValueError", "TypeError",
                       "OverflowError", "BufferError", "LookupError", "RuntimeError", "Boom",
                       "BlockingIOError")

    def __init__(self):
        self.ascii = "".join(["plain ascii ", "text"])
        self.ucs1 = "".join(["caf\u00e9 ", "cr\u00e8me"])
        self.ucs2 = "".join(["\u20ac 100 ", "\u65e5\u672c"])
        self.ucs4 = "".join(["emoji \U0001F600", "\U00010348"])
        self.long = self.ucs2 * 300
        self.sur = "".join(["a\udcff", "b\ud800"])
        self.items = [self.ascii, self.ucs1, self.ucs2, self.ucs4]
        self.bad_items = [self.ascii, self.sur, self.ucs1]
        self.blob = b"".join(utf8pfx.encode(s) for s in self.items)
        self.bad_blob = self.blob + b"\x04ab\xff\xfe"
        # well formed, but a surrogate (ED A0 80): a vector short decoder
        # makes the str before its value check refuses it, then drops it
        self.refused_blob = b"\x09ab\xed\xa0\x80cdef"
        self.raw = bytearray(b"raw bytes \x00\xff")
        self.writer = BufferWriter(1 << 12)
        self.sur_writer = BufferWriter(errors="surrogatepass")
        self.raise_writer = BufferWriter(errors="utf8pfx-leak-raise")
        self.garbage_writer = BufferWriter(errors="utf8pfx-leak-garbage")
        self.custom_writer = BufferWriter(errors="utf8pfx-leak-replace")
        self.sink = io.BytesIO()
        self.boom_sink = BoomSink()
        self.boom_source = BoomSource()
        self.errors_seen = set()

    def watched(self):
        """Objects whose reference counts must not move."""
        return [self.ascii, self.ucs1, self.ucs2, self.ucs4, self.long, self.sur,
                self.items, self.bad_items, self.blob, self.bad_blob, self.refused_blob,
                self.raw,
                _raising_handler, _garbage_handler, _replacing_handler, _ERR, self.writer,
                self.sur_writer, self.raise_writer, self.sink, self.boom_sink, self.boom_source]

    def _boom_iter(self):
        yield self.ascii
        yield self.ucs4
        raise Boom()

    def _meddling_iter(self):
        yield self.ascii
        self.writer.clear()  # refused mid-batch: RuntimeError

    def _expect(self, exc_type, fn, *args, **kwargs):
        try:
            fn(*args, **kwargs)
        except exc_type:
            self.errors_seen.add(exc_type.__name__)
        else:
            raise AssertionError("%s did not raise %s" % (fn, exc_type.__name__))

    def run(self, cycles):
        w, ex = self.writer, self._expect
        for _ in range(cycles):
            # 16 successful writer operations
            w.clear()
            w.write_string(self.ascii)
            w.write_string(self.ucs1)
            w.write_string(self.ucs2)
            w.write_string(self.ucs4)
            w.write_string(self.long)
            w.write_strings(self.items)
            w.write_strings(iter(self.items))
            w.write_vint(2**63)
            w.write_bytes(self.raw)
            w.write_raw(self.blob)
            self.sur_writer.write_string(self.sur)
            self.sur_writer.clear()
            self.custom_writer.write_string(self.sur)
            self.custom_writer.clear()
            utf8pfx.encode(self.ucs2, "backslashreplace")
            # 12 writer errors
            ex(UnicodeEncodeError, w.write_string, self.sur)
            ex(UnicodeEncodeError, w.write_strings, self.bad_items)
            ex(ValueError, self.raise_writer.write_string, self.sur)
            ex(TypeError, self.garbage_writer.write_string, self.sur)
            ex(TypeError, w.write_string, self.raw)
            ex(TypeError, w.write_strings, [self.ascii, 5])
            ex(Boom, w.write_strings, self._boom_iter())
            ex(RuntimeError, w.write_strings, self._meddling_iter())
            ex(ValueError, w.write_vint, -1)
            ex(OverflowError, w.write_vint, 2**64)
            ex(LookupError, BufferWriter, errors="no-such-handler")
            with memoryview(w):
                ex(BufferError, w.write_raw, self.long.encode())
            # 9 reader successes
            r = BufferReader(self.blob)
            r.read_string()
            r.read_strings(2)
            r.read_bytes()
            r.position = 0
            list(r)
            utf8pfx.decode_all(self.blob)
            utf8pfx.decode_all(self.bad_blob, "replace")
            BufferReader(w).read_strings(3)
            BufferReader(self.refused_blob, errors="surrogatepass").read_string()
            # 7 reader errors
            ex(UnicodeDecodeError, utf8pfx.decode_all, self.bad_blob)
            ex(UnicodeDecodeError, BufferReader(self.bad_blob).read_strings)
            ex(UnicodeDecodeError, BufferReader(self.refused_blob).read_string)
            ex(ValueError, utf8pfx.decode, self.blob)  # trailing data
            ex(ValueError, BufferReader(self.blob[:3]).read_string)  # truncated
            r.close()
            ex(ValueError, r.read_string)  # closed
            ex(ValueError, BufferReader(b"\x80" * 11).read_vint)
            # 6 stream successes: pushed in two pieces with a record cut
            # between them, then a StreamWriter flushing as it goes
            sr = StreamReader()
            sr.feed(self.blob[:20])
            list(sr)
            sr.feed(memoryview(self.blob)[20:])
            sr.read_strings()
            self.sink.seek(0)
            self.sink.truncate()
            StreamWriter(self.sink, flush_size=32).write_strings(self.items)
            # 6 stream errors; the pull reader's batches come in short reads
            # before the record cut off by the end of the stream
            ex(BlockingIOError, sr.read_string)  # before feed_eof(): not now
            sr.feed(self.bad_blob)
            sr.feed_eof()
            ex(UnicodeDecodeError, sr.read_strings)
            ex(ValueError, list, StreamReader(io.BytesIO(self.blob[:-1]), read_size=16).batches(2))
            ex(Boom, StreamReader(self.boom_source, read_size=64).read_strings)
            re = Reentrant()
            re.reader = StreamReader(re, read_size=64)
            ex(RuntimeError, re.reader.read_string)
            re.reader = None  # the cycle source <-> reader, broken by hand
            ex(Boom, StreamWriter(self.boom_sink, flush_size=8).write_strings, self.items)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    wl = Workload()
    wl.run(n)
    missing = set(Workload.EXPECTED_ERRORS) - wl.errors_seen
    assert not missing, missing
    print("leak_workload: %d cycles, %d operations" % (n, n * CYCLE_OPS))
