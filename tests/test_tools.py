"""The repository's own tools keep up with the sources they read."""
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MUTATE = os.path.join(ROOT, "tools", "mutate.py")


@pytest.mark.skipif(not os.path.isfile(MUTATE) or not os.path.isdir(os.path.join(ROOT, "csrc")),
                    reason="needs the repository's tools/ and csrc/")
def test_every_mutant_applies_to_the_current_sources():
    """tools/mutate.py swaps an exact text for a deliberate bug; a text the
    sources no longer hold would leave its mutant NOT APPLIED, and the
    mutation check would prove less than README says."""
    spec = importlib.util.spec_from_file_location("utf8pfx_mutate", MUTATE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert len({m[0] for m in mod.MUTANTS}) == len(mod.MUTANTS)
    stale = []
    for mid, path, old, new, _what in mod.MUTANTS:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            n = f.read().count(old)
        if n != 1 or old == new:
            stale.append((mid, path, n))
    assert not stale, stale


REPORT = os.path.join(ROOT, "bench", "report.py")


@pytest.mark.skipif(not os.path.isfile(REPORT), reason="needs the repository's bench/")
def test_isa_check_fails_a_row_only_if_its_one_process_recheck_fails_too(monkeypatch):
    """bench --isa: a per-level row under the 0.9 allowance across processes
    fails the check only when re-timing it in one process (levels
    alternated) leaves it under the allowance too; the line names the rows
    that cleared, and without a recheck every flagged row fails."""
    monkeypatch.syspath_prepend(ROOT)
    mod = importlib.import_module("bench.report")
    comps = [("a_8", "one", "sse", 1.20), ("b_8", "batch", "avx2", 0.80),
             ("c_8", "length", "avx2", 0.70)]
    lines = []
    mod.print_isa_check(comps, ["scalar", "sse", "avx2"], out=lines.append,
                        recheck={("b_8", "batch", "avx2"): 1.01, ("c_8", "length", "avx2"): 0.85})
    assert lines[0].startswith("FAIL 2/3"), lines
    assert "c_8 length avx2 0.70x (in one process 0.85x)" in lines[0]
    assert "b_8" not in lines[0].split("failing:")[1]
    assert "b_8 batch avx2 0.80x -> 1.01x" in lines[1]
    lines.clear()
    mod.print_isa_check(comps, ["scalar", "sse", "avx2"], out=lines.append,
                        recheck={("b_8", "batch", "avx2"): 1.01, ("c_8", "length", "avx2"): 0.95})
    assert lines[0].startswith("PASS 3/3"), lines
    lines.clear()
    mod.print_isa_check(comps, ["scalar", "sse", "avx2"], out=lines.append)
    assert lines[0].startswith("FAIL 1/3") and len(lines) == 1, lines
