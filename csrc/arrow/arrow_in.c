/*
 * Arrow in: BufferWriter.write_arrow and the Arrow path of write_strings.
 * The design, and the rules for untrusted producers, are described at the
 * top of arrow_internal.h.
 */
#include "arrow_internal.h"

/* ================================================================== in */

typedef enum { AK_UTF8, AK_LARGE_UTF8, AK_VIEW } arrow_kind;

/* Bounded memory (StreamWriter.write_arrow): each chunk is written in
 * slices of rows, and whenever the buffer passes flush_size its bytes are
 * handed, as one bytes object, to a Python callable, and the buffer is
 * emptied.  The slices are plain ArrowArray structs with a shifted offset
 * and length, so the chunk writers (and their fused loops) are the same
 * as for one whole array. */
typedef struct {
    PyObject *cb;           /* cb(data: bytes) */
    PyObject *parcel;       /* a list: data goes into its slot 0 before each call of cb */
    Py_ssize_t flush_size;
    int64_t step;           /* rows per slice, adapted to the bytes a row takes */
    int64_t flushes;        /* calls of cb so far */
    Py_ssize_t handed;      /* bytes handed to cb so far */
} aw_flush;

typedef struct {
    WriterObject *w;
    aw_flush *fl;           /* NULL: all of it into the buffer (write_arrow) */
    nulls_rule nulls;
    arrow_kind kind;
    int allow_surrogates;
    int64_t row_base; /* rows of the earlier chunks */
    int64_t chunk;    /* chunk index, -1 for a single array */
    char index_fmt;   /* dictionary-encoded: the indices' format char, else 0 */
    const char *rowname; /* "row", or "dictionary value" in messages */
    u8p_prefix pf;       /* the writer's preset */
    uint64_t max;        /* the longest value it can carry */
    int mutf8;           /* encoding="mutf-8": values converted row by row */
} aw_ctx;

/* Does this rule write a record (an empty string or the marker) for a null? */
#define WRITES_NULL(c) ((c)->nulls >= NULLS_EMPTY)

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
                 "row %lld is null (nulls='error'): pass nulls='skip' to leave nulls out, "
                 "nulls='empty' to write them as empty strings (or use prefix='varint+1', "
                 "whose null marker nulls='null' writes)",
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

/* OverflowError: row i's value (m bytes as written) is too long for the
 * preset's fixed width. */
static int
too_long(const aw_ctx *c, int64_t i, uint64_t m)
{
    PyObject *name = u8p_prefix_name(c->pf);
    if (name != NULL) {
        PyErr_Format(PyExc_OverflowError,
                     "write_arrow(): %s %lld is %llu bytes long%s, too long for prefix=%R "
                     "(at most %llu bytes); nothing was written",
                     c->rowname, (long long)(c->row_base + i), (unsigned long long)m,
                     c->mutf8 ? " as MUTF-8" : "", name, (unsigned long long)c->max);
        Py_DECREF(name);
    }
    return -1;
}

/* Appends the record of a null (nulls='empty' or 'null'). */
static int
put_null_row(const aw_ctx *c)
{
    WriterObject *w = c->w;
    if (u8p_writer_reserve(w, aw_null_size(c->pf, c->nulls)) < 0)
        return -1;
    w->len = (Py_ssize_t)(aw_put_null(c->pf, c->nulls, w->buf + w->len) - w->buf);
    return 0;
}

/*
 * Appends row i's value p[0:n] on the row-by-row road: validated, then
 * copied (UTF-8 writers) or widened to MUTF-8 (00 -> C0 80, a 4-byte
 * sequence -> two 3-byte surrogate forms: u8p_mutf8_widen, in place after
 * the copy; a value without either is the plain copy); an invalid value
 * under strict raises its UnicodeDecodeError, under another handler it is
 * written as write_string(value.decode("utf-8", errors)) would.
 */
static int
put_row(const aw_ctx *c, int64_t i, const uint8_t *p, Py_ssize_t n, int64_t at)
{
    WriterObject *w = c->w;
    Py_ssize_t m = n;
    u8p_dec_status st = U8P_DEC_OK;
    u8p_scan_result r;
    uint8_t *dst;
    if (!value_ok(p, n, c->allow_surrogates, &st, &r)) {
        if (w->eh == U8P_ERR_STRICT)
            return value_error(c, i, p, n, at, st, &r);
        return put_via_handler(c, i, p, n) < 0 ? -1 : 0;
    }
    if (c->mutf8)
        m = aw_mutf8_size(p, n);
    if ((uint64_t)m > c->max)
        return too_long(c, i, (uint64_t)m);
    if (u8p_writer_reserve(w, aw_record_size(c->pf, m)) < 0)
        return -1;
    dst = w->buf + w->len;
    dst += u8p_prefix_write(c->pf, dst, (uint64_t)m);
    if (n)
        memcpy(dst, p, (size_t)n);
    if (m != n)
        u8p_mutf8_widen(dst, (size_t)n, (size_t)m);
    w->len = (Py_ssize_t)(dst + m - w->buf);
    return 0;
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
seg_put(seg_state *g, u8p_prefix pf, uint8_t *dst, const uint8_t *src, Py_ssize_t n, int slack)
{
    uint8_t *end;
    if (aw_prefix_ascii(pf, n))
        return aw_put_record(pf, dst, src, n, slack);
    seg_scan(g, dst);
    end = aw_put_record(pf, dst, src, n, 0);
    g->run = end - n;
    return end;
}

/* One record of a MUTF-8 writer in the fused pass: a value without 00 or
 * F0..FF bytes is the same in MUTF-8 (seg_put); another is validated on its
 * own (the run split around it, as its MUTF-8 is not UTF-8), then widened
 * in place.  m: its MUTF-8 length (aw_mutf8_size). */
static inline uint8_t *
seg_put_mutf8(seg_state *g, u8p_prefix pf, uint8_t *dst, const uint8_t *src, Py_ssize_t n,
              Py_ssize_t m, int slack)
{
    u8p_dec_status st;
    u8p_scan_result r;
    uint8_t *body;
    if (m == n)
        return seg_put(g, pf, dst, src, n, slack);
    seg_scan(g, dst);
    if (!value_ok(src, n, g->allow_surrogates, &st, &r)) {
        g->ok = 0; /* the row-by-row search finds it */
        return dst;
    }
    body = dst + u8p_prefix_write(pf, dst, (uint64_t)m);
    memcpy(body, src, (size_t)n);
    u8p_mutf8_widen(body, (size_t)n, (size_t)m);
    g->run = body + m;
    return body + m;
}

static inline uint8_t *
seg_put_null(seg_state *g, u8p_prefix pf, nulls_rule rule, uint8_t *dst)
{
    uint8_t *end;
    if (aw_null_ascii(pf, rule))
        return aw_put_null(pf, rule, dst);
    seg_scan(g, dst);
    end = aw_put_null(pf, rule, dst);
    g->run = end;
    return end;
}

/*
 * A string_view chunk whose structure pass 1 has checked, its pointers
 * read once: the byte stores of pass 2 may alias anything, so fields read
 * through the ArrowArray in the loop would be loaded again for every value.
 */
typedef struct {
    const uint8_t *views;        /* the chunk's first view (its offset applied) */
    const void *const *data;     /* the variadic data buffers */
    const int64_t *sizes;        /* their sizes in bytes */
    int64_t length;
} view_src;

static inline view_src
view_src_of(const struct ArrowArray *a)
{
    view_src s;
    s.views = (const uint8_t *)a->buffers[1] + 16 * a->offset;
    s.data = a->buffers + 2;
    s.sizes = (const int64_t *)a->buffers[a->n_buffers - 1];
    s.length = a->length;
    return s;
}

/* Value i: its bytes, and whether 32 bytes can be read from them (*over). */
static inline void
view_fast(const view_src *s, int64_t i, const uint8_t **p, Py_ssize_t *n, int *over)
{
    const uint8_t *v = s->views + 16 * i;
    int32_t size, idx, off;
    memcpy(&size, v, 4);
    if (size <= 12) {
        *p = v + 4;
        *n = size;
        *over = i + 3 <= s->length; /* 32 bytes from v + 4 stay in the views */
        return;
    }
    memcpy(&idx, v + 8, 4);
    memcpy(&off, v + 12, 4);
    *p = (const uint8_t *)s->data[idx] + off;
    *n = size;
    *over = (int64_t)off + 32 <= s->sizes[idx];
}

/*
 * Pass 2 of a utf8 / large_utf8 chunk (and of a string_view one, below):
 * writes every record at dst, scanning the runs; returns the end, *ok
 * whether all was valid.  Forced inline and called with a constant preset
 * for "varint", so the default keeps its one-byte moves with no switch in
 * the loop (the preset is a parameter, not a load the byte stores alias).
 */
U8P_ALWAYS_INLINE uint8_t *
fused_offsets(u8p_prefix pf, int mutf8, nulls_rule nulls, int allow_surrogates,
              const uint8_t *validity, const void *offsets, int large, const uint8_t *values,
              int64_t base, int64_t len, int64_t last, uint8_t *dst, int slack, int *ok)
{
    int64_t i;
    seg_state g;
    g.run = dst;
    g.ok = 1;
    g.allow_surrogates = allow_surrogates;
    for (i = 0; i < len; i++) {
        int64_t s, e;
        if (!row_valid(validity, base + i)) {
            if (nulls >= NULLS_EMPTY)
                dst = seg_put_null(&g, pf, nulls, dst);
            continue;
        }
        s = offset_at(offsets, large, base + i);
        e = offset_at(offsets, large, base + i + 1);
        if (mutf8)
            dst = seg_put_mutf8(&g, pf, dst, values + s, (Py_ssize_t)(e - s),
                                aw_mutf8_size(values + s, (Py_ssize_t)(e - s)),
                                slack && s + 32 <= last);
        else
            dst = seg_put(&g, pf, dst, values + s, (Py_ssize_t)(e - s),
                          slack && s + 32 <= last);
        if (mutf8 && !g.ok)
            break;
    }
    seg_scan(&g, dst);
    *ok = g.ok;
    return dst;
}

U8P_ALWAYS_INLINE uint8_t *
fused_views(u8p_prefix pf, int mutf8, nulls_rule nulls, int allow_surrogates,
            const uint8_t *validity, const struct ArrowArray *a, uint8_t *dst, int slack,
            int *ok)
{
    int64_t i;
    seg_state g;
    const uint8_t *p;
    Py_ssize_t n;
    int room;
    const int64_t len = a->length, base = a->offset;
    const view_src src = view_src_of(a);
    g.run = dst;
    g.ok = 1;
    g.allow_surrogates = allow_surrogates;
    for (i = 0; i < len; i++) {
        if (!row_valid(validity, base + i)) {
            if (nulls >= NULLS_EMPTY)
                dst = seg_put_null(&g, pf, nulls, dst);
            continue;
        }
        view_fast(&src, i, &p, &n, &room);
        if (mutf8) {
            dst = seg_put_mutf8(&g, pf, dst, p, n, aw_mutf8_size(p, n), slack && room);
            if (!g.ok)
                break;
        }
        else
            dst = seg_put(&g, pf, dst, p, n, slack && room);
    }
    seg_scan(&g, dst);
    *ok = g.ok;
    return dst;
}

U8P_NOINLINE uint8_t *
fused_offsets_any(u8p_prefix pf, int mutf8, nulls_rule nulls, int allow_surrogates,
                  const uint8_t *validity, const void *offsets, int large,
                  const uint8_t *values, int64_t base, int64_t len, int64_t last, uint8_t *dst,
                  int slack, int *ok)
{
    return fused_offsets(pf, mutf8, nulls, allow_surrogates, validity, offsets, large, values,
                         base, len, last, dst, slack, ok);
}

U8P_NOINLINE uint8_t *
fused_views_varint(nulls_rule nulls, int allow_surrogates, const uint8_t *validity,
                   const struct ArrowArray *a, uint8_t *dst, int slack, int *ok)
{
    return fused_views(U8P_PFX_VARINT, 0, nulls, allow_surrogates, validity, a, dst, slack, ok);
}

U8P_NOINLINE uint8_t *
fused_views_any(u8p_prefix pf, int mutf8, nulls_rule nulls, int allow_surrogates,
                const uint8_t *validity, const struct ArrowArray *a, uint8_t *dst, int slack,
                int *ok)
{
    return fused_views(pf, mutf8, nulls, allow_surrogates, validity, a, dst, slack, ok);
}

/* Pass 1 of a utf8 / large_utf8 chunk: the structure, the first null (or
 * value too long for the preset: *over), the bytes the records take.
 * Forced inline with a constant preset for "varint" (never too long). */
U8P_ALWAYS_INLINE int
size_offsets(const aw_ctx *c, u8p_prefix pf, const uint8_t *validity, const void *offsets,
             int large, int64_t base, int64_t len, Py_ssize_t *ptotal, int64_t *pfirst_null,
             int *pover)
{
    int64_t i, first_null = -1;
    Py_ssize_t total = 0;
    int over = 0;
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
            else if (WRITES_NULL(c))
                total += aw_null_size(pf, c->nulls);
            continue;
        }
        if (e - s > PY_SSIZE_T_MAX / 2 || total > PY_SSIZE_T_MAX / 2)
            return malformed(c, "row %lld is %lld bytes long", (long long)(c->row_base + i),
                             (long long)(e - s));
        if ((uint64_t)(e - s) > u8p_prefix_max(pf) && first_null < 0) {
            first_null = i; /* the rows from here on are never written */
            over = 1;
        }
        total += aw_record_size(pf, (Py_ssize_t)(e - s));
    }
    *ptotal = total;
    *pfirst_null = first_null;
    *pover = over;
    return 0;
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
    int over = 0; /* first_null is a value too long for the preset, not a null */
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
    if ((c->pf == U8P_PFX_VARINT
             ? size_offsets(c, U8P_PFX_VARINT, validity, offsets, large, base, len, &total,
                            &first_null, &over)
             : size_offsets(c, c->pf, validity, offsets, large, base, len, &total,
                            &first_null, &over)) < 0)
        return -1;
    last = offset_at(offsets, large, base + len);
    if (last > first && values == NULL)
        return malformed(c, "the values buffer is NULL while the offsets span %lld bytes",
                         (long long)(last - first));
    if (c->mutf8 && first_null < 0) {
        /* MUTF-8: the records' sizes as written (the structure is proven) */
        total = 0;
        for (i = 0; i < len; i++) {
            int64_t s = offset_at(offsets, large, base + i);
            Py_ssize_t m;
            if (!row_valid(validity, base + i)) {
                if (WRITES_NULL(c))
                    total += aw_null_size(c->pf, c->nulls);
                continue;
            }
            m = aw_mutf8_size(values + s, (Py_ssize_t)(offset_at(offsets, large, base + i + 1) - s));
            if ((uint64_t)m > c->max || total > PY_SSIZE_T_MAX / 4) {
                first_null = i; /* refused by put_row, row by row, in order */
                over = 2;
                break;
            }
            total += aw_record_size(c->pf, m);
        }
    }

    if (first_null < 0) { /* pass 2: copy, validate the runs, commit */
        uint8_t *dst;
        int slack, ok;
        if (u8p_writer_reserve(w, total) < 0)
            return -1;
        slack = w->cap - w->len >= total + 32;
        if (c->pf == U8P_PFX_VARINT && !c->mutf8)
            dst = fused_offsets(U8P_PFX_VARINT, 0, c->nulls, c->allow_surrogates, validity,
                                offsets, large, values, base, len, last, w->buf + w->len,
                                slack, &ok);
        else
            dst = fused_offsets_any(c->pf, c->mutf8, c->nulls, c->allow_surrogates, validity,
                                    offsets, large, values, base, len, last, w->buf + w->len,
                                    slack, &ok);
        if (ok) {
            w->len = (Py_ssize_t)(dst - w->buf);
            return 0;
        }
    }
    /* an error somewhere (or a MUTF-8 writer): the first invalid non-null
     * row before the first stop (a null that nulls='error' refuses, or a
     * value too long for the preset; nulls may hold anything) */
    for (i = 0; i < (first_null >= 0 ? first_null : len); i++) {
        int64_t s = offset_at(offsets, large, base + i);
        int64_t e = offset_at(offsets, large, base + i + 1);
        if (row_valid(validity, base + i) &&
            !value_ok(values + s, (Py_ssize_t)(e - s), c->allow_surrogates, &st, &r)) {
            first_bad = i;
            break;
        }
    }
    if (first_bad < 0 && first_null >= 0 && over == 2)
        first_null = -1; /* MUTF-8 too long: put_row raises it below */
    else if (first_bad < 0 && first_null >= 0) {
        if (over) {
            int64_t s = offset_at(offsets, large, base + first_null);
            Py_ssize_t n = (Py_ssize_t)(offset_at(offsets, large, base + first_null + 1) - s);
            return too_long(c, first_null,
                            (uint64_t)(c->mutf8 ? aw_mutf8_size(values + s, n) : n));
        }
        return null_error(c, first_null);
    }
    if (first_bad < 0 && first_null < 0 && !over) {
        PyErr_SetString(PyExc_SystemError,
                        "utf8pfx: the run scan and the per-row scans disagree (a bug)");
        return -1;
    }
    if (first_bad >= 0 && w->eh == U8P_ERR_STRICT) {
        int64_t s = offset_at(offsets, large, base + first_bad);
        int64_t e = offset_at(offsets, large, base + first_bad + 1);
        return value_error(c, first_bad, values + s, (Py_ssize_t)(e - s), s, st, &r);
    }
    /* row by row (an error handler, or MUTF-8): the invalid ones through
     * the codec; a null that nulls='error' refuses or a value too long for
     * the preset stops it (the writer is rolled back) */
    for (i = 0; i < len; i++) {
        int64_t s, e;
        if (!row_valid(validity, base + i)) {
            if (c->nulls == NULLS_ERROR)
                return null_error(c, i);
            if (WRITES_NULL(c) && put_null_row(c) < 0)
                return -1;
            continue;
        }
        s = offset_at(offsets, large, base + i);
        e = offset_at(offsets, large, base + i + 1);
        if (put_row(c, i, values + s, (Py_ssize_t)(e - s), s) < 0)
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

/*
 * Pass 1 of a string_view chunk, as a well-formed producer sends it: the
 * bytes its records take, or -1 when any view is out of bounds, a value
 * too long for the preset or a row null under nulls='error'; the careful
 * loop of write_view_chunk then finds and names the first fault.  Each
 * check is a branch never taken, with nothing to format, so the loop is a
 * load and an add per view (view_value's error paths kept it a call per
 * view).  Not for MUTF-8, whose sizes need each value's bytes.
 */
static int64_t
views_size(const aw_ctx *c, const struct ArrowArray *a, const uint8_t *validity)
{
    const view_src s = view_src_of(a);
    const int64_t null_size = WRITES_NULL(c) ? aw_null_size(c->pf, c->nulls) : 0;
    const uint64_t nvar = (uint64_t)(a->n_buffers - 3);
    const u8p_prefix pf = c->pf;
    const uint64_t max = c->max;
    const uint8_t *v = s.views;
    const int64_t base = a->offset;
    int64_t i, total = 0;
    uint64_t j;
    if (nvar > 0 && s.sizes == NULL)
        return -1;
    for (j = 0; j < nvar; j++)
        if (s.data[j] == NULL)
            return -1;
    for (i = 0; i < s.length; i++, v += 16) {
        int32_t size, idx, off;
        if (!row_valid(validity, base + i)) {
            if (c->nulls == NULLS_ERROR)
                return -1;
            total += null_size;
            continue;
        }
        memcpy(&size, v, 4);
        if ((uint32_t)size > 12) { /* in a data buffer, or negative */
            memcpy(&idx, v + 8, 4);
            memcpy(&off, v + 12, 4);
            if (size < 0 || (uint64_t)(uint32_t)idx >= nvar || off < 0
                || (int64_t)off + size > s.sizes[idx])
                return -1;
        }
        if ((uint64_t)size > max)
            return -1;
        total += aw_record_size(pf, size);
    }
    return total;
}

/* One string_view chunk. */
static int
write_view_chunk(const aw_ctx *c, const struct ArrowArray *a)
{
    const int64_t len = a->length, base = a->offset;
    const uint8_t *validity = a->null_count == 0 ? NULL : (const uint8_t *)a->buffers[0];
    int64_t i = 0, first_null = -1, first_bad = -1;
    int over = 0; /* first_null is a value too long for the preset */
    Py_ssize_t total, n;
    const uint8_t *p;
    u8p_dec_status st = U8P_DEC_OK;
    u8p_scan_result r;
    WriterObject *w = c->w;

    /* pass 1: structure, nulls, size */
    if (!c->mutf8 && (total = views_size(c, a, validity)) >= 0)
        i = len;
    else
        total = 0;
    for (; i < len; i++) {
        if (!row_valid(validity, base + i)) {
            if (c->nulls == NULLS_ERROR) {
                if (first_null < 0)
                    first_null = i;
            }
            else if (WRITES_NULL(c))
                total += aw_null_size(c->pf, c->nulls);
            continue;
        }
        if (view_value(c, a, i, &p, &n) < 0)
            return -1;
        if (c->mutf8)
            n = aw_mutf8_size(p, n); /* the size as written */
        if ((uint64_t)n > c->max && first_null < 0) {
            first_null = i;
            over = 1;
        }
        total += aw_record_size(c->pf, n);
    }
    if (first_null < 0) { /* pass 2: copy, validate the runs, commit */
        uint8_t *dst;
        int slack, ok;
        if (u8p_writer_reserve(w, total) < 0)
            return -1;
        slack = w->cap - w->len >= total + 32;
        if (c->pf == U8P_PFX_VARINT && !c->mutf8)
            dst = fused_views_varint(c->nulls, c->allow_surrogates, validity, a,
                                     w->buf + w->len, slack, &ok);
        else
            dst = fused_views_any(c->pf, c->mutf8, c->nulls, c->allow_surrogates, validity, a,
                                  w->buf + w->len, slack, &ok);
        if (ok) {
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
    if (first_bad < 0 && first_null >= 0) {
        if (over) {
            view_value(c, a, first_null, &p, &n);
            return too_long(c, first_null,
                            (uint64_t)(c->mutf8 ? aw_mutf8_size(p, n) : n));
        }
        return null_error(c, first_null);
    }
    if (first_bad < 0) {
        PyErr_SetString(PyExc_SystemError,
                        "utf8pfx: the run scan and the per-row scans disagree (a bug)");
        return -1;
    }
    if (first_bad >= 0 && w->eh == U8P_ERR_STRICT)
        return value_error(c, first_bad, p, n, -1, st, &r);
    for (i = 0; i < len; i++) {
        if (!row_valid(validity, base + i)) {
            if (c->nulls == NULLS_ERROR)
                return null_error(c, i);
            if (WRITES_NULL(c) && put_null_row(c) < 0)
                return -1;
            continue;
        }
        view_value(c, a, i, &p, &n);
        if (put_row(c, i, p, n, -1) < 0)
            return -1;
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
        const view_src src = view_src_of(d);
        view_fast(&src, k, p, n, &over);
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
    int64_t i, k, dlen, first_null = -1, first_bad = -1, first_over = -1;
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
                if ((uint64_t)n > c->max && first_over < 0)
                    first_over = i;
                total += aw_record_size(c->pf, n);
                continue;
            }
        }
        if (c->nulls == NULLS_ERROR) {
            if (first_null < 0)
                first_null = i;
        }
        else if (WRITES_NULL(c))
            total += aw_null_size(c->pf, c->nulls);
    }
    if (first_over >= 0 && (first_null < 0 || first_over < first_null) &&
        (first_bad < 0 || first_over < first_bad)) {
        k = index_at(a->buffers[1], c->index_fmt, a->offset + first_over);
        dict_entry(&dc, d, k, &p, &n);
        too_long(c, first_over, (uint64_t)n);
        goto done;
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
                if (c->mutf8 || (uint64_t)n > c->max) { /* converted, or refused */
                    if (put_row(c, i, p, n,
                                dc.kind == AK_VIEW
                                    ? -1
                                    : (int64_t)(p - (const uint8_t *)d->buffers[2])) < 0)
                        goto done;
                    continue;
                }
                if (u8p_writer_reserve(w, aw_record_size(c->pf, n)) < 0)
                    goto done;
                w->len =
                    (Py_ssize_t)(aw_put_record(c->pf, w->buf + w->len, p, n, 0) - w->buf);
                continue;
            }
        }
        if (WRITES_NULL(c) && put_null_row(c) < 0)
            goto done;
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

/* ------------------------------------------------- bounded memory (fl) */

/* Hands the buffer to fl->cb as one bytes object and empties it.  The
 * bytes are the caller's from here on: they go into fl->parcel's slot 0
 * first (no allocation: a slot replaced), so that a callable that fails
 * before its first line runs (its frame not allocated) leaves them there
 * for the caller; the callable takes them out as it starts, and keeps
 * what its sink does not take.  A copy, not a view: the buffer is written
 * again at once, and a sink may keep what it is given. */
static int
flush_now(aw_ctx *c)
{
    WriterObject *w = c->w;
    aw_flush *fl = c->fl;
    PyObject *data, *r;
    if (w->exports > 0)
        return 0; /* a view pins the bytes: they stay (growing raises BufferError) */
    data = PyBytes_FromStringAndSize((const char *)w->buf, w->len);
    if (data == NULL)
        return -1;
    fl->handed += w->len;
    w->len = 0;
    fl->flushes++;
    if (PyList_GET_SIZE(fl->parcel) >= 1) { /* the caller's list: it may have emptied it */
        PyObject *old = PyList_GET_ITEM(fl->parcel, 0);
        Py_INCREF(data);
        PyList_SET_ITEM(fl->parcel, 0, data);
        Py_XDECREF(old);
    }
    r = PyObject_CallOneArg(fl->cb, data);
    Py_DECREF(data);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* Rows [0, len) of `a`, as an array of its own. */
static struct ArrowArray
slice_of(const struct ArrowArray *a, int64_t from, int64_t len)
{
    struct ArrowArray s = *a;
    s.offset = a->offset + from;
    s.length = len;
    if (a->null_count != 0)
        s.null_count = -1; /* unknown for the slice: the validity bits say */
    return s;
}

/* After a slice failed once a flush has happened (so all or nothing no
 * longer holds): writes again, halving, the rows of the slice before the
 * failing one, so that every row before it is kept, as StreamWriter's
 * write_strings keeps every record before a failing item.  Their own
 * errors are dropped: the caller raises the first one. */
static void
keep_rows_before_failure(aw_ctx *c, const struct ArrowArray *s)
{
    int64_t from = 0, len = s->length;
    while (len > 1) {
        int64_t half = len / 2;
        struct ArrowArray h = slice_of(s, from, half);
        Py_ssize_t before = c->w->len;
        int64_t base = c->row_base;
        if (write_chunk(c, &h) == 0) { /* the failure is in the second half */
            from += half;
            len -= half;
        }
        else {
            PyErr_Clear();
            c->w->len = before;
            c->row_base = base;
            len = half;
        }
    }
}

static int
write_chunk_flushing(aw_ctx *c, const struct ArrowArray *a)
{
    aw_flush *fl = c->fl;
    int64_t done = 0, len = a->length;
    if (len <= 0 || a->offset < 0 || a->offset > INT64_MAX - len - 1)
        return write_chunk(c, a); /* nothing to slice, or malformed: reported there */
    if (c->index_fmt && a->dictionary != NULL && fl->step < a->dictionary->length)
        fl->step = a->dictionary->length; /* each slice checks the dictionary whole */
    while (done < len) {
        int64_t k = len - done < fl->step ? len - done : fl->step;
        struct ArrowArray s = slice_of(a, done, k);
        Py_ssize_t before = c->w->len;
        if (write_chunk(c, &s) < 0) {
            if (fl->flushes > 0) {
                PyObject *exc = u8p_exc_take();
                c->w->len = before;
                keep_rows_before_failure(c, &s);
                u8p_exc_raise(exc);
            }
            return -1;
        }
        done += k;
        /* the next slice: about an eighth of flush_size at the bytes per row
         * seen, so the buffer passes flush_size by at most a slice */
        if (c->w->len > before) {
            double per_row = (double)(c->w->len - before) / (double)k;
            double want = (double)fl->flush_size / 8.0 / per_row;
            fl->step = want < 64.0 ? 64 : want > 1048576.0 ? 1048576 : (int64_t)want;
        }
        if (c->w->len >= fl->flush_size && flush_now(c) < 0)
            return -1;
    }
    return 0;
}

static int
write_chunk_any(aw_ctx *c, const struct ArrowArray *a)
{
    return c->fl != NULL ? write_chunk_flushing(c, a) : write_chunk(c, a);
}

static void
release_schema(struct ArrowSchema *s)
{
    u8p_err_stash x;
    u8p_stash_take(&x);
    if (s->release != NULL)
        s->release(s);
    u8p_stash_put(&x);
}

static void
release_array(struct ArrowArray *a)
{
    u8p_err_stash x;
    u8p_stash_take(&x);
    if (a->release != NULL)
        a->release(a);
    u8p_stash_put(&x);
}

static void
release_stream(struct ArrowArrayStream *s)
{
    u8p_err_stash x;
    u8p_stash_take(&x);
    if (s->release != NULL)
        s->release(s);
    u8p_stash_put(&x);
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
    PyObject *res = u8p_call_method_interned(obj, "__arrow_c_array__", NULL);
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
        rc = write_chunk_any(c, &array);
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
    PyObject *cap = u8p_call_method_interned(obj, "__arrow_c_stream__", NULL);
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
        code = write_chunk_any(c, &array);
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


/* Whether a type (or a base) defines `name`, looked up in the dicts of its
 * MRO as attribute lookup does, without making (or, under memory pressure,
 * swallowing) an AttributeError; -1 with an exception only if a dict lookup
 * fails. */
static int
type_defines(PyTypeObject *tp, PyObject *name)
{
    PyObject *mro = tp->tp_mro;
    Py_ssize_t i, n;
    if (mro == NULL)
        return 0;
    n = PyTuple_GET_SIZE(mro);
    for (i = 0; i < n; i++) {
        PyObject *dict = ((PyTypeObject *)PyTuple_GET_ITEM(mro, i))->tp_dict;
        if (dict != NULL) {
            PyObject *v = PyDict_GetItemWithError(dict, name);
            if (v != NULL)
                return 1;
            if (PyErr_Occurred())
                return -1;
        }
    }
    return 0;
}

/* After a flush, a failure keeps the rows before it, in the buffer or
 * handed over: the exception being raised says how many
 * (records_accepted). */
static void
note_accepted(int64_t rows)
{
    PyObject *exc = u8p_exc_take(), *v = PyLong_FromLongLong((long long)rows);
    if (v == NULL || PyObject_SetAttrString(exc, "records_accepted", v) < 0)
        PyErr_Clear(); /* no memory for it, or a type that refuses attributes */
    Py_XDECREF(v);
    u8p_exc_raise(exc);
}

/* write_arrow's body, nulls = 0 ("error"), 1 ("skip"), 2 ("empty"), 3
 * ("null": the preset's marker) or -1 (the default: "null" under
 * varint+1, else "error"). */
static PyObject *
write_arrow_obj(const u8p_state *st, WriterObject *w, PyObject *obj, int nulls, aw_flush *fl)
{
    aw_ctx c;
    Py_ssize_t start = w->len;
    int rc;

    if (u8p_writer_check_idle(w) < 0)
        return NULL;
    if (nulls < 0) /* the default: the preset's null marker if it has one */
        nulls = u8p_prefix_has_null(w->prefix) ? NULLS_MARKER : NULLS_ERROR;
    if (nulls == NULLS_MARKER && !u8p_prefix_has_null(w->prefix)) {
        PyObject *name = u8p_prefix_name(w->prefix);
        if (name != NULL) {
            PyErr_Format(PyExc_ValueError,
                         "write_arrow(nulls='null') needs a prefix format with a null marker "
                         "(prefix='varint+1'); this writer's prefix is %R",
                         name);
            Py_DECREF(name);
        }
        return NULL;
    }
    c.w = w;
    c.fl = fl;
    if (fl != NULL) {
        fl->flushes = 0;
        fl->handed = 0;
        fl->step = 64; /* rows of the first slice, before a row's bytes are known */
    }
    c.nulls = (nulls_rule)nulls;
    c.pf = w->prefix;
    c.max = u8p_prefix_max(w->prefix);
    if (c.max > (uint64_t)PY_SSIZE_T_MAX)
        c.max = (uint64_t)PY_SSIZE_T_MAX;
    c.mutf8 = w->enc == U8P_ENC_MUTF8;
    c.kind = AK_UTF8;
    c.allow_surrogates = w->eh == U8P_ERR_SURROGATEPASS;
    c.row_base = 0;
    c.chunk = -1;
    c.index_fmt = 0;
    c.rowname = "row";
    w->busy = 1;
    if ((rc = type_defines(Py_TYPE(obj), st->str_arrow_c_array)) != 0)
        rc = rc < 0 ? -1 : write_from_array(&c, obj);
    else if ((rc = type_defines(Py_TYPE(obj), st->str_arrow_c_stream)) != 0)
        rc = rc < 0 ? -1 : write_from_stream(&c, obj);
    else {
        PyErr_Format(PyExc_TypeError,
                     "write_arrow() argument must export Arrow data (__arrow_c_array__ or "
                     "__arrow_c_stream__), not %.200s",
                     Py_TYPE(obj)->tp_name);
        rc = -1;
    }
    w->busy = 0;
    if (rc == 0) {
        PyObject *res =
            PyLong_FromSsize_t(fl != NULL ? fl->handed + w->len - start : w->len - start);
        if (res != NULL)
            return res;
    }
    /* failed (or its result could not be made) */
    if (fl == NULL || fl->flushes == 0)
        w->len = start; /* all or nothing */
    else
        note_accepted(c.row_base);
    return NULL;
}

/* write_arrow's nulls= argument: None (-1, the preset's default), or a
 * rule's name. */
static int
parse_nulls(PyObject *nulls_obj, int *nulls)
{
    *nulls = -1;
    if (nulls_obj != NULL && nulls_obj != Py_None) {
        if (!PyUnicode_Check(nulls_obj)) {
            PyErr_Format(PyExc_TypeError, "write_arrow() nulls must be str or None, not %.200s",
                         Py_TYPE(nulls_obj)->tp_name);
            return -1;
        }
        if (PyUnicode_CompareWithASCIIString(nulls_obj, "error") == 0)
            *nulls = NULLS_ERROR;
        else if (PyUnicode_CompareWithASCIIString(nulls_obj, "skip") == 0)
            *nulls = NULLS_SKIP;
        else if (PyUnicode_CompareWithASCIIString(nulls_obj, "empty") == 0)
            *nulls = NULLS_EMPTY;
        else if (PyUnicode_CompareWithASCIIString(nulls_obj, "null") == 0)
            *nulls = NULLS_MARKER;
        else {
            PyErr_Format(PyExc_ValueError,
                         "write_arrow() nulls must be 'error', 'skip', 'empty' or 'null', "
                         "got %R",
                         nulls_obj);
            return -1;
        }
    }
    return 0;
}

/* BufferWriter.write_arrow(array, /, *, nulls=None), behind the writer's
 * lock like every writer method. */
static PyObject *
Writer_write_arrow(WriterObject *w, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *nulls_obj = NULL;
    int nulls = -1; /* the preset's default */
    const u8p_state *st;
    u8p_objlock_wait(&w->nogil);
    if ((st = u8p_state_of_type(Py_TYPE(w))) == NULL)
        return NULL;
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
    if (parse_nulls(nulls_obj, &nulls) < 0)
        return NULL;
    return write_arrow_obj(st, w, args[0], nulls, NULL);
}

/* BufferWriter._write_arrow_flushing(array, nulls, flush_size, flush, parcel, /):
 * StreamWriter.write_arrow's bounded-memory path (see aw_flush and
 * flush_now).  Private: flush(data) must not touch the writer (it is busy
 * meanwhile); parcel is a list of one slot at least.
 * Returns the bytes the call produced, flushed ones included. */
static PyObject *
Writer_write_arrow_flushing(WriterObject *w, PyObject *const *args, Py_ssize_t nargs)
{
    aw_flush fl;
    int nulls;
    const u8p_state *st;
    u8p_objlock_wait(&w->nogil);
    if ((st = u8p_state_of_type(Py_TYPE(w))) == NULL)
        return NULL;
    if (nargs != 5) {
        PyErr_Format(PyExc_TypeError,
                     "_write_arrow_flushing() takes exactly 5 arguments (%zd given)", nargs);
        return NULL;
    }
    if (parse_nulls(args[1], &nulls) < 0)
        return NULL;
    fl.flush_size = PyLong_AsSsize_t(args[2]);
    if (fl.flush_size == -1 && PyErr_Occurred())
        return NULL;
    if (fl.flush_size < 1) {
        PyErr_SetString(PyExc_ValueError, "_write_arrow_flushing() flush_size must be >= 1");
        return NULL;
    }
    if (!PyCallable_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "_write_arrow_flushing() flush must be callable");
        return NULL;
    }
    if (!PyList_CheckExact(args[4]) || PyList_GET_SIZE(args[4]) < 1) {
        PyErr_SetString(PyExc_TypeError, "_write_arrow_flushing() parcel must be a list of one item");
        return NULL;
    }
    fl.cb = args[3];
    fl.parcel = args[4];
    return write_arrow_obj(st, w, args[0], nulls, &fl);
}

int
u8p_arrow_in_hook_fn(PyObject *writer, PyObject *obj, PyObject **result)
{
    const u8p_state *st = u8p_state_of_type(Py_TYPE(writer));
    int r;
    if (st == NULL)
        return -1;
    r = type_defines(Py_TYPE(obj), st->str_arrow_c_array);
    if (r == 0)
        r = type_defines(Py_TYPE(obj), st->str_arrow_c_stream);
    if (r > 0)
        *result = write_arrow_obj(st, (WriterObject *)writer, obj, -1, NULL);
    return r;
}

static const PyMethodDef arrow_writer_methods[] = {
    {"write_arrow", (PyCFunction)(void (*)(void))Writer_write_arrow,
     METH_FASTCALL | METH_KEYWORDS,
     "write_arrow($self, array, /, *, nulls=None)\n--\n\n"
     "Append one record per value of an Arrow utf8, large_utf8 or string_view array or\n"
     "stream (__arrow_c_array__ / __arrow_c_stream__) in the writer's prefix= and\n"
     "encoding=, copying its UTF-8 (validated) without making a str.  nulls: 'error',\n"
     "'skip', 'empty' or 'null' (the null marker of prefix='varint+1'); None: 'null'\n"
     "under varint+1, else 'error'.  All or nothing.  Return the bytes appended."},
    {"_write_arrow_flushing", (PyCFunction)(void (*)(void))Writer_write_arrow_flushing,
     METH_FASTCALL,
     "_write_arrow_flushing($self, array, nulls, flush_size, flush, parcel, /)\n--\n\n"
     "write_arrow for StreamWriter: whenever the buffer passes flush_size (between\n"
     "slices of rows), its bytes go into parcel[0], flush(data) gets them and the\n"
     "buffer is emptied."},
    {NULL, NULL, 0, NULL},
};

int
u8p_arrow_writer_methods(PyMethodDef *dst)
{
    return u8p_methods_add(dst, arrow_writer_methods);
}
