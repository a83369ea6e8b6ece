/*
 * Runtime selection of the decode kernels: same levels, cap names and CPU
 * detection as the encode dispatch (dispatch.c: cpuid, and XCR0 for the
 * AVX and AVX-512 register state).  At the top of csrc/kernels, beside
 * decode.h, for the reason dispatch.c gives: it names every folder's
 * decode tables and belongs to no instruction set.
 */
#include <string.h>

#include "decode.h"
#include "x86/x86_internal.h"

const u8p_dec_kernels *
u8p_dec_kernels_for_level(u8p_isa level)
{
    const u8p_dec_kernels *v[2];
    return u8p_dec_kernels_variants(level, v, 2) ? v[0] : NULL;
}

int
u8p_dec_kernels_variants(u8p_isa level, const u8p_dec_kernels **out, int max)
{
    int n = 0;
#if U8P_X86_SIMD
    const u8p_kernels *enc = u8p_kernels_for_level(level);
#endif
    if (max < 1)
        return 0;
    switch (level) {
    case U8P_ISA_SCALAR:
        out[n++] = &u8p_dec_kernels_scalar;
        break;
#if U8P_X86_SIMD
    case U8P_ISA_SSE:
        if (enc)
            out[n++] = &u8p_dec_kernels_sse;
        break;
    case U8P_ISA_AVX2:
        if (enc)
            out[n++] = &u8p_dec_kernels_avx2;
        break;
    case U8P_ISA_AVX512:
        if (!enc)
            break;
        /* with VBMI2, by cpuid's vendor as the encoders (dispatch.c): the
         * VBMI short decoder on Intel, the mixed table elsewhere; then the
         * other one and F + BW, so that every table this CPU can run is
         * tested on it */
        if (u8p_x86_has_vbmi2()) {
            const int intel = u8p_x86_is_intel();
            out[n++] = intel ? &u8p_dec_kernels_avx512_vbmi2 : &u8p_dec_kernels_avx512_mixed;
            if (n < max)
                out[n++] = intel ? &u8p_dec_kernels_avx512_mixed : &u8p_dec_kernels_avx512_vbmi2;
        }
        if (n < max)
            out[n++] = &u8p_dec_kernels_avx512;
        break;
#endif
    default:
        break;
    }
    return n;
}

const char *
u8p_dec_kernels_id(const u8p_dec_kernels *k)
{
#if U8P_X86_SIMD
    static const struct {
        const u8p_dec_kernels *k;
        const char *id;
    } ids[] = {
        {&u8p_dec_kernels_avx512, "avx512-bw"},
        {&u8p_dec_kernels_avx512_vbmi2, "avx512-vbmi2"},
        {&u8p_dec_kernels_avx512_mixed, "avx512-mixed"},
    };
    size_t i;
    for (i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (ids[i].k == k)
            return ids[i].id;
#endif
    return k->name;
}

/* Whether selection without a cap goes up to the AVX-512 decoders: yes,
 * they beat AVX2's on mid and long non-ASCII payloads and run AVX2's own
 * code under 64 bytes (README, "x86 kernels").  Build with
 * -DU8P_DEC_AUTO_AVX512=0 to stop at AVX2 unless UTF8PFX_ISA=avx512. */
#ifndef U8P_DEC_AUTO_AVX512
#define U8P_DEC_AUTO_AVX512 1
#endif

const u8p_dec_kernels *
u8p_select_dec_kernels(const char *cap)
{
    int lvl, top = u8p_isa_cap(cap);
    if (top < 0)
        return NULL;
    if (!U8P_DEC_AUTO_AVX512 && (cap == NULL || *cap == '\0') && top >= U8P_ISA_AVX512)
        top = U8P_ISA_AVX2;
    for (lvl = top; lvl >= 0; lvl--) {
        const u8p_dec_kernels *k = u8p_dec_kernels_for_level((u8p_isa)lvl);
        if (k)
            return k;
    }
    return &u8p_dec_kernels_scalar;
}
