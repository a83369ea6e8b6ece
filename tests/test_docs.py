"""Every code example in the docs runs, and shows what it claims.

The docs are README.md, CONTRIBUTING.md and every docs/*.md.  Fenced blocks
marked ```pycon (or ```python with ">>>" prompts) are doctests: each output
line must match what the example prints.  Other ```python blocks are
executed and must not raise.  ```console blocks are shell sessions: each
"$ " command runs in bash (with ``utf8pfx`` the command line of the package
under test) and what it prints, standard output and error, must be the
lines that follow it.  A wrong example fails here, so it fails CI.  Each
block runs in a fresh temporary folder.  A doc that is not next to tests/
(the tests copied elsewhere, without the docs) is skipped.
"""
import doctest
import glob
import os
import re
import shutil
import subprocess
import sys

import pytest
from support.subproc import PACKAGE_PARENT

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
# the optional packages an example may need (none of them a dependency)
OPTIONAL = {"pyarrow", "polars", "nanoarrow", "pandas", "dask", "distributed"}
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.S | re.M)


def doc_files():
    """The docs that exist here, as paths relative to the repository root."""
    names = ["README.md", "CONTRIBUTING.md"]
    names += sorted(os.path.relpath(p, ROOT).replace(os.sep, "/")
                    for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))
    return [n for n in names if os.path.exists(os.path.join(ROOT, n))]


def blocks(name):
    """(lang, body, line) of each runnable block of one doc; line is where
    the block's body starts (1-based)."""
    with open(os.path.join(ROOT, name), encoding="utf-8") as f:
        text = f.read()
    found = []
    for m in FENCE.finditer(text):
        lang, body = m.group(1), m.group(2)
        if lang in ("python", "pycon", "console"):
            found.append((lang, body, text.count("\n", 0, m.start()) + 2))
    return found


def all_blocks():
    return [pytest.param(name, lang, body, line, id=f"{name}:line{line}")
            for name in doc_files() for lang, body, line in blocks(name)]


def test_readme_has_examples():
    if not os.path.exists(README):
        pytest.skip("README.md is not next to tests/ (tests copied elsewhere)")
    assert len(blocks("README.md")) >= 3


@pytest.mark.parametrize("name, lang, body, line", all_blocks())
def test_doc_example(name, lang, body, line, tmp_path, monkeypatch):
    where = f"{name}:{line}"
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    if lang == "console":
        run_console(body, tmp_path)
    elif ">>>" in body:
        parser = doctest.DocTestParser()
        test = parser.get_doctest(body, {"__name__": "readme"}, where,
                                  os.path.join(ROOT, name), line - 1)
        runner = doctest.DocTestRunner(
            optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        out = []
        runner.run(test, out=out.append)
        assert runner.failures == 0, "".join(out)
        assert runner.tries > 0
    else:
        assert lang == "python"
        code = compile(body, where, "exec")
        try:
            exec(code, {"__name__": "readme"})
        except ModuleNotFoundError as e:
            # examples of the optional integrations (Arrow, Dask) run where
            # those are installed: CI's .ci/steps/70-arrow.sh runs this file too
            if e.name not in OPTIONAL:
                raise
            pytest.skip(f"{where} needs {e.name}, which is not installed")


LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} +(.+?) *$", re.M)


def anchors(path):
    """The anchors GitHub gives the headings of a Markdown file."""
    with open(path, encoding="utf-8") as f:
        text = FENCE.sub("", f.read())
    seen, out = {}, set()
    for h in HEADING.findall(text):
        slug = re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


@pytest.mark.parametrize("name", doc_files())
def test_doc_links_resolve(name):
    # a relative link or #anchor in a doc points at a file and heading that exist
    if not (os.path.isdir(os.path.join(ROOT, "docs")) and os.path.isdir(os.path.join(ROOT, "csrc"))):
        pytest.skip("not a checkout: the docs' link targets are not all here")
    path = os.path.join(ROOT, name)
    with open(path, encoding="utf-8") as f:
        text = FENCE.sub("", f.read())
    bad = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        file, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
        if not os.path.exists(dest):
            bad.append(f"{target}: no such file")
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            bad.append(f"{target}: no such heading")
    assert not bad, f"{name}: " + "; ".join(bad)


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
