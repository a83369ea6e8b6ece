/*
 * str -> UTF-8 body, shared by BufferWriter and the module functions.
 *
 * The body is the UTF-8 of the str under an error handler, without prefix.
 * Handlers strict, surrogatepass, surrogateescape, replace and ignore are
 * done here in C; any other handler (and surrogateescape on a surrogate it
 * cannot escape) makes these functions return U8P_NEED_CODEC so that the
 * caller hands the str to CPython's codec.  That only happens for a str that
 * contains a lone surrogate: surrogate-free text never leaves the kernels.
 */
#ifndef UTF8PFX_ENCODE_H
#define UTF8PFX_ENCODE_H

#include "utf8pfx.h"

#define U8P_NEED_CODEC (-2)

/* A borrowed view of a str's PEP 393 storage. */
typedef struct {
    PyObject *obj;  /* the str (borrowed) */
    const void *data;
    Py_ssize_t n;   /* code points */
    int kind;       /* PyUnicode_1BYTE_KIND, 2BYTE or 4BYTE */
    int ascii;      /* all code points < 0x80 */
} u8p_str;

/*
 * Fills *v from obj.  A non-str raises TypeError "<what> must be str, not T"
 * (`what` names the argument, e.g. "write_string() argument").  Inline: it
 * is on every call's path.
 */
static inline int
u8p_str_view(PyObject *obj, u8p_str *v, const char *what)
{
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be str, not %.200s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(obj) < 0)
        return -1;
#endif
    v->obj = obj;
    v->n = PyUnicode_GET_LENGTH(obj);
    if (PyUnicode_IS_COMPACT_ASCII(obj)) {
        v->data = (const void *)((PyASCIIObject *)obj + 1);
        v->kind = PyUnicode_1BYTE_KIND;
        v->ascii = 1;
        return 0;
    }
    v->data = PyUnicode_DATA(obj);
    v->kind = (int)PyUnicode_KIND(obj);
    v->ascii = PyUnicode_IS_ASCII(obj) ? 1 : 0;
    return 0;
}

/* Upper bound of body bytes per code point for the C-handled handlers. */
static inline Py_ssize_t
u8p_max_bytes_per_cp(const u8p_str *v)
{
    return v->ascii ? 1 : (v->kind == PyUnicode_1BYTE_KIND ? 2 : v->kind == PyUnicode_2BYTE_KIND ? 3 : 4);
}

/*
 * Exact body length without encoding; -1 with an exception (strict on a
 * surrogate: the UnicodeEncodeError CPython raises), or U8P_NEED_CODEC.
 */
Py_ssize_t u8p_body_length(const u8p_str *v, u8p_errors eh);

/*
 * Encodes the body into dst, which has room for n * u8p_max_bytes_per_cp;
 * returns the bytes written, -1 with an exception, or U8P_NEED_CODEC.
 * On failure dst may hold garbage: callers only commit on success.
 */
Py_ssize_t u8p_body_encode(const u8p_str *v, u8p_errors eh, uint8_t *dst);

/*
 * Encodes a body whose length u8p_body_length gave as `expected` (so no
 * error can arise); returns 0, or -1 with SystemError if the kernels'
 * length and encoding disagree (a bug, reported rather than written).
 */
int u8p_body_encode_counted(const u8p_str *v, u8p_errors eh, uint8_t *dst, Py_ssize_t expected);

/* The body through CPython's codec: a new bytes object, NULL on error. */
PyObject *u8p_body_via_codec(const u8p_str *v, PyObject *errors);

#endif /* UTF8PFX_ENCODE_H */
