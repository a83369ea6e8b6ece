#!/usr/bin/env bash
# Every wire-format preset against the real implementation of its
# format (protobuf/upb, fastavro, thrift, kafka-python, Java readUTF/writeUTF).
# A fresh venv with the `interop` extra; a peer that cannot be installed is
# skipped with the reason printed (pytest -rs), never failed.
set -euo pipefail
root=$(pwd)
venv="$root/.venv-interop"
export CI=${CI:-true}
echo "interop: fresh venv at $venv"
rm -rf "$venv"
python3 -m venv "$venv"
# (pip's warnings about unused local index folders are noise here)
"$venv/bin/pip" install -q '.[test]' 2> >(grep -v '^WARNING: Location' >&2)
for peer in protobuf fastavro thrift kafka-python; do
    if ! "$venv/bin/pip" install -q "$peer" >/dev/null 2>&1; then
        echo "interop: SKIP $peer: pip could not install it (its tests will be skipped)"
    fi
done
if ! command -v javac >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        echo "interop: javac missing: apt-get install default-jdk-headless"
        (apt-get install -y -qq default-jdk-headless >/dev/null 2>&1 \
         || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq default-jdk-headless >/dev/null 2>&1; }) \
         || echo "interop: SKIP Java: default-jdk-headless could not be installed"
    else
        echo "interop: SKIP Java: no javac and no apt-get as root to install default-jdk-headless"
    fi
fi
command -v javac >/dev/null 2>&1 && echo "interop: $(javac -version 2>&1)"
"$venv/bin/pip" list 2>/dev/null | grep -iE '^(protobuf|fastavro|thrift|kafka-python) ' || true
echo "interop: pytest tests/test_interop.py"
(cd "$root" && "$venv/bin/pytest" -q -rs -p no:cacheprovider -m "" \
    tests/test_interop.py)
rm -rf "$venv"
