"""Build script for the utf8pfx C extension (metadata lives in pyproject.toml).

Every .c file under csrc/ is compiled into one extension, ``utf8pfx._core``:
csrc/kernels/ holds the pure-C kernels (no Python.h), csrc/ the Python glue.
SIMD kernels select their instruction set per function (target attributes),
so the whole tree builds with one set of flags and runs on any CPU of the
architecture; the best kernel is chosen at import.

Environment:
  UTF8PFX_WERROR=1   add -Werror (CI builds this way)
  UTF8PFX_DEBUG=1    build with -O0 -g and assertions
"""
import os
import sys
from glob import glob

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def _sources():
    found = glob(os.path.join("csrc", "**", "*.c"), recursive=True)
    return sorted(p.replace(os.sep, "/") for p in found)


class BuildExt(build_ext):
    def build_extensions(self):
        ctype = self.compiler.compiler_type
        for ext in self.extensions:
            if ctype == "msvc":
                ext.extra_compile_args += ["/O2", "/W3"]
                continue
            args = ["-Wall", "-Wextra", "-fvisibility=hidden"]
            if os.environ.get("UTF8PFX_DEBUG") == "1":
                args += ["-O0", "-g", "-UNDEBUG"]
            else:
                args += ["-O3"]
            if os.environ.get("UTF8PFX_WERROR") == "1":
                args += ["-Werror"]
            ext.extra_compile_args += args
        super().build_extensions()


setup(
    ext_modules=[
        Extension(
            "utf8pfx._core",
            sources=_sources(),
            include_dirs=["csrc", "csrc/kernels"],
            depends=sorted(glob("csrc/**/*.h", recursive=True)),
        )
    ],
    cmdclass={"build_ext": BuildExt},
)
