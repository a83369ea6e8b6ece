/*
 * Short payloads in one pass (pure C, no Python.h; inline into the reader).
 *
 * A payload of a name or a key (a few dozen bytes) pays more for the
 * two-pass road of decode.h (scan, then transcode: two calls, each level
 * handing its short tail down to the next) than for the work itself.
 * u8p_dec_short validates and decodes at once into a caller's array of
 * code points, which the caller then narrows into the str it makes.  It
 * accepts only what the "utf-8" codec accepts under "strict" (no
 * surrogates, no overlong forms, nothing above U+10FFFF); on anything else
 * it returns -1 and the caller takes the two-pass road, which finds the
 * exact error (or applies "surrogatepass" and the other handlers).
 */
#ifndef UTF8PFX_DECODE_SHORT_H
#define UTF8PFX_DECODE_SHORT_H

#include <stddef.h>
#include <stdint.h>

/* Payloads up to this many bytes take u8p_dec_short (the caller's array
 * holds as many code points). */
#define U8P_DEC_SHORT_MAX 64

/*
 * Decodes the n <= U8P_DEC_SHORT_MAX bytes at s into cp[], returns the
 * number of code points and stores in *maxcp the top of the PEP 393 class
 * of the largest (0x7F, 0xFF, 0xFFFF or 0x10FFFF); or returns -1
 * (invalid UTF-8, or a surrogate) with cp[] and *maxcp undefined.  Reads
 * only [s, s + n).
 */
static inline ptrdiff_t
u8p_dec_short(const uint8_t *s, size_t n, uint32_t *cp, uint32_t *maxcp)
{
    size_t i = 0, k = 0;
    uint32_t top = 0;
    while (i < n) {
        uint32_t c = s[i], c1, c2, c3;
        if (c < 0x80) {
            cp[k++] = c;
            i += 1;
            continue;
        }
        if (c < 0xC2 || c > 0xF4)
            return -1; /* continuation byte, overlong C0/C1 lead, F5..FF */
        if (i + 1 >= n)
            return -1;
        c1 = s[i + 1];
        if (c < 0xE0) {
            if ((c1 & 0xC0) != 0x80)
                return -1;
            c = ((c & 0x1F) << 6) | (c1 & 0x3F);
            i += 2;
        }
        else if (c < 0xF0) {
            if (i + 2 >= n)
                return -1;
            c2 = s[i + 2];
            /* E0: A0..BF (no overlong), ED: 80..9F (no surrogate) */
            if ((c1 & 0xC0) != 0x80 || (c2 & 0xC0) != 0x80 || (c == 0xE0 && c1 < 0xA0) ||
                (c == 0xED && c1 > 0x9F))
                return -1;
            c = ((c & 0x0F) << 12) | ((c1 & 0x3F) << 6) | (c2 & 0x3F);
            i += 3;
        }
        else {
            if (i + 3 >= n)
                return -1;
            c2 = s[i + 2];
            c3 = s[i + 3];
            /* F0: 90..BF (no overlong), F4: 80..8F (<= U+10FFFF) */
            if ((c1 & 0xC0) != 0x80 || (c2 & 0xC0) != 0x80 || (c3 & 0xC0) != 0x80 ||
                (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F))
                return -1;
            c = ((c & 0x07) << 18) | ((c1 & 0x3F) << 12) | ((c2 & 0x3F) << 6) | (c3 & 0x3F);
            i += 4;
        }
        cp[k++] = c;
        top |= c; /* only the class of the largest matters: an OR tells it */
    }
    /* the top of the PEP 393 class, as the scan's maxchar */
    *maxcp = top >= 0x10000 ? 0x10FFFF : top >= 0x100 ? 0xFFFF : top >= 0x80 ? 0xFF : 0x7F;
    return (ptrdiff_t)k;
}

/* The k code points of u8p_dec_short, in the width of their class top
 * maxcp (1 byte up to 0xFF, 2 up to 0xFFFF, else 4), to dst. */
static inline void
u8p_dec_short_narrow(const uint32_t *cp, size_t k, uint32_t maxcp, void *dst)
{
    size_t j;
    if (maxcp <= 0xFF)
        for (j = 0; j < k; j++)
            ((uint8_t *)dst)[j] = (uint8_t)cp[j];
    else if (maxcp <= 0xFFFF)
        for (j = 0; j < k; j++)
            ((uint16_t *)dst)[j] = (uint16_t)cp[j];
    else
        for (j = 0; j < k; j++)
            ((uint32_t *)dst)[j] = cp[j];
}

#endif /* UTF8PFX_DECODE_SHORT_H */
