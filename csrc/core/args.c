/*
 * Argument parsing shared by the Python glue: error-handler names,
 * (arg, /, errors=) signatures, unsigned 64-bit integers, and the kernel
 * level names that the testing hooks take.  Declared in core.h.
 */
#include <string.h>

#include "core.h"

int
u8p_parse_errors(PyObject *obj, u8p_errors *out, const char *fname)
{
    static const struct {
        const char *name;
        u8p_errors eh;
    } known[] = {
        {"strict", U8P_ERR_STRICT},
        {"surrogatepass", U8P_ERR_SURROGATEPASS},
        {"surrogateescape", U8P_ERR_SURROGATEESCAPE},
        {"replace", U8P_ERR_REPLACE},
        {"ignore", U8P_ERR_IGNORE},
        {"backslashreplace", U8P_ERR_BACKSLASHREPLACE},
    };
    size_t i;
    PyObject *handler;
    const char *name;

    if (obj == NULL) {
        *out = U8P_ERR_STRICT;
        return 0;
    }
    if (!PyUnicode_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s errors must be str, not %.200s", fname,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    for (i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (PyUnicode_CompareWithASCIIString(obj, known[i].name) == 0) {
            *out = known[i].eh;
            return 0;
        }
    }
    name = PyUnicode_AsUTF8(obj);
    if (name == NULL)
        return -1;
    handler = PyCodec_LookupError(name); /* LookupError for an unknown name */
    if (handler == NULL)
        return -1;
    Py_DECREF(handler);
    *out = U8P_ERR_OTHER;
    return 0;
}

int
u8p_parse_arg_errors(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                     const char *fname, PyObject **arg, PyObject **errors)
{
    return u8p_parse_arg_opts(args, nargs, kwnames, fname, arg, errors, NULL, NULL);
}

/* ---- (arg, /, errors=, *, prefix=, encoding=): the preset-aware functions ---- */

int
u8p_parse_arg_opts(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                   const char *fname, PyObject **arg, PyObject **errors, PyObject **prefix,
                   PyObject **encoding)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0, i;
    *errors = NULL;
    if (prefix != NULL)
        *prefix = NULL;
    if (encoding != NULL)
        *encoding = NULL;
    if (nargs < 1 || nargs > 2) {
        PyErr_Format(PyExc_TypeError, "%s() takes 1 or 2 positional arguments (%zd given)",
                     fname, nargs);
        return -1;
    }
    *arg = args[0];
    if (nargs == 2)
        *errors = args[1];
    for (i = 0; i < nkw; i++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, i);
        PyObject **slot = NULL;
        if (PyUnicode_CompareWithASCIIString(key, "errors") == 0)
            slot = errors;
        else if (prefix != NULL && PyUnicode_CompareWithASCIIString(key, "prefix") == 0)
            slot = prefix;
        else if (encoding != NULL && PyUnicode_CompareWithASCIIString(key, "encoding") == 0)
            slot = encoding;
        if (slot == NULL || *slot != NULL) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected or repeated keyword %R",
                         fname, key);
            return -1;
        }
        *slot = args[nargs + i];
    }
    return 0;
}

/* Converts an int-like to uint64: ValueError below 0, OverflowError >= 2**64. */
int
u8p_parse_u64(PyObject *obj, uint64_t *out, const char *fname)
{
    PyObject *idx;
    int overflow = 0;
    long long sv;
    unsigned long long uv;

    idx = PyNumber_Index(obj);
    if (idx == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%s() argument must be int, not %.200s", fname,
                         Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    sv = PyLong_AsLongLongAndOverflow(idx, &overflow);
    if (sv == -1 && PyErr_Occurred()) {
        Py_DECREF(idx);
        return -1;
    }
    if (overflow < 0 || (overflow == 0 && sv < 0)) {
        PyErr_Format(PyExc_ValueError, "%s() argument must be >= 0, got %R", fname, idx);
        Py_DECREF(idx);
        return -1;
    }
    if (overflow == 0) {
        Py_DECREF(idx);
        *out = (uint64_t)sv;
        return 0;
    }
    uv = PyLong_AsUnsignedLongLong(idx);
    if (uv == (unsigned long long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_OverflowError, "%s() argument must be < 2**64, got %R", fname,
                         idx);
        }
        Py_DECREF(idx);
        return -1;
    }
    Py_DECREF(idx);
    *out = (uint64_t)uv;
    return 0;
}

PyObject *
u8p_level_list(u8p_level_name_fn name_of)
{
    PyObject *list = PyList_New(0);
    int lvl;
    if (list == NULL)
        return NULL;
    for (lvl = 0; lvl < U8P_ISA_COUNT; lvl++) {
        const char *name = name_of((u8p_isa)lvl);
        PyObject *item;
        if (name == NULL)
            continue;
        item = PyUnicode_FromString(name);
        if (item == NULL || PyList_Append(list, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(list);
            return NULL;
        }
        Py_DECREF(item);
    }
    return list;
}

int
u8p_level_arg(PyObject *arg, u8p_level_name_fn name_of, const char *fname)
{
    const char *want;
    int lvl;
    if (!PyUnicode_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "%s() argument must be str, not %.200s", fname,
                     Py_TYPE(arg)->tp_name);
        return -1;
    }
    want = PyUnicode_AsUTF8(arg);
    if (want == NULL)
        return -1;
    for (lvl = 0; lvl < U8P_ISA_COUNT; lvl++) {
        const char *name = name_of((u8p_isa)lvl);
        if (name != NULL && strcmp(name, want) == 0)
            return lvl;
    }
    PyErr_Format(PyExc_ValueError, "%s(): level %R is not available on this CPU/build", fname,
                 arg);
    return -1;
}
