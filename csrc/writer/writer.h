/*
 * writer: BufferWriter's public header.  Its layout and the functions that
 * append records, for the components above it that append to a writer
 * (Arrow in), and its part of module assembly.  The buffer states are
 * documented at the top of writer.c.
 */
#ifndef UTF8PFX_WRITER_H
#define UTF8PFX_WRITER_H

#include "core/encode.h"
#include "core/objlock.h"

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
    u8p_arrow_in_hook arrow_in; /* the module state's, for write_strings */
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

/* ---- module assembly (module.c) ---- */

/* Appends BufferWriter's own methods to the method list `dst` (the
 * build of write_string this CPU runs, recorded in st). */
int u8p_writer_methods(PyMethodDef *dst, u8p_state *st);
/* Creates BufferWriter with the assembled st->writer_methods, and adds
 * the writer's testing hooks. */
int u8p_writer_exec(PyObject *module, u8p_state *st);
/* The entry of method `name` in the assembled list (for a component above
 * that calls it on a writer: StreamWriter), or NULL. */
const PyMethodDef *u8p_writer_method(const u8p_state *st, const char *name);

#endif /* UTF8PFX_WRITER_H */
