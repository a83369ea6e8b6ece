#!/usr/bin/env bash
# The whole extension built with AddressSanitizer + UBSan, running the
# whole pytest suite; then the C harnesses (encoders and decoders) under the
# same sanitizers.  Any sanitizer report fails the step (UBSan halts on the
# first one, ASan aborts).  Needs gcc with libasan/libubsan (Debian's gcc has
# them); skips with a reason otherwise.
set -euo pipefail
root=$(pwd)
cc=${CC:-gcc}
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "SKIP 20-sanitizers: no C compiler ($cc)"; exit 0
fi
asan=$("$cc" -print-file-name=libasan.so)
ubsan=$("$cc" -print-file-name=libubsan.so)
if [ ! -e "$asan" ] || [ ! -e "$ubsan" ]; then
    echo "SKIP 20-sanitizers: $cc has no libasan/libubsan runtime"; exit 0
fi
t0=$(date +%s)

echo "-- C harnesses under -fsanitize=address,undefined (encoders, then decoders)"
make -s -C tests/c asan decode-asan

echo "-- the extension built with ASan + UBSan, whole pytest suite"
venv="$root/.venv-asan"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q setuptools wheel pytest pytest-xdist 'hypothesis>=6.50'
san="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# UTF8PFX_DEBUG=1: -O0 -g with assertions on; UTF8PFX_WERROR keeps it warning-free.
# Built from a clean copy of the tracked files: an in-tree build/ left by an
# earlier `pip install .` would be reused as it is, uninstrumented.
src=$(mktemp -d)
git ls-files -z | xargs -0 cp --parents -t "$src"
CC="$cc" CFLAGS="$san" LDFLAGS="$san" UTF8PFX_DEBUG=1 \
    "$venv/bin/pip" install -q --no-build-isolation --no-deps "$src"
rm -rf "$src"
# The tests must import this build, not a checkout's utf8pfx/ folder: run
# from /tmp, and make sure the module is the venv's and is instrumented.
core=$(cd /tmp && LD_PRELOAD="$asan:$ubsan" ASAN_OPTIONS=detect_leaks=0 \
       "$venv/bin/python" -c 'import utf8pfx._core as c; print(c.__file__)')
echo "built: $core"
case "$core" in "$venv"/*) ;; *) echo "FAIL: the sanitizer build is not the one imported"; exit 1;; esac
if [ "$(nm -D "$core" | grep -c -e __asan_report -e __ubsan_handle)" = 0 ]; then
    echo "FAIL: $core has no ASan/UBSan instrumentation"; exit 1
fi
# The runtimes are preloaded (python itself is not instrumented).  Leak
# detection is off for the interpreter (it never frees everything at exit; our
# own leaks are the job of tests/test_robustness_leaks.py and the valgrind run);
# allocator_may_return_null=1 so the huge-size tests still see MemoryError.
# PYTHONMALLOC=malloc: every PyMem/PyObject allocation is its own malloc, so
# ASan sees the edges of our buffers, not of pymalloc's arenas.
# UTF8PFX_SANITIZED=1 tells the tests what a sanitizer cannot measure (RSS
# bounds) and to run the leak loop 100,000 times, not 1,000,000.  The dev
# Hypothesis profile (50 examples a property) keeps the -O0 ASan run within
# its budget.  Every test runs, the slow ones too (-m ""), on both cores
# (the workers inherit the preloaded runtimes), but tests/test_kernels_c.py:
# its harnesses are separate programs, not this build, and make ran them
# under the sanitizers above.
(cd "$root" && env \
    LD_PRELOAD="$asan:$ubsan" \
    ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:abort_on_error=1:detect_stack_use_after_return=0:strict_init_order=1:check_initialization_order=1 \
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    PYTHONMALLOC=malloc UTF8PFX_SANITIZED=1 UTF8PFX_HYPOTHESIS_PROFILE=${UTF8PFX_SAN_PROFILE:-dev} \
    "$venv/bin/pytest" -q -p no:cacheprovider -x -m "" -n 2 --ignore=tests/test_kernels_c.py)
echo "-- 20-sanitizers took $(( $(date +%s) - t0 )) s"
