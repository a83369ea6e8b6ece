"""utf8pfx benchmark suites: the writer (str -> blob) and, with --reader, the reader (blob -> str).

Entry point: python -m bench (see bench/README.md).  Each suite times utf8pfx
against its peers on the same strings in one run and checks its speed targets:
the writer's in bench.report.TARGETS, the reader's in bench.report.READER_TARGETS.
"""
import argparse
import functools
import importlib
import importlib.util
import os

_PACKAGE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "utf8pfx")


@functools.lru_cache(maxsize=None)
def package_module(name):
    """utf8pfx.<name>, one of the package's pure-Python modules that import
    nothing else of it (``_reference``, ``_peers``): the peers' code, written
    once for ``utf8pfx bench`` and this suite.

    Imported as usual where utf8pfx imports; where it does not (a checkout
    not built yet: the package needs its compiled core) the file is loaded
    from this checkout's utf8pfx/ folder, so that the peers still run.
    """
    try:
        return importlib.import_module("utf8pfx." + name)
    except ImportError:
        spec = importlib.util.spec_from_file_location(
            "bench._utf8pfx_" + name, os.path.join(_PACKAGE_DIR, name + ".py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module


def mode_parser(prog, description, quick_help=None, full_help=None):
    """The argument parser every entry point of the suite starts from: its
    docstring as the description, as written, and --quick or --full (dest
    "mode"; None when neither is given)."""
    p = argparse.ArgumentParser(prog=prog, description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    m = p.add_mutually_exclusive_group()
    m.add_argument("--quick", dest="mode", action="store_const", const="quick", help=quick_help)
    m.add_argument("--full", dest="mode", action="store_const", const="full", help=full_help)
    return p
