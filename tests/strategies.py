"""Hypothesis strategies for utf8pfx tests.

Hypothesis' text() and characters() leave out surrogates (category Cs) by
default; these strategies put them back on purpose, since lone surrogates are
where the C core leaves its fast path.  Per-kind strategies force each PEP 393
storage kind (the C core has a separate path for each).
"""
from hypothesis import strategies as st

from reference import kind_of

# --- single characters ------------------------------------------------------

#: Any code point, U+0000..U+10FFFF, surrogates included.
any_char = st.characters(codec=None, categories=None, exclude_categories=())
#: Any code point but a surrogate.
scalar_char = st.characters(exclude_categories=("Cs",))
#: Lone surrogates only (built from ints: characters() drops Cs by default).
surrogate = st.integers(0xD800, 0xDFFF).map(chr)
#: The surrogates surrogateescape turns back into bytes.
escape_surrogate = st.integers(0xDC80, 0xDCFF).map(chr)

ascii_char = st.integers(0, 0x7F).map(chr)
latin1_high = st.integers(0x80, 0xFF).map(chr)
ucs1_char = st.integers(0, 0xFF).map(chr)
bmp_nonsurrogate = st.one_of(st.integers(0, 0xD7FF), st.integers(0xE000, 0xFFFF)).map(chr)
ucs2_high = st.one_of(st.integers(0x100, 0xD7FF), st.integers(0xE000, 0xFFFF)).map(chr)
astral = st.integers(0x10000, 0x10FFFF).map(chr)

#: Weighted so that every UTF-8 width and the boundaries between them turn up.
edge_char = st.sampled_from(
    [chr(c) for c in (
        0x00, 0x7F, 0x80, 0xFF, 0x100, 0x7FF, 0x800, 0xD7FF,
        0xD800, 0xDBFF, 0xDC00, 0xDC7F, 0xDC80, 0xDCFF, 0xDD00, 0xDFFF,
        0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x10FFFF,
    )]
)

#: Mixes everything, with surrogates far more often than uniform sampling gives.
mixed_char = st.one_of(ascii_char, any_char, surrogate, edge_char, latin1_high, astral)
#: Same without surrogates.
mixed_scalar_char = st.one_of(ascii_char, scalar_char, latin1_high, astral,
                              edge_char.filter(lambda c: not 0xD800 <= ord(c) <= 0xDFFF))


def _runs(char, max_run=12):
    """A char repeated: runs of ASCII / of surrogates matter to the kernels."""
    return st.tuples(char, st.integers(1, max_run)).map(lambda t: t[0] * t[1])


def _text_from(parts, min_size=0, max_size=80):
    return st.lists(parts, min_size=min_size, max_size=max_size).map("".join)


# --- whole strings --------------------------------------------------------

#: Text over the whole code space, surrogates (and runs of them) included.
text_any = _text_from(st.one_of(mixed_char, _runs(mixed_char), _runs(surrogate)))
#: Text with no lone surrogate (what strict accepts).
text_scalar = _text_from(st.one_of(mixed_scalar_char, _runs(mixed_scalar_char)))
#: Text where every surrogate is one surrogateescape can encode.
text_escapable = _text_from(st.one_of(mixed_scalar_char, escape_surrogate, _runs(escape_surrogate)))


@st.composite
def _with_forced(draw, base, forced, min_size=0, max_size=80):
    """A list from `base` with one `forced` char inserted at a random place:
    the forced char pins the storage kind."""
    xs = draw(st.lists(base, min_size=min_size, max_size=max_size))
    i = draw(st.integers(0, len(xs)))
    xs.insert(i, draw(forced))
    return "".join(xs)


def text_of_kind(kind, surrogates=False, max_size=80):
    """Strings stored as the given PEP 393 kind.

    ascii: only U+0000..U+007F.   ucs1: at least one U+0080..U+00FF.
    ucs2: at least one >= U+0100 (never astral).   ucs4: at least one astral.
    With surrogates=True, ucs2/ucs4 strings also draw lone surrogates (ascii
    and ucs1 cannot hold them).  The forced char is never a surrogate, so a
    ucs2 string is ucs2 even without them.
    """
    if kind == "ascii":
        return st.lists(st.one_of(ascii_char, _runs(ascii_char)), max_size=max_size).map("".join)
    if kind == "ucs1":
        base = st.one_of(ucs1_char, ascii_char, _runs(ucs1_char))
        return _with_forced(base, latin1_high, max_size=max_size)
    if kind == "ucs2":
        parts = [ucs1_char, bmp_nonsurrogate, ascii_char, _runs(bmp_nonsurrogate)]
        if surrogates:
            parts += [surrogate, _runs(surrogate)]
        return _with_forced(st.one_of(*parts), ucs2_high, max_size=max_size)
    if kind == "ucs4":
        parts = [ucs1_char, bmp_nonsurrogate, astral, ascii_char, _runs(astral)]
        if surrogates:
            parts += [surrogate, _runs(surrogate)]
        return _with_forced(st.one_of(*parts), astral, max_size=max_size)
    raise ValueError(kind)


def checked_kind(kind, strategy):
    """Assert (in the generator, so a wrong strategy fails loudly) the kind."""
    def check(s):
        assert kind_of(s) == kind, (kind, s)
        return s
    return strategy.map(check)


def text_for(errors, kind=None):
    """The text a property test should feed to a given handler.

    strict gets surrogate-free text; surrogateescape gets text whose
    surrogates it can encode; every other handler gets the whole code space.
    """
    if kind is not None:
        surr = errors not in ("strict", "surrogateescape")
        s = text_of_kind(kind, surrogates=surr)
        if errors == "surrogateescape" and kind in ("ucs2", "ucs4"):
            s = st.tuples(s, st.lists(escape_surrogate, max_size=4)).map(
                lambda t: t[0] + "".join(t[1]))
        return checked_kind(kind, s)
    if errors == "strict":
        return text_scalar
    if errors == "surrogateescape":
        return text_escapable
    return text_any


class StrSub(str):
    """A str subclass whose Python-level methods all lie: the C core must read
    the str's storage, not call any of these."""

    def __len__(self):
        return 0

    def __str__(self):
        return "lie"

    def __iter__(self):
        return iter(())

    def encode(self, *args, **kwargs):
        return b"lie"


def maybe_subclass(s_strategy):
    return st.tuples(s_strategy, st.booleans()).map(lambda t: StrSub(t[0]) if t[1] else t[0])


#: Initial capacities: 0 and 1 make the writer grow mid-string.
capacities = st.sampled_from([0, 1, 2, 3, 7, 64, 4096])
