"""Build script for the utf8pfx C extension (metadata lives in pyproject.toml).

Every .c file under csrc/ is compiled into one extension, ``utf8pfx._core``:
csrc/kernels/ holds the pure-C kernels (no Python.h), csrc/core, writer,
reader and arrow the Python glue (CONTRIBUTING.md describes the layers).
Sources include each other from csrc/ ("kernels/kernels.h", "core/core.h").
SIMD kernels select their instruction set per function (target attributes),
so the whole tree builds with one set of flags and runs on any CPU of the
architecture; the best kernel is chosen at import.

Compilers: gcc and clang get -O3 and warnings; the x86 SIMD kernels use
gcc/clang target attributes and the aarch64 NEON kernel gcc/clang's
arm_neon.h, both behind `#if defined(__GNUC__) || defined(__clang__)` guards
in csrc/kernels (kernels.h, x86/decode_x86.c), so MSVC, which defines
neither, compiles those files to nothing and uses the scalar kernels (clang-cl
defines __clang__ and keeps the SIMD ones).  MSVC gets /O2 and /W3; the
kernel files must keep compiling with neither macro defined (.ci/steps/
50-packaging.sh checks that with clang in MSVC mode).

The sources compile side by side, one compiler process per CPU (gcc and
clang): setuptools compiles an extension's files one after the other, and
the package is one extension, so a build would use one core of many.

Environment:
  UTF8PFX_WERROR=1   warnings are errors (-Werror, MSVC /WX; CI builds this way)
  UTF8PFX_DEBUG=1    build with -O0 -g and assertions (MSVC: /Od /Zi)
  UTF8PFX_BUILD_JOBS=N  compiler processes at once (default: the CPUs this
                     process may run on; 1 compiles one file at a time)
"""
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from glob import glob

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def _sources():
    found = glob(os.path.join("csrc", "**", "*.c"), recursive=True)
    return sorted(p.replace(os.sep, "/") for p in found)


def _jobs():
    env = os.environ.get("UTF8PFX_BUILD_JOBS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            sys.exit(f"UTF8PFX_BUILD_JOBS must be a whole number, not {env!r}")
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def _compile_side_by_side(compiler, jobs):
    """Make compiler.compile hand each source to its own call, jobs at once.

    Each call is the compiler's own compile() on one file (its checks, its
    flags, its output path); the objects come back in the order of the
    sources, which is the order they are linked in.  Threads suffice: the
    work is in the compiler processes they wait for.
    """
    one_by_one = compiler.compile

    def compile(sources, *args, **kwargs):
        if jobs <= 1 or len(sources) <= 1:
            return one_by_one(sources, *args, **kwargs)
        with ThreadPoolExecutor(min(jobs, len(sources))) as pool:
            parts = list(pool.map(lambda src: one_by_one([src], *args, **kwargs), sources))
        return [obj for part in parts for obj in part]

    compiler.compile = compile


class BuildExt(build_ext):
    def build_extensions(self):
        ctype = self.compiler.compiler_type
        if ctype == "unix":  # gcc, clang; MSVC's compile() sets itself up on first use
            _compile_side_by_side(self.compiler, _jobs())
        for ext in self.extensions:
            if ctype == "msvc":
                args = ["/W3", "/utf-8"]
                if os.environ.get("UTF8PFX_DEBUG") == "1":
                    args += ["/Od", "/Zi", "/UNDEBUG"]
                else:
                    args += ["/O2"]
                if os.environ.get("UTF8PFX_WERROR") == "1":
                    args += ["/WX"]
                ext.extra_compile_args += args
                continue
            args = ["-Wall", "-Wextra", "-fvisibility=hidden"]
            if os.environ.get("UTF8PFX_DEBUG") == "1":
                args += ["-O0", "-g", "-UNDEBUG"]
            else:
                # functions start on a cache line: where a kernel's loops fall
                # then depends on the kernel alone, not on how much code is
                # linked before it (a shorter function elsewhere moved the
                # short UCS2 kernels' loops across a line, and their speed)
                args += ["-O3", "-falign-functions=64"]
            if os.environ.get("UTF8PFX_WERROR") == "1":
                args += ["-Werror"]
            ext.extra_compile_args += args
        super().build_extensions()


setup(
    ext_modules=[
        Extension(
            "utf8pfx._core",
            sources=_sources(),
            include_dirs=["csrc"],
            depends=sorted(glob("csrc/**/*.h", recursive=True)),
        )
    ],
    cmdclass={"build_ext": BuildExt},
)
