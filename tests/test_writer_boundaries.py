"""Deterministic boundary tests for the writer's size logic.

The C core reserves a prefix of vint_size(n) bytes and encodes in one pass
when vint_size(n) == vint_size(n * max_bytes_per_cp) (ASCII <= 127, UCS1
<= 63, UCS2 <= 42, UCS4 <= 31 code points for a 1-byte prefix), else counts
first.  Handlers change the byte count under it: ignore / replace /
surrogateescape shrink it, backslashreplace, xmlcharrefreplace and custom
handlers can make it far larger than any "bytes per code point" bound.
These tests sit on every edge of that logic, per storage kind.
"""
import pytest

from checks import check_string, check_with_exported_view
from reference import (
    KINDS,
    MAX_BYTES_PER_CP,
    FORCE,
    WIDE,
    kind_of,
    make_surrogate_text,
    make_text,
    ref_decode_all,
    ref_read_vint,
    utf8,
    vint_size,
)

CP_COUNTS = (0, 1, 31, 32, 42, 43, 63, 64, 127, 128, 16383, 16384)


def _variants(kind, n):
    """Strings of n code points of the given kind: the narrowest (one
    kind-forcing char, at the start and at the end, rest ASCII) and the
    widest (every char of the kind's maximum width)."""
    if n == 0:
        return {"empty": ""}
    if kind == "ascii":
        return {"ascii": "a" * n, "ascii-nul-del": ("\x00\x7f" * n)[:n]}
    f = FORCE[kind]
    out = {
        "force-first": f + "a" * (n - 1),
        "force-last": "a" * (n - 1) + f,
        "widest": WIDE[MAX_BYTES_PER_CP[kind]] * n,
    }
    if kind == "ucs2":
        out["widest-ffff"] = "\uffff" * n
    if kind == "ucs4":
        out["widest-10ffff"] = "\U0010ffff" * n
    return out


@pytest.mark.parametrize("n", CP_COUNTS)
@pytest.mark.parametrize("kind", KINDS)
def test_code_point_counts(kernels, kind, n):
    for name, s in _variants(kind, n).items():
        assert len(s) == n and (n == 0 or kind_of(s) == kind), name
        record = check_string(s)
        # the record parses on its own: a minimal prefix that counts the rest
        count, at = ref_read_vint(record, 0)
        assert count == len(record) - at and at == vint_size(count), name
        if n in (31, 42, 63, 127, 16383):
            check_with_exported_view(s)


# -- UTF-8 length crossing a VInt width at a fixed code-point count ---------

WIDTH_EDGES = (128, 16384, 2**21)


def _crossing_cases():
    cases = []
    for edge in WIDTH_EDGES:
        ncp = edge * 3 // 4
        for kind in ("ucs1", "ucs2", "ucs4"):
            if edge == 2**21 and kind != "ucs2":
                continue  # keep the 2 MiB cases few
            for nbytes in (edge - 1, edge):
                for where in (("start", "end", "spread") if edge < 2**21 else ("spread",)):
                    cases.append(pytest.param(kind, ncp, nbytes, where,
                                              id="%s-%dcp-%dB-%s" % (kind, ncp, nbytes, where)))
    return cases


@pytest.mark.parametrize("kind,ncp,nbytes,where", _crossing_cases())
def test_utf8_length_crosses_vint_width(kernels, kind, ncp, nbytes, where):
    # Same code-point count, UTF-8 length on either side of a prefix width.
    s = make_text(kind, ncp, nbytes, where)
    record = check_string(s, capacities=(0, None))
    assert len(record) == vint_size(nbytes) + nbytes
    assert ref_decode_all(record) == [utf8(s)]


def _near_2_21_cases():
    # Around 2**21 bytes of UTF-8, one of each kind (ASCII at 2**21 - 1 too).
    out = [("ascii", 2**21 - 1, 2**21 - 1), ("ascii", 2**21, 2**21)]
    for kind in ("ucs1", "ucs4"):
        out.append((kind, 2**21 * 3 // 4, 2**21 + 1))
    return [pytest.param(*c, id="%s-%dcp-%dB" % c) for c in out]


@pytest.mark.parametrize("kind,ncp,nbytes", _near_2_21_cases())
def test_around_2_21_bytes(kernels, kind, ncp, nbytes):
    s = make_text(kind, ncp, nbytes)
    record = check_string(s, capacities=(0,))
    assert len(record) == vint_size(nbytes) + nbytes


# -- handlers moving the length across a width ------------------------------

SHRINKING = ("ignore", "replace", "surrogateescape")
GROWING = ("backslashreplace", "xmlcharrefreplace", "utf8pfx-test-long", "surrogatepass")
HANDLER_NCPS = (20, 31, 42, 43, 63, 64, 100, 127, 128, 200, 5000, 5461, 5462, 16383, 16384,
                20000)


def _handler_cases(errors, kind):
    """(ncp, nbytes, s) for every achievable count around the 1/2 and 2/3
    byte prefix widths."""
    cases = []
    for ncp in HANDLER_NCPS:
        for edge in (128, 16384):
            for nbytes in (edge - 1, edge, edge + 1):
                s = make_surrogate_text(kind, ncp, nbytes, errors)
                if s is not None:
                    cases.append((ncp, nbytes, s))
    return cases


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("errors", SHRINKING + GROWING)
def test_handler_output_crosses_vint_width(kernels, errors, kind):
    # e.g. ignore: 200 code points (one-pass with a 2-byte reserved prefix)
    # whose output is 127 bytes (a 1-byte prefix); backslashreplace: 42 UCS2
    # code points (1-byte prefix reserved) that come out as 128+ bytes.
    cases = _handler_cases(errors, kind)  # may be empty: coverage checked below
    for ncp, nbytes, s in cases:
        where = "%s %s: %d code points -> %d bytes" % (errors, kind, ncp, nbytes)
        try:
            record = check_string(s, errors)
            assert len(record) == vint_size(nbytes) + nbytes
            if ncp <= 200:
                check_with_exported_view(s, errors)
        except AssertionError as e:
            raise AssertionError("%s: %s" % (where, e)) from e


def test_handler_cases_cover_both_directions():
    # The generator above must actually produce the interesting cases.
    ids = {(e, n, b) for e in SHRINKING + GROWING for k in KINDS
           for n, b, _ in _handler_cases(e, k)}
    assert ("ignore", 200, 127) in ids            # shrinks below a width
    assert ("ignore", 20000, 16383) in ids
    assert any(e == "backslashreplace" and n <= 42 and b >= 128 for e, n, b in ids)
    assert any(e == "utf8pfx-test-long" and n <= 127 and b >= 16384 for e, n, b in ids)
    assert {e for e, _, _ in ids} == set(SHRINKING + GROWING)


# -- surrogate placement -----------------------------------------------------

BODIES = {
    "ascii": "abcdefgh",
    "ucs1": "a\u00e9b\u00ffc",
    "ucs2": "a\u20acb\u0101\uffff",
    "ucs4": "a\U0001F600\u20acb\U0010ffff",
}
ALL_HANDLERS = (
    "strict", "surrogatepass", "surrogateescape", "replace", "ignore", "backslashreplace",
    "xmlcharrefreplace", "utf8pfx-test-span", "utf8pfx-test-one", "utf8pfx-test-bytes",
    "utf8pfx-test-skip", "utf8pfx-test-negpos", "utf8pfx-test-nonascii",
    "utf8pfx-test-long", "utf8pfx-test-counter",
)


def _patterns(body):
    hi, lo, esc, esc2 = "\ud800", "\udfff", "\udc80", "\udcff"
    return {
        "only-one": hi,
        "only-escapable": esc,
        "start": hi + body,
        "start-escapable": esc + body,
        "end": body + lo,
        "end-escapable": body + esc2,
        "both-ends": esc + body + esc2,
        "run": body[:2] + (hi + lo + esc) * 3 + body[2:],
        "run-escapable": body[:2] + esc * 5 + esc2 + body[2:],
        "escapable-then-not": body + esc + esc2 + hi + lo + body,
        "not-then-escapable": body + hi + esc + body,
        "alternating": "".join(c + (esc if i % 2 else hi) for i, c in enumerate(body)),
        "alternating-escapable": "".join(c + esc2 for c in body),
        "pair-lookalike": body + "\ud83d\ude00" + body,  # not a pair in a str
        "reversed-pair": body + "\udc00\ud800" + body,
        "all-surrogates-long": (hi + esc) * 40,
        "long-body": body * 30 + hi + body * 30 + esc2,
        "very-long": body * 3000 + esc + body,
    }


@pytest.mark.parametrize("errors", ALL_HANDLERS)
@pytest.mark.parametrize("body_kind", sorted(BODIES))
def test_surrogate_placement(kernels, errors, body_kind):
    for name, s in _patterns(BODIES[body_kind]).items():
        if errors == "utf8pfx-test-counter":
            _check_counter(s, errors)
        else:
            check_string(s, errors)


def _check_counter(s, errors):
    """The counter handler numbers its calls, so its output tells how often
    it ran: every entry point must call it exactly as often as CPython."""
    import utf8pfx
    from reference import COUNTER, ref_encode
    from utf8pfx import BufferWriter

    COUNTER.n = 0
    expected = ref_encode(s, errors)
    COUNTER.n = 0
    body_len = len(utf8(s, errors))
    COUNTER.n = 0
    assert utf8pfx.encode(s, errors) == expected
    COUNTER.n = 0
    assert utf8pfx.utf8_length(s, errors) == body_len
    for cap in (0, 1, 10 * len(s) + 64):
        COUNTER.n = 0
        w = BufferWriter(cap, errors=errors)
        assert w.write_string(s) == len(expected)
        assert w.getvalue() == expected


# -- long UCS4: the 64-code-point rounds of the AVX-512 encoder ----------------

def _ucs4_text(n):
    """n code points of every UTF-8 length in runs that cross 16- and
    64-code-point edges: ASCII words, Cyrillic, CJK, emoji, U+0000 and the
    extremes of each length."""
    tokens = ("word ", "\u0436\u0438\u0437\u043d\u044c ", "\u6f22\u5b57 ", "\U0001F600",
              "\x00", "\x7f\x80", "\u07ff\u0800", "\uffff\U00010000", "\U0010ffff ")
    out, i = [], 0
    while sum(map(len, out)) < n:
        out.append(tokens[i % len(tokens)] * (1 + i % 4))
        i += 1
    return "".join(out)[:n]


@pytest.mark.parametrize("errors", ["strict", "surrogatepass", "replace", "surrogateescape"])
def test_long_ucs4_surrogate_at_every_position(kernels, errors):
    """A lone surrogate at each of 200 positions of a 200-code-point UCS4
    str (the encoder stops a round of 64 at it and hands the rest to its
    careful loop), from every starting capacity: CPython's bytes, or its
    exception with the writer unchanged."""
    base = _ucs4_text(200)
    assert kind_of(base) == "ucs4"
    for p in range(len(base)):
        check_string(base[:p] + "\udc80" + base[p + 1:], errors)


@pytest.mark.parametrize("n", [63, 64, 65, 127, 128, 129, 1000, 8192])
def test_long_ucs4_mixed_text(kernels, n):
    """Every UTF-8 length in runs across the rounds' edges, and the same
    text all ASCII except one astral code point (the encoder's ASCII
    step), against CPython."""
    check_string(_ucs4_text(n))
    for p in (0, n // 2, n - 1):
        check_string("a" * p + "\U0001F600" + "b" * (n - p - 1))


def test_short_ascii_at_every_length_and_room():
    """The short path's ASCII copy moves up to 32 characters in two 16-byte
    steps when the writer has 16 bytes of room past the body, and the
    length-class copy otherwise: every length 0..40 at every room from just
    enough to well past it, after a head of each alignment, by write_string
    and in a batch; the bytes written before stay as they were, a view
    taken before sees its bytes unchanged."""
    from utf8pfx import BufferWriter

    for n in range(41):
        s = "".join(chr(0x21 + (i * 7) % 94) for i in range(n))
        want = bytes([n]) + s.encode()
        for head in (0, 1, 7, 16):
            for room in range(n + 1, n + 20):
                w = BufferWriter(head + room)
                w.write_raw(b"\xa5" * head)
                with memoryview(w) as before:
                    w.write_string((s + "\0")[:-1])  # a fresh str
                    assert bytes(before) == b"\xa5" * head
                assert w.getvalue() == b"\xa5" * head + want, (n, head, room)
                w = BufferWriter(head + 2 * room)
                w.write_raw(b"\xa5" * head)
                w.write_strings([(s + "\0")[:-1], (s + "\0")[:-1]])
                assert w.getvalue() == b"\xa5" * head + want + want, (n, head, room)
