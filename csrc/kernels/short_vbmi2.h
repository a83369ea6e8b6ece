/*
 * Public: the AVX-512 VBMI2 encoders' steps for short strings, for the
 * writer's short path and the VBMI2 encoders (x86/x86_avx512.c) alike: the
 * two-byte step (up to 32 code units, each below U+0800, in one masked
 * load, one byte compress and one masked store) and the lanes step (16
 * code points of any length class a step), with the cut-offs below which
 * the scalar loop is faster.  The writer's short path is built a second
 * time for this target (U8P_VBMI2_TARGET) and inlines these, so that a
 * short str costs no call into the kernels.  Plain C over arrays, no
 * Python.h; every function reads and writes exactly its input and output
 * (masked loads and stores), so none needs slack past either end; the
 * room steps further down store whole vectors into room the caller owns.
 *
 * U8P_HAVE_VBMI2_SHORT is 1 where this compiles (U8P_X86_SIMD, kernels.h:
 * x86-64 with gcc or clang), else 0 and nothing else is defined.  A caller
 * must run these functions only while the kernel table in use is the
 * VBMI2 one (U8P_VBMI2_SHORT_OK: the CPU has AVX-512 F, BW, CD, VBMI,
 * VBMI2 and GFNI; dispatch.c asks cpuid and XCR0).
 */
#ifndef UTF8PFX_SHORT_VBMI2_H
#define UTF8PFX_SHORT_VBMI2_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "attrs.h"
#include "kernels.h"

#if U8P_X86_SIMD
#define U8P_HAVE_VBMI2_SHORT 1

#include <immintrin.h>

/* The tables in use while these may run: the avx512 level's on a CPU with
 * VBMI2 (u8p_kernels_avx512_mixed and _intel, kernels.h; dispatch picks
 * them only there). */
#define U8P_VBMI2_SHORT_OK(K) \
    ((K) == &u8p_kernels_avx512_mixed || (K) == &u8p_kernels_avx512_intel)

/* The steps' splat constants, 32 bits a lane, read from memory (defined in
 * x86/x86_consts.c): given the values, gcc rebuilds a splat from a general
 * register at each use (an immediate, then vpbroadcast: a transfer into
 * the vector unit), in the writer's loops as well; read from here, each is
 * one broadcast load. */
enum u8p_splat {
    U8P_S_H0080, U8P_S_H003F, U8P_S_H80C0, U8P_S_H8080, U8P_S_H0800, U8P_S_WF800,
    U8P_S_WD800, U8P_S_HD800, U8P_S_H07FF, U8P_S_COUNT
};
extern const uint32_t u8p_splat32[U8P_S_COUNT];
#define U8P_SPLAT(i) _mm512_set1_epi32((int)u8p_splat32[i])

/* the "VBMI2" table's instruction sets: also VBMI (vpmultishiftqb), CD
 * (vplzcntd) and GFNI (gf2p8affineqb) for its other steps */
#define U8P_VBMI2_TARGET \
    __attribute__((target("avx512f,avx512bw,avx512cd,avx512vbmi,avx512vbmi2,gfni,avx2,popcnt")))

/* The two-byte step: the lanes of w (16-bit, each below U+0800; those
 * past `lanes` dropped) -> their UTF-8, one or two bytes each, packed at
 * the front of the result; *big_out gets the lanes from U+0080, *keep_out
 * the bytes kept.  Each lane holds its two-byte form [0xC0 | c >> 6,
 * 0x80 | (c & 0x3F)] (little-endian) or c itself, and vpcompressb keeps
 * its low byte, and its high byte for c >= 0x80.  The two callers below
 * store it exactly or into room. */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE __m512i
u8p_vbmi2_two_bytes(__m512i w, __mmask32 lanes, __mmask32 *big_out, __mmask64 *keep_out)
{
    const __mmask32 big = _mm512_cmpge_epu16_mask(w, U8P_SPLAT(U8P_S_H0080));
    const __m512i two = _mm512_or_si512(
        _mm512_or_si512(_mm512_srli_epi16(w, 6),
                        _mm512_slli_epi16(_mm512_and_si512(w, U8P_SPLAT(U8P_S_H003F)), 8)),
        U8P_SPLAT(U8P_S_H80C0));
    const __m512i keepv = _mm512_maskz_mov_epi16(
        lanes, _mm512_mask_blend_epi16(big, U8P_SPLAT(U8P_S_H0080),
                                       U8P_SPLAT(U8P_S_H8080)));
    const __mmask64 keep = _mm512_movepi8_mask(keepv);
    *big_out = big;
    *keep_out = keep;
    return _mm512_maskz_compress_epi8(keep, _mm512_mask_blend_epi16(big, w, two));
}

/* the two-byte step, storing exactly its bytes */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE size_t
u8p_vbmi2_two_store(__m512i w, __mmask32 lanes, uint8_t *d)
{
    __mmask32 big;
    __mmask64 keep;
    const __m512i bytes = u8p_vbmi2_two_bytes(w, lanes, &big, &keep);
    const size_t cnt = (size_t)__builtin_popcountll(keep);
    _mm512_mask_storeu_epi8(d, u8p_low_bits64(cnt), bytes);
    return cnt;
}

/* n (0..32) ASCII characters at src -> dst: one masked load, one masked
 * store (reads and writes exactly n bytes, no slack either side). */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE void
u8p_vbmi2_copy_ascii(const uint8_t *src, size_t n, uint8_t *dst)
{
    const __mmask64 m = u8p_low_bits64(n);
    _mm512_mask_storeu_epi8(dst, m, _mm512_maskz_loadu_epi8(m, src));
}

/* the same when dst has 32 bytes of room: the store is a plain one of 32
 * bytes (zeros past the n) */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE void
u8p_vbmi2_copy_ascii_room(const uint8_t *src, size_t n, uint8_t *dst)
{
    _mm256_storeu_si256((__m256i *)dst, _mm512_castsi512_si256(_mm512_maskz_loadu_epi8(u8p_low_bits64(n), src)));
}

/* n (1..32) UCS1 code units at src -> UTF-8 at dst (at most 2n bytes);
 * returns the byte count. */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE __m512i
u8p_vbmi2_load_ucs1(const uint8_t *src, __mmask32 lanes)
{
    const __m512i w = _mm512_cvtepu8_epi16(
        _mm512_castsi512_si256(_mm512_maskz_loadu_epi8((__mmask64)lanes, src)));
    return w;
}

U8P_VBMI2_TARGET U8P_ALWAYS_INLINE size_t
u8p_vbmi2_short_ucs1(const uint8_t *src, size_t n, uint8_t *dst)
{
    const __mmask32 lanes = (__mmask32)u8p_low_bits64(n);
    return u8p_vbmi2_two_store(u8p_vbmi2_load_ucs1(src, lanes), lanes, dst);
}

/* n (1..32) UCS2 code units at src -> UTF-8 at dst (at most 2n bytes) when
 * none is from U+0800 (so none is a surrogate either); returns the byte
 * count, or (size_t)-1 with nothing written when one is. */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE size_t
u8p_vbmi2_short_ucs2(const uint16_t *src, size_t n, uint8_t *dst)
{
    const __mmask32 lanes = (__mmask32)u8p_low_bits64(n);
    const __m512i w = _mm512_maskz_loadu_epi16(lanes, src);
    if (_mm512_cmpge_epu16_mask(w, U8P_SPLAT(U8P_S_H0800)))
        return (size_t)-1;
    return u8p_vbmi2_two_store(w, lanes, dst);
}

/* Below these lengths the VBMI2 encoders hand the input to the scalar
 * loop.  Their one masked step has a fixed cost (a dependency chain of
 * lzcnt -> permute -> mask -> compress -> masked store) that the scalar
 * loop beats on a handful of code points: per code point
 * (bench/c/bench_kernels.c with every cut-off at 1) the step is the faster
 * from 4 UCS2 units (Cyrillic; CJK from 3) and from 5 UCS4 code points
 * (emoji; the two are level at 4).  A higher cut-off (16) makes the
 * writer's short UCS4 names slower: more of them take the scalar loop.  The
 * UCS1 encoder has none: on Latin-1 the two are level from 5 to 10 units,
 * and any cut-off makes the writer's UCS1 names slower. */
#ifndef U8P_VBMI2_MIN_UNITS_UCS2
#define U8P_VBMI2_MIN_UNITS_UCS2 4
#endif
#ifndef U8P_VBMI2_MIN_UNITS_UCS4
#define U8P_VBMI2_MIN_UNITS_UCS4 5
#endif

/*
 * 16 code points (32-bit lanes) -> UTF-8, the step of every UCS2 and UCS4
 * loop below: each code point's sequence is built right-aligned in its
 * lane (byte 3 its last byte, byte 3 - k its lead) and vpcompressb
 * squeezes out the unused bytes.  The lane's leading-zero count (vplzcntd) picks its
 * length class from two 32-entry tables (vpermt2d): which of its 4 bytes
 * to keep (0xFF the ASCII byte, 0xBF a kept byte of a longer sequence, 0
 * dropped: the high bit is the keep mask) and the marker bits to OR in.
 * One vpmultishiftqb lays out bits 18.., 12.., 6.. and 0.. of the code
 * point as bytes 0..3 of the lane (right-aligned, as above); (x & keep) |
 * marker is one vpternlogd.  lz 32 (U+0000) wraps to entry 0, ASCII;
 * entries 1..10 are above U+10FFFF and never met.  At the bits this keeps,
 * every field is in range: a lead's bits above its payload are zero for a
 * code point of that length, and a continuation byte's bit 7 is set by its
 * marker anyway.
 */
typedef struct {
    __m512i keep_lo, keep_hi, mark_lo, mark_hi, fields;
} u8p_vbmi2_tab;

#define VBMI_K1 ((int)0xFF000000u) /* ASCII */
#define VBMI_K2 ((int)0xBFBF0000u)
#define VBMI_K3 ((int)0xBFBFBF00u)
#define VBMI_K4 ((int)0xBFBFBFBFu)
#define VBMI_M2 ((int)0x80C00000u)
#define VBMI_M3 ((int)0x8080E000u)
#define VBMI_M4 ((int)0x808080F0u)

U8P_VBMI2_TARGET U8P_ALWAYS_INLINE u8p_vbmi2_tab
u8p_vbmi2_tab_make(void)
{
    u8p_vbmi2_tab t;
    /* lz 0..15 (entry 0: U+0000), then 16..31 */
    t.keep_lo = _mm512_setr_epi32(VBMI_K1, VBMI_K4, VBMI_K4, VBMI_K4, VBMI_K4, VBMI_K4, VBMI_K4,
                                  VBMI_K4, VBMI_K4, VBMI_K4, VBMI_K4, VBMI_K4, VBMI_K4, VBMI_K4,
                                  VBMI_K4, VBMI_K4);
    t.keep_hi = _mm512_setr_epi32(VBMI_K3, VBMI_K3, VBMI_K3, VBMI_K3, VBMI_K3, VBMI_K2, VBMI_K2,
                                  VBMI_K2, VBMI_K2, VBMI_K1, VBMI_K1, VBMI_K1, VBMI_K1, VBMI_K1,
                                  VBMI_K1, VBMI_K1);
    t.mark_lo = _mm512_setr_epi32(0, VBMI_M4, VBMI_M4, VBMI_M4, VBMI_M4, VBMI_M4, VBMI_M4,
                                  VBMI_M4, VBMI_M4, VBMI_M4, VBMI_M4, VBMI_M4, VBMI_M4, VBMI_M4,
                                  VBMI_M4, VBMI_M4);
    t.mark_hi = _mm512_setr_epi32(VBMI_M3, VBMI_M3, VBMI_M3, VBMI_M3, VBMI_M3, VBMI_M2, VBMI_M2,
                                  VBMI_M2, VBMI_M2, 0, 0, 0, 0, 0, 0, 0);
    /* per 64-bit pair of lanes: bytes 0..3 <- bits 18, 12, 6, 0 of the
     * low lane, bytes 4..7 <- bits 50, 44, 38, 32 (the high lane) */
    t.fields = _mm512_set1_epi64((long long)0x20262C3200060C12ull);
    return t;
}
#undef VBMI_K1
#undef VBMI_K2
#undef VBMI_K3
#undef VBMI_K4
#undef VBMI_M2
#undef VBMI_M3
#undef VBMI_M4

/* c's `lanes` (no surrogates) -> UTF-8 in *out (compressed to the front);
 * returns the byte count */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE size_t
u8p_vbmi2_lanes(const u8p_vbmi2_tab *t, __m512i c, __mmask16 lanes, __m512i *out)
{
    __m512i lz = _mm512_lzcnt_epi32(c);
    __m512i keepv = _mm512_maskz_permutex2var_epi32(lanes, t->keep_lo, lz, t->keep_hi);
    __m512i mark = _mm512_permutex2var_epi32(t->mark_lo, lz, t->mark_hi);
    __m512i x = _mm512_multishift_epi64_epi8(t->fields, c);
    __mmask64 keep = _mm512_movepi8_mask(keepv);
    /* (x & keepv) | mark */
    *out = _mm512_maskz_compress_epi8(keep, _mm512_ternarylogic_epi32(x, keepv, mark, 0xEA));
    return (size_t)__builtin_popcountll(keep);
}

U8P_VBMI2_TARGET U8P_ALWAYS_INLINE size_t
u8p_vbmi2_lanes_store(const u8p_vbmi2_tab *t, __m512i c, __mmask16 lanes, uint8_t *d)
{
    __m512i o;
    size_t cnt = u8p_vbmi2_lanes(t, c, lanes, &o);
    _mm512_mask_storeu_epi8(d, u8p_low_bits64(cnt), o);
    return cnt;
}

/* the live lanes of c (32-bit) that hold a surrogate */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE __mmask16
u8p_vbmi2_surr32(__m512i c, __mmask16 lanes)
{
    return _mm512_mask_cmpeq_epi32_mask(lanes,
                                        _mm512_and_si512(c, U8P_SPLAT(U8P_S_WF800)),
                                        U8P_SPLAT(U8P_S_WD800));
}

/* n (from the cut-off of its kind up to 32) UCS2 code units (units == 2,
 * a constant) or UCS4 code points (units == 4) at src -> UTF-8 at dst (at
 * most 3n or 4n bytes) by the lanes step, 16 a step; returns the byte
 * count, or (size_t)-1 when one is a surrogate (what it wrote then counts
 * for nothing: the caller hands the str to a path that stops there). */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE size_t
u8p_vbmi2_short_lanes(const void *src, const int units, size_t n, uint8_t *dst)
{
    const u8p_vbmi2_tab t = u8p_vbmi2_tab_make();
    uint8_t *d = dst;
    size_t i;
    for (i = 0; i < n; i += 16) {
        const __mmask16 lanes = (__mmask16)u8p_low_bits64(n - i < 16 ? n - i : 16);
        const __m512i c =
            units == 2 ? _mm512_cvtepu16_epi32(_mm512_castsi512_si256(_mm512_maskz_loadu_epi16(
                             (__mmask32)lanes, (const uint16_t *)src + i)))
                       : _mm512_maskz_loadu_epi32(lanes, (const uint32_t *)src + i);
        if (u8p_vbmi2_surr32(c, lanes))
            return (size_t)-1;
        d += u8p_vbmi2_lanes_store(&t, c, lanes, d);
    }
    return (size_t)(d - dst);
}

/*
 * The writer's steps for a destination with room to spare: U8P_VBMI2_ROOM
 * bytes free from dst on (the writer's short path takes them while its
 * buffer has that much free past the prefix byte; else the exact steps
 * above).  Same bytes and counts as those, written differently:
 *
 *   - each store is a plain 64-byte one; what lands past the body is past
 *     the writer's length, in room it owns;
 *   - the byte count of a UCS1 or UCS2 str comes from the compare masks
 *     (n, plus one per unit from U+0080, one more per unit from U+0800),
 *     not from the compressed keep mask.
 *
 * So neither the store nor the count waits for the other, and the count
 * (the call's result, the prefix byte, the writer's new length) is a
 * short chain from the load: the writer's UCS1 and UCS2 names encode
 * faster this way than with the exact steps, and UCS2 faster still with
 * one load for both the two-byte and the lanes step (below) and every
 * length from 1 (the exact path hands 1-3 units to the scalar loop).
 * Only the writer's short path calls these.
 */
#define U8P_VBMI2_ROOM 128

/* the 16-bit lanes of w that hold a surrogate (U+D800..U+DFFF; lanes past
 * a masked load's n hold 0) */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE __mmask32
u8p_vbmi2_surr16(__m512i w)
{
    return _mm512_cmple_epu16_mask(_mm512_sub_epi16(w, U8P_SPLAT(U8P_S_HD800)),
                                   U8P_SPLAT(U8P_S_H07FF));
}

/* the two-byte step (u8p_vbmi2_two_store) into room: n units in w, the
 * lanes past them zero */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE size_t
u8p_vbmi2_two_room(__m512i w, __mmask32 lanes, size_t n, uint8_t *d)
{
    __mmask32 big;
    __mmask64 keep;
    _mm512_storeu_si512((void *)d, u8p_vbmi2_two_bytes(w, lanes, &big, &keep));
    return n + (size_t)__builtin_popcount((unsigned)big);
}

/* n (1..32) UCS1 code units at src -> UTF-8 at dst (room); returns the
 * byte count */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE size_t
u8p_vbmi2_short_ucs1_room(const uint8_t *src, size_t n, uint8_t *dst)
{
    const __mmask32 lanes = (__mmask32)u8p_low_bits64(n);
    return u8p_vbmi2_two_room(u8p_vbmi2_load_ucs1(src, lanes), lanes, n, dst);
}

/* n (1..32) UCS2 code units at src -> UTF-8 at dst (room): one masked load
 * of all n units; none from U+0800: the two-byte step on it, else (no
 * surrogate) the lanes step on its halves, widened.  Returns the byte
 * count, or (size_t)-1 at a surrogate (what was stored then counts for
 * nothing). */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE size_t
u8p_vbmi2_short_ucs2_room(const uint16_t *src, size_t n, uint8_t *dst)
{
    const __mmask32 lanes = (__mmask32)u8p_low_bits64(n);
    const __m512i w = _mm512_maskz_loadu_epi16(lanes, src);
    const __mmask32 m800 = _mm512_cmpge_epu16_mask(w, U8P_SPLAT(U8P_S_H0800));
    const __mmask32 m80 = _mm512_cmpge_epu16_mask(w, U8P_SPLAT(U8P_S_H0080));
    const u8p_vbmi2_tab t = u8p_vbmi2_tab_make();
    __m512i o;
    if (!m800)
        return u8p_vbmi2_two_room(w, lanes, n, dst);
    if (u8p_vbmi2_surr16(w))
        return (size_t)-1;
    (void)u8p_vbmi2_lanes(&t, _mm512_cvtepu16_epi32(_mm512_castsi512_si256(w)), (__mmask16)lanes,
                          &o);
    _mm512_storeu_si512((void *)dst, o);
    if (n > 16) { /* the second 16 units, behind the first 16's bytes */
        const size_t first = 16 + (size_t)__builtin_popcount((unsigned)(m80 & 0xFFFF)) +
                             (size_t)__builtin_popcount((unsigned)(m800 & 0xFFFF));
        (void)u8p_vbmi2_lanes(&t, _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(w, 1)),
                              (__mmask16)(lanes >> 16), &o);
        _mm512_storeu_si512((void *)(dst + first), o);
    }
    return n + (size_t)__builtin_popcount((unsigned)m80) +
           (size_t)__builtin_popcount((unsigned)m800);
}

/* n (1..21) UCS2 code units at src -> UTF-8 at dst (room), one, two or
 * three bytes each, in one step with no branch on the units' length
 * classes (u8p_vbmi2_short_ucs2_room's test for units from U+0800 depends
 * on the data, and the corpus's UCS2 names are half Latin/Cyrillic/...,
 * half CJK/Indic/..., in no order a predictor can learn).  Each unit c
 * gets three byte slots, [lead3, mid, last]:
 *   lead3 = 0xE0 | c >> 12, kept from U+0800;
 *   mid   = 0xC0 | c >> 6 below U+0800, else 0x80 | (c >> 6 & 0x3F), kept
 *           from U+0080;
 *   last  = c below U+0080, else 0x80 | (c & 0x3F), always kept.
 * The 16-bit lanes of a hold [last, mid], those of b [lead3, 0]; one
 * vpermt2b lays the slots out three bytes a unit (21 units: 63 of the 64
 * bytes; byte 63 takes b's byte 63, 0, and is never kept), a second lays
 * out the keep flags the same way, and vpcompressb squeezes out the slots
 * not kept.  Returns the byte count, or (size_t)-1 at a surrogate (nothing
 * stored then).  At these lengths it beats u8p_vbmi2_short_ucs2_room on
 * such names, UCS2 alone or mixed with the other kinds; its constants are
 * loads folded into the instructions that use them (41 instructions, not
 * 50). */
#define U8P_VBMI2_ANY_UCS2_MAX 21
#define U8P_ANY_W(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, \
                     v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
#define U8P_ANY3(i) 64 + 2 * (i), 2 * (i) + 1, 2 * (i)
#define U8P_ANY_SH 0, 6, 16, 22, 32, 38, 48, 54

U8P_VBMI2_TARGET U8P_ALWAYS_INLINE size_t
u8p_vbmi2_short_ucs2_any_room(const uint16_t *src, size_t n, uint8_t *dst)
{
    /* the constants, one 64-byte row each: loads the compiler folds into
     * the instructions that use them (set1 costs a move and a broadcast) */
    static U8P_ALIGN64 const uint8_t k8[2][64] = {
        /* output byte 3i <- b's byte 2i, 3i + 1 <- a's byte 2i + 1, 3i + 2
         * <- a's byte 2i; byte 63 <- b's byte 63 (0, never kept) */
        {U8P_ANY3(0),  U8P_ANY3(1),  U8P_ANY3(2),  U8P_ANY3(3),  U8P_ANY3(4),  U8P_ANY3(5),
         U8P_ANY3(6),  U8P_ANY3(7),  U8P_ANY3(8),  U8P_ANY3(9),  U8P_ANY3(10), U8P_ANY3(11),
         U8P_ANY3(12), U8P_ANY3(13), U8P_ANY3(14), U8P_ANY3(15), U8P_ANY3(16), U8P_ANY3(17),
         U8P_ANY3(18), U8P_ANY3(19), U8P_ANY3(20), 127},
        /* vpmultishiftqb: a 16-bit lane's bytes <- its bits 0.. and 6.. */
        {U8P_ANY_SH, U8P_ANY_SH, U8P_ANY_SH, U8P_ANY_SH, U8P_ANY_SH, U8P_ANY_SH, U8P_ANY_SH,
         U8P_ANY_SH}};
    static U8P_ALIGN64 const uint16_t k16[8][32] = {
        {U8P_ANY_W(0x3F3F)},  /* the payload bits of [last, mid] */
        {U8P_ANY_W(0xC080)},  /* markers [last, mid] of a two-byte unit */
        {U8P_ANY_W(0x8080)},  /* ... of a three-byte unit */
        {U8P_ANY_W(0x0080)},  /* keep flags: last only (ASCII) */
        {U8P_ANY_W(0x8080)},  /* last and mid */
        {U8P_ANY_W(0x0080)},  /* 0x80: the two-byte units start */
        {U8P_ANY_W(0x0800)},  /* the three-byte units start */
        {U8P_ANY_W(0x00E0)}}; /* a lead3 marker */
    /* hidden from the optimizer, which would otherwise see the uniform
     * rows through the loads and build each with a move and a broadcast */
    const uint16_t(*kp)[32] = k16;
#define K16(i) _mm512_load_si512((const void *)kp[i])
    const __mmask32 lanes = (__mmask32)u8p_low_bits64(n);
    const __m512i c = _mm512_maskz_loadu_epi16(lanes, src);
    const __m512i idx = _mm512_load_si512((const void *)k8[0]);
    __mmask32 m80, m800;
    __m512i a, b, kv;
    __asm__("" : "+r"(kp));
    if (u8p_vbmi2_surr16(c))
        return (size_t)-1;
    m80 = _mm512_cmpge_epu16_mask(c, K16(5));
    m800 = _mm512_cmpge_epu16_mask(c, K16(6));
    /* [last, mid]: (the low 8 bits, bits 6..13) & 0x3F3F | markers; c
     * itself below U+0080 (its mid is never kept) */
    a = _mm512_ternarylogic_epi32(
        _mm512_multishift_epi64_epi8(_mm512_load_si512((const void *)k8[1]), c),
        K16(0), _mm512_mask_blend_epi16(m800, K16(1), K16(2)), 0xEA);
    a = _mm512_mask_blend_epi16(m80, c, a);
    b = _mm512_or_si512(_mm512_srli_epi16(c, 12), K16(7));
    kv = _mm512_maskz_mov_epi16(lanes, _mm512_mask_blend_epi16(m80, K16(3), K16(4)));
    _mm512_storeu_si512(
        (void *)dst,
        _mm512_maskz_compress_epi8(
            _mm512_movepi8_mask(_mm512_permutex2var_epi8(kv, idx, _mm512_maskz_mov_epi16(m800, K16(3)))),
            _mm512_permutex2var_epi8(a, idx, b)));
#undef K16
    return n + (size_t)__builtin_popcountll(((uint64_t)m800 << 32) | m80);
}
#undef U8P_ANY_W
#undef U8P_ANY3
#undef U8P_ANY_SH

/* n (1..31) UCS4 code points at src -> UTF-8 at dst (room) by the lanes
 * step, 16 a step, each a plain store (the count from the keep mask, as in
 * u8p_vbmi2_short_lanes: counting from three compares instead makes
 * write_strings slower); returns the byte count, or (size_t)-1 at a
 * surrogate.  The writer takes it from one code point (the exact path
 * leaves UCS4 below U8P_VBMI2_MIN_UNITS_UCS4 to the scalar loop). */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE size_t
u8p_vbmi2_short_ucs4_room(const uint32_t *src, size_t n, uint8_t *dst)
{
    const u8p_vbmi2_tab t = u8p_vbmi2_tab_make();
    uint8_t *d = dst;
    size_t i;
    for (i = 0; i < n; i += 16) {
        const __mmask16 lanes = (__mmask16)u8p_low_bits64(n - i < 16 ? n - i : 16);
        const __m512i c = _mm512_maskz_loadu_epi32(lanes, src + i);
        __m512i o;
        size_t k;
        if (u8p_vbmi2_surr32(c, lanes))
            return (size_t)-1;
        k = u8p_vbmi2_lanes(&t, c, lanes, &o);
        _mm512_storeu_si512((void *)d, o);
        d += k;
    }
    return (size_t)(d - dst);
}

/* A UCS4 str of one code point (PEP 393 stores a str in its narrowest
 * kind, so that code point is from U+10000): its four UTF-8 bytes at dst
 * (room) from shifts and masks, one 4-byte store; (size_t)-1 for a value
 * outside U+10000..U+10FFFF (a str built out of the canonical form by C
 * code), which the exact path then takes.  On strs of one emoji it beats
 * the scalar loop the exact path uses, and the lanes step, whose set-up
 * costs more than the encode of one code point. */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE size_t
u8p_vbmi2_one_ucs4_room(const uint32_t *src, uint8_t *dst)
{
    const uint32_t c = src[0];
    const uint32_t b = 0x808080F0u | c >> 18 | (c >> 12 & 0x3F) << 8 | (c >> 6 & 0x3F) << 16 |
                       (c & 0x3F) << 24;
    if (c - 0x10000u > 0xFFFFFu)
        return (size_t)-1;
    memcpy(dst, &b, 4); /* little-endian: x86 */
    return 4;
}

/* Past 32 code units, two steps, the second stored behind the first's
 * bytes; the writer's room steps up to its short path's limits (UTF-8
 * under 128 bytes at most: 127 ASCII characters, 63 UCS1, 42 UCS2 units;
 * UCS4 stops at 31, which one step above takes), so that a str of 33-63
 * code points costs no second trip through the writer (that trip, to the
 * exact steps and the kernels, makes write_string of Latin-1, Cyrillic and
 * ASCII strs of 40-64 code points slower). */

/* n (1..127) ASCII characters at src -> dst (room: 128 bytes): two masked
 * loads of up to 64 and two plain 64-byte stores, no branch on n (the
 * second load's mask is empty below 65). */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE void
u8p_vbmi2_copy_ascii_room128(const uint8_t *src, size_t n, uint8_t *dst)
{
    const size_t hi = n > 64 ? n - 64 : 0;
    _mm512_storeu_si512((void *)dst, _mm512_maskz_loadu_epi8(u8p_low_bits64(n), src));
    _mm512_storeu_si512((void *)(dst + 64),
                        _mm512_maskz_loadu_epi8(u8p_low_bits64(hi), src + 64));
}

/* n (33..63) UCS1 code units at src -> UTF-8 at dst (room: 128 bytes: the
 * first 32 units take at most 64, the second step's store 64 more);
 * returns the byte count */
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE size_t
u8p_vbmi2_short_ucs1_room63(const uint8_t *src, size_t n, uint8_t *dst)
{
    const size_t first = u8p_vbmi2_short_ucs1_room(src, 32, dst);
    return first + u8p_vbmi2_short_ucs1_room(src + 32, n - 32, dst + first);
}

/* n (33..42) UCS2 code units at src -> UTF-8 at dst, with
 * U8P_VBMI2_ROOM_UCS2_42 bytes of room (the first 32 units take at most
 * 96 bytes, the second step's store 64 more); returns the byte count, or
 * (size_t)-1 at a surrogate (what was stored then counts for nothing). */
#define U8P_VBMI2_ROOM_UCS2_42 160
U8P_VBMI2_TARGET U8P_ALWAYS_INLINE size_t
u8p_vbmi2_short_ucs2_room42(const uint16_t *src, size_t n, uint8_t *dst)
{
    const size_t first = u8p_vbmi2_short_ucs2_room(src, 32, dst);
    size_t second;
    if (first == (size_t)-1)
        return (size_t)-1;
    second = u8p_vbmi2_short_ucs2_any_room(src + 32, n - 32, dst + first);
    return second == (size_t)-1 ? (size_t)-1 : first + second;
}

#else
#define U8P_HAVE_VBMI2_SHORT 0
#endif

#endif /* UTF8PFX_SHORT_VBMI2_H */
