"""Shared pytest configuration for the utf8pfx test suite.

Hypothesis profiles (they apply to every test file, not just the writer's):

  ci    default when the CI environment variable is set: fresh random
        examples on every run (never derandomized, no example database),
        100 a property; a failure prints the @reproduce_failure blob
        (print_blob) to replay it exactly.
  dev   default otherwise: 30 examples a property.
  smoke 5 examples a property: CI's run of the installed sdist, which
        proves the sdist complete rather than searching.
  deep  many examples; pick it with --hypothesis-profile=deep or
        UTF8PFX_HYPOTHESIS_PROFILE=deep.

UTF8PFX_HYPOTHESIS_PROFILE names any profile and wins over CI; the
--hypothesis-profile option wins over both.

The ``kernels`` fixture runs a test once per kernel level (scalar, sse,
avx2, ...) when utf8pfx._core exposes _isa_levels() and _set_isa(name), and
restores the level in use afterwards; otherwise it has a single "default"
param.  The ``level`` fixture does the same for the reader's decode kernels
(_decode_isa_levels(), _set_decode_isa(name)).
"""
import json
import os
import sys

import pytest
from hypothesis import HealthCheck, settings

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # the tests import their helpers as support.* (tests/support/)
    sys.path.insert(0, _HERE)

_common = dict(
    deadline=None,  # no timing in unit tests; CI machines are noisy
    # The kernels fixture is deliberately set once per test, not per example.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
# Hypothesis's own settings when it detects CI are derandomize=True (the same
# inputs every run); ours draw fresh ones, so that every CI run explores
# inputs no run has tried before.
# Examples a property: 30 in a developer's run (the README's test command
# stays near a minute), at least 100 in CI
# (fresh inputs every run there, so CI's runs add up to far more).
settings.register_profile("ci", max_examples=100, derandomize=False, database=None,
                          print_blob=True, **_common)
settings.register_profile("dev", max_examples=30, **_common)
# a few examples a property: CI's check that an installed sdist passes
settings.register_profile("smoke", max_examples=5, derandomize=False, database=None,
                          print_blob=True, **_common)
settings.register_profile("deep", max_examples=2000, derandomize=False, print_blob=True,
                          **_common)


def _default_profile():
    explicit = os.environ.get("UTF8PFX_HYPOTHESIS_PROFILE")
    if explicit:
        return explicit
    return "ci" if os.environ.get("CI") else "dev"


settings.load_profile(_default_profile())


def _isa_levels():
    try:
        from utf8pfx import _core
    except ImportError:
        return ["default"]
    levels = getattr(_core, "_isa_levels", None)
    if levels is None or not hasattr(_core, "_set_isa"):
        return ["default"]
    return list(levels()) or ["default"]


@pytest.fixture(params=_isa_levels())
def kernels(request):
    """The kernel level a test runs with (a name, or "default")."""
    name = request.param
    if name == "default":
        yield name
        return
    from utf8pfx import _core
    import utf8pfx

    previous = utf8pfx.isa()
    _core._set_isa(name)
    try:
        assert utf8pfx.isa() == name, (utf8pfx.isa(), name)
        yield name
    finally:
        _core._set_isa(previous)


def _decode_levels():
    try:
        from utf8pfx import _core
    except ImportError:
        return ["default"]
    levels = getattr(_core, "_decode_isa_levels", None)
    return (list(levels()) if levels else []) or ["default"]


@pytest.fixture(params=_decode_levels())
def level(request):
    """The decode kernel level a reader test runs with (scalar, sse, avx2,
    ...; "default" where the core cannot choose), restored afterwards."""
    name = request.param
    if name == "default":
        yield name
        return
    from utf8pfx import _core

    previous = _core._set_decode_isa(name)
    try:
        yield name
    finally:
        _core._set_decode_isa(previous)


def _where_utf8pfx_comes_from(root):
    """The header names the utf8pfx under test; when that is an install and
    the checkout's sources are newer than it, it says so (the tests then run
    the old code: `pip install .` again)."""
    try:
        import utf8pfx
        from utf8pfx import _core
    except ImportError as e:
        return ["utf8pfx: not importable (%s)" % e]
    pkg = os.path.dirname(os.path.abspath(utf8pfx.__file__))
    lines = ["utf8pfx under test: %s" % pkg]
    src = [os.path.join(root, d) for d in ("csrc", "utf8pfx")]
    if pkg != os.path.abspath(src[1]) and all(map(os.path.isdir, src)):
        built = os.path.getmtime(_core.__file__)
        newer = sorted(os.path.relpath(os.path.join(d, f), root)
                       for top in src for d, _, fs in os.walk(top) for f in fs
                       if f.endswith((".c", ".h", ".py", ".pyi"))
                       and os.path.getmtime(os.path.join(d, f)) > built)
        if newer:
            lines.append("NOTE: %d source file(s) in %s are newer than that install "
                         "(e.g. %s): the tests run the installed code; "
                         "`pip install .` to test the checkout" % (len(newer), root, newer[0]))
    return lines


def pytest_report_header(config):
    lines = ["utf8pfx kernel levels: %s; hypothesis profile: %s" % (
        ", ".join(_isa_levels()), getattr(settings, "_current_profile", "?"))]
    lines.extend(_where_utf8pfx_comes_from(str(config.rootpath)))
    # which levels run natively, which emulated (support/kernel_report.py)
    from support import kernel_report
    lines.append(kernel_report.header_line())
    return lines


# what the C harnesses ran, natively and emulated
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    from support import kernel_report
    terminalreporter.section("kernel levels: native and emulated")
    for line in kernel_report.summary_lines():
        terminalreporter.write_line(line)


# Under pytest-xdist the C harnesses run in worker processes: each worker
# hands what its harnesses printed to the controller, which prints the
# summary above.
_XDIST_KEY = "utf8pfx_kernel_results"


def pytest_sessionfinish(session, exitstatus):
    out = getattr(session.config, "workeroutput", None)
    if out is not None:  # an xdist worker
        from support import kernel_report
        out[_XDIST_KEY] = json.dumps([[h, m, line]
                                      for (h, m), line in kernel_report.RESULTS.items()])


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):  # the xdist controller, per worker
    from support import kernel_report
    for h, m, line in json.loads(getattr(node, "workeroutput", {}).get(_XDIST_KEY, "[]")):
        kernel_report.RESULTS[(h, m)] = line


# ---- markers -------------------------------------------------------
def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: left out of the default run (pyproject's addopts: -m 'not slow'); "
        "CI runs them with pytest -m slow.  The few that need gigabytes also need "
        "UTF8PFX_SLOW=1 (UTF8PFX_SLOW=1 pytest -m slow tests/test_robustness_limits.py)")
