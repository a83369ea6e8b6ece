"""Cases no other test reached (found by reading the whole suite for gaps):

- legacy (not ready) str objects through write_strings' batch path (3.9-3.11);
- the one-pass path with a 2-byte prefix at its edges (UCS1 8191/8192, UCS2
  5461/5462, UCS4 4095/4096 code points), and free capacity exactly at the
  worst case and one byte under;
- the namereplace handler;
- the reader's error handlers meeting encoded surrogates;
- reserve() and __sizeof__.
"""
import sys

import pytest

import utf8pfx
from utf8pfx import BufferReader, BufferWriter
from reference import (MAX_BYTES_PER_CP, WIDE, FORCE, kind_of, legacy_str, ref_encode,
                       ref_encode_many, utf8, vint, vint_size)

# ------------------------------------------------------- legacy str, batched


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


# --------------------------------------- one pass with a 2-byte prefix: edges

# (kind, code points) on both sides of where the worst case n * max_bytes
# still has a 2-byte VInt (< 16384) and where it needs 3
EDGES = [("ucs1", 8191), ("ucs1", 8192), ("ucs2", 5461), ("ucs2", 5462),
         ("ucs4", 4095), ("ucs4", 4096), ("ascii", 16383), ("ascii", 16384)]


def _edge_variants(kind, n):
    if kind == "ascii":
        return {"ascii": "a" * n}
    return {"narrow": FORCE[kind] + "a" * (n - 1),
            "widest": WIDE[MAX_BYTES_PER_CP[kind]] * n}


@pytest.mark.parametrize("kind, n", EDGES)
def test_two_byte_prefix_one_pass_edges(kernels, kind, n):
    worst = n * MAX_BYTES_PER_CP[kind]
    pre = b"\x00pre\xff"
    for name, s in _edge_variants(kind, n).items():
        assert len(s) == n and kind_of(s) == kind
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


@pytest.mark.parametrize("kind, n", EDGES)
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


# ------------------------------------------------------------- namereplace

NAMEREPLACE_TEXTS = ["a\udcffb", "\ud800", "caf\u00e9 \udc80", "\u20ac\udfff\U0001F600",
                     "\udcff" * 50, "x" * 100 + "\ud83d"]


@pytest.mark.parametrize("s", NAMEREPLACE_TEXTS)
def test_namereplace(s):
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


# ------------------------------------------- reader handlers meet surrogates

# UTF-8-encoded surrogates (ED A0..BF xx), alone, in runs, truncated, in
# long payloads (past the SIMD block sizes), next to valid text
SURROGATE_PAYLOADS = [
    b"\xed\xa0\x80", b"\xed\xbf\xbf", b"a\xed\xb2\x80b", b"\xed\xa0\x80\xed\xb0\x80",
    b"\xed\xa0", b"\xed", b"x" * 40 + b"\xed\xb3\xbf" + "\u00e9\u20ac".encode() * 20,
    "\U0001F600".encode() * 10 + b"\xed\x9f\xbf\xed\xa0\x80",  # U+D7FF then U+D800
    b"\xed\xa0\x80" * 30,
]
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
    import reference  # noqa: F401 - registers utf8pfx-test-span
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


# ------------------------------------------------------ reserve, __sizeof__


def test_reserve():
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


# ------------------------------------- a length exactly one byte past the data


@pytest.mark.parametrize("n", [0, 1, 2, 7, 63, 64, 127, 128, 300, 16383, 16384])
def test_length_one_past_the_end(n):
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


# ------------------------------------ objects release what they hold (refs)


def test_writers_and_readers_release_what_they_hold():
    import gc
    name = "".join(["surrogate", "pass"])  # a fresh str object, not interned
    data = bytearray(b"\x01a")
    before = (sys.getrefcount(name), sys.getrefcount(data))
    for _ in range(500):
        w = BufferWriter(16, errors=name)
        w.write_string("x")
        r = BufferReader(data, errors=name)
        r.read_string()
        del w, r
    gc.collect()
    assert (sys.getrefcount(name), sys.getrefcount(data)) == before
    data.extend(b"ok")  # no export left behind
