/*
 * pager -- huge blocks populated ahead of their first write; see pager.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MADV_POPULATE_WRITE, pthread_setname_np */
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pager.h"
#include "pages.h"

/* Parts queued at most; past that a block is faulted by its writer. A
 * million-file run queues a few hundred blocks over its whole length,
 * and the queue holds only those not reached yet. */
#define QUEUE 512

typedef struct part {
    char *p;
    size_t len;
} part;

/* lock: guards everything in pg. Rank: a leaf (pager.h); taken under
 * `life` too. Never held while the pager faults pages in. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t work;      /* a part was queued, or stop */
    pthread_cond_t step_done; /* the pager left a step (forget waits) */
    part q[QUEUE];
    size_t head, n;
    char *busy; /* the step being faulted in now, unlocked */
    size_t busy_len;
    int running, stop, paused;
    size_t steps, forgotten;
} pg = {PTHREAD_MUTEX_INITIALIZER,
        PTHREAD_COND_INITIALIZER,
        PTHREAD_COND_INITIALIZER,
        {{NULL, 0}},
        0,
        0,
        NULL,
        0,
        0,
        0,
        0,
        0,
        0};

/* life: guards users and the thread's start and join. Rank: above
 * pg.lock (taken first); held only by vsched_create and vsched_destroy,
 * which hold no other lock of the library. */
static pthread_mutex_t life = PTHREAD_MUTEX_INITIALIZER;
static unsigned users;
/* Bumped in a forked child: holds taken before the fork (by schedulers
 * the child inherited) are not the child's pager's users. */
static unsigned generation = 1;
static pthread_t thread;
static int joinable;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* A forked child has no pager thread: what the parent's said about it
 * (a step in progress, a queue, the lock held) is void there. */
static void child_after_fork(void)
{
    pthread_mutex_init(&pg.lock, NULL);
    pthread_cond_init(&pg.work, NULL);
    pthread_cond_init(&pg.step_done, NULL);
    pg.head = pg.n = 0;
    pg.busy = NULL;
    pg.busy_len = 0;
    pg.running = pg.stop = pg.paused = 0;
    pthread_mutex_init(&life, NULL);
    users = 0;
    joinable = 0;
    generation++;
}

static void register_atfork(void)
{
    (void)pthread_atfork(NULL, NULL, child_after_fork);
}

/* Lock held: take the oldest queued part; 0 when there is none. */
static int pop(part *out)
{
    if (pg.n == 0)
        return 0;
    *out = pg.q[pg.head];
    pg.head = (pg.head + 1) % QUEUE;
    pg.n--;
    return 1;
}

/* Lock held: forget every queued part. */
static void drop_queue(void)
{
    pg.forgotten += pg.n;
    pg.n = 0;
}

/* Lock held: queue a part at the back; 0 when the queue is full. */
static int push(char *p, size_t len)
{
    if (pg.n == QUEUE)
        return 0;
    pg.q[(pg.head + pg.n) % QUEUE] = (part){p, len};
    pg.n++;
    return 1;
}

/* Fault [p, p + len) in; 0 when the kernel does not know how. */
static int populate(char *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
    if (madvise(p, len, MADV_POPULATE_WRITE) == 0)
        return 1;
    /* EINVAL: a kernel before 5.14. Anything else (ENOMEM: out of
     * memory, or part of the range was unmapped under a forget that lost
     * the race it cannot lose; EFAULT) leaves the pages to their
     * writer. */
    return errno != EINVAL;
#else
    (void)p;
    (void)len;
    return 0;
#endif
}

/* The pager thread: one step (a huge page at most) at a time, oldest
 * part first; the rest of a part goes to the back of the queue, so a
 * long block (a batch's handles) does not hold up an arena's next chunk. */
static void *pager_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&pg.lock);
    for (;;) {
        part pt;
        while (!pg.stop && (pg.paused || !pop(&pt)))
            pthread_cond_wait(&pg.work, &pg.lock);
        if (pg.stop)
            break;
        size_t step = VSCHED__HUGE_BYTES -
                      ((uintptr_t)pt.p & (VSCHED__HUGE_BYTES - 1));
        if (step > pt.len)
            step = pt.len;
        if (pt.len > step)
            (void)push(pt.p + step, pt.len - step);
        pg.busy = pt.p;
        pg.busy_len = step;
        pthread_mutex_unlock(&pg.lock);
        int ok = populate(pt.p, step);
        pthread_mutex_lock(&pg.lock);
        pg.busy = NULL;
        pg.busy_len = 0;
        pg.steps++;
        pthread_cond_broadcast(&pg.step_done);
        if (!ok) {
            /* No populating here: stop queueing, drop the queue. */
            pg.running = 0;
            drop_queue();
        }
    }
    pthread_mutex_unlock(&pg.lock);
    return NULL;
}

static int disabled_by_env(void)
{
    const char *v = getenv("VSCHED_PAGER");
    return v != NULL && strcmp(v, "0") == 0;
}

unsigned vsched__pager_hold(void)
{
    pthread_once(&atfork_once, register_atfork);
    pthread_mutex_lock(&life);
    unsigned held = generation;
    if (users++ == 0 && !joinable && !disabled_by_env()) {
        pthread_mutex_lock(&pg.lock);
        pg.stop = 0;
        pg.running = 1;
        pthread_mutex_unlock(&pg.lock);
        /* The pager takes no signal: a host's handlers run on its own
         * threads (the mask is inherited at creation). */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        int rc = pthread_create(&thread, NULL, pager_main, NULL);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (rc == 0) {
            joinable = 1;
#ifdef __linux__
            /* Named before any caller can look (top, /proc). */
            (void)pthread_setname_np(thread, "vsched-pager");
#endif
        } else {
            pthread_mutex_lock(&pg.lock);
            pg.running = 0; /* no pager: writers fault their pages */
            pthread_mutex_unlock(&pg.lock);
        }
    }
    pthread_mutex_unlock(&life);
    return held;
}

void vsched__pager_release(unsigned held)
{
    pthread_mutex_lock(&life);
    if (held != generation) {
        /* Held before a fork, released in the child: not a user here. */
        pthread_mutex_unlock(&life);
        return;
    }
    if (--users == 0 && joinable) {
        pthread_mutex_lock(&pg.lock);
        pg.stop = 1;
        pg.running = 0;
        drop_queue();
        pthread_cond_broadcast(&pg.work);
        pthread_mutex_unlock(&pg.lock);
        pthread_join(thread, NULL);
        joinable = 0;
    }
    pthread_mutex_unlock(&life);
}

void vsched__pager_ahead(void *p, size_t len)
{
    if (p == NULL || len == 0)
        return;
    pthread_mutex_lock(&pg.lock);
    if (pg.running && push(p, len))
        pthread_cond_signal(&pg.work);
    pthread_mutex_unlock(&pg.lock);
}

void vsched__pager_forget(void *p, size_t len)
{
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    pthread_mutex_lock(&pg.lock);
    /* Parts of a block stay inside it: a part starting in the range is
     * one of its own. Its place is given back at once (the rest keep
     * their order): a block freed soon after it was queued must not
     * hold a place a live one needs. */
    size_t kept = 0;
    for (size_t i = 0; i < pg.n; i++) {
        part pt = pg.q[(pg.head + i) % QUEUE];
        if ((uintptr_t)pt.p >= lo && (uintptr_t)pt.p < hi) {
            pg.forgotten++;
            continue;
        }
        pg.q[(pg.head + kept++) % QUEUE] = pt;
    }
    pg.n = kept;
    while (pg.busy != NULL && (uintptr_t)pg.busy >= lo &&
           (uintptr_t)pg.busy < hi)
        pthread_cond_wait(&pg.step_done, &pg.lock);
    pthread_mutex_unlock(&pg.lock);
}

void vsched__pager_pause(int paused)
{
    pthread_mutex_lock(&pg.lock);
    pg.paused = paused;
    pthread_cond_broadcast(&pg.work);
    pthread_mutex_unlock(&pg.lock);
}

void vsched__pager_counts(size_t *steps, size_t *forgotten)
{
    pthread_mutex_lock(&pg.lock);
    if (steps != NULL)
        *steps = pg.steps;
    if (forgotten != NULL)
        *forgotten = pg.forgotten;
    pthread_mutex_unlock(&pg.lock);
}
