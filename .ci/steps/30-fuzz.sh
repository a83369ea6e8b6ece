#!/usr/bin/env bash
# Coverage-guided fuzzing, about a minute per harness:
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
status=0
for h in kernels writer reader; do
    if [ "$h" != kernels ] && [ "$atheris_ok" = 0 ]; then
        echo "SKIP fuzz $h: atheris could not be installed for $("$venv/bin/python" --version)"
        continue
    fi
    echo "-- fuzz $h for ${secs}s"
    log="$root/fuzz/.work/$h.log"
    mkdir -p "$root/fuzz/.work"
    rc=0
    "$venv/bin/python" fuzz/run.py "$h" "$secs" >"$log" 2>&1 || rc=$?
    # the libFuzzer statistics and any report, not every progress line
    grep -v -e '^#[0-9]' -e 'warning:' "$log" | tail -n 40
    grep 'DONE' "$log" | tail -n 1 || true
    if [ "$rc" != 0 ]; then
        echo "FAIL fuzz $h: exit $rc; the input is in fuzz/.work/$h-crash-*"
        ls -1 fuzz/.work/ | grep -- "$h-" || true
        status=1
    fi
done
echo "-- 30-fuzz took $(( $(date +%s) - t0 )) s"
exit $status
