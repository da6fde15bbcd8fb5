/*
 * resource -- what a job needs to start: named resources with parent-chain
 * re-entrancy, a CPU concurrency permit; the roll-up of settled subtrees
 * that gives grants back; the job registry; and the wait-for check that
 * turns a resource deadlock into a failure. See dag.h for the model.
 *
 * Writers of vsched__resource.in_use and .holders, enumerated: take (a
 * fresh unit) and subtree_settled (its release). Writers of
 * vsched__grant.branch: take (a borrow), subtree_settled (its end).
 * Writers of vsched_sem.in_use: take, settle. None of them is a reset: the
 * counts follow running work, and a job from before a reset gives back
 * what it took when its task returns.
 *
 * Deadlock. Seed 003's all-or-nothing acquisition rules out hold-and-wait
 * between jobs that each take what they run with, but a grant held for a
 * subtree is held while its children wait: P holds r, its child C waits on
 * X, X needs r. X can start only when P's subtree settles, which needs C,
 * which needs X. Before a job parks, and whenever a unit is taken while
 * jobs are parked, each parked need is checked: if every unit it could
 * get is held for a subtree in which some node waits (transitively) on
 * the job itself, the job can never start; it fails with VSCHED_ECYCLE and
 * a message naming the chain.
 *
 * Everything here runs with the scheduler lock held.
 */
#include <stdio.h>
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

void vsched__job_adopt(vsched__node *n)
{
    for (vsched__node *x = n; x != NULL; x = x->job->parent)
        x->job->live++;
}

/* ---- the registry ---------------------------------------------------------- */

void vsched__job_register(vsched *s, vsched__node *n)
{
    vsched__job *j = n->job;
    j->next = s->dag.active;
    j->prev = NULL;
    if (s->dag.active != NULL)
        s->dag.active->job->prev = n;
    s->dag.active = n;
    j->active = 1;
}

void vsched__job_enqueued(vsched *s, vsched__node *n)
{
    vsched__job *j = n->job;
    if (j->queued || j->task_out)
        return;
    j->queued = 1;
    if (++s->dag.queued > s->dag.queued_max)
        s->dag.queued_max = s->dag.queued;
}

static void unregister(vsched *s, vsched__node *n)
{
    vsched__job *j = n->job;
    if (!j->active)
        return;
    if (j->prev != NULL)
        j->prev->job->next = j->next;
    else
        s->dag.active = j->next;
    if (j->next != NULL)
        j->next->job->prev = j->prev;
    j->prev = j->next = NULL;
    j->active = 0;
    /* The graph's reference moves to the history; the oldest leaves. */
    vsched__dag *d = &s->dag;
    if (d->hist_n == VSCHED__JOB_HISTORY) {
        vsched__node *old = d->history[d->hist_head];
        d->hist_head = (d->hist_head + 1) % VSCHED__JOB_HISTORY;
        d->hist_n--;
        vsched__node_retire(s, old);
    }
    d->history[(d->hist_head + d->hist_n) % VSCHED__JOB_HISTORY] = n;
    d->hist_n++;
}

void vsched__job_history_clear(vsched *s)
{
    vsched__dag *d = &s->dag;
    while (d->hist_n > 0) {
        vsched__node *n = d->history[d->hist_head];
        d->hist_head = (d->hist_head + 1) % VSCHED__JOB_HISTORY;
        d->hist_n--;
        vsched__node_retire(s, n);
    }
    d->hist_head = 0;
    for (uint32_t i = 0; i < d->parked.n; i++) {
        d->parked.v[i]->job->parked = 0;
        vsched__node_unref(s, d->parked.v[i]);
    }
    d->parked.n = 0;
    d->keyed.n = 0;
    for (size_t i = 0; i < d->n_admit; i++) {
        vsched__node_unref(s, d->admit[i].up);
        vsched__node_unref(s, d->admit[i].down);
    }
    d->n_admit = 0;
}

/* ---- grants ---------------------------------------------------------------- */

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

/* Is need i of n free now? */
static int need_free(vsched__node *n, size_t i)
{
    vsched__resource *r = n->job->needs[i];
    vsched__node *br = NULL;
    vsched__grant *g = ancestor_grant(n, r, &br);
    if (g != NULL)
        return g->branch == NULL || g->branch == br;
    return r->in_use < r->capacity;
}

static int all_free(vsched__node *n)
{
    vsched__job *j = n->job;
    if (j->sem != NULL && j->sem->in_use >= j->sem->capacity)
        return 0;
    for (size_t i = 0; i < j->n_needs; i++)
        if (!need_free(n, i))
            return 0;
    return 1;
}

/* ---- the wait-for check ------------------------------------------------------ */

/* Is `h` (or a node of its subtree) in the set marked with stamp, that is,
 * downstream of the waiting job? Returns that node, or NULL. */
static vsched__node *waits_within(vsched__node *h, const vsched__nodevec *d,
                                  uint32_t stamp)
{
    (void)stamp;
    for (uint32_t i = 0; i < d->n; i++)
        for (vsched__node *x = d->v[i]; x != NULL;
             x = x->job != NULL ? x->job->parent : NULL)
            if (x == h)
                return d->v[i];
    return NULL;
}

/* A message when n can never start, else NULL. */
static char *deadlock_of(vsched *s, vsched__node *n)
{
    /* What waits on n, transitively (explicit edges: jobs). */
    vsched__nodevec down = {0};
    uint32_t stamp = vsched__graph_stamp(&s->graph);
    n->mark = stamp;
    if (vsched__nodevec_push(&down, n) != VSCHED_OK)
        abort();
    for (uint32_t k = 0; k < down.n; k++) {
        vsched__node *x = down.v[k];
        for (uint32_t i = 0; i < x->down.n; i++) {
            vsched__node *y = x->down.v[i];
            if (y->mark != stamp && !vsched__node_terminal(y)) {
                y->mark = stamp;
                if (vsched__nodevec_push(&down, y) != VSCHED_OK)
                    abort();
            }
        }
    }
    char *msg = NULL;
    vsched__job *j = n->job;
    for (size_t i = 0; i < j->n_needs && msg == NULL; i++) {
        if (need_free(n, i))
            continue;
        vsched__resource *r = j->needs[i];
        vsched__node *br = NULL;
        vsched__grant *g = ancestor_grant(n, r, &br);
        /* The units that could serve this need, and who holds them. */
        vsched__node *const *holders = g != NULL ? &g->branch
                                                 : (vsched__node *const *)
                                                       r->holders.v;
        size_t n_holders = g != NULL ? 1 : r->holders.n;
        if (g == NULL && r->in_use < r->capacity)
            continue;
        vsched__node *first_h = NULL, *first_w = NULL;
        size_t stuck = 0;
        for (size_t k = 0; k < n_holders; k++) {
            vsched__node *w = waits_within(holders[k], &down, stamp);
            if (w != NULL && w != n) {
                stuck++;
                if (first_h == NULL)
                    first_h = holders[k], first_w = w;
            }
        }
        if (n_holders > 0 && stuck == n_holders) {
            if (asprintf(&msg,
                         "resource deadlock: '%s' needs '%s', which '%s' "
                         "holds for its subtree, where '%s' waits on '%s'",
                         vsched__node_name(n), r->name,
                         vsched__node_name(first_h),
                         vsched__node_name(first_w),
                         vsched__node_name(n)) < 0)
                msg = NULL;
        }
    }
    vsched__nodevec_free(&down);
    return msg;
}

/* ---- start, park, settle ------------------------------------------------------ */

int vsched__job_can_start(vsched *s, vsched__node *n, vsched__pass *p)
{
    if (all_free(n))
        return 1;
    char *deadlock = deadlock_of(s, n);
    if (deadlock != NULL) {
        vsched__node_fail(s, n, VSCHED_ECYCLE, deadlock, NULL, NULL, 0, -1,
                          p);
        return 0;
    }
    /* Take nothing and wait: no hold-and-wait. */
    n->job->parked = 1;
    vsched__node_ref(n);
    if (vsched__nodevec_push(&s->dag.parked, n) != VSCHED_OK)
        abort(); /* a parked job must not be lost */
    return 0;
}

/* A unit was taken: a parked job may now wait forever. */
static void recheck_parked(vsched *s, vsched__pass *p)
{
    vsched__nodevec *v = &s->dag.parked;
    for (uint32_t i = 0; i < v->n;) {
        vsched__node *x = v->v[i];
        char *deadlock = vsched__node_terminal(x) ? NULL : deadlock_of(s, x);
        if (deadlock == NULL) {
            i++;
            continue;
        }
        v->v[i] = v->v[--v->n];
        x->job->parked = 0;
        vsched__node_fail(s, x, VSCHED_ECYCLE, deadlock, NULL, NULL, 0, -1,
                          p);
        vsched__node_unref(s, x);
    }
}

void vsched__job_started(vsched *s, vsched__node *n, vsched__pass *p)
{
    vsched__job *j = n->job;
    int fresh = 0;
    for (size_t i = 0; i < j->n_needs; i++) {
        vsched__node *br = NULL;
        vsched__grant *g = ancestor_grant(n, j->needs[i], &br);
        if (g != NULL) {
            g->branch = br; /* a re-entrant borrow for br's subtree */
        } else {
            vsched__resource *r = j->needs[i];
            r->in_use++; /* grants[] was sized at insertion */
            if (vsched__nodevec_push(&r->holders, n) != VSCHED_OK)
                abort();
            j->grants[j->n_grants++] = (vsched__grant){r, NULL};
            fresh = 1;
        }
    }
    if (j->sem != NULL) {
        j->sem->in_use++;
        j->permit = 1;
    }
    j->task_out = 1;
    if (j->queued) {
        j->queued = 0;
        s->dag.queued--;
        pthread_cond_broadcast(&s->dag.changed);
    }
    if (fresh && s->dag.parked.n > 0)
        recheck_parked(s, p);
}

void vsched__job_wake_parked(vsched *s)
{
    vsched__nodevec *v = &s->dag.parked;
    uint32_t n = v->n;
    v->n = 0;
    for (uint32_t i = 0; i < n; i++) {
        vsched__node *x = v->v[i];
        x->job->parked = 0;
        if (!vsched__node_terminal(x))
            vsched__make_ready_if_free(s, x);
        vsched__node_unref(s, x);
    }
}

static void vec_remove(vsched__nodevec *v, const vsched__node *n)
{
    for (uint32_t i = 0; i < v->n; i++)
        if (v->v[i] == n) {
            v->v[i] = v->v[--v->n];
            return;
        }
}

/* x's whole subtree settled: its grants go back, and the branch of its
 * parent's grants that x borrowed is free again. */
static void subtree_settled(vsched__node *x)
{
    vsched__job *j = x->job;
    for (size_t i = 0; i < j->n_grants; i++) {
        j->grants[i].res->in_use--;
        vec_remove(&j->grants[i].res->holders, x);
    }
    j->n_grants = 0;
    if (j->parent != NULL) {
        vsched__job *pj = j->parent->job;
        for (size_t i = 0; i < pj->n_grants; i++)
            if (pj->grants[i].branch == x)
                pj->grants[i].branch = NULL;
    }
}

/* x's subtree settled and x left the graph: nothing walks up from it
 * again. */
static void drop_parent(vsched *s, vsched__node *x)
{
    vsched__node *par = x->job->parent;
    if (par == NULL || x->in_structure || x->job->live > 0)
        return;
    x->job->parent = NULL;
    vsched__node_unref(s, par);
}

void vsched__job_forget(vsched *s, vsched__node *n)
{
    vsched__job *j = n->job;
    vsched__jobdep *deps = j->deps;
    size_t nd = j->n_deps;
    j->deps = NULL;
    j->n_deps = 0;
    for (size_t i = 0; i < nd; i++)
        vsched__node_unref(s, deps[i].up);
    free(deps);
    drop_parent(s, n);
}

/* n is terminal and its task is back: give back what it holds. */
static void settle(vsched *s, vsched__node *n)
{
    vsched__job *j = n->job;
    if (j->settled)
        return;
    j->settled = 1;
    int released = 0;
    if (j->permit) {
        j->sem->in_use--;
        j->permit = 0;
        released = 1;
    }
    /* Settling rolls up the parent chain; subtrees that settled and left
     * the graph drop their parents after the walk. */
    vsched__nodevec gone = {0};
    for (vsched__node *x = n; x != NULL; x = x->job->parent)
        if (--x->job->live == 0) {
            released |= x->job->n_grants > 0 || x->job->parent != NULL;
            subtree_settled(x);
            if (!x->in_structure && x->job->parent != NULL &&
                vsched__nodevec_push(&gone, x) != VSCHED_OK)
                abort();
        }
    /* Top-down: dropping a child's parent reference may free that parent,
     * so the parent's own is dropped first. */
    for (uint32_t i = gone.n; i-- > 0;)
        drop_parent(s, gone.v[i]);
    vsched__nodevec_free(&gone);
    if (released)
        vsched__job_wake_parked(s);
    pthread_cond_broadcast(&s->dag.changed);
}

static void unkey(vsched *s, vsched__node *n)
{
    vec_remove(&s->dag.keyed, n);
    n->job->keyed = 0;
}

void vsched__job_ended(vsched *s, vsched__node *n)
{
    vsched__job *j = n->job;
    if (j->queued) {
        j->queued = 0;
        s->dag.queued--;
    }
    if (j->keyed)
        unkey(s, n);
    if (j->parked) {
        vec_remove(&s->dag.parked, n);
        j->parked = 0;
        vsched__node_unref(s, n);
    }
    if (!j->task_out)
        settle(s, n);
    unregister(s, n);
}

void vsched__job_task_returned(vsched *s, vsched__node *n)
{
    n->job->task_out = 0;
    if (vsched__node_terminal(n))
        settle(s, n);
}
