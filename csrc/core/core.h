/*
 * core: what every glue component needs (module state and its accessor,
 * the error-handler enum, argument parsing, the kernel tables in use).
 *
 * The glue is layered; each unit uses names only from the units below it:
 *     kernels  <-  core  <-  writer, reader  <-  arrow  <-  stream  <-  module
 * (functions.c and module.c sit at the top).  Glue includes only the
 * kernels' public headers (the .h files at the top of csrc/kernels, never a subfolder);
 * tests/test_layout.py fails if a cycle or a private include comes back.
 */
#ifndef UTF8PFX_CORE_H
#define UTF8PFX_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030A00F0
static inline PyObject *
u8p_newref(PyObject *o)
{
    Py_INCREF(o);
    return o;
}
#define Py_NewRef(o) u8p_newref((PyObject *)(o))
#endif

#include "kernels/attrs.h"
#include "kernels/kernels.h"
#include "kernels/prefix.h"
#include "kernels/decode.h"
#include "kernels/mutf8.h"

/* The ints a short write returns (0..128: a one-byte prefix and a body of
 * under 128 bytes), kept so that write_string's short path hands one back
 * with a load and an increment instead of a call into CPython
 * (PyLong_FromSsize_t is a visible share of a short write's time).  They
 * are the interpreter's own small ints, so
 * a caller gets the very object it would have got. */
#define U8P_INTS 129

/* Room for each type's method list, assembled by module init from the
 * lists its components offer (module.c). */
#define U8P_MAX_METHODS 24

/* write_strings hands an object that is not a list or tuple to Arrow in
 * through this hook, which module init registers: 0 if obj exports no
 * Arrow data (*result untouched), 1 if it was written (*result the return
 * value, or NULL with an exception), -1 with an exception if the check
 * itself failed.  A hook, so that the writer does not depend on Arrow. */
typedef int (*u8p_arrow_in_hook)(PyObject *writer, PyObject *obj, PyObject **result);

/*
 * Per-interpreter state: everything that holds a Python object or can be
 * changed at run time lives here, one copy per module object, so that
 * isolated subinterpreters share nothing but the kernel tables (which
 * describe the CPU).  Objects reach it through their type (u8p_state_of_type)
 * and keep it alive through it: an object holds its type, a heap type its
 * module, so raw pointers into the state (WriterObject.ints, the method
 * tables) are valid for as long as the object or type exists.
 */
/* BufferWriter's one-record methods, in u8p_state.writer_put */
enum { U8P_PUT_STRING, U8P_PUT_BYTES, U8P_PUT_RAW, U8P_PUT_VINT, U8P_PUT_COUNT };

typedef struct {
    PyTypeObject *writer_type;
    PyTypeObject *reader_type;
    PyTypeObject *reader_batches_type;
    PyTypeObject *arrow_array_type;
    PyTypeObject *stream_reader_type;
    PyTypeObject *stream_batches_type;
    PyTypeObject *stream_writer_type;
    PyObject *ints[U8P_INTS];
    /* interned names: Arrow exporters are recognised by their type's
     * __arrow_c_array__ / __arrow_c_stream__; "strict" names the default
     * handler in messages */
    PyObject *str_arrow_c_array;
    PyObject *str_arrow_c_stream;
    PyObject *str_strict;
    /* the attributes StreamReader looks up on every reader it makes and on
     * every fill (see u8p_call_method_interned for why interned) */
    PyObject *str_readinto;
    PyObject *str_read;
    PyObject *str_release;
    /* what StreamWriter's one-record methods call and set */
    PyObject *str_after_write;
    PyObject *str_records_accepted;
    /* values above this many bytes make large_utf8 (int64 offsets); lowered
     * by a testing hook to reach that path without 2 GiB of data */
    int64_t arrow_large_threshold;
    u8p_arrow_in_hook arrow_in;
    /* the build of write_string in BufferWriter's method list, "vbmi2" or
     * "base" (testing) */
    const char *write_string_build;
    PyMethodDef writer_methods[U8P_MAX_METHODS];
    PyMethodDef reader_methods[U8P_MAX_METHODS];
    PyMethodDef stream_writer_methods[U8P_MAX_METHODS];
    /* BufferWriter's one-record methods as assembled above, which
     * StreamWriter calls on its buffer (U8P_PUT_*) */
    PyCFunction writer_put[U8P_PUT_COUNT];
} u8p_state;

/* The kernel tables in use: chosen at import (UTF8PFX_ISA caps them) and
 * switchable by the testing hooks (isa.c).  Process-wide, not per
 * interpreter: they describe the CPU, and every interpreter chooses the
 * same ones (a test's _set_isa switches them for all interpreters). */
extern const u8p_kernels *u8p_K;
extern const u8p_dec_kernels *u8p_D;

/* Error handlers the glue implements in C; anything else is U8P_ERR_OTHER
 * and goes through CPython's codec machinery. */
typedef enum {
    U8P_ERR_STRICT = 0,
    U8P_ERR_SURROGATEPASS,
    U8P_ERR_SURROGATEESCAPE,
    U8P_ERR_REPLACE,
    U8P_ERR_IGNORE,
    U8P_ERR_BACKSLASHREPLACE,
    U8P_ERR_OTHER
} u8p_errors;

/* ---- errors.c: error helpers shared by every component ---- */

/* A pending exception set aside while code that may run Python (a
 * producer's release callback, a second pass that looks for an earlier
 * error) runs, then put back: u8p_stash_put restores it over whatever is
 * pending then, unless nothing was stashed; u8p_stash_drop forgets it. */
typedef struct {
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exc;
#else
    PyObject *type, *value, *tb;
#endif
} u8p_err_stash;

/* The exception being raised as one object (normalized, its traceback
 * attached), cleared; u8p_exc_raise raises it again (steals it). */
PyObject *u8p_exc_take(void);
void u8p_exc_raise(PyObject *value);

void u8p_stash_take(u8p_err_stash *x);
void u8p_stash_put(u8p_err_stash *x);
void u8p_stash_drop(u8p_err_stash *x);

/*
 * Checks what a custom error handler returned, as CPython's codecs do: a
 * (replacement, position) tuple whose replacement is a str, or when
 * `encoding` also bytes, and whose position, negative counting from the
 * end, lies in [0, n].  Returns the replacement (borrowed from r) with the
 * absolute position in *newpos, or NULL with TypeError, IndexError or
 * OverflowError; r stays the caller's to release.
 */
PyObject *u8p_handler_result(PyObject *r, int encoding, Py_ssize_t n, Py_ssize_t *newpos);

/* ---- state.c: the module state's life cycle and accessors ---- */

/*
 * getattr(obj, name) and obj.name(arg) (no argument when arg is NULL) with
 * `name` interned.  CPython's type attribute cache (up to 3.12) files an
 * entry under the name object's address and keeps a reference to it, so a
 * fresh str per call, as PyObject_GetAttrString and PyObject_CallMethod
 * make, parks one more copy in the cache each time until its slot is
 * reused: thousands of stray strs under the plain malloc allocator, which
 * reuses addresses less.  For calls off the hot paths; hot ones use the
 * names kept in the state.
 */
PyObject *u8p_getattr_interned(PyObject *obj, const char *name);
PyObject *u8p_call_method_interned(PyObject *obj, const char *name, PyObject *arg);

/* The module definition's m_traverse, m_clear and m_free (module.c names
 * them in its PyModuleDef; u8p_state_of_type recognises the module by
 * its m_free). */
int u8p_state_traverse(PyObject *module, visitproc visit, void *arg);
int u8p_state_clear(PyObject *module);
void u8p_state_free(void *module);
/* Fills the state's own fields (ints, names, defaults); module exec runs it
 * first. */
int u8p_state_init(u8p_state *st);

static inline u8p_state *
u8p_get_state(PyObject *module)
{
    return (u8p_state *)PyModule_GetState(module);
}

/* The state of the module that defined `type` or the utf8pfx base class it
 * derives from (a Python subclass of BufferWriter has no module of its own);
 * NULL with TypeError if there is none. */
u8p_state *u8p_state_of_type(PyTypeObject *type);

/* Appends the entries of `list` (NULL-terminated) to the NULL-terminated
 * method list `dst` of U8P_MAX_METHODS entries; -1 with SystemError if
 * they do not fit or a name is already there (assembly never overwrites). */
int u8p_methods_add(PyMethodDef *dst, const PyMethodDef *list);

/* Adds a heap type made from spec to the module under its short name (the
 * part of spec->name after the last dot); *out gets a new reference for
 * the state.  tp_methods, when given, replaces the spec's Py_tp_methods. */
int u8p_add_type(PyObject *module, PyType_Spec *spec, PyMethodDef *tp_methods,
                 PyTypeObject **out);

/* ---- isa.c: kernel selection and its testing hooks ---- */
int u8p_isa_exec(PyObject *module);

/* ---- args.c: argument parsing shared by the glue ---- */

/*
 * Parses an `errors` argument (a str, or NULL for "strict").  Known names map
 * to their enum; another name must be a registered handler, else LookupError
 * (checked eagerly, unlike CPython which waits for the first error).
 * Returns -1 with an exception set on failure.
 */
int u8p_parse_errors(PyObject *obj, u8p_errors *out, const char *fname);

/* Parses (arg, /, errors=None) for METH_FASTCALL | METH_KEYWORDS functions;
 * *errors is NULL when not given.  TypeError naming `fname` otherwise. */
int u8p_parse_arg_errors(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                         const char *fname, PyObject **arg, PyObject **errors);

/* The same with keyword-only prefix= and encoding= (each NULL when not
 * given), for the functions that take a wire-format preset; a NULL
 * prefix or encoding pointer refuses that keyword. */
int u8p_parse_arg_opts(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                       const char *fname, PyObject **arg, PyObject **errors, PyObject **prefix,
                       PyObject **encoding);

/* Testing hooks over kernel levels: name_of(level) is the name of the
 * table compiled and supported for that level, or NULL. */
typedef const char *(*u8p_level_name_fn)(u8p_isa level);
PyObject *u8p_level_list(u8p_level_name_fn name_of);
/* The level named by a str argument, or -1 with TypeError/ValueError. */
int u8p_level_arg(PyObject *arg, u8p_level_name_fn name_of, const char *fname);

/* int-like -> uint64: TypeError for non-int, ValueError below 0,
 * OverflowError at 2**64 and above; messages name `fname`. */
int u8p_parse_u64(PyObject *obj, uint64_t *out, const char *fname);

#endif /* UTF8PFX_CORE_H */
