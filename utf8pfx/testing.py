"""Property-test your own length-prefixed string codec against utf8pfx.

Needs Hypothesis (``pip install 'utf8pfx[testing]'``); importing ``utf8pfx``
itself never does.  Three lines test a codec::

    from utf8pfx.testing import check_against_reference, check_roundtrip
    check_against_reference(my_encode, prefix="varint")
    check_roundtrip(my_encode, my_decode, prefix="varint")

A failure is an ``AssertionError`` naming the smallest string Hypothesis
found, its code points and storage kind, and the first differing byte.

What is here:

* strategies: :func:`text_of_kind` (each PEP 393 storage kind), :func:`strings`
  (every kind, lone surrogates on request, lengths clustered at the prefix's
  width boundaries and at the one-pass limits, strings made by slicing and
  concatenation), :func:`boundary_lengths`;
* the pure-Python reference: :func:`reference_encode`, :func:`reference_decode`,
  :func:`reference_decode_all` (and ``encode_prefix``, ``read_prefix``,
  ``mutf8_encode``, ``mutf8_decode``) for every preset and both encodings;
* the checks: :func:`check_against_reference`, :func:`check_roundtrip`.
"""
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

try:
    from hypothesis import given
    from hypothesis import settings as _settings
    from hypothesis import strategies as st
    from hypothesis.errors import HypothesisWarning as _HypothesisWarning
except ImportError as _missing:  # pragma: no cover - depends on the environment
    raise ImportError(
        "utf8pfx.testing needs Hypothesis, an optional dependency: install it with "
        "pip install 'utf8pfx[testing]' (or pip install hypothesis)"
    ) from _missing

from ._reference import (
    ENCODINGS,
    PREFIX_MAX,
    PREFIXES,
    encode_prefix,
    leb128,
    mutf8_decode,
    mutf8_encode,
    read_prefix,
    reference_body,
    reference_decode,
    reference_decode_all,
    reference_decode_body,
    reference_encode,
    storage_kind,
)

__all__ = [
    "ENCODINGS",
    "PREFIXES",
    "PREFIX_MAX",
    "KINDS",
    "boundary_examples",
    "boundary_lengths",
    "check_against_reference",
    "check_roundtrip",
    "describe",
    "encode_prefix",
    "leb128",
    "mutf8_decode",
    "mutf8_encode",
    "read_prefix",
    "reference_body",
    "reference_decode",
    "reference_decode_all",
    "reference_decode_body",
    "reference_encode",
    "strings",
    "text_of_kind",
]

#: PEP 393 storage kinds, by the widest code point a str holds.
KINDS = ("ascii", "latin1", "ucs2", "ucs4")

# Alphabets per kind: the characters that force the kind, and the ones below.
_FORCING = {
    "ascii": st.characters(min_codepoint=0, max_codepoint=0x7F),
    "latin1": st.characters(min_codepoint=0x80, max_codepoint=0xFF),
    "ucs2": st.one_of(
        st.characters(min_codepoint=0x100, max_codepoint=0x7FF),  # 2-byte UTF-8
        st.characters(min_codepoint=0x800, max_codepoint=0xD7FF),
        st.characters(min_codepoint=0xE000, max_codepoint=0xFFFF),
    ),
    "ucs4": st.characters(min_codepoint=0x10000, max_codepoint=0x10FFFF),
}
_SURROGATES = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
_EDGES = st.sampled_from(["\0", "\x7f", "\x80", "\xff", "\u0100", "\u07ff", "\u0800",
                          "\ud7ff", "\ue000", "\uffff", "\U00010000", "\U0010ffff"])


def _kind_of(s: str) -> str:
    return storage_kind(s, KINDS)  # this module's names: "latin1" for the 1-byte kind


def _alphabet(kind: str, surrogates: bool) -> Any:
    parts = [_FORCING[k] for k in KINDS[: KINDS.index(kind) + 1]]
    if surrogates and kind in ("ucs2", "ucs4"):
        parts.append(_SURROGATES)
    return st.one_of(*parts)


def text_of_kind(kind: str, surrogates: bool = False, min_size: int = 0,
                 max_size: int = 80) -> Any:
    """str whose PEP 393 storage is exactly `kind` ("ascii", "latin1", "ucs2",
    "ucs4"; the empty str is ascii); lone surrogates among the code points
    when `surrogates` is true (ucs2/ucs4 only: a surrogate makes a str ucs2)."""
    if kind not in KINDS:
        raise ValueError("kind must be one of %s" % (KINDS,))
    return _cached(_text_of_kind, kind, surrogates, min_size, max_size)


# The strategy builders are cached: Hypothesis reads a composite function's
# source each time one is made, and tests draw these strategies inside
# their examples, so building them afresh was most of a property's time.
_BUILT: Dict[Tuple[Any, ...], Any] = {}


def _cached(build: Callable[..., Any], *args: Any) -> Any:
    """build(*args), made once per distinct arguments."""
    key = (build,) + args
    got = _BUILT.get(key)
    if got is None:
        got = _BUILT[key] = build(*args)
    return got


def _text_of_kind(kind: str, surrogates: bool, min_size: int, max_size: int) -> Any:
    @st.composite
    def build(draw: Any) -> str:
        body = draw(st.text(_alphabet(kind, surrogates), min_size=0,
                            max_size=max(max_size - 1, 0)))
        if kind == "ascii" or (body and _kind_of(body) == kind):
            s = body
        else:
            forced = draw(_FORCING[kind])
            at = draw(st.integers(0, len(body)))
            s = body[:at] + forced + body[at:]
        while len(s) < min_size:
            s += draw(_FORCING["ascii"])
        return s

    return build()


def _width_boundaries(prefix: str, encoding: str) -> List[int]:
    """Body lengths (bytes) around which the preset's prefix changes width
    or reaches its limit."""
    if prefix == "varint":
        return [127, 128, 16383, 16384]
    if prefix == "zigzag":
        return [63, 64, 8191, 8192]
    if prefix == "varint+1":
        return [126, 127, 16382, 16383]
    if prefix == "u16be":
        return [65535]
    return [255, 256, 65535, 65536]  # i32be, u32le: no width change, byte-order tests


def boundary_lengths(prefix: str = "varint", encoding: str = "utf-8") -> List[int]:
    """Body lengths (bytes) and code-point counts worth testing for a preset:
    each width boundary of the prefix +- 2, and the one-pass limits (the
    largest code-point count whose worst case still fits the smallest prefix:
    42 UCS2 code points for a 1-byte VInt)."""
    out = set()
    bounds = _width_boundaries(prefix, encoding)
    worst = (1, 2, 3, 6 if encoding == "mutf-8" else 4)
    for b in bounds:
        for d in range(-2, 3):
            if b + d >= 0:
                out.add(b + d)
        for w in worst:
            for d in (-1, 0, 1):
                if b // w + d >= 0:
                    out.add(b // w + d)
    return sorted(out)


def _sized(kind: str, ncp: int, surrogates: bool) -> Any:
    """About ncp code points of `kind` (at least one forcing char), ASCII
    around it; lengths land on either side of a boundary by construction."""

    @st.composite
    def build(draw: Any) -> str:
        if kind == "ascii" or ncp == 0:
            fill = draw(_FORCING["ascii"])
            return fill * ncp
        wide = draw(st.lists(_alphabet(kind, surrogates), min_size=1, max_size=max(1, min(ncp, 8))))
        wide[0] = draw(_FORCING[kind])
        mode = draw(st.sampled_from(["all-wide", "ascii-then-wide", "wide-then-ascii"]))
        if mode == "all-wide":
            s = ("".join(wide) * (ncp // len(wide) + 1))[:ncp]  # wide, repeated
        else:
            pad = draw(_FORCING["ascii"]) * max(ncp - len(wide), 0)
            s = pad + "".join(wide) if mode == "ascii-then-wide" else "".join(wide) + pad
        return s[:ncp] if _kind_of(s[:ncp]) == kind else s

    return build()


@st.composite
def _at_boundary(draw: Any, kinds: Any, lengths: Any, surrogates: bool) -> str:
    return draw(_cached(_sized, draw(kinds), draw(lengths), surrogates))


@st.composite
def _exact_bytes(draw: Any, kinds: Any, targets: Any, encoding: str) -> str:
    """A str of a drawn kind whose body is exactly a drawn number of bytes."""
    kind, nbytes = draw(kinds), draw(targets)
    chunk = draw(st.text(_FORCING["ascii"], min_size=1, max_size=8))
    if kind == "ascii" or nbytes == 0:
        return (chunk * (nbytes // len(chunk) + 1))[:nbytes] if nbytes else ""
    c = draw(_FORCING[kind])
    w = len(reference_body(c, encoding))
    if w > nbytes:
        return "a" * nbytes
    k = draw(st.integers(1, nbytes // w))
    pad = nbytes - k * w
    fill = (chunk * (pad // len(chunk) + 1))[:pad]
    cut = draw(st.integers(0, pad))
    return fill[:cut] + c * k + fill[cut:]


def _made_like_programs(base: Any) -> Any:
    """Strings as programs make them: slices and concatenations, whose
    storage kind CPython picks afresh (a slice of a ucs4 str can be ascii)."""

    @st.composite
    def build(draw: Any) -> str:
        parts = draw(st.lists(base, min_size=1, max_size=4))
        joined = draw(st.sampled_from(["", " ", "\0", "\u00e9", "\U0001f600"])).join(parts)
        i = draw(st.integers(0, len(joined)))
        j = draw(st.integers(i, len(joined)))
        return draw(st.sampled_from([joined, joined[i:j], joined[i:] + joined[:i]]))

    return build()


def strings(prefix: str = "varint", encoding: str = "utf-8", surrogates: bool = False,
            max_size: int = 80, boundaries: bool = True) -> Any:
    """The strategy the checks use: every storage kind, edge code points
    (U+0000, U+007F/0080, U+07FF/0800, U+FFFF/10000, ...), lone surrogates
    when `surrogates` is true, strings built by slicing and concatenation,
    and (when `boundaries`) strings whose length sits at the preset's width
    boundaries and one-pass limits (see :func:`boundary_lengths`)."""
    if prefix not in PREFIX_MAX:
        raise ValueError("unknown prefix %r" % (prefix,))
    return _cached(_strings, prefix, encoding, surrogates, max_size, boundaries)


def _strings(prefix: str, encoding: str, surrogates: bool, max_size: int,
             boundaries: bool) -> Any:
    kinds = st.sampled_from(KINDS)
    plain = st.one_of(
        *[text_of_kind(k, surrogates and k in ("ucs2", "ucs4"), max_size=max_size) for k in KINDS],
        st.text(st.one_of(_EDGES, _SURROGATES) if surrogates else _EDGES, max_size=12),
    )
    choices = [plain, _made_like_programs(plain)]
    if boundaries:
        limit = PREFIX_MAX[prefix]
        lengths = st.sampled_from([n for n in boundary_lengths(prefix, encoding)
                                   if n <= min(limit, 70000)])
        targets = st.sampled_from([b + d for b in _width_boundaries(prefix, encoding)
                                   for d in (-2, -1, 0, 1, 2) if 0 <= b + d <= 70000])
        exact = _exact_bytes(kinds, targets, encoding)
        choices += [exact, exact, exact, _at_boundary(kinds, lengths, surrogates)]
    # a uniform pick among the branches (repeats weigh them), on every
    # Hypothesis version; plain text stays first, where shrinking goes
    return st.sampled_from(choices).flatmap(lambda strategy: strategy)


# ---- the checks -------------------------------------------------------------

def describe(s: Optional[str], limit: int = 12) -> str:
    """A str shown with its code points and storage kind (for failure messages)."""
    if s is None:
        return "None"
    cps = " ".join("U+%04X" % ord(c) for c in s[:limit])
    more = " ..." if len(s) > limit else ""
    shown = repr(s) if len(s) <= 60 else repr(s[:60]) + "..."
    return "%s (%d code points, %s storage: %s%s)" % (shown, len(s), _kind_of(s), cps, more)


def _first_difference(a: bytes, b: bytes) -> str:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "first differing byte at offset %d: expected 0x%02x, got 0x%02x" % (i, x, y)
    if len(a) != len(b):
        return "identical for %d bytes, then lengths differ: expected %d bytes, got %d" % (
            min(len(a), len(b)), len(a), len(b))
    return "no difference"


def _window(b: bytes, at: int) -> str:
    lo = max(at - 8, 0)
    return "%s%r%s" % ("..." if lo else "", b[lo:at + 8], "..." if at + 8 < len(b) else "")


def _outcome(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - compared below
        return e


def boundary_examples(prefix: str = "varint", encoding: str = "utf-8") -> List[str]:
    """Fixed strings the checks always try first, in this order, before
    Hypothesis's own: a few edge code points, then for each width boundary b
    of the preset, bodies of b - 1, b and b + 1 bytes in each storage kind,
    and the one-pass limits (42 and 43 UCS2 code points for a 1-byte VInt,
    and so on)."""
    out = ["", "\0", "\x80", "\u0800", "\U00010000"]
    for b in _width_boundaries(prefix, encoding):
        for n in (b - 1, b, b + 1):
            if n < 0 or n > PREFIX_MAX[prefix]:
                continue
            out.append("a" * n)
            for c in ("\xe9", "\u0416", "\u6771", "\U0001f600"):
                w = len(reference_body(c, encoding))
                out.append(c * (n // w) + "a" * (n % w))  # exactly n bytes
                out.append(c * (n // w))                  # n // w code points
    return list(dict.fromkeys(out))


def _run(prop: Callable[..., None], strategy: Any, settings: Optional[Any],
         examples: Sequence[str] = ()) -> None:
    # the fixed boundary strings first, smallest first, in this order on
    # every Hypothesis version: the first that fails is the one reported
    for x in examples:
        prop(x)
    test = given(strategy)(prop)
    # one failure, the smallest, rather than a group of every failing example
    test = _settings(parent=settings, report_multiple_bugs=False)(test)
    try:
        with warnings.catch_warnings():
            # the failure's own message shows the string in brief (describe);
            # Hypothesis's note that the falsifying example's repr is large
            # (a body too long for u16be is 64 KiB) would only add noise
            warnings.filterwarnings("ignore", message="Generating overly large repr",
                                    category=_HypothesisWarning)
            test()
    except AssertionError:
        raise
    except Exception as e:  # an ExceptionGroup from an older Hypothesis
        first = next((x for x in getattr(e, "exceptions", ())
                      if isinstance(x, AssertionError)), None)
        if first is None:
            raise
        raise first from None


def check_against_reference(encode: Callable[[str], Any], *, prefix: str = "varint",
                            encoding: str = "utf-8", errors: str = "strict",
                            strategy: Optional[Any] = None,
                            settings: Optional[Any] = None) -> None:
    """Property test: ``bytes(encode(s)) == reference_encode(s, prefix,
    encoding, errors)`` for the strings of :func:`strings` (lone surrogates
    included unless errors is "strict"), or of your own `strategy`.  Where
    the reference raises (a lone surrogate under "strict", a body too long
    for the prefix), `encode` must raise the same exception type.  Runs
    under the active Hypothesis profile unless `settings`
    (``hypothesis.settings(...)``) is given."""
    examples: Sequence[str] = ()
    if strategy is None:
        strategy = strings(prefix, encoding, surrogates=errors != "strict")
        examples = boundary_examples(prefix, encoding)

    def prop(s: str) -> None:
        expected = _outcome(reference_encode, s, prefix, encoding, errors)
        actual = _outcome(encode, s)
        head = "codec output differs from utf8pfx's reference (prefix=%r, encoding=%r, " \
               "errors=%r)\n  string: %s\n" % (prefix, encoding, errors, describe(s))
        body = _outcome(reference_body, s, encoding, errors)
        if isinstance(body, bytes):
            head += "  body: %d bytes of %s\n" % (len(body), encoding.upper())
        if isinstance(expected, Exception):
            if not isinstance(actual, type(expected)):
                raise AssertionError(head + "  expected %s: %s\n  got: %r" % (
                    type(expected).__name__, expected, actual))
            return
        if isinstance(actual, Exception):
            raise AssertionError(head + "  expected %r\n  got %s: %s" % (
                expected, type(actual).__name__, actual)) from actual
        got = bytes(actual)
        if got != expected:
            diff = _first_difference(expected, got)
            at = next((i for i, (x, y) in enumerate(zip(expected, got)) if x != y),
                      min(len(expected), len(got)))
            raise AssertionError(head + "  %s\n  expected: %s\n  got:      %s" % (
                diff, _window(expected, at), _window(got, at)))

    _run(prop, strategy, settings, examples)


def check_roundtrip(encode: Callable[[str], Any], decode: Callable[[bytes], Any], *,
                    prefix: Optional[str] = None, encoding: str = "utf-8",
                    surrogates: bool = False, strategy: Optional[Any] = None,
                    settings: Optional[Any] = None) -> None:
    """Property test: ``decode(encode(s)) == s``.  With `prefix` given, also
    ``decode(reference_encode(s, prefix, encoding)) == s`` (your decoder
    reads what the format's real writers write; a symmetric bug, such as a
    code-point count on both sides, passes a plain round trip but not this).
    Lone surrogates (`surrogates=True`) round-trip only under
    "surrogatepass"-like codecs."""
    examples: Sequence[str] = ()
    if strategy is None:
        strategy = strings(prefix or "varint", encoding, surrogates=surrogates)
        examples = boundary_examples(prefix or "varint", encoding)

    def prop(s: str) -> None:
        sources: Sequence[Any] = [("your encode", encode)]
        if prefix is not None:
            sources = [("your encode", encode),
                       ("reference_encode", lambda x: reference_encode(
                           x, prefix, encoding, "surrogatepass" if surrogates else "strict"))]
        if prefix is not None and len(reference_body(
                s, encoding, "surrogatepass" if surrogates else "strict")) > PREFIX_MAX[prefix]:
            # too long for the preset: encoding must refuse, not truncate or wrap
            out = _outcome(encode, s)
            if not isinstance(out, Exception):
                raise AssertionError(
                    "encode accepted a string whose body is too long for prefix=%r "
                    "(at most %d bytes)\n  string: %s\n  encoded: %r..." % (
                        prefix, PREFIX_MAX[prefix], describe(s), bytes(out)[:16]))
            return
        for label, enc in sources:
            blob = bytes(enc(s))
            back = _outcome(decode, blob)
            if isinstance(back, Exception) or back != s:
                shown = ("%s: %s" % (type(back).__name__, back) if isinstance(back, Exception)
                         else describe(back))
                where = ""
                if isinstance(back, str):
                    k = next((i for i, (x, y) in enumerate(zip(s, back)) if x != y),
                             min(len(s), len(back)))
                    where = "\n  first differing code point at index %d" % k
                raise AssertionError(
                    "round trip failed (decode(%s(s)) != s)\n  string:  %s\n  encoded: %r\n"
                    "  decoded: %s%s" % (label, describe(s), blob[:64], shown, where))

    _run(prop, strategy, settings, examples)
