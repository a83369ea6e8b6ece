/*
 * AVX2 kernels (x86-64; level "avx2").  Same scheme as x86_sse.c (read its
 * header comment) on 256-bit vectors, 16 units a step (32 for Latin-1).
 * vpshufb only shuffles inside each 128-bit half, so every half (or each
 * 4-lane group of the 3- and 4-byte paths) is compacted with its own table
 * row and the pieces are stored one after the other; the stores are 16
 * bytes wide and the same "enough surrogate-free units follow" rule keeps
 * them inside dst.
 */
#include "simd_internal.h"

#if U8P_X86_SIMD

#include <immintrin.h>

#include "scalar_inl.h"
#include "simd_tables.h"

#define U8P_AVX2 __attribute__((target("avx2,popcnt")))

U8P_AVX2 static inline __m256i
ld(const void *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}

U8P_AVX2 static inline void
st(void *p, __m256i v)
{
    _mm256_storeu_si256((__m256i *)p, v);
}

U8P_AVX2 static inline __m128i
ld128(const void *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}

U8P_AVX2 static inline void
st128(void *p, __m128i v)
{
    _mm_storeu_si128((__m128i *)p, v);
}

U8P_AVX2 static inline size_t
hsum32(__m256i v)
{
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return (size_t)(uint32_t)_mm_cvtsi128_si32(s);
}

/* sum of 16 u16 lanes, each < 32768 (madd is signed) */
U8P_AVX2 static inline size_t
hsum16(__m256i v)
{
    return hsum32(_mm256_madd_epi16(v, _mm256_set1_epi16(1)));
}

/* two table rows, one per 128-bit half */
U8P_AVX2 static inline __m256i
rows(const uint8_t *lo, const uint8_t *hi)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(ld128(lo)), ld128(hi), 1);
}

/* ---------------------------------------------------------------- lengths */

U8P_AVX2 static size_t
avx2_len_ucs1(const uint8_t *src, size_t n)
{
    size_t i = 0, high = 0;
    for (; i + 64 <= n; i += 64) {
        uint64_t m = (uint64_t)(uint32_t)_mm256_movemask_epi8(ld(src + i))
                     | (uint64_t)(uint32_t)_mm256_movemask_epi8(ld(src + i + 32)) << 32;
        high += (size_t)__builtin_popcountll(m);
    }
    for (; i + 32 <= n; i += 32)
        high += (size_t)__builtin_popcount((unsigned)_mm256_movemask_epi8(ld(src + i)));
    return i + high + u8p_scalar_len_ucs1(src + i, n - i);
}

U8P_AVX2 static size_t
avx2_len_ucs2(const uint16_t *src, size_t n, size_t *nsurr)
{
    const __m256i kFF80 = _mm256_set1_epi16((short)0xFF80);
    const __m256i kF800 = _mm256_set1_epi16((short)0xF800);
    const __m256i kD800 = _mm256_set1_epi16((short)0xD800);
    const __m256i zero = _mm256_setzero_si256();
    size_t i = 0, lt = 0, surr = 0, tsurr, tlen;
    /* lt counts (cp < 0x80) + (cp < 0x800): a unit takes 3 - that bytes.
     * 16-bit lanes grow by at most 2 a block: flush every 8192 blocks. */
    while (i + 16 <= n) {
        size_t blocks = (n - i) / 16, b;
        __m256i acc = zero, accs = zero;
        if (blocks > 8192)
            blocks = 8192;
        for (b = 0; b < blocks; b++, i += 16) {
            __m256i v = ld(src + i);
            __m256i hi = _mm256_and_si256(v, kF800);
            acc = _mm256_sub_epi16(acc, _mm256_cmpeq_epi16(_mm256_and_si256(v, kFF80), zero));
            acc = _mm256_sub_epi16(acc, _mm256_cmpeq_epi16(hi, zero));
            accs = _mm256_sub_epi16(accs, _mm256_cmpeq_epi16(hi, kD800));
        }
        lt += hsum16(acc);
        surr += hsum16(accs);
    }
    tlen = u8p_scalar_len_ucs2(src + i, n - i, &tsurr);
    *nsurr = surr + tsurr;
    return 3 * i - lt + tlen;
}

U8P_AVX2 static size_t
avx2_len_ucs4(const uint32_t *src, size_t n, size_t *nsurr)
{
    const __m256i k80 = _mm256_set1_epi32(~0x7F);
    const __m256i k800 = _mm256_set1_epi32(~0x7FF);
    const __m256i k10000 = _mm256_set1_epi32(~0xFFFF);
    const __m256i kD800 = _mm256_set1_epi32(0xD800);
    const __m256i zero = _mm256_setzero_si256();
    size_t i = 0, lt = 0, surr = 0, tsurr, tlen;
    /* lt counts the thresholds a unit is under: it takes 4 - that bytes.
     * 32-bit lanes grow by at most 3 a block: flush every 2**20 blocks. */
    while (i + 8 <= n) {
        size_t blocks = (n - i) / 8, b;
        __m256i acc = zero, accs = zero;
        if (blocks > ((size_t)1 << 20))
            blocks = (size_t)1 << 20;
        for (b = 0; b < blocks; b++, i += 8) {
            __m256i v = ld(src + i);
            __m256i hi = _mm256_and_si256(v, k800);
            acc = _mm256_sub_epi32(acc, _mm256_cmpeq_epi32(_mm256_and_si256(v, k80), zero));
            acc = _mm256_sub_epi32(acc, _mm256_cmpeq_epi32(hi, zero));
            acc = _mm256_sub_epi32(acc, _mm256_cmpeq_epi32(_mm256_and_si256(v, k10000), zero));
            accs = _mm256_sub_epi32(accs, _mm256_cmpeq_epi32(hi, kD800));
        }
        lt += hsum32(acc);
        surr += hsum32(accs);
    }
    tlen = u8p_scalar_len_ucs4(src + i, n - i, &tsurr);
    *nsurr = surr + tsurr;
    return 4 * i - lt + tlen;
}

/* ------------------------------------------------------------ block steps */

/* 16 code points < 0x800 in 16-bit lanes -> 16..32 bytes.  Stores 16 bytes
 * at d and 16 at the end of the first half's output (unit 8's bytes). */
U8P_AVX2 static inline size_t
enc2x16(__m256i v, uint8_t *d)
{
    /* [0xC0 | c >> 6, 0x80 | (c & 0x3F)] as a little-endian 16-bit lane */
    __m256i two = _mm256_or_si256(
        _mm256_or_si256(_mm256_srli_epi16(v, 6),
                        _mm256_slli_epi16(_mm256_and_si256(v, _mm256_set1_epi16(0x3F)), 8)),
        _mm256_set1_epi16((short)0x80C0));
    __m256i big = _mm256_cmpgt_epi16(v, _mm256_set1_epi16(0x7F));
    /* packs works per half: mask bits 0..7 are units 0..7, 16..23 units 8..15 */
    unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_packs_epi16(big, _mm256_setzero_si256()));
    unsigned m0 = m & 0xFF, m1 = (m >> 16) & 0xFF;
    __m256i r = _mm256_shuffle_epi8(_mm256_blendv_epi8(v, two, big),
                                    rows(u8p_shuf2[m0], u8p_shuf2[m1]));
    size_t n0 = 8 + (size_t)__builtin_popcount(m0);
    st128(d, _mm256_castsi256_si128(r));
    st128(d + n0, _mm256_extracti128_si256(r, 1));
    return n0 + 8 + (size_t)__builtin_popcount(m1);
}

/* 16 code points < 0x10000 (no surrogates) in 16-bit lanes -> 16..48
 * bytes.  Each code point's UTF-8 is built right-aligned in a 32-bit lane
 * (as enc4x4 in x86_sse.c) from two 16-bit halves: hi = [b2, b3] (b3 the
 * last byte) and lo = [-, b1] (the lead of a 3-byte sequence), so all the
 * arithmetic runs on 16 units per vector; unpacking lo/hi gives the lanes.
 * Stores 16 bytes at the start of units 0, 4, 8 and 12's bytes. */
U8P_AVX2 static inline size_t
enc3x16(__m256i v, uint8_t *d)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i lt80 = _mm256_cmpeq_epi16(_mm256_and_si256(v, _mm256_set1_epi16((short)0xFF80)), zero);
    __m256i lt800 = _mm256_cmpeq_epi16(_mm256_and_si256(v, _mm256_set1_epi16((short)0xF800)), zero);
    __m256i v8 = _mm256_slli_epi16(v, 8);
    /* b3 = 0x80 | (c & 0x3F); b2 = 0x80 | ((c >> 6) & 0x3F), plus 0x40 when
     * b2 is a 2-byte lead (0xC0 | c >> 6, c >> 6 < 0x20) */
    __m256i hi = _mm256_or_si256(
        _mm256_or_si256(_mm256_and_si256(v8, _mm256_set1_epi16(0x3F00)),
                        _mm256_and_si256(_mm256_srli_epi16(v, 6), _mm256_set1_epi16(0x3F))),
        _mm256_or_si256(_mm256_set1_epi16((short)0x8080),
                        _mm256_and_si256(_mm256_andnot_si256(lt80, lt800),
                                         _mm256_set1_epi16(0x40))));
    /* b1 = 0xE0 | c >> 12 (only used by 3-byte lanes) */
    __m256i lo = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4),
                                                  _mm256_set1_epi16(0x0F00)),
                                 _mm256_set1_epi16((short)0xE000));
    __m256i a, b;
    /* masks, per 128-bit half: bits 0..7 "< 0x80" of its 8 units, 8..15
     * "< 0x800"; k = 2 - those */
    unsigned m = ~(unsigned)_mm256_movemask_epi8(_mm256_packs_epi16(lt80, lt800));
    unsigned x01 = (unsigned)u8p_spread8[m & 0xFF] + u8p_spread8[(m >> 8) & 0xFF];
    unsigned x23 = (unsigned)u8p_spread8[(m >> 16) & 0xFF] + u8p_spread8[m >> 24];
    size_t n0, n1, n2;
    hi = _mm256_blendv_epi8(hi, v8, lt80); /* ASCII: b3 = c */
    /* per half: unpacklo = its units 0..3, unpackhi = units 4..7 */
    a = _mm256_shuffle_epi8(_mm256_unpacklo_epi16(lo, hi),
                            rows(u8p_shuf4[x01 & 0xFF], u8p_shuf4[x23 & 0xFF]));
    b = _mm256_shuffle_epi8(_mm256_unpackhi_epi16(lo, hi),
                            rows(u8p_shuf4[x01 >> 8], u8p_shuf4[x23 >> 8]));
    n0 = u8p_len4[x01 & 0xFF];
    n1 = n0 + u8p_len4[x01 >> 8];
    n2 = n1 + u8p_len4[x23 & 0xFF];
    st128(d, _mm256_castsi256_si128(a));
    st128(d + n0, _mm256_castsi256_si128(b));
    st128(d + n1, _mm256_extracti128_si256(a, 1));
    st128(d + n2, _mm256_extracti128_si256(b, 1));
    return n2 + u8p_len4[x23 >> 8];
}

/* 8 code points (no surrogates, <= 0x10FFFF) in 32-bit lanes -> 8..32
 * bytes; see enc4x4 in x86_sse.c for the lane layout.  Stores 16 bytes at d
 * and 16 at the start of unit 4's bytes. */
U8P_AVX2 static inline size_t
enc4x8(__m256i c, uint8_t *d)
{
    __m256i ge80 = _mm256_cmpgt_epi32(c, _mm256_set1_epi32(0x7F));
    __m256i ge800 = _mm256_cmpgt_epi32(c, _mm256_set1_epi32(0x7FF));
    __m256i ge10000 = _mm256_cmpgt_epi32(c, _mm256_set1_epi32(0xFFFF));
    /* k = bytes after the lead (0..3) */
    __m256i k = _mm256_sub_epi32(_mm256_setzero_si256(),
                                 _mm256_add_epi32(_mm256_add_epi32(ge80, ge800), ge10000));
    /* the four 6-bit groups, lowest in the top byte (c << 24 keeps all of
     * an ASCII byte; the masks below fix bits 6, 7 of multi-byte ones) */
    __m256i s = _mm256_or_si256(
        _mm256_or_si256(_mm256_slli_epi32(c, 24),
                        _mm256_and_si256(_mm256_slli_epi32(c, 10), _mm256_set1_epi32(0x3F0000))),
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(c, 4), _mm256_set1_epi32(0x3F00)),
                        _mm256_srli_epi32(c, 18)));
    /* by k: the lead/continuation marker bits to set, and bit 6 of the
     * last byte to clear; vpermd looks both up (indices 0..3) */
    __m256i set = _mm256_permutevar8x32_epi32(
        _mm256_setr_epi32(0, (int)0x80C00000u, (int)0x8080E000u, (int)0x808080F0u, 0, 0, 0, 0), k);
    __m256i keep = _mm256_permutevar8x32_epi32(
        _mm256_setr_epi32(-1, (int)0xBFFFFFFFu, (int)0xBFFFFFFFu, (int)0xBFFFFFFFu, 0, 0, 0, 0), k);
    /* table index: k0 | k1 << 2 | k2 << 4 | k3 << 6 per half.  After the
     * packs, y = k0 | k1 << 8 | k2 << 16 | k3 << 24 and the multiply by
     * 1 + 2**6 + 2**12 + 2**18 lands k_i at bit 18 + 2i, every other
     * partial product on other (non-overlapping, carry-free) bits. */
    __m256i p = _mm256_packus_epi16(_mm256_packus_epi32(k, k), _mm256_setzero_si256());
    uint32_t y0 = (uint32_t)_mm256_cvtsi256_si32(p), y1 = (uint32_t)_mm256_extract_epi32(p, 4);
    unsigned x0 = ((y0 * 0x41041u) >> 18) & 0xFF, x1 = ((y1 * 0x41041u) >> 18) & 0xFF;
    __m256i r = _mm256_shuffle_epi8(_mm256_and_si256(_mm256_or_si256(s, set), keep),
                                    rows(u8p_shuf4[x0], u8p_shuf4[x1]));
    size_t n0 = u8p_len4[x0];
    st128(d, _mm256_castsi256_si128(r));
    st128(d + n0, _mm256_extracti128_si256(r, 1));
    return n0 + u8p_len4[x1];
}

/* first surrogate in src[i, end), or end */
U8P_AVX2 static size_t
scan_surr16(const uint16_t *src, size_t i, size_t end)
{
    const __m256i kF800 = _mm256_set1_epi16((short)0xF800);
    const __m256i kD800 = _mm256_set1_epi16((short)0xD800);
    for (; i + 16 <= end; i += 16) {
        unsigned m = (unsigned)_mm256_movemask_epi8(
            _mm256_cmpeq_epi16(_mm256_and_si256(ld(src + i), kF800), kD800));
        if (m)
            return i + (size_t)__builtin_ctz(m) / 2;
    }
    for (; i < end; i++) {
        if (U8P_IS_SURROGATE(src[i]))
            return i;
    }
    return end;
}

U8P_AVX2 static size_t
scan_surr32(const uint32_t *src, size_t i, size_t end)
{
    const __m256i kF800 = _mm256_set1_epi32((int)0xFFFFF800u);
    const __m256i kD800 = _mm256_set1_epi32(0xD800);
    for (; i + 8 <= end; i += 8) {
        unsigned m = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
            _mm256_cmpeq_epi32(_mm256_and_si256(ld(src + i), kF800), kD800)));
        if (m)
            return i + (size_t)__builtin_ctz(m);
    }
    for (; i < end; i++) {
        if (U8P_IS_SURROGATE(src[i]))
            return i;
    }
    return end;
}

/* --------------------------------------------------------------- encoders */

/* 32 Latin-1 bytes, not all ASCII -> 32..64 bytes; m is their movemask.
 * A byte >= 0x80 becomes [0xC2 + (c >= 0xC0), c & 0xBF]; every byte is
 * paired with its would-be trail in a 16-bit lane and u8p_shuf2 drops the
 * trail of ASCII bytes.  Stores 16 bytes at the start of units 0, 8, 16
 * and 24's bytes. */
U8P_AVX2 static inline size_t
enc1x32(__m256i v, unsigned m, uint8_t *d)
{
    /* signed: c >= 0xC0 is > -65; ASCII too, but blendv keeps it as is */
    __m256i ge_c0 = _mm256_cmpgt_epi8(v, _mm256_set1_epi8(-65));
    __m256i lead = _mm256_sub_epi8(_mm256_set1_epi8((char)0xC2), ge_c0);
    __m256i first = _mm256_blendv_epi8(v, lead, v); /* high bit of v selects */
    __m256i trail = _mm256_and_si256(v, _mm256_set1_epi8((char)0xBF));
    /* per 128-bit half: unpacklo = its bytes 0..7, unpackhi = 8..15 */
    __m256i a = _mm256_shuffle_epi8(_mm256_unpacklo_epi8(first, trail),
                                    rows(u8p_shuf2[m & 0xFF], u8p_shuf2[(m >> 16) & 0xFF]));
    __m256i b = _mm256_shuffle_epi8(_mm256_unpackhi_epi8(first, trail),
                                    rows(u8p_shuf2[(m >> 8) & 0xFF], u8p_shuf2[m >> 24]));
    size_t n0 = 8 + (size_t)__builtin_popcount(m & 0xFF);
    size_t n1 = 16 + (size_t)__builtin_popcount(m & 0xFFFF);
    size_t n2 = 24 + (size_t)__builtin_popcount(m & 0xFFFFFF);
    st128(d, _mm256_castsi256_si128(a));
    st128(d + n0, _mm256_castsi256_si128(b));
    st128(d + n1, _mm256_extracti128_si256(a, 1));
    st128(d + n2, _mm256_extracti128_si256(b, 1));
    return 32 + (size_t)__builtin_popcount(m);
}

U8P_AVX2 size_t
u8p_avx2_enc_ucs1(const uint8_t *src, size_t n, uint8_t *dst)
{
    uint8_t *d = dst;
    size_t i = 0;
    while (i + 32 <= n) {
        __m256i v = ld(src + i);
        unsigned m = (unsigned)_mm256_movemask_epi8(v);
        if (!m) {
            st(d, v);
            d += 32;
            i += 32;
            continue;
        }
        /* the last 16-byte store starts at unit i + 24 */
        if (i + 40 > n)
            break;
        d += enc1x32(v, m, d);
        i += 32;
    }
    return (size_t)(d - dst) + u8p_scalar_enc_ucs1(src + i, n - i, d);
}

/* Units needed surrogate-free from i for one 16-unit block: the last
 * 16-byte store starts at most at unit i + 12, the ASCII path reads 32
 * units: 32 covers all. */
#define AVX2_NEED 32

U8P_AVX2 size_t
u8p_avx2_enc_ucs2(const uint16_t *src, size_t n, uint8_t *dst, size_t *done)
{
    const __m256i kFF80 = _mm256_set1_epi16((short)0xFF80);
    const __m256i kF800 = _mm256_set1_epi16((short)0xF800);
    uint8_t *d = dst;
    size_t i = 0, lim = 0, k, w;
    int stopped = 0; /* lim is a surrogate's index */
    for (;;) {
        __m256i v;
        if (i + AVX2_NEED > lim) {
            size_t to;
            if (stopped || lim == n)
                break;
            to = n - lim > U8P_SURR_SCAN_CHUNK ? lim + U8P_SURR_SCAN_CHUNK : n;
            lim = scan_surr16(src, lim, to);
            stopped = lim < to;
            continue;
        }
        v = ld(src + i);
        if (_mm256_testz_si256(v, kFF80)) {
            __m256i v2 = ld(src + i + 16);
            if (_mm256_testz_si256(v2, kFF80)) {
                /* packus interleaves the halves: restore unit order */
                st(d, _mm256_permute4x64_epi64(_mm256_packus_epi16(v, v2), 0xD8));
                d += 32;
                i += 32;
            }
            else {
                st128(d, _mm256_castsi256_si128(
                             _mm256_permute4x64_epi64(_mm256_packus_epi16(v, v), 0xD8)));
                d += 16;
                i += 16;
            }
            continue;
        }
        if (_mm256_testz_si256(v, kF800)) {
            d += enc2x16(v, d);
        }
        else {
            d += enc3x16(v, d);
        }
        i += 16;
    }
    w = u8p_scalar_enc_ucs2(src + i, n - i, d, &k);
    *done = i + k;
    return (size_t)(d - dst) + w;
}

U8P_AVX2 size_t
u8p_avx2_enc_ucs4(const uint32_t *src, size_t n, uint8_t *dst, size_t *done)
{
    const __m256i k80 = _mm256_set1_epi32(~0x7F);
    const __m256i k800 = _mm256_set1_epi32(~0x7FF);
    const __m256i k10000 = _mm256_set1_epi32(~0xFFFF);
    uint8_t *d = dst;
    size_t i = 0, lim = 0, k, w;
    int stopped = 0;
    for (;;) {
        __m256i a, b, o;
        if (i + AVX2_NEED > lim) {
            size_t to;
            if (stopped || lim == n)
                break;
            to = n - lim > U8P_SURR_SCAN_CHUNK ? lim + U8P_SURR_SCAN_CHUNK : n;
            lim = scan_surr32(src, lim, to);
            stopped = lim < to;
            continue;
        }
        a = ld(src + i);
        b = ld(src + i + 8);
        o = _mm256_or_si256(a, b);
        if (_mm256_testz_si256(o, k10000)) {
            /* narrow to UCS2: values < 0x10000 survive the saturating
             * pack; packus interleaves the halves, the permute restores
             * order */
            __m256i w16 = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
            if (_mm256_testz_si256(o, k80)) {
                __m256i w8 = _mm256_permute4x64_epi64(_mm256_packus_epi16(w16, w16), 0xD8);
                st128(d, _mm256_castsi256_si128(w8));
                d += 16;
            }
            else if (_mm256_testz_si256(o, k800)) {
                d += enc2x16(w16, d);
            }
            else {
                d += enc3x16(w16, d);
            }
        }
        else {
            d += enc4x8(a, d);
            d += enc4x8(b, d);
        }
        i += 16;
    }
    w = u8p_scalar_enc_ucs4(src + i, n - i, d, &k);
    *done = i + k;
    return (size_t)(d - dst) + w;
}

const u8p_kernels u8p_kernels_avx2 = {
    "avx2",
    avx2_len_ucs1,
    avx2_len_ucs2,
    avx2_len_ucs4,
    u8p_avx2_enc_ucs1,
    u8p_avx2_enc_ucs2,
    u8p_avx2_enc_ucs4,
};

#else /* !U8P_X86_SIMD */
typedef int u8p_x86_avx2_empty; /* ISO C forbids an empty file */
#endif
