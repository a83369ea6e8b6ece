/*
 * What a reader that returns lists of new str objects cannot go below,
 * whatever its format: the objects themselves.  A CPython extension for the
 * streams benchmark (bench/streams.py builds it in a temporary folder with
 * the C compiler and CPython's headers, and leaves its `floor` row out when
 * it cannot):
 *
 *   str_floor.prepare(strs)     keeps each str's kind, length, largest code
 *                               point, and its code units packed one after
 *                               the other in one buffer (as a reader's input
 *                               is one buffer, not objects spread in memory)
 *   str_floor.build(total, batch)
 *
 * build makes `total` new str objects, each with the kind, length and code
 * points of the next prepared str (cycled), copied from the packed buffer
 * with one memcpy: no file, no framing, no validation, no transcoding.  They
 * go into lists of `batch` items, and each list is dropped when the next one
 * is full, as `for b in reader.batches(batch): pass` holds two at a time:
 * the allocations, the header and data stores, the list stores and the frees
 * that every such reader pays.  It returns the last list.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    Py_ssize_t len;
    Py_UCS4 maxchar;
    int kind;
} item;

static item *items;
static unsigned char *units;
static Py_ssize_t nitems;

static PyObject *
prepare(PyObject *self, PyObject *args)
{
    PyObject *src;
    Py_ssize_t j, bytes = 0, at = 0, n;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &src))
        return NULL;
    n = PyList_GET_SIZE(src);
    for (j = 0; j < n; j++) {
        PyObject *s = PyList_GET_ITEM(src, j);
        if (!PyUnicode_CheckExact(s)) {
            PyErr_Format(PyExc_TypeError, "prepare(): strs[%zd] is not a str", j);
            return NULL;
        }
        bytes += PyUnicode_GET_LENGTH(s) * PyUnicode_KIND(s);
    }
    free(items);
    free(units);
    nitems = 0;
    items = malloc(sizeof(item) * (size_t)(n ? n : 1));
    units = malloc((size_t)(bytes ? bytes : 1));
    if (items == NULL || units == NULL)
        return PyErr_NoMemory();
    for (j = 0; j < n; j++) {
        PyObject *s = PyList_GET_ITEM(src, j);
        items[j].len = PyUnicode_GET_LENGTH(s);
        items[j].kind = PyUnicode_KIND(s);
        items[j].maxchar = PyUnicode_MAX_CHAR_VALUE(s);
        memcpy(units + at, PyUnicode_DATA(s), (size_t)(items[j].len * items[j].kind));
        at += items[j].len * items[j].kind;
    }
    nitems = n;
    Py_RETURN_NONE;
}

static PyObject *
build(PyObject *self, PyObject *args)
{
    PyObject *prev = NULL;
    Py_ssize_t total, batch, done = 0, k = 0, at = 0, j;
    (void)self;
    if (!PyArg_ParseTuple(args, "nn", &total, &batch))
        return NULL;
    if (nitems == 0 || batch <= 0 || total < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "build(total, batch): nothing prepared, batch <= 0 or total < 0");
        return NULL;
    }
    while (done < total) {
        const Py_ssize_t m = total - done < batch ? total - done : batch;
        PyObject *list = PyList_New(m);
        if (list == NULL)
            goto fail;
        for (j = 0; j < m; j++) {
            const item *it = &items[k];
            PyObject *t = PyUnicode_New(it->len, it->maxchar);
            if (t == NULL) {
                Py_DECREF(list);
                goto fail;
            }
            memcpy(PyUnicode_DATA(t), units + at, (size_t)(it->len * it->kind));
            at += it->len * it->kind;
            if (++k == nitems)
                k = at = 0;
            PyList_SET_ITEM(list, j, t);
        }
        Py_XDECREF(prev);
        prev = list;
        done += m;
    }
    if (prev == NULL)
        return PyList_New(0);
    return prev; /* the last list: what a test can compare */
fail:
    Py_XDECREF(prev);
    return NULL;
}

static PyMethodDef methods[] = {
    {"prepare", prepare, METH_VARARGS, "prepare(strs): the strs build() copies, cycled"},
    {"build", build, METH_VARARGS,
     "build(total, batch): total new strs copied from the prepared ones, in lists of batch;\n"
     "returns the last list"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "str_floor", NULL, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit_str_floor(void)
{
    return PyModule_Create(&module);
}
