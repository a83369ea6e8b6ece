/*
 * The x86 decode kernels, written once for every vector width; included by
 * decode_x86.c once per instantiation (no include guard, on purpose; it
 * undefines its parameters at the end).  See decode_x86.c for the
 * algorithms.  The includer defines:
 *
 *   U8P_VP        the width's operation prefix (x86_vec.h): u8p_v16_, ...
 *   U8P_DN        the prefix of the functions made here: sse_, avx2_, ...
 *   U8P_DT        the target attribute of those functions
 *   DEC_EMITB(d, v, m)   bytes of v selected by mask m, in order, to d
 *   DEC_EMIT16(d, v, m)  16-bit lanes likewise (m has one bit a lane)
 *   DEC_EMIT32(d, v, m)  32-bit lanes likewise
 *                 (each returns the count; may store up to a vector's
 *                 worth of lanes, the loop bounds below leave room)
 *   DEC_NARROW(x) the next narrower level's function x (scan, to_ucs1...):
 *                 the part too short for this width goes there
 *   DEC_NARROW_END  that level's block-loop bound (0: none, use the tail)
 *   DEC_SCAN_MIN  shorter payloads are scanned by the narrower level (or
 *                 the scalar scan under 16 bytes); from it on this width
 *                 scans, its last block a partial load
 *   DEC_SCAN_AND_UCS4  0 to leave out scan and to_ucs4 (an instantiation
 *                 that differs from another only in byte/word compaction)
 */
#ifndef DEC_SCAN_AND_UCS4
#define DEC_SCAN_AND_UCS4 1
#endif
#define DN(x) U8P_CAT(U8P_DN, x)

/* Transcoder block loops run while this many bytes remain from the block
 * start: every 3- and 4-byte read of a lead stays inside the payload, and
 * every compaction store lands inside the output (a group of lanes taken
 * at byte g stores at most one vector of code units, and at least that
 * many code points follow g). */
#define DEC_END (2 * VW < 48 ? 48 : 2 * VW)

/* an all-ASCII block at s + i widened to the output's code units (lanes a
 * vector) and stored; else falls through */
#define DEC_ASCII_BLOCK(widen, lanes)                                         \
    if (!vmhigh(vld(s + i))) {                                                \
        for (g = 0; g < VW; g += (lanes))                                     \
            vst(d + k + g, widen(s + i + g));                                 \
        k += VW;                                                              \
        continue;                                                             \
    }

/* a transcoder's start: a payload too short for this width's block loop
 * goes to the next level before any set-up of this one */
#define DEC_START(x)                                                          \
    do {                                                                      \
        if (n < DEC_END)                                                      \
            return DEC_REST(x)(s, n, d);                                      \
        TABLES_READY();                                                       \
    } while (0)

/* where the rest of a payload goes: the next narrower level's transcoder
 * if it is long enough for its block loop, else the scalar tail */
#if DEC_NARROW_END
#define DEC_REST(x) (n - i >= DEC_NARROW_END ? DEC_NARROW(x) : U8P_CAT(dec_tail_, x))
#else
#define DEC_REST(x) U8P_CAT(dec_tail_, x)
#endif

#if DEC_SCAN_AND_UCS4
/* n >= DEC_SCAN_MIN (DN(scan) below); out of line so that a short payload
 * handed to the narrower level pays for none of this one's set-up */
U8P_DT U8P_NOINLINE u8p_dec_status
DN(scan_long)(const uint8_t *s, size_t n, int allow_surr, u8p_scan_result *res)
{
    const vec t1 = vrow(dec_t1), t2 = vrow(dec_t2), t3 = vrow(dec_t3);
    vec nib = vset8(0x0F), k60 = vset8(0x60), k70 = vset8(0x70), k80 = vset8(0x80);
    vec kc0 = vset8(0xC0);
    const vec keep = vset8(allow_surr ? (uint8_t)~E_SURROGATE : 0xFF);
    /* the last 3 bytes of a vector may not start a sequence longer than
     * what is left of the vector (checked against the next block) */
    const vec maxv = vld(dec_maxv + 64 - VW);
    vec prev = vzero(), err = vzero(), inc = vzero(), vmax = vzero();
    size_t i = 0, cont = 0;
    uint8_t mx[VW], maxb = 0;
    int j, last = 0, after_ascii = 1;

    U8P_OPAQUE_V(nib);
    U8P_OPAQUE_V(k60);
    U8P_OPAQUE_V(k70);
    U8P_OPAQUE_V(k80);
    U8P_OPAQUE_V(kc0);
    while (!last) {
        vec in;
        /* ASCII fast path: 4 vectors a step, tried only after an ASCII
         * block (so nothing is pending in inc); text dense in non-ASCII
         * would otherwise load every block twice */
        while (after_ascii && i + 4 * VW <= n) {
            vec a = vld(s + i), b = vld(s + i + VW), c = vld(s + i + 2 * VW);
            vec e = vld(s + i + 3 * VW);
            if (vmhigh(vor(vor(a, b), vor(c, e))))
                break;
            prev = e;
            i += 4 * VW;
        }
        if (i + VW <= n) {
            in = vld(s + i);
            i += VW;
        }
        else {
            in = vldpart(s + i, n - i);
            i = n;
        }
        if (i == n)
            last = 1;
        if (!vmhigh(in)) {
            err = vor(err, inc);
            inc = vzero();
            prev = in;
            after_ascii = 1;
            continue;
        }
        after_ascii = 0;
        {
            vec p1 = vprev1(in, prev), p2 = vprev2(in, prev), p3 = vprev3(in, prev);
            vec sc = vand(vand(vshuf8(t1, vand(vsrl16(p1, 4), nib)), vshuf8(t2, vand(p1, nib))),
                          vshuf8(t3, vand(vsrl16(in, 4), nib)));
            vec m23 = vand(vor(vsubs8u(p2, k60), vsubs8u(p3, k70)), k80);
            sc = vand(sc, keep);
            err = vor(err, vxor(sc, m23));
            inc = vsubs8u(in, maxv);
            vmax = vmax8u(vmax, in);
            cont += (size_t)__builtin_popcountll(vmcontk(in, kc0));
            prev = in;
        }
    }
    err = vor(err, inc);
    if (!vnone(err))
        return u8p_dec_scan_scalar(s, n, allow_surr, res);
    vst(mx, vmax);
    for (j = 0; j < VW; j++)
        if (mx[j] > maxb)
            maxb = mx[j];
    res->ncp = n - cont;
    res->maxchar = class_of_max(maxb);
    res->err_start = res->err_end = 0;
    return U8P_DEC_OK;
}

U8P_DT static u8p_dec_status
DN(scan)(const uint8_t *s, size_t n, int allow_surr, u8p_scan_result *res)
{
    if (n < DEC_SCAN_MIN)
        return (n < 16 ? u8p_dec_scan_scalar : DEC_NARROW(scan))(s, n, allow_surr, res);
    return DN(scan_long)(s, n, allow_surr, res);
}
#endif

#if DEC_SCAN_AND_UCS4
/* copy_ascii (decode.h): 4 vectors a step, stored, then tested; the last
 * partial step is one vector at a time and the end one overlapping vector
 * (n >= VW), so nothing is written outside [d, d+n).  A failing step
 * returns its start; the last part, tested as a whole, returns its own. */
U8P_DT static size_t
DN(copy_ascii)(const uint8_t *s, size_t n, uint8_t *d)
{
    size_t i = 0, last;
    vec acc;
    if (n < VW)
        return u8p_dec_copy_ascii_scalar(s, n, d);
    for (; i + 4 * VW <= n; i += 4 * VW) {
        vec a = vld(s + i), b = vld(s + i + VW), c = vld(s + i + 2 * VW);
        vec e = vld(s + i + 3 * VW);
        vst(d + i, a);
        vst(d + i + VW, b);
        vst(d + i + 2 * VW, c);
        vst(d + i + 3 * VW, e);
        if (vmhigh(vor(vor(a, b), vor(c, e))))
            return i;
    }
    last = i;
    acc = vzero();
    for (; i + VW <= n; i += VW) {
        vec a = vld(s + i);
        vst(d + i, a);
        acc = vor(acc, a);
    }
    if (i < n) {
        vec a = vld(s + n - VW);
        vst(d + n - VW, a);
        acc = vor(acc, a);
    }
    return vmhigh(acc) ? last : n;
}
#endif

/* Code point candidates for W/2 positions of a block without 4-byte
 * sequences, in 16-bit lanes: lane j decodes the sequence that would start
 * at p[j] (garbage where p[j] is a continuation, never emitted, or a 4-byte
 * lead, which to_ucs4 overwrites). */
U8P_DT static inline vec
DN(cands16)(const uint8_t *p)
{
    const vec x = vw8to16(p), y = vw8to16(p + 1), z = vw8to16(p + 2);
    const vec m3f = vset16(0x3F);
    vec v2 = vor(vsll16(vand(x, vset16(0x1F)), 6), vand(y, m3f));
    vec v3 = vor(vor(vsll16(x, 12), vsll16(vand(y, m3f), 6)), vand(z, m3f));
    return vsel16gt(x, 0xDF, vsel16gt(x, 0xBF, x, v2), v3);
}

#if DEC_SCAN_AND_UCS4
/* The same for W/4 positions, any length, in 32-bit lanes. */
U8P_DT static inline vec
DN(cands32)(const uint8_t *p)
{
    const vec x = vw8to32(p), y = vw8to32(p + 1), z = vw8to32(p + 2), w = vw8to32(p + 3);
    const vec m3f = vset32(0x3F);
    vec y6 = vand(y, m3f), z6 = vand(z, m3f);
    vec v2 = vor(vsll32(vand(x, vset32(0x1F)), 6), y6);
    vec v3 = vor(vor(vsll32(vand(x, vset32(0x0F)), 12), vsll32(y6, 6)), z6);
    vec v4 = vor(vor(vsll32(vand(x, vset32(0x07)), 18), vsll32(y6, 12)),
                 vor(vsll32(z6, 6), vand(w, m3f)));
    return vsel32gt(x, 0xEF, vsel32gt(x, 0xDF, vsel32gt(x, 0xBF, x, v2), v3), v4);
}
#endif

/*
 * The last 16 <= r < DEC_END bytes of a payload, from a lead or from the
 * continuation bytes of a sequence decoded before them, through the block
 * step of the transcoder below: loaded from a zero-padded copy, so no load
 * passes the payload, stored into a stack block, and the code units of the
 * leads before r copied out (the padding's zeros are never kept).  The
 * scalar tail branches on each lead's length, and on mixed-script text its
 * mispredictions cost more than these few vector steps.
 */
/* the padded copy's size: the loads' reach (DEC_END + VW + 2), in whole
 * vectors, zeroed with vector stores (a memset here became `rep stos`,
 * whose start-up costs more than a short payload's whole tail) */
#define DEC_TAIL_BUF ((DEC_END + VW + 32 + VW - 1) / VW * VW)
#define DEC_TAIL_BLOCKS(T, step)                                              \
    U8P_ALIGN32 uint8_t buf_[DEC_TAIL_BUF];                                   \
    U8P_ALIGN32 T out_[DEC_END + 2 * VW];                                     \
    size_t i = 0, k = 0;                                                      \
    int g;                                                                    \
    for (i = 0; i < DEC_TAIL_BUF; i += VW)                                    \
        vst(buf_ + i, vzero());                                               \
    i = 0;                                                                    \
    copy_small(buf_, s, r);                                                   \
    TABLES_READY();                                                           \
    for (; i < r; i += VW) {                                                  \
        const uint64_t live_ = r - i >= VW ? VMASK_ALL                        \
                                           : ((uint64_t)1 << (r - i)) - 1;    \
        step;                                                                 \
    }                                                                         \
    copy_small((uint8_t *)d, (const uint8_t *)out_, k * sizeof(T));           \
    (void)g;                                                                  \
    return k

#ifndef DEC_MASKED_TAIL16
U8P_DT U8P_NOINLINE size_t
DN(tail_to_ucs2)(const uint8_t *s, size_t r, uint16_t *d)
{
    DEC_TAIL_BLOCKS(uint16_t, {
        const uint64_t keep = ~vmcont(vld(buf_ + i)) & live_;
        for (g = 0; g < VW; g += VW / 2)
            k += DEC_EMIT16(out_ + k, DN(cands16)(buf_ + i + g),
                            (keep >> g) & (((uint64_t)1 << (VW / 2)) - 1));
    });
}
#else
/* With AVX-512 BW (DEC_MASKED_TAIL16: the includer's emit16 stores
 * masked to the lanes kept): the same steps, 32 positions each, loaded
 * straight from the payload with masks (a masked-off byte is neither read
 * nor faulted on, and loads as zero) and stored straight into the output.
 * No stack copy: the padded one's loads wait for its stores to complete.
 * Apart (its own section): in the place of the padded tail, a function of
 * another size moved the code after it, the UCS4 transcoders among it,
 * which run slower at some addresses than at others. */
U8P_DT static inline __m512i
DN(w8to16_upto)(const uint8_t *p, ptrdiff_t left)
{
    const __mmask64 m = left >= 32 ? (__mmask64)0xFFFFFFFFu
                        : left > 0 ? (__mmask64)(((uint64_t)1 << left) - 1) : 0;
    return _mm512_cvtepu8_epi16(_mm512_castsi512_si256(_mm512_maskz_loadu_epi8(m, p)));
}

U8P_DT U8P_APART size_t
DN(tail_to_ucs2)(const uint8_t *s, size_t r, uint16_t *d)
{
    const __m512i m3f = _mm512_set1_epi16(0x3F), m1f = _mm512_set1_epi16(0x1F);
    const __m512i kbf = _mm512_set1_epi16(0xBF), kdf = _mm512_set1_epi16(0xDF);
    size_t i, k = 0;
    for (i = 0; i < r; i += 32) {
        const ptrdiff_t left = (ptrdiff_t)(r - i);
        const __m512i x = DN(w8to16_upto)(s + i, left);
        const __m512i y = DN(w8to16_upto)(s + i + 1, left - 1);
        const __m512i z = DN(w8to16_upto)(s + i + 2, left - 2);
        const __m512i v2 = _mm512_or_si512(_mm512_slli_epi16(_mm512_and_si512(x, m1f), 6),
                                           _mm512_and_si512(y, m3f));
        const __m512i v3 = _mm512_or_si512(
            _mm512_or_si512(_mm512_slli_epi16(x, 12),
                            _mm512_slli_epi16(_mm512_and_si512(y, m3f), 6)),
            _mm512_and_si512(z, m3f));
        const __mmask32 ge_c0 = _mm512_cmp_epu16_mask(x, kbf, _MM_CMPINT_NLE);
        const __mmask32 ge_e0 = _mm512_cmp_epu16_mask(x, kdf, _MM_CMPINT_NLE);
        const __m512i c = _mm512_mask_blend_epi16(ge_e0, _mm512_mask_blend_epi16(ge_c0, x, v2), v3);
        /* a unit on every byte of the payload but a continuation (the
         * masked-off lanes load as zero, ASCII: left out by live) */
        const __mmask32 live =
            left >= 32 ? (__mmask32)~0u : (__mmask32)(((uint32_t)1 << left) - 1);
        const __mmask32 unit = _mm512_cmp_epu16_mask(x, _mm512_set1_epi16(0x7F), _MM_CMPINT_LE);
        k += DEC_EMIT16(d + k, c, (uint64_t)((unit | ge_c0) & live));
    }
    return k;
}
#endif

/* UCS1: the code unit on the last byte of its sequence, as in to_ucs1
 * below (a lead in the byte before the tail was taken care of there) */
U8P_DT U8P_NOINLINE size_t
DN(tail_to_ucs1)(const uint8_t *s, size_t r, uint8_t *d)
{
    DEC_TAIL_BLOCKS(uint8_t, {
        const vec in = vld(buf_ + i);
        const vec pv = i ? vld(buf_ + i - 1) : vprev1(in, vzero());
        k += DEC_EMITB(out_ + k, vaddifeq8(in, pv, 0xC3, 0x40),
                       ~(vmhigh(in) & ~vmcont(in)) & live_);
    });
}
#undef DEC_TAIL_BLOCKS
#undef DEC_TAIL_BUF

/* the rest of a payload after a block loop: the padded block steps above
 * from 16 bytes on, else the scalar tail */
#define DEC_TAIL(x) (n - i >= 16 ? DN(U8P_CAT(tail_, x)) : U8P_CAT(dec_tail_, x))

/*
 * UCS1 output: every code point is 1 or 2 bytes (leads C2, C3 only), so a
 * code unit sits on its last byte: the byte itself, + 0x40 after a C3 lead.
 * Leads (bytes >= 0xC0) are squeezed out.
 */
U8P_DT static size_t
DN(to_ucs1)(const uint8_t *s, size_t n, uint8_t *d)
{
    size_t i = 0, k = 0;
    DEC_START(to_ucs1);
    for (; i + DEC_END <= n; i += VW) {
        vec in = vld(s + i), pv;
        uint64_t h = vmhigh(in);
        if (!h) {
            vst(d + k, in);
            k += VW;
            continue;
        }
        pv = i ? vld(s + i - 1) : vprev1(in, vzero());
        k += DEC_EMITB(d + k, vaddifeq8(in, pv, 0xC3, 0x40), ~(h & ~vmcont(in)) & VMASK_ALL);
    }
    /* a lead in the last byte: its code unit is on the next byte */
    if (i && i < n && s[i - 1] >= 0xC0) {
        d[k++] = (uint8_t)(s[i] + (s[i - 1] == 0xC3 ? 0x40 : 0));
        i++;
    }
    return k + DEC_TAIL(to_ucs1)(s + i, n - i, d + k);
}

/* For UCS2 output a block never holds a 4-byte sequence (scan said so). */
U8P_DT static size_t
DN(to_ucs2)(const uint8_t *s, size_t n, uint16_t *d)
{
    size_t i = 0, k = 0;
    int g;
    DEC_START(to_ucs2);
    for (; i + DEC_END <= n; i += VW) {
        uint64_t keep;
        DEC_ASCII_BLOCK(vw8to16, VW / 2);
        keep = ~vmcont(vld(s + i));
        for (g = 0; g < VW; g += VW / 2)
            k += DEC_EMIT16(d + k, DN(cands16)(s + i + g), (keep >> g) & (((uint64_t)1 << (VW / 2)) - 1));
    }
    return k + DEC_TAIL(to_ucs2)(s + i, n - i, d + k);
}

#if DEC_SCAN_AND_UCS4 && defined(DEC_MASKED_TAIL32)
/* UCS4 with AVX-512 BW (DEC_MASKED_TAIL32): a payload under DEC_END, and
 * what the block loop leaves, 16 positions a step, loaded from the
 * payload with masks and stored into the str masked to the units kept.
 * The narrower levels' loops would hand the last bytes to the scalar
 * tail, which branches on every lead's length: on text with emoji its
 * mispredictions cost more than these steps.  Apart, as tail_to_ucs2. */
U8P_DT static inline __m512i
DN(w8to32_upto)(const uint8_t *p, ptrdiff_t left)
{
    const __mmask64 m = left >= 16 ? (__mmask64)0xFFFF
                        : left > 0 ? (__mmask64)(((uint64_t)1 << left) - 1) : 0;
    return _mm512_cvtepu8_epi32(_mm512_castsi512_si128(_mm512_maskz_loadu_epi8(m, p)));
}

U8P_DT U8P_APART size_t
DN(tail_to_ucs4)(const uint8_t *s, size_t r, uint32_t *d)
{
    const __m512i m3f = _mm512_set1_epi32(0x3F);
    size_t i, k = 0;
    for (i = 0; i < r; i += 16) {
        const ptrdiff_t left = (ptrdiff_t)(r - i);
        const __m512i x = DN(w8to32_upto)(s + i, left);
        const __m512i y6 = _mm512_and_si512(DN(w8to32_upto)(s + i + 1, left - 1), m3f);
        const __m512i z6 = _mm512_and_si512(DN(w8to32_upto)(s + i + 2, left - 2), m3f);
        const __m512i w6 = _mm512_and_si512(DN(w8to32_upto)(s + i + 3, left - 3), m3f);
        const __m512i v2 = _mm512_or_si512(
            _mm512_slli_epi32(_mm512_and_si512(x, _mm512_set1_epi32(0x1F)), 6), y6);
        const __m512i v3 = _mm512_or_si512(
            _mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(x, _mm512_set1_epi32(0x0F)), 12),
                            _mm512_slli_epi32(y6, 6)),
            z6);
        const __m512i v4 = _mm512_or_si512(
            _mm512_or_si512(_mm512_slli_epi32(_mm512_and_si512(x, _mm512_set1_epi32(0x07)), 18),
                            _mm512_slli_epi32(y6, 12)),
            _mm512_or_si512(_mm512_slli_epi32(z6, 6), w6));
        const __mmask16 ge_c0 = _mm512_cmp_epu32_mask(x, _mm512_set1_epi32(0xBF), _MM_CMPINT_NLE);
        const __mmask16 ge_e0 = _mm512_cmp_epu32_mask(x, _mm512_set1_epi32(0xDF), _MM_CMPINT_NLE);
        const __mmask16 ge_f0 = _mm512_cmp_epu32_mask(x, _mm512_set1_epi32(0xEF), _MM_CMPINT_NLE);
        const __m512i c = _mm512_mask_blend_epi32(
            ge_f0, _mm512_mask_blend_epi32(ge_e0, _mm512_mask_blend_epi32(ge_c0, x, v2), v3),
            v4);
        /* a unit on every byte of the payload but a continuation */
        const __mmask16 live =
            left >= 16 ? (__mmask16)0xFFFF : (__mmask16)(((uint32_t)1 << left) - 1);
        const __mmask16 keep =
            (_mm512_cmp_epu32_mask(x, _mm512_set1_epi32(0x7F), _MM_CMPINT_LE) | ge_c0) & live;
        const size_t c_ = (size_t)__builtin_popcount((unsigned)keep);
        _mm512_mask_storeu_epi32(d + k, (__mmask16)(((uint32_t)1 << c_) - 1),
                                 _mm512_maskz_compress_epi32(keep, c));
        k += c_;
    }
    return k;
}
#endif

#if DEC_SCAN_AND_UCS4
/* Each lead of m (a subset of keep) in the block at s decoded over its lane
 * of the block's output at d: the lane's index is the number of kept bytes
 * before the lead. */
U8P_DT static inline void
DN(patch_leads)(uint32_t *d, const uint8_t *s, uint64_t keep, uint64_t m)
{
    while (m) {
        const unsigned p = (unsigned)__builtin_ctzll(m);
        m &= m - 1;
        d[__builtin_popcountll(keep & (((uint64_t)1 << p) - 1))] = dec_at(s + p);
    }
}

/*
 * UCS4 output is usually ASCII with a few astral code points (emoji) in it.
 * A block that is not all ASCII is widened to 32-bit lanes and compacted to
 * drop its continuation bytes, which puts every ASCII byte at its final
 * place; the few lead lanes are then overwritten with the code point
 * decoded from the lead (its output index is the number of kept bytes
 * before it).  A block with more 2- and 3-byte sequences (a UCS4 str is
 * often a name in some script around one emoji) is decoded in 16-bit
 * lanes, half the work of 32-bit ones, and widened before the compaction;
 * its 4-byte sequences, which 16 bits cannot hold, are patched as above.
 * A block dense in leads otherwise (runs of emoji), where the patches
 * would cost more, is decoded in 32-bit lanes.
 */
U8P_DT static size_t
DN(to_ucs4)(const uint8_t *s, size_t n, uint32_t *d)
{
    const uint64_t quarter = ((uint64_t)1 << (VW / 4)) - 1;
    size_t i = 0, k = 0;
    int g;
#ifdef DEC_MASKED_TAIL32
    if (n < DEC_END)
        return DN(tail_to_ucs4)(s, n, d);
    TABLES_READY();
#else
    DEC_START(to_ucs4);
#endif
    for (; i + DEC_END <= n; i += VW) {
        uint64_t h, keep, leads;
        DEC_ASCII_BLOCK(vw8to32, VW / 4);
        h = vmhigh(vld(s + i));
        keep = ~vmcont(vld(s + i)) & VMASK_ALL;
        leads = keep & h;
        if (__builtin_popcountll(leads) > VW / 16) {
            /* leads of 4-byte sequences: bytes >= 0xF0 */
            const uint64_t four = vmhigh(vsubs8u(vld(s + i), vset8(0x70))) & keep;
            const int nl = __builtin_popcountll(leads), n4 = __builtin_popcountll(four);
            if (nl - n4 > VW / 16 && n4 <= VW * 6 / 32) {
                const size_t k0 = k;
                for (g = 0; g < VW; g += VW / 2) {
                    const vec c = DN(cands16)(s + i + g);
                    const uint64_t kh = keep >> g;
                    k += DEC_EMIT32(d + k, vw16to32lo(c), kh & quarter);
                    k += DEC_EMIT32(d + k, vw16to32hi(c), (kh >> (VW / 4)) & quarter);
                }
                DN(patch_leads)(d + k0, s + i, keep, four);
                continue;
            }
            if (nl > VW * 6 / 32) {
                for (g = 0; g < VW; g += VW / 4)
                    k += DEC_EMIT32(d + k, DN(cands32)(s + i + g), (keep >> g) & quarter);
                continue;
            }
        }
        {
            const size_t k0 = k;
            for (g = 0; g < VW; g += VW / 4)
                k += DEC_EMIT32(d + k, vw8to32(s + i + g), (keep >> g) & quarter);
            DN(patch_leads)(d + k0, s + i, keep, leads);
        }
    }
#ifdef DEC_MASKED_TAIL32
    return k + DN(tail_to_ucs4)(s + i, n - i, d + k);
#else
    return k + DEC_REST(to_ucs4)(s + i, n - i, d + k);
#endif
}
#endif /* DEC_SCAN_AND_UCS4 */

#undef DEC_END
#undef DEC_REST
#undef DEC_ASCII_BLOCK
#undef DEC_START
#undef DEC_TAIL
#undef DN
/* the parameters: the next instantiation defines its own */
#undef U8P_VP
#undef U8P_DN
#undef U8P_DT
#undef DEC_EMITB
#undef DEC_EMIT16
#undef DEC_EMIT32
#undef DEC_NARROW
#undef DEC_NARROW_END
#undef DEC_SCAN_MIN
#undef DEC_SCAN_AND_UCS4
#undef DEC_MASKED_TAIL16
#undef DEC_MASKED_TAIL32
