/*
 * SSE4.1 and AVX2 length and encode kernels (x86-64; levels "sse" and
 * "avx2"): one source, x86_enc_impl.h, over the vector operations of
 * x86_vec.h, instantiated here for 128- and 256-bit vectors.  Every
 * function carries its own target attribute, so this file builds with the
 * baseline flags of the extension and a level only runs where dispatch.c
 * found its instructions.
 *
 * Encoding works on blocks of 16 units, a vector (16-bit lanes) at a time:
 *   - all ASCII: narrow with packus and store;
 *   - all < 0x800: every unit becomes [lead, trail] in its 16-bit lane and a
 *     table shuffle (u8p_shuf2) drops the trail byte of ASCII lanes;
 *   - all < 0x10000: build each unit's UTF-8 bytes in a 32-bit lane, from
 *     two 16-bit halves computed a vector at a time, and compact 4 lanes
 *     at a time with u8p_shuf4t (indexed straight from one movemask, with
 *     the lengths as popcounts);
 *   - otherwise (UCS4 with astral code points): each sequence right-aligned
 *     in a 32-bit lane, computed on 32-bit lanes (u8p_shuf4n).
 * UCS1 pairs each byte with its would-be trail byte and uses u8p_shuf2;
 * UCS4 narrows vectors to 16 bits when their code points allow it.
 * pshufb only shuffles inside a 128-bit lane, so every lane is compacted
 * with its own table row and the pieces are stored one after the other.
 * The rest, and everything from a surrogate on, is the scalar reference's
 * job.  The AVX-512 level (x86_avx512.c) reuses the AVX2 encoders where
 * the CPU lacks VBMI2.
 */
#include "x86_internal.h"

#if U8P_X86_SIMD

#include <immintrin.h>

#include "../generic/scalar_inl.h"
#include "../generic/simd_tables.h"
#include "x86_vec.h"

#define U8P_VP u8p_v16_
#define U8P_EN u8p_sse_
#define U8P_ET __attribute__((target("sse4.1,popcnt")))
/* UCS4 text always holds astral code points, and the 128-bit 4-byte steps
 * lose to the scalar loop on short emoji-rich strings (emoji at random
 * positions); a knob, so that tests/c's *-small builds can run the SIMD
 * code at every length */
#ifndef U8P_SSE_MIN_UNITS_UCS4
#define U8P_SSE_MIN_UNITS_UCS4 48
#endif
#define ENC_MIN_UCS4 U8P_SSE_MIN_UNITS_UCS4
#define ENC_TABLE u8p_kernels_sse
#define ENC_NAME "sse"
#include "x86_enc_impl.h"

#define U8P_VP u8p_v32_
#define U8P_EN u8p_avx2_
#define U8P_ET __attribute__((target("avx2,popcnt")))
#define ENC_MIN_UCS4 U8P_SIMD_MIN_UNITS
#define ENC_TABLE u8p_kernels_avx2
#define ENC_NAME "avx2"
#include "x86_enc_impl.h"

#else /* !U8P_X86_SIMD */
typedef int u8p_x86_enc_empty; /* ISO C forbids an empty file */
#endif
