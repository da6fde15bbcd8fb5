/*
 * complete -- integrating a finished task into the graph.
 *
 * A completion is CURRENT only if its node is still running as the
 * current stage node of a live file object (no sweep, removal or reset
 * ended it meanwhile) -- the identity gate -- AND the inputs the task read
 * are still the current ones -- the input gate: an Analysis read each
 * blocker's Analysis result, an Artifact its file's Analysis result, and
 * each of those must still be that DONE node. A completion failing the
 * identity gate publishes and consumes nothing and is counted in
 * stale_completion_refusals; its waiters were answered by whatever ended
 * the node. A completion failing the input gate is refused the same way,
 * but its node is current: it waits again for its current inputs and runs
 * once more, its waiters still waiting.
 *
 * Everything a Source completion publishes and consumes (facts, deps with
 * auto-ingest, blocker gates, the source-root version, the node's DONE)
 * happens in one hold of the scheduler lock, behind both gates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "unit.h"

/* n is still the current stage node of a live object. */
static int identity_current(const vsched__node *n)
{
    const vsched__file *f = n->file;
    if (f->retired || f->generation != n->generation)
        return 0;
    switch (n->kind) {
    case VSCHED__K_SOURCE: return f->source == n;
    case VSCHED__K_ANALYSIS: return f->analysis == n;
    default: {
        vsched__slot *sl =
            vsched__file_find_slot((vsched__file *)f, vsched__node_profile(n));
        return sl != NULL && sl->node == n;
    }
    }
}

/* Put n (running or ready) back to waiting for its current inputs. */
static void regate(vsched *s, vsched__node *n, vsched__pass *p)
{
    vsched__unready(s, n);
    n->state = VSCHED__PENDING;
    if (vsched__node_unit(n) != NULL) {
        /* A unit's inputs changed under it: built anew (unit.h). */
        vsched__unit_dissolve(s, vsched__node_unit(n));
        return;
    }
    if (n->kind == VSCHED__K_ANALYSIS) {
        vsched__gate_on_blockers(s, n, p);
        if (!vsched__node_terminal(n))
            vsched__make_ready_if_free(s, n);
        return;
    }
    vsched__node *a = vsched__ensure_analysis(s, n->file, n->priority, p);
    if (vsched__wait_on(s, a, n, 0, p) == 0)
        vsched__make_ready_if_free(s, n);
}

int vsched__inputs_current(vsched *s, vsched__node *n, const vsched__task *t,
                           vsched__pass *p)
{
    vsched__file *f = n->file;
    int ok = 1;
    if (n->kind == VSCHED__K_ANALYSIS && f->facts != NULL) {
        /* A member runs in its unit's release, and reads the other
         * members as they are: not DONE, but the same nodes. */
        const vsched__unit *u = vsched__node_unit(n);
        if (u != NULL)
            ok = u->state == VSCHED__UNIT_RUN &&
                 (t == NULL || t->unit_seq == u->seq);
        else
            ok = t == NULL || t->unit_seq == 0;
        for (size_t i = 0; i < vsched__file_n_blockers(f) && ok; i++) {
            vsched__node *a =
                vsched__blocker_analysis(s, vsched__file_blocker(f, i));
            int same = t == NULL || (i < t->n_blockers && a != NULL &&
                                     a->id == t->consumed[i]);
            ok = a != NULL && same &&
                 (a->state == VSCHED__DONE ||
                  (u != NULL && vsched__node_unit(a) == u));
        }
    } else if (n->kind == VSCHED__K_ARTIFACT) {
        vsched__node *a = f->analysis;
        ok = a != NULL && a->state == VSCHED__DONE &&
             (t == NULL || a->id == t->consumed_analysis);
    }
    if (!ok)
        regate(s, n, p);
    return ok;
}

/* ---- Source ---------------------------------------------------------------- */

static int integrate_source(vsched *s, vsched__task *t, vsched__pass *p)
{
    vsched__node *n = t->node;
    vsched__file *f = n->file;
    /* The task's references on the record and on its snapshot (the same
     * object) pass to the file. */
    vsched__facts *fa = t->facts;
    t->facts = NULL;
    t->snap_new = NULL;
    /* Resolve the names into file objects (auto-ingest: each gets its
     * Source admitted); the stage built the record and the hashes. */
    for (size_t i = 0; i < fa->n_deps + fa->n_blockers; i++) {
        const char *name = vsched__facts_dep_names(fa)[i];
        int created;
        vsched__file *d = vsched__files_ensure_kept(&s->files, name, &created);
        if (d == NULL)
            abort(); /* integration is never half done */
        vsched__ensure_source(s, d, n->priority);
        vsched__facts_files(fa)[i] = d;
    }
    vsched__file_set_source(s, f, fa);
    if (t->file_kind[0] != '\0' && t->class_seq > f->class_seq) {
        /* The loader classified it as it loaded it. */
        f->kind = vsched__intern(s, t->file_kind);
        f->class_seq = t->class_seq;
    }
    vsched__root_put(s->root, f->name, VSCHED_SOURCE_PRESENT, f->incarnation,
                     f->generation, fa->content_hash);
    if (f->analysis != NULL && !vsched__node_terminal(f->analysis))
        vsched__gate_on_blockers(s, f->analysis, p);
    return VSCHED_OK;
}

/* ---- a finished task ------------------------------------------------------------ */

static void take_diags(vsched__node *n, vsched__task *t)
{
    if (t->n_diags == 0)
        return;
    vsched__outcome *o = calloc(1, sizeof *o);
    if (o == NULL)
        return; /* diagnostics of a success lost to exhaustion */
    o->diags = t->diags;
    o->n_diags = t->n_diags;
    t->diags = NULL;
    t->n_diags = 0;
    vsched__outcome_free(n->why);
    n->why = o;
}

/* Returns 1 when the completion was refused (stale). */
static int complete_one(vsched *s, vsched__task *t, vsched__pass *p)
{
    vsched__node *n = t->node;
    n->task = NULL;
    if (vsched__node_job(n) != NULL) {
        vsched__job_complete(s, t, p);
        return 0;
    }
    int stage = (int)vsched__stage_of(n);
    if (t->ran)
        vsched__count(&s->stage_runs[stage]);
    if (n->state != VSCHED__RUNNING || !identity_current(n)) {
        vsched__count(&s->stale_refusals);
        vsched__task_retire(s, t, p);
        return 1;
    }
    if (t->status == VSCHED_OK && n->kind == VSCHED__K_SOURCE &&
        t->phase == 0) {
        /* Loaded: the same task goes on to parse on the CPU pool. */
        t->phase = 1;
        n->phase = 1;
        n->task = t;
        n->state = VSCHED__PENDING;
        s->loaded_waiting++;
        vsched__push_ready(s, n);
        return 0;
    }
    int st = t->status;
    if (st == VSCHED_OK && !vsched__inputs_current(s, n, t, p)) {
        vsched__count(&s->stale_refusals);
        vsched__task_retire(s, t, p);
        return 1;
    }
    if (st == VSCHED_OK && n->kind == VSCHED__K_SOURCE)
        st = integrate_source(s, t, p);
    if (st != VSCHED_OK) {
        if (t->ran)
            vsched__count(&s->stage_failures[stage]);
        char *msg =
            t->message != NULL ? t->message : strdup(vsched_strerror(st));
        t->message = NULL;
        vsched__node_fail(s, n, st, msg, NULL, t->diags, t->n_diags, -1, p);
        t->diags = NULL;
        t->n_diags = 0;
        vsched__task_retire(s, t, p);
        return 0;
    }
    vsched__file *f = n->file;
    if (n->kind == VSCHED__K_ANALYSIS && vsched__node_unit(n) != NULL) {
        /* DONE with the rest of its unit. */
        f->analysis_hash = t->out_hash;
        f->unit_hash = vsched__node_unit(n)->hash;
        take_diags(n, t);
        vsched__unit_hold(s, n, p);
        vsched__task_retire(s, t, p);
        return 0;
    }
    if (n->kind == VSCHED__K_ANALYSIS) {
        f->analysis_hash = t->out_hash;
        f->unit_hash = 0;
    } else if (n->kind == VSCHED__K_ARTIFACT) {
        vsched__slot *sl = vsched__file_find_slot(f, vsched__node_profile(n));
        if (sl != NULL) {
            free(sl->path);
            sl->path = t->artifact_path;
            t->artifact_path = NULL;
            sl->artifact_hash = t->out_hash;
        }
    }
    take_diags(n, t);
    vsched__node_done(s, n, p);
    vsched__task_retire(s, t, p);
    return 0;
}

static const char *const steps[] = {"load", "parse", "analysis", "artifact"};

/* The task event of t (its strings in the same allocation), or NULL. */
static vsched_task_event *task_event(const vsched__task *t)
{
    const vsched__node *n = t->node;
    const char *name = vsched__node_job(n) != NULL ? n->k.job->name : t->name;
    const char *step = vsched__node_job(n) != NULL ? n->k.job->kind
                       : t->kind == VSCHED__K_SOURCE
                           ? steps[t->phase ? 1 : 0]
                           : steps[t->kind == VSCHED__K_ANALYSIS ? 2 : 3];
    size_t ln = strlen(name) + 1, ls = strlen(step) + 1;
    vsched_task_event *ev = malloc(sizeof *ev + ln + ls);
    if (ev == NULL)
        return NULL; /* a trace misses one task; the build goes on */
    char *str = (char *)(ev + 1);
    memcpy(str, name, ln);
    memcpy(str + ln, step, ls);
    *ev = (vsched_task_event){
        .node = n->id,
        .stage = vsched__node_job(n) != NULL ? VSCHED_STAGE_ARTIFACT
                                             : vsched__stage_of(n),
        .is_job = vsched__node_job(n) != NULL,
        .name = str,
        .profile = vsched__node_job(n) != NULL ? NULL : t->profile,
        .step = str + ln,
        .pool =
            t->pool_kind == VSCHED_POOL_IO ? VSCHED_POOL_IO : VSCHED_POOL_CPU,
        .worker = t->worker,
        .status = t->status,
        .started_ns = t->started_ns,
        .finished_ns = t->finished_ns,
    };
    return ev;
}

void vsched__complete(vsched *s, vsched__task *t, vsched__pass *p)
{
    vsched__stage_returned(s, t); /* its units go back as it returns */
    if (t->status == VSCHED_ECANCELLED && atomic_load(&s->stopping)) {
        /* It stopped because teardown began (ctx->is_cancelled says so
         * from then on): shut down, not cancelled by the host. */
        t->status = VSCHED_ESHUTDOWN;
        free(t->message);
        t->message = strdup("scheduler shut down");
    }
    vsched_task_event *ev = NULL;
    if (s->opts.task_observer != NULL && (ev = task_event(t)) != NULL)
        vsched__pass_task_event(p, ev); /* before its stage events */
    int refused = complete_one(s, t, p);
    if (ev != NULL)
        ev->refused = refused;
    vsched__units_drain(s, p); /* what a refusal or failure dissolved */
}
