/*
 * driver -- the driver thread: the inbox's consumer and the idle re-pump.
 *
 * The driver parks on three things at once: its inbox (requests and
 * batches), its private teardown flag (beside the ring, never an item),
 * and an idle deadline armed when a pool refused work. Each pass admits a
 * run of items under ONE hold of the scheduler lock -- a batch is one item,
 * admitted in one critical section -- re-admits the follow-latest waiters
 * the admissions released, starts runners for the ready work, and then,
 * unlocked, delivers events, signals finished handles and runs join
 * callbacks.
 *
 * The re-pump: vsched__kick asks for one when a pool refused a runner
 * (its transport full of host tasks, or a capacity of 1 still held by the
 * task that just finished), and while it holds back a second runner of
 * short work (runner.c, defer_runner). The driver then retries after 1 ms,
 * doubling to 50 ms while it is asked again, so ready work runs as soon as
 * the pool has room, or the held-back runner starts once the first made
 * no progress, though no completion of the scheduler's own work may come
 * to trigger it.
 *
 * Submission from the driver thread itself (a join callback re-entering)
 * drains and processes older items inline when the inbox is full, so the
 * driver never parks on its own inbox.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define DRIVER_BATCH 64
#define REPUMP_MIN_MS 1
#define REPUMP_MAX_MS 50

/* The scheduler whose driver is the calling thread, if any. */
static _Thread_local vsched *driver_of;

int vsched__on_driver(const vsched *s)
{
    return driver_of == s;
}

void vsched__driver_repump(vsched *s)
{
    /* The driver asking itself (its own re-pump, or a kick of its own)
     * waits out the delay instead: a nudge would end the wait at once and
     * turn the re-pump into a busy loop. */
    if (atomic_exchange(&s->repump, 1) == 0 && !vsched__on_driver(s))
        vsched__inbox_nudge(&s->inbox);
}

static void cancel_all(vsched *s, const char *reason, vsched__pass *p);

/* Admit items (lock held). Items submitted before the last vsched_cancel
 * (an older epoch) were meant to be ended by it: the inbox is FIFO and
 * epochs only grow, so they are a prefix of the run; once the last of
 * them is admitted, the cancel is applied again, before any item
 * submitted after it is admitted. */
static void admit_items(vsched *s, vsched__item *items, size_t n,
                        vsched__pass *p)
{
    uint64_t now = atomic_load(&s->cancel_epoch);
    for (size_t i = 0; i < n; i++) {
        if (items[i].kind == VSCHED__ITEM_BATCH) {
            vsched_batch *b = items[i].ptr;
            vsched__admit_batch(s, b, p);
        } else {
            vsched__admit(s, items[i].ptr, p);
            vsched__readmit_drain(s, p);
        }
        if (items[i].epoch != now && (i + 1 == n || items[i + 1].epoch == now))
            cancel_all(s, s->cancel_reason, p);
    }
}

static void process_items(vsched *s, vsched__item *items, size_t n)
{
    vsched__pass p = {0};
    vsched__lock(s);
    admit_items(s, items, n, &p);
    vsched__kick(s);
    vsched__unlock_run(s, &p);
}

void vsched__inbox_absorb(vsched *s, vsched__pass *p)
{
    vsched__item items[DRIVER_BATCH];
    size_t n;
    /* After teardown began, the inbox is only drained to answer
     * SHUTDOWN (vsched_destroy). */
    while (!atomic_load(&s->stopping) && vsched__inbox_hint(&s->inbox) > 0 &&
           (n = vsched__inbox_drain(&s->inbox, items, DRIVER_BATCH)) > 0)
        admit_items(s, items, n, p);
}

static void repump(vsched *s)
{
    vsched__pass p = {0};
    vsched__lock(s);
    atomic_store(&s->repump, 0);
    s->in_repump = 1;
    vsched__kick(s); /* may ask again */
    s->in_repump = 0;
    vsched__unlock_run(s, &p);
}

void *vsched__driver_main(void *arg)
{
    vsched *s = arg;
    driver_of = s;
    vsched__item items[DRIVER_BATCH];
    int delay = REPUMP_MIN_MS;
    for (;;) {
        int pending = atomic_load(&s->repump);
        long n = vsched__inbox_pop_wait(&s->inbox, items, DRIVER_BATCH,
                                        pending ? delay : -1);
        if (n < 0)
            break; /* teardown */
        if (n > 0)
            process_items(s, items, (size_t)n);
        if (atomic_load(&s->repump)) {
            if (pending) {
                repump(s);
                delay = delay * 2 > REPUMP_MAX_MS ? REPUMP_MAX_MS : delay * 2;
            }
        } else {
            delay = REPUMP_MIN_MS;
        }
    }
    driver_of = NULL;
    return NULL;
}

int vsched__submit_item(vsched *s, vsched__item it)
{
    it.epoch = atomic_load(&s->cancel_epoch);
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

/* ---- cancellation ----------------------------------------------------------- */

static void cancel_node(vsched *s, vsched__node *n, const char *reason,
                        vsched__pass *p)
{
    if (n == NULL || vsched__node_terminal(n))
        return;
    if (n->state == VSCHED__RUNNING) {
        atomic_store(&n->cancel, 1); /* it stops at its next check */
        return;
    }
    vsched__node_fail(s, n, VSCHED_ECANCELLED, strdup(reason), NULL, NULL, 0,
                      -1, p);
}

void vsched_cancel(vsched *s, const char *reason)
{
    if (s == NULL)
        return;
    if (reason == NULL)
        reason = "cancelled";
    char *copy = strdup(reason);
    vsched__pass p = {0};
    vsched__lock(s);
    if (copy != NULL) { /* else the previous reason stands */
        free(s->cancel_reason);
        s->cancel_reason = copy;
    }
    atomic_fetch_add(&s->cancel_epoch, 1);
    cancel_all(s, reason, &p);
    vsched__kick(s);
    vsched__unlock_run(s, &p);
}

/* End every non-terminal node (lock held). */
static void cancel_all(vsched *s, const char *reason, vsched__pass *p)
{
    if (reason == NULL)
        reason = "cancelled";
    /* Every non-terminal node is a current stage of a live file or an
     * active job (sweeps end the others). */
    size_t nf;
    vsched__file **files = vsched__files_list(&s->files, &nf, 0);
    for (size_t i = 0; i < nf; i++) {
        vsched__file *f = files[i];
        for (uint32_t k = 0; k < f->n_slots; k++)
            cancel_node(s, vsched__file_slots(f)[k].node, reason, p);
        cancel_node(s, f->analysis, reason, p);
        cancel_node(s, f->source, reason, p);
    }
    free(files);
    vsched__nodevec jobs = {0};
    for (vsched__node *n = s->dag.active; n != NULL; n = n->k.job->next) {
        vsched__node_ref(n);
        if (vsched__nodevec_push(&jobs, n) != VSCHED_OK)
            abort();
    }
    for (uint32_t i = 0; i < jobs.n; i++) {
        cancel_node(s, jobs.v[i], reason, p);
        vsched__node_unref(s, jobs.v[i]);
    }
    vsched__nodevec_free(&jobs);
}
