"""The C source keeps its layering (tools/check_layout.py): glue units whose
dependencies run one way (kernels <- core <- writer, reader <- arrow <-
module), glue that includes only the kernels' public headers, kernels with
no Python.h.  Checked on the real tree, and on small trees that break each
rule, so that the check itself can fail."""
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "check_layout.py")
CSRC = os.path.join(ROOT, "csrc")

if not (os.path.exists(TOOL) and os.path.isdir(os.path.join(CSRC, "core"))):
    pytest.skip("needs a checkout (tools/ and csrc/ beside tests/)", allow_module_level=True)

_spec = importlib.util.spec_from_file_location("check_layout", TOOL)
layout = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(layout)


def test_the_source_tree_keeps_its_layering():
    assert layout.check(CSRC) == []


def make_tree(tmp_path, files):
    base = {
        "kernels/kernels.h": "int u8p_kern(int x);\n",
        "kernels/x86/impl.h": "#define U8P_PRIVATE 1\n",
        "kernels/scalar.c": '#include "kernels.h"\n#include "x86/impl.h"\n'
                            "int u8p_kern(int x) { return x; }\n",
        "core/core.h": '#include "kernels/kernels.h"\nint u8p_core_fn(void);\n',
        "core/core.c": '#include "core.h"\nint u8p_core_fn(void) { return u8p_kern(1); }\n',
        "writer/writer.h": '#include "core/core.h"\ntypedef struct { int a; } WriterObject;\n'
                           "int u8p_writer_fn(WriterObject *w);\n",
        "writer/writer.c": '#include "writer.h"\nint u8p_writer_fn(WriterObject *w) '
                           "{ return u8p_core_fn() + w->a; }\n",
        "module.c": '#include "writer/writer.h"\nint u8p_mod(void) { return u8p_writer_fn(0); }\n',
    }
    base.update(files)
    for rel, text in base.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return str(tmp_path)


def test_a_clean_small_tree_passes(tmp_path):
    assert layout.check(make_tree(tmp_path, {})) == []


def test_a_lower_unit_using_a_higher_one_fails(tmp_path):
    tree = make_tree(tmp_path, {
        "core/core.c": '#include "core.h"\n#include "writer/writer.h"\n'
                       "int u8p_core_fn(void) { return u8p_writer_fn(0); }\n",
    })
    problems = layout.check(tree)
    assert any("core uses u8p_writer_fn from writer" in p for p in problems), problems
    assert any("dependency cycle" in p for p in problems), problems


def test_writer_and_reader_may_not_use_each_other(tmp_path):
    tree = make_tree(tmp_path, {
        "reader/reader.h": '#include "core/core.h"\nint u8p_reader_fn(void);\n',
        "reader/reader.c": '#include "reader.h"\n#include "writer/writer.h"\n'
                           "int u8p_reader_fn(void) { return u8p_writer_fn(0); }\n",
    })
    problems = layout.check(tree)
    assert any("reader uses u8p_writer_fn from writer" in p for p in problems), problems


def test_glue_may_not_include_a_private_kernel_header(tmp_path):
    tree = make_tree(tmp_path, {
        "writer/writer.c": '#include "writer.h"\n#include "kernels/x86/impl.h"\n'
                           "int u8p_writer_fn(WriterObject *w) { return w->a; }\n",
    })
    problems = layout.check(tree)
    assert any("private kernel header kernels/x86/impl.h" in p for p in problems), problems


def test_glue_may_not_include_another_units_private_header(tmp_path):
    tree = make_tree(tmp_path, {
        "writer/writer_short.h": "#define U8P_SHORT 1\n",
        "module.c": '#include "writer/writer.h"\n#include "writer/writer_short.h"\n'
                    "int u8p_mod(void) { return U8P_SHORT; }\n",
    })
    problems = layout.check(tree)
    assert any("writer/writer_short.h, which is private to writer" in p for p in problems), problems


def test_kernels_stay_pure_c(tmp_path):
    tree = make_tree(tmp_path, {
        "kernels/scalar.c": '#include "kernels.h"\n#include "Python.h"\n'
                            "int u8p_kern(int x) { return x; }\n",
        "kernels/kernels.h": '#include "x86/impl.h"\nint u8p_kern(int x);\n',
    })
    problems = layout.check(tree)
    assert any("includes Python.h" in p for p in problems), problems
    assert any("public kernel header but includes the private" in p for p in problems), problems
