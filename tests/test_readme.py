"""Every code example in README.md runs, and shows what it claims.

Fenced blocks marked ```pycon (or ```python with ">>>" prompts) are doctests:
each output line must match what the example prints.  Other ```python
blocks are executed and must not raise.  A wrong example fails here, so it
fails CI.  Blocks run in order in one namespace per block.
"""
import doctest
import os
import re

import pytest

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)


def blocks():
    if not os.path.exists(README):
        return []
    with open(README, encoding="utf-8") as f:
        text = f.read()
    found = []
    for m in FENCE.finditer(text):
        lang, body = m.group(1), m.group(2)
        if lang in ("python", "pycon"):
            line = text.count("\n", 0, m.start()) + 2
            found.append(pytest.param(lang, body, line, id=f"line{line}"))
    return found


def test_readme_has_examples():
    if not os.path.exists(README):
        pytest.skip("README.md is not next to tests/ (tests copied elsewhere)")
    assert len(blocks()) >= 3


@pytest.mark.parametrize("lang, body, line", blocks())
def test_readme_example(lang, body, line, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    if ">>>" in body:
        parser = doctest.DocTestParser()
        test = parser.get_doctest(body, {"__name__": "readme"}, f"README.md:{line}",
                                  README, line - 1)
        runner = doctest.DocTestRunner(
            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        out = []
        runner.run(test, out=out.append)
        assert runner.failures == 0, "".join(out)
        assert runner.tries > 0
    else:
        assert lang == "python"
        exec(compile(body, f"README.md:{line}", "exec"), {"__name__": "readme"})


def test_a_wrong_example_would_fail():
    # the checker itself: an example whose shown output is wrong must fail
    body = ">>> 1 + 1\n3\n"
    test = doctest.DocTestParser().get_doctest(body, {}, "wrong", None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test, out=lambda s: None)
    assert runner.failures == 1
