/*
 * BufferWriter: a growable byte buffer that appends VInt-prefixed UTF-8.
 *
 * States (one object, three fields that matter):
 *   buf/len/cap  buf holds cap bytes (buf == NULL iff cap == 0); bytes
 *                [0, len) are the value; [len, cap) is scratch that a write
 *                may fill before it commits.  0 <= len <= cap.
 *   exports      the number of live buffer-protocol views of [0, len).
 *                While exports > 0 the buffer must not move or change
 *                below len: a write that fits in cap is fine (it only
 *                touches [len, cap)); a write that has to grow, and
 *                clear(), raise BufferError.
 *   committing   every write computes into [len, cap) and publishes by
 *                advancing len as its last step, so any failure (bad type,
 *                encode error, BufferError, MemoryError) leaves the value
 *                exactly as it was.  write_strings rolls len back to where
 *                the call started.
 *   busy         set while write_strings runs: it calls Python code (the
 *                iterator, a custom error handler) while holding the start
 *                of its batch, so from there every change to the writer,
 *                and a new buffer export, raises instead of corrupting the
 *                batch or exposing bytes a rollback would take back.
 * GIL          guards all of it, except while write_string transcodes a
 *              str of 1 MiB or more (U8P_NOGIL_MIN): it reserves the exact
 *              room, takes the writer's lock (objlock.h), releases the GIL
 *              for the kernels, and commits once it has the GIL back.  Every
 *              method, getter and buffer export first waits for such a call
 *              to finish (W_WAIT), so no other thread sees it half done.
 */
#include "writer.h"
#include "kernels/short_vbmi2.h"

/* Every entry point starts here: waits (GIL released) while another thread
 * runs a GIL-free write_string on this writer. */
#define W_WAIT(self) u8p_objlock_wait(&(self)->nogil)

/* write_strings: the item W_AHEAD places on is asked into the cache (its
 * header line and the next, where a short compact str's characters are),
 * so that fresh strs, met for the first time, are not a cache miss each.
 * The distance is set by the fastest items: an ASCII name takes a few ns,
 * and a list of fresh names larger than the L2 cache (a parser's output)
 * is still waiting on memory at 16 places ahead when its ASCII names come
 * in runs.  The first W_AHEAD items are asked for before the loop starts
 * (W_PREFETCH_FIRST): without that a list of a few dozen items would get
 * no prefetch at all. */
#define W_AHEAD 32
#define W_PREFETCH_STR(o)                                                     \
    do {                                                                      \
        U8P_PREFETCH((const char *)(o));                                      \
        U8P_PREFETCH((const char *)(o) + 64);                                 \
    } while (0)
#define W_PREFETCH_AT(items, size, idx)                                       \
    do {                                                                      \
        if ((idx) < (size) - W_AHEAD)                                         \
            W_PREFETCH_STR((items)[(idx) + W_AHEAD]);                         \
    } while (0)
#define W_PREFETCH_AHEAD(seq, idx)                                            \
    W_PREFETCH_AT(PySequence_Fast_ITEMS(seq), PySequence_Fast_GET_SIZE(seq), idx)
/* the items the loop reaches before its first W_PREFETCH_AT has effect */
#define W_PREFETCH_FIRST(items, size)                                         \
    do {                                                                      \
        Py_ssize_t k_, m_ = (size) < W_AHEAD ? (size) : W_AHEAD;              \
        for (k_ = 0; k_ < m_; k_++)                                           \
            W_PREFETCH_STR((items)[k_]);                                      \
    } while (0)

/* The per-string path is inlined into each method's loop
 * (U8P_ALWAYS_INLINE); the rare large path stays out of it (U8P_COLD: laid
 * out apart, optimised for size); U8P_NOINLINE keeps a function that is
 * not rare out of its caller, so that the caller stays small. */

static uint8_t empty_byte;

/* Grows so that `extra` more bytes fit after len.  Growth is geometric. */
int
u8p_writer_grow(WriterObject *w, Py_ssize_t extra)
{
    Py_ssize_t need, newcap;
    uint8_t *nb;

    if (extra > PY_SSIZE_T_MAX - w->len) {
        PyErr_NoMemory();
        return -1;
    }
    need = w->len + extra;
    if (w->exports > 0) {
        PyErr_Format(PyExc_BufferError,
                     "BufferWriter cannot grow from %zd to %zd bytes while %zd "
                     "buffer view(s) are exported; release the memoryview first",
                     w->cap, need, w->exports);
        return -1;
    }
    newcap = w->cap <= PY_SSIZE_T_MAX / 2 ? w->cap * 2 : PY_SSIZE_T_MAX;
    if (newcap < need)
        newcap = need;
    if (newcap < 64)
        newcap = 64;
    nb = (uint8_t *)PyMem_Realloc(w->buf, (size_t)newcap);
    if (nb == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    w->buf = nb;
    w->cap = newcap;
    return 0;
}

/* OverflowError for a body the preset's width cannot carry. */
static Py_ssize_t
too_long(const WriterObject *w, uint64_t n)
{
    return u8p_prefix_too_long(w->prefix, n);
}

/* Appends `prefix(len(body)) + body` for a body already in memory (ASCII
 * storage, or what CPython's codec made). */
Py_ssize_t
u8p_writer_put_body(WriterObject *w, const void *p, Py_ssize_t n)
{
    Py_ssize_t pw;
    if ((uint64_t)n > u8p_prefix_max(w->prefix))
        return too_long(w, (uint64_t)n);
    pw = (Py_ssize_t)u8p_prefix_size(w->prefix, (uint64_t)n);
    if (u8p_writer_reserve(w, pw + n) < 0)
        return -1;
    u8p_prefix_write(w->prefix, w->buf + w->len, (uint64_t)n);
    if (n)
        memcpy(w->buf + w->len + pw, p, (size_t)n);
    w->len += pw + n;
    return pw + n;
}

Py_ssize_t
u8p_writer_put_null(WriterObject *w)
{
    if (!u8p_prefix_has_null(w->prefix)) {
        PyErr_SetString(PyExc_ValueError, "only prefix='varint+1' has a null marker");
        return -1;
    }
    if (u8p_writer_reserve(w, 1) < 0)
        return -1;
    w->len += (Py_ssize_t)u8p_prefix_write_null(w->prefix, w->buf + w->len);
    return 1;
}

static Py_ssize_t
writer_put_via_codec(WriterObject *w, const u8p_str *v)
{
    Py_ssize_t r;
    PyObject *b = w->enc == U8P_ENC_MUTF8 ? u8p_body_bytes(v, w->eh, w->errors, w->enc)
                                          : u8p_body_via_codec(v, w->errors);
    if (b == NULL)
        return -1;
    r = u8p_writer_put_body(w, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b));
    Py_DECREF(b);
    return r;
}

/* A str whose MUTF-8 differs from its UTF-8: counted, then encoded in place. */
static Py_ssize_t
writer_put_mutf8(WriterObject *w, const u8p_str *v)
{
    Py_ssize_t pw, body = u8p_mbody_length(v, w->eh);
    uint8_t *dst;
    if (body == U8P_NEED_CODEC)
        return writer_put_via_codec(w, v);
    if (body < 0)
        return -1;
    if ((uint64_t)body > u8p_prefix_max(w->prefix))
        return too_long(w, (uint64_t)body);
    pw = (Py_ssize_t)u8p_prefix_size(w->prefix, (uint64_t)body);
    if (u8p_writer_reserve(w, pw + body) < 0)
        return -1;
    dst = w->buf + w->len;
    u8p_prefix_write(w->prefix, dst, (uint64_t)body);
    if (u8p_mbody_encode(v, w->eh, dst + pw) != body) {
        PyErr_SetString(PyExc_SystemError, "utf8pfx: MUTF-8 length and encoding disagree");
        return -1;
    }
    w->len += pw + body;
    return pw + body;
}

/*
 * Appends one prefixed string; returns the bytes appended or -1.
 * When the prefix width is the same for the fewest and the most bytes the
 * string can take (always for short strings: <= 42 UCS2 code points fit a
 * one-byte VInt; always for the fixed-width presets) and the worst case fits
 * in the free capacity, it is encoded in one pass behind a reserved prefix
 * that is backfilled.  Else it is counted, the buffer grows (at most once)
 * to the exact size, and the UTF-8 is encoded straight into place.
 */
static inline void
copy_body(uint8_t *dst, const void *src, Py_ssize_t n)
{
    if (n <= 32) {
        u8p_copy_short(dst, (const uint8_t *)src, n);
    }
    else if (n <= 64) { /* two overlapping 32-byte copies */
        u8p_copy_short(dst, (const uint8_t *)src, 32);
        u8p_copy_short(dst + n - 32, (const uint8_t *)src + n - 32, 32);
    }
    else {
        memcpy(dst, src, (size_t)n);
    }
}

U8P_ALWAYS_INLINE Py_ssize_t writer_put_view(WriterObject *w, const u8p_str *v);

U8P_ALWAYS_INLINE Py_ssize_t
writer_put_str(WriterObject *w, PyObject *obj, const char *what)
{
    u8p_str v;
    if (obj == Py_None && u8p_prefix_has_null(w->prefix))
        return u8p_writer_put_null(w);
    if (u8p_str_view(obj, &v, what[0] ? what : "write_strings() item") < 0)
        return -1;
    return writer_put_view(w, &v);
}

/* writer_put_str after the view (the str is known good). */
U8P_ALWAYS_INLINE Py_ssize_t
writer_put_view(WriterObject *w, const u8p_str *vp)
{
#define v (*vp)
    Py_ssize_t pw, body, maxb;
    uint8_t *dst;
    int pass;
    const u8p_prefix pf = w->prefix;

    if (w->enc == U8P_ENC_MUTF8 && u8p_mutf8_differs(&v))
        return writer_put_mutf8(w, &v);

    if (v.ascii) {
        if (v.n < 0x80 && v.n < w->cap - w->len) { /* the common short case */
            dst = w->buf + w->len;
            if (pf == U8P_PFX_VARINT) {
                dst[0] = (uint8_t)v.n;
                copy_body(dst + 1, v.data, v.n);
                w->len += v.n + 1;
                return v.n + 1;
            }
            if (v.n + 4 <= w->cap - w->len) { /* every other preset: <= 4 bytes */
                const uint8_t n8 = (uint8_t)v.n;
                switch (pf) {
                case U8P_PFX_ZIGZAG: /* 2n: one byte below 64, else 80|2n, 01 */
                    dst[0] = (uint8_t)(n8 << 1) | (n8 >= 0x40 ? 0x80 : 0);
                    dst[1] = 1;
                    pw = 1 + (n8 >= 0x40);
                    break;
                case U8P_PFX_VARINT1: /* n + 1: one byte below 127, else 80, 01 */
                    dst[0] = n8 < 0x7F ? (uint8_t)(n8 + 1) : 0x80;
                    dst[1] = 1;
                    pw = 1 + (n8 >= 0x7F);
                    break;
                default:
                    pw = (Py_ssize_t)u8p_prefix_write(pf, dst, (uint64_t)v.n);
                    break;
                }
                copy_body(dst + pw, v.data, v.n);
                w->len += pw + v.n;
                return pw + v.n;
            }
        }
        return u8p_writer_put_body(w, v.data, v.n);
    }

    maxb = u8p_max_utf8(v.ascii, v.kind);
    /* the worst case cannot overflow (maxb <= 4); a constant bound, so no
     * division per string: maxb is a table's value here, and a division by
     * it is an integer divide on every non-ASCII str */
    if (v.n <= (PY_SSIZE_T_MAX - U8P_PREFIX_MAX_BYTES) / 4) {
        Py_ssize_t worst = v.n * maxb, r;
        /* One pass only when the worst case fits as it is: a writer never
         * grows for bytes it may not need (counting is cheap; growth is
         * geometric, so the room is there for most strings).  The body is
         * encoded behind the prefix width of the fewest bytes it can take;
         * when the prefix width of the worst case is larger (a long string
         * near a width boundary), a body that does cross it is moved up by
         * the difference afterwards (u8p_prefixed_encode), which costs less
         * than counting every such string first. */
        if ((uint64_t)worst <= u8p_prefix_max(pf) &&
            (Py_ssize_t)u8p_prefix_size(pf, (uint64_t)worst) + worst <= w->cap - w->len) {
            r = u8p_prefixed_encode(&v, w->eh, pf, w->buf + w->len, w->cap - w->len);
            if (r == U8P_NEED_CODEC)
                return writer_put_via_codec(w, &v);
            if (r < 0)
                return -1;
            w->len += r;
            return r;
        }
    }

    body = u8p_body_length(&v, w->eh, &pass);
    if (body == U8P_NEED_CODEC)
        return writer_put_via_codec(w, &v);
    if (body < 0)
        return -1;
    if ((uint64_t)body > u8p_prefix_max(pf))
        return too_long(w, (uint64_t)body);
    pw = (Py_ssize_t)u8p_prefix_size(pf, (uint64_t)body);
    if (u8p_writer_reserve(w, pw + body) < 0)
        return -1;
    dst = w->buf + w->len;
    dst += u8p_prefix_write(pf, dst, (uint64_t)body);
    if (u8p_body_encode_counted(&v, w->eh, dst, body, pass) < 0)
        return -1;
    w->len += pw + body;
    return pw + body;
#undef v
}

/* The same for other glue files (declared in writer.h); the methods below
 * call the static one, which the compiler inlines into their loops. */
Py_ssize_t
u8p_writer_put_str(WriterObject *w, PyObject *obj, const char *what)
{
    return writer_put_str(w, obj, what);
}

/* ---- methods ---------------------------------------------------------- */

/*
 * write_string of a str of U8P_NOGIL_MIN storage bytes or more: the count
 * and the encode run without the GIL, under the writer's lock.  Returns the
 * bytes appended, -1 with an exception, or U8P_NEED_CODEC when the str has a
 * surrogate (the caller takes the ordinary path, which applies the handler).
 * The writer is unchanged unless it succeeds.
 */
U8P_COLD Py_ssize_t
writer_put_big(WriterObject *w, const u8p_str *v)
{
    size_t nsurr = 0;
    Py_ssize_t body, pw, got;
    uint8_t *dst;

    if (u8p_objlock_enter(&w->nogil) < 0)
        return -1;
    if (v->ascii) {
        body = v->n;
    }
    else {
        size_t len;
        Py_BEGIN_ALLOW_THREADS
        len = u8p_body_length_nogil(v, &nsurr);
        Py_END_ALLOW_THREADS
        body = (Py_ssize_t)len;
    }
    if (nsurr != 0) {
        u8p_objlock_exit(&w->nogil);
        return U8P_NEED_CODEC;
    }
    if ((uint64_t)body > u8p_prefix_max(w->prefix)) {
        u8p_objlock_exit(&w->nogil);
        return too_long(w, (uint64_t)body);
    }
    pw = (Py_ssize_t)u8p_prefix_size(w->prefix, (uint64_t)body);
    if (u8p_writer_reserve(w, pw + body) < 0) {
        u8p_objlock_exit(&w->nogil);
        return -1;
    }
    dst = w->buf + w->len;
    u8p_prefix_write(w->prefix, dst, (uint64_t)body);
    Py_BEGIN_ALLOW_THREADS
    got = u8p_body_encode_pass(v, dst + pw); /* surrogate-free: no Python */
    Py_END_ALLOW_THREADS
    u8p_objlock_exit(&w->nogil);
    if (got != body) {
        PyErr_SetString(PyExc_SystemError, "utf8pfx: length and encoding kernels disagree");
        return -1;
    }
    w->len += pw + body;
    return pw + body;
}

/* The int a write returns, built after the bytes are in: if that allocation
 * fails, the write is taken back (len returns to `start`), so a MemoryError
 * leaves the writer exactly as before the call. */
static PyObject *
writer_result(WriterObject *w, Py_ssize_t start, Py_ssize_t r)
{
    PyObject *res;
    if (r < 0) {
        w->len = start;
        return NULL;
    }
    res = PyLong_FromSsize_t(r);
    if (res == NULL)
        w->len = start;
    return res;
}

U8P_NOINLINE PyObject *
writer_write_string_any(WriterObject *self, PyObject *s)
{
    Py_ssize_t r, start = self->len;
    W_WAIT(self);
    if (u8p_writer_check_idle(self) < 0)
        return NULL;
    if (PyUnicode_Check(s)) {
        u8p_str v;
        if (u8p_str_view(s, &v, "write_string() argument") < 0)
            return NULL;
        if (v.n >= U8P_NOGIL_MIN / 4 && u8p_str_is_big(&v) &&
            !(self->enc == U8P_ENC_MUTF8 && u8p_mutf8_differs(&v))) {
            r = writer_put_big(self, &v);
            if (r != U8P_NEED_CODEC)
                return writer_result(self, start, r);
        }
        r = writer_put_view(self, &v);
        return writer_result(self, start, r);
    }
    r = writer_put_str(self, s, "write_string() argument");
    return writer_result(self, start, r);
}

/*
 * write_string.  The common call, a short compact str (UTF-8 of under 128
 * bytes at most) into a UTF-8 "varint" writer with room, no other thread
 * in a GIL-free call and no batch under way, is done here in a small
 * function (short_put, writer_short.h, then the result int, taken from
 * the module's table of small ints, which cannot fail; well under the
 * instructions of the general path); every other call goes to
 * writer_write_string_any, which does the same for all strs (one pass,
 * prefix backfilled, counted when it must grow).  The short path's two
 * builds (writer_short.h) are made here; write_string runs the base one
 * (or, on a CPU with VBMI2, is Writer_write_string_vbmi2 below),
 * write_strings one or the other for a whole run of items.
 */
#if U8P_HAVE_VBMI2_SHORT
#define SP(name) name##_vbmi2
#define SP_ATTR U8P_VBMI2_TARGET
#define SP_VBMI2 1
#define SP_OUTER U8P_NOINLINE
#include "writer_short.h"
#undef SP
#undef SP_ATTR
#undef SP_VBMI2
#undef SP_OUTER
/* the VBMI2 build of the short path, while the kernels in use are the
 * VBMI2 table (writer_short.h) */
#define W_SHORT_VBMI2() U8P_VBMI2_SHORT_OK(u8p_K)
#endif

#define SP(name) name##_base
#define SP_ATTR
#define SP_VBMI2 0
#define SP_OUTER U8P_ALWAYS_INLINE
#include "writer_short.h"
#undef SP
#undef SP_ATTR
#undef SP_VBMI2
#undef SP_OUTER

/* write_string's body in each build: the short path through `put` (a
 * build of short_put) when the writer takes it (UTF-8 "varint", no batch,
 * no GIL-free call under way) and the str does, else the general path */
#define W_WRITE_STRING(self, s, put)                                          \
    do {                                                                      \
        if ((self)->prefix == U8P_PFX_VARINT && (self)->enc == U8P_ENC_UTF8 && \
            !(self)->busy && !(self)->nogil.held) {                           \
            const Py_ssize_t start_ = (self)->len,                            \
                             r_ = put((self)->buf, start_, (self)->cap, (s)); \
            if (r_ > 0) { /* 1..128: the int is one of the table's */         \
                (self)->len = start_ + r_;                                    \
                return Py_NewRef((self)->ints[r_]);                           \
            }                                                                 \
        }                                                                     \
        return writer_write_string_any((self), (s));                          \
    } while (0)

static PyObject *
Writer_write_string(WriterObject *self, PyObject *s)
{
    W_WRITE_STRING(self, s, short_put_base);
}

#ifdef W_SHORT_VBMI2
/* write_string built for AVX-512 VBMI2: Writer_write_string_vbmi2 below is
 * the method itself, put in the type's method table at import on a CPU
 * with VBMI2 (u8p_writer_exec), so reaching it costs no compare and jump
 * from the base build.  While the kernels in use are the VBMI2 table, the
 * short path runs the table's own steps inline (writer_short.h); at any
 * other level (a test's or UTF8PFX_ISA's cap) it is the base method. */

/* write_string's VBMI2 build for what its fast path below does not take:
 * the whole short path (exact steps, the kernel table for the rest), then
 * the general path; at any other kernel level, the base build. */
U8P_VBMI2_TARGET U8P_NOINLINE PyObject *
Writer_write_string_vbmi2_rest(WriterObject *self, PyObject *s)
{
    if (!W_SHORT_VBMI2())
        return Writer_write_string(self, s);
    W_WRITE_STRING(self, s, short_put_vbmi2);
}

/* write_string on a CPU with VBMI2: the room cases of the short path
 * (short_put_room) inline, everything else in the function above, so that
 * this one has no call but tail calls and needs no stack frame (with the
 * whole short path inline, its calls into the kernel table and an
 * address-taken local make GCC save five registers and realign the stack
 * on every call). */
U8P_VBMI2_TARGET static PyObject *
Writer_write_string_vbmi2(WriterObject *self, PyObject *s)
{
    /* the str's second cache line, where most of a non-ASCII str's code
     * units lie (they start 56 bytes in): fetched alongside its header's
     * line, not after it (the masked load of the units waits for the
     * length in the header); it helps most where fresh strs lie scattered
     * in the heap. */
    U8P_PREFETCH((const char *)s + 64);
    if (W_SHORT_VBMI2() && self->prefix == U8P_PFX_VARINT && self->enc == U8P_ENC_UTF8 &&
        !self->busy && !self->nogil.held) {
        const Py_ssize_t start = self->len, r = short_put_room_vbmi2(self->buf, start, self->cap, s);
        if (r > 0) {
            self->len = start + r;
            return Py_NewRef(self->ints[r]);
        }
        /* past the short path's limits: straight to the general path, with
         * no second trip through the short path's checks */
        if (r < 0)
            return writer_write_string_any(self, s);
    }
    return Writer_write_string_vbmi2_rest(self, s);
}
#endif

/* Presizing a batch pays when it has a few items; it is skipped when the
 * worst case is huge (then each string grows the buffer exactly). */
#define PRESIZE_MIN_ITEMS 4
#define PRESIZE_MAX_BYTES ((Py_ssize_t)64 << 20)

/*
 * For the items of a list or tuple of str from index `from` on, from the str
 * headers alone: the fewest and the most bytes they can take (equal for
 * ASCII).  write_strings calls it lazily, at the first item whose worst case
 * does not fit the free room (at once for a new writer; never for a reused
 * writer with room for the batch, which then pays no walk over the
 * headers).  If the writer must grow anyway, it grows once for the worst
 * case, so that every string then takes the one-pass path.  Best effort: on
 * anything unusual it does nothing and the writes grow as they go.  Never
 * raises.
 */
static void
writer_presize(WriterObject *w, PyObject *seq, Py_ssize_t from)
{
    Py_ssize_t i, n = PySequence_Fast_GET_SIZE(seq) - from, body = 0, worst = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq) + from;
    const u8p_prefix pf = w->prefix;

    if (n < PRESIZE_MIN_ITEMS || w->exports > 0)
        return;
    /* A writer with room for 32 bytes per item (names, keys, labels: a
     * reused writer) is left alone without a walk over the str headers:
     * the walk costs more than the rare growth it would save. */
    if (n <= (w->cap - w->len) / 32)
        return;
    /* One walk: the fewest body bytes and the most bytes with prefixes. */
    for (i = 0; i < n; i++) {
        PyObject *s = items[i];
        Py_ssize_t len, most;
        if (!PyUnicode_CheckExact(s))
            return;
#if PY_VERSION_HEX < 0x030C0000
        if (!PyUnicode_IS_READY(s))
            return;
#endif
        len = PyUnicode_GET_LENGTH(s);
        most = len * u8p_max_utf8(PyUnicode_IS_ASCII(s), PyUnicode_KIND(s));
        body += len;
        worst += (Py_ssize_t)u8p_prefix_size(pf, (uint64_t)most) + most;
        if (worst > PRESIZE_MAX_BYTES)
            return;
    }
    /* Grow now only if the batch cannot fit as it is (short of "ignore"
     * dropping surrogates): then grow once, for the worst case.  A writer
     * with room for the batch is left alone. */
    if (body + n * (Py_ssize_t)u8p_prefix_size(pf, 0) <= w->cap - w->len)
        return;
    if (u8p_writer_reserve(w, worst) < 0)
        PyErr_Clear(); /* the writes below report any real failure */
}

static PyObject *
Writer_write_strings(WriterObject *self, PyObject *items)
{
    Py_ssize_t start = self->len, idx = 0;
    char what[64];
    W_WAIT(self);

    if (u8p_writer_check_idle(self) < 0)
        return NULL;
    /* an Arrow column (pyarrow, polars, ...): its UTF-8 is copied, no str
     * made (the hook module init registered: core.h) */
    if (!PyList_CheckExact(items) && !PyTuple_CheckExact(items) && self->arrow_in != NULL) {
        PyObject *res;
        int arrow = self->arrow_in((PyObject *)self, items, &res);
        if (arrow < 0)
            return NULL;
        if (arrow)
            return res;
    }
    self->busy = 1;

    if (PyList_CheckExact(items) || PyTuple_CheckExact(items)) {
        int presized = 0;
        const int fast = self->prefix == U8P_PFX_VARINT && self->enc == U8P_ENC_UTF8;
        W_PREFETCH_FIRST(PySequence_Fast_ITEMS(items), PySequence_Fast_GET_SIZE(items));
        /* Index the sequence directly; re-read the size each step since a
         * custom error handler could mutate a list. */
        for (idx = 0; idx < PySequence_Fast_GET_SIZE(items); idx++) {
            PyObject *item;
            Py_ssize_t r;
            if (fast) {
                /* write_string's common case, as many items in a row as
                 * take it (writer_short.h) */
                PyObject *const *const it = PySequence_Fast_ITEMS(items);
                const Py_ssize_t size = PySequence_Fast_GET_SIZE(items);
#ifdef W_SHORT_VBMI2
                if (W_SHORT_VBMI2()) {
                    /* the VBMI2 build is a call of its own (its frame,
                     * realigned for vector spills, and a vzeroupper on
                     * the way out), which a long item would pay for
                     * nothing: called only when the item at idx may take
                     * it (an exact str of under 128 code points; the raw
                     * length field of a legacy str only makes it try);
                     * without this test a batch of long strs pays that
                     * call for every item. */
                    PyObject *const s0 = it[idx];
                    if (PyUnicode_CheckExact(s0) && ((PyASCIIObject *)s0)->length < 0x80) {
                        if (PyUnicode_IS_COMPACT_ASCII(s0))
                            self->len =
                                ascii_run_vbmi2(self->buf, self->len, self->cap, it, size, &idx);
                        if (idx < size)
                            self->len =
                                short_run_vbmi2(self->buf, self->len, self->cap, it, size, &idx);
                    }
                }
                else
#endif
                {
                    PyObject *const s0 = it[idx];
                    if (PyUnicode_CheckExact(s0) && PyUnicode_IS_COMPACT_ASCII(s0))
                        self->len = ascii_run_base(self->buf, self->len, self->cap, it, size, &idx);
                    if (idx < size)
                        self->len =
                            short_run_base(self->buf, self->len, self->cap, it, size, &idx);
                }
                if (idx == size)
                    break;
            }
            item = PySequence_Fast_GET_ITEM(items, idx);
            W_PREFETCH_AHEAD(items, idx);
            Py_INCREF(item);
            if (PyUnicode_CheckExact(item)) {
                /* the worst case of this item (4 bytes a code point and the
                 * widest prefix) may not fit: size the rest now.  The raw
                 * length field (a legacy str, not ready, only makes this
                 * heuristic presize early; writer_presize stops on it). */
                if (!presized && ((PyASCIIObject *)item)->length >=
                                     (self->cap - self->len - U8P_PREFIX_MAX_BYTES) / 4) {
                    presized = 1;
                    writer_presize(self, items, idx);
                }
                r = writer_put_str(self, item, "");
            }
            else {
                PyOS_snprintf(what, sizeof what, "write_strings() item %zd", idx);
                r = writer_put_str(self, item, what);
            }
            Py_DECREF(item);
            if (r < 0)
                goto fail;
        }
    }
    else {
        PyObject *it = PyObject_GetIter(items), *item;
        if (it == NULL)
            goto fail;
        while ((item = PyIter_Next(it)) != NULL) {
            Py_ssize_t r;
            PyOS_snprintf(what, sizeof what, "write_strings() item %zd", idx);
            r = writer_put_str(self, item, what);
            Py_DECREF(item);
            if (r < 0) {
                Py_DECREF(it);
                goto fail;
            }
            idx++;
        }
        Py_DECREF(it);
        if (PyErr_Occurred())
            goto fail;
    }
    self->busy = 0;
    return writer_result(self, start, self->len - start);

fail:
    self->busy = 0;
    self->len = start;
    return NULL;
}

static PyObject *
Writer_write_vint(WriterObject *self, PyObject *arg)
{
    uint64_t n;
    Py_ssize_t k;
    W_WAIT(self);
    if (u8p_parse_u64(arg, &n, "write_vint") < 0 || u8p_writer_check_idle(self) < 0)
        return NULL;
    if (u8p_writer_reserve(self, (Py_ssize_t)u8p_vint_size(n)) < 0)
        return NULL;
    k = (Py_ssize_t)u8p_vint_write(self->buf + self->len, n);
    self->len += k;
    return writer_result(self, self->len - k, k);
}

/* write_bytes / write_raw: any buffer-protocol object.  Writing the writer
 * into itself copies its own value without exporting a view (an export
 * would forbid the growth the copy needs). */
static PyObject *
writer_put_buffer(WriterObject *self, PyObject *arg, int prefixed)
{
    Py_buffer view;
    Py_ssize_t r, pw = 0, n;
    W_WAIT(self);

    if (u8p_writer_check_idle(self) < 0)
        return NULL;
    if ((PyObject *)self == arg) {
        n = self->len;
        if (prefixed && (uint64_t)n > u8p_prefix_max(self->prefix)) {
            too_long(self, (uint64_t)n);
            return NULL;
        }
        pw = prefixed ? (Py_ssize_t)u8p_prefix_size(self->prefix, (uint64_t)n) : 0;
        if (u8p_writer_reserve(self, pw + n) < 0)
            return NULL;
        if (prefixed)
            u8p_prefix_write(self->prefix, self->buf + self->len, (uint64_t)n);
        if (n)
            memcpy(self->buf + self->len + pw, self->buf, (size_t)n);
        self->len += pw + n;
        return writer_result(self, self->len - (pw + n), pw + n);
    }
    if (PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError,
                     "%s() argument must be a bytes-like object, not str (use write_string)",
                     prefixed ? "write_bytes" : "write_raw");
        return NULL;
    }
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError,
                         "%s() argument must be a bytes-like object, not %.200s",
                         prefixed ? "write_bytes" : "write_raw", Py_TYPE(arg)->tp_name);
        }
        return NULL;
    }
    if (prefixed) {
        r = u8p_writer_put_body(self, view.buf, view.len);
    }
    else if (u8p_writer_reserve(self, view.len) < 0) {
        r = -1;
    }
    else {
        if (view.len)
            memcpy(self->buf + self->len, view.buf, (size_t)view.len);
        self->len += view.len;
        r = view.len;
    }
    PyBuffer_Release(&view);
    return writer_result(self, r < 0 ? self->len : self->len - r, r);
}

static PyObject *
Writer_write_bytes(WriterObject *self, PyObject *arg)
{
    return writer_put_buffer(self, arg, 1);
}

static PyObject *
Writer_write_raw(WriterObject *self, PyObject *arg)
{
    return writer_put_buffer(self, arg, 0);
}

static PyObject *
Writer_getvalue(WriterObject *self, PyObject *Py_UNUSED(ignored))
{
    W_WAIT(self);
    return PyBytes_FromStringAndSize((const char *)(self->buf ? self->buf : &empty_byte),
                                     self->len);
}

static PyObject *
Writer_clear(WriterObject *self, PyObject *Py_UNUSED(ignored))
{
    W_WAIT(self);
    if (u8p_writer_check_idle(self) < 0)
        return NULL;
    if (self->exports > 0) {
        PyErr_Format(PyExc_BufferError,
                     "BufferWriter cannot be cleared while %zd buffer view(s) are exported",
                     self->exports);
        return NULL;
    }
    self->len = 0;
    Py_RETURN_NONE;
}

static PyObject *
Writer_reserve(WriterObject *self, PyObject *arg)
{
    Py_ssize_t n = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
    W_WAIT(self);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 0) {
        PyErr_Format(PyExc_ValueError, "reserve() argument must be >= 0, got %zd", n);
        return NULL;
    }
    if (u8p_writer_check_idle(self) < 0)
        return NULL;
    if (u8p_writer_reserve(self, n) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* Pickling: BufferWriter(errors=...) holding the same bytes (the capacity
 * is not kept: the copy is allocated to fit). */
static PyObject *
Writer_reduce(WriterObject *self, PyObject *Py_UNUSED(ignored))
{
    /* the state carries the whole preset, so a copy writes as the original */
    PyObject *value = Writer_getvalue(self, NULL), *prefix, *encoding;
    if (value == NULL)
        return NULL;
    prefix = u8p_prefix_name(self->prefix);
    encoding = u8p_encoding_name(self->enc);
    if (prefix == NULL || encoding == NULL) {
        Py_DECREF(value);
        Py_XDECREF(prefix);
        Py_XDECREF(encoding);
        return NULL;
    }
    return Py_BuildValue("(O()(NONN))", (PyObject *)Py_TYPE(self), value, self->errors, prefix,
                         encoding);
}

static PyObject *
Writer_setstate(WriterObject *self, PyObject *state)
{
    PyObject *value, *errors;
    u8p_errors eh;
    u8p_prefix pf = self->prefix;
    u8p_encoding enc = self->enc;
    Py_buffer view;
    W_WAIT(self);
    /* (bytes, errors, prefix, encoding); (bytes, errors) from a pickle made
     * before the state carried the preset keeps the writer's own */
    if (!PyTuple_Check(state) || (PyTuple_GET_SIZE(state) != 2 && PyTuple_GET_SIZE(state) != 4)) {
        PyErr_SetString(PyExc_TypeError, "BufferWriter.__setstate__() expects a "
                                         "(bytes, errors[, prefix, encoding]) tuple");
        return NULL;
    }
    value = PyTuple_GET_ITEM(state, 0);
    errors = PyTuple_GET_ITEM(state, 1);
    if (u8p_writer_check_idle(self) < 0 || u8p_parse_errors(errors, &eh, "BufferWriter()") < 0)
        return NULL;
    if (PyTuple_GET_SIZE(state) == 4 &&
        (u8p_parse_prefix(PyTuple_GET_ITEM(state, 2), &pf, "BufferWriter()") < 0 ||
         u8p_parse_encoding(PyTuple_GET_ITEM(state, 3), &enc, "BufferWriter()") < 0))
        return NULL;
    if (self->len != 0 || self->exports > 0) {
        PyErr_SetString(PyExc_ValueError,
                        "BufferWriter.__setstate__() needs an empty writer with no exports");
        return NULL;
    }
    if (PyObject_GetBuffer(value, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (u8p_writer_reserve(self, view.len) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    if (view.len)
        memcpy(self->buf, view.buf, (size_t)view.len);
    self->len = view.len;
    PyBuffer_Release(&view);
    Py_SETREF(self->errors, Py_NewRef(errors));
    self->eh = eh;
    self->prefix = pf;
    self->enc = enc;
    Py_RETURN_NONE;
}

static PyObject *
Writer_sizeof(WriterObject *self, PyObject *Py_UNUSED(ignored))
{
    W_WAIT(self);
    return PyLong_FromSsize_t((Py_ssize_t)Py_TYPE(self)->tp_basicsize + self->cap);
}

static PyObject *
Writer_get_capacity(WriterObject *self, void *Py_UNUSED(closure))
{
    W_WAIT(self);
    return PyLong_FromSsize_t(self->cap);
}

static Py_ssize_t
Writer_length(WriterObject *self)
{
    W_WAIT(self);
    return self->len;
}

static PyObject *
Writer_repr(WriterObject *self)
{
    PyObject *p = u8p_prefix_name(self->prefix), *r;
    W_WAIT(self);
    if (p == NULL)
        return NULL;
    r = PyUnicode_FromFormat("<%s len=%zd capacity=%zd errors=%R prefix=%R encoding='%s'>",
                             Py_TYPE(self)->tp_name, self->len, self->cap, self->errors, p,
                             self->enc == U8P_ENC_MUTF8 ? "mutf-8" : "utf-8");
    Py_DECREF(p);
    return r;
}

static int
Writer_getbuffer(WriterObject *self, Py_buffer *view, int flags)
{
    void *p;
    W_WAIT(self);
    p = self->buf ? (void *)self->buf : (void *)&empty_byte;
    if (self->busy) {
        /* a view taken mid-batch would show bytes a rollback takes back */
        PyErr_SetString(PyExc_BufferError,
                        "BufferWriter cannot export a buffer in the middle of write_strings()");
        return -1;
    }
    if (PyBuffer_FillInfo(view, (PyObject *)self, p, self->len, 1, flags) < 0)
        return -1;
    self->exports++;
    return 0;
}

static void
Writer_releasebuffer(WriterObject *self, Py_buffer *Py_UNUSED(view))
{
    self->exports--;
}

static PyObject *
Writer_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"capacity", "errors", "prefix", "encoding", NULL};
    Py_ssize_t capacity = 0;
    PyObject *errors = NULL, *prefix = NULL, *encoding = NULL;
    u8p_errors eh;
    u8p_prefix pf;
    u8p_encoding enc;
    WriterObject *self;
    const u8p_state *st = u8p_state_of_type(type);

    if (st == NULL)
        return NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|n$OOO:BufferWriter", kwlist, &capacity,
                                     &errors, &prefix, &encoding))
        return NULL;
    if (u8p_parse_prefix(prefix, &pf, "BufferWriter()") < 0 ||
        u8p_parse_encoding(encoding, &enc, "BufferWriter()") < 0)
        return NULL;
    if (capacity < 0) {
        PyErr_Format(PyExc_ValueError, "BufferWriter() capacity must be >= 0, got %zd",
                     capacity);
        return NULL;
    }
    if (u8p_parse_errors(errors, &eh, "BufferWriter()") < 0)
        return NULL;
    self = (WriterObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->buf = NULL;
    self->len = self->cap = self->exports = 0;
    self->busy = 0;
    self->ints = st->ints;
    self->arrow_in = st->arrow_in;
    self->nogil.lock = NULL;
    self->nogil.held = 0;
    self->eh = eh;
    self->prefix = pf;
    self->enc = enc;
    self->errors = errors ? Py_NewRef(errors) : PyUnicode_FromString("strict");
    if (self->errors == NULL) {
        Py_DECREF(self);
        return NULL;
    }
    if (capacity > 0) { /* exactly what was asked for */
        self->buf = (uint8_t *)PyMem_Malloc((size_t)capacity);
        if (self->buf == NULL) {
            Py_DECREF(self);
            return PyErr_NoMemory();
        }
        self->cap = capacity;
    }
    return (PyObject *)self;
}

static void
Writer_dealloc(WriterObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyMem_Free(self->buf);
    u8p_objlock_free(&self->nogil);
    Py_XDECREF(self->errors);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

/* The method list in each build of write_string (u8p_writer_methods). */
#define WRITE_STRING_DEF(fn)                                                  \
    {"write_string", (PyCFunction)(fn), METH_O,                               \
     "write_string($self, s, /)\n--\n\nAppend vint(len(e)) + e, e = s.encode('utf-8', errors).\n" \
     "Return the number of bytes appended."}

static const PyMethodDef Writer_write_string_base_def[] = {
    WRITE_STRING_DEF(Writer_write_string),
    {NULL, NULL, 0, NULL},
};
#ifdef W_SHORT_VBMI2
static const PyMethodDef Writer_write_string_vbmi2_def[] = {
    WRITE_STRING_DEF(Writer_write_string_vbmi2),
    {NULL, NULL, 0, NULL},
};
#endif

static const PyMethodDef Writer_methods[] = {
    {"write_strings", (PyCFunction)Writer_write_strings, METH_O,
     "write_strings($self, iterable, /)\n--\n\nwrite_string() for each item, all or nothing.\n"
     "Return the total number of bytes appended."},
    {"write_vint", (PyCFunction)Writer_write_vint, METH_O,
     "write_vint($self, n, /)\n--\n\nAppend n (0 <= n < 2**64) as an unsigned LEB128 VInt."},
    {"write_bytes", (PyCFunction)Writer_write_bytes, METH_O,
     "write_bytes($self, b, /)\n--\n\nAppend a bytes-like object behind its VInt length."},
    {"write_raw", (PyCFunction)Writer_write_raw, METH_O,
     "write_raw($self, b, /)\n--\n\nAppend a bytes-like object as is."},
    {"getvalue", (PyCFunction)Writer_getvalue, METH_NOARGS,
     "getvalue($self)\n--\n\nThe bytes written so far."},
    {"clear", (PyCFunction)Writer_clear, METH_NOARGS,
     "clear($self)\n--\n\nDrop the contents, keep the capacity."},
    {"reserve", (PyCFunction)Writer_reserve, METH_O,
     "reserve($self, n, /)\n--\n\nMake room for n more bytes without further growth."},
    {"__sizeof__", (PyCFunction)Writer_sizeof, METH_NOARGS, NULL},
    {"__reduce__", (PyCFunction)Writer_reduce, METH_NOARGS, NULL},
    {"__setstate__", (PyCFunction)Writer_setstate, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Writer_getset[] = {
    {"capacity", (getter)Writer_get_capacity, NULL, "Bytes allocated (read-only).", NULL},
    U8P_CODEC_GETSETS(WriterObject),
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot Writer_slots[] = {
    {Py_tp_new, Writer_new},
    {Py_tp_dealloc, Writer_dealloc},
    {Py_tp_methods, NULL}, /* the list module init assembles (u8p_writer_exec) */
    {Py_tp_getset, Writer_getset},
    {Py_tp_repr, Writer_repr},
    {Py_sq_length, Writer_length},
    {Py_bf_getbuffer, Writer_getbuffer},
    {Py_bf_releasebuffer, Writer_releasebuffer},
    {Py_tp_doc,
     "BufferWriter(capacity=0, *, errors='strict', prefix='varint', encoding='utf-8')\n--\n\n"
     "A growable buffer of length-prefixed UTF-8 strings.\n\n"
     "prefix: 'varint' (default), 'zigzag', 'varint+1', 'u16be', 'i32be' or 'u32le';\n"
     "encoding: 'utf-8' (default) or 'mutf-8' (Java's modified UTF-8).\n\n"
     "Exports a read-only buffer (memoryview(w), bytes(w)); while a view is\n"
     "alive, a write that would have to grow the buffer raises BufferError."},
    {0, NULL},
};

static PyType_Spec Writer_spec = {
    "utf8pfx.BufferWriter",
    sizeof(WriterObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    Writer_slots,
};

/* Testing hook: which build of the short path write_strings runs now
 * (writer_short.h): "vbmi2" while the kernels are the VBMI2 table, else
 * "base". */
static PyObject *
mod_short_path(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
#ifdef W_SHORT_VBMI2
    if (W_SHORT_VBMI2())
        return PyUnicode_FromString("vbmi2");
#endif
    return PyUnicode_FromString("base");
}

/* Testing hook: the build of write_string in this module's BufferWriter. */
static PyObject *
mod_write_string_build(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    return PyUnicode_FromString(u8p_get_state(module)->write_string_build);
}

static PyMethodDef writer_functions[] = {
    {"_short_path", (PyCFunction)mod_short_path, METH_NOARGS,
     "_short_path()\n--\n\nThe build of write_strings' short path in use, 'vbmi2' or 'base' "
     "(testing)."},
    {"_write_string_build", (PyCFunction)mod_write_string_build, METH_NOARGS,
     "_write_string_build()\n--\n\nThe build of BufferWriter.write_string chosen at import, "
     "'vbmi2' or 'base' (testing)."},
    {NULL, NULL, 0, NULL},
};

int
u8p_writer_methods(PyMethodDef *dst, u8p_state *st)
{
    const PyMethodDef *ws = Writer_write_string_base_def;
#ifdef W_SHORT_VBMI2
    /* the VBMI2 build when the kernels chosen at import (under UTF8PFX_ISA's
     * cap) are the VBMI2 table; either build is right at any later level,
     * only the code differs */
    if (W_SHORT_VBMI2()) {
        ws = Writer_write_string_vbmi2_def;
        st->write_string_build = "vbmi2";
    }
#endif
    if (u8p_methods_add(dst, ws) < 0)
        return -1;
    return u8p_methods_add(dst, Writer_methods);
}

const PyMethodDef *
u8p_writer_method(const u8p_state *st, const char *name)
{
    const PyMethodDef *m;
    for (m = st->writer_methods; m->ml_name != NULL; m++)
        if (strcmp(m->ml_name, name) == 0)
            return m;
    return NULL;
}

int
u8p_writer_exec(PyObject *module, u8p_state *st)
{
    if (u8p_add_type(module, &Writer_spec, st->writer_methods, &st->writer_type) < 0)
        return -1;
    return PyModule_AddFunctions(module, writer_functions);
}
