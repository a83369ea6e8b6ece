/* str -> UTF-8 body under an error handler: see encode.h. */
#include "encode.h"

#define IS_SURROGATE(c) (((c) & 0xFFFFF800u) == 0xD800u)

static inline Py_UCS4
cp_at(const u8p_str *v, Py_ssize_t i)
{
    return PyUnicode_READ(v->kind, v->data, i);
}

/* End of the run of surrogates starting at i. */
static Py_ssize_t
surrogate_run_end(const u8p_str *v, Py_ssize_t i)
{
    Py_ssize_t j = i + 1;
    while (j < v->n && IS_SURROGATE(cp_at(v, j)))
        j++;
    return j;
}

static Py_ssize_t
first_surrogate(const u8p_str *v)
{
    Py_ssize_t i;
    for (i = 0; i < v->n; i++) {
        if (IS_SURROGATE(cp_at(v, i)))
            return i;
    }
    return -1;
}

/* The exception s.encode("utf-8") raises: CPython reports the whole run. */
static void
raise_surrogate_error(const u8p_str *v, Py_ssize_t start, Py_ssize_t end)
{
    PyObject *exc = PyObject_CallFunction(PyExc_UnicodeEncodeError, "sOnns", "utf-8",
                                          v->obj, start, end, "surrogates not allowed");
    if (exc != NULL) {
        PyErr_SetObject(PyExc_UnicodeEncodeError, exc);
        Py_DECREF(exc);
    }
}

/* Whether every surrogate of the str lies in U+DC80..U+DCFF (one byte each
 * under surrogateescape). */
static int
all_escapable(const u8p_str *v)
{
    Py_ssize_t i;
    for (i = 0; i < v->n; i++) {
        Py_UCS4 c = cp_at(v, i);
        if (IS_SURROGATE(c) && (c < 0xDC80 || c > 0xDCFF))
            return 0;
    }
    return 1;
}

static Py_ssize_t adjust_for_surrogates(const u8p_str *v, u8p_errors eh, size_t len,
                                        size_t nsurr);

Py_ssize_t
u8p_body_length(const u8p_str *v, u8p_errors eh, int *pass)
{
    size_t len, nsurr = 0;

    if (pass)
        *pass = 1;
    if (v->ascii)
        return v->n;
    switch (v->kind) {
    case PyUnicode_1BYTE_KIND:
        return (Py_ssize_t)u8p_K->len_ucs1((const uint8_t *)v->data, (size_t)v->n);
    case PyUnicode_2BYTE_KIND:
        len = u8p_K->len_ucs2((const uint16_t *)v->data, (size_t)v->n, &nsurr);
        break;
    default:
        len = u8p_K->len_ucs4((const uint32_t *)v->data, (size_t)v->n, &nsurr);
        break;
    }
    if (nsurr == 0)
        return (Py_ssize_t)len;
    if (pass)
        *pass = eh == U8P_ERR_SURROGATEPASS;
    return adjust_for_surrogates(v, eh, len, nsurr);
}

size_t
u8p_body_length_nogil(const u8p_str *v, size_t *nsurr)
{
    *nsurr = 0;
    if (v->ascii)
        return (size_t)v->n;
    switch (v->kind) {
    case PyUnicode_1BYTE_KIND:
        return u8p_K->len_ucs1((const uint8_t *)v->data, (size_t)v->n);
    case PyUnicode_2BYTE_KIND:
        return u8p_K->len_ucs2((const uint16_t *)v->data, (size_t)v->n, nsurr);
    default:
        return u8p_K->len_ucs4((const uint32_t *)v->data, (size_t)v->n, nsurr);
    }
}

/* A body length that counted each of nsurr surrogates as 3 bytes
 * (surrogatepass), adjusted for the handler. */
static Py_ssize_t
adjust_for_surrogates(const u8p_str *v, u8p_errors eh, size_t len, size_t nsurr)
{
    Py_ssize_t s;
    switch (eh) {
    case U8P_ERR_SURROGATEPASS:
        return (Py_ssize_t)len;
    case U8P_ERR_REPLACE:
        return (Py_ssize_t)(len - 2 * nsurr);
    case U8P_ERR_IGNORE:
        return (Py_ssize_t)(len - 3 * nsurr);
    case U8P_ERR_SURROGATEESCAPE:
        if (all_escapable(v))
            return (Py_ssize_t)(len - 2 * nsurr);
        return U8P_NEED_CODEC;
    case U8P_ERR_STRICT:
        s = first_surrogate(v);
        raise_surrogate_error(v, s, surrogate_run_end(v, s));
        return -1;
    default:
        return U8P_NEED_CODEC;
    }
}

/*
 * Applies a C-handled handler to the surrogate run [i, j); returns the bytes
 * written, -1 with an exception, or U8P_NEED_CODEC.
 */
static Py_ssize_t
handle_run(const u8p_str *v, u8p_errors eh, Py_ssize_t i, Py_ssize_t j, uint8_t *d)
{
    Py_ssize_t k;
    switch (eh) {
    case U8P_ERR_SURROGATEPASS:
        for (k = i; k < j; k++) {
            Py_UCS4 c = cp_at(v, k);
            d[0] = (uint8_t)(0xE0 | (c >> 12));
            d[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            d[2] = (uint8_t)(0x80 | (c & 0x3F));
            d += 3;
        }
        return 3 * (j - i);
    case U8P_ERR_REPLACE:
        memset(d, '?', (size_t)(j - i));
        return j - i;
    case U8P_ERR_IGNORE:
        return 0;
    case U8P_ERR_SURROGATEESCAPE:
        for (k = i; k < j; k++) {
            Py_UCS4 c = cp_at(v, k);
            if (c < 0xDC80 || c > 0xDCFF)
                return U8P_NEED_CODEC;
            d[k - i] = (uint8_t)(c & 0xFF);
        }
        return j - i;
    case U8P_ERR_STRICT:
        raise_surrogate_error(v, i, j);
        return -1;
    default:
        return U8P_NEED_CODEC;
    }
}

Py_ssize_t
u8p_body_encode(const u8p_str *v, u8p_errors eh, uint8_t *dst)
{
    uint8_t *d = dst;
    size_t i = 0, n = (size_t)v->n;

    if (v->ascii) {
        if (n)
            memcpy(dst, v->data, n);
        return (Py_ssize_t)n;
    }
    if (v->kind == PyUnicode_1BYTE_KIND)
        return (Py_ssize_t)u8p_K->enc_ucs1((const uint8_t *)v->data, n, dst);

    for (;;) {
        size_t done = 0;
        Py_ssize_t j, r;
        if (v->kind == PyUnicode_2BYTE_KIND)
            d += u8p_K->enc_ucs2((const uint16_t *)v->data + i, n - i, d, &done);
        else
            d += u8p_K->enc_ucs4((const uint32_t *)v->data + i, n - i, d, &done);
        i += done;
        if (i >= n)
            break;
        j = surrogate_run_end(v, (Py_ssize_t)i);
        r = handle_run(v, eh, (Py_ssize_t)i, j, d);
        if (r < 0)
            return r;
        d += r;
        i = (size_t)j;
    }
    return (Py_ssize_t)(d - dst);
}

Py_ssize_t
u8p_prefixed_encode(const u8p_str *v, u8p_errors eh, u8p_prefix pf, uint8_t *dst,
                    Py_ssize_t room)
{
    Py_ssize_t pw = (Py_ssize_t)u8p_prefix_size(pf, (uint64_t)v->n), bw;
    Py_ssize_t body = u8p_body_encode_room(v, eh, dst + pw, room - pw);
    if (body < 0)
        return body;
    bw = (Py_ssize_t)u8p_prefix_size(pf, (uint64_t)body);
    if (bw != pw) /* crossed a width boundary, or "ignore" shrank it */
        memmove(dst + bw, dst + pw, (size_t)body);
    u8p_prefix_write(pf, dst, (uint64_t)body);
    return bw + body;
}

Py_ssize_t
u8p_body_encode_pass(const u8p_str *v, uint8_t *dst)
{
    size_t n = (size_t)v->n;
    if (v->ascii) {
        if (n)
            memcpy(dst, v->data, n);
        return (Py_ssize_t)n;
    }
    switch (v->kind) {
    case PyUnicode_1BYTE_KIND:
        return (Py_ssize_t)u8p_K->enc_ucs1((const uint8_t *)v->data, n, dst);
    case PyUnicode_2BYTE_KIND:
        return (Py_ssize_t)u8p_K->enc_ucs2_pass((const uint16_t *)v->data, n, dst, NULL);
    default:
        return (Py_ssize_t)u8p_K->enc_ucs4_pass((const uint32_t *)v->data, n, dst, NULL);
    }
}

Py_ssize_t
u8p_body_encode_room(const u8p_str *v, u8p_errors eh, uint8_t *dst, Py_ssize_t room)
{
    int surr = 0;
    Py_ssize_t r;
    if (v->ascii)
        return u8p_body_encode(v, eh, dst);
    if (v->kind == PyUnicode_1BYTE_KIND) {
        /* worst case 2n, <= room: no overflow */
        if (room - 2 * v->n >= U8P_ENC_ROOM)
            return (Py_ssize_t)u8p_K->enc_ucs1_room((const uint8_t *)v->data, (size_t)v->n, dst);
        return (Py_ssize_t)u8p_K->enc_ucs1((const uint8_t *)v->data, (size_t)v->n, dst);
    }
    if (v->kind == PyUnicode_2BYTE_KIND)
        r = (Py_ssize_t)u8p_K->enc_ucs2_pass((const uint16_t *)v->data, (size_t)v->n, dst, &surr);
    else
        r = (Py_ssize_t)u8p_K->enc_ucs4_pass((const uint32_t *)v->data, (size_t)v->n, dst, &surr);
    if (!surr || eh == U8P_ERR_SURROGATEPASS)
        return r;
    /* a lone surrogate: the handler decides, on the ordinary road (the
     * pass wrote no more than the worst case, which dst has room for) */
    return u8p_body_encode(v, eh, dst);
}

int
u8p_body_encode_counted(const u8p_str *v, u8p_errors eh, uint8_t *dst, Py_ssize_t expected,
                        int pass)
{
    /* a length pass that found no surrogate lets the encoder skip its
     * look-ahead for them */
    if ((pass ? u8p_body_encode_pass(v, dst) : u8p_body_encode(v, eh, dst)) != expected) {
        PyErr_SetString(PyExc_SystemError, "utf8pfx: length and encoding kernels disagree");
        return -1;
    }
    return 0;
}

PyObject *
u8p_body_via_codec(const u8p_str *v, PyObject *errors)
{
    const char *name = errors ? PyUnicode_AsUTF8(errors) : "strict";
    if (name == NULL)
        return NULL;
    return PyUnicode_AsEncodedString(v->obj, "utf-8", name);
}

/* ---- encoding="mutf-8" ------------------------------------------------- */

int
u8p_parse_encoding(PyObject *obj, u8p_encoding *out, const char *fname)
{
    if (obj == NULL || obj == Py_None) {
        *out = U8P_ENC_UTF8;
        return 0;
    }
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s encoding must be str, not %.200s", fname,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PyUnicode_CompareWithASCIIString(obj, "utf-8") == 0 ||
        PyUnicode_CompareWithASCIIString(obj, "utf8") == 0) {
        *out = U8P_ENC_UTF8;
        return 0;
    }
    if (PyUnicode_CompareWithASCIIString(obj, "mutf-8") == 0 ||
        PyUnicode_CompareWithASCIIString(obj, "mutf8") == 0) {
        *out = U8P_ENC_MUTF8;
        return 0;
    }
    PyErr_Format(PyExc_ValueError, "%s unknown encoding %R: expected 'utf-8' or 'mutf-8'",
                 fname, obj);
    return -1;
}

static const char *const prefix_names[U8P_PFX_COUNT] = {
    "varint", "zigzag", "varint+1", "u16be", "i32be", "u32le",
};

int
u8p_parse_prefix(PyObject *obj, u8p_prefix *out, const char *fname)
{
    int i;
    if (obj == NULL || obj == Py_None) {
        *out = U8P_PFX_VARINT;
        return 0;
    }
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s prefix must be str, not %.200s", fname,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    for (i = 0; i < U8P_PFX_COUNT; i++) {
        if (PyUnicode_CompareWithASCIIString(obj, prefix_names[i]) == 0) {
            *out = (u8p_prefix)i;
            return 0;
        }
    }
    PyErr_Format(PyExc_ValueError,
                 "%s unknown prefix %R: expected one of 'varint', 'zigzag', 'varint+1', "
                 "'u16be', 'i32be', 'u32le'",
                 fname, obj);
    return -1;
}

PyObject *
u8p_prefix_name(u8p_prefix p)
{
    return PyUnicode_FromString(prefix_names[p]);
}

int
u8p_prefix_too_long(u8p_prefix p, uint64_t n)
{
    PyObject *name = u8p_prefix_name(p);
    if (name != NULL) {
        PyErr_Format(PyExc_OverflowError,
                     "a body of %llu bytes is too long for prefix=%R: at most %llu bytes; "
                     "nothing was written",
                     (unsigned long long)n, name, (unsigned long long)u8p_prefix_max(p));
        Py_DECREF(name);
    }
    return -1;
}

PyObject *
u8p_encoding_name(u8p_encoding e)
{
    return PyUnicode_FromString(e == U8P_ENC_MUTF8 ? "mutf-8" : "utf-8");
}

PyObject *
u8p_getter_errors(PyObject *self, void *offset)
{
    return Py_NewRef(*(PyObject **)((char *)self + (size_t)offset));
}

PyObject *
u8p_getter_prefix(PyObject *self, void *offset)
{
    return u8p_prefix_name(*(const u8p_prefix *)((const char *)self + (size_t)offset));
}

PyObject *
u8p_getter_encoding(PyObject *self, void *offset)
{
    return u8p_encoding_name(*(const u8p_encoding *)((const char *)self + (size_t)offset));
}

/* The UTF-8 kernels then u8p_mutf8_widen, for every handler but
 * surrogateescape (its raw bytes would read as UTF-8 leads when widening). */
#define MUTF8_VIA_KERNELS(eh) ((eh) != U8P_ERR_SURROGATEESCAPE)

Py_ssize_t
u8p_mbody_length(const u8p_str *v, u8p_errors eh)
{
    size_t nsurr = 0, len;
    if (MUTF8_VIA_KERNELS(eh)) {
        Py_ssize_t r = u8p_body_length(v, eh, NULL);
        if (r < 0)
            return r;
        return r + (Py_ssize_t)u8p_mutf8_extra(v->data, v->kind, (size_t)v->n);
    }
    len = u8p_mutf8_length(v->data, v->kind, (size_t)v->n, &nsurr);
    if (nsurr == 0)
        return (Py_ssize_t)len;
    return adjust_for_surrogates(v, eh, len, nsurr);
}

Py_ssize_t
u8p_mbody_encode(const u8p_str *v, u8p_errors eh, uint8_t *dst)
{
    uint8_t *d = dst;
    size_t i = 0, n = (size_t)v->n;
    const uint8_t *base = (const uint8_t *)v->data;

    if (MUTF8_VIA_KERNELS(eh)) {
        Py_ssize_t r = u8p_body_encode(v, eh, dst);
        size_t extra;
        if (r < 0)
            return r;
        extra = u8p_mutf8_extra(v->data, v->kind, n);
        u8p_mutf8_widen(dst, (size_t)r, (size_t)r + extra);
        return r + (Py_ssize_t)extra;
    }

    for (;;) {
        size_t done = 0;
        Py_ssize_t j, r;
        d += u8p_mutf8_encode(base + i * (size_t)v->kind, v->kind, n - i, d, &done);
        i += done;
        if (i >= n)
            break;
        j = surrogate_run_end(v, (Py_ssize_t)i);
        r = handle_run(v, eh, (Py_ssize_t)i, j, d);
        if (r < 0)
            return r;
        d += r;
        i = (size_t)j;
    }
    return (Py_ssize_t)(d - dst);
}

/* A growable byte buffer for the generic-handler path. */
typedef struct {
    uint8_t *p;
    size_t len, cap;
} gbuf;

static uint8_t *
gbuf_room(gbuf *b, size_t extra)
{
    if (extra > b->cap - b->len) {
        size_t ncap = b->cap * 2 + extra + 64;
        uint8_t *np = (uint8_t *)PyMem_Realloc(b->p, ncap);
        if (np == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        b->p = np;
        b->cap = ncap;
    }
    return b->p + b->len;
}

PyObject *
u8p_mbody_via_handler(const u8p_str *v, PyObject *errors)
{
    gbuf b = {NULL, 0, 0};
    PyObject *handler = NULL, *res = NULL;
    const char *name = errors ? PyUnicode_AsUTF8(errors) : "strict";
    const uint8_t *base = (const uint8_t *)v->data;
    Py_ssize_t i = 0, n = v->n;
    int escape;

    if (name == NULL || (handler = PyCodec_LookupError(name)) == NULL)
        return NULL;
    escape = strcmp(name, "surrogateescape") == 0;
    for (;;) {
        size_t done = 0;
        Py_ssize_t j, newpos;
        PyObject *exc, *r, *rep;
        uint8_t *d = gbuf_room(&b, (size_t)(n - i) * 6);
        if (d == NULL)
            goto done;
        b.len += u8p_mutf8_encode(base + (size_t)i * (size_t)v->kind, v->kind,
                                  (size_t)(n - i), d, &done);
        i += (Py_ssize_t)done;
        if (i >= n)
            break;
        j = surrogate_run_end(v, i);
        if (escape) {
            /* as CPython's UTF-8 encoder: the run's U+DC80..U+DCFF head is
             * written as its low bytes, the handler gets the rest */
            Py_UCS4 c;
            while (i < j && (c = cp_at(v, i)) >= 0xDC80 && c <= 0xDCFF) {
                b.p[b.len++] = (uint8_t)(c & 0xFF);
                i++;
            }
            if (i == j)
                continue;
        }
        exc = PyObject_CallFunction(PyExc_UnicodeEncodeError, "sOnns", "utf-8", v->obj, i, j,
                                    "surrogates not allowed");
        if (exc == NULL)
            goto done;
        r = PyObject_CallOneArg(handler, exc);
        Py_DECREF(exc);
        if (r == NULL)
            goto done;
        if ((rep = u8p_handler_result(r, 1, n, &newpos)) == NULL) {
            Py_DECREF(r);
            goto done;
        }
        if (PyBytes_Check(rep)) {
            Py_ssize_t k = PyBytes_GET_SIZE(rep);
            if ((d = gbuf_room(&b, (size_t)k)) == NULL) {
                Py_DECREF(r);
                goto done;
            }
            memcpy(d, PyBytes_AS_STRING(rep), (size_t)k);
            b.len += (size_t)k;
        }
        else {
            /* as CPython's UTF-8 encoder: a str replacement must be ASCII */
            Py_ssize_t k = PyUnicode_GET_LENGTH(rep);
            if (!PyUnicode_IS_ASCII(rep)) {
                Py_DECREF(r);
                exc = PyObject_CallFunction(PyExc_UnicodeEncodeError, "sOnns", "utf-8",
                                            v->obj, i, j, "surrogates not allowed");
                if (exc != NULL) {
                    PyErr_SetObject(PyExc_UnicodeEncodeError, exc);
                    Py_DECREF(exc);
                }
                goto done;
            }
            if ((d = gbuf_room(&b, (size_t)k * 2)) == NULL) {
                Py_DECREF(r);
                goto done;
            }
            b.len += u8p_mutf8_encode(PyUnicode_DATA(rep), 1, (size_t)k, d, &done);
        }
        Py_DECREF(r);
        i = newpos;
    }
    res = PyBytes_FromStringAndSize((const char *)(b.p ? b.p : (const uint8_t *)""),
                                    (Py_ssize_t)b.len);
done:
    PyMem_Free(b.p);
    Py_DECREF(handler);
    return res;
}

PyObject *
u8p_body_bytes(const u8p_str *v, u8p_errors eh, PyObject *errors, u8p_encoding enc)
{
    int m = enc == U8P_ENC_MUTF8 && u8p_mutf8_differs(v), pass = 0;
    Py_ssize_t body = m ? u8p_mbody_length(v, eh) : u8p_body_length(v, eh, &pass);
    PyObject *out;
    if (body == U8P_NEED_CODEC)
        return m ? u8p_mbody_via_handler(v, errors) : u8p_body_via_codec(v, errors);
    if (body < 0)
        return NULL;
    out = PyBytes_FromStringAndSize(NULL, body);
    if (out == NULL)
        return NULL;
    if (m) {
        if (u8p_mbody_encode(v, eh, (uint8_t *)PyBytes_AS_STRING(out)) != body) {
            Py_DECREF(out);
            PyErr_SetString(PyExc_SystemError, "utf8pfx: MUTF-8 length and encoding disagree");
            return NULL;
        }
    }
    else if (u8p_body_encode_counted(v, eh, (uint8_t *)PyBytes_AS_STRING(out), body, pass) < 0) {
        Py_DECREF(out);
        return NULL;
    }
    return out;
}
