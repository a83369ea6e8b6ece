/*
 * What a reader that returns a new object per record cannot go below, for
 * long ASCII payloads, without Python: ns per record of
 *
 *   memcpy      the whole blob copied into one existing buffer (the reader
 *               suite's `copy` floor, what a reader target stated as a
 *               multiple of a plain copy divides by);
 *   check+copy  the decode table's copy_ascii (the reader's fused
 *               check-and-copy pass) of every record into one existing
 *               buffer, per level the CPU runs;
 *   +malloc     the same, each record into its own malloc'd block, the k
 *               blocks alive together and then freed last to first (as a
 *               list of k new str objects is built and then dropped), the
 *               least any new object costs on top of the copy (CPython's
 *               str adds its header, PyObject_Malloc's dispatch and the list);
 *   +malloc, top kept   the same with glibc's heap trimming turned off
 *               (M_TRIM_THRESHOLD, M_TOP_PAD), so the freed heap top is not
 *               given back to the kernel and faulted in again on the next
 *               round; glibc only, a process-wide setting a library must
 *               not make, shown to separate the page faults from the rest.
 *
 *   cc -O2 -Icsrc/kernels bench/c/bench_read_floor.c $(find csrc/kernels -name '*.c') \
 *       -o /tmp/bench_read_floor && /tmp/bench_read_floor [bytes:records ...]
 *
 * Default shapes 4096:64 (the reader suite's ascii_4096: 64 records of
 * 4 KB), 4096:16, and 65536:4 (ascii_vlarge).  Each figure is the best of
 * 100 repeats of a loop sized to ~200 us; the columns of a row are measured
 * one after the other, so a burst of load hits a row, not a column.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "decode.h"
#include "kernels.h"

static volatile size_t sink;

static double
now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

enum { M_MEMCPY, M_CHECK, M_MALLOC };

/* one round over the k records of n bytes in blob */
static void
round_once(int mode, const u8p_dec_kernels *t, const uint8_t *blob, size_t n,
           size_t k, uint8_t *dst, uint8_t **blocks)
{
    size_t j;
    if (mode == M_MEMCPY) {
        memcpy(dst, blob, n * k);
        sink += dst[n * k - 1];
        return;
    }
    for (j = 0; j < k; j++) {
        /* 48: where a compact ASCII str's characters start (3.11: header
         * of 48 bytes), so the stores meet the same alignment */
        uint8_t *d = dst + j * n;
        if (mode == M_MALLOC) {
            if ((blocks[j] = malloc(n + 49)) == NULL) {
                fprintf(stderr, "out of memory\n");
                exit(1);
            }
            d = blocks[j] + 48;
        }
        sink += (size_t)t->copy_ascii(blob + j * n, n, d);
    }
    if (mode == M_MALLOC)
        for (j = k; j-- > 0;)
            free(blocks[j]);
}

static double
time_mode(int mode, const u8p_dec_kernels *t, const uint8_t *blob, size_t n, size_t k,
          uint8_t *dst, uint8_t **blocks)
{
    long reps = 1, r;
    double best = 1e30, t0, el;
    int rep;
    for (;;) {
        t0 = now();
        for (r = 0; r < reps; r++)
            round_once(mode, t, blob, n, k, dst, blocks);
        if (now() - t0 > 2e-4)
            break;
        reps *= 2;
    }
    for (rep = 0; rep < 100; rep++) {
        t0 = now();
        for (r = 0; r < reps; r++)
            round_once(mode, t, blob, n, k, dst, blocks);
        el = (now() - t0) / (double)(reps * (long)k);
        if (el < best)
            best = el;
    }
    return best * 1e9;
}

static void
row(const char *what, size_t n, size_t k, const u8p_dec_kernels *const tabs[2])
{
    uint8_t *blob = malloc(n * k), *dst = malloc(n * k + 64);
    uint8_t **blocks = calloc(k, sizeof *blocks);
    double copy, chk, mal;
    size_t j;
    int t;
    if (!blob || !dst || !blocks) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (j = 0; j < n * k; j++)
        blob[j] = (uint8_t)("abcdefghijklmnopqrstuvwxyz ,.ABC"[j % 32]);
    memset(dst, 0, n * k + 64);
    copy = time_mode(M_MEMCPY, NULL, blob, n, k, dst, blocks);
    printf("%-18s %6zu x %-3zu  memcpy %7.1f |", what, n, k, copy);
    for (t = 0; t < 2; t++) {
        chk = time_mode(M_CHECK, tabs[t], blob, n, k, dst, blocks);
        mal = time_mode(M_MALLOC, tabs[t], blob, n, k, dst, blocks);
        printf("  %s %.1f (%.2fx) +malloc %.1f (%.2fx)", tabs[t]->name, chk, chk / copy, mal,
               mal / copy);
    }
    printf("\n");
    free(blocks);
    free(dst);
    free(blob);
}

int
main(int argc, char **argv)
{
    size_t shapes[16][2] = {{4096, 64}, {4096, 16}, {65536, 4}};
    int nshapes = 3, s;
    const u8p_dec_kernels *tabs[2];
    if (argc > 1) {
        for (nshapes = 0; nshapes < argc - 1 && nshapes < 16; nshapes++) {
            unsigned long b = 0, r = 0;
            if (sscanf(argv[nshapes + 1], "%lu:%lu", &b, &r) != 2 || !b || !r) {
                fprintf(stderr, "usage: %s [bytes:records ...]\n", argv[0]);
                return 2;
            }
            shapes[nshapes][0] = b;
            shapes[nshapes][1] = r;
        }
    }
    /* scalar, and the table the reader picks on this CPU */
    tabs[0] = u8p_dec_kernels_for_level(U8P_ISA_SCALAR);
    tabs[1] = u8p_select_dec_kernels(NULL);
    if (!tabs[0] || !tabs[1]) {
        fprintf(stderr, "no decode table\n");
        return 1;
    }
    printf("ns per record (best of 100); (x) = / memcpy of the same bytes\n");
    for (s = 0; s < nshapes; s++)
        row("glibc defaults", shapes[s][0], shapes[s][1], tabs);
#ifdef __GLIBC__
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
    for (s = 0; s < nshapes; s++)
        row("heap top kept", shapes[s][0], shapes[s][1], tabs);
#endif
    return 0;
}
