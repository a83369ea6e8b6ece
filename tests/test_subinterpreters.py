"""The module in isolated subinterpreters (per-interpreter GIL, PEP 684).

Each interpreter gets its own module object, state, types and method lists;
only the kernel tables (which describe the CPU) are process-wide.  These
tests run the writer, the reader and both Arrow paths in two isolated
interpreters at once, from two threads, and check that no utf8pfx object of
one interpreter is seen from another: a type, or the Arrow type that
decode_arrow() instantiates, kept in a process global would have the same
id in both.

CPython exposes isolated interpreters with their own GIL to Python code
through private modules: ``_xxsubinterpreters`` on 3.12, ``_interpreters``
from 3.13 on.  Before 3.12 there are none, and these tests skip.
"""
import json
import os
import sys
import threading

import pytest

if sys.version_info < (3, 12):
    pytest.skip("isolated interpreters with their own GIL need 3.12+", allow_module_level=True)
try:  # 3.13+
    import _interpreters

    def _create(isolated=True):
        return _interpreters.create("isolated" if isolated else "legacy")

    def _exec(interp, code):
        err = _interpreters.exec(interp, code)
        if err is not None:  # a snapshot of the uncaught exception
            raise AssertionError("in interpreter %d: %s" % (interp, err.formatted))

except ImportError:  # 3.12
    import _xxsubinterpreters as _interpreters

    def _create(isolated=True):
        return _interpreters.create(isolated=isolated)

    def _exec(interp, code):
        _interpreters.run_string(interp, code)  # raises RunFailedError

# Run in each interpreter: every public path, checked there against
# CPython's own codec, and the ids of the objects the module owns.
WORK = r'''
import json, utf8pfx, utf8pfx._core as core
from utf8pfx._reference import leb128

def frame(s):
    e = s.encode("utf-8", "surrogatepass")
    return leb128(len(e)) + e

texts = [TAG * 3, "héllo", "東京", "😀 party", "x" * 300, "\ud800"]
w = utf8pfx.BufferWriter(errors="surrogatepass")
for s in texts[:2]:
    w.write_string(s)
w.write_strings(texts[2:])
blob = w.getvalue()
assert blob == b"".join(frame(s) for s in texts), blob
r = utf8pfx.BufferReader(blob, errors="surrogatepass")
assert r.read_strings() == texts

# Arrow out, then Arrow in from our own exporter (no pyarrow needed)
names = [TAG, "ä", "東京", ""]
arr = utf8pfx.decode_arrow(b"".join(frame(s) for s in names))
w2 = utf8pfx.BufferWriter()
w2.write_arrow(arr)
w2.write_strings(arr)  # write_strings' Arrow hook
assert utf8pfx.decode_all(w2.getvalue()) == names * 2
rd = utf8pfx.BufferReader(w2.getvalue())
assert len(rd.read_strings_arrow(2)) == 2

# per-interpreter state: this interpreter's threshold, not another's
old = core._arrow_large_threshold(THRESHOLD)
assert core._arrow_large_threshold(old) == THRESHOLD

with open(OUT, "w") as f:
    json.dump({
        "module": id(core),
        "writer": id(utf8pfx.BufferWriter),
        "reader": id(utf8pfx.BufferReader),
        "arrow": id(utf8pfx.ArrowUtf8Array),
        "arrow_made": id(type(arr)),
        "old_threshold": old,
        "isa": utf8pfx.isa(),
    }, f)
'''


# A new interpreter builds its own sys.path, which can put the working
# directory first (under pytest-xdist's workers, for one): in a checkout that
# is the source tree, not the package under test.  The package's own folder
# goes first, so that every interpreter imports the one the tests import.
import utf8pfx  # noqa: E402

SITE = os.path.dirname(os.path.dirname(os.path.abspath(utf8pfx.__file__)))


def _run(interp, tag, threshold, out):
    _exec(interp, "import sys\nsys.path.insert(0, %r)\nTAG = %r\nTHRESHOLD = %d\nOUT = %r\n"
          % (SITE, tag, threshold, out) + WORK)


@pytest.fixture
def two_isolated():
    ids = [_create() for _ in range(2)]
    try:
        yield ids
    finally:
        for i in ids:
            _interpreters.destroy(i)


def test_imports_in_an_isolated_interpreter(two_isolated, tmp_path):
    out = str(tmp_path / "one.json")
    _run(two_isolated[0], "solo", 100, out)
    with open(out) as f:
        got = json.load(f)
    assert got["isa"]  # the kernels chosen at the first import serve here too
    assert got["old_threshold"] == 2**31 - 1  # a fresh state, not the main one's


def test_two_interpreters_at_once_share_no_object(two_isolated, tmp_path):
    import utf8pfx
    import utf8pfx._core as core

    outs = [str(tmp_path / ("%d.json" % k)) for k in range(2)]
    errors = []

    def worker(k):
        try:
            for rnd in range(20):
                _run(two_isolated[k], "t%d-%d" % (k, rnd), 1000 + k, outs[k])
        except BaseException as e:  # reported below, from the main thread
            errors.append(e)

    before = core._arrow_large_threshold(7)
    try:
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        # neither interpreter saw the main one's threshold (7), nor the other's
        assert core._arrow_large_threshold(before) == 7
    finally:
        core._arrow_large_threshold(before)
    got = []
    for out in outs:
        with open(out) as f:
            got.append(json.load(f))
    main = {
        "module": id(core),
        "writer": id(utf8pfx.BufferWriter),
        "reader": id(utf8pfx.BufferReader),
        "arrow": id(utf8pfx.ArrowUtf8Array),
    }
    for g in got:
        # the Arrow type decode_arrow() makes is this interpreter's own
        assert g["arrow_made"] == g["arrow"]
        # each interpreter's state started at the default, whatever the
        # others set (the first round saw it; later rounds restore it)
        assert g["old_threshold"] == 2**31 - 1
    for key, main_id in main.items():
        ids = {main_id, got[0][key], got[1][key]}
        assert len(ids) == 3, "%s is shared between interpreters" % key


def test_the_legacy_config_still_loads(tmp_path):
    interp = _create(isolated=False)
    try:
        out = str(tmp_path / "legacy.json")
        _run(interp, "legacy", 5, out)
        assert os.path.exists(out)
    finally:
        _interpreters.destroy(interp)
