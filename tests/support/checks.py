"""Assertions shared by the deterministic test files: run one str through
every entry point of utf8pfx and compare each with CPython's outcome; a
writer that holds bytes before the call under test, and the check that a
failed call left them as they were; who else holds a batch's items."""
import sys

import utf8pfx
from utf8pfx import BufferWriter
from support.reference import outcome, ref_encode, utf8

PRE = b"\x00pre\xff"  # bytes a writer holds before the call under test

#: What filled() writes first: a record, then a byte that starts none.
HELD = b"\x05hello\x01\xff"


def filled(capacity=0, errors="strict"):
    """A writer of the given capacity and handler holding HELD."""
    w = BufferWriter(capacity, errors=errors)
    w.write_raw(HELD)
    return w


def assert_unchanged(w, value=HELD):
    """w holds exactly value: getvalue(), len() and its buffer agree."""
    assert w.getvalue() == value
    assert len(w) == len(value)
    assert bytes(w) == value


def check_string(s, errors="strict", capacities=(0, 1, None)):
    """encode / utf8_length / write_string (from several starting capacities,
    None meaning 'room for the worst case') agree with CPython, including the
    exception (type and, for UnicodeEncodeError, encoding/object/start/end/
    reason); on an exception the writer holds what it held before.

    Returns the record utf8pfx.encode produced (bytes; equal to the
    reference, checked here) or None if CPython raises.
    """
    expected = outcome(ref_encode, s, errors)
    assert outcome(utf8pfx.encode, s, errors) == expected
    assert outcome(utf8pfx.utf8_length, s, errors) == outcome(lambda: len(utf8(s, errors)))
    for cap in capacities:
        if cap is None:
            cap = len(PRE) + 10 + 4 * str.__len__(s)
            if expected[0] == "ok":
                cap = max(cap, len(PRE) + len(expected[1]))
        w = BufferWriter(cap, errors=errors)
        w.write_raw(PRE)
        got = outcome(w.write_string, s)
        if expected[0] == "ok":
            assert got == ("ok", len(expected[1])), cap
            value = w.getvalue()
            assert value[:len(PRE)] == PRE
            assert value[len(PRE):] == expected[1], cap
        else:
            assert got == expected, cap
            assert w.getvalue() == PRE
        assert len(w) == len(w.getvalue())
    return utf8pfx.encode(s, errors) if expected[0] == "ok" else None


def check_with_exported_view(s, errors="strict"):
    """With a memoryview exported: a write that fits the current capacity
    succeeds (even when the worst case would not fit); one that does not
    raises BufferError and changes nothing.

    The writer is first filled with 64 bytes (capacities below 64 round up)
    so that the room left is exactly the record, or one byte less.
    """
    record = ref_encode(s, errors)
    fill = b"f" * 64
    for room, fits in ((len(record), True), (len(record) - 1, False)):
        w = BufferWriter(len(fill) + room, errors=errors)
        assert w.capacity == len(fill) + room
        w.write_raw(fill)
        with memoryview(w) as m:
            if fits:
                assert w.write_string(s) == len(record)
                assert w.getvalue() == fill + record
            else:
                try:
                    w.write_string(s)
                except BufferError:
                    pass
                else:
                    raise AssertionError("grew the buffer under an exported view")
                assert w.getvalue() == fill and len(w) == len(fill)
            assert m.tobytes() == fill  # the exported view never moved
        if not fits:  # once released, growing is fine
            assert w.write_string(s) == len(record)
            assert w.getvalue() == fill + record


def held_by_others(batch):
    """References to each item of batch beyond the list's own (and the
    argument getrefcount is given): what a batch iterator still holds."""
    return [sys.getrefcount(batch[i]) - 2 for i in range(len(batch))]
