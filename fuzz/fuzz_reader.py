"""atheris harness: BufferReader / decode / decode_all on hostile blobs.

The input is split into a small header (error handler, decode kernel level,
strict_vint, the operations to run) and a blob, which half the time is first rewritten into a
well-formed stream of prefixed strings so that mutations explore the UTF-8
decoders rather than only the prefix checks.  Every result is compared with
a pure-Python reader written here (varint loop + bytes.decode): same value,
or the same exception type at the same offset (UnicodeDecodeError also with
the same start/end/reason), and after any error the position is unchanged.
Any other exception, or a crash, is a finding.

Run:  python fuzz/run.py reader 60     (see fuzz/README.md)
"""
import re
import sys

import atheris

with atheris.instrument_imports():
    import utf8pfx
    from utf8pfx import BufferReader, decode, decode_all

HANDLERS = ["strict", "replace", "ignore", "surrogateescape", "surrogatepass",
            "backslashreplace"]
# every decode kernel level the CPU has (scalar, sse, avx2, ...): one per input
LEVELS = list(utf8pfx._core._decode_isa_levels())


class RefError(Exception):
    def __init__(self, kind, offset, exc=None):
        super().__init__(kind, offset)
        self.kind, self.offset, self.exc = kind, offset, exc


def ref_vint(data, pos, strict):
    start, v, shift = pos, 0, 0
    for i in range(10):
        if pos >= len(data):
            raise RefError(ValueError, start)
        b = data[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            if v >= 2**64:
                raise RefError(ValueError, start)
            if strict and i > 0 and b == 0:
                raise RefError(ValueError, start)
            return v, pos
    raise RefError(ValueError, start)


def ref_payload(data, pos, strict):
    n, p = ref_vint(data, pos, strict)
    if n > len(data) - p:
        raise RefError(ValueError, pos)
    return p, p + n


def ref_string(data, pos, errors, strict):
    p, end = ref_payload(data, pos, strict)
    try:
        return data[p:end].decode("utf-8", errors), end
    except UnicodeDecodeError as e:
        raise RefError(UnicodeDecodeError, p + e.start, e)


def ours(fn):
    try:
        return ("ok", fn())
    except UnicodeDecodeError as e:
        assert e.data_offset - e.payload_offset == e.start, (e.data_offset, e.payload_offset)
        return ("err", UnicodeDecodeError, e.data_offset, e.start, e.end, e.reason)
    except ValueError as e:
        m = re.search(r"offset (\d+)", str(e))
        assert m, str(e)
        return ("err", ValueError, int(m.group(1)))


def ref(fn):
    try:
        return ("ok", fn())
    except RefError as e:
        if e.kind is UnicodeDecodeError:
            return ("err", UnicodeDecodeError, e.offset, e.exc.start, e.exc.end, e.exc.reason)
        return ("err", ValueError, e.offset)


def wellformed(raw, fdp):
    """Cut raw into prefixed records (lengths from the input)."""
    out = bytearray()
    i = 0
    while i < len(raw):
        n = fdp.ConsumeIntInRange(0, 40) if fdp.remaining_bytes() else len(raw) - i
        chunk = raw[i:i + n]
        out += _vint(len(chunk)) + chunk
        i += max(n, 1)
    return bytes(out)


def _vint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
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
        def ref_all():
            out, pos = [], 0
            while pos < len(raw):
                s, pos = ref_string(raw, pos, errors, False)
                out.append(s)
            return out
        assert ours(lambda: decode_all(blob, errors)) == ref(ref_all)

        def ref_one():
            s, end = ref_string(raw, 0, errors, False)
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
            want = ref(lambda: ref_string(raw, pos, errors, strict))
            if want[0] == "ok":
                want, pos = ("ok", want[1][0]), want[1][1]
        elif op == 3:
            n = a % 5 - 1

            def many():
                out, p = [], pos
                while (n < 0 and p < len(raw)) or len(out) < n:
                    s, p = ref_string(raw, p, errors, strict)
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
                    s, p = ref_string(raw, p, errors, strict)
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
