/*
 * Private to the decode kernels: one UTF-8 sequence that the scan already
 * validated, decoded to its code point.  Shared by the scalar transcoders
 * and the tails of the SIMD ones.
 */
#ifndef UTF8PFX_DECODE_INL_H
#define UTF8PFX_DECODE_INL_H

#include <stddef.h>
#include <stdint.h>

/* The code point of the valid sequence at s; *len gets its 1..4 bytes. */
static inline uint32_t
u8p_decode_one(const uint8_t *s, size_t *len)
{
    uint32_t c = s[0];
    if (c < 0x80) {
        *len = 1;
        return c;
    }
    if (c < 0xE0) {
        *len = 2;
        return ((c & 0x1F) << 6) | (s[1] & 0x3Fu);
    }
    if (c < 0xF0) {
        *len = 3;
        return ((c & 0x0F) << 12) | ((s[1] & 0x3Fu) << 6) | (s[2] & 0x3Fu);
    }
    *len = 4;
    return ((c & 0x07) << 18) | ((s[1] & 0x3Fu) << 12) | ((s[2] & 0x3Fu) << 6) | (s[3] & 0x3Fu);
}

#endif /* UTF8PFX_DECODE_INL_H */
