/*
 * utf8pfx._core: module definition (multi-phase init, per-module state),
 * kernel selection, error-handler parsing, and the module-level functions
 * encode(), utf8_length(), vint_size(), isa().
 */
#include <stdlib.h>

#include "encode.h"

const u8p_kernels *u8p_K = &u8p_kernels_scalar;

static const char *const isa_names[U8P_ISA_COUNT] = {"scalar", "sse", "avx2", "avx512"};

u8p_state *
u8p_get_state(PyObject *module)
{
    return (u8p_state *)PyModule_GetState(module);
}

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
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0, i;
    *errors = NULL;
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
        if (PyUnicode_CompareWithASCIIString(key, "errors") != 0 || *errors != NULL) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected or repeated keyword %R",
                         fname, key);
            return -1;
        }
        *errors = args[nargs + i];
    }
    return 0;
}

/* vint(n) + body as a new bytes object. */
static PyObject *
prefixed_bytes(const void *body, Py_ssize_t n)
{
    Py_ssize_t pw = (Py_ssize_t)u8p_vint_size((uint64_t)n);
    PyObject *out = PyBytes_FromStringAndSize(NULL, pw + n);
    if (out != NULL) {
        u8p_vint_write((uint8_t *)PyBytes_AS_STRING(out), (uint64_t)n);
        if (n)
            memcpy(PyBytes_AS_STRING(out) + pw, body, (size_t)n);
    }
    return out;
}

/* One prefixed string as a new bytes object, sized exactly. */
static PyObject *
mod_encode(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *s, *errors, *out, *b;
    u8p_errors eh;
    u8p_str v;
    Py_ssize_t body, pw;
    uint8_t tmp[512];
    (void)module;

    if (u8p_parse_arg_errors(args, nargs, kwnames, "encode", &s, &errors) < 0 ||
        u8p_parse_errors(errors, &eh, "encode()") < 0 ||
        u8p_str_view(s, &v, "encode() argument") < 0)
        return NULL;

    /* short strings: one pass into the stack, then one exact copy */
    if (v.n <= (Py_ssize_t)sizeof tmp / 4 &&
        v.n * u8p_max_bytes_per_cp(&v) <= (Py_ssize_t)sizeof tmp) {
        body = u8p_body_encode(&v, eh, tmp);
        if (body >= 0)
            return prefixed_bytes(tmp, body);
    }
    else {
        body = u8p_body_length(&v, eh);
        if (body >= 0) {
            pw = (Py_ssize_t)u8p_vint_size((uint64_t)body);
            out = PyBytes_FromStringAndSize(NULL, pw + body);
            if (out == NULL)
                return NULL;
            u8p_vint_write((uint8_t *)PyBytes_AS_STRING(out), (uint64_t)body);
            if (u8p_body_encode_counted(&v, eh, (uint8_t *)PyBytes_AS_STRING(out) + pw,
                                        body) < 0) {
                Py_DECREF(out);
                return NULL;
            }
            return out;
        }
    }
    if (body != U8P_NEED_CODEC)
        return NULL;
    b = u8p_body_via_codec(&v, errors);
    if (b == NULL)
        return NULL;
    out = prefixed_bytes(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b));
    Py_DECREF(b);
    return out;
}

static PyObject *
mod_utf8_length(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *s, *errors, *b;
    u8p_errors eh;
    u8p_str v;
    Py_ssize_t body;
    (void)module;

    if (u8p_parse_arg_errors(args, nargs, kwnames, "utf8_length", &s, &errors) < 0 ||
        u8p_parse_errors(errors, &eh, "utf8_length()") < 0 ||
        u8p_str_view(s, &v, "utf8_length() argument") < 0)
        return NULL;
    body = u8p_body_length(&v, eh);
    if (body >= 0)
        return PyLong_FromSsize_t(body);
    if (body != U8P_NEED_CODEC)
        return NULL;
    b = u8p_body_via_codec(&v, errors);
    if (b == NULL)
        return NULL;
    body = PyBytes_GET_SIZE(b);
    Py_DECREF(b);
    return PyLong_FromSsize_t(body);
}

static PyObject *
mod_vint_size(PyObject *module, PyObject *arg)
{
    uint64_t n;
    (void)module;
    if (u8p_parse_u64(arg, &n, "vint_size") < 0)
        return NULL;
    return PyLong_FromSize_t(u8p_vint_size(n));
}

static PyObject *
mod_isa(PyObject *module, PyObject *Py_UNUSED(ignored))
{
    (void)module;
    return PyUnicode_FromString(u8p_K->name);
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

/* Testing hook: switch the kernel table; returns the previous name. */
static PyObject *
mod_set_isa(PyObject *module, PyObject *arg)
{
    const char *prev = u8p_K->name;
    int lvl = u8p_level_arg(arg, enc_level_name, "_set_isa");
    (void)module;
    if (lvl < 0)
        return NULL;
    u8p_K = u8p_kernels_for_level((u8p_isa)lvl);
    return PyUnicode_FromString(prev);
}

static PyMethodDef module_methods[] = {
    {"encode", (PyCFunction)(void (*)(void))mod_encode, METH_FASTCALL | METH_KEYWORDS,
     "encode(s, /, errors='strict')\n--\n\n"
     "vint(len(e)) + e, e = s.encode('utf-8', errors), as bytes."},
    {"utf8_length", (PyCFunction)(void (*)(void))mod_utf8_length,
     METH_FASTCALL | METH_KEYWORDS,
     "utf8_length(s, /, errors='strict')\n--\n\n"
     "len(s.encode('utf-8', errors)), computed without encoding."},
    {"vint_size", (PyCFunction)mod_vint_size, METH_O,
     "vint_size(n, /)\n--\n\nBytes in the unsigned LEB128 VInt of n (0 <= n < 2**64)."},
    {"isa", (PyCFunction)mod_isa, METH_NOARGS,
     "isa()\n--\n\nThe kernel instruction set in use ('scalar', 'sse', 'avx2', ...)."},
    {"_isa_levels", (PyCFunction)mod_isa_levels, METH_NOARGS,
     "_isa_levels()\n--\n\nKernel levels this CPU and build support (testing)."},
    {"_set_isa", (PyCFunction)mod_set_isa, METH_O,
     "_set_isa(name, /)\n--\n\nSwitch kernels; returns the previous level (testing)."},
    {NULL, NULL, 0, NULL},
};

static int
select_kernels(void)
{
    const char *cap = getenv("UTF8PFX_ISA");
    const u8p_kernels *k = u8p_select_kernels(cap);
    if (k == NULL) {
        PyErr_Format(PyExc_ImportError,
                     "UTF8PFX_ISA=%.100s is not a kernel level; use one of %s, %s, %s, %s",
                     cap, isa_names[0], isa_names[1], isa_names[2], isa_names[3]);
        return -1;
    }
    u8p_K = k;
    return 0;
}

static int
module_exec(PyObject *module)
{
    u8p_state *st = u8p_get_state(module);
    if (select_kernels() < 0)
        return -1;
    if (u8p_writer_exec(module, st) < 0)
        return -1;
    if (u8p_reader_exec(module, st) < 0)
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
    module_methods,
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
