# Every SIMD kernel table proven, natively and emulated, by
# tests/test_kernels_c.py (slow, so outside the default test run):
#   native: both C harnesses (encode, decode) over every table the kernel
#           sources define whose instruction sets this CPU has;
#   emulated: the same kernels built against SIMDe + tests/c/emu (x86-64),
#           so every x86 table runs whatever the CPU lacks;
#   the fill-in intrinsics against the native instruction;
#   native-small / emulated-small: the same with the short-input cut-offs
#           at 1, so the SIMD code runs at every length;
#   bench/c's programs build, and the read floor runs.
# Ends with the line saying which tables ran natively and which emulated.
# A missing tool (C compiler, SIMDe, nm) skips that part with the reason.
root=$(pwd)
cc=${CC:-cc}
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "== 10-kernels: skipped: no C compiler ($cc)"
    exit 0
fi
command -v nm >/dev/null 2>&1 || { echo "== 10-kernels: skipped: no nm (binutils)"; exit 0; }
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
: > "$log/native"
: > "$log/emu"

# The same builds as make's verify target (tests/c/emu.mk), one test per
# build mode, so the two cores share the four builds.  pytest repeats each harness's "kernel tables:" line in its
# report.  .ci/run's slow step leaves this file to this step.
echo "== 10-kernels: pytest tests/test_kernels_c.py (CPU: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//'))"
emu_line=""
(cd "$root" && UTF8PFX_WERROR=${UTF8PFX_WERROR:-} "$root/.venv/bin/pytest" -q -p no:cacheprovider \
    -m "" -n 2 tests/test_kernels_c.py) | tee "$log/pytest"
grep -h "\[native\(-small\)\? build\]" "$log/pytest" >"$log/native" || true
grep -h "\[emulated\(-small\)\? build\]" "$log/pytest" >"$log/emu" || true
[ -s "$log/emu" ] || emu_line="emulated: skipped ($(grep -h 'emulated C harness builds: none' "$log/pytest" | head -1))"

echo "== 10-kernels: kernel levels, native and emulated"
if [ -x "$root/.venv/bin/python" ]; then
    echo "   utf8pfx.isa() = $(cd /tmp && "$root/.venv/bin/python" -c 'import utf8pfx; print(utf8pfx.isa())' 2>/dev/null || echo '?')"
fi
grep -h "kernel tables:" "$log/native" "$log/emu" | sed 's/^/   /' || true
grep -h "fill-in intrinsics" "$log/pytest" | sort -u | sed 's/^/   /' || true
[ -z "$emu_line" ] || echo "   $emu_line"
# the one line: tables run natively / emulated, encode and decode together
nat=$(sed -n 's/.*kernel tables: native:\([^;]*\);.*/\1/p' "$log/native" | tr ' ' '\n' | awk 'NF && !s[$0]++' | tr '\n' ' ' | sed 's/ *$//')
emu=$(sed -n 's/.*; emulated:\([^(;[]*\).*/\1/p' "$log/emu" | tr ' ' '\n' | awk 'NF && $0 != "none" && !s[$0]++' | tr '\n' ' ' | sed 's/ *$//')
echo "== kernel levels: native: ${nat:-none}; emulated: ${emu:-none${emu_line:+ ($emu_line)}}"
