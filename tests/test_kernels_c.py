"""Build and run the C kernel harnesses with the system C compiler, no Python
in the kernels: tests/c/test_kernels.c (encoders, str -> UTF-8) and
tests/c/test_decode_kernels.c (decoders), each against the scalar reference.

Two builds of every kernel source in csrc/kernels (taken from the files
present, so new kernel files are picked up):

  native    every table the sources define whose instruction sets this CPU
            has (all of them on an AVX-512 machine with VBMI2);
  emulated  the same sources against SIMDe + tests/c/emu (x86-64 only),
            so every x86 table runs whatever the CPU lacks;
  native-small  native, with the kernels' short-input cut-offs (below which
            a SIMD encoder hands the input to the scalar loop) at 1, so the
            SIMD code runs at every length the harness tries;
  emulated-small  emulated, with the same cut-offs at 1 (the AVX-512 tables'
            short paths where the CPU lacks AVX-512).

Each harness prints which tables ran natively and which emulated; the lines
are repeated at the end of pytest's output (tests/support/kernel_report.py).  Both
builds skip with the reason when the tools are missing (no C compiler, no
SIMDe: `pip install cmeel-simde`).  tests/c/emu.mk does the same with make.
"""
import glob
import os
import subprocess

import pytest

from support import kernel_report

ROOT = kernel_report.ROOT
KERNELS = os.path.join(ROOT, "csrc", "kernels")
CDIR = os.path.join(ROOT, "tests", "c")

# compiler runs and whole harness builds take minutes, not seconds: slow, so
# outside the default run (pytest -m slow; CI runs them, and 10-kernels.sh
# builds the same harnesses through make)
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.name == "nt", reason="the harness uses POSIX guard pages")]

HARNESSES = [("test_kernels.c", " 0 mismatches"), ("test_decode_kernels.c", ": 0 failures")]


SMALL = ["-DU8P_SIMD_MIN_UNITS=1", "-DU8P_X86_MIN_UNITS_UCS2=1", "-DU8P_SSE_MIN_UNITS_UCS4=1",
         "-DU8P_VBMI2_MIN_UNITS_UCS2=1", "-DU8P_VBMI2_MIN_UNITS_UCS4=1"]


def _flags(mode):
    flags = ["-O2", "-Wall", "-Wextra"]
    if mode.endswith("-small"):
        flags += SMALL
    if os.environ.get("UTF8PFX_WERROR") == "1":
        flags.append("-Werror")
    if mode.startswith("emulated"):
        flags += ["-march=x86-64", "-mtune=generic", "-Wno-psabi", "-DU8P_EMULATED=1",
                  "-I" + os.path.join(CDIR, "emu", "include"),
                  "-I" + kernel_report.simde_include()]
    return flags + ["-I" + KERNELS]


def _kernel_sources(pattern):
    """Every kernel file matching pattern, at the top of csrc/kernels and in
    its subfolders (generic/, x86/, arm/)."""
    return sorted(glob.glob(os.path.join(KERNELS, "**", pattern), recursive=True))


def _run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def _kernel_build(mode, out):
    """(compiler, flags, objects): every .c under csrc/kernels compiled for
    mode into out, with the list of tables they define (out/tables.inc)."""
    cc = kernel_report.compiler()
    if cc is None:
        pytest.skip("no C compiler found")
    if mode.startswith("emulated"):
        why = kernel_report.emulation_unavailable()
        if why:
            pytest.skip("emulated build: " + why)
    sources = _kernel_sources("*.c")
    assert sources, KERNELS
    # the objects land in one folder: two sources of one name would be one .o
    assert len({os.path.basename(p) for p in sources}) == len(sources), sources
    flags = _flags(mode)
    build = _run(cc + flags + ["-c"] + sources, cwd=str(out))
    assert build.returncode == 0, build.stderr
    objects = sorted(glob.glob(os.path.join(str(out), "*.o")))
    tables = _run(["sh", os.path.join(CDIR, "gen_tables.sh")] + objects)
    assert tables.returncode == 0, tables.stderr
    (out / "tables.inc").write_text(tables.stdout)
    return cc, flags, objects


def _dispatch_levels_ran(harness, line):
    """Every level the Python module can switch to on this CPU (and so every
    level dispatch may pick) is a table the native build ran."""
    try:
        from utf8pfx import _core
    except ImportError:
        return  # the C harnesses need no built module; this check does
    levels = {"test_kernels.c": _core._isa_levels,
              "test_decode_kernels.c": getattr(_core, "_decode_isa_levels", None)}[harness]
    if levels is None:
        return
    ran = line.split("native:", 1)[1].split(";", 1)[0].split()
    for level in levels():
        assert level in ran, ("dispatch may pick a level the native harness did not run",
                              level, line)


# One test per build mode, both harnesses on one build: under xdist the
# modes spread over the cores and no build is made twice.
@pytest.mark.parametrize("mode", ["native", "emulated", "native-small", "emulated-small"])
def test_c_kernels(mode, tmp_path):
    cc, flags, objects = _kernel_build(mode, tmp_path)
    for harness, passed in HARNESSES:
        exe = str(tmp_path / harness.replace(".c", ""))
        inc = '-DU8P_TABLES_INC="%s"' % (tmp_path / "tables.inc")
        build = _run(cc + flags + [inc, os.path.join(CDIR, harness)] + objects + ["-o", exe])
        assert build.returncode == 0, (harness, build.stderr)
        if mode.startswith("emulated"):  # nothing native may hide in an emulated pass
            base = _run(["sh", os.path.join(CDIR, "emu", "baseline_check.sh"), exe])
            assert base.returncode == 0, base.stdout + base.stderr
        run = _run([exe], timeout=900)
        assert run.returncode == 0, run.stdout + run.stderr
        assert passed in run.stdout, run.stdout
        line = [ln for ln in run.stdout.splitlines() if "kernel tables:" in ln]
        assert len(line) == 1, run.stdout
        kernel_report.RESULTS[(harness, mode)] = line[0]
        # the build ran what it says it ran
        if mode.startswith("emulated"):
            assert "native: none" in line[0] and "emulated: none" not in line[0], line[0]
        else:
            assert "emulated: none" in line[0] and "native: scalar" in line[0], line[0]
        assert ("cut-offs lowered" in line[0]) == mode.endswith("-small"), line[0]
        if mode == "native":
            _dispatch_levels_ran(harness, line[0])


def test_emulated_intrinsics_match_native(tmp_path):
    """Each fill-in of tests/c/emu/u8p_emu.h against the native instruction
    where the CPU has it (tests/c/test_emu_intrinsics.c)."""
    why = kernel_report.emulation_unavailable()
    if why:
        pytest.skip("emulated build: " + why)
    exe = str(tmp_path / "test_emu_intrinsics")
    flags = ["-O2", "-Wall", "-Wextra", "-Wno-psabi"]
    if os.environ.get("UTF8PFX_WERROR") == "1":
        flags.append("-Werror")
    build = _run(kernel_report.compiler() + flags
                 + ["-I" + os.path.join(CDIR, "emu"), "-I" + kernel_report.simde_include(),
                    os.path.join(CDIR, "test_emu_intrinsics.c"), "-o", exe])
    assert build.returncode == 0, build.stderr
    run = _run([exe], timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert ", 0 mismatches" in run.stdout, run.stdout
    lines = run.stdout.splitlines()
    compared = [ln for ln in lines if "against the native instruction" in ln]
    skipped = [ln for ln in lines if "not compared" in ln]
    assert compared or skipped, run.stdout
    kernel_report.RESULTS[("test_emu_intrinsics.c", "native")] = (
        "fill-in intrinsics compared with the native instruction: %d of %d"
        % (len(compared), len(compared) + len(skipped)))


def test_small_builds_reach_every_cut_off():
    """The *-small builds (and make's) lower exactly the
    short-input cut-offs the kernel sources define as knobs: one that was
    renamed would leave its SIMD path untested at short lengths without a
    word, a new one would be missed."""
    import re

    knobs = set()
    for path in _kernel_sources("*.[ch]"):
        with open(path) as f:
            knobs |= set(re.findall(r"^#ifndef (U8P_\w*MIN_UNITS\w*)", f.read(), re.M))
    ours = {flag[2:].split("=")[0] for flag in SMALL}
    assert knobs == ours, (sorted(knobs), sorted(ours))
    with open(os.path.join(CDIR, "emu.mk")) as f:
        mk = re.search(r"^SMALL_FLAGS := (.*)$", f.read(), re.M).group(1).split()
    assert sorted(mk) == sorted(SMALL), (mk, SMALL)


BENCH_C = os.path.join(ROOT, "bench", "c")


@pytest.mark.skipif(not os.path.isdir(BENCH_C),
                    reason="needs the repository's bench/c (absent where the tests run "
                           "apart from a checkout)")
def test_c_benchmarks_build_and_the_read_floor_runs(tmp_path):
    """bench/c's programs compile against the kernels as they are (nothing
    else builds them), and bench_read_floor runs on a small shape: a row
    per heap setting with the memcpy floor and, for scalar and the table
    the reader picks, the check-and-copy and the malloc'd figures."""
    import re

    cc = kernel_report.compiler()
    if cc is None:
        pytest.skip("no C compiler found")
    flags = ["-O2", "-Wall", "-Wextra"]
    if os.environ.get("UTF8PFX_WERROR") == "1":
        flags.append("-Werror")
    sources = _kernel_sources("*.c")
    progs = sorted(glob.glob(os.path.join(BENCH_C, "*.c")))
    assert any(p.endswith("bench_read_floor.c") for p in progs), progs
    for prog in progs:
        exe = str(tmp_path / os.path.basename(prog)[:-2])
        build = _run(cc + flags + ["-I" + KERNELS, prog] + sources + ["-o", exe])
        assert build.returncode == 0, (prog, build.stderr)
    exe = str(tmp_path / "bench_read_floor")
    bad = _run([exe, "4096"])
    assert bad.returncode == 2 and "usage" in bad.stderr, bad.stderr
    run = _run([exe, "256:2", "4096:3"], timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = [ln for ln in run.stdout.splitlines() if " x " in ln]
    assert len(rows) in (2, 4), run.stdout  # "heap top kept" rows on glibc only
    num = r"(\d+\.\d) \((\d+\.\d\d)x\)"
    for ln, shape in zip(rows, ["256 x 2", "4096 x 3"] * 2):
        assert shape in re.sub(r"\s+", " ", ln), ln
        cols = re.findall(r"(\w+) " + num + r" \+malloc " + num, ln)
        assert [c[0] for c in cols][0] == "scalar" and len(cols) == 2, ln
        for _name, t, ratio, tm, ratio_m in cols:
            assert min(map(float, (t, ratio, tm, ratio_m))) > 0, ln
