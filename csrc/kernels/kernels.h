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
 *   enc_ucs2_pass(src, n, dst, &surr) / enc_ucs4_pass(src, n, dst, &surr)
 *       writes the UTF-8 of all n code points, each surrogate in its 3-byte
 *       form (what "surrogatepass" writes), and returns the bytes written:
 *       len_ucs2's / len_ucs4's count.  With surr non-NULL, *surr is set
 *       to 1 if a surrogate was among them, else 0.  A level whose encoder
 *       looks ahead for surrogates before each block skips the look here;
 *       the glue takes this form first when it has room for the worst
 *       case, and again (surr NULL) after a length pass that found none.
 *   enc_ucs1_room / enc_ucs2_room / enc_ucs4_room
 *       enc_ucs1 / enc_ucs2 / enc_ucs4, for a dst with room for 2n, 3n or
 *       4n + U8P_ENC_ROOM bytes: the bytes past the returned length, up
 *       to that room, may be written (garbage).  A level whose short
 *       inputs go through a buffer (whose copy-out waits for the stores
 *       it reads) stores straight into dst here; others use the exact
 *       forms.
 *
 * dst must have room for the exact UTF-8 length of what is encoded
 * (at most 2, 3 or 4 bytes a code point for UCS1/2/4).  Kernels never read
 * or write outside [src, src+n) and [dst, dst+exact length) (the room
 * form: its room): a SIMD kernel that would overrun finishes with its
 * scalar tail.  ASCII input is a
 * memcpy and needs no kernel.
 *
 * Layout of csrc/kernels:
 *
 *   *.h (this folder)  the public headers, the only kernel headers the glue
 *                      includes: kernels.h (this one), decode.h,
 *                      decode_short.h, prefix.h, mutf8.h, attrs.h (compiler
 *                      attributes) and short_vbmi2.h (the VBMI2 steps the
 *                      writer inlines).  They include each other by plain
 *                      name and nothing from a subfolder.
 *   dispatch.c, decode_dispatch.c  the CPU detection and table choice: the
 *                      only files that name every level's tables.
 *   generic/           the scalar kernels (the reference and every SIMD
 *                      tail), the shuffle tables, and simd_internal.h, what
 *                      every SIMD level shares (private).
 *   x86/               SSE4.1, AVX2 and AVX-512 (private headers x86_*.h).
 *   arm/               NEON (aarch64).
 *
 * Kernel files include each other by relative path ("../generic/
 * scalar_inl.h", "x86_vec.h" from the same folder), so they build with
 * -Icsrc, with -Icsrc/kernels, or with no include path at all.  Every .c
 * file under here is compiled (setup.py and the harnesses take them from
 * the tree, so a new file is picked up); their base names stay unique,
 * because the harness builds put all objects in one folder.
 *
 * A new kernel level (a new u8p_kernels / u8p_dec_kernels table):
 *   - its source in the folder of its instruction set (a new folder, one
 *     level down, for a new architecture: tests/c/Makefile looks no
 *     deeper), compiling to nothing where it cannot build (see
 *     U8P_X86_SIMD below);
 *   - its table declared here (decode.h for a decoder), under the same
 *     guard as its definition;
 *   - dispatch.c / decode_dispatch.c: when the CPU has it, and at which
 *     u8p_isa rank (a new rank also needs a name there and a cap name in
 *     u8p_isa_cap);
 *   - a new short-input cut-off (#ifndef U8P_..._MIN_UNITS...) also goes
 *     into SMALL in tests/test_c_kernels.py and SMALL_FLAGS in
 *     tests/c/emu.mk; tests/c's tables.h learns the CPU features a new
 *     table name stands for.
 */
#ifndef UTF8PFX_KERNELS_H
#define UTF8PFX_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "attrs.h"

/*
 * U8P_X86_SIMD is 1 where the x86 SIMD files compile their kernels: x86-64
 * with a GNU-compatible compiler (gcc, clang), because each function picks
 * its instruction set with __attribute__((target(...))) while the file is
 * built with baseline flags.  Elsewhere those files compile to nothing and
 * dispatch never names their tables.  U8P_ARM_NEON: the same for the NEON
 * file on aarch64.
 */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define U8P_X86_SIMD 1
#else
#define U8P_X86_SIMD 0
#endif

#if defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define U8P_ARM_NEON 1
#else
#define U8P_ARM_NEON 0
#endif

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

    size_t (*enc_ucs2_pass)(const uint16_t *src, size_t n, uint8_t *dst, int *surr);
    size_t (*enc_ucs4_pass)(const uint32_t *src, size_t n, uint8_t *dst, int *surr);

    size_t (*enc_ucs1_room)(const uint8_t *src, size_t n, uint8_t *dst);
    size_t (*enc_ucs2_room)(const uint16_t *src, size_t n, uint8_t *dst, size_t *done);
    size_t (*enc_ucs4_room)(const uint32_t *src, size_t n, uint8_t *dst, size_t *done);
} u8p_kernels;

/* Bytes past the worst case (2n, 3n, 4n) that the room forms may write
 * into. */
#define U8P_ENC_ROOM 64

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
#if U8P_X86_SIMD
/* The avx512 level's tables on a CPU with VBMI2 (x86/x86_avx512.c):
 * "mixed" (VBMI2 and AVX2 encoders, each for the input sizes where it is
 * the faster on AMD cores) and "intel" (VBMI2 at every size).  The writer
 * runs the VBMI2 short steps (short_vbmi2.h) only while one of these two
 * is the table in use. */
extern const u8p_kernels u8p_kernels_avx512_mixed;
extern const u8p_kernels u8p_kernels_avx512_intel;
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
 * VBMI2 the AVX-512 level also has the other vendor's table, an all-VBMI2
 * and an F+BW table), up to max; returns how many.  For tests and
 * benchmarks. */
int u8p_kernels_variants(u8p_isa level, const u8p_kernels **out, int max);
/* Every table the CPU supports, of every level (u8p_kernels_variants in
 * level order), up to max; returns how many.  u8p_kernels_id names each
 * one apart from the others ("avx512-mixed", "avx512-intel", ...; a level
 * with one table goes by the level's name).  For the testing hook that
 * forces each table in turn. */
int u8p_kernel_tables(const u8p_kernels **out, int max);
const char *u8p_kernels_id(const u8p_kernels *k);

/* A few code points (1, 2, 4 bytes each: `width`) -> UTF-8 at dst, in
 * line: for a str of one or two code points every kernel is its scalar
 * loop, and reaching that through the table costs a call that the
 * writer's short loop then spills around.  Returns the byte count, or
 * (size_t)-1 at a surrogate (the caller applies the error handler). */
U8P_ALWAYS_INLINE size_t
u8p_enc_few(const void *src, int width, size_t n, uint8_t *dst)
{
    size_t i, k = 0;
    for (i = 0; i < n; i++) {
        const uint32_t c = width == 1   ? ((const uint8_t *)src)[i]
                           : width == 2 ? ((const uint16_t *)src)[i]
                                        : ((const uint32_t *)src)[i];
        if (c < 0x80)
            dst[k++] = (uint8_t)c;
        else if (c < 0x800) {
            dst[k++] = (uint8_t)(0xC0 | (c >> 6));
            dst[k++] = (uint8_t)(0x80 | (c & 0x3F));
        }
        else if (c < 0x10000) {
            if ((c & 0xF800) == 0xD800)
                return (size_t)-1;
            dst[k++] = (uint8_t)(0xE0 | (c >> 12));
            dst[k++] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            dst[k++] = (uint8_t)(0x80 | (c & 0x3F));
        }
        else {
            dst[k++] = (uint8_t)(0xF0 | (c >> 18));
            dst[k++] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
            dst[k++] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
            dst[k++] = (uint8_t)(0x80 | (c & 0x3F));
        }
    }
    return k;
}

/* A mask of the low k bits, k in 0..64: the masked loads and stores of
 * the first k elements of the AVX-512 kernels and of short_vbmi2.h's
 * steps. */
static inline uint64_t
u8p_low_bits64(size_t k)
{
    return k >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << k) - 1);
}

#ifdef __cplusplus
}
#endif
#endif /* UTF8PFX_KERNELS_H */
