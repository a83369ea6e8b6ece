/*
 * Arrow in, Arrow out: columns of strings to prefixed records and back
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
#include <stdlib.h>
#include <string.h>

#include "arrow.h"
#include "reader.h"
#include "writer.h"

#if defined(_MSC_VER)
#include <intrin.h>
#define U8P_REF_INC(p) _InterlockedIncrement(p)
#define U8P_REF_DEC(p) _InterlockedDecrement(p)
#else
#define U8P_REF_INC(p) __atomic_add_fetch(p, 1, __ATOMIC_RELAXED)
#define U8P_REF_DEC(p) __atomic_sub_fetch(p, 1, __ATOMIC_ACQ_REL)
#endif

/* The ArrowUtf8Array type of the (one) module instance that made it. */
static PyTypeObject *arrow_array_type;

/* Values larger than this many bytes make large_utf8 (int64 offsets);
 * lowered by a testing hook to exercise that path without 2 GiB of data. */
static int64_t large_threshold = INT32_MAX;

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
static void
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
static void
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

/* ================================================================== in */

typedef enum { NULLS_ERROR = 0, NULLS_SKIP, NULLS_EMPTY } nulls_rule;

typedef enum { AK_UTF8, AK_LARGE_UTF8, AK_VIEW } arrow_kind;

typedef struct {
    WriterObject *w;
    nulls_rule nulls;
    arrow_kind kind;
    int allow_surrogates;
    int64_t row_base; /* rows of the earlier chunks */
    int64_t chunk;    /* chunk index, -1 for a single array */
    char index_fmt;   /* dictionary-encoded: the indices' format char, else 0 */
    const char *rowname; /* "row", or "dictionary value" in messages */
} aw_ctx;

/* "malformed Arrow array (chunk k): ..." as ValueError. */
static int
malformed(const aw_ctx *c, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    PyOS_vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->chunk >= 0)
        PyErr_Format(PyExc_ValueError, "malformed Arrow array (chunk %lld of the stream): %s",
                     (long long)c->chunk, msg);
    else
        PyErr_Format(PyExc_ValueError, "malformed Arrow array: %s", msg);
    return -1;
}

static int
schema_kind(const struct ArrowSchema *s, arrow_kind *kind, char *index_fmt)
{
    const char *f = s->format;
    if (f == NULL) {
        PyErr_SetString(PyExc_ValueError, "malformed Arrow schema: its format string is NULL");
        return -1;
    }
    if (s->dictionary != NULL && index_fmt != NULL) {
        /* dictionary-encoded strings: integer indices into a string array */
        if (strlen(f) != 1 || strchr("cCsSiIlL", f[0]) == NULL) {
            PyErr_Format(PyExc_ValueError,
                         "malformed Arrow schema: dictionary indices of format '%.20s' "
                         "(expected an integer format)",
                         f);
            return -1;
        }
        *index_fmt = f[0];
        return schema_kind(s->dictionary, kind, NULL);
    }
    if (s->dictionary != NULL) {
        PyErr_SetString(PyExc_TypeError,
                        "write_arrow() does not take a dictionary whose values are themselves "
                        "dictionary-encoded");
        return -1;
    }
    if (strcmp(f, "u") == 0)
        *kind = AK_UTF8;
    else if (strcmp(f, "U") == 0)
        *kind = AK_LARGE_UTF8;
    else if (strcmp(f, "vu") == 0)
        *kind = AK_VIEW;
    else {
        const char *hint = "";
        if (strcmp(f, "z") == 0 || strcmp(f, "Z") == 0 || strcmp(f, "vz") == 0)
            hint = " (binary: cast it to a string type if it holds UTF-8)";
        else if (strcmp(f, "+s") == 0)
            hint = " (a struct, table or record batch: pass one of its columns)";
        PyErr_Format(PyExc_TypeError,
                     "write_arrow() needs a utf8 ('u'), large_utf8 ('U') or string_view "
                     "('vu') array%s; got Arrow format '%.40s'%s",
                     index_fmt == NULL ? " as dictionary values" : " (or a dictionary of one)",
                     f, hint);
        return -1;
    }
    return 0;
}

static inline int
row_valid(const uint8_t *validity, int64_t bit)
{
    return validity == NULL || ((validity[bit >> 3] >> (bit & 7)) & 1);
}

static inline int64_t
offset_at(const void *offsets, int large, int64_t i)
{
    return large ? ((const int64_t *)offsets)[i] : (int64_t)((const int32_t *)offsets)[i];
}

/* The structure every string array shares. */
static int
check_common(const aw_ctx *c, const struct ArrowArray *a)
{
    if (a->length < 0)
        return malformed(c, "length %lld is negative", (long long)a->length);
    if (a->offset < 0)
        return malformed(c, "offset %lld is negative", (long long)a->offset);
    if (a->offset > INT64_MAX - a->length - 1)
        return malformed(c, "offset %lld + length %lld overflows", (long long)a->offset,
                         (long long)a->length);
    if (a->null_count < -1)
        return malformed(c, "null_count %lld (expected -1 or >= 0)", (long long)a->null_count);
    if (a->null_count > a->length)
        return malformed(c, "null_count %lld exceeds the length %lld",
                         (long long)a->null_count, (long long)a->length);
    if (a->n_children != 0)
        return malformed(c, "a string array has no children, got n_children=%lld",
                         (long long)a->n_children);
    if (a->dictionary != NULL)
        return malformed(c, "a string array has no dictionary");
    if (a->n_buffers < 0 || (c->kind != AK_VIEW && a->n_buffers != 3))
        return malformed(c, "a %s array has 3 buffers (validity, offsets, values), got "
                            "n_buffers=%lld",
                         c->kind == AK_UTF8 ? "utf8" : "large_utf8", (long long)a->n_buffers);
    if (c->kind == AK_VIEW && a->n_buffers < 3)
        return malformed(c, "a string_view array has at least 3 buffers (validity, views, "
                            "variadic sizes), got n_buffers=%lld",
                         (long long)a->n_buffers);
    if (a->buffers == NULL)
        return malformed(c, "buffers is NULL with n_buffers=%lld", (long long)a->n_buffers);
    if (a->null_count > 0 && a->buffers[0] == NULL)
        return malformed(c, "null_count is %lld but the validity buffer is NULL",
                         (long long)a->null_count);
    if (a->length > 0 && a->buffers[1] == NULL)
        return malformed(c, "the %s buffer is NULL with length %lld",
                         c->kind == AK_VIEW ? "views" : "offsets", (long long)a->length);
    return 0;
}

/* Raises the null error for row i of this chunk. */
static int
null_error(const aw_ctx *c, int64_t i)
{
    PyErr_Format(PyExc_ValueError,
                 "row %lld is null (nulls='error'): pass nulls='skip' to leave nulls out "
                 "or nulls='empty' to write them as empty strings",
                 (long long)(c->row_base + i));
    return -1;
}

/* The strict UTF-8 error of row i (value p[0:n] at byte `at` of the
 * producer's values buffer; -1 when the value is inline or in a view). */
static int
value_error(const aw_ctx *c, int64_t i, const uint8_t *p, Py_ssize_t n, int64_t at,
            u8p_dec_status st, const u8p_scan_result *r)
{
    static const char *const names[] = {"row", "data_offset"};
    Py_ssize_t vals[2];
    char note[200];
    int64_t row = c->row_base + i;
    vals[0] = (Py_ssize_t)row;
    vals[1] = (Py_ssize_t)(at >= 0 ? at + (int64_t)r->err_start : (int64_t)r->err_start);
    if (at >= 0)
        PyOS_snprintf(note, sizeof note,
                      "utf8pfx: invalid UTF-8 in row %lld of the Arrow input, at byte %lld of "
                      "its values buffer",
                      (long long)row, (long long)vals[1]);
    else
        PyOS_snprintf(note, sizeof note,
                      "utf8pfx: invalid UTF-8 in row %lld of the Arrow input, at byte %lld of "
                      "the value",
                      (long long)row, (long long)vals[1]);
    raise_decode_error(p, n, r, st, note, 2, names, vals);
    return -1;
}

/* Writes one value under a non-strict handler that found it invalid:
 * write_string(value.decode("utf-8", errors)). Returns bytes or -1. */
static Py_ssize_t
put_via_handler(const aw_ctx *c, int64_t i, const uint8_t *p, Py_ssize_t n)
{
    Py_ssize_t r;
    const char *ename = PyUnicode_AsUTF8(c->w->errors);
    PyObject *s;
    char what[80];
    if (ename == NULL)
        return -1;
    s = PyUnicode_DecodeUTF8((const char *)p, n, ename);
    if (s == NULL)
        return -1;
    PyOS_snprintf(what, sizeof what, "write_arrow() row %lld", (long long)(c->row_base + i));
    r = u8p_writer_put_str(c->w, s, what);
    Py_DECREF(s);
    return r;
}

/*
 * UTF-8 validation fused with the copy.  The records are written into the
 * writer's free capacity (not committed), and what was written is scanned
 * as runs.  A prefix whose bytes are all below 0x80 (aw_prefix_ascii: a
 * VInt under 128) is ASCII, so a run of such records is valid UTF-8 exactly
 * when every value in it is: a value that ends inside a sequence, or starts
 * with a continuation byte, meets an ASCII byte there and fails.  A prefix
 * (or null marker) with a byte >= 0x80 ends the run before it; a new run
 * starts after it.  A prefix format only has to say which prefixes are
 * ASCII (aw_prefix_ascii / aw_null_ascii, beside the writers).  Any failure sends the chunk to the per-row search for the first
 * bad row, before anything is committed.
 */
typedef struct {
    const uint8_t *run;
    int ok;
    int allow_surrogates;
} seg_state;

static inline void
seg_scan(seg_state *g, const uint8_t *end)
{
    if (g->ok && end > g->run) {
        u8p_scan_result r;
        if (u8p_D->scan(g->run, (size_t)(end - g->run), g->allow_surrogates, &r)
            != U8P_DEC_OK)
            g->ok = 0;
    }
}

/* One record in the fused pass; returns the end. */
static inline uint8_t *
seg_put(seg_state *g, uint8_t *dst, const uint8_t *src, Py_ssize_t n, int slack)
{
    uint8_t *end;
    if (aw_prefix_ascii(n))
        return aw_put_record(dst, src, n, slack);
    seg_scan(g, dst);
    end = aw_put_record(dst, src, n, 0);
    g->run = end - n;
    return end;
}

static inline uint8_t *
seg_put_null(seg_state *g, uint8_t *dst)
{
    uint8_t *end;
    if (aw_null_ascii())
        return aw_put_null(dst);
    seg_scan(g, dst);
    end = aw_put_null(dst);
    g->run = end;
    return end;
}

/* A string_view whose structure pass 1 has checked. */
static inline void
view_fast(const struct ArrowArray *a, int64_t i, const uint8_t **p, Py_ssize_t *n,
          int *over)
{
    const uint8_t *v = (const uint8_t *)a->buffers[1] + 16 * (a->offset + i);
    int32_t size, idx, off;
    memcpy(&size, v, 4);
    if (size <= 12) {
        *p = v + 4;
        *n = size;
        *over = i + 3 <= a->length; /* 32 bytes from v + 4 stay in the views */
        return;
    }
    memcpy(&idx, v + 8, 4);
    memcpy(&off, v + 12, 4);
    *p = (const uint8_t *)a->buffers[2 + idx] + off;
    *n = size;
    *over = (int64_t)off + 32 <= ((const int64_t *)a->buffers[a->n_buffers - 1])[idx];
}

/* One utf8 / large_utf8 chunk. */
static int
write_offsets_chunk(const aw_ctx *c, const struct ArrowArray *a)
{
    const int large = c->kind == AK_LARGE_UTF8;
    const int64_t len = a->length, base = a->offset;
    const uint8_t *validity = a->null_count == 0 ? NULL : (const uint8_t *)a->buffers[0];
    const void *offsets = a->buffers[1];
    const uint8_t *values = (const uint8_t *)a->buffers[2];
    int64_t i, first, last, first_null = -1, first_bad = -1;
    Py_ssize_t total = 0;
    u8p_dec_status st = U8P_DEC_OK;
    u8p_scan_result r;
    WriterObject *w = c->w;

    if (len == 0)
        return 0;
    /* pass 1: structure, nulls, size */
    first = offset_at(offsets, large, base);
    if (first < 0)
        return malformed(c, "row %lld starts at offset %lld (negative)",
                         (long long)c->row_base, (long long)first);
    for (i = 0; i < len; i++) {
        int64_t s = offset_at(offsets, large, base + i);
        int64_t e = offset_at(offsets, large, base + i + 1);
        if (e < s)
            return malformed(c, "offsets decrease at row %lld: offset[%lld]=%lld > "
                                "offset[%lld]=%lld",
                             (long long)(c->row_base + i), (long long)(base + i), (long long)s,
                             (long long)(base + i + 1), (long long)e);
        if (!row_valid(validity, base + i)) {
            if (c->nulls == NULLS_ERROR) {
                if (first_null < 0)
                    first_null = i;
            }
            else if (c->nulls == NULLS_EMPTY)
                total += aw_null_size();
            continue;
        }
        if (e - s > PY_SSIZE_T_MAX / 2 || total > PY_SSIZE_T_MAX / 2)
            return malformed(c, "row %lld is %lld bytes long", (long long)(c->row_base + i),
                             (long long)(e - s));
        total += aw_record_size((Py_ssize_t)(e - s));
    }
    last = offset_at(offsets, large, base + len);
    if (last > first && values == NULL)
        return malformed(c, "the values buffer is NULL while the offsets span %lld bytes",
                         (long long)(last - first));

    if (first_null < 0) { /* pass 2: copy, validate the runs, commit if all is well */
        uint8_t *dst;
        int slack;
        seg_state g;
        if (u8p_writer_reserve(w, total) < 0)
            return -1;
        slack = w->cap - w->len >= total + 32;
        dst = w->buf + w->len;
        g.run = dst;
        g.ok = 1;
        g.allow_surrogates = c->allow_surrogates;
        for (i = 0; i < len; i++) {
            int64_t s, e;
            if (!row_valid(validity, base + i)) {
                if (c->nulls == NULLS_EMPTY)
                    dst = seg_put_null(&g, dst);
                continue;
            }
            s = offset_at(offsets, large, base + i);
            e = offset_at(offsets, large, base + i + 1);
            dst = seg_put(&g, dst, values + s, (Py_ssize_t)(e - s), slack && s + 32 <= last);
        }
        seg_scan(&g, dst);
        if (g.ok) {
            w->len = (Py_ssize_t)(dst - w->buf);
            return 0;
        }
    }
    /* an error somewhere: the first invalid non-null row (before any null
     * that nulls='error' refuses; nulls may hold anything) */
    for (i = 0; i < (first_null >= 0 ? first_null : len); i++) {
        int64_t s = offset_at(offsets, large, base + i);
        int64_t e = offset_at(offsets, large, base + i + 1);
        if (row_valid(validity, base + i) &&
            !value_ok(values + s, (Py_ssize_t)(e - s), c->allow_surrogates, &st, &r)) {
            first_bad = i;
            break;
        }
    }
    if (first_bad < 0) {
        if (first_null >= 0)
            return null_error(c, first_null);
        PyErr_SetString(PyExc_SystemError,
                        "utf8pfx: the run scan and the per-row scans disagree (a bug)");
        return -1;
    }
    if (w->eh == U8P_ERR_STRICT) {
        int64_t s = offset_at(offsets, large, base + first_bad);
        int64_t e = offset_at(offsets, large, base + first_bad + 1);
        return value_error(c, first_bad, values + s, (Py_ssize_t)(e - s), s, st, &r);
    }
    /* an error handler: row by row, the invalid ones through the codec; a
     * null that nulls='error' refuses stops it (the writer is rolled back) */
    for (i = 0; i < len; i++) {
        int64_t s, e;
        Py_ssize_t n;
        if (!row_valid(validity, base + i)) {
            if (c->nulls == NULLS_ERROR)
                return null_error(c, i);
            if (c->nulls == NULLS_EMPTY) {
                if (u8p_writer_reserve(w, aw_null_size()) < 0)
                    return -1;
                w->len = (Py_ssize_t)(aw_put_null(w->buf + w->len) - w->buf);
            }
            continue;
        }
        s = offset_at(offsets, large, base + i);
        e = offset_at(offsets, large, base + i + 1);
        n = (Py_ssize_t)(e - s);
        if (value_ok(values + s, n, c->allow_surrogates, &st, &r)) {
            if (u8p_writer_reserve(w, aw_record_size(n)) < 0)
                return -1;
            w->len = (Py_ssize_t)(aw_put_record(w->buf + w->len, values + s, n, 0) - w->buf);
        }
        else if (put_via_handler(c, i, values + s, n) < 0)
            return -1;
    }
    return 0;
}

/* A string_view value: its bytes, checked against the producer's buffers. */
static int
view_value(const aw_ctx *c, const struct ArrowArray *a, int64_t i, const uint8_t **p,
           Py_ssize_t *n)
{
    const uint8_t *v = (const uint8_t *)a->buffers[1] + 16 * (a->offset + i);
    int32_t size, idx, off;
    int64_t nvar = a->n_buffers - 3;
    const int64_t *sizes = (const int64_t *)a->buffers[a->n_buffers - 1];
    memcpy(&size, v, 4);
    if (size < 0)
        return malformed(c, "%s %lld: string_view length %ld is negative",
                         c->rowname, (long long)(c->row_base + i), (long)size);
    if (size <= 12) {
        *p = v + 4;
        *n = size;
        return 0;
    }
    memcpy(&idx, v + 8, 4);
    memcpy(&off, v + 12, 4);
    if (idx < 0 || idx >= nvar)
        return malformed(c, "%s %lld: string_view buffer index %ld is outside the %lld "
                            "variadic buffer(s)",
                         c->rowname, (long long)(c->row_base + i), (long)idx, (long long)nvar);
    if (sizes == NULL)
        return malformed(c, "the variadic buffer sizes are NULL");
    if (off < 0 || (int64_t)off + size > sizes[idx])
        return malformed(c, "%s %lld: string_view range [%ld, %lld) is outside variadic "
                            "buffer %ld of %lld bytes",
                         c->rowname, (long long)(c->row_base + i), (long)off, (long long)off + size,
                         (long)idx, (long long)sizes[idx]);
    if (a->buffers[2 + idx] == NULL)
        return malformed(c, "variadic buffer %ld is NULL", (long)idx);
    *p = (const uint8_t *)a->buffers[2 + idx] + off;
    *n = size;
    return 0;
}

/* One string_view chunk. */
static int
write_view_chunk(const aw_ctx *c, const struct ArrowArray *a)
{
    const int64_t len = a->length, base = a->offset;
    const uint8_t *validity = a->null_count == 0 ? NULL : (const uint8_t *)a->buffers[0];
    int64_t i, first_null = -1, first_bad = -1;
    Py_ssize_t total = 0, n;
    const uint8_t *p;
    u8p_dec_status st = U8P_DEC_OK;
    u8p_scan_result r;
    WriterObject *w = c->w;

    /* pass 1: structure, nulls, size */
    for (i = 0; i < len; i++) {
        if (!row_valid(validity, base + i)) {
            if (c->nulls == NULLS_ERROR) {
                if (first_null < 0)
                    first_null = i;
            }
            else if (c->nulls == NULLS_EMPTY)
                total += aw_null_size();
            continue;
        }
        if (view_value(c, a, i, &p, &n) < 0)
            return -1;
        total += aw_record_size(n);
    }
    if (first_null < 0) { /* pass 2: copy, validate the runs, commit if all is well */
        uint8_t *dst;
        int slack, over;
        seg_state g;
        if (u8p_writer_reserve(w, total) < 0)
            return -1;
        slack = w->cap - w->len >= total + 32;
        dst = w->buf + w->len;
        g.run = dst;
        g.ok = 1;
        g.allow_surrogates = c->allow_surrogates;
        for (i = 0; i < len; i++) {
            if (!row_valid(validity, base + i)) {
                if (c->nulls == NULLS_EMPTY)
                    dst = seg_put_null(&g, dst);
                continue;
            }
            view_fast(a, i, &p, &n, &over);
            dst = seg_put(&g, dst, p, n, slack && over);
        }
        seg_scan(&g, dst);
        if (g.ok) {
            w->len = (Py_ssize_t)(dst - w->buf);
            return 0;
        }
    }
    for (i = 0; i < (first_null >= 0 ? first_null : len); i++) {
        if (!row_valid(validity, base + i))
            continue;
        view_value(c, a, i, &p, &n);
        if (!value_ok(p, n, c->allow_surrogates, &st, &r)) {
            first_bad = i;
            break;
        }
    }
    if (first_bad < 0) {
        if (first_null >= 0)
            return null_error(c, first_null);
        PyErr_SetString(PyExc_SystemError,
                        "utf8pfx: the run scan and the per-row scans disagree (a bug)");
        return -1;
    }
    if (w->eh == U8P_ERR_STRICT)
        return value_error(c, first_bad, p, n, -1, st, &r);
    for (i = 0; i < len; i++) {
        if (!row_valid(validity, base + i)) {
            if (c->nulls == NULLS_ERROR)
                return null_error(c, i);
            if (c->nulls == NULLS_EMPTY) {
                if (u8p_writer_reserve(w, aw_null_size()) < 0)
                    return -1;
                w->len = (Py_ssize_t)(aw_put_null(w->buf + w->len) - w->buf);
            }
            continue;
        }
        view_value(c, a, i, &p, &n);
        if (!value_ok(p, n, c->allow_surrogates, &st, &r)) {
            if (put_via_handler(c, i, p, n) < 0)
                return -1;
            continue;
        }
        if (u8p_writer_reserve(w, aw_record_size(n)) < 0)
            return -1;
        w->len = (Py_ssize_t)(aw_put_record(w->buf + w->len, p, n, 0) - w->buf);
    }
    return 0;
}

/* ------------------------------------------- dictionary-encoded strings */

static inline int64_t
index_at(const void *buf, char fmt, int64_t i)
{
    switch (fmt) {
    case 'c': return ((const int8_t *)buf)[i];
    case 'C': return ((const uint8_t *)buf)[i];
    case 's': return ((const int16_t *)buf)[i];
    case 'S': return ((const uint16_t *)buf)[i];
    case 'i': return ((const int32_t *)buf)[i];
    case 'I': return ((const uint32_t *)buf)[i];
    case 'l': return ((const int64_t *)buf)[i];
    default: { /* 'L': above INT64_MAX reads as negative, refused as out of range */
        uint64_t u = ((const uint64_t *)buf)[i];
        return u > (uint64_t)INT64_MAX ? -1 : (int64_t)u;
    }
    }
}

/* Entry k of a checked dictionary: 0 null, 1 a value p[0:n]. */
static inline int
dict_entry(const aw_ctx *dc, const struct ArrowArray *d, int64_t k, const uint8_t **p,
           Py_ssize_t *n)
{
    const uint8_t *validity = d->null_count == 0 ? NULL : (const uint8_t *)d->buffers[0];
    if (!row_valid(validity, d->offset + k))
        return 0;
    if (dc->kind == AK_VIEW) {
        int over;
        view_fast(d, k, p, n, &over);
    }
    else {
        int large = dc->kind == AK_LARGE_UTF8;
        int64_t s = offset_at(d->buffers[1], large, d->offset + k);
        int64_t e = offset_at(d->buffers[1], large, d->offset + k + 1);
        *p = (const uint8_t *)d->buffers[2] + s;
        *n = (Py_ssize_t)(e - s);
    }
    return 1;
}

/*
 * One dictionary-encoded chunk: integer indices (n_buffers 2: validity,
 * indices) into a string array (its `dictionary`).  The dictionary is
 * checked like any string array (structure, offsets or views) and each of
 * its values validated once; every index of a non-null row must lie in the
 * dictionary.  A row is null when its index slot or its dictionary entry
 * is.  Errors name the row of the indices; for bad UTF-8, `data_offset` is
 * the byte of the dictionary's values buffer (of the value for string_view).
 */
static int
write_dict_chunk(const aw_ctx *c, const struct ArrowArray *a)
{
    aw_ctx dc = *c;
    const struct ArrowArray *d = a->dictionary;
    const uint8_t *validity;
    int64_t i, k, dlen, first_null = -1, first_bad = -1;
    Py_ssize_t total = 0, n = 0;
    const uint8_t *p = NULL;
    uint8_t *state = NULL; /* per entry: 0 null, 1 valid, 2 invalid UTF-8 */
    u8p_dec_status st = U8P_DEC_OK;
    u8p_scan_result r;
    WriterObject *w = c->w;
    int rc = -1;

    /* the indices */
    if (a->length < 0 || a->offset < 0 || a->offset > INT64_MAX - a->length - 1)
        return malformed(c, "length %lld / offset %lld of the dictionary indices",
                         (long long)a->length, (long long)a->offset);
    if (a->null_count < -1 || a->null_count > a->length)
        return malformed(c, "null_count %lld of the dictionary indices",
                         (long long)a->null_count);
    if (a->n_buffers != 2 || a->buffers == NULL)
        return malformed(c, "dictionary indices have 2 buffers (validity, indices), got "
                            "n_buffers=%lld%s",
                         (long long)a->n_buffers, a->buffers == NULL ? " and NULL buffers" : "");
    if (a->n_children != 0)
        return malformed(c, "dictionary indices have no children, got n_children=%lld",
                         (long long)a->n_children);
    if (d == NULL)
        return malformed(c, "the schema is dictionary-encoded but the array has no "
                            "dictionary");
    if (a->null_count > 0 && a->buffers[0] == NULL)
        return malformed(c, "null_count is %lld but the validity buffer is NULL",
                         (long long)a->null_count);
    if (a->length > 0 && a->buffers[1] == NULL)
        return malformed(c, "the indices buffer is NULL with length %lld",
                         (long long)a->length);
    /* the dictionary: a string array, checked in full */
    dc.index_fmt = 0;
    dc.rowname = "dictionary value";
    dc.row_base = 0;
    if (check_common(&dc, d) < 0)
        return -1;
    dlen = d->length;
    if (dc.kind != AK_VIEW && dlen > 0) {
        const int large = dc.kind == AK_LARGE_UTF8;
        int64_t first = offset_at(d->buffers[1], large, d->offset);
        if (first < 0)
            return malformed(c, "dictionary value 0 starts at offset %lld (negative)",
                             (long long)first);
        for (k = 0; k < dlen; k++) {
            int64_t s = offset_at(d->buffers[1], large, d->offset + k);
            int64_t e = offset_at(d->buffers[1], large, d->offset + k + 1);
            if (e < s)
                return malformed(c, "dictionary offsets decrease at value %lld",
                                 (long long)k);
        }
        if (offset_at(d->buffers[1], large, d->offset + dlen) > first && d->buffers[2] == NULL)
            return malformed(c, "the dictionary's values buffer is NULL");
    }
    state = (uint8_t *)PyMem_Malloc(dlen > 0 ? (size_t)dlen : 1);
    if (state == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    {
        const uint8_t *dv = d->null_count == 0 ? NULL : (const uint8_t *)d->buffers[0];
        for (k = 0; k < dlen; k++) {
            if (!row_valid(dv, d->offset + k)) {
                state[k] = 0;
                continue;
            }
            if (dc.kind == AK_VIEW) {
                if (view_value(&dc, d, k, &p, &n) < 0)
                    goto done;
            }
            else
                dict_entry(&dc, d, k, &p, &n);
            state[k] = value_ok(p, n, c->allow_surrogates, &st, &r) ? 1 : 2;
        }
    }
    /* pass 1: indices in range, nulls, the first bad row, size */
    validity = a->null_count == 0 ? NULL : (const uint8_t *)a->buffers[0];
    for (i = 0; i < a->length; i++) {
        if (row_valid(validity, a->offset + i)) {
            k = index_at(a->buffers[1], c->index_fmt, a->offset + i);
            if (k < 0 || k >= dlen) {
                malformed(c, "row %lld: dictionary index %lld is outside the dictionary of "
                             "%lld value(s)",
                          (long long)(c->row_base + i), (long long)k, (long long)dlen);
                goto done;
            }
            if (state[k] != 0) {
                if (state[k] == 2 && first_bad < 0)
                    first_bad = i;
                dict_entry(&dc, d, k, &p, &n);
                total += aw_record_size(n);
                continue;
            }
        }
        if (c->nulls == NULLS_ERROR) {
            if (first_null < 0)
                first_null = i;
        }
        else if (c->nulls == NULLS_EMPTY)
            total += aw_null_size();
    }
    if (first_null >= 0 && (first_bad < 0 || first_null < first_bad)) {
        null_error(c, first_null);
        goto done;
    }
    if (first_bad >= 0 && w->eh == U8P_ERR_STRICT) {
        k = index_at(a->buffers[1], c->index_fmt, a->offset + first_bad);
        dict_entry(&dc, d, k, &p, &n);
        value_ok(p, n, c->allow_surrogates, &st, &r);
        value_error(c, first_bad, p, n,
                    dc.kind == AK_VIEW ? -1
                                       : (int64_t)(p - (const uint8_t *)d->buffers[2]),
                    st, &r);
        goto done;
    }
    if (first_bad < 0 && u8p_writer_reserve(w, total) < 0)
        goto done;
    for (i = 0; i < a->length; i++) {
        if (row_valid(validity, a->offset + i)) {
            k = index_at(a->buffers[1], c->index_fmt, a->offset + i);
            if (state[k] != 0) {
                dict_entry(&dc, d, k, &p, &n);
                if (state[k] == 2) {
                    if (put_via_handler(c, i, p, n) < 0)
                        goto done;
                    continue;
                }
                if (u8p_writer_reserve(w, aw_record_size(n)) < 0)
                    goto done;
                w->len = (Py_ssize_t)(aw_put_record(w->buf + w->len, p, n, 0) - w->buf);
                continue;
            }
        }
        if (c->nulls == NULLS_EMPTY) {
            if (u8p_writer_reserve(w, aw_null_size()) < 0)
                goto done;
            w->len = (Py_ssize_t)(aw_put_null(w->buf + w->len) - w->buf);
        }
    }
    rc = 0;
done:
    PyMem_Free(state);
    return rc;
}

static int
write_chunk(aw_ctx *c, const struct ArrowArray *a)
{
    int rc;
    if (c->index_fmt)
        rc = write_dict_chunk(c, a);
    else if (check_common(c, a) < 0)
        return -1;
    else
        rc = c->kind == AK_VIEW ? write_view_chunk(c, a) : write_offsets_chunk(c, a);
    if (rc == 0)
        c->row_base += a->length;
    return rc;
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

static void
stash_take(err_stash *x)
{
#if PY_VERSION_HEX >= 0x030C0000
    x->exc = PyErr_GetRaisedException();
#else
    PyErr_Fetch(&x->type, &x->value, &x->tb);
#endif
}

static void
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

static void
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

static void
release_schema(struct ArrowSchema *s)
{
    err_stash x;
    stash_take(&x);
    if (s->release != NULL)
        s->release(s);
    stash_put(&x);
}

static void
release_array(struct ArrowArray *a)
{
    err_stash x;
    stash_take(&x);
    if (a->release != NULL)
        a->release(a);
    stash_put(&x);
}

static void
release_stream(struct ArrowArrayStream *s)
{
    err_stash x;
    stash_take(&x);
    if (s->release != NULL)
        s->release(s);
    stash_put(&x);
}

/* Moves the struct out of a capsule (the capsule then owns nothing). */
static void *
capsule_take(PyObject *cap, const char *name, const char *method)
{
    void *p;
    if (!PyCapsule_CheckExact(cap) || !PyCapsule_IsValid(cap, name)) {
        PyErr_Format(PyExc_TypeError, "%s did not return a PyCapsule named \"%s\"", method,
                     name);
        return NULL;
    }
    p = PyCapsule_GetPointer(cap, name);
    if (p == NULL)
        return NULL;
    return p;
}

static int
take_schema(PyObject *cap, struct ArrowSchema *out, const char *method)
{
    struct ArrowSchema *s = (struct ArrowSchema *)capsule_take(cap, "arrow_schema", method);
    if (s == NULL)
        return -1;
    if (s->release == NULL) {
        PyErr_Format(PyExc_ValueError, "%s returned a schema that is already released", method);
        return -1;
    }
    *out = *s;
    s->release = NULL;
    return 0;
}

static int
take_array(PyObject *cap, struct ArrowArray *out, const char *method)
{
    struct ArrowArray *a = (struct ArrowArray *)capsule_take(cap, "arrow_array", method);
    if (a == NULL)
        return -1;
    if (a->release == NULL) {
        PyErr_Format(PyExc_ValueError, "%s returned an array that is already released", method);
        return -1;
    }
    *out = *a;
    a->release = NULL;
    return 0;
}

/* obj.__arrow_c_array__(): one chunk. */
static int
write_from_array(aw_ctx *c, PyObject *obj)
{
    struct ArrowSchema schema;
    struct ArrowArray array;
    PyObject *res = PyObject_CallMethod(obj, "__arrow_c_array__", NULL);
    int rc = -1;
    if (res == NULL)
        return -1;
    if (!PyTuple_Check(res) || PyTuple_GET_SIZE(res) != 2) {
        PyErr_Format(PyExc_TypeError,
                     "__arrow_c_array__() of %.200s must return a (schema, array) tuple of "
                     "capsules",
                     Py_TYPE(obj)->tp_name);
        Py_DECREF(res);
        return -1;
    }
    if (take_schema(PyTuple_GET_ITEM(res, 0), &schema, "__arrow_c_array__()") < 0) {
        Py_DECREF(res); /* the array capsule's destructor releases the array */
        return -1;
    }
    if (take_array(PyTuple_GET_ITEM(res, 1), &array, "__arrow_c_array__()") < 0) {
        release_schema(&schema);
        Py_DECREF(res);
        return -1;
    }
    Py_DECREF(res);
    if (schema_kind(&schema, &c->kind, &c->index_fmt) == 0)
        rc = write_chunk(c, &array);
    release_array(&array);
    release_schema(&schema);
    return rc;
}

static int
stream_error(struct ArrowArrayStream *s, int code, const char *what)
{
    const char *msg = s->get_last_error ? s->get_last_error(s) : NULL;
    PyErr_Format(PyExc_OSError, "the Arrow stream failed in %s (errno %d): %s", what, code,
                 msg ? msg : "no message");
    return -1;
}

/* obj.__arrow_c_stream__(): chunk after chunk. */
static int
write_from_stream(aw_ctx *c, PyObject *obj)
{
    struct ArrowArrayStream *sp, stream;
    struct ArrowSchema schema;
    int code, rc = -1;
    PyObject *cap = PyObject_CallMethod(obj, "__arrow_c_stream__", NULL);
    if (cap == NULL)
        return -1;
    sp = (struct ArrowArrayStream *)capsule_take(cap, "arrow_array_stream",
                                                 "__arrow_c_stream__()");
    if (sp == NULL || sp->release == NULL) {
        if (sp != NULL)
            PyErr_SetString(PyExc_ValueError,
                            "__arrow_c_stream__() returned a stream that is already released");
        Py_DECREF(cap);
        return -1;
    }
    stream = *sp;
    sp->release = NULL;
    Py_DECREF(cap);
    if (stream.get_schema == NULL || stream.get_next == NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "malformed Arrow stream: its get_schema or get_next callback is NULL");
        release_stream(&stream);
        return -1;
    }

    memset(&schema, 0, sizeof schema);
    code = stream.get_schema(&stream, &schema);
    if (code != 0 || schema.release == NULL) {
        if (code == 0)
            PyErr_SetString(PyExc_ValueError, "the Arrow stream gave a released schema");
        else
            stream_error(&stream, code, "get_schema");
        if (code != 0 && schema.release != NULL)
            release_schema(&schema);
        release_stream(&stream);
        return -1;
    }
    if (schema_kind(&schema, &c->kind, &c->index_fmt) < 0)
        goto done;
    c->chunk = 0;
    for (;;) {
        struct ArrowArray array;
        memset(&array, 0, sizeof array);
        code = stream.get_next(&stream, &array);
        if (code != 0) {
            if (array.release != NULL)
                release_array(&array);
            stream_error(&stream, code, "get_next");
            goto done;
        }
        if (array.release == NULL)
            break; /* the end */
        code = write_chunk(c, &array);
        release_array(&array);
        if (code < 0)
            goto done;
        c->chunk++;
    }
    rc = 0;
done:
    release_schema(&schema);
    release_stream(&stream);
    return rc;
}

static PyObject *s_arrow_c_array, *s_arrow_c_stream;

int
u8p_is_arrow_exporter(PyObject *obj)
{
    PyObject *tp = (PyObject *)Py_TYPE(obj);
    return PyObject_HasAttr(tp, s_arrow_c_array) || PyObject_HasAttr(tp, s_arrow_c_stream);
}

PyObject *
u8p_writer_write_arrow_obj(WriterObject *w, PyObject *obj, int nulls)
{
    aw_ctx c;
    Py_ssize_t start = w->len;
    PyObject *tp = (PyObject *)Py_TYPE(obj);
    int rc;

    if (u8p_writer_check_idle(w) < 0)
        return NULL;
    if (w->prefix != U8P_PFX_VARINT || w->enc != U8P_ENC_UTF8) {
        PyErr_SetString(PyExc_ValueError,
                        "write_arrow() writes prefix='varint', encoding='utf-8' records only");
        return NULL;
    }
    c.w = w;
    c.nulls = (nulls_rule)nulls;
    c.kind = AK_UTF8;
    c.allow_surrogates = w->eh == U8P_ERR_SURROGATEPASS;
    c.row_base = 0;
    c.chunk = -1;
    c.index_fmt = 0;
    c.rowname = "row";
    w->busy = 1;
    if (PyObject_HasAttr(tp, s_arrow_c_array))
        rc = write_from_array(&c, obj);
    else if (PyObject_HasAttr(tp, s_arrow_c_stream))
        rc = write_from_stream(&c, obj);
    else {
        PyErr_Format(PyExc_TypeError,
                     "write_arrow() argument must export Arrow data (__arrow_c_array__ or "
                     "__arrow_c_stream__), not %.200s",
                     Py_TYPE(obj)->tp_name);
        rc = -1;
    }
    w->busy = 0;
    if (rc < 0) {
        w->len = start;
        return NULL;
    }
    return PyLong_FromSsize_t(w->len - start);
}

PyObject *
u8p_writer_write_arrow(WriterObject *w, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames)
{
    PyObject *nulls_obj = NULL;
    int nulls = NULLS_ERROR;
    if (nargs != 1) {
        PyErr_Format(PyExc_TypeError,
                     "write_arrow() takes exactly 1 positional argument (%zd given)", nargs);
        return NULL;
    }
    if (kwnames != NULL) {
        Py_ssize_t i;
        for (i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, i);
            if (PyUnicode_CompareWithASCIIString(key, "nulls") != 0) {
                PyErr_Format(PyExc_TypeError, "write_arrow() got an unexpected keyword %R",
                             key);
                return NULL;
            }
            nulls_obj = args[nargs + i];
        }
    }
    if (nulls_obj != NULL) {
        if (!PyUnicode_Check(nulls_obj)) {
            PyErr_Format(PyExc_TypeError, "write_arrow() nulls must be str, not %.200s",
                         Py_TYPE(nulls_obj)->tp_name);
            return NULL;
        }
        if (PyUnicode_CompareWithASCIIString(nulls_obj, "error") == 0)
            nulls = NULLS_ERROR;
        else if (PyUnicode_CompareWithASCIIString(nulls_obj, "skip") == 0)
            nulls = NULLS_SKIP;
        else if (PyUnicode_CompareWithASCIIString(nulls_obj, "empty") == 0)
            nulls = NULLS_EMPTY;
        else {
            PyErr_Format(PyExc_ValueError,
                         "write_arrow() nulls must be 'error', 'skip' or 'empty', got %R",
                         nulls_obj);
            return NULL;
        }
    }
    return u8p_writer_write_arrow_obj(w, args[0], nulls);
}

/* ================================================================= out */

typedef struct {
    long refs;
    int64_t length;
    int large;
    void *offsets;
    uint8_t *values;
    int64_t nvalues;
    const void *bufs[3];
} arrow_block;

static void
block_decref(arrow_block *b)
{
    if (U8P_REF_DEC(&b->refs) == 0) {
        free(b->offsets);
        free(b->values);
        free(b);
    }
}

static void
block_release_array(struct ArrowArray *a)
{
    if (a->release == NULL)
        return;
    block_decref((arrow_block *)a->private_data);
    a->release = NULL;
}

static void
block_export(arrow_block *b, struct ArrowArray *a)
{
    U8P_REF_INC(&b->refs);
    a->length = b->length;
    a->null_count = 0;
    a->offset = 0;
    a->n_buffers = 3;
    a->n_children = 0;
    a->buffers = b->bufs;
    a->children = NULL;
    a->dictionary = NULL;
    a->release = block_release_array;
    a->private_data = b;
}

static void
static_schema_release(struct ArrowSchema *s)
{
    s->release = NULL;
}

static void
schema_export(int large, struct ArrowSchema *s)
{
    s->format = large ? "U" : "u";
    s->name = "";
    s->metadata = NULL;
    s->flags = ARROW_FLAG_NULLABLE;
    s->n_children = 0;
    s->children = NULL;
    s->dictionary = NULL;
    s->release = static_schema_release;
    s->private_data = NULL;
}

static void
capsule_schema_free(PyObject *cap)
{
    struct ArrowSchema *s = (struct ArrowSchema *)PyCapsule_GetPointer(cap, "arrow_schema");
    if (s == NULL) {
        PyErr_Clear();
        return;
    }
    if (s->release != NULL)
        s->release(s);
    free(s);
}

static void
capsule_array_free(PyObject *cap)
{
    struct ArrowArray *a = (struct ArrowArray *)PyCapsule_GetPointer(cap, "arrow_array");
    if (a == NULL) {
        PyErr_Clear();
        return;
    }
    if (a->release != NULL)
        a->release(a);
    free(a);
}

static void
capsule_stream_free(PyObject *cap)
{
    struct ArrowArrayStream *s =
        (struct ArrowArrayStream *)PyCapsule_GetPointer(cap, "arrow_array_stream");
    if (s == NULL) {
        PyErr_Clear();
        return;
    }
    if (s->release != NULL)
        s->release(s);
    free(s);
}

static PyObject *
new_schema_capsule(int large)
{
    PyObject *cap;
    struct ArrowSchema *s = (struct ArrowSchema *)malloc(sizeof *s);
    if (s == NULL)
        return PyErr_NoMemory();
    schema_export(large, s);
    cap = PyCapsule_New(s, "arrow_schema", capsule_schema_free);
    if (cap == NULL)
        free(s);
    return cap;
}

static PyObject *
new_array_capsule(arrow_block *b)
{
    PyObject *cap;
    struct ArrowArray *a = (struct ArrowArray *)malloc(sizeof *a);
    if (a == NULL)
        return PyErr_NoMemory();
    block_export(b, a);
    cap = PyCapsule_New(a, "arrow_array", capsule_array_free);
    if (cap == NULL) {
        a->release(a);
        free(a);
    }
    return cap;
}

/* A one-chunk stream over a block. */
typedef struct {
    arrow_block *b;
    int done;
} stream_state;

static int
st_get_schema(struct ArrowArrayStream *s, struct ArrowSchema *out)
{
    schema_export(((stream_state *)s->private_data)->b->large, out);
    return 0;
}

static int
st_get_next(struct ArrowArrayStream *s, struct ArrowArray *out)
{
    stream_state *x = (stream_state *)s->private_data;
    if (x->done) {
        memset(out, 0, sizeof *out); /* release == NULL: the end */
        return 0;
    }
    block_export(x->b, out);
    x->done = 1;
    return 0;
}

static const char *
st_last_error(struct ArrowArrayStream *s)
{
    (void)s;
    return NULL;
}

static void
st_release(struct ArrowArrayStream *s)
{
    stream_state *x = (stream_state *)s->private_data;
    if (s->release == NULL)
        return;
    block_decref(x->b);
    free(x);
    s->release = NULL;
}

typedef struct {
    PyObject_HEAD
    arrow_block *b;
} ArrowArrObject;

static void
Arr_dealloc(ArrowArrObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    if (self->b)
        block_decref(self->b);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

/* requested_schema: the interface lets a producer ignore it; the array is
 * always exported as it is (utf8, or large_utf8 when built so). */
static int
check_requested(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, const char *fname)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0, i;
    (void)args;
    if (nargs + nkw > 1) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most 1 argument (requested_schema)",
                     fname);
        return -1;
    }
    for (i = 0; i < nkw; i++) {
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i),
                                             "requested_schema") != 0) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword %R", fname,
                         PyTuple_GET_ITEM(kwnames, i));
            return -1;
        }
    }
    return 0;
}

static PyObject *
Arr_c_array(ArrowArrObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *sc, *ac, *res;
    if (check_requested(args, nargs, kwnames, "__arrow_c_array__") < 0)
        return NULL;
    sc = new_schema_capsule(self->b->large);
    if (sc == NULL)
        return NULL;
    ac = new_array_capsule(self->b);
    if (ac == NULL) {
        Py_DECREF(sc);
        return NULL;
    }
    res = PyTuple_Pack(2, sc, ac);
    Py_DECREF(sc);
    Py_DECREF(ac);
    return res;
}

static PyObject *
Arr_c_schema(ArrowArrObject *self, PyObject *Py_UNUSED(ignored))
{
    return new_schema_capsule(self->b->large);
}

static PyObject *
Arr_c_stream(ArrowArrObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    struct ArrowArrayStream *s;
    stream_state *x;
    PyObject *cap;
    if (check_requested(args, nargs, kwnames, "__arrow_c_stream__") < 0)
        return NULL;
    s = (struct ArrowArrayStream *)malloc(sizeof *s);
    x = (stream_state *)malloc(sizeof *x);
    if (s == NULL || x == NULL) {
        free(s);
        free(x);
        return PyErr_NoMemory();
    }
    U8P_REF_INC(&self->b->refs);
    x->b = self->b;
    x->done = 0;
    s->get_schema = st_get_schema;
    s->get_next = st_get_next;
    s->get_last_error = st_last_error;
    s->release = st_release;
    s->private_data = x;
    cap = PyCapsule_New(s, "arrow_array_stream", capsule_stream_free);
    if (cap == NULL) {
        s->release(s);
        free(s);
    }
    return cap;
}

static PyObject *
Arr_reduce(ArrowArrObject *self, PyObject *Py_UNUSED(ignored))
{
    (void)self;
    PyErr_SetString(PyExc_TypeError,
                    "cannot pickle an ArrowUtf8Array: convert it to the Arrow library you "
                    "use first (pyarrow.array(x), polars.Series(x)), or send the blob it "
                    "was decoded from");
    return NULL;
}

static Py_ssize_t
Arr_length(ArrowArrObject *self)
{
    return (Py_ssize_t)self->b->length;
}

static PyObject *
Arr_repr(ArrowArrObject *self)
{
    return PyUnicode_FromFormat("<%s %s length=%zd value_bytes=%zd>", Py_TYPE(self)->tp_name,
                                self->b->large ? "large_utf8" : "utf8",
                                (Py_ssize_t)self->b->length, (Py_ssize_t)self->b->nvalues);
}

static PyObject *
Arr_get_type(ArrowArrObject *self, void *Py_UNUSED(closure))
{
    return PyUnicode_FromString(self->b->large ? "large_utf8" : "utf8");
}

static PyObject *
Arr_get_nbytes(ArrowArrObject *self, void *Py_UNUSED(closure))
{
    int64_t w = self->b->large ? 8 : 4;
    return PyLong_FromLongLong((long long)(self->b->nvalues + (self->b->length + 1) * w));
}

static PyObject *
Arr_get_value_bytes(ArrowArrObject *self, void *Py_UNUSED(closure))
{
    return PyLong_FromLongLong((long long)self->b->nvalues);
}

static PyObject *
Arr_get_null_count(ArrowArrObject *self, void *Py_UNUSED(closure))
{
    (void)self;
    return PyLong_FromLong(0);
}

static PyObject *
Arr_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    (void)args;
    (void)kwds;
    PyErr_Format(PyExc_TypeError,
                 "cannot create '%.100s' instances: use decode_arrow() or "
                 "BufferReader.read_strings_arrow()",
                 type->tp_name);
    return NULL;
}

static PyMethodDef Arr_methods[] = {
    {"__arrow_c_array__", (PyCFunction)(void (*)(void))Arr_c_array,
     METH_FASTCALL | METH_KEYWORDS,
     "__arrow_c_array__($self, /, requested_schema=None)\n--\n\n"
     "(schema, array) PyCapsules of the Arrow C data interface; requested_schema is "
     "ignored (the interface allows it)."},
    {"__arrow_c_stream__", (PyCFunction)(void (*)(void))Arr_c_stream,
     METH_FASTCALL | METH_KEYWORDS,
     "__arrow_c_stream__($self, /, requested_schema=None)\n--\n\n"
     "An ArrowArrayStream PyCapsule of one chunk."},
    {"__arrow_c_schema__", (PyCFunction)Arr_c_schema, METH_NOARGS,
     "__arrow_c_schema__($self, /)\n--\n\nThe ArrowSchema PyCapsule (utf8 or large_utf8)."},
    {"__reduce__", (PyCFunction)Arr_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Arr_getset[] = {
    {"type", (getter)Arr_get_type, NULL, "'utf8' or 'large_utf8'.", NULL},
    {"null_count", (getter)Arr_get_null_count, NULL, "Always 0.", NULL},
    {"value_bytes", (getter)Arr_get_value_bytes, NULL, "Bytes in the values buffer.", NULL},
    {"nbytes", (getter)Arr_get_nbytes, NULL, "Bytes in the offsets and values buffers.",
     NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot Arr_slots[] = {
    {Py_tp_new, Arr_new},
    {Py_tp_dealloc, Arr_dealloc},
    {Py_tp_methods, Arr_methods},
    {Py_tp_getset, Arr_getset},
    {Py_tp_repr, Arr_repr},
    {Py_sq_length, Arr_length},
    {Py_tp_doc,
     "An Arrow utf8 (or large_utf8) array decoded from prefixed records.\n\n"
     "Made by decode_arrow() and BufferReader.read_strings_arrow(); hand it to any Arrow\n"
     "consumer (pyarrow.array(x), polars.Series(x), ...) through the Arrow PyCapsule\n"
     "interface: the consumer takes the buffers without a copy."},
    {0, NULL},
};

static PyType_Spec Arr_spec = {
    "utf8pfx.ArrowUtf8Array",
    sizeof(ArrowArrObject),
    0,
    Py_TPFLAGS_DEFAULT,
    Arr_slots,
};

/* A growable malloc'd byte buffer (values under an error handler). */
static int
grow_values(uint8_t **buf, int64_t *cap, int64_t need)
{
    int64_t nc;
    uint8_t *nb;
    if (need <= *cap)
        return 0;
    nc = *cap * 2 > need ? *cap * 2 : need;
    nb = (uint8_t *)realloc(*buf, (size_t)nc);
    if (nb == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *buf = nb;
    *cap = nc;
    return 0;
}

static inline void
set_offset(void *offsets, int large, int64_t i, int64_t v)
{
    if (large)
        ((int64_t *)offsets)[i] = v;
    else
        ((int32_t *)offsets)[i] = (int32_t)v;
}

/* The strict error of record `row` (payload at `off` of the blob). */
static void
record_error(const rd_ctx *c, int64_t row, Py_ssize_t off, Py_ssize_t n, u8p_dec_status st,
             const u8p_scan_result *r)
{
    static const char *const names[] = {"row", "payload_offset", "data_offset"};
    Py_ssize_t vals[3];
    char note[200];
    vals[0] = (Py_ssize_t)row;
    vals[1] = off;
    vals[2] = off + (Py_ssize_t)r->err_start;
    PyOS_snprintf(note, sizeof note,
                  "utf8pfx: invalid UTF-8 at offset %zd of the data (string %lld, whose "
                  "payload starts at offset %zd)",
                  vals[2], (long long)row, off);
    raise_decode_error(c->data + off, n, r, st, note, 3, names, vals);
}

/*
 * The non-strict path: row by row, valid payloads copied, invalid ones
 * decoded with the handler and re-encoded (strictly: Arrow utf8 cannot hold
 * lone surrogates).  Fills b->values/nvalues/offsets (offsets allocated
 * for `count` rows as int64 first, narrowed at the end if they fit).
 */
static int
build_with_handler(const rd_ctx *c, Py_ssize_t start, int64_t count, arrow_block *b)
{
    int64_t i, cap = 0, used = 0;
    uint8_t *vals = NULL;
    int64_t *offs = (int64_t *)malloc((size_t)(count + 1) * sizeof(int64_t));
    Py_ssize_t p = start, off, n;
    const char *ename = PyUnicode_AsUTF8(c->errors);
    if (offs == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (ename == NULL)
        goto fail;
    offs[0] = 0;
    for (i = 0; i < count; i++) {
        u8p_dec_status st;
        u8p_scan_result r;
        ar_record(c, &p, &off, &n); /* proven by the first walk */
        if (value_ok(c->data + off, n, 0, &st, &r)) {
            if (grow_values(&vals, &cap, used + n + 1) < 0)
                goto fail;
            if (n)
                memcpy(vals + used, c->data + off, (size_t)n);
            used += n;
        }
        else {
            Py_ssize_t un;
            const char *u;
            PyObject *s = PyUnicode_DecodeUTF8((const char *)c->data + off, n, ename);
            if (s == NULL)
                goto fail;
            u = PyUnicode_AsUTF8AndSize(s, &un);
            if (u == NULL) {
                Py_DECREF(s);
                PyErr_Clear();
                PyErr_Format(PyExc_ValueError,
                             "string %lld (payload at offset %zd) decodes under errors=%R to "
                             "lone surrogates, which an Arrow utf8 array cannot hold",
                             (long long)i, off, c->errors);
                goto fail;
            }
            if (grow_values(&vals, &cap, used + un + 1) < 0) {
                Py_DECREF(s);
                goto fail;
            }
            memcpy(vals + used, u, (size_t)un);
            used += un;
            Py_DECREF(s);
        }
        offs[i + 1] = used;
    }
    if (vals == NULL && (vals = (uint8_t *)malloc(1)) == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    b->large = used > large_threshold;
    if (!b->large) {
        int32_t *o32 = (int32_t *)offs;
        for (i = 0; i <= count; i++)
            o32[i] = (int32_t)offs[i];
    }
    b->offsets = offs;
    b->values = vals;
    b->nvalues = used;
    return 0;
fail:
    free(offs);
    free(vals);
    return -1;
}

/*
 * Errors come in data order, as for read_strings(): when the walk stops at a
 * bad prefix, an invalid payload among the `count` records before it is the
 * error raised instead (the first one).
 */
static void
earlier_utf8_error(const rd_ctx *c, Py_ssize_t start, int64_t count)
{
    Py_ssize_t p = start, off, n;
    int64_t i;
    err_stash x;
    stash_take(&x);
    for (i = 0; i < count; i++) {
        u8p_dec_status st;
        u8p_scan_result r;
        ar_record(c, &p, &off, &n);
        if (!value_ok(c->data + off, n, 0, &st, &r)) {
            stash_drop(&x);
            record_error(c, i, off, n, st, &r);
            return;
        }
    }
    stash_put(&x);
}

/*
 * Reads `limit` records (all when < 0) at *pos into a new ArrowUtf8Array;
 * *pos moves only on success.
 */
/*
 * Copies the payloads of `count` records (limit >= 0) or of all records up
 * to the end (count < 0) from *p into values (room for what the records
 * hold plus 32 bytes) and fills offsets [1..] (int32 or int64), which must
 * have room for count + 1 entries, or for *ocap entries when count < 0 (then
 * grown as needed: *offs may move).  Short payloads are moved 32 bytes at a
 * time where both sides have the room.  Returns the records read, or -1
 * with an exception (a bad prefix, or no memory); *bad is set when a
 * non-empty payload starts with a continuation byte (so the values, even if
 * valid as one range, are not valid record by record).
 */
static int64_t
copy_records(const rd_ctx *c, Py_ssize_t *pp, int64_t count, void **offs, int64_t *ocap,
             int large, uint8_t *values, int64_t *total, int *bad)
{
    Py_ssize_t p = *pp, off, n;
    const Py_ssize_t safe = c->len - 32; /* payloads starting before it: 32 readable bytes */
    int64_t i = 0, at = 0;
    uint8_t cont = 0;
    for (;;) {
        if (count >= 0 ? i >= count : p >= c->len)
            break;
        if (ar_record(c, &p, &off, &n) < 0) {
            *pp = p;
            *total = at;
            return -1 - i;
        }
        if (count < 0 && i + 1 >= *ocap) {
            int64_t nc = *ocap * 2;
            void *no = realloc(*offs, (size_t)nc * (large ? 8 : 4));
            if (no == NULL) {
                PyErr_NoMemory();
                *total = at;
                return -1 - i - 1; /* not a prefix error: the caller checks PyErr */
            }
            *offs = no;
            *ocap = nc;
        }
        if (n <= 32 && off <= safe)
            memcpy(values + at, c->data + off, 32);
        else if (n)
            memcpy(values + at, c->data + off, (size_t)n);
        if (n)
            cont |= (uint8_t)((c->data[off] & 0xC0) == 0x80);
        at += n;
        i++;
        if (large)
            ((int64_t *)*offs)[i] = at;
        else
            ((int32_t *)*offs)[i] = (int32_t)at;
    }
    *pp = p;
    *total = at;
    *bad = cont;
    return i;
}

/*
 * Reads `limit` records (all when < 0) at *pos into a new ArrowUtf8Array;
 * *pos moves only on success.  Nothing is allocated on the word of a
 * prefix: for all records, the values buffer is sized by the data that
 * remains (which holds them and their prefixes) and one pass parses and
 * copies; for `limit` records a first walk checks every prefix and sums the
 * lengths first.
 */
static PyObject *
read_arrow(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t limit)
{
    Py_ssize_t p = *pos, off, n;
    int64_t count = 0, total = 0, cap, ocap, i, got;
    arrow_block *b;
    ArrowArrObject *obj;
    int ok = 1, bad = 0, large;

    if (limit >= 0) {
        /* walk 1: prefixes and bounds only; nothing allocated yet */
        while (count < limit) {
            if (ar_record(c, &p, &off, &n) < 0) {
                if (c->eh == U8P_ERR_STRICT)
                    earlier_utf8_error(c, *pos, count);
                return NULL;
            }
            total += n;
            count++;
        }
        cap = total;
        ocap = count + 1;
        large = total > large_threshold;
    }
    else {
        cap = c->len - p;
        ocap = cap / 8 + 16;
        large = cap > large_threshold;
    }
    b = (arrow_block *)calloc(1, sizeof *b);
    if (b == NULL)
        return PyErr_NoMemory();
    b->refs = 1;
    b->offsets = malloc((size_t)ocap * (large ? 8 : 4));
    b->values = (uint8_t *)malloc((size_t)cap + 32);
    if (b->offsets == NULL || b->values == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    set_offset(b->offsets, large, 0, 0);
    p = *pos;
    got = copy_records(c, &p, limit >= 0 ? count : -1, &b->offsets, &ocap, large, b->values,
                       &total, &bad);
    if (got < 0) { /* only when reading to the end: a bad prefix or no memory */
        if (!PyErr_ExceptionMatches(PyExc_MemoryError) && c->eh == U8P_ERR_STRICT)
            earlier_utf8_error(c, *pos, -1 - got);
        goto fail;
    }
    count = got;
    if (limit < 0) { /* give back what the prefixes and the offsets' growth took */
        void *nb;
        if (cap - total > cap / 8 && (nb = realloc(b->values, (size_t)total + 32)) != NULL)
            b->values = (uint8_t *)nb;
        if (ocap - (count + 1) > ocap / 8 &&
            (nb = realloc(b->offsets, (size_t)(count + 1) * (large ? 8 : 4))) != NULL)
            b->offsets = nb;
    }
    if (large && total <= large_threshold) { /* the prefixes made the data look large */
        for (i = 0; i <= count; i++)
            ((int32_t *)b->offsets)[i] = (int32_t)((int64_t *)b->offsets)[i];
        large = 0;
    }
    b->length = count;
    b->large = large;
    b->nvalues = total;
    /* UTF-8: the values as one range; each record starts at a code point */
    if (total > 0) {
        u8p_scan_result r;
        ok = !bad && u8p_D->scan(b->values, (size_t)total, 0, &r) == U8P_DEC_OK;
    }
    if (!ok) {
        Py_ssize_t q = *pos;
        if (c->eh == U8P_ERR_STRICT) {
            for (i = 0; i < count; i++) {
                u8p_dec_status st;
                u8p_scan_result r;
                ar_record(c, &q, &off, &n);
                if (!value_ok(c->data + off, n, 0, &st, &r)) {
                    record_error(c, i, off, n, st, &r);
                    goto fail;
                }
            }
            PyErr_SetString(PyExc_SystemError, "utf8pfx: the range scan and the per-record "
                                               "scans disagree (a bug)");
            goto fail;
        }
        free(b->offsets);
        free(b->values);
        b->offsets = NULL;
        b->values = NULL;
        if (build_with_handler(c, *pos, count, b) < 0)
            goto fail;
    }
    b->bufs[0] = NULL;
    b->bufs[1] = b->offsets;
    b->bufs[2] = b->values;
    obj = PyObject_New(ArrowArrObject, arrow_array_type);
    if (obj == NULL)
        goto fail;
    obj->b = b;
    *pos = p;
    return (PyObject *)obj;
fail:
    block_decref(b);
    return NULL;
}

PyObject *
u8p_reader_read_strings_arrow(ReaderObject *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    Py_ssize_t limit, pos;
    rd_ctx c;
    PyObject *res;
    if (u8p_parse_read_n(args, nargs, kwnames, "read_strings_arrow", &limit) < 0)
        return NULL;
    if (u8p_reader_check(self) < 0)
        return NULL;
    c.data = self->data;
    c.len = self->len;
    c.eh = self->eh;
    c.errors = self->errors;
    c.strict_vint = self->strict_vint;
    c.prefix = self->prefix;
    c.enc = self->enc;
    if (c.prefix != U8P_PFX_VARINT || c.enc != U8P_ENC_UTF8) {
        PyErr_SetString(PyExc_ValueError,
                        "read_strings_arrow() reads prefix='varint', encoding='utf-8' "
                        "records only");
        return NULL;
    }
    pos = self->pos;
    self->busy++;
    res = read_arrow(&c, &pos, limit);
    self->busy--;
    if (res != NULL) {
        /* the first walk stopped at the end of the last record */
        self->pos = pos;
    }
    return res;
}

static PyObject *
mod_decode_arrow(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *data, *errors, *res;
    Py_buffer view;
    rd_ctx c;
    Py_ssize_t pos = 0;
    (void)module;
    if (u8p_parse_arg_errors(args, nargs, kwnames, "decode_arrow", &data, &errors) < 0 ||
        u8p_parse_errors(errors, &c.eh, "decode_arrow()") < 0)
        return NULL;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    c.data = (const uint8_t *)view.buf;
    c.len = view.len;
    c.errors = errors;
    c.strict_vint = 0;
    c.prefix = U8P_PFX_VARINT;
    c.enc = U8P_ENC_UTF8;
    if (c.errors == NULL) { /* strict: the name is only used in messages */
        static PyObject *strict_name;
        if (strict_name == NULL && (strict_name = PyUnicode_InternFromString("strict")) == NULL) {
            PyBuffer_Release(&view);
            return NULL;
        }
        c.errors = strict_name;
    }
    res = read_arrow(&c, &pos, -1);
    PyBuffer_Release(&view);
    return res;
}

/* Testing hook: values above n bytes make large_utf8; returns the old n. */
static PyObject *
mod_set_large_threshold(PyObject *module, PyObject *arg)
{
    long long old = (long long)large_threshold, v = PyLong_AsLongLong(arg);
    (void)module;
    if (v == -1 && PyErr_Occurred())
        return NULL;
    if (v < 0 || v > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "threshold must be in [0, 2**31 - 1], got %lld", v);
        return NULL;
    }
    large_threshold = v;
    return PyLong_FromLongLong(old);
}

static PyMethodDef arrow_functions[] = {
    {"decode_arrow", (PyCFunction)(void (*)(void))mod_decode_arrow,
     METH_FASTCALL | METH_KEYWORDS,
     "decode_arrow(data, /, errors='strict')\n--\n\n"
     "Every VInt-prefixed UTF-8 string in a bytes-like object, as an ArrowUtf8Array "
     "(no str per value)."},
    {"_arrow_large_threshold", (PyCFunction)mod_set_large_threshold, METH_O,
     "_arrow_large_threshold(n, /)\n--\n\n"
     "Testing hook: values above n bytes make large_utf8; returns the previous n."},
    {NULL, NULL, 0, NULL},
};

int
u8p_arrow_exec(PyObject *module, u8p_state *st)
{
    PyObject *t;
    (void)st;
    if (s_arrow_c_array == NULL) {
        s_arrow_c_array = PyUnicode_InternFromString("__arrow_c_array__");
        s_arrow_c_stream = PyUnicode_InternFromString("__arrow_c_stream__");
        if (s_arrow_c_array == NULL || s_arrow_c_stream == NULL)
            return -1;
    }
    t = PyType_FromModuleAndSpec(module, &Arr_spec, NULL);
    if (t == NULL)
        return -1;
    if (arrow_array_type == NULL) {
        Py_INCREF(t); /* kept for the life of the process (see the top) */
        arrow_array_type = (PyTypeObject *)t;
    }
    if (PyModule_AddObject(module, "ArrowUtf8Array", t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return PyModule_AddFunctions(module, arrow_functions);
}
