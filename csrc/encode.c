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

Py_ssize_t
u8p_body_length(const u8p_str *v, u8p_errors eh)
{
    size_t len, nsurr = 0;
    Py_ssize_t s;

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
    /* len counted each surrogate as 3 bytes (surrogatepass) */
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

int
u8p_body_encode_counted(const u8p_str *v, u8p_errors eh, uint8_t *dst, Py_ssize_t expected)
{
    if (u8p_body_encode(v, eh, dst) != expected) {
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
