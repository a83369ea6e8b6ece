/*
 * Each fill-in of tests/c/emu/u8p_emu.h against the native instruction,
 * on its own, wherever this CPU has it (make -C tests/c emu-intrinsics):
 * random and edge inputs (equal and unequal lanes, top-bit bytes), masks
 * (none, all, each single bit, every prefix, random), and for the masked
 * loads and stores a window that runs into a guard page with only the
 * in-bounds elements selected: neither the instruction nor its emulation
 * may fault, and both must give the same vector and leave the same memory.
 * Prints one line per intrinsic and a summary; exits 1 on any mismatch.
 */
#include "guard.h"
#include "u8p_emu.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h> /* the compiler's own: this file is built without emu/include */
#define HAVE_NATIVE 1
#else
#define HAVE_NATIVE 0
#endif

static long mismatches, compared;
static uint64_t rng = 0x2545F4914F6CDD1DULL;

static uint64_t
rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1DULL;
}

/* random bytes; every other call from a 4-letter alphabet so that lanes
 * compare equal often, sometimes with the top bits set */
static void
fill(uint8_t *p, size_t n)
{
    static unsigned call;
    size_t i;
    int small = (call++ & 1) != 0;
    for (i = 0; i < n; i++)
        p[i] = small ? (uint8_t)((rnd() & 3) * 0x55) : (uint8_t)rnd();
}

/* the mask of case c (of 200+): none, all, single bits, prefixes, random */
static uint64_t
mask_of(int c, int lanes)
{
    uint64_t all = lanes >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << lanes) - 1);
    if (c == 0)
        return 0;
    if (c == 1)
        return all;
    if (c - 2 < lanes)
        return (uint64_t)1 << (c - 2);
    if (c - 2 - lanes <= lanes)
        return (c - 2 - lanes) >= 64 ? all : (((uint64_t)1 << (c - 2 - lanes)) - 1) & all;
    return rnd() & all;
}

static void
mismatch(const char *name, int c)
{
    mismatches++;
    if (mismatches <= 20)
        fprintf(stderr, "MISMATCH %s case %d\n", name, c);
}

static void
report(const char *name, const char *needs, int have, long n)
{
    if (have)
        printf("  %-28s %ld cases against the native instruction\n", name, n);
    else
        printf("  %-28s not compared: the CPU lacks %s\n", name, needs);
}

#if HAVE_NATIVE
#define T_F __attribute__((target("avx512f")))
#define T_BW __attribute__((target("avx512f,avx512bw")))
#define T_VBMI2 __attribute__((target("avx512f,avx512bw,avx512vbmi2")))
#define T_AVX2 __attribute__((target("avx2")))
#define T_CD __attribute__((target("avx512f,avx512cd")))

T_BW static uint32_t
nat_cmpeq_epi16(const uint8_t *a, const uint8_t *b)
{
    return _mm512_cmpeq_epi16_mask(_mm512_loadu_si512(a), _mm512_loadu_si512(b));
}
T_F static void
nat_cvtepi32_epi8(const uint8_t *a, uint8_t *out)
{
    _mm_storeu_si128((__m128i *)(void *)out, _mm512_cvtepi32_epi8(_mm512_loadu_si512(a)));
}
T_BW static void
nat_cvtepu8_epi16(const uint8_t *a, uint8_t *out)
{
    _mm512_storeu_si512(out, _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)a)));
}
T_CD static void
nat_lzcnt_epi32(const uint8_t *a, uint8_t *out)
{
    _mm512_storeu_si512(out, _mm512_lzcnt_epi32(_mm512_loadu_si512(a)));
}
T_F static int
nat_reduce_add_epi32(const uint8_t *a)
{
    return _mm512_reduce_add_epi32(_mm512_loadu_si512(a));
}
T_VBMI2 static void
nat_maskz_compress_epi8(uint64_t k, const uint8_t *a, uint8_t *out)
{
    _mm512_storeu_si512(out, _mm512_maskz_compress_epi8(k, _mm512_loadu_si512(a)));
}
T_BW static void
nat_maskz_loadu_epi8(uint64_t k, const void *p, uint8_t *out)
{
    _mm512_storeu_si512(out, _mm512_maskz_loadu_epi8(k, p));
}
T_BW static void
nat_maskz_loadu_epi16(uint32_t k, const void *p, uint8_t *out)
{
    _mm512_storeu_si512(out, _mm512_maskz_loadu_epi16(k, p));
}
T_F static void
nat_maskz_loadu_epi32(uint16_t k, const void *p, uint8_t *out)
{
    _mm512_storeu_si512(out, _mm512_maskz_loadu_epi32(k, p));
}
T_BW static void
nat_mask_storeu_epi8(void *p, uint64_t k, const uint8_t *a)
{
    _mm512_mask_storeu_epi8(p, k, _mm512_loadu_si512(a));
}
T_F static void
nat_cvtepu8_epi32(const uint8_t *a, uint8_t *out)
{
    _mm512_storeu_si512(out, _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)a)));
}
/* the immediate must be a constant: one native function per value */
#define NAT_ALIGNR8(imm)                                                              \
    T_BW static void nat_alignr_epi8_##imm(const uint8_t *a, const uint8_t *b, uint8_t *o) \
    {                                                                                 \
        _mm512_storeu_si512(o, _mm512_alignr_epi8(_mm512_loadu_si512(a),              \
                                                  _mm512_loadu_si512(b), imm));        \
    }
#define NAT_ALIGNR64(imm)                                                              \
    T_F static void nat_alignr_epi64_##imm(const uint8_t *a, const uint8_t *b, uint8_t *o) \
    {                                                                                  \
        _mm512_storeu_si512(o, _mm512_alignr_epi64(_mm512_loadu_si512(a),              \
                                                   _mm512_loadu_si512(b), imm));        \
    }
NAT_ALIGNR8(0) NAT_ALIGNR8(1) NAT_ALIGNR8(13) NAT_ALIGNR8(14) NAT_ALIGNR8(15) NAT_ALIGNR8(16)
NAT_ALIGNR8(17) NAT_ALIGNR8(31) NAT_ALIGNR8(32) NAT_ALIGNR8(200)
NAT_ALIGNR64(0) NAT_ALIGNR64(1) NAT_ALIGNR64(3) NAT_ALIGNR64(6) NAT_ALIGNR64(7) NAT_ALIGNR64(9)
typedef void (*nat_align_fn)(const uint8_t *, const uint8_t *, uint8_t *);
static const struct { int imm; nat_align_fn fn; } nat_alignr8[] = {
    {0, nat_alignr_epi8_0}, {1, nat_alignr_epi8_1}, {13, nat_alignr_epi8_13},
    {14, nat_alignr_epi8_14}, {15, nat_alignr_epi8_15}, {16, nat_alignr_epi8_16},
    {17, nat_alignr_epi8_17}, {31, nat_alignr_epi8_31}, {32, nat_alignr_epi8_32},
    {200, nat_alignr_epi8_200}};
static const struct { int imm; nat_align_fn fn; } nat_alignr64[] = {
    {0, nat_alignr_epi64_0}, {1, nat_alignr_epi64_1}, {3, nat_alignr_epi64_3},
    {6, nat_alignr_epi64_6}, {7, nat_alignr_epi64_7}, {9, nat_alignr_epi64_9}};
T_VBMI2 static void
nat_maskz_compress_epi16(uint32_t k, const uint8_t *a, uint8_t *out)
{
    _mm512_storeu_si512(out, _mm512_maskz_compress_epi16(k, _mm512_loadu_si512(a)));
}
T_BW static void
nat_mask_storeu_epi16(void *p, uint64_t k, const uint8_t *a)
{
    _mm512_mask_storeu_epi16(p, (__mmask32)k, _mm512_loadu_si512(a));
}
T_F static void
nat_mask_storeu_epi32(void *p, uint64_t k, const uint8_t *a)
{
    _mm512_mask_storeu_epi32(p, (__mmask16)k, _mm512_loadu_si512(a));
}
T_AVX2 static void
nat_maskload_epi32(const int *p, const uint8_t *mask, uint8_t *out)
{
    _mm256_storeu_si256((__m256i *)(void *)out,
                        _mm256_maskload_epi32(p, _mm256_loadu_si256((const __m256i *)(const void *)mask)));
}
#endif

/* emulated counterparts over byte arrays */
static uint32_t
emu_cmpeq_epi16(const uint8_t *a, const uint8_t *b)
{
    simde__m512i x, y;
    memcpy(&x, a, 64);
    memcpy(&y, b, 64);
    return u8p_emu_mm512_cmpeq_epi16_mask(x, y);
}
#define EMU_STORE(out, v) memcpy((out), &(v), sizeof(v))

static int
cpu(const char *feature)
{
#if HAVE_NATIVE
    __builtin_cpu_init();
    if (strcmp(feature, "avx512f") == 0)
        return __builtin_cpu_supports("avx512f");
    if (strcmp(feature, "avx512bw") == 0)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    if (strcmp(feature, "avx512vbmi2") == 0)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
               && __builtin_cpu_supports("avx512vbmi2");
    if (strcmp(feature, "avx512cd") == 0)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd");
    if (strcmp(feature, "avx2") == 0)
        return __builtin_cpu_supports("avx2");
#endif
    (void)feature;
    return 0;
}

#define NCASE 2000

#if HAVE_NATIVE
#define NAT_STORE(f) (f)
#else
#define NAT_STORE(f) NULL
#endif

/* A masked store of w-byte elements (_mm512_mask_storeu_epi8/16/32): the
 * same memory afterwards as the native one, nothing outside the mask
 * touched (the window runs into the guard page).  Returns the cases. */
static long
check_mask_store(const char *name, const char *isa, int have, int w, guarded *g, guarded *g2,
                 void (*nat)(void *, uint64_t, const uint8_t *))
{
    const int lanes = 64 / w;
    uint8_t a[64];
    simde__m512i v;
    int c;
    long n;
    (void)nat;
    guard_cur_level = name;
    for (c = 0, n = 0; have && c < NCASE; c++, n++) {
        int inb = c % (lanes + 1);
        uint64_t k = mask_of(c % 200, lanes) &
                     (inb >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << inb) - 1));
        uint8_t *p1 = guarded_tail(g, (size_t)(inb * w)), *p2 = guarded_tail(g2, (size_t)(inb * w));
        fill(a, 64);
        fill(p1 - 8, (size_t)(inb * w) + 8);
        memcpy(p2 - 8, p1 - 8, (size_t)(inb * w) + 8);
        memcpy(&v, a, 64);
        u8p_emu_mask_store_w(p2, k, v, w);
#if HAVE_NATIVE
        nat(p1, k, a);
        if (memcmp(p1 - 8, p2 - 8, (size_t)(inb * w) + 8) != 0)
            mismatch(name, c);
#endif
    }
    report(name, isa, have, n);
    return n;
}

int
main(void)
{
    uint8_t a[64], b[64], o1[64], o2[64];
    simde__m512i v;
    guarded g, g2;
    int c, have, m;
    long n;

    guard_on_faults();
    guarded_init(&g, 256);
    guarded_init(&g2, 256);
    printf("emulated intrinsics (tests/c/emu/u8p_emu.h) against native:\n");
    (void)o1; (void)o2; (void)b; (void)v; (void)m;

    /* _mm512_cmpeq_epi16_mask */
    have = cpu("avx512bw");
    guard_cur_level = "_mm512_cmpeq_epi16_mask";
    for (c = 0, n = 0; have && c < NCASE; c++, n++) {
        fill(a, 64);
        fill(b, 64);
        if (c % 3 == 0) /* equal but for a few lanes */
            memcpy(b, a, 64), b[rnd() % 64] ^= (uint8_t)(1u << (rnd() % 8));
#if HAVE_NATIVE
        if (nat_cmpeq_epi16(a, b) != emu_cmpeq_epi16(a, b))
            mismatch(guard_cur_level, c);
#endif
    }
    report("_mm512_cmpeq_epi16_mask", "AVX-512 BW", have, n);
    compared += n;

    /* _mm512_cvtepi32_epi8 */
    have = cpu("avx512f");
    guard_cur_level = "_mm512_cvtepi32_epi8";
    for (c = 0, n = 0; have && c < NCASE; c++, n++) {
        simde__m128i r;
        fill(a, 64);
        memcpy(&v, a, 64);
        r = u8p_emu_mm512_cvtepi32_epi8(v);
        EMU_STORE(o2, r);
#if HAVE_NATIVE
        nat_cvtepi32_epi8(a, o1);
        if (memcmp(o1, o2, 16) != 0)
            mismatch(guard_cur_level, c);
#endif
    }
    report("_mm512_cvtepi32_epi8", "AVX-512 F", have, n);
    compared += n;

    /* _mm512_cvtepu8_epi16 */
    have = cpu("avx512bw");
    guard_cur_level = "_mm512_cvtepu8_epi16";
    for (c = 0, n = 0; have && c < NCASE; c++, n++) {
        simde__m256i x;
        fill(a, 32);
        memcpy(&x, a, 32);
        v = u8p_emu_mm512_cvtepu8_epi16(x);
        EMU_STORE(o2, v);
#if HAVE_NATIVE
        nat_cvtepu8_epi16(a, o1);
        if (memcmp(o1, o2, 64) != 0)
            mismatch(guard_cur_level, c);
#endif
    }
    report("_mm512_cvtepu8_epi16", "AVX-512 BW", have, n);
    compared += n;

    /* _mm512_lzcnt_epi32: random lanes shifted right by 0..32 bits, so
     * every count (0 included: U+0000's lane) comes up */
    have = cpu("avx512cd");
    guard_cur_level = "_mm512_lzcnt_epi32";
    for (c = 0, n = 0; have && c < NCASE; c++, n++) {
        uint32_t w[16];
        int j;
        fill(a, 64);
        memcpy(w, a, 64);
        for (j = 0; j < 16; j++)
            w[j] = (j + c) % 33 == 32 ? 0 : w[j] >> ((j + c) % 33);
        memcpy(a, w, 64);
        memcpy(&v, a, 64);
        v = u8p_emu_mm512_lzcnt_epi32(v);
        EMU_STORE(o2, v);
#if HAVE_NATIVE
        nat_lzcnt_epi32(a, o1);
        if (memcmp(o1, o2, 64) != 0)
            mismatch(guard_cur_level, c);
#endif
    }
    report("_mm512_lzcnt_epi32", "AVX-512 CD", have, n);
    compared += n;

    /* _mm512_reduce_add_epi32 (sums that wrap included) */
    have = cpu("avx512f");
    guard_cur_level = "_mm512_reduce_add_epi32";
    for (c = 0, n = 0; have && c < NCASE; c++, n++) {
        fill(a, 64);
        memcpy(&v, a, 64);
#if HAVE_NATIVE
        if (nat_reduce_add_epi32(a) != u8p_emu_mm512_reduce_add_epi32(v))
            mismatch(guard_cur_level, c);
#endif
    }
    report("_mm512_reduce_add_epi32", "AVX-512 F", have, n);
    compared += n;

    /* _mm512_maskz_compress_epi8 */
    have = cpu("avx512vbmi2");
    guard_cur_level = "_mm512_maskz_compress_epi8";
    for (c = 0, n = 0; have && c < NCASE; c++, n++) {
        uint64_t k = mask_of(c % 200, 64);
        fill(a, 64);
        memcpy(&v, a, 64);
        v = u8p_emu_mm512_maskz_compress_epi8(k, v);
        EMU_STORE(o2, v);
#if HAVE_NATIVE
        nat_maskz_compress_epi8(k, a, o1);
        if (memcmp(o1, o2, 64) != 0)
            mismatch(guard_cur_level, c);
#endif
    }
    report("_mm512_maskz_compress_epi8", "AVX-512 VBMI2", have, n);
    compared += n;

    /* masked loads: elements [0, inb) in bounds, the rest on the guard page;
     * the mask selects in-bounds elements only */
    {
        static const struct {
            const char *name, *needs;
            int esize;
        } loads[] = {
            {"_mm512_maskz_loadu_epi8", "avx512bw", 1},
            {"_mm512_maskz_loadu_epi16", "avx512bw", 2},
            {"_mm512_maskz_loadu_epi32", "avx512f", 4},
        };
        int li;
        for (li = 0; li < 3; li++) {
            int es = loads[li].esize, lanes = 64 / es;
            have = cpu(loads[li].needs);
            guard_cur_level = loads[li].name;
            for (c = 0, n = 0; have && c < NCASE; c++, n++) {
                int inb = c % (lanes + 1);
                uint64_t k = mask_of(c % 200, lanes);
                const uint8_t *p;
                if (c % 2 == 0) { /* running into the guard page */
                    k &= inb >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << inb) - 1);
                    p = guarded_tail(&g, (size_t)inb * (size_t)es);
                } else {
                    p = guarded_tail(&g, 64 + (size_t)(c % 7));
                }
                fill((uint8_t *)p, (size_t)(g.base + g.size - p));
                if (es == 1)
                    v = u8p_emu_mm512_maskz_loadu_epi8(k, p);
                else if (es == 2)
                    v = u8p_emu_mm512_maskz_loadu_epi16((simde__mmask32)k, p);
                else
                    v = u8p_emu_mm512_maskz_loadu_epi32((simde__mmask16)k, p);
                EMU_STORE(o2, v);
#if HAVE_NATIVE
                if (es == 1)
                    nat_maskz_loadu_epi8(k, p, o1);
                else if (es == 2)
                    nat_maskz_loadu_epi16((uint32_t)k, p, o1);
                else
                    nat_maskz_loadu_epi32((uint16_t)k, p, o1);
                if (memcmp(o1, o2, 64) != 0)
                    mismatch(guard_cur_level, c);
#endif
            }
            report(loads[li].name, loads[li].needs, have, n);
            compared += n;
        }
    }

    n = check_mask_store("_mm512_mask_storeu_epi8", "AVX-512 BW", cpu("avx512bw"), 1, &g, &g2,
                         NAT_STORE(nat_mask_storeu_epi8));
    compared += n;

    /* _mm512_cvtepu8_epi32 */
    have = cpu("avx512f");
    guard_cur_level = "_mm512_cvtepu8_epi32";
    for (c = 0, n = 0; have && c < NCASE; c++, n++) {
        simde__m128i x;
        fill(a, 16);
        memcpy(&x, a, 16);
        v = u8p_emu_mm512_cvtepu8_epi32(x);
        EMU_STORE(o2, v);
#if HAVE_NATIVE
        nat_cvtepu8_epi32(a, o1);
        if (memcmp(o1, o2, 64) != 0)
            mismatch(guard_cur_level, c);
#endif
    }
    report("_mm512_cvtepu8_epi32", "AVX-512 F", have, n);
    compared += n;

    /* _mm512_alignr_epi8 / _mm512_alignr_epi64 at the immediates the
     * kernels use and around them (and out of range) */
#if HAVE_NATIVE
    {
        int which;
        for (which = 0; which < 2; which++) {
            int nimm = which ? (int)(sizeof nat_alignr64 / sizeof nat_alignr64[0])
                             : (int)(sizeof nat_alignr8 / sizeof nat_alignr8[0]), ii;
            const char *name = which ? "_mm512_alignr_epi64" : "_mm512_alignr_epi8";
            have = cpu(which ? "avx512f" : "avx512bw");
            guard_cur_level = name;
            for (c = 0, n = 0; have && c < NCASE / 10; c++) {
                for (ii = 0; ii < nimm; ii++, n++) {
                    simde__m512i x, y;
                    int imm = which ? nat_alignr64[ii].imm : nat_alignr8[ii].imm;
                    fill(a, 64);
                    fill(b, 64);
                    memcpy(&x, a, 64);
                    memcpy(&y, b, 64);
                    v = which ? u8p_emu_mm512_alignr_epi64(x, y, imm)
                              : u8p_emu_mm512_alignr_epi8(x, y, imm);
                    EMU_STORE(o2, v);
                    (which ? nat_alignr64[ii].fn : nat_alignr8[ii].fn)(a, b, o1);
                    if (memcmp(o1, o2, 64) != 0)
                        mismatch(name, imm);
                }
            }
            report(name, which ? "AVX-512 F" : "AVX-512 BW", have, n);
            compared += n;
        }
    }
#else
    report("_mm512_alignr_epi8", "AVX-512 BW", 0, 0);
    report("_mm512_alignr_epi64", "AVX-512 F", 0, 0);
#endif

    /* _mm512_maskz_compress_epi16 */
    have = cpu("avx512vbmi2");
    guard_cur_level = "_mm512_maskz_compress_epi16";
    for (c = 0, n = 0; have && c < NCASE; c++, n++) {
        uint32_t k = (uint32_t)mask_of(c % 100, 32);
        fill(a, 64);
        memcpy(&v, a, 64);
        v = u8p_emu_mm512_maskz_compress_epi16(k, v);
        EMU_STORE(o2, v);
#if HAVE_NATIVE
        nat_maskz_compress_epi16(k, a, o1);
        if (memcmp(o1, o2, 64) != 0)
            mismatch(guard_cur_level, c);
#endif
    }
    report("_mm512_maskz_compress_epi16", "AVX-512 VBMI2", have, n);
    compared += n;

    n = check_mask_store("_mm512_mask_storeu_epi16", "AVX-512 BW", cpu("avx512bw"), 2, &g, &g2,
                         NAT_STORE(nat_mask_storeu_epi16));
    compared += n;
    n = check_mask_store("_mm512_mask_storeu_epi32", "AVX-512 F", cpu("avx512f"), 4, &g, &g2,
                         NAT_STORE(nat_mask_storeu_epi32));
    compared += n;

    /* _mm256_maskload_epi32: the mask is each lane's top bit */
    have = cpu("avx2");
    guard_cur_level = "_mm256_maskload_epi32";
    for (c = 0, n = 0; have && c < NCASE; c++, n++) {
        int inb = c % 9, j;
        uint64_t k = mask_of(c % 200, 8) & (((uint64_t)1 << inb) - 1);
        const uint8_t *p = guarded_tail(&g, (size_t)inb * 4);
        simde__m256i mk, r;
        fill((uint8_t *)p, (size_t)inb * 4);
        fill(b, 32);
        for (j = 0; j < 8; j++) { /* top bit from k, the other bits random */
            b[4 * j + 3] = (uint8_t)((b[4 * j + 3] & 0x7F) | (((k >> j) & 1) << 7));
        }
        memcpy(&mk, b, 32);
        r = u8p_emu_mm256_maskload_epi32((const int *)(const void *)p, mk);
        EMU_STORE(o2, r);
#if HAVE_NATIVE
        nat_maskload_epi32((const int *)(const void *)p, b, o1);
        if (memcmp(o1, o2, 32) != 0)
            mismatch(guard_cur_level, c);
#endif
    }
    report("_mm256_maskload_epi32", "AVX2", have, n);
    compared += n;

    printf("emulated intrinsics: %ld cases compared with native, %ld mismatches\n", compared,
           mismatches);
    return mismatches != 0;
}
