"""Every approach of the two suites.

Writer suite (ALL): each approach turns a workload's strings into one blob.
Reader suite (READERS): each approach turns the workload's strings,
serialized once in its own format before timing, back into the list of str.

An approach's setup(workload) does the one-time work (message class, writer,
buffers, serialized input) and returns run(strings), the timed part.  Peers
that are not installed are left out with a note (see available()).
"""
import sys
from dataclasses import dataclass
from typing import Callable, Optional

from . import package_module
from .workloads import Workload

# the pure-Python peers, the same code `utf8pfx bench` times
_peers = package_module("_peers")


@dataclass(frozen=True)
class Approach:
    key: str
    label: str
    setup: Callable        # setup(workload) -> run(strings)
    fresh: bool = True     # new input for every run, made outside the clock
    u8p: bool = False      # a utf8pfx row (rerun per ISA level by --isa)
    make_input: Optional[Callable] = None  # fresh input from the strings;
    #                                        default timing.fresh_copies


def _call_each(f, strings):
    """The per-string loop shared by every one-call-per-string approach."""
    for s in strings:
        f(s)


# --- pure Python and the str codec ------------------------------------------
def _py_varint(_wl):
    return _peers.py_write


def _str_encode(_wl):
    enc = str.encode
    return lambda strings: _call_each(enc, strings)


# --- floors -------------------------------------------------------------------
def _utf8_buffer(strings):
    """The copy floor's fresh input: the workload's UTF-8, just written, as
    the fresh strings are for the other rows."""
    return bytearray("".join(strings).encode("utf-8", "surrogatepass"))


def _copy_into(size):
    """run(src): memcpy of `size` bytes into a buffer that already exists."""
    dst = memoryview(bytearray(size))

    def run(src):
        dst[:] = src
    return run


def _copy_floor(wl):
    # memcpy of the workload's UTF-8 into a buffer that already exists, as a
    # pre-sized writer writes into memory it already owns.
    return _copy_into(wl.utf8_bytes)


def _noop_floor(_wl):
    # ().count: a bound C method (builtin_function_or_method, METH_O, as
    # BufferWriter.write_string) that takes the string, scans an empty tuple
    # and returns the cached small int 0: no allocation, no hashing, never
    # reads the string.  int.bit_length / list.__len__ take no argument, so
    # the call shape would differ from write_string(s).
    noop = ().count
    return lambda strings: _call_each(noop, strings)


# --- protobuf (upb) -------------------------------------------------------------
def protobuf_info():
    try:
        from google.protobuf import __version__
        from google.protobuf.internal import api_implementation
    except ImportError:
        return None
    return {"version": __version__, "backend": api_implementation.Type()}


_PB_CLASS = None


def _pb_class():
    """Message class with one `repeated string s = 1`, built at run time from
    a FileDescriptorProto (no protoc, no generated code), once: every
    protobuf row uses the same class."""
    global _PB_CLASS
    if _PB_CLASS is None:
        _PB_CLASS = _peers.strings_message_class()
    return _PB_CLASS


def _protobuf(_wl):
    cls = _pb_class()

    def run(strings):
        m = cls()
        m.s.extend(strings)
        return m.SerializeToString()
    return run


# --- msgpack ------------------------------------------------------------------------
def msgpack_info():
    try:
        import msgpack
    except ImportError:
        return None
    return {"version": ".".join(map(str, msgpack.version)),
            "extension": msgpack.Packer.__module__ == "msgpack._cmsgpack"}


def _msgpack(_wl):
    import msgpack
    packb = msgpack.packb
    return lambda strings: packb(strings)


# --- utf8pfx ------------------------------------------------------------------------
def utf8pfx_module():
    try:
        import utf8pfx
        utf8pfx.BufferWriter
    except (ImportError, AttributeError):
        return None
    return utf8pfx


def _writer(wl):
    """A writer pre-sized for the whole blob (UTF-8 + every prefix)."""
    u = utf8pfx_module()
    size = wl.utf8_bytes + sum(u.vint_size(len(s.encode("utf-8", "surrogatepass")))
                               for s in wl.strings)
    return u.BufferWriter(capacity=size)


def _u8p_one(wl):
    w = _writer(wl)

    def run(strings):
        w.clear()
        _call_each(w.write_string, strings)
        return w
    return run


def _u8p_batch(bytes_out):
    """write_strings on the pre-sized writer; with bytes_out, getvalue() too."""
    def setup(wl):
        w = _writer(wl)

        def run(strings):
            w.clear()
            w.write_strings(strings)
            return w.getvalue() if bytes_out else w
        return run
    return setup


def _u8p_len(_wl):
    f = utf8pfx_module().utf8_length
    return lambda strings: _call_each(f, strings)


ALL = (
    Approach("py", "pure Python encode+varint into bytearray", _py_varint),
    Approach("encode", "str.encode per string, no prefix", _str_encode),
    Approach("pb", "protobuf upb, repeated string (fresh strs)", _protobuf),
    Approach("pb_warm", "protobuf upb, UTF-8 already cached in strs", _protobuf,
             fresh=False),
    Approach("mp", "msgpack.packb(list) (fresh strs)", _msgpack),
    Approach("mp_warm", "msgpack.packb(list), UTF-8 already cached", _msgpack,
             fresh=False),
    Approach("one", "utf8pfx write_string per call", _u8p_one, u8p=True),
    Approach("batch", "utf8pfx write_strings", _u8p_batch(False), u8p=True),
    Approach("batch_bytes", "utf8pfx write_strings + getvalue()",
             _u8p_batch(True), u8p=True),
    Approach("length", "utf8pfx utf8_length per call (no output)", _u8p_len,
             u8p=True),
    Approach("copy", "floor: memcpy of the workload's UTF-8 (memoryview slice)",
             _copy_floor, make_input=_utf8_buffer),
    Approach("noop", "floor: no-op C method call per string (().count)",
             _noop_floor),
)
BY_KEY = {a.key: a for a in ALL}


# --- reader suite ---------------------------------------------------------------
def _copy_new(wl):
    # a new bytes object per record, sliced out of the blob: CPython's
    # allocation and memcpy for each record, as each str read_strings
    # returns needs; the spans come from the payloads' lengths before timing
    # (a VInt of n takes ceil(bits / 7) bytes, one at least), and the
    # per-record call is map's (C), not a Python loop
    blob = serialized(wl, "blob")
    spans, pos = [], 0
    for p in serialized(wl, "payloads"):
        pos += max(1, (len(p).bit_length() + 6) // 7)
        spans.append(slice(pos, pos + len(p)))
        pos += len(p)
    assert pos == len(blob)
    get = blob.__getitem__
    return lambda _strings: list(map(get, spans))


# format: how a workload's strings are serialized for the reader suite, with
# the writer suite's own functions (outside any clock).
_SERIALIZE = {
    "blob": lambda wl: bytes(_py_varint(wl)(wl.strings)),
    "payloads": lambda wl: [s.encode("utf-8") for s in wl.strings],
    "pb": lambda wl: _protobuf(wl)(wl.strings),
    "mp": lambda wl: _msgpack(wl)(wl.strings),
}


def serialized(wl, fmt):
    """The workload's strings serialized in `fmt`, made once per workload
    and shared by every approach that reads that format."""
    if fmt not in wl.serialized:
        wl.serialized[fmt] = _SERIALIZE[fmt](wl)
    return wl.serialized[fmt]


def _reader(fmt, make_decode):
    """Setup of a reader approach: make_decode(data) -> decode, called once;
    the timed run is decode(data) on the same serialized input every run
    (the strings handed to run are not used)."""
    def setup(wl):
        data = serialized(wl, fmt)
        decode = make_decode(data)
        return lambda _strings: decode(data)
    return setup


def _r_bytes_decode(_data):
    dec = bytes.decode
    return lambda payloads: list(map(dec, payloads))


def _r_protobuf(_data):
    from_string = _pb_class().FromString
    return lambda data: list(from_string(data).s)


def _r_msgpack(_data):
    import msgpack
    return msgpack.unpackb


def _r_read_strings(_data):
    reader = utf8pfx_module().BufferReader
    return lambda blob: reader(blob).read_strings()


def _r_decode_all(_data):
    return utf8pfx_module().decode_all


READERS = (
    Approach("py", "pure Python varint loop + bytes.decode into a list",
             _reader("blob", lambda _data: _peers.py_read), fresh=False),
    Approach("decode", "list(map(bytes.decode, payloads)): pre-sliced payloads, "
             "no prefix parsing", _reader("payloads", _r_bytes_decode), fresh=False),
    Approach("pb", "protobuf upb: list(Msg.FromString(data).s)",
             _reader("pb", _r_protobuf), fresh=False),
    Approach("mp", "msgpack.unpackb(data) of the packed list",
             _reader("mp", _r_msgpack), fresh=False),
    Approach("all", "utf8pfx decode_all(blob)", _reader("blob", _r_decode_all),
             fresh=False, u8p=True),
    Approach("read", "utf8pfx BufferReader(blob).read_strings()",
             _reader("blob", _r_read_strings), fresh=False, u8p=True),
    Approach("copy", "floor: memcpy of the blob into an existing buffer "
             "(memoryview slice)", _reader("blob", lambda b: _copy_into(len(b))),
             fresh=False),
    Approach("copy_new", "floor with allocation: a new bytes per record, "
             "list(map(blob.__getitem__, spans))", _copy_new,
             fresh=False),
)


def check_reader(wl: Workload, approaches):
    """Before timing: every reader approach (but the copy floor) gives back
    exactly the workload's strings (copy_new: their UTF-8 payloads)."""
    for a in approaches:
        got = a.setup(wl)(None)
        if a.key == "copy_new":  # the payloads, as bytes
            got = [b.decode("utf-8", "surrogatepass") for b in got]
        if a.key != "copy" and got != wl.strings:
            sys.exit(f"{wl.name}: reader {a.key} decoded something else")


def available(log=print, approaches=ALL):
    """The approaches (of ALL or READERS) this interpreter can run, with a
    note for each gap."""
    skip = set()
    pb = protobuf_info()
    if pb is None:
        log("note: protobuf not installed: pb rows skipped")
        skip |= {"pb", "pb_warm"}
    elif pb["backend"] != "upb":
        log(f"WARNING: protobuf backend is {pb['backend']!r}, not 'upb'")
    mp = msgpack_info()
    if mp is None:
        log("note: msgpack not installed: mp rows skipped")
        skip |= {"mp", "mp_warm"}
    elif not mp["extension"]:
        log("WARNING: msgpack runs its pure-Python fallback")
    if utf8pfx_module() is None:
        log("note: utf8pfx (with BufferWriter) not importable: utf8pfx rows "
            "skipped; build it with `python setup.py build_ext --inplace`")
        skip |= {a.key for a in approaches if a.u8p}
    return [a for a in approaches if a.key not in skip]


def check(wl: Workload, approaches):
    """Byte-exact check before timing: utf8pfx blobs equal the pure-Python
    blob, so the rows time the same output."""
    keys = {a.key for a in approaches}
    if not keys & {"one", "batch", "batch_bytes"}:
        return
    expect = bytes(_py_varint(wl)(wl.strings))
    for k in ("one", "batch"):
        if k in keys:
            got = BY_KEY[k].setup(wl)(wl.strings).getvalue()
            if got != expect:
                sys.exit(f"{wl.name}: utf8pfx {k} output differs from the "
                         "pure-Python blob")


# --- wire-format presets (python -m bench --presets) -----------------
# The same strings through every prefix= preset (and u16be with
# encoding="mutf-8"), each beside "varint" in the same run: write_strings on a
# pre-sized writer (b:), write_string per call (w:), and
# BufferReader(blob).read_strings() of the preset's own blob (r:).
PRESETS_MEASURED = (("varint", "utf-8"), ("zigzag", "utf-8"), ("varint+1", "utf-8"),
                    ("u16be", "utf-8"), ("i32be", "utf-8"), ("u32le", "utf-8"),
                    ("u16be", "mutf-8"))


def preset_name(prefix, encoding):
    return prefix + ("/mutf-8" if encoding == "mutf-8" else "")


def _preset_writer(wl, prefix, encoding):
    u = utf8pfx_module()
    size = 2 * wl.utf8_bytes + 10 * len(wl.strings)  # room for any preset
    return u.BufferWriter(capacity=size, prefix=prefix, encoding=encoding)


def _preset_batch(prefix, encoding):
    def setup(wl):
        w = _preset_writer(wl, prefix, encoding)

        def run(strings):
            w.clear()
            w.write_strings(strings)
            return w
        return run
    return setup


def _preset_one(prefix, encoding):
    def setup(wl):
        w = _preset_writer(wl, prefix, encoding)

        def run(strings):
            w.clear()
            _call_each(w.write_string, strings)
            return w
        return run
    return setup


def _preset_read(prefix, encoding):
    def setup(wl):
        u = utf8pfx_module()
        w = u.BufferWriter(prefix=prefix, encoding=encoding)
        w.write_strings(wl.strings)
        blob = w.getvalue()
        reader = u.BufferReader
        return lambda _strings: reader(blob, prefix=prefix, encoding=encoding).read_strings()
    return setup


PRESETS = tuple(
    Approach(f"{mode}:{preset_name(p, e)}", f"utf8pfx {what} prefix={p!r} encoding={e!r}",
             make(p, e), fresh=(mode != "r"), u8p=True)
    for mode, what, make in (("b", "write_strings", _preset_batch),
                             ("w", "write_string per call", _preset_one),
                             ("r", "BufferReader(blob).read_strings()", _preset_read))
    for p, e in PRESETS_MEASURED)


def presets_fit(wl):
    """u16be carries at most 65535 bytes a string: workloads with longer
    strings (vlarge) are left out of the presets suite."""
    return all(2 * len(s.encode("utf-8", "surrogatepass")) <= 0xFFFF  # MUTF-8 <= 2x
               for s in wl.strings)


def check_presets(wl, aps):
    """Before timing: every writer row gives the reference's bytes (checked
    on the first 200 strings against utf8pfx._reference, pure Python) and
    every reader row gives the strings back."""
    from utf8pfx._reference import reference_encode
    head = wl.strings[:200]
    for a in aps:
        mode, name = a.key.split(":", 1)
        prefix, _, enc = name.partition("/")
        enc = enc or "utf-8"
        if mode == "r":
            if a.setup(wl)(None) != wl.strings:
                sys.exit(f"{wl.name}: preset reader {a.key} decoded something else")
            continue
        got = a.setup(wl)(head).getvalue()
        want = b"".join(reference_encode(s, prefix, enc) for s in head)
        if got != want:
            sys.exit(f"{wl.name}: preset writer {a.key} differs from the reference")
