/*
 * inbox -- bounded MPSC ring; see inbox.h for the contract.
 */
#include <stdlib.h>
#include <time.h>

#include <vsched/plugin.h>

#include "inbox.h"
#include "park.h"

int vsched__inbox_init(vsched__inbox *q, size_t capacity)
{
    q->ring = calloc(capacity, sizeof *q->ring);
    if (q->ring == NULL)
        return VSCHED_ENOMEM;
    q->capacity = capacity;
    q->head = q->count = q->depth_max = 0;
    q->closed = q->stop = q->nudged = 0;
    atomic_init(&q->hint, 0);
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->nonempty, NULL);
    pthread_cond_init(&q->nonfull, NULL);
    return VSCHED_OK;
}

void vsched__inbox_fini(vsched__inbox *q)
{
    pthread_cond_destroy(&q->nonfull);
    pthread_cond_destroy(&q->nonempty);
    pthread_mutex_destroy(&q->lock);
    free(q->ring);
    q->ring = NULL;
}

static void append_locked(vsched__inbox *q, vsched__item item)
{
    q->ring[(q->head + q->count) % q->capacity] = item;
    q->count++;
    atomic_store_explicit(&q->hint, q->count, memory_order_release);
    if (q->count > q->depth_max)
        q->depth_max = q->count;
    pthread_cond_signal(&q->nonempty);
}

int vsched__inbox_push(vsched__inbox *q, vsched__item item)
{
    pthread_mutex_lock(&q->lock);
    while (q->count == q->capacity && !q->closed)
        pthread_cond_wait(&q->nonfull, &q->lock);
    if (q->closed) {
        pthread_mutex_unlock(&q->lock);
        return VSCHED_ESHUTDOWN;
    }
    append_locked(q, item);
    pthread_mutex_unlock(&q->lock);
    return VSCHED_OK;
}

int vsched__inbox_try_push(vsched__inbox *q, vsched__item item)
{
    pthread_mutex_lock(&q->lock);
    int rc = q->closed                 ? VSCHED_ESHUTDOWN
             : q->count == q->capacity ? VSCHED_EFULL
                                       : VSCHED_OK;
    if (rc == VSCHED_OK)
        append_locked(q, item);
    pthread_mutex_unlock(&q->lock);
    return rc;
}

static size_t take_locked(vsched__inbox *q, vsched__item *out, size_t max)
{
    size_t n = 0;
    while (n < max && q->count > 0) {
        out[n++] = q->ring[q->head];
        q->head = (q->head + 1) % q->capacity;
        q->count--;
    }
    atomic_store_explicit(&q->hint, q->count, memory_order_relaxed);
    if (n > 0)
        pthread_cond_broadcast(&q->nonfull);
    return n;
}

long vsched__inbox_pop_wait(vsched__inbox *q, vsched__item *out, size_t max,
                            int timeout_ms)
{
    struct timespec until;
    if (timeout_ms >= 0)
        vsched__deadline_ms(&until, timeout_ms);
    pthread_mutex_lock(&q->lock);
    while (q->count == 0 && !q->stop && !q->nudged) {
        if (timeout_ms < 0)
            pthread_cond_wait(&q->nonempty, &q->lock);
        else if (pthread_cond_timedwait(&q->nonempty, &q->lock, &until) != 0)
            break;
    }
    q->nudged = 0;
    long n = q->stop ? -1 : (long)take_locked(q, out, max);
    pthread_mutex_unlock(&q->lock);
    return n;
}

void vsched__inbox_nudge(vsched__inbox *q)
{
    pthread_mutex_lock(&q->lock);
    q->nudged = 1;
    pthread_cond_signal(&q->nonempty);
    pthread_mutex_unlock(&q->lock);
}

void vsched__inbox_stop(vsched__inbox *q)
{
    pthread_mutex_lock(&q->lock);
    q->stop = 1;
    q->closed = 1;
    pthread_cond_broadcast(&q->nonempty);
    pthread_cond_broadcast(&q->nonfull);
    pthread_mutex_unlock(&q->lock);
}

size_t vsched__inbox_drain(vsched__inbox *q, vsched__item *out, size_t max)
{
    pthread_mutex_lock(&q->lock);
    size_t n = take_locked(q, out, max);
    pthread_mutex_unlock(&q->lock);
    return n;
}

size_t vsched__inbox_depth_max(vsched__inbox *q)
{
    pthread_mutex_lock(&q->lock);
    size_t d = q->depth_max;
    pthread_mutex_unlock(&q->lock);
    return d;
}
