"""Which kernel levels a test run checked natively and which emulated, for
one line at the top of pytest's output and one at the end.

- header (before the tests): the levels the Python suite runs natively
  (utf8pfx._core._isa_levels(): what this CPU and build support), and
  whether the C harnesses can add an emulated build (x86-64, a C compiler,
  SIMDe headers from `pip install cmeel-simde`).
- summary (after the tests): what the C harnesses in tests/test_kernels_c.py
  actually ran, as each harness printed it ("native: ...; emulated: ...").
"""
import os
import platform
import shutil
import sys
import sysconfig

# the repository (or the folder tests/ was copied into): tests/support/ is two below
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMU_DIR = os.path.join(ROOT, "tests", "c", "emu")

# filled by tests/test_kernels_c.py: (harness, mode) -> the harness's line
RESULTS = {}


def is_x86_64():
    return platform.machine().lower() in ("x86_64", "amd64")


def compiler():
    """The C compiler as an argv prefix, or None."""
    for cand in (os.environ.get("CC"), sysconfig.get_config_var("CC"), "cc", "gcc", "clang"):
        if not cand:
            continue
        exe = cand.split()[0]
        if shutil.which(exe):
            return cand.split()
    return None


def simde_include():
    """SIMDe's include directory (tests/c/emu/find_simde.py), or None."""
    sys.path.insert(0, EMU_DIR)
    try:
        import find_simde
    finally:
        sys.path.remove(EMU_DIR)
    return find_simde.find()


def emulation_unavailable():
    """Why the emulated C build cannot run here, or None if it can."""
    if os.name == "nt":
        return "the C harnesses use POSIX guard pages"
    if not is_x86_64():
        return "emulation covers the x86 kernels; this is %s" % platform.machine()
    if compiler() is None:
        return "no C compiler"
    if simde_include() is None:
        return "SIMDe headers not found (pip install cmeel-simde)"
    if shutil.which("nm") is None:
        return "no nm to list the kernel tables"
    return None


def header_line():
    try:
        from utf8pfx import _core

        levels = list(_core._isa_levels())
        dec = list(getattr(_core, "_decode_isa_levels", lambda: [])())
        native = "%s (decode: %s)" % (", ".join(levels), ", ".join(dec) or "?")
    except (ImportError, AttributeError):
        native = "? (utf8pfx._core not importable)"
    why = emulation_unavailable()
    emu = ("every x86 table in tests/test_kernels_c.py (SIMDe)" if why is None
           else "none (%s)" % why)
    return "kernel levels: native: %s; emulated: %s" % (native, emu)


def summary_lines():
    lines = ["%s [%s build] %s" % (h, mode, line)
             for (h, mode), line in sorted(RESULTS.items())]
    if not any(mode == "native" and h != "test_emu_intrinsics.c" for h, mode in RESULTS):
        lines.append("native C harness builds: none ran in this session")
    if not any(mode == "emulated" for _, mode in RESULTS):
        lines.append("emulated C harness builds: none ran in this session (%s)"
                     % (emulation_unavailable() or "not selected"))
    return lines
