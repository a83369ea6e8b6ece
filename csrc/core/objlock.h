/*
 * A per-object lock for the calls that transcode a large body without the
 * GIL (BufferWriter.write_string, BufferReader.read_string on 1 MiB or
 * more; see U8P_NOGIL_MIN in encode.h).
 *
 * The owner (a method holding the GIL) sets `held` and takes `lock` before
 * it releases the GIL, and clears `held` and gives `lock` back after it has
 * the GIL again.  Every other method of the object starts with
 * u8p_objlock_wait(): with the GIL held it reads `held` (one int compare,
 * the whole cost on the common path); while it is set, the caller releases
 * the GIL and blocks on `lock` until the owner is done, then looks again.
 * So another thread never sees the object in the middle of such a call: it
 * waits for the call to finish (python-xxhash does the same per hasher).
 * `held` is only written and read with the GIL held; the module keeps the
 * GIL requirement (no free-threaded build: Py_mod_gil is not declared).
 *
 * The lock is allocated on the first large call, so objects that never
 * make one pay nothing.  The owner never runs Python code while `held` is
 * set, so it cannot wait on itself.
 */
#ifndef UTF8PFX_OBJLOCK_H
#define UTF8PFX_OBJLOCK_H

#include "core.h"
#include "pythread.h"

typedef struct {
    PyThread_type_lock lock; /* NULL until the first large call */
    int held;                /* a call runs without the GIL on this object */
} u8p_objlock;

static inline void
u8p_objlock_free(u8p_objlock *l)
{
    if (l->lock != NULL) {
        PyThread_free_lock(l->lock);
        l->lock = NULL;
    }
}

/* GIL held.  Returns once no other thread is inside a GIL-free call on the
 * object (the GIL is released while it waits). */
static inline void
u8p_objlock_wait(u8p_objlock *l)
{
    while (l->held) {
        PyThread_type_lock lk = l->lock;
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(lk, WAIT_LOCK);
        PyThread_release_lock(lk);
        Py_END_ALLOW_THREADS
    }
}

/* GIL held, after u8p_objlock_wait().  Takes the object: 0, or -1 with
 * MemoryError (first use only).  A waiter may hold `lock` for an instant
 * between its acquire and release (no GIL needed there), so the blocking
 * acquire below is short and cannot deadlock. */
static inline int
u8p_objlock_enter(u8p_objlock *l)
{
    if (l->lock == NULL) {
        l->lock = PyThread_allocate_lock();
        if (l->lock == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    PyThread_acquire_lock(l->lock, WAIT_LOCK);
    l->held = 1;
    return 0;
}

/* GIL held again.  Gives the object back and wakes the waiters. */
static inline void
u8p_objlock_exit(u8p_objlock *l)
{
    l->held = 0;
    PyThread_release_lock(l->lock);
}

#endif /* UTF8PFX_OBJLOCK_H */
