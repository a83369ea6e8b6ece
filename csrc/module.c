/*
 * utf8pfx._core: the module definition, and the assembly of its parts.
 *
 * Layers (each uses names only from the layers below it; core/core.h):
 *   kernels/  pure C, no Python.h: the encoders and decoders per ISA
 *   core/     module state, argument parsing, str -> UTF-8 bodies, isa()
 *   writer/   BufferWriter          reader/  BufferReader, decode(), decode_all()
 *   arrow/    Arrow in and Arrow out, through the writer's and reader's
 *             public headers
 *   stream/   StreamReader: records from a file object or fed bytes,
 *             through the reader's record functions
 *   functions.c  encode(), utf8_length(), vint_size()
 *   module.c     this file: the only unit that knows every component
 *
 * Module exec builds each type's method list once, in the module state,
 * from the lists its components offer, then creates the type from it:
 * nothing registered is overwritten later, and each interpreter gets its
 * own lists, types and state (the module supports isolated
 * subinterpreters with their own GIL).
 */
#include "core/core.h"
#include "functions.h"
#include "writer/writer.h"
#include "reader/reader.h"
#include "arrow/arrow.h"
#include "stream/stream.h"

static int
module_exec(PyObject *module)
{
    u8p_state *st = u8p_get_state(module);
    if (u8p_state_init(st) < 0)
        return -1;
    /* the kernels first: the writer's method list depends on the table
     * chosen for this CPU */
    if (u8p_isa_exec(module) < 0 || u8p_functions_exec(module) < 0)
        return -1;
    st->arrow_in = u8p_arrow_in_hook_fn;
    if (u8p_writer_methods(st->writer_methods, st) < 0 ||
        u8p_arrow_writer_methods(st->writer_methods) < 0 ||
        u8p_reader_methods(st->reader_methods) < 0 ||
        u8p_arrow_reader_methods(st->reader_methods) < 0)
        return -1;
    if (u8p_writer_exec(module, st) < 0 || u8p_reader_exec(module, st) < 0 ||
        u8p_arrow_exec(module, st) < 0 || u8p_stream_exec(module, st) < 0 ||
        u8p_stream_writer_exec(module, st) < 0)
        return -1;
    return 0;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, (void *)module_exec},
#if PY_VERSION_HEX >= 0x030C0000
    /* every Python object lives in the module state; the only process-wide
     * data are the kernel tables, chosen from the CPU */
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "utf8pfx._core",
    "VInt-prefixed UTF-8 from PEP 393 storage (C core of utf8pfx).",
    sizeof(u8p_state),
    NULL, /* functions: each component adds its own */
    module_slots,
    u8p_state_traverse,
    u8p_state_clear,
    u8p_state_free,
};

PyMODINIT_FUNC
PyInit__core(void)
{
    return PyModuleDef_Init(&module_def);
}
