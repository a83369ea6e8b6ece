"""Pure-Python reference for utf8pfx: what the C core must produce, byte for byte.

Nothing here calls the compiled core.  CPython's own UTF-8 codec is the oracle
for the payload; the VInt (unsigned LEB128) writer and the storage-kind
classifier are the package's pure-Python reference (utf8pfx._reference:
leb128, storage_kind, STORAGE_KINDS), which shares no code with the C it
checks and is itself pinned to hand-written values (test_writer.py's
test_write_vint_vectors, test_cli.py's test_split_lines_and_storage_kind).
vint() below is leb128 with the format's range checked, nothing more.
The reader's reference below parses VInts on its own, to name the offset of
every error.
"""
import codecs
import functools
import re

from utf8pfx._reference import leb128, storage_kind

VINT_MAX = 2**64 - 1

# Handlers the contract names, plus the custom ones registered below.
BUILTIN_HANDLERS = (
    "strict",
    "surrogatepass",
    "surrogateescape",
    "replace",
    "ignore",
    "backslashreplace",
    "xmlcharrefreplace",
)


def vint(n):
    """Minimal unsigned LEB128 of n; ValueError outside 0 <= n < 2**64, the
    range of the format (a test asking for more is wrong, not the writer)."""
    if not 0 <= n <= VINT_MAX:
        raise ValueError(n)
    return leb128(n)


def vint_size(n):
    return len(vint(n))


def pfx(payload):
    """One record: vint(len(payload)) + payload, the bytes as they are."""
    return vint(len(payload)) + payload


def utf8(s, errors="strict"):
    # str.encode, not s.encode: a str subclass may override encode().
    return str.encode(s, "utf-8", errors)


def ref_encode(s, errors="strict"):
    """vint(len(e)) + e, e = s.encode("utf-8", errors)."""
    e = utf8(s, errors)
    return vint(len(e)) + e


def ref_encode_many(xs, errors="strict"):
    return b"".join(ref_encode(x, errors) for x in xs)


def ref_read_vint(blob, pos):
    """Decode one VInt at blob[pos:]; returns (value, new_pos).

    Strict: rejects truncated data, more than 10 bytes, values >= 2**64 and
    non-minimal forms (the writer must always emit the minimal form).
    """
    try:
        return ref_vint(blob, pos, strict_vint=True)
    except RefError as e:
        raise ValueError("VInt at offset %d: truncated, over 10 bytes, above 2**64-1 "
                         "or not minimal" % e.offset) from None


def ref_decode_all(blob, errors=None):
    """Split a blob of VInt-prefixed records into their payloads.

    Returns a list of bytes, or of str decoded as UTF-8 with `errors` if given.
    Raises ValueError on any malformation, including trailing garbage.
    """
    blob = bytes(blob)
    out = []
    pos = 0
    while pos < len(blob):
        n, pos = ref_read_vint(blob, pos)
        if pos + n > len(blob):
            raise ValueError("record overruns the blob at offset %d" % pos)
        out.append(blob[pos:pos + n])
        pos += n
    if errors is not None:
        out = [b.decode("utf-8", errors) for b in out]
    return out


#: The widest UTF-8 of a code point of each PEP 393 storage kind
#: (utf8pfx._reference.STORAGE_KINDS).
MAX_BYTES_PER_CP = {"ascii": 1, "ucs1": 2, "ucs2": 3, "ucs4": 4}


# --------------------------------------------------------------------------
# The reader's reference: every record, or the error and the offset it names
# --------------------------------------------------------------------------

class RefError(Exception):
    """What the reference reader refuses: ``kind`` is the exception utf8pfx
    must raise (ValueError or UnicodeDecodeError), ``offset`` the absolute
    offset its message names, ``exc`` CPython's UnicodeDecodeError."""

    def __init__(self, kind, offset, exc=None):
        super().__init__(kind, offset)
        self.kind, self.offset, self.exc = kind, offset, exc


def ref_vint(data, pos, strict_vint=False):
    """(value, position after it) of the VInt at data[pos:].  Lenient, as the
    reader is by default: a non-minimal VInt passes unless strict_vint."""
    start, v, shift = pos, 0, 0
    for i in range(10):
        if pos >= len(data):
            raise RefError(ValueError, start)
        b = data[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            if v >= 2**64:
                raise RefError(ValueError, start)
            if strict_vint and i > 0 and b == 0:
                raise RefError(ValueError, start)
            return v, pos
    raise RefError(ValueError, start)


def ref_payload(data, pos, strict_vint=False):
    """(start, end) of the payload of the record at data[pos:]."""
    n, p = ref_vint(data, pos, strict_vint)
    if n > len(data) - p:
        raise RefError(ValueError, pos)
    return p, p + n


def ref_read_string(data, pos, errors="strict", strict_vint=False):
    """(str, position after it) of the record at data[pos:]."""
    p, end = ref_payload(data, pos, strict_vint)
    try:
        return bytes(data[p:end]).decode("utf-8", errors), end
    except UnicodeDecodeError as e:
        raise RefError(UnicodeDecodeError, p + e.start, e)


def ref_read_all(data, errors="strict"):
    """Every record of data as str (what decode_all returns)."""
    out, pos = [], 0
    while pos < len(data):
        s, pos = ref_read_string(data, pos, errors)
        out.append(s)
    return out


def offset_of(exc):
    """The absolute offset an error of utf8pfx's reader names."""
    if isinstance(exc, UnicodeDecodeError):
        return exc.data_offset
    m = re.search(r"offset (\d+)", str(exc))
    assert m, str(exc)
    return int(m.group(1))


def ours_or_error(fn):
    """utf8pfx's outcome, comparable with ref_or_error's: ("ok", value), or
    ("err", type, offset) and, for bad UTF-8, start/end/reason too."""
    try:
        return ("ok", fn())
    except UnicodeDecodeError as e:
        assert e.data_offset - e.payload_offset == e.start, (e.data_offset, e.payload_offset)
        return ("err", UnicodeDecodeError, offset_of(e), e.start, e.end, e.reason)
    except ValueError as e:
        return ("err", ValueError, offset_of(e))


def ref_or_error(fn):
    """The reference's outcome, as ours_or_error gives utf8pfx's."""
    try:
        return ("ok", fn())
    except RefError as e:
        if e.kind is UnicodeDecodeError:
            return ("err", UnicodeDecodeError, e.offset, e.exc.start, e.exc.end, e.exc.reason)
        return ("err", ValueError, e.offset)


def has_surrogate(s):
    return any(0xD800 <= ord(c) <= 0xDFFF for c in s)


def outcome(fn, *args, **kwargs):
    """Run fn and summarise what happened, for comparing two implementations.

    ("ok", value) or ("raise", type, details) where details hold the fields
    that identify a UnicodeEncodeError (encoding, object, start, end, reason)
    or, for other exceptions, the type only (messages are not part of the
    contract unless a test says so).
    """
    try:
        return ("ok", fn(*args, **kwargs))
    except UnicodeEncodeError as e:
        return ("raise", UnicodeEncodeError, exc_fields(e))
    except Exception as e:  # noqa: BLE001 - we compare types
        return ("raise", type(e), None)


def exc_fields(e):
    return (e.encoding, e.object, e.start, e.end, e.reason)


def lossless(errors):
    """Handlers whose output always decodes back to the input string.

    (Not surrogateescape: escaped bytes can spell valid UTF-8, e.g.
    '\\udcc3\\udca9' -> b'\\xc3\\xa9' -> 'e-acute'.)"""
    return errors in ("strict", "surrogatepass")


def decode_back(b, errors):
    """Inverse of utf8(s, errors) for the lossless handlers."""
    return b.decode("utf-8", errors)


# --------------------------------------------------------------------------
# Custom error handlers (registered once, at import of this module).
#
# Their output depends on exc.start / exc.end, so they also check that the
# C core hands the handler the same surrogate runs CPython does.
# --------------------------------------------------------------------------

def _span(exc):
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    return ("<%d-%d>" % (exc.start, exc.end), exc.end)


def _one_at_a_time(exc):
    # Replaces only the first char of the run: the codec must call again.
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    return ("[%x@%d/%d]" % (ord(str.__getitem__(exc.object, exc.start)), exc.start, exc.end),
            exc.start + 1)


def _bytes_rep(exc):
    # A bytes replacement goes out as is (CPython's UTF-8 encoder allows it).
    return (b"\xff" * (exc.end - exc.start), exc.end)


def _long_rep(exc):
    # Far longer than any UTF-8 of a surrogate: breaks "3 bytes per cp" guesses.
    return ("#" * 200 * (exc.end - exc.start), exc.end)


def _skip_to_end(exc):
    # Jumps over everything after the error, surrogate or not.
    return ("!", str.__len__(exc.object))


def _negative_pos(exc):
    # Negative positions count from the end of the string.
    n = str.__len__(exc.object)  # not len(): StrSub lies about its length
    return ("~", exc.end - n if exc.end < n else n)


def _nonascii_str(exc):
    # The UTF-8 encoder only accepts ASCII str replacements: CPython raises
    # the original UnicodeEncodeError.
    return ("\u00e9", exc.end)


def _garbage(exc):
    return 42


def _bad_tuple(exc):
    return ("x", "not an int")


def _out_of_bounds(exc):
    return ("x", str.__len__(exc.object) + 5)


def _raises_lookup(exc):
    raise LookupError("handler says no")


def _raises_value(exc):
    raise ValueError("handler says no")


class Counter:
    """A stateful handler: numbers each call.  If the C core calls the handler
    more (or fewer) times than CPython, the output differs."""

    def __init__(self):
        self.n = 0

    def __call__(self, exc):
        self.n += 1
        return ("(%d)" % self.n, exc.end)


COUNTER = Counter()

CUSTOM_HANDLERS = {
    "utf8pfx-test-span": _span,
    "utf8pfx-test-one": _one_at_a_time,
    "utf8pfx-test-bytes": _bytes_rep,
    "utf8pfx-test-long": _long_rep,
    "utf8pfx-test-skip": _skip_to_end,
    "utf8pfx-test-negpos": _negative_pos,
    "utf8pfx-test-nonascii": _nonascii_str,
    "utf8pfx-test-garbage": _garbage,
    "utf8pfx-test-badtuple": _bad_tuple,
    "utf8pfx-test-oob": _out_of_bounds,
    "utf8pfx-test-lookup": _raises_lookup,
    "utf8pfx-test-valueerror": _raises_value,
    "utf8pfx-test-counter": COUNTER,
}

for _name, _fn in CUSTOM_HANDLERS.items():
    codecs.register_error(_name, _fn)

# Handlers that produce output (never raise) on any string, for the property
# suite.  strict is special-cased (surrogate-free input only).
TOTAL_HANDLERS = (
    "surrogatepass",
    "replace",
    "ignore",
    "backslashreplace",
    "xmlcharrefreplace",
    "utf8pfx-test-span",
    "utf8pfx-test-one",
    "utf8pfx-test-bytes",
    "utf8pfx-test-skip",
    "utf8pfx-test-negpos",
)

# Handlers that can raise on some surrogate strings (compared as outcomes).
PARTIAL_HANDLERS = (
    "strict",
    "surrogateescape",  # only U+DC80..U+DCFF escape
    "utf8pfx-test-nonascii",
    "utf8pfx-test-garbage",
    "utf8pfx-test-badtuple",
    "utf8pfx-test-oob",
    "utf8pfx-test-lookup",
    "utf8pfx-test-valueerror",
)


# --------------------------------------------------------------------------
# Deterministic text builders for boundary tests
# --------------------------------------------------------------------------

#: One char of each UTF-8 width, and the smallest char that forces each kind.
WIDE = {1: "a", 2: "\u00e9", 3: "\u20ac", 4: "\U0001F600"}
FORCE = {"ascii": "a", "ucs1": "\u00e9", "ucs2": "\u0101", "ucs4": "\U0001F600"}


def _arrange(high, low_count, where):
    """Place the list of non-ASCII chars `high` among low_count 'a's."""
    if where == "start":
        return "".join(high) + "a" * low_count
    if where == "end":
        return "a" * low_count + "".join(high)
    # spread: high[i] goes right after gap i of 'a's, gaps as even as possible
    k = len(high)
    if k == 0:
        return "a" * low_count
    parts = []
    for i, h in enumerate(high):
        gap = (low_count * (i + 1)) // (k + 1) - (low_count * i) // (k + 1)
        parts.append("a" * gap)
        parts.append(h)
    parts.append("a" * (low_count - (low_count * k) // (k + 1)))
    return "".join(parts)


def legacy_str(text):
    """text as a legacy str (Python < 3.12): wchar_t storage only, not ready
    (no PEP 393 kind) until someone asks for it."""
    import ctypes

    api = ctypes.pythonapi
    api.PyUnicode_FromUnicode.restype = ctypes.py_object
    api.PyUnicode_FromUnicode.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t]
    api.PyUnicode_AsUnicode.restype = ctypes.c_void_p
    api.PyUnicode_AsUnicode.argtypes = [ctypes.py_object]
    s = api.PyUnicode_FromUnicode(None, len(text))
    if text:
        buf = (ctypes.c_wchar * len(text)).from_address(api.PyUnicode_AsUnicode(s))
        for i, c in enumerate(text):
            buf[i] = c
    return s


@functools.lru_cache(maxsize=None)
def make_text(kind, ncp, nbytes, where="spread"):
    """A str of exactly ncp code points, nbytes of UTF-8, stored as `kind`.

    Raises ValueError when no such string exists.
    """
    extra = nbytes - ncp
    if kind == "ascii":
        if extra != 0:
            raise ValueError("ascii has 1 byte per code point")
        high = []
    elif kind == "ucs1":
        high = [WIDE[2]] * extra  # each adds 1 byte
        if extra < 1:
            raise ValueError("ucs1 needs at least one char >= U+0080")
    elif kind == "ucs2":
        if extra < 1:
            raise ValueError("ucs2 needs at least one char >= U+0100")
        # U+0101 (2 bytes) forces the kind; then 3-byte chars, a 2-byte for an odd rest
        high = [FORCE["ucs2"]]
        rest = extra - 1
        high += [WIDE[3]] * (rest // 2) + [WIDE[2]] * (rest % 2)
    elif kind == "ucs4":
        if extra < 3:
            raise ValueError("ucs4 needs at least one astral char")
        rest = extra - 3
        high = [WIDE[4]] * (1 + rest // 3) + {0: [], 1: [WIDE[2]], 2: [WIDE[3]]}[rest % 3]
    else:
        raise ValueError(kind)
    if len(high) > ncp:
        raise ValueError("too many bytes for %d code points of %s" % (ncp, kind))
    s = _arrange(high, ncp - len(high), where)
    assert len(s) == ncp and len(s.encode("utf-8")) == nbytes and storage_kind(s) == kind, (
        kind, ncp, nbytes)
    return s


@functools.lru_cache(maxsize=None)
def make_surrogate_text(kind, ncp, nbytes, errors, surrogate="\udcff"):
    """A str of ncp code points with at least one lone surrogate whose UTF-8
    under `errors` is nbytes long; kind is the non-surrogate content's kind
    ('ascii'/'ucs1' content still makes a UCS2 str).  None if impossible.

    Layout: k surrogates, m wide chars (3 bytes; astral 4 bytes for ucs4),
    the rest ASCII, spread out.
    """
    r = len(utf8(surrogate, errors))
    w = {"ascii": 1, "ucs1": 2, "ucs2": 3, "ucs4": 4}[kind]
    wide = WIDE[w]
    for k in range(1, ncp + 1):
        need = nbytes - k * r - (ncp - k)  # bytes beyond 1 per non-surrogate cp
        if w == 1:
            if need != 0:
                continue
            m = 0
        else:
            if need < 0 or need % (w - 1):
                continue
            m = need // (w - 1)
            if m < 1 or m > ncp - k:
                continue
        chars = [surrogate] * k + [wide] * m
        s = _arrange(chars, ncp - k - m, "spread")
        assert len(s) == ncp and len(utf8(s, errors)) == nbytes
        return s
    return None
