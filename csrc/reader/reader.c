/*
 * BufferReader and the module functions decode() / decode_all(): VInt-
 * prefixed UTF-8 back into str, straight into the final PEP 393 kind.
 *
 * Data: the reader holds a PyBUF_SIMPLE export of its object from creation
 * to close() / __exit__ / GC, and reads it in place (never copies it).
 *
 * Hostile input: every record is parsed as
 *   u8p_vint_read (never past the data) -> length <= bytes left (checked
 *   before anything is allocated) -> scan (validates; gives the code point
 *   count and the PEP 393 class) -> PyUnicode_New(ncp, maxchar) -> transcode.
 *   Payloads of 64+ bytes below U+0100 take a shortcut where the kernel level
 *   has one: prescan (max byte, ncp; no validation) -> PyUnicode_New ->
 *   to_ucs1_checked, which validates as it writes and never writes past the
 *   allocated ncp (from RD_UCS1_ROOMY bytes on: no prescan, a str with room
 *   for n code points, shrunk after); if it rejects the bytes the str is
 *   dropped and the scan above runs for the exact error.
 * Each failure raises ValueError naming what was expected and the absolute
 * offset (rd_ctx.base, 0 here, is added where a StreamReader reads a window
 * of its stream), or UnicodeDecodeError.  The position only moves once a
 * whole call has succeeded; read_strings() is all or nothing.
 *
 * UnicodeDecodeError: start, end, reason, encoding and object (the payload
 * bytes) are exactly those of payload.decode("utf-8", errors).  The absolute
 * offsets are added without changing them: attributes `payload_offset`
 * (where the payload starts in the data) and `data_offset` (payload_offset +
 * start, the first invalid byte) on every Python, and on 3.11+ a note
 * (PEP 678) naming both, which tracebacks print under the message.
 *
 * Error handlers: valid UTF-8 never leaves the kernels ("surrogatepass" lets
 * the scan accept ED A0..BF xx).  A payload with an invalid sequence under a
 * handler other than strict is decoded by CPython's codec
 * (PyUnicode_DecodeUTF8) - correct by construction, and only that payload.
 *
 * Threads: read_string of a UTF-8 payload of 1 MiB or more (U8P_NOGIL_MIN)
 * scans and transcodes it with the GIL released, holding the reader's lock
 * (objlock.h); every method and getter first waits for such a read to
 * finish (reader_check, R_WAIT), so another thread sees the position before
 * or after it, never in between, and close() cannot release the data under
 * it.
 *
 * Re-entrancy: a custom error handler (or a finalizer run by the GC) may run
 * Python code in the middle of a read; close() refuses while a read is in
 * progress, so the memory being read stays exported.
 */
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "kernels/decode_short.h"

/* ---------------------------------------------------------------- errors */

static int
set_ssize_attr(PyObject *obj, const char *name, Py_ssize_t v)
{
    PyObject *o = PyLong_FromSsize_t(v);
    int r;
    if (o == NULL)
        return -1;
    r = PyObject_SetAttrString(obj, name, o);
    Py_DECREF(o);
    return r;
}

#if PY_VERSION_HEX >= 0x030B0000
/* Adds a note (PEP 678) to exc, taking the reference to note.  The note is
 * made, and checked, before the call: with a NULL argument the call would
 * look add_note up with the MemoryError already set, and raise
 * AttributeError in its place. */
static int
add_note(PyObject *exc, PyObject *note)
{
    PyObject *r;
    if (note == NULL)
        return -1;
    r = u8p_call_method_interned(exc, "add_note", note);
    Py_DECREF(note);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}
#endif

/* Adds the absolute offsets to a UnicodeDecodeError object.  Returns -1
 * with that failure's exception set (a MemoryError, in practice) when it
 * could not: the caller raises that instead, since a UnicodeDecodeError
 * without its documented offsets would be a half-made error. */
static int
annotate_exc(PyObject *value, Py_ssize_t payload_off)
{
    Py_ssize_t start;

    if (value == NULL || !PyObject_TypeCheck(value, (PyTypeObject *)PyExc_UnicodeDecodeError))
        return 0;
    if (PyUnicodeDecodeError_GetStart(value, &start) < 0 ||
        set_ssize_attr(value, "payload_offset", payload_off) < 0 ||
        set_ssize_attr(value, "data_offset", payload_off + start) < 0)
        return -1;
#if PY_VERSION_HEX >= 0x030B0000
    if (add_note(value, PyUnicode_FromFormat(
                            "utf8pfx: invalid UTF-8 at offset %zd of the data (in the string "
                            "payload that starts at offset %zd)",
                            payload_off + start, payload_off)) < 0)
        return -1;
#endif
    return 0;
}

void
u8p_rd_annotate(Py_ssize_t at, Py_ssize_t idx, const char *whole)
{
    PyObject *v = u8p_exc_take();
    if (v == NULL)
        return;
    if (Py_TYPE(v) == (PyTypeObject *)PyExc_ValueError) {
        PyObject *msg = PyUnicode_FromFormat("%S (record index %zd)", v, idx);
        PyObject *nv, *tb;
        if (msg == NULL)
            goto fail;
        nv = PyObject_CallOneArg(PyExc_ValueError, msg);
        Py_DECREF(msg);
        if (nv == NULL)
            goto fail;
        /* one raised from Python code (an error handler's) keeps its
         * traceback as the cause; the reader's own have none */
        tb = PyException_GetTraceback(v);
        if (tb != NULL) {
            Py_DECREF(tb);
            PyException_SetCause(nv, Py_NewRef(v));
        }
        if (set_ssize_attr(nv, "data_offset", at) < 0 ||
            set_ssize_attr(nv, "record_index", idx) < 0) {
            Py_DECREF(nv);
            goto fail;
        }
        Py_DECREF(v);
        PyErr_SetObject(PyExc_ValueError, nv);
        Py_DECREF(nv);
        return;
    }
    if (PyObject_TypeCheck(v, (PyTypeObject *)PyExc_UnicodeDecodeError)) {
        if (set_ssize_attr(v, "record_index", idx) < 0)
            goto fail;
#if PY_VERSION_HEX >= 0x030B0000
        if (add_note(v, PyUnicode_FromFormat(
                            "utf8pfx: in record index %zd of the %s, which starts at offset %zd",
                            idx, whole, at)) < 0)
            goto fail;
#else
        (void)whole; /* notes (PEP 678) start at 3.11 */
#endif
    }
    u8p_exc_raise(v);
    return;
fail:
    Py_DECREF(v); /* the annotation's own error stays raised */
}

/* Annotates the exception being raised, if it is a UnicodeDecodeError. */
static void
annotate_decode_error(Py_ssize_t payload_off)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *value = PyErr_GetRaisedException();
    if (annotate_exc(value, payload_off) < 0) {
        Py_XDECREF(value); /* the annotation's own error stays raised */
        return;
    }
    PyErr_SetRaisedException(value);
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (annotate_exc(value, payload_off) < 0) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return;
    }
    PyErr_Restore(type, value, tb);
#endif
}

static void
raise_strict(const uint8_t *p, Py_ssize_t n, const u8p_scan_result *r, u8p_dec_status st,
             Py_ssize_t payload_off)
{
    PyObject *exc = PyUnicodeDecodeError_Create("utf-8", (const char *)p, n,
                                                (Py_ssize_t)r->err_start,
                                                (Py_ssize_t)r->err_end, u8p_dec_reason(st));
    if (exc == NULL)
        return;
    if (annotate_exc(exc, payload_off) == 0)
        PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
}

/* ValueError for a bad prefix at `at`; `what` is "string", "bytes" or "varint". */
static int
vint_error(const rd_ctx *c, Py_ssize_t at, int k, const char *what)
{
    Py_ssize_t avail = c->len - at;
    if (k == 0) {
        if (avail == 0)
            PyErr_Format(PyExc_ValueError,
                         "expected a varint%s at offset %zd, found the end of the data",
                         what[0] == 'v' ? "" : " length prefix", at + c->base);
        else
            PyErr_Format(PyExc_ValueError,
                         "truncated varint at offset %zd: expected a byte without the "
                         "continuation bit, found the end of the data after %zd byte(s)",
                         at + c->base, avail);
    }
    else if (c->data[at + 9] & 0x80) {
        PyErr_Format(PyExc_ValueError,
                     "varint at offset %zd is longer than 10 bytes (expected at most 10)",
                     at + c->base);
    }
    else {
        PyErr_Format(PyExc_ValueError,
                     "varint at offset %zd exceeds 2**64 - 1 (its 10th byte is 0x%02x, "
                     "expected 0x00 or 0x01)",
                     at + c->base, c->data[at + 9]);
    }
    return -1;
}

/*
 * Parses a varint at *pos.  On success stores the value, advances *pos and
 * returns 0; else raises ValueError and returns -1 (*pos unchanged).
 */
static inline int
rd_vint(const rd_ctx *c, Py_ssize_t *pos, uint64_t *value, const char *what)
{
    int minimal = 1;
    Py_ssize_t at = *pos;
    int k;
    /* one-byte fast path */
    if (at < c->len && c->data[at] < 0x80) {
        *value = c->data[at];
        *pos = at + 1;
        return 0;
    }
    k = u8p_vint_read(c->data + at, (size_t)(c->len - at), value, &minimal);
    if (k <= 0)
        return vint_error(c, at, k, what);
    if (c->strict_vint && !minimal) {
        PyErr_Format(PyExc_ValueError,
                     "non-minimal varint at offset %zd: %d bytes for the value %llu, "
                     "expected %d (strict_vint=True)",
                     at + c->base, k, (unsigned long long)*value, (int)u8p_vint_size(*value));
        return -1;
    }
    *pos = at + k;
    return 0;
}

/* ValueError for a prefix of the preset that does not parse at `at`. */
static int
prefix_error(const rd_ctx *c, Py_ssize_t at, u8p_prefix_status st, const u8p_prefix_read_t *rd,
             const char *what)
{
    size_t fixed = u8p_prefix_fixed(c->prefix);
    PyObject *name = u8p_prefix_name(c->prefix);
    if (name == NULL)
        return -1;
    if (st == U8P_PFX_NEGATIVE) {
        PyErr_Format(PyExc_ValueError,
                     "negative %s length %lld (prefix=%R, prefix at offset %zd): expected a "
                     "length >= 0",
                     what, (long long)rd->neg_value, name, at + c->base);
    }
    else if (fixed && st == U8P_PFX_TRUNCATED) {
        if (c->len - at == 0)
            PyErr_Format(PyExc_ValueError,
                         "expected a %zu-byte %s length prefix (prefix=%R) at offset %zd, "
                         "found the end of the data",
                         fixed, what, name, at + c->base);
        else
            PyErr_Format(PyExc_ValueError,
                         "truncated %s length prefix at offset %zd: expected %zu bytes "
                         "(prefix=%R), found the end of the data after %zd byte(s)",
                         what, at + c->base, fixed, name, c->len - at);
    }
    else {
        vint_error(c, at, st == U8P_PFX_TRUNCATED ? 0 : -1, what);
    }
    Py_DECREF(name);
    return -1;
}

/*
 * A length prefix (in the context's preset) and its payload: *pos moves past
 * both on success.  Returns 1, 0 for the null marker, -1 with ValueError.
 */
static inline int
rd_record(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t *payload, Py_ssize_t *plen,
          const char *what)
{
    uint64_t n = 0;
    Py_ssize_t at = *pos, p = at;
    if (c->prefix == U8P_PFX_VARINT) {
        if (rd_vint(c, &p, &n, what) < 0)
            return -1;
    }
    else if (c->prefix == U8P_PFX_ZIGZAG && at < c->len && c->data[at] < 0x80 &&
             !(c->data[at] & 1)) { /* one-byte zigzag length (even: >= 0) */
        n = c->data[at] >> 1;
        p = at + 1;
    }
    else if (c->prefix == U8P_PFX_VARINT1 && at < c->len && c->data[at] - 1u < 0x7Fu) {
        n = c->data[at] - 1u; /* one-byte length + 1 (0, the null marker, below) */
        p = at + 1;
    }
    else {
        u8p_prefix_read_t rd;
        u8p_prefix_status st =
            u8p_prefix_read(c->prefix, c->data + at, (size_t)(c->len - at), &rd);
        if (st < 0 || st == U8P_PFX_TRUNCATED)
            return prefix_error(c, at, st, &rd, what);
        if (c->strict_vint && !rd.minimal) {
            PyErr_Format(PyExc_ValueError,
                         "non-minimal varint at offset %zd: %d bytes, expected %d "
                         "(strict_vint=True)",
                         at + c->base, rd.size,
                         st == U8P_PFX_NULL ? 1 : (int)u8p_prefix_size(c->prefix, rd.value));
            return -1;
        }
        p = at + rd.size;
        if (st == U8P_PFX_NULL) {
            *payload = p;
            *plen = 0;
            *pos = p;
            return 0;
        }
        n = rd.value;
    }
    if (n > (uint64_t)(c->len - p)) {
        PyErr_Format(PyExc_ValueError,
                     "%s length %llu (prefix at offset %zd) runs past the end of the data: "
                     "expected at most %zd byte(s) after the prefix, at offset %zd",
                     what, (unsigned long long)n, at + c->base, c->len - p, p + c->base);
        return -1;
    }
    *payload = p;
    *plen = (Py_ssize_t)n;
    *pos = p + (Py_ssize_t)n;
    return 1;
}

int
u8p_rd_vint(const rd_ctx *c, Py_ssize_t *pos, uint64_t *value, const char *what)
{
    return rd_vint(c, pos, value, what);
}

int
u8p_rd_record(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t *payload, Py_ssize_t *plen,
              const char *what)
{
    return rd_record(c, pos, payload, plen, what);
}

/* ------------------------------------------------------- payload -> str */

/* A str from n bytes that the scan accepted with result *r. */
static PyObject *
str_from_scanned(const uint8_t *p, Py_ssize_t n, const u8p_scan_result *r)
{
    PyObject *s;
    if (r->ncp == 1 && r->maxchar == 0xFF) /* C2/C3 xx: a Latin-1 singleton */
        return PyUnicode_FromOrdinal(((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu));
    s = PyUnicode_New((Py_ssize_t)r->ncp, (Py_UCS4)r->maxchar);
    if (s == NULL)
        return NULL;
    switch (r->maxchar) {
    case 0x7F:
        memcpy(PyUnicode_1BYTE_DATA(s), p, (size_t)n);
        break;
    case 0xFF:
        u8p_D->to_ucs1(p, (size_t)n, PyUnicode_1BYTE_DATA(s));
        break;
    case 0xFFFF:
        u8p_D->to_ucs2(p, (size_t)n, PyUnicode_2BYTE_DATA(s));
        break;
    default:
        u8p_D->to_ucs4(p, (size_t)n, PyUnicode_4BYTE_DATA(s));
        break;
    }
    return s;
}

#if U8P_DEC_SHORT_VEC_MIN < 3
#error "a table's dec_short would make 1-character Latin-1 strs, not CPython's singletons"
#endif

/* u8p_dec_alloc for a table's dec_short: a new str of k code points of
 * class top maxcp into *(PyObject **)ctx, and where its characters go. */
static void *
new_str_room(void *ctx, size_t k, uint32_t maxcp)
{
    PyObject *s = PyUnicode_New((Py_ssize_t)k, (Py_UCS4)maxcp);
    *(PyObject **)ctx = s;
    return s == NULL ? NULL : PyUnicode_DATA(s);
}

/* A str from k code points whose class top is maxcp (u8p_dec_short). */
static PyObject *
str_from_code_points(const uint32_t *cps, ptrdiff_t k, uint32_t maxcp)
{
    PyObject *s;
    if (k == 1 && maxcp <= 0xFF) /* CPython's shared 1-char singletons */
        return PyUnicode_FromOrdinal((int)cps[0]);
    s = PyUnicode_New((Py_ssize_t)k, (Py_UCS4)maxcp);
    if (s != NULL)
        u8p_dec_short_narrow(cps, (size_t)k, maxcp, PyUnicode_DATA(s));
    return s;
}

/*
 * MUTF-8 payloads the UTF-8 scan does not take as they are (C0 80, surrogate
 * forms, or a 4-byte sequence to reject): decoded by the MUTF-8 routine into
 * UCS4, then narrowed.  Errors: UnicodeDecodeError("mutf-8", payload, start,
 * end, reason) under strict; any other handler is called as CPython's codecs
 * call it (its replacement str is appended, decoding resumes at its position).
 */
static PyObject *
decode_payload_mutf8(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n)
{
    const uint8_t *p = c->data + off;
    size_t cap = (size_t)n, k = 0, i = 0;
    uint32_t *buf = (uint32_t *)PyMem_Malloc(cap * sizeof(uint32_t) + 1);
    PyObject *handler = NULL, *s = NULL;

    if (buf == NULL)
        return PyErr_NoMemory();
    {
        /* the fast road: narrow to UTF-8 (C0 80 -> 00, surrogate pairs ->
         * 4-byte sequences) and let the UTF-8 kernels decode; anything
         * narrowing or the scan refuses goes to the MUTF-8 routine below */
        uint8_t *u = (uint8_t *)buf; /* n bytes fit in the 4n of buf */
        size_t m = u8p_mutf8_narrow(p, (size_t)n, u);
        u8p_scan_result r;
        if (m != (size_t)-1 && u8p_D->scan(u, m, 0, &r) == U8P_DEC_OK) {
            s = str_from_scanned(u, (Py_ssize_t)m, &r);
            PyMem_Free(buf);
            return s;
        }
    }
    for (;;) {
        size_t nd = 0, used = 0, eend = 0;
        Py_ssize_t start, end, newpos, rl;
        PyObject *exc, *r, *rep;
        u8p_mutf8_status st = u8p_mutf8_decode(p + i, (size_t)n - i,
                                               c->eh == U8P_ERR_SURROGATEPASS, buf + k, &nd,
                                               &used, &eend);
        k += nd;
        if (st == U8P_MUTF8_OK)
            break;
        start = (Py_ssize_t)(i + used);
        end = (Py_ssize_t)(i + eend);
        exc = PyUnicodeDecodeError_Create("mutf-8", (const char *)p, n, start, end,
                                          u8p_mutf8_reason(st));
        if (exc == NULL)
            goto done;
        if (c->eh == U8P_ERR_STRICT) {
            annotate_exc(exc, off + c->base);
            PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
            Py_DECREF(exc);
            goto done;
        }
        if (handler == NULL) {
            const char *name = PyUnicode_AsUTF8(c->errors);
            if (name == NULL || (handler = PyCodec_LookupError(name)) == NULL) {
                Py_DECREF(exc);
                goto done;
            }
        }
        r = PyObject_CallOneArg(handler, exc);
        Py_DECREF(exc);
        if (r == NULL) {
            annotate_decode_error(off + c->base);
            goto done;
        }
        if ((rep = u8p_handler_result(r, 0, n, &newpos)) == NULL) {
            Py_DECREF(r);
            goto done;
        }
        rl = PyUnicode_GET_LENGTH(rep);
        if (k + (size_t)rl + ((size_t)n - (size_t)newpos) > cap) {
            size_t ncap = k + (size_t)rl + ((size_t)n - (size_t)newpos);
            uint32_t *nb = (uint32_t *)PyMem_Realloc(buf, ncap * sizeof(uint32_t) + 1);
            if (nb == NULL) {
                Py_DECREF(r);
                PyErr_NoMemory();
                goto done;
            }
            buf = nb;
            cap = ncap;
        }
        {
            Py_ssize_t j;
            int kind = PyUnicode_KIND(rep);
            const void *d = PyUnicode_DATA(rep);
            for (j = 0; j < rl; j++)
                buf[k++] = PyUnicode_READ(kind, d, j);
        }
        Py_DECREF(r);
        i = (size_t)newpos;
    }
    s = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, buf, (Py_ssize_t)k);
done:
    Py_XDECREF(handler);
    PyMem_Free(buf);
    return s;
}

/* n >= 64: the first 64 bytes and the last 8 are ASCII (a probe in L1
 * that keeps non-ASCII text off the allocate-then-copy path of
 * decode_payload) */
static inline int
ascii_likely(const uint8_t *p, size_t n)
{
    uint64_t a = 0, w;
    int j;
    for (j = 0; j < 64; j += 8) {
        memcpy(&w, p + j, 8);
        a |= w;
    }
    memcpy(&w, p + n - 8, 8);
    a |= w;
    return !(a & 0x8080808080808080ULL);
}

/* From this many payload bytes on, a Latin-1 payload is transcoded into a
 * str with room for a code point a byte and shrunk after, rather than
 * counted first: a count pass costs more than the shrink (a realloc that
 * gives the tail back in place, above pymalloc's sizes). */
#define RD_UCS1_ROOMY 1024

/* The payload, made into a str: its common cases (ASCII up to 32 bytes,
 * copied inline; a short payload the table's vector decoder takes) kept
 * small enough to inline into the record loops, with no frame of their
 * own; everything else is in decode_payload_rest, out of line, whose
 * stack (the scalar decoder's array) and saved registers only the
 * payloads that need it pay for. */
U8P_NOINLINE PyObject *decode_payload_rest(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n,
                                           ptrdiff_t k);
U8P_APART PyObject *decode_payload_copy(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n,
                                        ptrdiff_t k);

/* Whether n bytes are all below 0x80. */
static int
all_ascii(const uint8_t *d, Py_ssize_t n)
{
    Py_ssize_t i = 0;
    for (; n - i > 32; i += 32)
        if (!u8p_short_is_ascii(d + i, 32))
            return 0;
    return u8p_short_is_ascii(d + i, n - i);
}

/* Whether a table's short decoder takes an n-byte payload. */
U8P_ALWAYS_INLINE int
dec_short_takes(const rd_ctx *c, Py_ssize_t n)
{
    return n <= U8P_DEC_SHORT_MAX && n >= U8P_DEC_SHORT_VEC_MIN && c->enc == U8P_ENC_UTF8 &&
           u8p_D->dec_short != NULL;
}

/* A table's short decoder on such a payload: validated and decoded in one
 * pass, straight into the str (n >= 3: never one Latin-1 character, which
 * would want CPython's singleton); what it refuses (an error, a surrogate)
 * goes the long way. */
U8P_ALWAYS_INLINE PyObject *
dec_short_str(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n)
{
    PyObject *made = NULL;
    ptrdiff_t k = u8p_D->dec_short(c->data + off, (size_t)n, (size_t)(c->len - off),
                                   new_str_room, &made);
    if (k >= 0)
        return made;
    if (k == -2)
        return NULL;
    Py_XDECREF(made); /* refused after the str was made */
    return decode_payload_rest(c, off, n, k);
}

/* A payload as a new str; `shared` is rd_ctx.shared, a constant in each
 * instance.  For bytes nobody else writes (decode_payload_own), inlined
 * into the record loops, none of the checks below.  For shared bytes
 * (decode_payload_shared): the paths that read a payload once, or whose
 * stores are sized by one read (a table's short decoder, decode.h), run on
 * the bytes in place, and an ASCII str they make is checked again as it
 * was copied (an ASCII str holds nothing else); everything else decodes a
 * private copy (decode_payload_rest makes one). */
U8P_ALWAYS_INLINE PyObject *
decode_payload_in(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n, const int shared)
{
    const uint8_t *p = c->data + off;
    PyObject *s;

    if (n == 0)
        return PyUnicode_New(0, 0);
    if (n <= 32) { /* short: ASCII check and copy inline, no call */
#ifdef U8P_HAVE_COPY_SLACK
        /* not at the start: no branches on the length class */
        const int slack = off >= 16;
        if (slack ? u8p_short_ascii_copy_ok(p, n) : u8p_short_is_ascii(p, n)) {
#else
        if (u8p_short_is_ascii(p, n)) {
#endif
            int ascii; /* as copied (the check of shared bytes only) */
            if (n == 1) /* CPython's 1-char singletons (any byte now: valid) */
                return PyUnicode_FromOrdinal(p[0]);
            s = PyUnicode_New(n, 0x7F);
            if (s == NULL)
                return NULL;
#ifdef U8P_HAVE_COPY_SLACK
            if (slack)
                ascii = u8p_copy_into_new_ascii(PyUnicode_1BYTE_DATA(s), p, n);
            else
#endif
            {
                u8p_copy_short(PyUnicode_1BYTE_DATA(s), p, n);
                ascii = !shared || u8p_short_is_ascii(PyUnicode_1BYTE_DATA(s), n);
            }
            if (ascii || !shared)
                return s;
            Py_DECREF(s); /* shared bytes that changed since the check */
        }
    }
    if (dec_short_takes(c, n)) {
        s = dec_short_str(c, off, n);
        /* (what it refused comes from an error handler: of any length) */
        if (!shared || s == NULL || !PyUnicode_IS_ASCII(s) ||
            all_ascii(PyUnicode_1BYTE_DATA(s), PyUnicode_GET_LENGTH(s)))
            return s;
        Py_DECREF(s); /* an ASCII str of shared bytes that changed as copied */
        return decode_payload_copy(c, off, n, U8P_DEC_SHORT_INLINE);
    }
    return decode_payload_rest(c, off, n, U8P_DEC_SHORT_INLINE);
}

U8P_ALWAYS_INLINE PyObject *
decode_payload_own(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n)
{
    return decode_payload_in(c, off, n, 0);
}

U8P_NOINLINE PyObject *
decode_payload_shared(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n)
{
    return decode_payload_in(c, off, n, 1);
}

/* decode_payload_own or decode_payload_shared: a record loop reads
 * c->shared once, before it, and passes it here (read from c at each
 * record, or with the shared checks inlined too, the loops grew past what
 * gcc inlines their prefix reads into, and short ASCII records read
 * slower). */
U8P_ALWAYS_INLINE PyObject *
decode_payload_as(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n, int shared)
{
    return shared ? decode_payload_shared(c, off, n) : decode_payload_own(c, off, n);
}

/* The same for one record. */
U8P_ALWAYS_INLINE PyObject *
decode_payload(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n)
{
    return decode_payload_as(c, off, n, c->shared);
}

/* decode_payload's other cases; k: what the table's short decoder said of
 * the payload (U8P_DEC_SHORT_INLINE: it was not tried, or it handed the
 * payload back for the scalar loop) */
U8P_NOINLINE PyObject *
decode_payload_rest(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n, ptrdiff_t k)
{
    const uint8_t *p = c->data + off;
    u8p_scan_result r;
    u8p_dec_status st;
    PyObject *s;
    const char *ename;
    size_t lead = 0; /* bytes known ASCII and already checked */

    if (k == U8P_DEC_SHORT_INLINE && n <= U8P_DEC_SHORT_MAX && c->enc == U8P_ENC_UTF8) {
        /* validated and decoded in one pass (kernels/decode_short.h) */
        uint32_t cps[U8P_DEC_SHORT_MAX], maxcp;
        k = u8p_dec_short(p, (size_t)n, cps, &maxcp);
        if (k >= 0)
            return str_from_code_points(cps, k, maxcp);
    }
    if (U8P_EXPECT(c->shared, 0))
        return decode_payload_copy(c, off, n, k);
    if (n >= 64 && u8p_D->copy_ascii != NULL && ascii_likely(p, (size_t)n)) {
        /* the str is allocated first and the check fused with the copy,
         * one pass; the kernel stops at the first non-ASCII block, and
         * what it copied, [0, lead), is ASCII: not read again below */
        s = PyUnicode_New(n, 0x7F);
        if (s == NULL)
            return NULL;
        lead = u8p_D->copy_ascii(p, (size_t)n, PyUnicode_1BYTE_DATA(s));
        if (lead == (size_t)n)
            return s;
        Py_DECREF(s);
    }
    if (n >= 64 && u8p_D->prescan != NULL) {
        /* code points < U+0100: validation fused with the transcode, from
         * lead on (the ASCII before it is copied), into a str of lead + the
         * count prescan found; from RD_UCS1_ROOMY bytes on, with no count:
         * a first window of the rest (a byte >= 0xC4 there sends a str
         * beyond Latin-1 to the scan at once), then room for a code point
         * a byte, shrunk after.  Such a payload holds a byte >= 0x80 (the
         * ASCII test failed or the copy stopped at one: both tables with a
         * prescan have the copy), so a Latin-1 str is its kind. */
        const int roomy = n >= RD_UCS1_ROOMY && u8p_D->copy_ascii != NULL;
        const size_t rest = (size_t)n - lead;
        size_t ncp, got, room;
        uint8_t maxb = u8p_D->prescan(p + lead, roomy && rest > 256 ? 256 : rest, &ncp);
        if (maxb < 0x80 && !roomy) {
            s = PyUnicode_New(n, 0x7F);
            if (s != NULL)
                memcpy(PyUnicode_1BYTE_DATA(s), p, (size_t)n);
            return s;
        }
        if (maxb < 0xC4) {
            room = roomy ? rest : ncp;
            s = PyUnicode_New((Py_ssize_t)(lead + room), 0xFF);
            if (s == NULL)
                return NULL;
            if (lead) /* mostly 0 (ascii_likely was false): no call */
                memcpy(PyUnicode_1BYTE_DATA(s), p, lead);
            if (u8p_D->to_ucs1_checked(p + lead, rest, PyUnicode_1BYTE_DATA(s) + lead, room,
                                       &got) == U8P_DEC_OK
                && (roomy || got == ncp)) {
                if (got < room && PyUnicode_Resize(&s, (Py_ssize_t)(lead + got)) < 0) {
                    Py_DECREF(s); /* unchanged on failure */
                    return NULL;
                }
                return s;
            }
            Py_DECREF(s); /* invalid: the scan below finds the error */
        }
        if (maxb < 0xF0 && n > U8P_DEC_SHORT_MAX && (size_t)n <= u8p_D->dec_short_max &&
            c->enc == U8P_ENC_UTF8) {
            /* past the short payloads (decode_payload tried those), beyond
             * Latin-1 and short enough for the table's one-pass decoder
             * (and no byte F0..FF, where prescan says so: it would decline
             * a 4-byte sequence): what it refuses (an error, a surrogate)
             * or declines goes to the scan below */
            PyObject *made = NULL;
            ptrdiff_t kw = u8p_D->dec_short(p, (size_t)n, (size_t)(c->len - off), new_str_room,
                                            &made);
            if (kw >= 0)
                return made;
            if (kw == -2)
                return NULL;
            Py_XDECREF(made);
        }
    }
    /* MUTF-8: surrogate forms are paired by the MUTF-8 routine, not passed */
    st = u8p_D->scan(p, (size_t)n, c->eh == U8P_ERR_SURROGATEPASS && c->enc == U8P_ENC_UTF8,
                     &r);
    if (c->enc == U8P_ENC_MUTF8 && (st != U8P_DEC_OK || r.maxchar > 0xFFFF))
        return decode_payload_mutf8(c, off, n);
    if (st == U8P_DEC_OK)
        return str_from_scanned(p, n, &r);
    if (c->eh == U8P_ERR_STRICT) {
        raise_strict(p, n, &r, st, off + c->base);
        return NULL;
    }
    ename = PyUnicode_AsUTF8(c->errors);
    if (ename == NULL)
        return NULL;
    s = PyUnicode_DecodeUTF8((const char *)p, n, ename);
    if (s == NULL)
        annotate_decode_error(off + c->base);
    return s;
}

/* Payloads of bytes that may change (rd_ctx.shared) up to this size are
 * copied to the stack, longer ones to the heap; zeros pad the copy on both
 * sides, where the short paths may load (within the caller's buffer, but
 * taking nothing from there). */
#define RD_COPY_STACK 256
#define RD_COPY_PAD 64

/*
 * decode_payload for bytes that may be written while they are read, from a
 * private copy.  The decoders read a payload more than once: a count (or a
 * class and a count), a str of that size, then the transcode into it, or a
 * check and then a copy.  Bytes that changed in between would be written
 * past the str, or leave part of it unwritten; a copy nobody else sees
 * cannot change.  The error offsets stay the caller's (base).
 */
U8P_APART PyObject *
decode_payload_copy(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n, ptrdiff_t k)
{
    U8P_ALIGN64 uint8_t stack[RD_COPY_PAD + RD_COPY_STACK + RD_COPY_PAD];
    uint8_t *buf = stack;
    rd_ctx own = *c;
    PyObject *s;
    if (n > RD_COPY_STACK) {
        buf = (uint8_t *)PyMem_Malloc((size_t)n + 2 * RD_COPY_PAD);
        if (buf == NULL)
            return PyErr_NoMemory();
    }
    memset(buf, 0, RD_COPY_PAD);
    memcpy(buf + RD_COPY_PAD, c->data + off, (size_t)n);
    memset(buf + RD_COPY_PAD + n, 0, RD_COPY_PAD);
    own.data = buf;
    own.len = n + 2 * RD_COPY_PAD;
    own.base = c->base + off - RD_COPY_PAD;
    own.shared = 0;
    s = k == U8P_DEC_SHORT_INLINE ? decode_payload_own(&own, RD_COPY_PAD, n)
                                  : decode_payload_rest(&own, RD_COPY_PAD, n, k);
    if (buf != stack)
        PyMem_Free(buf);
    return s;
}

PyObject *
u8p_rd_decode(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n)
{
    return decode_payload(c, off, n);
}

/* One string record at *pos (None for varint+1's null); *pos moves only on
 * success. */
static PyObject *
rd_string(const rd_ctx *c, Py_ssize_t *pos)
{
    Py_ssize_t p = *pos, off, n;
    PyObject *s;
    int k = rd_record(c, &p, &off, &n, "string");
    if (k < 0)
        return NULL;
    s = k ? decode_payload(c, off, n) : Py_NewRef(Py_None);
    if (s != NULL)
        *pos = p;
    return s;
}

/* Saves and restores the exception being raised (3.12 deprecates Fetch). */
/* u8p_rd_annotate_call (reader.h): after the fact, for calls that do not
 * track which record failed (Arrow out).  Walks the prefixes again: only on
 * the way out of a failed call. */
void
u8p_rd_annotate_call(const rd_ctx *c, Py_ssize_t start, Py_ssize_t limit, Py_ssize_t index0,
                     const char *whole)
{
    PyObject *v, *row;
    Py_ssize_t p = start, i, off, n;
    if (!PyErr_ExceptionMatches(PyExc_ValueError)) /* UnicodeDecodeError included */
        return;
    v = u8p_exc_take();
    row = u8p_getattr_interned(v, "row");
    if (row == NULL) {
        PyErr_Clear();
    }
    else {
        i = PyLong_AsSsize_t(row);
        Py_DECREF(row);
        if (i == -1 && PyErr_Occurred()) {
            PyErr_Clear();
        }
        else {
            if (set_ssize_attr(v, "record_index", index0 + i) < 0) {
                Py_DECREF(v); /* the annotation's own error stays raised */
                return;
            }
            u8p_exc_raise(v);
            return;
        }
    }
    if (Py_TYPE(v) != (PyTypeObject *)PyExc_ValueError) {
        u8p_exc_raise(v);
        return;
    }
    /* a prefix error is the first prefix that does not parse; a ValueError
     * raised after every prefix parsed (a handler's) passes unchanged */
    for (i = 0; limit < 0 ? p < c->len : i < limit; i++) {
        Py_ssize_t at = p;
        if (rd_record(c, &p, &off, &n, "string") < 0) {
            PyErr_Clear(); /* the same error again */
            u8p_exc_raise(v);
            u8p_rd_annotate(c->base + at, index0 + i, whole);
            return;
        }
    }
    u8p_exc_raise(v);
}

/* Length of a prefix already validated by rd_record (-1 for the null
 * marker); *p moves past it. */
static inline Py_ssize_t
checked_len(const rd_ctx *c, Py_ssize_t *p)
{
    uint64_t len = 0;
    if (c->prefix != U8P_PFX_VARINT) {
        u8p_prefix_read_t rd = {0, 0, 0, 1};
        u8p_prefix_status st;
        uint8_t b = c->data[*p];
        if (b < 0x80 && c->prefix == U8P_PFX_ZIGZAG) { /* validated: even */
            *p += 1;
            return (Py_ssize_t)(b >> 1);
        }
        if (b < 0x80 && c->prefix == U8P_PFX_VARINT1) {
            *p += 1;
            return b == 0 ? -1 : (Py_ssize_t)(b - 1);
        }
        st = u8p_prefix_read(c->prefix, c->data + *p, (size_t)(c->len - *p), &rd);
        *p += rd.size;
        return st == U8P_PFX_NULL ? -1 : (Py_ssize_t)rd.value;
    }
    if (c->data[*p] < 0x80) {
        len = c->data[*p];
        *p += 1;
    }
    else {
        *p += u8p_vint_read(c->data + *p, (size_t)(c->len - *p), &len, NULL);
    }
    return (Py_ssize_t)len;
}

/* A list with room for n records and none in it yet (its size is what is
 * filled: every exit sets it), out of the collector's sight until it is
 * whole (PyObject_GC_Track): a decode may run an error handler, whose code
 * could otherwise reach the list through gc.get_objects() and meet a
 * half-made batch.  The slots are not zeroed (a list's own code reads
 * none past its size): a batch's half megabyte of slots would otherwise
 * be written twice.  The free-threaded list keeps its items behind a
 * header of its own, so there the list's own allocation is kept. */
static PyObject *
new_list_to_fill(Py_ssize_t n)
{
    PyObject *list;
#ifndef Py_GIL_DISABLED
    list = PyList_New(0);
    if (list != NULL && n > 0) {
        PyObject **items = n <= PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(PyObject *)
                               ? PyMem_Malloc((size_t)n * sizeof(PyObject *))
                               : NULL;
        if (items == NULL) {
            Py_DECREF(list);
            return PyErr_NoMemory();
        }
        ((PyListObject *)list)->ob_item = items;
        ((PyListObject *)list)->allocated = n;
    }
#else
    list = PyList_New(n);
    if (list != NULL)
        Py_SET_SIZE(list, 0);
#endif
    if (list != NULL)
        PyObject_GC_UnTrack(list);
    return list;
}

/* `list` (new_list_to_fill's, its reference taken over) with room for n
 * more records after its items, out of the collector's sight again; a new
 * list holding its items when it has not the room (by half as many again
 * at least, so that part after part costs linear time), the old one left
 * empty.  NULL with MemoryError, the list dropped. */
static PyObject *
list_room(PyObject *list, Py_ssize_t n)
{
    Py_ssize_t size = PyList_GET_SIZE(list), cap = ((PyListObject *)list)->allocated;
    PyObject *big;
    PyObject_GC_UnTrack(list);
    if (cap - size >= n)
        return list;
    if (n > PY_SSIZE_T_MAX - size) {
        Py_DECREF(list);
        return PyErr_NoMemory();
    }
    big = new_list_to_fill(size + n > cap + cap / 2 ? size + n : cap + cap / 2);
    if (big == NULL) {
        Py_DECREF(list);
        return NULL;
    }
    if (size > 0)
        memcpy(((PyListObject *)big)->ob_item, ((PyListObject *)list)->ob_item,
               (size_t)size * sizeof(PyObject *));
    Py_SET_SIZE(big, size);
    Py_SET_SIZE(list, 0); /* the items moved: dropping it touches none */
    Py_DECREF(list);
    return big;
}

/*
 * All the strings that remain, as a list.  The prefixes are walked first,
 * so the list is allocated for a count that the data has proven; *pos
 * moves only on success.  Errors come in data order: if the walk stops at
 * a bad prefix, the strings before it are still decoded so that an
 * earlier invalid UTF-8 payload is the error reported (what a one-by-one
 * reader would meet first).  On
 * failure *fail_i and *fail_at say which record failed (its index in the
 * call, the offset of its prefix), for u8p_rd_annotate.
 */
static PyObject *
rd_strings_in(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t *fail_i, Py_ssize_t *fail_at,
              int shared)
{
    Py_ssize_t p = *pos, count = 0, off, n, i;
    PyObject *list;

    while (p < c->len) {
        if (rd_record(c, &p, &off, &n, "string") < 0) {
            u8p_err_stash x;
            *fail_i = count;
            *fail_at = p;
            u8p_stash_take(&x);
            p = *pos;
            for (i = 0; i < count; i++) {
                PyObject *s;
                Py_ssize_t at = p;
                n = checked_len(c, &p);
                if (n < 0)
                    continue;
                s = decode_payload_as(c, p, n, shared);
                if (s == NULL) {
                    *fail_i = i;
                    *fail_at = at;
                    u8p_stash_drop(&x);
                    return NULL;
                }
                Py_DECREF(s);
                p += n;
            }
            u8p_stash_put(&x);
            return NULL;
        }
        count++;
    }
    *fail_i = -1; /* not a record's error */
    list = new_list_to_fill(count);
    if (list == NULL)
        return NULL;
    p = *pos;
    for (i = 0; i < count; i++) {
        PyObject *s;
        Py_ssize_t at = p;
        n = checked_len(c, &p);
        if (n < 0) {
            PyList_SET_ITEM(list, i, Py_NewRef(Py_None));
            continue;
        }
        s = decode_payload_as(c, p, n, shared);
        if (s == NULL) {
            *fail_i = i;
            *fail_at = at;
            Py_SET_SIZE(list, i);
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, s);
        p += n;
    }
    Py_SET_SIZE(list, count);
    PyObject_GC_Track(list);
    *pos = p;
    return list;
}

/* rd_strings_in, c->shared read once (decode_payload_as) */
static PyObject *
rd_strings(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t *fail_i, Py_ssize_t *fail_at)
{
    return rd_strings_in(c, pos, fail_i, fail_at, c->shared);
}

/* Most records a held list takes in one call: its list is allocated before
 * the records are known complete (a window of small complete records and
 * one long record still arriving would otherwise ask for a slot per byte) */
#define RD_HELD_PART ((Py_ssize_t)1 << 16)

/*
 * `limit` records as a list in one pass: each payload is made into its
 * item as soon as its prefix is read, so the prefixes are not walked a
 * second time (reader.h has the flags).  The first failure in data order
 * is the error (a bad prefix after good records, or a payload), which is
 * what rd_strings raises too.  The list is sized by what the data can
 * hold (a record takes a byte at least), never by the caller's count
 * alone.  held: the records wholly in c->data, up to the first that is
 * not (u8p_rd_peek), which is no error here, and RD_HELD_PART at most.
 * into: NULL, or a list of earlier records (this function's, its
 * reference taken over) that the records join (list_room).
 */
static inline PyObject *
rd_list_in(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t limit, int flags, const int held,
           Py_ssize_t max_record, PyObject *into, Py_ssize_t *fail_i, Py_ssize_t *fail_at,
           int shared)
{
    Py_ssize_t p = *pos, off = 0, n = 0, i, at0;
    const Py_ssize_t left = c->len - p;
    const int raw = flags & U8P_RD_BYTES;
    const int nogil = (flags & U8P_RD_NOGIL) && c->enc == U8P_ENC_UTF8;
    const char *what = raw ? "bytes" : "string";
    PyObject *list;

    *fail_i = -1; /* not a record's error */
    if (held && limit > RD_HELD_PART)
        limit = RD_HELD_PART; /* the caller asks again for the rest */
    list = into != NULL ? list_room(into, limit < left ? limit : left)
                        : new_list_to_fill(limit < left ? limit : left);
    if (list == NULL)
        return NULL;
    at0 = PyList_GET_SIZE(list);
    for (i = 0; i < limit; i++) {
        PyObject *s = NULL;
        const Py_ssize_t at = p;
        int r;
        if (held) {
            Py_ssize_t want;
            uint64_t v;
            if (u8p_rd_peek(c, &p, max_record, &off, &n, &want, &v) != U8P_PEEK_DONE)
                break;
            r = n >= 0;
        }
        else {
            if ((flags & U8P_RD_UPTO) && p >= c->len)
                break;
            r = rd_record(c, &p, &off, &n, what);
        }
        if (r > 0 && raw) {
            s = PyBytes_FromStringAndSize((const char *)c->data + off, n);
        }
        else if (r > 0) {
            int fallback = 1;
            if (nogil && n >= U8P_NOGIL_MIN)
                s = u8p_rd_decode_nogil(c, off, n, &fallback);
            if (s == NULL && fallback)
                s = decode_payload_as(c, off, n, shared);
        }
        else if (r == 0) {
            s = Py_NewRef(Py_None);
        }
        if (s == NULL) {
            *fail_i = i;
            *fail_at = at;
            Py_SET_SIZE(list, at0 + i);
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, at0 + i, s);
    }
    Py_SET_SIZE(list, at0 + i);
    PyObject_GC_Track(list);
    *pos = p;
    return list;
}

/* rd_list_in, c->shared read once (as rd_strings) */
static inline PyObject *
rd_list(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t limit, int flags, const int held,
        Py_ssize_t max_record, PyObject *into, Py_ssize_t *fail_i, Py_ssize_t *fail_at)
{
    return rd_list_in(c, pos, limit, flags, held, max_record, into, fail_i, fail_at,
                      c->shared);
}

PyObject *
u8p_rd_list(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t limit, int flags, Py_ssize_t *fail_i,
            Py_ssize_t *fail_at)
{
    return rd_list(c, pos, limit, flags, 0, -1, NULL, fail_i, fail_at);
}

PyObject *
u8p_rd_list_held(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t limit, Py_ssize_t max_record,
                 int flags, PyObject *into, Py_ssize_t *fail_i, Py_ssize_t *fail_at)
{
    return rd_list(c, pos, limit, flags, 1, max_record, into, fail_i, fail_at);
}

/* ---------------------------------------------------------- BufferReader */

#define R_WAIT(self) u8p_objlock_wait(&(self)->nogil)

static int
reader_check(ReaderObject *self)
{
    R_WAIT(self);
    if (!self->is_open) {
        PyErr_SetString(PyExc_ValueError, "I/O operation on a closed BufferReader");
        return -1;
    }
    return 0;
}

int
u8p_reader_check(ReaderObject *self)
{
    return reader_check(self);
}

int
u8p_buffer_shared(const Py_buffer *view)
{
    PyObject *o = view->obj;
    while (o != NULL && PyMemoryView_Check(o)) /* memoryview(b)[i:j]: b decides */
        o = PyMemoryView_GET_BUFFER(o)->obj;
    return o == NULL || !PyBytes_Check(o);
}

static inline void
reader_ctx(ReaderObject *self, rd_ctx *c)
{
    c->data = self->data;
    c->len = self->len;
    c->eh = self->eh;
    c->errors = self->errors;
    c->strict_vint = self->strict_vint;
    c->prefix = self->prefix;
    c->enc = self->enc;
    c->base = 0;
    c->shared = self->shared;
}

static PyObject *
Reader_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"", "errors", "strict_vint", "prefix", "encoding", NULL};
    PyObject *data, *errors = NULL, *prefix = NULL, *encoding = NULL;
    int strict_vint = 0;
    u8p_errors eh;
    u8p_prefix pf;
    u8p_encoding enc;
    ReaderObject *self;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$OpOO:BufferReader", kwlist, &data, &errors,
                                     &strict_vint, &prefix, &encoding))
        return NULL;
    if (u8p_parse_prefix(prefix, &pf, "BufferReader()") < 0 ||
        u8p_parse_encoding(encoding, &enc, "BufferReader()") < 0)
        return NULL;
    if (u8p_parse_errors(errors, &eh, "BufferReader()") < 0)
        return NULL;
    self = (ReaderObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->is_open = 0;
    self->busy = 0;
    self->nogil.lock = NULL;
    self->nogil.held = 0;
    self->eh = eh;
    self->strict_vint = strict_vint;
    self->prefix = pf;
    self->enc = enc;
    self->errors = errors ? Py_NewRef(errors) : PyUnicode_FromString("strict");
    if (self->errors == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    if (PyObject_GetBuffer(data, &self->view, PyBUF_SIMPLE) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    self->is_open = 1;
    self->shared = u8p_buffer_shared(&self->view);
    self->data = (const uint8_t *)self->view.buf;
    self->len = self->view.len;
    self->pos = 0;
    return (PyObject *)self;
}

static void
reader_release(ReaderObject *self)
{
    if (self->is_open) {
        self->is_open = 0;
        self->data = NULL;
        self->len = self->pos = 0;
        PyBuffer_Release(&self->view);
    }
}

static int
Reader_traverse(ReaderObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    if (self->is_open)
        Py_VISIT(self->view.obj);
    Py_VISIT(self->errors);
    return 0;
}

static int
Reader_clear(ReaderObject *self)
{
    if (!self->busy)
        reader_release(self);
    Py_CLEAR(self->errors);
    return 0;
}

static void
Reader_dealloc(ReaderObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    reader_release(self);
    u8p_objlock_free(&self->nogil);
    Py_CLEAR(self->errors);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

#define READER_OPEN_OR_FAIL(self)                                                             \
    do {                                                                                      \
        if (reader_check(self) < 0)                                                           \
            return NULL;                                                                      \
    } while (0)

PyObject *
u8p_rd_decode_nogil(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n, int *fallback)
{
    const uint8_t *p = c->data + off;
    const int allow = c->eh == U8P_ERR_SURROGATEPASS;
    uint8_t *own = NULL; /* the copy of shared bytes (decode_payload_copy) */
    u8p_scan_result r;
    u8p_dec_status st;
    PyObject *s;

    *fallback = 0;
    if (c->shared && (own = (uint8_t *)PyMem_RawMalloc((size_t)n)) == NULL)
        return PyErr_NoMemory();
    Py_BEGIN_ALLOW_THREADS
    if (own != NULL) {
        memcpy(own, p, (size_t)n);
        p = own;
    }
    st = u8p_D->scan(p, (size_t)n, allow, &r);
    Py_END_ALLOW_THREADS
    if (st != U8P_DEC_OK) {
        PyMem_RawFree(own);
        *fallback = 1;
        return NULL;
    }
    s = PyUnicode_New((Py_ssize_t)r.ncp, (Py_UCS4)r.maxchar);
    if (s == NULL) {
        PyMem_RawFree(own);
        return NULL;
    }
    {
        const uint32_t maxchar = (uint32_t)r.maxchar;
        void *dst = PyUnicode_DATA(s); /* a new str: nobody else sees it yet */
        Py_BEGIN_ALLOW_THREADS
        switch (maxchar) {
        case 0x7F:
            memcpy(dst, p, (size_t)n);
            break;
        case 0xFF:
            u8p_D->to_ucs1(p, (size_t)n, (uint8_t *)dst);
            break;
        case 0xFFFF:
            u8p_D->to_ucs2(p, (size_t)n, (uint16_t *)dst);
            break;
        default:
            u8p_D->to_ucs4(p, (size_t)n, (uint32_t *)dst);
            break;
        }
        Py_END_ALLOW_THREADS
    }
    PyMem_RawFree(own);
    return s;
}

/* u8p_rd_decode_nogil under the reader's lock (objlock.h), which every
 * other method waits for: the position and the export stay as they are. */
static PyObject *
reader_decode_big(ReaderObject *self, const rd_ctx *c, Py_ssize_t off, Py_ssize_t n,
                  int *fallback)
{
    PyObject *s;
    *fallback = 0;
    if (u8p_objlock_enter(&self->nogil) < 0)
        return NULL;
    s = u8p_rd_decode_nogil(c, off, n, fallback);
    u8p_objlock_exit(&self->nogil);
    return s;
}

/* One record at the position, the reader open: its prefix read once, then
 * its payload decoded, a large UTF-8 one with the GIL released. */
static PyObject *
reader_next(ReaderObject *self)
{
    rd_ctx c;
    PyObject *s = NULL;
    Py_ssize_t p = self->pos, off = 0, n = 0;
    int k;
    reader_ctx(self, &c);
    k = rd_record(&c, &p, &off, &n, "string");
    if (k == 0) {
        s = Py_NewRef(Py_None);
    }
    else if (k > 0) {
        if (c.enc == U8P_ENC_UTF8 && n >= U8P_NOGIL_MIN) {
            int fallback;
            self->busy++;
            s = reader_decode_big(self, &c, off, n, &fallback);
            self->busy--;
            if (s == NULL && !fallback)
                return NULL; /* MemoryError, or the lock's wait interrupted */
        }
        if (s == NULL) { /* an error handler may call back: busy */
            self->busy++;
            /* both instances inline: iteration pays no call for shared bytes */
            s = c.shared ? decode_payload_in(&c, off, n, 1) : decode_payload_own(&c, off, n);
            self->busy--;
        }
    }
    if (s == NULL) {
        u8p_rd_annotate(self->pos, self->index, "data");
        return NULL;
    }
    self->pos = p;
    self->index++;
    return s;
}

static PyObject *
Reader_read_string(ReaderObject *self, PyObject *Py_UNUSED(ignored))
{
    READER_OPEN_OR_FAIL(self);
    return reader_next(self);
}

int
u8p_parse_read_n(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                 const char *fname, Py_ssize_t *limit)
{
    PyObject *arg = NULL;

    *limit = -1;
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes at most 1 positional argument (%zd given)", fname, nargs);
        return -1;
    }
    if (nargs == 1)
        arg = args[0];
    if (kwnames != NULL) {
        Py_ssize_t i;
        for (i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, i);
            if (PyUnicode_CompareWithASCIIString(key, "n") != 0 || arg != NULL) {
                PyErr_Format(PyExc_TypeError,
                             "%s() got an unexpected or repeated keyword %R", fname, key);
                return -1;
            }
            arg = args[nargs + i];
        }
    }
    if (arg != NULL) {
        *limit = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
        if (*limit == -1 && PyErr_Occurred())
            return -1;
        if (*limit < -1) {
            PyErr_Format(PyExc_ValueError, "%s() n must be >= 0 or -1, got %zd", fname,
                         *limit);
            return -1;
        }
    }
    return 0;
}

static PyObject *
Reader_read_strings(ReaderObject *self, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames)
{
    Py_ssize_t limit, pos, fail_i, fail_at;
    PyObject *list;
    rd_ctx c;

    if (u8p_parse_read_n(args, nargs, kwnames, "read_strings", &limit) < 0)
        return NULL;
    READER_OPEN_OR_FAIL(self);
    reader_ctx(self, &c);
    pos = self->pos;
    self->busy++;
    /* n records: decoded as walked; all of them: counted first, so that the
     * list is made for a count the data has proven */
    list = limit >= 0 ? u8p_rd_list(&c, &pos, limit, 0, &fail_i, &fail_at)
                      : rd_strings(&c, &pos, &fail_i, &fail_at);
    self->busy--;
    if (list == NULL) {
        if (fail_i >= 0)
            u8p_rd_annotate(fail_at, self->index + fail_i, "data");
        return NULL;
    }
    self->pos = pos;
    self->index += PyList_GET_SIZE(list);
    return list;
}

int
u8p_parse_batches(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                  const char *fname, int with_raw, Py_ssize_t *n, int *raw)
{
    PyObject *vals[2] = {NULL, NULL};
    Py_ssize_t i;
    *n = 65536;
    *raw = 0;
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most 1 positional argument (%zd given)",
                     fname, nargs);
        return -1;
    }
    if (nargs == 1)
        vals[0] = args[0];
    for (i = 0; kwnames != NULL && i < PyTuple_GET_SIZE(kwnames); i++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, i);
        int j = PyUnicode_CompareWithASCIIString(key, "n") == 0                 ? 0
                : with_raw && PyUnicode_CompareWithASCIIString(key, "raw") == 0 ? 1
                                                                                : -1;
        if (j < 0 || vals[j] != NULL) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected or repeated keyword %R",
                         fname, key);
            return -1;
        }
        vals[j] = args[nargs + i];
    }
    if (vals[0] != NULL) {
        *n = PyNumber_AsSsize_t(vals[0], PyExc_OverflowError);
        if (*n == -1 && PyErr_Occurred())
            return -1;
        if (*n < 1) {
            PyErr_Format(PyExc_ValueError, "%s() n must be >= 1, got %zd", fname, *n);
            return -1;
        }
    }
    if (vals[1] != NULL && (*raw = PyObject_IsTrue(vals[1])) < 0)
        return -1;
    return 0;
}

void
u8p_pins_clear(u8p_pins *p)
{
    PyObject **obj = p->obj;
    Py_ssize_t i, n = p->n;
    p->obj = NULL;
    p->n = p->cap = 0;
    for (i = 0; i < n; i++)
        Py_DECREF(obj[i]);
    PyMem_Free(obj);
}

/* An object CPython allocates from its arenas (at most 512 bytes): a
 * shorter str or bytes than this, whatever its kind, is one. */
static inline int
pin_worthy(PyObject *o)
{
    if (PyUnicode_CheckExact(o))
        return PyUnicode_GET_LENGTH(o) * PyUnicode_KIND(o) < 384;
    return PyBytes_CheckExact(o) && PyBytes_GET_SIZE(o) < 384;
}

void
u8p_pins_take(u8p_pins *p, PyObject *list)
{
    Py_ssize_t len = PyList_GET_SIZE(list), k = (len + U8P_PIN_STRIDE - 1) / U8P_PIN_STRIDE;
    Py_ssize_t i, j = 0;
    if (k > p->cap) {
        PyObject **obj = PyMem_Realloc(p->obj, (size_t)k * sizeof(PyObject *));
        if (obj == NULL) { /* only a speed-up: hold nothing */
            u8p_pins_clear(p);
            return;
        }
        p->obj = obj;
        p->cap = k;
    }
    /* the objects read below sit a batch apart in memory, most of them
     * out of the cache: their loads are started together first */
    for (i = 0; i < len; i += U8P_PIN_STRIDE)
        U8P_PREFETCH(PyList_GET_ITEM(list, i));
    for (i = 0; i < p->n; i++)
        U8P_PREFETCH(p->obj[i]);
    /* the first small object of every stride (a larger one has memory of
     * its own, which holding would only keep from the caller); each new
     * one held before an old one goes (a str's or bytes' deallocation runs
     * no Python code) */
    for (i = 0; i < len; i += U8P_PIN_STRIDE) {
        Py_ssize_t e = i + U8P_PIN_STRIDE < len ? i + U8P_PIN_STRIDE : len, t;
        for (t = i; t < e; t++) {
            PyObject *o = PyList_GET_ITEM(list, t);
            if (pin_worthy(o)) {
                PyObject *old = j < p->n ? p->obj[j] : NULL;
                p->obj[j++] = Py_NewRef(o);
                Py_XDECREF(old);
                break;
            }
        }
    }
    for (i = j; i < p->n; i++)
        Py_DECREF(p->obj[i]);
    p->n = j;
}

/* BufferReader.batches(): an iterator over lists of up to n records. */
typedef struct {
    PyObject_HEAD
    ReaderObject *reader;
    Py_ssize_t n;
    int raw;
    u8p_pins pins;
} RBatchesObject;

static PyObject *
Reader_batches(ReaderObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t n;
    int raw;
    RBatchesObject *it;
    u8p_state *st;
    if (u8p_parse_batches(args, nargs, kwnames, "batches", 1, &n, &raw) < 0)
        return NULL;
    READER_OPEN_OR_FAIL(self);
    st = u8p_state_of_type(Py_TYPE(self));
    if (st == NULL)
        return NULL;
    it = PyObject_GC_New(RBatchesObject, st->reader_batches_type);
    if (it == NULL)
        return NULL;
    it->reader = (ReaderObject *)Py_NewRef((PyObject *)self);
    it->n = n;
    it->raw = raw;
    it->pins = (u8p_pins){NULL, 0, 0};
    PyObject_GC_Track((PyObject *)it);
    return (PyObject *)it;
}

/* The next batch: up to n records (fewer only at the end of the data), in
 * one pass (u8p_rd_list); errors come in data order and the position moves
 * only on success. */
static PyObject *
RBatches_next(RBatchesObject *it)
{
    ReaderObject *self = it->reader;
    Py_ssize_t pos, fail_i, fail_at;
    PyObject *list;
    rd_ctx c;
    if (self == NULL)
        return NULL;
    READER_OPEN_OR_FAIL(self);
    reader_ctx(self, &c);
    pos = self->pos;
    if (pos >= c.len) {
        u8p_pins_clear(&it->pins);
        return NULL; /* the end of the data */
    }
    self->busy++;
    list = u8p_rd_list(&c, &pos, it->n, U8P_RD_UPTO | (it->raw ? U8P_RD_BYTES : 0), &fail_i,
                       &fail_at);
    self->busy--;
    if (list == NULL) {
        if (fail_i >= 0)
            u8p_rd_annotate(fail_at, self->index + fail_i, "data");
        u8p_pins_clear(&it->pins);
        return NULL;
    }
    self->pos = pos;
    self->index += PyList_GET_SIZE(list);
    u8p_pins_take(&it->pins, list);
    return list;
}

static int
RBatches_traverse(RBatchesObject *it, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(it));
    Py_VISIT(it->reader);
    return 0;
}

static int
RBatches_clear(RBatchesObject *it)
{
    Py_CLEAR(it->reader);
    u8p_pins_clear(&it->pins);
    return 0;
}

static void
RBatches_dealloc(RBatchesObject *it)
{
    PyTypeObject *tp = Py_TYPE(it);
    PyObject_GC_UnTrack(it);
    Py_CLEAR(it->reader);
    u8p_pins_clear(&it->pins);
    PyObject_GC_Del(it);
    Py_DECREF(tp);
}

static PyType_Slot RBatches_slots[] = {
    {Py_tp_dealloc, RBatches_dealloc},
    {Py_tp_traverse, RBatches_traverse},
    {Py_tp_clear, RBatches_clear},
    {Py_tp_iter, PyObject_SelfIter},
    {Py_tp_iternext, RBatches_next},
    {Py_tp_doc, "The iterator BufferReader.batches() returns."},
    {0, NULL},
};

static PyType_Spec RBatches_spec = {
    "utf8pfx._ReaderBatches",
    sizeof(RBatchesObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    RBatches_slots,
};

static PyObject *
Reader_read_vint(ReaderObject *self, PyObject *Py_UNUSED(ignored))
{
    rd_ctx c;
    uint64_t v = 0;
    Py_ssize_t pos;
    READER_OPEN_OR_FAIL(self);
    reader_ctx(self, &c);
    pos = self->pos;
    if (rd_vint(&c, &pos, &v, "varint") < 0)
        return NULL;
    self->pos = pos;
    return PyLong_FromUnsignedLongLong((unsigned long long)v);
}

static PyObject *
Reader_read_bytes(ReaderObject *self, PyObject *Py_UNUSED(ignored))
{
    rd_ctx c;
    Py_ssize_t pos, off, n;
    PyObject *b;
    int k;
    READER_OPEN_OR_FAIL(self);
    reader_ctx(self, &c);
    pos = self->pos;
    k = rd_record(&c, &pos, &off, &n, "bytes");
    if (k < 0) {
        u8p_rd_annotate(pos, self->index, "data");
        return NULL;
    }
    b = k ? PyBytes_FromStringAndSize((const char *)c.data + off, n) : Py_NewRef(Py_None);
    if (b != NULL) {
        self->pos = pos;
        self->index++;
    }
    return b;
}

static PyObject *
Reader_read_raw(ReaderObject *self, PyObject *arg)
{
    Py_ssize_t n;
    PyObject *b;
    n = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    READER_OPEN_OR_FAIL(self);
    if (n < 0) {
        PyErr_Format(PyExc_ValueError, "read_raw() n must be >= 0, got %zd", n);
        return NULL;
    }
    if (n > self->len - self->pos) {
        PyErr_Format(PyExc_ValueError,
                     "read_raw(%zd) at offset %zd runs past the end of the data: expected at "
                     "most %zd byte(s)",
                     n, self->pos, self->len - self->pos);
        return NULL;
    }
    b = PyBytes_FromStringAndSize((const char *)self->data + self->pos, n);
    if (b != NULL)
        self->pos += n;
    return b;
}

static PyObject *
Reader_skip_string(ReaderObject *self, PyObject *Py_UNUSED(ignored))
{
    rd_ctx c;
    Py_ssize_t pos, off, n;
    READER_OPEN_OR_FAIL(self);
    reader_ctx(self, &c);
    pos = self->pos;
    if (rd_record(&c, &pos, &off, &n, "string") < 0) {
        u8p_rd_annotate(pos, self->index, "data");
        return NULL;
    }
    self->pos = pos;
    self->index++;
    Py_RETURN_NONE;
}

static PyObject *
Reader_close(ReaderObject *self, PyObject *Py_UNUSED(ignored))
{
    R_WAIT(self);
    if (self->busy) {
        PyErr_SetString(PyExc_ValueError,
                        "cannot close a BufferReader while one of its reads is running");
        return NULL;
    }
    reader_release(self);
    Py_RETURN_NONE;
}

static PyObject *
Reader_reduce(ReaderObject *self, PyObject *Py_UNUSED(ignored))
{
    PyErr_Format(PyExc_TypeError,
                 "cannot pickle a %s: it reads its data in place (a buffer export, perhaps "
                 "of an mmap); send the data (bytes, or a BufferWriter) and its position "
                 "instead",
                 Py_TYPE(self)->tp_name);
    return NULL;
}

static PyObject *
Reader_enter(ReaderObject *self, PyObject *Py_UNUSED(ignored))
{
    READER_OPEN_OR_FAIL(self);
    return Py_NewRef((PyObject *)self);
}

static PyObject *
Reader_exit(ReaderObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)args;
    (void)nargs;
    return Reader_close(self, NULL);
}

static PyObject *
Reader_iter(ReaderObject *self)
{
    READER_OPEN_OR_FAIL(self);
    return Py_NewRef((PyObject *)self);
}

static PyObject *
Reader_iternext(ReaderObject *self)
{
    READER_OPEN_OR_FAIL(self);
    if (self->pos >= self->len)
        return NULL; /* StopIteration */
    return reader_next(self);
}

static PyObject *
Reader_get_position(ReaderObject *self, void *Py_UNUSED(closure))
{
    READER_OPEN_OR_FAIL(self);
    return PyLong_FromSsize_t(self->pos);
}

static int
Reader_set_position(ReaderObject *self, PyObject *value, void *Py_UNUSED(closure))
{
    Py_ssize_t p;
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "cannot delete position");
        return -1;
    }
    p = PyNumber_AsSsize_t(value, PyExc_OverflowError);
    if (p == -1 && PyErr_Occurred())
        return -1;
    if (reader_check(self) < 0)
        return -1;
    if (p < 0 || p > self->len) {
        PyErr_Format(PyExc_ValueError, "position %zd is outside the data: expected 0 <= "
                     "position <= %zd", p, self->len);
        return -1;
    }
    self->pos = p;
    self->index = 0; /* record_index counts from here */
    return 0;
}

static PyObject *
Reader_get_remaining(ReaderObject *self, void *Py_UNUSED(closure))
{
    READER_OPEN_OR_FAIL(self);
    return PyLong_FromSsize_t(self->len - self->pos);
}

static PyObject *
Reader_get_closed(ReaderObject *self, void *Py_UNUSED(closure))
{
    R_WAIT(self);
    return PyBool_FromLong(!self->is_open);
}

static PyObject *
Reader_get_strict_vint(ReaderObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(self->strict_vint);
}

static PyObject *
Reader_repr(ReaderObject *self)
{
    R_WAIT(self);
    if (!self->is_open)
        return PyUnicode_FromFormat("<%s closed>", Py_TYPE(self)->tp_name);
    return PyUnicode_FromFormat("<%s position=%zd len=%zd errors=%R>", Py_TYPE(self)->tp_name,
                                self->pos, self->len, self->errors);
}

static const PyMethodDef Reader_methods[] = {
    {"read_string", (PyCFunction)Reader_read_string, METH_NOARGS,
     "read_string($self, /)\n--\n\nRead one VInt-prefixed UTF-8 string."},
    {"read_strings", (PyCFunction)(void (*)(void))Reader_read_strings,
     METH_FASTCALL | METH_KEYWORDS,
     "read_strings($self, /, n=-1)\n--\n\nRead n strings (all that remain when n is -1) "
     "as a list; all or nothing."},
    {"read_vint", (PyCFunction)Reader_read_vint, METH_NOARGS,
     "read_vint($self, /)\n--\n\nRead an unsigned LEB128 VInt (0 <= n < 2**64)."},
    {"read_bytes", (PyCFunction)Reader_read_bytes, METH_NOARGS,
     "read_bytes($self, /)\n--\n\nRead VInt-prefixed bytes."},
    {"read_raw", (PyCFunction)Reader_read_raw, METH_O,
     "read_raw($self, n, /)\n--\n\nRead exactly n bytes as they are."},
    {"skip_string", (PyCFunction)Reader_skip_string, METH_NOARGS,
     "skip_string($self, /)\n--\n\nMove past one prefixed string; its prefix and length are "
     "checked, its UTF-8 is not."},
    {"batches", (PyCFunction)(void (*)(void))Reader_batches, METH_FASTCALL | METH_KEYWORDS,
     "batches($self, /, n=65536, *, raw=False)\n--\n\nIterate over lists of n records (str, "
     "or bytes with raw=True); only the last may be shorter."},
    {"close", (PyCFunction)Reader_close, METH_NOARGS,
     "close($self, /)\n--\n\nRelease the buffer; further reads raise ValueError."},
    {"__enter__", (PyCFunction)Reader_enter, METH_NOARGS,
     PyDoc_STR("Return the reader itself (for with blocks).")},
    {"__reduce__", (PyCFunction)Reader_reduce, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))Reader_exit, METH_FASTCALL,
     PyDoc_STR("close() the reader; exceptions are not suppressed.")},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Reader_getset[] = {
    {"position", (getter)Reader_get_position, (setter)Reader_set_position,
     "Offset of the next read in the data (0 <= position <= len).", NULL},
    {"remaining", (getter)Reader_get_remaining, NULL, "Bytes after position (read-only).",
     NULL},
    {"closed", (getter)Reader_get_closed, NULL, "True once close() has run.", NULL},
    {"strict_vint", (getter)Reader_get_strict_vint, NULL,
     "True if non-minimal varints are rejected (read-only).", NULL},
    U8P_CODEC_GETSETS(ReaderObject),
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot Reader_slots[] = {
    {Py_tp_new, Reader_new},
    {Py_tp_dealloc, Reader_dealloc},
    {Py_tp_traverse, Reader_traverse},
    {Py_tp_clear, Reader_clear},
    {Py_tp_methods, NULL}, /* the list module init assembles (u8p_reader_exec) */
    {Py_tp_getset, Reader_getset},
    {Py_tp_repr, Reader_repr},
    {Py_tp_iter, Reader_iter},
    {Py_tp_iternext, Reader_iternext},
    {Py_tp_doc,
     "BufferReader(data, /, *, errors='strict', strict_vint=False, prefix='varint', "
     "encoding='utf-8')\n--\n\n"
     "Reads length-prefixed UTF-8 strings from a buffer-protocol object in place.\n\n"
     "prefix and encoding as BufferWriter's; under prefix='varint+1' the null\n"
     "marker reads as None.\n\n"
     "Holds the buffer export until close(), the end of a with block, or GC.\n"
     "Errors: ValueError (bad prefix, length past the data) or UnicodeDecodeError;\n"
     "after any error the position is unchanged."},
    {0, NULL},
};

static PyType_Spec Reader_spec = {
    "utf8pfx.BufferReader",
    sizeof(ReaderObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    Reader_slots,
};

/* ------------------------------------------------------ module functions */

static PyObject *
mod_decode_common(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, int all)
{
    const char *fname = all ? "decode_all" : "decode";
    PyObject *data, *errors, *prefix, *encoding, *res = NULL;
    Py_buffer view;
    rd_ctx c;
    Py_ssize_t pos = 0;

    if (u8p_parse_arg_opts(args, nargs, kwnames, fname, &data, &errors, &prefix, &encoding) <
            0 ||
        u8p_parse_errors(errors, &c.eh, all ? "decode_all()" : "decode()") < 0 ||
        u8p_parse_prefix(prefix, &c.prefix, all ? "decode_all()" : "decode()") < 0 ||
        u8p_parse_encoding(encoding, &c.enc, all ? "decode_all()" : "decode()") < 0)
        return NULL;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    c.data = (const uint8_t *)view.buf;
    c.len = view.len;
    c.errors = errors;
    c.strict_vint = 0;
    c.base = 0;
    c.shared = u8p_buffer_shared(&view);
    if (all) {
        Py_ssize_t fail_i, fail_at;
        res = rd_strings(&c, &pos, &fail_i, &fail_at);
        if (res == NULL && fail_i >= 0)
            u8p_rd_annotate(fail_at, fail_i, "data");
    }
    else {
        res = rd_string(&c, &pos);
        if (res == NULL)
            u8p_rd_annotate(0, 0, "data");
        else if (pos != c.len) {
            Py_CLEAR(res);
            PyErr_Format(PyExc_ValueError,
                         "trailing data: expected the end of the data at offset %zd, after "
                         "the one string, found %zd more byte(s) (use decode_all() or "
                         "BufferReader for several)",
                         pos, c.len - pos);
        }
    }
    PyBuffer_Release(&view);
    return res;
}

static PyObject *
mod_decode(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)module;
    return mod_decode_common(args, nargs, kwnames, 0);
}

static PyObject *
mod_decode_all(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    (void)module;
    return mod_decode_common(args, nargs, kwnames, 1);
}

static PyMethodDef reader_functions[] = {
    {"decode", (PyCFunction)(void (*)(void))mod_decode, METH_FASTCALL | METH_KEYWORDS,
     "decode(data, /, errors='strict', *, prefix='varint', encoding='utf-8')\n--\n\n"
     "Exactly one length-prefixed string from a bytes-like object; trailing bytes are "
     "an error."},
    {"decode_all", (PyCFunction)(void (*)(void))mod_decode_all, METH_FASTCALL | METH_KEYWORDS,
     "decode_all(data, /, errors='strict', *, prefix='varint', encoding='utf-8')\n--\n\n"
     "Every length-prefixed string in a bytes-like object, as a list."},
    {NULL, NULL, 0, NULL},
};

int
u8p_reader_methods(PyMethodDef *dst)
{
    return u8p_methods_add(dst, Reader_methods);
}

int
u8p_reader_exec(PyObject *module, u8p_state *st)
{
    if (u8p_add_type(module, &Reader_spec, st->reader_methods, &st->reader_type) < 0 ||
        u8p_add_type(module, &RBatches_spec, NULL, &st->reader_batches_type) < 0)
        return -1;
    return PyModule_AddFunctions(module, reader_functions);
}
