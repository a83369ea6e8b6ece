/*
 * The scalar reference kernels, as static inline functions: scalar.c wraps
 * them into u8p_kernels_scalar, and every SIMD kernel calls them for its
 * tail (the bytes a vector step cannot touch without reading or writing out
 * of bounds).  Single source: the SIMD files never copy these loops.
 *
 * Private to csrc/kernels; no Python.h.  SWAR: 8 code units at a time where
 * a run is all ASCII.
 */
#ifndef UTF8PFX_SCALAR_INL_H
#define UTF8PFX_SCALAR_INL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define U8P_IS_SURROGATE(c) (((c) & 0xFFFFF800u) == 0xD800u)

static inline uint64_t
u8p_load64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void
u8p_store64(void *p, uint64_t v)
{
    memcpy(p, &v, sizeof v);
}

static inline size_t
u8p_scalar_len_ucs1(const uint8_t *src, size_t n)
{
    size_t i = 0, high = 0;
    /* popcount of the high bits, 8 bytes a step */
    for (; i + 8 <= n; i += 8) {
        uint64_t v = u8p_load64(src + i) & 0x8080808080808080ULL;
        /* fold the eight high bits into a count */
        high += (size_t)(((v >> 7) * 0x0101010101010101ULL) >> 56);
    }
    for (; i < n; i++)
        high += src[i] >> 7;
    return n + high;
}

static inline size_t
u8p_scalar_len_ucs2(const uint16_t *src, size_t n, size_t *nsurr)
{
    size_t len = n, surr = 0, i;
    for (i = 0; i < n; i++) {
        uint32_t c = src[i];
        len += (c >= 0x80) + (c >= 0x800);
        surr += U8P_IS_SURROGATE(c);
    }
    *nsurr = surr;
    return len;
}

static inline size_t
u8p_scalar_len_ucs4(const uint32_t *src, size_t n, size_t *nsurr)
{
    size_t len = n, surr = 0, i;
    for (i = 0; i < n; i++) {
        uint32_t c = src[i];
        len += (c >= 0x80) + (c >= 0x800) + (c >= 0x10000);
        surr += U8P_IS_SURROGATE(c);
    }
    *nsurr = surr;
    return len;
}

static inline size_t
u8p_scalar_enc_ucs1(const uint8_t *src, size_t n, uint8_t *dst)
{
    uint8_t *d = dst;
    size_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t v = u8p_load64(src + i);
            if (!(v & 0x8080808080808080ULL)) {
                u8p_store64(d, v);
                d += 8;
                i += 8;
                continue;
            }
        }
        {
            uint8_t c = src[i++];
            if (c < 0x80) {
                *d++ = c;
            }
            else {
                *d++ = (uint8_t)(0xC0 | (c >> 6));
                *d++ = (uint8_t)(0x80 | (c & 0x3F));
            }
        }
    }
    return (size_t)(d - dst);
}

/* n Latin-1 code points -> UTF-8 at dst, no branch per code point (for
 * the few bytes a SIMD kernel leaves, whose accents fall at random): each
 * one writes both bytes it could take and advances by 1 + (c >> 7); the
 * last one writes its second byte only when it has one, so nothing lands
 * past the exact length. */
static inline size_t
u8p_enc_ucs1_nobranch(const uint8_t *src, size_t n, uint8_t *dst)
{
    uint8_t *d = dst;
    size_t i;
    unsigned c;
    if (n == 0)
        return 0;
    for (i = 0; i + 1 < n; i++) {
        c = src[i];
        d[0] = (uint8_t)(c < 0x80 ? c : 0xC0 | (c >> 6));
        d[1] = (uint8_t)(0x80 | (c & 0x3F));
        d += 1 + (c >> 7);
    }
    c = src[n - 1];
    if (c < 0x80) {
        *d++ = (uint8_t)c;
    }
    else {
        d[0] = (uint8_t)(0xC0 | (c >> 6));
        d[1] = (uint8_t)(0x80 | (c & 0x3F));
        d += 2;
    }
    return (size_t)(d - dst);
}

static inline size_t
u8p_scalar_enc_ucs2(const uint16_t *src, size_t n, uint8_t *dst, size_t *done)
{
    uint8_t *d = dst;
    size_t i = 0;
    while (i < n) {
        uint32_t c;
        if (i + 4 <= n) {
            uint64_t v = u8p_load64(src + i);
            if (!(v & 0xFF80FF80FF80FF80ULL)) {
                d[0] = (uint8_t)src[i];
                d[1] = (uint8_t)src[i + 1];
                d[2] = (uint8_t)src[i + 2];
                d[3] = (uint8_t)src[i + 3];
                d += 4;
                i += 4;
                continue;
            }
        }
        c = src[i];
        if (c < 0x80) {
            *d++ = (uint8_t)c;
        }
        else if (c < 0x800) {
            *d++ = (uint8_t)(0xC0 | (c >> 6));
            *d++ = (uint8_t)(0x80 | (c & 0x3F));
        }
        else if (U8P_IS_SURROGATE(c)) {
            break;
        }
        else {
            *d++ = (uint8_t)(0xE0 | (c >> 12));
            *d++ = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            *d++ = (uint8_t)(0x80 | (c & 0x3F));
        }
        i++;
    }
    *done = i;
    return (size_t)(d - dst);
}

static inline size_t
u8p_scalar_enc_ucs4(const uint32_t *src, size_t n, uint8_t *dst, size_t *done)
{
    uint8_t *d = dst;
    size_t i;
    for (i = 0; i < n; i++) {
        uint32_t c = src[i];
        if (c < 0x80) {
            *d++ = (uint8_t)c;
        }
        else if (c < 0x800) {
            *d++ = (uint8_t)(0xC0 | (c >> 6));
            *d++ = (uint8_t)(0x80 | (c & 0x3F));
        }
        else if (c < 0x10000) {
            if (U8P_IS_SURROGATE(c))
                break;
            *d++ = (uint8_t)(0xE0 | (c >> 12));
            *d++ = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            *d++ = (uint8_t)(0x80 | (c & 0x3F));
        }
        else {
            *d++ = (uint8_t)(0xF0 | (c >> 18));
            *d++ = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
            *d++ = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            *d++ = (uint8_t)(0x80 | (c & 0x3F));
        }
    }
    *done = i;
    return (size_t)(d - dst);
}

/* A surrogate's 3-byte form, what "surrogatepass" writes, at d; returns 3. */
static inline size_t
u8p_enc_surrogate(uint32_t c, uint8_t *d)
{
    d[0] = (uint8_t)(0xE0 | (c >> 12));
    d[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
    d[2] = (uint8_t)(0x80 | (c & 0x3F));
    return 3;
}

/*
 * Defines `name`, the enc_ucs2_pass / enc_ucs4_pass of kernels.h made from
 * an encoder `enc` that stops at surrogates: enc on each surrogate-free
 * run, each surrogate's 3-byte form between.  On a str without surrogates
 * that is one call of enc, so a level whose encoder needs no look-ahead
 * for surrogates (or whose look costs little) takes this form.  `attrs`
 * are the function's attributes (a target, `static`).
 */
#define U8P_DEFINE_ENC_PASS(attrs, name, T, enc)                              \
    attrs size_t name(const T *src, size_t n, uint8_t *dst, int *surr)        \
    {                                                                         \
        uint8_t *d = dst;                                                     \
        size_t i = 0, done;                                                   \
        int any = 0;                                                          \
        while (i < n) {                                                       \
            d += enc(src + i, n - i, d, &done);                               \
            i += done;                                                        \
            if (i < n) {                                                      \
                d += u8p_enc_surrogate(src[i++], d);                          \
                any = 1;                                                      \
            }                                                                 \
        }                                                                     \
        if (surr)                                                             \
            *surr = any;                                                      \
        return (size_t)(d - dst);                                             \
    }

U8P_DEFINE_ENC_PASS(static inline, u8p_scalar_enc_ucs2_pass, uint16_t, u8p_scalar_enc_ucs2)
U8P_DEFINE_ENC_PASS(static inline, u8p_scalar_enc_ucs4_pass, uint32_t, u8p_scalar_enc_ucs4)

#endif /* UTF8PFX_SCALAR_INL_H */
