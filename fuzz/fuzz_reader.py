"""atheris harness: BufferReader / decode / decode_all on hostile blobs.

The input is split into a small header (error handler, decode kernel level,
strict_vint, the operations to run) and a blob, which half the time is first rewritten into a
well-formed stream of prefixed strings so that mutations explore the UTF-8
decoders rather than only the prefix checks.  Every result is compared with
the test suite's pure-Python reader (tests/support/reference.py: varint loop +
bytes.decode): same value, or the same exception type at the same offset
(UnicodeDecodeError also with the same start/end/reason), and after any
error the position is unchanged.

Split-points mode (a leading flag picks it): the blob, in any of the wire
presets and encodings, is handed to a StreamReader in pieces whose
boundaries the input chooses, pushed (feed) or pulled (a source giving the
pieces as short reads of read_size at most, now and then answering None,
"no data now"), and read by iteration, read_strings(), batches(k) or
read_string() calls.  The records must be those BufferReader iteration
reads from the whole blob; on an error, the records returned before it are
BufferReader's first ones, and the exception has the same type, the same
absolute offset (data_offset: the record's offset for a ValueError, the bad
byte's for a UnicodeDecodeError, with the same start/end/reason) and a
record_index equal to the number of records BufferReader read before it
(iteration and read_string() return all of those first; read_strings()
and batches() none of the call that fails).
Any other exception, or a crash, is a finding.

Run:  python fuzz/run.py reader 60     (see fuzz/README.md)
"""
import os
import sys

import atheris

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

with atheris.instrument_imports():
    import utf8pfx
    from support.reference import (RefError, pfx, ref_payload, ref_read_all, ref_read_string,
                                   ref_vint)
    from support.reference import ours_or_error as ours
    from support.reference import ref_or_error as ref
    from utf8pfx import BufferReader, BufferWriter, StreamReader, decode, decode_all
    from utf8pfx._reference import PREFIXES

HANDLERS = ["strict", "replace", "ignore", "surrogateescape", "surrogatepass",
            "backslashreplace"]
# every decode kernel level the CPU has (scalar, sse, avx2, ...): one per input
LEVELS = list(utf8pfx._core._decode_isa_levels())


def wellformed(raw, fdp):
    """Cut raw into prefixed records (lengths from the input)."""
    out = bytearray()
    i = 0
    while i < len(raw):
        n = fdp.ConsumeIntInRange(0, 40) if fdp.remaining_bytes() else len(raw) - i
        chunk = raw[i:i + n]
        out += pfx(chunk)
        i += max(n, 1)
    return bytes(out)


ENCODINGS = ["utf-8", "mutf-8"]
STREAM_PREFIXES = list(PREFIXES)


class Pieces:
    """A pull source with read(n) only: the pieces one by one, each as
    reads of at most n bytes; with `nones`, None ("no data now") before
    every piece."""

    def __init__(self, pieces, nones):
        self.pieces = [p for p in pieces if p]
        self.nones = nones
        self.owe_none = nones
        self.eof = False

    def read(self, n=-1):
        if self.owe_none and self.pieces:
            self.owe_none = False
            return None
        if not self.pieces:
            self.eof = True
            return b""
        p = self.pieces[0]
        take, rest = p[:n], p[n:]
        if rest:
            self.pieces[0] = rest
        else:
            self.pieces.pop(0)
            self.owe_none = self.nones
        return take


class PiecesInto(Pieces):
    """The same with readinto(view), which the reader then uses."""

    def readinto(self, view):
        b = self.read(len(view))
        if b is None:
            return None
        view[:len(b)] = b
        return len(b)


def buffer_reader_result(blob, **kw):
    """(records, error) of BufferReader iteration over the whole blob;
    error: None or (type, absolute offset, UnicodeDecodeError fields)."""
    r = BufferReader(blob, **kw)
    out = []
    try:
        for x in r:
            out.append(x)
    except ValueError as e:
        at = e.data_offset if isinstance(e, UnicodeDecodeError) else r.position
        return out, (type(e), at, _ude(e))
    return out, None


def _ude(e):
    return (e.start, e.end, e.reason, e.object) if isinstance(e, UnicodeDecodeError) else None


def stream_result(r, src, pieces, how, k, end):
    """(records, error) of a StreamReader read by API `how`: pushed in
    `pieces` (src None) or pulled from src."""
    out = []
    push = src is None
    eof = [False]

    def take():
        """One round of the API over what the reader holds or can pull."""
        if how == 0:
            for x in r:
                out.append(x)
        elif how == 1:
            out.extend(r.read_strings())
        elif how == 2:
            for b in r.batches(k):
                assert len(b) <= k and b
                out.extend(b)
        else:
            while True:
                try:
                    out.append(r.read_string())
                except BlockingIOError:
                    return
                except ValueError as e:
                    if (type(e) is ValueError and e.data_offset == end
                            and e.record_index == len(out) and (push and eof[0]
                                                                 or not push and src.eof)):
                        return  # the clean end of the stream
                    raise

    try:
        if push:
            for p in pieces:
                r.feed(p)
                take()
            r.feed_eof()
            eof[0] = True
            take()
        else:
            # every round reads on; a None from the source ends one early
            for _ in range(4 * len(pieces) + 4):
                take()
                if src.eof:
                    break
            assert src.eof, "the pull reader stopped before the end of the stream"
        assert r.position == end and r.buffered == 0, (r.position, r.buffered, end)
    except ValueError as e:
        if type(e) is not UnicodeDecodeError:
            assert type(e) is ValueError, e
        return out, (type(e), e.data_offset, _ude(e), e.record_index)
    return out, None


def stream_input(fdp):
    """Split-points mode: see the module docstring."""
    errors = HANDLERS[fdp.ConsumeIntInRange(0, len(HANDLERS) - 1)]
    utf8pfx._core._set_decode_isa(LEVELS[fdp.ConsumeIntInRange(0, len(LEVELS) - 1)])
    prefix = STREAM_PREFIXES[fdp.ConsumeIntInRange(0, len(STREAM_PREFIXES) - 1)]
    encoding = ENCODINGS[fdp.ConsumeIntInRange(0, 1)]
    strict = fdp.ConsumeBool()
    push = fdp.ConsumeBool()
    how = fdp.ConsumeIntInRange(0, 3)
    k = fdp.ConsumeIntInRange(1, 8)
    read_size = fdp.ConsumeIntInRange(1, 40)
    nones = fdp.ConsumeBool()
    readinto = fdp.ConsumeBool()
    cuts = [fdp.ConsumeIntInRange(0, 255) for _ in range(fdp.ConsumeIntInRange(0, 12))]
    form = fdp.ConsumeIntInRange(0, 1)
    raw = fdp.ConsumeBytes(fdp.remaining_bytes())
    if form == 1:  # well-formed records of the preset, payloads from the input
        sub = atheris.FuzzedDataProvider(raw[:8])
        w = BufferWriter(prefix=prefix)
        i, rest = 0, raw[8:]
        while i < len(rest):
            n = sub.ConsumeIntInRange(0, 40) if sub.remaining_bytes() else len(rest) - i
            w.write_bytes(rest[i:i + n])
            i += max(n, 1)
        raw = w.getvalue()
    # cut points: increments, so that the pieces cover the whole blob
    bounds, at = [0], 0
    for c in cuts:
        at = min(len(raw), at + c)
        bounds.append(at)
    bounds.append(len(raw))
    pieces = [raw[a:b] for a, b in zip(bounds, bounds[1:])]
    kw = dict(errors=errors, prefix=prefix, encoding=encoding, strict_vint=strict)
    want = buffer_reader_result(raw, **kw)
    if push:
        src, r = None, StreamReader(**kw)
    else:
        src = (PiecesInto if readinto else Pieces)(pieces, nones)
        r = StreamReader(src, read_size=read_size, **kw)
    got = stream_result(r, src, pieces, how, k, len(raw))
    if want[1] is not None:
        # the error names the record BufferReader stopped at; the calls
        # before it returned BufferReader's first records (read_strings and
        # batches return nothing of the call that fails; the one-record
        # APIs every record before the bad one)
        want = (want[0], want[1] + (len(want[0]),))
        if how in (1, 2) and got[1] is not None:
            want = (want[0][:len(got[0])], want[1])
    assert got == want, (prefix, encoding, errors, strict, push, how, k, read_size, nones,
                         readinto, pieces, got, want)


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    if fdp.ConsumeBool():
        stream_input(fdp)
        return
    errors = HANDLERS[fdp.ConsumeIntInRange(0, len(HANDLERS) - 1)]
    utf8pfx._core._set_decode_isa(LEVELS[fdp.ConsumeIntInRange(0, len(LEVELS) - 1)])
    strict = fdp.ConsumeBool()
    ops = [fdp.ConsumeIntInRange(0, 9) for _ in range(fdp.ConsumeIntInRange(1, 12))]
    args = [fdp.ConsumeIntInRange(0, 255) for _ in ops]
    form = fdp.ConsumeIntInRange(0, 2)
    raw = fdp.ConsumeBytes(fdp.remaining_bytes())
    if form == 1:
        sub = atheris.FuzzedDataProvider(raw[:8])
        raw = wellformed(raw[8:], sub)
    blob = [raw, bytearray(raw), memoryview(raw)][form]

    # module functions
    if strict is False:
        assert ours(lambda: decode_all(blob, errors)) == ref(lambda: ref_read_all(raw, errors))

        def ref_one():
            s, end = ref_read_string(raw, 0, errors, False)
            if end != len(raw):
                raise RefError(ValueError, end)
            return s
        assert ours(lambda: decode(blob, errors)) == ref(ref_one)

    r = BufferReader(blob, errors=errors, strict_vint=strict)
    pos = 0
    for op, a in zip(ops, args):
        assert r.position == pos and r.remaining == len(raw) - pos
        if op <= 2:
            got = ours(r.read_string)
            want = ref(lambda: ref_read_string(raw, pos, errors, strict))
            if want[0] == "ok":
                want, pos = ("ok", want[1][0]), want[1][1]
        elif op == 3:
            n = a % 5 - 1

            def many():
                out, p = [], pos
                while (n < 0 and p < len(raw)) or len(out) < n:
                    s, p = ref_read_string(raw, p, errors, strict)
                    out.append(s)
                return out, p
            got = ours(lambda: r.read_strings(n))
            want = ref(many)
            if want[0] == "ok":
                want, pos = ("ok", want[1][0]), want[1][1]
        elif op == 4:
            got = ours(r.read_vint)
            want = ref(lambda: ref_vint(raw, pos, strict))
            if want[0] == "ok":
                want, pos = ("ok", want[1][0]), want[1][1]
        elif op == 5:
            got = ours(r.read_bytes)

            def rb():
                p, end = ref_payload(raw, pos, strict)
                return raw[p:end], end
            want = ref(rb)
            if want[0] == "ok":
                want, pos = ("ok", want[1][0]), want[1][1]
        elif op == 6:
            k = a % 64
            got = ours(lambda: r.read_raw(k))
            if k <= len(raw) - pos:
                want, pos = ("ok", raw[pos:pos + k]), pos + k
            else:
                want = ("err", ValueError, pos)
        elif op == 7:
            got = ours(lambda: r.skip_string())
            want = ref(lambda: ref_payload(raw, pos, strict))
            if want[0] == "ok":
                want, pos = ("ok", None), want[1][1]
        elif op == 8:
            p = a if a <= len(raw) else len(raw)
            r.position = p
            pos = p
            continue
        else:
            got = ours(lambda: list(r))
            want = ref(lambda: [])
            out, p = [], pos
            try:
                while p < len(raw):
                    s, p = ref_read_string(raw, p, errors, strict)
                    out.append(s)
                want, pos = ("ok", out), p
            except RefError as e:
                # iteration yields the good ones, then raises; position stays
                # at the failing record
                want = ref(lambda: (_ for _ in ()).throw(e))
                pos = p
        assert got == want, (op, a, errors, strict, raw, got, want)
        assert r.position == pos, (op, r.position, pos)
    r.close()
    assert r.closed


def main():
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
