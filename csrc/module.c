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

static struct PyModuleDef module_def;

u8p_state *
u8p_state_of_type(PyTypeObject *type)
{
#if PY_VERSION_HEX >= 0x030B0000
    PyObject *m = PyType_GetModuleByDef(type, &module_def);
    return m ? u8p_get_state(m) : NULL;
#else
    PyObject *mro = type->tp_mro;
    Py_ssize_t i;
    for (i = 0; mro != NULL && i < PyTuple_GET_SIZE(mro); i++) {
        PyTypeObject *t = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
        PyObject *m;
        if (!PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE))
            continue;
        m = ((PyHeapTypeObject *)t)->ht_module;
        if (m != NULL && PyModule_GetDef(m) == &module_def)
            return u8p_get_state(m);
    }
    PyErr_Format(PyExc_TypeError, "%s is not a utf8pfx type", type->tp_name);
    return NULL;
#endif
}

static int
module_exec(PyObject *module)
{
    u8p_state *st = u8p_get_state(module);
    int i;
    for (i = 0; i < U8P_INTS; i++)
        if ((st->ints[i] = PyLong_FromLong(i)) == NULL)
            return -1;
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
    u8p_state *st = u8p_get_state((PyObject *)module);
    int i;
    module_clear((PyObject *)module);
    if (st != NULL)
        for (i = 0; i < U8P_INTS; i++)
            Py_CLEAR(st->ints[i]);
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
