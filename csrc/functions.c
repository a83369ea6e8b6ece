/*
 * Module-level encoding functions: encode(), utf8_length(), vint_size().
 * (decode() and decode_all() live beside BufferReader in reader.c.)
 */
#include "functions.h"
#include "core/encode.h"

/* prefix(n) + body as a new bytes object. */
static PyObject *
prefixed_bytes(u8p_prefix pf, const void *body, Py_ssize_t n)
{
    Py_ssize_t pw;
    PyObject *out;
    if ((uint64_t)n > u8p_prefix_max(pf)) {
        u8p_prefix_too_long(pf, (uint64_t)n);
        return NULL;
    }
    pw = (Py_ssize_t)u8p_prefix_size(pf, (uint64_t)n);
    out = PyBytes_FromStringAndSize(NULL, pw + n);
    if (out != NULL) {
        u8p_prefix_write(pf, (uint8_t *)PyBytes_AS_STRING(out), (uint64_t)n);
        if (n)
            memcpy(PyBytes_AS_STRING(out) + pw, body, (size_t)n);
    }
    return out;
}

static PyObject *
prefixed_from(u8p_prefix pf, PyObject *b)
{
    PyObject *out;
    if (b == NULL)
        return NULL;
    out = prefixed_bytes(pf, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b));
    Py_DECREF(b);
    return out;
}

/* encode(): UCS4 strs whose UTF-8 may take up to this many bytes are
 * encoded in one pass into a worst-case buffer; longer ones are counted
 * first */
#define U8P_ENCODE_ONE_PASS_MAX ((Py_ssize_t)1 << 20)

/* A bytes object for a record of `body` bytes, its prefix written (*pw: the
 * prefix's width); OverflowError when the preset cannot carry the length. */
static PyObject *
new_prefixed(u8p_prefix pf, Py_ssize_t body, Py_ssize_t *pw)
{
    PyObject *out;
    if ((uint64_t)body > u8p_prefix_max(pf)) {
        u8p_prefix_too_long(pf, (uint64_t)body);
        return NULL;
    }
    *pw = (Py_ssize_t)u8p_prefix_size(pf, (uint64_t)body);
    out = PyBytes_FromStringAndSize(NULL, *pw + body);
    if (out != NULL)
        u8p_prefix_write(pf, (uint8_t *)PyBytes_AS_STRING(out), (uint64_t)body);
    return out;
}

/* One prefixed string as a new bytes object, sized exactly (UCS4: sized
 * for the worst case, then shrunk to it). */
static PyObject *
mod_encode(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *s, *errors, *prefix, *encoding, *out;
    u8p_errors eh;
    u8p_prefix pf;
    u8p_encoding enc;
    u8p_str v;
    Py_ssize_t body, pw;
    uint8_t tmp[512];
    (void)module;

    if (u8p_parse_arg_opts(args, nargs, kwnames, "encode", &s, &errors, &prefix, &encoding) <
            0 ||
        u8p_parse_errors(errors, &eh, "encode()") < 0 ||
        u8p_parse_prefix(prefix, &pf, "encode()") < 0 ||
        u8p_parse_encoding(encoding, &enc, "encode()") < 0)
        return NULL;
    if (s == Py_None && u8p_prefix_has_null(pf)) {
        uint8_t z[U8P_PREFIX_MAX_BYTES];
        size_t k = u8p_prefix_write_null(pf, z);
        return PyBytes_FromStringAndSize((const char *)z, (Py_ssize_t)k);
    }
    if (u8p_str_view(s, &v, "encode() argument") < 0)
        return NULL;
    if (enc == U8P_ENC_MUTF8 && u8p_mutf8_differs(&v))
        return prefixed_from(pf, u8p_body_bytes(&v, eh, errors, enc));

    /* 1 MiB or more, surrogate-free: counted and encoded without the GIL
     * (the str is held by the caller, the bytes object is not yet shared) */
    if (u8p_str_is_big(&v)) {
        size_t nsurr = 0, len;
        Py_ssize_t got;
        if (v.ascii) {
            len = (size_t)v.n;
        }
        else {
            Py_BEGIN_ALLOW_THREADS
            len = u8p_body_length_nogil(&v, &nsurr);
            Py_END_ALLOW_THREADS
        }
        if (nsurr == 0) {
            body = (Py_ssize_t)len;
            if ((out = new_prefixed(pf, body, &pw)) == NULL)
                return NULL;
            {
                uint8_t *dst = (uint8_t *)PyBytes_AS_STRING(out) + pw;
                Py_BEGIN_ALLOW_THREADS
                got = u8p_body_encode_pass(&v, dst);
                Py_END_ALLOW_THREADS
            }
            if (got != body) {
                Py_DECREF(out);
                PyErr_SetString(PyExc_SystemError,
                                "utf8pfx: length and encoding kernels disagree");
                return NULL;
            }
            return out;
        }
        /* a surrogate: the handler decides, with the GIL (below) */
    }
    /* short strings: one pass into the stack, then one exact copy */
    if (v.n <= (Py_ssize_t)sizeof tmp / 4 &&
        v.n * u8p_max_utf8(v.ascii, v.kind) <= (Py_ssize_t)sizeof tmp) {
        body = u8p_body_encode_room(&v, eh, tmp, (Py_ssize_t)sizeof tmp);
        if (body >= 0)
            return prefixed_bytes(pf, tmp, body);
    }
    else if (v.kind == PyUnicode_4BYTE_KIND && v.n <= U8P_ENCODE_ONE_PASS_MAX / 4 &&
             (uint64_t)(v.n * 4) <= u8p_prefix_max(pf)) {
        /* UCS4, up to 1 MiB of worst case: one pass into a bytes object
         * sized for the worst case, shrunk in place afterwards (CPython's
         * own encoder does the same); the body goes behind the prefix width
         * of the fewest bytes it can take and moves up if it needs a wider
         * one.  Only UCS4: there counting costs half as much as encoding,
         * so one pass saves; for UCS1 and UCS2 counting is cheap and the
         * 2-3x larger worst-case allocation costs more than it saves. */
        Py_ssize_t worst = v.n * 4; /* UCS4: 4 bytes a code point at most */
        out = PyBytes_FromStringAndSize(
            NULL, (Py_ssize_t)u8p_prefix_size(pf, (uint64_t)worst) + worst);
        if (out == NULL)
            return NULL;
        body = u8p_prefixed_encode(&v, eh, pf, (uint8_t *)PyBytes_AS_STRING(out),
                                   PyBytes_GET_SIZE(out));
        if (body < 0) {
            Py_DECREF(out);
        }
        else {
            if (_PyBytes_Resize(&out, body) < 0)
                return NULL;
            return out;
        }
    }
    else {
        int pass;
        body = u8p_body_length(&v, eh, &pass);
        if (body >= 0) {
            if ((out = new_prefixed(pf, body, &pw)) == NULL)
                return NULL;
            if (u8p_body_encode_counted(&v, eh, (uint8_t *)PyBytes_AS_STRING(out) + pw, body,
                                        pass) < 0) {
                Py_DECREF(out);
                return NULL;
            }
            return out;
        }
    }
    if (body != U8P_NEED_CODEC)
        return NULL;
    return prefixed_from(pf, u8p_body_via_codec(&v, errors));
}

static PyObject *
mod_utf8_length(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *s, *errors, *b;
    u8p_errors eh;
    u8p_str v;
    Py_ssize_t body;
    (void)module;

    if (u8p_parse_arg_errors(args, nargs, kwnames, "utf8_length", &s, &errors) < 0 ||
        u8p_parse_errors(errors, &eh, "utf8_length()") < 0 ||
        u8p_str_view(s, &v, "utf8_length() argument") < 0)
        return NULL;
    body = u8p_body_length(&v, eh, NULL);
    if (body >= 0)
        return PyLong_FromSsize_t(body);
    if (body != U8P_NEED_CODEC)
        return NULL;
    b = u8p_body_via_codec(&v, errors);
    if (b == NULL)
        return NULL;
    body = PyBytes_GET_SIZE(b);
    Py_DECREF(b);
    return PyLong_FromSsize_t(body);
}

static PyObject *
mod_vint_size(PyObject *module, PyObject *arg)
{
    uint64_t n;
    (void)module;
    if (u8p_parse_u64(arg, &n, "vint_size") < 0)
        return NULL;
    return PyLong_FromSize_t(u8p_vint_size(n));
}

static PyMethodDef encode_functions[] = {
    {"encode", (PyCFunction)(void (*)(void))mod_encode, METH_FASTCALL | METH_KEYWORDS,
     "encode(s, /, errors='strict', *, prefix='varint', encoding='utf-8')\n--\n\n"
     "prefix(len(e)) + e, e = s.encode('utf-8', errors) (or its MUTF-8), as bytes."},
    {"utf8_length", (PyCFunction)(void (*)(void))mod_utf8_length,
     METH_FASTCALL | METH_KEYWORDS,
     "utf8_length(s, /, errors='strict')\n--\n\n"
     "len(s.encode('utf-8', errors)), computed without encoding."},
    {"vint_size", (PyCFunction)mod_vint_size, METH_O,
     "vint_size(n, /)\n--\n\nBytes in the unsigned LEB128 VInt of n (0 <= n < 2**64)."},
    {NULL, NULL, 0, NULL},
};

int
u8p_functions_exec(PyObject *module)
{
    return PyModule_AddFunctions(module, encode_functions);
}
