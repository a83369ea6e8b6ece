/*
 * The x86 length and encode kernels, written once for 128- and 256-bit
 * vectors; included by x86_enc.c once per width (no include guard, on
 * purpose; it undefines its parameters at the end).  x86_enc.c's header
 * comment describes the scheme.  The includer defines:
 *
 *   U8P_VP          the width's operation prefix (x86_vec.h)
 *   U8P_EN          the prefix of the functions made here
 *   U8P_ET          their target attribute; EN_INL the same plus
 *                   always_inline (block steps: gcc would otherwise call
 *                   the bigger ones out of line)
 *                   (the length and encode kernels are external:
 *                   x86_avx512.c uses AVX2's)
 *   ENC_MIN_UCS4    below this many units enc_ucs4 hands the whole input to
 *                   the scalar loop
 *   ENC_TABLE, ENC_NAME  the u8p_kernels table made of them, its name
 *
 * Vocabulary: a vector holds UPV UCS2 units (16-bit lanes) or QPV UCS4
 * units; blocks are 16 units at every width (SSE: 2 vectors of UCS2,
 * 4 of UCS4; AVX2: 1 and 2), the unit of the surrogate look-ahead.
 * Every store is 16 bytes wide (one 128-bit lane of output at a time) and
 * may run past the block's own bytes: a block is only encoded when enough
 * surrogate-free units follow it that the extra bytes still fall inside
 * dst's exact length (every unit encodes to at least one byte).
 */
#define EN(x) U8P_CAT(U8P_EN, x)
/* block steps: gcc would otherwise call the bigger ones out of line */
#define EN_INL U8P_ET U8P_ALWAYS_INLINE
#define UPV (VW / 2)
#define QPV (VW / 4)
#define NLANE (VW / 16)

/* Units needed surrogate-free from a block's start: its last 16-byte store
 * starts at most at unit 12's bytes. */
#define ENC_NEED 28
/* Shorter tails than this are left to the scalar loops. */
#define ENC_TAIL_MIN 4
/* From this many Latin-1 bytes on, a tail goes through short_ucs1. */
#define ENC_UCS1_SHORT 8
/* From this many Latin-1 bytes on, the loads are aligned first (ucs1):
 * below, the extra step for the head costs more than the aligned loads
 * save. */
#define ENC_UCS1_ALIGN_MIN (32 * VW)

/* ---------------------------------------------------------------- lengths */

U8P_ET size_t
EN(len_ucs1)(const uint8_t *src, size_t n)
{
    size_t i = 0, high = 0;
    int j;
    /* n + the bytes >= 0x80 (negative as signed bytes).  From a kilobyte
     * on, a compare with zero and a subtract a vector count them in byte
     * counters: fewer uops than a movemask and a popcount (the movemask is
     * slow where 256-bit operations are split in two), but the final sum
     * costs more than shorter inputs save.  Four counters hide the
     * subtract's latency; their sum is taken every 63 steps, so that it
     * (at most 4 * 63) fits a byte. */
    if (n >= 1024) {
        const vec zero = vzero();
        while (i + 4 * VW <= n) {
            size_t steps = (n - i) / (4 * VW), b;
            vec a0 = zero, a1 = zero, a2 = zero, a3 = zero;
            if (steps > 63)
                steps = 63;
            for (b = 0; b < steps; b++, i += 4 * VW) {
                a0 = vsub8(a0, vcmpgt8(zero, vld(src + i)));
                a1 = vsub8(a1, vcmpgt8(zero, vld(src + i + VW)));
                a2 = vsub8(a2, vcmpgt8(zero, vld(src + i + 2 * VW)));
                a3 = vsub8(a3, vcmpgt8(zero, vld(src + i + 3 * VW)));
            }
            high += vhsum8(vadd8(vadd8(a0, a1), vadd8(a2, a3)));
        }
    }
    for (; i + 64 <= n; i += 64) {
        uint64_t m = 0;
        for (j = 0; j < 64; j += VW)
            m |= vmhigh(vld(src + i + j)) << j;
        high += (size_t)__builtin_popcountll(m);
    }
    for (; i + VW <= n; i += VW)
        high += (size_t)__builtin_popcountll(vmhigh(vld(src + i)));
    return i + high + u8p_scalar_len_ucs1(src + i, n - i);
}

/* One 128-bit step of len2_rest: 8 units, of which the lanes whose bytes
 * are set in `bits` (the movemask's two bits a lane) count. */
EN_INL void
EN(len2_step)(__m128i x, unsigned bits, size_t *extra, size_t *surr)
{
    const __m128i zero = _mm_setzero_si128(), h11 = _mm_srli_epi16(x, 11);
    const unsigned lt80 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_srli_epi16(x, 7), zero));
    const unsigned lt800 = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi16(h11, zero));
    const unsigned sur = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi16(h11, _mm_set1_epi16(0x1B)));
    *extra += (size_t)(__builtin_popcount(~lt80 & bits) + __builtin_popcount(~lt800 & bits)) / 2;
    *surr += (size_t)__builtin_popcount(sur & bits) / 2;
}

/* The bytes of units i..n (fewer than a loop step's) in steps of 8 units,
 * the last one loaded from n - 8 with the lanes before i left out: a
 * short str (a name) is one or two steps, where a scalar loop over its
 * units took longer than the encoder that follows.  A str under 8 units
 * takes the scalar loop. */
EN_INL size_t
EN(len2_rest)(const uint16_t *src, size_t i, size_t n, size_t *nsurr)
{
    size_t extra = 0, surr = 0;
    const size_t i0 = i;
    if (n < 8 || i == n)
        return u8p_scalar_len_ucs2(src + i, n - i, nsurr);
    for (; n - i > 8; i += 8)
        EN(len2_step)(_mm_loadu_si128((const __m128i *)(src + i)), 0xFFFFu, &extra, &surr);
    EN(len2_step)(_mm_loadu_si128((const __m128i *)(src + n - 8)),
                  0xFFFFu << (2 * (8 - (n - i))) & 0xFFFFu, &extra, &surr);
    *nsurr = surr;
    return (n - i0) + extra;
}

U8P_ET size_t
EN(len_ucs2)(const uint16_t *src, size_t n, size_t *nsurr)
{
    const vec one = vset8(1), surr_top = vset8(0x1B), ff = vset16(0xFF), zero = vzero();
    size_t i = 0, extra = 0, surr = 0, tsurr, tlen;
    /* A unit takes 1 + (c >= 0x80) + (c >= 0x800) bytes.  Two vectors of
     * units at a time are packed to bytes with unsigned saturation, twice:
     * min(c, 0xFF), negative as a signed byte exactly when c >= 0x80, and
     * c >> 11, whose min(x, 1) is the second threshold and which is 0x1B
     * for a surrogate: a third fewer operations than compares on 16-bit
     * lanes.  The first threshold takes a min rather than a shift: cores
     * that split 256-bit operations in two and issue vector shifts on one
     * port are bound by the shifts otherwise.  The byte counters grow by at
     * most 2 a step: flush every 127 steps. */
    while (i + 2 * UPV <= n) {
        size_t steps = (n - i) / (2 * UPV), b;
        vec acc = zero, accs = zero;
        if (steps > 127)
            steps = 127;
        for (b = 0; b < steps; b++, i += 2 * UPV) {
            vec x = vld(src + i), y = vld(src + i + UPV);
            vec l8 = vpackus16(vmin16u(x, ff), vmin16u(y, ff));
            vec h11 = vpackus16(vsrl16(x, 11), vsrl16(y, 11));
            acc = vsub8(vadd8(acc, vmin8u(h11, one)), vcmpgt8(zero, l8));
            accs = vsub8(accs, vcmpeq8(h11, surr_top));
        }
        extra += vhsum8(acc);
        surr += vhsum8(accs);
    }
    tlen = EN(len2_rest)(src, i, n, &tsurr);
    *nsurr = surr + tsurr;
    return i + extra + tlen;
}

U8P_ET size_t
EN(len_ucs4)(const uint32_t *src, size_t n, size_t *nsurr)
{
    const vec zero = vzero();
    size_t i = 0, i0, lt = 0, astral = 0, surr = 0, tsurr = 0, tlen = 0;
    /* UPV units a step, narrowed to 16 bits by the saturating pack (which
     * sends astral code points to 0xFFFF: neither "< 0x80", "< 0x800" nor
     * a surrogate, as wanted).  A unit takes 3 - lt + astral bytes, lt the
     * thresholds 0x80, 0x800 it is under.  Flush every 8192 steps. */
    while (i + UPV <= n) {
        size_t blocks = (n - i) / UPV, b;
        vec acc = zero, accs = zero, acca = zero;
        if (blocks > 8192)
            blocks = 8192;
        for (b = 0; b < blocks; b++, i += UPV) {
            vec x = vld(src + i), y = vld(src + i + QPV);
            vec p = vpackus32(x, y), hi = vand(p, vk(HF800));
            acca = vsub32(acca, vcmpgt32(x, vk(WFFFF)));
            acca = vsub32(acca, vcmpgt32(y, vk(WFFFF)));
            acc = vsub16(acc, vcmpeq16(vand(p, vk(HFF80)), zero));
            acc = vsub16(acc, vcmpeq16(hi, zero));
            accs = vsub16(accs, vcmpeq16(hi, vk(HD800)));
        }
        lt += vhsum16(acc);
        surr += vhsum16(accs);
        astral += vhsum32(acca);
    }
    i0 = i;
    /* the last units, a vector at a time through zero-padded loads
     * (padding lanes are 0: no threshold, no surrogate); 4 mask bits a lane */
    for (; i < n; i += QPV) {
        size_t r = n - i < QPV ? n - i : QPV;
        vec x = vldpart((const uint8_t *)(src + i), 4 * r);
        tlen += r + (size_t)(__builtin_popcountll(vmhigh(vcmpgt32(x, vk(W7F))))
                             + __builtin_popcountll(vmhigh(vcmpgt32(x, vk(W7FF))))
                             + __builtin_popcountll(vmhigh(vcmpgt32(x, vk(WFFFF)))))
                            / 4;
        tsurr += (size_t)__builtin_popcountll(
                     vmhigh(vcmpeq32(vand(x, vk(WNOT7FF)), vk(WD800))))
                 / 4;
    }
    *nsurr = surr + tsurr;
    return 3 * i0 - lt + astral + tlen;
}

/* ------------------------------------------------------------ block steps */

/* 128-bit lane j of v shuffled by the 16-byte table row at row: each
 * lane with its own row, at 128 bits, rather than one 256-bit shuffle by
 * two rows joined into a vector (the join costs more than the second
 * shuffle where 256-bit operations are split in two) */
#define LANE_ROW(v, j, row) \
    _mm_shuffle_epi8(vlane((v), (j)), _mm_load_si128((const __m128i *)(const void *)(row)))
#define ENC_AT1(p) (8 * (p) + (size_t)__builtin_popcountll(m & (((uint64_t)1 << (8 * (p))) - 1)))

/* VW Latin-1 bytes, m their high-bit mask -> VW..2VW bytes.  A byte
 * >= 0x80 becomes [0xC2 + (c >= 0xC0), c & 0xBF]; every byte is paired
 * with its would-be trail in a 16-bit lane and u8p_shuf2 drops the trail of
 * ASCII bytes.  Stores 16 bytes at the start of every 8 units' bytes. */
EN_INL size_t
EN(enc1)(vec v, uint64_t m, uint8_t *d)
{
    /* signed: c >= 0xC0 is > -65; ASCII too, but the blend keeps it */
    vec lead = vsub8(vk(BC2), vcmpgt8(v, vk(BBF)));
    vec first = vblend(v, lead, v); /* high bit of v selects */
    vec trail = vand(v, vk(BBF));
    /* per 128-bit lane: unpacklo = its bytes 0..7, unpackhi = 8..15 */
    vec a = vunpacklo8(first, trail), b = vunpackhi8(first, trail);
    int j;
    /* rows joined into one 256-bit shuffle: here, unlike in the other steps,
     * a shuffle per 128-bit lane (LANE_ROW) makes the step no faster */
    a = vshuf8(a, vrows(u8p_shuf2[m & 0xFF], u8p_shuf2[(m >> 16) & 0xFF]));
    b = vshuf8(b, vrows(u8p_shuf2[(m >> 8) & 0xFF], u8p_shuf2[(m >> 24) & 0xFF]));
    /* piece p (8 units) starts at 8p + the high bits before it */
    for (j = 0; j < NLANE; j++) {
        _mm_storeu_si128((__m128i *)(d + ENC_AT1(2 * j)), vlane(a, j));
        _mm_storeu_si128((__m128i *)(d + ENC_AT1(2 * j + 1)), vlane(b, j));
    }
    return VW + (size_t)__builtin_popcountll(m);
}

/* UPV code points < 0x800 in 16-bit lanes -> UPV..2UPV bytes; stores 16
 * bytes at the start of every 8 units' bytes. */
EN_INL size_t
EN(enc2)(vec v, uint8_t *d)
{
    /* [0xC0 | c >> 6, 0x80 | (c & 0x3F)] as a little-endian 16-bit lane */
    vec two = vor(vor(vsrl16(v, 6), vsll16(vand(v, vk(H003F)), 8)), vk(H80C0));
    vec big = vcmpgt16(v, vk(H007F));
    /* bits 16j .. 16j+7: the units of 128-bit lane j */
    uint64_t m = vmhigh(vpacks16(big, vzero()));
    vec w = vblend(v, two, big);
    size_t n0 = 8 + (size_t)__builtin_popcountll(m & 0xFF);
    _mm_storeu_si128((__m128i *)d, LANE_ROW(w, 0, u8p_shuf2[m & 0xFF]));
    if (NLANE > 1)
        _mm_storeu_si128((__m128i *)(d + n0), LANE_ROW(w, 1, u8p_shuf2[(m >> 16) & 0xFF]));
    return UPV + (size_t)__builtin_popcountll(m);
}

/* UPV code points < 0x10000 (no surrogates) in 16-bit lanes -> UPV..3UPV
 * bytes.  Each code point's bytes are built in a 32-bit lane from two
 * 16-bit halves, lo = [c & 0x7F, b3] (the ASCII byte; the last byte of a
 * longer sequence) and hi = [b1, b2] (the lead of a 3-byte sequence, the
 * byte before the last), so the arithmetic runs on UPV units a vector;
 * unpacking lo/hi gives the lanes [a, b3, b1, b2], whose bytes
 * u8p_shuf4t picks in order (a; b2 b3; b1 b2 b3).  lo is the low byte of
 * c in both halves, masked; hi takes bits 6..11 and 12..15 of c into its
 * two bytes with one multiply-add, then the markers.  Stores 16 bytes at
 * the start of every 4 units' bytes.
 *
 * One movemask gives every row index: in each 16-bit lane the sign bit of
 * the low byte is ">= 0x80", of the high byte ">= 0x800", so the mask
 * holds, per unit, the two bits u8p_shuf4t is indexed by, and the bytes of
 * any run of units are their count plus the popcount of their bits: no
 * length table, and nothing but the 4 row loads goes through memory. */
EN_INL size_t
EN(enc3)(vec v, uint8_t *d)
{
    /* c + 0x7800, saturated: bit 15 is c >= 0x800 */
    vec ge800 = vaddus16(v, vk(H7800));
    /* [c & 0x7F, 0x80 | (c & 0x3F)] */
    vec lo = vor(vand(vshuf8(v, vk(DUPLO)), vk(H3F7F)), vk(H8000));
    /* (c >> 4) & 0x0FFC holds bits 6..11 of c in bits 2..7 and 12..15 in
     * bits 8..11: times 0x40 and 1 they give [c >> 12, (c >> 6) & 0x3F];
     * then 0xE0 on b1, and on b2 0xC0 (a 2-byte lead: c >> 6 is below
     * 0x20 there) made 0x80 from c >= 0x800 on */
    vec hi = vmaddubs(vand(vsrl16(v, 4), vk(H0FFC)), vk(H0140));
    vec a, b;
    /* 2 bits a unit, units in order: the sign bits of the low byte, set
     * from c >= 0x80 on (min(c, 0x80), ORed with ge800, whose low byte is
     * c's own, below 0x80 when c is), and of the high byte, c >= 0x800 */
    uint64_t m = vmhigh(vor(vmin16u(v, vk(H0080)), ge800));
    size_t n0, n1, n2;
    hi = vxor(vor(hi, vk(HC0E0)), vand(vsrl16(ge800, 1), vk(H4000)));
    /* per 128-bit lane: unpacklo = its units 0..3, unpackhi = 4..7 */
    a = vunpacklo16(lo, hi);
    b = vunpackhi16(lo, hi);
    n0 = 4 + (size_t)__builtin_popcountll(m & 0xFF);
    _mm_storeu_si128((__m128i *)d, LANE_ROW(a, 0, u8p_shuf4t[m & 0xFF]));
    _mm_storeu_si128((__m128i *)(d + n0), LANE_ROW(b, 0, u8p_shuf4t[(m >> 8) & 0xFF]));
    if (NLANE == 1)
        return 8 + (size_t)__builtin_popcountll(m & 0xFFFF);
    n1 = 8 + (size_t)__builtin_popcountll(m & 0xFFFF);
    n2 = 12 + (size_t)__builtin_popcountll(m & 0xFFFFFF);
    _mm_storeu_si128((__m128i *)(d + n1), LANE_ROW(a, 1, u8p_shuf4t[(m >> 16) & 0xFF]));
    _mm_storeu_si128((__m128i *)(d + n2), LANE_ROW(b, 1, u8p_shuf4t[(m >> 24) & 0xFF]));
    return 16 + (size_t)__builtin_popcountll(m & 0xFFFFFFFF);
}

/* The UTF-8 of QPV code points (no surrogates, <= 0x10FFFF), one per
 * 32-bit lane, and in *ab the masks that pick their u8p_shuf4n row.
 *
 * Lane layout shared by every 3-/4-byte path (and the AVX-512 and NEON
 * files): a sequence of 1 + k bytes sits right-aligned in its lane, lead in
 * byte 3 - k, last byte in byte 3; u8p_shuf4 is indexed by the four k
 * (2 bits each) and picks exactly those bytes, lane after lane.  u8p_shuf4n
 * holds the same rows under an index that compares give directly:
 * a = ge80 ^ ge10000 and b = ge800 per lane, packed here to 16-bit lanes
 * [a0..a3, b0..b3] per 128-bit lane; packs_epi16 of two of them and a
 * movemask make two indices at once. */
EN_INL vec
EN(utf8_lanes)(vec c, vec *ab)
{
    vec ge80 = vcmpgt32(c, vk(W7F));
    vec ge800 = vcmpgt32(c, vk(W7FF));
    vec ge10000 = vcmpgt32(c, vk(WFFFF));
    /* The four 6-bit groups of c, highest in byte 0 and lowest in byte 3.
     * Read as a big-endian 24-bit number [c2, c1, c0] this is splitting 3
     * bytes into 4 sextets: shuffle each lane to [c1, c2, c0, c1], then
     * per 16-bit half one multiply-high moves a sextet down and one
     * multiply-low moves the other up. */
    vec in = vshuf8(c, vk(SEXT_SHUF));
    vec s = vor(vmulhi16u(vand(in, vk(W0FC0FC00)), vk(W04000040)),
                vmullo16(vand(in, vk(W003F03F0)), vk(W01000010)));
    *ab = vpacks32(vxor(ge80, ge10000), ge800);
    /* ASCII keeps all 7 bits in byte 3 */
    return vblend(vsll32(c, 24), vor(s, vmarks(ge80, ge800, ge10000)), ge80);
}

/* UPV code points (no surrogates, <= 0x10FFFF) in a, b -> UPV..4UPV bytes,
 * one movemask for every table row.  Stores 16 bytes at the start of
 * every 4 units' bytes. */
EN_INL size_t
EN(enc4)(vec a, vec b, uint8_t *d)
{
    vec aba, abb;
    vec sa = EN(utf8_lanes)(a, &aba), sb = EN(utf8_lanes)(b, &abb);
    /* per 128-bit lane j: byte 2j the row of a's units, 2j+1 of b's */
    uint64_t m = vmhigh(vpacks16(aba, abb));
    unsigned x0 = (unsigned)m & 0xFF, x1 = (unsigned)(m >> 8) & 0xFF;
    unsigned x2 = (unsigned)(m >> 16) & 0xFF, x3 = (unsigned)(m >> 24) & 0xFF;
    size_t n0 = u8p_len4n[x0], n1, n2;
    _mm_storeu_si128((__m128i *)d, LANE_ROW(sa, 0, u8p_shuf4n[x0]));
    if (NLANE == 1) {
        _mm_storeu_si128((__m128i *)(d + n0), LANE_ROW(sb, 0, u8p_shuf4n[x1]));
        return n0 + u8p_len4n[x1];
    }
    n1 = n0 + u8p_len4n[x2];
    n2 = n1 + u8p_len4n[x1];
    _mm_storeu_si128((__m128i *)(d + n0), LANE_ROW(sa, 1, u8p_shuf4n[x2]));
    _mm_storeu_si128((__m128i *)(d + n1), LANE_ROW(sb, 0, u8p_shuf4n[x1]));
    _mm_storeu_si128((__m128i *)(d + n2), LANE_ROW(sb, 1, u8p_shuf4n[x3]));
    return n2 + u8p_len4n[x3];
}

/* surrogate lanes of v (16- or 32-bit) */
#define SURR16(v) vcmpeq16(vand((v), vk(HF800)), vk(HD800))
#define SURR32(v) vcmpeq32(vand((v), vk(WNOT7FF)), vk(WD800))

/* UPV code points < 0x10000 in the 16-bit lanes of w16 -> their UTF-8 at
 * d (a surrogate in its 3-byte form).  The branches test probe (w16
 * itself, or the UCS4 vectors it was narrowed from, against the same
 * thresholds in 32-bit lanes), which is ready before the narrowing: mixed
 * text mispredicts these branches, and the earlier they resolve the less
 * that costs.  With note, the surrogate lanes are ORed into *s (the pass
 * forms): only a vector that takes the 3-byte step can hold one, so ASCII
 * and 2-byte text (most of Latin, Cyrillic, Greek) pays nothing for it. */
EN_INL size_t
EN(ladder)(vec w16, vec probe, vec not7f, vec not7ff, uint8_t *d, vec *s, int note)
{
    if (vtestz(probe, not7f)) {
        vsthalf(d, vnarrow16(w16));
        return UPV;
    }
    if (vtestz(probe, not7ff))
        return EN(enc2)(w16, d);
    if (note)
        *s = vor(*s, SURR16(w16));
    return EN(enc3)(w16, d);
}

/* UPV surrogate-free UCS2 units -> their UTF-8 at d */
EN_INL size_t
EN(ucs2v)(vec v, uint8_t *d)
{
    return EN(ladder)(v, v, vk(HFF80), vk(HF800), d, NULL, 0);
}

/* UPV surrogate-free UCS4 units in a, b below U+10000 -> their UTF-8 at d
 * (narrowed: values < 0x10000 survive the saturating pack) */
EN_INL size_t
EN(ucs4bmp)(vec a, vec b, uint8_t *d)
{
    return EN(ladder)(vpack32to16(a, b), vor(a, b), vk(WNOT7F), vk(WNOT7FF), d, NULL, 0);
}

/* UPV surrogate-free UCS4 units in a, b -> their UTF-8 at d */
EN_INL size_t
EN(ucs4v)(vec a, vec b, uint8_t *d)
{
    if (vtestz(vor(a, b), vk(WNOTFFFF)))
        return EN(ucs4bmp)(a, b, d);
    return EN(enc4)(a, b, d);
}

/* A 16-unit block of surrogate-free code units at p -> UTF-8 at d. */
EN_INL size_t
EN(ucs2x16)(const uint16_t *p, uint8_t *d)
{
    size_t o = 0;
    int j;
    for (j = 0; j < 16; j += UPV)
        o += EN(ucs2v)(vld(p + j), d + o);
    return o;
}

/* A 16-unit block of surrogate-free UCS4 units in v (QPV a vector) ->
 * UTF-8 at d. */
EN_INL size_t
EN(ucs4x16)(const vec *v, uint8_t *d)
{
    vec any = vzero();
    size_t o = 0;
    int j;
    for (j = 0; j < 16 / QPV; j++)
        any = vor(any, v[j]);
    if (!vtestz(any, vk(WNOTFFFF))) {
        /* astral code points about: the general step, one predictable
         * branch instead of the ladder's */
        for (j = 0; j < 16 / QPV; j += 2)
            o += EN(enc4)(v[j], v[j + 1], d + o);
        return o;
    }
    for (j = 0; j < 16 / QPV; j += 2)
        o += EN(ucs4bmp)(v[j], v[j + 1], d + o);
    return o;
}

EN_INL size_t
EN(ucs4x16p)(const uint32_t *p, uint8_t *d)
{
    vec v[16 / QPV];
    int j;
    for (j = 0; j < 16 / QPV; j++)
        v[j] = vld(p + j * QPV);
    return EN(ucs4x16)(v, d);
}


/* the 16 UCS2 (ucs4 = 0) or UCS4 units at p into v; whether any is a
 * surrogate */
EN_INL int
EN(ld_surr)(const void *p, vec *v, int ucs4)
{
    vec s = vzero();
    int j;
    for (j = 0; j < (ucs4 ? 16 / QPV : 16 / UPV); j++) {
        v[j] = vld((const uint8_t *)p + j * VW);
        s = vor(s, ucs4 ? SURR32(v[j]) : SURR16(v[j]));
    }
    return !vtestz(s, s);
}

/* first surrogate in src[i, end) (UCS2 or UCS4 units), or end */
EN_INL size_t
EN(scan_surr)(const void *src, size_t i, size_t end, int ucs4)
{
    const size_t per = ucs4 ? QPV : UPV;
    for (; i + per <= end; i += per) {
        const uint8_t *p = (const uint8_t *)src + i * (ucs4 ? 4 : 2);
        uint64_t m = vmhigh(ucs4 ? SURR32(vld(p)) : SURR16(vld(p)));
        if (m)
            return i + (size_t)__builtin_ctzll(m) / (ucs4 ? 4 : 2);
    }
    for (; i < end; i++) {
        if (U8P_IS_SURROGATE(ucs4 ? ((const uint32_t *)src)[i] : ((const uint16_t *)src)[i]))
            return i;
    }
    return end;
}

U8P_ET static size_t
EN(scan_surr16)(const uint16_t *src, size_t i, size_t end)
{
    return EN(scan_surr)(src, i, end, 0);
}

U8P_ET static size_t
EN(scan_surr32)(const uint32_t *src, size_t i, size_t end)
{
    return EN(scan_surr)(src, i, end, 1);
}

/* --------------------------------------------------------------- encoders */

/* The blocks of src from i on, each once ENC_NEED surrogate-free units are
 * known to follow its start: the scan looks ahead a chunk at a time.  Ends
 * with [i, lim) surrogate-free and shorter than ENC_NEED, and lim at n or
 * (stopped) at a surrogate. */
#define ENC_SCAN_LOOP(scan, block)                                            \
    for (lim = i;;) {                                                         \
        if (i + ENC_NEED > lim) {                                             \
            size_t to_;                                                       \
            if (stopped || lim == n)                                          \
                break;                                                        \
            to_ = n - lim > U8P_SURR_SCAN_CHUNK ? lim + U8P_SURR_SCAN_CHUNK : n; \
            lim = scan(src, lim, to_);                                        \
            stopped = lim < to_;                                              \
            continue;                                                         \
        }                                                                     \
        d += block(src + i, d);                                               \
        i += 16;                                                              \
    }

/* ENC_UCS1_SHORT <= r < VW + 8 Latin-1 bytes -> their UTF-8 at d:
 * encoded from zero-padded loads (a 0 encodes as one byte, at the end),
 * no per-byte branch.  With room (enc_ucs1_room: d has 2r +
 * U8P_ENC_ROOM bytes) the steps store straight into d; their last stores
 * run past the exact length by less than that (the padding's bytes and a
 * 16-byte store's slack: at most 40 + r bytes from one vector, 72 + r from
 * two, against 2r + U8P_ENC_ROOM for r >= 8).  Without room, into a
 * buffer, the real bytes copied out: that copy loads bytes which several
 * stores just wrote, a load the CPU cannot forward from them, so it waits
 * for them to reach the cache; on short strs that wait costs as much as
 * the encoding. */
EN_INL size_t
EN(short_ucs1)(const uint8_t *src, size_t r, uint8_t *d, int room)
{
    uint8_t buf[4 * VW + 16];
    uint8_t *const b = room ? d : buf;
    size_t o;
    vec v = vldpart(src, r > VW ? VW : r);
    o = EN(enc1)(v, vmhigh(v), b);
    if (r > VW) {
        v = vldpart(src + VW, r - VW);
        o += EN(enc1)(v, vmhigh(v), b + o) - (2 * VW - r);
    }
    else {
        o -= VW - r;
    }
    if (!room)
        u8p_copy_short(d, buf, o);
    return o;
}

EN_INL size_t
EN(ucs1)(const uint8_t *src, size_t n, uint8_t *dst, int room)
{
    uint8_t *d = dst;
    size_t i = 0;
    /* A load that spans two cache lines costs two, and a str's data starts
     * 8 mod 16 (after CPython's header): unaligned, every other 32-byte
     * load of a long str spans two lines.  So a long input first takes the
     * bytes up to the next VW boundary; every step after moves by VW and
     * stays aligned.  The head is one step over the first VW bytes, of
     * which only the first a count: its output is their UTF-8 followed by
     * that of the rest, which the next steps write over (all of it inside
     * the output, which has at least n bytes). */
    if (n >= ENC_UCS1_ALIGN_MIN) {
        size_t a = (size_t)(-(uintptr_t)src & (VW - 1));
        if (a) {
            vec v = vld(src);
            uint64_t m = vmhigh(v);
            if (!m)
                vst(d, v);
            else
                EN(enc1)(v, m, d);
            d += a + (size_t)__builtin_popcountll(m & (((uint64_t)1 << a) - 1));
            i = a;
        }
    }
    while (i + VW <= n) {
        vec v = vld(src + i);
        uint64_t m = vmhigh(v);
        if (!m) {
            vst(d, v);
            d += VW;
            i += VW;
            continue;
        }
        /* the last 16-byte store starts at unit i + VW - 8 */
        if (i + VW + 8 > n)
            break;
        d += EN(enc1)(v, m, d);
        i += VW;
    }
    /* the last n - i < VW + 8 bytes */
    if (n - i >= ENC_UCS1_SHORT)
        return (size_t)(d - dst) + EN(short_ucs1)(src + i, n - i, d, room);
    return (size_t)(d - dst) + u8p_enc_ucs1_nobranch(src + i, n - i, d);
}

U8P_ET size_t
EN(enc_ucs1)(const uint8_t *src, size_t n, uint8_t *dst)
{
    return EN(ucs1)(src, n, dst, 0);
}

U8P_ET size_t
EN(enc_ucs1_room)(const uint8_t *src, size_t n, uint8_t *dst)
{
    return EN(ucs1)(src, n, dst, 1);
}

/* 1 <= n < ENC_NEED UCS2 (ucs4 = 0) or UCS4 units, a whole input or the
 * surrogate-free tail of one: loaded zero-padded (no memcpy to a buffer:
 * its small stores would stall the vector loads); with check, the first
 * surrogate found with one compare a vector and the units from it on
 * zeroed; every vector encoded (a 0 encodes as one byte), and the bytes of
 * src[0, k) kept; k in *done.  With room (the room forms: dst has 3n or
 * 4n + U8P_ENC_ROOM bytes) the steps store straight into dst: past the
 * exact length they reach by the padding's bytes (under 16) and one
 * 16-byte store.  Without, into a buffer whose bytes are copied out (a
 * copy that waits for the steps' stores to reach the cache: see
 * short_ucs1).  UCS4 with check takes the general 4-byte step (a whole
 * UCS4 input has an astral code point somewhere: no ladder of
 * mispredicted branches), a UCS4 tail the ladder. */
EN_INL size_t
EN(part)(const void *src, size_t n, uint8_t *dst, size_t *done, int ucs4, int check, int room)
{
    const size_t per = ucs4 ? QPV : UPV, usz = ucs4 ? 4 : 2, nvec = 32 / per;
    const uint8_t *p = (const uint8_t *)src;
    size_t nb = usz * n, k = n, o = 0, j;
    uint8_t stack[4 * 32 + 16];
    uint8_t *const buf = room ? dst : stack;
    vec v[32 / QPV];
    for (j = 0; j < nvec; j++) {
        size_t at = j * VW;
        v[j] = nb > at ? vldpart(p + at, nb - at < VW ? nb - at : VW) : vzero();
    }
    if (check) {
        /* padding lanes are 0, never a surrogate */
        for (j = 0; j < nvec && k == n; j++) {
            uint64_t m = vmhigh(ucs4 ? SURR32(v[j]) : SURR16(v[j])); /* usz bits a unit */
            if (m)
                k = j * per + (size_t)__builtin_ctzll(m) / usz;
        }
        for (j = 0; k < n && j < nvec; j++) {
            long lim = (long)k - (long)(j * per);
            vec l = ucs4 ? vset32(lim < 0 ? 0 : lim) : vset16(lim < 0 ? 0 : lim);
            v[j] = vand(v[j], ucs4 ? vcmpgt32(l, vk(IOTA32)) : vcmpgt16(l, vk(IOTA16)));
        }
    }
    for (j = 0; j * UPV < n; j++)
        o += !ucs4  ? EN(ucs2v)(v[j], buf + o)
             : check ? EN(enc4)(v[2 * j], v[2 * j + 1], buf + o)
                     : EN(ucs4v)(v[2 * j], v[2 * j + 1], buf + o);
    o -= j * UPV - k;
    if (!room)
        u8p_copy_short(dst, buf, o);
    *done = k;
    return o;
}

EN_INL size_t
EN(ucs2)(const uint16_t *src, size_t n, uint8_t *dst, size_t *done, int room)
{
    uint8_t *d = dst;
    size_t i = 0, lim, k, w;
    int stopped = 0, j; /* stopped: lim is a surrogate's index */
    if (n < ENC_NEED)
        return n < U8P_X86_MIN_UNITS_UCS2 ? u8p_scalar_enc_ucs2(src, n, dst, done)
                                          : EN(part)(src, n, dst, done, 0, 1, room);
    /* Main loop: block i is encoded once the next 16 units are known
     * surrogate-free, which keeps its stores inside dst; no scan. */
    if (n >= 32) {
        vec v[16 / UPV], nv[16 / UPV];
        if (!EN(ld_surr)(src, v, 0)) {
            while (i + 32 <= n && !EN(ld_surr)(src + i + 16, nv, 0)) {
                for (j = 0; j < 16 / UPV; j++) {
                    d += EN(ucs2v)(v[j], d);
                    v[j] = nv[j];
                }
                i += 16;
            }
        }
    }
    /* The rest, with the surrogate scan. */
    ENC_SCAN_LOOP(EN(scan_surr16), EN(ucs2x16));
    /* [i, lim) is surrogate-free and shorter than ENC_NEED */
    if (lim - i >= ENC_TAIL_MIN) {
        size_t r = lim - i;
        if (lim >= 32) {
            /* the 32 units up to lim all ASCII: rewrite their bytes (those
             * before the tail are already there, the same) */
            vec any = vzero();
            for (j = 0; j < 32; j += UPV)
                any = vor(any, vld(src + lim - 32 + j));
            if (vtestz(any, vk(HFF80))) {
                for (j = 0; j < 32; j += UPV)
                    vsthalf(d + r - 32 + j, vnarrow16(vld(src + lim - 32 + j)));
                d += r;
                i = lim;
            }
        }
        if (i < lim) {
            d += EN(part)(src + i, r, d, &k, 0, 1, room);
            i = lim;
        }
    }
    w = u8p_scalar_enc_ucs2(src + i, n - i, d, &k);
    *done = i + k;
    return (size_t)(d - dst) + w;
}

EN_INL size_t
EN(ucs4)(const uint32_t *src, size_t n, uint8_t *dst, size_t *done, int room)
{
    uint8_t *d = dst;
    size_t i = 0, lim, k, w;
    int stopped = 0, j;
    vec v[16 / QPV], nv[16 / QPV];
    /* below the cut-off, the scalar level's own function: the same loop
     * inlined here, built for this target, runs write_strings of short UCS4
     * strs (emoji among ASCII) slower than the scalar level itself; the
     * call costs less than that */
    if (n < ENC_MIN_UCS4)
        return u8p_kernels_scalar.enc_ucs4(src, n, dst, done);
    if (n < ENC_NEED)
        return EN(part)(src, n, dst, done, 1, 1, room);
    /* Main loop: block i is encoded once the next 16 units are known
     * surrogate-free, which keeps its stores inside dst; no scan. */
    if (n >= 32 && !EN(ld_surr)(src, v, 1)) {
        /* the block stays in registers where it fits in two (256-bit);
         * with four (128-bit) gcc spilled them, so it is loaded again */
        while (i + 32 <= n && !EN(ld_surr)(src + i + 16, nv, 1)) {
            if (16 / QPV > 2)
                EN(ld_surr)(src + i, v, 1);
            d += EN(ucs4x16)(v, d);
            for (j = 0; j < 16 / QPV; j++)
                v[j] = nv[j];
            i += 16;
        }
    }
    /* The rest, with the surrogate scan. */
    ENC_SCAN_LOOP(EN(scan_surr32), EN(ucs4x16p));
    /* [i, lim) is surrogate-free and shorter than ENC_NEED */
    if (lim - i >= ENC_TAIL_MIN) {
        d += EN(part)(src + i, lim - i, d, &k, 1, 0, room);
        i = lim;
    }
    w = u8p_scalar_enc_ucs4(src + i, n - i, d, &k);
    *done = i + k;
    return (size_t)(d - dst) + w;
}

/* The exact and the room entry of an encoder that stops at a surrogate
 * (kernels.h): the same steps, room a constant in each. */
#define ENC_ENTRIES(kind, T)                                                  \
    U8P_ET size_t EN(enc_##kind)(const T *src, size_t n, uint8_t *dst, size_t *done) \
    {                                                                         \
        return EN(kind)(src, n, dst, done, 0);                                \
    }                                                                         \
    U8P_ET size_t EN(enc_##kind##_room)(const T *src, size_t n, uint8_t *dst, size_t *done) \
    {                                                                         \
        return EN(kind)(src, n, dst, done, 1);                                \
    }
ENC_ENTRIES(ucs2, uint16_t)
ENC_ENTRIES(ucs4, uint32_t)

/* The pass forms (kernels.h): every unit is encoded, a surrogate by the
 * 3-byte steps like any unit from U+0800 (the ladder and enc4 have no
 * surrogate case), so a block needs only ENC_NEED units after its start
 * (each takes a byte at least): no look-ahead for surrogates, no scan.
 * With flag, the surrogates are only noted, by the ladder and beside the
 * general step. */

/* The end of a pass loop at unit i: the note for the units left, and
 * their bytes (fewer than ENC_NEED units, or all n < ENC_NEED). */
EN_INL size_t
EN(pass_tail)(const void *src, size_t i, size_t n, uint8_t *d, vec s, int *surr, int ucs4,
              int flag)
{
    size_t k;
    if (flag)
        *surr = !vtestz(s, s) || EN(scan_surr)(src, i, n, ucs4) < n;
    return EN(part)((const uint8_t *)src + i * (ucs4 ? 4 : 2), n - i, d, &k, ucs4, 0, 0);
}

/* The table's entry: below `small` units the scalar form; the loop `impl`
 * built with the note or without it. */
#define ENC_PASS_ENTRY(name, T, impl, small, scalar)                          \
    U8P_ET size_t name(const T *src, size_t n, uint8_t *dst, int *surr)       \
    {                                                                         \
        if (n < (small))                                                      \
            return scalar(src, n, dst, surr);                                 \
        return surr ? impl(src, n, dst, surr, 1) : impl(src, n, dst, NULL, 0); \
    }

/* a vector at a time: its last store starts at most at unit UPV - 4's
 * bytes, so ENC_NEED units from its start are enough at every width */
EN_INL size_t
EN(ucs2_pass)(const uint16_t *src, size_t n, uint8_t *dst, int *surr, int flag)
{
    vec s = vzero();
    uint8_t *d = dst;
    size_t i;
    for (i = 0; i + ENC_NEED <= n; i += UPV) {
        vec v = vld(src + i);
        d += EN(ladder)(v, v, vk(HFF80), vk(HF800), d, &s, flag);
    }
    return (size_t)(d - dst) + EN(pass_tail)(src, i, n, d, s, surr, 0, flag);
}

ENC_PASS_ENTRY(EN(enc_ucs2_pass), uint16_t, EN(ucs2_pass), U8P_X86_MIN_UNITS_UCS2,
               u8p_scalar_enc_ucs2_pass)

EN_INL size_t
EN(ucs4_pass)(const uint32_t *src, size_t n, uint8_t *dst, int *surr, int flag)
{
    uint8_t *d = dst;
    size_t i = 0;
    vec s = vzero();
    int j;
    for (; i + ENC_NEED <= n; i += 16) {
        vec v[16 / QPV], any = vzero();
        for (j = 0; j < 16 / QPV; j++) {
            v[j] = vld(src + i + j * QPV);
            any = vor(any, v[j]);
        }
        if (!vtestz(any, vk(WNOTFFFF))) {
            /* astral code points about: the general step (as ucs4x16) */
            for (j = 0; j < 16 / QPV; j += 2) {
                if (flag)
                    s = vor(s, vor(SURR32(v[j]), SURR32(v[j + 1])));
                d += EN(enc4)(v[j], v[j + 1], d);
            }
            continue;
        }
        for (j = 0; j < 16 / QPV; j += 2)
            d += EN(ladder)(vpack32to16(v[j], v[j + 1]), vor(v[j], v[j + 1]), vk(WNOT7F),
                                 vk(WNOT7FF), d, &s, flag);
    }
    return (size_t)(d - dst) + EN(pass_tail)(src, i, n, d, s, surr, 1, flag);
}

ENC_PASS_ENTRY(EN(enc_ucs4_pass), uint32_t, EN(ucs4_pass), ENC_MIN_UCS4, u8p_scalar_enc_ucs4_pass)

const u8p_kernels ENC_TABLE = {
    ENC_NAME,       EN(len_ucs1), EN(len_ucs2), EN(len_ucs4),
    EN(enc_ucs1),   EN(enc_ucs2), EN(enc_ucs4),
    EN(enc_ucs2_pass), EN(enc_ucs4_pass),
    EN(enc_ucs1_room), EN(enc_ucs2_room), EN(enc_ucs4_room),
};

#undef ENC_AT1
#undef ENC_ENTRIES
#undef ENC_SCAN_LOOP
#undef ENC_PASS_ENTRY
#undef SURR16
#undef SURR32
#undef ENC_NEED
#undef ENC_TAIL_MIN
#undef ENC_UCS1_SHORT
#undef UPV
#undef QPV
#undef NLANE
#undef EN
#undef EN_INL
/* the parameters: the next instantiation defines its own */
#undef U8P_VP
#undef U8P_EN
#undef U8P_ET
#undef ENC_MIN_UCS4
#undef ENC_TABLE
#undef ENC_NAME
