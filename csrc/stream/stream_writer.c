/*
 * StreamWriter's core, the base class utf8pfx/_streamwriter.py builds on:
 * the object's fields, its call lock, and the one-record methods.
 *
 * The Python part does what runs Python code anyway: write_strings' chunks
 * (an iterator's items, a flush between chunks), the calls to sink.write
 * and their results, close.  A one-record call, on the other hand, is a
 * few dozen nanoseconds of work in the BufferWriter, which a Python method
 * around it (a lock, an owner check, the call) would multiply; so
 * write_string, write_bytes, write_raw and write_vint are C here, and the
 * Python part takes the same lock through _enter() and _leave().
 *
 * A one-record call: the lock (a call from inside another one on the same
 * thread is refused), the closed check, then BufferWriter's own method on
 * the buffer (the build module init chose, so the bytes, results and
 * errors are BufferWriter's), then, once the buffer holds flush_size
 * bytes, the Python part's _after_write(1), which flushes.  Every
 * exception carries records_accepted: 0 when the record was refused (the
 * BufferWriter left the buffer as it was), 1 when the sink failed after
 * the record was buffered (_after_write notes it).
 */
#include "stream.h"
#include "structmember.h"
#include "core/calllock.h"
#include "writer/writer.h"

typedef struct {
    PyObject_HEAD
    WriterObject *w;      /* the buffer (a BufferWriter); NULL before __init__ */
    Py_ssize_t flush_size;
    long long produced;   /* bytes taken by the sink plus buffered */
    char closed;
    u8p_calllock call;
    const u8p_state *st;  /* its module's, alive as long as the type */
} SWObject;

/* The exception being raised gets records_accepted = k (a failure to set
 * it is dropped: the exception itself is what matters). */
static void
sw_note(const SWObject *self, Py_ssize_t k)
{
    PyObject *e = u8p_exc_take(), *n;
    if (e == NULL)
        return;
    n = PyLong_FromSsize_t(k);
    if (n == NULL || PyObject_SetAttr(e, self->st->str_records_accepted, n) < 0)
        PyErr_Clear();
    Py_XDECREF(n);
    u8p_exc_raise(e);
}

static int
sw_enter(SWObject *self)
{
    if (u8p_calllock_enter(&self->call) < 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "StreamWriter is in the middle of a call on this thread (sink.write(), "
                        "the iterator or an error handler called back into it)");
        sw_note(self, 0);
        return -1;
    }
    return 0;
}

/* One record through the BufferWriter method `put` (METH_O). */
static PyObject *
sw_one(SWObject *self, PyObject *arg, PyCFunction put)
{
    PyObject *res, *r, *w;
    Py_ssize_t n;
    if (sw_enter(self) < 0)
        return NULL;
    if (self->closed || self->w == NULL) {
        PyErr_SetString(PyExc_ValueError, "I/O operation on closed StreamWriter");
        goto refused;
    }
    w = (PyObject *)self->w;
    Py_INCREF(w); /* an error handler it runs could replace _w meanwhile */
    res = put(w, arg);
    Py_DECREF(w);
    if (res == NULL)
        goto refused;
    n = PyLong_AsSsize_t(res); /* the bytes appended: a small int */
    if (n < 0) {
        Py_DECREF(res);
        goto refused;
    }
    self->produced += n;
    if (self->w->len >= self->flush_size) {
        r = PyObject_CallMethodOneArg((PyObject *)self, self->st->str_after_write,
                                      self->st->ints[1]);
        if (r == NULL) { /* the sink's failure, noted with the record accepted */
            Py_DECREF(res);
            u8p_calllock_exit(&self->call);
            return NULL;
        }
        Py_DECREF(r);
    }
    u8p_calllock_exit(&self->call);
    return res;
refused:
    sw_note(self, 0);
    u8p_calllock_exit(&self->call);
    return NULL;
}

/* the METH_O method that writes one record through writer_put[WHICH] */
#define SW_ONE(NAME, WHICH)                                                   \
    static PyObject *NAME(SWObject *self, PyObject *arg)                      \
    {                                                                         \
        return sw_one(self, arg, self->st->writer_put[WHICH]);                \
    }
SW_ONE(SW_write_string, U8P_PUT_STRING)
SW_ONE(SW_write_bytes, U8P_PUT_BYTES)
SW_ONE(SW_write_raw, U8P_PUT_RAW)
SW_ONE(SW_write_vint, U8P_PUT_VINT)
#undef SW_ONE

static PyObject *
SW_enter_call(SWObject *self, PyObject *Py_UNUSED(ignored))
{
    if (sw_enter(self) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
SW_leave_call(SWObject *self, PyObject *Py_UNUSED(ignored))
{
    if (!u8p_calllock_mine(&self->call)) {
        PyErr_SetString(PyExc_RuntimeError, "_leave() without _enter() on this thread");
        return NULL;
    }
    u8p_calllock_exit(&self->call);
    Py_RETURN_NONE;
}

/* ---- cutting write_strings' input into chunks -------------------------
 *
 * A chunk's count comes from the bytes per record of the chunks before it
 * (the Python part); these cut it short where its records turn out longer,
 * so that a run of long records after many short ones cannot pile up in
 * the buffer, nor, from an iterator, in the chunk's list, far beyond
 * flush_size.  Each item is weighed by what its str can take at most: 1
 * byte a character for ASCII, 2 for Latin-1, 3 for UCS2, 4 for UCS4, and
 * a short prefix; anything else weighs 1 (None, or a wrong type write_strings
 * then refuses).  Reading a str's header here costs little: the writer
 * reads it next. */
static inline Py_ssize_t
sw_weight(PyObject *o)
{
    const PyASCIIObject *u = (const PyASCIIObject *)o;
    if (!PyUnicode_Check(o))
        return 1;
    if (u->length > PY_SSIZE_T_MAX / 8)
        return PY_SSIZE_T_MAX / 2;
    /* the header's own bits: a str not made ready (3.9 to 3.11, deprecated
     * APIs only) has kind 0 there and weighs as UCS4 */
    if (u->state.ascii)
        return u->length + 4;
    return (u->state.kind == PyUnicode_1BYTE_KIND   ? 2
            : u->state.kind == PyUnicode_2BYTE_KIND ? 3
                                                    : 4) * u->length + 4;
}

/* The small ints the Python part passes, read from args[1..n]. */
static int
sw_ints(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t want, const char *fname,
        Py_ssize_t *out)
{
    Py_ssize_t i;
    if (nargs != want) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd arguments (%zd given)", fname, want,
                     nargs);
        return -1;
    }
    for (i = 1; i < want; i++) {
        out[i - 1] = PyLong_AsSsize_t(args[i]);
        if (out[i - 1] == -1 && PyErr_Occurred())
            return -1;
    }
    return 0;
}

/* _pull(it, k, budget) -> (items, exc, ended): up to k items of the
 * iterator `it` (SW_PULL_SLOTS at most: the Python part asks for fewer),
 * fewer once their weight reaches `budget` (one at least); exc is None, or
 * the exception the iterator raised after the items it gave (the caller
 * writes those, then raises it); ended, whether the iterator said it has
 * no more. */
#define SW_PULL_SLOTS 8192

static PyObject *
SW_pull(SWObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *list, *item, *exc = NULL;
    Py_ssize_t v[2], k, budget, used = 0, got;
    iternextfunc next;
    int ended = 0;
    (void)self;
    if (sw_ints(args, nargs, 3, "_pull", v) < 0)
        return NULL;
    k = v[0] < 0 ? 0 : v[0] > SW_PULL_SLOTS ? SW_PULL_SLOTS : v[0];
    budget = v[1];
    if (!PyIter_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "_pull() needs an iterator");
        return NULL;
    }
    /* the slots up front, filled in place, the list cut to what came.  The
     * iterator runs Python code meanwhile: the list stays out of the
     * collector's sight (gc.get_objects) while it has empty slots. */
    list = PyList_New(k);
    if (list == NULL)
        return NULL;
    PyObject_GC_UnTrack(list);
    next = Py_TYPE(args[0])->tp_iternext;
    for (got = 0; got < k && (got == 0 || used < budget); got++) {
        item = next(args[0]);
        if (item == NULL) {
            if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_StopIteration)) {
                exc = u8p_exc_take();
            }
            else {
                PyErr_Clear();
                ended = 1;
            }
            break;
        }
        used += sw_weight(item);
        PyList_SET_ITEM(list, got, item);
    }
    Py_SET_SIZE(list, got); /* the empty slots after it are never read */
    PyObject_GC_Track(list);
    return Py_BuildValue("(NNO)", list, exc != NULL ? exc : Py_NewRef(Py_None),
                         ended ? Py_True : Py_False);
}

/* _fit(seq, pos, k, budget) -> m: how many items of the list or tuple seq
 * from pos to take: k at most, fewer once they weigh `budget` (the last one
 * taken included), one at least while any is left. */
static PyObject *
SW_fit(SWObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *seq;
    Py_ssize_t v[3], pos, k, budget, len, i, used = 0;
    (void)self;
    if (sw_ints(args, nargs, 4, "_fit", v) < 0)
        return NULL;
    seq = args[0];
    if (!PyList_CheckExact(seq) && !PyTuple_CheckExact(seq)) {
        PyErr_SetString(PyExc_TypeError, "_fit() needs a list or a tuple");
        return NULL;
    }
    len = PySequence_Fast_GET_SIZE(seq);
    pos = v[0] < 0 || v[0] > len ? len : v[0];
    k = v[1] > len - pos ? len - pos : v[1];
    budget = v[2];
    for (i = 0; i < k && (i == 0 || used < budget); i++)
        used += sw_weight(PySequence_Fast_GET_ITEM(seq, pos + i));
    return PyLong_FromSsize_t(i);
}

/* _w: the BufferWriter (the Python part replaces it when a view the sink
 * kept still exports the old one, and at close) */
static PyObject *
SW_get_w(SWObject *self, void *Py_UNUSED(closure))
{
    if (self->w == NULL) {
        PyErr_SetString(PyExc_AttributeError, "_w");
        return NULL;
    }
    return Py_NewRef((PyObject *)self->w);
}

static int
SW_set_w(SWObject *self, PyObject *v, void *Py_UNUSED(closure))
{
    WriterObject *old = self->w;
    if (v == NULL || !PyObject_TypeCheck(v, self->st->writer_type)) {
        PyErr_SetString(PyExc_TypeError, "_w must be a BufferWriter");
        return -1;
    }
    self->w = (WriterObject *)Py_NewRef(v);
    Py_XDECREF(old);
    return 0;
}

static PyObject *
SW_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    SWObject *self;
    const u8p_state *st = u8p_state_of_type(type);
    (void)args, (void)kwds; /* __init__ (the Python part) reads them */
    if (st == NULL)
        return NULL;
    self = (SWObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->st = st;
    self->flush_size = 1;
    if (u8p_calllock_init(&self->call) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* No traverse or clear: the only object held is a BufferWriter, which
 * refers to nothing that could lead back here.  StreamWriter, the Python
 * subclass, is collected for what its own slots hold (the sink); its
 * dealloc untracks the object before it calls this one. */
static void
SW_dealloc(SWObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    Py_CLEAR(self->w);
    u8p_calllock_free(&self->call);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

/* ---- settling a failure without allocating -----------------------------
 *
 * A failed call is settled by the Python part (kept, or taken back to the
 * buffer's length and the position at its start).  These do the part of
 * it that changes state, with no allocation: settling must not fail for
 * want of memory when the first failure was that (Python's int
 * arithmetic and bytes copies would allocate). */

/* Two Python ints as a long long each. */
static int
sw_two_ints(PyObject *const *args, Py_ssize_t nargs, const char *fname, long long *a,
            long long *b)
{
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "%s() takes exactly 2 arguments (%zd given)", fname,
                     nargs);
        return -1;
    }
    *a = PyLong_AsLongLong(args[0]);
    if (*a == -1 && PyErr_Occurred())
        return -1;
    *b = PyLong_AsLongLong(args[1]);
    if (*b == -1 && PyErr_Occurred())
        return -1;
    return 0;
}

/* _rewind(n, produced): the buffer cut back to its first n bytes in place
 * and the position set to produced: True; False with nothing changed
 * while a view the sink kept still exports the buffer (the caller then
 * copies into a new one). */
static PyObject *
SW_rewind(SWObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    long long n, produced;
    if (sw_two_ints(args, nargs, "_rewind", &n, &produced) < 0)
        return NULL;
    if (self->w == NULL || n < 0 || n > (long long)self->w->len) {
        PyErr_SetString(PyExc_ValueError, "_rewind() length out of range");
        return NULL;
    }
    if (self->w->exports > 0 || self->w->busy)
        Py_RETURN_FALSE;
    self->w->len = (Py_ssize_t)n;
    self->produced = produced;
    Py_RETURN_TRUE;
}

/* _count(base, k): the position set to base + k. */
static PyObject *
SW_count(SWObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    long long base, k;
    if (sw_two_ints(args, nargs, "_count", &base, &k) < 0)
        return NULL;
    self->produced = base + k;
    Py_RETURN_NONE;
}

/* _count_buffer(base): the position set to base plus the bytes buffered. */
static PyObject *
SW_count_buffer(SWObject *self, PyObject *arg)
{
    long long base = PyLong_AsLongLong(arg);
    if (base == -1 && PyErr_Occurred())
        return NULL;
    self->produced = base + (self->w != NULL ? (long long)self->w->len : 0);
    Py_RETURN_NONE;
}

/* its own methods; the four one-record ones are added at module exec, each
 * under the name, flags and docstring of the BufferWriter method it calls
 * (u8p_stream_writer_exec) */
static PyMethodDef SW_methods[] = {
    {"_enter", (PyCFunction)SW_enter_call, METH_NOARGS,
     "_enter($self, /)\n--\n\nTake the writer's call lock (RuntimeError from inside a call)."},
    {"_leave", (PyCFunction)SW_leave_call, METH_NOARGS,
     "_leave($self, /)\n--\n\nGive the call lock back."},
    {"_pull", (PyCFunction)(void (*)(void))SW_pull, METH_FASTCALL,
     "_pull($self, it, k, budget, /)\n--\n\n(items, exc, ended): up to k items of it, fewer "
     "once they weigh budget bytes."},
    {"_fit", (PyCFunction)(void (*)(void))SW_fit, METH_FASTCALL,
     "_fit($self, seq, pos, k, budget, /)\n--\n\nHow many items of seq from pos to take: k at "
     "most, fewer once they weigh budget bytes."},
    {"_rewind", (PyCFunction)(void (*)(void))SW_rewind, METH_FASTCALL,
     "_rewind($self, n, produced, /)\n--\n\nCut the buffer back to n bytes and set the "
     "position, allocating nothing; False while a view exports the buffer."},
    {"_count", (PyCFunction)(void (*)(void))SW_count, METH_FASTCALL,
     "_count($self, base, k, /)\n--\n\nSet the position to base + k, allocating nothing."},
    {"_count_buffer", (PyCFunction)SW_count_buffer, METH_O,
     "_count_buffer($self, base, /)\n--\n\nSet the position to base plus the bytes buffered, "
     "allocating nothing."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef SW_members[] = {
    {"_flush_size", T_PYSSIZET, offsetof(SWObject, flush_size), 0, NULL},
    {"_produced", T_LONGLONG, offsetof(SWObject, produced), 0, NULL},
    {"_closed", T_BOOL, offsetof(SWObject, closed), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef SW_getset[] = {
    {"_w", (getter)SW_get_w, (setter)SW_set_w, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot SW_slots[] = {
    {Py_tp_new, SW_new},
    {Py_tp_dealloc, SW_dealloc},
    {Py_tp_methods, NULL}, /* the list module exec assembles */
    {Py_tp_members, SW_members},
    {Py_tp_getset, SW_getset},
    {Py_tp_doc, "The C core of utf8pfx.StreamWriter (its base class): not for direct use."},
    {0, NULL},
};

static PyType_Spec SW_spec = {
    "utf8pfx._StreamWriterCore",
    sizeof(SWObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    SW_slots,
};

int
u8p_stream_writer_exec(PyObject *module, u8p_state *st)
{
    static const PyCFunction own[U8P_PUT_COUNT] = {
        (PyCFunction)SW_write_string, (PyCFunction)SW_write_bytes, (PyCFunction)SW_write_raw,
        (PyCFunction)SW_write_vint};
    static const char *const names[U8P_PUT_COUNT] = {"write_string", "write_bytes",
                                                     "write_raw", "write_vint"};
    int i;
    for (i = 0; i < U8P_PUT_COUNT; i++) {
        const PyMethodDef *m = u8p_writer_method(st, names[i]);
        PyMethodDef one[2];
        if (m == NULL || (m->ml_flags & ~METH_COEXIST) != METH_O) {
            PyErr_Format(PyExc_SystemError, "BufferWriter has no METH_O %s", names[i]);
            return -1;
        }
        st->writer_put[i] = m->ml_meth;
        one[0] = *m;
        one[0].ml_meth = own[i];
        memset(&one[1], 0, sizeof one[1]);
        if (u8p_methods_add(st->stream_writer_methods, one) < 0)
            return -1;
    }
    if (u8p_methods_add(st->stream_writer_methods, SW_methods) < 0)
        return -1;
    return u8p_add_type(module, &SW_spec, st->stream_writer_methods, &st->stream_writer_type);
}
