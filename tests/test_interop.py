"""Each wire-format preset proven byte-exact both ways by the real
implementation of the format: protobuf (upb), fastavro, thrift (binary and
compact protocols), kafka-python, and Java's DataInputStream.readUTF /
DataOutputStream.writeUTF through javac/java.

A peer that is not installed is skipped with the reason (``pytest -rs``
prints it); ``pip install '.[interop]'`` brings the Python ones, Debian's
``default-jdk-headless`` the JDK (.ci/steps/60-interop.sh does both).
Hypothesis drives the strings."""
import io
import os
import shutil
import struct
import subprocess
import tempfile

import pytest
from hypothesis import given
from hypothesis import strategies as st

from utf8pfx import BufferReader, BufferWriter, decode, decode_all, encode
from utf8pfx.testing import PREFIX_MAX, leb128, reference_body, strings

HERE = os.path.dirname(os.path.abspath(__file__))


def fitting(prefix, encoding="utf-8", surrogates=False, **kw):
    """strings() whose body fits the preset (the over-long ones are tested
    for OverflowError elsewhere)."""
    errors = "surrogatepass" if surrogates else "strict"
    return strings(prefix, encoding, surrogates=surrogates, **kw).filter(
        lambda s: len(reference_body(s, encoding, errors)) <= PREFIX_MAX[prefix])


def texts(prefix, encoding="utf-8", surrogates=False, max_size=12):
    return st.lists(fitting(prefix, encoding, surrogates), max_size=max_size)


# ---- protobuf (varint) -------------------------------------------------------

@pytest.fixture(scope="module")
def pb():
    pytest.importorskip("google.protobuf", reason="protobuf not installed (pip install protobuf)")
    from google.protobuf.internal import api_implementation

    from utf8pfx._peers import strings_message_class

    print("protobuf implementation:", api_implementation.Type())
    return strings_message_class()  # repeated string s = 1


@given(xs=texts("varint"))
def test_protobuf_parses_ours(pb, xs):
    blob = b"".join(b"\x0a" + encode(x) for x in xs)  # tag 1, wire type 2
    assert list(pb.FromString(blob).s) == xs


@given(xs=texts("varint"))
def test_we_parse_protobuf(pb, xs):
    data = pb(s=xs).SerializeToString()
    w = BufferWriter()
    for x in xs:
        w.write_raw(b"\x0a")
        w.write_string(x)
    assert w.getvalue() == data  # byte-exact
    got = []
    with BufferReader(data) as r:
        while r.remaining:
            assert r.read_raw(1) == b"\x0a"
            got.append(r.read_string())
    assert got == xs


# ---- Avro (zigzag) -----------------------------------------------------------

RECORD = {"type": "record", "name": "Person", "fields": [
    {"name": "name", "type": "string"},
    {"name": "city", "type": "string"},
    {"name": "note", "type": "string"},
]}


@pytest.fixture(scope="module")
def avro():
    fastavro = pytest.importorskip("fastavro", reason="fastavro not installed (pip install fastavro)")
    return fastavro, fastavro.parse_schema("string"), fastavro.parse_schema(RECORD)


@given(x=strings("zigzag"))
def test_avro_string_both_ways(avro, x):
    fastavro, s_schema, _ = avro
    out = io.BytesIO()
    fastavro.schemaless_writer(out, s_schema, x)
    assert out.getvalue() == encode(x, prefix="zigzag")
    assert decode(out.getvalue(), prefix="zigzag") == x
    assert fastavro.schemaless_reader(io.BytesIO(encode(x, prefix="zigzag")), s_schema) == x


@given(a=strings("zigzag"), b=strings("zigzag"), c=strings("zigzag"))
def test_avro_record_both_ways(avro, a, b, c):
    fastavro, _, r_schema = avro
    out = io.BytesIO()
    fastavro.schemaless_writer(out, r_schema, {"name": a, "city": b, "note": c})
    w = BufferWriter(prefix="zigzag")
    w.write_strings([a, b, c])
    assert w.getvalue() == out.getvalue()
    assert decode_all(out.getvalue(), prefix="zigzag") == [a, b, c]
    rec = fastavro.schemaless_reader(io.BytesIO(w.getvalue()), r_schema)
    assert rec == {"name": a, "city": b, "note": c}


# ---- Thrift (binary: i32be, compact: varint) ----------------------------------

@pytest.fixture(scope="module")
def thrift():
    pytest.importorskip("thrift", reason="thrift not installed (pip install thrift)")
    from thrift.protocol import TBinaryProtocol, TCompactProtocol
    from thrift.Thrift import TType
    from thrift.transport import TTransport
    return TBinaryProtocol.TBinaryProtocol, TCompactProtocol.TCompactProtocol, TType, TTransport


@given(xs=texts("i32be"))
def test_thrift_binary_both_ways(thrift, xs):
    TBinary, _, _, TTransport = thrift
    t = TTransport.TMemoryBuffer()
    p = TBinary(t)
    for x in xs:
        p.writeString(x)
    w = BufferWriter(prefix="i32be")
    w.write_strings(xs)
    assert w.getvalue() == t.getvalue()
    assert decode_all(t.getvalue(), prefix="i32be") == xs
    p = TBinary(TTransport.TMemoryBuffer(w.getvalue()))
    assert [p.readString() for _ in xs] == xs


def _compact_list(n):
    # field 1 of type LIST (delta 1 << 4 | 9), then the list header for STRING (8)
    return b"\x19" + (bytes([n << 4 | 8]) if n < 15 else b"\xf8" + leb128(n))


@given(xs=texts("varint", max_size=20))
def test_thrift_compact_both_ways(thrift, xs):
    _, TCompact, TType, TTransport = thrift
    t = TTransport.TMemoryBuffer()
    p = TCompact(t)
    p.writeStructBegin("S")
    p.writeFieldBegin("s", TType.LIST, 1)
    p.writeListBegin(TType.STRING, len(xs))
    for x in xs:
        p.writeString(x)
    p.writeListEnd()
    p.writeFieldEnd()
    p.writeFieldStop()
    p.writeStructEnd()
    w = BufferWriter()
    w.write_strings(xs)
    head = _compact_list(len(xs))
    assert t.getvalue() == head + w.getvalue() + b"\x00"
    p = TCompact(TTransport.TMemoryBuffer(head + w.getvalue() + b"\x00"))
    p.readStructBegin()
    assert p.readFieldBegin()[1:] == (TType.LIST, 1)
    assert p.readListBegin() == (TType.STRING, len(xs))
    assert [p.readString() for _ in xs] == xs


# ---- Kafka (COMPACT_[NULLABLE_]STRING: varint+1; STRING: u16be) ----------------

@pytest.fixture(scope="module")
def kafka():
    pytest.importorskip("kafka", reason="kafka-python not installed (pip install kafka-python)")
    try:
        from kafka.protocol.old.types import CompactString, String  # kafka-python 3.x
    except ImportError:
        from kafka.protocol.types import CompactString, String  # kafka-python 2.x
    return CompactString("utf-8"), String("utf-8")


@given(xs=st.lists(st.none() | strings("varint+1"), max_size=12))
def test_kafka_compact_string_both_ways(kafka, xs):
    compact, _ = kafka
    theirs = b"".join(compact.encode(x) for x in xs)
    w = BufferWriter(prefix="varint+1")
    w.write_strings(xs)
    assert w.getvalue() == theirs
    assert decode_all(theirs, prefix="varint+1") == xs
    data = io.BytesIO(w.getvalue())
    assert [compact.decode(data) for _ in xs] == xs


@given(xs=st.lists(strings("u16be", boundaries=False), max_size=12))
def test_kafka_string_both_ways(kafka, xs):
    _, string = kafka  # INT16 length: the same bytes as u16be up to 32767
    theirs = b"".join(string.encode(x) for x in xs)
    w = BufferWriter(prefix="u16be")
    w.write_strings(xs)
    assert w.getvalue() == theirs
    data = io.BytesIO(w.getvalue())
    assert [string.decode(data) for _ in xs] == xs


# ---- Java (u16be + mutf-8: DataOutput.writeUTF / DataInput.readUTF) ----------

class Java:
    def __init__(self, workdir):
        src = os.path.join(HERE, "interop", "JavaUTF.java")
        subprocess.run(["javac", "-d", workdir, src], check=True, capture_output=True)
        self.proc = subprocess.Popen(["java", "-Xshare:auto", "-cp", workdir, "JavaUTF"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def _read(self, n):
        b = self.proc.stdout.read(n)
        assert len(b) == n, "java peer ended early"
        return b

    def _int(self):
        return struct.unpack(">i", self._read(4))[0]

    def _error(self):
        n = struct.unpack(">H", self._read(2))[0]
        return RuntimeError(self._read(n).decode("utf-8", "replace"))

    def read_utf(self, blob, n):
        """Java's readUTF, n times, over blob: the strings as Python str
        (UTF-16 code units joined; pairs become one code point)."""
        self.proc.stdin.write(struct.pack(">iii", 1, len(blob), n) + blob)
        self.proc.stdin.flush()
        if self._int() < 0:
            raise self._error()
        out = []
        for _ in range(n):
            k = self._int()
            out.append(self._read(2 * k).decode("utf-16-be", "surrogatepass"))
        return out

    def write_utf(self, xs):
        """Java's writeUTF of each str (as its UTF-16 code units)."""
        msg = [struct.pack(">ii", 2, len(xs))]
        for x in xs:
            units = x.encode("utf-16-be", "surrogatepass")
            msg.append(struct.pack(">i", len(units) // 2) + units)
        self.proc.stdin.write(b"".join(msg))
        self.proc.stdin.flush()
        n = self._int()
        if n < 0:
            raise self._error()
        return self._read(n)

    def close(self):
        try:
            self.proc.stdin.write(struct.pack(">i", 0))
            self.proc.stdin.close()
        finally:
            self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def java():
    if not (shutil.which("javac") and shutil.which("java")):
        pytest.skip("javac/java not found (Debian: apt-get install default-jdk-headless)")
    with tempfile.TemporaryDirectory() as d:
        j = Java(d)
        try:
            yield j
        finally:
            j.close()


def units(s):
    return s.encode("utf-16-be", "surrogatepass")


@pytest.mark.slow  # a JVM subprocess: CI runs it (60-interop.sh, pytest -m slow)
@given(xs=texts("u16be", "mutf-8", surrogates=True))
def test_java_reads_ours(java, xs):
    w = BufferWriter(prefix="u16be", encoding="mutf-8", errors="surrogatepass")
    w.write_strings(xs)
    got = java.read_utf(w.getvalue(), len(xs))
    assert [units(g) for g in got] == [units(x) for x in xs]


@pytest.mark.slow  # a JVM subprocess: CI runs it (60-interop.sh, pytest -m slow)
@given(xs=texts("u16be", "mutf-8", surrogates=True))
def test_we_read_java(java, xs):
    blob = java.write_utf(xs)
    w = BufferWriter(prefix="u16be", encoding="mutf-8", errors="surrogatepass")
    w.write_strings(xs)
    assert w.getvalue() == blob  # byte-exact
    got = decode_all(blob, "surrogatepass", prefix="u16be", encoding="mutf-8")
    # Java strings are UTF-16: a surrogate pair written by Java reads back as
    # one supplementary code point, the same code units
    assert [units(g) for g in got] == [units(x) for x in xs]


@pytest.mark.slow  # a JVM subprocess: CI runs it (60-interop.sh, pytest -m slow)
@given(xs=texts("u16be", "mutf-8"))
def test_java_strict_roundtrip(java, xs):
    """Without lone surrogates the default handler works both ways."""
    w = BufferWriter(prefix="u16be", encoding="mutf-8")
    w.write_strings(xs)
    assert java.write_utf(xs) == w.getvalue()
    assert java.read_utf(w.getvalue(), len(xs)) == xs
    assert decode_all(w.getvalue(), prefix="u16be", encoding="mutf-8") == xs


def test_java_too_long(java):
    s = "\u00e9" * 32768  # 65536 bytes of MUTF-8
    with pytest.raises(RuntimeError, match="UTFDataFormatException"):
        java.write_utf([s])
    w = BufferWriter(prefix="u16be", encoding="mutf-8")
    with pytest.raises(OverflowError):
        w.write_string(s)
    assert len(w) == 0
    ok = "\u00e9" * 32767 + "a"  # 65535 bytes: the largest writeUTF takes
    assert java.write_utf([ok]) == encode(ok, prefix="u16be", encoding="mutf-8")
