/*
 * Private to csrc/kernels: lookup tables shared by the SIMD kernels
 * (generated into simd_tables.c by tools/gen_simd_tables.py; see there for
 * what each table means).
 */
#ifndef UTF8PFX_SIMD_TABLES_H
#define UTF8PFX_SIMD_TABLES_H

#include <stdint.h>

#include "../attrs.h"

extern U8P_ALIGN16 const uint8_t u8p_shuf2[256][16];
extern U8P_ALIGN16 const uint8_t u8p_shuf4[256][16];
extern const uint8_t u8p_len4[256];
extern U8P_ALIGN16 const uint8_t u8p_shuf4t[256][16];
extern U8P_ALIGN16 const uint8_t u8p_shuf4n[256][16];
extern const uint8_t u8p_len4n[256];
extern const uint16_t u8p_spread8[256];

#endif /* UTF8PFX_SIMD_TABLES_H */
