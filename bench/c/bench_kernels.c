/*
 * Kernel micro-benchmark, no Python: ns per code point and GB/s (of UTF-8
 * output) for every level the CPU supports (and the tables that are not a
 * level's default: AVX-512 VBMI2), on generated text.
 *
 *   cc -O2 -Icsrc/kernels bench/c/bench_kernels.c $(find csrc/kernels -name '*.c') \
 *       -o /tmp/bench_kernels && /tmp/bench_kernels [n_codepoints]
 *
 * Inputs (default 4096 code points, also run at 200):
 *   ucs1 ascii     all ASCII
 *   ucs1 latin1    ASCII letters/spaces with 8% accented Latin-1
 *   ucs2 cyrillic  85% Cyrillic letters, the rest spaces and punctuation
 *   ucs2 cjk       90% CJK ideographs, the rest ASCII punctuation/digits
 *   ucs4 emoji     20% emoji mixed with ASCII letters
 *   ucs4 cldr_emoji  real text, at 8192 code points only: the records of
 *                  ../shared/corpus/cldr_emoji.tsv (emoji, space, its name
 *                  in every CLDR locale) joined with spaces and cut into
 *                  8192-code-point strings; skipped with a note when the
 *                  file is absent (run from the repository root, or set
 *                  U8P_EMOJI_TSV to its path)
 * Each measurement cycles through 16 different strings of the kind (one
 * string encoded over and over lets the branch predictor learn it, which
 * flatters the scalar loop).  Each time is the best of 300 repeats of a loop sized to ~20 us: on a
 * shared machine the minimum over short runs is what an undisturbed core
 * does.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels.h"

#define NSTR 16 /* different strings per input kind */

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

typedef struct {
    const char *name;
    int kind;
    uint32_t *cps;
} input;

static void
gen(input *in, const char *name, int kind, size_t n)
{
    static const char letters[] = "abcdefghijklmnopqrstuvwxyz   ,.";
    static const uint8_t accents[] = {0xE9, 0xE8, 0xE0, 0xE7, 0xF9, 0xE2, 0xEA, 0xEE,
                                      0xF4, 0xFB, 0xEB, 0xEF, 0xFC, 0xFF, 0xC9, 0xC0};
    size_t i;
    in->name = name;
    in->kind = kind;
    in->cps = malloc(n * NSTR * sizeof *in->cps);
    for (i = 0; i < n * NSTR; i++) {
        uint32_t c = (uint32_t)letters[rnd(sizeof letters - 1)], r = rnd(100);
        if (!strcmp(name, "latin1") && r < 8)
            c = accents[rnd(sizeof accents)];
        else if (!strcmp(name, "cyrillic") && r < 85)
            c = 0x430 + rnd(32);
        else if (!strcmp(name, "cjk"))
            c = r < 90 ? 0x4E00 + rnd(0x5200) : (uint32_t)" ,.0123456789"[rnd(13)];
        else if (!strcmp(name, "emoji") && r < 20)
            c = 0x1F600 + rnd(0x50);
        in->cps[i] = c;
    }
}


/* UTF-8 of trusted valid text -> code points; returns how many */
static size_t
utf8_to_cps(const uint8_t *s, size_t n, uint32_t *out, size_t max)
{
    size_t i = 0, k = 0;
    while (i < n && k < max) {
        uint32_t c = s[i];
        size_t l = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        if (i + l > n)
            break;
        if (l == 2)
            c = ((c & 0x1F) << 6) | (s[i + 1] & 0x3Fu);
        else if (l == 3)
            c = ((c & 0x0F) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
        else if (l == 4)
            c = ((c & 0x07) << 18) | ((s[i + 1] & 0x3Fu) << 12) | ((s[i + 2] & 0x3Fu) << 6)
                | (s[i + 3] & 0x3Fu);
        out[k++] = c;
        i += l;
    }
    return k;
}

/* the cldr_emoji input: NSTR strings of n code points (see the top);
 * 0 when the file is absent or too short */
static int
load_emoji_corpus(input *in, size_t n)
{
    const char *path = getenv("U8P_EMOJI_TSV");
    size_t want = n * NSTR, k = 0;
    char line[4096];
    FILE *f;
    if (!path)
        path = "../shared/corpus/cldr_emoji.tsv";
    f = fopen(path, "rb");
    if (!f) {
        printf("note: %s not found: cldr_emoji input skipped\n", path);
        return 0;
    }
    in->name = "cldr_emoji";
    in->kind = 4;
    in->cps = malloc(want * sizeof *in->cps);
    while (k < want && fgets(line, sizeof line, f)) {
        /* locale \t emoji \t name \n -> "emoji name " */
        char *e = strchr(line, '\t'), *nm, *end;
        if (!e)
            continue;
        e++;
        nm = strchr(e, '\t');
        if (!nm)
            continue;
        *nm = ' ';
        end = e + strcspn(e, "\r\n");
        *end++ = ' ';
        k += utf8_to_cps((const uint8_t *)e, (size_t)(end - e), in->cps + k, want - k);
    }
    fclose(f);
    if (k < want) {
        printf("note: %s too short: cldr_emoji input skipped\n", path);
        free(in->cps);
        return 0;
    }
    return 1;
}

static size_t
r_len(const u8p_kernels *k, const void *src, size_t n, int kind)
{
    size_t ns;
    if (kind == 1)
        return k->len_ucs1(src, n);
    if (kind == 2)
        return k->len_ucs2(src, n, &ns) + ns;
    return k->len_ucs4(src, n, &ns) + ns;
}

static size_t
r_enc(const u8p_kernels *k, const void *src, size_t n, int kind, uint8_t *dst)
{
    size_t done;
    if (kind == 1)
        return k->enc_ucs1(src, n, dst);
    if (kind == 2)
        return k->enc_ucs2(src, n, dst, &done) + done;
    return k->enc_ucs4(src, n, dst, &done) + done;
}

static volatile size_t sink;

static double
time_one(const u8p_kernels *k, const void *base, size_t n, int kind, uint8_t *dst, int enc)
{
#define SRC_R ((const char *)base + (size_t)(r % NSTR) * n * (size_t)kind)
    long reps = NSTR, r; /* whole rounds of the NSTR strings */
    double best = 1e30, t0, t;
    int rep;
    /* calibrate to ~20 us a measurement (at least one round) */
    for (;;) {
        t0 = now();
        for (r = 0; r < reps; r++)
            sink += enc ? r_enc(k, SRC_R, n, kind, dst) : r_len(k, SRC_R, n, kind);
        t = now() - t0;
        if (t > 2e-5)
            break;
        reps *= 2;
    }
    for (rep = 0; rep < 300; rep++) {
        t0 = now();
        for (r = 0; r < reps; r++)
            sink += enc ? r_enc(k, SRC_R, n, kind, dst) : r_len(k, SRC_R, n, kind);
        t = (now() - t0) / (double)reps;
        if (t < best)
            best = t;
    }
    return best;
}

int
main(int argc, char **argv)
{
    size_t sizes[3] = {4096, 200, 8192}, n, i, out, big;
    input ins[6];
    int nin[3] = {5, 5, 0};
    int si, ii, lvl;
    uint8_t *dst;
    void *src;
    if (argc > 1)
        sizes[0] = (size_t)atol(argv[1]);
    /* inputs and buffers for the larger size (a first size under 200 used
     * to overrun them) */
    big = sizes[0] > sizes[1] ? sizes[0] : sizes[1];
    if (big < sizes[2])
        big = sizes[2];
    gen(&ins[0], "ascii", 1, big);
    gen(&ins[1], "latin1", 1, big);
    gen(&ins[2], "cyrillic", 2, big);
    gen(&ins[3], "cjk", 2, big);
    gen(&ins[4], "emoji", 4, big);
    if (load_emoji_corpus(&ins[5], sizes[2]))
        nin[2] = 1; /* the 8192 round: cldr_emoji only */
    dst = malloc(4 * big + 64);
    src = malloc(4 * big * NSTR);
    printf("%-12s %-5s %-9s %6s | %9s %8s | %9s %8s\n", "level", "kind", "input", "n",
           "enc ns/cp", "GB/s", "len ns/cp", "GB/s");
    for (si = 0; si < 3; si++) {
        n = sizes[si];
        for (ii = 0; ii < nin[si]; ii++) {
            input *in = &ins[si == 2 ? 5 : ii];
            for (i = 0; i < n * NSTR; i++) {
                if (in->kind == 1)
                    ((uint8_t *)src)[i] = (uint8_t)in->cps[i];
                else if (in->kind == 2)
                    ((uint16_t *)src)[i] = (uint16_t)in->cps[i];
                else
                    ((uint32_t *)src)[i] = in->cps[i];
            }
            out = r_enc(&u8p_kernels_scalar, src, n, in->kind, dst) - (in->kind == 1 ? 0 : n);
            for (lvl = 0; lvl < 2 * U8P_ISA_COUNT; lvl++) {
                /* every level's table, then the variants (AVX-512 VBMI2) */
                const u8p_kernels *v[3], *k = NULL;
                double te, tl;
                if (lvl < U8P_ISA_COUNT)
                    k = u8p_kernels_for_level((u8p_isa)lvl);
                else if (u8p_kernels_variants((u8p_isa)(lvl - U8P_ISA_COUNT), v, 3) > 1)
                    k = v[1];
                if (!k)
                    continue;
                te = time_one(k, src, n, in->kind, dst, 1);
                tl = time_one(k, src, n, in->kind, dst, 0);
                printf("%-12s ucs%d  %-9s %6zu | %9.3f %8.2f | %9.3f %8.2f\n", k->name,
                       in->kind, in->name, n, te * 1e9 / (double)n, (double)out / te * 1e-9,
                       tl * 1e9 / (double)n, (double)out / tl * 1e-9);
            }
        }
    }
    return 0;
}
