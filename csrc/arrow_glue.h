/*
 * Arrow in, Arrow out (shared by arrow_in.c and arrow_out.c): columns of strings to prefixed records and back
 * without a Python str per value, through the Arrow C data interface
 * (arrow.h: the published ABI, read directly; no run-time dependency).
 *
 * In:  BufferWriter.write_arrow(array, /, *, nulls="error") takes any object
 *      with __arrow_c_array__ (one array) or __arrow_c_stream__ (chunks) of
 *      type utf8 ("u"), large_utf8 ("U") or string_view ("vu"), and writes
 *      each value's prefix and bytes.  write_strings() hands such objects
 *      (other than list/tuple) here with nulls="error".
 *        - All or nothing: every check runs before a byte is written; a
 *          stream's chunks are written one by one and the writer's length
 *          goes back to where the call started on any failure.
 *        - Producers are not trusted: the structure (format, n_buffers,
 *          buffers present, length/offset/null_count, offsets non-negative
 *          and non-decreasing, string_view buffer indices and ranges against
 *          the variadic buffer sizes) is checked first, with errors naming
 *          the row; the UTF-8 of every non-null value is validated (one scan
 *          over a contiguous values range plus a char-boundary test at each
 *          row's two ends; per row for string_view and on failure).  The C
 *          data interface carries no buffer sizes for utf8/large_utf8, so an
 *          offset past the end of a values buffer that the producer really
 *          allocated cannot be seen; everything the interface does carry is
 *          checked.
 *        - Invalid UTF-8 under errors="strict" raises the UnicodeDecodeError
 *          that value.decode("utf-8") raises, with `row` (the row in the
 *          whole input, chunks counted) and `data_offset` (byte offset of the
 *          bad byte in the producer's values buffer; for string_view, in the
 *          value) attributes and, on 3.11+, a note.  Another handler is
 *          applied as write_string(value.decode("utf-8", errors)) would,
 *          for that value only.
 *        - Every struct moved out of a capsule is released exactly once, on
 *          every path (arrays after their chunk is written or refused).
 * Out: BufferReader.read_strings_arrow(n=-1) and decode_arrow(data, /,
 *      errors="strict") return an ArrowUtf8Array: offsets and values built
 *      straight from the records (lengths walked and bounds-checked before
 *      anything is allocated, payloads copied once, the values validated as
 *      one range), exported by __arrow_c_array__ / __arrow_c_stream__ /
 *      __arrow_c_schema__ as utf8, or large_utf8 when the values pass
 *      2**31 - 1 bytes.  The buffers live in a block with an atomic
 *      reference count (the object holds one reference, each exported array
 *      one), freed with free() by whoever drops the last one: a consumer may
 *      release from any thread, without the GIL.
 *
 * Prefix formats: every record written goes through aw_record_size /
 * aw_put_record (and a null through aw_null_size / aw_put_null), and every
 * record read through ar_record ("prefix: the one place" below);
 * wire-format presets switch there and nowhere else.
 */
#ifndef UTF8PFX_ARROW_GLUE_H
#define UTF8PFX_ARROW_GLUE_H

#include <stdlib.h>
#include <string.h>

#include "arrow.h"
#include "reader.h"
#include "writer.h"

/* =============================================== prefix: the one place */

/* Bytes one record of an n-byte value takes. */
static inline Py_ssize_t
aw_record_size(Py_ssize_t n)
{
    return (Py_ssize_t)u8p_vint_size((uint64_t)n) + n;
}

/* Writes one record (prefix + value) at dst; returns the end.  When
 * `slack` the caller guarantees 32 readable bytes at src and 32 writable
 * bytes past the record, so short values are copied in one fixed move. */
static inline uint8_t *
aw_put_record(uint8_t *dst, const uint8_t *src, Py_ssize_t n, int slack)
{
    if (n < 0x80) {
        *dst++ = (uint8_t)n;
        if (slack && n <= 32) {
            memcpy(dst, src, 32);
            return dst + n;
        }
    }
    else {
        dst += u8p_vint_write(dst, (uint64_t)n);
    }
    if (n)
        memcpy(dst, src, (size_t)n);
    return dst + n;
}

/* True when every byte of an n-byte value's prefix is below 0x80 (ASCII):
 * the fused validation of write_arrow relies on it (see seg_put). */
static inline int
aw_prefix_ascii(Py_ssize_t n)
{
    return n < 0x80;
}

/* The record of a null under nulls="empty" (a null marker, with a preset
 * that has one, goes here too). */
static inline Py_ssize_t
aw_null_size(void)
{
    return 1;
}

static inline uint8_t *
aw_put_null(uint8_t *dst)
{
    *dst++ = 0;
    return dst;
}

/* Is the null record ASCII (as aw_prefix_ascii)? */
static inline int
aw_null_ascii(void)
{
    return 1;
}

/* Parses one record at *pos: payload [*off, *off + *n); *pos moves past it.
 * Raises ValueError naming the offset and returns -1 on a bad prefix. */
static inline int
ar_record(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t *off, Py_ssize_t *n)
{
    Py_ssize_t p = *pos;
    if (p < c->len && c->data[p] < 0x80 && c->data[p] < c->len - p) {
        *off = p + 1;
        *n = c->data[p];
        *pos = p + 1 + *n;
        return 0;
    }
    return u8p_rd_record(c, pos, off, n, "string") < 0 ? -1 : 0;
}

/* ================================================== shared error helpers */

/* Sets attributes (name=value pairs of Py_ssize_t) and a note on an
 * exception object; best effort, like the reader's annotation. */
static inline void
annotate(PyObject *exc, const char *note, int npairs, const char *const *names,
         const Py_ssize_t *values)
{
    int i;
    for (i = 0; i < npairs; i++) {
        PyObject *v = PyLong_FromSsize_t(values[i]);
        if (v == NULL || PyObject_SetAttrString(exc, names[i], v) < 0) {
            Py_XDECREF(v);
            PyErr_Clear();
            return;
        }
        Py_DECREF(v);
    }
#if PY_VERSION_HEX >= 0x030B0000
    {
        PyObject *r = PyObject_CallMethod(exc, "add_note", "s", note);
        if (r == NULL)
            PyErr_Clear();
        Py_XDECREF(r);
    }
#else
    (void)note;
#endif
}

/* Raises CPython's UnicodeDecodeError for an invalid payload p[0:n] found
 * by `st`/`r`, annotated as described by `note` and the attribute pairs. */
static inline void
raise_decode_error(const uint8_t *p, Py_ssize_t n, const u8p_scan_result *r,
                   u8p_dec_status st, const char *note, int npairs,
                   const char *const *names, const Py_ssize_t *values)
{
    PyObject *exc = PyUnicodeDecodeError_Create("utf-8", (const char *)p, n,
                                                (Py_ssize_t)r->err_start,
                                                (Py_ssize_t)r->err_end, u8p_dec_reason(st));
    if (exc == NULL)
        return;
    annotate(exc, note, npairs, names, values);
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
}

/* UTF-8 check of one value: 1 valid, 0 invalid (*st, *r filled). */
static inline int
value_ok(const uint8_t *p, Py_ssize_t n, int allow_surrogates, u8p_dec_status *st,
         u8p_scan_result *r)
{
    if (n <= 16) {
        uint8_t acc = 0;
        Py_ssize_t i;
        for (i = 0; i < n; i++)
            acc |= p[i];
        if (acc < 0x80)
            return 1;
    }
    *st = u8p_D->scan(p, (size_t)n, allow_surrogates, r);
    return *st == U8P_DEC_OK;
}

/* A producer's release callback may run Python code (a producer written
 * over ctypes, cffi): call it with any pending exception set aside. */
typedef struct {
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exc;
#else
    PyObject *type, *value, *tb;
#endif
} err_stash;

static inline void
stash_take(err_stash *x)
{
#if PY_VERSION_HEX >= 0x030C0000
    x->exc = PyErr_GetRaisedException();
#else
    PyErr_Fetch(&x->type, &x->value, &x->tb);
#endif
}

static inline void
stash_put(err_stash *x)
{
#if PY_VERSION_HEX >= 0x030C0000
    if (x->exc != NULL) {
        PyErr_Clear();
        PyErr_SetRaisedException(x->exc);
    }
#else
    if (x->type != NULL) {
        PyErr_Clear();
        PyErr_Restore(x->type, x->value, x->tb);
    }
#endif
}

static inline void
stash_drop(err_stash *x)
{
#if PY_VERSION_HEX >= 0x030C0000
    Py_XDECREF(x->exc);
#else
    Py_XDECREF(x->type);
    Py_XDECREF(x->value);
    Py_XDECREF(x->tb);
#endif
}

/* arrow_in.c: interned names for the exporter check; called once by the
 * module's exec (arrow_out.c). */
int u8p_arrow_in_init(void);

#endif /* UTF8PFX_ARROW_GLUE_H */
