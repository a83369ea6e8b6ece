# Every SIMD kernel table proven, natively and emulated.
#   native: both C harnesses (encode, decode) over every table the kernel
#           sources define whose instruction sets this CPU has;
#   emu:    the same kernels built against SIMDe + tests/c/emu (x86-64),
#           so every x86 table runs whatever the CPU lacks;
#   emu-intrinsics: each fill-in intrinsic against the native instruction;
#   native-small / emu-small: the same with the short-input cut-offs at 1,
#           so the SIMD code runs at every length.
# Ends with the line saying which tables ran natively and which emulated.
# A missing tool (C compiler, SIMDe, nm) skips that part with the reason.
root=$(pwd)
cc=${CC:-cc}
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "== 10-kernels: skipped: no C compiler ($cc)"
    exit 0
fi
command -v make >/dev/null 2>&1 || { echo "== 10-kernels: skipped: no make"; exit 0; }
command -v nm >/dev/null 2>&1 || { echo "== 10-kernels: skipped: no nm (binutils)"; exit 0; }
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
: > "$log/native"
: > "$log/emu"
werror="-O2 -g -Wall -Wextra"
[ "${UTF8PFX_WERROR:-}" = 1 ] && werror="$werror -Werror"

make -s -C tests/c clean-verify >/dev/null
echo "== 10-kernels: native runs (CPU: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//'))"
make -s -C tests/c native native-small VFLAGS="$werror" | tee "$log/native"

emu_line="emulated: skipped"
case $(uname -m) in
x86_64|amd64)
    venv="$root/.venv-kernels"
    rm -rf "$venv"
    if python3 -m venv "$venv" && "$venv/bin/pip" install -q 'cmeel-simde>=0.8.2'; then
        echo "== 10-kernels: emulated runs (SIMDe from cmeel-simde)"
        make -s -C tests/c emu emu-small emu-intrinsics VFLAGS="$werror" PYTHON="$venv/bin/python" \
            | tee "$log/emu"
        emu_line=""
    else
        emu_line="emulated: skipped (no venv, or pip install cmeel-simde failed)"
    fi
    rm -rf "$venv"
    ;;
*)
    emu_line="emulated: skipped (the emulation covers x86 kernels; this is $(uname -m))"
    ;;
esac

echo "== 10-kernels: kernel levels, native and emulated"
if [ -x "$root/.venv/bin/python" ]; then
    echo "   utf8pfx.isa() = $(cd /tmp && "$root/.venv/bin/python" -c 'import utf8pfx; print(utf8pfx.isa())' 2>/dev/null || echo '?')"
fi
grep -h "kernel tables:" "$log/native" "$log/emu" | sed 's/^/   /' || true
grep -h "^emulated intrinsics:\|^emulated build:" "$log/emu" | sort -u | sed 's/^/   /' || true
[ -z "$emu_line" ] || echo "   $emu_line"
# the one line: tables run natively / emulated, encode and decode together
nat=$(sed -n 's/.*kernel tables: native:\([^;]*\);.*/\1/p' "$log/native" | tr ' ' '\n' | awk 'NF && !s[$0]++' | tr '\n' ' ' | sed 's/ *$//')
emu=$(sed -n 's/.*; emulated:\([^(;[]*\).*/\1/p' "$log/emu" | tr ' ' '\n' | awk 'NF && $0 != "none" && !s[$0]++' | tr '\n' ' ' | sed 's/ *$//')
echo "== kernel levels: native: ${nat:-none}; emulated: ${emu:-none${emu_line:+ ($emu_line)}}"
make -s -C tests/c clean-verify >/dev/null
