/*
 * Short UCS1, UCS2 and UCS4 bodies without a branch per code point (pure C,
 * no Python.h; inline into the writer).
 *
 * A name of a dozen code points that mixes 1-, 2- and 3-byte sequences
 * (Cyrillic or Greek words and spaces, CJK and ASCII digits) makes the
 * branch of the scalar loop go wrong every few code points.  Here each code
 * point builds every byte it could take in one 32-bit word, picks the word
 * and its length with selects, stores all four bytes and advances by its
 * length.  The store runs up to three bytes past the last byte of its code
 * point, so these encoders need more room than the exact body:
 *   UCS2: 3 * n + 1 bytes (the last 3-byte code point stores 4)
 *   UCS4: 4 * n bytes (the worst case itself)
 * which the writer has when the worst case of the string fits its free
 * capacity (the one-pass path).  A surrogate is not encoded: the functions
 * then return -1 and the caller takes the kernels' road, which applies the
 * error handler.  Little-endian targets only (the word is stored as is);
 * U8P_ENC_SHORT is 0 elsewhere and the caller does without.
 */
#ifndef UTF8PFX_ENC_SHORT_H
#define UTF8PFX_ENC_SHORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define U8P_ENC_SHORT 1
#elif defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86) || defined(_M_ARM64))
#define U8P_ENC_SHORT 1
#else
#define U8P_ENC_SHORT 0
#endif

/* Strings of at most this many code points take these encoders (every
 * UCS2 body then fits a one-byte VInt: 3 * 42 = 126; UCS1 and UCS4 bodies
 * from 63 and 31 code points). */
#define U8P_ENC_SHORT_MAX 42
#define U8P_ENC_SHORT_MAX_UCS1 63
#define U8P_ENC_SHORT_MAX_UCS4 31

/* n Latin-1 code points -> UTF-8 at dst (room: 2 * n, the worst case);
 * the bytes written.  Each writes both bytes it could take and advances by
 * 1 + (c >> 7).  Byte stores: any byte order. */
static inline ptrdiff_t
u8p_enc_short_ucs1(const uint8_t *src, size_t n, uint8_t *dst)
{
    uint8_t *d = dst;
    size_t i;
    for (i = 0; i < n; i++) {
        unsigned c = src[i];
        d[0] = (uint8_t)(c < 0x80 ? c : 0xC0 | (c >> 6));
        d[1] = (uint8_t)(0x80 | (c & 0x3F));
        d += 1 + (c >> 7);
    }
    return (ptrdiff_t)(d - dst);
}

#if U8P_ENC_SHORT
static inline uint32_t
u8p_utf8_word(uint32_t c, size_t *len)
{
    uint32_t w2 = (0xC0 | (c >> 6)) | (0x80 | (c & 0x3F)) << 8;
    uint32_t w3 = (0xE0 | (c >> 12)) | (0x80 | ((c >> 6) & 0x3F)) << 8 | (0x80 | (c & 0x3F)) << 16;
    uint32_t w4 = (0xF0 | (c >> 18)) | (0x80 | ((c >> 12) & 0x3F)) << 8 |
                  (0x80 | ((c >> 6) & 0x3F)) << 16 | (0x80 | (c & 0x3F)) << 24;
    *len = (size_t)1 + (c >= 0x80) + (c >= 0x800) + (c >= 0x10000);
    return c < 0x80 ? c : c < 0x800 ? w2 : c < 0x10000 ? w3 : w4;
}

/* n UCS2 code units -> UTF-8 at dst (room: 3 * n + 1); the bytes written,
 * or -1 at a surrogate. */
static inline ptrdiff_t
u8p_enc_short_ucs2(const uint16_t *src, size_t n, uint8_t *dst)
{
    uint8_t *d = dst;
    unsigned surr = 0;
    size_t i, len;
    for (i = 0; i < n; i++) {
        uint32_t c = src[i], w;
        surr |= (c & 0xF800) == 0xD800;
        w = u8p_utf8_word(c, &len);
        memcpy(d, &w, 4);
        d += len;
    }
    return surr ? -1 : (ptrdiff_t)(d - dst);
}

/* n UCS4 code points -> UTF-8 at dst (room: 4 * n); the bytes written, or
 * -1 at a surrogate. */
static inline ptrdiff_t
u8p_enc_short_ucs4(const uint32_t *src, size_t n, uint8_t *dst)
{
    uint8_t *d = dst;
    unsigned surr = 0;
    size_t i, len;
    for (i = 0; i < n; i++) {
        uint32_t c = src[i], w;
        surr |= (c & 0xFFFFF800u) == 0xD800;
        w = u8p_utf8_word(c, &len);
        memcpy(d, &w, 4);
        d += len;
    }
    return surr ? -1 : (ptrdiff_t)(d - dst);
}
#endif /* U8P_ENC_SHORT */

#endif /* UTF8PFX_ENC_SHORT_H */
