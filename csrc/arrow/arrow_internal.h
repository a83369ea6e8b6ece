/*
 * Private to csrc/arrow (arrow_in.c, arrow_out.c).  Arrow in, Arrow out: columns of strings to prefixed records and back
 * without a Python str per value, through the Arrow C data interface
 * (arrow.h: the published ABI, read directly; no run-time dependency).
 *
 * In:  BufferWriter.write_arrow(array, /, *, nulls=None) takes any object
 *      with __arrow_c_array__ (one array) or __arrow_c_stream__ (chunks) of
 *      type utf8 ("u"), large_utf8 ("U") or string_view ("vu"), and writes
 *      each value's prefix and bytes in the writer's preset (nulls=None:
 *      varint+1's null marker under that preset, else "error"; MUTF-8
 *      writers convert row by row).  write_strings() hands such objects
 *      (other than list/tuple) here with the default.
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
 *      errors="strict", *, prefix=, encoding=) return an ArrowUtf8Array
 *      (varint+1 null markers as nulls; MUTF-8 narrowed to UTF-8 row by
 *      row): offsets and values built
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
#ifndef UTF8PFX_ARROW_INTERNAL_H
#define UTF8PFX_ARROW_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include "arrow.h"
#include "arrow_abi.h"
#include "reader/reader.h"
#include "writer/writer.h"

/* A loop body specialised by a constant argument (the preset, the
 * encoding) is forced inline (U8P_ALWAYS_INLINE), so each call site gets
 * its own loop; each specialisation is its own function (U8P_NOINLINE: its
 * own registers). */

/* =============================================== prefix: the one place */

/*
 * Every record goes through these, in the writer's / reader's preset
 * (kernels/prefix.h); "varint" is tested first everywhere, so the default
 * preset keeps its one-byte moves.  `n` is at most u8p_prefix_max(pf) (the
 * callers check it and raise OverflowError naming the row).
 */

/* How write_arrow writes an Arrow null: refuse it, leave it out, write an
 * empty string, or write the preset's null marker (varint+1's 0). */
typedef enum { NULLS_ERROR = 0, NULLS_SKIP, NULLS_EMPTY, NULLS_MARKER } nulls_rule;

/* Bytes of the prefix of an n-byte value. */
static inline Py_ssize_t
aw_prefix_size(u8p_prefix pf, Py_ssize_t n)
{
    return (Py_ssize_t)(pf == U8P_PFX_VARINT ? u8p_vint_size((uint64_t)n)
                                             : u8p_prefix_size(pf, (uint64_t)n));
}

/* Bytes one record of an n-byte value takes. */
static inline Py_ssize_t
aw_record_size(u8p_prefix pf, Py_ssize_t n)
{
    return aw_prefix_size(pf, n) + n;
}

/* Writes one record (prefix + value) at dst; returns the end.  When
 * `slack` the caller guarantees 32 readable bytes at src and 32 writable
 * bytes past the record, so short values are copied in one fixed move. */
static inline uint8_t *
aw_put_record(u8p_prefix pf, uint8_t *dst, const uint8_t *src, Py_ssize_t n, int slack)
{
    if (pf == U8P_PFX_VARINT && n < 0x80)
        *dst++ = (uint8_t)n;
    else
        dst += pf == U8P_PFX_VARINT ? u8p_vint_write(dst, (uint64_t)n)
                                    : u8p_prefix_write(pf, dst, (uint64_t)n);
    if (slack && n <= 32) {
        memcpy(dst, src, 32);
        return dst + n;
    }
    if (n)
        memcpy(dst, src, (size_t)n);
    return dst + n;
}

/* True when every byte of an n-byte value's prefix is below 0x80 (ASCII):
 * the fused validation of write_arrow relies on it (see seg_put).  Exact for
 * each preset: a varint is one byte below 0x80 when its wire value is; a
 * fixed-width prefix is ASCII when no byte of n has its top bit set. */
static inline int
aw_prefix_ascii(u8p_prefix pf, Py_ssize_t n)
{
    switch (pf) {
    case U8P_PFX_VARINT:
        return n < 0x80;
    case U8P_PFX_ZIGZAG: /* 2n */
        return n < 0x40;
    case U8P_PFX_VARINT1: /* n + 1 */
        return n < 0x7F;
    case U8P_PFX_U16BE:
        return ((uint64_t)n & 0x8080u) == 0;
    default: /* i32be, u32le: n < 2**32 */
        return ((uint64_t)n & 0x80808080u) == 0;
    }
}

/* The record of a null under nulls="empty" (an empty string's record) or
 * nulls="null" (the preset's null marker). */
static inline Py_ssize_t
aw_null_size(u8p_prefix pf, nulls_rule rule)
{
    if (rule == NULLS_MARKER) {
        uint8_t tmp[U8P_PREFIX_MAX_BYTES];
        return (Py_ssize_t)u8p_prefix_write_null(pf, tmp);
    }
    return aw_record_size(pf, 0);
}

static inline uint8_t *
aw_put_null(u8p_prefix pf, nulls_rule rule, uint8_t *dst)
{
    if (rule == NULLS_MARKER)
        return dst + u8p_prefix_write_null(pf, dst);
    return aw_put_record(pf, dst, NULL, 0, 0);
}

/* Is the null record ASCII (as aw_prefix_ascii)?  The marker is one 00. */
static inline int
aw_null_ascii(u8p_prefix pf, nulls_rule rule)
{
    return rule == NULLS_MARKER ? 1 : aw_prefix_ascii(pf, 0);
}

/* MUTF-8 writers: the bytes an n-byte UTF-8 value takes as MUTF-8 (one more
 * per 00, two more per 4-byte sequence: its lead byte F0..F4).  The value is
 * valid UTF-8 (or has lone surrogate forms under surrogatepass). */
static inline Py_ssize_t
aw_mutf8_size(const uint8_t *p, Py_ssize_t n)
{
    Py_ssize_t i, extra = 0;
    for (i = 0; i < n; i++)
        extra += (Py_ssize_t)(p[i] == 0) + 2 * (Py_ssize_t)(p[i] >= 0xF0);
    return n + extra;
}

/* Parses one record at *pos: payload [*off, *off + *n); *pos moves past it.
 * Returns 1 for a record, 0 for the null marker (varint+1; *n = 0), or -1
 * with ValueError naming the offset on a bad prefix (as u8p_rd_record). */
U8P_ALWAYS_INLINE int
ar_record_pf(const rd_ctx *c, u8p_prefix pf, Py_ssize_t *pos, Py_ssize_t *off, Py_ssize_t *n)
{
    Py_ssize_t p = *pos;
    if (pf == U8P_PFX_VARINT && p < c->len && c->data[p] < 0x80 &&
        c->data[p] < c->len - p) {
        *off = p + 1;
        *n = c->data[p];
        *pos = p + 1 + *n;
        return 1;
    }
    {
        /* through temporaries: the caller's variables never have their
         * address taken, so they stay in registers in its loop */
        Py_ssize_t q = p, o = 0, m = 0;
        int k = u8p_rd_record(c, &q, &o, &m, "string");
        *pos = q;
        *off = o;
        *n = m;
        return k;
    }
}

/* The same with the context's preset (pf above: a constant in hot loops). */
static inline int
ar_record(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t *off, Py_ssize_t *n)
{
    return ar_record_pf(c, c->prefix, pos, off, n);
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
        PyObject *n = PyUnicode_FromString(note);
        PyObject *r = n ? u8p_call_method_interned(exc, "add_note", n) : NULL;
        Py_XDECREF(n);
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

#endif /* UTF8PFX_ARROW_INTERNAL_H */
