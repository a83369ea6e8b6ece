/*
 * NEON kernels (aarch64 only, where NEON is architectural: no runtime
 * check; level "sse" in the dispatch order, name "neon").
 *
 * The same scheme as the x86 encoders (x86/x86_enc.c, read its header comment): 8-unit blocks,
 * ASCII narrowed with vmovn, < 0x800 through u8p_shuf2, everything else
 * right-aligned in 32-bit lanes and compacted with u8p_shuf4.  tbl writes 0
 * for out-of-range indices, as pshufb does for 0x80, so the tables are
 * shared.  x86 movemask has no NEON twin: a lane mask becomes a bit mask by
 * AND-ing with lane weights (1, 2, 4, ...) and adding across the vector.
 */
#include "../generic/simd_internal.h"

#if U8P_ARM_NEON

#include <arm_neon.h>

#include "../generic/scalar_inl.h"
#include "../generic/simd_tables.h"

static inline unsigned
mask16x8(uint16x8_t m) /* one bit per 16-bit lane */
{
    static const uint16_t w[8] = {1, 2, 4, 8, 16, 32, 64, 128};
    return vaddvq_u16(vandq_u16(m, vld1q_u16(w)));
}

static inline unsigned
mask32x4(uint32x4_t m) /* one bit per 32-bit lane */
{
    static const uint32_t w[4] = {1, 2, 4, 8};
    return vaddvq_u32(vandq_u32(m, vld1q_u32(w)));
}

/* ---------------------------------------------------------------- lengths */

static size_t
neon_len_ucs1(const uint8_t *src, size_t n)
{
    size_t i = 0, high = 0;
    /* 8-bit lanes grow by at most 1 a block: flush every 255 blocks */
    while (i + 16 <= n) {
        size_t blocks = (n - i) / 16, b;
        uint8x16_t acc = vdupq_n_u8(0);
        if (blocks > 255)
            blocks = 255;
        for (b = 0; b < blocks; b++, i += 16)
            acc = vaddq_u8(acc, vshrq_n_u8(vld1q_u8(src + i), 7));
        high += vaddlvq_u8(acc);
    }
    return i + high + u8p_scalar_len_ucs1(src + i, n - i);
}

static size_t
neon_len_ucs2(const uint16_t *src, size_t n, size_t *nsurr)
{
    const uint16x8_t kF800 = vdupq_n_u16(0xF800), kD800 = vdupq_n_u16(0xD800);
    const uint16x8_t k80 = vdupq_n_u16(0x80), k800 = vdupq_n_u16(0x800);
    size_t i = 0, lt = 0, surr = 0, tsurr, tlen;
    /* lt counts (cp < 0x80) + (cp < 0x800): a unit takes 3 - that bytes.
     * 16-bit lanes grow by at most 2 a block: flush every 8192 blocks. */
    while (i + 8 <= n) {
        size_t blocks = (n - i) / 8, b;
        uint16x8_t acc = vdupq_n_u16(0), accs = vdupq_n_u16(0);
        if (blocks > 8192)
            blocks = 8192;
        for (b = 0; b < blocks; b++, i += 8) {
            uint16x8_t v = vld1q_u16(src + i);
            /* compare results are all-ones: subtracting adds 1 */
            acc = vsubq_u16(acc, vcltq_u16(v, k80));
            acc = vsubq_u16(acc, vcltq_u16(v, k800));
            accs = vsubq_u16(accs, vceqq_u16(vandq_u16(v, kF800), kD800));
        }
        lt += vaddlvq_u16(acc);
        surr += vaddlvq_u16(accs);
    }
    tlen = u8p_scalar_len_ucs2(src + i, n - i, &tsurr);
    *nsurr = surr + tsurr;
    return 3 * i - lt + tlen;
}

static size_t
neon_len_ucs4(const uint32_t *src, size_t n, size_t *nsurr)
{
    const uint32x4_t kF800 = vdupq_n_u32(0xFFFFF800u), kD800 = vdupq_n_u32(0xD800);
    const uint32x4_t k80 = vdupq_n_u32(0x80), k800 = vdupq_n_u32(0x800);
    const uint32x4_t k10000 = vdupq_n_u32(0x10000);
    size_t i = 0, lt = 0, surr = 0, tsurr, tlen;
    /* 32-bit lanes grow by at most 3 a block: flush every 2**20 blocks */
    while (i + 4 <= n) {
        size_t blocks = (n - i) / 4, b;
        uint32x4_t acc = vdupq_n_u32(0), accs = vdupq_n_u32(0);
        if (blocks > ((size_t)1 << 20))
            blocks = (size_t)1 << 20;
        for (b = 0; b < blocks; b++, i += 4) {
            uint32x4_t v = vld1q_u32(src + i);
            acc = vsubq_u32(acc, vcltq_u32(v, k80));
            acc = vsubq_u32(acc, vcltq_u32(v, k800));
            acc = vsubq_u32(acc, vcltq_u32(v, k10000));
            accs = vsubq_u32(accs, vceqq_u32(vandq_u32(v, kF800), kD800));
        }
        lt += vaddlvq_u32(acc);
        surr += vaddlvq_u32(accs);
    }
    tlen = u8p_scalar_len_ucs4(src + i, n - i, &tsurr);
    *nsurr = surr + tsurr;
    return 4 * i - lt + tlen;
}

/* ------------------------------------------------------------ block steps */

/* 8 code points < 0x800 -> 8..16 bytes; stores 16 at d (see enc2x8 in
 * x86_enc_impl.h) */
static inline size_t
enc2x8(uint16x8_t v, uint8_t *d)
{
    uint16x8_t two = vorrq_u16(vorrq_u16(vshrq_n_u16(v, 6),
                                         vshlq_n_u16(vandq_u16(v, vdupq_n_u16(0x3F)), 8)),
                               vdupq_n_u16(0x80C0));
    uint16x8_t big = vcgtq_u16(v, vdupq_n_u16(0x7F));
    unsigned m = mask16x8(big);
    uint8x16_t w = vreinterpretq_u8_u16(vbslq_u16(big, two, v));
    vst1q_u8(d, vqtbl1q_u8(w, vld1q_u8(u8p_shuf2[m])));
    return 8 + (size_t)__builtin_popcount(m);
}

/* 4 code points (no surrogates) -> 4..16 bytes; stores 16 at d (see
 * utf8_lanes in x86_enc_impl.h for the lane layout) */
static inline size_t
enc4x4(uint32x4_t c, uint8_t *d)
{
    uint32x4_t ge80 = vcgtq_u32(c, vdupq_n_u32(0x7F));
    uint32x4_t ge800 = vcgtq_u32(c, vdupq_n_u32(0x7FF));
    uint32x4_t ge10000 = vcgtq_u32(c, vdupq_n_u32(0xFFFF));
    uint32x4_t t0 = vandq_u32(c, veorq_u32(vdupq_n_u32(0x7F),
                                           vandq_u32(ge80, vdupq_n_u32(0x40))));
    uint32x4_t s = vorrq_u32(
        vorrq_u32(vshlq_n_u32(t0, 24), vandq_u32(vshlq_n_u32(c, 10), vdupq_n_u32(0x3F0000))),
        vorrq_u32(vandq_u32(vshrq_n_u32(c, 4), vdupq_n_u32(0x3F00)), vshrq_n_u32(c, 18)));
    uint32x4_t mk = veorq_u32(veorq_u32(vandq_u32(ge80, vdupq_n_u32(0x80C00000u)),
                                        vandq_u32(ge800, vdupq_n_u32(0x0040E000u))),
                              vandq_u32(ge10000, vdupq_n_u32(0x000060F0u)));
    unsigned x = (unsigned)u8p_spread8[mask32x4(ge80)] + u8p_spread8[mask32x4(ge800)]
                 + u8p_spread8[mask32x4(ge10000)];
    vst1q_u8(d, vqtbl1q_u8(vreinterpretq_u8_u32(vorrq_u32(s, mk)), vld1q_u8(u8p_shuf4[x])));
    return u8p_len4[x];
}

/* first surrogate in src[i, end), or end */
static size_t
scan_surr16(const uint16_t *src, size_t i, size_t end)
{
    const uint16x8_t kF800 = vdupq_n_u16(0xF800), kD800 = vdupq_n_u16(0xD800);
    for (; i + 8 <= end; i += 8) {
        if (vmaxvq_u16(vceqq_u16(vandq_u16(vld1q_u16(src + i), kF800), kD800)))
            break; /* the scalar loop below finds which unit */
    }
    for (; i < end; i++) {
        if (U8P_IS_SURROGATE(src[i]))
            return i;
    }
    return end;
}

static size_t
scan_surr32(const uint32_t *src, size_t i, size_t end)
{
    const uint32x4_t kF800 = vdupq_n_u32(0xFFFFF800u), kD800 = vdupq_n_u32(0xD800);
    for (; i + 4 <= end; i += 4) {
        if (vmaxvq_u32(vceqq_u32(vandq_u32(vld1q_u32(src + i), kF800), kD800)))
            break;
    }
    for (; i < end; i++) {
        if (U8P_IS_SURROGATE(src[i]))
            return i;
    }
    return end;
}

/* --------------------------------------------------------------- encoders */

static size_t
neon_enc_ucs1(const uint8_t *src, size_t n, uint8_t *dst)
{
    uint8_t *d = dst;
    size_t i = 0;
    while (i + 16 <= n) {
        uint8x16_t v = vld1q_u8(src + i);
        if (vmaxvq_u8(v) < 0x80) {
            vst1q_u8(d, v);
            d += 16;
            i += 16;
            continue;
        }
        /* the second 16-byte store starts at unit i + 8 */
        if (i + 24 > n)
            break;
        d += enc2x8(vmovl_u8(vget_low_u8(v)), d);
        d += enc2x8(vmovl_high_u8(v), d);
        i += 16;
    }
    return (size_t)(d - dst) + u8p_scalar_enc_ucs1(src + i, n - i, d);
}

/* units a block needs surrogate-free ahead (the x86 encoders: ENC_NEED) */
#define NEON_NEED 24

static size_t
neon_enc_ucs2(const uint16_t *src, size_t n, uint8_t *dst, size_t *done)
{
    uint8_t *d = dst;
    size_t i = 0, lim = 0, k, w;
    int stopped = 0; /* lim is a surrogate's index */
    if (n < U8P_SIMD_MIN_UNITS)
        return u8p_scalar_enc_ucs2(src, n, dst, done);
    for (;;) {
        uint16x8_t v;
        if (i + NEON_NEED > lim) {
            size_t to;
            if (stopped || lim == n)
                break;
            to = n - lim > U8P_SURR_SCAN_CHUNK ? lim + U8P_SURR_SCAN_CHUNK : n;
            lim = scan_surr16(src, lim, to);
            stopped = lim < to;
            continue;
        }
        v = vld1q_u16(src + i);
        if (vmaxvq_u16(v) < 0x80) {
            uint16x8_t v2 = vld1q_u16(src + i + 8);
            if (vmaxvq_u16(v2) < 0x80) {
                vst1q_u8(d, vcombine_u8(vmovn_u16(v), vmovn_u16(v2)));
                d += 16;
                i += 16;
            }
            else {
                vst1_u8(d, vmovn_u16(v));
                d += 8;
                i += 8;
            }
            continue;
        }
        if (vmaxvq_u16(v) < 0x800) {
            d += enc2x8(v, d);
        }
        else {
            d += enc4x4(vmovl_u16(vget_low_u16(v)), d);
            d += enc4x4(vmovl_high_u16(v), d);
        }
        i += 8;
    }
    w = u8p_scalar_enc_ucs2(src + i, n - i, d, &k);
    *done = i + k;
    return (size_t)(d - dst) + w;
}

static size_t
neon_enc_ucs4(const uint32_t *src, size_t n, uint8_t *dst, size_t *done)
{
    uint8_t *d = dst;
    size_t i = 0, lim = 0, k, w;
    int stopped = 0;
    if (n < U8P_SIMD_MIN_UNITS)
        return u8p_scalar_enc_ucs4(src, n, dst, done);
    for (;;) {
        uint32x4_t a, b;
        uint32_t top;
        if (i + NEON_NEED > lim) {
            size_t to;
            if (stopped || lim == n)
                break;
            to = n - lim > U8P_SURR_SCAN_CHUNK ? lim + U8P_SURR_SCAN_CHUNK : n;
            lim = scan_surr32(src, lim, to);
            stopped = lim < to;
            continue;
        }
        a = vld1q_u32(src + i);
        b = vld1q_u32(src + i + 4);
        top = vmaxvq_u32(vmaxq_u32(a, b));
        if (top < 0x80) {
            vst1_u8(d, vmovn_u16(vcombine_u16(vmovn_u32(a), vmovn_u32(b))));
            d += 8;
        }
        else if (top < 0x800) {
            d += enc2x8(vcombine_u16(vmovn_u32(a), vmovn_u32(b)), d);
        }
        else {
            d += enc4x4(a, d);
            d += enc4x4(b, d);
        }
        i += 8;
    }
    w = u8p_scalar_enc_ucs4(src + i, n - i, d, &k);
    *done = i + k;
    return (size_t)(d - dst) + w;
}

U8P_DEFINE_ENC_PASS(static, neon_enc_ucs2_pass, uint16_t, neon_enc_ucs2)
U8P_DEFINE_ENC_PASS(static, neon_enc_ucs4_pass, uint32_t, neon_enc_ucs4)

const u8p_kernels u8p_kernels_neon = {
    "neon",
    neon_len_ucs1,
    neon_len_ucs2,
    neon_len_ucs4,
    neon_enc_ucs1,
    neon_enc_ucs2,
    neon_enc_ucs4,
    neon_enc_ucs2_pass,
    neon_enc_ucs4_pass,
    neon_enc_ucs1, /* the room forms: the room is not used */
    neon_enc_ucs2,
    neon_enc_ucs4,
};

#else /* !U8P_ARM_NEON */
typedef int u8p_arm_neon_empty; /* ISO C forbids an empty file */
#endif
