/*
 * Vector constants of the x86 encoders (x86_enc_impl.h, at 128 and 256
 * bits: a 128-bit kernel reads the low half of an entry) and of the AVX2
 * short decoder (decode_x86.c), in their own
 * translation unit on purpose: when gcc sees the values it rematerializes
 * every splat inside the hot loops (mov imm, vmovd, vpbroadcast: three uops
 * each, a dozen constants a block) instead of keeping them in registers or
 * reading them from memory.  Loaded from here they are plain memory
 * operands.
 */
#include "x86_internal.h"
#include "../short_vbmi2.h"

#if U8P_X86_SIMD

#define W8(x) {.w = {x, x, x, x, x, x, x, x}}
#define H16(x) {.h = {x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}}
#define B32(x) {.b = {x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, \
                      x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x}}

/* the AVX-512 steps' splats (short_vbmi2.h says why they are read from
 * memory), one 32-bit lane each */
const uint32_t u8p_splat32[U8P_S_COUNT] = {
    [U8P_S_H0080] = 0x00800080u, [U8P_S_H003F] = 0x003F003Fu, [U8P_S_H80C0] = 0x80C080C0u,
    [U8P_S_H8080] = 0x80808080u, [U8P_S_H0800] = 0x08000800u, [U8P_S_WF800] = 0xFFFFF800u,
    [U8P_S_WD800] = 0x0000D800u, [U8P_S_HD800] = 0xD800D800u, [U8P_S_H07FF] = 0x07FF07FFu,
};

U8P_ALIGN32 const u8p_v256 u8p_x86_k[U8P_K_COUNT] = {
    /* 32-bit lanes */
    [U8P_K_W7F] = W8(0x7Fu), [U8P_K_W7FF] = W8(0x7FFu), [U8P_K_WFFFF] = W8(0xFFFFu),
    [U8P_K_WNOT7F] = W8(~0x7Fu), [U8P_K_WNOT7FF] = W8(~0x7FFu),
    [U8P_K_WNOTFFFF] = W8(~0xFFFFu), [U8P_K_WD800] = W8(0xD800u),
    [U8P_K_SEXT_SHUF] = {.b = {1, 2, 0, 1, 5, 6, 4, 5, 9, 10, 8, 9, 13, 14, 12, 13,
                               1, 2, 0, 1, 5, 6, 4, 5, 9, 10, 8, 9, 13, 14, 12, 13}},
    [U8P_K_W0FC0FC00] = W8(0x0FC0FC00u), [U8P_K_W04000040] = W8(0x04000040u),
    [U8P_K_W003F03F0] = W8(0x003F03F0u), [U8P_K_W01000010] = W8(0x01000010u),
    /* UTF-8 marker bits by (-k) & 3 for a sequence of 1 + k bytes */
    [U8P_K_MARKS] = {.w = {0, 0x808080F0u, 0x8080E000u, 0x80C00000u,
                           0, 0x808080F0u, 0x8080E000u, 0x80C00000u}},
    /* the per-threshold deltas of those markers (128-bit kernels xor them) */
    [U8P_K_W80C00000] = W8(0x80C00000u), [U8P_K_W0040E000] = W8(0x0040E000u),
    [U8P_K_W000060F0] = W8(0x000060F0u),
    [U8P_K_IOTA32] = {.w = {0, 1, 2, 3, 4, 5, 6, 7}},
    /* 16-bit lanes */
    [U8P_K_H003F] = H16(0x003Fu), [U8P_K_H007F] = H16(0x007Fu), [U8P_K_H80C0] = H16(0x80C0u),
    [U8P_K_HFF80] = H16(0xFF80u), [U8P_K_HF800] = H16(0xF800u), [U8P_K_HD800] = H16(0xD800u),
    [U8P_K_H3F7F] = H16(0x3F7Fu), [U8P_K_H8000] = H16(0x8000u), [U8P_K_H0FFC] = H16(0x0FFCu),
    [U8P_K_H0140] = H16(0x0140u), [U8P_K_H4000] = H16(0x4000u), [U8P_K_H7800] = H16(0x7800u),
    [U8P_K_H0080] = H16(0x0080u), [U8P_K_HC0E0] = H16(0xC0E0u),
    /* each 16-bit lane's low byte in both of its bytes */
    [U8P_K_DUPLO] = {.b = {0, 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 14, 14,
                           0, 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 14, 14}},
    [U8P_K_IOTA16] = {.h = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
    /* bytes */
    [U8P_K_BBF] = B32(0xBFu), [U8P_K_BC2] = B32(0xC2u),
    /* the short decoder's: its 16-bit masks, and the lead and continuation
     * bytes its signed compares test against */
    [U8P_K_H001F] = H16(0x001Fu), [U8P_K_H00DF] = H16(0x00DFu),
    [U8P_K_BA0] = B32(0xA0u), [U8P_K_BC0] = B32(0xC0u), [U8P_K_BC3] = B32(0xC3u),
    [U8P_K_BDF] = B32(0xDFu), [U8P_K_BE0] = B32(0xE0u), [U8P_K_BED] = B32(0xEDu),
    [U8P_K_BEF] = B32(0xEFu), [U8P_K_B40] = B32(0x40u),
};

#else
typedef int u8p_x86_consts_empty; /* ISO C forbids an empty file */
#endif
