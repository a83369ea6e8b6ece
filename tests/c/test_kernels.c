/*
 * Kernel tests without Python: every level the CPU supports against an
 * independent reference (and so against scalar), for all six kernels.
 *
 *   make -C tests/c test            (or see the Makefile for the cc line)
 *
 * Prints one summary line; exits 1 on any mismatch, and a kernel that reads
 * or writes out of bounds dies with SIGSEGV (see check.h).
 */
#include "check.h"
#include "mixes.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint64_t
rnd(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint32_t
rnd_range(uint32_t lo, uint32_t hi) /* inclusive */
{
    return lo + (uint32_t)(rnd() % ((uint64_t)hi - lo + 1));
}


/* Code points at the edges a vector compare decides on (class limits,
 * surrogate bounds, the sign bits of 8/16/32-bit lanes); C_EDGE picks
 * among those the storage kind being built can hold. */
static const uint32_t edges[] = {
    0x00, 0x01, 0x7E, 0x7F, 0x80, 0x81, 0xBF, 0xC0, 0xFE, 0xFF, 0x100, 0x7FF, 0x800, 0xFFF,
    0x1000, 0x7FFF, 0x8000, 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000, 0xFFFD, 0xFFFE,
    0xFFFF, 0x10000, 0x10001, 0xFFFFF, 0x100000, 0x10FFFE, 0x10FFFF,
};
static int cur_kind = 4; /* the storage kind being built */

static uint32_t
cp_of(int cls)
{
    uint32_t c;
    switch (cls) {
    case C_ASCII:
        return rnd_range(0, 0x7F);
    case C_LATIN1:
        return rnd_range(0x80, 0xFF);
    case C_TWO:
        return rnd_range(0x80, 0x7FF);
    case C_THREE:
        do
            c = rnd_range(0x800, 0xFFFF);
        while (c >= 0xD800 && c <= 0xDFFF);
        return c;
    case C_SURR:
        return rnd_range(0xD800, 0xDFFF);
    case C_EDGE:
        do
            c = edges[rnd() % (sizeof edges / sizeof edges[0])];
        while ((cur_kind == 1 && c > 0xFF) || (cur_kind == 2 && c > 0xFFFF));
        return c;
    default:
        return rnd_range(0x10000, 0x10FFFF);
    }
}

/* which classes a storage kind may hold */
static int
class_ok(int kind, int cls)
{
    if (kind == 1)
        return cls <= C_LATIN1 || cls == C_EDGE;
    if (kind == 2)
        return cls != C_ASTRAL;
    return 1;
}

static uint32_t *cps;   /* code points of the case being built */
static void *units_buf; /* the same in the storage kind */

static long
run(int kind, size_t n, const char *label)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (kind == 1)
            ((uint8_t *)units_buf)[i] = (uint8_t)cps[i];
        else if (kind == 2)
            ((uint16_t *)units_buf)[i] = (uint16_t)cps[i];
        else
            ((uint32_t *)units_buf)[i] = cps[i];
    }
    return check_case(kind, units_buf, n, label);
}


static void
fill_mix(int kind, const mix *m, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        int r = (int)(rnd() % 1000), cls = 0, acc = 0;
        for (cls = 0; cls < C_NCLASS; cls++) {
            acc += m->permille[cls];
            if (r < acc)
                break;
        }
        if (cls == C_NCLASS || !class_ok(kind, cls))
            cls = kind == 1 && cls != C_NCLASS ? C_LATIN1 : C_ASCII;
        cps[i] = cp_of(cls);
    }
}

static void
fill_class(int cls, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        cps[i] = cp_of(cls);
}

int
main(void)
{
    static const int kinds[3] = {1, 2, 4};
    static const size_t specials[] = {16, 32, 64, 128, 256, 512, 1024, 4096};
    static const size_t sweep_lens[] = {1, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33,
                                        40, 47, 48, 49, 63, 64, 65, 100, 129};
    size_t big = 300000, n, p, q, s;
    int ki, li;
    unsigned mi;
    char label[96];

    check_init(big);
    cps = malloc(big * sizeof *cps);
    units_buf = malloc(big * 4);
    if (!cps || !units_buf)
        return 2;
    tt_report("encode", check_tables, check_ntables);

    /* dispatch: no cap picks the best level, a cap never exceeds itself,
     * unknown names select nothing; and every table it can pick on this
     * CPU is one this run tests */
    {
        static const char *const names[U8P_ISA_COUNT] = {"scalar", "sse", "avx2", "avx512"};
        const void *picked[U8P_ISA_COUNT];
        const u8p_kernels *best = u8p_select_kernels(NULL), *capped, *top = NULL;
        for (li = 0; li < U8P_ISA_COUNT; li++) {
            picked[li] = u8p_kernels_for_level((u8p_isa)li);
            if (picked[li])
                top = picked[li];
        }
        check_failures += tt_dispatch_covered(check_tables, check_ntables, picked, U8P_ISA_COUNT);
        if (best != top || u8p_select_kernels("") != best) {
            fprintf(stderr, "MISMATCH dispatch: select(NULL) is not the best level\n");
            check_failures++;
        }
        if (u8p_select_kernels("no-such-isa") != NULL) {
            fprintf(stderr, "MISMATCH dispatch: unknown cap selected a table\n");
            check_failures++;
        }
        for (li = 0; li < U8P_ISA_COUNT; li++) {
            const u8p_kernels *at = u8p_kernels_for_level((u8p_isa)li), *want = NULL;
            int lj;
            for (lj = li; lj >= 0 && !want; lj--)
                want = u8p_kernels_for_level((u8p_isa)lj);
            capped = u8p_select_kernels(names[li]);
            if (capped != want || (at && capped != at)) {
                fprintf(stderr, "MISMATCH dispatch: cap %s selected %s\n", names[li],
                        capped ? capped->name : "NULL");
                check_failures++;
            }
        }
    }

    for (ki = 0; ki < 3; ki++) {
        int kind = kinds[ki], cls, cls2;
        cur_kind = kind;

        /* every length 0..300: each class pure, and (UCS2/UCS4) a lone
         * surrogate first, last, and a pair of them in the middle */
        for (n = 0; n <= 300; n++) {
            for (cls = 0; cls < C_NCLASS; cls++) {
                if (!class_ok(kind, cls))
                    continue;
                fill_class(cls, n);
                snprintf(label, sizeof label, "pure %s", class_names[cls]);
                run(kind, n, label);
                if (kind == 1 || n == 0 || cls == C_SURR)
                    continue;
                cps[0] = cp_of(C_SURR);
                run(kind, n, "surrogate first");
                fill_class(cls, n);
                cps[n - 1] = cp_of(C_SURR);
                run(kind, n, "surrogate last");
                fill_class(cls, n);
                cps[n / 2] = cp_of(C_SURR);
                if (n / 2 + 1 < n)
                    cps[n / 2 + 1] = cp_of(C_SURR);
                run(kind, n, "surrogate pair in the middle");
            }
        }

        /* every length 0..300, every mix */
        for (n = 0; n <= 300; n++) {
            for (mi = 0; mi < NMIX; mi++) {
                fill_mix(kind, &mixes[mi], n);
                snprintf(label, sizeof label, "random %s", mixes[mi].name);
                run(kind, n, label);
            }
        }
        /* vector multiples +- 1, a few seeds each */
        for (s = 0; s < sizeof specials / sizeof specials[0]; s++) {
            for (n = specials[s] - 1; n <= specials[s] + 1; n++) {
                for (mi = 0; mi < NMIX; mi++) {
                    for (q = 0; q < 3; q++) {
                        fill_mix(kind, &mixes[mi], n);
                        snprintf(label, sizeof label, "boundary %s", mixes[mi].name);
                        run(kind, n, label);
                    }
                }
                for (cls = 0; cls < C_NCLASS; cls++) {
                    if (!class_ok(kind, cls))
                        continue;
                    fill_class(cls, n);
                    snprintf(label, sizeof label, "pure %s", class_names[cls]);
                    run(kind, n, label);
                }
            }
        }
        /* one special code point at every lane position of a uniform run */
        for (s = 0; s < sizeof sweep_lens / sizeof sweep_lens[0]; s++) {
            n = sweep_lens[s];
            for (cls = 0; cls < C_NCLASS; cls++) {
                if (!class_ok(kind, cls) || cls == C_SURR)
                    continue;
                for (cls2 = 0; cls2 < C_NCLASS; cls2++) {
                    if (!class_ok(kind, cls2) || cls2 == cls)
                        continue;
                    for (p = 0; p < n; p++) {
                        fill_class(cls, n);
                        cps[p] = cp_of(cls2);
                        snprintf(label, sizeof label, "%s in %s at %zu", class_names[cls2],
                                 class_names[cls], p);
                        run(kind, n, label);
                        /* and a second one later (two surrogates etc.) */
                        if (p + 3 < n) {
                            cps[n - 1 - (p % 5)] = cp_of(cls2);
                            run(kind, n, label);
                        }
                    }
                }
            }
        }
        /* the long UCS1 loops' block types, in a run long enough for the
         * two-block steps: ASCII blocks, and one Latin-1 byte at every
         * position of a block, then a second one beside it, then a third
         * 33 units on (in the block's other half, or the next block) */
        if (kind == 1) {
            n = 448;
            for (p = 0; p < n; p++) {
                fill_class(C_ASCII, n);
                cps[p] = cp_of(C_LATIN1);
                run(kind, n, "one latin1 in a long ascii run");
                cps[(p + 1) % n] = cp_of(C_LATIN1);
                run(kind, n, "two adjacent latin1 in a long ascii run");
                cps[(p + 33) % n] = cp_of(C_LATIN1);
                run(kind, n, "three latin1 across the halves of a block");
            }
            /* and after runs of ASCII pairs: one Latin-1 byte in the
             * third to fifth 128-byte pairs of a long input, then a
             * second one a block on, at every offset of the input from a
             * 64-byte boundary (the loop's head aligns its loads) */
            for (n = 1100; n < 1100 + 64; n++) {
                for (p = 256 + n % 7; p < 640; p += 7) {
                    fill_class(C_ASCII, n);
                    cps[p] = cp_of(C_LATIN1);
                    run(kind, n, "one latin1 after ascii pairs");
                    cps[p + 64] = cp_of(C_LATIN1);
                    run(kind, n, "two latin1 a block apart after ascii pairs");
                }
            }
        }
        /* the long two-byte UCS2 loop (AMD's pass forms): two-byte text
         * with a unit from U+0800, or a surrogate, at a position (the loop's
         * lanes step; a surrogate is noted there), and with four such
         * blocks within eight (the hand-over: to VBMI2's steps below 320
         * units, to AVX2's loop above) or three (no hand-over), at lengths
         * around its stop 64 units before the end */
        if (kind == 2) {
            static const size_t lens[] = {96, 130, 200, 320, 383, 700, 1111};
            size_t li2;
            for (li2 = 0; li2 < sizeof lens / sizeof lens[0]; li2++) {
                n = lens[li2];
                for (p = 0; p < n; p += 5) {
                    fill_mix(kind, &mixes[3], n);
                    cps[p] = cp_of(C_THREE);
                    run(kind, n, "one 3byte in 2byte text");
                    cps[p] = cp_of(C_SURR);
                    run(kind, n, "one surrogate in 2byte text");
                    if (p + 120 >= n)
                        continue;
                    cps[p + 40] = cp_of(C_THREE);
                    cps[p + 80] = cp_of(C_SURR);
                    run(kind, n, "three blocks from U+0800 in 2byte text");
                    cps[p + 120] = cp_of(C_THREE);
                    run(kind, n, "four blocks from U+0800 in 2byte text");
                }
            }
        }
        /* runs ending exactly at (and around) vector boundaries: ASCII
         * prefix of length a, then a run of b units of one class */
        for (cls = 1; cls < C_NCLASS; cls++) {
            static const size_t runs[] = {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64};
            size_t a, r;
            if (!class_ok(kind, cls))
                continue;
            for (a = 0; a <= 130; a++) {
                for (r = 0; r < sizeof runs / sizeof runs[0]; r++) {
                    size_t b = runs[r], tail = (a * 7 + r) % 40;
                    n = a + b + tail;
                    fill_class(C_ASCII, n);
                    for (q = a; q < a + b; q++)
                        cps[q] = cp_of(cls);
                    snprintf(label, sizeof label, "ascii*%zu %s*%zu ascii*%zu", a,
                             class_names[cls], b, tail);
                    run(kind, n, label);
                }
            }
        }
        /* long inputs at every offset from a 64-byte boundary (src ends at
         * the guard page, so n sets where it starts): the Latin-1 encoders
         * take the bytes up to an aligned load first, from 32 vectors on.
         * The head pure ASCII or holding a Latin-1 byte. */
        for (n = 1040; n < 1040 + 64; n++) {
            for (mi = 0; mi < NMIX; mi++) {
                fill_mix(kind, &mixes[mi], n);
                snprintf(label, sizeof label, "start offset %s", mixes[mi].name);
                run(kind, n, label);
            }
            fill_class(C_ASCII, n);
            run(kind, n, "start offset ascii");
            cps[n % 7] = cp_of(kind == 1 ? C_LATIN1 : C_THREE);
            run(kind, n, "start offset, one non-ASCII in the head");
        }
        /* a surrogate around the look-ahead scan's chunk edges */
        if (kind != 1) {
            for (p = 480; p < 1100; p += (p > 530 && p < 1000) ? 97 : 1) {
                n = 1100;
                fill_class(C_THREE, n);
                cps[p] = cp_of(C_SURR);
                run(kind, n, "surrogate near scan chunk edge");
            }
        }
        /* long inputs: the length passes flush their counters (every 127 to
         * 8192 steps, by level and kind) many times over */
        for (cls = 0; cls < C_NCLASS; cls++) {
            if (!class_ok(kind, cls))
                continue;
            fill_class(cls, big);
            snprintf(label, sizeof label, "long %s", class_names[cls]);
            run(kind, big, label);
        }
        for (mi = 0; mi < NMIX; mi++) {
            fill_mix(kind, &mixes[mi], big);
            snprintf(label, sizeof label, "long %s", mixes[mi].name);
            run(kind, big, label);
        }
    }

    if (check_vbmi2_on)
        printf("VBMI2 short steps (writer_short.h): %ld cases of 1..32 units, %ld of "
               "33..127 (room steps)\n",
               check_vbmi2_cases, check_vbmi2_long_cases);
    printf("%ld cases x %d tables, %ld mismatches\n", check_cases, check_nlevels,
           check_failures);
    return check_failures ? 1 : 0;
}
