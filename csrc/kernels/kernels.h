/*
 * utf8pfx kernel interface: pure C, no Python.h.
 *
 * Every function here works on plain arrays and is reachable from a C test
 * or a fuzzer without an interpreter.  The Python glue in csrc/ picks one
 * table at import (u8p_select_kernels) and calls through it.
 *
 * Storage kinds follow PEP 393: UCS1 (uint8_t, U+0000..U+00FF), UCS2
 * (uint16_t, U+0000..U+FFFF) and UCS4 (uint32_t, U+0000..U+10FFFF).
 * A "surrogate" is any code point in U+D800..U+DFFF: CPython never pairs
 * them inside a str, so for UTF-8 every one of them is a lone surrogate.
 *
 * Contracts shared by every implementation (scalar, SSE, AVX2, AVX-512, NEON):
 *
 *   len_ucs1(src, n)
 *       exact UTF-8 length of n UCS1 code points: n + #(cp >= 0x80).
 *   len_ucs2(src, n, &nsurr) / len_ucs4(src, n, &nsurr)
 *       UTF-8 length when every surrogate counts 3 bytes (what the
 *       "surrogatepass" handler produces), and the number of surrogates in
 *       *nsurr.  The glue corrects the length for other handlers.
 *   enc_ucs1(src, n, dst)
 *       writes the UTF-8 of all n code points to dst, returns bytes written.
 *   enc_ucs2(src, n, dst, &done) / enc_ucs4(src, n, dst, &done)
 *       writes the UTF-8 of src[0 .. k) where k is the index of the first
 *       surrogate (or n), stores k in *done and returns the bytes written.
 *       The glue applies the error handler to the surrogate run and calls
 *       again on the rest.
 *
 * dst must have room for the exact UTF-8 length of what is encoded
 * (at most 2, 3 or 4 bytes a code point for UCS1/2/4).  Kernels never read
 * or write outside [src, src+n) and [dst, dst+exact length): a SIMD kernel
 * that would overrun finishes with its scalar tail.  ASCII input is a
 * memcpy and needs no kernel.
 */
#ifndef UTF8PFX_KERNELS_H
#define UTF8PFX_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct u8p_kernels {
    const char *name; /* "scalar", "sse", "avx2", "avx512", "neon" */

    size_t (*len_ucs1)(const uint8_t *src, size_t n);
    size_t (*len_ucs2)(const uint16_t *src, size_t n, size_t *nsurr);
    size_t (*len_ucs4)(const uint32_t *src, size_t n, size_t *nsurr);

    size_t (*enc_ucs1)(const uint8_t *src, size_t n, uint8_t *dst);
    size_t (*enc_ucs2)(const uint16_t *src, size_t n, uint8_t *dst, size_t *done);
    size_t (*enc_ucs4)(const uint32_t *src, size_t n, uint8_t *dst, size_t *done);
} u8p_kernels;

/* Implementations; each exists only where it is compiled for the target. */
extern const u8p_kernels u8p_kernels_scalar;
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
extern const u8p_kernels u8p_kernels_sse;
extern const u8p_kernels u8p_kernels_avx2;
extern const u8p_kernels u8p_kernels_avx512;
#endif
#if defined(__aarch64__) || defined(_M_ARM64)
extern const u8p_kernels u8p_kernels_neon;
#endif

/*
 * Dispatch (dispatch.c).  Levels are ordered; u8p_select_kernels returns
 * the best table the CPU supports, capped by `cap` (a name as in ->name, or
 * NULL / "" for no cap).  An unknown cap name selects nothing: returns NULL.
 * u8p_kernels_for_level returns the table for one level if the CPU supports
 * it and it was compiled, else NULL (tests iterate over every level).
 */
typedef enum {
    U8P_ISA_SCALAR = 0,
    U8P_ISA_SSE = 1,   /* SSE4.1 on x86; NEON takes this rank on aarch64 */
    U8P_ISA_AVX2 = 2,
    U8P_ISA_AVX512 = 3,
    U8P_ISA_COUNT
} u8p_isa;

/* The level a cap name stands for ("scalar", "sse", "avx2", "avx512"; "neon"
 * has the "sse" rank), the top level for NULL or "", or -1 for an unknown
 * name.  Shared by every dispatcher (encode and decode). */
int u8p_isa_cap(const char *cap);

const u8p_kernels *u8p_select_kernels(const char *cap);
const u8p_kernels *u8p_kernels_for_level(u8p_isa level);
/* Every table of a level the CPU supports, the level's own first (with
 * VBMI2 the AVX-512 level also has an all-VBMI2 and an F+BW table), up to
 * max; returns how many.  For tests and benchmarks. */
int u8p_kernels_variants(u8p_isa level, const u8p_kernels **out, int max);

#ifdef __cplusplus
}
#endif
#endif /* UTF8PFX_KERNELS_H */
