/*
 * Portable scalar decode kernels (see decode.h).  The scan is the reference
 * for error bounds: it follows CPython's UTF-8 decoder case by case
 * (Objects/stringlib/codecs.h), which reports the maximal invalid subpart.
 * ASCII runs go 8 bytes a step (SWAR).
 */
#include <string.h>

#include "../decode.h"
#include "decode_inl.h"

#define HI8 0x8080808080808080ULL
#define IS_CONT(b) (((b) & 0xC0) == 0x80)

static inline uint64_t
load64(const void *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

const char *
u8p_dec_reason(u8p_dec_status st)
{
    switch (st) {
    case U8P_DEC_INVALID_START:
        return "invalid start byte";
    case U8P_DEC_INVALID_CONTINUATION:
        return "invalid continuation byte";
    case U8P_DEC_UNEXPECTED_END:
        return "unexpected end of data";
    default:
        return NULL;
    }
}

static inline u8p_dec_status
fail(u8p_scan_result *res, u8p_dec_status st, size_t start, size_t end)
{
    res->err_start = start;
    res->err_end = end;
    return st;
}

/* PEP 393 class ceiling from the largest lead byte of valid UTF-8. */
static inline uint32_t
class_of_lead(uint8_t maxb)
{
    if (maxb < 0x80)
        return 0x7F;
    if (maxb < 0xC4) /* C2, C3: U+0080..U+00FF */
        return 0xFF;
    if (maxb < 0xF0)
        return 0xFFFF;
    return 0x10FFFF;
}

u8p_dec_status
u8p_dec_scan_scalar(const uint8_t *s, size_t n, int allow_surr,
                    u8p_scan_result *res)
{
    size_t i = 0, cont = 0;
    uint8_t maxb = 0;

    while (i < n) {
        uint8_t c = s[i];
        size_t avail;
        if (c < 0x80) {
            i++;
            while (i + 8 <= n && !(load64(s + i) & HI8))
                i += 8;
            continue;
        }
        if (c > maxb)
            maxb = c;
        avail = n - i;
        if (c < 0xC2) /* stray continuation, or C0/C1 (overlong ASCII) */
            return fail(res, U8P_DEC_INVALID_START, i, i + 1);
        if (c < 0xE0) {
            if (avail < 2)
                return fail(res, U8P_DEC_UNEXPECTED_END, i, n);
            if (!IS_CONT(s[i + 1]))
                return fail(res, U8P_DEC_INVALID_CONTINUATION, i, i + 1);
            i += 2;
            cont += 1;
            continue;
        }
        if (c < 0xF0) {
            if (avail >= 2) {
                uint8_t c2 = s[i + 1];
                if (!IS_CONT(c2) || (c == 0xE0 && c2 < 0xA0) /* overlong */
                    || (c == 0xED && c2 >= 0xA0 && !allow_surr)) /* surrogate */
                    return fail(res, U8P_DEC_INVALID_CONTINUATION, i, i + 1);
            }
            if (avail < 3)
                return fail(res, U8P_DEC_UNEXPECTED_END, i, n);
            if (!IS_CONT(s[i + 2]))
                return fail(res, U8P_DEC_INVALID_CONTINUATION, i, i + 2);
            i += 3;
            cont += 2;
            continue;
        }
        if (c < 0xF5) {
            if (avail >= 2) {
                uint8_t c2 = s[i + 1];
                if (!IS_CONT(c2) || (c == 0xF0 && c2 < 0x90) /* overlong */
                    || (c == 0xF4 && c2 >= 0x90)) /* above U+10FFFF */
                    return fail(res, U8P_DEC_INVALID_CONTINUATION, i, i + 1);
            }
            if (avail >= 3 && !IS_CONT(s[i + 2]))
                return fail(res, U8P_DEC_INVALID_CONTINUATION, i, i + 2);
            if (avail < 4)
                return fail(res, U8P_DEC_UNEXPECTED_END, i, n);
            if (!IS_CONT(s[i + 3]))
                return fail(res, U8P_DEC_INVALID_CONTINUATION, i, i + 3);
            i += 4;
            cont += 3;
            continue;
        }
        /* F5..FF: would be above U+10FFFF, never a lead byte */
        return fail(res, U8P_DEC_INVALID_START, i, i + 1);
    }
    res->ncp = n - cont;
    res->maxchar = class_of_lead(maxb);
    res->err_start = res->err_end = 0;
    return U8P_DEC_OK;
}

/* ---- transcoders: input already validated by scan() ---- */

static size_t
scalar_to_ucs1(const uint8_t *s, size_t n, uint8_t *d)
{
    size_t i = 0, k = 0;
    while (i < n) {
        uint8_t c;
        if (i + 8 <= n) {
            uint64_t v = load64(s + i);
            if (!(v & HI8)) {
                memcpy(d + k, &v, 8);
                i += 8;
                k += 8;
                continue;
            }
        }
        c = s[i];
        if (c < 0x80) {
            d[k++] = c;
            i++;
        }
        else {
            d[k++] = (uint8_t)(((c & 0x1F) << 6) | (s[i + 1] & 0x3F));
            i += 2;
        }
    }
    return k;
}

/* Validated UTF-8 into 16- or 32-bit code units: ASCII runs 8 bytes a
 * step, everything else one sequence at a time.  One body, two widths. */
#define DEFINE_SCALAR_TO(name, T)                                             \
    static size_t name(const uint8_t *s, size_t n, T *d)                      \
    {                                                                         \
        size_t i = 0, k = 0, len_, j;                                         \
        while (i < n) {                                                       \
            if (i + 8 <= n && !(load64(s + i) & HI8)) {                       \
                for (j = 0; j < 8; j++)                                       \
                    d[k + j] = s[i + j];                                      \
                i += 8;                                                       \
                k += 8;                                                       \
                continue;                                                     \
            }                                                                 \
            d[k++] = (T)u8p_decode_one(s + i, &len_);                         \
            i += len_;                                                        \
        }                                                                     \
        return k;                                                             \
    }

DEFINE_SCALAR_TO(scalar_to_ucs2, uint16_t)
DEFINE_SCALAR_TO(scalar_to_ucs4, uint32_t)

size_t
u8p_dec_copy_ascii_scalar(const uint8_t *s, size_t n, uint8_t *d)
{
    size_t i = 0;
    while (i + 32 <= n) {
        uint64_t a = load64(s + i), b = load64(s + i + 8), c = load64(s + i + 16),
                 e = load64(s + i + 24);
        memcpy(d + i, &a, 8);
        memcpy(d + i + 8, &b, 8);
        memcpy(d + i + 16, &c, 8);
        memcpy(d + i + 24, &e, 8);
        if ((a | b | c | e) & HI8)
            return i;
        i += 32;
    }
    for (; i + 8 <= n; i += 8) {
        uint64_t a = load64(s + i);
        memcpy(d + i, &a, 8);
        if (a & HI8)
            return i;
    }
    for (; i < n; i++) {
        if (s[i] >= 0x80)
            return i;
        d[i] = s[i];
    }
    return n;
}

const u8p_dec_kernels u8p_dec_kernels_scalar = {
    "scalar",
    u8p_dec_scan_scalar,
    scalar_to_ucs1,
    scalar_to_ucs2,
    scalar_to_ucs4,
    NULL,
    NULL,
    u8p_dec_copy_ascii_scalar,
    NULL,
    0,
};
