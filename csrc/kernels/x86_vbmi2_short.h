/*
 * The AVX-512 VBMI2 two-byte step for short strings: up to 32 code units,
 * each below U+0800, to UTF-8 in one masked load, one byte compress and one
 * masked store.  Shared by the VBMI2 encoders (x86_avx512.c) and by the
 * writer's short path, which is built a second time for this target
 * (csrc/writer_short.h) so that a short UCS1 str, or a UCS2 str with no code
 * point from U+0800, costs no call into the kernels.  Plain C over arrays,
 * no Python.h; every function reads and writes exactly its input and output
 * (masked loads and stores), so none needs slack past either end.
 *
 * U8P_HAVE_VBMI2_SHORT is 1 where this compiles (x86-64 with gcc or clang,
 * as U8P_X86_SIMD in simd_internal.h); a caller must run these functions
 * only while the kernel table in use is the VBMI2 one (the CPU has AVX-512
 * F, BW, CD, VBMI and VBMI2: dispatch.c asks cpuid and XCR0).
 */
#ifndef UTF8PFX_X86_VBMI2_SHORT_H
#define UTF8PFX_X86_VBMI2_SHORT_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define U8P_HAVE_VBMI2_SHORT 1

#include <immintrin.h>

/* The table in use while these may run: the avx512 level's on a CPU with
 * VBMI2 (x86_avx512.c; dispatch picks it only there). */
extern const u8p_kernels u8p_kernels_avx512_mixed;
#define U8P_VBMI2_SHORT_OK(K) ((K) == &u8p_kernels_avx512_mixed)

/* the "VBMI2" table's instruction sets: also VBMI (vpmultishiftqb) and CD
 * (vplzcntd) for its other steps */
#define U8P_VBMI2_TARGET \
    __attribute__((target("avx512f,avx512bw,avx512cd,avx512vbmi,avx512vbmi2,avx2,popcnt")))

/* The lanes of w (16-bit, each below U+0800) -> UTF-8 at d, one or two
 * bytes each; returns the byte count.  Each lane holds its two-byte form
 * [0xC0 | c >> 6, 0x80 | (c & 0x3F)] (little-endian) or c itself, and
 * vpcompressb keeps its low byte, and its high byte for c >= 0x80. */
U8P_VBMI2_TARGET static inline __attribute__((always_inline)) size_t
u8p_vbmi2_two_store(__m512i w, __mmask32 lanes, uint8_t *d)
{
    const __mmask32 big = _mm512_cmpge_epu16_mask(w, _mm512_set1_epi16(0x80));
    const __m512i two = _mm512_or_si512(
        _mm512_or_si512(_mm512_srli_epi16(w, 6),
                        _mm512_slli_epi16(_mm512_and_si512(w, _mm512_set1_epi16(0x3F)), 8)),
        _mm512_set1_epi16((short)0x80C0));
    const __m512i keepv = _mm512_maskz_mov_epi16(
        lanes, _mm512_mask_blend_epi16(big, _mm512_set1_epi16(0x0080),
                                       _mm512_set1_epi16((short)0x8080)));
    const __mmask64 keep = _mm512_movepi8_mask(keepv);
    const size_t cnt = (size_t)__builtin_popcountll(keep);
    /* cnt <= 64; the mask of its low bits without a shift by 64 */
    const __mmask64 out = cnt >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << cnt) - 1);
    _mm512_mask_storeu_epi8(d, out,
                            _mm512_maskz_compress_epi8(keep, _mm512_mask_blend_epi16(big, w, two)));
    return cnt;
}

/* n (1..32) UCS1 code units at src -> UTF-8 at dst (at most 2n bytes);
 * returns the byte count. */
U8P_VBMI2_TARGET static inline __attribute__((always_inline)) size_t
u8p_vbmi2_short_ucs1(const uint8_t *src, size_t n, uint8_t *dst)
{
    const __mmask32 lanes = (__mmask32)(((uint64_t)1 << n) - 1);
    const __m512i w = _mm512_cvtepu8_epi16(
        _mm512_castsi512_si256(_mm512_maskz_loadu_epi8((__mmask64)lanes, src)));
    return u8p_vbmi2_two_store(w, lanes, dst);
}

/* n (1..32) UCS2 code units at src -> UTF-8 at dst (at most 2n bytes) when
 * none is from U+0800 (so none is a surrogate either); returns the byte
 * count, or (size_t)-1 with nothing written when one is. */
U8P_VBMI2_TARGET static inline __attribute__((always_inline)) size_t
u8p_vbmi2_short_ucs2(const uint16_t *src, size_t n, uint8_t *dst)
{
    const __mmask32 lanes = (__mmask32)(((uint64_t)1 << n) - 1);
    const __m512i w = _mm512_maskz_loadu_epi16(lanes, src);
    if (_mm512_cmpge_epu16_mask(w, _mm512_set1_epi16(0x800)))
        return (size_t)-1;
    return u8p_vbmi2_two_store(w, lanes, dst);
}

#else
#define U8P_HAVE_VBMI2_SHORT 0
#endif

#endif /* UTF8PFX_X86_VBMI2_SHORT_H */
