"""Pure-Python reference of every wire-format preset (no C, no Hypothesis).

Written for clarity, not speed, and independent of ``utf8pfx._core``: the
oracle that ``utf8pfx.testing`` checks codecs against.  Public names are
re-exported by ``utf8pfx.testing``, except the storage-kind classifier
(``storage_kind``, ``STORAGE_KINDS``), which the command line, the
benchmarks and the tests share from here (``utf8pfx.testing`` uses it under
its own kind names).
"""
import codecs
import re
from typing import List, Optional, Sequence, Tuple, Union

PREFIXES = ("varint", "zigzag", "varint+1", "u16be", "i32be", "u32le")
ENCODINGS = ("utf-8", "mutf-8")

#: Largest body length (in bytes) each preset can carry.
PREFIX_MAX = {
    "varint": 2**64 - 1,
    "zigzag": 2**63 - 1,
    "varint+1": 2**64 - 2,
    "u16be": 2**16 - 1,
    "i32be": 2**31 - 1,
    "u32le": 2**32 - 1,
}

BytesLike = Union[bytes, bytearray, memoryview]

#: PEP 393 storage kinds, narrowest first, as the command line names them.
STORAGE_KINDS = ("ascii", "ucs1", "ucs2", "ucs4")


def storage_kind(s: str, names: Sequence[str] = STORAGE_KINDS) -> str:
    """The PEP 393 storage kind CPython uses for s, from ``names`` (narrowest
    first: 7-bit, 1 byte, 2 bytes, 4 bytes a code point); "" is the first.

    ``names`` lets ``utf8pfx.testing`` say "latin1" where the command line
    says "ucs1", with one classifier behind both.
    """
    if s.isascii():  # a flag CPython keeps: no scan of the code points
        return names[0]
    top = ord(max(s))
    return names[1] if top < 0x100 else names[2] if top < 0x10000 else names[3]


def _check_prefix(prefix: str) -> None:
    if prefix not in PREFIX_MAX:
        raise ValueError("unknown prefix %r: expected one of %s" % (prefix, ", ".join(PREFIXES)))


def _check_encoding(encoding: str) -> str:
    names = {"utf-8": "utf-8", "utf8": "utf-8", "mutf-8": "mutf-8", "mutf8": "mutf-8"}
    if encoding not in names:
        raise ValueError("unknown encoding %r: expected 'utf-8' or 'mutf-8'" % (encoding,))
    return names[encoding]


def leb128(n: int) -> bytes:
    """Unsigned LEB128: 7 bits a byte, low group first, high bit = more."""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode_prefix(n: int, prefix: str = "varint") -> bytes:
    """The prefix of a body of n bytes; OverflowError if it does not fit."""
    _check_prefix(prefix)
    if n < 0:
        raise ValueError("a length is >= 0, got %d" % n)
    if n > PREFIX_MAX[prefix]:
        raise OverflowError("a body of %d bytes is too long for prefix=%r: at most %d bytes"
                            % (n, prefix, PREFIX_MAX[prefix]))
    if prefix == "varint":
        return leb128(n)
    if prefix == "zigzag":  # Avro: zigzag(n) = (n << 1) ^ (n >> 63) = 2n for n >= 0
        return leb128(2 * n)
    if prefix == "varint+1":  # Kafka compact: length + 1, 0 is null
        return leb128(n + 1)
    if prefix == "u16be":
        return n.to_bytes(2, "big")
    if prefix == "i32be":
        return n.to_bytes(4, "big", signed=True)
    return n.to_bytes(4, "little")  # u32le


def _mutf8_char(c: int) -> bytes:
    """MUTF-8 of one code point, by the definition: the one kept in view of
    the faster run encoder below, which the tests check against it."""
    if c == 0:
        return b"\xc0\x80"
    if c >= 0x10000:  # the UTF-16 surrogate pair, each half as its 3-byte form
        c -= 0x10000
        return _mutf8_char(0xD800 + (c >> 10)) + _mutf8_char(0xDC00 + (c & 0x3FF))
    if c < 0x80:
        return bytes([c])
    if c < 0x800:
        return bytes([0xC0 | (c >> 6), 0x80 | (c & 0x3F)])
    return bytes([0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)])


_SURROGATE_RUN = re.compile("[\ud800-\udfff]+")
_SUPPLEMENTARY = re.compile("[\U00010000-\U0010ffff]")


def _utf16_pair(m: "re.Match[str]") -> str:
    c = ord(m.group()) - 0x10000
    return chr(0xD800 + (c >> 10)) + chr(0xDC00 + (c & 0x3FF))


def _mutf8_run(run: str) -> bytes:
    """MUTF-8 of a run without surrogates, a whole run per codec call (a
    Python loop per character made the reference the slowest part of every
    property test): each UTF-16 unit as its UTF-8 form, which is what
    "surrogatepass" writes for a pair's halves, and NUL as C0 80."""
    units = _SUPPLEMENTARY.sub(_utf16_pair, run)
    return units.encode("utf-8", "surrogatepass").replace(b"\x00", b"\xc0\x80")


def mutf8_encode(s: str, errors: str = "strict") -> bytes:
    """Java's modified UTF-8 of s.  Lone surrogates go to the error handler
    exactly as the UTF-8 codec hands them over (one call per run, a
    UnicodeEncodeError naming "utf-8"; under "surrogateescape" the run's
    escapable head is written first and the error starts after it);
    "surrogatepass" writes their 3 bytes."""
    out = bytearray()
    i, n = 0, len(s)
    while i < n:
        m = _SURROGATE_RUN.search(s, i)
        if m is None:
            out += _mutf8_run(s[i:])
            break
        out += _mutf8_run(s[i:m.start()])
        i, j = m.span()
        if errors == "surrogatepass":
            out += s[i:j].encode("utf-8", "surrogatepass")
            i = j
            continue
        if errors == "surrogateescape":
            # as CPython's UTF-8 encoder: the run's leading U+DC80..U+DCFF
            # become their low bytes; the handler sees the rest of the run
            while i < j and 0xDC80 <= ord(s[i]) <= 0xDCFF:
                out.append(ord(s[i]) & 0xFF)
                i += 1
            if i == j:
                continue
        exc = UnicodeEncodeError("utf-8", s, i, j, "surrogates not allowed")
        rep, pos = codecs.lookup_error(errors)(exc)
        if isinstance(rep, str):
            if not rep.isascii():
                raise exc
            out += rep.encode("ascii")
        else:
            out += rep
        i = pos + n if pos < 0 else pos
    return bytes(out)


def reference_body(s: str, encoding: str = "utf-8", errors: str = "strict") -> bytes:
    """The payload: s.encode("utf-8", errors), or its MUTF-8."""
    if _check_encoding(encoding) == "mutf-8":
        return mutf8_encode(s, errors)
    return str.encode(s, "utf-8", errors)


def reference_encode(s: Optional[str], prefix: str = "varint", encoding: str = "utf-8",
                     errors: str = "strict") -> bytes:
    """prefix(len(body)) + body; None is the null marker (b"\\x00") under
    prefix="varint+1" only."""
    _check_prefix(prefix)
    if s is None:
        if prefix != "varint+1":
            raise TypeError("None is only written under prefix='varint+1'")
        return b"\x00"
    if not isinstance(s, str):
        raise TypeError("expected str, not %s" % type(s).__name__)
    body = reference_body(s, encoding, errors)
    return encode_prefix(len(body), prefix) + body


def read_prefix(data: BytesLike, pos: int, prefix: str = "varint") -> Tuple[Optional[int], int]:
    """(length or None for the null marker, position after the prefix)."""
    _check_prefix(prefix)
    data = bytes(data)
    fixed = {"u16be": 2, "i32be": 4, "u32le": 4}.get(prefix)
    if fixed:
        if len(data) - pos < fixed:
            raise ValueError("truncated %s length prefix at offset %d" % (prefix, pos))
        raw = data[pos:pos + fixed]
        if prefix == "u16be":
            n = int.from_bytes(raw, "big")
        elif prefix == "i32be":
            n = int.from_bytes(raw, "big", signed=True)
        else:
            n = int.from_bytes(raw, "little")
        if n < 0:
            raise ValueError("negative length %d at offset %d" % (n, pos))
        return n, pos + fixed
    value, shift, at = 0, 0, pos
    while True:
        if at >= len(data):
            raise ValueError("truncated varint at offset %d" % pos)
        if at - pos == 10:
            raise ValueError("varint at offset %d is longer than 10 bytes" % pos)
        b = data[at]
        value |= (b & 0x7F) << shift
        shift += 7
        at += 1
        if not b & 0x80:
            break
    if value >= 2**64:
        raise ValueError("varint at offset %d exceeds 2**64 - 1" % pos)
    if prefix == "zigzag":
        if value & 1:
            raise ValueError("negative length %d at offset %d" % (-(value >> 1) - 1, pos))
        return value >> 1, at
    if prefix == "varint+1":
        return (None if value == 0 else value - 1), at
    return value, at


def mutf8_decode(b: BytesLike, errors: str = "strict") -> str:
    """Java's modified UTF-8 back to str.  Accepts C0 80 and a raw 00 for
    U+0000 (as DataInputStream.readUTF), pairs a high and a low surrogate
    form into one supplementary code point, takes a lone surrogate form only
    under "surrogatepass"; rejects other overlong forms and 4-byte
    sequences.  Errors: UnicodeDecodeError("mutf-8", ...) to the handler,
    with the bounds CPython's UTF-8 decoder would give."""
    b = bytes(b)
    out: List[str] = []
    i, n = 0, len(b)

    def cont(k: int) -> bool:
        return k < n and 0x80 <= b[k] <= 0xBF

    while i < n:
        x = b[i]
        err = None
        if x < 0x80:
            out.append(chr(x))
            i += 1
            continue
        if x == 0xC0:
            if i + 1 >= n:
                err = (n, "unexpected end of data")
            elif b[i + 1] != 0x80:
                err = (i + 1, "invalid start byte")
            else:
                out.append("\0")
                i += 2
                continue
        elif 0xC2 <= x <= 0xDF:
            if i + 1 >= n:
                err = (n, "unexpected end of data")
            elif not cont(i + 1):
                err = (i + 1, "invalid continuation byte")
            else:
                out.append(chr(((x & 0x1F) << 6) | (b[i + 1] & 0x3F)))
                i += 2
                continue
        elif 0xE0 <= x <= 0xEF:
            second_ok = i + 1 < n and cont(i + 1) and (x != 0xE0 or b[i + 1] >= 0xA0)
            if i + 1 < n and not second_ok:
                err = (i + 1, "invalid continuation byte")
            elif i + 2 < n and not cont(i + 2):
                err = (i + 2, "invalid continuation byte")
            elif i + 2 >= n:
                err = (n, "unexpected end of data")
            else:
                c = ((x & 0x0F) << 12) | ((b[i + 1] & 0x3F) << 6) | (b[i + 2] & 0x3F)
                if 0xD800 <= c <= 0xDBFF and i + 5 < n and b[i + 3] == 0xED \
                        and 0xB0 <= b[i + 4] <= 0xBF and cont(i + 5):
                    lo = ((b[i + 4] & 0x3F) << 6) | (b[i + 5] & 0x3F) | 0xD000
                    out.append(chr(0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00)))
                    i += 6
                    continue
                if 0xD800 <= c <= 0xDFFF and errors != "surrogatepass":
                    err = (i + 3, "lone surrogate not allowed")
                else:
                    out.append(chr(c))
                    i += 3
                    continue
        else:
            err = (i + 1, "invalid start byte")
        end, reason = err
        exc = UnicodeDecodeError("mutf-8", b, i, end, reason)
        rep, pos = codecs.lookup_error(errors)(exc)
        if not isinstance(rep, str):
            raise TypeError("decoding error handler must return (str, int) tuple")
        out.append(rep)
        i = pos + n if pos < 0 else pos
    return "".join(out)


def reference_decode_body(b: BytesLike, encoding: str = "utf-8", errors: str = "strict") -> str:
    if _check_encoding(encoding) == "mutf-8":
        return mutf8_decode(b, errors)
    return bytes(b).decode("utf-8", errors)


def reference_decode_all(data: BytesLike, prefix: str = "varint", encoding: str = "utf-8",
                         errors: str = "strict") -> List[Optional[str]]:
    """Every prefixed string of data, in order (None for a null marker)."""
    data = bytes(data)
    pos, out = 0, []  # type: int, List[Optional[str]]
    while pos < len(data):
        n, at = read_prefix(data, pos, prefix)
        if n is None:
            out.append(None)
            pos = at
            continue
        if n > len(data) - at:
            raise ValueError("length %d (prefix at offset %d) runs past the end of the data"
                             % (n, pos))
        out.append(reference_decode_body(data[at:at + n], encoding, errors))
        pos = at + n
    return out


def reference_decode(data: BytesLike, prefix: str = "varint", encoding: str = "utf-8",
                     errors: str = "strict") -> Optional[str]:
    """Exactly one prefixed string (trailing bytes are an error)."""
    data = bytes(data)
    n, at = read_prefix(data, 0, prefix)
    end = at + (n or 0)
    if n is not None and n > len(data) - at:
        raise ValueError("length %d runs past the end of the data" % n)
    if end != len(data):
        raise ValueError("trailing data: %d byte(s) after offset %d" % (len(data) - end, end))
    return None if n is None else reference_decode_body(data[at:end], encoding, errors)
