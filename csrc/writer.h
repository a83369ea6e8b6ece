/*
 * BufferWriter's layout and buffer management, shared by the glue files that
 * append to a writer (writer.c; further producers beside it).  The states
 * are documented at the top of writer.c.
 */
#ifndef UTF8PFX_WRITER_H
#define UTF8PFX_WRITER_H

#include "encode.h"
#include "objlock.h"

typedef struct {
    PyObject_HEAD
    uint8_t *buf;
    Py_ssize_t len;
    Py_ssize_t cap;
    Py_ssize_t exports;
    int busy;
    u8p_errors eh;
    PyObject *errors; /* the handler name (str) */
    u8p_prefix prefix;  /* the wire-format preset of every prefixed write */
    u8p_encoding enc;   /* utf-8 or mutf-8 */
    u8p_objlock nogil;  /* held by a write_string running without the GIL */
    PyObject *const *ints; /* the module state's ints 0..128 (U8P_INTS) */
} WriterObject;

/* Refuses a change to the writer from code that write_strings calls. */
static inline int
u8p_writer_check_idle(WriterObject *w)
{
    if (w->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "BufferWriter is in the middle of write_strings(): it cannot be "
                        "changed from the iterator or error handler that call runs");
        return -1;
    }
    return 0;
}

int u8p_writer_grow(WriterObject *w, Py_ssize_t extra);

/* Ensures room for `extra` more bytes after len. */
static inline int
u8p_writer_reserve(WriterObject *w, Py_ssize_t extra)
{
    if (extra <= w->cap - w->len)
        return 0;
    return u8p_writer_grow(w, extra);
}

/*
 * Appending records in the writer's preset (prefix= and encoding=), for any
 * glue file (e.g. a columnar producer).  Each returns the bytes appended or
 * -1 with an exception, and leaves the writer exactly as it was on failure;
 * neither checks u8p_writer_check_idle (the caller does, once per call).
 *   u8p_writer_put_str(w, obj, what)   one string: prefix + body.  obj None
 *       writes the null marker under "varint+1" (TypeError otherwise);
 *       `what` names the argument in a TypeError ("" for an exact str).
 *   u8p_writer_put_body(w, p, n)       prefix(n) + n bytes already encoded.
 *   u8p_writer_put_null(w)             the null marker (ValueError if the
 *       preset has none).
 * A body too long for the preset's width raises OverflowError.
 */
Py_ssize_t u8p_writer_put_str(WriterObject *w, PyObject *obj, const char *what);
Py_ssize_t u8p_writer_put_body(WriterObject *w, const void *p, Py_ssize_t n);
Py_ssize_t u8p_writer_put_null(WriterObject *w);

/* ---- Arrow in (arrow_in.c) ---- */

/* 1 if obj's type has __arrow_c_array__ or __arrow_c_stream__, 0 if not,
 * -1 with an exception if the lookup failed. */
int u8p_is_arrow_exporter(PyObject *obj);

/* BufferWriter.write_arrow(array, /, *, nulls=None). */
PyObject *u8p_writer_write_arrow(WriterObject *w, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames);

/* write_arrow's body, nulls = 0 ("error"), 1 ("skip"), 2 ("empty"), 3 ("null":
 * the preset's marker) or -1 (the default: "null" under varint+1, else
 * "error"). */
PyObject *u8p_writer_write_arrow_obj(WriterObject *w, PyObject *obj, int nulls);

#endif /* UTF8PFX_WRITER_H */
