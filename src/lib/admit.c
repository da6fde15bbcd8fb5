/*
 * admit -- binding requests at submission, admitting them, and the stage
 * nodes they demand.
 *
 * File stages on the graph (implicit edges inside a file, explicit ones
 * between files):
 *
 *     Source(F) ----> Analysis(F) ----> Artifact(F, profile)
 *                        ^
 *     Analysis(B) -------+   for every blocker B of F (known once Source(F)
 *                            is integrated)
 *
 * so an Artifact waits for the Analysis of every blocker, transitively,
 * and Analysis runs only when demanded: a direct request, an Analysis that
 * waits for it as a blocker, or a job on an Artifact. ensure_* never
 * replaces a node: a current-generation stage node is reused (that is the
 * dedup) -- unless it was cancelled, which is not an answer worth keeping
 * (a new demand runs it again).
 *
 * Lifetimes. A request binds at submission (vsched__bind, under the lock)
 * to the file object of its name -- created then if absent -- and to the
 * scheduler's reset epoch. At admission it is answered VSCHED_ESHUTDOWN
 * when a reset came in between or its object was removed; a re-home in
 * between is followed to the successor, which keeps the lifetime.
 *
 * Re-admission. Sweeps (supersede.c) queue the follow-latest waiters they
 * release; vsched__readmit_drain admits them after the operation that
 * swept, each from the top against the live object, never inline in the
 * middle of another admission. A re-admitted request neither re-applies its
 * content nor re-homes with its old classification (only a classification
 * newer than the object's re-homes it), nor fires its join callback again.
 *
 * Everything here runs with the scheduler lock held.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "unit.h"

/* ---- binding and admission -------------------------------------------------- */

int vsched__bind(vsched *s, vsched_handle *h)
{
    h->pend.epoch = s->epoch;
    if (h->pend.admit_status != VSCHED_OK)
        return VSCHED_OK; /* answered at admission, without a node */
    int created;
    vsched__file *f =
        h->batch != NULL /* a batch's names are the directory's */
            ? vsched__files_ensure_kept(&s->files, h->result.name, &created)
            : vsched__files_ensure(&s->files, h->result.name, &created);
    if (f == NULL) {
        h->pend.admit_status = VSCHED_ENOMEM;
        return VSCHED_ENOMEM;
    }
    h->pend.file = vsched__file_ref(f);
    return VSCHED_OK;
}

/* The live object h's lifetime continues in, or NULL when it ended. */
static vsched__file *lifetime_object(vsched_handle *h)
{
    vsched__file *f = h->pend.file;
    while (vsched__file_successor(f) != NULL)
        f = vsched__file_successor(f);
    return f->retired ? NULL : f;
}

static vsched__node *new_stage(vsched *s, vsched__file *f,
                               vsched__node_kind kind, int prio)
{
    vsched__node *n = vsched__node_new(&s->graph, kind, prio);
    if (n == NULL)
        abort(); /* graph bookkeeping cannot be half done */
    n->file = vsched__file_ref(f);
    n->generation = f->generation;
    return n;
}

/* A cancelled stage is not an answer to keep: forget it. */
static vsched__node *reusable(vsched *s, vsched__node **slot)
{
    vsched__node *n = *slot;
    if (n != NULL && n->state == VSCHED__CANCELLED) {
        *slot = NULL;
        vsched__node_retire(s, n);
        return NULL;
    }
    return n;
}

vsched__node *vsched__ensure_source(vsched *s, vsched__file *f, int prio)
{
    vsched__node *n = reusable(s, &f->source);
    if (n != NULL) {
        vsched__raise(s, n, prio, 0);
        return n;
    }
    n = new_stage(s, f, VSCHED__K_SOURCE, prio);
    f->source = n;
    vsched__push_ready(s, n);
    return n;
}

/* A new Analysis node of f (waiting for its Source). It is placed last in
 * the topological order of Analyses, or -- made as the blocker of another
 * -- first, where an upstream belongs (upstream.c). */
static vsched__node *new_analysis(vsched *s, vsched__file *f, int prio,
                                  int as_upstream, vsched__pass *p)
{
    vsched__node *src = vsched__ensure_source(s, f, prio);
    vsched__node *a = new_stage(s, f, VSCHED__K_ANALYSIS, prio);
    a->k.an.ord = as_upstream ? --s->graph.ord_lo : ++s->graph.ord_hi;
    f->analysis = a;
    vsched__wait_on(s, src, a, 0, p);
    return a;
}

/* Link one Analysis to the current Analysis of each of its blockers
 * (creating those, and linking them in turn: a worklist, not recursion).
 * created[] collects the nodes made here, to be made ready at the end. */
static void gate_all(vsched *s, vsched__nodevec *work, vsched__nodevec *made,
                     vsched__pass *p)
{
    while (work->n > 0) {
        vsched__node *x = work->v[--work->n];
        vsched__file *f = x->file;
        if (vsched__node_terminal(x) || f->facts == NULL || f->analysis != x)
            continue;
        for (size_t i = 0;
             i < vsched__file_n_blockers(f) && !vsched__node_terminal(x);
             i++) {
            vsched__file *b = vsched__live(s, vsched__file_blocker(f, i));
            vsched__node *ba = reusable(s, &b->analysis);
            if (ba == NULL) {
                ba = new_analysis(s, b, x->priority, 1, p);
                if (vsched__edgevec_push(&s->graph, work, ba) != VSCHED_OK ||
                    vsched__edgevec_push(&s->graph, made, ba) != VSCHED_OK)
                    abort();
            }
            vsched__link_blocker(s, ba, x, p);
        }
    }
    for (size_t i = made->n; i-- > 0;)
        vsched__make_ready_if_free(s, made->v[i]);
}

void vsched__gate_on_blockers(vsched *s, vsched__node *n, vsched__pass *p)
{
    /* The common case: every blocker has its Analysis already; link them
     * without a worklist. */
    vsched__file *f = n->file;
    int simple = f->facts != NULL && f->analysis == n;
    for (size_t i = 0; simple && i < vsched__file_n_blockers(f); i++) {
        vsched__file *b = vsched__file_blocker(f, i);
        simple = !b->retired && b->analysis != NULL &&
                 b->analysis->state != VSCHED__CANCELLED;
    }
    if (simple) {
        for (size_t i = 0;
             i < vsched__file_n_blockers(f) && !vsched__node_terminal(n);
             i++) {
            vsched__link_blocker(s, vsched__file_blocker(f, i)->analysis, n,
                                 p);
        }
        return;
    }
    vsched__nodevec work = {0}, made = {0};
    if (vsched__edgevec_push(&s->graph, &work, n) != VSCHED_OK)
        abort();
    gate_all(s, &work, &made, p);
    vsched__edgevec_free(&s->graph, &work);
    vsched__edgevec_free(&s->graph, &made);
}

static vsched__node *ensure_analysis(vsched *s, vsched__file *f, int prio,
                                     int as_upstream, vsched__pass *p)
{
    vsched__node *a = reusable(s, &f->analysis);
    if (a != NULL) {
        vsched__raise(s, a, prio, 0);
        return a;
    }
    a = new_analysis(s, f, prio, as_upstream, p);
    if (f->facts == NULL) {
        /* Its Source is not integrated: no blockers known yet to gate on
         * (integration gates it, complete.c) -- what gate_all would do
         * for a worklist of just `a`. */
        vsched__make_ready_if_free(s, a);
        return a;
    }
    vsched__nodevec work = {0}, made = {0};
    if (vsched__edgevec_push(&s->graph, &work, a) != VSCHED_OK ||
        vsched__edgevec_push(&s->graph, &made, a) != VSCHED_OK)
        abort();
    gate_all(s, &work, &made, p);
    vsched__edgevec_free(&s->graph, &work);
    vsched__edgevec_free(&s->graph, &made);
    return a;
}

vsched__node *vsched__ensure_analysis(vsched *s, vsched__file *f, int prio,
                                      vsched__pass *p)
{
    return ensure_analysis(s, f, prio, 0, p);
}

vsched__node *vsched__ensure_blocker_analysis(vsched *s, vsched__file *f,
                                              int prio, vsched__pass *p)
{
    return ensure_analysis(s, f, prio, 1, p);
}

vsched__node *vsched__ensure_artifact(vsched *s, vsched__file *f,
                                      const char *profile, int prio,
                                      vsched__pass *p)
{
    vsched__slot *sl = vsched__file_slot(f, profile);
    if (sl == NULL)
        abort();
    vsched__node *n = reusable(s, &sl->node);
    if (n != NULL) {
        vsched__raise(s, n, prio, 0);
        return n;
    }
    n = new_stage(s, f, VSCHED__K_ARTIFACT, prio);
    n->k.art.profile = profile;
    sl->node = n; /* the slot array may move below: not used after */
    vsched__node *a = vsched__ensure_analysis(s, f, prio, p);
    if (vsched__wait_on(s, a, n, 0, p) == 0)
        vsched__make_ready_if_free(s, n);
    return n;
}

/* Install an upsert's content as the file's overlay and supersede. */
static int upsert(vsched *s, vsched__file *f, vsched_handle *h,
                  vsched__pass *p)
{
    if (vsched__file_extra_make(f) == NULL) /* before anything changes */
        return VSCHED_ENOMEM;
    int rc = vsched__advance_generation(s, f, p);
    if (rc != VSCHED_OK)
        return rc;
    (void)vsched__file_set_content(f, h->pend.extra->content); /* has room */
    h->pend.extra->content = NULL;
    h->pend.flags &= ~VSCHED_REQ_CONTENT; /* an upsert applies once */
    return VSCHED_OK;
}

void vsched__admit(vsched *s, vsched_handle *h, vsched__pass *p)
{
    if (h->pend.admit_status != VSCHED_OK) {
        vsched__handle_refuse(s, h, h->pend.admit_status, NULL, p);
        return;
    }
    if (h->pend.epoch != s->epoch) {
        vsched__handle_refuse(s, h, VSCHED_ESHUTDOWN,
                              "the scheduler was reset", p);
        return;
    }
    vsched__file *f = lifetime_object(h);
    if (f == NULL) {
        char *m = NULL;
        if (asprintf(&m, "%s: removed", h->result.name) < 0)
            m = NULL;
        vsched__handle_refuse(s, h, VSCHED_ESHUTDOWN, m, p);
        free(m);
        return;
    }
    if (h->pend.kind[0] != '\0' && h->pend.class_seq > f->class_seq) {
        if (f->kind[0] != '\0' && strcmp(f->kind, h->pend.kind) != 0)
            /* Re-classified ("language re-home"): a new node object. */
            f = vsched__rehome(s, f, h->pend.kind, h->pend.class_seq, p);
    }
    if (h->pend.flags & VSCHED_REQ_CONTENT) {
        int rc = upsert(s, f, h, p);
        if (rc != VSCHED_OK) {
            char *m = NULL;
            if (asprintf(&m, "%s: cannot take new content: %s", f->name,
                         vsched_strerror(rc)) < 0)
                m = NULL;
            vsched__handle_refuse(s, h, rc, m, p);
            free(m);
            return;
        }
    }
    int prio = h->pend.priority;
    vsched__node *target = vsched__ensure_source(s, f, prio);
    if (h->result.stage >= VSCHED_STAGE_ANALYSIS)
        target = vsched__ensure_analysis(s, f, prio, p);
    if (h->result.stage == VSCHED_STAGE_ARTIFACT)
        target = vsched__ensure_artifact(s, f, h->pend.profile_key, prio, p);
    if (h->pend.cost_ns > 0) {
        uint64_t us = h->pend.cost_ns / 1000;
        vsched__raise(s, target, prio,
                      us > UINT32_MAX ? UINT32_MAX : (uint32_t)(us ? us : 1));
    }
    if (vsched__node_terminal(target))
        vsched__handle_finish(s, h, target, p);
    else
        vsched__waiter_add(s, target, h, p);
}

void vsched__admit_batch(vsched *s, vsched_batch *b, vsched__pass *p)
{
    /* One batch, one publication: a root sees all of it or none. */
    vsched__root_begin(s->root);
    for (size_t i = 0; i < b->n; i++) {
        /* Each request makes at most its three stage nodes. */
        s->graph.ids_bulk = 3 * (b->n - 1 - i);
        vsched__admit(s, &b->h[i], p);
    }
    s->graph.ids_bulk = 0;
    vsched__readmit_drain(s, p);
    vsched__root_end(s->root);
}

void vsched__readmit_push(vsched *s, vsched_handle *h)
{
    h->pend.next = NULL;
    if (s->readmit_tail != NULL)
        s->readmit_tail->pend.next = h;
    else
        s->readmit = h;
    s->readmit_tail = h;
}

void vsched__readmit_drain(vsched *s, vsched__pass *p)
{
    vsched__units_drain(s, p); /* replacements keep their waiters */
    while (s->readmit != NULL) {
        vsched_handle *h = s->readmit;
        s->readmit = h->pend.next;
        if (s->readmit == NULL)
            s->readmit_tail = NULL;
        h->pend.next = NULL;
        vsched__admit(s, h, p);
    }
}
