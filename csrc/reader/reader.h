/*
 * reader: BufferReader's public header.  Its layout, the parse context of
 * one read and the record functions, for the components above it that read
 * records (Arrow out), and its part of module assembly.  The rules for
 * hostile input are documented at the top of reader.c.
 */
#ifndef UTF8PFX_READER_H
#define UTF8PFX_READER_H

#include "core/encode.h"
#include "core/objlock.h"

typedef struct {
    PyObject_HEAD
    Py_buffer view; /* valid iff is_open */
    const uint8_t *data;
    Py_ssize_t len;
    Py_ssize_t pos;
    /* records read or skipped since the position was last set (or since
     * creation): record_index in errors counts from there */
    Py_ssize_t index;
    int is_open;
    int strict_vint;
    int busy; /* reads in progress (re-entrancy guard for close) */
    u8p_errors eh;
    PyObject *errors; /* handler name (str) */
    u8p_prefix prefix;  /* the wire-format preset */
    u8p_encoding enc;   /* utf-8 or mutf-8 */
    u8p_objlock nogil;  /* held by a read_string decoding without the GIL */
    int shared;         /* rd_ctx.shared, of the buffer's exporter */
} ReaderObject;

typedef struct {
    const uint8_t *data;
    Py_ssize_t len;
    u8p_errors eh;
    PyObject *errors; /* may be NULL for strict */
    int strict_vint;
    u8p_prefix prefix;
    u8p_encoding enc;
    /* absolute offset of data[0] in the whole input: 0 for a BufferReader,
     * where a StreamReader's window starts in its stream.  Only error
     * messages and attributes add it; the parse itself never reads it. */
    Py_ssize_t base;
    /* the bytes may be written while they are read (any exporter but
     * bytes: a bytearray another thread fills, a file another process
     * maps): decode_payload_in in reader.c says what the reader does then */
    int shared;
} rd_ctx;

/*
 * Reading records in the context's preset, for any glue file (e.g. a
 * columnar consumer).  *pos moves only on success.
 *   u8p_rd_record(c, pos, &payload, &n, what)  one prefix + bounds check:
 *       returns 1 (payload at offset *payload, n bytes), 0 for the null
 *       marker (varint+1), -1 with ValueError naming the offset; `what` is
 *       "string" or "bytes" (for the message).
 *   u8p_rd_decode(c, off, n)  the payload as a new str (UTF-8 or MUTF-8
 *       under the handler), NULL with UnicodeDecodeError.
 */
int u8p_rd_record(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t *payload, Py_ssize_t *plen,
                  const char *what);
PyObject *u8p_rd_decode(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n);
/* rd_ctx.shared for a buffer: 0 when its exporter is bytes (through any
 * memoryviews), whose bytes nobody writes; 1 for every other. */
int u8p_buffer_shared(const Py_buffer *view);
/* A UTF-8 payload (of U8P_NOGIL_MIN bytes or more: below, releasing the GIL
 * costs more than it frees) scanned and transcoded with the GIL released.
 * Returns the str; or NULL with an exception (MemoryError); or NULL without
 * one and *fallback set when the scan rejects the bytes, and then
 * u8p_rd_decode, with the GIL, raises the exact error or applies the
 * handler.  The caller keeps every other thread away from the reader
 * meanwhile (a lock that its other methods wait for); c->shared bytes are
 * copied first, as anyone may write them while the GIL is released. */
PyObject *u8p_rd_decode_nogil(const rd_ctx *c, Py_ssize_t off, Py_ssize_t n, int *fallback);
/*
 * The record at *p in the context's preset, raising nothing (a stream's
 * window may end inside it):
 *   U8P_PEEK_DONE  whole: payload at *off, *n bytes (*n = -1: the null
 *                  marker), and *p moves past it
 *   U8P_PEEK_MORE  the bytes end inside it: *want, the bytes from *p it
 *                  needs at least
 *   U8P_PEEK_LONG  its length, *value, passes max_record (>= 0; < 0: none)
 *   U8P_PEEK_BAD   its prefix does not parse, or is not minimal under
 *                  strict_vint (u8p_rd_record raises the error)
 * The one rule for both a stream's probe and the reader's held lists.
 */
enum { U8P_PEEK_BAD = -2, U8P_PEEK_LONG = -1, U8P_PEEK_MORE = 0, U8P_PEEK_DONE = 1 };
static inline int
u8p_rd_peek(const rd_ctx *c, Py_ssize_t *p, Py_ssize_t max_record, Py_ssize_t *off,
            Py_ssize_t *n, Py_ssize_t *want, uint64_t *value)
{
    const Py_ssize_t at = *p, avail = c->len - at;
    const uint8_t *d = c->data + at;
    uint64_t v;
    int size;
    if (c->prefix == U8P_PFX_VARINT && avail > 0 && d[0] < 0x80) {
        v = d[0];
        size = 1;
    }
    else {
        u8p_prefix_read_t rd;
        u8p_prefix_status st = u8p_prefix_read(c->prefix, d, (size_t)avail, &rd);
        if (st == U8P_PFX_TRUNCATED) {
            size_t fixed = u8p_prefix_fixed(c->prefix);
            *want = fixed ? (Py_ssize_t)fixed : avail + 1;
            return U8P_PEEK_MORE;
        }
        if (st < 0 || (c->strict_vint && !rd.minimal))
            return U8P_PEEK_BAD;
        size = rd.size;
        if (st == U8P_PFX_NULL) {
            *off = at + size;
            *n = -1;
            *p = at + size;
            return U8P_PEEK_DONE;
        }
        v = rd.value;
    }
    if (max_record >= 0 && v > (uint64_t)max_record) {
        *value = v;
        return U8P_PEEK_LONG;
    }
    if (v > (uint64_t)(avail - size)) {
        *want = v > (uint64_t)(PY_SSIZE_T_MAX - size) ? PY_SSIZE_T_MAX : (Py_ssize_t)v + size;
        return U8P_PEEK_MORE;
    }
    *off = at + size;
    *n = (Py_ssize_t)v;
    *p = at + size + (Py_ssize_t)v;
    return U8P_PEEK_DONE;
}

/* `limit` records from *pos as a new list, each payload made into its
 * item as its prefix is read (one pass); *pos moves only on success.
 * Items are strs (None for a null) and flags:
 *   U8P_RD_UPTO   fewer at the end of the data (none left: an empty list)
 *   U8P_RD_NOGIL  UTF-8 payloads of U8P_NOGIL_MIN bytes or more decoded
 *                 with the GIL released, as u8p_rd_decode_nogil says
 *   U8P_RD_BYTES  bytes items instead (read_bytes' records)
 * On failure *fail_i is the failing record's index in the call and
 * *fail_at its offset in c->data (for u8p_rd_annotate), or *fail_i is -1
 * (not a record's error, e.g. MemoryError for the list). */
enum { U8P_RD_UPTO = 1, U8P_RD_NOGIL = 2, U8P_RD_BYTES = 4 };
PyObject *u8p_rd_list(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t limit, int flags,
                      Py_ssize_t *fail_i, Py_ssize_t *fail_at);
/* The same over the records wholly in c->data (a stream's window): up to
 * `limit`, stopping with no error at the first record whose bytes are not
 * all there, whose prefix does not parse (strict_vint included) or whose
 * length passes max_record (>= 0), so *pos is at it (u8p_rd_peek says
 * which), before anything of that record is allocated.  It takes
 * 65536 records at most a call (the caller asks again).  into: NULL, or
 * the list an earlier call returned (its reference taken over, dropped on
 * failure): the records are appended to its items, in it or in a new list
 * holding them, which is what is returned.  A batch that spans windows
 * so becomes one list with no copy of its slots. */
PyObject *u8p_rd_list_held(const rd_ctx *c, Py_ssize_t *pos, Py_ssize_t limit,
                           Py_ssize_t max_record, int flags, PyObject *into,
                           Py_ssize_t *fail_i, Py_ssize_t *fail_at);
/* A bare varint (read_vint) at *pos: 0 and *pos moved, or -1 with the
 * reader's ValueError (`what` is "varint" there). */
int u8p_rd_vint(const rd_ctx *c, Py_ssize_t *pos, uint64_t *value, const char *what);

/*
 * Adds where a failed record is to the exception being raised: a plain
 * ValueError (a prefix or length error, or a handler's own) is raised again
 * with "(record index N)" after its message and the attributes data_offset
 * (`at`, the absolute offset of the record's prefix) and record_index; a
 * UnicodeDecodeError gets record_index and, on 3.11+, a note naming the
 * record in the `whole` ("data", "stream"); its own fields stay CPython's.
 * Other exceptions pass unchanged.
 */
void u8p_rd_annotate(Py_ssize_t at, Py_ssize_t idx, const char *whole);
/* The same for a call that read records of c from `start` (at most
 * `limit`; -1: to the end) and does not know which one failed: an error
 * that names its row within the call (Arrow out's decode errors) gets
 * record_index index0 + row; a prefix's ValueError is found by walking the
 * prefixes again.  Anything else passes unchanged.  An exception must be
 * set. */
void u8p_rd_annotate_call(const rd_ctx *c, Py_ssize_t start, Py_ssize_t limit,
                          Py_ssize_t index0, const char *whole);

/* ---- for the components above that read records (Arrow out) ---- */

/* Parses the (n=-1) argument of read_strings-like methods into *limit. */
int u8p_parse_read_n(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                     const char *fname, Py_ssize_t *limit);

/* Parses the (n=65536, *, raw=False) of batches-like methods (with_raw 0:
 * n only); n must be >= 1. */
int u8p_parse_batches(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                      const char *fname, int with_raw, Py_ssize_t *n, int *raw);

/*
 * A batch iterator's hold on its last batch's memory.  CPython's small
 * objects live in arenas that it unmaps as soon as the last object in one
 * is freed, and maps (and the kernel zeroes, page by page) again for the
 * next.  A caller that drops each batch before asking for the next (a
 * deque(maxlen=0), map(f, batches), `del batch`) empties every arena the
 * batch filled, so each batch of tens of thousands of strs would pay a
 * munmap, an mmap and a page fault per 4 KiB.  The iterator therefore keeps
 * a reference to one small object (str or bytes of an arena's size class)
 * in every U8P_PIN_STRIDE of the batch it returned last, which keeps its
 * arenas mapped (one object in an arena is enough; objects a stride apart
 * sit well under an arena's size apart) for the next batch to fill, and
 * lets them go when it returns the next batch, ends, or is cleared.  At
 * most ceil(len / stride) small objects of one batch are held: arena
 * memory the caller would see freed by `del batch` stays mapped until then,
 * and no large record is kept from being freed.  The objects held are strs
 * and bytes, which refer to nothing, so no cycle runs through them and the
 * iterators' tp_traverse does not visit them.
 */
#define U8P_PIN_STRIDE 256
typedef struct {
    PyObject **obj;
    Py_ssize_t n, cap;
} u8p_pins;
/* Holds the first small item of every stride of `list` (a list of new
 * objects) in place of what p held.  Never fails: without memory for the
 * array it holds nothing. */
void u8p_pins_take(u8p_pins *p, PyObject *list);
/* Lets go of everything p holds (p stays usable). */
void u8p_pins_clear(u8p_pins *p);

/* ValueError if the reader is closed; first waits for a read_string that
 * runs without the GIL on this reader (objlock.h) to finish. */
int u8p_reader_check(ReaderObject *self);

/* ---- module assembly (module.c) ---- */

/* Appends BufferReader's own methods to the method list `dst`. */
int u8p_reader_methods(PyMethodDef *dst);
/* Creates BufferReader with the assembled st->reader_methods, and adds
 * decode() and decode_all(). */
int u8p_reader_exec(PyObject *module, u8p_state *st);

#endif /* UTF8PFX_READER_H */
