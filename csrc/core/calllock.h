/*
 * A call lock: one call at a time on an object whose methods run Python
 * code in the middle of their work (a source's read, a sink's write, an
 * error handler), where the GIL alone would let a second thread in and
 * show it half-done state.  StreamReader and StreamWriter hold one each.
 *
 * Mutual exclusion is the `busy` flag, read and written with the GIL held
 * (no atomic operation on the common path, where an object is used by one
 * thread at a time).  `lock` only puts waiting threads to sleep without the
 * GIL: it stays acquired (it is taken at creation), a thread that finds
 * the object busy blocks on it, and a call that ends with waiters gives it
 * back once, which wakes one of them; each woken thread looks at `busy`
 * again under the GIL and, if the object is still (or again) busy, waits
 * again.  So `lock` is acquired exactly when `signaled` is 0, and it is
 * never given back twice.  A call from the thread that is already inside
 * (the Python code it runs called back into the object) is refused, never
 * waited for: it would wait on itself.
 */
#ifndef UTF8PFX_CALLLOCK_H
#define UTF8PFX_CALLLOCK_H

#include "core.h"
#include "pythread.h"

typedef struct {
    /* the thread of the call in progress, while busy, by its thread state:
     * one per thread (in the object's interpreter), read without a libc
     * call where the thread's id would take one every call */
    PyThreadState *owner;
    int busy;
    PyThread_type_lock lock;
    int waiters;  /* threads blocked on `lock` */
    int signaled; /* `lock` was given back for them, none has taken it yet */
} u8p_calllock;

/* 0, or -1 with MemoryError.  On a zeroed struct. */
static inline int
u8p_calllock_init(u8p_calllock *l)
{
    l->lock = PyThread_allocate_lock();
    if (l->lock == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyThread_acquire_lock(l->lock, WAIT_LOCK); /* new: never blocks */
    return 0;
}

static inline void
u8p_calllock_free(u8p_calllock *l)
{
    if (l->lock != NULL) {
        if (!l->signaled)
            PyThread_release_lock(l->lock);
        PyThread_free_lock(l->lock);
        l->lock = NULL;
    }
}

/* Whether this thread's own call is in progress. */
static inline int
u8p_calllock_mine(const u8p_calllock *l)
{
    return l->busy && l->owner == PyThreadState_Get();
}

/* GIL held.  0 once the object is this thread's (after waiting, without
 * the GIL, for another thread's call to end); -1 without an exception when
 * this thread's own call is in progress (the caller raises its
 * RuntimeError). */
static inline int
u8p_calllock_enter(u8p_calllock *l)
{
    PyThreadState *me;
    if (!l->busy) { /* the common case: nobody inside */
        l->busy = 1;
        l->owner = PyThreadState_Get();
        return 0;
    }
    me = PyThreadState_Get();
    while (l->busy) {
        if (l->owner == me)
            return -1;
        l->waiters++;
        Py_BEGIN_ALLOW_THREADS
        PyThread_acquire_lock(l->lock, WAIT_LOCK);
        Py_END_ALLOW_THREADS
        l->waiters--;
        l->signaled = 0;
    }
    l->busy = 1;
    l->owner = me;
    return 0;
}

static inline void
u8p_calllock_exit(u8p_calllock *l)
{
    l->busy = 0;
    l->owner = NULL;
    if (l->waiters > 0 && !l->signaled) {
        l->signaled = 1;
        PyThread_release_lock(l->lock);
    }
}

#endif /* UTF8PFX_CALLLOCK_H */
