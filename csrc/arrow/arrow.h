/*
 * arrow: the Arrow component's public header (Arrow in: write_arrow and
 * write_strings of an Arrow column; Arrow out: ArrowUtf8Array,
 * read_strings_arrow, decode_arrow).  It sits above the writer and the
 * reader and reaches them only through their public headers; they reach
 * it only through what module init assembles from this header: the
 * methods it adds to their types and the hook write_strings calls.
 */
#ifndef UTF8PFX_ARROW_PUBLIC_H
#define UTF8PFX_ARROW_PUBLIC_H

#include "core/core.h"
#include "reader/reader.h"

/* Appends write_arrow to BufferWriter's method list `dst`. */
int u8p_arrow_writer_methods(PyMethodDef *dst);
/* Appends read_strings_arrow to BufferReader's method list `dst`. */
int u8p_arrow_reader_methods(PyMethodDef *dst);
/* The u8p_arrow_in_hook (core.h) that write_strings calls with an object
 * that is not a list or tuple: writes it if its type exports Arrow data. */
int u8p_arrow_in_hook_fn(PyObject *writer, PyObject *obj, PyObject **result);
/* Arrow out for the components above the reader (StreamReader's
 * batches_arrow): the next `limit` (>= 0) records at *pos of c as an
 * ArrowUtf8Array, *pos moved past them; NULL with the exception
 * read_strings_arrow raises (a decode error's `row` counts from *pos). */
PyObject *u8p_arrow_read(const u8p_state *st, const rd_ctx *c, Py_ssize_t *pos,
                         Py_ssize_t limit);
/* Creates ArrowUtf8Array and adds decode_arrow() and the Arrow testing
 * hook. */
int u8p_arrow_exec(PyObject *module, u8p_state *st);

#endif /* UTF8PFX_ARROW_PUBLIC_H */
