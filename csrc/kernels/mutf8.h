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

#define U8P_IS_SURROGATE(c) (((c) & 0xFFFFF800u) == 0xD800u)

static inline uint32_t
u8p_cp_read(const void *data, int width, size_t i)
{
    return width == 1   ? ((const uint8_t *)data)[i]
           : width == 2 ? ((const uint16_t *)data)[i]
                        : ((const uint32_t *)data)[i];
}

/* Bytes of the MUTF-8 of n code points of `width` bytes each; surrogates
 * count 3 bytes each and are counted in *nsurr. */
static inline size_t
u8p_mutf8_length(const void *data, int width, size_t n, size_t *nsurr)
{
    size_t len = 0, ns = 0, i;
    for (i = 0; i < n; i++) {
        uint32_t c = u8p_cp_read(data, width, i);
        if (c - 1u < 0x7Fu)
            len += 1;
        else if (c < 0x800u)
            len += 2; /* includes U+0000 */
        else if (c < 0x10000u) {
            len += 3;
            ns += U8P_IS_SURROGATE(c);
        }
        else
            len += 6;
    }
    *nsurr = ns;
    return len;
}

static inline uint8_t *
u8p_mutf8_put3(uint8_t *d, uint32_t c)
{
    d[0] = (uint8_t)(0xE0u | (c >> 12));
    d[1] = (uint8_t)(0x80u | ((c >> 6) & 0x3Fu));
    d[2] = (uint8_t)(0x80u | (c & 0x3Fu));
    return d + 3;
}

/* Encodes code points from index 0 until the end or the first surrogate;
 * *done = the index it stopped at; returns the bytes written. */
static inline size_t
u8p_mutf8_encode(const void *data, int width, size_t n, uint8_t *dst, size_t *done)
{
    uint8_t *d = dst;
    size_t i;
    for (i = 0; i < n; i++) {
        uint32_t c = u8p_cp_read(data, width, i);
        if (c - 1u < 0x7Fu) {
            *d++ = (uint8_t)c;
        }
        else if (c < 0x800u) {
            d[0] = (uint8_t)(0xC0u | (c >> 6));
            d[1] = (uint8_t)(0x80u | (c & 0x3Fu));
            d += 2;
        }
        else if (c < 0x10000u) {
            if (U8P_IS_SURROGATE(c))
                break;
            d = u8p_mutf8_put3(d, c);
        }
        else {
            c -= 0x10000u;
            d = u8p_mutf8_put3(d, 0xD800u | (c >> 10));
            d = u8p_mutf8_put3(d, 0xDC00u | (c & 0x3FFu));
        }
    }
    *done = i;
    return (size_t)(d - dst);
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

#define U8P_IS_CONT(b) (((b) & 0xC0u) == 0x80u)

/* The code point of a well-formed 3-byte form at s (n >= 3 checked). */
static inline uint32_t
u8p_mutf8_cp3(const uint8_t *s)
{
    return ((uint32_t)(s[0] & 0x0Fu) << 12) | ((uint32_t)(s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
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
