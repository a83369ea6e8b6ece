/*
 * Private to csrc/kernels: what every SIMD level (x86/, arm/) shares with
 * the others.  The build's SIMD switches (U8P_X86_SIMD, U8P_ARM_NEON) are
 * in kernels.h, the x86 levels' own declarations in x86/x86_internal.h.
 */
#ifndef UTF8PFX_SIMD_INTERNAL_H
#define UTF8PFX_SIMD_INTERNAL_H

#include "../attrs.h"
#include "../kernels.h"

/* Every SIMD encoder works on blocks that must be free of surrogates; it
 * scans ahead this many code units at a time for the first one. */
#define U8P_SURR_SCAN_CHUNK 512

/* Below this many code units a UCS2/UCS4 encoder hands the whole input to
 * the scalar loop: vector set-up and the surrogate look-ahead cost more
 * than they save on a handful of code points (SSE and AVX2 take longer
 * than the scalar loop at 6 units, about as long at 14). */
#ifndef U8P_SIMD_MIN_UNITS
#define U8P_SIMD_MIN_UNITS 16
#endif

#endif /* UTF8PFX_SIMD_INTERNAL_H */
