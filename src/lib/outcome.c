/*
 * outcome -- terminal transitions of graph nodes and who hears of them.
 *
 * When a node ends, its waiters are answered (results filled into their
 * handles), an event is queued for the observer, and what waits on it
 * either moves (done: one fewer upstream) or fails with it: the later
 * stages of the same file inherit the failure; another file's stages get
 * VSCHED_EDEPFAIL naming this file (ECYCLE, ECANCELLED and ESHUTDOWN keep
 * their kind); a job applies its edge's gate (gate.c).
 *
 * Failure travels by a worklist, never by recursion along a chain: a
 * failure reached while one is being propagated on this thread joins the
 * running worklist. A propagated message names the dependency and quotes
 * the root cause, without nesting one message in the next.
 *
 * Everything here runs with the scheduler lock held and leaves the
 * after-unlock work (signals, events, join callbacks) in a vsched__pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "unit.h"

static char *dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

vsched_stage vsched__stage_of(const vsched__node *n)
{
    switch (n->kind) {
    case VSCHED__K_SOURCE: return VSCHED_STAGE_SOURCE;
    case VSCHED__K_ANALYSIS: return VSCHED_STAGE_ANALYSIS;
    default: return VSCHED_STAGE_ARTIFACT;
    }
}

void vsched__outcome_free(vsched__outcome *o)
{
    if (o == NULL)
        return;
    free(o->message);
    free(o->failed_dep);
    vsched__diags_free(o->diags, o->n_diags);
    free(o);
}

/* ---- answering handles ----------------------------------------------------- */

/* Answering takes the pending request out of the handle (internal.h),
 * and the handle no longer holds its file object: a result refers to
 * nothing of the scheduler's, so it may outlive it. */
static void unbind(vsched *s, const vsched__pending *pd)
{
    if (pd->file != NULL)
        vsched__file_unref(s, pd->file);
    vsched__req_extra_free(pd->extra);
}

void vsched__handle_finish(vsched *s, vsched_handle *h, vsched__node *n,
                           vsched__pass *p)
{
    vsched__pending pd = vsched__handle_take(h);
    vsched_result *r = &h->result;
    vsched__file *f = n->file;
    r->status = n->status;
    r->failed_stage =
        n->status != 0 ? (vsched_stage)n->fail_stage : vsched__stage_of(n);
    r->incarnation = f->incarnation;
    r->generation = n->generation;
    r->started_ns = n->started_ns;
    r->finished_ns = vsched__finished_ns(n);
    if (f->facts != NULL && f->generation == n->generation) {
        vsched__facts *fa = vsched__facts_ref(f->facts); /* the handle's */
        r->deps = vsched__facts_dep_names(fa);
        r->n_deps = fa->n_deps;
        r->blockers = vsched__facts_blocker_names(fa);
        r->n_blockers = fa->n_blockers;
        r->content_hash = fa->content_hash;
        if (f->analysis != NULL && f->analysis->state == VSCHED__DONE) {
            r->analysis_hash = f->analysis_hash;
            r->unit_hash = f->unit_hash;
        }
        if (n->kind == VSCHED__K_ARTIFACT && n->status == 0) {
            vsched__slot *sl =
                vsched__file_find_slot(f, vsched__node_profile(n));
            if (sl != NULL && sl->path != NULL)
                r->artifact_path = strdup(sl->path);
        }
    }
    if (n->why != NULL) {
        r->message = dup_or_null(n->why->message);
        r->failed_dep = dup_or_null(n->why->failed_dep);
        r->diags = vsched__diags_copy(n->why->diags, n->why->n_diags);
        r->n_diags = r->diags != NULL ? n->why->n_diags : 0;
    }
    unbind(s, &pd);
    vsched__pass_fin(p, h);
}

void vsched__handle_refuse(vsched *s, vsched_handle *h, int status,
                           const char *message, vsched__pass *p)
{
    vsched__pending pd = vsched__handle_take(h);
    vsched_result *r = &h->result;
    r->status = status;
    r->failed_stage = VSCHED_STAGE_SOURCE;
    if (r->message == NULL) /* kept: a reason found at submission */
        r->message = dup_or_null(message);
    if (pd.file != NULL) {
        r->incarnation = pd.file->incarnation;
        r->generation = pd.file->generation;
    }
    unbind(s, &pd);
    vsched__pass_fin(p, h);
}

void vsched__waiter_add(vsched *s, vsched__node *n, vsched_handle *h,
                        vsched__pass *p)
{
    if (n->waiters != NULL) {
        vsched__count(&s->dedup_joins);
        if (h->pend.extra != NULL && h->pend.extra->on_join != NULL &&
            !h->pend.join_fired) {
            h->pend.join_fired = 1; /* once, even across re-admissions */
            vsched__pass_join(p, h);
        }
    }
    h->pend.next = n->waiters;
    n->waiters = h;
    s->waiters++;
}

static void answer_waiters(vsched *s, vsched__node *n, vsched__pass *p)
{
    vsched_handle *h = n->waiters;
    n->waiters = NULL;
    while (h != NULL) {
        vsched_handle *next = h->pend.next;
        h->pend.next = NULL;
        s->waiters--;
        vsched__handle_finish(s, h, n, p);
        h = next;
    }
}

/* ---- the terminal transition ------------------------------------------------ */

/* n becomes terminal in `state`, ended at `now` (0: read the clock): its
 * explicit edges leave the count, and the word that held its upstream
 * counts holds its end from now on (graph.h). The one way into a terminal
 * state. */
static void become_terminal(vsched *s, vsched__node *n,
                            vsched__node_state state, uint64_t now)
{
    s->graph.edges -= vsched__xdeps(n);
    n->state = (uint8_t)state;
    n->end.finished_ns = now != 0 ? now : vsched__now_ns();
    if (n->started_ns == 0)
        n->started_ns = n->end.finished_ns;
}

/* State, times and bookkeeping of an ending node (no waiters, no
 * downstream). Takes ownership of why. A member of a unit leaves it; the
 * unit is returned (held) when the caller must act on the rest. */
static vsched__unit *finish(vsched *s, vsched__node *n,
                            vsched__node_state state, int status,
                            vsched__outcome *why, vsched__pass *p)
{
    if (n->task != NULL && n->state != VSCHED__RUNNING) {
        /* A prepared task that never ran (a loaded Source waiting to be
         * parsed). */
        vsched__task *t = n->task;
        int loaded = t->kind == VSCHED__K_SOURCE && t->phase == 1;
        n->task = NULL;
        vsched__task_free(s, t);
        if (loaded)
            vsched__loaded_taken(s);
    }
    vsched__unready(s, n);
    /* The hold's reading, unless the node started after it (another
     * runner took it meanwhile). */
    become_terminal(s, n, state,
                    p->clock != 0 && p->clock >= n->started_ns ? p->clock : 0);
    n->status = status;
    if (n->why != why)
        vsched__outcome_free(n->why);
    n->why = why;
    vsched__ups_clear(s, n);
    atomic_store_explicit(&n->cancel, state != VSCHED__DONE,
                          memory_order_release);
    if (vsched__node_job(n) != NULL)
        vsched__job_ended(s, n);
    if (s->node_waiters > 0)
        p->wake_dag = 1;
    vsched__pass_event(s, p, n);
    return vsched__node_unit(n) != NULL ? vsched__unit_leave(s, n) : NULL;
}

void vsched__node_drop(vsched *s, vsched__node *n)
{
    vsched__unready(s, n);
    become_terminal(s, n, VSCHED__CANCELLED, 0);
    n->status = VSCHED_ESUPERSEDED;
    vsched__ups_clear(s, n);
    atomic_store_explicit(&n->cancel, 1, memory_order_release);
    if (vsched__node_unit(n) != NULL) {
        /* The replacement joins again when the cycle is found again. */
        vsched__unit *u = vsched__unit_leave(s, n);
        if (u != NULL)
            vsched__unit_unhold(s, u);
    }
}

/* Implicit downstream of n in its own file: Analysis after Source, every
 * Artifact after Analysis. Calls fn(s, n, d, arg) on each that waits. */
static void each_implicit(vsched *s, vsched__node *n,
                          void (*fn)(vsched *, vsched__node *, vsched__node *,
                                     void *),
                          void *arg)
{
    vsched__file *f = n->file;
    if (f == NULL)
        return;
    if (n->kind == VSCHED__K_SOURCE && f->source == n) {
        vsched__node *a = f->analysis;
        if (a != NULL && a->state == VSCHED__PENDING && vsched__deps(a) > 0)
            fn(s, n, a, arg);
    } else if (n->kind == VSCHED__K_ANALYSIS && f->analysis == n) {
        for (uint32_t i = 0; i < f->n_slots; i++) {
            vsched__node *x = vsched__file_slots(f)[i].node;
            if (x != NULL && x->state == VSCHED__PENDING &&
                vsched__deps(x) > 0)
                fn(s, n, x, arg);
        }
    }
}

static void release_one(vsched *s, vsched__node *up, vsched__node *d,
                        void *arg)
{
    (void)up, (void)arg;
    vsched__deps_add(d, -1);
    vsched__make_ready_if_free(s, d);
}

/* n ended: every explicit edge from it is spent. A job applies the edge's
 * gate; another file's stage is released (n DONE) or inherits the failure
 * (on_fail). */
static void release_down(vsched *s, vsched__node *n,
                         void (*on_fail)(vsched *, vsched__node *,
                                         vsched__node *, void *),
                         void *arg, vsched__pass *p)
{
    vsched__nodevec down = n->down;
    s->graph.edges_cap -= down.cap;
    n->down = (vsched__nodevec){0};
    for (uint32_t i = 0; i < down.n; i++) {
        vsched__node *d = down.v[i];
        if (!vsched__node_terminal(d)) {
            vsched__xdeps_add(d, -1);
            s->graph.edges--;
            if (vsched__node_job(d) != NULL)
                vsched__job_upstream_ended(s, n, d, p); /* its gate */
            else if (on_fail != NULL)
                on_fail(s, n, d, arg);
            else
                release_one(s, n, d, NULL);
        }
        vsched__node_unref(s, d);
    }
    vsched__edgevec_free(&s->graph, &down);
}

void vsched__node_done(vsched *s, vsched__node *n, vsched__pass *p)
{
    vsched__unit *u = finish(s, n, VSCHED__DONE, 0, n->why, p);
    if (u != NULL)
        vsched__unit_unhold(s, u); /* members are DONE only all together */
    answer_waiters(s, n, p);
    each_implicit(s, n, release_one, NULL);
    release_down(s, n, NULL, NULL, p);
}

/* ---- failure, by worklist ----------------------------------------------------- */

typedef struct failure {
    vsched__node *node; /* a reference */
    int status;
    int origin;
    vsched__outcome *why;
} failure;

typedef struct worklist {
    failure *v;
    size_t n, cap;
} worklist;

/* The propagation running on this thread, if any. */
static _Thread_local worklist *active;

static void push(worklist *w, vsched__node *n, int status, int origin,
                 vsched__outcome *why)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        failure *v = realloc(w->v, cap * sizeof *v);
        if (v == NULL)
            abort(); /* a failure must reach every dependent */
        w->v = v;
        w->cap = cap;
    }
    vsched__node_ref(n);
    w->v[w->n++] = (failure){n, status, origin, why};
}

static vsched__outcome *outcome_new(char *message, char *failed_dep,
                                    vsched_diag *diags, size_t n_diags)
{
    vsched__outcome *o = malloc(sizeof *o);
    if (o == NULL) {
        free(message);
        free(failed_dep);
        vsched__diags_free(diags, n_diags);
        return NULL;
    }
    *o = (vsched__outcome){message, failed_dep, diags, n_diags};
    return o;
}

/* The root cause quoted by what depends on n. */
static const char *root_cause(const vsched__node *n)
{
    const char *m = n->why != NULL ? n->why->message : NULL;
    if (m == NULL)
        return vsched_strerror(n->status);
    /* A propagated reason already ends with the root cause. */
    const char *r = strstr(m, " failed: ");
    return strncmp(m, "dependency '", 12) == 0 && r != NULL ? r + 9 : m;
}

/* The failure d inherits from the failed up: a later stage of the same
 * file keeps the failure as its own; another file's stage (or a job's
 * file-stage upstream) names up. */
static void inherit(const vsched__node *up, const vsched__node *d, int *status,
                    int *origin, vsched__outcome **why)
{
    const vsched__outcome *o = up->why;
    if (up->file != NULL && up->file == d->file) {
        *status = up->status;
        *origin = up->fail_stage;
        *why = outcome_new(o != NULL ? dup_or_null(o->message) : NULL,
                           o != NULL ? dup_or_null(o->failed_dep) : NULL,
                           o != NULL ? vsched__diags_copy(o->diags, o->n_diags)
                                     : NULL,
                           o != NULL && o->diags != NULL ? o->n_diags : 0);
        return;
    }
    const char *dep = vsched__node_name(up);
    char *msg = NULL;
    if (asprintf(&msg, "dependency '%s' failed: %s", dep, root_cause(up)) < 0)
        msg = NULL;
    *status = up->status == VSCHED_ECYCLE       ? VSCHED_ECYCLE
              : up->status == VSCHED_ECANCELLED ? VSCHED_ECANCELLED
              : up->status == VSCHED_ESHUTDOWN  ? VSCHED_ESHUTDOWN
                                                : VSCHED_EDEPFAIL;
    *origin = -1;
    *why = outcome_new(msg, strdup(dep), NULL, 0);
}

static void push_inherited(vsched *s, vsched__node *up, vsched__node *d,
                           void *arg)
{
    (void)s;
    int status, origin;
    vsched__outcome *why;
    inherit(up, d, &status, &origin, &why);
    push(arg, d, status, origin, why);
}

static void fail_one(vsched *s, failure *f, worklist *w, vsched__pass *p)
{
    vsched__node *n = f->node;
    if (vsched__node_terminal(n)) {
        vsched__outcome_free(f->why);
        return;
    }
    int status = f->status;
    n->fail_stage =
        (uint8_t)(f->origin >= 0 ? f->origin : (int)vsched__stage_of(n));
    int cancelled = status == VSCHED_ECANCELLED ||
                    status == VSCHED_ESUPERSEDED || status == VSCHED_ESHUTDOWN;
    vsched__unit *u =
        finish(s, n, cancelled ? VSCHED__CANCELLED : VSCHED__FAILED, status,
               f->why, p);
    answer_waiters(s, n, p);
    each_implicit(s, n, push_inherited, w);
    release_down(s, n, push_inherited, w, p);
    if (u == NULL)
        return;
    if (status == VSCHED_ESUPERSEDED || status == VSCHED_ESHUTDOWN) {
        /* Its content changed or it went: the rest is built anew. */
        vsched__unit_dissolve(s, u);
    } else {
        /* A failure: every member depends on every other. */
        u->state = VSCHED__UNIT_OVER;
        for (uint32_t i = 0; i < u->members.n; i++)
            if (vsched__node_unit(u->members.v[i]) == u)
                push_inherited(s, n, u->members.v[i], w);
    }
    vsched__unit_unhold(s, u);
}

/* Fail n with (status, origin, why), and everything that waits on it. */
static void fail_with(vsched *s, vsched__node *n, int status, int origin,
                      vsched__outcome *why, vsched__pass *p)
{
    if (active != NULL) {
        push(active, n, status, origin, why); /* joins the running one */
        return;
    }
    worklist w = {0};
    active = &w;
    push(&w, n, status, origin, why);
    for (size_t i = 0; i < w.n; i++) {
        failure f = w.v[i];
        fail_one(s, &f, &w, p);
        vsched__node_unref(s, f.node);
    }
    active = NULL;
    free(w.v);
}

void vsched__node_fail(vsched *s, vsched__node *n, int status, char *message,
                       char *failed_dep, vsched_diag *diags, size_t n_diags,
                       int origin, vsched__pass *p)
{
    fail_with(s, n, status, origin,
              outcome_new(message, failed_dep, diags, n_diags), p);
}

/* ---- waiting on an upstream ------------------------------------------------------ */

int vsched__wait_on(vsched *s, vsched__node *up, vsched__node *n,
                    int explicit_edge, vsched__pass *p)
{
    if (vsched__node_terminal(n))
        return -1;
    if (up->state == VSCHED__DONE)
        return 0;
    if (vsched__node_failed(up)) {
        int status, origin;
        vsched__outcome *why;
        inherit(up, n, &status, &origin, &why);
        fail_with(s, n, status, origin, why, p);
        return -1;
    }
    if (explicit_edge) {
        if (vsched__edge_add(&s->graph, up, n) != VSCHED_OK)
            abort(); /* an edge is never half recorded */
        if (up->kind == VSCHED__K_ANALYSIS && n->kind == VSCHED__K_ANALYSIS)
            vsched__ups_add(s, up, n);
    } else {
        if (vsched__node_unit(n) != NULL)
            vsched__unit_busy(n);
        vsched__deps_add(n, 1);
    }
    vsched__raise(s, up, n->priority, n->weight_us);
    return 0;
}
