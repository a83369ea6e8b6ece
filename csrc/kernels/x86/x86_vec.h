/*
 * Private to the x86 SIMD files: the vector operations the width-generic
 * kernels are written in, once per width.
 *
 * A generic kernel (decode_x86_impl.h, ...) names its operations v<op>,
 * which expand to u8p_v16_<op> (SSE4.1, 128-bit), u8p_v32_<op> (AVX2,
 * 256-bit) or u8p_v64_<op> (AVX-512 F + BW, 512-bit) according to U8P_VP,
 * which the including file sets before each instantiation.  Every
 * operation is a macro over one or two intrinsics, so it takes the target
 * of the function it is expanded in (those carry the target attribute) and
 * an immediate operand stays an immediate at any optimisation level.
 *
 * Masks are uint64_t for every width: bit j for byte (or lane) j.
 * Only intrinsics of the instruction set of the width are used here; what
 * only pays at one width (AVX-512 compress, masked stores) lives in clearly
 * named functions of the kernel files instead.
 */
#ifndef UTF8PFX_X86_VEC_H
#define UTF8PFX_X86_VEC_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "x86_internal.h"
#include "x86_short.h"

#define U8P_CAT_(a, b) a##b
#define U8P_CAT(a, b) U8P_CAT_(a, b)
#define VOP(x) U8P_CAT(U8P_VP, x)

/* the generic names */
#define vec VOP(t)
#define VW VOP(W)
#define vld VOP(ld)
#define vst VOP(st)
#define vldpart VOP(ldpart)
#define vzero VOP(zero)
#define vset8 VOP(set8)
#define vset16 VOP(set16)
#define vset32 VOP(set32)
#define vrow VOP(row)
#define vand VOP(and)
#define vor VOP(or)
#define vxor VOP(xor)
#define vadd8 VOP(add8)
#define vsrl16 VOP(srl16)
#define vsll16 VOP(sll16)
#define vsll32 VOP(sll32)
#define vshuf8 VOP(shuf8)
#define vsubs8u VOP(subs8u)
#define vmax8u VOP(max8u)
#define vmhigh VOP(mhigh)
#define vmcont VOP(mcont)
#define vmcontk VOP(mcontk)
#define vnone VOP(none)
#define vprev1 VOP(prev1)
#define vprev2 VOP(prev2)
#define vprev3 VOP(prev3)
#define vw8to16 VOP(w8to16)
#define vw8to32 VOP(w8to32)
#define vw16to32lo VOP(w16to32lo)
#define vw16to32hi VOP(w16to32hi)
#define vsel16gt VOP(sel16gt)
#define vsel32gt VOP(sel32gt)
#define vaddifeq8 VOP(addifeq8)
/* encoders (128 and 256 bits) */
#define vk(name) VOP(k)(U8P_K_##name)
#define vtestz VOP(testz)
#define vandnot VOP(andnot)
#define vsub8 VOP(sub8)
#define vsub16 VOP(sub16)
#define vsub32 VOP(sub32)
#define vcmpgt8 VOP(cmpgt8)
#define vcmpeq16 VOP(cmpeq16)
#define vcmpgt16 VOP(cmpgt16)
#define vcmpeq32 VOP(cmpeq32)
#define vcmpgt32 VOP(cmpgt32)
#define vpacks16 VOP(packs16)
#define vpackus16 VOP(packus16)
#define vmin8u VOP(min8u)
#define vmin16u VOP(min16u)
#define vaddus16 VOP(addus16)
#define vcmpeq8 VOP(cmpeq8)
#define vhsum8 VOP(hsum8)
#define vpacks32 VOP(packs32)
#define vpackus32 VOP(packus32)
#define vblend VOP(blend)
#define vsrl32 VOP(srl32)
#define vmulhi16u VOP(mulhi16u)
#define vmullo16 VOP(mullo16)
#define vmaddubs VOP(maddubs)
#define vunpacklo8 VOP(unpacklo8)
#define vunpackhi8 VOP(unpackhi8)
#define vunpacklo16 VOP(unpacklo16)
#define vunpackhi16 VOP(unpackhi16)
#define vlane VOP(lane)
#define vhsum16 VOP(hsum16)
#define vhsum32 VOP(hsum32)
#define vnarrow16 VOP(narrow16)
#define vpack32to16 VOP(pack32to16)
#define vmarks VOP(marks)
#define vsthalf VOP(sthalf)
#define vrows VOP(rows)

/* all mask bits of a vector of bytes */
#define VMASK_ALL (VW == 64 ? ~(uint64_t)0 : (((uint64_t)1 << (VW & 63)) - 1))

static inline uint32_t
u8p_load_u32(const void *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* ------------------------------------------------------------- SSE4.1 */
#define u8p_v16_t __m128i
#define u8p_v16_W 16
#define u8p_v16_ld(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define u8p_v16_st(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))
/* nb <= 16 bytes at p, zeros above; reads exactly [p, p + nb) */
#define u8p_v16_ldpart(p, nb) u8p_load_part16((p), (nb))
#define u8p_v16_zero() _mm_setzero_si128()
#define u8p_v16_set8(c) _mm_set1_epi8((char)(c))
#define u8p_v16_set16(c) _mm_set1_epi16((short)(c))
#define u8p_v16_set32(c) _mm_set1_epi32((int)(c))
/* a 16-byte table row in every 128-bit lane */
#define u8p_v16_row(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define u8p_v16_and(a, b) _mm_and_si128((a), (b))
#define u8p_v16_or(a, b) _mm_or_si128((a), (b))
#define u8p_v16_xor(a, b) _mm_xor_si128((a), (b))
#define u8p_v16_add8(a, b) _mm_add_epi8((a), (b))
#define u8p_v16_srl16(a, n) _mm_srli_epi16((a), (n))
#define u8p_v16_sll16(a, n) _mm_slli_epi16((a), (n))
#define u8p_v16_sll32(a, n) _mm_slli_epi32((a), (n))
#define u8p_v16_shuf8(t, i) _mm_shuffle_epi8((t), (i))
#define u8p_v16_subs8u(a, b) _mm_subs_epu8((a), (b))
#define u8p_v16_max8u(a, b) _mm_max_epu8((a), (b))
/* bytes >= 0x80 */
#define u8p_v16_mhigh(v) ((uint64_t)(unsigned)_mm_movemask_epi8(v))
/* continuation bytes 0x80..0xBF (signed < -64) */
#define u8p_v16_mcont(v) \
    ((uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8(_mm_set1_epi8(-64), (v))))
#define u8p_v16_mcontk(v, k) ((uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpgt_epi8((k), (v))))
#define u8p_v16_none(v) _mm_testz_si128((v), (v))
/* in shifted by k bytes, the last k bytes of prev coming in */
#define u8p_v16_prev1(in, prev) _mm_alignr_epi8((in), (prev), 15)
#define u8p_v16_prev2(in, prev) _mm_alignr_epi8((in), (prev), 14)
#define u8p_v16_prev3(in, prev) _mm_alignr_epi8((in), (prev), 13)
/* W/2 bytes at p widened to 16-bit lanes; W/4 bytes to 32-bit lanes */
#define u8p_v16_w8to16(p) _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(const void *)(p)))
#define u8p_v16_w8to32(p) _mm_cvtepu8_epi32(_mm_cvtsi32_si128((int)u8p_load_u32(p)))
/* the first and the second half of v's 16-bit lanes, widened to 32 bits */
#define u8p_v16_w16to32lo(v) _mm_cvtepu16_epi32(v)
#define u8p_v16_w16to32hi(v) _mm_cvtepu16_epi32(_mm_srli_si128((v), 8))
/* x > t ? b : a, per 16-/32-bit lane (signed compare) */
#define u8p_v16_sel16gt(x, t, a, b) \
    _mm_blendv_epi8((a), (b), _mm_cmpgt_epi16((x), _mm_set1_epi16((short)(t))))
#define u8p_v16_sel32gt(x, t, a, b) \
    _mm_blendv_epi8((a), (b), _mm_cmpgt_epi32((x), _mm_set1_epi32((int)(t))))
/* x + (p == c ? a : 0), per byte */
#define u8p_v16_addifeq8(x, p, c, a)                                                  \
    _mm_add_epi8((x), _mm_and_si128(_mm_cmpeq_epi8((p), _mm_set1_epi8((char)(c))), \
                                    _mm_set1_epi8((char)(a))))

/* encoders: a constant of u8p_x86_k (its low half), ... */
#define u8p_v16_k(i) _mm_load_si128((const __m128i *)(const void *)u8p_x86_k[i].b)
#define u8p_v16_testz(a, b) _mm_testz_si128((a), (b))
#define u8p_v16_andnot(a, b) _mm_andnot_si128((a), (b))
#define u8p_v16_sub8(a, b) _mm_sub_epi8((a), (b))
#define u8p_v16_sub16(a, b) _mm_sub_epi16((a), (b))
#define u8p_v16_sub32(a, b) _mm_sub_epi32((a), (b))
#define u8p_v16_cmpgt8(a, b) _mm_cmpgt_epi8((a), (b))
#define u8p_v16_cmpeq16(a, b) _mm_cmpeq_epi16((a), (b))
#define u8p_v16_cmpgt16(a, b) _mm_cmpgt_epi16((a), (b))
#define u8p_v16_cmpeq32(a, b) _mm_cmpeq_epi32((a), (b))
#define u8p_v16_cmpgt32(a, b) _mm_cmpgt_epi32((a), (b))
/* packs and unpacks work within each 128-bit lane at every width */
#define u8p_v16_packs16(a, b) _mm_packs_epi16((a), (b))
#define u8p_v16_packus16(a, b) _mm_packus_epi16((a), (b))
#define u8p_v16_min8u(a, b) _mm_min_epu8((a), (b))
#define u8p_v16_min16u(a, b) _mm_min_epu16((a), (b))
#define u8p_v16_addus16(a, b) _mm_adds_epu16((a), (b))
#define u8p_v16_cmpeq8(a, b) _mm_cmpeq_epi8((a), (b))
#define u8p_v16_packs32(a, b) _mm_packs_epi32((a), (b))
#define u8p_v16_packus32(a, b) _mm_packus_epi32((a), (b))
#define u8p_v16_blend(a, b, m) _mm_blendv_epi8((a), (b), (m))
#define u8p_v16_srl32(a, n) _mm_srli_epi32((a), (n))
#define u8p_v16_mulhi16u(a, b) _mm_mulhi_epu16((a), (b))
#define u8p_v16_mullo16(a, b) _mm_mullo_epi16((a), (b))
#define u8p_v16_maddubs(a, b) _mm_maddubs_epi16((a), (b))
#define u8p_v16_unpacklo8(a, b) _mm_unpacklo_epi8((a), (b))
#define u8p_v16_unpackhi8(a, b) _mm_unpackhi_epi8((a), (b))
#define u8p_v16_unpacklo16(a, b) _mm_unpacklo_epi16((a), (b))
#define u8p_v16_unpackhi16(a, b) _mm_unpackhi_epi16((a), (b))
/* 128-bit lane j (a constant) */
#define u8p_v16_lane(v, j) (v)
/* sum of the 16-bit lanes (each < 32768: madd is signed), 32-bit lanes */
#define u8p_v16_hsum16(v) u8p_v16_hsum32(_mm_madd_epi16((v), _mm_set1_epi16(1)))
#define u8p_v16_hsum32(v) u8p_hsum32_128(v)
/* the sum of the bytes (the 64-bit sums of sad fit their low 32 bits) */
#define u8p_v16_hsum8(v) u8p_v16_hsum32(_mm_sad_epu8((v), _mm_setzero_si128()))
/* 16-bit lanes < 0x100 -> their bytes in order, in the low W/2 bytes */
#define u8p_v16_narrow16(v) _mm_packus_epi16((v), (v))
/* 32-bit lanes of a, then of b (< 0x10000) -> 16-bit lanes in order */
#define u8p_v16_pack32to16(a, b) _mm_packus_epi32((a), (b))
/* a shuffle control of one 16-byte table row per 128-bit lane (lane 0's
 * row at p0, lane 1's at p1, unused at 128 bits) */
#define u8p_v16_rows(p0, p1) _mm_load_si128((const __m128i *)(const void *)(p0))
/* store the low W/2 bytes of a 128-bit x */
#define u8p_v16_sthalf(p, x) _mm_storel_epi64((__m128i *)(void *)(p), (x))
/* UTF-8 marker bits of each lane's sequence length from its threshold
 * masks (x86_consts.c) */
#define u8p_v16_marks(ge80, ge800, ge10000)                                           \
    _mm_xor_si128(_mm_xor_si128(_mm_and_si128((ge80), u8p_v16_k(U8P_K_W80C00000)),   \
                                _mm_and_si128((ge800), u8p_v16_k(U8P_K_W0040E000))), \
                  _mm_and_si128((ge10000), u8p_v16_k(U8P_K_W000060F0)))

__attribute__((target("sse4.1"))) static inline size_t
u8p_hsum32_128(__m128i s)
{
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return (size_t)(uint32_t)_mm_cvtsi128_si32(s);
}

/* --------------------------------------------------------------- AVX2 */
#define u8p_v32_t __m256i
#define u8p_v32_W 32
#define u8p_v32_ld(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define u8p_v32_st(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), (v))
#define u8p_v32_ldpart(p, nb) u8p_load_part32((p), (nb))
#define u8p_v32_zero() _mm256_setzero_si256()
#define u8p_v32_set8(c) _mm256_set1_epi8((char)(c))
#define u8p_v32_set16(c) _mm256_set1_epi16((short)(c))
#define u8p_v32_set32(c) _mm256_set1_epi32((int)(c))
#define u8p_v32_row(p) _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define u8p_v32_and(a, b) _mm256_and_si256((a), (b))
#define u8p_v32_or(a, b) _mm256_or_si256((a), (b))
#define u8p_v32_xor(a, b) _mm256_xor_si256((a), (b))
#define u8p_v32_add8(a, b) _mm256_add_epi8((a), (b))
#define u8p_v32_srl16(a, n) _mm256_srli_epi16((a), (n))
#define u8p_v32_sll16(a, n) _mm256_slli_epi16((a), (n))
#define u8p_v32_sll32(a, n) _mm256_slli_epi32((a), (n))
#define u8p_v32_shuf8(t, i) _mm256_shuffle_epi8((t), (i))
#define u8p_v32_subs8u(a, b) _mm256_subs_epu8((a), (b))
#define u8p_v32_max8u(a, b) _mm256_max_epu8((a), (b))
#define u8p_v32_mhigh(v) ((uint64_t)(uint32_t)_mm256_movemask_epi8(v))
#define u8p_v32_mcont(v) \
    ((uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8(_mm256_set1_epi8(-64), (v))))
#define u8p_v32_mcontk(v, k) \
    ((uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpgt_epi8((k), (v))))
#define u8p_v32_none(v) _mm256_testz_si256((v), (v))
/* alignr works per 128-bit half: pair each half with the one before it */
#define u8p_v32_prevk(in, prev, k) \
    _mm256_alignr_epi8((in), _mm256_permute2x128_si256((prev), (in), 0x21), 16 - (k))
#define u8p_v32_prev1(in, prev) u8p_v32_prevk(in, prev, 1)
#define u8p_v32_prev2(in, prev) u8p_v32_prevk(in, prev, 2)
#define u8p_v32_prev3(in, prev) u8p_v32_prevk(in, prev, 3)
#define u8p_v32_w8to16(p) _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define u8p_v32_w8to32(p) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p)))
#define u8p_v32_sel16gt(x, t, a, b) \
    _mm256_blendv_epi8((a), (b), _mm256_cmpgt_epi16((x), _mm256_set1_epi16((short)(t))))
#define u8p_v32_sel32gt(x, t, a, b) \
    _mm256_blendv_epi8((a), (b), _mm256_cmpgt_epi32((x), _mm256_set1_epi32((int)(t))))
#define u8p_v32_addifeq8(x, p, c, a)                                   \
    _mm256_add_epi8((x), _mm256_and_si256(                             \
                             _mm256_cmpeq_epi8((p), _mm256_set1_epi8((char)(c))), \
                             _mm256_set1_epi8((char)(a))))
#define u8p_v32_w16to32lo(v) _mm256_cvtepu16_epi32(_mm256_castsi256_si128(v))
#define u8p_v32_w16to32hi(v) _mm256_cvtepu16_epi32(_mm256_extracti128_si256((v), 1))

#define u8p_v32_k(i) _mm256_load_si256((const __m256i *)(const void *)u8p_x86_k[i].b)
#define u8p_v32_testz(a, b) _mm256_testz_si256((a), (b))
#define u8p_v32_andnot(a, b) _mm256_andnot_si256((a), (b))
#define u8p_v32_sub8(a, b) _mm256_sub_epi8((a), (b))
#define u8p_v32_sub16(a, b) _mm256_sub_epi16((a), (b))
#define u8p_v32_sub32(a, b) _mm256_sub_epi32((a), (b))
#define u8p_v32_cmpgt8(a, b) _mm256_cmpgt_epi8((a), (b))
#define u8p_v32_cmpeq16(a, b) _mm256_cmpeq_epi16((a), (b))
#define u8p_v32_cmpgt16(a, b) _mm256_cmpgt_epi16((a), (b))
#define u8p_v32_cmpeq32(a, b) _mm256_cmpeq_epi32((a), (b))
#define u8p_v32_cmpgt32(a, b) _mm256_cmpgt_epi32((a), (b))
#define u8p_v32_packs16(a, b) _mm256_packs_epi16((a), (b))
#define u8p_v32_packus16(a, b) _mm256_packus_epi16((a), (b))
#define u8p_v32_min8u(a, b) _mm256_min_epu8((a), (b))
#define u8p_v32_min16u(a, b) _mm256_min_epu16((a), (b))
#define u8p_v32_addus16(a, b) _mm256_adds_epu16((a), (b))
#define u8p_v32_cmpeq8(a, b) _mm256_cmpeq_epi8((a), (b))
#define u8p_v32_packs32(a, b) _mm256_packs_epi32((a), (b))
#define u8p_v32_packus32(a, b) _mm256_packus_epi32((a), (b))
#define u8p_v32_blend(a, b, m) _mm256_blendv_epi8((a), (b), (m))
#define u8p_v32_srl32(a, n) _mm256_srli_epi32((a), (n))
#define u8p_v32_mulhi16u(a, b) _mm256_mulhi_epu16((a), (b))
#define u8p_v32_mullo16(a, b) _mm256_mullo_epi16((a), (b))
#define u8p_v32_maddubs(a, b) _mm256_maddubs_epi16((a), (b))
#define u8p_v32_unpacklo8(a, b) _mm256_unpacklo_epi8((a), (b))
#define u8p_v32_unpackhi8(a, b) _mm256_unpackhi_epi8((a), (b))
#define u8p_v32_unpacklo16(a, b) _mm256_unpacklo_epi16((a), (b))
#define u8p_v32_unpackhi16(a, b) _mm256_unpackhi_epi16((a), (b))
#define u8p_v32_lane(v, j) ((j) ? _mm256_extracti128_si256((v), 1) : _mm256_castsi256_si128(v))
#define u8p_v32_hsum16(v) u8p_v32_hsum32(_mm256_madd_epi16((v), _mm256_set1_epi16(1)))
#define u8p_v32_hsum32(v) \
    u8p_hsum32_128(_mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256((v), 1)))
#define u8p_v32_hsum8(v) u8p_v32_hsum32(_mm256_sad_epu8((v), _mm256_setzero_si256()))
/* packus interleaves the 128-bit lanes: the permute restores the order */
#define u8p_v32_narrow16(v) \
    _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi16((v), (v)), 0xD8))
#define u8p_v32_pack32to16(a, b) _mm256_permute4x64_epi64(_mm256_packus_epi32((a), (b)), 0xD8)
#define u8p_v32_rows(p0, p1)                                                                \
    _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_load_si128((const __m128i *)(const void *)(p0))), \
                            _mm_load_si128((const __m128i *)(const void *)(p1)), 1)
#define u8p_v32_sthalf(p, x) _mm_storeu_si128((__m128i *)(void *)(p), (x))
/* -k is the sum of the masks; vpermilps reads its low 2 bits to pick the
 * marker bits (bytes below the lead are don't cares) */
#define u8p_v32_marks(ge80, ge800, ge10000)                                       \
    _mm256_castps_si256(_mm256_permutevar_ps(                                     \
        _mm256_castsi256_ps(u8p_v32_k(U8P_K_MARKS)),                              \
        _mm256_add_epi32(_mm256_add_epi32((ge80), (ge800)), (ge10000))))

/* ------------------------------------------------------ AVX-512 F + BW */
#define u8p_v64_t __m512i
#define u8p_v64_W 64
#define u8p_v64_ld(p) _mm512_loadu_si512((const void *)(p))
#define u8p_v64_st(p, v) _mm512_storeu_si512((void *)(p), (v))
/* masked load: reads exactly [p, p + nb), nb <= 64 */
#define u8p_v64_ldpart(p, nb)                                                      \
    _mm512_maskz_loadu_epi8((nb) >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (nb)) - 1), \
                            (const void *)(p))
#define u8p_v64_zero() _mm512_setzero_si512()
#define u8p_v64_set8(c) _mm512_set1_epi8((char)(c))
#define u8p_v64_set16(c) _mm512_set1_epi16((short)(c))
#define u8p_v64_set32(c) _mm512_set1_epi32((int)(c))
#define u8p_v64_row(p) _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define u8p_v64_and(a, b) _mm512_and_si512((a), (b))
#define u8p_v64_or(a, b) _mm512_or_si512((a), (b))
#define u8p_v64_xor(a, b) _mm512_xor_si512((a), (b))
#define u8p_v64_add8(a, b) _mm512_add_epi8((a), (b))
#define u8p_v64_srl16(a, n) _mm512_srli_epi16((a), (n))
#define u8p_v64_sll16(a, n) _mm512_slli_epi16((a), (n))
#define u8p_v64_sll32(a, n) _mm512_slli_epi32((a), (n))
#define u8p_v64_shuf8(t, i) _mm512_shuffle_epi8((t), (i))
#define u8p_v64_subs8u(a, b) _mm512_subs_epu8((a), (b))
#define u8p_v64_max8u(a, b) _mm512_max_epu8((a), (b))
#define u8p_v64_mhigh(v) ((uint64_t)_mm512_movepi8_mask(v))
#define u8p_v64_mcont(v) ((uint64_t)_mm512_cmplt_epi8_mask((v), _mm512_set1_epi8(-64)))
/* the same with k = vset8(0xC0) made by the caller (kept in a register) */
#define u8p_v64_mcontk(v, k) ((uint64_t)_mm512_cmplt_epi8_mask((v), (k)))
#define u8p_v64_none(v) (_mm512_test_epi64_mask((v), (v)) == 0)
/* valignq brings prev's last 128 bits in front of in's first 384, then
 * alignr per 128-bit lane as at 256 bits */
#define u8p_v64_prevk(in, prev, k) \
    _mm512_alignr_epi8((in), _mm512_alignr_epi64((in), (prev), 6), 16 - (k))
#define u8p_v64_prev1(in, prev) u8p_v64_prevk(in, prev, 1)
#define u8p_v64_prev2(in, prev) u8p_v64_prevk(in, prev, 2)
#define u8p_v64_prev3(in, prev) u8p_v64_prevk(in, prev, 3)
#define u8p_v64_w8to16(p) _mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
#define u8p_v64_w8to32(p) _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define u8p_v64_sel16gt(x, t, a, b) \
    _mm512_mask_blend_epi16(_mm512_cmpgt_epi16_mask((x), _mm512_set1_epi16((short)(t))), (a), (b))
#define u8p_v64_sel32gt(x, t, a, b) \
    _mm512_mask_blend_epi32(_mm512_cmpgt_epi32_mask((x), _mm512_set1_epi32((int)(t))), (a), (b))
#define u8p_v64_addifeq8(x, p, c, a)                                                  \
    _mm512_mask_add_epi8((x), _mm512_cmpeq_epi8_mask((p), _mm512_set1_epi8((char)(c))), \
                         (x), _mm512_set1_epi8((char)(a)))
#define u8p_v64_w16to32lo(v) _mm512_cvtepu16_epi32(_mm512_castsi512_si256(v))
#define u8p_v64_w16to32hi(v) _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64((v), 1))

#endif /* UTF8PFX_X86_VEC_H */
