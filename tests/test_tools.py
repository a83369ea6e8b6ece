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
