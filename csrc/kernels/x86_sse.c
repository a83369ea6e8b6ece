/*
 * SSE4.1 kernels (x86-64; level "sse").  Every function carries its own
 * target attribute, so this file builds with the baseline flags of the
 * extension and only runs where dispatch.c found SSE4.1 and POPCNT.
 *
 * Encoding works on 8-unit blocks:
 *   - all ASCII: narrow with packus and store (8 or 16 units at once);
 *   - all < 0x800: every unit becomes [lead, trail] in its 16-bit lane and a
 *     table shuffle (u8p_shuf2) drops the trail byte of ASCII lanes;
 *   - all < 0x10000: build each unit's UTF-8 sequence right-aligned in a
 *     32-bit lane, from two 16-bit halves computed 8 units at a time, and
 *     compact 4 lanes at a time with u8p_shuf4;
 *   - otherwise (UCS4 with astral code points): the same lane layout
 *     computed on 32-bit lanes.
 * UCS1 pairs each byte with its would-be trail byte and uses u8p_shuf2;
 * UCS4 narrows blocks to 16 bits when their code points allow it.
 * Stores are 16 bytes wide and may run past the block's own output; a block
 * is only taken when enough surrogate-free code units follow it that the
 * extra bytes still fall inside dst's exact length (every unit encodes to at
 * least one byte).  The rest, and everything from a surrogate on, is the
 * scalar reference's job.
 */
#include "simd_internal.h"

#if U8P_X86_SIMD

#include <immintrin.h>

#include "scalar_inl.h"
#include "simd_tables.h"
#include "x86_short.h"

#define U8P_SSE __attribute__((target("sse4.1,popcnt")))

U8P_SSE static inline __m128i
ld(const void *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}

U8P_SSE static inline void
st(void *p, __m128i v)
{
    _mm_storeu_si128((__m128i *)p, v);
}

/* sum of 8 u16 lanes, each < 32768 (madd is signed) */
U8P_SSE static inline size_t
hsum16(__m128i v)
{
    __m128i s = _mm_madd_epi16(v, _mm_set1_epi16(1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return (size_t)(uint32_t)_mm_cvtsi128_si32(s);
}

U8P_SSE static inline size_t
hsum32(__m128i s)
{
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return (size_t)(uint32_t)_mm_cvtsi128_si32(s);
}

/* ---------------------------------------------------------------- lengths */

U8P_SSE static size_t
sse_len_ucs1(const uint8_t *src, size_t n)
{
    size_t i = 0, high = 0;
    for (; i + 64 <= n; i += 64) {
        uint64_t m = (uint64_t)(uint16_t)_mm_movemask_epi8(ld(src + i))
                     | (uint64_t)(uint16_t)_mm_movemask_epi8(ld(src + i + 16)) << 16
                     | (uint64_t)(uint16_t)_mm_movemask_epi8(ld(src + i + 32)) << 32
                     | (uint64_t)(uint16_t)_mm_movemask_epi8(ld(src + i + 48)) << 48;
        high += (size_t)__builtin_popcountll(m);
    }
    for (; i + 16 <= n; i += 16)
        high += (size_t)__builtin_popcount((unsigned)_mm_movemask_epi8(ld(src + i)));
    return i + high + u8p_scalar_len_ucs1(src + i, n - i);
}

U8P_SSE static size_t
sse_len_ucs2(const uint16_t *src, size_t n, size_t *nsurr)
{
    const __m128i kFF80 = _mm_set1_epi16((short)0xFF80);
    const __m128i kF800 = _mm_set1_epi16((short)0xF800);
    const __m128i kD800 = _mm_set1_epi16((short)0xD800);
    const __m128i zero = _mm_setzero_si128();
    size_t i = 0, lt = 0, surr = 0, tsurr, tlen;
    /* lt counts (cp < 0x80) + (cp < 0x800): a unit takes 3 - that bytes.
     * 16-bit lanes grow by at most 2 a block: flush every 8192 blocks. */
    while (i + 8 <= n) {
        size_t blocks = (n - i) / 8, b;
        __m128i acc = zero, accs = zero;
        if (blocks > 8192)
            blocks = 8192;
        for (b = 0; b < blocks; b++, i += 8) {
            __m128i v = ld(src + i);
            __m128i hi = _mm_and_si128(v, kF800);
            acc = _mm_sub_epi16(acc, _mm_cmpeq_epi16(_mm_and_si128(v, kFF80), zero));
            acc = _mm_sub_epi16(acc, _mm_cmpeq_epi16(hi, zero));
            accs = _mm_sub_epi16(accs, _mm_cmpeq_epi16(hi, kD800));
        }
        lt += hsum16(acc);
        surr += hsum16(accs);
    }
    tlen = u8p_scalar_len_ucs2(src + i, n - i, &tsurr);
    *nsurr = surr + tsurr;
    return 3 * i - lt + tlen;
}

U8P_SSE static size_t
sse_len_ucs4(const uint32_t *src, size_t n, size_t *nsurr)
{
    const __m128i kFFFF = _mm_set1_epi32(0xFFFF);
    const __m128i kFF80 = _mm_set1_epi16((short)0xFF80);
    const __m128i kF800 = _mm_set1_epi16((short)0xF800);
    const __m128i kD800 = _mm_set1_epi16((short)0xD800);
    const __m128i zero = _mm_setzero_si128();
    size_t i = 0, lt = 0, astral = 0, surr = 0, tsurr, tlen;
    /* 8 units a block, narrowed to 16 bits by the saturating pack (which
     * sends astral code points to 0xFFFF: neither "< 0x80", "< 0x800" nor
     * a surrogate, as wanted).  A unit takes 3 - lt + astral bytes, lt the
     * thresholds 0x80, 0x800 it is under.  16-bit lanes grow by at most 2
     * a block: flush every 8192 blocks. */
    while (i + 8 <= n) {
        size_t blocks = (n - i) / 8, b;
        __m128i acc = zero, accs = zero, acca = zero;
        if (blocks > 8192)
            blocks = 8192;
        for (b = 0; b < blocks; b++, i += 8) {
            __m128i x = ld(src + i), y = ld(src + i + 4);
            __m128i p = _mm_packus_epi32(x, y), hi = _mm_and_si128(p, kF800);
            acca = _mm_sub_epi32(acca, _mm_cmpgt_epi32(x, kFFFF));
            acca = _mm_sub_epi32(acca, _mm_cmpgt_epi32(y, kFFFF));
            acc = _mm_sub_epi16(acc, _mm_cmpeq_epi16(_mm_and_si128(p, kFF80), zero));
            acc = _mm_sub_epi16(acc, _mm_cmpeq_epi16(hi, zero));
            accs = _mm_sub_epi16(accs, _mm_cmpeq_epi16(hi, kD800));
        }
        lt += hsum16(acc);
        surr += hsum16(accs);
        astral += hsum32(acca);
    }
    tlen = u8p_scalar_len_ucs4(src + i, n - i, &tsurr);
    *nsurr = surr + tsurr;
    return 3 * i - lt + astral + tlen;
}

/* ------------------------------------------------------------ block steps */

/* 8 code points < 0x800 in 16-bit lanes -> 8..16 bytes.  Stores 16 bytes at
 * d; returns the real length. */
U8P_SSE static inline size_t
enc2x8(__m128i v, uint8_t *d)
{
    /* [0xC0 | c >> 6, 0x80 | (c & 0x3F)] as a little-endian 16-bit lane */
    __m128i two = _mm_or_si128(
        _mm_or_si128(_mm_srli_epi16(v, 6),
                     _mm_slli_epi16(_mm_and_si128(v, _mm_set1_epi16(0x3F)), 8)),
        _mm_set1_epi16((short)0x80C0));
    __m128i big = _mm_cmpgt_epi16(v, _mm_set1_epi16(0x7F));
    unsigned m = (unsigned)_mm_movemask_epi8(_mm_packs_epi16(big, _mm_setzero_si128()));
    __m128i w = _mm_blendv_epi8(v, two, big);
    st(d, _mm_shuffle_epi8(w, ld(u8p_shuf2[m])));
    return 8 + (size_t)__builtin_popcountll((uint64_t)m);
}

/* 8 code points < 0x10000 (no surrogates) in 16-bit lanes -> 8..24 bytes.
 * Each code point's UTF-8 is built right-aligned in a 32-bit lane (the
 * layout of utf8_lanes below) from two 16-bit halves: hi = [b2, b3] (b3 the
 * last byte) and lo = [-, b1] (the lead of a 3-byte sequence), so the
 * arithmetic runs on 8 units per vector; unpacking lo/hi gives the lanes.
 * Stores 16 bytes at d and at unit 4's bytes. */
U8P_SSE static inline size_t
enc3x8(__m128i v, uint8_t *d)
{
    const __m128i zero = _mm_setzero_si128();
    __m128i lt80 = _mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16((short)0xFF80)), zero);
    __m128i lt800 = _mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16((short)0xF800)), zero);
    __m128i v8 = _mm_slli_epi16(v, 8);
    /* b3 = 0x80 | (c & 0x3F); b2 = 0x80 | ((c >> 6) & 0x3F), plus 0x40 when
     * b2 is a 2-byte lead (0xC0 | c >> 6, c >> 6 < 0x20) */
    __m128i hi = _mm_or_si128(
        _mm_or_si128(_mm_and_si128(v8, _mm_set1_epi16(0x3F00)),
                     _mm_and_si128(_mm_srli_epi16(v, 6), _mm_set1_epi16(0x3F))),
        _mm_or_si128(_mm_set1_epi16((short)0x8080),
                     _mm_and_si128(_mm_andnot_si128(lt80, lt800), _mm_set1_epi16(0x40))));
    /* b1 = 0xE0 | c >> 12 (only used by 3-byte lanes) */
    __m128i lo = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(v, 4), _mm_set1_epi16(0x0F00)),
                              _mm_set1_epi16((short)0xE000));
    /* bits 0..7: "< 0x80" per unit, 8..15: "< 0x800"; k = 2 - those */
    unsigned m = ~(unsigned)_mm_movemask_epi8(_mm_packs_epi16(lt80, lt800));
    unsigned x = (unsigned)u8p_spread8[m & 0xFF] + u8p_spread8[(m >> 8) & 0xFF];
    size_t n0 = u8p_len4[x & 0xFF];
    hi = _mm_blendv_epi8(hi, v8, lt80); /* ASCII: b3 = c */
    st(d, _mm_shuffle_epi8(_mm_unpacklo_epi16(lo, hi), ld(u8p_shuf4[x & 0xFF])));
    st(d + n0, _mm_shuffle_epi8(_mm_unpackhi_epi16(lo, hi), ld(u8p_shuf4[x >> 8])));
    return n0 + u8p_len4[x >> 8];
}

/* The UTF-8 of 4 code points (no surrogates, <= 0x10FFFF), one per 32-bit
 * lane, and in *ab the masks that pick their u8p_shuf4n row.
 *
 * Lane layout shared by every 3-/4-byte path (and the AVX2, AVX-512 and
 * NEON files): a sequence of 1 + k bytes sits right-aligned in its lane,
 * lead in byte 3 - k, last byte in byte 3; u8p_shuf4 is indexed by the four
 * k (2 bits each) and picks exactly those bytes, lane after lane.
 * u8p_shuf4n holds the same rows under an index that compares give
 * directly: a = ge80 ^ ge10000 and b = ge800 per lane, packed here to
 * 16-bit lanes [a0..a3, b0..b3]; packs_epi16 of two of them and a movemask
 * make two indices at once. */
U8P_SSE static inline __m128i
utf8_lanes(__m128i c, __m128i *ab)
{
    __m128i ge80 = _mm_cmpgt_epi32(c, _mm_set1_epi32(0x7F));
    __m128i ge800 = _mm_cmpgt_epi32(c, _mm_set1_epi32(0x7FF));
    __m128i ge10000 = _mm_cmpgt_epi32(c, _mm_set1_epi32(0xFFFF));
    /* The four 6-bit groups of c, highest in byte 0 and lowest in byte 3.
     * Read as a big-endian 24-bit number [c2, c1, c0] this is splitting 3
     * bytes into 4 sextets: shuffle each lane to [c1, c2, c0, c1], then
     * per 16-bit half one multiply-high moves a sextet down and one
     * multiply-low moves the other up. */
    __m128i in = _mm_shuffle_epi8(c, _mm_setr_epi8(1, 2, 0, 1, 5, 6, 4, 5, 9, 10, 8, 9,
                                                   13, 14, 12, 13));
    __m128i s = _mm_or_si128(
        _mm_mulhi_epu16(_mm_and_si128(in, _mm_set1_epi32(0x0FC0FC00)),
                        _mm_set1_epi32(0x04000040)),
        _mm_mullo_epi16(_mm_and_si128(in, _mm_set1_epi32(0x003F03F0)),
                        _mm_set1_epi32(0x01000010)));
    /* Marker bits by length: 2 -> 0x80C00000, 3 -> 0x8080E000,
     * 4 -> 0x808080F0; xor of the per-threshold deltas builds them. */
    __m128i mk = _mm_xor_si128(
        _mm_xor_si128(_mm_and_si128(ge80, _mm_set1_epi32((int)0x80C00000u)),
                      _mm_and_si128(ge800, _mm_set1_epi32(0x0040E000))),
        _mm_and_si128(ge10000, _mm_set1_epi32(0x000060F0)));
    *ab = _mm_packs_epi32(_mm_xor_si128(ge80, ge10000), ge800);
    /* ASCII keeps all 7 bits in byte 3 */
    return _mm_blendv_epi8(_mm_slli_epi32(c, 24), _mm_or_si128(s, mk), ge80);
}

/* 8 code points (no surrogates, <= 0x10FFFF) in a, b -> 8..32 bytes, one
 * movemask for both table rows.  Stores 16 bytes at d and at unit 4's
 * bytes. */
U8P_SSE static inline size_t
enc4x8(__m128i a, __m128i b, uint8_t *d)
{
    __m128i aba, abb;
    __m128i sa = utf8_lanes(a, &aba), sb = utf8_lanes(b, &abb);
    unsigned m = (unsigned)_mm_movemask_epi8(_mm_packs_epi16(aba, abb));
    size_t n0 = u8p_len4n[m & 0xFF];
    st(d, _mm_shuffle_epi8(sa, ld(u8p_shuf4n[m & 0xFF])));
    st(d + n0, _mm_shuffle_epi8(sb, ld(u8p_shuf4n[m >> 8])));
    return n0 + u8p_len4n[m >> 8];
}

/* first surrogate in src[i, end), or end */
U8P_SSE static size_t
scan_surr16(const uint16_t *src, size_t i, size_t end)
{
    const __m128i kF800 = _mm_set1_epi16((short)0xF800);
    const __m128i kD800 = _mm_set1_epi16((short)0xD800);
    for (; i + 8 <= end; i += 8) {
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_cmpeq_epi16(_mm_and_si128(ld(src + i), kF800), kD800));
        if (m)
            return i + (size_t)__builtin_ctz(m) / 2;
    }
    for (; i < end; i++) {
        if (U8P_IS_SURROGATE(src[i]))
            return i;
    }
    return end;
}

U8P_SSE static size_t
scan_surr32(const uint32_t *src, size_t i, size_t end)
{
    const __m128i kF800 = _mm_set1_epi32((int)0xFFFFF800u);
    const __m128i kD800 = _mm_set1_epi32(0xD800);
    for (; i + 4 <= end; i += 4) {
        unsigned m = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(
            _mm_cmpeq_epi32(_mm_and_si128(ld(src + i), kF800), kD800)));
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

/* 16 Latin-1 bytes, not all ASCII -> 16..32 bytes; m is their movemask.
 * A byte >= 0x80 becomes [0xC2 + (c >= 0xC0), c & 0xBF]; every byte is
 * paired with its would-be trail in a 16-bit lane and u8p_shuf2 drops the
 * trail of ASCII bytes.  Stores 16 bytes at d and at unit 8's bytes. */
U8P_SSE static inline size_t
enc1x16(__m128i v, unsigned m, uint8_t *d)
{
    /* signed: c >= 0xC0 is > -65; ASCII too, but blendv keeps it as is */
    __m128i ge_c0 = _mm_cmpgt_epi8(v, _mm_set1_epi8(-65));
    __m128i lead = _mm_sub_epi8(_mm_set1_epi8((char)0xC2), ge_c0);
    __m128i first = _mm_blendv_epi8(v, lead, v); /* high bit of v selects */
    __m128i trail = _mm_and_si128(v, _mm_set1_epi8((char)0xBF));
    size_t n0 = 8 + (size_t)__builtin_popcountll((uint64_t)m & 0xFF);
    st(d, _mm_shuffle_epi8(_mm_unpacklo_epi8(first, trail), ld(u8p_shuf2[m & 0xFF])));
    st(d + n0, _mm_shuffle_epi8(_mm_unpackhi_epi8(first, trail), ld(u8p_shuf2[m >> 8])));
    return 16 + (size_t)__builtin_popcountll((uint64_t)m);
}

/* From this many Latin-1 bytes on, a tail goes through short_ucs1. */
#define SSE_UCS1_SHORT 8

/* r <= 32 Latin-1 bytes -> their UTF-8 at d, exactly: copied to a
 * zero-padded buffer (a 0 encodes as one byte, at the end), encoded a
 * block at a time with no per-byte branch, the real bytes copied out. */
U8P_SSE static size_t
short_ucs1(const uint8_t *src, size_t r, uint8_t *d)
{
    uint8_t buf[64 + 16];
    size_t o;
    __m128i v = u8p_load_part16(src, r > 16 ? 16 : r);
    o = enc1x16(v, (unsigned)_mm_movemask_epi8(v), buf);
    if (r > 16) {
        v = u8p_load_part16(src + 16, r - 16);
        o += enc1x16(v, (unsigned)_mm_movemask_epi8(v), buf + o) - (32 - r);
    }
    else {
        o -= 16 - r;
    }
    u8p_copy_short(d, buf, o);
    return o;
}

U8P_SSE static size_t
sse_enc_ucs1(const uint8_t *src, size_t n, uint8_t *dst)
{
    uint8_t *d = dst;
    size_t i = 0;
    while (i + 16 <= n) {
        __m128i v = ld(src + i);
        unsigned m = (unsigned)_mm_movemask_epi8(v);
        if (!m) {
            st(d, v);
            d += 16;
            i += 16;
            continue;
        }
        /* the second 16-byte store starts at unit i + 8 */
        if (i + 24 > n)
            break;
        d += enc1x16(v, m, d);
        i += 16;
    }
    /* the last n - i < 24 bytes */
    if (n - i >= SSE_UCS1_SHORT)
        return (size_t)(d - dst) + short_ucs1(src + i, n - i, d);
    return (size_t)(d - dst) + u8p_enc_ucs1_nobranch(src + i, n - i, d);
}

/* Units needed surrogate-free from i for one 8-unit block: the last 16-byte
 * store starts at most at unit i + 4 (enc4x8) or i (enc2x8), the ASCII
 * path reads 16 units: 24 covers all. */
#define SSE_NEED 24
/* ... and for UCS4's 16-unit astral step (last store at unit i + 12) */
#define SSE_NEED4 28

/* Shorter tails than this are left to the scalar loops. */
#define SSE_TAIL_MIN 4

/* 8 surrogate-free UCS2 units -> their UTF-8 at d; stores reach at most
 * 16 bytes past unit 4's */
U8P_SSE static inline size_t
enc_ucs2x8(__m128i v, uint8_t *d)
{
    if (_mm_testz_si128(v, _mm_set1_epi16((short)0xFF80))) {
        _mm_storel_epi64((__m128i *)d, _mm_packus_epi16(v, v));
        return 8;
    }
    if (_mm_testz_si128(v, _mm_set1_epi16((short)0xF800)))
        return enc2x8(v, d);
    return enc3x8(v, d);
}

/* any surrogate among the 16 units in v, v2 */
U8P_SSE static inline int
has_surr16x16(__m128i v, __m128i v2)
{
    const __m128i kF800 = _mm_set1_epi16((short)0xF800);
    const __m128i kD800 = _mm_set1_epi16((short)0xD800);
    __m128i s = _mm_or_si128(_mm_cmpeq_epi16(_mm_and_si128(v, kF800), kD800),
                             _mm_cmpeq_epi16(_mm_and_si128(v2, kF800), kD800));
    return !_mm_testz_si128(s, s);
}

/* lanes >= k of v zeroed (16-bit lanes; v holds units base..base+7) */
U8P_SSE static inline __m128i
keep16(__m128i v, size_t k, size_t base)
{
    const __m128i iota = _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7);
    long lim = (long)k - (long)base;
    lim = lim < 0 ? 0 : lim > 8 ? 8 : lim;
    return _mm_and_si128(v, _mm_cmpgt_epi16(_mm_set1_epi16((short)lim), iota));
}

/* 1 <= n < SSE_NEED UCS2 units, a whole input or the surrogate-free tail
 * of one: loaded zero-padded (no memcpy to a buffer: its small stores
 * would stall the vector loads), the first surrogate found with one
 * compare a block, the units from it on zeroed, every block encoded into
 * a buffer (a 0 encodes as one byte) and the bytes of src[0, k) copied
 * out; k in *done.  Inlined into both callers. */
__attribute__((target("sse4.1,popcnt"), always_inline)) static inline size_t
short_ucs2(const uint16_t *src, size_t n, uint8_t *dst, size_t *done)
{
    const __m128i kF800 = _mm_set1_epi16((short)0xF800);
    const __m128i kD800 = _mm_set1_epi16((short)0xD800);
    const uint8_t *p = (const uint8_t *)src;
    size_t nb = 2 * n, k, o;
    uint8_t buf[3 * SSE_NEED + 16];
    __m128i v0 = u8p_load_part16(p, nb < 16 ? nb : 16);
    __m128i v1 = nb > 16 ? u8p_load_part16(p + 16, nb < 32 ? nb - 16 : 16) : _mm_setzero_si128();
    __m128i v2 = nb > 32 ? u8p_load_part16(p + 32, nb - 32) : _mm_setzero_si128();
    unsigned m = (unsigned)_mm_movemask_epi8(
                     _mm_packs_epi16(_mm_cmpeq_epi16(_mm_and_si128(v0, kF800), kD800),
                                     _mm_cmpeq_epi16(_mm_and_si128(v1, kF800), kD800)))
                 | (unsigned)_mm_movemask_epi8(_mm_packs_epi16(
                       _mm_cmpeq_epi16(_mm_and_si128(v2, kF800), kD800), _mm_setzero_si128()))
                       << 16;
    k = m ? (size_t)__builtin_ctz(m) : n;
    if (k < n) {
        v0 = keep16(v0, k, 0);
        v1 = keep16(v1, k, 8);
        v2 = keep16(v2, k, 16);
    }
    o = enc_ucs2x8(v0, buf);
    if (n > 8)
        o += enc_ucs2x8(v1, buf + o);
    if (n > 16)
        o += enc_ucs2x8(v2, buf + o);
    o -= (n + 7) / 8 * 8 - k;
    u8p_copy_short(dst, buf, o);
    *done = k;
    return o;
}

U8P_SSE static size_t
sse_enc_ucs2(const uint16_t *src, size_t n, uint8_t *dst, size_t *done)
{
    const __m128i kFF80 = _mm_set1_epi16((short)0xFF80);
    const __m128i kF800 = _mm_set1_epi16((short)0xF800);
    uint8_t *d = dst;
    size_t i = 0, lim, k, w;
    int stopped = 0; /* lim is a surrogate's index */
    if (n < SSE_NEED)
        return n < U8P_X86_MIN_UNITS_UCS2 ? u8p_scalar_enc_ucs2(src, n, dst, done)
                                      : short_ucs2(src, n, dst, done);
    /* Main loop: 16 units a step, encoded once the next 16 are loaded and
     * known surrogate-free (which keeps the stores inside dst); no scan. */
    if (n >= 32) {
        __m128i v = ld(src), v2 = ld(src + 8);
        if (!has_surr16x16(v, v2)) {
            while (i + 32 <= n) {
                __m128i nv = ld(src + i + 16), nv2 = ld(src + i + 24);
                if (has_surr16x16(nv, nv2))
                    break;
                if (_mm_testz_si128(_mm_or_si128(v, v2), kFF80)) {
                    st(d, _mm_packus_epi16(v, v2));
                    d += 16;
                }
                else {
                    d += enc_ucs2x8(v, d);
                    d += enc_ucs2x8(v2, d);
                }
                v = nv;
                v2 = nv2;
                i += 16;
            }
        }
    }
    /* The rest, with the surrogate scan. */
    lim = i;
    for (;;) {
        __m128i v;
        if (i + SSE_NEED > lim) {
            size_t to;
            if (stopped || lim == n)
                break;
            to = n - lim > U8P_SURR_SCAN_CHUNK ? lim + U8P_SURR_SCAN_CHUNK : n;
            lim = scan_surr16(src, lim, to);
            stopped = lim < to;
            continue;
        }
        v = ld(src + i);
        if (_mm_testz_si128(v, kFF80)) {
            __m128i v2 = ld(src + i + 8);
            if (_mm_testz_si128(v2, kFF80)) {
                st(d, _mm_packus_epi16(v, v2));
                d += 16;
                i += 16;
            }
            else {
                _mm_storel_epi64((__m128i *)d, _mm_packus_epi16(v, v));
                d += 8;
                i += 8;
            }
            continue;
        }
        if (_mm_testz_si128(v, kF800)) {
            d += enc2x8(v, d);
        }
        else {
            d += enc3x8(v, d);
        }
        i += 8;
    }
    /* [i, lim) is surrogate-free and shorter than SSE_NEED */
    if (lim - i >= SSE_TAIL_MIN) {
        size_t r = lim - i;
        if (lim >= 24) {
            /* the 24 units up to lim all ASCII: rewrite their bytes (those
             * before the tail are already there, the same) */
            __m128i v = ld(src + lim - 24), v2 = ld(src + lim - 16), v3 = ld(src + lim - 8);
            if (_mm_testz_si128(_mm_or_si128(_mm_or_si128(v, v2), v3), kFF80)) {
                _mm_storel_epi64((__m128i *)(d + r - 24), _mm_packus_epi16(v, v));
                st(d + r - 16, _mm_packus_epi16(v2, v3));
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

/* 8 surrogate-free UCS4 units in a, b -> their UTF-8 at d; stores reach
 * at most 16 bytes past unit 4's */
U8P_SSE static inline size_t
enc_ucs4x8(__m128i a, __m128i b, uint8_t *d)
{
    __m128i o = _mm_or_si128(a, b);
    if (_mm_testz_si128(o, _mm_set1_epi32(~0x7F))) {
        __m128i w16 = _mm_packus_epi32(a, b);
        _mm_storel_epi64((__m128i *)d, _mm_packus_epi16(w16, w16));
        return 8;
    }
    /* narrow to UCS2: values < 0x10000 survive the saturating pack */
    if (_mm_testz_si128(o, _mm_set1_epi32(~0x7FF)))
        return enc2x8(_mm_packus_epi32(a, b), d);
    if (_mm_testz_si128(o, _mm_set1_epi32(~0xFFFF)))
        return enc3x8(_mm_packus_epi32(a, b), d);
    return enc4x8(a, b, d);
}

/* any surrogate among the 16 units in a, b, c, e (the saturating pack
 * sends astral code points to 0xFFFF, not a surrogate) */
U8P_SSE static inline int
has_surr32x16(__m128i a, __m128i b, __m128i c, __m128i e)
{
    const __m128i kF800 = _mm_set1_epi16((short)0xF800);
    const __m128i kD800 = _mm_set1_epi16((short)0xD800);
    __m128i s = _mm_or_si128(
        _mm_cmpeq_epi16(_mm_and_si128(_mm_packus_epi32(a, b), kF800), kD800),
        _mm_cmpeq_epi16(_mm_and_si128(_mm_packus_epi32(c, e), kF800), kD800));
    return !_mm_testz_si128(s, s);
}

/* r < SSE_NEED surrogate-free UCS4 units -> their UTF-8 at d, exactly (as
 * tail_ucs2) */
U8P_SSE static size_t
tail_ucs4(const uint32_t *src, size_t r, uint8_t *d)
{
    uint32_t in[SSE_NEED] = {0};
    uint8_t buf[4 * SSE_NEED + 16];
    size_t o = 0, j;
    memcpy(in, src, r * sizeof *src);
    for (j = 0; j < r; j += 8)
        o += enc_ucs4x8(ld(in + j), ld(in + j + 4), buf + o);
    o -= (8 - r % 8) % 8;
    u8p_copy_short(d, buf, o);
    return o;
}

/* lanes >= k of v zeroed (32-bit lanes; v holds units base..base+3) */
U8P_SSE static inline __m128i
keep32(__m128i v, size_t k, size_t base)
{
    const __m128i iota = _mm_setr_epi32(0, 1, 2, 3);
    long lim = (long)k - (long)base;
    lim = lim < 0 ? 0 : lim > 4 ? 4 : lim;
    return _mm_and_si128(v, _mm_cmpgt_epi32(_mm_set1_epi32((int)lim), iota));
}

/* 1 <= n < SSE_NEED UCS4 units, the whole input (as short_ucs2) */
U8P_SSE static size_t
short_ucs4(const uint32_t *src, size_t n, uint8_t *dst, size_t *done)
{
    const __m128i kF800 = _mm_set1_epi16((short)0xF800);
    const __m128i kD800 = _mm_set1_epi16((short)0xD800);
    const uint8_t *p = (const uint8_t *)src;
    size_t nb = 4 * n, k, o, j, nblk = (n + 7) / 8;
    uint8_t buf[4 * SSE_NEED + 16];
    __m128i v[6];
    uint64_t m = 0;
    for (j = 0; j < 6; j++) {
        size_t at = 16 * j;
        v[j] = nb > at ? u8p_load_part16(p + at, nb - at < 16 ? nb - at : 16)
                       : _mm_setzero_si128();
    }
    /* the saturating pack sends astral code points to 0xFFFF */
    for (j = 0; j < 3; j++)
        m |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_packs_epi16(
                 _mm_cmpeq_epi16(_mm_and_si128(_mm_packus_epi32(v[2 * j], v[2 * j + 1]), kF800),
                                 kD800),
                 _mm_setzero_si128()))
             << (8 * j);
    k = m ? (size_t)__builtin_ctzll(m) : n;
    if (k < n) {
        for (j = 0; j < 6; j++)
            v[j] = keep32(v[j], k, 4 * j);
    }
    /* a UCS4 str has an astral code point somewhere: the general block
     * step, not the ladder's mispredicted branches */
    o = 0;
    for (j = 0; j < nblk; j++)
        o += enc4x8(v[2 * j], v[2 * j + 1], buf + o);
    o -= nblk * 8 - k;
    u8p_copy_short(dst, buf, o);
    *done = k;
    return o;
}

/* UCS4 text always holds astral code points, and the SSE 4-byte blocks lose
 * to the scalar loop on short emoji-rich strings (Zen 3, random emoji
 * positions: 48 vs 26 ns at 30 units, 70 vs 51 at 64); below this many
 * units the scalar loop does the whole string. */
#ifndef U8P_SSE_MIN_UNITS_UCS4
#define U8P_SSE_MIN_UNITS_UCS4 48
#endif

U8P_SSE static size_t
sse_enc_ucs4(const uint32_t *src, size_t n, uint8_t *dst, size_t *done)
{
    const __m128i k10000 = _mm_set1_epi32(~0xFFFF);
    uint8_t *d = dst;
    size_t i = 0, lim, k, w;
    int stopped = 0;
    if (n < U8P_SSE_MIN_UNITS_UCS4)
        return u8p_scalar_enc_ucs4(src, n, dst, done);
    if (n < SSE_NEED)
        return short_ucs4(src, n, dst, done);
    /* Main loop: 16 units a step, encoded once the next 16 are loaded and
     * known surrogate-free (which keeps the stores inside dst); no scan. */
    if (n >= 32) {
        __m128i a = ld(src), b = ld(src + 4), c = ld(src + 8), e = ld(src + 12);
        if (!has_surr32x16(a, b, c, e)) {
            while (i + 32 <= n) {
                __m128i na = ld(src + i + 16), nb = ld(src + i + 20);
                __m128i nc = ld(src + i + 24), ne = ld(src + i + 28);
                if (has_surr32x16(na, nb, nc, ne))
                    break;
                if (!_mm_testz_si128(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, e)),
                                     k10000)) {
                    d += enc4x8(a, b, d);
                    d += enc4x8(c, e, d);
                }
                else {
                    d += enc_ucs4x8(a, b, d);
                    d += enc_ucs4x8(c, e, d);
                }
                a = na;
                b = nb;
                c = nc;
                e = ne;
                i += 16;
            }
        }
    }
    /* The rest, with the surrogate scan. */
    lim = i;
    for (;;) {
        __m128i a, b;
        if (i + SSE_NEED > lim) {
            size_t to;
            if (stopped || lim == n)
                break;
            to = n - lim > U8P_SURR_SCAN_CHUNK ? lim + U8P_SURR_SCAN_CHUNK : n;
            lim = scan_surr32(src, lim, to);
            stopped = lim < to;
            continue;
        }
        a = ld(src + i);
        b = ld(src + i + 4);
        if (i + SSE_NEED4 <= lim) {
            /* 16 units at once when astral code points are about: one
             * predictable branch instead of the ladder's */
            __m128i c = ld(src + i + 8), e = ld(src + i + 12);
            if (!_mm_testz_si128(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, e)), k10000)) {
                d += enc4x8(a, b, d);
                d += enc4x8(c, e, d);
                i += 16;
                continue;
            }
        }
        d += enc_ucs4x8(a, b, d);
        i += 8;
    }
    /* [i, lim) is surrogate-free and shorter than SSE_NEED */
    if (lim - i >= SSE_TAIL_MIN) {
        d += tail_ucs4(src + i, lim - i, d);
        i = lim;
    }
    w = u8p_scalar_enc_ucs4(src + i, n - i, d, &k);
    *done = i + k;
    return (size_t)(d - dst) + w;
}

const u8p_kernels u8p_kernels_sse = {
    "sse",
    sse_len_ucs1,
    sse_len_ucs2,
    sse_len_ucs4,
    sse_enc_ucs1,
    sse_enc_ucs2,
    sse_enc_ucs4,
};

#else /* !U8P_X86_SIMD */
typedef int u8p_x86_sse_empty; /* ISO C forbids an empty file */
#endif
