/*
 * AVX-512 kernels (x86-64; level "avx512").  Three tables:
 *
 *   u8p_kernels_avx512        AVX-512 F + BW: 512-bit length kernels (mask
 *                             compares + popcount); the encoders are the
 *                             AVX2 ones (a 512-bit encoder without byte
 *                             compress would be the AVX2 scheme again).
 *   u8p_kernels_avx512_vbmi2  + VBMI2, VBMI, CD and GFNI: encoders build each code
 *                             point's UTF-8 right-aligned in a 32-bit lane
 *                             (u8p_vbmi2_lanes: lzcnt -> length class, one
 *                             multishift, one ternlog) and squeeze out the
 *                             unused bytes with vpcompressb; loads and
 *                             stores are masked to the exact size, so
 *                             nothing is read or written out of bounds and
 *                             no scalar tail is needed.  UCS4 length from
 *                             the same lzcnt (one vpermb a vector).
 *   u8p_kernels_avx512_mixed  the level's table on AMD CPUs with VBMI2:
 *                             each kernel of the two above (or AVX2's)
 *                             that is the fastest for its input size.
 *   u8p_kernels_avx512_intel  the level's table on Intel CPUs with VBMI2:
 *                             VBMI2 encoders at every size, with long
 *                             loops that store whole vectors.
 *
 * Dispatch picks the mixed or the Intel table (by cpuid's vendor) where
 * cpuid and XCR0 say the CPU and OS support AVX-512 F + BW with VBMI2,
 * VBMI, CD and GFNI, the F + BW table where they support F + BW only.
 * u8p_kernels_variants reaches all four, and
 * the C harness tests each of them on every CPU that has them (and under
 * SIMDe on any x86-64).  The AVX-512 decoders live in decode_x86.c with
 * the other widths.
 */
#include "x86_internal.h"

#if U8P_X86_SIMD

#include <immintrin.h>
#include <string.h>

#include "../generic/scalar_inl.h"
#include "../short_vbmi2.h"

#define U8P_AVX512 __attribute__((target("avx512f,avx512bw,avx2,popcnt")))
/* the "VBMI2" table: also VBMI (vpmultishiftqb), CD (vplzcntd) and GFNI
 * (gf2p8affineqb); dispatch asks cpuid for all four */
#define U8P_VBMI2 U8P_VBMI2_TARGET
/* steps and the loop shared by UCS2 and UCS4: inlined into each */
#define U8P_VBMI2_INL U8P_VBMI2 U8P_ALWAYS_INLINE
#define U8P_AVX512_INL U8P_AVX512 U8P_ALWAYS_INLINE

/* ---------------------------------------------------------------- lengths */

/* Four loads a step: the loop is bound by reading the input (two passes
 * over a long str, this one and the encoder's, stream it from L2), not by
 * one mask's trip to a general register; the tail is one masked load. */
U8P_AVX512_INL size_t
high_bytes64(const uint8_t *p)
{
    return (size_t)__builtin_popcountll(_mm512_movepi8_mask(_mm512_loadu_si512(p)));
}

U8P_AVX512 static size_t
avx512_len_ucs1(const uint8_t *src, size_t n)
{
    size_t i = 0, high = 0;
    if (n >= 256) {
        /* the loads below from a 64-byte boundary: one that spans two
         * lines costs two reads, and a str's data sits 8 past a multiple
         * of 16, not of 64 */
        i = (size_t)(-(uintptr_t)src) & 63;
        high = (size_t)__builtin_popcountll(
            _mm512_movepi8_mask(_mm512_maskz_loadu_epi8(u8p_low_bits64(i), src)));
    }
    for (; i + 256 <= n; i += 256)
        high += high_bytes64(src + i) + high_bytes64(src + i + 64) + high_bytes64(src + i + 128)
                + high_bytes64(src + i + 192);
    for (; i + 64 <= n; i += 64)
        high += high_bytes64(src + i);
    if (i < n)
        high += (size_t)__builtin_popcountll(
            _mm512_movepi8_mask(_mm512_maskz_loadu_epi8(u8p_low_bits64(n - i), src + i)));
    return n + high;
}

/* UCS2 (ucs4 = 0) or UCS4 units: 1 byte each plus one per threshold
 * (0x80, 0x800, 0x10000) crossed, counted on compare masks; a step returns
 * the bytes past one a unit and adds its surrogates to *surr. */
U8P_AVX512_INL size_t
avx512_len_step(__m512i v, uint64_t *surr, int ucs4)
{
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
    *surr += (uint64_t)__builtin_popcountll(s);
    return (size_t)__builtin_popcountll(ge);
}

/* The last partial vector is a masked load (its lanes past n are zero,
 * below every threshold and no surrogate): a short str is one step, where
 * a scalar loop took longer than the encoder that follows. */
U8P_AVX512_INL size_t
avx512_len_wide(const void *src, size_t n, size_t *nsurr, int ucs4)
{
    const size_t per = ucs4 ? 16 : 32;
    const uint8_t *b = (const uint8_t *)src;
    size_t i = 0, len = n;
    uint64_t surr = 0;
    for (; i + per <= n; i += per)
        len += avx512_len_step(_mm512_loadu_si512(b + i * (ucs4 ? 4 : 2)), &surr, ucs4);
    if (i < n) {
        const uint64_t m = u8p_low_bits64(n - i);
        len += avx512_len_step(ucs4 ? _mm512_maskz_loadu_epi32((__mmask16)m, b + i * 4)
                                    : _mm512_maskz_loadu_epi16((__mmask32)m, b + i * 2),
                               &surr, ucs4);
    }
    *nsurr = (size_t)surr;
    return len;
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

/* The cut-offs below which the VBMI2 encoders hand the input to the
 * scalar loop (U8P_VBMI2_MIN_UNITS_UCS2, _UCS4), the lanes step they share
 * (u8p_vbmi2_lanes...) and the two-byte step over 16-bit lanes (UCS1, and
 * UCS2 below U+0800) are in the public short_vbmi2.h: the writer's short
 * path inlines them too. */

U8P_VBMI2 static size_t
vbmi2_enc_ucs1(const uint8_t *src, size_t n, uint8_t *dst)
{
    uint8_t *d = dst;
    size_t i = 0;
    while (i < n) {
        const size_t take = n - i < 32 ? n - i : 32;
        if (n - i >= 64) {
            __m512i v = _mm512_loadu_si512(src + i);
            if (!_mm512_movepi8_mask(v)) {
                _mm512_storeu_si512(d, v);
                d += 64;
                i += 64;
                continue;
            }
        }
        d += u8p_vbmi2_short_ucs1(src + i, take, d);
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
            d += u8p_vbmi2_lanes_store(&t_, (c), (__mmask16)u8p_low_bits64(first_), d); \
            i += first_;                                                      \
            break;                                                            \
        }                                                                     \
        d += u8p_vbmi2_lanes_store(&t_, (c), (lanes), d);                          \
        i += (take);                                                          \
    }

U8P_VBMI2 static size_t
vbmi2_enc_ucs2(const uint16_t *src, size_t n, uint8_t *dst, size_t *done)
{
    __m512i kF800 = _mm512_set1_epi32((int)0xFFFFF800u);
    __m512i kD800 = _mm512_set1_epi32(0xD800), k80 = _mm512_set1_epi16(0x80);
    const u8p_vbmi2_tab t_ = u8p_vbmi2_tab_make();
    uint8_t *d = dst;
    size_t i = 0;
    if (n < U8P_VBMI2_MIN_UNITS_UCS2)
        return u8p_scalar_enc_ucs2(src, n, dst, done);
    if (n <= 32) {
        /* a short string with no code point from U+0800 (so no surrogate:
         * Latin, Greek, Cyrillic, Armenian, Hebrew, Arabic, ...; half of
         * the corpus's UCS2 names): one two-byte step over 32 16-bit lanes
         * (UCS1's), not the lanes step over one or two groups of 16.  The
         * test slows the other names down by less than the step speeds
         * these up, so the writer's UCS2 and mixed names gain overall */
        const size_t cnt = u8p_vbmi2_short_ucs2(src, n, dst);
        if (cnt != (size_t)-1) {
            *done = n;
            return cnt;
        }
    }
    U8P_OPAQUE_V(kF800);
    U8P_OPAQUE_V(kD800);
    U8P_OPAQUE_V(k80);
    while (i < n) {
        size_t take = n - i < 16 ? n - i : 16;
        __mmask16 lanes = (__mmask16)u8p_low_bits64(take);
        __m512i c;
        if (n - i >= 32) {
            __m512i v = _mm512_loadu_si512(src + i);
            /* all ASCII (so no surrogate either): narrow and store */
            if (!_mm512_cmpge_epu16_mask(v, k80)) {
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

/* UCS4 length from the leading-zero count: one vpermb of a 64-byte table
 * turns each lane's lz (0..32, in its low byte; the other three bytes are 0
 * and fetch entry 0, which is 0) into the lane's byte count.  Surrogates
 * (U+D800..U+DFFF) are counted as 3 bytes, as the interface asks; whether
 * there are any is one unsigned min of c - 0xD800 kept over the loop, and
 * only then are they counted, by the compare-mask kernel. */
U8P_VBMI2 static size_t
vbmi_len_ucs4(const uint32_t *src, size_t n, size_t *nsurr)
{
    __m512i kD800 = _mm512_set1_epi32(0xD800), k800 = _mm512_set1_epi32(0x800);
    const __m512i bytes_by_lz = _mm512_setr_epi32(
        0x04040400, 0x04040404, 0x04040404, 0x04040404, /* lz 0 (never), 1..15 */
        0x03030303, 0x02020203, 0x01010102, 0x01010101, /* 16..20 3, 21..24 2, 25.. 1 */
        0x00000001, 0, 0, 0, 0, 0, 0, 0);               /* lz 32: U+0000 */
    size_t i = 0, len = 0;
    U8P_OPAQUE_V(kD800);
    U8P_OPAQUE_V(k800);
    while (n - i >= 16) {
        /* flushed every 8192 steps (as the other length kernels; far from
         * a 32-bit lane's limit, and the harness's long inputs reach it) */
        size_t stop = n - i > 16 * 8192 ? i + 16 * 8192 : n - 15;
        __m512i acc = _mm512_setzero_si512(), m = _mm512_set1_epi32(-1);
        for (; i < stop; i += 16) {
            __m512i c = _mm512_loadu_si512(src + i);
            acc = _mm512_add_epi32(acc, _mm512_permutexvar_epi8(_mm512_lzcnt_epi32(c), bytes_by_lz));
            m = _mm512_min_epu32(m, _mm512_sub_epi32(c, kD800));
        }
        if (_mm512_cmpge_epu32_mask(m, k800) != 0xFFFF)
            return avx512_len_ucs4(src, n, nsurr);
        len += (size_t)_mm512_reduce_add_epi32(acc);
    }
    /* the rest, and a short str: one masked step */
    return len + avx512_len_wide(src + i, n - i, nsurr, 1);
}

/* The long UCS4 loop: 64 code points a round.  A round with a surrogate
 * (one unsigned min over the four vectors of c - 0xD800 says) leaves the
 * rest to the careful loop below, which stops at it.  A round of ASCII only
 * is narrowed and stored (the ASCII step); any other round takes the
 * lanes step on all four vectors, branch-free: a test per vector
 * mispredicts on text with an emoji every few words, and real emoji text
 * (cldr_emoji.tsv) also runs faster without it. */
U8P_VBMI2_INL size_t
vbmi_ucs4_rounds(const u8p_vbmi2_tab *t, const uint32_t *src, size_t n, uint8_t **dp)
{
    __m512i kD800 = _mm512_set1_epi32(0xD800), k800 = _mm512_set1_epi32(0x800);
    __m512i kHigh = _mm512_set1_epi32((int)0xFFFFFF80u);
    uint8_t *d = *dp;
    size_t i = 0;
    U8P_OPAQUE_V(kD800);
    U8P_OPAQUE_V(k800);
    U8P_OPAQUE_V(kHigh);
    for (; n - i >= 64; i += 64) {
        __m512i c[4], m;
        int k;
        for (k = 0; k < 4; k++)
            c[k] = _mm512_loadu_si512(src + i + 16 * k);
        m = _mm512_min_epu32(
            _mm512_min_epu32(_mm512_sub_epi32(c[0], kD800), _mm512_sub_epi32(c[1], kD800)),
            _mm512_min_epu32(_mm512_sub_epi32(c[2], kD800), _mm512_sub_epi32(c[3], kD800)));
        if (_mm512_cmpge_epu32_mask(m, k800) != 0xFFFF)
            break;
        /* the ASCII step: all 64 code points ASCII */
        if (!_mm512_test_epi32_mask(
                _mm512_or_si512(_mm512_or_si512(c[0], c[1]), _mm512_or_si512(c[2], c[3])),
                kHigh)) {
            for (k = 0; k < 4; k++)
                _mm_storeu_si128((__m128i *)(d + 16 * k), _mm512_cvtepi32_epi8(c[k]));
            d += 64;
            continue;
        }
        for (k = 0; k < 4; k++) {
            __m512i o;
            size_t cnt = u8p_vbmi2_lanes(t, c[k], (__mmask16)0xFFFF, &o);
            _mm512_mask_storeu_epi8(d, u8p_low_bits64(cnt), o);
            d += cnt;
        }
    }
    *dp = d;
    return i;
}

U8P_VBMI2 static size_t
vbmi2_enc_ucs4(const uint32_t *src, size_t n, uint8_t *dst, size_t *done)
{
    __m512i kF800 = _mm512_set1_epi32((int)0xFFFFF800u);
    __m512i kD800 = _mm512_set1_epi32(0xD800), k80 = _mm512_set1_epi32(0x80);
    const u8p_vbmi2_tab t_ = u8p_vbmi2_tab_make();
    uint8_t *d = dst;
    size_t i = 0;
    if (n < U8P_VBMI2_MIN_UNITS_UCS4)
        return u8p_scalar_enc_ucs4(src, n, dst, done);
    if (n >= 64)
        i = vbmi_ucs4_rounds(&t_, src, n, &d);
    U8P_OPAQUE_V(kF800);
    U8P_OPAQUE_V(kD800);
    U8P_OPAQUE_V(k80);
    while (i < n) {
        size_t take = n - i < 16 ? n - i : 16;
        __mmask16 lanes = (__mmask16)u8p_low_bits64(take);
        __m512i c = _mm512_maskz_loadu_epi32(lanes, src + i);
        if (take == 16 && !_mm512_cmpge_epu32_mask(c, k80)) {
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

/* the VBMI2 encoders look for surrogates inside each step, at no extra
 * pass: their pass forms only add the surrogates' bytes */
U8P_DEFINE_ENC_PASS(U8P_VBMI2 static, vbmi2_enc_ucs2_pass, uint16_t, vbmi2_enc_ucs2)
U8P_DEFINE_ENC_PASS(U8P_VBMI2 static, vbmi2_enc_ucs4_pass, uint32_t, vbmi2_enc_ucs4)

const u8p_kernels u8p_kernels_avx512_vbmi2 = {
    "avx512-vbmi2",
    avx512_len_ucs1,
    avx512_len_ucs2,
    vbmi_len_ucs4,
    vbmi2_enc_ucs1,
    vbmi2_enc_ucs2,
    vbmi2_enc_ucs4,
    vbmi2_enc_ucs2_pass,
    vbmi2_enc_ucs4_pass,
    vbmi2_enc_ucs1, /* the room forms: masked stores need no room */
    vbmi2_enc_ucs2,
    vbmi2_enc_ucs4,
};

/* ------------------------------------------------------------ long UCS1 */

/*
 * Long UCS1.  Real Latin-1 text is mostly ASCII: most 64-byte blocks hold
 * no byte >= 0x80, or exactly one (an accented letter every word or two).
 * So a block is, by what it holds:
 *   - ASCII: a copy (two blocks tested at once, on their masks or'ed in
 *     a general register, where the other steps need them anyway);
 *   - one non-ASCII byte at p: the block stored with byte p made its
 *     lead, then the input from p stored one byte on with its first byte
 *     made the continuation: two stores, no shuffle (each byte change is a
 *     gf2p8affine, a bit matrix a byte, under a one-bit mask);
 *   - more: vpermb interleaves the block's halves into 16-bit lanes
 *     (byte j beside byte j + 32), each lane becomes the character's lead
 *     and continuation byte, and two byte compresses drop the leads of the
 *     ASCII characters, kept by the lanes' sign bits.
 * Stores are whole vectors: each reaches at most 63 bytes past its block's
 * output, which the next 64 input bytes (at least one byte each) cover, so
 * the loops stop while that much input is left, and two blocks with exact
 * stores finish (ucs1_tail; masked stores cost more than whole ones on AMD
 * cores, so only there).
 */

/* The compress step's constants, made once per call and passed in: left
 * to the compiler, each may be rebuilt from a general register on every
 * block, a transfer into the vector unit that costs more than the step's
 * own instructions on AMD cores. */
typedef struct {
    __m512i idx, c2, c001, c3, ff00, top, to_lead, to_cont, x8000;
    __mmask64 first;
} l1_consts;

U8P_VBMI2_INL l1_consts
l1_consts_make(void)
{
    l1_consts k;
    /* lane j: byte j low, byte j + 32 high */
    k.idx = _mm512_set_epi8(
        63, 31, 62, 30, 61, 29, 60, 28, 59, 27, 58, 26, 57, 25, 56, 24, 55, 23, 54, 22, 53, 21,
        52, 20, 51, 19, 50, 18, 49, 17, 48, 16, 47, 15, 46, 14, 45, 13, 44, 12, 43, 11, 42, 10,
        41, 9, 40, 8, 39, 7, 38, 6, 37, 5, 36, 4, 35, 3, 34, 2, 33, 1, 32, 0);
    k.c2 = _mm512_set1_epi16(0xC2);
    k.c001 = _mm512_set1_epi16((short)0xC001);
    k.c3 = _mm512_set1_epi16(0x40C3);
    k.ff00 = _mm512_set1_epi16((short)0xFF00);
    k.top = _mm512_set1_epi8((char)0xC0);
    k.x8000 = _mm512_set1_epi16((short)0x8000);
    /* gf2p8affine matrices: c -> c >> 6 (then ^ 0xC0: the lead), and
     * c -> c & 0xBF (the continuation of a byte >= 0x80) */
    k.to_lead = _mm512_set1_epi64(0x4080000000000000ll);
    k.to_cont = _mm512_set1_epi64(0x0102040810200080ll);
    k.first = (__mmask64)1;
    U8P_OPAQUE_V(k.to_lead);
    U8P_OPAQUE_V(k.to_cont);
    U8P_OPAQUE_K(k.first);
    U8P_OPAQUE_V(k.idx);
    U8P_OPAQUE_V(k.c2);
    U8P_OPAQUE_V(k.c001);
    U8P_OPAQUE_V(k.c3);
    U8P_OPAQUE_V(k.ff00);
    U8P_OPAQUE_V(k.top);
    U8P_OPAQUE_V(k.x8000);
    return k;
}

/* a block of 64 with at least two bytes >= 0x80 (na: their mask); with
 * exact, stores masked to its output */
U8P_VBMI2_INL size_t
ucs1_block_compress(const l1_consts *k, __m512i v, uint64_t na, uint8_t *d, int exact)
{
    const __mmask64 top = _mm512_cmpge_epu8_mask(v, k->top);
    const __m512i iv = _mm512_permutexvar_epi8(k->idx, v);
    /* first half: lead C2 and the byte; C0..FF: lead C3, byte - 0x40 */
    __m512i a = _mm512_or_si512(_mm512_slli_epi16(iv, 8), k->c2);
    a = _mm512_mask_add_epi16(a, (__mmask32)top, a, k->c001);
    /* second half, from the high bytes: (iv & FF00) ^ (C2, or C3 and 0x40) */
    const __m512i lead_b = _mm512_mask_blend_epi16((__mmask32)(top >> 32), k->c2, k->c3);
    __m512i b = _mm512_ternarylogic_epi32(iv, k->ff00, lead_b, 0x6A);
    /* keep each continuation, and a lead where its byte is >= 0x80: the
     * sign bits of the lanes' bytes (a's in the low byte, b's moved there),
     * the high byte's set.  Made in the vector unit: derived from one mask
     * with mask shifts and ands, gcc moved it through a general register
     * and back, a round trip that cost AMD's cores more than these ops. */
    const __mmask64 keep_a = _mm512_movepi8_mask(_mm512_or_si512(iv, k->x8000));
    const __mmask64 keep_b =
        _mm512_movepi8_mask(_mm512_or_si512(_mm512_srli_epi16(iv, 8), k->x8000));
    const size_t na_a = 32 + (size_t)__builtin_popcount((uint32_t)na);
    const size_t na_b = 32 + (size_t)__builtin_popcount((uint32_t)(na >> 32));
    if (exact) {
        _mm512_mask_storeu_epi8(d, u8p_low_bits64(na_a), _mm512_maskz_compress_epi8(keep_a, a));
        _mm512_mask_storeu_epi8(d + na_a, u8p_low_bits64(na_b),
                                _mm512_maskz_compress_epi8(keep_b, b));
    }
    else {
        _mm512_storeu_si512((void *)d, _mm512_maskz_compress_epi8(keep_a, a));
        _mm512_storeu_si512((void *)(d + na_a), _mm512_maskz_compress_epi8(keep_b, b));
    }
    return na_a + na_b;
}

/* a block of 64 at s with a byte >= 0x80 (na != 0) */
U8P_VBMI2_INL size_t
ucs1_block_long(const l1_consts *k, const uint8_t *s, __m512i v, uint64_t na, uint8_t *d)
{
    if (na & (na - 1))
        return ucs1_block_compress(k, v, na, d, 0);
    {
        const size_t p = (size_t)__builtin_ctzll(na);
        const __m512i r = _mm512_loadu_si512(s + p);
        _mm512_storeu_si512((void *)d, _mm512_mask_gf2p8affine_epi64_epi8(v, (__mmask64)na, v,
                                                                          k->to_lead, 0xC0));
        _mm512_storeu_si512((void *)(d + p + 1),
                            _mm512_mask_gf2p8affine_epi64_epi8(r, k->first, r, k->to_cont, 0));
        return 65;
    }
}

/* The same, any block, reading and writing nothing past it */
U8P_VBMI2_INL size_t
ucs1_block_exact(const l1_consts *k, const uint8_t *s, __m512i v, uint64_t na, uint8_t *d)
{
    if (na & (na - 1))
        return ucs1_block_compress(k, v, na, d, 1);
    if (na) {
        const size_t p = (size_t)__builtin_ctzll(na);
        const __mmask64 rest = u8p_low_bits64(64 - p);
        const __m512i r = _mm512_maskz_loadu_epi8(rest, s + p);
        _mm512_storeu_si512((void *)d, _mm512_mask_gf2p8affine_epi64_epi8(v, (__mmask64)na, v,
                                                                          k->to_lead, 0xC0));
        _mm512_mask_storeu_epi8(d + p + 1, rest,
                                _mm512_mask_gf2p8affine_epi64_epi8(r, k->first, r, k->to_cont, 0));
        return 65;
    }
    _mm512_storeu_si512((void *)d, v);
    return 64;
}

/* The last r = n - i bytes of a long input, 64 <= r < 128: the block at i,
 * then the block that ends at n, which begins with 128 - r bytes already
 * encoded (written again, the same); exact stores, as the loops' whole
 * vectors would reach past the output. */
U8P_VBMI2_INL size_t
ucs1_tail(const l1_consts *k, const uint8_t *src, size_t i, size_t n, uint8_t *dst)
{
    uint8_t *d = dst;
    __m512i v = _mm512_loadu_si512(src + i);
    d += ucs1_block_exact(k, src + i, v, _mm512_movepi8_mask(v), d);
    if (i + 64 < n) {
        const size_t back = 128 - (n - i);
        const uint8_t *s = src + n - 64;
        uint64_t m;
        v = _mm512_loadu_si512(s);
        m = _mm512_movepi8_mask(v);
        d -= back + (size_t)__builtin_popcountll(m & u8p_low_bits64(back));
        d += ucs1_block_exact(k, s, v, m, d);
    }
    return (size_t)(d - dst);
}

/* Below this many bytes the head block costs more than the aligned loads
 * save. */
#define LONG_UCS1_ALIGN_MIN 1024

U8P_VBMI2 static size_t
vbmi2_long_ucs1(const uint8_t *src, size_t n, uint8_t *dst)
{
    uint8_t *d = dst;
    const l1_consts kc = l1_consts_make(), *k = &kc;
    /* From LONG_UCS1_ALIGN_MIN bytes, the loads below from a 64-byte
     * boundary of the input (see avx512_len_ucs1).  The head is a block at
     * src, of which only the first i bytes count: its output begins with
     * their UTF-8, and what follows is the rest's, which the next steps
     * write again. */
    size_t i = n >= LONG_UCS1_ALIGN_MIN ? (size_t)(-(uintptr_t)src) & 63 : 0;
    if (i) {
        const __m512i v = _mm512_loadu_si512(src);
        const uint64_t m = _mm512_movepi8_mask(v);
        if (m)
            ucs1_block_long(k, src, v, m, d);
        else
            _mm512_storeu_si512((void *)d, v);
        d += i + (size_t)__builtin_popcountll(m & u8p_low_bits64(i));
    }
    for (; n - i >= 128 + 64; i += 128) {
        const __m512i a = _mm512_loadu_si512(src + i), b = _mm512_loadu_si512(src + i + 64);
        const uint64_t ma = _mm512_movepi8_mask(a), mb = _mm512_movepi8_mask(b);
        if (!(ma | mb)) {
            _mm512_storeu_si512((void *)d, a);
            _mm512_storeu_si512((void *)(d + 64), b);
            d += 128;
            continue;
        }
        if (ma)
            d += ucs1_block_long(k, src + i, a, ma, d);
        else {
            _mm512_storeu_si512((void *)d, a);
            d += 64;
        }
        if (mb)
            d += ucs1_block_long(k, src + i + 64, b, mb, d);
        else {
            _mm512_storeu_si512((void *)d, b);
            d += 64;
        }
    }
    for (; n - i >= 64 + 64; i += 64) {
        const __m512i v = _mm512_loadu_si512(src + i);
        const uint64_t m = _mm512_movepi8_mask(v);
        if (m)
            d += ucs1_block_long(k, src + i, v, m, d);
        else {
            _mm512_storeu_si512((void *)d, v);
            d += 64;
        }
    }
    return (size_t)(d - dst) + ucs1_tail(k, src, i, n, d);
}

/* ------------------------------------------- the "avx512" level's table */

/*
 * Each kernel of the AVX-512 level is the fastest for its input size
 * (bench/c/bench_kernels.c, README "x86 kernels").  UCS1: the masked
 * VBMI2 encoder below 128 units (no scalar tail, no buffer round trip),
 * AVX2's block encoder to 256, the long UCS1 loop above (its block types
 * pay off once a string holds a few blocks); the 512-bit UCS1 length.
 * UCS2: VBMI2 below 320 units, AVX2 above, and AVX2's length: on text
 * below U+0800 (Cyrillic, ...) AVX2's two-byte step catches up with VBMI2's
 * general step at about 300 units and wins on longer strings; on CJK VBMI2
 * wins at every size.  The pass forms (a long str's one pass) take the
 * long two-byte loop below from 96 units (MIXED_TWO_UCS2), which hands CJK
 * back to VBMI2 below 320 units and to AVX2 above.
 * UCS4: VBMI2 at every size, encoder and length.  Without VBMI2, AVX2's
 * encoders.
 */
#define AVX512_SHORT_UCS1 128
#define AVX512_LONG_UCS1 256
#define AVX512_SHORT_UCS2 320

U8P_VBMI2 static size_t
avx512_enc1(const uint8_t *src, size_t n, uint8_t *dst)
{
    if (n < AVX512_SHORT_UCS1)
        return vbmi2_enc_ucs1(src, n, dst);
    return n < AVX512_LONG_UCS1 ? u8p_avx2_enc_ucs1(src, n, dst) : vbmi2_long_ucs1(src, n, dst);
}

U8P_VBMI2 static size_t
avx512_enc1_room(const uint8_t *src, size_t n, uint8_t *dst)
{
    if (n < AVX512_SHORT_UCS1)
        return vbmi2_enc_ucs1(src, n, dst);
    return n < AVX512_LONG_UCS1 ? u8p_avx2_enc_ucs1_room(src, n, dst)
                                : vbmi2_long_ucs1(src, n, dst);
}

#define DEFINE_BY_SIZE(name, T, limit, short_fn, long_fn)                    \
    U8P_VBMI2 static size_t name(const T *src, size_t n, uint8_t *dst, size_t *done) \
    {                                                                         \
        return (n < (limit) ? short_fn : long_fn)(src, n, dst, done);         \
    }
DEFINE_BY_SIZE(avx512_enc2, uint16_t, AVX512_SHORT_UCS2, vbmi2_enc_ucs2, u8p_avx2_enc_ucs2)
DEFINE_BY_SIZE(avx512_enc2_room, uint16_t, AVX512_SHORT_UCS2, vbmi2_enc_ucs2,
               u8p_avx2_enc_ucs2_room)

/*
 * Long UCS2 in the pass forms (what the writer runs on a long str), on
 * AMD's cores.  Text below U+0800 (Latin, Greek, Cyrillic, Armenian,
 * Hebrew, Arabic, ...) takes a two-byte step of 32 units, the one of
 * short_vbmi2.h (u8p_vbmi2_two_bytes) made cheaper for these cores: each
 * 16-bit lane holds its unit (below U+0080) or its [lead, trail], and one
 * byte compress keeps every low byte and the high bytes that are not zero
 * (a unit below U+0080 has a zero high byte, a trail byte never is one;
 * U+0000 is a low byte, kept), a byte test rather than a blend of marker
 * lanes.  The count comes from the compare mask (32 units plus one per
 * unit from U+0080) rather than from the compress mask: on these cores
 * each mask's trip to a general register costs, and the compare's is
 * needed anyway.  The ASCII blocks of such text take the same step (a
 * branch for them mispredicts more than it saves).  A block with a unit
 * from U+0800 (a dash or a quotation mark, now and then) takes the lanes
 * step, two groups of 16 in 32-bit lanes, and notes its surrogates; where
 * such blocks are common (half of the last eight: CJK) the rest goes to
 * AVX2's loop, whose three-byte step is the faster there on long input
 * (below AVX512_SHORT_UCS2 units, to VBMI2's steps, as a str that short
 * would).  Each two-byte step stores a whole vector, reaching at most 32
 * bytes past its output, which the next 32 units (a byte each at least)
 * cover: the loop stops while 64 units are left, and VBMI2's steps finish.
 */
/* from here on the loop is the faster on two-byte text (Cyrillic, Latin
 * Extended), one compress per 32 units against VBMI2's general step per
 * 16, and it hands CJK back to VBMI2's steps after a few blocks */
#define MIXED_TWO_UCS2 96
U8P_VBMI2 static size_t
mixed_long_ucs2_pass(const uint16_t *src, size_t n, uint8_t *dst, int *surr)
{
    __m512i k3f = _mm512_set1_epi16(0x3F), k80c0 = _mm512_set1_epi16((short)0x80C0);
    __m512i k80 = _mm512_set1_epi16(0x80), k800 = _mm512_set1_epi16(0x800);
    __m512i kF800 = _mm512_set1_epi16((short)0xF800);
    __m512i kD800 = _mm512_set1_epi16((short)0xD800);
    const u8p_vbmi2_tab t = u8p_vbmi2_tab_make();
    uint8_t *d = dst;
    size_t i = 0;
    unsigned wide = 0; /* a bit a block, the last one lowest: from U+0800 */
    /* kept in registers (see U8P_OPAQUE_V) */
    U8P_OPAQUE_V(k3f);
    U8P_OPAQUE_V(k80c0);
    U8P_OPAQUE_V(k80);
    U8P_OPAQUE_V(k800);
    U8P_OPAQUE_V(kF800);
    U8P_OPAQUE_V(kD800);
    int any = 0, rest = 0;
    for (; n - i >= 64; i += 32) {
        const __m512i v = _mm512_loadu_si512(src + i);
        __mmask32 big;
        __m512i w;
        if (_mm512_cmpge_epu16_mask(v, k800)) {
            any |= _mm512_cmpeq_epi16_mask(_mm512_and_si512(v, kF800), kD800) != 0;
            d += u8p_vbmi2_lanes_store(&t, _mm512_cvtepu16_epi32(_mm512_castsi512_si256(v)),
                                       (__mmask16)0xFFFF, d);
            d += u8p_vbmi2_lanes_store(&t, _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(v, 1)),
                                       (__mmask16)0xFFFF, d);
            wide = wide << 1 | 1;
            if (__builtin_popcount(wide & 0xFF) >= 4) {
                i += 32;
                break;
            }
            continue;
        }
        wide <<= 1;
        big = _mm512_cmpge_epu16_mask(v, k80);
        /* [0xC0 | c >> 6, 0x80 | (c & 0x3F)], little-endian */
        w = _mm512_mask_blend_epi16(
            big, v,
            _mm512_ternarylogic_epi32(_mm512_srli_epi16(v, 6),
                                      _mm512_slli_epi16(_mm512_and_si512(v, k3f), 8), k80c0,
                                      0xFE));
        _mm512_storeu_si512(
            (void *)d,
            _mm512_maskz_compress_epi8(
                _mm512_test_epi8_mask(w, w) | (__mmask64)0x5555555555555555ull, w));
        d += 32 + (size_t)__builtin_popcount(big);
    }
    /* the last 32..63 units, or, handed over, the rest: VBMI2's steps
     * below AVX512_SHORT_UCS2 units, as the table does for a str */
    d += (n - i < AVX512_SHORT_UCS2 ? vbmi2_enc_ucs2_pass : u8p_avx2_enc_ucs2_pass)(
        src + i, n - i, d, surr ? &rest : NULL);
    if (surr)
        *surr = any | rest;
    return (size_t)(d - dst);
}

U8P_VBMI2 static size_t
avx512_enc2_pass(const uint16_t *src, size_t n, uint8_t *dst, int *surr)
{
    return (n < MIXED_TWO_UCS2 ? vbmi2_enc_ucs2_pass : mixed_long_ucs2_pass)(src, n, dst, surr);
}

/* The length of UCS2 and UCS4 below AVX512_LEN_SHORT units in masked
 * AVX-512 steps (a short str in one); from there AVX2's counter, whose
 * saturating packs run long text faster on cores that split 512-bit
 * operations in two. */
#define AVX512_LEN_SHORT 320

U8P_AVX512 static size_t
avx512_len2_by_size(const uint16_t *src, size_t n, size_t *nsurr)
{
    return n < AVX512_LEN_SHORT ? avx512_len_wide(src, n, nsurr, 0)
                                : u8p_avx2_len_ucs2(src, n, nsurr);
}

U8P_AVX512 static size_t
avx512_len4_by_size(const uint32_t *src, size_t n, size_t *nsurr)
{
    return n < AVX512_LEN_SHORT ? avx512_len_wide(src, n, nsurr, 1)
                                : u8p_avx2_len_ucs4(src, n, nsurr);
}

/* AVX-512 F + BW */
const u8p_kernels u8p_kernels_avx512 = {
    "avx512",          avx512_len_ucs1,   avx512_len2_by_size,     avx512_len4_by_size,
    u8p_avx2_enc_ucs1, u8p_avx2_enc_ucs2, u8p_avx2_enc_ucs4,
    u8p_avx2_enc_ucs2_pass, u8p_avx2_enc_ucs4_pass,
    u8p_avx2_enc_ucs1_room, u8p_avx2_enc_ucs2_room, u8p_avx2_enc_ucs4_room,
};

/* + VBMI2 */
const u8p_kernels u8p_kernels_avx512_mixed = {
    "avx512",    avx512_len_ucs1, avx512_len2_by_size, vbmi_len_ucs4,
    avx512_enc1, avx512_enc2, vbmi2_enc_ucs4,
    avx512_enc2_pass, vbmi2_enc_ucs4_pass,
    avx512_enc1_room, avx512_enc2_room, vbmi2_enc_ucs4,
};

/* --------------------------------------- the "avx512" level on Intel cores */

/*
 * Long inputs with VBMI2 at every size.  The mixed table's split (AVX2's
 * block encoders from 128 UCS1 units to 256 and above 320 UCS2 units)
 * follows AMD cores, where a 512-bit byte compress costs more than the
 * AVX2 shuffles it replaces.  Intel cores with VBMI2 (Ice Lake, Sapphire
 * Rapids and later) run vpcompressb and vpermb on full 512-bit vectors at
 * one or two uops, and there the AVX2 block encoders lose to a
 * byte-compress loop (docs/design.md, "Kernel tables per CPU").  Long UCS1
 * is the loop above on both.  The UCS2 loop takes 32 units a step and
 * stores whole vectors: each step's stores reach at most 32 bytes past its
 * own output, which the next 32 or more input units (at least one byte
 * each) are sure to cover, so the loop stops while that much input is left
 * and the exact, masked encoder finishes.
 */

/* UCS2: 32 units a step; all below U+0800 (Latin, Greek, Cyrillic, ...,
 * and no surrogate) is the two-byte step, any other block goes through the
 * exact encoder, which stops at a surrogate.  The two-byte step stores a
 * whole vector only when the next 32 units hold no surrogate: the kernel
 * owns room for the bytes of what it encodes, and it stops at one. */
U8P_VBMI2 static size_t
vbmi2_long_ucs2(const uint16_t *src, size_t n, uint8_t *dst, size_t *done)
{
    __m512i k800 = _mm512_set1_epi16(0x800);
    __m512i kF800 = _mm512_set1_epi16((short)0xF800);
    __m512i kD800 = _mm512_set1_epi16((short)0xD800);
    uint8_t *d = dst;
    size_t i = 0, k;
    __m512i w = _mm512_loadu_si512(src);
    U8P_OPAQUE_V(k800);
    U8P_OPAQUE_V(kF800);
    U8P_OPAQUE_V(kD800);
    while (n - i >= 32 + 32) {
        const __m512i next = _mm512_loadu_si512(src + i + 32);
        if (_mm512_cmpge_epu16_mask(w, k800)) {
            d += vbmi2_enc_ucs2(src + i, 32, d, &k);
            i += k;
            if (k < 32) { /* a surrogate */
                *done = i;
                return (size_t)(d - dst);
            }
        }
        else {
            __mmask32 big;
            __mmask64 keep;
            const __m512i b = u8p_vbmi2_two_bytes(w, (__mmask32)0xFFFFFFFFu, &big, &keep);
            const size_t cnt = (size_t)__builtin_popcountll(keep);
            if (_mm512_cmpeq_epi16_mask(_mm512_and_si512(next, kF800), kD800))
                _mm512_mask_storeu_epi8(d, u8p_low_bits64(cnt), b);
            else
                _mm512_storeu_si512((void *)d, b);
            d += cnt;
            i += 32;
        }
        w = next;
    }
    d += vbmi2_enc_ucs2(src + i, n - i, d, &k);
    *done = i + k;
    return (size_t)(d - dst);
}

#define INTEL_LONG_UCS1 128
#define INTEL_LONG_UCS2 64

U8P_VBMI2 static size_t
intel_enc1(const uint8_t *src, size_t n, uint8_t *dst)
{
    return n < INTEL_LONG_UCS1 ? vbmi2_enc_ucs1(src, n, dst) : vbmi2_long_ucs1(src, n, dst);
}

DEFINE_BY_SIZE(intel_enc2, uint16_t, INTEL_LONG_UCS2, vbmi2_enc_ucs2, vbmi2_long_ucs2)
U8P_DEFINE_ENC_PASS(U8P_VBMI2 static, intel_enc2_pass, uint16_t, intel_enc2)

const u8p_kernels u8p_kernels_avx512_intel = {
    "avx512",   avx512_len_ucs1, avx512_len_ucs2, vbmi_len_ucs4,
    intel_enc1, intel_enc2,      vbmi2_enc_ucs4,
    intel_enc2_pass, vbmi2_enc_ucs4_pass,
    intel_enc1, intel_enc2, vbmi2_enc_ucs4, /* the room forms: masked stores need no room */
};

#else /* !U8P_X86_SIMD */
typedef int u8p_x86_avx512_empty; /* ISO C forbids an empty file */
#endif
