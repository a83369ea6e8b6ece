/*
 * Kernel selection (once, at import: the best level the CPU and OS allow,
 * capped by UTF8PFX_ISA) and the functions that report it: isa(), plus the
 * testing hooks that list and switch the encode and decode kernel levels.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

const u8p_kernels *u8p_K = &u8p_kernels_scalar;
const u8p_dec_kernels *u8p_D = &u8p_dec_kernels_scalar;

static const char *const isa_names[U8P_ISA_COUNT] = {"scalar", "sse", "avx2", "avx512"};

static PyObject *
mod_isa(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return PyUnicode_FromString(u8p_K->name);
}

static const char *
enc_level_name(u8p_isa level)
{
    const u8p_kernels *k = u8p_kernels_for_level(level);
    return k ? k->name : NULL;
}

static PyObject *
mod_isa_levels(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return u8p_level_list(enc_level_name);
}

/* The testing hooks' tables: every table of one kind this CPU runs (enc:
 * the encoders', else the decoders'), scalar first, each level's own
 * before its variants, and their ids (the names the switches take
 * besides the levels'); returns how many. */
#define KT_MAX 16

static int
tables_of(int enc, const void **tab, const char **id)
{
    int lvl, j, nv, n = 0;
    for (lvl = 0; lvl < U8P_ISA_COUNT; lvl++) {
        const void *v[8];
        nv = enc ? u8p_kernels_variants((u8p_isa)lvl, (const u8p_kernels **)v, 8)
                 : u8p_dec_kernels_variants((u8p_isa)lvl, (const u8p_dec_kernels **)v, 8);
        for (j = 0; j < nv && n < KT_MAX; j++, n++) {
            tab[n] = v[j];
            id[n] = enc ? u8p_kernels_id((const u8p_kernels *)v[j])
                        : u8p_dec_kernels_id((const u8p_dec_kernels *)v[j]);
        }
    }
    return n;
}

static PyObject *
table_ids(int enc)
{
    const void *tab[KT_MAX];
    const char *id[KT_MAX];
    int i, n = tables_of(enc, tab, id);
    PyObject *list = PyList_New(n);
    if (list == NULL)
        return NULL;
    for (i = 0; i < n; i++) {
        PyObject *item = PyUnicode_FromString(id[i]);
        if (item == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, item);
    }
    return list;
}

/* The table whose id arg is, or NULL (arg may be anything). */
static const void *
table_by_id(int enc, PyObject *arg)
{
    const void *tab[KT_MAX];
    const char *id[KT_MAX];
    int i, n = tables_of(enc, tab, id);
    for (i = 0; PyUnicode_Check(arg) && i < n; i++)
        if (PyUnicode_CompareWithASCIIString(arg, id[i]) == 0)
            return tab[i];
    return NULL;
}

/* Testing hook: every encoder table this CPU runs, by id. */
static PyObject *
mod_kernel_tables(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return table_ids(1);
}

/* Testing hook: switch the kernel table, to a level's (by its name) or to
 * one table (by its id, _kernel_tables); returns the previous level. */
static PyObject *
mod_set_isa(PyObject *module, PyObject *arg)
{
    const char *prev = u8p_K->name;
    const void *t = table_by_id(1, arg);
    int lvl;
    (void)module;
    if (t == NULL) {
        if ((lvl = u8p_level_arg(arg, enc_level_name, "_set_isa")) < 0)
            return NULL;
        t = u8p_kernels_for_level((u8p_isa)lvl);
    }
    u8p_K = (const u8p_kernels *)t;
    return PyUnicode_FromString(prev);
}

static PyObject *
mod_decode_isa(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return PyUnicode_FromString(u8p_D->name);
}

static const char *
dec_level_name(u8p_isa level)
{
    const u8p_dec_kernels *k = u8p_dec_kernels_for_level(level);
    return k ? k->name : NULL;
}

static PyObject *
mod_decode_isa_levels(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return u8p_level_list(dec_level_name);
}

/* Testing hook: every decode table this CPU runs, by id. */
static PyObject *
mod_decode_kernel_tables(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return table_ids(0);
}

/* Testing hook: switch the decode table, to a level's (by its name) or to
 * one table (by its id, _decode_kernel_tables); returns the previous
 * table's id. */
static PyObject *
mod_set_decode_isa(PyObject *module, PyObject *arg)
{
    const char *prev = u8p_dec_kernels_id(u8p_D);
    const void *t = table_by_id(0, arg);
    int lvl;
    (void)module;
    if (t == NULL) {
        if ((lvl = u8p_level_arg(arg, dec_level_name, "_set_decode_isa")) < 0)
            return NULL;
        t = u8p_dec_kernels_for_level((u8p_isa)lvl);
    }
    u8p_D = (const u8p_dec_kernels *)t;
    return PyUnicode_FromString(prev);
}

/* Once per process: every interpreter that imports the module after the
 * first finds the tables chosen (and a test's _set_isa switch kept); the
 * choice depends only on the CPU and UTF8PFX_ISA, so two first imports
 * racing in two interpreters write the same pointers. */
static int kernels_selected;

static int
select_kernels(void)
{
    const char *cap = getenv("UTF8PFX_ISA");
    if (kernels_selected)
        return 0;
    const u8p_kernels *k = u8p_select_kernels(cap);
    if (k == NULL) {
        PyErr_Format(PyExc_ImportError,
                     "UTF8PFX_ISA=%.100s is not a kernel level; use one of %s, %s, %s, %s",
                     cap, isa_names[0], isa_names[1], isa_names[2], isa_names[3]);
        return -1;
    }
    u8p_K = k;
    {
        const u8p_dec_kernels *d = u8p_select_dec_kernels(cap);
        u8p_D = d ? d : &u8p_dec_kernels_scalar;
    }
    kernels_selected = 1;
    return 0;
}

static PyMethodDef isa_functions[] = {
    {"isa", (PyCFunction)mod_isa, METH_NOARGS,
     "isa()\n--\n\nThe kernel instruction set in use ('scalar', 'sse', 'avx2', ...)."},
    {"_kernel_tables", (PyCFunction)mod_kernel_tables, METH_NOARGS,
     "_kernel_tables()\n--\n\nEvery encoder table this CPU and build run, by id (testing)."},
    {"_isa_levels", (PyCFunction)mod_isa_levels, METH_NOARGS,
     "_isa_levels()\n--\n\nKernel levels this CPU and build support (testing)."},
    {"_set_isa", (PyCFunction)mod_set_isa, METH_O,
     "_set_isa(name, /)\n--\n\nSwitch kernels to a level's table, or to one table by its "
     "_kernel_tables() id; returns the previous level (testing; "
     "process-wide: every interpreter uses the same tables)."},
    {"_decode_isa", (PyCFunction)mod_decode_isa, METH_NOARGS,
     "_decode_isa()\n--\n\nThe decode kernel level in use (testing)."},
    {"_decode_isa_levels", (PyCFunction)mod_decode_isa_levels, METH_NOARGS,
     "_decode_isa_levels()\n--\n\nDecode kernel levels this CPU and build support (testing)."},
    {"_decode_kernel_tables", (PyCFunction)mod_decode_kernel_tables, METH_NOARGS,
     "_decode_kernel_tables()\n--\n\nEvery decode table this CPU and build run, by id "
     "(testing)."},
    {"_set_decode_isa", (PyCFunction)mod_set_decode_isa, METH_O,
     "_set_decode_isa(name, /)\n--\n\nSwitch decode kernels to a level's table, or to one "
     "table by its _decode_kernel_tables() id; returns the previous table's id (testing; "
     "process-wide)."},
    {NULL, NULL, 0, NULL},
};

int
u8p_isa_exec(PyObject *module)
{
    if (select_kernels() < 0)
        return -1;
    return PyModule_AddFunctions(module, isa_functions);
}
