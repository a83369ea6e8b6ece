/*
 * Private to csrc/kernels: what the SIMD files and dispatch.c share.
 *
 * U8P_X86_SIMD is 1 where the x86 SIMD files compile their kernels: x86-64
 * with a GNU-compatible compiler (gcc, clang), because each function picks
 * its instruction set with __attribute__((target(...))) while the file is
 * built with baseline flags.  Elsewhere those files compile to nothing and
 * dispatch never names their tables.
 */
#ifndef UTF8PFX_SIMD_INTERNAL_H
#define UTF8PFX_SIMD_INTERNAL_H

#include "kernels.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define U8P_X86_SIMD 1
#else
#define U8P_X86_SIMD 0
#endif

#if defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define U8P_ARM_NEON 1
#else
#define U8P_ARM_NEON 0
#endif

/* Every SIMD encoder works on blocks that must be free of surrogates; it
 * scans ahead this many code units at a time for the first one. */
#define U8P_SURR_SCAN_CHUNK 512

#if U8P_X86_SIMD
/* The AVX2 encoders, reused by the AVX-512 table on CPUs without VBMI2. */
size_t u8p_avx2_enc_ucs1(const uint8_t *src, size_t n, uint8_t *dst);
size_t u8p_avx2_enc_ucs2(const uint16_t *src, size_t n, uint8_t *dst, size_t *done);
size_t u8p_avx2_enc_ucs4(const uint32_t *src, size_t n, uint8_t *dst, size_t *done);
/* AVX-512 with VBMI2 (vpcompressb): dispatch returns it for the "avx512"
 * level when the CPU has VBMI2.  Its name is "avx512" as well. */
extern const u8p_kernels u8p_kernels_avx512_vbmi2;
#endif

#endif /* UTF8PFX_SIMD_INTERNAL_H */
