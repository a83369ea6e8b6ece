"""The command line: utf8pfx encode / decode / inspect / bench.

Every expected blob, line, offset and count here is computed from CPython's
own codec and the pure-Python reference of tests/support/reference.py (its VInt and
storage kinds pinned to hand-written values), or written out by hand;
nothing is taken from the command line or the C core under test.  Most tests call main() in
the test process (fast); a few run ``python -m utf8pfx`` in a child process
(stdin/stdout plumbing, peak memory).
"""
import io
import json
import os
import re
import sys

import pytest
from support.reference import RefError, pfx, ref_encode, ref_encode_many, ref_read_string, vint
from support.subproc import run_python

import utf8pfx
from utf8pfx import _reference, _stream
from utf8pfx.__main__ import main, split_lines, storage_kind

CHUNKS = [1, 2, 3, 7, 64, 1 << 20]  # bytes read at a time: 1 puts every boundary mid-record

LINES = ["plain", "", "Grüße", "東京", "😀 ok", "tab\tinside", "x" * 300, "é" * 200 + "€"]


class Result:
    def __init__(self, rc, out, err):
        self.rc, self.out, self.err = rc, out, err


def cli(*args, stdin=b""):
    """main(args) in this process, with stdin/stdout/stderr captured."""
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    sys.stderr = io.StringIO()
    try:
        rc = main([str(a) for a in args])
        sys.stdout.flush()
        return Result(rc, sys.stdout.buffer.getvalue(), sys.stderr.getvalue())
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


def has_presets():
    try:
        utf8pfx.BufferWriter(prefix="varint")
        return True
    except TypeError:
        return False


# --- encode ------------------------------------------------------------------

def test_default_encodes_the_sample_and_summarises():
    from importlib import resources

    text = (resources.files("utf8pfx") / "data/sample.txt").read_text(encoding="utf-8")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    r = cli("encode")
    assert r.rc == 0, r.err
    out = r.out.decode()
    assert "source: built-in sample" in out
    assert f"strings: {len(lines)}\n" in out
    assert f"code points: {sum(map(len, lines))}\n" in out
    assert f"UTF-8 bytes: {sum(len(s.encode()) for s in lines)}\n" in out
    assert f"blob bytes: {len(ref_encode_many(lines))}\n" in out
    kinds = ", ".join(f"{k} {[_reference.storage_kind(s) for s in lines].count(k)}"
                      for k in ("ascii", "ucs1", "ucs2", "ucs4"))
    assert f"storage kinds: {kinds}\n" in out
    # the sample covers every storage kind
    kinds_seen = [_reference.storage_kind(s) for s in lines]
    assert all(kinds_seen) and len(set(kinds_seen)) == 4


def test_the_sample_can_be_written_too(tmp_path):
    from importlib import resources

    raw = (resources.files("utf8pfx") / "data/sample.txt").read_bytes()
    r = cli("encode", "-o", tmp_path / "s.bin")
    assert r.rc == 0, r.err
    assert (tmp_path / "s.bin").read_bytes() == ref_encode_many(split_ref(raw.decode()))


def split_ref(text):
    parts = text.split("\n")
    return parts[:-1] if parts[-1] == "" else parts


@pytest.mark.parametrize("chunk", CHUNKS)
@pytest.mark.parametrize("final_newline", [True, False])
def test_encode_file_in_chunks(tmp_path, chunk, final_newline):
    src = tmp_path / "in.txt"
    src.write_bytes(("\n".join(LINES) + ("\n" if final_newline else "")).encode())
    out = tmp_path / "out.bin"
    r = cli("encode", src, "-o", out, "--chunk-size", chunk)
    assert r.rc == 0, r.err
    assert r.out == b"" and r.err == ""
    assert out.read_bytes() == ref_encode_many(LINES)


def test_encode_keeps_carriage_returns_and_empty_lines(tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(b"a\r\n\r\n\nb")
    r = cli("encode", src, "-o", tmp_path / "o.bin")
    assert r.rc == 0
    assert (tmp_path / "o.bin").read_bytes() == b"\x02a\r\x01\r\x00\x01b"


def test_encode_empty_input_is_an_empty_blob(tmp_path):
    (tmp_path / "e.txt").write_bytes(b"")
    r = cli("encode", tmp_path / "e.txt", "-o", tmp_path / "e.bin")
    assert r.rc == 0 and (tmp_path / "e.bin").read_bytes() == b""


def test_encode_stdin_to_stdout_subprocess():
    r = run_python(["-m", "utf8pfx", "encode", "-"], input="a\nbé\n".encode())
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"\x01a\x03b\xc3\xa9"


def test_encode_summary_goes_to_stderr(tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes("a\nbé\n😀\n".encode())
    r = cli("encode", src, "--summary")
    assert r.rc == 0
    assert r.out == b"\x01a\x03b\xc3\xa9\x04\xf0\x9f\x98\x80"
    assert "strings: 3\n" in r.err and "blob bytes: 11\n" in r.err
    assert "storage kinds: ascii 1, ucs1 1, ucs2 0, ucs4 1" in r.err


@pytest.mark.parametrize("chunk", [1, 5, 1 << 20])
def test_invalid_utf8_input_reports_line_and_offset(tmp_path, chunk):
    src = tmp_path / "bad.txt"
    src.write_bytes(b"ok\nfine\nbad \xff byte\n")
    out = tmp_path / "x.bin"
    r = cli("encode", src, "-o", out, "--chunk-size", chunk)
    assert r.rc == 1
    assert "line 3:" in r.err and "offset 12" in r.err and "ff" in r.err
    assert not out.exists()
    assert os.listdir(tmp_path) == ["bad.txt"]  # no temporary file left behind
    # with surrogateescape the bytes survive into the blob as themselves
    r = cli("encode", src, "-o", tmp_path / "y.bin", "--errors", "surrogateescape")
    assert r.rc == 0, r.err
    assert (tmp_path / "y.bin").read_bytes() == b"\x02ok\x04fine\x0abad \xff byte"


def test_bad_data_leaves_an_existing_output_untouched(tmp_path):
    out = tmp_path / "keep.bin"
    out.write_bytes(b"previous")
    src = tmp_path / "bad.txt"
    src.write_bytes(b"x\n" * 1000 + b"\xc3\n")
    r = cli("encode", src, "-o", out, "--chunk-size", 100)
    assert r.rc == 1 and "line 1001" in r.err and "offset 2000" in r.err
    assert out.read_bytes() == b"previous"
    assert sorted(os.listdir(tmp_path)) == ["bad.txt", "keep.bin"]


def test_output_file_gets_normal_permissions(tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(b"a\n")
    umask = os.umask(0o022)
    try:
        assert cli("encode", src, "-o", tmp_path / "o.bin").rc == 0
    finally:
        os.umask(umask)
    if os.name == "posix":
        assert (tmp_path / "o.bin").stat().st_mode & 0o777 == 0o644


@pytest.mark.skipif(not os.path.exists("/dev/null") or os.name != "posix", reason="POSIX only")
def test_output_to_a_device_or_through_a_symlink(tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(b"a\n")
    r = cli("encode", src, "-o", "/dev/null")
    assert r.rc == 0 and os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    target = tmp_path / "real.bin"
    target.write_bytes(b"old")
    link = tmp_path / "link.bin"
    link.symlink_to(target)
    assert cli("encode", src, "-o", link).rc == 0
    assert link.is_symlink() and target.read_bytes() == b"\x01a"


def test_json_lines_encode(tmp_path):
    strings = ["line\nbreak", "quote \" and \\", "\u00e9\u6771\U0001F600", ""]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(s) + "\n" for s in strings) + "\n  \n", encoding="utf-8")
    r = cli("encode", "--json", src, "-o", tmp_path / "o.bin", "--chunk-size", 3)
    assert r.rc == 0, r.err
    assert (tmp_path / "o.bin").read_bytes() == ref_encode_many(strings)


def test_json_lone_surrogate_needs_an_error_handler(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text('"ok"\n"a\\ud800b"\n', encoding="utf-8")
    r = cli("encode", "--json", src, "-o", tmp_path / "o.bin")
    assert r.rc == 1
    assert "record 2" in r.err and "surrogates not allowed" in r.err
    assert not (tmp_path / "o.bin").exists()
    r = cli("encode", "--json", src, "-o", tmp_path / "o.bin", "--errors", "surrogatepass")
    assert r.rc == 0
    assert (tmp_path / "o.bin").read_bytes() == b"\x02ok\x05a\xed\xa0\x80b"


@pytest.mark.parametrize("line, what", [("42", "int"), ("null", "null"), ('["a"]', "list"),
                                        ('"unterminated', "not JSON")])
def test_json_rejects_what_is_not_a_string(tmp_path, line, what):
    src = tmp_path / "in.jsonl"
    src.write_text('"fine"\n' + line + "\n", encoding="utf-8")
    r = cli("encode", "--json", src, "-o", tmp_path / "o.bin")
    assert r.rc == 1
    assert "line 2" in r.err and what in r.err


# --- decode ------------------------------------------------------------------

@pytest.mark.parametrize("chunk", CHUNKS)
def test_decode_in_chunks_matches_the_codec(tmp_path, chunk):
    blob = tmp_path / "b.bin"
    blob.write_bytes(ref_encode_many(LINES))
    r = cli("decode", blob, "--chunk-size", chunk)
    assert r.rc == 0, r.err
    assert r.out == "".join(s + "\n" for s in LINES).encode()
    r = cli("decode", blob, "--json", "--chunk-size", chunk)
    assert r.rc == 0
    assert [json.loads(x) for x in r.out.decode().splitlines()] == LINES


def test_round_trip_through_files_subprocess(tmp_path):
    src = tmp_path / "in.txt"
    text = "one\nzwei ü\n三\n🎉\n"
    src.write_text(text, encoding="utf-8")
    blob = tmp_path / "b.bin"
    assert run_python(["-m", "utf8pfx", "encode", str(src), "-o", str(blob)]).returncode == 0
    assert blob.read_bytes() == ref_encode_many(["one", "zwei ü", "三", "🎉"])
    r = run_python(["-m", "utf8pfx", "decode", "-"], input=blob.read_bytes())
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == text


def test_a_record_larger_than_the_chunk(tmp_path):
    big = "Ж" * 50_000  # 100,000 bytes behind a 3-byte prefix
    blob = tmp_path / "b.bin"
    blob.write_bytes(ref_encode("a") + ref_encode(big) + ref_encode("z"))
    r = cli("decode", blob, "--chunk-size", 1000)
    assert r.rc == 0
    assert r.out == ("a\n" + big + "\nz\n").encode()


def test_decode_batches_hold_about_one_chunk_whatever_the_record_lengths():
    # many short records, then long ones: a batch sized by a count of records
    # would take as many long ones as it took short ones, and hold them all
    short, long_ = ["s"] * 5000, ["L" * 10_000] * 200
    blob = ref_encode_many(short + long_ + short)
    chunk = 50_000
    got, biggest = [], 0
    for batch in _stream.batches(io.BytesIO(blob), utf8pfx.StreamReader(), chunk=chunk):
        got.extend(batch)
        biggest = max(biggest, sum(len(s) for s in batch))
    assert got == short + long_ + short
    assert biggest <= chunk + 10_000


def test_decode_json_is_lossless(tmp_path):
    # newlines and (with surrogateescape) bytes that are not UTF-8
    payloads = [b"two\nlines", b"bad \xff", b"\xed\xa0\x80", "ok é".encode()]
    blob = tmp_path / "b.bin"
    blob.write_bytes(b"".join(map(pfx, payloads)))
    r = cli("decode", blob, "--json", "--errors", "surrogateescape")
    assert r.rc == 0, r.err
    back = [json.loads(line) for line in r.out.decode("utf-8").splitlines()]
    assert back == [p.decode("utf-8", "surrogateescape") for p in payloads]
    # and it round-trips to the same blob
    jl = tmp_path / "b.jsonl"
    jl.write_bytes(r.out)
    assert cli("encode", "--json", jl, "-o", tmp_path / "again.bin",
               "--errors", "surrogateescape").rc == 0
    assert (tmp_path / "again.bin").read_bytes() == blob.read_bytes()


def test_decode_warns_about_newlines_in_strings(tmp_path):
    blob = tmp_path / "b.bin"
    blob.write_bytes(ref_encode_many(["a\nb", "c"]))
    r = cli("decode", blob)
    assert r.rc == 0 and r.out == b"a\nb\nc\n"
    assert "1 newline" in r.err and "--json" in r.err


def test_decode_text_with_surrogateescape_gives_the_bytes_back(tmp_path):
    blob = tmp_path / "b.bin"
    blob.write_bytes(b"\x02a\xff\x01b")
    assert cli("decode", blob).rc == 1
    r = cli("decode", blob, "--errors", "surrogateescape")
    assert r.rc == 0 and r.out == b"a\xff\nb\n"
    r = cli("decode", blob, "--errors", "replace")
    assert r.rc == 0 and r.out == "a\ufffd\nb\n".encode()


GOOD = ["alpha", "βeta", "gamma"]


def _bad_utf8_blob():
    good = ref_encode_many(GOOD)
    bad = b"\x04ok\xc3("  # 0xc3 then '(' : invalid continuation
    return good + bad + ref_encode("after"), len(good), len(good) + 3


@pytest.mark.parametrize("chunk", CHUNKS)
def test_decode_reports_absolute_offset_of_bad_utf8(tmp_path, chunk):
    data, prefix_at, bad_at = _bad_utf8_blob()
    blob = tmp_path / "b.bin"
    blob.write_bytes(data)
    out = tmp_path / "o.txt"
    r = cli("decode", blob, "-o", out, "--chunk-size", chunk)
    assert r.rc == 1
    assert f"record 3 (prefix at offset {prefix_at})" in r.err
    assert f"invalid UTF-8 at offset {bad_at}" in r.err and "c3" in r.err
    assert not out.exists() and os.listdir(tmp_path) == ["b.bin"]
    # to stdout, everything before the bad record has been written
    r = cli("decode", blob, "--chunk-size", chunk)
    assert r.rc == 1 and r.out == "".join(s + "\n" for s in GOOD).encode()


@pytest.mark.parametrize("chunk", CHUNKS)
def test_decode_truncated_blob(tmp_path, chunk):
    good = ref_encode_many(GOOD)
    blob = tmp_path / "b.bin"
    blob.write_bytes(good + b"\x05abc")  # declares 5 bytes, 3 follow
    r = cli("decode", blob, "--chunk-size", chunk)
    assert r.rc == 1
    assert "record 3" in r.err and f"offset {len(good)}" in r.err
    assert r.out == "".join(s + "\n" for s in GOOD).encode()
    # the same through a pipe, where the size is not known in advance
    r = cli("decode", "-", "--chunk-size", chunk, stdin=good + b"\x05abc")
    assert r.rc == 1 and "record 3" in r.err and f"offset {len(good)}" in r.err
    # a prefix cut in the middle
    r = cli("decode", "-", "--chunk-size", chunk, stdin=good + b"\x80")
    assert r.rc == 1 and f"offset {len(good)}" in r.err


@pytest.mark.parametrize("chunk", CHUNKS)
def test_decode_overlong_varint_mid_stream(tmp_path, chunk):
    good = ref_encode_many(GOOD)
    data = good + b"\xff" * 11 + b"\x01" + ref_encode_many(GOOD) * 50
    r = cli("decode", "-", "--chunk-size", chunk, stdin=data)
    assert r.rc == 1
    assert "record 3" in r.err and f"offset {len(good)}" in r.err and "10 bytes" in r.err


# --- inspect -----------------------------------------------------------------

def test_inspect_lists_records_and_summarises(tmp_path):
    strings = ["a", "bé", "東京", "😀", "x" * 200, ""]
    data = ref_encode_many(strings)
    blob = tmp_path / "b.bin"
    blob.write_bytes(data)
    r = cli("inspect", blob, "--chunk-size", 3)
    assert r.rc == 0, r.err
    out = r.out.decode()
    row_re = re.compile(r"^ *(\d+)  ((?:[0-9a-f]{2} ?)+?) +(\d+)  (\w+) +(.*)$")
    rows = [row_re.match(line).groups() for line in out.splitlines()[1:len(strings) + 1]]
    offset = 0
    for s, row in zip(strings, rows):
        e = s.encode()
        assert int(row[0]) == offset
        assert row[1].strip() == vint(len(e)).hex(" ")
        assert int(row[2]) == len(e)
        assert row[3] == _reference.storage_kind(s)
        offset += len(ref_encode(s))
    assert rows[4][4] == "x" * 48 + "…"
    payload = sum(len(s.encode()) for s in strings)
    assert f"records: {len(strings)}\n" in out
    assert f"bytes: {len(data)} ({len(data) - payload} prefix, {payload} payload)" in out
    assert "kinds: ascii 3, ucs1 1, ucs2 1, ucs4 1\n" in out
    assert "prefix widths: 1 B: 5, 2 B: 1\n" in out
    assert "payload length: min 0, max 200, mean %.1f bytes" % (payload / 6) in out
    dist = out.split("length distribution (payload bytes):\n")[1].splitlines()
    assert [d.split()[:2] for d in dist] == [["0", "1"], ["1", "1"], ["2-3", "1"],
                                             ["4-7", "2"], ["128-255", "1"]]


def test_inspect_hex_and_limit(tmp_path):
    blob = tmp_path / "b.bin"
    blob.write_bytes(ref_encode_many(["héllo", "b", "c"]))
    r = cli("inspect", blob, "--hex", "--limit", "1")
    assert r.rc == 0
    out = r.out.decode()
    assert "68 c3 a9 6c 6c 6f" in out
    assert "(first 1 of 3 records listed" in out
    r = cli("inspect", blob, "--limit", "0")
    assert r.out.decode().lstrip().startswith("source:")


def test_inspect_preview_escapes_control_and_surrogates(tmp_path):
    blob = tmp_path / "b.bin"
    blob.write_bytes(ref_encode_many(["a\nb\tc"]))
    out = cli("inspect", blob).out.decode()
    assert "a\\nb\\tc" in out


def test_inspect_bad_data_reports_what_came_before(tmp_path):
    data, prefix_at, bad_at = _bad_utf8_blob()
    blob = tmp_path / "b.bin"
    blob.write_bytes(data)
    r = cli("inspect", blob, "--chunk-size", 4)
    assert r.rc == 1
    out = r.out.decode()
    assert "records: 3 before the bad data" in out
    assert f"bad data at offset {bad_at}" in out
    assert f"bytes: {prefix_at} " in out
    assert "bytes there: 04 6f 6b c3 28" in out
    assert f"offset {bad_at}" in r.err


# --- usage -------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["encode", "--errors", "no-such-handler"],
    ["decode"],
    ["nonsense"],
    ["decode", "x", "--prefix", "u64"],
    ["decode", "x", "--chunk-size", "0"],
])
def test_usage_errors_exit_2(args):
    r = cli(*args)
    assert r.rc == 2 and "usage:" in r.err


def test_missing_input_is_a_usage_error(tmp_path):
    r = cli("decode", tmp_path / "nope.bin")
    assert r.rc == 2 and "nope.bin" in r.err


def test_unwritable_output_is_a_usage_error(tmp_path):
    (tmp_path / "in.txt").write_bytes(b"a\n")
    r = cli("encode", tmp_path / "in.txt", "-o", tmp_path / "no-such-dir" / "o.bin")
    assert r.rc == 2 and "no-such-dir" in r.err


def test_help_says_json_is_lossless():
    r = cli("decode", "--help")
    assert r.rc == 0
    text = " ".join(r.out.decode().split())
    assert "--json" in text and "lossless" in text and "lone surrogates" in text


def test_split_lines_and_storage_kind():
    assert split_lines("a\nb\n") == ["a", "b"]
    assert split_lines("a\n\n") == ["a", ""]
    assert split_lines("") == []
    assert [storage_kind(s) for s in ("", "a", "é", "€", "😀")] == [
        "ascii", "ascii", "ucs1", "ucs2", "ucs4"]


# --- wire-format presets -------------------------------------------------------

def _mutf8(s):
    # Java's modified UTF-8: NUL as C0 80, supplementary characters as two
    # 3-byte surrogates (CESU-8)
    out = bytearray()
    for ch in s:
        c = ord(ch)
        if c == 0:
            out += b"\xc0\x80"
        elif c > 0xFFFF:
            c -= 0x10000
            out += chr(0xD800 + (c >> 10)).encode("utf-8", "surrogatepass")
            out += chr(0xDC00 + (c & 0x3FF)).encode("utf-8", "surrogatepass")
        else:
            out += ch.encode("utf-8", "surrogatepass")
    return bytes(out)


PRESET_PREFIX = {
    "varint": vint,
    "zigzag": lambda n: vint(2 * n),
    "varint+1": lambda n: vint(n + 1),
    "u16be": lambda n: n.to_bytes(2, "big"),
    "i32be": lambda n: n.to_bytes(4, "big", signed=True),
    "u32le": lambda n: n.to_bytes(4, "little"),
}
PRESET_STRINGS = ["a", "Grüße", "東京", "😀", "nul\x00byte", "y" * 200]


@pytest.mark.skipif(has_presets(), reason="this core has presets; see the tests below")
@pytest.mark.parametrize("flag", [["--prefix", "u16be"], ["--encoding", "mutf-8"],
                                  ["--prefix", "varint"]])
@pytest.mark.parametrize("command", ["encode", "decode", "inspect"])
def test_presets_flags_without_presets_core_exit_2(tmp_path, command, flag):
    f = tmp_path / "in"
    f.write_bytes(b"\x01a")
    out = tmp_path / "out"
    r = cli(command, f, *(["-o", out] if command != "inspect" else []), *flag)
    assert r.rc == 2
    assert flag[0] in r.err and "no wire-format presets" in r.err
    assert not out.exists()


def _skip_without_presets():
    if not has_presets():
        print("utf8pfx's core has no wire-format presets (prefix=/encoding= keywords): "
              "preset CLI tests skipped")
        pytest.skip("the installed utf8pfx core has no wire-format presets "
                    "(BufferWriter(prefix=...) is rejected)")


@pytest.mark.parametrize("encoding", ["utf-8", "mutf-8"])
@pytest.mark.parametrize("prefix", list(PRESET_PREFIX))
@pytest.mark.parametrize("chunk", [1, 1 << 20])
def test_presets_encode_decode_inspect(tmp_path, prefix, encoding, chunk):
    _skip_without_presets()
    enc = _mutf8 if encoding == "mutf-8" else (lambda s: s.encode("utf-8"))
    expected = b"".join(PRESET_PREFIX[prefix](len(enc(s))) + enc(s) for s in PRESET_STRINGS)
    jl = tmp_path / "in.jsonl"
    jl.write_text("".join(json.dumps(s) + "\n" for s in PRESET_STRINGS), encoding="utf-8")
    blob = tmp_path / "b.bin"
    flags = ["--prefix", prefix, "--encoding", encoding, "--chunk-size", chunk]
    r = cli("encode", "--json", jl, "-o", blob, *flags)
    assert r.rc == 0, r.err
    assert blob.read_bytes() == expected
    r = cli("decode", "--json", blob, *flags)
    assert r.rc == 0, r.err
    assert [json.loads(x) for x in r.out.decode().splitlines()] == PRESET_STRINGS
    r = cli("inspect", blob, *flags)
    assert r.rc == 0, r.err
    assert f"records: {len(PRESET_STRINGS)}\n" in r.out.decode()
    # cut inside the last record: bad data at the offset where it starts
    cut = tmp_path / "cut.bin"
    cut.write_bytes(expected[:-1])
    last = len(expected) - len(PRESET_PREFIX[prefix](200)) - 200
    r = cli("decode", cut, *flags)
    assert r.rc == 1 and f"offset {last}" in r.err


def test_presets_a_line_too_long_for_the_prefix_is_bad_data(tmp_path):
    _skip_without_presets()
    src = tmp_path / "long.txt"
    src.write_text("ok\n" + "x" * 70_000 + "\nafter\n", encoding="utf-8")
    out = tmp_path / "o.bin"
    r = cli("encode", src, "-o", out, "--prefix", "u16be", "--chunk-size", 1000)
    assert r.rc == 1 and "line 2:" in r.err and "65535" in r.err
    assert not out.exists()


# --- progress ------------------------------------------------------------------

def test_progress_meter_lines():
    now = [0.0]
    err = io.StringIO()
    p = _stream.Progress("decode", 2_000_000, err, delay=0.5, every=0.2, clock=lambda: now[0])
    p(1000)                    # too early: nothing drawn
    assert err.getvalue() == ""
    now[0] = 1.0
    p(1_000_000)
    assert err.getvalue() == "\rdecode: 1.0 MB of 2.0 MB (50%), 1.0 MB/s\x1b[K"
    now[0] = 1.1
    p(1_500_000)               # within 0.2 s of the last line: not redrawn
    assert err.getvalue().count("\r") == 1
    now[0] = 2.0
    p.close()
    assert err.getvalue().endswith("\rdecode: 1.5 MB of 2.0 MB (75%), 750.0 kB/s\x1b[K\n")


def test_progress_flag_draws_on_stderr(tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(b"line\n" * 20_000)
    r = cli("encode", src, "-o", tmp_path / "o.bin", "--progress", "--chunk-size", "1k")
    assert r.rc == 0
    assert "encode: " in r.err and "of 100.0 kB" in r.err and r.err.endswith("\n")
    r = cli("encode", src, "-o", tmp_path / "o.bin")  # stderr is not a terminal: quiet
    assert r.err == ""


# --- bench ---------------------------------------------------------------------

def test_bench_prints_both_tables():
    from utf8pfx import _bench

    out = io.StringIO()
    assert _bench.main(repeat=1, scale=0.01, out=out) == 0
    text = out.getvalue()
    assert "kernels " + utf8pfx.isa() in text
    writer, reader = text.split("Reader:")
    for table in (writer, reader):
        rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
        assert [r.split("|")[1].strip() for r in rows[1:]] == [w[0] for w in _bench.WORKLOADS]
        for row in rows[1:]:
            cells = [c.strip() for c in row.strip("|").split("|")]
            assert float(cells[3]) > 0
            assert all(float(c.rstrip("x")) > 0 for c in cells[4:])


def test_bench_workloads_have_their_kind():
    from utf8pfx import _bench

    for name, kind, length in _bench.WORKLOADS:
        strings = _bench.make_workload(kind, length, 0.01)
        assert len(strings) >= 2
        if kind != "sample":
            assert all(len(s) == length for s in strings)
            expected = {"ascii": "ascii", "latin1": "ucs1", "cyrillic": "ucs2",
                        "cjk": "ucs2", "emoji": "ucs4"}[kind]
            assert {_reference.storage_kind(s) for s in strings} == {expected}, name


def test_python_m_utf8pfx_bench_runs_the_command_line_module_once():
    """`python -m utf8pfx` runs __main__.py as the module __main__.  Were the
    bench module to import utf8pfx.__main__ (an import cycle), that file would
    run a second time as a module of its own: -X importtime lists every
    module imported, and utf8pfx.__main__ must not be among them."""
    r = run_python(["-X", "importtime", "-m", "utf8pfx", "bench", "--repeat", "1",
                    "--scale", "0.001"])
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    imported = {line.rsplit(b"|", 1)[1].strip().decode()
                for line in r.stderr.splitlines() if line.startswith(b"import time:")}
    assert "utf8pfx._bench" in imported  # the bench ran: a cycle would have shown
    assert "utf8pfx.__main__" not in imported


def test_bench_plot_without_matplotlib_is_a_clear_usage_error(tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "from utf8pfx.__main__ import main\n"
            f"sys.exit(main(['bench', '--plot', {str(tmp_path / 'p.png')!r}]))")
    r = run_python(["-c", code])
    assert r.returncode == 2
    assert b"matplotlib" in r.stderr and b"pip install" in r.stderr
    assert not (tmp_path / "p.png").exists()


def test_bench_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    from utf8pfx import _bench

    rows = []
    for name, kind, length in _bench.WORKLOADS[:2]:
        strings = _bench.make_workload(kind, length, 0.005)
        rows.append((name, kind, 8.0, _bench.measure(strings, 1, {})))
    _bench.save_plot(rows, str(tmp_path / "p.png"), "test")
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- memory ----------------------------------------------------------------------

# The child's own high-water mark of resident memory, in KiB.  VmHWM
# belongs to the process image (ru_maxrss can carry over the parent's peak
# across fork + exec, and pytest's is larger than the CLI's).
HWM = ("def hwm():\n"
       "    for line in open('/proc/self/status'):\n"
       "        if line.startswith('VmHWM:'):\n"
       "            return int(line.split()[1])\n")
PEAK = HWM + """
import sys
from utf8pfx.__main__ import main
rc = main(sys.argv[1:])
print(hwm(), file=sys.stderr)
sys.exit(rc)
"""


def _peak_kib(args):
    r = run_python(["-c", PEAK, *map(str, args)])
    assert r.returncode == 0, r.stderr
    return int(r.stderr.decode().strip().splitlines()[-1])


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux's /proc VmHWM")
@pytest.mark.skipif("libasan" in os.environ.get("LD_PRELOAD", ""),
                    reason="AddressSanitizer keeps freed memory in quarantine: peak RSS grows "
                           "with the input by design (the plain runs check this)")
def test_memory_stays_flat_as_the_input_grows(tmp_path):
    # a mixed block of lines, repeated: 6 MB and 48 MB of text
    block = ("".join(f"{i} plain line, Grüße, Ünïcödé, 東京 {i % 97} 😀\n" for i in range(2000))
             ).encode()
    sizes = {}
    for name, mb in (("small", 6), ("large", 48)):
        path = tmp_path / f"{name}.txt"
        with open(path, "wb") as f:
            for _ in range(mb * 1_000_000 // len(block)):
                f.write(block)
        sizes[name] = path.stat().st_size
    peaks = {}
    for name in ("small", "large"):
        txt, blob, back = (tmp_path / f"{name}{x}" for x in (".txt", ".bin", ".out"))
        peaks["encode", name] = _peak_kib(["encode", txt, "-o", blob])
        peaks["decode", name] = _peak_kib(["decode", blob, "-o", back])
        assert back.read_bytes() == txt.read_bytes()
        back.unlink()
    grown = (sizes["large"] - sizes["small"]) // 1024
    for cmd in ("encode", "decode"):
        extra = peaks[cmd, "large"] - peaks[cmd, "small"]
        # the input grew by ~41 MiB; a program holding it would grow as much
        assert extra < 8 * 1024, (cmd, peaks, grown)
    # the control: reading the whole large file in the same way is visible
    holder = HWM + ("import sys\n"
                    "data = open(sys.argv[1], 'rb').read()\n"
                    "print(hwm(), file=sys.stderr)\n")
    held = {}
    for name in ("small", "large"):
        r = run_python(["-c", holder, str(tmp_path / f"{name}.txt")])
        held[name] = int(r.stderr.decode().strip().splitlines()[-1])
    assert held["large"] - held["small"] > grown * 0.8, (held, peaks)


# --- a checkout without the compiled core ------------------------------------------

def test_unbuilt_checkout_says_how_to_build(tmp_path):
    # a copy of the package's Python files without the compiled core, as in
    # a fresh checkout: importing it must say what is missing and what to do
    import shutil
    import subprocess

    pkg = tmp_path / "utf8pfx"
    pkg.mkdir()
    src = utf8pfx.__path__[0]
    for name in os.listdir(src):
        if name.endswith(".py"):
            shutil.copy(os.path.join(src, name), pkg / name)
    r = subprocess.run(
        [sys.executable, "-S", "-c", "import utf8pfx"], cwd=tmp_path, capture_output=True, text=True
    )
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "build_ext --inplace" in r.stderr


# --- chunked reading, property-based ------------------------------------------------

from hypothesis import given, strategies as st  # noqa: E402
from support.strategies import mixed_char  # noqa: E402


def _good_records_then_error(blob):
    """The strings before the first bad record, and (index, offset) of that
    record, None if all are good: by the reference reader, which accepts
    non-minimal VInts as the reader does by default; the offset is where the
    record starts, or for bad UTF-8 the first bad byte."""
    good, pos = [], 0
    while pos < len(blob):
        try:
            s, pos = ref_read_string(blob, pos)
        except RefError as exc:
            return good, (len(good), exc.offset)
        good.append(s)
    return good, None


def _stream_all(blob, chunk, size=None):
    """What decode reads of blob (chunk bytes at a time, the file's size as
    the reader's max_record when sized): the strings, and (index, offset) of
    the bad data it stopped at (None if none)."""
    reader = utf8pfx.StreamReader(max_record=size)
    got = []
    try:
        for batch in _stream.batches(io.BytesIO(blob), reader, chunk=chunk, size=size):
            got.extend(batch)
    except _stream.BadData as exc:
        return got, (exc.index, exc.offset)
    return got, None


@given(st.lists(st.text(mixed_char, max_size=40), max_size=30), st.integers(1, 40))
def test_chunked_stream_equals_the_codec(strings, chunk):
    blob = b"".join(ref_encode(s, "surrogatepass") for s in strings)
    reader = utf8pfx.StreamReader(errors="surrogatepass")
    got = [s for batch in _stream.batches(io.BytesIO(blob), reader, chunk=chunk) for s in batch]
    assert got == [s.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")
                   for s in strings]


@given(st.lists(st.text(max_size=12), max_size=12), st.binary(min_size=1, max_size=12),
       st.integers(0, 200), st.integers(1, 16), st.booleans())
def test_chunked_stream_reports_the_first_bad_record(strings, noise, where, chunk, sized):
    blob = bytearray(ref_encode_many(strings))
    at = where % (len(blob) + 1)
    blob[at:at + len(noise)] = noise  # overwrite (or append) some bytes
    blob = bytes(blob)
    want, expected = _good_records_then_error(blob)
    got, error = _stream_all(blob, chunk, size=len(blob) if sized else None)
    assert error == expected
    assert got == want
