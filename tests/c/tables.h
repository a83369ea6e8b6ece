/*
 * Which kernel tables a C harness runs, and how.
 *
 * Built with -DU8P_TABLES_INC='"path/tables.inc"' (written by
 * gen_tables.sh from the kernel objects: `make -C tests/c native` / `emu`,
 * and tests/test_kernels_c.py), a harness runs EVERY table the kernel
 * sources define, not only the one dispatch picks per level (the AVX-512
 * table without VBMI2 never comes out of dispatch on a CPU that has VBMI2,
 * yet runs on others):
 *
 *   native build      each table whose instruction sets this CPU has (from
 *                     the table's name: sse, avx2, avx512, vbmi, vbmi2,
 *                     neon), and each table dispatch offers on this CPU
 *                     (u8p_kernels_variants); any other is reported as
 *                     "not run";
 *   emulated build    (-DU8P_EMULATED, kernels compiled against SIMDe via
 *                     tests/c/emu) every table: none needs the CPU to have
 *                     anything beyond baseline x86-64.
 *
 * Either way the harness checks that every table dispatch would pick on
 * this CPU is among those it ran, and prints one line saying which tables
 * ran natively and which emulated:
 *
 *   kernel tables: native: scalar sse avx2 avx512 avx512_vbmi2; emulated: none
 *
 * Without U8P_TABLES_INC (the older make targets, the fuzzer, the
 * sanitizer builds) the harness falls back to the tables dispatch offers
 * for each level the CPU has (u8p_kernels_variants / u8p_dec_kernels_variants).
 *
 * Define U8P_WANT_ENC or U8P_WANT_DEC before including.  The functions are
 * static inline so that a harness may leave some unused (the fuzzer).
 */
#ifndef U8P_TEST_TABLES_H
#define U8P_TEST_TABLES_H

/* the *-small builds' lowered cut-off from the command line, 0 in the
 * others; noted before anything includes generic/simd_internal.h, which
 * gives U8P_SIMD_MIN_UNITS its default in every build (include this first) */
#ifndef U8P_TEST_MIN_UNITS
#ifdef U8P_SIMD_MIN_UNITS
#define U8P_TEST_MIN_UNITS U8P_SIMD_MIN_UNITS
#else
#define U8P_TEST_MIN_UNITS 0
#endif
#endif

#include <stdio.h>
#include <string.h>

#include "kernels.h"
#ifdef U8P_WANT_DEC
#include "decode.h"
#endif

#define TT_MAX 16

typedef struct {
    const char *sym;   /* the C symbol, e.g. "u8p_kernels_avx512_vbmi2" */
    const void *table; /* const u8p_kernels * or const u8p_dec_kernels * */
    int run;           /* this build runs it */
} tt_entry;

#ifdef U8P_EMULATED /* the SIMDe release the kernels were built against */
/* through the emulated <immintrin.h> (tests/c/emu/include), which turns on
 * SIMDe's Intel-named aliases before SIMDe is first included: a harness
 * that includes kernel headers after this one gets them too */
#include <immintrin.h>
#define TT_STR_(a, b, c) #a "." #b "." #c
#define TT_STR(a, b, c) TT_STR_(a, b, c)
#define U8P_EMU_SIMDE_VERSION TT_STR(SIMDE_VERSION_MAJOR, SIMDE_VERSION_MINOR, SIMDE_VERSION_MICRO)
#endif

/* The instruction sets one part of a table's name stands for, on this CPU. */
static inline int
tt_cpu_has_part(const char *part, size_t len)
{
#define TT_IS(s) (len == sizeof(s) - 1 && memcmp(part, s, len) == 0)
    if (TT_IS("scalar"))
        return 1;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    if (TT_IS("sse"))
        return __builtin_cpu_supports("sse4.1") && __builtin_cpu_supports("popcnt");
    if (TT_IS("avx2"))
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    if (TT_IS("avx512"))
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
               && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    if (TT_IS("vl"))
        return __builtin_cpu_supports("avx512vl");
    if (TT_IS("vbmi"))
        return __builtin_cpu_supports("avx512vbmi");
    if (TT_IS("vbmi2")) /* the VBMI2 tables use GFNI too (dispatch.c) */
        return __builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("gfni");
#endif
#if defined(__aarch64__)
    if (TT_IS("neon"))
        return 1;
#endif
#undef TT_IS
    return 0;
}

/* Every part of the name after "kernels_" must be something the CPU has. */
static inline int
tt_cpu_has(const char *sym)
{
    const char *p = strstr(sym, "kernels_"), *q;
    if (!p)
        return 0;
    p += 8;
    while (*p) {
        q = strchr(p, '_');
        if (!q)
            q = p + strlen(p);
        if (!tt_cpu_has_part(p, (size_t)(q - p)))
            return 0;
        p = *q ? q + 1 : q;
    }
    return 1;
}

static inline const char *
tt_short(const char *sym)
{
    const char *p = strstr(sym, "kernels_");
    return p ? p + 8 : sym;
}

#ifdef U8P_TABLES_INC
#define U8P_TABLE(s) extern const u8p_kernels s;
#ifdef U8P_WANT_DEC
#define U8P_DEC_TABLE(s) extern const u8p_dec_kernels s;
#else
#define U8P_DEC_TABLE(s)
#endif
#include U8P_TABLES_INC
#undef U8P_TABLE
#undef U8P_DEC_TABLE
#endif

/* Whether dispatch offers this table on this CPU for some level (its own
 * CPU check says the table can run here), as the level's table or one of
 * its variants: a table named for features tt_cpu_has_part does not know
 * (avx512_mixed, say) still runs natively wherever dispatch would use it. */
static inline int
tt_dispatch_offers(int enc, const void *table)
{
    int lvl, j, nv = 0;
    const void *v[8];
    for (lvl = 0; lvl < U8P_ISA_COUNT; lvl++) {
        if (enc)
            nv = u8p_kernels_variants((u8p_isa)lvl, (const u8p_kernels **)v, 8);
#ifdef U8P_WANT_DEC
        else
            nv = u8p_dec_kernels_variants((u8p_isa)lvl, (const u8p_dec_kernels **)v, 8);
#endif
        for (j = 0; j < nv; j++)
            if (v[j] == table)
                return 1;
    }
    return 0;
}

/* Rank for the printed order: the dispatch level of the name's first part. */
static inline int
tt_rank(const char *sym)
{
    static const char *const first[] = {"scalar", "sse", "neon", "avx2", "avx512"};
    static const int rank[] = {0, 1, 1, 2, 3};
    const char *p = tt_short(sym);
    size_t len = strcspn(p, "_");
    unsigned i;
    for (i = 0; i < sizeof first / sizeof first[0]; i++)
        if (strlen(first[i]) == len && memcmp(p, first[i], len) == 0)
            return rank[i];
    return 4;
}

/* Fills out[] (scalar first, then by level), returns the count.  enc: 1 for the encode
 * tables, 0 for the decode tables. */
static inline int
tt_collect(int enc, tt_entry *out)
{
    int n = 0, i;
#ifdef U8P_TABLES_INC
    static const struct {
        const char *sym;
        const void *table;
        int enc;
    } all[] = {
#define U8P_TABLE(s) {#s, &s, 1},
#ifdef U8P_WANT_DEC
#define U8P_DEC_TABLE(s) {#s, &s, 0},
#else
#define U8P_DEC_TABLE(s)
#endif
#include U8P_TABLES_INC
#undef U8P_TABLE
#undef U8P_DEC_TABLE
        {NULL, NULL, 0}};
    int rank;
    for (rank = 0; rank <= 4; rank++) { /* scalar first: the reference */
        for (i = 0; all[i].sym; i++) {
            if (all[i].enc != enc || tt_rank(all[i].sym) != rank || n == TT_MAX)
                continue;
            out[n].sym = all[i].sym;
            out[n].table = all[i].table;
#ifdef U8P_EMULATED
            out[n].run = 1;
            (void)tt_cpu_has;
            (void)tt_dispatch_offers;
#else
            out[n].run = tt_cpu_has(all[i].sym) || tt_dispatch_offers(enc, all[i].table);
#endif
            n++;
        }
    }
#else
    /* no table list: every table dispatch offers per level (the first is
     * the one it picks; AVX-512 also has its VBMI2 variant) */
    (void)tt_cpu_has;
    (void)tt_rank;
    (void)tt_dispatch_offers;
    for (i = 0; i < U8P_ISA_COUNT; i++) {
        const void *v[4];
        int nv = 0, j;
        if (enc)
            nv = u8p_kernels_variants((u8p_isa)i, (const u8p_kernels **)v, 4);
#ifdef U8P_WANT_DEC
        else
            nv = u8p_dec_kernels_variants((u8p_isa)i, (const u8p_dec_kernels **)v, 4);
#endif
        for (j = 0; j < nv && n < TT_MAX; j++) {
            static char labels[TT_MAX][32];
            const char *name = enc ? ((const u8p_kernels *)v[j])->name : "?";
#ifdef U8P_WANT_DEC
            if (!enc)
                name = ((const u8p_dec_kernels *)v[j])->name;
#endif
            if (j == 0)
                snprintf(labels[n], sizeof labels[n], "kernels_%s", name);
            else
                snprintf(labels[n], sizeof labels[n], "kernels_%s_variant%d", name, j + 1);
            out[n].sym = labels[n];
            out[n].table = v[j];
            out[n].run = 1;
            n++;
        }
    }
#endif
    return n;
}

/* "kernel tables: native: scalar sse ...; emulated: none" (and what was
 * left out).  what: "encode" or "decode". */
static inline void
tt_report(const char *what, const tt_entry *t, int n)
{
    int i, any = 0;
    printf("%s kernel tables: native:", what);
#ifndef U8P_EMULATED
    for (i = 0; i < n; i++)
        if (t[i].run) {
            printf(" %s", tt_short(t[i].sym));
            any = 1;
        }
#endif
    if (!any)
        printf(" none");
    printf("; emulated:");
    any = 0;
#ifdef U8P_EMULATED
    for (i = 0; i < n; i++)
        if (t[i].run && strcmp(tt_short(t[i].sym), "scalar") != 0) {
            printf(" %s", tt_short(t[i].sym));
            any = 1;
        }
#endif
    if (!any)
        printf(" none");
    any = 0;
    for (i = 0; i < n; i++)
        if (!t[i].run) {
            printf(any ? " %s" : "; not run (CPU lacks it): %s", tt_short(t[i].sym));
            any = 1;
        }
#ifdef U8P_EMULATED
    printf(" (reference: scalar; intrinsics from SIMDe %s + tests/c/emu)", U8P_EMU_SIMDE_VERSION);
#endif
#if U8P_TEST_MIN_UNITS /* the *-small builds: short-input cut-offs moved down */
    printf(" [SIMD paths from %d unit(s): short-input cut-offs lowered]", (int)U8P_TEST_MIN_UNITS);
#endif
    printf("\n");
}

/* Every table dispatch returns on this CPU must be one this build ran;
 * returns the number of those that are not (0 when all are). */
static inline int
tt_dispatch_covered(const tt_entry *t, int n, const void *const *picked, int npicked)
{
    int i, j, bad = 0;
    for (j = 0; j < npicked; j++) {
        int found = 0;
        if (!picked[j])
            continue;
        for (i = 0; i < n; i++)
            found |= t[i].table == picked[j] && t[i].run;
        if (!found) {
            fprintf(stderr, "UNVERIFIED: dispatch picks a table (level %d) this run did not test\n",
                    j);
            bad++;
        }
    }
    return bad;
}

#endif /* U8P_TEST_TABLES_H */
