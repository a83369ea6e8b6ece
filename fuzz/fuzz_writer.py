"""atheris harness: BufferWriter against the pure-Python reference.

Each input is a program: an error handler, an encode kernel level, a
starting capacity, then up to
24 operations (write_string, write_strings with an iterator that may raise
mid-batch, write_vint, write_bytes, write_raw, reserve, clear, take or drop a
memoryview, getvalue).  After every operation the writer must hold exactly the
reference's bytes; a failed operation must leave it unchanged and raise what
the reference raises (UnicodeEncodeError with CPython's object/start/end/
reason; BufferError only when the write had to grow past the capacity under a
live view).  A held view must keep showing the bytes it was taken over.

Run:  python fuzz/run.py writer 60     (see fuzz/README.md)
"""
import os
import sys

import atheris

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))

with atheris.instrument_imports():
    from support import reference as R
    import utf8pfx
    from utf8pfx import BufferWriter

HANDLERS = ["strict", "surrogatepass", "surrogateescape", "replace", "ignore",
            "backslashreplace", "xmlcharrefreplace", "namereplace",
            "utf8pfx-test-span", "utf8pfx-test-one", "utf8pfx-test-bytes",
            "utf8pfx-test-long", "utf8pfx-test-skip", "utf8pfx-test-negpos",
            "utf8pfx-test-nonascii", "utf8pfx-test-garbage", "utf8pfx-test-badtuple",
            "utf8pfx-test-oob", "utf8pfx-test-lookup", "utf8pfx-test-valueerror"]
CAPS = [0, 1, 2, 3, 7, 8, 64, 127, 128, 129, 4096]
# every encode kernel level the CPU has (scalar, sse, avx2, ...): one per input
LEVELS = list(utf8pfx._core._isa_levels())
# code point ranges per "kind" of string; a str's PEP 393 kind follows its max
RANGES = [(0, 0x7F), (0x80, 0xFF), (0x100, 0xD7FF), (0xD800, 0xDFFF), (0xE000, 0xFFFF),
          (0x10000, 0x10FFFF), (0xDC80, 0xDCFF)]
LENGTHS = [0, 1, 2, 5, 15, 16, 31, 32, 42, 43, 63, 64, 127, 128, 300, 1000, 5000]


class Boom(Exception):
    pass


def draw_str(fdp):
    n = LENGTHS[fdp.ConsumeIntInRange(0, len(LENGTHS) - 1)]
    n = fdp.ConsumeIntInRange(0, n)
    nranges = fdp.ConsumeIntInRange(1, 3)
    rs = [RANGES[fdp.ConsumeIntInRange(0, len(RANGES) - 1)] for _ in range(nranges)]
    mode = fdp.ConsumeIntInRange(0, 2)
    if mode == 0:  # runs: one char repeated, cheap on the input
        lo, hi = rs[0]
        c = chr(fdp.ConsumeIntInRange(lo, hi))
        s = c * n
        if nranges > 1 and n:
            lo, hi = rs[1]
            i = fdp.ConsumeIntInRange(0, n - 1)
            s = s[:i] + chr(fdp.ConsumeIntInRange(lo, hi)) + s[i + 1:]
        return s
    out = []
    for _ in range(min(n, 64)):
        lo, hi = rs[fdp.ConsumeIntInRange(0, nranges - 1)]
        out.append(chr(fdp.ConsumeIntInRange(lo, hi)))
    s = "".join(out)
    if mode == 2 and s:
        s = s * max(1, n // len(s))
    return s


def ref_outcome(s, errors):
    try:
        return ("ok", R.ref_encode(s, errors))
    except UnicodeEncodeError as e:
        return ("raise", UnicodeEncodeError, R.exc_fields(e))
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e), None)


def check_same_error(got, want):
    assert want[0] == "raise", (got, want)
    assert type(got) is want[1], (got, want)
    if want[1] is UnicodeEncodeError:
        assert R.exc_fields(got) == want[2], (R.exc_fields(got), want[2])


def TestOneInput(data):
    fdp = atheris.FuzzedDataProvider(data)
    errors = HANDLERS[fdp.ConsumeIntInRange(0, len(HANDLERS) - 1)]
    utf8pfx._core._set_isa(LEVELS[fdp.ConsumeIntInRange(0, len(LEVELS) - 1)])
    cap = CAPS[fdp.ConsumeIntInRange(0, len(CAPS) - 1)]
    w = BufferWriter(cap, errors=errors)
    assert w.capacity == cap and len(w) == 0 and w.errors == errors
    model = b""
    view = None
    view_bytes = None
    for _ in range(fdp.ConsumeIntInRange(0, 24)):
        if not fdp.remaining_bytes():
            break
        op = fdp.ConsumeIntInRange(0, 10)
        free = w.capacity - len(w)
        if op <= 2:  # write_string
            s = draw_str(fdp)
            want = ref_outcome(s, errors)
            try:
                n = w.write_string(s)
            except BufferError:
                assert view is not None and want[0] == "ok" and len(want[1]) > free, (
                    free, want)
            except Exception as e:  # noqa: BLE001
                check_same_error(e, want)
            else:
                assert want[0] == "ok", (s, errors, want)
                assert n == len(want[1])
                model += want[1]
        elif op <= 4:  # write_strings, maybe from an iterator that raises
            items = [draw_str(fdp) for _ in range(fdp.ConsumeIntInRange(0, 6))]
            boom_at = fdp.ConsumeIntInRange(-1, len(items))
            outs = [ref_outcome(s, errors) for s in items]
            bad = next((o for o in outs if o[0] != "ok"), None)

            def gen():
                for i, s in enumerate(items):
                    if i == boom_at:
                        raise Boom(i)
                    yield s
            use_iter = boom_at >= 0 or fdp.ConsumeBool()
            try:
                n = w.write_strings(gen() if use_iter else items)
            except Boom as e:
                # raised before any earlier item failed
                first_bad = next((i for i, o in enumerate(outs) if o[0] != "ok"), len(items))
                assert e.args[0] <= first_bad, (e.args, first_bad)
            except BufferError:
                assert view is not None
                assert sum(len(o[1]) for o in outs if o[0] == "ok") > free or bad is not None
            except Exception as e:  # noqa: BLE001
                assert bad is not None, (items, errors, e)
                check_same_error(e, bad)
            else:
                assert bad is None and not (0 <= boom_at < len(items)), (bad, boom_at)
                blob = b"".join(o[1] for o in outs)
                assert n == len(blob)
                model += blob
        elif op == 5:
            v = fdp.ConsumeIntInRange(0, 2**64 - 1) >> (7 * fdp.ConsumeIntInRange(0, 9))
            want = R.vint(v)
            try:
                n = w.write_vint(v)
            except BufferError:
                assert view is not None and len(want) > free
            else:
                assert n == len(want)
                model += want
        elif op == 6:
            b = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 300))
            prefixed = fdp.ConsumeBool()
            src = [b, bytearray(b), memoryview(b)][fdp.ConsumeIntInRange(0, 2)]
            want = (R.vint(len(b)) + b) if prefixed else b
            try:
                n = (w.write_bytes if prefixed else w.write_raw)(src)
            except BufferError:
                assert view is not None and len(want) > free
            else:
                assert n == len(want)
                model += want
        elif op == 7:
            k = fdp.ConsumeIntInRange(0, 5000)
            try:
                w.reserve(k)
            except BufferError:
                assert view is not None and k > free
            else:
                assert w.capacity - len(w) >= k
        elif op == 8:
            try:
                w.clear()
            except BufferError:
                assert view is not None
            else:
                assert view is None
                model = b""
        elif op == 9:  # take or drop a view
            if view is None:
                view = memoryview(w)
                view_bytes = bytes(view)
            else:
                assert bytes(view) == view_bytes  # never stale, never changed
                view.release()
                view = view_bytes = None
        else:
            assert w.getvalue() == model
        assert len(w) == len(model), (len(w), len(model))
        assert len(w) <= w.capacity
        if view is not None:
            assert bytes(view) == view_bytes
    assert w.getvalue() == model
    assert bytes(w) == model
    if view is not None:
        view.release()
    # the blob reads back (the reader is the writer's counterpart)
    if errors in ("strict", "surrogatepass"):
        back = utf8pfx.BufferReader(model, errors=errors)
        while back.remaining:
            try:
                back.read_string()
            except (ValueError, UnicodeDecodeError):
                break  # write_vint/write_raw/write_bytes may leave non-strings


def main():
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
