"""Kernel selection: UTF8PFX_ISA caps the level at import; isa() reports it."""
import pytest
from subproc import run_python

import utf8pfx
from utf8pfx import _core

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
