/*
 * Java's modified UTF-8 ("MUTF-8", DataOutput.writeUTF / JNI): pure C,
 * header-only, no Python.h.  A variant beside the UTF-8 kernels, not inside
 * them: a str with no U+0000 and no code point above U+FFFF has the same
 * bytes in both, so the glue only comes here for the other strings (and, on
 * read, for payloads the UTF-8 scan rejects or finds a 4-byte sequence in).
 *
 * Encoding, per code point c:
 *   U+0000             C0 80
 *   U+0001..U+007F     1 byte, as UTF-8
 *   U+0080..U+FFFF     2 or 3 bytes, as UTF-8 (a surrogate: its 3-byte form,
 *                      which the glue only writes under "surrogatepass")
 *   U+10000..U+10FFFF  the UTF-16 surrogate pair, each half as 3 bytes (6)
 *
 * Decoding accepts what Java's DataInputStream.readUTF accepts, except the
 * overlong forms other than C0 80 (Java lets E0 80 80 through; we do not):
 * a raw 00 byte is U+0000 (as readUTF); a high surrogate's 3 bytes followed
 * by a low surrogate's make one supplementary code point (Java's String of
 * the pair); a lone surrogate is an error unless surrogates are allowed;
 * 4-byte UTF-8 sequences (F0..F4) are errors, as in Java.
 */
#ifndef UTF8PFX_MUTF8_H
#define UTF8PFX_MUTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define U8P_IS_SURROGATE(c) (((c) & 0xFFFFF800u) == 0xD800u)
#define U8P_IS_CONT(b) (((b) & 0xC0u) == 0x80u)

/* The code point of a well-formed 3-byte form at s (n >= 3 checked). */
static inline uint32_t
u8p_mutf8_cp3(const uint8_t *s)
{
    return ((uint32_t)(s[0] & 0x0Fu) << 12) | ((uint32_t)(s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
}


static inline uint8_t *
u8p_mutf8_put3(uint8_t *d, uint32_t c)
{
    d[0] = (uint8_t)(0xE0u | (c >> 12));
    d[1] = (uint8_t)(0x80u | ((c >> 6) & 0x3Fu));
    d[2] = (uint8_t)(0x80u | (c & 0x3Fu));
    return d + 3;
}

/*
 * One loop body per storage width (the width is a compile-time constant in
 * each, so the loops are tight):
 *   u8p_mutf8_length_<T>: bytes of the MUTF-8 of n code points; surrogates
 *       count 3 bytes each and are counted in *nsurr.
 *   u8p_mutf8_encode_<T>: encodes from index 0 until the end or the first
 *       surrogate; *done = the index it stopped at; returns bytes written.
 * ASCII runs (U+0001..U+007F) are copied 4 code points a step.
 */
#define U8P_MUTF8_FUNCS(T, SUFFIX)                                                           \
    static inline size_t u8p_mutf8_length_##SUFFIX(const T *p, size_t n, size_t *nsurr)      \
    {                                                                                        \
        size_t len = 0, ns = 0, i;                                                           \
        for (i = 0; i < n; i++) {                                                            \
            uint32_t c = p[i];                                                               \
            len += 1 + (c - 1u >= 0x7Fu) + (c >= 0x800u) + 3u * (c >= 0x10000u);             \
            ns += U8P_IS_SURROGATE(c);                                                       \
        }                                                                                    \
        *nsurr = ns;                                                                         \
        return len;                                                                          \
    }                                                                                        \
    static inline size_t u8p_mutf8_encode_##SUFFIX(const T *p, size_t n, uint8_t *dst,       \
                                                   size_t *done)                             \
    {                                                                                        \
        uint8_t *d = dst;                                                                    \
        size_t i = 0;                                                                        \
        while (i < n) {                                                                      \
            uint32_t c = p[i];                                                               \
            if (c - 1u < 0x7Fu) {                                                            \
                while (i + 4 <= n && (uint32_t)p[i] - 1u < 0x7Fu &&                          \
                       (uint32_t)p[i + 1] - 1u < 0x7Fu && (uint32_t)p[i + 2] - 1u < 0x7Fu && \
                       (uint32_t)p[i + 3] - 1u < 0x7Fu) {                                    \
                    d[0] = (uint8_t)p[i];                                                    \
                    d[1] = (uint8_t)p[i + 1];                                                \
                    d[2] = (uint8_t)p[i + 2];                                                \
                    d[3] = (uint8_t)p[i + 3];                                                \
                    d += 4;                                                                  \
                    i += 4;                                                                  \
                }                                                                            \
                if (i < n && (uint32_t)p[i] - 1u < 0x7Fu) {                                  \
                    *d++ = (uint8_t)p[i];                                                    \
                    i++;                                                                     \
                }                                                                            \
                continue;                                                                    \
            }                                                                                \
            if (c < 0x800u) {                                                                \
                d[0] = (uint8_t)(0xC0u | (c >> 6));                                          \
                d[1] = (uint8_t)(0x80u | (c & 0x3Fu));                                       \
                d += 2;                                                                      \
            }                                                                                \
            else if (c < 0x10000u) {                                                         \
                if (U8P_IS_SURROGATE(c))                                                     \
                    break;                                                                   \
                d = u8p_mutf8_put3(d, c);                                                    \
            }                                                                                \
            else {                                                                           \
                c -= 0x10000u;                                                               \
                d = u8p_mutf8_put3(d, 0xD800u | (c >> 10));                                  \
                d = u8p_mutf8_put3(d, 0xDC00u | (c & 0x3FFu));                               \
            }                                                                                \
            i++;                                                                             \
        }                                                                                    \
        *done = i;                                                                           \
        return (size_t)(d - dst);                                                            \
    }

U8P_MUTF8_FUNCS(uint8_t, ucs1)
U8P_MUTF8_FUNCS(uint16_t, ucs2)
U8P_MUTF8_FUNCS(uint32_t, ucs4)

/* The same for a width (1, 2 or 4 bytes a code point) known at run time. */
static inline size_t
u8p_mutf8_length(const void *data, int width, size_t n, size_t *nsurr)
{
    return width == 1   ? u8p_mutf8_length_ucs1((const uint8_t *)data, n, nsurr)
           : width == 2 ? u8p_mutf8_length_ucs2((const uint16_t *)data, n, nsurr)
                        : u8p_mutf8_length_ucs4((const uint32_t *)data, n, nsurr);
}

static inline size_t
u8p_mutf8_encode(const void *data, int width, size_t n, uint8_t *dst, size_t *done)
{
    return width == 1   ? u8p_mutf8_encode_ucs1((const uint8_t *)data, n, dst, done)
           : width == 2 ? u8p_mutf8_encode_ucs2((const uint16_t *)data, n, dst, done)
                        : u8p_mutf8_encode_ucs4((const uint32_t *)data, n, dst, done);
}

/*
 * The fast road for strings whose MUTF-8 differs from their UTF-8: the
 * UTF-8 kernels write the body, then it is widened in place.
 *   u8p_mutf8_extra(data, width, n): how many more bytes the MUTF-8 takes
 *       (1 per U+0000, 2 per supplementary code point); a counting loop
 *       that vectorises.
 *   u8p_mutf8_widen(buf, len, out): buf holds `len` bytes of UTF-8 and has
 *       room for `out` = len + extra; rewrites it, back to front, into MUTF-8
 *       (00 -> C0 80, each 4-byte sequence -> its two 3-byte surrogate
 *       forms).  8-byte words without a 00 or F0..F7 byte move in one step;
 *       it stops as soon as the rest is already in place.  The bytes must be
 *       UTF-8 as the kernels write it (no raw bytes from surrogateescape).
 */
#define U8P_MUTF8_EXTRA(T, SUFFIX)                                                           \
    static inline size_t u8p_mutf8_extra_##SUFFIX(const T *p, size_t n)                     \
    {                                                                                        \
        size_t extra = 0, i;                                                                 \
        for (i = 0; i < n; i++)                                                              \
            extra += (size_t)(p[i] == 0) + 2u * (size_t)((uint32_t)p[i] >= 0x10000u);        \
        return extra;                                                                        \
    }
U8P_MUTF8_EXTRA(uint8_t, ucs1)
U8P_MUTF8_EXTRA(uint16_t, ucs2)
U8P_MUTF8_EXTRA(uint32_t, ucs4)

static inline size_t
u8p_mutf8_extra(const void *data, int width, size_t n)
{
    return width == 1   ? u8p_mutf8_extra_ucs1((const uint8_t *)data, n)
           : width == 2 ? u8p_mutf8_extra_ucs2((const uint16_t *)data, n)
                        : u8p_mutf8_extra_ucs4((const uint32_t *)data, n);
}

#define U8P_ONES 0x0101010101010101ull
#define U8P_HIGHS 0x8080808080808080ull
#define U8P_HASZERO(x) (((x) - U8P_ONES) & ~(x) & U8P_HIGHS)

static inline void
u8p_mutf8_widen(uint8_t *buf, size_t len, size_t out)
{
    size_t r = len, w = out;
    while (w != r) {
        uint8_t b;
        while (r >= 8) {
            uint64_t x;
            memcpy(&x, buf + r - 8, 8);
            if (U8P_HASZERO(x) | U8P_HASZERO((x & 0xF0F0F0F0F0F0F0F0ull) ^ 0xF0F0F0F0F0F0F0F0ull)) {
                /* move the bytes after the word's last 00/F0..F7 byte at once */
                size_t j = 8;
                while (j > 0 && buf[r - 9 + j] != 0 && buf[r - 9 + j] < 0xF0)
                    j--;
                for (; j < 8; j++) /* top down: never over a byte still to read */
                    buf[--w] = buf[--r];
                break;
            }
            memcpy(buf + w - 8, &x, 8);
            r -= 8;
            w -= 8;
            if (w == r)
                return;
        }
        b = buf[r - 1];
        if (b == 0) {
            buf[w - 1] = 0x80;
            buf[w - 2] = 0xC0;
            w -= 2;
        }
        else if (b >= 0xF0) {
            /* its 3 continuation bytes were already moved to [w, w+3) */
            uint32_t c = ((uint32_t)(b & 0x07u) << 18) | ((uint32_t)(buf[w] & 0x3Fu) << 12) |
                         ((uint32_t)(buf[w + 1] & 0x3Fu) << 6) | (buf[w + 2] & 0x3Fu);
            c -= 0x10000u;
            u8p_mutf8_put3(u8p_mutf8_put3(buf + w - 3, 0xD800u | (c >> 10)),
                           0xDC00u | (c & 0x3FFu));
            w -= 3;
        }
        else {
            buf[w - 1] = b;
            w -= 1;
        }
        r -= 1;
    }
}

/*
 * The read side of the fast road: u8p_mutf8_narrow(src, n, dst) copies a
 * MUTF-8 payload into dst (room for n bytes) as UTF-8: C0 80 -> 00 and a
 * high surrogate form followed by a low one (ED A0..AF xx ED B0..BF xx) ->
 * the 4-byte sequence.  Words without a C0 or ED byte are copied 8 bytes a
 * step.  Returns the bytes written, or (size_t)-1 if the payload holds
 * anything else that UTF-8 lacks (a lone surrogate form, a C0 not followed
 * by 80, an F0..FF byte): then the caller decodes it with u8p_mutf8_decode,
 * which reports the exact error.  Other invalid bytes are copied as they are, for the
 * UTF-8 scan to reject.
 */
static inline size_t
u8p_mutf8_narrow(const uint8_t *src, size_t n, uint8_t *dst)
{
    size_t i = 0, k = 0;
    while (i < n) {
        uint8_t b;
        while (i + 8 <= n) {
            uint64_t x;
            memcpy(&x, src + i, 8);
            if (U8P_HASZERO(x ^ 0xC0C0C0C0C0C0C0C0ull) | U8P_HASZERO(x ^ 0xEDEDEDEDEDEDEDEDull) |
                U8P_HASZERO((x & 0xF0F0F0F0F0F0F0F0ull) ^ 0xF0F0F0F0F0F0F0F0ull)) {
                /* copy the bytes before the word's first C0/ED/F0..FF at once */
                size_t j = 0;
                while (j < 8 && src[i + j] != 0xC0 && src[i + j] != 0xED && src[i + j] < 0xF0)
                    j++;
                while (j--)
                    dst[k++] = src[i++];
                break;
            }
            memcpy(dst + k, &x, 8);
            i += 8;
            k += 8;
        }
        if (i >= n)
            break;
        b = src[i];
        if (b >= 0xF0) /* a 4-byte sequence is not MUTF-8 */
            return (size_t)-1;
        if (b == 0xC0) {
            if (i + 1 >= n || src[i + 1] != 0x80)
                return (size_t)-1;
            dst[k++] = 0;
            i += 2;
        }
        else if (b == 0xED && i + 1 < n && src[i + 1] >= 0xA0) {
            /* a surrogate form: only a well-formed high + low pair narrows */
            uint32_t hi, lo, c;
            if (!(i + 5 < n && src[i + 1] <= 0xAF && U8P_IS_CONT(src[i + 2]) &&
                  src[i + 3] == 0xED && src[i + 4] >= 0xB0 && src[i + 4] <= 0xBF &&
                  U8P_IS_CONT(src[i + 5])))
                return (size_t)-1;
            hi = u8p_mutf8_cp3(src + i) - 0xD800u;
            lo = u8p_mutf8_cp3(src + i + 3) - 0xDC00u;
            c = 0x10000u + (hi << 10) + lo;
            dst[k] = (uint8_t)(0xF0u | (c >> 18));
            dst[k + 1] = (uint8_t)(0x80u | ((c >> 12) & 0x3Fu));
            dst[k + 2] = (uint8_t)(0x80u | ((c >> 6) & 0x3Fu));
            dst[k + 3] = (uint8_t)(0x80u | (c & 0x3Fu));
            k += 4;
            i += 6;
        }
        else {
            dst[k++] = b;
            i++;
        }
    }
    return k;
}

typedef enum {
    U8P_MUTF8_OK = 0,
    U8P_MUTF8_INVALID_START = 1,        /* "invalid start byte" */
    U8P_MUTF8_INVALID_CONTINUATION = 2, /* "invalid continuation byte" */
    U8P_MUTF8_UNEXPECTED_END = 3,       /* "unexpected end of data" */
    U8P_MUTF8_LONE_SURROGATE = 4        /* "lone surrogate" (3 bytes) */
} u8p_mutf8_status;

static inline const char *
u8p_mutf8_reason(u8p_mutf8_status st)
{
    switch (st) {
    case U8P_MUTF8_INVALID_START:
        return "invalid start byte";
    case U8P_MUTF8_INVALID_CONTINUATION:
        return "invalid continuation byte";
    case U8P_MUTF8_UNEXPECTED_END:
        return "unexpected end of data";
    case U8P_MUTF8_LONE_SURROGATE:
        return "lone surrogate not allowed";
    default:
        return "ok";
    }
}



/*
 * Decodes src[0, n) into dst (room for n code points) until the end or the
 * first error.  *ndst = code points written, *pos = bytes consumed (on error:
 * the start of the bad sequence, *err_end its end).  Error bounds follow
 * CPython's UTF-8 decoder (maximal subparts).
 */
static inline u8p_mutf8_status
u8p_mutf8_decode(const uint8_t *src, size_t n, int allow_surrogates, uint32_t *dst,
                 size_t *ndst, size_t *pos, size_t *err_end)
{
    size_t i = 0, k = 0;
    u8p_mutf8_status st = U8P_MUTF8_OK;
    while (i < n) {
        uint8_t b = src[i];
        if (b < 0x80) {
            dst[k++] = b;
            i++;
            while (i + 8 <= n) { /* ASCII runs 8 bytes a step */
                uint64_t x;
                int j;
                memcpy(&x, src + i, 8);
                if (x & 0x8080808080808080ull)
                    break;
                for (j = 0; j < 8; j++)
                    dst[k + (size_t)j] = src[i + (size_t)j];
                k += 8;
                i += 8;
            }
            continue;
        }
        if (b == 0xC0) {
            if (i + 1 >= n) {
                st = U8P_MUTF8_UNEXPECTED_END;
                *err_end = n;
                break;
            }
            if (src[i + 1] != 0x80) {
                st = U8P_MUTF8_INVALID_START;
                *err_end = i + 1;
                break;
            }
            dst[k++] = 0;
            i += 2;
            continue;
        }
        if (b >= 0xC2 && b <= 0xDF) {
            if (i + 1 >= n) {
                st = U8P_MUTF8_UNEXPECTED_END;
                *err_end = n;
                break;
            }
            if (!U8P_IS_CONT(src[i + 1])) {
                st = U8P_MUTF8_INVALID_CONTINUATION;
                *err_end = i + 1;
                break;
            }
            dst[k++] = ((uint32_t)(b & 0x1Fu) << 6) | (src[i + 1] & 0x3Fu);
            i += 2;
            continue;
        }
        if (b >= 0xE0 && b <= 0xEF) {
            uint32_t c;
            /* second byte: E0 needs A0..BF (no overlong), others 80..BF */
            if (i + 1 < n &&
                !(U8P_IS_CONT(src[i + 1]) && (b != 0xE0 || src[i + 1] >= 0xA0))) {
                st = U8P_MUTF8_INVALID_CONTINUATION;
                *err_end = i + 1;
                break;
            }
            if (i + 2 < n && !U8P_IS_CONT(src[i + 2])) {
                st = U8P_MUTF8_INVALID_CONTINUATION;
                *err_end = i + 2;
                break;
            }
            if (i + 2 >= n) {
                st = U8P_MUTF8_UNEXPECTED_END;
                *err_end = n;
                break;
            }
            c = u8p_mutf8_cp3(src + i);
            if (U8P_IS_SURROGATE(c)) {
                if (c < 0xDC00u && i + 5 < n && src[i + 3] == 0xED && src[i + 4] >= 0xB0 &&
                    src[i + 4] <= 0xBF && U8P_IS_CONT(src[i + 5])) {
                    uint32_t lo = u8p_mutf8_cp3(src + i + 3);
                    dst[k++] = 0x10000u + ((c - 0xD800u) << 10) + (lo - 0xDC00u);
                    i += 6;
                    continue;
                }
                if (!allow_surrogates) {
                    st = U8P_MUTF8_LONE_SURROGATE;
                    *err_end = i + 3;
                    break;
                }
            }
            dst[k++] = c;
            i += 3;
            continue;
        }
        st = U8P_MUTF8_INVALID_START; /* 80..BF, C1, F0..FF */
        *err_end = i + 1;
        break;
    }
    *ndst = k;
    *pos = i;
    return st;
}

#endif /* UTF8PFX_MUTF8_H */
