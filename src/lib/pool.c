/*
 * pool -- worker threads fed through a bounded transport.
 *
 * The transport is a ring of `capacity` slots. A slot is taken when a task
 * is queued and given back when the task has RUN, so `capacity` bounds
 * queued-plus-running work: try_submit answers VSCHED_EFULL instead of
 * growing a queue without bound, and the submitter keeps the work in its
 * own priority order until a slot frees.
 *
 * Work never runs under the pool lock. A submitter wakes a worker only when
 * one sleeps, and after releasing the lock (a woken worker then finds the
 * lock free). Shutdown sets `stopping`; workers drain what is queued, then
 * exit, and destroy joins them.
 *
 * Blocking. A worker that must block inside a task (a stage waiting on a
 * handle) says so (vsched__pool_block_begin .. _end). While it is
 * blocked, a stand-in thread takes its place, so `threads` workers are
 * always able to run tasks: the pool never waits on itself, and nothing
 * runs on a blocked worker's stack (a task run there could not return
 * before the one under it, which may be what it waits for), and the
 * transport holds one more task per worker blocked in a ring task (the
 * ring still holds every queued task: `capacity` slots, since such a
 * worker's task is running, not queued). A stand-in exits between tasks
 * once the workers able to run outnumber `threads` again, and joins the
 * stand-in that exited before it, so at most one exited thread's stack
 * stays mapped; destroy joins the rest. At most STANDINS_MAX are alive
 * at once: past that, a worker that blocks retries every 10 ms until one
 * leaves (if every thread waits on the pool's own work by then, the pool
 * has run out of threads, as any bounded pool would). Work handed on by a
 * worker about to block (vsched__pool_push_urgent) runs before the ring,
 * outside the transport bound: it was already taken.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include "internal.h"

typedef struct pool_task {
    vsched_task_fn fn;
    void *arg;
} pool_task;

typedef struct worker_arg {
    struct vsched_pool *pool;
    unsigned index;
} worker_arg;

/* A stand-in thread (pool lock). */
typedef struct standin {
    worker_arg arg;
    pthread_t thread;
    int exited; /* it left the loop (lock held) */
    struct standin *next;
} standin;

struct vsched_pool {
    vsched_pool_kind kind;
    unsigned n_threads; /* workers able to run tasks, blocked ones aside */
    unsigned n_started; /* of threads[] */
    pthread_t *threads;
    worker_arg *args; /* one per thread: its pool and index */

    /* lock: guards everything below. Rank: leaf (no other lock is taken
     * while it is held; never held while a task runs). */
    pthread_mutex_t lock;
    pthread_cond_t nonempty; /* signalled when count goes up or stopping */
    pool_task *ring;
    size_t capacity;
    size_t head;       /* index of the oldest queued task */
    size_t count;      /* queued in the ring, not yet started */
    size_t occupied;   /* queued + running ring tasks: at most capacity,
                          plus one per worker blocked in a ring task */
    unsigned sleeping; /* workers waiting on nonempty */
    int stopping;
    vsched__pool_job *urgent, *urgent_tail; /* run before the ring */
    unsigned live;         /* threads: n_threads + stand-ins not exited */
    unsigned blocked;      /* workers between block_begin and block_end */
    unsigned blocked_ring; /* of which running a ring task: each lends
                              its transport slot */
    standin *standins;     /* every stand-in not joined yet */
    standin *zombie;       /* the one that exited last, not joined yet */
    unsigned standins_max;
};

static VSCHED__TLS int current_kind = -1;
static VSCHED__TLS int current_index = -1;
static VSCHED__TLS vsched_pool *current_pool;
/* The calling worker runs a ring task (it holds a transport slot), and
 * whether a block of its lent that slot (vsched__pool_block_begin). */
static VSCHED__TLS int in_ring_task, ring_slot_lent;

int vsched_pool_current_kind(void)
{
    return current_kind;
}

int vsched_pool_current_worker(void)
{
    return current_index;
}

int vsched__pool_is_current(const vsched_pool *p)
{
    return current_pool == p;
}

vsched_pool *vsched__pool_current(void)
{
    return current_pool;
}

/* Lock held: more threads are able to run tasks than the pool has. */
static int surplus(const vsched_pool *p)
{
    return p->live - p->blocked > p->n_threads;
}

/* Lock held: unlink st from the stand-ins. */
static void unlink_standin(vsched_pool *p, standin *st)
{
    for (standin **link = &p->standins; *link != NULL; link = &(*link)->next)
        if (*link == st) {
            *link = st->next;
            return;
        }
}

static void *pool_worker(void *arg)
{
    const worker_arg *wa = arg;
    vsched_pool *p = wa->pool;
    int is_standin = wa->index >= p->n_threads;
    current_kind = (int)p->kind;
    current_index = (int)wa->index;
    current_pool = p;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        if (is_standin && surplus(p))
            break; /* the worker it stood in for is back */
        while (p->count == 0 && p->urgent == NULL && !p->stopping) {
            p->sleeping++;
            pthread_cond_wait(&p->nonempty, &p->lock);
            p->sleeping--;
            if (is_standin && surplus(p))
                break;
        }
        if ((p->count == 0 && p->urgent == NULL) || (is_standin && surplus(p)))
            break; /* stopping and drained, or no longer needed */
        vsched__pool_job *u = p->urgent;
        if (u != NULL) {
            p->urgent = u->next;
            pthread_mutex_unlock(&p->lock);
            u->fn(u);
            pthread_mutex_lock(&p->lock);
            continue;
        }
        pool_task t = p->ring[p->head];
        p->head = (p->head + 1) % p->capacity;
        p->count--;
        pthread_mutex_unlock(&p->lock);
        in_ring_task = 1;
        t.fn(t.arg);
        in_ring_task = 0;
        pthread_mutex_lock(&p->lock);
        p->occupied--;
    }
    standin *prev = NULL;
    if (is_standin) {
        standin *self = (standin *)((char *)wa - offsetof(standin, arg));
        p->live--;
        self->exited = 1;
        /* Each exiting stand-in joins the one that exited before it, so
         * at most one exited thread (its stack) waits to be joined;
         * destroy joins the last. Once the pool stops, destroy joins
         * every stand-in on the list, and none joins another: the list
         * it takes may hold the zombie and stand-ins still running. */
        if (!p->stopping) {
            prev = p->zombie;
            if (prev != NULL)
                unlink_standin(p, prev);
            p->zombie = self;
        }
        /* Queued work may be left to a sleeping worker. */
        if (p->count > 0 || p->urgent != NULL)
            pthread_cond_signal(&p->nonempty);
    }
    pthread_mutex_unlock(&p->lock);
    if (prev != NULL) {
        pthread_join(prev->thread, NULL);
        free(prev);
    }
    return NULL;
}

/* At most this many stand-ins at once per pool (a test may lower it): a
 * host whose pool tasks all wait, each stand-in taking the next task,
 * which waits in turn, then waits for room instead of growing threads
 * without bound. */
#define STANDINS_MAX 1024

/* Lock held: start a stand-in; 0 when none could be started. */
static int start_standin(vsched_pool *p)
{
    if (p->live - p->n_threads >= p->standins_max)
        return 0;
    standin *st = calloc(1, sizeof *st);
    if (st == NULL)
        return 0;
    /* The lowest index no live stand-in has: a stable lane for traces. */
    unsigned index = p->n_threads;
    for (int again = 1; again;) {
        again = 0;
        for (const standin *o = p->standins; o != NULL; o = o->next)
            if (!o->exited && o->arg.index == index) {
                index++;
                again = 1;
            }
    }
    st->arg = (worker_arg){p, index};
    if (pthread_create(&st->thread, NULL, pool_worker, &st->arg) != 0) {
        free(st);
        return 0;
    }
    st->next = p->standins;
    p->standins = st;
    p->live++;
    return 1;
}

static void join_all(standin *list)
{
    while (list != NULL) {
        standin *next = list->next;
        pthread_join(list->thread, NULL);
        free(list);
        list = next;
    }
}

/* Lock held: a stand-in for every blocked worker, as far as threads can
 * be started. */
static int ensure_able(vsched_pool *p)
{
    while (p->live - p->blocked < p->n_threads)
        if (!start_standin(p))
            return 0;
    return 1;
}

unsigned vsched__pool_block_begin(vsched_pool *p)
{
    unsigned flags = 0;
    pthread_mutex_lock(&p->lock);
    p->blocked++;
    if (in_ring_task && !ring_slot_lent) {
        /* Its slot is lent to the queue while it blocks: the ring still
         * holds every queued task, as a blocked worker's task is not
         * queued. Workers blocked in urgent jobs hold no slot. */
        p->blocked_ring++;
        ring_slot_lent = 1;
        flags |= VSCHED__POOL_LENT;
    }
    if (p->stopping || ensure_able(p))
        flags |= VSCHED__POOL_STANDIN;
    pthread_mutex_unlock(&p->lock);
    return flags;
}

int vsched__pool_block_retry(vsched_pool *p)
{
    pthread_mutex_lock(&p->lock);
    int ok = p->stopping || ensure_able(p);
    pthread_mutex_unlock(&p->lock);
    return ok;
}

void vsched__pool_block_end(vsched_pool *p, unsigned flags)
{
    pthread_mutex_lock(&p->lock);
    p->blocked--;
    if (flags & VSCHED__POOL_LENT) {
        p->blocked_ring--;
        ring_slot_lent = 0;
    }
    /* A sleeping stand-in is now surplus: let it see so and exit. */
    int wake = surplus(p) && p->sleeping > 0;
    pthread_mutex_unlock(&p->lock);
    if (wake)
        pthread_cond_broadcast(&p->nonempty);
}

void vsched__pool_push_urgent(vsched_pool *p, vsched__pool_job *j)
{
    j->next = NULL;
    pthread_mutex_lock(&p->lock);
    if (p->urgent == NULL)
        p->urgent = j;
    else
        p->urgent_tail->next = j;
    p->urgent_tail = j;
    int wake = p->sleeping > 0;
    pthread_mutex_unlock(&p->lock);
    if (wake)
        pthread_cond_signal(&p->nonempty);
}

int vsched_pool_create(vsched_pool **out, vsched_pool_kind kind,
                       unsigned threads, size_t capacity)
{
    if (out == NULL || threads == 0 ||
        (kind != VSCHED_POOL_CPU && kind != VSCHED_POOL_IO))
        return VSCHED_EINVAL;
    size_t floor = (size_t)threads * 4;
    if (capacity == 0 || (kind == VSCHED_POOL_CPU && capacity < floor))
        capacity = floor;

    vsched_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return VSCHED_ENOMEM;
    p->kind = kind;
    p->capacity = capacity;
    p->ring = calloc(capacity, sizeof *p->ring);
    p->threads = calloc(threads, sizeof *p->threads);
    p->args = calloc(threads, sizeof *p->args);
    if (p->ring == NULL || p->threads == NULL || p->args == NULL)
        goto fail_mem;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->nonempty, NULL);
    /* Stand-ins tell themselves apart by an index from `threads` up. */
    p->n_threads = threads;
    p->live = threads;
    p->standins_max = STANDINS_MAX;
    for (unsigned i = 0; i < threads; i++) {
        p->args[i] = (worker_arg){p, i};
        if (pthread_create(&p->threads[i], NULL, pool_worker, &p->args[i]) !=
            0) {
            p->n_started = i;
            vsched_pool_destroy(p);
            return VSCHED_ENOMEM;
        }
        p->n_started = i + 1;
    }
    *out = p;
    return VSCHED_OK;

fail_mem:
    free(p->ring);
    free(p->threads);
    free(p->args);
    free(p);
    return VSCHED_ENOMEM;
}

int vsched_pool_try_submit(vsched_pool *p, vsched_task_fn fn, void *arg)
{
    if (p == NULL || fn == NULL)
        return VSCHED_EINVAL;
    pthread_mutex_lock(&p->lock);
    if (p->stopping) {
        pthread_mutex_unlock(&p->lock);
        return VSCHED_ESHUTDOWN;
    }
    /* A blocked worker's ring task does not hold the transport's room:
     * its stand-in needs work to take. */
    if (p->occupied >= p->capacity + p->blocked_ring) {
        pthread_mutex_unlock(&p->lock);
        return VSCHED_EFULL;
    }
    p->ring[(p->head + p->count) % p->capacity] = (pool_task){fn, arg};
    p->count++;
    p->occupied++;
    int wake = p->sleeping > 0;
    pthread_mutex_unlock(&p->lock);
    if (wake)
        pthread_cond_signal(&p->nonempty);
    return VSCHED_OK;
}

void vsched_pool_destroy(vsched_pool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    pthread_cond_broadcast(&p->nonempty);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->n_started; i++)
        pthread_join(p->threads[i], NULL);
    /* No worker blocks any more (its scheduler answered every waiter
     * before the pool is destroyed): every stand-in exits, joining none
     * (stopping is set), so each on the list is joined here once. */
    pthread_mutex_lock(&p->lock);
    standin *left = p->standins;
    p->standins = NULL;
    p->zombie = NULL;
    pthread_mutex_unlock(&p->lock);
    join_all(left);
    pthread_cond_destroy(&p->nonempty);
    pthread_mutex_destroy(&p->lock);
    free(p->threads);
    free(p->args);
    free(p->ring);
    free(p);
}

vsched_pool_kind vsched_pool_get_kind(const vsched_pool *p)
{
    return p->kind;
}

unsigned vsched_pool_threads(const vsched_pool *p)
{
    return p->n_threads;
}

unsigned vsched__test_pool_unjoined(vsched_pool *p)
{
    unsigned n = 0;
    pthread_mutex_lock(&p->lock);
    for (const standin *st = p->standins; st != NULL; st = st->next)
        n += st->exited;
    pthread_mutex_unlock(&p->lock);
    return n;
}

void vsched__test_pool_standins(vsched_pool *p, unsigned max)
{
    pthread_mutex_lock(&p->lock);
    p->standins_max = max;
    pthread_mutex_unlock(&p->lock);
}

size_t vsched__pool_capacity(const vsched_pool *p)
{
    return p->capacity;
}
