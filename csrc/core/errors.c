/*
 * Error helpers shared by every component (core.h): the exception stash,
 * and the check of what a custom error handler returns, written once for
 * both directions.
 */
#include "core.h"

PyObject *
u8p_exc_take(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value != NULL && tb != NULL)
        PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
#endif
}

void
u8p_exc_raise(PyObject *value)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(value);
#else
    PyObject *tb = PyException_GetTraceback(value);
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(value)), value, tb);
#endif
}

void
u8p_stash_take(u8p_err_stash *x)
{
#if PY_VERSION_HEX >= 0x030C0000
    x->exc = PyErr_GetRaisedException();
#else
    PyErr_Fetch(&x->type, &x->value, &x->tb);
#endif
}

void
u8p_stash_put(u8p_err_stash *x)
{
#if PY_VERSION_HEX >= 0x030C0000
    if (x->exc != NULL) {
        PyErr_Clear();
        PyErr_SetRaisedException(x->exc);
    }
#else
    if (x->type != NULL) {
        PyErr_Clear();
        PyErr_Restore(x->type, x->value, x->tb);
    }
#endif
}

void
u8p_stash_drop(u8p_err_stash *x)
{
#if PY_VERSION_HEX >= 0x030C0000
    Py_XDECREF(x->exc);
#else
    Py_XDECREF(x->type);
    Py_XDECREF(x->value);
    Py_XDECREF(x->tb);
#endif
}

PyObject *
u8p_handler_result(PyObject *r, int encoding, Py_ssize_t n, Py_ssize_t *newpos)
{
    PyObject *rep;
    Py_ssize_t pos;
    if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2 ||
        !(PyUnicode_Check(PyTuple_GET_ITEM(r, 0)) ||
          (encoding && PyBytes_Check(PyTuple_GET_ITEM(r, 0)))) ||
        !PyLong_Check(PyTuple_GET_ITEM(r, 1))) {
        /* CPython's own messages, one per direction */
        PyErr_SetString(PyExc_TypeError,
                        encoding ? "encoding error handler must return (str/bytes, int) tuple"
                                 : "decoding error handler must return (str, int) tuple");
        return NULL;
    }
    rep = PyTuple_GET_ITEM(r, 0);
    pos = PyLong_AsSsize_t(PyTuple_GET_ITEM(r, 1));
    if (pos == -1 && PyErr_Occurred())
        return NULL;
    if (pos < 0)
        pos += n;
    if (pos < 0 || pos > n) {
        PyErr_Format(PyExc_IndexError, "position %zd from error handler out of bounds", pos);
        return NULL;
    }
    *newpos = pos;
    return rep;
}
