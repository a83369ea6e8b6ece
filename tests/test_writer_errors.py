"""What the writer refuses, the error handlers it calls, and atomicity.

Every failing call must leave the writer exactly as it was: same getvalue(),
same len() (support.checks.assert_unchanged).  TypeError for what is not a
str or a buffer, UnicodeEncodeError exactly as CPython's codec raises it,
handlers that raise, return garbage, are registered late or write into the
writer, LookupError for unknown handlers, re-entrant calls refused.

Elsewhere: BufferError under an exported view in test_robustness_exports.py;
write_vint's refusals beside its values in test_writer.py; sizes beyond
memory in test_robustness_limits.py.
"""
import codecs
import re

import pytest
from hypothesis import given, strategies as st

import utf8pfx
from utf8pfx import BufferWriter
from support.checks import HELD, assert_unchanged, filled
from support.reference import PARTIAL_HANDLERS, exc_fields, outcome, ref_encode, utf8
from support.strategies import StrSub, text_any

# -- TypeError ---------------------------------------------------------------

NON_STR = [
    (b"abc", "bytes"),
    (bytearray(b"abc"), "bytearray"),
    (memoryview(b"abc"), "memoryview"),
    (None, "NoneType"),
    (1, "int"),
    (1.5, "float"),
    (["a"], "list"),
    (object(), "object"),
]


@pytest.mark.parametrize("obj,tname", NON_STR, ids=[t for _, t in NON_STR])
def test_non_str_type_error_names_the_type(obj, tname):
    w = filled()
    for call in (w.write_string, utf8pfx.encode, utf8pfx.utf8_length):
        with pytest.raises(TypeError) as ei:
            call(obj)
        assert re.search(r"\b%s\b" % tname, str(ei.value)), (call, str(ei.value))
    assert_unchanged(w)


@pytest.mark.parametrize("container", [list, tuple, iter])
@pytest.mark.parametrize("k", [0, 1, 3])
def test_write_strings_type_error_names_index_and_type(container, k):
    items = [StrSub("s\u00e9b"), "plain", StrSub("\U0001F600"), "x\u20ac"]
    items.insert(k, 3.25)
    for cap in (0, 1, 4096):
        w = filled(cap)
        with pytest.raises(TypeError) as ei:
            w.write_strings(container(items))
        msg = str(ei.value)
        assert re.search(r"\b%d\b" % k, msg), msg
        assert "float" in msg, msg
        assert_unchanged(w)


def test_write_strings_not_iterable():
    w = filled()
    with pytest.raises(TypeError):
        w.write_strings(5)
    with pytest.raises(TypeError):
        w.write_strings(None)
    assert_unchanged(w)


def test_write_strings_iterator_raising_midway():
    class Boom(Exception):
        pass

    def gen():
        yield "a" * 100
        yield "\u00e9" * 100
        raise Boom

    for cap in (0, 1, 4096):
        w = filled(cap)
        with pytest.raises(Boom):
            w.write_strings(gen())
        assert_unchanged(w)


def test_write_bytes_and_raw_reject_str_and_non_buffers():
    w = filled()
    for bad in ("abc", 3, None, ["a"]):
        for call in (w.write_bytes, w.write_raw):
            with pytest.raises(TypeError) as ei:
                call(bad)
            assert type(bad).__name__ in str(ei.value)
    assert_unchanged(w)


# -- UnicodeEncodeError --------------------------------------------------------

SURROGATE_STRS = [
    "\ud800",
    "a\ud800",
    "\udfffa",
    "ab\ud800\udc00cd",                  # looks like a pair: two lone surrogates
    "x" * 50 + "\udc80" * 3 + "y\ud801",  # the first run is reported, whole
    "\u00e9" * 70 + "\ud800",
    "\u20ac" * 10 + "\udbff\udfff" + "\u20ac",
    "\U0001F600" * 40 + "\udc00",
    "\U0001F600" + "a" * 20000 + "\ud800\ud801\ud802z\ud803",
]


@pytest.mark.parametrize("s", SURROGATE_STRS, ids=range(len(SURROGATE_STRS)))
def test_strict_unicode_encode_error_equals_cpython(s):
    with pytest.raises(UnicodeEncodeError) as ref:
        s.encode("utf-8")
    expected = exc_fields(ref.value)
    for cap in (0, 1, 100000):
        w = filled(cap)
        with pytest.raises(UnicodeEncodeError) as ei:
            w.write_string(s)
        assert exc_fields(ei.value) == expected
        assert ei.value.object is s or ei.value.object == s
        assert str(ei.value) == str(ref.value)
        assert_unchanged(w)
    for fn in (utf8pfx.encode, utf8pfx.utf8_length):
        with pytest.raises(UnicodeEncodeError) as ei:
            fn(s)
        assert exc_fields(ei.value) == expected


@pytest.mark.parametrize("container", [list, tuple, iter])
def test_write_strings_unicode_encode_error_is_atomic(container):
    items = ["a" * 30, "\u00e9" * 40, StrSub("ok"), "bad\udc00", "never"]
    with pytest.raises(UnicodeEncodeError) as ref:
        "bad\udc00".encode("utf-8")
    for cap in (0, 1, 4096):
        w = filled(cap)
        with pytest.raises(UnicodeEncodeError) as ei:
            w.write_strings(container(items))
        assert exc_fields(ei.value) == exc_fields(ref.value)
        assert_unchanged(w)


@pytest.mark.parametrize("errors", PARTIAL_HANDLERS)
@given(s=text_any, cap=st.sampled_from([0, 1, 4096]))
def test_raising_handlers_match_cpython_outcome(errors, s, cap):
    # Handlers that raise on some input (strict, surrogateescape on a
    # surrogate it cannot escape, custom handlers returning bad values or
    # raising) must raise what CPython raises, and write nothing.
    expected = outcome(ref_encode, s, errors)
    assert outcome(utf8pfx.encode, s, errors) == expected
    assert outcome(utf8pfx.utf8_length, s, errors) == outcome(lambda: len(utf8(s, errors)))
    w = filled(cap, errors)
    got = outcome(w.write_string, s)
    if expected[0] == "ok":
        assert got == ("ok", len(expected[1]))
        assert w.getvalue() == HELD + expected[1]
    else:
        assert got == expected
        assert_unchanged(w)
        # write_strings: the same error, after some good items, atomically
        w2 = filled(cap, errors)
        got2 = outcome(w2.write_strings, ["good", "\u00e9" * 10, s, "tail"])
        assert got2 == expected
        assert_unchanged(w2)


SURROGATEESCAPE_CASES = [
    "\ud800",              # not escapable
    "\udc80\ud800",        # escapable then not, in one run: CPython reports from the 2nd
    "a\udcff\udc7fb",      # just below the range
    "\U0001F600\udc80\udd00",
]


@pytest.mark.parametrize("s", SURROGATEESCAPE_CASES, ids=range(len(SURROGATEESCAPE_CASES)))
def test_surrogateescape_failure_positions(s):
    with pytest.raises(UnicodeEncodeError) as ref:
        s.encode("utf-8", "surrogateescape")
    w = filled(0, "surrogateescape")
    with pytest.raises(UnicodeEncodeError) as ei:
        w.write_string(s)
    assert exc_fields(ei.value) == exc_fields(ref.value)
    assert_unchanged(w)
    with pytest.raises(UnicodeEncodeError) as ei:
        utf8pfx.encode(s, "surrogateescape")
    assert exc_fields(ei.value) == exc_fields(ref.value)


# -- custom handlers -----------------------------------------------------------

@pytest.mark.parametrize("name,exc_type", [
    ("utf8pfx-test-garbage", TypeError),
    ("utf8pfx-test-badtuple", TypeError),
    ("utf8pfx-test-oob", IndexError),
    ("utf8pfx-test-lookup", LookupError),
    ("utf8pfx-test-valueerror", ValueError),
    ("utf8pfx-test-nonascii", UnicodeEncodeError),
])
def test_bad_custom_handler_is_atomic(name, exc_type):
    s = "\u00e9t\u00e9 \ud800 fin"
    with pytest.raises(exc_type):
        s.encode("utf-8", name)  # CPython agrees on the type
    w = filled(0, name)
    with pytest.raises(exc_type):
        w.write_string(s)
    assert_unchanged(w)
    with pytest.raises(exc_type):
        w.write_strings(["ok", s])
    assert_unchanged(w)
    with pytest.raises(exc_type):
        utf8pfx.encode(s, name)
    # surrogate-free text never reaches the handler
    assert w.write_string("\u00e9t\u00e9") == len(ref_encode("\u00e9t\u00e9"))


def test_handler_registered_later_is_looked_up_by_name():
    name = "utf8pfx-test-late-registered"
    with pytest.raises(LookupError):
        BufferWriter(errors=name)
    codecs.register_error(name, lambda e: ("L", e.end))
    w = BufferWriter(errors=name)
    w.write_string("a\ud800b")
    assert w.getvalue() == ref_encode("a\ud800b", name)
    assert w.errors == name


def test_handler_that_writes_into_the_writer():
    # Re-entrancy: the handler appends to the very writer being written.
    # Whatever the order, nothing may be lost or corrupted: the value must be
    # the handler's record and the string's record in some order, or the
    # string's record after a clean error.
    target = []

    def handler(exc):
        target[0].write_string("inner" * 50)  # forces a grow of w
        return ("?", exc.end)

    codecs.register_error("utf8pfx-test-reentrant", handler)
    w = BufferWriter(0, errors="utf8pfx-test-reentrant")
    target.append(w)
    s = "\u00e9" * 10 + "\ud800"
    n = w.write_string(s)
    value = w.getvalue()
    inner = ref_encode("inner" * 50)
    outer = ref_encode(s, "replace")
    assert value in (inner + outer, outer + inner), value
    assert n == len(outer)
    assert len(w) == len(value)


# -- LookupError ---------------------------------------------------------------

def test_unknown_handler_is_rejected_eagerly():
    name = "utf8pfx-no-such-handler"
    with pytest.raises(LookupError):
        BufferWriter(errors=name)
    with pytest.raises(LookupError):
        utf8pfx.encode("ascii only", name)
    with pytest.raises(LookupError):
        utf8pfx.encode("ascii only", errors=name)
    with pytest.raises(LookupError):
        utf8pfx.utf8_length("ascii only", errors=name)


def test_errors_must_be_str():
    with pytest.raises(TypeError):
        BufferWriter(errors=1)
    with pytest.raises(TypeError):
        BufferWriter(errors=b"strict")
    with pytest.raises(TypeError):
        utf8pfx.encode("a", errors=1)


def test_errors_attribute_is_read_only():
    assert BufferWriter().errors == "strict"
    for name in ("strict", "replace", "surrogateescape", "xmlcharrefreplace",
                 "utf8pfx-test-span"):
        w = BufferWriter(errors=name)
        assert w.errors == name
        with pytest.raises(AttributeError):
            w.errors = "ignore"
        assert w.errors == name


def test_capacity_is_read_only_and_clear_keeps_it():
    w = BufferWriter(1000)
    assert w.capacity >= 1000
    cap = w.capacity
    with pytest.raises(AttributeError):
        w.capacity = 5
    w.write_string("x" * 2000)
    assert w.capacity >= len(w) == 2002
    cap = w.capacity
    w.clear()
    assert len(w) == 0 and w.getvalue() == b"" and w.capacity == cap


def test_negative_capacity_rejected():
    with pytest.raises(ValueError):
        BufferWriter(-1)
    with pytest.raises(TypeError):
        BufferWriter("10")


# -- calling conventions -------------------------------------------------------

def test_positional_only_arguments():
    w = BufferWriter()
    with pytest.raises(TypeError):
        w.write_string(s="a")
    with pytest.raises(TypeError):
        utf8pfx.encode(s="a")
    with pytest.raises(TypeError):
        utf8pfx.encode("a", "strict", "extra")
    with pytest.raises(TypeError):
        utf8pfx.encode("a", errors="strict", bogus=1)


# -- re-entrancy: an error handler that mutates the writer being written ------

def _clearing_writer(name):
    box = []

    def handler(exc):
        box[0].clear()  # the writer is in the middle of write_strings
        return ("?", exc.end)

    codecs.register_error(name, handler)
    w = BufferWriter(errors=name)
    box.append(w)
    w.write_raw(b"0123456789")
    return w


BUSY = "in the middle of write_strings"


def test_reentrant_clear_from_error_handler_is_refused():
    # write_strings holds the start of its batch across the handler call; a
    # clear() from there would make it return a negative count or roll back
    # over bytes that are no longer its own.  It is refused, and the batch
    # fails as a whole.
    w = _clearing_writer("utf8pfx-test-clearing-1")
    with pytest.raises(RuntimeError, match=BUSY):
        w.write_strings(["a", "\ud800", "b"])
    assert w.getvalue() == b"0123456789"
    assert w.write_strings(["a"]) == 2  # and the writer is usable again


def test_reentrant_clear_then_failure_leaves_a_real_state():
    w = _clearing_writer("utf8pfx-test-clearing-2")
    with pytest.raises(Exception):
        w.write_strings(["a", "\ud800", 5])
    assert w.getvalue() == b"0123456789"


@pytest.mark.parametrize(
    "meddle",
    [
        lambda w: w.write_string("x"),
        lambda w: w.write_strings(["x"]),
        lambda w: w.write_vint(1),
        lambda w: w.write_bytes(b"x"),
        lambda w: w.write_raw(b"x"),
        lambda w: w.clear(),
        lambda w: w.reserve(1),
    ],
)
def test_iterator_cannot_change_the_writer_mid_batch(meddle):
    w = BufferWriter()
    w.write_raw(b"0123")
    seen = []

    def items():
        yield "a"
        try:
            meddle(w)
        except RuntimeError as exc:
            seen.append(str(exc))
        yield "b"

    assert w.write_strings(items()) == 4
    assert w.getvalue() == b"0123\x01a\x01b"
    assert len(seen) == 1 and BUSY in seen[0]


def test_iterator_cannot_export_a_view_mid_batch():
    # a view taken mid-batch would show bytes a rollback could take back
    w = BufferWriter()

    def items():
        yield "a"
        with pytest.raises(BufferError, match=BUSY):
            memoryview(w)
        yield "b"

    w.write_strings(items())
    assert w.getvalue() == b"\x01a\x01b"
    assert w.getvalue() == bytes(memoryview(w))  # exports work again afterwards
