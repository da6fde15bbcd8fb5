/*
 * coord -- coordinator pool and the batch primitive; see coord.h.
 *
 * The pool is a FIFO of jobs fed to a fixed set of threads: one mutex, one
 * condvar, jobs never run under the lock, shutdown by a flag, join. A job is
 * one batch's setup or one of its items; a batch's jobs live in an array on
 * the batch, so fanning out allocates once per batch, not per item.
 *
 * Lock order (a lock is never taken while a lock of a higher rank is held):
 *   rank 1  batch_run.lock   one batch's completion count
 *   rank 1  vr_coord.lock    the job queue
 *   rank 2  vr_coord.trace_lock   leaf
 * The two rank-1 locks are never held together; no lock is held while a
 * policy callback runs.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "build/coord.h"
#include "common/util.h"

#define SETUP_JOB ((size_t)-1)

struct batch_run;

typedef struct vr_job {
    struct vr_job *next;
    struct batch_run *run;
    size_t index; /* item index, or SETUP_JOB */
} vr_job;

struct vr_coord {
    unsigned n_threads;
    pthread_t *threads;
    vsched_pool *shared; /* TEST ONLY: jobs go to this pool instead */

    /* lock: guards head, tail, stopping. Rank 1; never held while a job
     * runs, never together with a batch_run lock. */
    pthread_mutex_t lock;
    pthread_cond_t nonempty; /* a job was queued, or stopping */
    vr_job *head, *tail;
    int stopping;

    /* trace_lock: guards spans, n_spans, cap_spans. Rank 2 (leaf). */
    pthread_mutex_t trace_lock;
    vr_coord_span *spans; /* names owned (heap) */
    size_t n_spans, cap_spans;
};

/* One running batch; lives on the caller's stack for the call. */
typedef struct batch_run {
    vr_coord *c;
    const vr_coord_policy *p;
    void *ctx;
    char *slots;
    size_t n;
    int setup_status; /* written by setup, read by items after it */
    char *setup_msg;
    int *status; /* per item; each written by its own job only */
    vr_job *jobs;

    /* lock: guards remaining. Rank 1; never held while a job runs. */
    pthread_mutex_t lock;
    pthread_cond_t done; /* remaining reached 0 */
    size_t remaining;
} batch_run;

/* Per-thread markers: the coordinator this thread works for, and how many
 * batch items (or setups) enclose it. */
static _Thread_local const vr_coord *tl_worker_of;
static _Thread_local unsigned tl_depth;

const vr_coord *vr_coord_current(void)
{
    return tl_worker_of;
}

unsigned vr_coord_depth(void)
{
    return tl_depth;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- running one job ---------------------------------------------------- */

static void *slot_of(const batch_run *r, size_t i)
{
    return r->slots != NULL ? r->slots + i * r->p->slot_size : NULL;
}

static int normalise(int rc)
{
    return rc > 0 ? VSCHED_EERR : rc;
}

static void run_setup(batch_run *r)
{
    char *msg = NULL;
    tl_depth++;
    int rc = normalise(r->p->setup(r->ctx, r->n, &msg));
    tl_depth--;
    r->setup_status = rc;
    if (rc != VSCHED_OK && msg == NULL)
        msg = vr_xstrdup(vsched_strerror(rc));
    if (rc == VSCHED_OK)
        free(msg);
    else
        r->setup_msg = msg;
}

/* The failure boundary: whatever item i does, it ends with a status, and a
 * failure becomes item i's own result through the policy. */
static void run_item(batch_run *r, size_t i)
{
    char *msg = NULL;
    const char *reason = r->setup_msg;
    int rc = r->setup_status;
    if (rc == VSCHED_OK) {
        tl_depth++;
        rc = normalise(r->p->item(r->ctx, i, slot_of(r, i), &msg));
        tl_depth--;
        reason = msg != NULL ? msg : vsched_strerror(rc);
    }
    r->status[i] = rc;
    if (rc != VSCHED_OK && r->p->fail != NULL)
        r->p->fail(r->ctx, i, slot_of(r, i), rc, reason);
    free(msg);
}

static void run_job(vr_job *j)
{
    batch_run *r = j->run;
    if (j->index == SETUP_JOB)
        run_setup(r);
    else
        run_item(r, j->index);
    pthread_mutex_lock(&r->lock);
    if (--r->remaining == 0)
        pthread_cond_signal(&r->done);
    pthread_mutex_unlock(&r->lock); /* last touch of r by this thread */
}

/* ---- the pool ----------------------------------------------------------- */

static void *coord_worker(void *arg)
{
    vr_coord *c = arg;
    tl_worker_of = c;
    pthread_mutex_lock(&c->lock);
    for (;;) {
        while (c->head == NULL && !c->stopping)
            pthread_cond_wait(&c->nonempty, &c->lock);
        vr_job *j = c->head;
        if (j == NULL)
            break; /* stopping and drained */
        c->head = j->next;
        if (c->head == NULL)
            c->tail = NULL;
        pthread_mutex_unlock(&c->lock);
        run_job(j);
        pthread_mutex_lock(&c->lock);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* TEST ONLY trampoline: a job run by a borrowed (scheduler) pool worker. */
static void shared_job(void *arg)
{
    vr_job *j = arg;
    const vr_coord *saved = tl_worker_of;
    tl_worker_of = j->run->c;
    run_job(j);
    tl_worker_of = saved;
}

static void enqueue(vr_coord *c, vr_job *j)
{
    if (c->shared != NULL) {
        while (vsched_pool_try_submit(c->shared, shared_job, j) ==
               VSCHED_EFULL) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
        return;
    }
    j->next = NULL;
    pthread_mutex_lock(&c->lock);
    if (c->tail != NULL)
        c->tail->next = j;
    else
        c->head = j;
    c->tail = j;
    pthread_cond_signal(&c->nonempty);
    pthread_mutex_unlock(&c->lock);
}

static vr_coord *coord_alloc(void)
{
    vr_coord *c = vr_xcalloc(1, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->nonempty, NULL);
    pthread_mutex_init(&c->trace_lock, NULL);
    return c;
}

int vr_coord_create(vr_coord **out, unsigned threads)
{
    if (out == NULL || threads == 0)
        return VSCHED_EINVAL;
    vr_coord *c = coord_alloc();
    c->threads = vr_xcalloc(threads, sizeof *c->threads);
    for (unsigned i = 0; i < threads; i++) {
        if (pthread_create(&c->threads[i], NULL, coord_worker, c) != 0)
            goto fail;
        c->n_threads = i + 1;
    }
    *out = c;
    return VSCHED_OK;

fail:
    vr_coord_destroy(c);
    return VSCHED_ENOMEM;
}

int vr_coord_create_sharing_for_test(vr_coord **out, vsched_pool *pool)
{
    if (out == NULL || pool == NULL)
        return VSCHED_EINVAL;
    vr_coord *c = coord_alloc();
    c->shared = pool;
    *out = c;
    return VSCHED_OK;
}

void vr_coord_destroy(vr_coord *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->lock);
    c->stopping = 1;
    pthread_cond_broadcast(&c->nonempty);
    pthread_mutex_unlock(&c->lock);
    for (unsigned i = 0; i < c->n_threads; i++)
        pthread_join(c->threads[i], NULL);
    for (size_t i = 0; i < c->n_spans; i++)
        free((char *)c->spans[i].name);
    free(c->spans);
    free(c->threads);
    pthread_cond_destroy(&c->nonempty);
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->trace_lock);
    free(c);
}

unsigned vr_coord_threads(const vr_coord *c)
{
    return c->n_threads;
}

/* ---- the batch primitive ------------------------------------------------ */

/* Queue jobs [first, first + count) of r and wait until they have run. */
static void fan_out(batch_run *r, vr_job *first, size_t count)
{
    pthread_mutex_lock(&r->lock);
    r->remaining = count;
    pthread_mutex_unlock(&r->lock);
    for (size_t k = 0; k < count; k++)
        enqueue(r->c, &first[k]);
    pthread_mutex_lock(&r->lock);
    while (r->remaining > 0)
        pthread_cond_wait(&r->done, &r->lock);
    pthread_mutex_unlock(&r->lock);
}

/* Setup (when the policy has one) on a worker, then every item. */
static void run_fanout(batch_run *r)
{
    r->jobs = vr_xcalloc(r->n + 1, sizeof *r->jobs);
    for (size_t i = 0; i < r->n; i++)
        r->jobs[i] = (vr_job){NULL, r, i};
    r->jobs[r->n] = (vr_job){NULL, r, SETUP_JOB};
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->done, NULL);
    if (r->p->setup != NULL)
        fan_out(r, &r->jobs[r->n], 1);
    fan_out(r, r->jobs, r->n);
    pthread_cond_destroy(&r->done);
    pthread_mutex_destroy(&r->lock);
    free(r->jobs);
}

/* Setup and every item, in order, on the calling thread. */
static void run_here(batch_run *r)
{
    if (r->p->setup != NULL)
        run_setup(r);
    for (size_t i = 0; i < r->n; i++)
        run_item(r, i);
}

static void record_span(vr_coord *c, const char *name, size_t n, size_t failed,
                        vr_coord_mode mode, uint64_t t0)
{
    vr_coord_span sp = {vr_xstrdup(name != NULL ? name : "batch"),
                        n,
                        failed,
                        mode,
                        tl_depth,
                        t0,
                        now_ns()};
    pthread_mutex_lock(&c->trace_lock);
    if (c->n_spans == c->cap_spans) {
        c->cap_spans = c->cap_spans > 0 ? 2 * c->cap_spans : 16;
        c->spans = vr_xrealloc(c->spans, c->cap_spans * sizeof *c->spans);
    }
    c->spans[c->n_spans++] = sp;
    pthread_mutex_unlock(&c->trace_lock);
}

int vr_coord_batch(vr_coord *c, const vr_coord_policy *p, void *ctx, size_t n,
                   void *slots)
{
    if (c == NULL || p == NULL || p->item == NULL ||
        (n > 0 && p->slot_size > 0 && slots == NULL))
        return VSCHED_EINVAL;
    /* Stage work must never need a coordinator: refuse it outright. */
    if (tl_depth == 0 && tl_worker_of == NULL &&
        vsched_pool_current_kind() != -1)
        return VSCHED_EINVAL;
    uint64_t t0 = now_ns();
    vr_coord_mode mode = n == 0         ? VR_COORD_EMPTY
                         : tl_depth > 0 ? VR_COORD_INLINE
                         : n == 1       ? VR_COORD_SINGLE
                                        : VR_COORD_FANOUT;
    if (mode == VR_COORD_EMPTY) {
        record_span(c, p->span_name, 0, 0, mode, t0);
        return VSCHED_OK;
    }
    if (p->sched != NULL)
        vsched_account_batch_submission(p->sched);
    batch_run r = {.c = c, .p = p, .ctx = ctx, .slots = slots, .n = n};
    r.status = vr_xcalloc(n, sizeof *r.status);
    if (mode == VR_COORD_FANOUT)
        run_fanout(&r);
    else
        run_here(&r);
    int first = VSCHED_OK;
    size_t failed = 0;
    for (size_t i = 0; i < n; i++)
        if (r.status[i] != VSCHED_OK) {
            failed++;
            if (first == VSCHED_OK)
                first = r.status[i];
        }
    free(r.status);
    free(r.setup_msg);
    record_span(c, p->span_name, n, failed, mode, t0);
    return first;
}

size_t vr_coord_trace(vr_coord *c, vr_coord_span *out, size_t cap)
{
    pthread_mutex_lock(&c->trace_lock);
    size_t n = c->n_spans;
    for (size_t i = 0; i < n && i < cap; i++)
        out[i] = c->spans[i];
    pthread_mutex_unlock(&c->trace_lock);
    return n;
}
