#!/usr/bin/env bash
# Arrow in/out under every wire-format preset (prefix=, encoding=):
# tests/test_arrow_presets.py with pyarrow (README's test venv runs its
# ctypes-producer half only).  A fresh venv with the package, its `test`
# extra and pyarrow; skips (exit 0, with the reason) when pyarrow cannot be
# installed.  About a minute on 2 cores.
set -euo pipefail
root=$(pwd)
venv="$root/.venv-arrow-presets"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q '.[test]'
if ! "$venv/bin/pip" install -q 'pyarrow>=14'; then
    echo "SKIP 72-arrow-presets: could not install pyarrow"
    exit 0
fi
(cd /tmp && "$venv/bin/python" -c 'import pyarrow, utf8pfx; print("pyarrow", pyarrow.__version__, "isa", utf8pfx.isa())')
echo "+ pytest tests/test_arrow_presets.py"
(cd "$root" && CI=true timeout 600 "$venv/bin/pytest" -q -p no:cacheprovider -rs \
    tests/test_arrow_presets.py)
