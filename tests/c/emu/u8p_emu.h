/*
 * Portable emulation of the x86 intrinsics the kernels use, for building
 * csrc/kernels a second time so that every level (SSE4.1, AVX2, AVX-512)
 * runs on any x86-64 CPU (tests/c/emu.mk, tests/c/emu/README).
 *
 * The bulk comes from SIMDe (SIMD Everywhere, PyPI `cmeel-simde`, headers
 * only, not vendored: -I points at the installed copy).  This header adds
 * what SIMDe 0.8.2 lacks, and replaces SIMDe's masked loads and stores:
 * SIMDe implements them as a full-width access (a load followed by a
 * blend; for _mm512_mask_storeu_epi16 a full store that writes ZEROS over
 * the masked-out elements), but the hardware leaves masked-out memory alone
 * and suppresses faults there, and the kernels rely on it to load and store
 * exactly up to the end of a buffer (the harness puts a guard page there).  Each definition below follows the "Operation"
 * pseudo-code of Intel's Intrinsics Guide element by element, touches
 * memory only where the mask bit is set, and is checked on its own against
 * the native instruction by tests/c/test_emu_intrinsics.c wherever the CPU
 * has it.
 *
 * Names here are u8p_emu_mm*_...; emu/include/immintrin.h maps the Intel
 * names onto them for the kernel build.  Nothing in here is SIMDe code.
 */
#ifndef U8P_EMU_H
#define U8P_EMU_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef SIMDE_NO_NATIVE
#define SIMDE_NO_NATIVE 1 /* every intrinsic emulated, SSE2 included */
#endif
#include <simde/x86/avx512.h>
#include <simde/x86/gfni.h>

#define U8P_EMU_INLINE static inline

/* Vectors go in and out of element arrays by memcpy: no aliasing
 * questions, and the loops read like the pseudo-code. */

/* ------------------------------------------------------------ compares */

/* VPCMPEQW k, zmm, zmm:
 *   FOR j := 0 to 31: i := j*16; k[j] := (a[i+15:i] == b[i+15:i]) ? 1 : 0 */
U8P_EMU_INLINE simde__mmask32
u8p_emu_mm512_cmpeq_epi16_mask(simde__m512i a, simde__m512i b)
{
    uint16_t x[32], y[32];
    simde__mmask32 k = 0;
    int j;
    memcpy(x, &a, 64);
    memcpy(y, &b, 64);
    for (j = 0; j < 32; j++)
        if (x[j] == y[j])
            k |= (simde__mmask32)1 << j;
    return k;
}

/* ------------------------------------------------------------- converts */

/* VPMOVDB xmm, zmm:
 *   FOR j := 0 to 15: i := 32*j; k := 8*j; dst[k+7:k] := Truncate8(a[i+31:i]) */
U8P_EMU_INLINE simde__m128i
u8p_emu_mm512_cvtepi32_epi8(simde__m512i a)
{
    uint32_t x[16];
    uint8_t r[16];
    simde__m128i out;
    int j;
    memcpy(x, &a, 64);
    for (j = 0; j < 16; j++)
        r[j] = (uint8_t)(x[j] & 0xFF);
    memcpy(&out, r, 16);
    return out;
}

/* VPMOVZXBW zmm, ymm:
 *   FOR j := 0 to 31: i := j*8; l := j*16; dst[l+15:l] := ZeroExtend16(a[i+7:i]) */
U8P_EMU_INLINE simde__m512i
u8p_emu_mm512_cvtepu8_epi16(simde__m256i a)
{
    uint8_t x[32];
    uint16_t r[32];
    simde__m512i out;
    int j;
    memcpy(x, &a, 32);
    for (j = 0; j < 32; j++)
        r[j] = x[j];
    memcpy(&out, r, 64);
    return out;
}

/* VPMOVZXBD zmm, xmm:
 *   FOR j := 0 to 15: i := 32*j; k := 8*j; dst[i+31:i] := ZeroExtend32(a[k+7:k]) */
U8P_EMU_INLINE simde__m512i
u8p_emu_mm512_cvtepu8_epi32(simde__m128i a)
{
    uint8_t x[16];
    uint32_t r[16];
    simde__m512i out;
    int j;
    memcpy(x, &a, 16);
    for (j = 0; j < 16; j++)
        r[j] = x[j];
    memcpy(&out, r, 64);
    return out;
}

/* --------------------------------------------------------------- aligns */

/* VPALIGNR zmm, zmm, zmm, imm8 (BW), per 128-bit lane:
 *   FOR j := 0 to 3: i := j*128
 *     tmp[255:0] := ((a[i+127:i] << 128)[255:0] OR b[i+127:i]) >> (imm8*8)
 *     dst[i+127:i] := tmp[127:0] */
U8P_EMU_INLINE simde__m512i
u8p_emu_mm512_alignr_epi8(simde__m512i a, simde__m512i b, int imm8)
{
    uint8_t x[64], y[64], r[64], tmp[32];
    simde__m512i out;
    int j, t, sh = imm8 & 0xFF;
    memcpy(x, &a, 64);
    memcpy(y, &b, 64);
    for (j = 0; j < 4; j++) {
        memcpy(tmp, y + 16 * j, 16);      /* low half: b's lane */
        memcpy(tmp + 16, x + 16 * j, 16); /* high half: a's lane */
        for (t = 0; t < 16; t++)
            r[16 * j + t] = t + sh < 32 ? tmp[t + sh] : 0;
    }
    memcpy(&out, r, 64);
    return out;
}

/* VALIGNQ zmm, zmm, zmm, imm8 (F):
 *   temp[1023:512] := a[511:0]; temp[511:0] := b[511:0]
 *   temp[1023:0] := temp[1023:0] >> (64*imm8[2:0]); dst[511:0] := temp[511:0] */
U8P_EMU_INLINE simde__m512i
u8p_emu_mm512_alignr_epi64(simde__m512i a, simde__m512i b, int imm8)
{
    uint64_t tmp[16], r[8];
    simde__m512i out;
    int j, sh = imm8 & 7;
    memcpy(tmp, &b, 64);
    memcpy(tmp + 8, &a, 64);
    for (j = 0; j < 8; j++)
        r[j] = tmp[j + sh];
    memcpy(&out, r, 64);
    return out;
}

/* ------------------------------------------------------------- compress */

/* VPLZCNTD zmm, zmm (AVX-512 CD; SIMDe has the 128-bit form only):
 *   FOR j := 0 to 15: dst.dword[j] := the number of leading zero bits of
 *   a.dword[j] (32 for 0) */
U8P_EMU_INLINE simde__m512i
u8p_emu_mm512_lzcnt_epi32(simde__m512i a)
{
    uint32_t x[16];
    simde__m512i out;
    int j;
    memcpy(x, &a, 64);
    for (j = 0; j < 16; j++) {
        uint32_t v = x[j], n = 0;
        while (n < 32 && !(v & 0x80000000u)) {
            v <<= 1;
            n++;
        }
        x[j] = n;
    }
    memcpy(&out, x, 64);
    return out;
}

/* _mm512_reduce_add_epi32 (AVX-512 F, a sequence; not in SIMDe): the sum
 * of the 16 dwords, modulo 2^32 */
U8P_EMU_INLINE int
u8p_emu_mm512_reduce_add_epi32(simde__m512i a)
{
    uint32_t x[16], sum = 0;
    int j;
    memcpy(x, &a, 64);
    for (j = 0; j < 16; j++)
        sum += x[j];
    return (int)sum;
}

/* VPCOMPRESSB zmm {z}, zmm (VBMI2):
 *   m := 0
 *   FOR j := 0 to 63: i := j*8
 *     IF k[j]: dst[m+7:m] := a[i+7:i]; m := m + 8
 *   dst[511:m] := 0 */
U8P_EMU_INLINE simde__m512i
u8p_emu_mm512_maskz_compress_epi8(simde__mmask64 k, simde__m512i a)
{
    uint8_t x[64], r[64];
    simde__m512i out;
    int j, m = 0;
    memcpy(x, &a, 64);
    memset(r, 0, sizeof r);
    for (j = 0; j < 64; j++)
        if ((k >> j) & 1)
            r[m++] = x[j];
    memcpy(&out, r, 64);
    return out;
}

/* VPCOMPRESSW zmm {z}, zmm (VBMI2): as above with 32 16-bit elements */
U8P_EMU_INLINE simde__m512i
u8p_emu_mm512_maskz_compress_epi16(simde__mmask32 k, simde__m512i a)
{
    uint16_t x[32], r[32];
    simde__m512i out;
    int j, m = 0;
    memcpy(x, &a, 64);
    memset(r, 0, sizeof r);
    for (j = 0; j < 32; j++)
        if ((k >> j) & 1)
            r[m++] = x[j];
    memcpy(&out, r, 64);
    return out;
}

/* ----------------------------------------------- masked loads and stores
 *
 * Only the selected elements are read or written: a masked-out element may
 * lie on an unmapped page, as on the hardware (fault suppression). */

/* VMOVDQU8 zmm {z}, m512:
 *   FOR j := 0 to 63: i := j*8
 *     dst[i+7:i] := k[j] ? MEM[mem_addr+i+7:mem_addr+i] : 0 */
U8P_EMU_INLINE simde__m512i
u8p_emu_mm512_maskz_loadu_epi8(simde__mmask64 k, const void *mem_addr)
{
    const uint8_t *p = (const uint8_t *)mem_addr;
    uint8_t r[64];
    simde__m512i out;
    int j;
    for (j = 0; j < 64; j++)
        r[j] = ((k >> j) & 1) ? p[j] : 0;
    memcpy(&out, r, 64);
    return out;
}

/* VMOVDQU16 zmm {z}, m512: as above with 32 16-bit elements */
U8P_EMU_INLINE simde__m512i
u8p_emu_mm512_maskz_loadu_epi16(simde__mmask32 k, const void *mem_addr)
{
    const uint8_t *p = (const uint8_t *)mem_addr;
    uint16_t r[32], e;
    simde__m512i out;
    int j;
    for (j = 0; j < 32; j++) {
        e = 0;
        if ((k >> j) & 1)
            memcpy(&e, p + 2 * j, 2);
        r[j] = e;
    }
    memcpy(&out, r, 64);
    return out;
}

/* VMOVDQU32 zmm {z}, m512: 16 32-bit elements */
U8P_EMU_INLINE simde__m512i
u8p_emu_mm512_maskz_loadu_epi32(simde__mmask16 k, const void *mem_addr)
{
    const uint8_t *p = (const uint8_t *)mem_addr;
    uint32_t r[16], e;
    simde__m512i out;
    int j;
    for (j = 0; j < 16; j++) {
        e = 0;
        if ((k >> j) & 1)
            memcpy(&e, p + 4 * j, 4);
        r[j] = e;
    }
    memcpy(&out, r, 64);
    return out;
}

/* VMOVDQU8/16/32 m512 {k}, zmm: 64/w elements of w bytes,
 *   FOR j := 0 to 64/w - 1: IF k[j]: MEM[mem_addr+w*j ...] := a[element j]
 * and the masked-out ones untouched */
U8P_EMU_INLINE void
u8p_emu_mask_store_w(void *mem_addr, uint64_t k, simde__m512i a, int w)
{
    uint8_t *p = (uint8_t *)mem_addr, x[64];
    int j;
    memcpy(x, &a, 64);
    for (j = 0; j < 64 / w; j++)
        if ((k >> j) & 1)
            memcpy(p + w * j, x + w * j, (size_t)w);
}

U8P_EMU_INLINE void
u8p_emu_mm512_mask_storeu_epi8(void *mem_addr, simde__mmask64 k, simde__m512i a)
{
    u8p_emu_mask_store_w(mem_addr, k, a, 1);
}

U8P_EMU_INLINE void
u8p_emu_mm512_mask_storeu_epi16(void *mem_addr, simde__mmask32 k, simde__m512i a)
{
    u8p_emu_mask_store_w(mem_addr, k, a, 2);
}

U8P_EMU_INLINE void
u8p_emu_mm512_mask_storeu_epi32(void *mem_addr, simde__mmask16 k, simde__m512i a)
{
    u8p_emu_mask_store_w(mem_addr, k, a, 4);
}

/* VPMASKMOVD ymm, ymm, m256 (AVX2):
 *   FOR j := 0 to 7: i := j*32
 *     dst[i+31:i] := mask[i+31] ? MEM[mem_addr+i+31:mem_addr+i] : 0 */
U8P_EMU_INLINE simde__m256i
u8p_emu_mm256_maskload_epi32(const int *mem_addr, simde__m256i mask)
{
    const uint8_t *p = (const uint8_t *)mem_addr;
    uint32_t m[8], r[8], e;
    simde__m256i out;
    int j;
    memcpy(m, &mask, 32);
    for (j = 0; j < 8; j++) {
        e = 0;
        if (m[j] >> 31)
            memcpy(&e, p + 4 * j, 4);
        r[j] = e;
    }
    memcpy(&out, r, 32);
    return out;
}

#endif /* U8P_EMU_H */
