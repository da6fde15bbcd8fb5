/*
 * pass -- what one critical section leaves for after the unlock.
 *
 * Under the scheduler lock the driver (or invalidate/remove/reset/cancel)
 * only records: which handles finished, which requests joined a waiter
 * group, which stage events happened. vsched__pass_run then delivers them
 * with no scheduler lock held -- events first (an observer hears of a stage
 * before its waiters wake), then handle signals, then join callbacks, which
 * may re-enter the scheduler.
 */
#include <stdlib.h>

#include "internal.h"

static void push(vsched_handle ***v, size_t *n, size_t *cap, vsched_handle *h)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        vsched_handle **nv = realloc(*v, c * sizeof *nv);
        if (nv == NULL)
            abort(); /* losing a waiter would strand it; nothing sane left */
        *v = nv;
        *cap = c;
    }
    (*v)[(*n)++] = h;
}

void vsched__pass_fin(vsched__pass *p, vsched_handle *h)
{
    push(&p->fin, &p->n_fin, &p->cap_fin, h);
}

void vsched__pass_join(vsched__pass *p, vsched_handle *h)
{
    atomic_fetch_add(&h->refs, 1); /* kept alive until the callback ran */
    push(&p->joins, &p->n_joins, &p->cap_joins, h);
}

/* Set while this thread runs observer callbacks. */
static _Thread_local int in_observer;

/* Deliver queued events until none is left. An observer that calls
 * vsched_cancel re-enters here: the nested call returns at once and the
 * outer loop delivers what the cancel queued. Names point into file nodes,
 * which stay alive until the scheduler is destroyed or reset, and the
 * graveyard keeps reset ones until no task refers to them. */
void vsched__fire_events(vsched *s)
{
    if (s->opts.observer == NULL || in_observer)
        return;
    pthread_mutex_lock(&s->observer_lock);
    in_observer = 1;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        vsched_event *ev = s->events;
        size_t n = s->n_events;
        s->events = NULL;
        s->n_events = s->cap_events = 0;
        pthread_mutex_unlock(&s->lock);
        for (size_t i = 0; i < n; i++)
            s->opts.observer(s->opts.observer_user, &ev[i]);
        for (size_t i = 0; i < n; i++) {
            free((char *)ev[i].name);
            free((char *)ev[i].profile);
        }
        free(ev);
        if (n == 0)
            break;
    }
    in_observer = 0;
    pthread_mutex_unlock(&s->observer_lock);
}

void vsched__pass_run(vsched *s, vsched__pass *p)
{
    vsched__fire_events(s);
    for (size_t i = 0; i < p->n_fin; i++)
        vsched__handle_signal(p->fin[i]);
    p->n_fin = 0;
    /* Node waiters and blocked DAG submitters re-check (the state they
     * wait for changed under the lock, before this). */
    pthread_cond_broadcast(&s->dag.changed);
    /* Join callbacks last: they may submit, which may process inline. */
    size_t n = p->n_joins;
    vsched_handle **joins = p->joins;
    p->joins = NULL;
    p->n_joins = p->cap_joins = 0;
    for (size_t i = 0; i < n; i++) {
        vsched_handle *h = joins[i];
        h->req.on_join(h->req.join_user, h->canonical, h->req.stage);
        vsched__handle_unref(h);
    }
    free(joins);
}

void vsched__pass_free(vsched__pass *p)
{
    free(p->fin);
    free(p->joins);
    *p = (vsched__pass){0};
}
