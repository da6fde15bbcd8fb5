/*
 * supersede -- generations, the supersede sweep, invalidation of what was
 * derived from old content, removal, re-home and reset.
 *
 * A generation advance and its sweep are ONE critical section under the
 * scheduler lock. The sweep is backward-looking: it ends every unfinished
 * stage node of the older generation --
 *
 *   - the node ends CANCELLED with VSCHED_ESUPERSEDED (VSCHED_ESHUTDOWN when
 *     its object is removed or reset), a task still running for it is
 *     asked to stop, and its late completion is refused (complete.c);
 *   - its waiters finish with that status, or, when they asked for
 *     VSCHED_REQ_FOLLOW_LATEST, are queued for re-admission at the new
 *     generation (admit.c drains the queue after the operation);
 *   - another file's work and jobs that waited on it are re-gated on the
 *     live object's new node, so they neither fail nor run ungated.
 *
 * Then everything DERIVED from the old content is dealt with
 * (vsched__invalidate_dependents), transitively along the dependents
 * index: an Analysis that folded the old Analysis and already finished is
 * forgotten with its file's Artifacts (a new demand recomputes them), one
 * that was released to run on it is gated again, and one running on it is
 * refused when it returns (complete.c checks its inputs).
 *
 * Writers of file->generation, enumerated: vsched__advance_generation (the
 * only increment) and vsched__test_set_generation (tests). Writers of
 * file->retired: retire_file, only.
 *
 * Everything here runs with the scheduler lock held.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "pages.h"
#include "unit.h"

/* Work of other files (and jobs) to re-gate once the sweep is done. */
typedef struct sweep {
    vsched__nodevec regate; /* the waiting nodes (references) */
    vsched__nodevec from;   /* regate[i] waited on from[i] (references) */
} sweep;

static void sweep_free(vsched *s, sweep *w)
{
    for (uint32_t i = 0; i < w->regate.n; i++) {
        vsched__node_unref(s, w->regate.v[i]);
        vsched__node_unref(s, w->from.v[i]);
    }
    vsched__nodevec_free(&w->regate);
    vsched__nodevec_free(&w->from);
}

/* Detach what waits on n through edges: to be re-gated on the live node
 * (the down references move to w; w NULL: dropped). */
static void detach_down(vsched *s, vsched__node *n, sweep *w)
{
    vsched__nodevec down = n->down;
    s->graph.edges_cap -= down.cap;
    n->down = (vsched__nodevec){0};
    for (uint32_t i = 0; i < down.n; i++) {
        vsched__node *d = down.v[i];
        if (vsched__node_terminal(d) || w == NULL) {
            if (!vsched__node_terminal(d)) {
                vsched__xdeps_add(d, -1);
                vsched__deps_add(d, -1);
                s->graph.edges--;
            }
            vsched__node_unref(s, d);
            continue;
        }
        vsched__xdeps_add(d, -1);
        vsched__deps_add(d, -1);
        s->graph.edges--;
        vsched__node_ref(n);
        if (vsched__nodevec_push(&w->regate, d) != VSCHED_OK ||
            vsched__nodevec_push(&w->from, n) != VSCHED_OK)
            abort();
    }
    vsched__edgevec_free(&s->graph, &down);
}

/* End one unfinished node of the swept generation. */
static void end_node(vsched *s, vsched__node *n, int status, sweep *w,
                     vsched__pass *p)
{
    if (n == NULL || vsched__node_terminal(n))
        return;
    detach_down(s, n, w);
    char *msg = NULL;
    if (asprintf(&msg, "%s: %s (generation %llu)", n->file->name,
                 status == VSCHED_ESUPERSEDED ? "superseded by newer content"
                                              : "removed",
                 (unsigned long long)n->generation) < 0)
        msg = NULL;
    /* The waiters first: followers are re-admitted, not answered. */
    vsched_handle *h = n->waiters, *keep = NULL;
    n->waiters = NULL;
    while (h != NULL) {
        vsched_handle *next = h->pend.next;
        if (status == VSCHED_ESUPERSEDED &&
            (h->pend.flags & VSCHED_REQ_FOLLOW_LATEST)) {
            s->waiters--;
            vsched__readmit_push(s, h);
        } else {
            h->pend.next = keep;
            keep = h;
        }
        h = next;
    }
    n->waiters = keep;
    vsched__node_fail(s, n, status, msg, NULL, NULL, 0, -1, p);
}

/* End every unfinished stage node of f's current generation and forget
 * them (the next demand admits fresh nodes); drop its facts. Returns 1
 * when its Analysis had finished DONE (what depends on it folded it). */
static int sweep_file(vsched *s, vsched__file *f, int status, sweep *w,
                      vsched__pass *p)
{
    /* Downstream first, so a node is never failed by its own upstream. */
    for (uint32_t i = 0; i < f->n_slots; i++) {
        vsched__node *n = vsched__file_slots(f)[i].node;
        vsched__file_slots(f)[i].node = NULL;
        if (n != NULL) {
            end_node(s, n, status, w, p);
            vsched__node_retire(s, n);
        }
    }
    int done = f->analysis != NULL && f->analysis->state == VSCHED__DONE;
    vsched__node *a = f->analysis, *src = f->source;
    f->analysis = NULL;
    f->source = NULL;
    if (a != NULL) {
        end_node(s, a, status, w, p);
        vsched__node_retire(s, a);
    }
    if (src != NULL) {
        end_node(s, src, status, w, p);
        vsched__node_retire(s, src);
    }
    vsched__file_clear_source(s, f);
    f->analysis_hash = 0;
    f->unit_hash = 0;
    return done;
}

/* A job's record of the edge old -> d: point it at `up`, returning its
 * gate. */
static vsched_gate retarget_job_dep(vsched *s, vsched__node *d,
                                    vsched__node *old, vsched__node *up)
{
    vsched__job *j = vsched__node_job(d);
    for (size_t i = 0; i < j->n_deps; i++)
        if (j->deps[i].up == old) {
            vsched_gate g = j->deps[i].gate;
            j->deps[i] = j->deps[--j->n_deps];
            vsched__node_unref(s, old);
            (void)up;
            return g;
        }
    return VSCHED_GATE_AFTER_SUCCESS;
}

/* Re-gate each swept dependent on the live object of `name`, at the stage
 * it waited on: Analysis for another file's Analysis, Artifact(profile)
 * for a job -- with the job's gate.
 *
 * The Analyses are made ready only once every one is linked, as gate_all
 * does (admit.c): linking one may close a cycle through the live Analysis
 * and later dependents, forming a unit; made ready at once, the unit was
 * released, and linking the next member found it released "on inputs
 * that changed" and dissolved it -- whose replacement re-gated the same
 * dependents, formed the unit again and dissolved it again, for ever,
 * under the lock (test_churn's blocker cycles, seed 207, one run in a
 * few under load). */
static void regate(vsched *s, vsched__file *f, sweep *w, vsched__pass *p)
{
    /* Only when something waits: a removal creates no successor then. */
    vsched__file *live = w->regate.n > 0 ? vsched__live(s, f) : NULL;
    unsigned char *linked =
        w->regate.n > 0 ? calloc(w->regate.n, sizeof *linked) : NULL;
    if (w->regate.n > 0 && linked == NULL)
        abort(); /* cannot gate on nothing; exhaustion is fatal here */
    for (uint32_t i = 0; i < w->regate.n; i++) {
        vsched__node *d = w->regate.v[i];
        vsched__node *old = w->from.v[i];
        if (vsched__node_terminal(d))
            continue;
        if (vsched__node_job(d) != NULL) {
            vsched__node *up =
                old->kind == VSCHED__K_ARTIFACT
                    ? vsched__ensure_artifact(
                          s, live, vsched__node_profile(old), d->priority, p)
                    : vsched__ensure_analysis(s, live, d->priority, p);
            vsched_gate g = retarget_job_dep(s, d, old, up);
            vsched__job_link(s, up, d, g, p);
            continue;
        }
        vsched__node *up =
            vsched__ensure_blocker_analysis(s, live, d->priority, p);
        linked[i] = vsched__link_blocker(s, up, d, p) == 0;
    }
    for (uint32_t i = 0; i < w->regate.n; i++)
        if (linked[i])
            vsched__make_ready_if_free(s, w->regate.v[i]);
    free(linked);
    sweep_free(s, w);
}

/* ---- replacing a doomed Analysis (unit.h) ------------------------------------ */

void vsched__replace_analysis(vsched *s, vsched__node *m, vsched__pass *p)
{
    vsched__file *f = m->file;
    if (vsched__node_terminal(m) || f->retired || f->analysis != m) {
        /* Ended meanwhile (its leaving counted the bit), or not current. */
        if (!vsched__node_terminal(m) && vsched__node_unit(m) != NULL &&
            m->doomed)
            vsched__node_unit(m)->doomed--;
        m->doomed = 0;
        return;
    }
    sweep w = {{0}, {0}};
    detach_down(s, m, &w);
    vsched_handle *waiters = m->waiters;
    m->waiters = NULL;
    int prio = m->priority;
    uint32_t weight = m->weight_us;
    f->analysis = NULL;
    f->analysis_hash = 0;
    f->unit_hash = 0;
    vsched__node_drop(s, m);
    m->doomed = 0;
    vsched__node_retire(s, m);
    vsched__node *na = vsched__ensure_analysis(s, f, prio, p);
    vsched__raise(s, na, prio, weight);
    while (waiters != NULL) {
        vsched_handle *h = waiters;
        waiters = h->pend.next;
        if (vsched__node_terminal(na)) {
            h->pend.next = NULL;
            s->waiters--;
            vsched__handle_finish(s, h, na, p);
        } else {
            h->pend.next = na->waiters;
            na->waiters = h;
        }
    }
    regate(s, f, &w, p);
}

/* ---- what was derived from old content ------------------------------------------ */

/* d, an Analysis released (or about to be) on b's old Analysis, waits
 * for b's live one. */
static void regate_on_blocker(vsched *s, vsched__node *d, vsched__file *b,
                              vsched__pass *p)
{
    vsched__unready(s, d);
    vsched__node *up =
        vsched__ensure_blocker_analysis(s, vsched__live(s, b), d->priority, p);
    if (vsched__link_blocker(s, up, d, p) == 0)
        vsched__make_ready_if_free(s, d);
}

/* Forget f's finished Analysis and Artifacts (they folded stale input);
 * Artifacts released on it wait for a new Analysis. */
static void forget_derived(vsched *s, vsched__file *f, vsched__pass *p)
{
    vsched__node *a = f->analysis;
    f->analysis = NULL;
    f->analysis_hash = 0;
    f->unit_hash = 0;
    vsched__node_retire(s, a);
    vsched__node *na = NULL;
    for (uint32_t i = 0; i < f->n_slots; i++) {
        vsched__node *x = vsched__file_slots(f)[i].node;
        if (x == NULL)
            continue;
        if (vsched__node_terminal(x)) {
            vsched__file_slots(f)[i].node = NULL;
            vsched__node_retire(s, x);
        } else if (x->state == VSCHED__READY) {
            vsched__unready(s, x);
            if (na == NULL)
                na = vsched__ensure_analysis(s, f, x->priority, p);
            if (vsched__wait_on(s, na, x, 0, p) == 0)
                vsched__make_ready_if_free(s, x);
        }
        /* A running Artifact is refused when it returns (its input is
         * no longer the file's Analysis) and waits for the new one. */
    }
}

void vsched__invalidate_dependents(vsched *s, vsched__file *f, int f_done,
                                   vsched__pass *p)
{
    typedef struct item {
        vsched__file *file; /* a reference */
        int done;
    } item;
    item *work = NULL;
    size_t n = 0, cap = 0;
#define PUSH(F, D)                                                            \
    do {                                                                      \
        if (n == cap) {                                                       \
            cap = cap ? cap * 2 : 16;                                         \
            item *v = realloc(work, cap * sizeof *v);                         \
            if (v == NULL)                                                    \
                abort();                                                      \
            work = v;                                                         \
        }                                                                     \
        work[n++] = (item){vsched__file_ref(F), (D)};                         \
    } while (0)
    PUSH(f, f_done);
    while (n > 0) {
        item it = work[--n];
        const vsched__filevec *deps = vsched__dependents_of(s, it.file);
        /* A copy: forgetting may change the index (new blockers). */
        size_t nd = deps != NULL ? deps->n : 0;
        vsched__file **dv = nd > 0 ? malloc(nd * sizeof *dv) : NULL;
        for (size_t i = 0; i < nd; i++)
            dv[i] = vsched__file_ref(deps->v[i]);
        for (size_t i = 0; i < nd; i++) {
            vsched__file *d = dv[i];
            vsched__node *a = d->analysis;
            if (d->retired || a == NULL) {
                /* nothing derived here */
            } else if (vsched__node_terminal(a)) {
                /* Folded the old value (or failed on it): forget it. */
                forget_derived(s, d, p);
                PUSH(d, 1);
            } else if (a->state != VSCHED__RUNNING && it.done) {
                /* Released on (or past) the old Analysis: wait again. */
                regate_on_blocker(s, a, it.file, p);
            }
            /* Pending on the old node: re-gated by the sweep. Running:
             * refused when it returns. */
            vsched__file_unref(s, d);
        }
        free(dv);
        vsched__file_unref(s, it.file);
    }
#undef PUSH
    free(work);
}

/* ---- generations ------------------------------------------------------------------ */

int vsched__advance_generation(vsched *s, vsched__file *f, vsched__pass *p)
{
    if (f->generation == UINT64_MAX)
        return VSCHED_EEXHAUSTED; /* never wrap to a published generation */
    sweep w = {{0}, {0}};
    vsched__root_begin(s->root);
    f->generation++;
    vsched__root_put(s->root, f->name, VSCHED_SOURCE_PENDING, f->incarnation,
                     f->generation, 0);
    int done = sweep_file(s, f, VSCHED_ESUPERSEDED, &w, p);
    vsched__invalidate_dependents(s, f, done, p);
    regate(s, f, &w, p);
    vsched__root_end(s->root);
    return VSCHED_OK;
}

/* ---- retirement -------------------------------------------------------------------- */

static void retire_file(vsched *s, vsched__file *f)
{
    /* A retired object is never loaded again nor witnessed: its upserted
     * content and committed artifacts go, and the word holds the
     * successor from now on (files.h). */
    vsched__file_extra_free(f);
    f->retired = 1;
    atomic_fetch_add(&s->n_retired_files, 1);
}

vsched__file *vsched__rehome(vsched *s, vsched__file *f, const char *kind,
                             uint64_t class_seq, vsched__pass *p)
{
    vsched__file *nf =
        vsched__file_new(s->files.pool, f->name);
    if (nf == NULL)
        abort(); /* admission cannot be half done */
    nf->kind = kind;
    nf->class_seq = class_seq;
    /* The successor keeps upserted content: a queued update still
     * reaches it. */
    vsched__content *c = vsched__file_content(f);
    if (c != NULL) {
        vsched__file_extra_of(f)->content = NULL;
        if (vsched__file_set_content(nf, c) != VSCHED_OK)
            abort(); /* admission cannot be half done */
    }
    sweep w = {{0}, {0}};
    vsched__root_begin(s->root);
    retire_file(s, f);
    f->u.successor = vsched__file_ref(nf);
    int done = sweep_file(s, f, VSCHED_ESUPERSEDED, &w, p);
    vsched__files_replace(&s->files, f, nf); /* nf's reference: the table's */
    vsched__root_put(s->root, nf->name, VSCHED_SOURCE_PENDING, nf->incarnation,
                     nf->generation, 0);
    vsched__invalidate_dependents(s, f, done, p);
    regate(s, nf, &w, p);
    vsched__root_end(s->root);
    vsched__file_unref(s, f); /* the table's reference */
    return nf;
}

static void remove_file(vsched *s, vsched__file *f, sweep *w, vsched__pass *p)
{
    vsched__root_put(s->root, f->name, VSCHED_SOURCE_ABSENT, f->incarnation,
                     f->generation, 0);
    retire_file(s, f);
    int done = sweep_file(s, f, VSCHED_ESHUTDOWN, w, p);
    vsched__files_remove(&s->files, f);
    vsched__invalidate_dependents(s, f, done, p);
}

/* End every job not yet terminal (reset, teardown). */
static void end_jobs(vsched *s, int status, const char *reason,
                     vsched__pass *p)
{
    while (s->dag.active != NULL) {
        vsched__node *n = s->dag.active;
        vsched__node_fail(s, n, status, strdup(reason), NULL, NULL, 0, -1, p);
    }
}

void vsched__retire_all(vsched *s, int status, const char *reason,
                        vsched__pass *p)
{
    vsched__root_begin(s->root); /* ONE epoch for every removed member */
    /* At teardown no capture can follow, and every live root sees an
     * older epoch: the removals would be read by no one. */
    int publish = !atomic_load(&s->stopping);
    /* Every member leaves: the dependents index goes whole, first, so no
     * member is taken out of it one name at a time (nothing below reads
     * it: the sweeps re-gate nothing and invalidate no dependents). */
    vsched__dependents_fini(&s->dependents, s->root);
    /* The table is taken whole: every member is retired, then freed. */
    size_t nf;
    vsched__file **table = vsched__files_list(&s->files, &nf, 1);
    for (size_t i = 0; i < nf; i++) {
        vsched__file *f = table[i];
        if (publish)
            vsched__root_put(s->root, f->name, VSCHED_SOURCE_ABSENT,
                             f->incarnation, f->generation, 0);
        retire_file(s, f);
        sweep_file(s, f, VSCHED_ESHUTDOWN, NULL, p);
    }
    for (size_t i = 0; i < nf; i++)
        vsched__file_unref(s, table[i]); /* the table's */
    free(table);
    end_jobs(s, status, reason, p);
    /* Nothing survives to be re-admitted. */
    while (s->readmit != NULL) {
        vsched_handle *h = s->readmit;
        s->readmit = h->pend.next;
        h->pend.next = NULL;
        vsched__handle_refuse(s, h, status, reason, p);
    }
    s->readmit_tail = NULL;
    vsched__units_drain(s, p); /* every member ended: nothing to replace */
    vsched__stage_waiters_clear(s); /* every waiter ended */
    vsched__ready_clear(s);
    vsched__job_history_clear(s);
    s->epoch++;
    vsched__root_end(s->root);
    p->wake_dag = 1;
}

/* ---- public ------------------------------------------------------------------------ */

typedef int (*file_op)(vsched *s, vsched__file *f, vsched__pass *p);

static int with_file(vsched *s, const char *name, file_op op)
{
    if (s == NULL || name == NULL)
        return VSCHED_EINVAL;
    vsched__pass p = {0};
    vsched__lock(s);
    vsched__file *f = vsched__files_find(&s->files, name);
    int rc = f == NULL ? VSCHED_ENOENT : op(s, f, &p);
    vsched__readmit_drain(s, &p);
    vsched__kick(s);
    vsched__unlock_run(s, &p);
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
        (void)vsched__file_set_content(f, NULL); /* never fails */
    }
    return rc;
}

static int op_remove(vsched *s, vsched__file *f, vsched__pass *p)
{
    sweep w = {{0}, {0}};
    vsched__root_begin(s->root);
    remove_file(s, f, &w, p);
    /* Dependents gate on a successor object, loaded afresh. */
    regate(s, f, &w, p);
    vsched__root_end(s->root);
    vsched__file_unref(s, f); /* the table's reference */
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
    vsched__lock(s);
    vsched__retire_all(s, VSCHED_ESHUTDOWN, "scheduler reset", &p);
    vsched__unlock_run(s, &p);
}

int vsched__test_set_generation(vsched *s, const char *name,
                                uint64_t generation)
{
    vsched__lock(s);
    vsched__file *f = vsched__files_find(&s->files, name);
    if (f != NULL)
        f->generation = generation;
    vsched__unlock(s, NULL);
    return f != NULL ? VSCHED_OK : VSCHED_ENOENT;
}
