/*
 * pass -- what one critical section leaves for after the unlock.
 *
 * Under the scheduler lock a thread only records: which handles finished,
 * which requests joined a waiter group, which stage events happened, which
 * snapshots lost their last reference. vsched__pass_run then delivers them
 * with no scheduler lock held -- events first (an observer hears of a stage
 * before its waiters wake), then handle signals, then join callbacks (which
 * may re-enter the scheduler), then snapshot frees (plugin calls).
 *
 * Task events (options.task_observer: one per task that ran) travel the
 * same way, each before the stage events its completion produced.
 *
 * Observers are called one at a time (observer_lock, rank 0). An observer
 * that re-enters the scheduler (vsched_cancel) produces events of its own:
 * they are appended to the delivery running on this thread, which hands
 * them on in order, instead of waiting for the observer lock it holds.
 */
#include <stdlib.h>

#include "internal.h"

static void *grow(void *v, size_t *cap, size_t elem)
{
    size_t c = *cap ? *cap * 2 : 16;
    void *nv = realloc(v, c * elem);
    if (nv == NULL)
        abort(); /* losing a waiter would strand it; nothing sane left */
    *cap = c;
    return nv;
}

void vsched__pass_fin(vsched__pass *p, vsched_handle *h)
{
    if (p->n_fin == p->cap_fin)
        p->fin = grow(p->fin, &p->cap_fin, sizeof *p->fin);
    p->fin[p->n_fin++] = h;
}

void vsched__pass_join(vsched__pass *p, vsched_handle *h)
{
    vsched__handle_hold(h); /* alive until the callback ran */
    if (p->n_joins == p->cap_joins)
        p->joins = grow(p->joins, &p->cap_joins, sizeof *p->joins);
    const vsched__req_extra *x = h->pend.extra;
    p->joins[p->n_joins++] = (vsched__join){h, x->on_join, x->join_user};
}

void vsched__pass_event(vsched *s, vsched__pass *p, const vsched__node *n)
{
    if (s->opts.observer == NULL || n->file == NULL)
        return;
    if (p->n_events == p->cap_events)
        p->events = grow(p->events, &p->cap_events, sizeof *p->events);
    p->events[p->n_events++] = (vsched__event){vsched__stage_of(n),
                                               vsched__file_ref(n->file),
                                               vsched__node_profile(n),
                                               n->status,
                                               n->started_ns,
                                               vsched__finished_ns(n),
                                               NULL};
}

void vsched__pass_task_event(vsched__pass *p, vsched_task_event *ev)
{
    if (p->n_events == p->cap_events)
        p->events = grow(p->events, &p->cap_events, sizeof *p->events);
    p->events[p->n_events++] = (vsched__event){.task = ev};
}

/* The delivery running on this thread (observer re-entry appends to it). */
static _Thread_local vsched__pass *delivering;

static void deliver(vsched *s, vsched__pass *p)
{
    if (p->n_events == 0)
        return;
    if (delivering != NULL) {
        /* Re-entered from an observer: hand the events to the outer
         * delivery (it holds the observer lock). */
        vsched__pass *o = delivering;
        for (size_t i = 0; i < p->n_events; i++) {
            if (o->n_events == o->cap_events)
                o->events = grow(o->events, &o->cap_events, sizeof *o->events);
            o->events[o->n_events++] = p->events[i];
        }
        p->n_events = 0;
        return;
    }
    pthread_mutex_lock(&s->observer_lock);
    delivering = p;
    for (size_t i = 0; i < p->n_events; i++) {
        vsched__event e = p->events[i];
        if (e.task != NULL) {
            s->opts.task_observer(s->opts.task_observer_user, e.task);
            continue;
        }
        vsched_event ev = {e.stage,  e.file->name, e.profile,
                           e.status, e.started_ns, e.finished_ns};
        s->opts.observer(s->opts.observer_user, &ev);
    }
    delivering = NULL;
    pthread_mutex_unlock(&s->observer_lock);
    for (size_t i = 0; i < p->n_events; i++) {
        if (p->events[i].task != NULL)
            free(p->events[i].task);
        else
            vsched__file_unref(s, p->events[i].file);
    }
    p->n_events = 0;
}

void vsched__pass_run(vsched *s, vsched__pass *p)
{
    deliver(s, p);
    for (size_t i = 0; i < p->n_fin; i++)
        vsched__handle_signal(p->fin[i]);
    p->n_fin = 0;
    if (p->wake_dag) {
        /* Node waiters and blocked submitters re-check (what they wait
         * for changed under the lock, before this). */
        pthread_cond_broadcast(&s->dag.changed);
        p->wake_dag = 0;
    }
    /* Join callbacks next: they may submit, which may process inline. */
    size_t n = p->n_joins;
    vsched__join *joins = p->joins;
    p->joins = NULL;
    p->n_joins = p->cap_joins = 0;
    for (size_t i = 0; i < n; i++) {
        vsched_handle *h = joins[i].h;
        joins[i].fn(joins[i].user, h->result.name, h->result.stage);
        vsched__handle_unref(h);
    }
    free(joins);
    vsched__snap *dead = p->dead;
    p->dead = NULL;
    vsched__snaps_free(s, dead);
    vsched__tasks_scrub(s, p);
}

void vsched__pass_free(vsched__pass *p)
{
    while (p->clean != NULL) {
        vsched__task *t = p->clean;
        p->clean = t->next_free;
        free(t);
    }
    free(p->fin);
    free(p->joins);
    free(p->events);
    *p = (vsched__pass){0};
}

void vsched__unlock_run(vsched *s, vsched__pass *p)
{
    vsched__unlock(s, p);
    vsched__pass_run(s, p);
    vsched__pass_free(p);
}
