#!/usr/bin/env bash
# Valgrind memcheck over a subset: the leak workload (every error
# path, tests/support/leak_workload.py), the export and limit tests and the reader's
# hostile-input tests,
# on README's installed package (.venv).  Fails on any memcheck error or
# definite/indirect leak with a frame in our C code (tools/valgrind_report.py);
# the interpreter's own reports are listed, not failed.  Needs Debian's
# valgrind (installed here if missing); skips with a reason otherwise.
set -euo pipefail
root=$(pwd)
if ! command -v valgrind >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q valgrind >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q valgrind >/dev/null 2>&1; } \
        || true
fi
if ! command -v valgrind >/dev/null 2>&1; then
    echo "SKIP 25-valgrind: valgrind unavailable"; exit 0
fi
py="$root/.venv/bin/python"
[ -x "$py" ] || { echo "SKIP 25-valgrind: README's test venv (.venv) is missing"; exit 0; }
t0=$(date +%s)
vg=(valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect
    --num-callers=40 --error-limit=no)
status=0
run() {  # name, then the command
    local name=$1; shift
    local log="/tmp/utf8pfx-valgrind-$name.log"
    echo "-- valgrind: $name"
    (cd /tmp && PYTHONMALLOC=malloc PYTHONPATH="$root/tests" "${vg[@]}" --log-file="$log" "$@") \
        || { echo "FAIL: the program under valgrind exited non-zero"; status=1; }
    "$py" "$root/tools/valgrind_report.py" "$log" || status=1
}
run workload "$py" "$root/tests/support/leak_workload.py" 150
run pytest "$py" -m pytest -q -p no:cacheprovider --rootdir "$root" \
    "$root/tests/test_robustness_exports.py" "$root/tests/test_robustness_limits.py" \
    "$root/tests/test_reader.py" -k "hostile or export or closed or exports or limit or capacity or reserve"
echo "-- 25-valgrind took $(( $(date +%s) - t0 )) s"
exit $status
