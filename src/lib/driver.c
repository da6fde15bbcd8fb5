/*
 * driver -- the driver thread, dispatch, and the cooperative paths that
 * keep the scheduler live when its own threads must wait.
 *
 * The driver is the inbox's consumer. Each pass pops a run of items and
 * processes them all under ONE hold of the scheduler lock, dispatches ready
 * work, and then -- unlocked -- delivers events, signals finished handles
 * and runs join callbacks.
 *
 * Two cooperative paths:
 *   - submission from the driver thread itself (a join callback or an
 *     observer re-entering): when the inbox is full the driver drains and
 *     processes older items inline first, so it never parks on its own
 *     inbox (vsched__submit_item);
 *   - a CPU pool worker that waits on a handle runs ready CPU work itself
 *     meanwhile, so a pool whose every worker waits still makes progress
 *     (vsched__pump_until).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

#define DRIVER_BATCH 64

/* The scheduler whose driver is the calling thread, if any. */
static _Thread_local vsched *driver_of;

/* ---- processing ---------------------------------------------------------- */

static void process_items(vsched *s, vsched__item *items, size_t n)
{
    vsched__pass p = {0};
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < n; i++) {
        switch (items[i].kind) {
        case VSCHED__ITEM_REQUEST:
            vsched__admit(s, items[i].ptr, &p);
            break;
        case VSCHED__ITEM_BATCH:
            vsched__admit_batch(s, items[i].ptr, &p);
            break;
        case VSCHED__ITEM_COMPLETE:
            vsched__complete(s, items[i].ptr, &p);
            break;
        }
    }
    vsched__dispatch(s);
    if (s->inflight == 0 && s->graph.heap_n == 0 &&
        s->graph.unfinished > 0) {
        /* Quiescent yet unfinished: only a blocker cycle does that. */
        vsched__break_cycles(s, &p);
        vsched__dispatch(s);
    }
    pthread_mutex_unlock(&s->lock);
    vsched__pass_run(s, &p);
    vsched__pass_free(&p);
}

void *vsched__driver_main(void *arg)
{
    vsched *s = arg;
    driver_of = s;
    vsched__item items[DRIVER_BATCH];
    for (;;) {
        size_t n = vsched__inbox_pop_wait(&s->inbox, items, DRIVER_BATCH);
        if (n == 0)
            break; /* teardown channel */
        process_items(s, items, n);
    }
    driver_of = NULL;
    return NULL;
}

int vsched__submit_item(vsched *s, vsched__item it)
{
    if (driver_of != s)
        return vsched__inbox_push(&s->inbox, it); /* may wait: not consumer */
    for (;;) {
        int rc = vsched__inbox_try_push(&s->inbox, it);
        if (rc != VSCHED_EFULL)
            return rc;
        /* The consumer itself: make room by doing the work. */
        vsched__item items[DRIVER_BATCH];
        size_t n = vsched__inbox_drain(&s->inbox, items, DRIVER_BATCH);
        process_items(s, items, n);
    }
}

/* ---- dispatch ------------------------------------------------------------- */

int vsched__on_driver(const vsched *s)
{
    return driver_of == s;
}

static vsched__task *task_for(vsched *s, vsched__node *n)
{
    if (n->kind == VSCHED__K_JOB)
        return vsched__job_task(s, n);
    vsched__task *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    vsched__file *f = n->file;
    t->s = s;
    t->node = n;
    t->epoch = s->epoch;
    t->kind = n->kind;
    t->incarnation = n->incarnation;
    t->generation = n->generation;
    t->name = strdup(f->name);
    t->profile = n->profile != NULL ? strdup(n->profile) : NULL;
    memcpy(t->file_kind, f->kind, sizeof t->file_kind);
    t->snap = vsched__snap_ref(f->snap);
    t->content_hash = f->content_hash;
    t->analysis_hash = f->analysis_hash;
    if (t->name == NULL)
        goto fail;
    if (n->kind == VSCHED__K_SOURCE && f->has_content) {
        t->has_content = 1;
        t->len = f->content_len;
        t->bytes = malloc(f->content_len + 1);
        if (t->bytes == NULL)
            goto fail;
        memcpy(t->bytes, f->content, f->content_len + 1);
    }
    if (n->kind == VSCHED__K_ANALYSIS && f->n_blockers > 0) {
        t->blocker_hashes = calloc(f->n_blockers, sizeof *t->blocker_hashes);
        if (t->blocker_hashes == NULL)
            goto fail;
        for (size_t i = 0; i < f->n_blockers; i++)
            t->blocker_hashes[i] = f->blockers[i]->analysis_hash;
        t->n_blockers = f->n_blockers;
    }
    return t;

fail:
    vsched__task_free(t);
    return NULL;
}

static int needs_io(const vsched__node *n)
{
    return n->kind == VSCHED__K_SOURCE && n->phase == 0;
}

/* Take n's task (prepared or new) and mark it running. NULL on
 * exhaustion (n is left as it was). */
static vsched__task *start_node(vsched *s, vsched__node *n)
{
    vsched__task *t = n->pending_task;
    if (t == NULL)
        t = task_for(s, n);
    if (t == NULL)
        return NULL;
    n->pending_task = NULL;
    pthread_mutex_lock(&s->task_lock);
    s->live_tasks++;
    pthread_mutex_unlock(&s->task_lock);
    vsched__node_start(n, vsched__now_ns());
    s->inflight++;
    return t;
}

/* Undo start_node after the pool refused the task. */
static void unstart_node(vsched *s, vsched__node *n, vsched__task *t)
{
    vsched__task_retire(s);
    s->inflight--;
    n->pending_task = t;
    n->state = VSCHED__PENDING;
}

void vsched__dispatch(vsched *s)
{
    vsched__node *deferred[64];
    size_t ndef = 0;
    int cpu_full = 0, io_full = 0;
    while (!(cpu_full && io_full) && ndef < 64) {
        vsched__node *n = vsched__graph_pop_ready(&s->graph);
        if (n == NULL)
            break;
        int io = needs_io(n);
        if ((io && io_full) || (!io && cpu_full)) {
            deferred[ndef++] = n;
            continue;
        }
        /* A job takes its permit and resources all at once, or is parked
         * holding nothing (dag.h). */
        if (n->job != NULL && !vsched__job_can_start(s, n))
            continue;
        vsched__task *t = start_node(s, n);
        if (t == NULL) {
            deferred[ndef++] = n; /* exhaustion: try again next pass */
            break;
        }
        vsched_pool *pool = io ? s->opts.io_pool : s->opts.cpu_pool;
        if (vsched_pool_try_submit(pool, vsched__task_run, t) != VSCHED_OK) {
            /* FULL: keep the task and the node's place; the next
             * completion brings the next pass. */
            unstart_node(s, n, t);
            deferred[ndef++] = n;
            if (io)
                io_full = 1;
            else
                cpu_full = 1;
        } else if (n->job != NULL) {
            vsched__job_started(s, n); /* accepted: take what it needs */
        }
    }
    for (size_t i = 0; i < ndef; i++)
        vsched__graph_push_ready(&s->graph, deferred[i]);
}

/* ---- cooperative pump ------------------------------------------------------ */

/* Pop the best ready CPU node (lock held); I/O nodes stay queued, and a
 * job that cannot take its resources is parked. */
static vsched__node *pop_cpu_ready(vsched *s)
{
    vsched__node *skipped[16];
    size_t nskip = 0;
    vsched__node *found = NULL;
    while (nskip < 16) {
        vsched__node *n = vsched__graph_pop_ready(&s->graph);
        if (n == NULL)
            break;
        if (n->job != NULL && !vsched__job_can_start(s, n))
            continue;
        if (!needs_io(n)) {
            found = n;
            break;
        }
        skipped[nskip++] = n;
    }
    for (size_t i = 0; i < nskip; i++)
        vsched__graph_push_ready(&s->graph, skipped[i]);
    return found;
}

static int handle_done(vsched_handle *h)
{
    pthread_mutex_lock(&h->lock);
    int d = h->done;
    pthread_mutex_unlock(&h->lock);
    return d;
}

void vsched__pump_until(vsched *s, vsched_handle *h)
{
    while (!handle_done(h)) {
        /* Work already handed to our pool first, then ready work. */
        if (vsched__pool_run_one(s->opts.cpu_pool))
            continue;
        vsched__task *t = NULL;
        pthread_mutex_lock(&s->lock);
        vsched__node *n = pop_cpu_ready(s);
        if (n != NULL && (t = start_node(s, n)) == NULL)
            vsched__graph_push_ready(&s->graph, n);
        else if (t != NULL && n->job != NULL)
            vsched__job_started(s, n);
        pthread_mutex_unlock(&s->lock);
        if (t != NULL) {
            /* Run it here; deliver like a pool task (we are not the
             * inbox's consumer, so waiting for a slot is safe). */
            vsched__task_execute(t);
            if (vsched__inbox_push(&s->inbox, (vsched__item){
                                                  VSCHED__ITEM_COMPLETE, t}) !=
                VSCHED_OK)
                vsched__task_free(t);
            vsched__task_retire(s);
            continue;
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 1000000; /* re-check for ready work every 1 ms */
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&h->lock);
        if (!h->done)
            pthread_cond_timedwait(&h->cond, &h->lock, &until);
        pthread_mutex_unlock(&h->lock);
    }
}

/* ---- cancellation and teardown -------------------------------------------- */

static void fail_all(vsched *s, int status, const char *reason)
{
    vsched__pass p = {0};
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->graph.all.n; i++) {
        vsched__node *n = s->graph.all.v[i];
        if (vsched__node_terminal(n))
            continue;
        atomic_store((atomic_int *)&n->cancel, 1);
        if (n->state != VSCHED__RUNNING || status == VSCHED_ESHUTDOWN)
            vsched__fail_node(s, n, status, strdup(reason), NULL, NULL, 0, -1,
                              &p);
    }
    pthread_mutex_unlock(&s->lock);
    vsched__pass_run(s, &p);
    vsched__pass_free(&p);
}

void vsched_cancel(vsched *s, const char *reason)
{
    if (s != NULL)
        fail_all(s, VSCHED_ECANCELLED,
                 reason != NULL ? reason : "cancelled");
}

void vsched__driver_teardown(vsched *s)
{
    fail_all(s, VSCHED_ESHUTDOWN, "scheduler shut down");
}
