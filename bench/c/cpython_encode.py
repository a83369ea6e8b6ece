"""CPython's own str.encode('utf-8') on the inputs of bench_kernels.c (same
distributions, not the same random draws), in ns per code point, for
comparing with the kernels.

    python bench/c/cpython_encode.py

"same": one string encoded over and over (the branch predictor learns it,
which flatters CPython's branchy per-character loop); "rotating": 64
different strings in turn, closer to real traffic.  Best of many short
runs, as in bench_kernels.c.
"""
import random
import timeit

LETTERS = "abcdefghijklmnopqrstuvwxyz   ,."
ACCENTS = "éèàçùâêîôûëïüÿÉÀ"


def make(kind, n, rnd):
    out = []
    for _ in range(n):
        r = rnd.randrange(100)
        c = rnd.choice(LETTERS)
        if kind == "latin1" and r < 8:
            c = rnd.choice(ACCENTS)
        elif kind == "cyrillic" and r < 85:
            c = chr(0x430 + rnd.randrange(32))
        elif kind == "cjk":
            c = chr(0x4E00 + rnd.randrange(0x5200)) if r < 90 else rnd.choice(" ,.0123456789")
        elif kind == "emoji" and r < 20:
            c = chr(0x1F600 + rnd.randrange(0x50))
        out.append(c)
    return "".join(out)


def main():
    rnd = random.Random(1)
    print(f"{'input':9s} {'n':>5s} {'same':>9s} {'rotating':>9s}  (ns/cp)")
    for n in (4096, 200):
        for kind in ("ascii", "latin1", "cyrillic", "cjk", "emoji"):
            strs = [make(kind, n, rnd) for _ in range(64)]
            s0 = strs[0]
            num = max(1, 20000 // n)
            same = min(timeit.repeat(s0.encode, number=num, repeat=300)) / num

            def rot(strs=strs):
                for s in strs:
                    s.encode()

            rotating = min(timeit.repeat(rot, number=1, repeat=100)) / len(strs)
            print(f"{kind:9s} {n:5d} {same * 1e9 / n:9.3f} {rotating * 1e9 / n:9.3f}")


if __name__ == "__main__":
    main()
