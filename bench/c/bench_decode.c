/*
 * Decode-kernel micro-benchmark, no Python: ns per string and GB/s (of
 * UTF-8 input) of scan + transcode for every decode table the CPU supports
 * (both AVX-512 tables where it has VBMI2), on generated text.
 *
 *   cc -O2 -Icsrc/kernels bench/c/bench_decode.c $(find csrc/kernels -name '*.c') \
 *       -o /tmp/bench_decode && /tmp/bench_decode [n_codepoints...]
 *
 * Inputs (default 4096, 200 and 40 code points), as bench_kernels.c:
 * ascii, latin1 (8 % accented Latin-1), cyrillic (85 %), cjk (90 %),
 * emoji (20 % emoji among ASCII letters).  Each measurement cycles through
 * 16 different strings of the kind and is the best of 200 repeats of a
 * loop sized to ~20 us.  Levels are measured one after the other for each
 * input, so a burst of load hits a row, not a level.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode.h"
#include "kernels.h"

#define NSTR 16

static uint64_t rs = 0x243F6A8885A308D3ULL;

static uint32_t
rnd(uint32_t mod)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs % mod);
}

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint32_t
gen_cp(const char *name)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyz   ,.";
    static const uint8_t accents[] = {0xE9, 0xE8, 0xE0, 0xE7, 0xF9, 0xE2, 0xEA, 0xEE,
                                      0xF4, 0xFB, 0xEB, 0xEF, 0xFC, 0xFF, 0xC9, 0xC0};
    uint32_t c = (uint32_t)letters[rnd(sizeof letters - 1)], r = rnd(100);
    if (!strcmp(name, "latin1") && r < 8)
        c = accents[rnd(sizeof accents)];
    else if (!strcmp(name, "cyrillic") && r < 85)
        c = 0x430 + rnd(32);
    else if (!strcmp(name, "cjk"))
        c = r < 90 ? 0x4E00 + rnd(0x5200) : (uint32_t)" ,.0123456789"[rnd(13)];
    else if (!strcmp(name, "emoji") && r < 20)
        c = 0x1F600 + rnd(0x50);
    return c;
}

static size_t
put_utf8(uint8_t *d, uint32_t c)
{
    if (c < 0x80) {
        d[0] = (uint8_t)c;
        return 1;
    }
    if (c < 0x800) {
        d[0] = (uint8_t)(0xC0 | (c >> 6));
        d[1] = (uint8_t)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        d[0] = (uint8_t)(0xE0 | (c >> 12));
        d[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        d[2] = (uint8_t)(0x80 | (c & 0x3F));
        return 3;
    }
    d[0] = (uint8_t)(0xF0 | (c >> 18));
    d[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
    d[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
    d[3] = (uint8_t)(0x80 | (c & 0x3F));
    return 4;
}

static volatile size_t sink;

/* what the reader does with one payload: scan, then transcode to the kind
 * the scan found (the fused UCS1 path where the table has one) */
static size_t
decode_one(const u8p_dec_kernels *k, const uint8_t *s, size_t n, void *dst)
{
    u8p_scan_result r;
    if (k->prescan) {
        size_t ncp, got;
        uint8_t mb = k->prescan(s, n, &ncp);
        if (mb < 0x80) {
            memcpy(dst, s, n);
            return n;
        }
        if (mb < 0xC4 && k->to_ucs1_checked(s, n, dst, ncp, &got) == U8P_DEC_OK && got == ncp)
            return ncp;
    }
    if (k->scan(s, n, 0, &r) != U8P_DEC_OK)
        return 0;
    if (r.maxchar <= 0x7F) {
        memcpy(dst, s, n);
        return n;
    }
    if (r.maxchar <= 0xFF)
        return k->to_ucs1(s, n, dst);
    if (r.maxchar <= 0xFFFF)
        return k->to_ucs2(s, n, dst);
    return k->to_ucs4(s, n, dst);
}

static double
time_one(const u8p_dec_kernels *k, uint8_t *const *strs, const size_t *lens, void *dst)
{
    long reps = NSTR, r;
    double best = 1e30, t0, t;
    int rep;
    for (;;) {
        t0 = now();
        for (r = 0; r < reps; r++)
            sink += decode_one(k, strs[r % NSTR], lens[r % NSTR], dst);
        t = now() - t0;
        if (t > 2e-5)
            break;
        reps *= 2;
    }
    for (rep = 0; rep < 200; rep++) {
        t0 = now();
        for (r = 0; r < reps; r++)
            sink += decode_one(k, strs[r % NSTR], lens[r % NSTR], dst);
        t = (now() - t0) / (double)reps;
        if (t < best)
            best = t;
    }
    return best;
}

int
main(int argc, char **argv)
{
    static const char *const kinds[] = {"ascii", "latin1", "cyrillic", "cjk", "emoji"};
    size_t sizes[8] = {4096, 200, 40};
    int nsizes = 3, si, ki, t, ntab = 0, lvl;
    const u8p_dec_kernels *tabs[2 * U8P_ISA_COUNT];
    const char *label[2 * U8P_ISA_COUNT];
    if (argc > 1) {
        for (nsizes = 0; nsizes < argc - 1 && nsizes < 8; nsizes++)
            sizes[nsizes] = (size_t)atol(argv[nsizes + 1]);
    }
    for (lvl = 0; lvl < U8P_ISA_COUNT; lvl++) {
        int got = u8p_dec_kernels_variants((u8p_isa)lvl, tabs + ntab, 2), j;
        for (j = 0; j < got; j++)
            label[ntab + j] = got == 2 ? (j == 0 ? "avx512vbmi2" : "avx512bw") : tabs[ntab]->name;
        ntab += got;
    }
    printf("%-9s %6s %6s |", "input", "cps", "bytes");
    for (t = 0; t < ntab; t++)
        printf(" %12s", label[t]);
    printf("   (ns per string; then t_avx2 / t_level for the levels above avx2)\n");
    for (si = 0; si < nsizes; si++) {
        for (ki = 0; ki < 5; ki++) {
            uint8_t *strs[NSTR];
            size_t lens[NSTR], j, tot = 0;
            void *dst = malloc(4 * sizes[si] + 64);
            double tm[2 * U8P_ISA_COUNT];
            for (j = 0; j < NSTR; j++) {
                size_t c, o = 0;
                strs[j] = malloc(4 * sizes[si] + 1);
                for (c = 0; c < sizes[si]; c++)
                    o += put_utf8(strs[j] + o, gen_cp(kinds[ki]));
                lens[j] = o;
                tot += o;
            }
            for (t = 0; t < ntab; t++)
                tm[t] = time_one(tabs[t], strs, lens, dst);
            printf("%-9s %6zu %6zu |", kinds[ki], sizes[si], tot / NSTR);
            for (t = 0; t < ntab; t++)
                printf(" %12.1f", tm[t] * 1e9);
            printf("  ");
            for (t = 3; t < ntab; t++)
                printf(" %s %.2fx", label[t], tm[2] / tm[t]);
            printf("\n");
            for (j = 0; j < NSTR; j++)
                free(strs[j]);
            free(dst);
        }
    }
    return 0;
}
