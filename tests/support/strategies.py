"""Hypothesis strategies for utf8pfx tests.

Hypothesis' text() and characters() leave out surrogates (category Cs) by
default; these strategies put them back on purpose, since lone surrogates are
where the C core leaves its fast path.  Strings of one PEP 393 storage kind
(the C core has a separate path for each) come from the package's own
utf8pfx.testing.text_of_kind; what is here is what the tests need beyond
utf8pfx.testing's strategies.
"""
from hypothesis import strategies as st

from utf8pfx import testing
from utf8pfx._reference import STORAGE_KINDS, storage_kind

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

#: Lists of payloads for Arrow's differential tests: any bytes, valid UTF-8,
#: and the sequences that are invalid or cut short (encoded surrogates, a
#: lone lead or continuation byte, above U+10FFFF).
payload_lists = st.lists(st.one_of(
    st.binary(max_size=40),
    text_scalar.map(lambda s: s.encode()),
    st.sampled_from([b"\xed\xa0\x80", b"\xc3", b"\xa9", b"\xf4\x90\x80\x80", b"\xe2\x82"])),
    max_size=30)


#: utf8pfx.testing's name of each storage kind (it says "latin1" for "ucs1").
_TESTING_KIND = dict(zip(STORAGE_KINDS, testing.KINDS))


@st.composite
def _with_a_run(draw, strategy):
    """A str from strategy with one of its own code points repeated (1-12
    times) where it stands: runs matter to the kernels, and a run of a code
    point the str already holds keeps its storage kind."""
    s = draw(strategy)
    if not s:
        return s
    i = draw(st.integers(0, len(s) - 1))
    return s[:i] + s[i] * draw(st.integers(1, 12)) + s[i:]


def _of_kind(kind, surrogates=False):
    """Strings stored as the given PEP 393 kind ("ascii", "ucs1", "ucs2",
    "ucs4"): utf8pfx.testing.text_of_kind's, with a run of one of their code
    points.  With surrogates=True, ucs2/ucs4 strings also hold lone
    surrogates (ascii and ucs1 cannot)."""
    return _with_a_run(testing.text_of_kind(_TESTING_KIND[kind], surrogates=surrogates))


def checked_kind(kind, strategy):
    """Assert (in the generator, so a wrong strategy fails loudly) the kind."""
    def check(s):
        assert storage_kind(s) == kind, (kind, s)
        return s
    return strategy.map(check)


def text_for(errors, kind=None):
    """The text a property test should feed to a given handler.

    strict gets surrogate-free text; surrogateescape gets text whose
    surrogates it can encode; every other handler gets the whole code space.
    """
    if kind is not None:
        surr = errors not in ("strict", "surrogateescape")
        s = _of_kind(kind, surrogates=surr)
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
