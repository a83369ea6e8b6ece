#!/usr/bin/env bash
# Arrow in/out against pyarrow, polars and nanoarrow, and the Dask
# example on a LocalCluster of 2 worker processes.  A fresh venv with the
# package and its `test`, `arrow` and `dask` extras; skips (exit 0, with the
# reason) when those cannot be installed.  A few minutes on 2 cores.
set -euo pipefail
root=$(pwd)
venv="$root/.venv-arrow"
rm -rf "$venv"
python3 -m venv "$venv"
if ! "$venv/bin/pip" install -q '.[test,arrow,dask]'; then
    echo "SKIP 70-arrow: could not install the test, arrow and dask extras (pyarrow, polars, nanoarrow, dask[dataframe], distributed)"
    exit 0
fi
"$venv/bin/python" -c 'import pyarrow, polars, dask, distributed; print("pyarrow", pyarrow.__version__, "polars", polars.__version__, "dask", dask.__version__, "distributed", distributed.__version__)'
# the corpus-backed parts (the Dask source column) use ../shared when present
echo "+ pytest tests/test_arrow_in.py tests/test_arrow_out.py tests/test_arrow_in_producer.py tests/test_dask.py tests/test_docs.py"
(cd "$root" && timeout 900 "$venv/bin/pytest" -q -p no:cacheprovider -rs \
    tests/test_arrow_in.py tests/test_arrow_out.py tests/test_arrow_in_producer.py tests/test_dask.py tests/test_docs.py)
# the example as a user runs it (LocalCluster of 2 worker processes)
echo "+ python examples/dask_blobs.py"
(cd /tmp && timeout 300 "$venv/bin/python" "$root/examples/dask_blobs.py")
