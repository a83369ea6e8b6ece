"""A hand-made Arrow producer over ctypes (no Arrow library needed).

It exports exactly the structs it is told to, well-formed or not, through
the Arrow PyCapsule interface, and counts every release callback, so the
tests can check that utf8pfx refuses malformed input with a clear error,
never reads outside the buffers it was given, and releases each struct
exactly once on every path.
"""
import ctypes
import struct
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_int,
    c_int64,
    c_void_p,
    py_object,
)


class ArrowSchema(Structure):
    pass


class ArrowArray(Structure):
    pass


class ArrowArrayStream(Structure):
    pass


SCHEMA_RELEASE = CFUNCTYPE(None, POINTER(ArrowSchema))
ARRAY_RELEASE = CFUNCTYPE(None, POINTER(ArrowArray))
ArrowSchema._fields_ = [
    ("format", c_char_p),
    ("name", c_char_p),
    ("metadata", c_char_p),
    ("flags", c_int64),
    ("n_children", c_int64),
    ("children", c_void_p),
    ("dictionary", c_void_p),
    ("release", c_void_p),
    ("private_data", c_void_p),
]
ArrowArray._fields_ = [
    ("length", c_int64),
    ("null_count", c_int64),
    ("offset", c_int64),
    ("n_buffers", c_int64),
    ("n_children", c_int64),
    ("buffers", c_void_p),
    ("children", c_void_p),
    ("dictionary", c_void_p),
    ("release", c_void_p),
    ("private_data", c_void_p),
]
GET_SCHEMA = CFUNCTYPE(c_int, POINTER(ArrowArrayStream), POINTER(ArrowSchema))
GET_NEXT = CFUNCTYPE(c_int, POINTER(ArrowArrayStream), POINTER(ArrowArray))
GET_ERROR = CFUNCTYPE(c_void_p, POINTER(ArrowArrayStream))
STREAM_RELEASE = CFUNCTYPE(None, POINTER(ArrowArrayStream))
ArrowArrayStream._fields_ = [
    ("get_schema", c_void_p),
    ("get_next", c_void_p),
    ("get_last_error", c_void_p),
    ("release", c_void_p),
    ("private_data", c_void_p),
]

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = py_object
_api.PyCapsule_New.argtypes = [c_void_p, c_char_p, c_void_p]
_api.PyCapsule_GetPointer.restype = c_void_p
_api.PyCapsule_GetPointer.argtypes = [c_void_p, c_char_p]
DESTRUCTOR = CFUNCTYPE(None, c_void_p)

_keep = []  # callbacks and names must outlive every capsule


def _fnptr(f):
    return ctypes.cast(f, c_void_p).value


class Counter:
    def __init__(self):
        self.n = 0


def _capsule(ptr, name, struct_type):
    """A capsule whose destructor releases the struct unless it was moved."""
    cname = name.encode()

    def destroy(cap):
        p = _api.PyCapsule_GetPointer(cap, cname)
        s = ctypes.cast(p, POINTER(struct_type)).contents
        if s.release:
            ctypes.cast(s.release, CFUNCTYPE(None, POINTER(struct_type)))(ctypes.pointer(s))

    d = DESTRUCTOR(destroy)
    _keep.append((d, cname))
    return _api.PyCapsule_New(ptr, cname, _fnptr(d))


def offsets32(*vals):
    return struct.pack("<%di" % len(vals), *vals)


def offsets64(*vals):
    return struct.pack("<%dq" % len(vals), *vals)


def view(value: bytes, buf_index=0, offset=0, length=None):
    """One 16-byte string_view: inline up to 12 bytes, else a reference."""
    n = len(value) if length is None else length
    if n <= 12:
        return struct.pack("<i", n) + value.ljust(12, b"\0")
    return struct.pack("<i4sii", n, value[:4], buf_index, offset)


class ArrayProducer:
    """Exports one array.  buffers: a list of bytes or None (NULL)."""

    def __init__(self, fmt, length, buffers, *, offset=0, null_count=0, n_buffers=None,
                 n_children=0, buffers_null=False, dictionary=None, array_dictionary=True):
        """dictionary: an ArrayProducer of the values (this one the indices);
        array_dictionary=False leaves ArrowArray.dictionary NULL (malformed)."""
        self.dictionary = dictionary
        self._array_dictionary = array_dictionary
        self.schema_released = Counter()
        self.array_released = Counter()
        self.calls = 0
        self._fmt = fmt.encode() if isinstance(fmt, str) else fmt
        self._bufs = [ctypes.create_string_buffer(b, len(b)) if b is not None else None
                      for b in buffers]
        self._ptrs = (c_void_p * max(len(buffers), 1))(
            *[ctypes.cast(b, c_void_p).value if b is not None else None for b in self._bufs])
        self._length = length
        self._offset = offset
        self._null_count = null_count
        self._n_buffers = len(buffers) if n_buffers is None else n_buffers
        self._n_children = n_children
        self._buffers_null = buffers_null

        def rel_schema(p):
            self.schema_released.n += 1
            if self.dictionary is not None:  # a parent releases its dictionary
                self.dictionary._rel_schema(ctypes.pointer(self._ds))
            p.contents.release = None

        def rel_array(p):
            self.array_released.n += 1
            if self.dictionary is not None and self._array_dictionary:
                self.dictionary._rel_array(ctypes.pointer(self._da))
            p.contents.release = None

        self._rel_schema = SCHEMA_RELEASE(rel_schema)
        self._rel_array = ARRAY_RELEASE(rel_array)

    def make_schema(self):
        s = ArrowSchema()
        s.format = self._fmt
        s.name = b""
        s.flags = 2
        s.release = _fnptr(self._rel_schema)
        if self.dictionary is not None:
            self._ds = self.dictionary.make_schema()
            s.dictionary = ctypes.addressof(self._ds)
        return s

    def make_array(self):
        a = ArrowArray()
        a.length = self._length
        a.null_count = self._null_count
        a.offset = self._offset
        a.n_buffers = self._n_buffers
        a.n_children = self._n_children
        a.buffers = None if self._buffers_null else ctypes.cast(self._ptrs, c_void_p).value
        a.release = _fnptr(self._rel_array)
        if self.dictionary is not None and self._array_dictionary:
            self._da = self.dictionary.make_array()
            a.dictionary = ctypes.addressof(self._da)
        return a

    def __arrow_c_array__(self, requested_schema=None):
        self.calls += 1
        self._s = s = self.make_schema()
        self._a = a = self.make_array()
        return (_capsule(ctypes.addressof(s), "arrow_schema", ArrowSchema),
                _capsule(ctypes.addressof(a), "arrow_array", ArrowArray))

    @property
    def released_once(self):
        return self.schema_released.n == 1 and self.array_released.n == 1


class StreamProducer:
    """Exports a stream of the given ArrayProducers' arrays (their schema
    from the first); fail_at=k makes the k-th get_next return EIO."""

    def __init__(self, chunks, *, fail_at=None, schema_fmt=None, null_get_next=False):
        self.chunks = chunks
        self.fail_at = fail_at
        self.stream_released = Counter()
        self.schema_released = Counter()
        self._fmt = schema_fmt
        self._null_get_next = null_get_next
        self._i = 0
        self._made = []

        def get_schema(sp, out):
            s = chunks[0].make_schema() if chunks else ArrowSchema()
            if self._fmt is not None:
                s.format = self._fmt
            s.release = _fnptr(self._rel_schema)
            ctypes.memmove(out, ctypes.addressof(s), ctypes.sizeof(ArrowSchema))
            return 0

        def get_next(sp, out):
            if self.fail_at is not None and self._i == self.fail_at:
                return 5
            if self._i >= len(chunks):
                ctypes.memset(out, 0, ctypes.sizeof(ArrowArray))
                return 0
            a = chunks[self._i].make_array()
            self._i += 1
            ctypes.memmove(out, ctypes.addressof(a), ctypes.sizeof(ArrowArray))
            return 0

        self._msg = ctypes.create_string_buffer(b"planted failure")

        def get_error(sp):
            return ctypes.addressof(self._msg)

        def rel_schema(p):
            self.schema_released.n += 1
            p.contents.release = None

        def rel_stream(p):
            self.stream_released.n += 1
            p.contents.release = None

        self._cbs = (GET_SCHEMA(get_schema), GET_NEXT(get_next), GET_ERROR(get_error),
                     STREAM_RELEASE(rel_stream))
        self._rel_schema = SCHEMA_RELEASE(rel_schema)

    def __arrow_c_stream__(self, requested_schema=None):
        s = ArrowArrayStream()
        s.get_schema, s.get_next, s.get_last_error, s.release = [_fnptr(f) for f in self._cbs]
        if self._null_get_next:
            s.get_next = None
        self._s = s
        return _capsule(ctypes.addressof(s), "arrow_array_stream", ArrowArrayStream)

    def arrays_released(self):
        return [c.array_released.n for c in self.chunks]
