/*
 * Portable scalar kernels: the reference every SIMD kernel is tested
 * against.  The code lives in scalar_inl.h so SIMD tails share it.
 */
#include "../kernels.h"
#include "scalar_inl.h"

const u8p_kernels u8p_kernels_scalar = {
    "scalar",
    u8p_scalar_len_ucs1,
    u8p_scalar_len_ucs2,
    u8p_scalar_len_ucs4,
    u8p_scalar_enc_ucs1,
    u8p_scalar_enc_ucs2,
    u8p_scalar_enc_ucs4,
    u8p_scalar_enc_ucs2_pass,
    u8p_scalar_enc_ucs4_pass,
    u8p_scalar_enc_ucs1, /* the room forms: the room is not used */
    u8p_scalar_enc_ucs2,
    u8p_scalar_enc_ucs4,
};
