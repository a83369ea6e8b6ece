"""Build and run the C kernel tests with the system C compiler: every SIMD
level the CPU supports against the scalar reference, no Python involved in
the kernels.  tests/c/test_kernels.c covers the encoders (str -> UTF-8),
tests/c/test_decode_kernels.c the decoders.  Skips when no C compiler is
found."""
import glob
import os
import shutil
import subprocess
import sysconfig

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(ROOT, "csrc", "kernels")


def _compiler():
    for cand in (os.environ.get("CC"), sysconfig.get_config_var("CC"), "cc", "gcc", "clang"):
        if not cand:
            continue
        exe = cand.split()[0]
        if shutil.which(exe):
            return cand.split()
    return None


@pytest.mark.skipif(os.name == "nt", reason="the harness uses POSIX mmap guard pages")
@pytest.mark.parametrize(
    "harness, passed",
    [("test_kernels.c", " 0 mismatches"), ("test_decode_kernels.c", ": 0 failures")],
)
def test_c_kernels(tmp_path, harness, passed):
    cc = _compiler()
    if cc is None:
        pytest.skip("no C compiler found")
    exe = str(tmp_path / "harness")
    sources = [os.path.join(ROOT, "tests", "c", harness)]
    sources += sorted(glob.glob(os.path.join(KERNELS, "*.c")))
    build = subprocess.run(
        cc + ["-O2", "-Wall", "-Wextra", "-I" + KERNELS] + sources + ["-o", exe],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr
    run = subprocess.run([exe], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert passed in run.stdout, run.stdout
