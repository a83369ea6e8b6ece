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

#endif /* UTF8PFX_WRITER_H */
