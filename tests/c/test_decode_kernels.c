/*
 * Differential test of the decode kernels, no Python needed:
 *   gcc -O2 -I../../csrc/kernels test_decode_kernels.c \
 *       ../../csrc/kernels/[a-z]*.c -o /tmp/tdk && /tmp/tdk   (or: make -C tests/c decode)
 * Every compiled level the CPU supports must agree with the scalar kernel
 * (status, bounds, ncp, class) on random mutations of valid UTF-8 of many
 * lengths, and its transcoders must produce the scalar's code units.
 * Inputs are copied to exact-size heap blocks so that a sanitizer build
 * (-fsanitize=address) catches any read past the payload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint32_t
rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

static size_t
put_cp(uint8_t *d, uint32_t c)
{
    if (c < 0x80) { d[0] = (uint8_t)c; return 1; }
    if (c < 0x800) { d[0] = (uint8_t)(0xC0 | (c >> 6)); d[1] = (uint8_t)(0x80 | (c & 0x3F)); return 2; }
    if (c < 0x10000) {
        d[0] = (uint8_t)(0xE0 | (c >> 12)); d[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        d[2] = (uint8_t)(0x80 | (c & 0x3F)); return 3;
    }
    d[0] = (uint8_t)(0xF0 | (c >> 18)); d[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
    d[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F)); d[3] = (uint8_t)(0x80 | (c & 0x3F)); return 4;
}

static uint32_t
rand_cp(int mix)
{
    uint32_t r = rnd() % 100;
    uint32_t c;
    if (r < (uint32_t)mix) return rnd() % 0x80;
    switch (rnd() % 4) {
    case 0: c = 0x80 + rnd() % 0x80; break;
    case 1: c = 0x80 + rnd() % 0x780; break;
    case 2: c = 0x800 + rnd() % 0xF800; break;
    default: c = 0x10000 + rnd() % 0x100000; break;
    }
    return c;
}

int
main(void)
{
    int iter, lvl, nlev = 0, failures = 0;
    /* every table of every level the CPU has (AVX-512 has two: F+BW and
     * VBMI2); levels[0] is scalar, the reference */
    const u8p_dec_kernels *levels[2 * U8P_ISA_COUNT];
    for (lvl = 0; lvl < U8P_ISA_COUNT; lvl++)
        nlev += u8p_dec_kernels_variants((u8p_isa)lvl, levels + nlev, 2);
    printf("decode kernels tested natively:");
    for (lvl = 1; lvl < nlev; lvl++)
        printf(" %s%s", levels[lvl]->name,
               lvl + 1 < nlev && !strcmp(levels[lvl]->name, levels[lvl + 1]->name) ? "(vbmi2)"
               : lvl > 1 && !strcmp(levels[lvl]->name, levels[lvl - 1]->name) ? "(bw)" : "");
    printf("\n");
    for (iter = 0; iter < 200000; iter++) {
        uint8_t gen[1200];
        size_t n = 0, target = rnd() % (iter % 10 == 0 ? 1000 : 140);
        int mix = (int)(rnd() % 101), surr = (int)(rnd() & 1), nmut, m;
        uint32_t cls = rnd() % 4;
        while (n < target) {
            uint32_t c = rand_cp(mix);
            if (cls == 0) c &= 0x7F;
            else if (cls == 1) c &= 0xFF;
            else if (cls == 2 && c > 0xFFFF) c &= 0xFFFF;
            if (c >= 0xD800 && c < 0xE000 && !(surr && rnd() % 4 == 0)) c = 0x41;
            n += put_cp(gen + n, c);
        }
        nmut = (rnd() % 3 == 0) ? (int)(rnd() % 3) + 1 : 0;
        for (m = 0; m < nmut && n; m++) {
            size_t at = rnd() % n;
            switch (rnd() % 3) {
            case 0: gen[at] = (uint8_t)rnd(); break;
            case 1: gen[at] = (uint8_t)(0x80 | (rnd() % 0x40)); break;
            default: n = at; break; /* truncate */
            }
        }
        {
            uint8_t *src = malloc(n ? n : 1);
            u8p_scan_result ref, got;
            u8p_dec_status rs, gs;
            uint32_t *refout = NULL;
            memcpy(src, gen, n);
            rs = u8p_dec_scan_scalar(src, n, surr, &ref);
            if (rs == U8P_DEC_OK) {
                refout = malloc((ref.ncp + 1) * 4);
                if (ref.maxchar <= 0xFF) {
                    uint8_t *t = malloc(ref.ncp + 1); size_t q;
                    u8p_dec_kernels_scalar.to_ucs1(src, n, t);
                    for (q = 0; q < ref.ncp; q++) refout[q] = t[q];
                    free(t);
                } else if (ref.maxchar <= 0xFFFF) {
                    uint16_t *t = malloc((ref.ncp + 1) * 2); size_t q;
                    u8p_dec_kernels_scalar.to_ucs2(src, n, t);
                    for (q = 0; q < ref.ncp; q++) refout[q] = t[q];
                    free(t);
                } else {
                    u8p_dec_kernels_scalar.to_ucs4(src, n, refout);
                }
            }
            for (lvl = 1; lvl < nlev; lvl++) {
                const u8p_dec_kernels *K = levels[lvl];
                if (K->prescan) {
                    /* fused UCS1 path: right answer, and no write past cap
                     * even for a wrong cap or invalid bytes */
                    size_t pn = 0, cap, q;
                    uint8_t mb = K->prescan(src, n, &pn);
                    int ucs1 = rs == U8P_DEC_OK && ref.maxchar <= 0xFF, d;
                    if ((rs == U8P_DEC_OK && (mb < 0xC4) != ucs1)
                        || (ucs1 && (pn != ref.ncp || (mb < 0x80) != (ref.maxchar == 0x7F)))) {
                        if (failures++ < 10)
                            printf("prescan mismatch %s iter %d n=%zu\n", K->name, iter, n);
                    }
                    for (d = -1; mb < 0xC4 && d <= 1; d++) {
                        uint8_t *t;
                        u8p_dec_status cs;
                        int bad = 0;
                        if (d < 0 && pn == 0) continue;
                        cap = pn + (size_t)(long)d;
                        t = malloc(cap ? cap : 1);
                        cs = K->to_ucs1_checked(src, n, t, cap);
                        if ((cs == U8P_DEC_OK) != (ucs1 && cap == ref.ncp)) bad = 1;
                        else if (cs == U8P_DEC_OK)
                            for (q = 0; q < cap; q++) bad |= t[q] != refout[q];
                        if (bad && failures++ < 10)
                            printf("to_ucs1_checked mismatch %s iter %d n=%zu cap=%zu: %d\n",
                                   K->name, iter, n, cap, cs);
                        free(t);
                    }
                }
                memset(&got, 0, sizeof got);
                gs = K->scan(src, n, surr, &got);
                if (gs != rs || (rs == U8P_DEC_OK && (got.ncp != ref.ncp || got.maxchar != ref.maxchar))
                    || (rs != U8P_DEC_OK && (got.err_start != ref.err_start || got.err_end != ref.err_end))) {
                    if (failures++ < 10)
                        printf("scan mismatch %s iter %d n=%zu: %d/%d\n", K->name, iter, n, gs, rs);
                    continue;
                }
                if (rs == U8P_DEC_OK) {
                    size_t q, w; int bad = 0;
                    if (ref.maxchar <= 0xFF) {
                        uint8_t *t = malloc(ref.ncp ? ref.ncp : 1);
                        w = K->to_ucs1(src, n, t);
                        for (q = 0; q < ref.ncp; q++) bad |= t[q] != refout[q];
                        free(t);
                    } else if (ref.maxchar <= 0xFFFF) {
                        uint16_t *t = malloc(ref.ncp ? ref.ncp * 2 : 2);
                        w = K->to_ucs2(src, n, t);
                        for (q = 0; q < ref.ncp; q++) bad |= t[q] != refout[q];
                        free(t);
                    } else {
                        uint32_t *t = malloc(ref.ncp ? ref.ncp * 4 : 4);
                        w = K->to_ucs4(src, n, t);
                        for (q = 0; q < ref.ncp; q++) bad |= t[q] != refout[q];
                        free(t);
                    }
                    if (bad || w != ref.ncp) {
                        if (failures++ < 10)
                            printf("transcode mismatch %s iter %d n=%zu\n", K->name, iter, n);
                    }
                }
            }
            free(refout);
            free(src);
        }
    }
    printf("decode kernels: %d failures\n", failures);
    return failures != 0;
}
