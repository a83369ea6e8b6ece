/*
 * What the kernel-level harnesses share (bench/c/vs_simdutf.cpp against
 * simdutf, bench/c/kernel_ab.cpp between two source trees): the input file
 * the drivers write (the format: vs_simdutf.cpp's header comment), its
 * strings in the writer's memory layout, the timing loop, and one call of
 * utf8pfx's encoder and decoder as the writer and the reader make it.
 * Every kernel is reached through a table pointer, so the same calls serve
 * a harness linked with two builds of the kernels.  Included once by each
 * harness, after the standard headers, kernels.h, decode.h and
 * decode_short.h.
 */
#ifndef UTF8PFX_BENCH_KERNEL_CALLS_H
#define UTF8PFX_BENCH_KERNEL_CALLS_H

namespace {

/* bytes readable after each string's UTF-8 (ref) */
constexpr size_t REF_SLACK = 96;

/* reader.c's RD_UCS1_ROOMY: from this many bytes on the reader transcodes a
 * Latin-1 payload without counting it first */
constexpr size_t RD_UCS1_ROOMY = 1024;

struct Str {
    size_t n;            /* code points */
    size_t u8len;        /* bytes of UTF-8 */
    size_t pfx;          /* varint prefix bytes before the UTF-8 in dst */
    const void *units;   /* 56 bytes into a 64-byte aligned block */
    const uint8_t *ref;  /* CPython's UTF-8 */
};

struct Workload {
    std::string name;
    int kind = 0;
    bool is_short = false;
    std::vector<Str> s;
    size_t cps = 0, bytes = 0;
};

volatile size_t sink;

inline double
now()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* the program's name in die()'s messages; each main sets it */
const char *prog = "harness";

[[noreturn]] inline void
die(const char *msg, const std::string &detail = "")
{
    std::fprintf(stderr, "%s: %s%s%s\n", prog, msg, detail.empty() ? "" : ": ", detail.c_str());
    std::exit(1);
}

/* utf8pfx's length pass, then its encoder as the writer runs it after a
 * count (the pass form when the count found no surrogate); returns the
 * bytes written */
template <int KIND>
inline size_t
u8p_encode(const u8p_kernels *k, const Str &s, uint8_t *dst, size_t *len, size_t *ns,
           size_t *done)
{
    *ns = 0;
    *done = s.n;
    if (KIND == 1) {
        *len = k->len_ucs1((const uint8_t *)s.units, s.n);
        return k->enc_ucs1((const uint8_t *)s.units, s.n, dst);
    }
    if (KIND == 2) {
        const uint16_t *p = (const uint16_t *)s.units;
        *len = k->len_ucs2(p, s.n, ns);
        return *ns == 0 ? k->enc_ucs2_pass(p, s.n, dst, nullptr) : k->enc_ucs2(p, s.n, dst, done);
    }
    const uint32_t *p = (const uint32_t *)s.units;
    *len = k->len_ucs4(p, s.n, ns);
    return *ns == 0 ? k->enc_ucs4_pass(p, s.n, dst, nullptr) : k->enc_ucs4(p, s.n, dst, done);
}

template <int KIND>
inline size_t
u8p_one(const u8p_kernels *k, const Str &s, uint8_t *dst)
{
    size_t len, ns, done, w = u8p_encode<KIND>(k, s, dst, &len, &ns, &done);
    /* a surrogate (never in these inputs; checked) would show as ns > 0 or
     * done < n: both must be 0 / n, so fold them in to keep them live */
    return len + w + ns + (s.n - done);
}

/* `rounds` passes over every string of w; seconds per string */
template <class F>
double
loop(const Workload &w, uint8_t *dst, long rounds, F f)
{
    const Str *b = w.s.data(), *e = b + w.s.size();
    size_t acc = 0;
    double t0 = now();
    for (long r = 0; r < rounds; r++)
        for (const Str *s = b; s != e; s++)
            acc += f(*s, dst + s->pfx);
    double t = now() - t0;
    sink += acc;
    return t / ((double)rounds * (double)w.s.size());
}

/* f(std::integral_constant<int, KIND>) for the workload's kind: one
 * instantiation per storage width */
template <class F>
double
by_kind(int kind, F f)
{
    if (kind == 1)
        return f(std::integral_constant<int, 1>());
    if (kind == 2)
        return f(std::integral_constant<int, 2>());
    return f(std::integral_constant<int, 4>());
}

/* ---- input ---- */

inline uint32_t
rd32(FILE *f, const char *what)
{
    unsigned char b[4];
    if (std::fread(b, 1, 4, f) != 4)
        die("input file truncated", what);
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

inline void *
block(size_t bytes)
{
    /* 56 bytes into a 64-byte aligned block: 8 mod 16, as CPython's data */
    size_t sz = (bytes + 56 + 63) / 64 * 64;
    void *p = std::aligned_alloc(64, sz);
    if (!p)
        die("out of memory");
    return (char *)p + 56;
}

inline std::vector<Workload>
load(const char *path)
{
    FILE *f = std::fopen(path, "rb");
    if (!f)
        die("cannot open input file", path);
    char magic[8];
    if (std::fread(magic, 1, 8, f) != 8 || std::memcmp(magic, "U8PVS001", 8) != 0)
        die("not a vs_simdutf input file (magic U8PVS001)", path);
    std::vector<Workload> out(rd32(f, "count"));
    for (Workload &w : out) {
        w.name.resize(rd32(f, "name length"));
        if (std::fread(&w.name[0], 1, w.name.size(), f) != w.name.size())
            die("input file truncated", "name");
        w.kind = (int)rd32(f, "kind");
        if (w.kind != 1 && w.kind != 2 && w.kind != 4)
            die("bad kind in input file", w.name);
        w.is_short = rd32(f, "is_short") != 0;
        w.s.resize(rd32(f, "nstr"));
        for (Str &s : w.s) {
            s.n = rd32(f, "n");
            s.u8len = rd32(f, "u8len");
            s.pfx = s.u8len < 128 ? 1 : s.u8len < 16384 ? 2 : 3;
            void *u = block(s.n * (size_t)w.kind);
            /* zeroed slack after the UTF-8: a payload in the reader's
             * buffer has more bytes after it (the short decoders may read
             * them, decode.h) */
            uint8_t *r = (uint8_t *)std::calloc(s.u8len + REF_SLACK, 1);
            if (std::fread(u, (size_t)w.kind, s.n, f) != s.n
                || std::fread(r, 1, s.u8len, f) != s.u8len)
                die("input file truncated", w.name);
            s.units = u;
            s.ref = r;
            w.cps += s.n;
            w.bytes += s.u8len;
        }
    }
    std::fclose(f);
    return out;
}

inline size_t
first_diff(const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    size_t k = 0;
    while (k < na && k < nb && a[k] == b[k])
        k++;
    return k;
}

inline double
median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

/* the reader's test before its fused ASCII copy (reader.c: its first 64
 * and last 8 bytes ASCII; called from 64 bytes on) */
inline bool
ascii_likely(const uint8_t *p, size_t n)
{
    uint8_t a = 0;
    for (size_t j = 0; j < 64; j++)
        a |= p[j];
    for (size_t j = n - 8; j < n; j++)
        a |= p[j];
    return !(a & 0x80);
}

/* u8p_dec_alloc for the short decoders: the room is the destination */
inline void *
dec_room(void *ctx, size_t, uint32_t)
{
    return ctx;
}

/* What BufferReader does with a payload (reader.c, strict): up to 64
 * bytes, the short paths; from 64 bytes, the fused ASCII copy when the
 * payload looks ASCII (resumed where it stopped when it is not), then,
 * where the table has them, prescan and the validating Latin-1 transcode,
 * else the validating scan (code points, the storage class) and the
 * transcode into that class.  The class is found here, not given: simdutf
 * is told the target.  Returns the code points written; 0 on invalid
 * input. */
inline size_t
u8p_dec_one(const u8p_dec_kernels *k, const Str &s, uint8_t *dst)
{
    const uint8_t *p = s.ref;
    size_t n = s.u8len;
    u8p_scan_result r;
    size_t lead = 0;
    if (n <= U8P_DEC_SHORT_MAX) {
        /* the reader's short paths: ASCII copied inline, then the table's
         * vector decoder or the inline loop (its code points narrowed, as
         * the reader narrows them into the new str) */
        uint8_t hi = 0;
        for (size_t i = 0; i < n && n <= 32; i++)
            hi |= p[i];
        if (n <= 32 && hi < 0x80) {
            std::memcpy(dst, p, n);
            return n;
        }
        ptrdiff_t got = U8P_DEC_SHORT_INLINE;
        if (k->dec_short && n >= U8P_DEC_SHORT_VEC_MIN) {
            got = k->dec_short(p, n, n + REF_SLACK, dec_room, dst);
            if (got >= 0)
                return (size_t)got;
        }
        if (got == U8P_DEC_SHORT_INLINE) {
            uint32_t cps[U8P_DEC_SHORT_MAX], mx;
            got = u8p_dec_short(p, n, cps, &mx);
            if (got >= 0) {
                u8p_dec_short_narrow(cps, (size_t)got, mx, dst);
                return (size_t)got;
            }
        }
    }
    if (n >= 64 && k->copy_ascii && ascii_likely(p, n)) {
        lead = k->copy_ascii(p, n, dst);
        if (lead == n)
            return n;
    }
    if (n >= RD_UCS1_ROOMY && k->prescan) {
        /* as the reader: no count, room for n code points (its str is
         * shrunk after; not timed here: a realloc in place) */
        size_t ncp, got;
        const size_t win = n - lead < 256 ? n - lead : 256;
        if (k->prescan(p + lead, win, &ncp) < 0xC4) {
            std::memcpy(dst, p, lead);
            if (k->to_ucs1_checked(p + lead, n - lead, dst + lead, n - lead, &got) == U8P_DEC_OK)
                return lead + got;
        }
    }
    else if (n >= 64 && k->prescan) {
        size_t ncp, got;
        uint8_t maxb = k->prescan(p + lead, n - lead, &ncp);
        if (maxb < 0x80) {
            std::memcpy(dst, p, n);
            return n;
        }
        if (maxb < 0xC4) {
            /* [0, lead) copied again, as the reader copies it into the new
             * str */
            std::memcpy(dst, p, lead);
            if (k->to_ucs1_checked(p + lead, n - lead, dst + lead, ncp, &got) == U8P_DEC_OK &&
                got == ncp)
                return lead + ncp;
        }
    }
    if (k->scan(p, n, 0, &r) != U8P_DEC_OK)
        return 0;
    if (r.maxchar <= 0xFF)
        return k->to_ucs1(p, n, dst);
    if (r.maxchar <= 0xFFFF)
        return k->to_ucs2(p, n, (uint16_t *)dst);
    return k->to_ucs4(p, n, (uint32_t *)dst);
}

} // namespace

#endif
