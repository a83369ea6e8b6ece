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

/* ---- hooks for further consumers (arrow_out.c) ---- */

/* One length prefix and its payload at *pos (the reader's record parser):
 * payload [*payload, *payload + *plen); *pos moves past both on success;
 * ValueError naming the offset otherwise.  `what`: "string" or "bytes". */
int u8p_rd_record(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t *payload, Py_ssize_t *plen,
                  const char *what);

/* Parses the (n=-1) argument of read_strings-like methods into *limit. */
int u8p_parse_read_n(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                     const char *fname, Py_ssize_t *limit);

/* ValueError if the reader is closed. */
int u8p_reader_check(ReaderObject *self);

/* BufferReader.read_strings_arrow(n=-1). */
PyObject *u8p_reader_read_strings_arrow(ReaderObject *self, PyObject *const *args,
                                        Py_ssize_t nargs, PyObject *kwnames);

#endif /* UTF8PFX_READER_H */
