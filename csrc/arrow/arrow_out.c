/*
 * Arrow out: ArrowUtf8Array, BufferReader.read_strings_arrow, decode_arrow,
 * and the module registration of the Arrow parts.  The design is described
 * at the top of arrow_internal.h.
 */
#include "arrow_internal.h"

#if defined(_MSC_VER)
#include <intrin.h>
#define U8P_REF_INC(p) _InterlockedIncrement(p)
#define U8P_REF_DEC(p) _InterlockedDecrement(p)
#else
#define U8P_REF_INC(p) __atomic_add_fetch(p, 1, __ATOMIC_RELAXED)
#define U8P_REF_DEC(p) __atomic_sub_fetch(p, 1, __ATOMIC_ACQ_REL)
#endif

/* ================================================================= out */

typedef struct {
    long refs;
    int64_t length;
    int large;
    void *offsets;
    uint8_t *values;
    int64_t nvalues;
    uint8_t *validity; /* NULL when no record was varint+1's null marker */
    int64_t null_count;
    const void *bufs[3];
} arrow_block;

static void
block_decref(arrow_block *b)
{
    if (U8P_REF_DEC(&b->refs) == 0) {
        free(b->offsets);
        free(b->values);
        free(b->validity);
        free(b);
    }
}

static void
block_release_array(struct ArrowArray *a)
{
    if (a->release == NULL)
        return;
    block_decref((arrow_block *)a->private_data);
    a->release = NULL;
}

static void
block_export(arrow_block *b, struct ArrowArray *a)
{
    U8P_REF_INC(&b->refs);
    a->length = b->length;
    a->null_count = b->null_count;
    a->offset = 0;
    a->n_buffers = 3;
    a->n_children = 0;
    a->buffers = b->bufs;
    a->children = NULL;
    a->dictionary = NULL;
    a->release = block_release_array;
    a->private_data = b;
}

static void
static_schema_release(struct ArrowSchema *s)
{
    s->release = NULL;
}

static void
schema_export(int large, struct ArrowSchema *s)
{
    s->format = large ? "U" : "u";
    s->name = "";
    s->metadata = NULL;
    s->flags = ARROW_FLAG_NULLABLE;
    s->n_children = 0;
    s->children = NULL;
    s->dictionary = NULL;
    s->release = static_schema_release;
    s->private_data = NULL;
}

static void
capsule_schema_free(PyObject *cap)
{
    struct ArrowSchema *s = (struct ArrowSchema *)PyCapsule_GetPointer(cap, "arrow_schema");
    if (s == NULL) {
        PyErr_Clear();
        return;
    }
    if (s->release != NULL)
        s->release(s);
    free(s);
}

static void
capsule_array_free(PyObject *cap)
{
    struct ArrowArray *a = (struct ArrowArray *)PyCapsule_GetPointer(cap, "arrow_array");
    if (a == NULL) {
        PyErr_Clear();
        return;
    }
    if (a->release != NULL)
        a->release(a);
    free(a);
}

static void
capsule_stream_free(PyObject *cap)
{
    struct ArrowArrayStream *s =
        (struct ArrowArrayStream *)PyCapsule_GetPointer(cap, "arrow_array_stream");
    if (s == NULL) {
        PyErr_Clear();
        return;
    }
    if (s->release != NULL)
        s->release(s);
    free(s);
}

static PyObject *
new_schema_capsule(int large)
{
    PyObject *cap;
    struct ArrowSchema *s = (struct ArrowSchema *)malloc(sizeof *s);
    if (s == NULL)
        return PyErr_NoMemory();
    schema_export(large, s);
    cap = PyCapsule_New(s, "arrow_schema", capsule_schema_free);
    if (cap == NULL)
        free(s);
    return cap;
}

static PyObject *
new_array_capsule(arrow_block *b)
{
    PyObject *cap;
    struct ArrowArray *a = (struct ArrowArray *)malloc(sizeof *a);
    if (a == NULL)
        return PyErr_NoMemory();
    block_export(b, a);
    cap = PyCapsule_New(a, "arrow_array", capsule_array_free);
    if (cap == NULL) {
        a->release(a);
        free(a);
    }
    return cap;
}

/* A one-chunk stream over a block. */
typedef struct {
    arrow_block *b;
    int done;
} stream_state;

static int
st_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    schema_export(((stream_state *)s->private_data)->b->large, out);
    return 0;
}

static int
st_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    stream_state *x = (stream_state *)s->private_data;
    if (x->done) {
        memset(out, 0, sizeof *out); /* release == NULL: the end */
        return 0;
    }
    block_export(x->b, out);
    x->done = 1;
    return 0;
}

static const char *
st_last_error(struct ArrowArrayStream *s)
{
    (void)s;
    return NULL;
}

static void
st_release(struct ArrowArrayStream *s)
{
    stream_state *x = (stream_state *)s->private_data;
    if (s->release == NULL)
        return;
    block_decref(x->b);
    free(x);
    s->release = NULL;
}

typedef struct {
    PyObject_HEAD
    arrow_block *b;
} ArrowArrObject;

static void
Arr_dealloc(ArrowArrObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    if (self->b)
        block_decref(self->b);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

/* requested_schema: the interface lets a producer ignore it; the array is
 * always exported as it is (utf8, or large_utf8 when built so). */
static int
check_requested(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *fname)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0, i;
    (void)args;
    if (nargs + nkw > 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most 1 argument (requested_schema)",
                     fname);
        return -1;
    }
    for (i = 0; i < nkw; i++) {
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i),
                                             "requested_schema") != 0) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword %R", fname,
                         PyTuple_GET_ITEM(kwnames, i));
            return -1;
        }
    }
    return 0;
}

static PyObject *
Arr_c_array(ArrowArrObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *sc, *ac, *res;
    if (check_requested(args, nargs, kwnames, "__arrow_c_array__") < 0)
        return NULL;
    sc = new_schema_capsule(self->b->large);
    if (sc == NULL)
        return NULL;
    ac = new_array_capsule(self->b);
    if (ac == NULL) {
        Py_DECREF(sc);
        return NULL;
    }
    res = PyTuple_Pack(2, sc, ac);
    Py_DECREF(sc);
    Py_DECREF(ac);
    return res;
}

static PyObject *
Arr_c_schema(ArrowArrObject *self, PyObject *Py_UNUSED(ignored))
{
    return new_schema_capsule(self->b->large);
}

static PyObject *
Arr_c_stream(ArrowArrObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    struct ArrowArrayStream *s;
    stream_state *x;
    PyObject *cap;
    if (check_requested(args, nargs, kwnames, "__arrow_c_stream__") < 0)
        return NULL;
    s = (struct ArrowArrayStream *)malloc(sizeof *s);
    x = (stream_state *)malloc(sizeof *x);
    if (s == NULL || x == NULL) {
        free(s);
        free(x);
        return PyErr_NoMemory();
    }
    U8P_REF_INC(&self->b->refs);
    x->b = self->b;
    x->done = 0;
    s->get_schema = st_get_schema;
    s->get_next = st_get_next;
    s->get_last_error = st_last_error;
    s->release = st_release;
    s->private_data = x;
    cap = PyCapsule_New(s, "arrow_array_stream", capsule_stream_free);
    if (cap == NULL) {
        s->release(s);
        free(s);
    }
    return cap;
}

static PyObject *
Arr_reduce(ArrowArrObject *self, PyObject *Py_UNUSED(ignored))
{
    (void)self;
    PyErr_SetString(PyExc_TypeError,
                    "cannot pickle an ArrowUtf8Array: convert it to the Arrow library you "
                    "use first (pyarrow.array(x), polars.Series(x)), or send the blob it "
                    "was decoded from");
    return NULL;
}

static Py_ssize_t
Arr_length(ArrowArrObject *self)
{
    return (Py_ssize_t)self->b->length;
}

static PyObject *
Arr_repr(ArrowArrObject *self)
{
    return PyUnicode_FromFormat("<%s %s length=%zd value_bytes=%zd>", Py_TYPE(self)->tp_name,
                                self->b->large ? "large_utf8" : "utf8",
                                (Py_ssize_t)self->b->length, (Py_ssize_t)self->b->nvalues);
}

static PyObject *
Arr_get_type(ArrowArrObject *self, void *Py_UNUSED(closure))
{
    return PyUnicode_FromString(self->b->large ? "large_utf8" : "utf8");
}

static PyObject *
Arr_get_nbytes(ArrowArrObject *self, void *Py_UNUSED(closure))
{
    int64_t w = self->b->large ? 8 : 4;
    int64_t v = self->b->validity != NULL ? (self->b->length + 7) / 8 : 0;
    return PyLong_FromLongLong((long long)(self->b->nvalues + (self->b->length + 1) * w + v));
}

static PyObject *
Arr_get_value_bytes(ArrowArrObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLongLong((long long)self->b->nvalues);
}

static PyObject *
Arr_get_null_count(ArrowArrObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLongLong((long long)self->b->null_count);
}

static PyObject *
Arr_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)args;
    (void)kwds;
    PyErr_Format(PyExc_TypeError,
                 "cannot create '%.100s' instances: use decode_arrow() or "
                 "BufferReader.read_strings_arrow()",
                 type->tp_name);
    return NULL;
}

static PyMethodDef Arr_methods[] = {
    {"__arrow_c_array__", (PyCFunction)(void (*)(void))Arr_c_array,
     METH_FASTCALL | METH_KEYWORDS,
     "__arrow_c_array__($self, /, requested_schema=None)\n--\n\n"
     "(schema, array) PyCapsules of the Arrow C data interface; requested_schema is "
     "ignored (the interface allows it)."},
    {"__arrow_c_stream__", (PyCFunction)(void (*)(void))Arr_c_stream,
     METH_FASTCALL | METH_KEYWORDS,
     "__arrow_c_stream__($self, /, requested_schema=None)\n--\n\n"
     "An ArrowArrayStream PyCapsule of one chunk."},
    {"__arrow_c_schema__", (PyCFunction)Arr_c_schema, METH_NOARGS,
     "__arrow_c_schema__($self, /)\n--\n\nThe ArrowSchema PyCapsule (utf8 or large_utf8)."},
    {"__reduce__", (PyCFunction)Arr_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Arr_getset[] = {
    {"type", (getter)Arr_get_type, NULL, "'utf8' or 'large_utf8'.", NULL},
    {"null_count", (getter)Arr_get_null_count, NULL,
     "Null rows (varint+1's null marker; 0 under the other presets).", NULL},
    {"value_bytes", (getter)Arr_get_value_bytes, NULL, "Bytes in the values buffer.", NULL},
    {"nbytes", (getter)Arr_get_nbytes, NULL, "Bytes in the offsets and values buffers.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot Arr_slots[] = {
    {Py_tp_new, Arr_new},
    {Py_tp_dealloc, Arr_dealloc},
    {Py_tp_methods, Arr_methods},
    {Py_tp_getset, Arr_getset},
    {Py_tp_repr, Arr_repr},
    {Py_sq_length, Arr_length},
    {Py_tp_doc,
     "An Arrow utf8 (or large_utf8) array decoded from prefixed records.\n\n"
     "Made by decode_arrow() and BufferReader.read_strings_arrow(); hand it to any Arrow\n"
     "consumer (pyarrow.array(x), polars.Series(x), ...) through the Arrow PyCapsule\n"
     "interface: the consumer takes the buffers without a copy."},
    {0, NULL},
};

static PyType_Spec Arr_spec = {
    "utf8pfx.ArrowUtf8Array",
    sizeof(ArrowArrObject),
    0,
    Py_TPFLAGS_DEFAULT,
    Arr_slots,
};

/* A growable malloc'd byte buffer (values under an error handler). */
static int
grow_values(uint8_t **buf, int64_t *cap, int64_t need)
{
    int64_t nc;
    uint8_t *nb;
    if (need <= *cap)
        return 0;
    nc = *cap * 2 > need ? *cap * 2 : need;
    nb = (uint8_t *)realloc(*buf, (size_t)nc);
    if (nb == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *buf = nb;
    *cap = nc;
    return 0;
}

static inline void
set_offset(void *offsets, int large, int64_t i, int64_t v)
{
    if (large)
        ((int64_t *)offsets)[i] = v;
    else
        ((int32_t *)offsets)[i] = (int32_t)v;
}

/*
 * The validity bitmap of varint+1's null markers: allocated on the first
 * null with every bit set (room for `rows` rows), then one bit cleared per
 * null; grown with the offsets when reading to the end.
 */
static int
mark_null(uint8_t **vbm, int64_t rows, int64_t i, int64_t *nulls)
{
    if (*vbm == NULL) {
        size_t nb = (size_t)(rows + 7) / 8 + 1;
        *vbm = (uint8_t *)malloc(nb);
        if (*vbm == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memset(*vbm, 0xFF, nb);
    }
    (*vbm)[i >> 3] &= (uint8_t)~(1u << (i & 7));
    ++*nulls;
    return 0;
}

static int
grow_bitmap(uint8_t **vbm, int64_t old_rows, int64_t rows)
{
    size_t ob = (size_t)(old_rows + 7) / 8 + 1, nb = (size_t)(rows + 7) / 8 + 1;
    uint8_t *n;
    if (*vbm == NULL || nb <= ob)
        return 0;
    n = (uint8_t *)realloc(*vbm, nb);
    if (n == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(n + ob, 0xFF, nb - ob);
    *vbm = n;
    return 0;
}

/* A MUTF-8 payload as UTF-8 at dst (room for n bytes): the bytes written,
 * or -1 when it needs the MUTF-8 decoder (an error, a lone surrogate). */
static Py_ssize_t
mutf8_to_utf8(const uint8_t *p, Py_ssize_t n, uint8_t *dst)
{
    u8p_scan_result r;
    size_t m = u8p_mutf8_narrow(p, (size_t)n, dst);
    if (m == (size_t)-1 || u8p_D->scan(dst, m, 0, &r) != U8P_DEC_OK)
        return -1;
    return (Py_ssize_t)m;
}

/* The strict error of record `row` (payload at `off` of the blob). */
static void
record_error(const rd_ctx *c, int64_t row, Py_ssize_t off, Py_ssize_t n, u8p_dec_status st,
             const u8p_scan_result *r)
{
    static const char *const names[] = {"row", "payload_offset", "data_offset"};
    Py_ssize_t vals[3];
    char note[200];
    vals[0] = (Py_ssize_t)row;
    vals[1] = c->base + off;
    vals[2] = c->base + off + (Py_ssize_t)r->err_start;
    PyOS_snprintf(note, sizeof note,
                  "utf8pfx: invalid UTF-8 at offset %zd of the data (string %lld, whose "
                  "payload starts at offset %zd)",
                  vals[2], (long long)row, vals[1]);
    raise_decode_error(c->data + off, n, r, st, note, 3, names, vals);
}

/*
 * Row by row (a non-strict handler, or MUTF-8 records): valid UTF-8 payloads
 * copied, MUTF-8 ones narrowed to UTF-8 (C0 80 -> 00, surrogate pairs ->
 * 4-byte sequences), the others decoded as the reader decodes them (its
 * errors under strict, the handler otherwise) and re-encoded (strictly:
 * Arrow utf8 cannot hold lone surrogates); null markers become nulls.
 * Fills b->values/nvalues/offsets/validity (offsets allocated for `count`
 * rows as int64 first, narrowed at the end if they fit).
 */
static int
build_with_handler(const u8p_state *st, const rd_ctx *c, Py_ssize_t start, int64_t count,
                   arrow_block *b)
{
    int64_t i, cap = 0, used = 0;
    uint8_t *vals = NULL;
    int64_t *offs = (int64_t *)malloc((size_t)(count + 1) * sizeof(int64_t));
    Py_ssize_t p = start, off, n;
    const char *ename = PyUnicode_AsUTF8(c->errors);
    if (offs == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (ename == NULL)
        goto fail;
    offs[0] = 0;
    for (i = 0; i < count; i++) {
        u8p_dec_status st;
        u8p_scan_result r;
        Py_ssize_t m = -1;
        /* proven by the first walk, unless shared bytes changed since */
        int k = ar_record(c, &p, &off, &n);
        if (k < 0)
            goto fail;
        if (k == 0) {
            if (mark_null(&b->validity, count, i, &b->null_count) < 0)
                goto fail;
            offs[i + 1] = used;
            continue;
        }
        if (grow_values(&vals, &cap, used + n + 1) < 0)
            goto fail;
        if (c->enc == U8P_ENC_MUTF8)
            m = mutf8_to_utf8(c->data + off, n, vals + used);
        else {
            /* checked as copied: shared bytes may change in between */
            if (n > 0)
                memcpy(vals + used, c->data + off, (size_t)n);
            if (value_ok(vals + used, n, 0, &st, &r))
                m = n;
        }
        if (m >= 0)
            used += m;
        else {
            Py_ssize_t un;
            const char *u;
            PyObject *s = c->enc == U8P_ENC_MUTF8
                              ? u8p_rd_decode(c, off, n)
                              : PyUnicode_DecodeUTF8((const char *)c->data + off, n, ename);
            if (s == NULL)
                goto fail;
            u = PyUnicode_AsUTF8AndSize(s, &un);
            if (u == NULL) {
                Py_DECREF(s);
                PyErr_Clear();
                PyErr_Format(PyExc_ValueError,
                             "string %lld (payload at offset %zd) decodes under errors=%R to "
                             "lone surrogates, which an Arrow utf8 array cannot hold",
                             (long long)i, c->base + off, c->errors);
                {
                    /* its row, as the decode errors name theirs */
                    PyObject *v = u8p_exc_take(), *r = PyLong_FromLongLong((long long)i);
                    if (r == NULL || PyObject_SetAttrString(v, "row", r) < 0)
                        PyErr_Clear(); /* the ValueError is raised without it */
                    Py_XDECREF(r);
                    u8p_exc_raise(v);
                }
                goto fail;
            }
            if (grow_values(&vals, &cap, used + un + 1) < 0) {
                Py_DECREF(s);
                goto fail;
            }
            memcpy(vals + used, u, (size_t)un);
            used += un;
            Py_DECREF(s);
        }
        offs[i + 1] = used;
    }
    if (vals == NULL && (vals = (uint8_t *)malloc(1)) == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    b->large = used > st->arrow_large_threshold;
    if (!b->large) {
        int32_t *o32 = (int32_t *)offs;
        for (i = 0; i <= count; i++)
            o32[i] = (int32_t)offs[i];
    }
    b->offsets = offs;
    b->values = vals;
    b->nvalues = used;
    return 0;
fail:
    free(offs);
    free(vals);
    free(b->validity);
    b->validity = NULL;
    b->null_count = 0;
    return -1;
}

/*
 * Errors come in data order, as for read_strings(): when the walk stops at a
 * bad prefix, an invalid payload among the `count` records before it is the
 * error raised instead (the first one).
 */
static void
earlier_utf8_error(const rd_ctx *c, Py_ssize_t start, int64_t count)
{
    Py_ssize_t p = start, off, n;
    int64_t i;
    u8p_err_stash x;
    u8p_stash_take(&x);
    for (i = 0; i < count; i++) {
        u8p_dec_status st;
        u8p_scan_result r;
        if (ar_record(c, &p, &off, &n) < 0) { /* shared bytes that changed */
            PyErr_Clear();
            break; /* the error raised stands */
        }
        if (c->enc == U8P_ENC_MUTF8) {
            PyObject *s;
            uint8_t *tmp;
            Py_ssize_t m;
            if (n == 0)
                continue;
            tmp = (uint8_t *)malloc((size_t)n);
            if (tmp == NULL)
                break; /* the prefix error stands */
            m = mutf8_to_utf8(c->data + off, n, tmp);
            free(tmp);
            if (m >= 0)
                continue;
            s = u8p_rd_decode(c, off, n); /* strict: the reader's error */
            if (s == NULL) {
                u8p_stash_drop(&x);
                return;
            }
            Py_DECREF(s);
            continue;
        }
        if (!value_ok(c->data + off, n, 0, &st, &r)) {
            u8p_stash_drop(&x);
            record_error(c, i, off, n, st, &r);
            return;
        }
    }
    u8p_stash_put(&x);
}

/*
 * Reads `limit` records (all when < 0) at *pos into a new ArrowUtf8Array;
 * *pos moves only on success.
 */
/*
 * Copies the payloads of `count` records (limit >= 0) or of all records up
 * to the end (count < 0) from *p into values (room for cap bytes plus 32)
 * and fills offsets [1..] (int32 or int64), which must
 * have room for count + 1 entries, or for *ocap entries when count < 0 (then
 * grown as needed: *offs may move).  Short payloads are moved 32 bytes at a
 * time where both sides have the room.  Returns the records read, or -1
 * with an exception (a bad prefix, no memory, or records longer than cap:
 * the first walk's lengths, which shared bytes may no longer have); *bad is set when a
 * non-empty payload starts with a continuation byte (so the values, even if
 * valid as one range, are not valid record by record), or (mutf8) when a
 * payload cannot be narrowed to UTF-8.
 */
U8P_ALWAYS_INLINE int64_t
copy_records(const rd_ctx *c, Py_ssize_t *pp, int64_t count, void **offs, int64_t *ocap,
             int large, uint8_t *values, int64_t cap, int64_t *total, int *bad, arrow_block *b,
             int mutf8, u8p_prefix pf)
{
    Py_ssize_t p = *pp, off, n;
    int k;
    const Py_ssize_t safe = c->len - 32; /* payloads starting before it: 32 readable bytes */
    int64_t i = 0, at = 0;
    uint8_t cont = 0;
    for (;;) {
        if (count >= 0 ? i >= count : p >= c->len)
            break;
        if ((k = ar_record_pf(c, pf, &p, &off, &n)) < 0) {
            *pp = p;
            *total = at;
            return -1 - i;
        }
        /* to the end, the records cannot hold more than the data that
         * remains, which is cap; `count` records hold what the first walk
         * summed, unless the bytes changed since */
        if (count >= 0 && U8P_EXPECT(n > cap - at, 0)) {
            PyErr_Format(PyExc_RuntimeError,
                         "the data changed while it was read: the record at byte %zd is "
                         "longer than before (another thread or process wrote the buffer)",
                         (Py_ssize_t)(off + c->base));
            *total = at;
            return -1 - i - 1;
        }
        if (count < 0 && i + 1 >= *ocap) {
            int64_t nc = *ocap * 2;
            void *no = realloc(*offs, (size_t)nc * (large ? 8 : 4));
            if (no == NULL ||
                (u8p_prefix_has_null(pf) && grow_bitmap(&b->validity, *ocap, nc) < 0)) {
                if (no == NULL)
                    PyErr_NoMemory();
                else
                    *offs = no;
                *total = at;
                return -1 - i - 1; /* not a prefix error: the caller checks PyErr */
            }
            *offs = no;
            *ocap = nc;
        }
        /* (a constant false but for varint+1: no null test in the others' loops) */
        if (u8p_prefix_has_null(pf) && k == 0 &&
            mark_null(&b->validity, *ocap, i, &b->null_count) < 0) {
            *total = at;
            return -1 - i - 1;
        }
        if (mutf8) {
            /* narrowed to UTF-8 (never longer); a payload narrowing refuses
             * (4-byte sequence, lone surrogate form, C0 not before 80)
             * sends the whole read row by row, as invalid UTF-8 does */
            size_t m = n ? u8p_mutf8_narrow(c->data + off, (size_t)n, values + at) : 0;
            if (m == (size_t)-1)
                cont = 1;
            else {
                if (m)
                    cont |= (uint8_t)((values[at] & 0xC0) == 0x80);
                at += (int64_t)m;
            }
        }
        else {
            if (n <= 32 && off <= safe)
                memcpy(values + at, c->data + off, 32);
            else if (n)
                memcpy(values + at, c->data + off, (size_t)n);
            if (n)
                cont |= (uint8_t)((c->data[off] & 0xC0) == 0x80);
            at += n;
        }
        i++;
        if (large)
            ((int64_t *)*offs)[i] = at;
        else
            ((int32_t *)*offs)[i] = (int32_t)at;
    }
    *pp = p;
    *total = at;
    *bad = cont;
    return i;
}

/* One out-of-line function per specialisation (its own registers). */
#define COPY_RECORDS_AS(NAME, MUTF8, PF)                                                     \
    U8P_NOINLINE int64_t NAME(const rd_ctx *c, Py_ssize_t *pp, int64_t count, void **offs,     \
                             int64_t *ocap, int large, uint8_t *values, int64_t cap,         \
                             int64_t *total, int *bad, arrow_block *b)                       \
    {                                                                                        \
        return copy_records(c, pp, count, offs, ocap, large, values, cap, total, bad, b,     \
                            MUTF8, PF);                                                      \
    }
COPY_RECORDS_AS(copy_records_varint, 0, U8P_PFX_VARINT)
COPY_RECORDS_AS(copy_records_any, 0, c->prefix)
COPY_RECORDS_AS(copy_records_mutf8, 1, c->prefix)

/*
 * Reads `limit` records (all when < 0) at *pos into a new ArrowUtf8Array;
 * *pos moves only on success.  Nothing is allocated on the word of a
 * prefix: for all records, the values buffer is sized by the data that
 * remains (which holds them and their prefixes) and one pass parses and
 * copies; for `limit` records a first walk checks every prefix and sums the
 * lengths first.
 */
static PyObject *
read_arrow(const u8p_state *st, const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t limit)
{
    Py_ssize_t p = *pos, off, n;
    int64_t count = 0, total = 0, cap, ocap, i, got;
    arrow_block *b;
    ArrowArrObject *obj;
    int ok = 1, bad = 0, large;
    const int mutf8 = c->enc == U8P_ENC_MUTF8;

    if (limit >= 0) {
        /* walk 1: prefixes and bounds only; nothing allocated yet */
        while (count < limit) {
            if (ar_record(c, &p, &off, &n) < 0) {
                if (c->eh == U8P_ERR_STRICT)
                    earlier_utf8_error(c, *pos, count);
                return NULL;
            }
            total += n;
            count++;
        }
        cap = total;
        ocap = count + 1;
        large = total > st->arrow_large_threshold;
    }
    else {
        cap = c->len - p;
        ocap = cap / 8 + 16;
        large = cap > st->arrow_large_threshold;
    }
    b = (arrow_block *)calloc(1, sizeof *b);
    if (b == NULL)
        return PyErr_NoMemory();
    b->refs = 1;
    b->offsets = malloc((size_t)ocap * (large ? 8 : 4));
    b->values = (uint8_t *)malloc((size_t)cap + 32);
    if (b->offsets == NULL || b->values == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    set_offset(b->offsets, large, 0, 0);
    p = *pos;
    /* constant arguments: the default (varint, UTF-8) loop has no switch */
    got = (mutf8                             ? copy_records_mutf8
           : c->prefix == U8P_PFX_VARINT ? copy_records_varint
                                         : copy_records_any)(
        c, &p, limit >= 0 ? count : -1, &b->offsets, &ocap, large, b->values, cap, &total, &bad,
        b);
    if (got < 0) { /* a bad prefix or no memory (reading to the end), or changed bytes */
        if (!PyErr_ExceptionMatches(PyExc_MemoryError) && c->eh == U8P_ERR_STRICT)
            earlier_utf8_error(c, *pos, -1 - got);
        goto fail;
    }
    count = got;
    if (limit < 0) { /* give back what the prefixes and the offsets' growth took */
        void *nb;
        if (cap - total > cap / 8 && (nb = realloc(b->values, (size_t)total + 32)) != NULL)
            b->values = (uint8_t *)nb;
        if (ocap - (count + 1) > ocap / 8 &&
            (nb = realloc(b->offsets, (size_t)(count + 1) * (large ? 8 : 4))) != NULL)
            b->offsets = nb;
    }
    if (large && total <= st->arrow_large_threshold) { /* the prefixes made the data look large */
        for (i = 0; i <= count; i++)
            ((int32_t *)b->offsets)[i] = (int32_t)((int64_t *)b->offsets)[i];
        large = 0;
    }
    b->length = count;
    b->large = large;
    b->nvalues = total;
    /* UTF-8: the values as one range; each record starts at a code point */
    ok = !bad;
    if (ok && total > 0) {
        u8p_scan_result r;
        ok = u8p_D->scan(b->values, (size_t)total, 0, &r) == U8P_DEC_OK;
    }
    if (!ok) {
        Py_ssize_t q = *pos;
        if (c->eh == U8P_ERR_STRICT && !mutf8) {
            for (i = 0; i < count; i++) {
                u8p_dec_status st;
                u8p_scan_result r;
                if (ar_record(c, &q, &off, &n) < 0) /* shared bytes that changed */
                    goto fail;
                if (!value_ok(c->data + off, n, 0, &st, &r)) {
                    record_error(c, i, off, n, st, &r);
                    goto fail;
                }
            }
            PyErr_SetString(PyExc_SystemError, "utf8pfx: the range scan and the per-record "
                                               "scans disagree (a bug)");
            goto fail;
        }
        free(b->offsets);
        free(b->values);
        free(b->validity);
        b->offsets = NULL;
        b->values = NULL;
        b->validity = NULL;
        b->null_count = 0;
        if (build_with_handler(st, c, *pos, count, b) < 0)
            goto fail;
    }
    b->bufs[0] = b->validity;
    b->bufs[1] = b->offsets;
    b->bufs[2] = b->values;
    obj = PyObject_New(ArrowArrObject, st->arrow_array_type);
    if (obj == NULL)
        goto fail;
    obj->b = b;
    *pos = p;
    return (PyObject *)obj;
fail:
    block_decref(b);
    return NULL;
}

PyObject *
u8p_arrow_read(const u8p_state *st, const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t limit)
{
    return read_arrow(st, c, pos, limit);
}

static PyObject *
Reader_read_strings_arrow(ReaderObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames)
{
    Py_ssize_t limit, pos;
    rd_ctx c;
    PyObject *res;
    const u8p_state *st = u8p_state_of_type(Py_TYPE(self));
    if (st == NULL)
        return NULL;
    if (u8p_parse_read_n(args, nargs, kwnames, "read_strings_arrow", &limit) < 0)
        return NULL;
    if (u8p_reader_check(self) < 0)
        return NULL;
    c.data = self->data;
    c.len = self->len;
    c.eh = self->eh;
    c.errors = self->errors;
    c.strict_vint = self->strict_vint;
    c.prefix = self->prefix;
    c.enc = self->enc;
    c.base = 0;
    c.shared = self->shared;
    pos = self->pos;
    self->busy++;
    res = read_arrow(st, &c, &pos, limit);
    self->busy--;
    if (res == NULL) {
        u8p_rd_annotate_call(&c, self->pos, limit, self->index, "data");
        return NULL;
    }
    /* the first walk stopped at the end of the last record */
    self->pos = pos;
    self->index += (Py_ssize_t)((ArrowArrObject *)res)->b->length;
    return res;
}

static PyObject *
mod_decode_arrow(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *data, *errors, *prefix, *encoding, *res;
    Py_buffer view;
    rd_ctx c;
    Py_ssize_t pos = 0;
    const u8p_state *st = u8p_get_state(module);
    if (u8p_parse_arg_opts(args, nargs, kwnames, "decode_arrow", &data, &errors, &prefix,
                           &encoding) < 0 ||
        u8p_parse_errors(errors, &c.eh, "decode_arrow()") < 0 ||
        u8p_parse_prefix(prefix, &c.prefix, "decode_arrow()") < 0 ||
        u8p_parse_encoding(encoding, &c.enc, "decode_arrow()") < 0)
        return NULL;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    c.data = (const uint8_t *)view.buf;
    c.len = view.len;
    c.errors = errors;
    c.strict_vint = 0;
    c.base = 0;
    c.shared = u8p_buffer_shared(&view);
    if (c.errors == NULL || c.errors == Py_None) /* strict: the name is only used in messages */
        c.errors = st->str_strict;
    res = read_arrow(st, &c, &pos, -1);
    if (res == NULL)
        u8p_rd_annotate_call(&c, 0, -1, 0, "data");
    PyBuffer_Release(&view);
    return res;
}

/* Testing hook: values above n bytes make large_utf8; returns the old n.
 * Per interpreter (module state), like everything but the kernel tables. */
static PyObject *
mod_set_large_threshold(PyObject *module, PyObject *arg)
{
    u8p_state *st = u8p_get_state(module);
    long long old = (long long)st->arrow_large_threshold, v = PyLong_AsLongLong(arg);
    if (v == -1 && PyErr_Occurred())
        return NULL;
    if (v < 0 || v > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "threshold must be in [0, 2**31 - 1], got %lld", v);
        return NULL;
    }
    st->arrow_large_threshold = v;
    return PyLong_FromLongLong(old);
}

static PyMethodDef arrow_functions[] = {
    {"decode_arrow", (PyCFunction)(void (*)(void))mod_decode_arrow,
     METH_FASTCALL | METH_KEYWORDS,
     "decode_arrow(data, /, errors='strict', *, prefix='varint', encoding='utf-8')\n--\n\n"
     "Every prefixed string in a bytes-like object, as an ArrowUtf8Array (no str per "
     "value); varint+1's null marker is a null."},
    {"_arrow_large_threshold", (PyCFunction)mod_set_large_threshold, METH_O,
     "_arrow_large_threshold(n, /)\n--\n\n"
     "Testing hook: values above n bytes make large_utf8; returns the previous n."},
    {NULL, NULL, 0, NULL},
};

static const PyMethodDef arrow_reader_methods[] = {
    {"read_strings_arrow", (PyCFunction)(void (*)(void))Reader_read_strings_arrow,
     METH_FASTCALL | METH_KEYWORDS,
     "read_strings_arrow($self, /, n=-1)\n--\n\nRead n strings (all that remain when n is -1) "
     "as an ArrowUtf8Array, without a str per value; all or nothing."},
    {NULL, NULL, 0, NULL},
};

int
u8p_arrow_reader_methods(PyMethodDef *dst)
{
    return u8p_methods_add(dst, arrow_reader_methods);
}

int
u8p_arrow_exec(PyObject *module, u8p_state *st)
{
    if (u8p_add_type(module, &Arr_spec, NULL, &st->arrow_array_type) < 0)
        return -1;
    return PyModule_AddFunctions(module, arrow_functions);
}
