"""The per-call short paths of the writer: inline copies of short
ASCII bodies (no memcpy call, overlapping 4/8-byte moves) and the scalar
encoders inlined for non-ASCII bodies of up to 16 code points, with a
surrogate at every position falling back to the handler.  Byte-exact
against CPython's codec at every length around those cut-overs, for every
handler and preset, one call and batch."""
import gc
import sys

import pytest

import utf8pfx
from reference import pfx, ref_encode
from utf8pfx import _core

HANDLERS = ("strict", "surrogatepass", "surrogateescape", "replace", "ignore",
            "backslashreplace")
FILL = {"ascii": "abcdefghij", "ucs1": "aé\xffbc", "ucs2": "aжé中", "ucs4": "a😀ж\xe9"}


def texts(kind, n):
    base = (FILL[kind] * (n // len(FILL[kind]) + 2))[:n]
    if kind == "ucs4" and n and max(map(ord, base)) < 0x10000:
        base = base[:-1] + "😀"
    return base


@pytest.mark.parametrize("kind", sorted(FILL))
def test_lengths_around_cutovers(kind, kernels):
    for n in range(0, 41):
        s = texts(kind, n)
        want = ref_encode(s, "strict")
        w = utf8pfx.BufferWriter()
        w.write_string("x")
        assert w.write_string(s) == len(want)
        assert w.getvalue() == b"\x01x" + want, (kind, n)
        w2 = utf8pfx.BufferWriter(1 << 12)
        w2.write_strings([s, s, "y", s, s])
        assert w2.getvalue() == want * 2 + b"\x01y" + want * 2
        assert utf8pfx.encode(s) == want


def write_with_surrogate(s, errors, cap, batch=False):
    """s (holding a lone surrogate) after "k" into a writer of cap bytes,
    by write_string or, with batch, write_strings(["ab", s, "cd"]):
    CPython's UnicodeEncodeError with the same span and nothing written, or
    CPython's bytes (and, one call, their count).  Returns the writer, or
    None when the call raised."""
    w = utf8pfx.BufferWriter(cap, errors=errors)
    w.write_string("k")
    call = (lambda: w.write_strings(["ab", s, "cd"])) if batch else (lambda: w.write_string(s))
    try:
        want = ref_encode(s, errors)
    except UnicodeEncodeError as ce:
        with pytest.raises(UnicodeEncodeError) as ei:
            call()
        assert (ei.value.start, ei.value.end) == (ce.start, ce.end)
        assert w.getvalue() == b"\x01k"
        return None
    r = call()
    if batch:
        assert w.getvalue() == b"\x01k\x02ab" + want + b"\x02cd", (s, errors)
    else:
        assert r == len(want) and w.getvalue() == b"\x01k" + want, (s, errors)
    return w


@pytest.mark.parametrize("kind", ["ucs2", "ucs4"])
@pytest.mark.parametrize("errors", HANDLERS)
def test_surrogate_at_every_position(kind, errors, kernels):
    for n in (1, 2, 5, 11, 16, 17, 20):
        for i in range(n):
            s = texts(kind, n)
            s = s[:i] + "\udc80" + s[i + 1:]
            if kind == "ucs4" and max(map(ord, s)) < 0x10000:
                s = s + "😀"
            write_with_surrogate(s, errors, 256)
            write_with_surrogate(s, errors, 256, batch=True)


@pytest.mark.parametrize("prefix", ["varint", "zigzag", "varint+1", "u16be", "i32be", "u32le"])
def test_short_ascii_every_preset(prefix):
    for n in range(0, 40):
        s = "q" * n
        w = utf8pfx.BufferWriter(prefix=prefix)
        w.write_string(s)
        r = utf8pfx.BufferReader(w.getvalue(), prefix=prefix)
        assert r.read_string() == s and r.remaining == 0
        assert w.getvalue() == utf8pfx.encode(s, prefix=prefix)


def _check_payload(payload, errors):
    blob = pfx(payload) + b"\x01z"
    r = utf8pfx.BufferReader(blob, errors=errors)
    try:
        want = payload.decode("utf-8", errors)
    except UnicodeDecodeError as ce:
        with pytest.raises(UnicodeDecodeError) as ei:
            r.read_string()
        assert (ei.value.start, ei.value.end, ei.value.reason) == (ce.start, ce.end, ce.reason)
        assert r.position == 0
        return
    got = r.read_string()
    assert got == want, (payload, errors)
    # the same PEP 393 storage as CPython's decoder picks (the narrowest)
    assert sys.getsizeof(got) == sys.getsizeof(want), (payload, got)
    if len(want) == 1 and ord(want) < 256:  # CPython's shared 1-char strs
        assert got is want
    assert r.read_string() == "z"
    assert utf8pfx.BufferReader(blob, errors=errors).read_strings() == [want, "z"]


@pytest.mark.parametrize("errors", ["strict", "replace", "surrogateescape"])
def test_reader_short_payloads_every_high_byte_position(errors):
    """The reader's inline ASCII check (overlapping loads, payloads <= 32
    bytes) must see a byte >= 0x80 at every position: valid 2-byte
    sequences decode, invalid bytes raise or go to the handler exactly as
    bytes.decode does."""
    for n in range(0, 41):
        base = bytes(b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH"[:n])
        cases = [base]
        for i in range(n):
            cases.append(base[:i] + b"\xff" + base[i + 1:])
            if i + 1 < n:
                cases.append(base[:i] + "é".encode() + base[i + 2:])
        for payload in cases:
            _check_payload(payload, errors)


# --- the reader's one-pass decoder for payloads of up to 64 bytes --------------

EDGES = [  # valid at the edges of each sequence length, and the nearest invalid
    "\x7f".encode(), "\x80".encode(), "\xff".encode(), "\u07ff".encode(), "\u0800".encode(),
    "\ud7ff".encode(), "\ue000".encode(), "\uffff".encode(), "\U00010000".encode(),
    "\U0010ffff".encode(),
    b"\xed\xa0\x80", b"\xed\xbf\xbf",            # surrogates (surrogatepass takes them)
    b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf",  # overlong
    b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf",
    b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff",           # above U+10FFFF
    b"\x80", b"\xbf", b"\xc3", b"\xe4\xb8", b"\xf0\x9f\x98",     # stray, truncated
    b"\xc3\x28", b"\xe4\x28\xad", b"\xf0\x9f\x28\x80",           # bad continuation
]
FILLS = ("ab", "é", "ж", "中", "😀", "aé中😀ж")


def _one_pass_payloads(top):
    """Payloads of up to about top bytes made of each fill (whole sequences),
    plain and with each edge or invalid sequence at every position."""
    for fill in FILLS:
        unit = fill.encode()
        for n in range(1, top + 1):
            base = (unit * (n // len(unit) + 1))[:n]
            base = base.decode("utf-8", "ignore").encode()  # whole sequences only
            yield base
            for edge in EDGES:
                for i in range(0, len(base) + 1, max(1, len(unit))):
                    payload = base[:i] + edge + base[i:]
                    if len(payload) <= top + 2:
                        yield payload


@pytest.mark.parametrize("errors", ["strict", "surrogatepass", "surrogateescape", "replace",
                                    "ignore", "backslashreplace"])
def test_reader_one_pass_short_payloads(errors):
    """Payloads of 1..70 bytes (the one-pass decoder takes up to 64, the
    rest go the two-pass road) made of each fill, with each edge or invalid
    sequence at every position: value, storage kind and error exactly as
    bytes.decode."""
    for payload in _one_pass_payloads(70):
        _check_payload(payload, errors)


def test_reader_one_pass_short_payloads_every_level(level):
    """The same payloads under "strict" at every decode level: the short
    decoder of the AVX-512 level's table (VBMI, where the CPU has it) and
    the inline one of the others must each take exactly what bytes.decode
    takes, and hand everything else to the two-pass road."""
    for payload in _one_pass_payloads(66):
        _check_payload(payload, "strict")


EDGE_CPS = ("\x7f", "\x80", "\xff", "\u0100", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff",
            "\U00010000", "\U0010ffff")


@pytest.mark.parametrize("kind", ["ucs1", "ucs2", "ucs4"])
def test_short_every_edge_code_point_everywhere(kind, kernels):
    """Every code point at an edge of the UTF-8 lengths (0x80, 0x800,
    0x10000) or of the storage kinds, at every position of strings of 1-66
    code points (across the kernels' short cut-offs), one call and batch,
    byte-exact against CPython."""
    top = {"ucs1": "\xff", "ucs2": "\uffff", "ucs4": "\U0010ffff"}[kind]
    for n in range(1, 67):
        base = texts(kind, n)
        for edge in EDGE_CPS:
            if edge > top:
                continue
            for i in range(n):
                s = base[:i] + edge + base[i + 1:]
                w = utf8pfx.BufferWriter(1024)
                assert w.write_string(s) == len(ref_encode(s, "strict"))
                w.write_strings([s, s])
                assert w.getvalue() == ref_encode(s, "strict") * 3, (s, i)


def _cpu_flags():
    """The CPU's feature flags from /proc/cpuinfo (Linux), or None."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def test_short_path_build_follows_the_kernel_level():
    """write_strings' short path has a second build for AVX-512 VBMI2
    (csrc/writer/writer_short.h) that encodes short non-ASCII bodies inline; it
    runs exactly while the kernels are the avx512 level's on a CPU with
    VBMI2, so the tests that run that level run it, and every other level
    runs the base build."""
    if not hasattr(_core, "_short_path"):
        pytest.skip("this build has no _short_path hook")
    flags = _cpu_flags()
    vbmi2 = flags is not None and {"avx512f", "avx512bw", "avx512cd", "avx512vbmi",
                                   "avx512_vbmi2"} <= flags
    prev = utf8pfx.isa()
    try:
        for level in _core._isa_levels():
            _core._set_isa(level)
            got = _core._short_path()
            if level != "avx512":
                assert got == "base", level
            elif flags is not None and sys.platform.startswith("linux"):
                assert got == ("vbmi2" if vbmi2 else "base"), (level, got)
    finally:
        _core._set_isa(prev)


def test_write_string_build_follows_the_level_chosen_at_import():
    """write_string has a VBMI2 build too (the method itself, put in
    BufferWriter's method table at import): chosen exactly when the kernels
    chosen at import are the avx512 level's on a CPU with VBMI2, so a cap
    (UTF8PFX_ISA) keeps the base build; at any later level either build
    writes the same bytes (the kernels-fixture tests run both)."""
    if not hasattr(_core, "_write_string_build"):
        pytest.skip("this build has no _write_string_build hook")
    from subproc import run_python

    flags = _cpu_flags()
    vbmi2 = flags is not None and {"avx512f", "avx512bw", "avx512cd", "avx512vbmi",
                                   "avx512_vbmi2"} <= flags
    code = ("import utf8pfx; from utf8pfx import _core; "
            "print(utf8pfx.isa(), _core._short_path(), _core._write_string_build()); "
            "w = utf8pfx.BufferWriter(); w.write_string('aé中😀' * 3); w.write_string('k'); "
            "print(w.getvalue().hex())")
    want = (ref_encode("aé中😀" * 3, "strict") + ref_encode("k", "strict")).hex()
    for cap in (None, "avx2", "scalar"):
        r = run_python(["-c", code], env={"UTF8PFX_ISA": cap} if cap else {"UTF8PFX_ISA": ""},
                       text=True)
        assert r.returncode == 0, r.stderr
        (level, short, build), got = (ln.split() for ln in r.stdout.split("\n")[:2])
        assert got == [want], cap
        assert build == short, (cap, level, short, build)
        if cap is not None:
            assert build == "base", (cap, build)
        elif flags is not None and sys.platform.startswith("linux"):
            assert build == ("vbmi2" if vbmi2 and level == "avx512" else "base"), (level, build)


@pytest.mark.parametrize("kind", ["ascii", "ucs1", "ucs2"])
def test_short_bodies_at_the_edge_of_the_room(kind, kernels):
    """ASCII, UCS1 and UCS2 strs of 1-40 code points into a writer whose
    free room is around their worst case (2 bytes a code point plus the
    prefix) and, for ASCII, around the 16 bytes of slack its two-move copy
    wants: the short path where it fits, the general path (which grows)
    where it does not, byte-exact either way, one call and batch."""
    for n in range(1, 41):
        s = texts(kind, n)
        want = ref_encode(s, "strict")
        for room in range(max(len(want) - 2, 0), max(2 * n + 4, n + 20)):
            w = utf8pfx.BufferWriter(room + 2)
            w.write_string("x")
            assert w.write_string(s) == len(want)
            assert w.getvalue() == b"\x01x" + want, (kind, n, room)
            w = utf8pfx.BufferWriter(room + 2)
            w.write_strings(["x", s, s])
            assert w.getvalue() == b"\x01x" + want * 2, (kind, n, room)


ROOM_TEXTS = dict(FILL, ucs2_two="aжéΩ", ucs2_cjk="中文字", ucs4_emoji="😀🎉")


@pytest.mark.parametrize("kind", sorted(ROOM_TEXTS))
def test_short_bodies_around_the_room_steps_threshold(kind, kernels):
    """Strs of 1-128 code points into a writer whose free room is around
    130 bytes, where the VBMI2 build moves from its exact steps to its room
    steps (plain 64-byte stores, the count from compare masks), and around
    162, where UCS2 strs of 33-42 units take two room steps: the same bytes
    and result on both sides, no growth, and nothing of what the plain
    stores put past the body shows after the next write.  Up to the short
    path's limits (127 ASCII characters, 63 UCS1, 42 UCS2, 31 UCS4 code
    points: the two-step and 128-byte room copies) and one past them."""
    fill = ROOM_TEXTS[kind]
    for n in range(1, 129):
        s = (fill * (n // len(fill) + 1))[:n]
        want = ref_encode(s, "strict")
        for free in list(range(124, 136)) + list(range(156, 168)):
            w = utf8pfx.BufferWriter(free + 2)
            w.write_string("x")
            cap = w.capacity
            assert w.write_string(s) == len(want), (kind, n, free)
            assert w.getvalue() == b"\x01x" + want, (kind, n, free)
            if len(want) + 2 <= cap:
                assert w.capacity == cap, (kind, n, free)
            w.write_string("y")
            assert w.getvalue() == b"\x01x" + want + b"\x01y", (kind, n, free)
            w = utf8pfx.BufferWriter(free + 2)
            w.write_strings(["x", s, "y"])
            assert w.getvalue() == b"\x01x" + want + b"\x01y", (kind, n, free)


def test_single_code_point_ucs4_strs(kernels):
    """A str of one code point from U+10000 (the VBMI2 room steps' own
    four-byte step) across the supplementary planes, every bit of the code
    point set and clear somewhere, one call and batch, with room to spare
    and without."""
    cps = sorted(set(range(0x10000, 0x110000, 0x1003)) |
                 {0x10000, 0x10FFFF, 0x1F600, 0x20000, 0xFFFFF, 0x100000} |
                 {0x10000 | (1 << b) for b in range(21) if 0x10000 | (1 << b) <= 0x10FFFF} |
                 {0x10FFFF ^ (1 << b) for b in range(16)} | {0xF0000 ^ (1 << b) for b in range(16)})
    strs = [chr(c) for c in cps]
    want = b"".join(ref_encode(s, "strict") for s in strs)
    for cap in (8, 4096):
        w = utf8pfx.BufferWriter(cap)
        for s in strs:
            assert w.write_string(s) == 5, hex(ord(s))
        assert w.getvalue() == want
        w = utf8pfx.BufferWriter(cap)
        w.write_strings(strs)
        assert w.getvalue() == want


@pytest.mark.parametrize("errors", HANDLERS)
def test_surrogates_in_the_room_steps(errors, kernels):
    """A lone surrogate at every position of a UCS2 str of 1-42 units (the
    two-byte and the lanes case, one step and two) and of a UCS4 str of
    2-42 code points, in a writer with room to spare: the room step
    refuses it, the handler decides as CPython's codec does, and nothing
    it stored shows."""
    for fill in ("aж", "a中", "😀ж"):
        for n in range(1, 43):
            for at in range(n):
                s = (fill * n)[:n]
                s = s[:at] + "\udc80" + s[at + 1:]
                for batch in (False, True):
                    w = write_with_surrogate(s, errors, 4096, batch)
                    if w is not None:
                        before = w.getvalue()
                        w.write_string("y")
                        assert w.getvalue() == before + b"\x01y", (fill, n, at)


@pytest.mark.parametrize("kind", sorted(FILL))
def test_batch_short_and_long_items_interleaved(kind, kernels):
    """write_strings over items on both sides of the short path's limit
    (under 128 bytes of worst case) in every order: the short run stops at
    a long item, the general path takes it, the next short item starts a
    new run (at the avx512 level on a VBMI2 CPU only an item that may be
    short calls the VBMI2 build).  Byte-exact, every kernel level."""
    lengths = [1, 5, 31, 32, 33, 41, 42, 43, 63, 64, 120, 127, 128, 129, 200, 300]
    items = [texts(kind, n) for n in lengths]
    orders = [items, items[::-1], [x for pair in zip(items, items[::-1]) for x in pair]]
    for order in orders:
        want = b"".join(ref_encode(x, "strict") for x in order)
        for cap in (0, 1 << 16):
            w = utf8pfx.BufferWriter(cap)
            assert w.write_strings(order) == len(want)
            assert w.getvalue() == want, (kind, cap)


def test_batch_ascii_run_at_the_edge_of_the_room(kernels):
    """write_strings' loop for runs of short ASCII items (the VBMI2 build
    stores 32 bytes a str while the writer has 33 bytes of room, and moves
    up to 127 characters otherwise): lengths around 32 and 127, every free
    room from none to past 33 bytes, byte-exact at every kernel level; a
    buffer view exported before the batch keeps its bytes (the plain store
    writes only past the end, inside the capacity)."""
    for n in (0, 1, 2, 15, 16, 17, 31, 32, 33, 34, 63, 64, 126, 127, 128):
        s = "".join(chr(0x41 + (i * 7) % 58) for i in range(n))
        want = ref_encode(s, "strict")
        for lead in (0, 1, 5):
            head = ["x"] * lead
            items = head + [s, s, s]
            expect = b"".join(ref_encode(x, "strict") for x in items)
            for cap in range(0, 2 * len(want) + 40):
                w = utf8pfx.BufferWriter(cap)
                assert w.write_strings(items) == len(expect)
                assert w.getvalue() == expect, (n, lead, cap)
        w = utf8pfx.BufferWriter(1024)
        w.write_string("head")
        view = memoryview(w)
        w.write_strings([s] * 5)
        assert bytes(view) == b"\x04head", n
        view.release()
        assert w.getvalue() == b"\x04head" + want * 5, n


class _Str(str):
    pass


def test_batch_ascii_runs_broken_by_other_items(kernels):
    """Runs of short ASCII items broken by every other kind of item (long
    ASCII, each other storage kind, empty strs, a str subclass, a
    surrogate under each handler): the run stops, the item takes its own
    path, the next ASCII item goes on; byte-exact at every kernel level.
    An item that is not a str after an ASCII run leaves the writer as it
    was."""
    breakers = ["", "b" * 200, "é" * 3, "жж", "中文字", "😀", _Str("sub"), "a\udc80b"]
    run = ["k%d" % i for i in range(40)]
    for errors in ("strict", "surrogateescape", "replace"):
        for br in breakers:
            items = run[:7] + [br] + run[7:] + [br, br] + run[:3]
            try:
                want = b"".join(ref_encode(x, errors) for x in items)
            except UnicodeEncodeError:
                w = utf8pfx.BufferWriter(errors=errors)
                w.write_string("keep")
                with pytest.raises(UnicodeEncodeError):
                    w.write_strings(items)
                assert w.getvalue() == b"\x04keep"
                continue
            for cap in (0, 64, 1 << 12):
                w = utf8pfx.BufferWriter(cap, errors=errors)
                assert w.write_strings(items) == len(want)
                assert w.getvalue() == want, (errors, br, cap)
    w = utf8pfx.BufferWriter(1 << 12)
    w.write_string("keep")
    with pytest.raises(TypeError, match="item 40"):
        w.write_strings(run + [7])
    assert w.getvalue() == b"\x04keep"


def _small_int(k):
    # int("7") builds the value at run time: CPython hands back its cached
    # small int for -5..256, the very object any other code would get
    return int(str(k))


@pytest.mark.parametrize("kind", sorted(FILL))
def test_short_path_results_are_the_interpreters_ints(kind, kernels):
    """write_string's short path returns its int from a table of the
    module's (the prefix byte plus bodies of 0-127 bytes: 1..128).  Every
    value it can return, for each storage kind: the right number, the same
    object int() gives (the interpreter's small int), and no reference
    gained or lost on it per call (a missing or extra increment shows on
    CPython versions whose small ints count references: 1000 calls move the
    count by 1000; the rest of the process may hold or drop one or two
    references to the same small int meanwhile, so the check allows 10)."""
    seen = set()
    for n in range(0, 128):
        s = texts(kind, n)
        want = ref_encode(s, "strict")
        if len(want) > 128:
            break
        w = utf8pfx.BufferWriter(1000 * 128)
        expect = _small_int(len(want))
        # no collection inside the window: freeing some cyclic garbage
        # that held the same small int moves its count
        gc.disable()
        try:
            before = sys.getrefcount(expect)
            got = [w.write_string(s) for _ in range(1000)]
            same = all(g == len(want) and g is expect for g in got)
            del got
            after = sys.getrefcount(expect)
        finally:
            gc.enable()
        assert same, (kind, n)
        assert abs(after - before) <= 10, (kind, n, before, after)
        assert w.getvalue() == want * 1000
        seen.add(len(want))
    assert len(seen) >= 30


def test_short_path_results_from_a_subclass():
    """A Python subclass of BufferWriter finds the module's int table
    through its base class (on 3.9 and 3.10 by the MRO)."""

    class Mine(utf8pfx.BufferWriter):
        pass

    class Deeper(Mine):
        pass

    for cls in (Mine, Deeper):
        w = cls()
        assert w.write_string("abc") == 4
        assert w.write_string("жж") == 5
        assert w.write_string("a" * 127) == 128  # the largest short result
        assert w.write_string("a" * 128) == 130  # two-byte prefix: general path
        assert bytes(w) == (b"\x03abc\x04\xd0\xb6\xd0\xb6" + b"\x7f" + b"a" * 127
                            + b"\x80\x01" + b"a" * 128)
