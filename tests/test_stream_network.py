"""StreamReader over a real socket: examples/stream_server.py's asyncio
server writes records with a StreamWriter onto the transport, its client
feeds whatever chunks the kernel delivers to a push-mode StreamReader.
Every record must arrive intact and in order, including one larger than
the socket's buffers (split by the kernel into many chunks), non-ASCII ones
and the varint+1 null marker; a stream cut off inside a record must end in
the reader's error, not in a short list.
"""
import asyncio
import os
import sys

import pytest

from utf8pfx import encode

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(HERE), "examples")
if not os.path.exists(os.path.join(EXAMPLES, "stream_server.py")):
    pytest.skip("examples/ is not next to tests/", allow_module_level=True)
sys.path.insert(0, EXAMPLES)
import stream_server  # noqa: E402


@pytest.mark.parametrize("prefix", ["varint+1", "u32le"])
def test_records_arrive_intact_over_tcp(prefix):
    records = stream_server.sample_records(3000)
    if prefix != "varint+1":  # only varint+1 has a null marker
        records = ["" if s is None else s for s in records]
    big = max((s for s in records if s is not None), key=len)
    assert len(big.encode()) > 4 << 20
    got, chunks = asyncio.run(stream_server.round_trip(records, prefix=prefix))
    assert len(got) == len(records)
    assert got == records
    # the big record did not come in one piece: the reader stitched it
    assert chunks > 8


def test_small_flushes_and_slices():
    """Many tiny flushes: records cut at every place by the writer's
    flush_size as well as by the kernel."""
    records = stream_server.sample_records(500)
    records[500 // 3] = "x\u00e9" * 5000
    got, _ = asyncio.run(stream_server.round_trip(records, prefix="varint+1", flush_size=7,
                                                  slice_size=3))
    assert got == records


def test_stream_cut_inside_a_record_is_an_error():
    blob = encode("first") + encode("second \u00e9" * 1000)

    async def run():
        async def handle(reader, writer):
            writer.write(blob[:-3])  # the connection ends inside the second record
            await writer.drain()
            writer.close()
            await writer.wait_closed()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        try:
            return await stream_server.fetch_records(server.sockets[0].getsockname()[1])
        finally:
            server.close()
            await server.wait_closed()

    with pytest.raises(ValueError) as ei:
        asyncio.run(run())
    assert (ei.value.data_offset, ei.value.record_index) == (len(encode("first")), 1)
