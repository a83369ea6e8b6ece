"""BufferReader, and what decode() and decode_all() read.

Reference for every comparison: CPython's bytes.decode, and a pure-Python
reader (varint loop + bytes.decode, tests/support/reference.py) for whole
blobs and the offsets errors name.  Kernel-level tests run once per decode
level the CPU has (the ``level`` fixture of conftest.py), among them the
reader's short paths (the inline ASCII check and the one-pass decoder for
payloads of up to 64 bytes) and its long-ASCII path (check fused with the
copy).

Elsewhere: decode()'s refusal of trailing data in test_functions.py; a
reader's hold on the buffer it reads in test_robustness_exports.py; leaks in
test_robustness_leaks.py.
"""
import codecs
import mmap
import random
import sys
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

import utf8pfx
from utf8pfx import BufferReader, BufferWriter, decode, decode_all
from utf8pfx import _core
from support.checks import held_by_others
from support.reference import (offset_of, ours_or_error, pfx, ref_encode, ref_or_error,
                               ref_read_all, vint, vint_size)

HANDLERS = ["strict", "replace", "ignore", "surrogateescape", "surrogatepass", "backslashreplace"]
LEVELS = _core._decode_isa_levels()


# ------------------------------------------------ one payload against CPython


def decode_payload_or_error(payload, errors="strict"):
    """Ours on one payload: value, or (start, end, reason)."""
    try:
        return decode(pfx(payload), errors)
    except UnicodeDecodeError as e:
        assert e.object == payload and e.encoding == "utf-8"
        return (e.start, e.end, e.reason)


def cpython_or_error(payload, errors="strict"):
    try:
        return payload.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        return (e.start, e.end, e.reason)


# ----------------------------------------------- brute-force error parity

# bytes at every boundary of the UTF-8 tables
EDGES = sorted({0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2,
                0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5,
                0xF7, 0xF8, 0xFF})


def test_bruteforce_all_1_and_2_byte_sequences():
    for a in range(256):
        p = bytes([a])
        assert decode_payload_or_error(p) == cpython_or_error(p), p
    for a in range(0x80, 256):  # an ASCII first byte reduces to the 1-byte case
        for b in range(256):
            p = bytes([a, b])
            assert decode_payload_or_error(p) == cpython_or_error(p), p


@pytest.mark.slow  # 440 K payloads: the default run checks the edge bytes, in
# test_reader_one_pass_short_payloads* and test_bruteforce_in_long_payloads_every_level
def test_bruteforce_3_byte_sequences():
    for a in range(0xC0, 256):
        for b in range(256):
            for c in EDGES:
                p = bytes([a, b, c])
                assert decode_payload_or_error(p) == cpython_or_error(p), p


@pytest.mark.slow  # 390 K payloads (the edge bytes: as above)
def test_bruteforce_4_byte_sequences():
    for a in list(range(0xF0, 0x100)) + [0xE0, 0xED, 0xC2, 0x80]:
        for b in EDGES:
            for c in EDGES:
                for d in EDGES:
                    p = bytes([a, b, c, d])
                    assert decode_payload_or_error(p) == cpython_or_error(p), p


def test_bruteforce_in_long_payloads_every_level(level):
    # long enough that the SIMD scans run, with the sequence at a block edge
    head = b"x" * 29
    tail = "é日😀".encode() * 6
    for a in [0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]:
        for b in EDGES:
            for c in EDGES:
                for p in (head + bytes([a, b, c]) + tail, head + bytes([a, b, c]),
                          tail + bytes([a, b]), head + head + bytes([a, b, c, 0x80])):
                    assert decode_payload_or_error(p) == cpython_or_error(p), (level, p)


def test_bruteforce_handlers_two_bytes():
    for errors in HANDLERS[1:]:
        for a in range(0x80, 256, 3):
            for b in EDGES:
                p = bytes([a, b, 0x41])
                assert decode_payload_or_error(p, errors) == cpython_or_error(p, errors), (
                    errors, p)


def test_surrogatepass_bruteforce():
    for b in range(0x80, 0xC0):
        for c in EDGES + [0x80, 0xBF]:
            for p in (bytes([0xED, b, c]), b"ab" + bytes([0xED, b, c]) + b"\xc3\xa9" * 20,
                      bytes([0xED, b])):
                got = decode_payload_or_error(p, "surrogatepass")
                assert got == cpython_or_error(p, "surrogatepass"), p


# ------------------------------------------ short payloads: the inline paths


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


def _check_payloads(payloads, errors):
    """_check_payload for many payloads at once: those bytes.decode takes go
    into one blob, one record each, read record by record and then by
    read_strings (each record is followed by another, as "z" follows one
    alone); the ones it refuses are checked one by one, since a reader
    stops at the first error."""
    good, wants = [], []
    for payload in payloads:
        try:
            want = payload.decode("utf-8", errors)
        except UnicodeDecodeError as ce:
            # _check_payload's error half, without pytest.raises: there are
            # tens of thousands of these
            r = utf8pfx.BufferReader(pfx(payload) + b"\x01z", errors=errors)
            try:
                r.read_string()
            except UnicodeDecodeError as e:
                assert (e.start, e.end, e.reason) == (ce.start, ce.end, ce.reason), payload
            else:
                raise AssertionError("no UnicodeDecodeError for %r" % (payload,))
            assert r.position == 0
            continue
        good.append(payload)
        wants.append(want)
    blob = b"".join(pfx(p) for p in good) + b"\x01z"
    for got in (list(utf8pfx.BufferReader(blob, errors=errors)),
                utf8pfx.BufferReader(blob, errors=errors).read_strings()):
        assert got[-1] == "z" and len(got) == len(wants) + 1
        for payload, g, want in zip(good, got, wants):
            assert g == want, (payload, errors)
            # the same PEP 393 storage as CPython's decoder picks (the narrowest)
            assert sys.getsizeof(g) == sys.getsizeof(want), (payload, g)
            if len(want) == 1 and ord(want) < 256:  # CPython's shared 1-char strs
                assert g is want


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


# the reader's one-pass decoder for payloads of up to 64 bytes

ONE_PASS_EDGES = [  # valid at the edges of each sequence length, and the nearest invalid
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
            for edge in ONE_PASS_EDGES:
                for i in range(0, len(base) + 1, max(1, len(unit))):
                    payload = base[:i] + edge + base[i:]
                    if len(payload) <= top + 2:
                        yield payload


@pytest.mark.parametrize("errors", ["surrogatepass", "surrogateescape", "replace", "ignore",
                                    "backslashreplace"])
def test_reader_one_pass_short_payloads(errors):
    """Payloads of 1..70 bytes (the one-pass decoder takes up to 64, the
    rest go the two-pass road) made of each fill, with each edge or invalid
    sequence at every position: value, storage kind and error exactly as
    bytes.decode.  ("strict" is the next test's, at every decode level.)"""
    _check_payloads(_one_pass_payloads(70), errors)


def test_reader_one_pass_short_payloads_every_level(level):
    """The same payloads under "strict" at every decode level: the short
    decoder of the AVX-512 level's table (VBMI, where the CPU has it) and
    the inline one of the others must each take exactly what bytes.decode
    takes, and hand everything else to the two-pass road."""
    _check_payloads(_one_pass_payloads(66), "strict")


# ----------------------------------- long ASCII payloads: check fused with copy
#
# Payloads of 64+ bytes whose first 64 and last 8 bytes are ASCII get a str
# allocated first and the copy_ascii kernel (check fused with the copy); a
# byte >= 0x80 anywhere else makes the kernel refuse, the str is dropped and
# the payload goes the general way.  Every decode level, against CPython's
# codec, values and errors alike.

LONG_ASCII_LENGTHS = (64, 65, 71, 72, 127, 128, 129, 255, 256, 257, 1000, 4095, 4096, 4097, 65537)


def ascii_bytes(rng, n):
    return bytes(rng.randrange(0x80) for _ in range(n))


def long_ascii_ours(payload, errors="strict"):
    try:
        return decode(pfx(payload), errors)
    except UnicodeDecodeError as e:
        return ("err", e.start, e.end, e.reason, e.data_offset)


def long_ascii_cpython(payload, errors="strict"):
    try:
        return payload.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        return ("err", e.start, e.end, e.reason, len(vint(len(payload))) + e.start)


def test_long_ascii_payloads_every_length(level):
    rng = random.Random(7)
    for n in LONG_ASCII_LENGTHS:
        p = ascii_bytes(rng, n)
        s = decode(pfx(p))
        assert s == p.decode("ascii") and s.isascii() and len(s) == n


def test_long_ascii_one_non_ascii_sequence_anywhere(level):
    """The probe passes (first 64 and last 8 ASCII) but the kernel meets a
    non-ASCII byte in the middle: the result is CPython's, valid or not."""
    rng = random.Random(11)
    inserts = ["é".encode(), "Ж".encode(), "中".encode(), "😀".encode(), b"\x80", b"\xff",
               b"\xc3", b"\xed\xa0\x80"]
    for n in (136, 200, 300, 1000, 4096, 4097):
        base = ascii_bytes(rng, n)
        positions = sorted({64, 65, n // 2, n - 9 - 4, rng.randrange(64, n - 12)})
        for pos in positions:
            for ins in inserts:
                p = base[:pos] + ins + base[pos + len(ins):]
                assert len(p) == n
                for errors in ("strict", "replace", "surrogatepass"):
                    assert long_ascii_ours(p, errors) == long_ascii_cpython(p, errors), (n, pos, ins, errors)


def test_long_mostly_ascii_is_resumed_where_the_ascii_copy_stopped(level):
    """The copy stops at the block of the first non-ASCII byte and the rest is
    decoded from there: a Latin-1 character first, then a second sequence
    later (valid, beyond U+00FF, or invalid), in the same block or far
    after it; the str and the errors are CPython's."""
    rng = random.Random(12)
    firsts = ["é".encode(), "ÿ".encode(), "\x80".encode("latin-1")]
    seconds = [b"", "à".encode(), "Ж".encode(), "中".encode(), b"\x80", b"\xc3", b"\xc0\x80",
               b"\xf0\x9f"]
    for n in (200, 1000, 4097):
        base = ascii_bytes(rng, n)
        for first in firsts:
            for gap in (0, 1, 31, 200, n):
                pos = rng.randrange(64, n // 2)
                for second in seconds:
                    at = min(pos + len(first) + gap, n - 9 - len(second))
                    if at < pos + len(first):
                        continue
                    p = bytearray(base)
                    p[pos:pos + len(first)] = first
                    p[at:at + len(second)] = second
                    p = bytes(p)
                    for errors in ("strict", "replace"):
                        ours = long_ascii_ours(p, errors)
                        assert ours == long_ascii_cpython(p, errors), (n, pos, first, at, second)
                        if isinstance(ours, str):
                            assert ours.isascii() == p.isascii()


def test_long_latin1_decoded_without_a_count_first(level):
    """From 1024 payload bytes on, a payload that looks Latin-1 is validated
    and transcoded in one pass into room for a code point a byte, then the
    str is shrunk: around that size, Latin-1 sparse or dense, with a
    sequence beyond U+00FF or an invalid byte at the start, in the middle or
    at the end; the str (its length, kind and size) and the errors are
    CPython's."""
    rng = random.Random(21)
    latin = [chr(c) for c in range(0xA0, 0x100)]
    extras = ["Ж".encode(), "😀".encode(), b"\xff", b"\xc3"]
    for n in (1000, 1023, 1024, 1025, 3001):
        for dense in (0.02, 0.5, 1.0):
            text = "".join(rng.choice(latin) if rng.random() < dense
                           else chr(rng.randrange(0x20, 0x7F)) for _ in range(n))
            p = text.encode()[:n].decode("utf-8", "ignore").encode()
            for at in (None, 0, 70, len(p) // 2, len(p) - 4):
                for extra in extras if at is not None else [b""]:
                    q = p if at is None else p[:at] + extra + p[at + len(extra):]
                    for errors in ("strict", "replace"):
                        ours = long_ascii_ours(q, errors)
                        assert ours == long_ascii_cpython(q, errors), (n, dense, at, extra)
                        if isinstance(ours, str):
                            theirs = q.decode("utf-8", errors)
                            assert sys.getsizeof(ours) == sys.getsizeof(theirs)
                            assert ours.isascii() == theirs.isascii()


def test_long_ascii_non_ascii_byte_in_the_probed_ends(level):
    """A non-ASCII byte in the first 64 or last 8 bytes skips the fused path."""
    rng = random.Random(13)
    for n in (64, 100, 4096):
        base = ascii_bytes(rng, n)
        for pos in (0, 1, 31, 63, n - 8, n - 2):
            p = base[:pos] + "é".encode() + base[pos + 2:]
            p = p[:n]
            assert long_ascii_ours(p) == long_ascii_cpython(p), (n, pos)


def test_reader_and_decode_all_on_long_ascii_records(level):
    rng = random.Random(17)
    payloads = [ascii_bytes(rng, n) for n in (64, 5000, 70, 3)]
    payloads.insert(2, ascii_bytes(rng, 100)[:80] + "ß".encode() + ascii_bytes(rng, 20))
    data = b"".join(map(pfx, payloads))
    want = [p.decode() for p in payloads]
    assert decode_all(data) == want
    r = BufferReader(data)
    assert r.read_strings() == want
    # an invalid record after valid long ASCII ones: nothing consumed
    bad = data + pfx(ascii_bytes(rng, 90) + b"\xff" + ascii_bytes(rng, 9))
    r = BufferReader(bad)
    with pytest.raises(UnicodeDecodeError):
        r.read_strings()
    assert r.read_string() == want[0]



# ------------------------------------------- random bytes vs the reference


@given(st.binary(max_size=80))
def test_random_bytes_against_reference(data):
    assert ours_or_error(lambda: decode_all(data)) == ref_or_error(lambda: ref_read_all(data))


@given(st.lists(st.binary(max_size=40), max_size=6), st.binary(max_size=6),
       st.sampled_from(HANDLERS))
def test_records_of_random_payloads_against_reference(payloads, junk, errors):
    data = b"".join(pfx(p) for p in payloads) + junk
    assert ours_or_error(lambda: decode_all(data, errors)) == ref_or_error(
        lambda: ref_read_all(data, errors))


@given(st.lists(st.text(max_size=60), max_size=8), st.integers(0, 400),
       st.sampled_from(range(256)))
def test_mutated_records_every_level(strings, at, byte):
    data = bytearray(b"".join(pfx(s.encode("utf-8", "surrogatepass")) for s in strings))
    if data:
        data[at % len(data)] = byte
    data = bytes(data)
    expect = ref_or_error(lambda: ref_read_all(data))
    for lvl in LEVELS:
        prev = _core._set_decode_isa(lvl)
        try:
            assert ours_or_error(lambda: decode_all(data)) == expect, lvl
        finally:
            _core._set_decode_isa(prev)


def _outcome(fn):
    """ours_or_error, with the record index and the str's storage (kind)."""
    try:
        got = fn()
    except ValueError as e:
        return ours_or_error(lambda: (_ for _ in ()).throw(e)) + (e.record_index,)
    return ("ok", got, [sys.getsizeof(s) if isinstance(s, str) else None for s in got])


# payloads around every size class of the reader's paths (inline ASCII, the
# short decoders, 65 to 128 bytes, the long way, the stack copy's 256 bytes)
_SHARED_TEXT = st.text(st.sampled_from("aé中😀\x00"), max_size=100)


@given(st.lists(st.tuples(_SHARED_TEXT, st.integers(0, 3)), max_size=6),
       st.integers(0, 400), st.sampled_from([None, 0x80, 0xC3, 0xED, 0xF0, 0xFF]),
       st.sampled_from(["strict", "replace", "ignore"]))
def test_shared_buffers_read_as_bytes_do(texts, at, byte, errors):
    """A bytearray, a memoryview of one, and a StreamReader whose source kept
    a slice of each view are buffers others may write: the reader decodes
    most payloads from copies there (docs/design.md).  With nobody writing,
    every result, error (offset, record index) and str kind is that of bytes."""
    data = bytearray(b"".join(pfx((t * (r * 20 + 1)).encode()) for t, r in texts))
    if byte is not None and data:
        data[at % len(data)] = byte
    blob = bytes(data)
    want = _outcome(lambda: BufferReader(blob, errors=errors).read_strings())
    for shared in (bytearray(blob), memoryview(bytearray(blob))):
        assert _outcome(lambda: BufferReader(shared, errors=errors).read_strings()) == want
        assert _outcome(lambda: list(BufferReader(shared, errors=errors))) == want

    class KeepsSlices:  # a source that keeps an export of every view it fills
        def __init__(self):
            self.at, self.kept = 0, []

        def readinto(self, view):
            k = min(len(view), 7, len(blob) - self.at)
            view[:k] = blob[self.at:self.at + k]
            self.at += k
            self.kept.append(view[:])
            return k

    assert _outcome(lambda: utf8pfx.StreamReader(KeepsSlices(), errors=errors,
                                                 read_size=64).read_strings()) == want


@pytest.mark.parametrize("payload", [b"a" + b"\xff" * 30 + b"b", b"ab\xed\xa0\x80" * 8])
def test_shared_buffer_short_payload_an_error_handler_shortens(payload):
    """A short payload the table's decoder refuses, which errors="ignore"
    makes a shorter ASCII str: read from a bytearray, the str is checked
    at its own length (past it, the check read outside the str: ASan)."""
    blob = pfx(payload)
    want = payload.decode("utf-8", "ignore")
    assert BufferReader(bytearray(blob), errors="ignore").read_strings() == [want]
    assert decode(bytearray(blob), errors="ignore") == want


# ----------------------------------------------- round trips with the writer


def same_kind(got, s):
    """got is stored in the minimal PEP 393 kind for s (no UTF-8 cache on a
    fresh slice, so sizes compare storage only; 1-char strs are singletons)."""
    if len(s) < 2:
        return got == s
    return sys.getsizeof(got) == sys.getsizeof((s + "\x00\x00")[:-2])

TEXT_KINDS = {
    "ascii": st.text(st.characters(max_codepoint=0x7F), max_size=200),
    "ucs1": st.text(st.characters(max_codepoint=0xFF), max_size=200),
    "ucs2": st.text(st.characters(max_codepoint=0xFFFF, blacklist_categories=("Cs",)),
                    max_size=200),
    "ucs4": st.text(st.characters(blacklist_categories=("Cs",)), max_size=200),
}


@pytest.mark.parametrize("kind", sorted(TEXT_KINDS))
def test_roundtrip_every_kind_and_handler(kind, level):
    @given(st.lists(TEXT_KINDS[kind], max_size=10), st.sampled_from(HANDLERS))
    def check(strings, errors):
        w = BufferWriter(errors=errors)
        w.write_strings(strings)
        data = w.getvalue()
        with BufferReader(data, errors=errors) as r:
            assert r.read_strings() == strings
            assert r.remaining == 0
        assert decode_all(data, errors) == strings
        for s in strings[:2]:
            got = decode(utf8pfx.encode(s))
            assert got == s and type(got) is str
            assert same_kind(got, s)

    check()


@given(st.lists(st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)) |
                st.text(), max_size=8))
def test_surrogatepass_roundtrip_lone_surrogates(strings):
    w = BufferWriter(errors="surrogatepass")
    w.write_strings(strings)
    assert BufferReader(w.getvalue(), errors="surrogatepass").read_strings() == strings


def test_long_strings_every_kind(level):
    for s in ["a" * 100000, "é" * 70001 + "a", "日本語" * 33333, "😀ab" * 30001,
              ("x" * 31 + "é") * 3000, ("abc " * 9 + "ж") * 2000, "a" * 40 + "😀"]:
        b = utf8pfx.encode(s)
        got = decode(b)
        assert got == s
        assert same_kind(got, s)


# ------------------------------------------------------------ hostile input


def assert_error(data, exc_type, match, offset=None, **kw):
    r = BufferReader(data, **kw)
    r.position = 0
    with pytest.raises(exc_type, match=match) as ei:
        r.read_string()
    assert r.position == 0
    if offset is not None:
        assert offset_of(ei.value) == offset
    # also inside read_strings: all or nothing, position unchanged
    r2 = BufferReader(pfx(b"ok") + data, **kw)
    with pytest.raises(exc_type):
        r2.read_strings(2)
    assert r2.position == 0
    return ei.value


def assert_bad_utf8(payload, reason, offset, span):
    """One record of bad UTF-8: assert_error's checks, and CPython's
    (start, end) relative to the payload."""
    e = assert_error(pfx(payload), UnicodeDecodeError, reason, offset)
    assert (e.start, e.end) == span
    return e


def test_hostile_truncated_varint():
    assert_error(b"\x80", ValueError, r"truncated varint at offset 0", 0)
    assert_error(b"\xff\xff\xff", ValueError, r"truncated varint at offset 0", 0)


def test_hostile_empty_data_expected_prefix():
    assert_error(b"", ValueError, r"expected a varint length prefix at offset 0", 0)


def test_hostile_varint_longer_than_10_bytes():
    assert_error(b"\x80" * 11 + b"\x00", ValueError, r"longer than 10 bytes", 0)
    assert_error(b"\xff" * 10, ValueError, r"longer than 10 bytes", 0)


def test_hostile_varint_above_2_64():
    assert_error(b"\xff" * 9 + b"\x02", ValueError, r"exceeds 2\*\*64 - 1", 0)
    r = BufferReader(b"\xff" * 9 + b"\x01")
    assert r.read_vint() == 2**64 - 1


def test_hostile_length_beyond_data_no_allocation():
    data = b"\x80" * 8 + b"\x10" + b"x"  # 2**60 in a 10-byte buffer
    assert len(data) == 10
    tracemalloc.start()
    try:
        for _ in range(3):
            with pytest.raises(ValueError, match=r"length 1152921504606846976.*past the end"):
                decode(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024
    assert_error(b"\x05abc", ValueError, r"string length 5 \(prefix at offset 0\)", 0)


def test_hostile_overlong_utf8():
    assert_bad_utf8(b"\xc0\xaf", "invalid start byte", 1, (0, 1))
    assert_bad_utf8(b"\xe0\x80\xaf", "invalid continuation", 1, (0, 1))
    assert_bad_utf8(b"\xf0\x80\x80\xaf", "invalid continuation", 1, (0, 1))


def test_hostile_encoded_surrogates_strict():
    e = assert_bad_utf8(b"ab\xed\xa0\x80", "invalid continuation", 3, (2, 3))
    assert e.reason == "invalid continuation byte"
    assert decode(pfx(b"ab\xed\xa0\x80"), "surrogatepass") == "ab\ud800"


def test_hostile_above_u10ffff():
    assert_bad_utf8(b"\xf4\x90\x80\x80", "invalid continuation", 1, (0, 1))
    assert_bad_utf8(b"\xf5\x80\x80\x80", "invalid start byte", 1, (0, 1))


def test_hostile_truncated_sequence():
    assert_bad_utf8(b"a\xf0\x9f\x98", "unexpected end of data", 2, (1, 4))
    assert_bad_utf8(b"\xe6\x97", "unexpected end of data", 1, (0, 2))


def test_hostile_stray_continuation():
    assert_bad_utf8(b"abc\x80def", "invalid start byte", 4, (3, 4))


def test_decode_error_carries_offsets_and_cpython_fields():
    data = pfx(b"first") + pfx(b"x" * 40 + b"\xff")
    with pytest.raises(UnicodeDecodeError) as ei:
        decode_all(data)
    e = ei.value
    ref = None
    try:
        (b"x" * 40 + b"\xff").decode("utf-8")
    except UnicodeDecodeError as r:
        ref = r
    assert type(e) is UnicodeDecodeError
    assert (e.encoding, e.object, e.start, e.end, e.reason) == (
        ref.encoding, ref.object, ref.start, ref.end, ref.reason)
    assert str(e) == str(ref)
    assert e.payload_offset == 7 and e.data_offset == 47
    if sys.version_info >= (3, 11):
        assert any("offset 47" in n for n in e.__notes__)


def test_non_minimal_varint_accepted_unless_strict_vint():
    assert decode(b"\x80\x00") == ""
    assert decode(b"\x82\x80\x00ab") == "ab"
    assert BufferReader(b"\x81\x00").read_vint() == 1
    assert_error(b"\x80\x00", ValueError, r"non-minimal varint at offset 0", 0, strict_vint=True)
    r = BufferReader(b"\x81\x00", strict_vint=True)
    with pytest.raises(ValueError, match="non-minimal"):
        r.read_vint()
    assert r.position == 0
    assert BufferReader(b"\x80\x01", strict_vint=True).read_vint() == 128


def test_read_strings_all_or_nothing_on_utf8_error():
    data = pfx(b"a") + pfx(b"b") + pfx(b"\xff")
    r = BufferReader(data)
    with pytest.raises(UnicodeDecodeError):
        r.read_strings()
    assert r.position == 0
    assert r.read_strings(2) == ["a", "b"]
    with pytest.raises(ValueError, match="found the end of the data"):
        BufferReader(pfx(b"a") + pfx(b"b")).read_strings(5)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 63, 64, 127, 128, 300, 16383, 16384])
def test_length_one_byte_past_the_data_is_an_error(n):
    """A prefix that claims one byte more than the data holds is an error at
    the prefix's offset, for every read that takes a length (the byte after
    a bytes object's end is its hidden NUL: reading it would go unnoticed)."""
    for lead in (b"", b"\x01z"):
        blob = lead + vint(n + 1) + b"x" * n
        r = BufferReader(blob)
        if lead:
            assert r.read_string() == "z"
        at = len(lead)
        for call in (r.read_string, r.read_bytes, r.skip_string, r.read_strings,
                     lambda: r.read_strings(1), lambda: list(r)):
            with pytest.raises(ValueError, match="offset %d" % at):
                call()
            assert r.position == at
        with pytest.raises(ValueError, match="offset %d" % at):
            utf8pfx.decode_all(blob)
        # and exactly the data's length is fine
        ok = lead + vint(n) + b"x" * n
        assert utf8pfx.decode_all(ok)[-1] == "x" * n



# ------------------------------------------ error handlers meet surrogates

# UTF-8-encoded surrogates (ED A0..BF xx), alone, in runs, truncated, in
# long payloads (past the SIMD block sizes), next to valid text
SURROGATE_PAYLOADS = [
    b"\xed\xa0\x80", b"\xed\xbf\xbf", b"a\xed\xb2\x80b", b"\xed\xa0\x80\xed\xb0\x80",
    b"\xed\xa0", b"\xed", b"x" * 40 + b"\xed\xb3\xbf" + "\u00e9\u20ac".encode() * 20,
    "\U0001F600".encode() * 10 + b"\xed\x9f\xbf\xed\xa0\x80",  # U+D7FF then U+D800
    b"\xed\xa0\x80" * 30,
]


# (utf8pfx-test-span: one of support.reference's handlers, registered at its import)
READ_HANDLERS = ["strict", "replace", "ignore", "surrogateescape", "surrogatepass",
                 "backslashreplace", "utf8pfx-test-span"]


def _cpython(payload, errors):
    try:
        return ("ok", payload.decode("utf-8", errors))
    except UnicodeDecodeError as e:
        return ("err", e.start, e.end, e.reason)


def _ours(blob, errors, level=None):
    try:
        return ("ok", utf8pfx.decode(blob, errors))
    except UnicodeDecodeError as e:
        return ("err", e.start, e.end, e.reason)


@pytest.mark.parametrize("errors", READ_HANDLERS)
def test_reader_handlers_meet_surrogates(errors):
    for p in SURROGATE_PAYLOADS:
        want = _cpython(p, errors)
        assert _ours(vint(len(p)) + p, errors) == want, (p, errors)
        r = BufferReader(b"\x01z" + vint(len(p)) + p, errors=errors)
        assert r.read_string() == "z"
        if want[0] == "ok":
            assert r.read_strings() == [want[1]] and r.remaining == 0
        else:
            with pytest.raises(UnicodeDecodeError) as ei:
                r.read_strings()
            assert ei.value.data_offset == 2 + vint_size(len(p)) + want[1]
            assert r.position == 2


def test_surrogatepass_and_surrogateescape_round_trip():
    for s in ["\ud800", "a\udfffb", "\udc80\udcff", "\ud83d\ude00"]:
        for errors in ("surrogatepass", "surrogateescape"):
            try:
                blob = ref_encode(s, errors)
            except UnicodeEncodeError:
                continue
            assert utf8pfx.decode(blob, errors) == blob[vint_size(len(blob) - 1):].decode(
                "utf-8", errors)



# --------------------------------------------------------------- the API


def test_reads_every_buffer_type():
    payload = pfx("héllo".encode()) + pfx(b"w")
    w = BufferWriter()
    w.write_strings(["héllo", "w"])
    with mmap.mmap(-1, len(payload)) as mm:
        mm[:] = payload
        for obj in (payload, bytearray(payload), memoryview(payload), mm, w):
            with BufferReader(obj) as r:
                assert list(r) == ["héllo", "w"]
    assert decode_all(memoryview(b"zz" + payload)[2:]) == ["héllo", "w"]


def test_closed_reader_raises_valueerror():
    r = BufferReader(pfx(b"a"))
    r.close()
    r.close()  # idempotent
    for op in (r.read_string, r.read_strings, r.read_vint, r.read_bytes, r.skip_string,
               lambda: r.read_raw(0), lambda: r.position, lambda: r.remaining,
               lambda: next(iter(r)), r.__enter__):
        with pytest.raises(ValueError, match="closed"):
            op()
    with pytest.raises(ValueError):
        r.position = 0
    assert "closed" in repr(r)


def test_position_and_remaining():
    data = pfx(b"ab") + pfx(b"cd")
    r = BufferReader(data)
    assert (r.position, r.remaining) == (0, 6)
    r.position = 3
    assert r.read_string() == "cd" and r.remaining == 0
    for bad in (-1, 7, 2**70):
        with pytest.raises((ValueError, OverflowError)):
            r.position = bad
        assert r.position == 6
    r.position = 6
    with pytest.raises(TypeError):
        r.position = "1"


def test_read_vint_bytes_raw_skip():
    w = BufferWriter()
    w.write_vint(300)
    w.write_bytes(b"\xff\x00")
    w.write_string("skip me")
    w.write_raw(b"RAW")
    w.write_string("end")
    r = BufferReader(w.getvalue())
    assert r.read_vint() == 300
    assert r.read_bytes() == b"\xff\x00"
    assert r.skip_string() is None
    assert r.read_raw(3) == b"RAW"
    with pytest.raises(ValueError, match="read_raw"):
        r.read_raw(100)
    with pytest.raises(ValueError):
        r.read_raw(-1)
    assert r.read_string() == "end"
    assert r.read_raw(0) == b""
    with pytest.raises(ValueError, match="end of the data"):
        r.read_vint()


def test_skip_string_does_not_validate_utf8_but_checks_length():
    r = BufferReader(pfx(b"\xff\xfe") + b"\x09")
    r.skip_string()
    assert r.position == 3
    with pytest.raises(ValueError, match="past the end"):
        r.skip_string()
    assert r.position == 3


def test_iteration_and_read_strings_counts():
    strings = ["", "a", "é", "日本", "😀"] * 5
    w = BufferWriter()
    w.write_strings(strings)
    data = w.getvalue()
    assert list(BufferReader(data)) == strings
    r = BufferReader(data)
    assert r.read_strings(3) == strings[:3]
    assert r.read_strings(0) == []
    assert r.read_strings(n=-1) == strings[3:]
    assert r.read_strings() == []
    with pytest.raises(ValueError):
        r.read_strings(-2)
    with pytest.raises(TypeError):
        r.read_strings(1, 2)


def test_errors_argument_validation():
    with pytest.raises(LookupError):
        BufferReader(b"", errors="no-such-handler")
    with pytest.raises(LookupError):
        decode(b"\x00", "no-such-handler")
    with pytest.raises(TypeError):
        BufferReader(b"", errors=1)
    with pytest.raises(TypeError):
        BufferReader("not a buffer")
    with pytest.raises(TypeError):
        BufferReader(b"", "strict")  # errors is keyword-only
    assert decode(pfx(b"a\xffb"), errors="replace") == "a\ufffdb"
    r = BufferReader(b"", errors="ignore", strict_vint=True)
    assert (r.errors, r.strict_vint) == ("ignore", True)


def test_custom_decode_error_handler():
    def handler(exc):
        return ("<%d-%d>" % (exc.start, exc.end), exc.end)

    codecs.register_error("utf8pfx-test-mark", handler)
    data = pfx(b"a\xffb\xc3")
    assert decode(data, "utf8pfx-test-mark") == data[1:].decode("utf-8", "utf8pfx-test-mark")


def test_error_handler_cannot_close_the_reader_mid_read():
    box = {}

    def handler(exc):
        with pytest.raises(ValueError, match="while one of its reads"):
            box["r"].close()
        return ("?", exc.end)

    codecs.register_error("utf8pfx-test-close", handler)
    ba = bytearray(pfx(b"a\xffb"))
    r = box["r"] = BufferReader(ba, errors="utf8pfx-test-close")
    assert r.read_string() == "a?b"
    r.close()


def test_error_handler_that_walks_the_collectors_objects_finds_no_half_filled_list():
    """A list of records is filled while an error handler may run Python
    code: code that reaches it through gc.get_objects() must not find its
    empty slots (copying the list would read them)."""
    import gc
    import io

    calls = [0]

    def handler(exc):
        for o in gc.get_objects():
            if type(o) is list:
                o[:]
        calls[0] += 1
        return ("?", exc.end)

    codecs.register_error("utf8pfx-test-gc-walk", handler)
    w = BufferWriter()
    w.write_strings(["ok%d" % i for i in range(50)])
    w.write_bytes(b"\xffbad")
    w.write_strings(["ok%d" % i for i in range(50)])
    blob = w.getvalue()
    want = ["ok%d" % i for i in range(50)] + ["?bad"] + ["ok%d" % i for i in range(50)]
    eh = "utf8pfx-test-gc-walk"
    assert BufferReader(blob, errors=eh).read_strings(101) == want
    assert BufferReader(blob, errors=eh).read_strings() == want
    assert decode_all(blob, errors=eh) == want
    assert [x for b in BufferReader(blob, errors=eh).batches(64) for x in b] == want
    stream = utf8pfx.StreamReader(io.BytesIO(blob), errors=eh, read_size=100)
    assert stream.read_strings() == want
    assert calls[0] == 5


def test_reader_subclass_and_repr():
    class R(BufferReader):
        pass

    r = R(pfx(b"x"))
    assert r.read_string() == "x"
    assert repr(r).startswith("<")


def test_reader_names_exported_by_the_package():
    assert {"BufferReader", "decode", "decode_all"} <= set(utf8pfx.__all__)


def test_short_ascii_payloads_at_every_length_offset_and_byte():
    """Payloads of up to 32 bytes past the buffer's first 16 are checked for
    ASCII and copied with no branch on the length class (reading the bytes
    before the payload, rewriting the new str's header bytes before its
    characters): every length 0..40 after heads of 0..20 bytes of non-ASCII
    junk, all ASCII and with one byte >= 0x80 at each position; the strs
    come back equal, ASCII-flagged, hashing as the same str, and a payload
    with a non-ASCII byte is never taken as ASCII."""
    for n in range(41):
        text = "".join(chr(0x21 + (i * 5) % 94) for i in range(n))
        payload = text.encode()
        for head in range(21):
            junk = bytes(0x80 | (i * 37 % 128) for i in range(head))
            blob = junk + bytes([n]) + payload + b"\xff" * 3
            got = _read_at(blob, head)
            assert got == text and got.isascii() and hash(got) == hash(text), (n, head)
        for at in range(n):
            bad = bytearray(payload)
            bad[at] = 0xC3 if at + 1 < n else 0xE9  # a lead, or a Latin-1 byte alone
            if at + 1 < n:
                bad[at + 1] = 0xA9
            for head in (0, 5, 16, 20):
                blob = b"x" * head + bytes([n]) + bytes(bad)
                try:
                    got = _read_at(blob, head)
                except UnicodeDecodeError:
                    assert at + 1 == n  # the lone 0xE9 at the end
                    continue
                assert got == bytes(bad).decode() and not got.isascii(), (n, at, head)


def _read_at(blob, head):
    """The string whose record starts at offset head of blob (the record's
    own offset, so that the bytes before it are readable)."""
    r = BufferReader(blob)
    if head:
        r.read_raw(head)
    got = r.read_string()
    # read_strings takes the same path: the record again, in a batch
    assert BufferReader(blob[head:head + 1 + blob[head]] * 3).read_strings()[1:] == [got] * 2
    return got


def test_read_strings_n_past_the_records_is_the_end_of_data_error_not_memory():
    """A count far past what the data holds is the truncation error at the
    end, after the records that are there decoded: the list is sized by the
    data, never by the count asked for."""
    blob = pfx(b"a") + pfx("é".encode())
    for n in (3, 1 << 40, sys.maxsize):
        r = BufferReader(blob)
        with pytest.raises(ValueError, match="offset 5.*found the end of the data") as ei:
            r.read_strings(n)
        assert ei.value.record_index == 2 and r.position == 0
    assert BufferReader(blob).read_strings(2) == ["a", "é"]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 64])
def test_batches_last_batch_is_a_whole_list(n):
    """Every batch but the last holds n records; the last, shorter one is an
    ordinary list (it grows, shrinks and compares as one)."""
    strings = ["a", "é", None, "日本", "😀", ""] * 3
    w = BufferWriter(prefix="varint+1")
    w.write_strings(strings)
    got = list(BufferReader(w.getvalue(), prefix="varint+1").batches(n))
    assert [len(b) for b in got[:-1]] == [n] * (len(got) - 1)
    assert 1 <= len(got[-1]) <= n and sum(got, []) == strings
    last = got[-1]
    last.append("x")
    last.extend(["y"] * 70)
    assert last[len(last) - 71:] == ["x"] + ["y"] * 70
    del last[-71:]
    assert last == strings[len(strings) - len(last):]


def test_batches_all_or_nothing():
    w = BufferWriter(prefix="varint+1")
    w.write_strings(["a", None, "bc", "d", "e"])
    blob = w.getvalue()
    r = BufferReader(blob, prefix="varint+1")
    assert list(r.batches(2)) == [["a", None], ["bc", "d"], ["e"]]
    assert r.position == len(blob)
    r.position = 0
    assert list(r.batches(4, raw=True)) == [[b"a", None, b"bc", b"d"], [b"e"]]
    r = BufferReader(b"\x01a\x01b\x01c\x05xy")
    it = r.batches(2)
    assert next(it) == ["a", "b"]
    with pytest.raises(ValueError, match="runs past the end of the data"):
        next(it)
    assert r.position == 4  # the failed batch moved nothing
    r = BufferReader(b"\x01a\x02\xff\xfe\x05x")  # the first error in data order
    with pytest.raises(UnicodeDecodeError):
        next(r.batches(3))
    with pytest.raises(ValueError, match="n must be >= 1"):
        r.batches(0)
    r.close()
    with pytest.raises(ValueError, match="closed"):
        r.batches()


def every_256th(n):
    return [1 if i % 256 == 0 else 0 for i in range(n)]


@pytest.mark.parametrize("raw", [False, True])
def test_batches_hold_every_256th_item_of_the_last_batch_only(raw):
    """The iterator keeps the first small object of every 256 of the batch
    it returned last (here every 256th: all are small), so that a caller who
    drops each batch before asking for the next does not have its memory
    unmapped and mapped again; it lets them go when it returns the next
    batch, and holds nothing once it ends, fails or goes."""
    w = BufferWriter()
    w.write_strings(["r%05d" % i for i in range(1000)])
    blob = w.getvalue()
    it = BufferReader(blob).batches(600, raw=raw)
    b1 = next(it)
    assert held_by_others(b1) == every_256th(600)
    b2 = next(it)
    assert held_by_others(b1) == [0] * 600 and held_by_others(b2) == every_256th(400)
    with pytest.raises(StopIteration):
        next(it)
    assert held_by_others(b2) == [0] * 400
    it = BufferReader(blob).batches(300, raw=raw)
    b1 = next(it)
    del it
    assert held_by_others(b1) == [0] * 300
    it = BufferReader(blob + b"\x05ab").batches(500, raw=raw)
    next(it)
    b2 = next(it)
    with pytest.raises(ValueError, match="runs past the end of the data"):
        next(it)
    assert held_by_others(b2) == [0] * 500


@pytest.mark.parametrize("raw", [False, True])
def test_batches_hold_no_large_item(raw):
    """What a batch iterator holds is small objects only, the first of each
    256: a large record (memory of its own) is never kept from the caller."""
    xs = ["\u0100" * 300 if i < 260 or i % 256 == 0 else "r%05d" % i for i in range(1000)]
    w = BufferWriter()
    w.write_strings(xs)
    it = BufferReader(w.getvalue()).batches(1000, raw=raw)
    b = next(it)
    assert held_by_others(b) == [1 if i in (260, 513, 769) else 0 for i in range(1000)]


# Records for the record_index checks: valid strings, invalid UTF-8
# payloads, and a tail whose declared length runs past the data.
_record = st.one_of(
    st.text(max_size=6).map(lambda s: ("ok", s.encode("utf-8", "surrogatepass"))),
    st.sampled_from([b"\xff", b"a\xc3", b"\xed\xa0\x80", b"xy\x80z"]).map(lambda b: ("bad", b)),
)


def _first_failure(records, truncated):
    """Where the reader must stop: (index, prefix offset, payload offset, kind)."""
    off = 0
    for i, (kind, payload) in enumerate(records):
        if kind == "bad":
            return i, off, off + len(pfx(payload)) - len(payload), UnicodeDecodeError
        off += len(pfx(payload))
    return (len(records), off, None, ValueError) if truncated else None


@given(st.lists(_record, max_size=8), st.booleans(), st.integers(0, 8), st.data())
def test_errors_name_the_record_index_from_where_reading_started(records, truncated, skip,
                                                                 data):
    blob = b"".join(pfx(p) for _, p in records) + (b"\x05ab" if truncated else b"")
    fail = _first_failure(records, truncated)
    if fail is None:
        assert decode_all(blob) == [p.decode("utf-8", "surrogatepass") for _, p in records]
        return
    index, at, payload_at, exc = fail

    def check(e, base=0):
        assert type(e) is exc
        assert e.record_index == index - base
        if exc is ValueError:
            assert e.data_offset == at
            assert str(e).endswith("(record index %d)" % (index - base))
        else:
            assert e.payload_offset == payload_at and e.data_offset == payload_at + e.start

    for call in (decode_all, lambda b: BufferReader(b).read_strings(),
                 lambda b: BufferReader(b).read_strings(index + data.draw(st.integers(1, 3))),
                 lambda b: list(BufferReader(b).batches(data.draw(st.integers(1, 4)))),
                 lambda b: BufferReader(b).read_strings_arrow(), utf8pfx.decode_arrow):
        with pytest.raises(exc) as ei:
            call(blob)
        check(ei.value)
    # one by one, then the rest: the index counts from the reader's start
    k = min(skip, index)
    r = BufferReader(blob)
    for _ in range(k):
        r.skip_string() if k % 2 else r.read_string()
    with pytest.raises(exc) as ei:
        r.read_strings()
    check(ei.value)
    with pytest.raises(exc) as ei:
        list(r)
    check(ei.value)
    # an assigned position restarts the count
    r.position = sum(len(pfx(p)) for _, p in records[:k])
    with pytest.raises(exc) as ei:
        r.read_strings()
    check(ei.value, base=k)


def test_a_handlers_valueerror_names_its_record_and_keeps_its_own_as_cause():
    def refuse(e):
        raise ValueError("refused by the handler")

    codecs.register_error("utf8pfx-test-refuse", refuse)
    blob = pfx(b"a") + pfx(b"b") + pfx(b"\xff")
    with pytest.raises(ValueError) as ei:
        BufferReader(blob, errors="utf8pfx-test-refuse").read_strings()
    e = ei.value
    assert (e.record_index, e.data_offset) == (2, 4)
    assert str(e) == "refused by the handler (record index 2)"
    assert type(e.__cause__) is ValueError and str(e.__cause__) == "refused by the handler"
