/*
 * pool -- a fixed set of worker threads fed through a bounded transport.
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
 */
#include <errno.h>
#include <pthread.h>
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

struct vsched_pool {
    vsched_pool_kind kind;
    unsigned n_threads;
    pthread_t *threads;
    worker_arg *args; /* one per thread: its pool and index */

    /* lock: guards ring, head, count, occupied, sleeping, stopping. Rank:
     * leaf (no other lock is taken while it is held; never held while a
     * task runs). */
    pthread_mutex_t lock;
    pthread_cond_t nonempty; /* signalled when count goes up or stopping */
    pool_task *ring;
    size_t capacity;
    size_t head;       /* index of the oldest queued task */
    size_t count;      /* queued, not yet started */
    size_t occupied;   /* queued + running: the transport bound */
    unsigned sleeping; /* workers waiting on nonempty */
    int stopping;
};

static VSCHED__TLS int current_kind = -1;
static VSCHED__TLS int current_index = -1;
static VSCHED__TLS const vsched_pool *current_pool;

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

static void *pool_worker(void *arg)
{
    const worker_arg *wa = arg;
    vsched_pool *p = wa->pool;
    current_kind = (int)p->kind;
    current_index = (int)wa->index;
    current_pool = p;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->count == 0 && !p->stopping) {
            p->sleeping++;
            pthread_cond_wait(&p->nonempty, &p->lock);
            p->sleeping--;
        }
        if (p->count == 0)
            break; /* stopping and drained */
        pool_task t = p->ring[p->head];
        p->head = (p->head + 1) % p->capacity;
        p->count--;
        pthread_mutex_unlock(&p->lock);
        t.fn(t.arg);
        pthread_mutex_lock(&p->lock);
        p->occupied--;
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
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
    for (unsigned i = 0; i < threads; i++) {
        p->args[i] = (worker_arg){p, i};
        if (pthread_create(&p->threads[i], NULL, pool_worker, &p->args[i]) !=
            0) {
            p->n_threads = i;
            vsched_pool_destroy(p);
            return VSCHED_ENOMEM;
        }
        p->n_threads = i + 1;
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
    if (p->occupied == p->capacity) {
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
    for (unsigned i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
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

int vsched__pool_run_one(vsched_pool *p)
{
    pthread_mutex_lock(&p->lock);
    if (p->count == 0) {
        pthread_mutex_unlock(&p->lock);
        return 0;
    }
    pool_task t = p->ring[p->head];
    p->head = (p->head + 1) % p->capacity;
    p->count--;
    pthread_mutex_unlock(&p->lock);
    t.fn(t.arg);
    pthread_mutex_lock(&p->lock);
    p->occupied--;
    pthread_mutex_unlock(&p->lock);
    return 1;
}

size_t vsched__pool_capacity(const vsched_pool *p)
{
    return p->capacity;
}
