/*
 * Runtime kernel selection: chosen once at import from the CPU's features,
 * capped by the caller (UTF8PFX_ISA in the glue).
 *
 * Until a SIMD implementation is compiled in, every level resolves to NULL
 * except scalar.
 */
#include <string.h>

#include "kernels.h"

static const char *const level_names[U8P_ISA_COUNT] = {
    "scalar", "sse", "avx2", "avx512",
};

const u8p_kernels *
u8p_kernels_for_level(u8p_isa level)
{
    switch (level) {
    case U8P_ISA_SCALAR:
        return &u8p_kernels_scalar;
    default:
        return NULL;
    }
}

const u8p_kernels *
u8p_select_kernels(const char *cap)
{
    int top = U8P_ISA_COUNT - 1, lvl;
    if (cap && *cap) {
        top = -1;
        for (lvl = 0; lvl < U8P_ISA_COUNT; lvl++) {
            if (strcmp(cap, level_names[lvl]) == 0)
                top = lvl;
        }
        if (top < 0)
            return NULL;
    }
    for (lvl = top; lvl >= 0; lvl--) {
        const u8p_kernels *k = u8p_kernels_for_level((u8p_isa)lvl);
        if (k)
            return k;
    }
    return &u8p_kernels_scalar;
}
