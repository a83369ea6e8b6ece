"""Every code example in README.md runs, and shows what it claims.

Fenced blocks marked ```pycon (or ```python with ">>>" prompts) are doctests:
each output line must match what the example prints.  Other ```python
blocks are executed and must not raise.  ```console blocks are shell
sessions: each "$ " command runs in bash (with ``utf8pfx`` the command line
of the package under test) and what it prints, standard output and error,
must be the lines that follow it.  A wrong example fails here, so it fails
CI.  Each block runs in a fresh temporary folder.
"""
import doctest
import os
import re
import shutil
import subprocess
import sys

import pytest
from subproc import PACKAGE_PARENT

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
# the optional packages an example may need (none of them a dependency)
OPTIONAL = {"pyarrow", "polars", "nanoarrow", "pandas", "dask", "distributed"}
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)


def blocks():
    if not os.path.exists(README):
        return []
    with open(README, encoding="utf-8") as f:
        text = f.read()
    found = []
    for m in FENCE.finditer(text):
        lang, body = m.group(1), m.group(2)
        if lang in ("python", "pycon", "console"):
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
    if lang == "console":
        run_console(body, tmp_path)
    elif ">>>" in body:
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
        code = compile(body, f"README.md:{line}", "exec")
        try:
            exec(code, {"__name__": "readme"})
        except ModuleNotFoundError as e:
            # examples of the optional integrations (Arrow, Dask) run where
            # those are installed: CI's .ci/steps/70-arrow.sh runs this file too
            if e.name not in OPTIONAL:
                raise
            pytest.skip(f"README.md:{line} needs {e.name}, which is not installed")


def test_a_wrong_example_would_fail():
    # the checker itself: an example whose shown output is wrong must fail
    body = ">>> 1 + 1\n3\n"
    test = doctest.DocTestParser().get_doctest(body, {}, "wrong", None, 0)
    runner = doctest.DocTestRunner()
    runner.run(test, out=lambda s: None)
    assert runner.failures == 1


def run_console(body, folder):
    if shutil.which("bash") is None or os.name == "nt":
        pytest.skip("console examples need bash")
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "utf8pfx"
    tool.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m utf8pfx "$@"\n')
    tool.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONPATH=PACKAGE_PARENT, LC_ALL="C.UTF-8")
    steps = []
    for line in body.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            assert steps, f"output before any command: {line!r}"
            steps[-1][1].append(line)
    for command, expected in steps:
        r = subprocess.run(["bash", "-c", command], cwd=folder, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        got = [x.rstrip() for x in r.stdout.decode("utf-8", "replace").splitlines()]
        assert got == [x.rstrip() for x in expected], (command, got)


def test_a_wrong_console_example_would_fail(tmp_path):
    with pytest.raises(AssertionError):
        run_console("$ echo one\ntwo\n", tmp_path)
