#!/bin/sh
# The emulated harness binaries must hold no instruction beyond baseline
# x86-64 (no AVX/AVX-512 register or mask, no SSSE3/SSE4.1/POPCNT/LZCNT/BMI2
# mnemonic), or an "emulated" pass could be partly native:
#   sh emu/baseline_check.sh BINARY...
# (tzcnt is allowed: gcc writes rep bsf for __builtin_ctz, which runs as bsf
# on CPUs without BMI1.)  Skips, saying so, where objdump is missing.
set -eu
if ! command -v objdump >/dev/null 2>&1; then
    echo "emulated build: objdump not found, baseline-only check skipped"
    exit 0
fi
re='%[yz]mm[0-9]|%k[0-7]|[[:space:]](pshufb|palignr|pblendvb|pblendw|ptest|pmovzx[a-z]*|pmovsx[a-z]*|pminu[wd]|pmaxu[wd]|pmins[bd]|pmaxs[bd]|pcmpeqq|pcmpgtq|pextr[bdq]|pinsr[bdq]|packusdw|pmulld|popcnt|lzcnt|pdep|pext|shlx|shrx|v[a-z0-9]+)[[:space:]]'
for f in "$@"; do
    n=$(objdump -d --no-show-raw-insn "$f" | grep -cE "$re" || true)
    if [ "$n" != 0 ]; then
        echo "$f: $n instructions beyond baseline x86-64 in the emulated build:" >&2
        objdump -d --no-show-raw-insn "$f" | grep -E "$re" | head -5 >&2
        exit 1
    fi
done
echo "emulated build: baseline x86-64 only (no AVX/AVX-512/SSSE3/SSE4.1/POPCNT/BMI2 instruction in $#/$# binaries)"
