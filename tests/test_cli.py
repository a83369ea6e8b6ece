"""The command-line interface: python -m utf8pfx encode/decode."""
import pytest
from subproc import run_python

import utf8pfx
from utf8pfx.__main__ import main, split_lines, storage_kind


def run(*args, stdin=None):
    return run_python(["-m", "utf8pfx", *args], input=stdin)


def test_default_encodes_the_sample_and_summarises():
    r = run("encode")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "built-in sample" in out
    for word in ("strings:", "UTF-8 bytes:", "blob bytes:", "storage kinds:"):
        assert word in out
    # the sample covers every storage kind
    kinds = out.split("storage kinds:")[1].splitlines()[0]
    for kind in ("ascii", "ucs1", "ucs2", "ucs4"):
        count = int(kinds.split(kind)[1].split(",")[0])
        assert count > 0, kinds


def test_encode_file_matches_the_writer(tmp_path):
    lines = ["plain", "", "Grüße", "東京", "😀 ok", "tab\tinside"]
    src = tmp_path / "in.txt"
    src.write_bytes(("\n".join(lines) + "\n").encode())
    out = tmp_path / "out.bin"
    r = run("encode", str(src), "-o", str(out))
    assert r.returncode == 0, r.stderr
    w = utf8pfx.BufferWriter()
    w.write_strings(lines)
    assert out.read_bytes() == w.getvalue()


def test_encode_stdin_to_stdout():
    r = run("encode", "-", stdin="a\nbé\n".encode())
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"\x01a\x03b\xc3\xa9"


def test_round_trip_through_decode(tmp_path):
    if not hasattr(utf8pfx, "decode_all"):
        pytest.skip("reader not built")
    src = tmp_path / "in.txt"
    text = "one\nzwei ü\n三\n🎉\n"
    src.write_text(text, encoding="utf-8")
    blob = tmp_path / "b.bin"
    assert run("encode", str(src), "-o", str(blob)).returncode == 0
    r = run("decode", str(blob))
    assert r.returncode == 0, r.stderr
    assert r.stdout.decode() == text


def test_invalid_utf8_input_reports_line(tmp_path):
    src = tmp_path / "bad.txt"
    src.write_bytes(b"ok\nbad \xff byte\n")
    r = run("encode", str(src), "-o", str(tmp_path / "x.bin"))
    assert r.returncode != 0
    # with surrogateescape the bytes survive into the blob as themselves
    r = run("encode", str(src), "-o", str(tmp_path / "y.bin"), "--errors", "surrogateescape")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "y.bin").read_bytes() == b"\x02ok\x0abad \xff byte"


def test_unknown_errors_name_is_a_usage_error(capsys):
    assert main(["encode", "--errors", "no-such-handler"]) == 2
    assert "no-such-handler" in capsys.readouterr().err


def test_split_lines_and_storage_kind():
    assert split_lines("a\nb\n") == ["a", "b"]
    assert split_lines("a\n\n") == ["a", ""]
    assert split_lines("") == []
    assert [storage_kind(s) for s in ("a", "é", "€", "😀")] == ["ascii", "ucs1", "ucs2", "ucs4"]


def test_unbuilt_checkout_says_how_to_build(tmp_path):
    # a copy of the package's Python files without the compiled core, as in
    # a fresh checkout: importing it must say what is missing and what to do
    import shutil
    import subprocess
    import sys

    pkg = tmp_path / "utf8pfx"
    pkg.mkdir()
    src = utf8pfx.__path__[0]
    for name in ("__init__.py", "_version.py", "__main__.py"):
        shutil.copy(f"{src}/{name}", pkg / name)
    r = subprocess.run(
        [sys.executable, "-c", "import utf8pfx"], cwd=tmp_path, capture_output=True, text=True
    )
    assert r.returncode != 0
    assert "ImportError" in r.stderr and "build_ext --inplace" in r.stderr
