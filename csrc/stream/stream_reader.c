/*
 * StreamReader: the records of a byte stream, in either of two modes.
 *   pull  StreamReader(f): reads f with f.readinto(view) into the reader's
 *         own buffer (f.read(n) and a copy when f has no readinto), as
 *         records are asked for; b"" / 0 is the end of the stream.
 *   push  StreamReader(): the caller hands bytes to feed() (copied, so
 *         that no export of the caller's object outlives the call) and
 *         says feed_eof() when no more will come.
 *
 * The window: a bytearray holds the bytes from the next unreturned record
 * (`start`) to the end of what arrived (`end`); `base` is the stream offset
 * of its first byte.  Records wholly inside are decoded in place by the
 * reader's functions (reader.h) over an rd_ctx whose `base` makes their
 * error offsets absolute.  When more room is needed the unreturned tail is
 * moved to the front once, and the window grows only by what arrives:
 * never by a declared length, which could be hostile (max_record refuses a
 * long one as soon as its prefix is read).  batches_arrow hands the walked
 * records to Arrow out's builder (arrow.h) the same way.
 *
 * Parsing resumes: `scan_k` complete records are known to follow `start`
 * (`scan_len` bytes), and `need` is how many bytes from the end of those
 * the next record needs, so a long record arriving in small pieces is
 * looked at again only when enough bytes are there (linear, not
 * quadratic).  Nothing is committed (start, index) before a whole call has
 * succeeded: read_strings is all or nothing, and an exception from the
 * source loses no record and repeats none (the bytes stay held).
 *
 * Lists of strs pulled from a source (read_strings, batches) are read in
 * one pass instead: the records wholly in the window are decoded as their
 * prefixes are read, then the window is refilled, and the records of the
 * next window join the same list (u8p_rd_list_held's into).  A call that
 * cannot finish (the source raised, or has no data now) drops what it
 * decoded; from then on the reader walks before it decodes (walk_first),
 * so a source that keeps failing never has the same records decoded again
 * and again.  Push mode always walks first: there, running out of data is the
 * normal way a call ends.
 *
 * "Not now": before the end of the stream (push mode before feed_eof(), or
 * a pull source whose read returns None, i.e. non-blocking with no data),
 * an incomplete tail is not an error.  Iteration and batches() stop,
 * read_strings(-1) returns the complete records held, read_strings(n)
 * returns [] and consumes nothing, and the one-item methods raise
 * BlockingIOError (what io raises for a read that would block); a later
 * call resumes.
 *
 * Threads and re-entrancy: every method marks the reader busy for its
 * whole call (sr_enter).  Another thread waits for it with the GIL
 * released; the thread whose call it is (its source's read, an error
 * handler, a finalizer calling back into the reader) gets RuntimeError
 * instead of a deadlock or a window changing under its feet.  The
 * read-only properties answer such a call with the committed state.
 * A UTF-8 record of U8P_NOGIL_MIN bytes or more is decoded with the GIL
 * released (sr_item, u8p_rd_list): the window is the reader's own
 * bytearray, and the busy flag keeps every other call out meanwhile.
 *
 * Errors name the absolute offset and the index of the record: ValueError
 * gets "(record index N)" appended and the attributes `data_offset` (where
 * the failing record starts) and `record_index`; UnicodeDecodeError keeps
 * CPython's fields, the reader's `payload_offset` / `data_offset`, and gets
 * `record_index` (and on 3.11+ a note).  The index counts the records
 * returned or skipped before (read_vint and read_raw do not count).
 */
#include <errno.h>
#include <string.h>

#include "stream.h"
#include "reader/reader.h"
#include "arrow/arrow.h"
#include "core/calllock.h"

typedef struct {
    PyObject_HEAD
    PyObject *source;   /* NULL in push mode */
    PyObject *readinto; /* source.readinto, or NULL */
    PyObject *read;     /* source.read when it has no readinto */
    PyObject *buf;      /* bytearray, the window; NULL once closed */
    Py_ssize_t start;   /* next unreturned byte of buf */
    Py_ssize_t end;     /* bytes of buf that hold data */
    Py_ssize_t base;    /* stream offset of buf[0] */
    Py_ssize_t scan_k;  /* complete records known after start ... */
    Py_ssize_t scan_len; /* ... and the bytes they take */
    Py_ssize_t need;    /* bytes the record after them needs (0: not known) */
    Py_ssize_t index;   /* records returned or skipped */
    Py_ssize_t read_size;
    Py_ssize_t max_record; /* -1: no limit */
    int pull;
    int eof;
    /* the source has returned None or raised: list calls walk their
     * records before decoding them from then on (sr_read_list) */
    int walk_first;
    int is_open;
    int strict_vint;
    /* the source kept an export of the window (rd_ctx.shared, until
     * sr_reserve moves to a window of the reader's own): it may write into
     * the window while records are decoded */
    int shared;
    u8p_errors eh;
    PyObject *errors; /* handler name (str) */
    u8p_prefix prefix;
    u8p_encoding enc;
    u8p_state *st;       /* its module's, alive as long as the type (the names) */
    u8p_calllock call; /* one call at a time (core/calllock.h) */
} StreamObject;

typedef struct {
    PyObject_HEAD
    StreamObject *reader;
    Py_ssize_t n;
    int kind; /* BATCH_STR, BATCH_BYTES or BATCH_ARROW */
    u8p_pins pins; /* of the last list returned (reader.h) */
} BatchesObject;

enum { BATCH_STR = 0, BATCH_BYTES = 1, BATCH_ARROW = 2 };

#define SBUF(self) ((uint8_t *)PyByteArray_AS_STRING((self)->buf))

/* ------------------------------------------------------ lock, re-entry */

static int
sr_enter(StreamObject *self)
{
    if (u8p_calllock_enter(&self->call) < 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "re-entrant call into a StreamReader: a call on this reader is "
                        "already running in this thread (from its source's read, an "
                        "error handler or a finalizer?)");
        return -1;
    }
    return 0;
}

static void
sr_exit(StreamObject *self)
{
    u8p_calllock_exit(&self->call);
}

/* sr_enter, then ValueError if closed (the lock is then given back). */
static inline int
sr_enter_open(StreamObject *self)
{
    if (sr_enter(self) < 0)
        return -1;
    if (!self->is_open) {
        sr_exit(self);
        PyErr_SetString(PyExc_ValueError, "I/O operation on a closed StreamReader");
        return -1;
    }
    return 0;
}

/* For the read-only properties: 1 if the lock was taken (give it back),
 * 0 when this thread's own call is running (its committed state is
 * consistent whenever Python code runs), -1 never. */
static int
sr_enter_ro(StreamObject *self)
{
    if (u8p_calllock_mine(&self->call))
        return 0;
    if (sr_enter(self) < 0)
        return -1;
    return 1;
}

/* --------------------------------------------------------------- errors */

/* BlockingIOError for a one-item call whose bytes are not all held yet. */
static void
sr_not_now(StreamObject *self, const char *fname, Py_ssize_t at, Py_ssize_t want)
{
    PyObject *msg, *exc;
    if (self->pull)
        msg = PyUnicode_FromFormat(
            "%s(): the source has no data now (its read returned None) and the item at "
            "offset %zd (record index %zd) is not complete: %zd byte(s) held",
            fname, self->base + at, self->index, self->end - at);
    else
        msg = PyUnicode_FromFormat(
            "%s(): the item at offset %zd (record index %zd) is not complete: %zd byte(s) "
            "held, at least %zd needed; feed() more data or call feed_eof()",
            fname, self->base + at, self->index, self->end - at, want);
    if (msg == NULL)
        return;
    exc = PyObject_CallFunction(PyExc_BlockingIOError, "iO", EAGAIN, msg);
    Py_DECREF(msg);
    if (exc == NULL)
        return;
    PyErr_SetObject(PyExc_BlockingIOError, exc);
    Py_DECREF(exc);
}

/* ------------------------------------------------------------- window */

static inline void
sr_ctx(StreamObject *self, rd_ctx *c)
{
    c->data = SBUF(self);
    c->len = self->end;
    c->eh = self->eh;
    c->errors = self->errors;
    c->strict_vint = self->strict_vint;
    c->prefix = self->prefix;
    c->enc = self->enc;
    c->base = self->base;
    c->shared = self->shared;
}

/* Room for `room` more bytes after end: the unreturned bytes move to the
 * front first, then the window grows (by half at least, so that growing
 * costs linear time).  *cursor, a buffer offset, follows the move.  A list
 * call in progress keeps the bytes it has decoded (a failure leaves the
 * reader as it was), so at a refill most of the window can be unreturned:
 * moving them each time would copy most of a batch's bytes once more.  A
 * window under 4 read sizes therefore grows instead when more than a
 * quarter of it would move (a few read sizes of memory against a copy of
 * the stream). */
/* sr_reserve once a source kept an export of the window (sr_fill): a new
 * window, the reader's own, with the same bytes at the same offsets and
 * room for `room` more.  The old one stays with whoever holds the export
 * (it could not be resized: BufferError), and what they write there is no
 * longer read. */
static int
sr_own_window(StreamObject *self, Py_ssize_t room)
{
    Py_ssize_t ncap = PyByteArray_GET_SIZE(self->buf);
    PyObject *nb;
    if (room > PY_SSIZE_T_MAX - self->end) {
        PyErr_NoMemory();
        return -1;
    }
    if (ncap < self->end + room)
        ncap = self->end + room;
    nb = PyByteArray_FromStringAndSize(NULL, ncap);
    if (nb == NULL)
        return -1;
    memcpy(PyByteArray_AS_STRING(nb), SBUF(self), (size_t)self->end);
    Py_SETREF(self->buf, nb);
    self->shared = 0;
    return 0;
}

static int
sr_reserve(StreamObject *self, Py_ssize_t room, Py_ssize_t *cursor)
{
    Py_ssize_t cap = PyByteArray_GET_SIZE(self->buf), ncap;
    if (self->shared)
        return sr_own_window(self, room);
    if (cap - self->end >= room)
        return 0;
    if (self->start > 0 &&
        (self->end - self->start <= cap / 4 || cap / 4 >= self->read_size)) {
        uint8_t *b = SBUF(self);
        Py_ssize_t k = self->end - self->start;
        memmove(b, b + self->start, (size_t)k);
        self->base += self->start;
        if (cursor != NULL)
            *cursor -= self->start;
        self->end = k;
        self->start = 0;
        if (cap - self->end >= room)
            return 0;
    }
    if (room > PY_SSIZE_T_MAX - self->end) {
        PyErr_NoMemory();
        return -1;
    }
    ncap = self->end + room;
    if (cap <= PY_SSIZE_T_MAX / 3 * 2 && ncap < cap + cap / 2)
        ncap = cap + cap / 2;
    return PyByteArray_Resize(self->buf, ncap);
}

/*
 * Pull mode: reads once from the source after end.  Returns 1 (bytes
 * arrived), 0 at the end of the stream (eof set), 2 when the source has no
 * data now (its read returned None), -1 with the source's exception.
 * The source gets a memoryview of the window's free room; it is released
 * after the call, so a source that kept it holds a dead view.  One that
 * exported it further (a slice of the view is one) keeps the bytearray
 * from being resized and can still write into it: the reader reads the
 * window as shared bytes until the next fill moves it to a window of its
 * own (sr_own_window).
 */
static int
sr_fill(StreamObject *self, Py_ssize_t *cursor)
{
    Py_ssize_t got;
    PyObject *r;
    if (sr_reserve(self, self->read_size, cursor) < 0)
        return -1;
    if (self->readinto != NULL) {
        PyObject *whole, *view, *rel;
        whole = PyMemoryView_FromObject(self->buf);
        if (whole == NULL)
            return -1;
        view = PySequence_GetSlice(whole, self->end, self->end + self->read_size);
        Py_DECREF(whole); /* only the slice is handed out */
        if (view == NULL)
            return -1;
        r = PyObject_CallOneArg(self->readinto, view);
        {
            /* the source's error (if any) stays the one raised */
            u8p_err_stash x;
            u8p_stash_take(&x);
            rel = PyObject_CallMethodNoArgs(view, self->st->str_release);
            if (rel == NULL)
                PyErr_Clear(); /* exported further: the bytearray stays pinned */
            Py_XDECREF(rel);
            u8p_stash_put(&x);
        }
        Py_DECREF(view);
        if (((PyByteArrayObject *)self->buf)->ob_exports > 0)
            self->shared = 1;
        if (r == NULL)
            return -1;
        if (r == Py_None) {
            Py_DECREF(r);
            return 2;
        }
        got = PyNumber_AsSsize_t(r, PyExc_OverflowError);
        Py_DECREF(r);
        if (got == -1 && PyErr_Occurred())
            return -1;
        if (got < 0 || got > self->read_size) {
            PyErr_Format(PyExc_OSError,
                         "StreamReader: the source's readinto() returned %zd, expected "
                         "0 <= n <= %zd (the size of the view it was given)",
                         got, self->read_size);
            return -1;
        }
        if (got == 0) {
            self->eof = 1;
            return 0;
        }
        self->end += got;
        return 1;
    }
    r = PyObject_CallFunction(self->read, "n", self->read_size);
    if (r == NULL)
        return -1;
    if (r == Py_None) {
        Py_DECREF(r);
        return 2;
    }
    {
        Py_buffer v;
        if (PyObject_GetBuffer(r, &v, PyBUF_SIMPLE) < 0) {
            Py_DECREF(r);
            return -1;
        }
        if (v.len == 0) {
            PyBuffer_Release(&v);
            Py_DECREF(r);
            self->eof = 1;
            return 0;
        }
        if (sr_reserve(self, v.len, cursor) < 0) {
            PyBuffer_Release(&v);
            Py_DECREF(r);
            return -1;
        }
        memcpy(SBUF(self) + self->end, v.buf, (size_t)v.len);
        self->end += v.len;
        PyBuffer_Release(&v);
        Py_DECREF(r);
    }
    return 1;
}

/* ------------------------------------------------------------ records */

enum { SR_ERR = -1, SR_MORE = 0, SR_DONE = 1 };

/* Raises the reader's own error for the record at buffer offset `at` (the
 * held bytes end inside it at EOF, or its prefix is bad), annotated. */
static void
sr_record_error(StreamObject *self, const rd_ctx *c, Py_ssize_t at, Py_ssize_t idx)
{
    Py_ssize_t p = at, off, n;
    (void)self;
    if (u8p_rd_record(c, &p, &off, &n, "string") >= 0)
        PyErr_Format(PyExc_SystemError, "StreamReader: the record at offset %zd parsed",
                     c->base + at);
    u8p_rd_annotate(c->base + at, idx, "stream");
}

/*
 * The record at buffer offset *p: SR_DONE with its payload at *off, *n
 * bytes (*n = -1: the null marker) and *p past it; SR_MORE when the held
 * bytes end inside it (*want: bytes from *p it needs at least); SR_ERR
 * with the exception raised.
 */
static inline int
sr_probe(StreamObject *self, const rd_ctx *c, Py_ssize_t *p, Py_ssize_t *off, Py_ssize_t *n,
         Py_ssize_t *want, Py_ssize_t idx)
{
    const Py_ssize_t at = *p;
    uint64_t v;
    switch (u8p_rd_peek(c, p, self->max_record, off, n, want, &v)) {
    case U8P_PEEK_DONE:
        return SR_DONE;
    case U8P_PEEK_MORE:
        return SR_MORE;
    case U8P_PEEK_LONG:
        PyErr_Format(PyExc_ValueError,
                     "string length %llu (prefix at offset %zd) exceeds max_record=%zd",
                     (unsigned long long)v, c->base + at, self->max_record);
        u8p_rd_annotate(c->base + at, idx, "stream");
        return SR_ERR;
    default:
        sr_record_error(self, c, at, idx);
        return SR_ERR;
    }
}

/* Remembers that k complete records end at buffer offset p (from start). */
static inline void
sr_note_scan(StreamObject *self, Py_ssize_t k, Py_ssize_t p)
{
    if (k > self->scan_k) {
        self->scan_k = k;
        self->scan_len = p - self->start;
        self->need = 0;
    }
}

/* The call succeeded: k records (stop: the buffer offset after them) are
 * returned. */
static void
sr_commit(StreamObject *self, Py_ssize_t stop, Py_ssize_t k)
{
    if (k <= self->scan_k) {
        self->scan_k -= k;
        self->scan_len -= stop - self->start;
    }
    else {
        self->scan_k = self->scan_len = 0;
        self->need = 0;
    }
    self->start = stop;
    self->index += k;
}

/* read_vint / read_raw moved start by something that is not a record. */
static void
sr_commit_bytes(StreamObject *self, Py_ssize_t stop)
{
    self->scan_k = self->scan_len = self->need = 0;
    self->start = stop;
}

enum { WALK_ERR = -1, WALK_OK = 0, WALK_NOTNOW = 1 };

/*
 * Walks complete records from start, up to `limit` (-1: all).  Pull mode
 * reads more as it goes.  Returns WALK_OK (limit reached, or the clean end
 * of the stream), WALK_NOTNOW (an incomplete record before the end: push
 * mode, or a source with no data now), or WALK_ERR.  *count records end at
 * buffer offset *stop in every case.  exact: the end of the stream before
 * `limit` records is the reader's truncation error (read_strings(n)).
 */
static int
sr_walk(StreamObject *self, Py_ssize_t limit, int exact, Py_ssize_t *count, Py_ssize_t *stop)
{
    Py_ssize_t p, k, off, n, want = 0;
    rd_ctx c;
    int r, ret;

    if (limit >= 0 && self->scan_k > limit) {
        p = self->start;
        k = 0;
    }
    else {
        p = self->start + self->scan_len;
        k = self->scan_k;
    }
    sr_ctx(self, &c);
    for (;;) {
        if (limit >= 0 && k >= limit) {
            ret = WALK_OK;
            break;
        }
        if (k == self->scan_k && self->need > 0 && c.len - p < self->need) {
            want = self->need;
            r = SR_MORE;
        }
        else {
            r = sr_probe(self, &c, &p, &off, &n, &want, self->index + k);
        }
        if (r == SR_DONE) {
            k++;
            continue;
        }
        if (r == SR_ERR) {
            ret = WALK_ERR;
            break;
        }
        sr_note_scan(self, k, p);
        if (k == self->scan_k)
            self->need = want;
        if (self->eof) {
            if (p == c.len && !(exact && limit >= 0)) {
                ret = WALK_OK;
                break;
            }
            sr_record_error(self, &c, p, self->index + k);
            ret = WALK_ERR;
            break;
        }
        if (!self->pull) {
            ret = WALK_NOTNOW;
            break;
        }
        r = sr_fill(self, &p);
        if (r < 0) {
            ret = WALK_ERR;
            break;
        }
        if (r == 2) {
            ret = WALK_NOTNOW;
            break;
        }
        sr_ctx(self, &c);
    }
    sr_note_scan(self, k, p);
    *count = k;
    *stop = p;
    return ret;
}

/* The item of a record (payload at off, n bytes; n < 0: null): a str, or
 * bytes when raw. */
static inline PyObject *
sr_item(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n, int raw)
{
    if (n < 0)
        return Py_NewRef(Py_None);
    if (raw)
        return PyBytes_FromStringAndSize((const char *)c->data + off, n);
    if (n >= U8P_NOGIL_MIN && c->enc == U8P_ENC_UTF8) {
        /* the window is the reader's own bytearray, and every other call on
         * this reader waits while it is busy (sr_enter) */
        int fallback;
        PyObject *s = u8p_rd_decode_nogil(c, off, n, &fallback);
        if (s != NULL || !fallback)
            return s;
    }
    return u8p_rd_decode(c, off, n);
}

/* The k records after start (walked already) as a new list, by the
 * reader's one pass: its prefix checks pass again.  The window is the
 * reader's own and every other call waits while it is busy (sr_enter), so
 * long payloads decode with the GIL released. */
static PyObject *
sr_decode_list(StreamObject *self, Py_ssize_t k, int raw)
{
    rd_ctx c;
    Py_ssize_t p = self->start, fail_i, fail_at;
    PyObject *list;
    sr_ctx(self, &c);
    list = u8p_rd_list(&c, &p, k, raw ? U8P_RD_BYTES : U8P_RD_NOGIL, &fail_i, &fail_at);
    if (list == NULL && fail_i >= 0)
        u8p_rd_annotate(c.base + fail_at, self->index + fail_i, "stream");
    return list;
}

/* After a walk error behind k good records: the first error in stream
 * order is raised (an invalid payload among those k comes first). */
static void
sr_first_error(StreamObject *self, Py_ssize_t k, int raw)
{
    u8p_err_stash x;
    PyObject *list;
    if (k == 0 || raw)
        return;
    u8p_stash_take(&x);
    list = sr_decode_list(self, k, 0);
    if (list == NULL) {
        u8p_stash_drop(&x);
        return;
    }
    Py_DECREF(list);
    u8p_stash_put(&x);
}

/*
 * sr_read_list's pull path for strs: the records wholly in the window are
 * decoded in one pass (the reader's list builder), then the window is
 * refilled for the record it stopped at, until `limit`.  Nothing commits
 * before the end, so a failure leaves the reader as it was; the strs made
 * are then dropped, and so that a source that keeps failing, or keeps
 * having no data, cannot make the same records be decoded again and
 * again, the reader walks first from then on (walk_first).
 */
static PyObject *
sr_read_list_pull(StreamObject *self, Py_ssize_t limit, int mode)
{
    Py_ssize_t p = self->start, k = 0, fail_i, fail_at, off, n, want = 0;
    PyObject *list = NULL;
    rd_ctx c;
    int r;

    sr_ctx(self, &c);
    for (;;) {
        if (c.len - p >= want) { /* a record that wants more is not read again before */
            /* the list so far is handed over and comes back with the
             * window's records after its items (dropped on failure) */
            list = u8p_rd_list_held(&c, &p, limit < 0 ? PY_SSIZE_T_MAX : limit - k,
                                    self->max_record, U8P_RD_NOGIL, list, &fail_i, &fail_at);
            if (list == NULL) {
                if (fail_i >= 0)
                    u8p_rd_annotate(c.base + fail_at, self->index + k + fail_i, "stream");
                goto fail;
            }
            k = PyList_GET_SIZE(list);
            if (k == limit)
                break;
            /* the record at p: an error, more bytes wanted, or the
             * builder's part was full */
            {
                Py_ssize_t q = p;
                r = sr_probe(self, &c, &q, &off, &n, &want, self->index + k);
            }
            if (r == SR_ERR)
                goto fail;
            if (r == SR_DONE) { /* the part was full (the same rule stops both) */
                want = 0;
                continue;
            }
        }
        if (self->eof) {
            if (p == c.len && !(mode == 0 && limit >= 0))
                break;
            sr_record_error(self, &c, p, self->index + k);
            goto fail;
        }
        r = sr_fill(self, &p);
        if (r < 0 || r == 2) {
            self->walk_first = 1;
            sr_note_scan(self, k, p);
            if (r < 0)
                goto fail;
            /* no data now: what read_strings / batches return then */
            if (mode == 1)
                goto fail;
            if (limit >= 0) {
                Py_DECREF(list);
                return PyList_New(0);
            }
            break;
        }
        sr_ctx(self, &c);
    }
    if (mode == 1 && k == 0)
        goto fail;
    sr_commit(self, p, k);
    return list;
fail:
    Py_XDECREF(list);
    return NULL;
}

/*
 * Up to `limit` records (-1: all) as a list, committed.  mode:
 *   0  read_strings: exactly `limit` or the truncation error at the end of
 *      the stream; before it, [] if fewer are held (-1: those held)
 *   1  batches: `limit` records, fewer only at the end of the stream; NULL
 *      without an exception when there is nothing to return now
 */
static PyObject *
sr_read_list(StreamObject *self, Py_ssize_t limit, int mode, int raw)
{
    Py_ssize_t k, stop;
    PyObject *list;
    int r;
    if (self->pull && !raw && !self->walk_first && limit != 0 && !self->eof)
        return sr_read_list_pull(self, limit, mode);
    r = sr_walk(self, limit, mode == 0, &k, &stop);
    if (r == WALK_ERR) {
        sr_first_error(self, k, raw);
        return NULL;
    }
    if (limit >= 0 && k < limit && r == WALK_NOTNOW) {
        if (mode == 1)
            return NULL;
        return PyList_New(0);
    }
    if (mode == 1 && k == 0)
        return NULL;
    list = sr_decode_list(self, k, raw);
    if (list != NULL)
        sr_commit(self, stop, k);
    return list;
}

/* sr_read_one's uncommon cases */
U8P_NOINLINE PyObject *sr_read_one_rest(StreamObject *self, int kind, const char *fname);

/* The item of the held record whose payload is at off (n bytes), then the
 * record committed (p: the offset after it). */
static inline PyObject *
sr_take_one(StreamObject *self, const rd_ctx *c, Py_ssize_t p, Py_ssize_t off, Py_ssize_t n,
            int kind)
{
    PyObject *s;
    if (kind == 2)
        s = Py_NewRef(Py_None);
    else
        s = sr_item(c, off, n, kind == 1);
    if (s == NULL) {
        u8p_rd_annotate(c->base + self->start, self->index, "stream");
        return NULL;
    }
    sr_commit(self, p, 1);
    return s;
}

/* One record (iteration, read_string, read_bytes, skip_string).  kind:
 * 0 a str, 1 bytes, 2 skipped (None returned).  fname NULL: iteration
 * (NULL without an exception at the end or when nothing is held);
 * otherwise the end of the stream is the reader's error and "not now"
 * BlockingIOError.  Inline in the callers (iteration above all): the
 * common case, a record held whole whose prefix reads; everything else
 * (walking for more data, the prefix's errors) in sr_read_one_rest, out
 * of line. */
U8P_ALWAYS_INLINE PyObject *
sr_read_one(StreamObject *self, int kind, const char *fname)
{
    if (self->scan_k > 0 || self->need == 0 || self->end - self->start >= self->need) {
        Py_ssize_t p = self->start, off, n, want = 0;
        uint64_t v;
        rd_ctx c;
        sr_ctx(self, &c);
        if (u8p_rd_peek(&c, &p, self->max_record, &off, &n, &want, &v) == U8P_PEEK_DONE)
            return sr_take_one(self, &c, p, off, n, kind);
    }
    return sr_read_one_rest(self, kind, fname);
}

U8P_NOINLINE PyObject *
sr_read_one_rest(StreamObject *self, int kind, const char *fname)
{
    Py_ssize_t p = self->start, off, n, want = 0, k, stop;
    rd_ctx c;
    int r;

    if (self->scan_k > 0 || self->need == 0 || self->end - self->start >= self->need) {
        /* sr_read_one found the prefix not done: its error, if it is one
         * (a record that wants more bytes is walked for below) */
        sr_ctx(self, &c);
        if (sr_probe(self, &c, &p, &off, &n, &want, self->index) == SR_ERR)
            return NULL;
    }
    r = sr_walk(self, 1, fname != NULL, &k, &stop);
    if (r == WALK_ERR)
        return NULL;
    if (k == 0) {
        if (fname != NULL)
            sr_not_now(self, fname, self->start, self->need);
        return NULL;
    }
    p = self->start;
    sr_ctx(self, &c);
    if (sr_probe(self, &c, &p, &off, &n, &want, self->index) != SR_DONE) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "StreamReader: a walked record changed");
        return NULL;
    }
    return sr_take_one(self, &c, p, off, n, kind);
}

/* ----------------------------------------------------------- the type */

static PyObject *
SR_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = {"",          "prefix",     "encoding", "errors",
                             "strict_vint", "read_size", "max_record", NULL};
    PyObject *source = Py_None, *errors = NULL, *prefix = NULL, *encoding = NULL;
    PyObject *maxrec = Py_None;
    Py_ssize_t read_size = (Py_ssize_t)1 << 20, max_record = -1;
    int strict_vint = 0;
    u8p_errors eh;
    u8p_prefix pf;
    u8p_encoding enc;
    StreamObject *self;

    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O$OOOpnO:StreamReader", kwlist, &source,
                                     &prefix, &encoding, &errors, &strict_vint, &read_size,
                                     &maxrec))
        return NULL;
    if (u8p_parse_prefix(prefix, &pf, "StreamReader()") < 0 ||
        u8p_parse_encoding(encoding, &enc, "StreamReader()") < 0 ||
        u8p_parse_errors(errors, &eh, "StreamReader()") < 0)
        return NULL;
    if (read_size < 1) {
        PyErr_Format(PyExc_ValueError, "StreamReader() read_size must be >= 1, got %zd",
                     read_size);
        return NULL;
    }
    if (maxrec != Py_None) {
        max_record = PyNumber_AsSsize_t(maxrec, PyExc_OverflowError);
        if (max_record == -1 && PyErr_Occurred())
            return NULL;
        if (max_record < 0) {
            PyErr_Format(PyExc_ValueError,
                         "StreamReader() max_record must be None or >= 0, got %zd",
                         max_record);
            return NULL;
        }
    }
    self = (StreamObject *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    /* tp_alloc zeroed every field */
    self->st = u8p_state_of_type(type);
    if (self->st == NULL)
        goto fail;
    self->read_size = read_size;
    self->max_record = max_record;
    self->strict_vint = strict_vint;
    self->eh = eh;
    self->prefix = pf;
    self->enc = enc;
    self->errors = errors ? Py_NewRef(errors) : PyUnicode_FromString("strict");
    if (self->errors == NULL)
        goto fail;
    if (u8p_calllock_init(&self->call) < 0)
        goto fail;
    if (source != Py_None) {
        self->pull = 1;
        self->source = Py_NewRef(source);
        self->readinto = PyObject_GetAttr(source, self->st->str_readinto);
        if (self->readinto == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError))
                goto fail;
            PyErr_Clear();
            self->read = PyObject_GetAttr(source, self->st->str_read);
            if (self->read == NULL) {
                if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
                    PyErr_Clear();
                    PyErr_Format(PyExc_TypeError,
                                 "StreamReader() source must be None (push mode) or a "
                                 "binary file object with readinto() or read(), got %s",
                                 Py_TYPE(source)->tp_name);
                }
                goto fail;
            }
        }
    }
    self->buf = PyByteArray_FromStringAndSize(NULL, 0);
    if (self->buf == NULL)
        goto fail;
    self->is_open = 1;
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static void
sr_release(StreamObject *self)
{
    self->is_open = 0;
    Py_CLEAR(self->buf);
    Py_CLEAR(self->readinto);
    Py_CLEAR(self->read);
    Py_CLEAR(self->source);
    self->base += self->start;
    self->start = self->end = 0;
    self->scan_k = self->scan_len = self->need = 0;
}

static int
SR_traverse(StreamObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->source);
    Py_VISIT(self->readinto);
    Py_VISIT(self->read);
    Py_VISIT(self->errors);
    return 0;
}

static int
SR_clear(StreamObject *self)
{
    if (!self->call.busy) {
        Py_CLEAR(self->readinto);
        Py_CLEAR(self->read);
        Py_CLEAR(self->source);
        self->is_open = 0;
    }
    return 0;
}

static void
SR_dealloc(StreamObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    sr_release(self);
    Py_CLEAR(self->errors);
    u8p_calllock_free(&self->call);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

static PyObject *
SR_iternext(StreamObject *self)
{
    PyObject *s;
    if (sr_enter_open(self) < 0)
        return NULL;
    s = sr_read_one(self, 0, NULL);
    sr_exit(self);
    return s;
}

static PyObject *
SR_iter(StreamObject *self)
{
    if (sr_enter_open(self) < 0)
        return NULL;
    sr_exit(self);
    return Py_NewRef((PyObject *)self);
}

/* the METH_NOARGS method that takes one record (sr_read_one's MODE) */
#define SR_ONE(NAME, MODE, WHAT)                                              \
    static PyObject *NAME(StreamObject *self, PyObject *Py_UNUSED(ignored))   \
    {                                                                         \
        PyObject *s;                                                          \
        if (sr_enter_open(self) < 0)                                          \
            return NULL;                                                      \
        s = sr_read_one(self, MODE, WHAT);                                    \
        sr_exit(self);                                                        \
        return s;                                                             \
    }
SR_ONE(SR_read_string, 0, "read_string")
SR_ONE(SR_read_bytes, 1, "read_bytes")
SR_ONE(SR_skip_string, 2, "skip_string")
#undef SR_ONE

static PyObject *
SR_read_strings(StreamObject *self, PyObject *const *args, Py_ssize_t nargs,
                PyObject *kwnames)
{
    Py_ssize_t limit;
    PyObject *list;
    /* n first: its __index__ may be Python code, run before the lock */
    if (u8p_parse_read_n(args, nargs, kwnames, "read_strings", &limit) < 0)
        return NULL;
    if (sr_enter_open(self) < 0)
        return NULL;
    list = sr_read_list(self, limit, 0, 0);
    sr_exit(self);
    return list;
}

/* read_vint (raw_n < 0) or read_raw(raw_n): makes the item at start
 * complete; its end in *stop and, for a varint, its value in *value. */
static int
sr_read_plain(StreamObject *self, Py_ssize_t raw_n, Py_ssize_t *stop, uint64_t *value,
              const char *fname)
{
    for (;;) {
        rd_ctx c;
        Py_ssize_t at = self->start, avail = self->end - at, want;
        int r;
        sr_ctx(self, &c);
        if (raw_n >= 0) {
            if (avail >= raw_n) {
                *stop = at + raw_n;
                return 0;
            }
            want = raw_n;
        }
        else {
            int minimal = 1;
            int k = u8p_vint_read(c.data + at, (size_t)avail, value, &minimal);
            if (k < 0 || (k > 0 && self->strict_vint && !minimal)) {
                Py_ssize_t p = at;
                if (u8p_rd_vint(&c, &p, value, "varint") == 0)
                    PyErr_SetString(PyExc_SystemError, "StreamReader: the varint parsed");
                u8p_rd_annotate(c.base + at, self->index, "stream");
                return -1;
            }
            if (k > 0) {
                *stop = at + k;
                return 0;
            }
            want = avail + 1;
        }
        if (self->eof) {
            if (raw_n >= 0) {
                PyErr_Format(PyExc_ValueError,
                             "read_raw(%zd) at offset %zd runs past the end of the data: "
                             "expected at most %zd byte(s)",
                             raw_n, c.base + at, avail);
            }
            else {
                Py_ssize_t p = at;
                if (u8p_rd_vint(&c, &p, value, "varint") == 0)
                    PyErr_SetString(PyExc_SystemError, "StreamReader: the varint parsed");
            }
            u8p_rd_annotate(c.base + at, self->index, "stream");
            return -1;
        }
        if (!self->pull) {
            sr_not_now(self, fname, at, want);
            return -1;
        }
        r = sr_fill(self, NULL);
        if (r < 0)
            return -1;
        if (r == 2) {
            sr_not_now(self, fname, self->start, want);
            return -1;
        }
    }
}

/* read_vint (n -1) or read_raw(n): the value, its bytes consumed */
static PyObject *
sr_plain(StreamObject *self, Py_ssize_t n, const char *fname)
{
    Py_ssize_t stop;
    uint64_t v = 0;
    PyObject *res = NULL;
    if (sr_enter_open(self) < 0)
        return NULL;
    if (sr_read_plain(self, n, &stop, n < 0 ? &v : NULL, fname) == 0) {
        res = n < 0 ? PyLong_FromUnsignedLongLong((unsigned long long)v)
                    : PyBytes_FromStringAndSize((const char *)SBUF(self) + self->start, n);
        if (res != NULL)
            sr_commit_bytes(self, stop);
    }
    sr_exit(self);
    return res;
}

static PyObject *
SR_read_vint(StreamObject *self, PyObject *Py_UNUSED(ignored))
{
    return sr_plain(self, -1, "read_vint");
}

static PyObject *
SR_read_raw(StreamObject *self, PyObject *arg)
{
    Py_ssize_t n = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 0) {
        PyErr_Format(PyExc_ValueError, "read_raw() n must be >= 0, got %zd", n);
        return NULL;
    }
    return sr_plain(self, n, "read_raw");
}

/* io.UnsupportedOperation(msg), as io raises for a method the object's
 * mode does not have */
static void
sr_unsupported(const char *msg)
{
    PyObject *io = PyImport_ImportModule("io");
    PyObject *unsupported = io ? u8p_getattr_interned(io, "UnsupportedOperation") : NULL;
    Py_XDECREF(io);
    if (unsupported != NULL) {
        PyErr_SetString(unsupported, msg);
        Py_DECREF(unsupported);
    }
}

static PyObject *
SR_feed(StreamObject *self, PyObject *data)
{
    Py_buffer v;
    if (sr_enter_open(self) < 0)
        return NULL;
    if (self->pull) {
        sr_unsupported("feed(): this StreamReader pulls from its source (push mode is "
                       "StreamReader() without a source)");
        goto fail;
    }
    if (self->eof) {
        PyErr_SetString(PyExc_ValueError, "feed() after feed_eof()");
        goto fail;
    }
    if (PyObject_GetBuffer(data, &v, PyBUF_SIMPLE) < 0)
        goto fail;
    if (sr_reserve(self, v.len, NULL) < 0) {
        PyBuffer_Release(&v);
        goto fail;
    }
    memcpy(SBUF(self) + self->end, v.buf, (size_t)v.len);
    self->end += v.len;
    PyBuffer_Release(&v);
    sr_exit(self);
    Py_RETURN_NONE;
fail:
    sr_exit(self);
    return NULL;
}

static PyObject *
SR_feed_eof(StreamObject *self, PyObject *Py_UNUSED(ignored))
{
    if (sr_enter_open(self) < 0)
        return NULL;
    if (self->pull) {
        sr_unsupported("feed_eof(): this StreamReader pulls from its source, whose end "
                       "ends the stream");
        sr_exit(self);
        return NULL;
    }
    self->eof = 1;
    sr_exit(self);
    Py_RETURN_NONE;
}

static PyObject *
SR_close(StreamObject *self, PyObject *Py_UNUSED(ignored))
{
    if (sr_enter(self) < 0)
        return NULL;
    sr_release(self);
    sr_exit(self);
    Py_RETURN_NONE;
}

/* __enter__: the reader itself, as iter() gives it (ValueError once closed) */
static PyObject *
SR_enter_with(StreamObject *self, PyObject *Py_UNUSED(ignored))
{
    return SR_iter(self);
}

static PyObject *
SR_exit_with(StreamObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)args;
    (void)nargs;
    return SR_close(self, NULL);
}

static PyObject *
SR_reduce(StreamObject *self, PyObject *Py_UNUSED(ignored))
{
    PyErr_Format(PyExc_TypeError, "cannot pickle a %s: it holds a position in a stream",
                 Py_TYPE(self)->tp_name);
    return NULL;
}

static PyObject *
make_batches(StreamObject *self, Py_ssize_t n, int kind)
{
    BatchesObject *it;
    u8p_state *st;
    if (sr_enter_open(self) < 0)
        return NULL;
    sr_exit(self);
    st = u8p_state_of_type(Py_TYPE(self));
    if (st == NULL)
        return NULL;
    it = PyObject_GC_New(BatchesObject, st->stream_batches_type);
    if (it == NULL)
        return NULL;
    it->reader = (StreamObject *)Py_NewRef((PyObject *)self);
    it->n = n;
    it->kind = kind;
    it->pins = (u8p_pins){NULL, 0, 0};
    PyObject_GC_Track((PyObject *)it);
    return (PyObject *)it;
}

static PyObject *
SR_batches(StreamObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t n;
    int raw;
    if (u8p_parse_batches(args, nargs, kwnames, "batches", 1, &n, &raw) < 0)
        return NULL;
    return make_batches(self, n, raw ? BATCH_BYTES : BATCH_STR);
}

static PyObject *
SR_batches_arrow(StreamObject *self, PyObject *const *args, Py_ssize_t nargs,
                 PyObject *kwnames)
{
    Py_ssize_t n;
    int raw;
    if (u8p_parse_batches(args, nargs, kwnames, "batches_arrow", 0, &n, &raw) < 0)
        return NULL;
    return make_batches(self, n, BATCH_ARROW);
}

/* position (buffered 0) or buffered (1): read under the lock; ValueError
 * once closed */
static PyObject *
sr_get_window(StreamObject *self, int buffered)
{
    int e = sr_enter_ro(self), open;
    Py_ssize_t v;
    if (e < 0)
        return NULL;
    open = self->is_open;
    v = buffered ? self->end - self->start : self->base + self->start;
    if (e)
        sr_exit(self);
    if (!open) {
        PyErr_SetString(PyExc_ValueError, "I/O operation on a closed StreamReader");
        return NULL;
    }
    return PyLong_FromSsize_t(v);
}

static PyObject *
SR_get_position(StreamObject *self, void *Py_UNUSED(closure))
{
    return sr_get_window(self, 0);
}

static PyObject *
SR_get_buffered(StreamObject *self, void *Py_UNUSED(closure))
{
    return sr_get_window(self, 1);
}

static PyObject *
SR_get_closed(StreamObject *self, void *Py_UNUSED(closure))
{
    int e = sr_enter_ro(self);
    int v;
    if (e < 0)
        return NULL;
    v = !self->is_open;
    if (e)
        sr_exit(self);
    return PyBool_FromLong(v);
}

static PyObject *
SR_get_strict_vint(StreamObject *self, void *Py_UNUSED(closure))
{
    return PyBool_FromLong(self->strict_vint);
}

static PyObject *
SR_repr(StreamObject *self)
{
    int e = sr_enter_ro(self);
    PyObject *r;
    if (e < 0)
        return NULL;
    if (!self->is_open)
        r = PyUnicode_FromFormat("<%s closed>", Py_TYPE(self)->tp_name);
    else
        r = PyUnicode_FromFormat("<%s %s position=%zd buffered=%zd%s>", Py_TYPE(self)->tp_name,
                                 self->pull ? "pull" : "push", self->base + self->start,
                                 self->end - self->start, self->eof ? " eof" : "");
    if (e)
        sr_exit(self);
    return r;
}

static PyMethodDef SR_methods[] = {
    {"feed", (PyCFunction)SR_feed, METH_O,
     "feed($self, data, /)\n--\n\nPush mode: append a copy of the bytes-like data to the "
     "stream (no export of data is kept)."},
    {"feed_eof", (PyCFunction)SR_feed_eof, METH_NOARGS,
     "feed_eof($self, /)\n--\n\nPush mode: no more data will come; an incomplete record "
     "left is then an error."},
    {"read_string", (PyCFunction)SR_read_string, METH_NOARGS,
     "read_string($self, /)\n--\n\nRead one record as a str (None for the varint+1 null "
     "marker); BlockingIOError if it has not fully arrived yet."},
    {"read_strings", (PyCFunction)(void (*)(void))SR_read_strings,
     METH_FASTCALL | METH_KEYWORDS,
     "read_strings($self, /, n=-1)\n--\n\nRead n records (-1: all, to the end of the stream "
     "or, before it, all that are held) as a list; all or nothing."},
    {"read_bytes", (PyCFunction)SR_read_bytes, METH_NOARGS,
     "read_bytes($self, /)\n--\n\nRead one record as bytes, undecoded."},
    {"read_vint", (PyCFunction)SR_read_vint, METH_NOARGS,
     "read_vint($self, /)\n--\n\nRead an unsigned LEB128 VInt (0 <= n < 2**64)."},
    {"read_raw", (PyCFunction)SR_read_raw, METH_O,
     "read_raw($self, n, /)\n--\n\nRead exactly n bytes as they are."},
    {"skip_string", (PyCFunction)SR_skip_string, METH_NOARGS,
     "skip_string($self, /)\n--\n\nMove past one record; its prefix and length are checked, "
     "its UTF-8 is not."},
    {"batches", (PyCFunction)(void (*)(void))SR_batches, METH_FASTCALL | METH_KEYWORDS,
     "batches($self, /, n=65536, *, raw=False)\n--\n\nIterate over lists of n records (str, "
     "or bytes with raw=True); only the last at the end of the stream may be shorter."},
    {"batches_arrow", (PyCFunction)(void (*)(void))SR_batches_arrow,
     METH_FASTCALL | METH_KEYWORDS,
     "batches_arrow($self, /, n=65536)\n--\n\nIterate over ArrowUtf8Arrays of n records, as "
     "batches() does (the rules of read_strings_arrow)."},
    {"close", (PyCFunction)SR_close, METH_NOARGS,
     "close($self, /)\n--\n\nDrop the held bytes and the source (which is not closed); "
     "further calls raise ValueError."},
    {"__enter__", (PyCFunction)SR_enter_with, METH_NOARGS,
     PyDoc_STR("Return the reader itself (for with blocks).")},
    {"__exit__", (PyCFunction)(void (*)(void))SR_exit_with, METH_FASTCALL,
     PyDoc_STR("close() the reader; exceptions are not suppressed.")},
    {"__reduce__", (PyCFunction)SR_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef SR_getset[] = {
    {"position", (getter)SR_get_position, NULL,
     "Stream offset of the next record (read-only).", NULL},
    {"buffered", (getter)SR_get_buffered, NULL,
     "Bytes held that no call has returned yet (read-only).", NULL},
    {"closed", (getter)SR_get_closed, NULL, "True once close() has run.", NULL},
    {"strict_vint", (getter)SR_get_strict_vint, NULL,
     "True if non-minimal varints are rejected (read-only).", NULL},
    U8P_CODEC_GETSETS(StreamObject),
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot SR_slots[] = {
    {Py_tp_new, SR_new},
    {Py_tp_dealloc, SR_dealloc},
    {Py_tp_traverse, SR_traverse},
    {Py_tp_clear, SR_clear},
    {Py_tp_methods, SR_methods},
    {Py_tp_getset, SR_getset},
    {Py_tp_repr, SR_repr},
    {Py_tp_iter, SR_iter},
    {Py_tp_iternext, SR_iternext},
    {Py_tp_doc,
     "StreamReader(source=None, /, *, prefix='varint', encoding='utf-8', errors='strict', "
     "strict_vint=False, read_size=1048576, max_record=None)\n--\n\n"
     "Reads length-prefixed strings from a stream: a binary file object (pull\n"
     "mode; readinto() or read(read_size)) or, with no source, the bytes given to\n"
     "feed() (push mode; feed_eof() ends the stream).  Records may be split\n"
     "anywhere between reads or feeds.  Iteration yields each record; in push\n"
     "mode it stops when the complete records held run out and resumes after\n"
     "the next feed().  max_record refuses longer declared lengths.  Errors\n"
     "name the stream offset and record index (data_offset, record_index)."},
    {0, NULL},
};

static PyType_Spec SR_spec = {
    "utf8pfx.StreamReader",
    sizeof(StreamObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    SR_slots,
};

/* ------------------------------------------------------------ batches */

/* The next batch_arrow: `limit` records, fewer only at the end of the
 * stream; NULL without an exception when there is nothing to return now. */
static PyObject *
sr_read_arrow(StreamObject *self, Py_ssize_t limit)
{
    Py_ssize_t k, stop, pos;
    const u8p_state *st;
    PyObject *res;
    rd_ctx c;
    int r = sr_walk(self, limit, 0, &k, &stop);
    if (r == WALK_ERR) {
        sr_first_error(self, k, 0);
        return NULL;
    }
    if ((k < limit && r == WALK_NOTNOW) || k == 0)
        return NULL;
    st = u8p_state_of_type(Py_TYPE(self));
    if (st == NULL)
        return NULL;
    sr_ctx(self, &c);
    pos = self->start;
    res = u8p_arrow_read(st, &c, &pos, k);
    if (res == NULL) {
        /* Arrow's decode errors name their row within the batch */
        u8p_rd_annotate_call(&c, self->start, k, self->index, "stream");
        return NULL;
    }
    sr_commit(self, pos, k);
    return res;
}

static PyObject *
Batches_next(BatchesObject *it)
{
    StreamObject *self = it->reader;
    PyObject *res;
    if (sr_enter_open(self) < 0)
        return NULL;
    if (it->kind == BATCH_ARROW)
        res = sr_read_arrow(self, it->n);
    else
        res = sr_read_list(self, it->n, 1, it->kind == BATCH_BYTES);
    sr_exit(self);
    /* the end, a pause for data or an error: nothing held over a wait */
    if (res == NULL)
        u8p_pins_clear(&it->pins);
    else if (it->kind != BATCH_ARROW)
        u8p_pins_take(&it->pins, res);
    return res;
}

static int
Batches_traverse(BatchesObject *it, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(it));
    Py_VISIT(it->reader);
    return 0;
}

static int
Batches_clear(BatchesObject *it)
{
    Py_CLEAR(it->reader);
    u8p_pins_clear(&it->pins);
    return 0;
}

static void
Batches_dealloc(BatchesObject *it)
{
    PyTypeObject *tp = Py_TYPE(it);
    PyObject_GC_UnTrack(it);
    Py_CLEAR(it->reader);
    u8p_pins_clear(&it->pins);
    PyObject_GC_Del(it);
    Py_DECREF(tp);
}

static PyObject *
Batches_next_checked(BatchesObject *it)
{
    if (it->reader == NULL)
        return NULL;
    return Batches_next(it);
}

static PyType_Slot Batches_slots[] = {
    {Py_tp_dealloc, Batches_dealloc},
    {Py_tp_traverse, Batches_traverse},
    {Py_tp_clear, Batches_clear},
    {Py_tp_iter, PyObject_SelfIter},
    {Py_tp_iternext, Batches_next_checked},
    {Py_tp_doc, "The iterator StreamReader.batches() returns."},
    {0, NULL},
};

static PyType_Spec Batches_spec = {
    "utf8pfx._StreamBatches",
    sizeof(BatchesObject),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    Batches_slots,
};

int
u8p_stream_exec(PyObject *module, u8p_state *st)
{
    if (u8p_add_type(module, &SR_spec, NULL, &st->stream_reader_type) < 0)
        return -1;
    return u8p_add_type(module, &Batches_spec, NULL, &st->stream_batches_type);
}
