/*
 * supersede -- generations, the supersede sweep, removal and reset.
 *
 * A generation advance and its sweep are ONE critical section under the
 * scheduler lock. The sweep is backward-looking: it ends every unfinished
 * stage node of the older generation --
 *
 *   - the node finishes CANCELLED with VSCHED_ESUPERSEDED (or
 *     VSCHED_ESHUTDOWN when its object is retired), and a task still
 *     running for it is asked to stop; its late completion is refused by
 *     the generation check in complete.c and counted;
 *   - its waiters finish with that status, or, when they asked for
 *     VSCHED_REQ_FOLLOW_LATEST, are re-admitted at the new generation;
 *   - work of OTHER files that waited on it is detached and re-gated on
 *     the new generation's node, so it neither fails nor runs ungated.
 *
 * Writers of file->generation, enumerated: vsched__advance_generation (the
 * only increment) and vsched__test_set_generation (tests). Writers of
 * file->retired: retire_file and vsched__rehome, only. A re-home (the
 * loader classifies the file differently) replaces the node object with a
 * successor of a new incarnation at generation 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dag.h"
#include "internal.h"

/* Handles to re-admit and nodes to re-gate once the sweep is done. */
typedef struct sweep {
    vsched_handle **readmit;
    size_t n_readmit, cap_readmit;
    vsched__nodevec regate;   /* other files' work (and jobs) to re-gate */
    vsched__nodevec from;     /* regate[i] waited on from[i] (old node) */
} sweep;

static void readmit_push(sweep *w, vsched_handle *h)
{
    if (w->n_readmit == w->cap_readmit) {
        size_t cap = w->cap_readmit ? w->cap_readmit * 2 : 8;
        vsched_handle **v = realloc(w->readmit, cap * sizeof *v);
        if (v == NULL)
            abort(); /* a waiter must not be lost */
        w->readmit = v;
        w->cap_readmit = cap;
    }
    w->readmit[w->n_readmit++] = h;
}

static void vec_remove(vsched__nodevec *v, const vsched__node *n)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->v[i] == n) {
            v->v[i] = v->v[--v->n];
            return;
        }
}

/* Undo the edge up -> up->downstream.v[i] (not terminal). */
static void detach(vsched *s, vsched__node *up, size_t i)
{
    vsched__node *d = up->downstream.v[i];
    up->downstream.v[i] = up->downstream.v[--up->downstream.n];
    vec_remove(&d->upstream, up);
    if (up->state != VSCHED__DONE)
        d->deps_remaining--;
    s->graph.edges--;
}

/* End one unfinished node of the swept generation. */
static void end_node(vsched *s, vsched__node *n, int status, sweep *w,
                     vsched__pass *p)
{
    if (n == NULL || vsched__node_terminal(n))
        return;
    atomic_store((atomic_int *)&n->cancel, 1);
    /* Another file's work waiting on this node is re-gated, not failed. */
    for (size_t i = n->downstream.n; i-- > 0;) {
        vsched__node *d = n->downstream.v[i];
        if (!vsched__node_terminal(d) && d->file != n->file) {
            detach(s, n, i);
            if (vsched__nodevec_push(&w->regate, d) != VSCHED_OK ||
                vsched__nodevec_push(&w->from, n) != VSCHED_OK)
                abort();
        }
    }
    if (n->pending_task != NULL) {
        vsched__task_free(n->pending_task);
        n->pending_task = NULL;
    }
    char *msg = NULL;
    if (asprintf(&msg, "%s: %s (generation %llu)", n->file->name,
                 status == VSCHED_ESUPERSEDED ? "superseded by newer content"
                                              : "removed",
                 (unsigned long long)n->generation) < 0)
        msg = NULL;
    n->fail_stage = (int)vsched__stage_of(n);
    vsched__node_finish(&s->graph, n, VSCHED__CANCELLED, status, msg, NULL,
                        vsched__now_ns());
    vsched__event_push(s, n);
    for (size_t i = 0; i < n->n_waiters; i++) {
        vsched_handle *h = n->waiters[i];
        if (status == VSCHED_ESUPERSEDED &&
            (h->req.flags & VSCHED_REQ_FOLLOW_LATEST))
            readmit_push(w, h);
        else
            vsched__handle_finish(s, h, n, p);
    }
    s->waiters -= n->n_waiters;
    n->n_waiters = 0;
}

/* End every unfinished stage node of f's current generation and forget
 * them, so the next demand admits fresh nodes. */
static void sweep_file(vsched *s, vsched__file *f, int status, sweep *w,
                       vsched__pass *p)
{
    /* Downstream first, so a node is never failed by its own upstream. */
    for (size_t i = 0; i < f->n_artifacts; i++) {
        end_node(s, f->artifacts[i].node, status, w, p);
        f->artifacts[i].node = NULL;
    }
    end_node(s, f->analysis, status, w, p);
    end_node(s, f->source, status, w, p);
    f->analysis = NULL;
    f->source = NULL;
    vsched__file_clear_source(f);
}

/* Re-admit the followers (after re-gating, see callers). */
static void sweep_finish(vsched *s, sweep *w, vsched__pass *p)
{
    for (size_t i = 0; i < w->n_readmit; i++)
        vsched__admit(s, w->readmit[i], p);
    free(w->readmit);
    vsched__nodevec_free(&w->regate);
    vsched__nodevec_free(&w->from);
}

/* A job's record of the edge old -> d: take its gate and drop the entry
 * (the edge itself was detached). */
static vsched_gate take_job_gate(vsched__node *d, const vsched__node *old)
{
    vsched__job *j = d->job;
    for (size_t i = 0; i < j->n_deps; i++)
        if (j->deps[i].up == old) {
            vsched_gate g = j->deps[i].gate;
            j->deps[i] = j->deps[--j->n_deps];
            return g;
        }
    return VSCHED_GATE_AFTER_SUCCESS;
}

/* Re-gate each swept dependent d on the current node object of `name`, at
 * the same stage it waited on: Analysis for another file's Analysis,
 * Artifact(profile) for a job on that artifact -- with the job's gate. */
static void regate_on(vsched *s, const char *name, sweep *w, vsched__pass *p)
{
    for (size_t i = 0; i < w->regate.n; i++) {
        vsched__node *d = w->regate.v[i];
        vsched__node *old = w->from.v[i];
        if (vsched__node_terminal(d))
            continue;
        int created;
        vsched__file *f = vsched__files_ensure(&s->files, name, &created);
        if (f == NULL)
            abort();
        vsched__node *up =
            old->kind == VSCHED__K_ARTIFACT
                ? vsched__ensure_artifact(s, f, old->profile, d->priority, p)
            : old->kind == VSCHED__K_SOURCE
                ? vsched__ensure_source(s, f, d->priority)
                : vsched__ensure_analysis(s, f, d->priority, p);
        if (d->kind == VSCHED__K_JOB) {
            vsched__job_link(s, up, d, take_job_gate(d, old), p);
        } else {
            /* d's file lists the old object as a blocker: point it at the
             * object its gate now waits on, so its hash is the live one. */
            vsched__file *df = d->file;
            for (size_t k = 0; df != NULL && k < df->n_blockers; k++)
                if (df->blockers[k] == old->file)
                    df->blockers[k] = f;
            vsched__link(s, up, d, p);
        }
        vsched__graph_make_ready_if_free(&s->graph, d);
    }
    w->regate.n = 0;
    w->from.n = 0;
}

int vsched__advance_generation(vsched *s, vsched__file *f, vsched__pass *p)
{
    if (f->generation == UINT64_MAX)
        return VSCHED_EEXHAUSTED; /* never wrap to a published generation */
    sweep w = {0};
    vsched__root_begin(s->root);
    f->generation++;
    vsched__root_put(s->root, f->name, VSCHED_SOURCE_PENDING, f->incarnation,
                     f->generation, 0);
    vsched__root_end(s->root);
    sweep_file(s, f, VSCHED_ESUPERSEDED, &w, p);
    regate_on(s, f->name, &w, p);
    sweep_finish(s, &w, p);
    return VSCHED_OK;
}

/* ---- retirement and the graveyard ---------------------------------------- */

static void files_push(vsched__file ***v, size_t *n, size_t *cap,
                       vsched__file *f)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        vsched__file **nv = realloc(*v, c * sizeof *nv);
        if (nv == NULL)
            abort();
        *v = nv;
        *cap = c;
    }
    (*v)[(*n)++] = f;
}

/* Free retired objects once no task of an earlier epoch is out. */
static void grave_collect(vsched *s)
{
    if (s->grave_inflight != 0)
        return;
    for (size_t i = 0; i < s->grave_graph.all.n; i++) {
        vsched__node *n = s->grave_graph.all.v[i];
        vsched__task_free(n->pending_task);
        n->pending_task = NULL;
    }
    vsched__graph_fini(&s->grave_graph);
    vsched__graph_init(&s->grave_graph);
    for (size_t i = 0; i < s->n_grave_files; i++)
        vsched__file_free(s->grave_files[i]);
    s->n_grave_files = 0;
}

void vsched__grave_task_returned(vsched *s)
{
    s->grave_inflight--;
    grave_collect(s);
}

/* Retired objects stay alive while nodes of the current graph point at
 * them; a reset moves them to the graveyard with the graph. */
static void retire_file(vsched *s, vsched__file *f, sweep *w, vsched__pass *p)
{
    f->retired = 1;
    sweep_file(s, f, VSCHED_ESHUTDOWN, w, p);
    vsched__files_remove(&s->files, f);
    files_push(&s->retired_files, &s->n_retired, &s->cap_retired, f);
}

vsched__file *vsched__rehome(vsched *s, vsched__file *f, const char *kind,
                             vsched__pass *p)
{
    sweep w = {0};
    char *name = strdup(f->name);
    if (name == NULL)
        return NULL;
    /* The old object's waiters are superseded (followers re-admitted on
     * the successor), its work retired; the successor keeps the upserted
     * content, so a queued update still reaches it. */
    vsched__root_begin(s->root);
    f->retired = 1;
    sweep_file(s, f, VSCHED_ESUPERSEDED, &w, p);
    vsched__files_remove(&s->files, f);
    files_push(&s->retired_files, &s->n_retired, &s->cap_retired, f);
    int created;
    vsched__file *nf = vsched__files_ensure(&s->files, name, &created);
    if (nf == NULL)
        abort(); /* the table just lost an entry: cannot be full */
    nf->content = f->content;
    nf->content_len = f->content_len;
    nf->has_content = f->has_content;
    f->content = NULL;
    f->has_content = 0;
    snprintf(nf->kind, sizeof nf->kind, "%s", kind);
    vsched__root_put(s->root, name, VSCHED_SOURCE_PENDING, nf->incarnation,
                     nf->generation, 0);
    vsched__root_end(s->root);
    regate_on(s, name, &w, p);
    sweep_finish(s, &w, p);
    free(name);
    return nf;
}

/* ---- public ---------------------------------------------------------------- */

typedef int (*file_op)(vsched *s, vsched__file *f, vsched__pass *p);

static int with_file(vsched *s, const char *name, file_op op)
{
    if (s == NULL || name == NULL)
        return VSCHED_EINVAL;
    vsched__pass p = {0};
    pthread_mutex_lock(&s->lock);
    vsched__file *f = vsched__files_find(&s->files, name);
    int rc = f == NULL ? VSCHED_ENOENT : op(s, f, &p);
    vsched__dispatch(s);
    pthread_mutex_unlock(&s->lock);
    vsched__pass_run(s, &p);
    vsched__pass_free(&p);
    return rc;
}

static int op_invalidate(vsched *s, vsched__file *f, vsched__pass *p)
{
    return vsched__advance_generation(s, f, p);
}

static int op_close(vsched *s, vsched__file *f, vsched__pass *p)
{
    int rc = vsched__advance_generation(s, f, p);
    if (rc == VSCHED_OK) {
        free(f->content);
        f->content = NULL;
        f->content_len = 0;
        f->has_content = 0;
    }
    return rc;
}

static int op_remove(vsched *s, vsched__file *f, vsched__pass *p)
{
    sweep w = {0};
    char *name = strdup(f->name);
    if (name == NULL)
        return VSCHED_ENOMEM;
    vsched__root_begin(s->root);
    vsched__root_put(s->root, f->name, VSCHED_SOURCE_ABSENT, f->incarnation,
                     f->generation, 0);
    retire_file(s, f, &w, p);
    vsched__root_end(s->root);
    /* Dependents gate on a successor object, loaded afresh. */
    regate_on(s, name, &w, p);
    sweep_finish(s, &w, p);
    free(name);
    return VSCHED_OK;
}

int vsched_invalidate(vsched *s, const char *name)
{
    return with_file(s, name, op_invalidate);
}

int vsched_close_file(vsched *s, const char *name)
{
    return with_file(s, name, op_close);
}

int vsched_remove(vsched *s, const char *name)
{
    return with_file(s, name, op_remove);
}

void vsched_reset(vsched *s)
{
    if (s == NULL)
        return;
    vsched__pass p = {0};
    sweep w = {0};
    pthread_mutex_lock(&s->lock);
    vsched__root_begin(s->root); /* ONE epoch for every removed member */
    while (s->files.n > 0) {
        vsched__file *f = NULL;
        for (size_t i = 0; i < s->files.cap && f == NULL; i++)
            f = s->files.slots[i];
        vsched__root_put(s->root, f->name, VSCHED_SOURCE_ABSENT,
                         f->incarnation, f->generation, 0);
        retire_file(s, f, &w, &p);
    }
    vsched__root_end(s->root);
    /* Nothing survives a reset to be re-gated or re-admitted. */
    w.regate.n = 0;
    w.from.n = 0;
    for (size_t i = 0; i < w.n_readmit; i++)
        vsched__handle_refuse(w.readmit[i], VSCHED_ESHUTDOWN,
                              "scheduler reset", &p);
    w.n_readmit = 0;
    sweep_finish(s, &w, &p);
    /* The whole graph goes to the graveyard with the files. */
    for (size_t i = 0; i < s->graph.all.n; i++)
        if (vsched__nodevec_push(&s->grave_graph.all, s->graph.all.v[i]) !=
            VSCHED_OK)
            abort();
    s->graph.all.n = 0;
    for (size_t i = 0; i < s->n_retired; i++)
        files_push(&s->grave_files, &s->n_grave_files, &s->cap_grave_files,
                   s->retired_files[i]);
    s->n_retired = 0;
    vsched__graph_fini(&s->graph);
    vsched__graph_init(&s->graph);
    vsched__files_fini(&s->files);
    vsched__files_init(&s->files);
    s->grave_inflight += s->inflight;
    s->inflight = 0;
    s->epoch++;
    grave_collect(s);
    pthread_mutex_unlock(&s->lock);
    vsched__pass_run(s, &p);
    vsched__pass_free(&p);
}

int vsched__test_set_generation(vsched *s, const char *name,
                                uint64_t generation)
{
    pthread_mutex_lock(&s->lock);
    vsched__file *f = vsched__files_find(&s->files, name);
    if (f != NULL)
        f->generation = generation;
    pthread_mutex_unlock(&s->lock);
    return f != NULL ? VSCHED_OK : VSCHED_ENOENT;
}
