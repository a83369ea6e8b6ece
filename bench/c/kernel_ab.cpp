/*
 * Two builds of utf8pfx's kernels in one process, A (a base tree) and B
 * (this tree), timed in alternation over the corpus workloads of
 * vs_simdutf: did a kernel change make anything faster or slower?  Built
 * and run by bench/kernel_ab.py, which compiles each tree's csrc/kernels,
 * links each build into one object and prefixes every symbol it defines
 * ("A_", "B_"), so both link into this program side by side.
 *
 *   kernel_ab INPUT.bin [--repeats N] [--min-loop-us US] [--table ID]
 *             [--dec-table ID] [--tsv PATH]
 *
 * INPUT.bin: vs_simdutf's input file (its format: vs_simdutf.cpp).  --table
 * and --dec-table name an encode and a decode table by the ids the testing
 * hook takes (u8p_kernels_id, u8p_dec_kernels_id: "avx2", "avx512-mixed",
 * ...); by default each side's own default choice for this CPU.  --tsv
 * also writes each row as workload, row, A ns, B ns, B/A, p25, p75
 * (tab-separated) for the driver.
 *
 * Rows, per workload, each timed over every string of the workload:
 *   enc      the encoder alone, as the writer's one pass runs it (UCS1 its
 *            encoder, UCS2 and UCS4 the pass forms)
 *   len+enc  the length pass, then the encoder (vs_simdutf's utf8pfx
 *            column: the writer's path when it counts first)
 *   dec      UTF-8 back into the str's storage as the reader does it
 *            (vs_simdutf's decoders' utf8pfx column)
 * Before timing, both sides must give CPython's bytes (encode) and the
 * str's code units (decode) for every string, or the program exits 1.
 *
 * Timing: per row, the loop count is calibrated on A (a loop of at least
 * --min-loop-us) and used for both; then --repeats rounds, each timing A
 * and B once, the order flipped every round, so that both sample the same
 * moments of a shared machine.  Printed: the medians of A's and B's ns per
 * string, and B/A as the median of the per-round ratios with its
 * interquartile range.  Both sides run the same code around the kernels
 * (the calls of kernel_calls.h through a table pointer): comparing a tree
 * with itself gives 1.00 on every row, which is the harness's own check.
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "decode.h"
#include "decode_short.h"
#include "kernels.h"

#include "kernel_calls.h"

/* each build's entry points, renamed by the driver */
#define KAB_SIDE_DECLS(P)                                                                    \
    int P##u8p_kernel_tables(const u8p_kernels **out, int max);                              \
    const char *P##u8p_kernels_id(const u8p_kernels *k);                                     \
    const u8p_kernels *P##u8p_select_kernels(const char *cap);                               \
    int P##u8p_dec_kernels_variants(u8p_isa level, const u8p_dec_kernels **out, int max);    \
    const char *P##u8p_dec_kernels_id(const u8p_dec_kernels *k);                             \
    const u8p_dec_kernels *P##u8p_select_dec_kernels(const char *cap);

extern "C" {
KAB_SIDE_DECLS(A_)
KAB_SIDE_DECLS(B_)
}

namespace {

struct Side {
    const char *label;
    int (*tables)(const u8p_kernels **, int);
    const char *(*id)(const u8p_kernels *);
    const u8p_kernels *(*select)(const char *);
    int (*dec_variants)(u8p_isa, const u8p_dec_kernels **, int);
    const char *(*dec_id)(const u8p_dec_kernels *);
    const u8p_dec_kernels *(*dec_select)(const char *);
    const u8p_kernels *k = nullptr;
    const u8p_dec_kernels *dk = nullptr;
};

#define KAB_SIDE(P, L)                                                                       \
    Side                                                                                     \
    {                                                                                        \
        L, P##u8p_kernel_tables, P##u8p_kernels_id, P##u8p_select_kernels,                   \
            P##u8p_dec_kernels_variants, P##u8p_dec_kernels_id, P##u8p_select_dec_kernels    \
    }

/* the table among `cands` whose id is `want`, or exit 1 naming the ids */
template <class T>
const T *
by_id(const Side &sd, const char *what, const char *want,
      const std::vector<std::pair<std::string, const T *>> &cands)
{
    std::string have;
    for (const auto &c : cands) {
        if (c.first == want)
            return c.second;
        have += (have.empty() ? "" : ", ") + c.first;
    }
    die((std::string(sd.label) + " has no " + what + " table \"" + want + "\" on this CPU")
            .c_str(),
        "it has " + have);
}

/* the encode and decode tables `want` and `dec_want` name (NULL: the
 * side's default), or exit 1 */
void
choose_tables(Side &sd, const char *want, const char *dec_want)
{
    std::vector<std::pair<std::string, const u8p_kernels *>> enc;
    const u8p_kernels *t[16];
    for (int i = 0, n = sd.tables(t, 16); i < n; i++)
        enc.emplace_back(sd.id(t[i]), t[i]);
    std::vector<std::pair<std::string, const u8p_dec_kernels *>> dec;
    for (int lv = U8P_ISA_SCALAR; lv < U8P_ISA_COUNT; lv++) {
        const u8p_dec_kernels *d[4];
        for (int i = 0, n = sd.dec_variants((u8p_isa)lv, d, 4); i < n; i++)
            dec.emplace_back(sd.dec_id(d[i]), d[i]);
    }
    sd.k = want ? by_id(sd, "encode", want, enc) : sd.select(nullptr);
    sd.dk = dec_want ? by_id(sd, "decode", dec_want, dec) : sd.dec_select(nullptr);
}

enum Row { R_ENC, R_LENENC, R_DEC, R_COUNT };
const char *const ROW_NAME[R_COUNT] = {"enc", "len+enc", "dec"};

/* the encoder alone, as the writer's one pass calls it */
template <int KIND>
inline size_t
enc_alone(const u8p_kernels *k, const Str &s, uint8_t *dst)
{
    if (KIND == 1)
        return k->enc_ucs1((const uint8_t *)s.units, s.n, dst);
    int surr = 0;
    size_t w = KIND == 2 ? k->enc_ucs2_pass((const uint16_t *)s.units, s.n, dst, &surr)
                         : k->enc_ucs4_pass((const uint32_t *)s.units, s.n, dst, &surr);
    return w + (size_t)surr;
}

template <int KIND>
double
run_kind(const Side &sd, Row row, const Workload &w, uint8_t *dst, long rounds)
{
    const u8p_kernels *k = sd.k;
    const u8p_dec_kernels *dk = sd.dk;
    switch (row) {
    case R_ENC:
        return loop(w, dst, rounds,
                    [k](const Str &s, uint8_t *d) { return enc_alone<KIND>(k, s, d); });
    case R_LENENC:
        return loop(w, dst, rounds,
                    [k](const Str &s, uint8_t *d) { return u8p_one<KIND>(k, s, d); });
    default:
        /* loop() offsets dst by the prefix room: a str's data is taken back
         * to where the buffer starts, as vs_simdutf's decoders do */
        return loop(w, dst, rounds,
                    [dk](const Str &s, uint8_t *d) { return u8p_dec_one(dk, s, d - s.pfx); });
    }
}

double
run(const Side &sd, Row row, const Workload &w, uint8_t *dst, long rounds)
{
    return by_kind(w.kind,
                   [&](auto k) { return run_kind<decltype(k)::value>(sd, row, w, dst, rounds); });
}

/* both sides on every string of w: CPython's bytes, the str's code units */
void
verify(const Side &sd, const Workload &w, uint8_t *buf, size_t cap)
{
    char msg[320];
    for (size_t i = 0; i < w.s.size(); i++) {
        const Str &s = w.s[i];
        std::snprintf(msg, sizeof msg, "%s, %s string %zu (%zu code points, UTF-8 %zu bytes)",
                      sd.label, w.name.c_str(), i, s.n, s.u8len);
        for (int row = R_ENC; row <= R_LENENC; row++) {
            std::memset(buf, 0xA5, cap);
            size_t wr = by_kind(w.kind, [&](auto k) {
                constexpr int K = decltype(k)::value;
                return (double)(row == R_ENC ? enc_alone<K>(sd.k, s, buf)
                                             : u8p_one<K>(sd.k, s, buf) - s.u8len);
            });
            if (wr != s.u8len || std::memcmp(buf, s.ref, s.u8len) != 0)
                die((std::string("MISMATCH: ") + ROW_NAME[row] + " differs from CPython's "
                                                                 "str.encode()")
                        .c_str(),
                    msg);
        }
        std::memset(buf, 0xA5, cap);
        if (u8p_dec_one(sd.dk, s, buf) != s.n
            || std::memcmp(buf, s.units, s.n * (size_t)w.kind) != 0)
            die("MISMATCH: dec differs from the str's code units", msg);
    }
}

double
quantile(std::vector<double> v, double q)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[(size_t)(q * (double)(v.size() - 1) + 0.5)];
}

} // namespace

int
main(int argc, char **argv)
{
    prog = "kernel_ab";
    const char *input = nullptr, *table = nullptr, *dec_table = nullptr, *tsv = nullptr;
    int repeats = 200;
    double min_loop = 20e-6;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = std::atoi(argv[++i]);
        else if (!std::strcmp(argv[i], "--min-loop-us") && i + 1 < argc)
            min_loop = std::atof(argv[++i]) * 1e-6;
        else if (!std::strcmp(argv[i], "--table") && i + 1 < argc)
            table = argv[++i];
        else if (!std::strcmp(argv[i], "--dec-table") && i + 1 < argc)
            dec_table = argv[++i];
        else if (!std::strcmp(argv[i], "--tsv") && i + 1 < argc)
            tsv = argv[++i];
        else if (argv[i][0] != '-' && !input)
            input = argv[i];
        else
            input = nullptr, i = argc;
    }
    if (!input) {
        std::fprintf(stderr, "usage: %s INPUT.bin [--repeats N] [--min-loop-us US] "
                             "[--table ID] [--dec-table ID] [--tsv PATH]\n", argv[0]);
        return 2;
    }
    repeats = std::max(repeats, 1);
    std::vector<Workload> ws = load(input);
    FILE *out = tsv ? std::fopen(tsv, "w") : nullptr;
    if (tsv && !out)
        die("cannot write", tsv);

    Side sides[2] = {KAB_SIDE(A_, "A"), KAB_SIDE(B_, "B")};
    for (Side &sd : sides)
        choose_tables(sd, table, dec_table);
    if (std::strcmp(sides[0].id(sides[0].k), sides[1].id(sides[1].k))
        || std::strcmp(sides[0].dec_id(sides[0].dk), sides[1].dec_id(sides[1].dk)))
        std::printf("note: the two builds choose different tables on this CPU\n");
    std::printf("tables:  A encode %s, decode %s; B encode %s, decode %s\n",
                sides[0].id(sides[0].k), sides[0].dec_id(sides[0].dk), sides[1].id(sides[1].k),
                sides[1].dec_id(sides[1].dk));

    size_t cap = 0;
    for (const Workload &w : ws)
        for (const Str &s : w.s)
            cap = std::max(cap, std::max(s.n * (size_t)w.kind, s.pfx + s.u8len) + 64);
    cap = (cap + 63) / 64 * 64;
    uint8_t *buf = (uint8_t *)std::aligned_alloc(64, cap);
    if (!buf)
        die("out of memory");
    for (const Workload &w : ws)
        for (const Side &sd : sides)
            verify(sd, w, buf, cap);
    std::printf("verified: both builds give CPython's bytes and the strs' code units on every "
                "string\n");
    std::printf("method:   %d rounds per row, A and B once each, the order flipped every round; "
                "ns per string (medians); B/A = median of the per-round ratios, [p25, p75]\n\n",
                repeats);
    std::printf("%-20s %-8s %10s %10s %7s %15s\n", "workload", "row", "A ns", "B ns", "B/A",
                "[p25, p75]");

    std::vector<std::string> slower, faster;
    for (const Workload &w : ws) {
        for (int ri = 0; ri < R_COUNT; ri++) {
            const Row row = (Row)ri;
            long rounds = 1;
            for (;;) {
                double t = run(sides[0], row, w, buf, rounds) * (double)rounds
                           * (double)w.s.size();
                if (t >= min_loop || rounds >= (1L << 20))
                    break;
                rounds *= 2;
            }
            run(sides[1], row, w, buf, rounds); /* B's warm-up */
            std::vector<double> ta, tb, ratio;
            for (int r = 0; r < repeats; r++) {
                double t[2];
                for (int j = 0; j < 2; j++) {
                    const int side = (r & 1) ? 1 - j : j;
                    t[side] = run(sides[side], row, w, buf, rounds);
                }
                ta.push_back(t[0]);
                tb.push_back(t[1]);
                ratio.push_back(t[1] / t[0]);
            }
            const double m = quantile(ratio, 0.5);
            std::printf("%-20s %-8s %10.1f %10.1f %7.3f  [%.3f, %.3f]\n", w.name.c_str(),
                        ROW_NAME[row], quantile(ta, 0.5) * 1e9, quantile(tb, 0.5) * 1e9, m,
                        quantile(ratio, 0.25), quantile(ratio, 0.75));
            std::fflush(stdout);
            if (out)
                std::fprintf(out, "%s\t%s\t%.2f\t%.2f\t%.4f\t%.4f\t%.4f\n", w.name.c_str(),
                             ROW_NAME[row], quantile(ta, 0.5) * 1e9, quantile(tb, 0.5) * 1e9, m,
                             quantile(ratio, 0.25), quantile(ratio, 0.75));
            const std::string name = w.name + "/" + ROW_NAME[row];
            if (m > 1.05)
                slower.push_back(name);
            else if (m < 0.95)
                faster.push_back(name);
        }
    }
    auto list = [](const std::vector<std::string> &v) {
        std::string s;
        for (const std::string &x : v)
            s += (s.empty() ? "" : ", ") + x;
        return s.empty() ? std::string("none") : s;
    };
    std::printf("\nrows more than 5 %% slower in B: %s\n", list(slower).c_str());
    std::printf("rows more than 5 %% faster in B: %s\n", list(faster).c_str());
    if (out && std::fclose(out) != 0)
        die("cannot write", tsv);
    std::free(buf);
    return 0;
}
