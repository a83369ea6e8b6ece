/*
 * Differential test of the decode kernels (UTF-8 -> UCS1/2/4), no Python:
 *
 *   make -C tests/c decode     the levels dispatch picks on this CPU
 *   make -C tests/c native     every table this CPU can run (tables.h)
 *   make -C tests/c emu        every x86 table, built against SIMDe
 *
 * Every table must agree with the scalar kernel (status, error bounds, ncp,
 * maxchar class) with and without surrogatepass, and its transcoders must
 * write the scalar's code units; where the input was generated from known
 * code points, both must also match those (an independent reference for
 * the scalar kernel itself).  Inputs: every length 0..300 of random mixes;
 * vector multiples +-1 up to 4096; a multi-byte sequence, a surrogate
 * (ED A0..BF xx), an invalid byte or a broken sequence at every byte
 * position of runs up to 129 bytes; every truncation point; random
 * mutations; long inputs.  Sources end exactly at a guard page and every
 * destination is sized exactly (ncp units, or cap for the checked UCS1
 * path) and ends at one too, with a canary in front, so a read or write
 * out of bounds faults or is reported.  Prints one summary line; exits 1 on
 * any failure.
 */
#include "guard.h"
#define U8P_WANT_DEC
#include "decode.h"
#include "decode_short.h"
#include "tables.h"
#include "mixes.h"

/* The room a table's dec_short asks for (decode.h, u8p_dec_alloc): filled
 * with 0xA5 before each call, so a byte written outside what it asked for
 * shows, with as much on both sides as a stray 64-byte store could reach. */
#define SHORT_ROOM_PAD 64
/* readable bytes after the payload in the second call of a table's dec_short */
#define SHORT_AFTER 96
static struct {
    uint8_t buf[SHORT_ROOM_PAD + U8P_DEC_SHORT_VEC_MAX * 4 + SHORT_ROOM_PAD];
    uint8_t *at;
    size_t k;
    uint32_t maxcp;
    int asked;
} room;

static void *
short_room(void *ctx, size_t k, uint32_t maxcp)
{
    if (ctx != (void *)&room) /* the caller's context comes back as given */
        return NULL;
    room.asked = 1;
    room.k = k;
    room.maxcp = maxcp;
    return room.at;
}

/* A payload rewritten while it is decoded (another thread writing the
 * reader's buffer, rd_ctx.shared): this room rewrites the source before it
 * hands out the room, so what a decoder loads after asking is not what it
 * sized the room by.  It must still return the k it asked room for, or
 * refuse (-1), and write nothing outside that room (decode.h). */
static uint32_t rnd(void);
#define MOVING_PATTERNS 4
static uint8_t moving[U8P_DEC_SHORT_VEC_MAX + SHORT_AFTER];
static int moving_pattern;

static void *
short_room_moving(void *ctx, size_t k, uint32_t maxcp)
{
    static const uint8_t cjk[3] = {0xE4, 0xB8, 0xAD}; /* U+4E2D */
    size_t q;
    for (q = 0; q < sizeof moving; q++)
        moving[q] = moving_pattern == 0   ? (uint8_t)'a'
                    : moving_pattern == 1 ? (uint8_t)0x80
                    : moving_pattern == 2 ? cjk[q % 3]
                                          : (uint8_t)rnd();
    return short_room(ctx, k, maxcp);
}

static void *
short_no_room(void *ctx, size_t k, uint32_t maxcp)
{
    (void)ctx, (void)k, (void)maxcp;
    return NULL;
}

static tt_entry tables[TT_MAX];
static int ntables;
static long failures, cases, shorts, vshorts, declined, wide, moved;

/* whether src[0:n] holds a byte >= b */
static int
memchr_ge(const uint8_t *src, size_t n, uint8_t b)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (src[i] >= b)
            return 1;
    return 0;
}
static guarded g_src, g_dst;
#define MAXN 200000

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

static void
fail(const char *tbl, const char *what, const char *label, size_t n, int surr,
     long got, long want)
{
    failures++;
    if (failures <= 20)
        fprintf(stderr, "MISMATCH table=%s %s [%s] n=%zu surrogatepass=%d: got %ld want %ld\n",
                tbl, what, label, n, surr, got, want);
}

/* Code units of one transcode, widened to uint32_t for comparison. */
static uint32_t ref_units[MAXN + 1];

static uint32_t
unit_at(const uint8_t *dst, int width, size_t i)
{
    if (width == 1)
        return dst[i];
    if (width == 2) {
        uint16_t u;
        memcpy(&u, dst + 2 * i, 2);
        return u;
    }
    {
        uint32_t u;
        memcpy(&u, dst + 4 * i, 4);
        return u;
    }
}

/* Runs K's transcoder of the given width into an exact-size destination
 * ending at the guard page; returns units written, fills cmp with them. */
static size_t
transcode(const u8p_dec_kernels *K, const uint8_t *src, size_t n, size_t ncp, int width,
          const char *tname, const char *label, int surr, uint32_t *cmp)
{
    uint8_t *dst = guarded_tail(&g_dst, ncp * (size_t)width);
    size_t w, i;
    memset(dst - CHECK_CANARY, 0xA5, CHECK_CANARY);
    if (width == 1)
        w = K->to_ucs1(src, n, dst);
    else if (width == 2)
        w = K->to_ucs2(src, n, (uint16_t *)(void *)dst);
    else
        w = K->to_ucs4(src, n, (uint32_t *)(void *)dst);
    for (i = 0; i < CHECK_CANARY; i++)
        if (dst[(ptrdiff_t)i - CHECK_CANARY] != 0xA5) {
            fail(tname, "transcode wrote before dst, offset", label, n, surr, (long)i, -1);
            break;
        }
    for (i = 0; i < ncp && i < w; i++)
        cmp[i] = unit_at(dst, width, i);
    return w;
}

/* One input (n bytes) through every table, with and without surrogatepass.
 * want (NULL if unknown) are the code points the bytes encode, when the
 * bytes are valid UTF-8 apart from surrogates (want_surr of them). */
static void check_copy_ascii(const char *tn, size_t (*fn)(const uint8_t *, size_t, uint8_t *),
                             const uint8_t *src, size_t n, const char *label);

static void
check_dec(const uint8_t *bytes, size_t n, const char *label, const uint32_t *want, size_t nwant,
          int want_surr)
{
    uint8_t *src = guarded_tail(&g_src, n);
    int surr, t;
    memcpy(src, bytes, n);
    cases++;
    guard_cur_label = label;
    for (surr = 0; surr <= 1; surr++) {
        u8p_scan_result ref, got;
        u8p_dec_status rs, gs;
        int width = 0;
        size_t q;
        memset(&ref, 0, sizeof ref);
        guard_cur_level = "scalar scan";
        rs = u8p_dec_scan_scalar(src, n, surr, &ref);
        if (want) { /* the scalar scan against what the bytes are known to hold */
            int valid = surr || !want_surr;
            uint32_t mx = 0x7F, c, top;
            for (q = 0; q < nwant; q++) {
                c = want[q];
                top = c > 0xFFFF ? 0x10FFFF : c > 0xFF ? 0xFFFF : c > 0x7F ? 0xFF : 0x7F;
                mx = top > mx ? top : mx;
            }
            if ((rs == U8P_DEC_OK) != valid)
                fail("scalar", "scan status vs generator", label, n, surr, rs, !valid);
            else if (valid && (ref.ncp != nwant || ref.maxchar != mx))
                fail("scalar", "scan ncp/maxchar vs generator", label, n, surr,
                     (long)ref.ncp, (long)nwant);
        }
        if (rs == U8P_DEC_OK) {
            width = ref.maxchar <= 0xFF ? 1 : ref.maxchar <= 0xFFFF ? 2 : 4;
            guard_cur_level = "scalar transcode";
            q = transcode(&u8p_dec_kernels_scalar, src, n, ref.ncp, width, "scalar", label,
                          surr, ref_units);
            if (q != ref.ncp)
                fail("scalar", "transcode units", label, n, surr, (long)q, (long)ref.ncp);
            if (want && nwant == ref.ncp)
                for (q = 0; q < nwant; q++)
                    if (ref_units[q] != want[q]) {
                        fail("scalar", "transcode vs generator at unit", label, n, surr,
                             (long)q, -1);
                        break;
                    }
        }
        if (!surr && n <= U8P_DEC_SHORT_VEC_MAX) {
            ptrdiff_t k;
            if (n <= U8P_DEC_SHORT_MAX) {
                /* the reader's one-pass short decoder: takes exactly what
                 * the strict scan takes, with the same code points and class */
                static uint32_t cps[U8P_DEC_SHORT_MAX];
                uint32_t mx = 0;
                guard_cur_level = "short one-pass";
                k = u8p_dec_short(src, n, cps, &mx);
                if ((k >= 0) != (rs == U8P_DEC_OK))
                    fail("short", "one-pass accepts (got) vs scan", label, n, surr, k >= 0, rs);
                else if (k >= 0 && ((size_t)k != ref.ncp || mx != ref.maxchar))
                    fail("short", (size_t)k != ref.ncp ? "one-pass ncp" : "one-pass maxchar",
                         label, n, surr, (size_t)k != ref.ncp ? (long)k : (long)mx,
                         (size_t)k != ref.ncp ? (long)ref.ncp : (long)ref.maxchar);
                else if (k > 0 && memcmp(cps, ref_units, (size_t)k * sizeof *cps) != 0)
                    fail("short", "one-pass code points", label, n, surr, -1, -1);
                shorts++;
            }
            /* and each table's own (vector) short decoder, the same way:
             * it asks for room (short_room) and writes there in the width */
            for (t = 0; t < 2 * ntables; t++) {
                const u8p_dec_kernels *K = (const u8p_dec_kernels *)tables[t / 2].table;
                const char *tn = tt_short(tables[t / 2].sym);
                /* twice: the payload at the end of readable memory (avail
                 * n), then followed by bytes it may read but must not take
                 * (continuation and lead bytes that would change the
                 * result if they were taken) */
                static uint8_t padded[U8P_DEC_SHORT_VEC_MAX + SHORT_AFTER];
                const uint8_t *in = src;
                size_t q, avail = n;
                int pat;
                if (!tables[t / 2].run || K->dec_short == NULL || n > K->dec_short_max)
                    continue;
                if (t & 1) {
                    memcpy(padded, src, n);
                    for (q = n; q < sizeof padded; q++)
                        padded[q] = (uint8_t)(q & 1 ? 0x80 : 0xE2);
                    in = padded;
                    avail = n + SHORT_AFTER;
                }
                guard_cur_level = tn;
                memset(room.buf, 0xA5, sizeof room.buf);
                room.at = room.buf + SHORT_ROOM_PAD;
                room.asked = 0;
                k = K->dec_short(in, n, avail, short_room, &room);
                if (k == U8P_DEC_SHORT_INLINE) {
                    /* left to the inline loop (checked above): only a
                     * payload with a byte F0..FF, and before any room; the
                     * x86 tables have a 32-bit lane form and leave it only
                     * payloads shorter than the reader hands over.  Past
                     * the inline loop's reach, declined (the long way):
                     * the same payloads, and any when the loads would
                     * pass the readable bytes */
                    if (!memchr_ge(src, n, 0xF0) && (n <= U8P_DEC_SHORT_MAX || avail > n))
                        fail(tn, "short declined a payload without F0..FF", label, n, surr,
                             -1, -1);
                    else if (n >= U8P_DEC_SHORT_VEC_MIN && n <= U8P_DEC_SHORT_MAX &&
                             strncmp(tn, "avx", 3) == 0)
                        fail(tn, "short left a payload the reader hands over to the inline loop",
                             label, n, surr, -1, -1);
                    else if (room.asked)
                        fail(tn, "short asked for room, then left the payload", label, n,
                             surr, -1, -1);
                    declined++;
                    vshorts++;
                    continue;
                }
                wide += memchr_ge(src, n, 0xF0);
                if ((k >= 0) != (rs == U8P_DEC_OK))
                    fail(tn, "short accepts (got) vs scan", label, n, surr, k >= 0, rs);
                else if (k >= 0 && !room.asked)
                    fail(tn, "short took the payload without asking for room", label, n, surr,
                         (long)k, -1);
                else if (k >= 0 && ((size_t)k != ref.ncp || room.k != ref.ncp ||
                                    room.maxcp != ref.maxchar))
                    fail(tn, (size_t)k != ref.ncp || room.k != ref.ncp ? "short ncp"
                                                                         : "short maxchar",
                         label, n, surr, (size_t)k != ref.ncp ? (long)k : (long)room.maxcp,
                         (size_t)k != ref.ncp ? (long)ref.ncp : (long)ref.maxchar);
                else if (k >= 0) {
                    const size_t wb = room.maxcp > 0xFFFF ? 4 : room.maxcp > 0xFF ? 2 : 1;
                    for (q = 0; q < (size_t)k; q++) {
                        uint32_t u = wb == 1   ? room.at[q]
                                     : wb == 2 ? (uint32_t)room.at[2 * q] |
                                                     (uint32_t)room.at[2 * q + 1] << 8
                                               : (uint32_t)room.at[4 * q] |
                                                     (uint32_t)room.at[4 * q + 1] << 8 |
                                                     (uint32_t)room.at[4 * q + 2] << 16 |
                                                     (uint32_t)room.at[4 * q + 3] << 24;
                        if (u != ref_units[q]) {
                            fail(tn, "short code points at", label, n, surr, (long)q, -1);
                            break;
                        }
                    }
                    /* nothing written outside the room it asked for */
                    for (q = 0; q < sizeof room.buf; q++)
                        if ((q < SHORT_ROOM_PAD || q >= SHORT_ROOM_PAD + (size_t)k * wb) &&
                            room.buf[q] != 0xA5) {
                            fail(tn, "short wrote outside its room at byte (room offset)",
                                 label, n, surr, (long)q - SHORT_ROOM_PAD,
                                 (long)(k * (ptrdiff_t)wb));
                            break;
                        }
                    /* and no room given: -2, nothing written */
                    if (K->dec_short(in, n, avail, short_no_room, NULL) != -2)
                        fail(tn, "short without room (want -2)", label, n, surr, -1, -2);
                    /* the source rewritten once the room is asked for */
                    for (pat = 0; pat < MOVING_PATTERNS && t & 1; pat++) {
                        ptrdiff_t km;
                        size_t wm;
                        memcpy(moving, padded, sizeof moving);
                        moving_pattern = pat;
                        memset(room.buf, 0xA5, sizeof room.buf);
                        room.asked = 0;
                        km = K->dec_short(moving, n, avail, short_room_moving, &room);
                        if (km == -1)
                            continue;
                        if (km < 0 || !room.asked || (size_t)km != room.k) {
                            fail(tn, "short with its source rewritten: returned, vs room asked",
                                 label, n, surr, (long)km, room.asked ? (long)room.k : -1);
                            continue;
                        }
                        wm = room.maxcp > 0xFFFF ? 4 : room.maxcp > 0xFF ? 2 : 1;
                        for (q = 0; q < sizeof room.buf; q++)
                            if ((q < SHORT_ROOM_PAD || q >= SHORT_ROOM_PAD + room.k * wm) &&
                                room.buf[q] != 0xA5) {
                                fail(tn, "short with its source rewritten wrote outside its "
                                         "room at byte (room offset)",
                                     label, n, surr, (long)q - SHORT_ROOM_PAD,
                                     (long)(room.k * wm));
                                break;
                            }
                        moved++;
                    }
                }
                vshorts++;
            }
        }
        for (t = 0; t < ntables; t++) {
            const u8p_dec_kernels *K = (const u8p_dec_kernels *)tables[t].table;
            const char *tn = tt_short(tables[t].sym);
            static uint32_t units[MAXN + 1];
            if (!tables[t].run)
                continue;
            guard_cur_level = tn;
            memset(&got, 0x5A, sizeof got);
            gs = K->scan(src, n, surr, &got);
            if (gs != rs) {
                fail(tn, "scan status", label, n, surr, gs, rs);
                continue;
            }
            if (rs == U8P_DEC_OK && (got.ncp != ref.ncp || got.maxchar != ref.maxchar)) {
                fail(tn, got.ncp != ref.ncp ? "scan ncp" : "scan maxchar", label, n, surr,
                     (long)(got.ncp != ref.ncp ? got.ncp : got.maxchar),
                     (long)(got.ncp != ref.ncp ? ref.ncp : ref.maxchar));
                continue;
            }
            if (rs != U8P_DEC_OK) {
                if (got.err_start != ref.err_start || got.err_end != ref.err_end)
                    fail(tn, got.err_start != ref.err_start ? "error start" : "error end",
                         label, n, surr,
                         (long)(got.err_start != ref.err_start ? got.err_start : got.err_end),
                         (long)(got.err_start != ref.err_start ? ref.err_start : ref.err_end));
            }
            else {
                q = transcode(K, src, n, ref.ncp, width, tn, label, surr, units);
                if (q != ref.ncp)
                    fail(tn, "transcode units", label, n, surr, (long)q, (long)ref.ncp);
                else if (memcmp(units, ref_units, ref.ncp * sizeof *units) != 0) {
                    for (q = 0; units[q] == ref_units[q]; q++)
                        ;
                    fail(tn, "transcode differs at unit", label, n, surr, (long)q, -1);
                }
            }
            if (K->copy_ascii && !surr)
                check_copy_ascii(tn, K->copy_ascii, src, n, label);
            if (K->prescan && !surr) {
                /* fused UCS1 path: the right answer, and no write outside
                 * [dst, dst+cap) for a cap one off or any bytes */
                size_t pn = 0, cap;
                uint8_t mb = K->prescan(src, n, &pn);
                int ucs1 = rs == U8P_DEC_OK && ref.maxchar <= 0xFF, d;
                if (rs == U8P_DEC_OK && (mb < 0xC4) != ucs1)
                    fail(tn, "prescan says UCS1", label, n, surr, mb < 0xC4, ucs1);
                else if (ucs1 && (pn != ref.ncp || (mb < 0x80) != (ref.maxchar == 0x7F)))
                    fail(tn, "prescan ncp", label, n, surr, (long)pn, (long)ref.ncp);
                else if (mb >= 0xC4 && mb < 0xF0 && memchr_ge(src, n, 0xF0))
                    /* beyond Latin-1, below 0xF0: no byte F0..FF */
                    fail(tn, "prescan below 0xF0 with a byte F0..FF", label, n, surr, mb, -1);
                /* cap: the count one off either way, and room for n (the
                 * reader's long payloads: no count first) */
                for (d = -1; mb < 0xC4 && d <= 2; d++) {
                    uint8_t *dst;
                    u8p_dec_status cs;
                    size_t got = (size_t)-1;
                    if (d < 0 && pn == 0)
                        continue;
                    cap = d == 2 ? n : pn + (size_t)(long)d;
                    dst = guarded_tail(&g_dst, cap);
                    memset(dst - CHECK_CANARY, 0xA5, CHECK_CANARY);
                    cs = K->to_ucs1_checked(src, n, dst, cap, &got);
                    if ((cs == U8P_DEC_OK) != (ucs1 && cap >= ref.ncp))
                        fail(tn, "to_ucs1_checked status (cap - ncp in got)", label, n, surr,
                             (long)cap - (long)ref.ncp, cs);
                    else if (cs == U8P_DEC_OK && got != ref.ncp)
                        fail(tn, "to_ucs1_checked count", label, n, surr, (long)got,
                             (long)ref.ncp);
                    else if (cs == U8P_DEC_OK) {
                        for (q = 0; q < got && dst[q] == ref_units[q]; q++)
                            ;
                        if (q != got)
                            fail(tn, "to_ucs1_checked differs at unit", label, n, surr,
                                 (long)q, -1);
                    }
                    for (q = 0; q < CHECK_CANARY; q++)
                        if (dst[(ptrdiff_t)q - CHECK_CANARY] != 0xA5) {
                            fail(tn, "to_ucs1_checked wrote before dst", label, n, surr,
                                 (long)q, -1);
                            break;
                        }
                }
            }
        }
    }
}

/* copy_ascii of one table on src[0..n): n iff every byte < 0x80 (computed
 * here, independently); otherwise r at most the first byte >= 0x80 and less
 * than 256 bytes before it (a block's start); dst[0, r) is src[0, r) (all
 * of it on n); never a write outside [dst, dst+n) (guard page after,
 * canary before) */
static void
check_copy_ascii(const char *tn, size_t (*fn)(const uint8_t *, size_t, uint8_t *),
                 const uint8_t *src, size_t n, const char *label)
{
    uint8_t *dst = guarded_tail(&g_dst, n);
    size_t q, first = n, got;
    for (q = 0; q < n && first == n; q++)
        if (src[q] >= 0x80)
            first = q;
    memset(dst - CHECK_CANARY, 0xA5, CHECK_CANARY);
    memset(dst, 0xEE, n);
    got = fn(src, n, dst);
    if (first == n ? got != n : got > first || first - got >= 256)
        fail(tn, "copy_ascii answer", label, n, 0, (long)got, (long)first);
    else if (memcmp(dst, src, got) != 0) {
        for (q = 0; dst[q] == src[q]; q++)
            ;
        fail(tn, "copy_ascii differs at byte", label, n, 0, (long)q, -1);
    }
    for (q = 0; q < CHECK_CANARY; q++)
        if (dst[(ptrdiff_t)q - CHECK_CANARY] != 0xA5) {
            fail(tn, "copy_ascii wrote before dst", label, n, 0, (long)q, -1);
            break;
        }
}

/* ------------------------------------------------------------ generators */


/* code points at the edges the validators decide on: the limits of each
 * sequence length, the E0/ED/F0/F4 second-byte ranges, the surrogates */
static const uint32_t edges[] = {
    0x00, 0x7F, 0x80, 0xBF, 0xC0, 0xFF, 0x100, 0x7FF, 0x800, 0x801, 0xFFF, 0x1000, 0xCFFF,
    0xD000, 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000, 0xEFFF, 0xF000, 0xFFFD, 0xFFFF,
    0x10000, 0x3FFFF, 0x40000, 0xFFFFF, 0x100000, 0x10FFFF,
};

static uint32_t
cp_of(int cls)
{
    uint32_t c;
    switch (cls) {
    case C_ASCII: return rnd() % 0x80;
    case C_LATIN1: return 0x80 + rnd() % 0x80;
    case C_TWO: return 0x80 + rnd() % 0x780;
    case C_THREE:
        do
            c = 0x800 + rnd() % 0xF800;
        while (c >= 0xD800 && c <= 0xDFFF);
        return c;
    case C_SURR: return 0xD800 + rnd() % 0x800;
    case C_EDGE: return edges[rnd() % (sizeof edges / sizeof edges[0])];
    default: return 0x10000 + rnd() % 0x100000;
    }
}


static uint8_t gen[MAXN + 8];
static uint32_t gcps[MAXN + 8];
static size_t gn, gncp;
static int gsurr;

static void
gen_reset(void)
{
    gn = gncp = 0;
    gsurr = 0;
}

static void
gen_put(uint32_t c)
{
    gn += put_cp(gen + gn, c);
    gcps[gncp++] = c;
    gsurr += c >= 0xD800 && c <= 0xDFFF;
}

static int
pick(const mix *m)
{
    int r = (int)(rnd() % 1000), cls, acc = 0;
    for (cls = 0; cls < C_NCLASS; cls++) {
        acc += m->permille[cls];
        if (r < acc)
            return cls;
    }
    return C_ASCII;
}

/* valid text of exactly len bytes from mix m (ASCII fills what is left) */
static void
gen_mix(const mix *m, size_t len)
{
    gen_reset();
    while (gn < len) {
        uint32_t c = cp_of(pick(m));
        uint8_t tmp[4];
        if (gn + put_cp(tmp, c) > len)
            c = cp_of(C_ASCII);
        gen_put(c);
    }
}

static void
run_gen(const char *label)
{
    check_dec(gen, gn, label, gcps, gncp, gsurr);
}

int
main(void)
{
    static const size_t specials[] = {16, 32, 64, 128, 256, 512, 1024, 4096};
    static const size_t sweep_lens[] = {1, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 100, 127, 128, 129};
    /* broken bytes put at a position: each is invalid wherever it lands
     * in ASCII (start bytes lacking continuations, stray continuations,
     * never-valid bytes, overlongs, too large, truncated) */
    static const struct {
        const char *name;
        uint8_t b[4];
        int len;
    } bad[] = {
        {"80", {0x80}, 1},           {"BF", {0xBF}, 1},
        {"C0 80", {0xC0, 0x80}, 2},  {"C1 BF", {0xC1, 0xBF}, 2},
        {"C2", {0xC2}, 1},           {"DF 41", {0xDF, 0x41}, 2},
        {"E0 80 80", {0xE0, 0x80, 0x80}, 3}, {"E0 9F BF", {0xE0, 0x9F, 0xBF}, 3},
        {"E1 80", {0xE1, 0x80}, 2},  {"EF BF", {0xEF, 0xBF}, 2},
        {"F0 80 80 80", {0xF0, 0x80, 0x80, 0x80}, 4}, {"F0 8F BF BF", {0xF0, 0x8F, 0xBF, 0xBF}, 4},
        {"F4 90 80 80", {0xF4, 0x90, 0x80, 0x80}, 4}, {"F1 80 80", {0xF1, 0x80, 0x80}, 3},
        {"F5", {0xF5}, 1},           {"F8", {0xF8}, 1},
        {"FE", {0xFE}, 1},           {"FF", {0xFF}, 1},
    };
    size_t n, p, s, q, b;
    unsigned mi, cls, cls2;
    int iter, t;
    char label[128];

    guard_on_faults();
    guarded_init(&g_src, MAXN + 16);
    guarded_init(&g_dst, 4 * (MAXN + 16));
    ntables = tt_collect(0, tables);
    tt_report("decode", tables, ntables);
    {
        /* every table dispatch can pick on this CPU is one this run tests */
        const void *picked[U8P_ISA_COUNT];
        int li;
        for (li = 0; li < U8P_ISA_COUNT; li++)
            picked[li] = u8p_dec_kernels_for_level((u8p_isa)li);
        failures += tt_dispatch_covered(tables, ntables, picked, U8P_ISA_COUNT);
    }

    /* copy_ascii on long ASCII with one byte >= 0x80 at the edges of the
     * payload and of its vectors (every table, scalar included) */
    {
        static const size_t lens[] = {64, 255, 256, 257, 1000, 4095, 4096, 4097, 65537};
        for (s = 0; s < sizeof lens / sizeof lens[0]; s++) {
            size_t ln = lens[s], where[9];
            int w;
            where[0] = (size_t)-1; where[1] = 0; where[2] = 1; where[3] = ln / 2;
            where[4] = ln - 2; where[5] = ln - 1; where[6] = ln & ~(size_t)63;
            where[7] = (ln & ~(size_t)255) - 1; where[8] = rnd() % ln;
            for (w = 0; w < 9; w++) {
                uint8_t *src = guarded_tail(&g_src, ln);
                for (q = 0; q < ln; q++)
                    src[q] = (uint8_t)(rnd() % 0x80);
                if (where[w] < ln)
                    src[where[w]] = (uint8_t)(0x80 | rnd());
                snprintf(label, sizeof label, "copy_ascii high byte at %ld",
                         (long)where[w]);
                check_copy_ascii("scalar", u8p_dec_copy_ascii_scalar, src, ln, label);
                for (t = 0; t < ntables; t++) {
                    const u8p_dec_kernels *K = (const u8p_dec_kernels *)tables[t].table;
                    if (tables[t].run && K->copy_ascii)
                        check_copy_ascii(tt_short(tables[t].sym), K->copy_ascii, src, ln, label);
                }
                cases++;
            }
        }
    }
    /* every length 0..300, every mix, two seeds */
    for (n = 0; n <= 300; n++)
        for (mi = 0; mi < NMIX; mi++)
            for (q = 0; q < 2; q++) {
                gen_mix(&mixes[mi], n);
                snprintf(label, sizeof label, "random %s", mixes[mi].name);
                run_gen(label);
            }
    /* vector multiples +- 1 */
    for (s = 0; s < sizeof specials / sizeof specials[0]; s++)
        for (n = specials[s] - 1; n <= specials[s] + 1; n++) {
            for (mi = 0; mi < NMIX; mi++)
                for (q = 0; q < 3; q++) {
                    gen_mix(&mixes[mi], n);
                    snprintf(label, sizeof label, "boundary %s", mixes[mi].name);
                    run_gen(label);
                }
            for (cls = 0; cls < C_NCLASS; cls++) { /* pure runs of n code points */
                gen_reset();
                for (q = 0; q < n; q++)
                    gen_put(cp_of((int)cls));
                snprintf(label, sizeof label, "pure %s x%zu", class_names[cls], n);
                run_gen(label);
            }
        }
    /* one sequence of class cls2 at every code-point position of a run of
     * cls (so at every byte offset of the vectors), surrogates included */
    for (s = 0; s < sizeof sweep_lens / sizeof sweep_lens[0]; s++) {
        n = sweep_lens[s];
        for (cls = 0; cls < C_NCLASS; cls++) {
            if (cls == C_SURR)
                continue;
            for (cls2 = 0; cls2 < C_NCLASS; cls2++) {
                if (cls2 == cls)
                    continue;
                for (p = 0; p < n; p++) {
                    gen_reset();
                    for (q = 0; q < n; q++)
                        gen_put(cp_of((int)(q == p ? cls2 : cls)));
                    snprintf(label, sizeof label, "%s in %s at cp %zu", class_names[cls2],
                             class_names[cls], p);
                    run_gen(label);
                }
            }
        }
    }
    /* a broken sequence at every byte position of ASCII, of 2-byte text
     * and of 3-byte text (there it also cuts a sequence short) */
    for (s = 0; s < sizeof sweep_lens / sizeof sweep_lens[0]; s++) {
        for (cls = 0; cls < 3; cls++) {
            static const int base[3] = {C_ASCII, C_TWO, C_THREE};
            static uint8_t text[MAXN];
            gen_reset();
            while (gn < sweep_lens[s] + 3)
                gen_put(cp_of(base[cls]));
            n = gn;
            memcpy(text, gen, n);
            for (b = 0; b < sizeof bad / sizeof bad[0]; b++)
                for (p = 0; p + (size_t)bad[b].len <= n; p++) {
                    memcpy(gen, text, n);
                    memcpy(gen + p, bad[b].b, (size_t)bad[b].len);
                    snprintf(label, sizeof label, "bad %s at byte %zu of %s x%zu", bad[b].name,
                             p, class_names[base[cls]], n);
                    check_dec(gen, n, label, NULL, 0, 0);
                }
        }
    }
    /* every truncation point of mixed text (unexpected end mid-sequence) */
    for (mi = 0; mi < NMIX; mi++) {
        gen_mix(&mixes[mi], 200);
        for (n = 0; n <= gn; n++) {
            snprintf(label, sizeof label, "%s cut at %zu", mixes[mi].name, n);
            check_dec(gen, n, label, NULL, 0, 0);
        }
    }
    /* random mutations of valid text (any byte, a continuation byte, a cut) */
    for (iter = 0; iter < 40000; iter++) {
        size_t target = rnd() % (iter % 10 == 0 ? 2000 : 160);
        int nmut = (int)(rnd() % 3) + 1, m;
        gen_mix(&mixes[rnd() % NMIX], target);
        for (m = 0; m < nmut && gn; m++) {
            size_t at = rnd() % gn;
            switch (rnd() % 3) {
            case 0: gen[at] = (uint8_t)rnd(); break;
            case 1: gen[at] = (uint8_t)(0x80 | (rnd() % 0x40)); break;
            default: gn = at; break;
            }
        }
        check_dec(gen, gn, "mutated", NULL, 0, 0);
    }
    /* long inputs */
    for (cls = 0; cls < C_NCLASS; cls++) {
        gen_reset();
        while (gn + 4 <= MAXN - 8)
            gen_put(cp_of((int)cls));
        snprintf(label, sizeof label, "long %s", class_names[cls]);
        run_gen(label);
    }
    for (mi = 0; mi < NMIX; mi++) {
        gen_mix(&mixes[mi], MAXN - 8);
        snprintf(label, sizeof label, "long %s", mixes[mi].name);
        run_gen(label);
    }

    for (t = 0, q = 0; t < ntables; t++)
        q += tables[t].run != 0;
    printf("decode kernels: %ld cases x %zu tables x 2 (surrogatepass or not): %ld failures\n",
           cases, q, failures);
    printf("short one-pass decoder (reader, <= %d bytes): %ld cases; the tables' own: %ld "
           "(%ld with a byte F0..FF taken, %ld left to the inline loop); %ld with the "
           "source rewritten once they asked for room\n",
           U8P_DEC_SHORT_MAX, shorts, vshorts, wide, declined, moved);
    return failures != 0;
}
