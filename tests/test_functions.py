"""The module-level functions: encode() and utf8_length() against the
pure-Python reference for every handler (a str subclass too, positional and
keyword), decode() refusing trailing data, and what the module exposes.

What they share with the objects is tested with the objects: the bytes
encode() writes, with the writer's (test_writer.py, test_writer_errors.py);
what decode() and decode_all() read, with the reader's (test_reader.py);
vint_size() beside write_vint (test_writer.py).
"""
import pytest
from hypothesis import given, strategies as st

import utf8pfx
from utf8pfx import decode, decode_all
from support.reference import TOTAL_HANDLERS, pfx, ref_encode, utf8
from support.strategies import StrSub, text_for

HANDLERS = ("strict", "surrogateescape") + TOTAL_HANDLERS


def _maybe_sub(data, s):
    return StrSub(s) if data.draw(st.booleans(), label="as str subclass") else s


@pytest.mark.parametrize("errors", HANDLERS)
@given(data=st.data())
def test_encode_and_utf8_length_match_reference(errors, data):
    s = data.draw(text_for(errors), label="s")
    obj = _maybe_sub(data, s)
    expected = ref_encode(s, errors)
    assert utf8pfx.encode(obj, errors) == expected
    assert utf8pfx.encode(obj, errors=errors) == expected
    assert utf8pfx.utf8_length(obj, errors) == len(utf8(s, errors))
    assert utf8pfx.utf8_length(obj, errors=errors) == len(utf8(s, errors))
    if errors == "strict":
        assert utf8pfx.encode(obj) == expected
        assert utf8pfx.utf8_length(obj) == len(utf8(s))
    assert type(utf8pfx.encode(obj, errors)) is bytes


def test_decode_trailing_bytes_is_an_error():
    with pytest.raises(ValueError, match=r"trailing data.*offset 4"):
        decode(pfx(b"abc") + b"\x00")
    assert decode(pfx(b"abc")) == "abc"
    assert decode_all(b"") == []


def test_module_surface():
    assert isinstance(utf8pfx.__version__, str) and utf8pfx.__version__
    assert isinstance(utf8pfx.isa(), str) and utf8pfx.isa()
    assert utf8pfx.encode("") == b"\x00"
    assert utf8pfx.utf8_length("") == 0
