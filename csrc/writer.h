/*
 * BufferWriter's layout and buffer management, shared by the glue files that
 * append to a writer (writer.c; further producers beside it).  The states
 * are documented at the top of writer.c.
 */
#ifndef UTF8PFX_WRITER_H
#define UTF8PFX_WRITER_H

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

/* ---- Arrow in (arrow_in.c) ---- */

/* Appends one prefixed str (what write_string does); `what` names the item
 * in a TypeError.  Returns the bytes appended, or -1. */
Py_ssize_t u8p_writer_put_str(WriterObject *w, PyObject *obj, const char *what);

/* True if obj's type has __arrow_c_array__ or __arrow_c_stream__. */
int u8p_is_arrow_exporter(PyObject *obj);

/* BufferWriter.write_arrow(array, /, *, nulls="error"). */
PyObject *u8p_writer_write_arrow(WriterObject *w, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames);

/* write_arrow's body, nulls = 0 ("error"), 1 ("skip") or 2 ("empty"). */
PyObject *u8p_writer_write_arrow_obj(WriterObject *w, PyObject *obj, int nulls);

#endif /* UTF8PFX_WRITER_H */
