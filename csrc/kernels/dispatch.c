/*
 * Runtime kernel selection: chosen once at import from the CPU's features,
 * capped by the caller (UTF8PFX_ISA in the glue).
 *
 * x86-64: cpuid says what the CPU has; xgetbv (XCR0) says whether the OS
 * saves the YMM / ZMM state on a context switch, without which AVX code
 * must not run even on a CPU that has it.  Levels:
 *   sse     SSE4.1 + POPCNT
 *   avx2    + AVX2, OS saves XMM and YMM state
 *   avx512  + AVX-512 F and BW, OS saves opmask and ZMM state too; with
 *           VBMI2 a table that also uses VBMI2 encoders, chosen by what
 *           cpuid says the CPU is: the Intel table (VBMI2 at every size)
 *           on GenuineIntel, the mixed table (VBMI2 for short strings,
 *           AVX2 above) on every other vendor, AMD's AVX-512 CPUs among
 *           them.  Fixed by the vendor, never by timing at import: a given
 *           CPU always runs the same, tested, kernels.
 * aarch64: NEON is architectural, it takes the "sse" rank.
 * Elsewhere only scalar exists.
 *
 * Here at the top of csrc/kernels, beside kernels.h, and not in a level's
 * folder: this file implements kernels.h's dispatch functions and is one
 * of the two places (with decode_dispatch.c) that name the tables of every
 * folder (generic/, x86/, arm/), so it belongs to no instruction set, and
 * a new level is wired in here.
 */
#include <string.h>

#include "kernels.h"
#include "x86/x86_internal.h"

#if U8P_X86_SIMD
#include <cpuid.h>
#endif

static const char *const level_names[U8P_ISA_COUNT] = {
    "scalar", "sse", "avx2", "avx512",
};

#if U8P_X86_SIMD

/* Detected once; racing first calls compute the same value. */
static volatile int x86_top = -1;
static volatile int x86_vbmi2 = 0;
static volatile int x86_intel = 0; /* cpuid's vendor string is GenuineIntel */

static uint64_t
read_xcr0(void)
{
    uint32_t lo, hi;
    /* xgetbv with ecx = 0, as inline asm: the _xgetbv intrinsic would
     * need the xsave target flag */
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

static void
detect_x86(void)
{
    unsigned a, b, c, d, max;
    int top = U8P_ISA_SCALAR, vbmi2 = 0;
    uint64_t xcr0 = 0;
    int osxsave, sse41, popcnt, avx;

    if (!__get_cpuid(0, &max, &b, &c, &d) || max < 1)
        goto out;
    /* "GenuineIntel" in ebx, edx, ecx */
    x86_intel = b == 0x756E6547u && d == 0x49656E69u && c == 0x6C65746Eu;
    __cpuid(1, a, b, c, d);
    sse41 = (c >> 19) & 1;
    popcnt = (c >> 23) & 1;
    osxsave = (c >> 27) & 1;
    avx = (c >> 28) & 1;
    if (!(sse41 && popcnt))
        goto out;
    top = U8P_ISA_SSE;
    if (!osxsave || !avx || max < 7)
        goto out;
    xcr0 = read_xcr0();
    if ((xcr0 & 0x6) != 0x6) /* XMM (bit 1) and YMM (bit 2) state */
        goto out;
    __cpuid_count(7, 0, a, b, c, d);
    if (!((b >> 5) & 1)) /* AVX2 */
        goto out;
    top = U8P_ISA_AVX2;
    /* AVX512F (ebx 16), AVX512BW (ebx 30); opmask, ZMM_Hi256, Hi16_ZMM
     * state (XCR0 bits 5..7) */
    if (!((b >> 16) & 1) || !((b >> 30) & 1) || (xcr0 & 0xE0) != 0xE0)
        goto out;
    top = U8P_ISA_AVX512;
    /* the "VBMI2" tables also use VBMI (vpmultishiftqb), CD (vplzcntd) and
     * GFNI (gf2p8affineqb), so all four are required (CPUs with VBMI2 have
     * the other three): AVX512_VBMI2 (ecx 6), AVX512_VBMI (ecx 1),
     * AVX512CD (ebx 28), GFNI (ecx 8) */
    vbmi2 = ((c >> 6) & 1) && ((c >> 1) & 1) && ((b >> 28) & 1) && ((c >> 8) & 1);
out:
    x86_vbmi2 = vbmi2;
    x86_top = top;
}

static int
x86_level(void)
{
    if (x86_top < 0)
        detect_x86();
    return x86_top;
}
#endif

const u8p_kernels *
u8p_kernels_for_level(u8p_isa level)
{
    switch (level) {
    case U8P_ISA_SCALAR:
        return &u8p_kernels_scalar;
#if U8P_X86_SIMD
    case U8P_ISA_SSE:
        return x86_level() >= U8P_ISA_SSE ? &u8p_kernels_sse : NULL;
    case U8P_ISA_AVX2:
        return x86_level() >= U8P_ISA_AVX2 ? &u8p_kernels_avx2 : NULL;
    case U8P_ISA_AVX512:
        /* with VBMI2, its encoders for short strings only (x86_avx512.c);
         * u8p_kernels_variants also has the all-VBMI2 and F+BW tables */
        if (x86_level() < U8P_ISA_AVX512)
            return NULL;
        if (!x86_vbmi2)
            return &u8p_kernels_avx512;
        return x86_intel ? &u8p_kernels_avx512_intel : &u8p_kernels_avx512_mixed;
#endif
#if U8P_ARM_NEON
    case U8P_ISA_SSE:
        return &u8p_kernels_neon;
#endif
    default:
        return NULL;
    }
}

int
u8p_kernels_variants(u8p_isa level, const u8p_kernels **out, int max)
{
    int n = 0;
    const u8p_kernels *k = u8p_kernels_for_level(level);
    if (k && n < max)
        out[n++] = k;
#if U8P_X86_SIMD
    if (k && level == U8P_ISA_AVX512 && x86_vbmi2) {
        /* the table of the other vendor too: every table a CPU can run is
         * tested on it */
        if (n < max)
            out[n++] = x86_intel ? &u8p_kernels_avx512_mixed : &u8p_kernels_avx512_intel;
        if (n < max)
            out[n++] = &u8p_kernels_avx512_vbmi2;
        if (n < max)
            out[n++] = &u8p_kernels_avx512;
    }
#endif
    return n;
}

const char *
u8p_kernels_id(const u8p_kernels *k)
{
#if U8P_X86_SIMD
    if (k == &u8p_kernels_avx512)
        return "avx512-bw";
    if (k == &u8p_kernels_avx512_vbmi2)
        return "avx512-vbmi2";
    if (k == &u8p_kernels_avx512_mixed)
        return "avx512-mixed";
    if (k == &u8p_kernels_avx512_intel)
        return "avx512-intel";
#endif
    return k->name;
}

int
u8p_kernel_tables(const u8p_kernels **out, int max)
{
    int lvl, n = 0;
    for (lvl = 0; lvl < U8P_ISA_COUNT; lvl++) {
        const u8p_kernels *v[8] = {NULL};
        int j, nv = u8p_kernels_variants((u8p_isa)lvl, v, 8);
        for (j = 0; j < nv && n < max; j++)
            out[n++] = v[j];
    }
    return n;
}

#if U8P_X86_SIMD
int
u8p_x86_has_vbmi2(void)
{
    return x86_level() >= U8P_ISA_AVX512 && x86_vbmi2;
}

int
u8p_x86_is_intel(void)
{
    (void)x86_level();
    return x86_intel;
}
#endif

int
u8p_isa_cap(const char *cap)
{
    int lvl;
    if (cap == NULL || *cap == '\0')
        return U8P_ISA_COUNT - 1;
    for (lvl = 0; lvl < U8P_ISA_COUNT; lvl++) {
        if (strcmp(cap, level_names[lvl]) == 0)
            return lvl;
    }
    if (strcmp(cap, "neon") == 0)
        return U8P_ISA_SSE;
    return -1;
}

const u8p_kernels *
u8p_select_kernels(const char *cap)
{
    int lvl;
    for (lvl = u8p_isa_cap(cap); lvl >= 0; lvl--) {
        const u8p_kernels *k = u8p_kernels_for_level((u8p_isa)lvl);
        if (k)
            return k;
    }
    return u8p_isa_cap(cap) < 0 ? NULL : &u8p_kernels_scalar;
}
