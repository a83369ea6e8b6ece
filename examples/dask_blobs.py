"""utf8pfx on Dask: one prefixed blob per partition of a string column.

Each partition of a ``dask.dataframe`` string column is serialized on the
worker that holds it, through the Arrow path (``BufferWriter.write_arrow``:
the column's UTF-8 is copied behind its prefixes, no ``str`` per value); the
blobs (``bytes``, or the ``BufferWriter`` itself: it pickles) come back to
the client, which reads them into Arrow (``decode_arrow``) without a ``str``
per value either.

Run it on a local cluster of 2 worker processes::

    python examples/dask_blobs.py [names.tsv]

On a real cluster, pass the scheduler's address instead of starting a
LocalCluster (``Client("tcp://scheduler:8786")``) and install utf8pfx on
every worker (the same wheel as on the client); the functions below do not
change.  This file must be importable on the workers, or registered with
``cloudpickle.register_pickle_by_value`` (as the test does), since Dask
pickles functions by reference to their module.
"""
import os
import sys

import pyarrow as pa

from utf8pfx import BufferWriter, decode_arrow


def serialize_partition(pdf, column, nulls="error"):
    """One partition (a pandas DataFrame) -> (worker pid, BufferWriter)."""
    w = BufferWriter()
    # pandas >= 2.2 Series export Arrow streams; older pandas: pa.array(...)
    col = pdf[column]
    w.write_arrow(col if hasattr(col, "__arrow_c_stream__") else pa.array(col), nulls=nulls)
    return os.getpid(), w


def blobs_from_dataframe(client, ddf, column, nulls="error", workers=None):
    """Serialize every partition where it lives; returns [(pid, BufferWriter)]
    in partition order.  `workers` (a list of addresses) spreads the
    partitions over those workers in turn instead."""
    parts = client.compute(ddf.to_delayed())
    futs = []
    for i, part in enumerate(parts):
        kw = {}
        if workers:
            kw = dict(workers=[workers[i % len(workers)]], allow_other_workers=False)
        futs.append(client.submit(serialize_partition, part, column, nulls, pure=False, **kw))
    return client.gather(futs)


def read_blobs(blobs):
    """Blobs (bytes-like) -> one pyarrow ChunkedArray, a chunk per blob."""
    return pa.chunked_array([pa.array(decode_arrow(b)) for b in blobs], type=pa.utf8())


def main(argv=None):
    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client, LocalCluster

    argv = sys.argv[1:] if argv is None else argv
    if argv:
        with open(argv[0], encoding="utf-8") as f:
            names = [line.rstrip("\n").split("\t")[-1] for line in f]
    else:
        names = ["héllo", "東京", "Zürich", "Ελλάδα", "🙂 ok"] * 20000
    ddf = dd.from_pandas(pd.DataFrame({"name": pd.Series(names, dtype="string[pyarrow]")}),
                         npartitions=8)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        results = blobs_from_dataframe(client, ddf, "name")
        pids = {pid for pid, _ in results}
        back = read_blobs([w.getvalue() for _, w in results])
    assert back.to_pylist() == names
    total = sum(len(w) for _, w in results)
    print(f"{len(names)} strings in {len(results)} blobs ({total} bytes) from worker "
          f"processes {sorted(pids)}; read back equal to the source")


if __name__ == "__main__":
    main()
