/*
 * Shared declarations of the Python glue (not of the kernels: those are in
 * csrc/kernels/ and never include Python.h).
 */
#ifndef UTF8PFX_GLUE_H
#define UTF8PFX_GLUE_H

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

#include "kernels/kernels.h"
#include "kernels/prefix.h"
#include "kernels/decode.h"
#include "kernels/mutf8.h"

/* The ints a short write returns (0..128: a one-byte prefix and a body of
 * under 128 bytes), kept so that write_string's short path hands one back
 * with a load and an increment instead of a call into CPython
 * (PyLong_FromSsize_t took 9 % of the time of write_string over the UCS2
 * corpus names under perf).  They are the interpreter's own small ints, so
 * a caller gets the very object it would have got. */
#define U8P_INTS 129

/* Per-module state (multi-phase init; heap types live here). */
typedef struct {
    PyTypeObject *writer_type;
    PyTypeObject *reader_type;
    PyObject *ints[U8P_INTS]; /* released in m_free only: a writer keeps its
                                 type, the type its module, so the table
                                 outlives every writer that points at it */
} u8p_state;

/* The kernel tables in use: chosen once at import (UTF8PFX_ISA caps them),
 * switchable by the testing hooks (isa.c). */
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

/* Each part of the module registers its types and functions here. */
int u8p_isa_exec(PyObject *module);
int u8p_functions_exec(PyObject *module);
int u8p_writer_exec(PyObject *module, u8p_state *st);
const char *u8p_writer_write_string_build(void);
int u8p_reader_exec(PyObject *module, u8p_state *st);
int u8p_arrow_exec(PyObject *module, u8p_state *st); /* arrow_out.c */

u8p_state *u8p_get_state(PyObject *module);
/* The state of the module that defined `type` or the utf8pfx base class it
 * derives from (a Python subclass of BufferWriter has no module of its own);
 * NULL with TypeError if there is none. */
u8p_state *u8p_state_of_type(PyTypeObject *type);

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
 * given), for the functions that take a wire-format preset. */
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

#endif /* UTF8PFX_GLUE_H */
