/*
 * libFuzzer entry: the input's first byte picks the storage kind, the rest
 * is taken as UCS1 bytes, UCS2 units or UCS4 units (reduced modulo
 * 0x110000), and every level is diffed against the reference (check.h).
 *
 *   make -C tests/c fuzz && tests/c/fuzz_kernels -max_total_time=60
 * (clang -fsanitize=fuzzer,address,undefined over this file and every .c
 * file in csrc/kernels).
 *
 * Built with -DU8P_FUZZ_STANDALONE it has its own main(): arguments are
 * input files, or a number of random inputs to generate (any compiler).
 */
#include "check.h"

#define FUZZ_MAX 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint32_t units[FUZZ_MAX];
    static int ready;
    size_t n, i;
    int kind;

    if (!ready) {
        check_init(FUZZ_MAX);
        ready = 1;
    }
    if (size < 1)
        return 0;
    kind = data[0] % 3 == 0 ? 1 : data[0] % 3 == 1 ? 2 : 4;
    data++;
    size--;
    n = size / (size_t)kind;
    if (n > FUZZ_MAX)
        n = FUZZ_MAX;
    if (kind == 4) {
        for (i = 0; i < n; i++) {
            uint32_t c;
            memcpy(&c, data + 4 * i, 4);
            units[i] = c % 0x110000;
        }
    }
    else {
        memcpy(units, data, n * (size_t)kind);
    }
    if (check_case(kind, units, n, "fuzz"))
        abort();
    return 0;
}

#ifdef U8P_FUZZ_STANDALONE
static uint64_t st_rng = 88172645463325252ULL;

static uint64_t
st_rnd(void)
{
    st_rng ^= st_rng << 13;
    st_rng ^= st_rng >> 7;
    st_rng ^= st_rng << 17;
    return st_rng;
}

int
main(int argc, char **argv)
{
    static uint8_t buf[4 * 1024 + 1];
    long iters = 10000, it;
    int a;
    if (argc > 1 && strspn(argv[1], "0123456789") == strlen(argv[1]))
        iters = atol(argv[1]);
    else if (argc > 1) {
        for (a = 1; a < argc; a++) {
            FILE *f = fopen(argv[a], "rb");
            size_t len;
            if (!f) {
                perror(argv[a]);
                return 2;
            }
            len = fread(buf, 1, sizeof buf, f);
            fclose(f);
            LLVMFuzzerTestOneInput(buf, len);
        }
        return 0;
    }
    for (it = 0; it < iters; it++) {
        /* random bytes, biased so that UCS2/UCS4 units land in every range:
         * each byte drawn from a small palette half of the time */
        static const uint8_t palette[] = {0x00, 0x41, 0x7F, 0x80, 0xC3, 0xFF,
                                          0x07, 0xD8, 0xDF, 0x01, 0x10, 0x4E};
        size_t len = (size_t)(st_rnd() % sizeof buf), i;
        for (i = 0; i < len; i++) {
            uint64_t r = st_rnd();
            buf[i] = (r & 1) ? palette[(r >> 8) % sizeof palette] : (uint8_t)(r >> 16);
        }
        LLVMFuzzerTestOneInput(buf, len);
    }
    printf("fuzz standalone: %ld inputs, %ld mismatches\n", iters, check_failures);
    return check_failures ? 1 : 0;
}
#endif
