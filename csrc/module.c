/*
 * utf8pfx._core: the module definition only (multi-phase init, per-module
 * state).  Each part registers its own types and functions:
 *   isa.c        kernel selection at import, isa() and the level hooks
 *   functions.c  encode(), utf8_length(), vint_size()
 *   writer.c     BufferWriter
 *   reader.c     BufferReader, decode(), decode_all()
 *   arrow_in.c   BufferWriter.write_arrow (Arrow in)
 *   arrow_out.c  ArrowUtf8Array, read_strings_arrow, decode_arrow (Arrow out)
 * Shared glue (argument parsing) is in args.c, the str -> UTF-8 body
 * helpers in encode.c; the kernels (no Python.h) in kernels/.
 */
#include "utf8pfx.h"

u8p_state *
u8p_get_state(PyObject *module)
{
    return (u8p_state *)PyModule_GetState(module);
}

static int
module_exec(PyObject *module)
{
    u8p_state *st = u8p_get_state(module);
    if (u8p_isa_exec(module) < 0)
        return -1;
    if (u8p_functions_exec(module) < 0)
        return -1;
    if (u8p_writer_exec(module, st) < 0)
        return -1;
    if (u8p_reader_exec(module, st) < 0)
        return -1;
    if (u8p_arrow_exec(module, st) < 0)
        return -1;
    return 0;
}

static int
module_traverse(PyObject *module, visitproc visit, void *arg)
{
    u8p_state *st = u8p_get_state(module);
    Py_VISIT(st->writer_type);
    Py_VISIT(st->reader_type);
    return 0;
}

static int
module_clear(PyObject *module)
{
    u8p_state *st = u8p_get_state(module);
    Py_CLEAR(st->writer_type);
    Py_CLEAR(st->reader_type);
    return 0;
}

static void
module_free(void *module)
{
    module_clear((PyObject *)module);
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, (void *)module_exec},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "utf8pfx._core",
    "VInt-prefixed UTF-8 from PEP 393 storage (C core of utf8pfx).",
    sizeof(u8p_state),
    NULL, /* functions: each part adds its own */
    module_slots,
    module_traverse,
    module_clear,
    module_free,
};

PyMODINIT_FUNC
PyInit__core(void)
{
    return PyModuleDef_Init(&module_def);
}
