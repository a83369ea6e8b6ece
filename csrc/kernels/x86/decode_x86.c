/*
 * x86-64 decode kernels: SSE4.1, AVX2 and AVX-512 (F + BW, and with VBMI2
 * an Intel and a mixed table, which differ in their short decoder only),
 * selected per function with target attributes so the file
 * builds with the project's common flags.  The scan and the transcoders are
 * written once, in decode_x86_impl.h, over the vector operations of
 * x86_vec.h, and instantiated here once per width; what differs between
 * widths is only how lanes are compacted (the emit functions below: pshufb
 * tables per 128-bit lane, vpermd at AVX2, vpcompress at AVX-512).
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
 * transcode: a block of one vector that is all ASCII is widened and stored;
 * otherwise every position gets the code point of the sequence that would
 * start there ("candidates", computed on 16- or 32-bit lanes from shifted
 * loads), and the lanes of lead (non-continuation) bytes are compacted into
 * the output.  UCS1 output needs no candidates: its code unit sits on the
 * last byte of the sequence.  UCS4 blocks with few leads compact the
 * widened bytes and patch the lead lanes with a branch-free decode of one
 * sequence from a big-endian 4-byte load (dec_at); blocks with more widen
 * 16-bit candidates (half the operations of 32-bit ones) and patch only
 * their 4-byte sequences, which 16 bits cannot hold, that way; blocks dense
 * in 4-byte sequences take 32-bit candidates.  Sequences that straddle a block
 * are decoded where their lead is; the block loops stop early enough that
 * every load stays inside the payload and every store inside the output.
 * The UCS1 and UCS2 transcoders then run their block step once or twice
 * more on a zero-padded copy of what is left (from 16 bytes); the scan,
 * UCS4 and shorter rests go to the next narrower width, and finally to a
 * scalar tail.
 */
#include "x86_internal.h"

#if U8P_X86_SIMD

#include <immintrin.h>
#include <string.h>

#include "../decode.h"
#include "../decode_short.h"
#include "../generic/decode_inl.h"
#include "x86_vec.h"

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

/* the nibble tables as 16-byte rows, and the per-byte "longest sequence
 * that may start here" limits of a vector's last 3 bytes (any width reads
 * its last W bytes) */
static const uint8_t dec_t1[16] = {T1_ROW};
static const uint8_t dec_t2[16] = {T2_ROW};
static const uint8_t dec_t3[16] = {T3_ROW};
static const uint8_t dec_maxv[64] = {
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xEF, 0xDF, 0xBF,
};

/* scalar tails shared by every width: start at a lead or at continuation
 * bytes of a sequence already decoded by a block loop */
#define DEFINE_TAIL(name, T)                                                  \
    static size_t name(const uint8_t *s, size_t n, T *d)                      \
    {                                                                         \
        size_t i = 0, k = 0;                                                  \
        while (i < n && (s[i] & 0xC0) == 0x80)                                \
            i++;                                                              \
        while (i < n) {                                                       \
            size_t len_;                                                      \
            d[k++] = (T)u8p_decode_one(s + i, &len_);                         \
            i += len_;                                                        \
        }                                                                     \
        return k;                                                             \
    }
DEFINE_TAIL(dec_tail_to_ucs1, uint8_t)
DEFINE_TAIL(dec_tail_to_ucs2, uint16_t)
DEFINE_TAIL(dec_tail_to_ucs4, uint32_t)

/* n bytes from s to d (a short payload's few dozen, a transcoder's tail, or
 * their code units), neither passed (overlapping moves) */
static inline void
copy_small(uint8_t *d, const uint8_t *s, size_t n)
{
    uint64_t a, b;
    uint32_t x, y;
    size_t i;
    if (n >= 16) {
        for (i = 0; i + 16 < n; i += 16)
            memcpy(d + i, s + i, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    }
    else if (n >= 8) {
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    }
    else if (n >= 4) {
        memcpy(&x, s, 4);
        memcpy(&y, s + n - 4, 4);
        memcpy(d, &x, 4);
        memcpy(d + n - 4, &y, 4);
    }
    else
        for (i = 0; i < n; i++)
            d[i] = s[i];
}

/*
 * Compaction tables: for a mask of the lanes to keep, the pshufb control
 * that moves those lanes, in order, to the front of a 128-bit register (8
 * lanes of 8 or 16 bits, 4 lanes of 32 bits).  Built once, on first use
 * (u8p_dec_tables_init); a racing second builder writes the same bytes.
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

#define TABLES_READY()                                                        \
    do {                                                                      \
        if (!cmp_ready)                                                       \
            build_tables();                                                   \
    } while (0)

/* ------------------------------------------------------------------------
 * Compaction, per width: the lanes of v selected by m, in order, to d;
 * returns their count.  A 128-bit lane at a time with the tables above
 * (8-byte or 16-byte stores), vpermd for 32-bit lanes at AVX2, and
 * vpcompress at AVX-512 (compressd is AVX-512 F; compressb/w need VBMI2).
 * --------------------------------------------------------------------- */

#define T_SSE __attribute__((target("sse4.1,popcnt")))
#define T_AVX2 __attribute__((target("avx2,popcnt")))
#define T_AVX512 __attribute__((target("avx512f,avx512bw,avx2,popcnt")))
#define T_VBMI2 __attribute__((target("avx512f,avx512bw,avx512vbmi2,avx2,popcnt")))

/* 16 bytes, m: 16 bits */
T_SSE static inline size_t
emitb_128(uint8_t *d, __m128i v, unsigned m)
{
    unsigned m0 = m & 0xFF, m1 = (m >> 8) & 0xFF;
    size_t n0 = (size_t)__builtin_popcount(m0);
    _mm_storel_epi64((__m128i *)d, _mm_shuffle_epi8(v, _mm_loadu_si128((const __m128i *)cmp8[m0])));
    _mm_storel_epi64((__m128i *)(d + n0),
                     _mm_shuffle_epi8(_mm_srli_si128(v, 8), _mm_loadu_si128((const __m128i *)cmp8[m1])));
    return n0 + (size_t)__builtin_popcount(m1);
}

/* 8 16-bit lanes, m: 8 bits */
T_SSE static inline size_t
emit16_128(uint16_t *d, __m128i v, unsigned m)
{
    _mm_storeu_si128((__m128i *)d, _mm_shuffle_epi8(v, _mm_loadu_si128((const __m128i *)cmp16[m])));
    return (size_t)__builtin_popcount(m);
}

/* 4 32-bit lanes, m: 4 bits */
T_SSE static inline size_t
emit32_128(uint32_t *d, __m128i v, unsigned m)
{
    _mm_storeu_si128((__m128i *)d, _mm_shuffle_epi8(v, _mm_loadu_si128((const __m128i *)cmp32[m])));
    return (size_t)__builtin_popcount(m);
}

T_AVX2 static inline size_t
emitb_256(uint8_t *d, __m256i v, uint64_t m)
{
    size_t k = emitb_128(d, _mm256_castsi256_si128(v), (unsigned)m & 0xFFFF);
    return k + emitb_128(d + k, _mm256_extracti128_si256(v, 1), (unsigned)(m >> 16) & 0xFFFF);
}

T_AVX2 static inline size_t
emit16_256(uint16_t *d, __m256i v, uint64_t m)
{
    size_t k = emit16_128(d, _mm256_castsi256_si128(v), (unsigned)m & 0xFF);
    return k + emit16_128(d + k, _mm256_extracti128_si256(v, 1), (unsigned)(m >> 8) & 0xFF);
}

/* 8 32-bit lanes in one vpermd, its indices widened from the byte table */
T_AVX2 static inline size_t
emit32_256(uint32_t *d, __m256i v, uint64_t m)
{
    __m256i ix = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)cmp8[m & 0xFF]));
    _mm256_storeu_si256((__m256i *)d, _mm256_permutevar8x32_epi32(v, ix));
    return (size_t)__builtin_popcountll(m);
}

T_AVX512 static inline size_t
emitb_512(uint8_t *d, __m512i v, uint64_t m)
{
    size_t k = emitb_256(d, _mm512_castsi512_si256(v), m & 0xFFFFFFFFu);
    return k + emitb_256(d + k, _mm512_extracti64x4_epi64(v, 1), m >> 32);
}

T_AVX512 static inline size_t
emit16_512(uint16_t *d, __m512i v, uint64_t m)
{
    size_t k = emit16_256(d, _mm512_castsi512_si256(v), m & 0xFFFF);
    return k + emit16_256(d + k, _mm512_extracti64x4_epi64(v, 1), (m >> 16) & 0xFFFF);
}

/* vpcompressd (register form, then a store: the memory form is microcoded
 * and slow on some AVX-512 CPUs) */
T_AVX512 static inline size_t
emit32_512(uint32_t *d, __m512i v, uint64_t m)
{
    _mm512_storeu_si512(d, _mm512_maskz_compress_epi32((__mmask16)m, v));
    return (size_t)__builtin_popcountll(m);
}

T_VBMI2 static inline size_t
emitb_512vbmi2(uint8_t *d, __m512i v, uint64_t m)
{
    _mm512_storeu_si512(d, _mm512_maskz_compress_epi8((__mmask64)m, v));
    return (size_t)__builtin_popcountll(m);
}

/* 32 lanes: the store is masked to the lanes kept (a full one could pass
 * the end of the output) */
T_VBMI2 static inline size_t
emit16_512vbmi2(uint16_t *d, __m512i v, uint64_t m)
{
    size_t c = (size_t)__builtin_popcountll(m);
    _mm512_mask_storeu_epi16(d, (__mmask32)(((uint64_t)1 << c) - 1),
                             _mm512_maskz_compress_epi16((__mmask32)m, v));
    return c;
}

/* ------------------------------------------------------------------------
 * The instantiations, narrowest first (each hands short rests to the one
 * before it).
 * --------------------------------------------------------------------- */

#define U8P_VP u8p_v16_
#define U8P_DN sse_
#define U8P_DT T_SSE
#define DEC_EMITB(d, v, m) emitb_128((d), (v), (unsigned)(m))
#define DEC_EMIT16(d, v, m) emit16_128((d), (v), (unsigned)(m))
#define DEC_EMIT32(d, v, m) emit32_128((d), (v), (unsigned)(m))
#define DEC_NARROW(x) U8P_CAT(sse_, x) /* not reached: scalar below 16 bytes */
#define DEC_NARROW_END 0
#define DEC_SCAN_MIN 16
#include "decode_x86_impl.h"

#define U8P_VP u8p_v32_
#define U8P_DN avx2_
#define U8P_DT T_AVX2
#define DEC_EMITB emitb_256
#define DEC_EMIT16 emit16_256
#define DEC_EMIT32 emit32_256
#define DEC_NARROW(x) U8P_CAT(sse_, x)
#define DEC_NARROW_END 48
#define DEC_SCAN_MIN 32
#include "decode_x86_impl.h"

/* payloads under 64 bytes take AVX2's path (scan and transcode) exactly,
 * so short strings are never slower than at the AVX2 level; from 64 bytes
 * on the 512-bit scan (its last block a masked load) */
#define U8P_VP u8p_v64_
#define U8P_DN avx512_
#define U8P_DT T_AVX512
#define DEC_EMITB emitb_512
#define DEC_EMIT16 emit16_512
#define DEC_EMIT32 emit32_512
#define DEC_NARROW(x) U8P_CAT(avx2_, x)
#define DEC_NARROW_END 48
#define DEC_SCAN_MIN 64
#define DEC_MASKED_TAIL32 1 /* avx512_to_ucs4's short payloads and rest */
#include "decode_x86_impl.h"

#define U8P_VP u8p_v64_
#define U8P_DN vbmi2_
#define U8P_DT T_VBMI2
#define DEC_EMITB emitb_512vbmi2
#define DEC_EMIT16 emit16_512vbmi2
#define DEC_EMIT32 emit32_512
#define DEC_NARROW(x) U8P_CAT(avx2_, x)
#define DEC_NARROW_END 48
#define DEC_SCAN_MIN 64
#define DEC_SCAN_AND_UCS4 0 /* avx512_scan, avx512_to_ucs4: nothing to compress */
#define DEC_MASKED_TAIL16 1 /* emit16_512vbmi2 stores exactly the lanes kept */
#include "decode_x86_impl.h"


/*
 * Fused path for UCS1-class payloads (see decode.h).
 *
 * prescan: max byte and continuation count, 4 ops per 32 bytes; stops at
 * the first 128-byte step whose max reaches 0xC4 (scan() takes over).
 */
T_AVX2 static uint8_t
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
    if (i < n && n >= 32) {
        /* the last n - i bytes: the top of the 32 that end at n (the max
         * may see bytes twice; the count takes the top bits only) -- no
         * loop of a branch per byte */
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + n - 32));
        vmax = _mm256_max_epu8(vmax, a);
        cont += (size_t)__builtin_popcount(
            (unsigned)_mm256_movemask_epi8(_mm256_cmpgt_epi8(lim, a)) >> (32 - (n - i)));
        i = n;
    }
    /* another script stops here, without the reduction below */
    if (!_mm256_testz_si256(_mm256_subs_epu8(vmax, c3), _mm256_subs_epu8(vmax, c3)))
        return 0xFF;
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
T_AVX2 static inline int
ucs1_block(__m256i in, __m256i pv, uint32_t *carry, uint8_t *d)
{
    uint32_t H = (uint32_t)_mm256_movemask_epi8(in);
    uint32_t C = (uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(_mm256_set1_epi8(-64), in));
    uint32_t L = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
        _mm256_and_si256(in, _mm256_set1_epi8((char)0xFE)), _mm256_set1_epi8((char)0xC2)));
    uint32_t keep = ~L;
    __m256i v;
    if ((H ^ C) != L || ((L << 1) | *carry) != C)
        return -1;
    *carry = L >> 31;
    v = _mm256_add_epi8(in, _mm256_and_si256(
                                _mm256_cmpeq_epi8(pv, _mm256_set1_epi8((char)0xC3)),
                                _mm256_set1_epi8(0x40)));
    return (int)emitb_256(d, v, keep);
}

T_AVX2 static u8p_dec_status
avx2_to_ucs1_checked(const uint8_t *s, size_t n, uint8_t *d, size_t cap, size_t *got)
{
    size_t i = 0, k = 0;
    uint32_t carry = 0;
    TABLES_READY();
    /* full blocks while 32 more units fit */
    while (i + 32 <= n && k + 32 <= cap) {
        __m256i in = _mm256_loadu_si256((const __m256i *)(s + i)), pv;
        int e;
        if (!carry && !_mm256_movemask_epi8(in)) {
            /* a run of ASCII blocks in a loop of its own: written as one
             * loop with the other blocks, gcc split its test and its store
             * apart, and the loop's speed then depended on where the
             * linker put it */
            do {
                _mm256_storeu_si256((__m256i *)(d + k), in);
                i += 32;
                k += 32;
                if (i + 32 > n || k + 32 > cap)
                    break;
                in = _mm256_loadu_si256((const __m256i *)(s + i));
            } while (!_mm256_movemask_epi8(in));
            continue;
        }
        pv = i ? _mm256_loadu_si256((const __m256i *)(s + i - 1))
               : u8p_v32_prev1(in, _mm256_setzero_si256());
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
    if (carry)
        return U8P_DEC_UNEXPECTED_END;
    *got = k;
    return U8P_DEC_OK;
}

/*
 * The same two in AVX-512: 64 bytes a step, the masks straight from the
 * compares (no movemask), the tail one masked load (no bytes read past n,
 * zeros in the rest: ASCII, counted as neither continuation nor lead).
 */
T_AVX512 static inline uint8_t
max_byte_512(__m512i v)
{
    __m256i a = _mm256_max_epu8(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
    __m128i b = _mm_max_epu8(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1));
    b = _mm_max_epu8(b, _mm_srli_si128(b, 8));
    b = _mm_max_epu8(b, _mm_srli_si128(b, 4));
    b = _mm_max_epu8(b, _mm_srli_si128(b, 2));
    b = _mm_max_epu8(b, _mm_srli_si128(b, 1));
    return (uint8_t)_mm_cvtsi128_si32(b);
}

T_AVX512 static uint8_t
avx512_prescan(const uint8_t *s, size_t n, size_t *ncp)
{
    const __m512i lim = _mm512_set1_epi8(-64), c4 = _mm512_set1_epi8((char)0xC4);
    __m512i vmax = _mm512_setzero_si512();
    size_t i = 0, cont = 0;

    /* 0x80..0xBF are the signed bytes below -64 */
    for (; i + 256 <= n; i += 256) {
        const __m512i a = _mm512_loadu_si512(s + i), b = _mm512_loadu_si512(s + i + 64);
        const __m512i c = _mm512_loadu_si512(s + i + 128), e = _mm512_loadu_si512(s + i + 192);
        vmax = _mm512_max_epu8(vmax, _mm512_max_epu8(_mm512_max_epu8(a, b), _mm512_max_epu8(c, e)));
        cont += (size_t)__builtin_popcountll(_mm512_cmplt_epi8_mask(a, lim))
                + (size_t)__builtin_popcountll(_mm512_cmplt_epi8_mask(b, lim))
                + (size_t)__builtin_popcountll(_mm512_cmplt_epi8_mask(c, lim))
                + (size_t)__builtin_popcountll(_mm512_cmplt_epi8_mask(e, lim));
        if (_mm512_cmpge_epu8_mask(vmax, c4))
            return 0xFF; /* some byte >= 0xC4 */
    }
    for (; i < n; i += 64) {
        const __m512i a = n - i >= 64 ? _mm512_loadu_si512(s + i)
                                      : _mm512_maskz_loadu_epi8(u8p_low_bits64(n - i), s + i);
        vmax = _mm512_max_epu8(vmax, a);
        cont += (size_t)__builtin_popcountll(_mm512_cmplt_epi8_mask(a, lim));
    }
    /* every byte was read (below 256): 0xEF tells a caller there is no
     * byte F0..FF either (the reader's one-pass decoder for the payloads
     * past the short ones takes up to 3-byte sequences only), in a mask
     * test, cheaper than the largest byte */
    if (_mm512_cmpge_epu8_mask(vmax, c4))
        return _mm512_cmpge_epu8_mask(vmax, _mm512_set1_epi8((char)0xF0)) ? 0xFF : 0xEF;
    *ncp = n - cont;
    return max_byte_512(vmax);
}

/* ucs1_block's checks on 64 bytes: H, C, L as there, L3 = the C3 bytes;
 * the unit of a C3 sequence is its continuation + 0x40.  Returns the
 * units kept (compressed to the front of *out), or -1 when invalid. */
T_VBMI2 static inline int
ucs1_block_512(__m512i in, uint64_t *carry, uint64_t *carry3, __m512i *out)
{
    const uint64_t H = _mm512_movepi8_mask(in);
    const uint64_t C = _mm512_cmplt_epi8_mask(in, _mm512_set1_epi8(-64));
    const uint64_t L = _mm512_cmpeq_epi8_mask(_mm512_and_si512(in, _mm512_set1_epi8((char)0xFE)),
                                              _mm512_set1_epi8((char)0xC2));
    const uint64_t L3 = _mm512_cmpeq_epi8_mask(in, _mm512_set1_epi8((char)0xC3));
    if ((H ^ C) != L || ((L << 1) | *carry) != C)
        return -1;
    *out = _mm512_maskz_compress_epi8(
        ~L, _mm512_mask_add_epi8(in, (L3 << 1) | *carry3, in, _mm512_set1_epi8(0x40)));
    *carry = L >> 63;
    *carry3 = L3 >> 63;
    return 64 - __builtin_popcountll(L);
}

T_VBMI2 static u8p_dec_status
vbmi2_to_ucs1_checked(const uint8_t *s, size_t n, uint8_t *d, size_t cap, size_t *got)
{
    size_t i = 0, k = 0;
    uint64_t carry = 0, carry3 = 0;
    __m512i out;
    int e;
    /* whole stores while 64 more units fit */
    while (i + 64 <= n && k + 64 <= cap) {
        const __m512i in = _mm512_loadu_si512(s + i);
        if (!_mm512_movepi8_mask(in) && !carry) {
            _mm512_storeu_si512(d + k, in);
            i += 64;
            k += 64;
            continue;
        }
        e = ucs1_block_512(in, &carry, &carry3, &out);
        if (e < 0)
            return U8P_DEC_INVALID_START;
        _mm512_storeu_si512(d + k, out);
        i += 64;
        k += (size_t)e;
    }
    /* the rest: masked loads (the padding zeros are kept as units, and
     * not counted) and stores bounded by cap */
    while (i < n) {
        const size_t m = n - i < 64 ? n - i : 64;
        e = ucs1_block_512(_mm512_maskz_loadu_epi8(u8p_low_bits64(m), s + i), &carry, &carry3,
                           &out);
        if (e < 0)
            return U8P_DEC_INVALID_START;
        e -= (int)(64 - m);
        if ((size_t)e > cap - k)
            return U8P_DEC_INVALID_START;
        _mm512_mask_storeu_epi8(d + k, u8p_low_bits64((size_t)e), out);
        k += (size_t)e;
        i += m;
    }
    if (carry)
        return U8P_DEC_UNEXPECTED_END;
    *got = k;
    return U8P_DEC_OK;
}

/*
 * The reader's one-pass short decoder (decode_short.h has the contract and
 * the scalar loop) in AVX-512 VBMI: no branch per byte, so mixed scripts
 * cost no mispredictions.  The whole payload (<= 64 bytes) is one masked
 * load; masks of its bytes give the leads (not 10xxxxxx) and their lengths
 * (by lead range), and the structure is valid exactly when the bytes after
 * each lead that its length asks for are all there and are the
 * continuation bytes, no more, no fewer.  Then, 16 code points at a time:
 * the leads' positions (compressed from an index vector) gather each
 * sequence's 4 bytes into a 32-bit lane (vpermb), the lead's leading ones
 * (lzcnt of its complement) give the length, and two multiply-adds
 * assemble the payload bits, shifted down by the bytes the lane did not
 * use.  What the structure check cannot see is in the values: overlong
 * forms (below the least value of their length), surrogates and values
 * above U+10FFFF.  The count and the class come from the masks, so the
 * room is asked for (decode.h, u8p_dec_alloc) before the values are made,
 * and each group goes into it in its width: one byte permute, one masked
 * store.  Returns -1 for anything the strict codec refuses, -2 when the
 * room was not given.
 */
#define T_VBMI __attribute__((target("avx512f,avx512bw,avx512cd,avx512vbmi,avx512vbmi2,avx2,popcnt")))

T_VBMI static ptrdiff_t
vbmi_dec_short(const uint8_t *s, size_t n, size_t avail, u8p_dec_alloc alloc, void *ctx)
{
    (void)avail; /* the masked load reads the payload only */
    const uint64_t live = u8p_low_bits64(n);
    const __m512i b = _mm512_maskz_loadu_epi8(live, s);
    uint64_t hi = _mm512_movepi8_mask(b) & live, cont, lead, l2, l3, l4, ge_e0, ge_f0, req;
    __m512i pos, iota, spread, step;
    /* by the count of leading ones of the lead (0, 2, 3, 4; 5.. are
     * F8..FF, refused by the masks first): the lead's payload bits, the
     * shift that drops the unused bytes, the least value of the length */
    const __m512i lead_mask = _mm512_setr_epi32(0x3F3F3F7F, 0, 0x3F3F3F1F, 0x3F3F3F0F, 0x3F3F3F07,
                                                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i shift = _mm512_setr_epi32(18, 0, 12, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i least = _mm512_setr_epi32(0, 0, 0x80, 0x800, 0x10000, 0, 0, 0, 0, 0, 0, 0, 0,
                                            0, 0, 0);
    /* a lane's code point -> its bytes in the output width: 1 (bytes 0, 4,
     * .. 60 to 0..15), 2 (bytes 0, 1, 4, 5, .. to 0..31), 4 (iota) */
    const __m512i narrow1 = _mm512_setr_epi32(0x0C080400, 0x1C181410, 0x2C282420, 0x3C383430,
                                              0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i narrow2 = _mm512_setr_epi32(0x05040100, 0x0D0C0908, 0x15141110, 0x1D1C1918,
                                              0x25242120, 0x2D2C2928, 0x35343130, 0x3D3C3938,
                                              0, 0, 0, 0, 0, 0, 0, 0);
    __m512i narrow;
    unsigned bad = 0;
    size_t k, g, w;
    uint32_t maxcp;
    uint8_t *d;

    if (!hi) { /* ASCII (the reader takes most of these inline) */
        d = (uint8_t *)alloc(ctx, n, 0x7F);
        if (d == NULL)
            return -2;
        _mm512_mask_storeu_epi8(d, live, b);
        return (ptrdiff_t)n;
    }
    cont = _mm512_cmpeq_epi8_mask(_mm512_and_si512(b, _mm512_set1_epi8((char)0xC0)),
                                  _mm512_set1_epi8((char)0x80)) & live;
    lead = live & ~cont;
    ge_e0 = _mm512_cmpge_epu8_mask(b, _mm512_set1_epi8((char)0xE0));
    ge_f0 = _mm512_cmpge_epu8_mask(b, _mm512_set1_epi8((char)0xF0));
    if (lead & _mm512_cmpge_epu8_mask(b, _mm512_set1_epi8((char)0xF5)))
        return -1; /* F5..FF: no such lead */
    l2 = lead & hi & ~ge_e0; /* C0..DF (C0, C1: overlong, found by value) */
    l3 = lead & ge_e0 & ~ge_f0;
    l4 = lead & ge_f0;
    /* every sequence whole within the payload, then exactly its
     * continuation bytes where they must be */
    if ((l2 | l3 | l4) & ~(live >> 1) || (l3 | l4) & ~(live >> 2) || l4 & ~(live >> 3))
        return -1;
    req = (l2 | l3 | l4) << 1 | (l3 | l4) << 2 | l4 << 3;
    if (req != cont)
        return -1;

    k = (size_t)__builtin_popcountll(lead);
    maxcp = l4 ? 0x10FFFF
            : (l3 | (lead & _mm512_cmpge_epu8_mask(b, _mm512_set1_epi8((char)0xC4)))) ? 0xFFFF
                                                                                    : 0xFF;
    d = (uint8_t *)alloc(ctx, k, maxcp);
    if (d == NULL)
        return -2;
    iota = _mm512_setr_epi32(0x03020100, 0x07060504, 0x0B0A0908, 0x0F0E0D0C, 0x13121110,
                             0x17161514, 0x1B1A1918, 0x1F1E1D1C, 0x23222120, 0x27262524,
                             0x2B2A2928, 0x2F2E2D2C, 0x33323130, 0x37363534, 0x3B3A3938,
                             0x3F3E3D3C);
    w = maxcp == 0x10FFFF ? 4 : maxcp == 0xFFFF ? 2 : 1;
    narrow = w == 4 ? iota : w == 2 ? narrow2 : narrow1;
    pos = _mm512_maskz_compress_epi8(lead, iota); /* byte j: where lead j is */
    /* lane i of a group gets bytes pos[i] + 0..3 */
    spread = _mm512_setr_epi32(0x00000000, 0x01010101, 0x02020202, 0x03030303, 0x04040404,
                               0x05050505, 0x06060606, 0x07070707, 0x08080808, 0x09090909,
                               0x0A0A0A0A, 0x0B0B0B0B, 0x0C0C0C0C, 0x0D0D0D0D, 0x0E0E0E0E,
                               0x0F0F0F0F);
    step = _mm512_set1_epi32(0x03020100);
    for (g = 0; g < k; g += 16) {
        __mmask16 lanes = (__mmask16)u8p_low_bits64(k - g < 16 ? k - g : 16);
        __m512i at = _mm512_add_epi8(_mm512_permutexvar_epi8(spread, pos), step);
        __m512i x = _mm512_permutexvar_epi8(at, b); /* [lead, b1, b2, b3] */
        /* leading ones of the lead byte: 0 ASCII, else the length */
        __m512i ones = _mm512_lzcnt_epi32(
            _mm512_xor_si512(_mm512_slli_epi32(x, 24), _mm512_set1_epi32(-1)));
        __m512i z = _mm512_and_si512(x, _mm512_permutexvar_epi32(ones, lead_mask));
        /* [b0, b1, b2, b3] -> b0 << 18 | b1 << 12 | b2 << 6 | b3 */
        __m512i y = _mm512_madd_epi16(
            _mm512_maddubs_epi16(z, _mm512_set1_epi16(0x0140)), _mm512_set1_epi32(0x00011000));
        __m512i v = _mm512_srlv_epi32(y, _mm512_permutexvar_epi32(ones, shift));
        __mmask16 e = lanes & (__mmask16)~_mm512_mask_cmpge_epu32_mask(
                                  lanes, v, _mm512_permutexvar_epi32(ones, least));
        e |= _mm512_mask_cmpeq_epi32_mask(
            lanes, _mm512_and_si512(v, _mm512_set1_epi32((int)0xFFFFF800u)),
            _mm512_set1_epi32(0xD800));
        e |= _mm512_mask_cmpge_epu32_mask(lanes, v, _mm512_set1_epi32(0x110000));
        bad |= e;
        _mm512_mask_storeu_epi8(d + g * w, u8p_low_bits64((k - g < 16 ? k - g : 16) * w),
                                _mm512_permutexvar_epi8(narrow, v));
        spread = _mm512_add_epi8(spread, _mm512_set1_epi8(16));
    }
    return bad ? -1 : (ptrdiff_t)k;
}

/*
 * The reader's one-pass short decoder (decode_short.h has the contract and
 * the scalar loop) in AVX2, for the CPUs without VBMI.  The scalar loop
 * branches on every lead's length, and mixed-script names mispredict there
 * several times per payload; here the work per payload does not depend on
 * its bytes.  The loads read up to SHORT_READ bytes from the payload's
 * start, past its end into the caller's buffer (avail), and take nothing
 * from there; a payload too near the buffer's end is copied to a zeroed
 * stack block first.  Masks of its bytes give the leads (not 10xxxxxx)
 * and their lengths, and the structure is valid exactly when the
 * continuation bytes are the ones the leads ask for, all inside the
 * payload; the lead bytes C0, C1, E0 + 80..9F (overlong) and ED + A0..BF
 * (surrogate) are refused from the masks too, so every value made is
 * valid and none is checked.  The count and
 * the class come from the masks.  Then 16 positions at a time: each
 * 16-bit lane gets the code point of a sequence of one, two or three bytes
 * that would start there (from loads at +0, +1, +2), and the lanes of
 * leads are compacted (pshufb tables) into a stack block; a UCS1 payload
 * (leads C2 and C3 only) makes its code points in bytes, one lane per
 * byte.  Only then is the room asked for and the block copied into it: the
 * call comes last, so few values live across it (fewer registers saved
 * and restored by the frame, no vector spilled).  A payload
 * with a byte F0..FF (a 4-byte sequence, or no UTF-8 at all) takes a
 * path of its own in 32-bit lanes (avx2_dec_short4, after this one) from
 * SHORT4_MIN bytes on, so the 16-bit lanes of the rest pay nothing for it.
 */


/* the short decoder's constants, as memory operands (x86_consts.c says
 * why they are not set1s) */
#define SK(name) _mm256_load_si256((const __m256i *)(const void *)&u8p_x86_k[U8P_K_##name])

/* bytes from the payload's start the loads below read: 64 for the masks,
 * 2 + 16 past the last step's start (48) for the sequences */
#define SHORT_READ 66

/* 64 bits: the bytes of the block where f (a byte compare) holds */
#define SHORT_MASK(f) \
    ((uint64_t)(uint32_t)_mm256_movemask_epi8(f(v0)) | \
     (two ? (uint64_t)(uint32_t)_mm256_movemask_epi8(f(v1)) << 32 : 0))

/* Where a short decoder's loads read (its first 64 bytes in *v0, and in
 * *v1 when two): the payload itself, or, when the caller's buffer ends
 * fewer than need (<= 96) bytes after its start, a copy of it in buf (96
 * bytes, 32-aligned), zeros after it. */
T_AVX2 U8P_ALWAYS_INLINE const uint8_t *
short_src(const uint8_t *s, size_t n, size_t avail, size_t need, uint8_t *buf, const int two,
          __m256i *v0, __m256i *v1)
{
    const uint8_t *b = s;
    if (avail < need) {
        _mm256_store_si256((__m256i *)buf, _mm256_setzero_si256());
        _mm256_store_si256((__m256i *)(buf + 32), _mm256_setzero_si256());
        _mm256_store_si256((__m256i *)(buf + 64), _mm256_setzero_si256());
        copy_small(buf, s, n);
        b = buf;
    }
    *v0 = _mm256_loadu_si256((const __m256i *)b);
    *v1 = two ? _mm256_loadu_si256((const __m256i *)(b + 32)) : _mm256_setzero_si256();
    return b;
}

/* Payloads with a byte F0..FF shorter than this stay with the caller's
 * inline loop (the C harness's only: the reader calls from this length
 * on).  The 32-bit lane form takes the loop's time at 8 to 12 bytes and a
 * little more at 6 to 8, but sending a payload back to the loop costs this
 * call and its test on top of the loop's own time. */
#define SHORT4_MIN U8P_DEC_SHORT_VEC_MIN
T_AVX2 U8P_APART ptrdiff_t avx2_dec_short4(const uint8_t *s, size_t n, size_t avail,
                                           u8p_dec_alloc alloc, void *ctx);

/* two: the payload passes 32 bytes (a name's payload pays for one vector
 * of masks); avx2_dec_short holds an instance for each value.  vbmi4:
 * payloads with a byte F0..FF go to the VBMI decoder (the mixed table),
 * not to avx2_dec_short4 */
T_AVX2 U8P_ALWAYS_INLINE ptrdiff_t
avx2_dec_short_in(const uint8_t *s, size_t n, size_t avail, u8p_dec_alloc alloc, void *ctx,
                  const int two, const int vbmi4)
{
    /* a copy of the payload, then zeros, for the loads (SHORT_READ bytes)
     * when the caller's buffer ends before they do */
    U8P_ALIGN32 uint8_t buf[96];
    U8P_ALIGN32 uint8_t out[U8P_DEC_SHORT_MAX * 2 + 32];
    const uint64_t live = n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
    __m256i v0, v1;
    uint64_t hi, cont, lead, ge_e0, l2, l3, bad;
    size_t k, i, o, w;
    uint32_t maxcp;
    uint8_t *d;

    const uint8_t *b = short_src(s, n, avail, SHORT_READ, buf, two, &v0, &v1);
#define MSB(v) (v)
    hi = SHORT_MASK(MSB) & live;
    if (!hi) { /* ASCII (the reader takes those up to 32 bytes inline) */
        d = (uint8_t *)alloc(ctx, n, 0x7F);
        if (d == NULL)
            return -2;
        copy_small(d, s, n);
        return (ptrdiff_t)n;
    }
    /* signed bytes: 80..BF are below -64, C0.. above; F0..FF above -17.
     * A payload with a 4-byte sequence leaves for avx2_dec_short4 before
     * any other mask is made. */
#define GE_F0(v) _mm256_cmpgt_epi8(v, SK(BEF))
    if (SHORT_MASK(GE_F0) & hi) {
        if (n < SHORT4_MIN)
            return U8P_DEC_SHORT_INLINE;
        return vbmi4 ? vbmi_dec_short(s, n, avail, alloc, ctx)
                     : avx2_dec_short4(s, n, avail, alloc, ctx);
    }
#define IS_CONT(v) _mm256_cmpgt_epi8(SK(BC0), v)
#define GE_E0(v) _mm256_cmpgt_epi8(v, SK(BDF))
    cont = SHORT_MASK(IS_CONT) & live;
    lead = live & ~cont;
    ge_e0 = SHORT_MASK(GE_E0) & hi;
    l2 = lead & hi & ~ge_e0;
    l3 = lead & ge_e0;
    /* each lead's continuation bytes inside the payload, and exactly
     * those: a need past the payload is a bit the real mask lacks, unless
     * the shift drops it past bit 63, which only a payload of 63 or 64
     * bytes can make (checked first there) */
    if ((n > 62 && ((l2 | l3) & ~(live >> 1) || l3 & ~(live >> 2))) ||
        ((l2 | l3) << 1 | l3 << 2) != cont)
        return -1;
#define LT_C2(v) _mm256_cmpgt_epi8(SK(BC2), v)
    bad = SHORT_MASK(LT_C2) & l2; /* C0, C1: overlong */
    if (l3) {
#define IS_E0(v) _mm256_cmpeq_epi8(v, SK(BE0))
#define IS_ED(v) _mm256_cmpeq_epi8(v, SK(BED))
#define LT_A0(v) _mm256_cmpgt_epi8(SK(BA0), v)
        const uint64_t lt_a0 = SHORT_MASK(LT_A0) & cont;
        bad |= (SHORT_MASK(IS_E0) & l3) << 1 & lt_a0;          /* E0 80..9F */
        bad |= (SHORT_MASK(IS_ED) & l3) << 1 & cont & ~lt_a0;  /* ED A0..BF */
        maxcp = 0xFFFF;
    }
    else {
#define GE_C4(v) _mm256_cmpgt_epi8(v, SK(BC3))
        maxcp = SHORT_MASK(GE_C4) & l2 ? 0xFFFF : 0xFF;
    }
    if (bad)
        return -1;
    k = (size_t)__builtin_popcountll(lead);
    TABLES_READY();
    if (maxcp == 0xFF) {
        /* Latin-1: every lead is C2 or C3 with one continuation byte, so a
         * code point is that byte, plus 0x40 after C3, made in bytes (half
         * the lanes of the 16-bit form, and no narrowing) */
        const __m128i c3 = _mm256_castsi256_si128(SK(BC3));
        const __m128i x40 = _mm256_castsi256_si128(SK(B40));
        for (i = 0, o = 0; i < n; i += 16) {
            const __m128i x0 = _mm_loadu_si128((const __m128i *)(b + i));
            const __m128i x1 = _mm_loadu_si128((const __m128i *)(b + i + 1));
            const __m128i v = _mm_or_si128(x1, _mm_and_si128(_mm_cmpeq_epi8(x0, c3), x40));
            /* ASCII stays itself (the leads' high bit picks v) */
            o += emitb_128(out + o, _mm_blendv_epi8(x0, v, x0), (unsigned)(lead >> i) & 0xFFFF);
        }
        w = 1;
    }
    else {
        w = 2;
        for (i = 0, o = 0; i < n; i += 16) {
            const unsigned keep = (unsigned)(lead >> i) & 0xFFFF;
            const __m256i w0 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(b + i)));
            const __m256i w1 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(b + i + 1)));
            const __m256i m6 = SK(H003F);
            /* two bytes: 110xxxxx 10yyyyyy (in 16 bits, what the lead byte
             * holds above bit 4 shifts out) */
            __m256i v = _mm256_or_si256(_mm256_slli_epi16(_mm256_and_si256(w0, SK(H001F)), 6),
                                        _mm256_and_si256(w1, m6));
            v = _mm256_blendv_epi8(v, w0, _mm256_cmpgt_epi16(SK(H0080), w0));
            if (l3) { /* three bytes: 1110xxxx 10yyyyyy 10zzzzzz */
                const __m256i w2 =
                    _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(b + i + 2)));
                const __m256i v3 = _mm256_or_si256(
                    _mm256_or_si256(_mm256_slli_epi16(w0, 12),
                                    _mm256_slli_epi16(_mm256_and_si256(w1, m6), 6)),
                    _mm256_and_si256(w2, m6));
                v = _mm256_blendv_epi8(v, v3, _mm256_cmpgt_epi16(w0, SK(H00DF)));
            }
            o += emit16_256((uint16_t *)(void *)(out + o * 2), v, keep);
        }
    }
    d = (uint8_t *)alloc(ctx, k, maxcp);
    if (d == NULL)
        return -2;
    copy_small(d, out, k * w);
    return (ptrdiff_t)k;
}

T_AVX2 static ptrdiff_t
avx2_dec_short(const uint8_t *s, size_t n, size_t avail, u8p_dec_alloc alloc, void *ctx)
{
    /* both instances inline, one branch apart: with `two` a constant in
     * each, every mask, test and step is made for that many vectors only
     * (gcc does not clone one shared body by the count), and no call
     * stands between the table's entry and the work */
    return n > 32 ? avx2_dec_short_in(s, n, avail, alloc, ctx, 1, 0)
                  : avx2_dec_short_in(s, n, avail, alloc, ctx, 0, 0);
}

/*
 * Payloads with a byte F0..FF: every code point in a 32-bit lane, as the
 * str they make is UCS4 anyway.  The masks check the structure as above,
 * and the values the structure allows but UTF-8 does not by their lead
 * and next byte (C0, C1; E0 80..9F and F0 80..8F, overlong; ED A0..BF,
 * surrogates; F4 90..BF and F5..FF, above U+10FFFF), so every lane made
 * is a valid code point.  Then 8 positions a step: each byte is masked to
 * its payload bits by the table of its high nibble, each 32-bit lane
 * gathers the 4 bytes from its position (those after the first cut to 6
 * bits, whatever they are), two multiply-adds put them at their places
 * for a 4-byte sequence, and a shift by the lead's table entry (18, 12, 6
 * or 0) fits the shorter ones; lanes of leads are compacted with vpermd.
 * No branch depends on a byte's class: names with emoji mix them with
 * ASCII words, and a per-character branch mispredicts there.
 */

/* bytes from the payload's start the loads read: 64 for the masks, 16
 * from the last step's start (56) */
#define SHORT4_READ 72

T_AVX2 U8P_ALWAYS_INLINE ptrdiff_t
avx2_dec_short4_in(const uint8_t *s, size_t n, size_t avail, u8p_dec_alloc alloc, void *ctx,
                   const int two)
{
    U8P_ALIGN32 uint8_t buf[96];
    U8P_ALIGN32 uint32_t out[U8P_DEC_SHORT_MAX + 8];
    const uint64_t live = n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
    /* lead (or ASCII) byte j of a step -> lane j: [b0, b1, b2, b3] */
    const __m256i gather = _mm256_setr_epi8(0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6, 4, 5,
                                            6, 7, 5, 6, 7, 8, 6, 7, 8, 9, 7, 8, 9, 10);
    /* byte j of the shifts -> the low byte of lane j, zeros above */
    const __m256i lane0 = _mm256_setr_epi8(0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, 3, -1,
                                           -1, -1, 4, -1, -1, -1, 5, -1, -1, -1, 6, -1, -1, -1,
                                           7, -1, -1, -1);
    /* by high nibble: the payload bits of the byte, and the shift that
     * fits its sequence (a continuation's shift is never used) */
    const __m128i bits = _mm_setr_epi8(0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x7F, 0x3F,
                                       0x3F, 0x3F, 0x3F, 0x1F, 0x1F, 0x0F, 0x07);
    const __m128i shifts = _mm_setr_epi8(18, 18, 18, 18, 18, 18, 18, 18, 0, 0, 0, 0, 12, 12, 6,
                                         0);
    __m256i v0, v1;
    uint64_t hi, cont, lead, ge_e0, ge_f0, l2, l3, l4, bad, lt_a0, lt_90;
    size_t k, i, o;
    uint32_t *d;
    const uint8_t *b = short_src(s, n, avail, SHORT4_READ, buf, two, &v0, &v1);

    hi = live & SHORT_MASK(MSB);
    cont = live & SHORT_MASK(IS_CONT);
    lead = live & ~cont;
#define GE_F5(v) _mm256_cmpgt_epi8(v, _mm256_set1_epi8(-12))
    if (SHORT_MASK(GE_F5) & hi)
        return -1; /* F5..FF: no such lead */
    ge_e0 = SHORT_MASK(GE_E0) & hi & lead;
    ge_f0 = SHORT_MASK(GE_F0) & hi;
    l2 = lead & hi & ~ge_e0;
    l3 = ge_e0 & ~ge_f0;
    l4 = ge_f0;
    /* each lead's continuation bytes inside the payload, and exactly
     * those (checked before the shifts, which could drop a need past bit
     * 63) */
    if ((l2 | l3 | l4) & ~(live >> 1) || (l3 | l4) & ~(live >> 2) || l4 & ~(live >> 3) ||
        ((l2 | l3 | l4) << 1 | (l3 | l4) << 2 | l4 << 3) != cont)
        return -1;
#define IS_F0(v) _mm256_cmpeq_epi8(v, _mm256_set1_epi8(-16))
#define IS_F4(v) _mm256_cmpeq_epi8(v, _mm256_set1_epi8(-12))
#define LT_90(v) _mm256_cmpgt_epi8(_mm256_set1_epi8(-112), v)
    bad = SHORT_MASK(LT_C2) & l2; /* C0, C1: overlong */
    lt_a0 = SHORT_MASK(LT_A0) & cont;
    lt_90 = SHORT_MASK(LT_90) & cont;
    bad |= (SHORT_MASK(IS_E0) & l3) << 1 & lt_a0;  /* E0 80..9F */
    bad |= (SHORT_MASK(IS_ED) & l3) << 1 & ~lt_a0; /* ED A0..BF */
    bad |= (SHORT_MASK(IS_F0) & l4) << 1 & lt_90;  /* F0 80..8F */
    bad |= (SHORT_MASK(IS_F4) & l4) << 1 & ~lt_90; /* F4 90..BF */
    if (bad)
        return -1;
    k = (size_t)__builtin_popcountll(lead);
    d = (uint32_t *)alloc(ctx, k, 0x10FFFF);
    if (d == NULL)
        return -2;
    TABLES_READY();
    for (i = 0, o = 0; i < n; i += 8) {
        const __m128i x = _mm_loadu_si128((const __m128i *)(b + i));
        const __m128i nib = _mm_and_si128(_mm_srli_epi16(x, 4), _mm_set1_epi8(0x0F));
        const __m256i t = _mm256_broadcastsi128_si256(_mm_and_si128(x, _mm_shuffle_epi8(bits, nib)));
        const __m256i sh = _mm256_broadcastsi128_si256(_mm_shuffle_epi8(shifts, nib));
        /* [b0, b1, b2, b3] -> b0 << 18 | b1 << 12 | b2 << 6 | b3: b0
         * keeps its payload bits (all 7 of an ASCII byte), b1..b3 are cut
         * to 6 whatever they are (bytes of the next characters after a
         * shorter sequence, shifted out below) */
        const __m256i y = _mm256_madd_epi16(
            _mm256_maddubs_epi16(
                _mm256_and_si256(_mm256_shuffle_epi8(t, gather), _mm256_set1_epi32(0x3F3F3FFF)),
                _mm256_set1_epi16(0x0140)),
            _mm256_set1_epi32(0x00011000));
        o += emit32_256(out + o, _mm256_srlv_epi32(y, _mm256_shuffle_epi8(sh, lane0)),
                        (lead >> i) & 0xFF);
    }
    copy_small((uint8_t *)d, (const uint8_t *)out, k * 4);
    return (ptrdiff_t)k;
}

T_AVX2 U8P_APART ptrdiff_t
avx2_dec_short4(const uint8_t *s, size_t n, size_t avail, u8p_dec_alloc alloc, void *ctx)
{
    return n > 32 ? avx2_dec_short4_in(s, n, avail, alloc, ctx, 1)
                  : avx2_dec_short4_in(s, n, avail, alloc, ctx, 0);
}

/*
 * The mixed table's short decoder (AMD's AVX-512 cores), for payloads up to
 * 3-byte sequences.  The masks of the bytes come as AVX2's decoder makes
 * them, movemasks straight into general registers (on these cores a mask
 * register's trip to a general one costs, the other way does not), and
 * check the structure and the values the same way.  Then each byte's
 * position becomes a 16-bit lane (32 a vector) holding the code point of a
 * sequence that would start there, made from the byte and the next two
 * (widened from loads at +0, +1, +2): a unit, a 2-byte or a 3-byte value,
 * picked by the lead masks; one word compress keeps the lanes of the
 * leads, in order, and they go to the str with one masked store (narrowed
 * to bytes for a Latin-1 payload).  No stack block and no table of
 * shuffles: the call to alloc comes last, and the one or two compressed
 * vectors live across it.  Payloads with a byte F0..FF go to the VBMI
 * decoder (its one vpermb gather of 32-bit lanes), and those too near the
 * end of the caller's buffer for the loads take the AVX2 decoder's road.
 */

/* bytes from the payload's start the loads read: 32 a vector of masks,
 * and 32 from +2 for the last vector's third bytes */
#define SHORT23_READ 66

T_VBMI2 U8P_ALWAYS_INLINE __m512i
dec23_lanes(const uint8_t *b, uint32_t l2, uint32_t l3)
{
    /* the splats read from memory (x86_consts.c): as set1s gcc rebuilds
     * each from a general register at every use */
    const __m512i k3f = _mm512_broadcast_i64x4(SK(H003F));
    const __m512i w0 = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)b));
    const __m512i w1 = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(b + 1)));
    /* 110xxxxx 10yyyyyy: (b0 & 0x1F) << 6 | (b1 & 0x3F) */
    __m512i c = _mm512_ternarylogic_epi32(
        _mm512_slli_epi16(_mm512_and_si512(w0, _mm512_broadcast_i64x4(SK(H001F))), 6), w1, k3f,
        0xF8); /* a | (b & c) */
    c = _mm512_mask_blend_epi16((__mmask32)l2, w0, c);
    if (l3) { /* 1110xxxx 10yyyyyy 10zzzzzz: what is above bit 15 shifts out */
        const __m512i w2 = _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(b + 2)));
        const __m512i c3 = _mm512_ternarylogic_epi32(
            _mm512_slli_epi16(w0, 12), _mm512_slli_epi16(_mm512_and_si512(w1, k3f), 6),
            _mm512_and_si512(w2, k3f), 0xFE); /* a | b | c */
        c = _mm512_mask_blend_epi16((__mmask32)l3, c, c3);
    }
    return c;
}

T_VBMI2 U8P_ALWAYS_INLINE void
dec23_store(uint8_t *d, __m512i c, size_t k, int w)
{
    if (w == 1)
        _mm512_mask_storeu_epi8(d, u8p_low_bits64(k),
                                _mm512_castsi256_si512(_mm512_cvtepi16_epi8(c)));
    else
        _mm512_mask_storeu_epi16(d, (__mmask32)u8p_low_bits64(k), c);
}

T_VBMI2 U8P_ALWAYS_INLINE ptrdiff_t
vbmi2_dec_short23_in(const uint8_t *s, size_t n, size_t avail, u8p_dec_alloc alloc, void *ctx,
                     const int two)
{
    const uint64_t live = n >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << n) - 1;
    __m256i v0, v1;
    uint64_t hi, cont, lead, ge_e0, l2, l3, bad, keep;
    uint32_t maxcp;
    size_t k, k0;
    __m512i c0, c1 = _mm512_setzero_si512();
    uint8_t *d;

    if (avail < SHORT23_READ)
        return avx2_dec_short_in(s, n, avail, alloc, ctx, two, 1);
    v0 = _mm256_loadu_si256((const __m256i *)s);
    v1 = two ? _mm256_loadu_si256((const __m256i *)(s + 32)) : _mm256_setzero_si256();
    hi = SHORT_MASK(MSB) & live;
    if (!hi) { /* ASCII (the reader takes those up to 32 bytes inline) */
        d = (uint8_t *)alloc(ctx, n, 0x7F);
        if (d == NULL)
            return -2;
        _mm512_mask_storeu_epi8(d, u8p_low_bits64(n),
                                _mm512_inserti64x4(_mm512_castsi256_si512(v0), v1, 1));
        return (ptrdiff_t)n;
    }
    ge_e0 = SHORT_MASK(GE_E0) & hi;
    if (ge_e0 && SHORT_MASK(GE_F0) & ge_e0) /* as AVX2's decoder hands them over */
        return n < SHORT4_MIN ? U8P_DEC_SHORT_INLINE : vbmi_dec_short(s, n, avail, alloc, ctx);
    /* "x & ~y" is written x ^ y where y is inside x: without BMI's andn
     * in the target, gcc makes "& ~" a kandn in mask registers, and the
     * trips back to general registers are what this decoder avoids */
    cont = SHORT_MASK(IS_CONT) & live;
    lead = live ^ cont;
    l3 = ge_e0; /* E0..EF: inside hi and lead */
    l2 = (lead & hi) ^ l3;
    /* as AVX2's decoder: each lead's continuation bytes inside the
     * payload, and exactly those */
    if ((n > 62 && ((l2 | l3) & ~(live >> 1) || l3 & ~(live >> 2))) ||
        ((l2 | l3) << 1 | l3 << 2) != cont)
        return -1;
    bad = SHORT_MASK(LT_C2) & l2; /* C0, C1: overlong */
    if (l3) {
        const uint64_t lt_a0 = SHORT_MASK(LT_A0) & cont;
        bad |= (SHORT_MASK(IS_E0) & l3) << 1 & lt_a0;         /* E0 80..9F */
        bad |= (SHORT_MASK(IS_ED) & l3) << 1 & (cont ^ lt_a0); /* ED A0..BF */
        maxcp = 0xFFFF;
    }
    else
        maxcp = SHORT_MASK(GE_C4) & l2 ? 0xFFFF : 0xFF;
    if (bad)
        return -1;
    keep = lead;
    k = (size_t)__builtin_popcountll(keep);
    k0 = (size_t)__builtin_popcount((uint32_t)keep);
    c0 = _mm512_maskz_compress_epi16((__mmask32)keep,
                                     dec23_lanes(s, (uint32_t)l2, (uint32_t)l3));
    if (two)
        c1 = _mm512_maskz_compress_epi16(
            (__mmask32)(keep >> 32),
            dec23_lanes(s + 32, (uint32_t)(l2 >> 32), (uint32_t)(l3 >> 32)));
    d = (uint8_t *)alloc(ctx, k, maxcp);
    if (d == NULL)
        return -2;
    if (maxcp == 0xFF) {
        dec23_store(d, c0, k0, 1);
        if (two)
            dec23_store(d + k0, c1, k - k0, 1);
    }
    else {
        dec23_store(d, c0, k0, 2);
        if (two)
            dec23_store(d + 2 * k0, c1, k - k0, 2);
    }
    return (ptrdiff_t)k;
}

/*
 * Payloads of 65 to U8P_DEC_SHORT_VEC_MAX bytes: the same decoder over two
 * 64-byte halves, their masks checked as one sequence of 128 (the second
 * half's continuations carry the first's last leads), then four word
 * compresses and four masked stores, where the long way makes two passes
 * (a scan, then a transcoder whose tail goes through a padded copy on the
 * stack).  vbmi2_dec_short23 declines (U8P_DEC_SHORT_INLINE: the caller
 * takes the long way) a payload with a byte F0..FF, and one whose caller's
 * buffer ends before the loads here (SHORT23W_READ bytes) do.
 */
#define SHORT23W_READ (U8P_DEC_SHORT_VEC_MAX + 2)
#define WIDE_MASK(f, a, b) \
    ((uint64_t)(uint32_t)_mm256_movemask_epi8(f(a)) | \
     (uint64_t)(uint32_t)_mm256_movemask_epi8(f(b)) << 32)

T_VBMI2 U8P_APART ptrdiff_t
vbmi2_dec_short23_wide(const uint8_t *s, size_t n, u8p_dec_alloc alloc, void *ctx)
{
    /* the second half's bytes (n > 64) */
    const uint64_t live = n >= 128 ? ~(uint64_t)0 : ((uint64_t)1 << (n - 64)) - 1;
    __m256i v0, v1, v2, v3;
    uint64_t hi0, hi1, cont0, cont1, lead0, lead1, l2a, l2b, l3a, l3b, bad;
    uint32_t maxcp;
    size_t k, k0, k1, k2;
    __m512i c0, c1, c2, c3;
    uint8_t *d;

    v0 = _mm256_loadu_si256((const __m256i *)s);
    v1 = _mm256_loadu_si256((const __m256i *)(s + 32));
    v2 = _mm256_loadu_si256((const __m256i *)(s + 64));
    v3 = _mm256_loadu_si256((const __m256i *)(s + 96));
    hi0 = WIDE_MASK(MSB, v0, v1);
    hi1 = WIDE_MASK(MSB, v2, v3) & live;
    if (!(hi0 | hi1)) { /* ASCII: loaded again after the call, not kept across it */
        d = (uint8_t *)alloc(ctx, n, 0x7F);
        if (d == NULL)
            return -2;
        _mm512_storeu_si512((void *)d, _mm512_loadu_si512(s));
        _mm512_mask_storeu_epi8(d + 64, live, _mm512_loadu_si512(s + 64));
        return (ptrdiff_t)n;
    }
    l3a = WIDE_MASK(GE_E0, v0, v1) & hi0; /* E0..EF */
    l3b = WIDE_MASK(GE_E0, v2, v3) & hi1;
    cont0 = WIDE_MASK(IS_CONT, v0, v1);
    cont1 = WIDE_MASK(IS_CONT, v2, v3) & live;
    lead0 = ~cont0;
    lead1 = live ^ cont1; /* x ^ y for x & ~y, as above */
    l2a = (lead0 & hi0) ^ l3a;
    l2b = (lead1 & hi1) ^ l3b;
    /* each lead's continuations, and exactly those, inside the payload */
    if (((l2a | l3a) << 1 | l3a << 2) != cont0 ||
        ((l2b | l3b) << 1 | l3b << 2 | (l2a | l3a) >> 63 | l3a >> 62) != cont1 ||
        (l2b | l3b) & ~(live >> 1) || l3b & ~(live >> 2))
        return -1;
    bad = (WIDE_MASK(LT_C2, v0, v1) & l2a) | (WIDE_MASK(LT_C2, v2, v3) & l2b); /* C0, C1 */
    if (l3a | l3b) {
        const uint64_t lt0 = WIDE_MASK(LT_A0, v0, v1) & cont0;
        const uint64_t lt1 = WIDE_MASK(LT_A0, v2, v3) & cont1;
        const uint64_t e0a = WIDE_MASK(IS_E0, v0, v1) & l3a, e0b = WIDE_MASK(IS_E0, v2, v3) & l3b;
        const uint64_t eda = WIDE_MASK(IS_ED, v0, v1) & l3a, edb = WIDE_MASK(IS_ED, v2, v3) & l3b;
        bad |= e0a << 1 & lt0;                             /* E0 80..9F */
        bad |= (e0b << 1 | e0a >> 63) & lt1;
        bad |= eda << 1 & (cont0 ^ lt0);                   /* ED A0..BF */
        bad |= (edb << 1 | eda >> 63) & (cont1 ^ lt1);
        maxcp = 0xFFFF;
    }
    else
        maxcp = (WIDE_MASK(GE_C4, v0, v1) & l2a) | (WIDE_MASK(GE_C4, v2, v3) & l2b) ? 0xFFFF
                                                                                    : 0xFF;
    if (bad)
        return -1;
    k0 = (size_t)__builtin_popcount((uint32_t)lead0);
    k1 = k0 + (size_t)__builtin_popcount((uint32_t)(lead0 >> 32));
    k2 = k1 + (size_t)__builtin_popcount((uint32_t)lead1);
    k = k2 + (size_t)__builtin_popcount((uint32_t)(lead1 >> 32));
    /* the lanes made after the call: four vectors kept across it would
     * be spilled, and their 64-byte aligned frame paid on every path */
    d = (uint8_t *)alloc(ctx, k, maxcp);
    if (d == NULL)
        return -2;
    c0 = _mm512_maskz_compress_epi16((__mmask32)lead0,
                                     dec23_lanes(s, (uint32_t)l2a, (uint32_t)l3a));
    c1 = _mm512_maskz_compress_epi16(
        (__mmask32)(lead0 >> 32),
        dec23_lanes(s + 32, (uint32_t)(l2a >> 32), (uint32_t)(l3a >> 32)));
    c2 = _mm512_maskz_compress_epi16((__mmask32)lead1,
                                     dec23_lanes(s + 64, (uint32_t)l2b, (uint32_t)l3b));
    if (maxcp == 0xFF) {
        dec23_store(d, c0, k0, 1);
        dec23_store(d + k0, c1, k1 - k0, 1);
        dec23_store(d + k1, c2, k2 - k1, 1);
    }
    else {
        dec23_store(d, c0, k0, 2);
        dec23_store(d + 2 * k0, c1, k1 - k0, 2);
        dec23_store(d + 2 * k1, c2, k2 - k1, 2);
    }
    if (n > 96) { /* the last quarter */
        c3 = _mm512_maskz_compress_epi16(
            (__mmask32)(lead1 >> 32),
            dec23_lanes(s + 96, (uint32_t)(l2b >> 32), (uint32_t)(l3b >> 32)));
        dec23_store(d + (maxcp == 0xFF ? k2 : 2 * k2), c3, k - k2, maxcp == 0xFF ? 1 : 2);
    }
    return (ptrdiff_t)k;
}
#undef WIDE_MASK

T_VBMI2 static ptrdiff_t
vbmi2_dec_short23(const uint8_t *s, size_t n, size_t avail, u8p_dec_alloc alloc, void *ctx)
{
    if (n > 64) {
        /* the declines here, before the wide decoder's frame is set up.  A
         * byte F0..FF, found in mask registers (one test, no transfer),
         * must not reach it: it would read one as a 3-byte lead */
        const __m512i f0 = _mm512_set1_epi8((char)0xF0);
        if (avail < SHORT23W_READ ||
            _mm512_cmpge_epu8_mask(
                _mm512_max_epu8(_mm512_loadu_si512(s),
                                _mm512_maskz_loadu_epi8(u8p_low_bits64(n - 64), s + 64)),
                f0) != 0)
            return U8P_DEC_SHORT_INLINE;
        return vbmi2_dec_short23_wide(s, n, alloc, ctx);
    }
    return n > 32 ? vbmi2_dec_short23_in(s, n, avail, alloc, ctx, 1)
                  : vbmi2_dec_short23_in(s, n, avail, alloc, ctx, 0);
}
#undef SHORT_MASK
#undef MSB
#undef SHORT_READ
#undef SHORT23_READ
#undef SHORT23W_READ
#undef IS_CONT
#undef GE_E0
#undef GE_F0
#undef LT_C2
#undef IS_E0
#undef IS_ED
#undef LT_A0
#undef GE_C4
#undef GE_F5
#undef IS_F0
#undef IS_F4
#undef LT_90
#undef SHORT4_READ

const u8p_dec_kernels u8p_dec_kernels_sse = {
    "sse", sse_scan, sse_to_ucs1, sse_to_ucs2, sse_to_ucs4, NULL, NULL, sse_copy_ascii, NULL, 0,
};

const u8p_dec_kernels u8p_dec_kernels_avx2 = {
    "avx2",         avx2_scan,    avx2_to_ucs1,       avx2_to_ucs2,
    avx2_to_ucs4, avx2_prescan, avx2_to_ucs1_checked, avx2_copy_ascii, avx2_dec_short,
    U8P_DEC_SHORT_MAX,
};

/* AVX-512 F + BW; the fused UCS1 path's checked transcode is AVX2's */
const u8p_dec_kernels u8p_dec_kernels_avx512 = {
    "avx512",         avx512_scan,    avx512_to_ucs1,     avx512_to_ucs2,
    avx512_to_ucs4, avx512_prescan, avx2_to_ucs1_checked, avx512_copy_ascii, avx2_dec_short,
    U8P_DEC_SHORT_MAX,
};

/* + VBMI2: byte and word compress; the Intel table (the VBMI short decoder
 * for every payload) */
const u8p_dec_kernels u8p_dec_kernels_avx512_vbmi2 = {
    "avx512",         avx512_scan,  vbmi2_to_ucs1,        vbmi2_to_ucs2,
    avx512_to_ucs4,   avx512_prescan, vbmi2_to_ucs1_checked, avx512_copy_ascii,
    vbmi_dec_short,   U8P_DEC_SHORT_MAX,
};

/* + VBMI2, on every vendor but Intel: the word-compress short decoder up
 * to 3-byte sequences (vbmi2_dec_short23), to 128 bytes, AVX2's road for
 * the rest */
const u8p_dec_kernels u8p_dec_kernels_avx512_mixed = {
    "avx512",         avx512_scan,    vbmi2_to_ucs1,         vbmi2_to_ucs2,
    avx512_to_ucs4,   avx512_prescan, vbmi2_to_ucs1_checked, avx512_copy_ascii,
    vbmi2_dec_short23, U8P_DEC_SHORT_VEC_MAX,
};

#else /* !U8P_X86_SIMD */
typedef int u8p_decode_x86_empty; /* ISO C forbids an empty file */
#endif
