"""utf8pfx inside Dask: a dask.dataframe string column partitioned over a
LocalCluster of 2 worker processes, each partition serialized to one blob
with the Arrow path on a worker, the writers gathered (they pickle), read
back into Arrow and compared with the source.

Skipped, with the reason printed, where dask/distributed/pyarrow are not
installed (the `dask` extra and .ci/steps/70-arrow.sh install them).
"""
import os
import pickle
import sys

import pytest

pa = pytest.importorskip("pyarrow", reason="pyarrow is not installed (pip install '.[dask]')")
dd = pytest.importorskip("dask.dataframe",
                         reason="dask[dataframe] is not installed (pip install '.[dask]')")
distributed = pytest.importorskip("distributed",
                                  reason="distributed is not installed (pip install '.[dask]')")
cloudpickle = pytest.importorskip("cloudpickle", reason="cloudpickle is not installed")
import pandas as pd  # noqa: E402 (dask[dataframe] brings it)

from utf8pfx import BufferReader, BufferWriter, decode_all  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")
CORPUS = os.path.join(os.environ.get("UTF8PFX_CORPUS_DIR") or os.path.join(
    os.path.dirname(HERE), "..", "shared", "corpus"), "cldr_names.tsv")
sys.path.insert(0, EXAMPLES)
import dask_blobs  # noqa: E402

cloudpickle.register_pickle_by_value(dask_blobs)  # workers need not import examples/


def source_names():
    if os.path.exists(CORPUS):
        with open(CORPUS, encoding="utf-8") as f:
            names = [line.rstrip("\n").split("\t")[-1] for _, line in zip(range(40000), f)]
    else:
        names = ["héllo", "東京", "Zürich", "Ελλάδα", "🙂 ok", ""] * 5000
    names[7] = None  # one null, written as an empty string below
    return names


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=40)
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()


def test_partitions_serialized_on_workers_and_read_back(client):
    names = source_names()
    ddf = dd.from_pandas(pd.DataFrame({"name": pd.Series(names, dtype="string[pyarrow]")}),
                         npartitions=6)
    workers = sorted(client.scheduler_info()["workers"])
    assert len(workers) == 2
    results = dask_blobs.blobs_from_dataframe(client, ddf, "name", nulls="empty",
                                              workers=workers)
    assert len(results) == 6
    pids = {pid for pid, _ in results}
    worker_pids = set(client.run(os.getpid).values())
    # the work ran in both worker processes, none of it in this one
    assert pids == worker_pids and len(pids) == 2 and os.getpid() not in pids
    writers = [w for _, w in results]
    assert all(isinstance(w, BufferWriter) for w in writers)
    back = dask_blobs.read_blobs([w.getvalue() for w in writers])
    expect = ["" if v is None else v for v in names]
    assert back.to_pylist() == expect
    # the same bytes as write_strings on the client, partition by partition
    parts = ddf["name"].compute()
    assert b"".join(w.getvalue() for w in writers) == _client_blob(
        ["" if pd.isna(v) else v for v in parts])


def _client_blob(vals):
    w = BufferWriter()
    w.write_strings(vals)
    return w.getvalue()


def test_blobs_decode_on_workers(client):
    blobs = [_client_blob(["a", "é", "東京"]), _client_blob(["x" * 300, ""])]
    futs = client.map(lambda b: dask_blobs.pa.array(dask_blobs.decode_arrow(b)), blobs)
    arrays = client.gather(futs)
    assert [a.to_pylist() for a in arrays] == [decode_all(b) for b in blobs]


def test_reader_does_not_cross_process_boundaries(client):
    fut = client.submit(lambda: BufferReader(b"\x01a"), pure=False)
    with pytest.raises(Exception) as ei:
        fut.result(timeout=60)
    assert "cannot pickle a utf8pfx.BufferReader" in str(ei.value)
    with pytest.raises(TypeError):
        pickle.dumps(BufferReader(b""))
