"""Property tests: BufferWriter / encode / utf8_length against the pure-Python
reference (CPython's codec + a hand-written LEB128), per kernel level.

strict is fed surrogate-free text; surrogateescape text whose surrogates it
can escape; every other handler the whole code space, lone surrogates and
runs of them included.  (Handlers that raise on some inputs are compared as
outcomes in test_writer_errors.py.)
"""
import pytest
from hypothesis import given, strategies as st

import utf8pfx
from utf8pfx import BufferWriter
from reference import (
    KINDS,
    TOTAL_HANDLERS,
    decode_back,
    lossless,
    ref_decode_all,
    ref_encode,
    ref_encode_many,
    utf8,
)
from strategies import StrSub, capacities, text_for

HANDLERS = ("strict", "surrogateescape") + TOTAL_HANDLERS
# The kind-forcing test runs a representative subset (C-handled ones, one
# codec-handled builtin, one custom) to keep the suite fast.
KIND_HANDLERS = ("strict", "surrogatepass", "surrogateescape", "replace", "ignore",
                 "backslashreplace", "utf8pfx-test-span")

prefixes = st.binary(max_size=70)  # bytes already in the writer before the call


def _maybe_sub(data, s):
    return StrSub(s) if data.draw(st.booleans(), label="as str subclass") else s


def _check_write(w, s, errors, pre):
    before = w.getvalue()
    assert before == pre
    n = w.write_string(s)
    expected = ref_encode(s, errors)
    out = w.getvalue()
    assert out == pre + expected
    assert n == len(expected)
    assert len(w) == len(out)
    assert w.capacity >= len(w)
    return out[len(pre):]


@pytest.mark.parametrize("errors", HANDLERS)
@given(data=st.data())
def test_write_string_matches_reference(kernels, errors, data):
    s = data.draw(text_for(errors), label="s")
    cap = data.draw(capacities, label="capacity")
    pre = data.draw(prefixes, label="prefix")
    w = BufferWriter(cap, errors=errors)
    w.write_raw(pre)
    body = _check_write(w, _maybe_sub(data, s), errors, pre)
    # (body equals the reference, checked above.)  It reads back through
    # utf8pfx's own reader as CPython decodes the payload ...
    assert utf8pfx.decode(body, "surrogateescape") == \
        utf8(s, errors).decode("utf-8", "surrogateescape")
    # ... and to s itself where the handler loses nothing.
    if lossless(errors):
        assert utf8pfx.decode(body, errors) == s


@pytest.mark.parametrize("errors", HANDLERS)
@given(data=st.data())
def test_long_strings(kernels, errors, data):
    # Repetition reaches 2-byte prefixes and the counting pass (the one-pass
    # path only covers short strings or worst cases that already fit).
    s = data.draw(text_for(errors), label="unit") * data.draw(st.integers(1, 400), label="k")
    cap = data.draw(st.sampled_from([0, 1, 100, 20000]), label="capacity")
    w = BufferWriter(cap, errors=errors)
    body = _check_write(w, s, errors, b"")
    assert utf8pfx.decode_all(body, "surrogateescape") == \
        [utf8(s, errors).decode("utf-8", "surrogateescape")]


@pytest.mark.parametrize("errors", HANDLERS)
@given(data=st.data())
def test_sequence_concatenates(kernels, errors, data):
    xs = data.draw(st.lists(text_for(errors), max_size=8), label="xs")
    cap = data.draw(capacities, label="capacity")
    w = BufferWriter(cap, errors=errors)
    total = 0
    for x in xs:
        total += w.write_string(_maybe_sub(data, x))
    out = w.getvalue()
    assert out == ref_encode_many(xs, errors)
    assert total == len(out) == len(w)
    # read back by utf8pfx's reader, compared with CPython's decoding
    assert utf8pfx.decode_all(out, "surrogateescape") == \
        [utf8(x, errors).decode("utf-8", "surrogateescape") for x in xs]
    if lossless(errors):
        assert utf8pfx.decode_all(out, errors) == xs


class Iterable:
    """A custom iterable (not a list/tuple: the generic iterator path)."""

    def __init__(self, xs):
        self.xs = xs

    def __iter__(self):
        return iter(self.xs)


class Iterator:
    def __init__(self, xs):
        self.xs = list(xs)

    def __iter__(self):
        return self

    def __next__(self):
        if not self.xs:
            raise StopIteration
        return self.xs.pop(0)


class ListSub(list):
    pass


CONTAINERS = {
    "list": list,
    "tuple": tuple,
    "generator": lambda xs: (x for x in xs),
    "iterable": Iterable,
    "iterator": Iterator,
    "list-subclass": ListSub,
    "map": lambda xs: map(lambda x: x, xs),
}


@pytest.mark.parametrize("container", sorted(CONTAINERS))
@given(data=st.data())
def test_write_strings_equals_repeated_write_string(kernels, container, data):
    # Every container is its own test; the handler is drawn (all of them turn
    # up across the examples) to keep the test count down.
    errors = data.draw(st.sampled_from(HANDLERS), label="errors")
    xs = data.draw(st.lists(text_for(errors), max_size=10), label="xs")
    xs = [_maybe_sub(data, x) for x in xs]
    cap = data.draw(capacities, label="capacity")
    pre = data.draw(prefixes, label="prefix")

    one = BufferWriter(cap, errors=errors)
    one.write_raw(pre)
    expected_total = sum(one.write_string(x) for x in xs)

    many = BufferWriter(cap, errors=errors)
    many.write_raw(pre)
    total = many.write_strings(CONTAINERS[container](xs))
    assert many.getvalue() == one.getvalue() == pre + ref_encode_many(xs, errors)
    assert total == expected_total
    assert len(many) == len(pre) + total


@pytest.mark.parametrize("errors", HANDLERS)
@given(data=st.data())
def test_encode_and_utf8_length_match_reference(kernels, errors, data):
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


@pytest.mark.parametrize("errors", KIND_HANDLERS)
@pytest.mark.parametrize("kind", KINDS)
@given(data=st.data())
def test_each_storage_kind(kernels, kind, errors, data):
    s = data.draw(text_for(errors, kind=kind), label="s")
    cap = data.draw(capacities, label="capacity")
    w = BufferWriter(cap, errors=errors)
    _check_write(w, s, errors, b"")
    # again behind the first copy: a second string lands at an odd offset
    n = w.write_string(s)
    assert w.getvalue() == ref_encode(s, errors) * 2
    assert n == len(ref_encode(s, errors))
    assert utf8pfx.encode(s, errors) == ref_encode(s, errors)
    assert utf8pfx.utf8_length(s, errors) == len(utf8(s, errors))


@given(n=st.one_of(st.integers(0, 2**64 - 1), st.integers(0, 300),
                   st.sampled_from([2**(7 * k) + d for k in range(1, 10) for d in (-1, 0)])))
def test_write_vint_and_vint_size_match_reference(n):
    from reference import vint
    w = BufferWriter()
    assert w.write_vint(n) == len(vint(n))
    assert w.getvalue() == vint(n)
    assert utf8pfx.vint_size(n) == len(vint(n))


@given(chunks=st.lists(st.binary(max_size=300), max_size=8), cap=capacities)
def test_write_bytes_and_raw_match_reference(chunks, cap):
    from reference import vint
    w = BufferWriter(cap)
    expected = b""
    for i, c in enumerate(chunks):
        obj = (bytes, bytearray, memoryview)[i % 3](c)
        if i % 2:
            assert w.write_bytes(obj) == len(vint(len(c))) + len(c)
            expected += vint(len(c)) + c
        else:
            assert w.write_raw(obj) == len(c)
            expected += c
    assert w.getvalue() == bytes(w) == expected
    assert len(w) == len(expected)
