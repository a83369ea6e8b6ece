"""The repository's own tools keep up with the sources they read."""
import importlib.util
import os
import sys

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


@pytest.mark.skipif(not os.path.isfile(MUTATE), reason="needs the repository's tools/")
@pytest.mark.parametrize("code, out, err, outcome", [
    (1, "", "error: no -n", "caught: crash, exit 1"),
    (0, "", "error: no -n", "SURVIVED"),
    (4, "", "error: no -n", "NOT RUN: pytest exit 4 (error: no -n)"),
    (5, "", "error: no -n", "NOT RUN: pytest exit 5 (error: no -n)"),
    # xdist ends a run that -x stopped as interrupted, after a failure or a
    # worker's crash; without either, exit 2 is no run
    (2, "FAILED tests/t.py::test_a - AssertionError\n", "", "caught: tests/t.py::test_a"),
    (2, "", "Fatal Python error: Segmentation fault\n", "caught: crash (Fatal Python error)"),
    (2, "", "INTERNALERROR> boom", "NOT RUN: pytest exit 2 (INTERNALERROR> boom)"),
    # a failure whose report xdist could not send (a lone surrogate in it)
    (3, "INTERNALERROR> E   execnet.gateway_base.DumpError: strings must be utf-8 "
        "encodable\n", "", "caught: a failure xdist could not report (DumpError)")])
def test_mutant_counts_as_caught_only_when_the_tests_failed(tmp_path, monkeypatch, code, out,
                                                            err, outcome):
    """A pytest that never ran the tests (usage error, nothing collected: an
    interpreter without pytest-xdist, say) is NOT RUN, not a catch; only
    failing tests (exit 1, or exit 2 with a failure or a crash reported)
    catch a mutant.  The build and the test run are stand-ins here: what is
    checked is how their exit codes and output are read."""
    spec = importlib.util.spec_from_file_location("utf8pfx_mutate", MUTATE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    (tmp_path / "f.c").write_text("int x = 1;\n")

    class Done:
        def __init__(self, rc, stdout="", stderr=""):
            self.returncode, self.stdout, self.stderr = rc, stdout, stderr

    calls = []

    def fake_run(cmd, **kw):
        calls.append(cmd)
        return Done(0) if "setup.py" in cmd else Done(code, out, err)

    monkeypatch.setattr(mod.subprocess, "run", fake_run)
    res, _ = mod.run_one(("M99", "f.c", "x = 1", "x = 2", "a test mutant"), str(tmp_path))
    assert res == outcome and len(calls) == 2
    assert (tmp_path / "f.c").read_text() == "int x = 1;\n"  # the edit is undone


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


SHORT = os.path.join(ROOT, "bench", "short.py")


@pytest.mark.skipif(not os.path.isfile(SHORT), reason="needs the repository's bench/")
def test_short_threads_verdict_reads_the_reused_pattern(monkeypatch):
    """bench --short's two-thread target is judged on the writers-reused
    pattern (what releasing the GIL gives); its line also shows the
    appended pattern and that pattern's copy control, and the section
    prints both patterns with or without numpy.  No timing here."""
    monkeypatch.syspath_prepend(ROOT)
    mod = importlib.import_module("bench.short")

    def thr(reuse, append, copy):
        g = {"one_thread_s": 0.015, "two_threads_s": 0.016, "cores_busy": 1.9}
        return {"mib_per_call": 1, "calls": 192, "hashlib_speedup": 1.9,
                "patterns": {"reuse": dict(g, speedup=reuse, copy_speedup=copy),
                             "append": dict(g, speedup=append, copy_speedup=copy)}}

    met = mod.targets({}, thr(1.75, 1.2, 1.05))
    assert len(met) == 1 and met[0].startswith("MET ")
    assert "1.75x" in met[0] and "appended: 1.20x, numpy.copyto 1.05x" in met[0]
    missed = mod.targets({}, thr(1.69, 1.95, None))
    assert len(missed) == 1 and missed[0].startswith("MISSED ")
    assert "numpy.copyto" not in missed[0]
    lines = mod.threads_lines(thr(1.8, 1.5, None))
    assert [ln.split(":")[0].strip() for ln in lines[1:]] == ["reuse", "append"]
    assert all("numpy" not in ln for ln in lines[1:])
    assert "numpy.copyto of the same bytes in the same pattern: 1.05x" in \
        mod.threads_lines(thr(1.8, 1.5, 1.05))[2]


@pytest.mark.skipif(not os.path.isfile(SHORT), reason="needs the repository's bench/")
def test_short_thread_body_is_real_text_of_the_release_size(monkeypatch, tmp_path):
    """The two-thread section's body: exactly mib << 19 code points of UCS2
    storage (the size write_string releases the GIL from) whose UTF-8 is
    not byte for byte as long as that storage (spaces and punctuation, not
    one Cyrillic letter repeated: that body ran into 4K aliasing and gave a
    one-thread time that depended on where the str was allocated), from
    the corpus where it is and generated where it is not."""
    monkeypatch.syspath_prepend(ROOT)
    mod = importlib.import_module("bench.short")
    (tmp_path / "manpage_paragraphs.tsv").write_text(
        "de\tnicht das\nru\tПример текста, с пробелами.\nru\tЕщё один абзац\n",
        encoding="utf-8")
    for corpus_dir, source in ((str(tmp_path), "corpus"), (str(tmp_path / "none"), "generated")):
        for mib in (1, 2):
            body, where = mod.thread_body(mib, corpus_dir)
            assert source in where
            assert len(body) == mib << 19
            assert "\u0100" <= max(body) < "\U00010000"
            assert sys.getsizeof(body) - sys.getsizeof("\u0100") == 2 * (len(body) - 1)
            n8 = len(body.encode("utf-8"))
            assert 1.05 * len(body) < n8 < 1.95 * len(body), n8
            assert " " in body and len(set(body)) > 20
        if source == "corpus":
            assert "Пример текста" in body and "nicht" not in body
    lines = mod.threads_lines({"mib_per_call": 1, "calls": 192, "hashlib_speedup": 1.9,
                               "body": "ru x", "utf8_bytes": 3 << 19, "patterns": {}})
    assert "1 MiB UCS2; ru x, 1.50 MiB of UTF-8" in lines[0], lines[0]


VS_SIMDUTF = os.path.join(ROOT, "bench", "vs_simdutf.py")


@pytest.mark.skipif(not os.path.isfile(VS_SIMDUTF), reason="needs the repository's bench/")
def test_simdutf_comparison_asks_for_a_source_and_downloads_nothing(tmp_path, monkeypatch):
    """bench/vs_simdutf.py without a simdutf checkout says how to get one
    and exits 2, and with a folder that is not one names what is missing:
    it never fetches third-party code itself."""
    import subprocess

    env = dict(os.environ)
    env.pop("SIMDUTF_SRC", None)
    r = subprocess.run([sys.executable, VS_SIMDUTF], capture_output=True, text=True, env=env,
                       cwd=str(tmp_path), timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "git clone https://github.com/simdutf/simdutf" in r.stdout + r.stderr
    r = subprocess.run([sys.executable, VS_SIMDUTF, "--simdutf-src", str(tmp_path)],
                       capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=60)
    assert r.returncode != 0 and "amalgamate" in r.stdout + r.stderr, r.stdout + r.stderr
    assert os.listdir(str(tmp_path)) == []


@pytest.mark.skipif(not os.path.isfile(VS_SIMDUTF), reason="needs the repository's bench/")
def test_simdutf_runs_are_judged_by_their_median(monkeypatch, capsys):
    """vs_simdutf --runs N: per row every run's ratio, the median and the
    range; a target is met when the median is within it (and n/N says how
    many runs were); the short decode row is for scale and judges nothing."""
    monkeypatch.syspath_prepend(os.path.join(ROOT, "bench"))
    vs = importlib.import_module("vs_simdutf")

    def run(latin1, short_dec):
        return [["encode", "long_latin1", str(latin1), "0.9", "0.8333", "0"],
                ["encode", "short_ucs2_names", "0.95", "0.9", "1.0000", "1"],
                ["decode", "short_ucs2_names", str(short_dec), "0.9", "1.0000", "1"]]

    assert vs.summarise([run(0.80, 1.2), run(0.86, 1.3), run(0.82, 1.1)]) is True
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("encode  long_latin1"))
    assert "0.820" in line.split()[2] and "0.800-0.860" in line and "met 2/3" in line
    scale = next(x for x in out.splitlines() if x.startswith("decode  short_ucs2_names"))
    assert "(scale)" in scale and "MISSED" not in scale
    assert vs.summarise([run(0.84, 0.5), run(0.83, 0.5), run(0.90, 0.5), run(0.85, 0.5)]) is False
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("encode  long_latin1"))
    assert "0.845" in line and "MISSED 1/4" in line and "some MISSED" in out


KERNEL_AB = os.path.join(ROOT, "bench", "kernel_ab.py")
CORPUS = os.environ.get("UTF8PFX_CORPUS_DIR", os.path.join(ROOT, "..", "shared", "corpus"))


@pytest.mark.skipif(not os.path.isfile(KERNEL_AB), reason="needs the repository's bench/")
def test_kernel_ab_refuses_a_base_that_is_not_a_checkout(tmp_path):
    """bench/kernel_ab.py names what BASE lacks, says how to make one and
    exits 2, before building anything."""
    import subprocess

    r = subprocess.run([sys.executable, KERNEL_AB, str(tmp_path)], capture_output=True,
                       text=True, cwd=str(tmp_path), timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "csrc/kernels/kernels.h" in r.stderr and "git worktree add" in r.stderr
    assert os.listdir(str(tmp_path)) == []


def _kernel_ab_tools():
    import shutil

    return all(shutil.which(t) for t in ("gcc", "g++", "ld", "nm", "objcopy"))


KERNEL_AB_SMALL = ["--repeats", "3", "--min-loop-us", "1", "--n-cp", "512", "--nstr", "2",
                   "--short-names", "64"]


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isfile(KERNEL_AB), reason="needs the repository's bench/")
@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="needs ../shared/corpus")
@pytest.mark.skipif(not _kernel_ab_tools(), reason="needs gcc, g++ and binutils")
def test_kernel_ab_times_every_row_of_a_tree_against_itself(tmp_path):
    """This tree as both A and B: both builds link into one program (their
    symbols prefixed), pass the check, and every workload gets its three
    rows with a B/A per layout and their geometric mean."""
    import subprocess

    r = subprocess.run([sys.executable, KERNEL_AB, ROOT, *KERNEL_AB_SMALL,
                        "--build-dir", str(tmp_path / "b")],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "verified: both builds give CPython's bytes" in r.stdout
    rows = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 7 and parts[1] in ("enc", "len+enc", "dec"):
            q1, q2, g = map(float, parts[4:])
            assert abs(g - (q1 * q2) ** 0.5) < 0.002 and 0 < g < 10, line
            rows.setdefault(parts[0], set()).add(parts[1])
    assert "long_latin1" in rows and len(rows) >= 2, r.stdout
    assert all(v == {"enc", "len+enc", "dec"} for v in rows.values()), rows


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isfile(KERNEL_AB), reason="needs the repository's bench/")
@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="needs ../shared/corpus")
@pytest.mark.skipif(not _kernel_ab_tools(), reason="needs gcc, g++ and binutils")
def test_kernel_ab_stops_at_a_build_whose_bytes_differ(tmp_path):
    """A base tree whose scalar encoder writes a wrong lead byte: the check
    before timing names the mismatch and the program exits 1, timing
    nothing."""
    import shutil
    import subprocess

    base = tmp_path / "base"
    shutil.copytree(os.path.join(ROOT, "csrc"), str(base / "csrc"))
    inl = base / "csrc" / "kernels" / "generic" / "scalar_inl.h"
    text = inl.read_text(encoding="utf-8")
    bad = text.replace("(uint8_t)(0xC0 | (c >> 6))", "(uint8_t)(0xC1 | (c >> 6))")
    assert bad != text
    inl.write_text(bad, encoding="utf-8")
    r = subprocess.run([sys.executable, KERNEL_AB, str(base), "--table", "scalar",
                        "--dec-table", "scalar", *KERNEL_AB_SMALL,
                        "--build-dir", str(tmp_path / "b")],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 1, r.stdout[-3000:] + r.stderr[-3000:]
    assert "MISMATCH" in r.stdout and "CPython's str.encode()" in r.stdout, r.stdout[-3000:]
    assert "B/A 1" not in r.stdout


STREAMS = os.path.join(ROOT, "bench", "streams.py")


@pytest.mark.skipif(not os.path.isfile(STREAMS), reason="needs the repository's bench/")
def test_stream_floor_builds_new_copies_of_each_name_in_batches(tmp_path, monkeypatch):
    """bench --streams' floor row: str_floor.build makes `total` new strs,
    copies of the prepared ones cycled (same kind, length and code points),
    in lists of `batch`, and returns the last list."""
    monkeypatch.syspath_prepend(ROOT)
    floor = importlib.import_module("bench.streams").load_str_floor(str(tmp_path))
    if floor is None:
        pytest.skip("no C compiler or no CPython headers here")
    names = ["a", "\xe9t\xe9", "\u20ac x", "\U0001f600!", "", "x" * 300]
    floor.prepare(names)
    assert floor.build(len(names), len(names)) == names
    last = floor.build(2 * len(names) + 2, 4)  # 14 strs: lists of 4, 4, 4, 2
    assert last == names[:2]
    assert all(a is not b for a, b in zip(last, names))
    assert floor.build(3, 1) == [names[2]]
    with pytest.raises(ValueError):
        floor.build(3, 0)
    with pytest.raises(TypeError):
        floor.prepare(["a", b"b"])


@pytest.fixture
def ab(monkeypatch):
    """bench.ab, imported from this checkout (the installed utf8pfx first:
    the checkout's own utf8pfx/ may hold no compiled core)."""
    if not os.path.isfile(os.path.join(ROOT, "bench", "ab.py")):
        pytest.skip("needs the repository's bench/")
    import utf8pfx  # noqa: F401

    monkeypatch.syspath_prepend(ROOT)
    return importlib.import_module("bench.ab")


def _package_copy(dst):
    """This build's package folder (compiled core included), copied to dst/utf8pfx."""
    import shutil

    import utf8pfx

    shutil.copytree(os.path.dirname(utf8pfx.__file__), os.path.join(str(dst), "utf8pfx"),
                    ignore=shutil.ignore_patterns("__pycache__"))


def test_ab_runs_a_baseline_beside_this_build(ab, tmp_path, capsys):
    """bench.ab loads another build under its own name next to this one: a
    copy of this build as the baseline writes the same bytes, and every row
    of every chosen workload gets A, B and a ratio."""
    mod = ab
    _package_copy(tmp_path)
    assert mod.main([str(tmp_path), "--only", "ascii_8", "cjk_30"]) == 0
    out = capsys.readouterr().out
    for wl in ("ascii_8", "cjk_30"):
        for row in ("one", "batch", "read"):
            line = next(ln for ln in out.splitlines() if ln.startswith(f"| {wl} | {row} |"))
            a, b, ratio = (float(x.strip(" *")) for x in line.split("|")[3:6])
            assert a > 0 and b > 0 and ratio > 0
    assert "bytes differ" not in out and "rows more than 5 % slower in B:" in out


@pytest.mark.slow  # two fresh processes, a few seconds each
def test_ab_processes_report_the_median_and_each_process(ab, tmp_path, capsys):
    """--processes 2 runs the comparison in two fresh processes: every row
    gets the median B/A and the two it is the median of, and the fresh
    processes compare the same two builds as this one."""
    import utf8pfx

    mod = ab
    _package_copy(tmp_path)
    assert mod.main([str(tmp_path), "--only", "ascii_8", "--processes", "2"]) == 0
    out = capsys.readouterr().out
    assert "B (this build): " + os.path.dirname(utf8pfx.__file__) + "," in out
    assert "A (baseline): " + str(tmp_path / "utf8pfx") + "," in out
    for row in ("one", "batch", "read"):
        line = next(ln for ln in out.splitlines() if ln.startswith(f"| ascii_8 | {row} |"))
        cells = [c.strip(" *") for c in line.split("|")[3:7]]
        a, b, ratio = (float(x) for x in cells[:3])
        each = [float(x) for x in cells[3].split()]
        assert a > 0 and b > 0 and len(each) == 2
        assert ratio == pytest.approx(sum(each) / 2, abs=1e-3)
    assert "process 2 of 2:" in out and "between processes" in out
    with pytest.raises(SystemExit, match="at least 1"):
        mod.main([str(tmp_path), "--processes", "0"])
    # a baseline that cannot be loaded is refused before any process starts
    with pytest.raises(SystemExit, match="has no utf8pfx/__init__.py"):
        mod.main([str(tmp_path / "nothing"), "--processes", "2"])


def test_ab_refuses_a_missing_or_unbuilt_baseline_and_itself(ab, tmp_path):
    import utf8pfx

    mod = ab
    with pytest.raises(SystemExit, match="has no utf8pfx/__init__.py"):
        mod.main([str(tmp_path)])
    os.makedirs(str(tmp_path / "utf8pfx"))
    (tmp_path / "utf8pfx" / "__init__.py").write_text("from ._core import isa\n")
    with pytest.raises(SystemExit, match="does not import.*build_ext --inplace"):
        mod.main([str(tmp_path)])
    with pytest.raises(SystemExit, match="is the build this interpreter imports"):
        mod.main([os.path.dirname(os.path.dirname(utf8pfx.__file__))])


def test_ab_reports_a_baseline_that_writes_other_bytes(ab, tmp_path, capsys):
    """A workload the two builds write differently is named, not timed,
    and the exit status says so."""
    mod = ab
    _package_copy(tmp_path)
    # the baseline's writer doubles every string it is given
    with open(str(tmp_path / "utf8pfx" / "__init__.py"), "a") as f:
        f.write("\n\nclass BufferWriter(BufferWriter):\n"
                "    def write_string(self, s):\n"
                "        return super().write_string(s + s)\n"
                "    def write_strings(self, L):\n"
                "        return super().write_strings([s + s for s in L])\n")
    assert mod.main([str(tmp_path), "--only", "ascii_8"]) == 1
    out = capsys.readouterr().out
    assert "| ascii_8 | - | - | - | bytes differ: skipped |" in out
    assert "wrote different bytes: ascii_8" in out
