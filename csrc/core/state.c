/*
 * The module state's life cycle (core.h): its fields' set-up and release,
 * the accessor that finds it from a type, and the helpers module init uses
 * to assemble types from their components' method lists.
 */
#include <stddef.h>
#include <string.h>

#include "core.h"

/* Where the state keeps its types and its interned names: init, traverse,
 * clear and free walk these lists, so a new one is one line here. */
#define STATE_FIELD(st, off, T) (*(T *)(void *)((char *)(st) + (off)))

static const size_t state_types[] = {
    offsetof(u8p_state, writer_type),        offsetof(u8p_state, reader_type),
    offsetof(u8p_state, reader_batches_type), offsetof(u8p_state, arrow_array_type),
    offsetof(u8p_state, stream_reader_type), offsetof(u8p_state, stream_batches_type),
    offsetof(u8p_state, stream_writer_type),
};

static const struct {
    size_t off;
    const char *name;
} state_names[] = {
    {offsetof(u8p_state, str_arrow_c_array), "__arrow_c_array__"},
    {offsetof(u8p_state, str_arrow_c_stream), "__arrow_c_stream__"},
    {offsetof(u8p_state, str_strict), "strict"},
    {offsetof(u8p_state, str_readinto), "readinto"},
    {offsetof(u8p_state, str_read), "read"},
    {offsetof(u8p_state, str_release), "release"},
    {offsetof(u8p_state, str_after_write), "_after_write"},
    {offsetof(u8p_state, str_records_accepted), "records_accepted"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int
u8p_state_init(u8p_state *st)
{
    size_t i;
    for (i = 0; i < U8P_INTS; i++)
        if ((st->ints[i] = PyLong_FromLong((long)i)) == NULL)
            return -1;
    for (i = 0; i < COUNT(state_names); i++)
        if ((STATE_FIELD(st, state_names[i].off, PyObject *) =
                 PyUnicode_InternFromString(state_names[i].name)) == NULL)
            return -1;
    st->arrow_large_threshold = INT32_MAX;
    st->write_string_build = "base";
    return 0;
}

int
u8p_state_traverse(PyObject *module, visitproc visit, void *arg)
{
    u8p_state *st = u8p_get_state(module);
    size_t i;
    for (i = 0; i < COUNT(state_types); i++)
        Py_VISIT(STATE_FIELD(st, state_types[i], PyTypeObject *));
    return 0;
}

int
u8p_state_clear(PyObject *module)
{
    u8p_state *st = u8p_get_state(module);
    size_t i;
    for (i = 0; i < COUNT(state_types); i++)
        Py_CLEAR(STATE_FIELD(st, state_types[i], PyTypeObject *));
    return 0;
}

/* The ints, the names and the method lists go in m_free only: an object
 * keeps its type and a type its module, so nothing that points into them
 * outlives this. */
void
u8p_state_free(void *module)
{
    u8p_state *st = u8p_get_state((PyObject *)module);
    size_t i;
    u8p_state_clear((PyObject *)module);
    if (st == NULL)
        return;
    for (i = 0; i < U8P_INTS; i++)
        Py_CLEAR(st->ints[i]);
    for (i = 0; i < COUNT(state_names); i++)
        Py_CLEAR(STATE_FIELD(st, state_names[i].off, PyObject *));
}

PyObject *
u8p_getattr_interned(PyObject *obj, const char *name)
{
    PyObject *n = PyUnicode_InternFromString(name), *r;
    if (n == NULL)
        return NULL;
    r = PyObject_GetAttr(obj, n);
    Py_DECREF(n);
    return r;
}

PyObject *
u8p_call_method_interned(PyObject *obj, const char *name, PyObject *arg)
{
    PyObject *n = PyUnicode_InternFromString(name), *r;
    if (n == NULL)
        return NULL;
    r = arg == NULL ? PyObject_CallMethodNoArgs(obj, n) : PyObject_CallMethodOneArg(obj, n, arg);
    Py_DECREF(n);
    return r;
}

u8p_state *
u8p_state_of_type(PyTypeObject *type)
{
    /* The first heap type in the MRO made by this extension's module: the
     * type itself, or the utf8pfx base of a Python subclass.  The module is
     * recognised by its m_free, which only this extension's definition
     * names (the definition itself belongs to module.c, above core). */
    PyObject *mro = type->tp_mro;
    Py_ssize_t i;
    for (i = 0; mro != NULL && i < PyTuple_GET_SIZE(mro); i++) {
        PyTypeObject *t = (PyTypeObject *)PyTuple_GET_ITEM(mro, i);
        PyObject *m;
        PyModuleDef *def;
        if (!PyType_HasFeature(t, Py_TPFLAGS_HEAPTYPE))
            continue;
        m = ((PyHeapTypeObject *)t)->ht_module;
        if (m == NULL || (def = PyModule_GetDef(m)) == NULL) {
            PyErr_Clear();
            continue;
        }
        if (def->m_free == u8p_state_free)
            return u8p_get_state(m);
    }
    PyErr_Format(PyExc_TypeError, "%s is not a utf8pfx type", type->tp_name);
    return NULL;
}

int
u8p_methods_add(PyMethodDef *dst, const PyMethodDef *list)
{
    int n = 0, i;
    while (dst[n].ml_name != NULL)
        n++;
    for (; list->ml_name != NULL; list++) {
        for (i = 0; i < n; i++)
            if (strcmp(dst[i].ml_name, list->ml_name) == 0) {
                PyErr_Format(PyExc_SystemError, "method %s is offered twice", list->ml_name);
                return -1;
            }
        if (n + 1 >= U8P_MAX_METHODS) {
            PyErr_SetString(PyExc_SystemError, "U8P_MAX_METHODS is too small");
            return -1;
        }
        dst[n++] = *list;
        memset(&dst[n], 0, sizeof dst[n]);
    }
    return 0;
}

int
u8p_add_type(PyObject *module, PyType_Spec *spec, PyMethodDef *tp_methods, PyTypeObject **out)
{
    PyType_Slot slots[16];
    PyType_Spec copy = *spec;
    PyObject *t;
    const char *dot = strrchr(spec->name, '.');
    int i;
    for (i = 0; spec->slots[i].slot != 0; i++) {
        if (i + 1 >= (int)(sizeof slots / sizeof slots[0])) {
            PyErr_SetString(PyExc_SystemError, "u8p_add_type: too many slots");
            return -1;
        }
        slots[i] = spec->slots[i];
        if (slots[i].slot == Py_tp_methods && tp_methods != NULL)
            slots[i].pfunc = tp_methods;
    }
    slots[i].slot = 0;
    slots[i].pfunc = NULL;
    copy.slots = slots;
    t = PyType_FromModuleAndSpec(module, &copy, NULL);
    if (t == NULL)
        return -1;
    *out = (PyTypeObject *)Py_NewRef(t);
    if (PyModule_AddObject(module, dot ? dot + 1 : spec->name, t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return 0;
}
