"""Kernel selection: UTF8PFX_ISA caps the level at import; isa() reports it;
_set_isa switches it.  The writer's short path and write_string have a
second build for AVX-512 VBMI2, chosen with the kernel level (the bytes
either build writes: test_writer.py)."""
import os
import sys

import pytest

import utf8pfx
from utf8pfx import _core
from utf8pfx._peers import cpuinfo_field
from support.reference import ref_encode
from support.subproc import run_python

ORDER = ["scalar", "sse", "avx2", "avx512"]


def isa_under(value):
    code = "import utf8pfx, utf8pfx._core as c; print(utf8pfx.isa(), c._decode_isa())"
    return run_python(["-c", code], env={"UTF8PFX_ISA": value}, text=True)


def test_default_is_the_best_available_level():
    levels = _core._isa_levels()
    assert levels[0] == "scalar"
    r = isa_under("")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[0] == levels[-1]


@pytest.mark.parametrize("cap", ORDER)
def test_cap_selects_the_best_level_at_or_below(cap):
    levels = _core._isa_levels()
    r = isa_under(cap)
    assert r.returncode == 0, r.stderr
    enc, dec = r.stdout.split()
    expect = [lvl for lvl in levels if lvl in ORDER and ORDER.index(lvl) <= ORDER.index(cap)][-1]
    assert enc == expect
    assert ORDER.index(dec) <= ORDER.index(cap)


def test_unknown_cap_fails_the_import_with_a_clear_message():
    r = isa_under("avx9000")
    assert r.returncode != 0
    assert "UTF8PFX_ISA=avx9000" in r.stderr and "scalar" in r.stderr


def test_set_isa_switches_and_restores():
    prev = _core._set_isa("scalar")
    try:
        assert utf8pfx.isa() == "scalar"
        assert utf8pfx.encode("héllo") == b"\x06h\xc3\xa9llo"
    finally:
        _core._set_isa(prev)
    assert utf8pfx.isa() == prev
    with pytest.raises(ValueError, match="not available"):
        _core._set_isa("no-such-level")
    with pytest.raises(TypeError):
        _core._set_isa(1)


# -- the VBMI2 builds of the short path and of write_string -------------------

def _cpu_flags():
    """The CPU's feature flags from /proc/cpuinfo (Linux), or None."""
    flags = cpuinfo_field("flags")
    return None if flags is None else set(flags.split())


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


# -- every encoder table, by cpuid -----------------------------------------------

def _avx512_tables_follow_cpuid(tables, levels, intel_table, every):
    """The checks both kinds of table share: scalar first, one table per
    level below avx512, and the avx512 level's first table by cpuid's
    vendor (intel_table on GenuineIntel, the mixed one elsewhere) with
    `every` listed where the CPU has VBMI2.  Returns the avx512 tables, or
    None where the CPU does not say what it is."""
    assert tables[0] == "scalar" and len(set(tables)) == len(tables)
    assert [t for t in tables if not t.startswith("avx512")] == [
        lvl for lvl in levels if lvl != "avx512"]
    flags, vendor = _cpu_flags(), cpuinfo_field("vendor_id")
    top = [t for t in tables if t.startswith("avx512")]
    if flags is None or vendor is None or not top:
        return None  # the rule is checked where the CPU says what it is
    if not {"avx512cd", "avx512vbmi", "avx512_vbmi2"} <= flags:
        assert top == ["avx512-bw"]
    else:
        assert top[0] == (intel_table if vendor == "GenuineIntel" else "avx512-mixed")
        assert every <= set(top)
    return top


def test_the_table_in_use_follows_what_cpuid_says_the_cpu_is():
    """The avx512 level's table on a CPU with VBMI2 is chosen by vendor
    (never by timing): the Intel table on GenuineIntel, the mixed one
    elsewhere.  Each level's table in use is the first _kernel_tables lists
    for it; both vendors' tables, the all-VBMI2 and the F+BW one run here
    too."""
    _avx512_tables_follow_cpuid(
        _core._kernel_tables(), _core._isa_levels(), "avx512-intel",
        {"avx512-intel", "avx512-mixed", "avx512-vbmi2", "avx512-bw"})


def _table_strings():
    """Lengths around every step and block size the encoders have (32, 64,
    96, 128 units, whole vectors stored into exact room), of every storage
    kind, with lone surrogates at the edges of blocks."""
    kinds = {
        "ascii": "abcdefghij klmnop",
        "latin1": "aé ÿ Grüße àçø",
        "mostly_ascii_latin1": "plain ascii text with one é",
        "cyrillic": "привет мир ёлка ",
        "cjk": "東京都の日本語テキスト",
        "mixed2": "aé中ж ",
        "emoji": "a😀 b🎉 ",
    }
    out = []
    for text in kinds.values():
        for n in (1, 5, 31, 32, 33, 63, 64, 65, 95, 96, 97, 127, 128, 129, 191, 200, 320, 1000, 5000):
            s = (text * (n // len(text) + 1))[:n]
            out.append(s)
            if not s.isascii() and max(s) > "\xff":
                for at in (0, 31, 32, 63, 64, 95, n - 1):
                    if at < n:
                        out.append(s[:at] + "\ud800" + s[at + 1:])
    return out


def test_every_kernel_table_writes_cpythons_bytes():
    """_set_isa forces each table this CPU runs (the C harnesses run
    every table, emulated ones included): each writes CPython's bytes under
    every in-C error handler."""
    strings = _table_strings()
    handlers = ("strict", "surrogatepass", "surrogateescape", "replace", "ignore")
    want = {}
    for s in strings:
        for h in handlers:
            try:
                want[s, h] = ref_encode(s, h)
            except UnicodeEncodeError:
                want[s, h] = None
    prev = _core._set_isa("scalar")
    try:
        for table in _core._kernel_tables():
            _core._set_isa(table)
            for (s, h), w in want.items():
                if w is None:
                    with pytest.raises(UnicodeEncodeError):
                        utf8pfx.encode(s, h)
                    continue
                assert utf8pfx.encode(s, h) == w, (table, h, len(s), s[:20])
                assert utf8pfx.utf8_length(s, h) == len(s.encode("utf-8", h)), (table, h, len(s))
            bw = utf8pfx.BufferWriter()
            ok = [s for s in strings if want[s, "strict"] is not None]
            bw.write_strings(ok)
            assert bw.getvalue() == b"".join(want[s, "strict"] for s in ok), table
    finally:
        _core._set_isa(prev)
    assert utf8pfx.isa() == prev


# -- every decode table, by cpuid ------------------------------------------------

def test_the_decode_table_in_use_follows_what_cpuid_says_the_cpu_is():
    """As the encoders: with VBMI2 the avx512 level's decode table is the
    all-VBMI2 one on GenuineIntel and the mixed one (AVX2's short decoder)
    elsewhere, and _decode_kernel_tables lists it first for its level."""
    top = _avx512_tables_follow_cpuid(
        _core._decode_kernel_tables(), _core._decode_isa_levels(), "avx512-vbmi2",
        {"avx512-vbmi2", "avx512-mixed", "avx512-bw"})
    if not top:
        return
    prev = _core._set_decode_isa("avx512")
    try:
        assert _core._set_decode_isa("scalar") == top[0]
    finally:
        _core._set_decode_isa(prev)


def _decode_cases():
    """Payloads around the short decoders' sizes (6 to 64 bytes, one and two
    vectors of masks; to 128, the wide form) and the long paths', in every
    script class, 4-byte sequences among ASCII and among 2- and 3-byte ones;
    and broken ones, short and in the wide form's range."""
    texts = ["plain ascii words", "Grüße aus Köln à bientôt", "ÿé", "привет мир",
             "Ελληνικά γράμματα", "東京都の日本語", "a😀 b🎉", "ж😀中é", "नमस्ते दुनिया"]
    good = []
    for text in texts:
        for n in (1, 3, 5, 6, 7, 11, 16, 21, 31, 32, 33, 40, 63, 64, 65, 100, 127, 128, 300):
            good.append((text * (n // len(text) + 1))[:n])
    bad = [b"abc\xff", b"\xc3", b"\xe6\x97", b"\xf0\x9f\x98", b"\xed\xa0\x80xyz",
           b"\xc0\xafabcdefg", b"\xf4\x90\x80\x80abcd", b"caf\xc3\xa9\x80 long tail ok",
           "日本".encode() + b"\x80" + b"x" * 70,
           "Ж".encode() * 40 + b"\xed\xa0\x80", "Ж".encode() * 30 + b"\xe0\x80\x80" + b"z" * 10,
           "中".encode() * 25 + b"\xf0\x90\x80" + b"q" * 20, "é".encode() * 50 + b"\xc1\xbf"]
    return good, bad


def test_every_decode_table_reads_cpythons_strings():
    """_set_decode_isa forces each decode table this CPU runs: every one
    reads back what CPython encodes, and refuses what CPython refuses with
    the same error bounds (strict), or decodes it as CPython's codec does
    under another handler."""
    good, bad = _decode_cases()
    w = utf8pfx.BufferWriter()
    w.write_strings(good)
    blob = w.getvalue()
    prev = _core._set_decode_isa("scalar")
    try:
        for table in _core._decode_kernel_tables():
            _core._set_decode_isa(table)
            assert utf8pfx.decode_all(blob) == good, table
            assert list(utf8pfx.BufferReader(blob)) == good, table
            for payload in bad:
                rec = bytes([len(payload)]) + payload
                with pytest.raises(UnicodeDecodeError) as want:
                    payload.decode("utf-8")
                # alone, then with a record after it (the vector decoders
                # may load past a payload when the buffer goes on)
                for blob_bad in (rec, rec + b"\x7f" + b"y" * 127):
                    with pytest.raises(UnicodeDecodeError) as got:
                        utf8pfx.decode_all(blob_bad)
                    assert (got.value.start, got.value.end, got.value.reason) == (
                        want.value.start, want.value.end, want.value.reason), (table, payload)
                assert utf8pfx.decode(rec, "replace") == payload.decode("utf-8", "replace"), (
                    table, payload)
    finally:
        _core._set_decode_isa(prev)
