/*
 * Length-prefix formats: pure C, header-only, no Python.h.
 *
 * Today: unsigned LEB128 ("VInt": 7 bits a byte, low group first, high bit
 * set on every byte but the last), as Lucene writeVInt/writeVLong and
 * protobuf's varint.  Further formats (zigzag, varint+1, fixed-width) go
 * beside these functions; the encoding kernels never see the prefix.
 */
#ifndef UTF8PFX_PREFIX_H
#define UTF8PFX_PREFIX_H

#include <stddef.h>
#include <stdint.h>

#define U8P_VINT_MAX_BYTES 10

/* Bytes needed for n as a minimal VInt: 1 for n < 2**7, 2 for n < 2**14 ... */
static inline size_t
u8p_vint_size(uint64_t n)
{
    size_t k = 1;
    while (n >= 0x80) {
        n >>= 7;
        k++;
    }
    return k;
}

/* Writes n as a minimal VInt to dst; returns the bytes written. */
static inline size_t
u8p_vint_write(uint8_t *dst, uint64_t n)
{
    size_t k = 0;
    while (n >= 0x80) {
        dst[k++] = (uint8_t)(n | 0x80);
        n >>= 7;
    }
    dst[k++] = (uint8_t)n;
    return k;
}

/*
 * Reads a VInt from [src, src+avail).  Returns the bytes consumed (1..10)
 * and stores the value, or returns 0 if the data ends inside the VInt,
 * -1 if it runs past 10 bytes or exceeds 2**64 - 1.  Non-minimal forms
 * (e.g. 80 00) are accepted; *minimal tells whether the form was minimal.
 */
static inline int
u8p_vint_read(const uint8_t *src, size_t avail, uint64_t *value, int *minimal)
{
    uint64_t v = 0;
    size_t i;
    for (i = 0; i < U8P_VINT_MAX_BYTES; i++) {
        uint8_t b;
        if (i >= avail)
            return 0;
        b = src[i];
        if (i == 9 && b > 1)
            return -1; /* bits beyond 64 */
        v |= (uint64_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            *value = v;
            if (minimal)
                *minimal = (i == 0 || b != 0);
            return (int)(i + 1);
        }
    }
    return -1;
}

#endif /* UTF8PFX_PREFIX_H */
