/*
 * Private to csrc/kernels: what the x86 SIMD files (this folder) and the
 * dispatchers share.  Empty unless U8P_X86_SIMD (kernels.h).
 */
#ifndef UTF8PFX_X86_INTERNAL_H
#define UTF8PFX_X86_INTERNAL_H

#include "../attrs.h"
#include "../generic/simd_internal.h"
#include "../kernels.h"

#if U8P_X86_SIMD
#include <immintrin.h>

/* Hides a value from the compiler, which then keeps a loop's constant in a
 * register: knowing it, gcc rebuilds a splat from a general register at
 * every use in the loop (an immediate moved into the vector unit and
 * broadcast; see x86_consts.c).  Nothing under emulation (tests/c/emu,
 * whose immintrin.h defines U8P_EMULATED), where vectors are not
 * registers. */
#ifdef U8P_EMULATED
#define U8P_OPAQUE_V(x) ((void)0)
#define U8P_OPAQUE_K(x) ((void)0)
#else
#define U8P_OPAQUE_V(x) __asm__("" : "+v"(x))
#define U8P_OPAQUE_K(x) __asm__("" : "+k"(x))
#endif

/* The AVX2 kernels, which the AVX-512 table uses where they are faster. */
size_t u8p_avx2_len_ucs2(const uint16_t *src, size_t n, size_t *nsurr);
size_t u8p_avx2_len_ucs4(const uint32_t *src, size_t n, size_t *nsurr);
size_t u8p_avx2_enc_ucs1(const uint8_t *src, size_t n, uint8_t *dst);
size_t u8p_avx2_enc_ucs1_room(const uint8_t *src, size_t n, uint8_t *dst);
size_t u8p_avx2_enc_ucs2_room(const uint16_t *src, size_t n, uint8_t *dst, size_t *done);
size_t u8p_avx2_enc_ucs4_room(const uint32_t *src, size_t n, uint8_t *dst, size_t *done);
size_t u8p_avx2_enc_ucs2(const uint16_t *src, size_t n, uint8_t *dst, size_t *done);
size_t u8p_avx2_enc_ucs4(const uint32_t *src, size_t n, uint8_t *dst, size_t *done);
size_t u8p_avx2_enc_ucs2_pass(const uint16_t *src, size_t n, uint8_t *dst, int *surr);
size_t u8p_avx2_enc_ucs4_pass(const uint32_t *src, size_t n, uint8_t *dst, int *surr);
/* Vector constants of the x86 encoders and short decoder (x86_consts.c says
 * why they live in another file); index by enum u8p_x86_k. */
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
    U8P_K_HD800, U8P_K_H3F7F, U8P_K_H8000, U8P_K_H0FFC, U8P_K_H0140, U8P_K_H4000,
    U8P_K_DUPLO, U8P_K_H7800, U8P_K_H0080, U8P_K_HC0E0,
    U8P_K_IOTA16, U8P_K_BBF, U8P_K_BC2,
    /* the short decoder's (decode_x86.c) */
    U8P_K_H001F, U8P_K_H00DF, U8P_K_BA0, U8P_K_BC0, U8P_K_BC3, U8P_K_BDF, U8P_K_BE0,
    U8P_K_BED, U8P_K_BEF, U8P_K_B40, U8P_K_COUNT
};
extern U8P_ALIGN32 const u8p_v256 u8p_x86_k[U8P_K_COUNT];

/* AVX-512 with VBMI2 (vpcompressb): the level's table on such CPUs
 * (u8p_kernels_avx512_mixed, kernels.h) mixes VBMI2 and AVX2 encoders by
 * input size; the all-VBMI2 table is reached through u8p_kernels_variants
 * only, for tests: on long strings its encoders are slower than AVX2's. */
extern const u8p_kernels u8p_kernels_avx512_vbmi2;
/* whether the CPU (and OS) can run the AVX-512 level with VBMI2 */
int u8p_x86_has_vbmi2(void);
/* cpuid's vendor string is GenuineIntel (decode_dispatch.c picks tables by it) */
int u8p_x86_is_intel(void);
#endif

#endif /* UTF8PFX_X86_INTERNAL_H */
