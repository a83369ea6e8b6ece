/*
 * AVX-512 kernels (x86-64; level "avx512").  Two tables:
 *
 *   u8p_kernels_avx512        AVX-512 F + BW: 512-bit length kernels (mask
 *                             compares + popcount); the encoders are the
 *                             AVX2 ones (a 512-bit encoder without byte
 *                             compress would be the AVX2 scheme again).
 *   u8p_kernels_avx512_vbmi2  + VBMI2: encoders build each code point's
 *                             UTF-8 right-aligned in a 32-bit lane (as
 *                             utf8_lanes in x86_enc_impl.h) and squeeze out the
 *                             unused bytes with vpcompressb; loads and
 *                             stores are masked to the exact size, so
 *                             nothing is read or written out of bounds and
 *                             no scalar tail is needed.
 *
 * The first is the "avx512" level's table wherever cpuid and XCR0 say the
 * CPU and OS support AVX-512 F + BW.  The VBMI2 encoders were written to
 * be obviously correct rather than fastest; measured natively on AMD Zen 4
 * they take 1.3-3.3x the time of the AVX2 encoders (bench/c), so dispatch
 * does not pick them: u8p_kernels_variants reaches them, and the C
 * harness tests them on every CPU with VBMI2.  The AVX-512 decoders live
 * in decode_x86.c with the other widths.
 */
#include "simd_internal.h"

#if U8P_X86_SIMD

#include <immintrin.h>

#include "scalar_inl.h"

#define U8P_AVX512 __attribute__((target("avx512f,avx512bw,avx2,popcnt")))
#define U8P_VBMI2 __attribute__((target("avx512f,avx512bw,avx512vbmi2,avx2,popcnt")))
/* steps and the loop shared by UCS2 and UCS4: inlined into each */
#define U8P_VBMI2_INL U8P_VBMI2 __attribute__((always_inline))
#define U8P_AVX512_INL U8P_AVX512 __attribute__((always_inline))

/* ---------------------------------------------------------------- lengths */

U8P_AVX512 static size_t
avx512_len_ucs1(const uint8_t *src, size_t n)
{
    size_t i = 0, high = 0;
    for (; i + 64 <= n; i += 64)
        high += (size_t)__builtin_popcountll(_mm512_movepi8_mask(_mm512_loadu_si512(src + i)));
    return i + high + u8p_scalar_len_ucs1(src + i, n - i);
}

/* UCS2 (ucs4 = 0) or UCS4 units: 1 byte each plus one per threshold
 * (0x80, 0x800, 0x10000) crossed, counted on compare masks */
U8P_AVX512_INL static inline size_t
avx512_len_wide(const void *src, size_t n, size_t *nsurr, int ucs4)
{
    const size_t per = ucs4 ? 16 : 32;
    size_t i = 0, len = 0, surr = 0, tsurr, tlen;
    for (; i + per <= n; i += per) {
        __m512i v = _mm512_loadu_si512((const uint8_t *)src + i * (ucs4 ? 4 : 2));
        uint64_t ge, s;
        if (ucs4) {
            ge = (uint64_t)_mm512_cmpge_epu32_mask(v, _mm512_set1_epi32(0x80))
                 | (uint64_t)_mm512_cmpge_epu32_mask(v, _mm512_set1_epi32(0x800)) << 16
                 | (uint64_t)_mm512_cmpge_epu32_mask(v, _mm512_set1_epi32(0x10000)) << 32;
            s = _mm512_cmpeq_epi32_mask(_mm512_and_si512(v, _mm512_set1_epi32((int)0xFFFFF800u)),
                                        _mm512_set1_epi32(0xD800));
        }
        else {
            ge = (uint64_t)_mm512_cmpge_epu16_mask(v, _mm512_set1_epi16(0x80))
                 | (uint64_t)_mm512_cmpge_epu16_mask(v, _mm512_set1_epi16(0x800)) << 32;
            s = _mm512_cmpeq_epi16_mask(_mm512_and_si512(v, _mm512_set1_epi16((short)0xF800)),
                                        _mm512_set1_epi16((short)0xD800));
        }
        len += per + (size_t)__builtin_popcountll(ge);
        surr += (size_t)__builtin_popcountll(s);
    }
    tlen = ucs4 ? u8p_scalar_len_ucs4((const uint32_t *)src + i, n - i, &tsurr)
                : u8p_scalar_len_ucs2((const uint16_t *)src + i, n - i, &tsurr);
    *nsurr = surr + tsurr;
    return len + tlen;
}

U8P_AVX512 static size_t
avx512_len_ucs2(const uint16_t *src, size_t n, size_t *nsurr)
{
    return avx512_len_wide(src, n, nsurr, 0);
}

U8P_AVX512 static size_t
avx512_len_ucs4(const uint32_t *src, size_t n, size_t *nsurr)
{
    return avx512_len_wide(src, n, nsurr, 1);
}



/* ------------------------------------------------------- VBMI2 encoders */

/* Below these lengths the VBMI2 encoders hand the input to the scalar
 * loop.  Their one masked step has a fixed cost (a dependency chain of
 * compare -> mask -> popcount -> compress -> masked store) that the scalar
 * loop beats on a handful of code points.  Measured with
 * bench/c/bench_kernels.c at n = 4..16, every cut-off at 1, on an idle
 * Intel Xeon (family 6 model 207, AVX-512 VBMI2), ns per code point,
 * VBMI2 / scalar: Cyrillic n=4 3.14 / 2.96, n=5 2.43 / 3.00, n=8 1.76 /
 * 2.07; CJK n=4 3.23 / 2.82, n=5 2.60 / 3.40; emoji n=6 1.80 / 1.75, n=7
 * 1.78 / 2.03, n=9 1.06 / 1.36; Latin-1 within noise of each other from 5
 * to 10 (0.98 / 0.92 at 10, 0.91 / 1.05 at 11), and the writer's UCS1
 * names ran 9 % faster without a cut-off than with one at 10: the UCS1
 * encoder has none.  UCS4 keeps
 * 16: the corpus's UCS4 names (mostly letters around one emoji) ran 12-20 %
 * slower in write_strings with the cut-off at 7, where the scalar loop's
 * branches are predictable. */
#ifndef U8P_VBMI2_MIN_UNITS_UCS2
#define U8P_VBMI2_MIN_UNITS_UCS2 5
#endif
#ifndef U8P_VBMI2_MIN_UNITS_UCS4
#define U8P_VBMI2_MIN_UNITS_UCS4 16
#endif

static inline uint64_t
low_bits64(size_t k) /* k in 0..64 */
{
    return k >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1);
}

/* The code points of c's lanes in `lanes` (a prefix of the 16 lanes; no
 * surrogates, <= 0x10FFFF) -> UTF-8 at d, exactly that many bytes (<= 64)
 * written.  Returns the count. */
U8P_VBMI2_INL static inline size_t
vbmi2_enc4x16(__m512i c, __mmask16 lanes, uint8_t *d)
{
    __mmask16 ge80 = _mm512_cmpge_epu32_mask(c, _mm512_set1_epi32(0x80));
    __mmask16 ge800 = _mm512_cmpge_epu32_mask(c, _mm512_set1_epi32(0x800));
    __mmask16 ge10000 = _mm512_cmpge_epu32_mask(c, _mm512_set1_epi32(0x10000));
    /* sequence right-aligned in the lane: byte 3 is always its last byte,
     * byte 3 - k its lead (see utf8_lanes in x86_enc_impl.h) */
    __m512i t0 = _mm512_and_si512(
        c, _mm512_mask_blend_epi32(ge80, _mm512_set1_epi32(0x7F), _mm512_set1_epi32(0x3F)));
    __m512i s = _mm512_or_si512(
        _mm512_or_si512(_mm512_slli_epi32(t0, 24),
                        _mm512_and_si512(_mm512_slli_epi32(c, 10), _mm512_set1_epi32(0x3F0000))),
        _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(c, 4), _mm512_set1_epi32(0x3F00)),
                        _mm512_srli_epi32(c, 18)));
    __m512i mk = _mm512_xor_si512(
        _mm512_xor_si512(_mm512_maskz_mov_epi32(ge80, _mm512_set1_epi32((int)0x80C00000u)),
                         _mm512_maskz_mov_epi32(ge800, _mm512_set1_epi32(0x0040E000))),
        _mm512_maskz_mov_epi32(ge10000, _mm512_set1_epi32(0x000060F0)));
    /* one high bit per byte to keep: byte 3 of every live lane, then
     * bytes 2, 1, 0 as the thresholds are crossed */
    __m512i keepv = _mm512_or_si512(
        _mm512_or_si512(_mm512_maskz_mov_epi32(lanes, _mm512_set1_epi32((int)0x80000000u)),
                        _mm512_maskz_mov_epi32(ge80 & lanes, _mm512_set1_epi32(0x00800000))),
        _mm512_or_si512(_mm512_maskz_mov_epi32(ge800 & lanes, _mm512_set1_epi32(0x00008000)),
                        _mm512_maskz_mov_epi32(ge10000 & lanes, _mm512_set1_epi32(0x00000080))));
    __mmask64 keep = _mm512_movepi8_mask(keepv);
    size_t cnt = (size_t)__builtin_popcountll(keep);
    __m512i out = _mm512_maskz_compress_epi8(keep, _mm512_or_si512(s, mk));
    _mm512_mask_storeu_epi8(d, low_bits64(cnt), out);
    return cnt;
}

U8P_VBMI2 static size_t
vbmi2_enc_ucs1(const uint8_t *src, size_t n, uint8_t *dst)
{
    uint8_t *d = dst;
    size_t i = 0;
    while (i < n) {
        size_t take = n - i < 32 ? n - i : 32, cnt;
        __mmask32 lanes = (__mmask32)low_bits64(take), big;
        __m512i w, two, keepv;
        __mmask64 keep;
        if (n - i >= 64) {
            __m512i v = _mm512_loadu_si512(src + i);
            if (!_mm512_movepi8_mask(v)) {
                _mm512_storeu_si512(d, v);
                d += 64;
                i += 64;
                continue;
            }
        }
        w = _mm512_cvtepu8_epi16(
            _mm512_castsi512_si256(_mm512_maskz_loadu_epi8(lanes, src + i)));
        big = _mm512_cmpge_epu16_mask(w, _mm512_set1_epi16(0x80));
        /* [0xC0 | c >> 6, 0x80 | (c & 0x3F)] as a little-endian 16-bit lane */
        two = _mm512_or_si512(
            _mm512_or_si512(_mm512_srli_epi16(w, 6),
                            _mm512_slli_epi16(_mm512_and_si512(w, _mm512_set1_epi16(0x3F)), 8)),
            _mm512_set1_epi16((short)0x80C0));
        keepv = _mm512_maskz_mov_epi16(
            lanes, _mm512_mask_blend_epi16(big, _mm512_set1_epi16(0x0080),
                                           _mm512_set1_epi16((short)0x8080)));
        keep = _mm512_movepi8_mask(keepv);
        cnt = (size_t)__builtin_popcountll(keep);
        _mm512_mask_storeu_epi8(
            d, low_bits64(cnt),
            _mm512_maskz_compress_epi8(keep, _mm512_mask_blend_epi16(big, w, two)));
        d += cnt;
        i += take;
    }
    return (size_t)(d - dst);
}

/* In the UCS2 and UCS4 loops: c's live lanes -> UTF-8 at d; at a
 * surrogate among them, only the lanes before it, and the loop ends. */
#define VBMI2_STEP_TO_SURR(c, lanes, take)                                    \
    {                                                                         \
        __mmask16 sur_ = _mm512_cmpeq_epi32_mask(_mm512_and_si512((c), kF800), kD800) & (lanes); \
        if (sur_) {                                                           \
            size_t first_ = (size_t)__builtin_ctz(sur_);                      \
            d += vbmi2_enc4x16((c), (__mmask16)low_bits64(first_), d);        \
            i += first_;                                                      \
            break;                                                            \
        }                                                                     \
        d += vbmi2_enc4x16((c), (lanes), d);                                  \
        i += (take);                                                          \
    }

U8P_VBMI2 static size_t
vbmi2_enc_ucs2(const uint16_t *src, size_t n, uint8_t *dst, size_t *done)
{
    const __m512i kF800 = _mm512_set1_epi32((int)0xFFFFF800u);
    const __m512i kD800 = _mm512_set1_epi32(0xD800);
    uint8_t *d = dst;
    size_t i = 0;
    if (n < U8P_VBMI2_MIN_UNITS_UCS2)
        return u8p_scalar_enc_ucs2(src, n, dst, done);
    while (i < n) {
        size_t take = n - i < 16 ? n - i : 16;
        __mmask16 lanes = (__mmask16)low_bits64(take);
        __m512i c;
        if (n - i >= 32) {
            __m512i v = _mm512_loadu_si512(src + i);
            /* all ASCII (so no surrogate either): narrow and store */
            if (!_mm512_cmpge_epu16_mask(v, _mm512_set1_epi16(0x80))) {
                _mm256_storeu_si256((__m256i *)d, _mm512_cvtepi16_epi8(v));
                d += 32;
                i += 32;
                continue;
            }
        }
        c = _mm512_cvtepu16_epi32(_mm512_castsi512_si256(
            _mm512_maskz_loadu_epi16((__mmask32)lanes, src + i)));
        VBMI2_STEP_TO_SURR(c, lanes, take);
    }
    *done = i;
    return (size_t)(d - dst);
}

U8P_VBMI2 static size_t
vbmi2_enc_ucs4(const uint32_t *src, size_t n, uint8_t *dst, size_t *done)
{
    const __m512i kF800 = _mm512_set1_epi32((int)0xFFFFF800u);
    const __m512i kD800 = _mm512_set1_epi32(0xD800);
    uint8_t *d = dst;
    size_t i = 0;
    if (n < U8P_VBMI2_MIN_UNITS_UCS4)
        return u8p_scalar_enc_ucs4(src, n, dst, done);
    while (i < n) {
        size_t take = n - i < 16 ? n - i : 16;
        __mmask16 lanes = (__mmask16)low_bits64(take);
        __m512i c = _mm512_maskz_loadu_epi32(lanes, src + i);
        if (take == 16 && !_mm512_cmpge_epu32_mask(c, _mm512_set1_epi32(0x80))) {
            _mm_storeu_si128((__m128i *)d, _mm512_cvtepi32_epi8(c));
            d += 16;
            i += 16;
            continue;
        }
        VBMI2_STEP_TO_SURR(c, lanes, take);
    }
    *done = i;
    return (size_t)(d - dst);
}

const u8p_kernels u8p_kernels_avx512_vbmi2 = {
    "avx512-vbmi2",
    avx512_len_ucs1,
    avx512_len_ucs2,
    avx512_len_ucs4,
    vbmi2_enc_ucs1,
    vbmi2_enc_ucs2,
    vbmi2_enc_ucs4,
};

/* ------------------------------------------- the "avx512" level's table */

/*
 * Each kernel of the AVX-512 level is the fastest measured for its input
 * size on AMD Zen 4 (bench/c/bench_kernels.c, README "x86 kernels"): the
 * masked VBMI2 encoders for short strings (no scalar tail, no buffer
 * round trip: 1.2-3x faster than AVX2 there), AVX2's block encoders for
 * long ones (VBMI2 took 1.3-3.3x their time); the 512-bit length for UCS1
 * (1.3-1.7x AVX2's), AVX2's for UCS2 and UCS4 (the 512-bit mask counts
 * took 1.3x and 2x their time).  Without VBMI2, AVX2's encoders.
 */
#define AVX512_SHORT_UCS1 128
#define AVX512_SHORT_UCS2 48
#define AVX512_SHORT_UCS4 80

U8P_VBMI2 static size_t
avx512_enc1(const uint8_t *src, size_t n, uint8_t *dst)
{
    return n < AVX512_SHORT_UCS1 ? vbmi2_enc_ucs1(src, n, dst) : u8p_avx2_enc_ucs1(src, n, dst);
}

#define DEFINE_BY_SIZE(name, T, limit, short_fn, long_fn)                    \
    U8P_VBMI2 static size_t name(const T *src, size_t n, uint8_t *dst, size_t *done) \
    {                                                                         \
        return (n < (limit) ? short_fn : long_fn)(src, n, dst, done);         \
    }
DEFINE_BY_SIZE(avx512_enc2, uint16_t, AVX512_SHORT_UCS2, vbmi2_enc_ucs2, u8p_avx2_enc_ucs2)
DEFINE_BY_SIZE(avx512_enc4, uint32_t, AVX512_SHORT_UCS4, vbmi2_enc_ucs4, u8p_avx2_enc_ucs4)

/* AVX-512 F + BW */
const u8p_kernels u8p_kernels_avx512 = {
    "avx512",          avx512_len_ucs1,   u8p_avx2_len_ucs2,       u8p_avx2_len_ucs4,
    u8p_avx2_enc_ucs1, u8p_avx2_enc_ucs2, u8p_avx2_enc_ucs4,
};

/* + VBMI2 */
const u8p_kernels u8p_kernels_avx512_mixed = {
    "avx512",    avx512_len_ucs1, u8p_avx2_len_ucs2, u8p_avx2_len_ucs4,
    avx512_enc1, avx512_enc2, avx512_enc4,
};

#else /* !U8P_X86_SIMD */
typedef int u8p_x86_avx512_empty; /* ISO C forbids an empty file */
#endif
