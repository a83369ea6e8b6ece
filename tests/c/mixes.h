/*
 * The classes of code points the kernel harnesses generate, and the mixes
 * of them both the encode and the decode harness run (test_kernels.c,
 * test_decode_kernels.c); each harness draws the code points of a class
 * itself (cp_of).
 */
#ifndef U8P_TEST_MIXES_H
#define U8P_TEST_MIXES_H

enum { C_ASCII, C_LATIN1, C_TWO, C_THREE, C_SURR, C_ASTRAL, C_EDGE, C_NCLASS };
static const char *const class_names[C_NCLASS] = {
    "ascii", "latin1", "2byte", "3byte", "surr", "astral", "edge",
};

/* A mix: probability (in 1/1000) of each class; the rest is ASCII. */
typedef struct {
    const char *name;
    int permille[C_NCLASS];
} mix;

static const mix mixes[] = {
    {"ascii", {1000, 0, 0, 0, 0, 0}},
    {"latin1-sparse", {950, 50, 0, 0, 0, 0}},
    {"latin1-dense", {300, 700, 0, 0, 0, 0}},
    {"2byte", {100, 0, 900, 0, 0, 0}},
    {"3byte", {50, 0, 50, 900, 0, 0}},
    {"astral-mix", {500, 0, 50, 100, 0, 350}},
    {"all", {300, 100, 150, 200, 20, 230}},
    {"surr-sparse", {400, 0, 200, 390, 10, 0}},
    {"surr-dense", {300, 0, 0, 200, 500, 0}},
    {"edges", {300, 0, 0, 0, 0, 0, 700}},
};
#define NMIX (sizeof mixes / sizeof mixes[0])

#endif /* U8P_TEST_MIXES_H */
