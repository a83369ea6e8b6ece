/*
 * Runtime selection of the decode kernels: same levels and cap names as the
 * encode dispatch (dispatch.c), CPU features from __builtin_cpu_supports.
 * There is no AVX-512 decode kernel yet: that level resolves to NULL and an
 * "avx512" cap falls back to the best lower level.
 */
#include <string.h>

#include "decode.h"

const u8p_dec_kernels *
u8p_dec_kernels_for_level(u8p_isa level)
{
    switch (level) {
    case U8P_ISA_SCALAR:
        return &u8p_dec_kernels_scalar;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    case U8P_ISA_SSE:
        __builtin_cpu_init();
        return __builtin_cpu_supports("sse4.1") ? &u8p_dec_kernels_sse : NULL;
    case U8P_ISA_AVX2:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") ? &u8p_dec_kernels_avx2 : NULL;
#endif
    default:
        return NULL;
    }
}

const u8p_dec_kernels *
u8p_select_dec_kernels(const char *cap)
{
    int lvl;
    for (lvl = u8p_isa_cap(cap); lvl >= 0; lvl--) {
        const u8p_dec_kernels *k = u8p_dec_kernels_for_level((u8p_isa)lvl);
        if (k)
            return k;
    }
    return u8p_isa_cap(cap) < 0 ? NULL : &u8p_dec_kernels_scalar;
}
