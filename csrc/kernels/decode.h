/*
 * utf8pfx decode kernels: UTF-8 -> PEP 393 storage.  Pure C, no Python.h.
 *
 * Decoding a payload is two passes over bytes the caller has already
 * bounds-checked:
 *
 *   scan(src, n, allow_surrogates, &res)
 *       Validates UTF-8 the way CPython's "utf-8" codec does under "strict".
 *       On success returns U8P_DEC_OK with
 *         res.ncp      the number of code points,
 *         res.maxchar  0x7F, 0xFF, 0xFFFF or 0x10FFFF: the top of the PEP 393
 *                      class (ASCII, UCS1, UCS2, UCS4) of the largest code
 *                      point, which is all PyUnicode_New needs to pick the
 *                      final kind exactly.
 *       On failure returns the reason and stores CPython's [start, end) of
 *       the first invalid sequence in res.err_start / res.err_end; the
 *       reasons and the bounds are those of bytes.decode ("substitution of
 *       maximal subparts": the error covers the longest prefix of a
 *       well-formed sequence, "unexpected end of data" runs to n).
 *       allow_surrogates accepts ED A0..BF xx (U+D800..U+DFFF), which is
 *       what the "surrogatepass" handler decodes; with it set, the error
 *       bounds of a *failure* are not guaranteed to be CPython's (the glue
 *       hands such payloads to CPython), only the success result is.
 *
 *   to_ucs1 / to_ucs2 / to_ucs4(src, n, dst)
 *       Transcode a payload that scan() accepted (with the same
 *       allow_surrogates) into dst, which has room for res.ncp code units of
 *       the kind res.maxchar selects.  They trust the input: never call them
 *       on bytes scan() did not accept.  Return the code units written.
 *
 *   prescan / to_ucs1_checked  (optional: NULL where a level has none)
 *       A one-and-a-half-pass path for payloads whose code points are all
 *       below U+0100, where validation is cheap enough to fuse with the
 *       transcode.  prescan(src, n, &ncp) validates nothing: it returns the
 *       largest byte if that is below 0xC4, with ncp = n minus the
 *       continuation bytes; once it meets a byte >= 0xC4 it may stop and
 *       return 0xFF (ncp is then meaningless: use scan()); a value from
 *       0xC4 to 0xEF says no byte is 0xF0 or more.  If it returns < 0x80
 *       the payload is ASCII (valid, ncp == n).
 *       to_ucs1_checked(src, n, dst, cap, &got) validates and transcodes at
 *       once: it returns U8P_DEC_OK iff the payload is valid UTF-8 with
 *       every code point below U+0100 and at most cap of them, written to
 *       dst, their count in got (a caller that knows the count, from
 *       prescan, compares; one that does not gives room for n).  It trusts
 *       nothing (any bytes, any cap) and never writes outside
 *       [dst, dst+cap); on failure dst holds garbage and the status is not
 *       the exact reason: call scan() for the reason and bounds.
 *
 *   copy_ascii(src, n, dst)
 *       The long-ASCII read in one pass: copies src to dst while OR-ing the
 *       bytes, and returns n iff every byte is below 0x80 (the payload is
 *       then valid ASCII: n code points, dst holds them).  It stops at the
 *       first block that holds a byte >= 0x80 and returns that block's
 *       start r < n: src[0, r) is ASCII and copied to dst[0, r), the byte is
 *       in src[r, r + 256), and the rest of [dst, dst+n) holds garbage.  So
 *       a payload that turns out not to be ASCII is resumed at r, not read
 *       again from the start.  Any n, any bytes.
 *
 * No kernel reads outside [src, src+n) or writes outside [dst, dst+ncp).
 * A SIMD kernel that meets an error defers to the scalar scan for the exact
 * bounds, so every level reports the same result.
 */
#ifndef UTF8PFX_DECODE_H
#define UTF8PFX_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    U8P_DEC_OK = 0,
    U8P_DEC_INVALID_START = 1,        /* "invalid start byte" */
    U8P_DEC_INVALID_CONTINUATION = 2, /* "invalid continuation byte" */
    U8P_DEC_UNEXPECTED_END = 3        /* "unexpected end of data" */
} u8p_dec_status;

/*
 * A table's dec_short, once the payload's shape is known, asks the caller
 * for room for k code points of class top maxcp (0x7F, 0xFF, 0xFFFF or
 * 0x10FFFF: 1, 1, 2 or 4 bytes each) and writes them there, with no copy
 * in between (the reader's new str: faster than a buffer of 32-bit code
 * points that the reader narrows afterwards, most of all for UCS2).  It
 * returns k; or -1 for what the
 * strict codec refuses (alloc may have been called: its room then holds
 * garbage, and the caller drops it); or -2 when alloc returned NULL; or
 * U8P_DEC_SHORT_INLINE, before calling alloc, for a payload that holds a
 * byte F0..FF (a 4-byte sequence, or invalid) which the kernel leaves to
 * the inline loop (u8p_dec_short): a kernel without a 32-bit lane form
 * would only call that loop itself, one call deeper, and one with it may
 * leave the shortest such payloads there, where the loop's cost per byte
 * is below its form's fixed one.  Past U8P_DEC_SHORT_MAX bytes, beyond
 * that loop's reach, the same value declines the payload (a byte F0..FF,
 * or too few readable bytes for its loads), and the caller takes the
 * long way (scan, then transcode).
 *
 * The source may change during the call (a buffer another thread writes:
 * the reader's rd_ctx.shared).  Whatever it reads then, a dec_short
 * returns the k it asked room for (or -1), writes exactly those k units
 * and nothing outside them, and reads nothing outside [src, src + avail):
 * every count and mask that sizes a store comes from one load of the
 * bytes.  The values may then be anything, and a room of class 0x7F may
 * get bytes >= 0x80 from a copy made after the check (the reader checks
 * such a str again).  tests/c/test_decode_kernels.c rewrites the source
 * from the room callback.
 */
typedef void *(*u8p_dec_alloc)(void *ctx, size_t k, uint32_t maxcp);
#define U8P_DEC_SHORT_INLINE (-3)

typedef struct {
    size_t ncp;
    uint32_t maxchar;
    size_t err_start;
    size_t err_end;
} u8p_scan_result;

typedef struct u8p_dec_kernels {
    const char *name; /* "scalar", "sse", "avx2", "avx512" */
    u8p_dec_status (*scan)(const uint8_t *src, size_t n, int allow_surrogates,
                           u8p_scan_result *res);
    size_t (*to_ucs1)(const uint8_t *src, size_t n, uint8_t *dst);
    size_t (*to_ucs2)(const uint8_t *src, size_t n, uint16_t *dst);
    size_t (*to_ucs4)(const uint8_t *src, size_t n, uint32_t *dst);
    uint8_t (*prescan)(const uint8_t *src, size_t n, size_t *ncp);
    u8p_dec_status (*to_ucs1_checked)(const uint8_t *src, size_t n, uint8_t *dst,
                                      size_t cap, size_t *got);
    size_t (*copy_ascii)(const uint8_t *src, size_t n, uint8_t *dst);
    /* the reader's one-pass short decoder (n <= dec_short_max): takes
     * what u8p_dec_short in decode_short.h takes, and writes the code points
     * straight into the caller's object, in its width (u8p_dec_alloc).
     * avail >= n: the bytes from src on that may be read (the rest of the
     * caller's buffer); a kernel may load past n within them, to spare a
     * copy, but takes nothing from there.  NULL (dec_short_max 0): the
     * reader uses that inline one */
    ptrdiff_t (*dec_short)(const uint8_t *src, size_t n, size_t avail, u8p_dec_alloc alloc,
                           void *ctx);
    /* the longest payload dec_short takes (0 with none): U8P_DEC_SHORT_MAX,
     * or up to U8P_DEC_SHORT_VEC_MAX for one that also takes the payloads
     * past the inline loop's reach (a name or title of a few dozen
     * characters in any script) */
    size_t dec_short_max;
} u8p_dec_kernels;

#define U8P_DEC_SHORT_VEC_MAX 128

/* The reader calls a table's dec_short from this many bytes on, the inline
 * one below.  The vector ones (AVX-512 VBMI, AVX2) have a fixed latency
 * (one chain of mask, compaction and arithmetic steps); the inline loop
 * costs a little per byte, and beats it up to a dozen bytes or so only while the
 * branch predictor knows the payloads.  On real mixed names it does not:
 * read_strings of names is slower with the cut at 16 bytes than with
 * none, and no slower with it at 6, which keeps payloads of one or two
 * code points inline (there the fixed latency would make the vector
 * decoder slower than the scalar level). */
#define U8P_DEC_SHORT_VEC_MIN 6

/* CPython's wording of a status ("invalid start byte", ...); NULL for OK. */
const char *u8p_dec_reason(u8p_dec_status st);

/* The scalar scan, also the exact-error fallback of the SIMD scans. */
u8p_dec_status u8p_dec_scan_scalar(const uint8_t *src, size_t n,
                                   int allow_surrogates, u8p_scan_result *res);

/* The scalar copy_ascii (8 bytes a step), also the short end of the SIMD
 * ones. */
size_t u8p_dec_copy_ascii_scalar(const uint8_t *src, size_t n, uint8_t *dst);

extern const u8p_dec_kernels u8p_dec_kernels_scalar;
#if U8P_X86_SIMD
extern const u8p_dec_kernels u8p_dec_kernels_sse;
extern const u8p_dec_kernels u8p_dec_kernels_avx2;
extern const u8p_dec_kernels u8p_dec_kernels_avx512;       /* F + BW */
extern const u8p_dec_kernels u8p_dec_kernels_avx512_vbmi2; /* + VBMI2: Intel */
extern const u8p_dec_kernels u8p_dec_kernels_avx512_mixed; /* + VBMI2: AMD, others */
#endif

/*
 * Dispatch (decode_dispatch.c), same levels and cap names as the encode
 * kernels: u8p_select_dec_kernels(cap) returns the best table the CPU
 * supports up to `cap` (NULL/"" = no cap; unknown name = NULL);
 * u8p_dec_kernels_for_level returns one level's table or NULL when the CPU
 * lacks it or it is not compiled.  The "avx512" level is, where the CPU
 * has VBMI2, the VBMI2 table on Intel and the mixed one elsewhere (by
 * cpuid's vendor, as the encoders), else the F + BW one; whether default
 * selection goes up to it is U8P_DEC_AUTO_AVX512 (decode_dispatch.c).
 */
const u8p_dec_kernels *u8p_select_dec_kernels(const char *cap);
const u8p_dec_kernels *u8p_dec_kernels_for_level(u8p_isa level);
/* Every table of a level the CPU supports, best first (the AVX-512 level
 * has up to three), up to max; returns how many.  For tests. */
int u8p_dec_kernels_variants(u8p_isa level, const u8p_dec_kernels **out, int max);
/* A table's id: its level's name, or for the AVX-512 tables "avx512-bw",
 * "avx512-vbmi2", "avx512-mixed" (the testing hook's names). */
const char *u8p_dec_kernels_id(const u8p_dec_kernels *k);

#ifdef __cplusplus
}
#endif
#endif /* UTF8PFX_DECODE_H */
