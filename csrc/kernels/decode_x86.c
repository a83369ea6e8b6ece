/*
 * x86-64 decode kernels (SSE4.1 and AVX2), selected per function with
 * target attributes so the file builds with the project's common flags.
 *
 * scan: branch-free UTF-8 validation by nibble lookup ("validating UTF-8 in
 * less than one instruction per byte", Keiser & Lemire 2021; tables derived
 * here from the rules in decode.h).  Each byte is classified from the high
 * and low nibble of the byte before it and its own high nibble: three
 * 16-entry tables whose AND is non-zero exactly on an invalid two-byte
 * pattern; third and fourth bytes of a sequence are checked against
 * "a lead >= E0 two bytes back / >= F0 three bytes back".  The scan also
 * counts continuation bytes (code points = n - continuation bytes) and keeps
 * the largest byte (its lead decides the PEP 393 class).  On any error the
 * scalar scan runs on the payload for CPython's exact bounds.
 *
 * transcode: a block of 16/32 bytes that is all ASCII is widened with one
 * instruction; otherwise the positions of its lead (non-continuation) bytes
 * come from a movemask and each code point is decoded branch-free from a
 * big-endian 4-byte load: mask the payload bits of its length (looked up by
 * the lead's high nibble), squeeze the 6-bit groups together with two
 * shift/or steps and shift the result down.  Sequences that straddle a block
 * are decoded where their lead is; loads stay inside the payload because the
 * block loop stops 3 bytes early and the tail goes scalar.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>
#include <string.h>

#include "decode.h"
#include "decode_inl.h"

/* error bits of the nibble tables */
#define E_TOO_SHORT 0x01  /* lead not followed by a continuation */
#define E_TOO_LONG 0x02   /* continuation after ASCII */
#define E_OVERLONG3 0x04  /* E0 80..9F */
#define E_TOO_LARGE 0x08  /* F4 90..BF, F5..FF 90..BF */
#define E_SURROGATE 0x10  /* ED A0..BF */
#define E_OVERLONG2 0x20  /* C0, C1 + continuation */
#define E_BIT6 0x40       /* F0 80..8F (overlong), F5..FF 80..8F (too large) */
/* bit 7 written as -0x80: the tables are signed chars (_mm_setr_epi8), and
 * clang -Wconstant-conversion rejects 0x80..0xFF there; same bit pattern */
#define E_TWO_CONTS (-0x80) /* continuation after continuation */
#define E_CARRY (E_TOO_SHORT | E_TOO_LONG | E_TWO_CONTS)

#define T1_ROW                                                                \
    E_TOO_LONG, E_TOO_LONG, E_TOO_LONG, E_TOO_LONG, E_TOO_LONG, E_TOO_LONG,   \
        E_TOO_LONG, E_TOO_LONG, E_TWO_CONTS, E_TWO_CONTS, E_TWO_CONTS,        \
        E_TWO_CONTS, E_TOO_SHORT | E_OVERLONG2, E_TOO_SHORT,                  \
        E_TOO_SHORT | E_OVERLONG3 | E_SURROGATE,                              \
        E_TOO_SHORT | E_TOO_LARGE | E_BIT6

#define T2_ROW                                                                \
    E_CARRY | E_OVERLONG3 | E_OVERLONG2 | E_BIT6, E_CARRY | E_OVERLONG2,      \
        E_CARRY, E_CARRY, E_CARRY | E_TOO_LARGE,                              \
        E_CARRY | E_TOO_LARGE | E_BIT6, E_CARRY | E_TOO_LARGE | E_BIT6,       \
        E_CARRY | E_TOO_LARGE | E_BIT6, E_CARRY | E_TOO_LARGE | E_BIT6,       \
        E_CARRY | E_TOO_LARGE | E_BIT6, E_CARRY | E_TOO_LARGE | E_BIT6,       \
        E_CARRY | E_TOO_LARGE | E_BIT6, E_CARRY | E_TOO_LARGE | E_BIT6,       \
        E_CARRY | E_TOO_LARGE | E_BIT6 | E_SURROGATE,                         \
        E_CARRY | E_TOO_LARGE | E_BIT6, E_CARRY | E_TOO_LARGE | E_BIT6

#define C_ANY (E_TOO_LONG | E_OVERLONG2 | E_TWO_CONTS)
#define T3_ROW                                                                \
    E_TOO_SHORT, E_TOO_SHORT, E_TOO_SHORT, E_TOO_SHORT, E_TOO_SHORT,          \
        E_TOO_SHORT, E_TOO_SHORT, E_TOO_SHORT,                                \
        C_ANY | E_OVERLONG3 | E_BIT6, C_ANY | E_OVERLONG3 | E_TOO_LARGE,      \
        C_ANY | E_SURROGATE | E_TOO_LARGE, C_ANY | E_SURROGATE | E_TOO_LARGE, \
        E_TOO_SHORT, E_TOO_SHORT, E_TOO_SHORT, E_TOO_SHORT

static inline uint32_t
class_of_max(uint8_t maxb)
{
    if (maxb < 0x80)
        return 0x7F;
    if (maxb < 0xC4)
        return 0xFF;
    if (maxb < 0xF0)
        return 0xFFFF;
    return 0x10FFFF;
}

/* ---- branch-free decode of one validated sequence at p (4 bytes readable) */

static const uint32_t dec_mask[16] = {
    0x7F000000, 0x7F000000, 0x7F000000, 0x7F000000, 0x7F000000, 0x7F000000,
    0x7F000000, 0x7F000000, 0,          0,          0,          0,
    0x1F3F0000, 0x1F3F0000, 0x0F3F3F00, 0x073F3F3F,
};
static const uint8_t dec_shift[16] = {
    18, 18, 18, 18, 18, 18, 18, 18, 0, 0, 0, 0, 12, 12, 6, 0,
};

static inline uint32_t
dec_at(const uint8_t *p)
{
    uint32_t v, h, t;
    memcpy(&v, p, 4);
    v = __builtin_bswap32(v);
    h = v >> 28;
    v &= dec_mask[h];
    t = (v & 0x00FF00FFu) | ((v & 0xFF00FF00u) >> 2);
    t = (t & 0x0000FFFFu) | ((t & 0xFFFF0000u) >> 4);
    return t >> dec_shift[h];
}

/* scalar tail shared by every width: starts at a lead or at continuation
 * bytes of a sequence already decoded by the block loop */
#define TAIL_LOOP(T)                                                          \
    while (i < n && (s[i] & 0xC0) == 0x80)                                    \
        i++;                                                                  \
    while (i < n) {                                                           \
        size_t len_;                                                          \
        d[k++] = (T)u8p_decode_one(s + i, &len_);                             \
        i += len_;                                                            \
    }

#define LEAD_LOOP(T, base, leads)                                             \
    do {                                                                      \
        uint32_t m_ = (leads);                                                \
        while (m_) {                                                          \
            unsigned p_ = (unsigned)__builtin_ctz(m_);                        \
            m_ &= m_ - 1;                                                     \
            d[k++] = (T)dec_at((base) + p_);                                  \
        }                                                                     \
    } while (0)

/* ======================================================================
 * SSE4.1 (16-byte blocks)
 * ==================================================================== */

#define SSE_TARGET __attribute__((target("sse4.1,popcnt")))

SSE_TARGET static u8p_dec_status
sse_scan(const uint8_t *s, size_t n, int allow_surr, u8p_scan_result *res)
{
    const __m128i t1 = _mm_setr_epi8(T1_ROW);
    const __m128i t2 = _mm_setr_epi8(T2_ROW);
    const __m128i t3 = _mm_setr_epi8(T3_ROW);
    const __m128i nib = _mm_set1_epi8(0x0F);
    const __m128i keep = _mm_set1_epi8((char)(allow_surr ? ~E_SURROGATE : 0xFF));
    const __m128i maxv = _mm_setr_epi8(-1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                       -1, -1, -1, (char)0xEF, (char)0xDF,
                                       (char)0xBF);
    const __m128i cont_lim = _mm_set1_epi8(-64);
    __m128i prev = _mm_setzero_si128(), err = _mm_setzero_si128();
    __m128i inc = _mm_setzero_si128(), vmax = _mm_setzero_si128();
    size_t i = 0, cont = 0;
    uint8_t buf[16], mx[16], maxb = 0;
    int j, last = 0;

    if (n < 16)
        return u8p_dec_scan_scalar(s, n, allow_surr, res);
    while (!last) {
        __m128i in;
        if (i + 16 <= n) {
            in = _mm_loadu_si128((const __m128i *)(s + i));
            i += 16;
        }
        else {
            memset(buf, 0, sizeof buf);
            memcpy(buf, s + i, n - i);
            in = _mm_loadu_si128((const __m128i *)buf);
            i = n;
            last = 1;
        }
        if (i == n)
            last = 1;
        if (!_mm_movemask_epi8(in)) {
            err = _mm_or_si128(err, inc);
            inc = _mm_setzero_si128();
            prev = in;
            continue;
        }
        {
            __m128i p1 = _mm_alignr_epi8(in, prev, 15);
            __m128i p2 = _mm_alignr_epi8(in, prev, 14);
            __m128i p3 = _mm_alignr_epi8(in, prev, 13);
            __m128i sc = _mm_and_si128(
                _mm_and_si128(
                    _mm_shuffle_epi8(t1, _mm_and_si128(_mm_srli_epi16(p1, 4), nib)),
                    _mm_shuffle_epi8(t2, _mm_and_si128(p1, nib))),
                _mm_shuffle_epi8(t3, _mm_and_si128(_mm_srli_epi16(in, 4), nib)));
            __m128i m23 = _mm_or_si128(_mm_subs_epu8(p2, _mm_set1_epi8(0x60)),
                                       _mm_subs_epu8(p3, _mm_set1_epi8(0x70)));
            m23 = _mm_and_si128(m23, _mm_set1_epi8((char)0x80));
            sc = _mm_and_si128(sc, keep);
            err = _mm_or_si128(err, _mm_xor_si128(sc, m23));
            inc = _mm_subs_epu8(in, maxv);
            vmax = _mm_max_epu8(vmax, in);
            cont += (size_t)__builtin_popcount(
                (unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(cont_lim, in)));
            prev = in;
        }
    }
    err = _mm_or_si128(err, inc);
    if (!_mm_testz_si128(err, err))
        return u8p_dec_scan_scalar(s, n, allow_surr, res);
    _mm_storeu_si128((__m128i *)mx, vmax);
    for (j = 0; j < 16; j++)
        if (mx[j] > maxb)
            maxb = mx[j];
    res->ncp = n - cont;
    res->maxchar = class_of_max(maxb);
    res->err_start = res->err_end = 0;
    return U8P_DEC_OK;
}

#define SSE_LEADS(in)                                                         \
    (~(uint32_t)_mm_movemask_epi8(_mm_cmpgt_epi8(_mm_set1_epi8(-64), (in))) \
     & 0xFFFFu)

SSE_TARGET static size_t
sse_to_ucs1(const uint8_t *s, size_t n, uint8_t *d)
{
    size_t i = 0, k = 0;
    for (; i + 19 <= n; i += 16) {
        __m128i in = _mm_loadu_si128((const __m128i *)(s + i));
        if (!_mm_movemask_epi8(in)) {
            _mm_storeu_si128((__m128i *)(d + k), in);
            k += 16;
            continue;
        }
        LEAD_LOOP(uint8_t, s + i, SSE_LEADS(in));
    }
    TAIL_LOOP(uint8_t)
    return k;
}

SSE_TARGET static size_t
sse_to_ucs2(const uint8_t *s, size_t n, uint16_t *d)
{
    size_t i = 0, k = 0;
    for (; i + 19 <= n; i += 16) {
        __m128i in = _mm_loadu_si128((const __m128i *)(s + i));
        if (!_mm_movemask_epi8(in)) {
            _mm_storeu_si128((__m128i *)(d + k), _mm_cvtepu8_epi16(in));
            _mm_storeu_si128((__m128i *)(d + k + 8),
                             _mm_cvtepu8_epi16(_mm_srli_si128(in, 8)));
            k += 16;
            continue;
        }
        LEAD_LOOP(uint16_t, s + i, SSE_LEADS(in));
    }
    TAIL_LOOP(uint16_t)
    return k;
}

SSE_TARGET static size_t
sse_to_ucs4(const uint8_t *s, size_t n, uint32_t *d)
{
    size_t i = 0, k = 0;
    for (; i + 19 <= n; i += 16) {
        __m128i in = _mm_loadu_si128((const __m128i *)(s + i));
        if (!_mm_movemask_epi8(in)) {
            _mm_storeu_si128((__m128i *)(d + k), _mm_cvtepu8_epi32(in));
            _mm_storeu_si128((__m128i *)(d + k + 4),
                             _mm_cvtepu8_epi32(_mm_srli_si128(in, 4)));
            _mm_storeu_si128((__m128i *)(d + k + 8),
                             _mm_cvtepu8_epi32(_mm_srli_si128(in, 8)));
            _mm_storeu_si128((__m128i *)(d + k + 12),
                             _mm_cvtepu8_epi32(_mm_srli_si128(in, 12)));
            k += 16;
            continue;
        }
        LEAD_LOOP(uint32_t, s + i, SSE_LEADS(in));
    }
    TAIL_LOOP(uint32_t)
    return k;
}

const u8p_dec_kernels u8p_dec_kernels_sse = {
    "sse", sse_scan, sse_to_ucs1, sse_to_ucs2, sse_to_ucs4, NULL, NULL,
};

/* ======================================================================
 * AVX2 (32-byte blocks)
 * ==================================================================== */

#define AVX2_TARGET __attribute__((target("avx2,popcnt")))

AVX2_TARGET static inline __m256i
prev_n(__m256i in, __m256i prev, int k)
{
    /* bytes [32-k .. 32) of prev followed by in[0 .. 32-k) */
    __m256i x = _mm256_permute2x128_si256(prev, in, 0x21);
    switch (k) {
    case 1:
        return _mm256_alignr_epi8(in, x, 15);
    case 2:
        return _mm256_alignr_epi8(in, x, 14);
    default:
        return _mm256_alignr_epi8(in, x, 13);
    }
}

AVX2_TARGET static u8p_dec_status
avx2_scan(const uint8_t *s, size_t n, int allow_surr, u8p_scan_result *res)
{
    const __m256i t1 = _mm256_setr_epi8(T1_ROW, T1_ROW);
    const __m256i t2 = _mm256_setr_epi8(T2_ROW, T2_ROW);
    const __m256i t3 = _mm256_setr_epi8(T3_ROW, T3_ROW);
    const __m256i nib = _mm256_set1_epi8(0x0F);
    const __m256i keep =
        _mm256_set1_epi8((char)(allow_surr ? ~E_SURROGATE : 0xFF));
    const __m256i maxv = _mm256_setr_epi8(
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
        -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, (char)0xEF, (char)0xDF,
        (char)0xBF);
    const __m256i cont_lim = _mm256_set1_epi8(-64);
    __m256i prev = _mm256_setzero_si256(), err = _mm256_setzero_si256();
    __m256i inc = _mm256_setzero_si256(), vmax = _mm256_setzero_si256();
    size_t i = 0, cont = 0;
    uint8_t buf[32], mx[32], maxb = 0;
    int j, last = 0, after_ascii = 1;

    if (n < 32)
        return (n < 16 ? u8p_dec_scan_scalar : sse_scan)(s, n, allow_surr, res);
    while (!last) {
        __m256i in;
        /* ASCII fast path: 128 bytes a step, tried only after an ASCII
         * block (so nothing is pending in inc); text dense in non-ASCII
         * would otherwise load every block twice */
        while (after_ascii && i + 128 <= n) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
            __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 32));
            __m256i c = _mm256_loadu_si256((const __m256i *)(s + i + 64));
            __m256i e = _mm256_loadu_si256((const __m256i *)(s + i + 96));
            __m256i o = _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, e));
            if (_mm256_movemask_epi8(o))
                break;
            prev = e;
            i += 128;
        }
        if (i + 32 <= n) {
            in = _mm256_loadu_si256((const __m256i *)(s + i));
            i += 32;
        }
        else {
            memset(buf, 0, sizeof buf);
            memcpy(buf, s + i, n - i);
            in = _mm256_loadu_si256((const __m256i *)buf);
            i = n;
        }
        if (i == n)
            last = 1;
        if (!_mm256_movemask_epi8(in)) {
            err = _mm256_or_si256(err, inc);
            inc = _mm256_setzero_si256();
            prev = in;
            after_ascii = 1;
            continue;
        }
        after_ascii = 0;
        {
            __m256i p1 = prev_n(in, prev, 1);
            __m256i p2 = prev_n(in, prev, 2);
            __m256i p3 = prev_n(in, prev, 3);
            __m256i sc = _mm256_and_si256(
                _mm256_and_si256(
                    _mm256_shuffle_epi8(
                        t1, _mm256_and_si256(_mm256_srli_epi16(p1, 4), nib)),
                    _mm256_shuffle_epi8(t2, _mm256_and_si256(p1, nib))),
                _mm256_shuffle_epi8(
                    t3, _mm256_and_si256(_mm256_srli_epi16(in, 4), nib)));
            __m256i m23 =
                _mm256_or_si256(_mm256_subs_epu8(p2, _mm256_set1_epi8(0x60)),
                                _mm256_subs_epu8(p3, _mm256_set1_epi8(0x70)));
            m23 = _mm256_and_si256(m23, _mm256_set1_epi8((char)0x80));
            sc = _mm256_and_si256(sc, keep);
            err = _mm256_or_si256(err, _mm256_xor_si256(sc, m23));
            inc = _mm256_subs_epu8(in, maxv);
            vmax = _mm256_max_epu8(vmax, in);
            cont += (size_t)__builtin_popcount((unsigned)_mm256_movemask_epi8(
                _mm256_cmpgt_epi8(cont_lim, in)));
            prev = in;
        }
    }
    err = _mm256_or_si256(err, inc);
    if (!_mm256_testz_si256(err, err))
        return u8p_dec_scan_scalar(s, n, allow_surr, res);
    _mm256_storeu_si256((__m256i *)mx, vmax);
    for (j = 0; j < 32; j++)
        if (mx[j] > maxb)
            maxb = mx[j];
    res->ncp = n - cont;
    res->maxchar = class_of_max(maxb);
    res->err_start = res->err_end = 0;
    return U8P_DEC_OK;
}

#define AVX2_LEADS(in)                                                        \
    (~(uint32_t)_mm256_movemask_epi8(                                         \
        _mm256_cmpgt_epi8(_mm256_set1_epi8(-64), (in))))

/*
 * Code point candidates for 16 positions of a block that has no 4-byte
 * sequence: lane j decodes the sequence that would start at byte j (garbage
 * where byte j is a continuation; those lanes are never copied).
 */
AVX2_TARGET static inline __m256i
avx2_cands16(const uint8_t *p)
{
    const __m256i x = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)p));
    const __m256i y = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(p + 1)));
    const __m256i z = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(p + 2)));
    const __m256i m3f = _mm256_set1_epi16(0x3F);
    __m256i y6 = _mm256_slli_epi16(_mm256_and_si256(y, m3f), 6);
    __m256i v2 = _mm256_or_si256(
        _mm256_slli_epi16(_mm256_and_si256(x, _mm256_set1_epi16(0x1F)), 6),
        _mm256_and_si256(y, m3f));
    __m256i v3 = _mm256_or_si256(
        _mm256_or_si256(_mm256_slli_epi16(x, 12), y6), _mm256_and_si256(z, m3f));
    __m256i is2 = _mm256_cmpgt_epi16(x, _mm256_set1_epi16(0xBF));
    __m256i is3 = _mm256_cmpgt_epi16(x, _mm256_set1_epi16(0xDF));
    return _mm256_blendv_epi8(_mm256_blendv_epi8(x, v2, is2), v3, is3);
}

/* Code point candidates for 8 positions, any sequence length (UCS4). */
AVX2_TARGET static inline __m256i
avx2_cands8(const uint8_t *p)
{
    const __m256i x = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
    const __m256i y = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p + 1)));
    const __m256i z = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p + 2)));
    const __m256i w = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p + 3)));
    const __m256i m3f = _mm256_set1_epi32(0x3F);
    __m256i y6 = _mm256_and_si256(y, m3f), z6 = _mm256_and_si256(z, m3f);
    __m256i v2 = _mm256_or_si256(
        _mm256_slli_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x1F)), 6), y6);
    __m256i v3 = _mm256_or_si256(
        _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x0F)), 12),
                        _mm256_slli_epi32(y6, 6)),
        z6);
    __m256i v4 = _mm256_or_si256(
        _mm256_or_si256(_mm256_slli_epi32(_mm256_and_si256(x, _mm256_set1_epi32(0x07)), 18),
                        _mm256_slli_epi32(y6, 12)),
        _mm256_or_si256(_mm256_slli_epi32(z6, 6), _mm256_and_si256(w, m3f)));
    __m256i r = _mm256_blendv_epi8(x, v2, _mm256_cmpgt_epi32(x, _mm256_set1_epi32(0xBF)));
    r = _mm256_blendv_epi8(r, v3, _mm256_cmpgt_epi32(x, _mm256_set1_epi32(0xDF)));
    return _mm256_blendv_epi8(r, v4, _mm256_cmpgt_epi32(x, _mm256_set1_epi32(0xEF)));
}

/*
 * Compaction tables: for a mask of the lanes that hold a lead byte, the
 * pshufb control that moves those lanes, in order, to the front of a
 * 128-bit register (8 lanes of 8 or 16 bits, 4 lanes of 32 bits).  Built
 * once, on first use; a racing second builder writes the same bytes.
 */
static uint8_t cmp8[256][16], cmp16[256][16], cmp32[16][16];
static volatile int cmp_ready;

static void
build_tables(void)
{
    unsigned m, j, k, b;
    for (m = 0; m < 256; m++) {
        memset(cmp8[m], 0x80, 16);
        memset(cmp16[m], 0x80, 16);
        for (j = 0, k = 0; j < 8; j++) {
            if (m & (1u << j)) {
                cmp8[m][k] = (uint8_t)j;
                cmp16[m][2 * k] = (uint8_t)(2 * j);
                cmp16[m][2 * k + 1] = (uint8_t)(2 * j + 1);
                k++;
            }
        }
    }
    for (m = 0; m < 16; m++) {
        memset(cmp32[m], 0x80, 16);
        for (j = 0, k = 0; j < 4; j++) {
            if (m & (1u << j)) {
                for (b = 0; b < 4; b++)
                    cmp32[m][4 * k + b] = (uint8_t)(4 * j + b);
                k++;
            }
        }
    }
    cmp_ready = 1;
}

/*
 * The compaction loops run while 64 bytes remain, so every group store
 * (8 or 4 lanes at d + k) lands inside the output: at least that many code
 * points still follow k (see the bounds in each function).
 */
#define EMIT(table, vec, mk, T, lanes)                                        \
    do {                                                                      \
        unsigned mk_ = (mk);                                                  \
        __m128i sh_ = _mm_loadu_si128((const __m128i *)table[mk_]);           \
        _mm_storeu_si128((__m128i *)(d + k), _mm_shuffle_epi8((vec), sh_));   \
        k += (size_t)__builtin_popcount(mk_);                                 \
    } while (0)

AVX2_TARGET static size_t
avx2_to_ucs1(const uint8_t *s, size_t n, uint8_t *d)
{
    size_t i = 0, k = 0;
    if (!cmp_ready)
        build_tables();
    /* bound: cps from a group start g on >= (n - g - 1) / 2 >= 8 bytes */
    for (; i + 64 <= n; i += 32) {
        __m256i in = _mm256_loadu_si256((const __m256i *)(s + i));
        uint32_t m;
        __m128i lo, hi;
        if (!_mm256_movemask_epi8(in)) {
            _mm256_storeu_si256((__m256i *)(d + k), in);
            k += 32;
            continue;
        }
        {
            __m256i a = avx2_cands16(s + i), b = avx2_cands16(s + i + 16);
            __m256i pk = _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8);
            lo = _mm256_castsi256_si128(pk);
            hi = _mm256_extracti128_si256(pk, 1);
        }
        m = AVX2_LEADS(in);
        /* 8-byte groups: shuffle then store 8 bytes */
#define EMIT8(vec, mk)                                                        \
    do {                                                                      \
        unsigned mk_ = (mk);                                                  \
        __m128i sh_ = _mm_loadu_si128((const __m128i *)cmp8[mk_]);            \
        _mm_storel_epi64((__m128i *)(d + k), _mm_shuffle_epi8((vec), sh_));   \
        k += (size_t)__builtin_popcount(mk_);                                 \
    } while (0)
        EMIT8(lo, m & 0xFF);
        EMIT8(_mm_srli_si128(lo, 8), (m >> 8) & 0xFF);
        EMIT8(hi, (m >> 16) & 0xFF);
        EMIT8(_mm_srli_si128(hi, 8), m >> 24);
#undef EMIT8
    }
    TAIL_LOOP(uint8_t)
    return k;
}

/* For UCS2 output a block never holds a 4-byte sequence (scan said so). */
AVX2_TARGET static size_t
avx2_to_ucs2(const uint8_t *s, size_t n, uint16_t *d)
{
    size_t i = 0, k = 0;
    if (!cmp_ready)
        build_tables();
    /* bound: cps from a group start g on >= (n - g - 2) / 3 >= 8 lanes */
    for (; i + 64 <= n; i += 32) {
        __m256i in = _mm256_loadu_si256((const __m256i *)(s + i));
        uint32_t m;
        __m256i a, b;
        if (!_mm256_movemask_epi8(in)) {
            _mm256_storeu_si256((__m256i *)(d + k),
                                _mm256_cvtepu8_epi16(_mm256_castsi256_si128(in)));
            _mm256_storeu_si256((__m256i *)(d + k + 16),
                                _mm256_cvtepu8_epi16(_mm256_extracti128_si256(in, 1)));
            k += 32;
            continue;
        }
        a = avx2_cands16(s + i);
        b = avx2_cands16(s + i + 16);
        m = AVX2_LEADS(in);
        EMIT(cmp16, _mm256_castsi256_si128(a), m & 0xFF, uint16_t, 8);
        EMIT(cmp16, _mm256_extracti128_si256(a, 1), (m >> 8) & 0xFF, uint16_t, 8);
        EMIT(cmp16, _mm256_castsi256_si128(b), (m >> 16) & 0xFF, uint16_t, 8);
        EMIT(cmp16, _mm256_extracti128_si256(b, 1), m >> 24, uint16_t, 8);
    }
    TAIL_LOOP(uint16_t)
    return k;
}

/*
 * UCS4 output is usually ASCII with a few astral code points (emoji) in it.
 * A block that is not all ASCII is widened to 32-bit lanes and compacted
 * (vpermd, 8 lanes a step) to drop its continuation bytes, which puts every
 * ASCII byte at its final place; the few lead lanes are then overwritten
 * with the code point decoded from the lead (its output index is the
 * number of kept bytes before it).  Only a block dense in leads, where the
 * patching would cost more, goes through the lane decoder.
 */
AVX2_TARGET static size_t
avx2_to_ucs4(const uint8_t *s, size_t n, uint32_t *d)
{
    size_t i = 0, k = 0;
    if (!cmp_ready)
        build_tables();
    /* bound: cps from a group start g on >= (n - g - 3) / 4 >= 8 lanes */
    for (; i + 64 <= n; i += 32) {
        __m256i in = _mm256_loadu_si256((const __m256i *)(s + i));
        uint32_t h = (uint32_t)_mm256_movemask_epi8(in), keep, leads;
        int g;
        if (!h) {
            __m128i lo = _mm256_castsi256_si128(in);
            __m128i hi = _mm256_extracti128_si256(in, 1);
            _mm256_storeu_si256((__m256i *)(d + k), _mm256_cvtepu8_epi32(lo));
            _mm256_storeu_si256((__m256i *)(d + k + 8),
                                _mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8)));
            _mm256_storeu_si256((__m256i *)(d + k + 16), _mm256_cvtepu8_epi32(hi));
            _mm256_storeu_si256((__m256i *)(d + k + 24),
                                _mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8)));
            k += 32;
            continue;
        }
        keep = AVX2_LEADS(in);
        leads = keep & h;
        if (__builtin_popcount(leads) > 6) {
            for (g = 0; g < 32; g += 8) {
                __m256i c = avx2_cands8(s + i + g);
                unsigned mg = (keep >> g) & 0xFF;
                EMIT(cmp32, _mm256_castsi256_si128(c), mg & 0xF, uint32_t, 4);
                EMIT(cmp32, _mm256_extracti128_si256(c, 1), mg >> 4, uint32_t, 4);
            }
            continue;
        }
        {
            size_t k0 = k;
            for (g = 0; g < 32; g += 8) {
                unsigned mg = (keep >> g) & 0xFF;
                __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(s + i + g)));
                __m256i ix = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)cmp8[mg]));
                _mm256_storeu_si256((__m256i *)(d + k), _mm256_permutevar8x32_epi32(v, ix));
                k += (size_t)__builtin_popcount(mg);
            }
            while (leads) {
                unsigned p = (unsigned)__builtin_ctz(leads);
                leads &= leads - 1;
                d[k0 + (size_t)__builtin_popcount(keep & ((1u << p) - 1))] = dec_at(s + i + p);
            }
        }
    }
    TAIL_LOOP(uint32_t)
    return k;
}

/*
 * Fused path for UCS1-class payloads (see decode.h).
 *
 * prescan: max byte and continuation count, 4 ops per 32 bytes; stops at
 * the first 128-byte step whose max reaches 0xC4 (scan() takes over).
 */
AVX2_TARGET static uint8_t
avx2_prescan(const uint8_t *s, size_t n, size_t *ncp)
{
    const __m256i lim = _mm256_set1_epi8(-64), c3 = _mm256_set1_epi8((char)0xC3);
    __m256i vmax = _mm256_setzero_si256();
    size_t i = 0, cont = 0;
    uint8_t mx[32], maxb = 0;
    int j;

    while (i + 128 <= n) {
        /* byte counters: at most 4 * 63 per lane before the flush */
        size_t stop = n - i > 128 * 63 ? i + 128 * 63 : n;
        __m256i cnt = _mm256_setzero_si256(), sum;
        for (; i + 128 <= stop; i += 128) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
            __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 32));
            __m256i c = _mm256_loadu_si256((const __m256i *)(s + i + 64));
            __m256i e = _mm256_loadu_si256((const __m256i *)(s + i + 96));
            vmax = _mm256_max_epu8(vmax, _mm256_max_epu8(_mm256_max_epu8(a, b),
                                                          _mm256_max_epu8(c, e)));
            cnt = _mm256_sub_epi8(cnt, _mm256_cmpgt_epi8(lim, a));
            cnt = _mm256_sub_epi8(cnt, _mm256_cmpgt_epi8(lim, b));
            cnt = _mm256_sub_epi8(cnt, _mm256_cmpgt_epi8(lim, c));
            cnt = _mm256_sub_epi8(cnt, _mm256_cmpgt_epi8(lim, e));
            if (!_mm256_testz_si256(_mm256_subs_epu8(vmax, c3), _mm256_subs_epu8(vmax, c3)))
                return 0xFF; /* some byte >= 0xC4 */
        }
        sum = _mm256_sad_epu8(cnt, _mm256_setzero_si256());
        cont += (size_t)_mm256_extract_epi64(sum, 0) + (size_t)_mm256_extract_epi64(sum, 1)
                + (size_t)_mm256_extract_epi64(sum, 2) + (size_t)_mm256_extract_epi64(sum, 3);
    }
    for (; i + 32 <= n; i += 32) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
        vmax = _mm256_max_epu8(vmax, a);
        cont += (size_t)__builtin_popcount(
            (unsigned)_mm256_movemask_epi8(_mm256_cmpgt_epi8(lim, a)));
    }
    for (; i < n; i++) {
        cont += (s[i] & 0xC0) == 0x80;
        if (s[i] > maxb)
            maxb = s[i];
    }
    _mm256_storeu_si256((__m256i *)mx, vmax);
    for (j = 0; j < 32; j++)
        if (mx[j] > maxb)
            maxb = mx[j];
    *ncp = n - cont;
    return maxb;
}

/*
 * One 32-byte block of UCS1-class UTF-8: in = the bytes, pv = the same
 * bytes shifted by one (pv[0] is the byte before the block, 0 at the
 * start).  Validation on the movemasks: H = bytes >= 0x80, C = continuation
 * bytes, L = C2/C3 bytes.  The block is valid iff every byte >= 0x80 that is
 * not a continuation is C2/C3 (H ^ C == L) and the continuations are exactly
 * the bytes after a lead ((L << 1) | carry == C); the lead in the last byte
 * carries into the next block.  The code unit of a 2-byte sequence sits on
 * its continuation byte: 80..BF after C2, + 0x40 after C3; leads are
 * squeezed out with the 8-lane compaction table.  Writes at most 32 bytes at
 * d; returns the number kept, or -1 when invalid.
 */
AVX2_TARGET static inline int
ucs1_block(__m256i in, __m256i pv, uint32_t *carry, uint8_t *d)
{
    uint32_t H = (uint32_t)_mm256_movemask_epi8(in);
    uint32_t C = (uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(_mm256_set1_epi8(-64), in));
    uint32_t L = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
        _mm256_and_si256(in, _mm256_set1_epi8((char)0xFE)), _mm256_set1_epi8((char)0xC2)));
    uint32_t keep = ~L;
    __m256i v;
    __m128i lo, hi;
    int k = 0;
    if ((H ^ C) != L || ((L << 1) | *carry) != C)
        return -1;
    *carry = L >> 31;
    v = _mm256_add_epi8(in, _mm256_and_si256(
                                _mm256_cmpeq_epi8(pv, _mm256_set1_epi8((char)0xC3)),
                                _mm256_set1_epi8(0x40)));
    lo = _mm256_castsi256_si128(v);
    hi = _mm256_extracti128_si256(v, 1);
#define EMIT8(vec, mk)                                                        \
    do {                                                                      \
        unsigned mk_ = (mk);                                                  \
        __m128i sh_ = _mm_loadu_si128((const __m128i *)cmp8[mk_]);            \
        _mm_storel_epi64((__m128i *)(d + k), _mm_shuffle_epi8((vec), sh_));   \
        k += __builtin_popcount(mk_);                                         \
    } while (0)
    EMIT8(lo, keep & 0xFF);
    EMIT8(_mm_srli_si128(lo, 8), (keep >> 8) & 0xFF);
    EMIT8(hi, (keep >> 16) & 0xFF);
    EMIT8(_mm_srli_si128(hi, 8), keep >> 24);
#undef EMIT8
    return k;
}

AVX2_TARGET static u8p_dec_status
avx2_to_ucs1_checked(const uint8_t *s, size_t n, uint8_t *d, size_t cap)
{
    size_t i = 0, k = 0;
    uint32_t carry = 0;
    if (!cmp_ready)
        build_tables();
    /* full blocks while 32 more units fit */
    while (i + 32 <= n && k + 32 <= cap) {
        __m256i in = _mm256_loadu_si256((const __m256i *)(s + i)), pv;
        int e;
        if (!_mm256_movemask_epi8(in) && !carry) {
            _mm256_storeu_si256((__m256i *)(d + k), in);
            i += 32;
            k += 32;
            continue;
        }
        pv = i ? _mm256_loadu_si256((const __m256i *)(s + i - 1))
               : prev_n(in, _mm256_setzero_si256(), 1);
        e = ucs1_block(in, pv, &carry, d + k);
        if (e < 0)
            return U8P_DEC_INVALID_START;
        i += 32;
        k += (size_t)e;
    }
    /* the rest: zero-padded blocks through a buffer, output bounded by cap */
    while (i < n) {
        uint8_t buf[33], out[32];
        size_t m = n - i < 32 ? n - i : 32;
        int e;
        memset(buf, 0, sizeof buf);
        buf[0] = i ? s[i - 1] : 0;
        memcpy(buf + 1, s + i, m);
        e = ucs1_block(_mm256_loadu_si256((const __m256i *)(buf + 1)),
                       _mm256_loadu_si256((const __m256i *)buf), &carry, out);
        if (e < 0)
            return U8P_DEC_INVALID_START;
        e -= (int)(32 - m); /* the zero padding kept one unit a byte */
        if ((size_t)e > cap - k)
            return U8P_DEC_INVALID_START;
        memcpy(d + k, out, (size_t)e);
        k += (size_t)e;
        i += m;
    }
    return carry || k != cap ? U8P_DEC_UNEXPECTED_END : U8P_DEC_OK;
}

const u8p_dec_kernels u8p_dec_kernels_avx2 = {
    "avx2",       avx2_scan,    avx2_to_ucs1,         avx2_to_ucs2,
    avx2_to_ucs4, avx2_prescan, avx2_to_ucs1_checked,
};

#endif /* __x86_64__ */
