"""BufferReader, decode() and decode_all().

Reference for every comparison: a pure-Python reader (varint loop +
bytes.decode, tests/reference.py).  Kernel-level tests run once per decode
level the CPU has (the ``level`` fixture of conftest.py).
"""
import codecs
import gc
import mmap
import sys
import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

import utf8pfx
from utf8pfx import BufferReader, BufferWriter, decode, decode_all
from utf8pfx import _core
from reference import offset_of, ours_or_error, pfx, ref_or_error, ref_read_all

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


def test_bruteforce_3_byte_sequences():
    for a in range(0xC0, 256):
        for b in range(256):
            for c in EDGES:
                p = bytes([a, b, c])
                assert decode_payload_or_error(p) == cpython_or_error(p), p


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


# --------------------------------------------------------------- the API


def test_buffer_types():
    payload = pfx("héllo".encode()) + pfx(b"w")
    w = BufferWriter()
    w.write_strings(["héllo", "w"])
    with mmap.mmap(-1, len(payload)) as mm:
        mm[:] = payload
        for obj in (payload, bytearray(payload), memoryview(payload), mm, w):
            with BufferReader(obj) as r:
                assert list(r) == ["héllo", "w"]
    assert decode_all(memoryview(b"zz" + payload)[2:]) == ["héllo", "w"]


def test_holds_export_until_close():
    ba = bytearray(pfx(b"abc"))
    r = BufferReader(ba)
    with pytest.raises(BufferError):
        ba.extend(b"x")
    r.close()
    ba.extend(b"x")
    with BufferReader(ba) as r2:
        with pytest.raises(BufferError):
            ba.clear()
    ba.clear()
    assert r2.closed


def test_export_released_by_gc():
    class R(BufferReader):
        pass

    ba = bytearray(pfx(b"abc"))
    r = R(ba)
    r.self_ref = r  # a cycle: only the collector can free it
    del r
    gc.collect()
    ba.extend(b"x")


def test_writer_cannot_grow_while_read():
    w = BufferWriter()
    w.write_string("abc")
    r = BufferReader(w)
    with pytest.raises(BufferError):
        w.write_string("x" * 100000)
    r.close()
    w.write_string("x")


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


def test_decode_trailing_bytes_is_an_error():
    with pytest.raises(ValueError, match=r"trailing data.*offset 4"):
        decode(pfx(b"abc") + b"\x00")
    assert decode(pfx(b"abc")) == "abc"
    assert decode_all(b"") == []


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


def test_custom_error_handler():
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


def test_subclass_and_repr():
    class R(BufferReader):
        pass

    r = R(pfx(b"x"))
    assert r.read_string() == "x"
    assert repr(r).startswith("<")


def test_exports_in_package():
    assert {"BufferReader", "decode", "decode_all"} <= set(utf8pfx.__all__)


def test_no_leak_in_read_loop():
    w = BufferWriter()
    w.write_strings(["short", "héllo wörld", "日本語テキスト", "😀 emoji"] * 50)
    data = w.getvalue()
    bad = pfx(b"x" * 10 + b"\xff")

    def run(k):
        for _ in range(k):
            r = BufferReader(data)
            r.read_strings()
            r.close()
            try:
                decode(bad)
            except UnicodeDecodeError:
                pass
            try:
                decode(b"\x85")
            except ValueError:
                pass

    run(200)
    gc.collect()
    tracemalloc.start()
    try:
        run(500)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        run(1000)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 64 * 1024


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
