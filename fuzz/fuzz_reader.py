"""atheris harness: BufferReader / decode / decode_all on hostile blobs.

The input is split into a small header (error handler, decode kernel level,
strict_vint, the operations to run) and a blob, which half the time is first rewritten into a
well-formed stream of prefixed strings so that mutations explore the UTF-8
decoders rather than only the prefix checks.  Every result is compared with
the test suite's pure-Python reader (tests/support/reference.py: varint loop +
bytes.decode): same value, or the same exception type at the same offset
(UnicodeDecodeError also with the same start/end/reason), and after any
error the position is unchanged.
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
    from utf8pfx import BufferReader, decode, decode_all

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
