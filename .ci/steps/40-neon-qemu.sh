#!/usr/bin/env bash
# The NEON kernels (encoders and decoders) under qemu-aarch64 user
# emulation, against the scalar reference: make -C tests/c arm arm-decode.
# Needs Debian's gcc-aarch64-linux-gnu and qemu-user (installed here if
# missing); skips with a reason when they cannot be had.
set -euo pipefail
need=()
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
command -v qemu-aarch64 >/dev/null 2>&1 || need+=(qemu-user)
if [ ${#need[@]} -gt 0 ]; then
    echo "installing ${need[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null 2>&1 \
             && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null 2>&1; } \
        || true
fi
if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || ! command -v qemu-aarch64 >/dev/null 2>&1; then
    echo "SKIP 40-neon-qemu: aarch64-linux-gnu-gcc or qemu-aarch64 unavailable"; exit 0
fi
t0=$(date +%s)
make -s -C tests/c arm arm-decode
echo "-- 40-neon-qemu took $(( $(date +%s) - t0 )) s"
