"""BufferWriter writes what the pure-Python reference writes (CPython's codec
and utf8pfx._reference's VInt), byte for byte.

Kernel levels: the property tests run at the level chosen at import (the
best this CPU has); they check the glue, and the kernels themselves are
checked at every level, natively and emulated, against the scalar ones by
the C harnesses (test_kernels_c.py, fuzz).  The tests of the size logic's
and the short paths' edges below, where the kernels' own choices lie, run
at every level (the ``kernels`` fixture).

What is checked:

- against the reference, property-based: write_string, write_strings over
  every kind of iterable, write_bytes, write_raw (strict is fed
  surrogate-free text; surrogateescape text whose surrogates it can escape;
  every other handler the whole code space, lone surrogates and runs of
  them included);
- write_vint / vint_size against the reference and hand-written values,
  and what they refuse;
- the size logic's edges: the C core reserves a prefix of vint_size(n)
  bytes and encodes in one pass when vint_size(n) == vint_size(n *
  max_bytes_per_cp) (ASCII <= 127, UCS1 <= 63, UCS2 <= 42, UCS4 <= 31 code
  points for a 1-byte prefix; UCS1 <= 8191, UCS2 <= 5461, UCS4 <= 4095 for
  a 2-byte one), else counts first; handlers move the byte count under it
  (ignore / replace / surrogateescape shrink it, backslashreplace,
  xmlcharrefreplace, namereplace and custom handlers can make it far larger
  than any "bytes per code point" bound);
- the short paths: inline copies of short ASCII bodies and the scalar
  encoders inlined for short non-ASCII bodies (and their AVX-512 VBMI2
  build), at every length and free room around their cut-overs, a lone
  surrogate at every position, one call and batch;
- the forms of str it can be handed (subclasses, legacy not-ready strs on
  Python < 3.12) and subclasses of BufferWriter;
- growth: only for bytes it needs, at most once per string or batch;
  reserve() and __sizeof__;
- pickling (a reader does not pickle).

Elsewhere: what the writer refuses and the error handlers it calls in
test_writer_errors.py; encode() and utf8_length() in test_functions.py;
buffer exports in test_robustness_exports.py; the prefix=/encoding=
presets in test_presets.py.
"""
import gc
import itertools
import pickle
import random
import sys

import pytest
from hypothesis import given, strategies as st

import utf8pfx
from utf8pfx import BufferReader, BufferWriter, decode_all
from utf8pfx._reference import ENCODINGS, PREFIXES, STORAGE_KINDS, storage_kind
from support.checks import (
    HELD,
    assert_unchanged,
    check_string,
    check_with_exported_view,
    filled,
)
from support.reference import (
    COUNTER,
    FORCE,
    MAX_BYTES_PER_CP,
    TOTAL_HANDLERS,
    WIDE,
    legacy_str,
    lossless,
    make_surrogate_text,
    make_text,
    ref_decode_all,
    ref_encode,
    ref_encode_many,
    ref_read_vint,
    utf8,
    vint,
    vint_size,
)
from support.strategies import StrSub, capacities, text_for


# ============================================== against the reference

HANDLERS = ("strict", "surrogateescape") + TOTAL_HANDLERS
# The kind-forcing test runs a representative subset (C-handled ones, one
# codec-handled builtin, one custom) to keep the suite fast.
KIND_HANDLERS = ("strict", "surrogatepass", "surrogateescape", "replace", "ignore",
                 "backslashreplace", "utf8pfx-test-span")

prefixes = st.binary(max_size=70)  # bytes already in the writer before the call


def _maybe_sub(data, s):
    return StrSub(s) if data.draw(st.booleans(), label="as str subclass") else s


def _check_write(w, s, errors, pre):
    before = w.getvalue()
    assert before == pre
    n = w.write_string(s)
    expected = ref_encode(s, errors)
    out = w.getvalue()
    assert out == pre + expected
    assert n == len(expected)
    assert len(w) == len(out)
    assert w.capacity >= len(w)
    return out[len(pre):]


@pytest.mark.parametrize("errors", HANDLERS)
@given(data=st.data())
def test_write_string_matches_reference(errors, data):
    s = data.draw(text_for(errors), label="s")
    cap = data.draw(capacities, label="capacity")
    pre = data.draw(prefixes, label="prefix")
    w = BufferWriter(cap, errors=errors)
    w.write_raw(pre)
    body = _check_write(w, _maybe_sub(data, s), errors, pre)
    # (body equals the reference, checked above.)  It reads back through
    # utf8pfx's own reader as CPython decodes the payload ...
    assert utf8pfx.decode(body, "surrogateescape") == \
        utf8(s, errors).decode("utf-8", "surrogateescape")
    # ... and to s itself where the handler loses nothing.
    if lossless(errors):
        assert utf8pfx.decode(body, errors) == s


@pytest.mark.parametrize("errors", HANDLERS)
@given(data=st.data())
def test_long_repeated_strings_match_reference(errors, data):
    # Repetition reaches 2-byte prefixes and the counting pass (the one-pass
    # path only covers short strings or worst cases that already fit).
    s = data.draw(text_for(errors), label="unit") * data.draw(st.integers(1, 400), label="k")
    cap = data.draw(st.sampled_from([0, 1, 100, 20000]), label="capacity")
    w = BufferWriter(cap, errors=errors)
    body = _check_write(w, s, errors, b"")
    assert utf8pfx.decode_all(body, "surrogateescape") == \
        [utf8(s, errors).decode("utf-8", "surrogateescape")]


@pytest.mark.parametrize("errors", HANDLERS)
@given(data=st.data())
def test_successive_writes_concatenate_their_records(errors, data):
    xs = data.draw(st.lists(text_for(errors), max_size=8), label="xs")
    cap = data.draw(capacities, label="capacity")
    w = BufferWriter(cap, errors=errors)
    total = 0
    for x in xs:
        total += w.write_string(_maybe_sub(data, x))
    out = w.getvalue()
    assert out == ref_encode_many(xs, errors)
    assert total == len(out) == len(w)
    # read back by utf8pfx's reader, compared with CPython's decoding
    assert utf8pfx.decode_all(out, "surrogateescape") == \
        [utf8(x, errors).decode("utf-8", "surrogateescape") for x in xs]
    if lossless(errors):
        assert utf8pfx.decode_all(out, errors) == xs


class Iterable:
    """A custom iterable (not a list/tuple: the generic iterator path)."""

    def __init__(self, xs):
        self.xs = xs

    def __iter__(self):
        return iter(self.xs)


class Iterator:
    def __init__(self, xs):
        self.xs = list(xs)

    def __iter__(self):
        return self

    def __next__(self):
        if not self.xs:
            raise StopIteration
        return self.xs.pop(0)


class ListSub(list):
    pass


CONTAINERS = {
    "list": list,
    "tuple": tuple,
    "generator": lambda xs: (x for x in xs),
    "iterable": Iterable,
    "iterator": Iterator,
    "list-subclass": ListSub,
    "map": lambda xs: map(lambda x: x, xs),
}


@pytest.mark.parametrize("container", sorted(CONTAINERS))
@given(data=st.data())
def test_write_strings_equals_repeated_write_string(container, data):
    # Every container is its own test; the handler is drawn (all of them turn
    # up across the examples) to keep the test count down.
    errors = data.draw(st.sampled_from(HANDLERS), label="errors")
    xs = data.draw(st.lists(text_for(errors), max_size=10), label="xs")
    xs = [_maybe_sub(data, x) for x in xs]
    cap = data.draw(capacities, label="capacity")
    pre = data.draw(prefixes, label="prefix")

    one = BufferWriter(cap, errors=errors)
    one.write_raw(pre)
    expected_total = sum(one.write_string(x) for x in xs)

    many = BufferWriter(cap, errors=errors)
    many.write_raw(pre)
    total = many.write_strings(CONTAINERS[container](xs))
    assert many.getvalue() == one.getvalue() == pre + ref_encode_many(xs, errors)
    assert total == expected_total
    assert len(many) == len(pre) + total


@pytest.mark.parametrize("errors", KIND_HANDLERS)
@pytest.mark.parametrize("kind", STORAGE_KINDS)
@given(data=st.data())
def test_each_storage_kind_matches_reference(kind, errors, data):
    s = data.draw(text_for(errors, kind=kind), label="s")
    cap = data.draw(capacities, label="capacity")
    w = BufferWriter(cap, errors=errors)
    _check_write(w, s, errors, b"")
    # again behind the first copy: a second string lands at an odd offset
    n = w.write_string(s)
    assert w.getvalue() == ref_encode(s, errors) * 2
    assert n == len(ref_encode(s, errors))
    assert utf8pfx.encode(s, errors) == ref_encode(s, errors)
    assert utf8pfx.utf8_length(s, errors) == len(utf8(s, errors))


@given(chunks=st.lists(st.binary(max_size=300), max_size=8), cap=capacities)
def test_write_bytes_and_raw_match_reference(chunks, cap):
    w = BufferWriter(cap)
    expected = b""
    for i, c in enumerate(chunks):
        obj = (bytes, bytearray, memoryview)[i % 3](c)
        if i % 2:
            assert w.write_bytes(obj) == len(vint(len(c))) + len(c)
            expected += vint(len(c)) + c
        else:
            assert w.write_raw(obj) == len(c)
            expected += c
    assert w.getvalue() == bytes(w) == expected
    assert len(w) == len(expected)


# =================== write_vint / vint_size: reference, hand-written values

@given(n=st.one_of(st.integers(0, 2**64 - 1), st.integers(0, 300),
                   st.sampled_from([2**(7 * k) + d for k in range(1, 10) for d in (-1, 0)])))
def test_write_vint_and_vint_size_match_reference(n):
    w = BufferWriter()
    assert w.write_vint(n) == len(vint(n))
    assert w.getvalue() == vint(n)
    assert utf8pfx.vint_size(n) == len(vint(n))


VINT_VECTORS = [
    (0, b"\x00"),
    (1, b"\x01"),
    (127, b"\x7f"),
    (128, b"\x80\x01"),
    (150, b"\x96\x01"),  # the protobuf documentation's example
    (300, b"\xac\x02"),
    (16383, b"\xff\x7f"),
    (16384, b"\x80\x80\x01"),
    (2**21 - 1, b"\xff\xff\x7f"),
    (2**21, b"\x80\x80\x80\x01"),
    (2**32, b"\x80\x80\x80\x80\x10"),
    (2**63, b"\x80" * 9 + b"\x01"),
    (2**64 - 1, b"\xff" * 9 + b"\x01"),
]


@pytest.mark.parametrize("n,encoded", VINT_VECTORS, ids=[str(n) for n, _ in VINT_VECTORS])
def test_write_vint_vectors(n, encoded):
    assert vint(n) == encoded
    w = filled()
    assert w.write_vint(n) == len(encoded)
    assert w.getvalue() == HELD + encoded
    assert utf8pfx.vint_size(n) == len(encoded)


class Index:
    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


@pytest.mark.parametrize("arg,encoded", [
    (True, b"\x01"), (False, b"\x00"), (Index(300), b"\xac\x02"),
    (Index(2**64 - 1), b"\xff" * 9 + b"\x01"),
])
def test_write_vint_accepts_int_likes(arg, encoded):
    w = BufferWriter()
    assert w.write_vint(arg) == len(encoded)
    assert w.getvalue() == encoded
    assert utf8pfx.vint_size(arg) == len(encoded)


@pytest.mark.parametrize("arg,exc", [
    (-1, ValueError), (-2**70, ValueError), (Index(-5), ValueError),
    (2**64, OverflowError), (2**200, OverflowError), (Index(2**64), OverflowError),
    (1.0, TypeError), ("1", TypeError), (None, TypeError), (b"\x01", TypeError),
])
def test_write_vint_and_vint_size_reject(arg, exc):
    w = filled()
    with pytest.raises(exc) as ei:
        w.write_vint(arg)
    assert_unchanged(w)
    with pytest.raises(exc):
        utf8pfx.vint_size(arg)
    if exc is TypeError:
        assert type(arg).__name__ in str(ei.value)


def test_index_raising_is_propagated():
    class Bad:
        def __index__(self):
            raise ZeroDivisionError

    w = filled()
    with pytest.raises(ZeroDivisionError):
        w.write_vint(Bad())
    assert_unchanged(w)


# ================================================ the size logic's edges
#
# Every edge of the one-pass / counted logic, per storage kind.

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
@pytest.mark.parametrize("kind", STORAGE_KINDS)
def test_code_point_counts_around_the_one_pass_limits(kernels, kind, n):
    for name, s in _variants(kind, n).items():
        assert len(s) == n and (n == 0 or storage_kind(s) == kind), name
        record = check_string(s)
        # the record parses on its own: a minimal prefix that counts the rest
        count, at = ref_read_vint(record, 0)
        assert count == len(record) - at and at == vint_size(count), name
        if n in (31, 42, 63, 127, 16383):
            check_with_exported_view(s)


# -- the kernels' pass forms, counted or not --------------------------------
#
# With room for the worst case, the encoders' pass forms write the body and
# note lone surrogates (a str with one is encoded again the ordinary way,
# unless the handler is "surrogatepass"); without that room, a length pass
# counts first, and the pass forms write the body when it found none.
# Lengths around their block edges (16-unit blocks, 28 units needed after a
# block's start, the short cut-offs), a surrogate at each edge or none.

PASS_LENGTHS = (1, 7, 8, 15, 16, 17, 27, 28, 29, 31, 32, 44, 45, 47, 48, 60, 61, 100, 333)
PASS_POOLS = {"ucs2": "a\u00e9\u0416\u20ac\uffff ", "ucs4": "a\u00e9\u0416\u20ac\U0001F600 "}


@pytest.mark.parametrize("kind", sorted(PASS_POOLS))
def test_pass_encoders_one_pass_and_counted(kernels, kind):
    rng = random.Random(kind)
    for n in PASS_LENGTHS:
        # the kind-forcing code point last, so a surrogate never replaces it
        base = "".join(rng.choice(PASS_POOLS[kind]) for _ in range(n - 1)) + FORCE[kind]
        assert storage_kind(base) == kind
        cases = [base]
        for at in sorted({0, 12, 15, 16, 27, 28, n // 2, n - 2}):
            if 0 <= at < n - 1:
                cases.append(base[:at] + "\ud800" + base[at + 1:])
        for s in cases:
            for errors in ("strict", "surrogatepass", "replace"):
                check_string(s, errors, capacities=(0, None))


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


# -- one pass with a 2-byte prefix: its edges --------------------------------

# (kind, code points) on both sides of where the worst case n * max_bytes
# still has a 2-byte VInt (< 16384) and where it needs 3
TWO_BYTE_EDGES = [("ucs1", 8191), ("ucs1", 8192), ("ucs2", 5461), ("ucs2", 5462),
         ("ucs4", 4095), ("ucs4", 4096), ("ascii", 16383), ("ascii", 16384)]


def _edge_variants(kind, n):
    if kind == "ascii":
        return {"ascii": "a" * n}
    return {"narrow": FORCE[kind] + "a" * (n - 1),
            "widest": WIDE[MAX_BYTES_PER_CP[kind]] * n}


@pytest.mark.parametrize("kind, n", TWO_BYTE_EDGES)
def test_two_byte_prefix_one_pass_edges(kernels, kind, n):
    worst = n * MAX_BYTES_PER_CP[kind]
    pre = b"\x00pre\xff"
    for name, s in _edge_variants(kind, n).items():
        assert len(s) == n and storage_kind(s) == kind
        rec = ref_encode(s)
        # free room: the worst case with its prefix exactly, one byte under,
        # the real size exactly, and nothing
        for free in (vint_size(worst) + worst, vint_size(worst) + worst - 1, len(rec), 0):
            w = BufferWriter(len(pre) + free)
            w.write_raw(pre)
            assert w.write_string(s) == len(rec), (name, free)
            assert w.getvalue() == pre + rec, (name, free)
            if free >= len(rec):
                # it fitted: no growth, whichever path it took
                assert w.capacity == len(pre) + free, (name, free)
            # the same through a view: no growth allowed, so exactly the
            # cases that fit succeed
            w = BufferWriter(len(pre) + free)
            w.write_raw(pre)
            with memoryview(w):
                if free >= len(rec):
                    assert w.write_string(s) == len(rec)
                    assert w.getvalue() == pre + rec
                else:
                    with pytest.raises(BufferError):
                        w.write_string(s)
                    assert w.getvalue() == pre


@pytest.mark.parametrize("kind, n", TWO_BYTE_EDGES)
@pytest.mark.parametrize("errors", ["surrogatepass", "ignore", "replace", "backslashreplace"])
def test_two_byte_prefix_edges_with_surrogates(kernels, kind, n, errors):
    # a lone surrogate makes the str UCS2 (or keeps it UCS4); the handler's
    # output moves the length while the reserved prefix stays put
    s = (FORCE[kind] if kind != "ascii" else "a") * (n - 1) + "\udc80"
    want = ref_encode(s, errors)  # these handlers never raise
    for cap in (0, 4 * n + 8, len(want), len(want) - 1):
        w = BufferWriter(cap, errors=errors)
        assert w.write_string(s) == len(want)
        assert w.getvalue() == want
        if cap >= len(want):
            assert w.capacity == cap
    assert utf8pfx.encode(s, errors) == want
    assert utf8pfx.utf8_length(s, errors) == len(utf8(s, errors))


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


@pytest.mark.parametrize("kind", STORAGE_KINDS)
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
    ids = {(e, n, b) for e in SHRINKING + GROWING for k in STORAGE_KINDS
           for n, b, _ in _handler_cases(e, k)}
    assert ("ignore", 200, 127) in ids            # shrinks below a width
    assert ("ignore", 20000, 16383) in ids
    assert any(e == "backslashreplace" and n <= 42 and b >= 128 for e, n, b in ids)
    assert any(e == "utf8pfx-test-long" and n <= 127 and b >= 16384 for e, n, b in ids)
    assert {e for e, _, _ in ids} == set(SHRINKING + GROWING)


# -- namereplace ---------------------------------------------------------------

NAMEREPLACE_TEXTS = ["a\udcffb", "\ud800", "caf\u00e9 \udc80", "\u20ac\udfff\U0001F600",
                     "\udcff" * 50, "x" * 100 + "\ud83d"]


@pytest.mark.parametrize("s", NAMEREPLACE_TEXTS)
def test_namereplace_matches_cpython(s):
    want = ref_encode(s, "namereplace")
    assert utf8pfx.encode(s, "namereplace") == want
    assert utf8pfx.utf8_length(s, "namereplace") == len(utf8(s, "namereplace"))
    for cap in (0, 1, 1000):
        w = BufferWriter(cap, errors="namereplace")
        w.write_raw(b"#")
        assert w.write_string(s) == len(want)
        assert w.getvalue() == b"#" + want
    w = BufferWriter(errors="namereplace")
    assert w.write_strings(NAMEREPLACE_TEXTS) == len(ref_encode_many(NAMEREPLACE_TEXTS,
                                                                     "namereplace"))
    assert w.getvalue() == ref_encode_many(NAMEREPLACE_TEXTS, "namereplace")


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
    assert storage_kind(base) == "ucs4"
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


# ================================================================ short paths
#
# The per-call short paths: inline copies of short ASCII bodies (no memcpy
# call, overlapping 4/8-byte moves) and the scalar encoders inlined for
# non-ASCII bodies of up to 16 code points, with a surrogate at every
# position falling back to the handler; the AVX-512 VBMI2 build's exact and
# room steps.  Byte-exact against CPython's codec at every length around
# those cut-overs, for every handler, one call and batch.  (Which build runs
# at which kernel level: test_kernels_dispatch.py.)

SHORT_HANDLERS = ("strict", "surrogatepass", "surrogateescape", "replace", "ignore",
            "backslashreplace")


FILL = {"ascii": "abcdefghij", "ucs1": "aé\xffbc", "ucs2": "aжé中", "ucs4": "a😀ж\xe9"}


def texts(kind, n):
    base = (FILL[kind] * (n // len(FILL[kind]) + 2))[:n]
    if kind == "ucs4" and n and max(map(ord, base)) < 0x10000:
        base = base[:-1] + "😀"
    return base


@pytest.mark.parametrize("kind", sorted(FILL))
def test_short_lengths_around_the_cutovers(kind, kernels):
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
@pytest.mark.parametrize("errors", SHORT_HANDLERS)
def test_short_strs_with_a_surrogate_at_every_position(kind, errors, kernels):
    for n in (1, 2, 5, 11, 16, 17, 20):
        for i in range(n):
            s = texts(kind, n)
            s = s[:i] + "\udc80" + s[i + 1:]
            if kind == "ucs4" and max(map(ord, s)) < 0x10000:
                s = s + "😀"
            write_with_surrogate(s, errors, 256)
            write_with_surrogate(s, errors, 256, batch=True)


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


@pytest.mark.parametrize("errors", SHORT_HANDLERS)
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


# Small ints are immortal from Python 3.12 on (PEP 683): their reference
# count is pinned, so only older versions can show a missing or extra
# increment on one.
SMALL_INTS_COUNT_REFERENCES = sys.version_info < (3, 12)


@pytest.mark.parametrize("kind", sorted(FILL))
def test_short_path_results_are_the_interpreters_ints(kind, kernels):
    """write_string's short path returns its int from a table of the
    module's (the prefix byte plus bodies of 0-127 bytes: 1..128).  Every
    value it can return, for each storage kind: the right number and the
    same object int() gives (the interpreter's small int).

    On Python 3.11 and older, also no reference gained or lost on it per
    call: a missing or extra increment moves the count by 1000 over 1000
    calls (the rest of the process may hold or drop one or two references
    to the same small int meanwhile, so the check allows 10).  From 3.12 on
    small ints are immortal and their count never moves, so that half could
    not fail there: it is not run."""
    seen = set()
    for n in range(0, 128):
        s = texts(kind, n)
        want = ref_encode(s, "strict")
        if len(want) > 128:
            break
        w = utf8pfx.BufferWriter(1000 * 128)
        expect = _small_int(len(want))
        if SMALL_INTS_COUNT_REFERENCES:
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
        else:
            got = [w.write_string(s) for _ in range(1000)]
            assert all(g == len(want) and g is expect for g in got), (kind, n)
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


def test_short_ascii_at_every_length_and_room():
    """The short path's ASCII copy moves up to 32 characters in two 16-byte
    steps when the writer has 16 bytes of room past the body, and the
    length-class copy otherwise: every length 0..40 at every room from just
    enough to well past it, after a head of each alignment, by write_string
    and in a batch; the bytes written before stay as they were, a view
    taken before sees its bytes unchanged."""
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


# ============================================== every form of str, subclasses
#
# str subclasses, legacy (not-yet-ready) strings on Python < 3.12, and
# subclasses of BufferWriter.

READY_TEXTS = ["", "plain", "héllo", "東京 €", "😀 x", "mixed é € 😀"]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="legacy str objects were removed in 3.12")
@pytest.mark.filterwarnings("ignore:PyUnicode_FromUnicode:DeprecationWarning")
@pytest.mark.parametrize("text", READY_TEXTS)
def test_legacy_string_is_made_ready_first(text):
    s = legacy_str(text)  # wchar_t storage only, not ready until someone asks
    # in a batch, after a run of short ASCII items (write_strings' ASCII
    # loop meets it first)
    w = BufferWriter()
    w.write_strings(["ab", "cd", s, "ef"])
    assert w.getvalue() == b"".join(ref_encode(x) for x in ("ab", "cd", text, "ef"))
    w = BufferWriter()
    w.write_string(s)
    assert w.getvalue() == ref_encode(text)
    assert utf8pfx.encode(s) == ref_encode(text)
    assert utf8pfx.utf8_length(s) == len(text.encode())


LEGACY_TEXTS = ["", "plain", "h\u00e9llo", "\u6771\u4eac \u20ac", "\U0001F600 x",
                "mixed \u00e9 \u20ac \U0001F600", "x" * 300]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="legacy str objects were removed in 3.12")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("form", [list, tuple, iter])
@pytest.mark.parametrize("errors", ["strict", "surrogatepass", "backslashreplace"])
def test_legacy_strings_in_a_batch(form, errors):
    # the presize pass sees not-ready strs (4+ items) and must leave them to
    # the per-item path, which makes them ready
    items = [legacy_str(t) for t in LEGACY_TEXTS] + [legacy_str("a\udcff")] * (errors != "strict")
    texts = LEGACY_TEXTS + ["a\udcff"] * (errors != "strict")
    w = BufferWriter(errors=errors)
    n = w.write_strings(form(items))
    assert w.getvalue() == ref_encode_many(texts, errors) and n == len(w)
    if errors == "strict":
        w2 = BufferWriter()
        with pytest.raises(UnicodeEncodeError) as ei:
            w2.write_strings(form(items[:3] + [legacy_str("b\ud800c")] + items[3:]))
        assert (ei.value.start, ei.value.end) == (1, 2) and len(w2) == 0


def test_str_subclass_storage_is_used_not_its_methods():
    s = StrSub("h\u00e9llo \U0001F600")
    w = BufferWriter()
    w.write_string(s)
    w.write_strings([s, s])
    assert w.getvalue() == ref_encode(str.__str__(s)) * 3
    assert utf8pfx.encode(s) == ref_encode("h\u00e9llo \U0001F600")
    assert utf8pfx.utf8_length(s) == len("h\u00e9llo \U0001F600".encode())


def test_write_strings_with_a_str_is_per_character():
    # A str is an iterable of 1-char strs: documented Python semantics.
    w = BufferWriter()
    assert w.write_strings("a\u00e9") == 2 + 3
    assert w.getvalue() == ref_encode_many(["a", "\u00e9"])


class MyWriter(BufferWriter):
    def write_line(self, s):
        return self.write_string(s + "\n")


def test_writer_subclass_works_and_keeps_attributes():
    w = MyWriter(16, errors="replace")
    w.tag = "t"
    assert w.write_line("a\ud800") == 4
    assert w.getvalue() == b"\x03a?\n"
    assert isinstance(w, BufferWriter) and w.tag == "t" and w.errors == "replace"
    assert repr(w).startswith("<") and "MyWriter" in repr(w)
    assert bytes(memoryview(w)) == w.getvalue()


# ===================================================================== growth
#
# A writer grows only for bytes it needs, at most once per string or batch.

BATCHES = {
    "ascii": ["order-%d" % i for i in range(3000)],
    "ucs1": ["Ärger im Büro %d" % i for i in range(3000)],
    "ucs2": ["東京 %d" % i for i in range(3000)] + ["x" * 50 + "€" * 50],
    "ucs4": ["😀 x%d" % i for i in range(3000)] + ["y" * 40000 + "😀"],
    "mixed": ["a", "é", "€", "😀"] * 800,
}


def reference_blob(items):
    return ref_encode_many(items)  # the pure-Python reference, not the writer


@pytest.mark.parametrize("name", sorted(BATCHES))
def test_exactly_sized_writer_never_grows(name):
    items = BATCHES[name]
    blob = reference_blob(items)
    w = BufferWriter(len(blob))
    assert w.write_strings(items) == len(blob)
    assert w.capacity == len(blob) and w.getvalue() == blob
    w = BufferWriter(len(blob))
    for s in items:
        w.write_string(s)
    assert w.capacity == len(blob) and w.getvalue() == blob


@pytest.mark.parametrize("name", sorted(BATCHES))
def test_exactly_sized_writer_accepts_a_view_during_writes(name):
    # no growth is needed, so an exported view does not get in the way
    items = BATCHES[name]
    blob = reference_blob(items)
    w = BufferWriter(len(blob))
    with memoryview(w) as view:
        w.write_strings(items)
        assert len(view) == 0
    assert w.getvalue() == blob


def test_growth_is_geometric():
    w = BufferWriter()
    caps = []
    for i in range(20000):
        w.write_string("entry %d" % i)
        if not caps or caps[-1] != w.capacity:
            caps.append(w.capacity)
    # the first growth allocates 64 bytes, each later one doubles: exactly
    # 64 * 2**k, never a growth by just the bytes one write needs
    assert caps == [64 * 2**k for k in range(len(caps))]
    assert caps[-1] >= len(w) > caps[-1] // 2


def _worst(items):
    """What a batch can take at most: vint(worst) + worst for each string,
    worst = code points x the kind's widest UTF-8 (ASCII: exactly 1)."""
    total = 0
    for s in items:
        n = len(s) * MAX_BYTES_PER_CP[storage_kind(s)]
        total += vint_size(n) + n
    return total


def _short_path_takes(items, cap):
    """How many leading items write_strings' short path writes into a fresh
    writer of capacity cap before the first it cannot (UTF-8 that may take
    128 bytes or more, or no room for that most), and the bytes they take:
    the batch is sized from that item on, when it gets there."""
    used = 0
    for k, s in enumerate(items):
        most = len(s) * MAX_BYTES_PER_CP[storage_kind(s)]
        if most >= 128 or most >= cap - used:
            return k, used
        used += len(reference_blob([s]))
    return len(items), used


@pytest.mark.parametrize("name", ["ucs1", "ucs2", "mixed"])
def test_one_growth_for_a_batch_that_does_not_fit(name):
    items = BATCHES[name]
    w = BufferWriter(16)
    w.write_strings(items)
    assert w.getvalue() == reference_blob(items)
    # grown once, to what it had written plus the worst case of the rest
    # (far more than twice the 16 bytes it had): neither a doubling sequence
    # nor one growth per string lands here
    k, used = _short_path_takes(items, 16)
    assert k < len(items)
    assert w.capacity == used + _worst(items[k:])


def test_a_batch_that_fits_as_it_is_does_not_grow():
    items = BATCHES["ucs2"][:100]
    need = len(reference_blob(items))
    w = BufferWriter(need)  # room for the real size, not the worst case
    w.write_strings(items)
    assert w.capacity == need and w.getvalue() == reference_blob(items)


def test_reserve_makes_room_and_never_grows_under_a_view():
    w = BufferWriter()
    assert w.reserve(0) is None and w.capacity == 0  # nothing asked, nothing allocated
    w.reserve(10)
    assert w.capacity >= 10 and len(w) == 0
    w.write_raw(b"abcdefgh")
    cap = w.capacity
    w.reserve(cap - len(w))  # already room: no growth
    assert w.capacity == cap
    w.reserve(cap - len(w) + 1)  # one more than room: grows, keeps the value
    assert w.capacity - len(w) >= cap - len(w) + 1 and w.getvalue() == b"abcdefgh"
    big = w.capacity * 10
    w.reserve(big)
    assert w.capacity >= len(w) + big
    cap = w.capacity
    # after reserve(n), n bytes of writes never grow the buffer
    w2 = BufferWriter()
    w2.reserve(5000)
    cap2 = w2.capacity
    w2.write_strings(["\u20ac" * 100] * 16)  # 16 * 302 = 4832 bytes
    assert w2.capacity == cap2
    for bad, exc in ((-1, ValueError), ("5", TypeError), (1.5, TypeError),
                     (2**63, OverflowError)):
        with pytest.raises(exc):
            w.reserve(bad)
    assert w.capacity == cap and w.getvalue() == b"abcdefgh"
    with memoryview(w):
        w.reserve(cap - len(w))  # fits: fine under a view
        with pytest.raises(BufferError):
            w.reserve(cap - len(w) + 1)
    assert w.capacity == cap

    def gen():
        yield "a"
        with pytest.raises(RuntimeError):
            w.reserve(10**6)
        yield "b"
    w.write_strings(gen())
    assert w.capacity == cap and w.getvalue() == b"abcdefgh\x01a\x01b"


def test_sizeof_counts_the_buffer():
    base = sys.getsizeof(BufferWriter())
    for cap in (1, 100, 12345, 1 << 20):
        assert sys.getsizeof(BufferWriter(cap)) == base + cap
    w = BufferWriter()
    w.write_string("x" * 1000)
    assert sys.getsizeof(w) == base + w.capacity
    w.clear()  # keeps the capacity, so the size
    assert sys.getsizeof(w) == base + w.capacity and w.capacity >= 1002
    assert w.__sizeof__() <= sys.getsizeof(w)


# ================================================================== pickling

def test_writer_pickles_reader_does_not():
    w = BufferWriter(16, errors="surrogateescape")
    w.write_strings(["a", "b\udcff"])
    w2 = pickle.loads(pickle.dumps(w))
    assert w2.getvalue() == w.getvalue() and w2.errors == "surrogateescape"
    w2.write_string("c")
    assert decode_all(w2.getvalue(), "surrogateescape") == ["a", "b\udcff", "c"]
    with pytest.raises(TypeError, match="cannot pickle a .*BufferReader"):
        pickle.dumps(BufferReader(b"\x01a"))


@pytest.mark.parametrize("prefix, encoding", list(itertools.product(PREFIXES, ENCODINGS)))
def test_a_pickled_writer_keeps_its_preset(prefix, encoding):
    w = BufferWriter(errors="surrogatepass", prefix=prefix, encoding=encoding)
    w.write_string("a\x00\ud800😀")
    w2 = pickle.loads(pickle.dumps(w))
    assert (w2.prefix, w2.encoding, w2.errors) == (prefix, encoding, "surrogatepass")
    assert w2.getvalue() == w.getvalue()
    w.write_string("é")
    w2.write_string("é")  # the copy goes on writing as the original does
    assert w2.getvalue() == w.getvalue()


def test_setstate_checks_the_preset_before_changing_anything():
    w = BufferWriter(prefix="u16be")
    with pytest.raises(ValueError, match="prefix"):
        w.__setstate__((b"\x00\x01a", "strict", "no-such-prefix", "utf-8"))
    with pytest.raises(ValueError, match="encoding"):
        w.__setstate__((b"\x00\x01a", "strict", "varint", "latin-1"))
    assert (len(w), w.prefix, w.encoding) == (0, "u16be", "utf-8")
    # a two-item state (bytes, errors) keeps the writer's own preset
    w.__setstate__((b"\x00\x01a", "replace"))
    assert (w.getvalue(), w.prefix, w.errors) == (b"\x00\x01a", "u16be", "replace")
