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
#include "x86_short.h"

#define U8P_AVX2 __attribute__((target("avx2,popcnt")))
/* block steps: gcc would otherwise call the bigger ones out of line */
#define U8P_AVX2_INL __attribute__((target("avx2,popcnt"), always_inline))

/* a constant from u8p_avx2_k (x86_avx2_consts.c) */
#define KV(name) _mm256_load_si256((const __m256i *)u8p_avx2_k[U8P_K_##name].b)

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

U8P_AVX2_INL static inline size_t
hsum32(__m256i v)
{
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return (size_t)(uint32_t)_mm_cvtsi128_si32(s);
}

/* sum of 16 u16 lanes, each < 32768 (madd is signed) */
U8P_AVX2_INL static inline size_t
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

/* 8 all-ones then 8 zeros: 8 ints from u8p_avx2_lanemask + 8 - r are a
 * vpmaskmovd mask for the first r lanes */
static const int32_t u8p_avx2_lanemask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

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
    const __m256i kFFFF = _mm256_set1_epi32(0xFFFF);
    const __m256i kFF80 = _mm256_set1_epi16((short)0xFF80);
    const __m256i kF800 = _mm256_set1_epi16((short)0xF800);
    const __m256i kD800 = _mm256_set1_epi16((short)0xD800);
    const __m256i zero = _mm256_setzero_si256();
    size_t i = 0, i0, lt = 0, astral = 0, surr = 0, tsurr, tlen;
    /* 16 units a block, narrowed to 16 bits by the saturating pack (which
     * sends astral code points to 0xFFFF: neither "< 0x80", "< 0x800" nor
     * a surrogate, as wanted).  A unit takes 3 - lt + astral bytes, lt the
     * thresholds 0x80, 0x800 it is under.  16-bit lanes grow by at most 2
     * a block: flush every 8192 blocks. */
    while (i + 16 <= n) {
        size_t blocks = (n - i) / 16, b;
        __m256i acc = zero, accs = zero, acca = zero;
        if (blocks > 8192)
            blocks = 8192;
        for (b = 0; b < blocks; b++, i += 16) {
            __m256i x = ld(src + i), y = ld(src + i + 8);
            __m256i p = _mm256_packus_epi32(x, y), hi = _mm256_and_si256(p, kF800);
            acca = _mm256_sub_epi32(acca, _mm256_cmpgt_epi32(x, kFFFF));
            acca = _mm256_sub_epi32(acca, _mm256_cmpgt_epi32(y, kFFFF));
            acc = _mm256_sub_epi16(acc, _mm256_cmpeq_epi16(_mm256_and_si256(p, kFF80), zero));
            acc = _mm256_sub_epi16(acc, _mm256_cmpeq_epi16(hi, zero));
            accs = _mm256_sub_epi16(accs, _mm256_cmpeq_epi16(hi, kD800));
        }
        lt += hsum16(acc);
        surr += hsum16(accs);
        astral += hsum32(acca);
    }
    i0 = i;
    /* the last 1..15 units: masked loads (lanes past n read as 0, which
     * counts 1 byte a lane: subtracted) */
    tlen = tsurr = 0;
    for (; i < n; i += 8) {
        size_t r = n - i < 8 ? n - i : 8;
        __m256i x = _mm256_maskload_epi32((const int *)(src + i),
                                          ld(u8p_avx2_lanemask + 8 - r));
        tlen += 8 + (size_t)__builtin_popcount(
                        (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
                            _mm256_cmpgt_epi32(x, _mm256_set1_epi32(0x7F))))
                        | (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
                              _mm256_cmpgt_epi32(x, _mm256_set1_epi32(0x7FF)))) << 8
                        | (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
                              _mm256_cmpgt_epi32(x, kFFFF))) << 16) - (8 - r);
        tsurr += (size_t)__builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(
            _mm256_cmpeq_epi32(_mm256_and_si256(x, _mm256_set1_epi32((int)0xFFFFF800u)),
                               _mm256_set1_epi32(0xD800)))));
    }
    *nsurr = surr + tsurr;
    return 3 * i0 - lt + astral + tlen;
}

/* ------------------------------------------------------------ block steps */

/* 16 code points < 0x800 in 16-bit lanes -> 16..32 bytes.  Stores 16 bytes
 * at d and 16 at the end of the first half's output (unit 8's bytes). */
U8P_AVX2_INL static inline size_t
enc2x16(__m256i v, uint8_t *d)
{
    /* [0xC0 | c >> 6, 0x80 | (c & 0x3F)] as a little-endian 16-bit lane */
    __m256i two = _mm256_or_si256(
        _mm256_or_si256(_mm256_srli_epi16(v, 6),
                        _mm256_slli_epi16(_mm256_and_si256(v, KV(H003F)), 8)),
        KV(H80C0));
    __m256i big = _mm256_cmpgt_epi16(v, KV(H007F));
    /* packs works per half: mask bits 0..7 are units 0..7, 16..23 units 8..15 */
    unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_packs_epi16(big, _mm256_setzero_si256()));
    unsigned m0 = m & 0xFF, m1 = (m >> 16) & 0xFF;
    __m256i r = _mm256_shuffle_epi8(_mm256_blendv_epi8(v, two, big),
                                    rows(u8p_shuf2[m0], u8p_shuf2[m1]));
    size_t n0 = 8 + (size_t)__builtin_popcountll((uint64_t)m0);
    st128(d, _mm256_castsi256_si128(r));
    st128(d + n0, _mm256_extracti128_si256(r, 1));
    return n0 + 8 + (size_t)__builtin_popcountll((uint64_t)m1);
}

/* 16 code points < 0x10000 (no surrogates) in 16-bit lanes -> 16..48
 * bytes.  Each code point's UTF-8 is built right-aligned in a 32-bit lane
 * (as utf8_lanes in x86_sse.c) from two 16-bit halves: hi = [b2, b3] (b3 the
 * last byte) and lo = [-, b1] (the lead of a 3-byte sequence), so all the
 * arithmetic runs on 16 units per vector; unpacking lo/hi gives the lanes.
 * Stores 16 bytes at the start of units 0, 4, 8 and 12's bytes. */
U8P_AVX2_INL static inline size_t
enc3x16(__m256i v, uint8_t *d)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i lt80 = _mm256_cmpeq_epi16(_mm256_and_si256(v, KV(HFF80)), zero);
    __m256i lt800 = _mm256_cmpeq_epi16(_mm256_and_si256(v, KV(HF800)), zero);
    __m256i v8 = _mm256_slli_epi16(v, 8);
    /* b3 = 0x80 | (c & 0x3F); b2 = 0x80 | ((c >> 6) & 0x3F), plus 0x40 when
     * b2 is a 2-byte lead (0xC0 | c >> 6, c >> 6 < 0x20) */
    __m256i hi = _mm256_or_si256(
        _mm256_or_si256(_mm256_and_si256(v8, KV(H3F00)),
                        _mm256_and_si256(_mm256_srli_epi16(v, 6), KV(H003F))),
        _mm256_or_si256(KV(H8080),
                        _mm256_and_si256(_mm256_andnot_si256(lt80, lt800),
                                         KV(H0040))));
    /* b1 = 0xE0 | c >> 12 (only used by 3-byte lanes) */
    __m256i lo = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 4),
                                                  KV(H0F00)),
                                 KV(HE000));
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

/* One code point's UTF-8 right-aligned in each 32-bit lane (the layout of
 * utf8_lanes in x86_sse.c: lead in byte 3 - k for k + 1 bytes); *ab gets the
 * lane's u8p_shuf4n code as two masks: a = ge80 ^ ge10000 and b = ge800,
 * packed to 16-bit lanes [a0..a3, b0..b3] per 128-bit half. */
U8P_AVX2_INL static inline __m256i
utf8_lanes(__m256i c, __m256i *ab)
{
    __m256i ge80 = _mm256_cmpgt_epi32(c, KV(W7F));
    __m256i ge800 = _mm256_cmpgt_epi32(c, KV(W7FF));
    __m256i ge10000 = _mm256_cmpgt_epi32(c, KV(WFFFF));
    /* the four sextets, highest in byte 0 (multiplies as in x86_sse.c) */
    __m256i in = _mm256_shuffle_epi8(c, KV(SEXT_SHUF));
    __m256i s = _mm256_or_si256(
        _mm256_mulhi_epu16(_mm256_and_si256(in, KV(W0FC0FC00)),
                           KV(W04000040)),
        _mm256_mullo_epi16(_mm256_and_si256(in, KV(W003F03F0)),
                           KV(W01000010)));
    /* -k is the sum of the masks; vpermilps reads its low 2 bits, (-k) & 3,
     * to pick the marker bits (bytes below the lead are don't cares; the
     * blend replaces k = 0 lanes) */
    __m256i nk = _mm256_add_epi32(_mm256_add_epi32(ge80, ge800), ge10000);
    __m256i mk = _mm256_castps_si256(_mm256_permutevar_ps(
        _mm256_castsi256_ps(KV(MARKS)),
        nk));
    *ab = _mm256_packs_epi32(_mm256_xor_si256(ge80, ge10000), ge800);
    /* ASCII keeps all 7 bits in byte 3 */
    return _mm256_blendv_epi8(_mm256_slli_epi32(c, 24), _mm256_or_si256(s, mk), ge80);
}

/* 16 code points (no surrogates, <= 0x10FFFF) in two vectors of 32-bit
 * lanes -> 16..64 bytes.  Stores 16 bytes at the start of units 0, 4, 8
 * and 12's bytes. */
U8P_AVX2_INL static inline size_t
enc4x16(__m256i a, __m256i b, uint8_t *d)
{
    __m256i aba, abb;
    __m256i sa = utf8_lanes(a, &aba), sb = utf8_lanes(b, &abb);
    /* bytes 0..3 of the mask: the u8p_shuf4n index of a's units 0..3, b's
     * 0..3, a's 4..7, b's 4..7 */
    unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_packs_epi16(aba, abb));
    unsigned x0 = m & 0xFF, x1 = (m >> 8) & 0xFF, x2 = (m >> 16) & 0xFF, x3 = m >> 24;
    size_t n0 = u8p_len4n[x0], n1 = n0 + u8p_len4n[x2], n2 = n1 + u8p_len4n[x1];
    __m256i ra = _mm256_shuffle_epi8(sa, rows(u8p_shuf4n[x0], u8p_shuf4n[x2]));
    __m256i rb = _mm256_shuffle_epi8(sb, rows(u8p_shuf4n[x1], u8p_shuf4n[x3]));
    st128(d, _mm256_castsi256_si128(ra));
    st128(d + n0, _mm256_extracti128_si256(ra, 1));
    st128(d + n1, _mm256_castsi256_si128(rb));
    st128(d + n2, _mm256_extracti128_si256(rb, 1));
    return n2 + u8p_len4n[x3];
}

/* first surrogate in src[i, end), or end */
U8P_AVX2 static size_t
scan_surr16(const uint16_t *src, size_t i, size_t end)
{
    const __m256i kF800 = KV(HF800);
    const __m256i kD800 = KV(HD800);
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
    const __m256i kF800 = KV(WNOT7FF);
    const __m256i kD800 = KV(WD800);
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
U8P_AVX2_INL static inline size_t
enc1x32(__m256i v, unsigned m, uint8_t *d)
{
    /* signed: c >= 0xC0 is > -65; ASCII too, but blendv keeps it as is */
    __m256i ge_c0 = _mm256_cmpgt_epi8(v, KV(BBF));
    __m256i lead = _mm256_sub_epi8(KV(BC2), ge_c0);
    __m256i first = _mm256_blendv_epi8(v, lead, v); /* high bit of v selects */
    __m256i trail = _mm256_and_si256(v, KV(BBF));
    /* per 128-bit half: unpacklo = its bytes 0..7, unpackhi = 8..15 */
    __m256i a = _mm256_shuffle_epi8(_mm256_unpacklo_epi8(first, trail),
                                    rows(u8p_shuf2[m & 0xFF], u8p_shuf2[(m >> 16) & 0xFF]));
    __m256i b = _mm256_shuffle_epi8(_mm256_unpackhi_epi8(first, trail),
                                    rows(u8p_shuf2[(m >> 8) & 0xFF], u8p_shuf2[m >> 24]));
    size_t n0 = 8 + (size_t)__builtin_popcountll((uint64_t)m & 0xFF);
    size_t n1 = 16 + (size_t)__builtin_popcountll((uint64_t)m & 0xFFFF);
    size_t n2 = 24 + (size_t)__builtin_popcountll((uint64_t)m & 0xFFFFFF);
    st128(d, _mm256_castsi256_si128(a));
    st128(d + n0, _mm256_castsi256_si128(b));
    st128(d + n1, _mm256_extracti128_si256(a, 1));
    st128(d + n2, _mm256_extracti128_si256(b, 1));
    return 32 + (size_t)__builtin_popcountll((uint64_t)m);
}

/* the nb <= 32 bytes at p, zero-padded; reads exactly [p, p + nb) */
U8P_AVX2 static inline __m256i
ld_part32(const uint8_t *p, size_t nb)
{
    if (nb > 16)
        return _mm256_inserti128_si256(_mm256_castsi128_si256(ld128(p)),
                                       u8p_load_part16(p + 16, nb - 16), 1);
    return _mm256_zextsi128_si256(u8p_load_part16(p, nb));
}

/* From this many Latin-1 bytes on, a tail goes through short_ucs1. */
#define AVX2_UCS1_SHORT 8

/* r < 64 Latin-1 bytes -> their UTF-8 at d, exactly: copied to a
 * zero-padded buffer (a 0 encodes as one byte, at the end), encoded a
 * block at a time with no per-byte branch, the real bytes copied out. */
U8P_AVX2 static size_t
short_ucs1(const uint8_t *src, size_t r, uint8_t *d)
{
    uint8_t buf[128 + 16];
    size_t o;
    __m256i v = ld_part32(src, r > 32 ? 32 : r);
    o = enc1x32(v, (unsigned)_mm256_movemask_epi8(v), buf);
    if (r > 32) {
        v = ld_part32(src + 32, r - 32);
        o += enc1x32(v, (unsigned)_mm256_movemask_epi8(v), buf + o) - (64 - r);
    }
    else {
        o -= 32 - r;
    }
    u8p_copy_short(d, buf, o);
    return o;
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
    /* the last n - i < 40 bytes */
    if (n - i >= AVX2_UCS1_SHORT)
        return (size_t)(d - dst) + short_ucs1(src + i, n - i, d);
    return (size_t)(d - dst) + u8p_enc_ucs1_nobranch(src + i, n - i, d);
}

/* Units needed surrogate-free from i for one 16-unit block (UCS2 or UCS4):
 * its last 16-byte store starts at most at unit i + 12's bytes. */
#define AVX2_NEED 28
/* Shorter tails than this are left to the scalar loops. */
#define AVX2_TAIL_MIN 4

/* 16 surrogate-free UCS2 units -> their UTF-8 at d */
U8P_AVX2_INL static inline size_t
enc_ucs2x16(__m256i v, uint8_t *d)
{
    if (_mm256_testz_si256(v, KV(HFF80))) {
        /* packus interleaves the halves: restore unit order */
        st128(d, _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi16(v, v), 0xD8)));
        return 16;
    }
    if (_mm256_testz_si256(v, KV(HF800)))
        return enc2x16(v, d);
    return enc3x16(v, d);
}

U8P_AVX2_INL static inline int
has_surr16(__m256i v)
{
    __m256i s = _mm256_cmpeq_epi16(_mm256_and_si256(v, KV(HF800)), KV(HD800));
    return !_mm256_testz_si256(s, s);
}

/* 1 <= n < AVX2_NEED UCS2 units, a whole input or the surrogate-free tail
 * of one: loaded zero-padded (no memcpy to a buffer: its small stores
 * would stall the vector loads), the first surrogate found with one
 * compare a block, the units from it on zeroed, every block encoded into
 * a buffer (a 0 encodes as one byte) and the bytes of src[0, k) copied
 * out; k in *done.  Inlined into both callers. */
U8P_AVX2_INL static inline size_t
short_ucs2(const uint16_t *src, size_t n, uint8_t *dst, size_t *done)
{
    const uint8_t *p = (const uint8_t *)src;
    size_t nb = 2 * n, k, o;
    uint8_t buf[3 * 32 + 16];
    __m256i v0 = ld_part32(p, nb < 32 ? nb : 32);
    __m256i v1 = nb > 32 ? ld_part32(p + 32, nb - 32) : _mm256_setzero_si256();
    /* two mask bits a unit */
    uint64_t m = (uint64_t)(uint32_t)_mm256_movemask_epi8(
                     _mm256_cmpeq_epi16(_mm256_and_si256(v0, KV(HF800)), KV(HD800)))
                 | (uint64_t)(uint32_t)_mm256_movemask_epi8(
                       _mm256_cmpeq_epi16(_mm256_and_si256(v1, KV(HF800)), KV(HD800)))
                       << 32;
    k = m ? (size_t)__builtin_ctzll(m) / 2 : n;
    if (k < n) {
        const __m256i iota = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        v0 = _mm256_and_si256(v0, _mm256_cmpgt_epi16(_mm256_set1_epi16((short)k), iota));
        v1 = _mm256_and_si256(
            v1, _mm256_cmpgt_epi16(_mm256_set1_epi16((short)(k > 16 ? k - 16 : 0)), iota));
    }
    o = enc_ucs2x16(v0, buf);
    if (n > 16)
        o += enc_ucs2x16(v1, buf + o);
    o -= (n + 15) / 16 * 16 - k;
    u8p_copy_short(dst, buf, o);
    *done = k;
    return o;
}

U8P_AVX2 size_t
u8p_avx2_enc_ucs2(const uint16_t *src, size_t n, uint8_t *dst, size_t *done)
{
    uint8_t *d = dst;
    size_t i = 0, lim, k, w;
    int stopped = 0; /* lim is a surrogate's index */
    if (n < AVX2_NEED)
        return n < U8P_X86_MIN_UNITS_UCS2 ? u8p_scalar_enc_ucs2(src, n, dst, done)
                                      : short_ucs2(src, n, dst, done);
    /* Main loop: block i is encoded once the next 16 units are loaded and
     * known surrogate-free, which keeps its stores inside dst. */
    if (n >= 32) {
        __m256i v = ld(src);
        if (!has_surr16(v)) {
            while (i + 32 <= n) {
                __m256i nv = ld(src + i + 16);
                if (has_surr16(nv))
                    break;
                d += enc_ucs2x16(v, d);
                v = nv;
                i += 16;
            }
        }
    }
    /* The rest, with the surrogate scan. */
    lim = i;
    for (;;) {
        if (i + AVX2_NEED > lim) {
            size_t to;
            if (stopped || lim == n)
                break;
            to = n - lim > U8P_SURR_SCAN_CHUNK ? lim + U8P_SURR_SCAN_CHUNK : n;
            lim = scan_surr16(src, lim, to);
            stopped = lim < to;
            continue;
        }
        d += enc_ucs2x16(ld(src + i), d);
        i += 16;
    }
    /* [i, lim) is surrogate-free and shorter than AVX2_NEED */
    if (lim - i >= AVX2_TAIL_MIN) {
        size_t r = lim - i;
        if (lim >= 32) {
            /* the 32 units up to lim all ASCII: rewrite their bytes (those
             * before the tail are already there, the same) */
            __m256i v = ld(src + lim - 32), v2 = ld(src + lim - 16);
            if (_mm256_testz_si256(_mm256_or_si256(v, v2), KV(HFF80))) {
                st(d + r - 32, _mm256_permute4x64_epi64(_mm256_packus_epi16(v, v2), 0xD8));
                d += r;
                i = lim;
            }
        }
        if (i < lim) {
            d += short_ucs2(src + i, r, d, &k);
            i = lim;
        }
    }
    w = u8p_scalar_enc_ucs2(src + i, n - i, d, &k);
    *done = i + k;
    return (size_t)(d - dst) + w;
}

/* 16 surrogate-free UCS4 units in a, b -> their UTF-8 at d; the last
 * 16-byte store starts at unit 12's bytes */
U8P_AVX2_INL static inline size_t
enc_ucs4x16(__m256i a, __m256i b, uint8_t *d)
{
    const __m256i k80 = KV(WNOT7F);
    const __m256i k800 = KV(WNOT7FF);
    const __m256i k10000 = KV(WNOTFFFF);
    __m256i o = _mm256_or_si256(a, b);
    if (_mm256_testz_si256(o, k10000)) {
        /* narrow to UCS2: values < 0x10000 survive the saturating pack;
         * packus interleaves the halves, the permute restores order */
        __m256i w16 = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
        if (_mm256_testz_si256(o, k80)) {
            __m256i w8 = _mm256_permute4x64_epi64(_mm256_packus_epi16(w16, w16), 0xD8);
            st128(d, _mm256_castsi256_si128(w8));
            return 16;
        }
        if (_mm256_testz_si256(o, k800))
            return enc2x16(w16, d);
        return enc3x16(w16, d);
    }
    return enc4x16(a, b, d);
}

/* any surrogate among the 16 units in a, b */
U8P_AVX2_INL static inline int
has_surr32(__m256i a, __m256i b)
{
    const __m256i kF800 = KV(WNOT7FF);
    const __m256i kD800 = KV(WD800);
    __m256i sa = _mm256_cmpeq_epi32(_mm256_and_si256(a, kF800), kD800);
    __m256i sb = _mm256_cmpeq_epi32(_mm256_and_si256(b, kF800), kD800);
    __m256i o = _mm256_or_si256(sa, sb);
    return !_mm256_testz_si256(o, o);
}

/* r < AVX2_NEED surrogate-free units -> their UTF-8 at d, exactly: masked
 * loads (lanes past r read as 0 and encode as one byte each, at the end),
 * blocks encoded into a buffer, the real bytes copied out. */
U8P_AVX2 static size_t
tail_ucs4(const uint32_t *src, size_t r, uint8_t *d)
{
    uint8_t buf[2 * 64 + 16];
    size_t o = 0, j;
    for (j = 0; j < r; j += 16) {
        size_t ra = r - j < 8 ? r - j : 8, rb = r - j < 16 ? r - j - ra : 8;
        __m256i a = _mm256_maskload_epi32((const int *)(src + j), ld(u8p_avx2_lanemask + 8 - ra));
        __m256i b = rb ? _mm256_maskload_epi32((const int *)(src + j + 8),
                                               ld(u8p_avx2_lanemask + 8 - rb))
                       : _mm256_setzero_si256();
        o += enc_ucs4x16(a, b, buf + o) - (16 - ra - rb);
    }
    u8p_copy_short(d, buf, o);
    return o;
}

/* 1 <= n < AVX2_NEED UCS4 units, the whole input (as short_ucs2), with
 * masked loads */
U8P_AVX2 static size_t
short_ucs4(const uint32_t *src, size_t n, uint8_t *dst, size_t *done)
{
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    size_t k, o, j;
    uint8_t buf[4 * 32 + 16];
    __m256i v[4];
    uint32_t m = 0;
    for (j = 0; j < 4; j++) {
        size_t at = 8 * j, r = n > at ? (n - at < 8 ? n - at : 8) : 0;
        v[j] = _mm256_maskload_epi32((const int *)(src + at), ld(u8p_avx2_lanemask + 8 - r));
        m |= (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(
                 _mm256_and_si256(v[j], KV(WNOT7FF)), KV(WD800))))
             << at;
    }
    k = m ? (size_t)__builtin_ctz(m) : n;
    if (k < n) {
        for (j = 0; j < 4; j++) {
            long lim = (long)k - (long)(8 * j);
            lim = lim < 0 ? 0 : lim;
            v[j] = _mm256_and_si256(v[j], _mm256_cmpgt_epi32(_mm256_set1_epi32((int)lim), iota));
        }
    }
    /* a UCS4 str has an astral code point somewhere: the general block
     * step, not the ladder's mispredicted branches */
    o = enc4x16(v[0], v[1], buf);
    if (n > 16)
        o += enc4x16(v[2], v[3], buf + o);
    o -= (n + 15) / 16 * 16 - k;
    u8p_copy_short(dst, buf, o);
    *done = k;
    return o;
}

U8P_AVX2 size_t
u8p_avx2_enc_ucs4(const uint32_t *src, size_t n, uint8_t *dst, size_t *done)
{
    uint8_t *d = dst;
    size_t i = 0, lim, k, w;
    int stopped = 0;
    if (n < AVX2_NEED)
        return n < U8P_SIMD_MIN_UNITS ? u8p_scalar_enc_ucs4(src, n, dst, done)
                                      : short_ucs4(src, n, dst, done);
    /* Main loop: block i is encoded once the next 16 units are loaded and
     * known surrogate-free, which keeps its stores inside dst (they reach
     * at most 12 units' worth of bytes past the block). */
    if (n >= 32) {
        __m256i a = ld(src), b = ld(src + 8);
        if (!has_surr32(a, b)) {
            while (i + 32 <= n) {
                __m256i na = ld(src + i + 16), nb = ld(src + i + 24);
                if (has_surr32(na, nb))
                    break;
                d += enc_ucs4x16(a, b, d);
                a = na;
                b = nb;
                i += 16;
            }
        }
    }
    /* The rest, with the surrogate scan: a block needs AVX2_NEED
     * surrogate-free units from its start. */
    lim = i;
    for (;;) {
        if (i + AVX2_NEED > lim) {
            size_t to;
            if (stopped || lim == n)
                break;
            to = n - lim > U8P_SURR_SCAN_CHUNK ? lim + U8P_SURR_SCAN_CHUNK : n;
            lim = scan_surr32(src, lim, to);
            stopped = lim < to;
            continue;
        }
        d += enc_ucs4x16(ld(src + i), ld(src + i + 8), d);
        i += 16;
    }
    /* [i, lim) is surrogate-free and shorter than AVX2_NEED */
    if (lim - i >= AVX2_TAIL_MIN) {
        d += tail_ucs4(src + i, lim - i, d);
        i = lim;
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
