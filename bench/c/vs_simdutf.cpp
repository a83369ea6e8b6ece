/*
 * utf8pfx's encode kernels against simdutf's converters, kernel level, no
 * Python: ns per string of "exact UTF-8 length, then encode into a buffer"
 * on the same real-world strings, in one process, contenders interleaved;
 * then the decoders the other way (UTF-8 back into each str's storage,
 * validated: dec_table below; --no-decode leaves it out).
 *
 * Normally run through the driver, which prepares the inputs, amalgamates
 * and builds simdutf in a temporary folder and compiles this file:
 *
 *   python3 bench/vs_simdutf.py --simdutf-src /path/to/simdutf
 *
 * By hand (SD = a folder holding simdutf.h and simdutf.cpp made by simdutf's
 * singleheader/amalgamate.py; nothing of simdutf is kept in this repository;
 * INPUT.bin as the driver writes it: `--build-dir /tmp/vs` keeps its
 * /tmp/vs/input.bin and binary):
 *
 *   mkdir -p /tmp/vs/obj
 *   for f in $(find csrc/kernels -name '*.c'); do
 *       gcc -DNDEBUG -fwrapv -O3 -falign-functions=64 -Wall -Wextra -fvisibility=hidden -Icsrc \
 *           -c $f -o /tmp/vs/obj/k_$(basename $f .c).o; done
 *   g++ -O3 -DNDEBUG -std=c++17 -c $SD/simdutf.cpp -o /tmp/vs/obj/simdutf.o
 *   g++ -O3 -DNDEBUG -std=c++17 -Wall -Wextra -I$SD -Icsrc/kernels \
 *       bench/c/vs_simdutf.cpp $(find /tmp/vs/obj -name '*.o') -o /tmp/vs/vs_simdutf
 *   /tmp/vs/vs_simdutf /tmp/vs/input.bin [--repeats N] [--min-loop-us US]
 *       [--simdutf-rev TEXT]
 *
 * (the kernel flags are setup.py's plus CPython's -DNDEBUG -fwrapv; the
 * kernels pick their instruction sets per function, so no -m flags.)
 *
 * INPUT.bin (written by bench/vs_simdutf.py; all integers u32 little-endian):
 *   "U8PVS001"                      magic, 8 bytes
 *   nworkloads
 *   per workload:
 *     name_len, name bytes (ASCII)
 *     kind                          1, 2 or 4: PEP 393 storage (UCS1/2/4)
 *     is_short                      1 for the short-names row
 *     nstr
 *     per string: n (code points), u8len (bytes of its UTF-8),
 *                 the n code units (n * kind bytes),
 *                 its UTF-8 as CPython's str.encode() made it (u8len bytes)
 *
 * Contenders, per workload:
 *   utf8pfx <table>  for every table the CPU runs (u8p_kernel_tables:
 *                    scalar, sse, avx2, the avx512 tables / neon): len_ucsN, then
 *                    enc_ucsN into the buffer, its pass form (enc_ucs2_pass,
 *                    enc_ucs4_pass) when the length pass counted no
 *                    surrogate: what the writer does for a str whose size
 *                    it does not know.  "default" is
 *                    u8p_select_kernels(NULL), the level the extension picks.
 *   simdutf          its runtime-dispatched implementation (name printed),
 *                    the no-validation converters, the peer of utf8pfx's
 *                    kernels, whose input is a str: a CPython str is valid by
 *                    construction apart from lone surrogates, which
 *                    utf8pfx's length pass counts and its encoder stops at:
 *                      UCS1  utf8_length_from_latin1 + convert_latin1_to_utf8
 *                      UCS2  utf8_length_from_utf16le + convert_valid_utf16le_to_utf8
 *                      UCS4  utf8_length_from_utf32 + convert_valid_utf32_to_utf8
 *   simdutf checked  UCS2/UCS4 only: the same with the validating converters
 *                    (convert_utf16le_to_utf8, convert_utf32_to_utf8), for
 *                    scale: they reject a lone surrogate, which is about what
 *                    utf8pfx's encoders check too (they stop at one).
 *   floor            not an encoder: the least any "count, then encode" can
 *                    do to the same memory: one read of every storage byte
 *                    (OR-ed, 32 bytes a load: a count reads each at least
 *                    once) and a copy of as many bytes as the UTF-8 has,
 *                    at most the storage's size (no encoder writes less),
 *                    32-byte loads and stores.
 *                    fl/sd, the floor over simdutf, is the lowest ratio a
 *                    count-then-encode can reach on a long str: a target
 *                    below it is out of reach on that CPU, whatever the
 *                    kernel.  On a short one the floor's own loop and its
 *                    copy cost more than the work: there it bounds nothing.
 *
 * Before timing, every contender encodes every string into a buffer
 * with guard bytes; its length, its bytes (which must equal CPython's, so
 * all contenders give identical bytes) and the guards are checked, and the
 * program exits 1 with a message on the first difference.
 *
 * Memory layout as the writer sees it: each string's code units start 56
 * bytes into a 64-byte aligned block (8 mod 16, like the data of a compact
 * CPython str), and the UTF-8 goes to a buffer after room for the varint
 * prefix of its length (1-3 bytes).
 *
 * Timing: one loop encodes every string of the workload once (16 long
 * strings, or all the short names: never one string over and over, which
 * lets the branch predictor learn it), repeated a power-of-two number of
 * times so that the loop takes at least ~20 us (calibrated per contender).
 * Each contender is timed --repeats times (default 300), the contenders
 * in a rotating order within each repeat so all of them sample the same
 * moments of the machine; the table shows the best (minimum) ns per string,
 * what an undisturbed core does.  ratio = utf8pfx default / simdutf time
 * (< 1: utf8pfx faster); "med" is the same ratio from the medians, as a
 * check on noise.  Targets: long rows ratio <= 1/1.2 (0.833), short rows
 * <= 1.0.
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <type_traits>
#include <vector>

#include "decode.h"
#include "decode_short.h"
#include "kernels.h"
#include "simdutf.h"

#include "kernel_calls.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace {

/* --tsv: one line per row for the driver's summary over runs (table,
 * workload, ratio, med, its limit, 1 for a short row) */
FILE *tsv_out = nullptr;

void
tsv_row(const char *table, const Workload &w, double ratio, double mratio, double limit)
{
    if (tsv_out)
        std::fprintf(tsv_out, "%s\t%s\t%.4f\t%.4f\t%.4f\t%d\n", table, w.name.c_str(), ratio,
                     mratio, limit, w.is_short ? 1 : 0);
}

enum CType { C_U8P, C_SD_VALID, C_SD_CHECKED, C_FLOOR };

struct Contender {
    std::string label;
    CType type;
    const u8p_kernels *k; /* C_U8P */
};

/* ---- one call of each contender: length, then encode ---- */

/* simdutf's length, then its converter: the no-validation one, or with
 * CHECKED the validating one (UTF-16/32 only; it returns 0 on invalid
 * input) */
template <int KIND, bool CHECKED>
inline size_t
sd_one(const Str &s, uint8_t *dst)
{
    size_t len, w;
    char *d = (char *)dst;
    if (KIND == 1) {
        len = simdutf::utf8_length_from_latin1((const char *)s.units, s.n);
        w = simdutf::convert_latin1_to_utf8((const char *)s.units, s.n, d);
    } else if (KIND == 2) {
        const char16_t *p = (const char16_t *)s.units;
        len = simdutf::utf8_length_from_utf16le(p, s.n);
        w = CHECKED ? simdutf::convert_utf16le_to_utf8(p, s.n, d)
                    : simdutf::convert_valid_utf16le_to_utf8(p, s.n, d);
    } else {
        const char32_t *p = (const char32_t *)s.units;
        len = simdutf::utf8_length_from_utf32(p, s.n);
        w = CHECKED ? simdutf::convert_utf32_to_utf8(p, s.n, d)
                    : simdutf::convert_valid_utf32_to_utf8(p, s.n, d);
    }
    return len + w;
}

/* the floor's read: every byte of p[0, n) OR-ed together */
#if defined(__x86_64__)
__attribute__((target("avx2"))) uint64_t
or_bytes_avx2(const uint8_t *p, size_t n)
{
    __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
        a = _mm256_or_si256(a, _mm256_loadu_si256((const __m256i *)(p + i)));
        b = _mm256_or_si256(b, _mm256_loadu_si256((const __m256i *)(p + i + 32)));
        c = _mm256_or_si256(c, _mm256_loadu_si256((const __m256i *)(p + i + 64)));
        d = _mm256_or_si256(d, _mm256_loadu_si256((const __m256i *)(p + i + 96)));
    }
    a = _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d));
    uint64_t r = (uint64_t)_mm256_extract_epi64(a, 0) | (uint64_t)_mm256_extract_epi64(a, 1) |
                 (uint64_t)_mm256_extract_epi64(a, 2) | (uint64_t)_mm256_extract_epi64(a, 3);
    for (; i < n; i++)
        r |= p[i];
    return r;
}
#endif

uint64_t
or_bytes(const uint8_t *p, size_t n)
{
#if defined(__x86_64__)
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2)
        return or_bytes_avx2(p, n);
#endif
    uint64_t r = 0, w;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::memcpy(&w, p + i, 8);
        r |= w;
    }
    for (; i < n; i++)
        r |= p[i];
    return r;
}

/* the floor's copy: 32 bytes a load and a store (memcpy's own choice,
 * `rep movsb` for kilobytes, is slower on some placements of the two
 * buffers) */
#if defined(__x86_64__)
__attribute__((target("avx2"))) void
copy_bytes_avx2(uint8_t *d, const uint8_t *p, size_t n)
{
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(p + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(p + i + 32));
        _mm256_storeu_si256((__m256i *)(d + i), a);
        _mm256_storeu_si256((__m256i *)(d + i + 32), b);
    }
    std::memcpy(d + i, p + i, n - i);
}
#endif

void
copy_bytes(uint8_t *d, const uint8_t *p, size_t n)
{
#if defined(__x86_64__)
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2) {
        copy_bytes_avx2(d, p, n);
        return;
    }
#endif
    std::memcpy(d, p, n);
}

/* the floor contender (see the top): its read, then its copy */
inline size_t
floor_one(const Str &s, uint8_t *dst, int kind)
{
    const size_t storage = s.n * (size_t)kind;
    const uint64_t r = or_bytes((const uint8_t *)s.units, storage);
    copy_bytes(dst, (const uint8_t *)s.units, std::min(s.u8len, storage));
    return (size_t)(r & 1) + s.u8len;
}

/* one call of contender c on s, for the check: the bytes written and the
 * length pass's result */
void
call_once(const Contender &c, int kind, const Str &s, uint8_t *dst, size_t *len, size_t *w,
          size_t *ns, size_t *done)
{
    *ns = 0;
    *done = s.n;
    if (c.type == C_U8P) {
        *w = kind == 1   ? u8p_encode<1>(c.k, s, dst, len, ns, done)
             : kind == 2 ? u8p_encode<2>(c.k, s, dst, len, ns, done)
                         : u8p_encode<4>(c.k, s, dst, len, ns, done);
        return;
    }
    const char16_t *p16 = (const char16_t *)s.units;
    const char32_t *p32 = (const char32_t *)s.units;
    char *d = (char *)dst;
    bool chk = c.type == C_SD_CHECKED;
    if (kind == 1) {
        *len = simdutf::utf8_length_from_latin1((const char *)s.units, s.n);
        *w = simdutf::convert_latin1_to_utf8((const char *)s.units, s.n, d);
    } else if (kind == 2) {
        *len = simdutf::utf8_length_from_utf16le(p16, s.n);
        *w = chk ? simdutf::convert_utf16le_to_utf8(p16, s.n, d)
                 : simdutf::convert_valid_utf16le_to_utf8(p16, s.n, d);
    } else {
        *len = simdutf::utf8_length_from_utf32(p32, s.n);
        *w = chk ? simdutf::convert_utf32_to_utf8(p32, s.n, d)
                 : simdutf::convert_valid_utf32_to_utf8(p32, s.n, d);
    }
}

/* ---- timing ---- */

template <int KIND>
double
run_kind(const Contender &c, const Workload &w, uint8_t *dst, long rounds)
{
    switch (c.type) {
    case C_U8P: {
        const u8p_kernels *k = c.k;
        return loop(w, dst, rounds,
                    [k](const Str &s, uint8_t *d) { return u8p_one<KIND>(k, s, d); });
    }
    case C_SD_VALID:
        return loop(w, dst, rounds,
                    [](const Str &s, uint8_t *d) { return sd_one<KIND, false>(s, d); });
    case C_FLOOR:
        return loop(w, dst, rounds, [](const Str &s, uint8_t *d) { return floor_one(s, d, KIND); });
    case C_SD_CHECKED:
    default:
        if (KIND == 1)
            die("no checked simdutf converter for Latin-1");
        /* (KIND 1 never gets here; the template needs a UTF-16/32 kind) */
        return loop(w, dst, rounds, [](const Str &s, uint8_t *d) {
            return sd_one<KIND == 1 ? 2 : KIND, true>(s, d);
        });
    }
}

double
run(const Contender &c, const Workload &w, uint8_t *dst, long rounds)
{
    return by_kind(w.kind, [&](auto k) { return run_kind<decltype(k)::value>(c, w, dst, rounds); });
}

/* ---- check ---- */

/* every contender on every string: its length pass, its byte count, no
 * write outside the UTF-8, then its bytes against every other contender's
 * (the brief: identical bytes) and against CPython's */
void
verify(const std::vector<Contender> &cs, const Workload &w, uint8_t *buf, size_t cap)
{
    char msg[640];
    std::vector<std::vector<uint8_t>> outs(cs.size());
    for (size_t i = 0; i < w.s.size(); i++) {
        const Str &s = w.s[i];
        int first = -1;
        for (size_t ci = 0; ci < cs.size(); ci++) {
            const Contender &c = cs[ci];
            outs[ci].clear();
            if ((c.type == C_SD_CHECKED && w.kind == 1) || c.type == C_FLOOR)
                continue; /* not run on this kind; not an encoder */
            size_t len, wr, ns, done;
            if (s.pfx + s.u8len + 64 > cap)
                die("internal: buffer too small");
            std::memset(buf, 0xA5, s.pfx + s.u8len + 64);
            call_once(c, w.kind, s, buf + s.pfx, &len, &wr, &ns, &done);
            const char *bad = nullptr;
            if (len != s.u8len)
                bad = "its length pass gives a different UTF-8 length";
            else if (ns != 0 || done != s.n)
                bad = "it reports a surrogate";
            else if (wr != s.u8len)
                bad = "its encoder returns a different byte count";
            for (size_t j = 0; !bad && j < s.pfx; j++)
                if (buf[j] != 0xA5)
                    bad = "it wrote before its output";
            for (size_t j = 0; !bad && j < 64; j++)
                if (buf[s.pfx + s.u8len + j] != 0xA5)
                    bad = "it wrote past its output";
            if (bad) {
                std::snprintf(msg, sizeof msg,
                              "%s, string %zu (%zu code points, UTF-8 %zu bytes): %s "
                              "(length %zu, written %zu, surrogates %zu, done %zu)",
                              w.name.c_str(), i, s.n, s.u8len, bad, len, wr, ns, done);
                die(("MISMATCH: " + c.label).c_str(), msg);
            }
            outs[ci].assign(buf + s.pfx, buf + s.pfx + wr);
            if (first < 0)
                first = (int)ci;
        }
        bool all_same = true;
        for (size_t ci = 0; ci < cs.size(); ci++) {
            if (outs[ci].empty() && s.u8len)
                continue; /* not run on this kind */
            if (outs[ci] != outs[first]) {
                all_same = false;
                std::snprintf(msg, sizeof msg,
                              "%s, string %zu (%zu code points, UTF-8 %zu bytes): %s and %s "
                              "give different bytes (first difference at byte %zu); CPython's "
                              "str.encode() agrees with %s",
                              w.name.c_str(), i, s.n, s.u8len, cs[first].label.c_str(),
                              cs[ci].label.c_str(),
                              first_diff(outs[first].data(), outs[first].size(),
                                         outs[ci].data(), outs[ci].size()),
                              std::memcmp(outs[first].data(), s.ref, s.u8len) == 0
                                  ? cs[first].label.c_str()
                                  : std::memcmp(outs[ci].data(), s.ref, s.u8len) == 0
                                        ? cs[ci].label.c_str()
                                        : "neither");
                die("MISMATCH", msg);
            }
        }
        if (all_same && std::memcmp(outs[first].data(), s.ref, s.u8len) != 0) {
            std::snprintf(msg, sizeof msg,
                          "%s, string %zu (%zu code points, UTF-8 %zu bytes): every contender "
                          "gives the same bytes, but they differ from CPython's str.encode() "
                          "(first difference at byte %zu)",
                          w.name.c_str(), i, s.n, s.u8len,
                          first_diff(outs[first].data(), s.u8len, s.ref, s.u8len));
            die("MISMATCH", msg);
        }
    }
}

/* ---- header ---- */

std::string
cpu_name()
{
    std::string out;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    char vendor[13] = {0};
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        std::memcpy(vendor, &b, 4);
        std::memcpy(vendor + 4, &d, 4);
        std::memcpy(vendor + 8, &c, 4);
        __cpuid(1, a, b, c, d);
        unsigned fam = (a >> 8) & 0xF, model = (a >> 4) & 0xF, step = a & 0xF;
        if (fam == 0xF)
            fam += (a >> 20) & 0xFF;
        if (fam == 0x6 || fam >= 0xF)
            model |= ((a >> 16) & 0xF) << 4;
        char brand[49] = {0};
        unsigned maxext = __get_cpuid_max(0x80000000, nullptr);
        if (maxext >= 0x80000004) {
            for (unsigned i = 0; i < 3; i++) {
                __cpuid(0x80000002 + i, a, b, c, d);
                std::memcpy(brand + 16 * i, &a, 4);
                std::memcpy(brand + 16 * i + 4, &b, 4);
                std::memcpy(brand + 16 * i + 8, &c, 4);
                std::memcpy(brand + 16 * i + 12, &d, 4);
            }
        }
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s family %u (0x%x) model %u (0x%x) stepping %u, \"%s\"",
                      vendor, fam, fam, model, model, step, brand);
        out = buf;
    }
#endif
    if (out.empty()) {
        FILE *f = std::fopen("/proc/cpuinfo", "r");
        char line[256];
        while (f && std::fgets(line, sizeof line, f)) {
            if (!std::strncmp(line, "model name", 10) || !std::strncmp(line, "CPU part", 8)
                || !std::strncmp(line, "CPU implementer", 15)) {
                line[std::strcspn(line, "\n")] = 0;
                out += (out.empty() ? "" : "; ") + std::string(line);
                if (out.size() > 120)
                    break;
            }
        }
        if (f)
            std::fclose(f);
    }
    return out.empty() ? "unknown" : out;
}


/* ---- decoders: validate and transcode UTF-8 into the str's storage ---- */

/* simdutf's count, then its validating converter into the storage the
 * workload's kind names (returns 0 on invalid input) */
template <int KIND>
inline size_t
sd_dec_one(const Str &s, uint8_t *dst)
{
    const char *p = (const char *)s.ref;
    size_t n = s.u8len, len, w;
    if (KIND == 1) {
        len = simdutf::latin1_length_from_utf8(p, n);
        w = simdutf::convert_utf8_to_latin1(p, n, (char *)dst);
    } else if (KIND == 2) {
        len = simdutf::utf16_length_from_utf8(p, n);
        w = simdutf::convert_utf8_to_utf16le(p, n, (char16_t *)dst);
    } else {
        len = simdutf::utf32_length_from_utf8(p, n);
        w = simdutf::convert_utf8_to_utf32(p, n, (char32_t *)dst);
    }
    return (len == w) ? w : 0;
}

struct DContender {
    std::string label;
    const u8p_dec_kernels *k; /* nullptr: simdutf */
};

template <int KIND>
double
dec_run_kind(const DContender &c, const Workload &w, uint8_t *dst, long rounds)
{
    const u8p_dec_kernels *k = c.k;
    /* loop() offsets dst by the prefix room; a decoder's output is a new
     * str's data, 16-byte aligned or 8 mod 16: the offset is taken back */
    if (k)
        return loop(w, dst, rounds,
                    [k](const Str &s, uint8_t *d) { return u8p_dec_one(k, s, d - s.pfx); });
    return loop(w, dst, rounds,
                [](const Str &s, uint8_t *d) { return sd_dec_one<KIND>(s, d - s.pfx); });
}

double
dec_run(const DContender &c, const Workload &w, uint8_t *dst, long rounds)
{
    return by_kind(w.kind,
                   [&](auto k) { return dec_run_kind<decltype(k)::value>(c, w, dst, rounds); });
}

/* every decoder on every string: the code points and the storage must be
 * the str's own, nothing written past them (past the room the reader gives
 * a long Latin-1 payload, a code point a byte, before it shrinks the str) */
void
dec_verify(const std::vector<DContender> &cs, const Workload &w, uint8_t *buf, size_t cap)
{
    for (const DContender &c : cs) {
        for (size_t i = 0; i < w.s.size(); i++) {
            const Str &s = w.s[i];
            size_t bytes = s.n * (size_t)w.kind, got;
            std::memset(buf, 0xA5, cap);
            got = c.k ? u8p_dec_one(c.k, s, buf) : (size_t)by_kind(w.kind, [&](auto k) {
                return (double)sd_dec_one<decltype(k)::value>(s, buf);
            });
            char msg[256];
            std::snprintf(msg, sizeof msg, "%s, %s string %zu", c.label.c_str(), w.name.c_str(), i);
            if (got != s.n)
                die("decoder returned the wrong number of code points", msg);
            if (std::memcmp(buf, s.units, bytes) != 0)
                die("decoded code units differ from the str's", msg);
            const size_t room =
                c.k && w.kind == 1 && s.u8len >= RD_UCS1_ROOMY ? std::max(bytes, s.u8len) : bytes;
            for (size_t j = room; j < cap; j++)
                if (buf[j] != 0xA5)
                    die("decoder wrote past the str's storage", msg);
        }
    }
}

/* The decode table: every decoder table the CPU runs against simdutf's
 * validating converters; returns whether every long row is no slower. */
bool
dec_table(const std::vector<Workload> &ws, int repeats, double min_loop)
{
    const u8p_dec_kernels *def = u8p_select_dec_kernels(nullptr);
    std::vector<DContender> cs;
    int def_idx = -1;
    for (int lv = U8P_ISA_SCALAR; lv < U8P_ISA_COUNT; lv++) {
        const u8p_dec_kernels *t[4];
        int nt = u8p_dec_kernels_variants((u8p_isa)lv, t, 4);
        for (int j = 0; j < nt; j++) {
            if (t[j] == def)
                def_idx = (int)cs.size();
            /* the ids _set_decode_isa takes: avx512-mixed, -vbmi2, -bw */
            cs.push_back({u8p_dec_kernels_id(t[j]), t[j]});
        }
    }
    if (def_idx < 0)
        die("internal: the default decoder table is not one of the levels");
    int sd_idx = (int)cs.size();
    cs.push_back({"simdutf", nullptr});

    size_t cap = 0;
    for (const Workload &w : ws)
        for (const Str &s : w.s)
            cap = std::max(cap, std::max(s.n * (size_t)w.kind, s.u8len) + 64);
    uint8_t *buf = (uint8_t *)std::aligned_alloc(64, (cap + 63) / 64 * 64 + 64);
    if (!buf)
        die("out of memory");
    for (const Workload &w : ws)
        dec_verify(cs, w, buf, cap);

    std::printf("\ndecoders: UTF-8 -> the str's storage, validated; utf8pfx as BufferReader "
                "does it (up to 64 bytes its short paths; from 64, fused ASCII copy, prescan + "
                "validating Latin-1, else scan + transcode: it finds the storage class "
                "itself), default table %s; simdutf: "
                "latin1/utf16/utf32_length_from_utf8 + convert_utf8_to_latin1 / "
                "convert_utf8_to_utf16le / convert_utf8_to_utf32 (validating; told the "
                "target)\n",
                def->name);
    std::printf("verified: every decoder gives the str's code units, nothing written past "
                "them\n\n");
    std::printf("%-20s %4s %5s %8s |", "workload", "kind", "nstr", "B/str");
    for (const DContender &c : cs)
        if (c.k)
            std::printf(" %12s", (c.label + (c.k == def ? "*" : "")).c_str());
    std::printf(" | %9s | %6s %6s %6s\n", "simdutf", "ratio", "med", "target");
    bool all_met = true;
    /* loop() adds the prefix room and dec_run_kind takes it back: every
     * contender's output starts 64-byte aligned */
    uint8_t *dst = buf;
    for (const Workload &w : ws) {
        size_t nc = cs.size();
        std::vector<long> rounds(nc, 1);
        std::vector<std::vector<double>> samples(nc);
        for (size_t c = 0; c < nc; c++)
            for (;;) {
                double t = dec_run(cs[c], w, dst, rounds[c]) * (double)rounds[c] * (double)w.s.size();
                if (t >= min_loop || rounds[c] >= (1L << 20))
                    break;
                rounds[c] *= 2;
            }
        for (int r = 0; r < repeats; r++)
            for (size_t j = 0; j < nc; j++) {
                size_t c = (j + (size_t)r) % nc;
                samples[c].push_back(dec_run(cs[c], w, dst, rounds[c]));
            }
        std::vector<double> best(nc), med(nc);
        for (size_t c = 0; c < nc; c++) {
            best[c] = *std::min_element(samples[c].begin(), samples[c].end()) * 1e9;
            med[c] = median(samples[c]) * 1e9;
        }
        double ratio = best[def_idx] / best[sd_idx], mratio = med[def_idx] / med[sd_idx];
        bool met = ratio <= 1.0;
        if (!w.is_short)
            all_met = all_met && met;
        tsv_row("decode", w, ratio, mratio, 1.0);
        std::printf("%-20s ucs%d %5zu %8zu |", w.name.c_str(), w.kind, w.s.size(),
                    w.bytes / w.s.size());
        for (size_t c = 0; c < nc; c++)
            if (cs[c].k)
                std::printf(" %12.1f", best[c]);
        std::printf(" | %9.1f | %6.3f %6.3f %6s\n", best[sd_idx], ratio, mratio,
                    w.is_short ? (met ? "(met)" : "(-)") : met ? "met" : "MISSED");
        std::fflush(stdout);
    }
    std::printf("\ncolumns: ns per string, best of %d; ratio = utf8pfx default / simdutf "
                "time (< 1: utf8pfx faster); target: long rows no slower than simdutf "
                "(ratio <= 1.0; the short row, which takes the reader's short paths, is "
                "shown for scale)\n",
                repeats);
    std::printf("decode targets: %s\n", all_met ? "all met" : "some MISSED");
    std::free(buf);
    return all_met;
}
} // namespace

int
main(int argc, char **argv)
{
    const char *input = nullptr, *rev = "unknown";
    prog = "vs_simdutf";
    int repeats = 300;
    bool no_decode = false;
    double min_loop = 20e-6;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--simdutf-rev") && i + 1 < argc)
            rev = argv[++i];
        else if (!std::strcmp(argv[i], "--no-decode"))
            no_decode = true;
        else if (!std::strcmp(argv[i], "--tsv") && i + 1 < argc) {
            tsv_out = std::fopen(argv[++i], "w");
            if (!tsv_out)
                die("cannot write", argv[i]);
        }
        else if (!std::strcmp(argv[i], "--min-loop-us") && i + 1 < argc)
            min_loop = std::atof(argv[++i]) * 1e-6;
        else if (argv[i][0] != '-' && !input)
            input = argv[i];
        else {
            std::fprintf(stderr, "usage: %s INPUT.bin [--repeats N] [--min-loop-us US] "
                                 "[--simdutf-rev TEXT] [--no-decode] [--tsv PATH]\n", argv[0]);
            return 2;
        }
    }
    if (!input) {
        std::fprintf(stderr, "usage: %s INPUT.bin [--repeats N] [--simdutf-rev TEXT]\n", argv[0]);
        return 2;
    }
    if (repeats < 1)
        repeats = 1;
    std::vector<Workload> ws = load(input);

    /* contenders: every utf8pfx level the CPU runs, then simdutf */
    const u8p_kernels *def = u8p_select_kernels(nullptr);
    std::vector<Contender> cs;
    int def_idx = -1, avx2_idx = -1;
    const u8p_kernels *tables[16];
    int ntables = u8p_kernel_tables(tables, 16);
    for (int t = 0; t < ntables; t++) {
        const u8p_kernels *k = tables[t];
        if (k == def)
            def_idx = (int)cs.size();
        if (!std::strcmp(k->name, "avx2"))
            avx2_idx = (int)cs.size();
        cs.push_back({std::string("utf8pfx ") + u8p_kernels_id(k), C_U8P, k});
    }
    if (def_idx < 0)
        die("internal: the default kernel table is not one of the levels");
    int sd_idx = (int)cs.size();
    cs.push_back({"simdutf", C_SD_VALID, nullptr});
    int sdc_idx = (int)cs.size();
    cs.push_back({"simdutf checked", C_SD_CHECKED, nullptr});
    int floor_idx = (int)cs.size();
    cs.push_back({"floor", C_FLOOR, nullptr});

    const simdutf::implementation *impl = simdutf::get_active_implementation();
    std::string levels;
    for (const Contender &c : cs)
        if (c.type == C_U8P)
            levels += (levels.empty() ? "" : ", ") + std::string(u8p_kernels_id(c.k));
    std::printf("cpu:      %s\n", cpu_name().c_str());
    std::printf("utf8pfx:  kernel tables on this CPU: %s; default (u8p_select_kernels): %s\n",
                levels.c_str(), u8p_kernels_id(def));
    std::printf("simdutf:  %s, commit %s; active implementation: %s (%s)\n", SIMDUTF_VERSION,
                rev, std::string(impl->name()).c_str(), std::string(impl->description()).c_str());
    std::printf("simdutf converters: latin1: utf8_length_from_latin1 + convert_latin1_to_utf8; "
                "ucs2: utf8_length_from_utf16le + convert_valid_utf16le_to_utf8; "
                "ucs4: utf8_length_from_utf32 + convert_valid_utf32_to_utf8 "
                "(\"checked\": convert_utf16le_to_utf8 / convert_utf32_to_utf8)\n");

    size_t cap = 0;
    for (const Workload &w : ws)
        for (const Str &s : w.s)
            cap = std::max(cap, s.pfx + s.u8len + 64);
    uint8_t *buf = (uint8_t *)std::aligned_alloc(64, (cap + 63) / 64 * 64);
    if (!buf)
        die("out of memory");

    size_t nchecked = 0;
    for (const Workload &w : ws) {
        if (w.s.empty())
            die("workload without strings", w.name);
        verify(cs, w, buf, cap);
        nchecked += w.s.size();
    }
    std::printf("verified: %zu strings in %zu workload(s), every contender's length and bytes "
                "equal CPython's str.encode() (identical across contenders), no write outside "
                "the UTF-8\n",
                nchecked, ws.size());
    std::printf("method:   best of %d loops per contender (each >= %.0f us, every string of the "
                "workload per pass), contenders interleaved; ns per string\n\n",
                repeats, min_loop * 1e6);

    /* table */
    std::printf("%-20s %4s %5s %6s %8s |", "workload", "kind", "nstr", "cp/str", "B/str");
    for (const Contender &c : cs)
        if (c.type == C_U8P)
            std::printf(" %9s", (std::string(u8p_kernels_id(c.k)) + (c.k == def ? "*" : "")).c_str());
    std::printf(" | %9s %9s %9s | %6s %6s %6s %6s %6s\n", "simdutf", "sd chk", "floor", "ratio",
                "med", "avx2/sd", "fl/sd", "target");
    std::fflush(stdout);

    bool all_met = true;
    for (const Workload &w : ws) {
        size_t nc = cs.size();
        std::vector<long> rounds(nc, 1);
        std::vector<std::vector<double>> samples(nc);
        std::vector<bool> skip(nc, false);
        if (w.kind == 1)
            skip[sdc_idx] = true;
        /* warm up and calibrate: rounds per loop so a loop takes >= min_loop */
        for (size_t c = 0; c < nc; c++) {
            if (skip[c])
                continue;
            for (;;) {
                double t = run(cs[c], w, buf, rounds[c]) * (double)rounds[c] * (double)w.s.size();
                if (t >= min_loop || rounds[c] >= (1L << 20))
                    break;
                rounds[c] *= 2;
            }
        }
        for (int r = 0; r < repeats; r++) {
            for (size_t j = 0; j < nc; j++) {
                size_t c = (j + (size_t)r) % nc; /* rotate the order */
                if (!skip[c])
                    samples[c].push_back(run(cs[c], w, buf, rounds[c]));
            }
        }
        std::vector<double> best(nc, 0), med(nc, 0);
        for (size_t c = 0; c < nc; c++) {
            if (skip[c])
                continue;
            best[c] = *std::min_element(samples[c].begin(), samples[c].end()) * 1e9;
            med[c] = median(samples[c]) * 1e9;
        }
        double ratio = best[def_idx] / best[sd_idx];
        double mratio = med[def_idx] / med[sd_idx];
        double limit = w.is_short ? 1.0 : 1.0 / 1.2;
        bool met = ratio <= limit;
        all_met = all_met && met;
        tsv_row("encode", w, ratio, mratio, limit);
        std::printf("%-20s ucs%d %5zu %6zu %8zu |", w.name.c_str(), w.kind, w.s.size(),
                    w.cps / w.s.size(), w.bytes / w.s.size());
        for (size_t c = 0; c < nc; c++)
            if (cs[c].type == C_U8P)
                std::printf(" %9.1f", best[c]);
        if (skip[sdc_idx])
            std::printf(" | %9.1f %9s", best[sd_idx], "-");
        else
            std::printf(" | %9.1f %9.1f", best[sd_idx], best[sdc_idx]);
        std::printf(" %9.1f | %6.3f %6.3f", best[floor_idx], ratio, mratio);
        if (avx2_idx >= 0)
            std::printf(" %7.3f", best[avx2_idx] / best[sd_idx]);
        else
            std::printf(" %7s", "-");
        const double fl = best[floor_idx] / best[sd_idx];
        std::printf(" %6.3f %6s%s\n", fl, met ? "met" : "MISSED",
                    !met && !w.is_short && fl > limit ? " (below the floor)" : "");
        std::fflush(stdout);
    }
    std::printf("\ncolumns: per-level columns (* = the default level) and simdutf = best ns "
                "per string; ratio = utf8pfx %s (default) / simdutf, time (< 1: utf8pfx "
                "faster); med = the same from the medians; avx2/sd = utf8pfx avx2 / simdutf; "
                "floor = one read of the storage + a copy of the UTF-8's size, fl/sd = floor / "
                "simdutf (on long rows, the least ratio any count-then-encode reaches here); "
                "target: long rows ratio <= 0.833 (1.2x faster), short rows <= 1.0\n",
                def->name);
    std::printf("targets: %s\n", all_met ? "all met" : "some MISSED");
    if (!no_decode)
        dec_table(ws, repeats, min_loop);
    if (tsv_out && std::fclose(tsv_out) != 0)
        die("cannot write the --tsv file");
    return 0;
}
