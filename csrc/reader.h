/*
 * BufferReader's layout and the parse context of one read, shared by the
 * glue files that read prefixed records (reader.c; further consumers beside
 * it).  The rules for hostile input are documented at the top of reader.c.
 */
#ifndef UTF8PFX_READER_H
#define UTF8PFX_READER_H

#include "utf8pfx.h"

typedef struct {
    PyObject_HEAD
    Py_buffer view; /* valid iff is_open */
    const uint8_t *data;
    Py_ssize_t len;
    Py_ssize_t pos;
    int is_open;
    int strict_vint;
    int busy; /* reads in progress (re-entrancy guard for close) */
    u8p_errors eh;
    PyObject *errors; /* handler name (str) */
} ReaderObject;

typedef struct {
    const uint8_t *data;
    Py_ssize_t len;
    u8p_errors eh;
    PyObject *errors; /* may be NULL for strict */
    int strict_vint;
} rd_ctx;

#endif /* UTF8PFX_READER_H */
