/*
 * BufferWriter: a growable byte buffer that appends VInt-prefixed UTF-8.
 *
 * States (one object, three fields that matter):
 *   buf/len/cap  buf holds cap bytes (buf == NULL iff cap == 0); bytes
 *                [0, len) are the value; [len, cap) is scratch that a write
 *                may fill before it commits.  0 <= len <= cap.
 *   exports      the number of live buffer-protocol views of [0, len).
 *                While exports > 0 the buffer must not move or change
 *                below len: a write that fits in cap is fine (it only
 *                touches [len, cap)); a write that has to grow, and
 *                clear(), raise BufferError.
 *   committing   every write computes into [len, cap) and publishes by
 *                advancing len as its last step, so any failure (bad type,
 *                encode error, BufferError, MemoryError) leaves the value
 *                exactly as it was.  write_strings rolls len back to where
 *                the call started.
 *   busy         set while write_strings runs: it calls Python code (the
 *                iterator, a custom error handler) while holding the start
 *                of its batch, so from there every change to the writer,
 *                and a new buffer export, raises instead of corrupting the
 *                batch or exposing bytes a rollback would take back.
 * The GIL guards all of it: no method releases it.
 */
#include "encode.h"

typedef struct {
    PyObject_HEAD
    uint8_t *buf;
    Py_ssize_t len;
    Py_ssize_t cap;
    Py_ssize_t exports;
    int busy;
    u8p_errors eh;
    PyObject *errors; /* the handler name (str) */
} WriterObject;

static uint8_t empty_byte;

/* Refuses a change to the writer from code that write_strings calls. */
static int
writer_check_idle(WriterObject *w)
{
    if (w->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "BufferWriter is in the middle of write_strings(): it cannot be "
                        "changed from the iterator or error handler that call runs");
        return -1;
    }
    return 0;
}

static int writer_grow(WriterObject *w, Py_ssize_t extra);

/* Ensures room for `extra` more bytes after len. */
static inline int
writer_reserve(WriterObject *w, Py_ssize_t extra)
{
    if (extra <= w->cap - w->len)
        return 0;
    return writer_grow(w, extra);
}

/* Grows so that `extra` more bytes fit after len.  Growth is geometric. */
static int
writer_grow(WriterObject *w, Py_ssize_t extra)
{
    Py_ssize_t need, newcap;
    uint8_t *nb;

    if (extra > PY_SSIZE_T_MAX - w->len) {
        PyErr_NoMemory();
        return -1;
    }
    need = w->len + extra;
    if (w->exports > 0) {
        PyErr_Format(PyExc_BufferError,
                     "BufferWriter cannot grow from %zd to %zd bytes while %zd "
                     "buffer view(s) are exported; release the memoryview first",
                     w->cap, need, w->exports);
        return -1;
    }
    newcap = w->cap <= PY_SSIZE_T_MAX / 2 ? w->cap * 2 : PY_SSIZE_T_MAX;
    if (newcap < need)
        newcap = need;
    if (newcap < 64)
        newcap = 64;
    nb = (uint8_t *)PyMem_Realloc(w->buf, (size_t)newcap);
    if (nb == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    w->buf = nb;
    w->cap = newcap;
    return 0;
}

/* Appends `vint(len(body)) + body` for a body already in memory (ASCII
 * storage, or what CPython's codec made). */
static Py_ssize_t
writer_put_prefixed_bytes(WriterObject *w, const void *p, Py_ssize_t n)
{
    Py_ssize_t pw = (Py_ssize_t)u8p_vint_size((uint64_t)n);
    if (writer_reserve(w, pw + n) < 0)
        return -1;
    u8p_vint_write(w->buf + w->len, (uint64_t)n);
    if (n)
        memcpy(w->buf + w->len + pw, p, (size_t)n);
    w->len += pw + n;
    return pw + n;
}

static Py_ssize_t
writer_put_via_codec(WriterObject *w, const u8p_str *v)
{
    Py_ssize_t r;
    PyObject *b = u8p_body_via_codec(v, w->errors);
    if (b == NULL)
        return -1;
    r = writer_put_prefixed_bytes(w, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b));
    Py_DECREF(b);
    return r;
}

/*
 * Appends one prefixed string; returns the bytes appended or -1.
 * When the prefix width is the same for the fewest and the most bytes the
 * string can take (always for short strings: <= 42 UCS2 code points fit a
 * one-byte prefix) and the worst case fits in the free capacity, it is
 * encoded in one pass behind a reserved prefix that is backfilled.  Else it
 * is counted, the buffer grows (at most once) to the exact size, and the
 * UTF-8 is encoded straight into place.
 */
static Py_ssize_t
writer_put_str(WriterObject *w, PyObject *obj, const char *what)
{
    u8p_str v;
    Py_ssize_t pw, body, maxb;
    uint8_t *dst;

    if (u8p_str_view(obj, &v, what) < 0)
        return -1;

    if (v.ascii) {
        if (v.n < 0x80 && v.n < w->cap - w->len) { /* the common short case */
            dst = w->buf + w->len;
            dst[0] = (uint8_t)v.n;
            memcpy(dst + 1, v.data, (size_t)v.n);
            w->len += v.n + 1;
            return v.n + 1;
        }
        return writer_put_prefixed_bytes(w, v.data, v.n);
    }

    maxb = u8p_max_bytes_per_cp(&v);
    if (v.n <= (PY_SSIZE_T_MAX - U8P_VINT_MAX_BYTES) / maxb) {
        Py_ssize_t worst = v.n * maxb;
        pw = (Py_ssize_t)u8p_vint_size((uint64_t)v.n);
        /* One pass only when the worst case fits as it is: a writer never
         * grows for bytes it may not need (counting is cheap; growth is
         * geometric, so the room is there for most strings). */
        if (pw == (Py_ssize_t)u8p_vint_size((uint64_t)worst) && pw + worst <= w->cap - w->len) {
            Py_ssize_t bw;
            dst = w->buf + w->len;
            body = u8p_body_encode(&v, w->eh, dst + pw);
            if (body == U8P_NEED_CODEC)
                return writer_put_via_codec(w, &v);
            if (body < 0)
                return -1;
            bw = (Py_ssize_t)u8p_vint_size((uint64_t)body);
            if (bw != pw) /* only "ignore" can shrink the body below n */
                memmove(dst + bw, dst + pw, (size_t)body);
            u8p_vint_write(dst, (uint64_t)body);
            w->len += bw + body;
            return bw + body;
        }
    }

    body = u8p_body_length(&v, w->eh);
    if (body == U8P_NEED_CODEC)
        return writer_put_via_codec(w, &v);
    if (body < 0)
        return -1;
    pw = (Py_ssize_t)u8p_vint_size((uint64_t)body);
    if (writer_reserve(w, pw + body) < 0)
        return -1;
    dst = w->buf + w->len;
    dst += u8p_vint_write(dst, (uint64_t)body);
    if (u8p_body_encode_counted(&v, w->eh, dst, body) < 0)
        return -1;
    w->len += pw + body;
    return pw + body;
}

/* ---- methods ---------------------------------------------------------- */

/* The int a write returns, built after the bytes are in: if that allocation
 * fails, the write is taken back (len returns to `start`), so a MemoryError
 * leaves the writer exactly as before the call. */
static PyObject *
writer_result(WriterObject *w, Py_ssize_t start, Py_ssize_t r)
{
    PyObject *res;
    if (r < 0) {
        w->len = start;
        return NULL;
    }
    res = PyLong_FromSsize_t(r);
    if (res == NULL)
        w->len = start;
    return res;
}

static PyObject *
Writer_write_string(WriterObject *self, PyObject *s)
{
    Py_ssize_t r, start = self->len;
    if (writer_check_idle(self) < 0)
        return NULL;
    r = writer_put_str(self, s, "write_string() argument");
    return writer_result(self, start, r);
}

/* Presizing a batch pays when it has a few items; it is skipped when the
 * worst case is huge (then each string grows the buffer exactly). */
#define PRESIZE_MIN_ITEMS 4
#define PRESIZE_MAX_BYTES ((Py_ssize_t)64 << 20)

/*
 * For a list or tuple of str, from the str headers alone: the fewest and the
 * most bytes the batch can take (equal for ASCII).  If the writer must grow
 * anyway, it grows once for the worst case, so that every string then takes
 * the one-pass path.  Best effort: on anything unusual it does nothing and
 * the writes grow as they go.  Never raises.
 */
static void
writer_presize(WriterObject *w, PyObject *seq)
{
    Py_ssize_t i, n = PySequence_Fast_GET_SIZE(seq), least = 0, worst = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);

    if (n < PRESIZE_MIN_ITEMS || w->exports > 0)
        return;
    for (i = 0; i < n; i++) {
        PyObject *s = items[i];
        Py_ssize_t len;
        if (!PyUnicode_CheckExact(s))
            return;
#if PY_VERSION_HEX < 0x030C0000
        if (!PyUnicode_IS_READY(s))
            return;
#endif
        len = PyUnicode_GET_LENGTH(s);
        least += (Py_ssize_t)u8p_vint_size((uint64_t)len) + len;
        if (!PyUnicode_IS_ASCII(s)) /* 2, 3, 4 bytes a code point for UCS1/2/4 */
            len *= PyUnicode_KIND(s) == PyUnicode_4BYTE_KIND ? 4
                                                              : (Py_ssize_t)PyUnicode_KIND(s) + 1;
        worst += (Py_ssize_t)u8p_vint_size((uint64_t)len) + len;
        if (worst > PRESIZE_MAX_BYTES)
            return;
    }
    /* Grow now only if the batch cannot fit as it is (short of "ignore"
     * dropping surrogates): then grow once, for the worst case.  A writer
     * with room for the batch is left alone. */
    if (least > w->cap - w->len && writer_reserve(w, worst) < 0)
        PyErr_Clear(); /* the writes below report any real failure */
}

static PyObject *
Writer_write_strings(WriterObject *self, PyObject *items)
{
    Py_ssize_t start = self->len, idx = 0;
    char what[64];

    if (writer_check_idle(self) < 0)
        return NULL;
    self->busy = 1;

    if (PyList_CheckExact(items) || PyTuple_CheckExact(items)) {
        writer_presize(self, items);
        /* Index the sequence directly; re-read the size each step since a
         * custom error handler could mutate a list. */
        for (idx = 0; idx < PySequence_Fast_GET_SIZE(items); idx++) {
            PyObject *item = PySequence_Fast_GET_ITEM(items, idx);
            Py_ssize_t r;
            Py_INCREF(item);
            if (PyUnicode_CheckExact(item)) {
                r = writer_put_str(self, item, "");
            }
            else {
                PyOS_snprintf(what, sizeof what, "write_strings() item %zd", idx);
                r = writer_put_str(self, item, what);
            }
            Py_DECREF(item);
            if (r < 0)
                goto fail;
        }
    }
    else {
        PyObject *it = PyObject_GetIter(items), *item;
        if (it == NULL)
            goto fail;
        while ((item = PyIter_Next(it)) != NULL) {
            Py_ssize_t r;
            PyOS_snprintf(what, sizeof what, "write_strings() item %zd", idx);
            r = writer_put_str(self, item, what);
            Py_DECREF(item);
            if (r < 0) {
                Py_DECREF(it);
                goto fail;
            }
            idx++;
        }
        Py_DECREF(it);
        if (PyErr_Occurred())
            goto fail;
    }
    self->busy = 0;
    return writer_result(self, start, self->len - start);

fail:
    self->busy = 0;
    self->len = start;
    return NULL;
}

/* Converts an int-like to uint64: ValueError below 0, OverflowError >= 2**64. */
static int
to_u64(PyObject *obj, uint64_t *out, const char *fname)
{
    PyObject *idx;
    int overflow = 0;
    long long sv;
    unsigned long long uv;

    idx = PyNumber_Index(obj);
    if (idx == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s() argument must be int, not %.200s", fname,
                         Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    sv = PyLong_AsLongLongAndOverflow(idx, &overflow);
    if (sv == -1 && PyErr_Occurred()) {
        Py_DECREF(idx);
        return -1;
    }
    if (overflow < 0 || (overflow == 0 && sv < 0)) {
        PyErr_Format(PyExc_ValueError, "%s() argument must be >= 0, got %R", fname, idx);
        Py_DECREF(idx);
        return -1;
    }
    if (overflow == 0) {
        Py_DECREF(idx);
        *out = (uint64_t)sv;
        return 0;
    }
    uv = PyLong_AsUnsignedLongLong(idx);
    if (uv == (unsigned long long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_OverflowError, "%s() argument must be < 2**64, got %R", fname,
                         idx);
        }
        Py_DECREF(idx);
        return -1;
    }
    Py_DECREF(idx);
    *out = (uint64_t)uv;
    return 0;
}

int
u8p_parse_u64(PyObject *obj, uint64_t *out, const char *fname)
{
    return to_u64(obj, out, fname);
}

static PyObject *
Writer_write_vint(WriterObject *self, PyObject *arg)
{
    uint64_t n;
    Py_ssize_t k;
    if (to_u64(arg, &n, "write_vint") < 0 || writer_check_idle(self) < 0)
        return NULL;
    if (writer_reserve(self, (Py_ssize_t)u8p_vint_size(n)) < 0)
        return NULL;
    k = (Py_ssize_t)u8p_vint_write(self->buf + self->len, n);
    self->len += k;
    return writer_result(self, self->len - k, k);
}

/* write_bytes / write_raw: any buffer-protocol object.  Writing the writer
 * into itself copies its own value without exporting a view (an export
 * would forbid the growth the copy needs). */
static PyObject *
writer_put_buffer(WriterObject *self, PyObject *arg, int prefixed)
{
    Py_buffer view;
    Py_ssize_t r, pw = 0, n;

    if (writer_check_idle(self) < 0)
        return NULL;
    if ((PyObject *)self == arg) {
        n = self->len;
        pw = prefixed ? (Py_ssize_t)u8p_vint_size((uint64_t)n) : 0;
        if (writer_reserve(self, pw + n) < 0)
            return NULL;
        if (prefixed)
            u8p_vint_write(self->buf + self->len, (uint64_t)n);
        if (n)
            memcpy(self->buf + self->len + pw, self->buf, (size_t)n);
        self->len += pw + n;
        return writer_result(self, self->len - (pw + n), pw + n);
    }
    if (PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError,
                     "%s() argument must be a bytes-like object, not str (use write_string)",
                     prefixed ? "write_bytes" : "write_raw");
        return NULL;
    }
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "%s() argument must be a bytes-like object, not %.200s",
                         prefixed ? "write_bytes" : "write_raw", Py_TYPE(arg)->tp_name);
        }
        return NULL;
    }
    if (prefixed) {
        r = writer_put_prefixed_bytes(self, view.buf, view.len);
    }
    else if (writer_reserve(self, view.len) < 0) {
        r = -1;
    }
    else {
        if (view.len)
            memcpy(self->buf + self->len, view.buf, (size_t)view.len);
        self->len += view.len;
        r = view.len;
    }
    PyBuffer_Release(&view);
    return writer_result(self, r < 0 ? self->len : self->len - r, r);
}

static PyObject *
Writer_write_bytes(WriterObject *self, PyObject *arg)
{
    return writer_put_buffer(self, arg, 1);
}

static PyObject *
Writer_write_raw(WriterObject *self, PyObject *arg)
{
    return writer_put_buffer(self, arg, 0);
}

static PyObject *
Writer_getvalue(WriterObject *self, PyObject *Py_UNUSED(ignored))
{
    return PyBytes_FromStringAndSize((const char *)(self->buf ? self->buf : &empty_byte),
                                     self->len);
}

static PyObject *
Writer_clear(WriterObject *self, PyObject *Py_UNUSED(ignored))
{
    if (writer_check_idle(self) < 0)
        return NULL;
    if (self->exports > 0) {
        PyErr_Format(PyExc_BufferError,
                     "BufferWriter cannot be cleared while %zd buffer view(s) are exported",
                     self->exports);
        return NULL;
    }
    self->len = 0;
    Py_RETURN_NONE;
}

static PyObject *
Writer_reserve(WriterObject *self, PyObject *arg)
{
    Py_ssize_t n = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 0) {
        PyErr_Format(PyExc_ValueError, "reserve() argument must be >= 0, got %zd", n);
        return NULL;
    }
    if (writer_check_idle(self) < 0)
        return NULL;
    if (writer_reserve(self, n) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
Writer_sizeof(WriterObject *self, PyObject *Py_UNUSED(ignored))
{
    return PyLong_FromSsize_t((Py_ssize_t)Py_TYPE(self)->tp_basicsize + self->cap);
}

static PyObject *
Writer_get_capacity(WriterObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(self->cap);
}

static PyObject *
Writer_get_errors(WriterObject *self, void *Py_UNUSED(closure))
{
    return Py_NewRef(self->errors);
}

static Py_ssize_t
Writer_length(WriterObject *self)
{
    return self->len;
}

static PyObject *
Writer_repr(WriterObject *self)
{
    return PyUnicode_FromFormat("<%s len=%zd capacity=%zd errors=%R>", Py_TYPE(self)->tp_name,
                                self->len, self->cap, self->errors);
}

static int
Writer_getbuffer(WriterObject *self, Py_buffer *view, int flags)
{
    void *p = self->buf ? (void *)self->buf : (void *)&empty_byte;
    if (self->busy) {
        /* a view taken mid-batch would show bytes a rollback takes back */
        PyErr_SetString(PyExc_BufferError,
                        "BufferWriter cannot export a buffer in the middle of write_strings()");
        return -1;
    }
    if (PyBuffer_FillInfo(view, (PyObject *)self, p, self->len, 1, flags) < 0)
        return -1;
    self->exports++;
    return 0;
}

static void
Writer_releasebuffer(WriterObject *self, Py_buffer *Py_UNUSED(view))
{
    self->exports--;
}

static PyObject *
Writer_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"capacity", "errors", NULL};
    Py_ssize_t capacity = 0;
    PyObject *errors = NULL;
    u8p_errors eh;
    WriterObject *self;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|n$O:BufferWriter", kwlist, &capacity,
                                     &errors))
        return NULL;
    if (capacity < 0) {
        PyErr_Format(PyExc_ValueError, "BufferWriter() capacity must be >= 0, got %zd",
                     capacity);
        return NULL;
    }
    if (u8p_parse_errors(errors, &eh, "BufferWriter()") < 0)
        return NULL;
    self = (WriterObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->buf = NULL;
    self->len = self->cap = self->exports = 0;
    self->busy = 0;
    self->eh = eh;
    self->errors = errors ? Py_NewRef(errors) : PyUnicode_FromString("strict");
    if (self->errors == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    if (capacity > 0) { /* exactly what was asked for */
        self->buf = (uint8_t *)PyMem_Malloc((size_t)capacity);
        if (self->buf == NULL) {
            Py_DECREF(self);
            return PyErr_NoMemory();
        }
        self->cap = capacity;
    }
    return (PyObject *)self;
}

static void
Writer_dealloc(WriterObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyMem_Free(self->buf);
    Py_XDECREF(self->errors);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyMethodDef Writer_methods[] = {
    {"write_string", (PyCFunction)Writer_write_string, METH_O,
     "write_string($self, s, /)\n--\n\nAppend vint(len(e)) + e, e = s.encode('utf-8', errors).\n"
     "Return the number of bytes appended."},
    {"write_strings", (PyCFunction)Writer_write_strings, METH_O,
     "write_strings($self, iterable, /)\n--\n\nwrite_string() for each item, all or nothing.\n"
     "Return the total number of bytes appended."},
    {"write_vint", (PyCFunction)Writer_write_vint, METH_O,
     "write_vint($self, n, /)\n--\n\nAppend n (0 <= n < 2**64) as an unsigned LEB128 VInt."},
    {"write_bytes", (PyCFunction)Writer_write_bytes, METH_O,
     "write_bytes($self, b, /)\n--\n\nAppend a bytes-like object behind its VInt length."},
    {"write_raw", (PyCFunction)Writer_write_raw, METH_O,
     "write_raw($self, b, /)\n--\n\nAppend a bytes-like object as is."},
    {"getvalue", (PyCFunction)Writer_getvalue, METH_NOARGS,
     "getvalue($self)\n--\n\nThe bytes written so far."},
    {"clear", (PyCFunction)Writer_clear, METH_NOARGS,
     "clear($self)\n--\n\nDrop the contents, keep the capacity."},
    {"reserve", (PyCFunction)Writer_reserve, METH_O,
     "reserve($self, n, /)\n--\n\nMake room for n more bytes without further growth."},
    {"__sizeof__", (PyCFunction)Writer_sizeof, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Writer_getset[] = {
    {"capacity", (getter)Writer_get_capacity, NULL, "Bytes allocated (read-only).", NULL},
    {"errors", (getter)Writer_get_errors, NULL, "The error handler name (read-only).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot Writer_slots[] = {
    {Py_tp_new, Writer_new},
    {Py_tp_dealloc, Writer_dealloc},
    {Py_tp_methods, Writer_methods},
    {Py_tp_getset, Writer_getset},
    {Py_tp_repr, Writer_repr},
    {Py_sq_length, Writer_length},
    {Py_bf_getbuffer, Writer_getbuffer},
    {Py_bf_releasebuffer, Writer_releasebuffer},
    {Py_tp_doc,
     "BufferWriter(capacity=0, *, errors='strict')\n--\n\n"
     "A growable buffer of VInt-prefixed UTF-8 strings.\n\n"
     "Exports a read-only buffer (memoryview(w), bytes(w)); while a view is\n"
     "alive, a write that would have to grow the buffer raises BufferError."},
    {0, NULL},
};

static PyType_Spec Writer_spec = {
    "utf8pfx.BufferWriter",
    sizeof(WriterObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    Writer_slots,
};

int
u8p_writer_exec(PyObject *module, u8p_state *st)
{
    PyObject *t = PyType_FromModuleAndSpec(module, &Writer_spec, NULL);
    if (t == NULL)
        return -1;
    st->writer_type = (PyTypeObject *)t;
    Py_INCREF(t);
    if (PyModule_AddObject(module, "BufferWriter", t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return 0;
}
