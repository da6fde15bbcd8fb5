/*
 * outcome -- terminal transitions of graph nodes and who hears of them.
 *
 * When a node ends, its waiters are answered (results copied into their
 * handles), an event is queued for the observer, and its downstream either
 * moves (done: one fewer upstream to wait for) or fails with it: downstream
 * of the same file inherits the failure; another file's downstream gets
 * VSCHED_EDEPFAIL naming this file.
 *
 * Every function here runs with the scheduler lock held and leaves the
 * after-unlock work (signals, events, join callbacks) in a vsched__pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static char *dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

vsched_stage vsched__stage_of(const vsched__node *n)
{
    switch (n->kind) {
    case VSCHED__K_SOURCE:
        return VSCHED_STAGE_SOURCE;
    case VSCHED__K_ANALYSIS:
        return VSCHED_STAGE_ANALYSIS;
    default:
        return VSCHED_STAGE_ARTIFACT;
    }
}

/* NULL-terminated copy of the names of files[0..n). */
static char **names_copy(vsched__file *const *files, size_t n)
{
    char **v = calloc(n + 1, sizeof *v);
    if (v == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if ((v[i] = strdup(files[i]->name)) == NULL) {
            for (size_t k = 0; k < i; k++)
                free(v[k]);
            free(v);
            return NULL;
        }
    return v;
}

void vsched__handle_finish(vsched *s, vsched_handle *h, vsched__node *n,
                           vsched__pass *p)
{
    vsched_result *r = &h->result;
    vsched__file *f = n->file;
    r->status = n->status;
    r->name = h->canonical;
    r->stage = h->req.stage;
    r->profile = h->req.profile;
    r->failed_stage = n->status != 0 ? (vsched_stage)n->fail_stage
                                     : vsched__stage_of(n);
    r->incarnation = n->incarnation;
    r->generation = n->generation;
    r->started_ns = n->started_ns;
    r->finished_ns = n->finished_ns;
    if (f != NULL && f->integrated && f->generation == n->generation) {
        h->r_deps = names_copy(f->deps, f->n_deps);
        h->r_blockers = names_copy(f->blockers, f->n_blockers);
        r->deps = (const char *const *)h->r_deps;
        r->n_deps = h->r_deps != NULL ? f->n_deps : 0;
        r->blockers = (const char *const *)h->r_blockers;
        r->n_blockers = h->r_blockers != NULL ? f->n_blockers : 0;
        r->content_hash = f->content_hash;
        if (f->analysis != NULL && f->analysis->state == VSCHED__DONE)
            r->analysis_hash = f->analysis_hash;
        if (h->req.stage == VSCHED_STAGE_ARTIFACT && n->status == 0) {
            vsched__artifact_slot *a = vsched__file_artifact(f, n->profile);
            if (a != NULL && a->path != NULL)
                r->artifact_path = h->r_artifact_path = strdup(a->path);
        }
    }
    r->message = h->r_message = dup_or_null(n->message);
    r->failed_dep = h->r_failed_dep = dup_or_null(n->failed_dep);
    h->r_diags = vsched__diags_copy(n->diags, n->n_diags);
    h->r_n_diags = h->r_diags != NULL ? n->n_diags : 0;
    r->diags = h->r_diags;
    r->n_diags = h->r_n_diags;
    vsched__pass_fin(p, h);
    (void)s;
}

void vsched__handle_refuse(vsched_handle *h, int status, const char *message,
                           vsched__pass *p)
{
    vsched_result *r = &h->result;
    r->status = status;
    r->name = h->canonical;
    r->stage = h->req.stage;
    r->profile = h->req.profile;
    r->failed_stage = VSCHED_STAGE_SOURCE;
    if (h->r_message == NULL)
        h->r_message = dup_or_null(message);
    r->message = h->r_message;
    vsched__pass_fin(p, h);
}

void vsched__waiter_add(vsched *s, vsched__node *n, vsched_handle *h,
                        vsched__pass *p)
{
    if (n->n_waiters == n->cap_waiters) {
        size_t cap = n->cap_waiters ? n->cap_waiters * 2 : 2;
        vsched_handle **v = realloc(n->waiters, cap * sizeof *v);
        if (v == NULL)
            abort();
        n->waiters = v;
        n->cap_waiters = cap;
    }
    if (n->n_waiters > 0) {
        atomic_fetch_add(&s->dedup_joins, 1);
        if (h->req.on_join != NULL)
            vsched__pass_join(p, h);
    }
    n->waiters[n->n_waiters++] = h;
    s->waiters++;
}

void vsched__event_push(vsched *s, const vsched__node *n)
{
    if (s->opts.observer == NULL || n->file == NULL)
        return;
    if (s->n_events == s->cap_events) {
        size_t cap = s->cap_events ? s->cap_events * 2 : 64;
        vsched_event *v = realloc(s->events, cap * sizeof *v);
        if (v == NULL)
            return; /* an observer misses one event; results are intact */
        s->events = v;
        s->cap_events = cap;
    }
    s->events[s->n_events++] = (vsched_event){
        vsched__stage_of(n), strdup(n->file->name), dup_or_null(n->profile),
        n->status, n->started_ns, n->finished_ns};
}

static char *depfail_message(const char *dep, const char *why)
{
    char *m = NULL;
    if (asprintf(&m, "dependency '%s' failed: %s", dep, why) < 0)
        return NULL;
    return m;
}

static void fail_downstream_of(vsched *s, vsched__node *up, vsched__node *d,
                               vsched__pass *p)
{
    if (d->file == up->file) {
        /* Same file: the failure is the file's own; keep where it arose. */
        vsched__fail_node(s, d, up->status, dup_or_null(up->message),
                          dup_or_null(up->failed_dep),
                          vsched__diags_copy(up->diags, up->n_diags),
                          up->n_diags, up->fail_stage, p);
        return;
    }
    const char *dep = up->file != NULL ? up->file->name : "?";
    char *msg = depfail_message(dep, up->message != NULL
                                         ? up->message
                                         : vsched_strerror(up->status));
    int st = up->status == VSCHED_ECYCLE       ? VSCHED_ECYCLE
             : up->status == VSCHED_ECANCELLED ? VSCHED_ECANCELLED
                                               : VSCHED_EDEPFAIL;
    vsched__fail_node(s, d, st, msg, strdup(dep), NULL, 0, -1, p);
}

void vsched__fail_node(vsched *s, vsched__node *n, int status, char *message,
                       char *failed_dep, vsched_diag *diags, size_t n_diags,
                       int origin, vsched__pass *p)
{
    if (vsched__node_terminal(n)) {
        free(message);
        free(failed_dep);
        vsched__diags_free(diags, n_diags);
        return;
    }
    vsched__diags_free(n->diags, n->n_diags);
    n->diags = diags;
    n->n_diags = n_diags;
    n->fail_stage = origin >= 0 ? origin : (int)vsched__stage_of(n);
    vsched__node_finish(&s->graph, n,
                        status == VSCHED_ECANCELLED ||
                                status == VSCHED_ESUPERSEDED
                            ? VSCHED__CANCELLED
                            : VSCHED__FAILED,
                        status, message, failed_dep, vsched__now_ns());
    if (n->job != NULL)
        vsched__job_ended(s, n); /* permit, grants, ledger */
    vsched__event_push(s, n);
    vsched__release_downstream(s, n, p);
}

void vsched__release_downstream(vsched *s, vsched__node *n, vsched__pass *p)
{
    for (size_t i = 0; i < n->n_waiters; i++)
        vsched__handle_finish(s, n->waiters[i], n, p);
    s->waiters -= n->n_waiters;
    n->n_waiters = 0;

    for (size_t i = 0; i < n->downstream.n; i++) {
        vsched__node *d = n->downstream.v[i];
        if (vsched__node_terminal(d))
            continue;
        if (d->job != NULL) {
            vsched__job_upstream_ended(s, n, d, p); /* the edge's gate */
        } else if (n->state == VSCHED__DONE) {
            d->deps_remaining--;
            vsched__graph_make_ready_if_free(&s->graph, d);
        } else {
            fail_downstream_of(s, n, d, p);
        }
    }
}

void vsched__link(vsched *s, vsched__node *up, vsched__node *down,
                  vsched__pass *p)
{
    if (up->state == VSCHED__FAILED || up->state == VSCHED__CANCELLED) {
        fail_downstream_of(s, up, down, p);
        return;
    }
    if (vsched__graph_add_edge(&s->graph, up, down) != VSCHED_OK)
        vsched__fail_node(s, down, VSCHED_ENOMEM, strdup("out of memory"),
                          NULL, NULL, 0, -1, p);
}
