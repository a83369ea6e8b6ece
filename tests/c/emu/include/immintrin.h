/*
 * Stand-in for the compiler's <immintrin.h> in the emulated kernel build
 * (tests/c/emu.mk puts this directory first on the include path): every
 * Intel intrinsic name resolves to SIMDe's portable implementation or to a
 * fill-in of u8p_emu.h, so the SSE4.1, AVX2 and AVX-512 kernels compile to
 * baseline x86-64 code and run on any x86-64 CPU.
 *
 * The kernels pick their instruction set per function with
 * __attribute__((target("..."))).  Left in place, that attribute would let
 * the compiler emit those instructions for the emulation code inlined into
 * the kernels, so this header makes `target(...)` expand to nothing: the
 * attribute list becomes empty and the build needs nothing beyond the
 * baseline (-march=x86-64).
 */
#ifndef U8P_EMU_IMMINTRIN_H
#define U8P_EMU_IMMINTRIN_H

#define U8P_EMULATED 1
#ifndef SIMDE_ENABLE_NATIVE_ALIASES
#define SIMDE_ENABLE_NATIVE_ALIASES 1
#endif
#include "../u8p_emu.h"

/* The fill-ins (see u8p_emu.h for why the masked loads and stores replace
 * SIMDe's). */
#undef _mm512_cmpeq_epi16_mask
#define _mm512_cmpeq_epi16_mask u8p_emu_mm512_cmpeq_epi16_mask
#undef _mm512_cvtepi32_epi8
#define _mm512_cvtepi32_epi8 u8p_emu_mm512_cvtepi32_epi8
#undef _mm512_cvtepu8_epi16
#define _mm512_cvtepu8_epi16 u8p_emu_mm512_cvtepu8_epi16
#undef _mm512_maskz_compress_epi8
#define _mm512_maskz_compress_epi8 u8p_emu_mm512_maskz_compress_epi8
#undef _mm512_maskz_loadu_epi8
#define _mm512_maskz_loadu_epi8 u8p_emu_mm512_maskz_loadu_epi8
#undef _mm512_maskz_loadu_epi16
#define _mm512_maskz_loadu_epi16 u8p_emu_mm512_maskz_loadu_epi16
#undef _mm512_maskz_loadu_epi32
#define _mm512_maskz_loadu_epi32 u8p_emu_mm512_maskz_loadu_epi32
#undef _mm512_mask_storeu_epi8
#define _mm512_mask_storeu_epi8 u8p_emu_mm512_mask_storeu_epi8
#undef _mm512_cvtepu8_epi32
#define _mm512_cvtepu8_epi32 u8p_emu_mm512_cvtepu8_epi32
#undef _mm512_alignr_epi8
#define _mm512_alignr_epi8 u8p_emu_mm512_alignr_epi8
#undef _mm512_alignr_epi64
#define _mm512_alignr_epi64 u8p_emu_mm512_alignr_epi64
#undef _mm512_maskz_compress_epi16
#define _mm512_maskz_compress_epi16 u8p_emu_mm512_maskz_compress_epi16
#undef _mm512_mask_storeu_epi16
#define _mm512_mask_storeu_epi16 u8p_emu_mm512_mask_storeu_epi16
#undef _mm256_maskload_epi32
#define _mm256_maskload_epi32 u8p_emu_mm256_maskload_epi32

/* SIMDe's aliases are function-like macros of fixed arity, so a call whose
 * arguments come from one macro (_mm_setr_epi8(ROW) with ROW expanding to
 * 16 values) would not compile; name-only aliases of the set/setr family
 * (all of them functions in SIMDe) take arguments as the real ones do. */
#undef _mm_set_epi8
#define _mm_set_epi8 simde_mm_set_epi8
#undef _mm_setr_epi8
#define _mm_setr_epi8 simde_mm_setr_epi8
#undef _mm_set_epi16
#define _mm_set_epi16 simde_mm_set_epi16
#undef _mm_setr_epi16
#define _mm_setr_epi16 simde_mm_setr_epi16
#undef _mm_set_epi32
#define _mm_set_epi32 simde_mm_set_epi32
#undef _mm_setr_epi32
#define _mm_setr_epi32 simde_mm_setr_epi32
#undef _mm_set_epi64x
#define _mm_set_epi64x simde_mm_set_epi64x
#undef _mm256_set_epi8
#define _mm256_set_epi8 simde_mm256_set_epi8
#undef _mm256_setr_epi8
#define _mm256_setr_epi8 simde_mm256_setr_epi8
#undef _mm256_set_epi16
#define _mm256_set_epi16 simde_mm256_set_epi16
#undef _mm256_setr_epi16
#define _mm256_setr_epi16 simde_mm256_setr_epi16
#undef _mm256_set_epi32
#define _mm256_set_epi32 simde_mm256_set_epi32
#undef _mm256_setr_epi32
#define _mm256_setr_epi32 simde_mm256_setr_epi32
#undef _mm256_set_epi64x
#define _mm256_set_epi64x simde_mm256_set_epi64x
#undef _mm512_set_epi8
#define _mm512_set_epi8 simde_mm512_set_epi8
#undef _mm512_set_epi16
#define _mm512_set_epi16 simde_mm512_set_epi16
#undef _mm512_set_epi32
#define _mm512_set_epi32 simde_mm512_set_epi32
#undef _mm512_setr_epi32
#define _mm512_setr_epi32 simde_mm512_setr_epi32
#undef _mm512_set_epi64
#define _mm512_set_epi64 simde_mm512_set_epi64

/* __attribute__((target("avx2,popcnt"))) -> __attribute__(()) */
#define target(...)

#endif /* U8P_EMU_IMMINTRIN_H */
