/*
 * Guard pages for the C harnesses: a buffer whose last byte is followed by
 * a PROT_NONE page, so a kernel that reads or writes one byte past the end
 * of its source or destination faults, and the fault handler says which
 * level and case were running.
 */
#ifndef U8P_TEST_GUARD_H
#define U8P_TEST_GUARD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHECK_CANARY 64

typedef struct {
    uint8_t *base; /* base[0 .. size) is writable, base[size] faults */
    size_t size;
} guarded;

static void
guarded_init(guarded *g, size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t rw = (size + CHECK_CANARY + page - 1) / page * page;
    uint8_t *p = mmap(NULL, rw + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    if (p == MAP_FAILED || mprotect(p + rw, page, PROT_NONE) != 0) {
        perror("mmap");
        exit(2);
    }
    g->base = p;
    g->size = rw;
}

/* a pointer to nbytes that end exactly at the guard page */
static uint8_t *
guarded_tail(guarded *g, size_t nbytes)
{
    return g->base + g->size - nbytes;
}

/* what is running, for the fault handler: an out-of-bounds access hits a
 * guard page and lands here */
static const char *volatile guard_cur_level = "-";
static const char *volatile guard_cur_label = "-";

static void
guard_on_fault(int sig)
{
    static const char msg[] = "FAULT (out-of-bounds access?) in level ";
    const char *lv = guard_cur_level, *lb = guard_cur_label;
    ssize_t rc;
    rc = write(2, msg, sizeof msg - 1);
    rc = write(2, lv, strlen(lv));
    rc = write(2, ", case: ", 8);
    rc = write(2, lb, strlen(lb));
    rc = write(2, "\n", 1);
    (void)rc;
    signal(sig, SIG_DFL);
    raise(sig);
}

static void
guard_on_faults(void)
{
    signal(SIGSEGV, guard_on_fault);
    signal(SIGBUS, guard_on_fault);
}

#endif /* U8P_TEST_GUARD_H */
