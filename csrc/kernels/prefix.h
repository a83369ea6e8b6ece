/*
 * Length-prefix formats: pure C, header-only, no Python.h.
 *
 * The base is unsigned LEB128 ("VInt": 7 bits a byte, low group first, high
 * bit set on every byte but the last), as Lucene writeVInt/writeVLong and
 * protobuf's varint.  The wire-format presets (u8p_prefix, below the VInt
 * functions) are a small table over it: size / write / read of a length for
 * each format.  The encoding kernels never see the prefix.
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

/* ---- wire-format presets ------------------------------------------------
 *
 *   U8P_PFX_VARINT   "varint"    unsigned LEB128 of n (Lucene, protobuf, Thrift compact)
 *   U8P_PFX_ZIGZAG   "zigzag"    LEB128 of zigzag(n) = 2n (Avro long); odd = negative
 *   U8P_PFX_VARINT1  "varint+1"  LEB128 of n + 1, 0 = null (Kafka COMPACT_[NULLABLE_]STRING)
 *   U8P_PFX_U16BE    "u16be"     2 bytes big-endian, n <= 65535 (Kafka STRING, writeUTF)
 *   U8P_PFX_I32BE    "i32be"     4 bytes big-endian signed, n <= 2**31-1 (Thrift binary)
 *   U8P_PFX_U32LE    "u32le"     4 bytes little-endian, n <= 2**32-1
 *
 * Glue API (used by the writer, the reader and any other producer/consumer):
 *   u8p_prefix_max(p)          largest length the format can carry
 *   u8p_prefix_size(p, n)      bytes of the prefix of length n (n <= max)
 *   u8p_prefix_write(p, d, n)  writes it, returns the bytes written
 *   u8p_prefix_fixed(p)        the width when it does not depend on n, else 0
 *   u8p_prefix_read(p, s, avail, &rd)  parses one prefix (see u8p_prefix_status)
 *   u8p_prefix_has_null(p), u8p_prefix_write_null(p, d)  the null marker
 */
typedef enum {
    U8P_PFX_VARINT = 0,
    U8P_PFX_ZIGZAG,
    U8P_PFX_VARINT1,
    U8P_PFX_U16BE,
    U8P_PFX_I32BE,
    U8P_PFX_U32LE,
    U8P_PFX_COUNT
} u8p_prefix;

/* Most bytes any prefix takes. */
#define U8P_PREFIX_MAX_BYTES U8P_VINT_MAX_BYTES

typedef enum {
    U8P_PFX_OK = 1,          /* a length: rd->value, rd->size bytes */
    U8P_PFX_NULL = 2,        /* the null marker (varint+1's 0), rd->size bytes */
    U8P_PFX_TRUNCATED = 0,   /* the data ends inside the prefix */
    U8P_PFX_OVERLONG = -1,   /* a varint past 10 bytes or 2**64 - 1 */
    U8P_PFX_NEGATIVE = -2    /* zigzag odd / i32be sign bit: rd->neg_value, rd->size */
} u8p_prefix_status;

typedef struct {
    uint64_t value;    /* the length (OK) */
    int64_t neg_value; /* the negative length (NEGATIVE) */
    int size;          /* bytes the prefix took (OK, NULL, NEGATIVE) */
    int minimal;       /* varint formats: the varint was minimal */
} u8p_prefix_read_t;

static inline uint64_t
u8p_prefix_max(u8p_prefix p)
{
    switch (p) {
    case U8P_PFX_ZIGZAG:
        return (uint64_t)INT64_MAX;
    case U8P_PFX_VARINT1:
        return UINT64_MAX - 1;
    case U8P_PFX_U16BE:
        return 0xFFFFu;
    case U8P_PFX_I32BE:
        return 0x7FFFFFFFu;
    case U8P_PFX_U32LE:
        return 0xFFFFFFFFu;
    default:
        return UINT64_MAX;
    }
}

static inline size_t
u8p_prefix_fixed(u8p_prefix p)
{
    return p == U8P_PFX_U16BE ? 2 : (p == U8P_PFX_I32BE || p == U8P_PFX_U32LE) ? 4 : 0;
}

static inline int
u8p_prefix_has_null(u8p_prefix p)
{
    return p == U8P_PFX_VARINT1;
}

/* The varint a varint-based format puts on the wire for length n. */
static inline uint64_t
u8p_prefix_wire(u8p_prefix p, uint64_t n)
{
    return p == U8P_PFX_ZIGZAG ? n << 1 : p == U8P_PFX_VARINT1 ? n + 1 : n;
}

static inline size_t
u8p_prefix_size(u8p_prefix p, uint64_t n)
{
    size_t f = u8p_prefix_fixed(p);
    return f ? f : u8p_vint_size(u8p_prefix_wire(p, n));
}

static inline size_t
u8p_prefix_write(u8p_prefix p, uint8_t *dst, uint64_t n)
{
    switch (p) {
    case U8P_PFX_U16BE:
        dst[0] = (uint8_t)(n >> 8);
        dst[1] = (uint8_t)n;
        return 2;
    case U8P_PFX_I32BE:
        dst[0] = (uint8_t)(n >> 24);
        dst[1] = (uint8_t)(n >> 16);
        dst[2] = (uint8_t)(n >> 8);
        dst[3] = (uint8_t)n;
        return 4;
    case U8P_PFX_U32LE:
        dst[0] = (uint8_t)n;
        dst[1] = (uint8_t)(n >> 8);
        dst[2] = (uint8_t)(n >> 16);
        dst[3] = (uint8_t)(n >> 24);
        return 4;
    default:
        return u8p_vint_write(dst, u8p_prefix_wire(p, n));
    }
}

/* varint+1's null marker: one 0 byte.  Returns the bytes written. */
static inline size_t
u8p_prefix_write_null(u8p_prefix p, uint8_t *dst)
{
    (void)p;
    dst[0] = 0;
    return 1;
}

static inline u8p_prefix_status
u8p_prefix_read(u8p_prefix p, const uint8_t *src, size_t avail, u8p_prefix_read_t *rd)
{
    uint64_t v = 0;
    int k;
    rd->minimal = 1;
    switch (p) {
    case U8P_PFX_U16BE:
        if (avail < 2)
            return U8P_PFX_TRUNCATED;
        rd->value = ((uint64_t)src[0] << 8) | src[1];
        rd->size = 2;
        return U8P_PFX_OK;
    case U8P_PFX_I32BE:
        if (avail < 4)
            return U8P_PFX_TRUNCATED;
        v = ((uint64_t)src[0] << 24) | ((uint64_t)src[1] << 16) | ((uint64_t)src[2] << 8) |
            src[3];
        rd->size = 4;
        if (v & 0x80000000u) {
            rd->neg_value = (int64_t)v - ((int64_t)1 << 32);
            return U8P_PFX_NEGATIVE;
        }
        rd->value = v;
        return U8P_PFX_OK;
    case U8P_PFX_U32LE:
        if (avail < 4)
            return U8P_PFX_TRUNCATED;
        rd->value = (uint64_t)src[0] | ((uint64_t)src[1] << 8) | ((uint64_t)src[2] << 16) |
                    ((uint64_t)src[3] << 24);
        rd->size = 4;
        return U8P_PFX_OK;
    default:
        break;
    }
    if (avail > 0 && src[0] < 0x80) { /* one-byte varint */
        v = src[0];
        k = 1;
    }
    else {
        k = u8p_vint_read(src, avail, &v, &rd->minimal);
        if (k <= 0)
            return k == 0 ? U8P_PFX_TRUNCATED : U8P_PFX_OVERLONG;
    }
    rd->size = k;
    if (p == U8P_PFX_ZIGZAG) {
        if (v & 1) {
            rd->neg_value = -(int64_t)(v >> 1) - 1;
            return U8P_PFX_NEGATIVE;
        }
        v >>= 1;
    }
    else if (p == U8P_PFX_VARINT1) {
        if (v == 0)
            return U8P_PFX_NULL;
        v -= 1;
    }
    rd->value = v;
    return U8P_PFX_OK;
}

#endif /* UTF8PFX_PREFIX_H */
