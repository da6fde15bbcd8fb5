/*
 * resource -- what a job needs to start: named resources with parent-chain
 * re-entrancy, a CPU concurrency permit, and the roll-up of terminality
 * along the parent chain that gives grants back. See dag.h for the model.
 *
 * Writers of vsched__resource.in_use, enumerated: job_started (a fresh
 * unit), subtree_done (its release), vsched__dag_sync (reset). Writers of
 * vsched__grant.branch: job_started (a borrow), subtree_done (its end).
 * Writers of vsched_sem.in_use: job_started, vsched__job_ended, sem_sync.
 *
 * Everything here runs with the scheduler lock held.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

vsched__resource *vsched__resource_get(vsched *s, const char *name)
{
    vsched__dag *d = &s->dag;
    for (size_t i = 0; i < d->n_res; i++)
        if (strcmp(d->res[i]->name, name) == 0)
            return d->res[i];
    if (d->n_res == d->cap_res) {
        size_t cap = d->cap_res ? d->cap_res * 2 : 8;
        vsched__resource **v = realloc(d->res, cap * sizeof *v);
        if (v == NULL)
            return NULL;
        d->res = v;
        d->cap_res = cap;
    }
    vsched__resource *r = calloc(1, sizeof *r);
    if (r == NULL || (r->name = strdup(name)) == NULL) {
        free(r);
        return NULL;
    }
    r->capacity = 1; /* an unconfigured name: capacity 1, created on use */
    d->res[d->n_res++] = r;
    return r;
}

/* A semaphore's use count belongs to the epoch it was counted in. */
static void sem_sync(vsched *s, vsched_sem *sem)
{
    if (sem != NULL && sem->epoch != s->epoch) {
        sem->in_use = 0;
        sem->epoch = s->epoch;
    }
}

void vsched__job_adopt(vsched__node *n)
{
    for (vsched__node *x = n; x != NULL; x = x->job->parent)
        x->job->live++;
}

/* The grant of r held by n's nearest ancestor holding one, and in *branch
 * the child of that ancestor on the way to n (n itself for its parent). */
static vsched__grant *ancestor_grant(vsched__node *n, vsched__resource *r,
                                     vsched__node **branch)
{
    vsched__node *child = n;
    for (vsched__node *a = n->job->parent; a != NULL;
         child = a, a = a->job->parent) {
        vsched__job *aj = a->job;
        for (size_t i = 0; i < aj->n_grants; i++)
            if (aj->grants[i].res == r) {
                *branch = child;
                return &aj->grants[i];
            }
    }
    return NULL;
}

/* Could n take everything now? Changes nothing. */
static int all_free(vsched *s, vsched__node *n)
{
    vsched__job *j = n->job;
    sem_sync(s, j->sem);
    if (j->sem != NULL && j->sem->in_use >= j->sem->capacity)
        return 0;
    for (size_t i = 0; i < j->n_needs; i++) {
        vsched__node *br = NULL;
        vsched__grant *g = ancestor_grant(n, j->needs[i], &br);
        if (g != NULL) {
            if (g->branch != NULL && g->branch != br)
                return 0; /* another branch of the holder borrows it */
        } else if (j->needs[i]->in_use >= j->needs[i]->capacity) {
            return 0;
        }
    }
    return 1;
}

int vsched__job_can_start(vsched *s, vsched__node *n)
{
    vsched__dag_sync(s);
    if (all_free(s, n))
        return 1;
    /* Take nothing and wait: no hold-and-wait, so no deadlock. */
    n->job->parked = 1;
    if (vsched__nodevec_push(&s->dag.parked, n) != VSCHED_OK)
        abort(); /* a parked job must not be lost */
    return 0;
}

void vsched__job_started(vsched *s, vsched__node *n)
{
    vsched__job *j = n->job;
    for (size_t i = 0; i < j->n_needs; i++) {
        vsched__node *br = NULL;
        vsched__grant *g = ancestor_grant(n, j->needs[i], &br);
        if (g != NULL) {
            g->branch = br; /* a re-entrant borrow for br's subtree */
        } else {
            j->needs[i]->in_use++; /* grants[] was sized at insertion */
            j->grants[j->n_grants++] = (vsched__grant){j->needs[i], NULL};
        }
    }
    if (j->sem != NULL) {
        j->sem->in_use++;
        j->permit = 1;
    }
    if (j->queued) {
        j->queued = 0;
        s->dag.queued--;
        pthread_cond_broadcast(&s->dag.changed);
    }
}

void vsched__job_wake_parked(vsched *s)
{
    vsched__nodevec *v = &s->dag.parked;
    for (size_t i = 0; i < v->n; i++) {
        vsched__node *n = v->v[i];
        n->job->parked = 0;
        if (!vsched__node_terminal(n) && n->state == VSCHED__PENDING)
            vsched__graph_make_ready_if_free(&s->graph, n);
    }
    v->n = 0;
}

/* x's whole subtree is terminal: its grants go back, and the branch of
 * its parent's grants that x borrowed is free again. */
static void subtree_done(vsched__node *x)
{
    vsched__job *j = x->job;
    for (size_t i = 0; i < j->n_grants; i++)
        j->grants[i].res->in_use--;
    j->n_grants = 0;
    if (j->parent != NULL) {
        vsched__job *pj = j->parent->job;
        for (size_t i = 0; i < pj->n_grants; i++)
            if (pj->grants[i].branch == x)
                pj->grants[i].branch = NULL;
    }
}

static void unkey(vsched *s, vsched__node *n)
{
    vsched__nodevec *v = &s->dag.keyed;
    for (size_t i = 0; i < v->n; i++)
        if (v->v[i] == n) {
            v->v[i] = v->v[--v->n];
            break;
        }
    n->job->keyed = 0;
}

void vsched__job_ended(vsched *s, vsched__node *n)
{
    vsched__dag_sync(s);
    vsched__job *j = n->job;
    int released = 0;
    if (j->permit) {
        sem_sync(s, j->sem);
        if (j->sem->in_use > 0)
            j->sem->in_use--;
        j->permit = 0;
        released = 1;
    }
    if (j->queued) {
        j->queued = 0;
        s->dag.queued--;
    }
    if (j->keyed)
        unkey(s, n);
    /* Terminality rolls up the parent chain. */
    for (vsched__node *x = n; x != NULL; x = x->job->parent)
        if (--x->job->live == 0) {
            released |= x->job->n_grants > 0 || x->job->parent != NULL;
            subtree_done(x);
        }
    if (released)
        vsched__job_wake_parked(s);
    pthread_cond_broadcast(&s->dag.changed);
}
