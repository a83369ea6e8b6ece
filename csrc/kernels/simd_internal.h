/*
 * Private to csrc/kernels: what the SIMD files and dispatch.c share (the
 * writer sees it only through x86_vbmi2_short.h).
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

/* Below this many code units a UCS2/UCS4 encoder hands the whole input to
 * the scalar loop: vector set-up and the surrogate look-ahead cost more
 * than they save on a handful of code points (measured on Zen 3: SSE and
 * AVX2 took 1.5-3x the scalar time at 6 units, about the same at 14). */
#ifndef U8P_SIMD_MIN_UNITS
#define U8P_SIMD_MIN_UNITS 16
#endif

/* A mask of the low k bits, k in 0..64 (AVX-512 masked loads and stores
 * of the first k elements). */
static inline uint64_t
u8p_low_bits64(size_t k)
{
    return k >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1);
}

#if U8P_X86_SIMD
/* The AVX2 kernels, which the AVX-512 table uses where they are faster. */
size_t u8p_avx2_len_ucs1(const uint8_t *src, size_t n);
size_t u8p_avx2_len_ucs2(const uint16_t *src, size_t n, size_t *nsurr);
size_t u8p_avx2_len_ucs4(const uint32_t *src, size_t n, size_t *nsurr);
size_t u8p_avx2_enc_ucs1(const uint8_t *src, size_t n, uint8_t *dst);
size_t u8p_avx2_enc_ucs2(const uint16_t *src, size_t n, uint8_t *dst, size_t *done);
size_t u8p_avx2_enc_ucs4(const uint32_t *src, size_t n, uint8_t *dst, size_t *done);
/* Vector constants of the x86 encoders (x86_consts.c says why they live in
 * another file); index by enum u8p_x86_k. */
#if defined(_MSC_VER)
#define U8P_ALIGN32 __declspec(align(32))
#else
#define U8P_ALIGN32 __attribute__((aligned(32)))
#endif
typedef union {
    uint8_t b[32];
    uint16_t h[16];
    uint32_t w[8];
} u8p_v256;
enum u8p_x86_k {
    U8P_K_W7F, U8P_K_W7FF, U8P_K_WFFFF, U8P_K_WNOT7F, U8P_K_WNOT7FF, U8P_K_WNOTFFFF,
    U8P_K_WD800, U8P_K_SEXT_SHUF, U8P_K_W0FC0FC00, U8P_K_W04000040, U8P_K_W003F03F0,
    U8P_K_W01000010, U8P_K_MARKS, U8P_K_W80C00000, U8P_K_W0040E000, U8P_K_W000060F0,
    U8P_K_IOTA32, U8P_K_H003F, U8P_K_H007F, U8P_K_H80C0, U8P_K_HFF80, U8P_K_HF800,
    U8P_K_HD800, U8P_K_H3F00, U8P_K_H8080, U8P_K_H0040, U8P_K_H0F00, U8P_K_HE000,
    U8P_K_IOTA16, U8P_K_BBF, U8P_K_BC2, U8P_K_COUNT
};
extern U8P_ALIGN32 const u8p_v256 u8p_x86_k[U8P_K_COUNT];

/* AVX-512 with VBMI2 (vpcompressb): the level's table on such CPUs mixes
 * VBMI2 and AVX2 encoders by input size; the all-VBMI2 table is reached
 * through u8p_kernels_variants only (for tests: slower than AVX2's on long
 * strings, AMD Zen 4). */
extern const u8p_kernels u8p_kernels_avx512_mixed;
extern const u8p_kernels u8p_kernels_avx512_vbmi2;
/* whether the CPU (and OS) can run the AVX-512 level with VBMI2 */
int u8p_x86_has_vbmi2(void);
#endif

#endif /* UTF8PFX_SIMD_INTERNAL_H */
