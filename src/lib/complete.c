/*
 * complete -- integrating a finished task into the graph, and finding
 * blocker cycles.
 *
 * A completion is CURRENT only if it comes back in the epoch it was
 * dispatched in (no reset since), for the same live node object
 * (incarnation) at the same generation, and its node is still RUNNING.
 * Anything else is stale: it publishes and consumes nothing -- no snapshot,
 * no deps, no hash, no artifact -- and is counted in
 * stale_completion_refusals. Its waiters were already answered by the
 * sweep that made it stale, so none is stranded.
 *
 * Everything the Source completion publishes and consumes (snapshot, deps
 * with auto-ingest, blocker gates, the source-root version, the node's
 * DONE) happens in one hold of the scheduler lock, gated on currency.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Resolve a list of dependency names into file nodes (auto-ingest). Empty
 * names and self references are dropped: there is nothing to wait for. */
static vsched__file **resolve_deps(vsched *s, vsched__file *f,
                                   char *const *names, size_t n, int prio,
                                   size_t *out_n)
{
    vsched__file **v = calloc(n + 1, sizeof *v);
    if (v == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = names[i];
        if (name == NULL || name[0] == '\0' || strcmp(name, f->name) == 0)
            continue;
        int created;
        vsched__file *d = vsched__files_ensure(&s->files, name, &created);
        if (d == NULL) {
            free(v);
            return NULL;
        }
        vsched__ensure_source(s, d, prio); /* auto-ingest */
        v[k++] = d;
    }
    *out_n = k;
    return v;
}

static int integrate_source(vsched *s, vsched__task *t, vsched__pass *p)
{
    vsched__file *f = t->node->file;
    int prio = t->node->priority;
    size_t nd = 0, nb = 0;
    vsched__snap *snap = vsched__snap_new(
        t->new_snapshot, &s->opts.executor,
        s->opts.executor.thread_safe ? NULL : &s->serial_executor);
    vsched__file **deps = resolve_deps(s, f, t->deps.deps, t->deps.n_deps,
                                       prio, &nd);
    vsched__file **blk = resolve_deps(s, f, t->deps.blockers,
                                      t->deps.n_blockers, prio, &nb);
    if (snap == NULL || deps == NULL || blk == NULL) {
        free(snap);
        free(deps);
        free(blk);
        return VSCHED_ENOMEM;
    }
    t->new_snapshot = NULL;
    vsched__file_clear_source(f);
    f->deps = deps;
    f->n_deps = nd;
    f->blockers = blk;
    f->n_blockers = nb;
    f->snap = snap;
    f->content_hash = t->out_hash;
    memcpy(f->kind, t->file_kind, sizeof f->kind);
    vsched__root_begin(s->root);
    f->integrated = 1;
    vsched__root_put(s->root, f->name, VSCHED_SOURCE_PRESENT, f->incarnation,
                     f->generation, f->content_hash);
    vsched__root_end(s->root);
    if (f->analysis != NULL)
        vsched__gate_on_blockers(s, f, p);
    return VSCHED_OK;
}

static int completion_is_current(const vsched *s, const vsched__task *t)
{
    const vsched__node *n = t->node;
    const vsched__file *f = n->file;
    return t->epoch == s->epoch && n->state == VSCHED__RUNNING &&
           f != NULL && !f->retired && f->incarnation == t->incarnation &&
           f->generation == t->generation;
}

void vsched__complete(vsched *s, vsched__task *t, vsched__pass *p)
{
    if (t->epoch != s->epoch) {
        /* Dispatched before a reset: its node is in the graveyard. */
        atomic_fetch_add(&s->stale_refusals, 1);
        vsched__task_free(t);
        vsched__grave_task_returned(s);
        return;
    }
    vsched__node *n = t->node;
    s->inflight--;
    if (n->kind == VSCHED__K_JOB) {
        vsched__job_complete(s, t, p); /* no file identity to check */
        return;
    }
    if (!completion_is_current(s, t)) {
        atomic_fetch_add(&s->stale_refusals, 1);
        vsched__task_free(t);
        /* Refused, yet its node still runs (its object was retired under
         * it): end the node so nothing waits on a task that is gone. */
        if (n->state == VSCHED__RUNNING)
            vsched__fail_node(s, n, VSCHED_ESUPERSEDED,
                              strdup("superseded while running"), NULL, NULL,
                              0, -1, p);
        return;
    }
    int stage = (int)vsched__stage_of(n);
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
        st = integrate_source(s, t, p);
    atomic_fetch_add(&s->stage_runs[stage], 1);
    if (st != VSCHED_OK) {
        atomic_fetch_add(&s->stage_failures[stage], 1);
        char *msg = t->message != NULL ? t->message
                                       : strdup(vsched_strerror(st));
        t->message = NULL;
        vsched__fail_node(s, n, st, msg, NULL, t->diags, t->n_diags, -1, p);
        t->diags = NULL;
        t->n_diags = 0;
        vsched__task_free(t);
        return;
    }
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
    vsched__diags_free(n->diags, n->n_diags);
    n->diags = t->diags;
    n->n_diags = t->n_diags;
    t->diags = NULL;
    t->n_diags = 0;
    vsched__node_finish(&s->graph, n, VSCHED__DONE, 0, NULL, NULL,
                        vsched__now_ns());
    vsched__event_push(s, n);
    vsched__release_downstream(s, n, p);
    vsched__task_free(t);
}

/* ---- cycles ---------------------------------------------------------------- */

/* DFS over PENDING upstream from n; true when `start` is reached, with the
 * chain left in path. seen[] stamps visited nodes by id offset. */
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
        if (u->id < base || seen[u->id - base] == stamp)
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
    /* path[0] waits for path[1] ... which waits for path[0]. */
    for (size_t k = 0; k < path->n; k++) {
        strcat(msg, path->v[k]->file->name);
        strcat(msg, " -> ");
    }
    strcat(msg, path->v[0]->file->name);
    return msg;
}

void vsched__break_cycles(vsched *s, vsched__pass *p)
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
            vsched__fail_node(s, n, VSCHED_ECYCLE, msg,
                              strdup(path.v[path.n > 1 ? 1 : 0]->file->name),
                              NULL, 0, -1, p);
        }
        vsched__nodevec_free(&path);
    }
    free(seen);
}
