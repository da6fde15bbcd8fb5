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
 * which needs X. The wait can also run through other parked jobs and
 * their holders: P holds r, its child waits on X; Q holds s, its child
 * waits on Y; X needs s, Y needs r. Before a job parks, and whenever a
 * unit is taken while jobs are parked, each parked job is checked against
 * the closure of what cannot finish before it starts (deadlock_of): if
 * every unit of one of its needs is held for a subtree in that closure,
 * it can never start; it fails with VSCHED_ECYCLE and a message naming
 * the chain.
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
    for (vsched__node *x = n; x != NULL; x = x->k.job->parent)
        x->k.job->live++;
}

/* ---- the registry ---------------------------------------------------------- */

void vsched__job_register(vsched *s, vsched__node *n)
{
    vsched__job *j = vsched__node_job(n);
    j->next = s->dag.active;
    j->prev = NULL;
    if (s->dag.active != NULL)
        s->dag.active->k.job->prev = n;
    s->dag.active = n;
    j->active = 1;
}

void vsched__job_enqueued(vsched *s, vsched__node *n)
{
    vsched__job *j = vsched__node_job(n);
    if (j->queued || j->task_out)
        return;
    j->queued = 1;
    if (++s->dag.queued > s->dag.queued_max)
        s->dag.queued_max = s->dag.queued;
}

static void unregister(vsched *s, vsched__node *n)
{
    vsched__job *j = vsched__node_job(n);
    if (!j->active)
        return;
    if (j->prev != NULL)
        j->prev->k.job->next = j->next;
    else
        s->dag.active = j->next;
    if (j->next != NULL)
        j->next->k.job->prev = j->prev;
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
        d->parked.v[i]->k.job->parked = 0;
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
    for (vsched__node *a = n->k.job->parent; a != NULL;
         child = a, a = a->k.job->parent) {
        vsched__job *aj = vsched__node_job(a);
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
    vsched__resource *r = n->k.job->needs[i];
    vsched__node *br = NULL;
    vsched__grant *g = ancestor_grant(n, r, &br);
    if (g != NULL)
        return g->branch == NULL || g->branch == br;
    return r->in_use < r->capacity;
}

static int all_free(vsched__node *n)
{
    vsched__job *j = vsched__node_job(n);
    if (j->sem != NULL && j->sem->in_use >= j->sem->capacity)
        return 0;
    for (size_t i = 0; i < j->n_needs; i++)
        if (!need_free(n, i))
            return 0;
    return 1;
}

/* ---- the wait-for check ------------------------------------------------------ */

/* One node that cannot finish before the checked job starts, and why:
 * it waits on W[from] through an edge (resource NULL), or it is parked
 * needing `resource`, every unit of which is held for a subtree that
 * cannot settle -- `holder`'s, where W[from] is. */
typedef struct waiter {
    vsched__node *node;
    size_t from;
    const vsched__resource *resource;
    vsched__node *holder;
} waiter;

/* A holder whose subtree holds W[witness]. */
typedef struct stuck_holder {
    vsched__node *holder;
    size_t witness;
} stuck_holder;

typedef struct waitset {
    waiter *w;
    size_t n, cap;
    stuck_holder *h;
    size_t nh, caph;
    size_t ancestors_done; /* W entries whose ancestors are recorded */
    uint32_t stamp;        /* marks W's nodes */
} waitset;

static void ws_add(waitset *ws, waiter x)
{
    if (ws->n == ws->cap) {
        ws->cap = ws->cap ? ws->cap * 2 : 16;
        waiter *v = realloc(ws->w, ws->cap * sizeof *v);
        if (v == NULL)
            abort();
        ws->w = v;
    }
    x.node->mark = ws->stamp;
    ws->w[ws->n++] = x;
}

/* Everything that waits through edges on W[from..], transitively. */
static void ws_close_edges(waitset *ws, size_t from)
{
    for (size_t k = from; k < ws->n; k++) {
        vsched__node *x = ws->w[k].node;
        for (uint32_t i = 0; i < x->down.n; i++) {
            vsched__node *y = x->down.v[i];
            if (y->mark != ws->stamp && !vsched__node_terminal(y))
                ws_add(ws, (waiter){y, k, NULL, NULL});
        }
    }
}

/* Record the ancestors (structural parents) of the W entries added since
 * the last call: their subtrees cannot settle. */
static void ws_ancestors(waitset *ws)
{
    for (; ws->ancestors_done < ws->n; ws->ancestors_done++) {
        vsched__node *x = ws->w[ws->ancestors_done].node;
        for (; x != NULL;
             x = vsched__node_job(x) != NULL ? x->k.job->parent : NULL) {
            size_t i = 0;
            while (i < ws->nh && ws->h[i].holder != x)
                i++;
            if (i < ws->nh)
                break; /* it and its ancestors are recorded */
            if (ws->nh == ws->caph) {
                ws->caph = ws->caph ? ws->caph * 2 : 16;
                stuck_holder *v = realloc(ws->h, ws->caph * sizeof *v);
                if (v == NULL)
                    abort();
                ws->h = v;
            }
            ws->h[ws->nh++] = (stuck_holder){x, ws->ancestors_done};
        }
    }
}

/* The W entry in holder h's subtree, or SIZE_MAX. */
static size_t ws_witness(const waitset *ws, const vsched__node *h)
{
    for (size_t i = 0; i < ws->nh; i++)
        if (ws->h[i].holder == h)
            return ws->h[i].witness;
    return SIZE_MAX;
}

/* Can need i of x never be served while W waits? Then *holder and
 * *witness say through whom. skip_self: ignore holders stuck only on W[0]
 * itself (x is the checked job: such a holder is its ancestor, whose
 * grant it borrows instead). */
static int need_stuck(const waitset *ws, vsched__node *x, size_t i,
                      int skip_self, vsched__node **holder, size_t *witness)
{
    if (need_free(x, i))
        return 0;
    vsched__resource *r = x->k.job->needs[i];
    vsched__node *br = NULL;
    vsched__grant *g = ancestor_grant(x, r, &br);
    if (g == NULL && r->in_use < r->capacity)
        return 0;
    /* The units that could serve this need, and who holds them. */
    vsched__node *const *hs =
        g != NULL ? &g->branch : (vsched__node *const *)r->holders.v;
    size_t nh = g != NULL ? 1 : r->holders.n;
    if (nh == 0)
        return 0; /* capacity lowered below what is held: it may rise */
    for (size_t k = 0; k < nh; k++) {
        size_t wi = ws_witness(ws, hs[k]);
        if (wi == SIZE_MAX || (skip_self && wi == 0))
            return 0;
        if (k == 0) {
            *holder = hs[k];
            *witness = wi;
        }
    }
    return 1;
}

/* "resource deadlock: 'n' needs 'r', which 'h' holds for its subtree,
 * where 'c' waits on 'x', which needs ..., where 'c2' waits on 'n'": the
 * chain from n's stuck need back to n. */
static char *deadlock_message(const waitset *ws, vsched__node *n,
                              const vsched__resource *r, vsched__node *h,
                              size_t witness)
{
    char *m = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&m, &len);
    if (f == NULL)
        return NULL;
    fprintf(f,
            "resource deadlock: '%s' needs '%s', which '%s' holds for its "
            "subtree",
            vsched__node_name(n), r->name, vsched__node_name(h));
    fprintf(f, ", where '%s'", vsched__node_name(ws->w[witness].node));
    for (size_t at = witness, hops = 0; at != 0 && hops < 64; hops++) {
        const waiter *w = &ws->w[at];
        const char *next = vsched__node_name(ws->w[w->from].node);
        if (w->resource == NULL)
            fprintf(f, " waits on '%s'", next);
        else
            fprintf(f,
                    " needs '%s', which '%s' holds for its subtree, "
                    "where '%s'",
                    w->resource->name, vsched__node_name(w->holder), next);
        if (w->resource == NULL && w->from != 0)
            fputs(", which", f);
        at = w->from;
    }
    if (fclose(f) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

/* A message when n can never start, else NULL. The set W of what cannot
 * finish before n starts is closed over edges (what waits on W) and over
 * resources (a parked job every unit of whose need is held for a subtree
 * that holds part of W); n can never start when every unit of one of its
 * needs is held so. */
static char *deadlock_of(vsched *s, vsched__node *n)
{
    waitset ws = {.stamp = vsched__graph_stamp(&s->graph)};
    ws_add(&ws, (waiter){n, SIZE_MAX, NULL, NULL});
    ws_close_edges(&ws, 0);
    for (int grew = 1; grew;) {
        grew = 0;
        ws_ancestors(&ws);
        const vsched__nodevec *pk = &s->dag.parked;
        for (uint32_t k = 0; k < pk->n; k++) {
            vsched__node *x = pk->v[k];
            if (x == n || x->mark == ws.stamp || vsched__node_terminal(x))
                continue;
            for (size_t i = 0; i < x->k.job->n_needs; i++) {
                vsched__node *h = NULL;
                size_t wi = 0;
                if (need_stuck(&ws, x, i, 0, &h, &wi)) {
                    size_t at = ws.n;
                    ws_add(&ws, (waiter){x, wi, x->k.job->needs[i], h});
                    ws_close_edges(&ws, at);
                    grew = 1;
                    break;
                }
            }
        }
    }
    ws_ancestors(&ws);
    char *msg = NULL;
    for (size_t i = 0; i < n->k.job->n_needs && msg == NULL; i++) {
        vsched__node *h = NULL;
        size_t wi = 0;
        if (need_stuck(&ws, n, i, 1, &h, &wi))
            msg = deadlock_message(&ws, n, n->k.job->needs[i], h, wi);
    }
    free(ws.w);
    free(ws.h);
    return msg;
}

/* ---- start, park, settle ------------------------------------------------------ */

int vsched__job_can_start(vsched *s, vsched__node *n, vsched__pass *p)
{
    if (all_free(n))
        return 1;
    char *deadlock = deadlock_of(s, n);
    if (deadlock != NULL) {
        vsched__node_fail(s, n, VSCHED_ECYCLE, deadlock, NULL, NULL, 0, -1, p);
        return 0;
    }
    /* Take nothing and wait: no hold-and-wait. */
    n->k.job->parked = 1;
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
        x->k.job->parked = 0;
        vsched__node_fail(s, x, VSCHED_ECYCLE, deadlock, NULL, NULL, 0, -1, p);
        vsched__node_unref(s, x);
    }
}

void vsched__job_started(vsched *s, vsched__node *n, vsched__pass *p)
{
    vsched__job *j = vsched__node_job(n);
    int fresh = 0;
    for (size_t i = 0; i < j->n_needs; i++) {
        vsched__node *br = NULL;
        vsched__grant *g = ancestor_grant(n, j->needs[i], &br);
        if (g != NULL) {
            g->branch = br; /* a re-entrant borrow for br's subtree */
        } else {
            vsched__resource *r = j->needs[i];
            if (++r->in_use > r->peak) /* grants[] was sized at insertion */
                r->peak = r->in_use;
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
        x->k.job->parked = 0;
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
    vsched__job *j = vsched__node_job(x);
    for (size_t i = 0; i < j->n_grants; i++) {
        j->grants[i].res->in_use--;
        vec_remove(&j->grants[i].res->holders, x);
    }
    j->n_grants = 0;
    if (j->parent != NULL) {
        vsched__job *pj = vsched__node_job(j->parent);
        for (size_t i = 0; i < pj->n_grants; i++)
            if (pj->grants[i].branch == x)
                pj->grants[i].branch = NULL;
    }
}

/* x's subtree settled and x left the graph: nothing walks up from it
 * again. */
static void drop_parent(vsched *s, vsched__node *x)
{
    vsched__node *par = x->k.job->parent;
    if (par == NULL || x->in_structure || x->k.job->live > 0)
        return;
    x->k.job->parent = NULL;
    vsched__node_unref(s, par);
}

void vsched__job_forget(vsched *s, vsched__node *n)
{
    vsched__job *j = vsched__node_job(n);
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
    vsched__job *j = vsched__node_job(n);
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
    for (vsched__node *x = n; x != NULL; x = x->k.job->parent)
        if (--x->k.job->live == 0) {
            released |= x->k.job->n_grants > 0 || x->k.job->parent != NULL;
            subtree_settled(x);
            if (!x->in_structure && x->k.job->parent != NULL &&
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
    n->k.job->keyed = 0;
}

void vsched__job_ended(vsched *s, vsched__node *n)
{
    vsched__job *j = vsched__node_job(n);
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
    n->k.job->task_out = 0;
    if (vsched__node_terminal(n))
        settle(s, n);
}
