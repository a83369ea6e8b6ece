"""Every public object of utf8pfx has a docstring that says something."""
import inspect

import pytest

import utf8pfx
from utf8pfx import __main__ as cli


def public_objects():
    for name in utf8pfx.__all__:
        obj = getattr(utf8pfx, name)
        if name == "__version__":
            continue
        yield name, obj
        if inspect.isclass(obj):
            for member, value in vars(obj).items():
                # dunders other than these are slots whose docstring is CPython's
                if member.startswith("_") and member not in ("__enter__", "__exit__"):
                    continue
                yield f"{name}.{member}", getattr(obj, member)
    yield "utf8pfx", utf8pfx
    for name in ("main", "build_parser", "storage_kind", "split_lines"):
        yield f"utf8pfx.__main__.{name}", getattr(cli, name)


@pytest.mark.parametrize("name, obj", list(public_objects()), ids=lambda x: x if isinstance(x, str) else "")
def test_has_a_docstring(name, obj):
    doc = inspect.getdoc(obj) or ""
    assert len(doc.split()) >= 3, f"{name} has no real docstring: {doc!r}"


def test_version_is_a_string():
    assert isinstance(utf8pfx.__version__, str) and utf8pfx.__version__.count(".") >= 2
