"""Buffer exports, both ways: the writer's read-only buffer (views of it
block growth and clear, nothing else; a failed write under a view changes
nothing; a writer written into itself), and the buffers a reader or a write
holds (a reader pins its input until closed or collected).  Under pressure:
views held across every writer operation, a writer deleted under a live
view, a reader over a writer that is asked to grow, and input buffers whose
export runs Python code that meddles with the writer (the writer must take
the input's buffer first, then check its own state).  Each case must end in
BufferError or a consistent value: never a crash, never a stale or changed
view."""
import ctypes
import gc
import mmap
import struct
import sys

import pytest

from utf8pfx import BufferReader, BufferWriter, decode_all
from support.checks import HELD, assert_unchanged, filled
from support.reference import pfx, ref_encode, ref_encode_many, vint


def test_view_held_across_every_operation():
    w = BufferWriter(64)
    w.write_string("abc")
    v = memoryview(w)
    seen = bytes(v)
    assert seen == ref_encode("abc")
    # writes that fit: allowed, the view still shows its bytes
    assert w.write_string("d" * 10) == 11
    assert w.write_vint(300) == 2
    assert bytes(v) == seen and len(v) == len(seen)
    value = w.getvalue()
    assert value == ref_encode("abc") + ref_encode("d" * 10) + b"\xac\x02"
    # growth and clear: refused, nothing changed
    for call in (lambda: w.write_string("x" * 100), lambda: w.write_raw(b"y" * 64),
                 lambda: w.write_strings(["z" * 40, "q" * 40]), lambda: w.reserve(1000),
                 w.clear, lambda: w.write_bytes(w.getvalue() * 3)):
        cap = w.capacity
        with pytest.raises(BufferError):
            call()
        assert w.getvalue() == value and w.capacity == cap
        assert bytes(v) == seen
    v.release()
    w.clear()
    assert len(w) == 0 and w.write_string("x" * 100) == 101


def test_writer_deleted_while_a_view_lives():
    w = BufferWriter()
    w.write_strings(["alpha", "\u00e9t\u00e9", "\U0001F600"])
    want = w.getvalue()
    v = memoryview(w)
    del w
    gc.collect()
    assert bytes(v) == want  # the view keeps the writer (and its buffer) alive
    r = BufferReader(v)
    assert r.read_strings() == ["alpha", "\u00e9t\u00e9", "\U0001F600"]
    r.close()
    v.release()


def test_reader_over_a_writer_that_is_asked_to_grow():
    w = BufferWriter(16)
    w.write_strings(["ab", "cd"])
    r = BufferReader(w)
    with pytest.raises(BufferError):
        w.write_string("x" * 100)
    with pytest.raises(BufferError):
        w.clear()
    assert w.write_string("e") == 2  # fits: allowed, the reader does not see it
    assert r.read_strings() == ["ab", "cd"] and r.remaining == 0
    r.close()
    w.write_string("x" * 100)  # released: growth works again
    assert decode_all(w) == ["ab", "cd", "e", "x" * 100]


def test_reader_pins_a_bytearray_and_an_mmap():
    data = bytearray(ref_encode_many(["one", "two"]))
    r = BufferReader(data)
    with pytest.raises(BufferError):
        data.extend(b"more")
    with pytest.raises(BufferError):
        del data[:]
    assert r.read_strings() == ["one", "two"]
    r.close()
    data.extend(ref_encode("three"))
    assert decode_all(data) == ["one", "two", "three"]

    m = mmap.mmap(-1, 16)
    m[:8] = ref_encode_many(["abc", "de"]) + b"\x00"
    r = BufferReader(m)
    with pytest.raises(BufferError):
        m.close()
    assert r.read_string() == "abc"
    r.close()
    m.close()


def test_view_of_a_view_and_slices():
    w = BufferWriter(8)
    w.write_string("abc")
    v = memoryview(w)[1:]
    assert bytes(v) == b"abc"
    with pytest.raises(BufferError):
        w.write_raw(b"z" * 100)
    del v
    gc.collect()
    assert w.write_raw(b"z" * 100) == 100


@pytest.mark.skipif(sys.version_info < (3, 12), reason="__buffer__ in Python needs 3.12")
@pytest.mark.parametrize("meddle", ["view", "clear", "write", "release"])
def test_input_buffer_export_that_meddles_with_the_writer(meddle):
    """write_bytes/write_raw take the input's buffer before they look at the
    writer, so what __buffer__ did is seen: a view it took blocks growth
    (BufferError), a clear or a write it made is kept, and the bytes
    appended are the input's."""
    w = BufferWriter(8)
    w.write_raw(b"abcd")
    held = []

    class Sneaky:
        def __buffer__(self, flags):
            if meddle == "view":
                held.append(memoryview(w))
            elif meddle == "clear":
                w.clear()
            elif meddle == "write":
                w.write_raw(b"XY")
            elif meddle == "release":
                del held[:]
            return memoryview(b"p" * 40)

    if meddle == "view":
        with pytest.raises(BufferError):
            w.write_bytes(Sneaky())
        assert w.getvalue() == b"abcd" and bytes(held[0]) == b"abcd"
        held[0].release()
        return
    if meddle == "release":
        held.append(memoryview(w))
        # dropping the last reference to the view releases it, so the growth
        # that follows (checked after the input's export) is allowed
        w.write_raw(Sneaky())
        assert w.getvalue() == b"abcd" + b"p" * 40
        return
    n = w.write_bytes(Sneaky())
    assert n == 41
    before = b"" if meddle == "clear" else b"abcdXY"
    assert w.getvalue() == before + b"\x28" + b"p" * 40


def test_getbuffer_is_refused_mid_batch_and_views_of_empty_writers():
    w = BufferWriter()
    v = memoryview(w)
    assert bytes(v) == b"" and v.readonly
    with pytest.raises(BufferError):
        w.write_string("x")  # growth from 0
    v.release()

    def gen():
        yield "a"
        with pytest.raises(BufferError):
            memoryview(w)
        yield "b"

    assert w.write_strings(gen()) == 4
    assert w.getvalue() == b"\x01a\x01b"


# -- the writer's views block growth, and only growth ------------------------


def test_exported_view_blocks_growth_only():
    w = BufferWriter(100)
    w.write_raw(HELD)
    with memoryview(w) as m:
        assert m.readonly
        assert m.tobytes() == HELD
        room = w.capacity - len(w)
        # fits: allowed
        assert w.write_string("a" * (room - 2)) == room - 1
        snapshot = w.getvalue()
        assert len(snapshot) == w.capacity - 1
        # must grow: refused, nothing written, for every write method
        for call, arg in ((w.write_string, "toolong"), (w.write_string, "\u00e9" * 5),
                          (w.write_strings, ["", "a"]), (w.write_bytes, b"x"),
                          (w.write_raw, b"xy"), (w.write_raw, w)):
            with pytest.raises(BufferError):
                call(arg)
            assert_unchanged(w, snapshot)
        with pytest.raises(BufferError):
            w.clear()
        assert_unchanged(w, snapshot)
        # one byte still fits
        assert w.write_raw(b"z") == 1
        assert m.tobytes() == HELD  # the view keeps its shape and content
    # released: growth and clear work again
    assert w.write_string("grow" * 100) == 2 + 400
    w.clear()
    assert len(w) == 0


def test_write_strings_buffer_error_midway_is_atomic():
    w = BufferWriter(100)
    w.write_raw(HELD)
    with memoryview(w):
        # the first items fit, a later one must grow
        with pytest.raises(BufferError):
            w.write_strings(["a", "b", "c" * 200, "d"])
        assert_unchanged(w)


def test_write_vint_fits_with_exported_view():
    # write_vint(0) needs one byte; with one byte of room and a view out it
    # must succeed (a write that fits is allowed), not reserve 10 bytes.
    w = BufferWriter(64)
    w.write_raw(b"x" * 63)
    with memoryview(w):
        assert w.write_vint(0) == 1
        with pytest.raises(BufferError):
            w.write_vint(128)  # 2 bytes: must grow
    assert w.getvalue() == b"x" * 63 + b"\x00"


def test_bytes_view_does_not_pin():
    w = filled()
    b = bytes(w)
    w.write_string("x" * 1000)  # bytes() copied: growth allowed
    assert b == HELD


def test_nested_and_multiple_views():
    w = BufferWriter(64)
    w.write_raw(b"ab")
    m1 = memoryview(w)
    m2 = memoryview(w)
    m1.release()
    with pytest.raises(BufferError):
        w.write_raw(b"x" * 100)
    m2.release()
    w.write_raw(b"x" * 100)
    assert w.getvalue() == b"ab" + b"x" * 100


# -- the writer's buffer is read-only ----------------------------------------


def test_buffer_is_read_only():
    w = filled()
    m = memoryview(w)
    assert m.readonly
    with pytest.raises(TypeError):
        m[0] = 1
    m.release()
    with pytest.raises(TypeError):
        struct.pack_into("B", w, 0, 1)
    with pytest.raises((TypeError, BufferError)):
        ctypes.c_char.from_buffer(w)
    assert_unchanged(w)


def test_empty_writer_buffer():
    w = BufferWriter()
    assert bytes(w) == b"" == w.getvalue()
    with memoryview(w) as m:
        assert m.nbytes == 0
    assert len(w) == 0


# -- writing a writer into itself -------------------------------------------

@pytest.mark.parametrize("cap", [0, 1, 64, 10000])
def test_write_self(cap):
    w = BufferWriter(cap)
    w.write_string("self \u00e9 \U0001F600" * 3)
    v = w.getvalue()
    assert w.write_raw(w) == len(v)
    assert w.getvalue() == v + v
    v2 = w.getvalue()
    assert w.write_bytes(w) == len(vint(len(v2))) + len(v2)
    assert w.getvalue() == v2 + vint(len(v2)) + v2


def test_write_self_empty():
    w = BufferWriter()
    assert w.write_raw(w) == 0
    assert w.write_bytes(w) == 1
    assert w.getvalue() == b"\x00"


def test_write_memoryview_of_self():
    w = BufferWriter(1000)
    w.write_raw(b"abc")
    with memoryview(w) as m:
        w.write_raw(m)  # fits: allowed
        assert w.getvalue() == b"abcabc"


# -- a reader holds its input's buffer until closed or collected ------------


def test_holds_export_until_close():
    ba = bytearray(pfx(b"abc"))
    r = BufferReader(ba)
    with pytest.raises(BufferError):
        ba.extend(b"x")
    r.close()
    ba.extend(b"x")
    with BufferReader(ba) as r2:
        with pytest.raises(BufferError):
            ba.clear()
    ba.clear()
    assert r2.closed


def test_export_released_by_gc():
    class R(BufferReader):
        pass

    ba = bytearray(pfx(b"abc"))
    r = R(ba)
    r.self_ref = r  # a cycle: only the collector can free it
    del r
    gc.collect()
    ba.extend(b"x")


def test_writer_cannot_grow_while_read():
    w = BufferWriter()
    w.write_string("abc")
    r = BufferReader(w)
    with pytest.raises(BufferError):
        w.write_string("x" * 100000)
    r.close()
    w.write_string("x")
