#!/usr/bin/env bash
# The C kernel harnesses (encode and decode) built the ways the Python
# build does not: clang with -Werror, gcc at -O0 (the UTF8PFX_DEBUG=1
# level: every intrinsic immediate must stay a constant there) and the
# decoders under AddressSanitizer + UBSan.  Each runs every kernel table the
# CPU has natively (the harness prints which).  About a minute on 2 cores.
set -euo pipefail
K=csrc/kernels
SRC=$(find $K -name '*.c' | sort)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

run() { echo "+ $*"; "$@"; }

if command -v clang >/dev/null 2>&1; then
    run clang -O2 -Wall -Wextra -Werror -I$K tests/c/test_kernels.c $SRC -o "$OUT/tk_clang"
    run "$OUT/tk_clang"
    run clang -O2 -Wall -Wextra -Werror -I$K tests/c/test_decode_kernels.c $SRC -o "$OUT/tdk_clang"
    run "$OUT/tdk_clang"
else
    echo "SKIP clang builds: no clang on PATH (apt-get install clang)"
fi

if command -v gcc >/dev/null 2>&1; then
    run gcc -O0 -Wall -Wextra -Werror -I$K tests/c/test_kernels.c $SRC -o "$OUT/tk_o0"
    run "$OUT/tk_o0"
    run gcc -O0 -Wall -Wextra -Werror -I$K tests/c/test_decode_kernels.c $SRC -o "$OUT/tdk_o0"
    run "$OUT/tdk_o0"
    run gcc -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -I$K \
        tests/c/test_decode_kernels.c $SRC -o "$OUT/tdk_asan"
    run "$OUT/tdk_asan"
else
    echo "SKIP gcc builds: no gcc on PATH"
fi
