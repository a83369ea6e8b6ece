#!/usr/bin/env bash
# Packaging: the distributions build, install and pass the tests on their own.
#
#  1. python -m build: an sdist and a wheel, checked for what a package
#     index shows (licence, URLs, classifiers) and what must ship.
#  2. The sdist installed into a fresh venv; every test module imports
#     against that install, and a subset that reaches every shipped part
#     runs, from a folder where the checkout's utf8pfx/ cannot shadow it.
#  3. README's code examples, against the same install; mypy --strict on the
#     command line's modules.
#  4. The extension built with clang, warnings as errors, and tested.
#  5. The kernels compiled as MSVC sees them (clang in MSVC mode, neither
#     __GNUC__ nor __clang__): the SIMD files must reduce to nothing cleanly;
#     and as Apple clang sees them: NEON on for arm64, x86 SIMD for x86-64.
#  6. The cibuildwheel configuration: the wheels it would build.
# Optional tools (clang, cibuildwheel) that cannot be installed make their
# part skip with a printed reason.
set -euo pipefail
root=$(pwd)
py=${PYTHON:-python3}
work=$(mktemp -d "${TMPDIR:-/tmp}/utf8pfx-pkg.XXXXXX")
trap 'rm -rf "$work"' EXIT
export PIP_DISABLE_PIP_VERSION_CHECK=1 CI=${CI:-true}

echo "-- 1. python -m build (sdist + wheel)"
"$py" -m venv "$work/tools"
"$work/tools/bin/pip" install -q build setuptools
"$work/tools/bin/python" -m build --outdir "$work/dist" "$root" > "$work/build.log" 2>&1 \
    || { tail -40 "$work/build.log"; exit 1; }
sdist=$(ls "$work"/dist/utf8pfx-*.tar.gz)
wheel=$(ls "$work"/dist/utf8pfx-*.whl)
echo "built $(basename "$sdist") $(basename "$wheel")"
"$work/tools/bin/python" - "$sdist" "$wheel" <<'EOF'
import sys, tarfile, zipfile
sdist, wheel = sys.argv[1:]
names = tarfile.open(sdist).getnames()
top = names[0].split("/")[0]
need = ["LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml", "setup.py",
        "csrc/kernels/kernels.h", "csrc/kernels/generic/scalar.c", "csrc/module.c",
        "utf8pfx/_core.pyi", "utf8pfx/py.typed", "utf8pfx/data/sample.txt",
        "tests/test_cli.py", "tests/conftest.py", "tests/c/Makefile"]
missing = [n for n in need if f"{top}/{n}" not in names]
assert not missing, f"sdist lacks {missing}"
assert not [n for n in names if n.endswith((".so", ".pyd", ".o"))], "binaries in the sdist"
z = zipfile.ZipFile(wheel)
wnames = z.namelist()
for n in ("utf8pfx/__init__.py", "utf8pfx/__main__.py", "utf8pfx/_streamwriter.py",
          "utf8pfx/_core.pyi", "utf8pfx/py.typed", "utf8pfx/data/sample.txt"):
    assert n in wnames, f"wheel lacks {n}"
assert any(n.startswith("utf8pfx/_core") and n.endswith((".so", ".pyd")) for n in wnames)
assert any(n.endswith("LICENSE") and ".dist-info/" in n for n in wnames), "wheel lacks LICENSE"
meta = z.read(next(n for n in wnames if n.endswith(".dist-info/METADATA"))).decode()
for field in ("License", "Keywords: ",
              "Classifier: Programming Language :: Python :: 3.13",
              "Classifier: License :: OSI Approved :: MIT License",
              "Requires-Python: >=3.9", "Description-Content-Type: text/markdown"):
    assert field in meta, f"METADATA lacks {field!r}"
assert "Requires-Dist" not in meta.split("Provides-Extra")[0], "runtime dependencies"
print(f"sdist: {len(names)} files; wheel: {len(wnames)} files; metadata complete")
EOF

echo "-- 2. the sdist in a fresh venv, tests from outside the checkout"
"$py" -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$sdist[test]"
mkdir "$work/run"
cp -r "$root/tests" "$root/README.md" "$work/run/"
mkdir -p "$work/run/csrc" && cp -r "$root/csrc/kernels" "$work/run/csrc/"  # for tests/c's harnesses
rm -rf "$work/run/tests/c/bin"
where=$(cd "$work/run" && "$work/venv/bin/python" -c 'import utf8pfx, os; print(os.path.dirname(utf8pfx.__file__))')
case "$where" in
    "$work/venv/"*) echo "utf8pfx imported from $where" ;;
    *) echo "utf8pfx imported from $where, not the venv" >&2; exit 1 ;;
esac
# This run proves the sdist is complete, not the code correct (the README
# run, the cross-version runs and the sanitizer run do that): every test
# module imports against the install (collection), and a subset that
# reaches every shipped part passes with the smoke Hypothesis profile:
# every C source (the module and its types), the kernel dispatch, every
# preset, the CLI and its data, the docstrings the stubs promise.
(cd "$work/run" && "$work/venv/bin/python" -m pytest -q -p no:cacheprovider --collect-only -m "" \
    tests > "$work/collect.log" 2>&1) || { cat "$work/collect.log"; exit 1; }
tail -n 1 "$work/collect.log"
(cd "$work/run" && UTF8PFX_HYPOTHESIS_PROFILE=${UTF8PFX_PKG_PROFILE:-smoke} \
    "$work/venv/bin/python" -m pytest -q -p no:cacheprovider -n 2 \
    tests/test_functions.py tests/test_kernels_dispatch.py tests/test_presets.py \
    tests/test_arrow_in.py tests/test_arrow_out.py tests/test_cli.py tests/test_docstrings.py)

echo "-- 3. README's code examples, against the installed sdist"
(cd "$work/run" && "$work/venv/bin/python" -m pytest -q -p no:cacheprovider tests/test_docs.py)
"$work/venv/bin/utf8pfx" --version
echo "   the command line's modules and StreamWriter type-check (mypy --strict)"
(cd "$root" && "$work/venv/bin/python" -m mypy --strict --no-incremental \
    utf8pfx/__main__.py utf8pfx/_stream.py utf8pfx/_bench.py utf8pfx/_streamwriter.py)

echo "-- 4. clang build, warnings as errors"
if ! command -v clang >/dev/null 2>&1; then
    (apt-get install -y -q clang >/dev/null 2>&1 || true)
fi
if command -v clang >/dev/null 2>&1; then
    clang --version | head -1
    mkdir "$work/clang"
    (cd "$root" && CC=clang UTF8PFX_WERROR=1 "$work/tools/bin/python" setup.py -q build_ext \
        -b "$work/clang" -t "$work/clang-tmp" > "$work/clang.log" 2>&1) \
        || { cat "$work/clang.log"; exit 1; }
    cp "$root"/utf8pfx/*.py "$root"/utf8pfx/*.pyi "$work/clang/utf8pfx/"
    cp -r "$root/utf8pfx/data" "$work/clang/utf8pfx/"
    (cd "$work/run" && PYTHONPATH="$work/clang" "$work/venv/bin/python" -c \
        'import utf8pfx, sys; assert utf8pfx.__file__.startswith(sys.argv[1]); print("clang build:", utf8pfx.__file__, "isa", utf8pfx.isa())' "$work/clang")
    (cd "$work/run" && PYTHONPATH="$work/clang" UTF8PFX_HYPOTHESIS_PROFILE=dev "$work/venv/bin/python" -m pytest -q -p no:cacheprovider -n 2 \
        tests/test_kernels_dispatch.py tests/test_reader.py tests/test_writer.py tests/test_cli.py)
else
    echo "SKIP clang build: clang is not installed and apt-get could not install it"
fi

echo "-- 5. kernels as MSVC and as Apple clang see them (clang, syntax only)"
if command -v clang >/dev/null 2>&1; then
    # freestanding: clang's own stddef/stdint/intrinsics headers and a
    # <string.h> with the few functions the kernels call, so no host libc
    # header gets in the way of a foreign target
    mkdir "$work/shim"
    cat > "$work/shim/string.h" <<'EOF_H'
#include <stddef.h>
void *memcpy(void *, const void *, size_t);
void *memmove(void *, const void *, size_t);
void *memset(void *, int, size_t);
int memcmp(const void *, const void *, size_t);
int strcmp(const char *, const char *);
size_t strlen(const char *);
EOF_H
    flags=(-ffreestanding -nostdlibinc -isystem "$work/shim" -fsyntax-only -Wall -Wextra -Werror
           -I"$root/csrc/kernels")
    check_macro() {  # target, extra flags..., then the preprocessor condition that must hold
        local target=$1 cond=${!#}
        printf '#include "kernels.h"\n#if !(%s)\n#error expected %s\n#endif\n' "$cond" "$cond" \
            | clang --target="$target" "${@:2:$#-2}" "${flags[@]}" -x c -
    }
    mapfile -t ksrc < <(find "$root/csrc/kernels" -name '*.c' | sort)
    for target in x86_64-pc-windows-msvc aarch64-pc-windows-msvc; do
        for f in "${ksrc[@]}"; do
            clang --target=$target -U__GNUC__ -U__clang__ "${flags[@]}" "$f"
        done
        check_macro $target -U__GNUC__ -U__clang__ '!U8P_X86_SIMD && !U8P_ARM_NEON'
        echo "$target (no __GNUC__, no __clang__: as MSVC): every kernel file compiles, SIMD left out"
    done
    for target in arm64-apple-macos11 x86_64-apple-macos10.13; do
        for f in "${ksrc[@]}"; do
            clang --target=$target "${flags[@]}" "$f"
        done
    done
    check_macro arm64-apple-macos11 'U8P_ARM_NEON'
    check_macro x86_64-apple-macos10.13 'U8P_X86_SIMD'
    echo "arm64-apple-macos11 (NEON on), x86_64-apple-macos10.13 (x86 SIMD on): every kernel file compiles"
else
    echo "SKIP MSVC-mode and macOS checks: no clang"
fi

echo "-- 6. cibuildwheel configuration"
if "$work/tools/bin/pip" install -q cibuildwheel > "$work/cibw.log" 2>&1; then
    for platform in linux macos windows; do
        ids=$(cd "$root" && "$work/tools/bin/cibuildwheel" --print-build-identifiers --platform $platform 2>"$work/cibw-$platform.err") \
            || { cat "$work/cibw-$platform.err"; exit 1; }
        echo "$platform: $(echo "$ids" | wc -l) wheels: $(echo $ids | tr '\n' ' ')"
        case $platform in
            linux) want="cp39-manylinux_x86_64 cp39-manylinux_aarch64 cp39-musllinux_x86_64 cp39-musllinux_aarch64 cp313-manylinux_x86_64 cp313-musllinux_aarch64" ;;
            macos) want="cp39-macosx_x86_64 cp39-macosx_arm64 cp313-macosx_arm64" ;;
            windows) want="cp39-win_amd64 cp313-win_amd64" ;;
        esac
        for id in $want; do
            grep -qx "$id" <<<"$ids" || { echo "cibuildwheel would not build $id" >&2; exit 1; }
        done
        if grep -q "cp38\|pp3\|i686\|win32" <<<"$ids"; then
            echo "cibuildwheel would build unsupported wheels" >&2; exit 1
        fi
    done
else
    echo "SKIP cibuildwheel check: pip could not install cibuildwheel ($(tail -1 "$work/cibw.log"))"
fi
echo "-- packaging OK"
