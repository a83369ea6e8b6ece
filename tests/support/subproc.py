"""Run a child Python that imports the same utf8pfx as the tests do.

The child runs outside the checkout (a checkout's utf8pfx/ folder has no
compiled core unless built in place) with PYTHONPATH pointing at wherever
the tested package was imported from: site-packages after `pip install`,
the checkout after `setup.py build_ext --inplace`.
"""
import os
import subprocess
import sys
import tempfile

import utf8pfx

PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(utf8pfx.__file__)))


def run_python(args, env=None, **kwargs):
    child_env = dict(os.environ)
    child_env.update(env or {})
    child_env["PYTHONPATH"] = os.pathsep.join(
        p for p in (PACKAGE_PARENT, child_env.get("PYTHONPATH")) if p
    )
    kwargs.setdefault("capture_output", True)
    return subprocess.run(
        [sys.executable, *args], env=child_env, cwd=tempfile.gettempdir(), **kwargs
    )
