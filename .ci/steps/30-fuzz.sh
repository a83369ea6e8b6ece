#!/usr/bin/env bash
# Coverage-guided fuzzing, about a minute per harness, two at a time:
#   writer  - atheris, BufferWriter programs vs the pure-Python reference
#   reader  - atheris, hostile blobs vs a pure-Python reader (value or error+offset)
#   kernels - libFuzzer, every SIMD encoder level vs scalar (tests/c/fuzz_kernels.c)
# The extension is built with clang -fsanitize=fuzzer-no-link,address,undefined
# (fuzz/run.py).  Needs clang (Debian: clang) and atheris (PyPI); skips with a
# reason when either cannot be had.  UTF8PFX_FUZZ_SECONDS overrides the minute.
set -euo pipefail
root=$(pwd)
secs=${UTF8PFX_FUZZ_SECONDS:-60}
if ! command -v clang >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q clang >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q clang >/dev/null 2>&1; } \
        || true
fi
if ! command -v clang >/dev/null 2>&1; then
    echo "SKIP 30-fuzz: clang is not installed and could not be installed"; exit 0
fi
# clang installed without its recommends lacks the sanitizer and libFuzzer
# runtimes (Debian: libclang-rt-N-dev): link a one-line fuzzer to find out
probe=$(mktemp -d)
printf '#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }\n' >"$probe/f.c"
if ! clang -fsanitize=fuzzer,address "$probe/f.c" -o "$probe/f" >/dev/null 2>&1; then
    major=$(clang -dumpversion | cut -d. -f1)
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q "libclang-rt-$major-dev" >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q "libclang-rt-$major-dev" >/dev/null 2>&1; } \
        || true
fi
rm -rf "$probe"
t0=$(date +%s)
venv="$root/.venv-fuzz"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q setuptools wheel
atheris_ok=1
"$venv/bin/pip" install -q atheris || atheris_ok=0
# Two lanes, one per core, each harness with a core of its own for its
# whole minute: the kernels target, then the reader; the extension's clang
# build (once, for both atheris harnesses), then the writer.
fuzz_one() {
    local h=$1 rc=0
    if [ "$h" != kernels ] && [ "$atheris_ok" = 0 ]; then
        echo "SKIP fuzz $h: atheris could not be installed for $("$venv/bin/python" --version)" \
            >"$work/$h.log"
        echo 0 >"$work/$h.rc"
        return
    fi
    UTF8PFX_FUZZ_PREBUILT=$([ "$h" = kernels ] && echo 0 || echo 1) \
        "$venv/bin/python" fuzz/run.py "$h" "$secs" >"$work/$h.log" 2>&1 || rc=$?
    echo "$rc" >"$work/$h.rc"
}
work="$root/fuzz/.work"
mkdir -p "$work"
rm -f "$work"/*.rc "$work"/kernels.log "$work"/writer.log "$work"/reader.log
( fuzz_one kernels
  while [ ! -e "$work/build.rc" ]; do sleep 1; done
  if [ "$(cat "$work/build.rc")" = 0 ]; then fuzz_one reader; fi ) &
lane=$!
build_rc=0
if [ "$atheris_ok" = 1 ]; then
    "$venv/bin/python" fuzz/run.py build >"$work/build.log" 2>&1 || build_rc=$?
    if [ "$build_rc" != 0 ]; then
        cat "$work/build.log"
        echo "FAIL fuzz: building the extension with clang failed"
    fi
fi
echo "$build_rc" >"$work/build.rc"
if [ "$build_rc" = 0 ]; then fuzz_one writer; fi
wait "$lane"
status=$build_rc
for h in kernels writer reader; do
    log="$root/fuzz/.work/$h.log"
    [ -e "$log" ] || continue
    echo "-- fuzz $h for ${secs}s"
    # the libFuzzer statistics and any report, not every progress line
    grep -v -e '^#[0-9]' -e 'warning:' "$log" | tail -n 40
    grep 'DONE' "$log" | tail -n 1 || true
    rc=$(cat "$work/$h.rc" 2>/dev/null || echo 1)
    if [ "$rc" != 0 ]; then
        echo "FAIL fuzz $h: exit $rc; the input is in fuzz/.work/$h-crash-*"
        ls -1 fuzz/.work/ | grep -- "$h-" || true
        status=1
    fi
done
echo "-- 30-fuzz took $(( $(date +%s) - t0 )) s"
exit $status
