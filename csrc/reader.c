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
 *   allocated ncp; if it rejects the bytes the str is dropped and the scan
 *   above runs for the exact error.
 * Each failure raises ValueError naming what was expected and the absolute
 * offset, or UnicodeDecodeError.  The position only moves once a whole call
 * has succeeded; read_strings() is all or nothing.
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
 * Re-entrancy: a custom error handler (or a finalizer run by the GC) may run
 * Python code in the middle of a read; close() refuses while a read is in
 * progress, so the memory being read stays exported.
 */
#include <stdlib.h>
#include <string.h>

#include "utf8pfx.h"
#include "kernels/decode.h"

static const u8p_dec_kernels *u8p_D = &u8p_dec_kernels_scalar;

typedef struct {
    PyObject_HEAD
    Py_buffer view; /* valid iff is_open */
    const uint8_t *data;
    Py_ssize_t len;
    Py_ssize_t pos;
    int is_open;
    int strict_vint;
    int busy; /* reads in progress (re-entrancy guard for close) */
    u8p_errors eh;
    PyObject *errors; /* handler name (str) */
} ReaderObject;

typedef struct {
    const uint8_t *data;
    Py_ssize_t len;
    u8p_errors eh;
    PyObject *errors; /* may be NULL for strict */
    int strict_vint;
} rd_ctx;

/* ---------------------------------------------------------------- errors */

/* Adds the absolute offsets to a UnicodeDecodeError object.  Returns -1
 * with that failure's exception set (a MemoryError, in practice) when it
 * could not: the caller raises that instead, since a UnicodeDecodeError
 * without its documented offsets would be a half-made error. */
static int
annotate_exc(PyObject *value, Py_ssize_t payload_off)
{
    PyObject *v = NULL;
    Py_ssize_t start;

    if (value == NULL || !PyObject_TypeCheck(value, (PyTypeObject *)PyExc_UnicodeDecodeError))
        return 0;
    if (PyUnicodeDecodeError_GetStart(value, &start) < 0)
        goto fail;
    v = PyLong_FromSsize_t(payload_off);
    if (v == NULL || PyObject_SetAttrString(value, "payload_offset", v) < 0)
        goto fail;
    Py_DECREF(v);
    v = PyLong_FromSsize_t(payload_off + start);
    if (v == NULL || PyObject_SetAttrString(value, "data_offset", v) < 0)
        goto fail;
    Py_CLEAR(v);
#if PY_VERSION_HEX >= 0x030B0000
    {
        PyObject *note = PyUnicode_FromFormat(
            "utf8pfx: invalid UTF-8 at offset %zd of the data (in the string "
            "payload that starts at offset %zd)",
            payload_off + start, payload_off);
        PyObject *r;
        if (note == NULL)
            goto fail;
        r = PyObject_CallMethod(value, "add_note", "O", note);
        Py_DECREF(note);
        if (r == NULL)
            goto fail;
        Py_DECREF(r);
    }
#endif
    return 0;
fail:
    Py_XDECREF(v);
    return -1;
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
                         what[0] == 'v' ? "" : " length prefix", at);
        else
            PyErr_Format(PyExc_ValueError,
                         "truncated varint at offset %zd: expected a byte without the "
                         "continuation bit, found the end of the data after %zd byte(s)",
                         at, avail);
    }
    else if (c->data[at + 9] & 0x80) {
        PyErr_Format(PyExc_ValueError,
                     "varint at offset %zd is longer than 10 bytes (expected at most 10)",
                     at);
    }
    else {
        PyErr_Format(PyExc_ValueError,
                     "varint at offset %zd exceeds 2**64 - 1 (its 10th byte is 0x%02x, "
                     "expected 0x00 or 0x01)",
                     at, c->data[at + 9]);
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
                     at, k, (unsigned long long)*value, (int)u8p_vint_size(*value));
        return -1;
    }
    *pos = at + k;
    return 0;
}

/* A length prefix and its payload: *pos moves past both on success. */
static inline int
rd_record(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t *payload, Py_ssize_t *plen,
          const char *what)
{
    uint64_t n = 0;
    Py_ssize_t at = *pos, p = at;
    if (rd_vint(c, &p, &n, what) < 0)
        return -1;
    if (n > (uint64_t)(c->len - p)) {
        PyErr_Format(PyExc_ValueError,
                     "%s length %llu (prefix at offset %zd) runs past the end of the data: "
                     "expected at most %zd byte(s) after the prefix, at offset %zd",
                     what, (unsigned long long)n, at, c->len - p, p);
        return -1;
    }
    *payload = p;
    *plen = (Py_ssize_t)n;
    *pos = p + (Py_ssize_t)n;
    return 0;
}

/* ------------------------------------------------------- payload -> str */

static PyObject *
decode_payload(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n)
{
    const uint8_t *p = c->data + off;
    u8p_scan_result r;
    u8p_dec_status st;
    PyObject *s;
    const char *ename;

    if (n == 0)
        return PyUnicode_New(0, 0);
    if (n <= 16) { /* short: ASCII check inline, no kernel call */
        uint8_t acc = 0;
        Py_ssize_t i;
        for (i = 0; i < n; i++)
            acc |= p[i];
        if (acc < 0x80) {
            if (n == 1) /* CPython's shared 1-char singletons */
                return PyUnicode_FromOrdinal(p[0]);
            s = PyUnicode_New(n, 0x7F);
            if (s != NULL)
                memcpy(PyUnicode_1BYTE_DATA(s), p, (size_t)n);
            return s;
        }
    }
    if (n >= 64 && u8p_D->prescan != NULL) {
        /* code points < U+0100: validation fused with the transcode */
        size_t ncp;
        uint8_t maxb = u8p_D->prescan(p, (size_t)n, &ncp);
        if (maxb < 0x80) {
            s = PyUnicode_New(n, 0x7F);
            if (s != NULL)
                memcpy(PyUnicode_1BYTE_DATA(s), p, (size_t)n);
            return s;
        }
        if (maxb < 0xC4) {
            s = PyUnicode_New((Py_ssize_t)ncp, 0xFF);
            if (s == NULL)
                return NULL;
            if (u8p_D->to_ucs1_checked(p, (size_t)n, PyUnicode_1BYTE_DATA(s), ncp)
                == U8P_DEC_OK)
                return s;
            Py_DECREF(s); /* invalid: the scan below finds the error */
        }
    }
    st = u8p_D->scan(p, (size_t)n, c->eh == U8P_ERR_SURROGATEPASS, &r);
    if (st == U8P_DEC_OK) {
        if (r.ncp == 1 && r.maxchar == 0xFF) /* C2/C3 xx: a Latin-1 singleton */
            return PyUnicode_FromOrdinal(((p[0] & 0x1Fu) << 6) | (p[1] & 0x3Fu));
        s = PyUnicode_New((Py_ssize_t)r.ncp, (Py_UCS4)r.maxchar);
        if (s == NULL)
            return NULL;
        switch (r.maxchar) {
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
    if (c->eh == U8P_ERR_STRICT) {
        raise_strict(p, n, &r, st, off);
        return NULL;
    }
    ename = PyUnicode_AsUTF8(c->errors);
    if (ename == NULL)
        return NULL;
    s = PyUnicode_DecodeUTF8((const char *)p, n, ename);
    if (s == NULL)
        annotate_decode_error(off);
    return s;
}

/* One string record at *pos; *pos moves only on success. */
static PyObject *
rd_string(const rd_ctx *c, Py_ssize_t *pos)
{
    Py_ssize_t p = *pos, off, n;
    PyObject *s;
    if (rd_record(c, &p, &off, &n, "string") < 0)
        return NULL;
    s = decode_payload(c, off, n);
    if (s != NULL)
        *pos = p;
    return s;
}

/* Saves and restores the exception being raised (3.12 deprecates Fetch). */
typedef struct {
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exc;
#else
    PyObject *type, *value, *tb;
#endif
} rd_stash;

static void
stash_error(rd_stash *x)
{
#if PY_VERSION_HEX >= 0x030C0000
    x->exc = PyErr_GetRaisedException();
#else
    PyErr_Fetch(&x->type, &x->value, &x->tb);
#endif
}

static void
stash_restore(rd_stash *x)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(x->exc);
#else
    PyErr_Restore(x->type, x->value, x->tb);
#endif
}

static void
stash_drop(rd_stash *x)
{
#if PY_VERSION_HEX >= 0x030C0000
    Py_XDECREF(x->exc);
#else
    Py_XDECREF(x->type);
    Py_XDECREF(x->value);
    Py_XDECREF(x->tb);
#endif
}

/* Length of a prefix already validated by rd_record; *p moves past it. */
static inline Py_ssize_t
checked_len(const rd_ctx *c, Py_ssize_t *p)
{
    uint64_t len = 0;
    if (c->data[*p] < 0x80) {
        len = c->data[*p];
        *p += 1;
    }
    else {
        *p += u8p_vint_read(c->data + *p, (size_t)(c->len - *p), &len, NULL);
    }
    return (Py_ssize_t)len;
}

/*
 * Up to `limit` strings (limit < 0: all that remain; else exactly limit)
 * as a list.  The prefixes are walked first, so the list is allocated for
 * a count that the data has proven; *pos moves only on success.  Errors
 * come in data order: if the walk stops at a bad prefix, the strings
 * before it are still decoded so that an earlier invalid UTF-8 payload is
 * the error reported (what a one-by-one reader would meet first).
 */
static PyObject *
rd_strings(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t limit)
{
    Py_ssize_t p = *pos, count = 0, off, n, i;
    PyObject *list;

    while (limit < 0 ? p < c->len : count < limit) {
        if (rd_record(c, &p, &off, &n, "string") < 0) {
            rd_stash x;
            stash_error(&x);
            p = *pos;
            for (i = 0; i < count; i++) {
                PyObject *s;
                n = checked_len(c, &p);
                s = decode_payload(c, p, n);
                if (s == NULL) {
                    stash_drop(&x);
                    return NULL;
                }
                Py_DECREF(s);
                p += n;
            }
            stash_restore(&x);
            return NULL;
        }
        count++;
    }
    list = PyList_New(count);
    if (list == NULL)
        return NULL;
    p = *pos;
    for (i = 0; i < count; i++) {
        PyObject *s;
        n = checked_len(c, &p);
        s = decode_payload(c, p, n);
        if (s == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, s);
        p += n;
    }
    *pos = p;
    return list;
}

/* ---------------------------------------------------------- BufferReader */

static int
reader_check(ReaderObject *self)
{
    if (!self->is_open) {
        PyErr_SetString(PyExc_ValueError, "I/O operation on a closed BufferReader");
        return -1;
    }
    return 0;
}

static inline void
reader_ctx(ReaderObject *self, rd_ctx *c)
{
    c->data = self->data;
    c->len = self->len;
    c->eh = self->eh;
    c->errors = self->errors;
    c->strict_vint = self->strict_vint;
}

static PyObject *
Reader_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"", "errors", "strict_vint", NULL};
    PyObject *data, *errors = NULL;
    int strict_vint = 0;
    u8p_errors eh;
    ReaderObject *self;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$Op:BufferReader", kwlist, &data, &errors,
                                     &strict_vint))
        return NULL;
    if (u8p_parse_errors(errors, &eh, "BufferReader()") < 0)
        return NULL;
    self = (ReaderObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->is_open = 0;
    self->busy = 0;
    self->eh = eh;
    self->strict_vint = strict_vint;
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
    Py_CLEAR(self->errors);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

#define READER_OPEN_OR_FAIL(self)                                                             \
    do {                                                                                      \
        if (reader_check(self) < 0)                                                           \
            return NULL;                                                                      \
    } while (0)

static PyObject *
Reader_read_string(ReaderObject *self, PyObject *Py_UNUSED(ignored))
{
    rd_ctx c;
    PyObject *s;
    Py_ssize_t pos;
    READER_OPEN_OR_FAIL(self);
    reader_ctx(self, &c);
    pos = self->pos;
    self->busy++;
    s = rd_string(&c, &pos);
    self->busy--;
    if (s != NULL)
        self->pos = pos;
    return s;
}

static PyObject *
Reader_read_strings(ReaderObject *self, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames)
{
    Py_ssize_t limit = -1, pos;
    PyObject *arg = NULL, *list;
    rd_ctx c;

    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError,
                     "read_strings() takes at most 1 positional argument (%zd given)", nargs);
        return NULL;
    }
    if (nargs == 1)
        arg = args[0];
    if (kwnames != NULL) {
        Py_ssize_t i;
        for (i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, i);
            if (PyUnicode_CompareWithASCIIString(key, "n") != 0 || arg != NULL) {
                PyErr_Format(PyExc_TypeError,
                             "read_strings() got an unexpected or repeated keyword %R", key);
                return NULL;
            }
            arg = args[nargs + i];
        }
    }
    if (arg != NULL) {
        limit = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
        if (limit == -1 && PyErr_Occurred())
            return NULL;
        if (limit < -1) {
            PyErr_Format(PyExc_ValueError, "read_strings() n must be >= 0 or -1, got %zd",
                         limit);
            return NULL;
        }
    }
    READER_OPEN_OR_FAIL(self);
    reader_ctx(self, &c);
    pos = self->pos;
    self->busy++;
    list = rd_strings(&c, &pos, limit);
    self->busy--;
    if (list != NULL)
        self->pos = pos;
    return list;
}

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
    READER_OPEN_OR_FAIL(self);
    reader_ctx(self, &c);
    pos = self->pos;
    if (rd_record(&c, &pos, &off, &n, "bytes") < 0)
        return NULL;
    b = PyBytes_FromStringAndSize((const char *)c.data + off, n);
    if (b != NULL)
        self->pos = pos;
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
    if (rd_record(&c, &pos, &off, &n, "string") < 0)
        return NULL;
    self->pos = pos;
    Py_RETURN_NONE;
}

static PyObject *
Reader_close(ReaderObject *self, PyObject *Py_UNUSED(ignored))
{
    if (self->busy) {
        PyErr_SetString(PyExc_ValueError,
                        "cannot close a BufferReader while one of its reads is running");
        return NULL;
    }
    reader_release(self);
    Py_RETURN_NONE;
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
    return Reader_read_string(self, NULL);
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
    return PyBool_FromLong(!self->is_open);
}

static PyObject *
Reader_get_errors(ReaderObject *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->errors);
}

static PyObject *
Reader_get_strict_vint(ReaderObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(self->strict_vint);
}

static PyObject *
Reader_repr(ReaderObject *self)
{
    if (!self->is_open)
        return PyUnicode_FromFormat("<%s closed>", Py_TYPE(self)->tp_name);
    return PyUnicode_FromFormat("<%s position=%zd len=%zd errors=%R>", Py_TYPE(self)->tp_name,
                                self->pos, self->len, self->errors);
}

static PyMethodDef Reader_methods[] = {
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
    {"close", (PyCFunction)Reader_close, METH_NOARGS,
     "close($self, /)\n--\n\nRelease the buffer; further reads raise ValueError."},
    {"__enter__", (PyCFunction)Reader_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))Reader_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Reader_getset[] = {
    {"position", (getter)Reader_get_position, (setter)Reader_set_position,
     "Offset of the next read in the data (0 <= position <= len).", NULL},
    {"remaining", (getter)Reader_get_remaining, NULL, "Bytes after position (read-only).",
     NULL},
    {"closed", (getter)Reader_get_closed, NULL, "True once close() has run.", NULL},
    {"errors", (getter)Reader_get_errors, NULL, "The error handler name (read-only).", NULL},
    {"strict_vint", (getter)Reader_get_strict_vint, NULL,
     "True if non-minimal varints are rejected (read-only).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot Reader_slots[] = {
    {Py_tp_new, Reader_new},
    {Py_tp_dealloc, Reader_dealloc},
    {Py_tp_traverse, Reader_traverse},
    {Py_tp_clear, Reader_clear},
    {Py_tp_methods, Reader_methods},
    {Py_tp_getset, Reader_getset},
    {Py_tp_repr, Reader_repr},
    {Py_tp_iter, Reader_iter},
    {Py_tp_iternext, Reader_iternext},
    {Py_tp_doc,
     "BufferReader(data, /, *, errors='strict', strict_vint=False)\n--\n\n"
     "Reads VInt-prefixed UTF-8 strings from a buffer-protocol object in place.\n\n"
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
    PyObject *data, *errors, *res = NULL;
    Py_buffer view;
    rd_ctx c;
    Py_ssize_t pos = 0;

    if (u8p_parse_arg_errors(args, nargs, kwnames, fname, &data, &errors) < 0 ||
        u8p_parse_errors(errors, &c.eh, all ? "decode_all()" : "decode()") < 0)
        return NULL;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    c.data = (const uint8_t *)view.buf;
    c.len = view.len;
    c.errors = errors;
    c.strict_vint = 0;
    if (all) {
        res = rd_strings(&c, &pos, -1);
    }
    else {
        res = rd_string(&c, &pos);
        if (res != NULL && pos != c.len) {
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

static PyObject *
mod_decode_isa(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return PyUnicode_FromString(u8p_D->name);
}

static const char *
dec_level_name(u8p_isa level)
{
    const u8p_dec_kernels *k = u8p_dec_kernels_for_level(level);
    return k ? k->name : NULL;
}

static PyObject *
mod_decode_isa_levels(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return u8p_level_list(dec_level_name);
}

static PyObject *
mod_set_decode_isa(PyObject *module, PyObject *arg)
{
    const char *prev = u8p_D->name;
    int lvl = u8p_level_arg(arg, dec_level_name, "_set_decode_isa");
    (void)module;
    if (lvl < 0)
        return NULL;
    u8p_D = u8p_dec_kernels_for_level((u8p_isa)lvl);
    return PyUnicode_FromString(prev);
}

static PyMethodDef reader_functions[] = {
    {"decode", (PyCFunction)(void (*)(void))mod_decode, METH_FASTCALL | METH_KEYWORDS,
     "decode(data, /, errors='strict')\n--\n\n"
     "Exactly one VInt-prefixed UTF-8 string from a bytes-like object; trailing bytes are "
     "an error."},
    {"decode_all", (PyCFunction)(void (*)(void))mod_decode_all, METH_FASTCALL | METH_KEYWORDS,
     "decode_all(data, /, errors='strict')\n--\n\n"
     "Every VInt-prefixed UTF-8 string in a bytes-like object, as a list."},
    {"_decode_isa", (PyCFunction)mod_decode_isa, METH_NOARGS,
     "_decode_isa()\n--\n\nThe decode kernel level in use (testing)."},
    {"_decode_isa_levels", (PyCFunction)mod_decode_isa_levels, METH_NOARGS,
     "_decode_isa_levels()\n--\n\nDecode kernel levels this CPU and build support (testing)."},
    {"_set_decode_isa", (PyCFunction)mod_set_decode_isa, METH_O,
     "_set_decode_isa(name, /)\n--\n\nSwitch decode kernels; returns the previous level "
     "(testing)."},
    {NULL, NULL, 0, NULL},
};

int
u8p_reader_exec(PyObject *module, u8p_state *st)
{
    PyObject *t;
    const u8p_dec_kernels *k = u8p_select_dec_kernels(getenv("UTF8PFX_ISA"));
    u8p_D = k ? k : &u8p_dec_kernels_scalar;

    t = PyType_FromModuleAndSpec(module, &Reader_spec, NULL);
    if (t == NULL)
        return -1;
    st->reader_type = (PyTypeObject *)t;
    Py_INCREF(t);
    if (PyModule_AddObject(module, "BufferReader", t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return PyModule_AddFunctions(module, reader_functions);
}
