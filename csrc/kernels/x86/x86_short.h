/*
 * Private to the x86 SIMD files: loading a short run of bytes into a
 * zero-padded vector without reading past it and without a memcpy into a
 * stack buffer (whose byte-sized stores a following vector load cannot
 * forward from: a stall of a dozen cycles on a string of a few code points).
 * SSE4.1 instructions (u8p_load_part32 aside), so every x86 level shares it.
 */
#ifndef UTF8PFX_X86_SHORT_H
#define UTF8PFX_X86_SHORT_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Below this many code units the SSE and AVX2 UCS2 encoders hand a whole
 * input to the scalar loop, as U8P_SIMD_MIN_UNITS (generic/simd_internal.h)
 * does for the others and for UCS4: their short paths round-trip through a
 * stack buffer, which costs more than the scalar loop on 1..4 units but
 * less from about 8 on, even when the non-ASCII positions are random.
 * UCS4 short paths stay slower than scalar under 16 (emoji text). */
#ifndef U8P_X86_MIN_UNITS_UCS2
#define U8P_X86_MIN_UNITS_UCS2 8
#endif

/* The nb <= 16 bytes at p in the low bytes of a vector, zeros above;
 * reads exactly [p, p + nb).  Two overlapping loads of h = 8 or 4 bytes
 * (or three single bytes under 4) and one shuffle moving the second load's
 * bytes into place: out[j] = in[j < h ? j : j + 2h - nb], zero from nb. */
__attribute__((target("sse4.1"))) static inline __m128i
u8p_load_part16(const uint8_t *p, size_t nb)
{
    const __m128i iota = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m128i v, idx;
    int h;
    if (nb >= 8) {
        uint64_t a, b;
        memcpy(&a, p, 8);
        memcpy(&b, p + nb - 8, 8);
        v = _mm_set_epi64x((long long)b, (long long)a);
        h = 8;
    }
    else if (nb >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + nb - 4, 4);
        v = _mm_insert_epi32(_mm_cvtsi32_si128((int)a), (int)b, 1);
        h = 4;
    }
    else if (nb > 0) {
        v = _mm_cvtsi32_si128((int)((unsigned)p[0] | (unsigned)p[nb >> 1] << 8
                                    | (unsigned)p[nb - 1] << 16));
        h = 16;
    }
    else {
        return _mm_setzero_si128();
    }
    /* idx = j < h ? j : j + 2h - nb; then 0x80 (zero) where j >= nb */
    idx = _mm_add_epi8(iota, _mm_andnot_si128(_mm_cmpgt_epi8(_mm_set1_epi8((char)h), iota),
                                              _mm_set1_epi8((char)(2 * h - (int)nb))));
    idx = _mm_or_si128(idx, _mm_cmpgt_epi8(iota, _mm_set1_epi8((char)(nb - 1))));
    return _mm_shuffle_epi8(v, idx);
}

/* The nb <= 32 bytes at p in the low bytes of a 256-bit vector, zeros
 * above; reads exactly [p, p + nb).  AVX2 (the one function here that is). */
__attribute__((target("avx2"))) static inline __m256i
u8p_load_part32(const uint8_t *p, size_t nb)
{
    if (nb > 16)
        return _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)p)),
            u8p_load_part16(p + 16, nb - 16), 1);
    return _mm256_zextsi128_si256(u8p_load_part16(p, nb));
}

/* o bytes from a stack buffer to dst, inline: 16-byte steps, then two
 * overlapping stores of 8 or 4 bytes, or single bytes (a call to memcpy
 * costs as much as encoding a few code points). */
__attribute__((target("sse4.1"))) static inline void
u8p_copy_short(uint8_t *d, const uint8_t *s, size_t o)
{
    for (; o > 16; o -= 16, d += 16, s += 16)
        _mm_storeu_si128((__m128i *)d, _mm_loadu_si128((const __m128i *)s));
    if (o >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + o - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + o - 8, &b, 8);
    }
    else if (o >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + o - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + o - 4, &b, 4);
    }
    else if (o > 0) {
        uint8_t a = s[0], b = s[o >> 1], c = s[o - 1];
        d[0] = a;
        d[o >> 1] = b;
        d[o - 1] = c;
    }
}

#endif /* UTF8PFX_X86_SHORT_H */
