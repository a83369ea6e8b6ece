"""Print the include directory that holds SIMDe's headers (simde/x86/avx512.h)
for the emulated kernel build, or exit 1 with the reason on stderr.

Looked for, in order: $SIMDE_INCLUDE; the PyPI package cmeel-simde in this
interpreter's site-packages (cmeel.prefix/include); a system copy
(/usr/include, /usr/local/include: Debian's libsimde-dev)."""
import os
import site
import sys
import sysconfig

PROBE = os.path.join("simde", "x86", "avx512.h")


def candidates():
    env = os.environ.get("SIMDE_INCLUDE")
    if env:
        yield env
    roots = [sysconfig.get_paths().get(k) for k in ("purelib", "platlib")]
    try:
        roots += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # virtualenvs of old
        pass
    for root in roots:
        if root:
            yield os.path.join(root, "cmeel.prefix", "include")
    yield "/usr/include"
    yield "/usr/local/include"


def find():
    for inc in candidates():
        if os.path.isfile(os.path.join(inc, PROBE)):
            return inc
    return None


if __name__ == "__main__":
    inc = find()
    if inc is None:
        sys.stderr.write("SIMDe headers not found (pip install cmeel-simde, or set SIMDE_INCLUDE)\n")
        sys.exit(1)
    print(inc)
