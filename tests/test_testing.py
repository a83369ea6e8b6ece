"""utf8pfx.testing catches real bugs: deliberately wrong toy codecs fail the
checks (with the minimal string and the first differing byte in the
message), a correct codec passes, and Hypothesis stays optional."""

import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import utf8pfx
from support.subproc import run_python
from utf8pfx._reference import storage_kind
from utf8pfx.testing import (
    KINDS,
    boundary_lengths,
    check_against_reference,
    check_roundtrip,
    leb128,
    read_prefix,
    reference_decode,
    reference_encode,
    strings,
    text_of_kind,
)

# Enough examples to find what the explicit boundary examples do not cover;
# no database, so every run starts from scratch.
FIND = settings(max_examples=200, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


def kind_of(s):
    return storage_kind(s, KINDS)  # in utf8pfx.testing's names: "latin1", not "ucs1"


# ---- toy codecs, each wrong in one way users get wrong ---------------------

def codepoint_count_prefix(s):
    """Prefixes len(s) (code points) instead of the byte count."""
    return leb128(len(s)) + s.encode("utf-8")


def cesu_supplementary(s):
    """Writes supplementary characters as two 3-byte surrogates (CESU-8),
    which is MUTF-8's rule, not UTF-8's."""
    b = s.encode("utf-16-be", "surrogatepass").decode("utf-16-be", "surrogatepass")
    body = "".join(
        (chr(0xD800 + ((ord(c) - 0x10000) >> 10)) + chr(0xDC00 + ((ord(c) - 0x10000) & 0x3FF)))
        if ord(c) > 0xFFFF else c for c in b).encode("utf-8", "surrogatepass")
    return leb128(len(body)) + body


def off_by_one_vint(s):
    """One byte for lengths up to 128 inclusive (the 1-byte VInt ends at 127)."""
    body = s.encode("utf-8")
    n = len(body)
    return (bytes([n]) if n <= 128 else leb128(n)) + body


def mutf8_forgets_nul(s):
    """A MUTF-8 writer that leaves U+0000 as a raw 00 byte."""
    body = reference_encode(s, "u16be", "mutf-8")[2:].replace(b"\xc0\x80", b"\x00")
    return len(body).to_bytes(2, "big") + body


def zigzag_as_varint(s):
    """Avro strings with a plain varint (forgets the zigzag)."""
    body = s.encode("utf-8")
    return leb128(len(body)) + body


def decode_latin1(b):
    n, at = read_prefix(b, 0, "varint")
    return b[at:at + n].decode("latin-1")


def decode_ignores_prefix_width(b):
    """Assumes every prefix is one byte."""
    return b[1:].decode("utf-8")


@pytest.mark.parametrize("toy,kw,needle", [
    (codepoint_count_prefix, {}, "first differing byte at offset 0"),
    (cesu_supplementary, {}, "U+1"),
    (off_by_one_vint, {}, "first differing byte at offset 1: expected 0x01"),
    (mutf8_forgets_nul, {"prefix": "u16be", "encoding": "mutf-8"}, "U+0000"),
    (zigzag_as_varint, {"prefix": "zigzag"}, "first differing byte at offset 0"),
])
def test_wrong_encoders_are_caught(toy, kw, needle):
    with pytest.raises(AssertionError) as ei:
        check_against_reference(toy, settings=FIND, **kw)
    msg = str(ei.value)
    assert "codec output differs from utf8pfx's reference" in msg
    assert needle in msg, msg
    assert "storage" in msg and "code points" in msg


def test_off_by_one_names_the_boundary():
    with pytest.raises(AssertionError) as ei:
        check_against_reference(off_by_one_vint, settings=FIND)
    msg = str(ei.value)
    # the smallest failing body is 128 bytes: expected the 2-byte VInt 80 01
    assert "expected 0x80, got 0x80" not in msg
    assert "expected: b'\\x80\\x01" in msg, msg


def test_minimal_example_for_codepoint_count():
    # the default run stops at a fixed boundary example of one wide code point
    with pytest.raises(AssertionError) as ei:
        check_against_reference(codepoint_count_prefix, settings=FIND)
    assert "(1 code points," in str(ei.value)
    # with your own strategy, Hypothesis shrinks to the smallest failing str
    with pytest.raises(AssertionError) as ei:
        check_against_reference(codepoint_count_prefix, strategy=st.text(), settings=FIND)
    assert "string: '\\x80' (1 code points, latin1 storage: U+0080)" in str(ei.value)
    assert "expected: b'\\x02\\xc2\\x80'" in str(ei.value)


@pytest.mark.parametrize("decoder", [decode_latin1, decode_ignores_prefix_width])
def test_wrong_decoders_are_caught(decoder):
    with pytest.raises(AssertionError, match="round trip failed"):
        check_roundtrip(utf8pfx.encode, decoder, settings=FIND)


def test_symmetric_bug_needs_the_reference():
    """A codec that writes UTF-16 bodies round-trips with itself; the check
    with prefix= also feeds the decoder the format's real (UTF-8) bytes."""
    def enc(s):
        body = s.encode("utf-16-le")
        return leb128(len(body)) + body

    def dec(b):
        n, at = read_prefix(b, 0)
        return b[at:at + n].decode("utf-16-le")

    check_roundtrip(enc, dec, settings=FIND)  # passes: symmetric
    with pytest.raises(AssertionError, match="reference_encode"):
        check_roundtrip(enc, dec, prefix="varint", settings=FIND)


def test_too_long_must_be_refused():
    def wraps(s):
        body = s.encode()
        return (len(body) & 0xFFFF).to_bytes(2, "big") + body

    def dec(b):
        return reference_decode(b, "u16be")

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with pytest.raises(AssertionError, match="too long for prefix='u16be'"):
            check_roundtrip(wraps, dec, prefix="u16be", settings=FIND)
    # the report is the AssertionError alone: no warning that the 64 KiB
    # falsifying example makes a large repr (other warnings, say a future
    # Hypothesis deprecation, are not this test's business)
    assert [str(w.message) for w in seen if "large repr" in str(w.message)] == []


@pytest.mark.parametrize("prefix", utf8pfx.testing.PREFIXES)
def test_correct_codecs_pass(prefix):
    # as many examples as the profile gives a property (the helpers' own
    # default is for users' runs)
    run = settings(max_examples=settings.default.max_examples, deadline=None, database=None)
    for enc in ("utf-8", "mutf-8"):
        check_against_reference(lambda s: utf8pfx.encode(s, prefix=prefix, encoding=enc),
                                prefix=prefix, encoding=enc, settings=run)
        check_roundtrip(lambda s: utf8pfx.encode(s, prefix=prefix, encoding=enc),
                        lambda b: utf8pfx.decode(b, prefix=prefix, encoding=enc),
                        prefix=prefix, encoding=enc, settings=run)
    check_against_reference(lambda s: utf8pfx.encode(s, "surrogatepass", prefix=prefix),
                            prefix=prefix, errors="surrogatepass", settings=run)


@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
def test_text_of_kind_gives_that_kind(kind, data):
    s = data.draw(text_of_kind(kind, surrogates=True))
    assert kind_of(s) == kind or (s == "" and kind == "ascii")


def test_strings_reach_every_kind_and_boundary():
    seen_kinds, seen_len = set(), set()

    @settings(max_examples=300, deadline=None, database=None)
    @given(strings("varint", surrogates=True))
    def collect(s):
        seen_kinds.add(kind_of(s))
        seen_len.add(len(s.encode("utf-8", "surrogatepass")))

    collect()
    assert seen_kinds == set(KINDS)
    assert seen_len & set(range(125, 132)), sorted(seen_len)[:50]


def test_boundary_lengths_hold_each_width_edge():
    b = boundary_lengths("varint")
    assert {42, 43, 127, 128, 16383, 16384} <= set(b)
    assert {63, 64} <= set(boundary_lengths("zigzag"))
    assert {65535} <= set(boundary_lengths("u16be"))


def test_importing_utf8pfx_does_not_import_hypothesis():
    code = "import sys, utf8pfx; utf8pfx.encode('x'); print('hypothesis' in sys.modules)"
    out = run_python(["-c", code], text=True, check=True)
    assert out.stdout.strip() == "False"


def test_testing_without_hypothesis_says_how_to_install():
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'hypothesis' or name.startswith('hypothesis.'):\n"
        "            raise ImportError('blocked')\n"
        "sys.meta_path.insert(0, Block())\n"
        "try:\n"
        "    import utf8pfx.testing\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = run_python(["-c", code], text=True, check=True)
    assert "pip install 'utf8pfx[testing]'" in out.stdout


@given(st.text(st.characters() | st.characters(categories=["Cs"]), max_size=40)
       | st.lists(st.sampled_from(["\x00", "a", "\xe9", "\u0800", "\uffff", "\ud800", "\udc80",
                                    "\udfff", "\U00010000", "\U0010ffff"]),
                  max_size=12).map("".join))
def test_reference_mutf8_is_the_per_code_point_definition(s):
    # the shipped reference encodes whole runs through CPython's codec; the
    # definition, one code point at a time, must give the same bytes
    from utf8pfx._reference import _mutf8_char, mutf8_encode

    assert mutf8_encode(s, "surrogatepass") == b"".join(_mutf8_char(ord(c)) for c in s)
