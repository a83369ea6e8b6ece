"""utf8pfx over a real socket: an asyncio server streams records, a client
reads them with a push-mode StreamReader.

The server (``asyncio.start_server`` on 127.0.0.1, a port the kernel picks)
writes the records of each connection with a ``StreamWriter`` whose sink is
the connection's transport, and waits for the transport to drain between
slices of records, so its memory stays about ``flush_size`` plus one slice
however many records there are.  The client is a plain
``asyncio.Protocol``: ``data_received`` feeds each chunk, whatever size the
kernel delivered, to a ``StreamReader()`` and takes the complete records it
holds (``read_strings()`` before the end of the stream returns those, and
keeps a record cut in two until its rest arrives); ``eof_received`` and
``connection_lost`` call ``feed_eof()``, after which a record cut off by the
end of the stream is an error instead of being waited for.

Run it::

    python examples/stream_server.py [records]

It sends ``records`` (default 10000) strings, some non-ASCII, one of a few
MiB and a ``None`` (the ``varint+1`` preset's null marker) and checks that
the client got them all, intact and in order.
"""
import asyncio
import sys

from utf8pfx import StreamReader, StreamWriter


class _TransportSink:
    """StreamWriter's sink: the bytes of each flush go to the transport.

    ``StreamWriter`` hands ``write`` a memoryview it releases as soon as
    ``write`` returns, and a transport may keep what it is given in its own
    buffer until the socket takes it: the bytes are copied first."""

    def __init__(self, writer):
        self._writer = writer

    def write(self, view):
        self._writer.write(bytes(view))
        return len(view)


async def serve_records(records, *, prefix="varint", flush_size=1 << 16, slice_size=256):
    """Starts the server; every connection gets `records`.  Returns the
    asyncio Server (its socket's port: server.sockets[0].getsockname()[1])."""

    async def handle(reader, writer):
        try:
            sw = StreamWriter(_TransportSink(writer), flush_size=flush_size, prefix=prefix)
            for i in range(0, len(records), slice_size):
                sw.write_strings(records[i:i + slice_size])
                # the transport's buffer is what is waiting for the socket:
                # waiting here keeps it bounded (asyncio's flow control)
                await writer.drain()
            sw.close()  # the last bytes; the transport itself is not closed
            await writer.drain()
        finally:
            writer.close()
            await writer.wait_closed()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


class RecordClient(asyncio.Protocol):
    """Feeds what arrives to a push-mode StreamReader; `done` gets the
    records (or the reader's error) when the connection ends."""

    def __init__(self, prefix="varint"):
        self.reader = StreamReader(prefix=prefix)
        self.records = []
        self.chunks = 0
        self.done = asyncio.get_running_loop().create_future()

    def data_received(self, data):
        self.chunks += 1
        try:
            self.reader.feed(data)
            # every complete record held; an incomplete tail stays held
            self.records.extend(self.reader.read_strings())
        except Exception as e:  # a bad stream: stop reading it
            self._finish(e)

    def eof_received(self):
        self._finish(None)
        return False  # let the transport close

    def connection_lost(self, exc):
        self._finish(exc)

    def _finish(self, exc):
        if self.done.done():
            return
        if exc is None:
            try:
                self.reader.feed_eof()
                # the end of the stream: a record cut off now raises
                self.records.extend(self.reader.read_strings())
            except Exception as e:
                exc = e
        if exc is None:
            self.done.set_result(self.records)
        else:
            self.done.set_exception(exc)


async def fetch_records(port, *, prefix="varint"):
    """Connects to the server and returns the records it sent, with the
    number of chunks data_received got."""
    loop = asyncio.get_running_loop()
    transport, client = await loop.create_connection(
        lambda: RecordClient(prefix), "127.0.0.1", port)
    try:
        records = await client.done
    finally:
        transport.close()
    return records, client.chunks


async def round_trip(records, *, prefix="varint", **server_options):
    """Serves `records`, fetches them once; returns (received, chunks)."""
    server = await serve_records(records, prefix=prefix, **server_options)
    try:
        port = server.sockets[0].getsockname()[1]
        return await fetch_records(port, prefix=prefix)
    finally:
        server.close()
        await server.wait_closed()


def sample_records(n):
    """n records: ASCII and non-ASCII, an empty one, a None (varint+1's null
    marker) and one of 5 MiB, larger than a socket's buffers."""
    out = []
    for i in range(n):
        out.append(["rec %d" % i, "h\u00e9llo w\u00f6rld %d" % i, "\u65e5\u672c\u8a9e %d" % i,
                    "\U0001F600 %d" % i, ""][i % 5])
    out[n // 2] = None
    out[n // 3] = "\u00e9\u20ac\U0001F600x" * (1 << 19)  # 5 MiB of UTF-8
    return out


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 10000
    records = sample_records(n)
    got, chunks = asyncio.run(round_trip(records, prefix="varint+1"))
    if got != records:
        print("MISMATCH: %d records sent, %d received" % (len(records), len(got)))
        return 1
    print("%d records received intact in %d chunks" % (len(got), chunks))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
