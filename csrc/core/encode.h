/*
 * str -> UTF-8 body, shared by BufferWriter and the module functions.
 *
 * The body is the UTF-8 of the str under an error handler, without prefix.
 * Handlers strict, surrogatepass, surrogateescape, replace and ignore are
 * done here in C; any other handler (and surrogateescape on a surrogate it
 * cannot escape) makes these functions return U8P_NEED_CODEC so that the
 * caller hands the str to CPython's codec.  That only happens for a str that
 * contains a lone surrogate: surrogate-free text never leaves the kernels.
 */
#ifndef UTF8PFX_ENCODE_H
#define UTF8PFX_ENCODE_H

#include "core.h"

#define U8P_NEED_CODEC (-2)

/* A borrowed view of a str's PEP 393 storage. */
typedef struct {
    PyObject *obj;  /* the str (borrowed) */
    const void *data;
    Py_ssize_t n;   /* code points */
    int kind;       /* PyUnicode_1BYTE_KIND, 2BYTE or 4BYTE */
    int ascii;      /* all code points < 0x80 */
} u8p_str;

/*
 * Fills *v from obj.  A non-str raises TypeError "<what> must be str, not T"
 * (`what` names the argument, e.g. "write_string() argument").  Inline: it
 * is on every call's path.
 */
static inline int
u8p_str_view(PyObject *obj, u8p_str *v, const char *what)
{
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be str, not %.200s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(obj) < 0)
        return -1;
#endif
    v->obj = obj;
    v->n = PyUnicode_GET_LENGTH(obj);
    if (PyUnicode_IS_COMPACT_ASCII(obj)) {
        v->data = (const void *)((PyASCIIObject *)obj + 1);
        v->kind = PyUnicode_1BYTE_KIND;
        v->ascii = 1;
        return 0;
    }
    v->data = PyUnicode_DATA(obj);
    v->kind = (int)PyUnicode_KIND(obj);
    v->ascii = PyUnicode_IS_ASCII(obj) ? 1 : 0;
    return 0;
}

/*
 * The branch-free short ASCII moves below, only with a 128-bit integer type
 * (64-bit gcc and clang) on a little-endian CPU (they shift bytes as the
 * bits of one number); u8p_copy_short and u8p_short_is_ascii otherwise.
 */
#if defined(__SIZEOF_INT128__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define U8P_HAVE_COPY_SLACK 1
/* x86-64 has SSE2 in its baseline: the head move below in one register */
#if defined(__x86_64__) && defined(__SSE2__)
#define U8P_HEAD16_SSE2 1
#include <emmintrin.h>
#endif
typedef unsigned __int128 u8p_u128;

/* The 16 bytes at p, little-endian, in two 8-byte moves (a 16-byte vector
 * load would have to be split into two registers again). */
static inline u8p_u128
u8p_load16(const uint8_t *p)
{
    uint64_t lo, hi;
    memcpy(&lo, p, 8);
    memcpy(&hi, p + 8, 8);
    return (u8p_u128)hi << 64 | lo;
}

static inline void
u8p_store16(uint8_t *p, u8p_u128 v)
{
    const uint64_t lo = (uint64_t)v, hi = (uint64_t)(v >> 64);
    memcpy(p, &lo, 8);
    memcpy(p + 8, &hi, 8);
}

/* The k <= 16 bytes that end at p + k, in the low bytes (the 16 bytes that
 * end there shifted down by 16 - k; the high bytes are zero).  The shift,
 * 0..128 bits, in two steps of at most 64 each: one of 128 is undefined. */
static inline u8p_u128
u8p_head16(const uint8_t *p, Py_ssize_t k)
{
    const unsigned s = (unsigned)(8 * (16 - k));
    return u8p_load16(p + k - 16) >> (s / 2) >> (s - s / 2);
}

#ifdef U8P_HEAD16_SSE2
/* u8p_head16 in one SSE2 register (x86-64's baseline): the 128-bit shift
 * by s = 0..128 bits as three 64-bit lane shifts whose counts come from a
 * register, where a count above 63 gives 0 (x >> s | hi << (64 - s) |
 * hi >> (s - 64), hi the high lane moved down; at s = 64 the last two are
 * both hi).  No branch, no stack round trip: gcc builds the u128 version
 * from two shrd/shr/cmov chains and moves the loaded halves through the
 * stack.  The writer's copy uses it; the reader's check and copy below
 * have SSE2 forms of their own. */
static inline __m128i
u8p_head16_x(const uint8_t *p, Py_ssize_t k)
{
    const long long s = 8 * (16 - (long long)k);
    const __m128i x = _mm_loadu_si128((const __m128i *)(p + k - 16));
    const __m128i hi = _mm_srli_si128(x, 8);
    return _mm_or_si128(_mm_or_si128(_mm_srl_epi64(x, _mm_cvtsi64_si128(s)),
                                     _mm_sll_epi64(hi, _mm_cvtsi64_si128(64 - s))),
                        _mm_srl_epi64(hi, _mm_cvtsi64_si128(s - 64)));
}
#endif

/*
 * n <= 32 bytes from src to dst without a branch on n (the length-class
 * branches of u8p_copy_short mispredict on names of mixed lengths, the
 * common input of the short path).  Two 16-byte moves:
 * the 16 bytes that end at src + n, to dst + max(n - 16, 0), then the
 * first min(n, 16) bytes moved down to dst (u8p_head16).
 * So it reads [src - 16, src + n) and writes [dst, dst + max(n, 16)); the
 * bytes in [dst + n, dst + 16) are zero.  The caller guarantees both: a
 * compact str's characters follow a header of 40 bytes or more, and the
 * writer has the room.
 */
static inline void
u8p_copy_slack(uint8_t *dst, const uint8_t *src, Py_ssize_t n)
{
    const Py_ssize_t k = n < 16 ? n : 16;
    /* the tail (one 16-byte vector move): right when n >= 16; overwritten
     * by the head when n < 16 */
    memcpy(dst + (n - k), src + n - 16, 16);
#ifdef U8P_HEAD16_SSE2
    _mm_storeu_si128((__m128i *)dst, u8p_head16_x(src, k));
#else
    u8p_store16(dst, u8p_head16(src, k));
#endif
}

/*
 * The reader's side: a payload of n <= 32 bytes at src, with 16 readable
 * bytes before it (not the first record of a buffer), checked for ASCII and
 * copied into a new str's characters (exactly n bytes there, after its
 * header of 40 bytes or more), with no branch on the length class.  For
 * n <= 16 the 16 bytes that end at dst + n are read, the payload blended
 * into their last n bytes and written back: the header bytes before dst
 * are rewritten with the values they had (the str is new: no one else sees
 * it).  u8p_short_is_ascii and u8p_copy_short otherwise.
 */
#ifdef U8P_HEAD16_SSE2
/* In SSE2 registers: a byte mask of each 16-byte load (movemask), shifted
 * or masked to the payload's bytes; the copy blends the payload's last
 * n <= 16 bytes over the header's with a mask from a sliding table.  The
 * u128 forms below make gcc move the loaded halves through the stack and
 * shift them with shrd/cmov chains, inside the record loops where this
 * inlines. */
static inline int
u8p_short_ascii_copy_ok(const uint8_t *src, Py_ssize_t n)
{
    const Py_ssize_t k = n < 16 ? n : 16;
    const unsigned head =
        (unsigned)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(src + k - 16))) >>
        (16 - k);
    const unsigned tail =
        (unsigned)_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(src + n - 16))) &
        (n > 16 ? 0xFFFFu : 0u);
    return !(head | tail);
}

/* The copy, returning whether the bytes it stored are ASCII: the reader
 * checks what it copied, not only what it read before, where the bytes
 * may have been written in between (rd_ctx.shared), and an ASCII str
 * holds nothing else. */
static inline int
u8p_copy_into_new_ascii(uint8_t *dst, const uint8_t *src, Py_ssize_t n)
{
    /* 16 zero bytes, then 16 of 0xFF: the 16 bytes from tail_keep + n
     * select the last n of a 16-byte vector */
    static const uint8_t tail_keep[32] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
        0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    __m128i v = _mm_loadu_si128((const __m128i *)(src + n - 16)), any;
    if (n > 16) { /* the head, then the tail over it */
        const __m128i h = _mm_loadu_si128((const __m128i *)src);
        _mm_storeu_si128((__m128i *)dst, h);
        any = _mm_or_si128(h, v);
    }
    else { /* blend: the payload's n bytes over what is at [dst + n - 16, dst) */
        const __m128i keep = _mm_loadu_si128((const __m128i *)(tail_keep + n));
        any = _mm_and_si128(keep, v);
        v = _mm_or_si128(any,
                         _mm_andnot_si128(keep, _mm_loadu_si128((const __m128i *)(dst + n - 16))));
    }
    _mm_storeu_si128((__m128i *)(dst + n - 16), v);
    return !_mm_movemask_epi8(any);
}

static inline void
u8p_copy_into_new(uint8_t *dst, const uint8_t *src, Py_ssize_t n)
{
    (void)u8p_copy_into_new_ascii(dst, src, n); /* the test compiles away */
}
#else
static inline int
u8p_short_ascii_copy_ok(const uint8_t *src, Py_ssize_t n)
{
    const u8p_u128 tmask = n > 16 ? ~(u8p_u128)0 : 0;
    const u8p_u128 any = u8p_head16(src, n < 16 ? n : 16) | (u8p_load16(src + n - 16) & tmask);
    return !(((uint64_t)any | (uint64_t)(any >> 64)) & 0x8080808080808080ULL);
}

static inline void
u8p_copy_into_new(uint8_t *dst, const uint8_t *src, Py_ssize_t n)
{
    u8p_u128 v = u8p_load16(src + n - 16);
    if (n > 16) /* the head, then the tail over it */
        memcpy(dst, src, 16);
    else { /* blend: the payload's n bytes over what is at [dst + n - 16, dst) */
        const unsigned s = (unsigned)(8 * (16 - n)); /* 0..128 bits */
        const u8p_u128 keep = ~(u8p_u128)0 << (s / 2) << (s - s / 2);
        v = (v & keep) | (u8p_load16(dst + n - 16) & ~keep);
    }
    u8p_store16(dst + n - 16, v);
}

static inline int u8p_short_is_ascii(const uint8_t *p, Py_ssize_t n);

/* The copy, returning whether the bytes it stored are ASCII (see the SSE2
 * form) */
static inline int
u8p_copy_into_new_ascii(uint8_t *dst, const uint8_t *src, Py_ssize_t n)
{
    u8p_copy_into_new(dst, src, n);
    return u8p_short_is_ascii(dst, n);
}
#endif
#endif

/* n <= 32 bytes, no call to memcpy (a libc call for a variable length):
 * overlapping 4/8-byte loads and stores that never touch a byte outside
 * [src, src + n) and [dst, dst + n). */
static inline void
u8p_copy_short(uint8_t *dst, const uint8_t *src, Py_ssize_t n)
{
    if (n >= 16) {
        uint64_t a, b, c, d;
        memcpy(&a, src, 8);
        memcpy(&b, src + 8, 8);
        memcpy(&c, src + n - 16, 8);
        memcpy(&d, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + 8, &b, 8);
        memcpy(dst + n - 16, &c, 8);
        memcpy(dst + n - 8, &d, 8);
    }
    else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    }
    else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + n - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + n - 4, &b, 4);
    }
    else if (n > 0) {
        dst[0] = src[0];
        dst[n >> 1] = src[n >> 1];
        dst[n - 1] = src[n - 1];
    }
}

/* Whether n <= 32 bytes are all below 0x80, with the same overlapping loads
 * (no loop over the bytes). */
static inline int
u8p_short_is_ascii(const uint8_t *p, Py_ssize_t n)
{
    uint64_t a, b, c = 0, d = 0;
    if (n >= 8) {
        memcpy(&a, p, 8);
        memcpy(&b, p + n - 8, 8);
        if (n > 16) {
            memcpy(&c, p + 8, 8);
            memcpy(&d, p + n - 16, 8);
        }
        return !((a | b | c | d) & 0x8080808080808080ULL);
    }
    if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, p, 4);
        memcpy(&y, p + n - 4, 4);
        return !((x | y) & 0x80808080u);
    }
    return n == 0 || !((p[0] | p[n >> 1] | p[n - 1]) & 0x80);
}

/* Most UTF-8 bytes one code point of a str's storage can take under the
 * C-handled handlers: 1 for ASCII, 2, 3, 4 for UCS1, UCS2, UCS4 (a lone
 * surrogate takes 3).  From a view, u8p_max_utf8(v.ascii, v.kind); from a
 * ready str's header, u8p_max_utf8(PyUnicode_IS_ASCII(s), PyUnicode_KIND(s)). */
static inline Py_ssize_t
u8p_max_utf8(int ascii, int kind)
{
    /* kind 1, 2, 4 -> 2, 3, 4, and 1 for ASCII (kind 1, index 5): a load,
     * not branches, so that the writer's short loop falls through on
     * non-ASCII strs, and fewer instructions than arithmetic for the
     * header walks of write_strings */
    static const uint8_t most[8] = {0, 2, 3, 0, 4, 1, 0, 0};
    return most[(kind + 4 * (ascii != 0)) & 7];
}

/*
 * Exact body length without encoding; -1 with an exception (strict on a
 * surrogate: the UnicodeEncodeError CPython raises), or U8P_NEED_CODEC.
 * With `pass` (may be NULL), *pass says whether the body is what the
 * kernels' pass forms write (the str holds no surrogate, or the handler is
 * "surrogatepass"), for u8p_body_encode_counted.
 */
Py_ssize_t u8p_body_length(const u8p_str *v, u8p_errors eh, int *pass);

/*
 * Encodes the body into dst, which has room for n * u8p_max_utf8(v->ascii, v->kind);
 * returns the bytes written, -1 with an exception, or U8P_NEED_CODEC.
 * On failure dst may hold garbage: callers only commit on success.
 */
Py_ssize_t u8p_body_encode(const u8p_str *v, u8p_errors eh, uint8_t *dst);

/*
 * One pass with the prefix backfilled (Lucene's writeString): encodes the
 * body behind the prefix width of the fewest bytes it can take,
 * u8p_prefix_size(pf, v->n), moves it if the width its length needs differs
 * (a longer body, or "ignore" dropping surrogates), and writes the prefix.
 * dst has room bytes, at least u8p_prefix_size(pf, worst) + worst, worst =
 * v->n * u8p_max_utf8(v->ascii, v->kind) <= u8p_prefix_max(pf).  Returns the prefix
 * and body bytes written, or u8p_body_encode's -1 / U8P_NEED_CODEC.  The
 * bytes of the room past those may be overwritten.
 */
Py_ssize_t u8p_prefixed_encode(const u8p_str *v, u8p_errors eh, u8p_prefix pf, uint8_t *dst,
                               Py_ssize_t room);

/*
 * The body through the kernels' pass forms (kernels.h): every code point,
 * a surrogate in its 3-byte form.  The body under every handler for a str
 * without surrogates, and under "surrogatepass" for any str; faster than
 * u8p_body_encode where the encoders would otherwise look ahead for
 * surrogates.  Calls no Python code (GIL-free); returns the bytes written.
 */
Py_ssize_t u8p_body_encode_pass(const u8p_str *v, uint8_t *dst);

/*
 * u8p_body_encode where dst has room bytes, at least the worst case: the
 * pass forms first, which note the lone surrogates instead of looking
 * ahead for them before each block (the common str has none); a str that
 * has one is encoded again by u8p_body_encode, unless the handler is
 * "surrogatepass".  UCS1 with U8P_ENC_ROOM bytes to spare takes the
 * kernels' room form.  Same results; the bytes of the room past them may
 * be overwritten.
 */
Py_ssize_t u8p_body_encode_room(const u8p_str *v, u8p_errors eh, uint8_t *dst, Py_ssize_t room);

/*
 * Encodes a body whose length u8p_body_length gave as `expected`, and
 * `pass` as its *pass (so no error can arise); returns 0, or -1 with
 * SystemError if the kernels' length and encoding disagree (a bug,
 * reported rather than written).
 */
int u8p_body_encode_counted(const u8p_str *v, u8p_errors eh, uint8_t *dst, Py_ssize_t expected,
                            int pass);

/* ---- large bodies without the GIL ---------------------------------------
 *
 * A str whose storage holds U8P_NOGIL_MIN bytes or more (n * kind: 1 MiB of
 * ASCII is a 1 MiB body) is transcoded with the GIL released: by
 * BufferWriter.write_string (under the writer's lock, objlock.h), encode()
 * and, for a payload of that size, BufferReader.read_string.  The str is
 * held by the caller's reference (immutable), the destination is not yet
 * visible to anyone.  Only the surrogate-free UTF-8 road runs without the
 * GIL: a str with a surrogate, and MUTF-8 bodies that differ from UTF-8,
 * take the ordinary path with the GIL (their handlers may call Python).
 */
#define U8P_NOGIL_MIN ((Py_ssize_t)1 << 20)

static inline int
u8p_str_is_big(const u8p_str *v)
{
    /* kind 1, 2, 4 -> shift 0, 1, 2: n * kind >= U8P_NOGIL_MIN, no division */
    return v->n >= (U8P_NOGIL_MIN >> (v->kind >> 1));
}

/*
 * GIL-free (kernels only): the UTF-8 body length of v counting each
 * surrogate as 3 bytes, and the number of surrogates in *nsurr.  With
 * *nsurr == 0 the length is the body under every handler, which
 * u8p_body_encode_pass writes.
 */
size_t u8p_body_length_nogil(const u8p_str *v, size_t *nsurr);

/* The body through CPython's codec: a new bytes object, NULL on error. */
PyObject *u8p_body_via_codec(const u8p_str *v, PyObject *errors);

/* ---- encoding="mutf-8" (Java's modified UTF-8; kernels/mutf8.h) ----------
 *
 * A str whose MUTF-8 equals its UTF-8 (no U+0000, no code point above
 * U+FFFF; surrogates are handled the same way in both) takes the UTF-8
 * functions above; u8p_mutf8_differs tells the others apart (a UCS4 str
 * always holds a code point above U+FFFF).  For those, the u8p_mbody_*
 * functions mirror u8p_body_* (surrogates go through the error handler
 * exactly as the UTF-8 codec does; the UnicodeEncodeError names "utf-8").
 */
typedef enum { U8P_ENC_UTF8 = 0, U8P_ENC_MUTF8 = 1 } u8p_encoding;

/* Parses encoding= ("utf-8" when NULL; "utf-8"/"utf8", "mutf-8"/"mutf8");
 * ValueError naming `fname` for another name. */
int u8p_parse_encoding(PyObject *obj, u8p_encoding *out, const char *fname);
/* Parses prefix= ("varint" when NULL); ValueError naming the presets. */
int u8p_parse_prefix(PyObject *obj, u8p_prefix *out, const char *fname);
/* The preset's / the encoding's name as a new str. */
PyObject *u8p_prefix_name(u8p_prefix p);
PyObject *u8p_encoding_name(u8p_encoding e);
/* OverflowError: a body of n bytes does not fit the preset; returns -1. */
int u8p_prefix_too_long(u8p_prefix p, uint64_t n);

/* The read-only errors, prefix and encoding properties BufferWriter and
 * BufferReader share: U8P_CODEC_GETSETS(T) in a PyGetSetDef list, for an
 * object type T with the fields `errors` (str), `prefix` and `enc`. */
PyObject *u8p_getter_errors(PyObject *self, void *offset);
PyObject *u8p_getter_prefix(PyObject *self, void *offset);
PyObject *u8p_getter_encoding(PyObject *self, void *offset);
#define U8P_CODEC_GETSETS(T)                                                         \
    {"errors", u8p_getter_errors, NULL, "The error handler name (read-only).",       \
     (void *)offsetof(T, errors)},                                                   \
    {"prefix", u8p_getter_prefix, NULL, "The length-prefix preset (read-only).",     \
     (void *)offsetof(T, prefix)},                                                   \
    {"encoding", u8p_getter_encoding, NULL, "'utf-8' or 'mutf-8' (read-only).",      \
     (void *)offsetof(T, enc)}

static inline int
u8p_mutf8_differs(const u8p_str *v)
{
    Py_ssize_t i;
    if (v->kind == PyUnicode_4BYTE_KIND)
        return 1;
    if (v->kind == PyUnicode_1BYTE_KIND) {
        if (v->n < 32) { /* short: no call */
            const uint8_t *p = (const uint8_t *)v->data;
            unsigned zero = 0;
            for (i = 0; i < v->n; i++)
                zero |= (p[i] == 0);
            return zero != 0;
        }
        return memchr(v->data, 0, (size_t)v->n) != NULL;
    }
    {
        const uint16_t *p = (const uint16_t *)v->data;
        unsigned zero = 0;
        for (i = 0; i < v->n; i++) /* an OR-reduction of compares: vectorises (SSE2) */
            zero |= (p[i] == 0);
        return zero != 0;
    }
}

Py_ssize_t u8p_mbody_length(const u8p_str *v, u8p_errors eh);
Py_ssize_t u8p_mbody_encode(const u8p_str *v, u8p_errors eh, uint8_t *dst);
/* Any handler, called as CPython's codec would call it, per surrogate run. */
PyObject *u8p_mbody_via_handler(const u8p_str *v, PyObject *errors);

/* The body of v in encoding `enc` as a new bytes object (any handler). */
PyObject *u8p_body_bytes(const u8p_str *v, u8p_errors eh, PyObject *errors, u8p_encoding enc);

#endif /* UTF8PFX_ENCODE_H */
