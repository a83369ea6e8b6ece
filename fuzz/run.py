#!/usr/bin/env python3
"""Run one fuzz harness for a given time.

    python fuzz/run.py writer  SECONDS [libFuzzer flags...]
    python fuzz/run.py reader  SECONDS [...]
    python fuzz/run.py kernels SECONDS [...]
    python fuzz/run.py build             (the extension only, for several runs)

writer/reader: atheris harnesses (needs `pip install atheris` and clang).
The C extension is first built with clang into fuzz/.build/ with
-fsanitize=fuzzer-no-link (coverage feedback from the C code, as atheris
documents for native extensions) plus AddressSanitizer and UBSan, and the
harness runs with clang's ASan runtime and libFuzzer preloaded as one
library (fuzz/.build/asan_with_fuzzer.so, linked from clang's own static
runtimes).  UTF8PFX_FUZZ_NO_ASAN=1
builds with coverage only.  UTF8PFX_FUZZ_PREBUILT=1 reuses what
`run.py build` left in the build folder instead of building again, so that
the writer and reader harnesses can run side by side on one build.

kernels: the libFuzzer target tests/c/fuzz_kernels.c (every SIMD level
against scalar), built by `make -C tests/c fuzz`.

New inputs go to a scratch corpus (fuzz/.work/NAME/, not checked in); the
checked-in seeds in fuzz/corpus/NAME/ are read, never written.  Crashes are
written to fuzz/.work/ as crash-*.  Exit status: libFuzzer's (0 = no finding).
The final statistics (executions, coverage) are printed by libFuzzer.
"""
import os
import shutil
import subprocess
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# UTF8PFX_FUZZ_BUILD / UTF8PFX_FUZZ_WORK move the build and the scratch corpus
# (two runs at once must not rebuild one another's loaded extension)
BUILD = os.environ.get("UTF8PFX_FUZZ_BUILD") or os.path.join(HERE, ".build")
WORK = os.environ.get("UTF8PFX_FUZZ_WORK") or os.path.join(HERE, ".work")


def sh(cmd, **kw):
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, **kw)


def clang_rt(name):
    out = subprocess.run(["clang", "-print-file-name=" + name], capture_output=True,
                         text=True).stdout.strip()
    return out if os.path.isfile(out) else None


def asan_with_fuzzer():
    """clang's ASan runtime and libFuzzer in one shared library, so that the
    coverage callbacks of the instrumented extension reach libFuzzer (atheris
    then uses the preloaded libFuzzer instead of its own).  Built from the
    static runtimes clang ships (the recipe atheris documents)."""
    out = os.path.join(BUILD, "asan_with_fuzzer.so")
    if os.path.isfile(out):
        return out
    asan_a = clang_rt("libclang_rt.asan-x86_64.a")
    fuzz_a = clang_rt("libclang_rt.fuzzer_no_main-x86_64.a")
    if not asan_a or not fuzz_a:
        return None
    tmp = os.path.join(BUILD, "asan-objs")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    subprocess.run(["ar", "x", asan_a], cwd=tmp, check=True)
    # .preinit_array is not allowed in a shared object
    for f in os.listdir(tmp):
        if f.startswith("asan_preinit"):
            os.remove(os.path.join(tmp, f))
    objs = sorted(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".o"))
    # linked under a private name and renamed: a harness started meanwhile
    # must never preload a half-written library
    part = "%s.%d.part" % (out, os.getpid())
    r = sh(["clang", "-shared", "-fPIC", "-o", part] + objs +
           ["-Wl,--whole-archive", fuzz_a, "-Wl,--no-whole-archive",
            "-lpthread", "-ldl", "-lstdc++", "-lm"])
    shutil.rmtree(tmp, ignore_errors=True)
    if r.returncode != 0:
        return None
    os.replace(part, out)
    return out


def build_extension(asan):
    san = "-fsanitize=fuzzer-no-link"
    if asan:
        san += ",address,undefined -fno-sanitize-recover=undefined"
    env = dict(os.environ, CC="clang", LDSHARED="clang -shared",
               CFLAGS=san + " -g -fno-omit-frame-pointer", LDFLAGS=san)
    env.pop("UTF8PFX_WERROR", None)  # clang and gcc warn differently; CI's gcc build has -Werror
    lib = os.path.join(BUILD, "lib")
    r = sh([sys.executable, "setup.py", "-q", "build", "--build-base", BUILD,
            "--build-lib", lib, "--force"], cwd=ROOT, env=env)
    if r.returncode:
        sys.exit("building the extension with clang failed")
    return lib


def main(argv):
    if argv[1:] == ["build"]:
        if not shutil.which("clang"):
            print("SKIP fuzz build: clang not found")
            return 0
        asan = os.environ.get("UTF8PFX_FUZZ_NO_ASAN") != "1"
        print("built", build_extension(asan))
        if asan and asan_with_fuzzer() is None:  # linked once, for every harness after
            sys.exit("could not link clang's ASan runtime with libFuzzer; "
                     "set UTF8PFX_FUZZ_NO_ASAN=1")
        return 0
    if len(argv) < 3 or argv[1] not in ("writer", "reader", "kernels"):
        sys.exit(__doc__)
    name, seconds, extra = argv[1], int(argv[2]), argv[3:]
    if not shutil.which("clang"):
        print("SKIP fuzz %s: clang not found" % name)
        return 0
    work = os.path.join(WORK, name)
    os.makedirs(work, exist_ok=True)
    seeds = os.path.join(HERE, "corpus", name)
    flags = ["-max_total_time=%d" % seconds, "-print_final_stats=1", "-timeout=30",
             "-rss_limit_mb=3072", "-artifact_prefix=" + WORK + "/" + name + "-"]
    if name == "kernels":
        r = sh(["make", "-s", "-C", os.path.join(ROOT, "tests", "c"), "fuzz_kernels"])
        if r.returncode:
            sys.exit("building fuzz_kernels failed")
        exe = os.path.join(ROOT, "tests", "c", "fuzz_kernels")
        return sh([exe] + flags + extra + [work, seeds]).returncode
    try:
        import atheris  # noqa: F401
    except ImportError:
        print("SKIP fuzz %s: atheris is not installed (pip install atheris)" % name)
        return 0
    asan = os.environ.get("UTF8PFX_FUZZ_NO_ASAN") != "1"
    if os.environ.get("UTF8PFX_FUZZ_PREBUILT") == "1":
        lib = os.path.join(BUILD, "lib")
        if not os.path.isdir(os.path.join(lib, "utf8pfx")):
            sys.exit("UTF8PFX_FUZZ_PREBUILT=1 but %s holds no build: run `run.py build` first"
                     % lib)
    else:
        lib = build_extension(asan)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (lib, env.get("PYTHONPATH")) if p)
    if asan:
        rt = asan_with_fuzzer()
        if rt is None:
            sys.exit("could not link clang's ASan runtime with libFuzzer; "
                     "set UTF8PFX_FUZZ_NO_ASAN=1")
        env["LD_PRELOAD"] = rt
        env["ASAN_OPTIONS"] = "detect_leaks=0:allocator_may_return_null=1"
        env["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"
        env["PYTHONMALLOC"] = "malloc"
    harness = os.path.join(HERE, "fuzz_%s.py" % name)
    return sh([sys.executable, harness] + flags + extra + [work, seeds],
              env=env, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv))
