/*
 * Shared by test_kernels.c and fuzz_kernels.c: run one input through every
 * kernel table the build runs (tables.h: every table the CPU has, or every
 * x86 table in the emulated build; without a table list, one per level
 * from dispatch) and compare with an independent per-code-point reference
 * (which also checks the scalar kernels themselves).
 *
 * Sources sit at the very end of a read/write mapping followed by a
 * PROT_NONE page, so a kernel that reads past src + n faults.  Each
 * destination is sized EXACTLY to the expected output and placed the same
 * way (a write past it faults), with a canary in front of it (a write
 * before it is reported).  The guard pages are guard.h's.
 *
 * The writer's inline short steps for the VBMI2 table
 * (short_vbmi2.h: the masked ASCII copy, the two-byte steps for UCS1 and
 * UCS2, the lanes step for UCS2 and UCS4, which the writer's short path
 * runs only while that table is in use) are no table's entries, so they
 * are run here by name, on every input of 1..32 code units, whenever this
 * build runs that table (natively on a CPU with VBMI2, or emulated):
 * check_vbmi2_short below.
 */
#ifndef U8P_TEST_CHECK_H
#define U8P_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guard.h"
#include "kernels.h"
#define U8P_WANT_ENC
#include "tables.h"
#include "short_vbmi2.h"

/* the tables this build runs (tables.h), scalar first; check_tables has
 * every table found, check_levels only those that run */
static tt_entry check_tables[TT_MAX];
static int check_ntables;
static const u8p_kernels *check_levels[TT_MAX];
static const char *check_level_names[TT_MAX];
static int check_nlevels;
static long check_failures, check_cases;
static guarded check_src, check_dst;
static uint8_t *check_expect;
static size_t check_cap; /* code points */
/* this build runs the VBMI2 table: its short steps run too (check_vbmi2_short) */
static int check_vbmi2_on;
static long check_vbmi2_cases, check_vbmi2_long_cases;

static void
check_init(size_t max_cp)
{
    int lvl;
    guard_on_faults();
    check_nlevels = 0;
    check_ntables = tt_collect(1, check_tables);
    for (lvl = 0; lvl < check_ntables; lvl++) {
        if (check_tables[lvl].run) {
            check_level_names[check_nlevels] = tt_short(check_tables[lvl].sym);
            check_levels[check_nlevels++] = (const u8p_kernels *)check_tables[lvl].table;
#if U8P_HAVE_VBMI2_SHORT
            if (U8P_VBMI2_SHORT_OK((const u8p_kernels *)check_tables[lvl].table))
                check_vbmi2_on = 1;
#endif
        }
    }
    check_cap = max_cp;
    guarded_init(&check_src, 4 * max_cp);
    guarded_init(&check_dst, 4 * max_cp + U8P_ENC_ROOM + CHECK_CANARY);
    check_expect = malloc(4 * max_cp + 1);
    if (!check_expect)
        exit(2);
}

/* the independent reference: one code point at a time */
static size_t
ref_utf8(uint32_t c, uint8_t *d)
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

static void
check_fail(const char *level, int kind, const char *fn, const char *label, size_t n,
           const char *what, size_t got, size_t want)
{
    check_failures++;
    if (check_failures <= 20)
        fprintf(stderr, "MISMATCH level=%s ucs%d %s [%s] n=%zu: %s got %zu want %zu\n", level,
                kind, fn, label, n, what, got, want);
}

static size_t
cp_at(int kind, const void *src, size_t i)
{
    if (kind == 1)
        return ((const uint8_t *)src)[i];
    if (kind == 2)
        return ((const uint16_t *)src)[i];
    return ((const uint32_t *)src)[i];
}

/* A destination of `room` bytes that ends at the guard page (a write past
 * it faults), filled with 0xA5 and with a canary of 0xA5 in front. */
static uint8_t *
check_dst_at(size_t room)
{
    uint8_t *dst = guarded_tail(&check_dst, room);
    memset(dst - CHECK_CANARY, 0xA5, CHECK_CANARY + room);
    return dst;
}

/* dst's first `want` bytes against check_expect, and its canary. */
static void
check_bytes(const char *level, int kind, const char *fn, const char *label, size_t n,
            const uint8_t *dst, size_t want)
{
    size_t i;
    if (memcmp(dst, check_expect, want) != 0) {
        size_t j = 0;
        while (dst[j] == check_expect[j])
            j++;
        check_fail(level, kind, fn, label, n, "first differing byte at", j, want);
    }
    for (i = 0; i < CHECK_CANARY; i++) {
        if (dst[(ptrdiff_t)i - CHECK_CANARY] != 0xA5) {
            check_fail(level, kind, fn, label, n, "wrote before dst, offset", i, CHECK_CANARY);
            break;
        }
    }
}

#if U8P_HAVE_VBMI2_SHORT
/* One short step's result against the reference: `want` bytes expected
 * (or (size_t)-1: the step must refuse), dst placed before the guard page
 * with `room` bytes and a canary in front. */
static void
check_vbmi2_result(int kind, const char *fn, const char *label, size_t n, size_t got, size_t want,
                   const uint8_t *dst, size_t room, int untouched)
{
    size_t i;
    if (got != want) {
        check_fail("vbmi2_short", kind, fn, label, n, "bytes", got, want);
        return;
    }
    check_bytes("vbmi2_short", kind, fn, label, n, dst, want == (size_t)-1 ? 0 : want);
    for (i = 0; untouched && i < room; i++) {
        if (dst[i] != 0xA5) {
            check_fail("vbmi2_short", kind, fn, label, n, "refused but wrote at", i, room);
            break;
        }
    }
}

/* The writer's room steps (U8P_VBMI2_ROOM bytes free, plain 64-byte
 * stores): the count and the bytes, on a destination right before the
 * guard page (a store past the room faults); UCS4 from one code point
 * (and the one-code-point step) up to 31, as the writer calls them. */
U8P_VBMI2_TARGET static void
check_vbmi2_room(int kind, const void *src, size_t n, size_t full, size_t surr,
                 const char *label)
{
    uint8_t *dst = check_dst_at(U8P_VBMI2_ROOM);
    size_t r;
    if (kind == 1) {
        r = u8p_vbmi2_short_ucs1_room((const uint8_t *)src, n, dst);
        check_vbmi2_result(kind, "short_ucs1_room", label, n, r, full, dst, 0, 0);
    }
    else if (kind == 2) {
        r = u8p_vbmi2_short_ucs2_room((const uint16_t *)src, n, dst);
        check_vbmi2_result(kind, "short_ucs2_room", label, n, r, surr ? (size_t)-1 : full, dst, 0,
                           0);
        if (n <= U8P_VBMI2_ANY_UCS2_MAX) {
            dst = check_dst_at(U8P_VBMI2_ROOM);
            r = u8p_vbmi2_short_ucs2_any_room((const uint16_t *)src, n, dst);
            check_vbmi2_result(kind, "short_ucs2_any_room", label, n, r,
                               surr ? (size_t)-1 : full, dst, 0, 0);
        }
    }
    else if (n < 32) {
        r = u8p_vbmi2_short_ucs4_room((const uint32_t *)src, n, dst);
        check_vbmi2_result(kind, "short_ucs4_room", label, n, r, surr ? (size_t)-1 : full, dst, 0,
                           0);
        if (n == 1) { /* U+10000..U+10FFFF only; any other value refused */
            const uint32_t c = ((const uint32_t *)src)[0];
            dst = check_dst_at(U8P_VBMI2_ROOM);
            r = u8p_vbmi2_one_ucs4_room((const uint32_t *)src, dst);
            check_vbmi2_result(kind, "one_ucs4_room", label, n, r,
                               c >= 0x10000 && c <= 0x10FFFF ? full : (size_t)-1, dst, 0, 0);
        }
    }
    if (kind == 1 && full == n) { /* ASCII: the 128-byte room copy */
        dst = check_dst_at(U8P_VBMI2_ROOM);
        u8p_vbmi2_copy_ascii_room128((const uint8_t *)src, n, dst);
        check_vbmi2_result(kind, "copy_ascii_room128", label, n, n, n, dst, 0, 0);
    }
}

/* The room steps past 32 code units (the writer calls them up to its
 * short path's limits): ASCII the 128-byte copy up to 127 characters,
 * UCS1 two steps up to 63 units, UCS2 two steps up to 42 units (with
 * U8P_VBMI2_ROOM_UCS2_42 bytes of room), each on a destination right
 * before the guard page. */
U8P_VBMI2_TARGET static void
check_vbmi2_room_long(int kind, const void *src, size_t n, size_t full, size_t surr,
                      const char *label)
{
    uint8_t *dst;
    size_t r;
    guard_cur_level = "vbmi2_short";
    guard_cur_label = label;
    check_vbmi2_long_cases++;
    if (kind == 1 && full == n && n <= 127) {
        dst = check_dst_at(U8P_VBMI2_ROOM);
        u8p_vbmi2_copy_ascii_room128((const uint8_t *)src, n, dst);
        check_vbmi2_result(kind, "copy_ascii_room128", label, n, n, n, dst, 0, 0);
    }
    if (kind == 1 && n <= 63) {
        dst = check_dst_at(U8P_VBMI2_ROOM);
        r = u8p_vbmi2_short_ucs1_room63((const uint8_t *)src, n, dst);
        check_vbmi2_result(kind, "short_ucs1_room63", label, n, r, full, dst, 0, 0);
    }
    if (kind == 2 && n <= 42) {
        dst = check_dst_at(U8P_VBMI2_ROOM_UCS2_42);
        r = u8p_vbmi2_short_ucs2_room42((const uint16_t *)src, n, dst);
        check_vbmi2_result(kind, "short_ucs2_room42", label, n, r, surr ? (size_t)-1 : full, dst,
                           0, 0);
    }
}

/* The writer's VBMI2 short steps on n (1..32) units at src (before the
 * guard page): UCS1 the two-byte step (and, on ASCII, the masked copies);
 * UCS2 the two-byte step (refuses, writing nothing, when a unit is U+0800
 * or above) and the lanes step; UCS4 the lanes step (the lanes step
 * refuses a surrogate).  `full` and `surr` as check_case counted them,
 * check_expect holding the bytes. */
U8P_VBMI2_TARGET static void
check_vbmi2_short(int kind, const void *src, size_t n, size_t full, size_t surr,
                  const char *label)
{
    size_t i, r, room;
    uint8_t *dst;
    int big = 0;
    guard_cur_level = "vbmi2_short";
    guard_cur_label = label;
    check_vbmi2_cases++;
    for (i = 0; i < n; i++)
        big |= cp_at(kind, src, i) >= 0x800;
    if (kind == 1) {
        dst = check_dst_at(full); /* exact: a write past it faults */
        r = u8p_vbmi2_short_ucs1((const uint8_t *)src, n, dst);
        check_vbmi2_result(kind, "short_ucs1", label, n, r, full, dst, full, 0);
        if (full == n) { /* ASCII: the writer's masked copy, n bytes exactly */
            dst = check_dst_at(n);
            u8p_vbmi2_copy_ascii((const uint8_t *)src, n, dst);
            check_vbmi2_result(kind, "copy_ascii", label, n, n, n, dst, n, 0);
            /* write_strings' ASCII run: 32 bytes exactly, zeros past n */
            dst = check_dst_at(32);
            u8p_vbmi2_copy_ascii_room((const uint8_t *)src, n, dst);
            check_vbmi2_result(kind, "copy_ascii_room", label, n, n, n, dst, n, 0);
            for (i = n; i < 32; i++) {
                if (dst[i] != 0) {
                    check_fail("vbmi2_short", kind, "copy_ascii_room", label, n,
                               "nonzero byte past the body at", i, 32);
                    break;
                }
            }
        }
        check_vbmi2_room(kind, src, n, full, surr, label);
        return;
    }
    check_vbmi2_room(kind, src, n, full, surr, label);
    if (kind == 2) {
        room = big ? 2 * n : full;
        dst = check_dst_at(room);
        r = u8p_vbmi2_short_ucs2((const uint16_t *)src, n, dst);
        check_vbmi2_result(kind, "short_ucs2", label, n, r, big ? (size_t)-1 : full, dst, room,
                           big);
    }
    /* the lanes step: exact room when it must succeed; its worst case when
     * it must refuse (it may have stored the blocks before the surrogate's,
     * which then count for nothing) */
    room = surr ? n * (size_t)(kind == 2 ? 3 : 4) : full;
    dst = check_dst_at(room);
    r = kind == 2 ? u8p_vbmi2_short_lanes(src, 2, n, dst) : u8p_vbmi2_short_lanes(src, 4, n, dst);
    check_vbmi2_result(kind, "short_lanes", label, n, r, surr ? (size_t)-1 : full, dst, room, 0);
}
#endif

/* Runs src (n units of `kind` bytes; UCS4 values must be <= 0x10FFFF)
 * through every level; returns the number of mismatches found. */
static long
check_case(int kind, const void *units, size_t n, const char *label)
{
    long before = check_failures;
    size_t i, full = 0, surr = 0, done = n, out = 0;
    const void *src;
    int li;

    if (n > check_cap) {
        fprintf(stderr, "check_case: n=%zu over capacity\n", n);
        exit(2);
    }
    check_cases++;
    for (i = 0; i < n; i++) {
        uint32_t c = (uint32_t)cp_at(kind, units, i);
        uint8_t tmp[4];
        size_t k = ref_utf8(c, tmp);
        int is_surr = c >= 0xD800 && c <= 0xDFFF;
        full += k;
        surr += is_surr;
        if (is_surr && done == n)
            done = i;
        if (done == n) {
            memcpy(check_expect + out, tmp, k);
            out += k;
        }
    }
    if (kind == 1) { /* no surrogates in UCS1, UCS1 encoders take all */
        done = n;
    }
    src = guarded_tail(&check_src, n * (size_t)kind);
    memcpy((void *)src, units, n * (size_t)kind);

    for (li = 0; li < check_nlevels; li++) {
        const u8p_kernels *k = check_levels[li];
        const char *kname = check_level_names[li];
        size_t r, ns = (size_t)-1, dn = (size_t)-1;
        uint8_t *dst = check_dst_at(out);
        guard_cur_level = kname;
        guard_cur_label = label;

        if (kind == 1) {
            r = k->len_ucs1(src, n);
            if (r != full)
                check_fail(kname, kind, "len", label, n, "length", r, full);
            r = k->enc_ucs1(src, n, dst);
        }
        else if (kind == 2) {
            r = k->len_ucs2(src, n, &ns);
            if (r != full)
                check_fail(kname, kind, "len", label, n, "length", r, full);
            if (ns != surr)
                check_fail(kname, kind, "len", label, n, "nsurr", ns, surr);
            r = k->enc_ucs2(src, n, dst, &dn);
        }
        else {
            r = k->len_ucs4(src, n, &ns);
            if (r != full)
                check_fail(kname, kind, "len", label, n, "length", r, full);
            if (ns != surr)
                check_fail(kname, kind, "len", label, n, "nsurr", ns, surr);
            r = k->enc_ucs4(src, n, dst, &dn);
        }
        if (r != out)
            check_fail(kname, kind, "enc", label, n, "bytes", r, out);
        if (kind != 1 && dn != done)
            check_fail(kname, kind, "enc", label, n, "done", dn, done);
        check_bytes(kname, kind, "enc", label, n, dst, out);
        /* the room form, its room ending at the guard page: a store past
         * 2n, 3n or 4n + U8P_ENC_ROOM faults */
        dst = check_dst_at((kind == 4 ? 4 : kind + 1) * n + U8P_ENC_ROOM);
        dn = (size_t)-1;
        r = kind == 1   ? k->enc_ucs1_room(src, n, dst)
            : kind == 2 ? k->enc_ucs2_room(src, n, dst, &dn)
                        : k->enc_ucs4_room(src, n, dst, &dn);
        if (r != out)
            check_fail(kname, kind, "enc_room", label, n, "bytes", r, out);
        if (kind != 1 && dn != done)
            check_fail(kname, kind, "enc_room", label, n, "done", dn, done);
        check_bytes(kname, kind, "enc_room", label, n, dst, out);
    }
#if U8P_HAVE_VBMI2_SHORT
    if (check_vbmi2_on && n >= 1 && n <= 32)
        check_vbmi2_short(kind, src, n, full, surr, label);
    if (check_vbmi2_on && n > 32 && n <= 127)
        check_vbmi2_room_long(kind, src, n, full, surr, label);
#endif
    /* the pass forms (after the VBMI2 steps, which compare with the bytes
     * up to the first surrogate): every unit, a surrogate in its 3-byte
     * form, into exactly len's count */
    if (kind != 1) {
        for (i = 0, out = 0; i < n; i++)
            out += ref_utf8((uint32_t)cp_at(kind, units, i), check_expect + out);
        for (li = 0; li < check_nlevels; li++) {
            const u8p_kernels *k = check_levels[li];
            const char *kname = check_level_names[li];
            uint8_t *dst = check_dst_at(full);
            size_t r;
            int flag = -1;
            guard_cur_level = kname;
            guard_cur_label = label;
            /* without the flag, then with it (another specialization) */
            r = kind == 2 ? k->enc_ucs2_pass(src, n, dst, NULL)
                          : k->enc_ucs4_pass(src, n, dst, NULL);
            if (r != full)
                check_fail(kname, kind, "enc_pass", label, n, "bytes", r, full);
            check_bytes(kname, kind, "enc_pass", label, n, dst, full);
            dst = check_dst_at(full);
            r = kind == 2 ? k->enc_ucs2_pass(src, n, dst, &flag)
                          : k->enc_ucs4_pass(src, n, dst, &flag);
            if (r != full)
                check_fail(kname, kind, "enc_pass+flag", label, n, "bytes", r, full);
            if (flag != (surr > 0))
                check_fail(kname, kind, "enc_pass+flag", label, n, "surrogate flag", (size_t)flag,
                           surr > 0);
            check_bytes(kname, kind, "enc_pass+flag", label, n, dst, full);
        }
    }
    return check_failures - before;
}

#endif /* U8P_TEST_CHECK_H */
