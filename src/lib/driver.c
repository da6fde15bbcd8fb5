/*
 * driver -- the scheduler's driver thread: admission, completion
 * integration, failure propagation and dispatch.
 *
 * The driver is the inbox's only consumer. Each pass pops a run of inbox
 * items, then under ONE hold of the scheduler lock processes them all and
 * dispatches ready work; the handles that finished are signalled after the
 * lock is released.
 *
 * File stages on the graph:
 *
 *     Source(F) ----> Analysis(F) ----> Artifact(F, profile)
 *                        ^
 *     Analysis(B) -------+   for every blocker B of F (known once Source(F)
 *                            is integrated)
 *
 * So Artifact(F) waits for Analysis of every blocker, transitively, and
 * Analysis runs only when something demands it: a direct request, or an
 * Analysis that waits for it as a blocker. Source(F) is DONE only after its
 * dependencies are integrated (a Source-only request is answered then).
 *
 * Cycles among blockers cannot complete; they are found when the scheduler
 * is quiescent (no task in flight, nothing ready, yet nodes unfinished) and
 * failed with VSCHED_ECYCLE naming the chain.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define DRIVER_BATCH 64

/* Handles finished during one pass, signalled after unlock. */
typedef struct finished_list {
    vsched_handle **v;
    size_t n, cap;
} finished_list;

static void finished_push(finished_list *l, vsched_handle *h)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        vsched_handle **v = realloc(l->v, cap * sizeof *v);
        if (v == NULL)
            abort(); /* cannot lose a waiter; nothing sane to do */
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = h;
}

static char *xstrdup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

static char *depfail_message(const char *dep, const char *why)
{
    char *m = NULL;
    if (asprintf(&m, "dependency '%s' failed: %s", dep, why) < 0)
        return NULL;
    return m;
}

static vsched_stage stage_of(const vsched__node *n)
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

/* ---- handles ------------------------------------------------------------ */

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

/* Fill h's result from its target node (terminal) and queue the signal. */
static void handle_finish(vsched *s, vsched_handle *h, vsched__node *n,
                          finished_list *fin)
{
    vsched_result *r = &h->result;
    vsched__file *f = n->file;
    r->status = n->status;
    r->name = h->canonical;
    r->stage = h->req.stage;
    r->profile = h->req.profile;
    r->failed_stage = n->status != 0 ? (vsched_stage)n->fail_stage
                                     : stage_of(n);
    r->incarnation = n->incarnation;
    r->generation = n->generation;
    r->started_ns = n->started_ns;
    r->finished_ns = n->finished_ns;
    if (f != NULL && f->integrated) {
        h->r_deps = names_copy(f->deps, f->n_deps);
        h->r_blockers = names_copy(f->blockers, f->n_blockers);
        r->deps = (const char *const *)h->r_deps;
        r->n_deps = h->r_deps != NULL ? f->n_deps : 0;
        r->blockers = (const char *const *)h->r_blockers;
        r->n_blockers = h->r_blockers != NULL ? f->n_blockers : 0;
    }
    if (f != NULL) {
        r->content_hash = f->content_hash;
        if (f->analysis != NULL && f->analysis->state == VSCHED__DONE)
            r->analysis_hash = f->analysis_hash;
        if (h->req.stage == VSCHED_STAGE_ARTIFACT && n->status == 0) {
            vsched__artifact_slot *a = vsched__file_artifact(f, n->profile);
            if (a != NULL && a->path != NULL)
                r->artifact_path = h->r_artifact_path = strdup(a->path);
        }
    }
    r->message = h->r_message = xstrdup_or_null(n->message);
    r->failed_dep = h->r_failed_dep = xstrdup_or_null(n->failed_dep);
    h->r_diags = vsched__diags_copy(n->diags, n->n_diags);
    h->r_n_diags = h->r_diags != NULL ? n->n_diags : 0;
    r->diags = h->r_diags;
    r->n_diags = h->r_n_diags;
    finished_push(fin, h);
    (void)s;
}

static void waiter_add(vsched *s, vsched__node *n, vsched_handle *h)
{
    if (n->n_waiters == n->cap_waiters) {
        size_t cap = n->cap_waiters ? n->cap_waiters * 2 : 2;
        vsched_handle **v = realloc(n->waiters, cap * sizeof *v);
        if (v == NULL)
            abort();
        n->waiters = v;
        n->cap_waiters = cap;
    }
    if (n->n_waiters > 0)
        atomic_fetch_add(&s->dedup_joins, 1);
    n->waiters[n->n_waiters++] = h;
    s->waiters++;
}

/* ---- events ------------------------------------------------------------- */

/* Queue an event for n's terminal transition (under the lock). */
static void event_push(vsched *s, const vsched__node *n)
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
        stage_of(n), n->file->name, n->profile, n->status, n->started_ns,
        n->finished_ns};
}

/* Set while this thread runs observer callbacks. */
static _Thread_local int in_observer;

/* Deliver queued events, outside the scheduler lock, until none is left.
 * Names point into file nodes, which live until vsched_destroy. An
 * observer that calls vsched_cancel re-enters here: the nested call
 * returns at once and the outer loop delivers what the cancel queued. */
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
        if (n == 0) {
            free(ev);
            break;
        }
        for (size_t i = 0; i < n; i++)
            s->opts.observer(s->opts.observer_user, &ev[i]);
        free(ev);
    }
    in_observer = 0;
    pthread_mutex_unlock(&s->observer_lock);
}

/* ---- terminal transitions ----------------------------------------------- */

static void release_downstream(vsched *s, vsched__node *n, finished_list *fin);

/* Finish n with a failure and fail everything waiting on it. Downstream of
 * the same file inherits the status; another file's gets VSCHED_EDEPFAIL
 * naming this one. Takes ownership of message and diags. */
static void fail_node(vsched *s, vsched__node *n, int status, char *message,
                      char *failed_dep, vsched_diag *diags, size_t n_diags,
                      int origin, finished_list *fin)
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
    n->fail_stage = origin >= 0 ? origin : (int)stage_of(n);
    vsched__node_finish(&s->graph, n,
                        status == VSCHED_ECANCELLED ? VSCHED__CANCELLED
                                                    : VSCHED__FAILED,
                        status, message, failed_dep, vsched__now_ns());
    event_push(s, n);
    release_downstream(s, n, fin);
}

static void fail_downstream_of(vsched *s, vsched__node *up, vsched__node *d,
                               finished_list *fin)
{
    if (d->file == up->file) {
        /* Same file: the failure is the file's own; keep where it arose. */
        fail_node(s, d, up->status, xstrdup_or_null(up->message),
                  xstrdup_or_null(up->failed_dep),
                  vsched__diags_copy(up->diags, up->n_diags), up->n_diags,
                  up->fail_stage, fin);
        return;
    }
    const char *dep = up->file != NULL ? up->file->name : "?";
    char *msg = depfail_message(dep, up->message != NULL
                                         ? up->message
                                         : vsched_strerror(up->status));
    int st = up->status == VSCHED_ECYCLE ? VSCHED_ECYCLE : VSCHED_EDEPFAIL;
    fail_node(s, d, st, msg, strdup(dep), NULL, 0, -1, fin);
}

/* n reached a terminal state: answer its waiters, then move or fail its
 * downstream. */
static void release_downstream(vsched *s, vsched__node *n, finished_list *fin)
{
    for (size_t i = 0; i < n->n_waiters; i++)
        handle_finish(s, n->waiters[i], n, fin);
    s->waiters -= n->n_waiters;
    n->n_waiters = 0;

    for (size_t i = 0; i < n->downstream.n; i++) {
        vsched__node *d = n->downstream.v[i];
        if (vsched__node_terminal(d))
            continue;
        if (n->state == VSCHED__DONE) {
            d->deps_remaining--;
            vsched__graph_make_ready_if_free(&s->graph, d);
        } else {
            fail_downstream_of(s, n, d, fin);
        }
    }
}

/* Make `down` wait for `up`; an already-failed `up` fails `down` now. */
static void link_nodes(vsched *s, vsched__node *up, vsched__node *down,
                       finished_list *fin)
{
    if (up->state == VSCHED__FAILED || up->state == VSCHED__CANCELLED) {
        fail_downstream_of(s, up, down, fin);
        return;
    }
    if (vsched__graph_add_edge(&s->graph, up, down) != VSCHED_OK)
        fail_node(s, down, VSCHED_ENOMEM, strdup("out of memory"), NULL,
                  NULL, 0, -1, fin);
}

/* ---- stage admission ---------------------------------------------------- */

static vsched__node *new_stage_node(vsched *s, vsched__file *f,
                                    vsched__node_kind kind, int prio)
{
    vsched__node *n = vsched__node_new(&s->graph, kind, prio);
    if (n == NULL)
        abort(); /* graph bookkeeping cannot be half-done */
    n->file = f;
    n->incarnation = f->incarnation;
    n->generation = f->generation;
    return n;
}

static vsched__node *ensure_source(vsched *s, vsched__file *f, int prio)
{
    if (f->source == NULL) {
        f->source = new_stage_node(s, f, VSCHED__K_SOURCE, prio);
        vsched__graph_make_ready_if_free(&s->graph, f->source);
    } else {
        vsched__graph_raise_priority(&s->graph, f->source, prio);
    }
    return f->source;
}

static vsched__node *ensure_analysis(vsched *s, vsched__file *f, int prio,
                                     finished_list *fin);

/* Wire Analysis(F) to the Analysis of each blocker (F integrated). */
static void gate_on_blockers(vsched *s, vsched__file *f, finished_list *fin)
{
    vsched__node *a = f->analysis;
    for (size_t i = 0; i < f->n_blockers && !vsched__node_terminal(a); i++) {
        vsched__node *b = ensure_analysis(s, f->blockers[i], a->priority, fin);
        link_nodes(s, b, a, fin);
    }
}

static vsched__node *ensure_analysis(vsched *s, vsched__file *f, int prio,
                                     finished_list *fin)
{
    if (f->analysis != NULL) {
        vsched__graph_raise_priority(&s->graph, f->analysis, prio);
        return f->analysis;
    }
    vsched__node *src = ensure_source(s, f, prio);
    vsched__node *a = new_stage_node(s, f, VSCHED__K_ANALYSIS, prio);
    f->analysis = a; /* before recursing: blocker cycles end here */
    link_nodes(s, src, a, fin);
    if (f->integrated)
        gate_on_blockers(s, f, fin);
    vsched__graph_make_ready_if_free(&s->graph, a);
    return a;
}

static vsched__node *ensure_artifact(vsched *s, vsched__file *f,
                                     const char *profile, int prio,
                                     finished_list *fin)
{
    vsched__artifact_slot *slot = vsched__file_artifact(f, profile);
    if (slot == NULL)
        abort();
    if (slot->node != NULL) {
        vsched__graph_raise_priority(&s->graph, slot->node, prio);
        return slot->node;
    }
    vsched__node *art = new_stage_node(s, f, VSCHED__K_ARTIFACT, prio);
    art->profile = strdup(profile);
    slot->node = art;
    vsched__node *a = ensure_analysis(s, f, prio, fin);
    link_nodes(s, a, art, fin);
    vsched__graph_make_ready_if_free(&s->graph, art);
    return art;
}

static void admit(vsched *s, vsched_handle *h, finished_list *fin)
{
    if (h->admit_status != VSCHED_OK) {
        /* Resolution failed before admission: answer without a node. */
        h->result.status = h->admit_status;
        h->result.name = h->canonical;
        h->result.stage = h->req.stage;
        h->result.profile = h->req.profile;
        h->result.message = h->r_message;
        finished_push(fin, h);
        return;
    }
    int created;
    vsched__file *f = vsched__files_ensure(&s->files, h->canonical, &created);
    if (f == NULL)
        abort();
    int prio = h->req.priority;
    vsched__node *target = ensure_source(s, f, prio);
    if (h->req.stage >= VSCHED_STAGE_ANALYSIS)
        target = ensure_analysis(s, f, prio, fin);
    if (h->req.stage == VSCHED_STAGE_ARTIFACT)
        target = ensure_artifact(s, f, h->req.profile, prio, fin);
    if (vsched__node_terminal(target))
        handle_finish(s, h, target, fin);
    else
        waiter_add(s, target, h);
}

static void admit_batch(vsched *s, vsched_batch *b, finished_list *fin)
{
    for (size_t i = 0; i < b->n; i++)
        admit(s, b->handles[i], fin);
}

/* ---- completion integration --------------------------------------------- */

/* Record Source facts under the lock; the completion is current. */
static int integrate_source(vsched *s, vsched__task *t, finished_list *fin)
{
    vsched__file *f = t->node->file;
    int prio = t->node->priority;
    vsched__file **deps = calloc(t->deps.n_deps + 1, sizeof *deps);
    vsched__file **blk = calloc(t->deps.n_blockers + 1, sizeof *blk);
    if (deps == NULL || blk == NULL) {
        free(deps);
        free(blk);
        return VSCHED_ENOMEM;
    }
    size_t nd = 0, nb = 0;
    for (size_t i = 0; i < t->deps.n_deps; i++) {
        const char *name = t->deps.deps[i];
        if (name == NULL || name[0] == '\0' || strcmp(name, f->name) == 0)
            continue; /* empty or self dependency: nothing to wait for */
        int created;
        vsched__file *d = vsched__files_ensure(&s->files, name, &created);
        if (d == NULL)
            abort();
        ensure_source(s, d, prio); /* auto-ingest */
        deps[nd++] = d;
    }
    for (size_t i = 0; i < t->deps.n_blockers; i++) {
        const char *name = t->deps.blockers[i];
        if (name == NULL || name[0] == '\0' || strcmp(name, f->name) == 0)
            continue;
        int created;
        vsched__file *d = vsched__files_ensure(&s->files, name, &created);
        if (d == NULL)
            abort();
        ensure_source(s, d, prio);
        blk[nb++] = d;
    }
    free(f->deps);
    free(f->blockers);
    f->deps = deps;
    f->n_deps = nd;
    f->blockers = blk;
    f->n_blockers = nb;
    f->snapshot = t->new_snapshot;
    t->new_snapshot = NULL;
    f->content_hash = t->out_hash;
    memcpy(f->kind, t->file_kind, sizeof f->kind);
    f->integrated = 1;
    if (f->analysis != NULL)
        gate_on_blockers(s, f, fin);
    return VSCHED_OK;
}

static int completion_is_current(const vsched__task *t)
{
    const vsched__node *n = t->node;
    const vsched__file *f = n->file;
    return n->state == VSCHED__RUNNING && f != NULL &&
           f->incarnation == t->incarnation &&
           f->generation == t->generation;
}

static void complete(vsched *s, vsched__task *t, finished_list *fin)
{
    vsched__node *n = t->node;
    s->inflight--;
    if (!completion_is_current(t)) {
        /* Publishes and consumes nothing. */
        atomic_fetch_add(&s->stale_refusals, 1);
        vsched__task_free(t);
        return;
    }
    int stage = stage_of(n);
    if (t->status == VSCHED_OK && n->kind == VSCHED__K_SOURCE &&
        t->phase == 0) {
        /* Loaded: the same task goes on to parse on the CPU pool. */
        t->phase = 1;
        n->phase = 1;
        n->pending_task = t;
        vsched__graph_push_ready(&s->graph, n);
        return;
    }
    int st = t->status;
    if (st == VSCHED_OK && n->kind == VSCHED__K_SOURCE)
        st = integrate_source(s, t, fin);
    atomic_fetch_add(&s->stage_runs[stage], 1);
    vsched__diags_free(n->diags, n->n_diags);
    n->diags = t->diags;
    n->n_diags = t->n_diags;
    t->diags = NULL;
    t->n_diags = 0;
    if (st != VSCHED_OK) {
        atomic_fetch_add(&s->stage_failures[stage], 1);
        char *msg = t->message != NULL ? t->message
                                       : strdup(vsched_strerror(st));
        t->message = NULL;
        vsched_diag *d = n->diags;
        size_t nd = n->n_diags;
        n->diags = NULL;
        n->n_diags = 0;
        fail_node(s, n, st, msg, NULL, d, nd, -1, fin);
    } else {
        vsched__file *f = n->file;
        if (n->kind == VSCHED__K_ANALYSIS)
            f->analysis_hash = t->out_hash;
        if (n->kind == VSCHED__K_ARTIFACT) {
            vsched__artifact_slot *a = vsched__file_artifact(f, n->profile);
            if (a != NULL) {
                free(a->path);
                a->path = t->artifact_path;
                t->artifact_path = NULL;
                a->artifact_hash = t->out_hash;
            }
        }
        vsched__node_finish(&s->graph, n, VSCHED__DONE, 0, NULL, NULL,
                            vsched__now_ns());
        event_push(s, n);
        release_downstream(s, n, fin);
    }
    vsched__task_free(t);
}

/* ---- dispatch ----------------------------------------------------------- */

static vsched__task *task_for(vsched *s, vsched__node *n)
{
    vsched__task *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    vsched__file *f = n->file;
    t->s = s;
    t->node = n;
    t->kind = n->kind;
    t->incarnation = n->incarnation;
    t->generation = n->generation;
    t->name = strdup(f->name);
    t->profile = xstrdup_or_null(n->profile);
    memcpy(t->file_kind, f->kind, sizeof t->file_kind);
    t->snapshot = f->snapshot;
    t->content_hash = f->content_hash;
    t->analysis_hash = f->analysis_hash;
    if (n->kind == VSCHED__K_ANALYSIS && f->n_blockers > 0) {
        t->blocker_hashes = calloc(f->n_blockers, sizeof *t->blocker_hashes);
        if (t->blocker_hashes == NULL) {
            vsched__task_free(t);
            return NULL;
        }
        for (size_t i = 0; i < f->n_blockers; i++)
            t->blocker_hashes[i] = f->blockers[i]->analysis_hash;
        t->n_blockers = f->n_blockers;
    }
    if (t->name == NULL) {
        vsched__task_free(t);
        return NULL;
    }
    return t;
}

static void dispatch(vsched *s)
{
    vsched__node *deferred[64];
    size_t ndef = 0;
    int cpu_full = 0, io_full = 0;
    while (!(cpu_full && io_full) && ndef < 64) {
        vsched__node *n = vsched__graph_pop_ready(&s->graph);
        if (n == NULL)
            break;
        int io = n->kind == VSCHED__K_SOURCE && n->phase == 0;
        if ((io && io_full) || (!io && cpu_full)) {
            deferred[ndef++] = n;
            continue;
        }
        vsched__task *t = n->pending_task;
        if (t == NULL)
            t = task_for(s, n);
        if (t == NULL) {
            deferred[ndef++] = n; /* exhaustion: try again next pass */
            break;
        }
        n->pending_task = NULL;
        pthread_mutex_lock(&s->task_lock);
        s->live_tasks++;
        pthread_mutex_unlock(&s->task_lock);
        vsched_pool *pool = io ? s->opts.io_pool : s->opts.cpu_pool;
        if (vsched_pool_try_submit(pool, vsched__task_run, t) != VSCHED_OK) {
            /* FULL: keep the task and the node's place for the next pass,
             * which the next completion triggers. */
            vsched__task_retire(s);
            n->pending_task = t;
            deferred[ndef++] = n;
            if (io)
                io_full = 1;
            else
                cpu_full = 1;
            continue;
        }
        vsched__node_start(n, vsched__now_ns());
        s->inflight++;
    }
    for (size_t i = 0; i < ndef; i++)
        vsched__graph_push_ready(&s->graph, deferred[i]);
}

/* ---- cycle detection at quiescence -------------------------------------- */

/* DFS over PENDING upstream from n; true when `start` is reached, with
 * the chain left in path. seen[] stamps visited nodes by graph index. */
static int find_cycle(vsched__node *n, vsched__node *start,
                      vsched__nodevec *path, uint32_t *seen, uint32_t stamp,
                      uint64_t base)
{
    for (size_t i = 0; i < n->upstream.n; i++) {
        vsched__node *u = n->upstream.v[i];
        if (u->state != VSCHED__PENDING)
            continue;
        if (u == start)
            return 1;
        if (seen[u->id - base] == stamp)
            continue;
        seen[u->id - base] = stamp;
        if (vsched__nodevec_push(path, u) != VSCHED_OK)
            abort();
        if (find_cycle(u, start, path, seen, stamp, base))
            return 1;
        path->n--;
    }
    return 0;
}

static char *cycle_message(const vsched__nodevec *path)
{
    size_t len = sizeof "dependency cycle: ";
    for (size_t k = 0; k < path->n; k++)
        len += strlen(path->v[k]->file->name) + 4;
    len += strlen(path->v[0]->file->name);
    char *msg = malloc(len);
    if (msg == NULL)
        return NULL;
    strcpy(msg, "dependency cycle: ");
    /* path[0] waits for path[1] ... which waits for path[0]: print in
     * dependency order, closing the loop. */
    for (size_t k = 0; k < path->n; k++) {
        strcat(msg, path->v[k]->file->name);
        strcat(msg, " -> ");
    }
    strcat(msg, path->v[0]->file->name);
    return msg;
}

/* Called when nothing is in flight and nothing is ready, yet nodes are
 * unfinished: every such node waits on a cycle. Fail each cycle found. */
static void break_cycles(vsched *s, finished_list *fin)
{
    vsched__graph *g = &s->graph;
    if (g->all.n == 0)
        return;
    uint64_t base = g->all.v[0]->id;
    uint32_t *seen = calloc((size_t)(g->next_id - base), sizeof *seen);
    if (seen == NULL)
        abort();
    uint32_t stamp = 0;
    for (size_t i = 0; i < g->all.n; i++) {
        vsched__node *n = g->all.v[i];
        if (n->state != VSCHED__PENDING)
            continue;
        vsched__nodevec path = {0};
        if (vsched__nodevec_push(&path, n) != VSCHED_OK)
            abort();
        if (find_cycle(n, n, &path, seen, ++stamp, base)) {
            char *msg = cycle_message(&path);
            fail_node(s, n, VSCHED_ECYCLE, msg,
                      strdup(path.v[path.n > 1 ? 1 : 0]->file->name), NULL,
                      0, -1, fin);
        }
        vsched__nodevec_free(&path);
    }
    free(seen);
}

/* ---- the loop ----------------------------------------------------------- */

void *vsched__driver_main(void *arg)
{
    vsched *s = arg;
    vsched__item items[DRIVER_BATCH];
    finished_list fin = {0};
    for (;;) {
        size_t n = vsched__inbox_pop_wait(&s->inbox, items, DRIVER_BATCH);
        if (n == 0)
            break; /* teardown */
        pthread_mutex_lock(&s->lock);
        for (size_t i = 0; i < n; i++) {
            switch (items[i].kind) {
            case VSCHED__ITEM_REQUEST:
                admit(s, items[i].ptr, &fin);
                break;
            case VSCHED__ITEM_BATCH:
                admit_batch(s, items[i].ptr, &fin);
                break;
            case VSCHED__ITEM_COMPLETE:
                complete(s, items[i].ptr, &fin);
                break;
            }
        }
        dispatch(s);
        if (s->inflight == 0 && s->graph.heap_n == 0 &&
            s->graph.unfinished > 0) {
            break_cycles(s, &fin);
            dispatch(s);
        }
        pthread_mutex_unlock(&s->lock);
        /* Events first: an observer hears of a stage before its waiter
         * wakes, so progress output never trails the caller's summary. */
        vsched__fire_events(s);
        for (size_t i = 0; i < fin.n; i++)
            vsched__handle_signal(fin.v[i]);
        fin.n = 0;
    }
    free(fin.v);
    return NULL;
}

/* After the driver has exited: answer every parked waiter with
 * VSCHED_ESHUTDOWN and every request still in the inbox likewise. */
void vsched__driver_teardown(vsched *s)
{
    finished_list fin = {0};
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->graph.all.n; i++) {
        vsched__node *n = s->graph.all.v[i];
        atomic_store((atomic_int *)&n->cancel, 1);
        if (!vsched__node_terminal(n))
            fail_node(s, n, VSCHED_ESHUTDOWN,
                      strdup("scheduler shut down"), NULL, NULL, 0, -1, &fin);
    }
    pthread_mutex_unlock(&s->lock);
    for (size_t i = 0; i < fin.n; i++)
        vsched__handle_signal(fin.v[i]);
    free(fin.v);
}

void vsched_cancel(vsched *s, const char *reason)
{
    if (s == NULL)
        return;
    finished_list fin = {0};
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->graph.all.n; i++) {
        vsched__node *n = s->graph.all.v[i];
        if (vsched__node_terminal(n))
            continue;
        atomic_store((atomic_int *)&n->cancel, 1);
        if (n->state != VSCHED__RUNNING)
            fail_node(s, n, VSCHED_ECANCELLED,
                      strdup(reason != NULL ? reason : "cancelled"), NULL,
                      NULL, 0, -1, &fin);
    }
    pthread_mutex_unlock(&s->lock);
    vsched__fire_events(s);
    for (size_t i = 0; i < fin.n; i++)
        vsched__handle_signal(fin.v[i]);
    free(fin.v);
}
