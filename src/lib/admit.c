/*
 * admit -- request admission: the file node, its stage nodes, the waiter.
 *
 * File stages on the graph:
 *
 *     Source(F) ----> Analysis(F) ----> Artifact(F, profile)
 *                        ^
 *     Analysis(B) -------+   for every blocker B of F (known once Source(F)
 *                            is integrated)
 *
 * so Artifact(F) waits for Analysis of every blocker, transitively, and
 * Analysis runs only when demanded: a direct request, or an Analysis that
 * waits for it as a blocker. ensure_* never replaces a node: an existing
 * current-generation stage node is reused (that is the dedup), and a file
 * node is created by atomic ensure in the table.
 *
 * Admission of a request with content (an upsert) advances the file's
 * generation and sweeps its older work in the same critical section.
 *
 * Everything here runs with the scheduler lock held.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

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

vsched__node *vsched__ensure_source(vsched *s, vsched__file *f, int prio)
{
    if (f->source == NULL) {
        f->source = new_stage_node(s, f, VSCHED__K_SOURCE, prio);
        vsched__graph_make_ready_if_free(&s->graph, f->source);
    } else {
        vsched__graph_raise_priority(&s->graph, f->source, prio);
    }
    return f->source;
}

vsched__file *vsched__file_live(vsched *s, vsched__file *f)
{
    if (!f->retired)
        return f;
    int created;
    vsched__file *live = vsched__files_ensure(&s->files, f->name, &created);
    if (live == NULL)
        abort(); /* cannot gate on nothing; exhaustion is fatal here */
    return live;
}

void vsched__gate_on_blockers(vsched *s, vsched__file *f, vsched__pass *p)
{
    vsched__node *a = f->analysis;
    for (size_t i = 0; i < f->n_blockers && !vsched__node_terminal(a); i++) {
        /* A blocker removed or re-homed since f was integrated: gate on
         * its successor (never on a retired object, which admits and
         * publishes nothing). */
        f->blockers[i] = vsched__file_live(s, f->blockers[i]);
        vsched__node *b =
            vsched__ensure_analysis(s, f->blockers[i], a->priority, p);
        vsched__link(s, b, a, p);
    }
}

vsched__node *vsched__ensure_analysis(vsched *s, vsched__file *f, int prio,
                                      vsched__pass *p)
{
    if (f->analysis != NULL) {
        vsched__graph_raise_priority(&s->graph, f->analysis, prio);
        return f->analysis;
    }
    vsched__node *src = vsched__ensure_source(s, f, prio);
    vsched__node *a = new_stage_node(s, f, VSCHED__K_ANALYSIS, prio);
    f->analysis = a; /* before recursing: blocker cycles end here */
    vsched__link(s, src, a, p);
    if (f->integrated)
        vsched__gate_on_blockers(s, f, p);
    vsched__graph_make_ready_if_free(&s->graph, a);
    return a;
}

static vsched__node *ensure_artifact(vsched *s, vsched__file *f,
                                     const char *profile, int prio,
                                     vsched__pass *p)
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
    slot->node = art; /* slot may move below: do not use it after */
    vsched__node *a = vsched__ensure_analysis(s, f, prio, p);
    vsched__link(s, a, art, p);
    vsched__graph_make_ready_if_free(&s->graph, art);
    return art;
}

/* Install an upsert's content as the file's overlay and supersede. */
static int upsert(vsched *s, vsched__file *f, vsched_handle *h,
                  vsched__pass *p)
{
    char *copy = malloc(h->req.content_len + 1);
    if (copy == NULL)
        return VSCHED_ENOMEM;
    memcpy(copy, h->req.content, h->req.content_len);
    copy[h->req.content_len] = '\0';
    int rc = vsched__advance_generation(s, f, p);
    if (rc != VSCHED_OK) {
        free(copy);
        return rc;
    }
    free(f->content);
    f->content = copy;
    f->content_len = h->req.content_len;
    f->has_content = 1;
    return VSCHED_OK;
}

void vsched__admit(vsched *s, vsched_handle *h, vsched__pass *p)
{
    if (h->admit_status != VSCHED_OK) {
        vsched__handle_refuse(h, h->admit_status, NULL, p);
        return;
    }
    int created;
    vsched__file *f = vsched__files_ensure(&s->files, h->canonical, &created);
    if (f == NULL) {
        vsched__handle_refuse(h, VSCHED_ENOMEM, "out of memory", p);
        return;
    }
    if (f->kind[0] != '\0' && h->kind[0] != '\0' &&
        strcmp(f->kind, h->kind) != 0) {
        /* Re-classified ("language re-home"): a new node object. */
        f = vsched__rehome(s, f, h->kind, p);
        if (f == NULL) {
            vsched__handle_refuse(h, VSCHED_ENOMEM, "out of memory", p);
            return;
        }
    }
    if (h->req.flags & VSCHED_REQ_CONTENT) {
        int rc = upsert(s, f, h, p);
        if (rc != VSCHED_OK) {
            char *m = NULL;
            if (asprintf(&m, "%s: cannot take new content: %s", f->name,
                         vsched_strerror(rc)) < 0)
                m = NULL;
            vsched__handle_refuse(h, rc, m, p);
            free(m);
            return;
        }
        /* An upsert admits once; a follow-latest re-admission must not
         * advance the generation again. */
        h->req.flags &= ~VSCHED_REQ_CONTENT;
    }
    int prio = h->req.priority;
    vsched__node *target = vsched__ensure_source(s, f, prio);
    if (h->req.stage >= VSCHED_STAGE_ANALYSIS)
        target = vsched__ensure_analysis(s, f, prio, p);
    if (h->req.stage == VSCHED_STAGE_ARTIFACT)
        target = ensure_artifact(s, f, h->req.profile, prio, p);
    if (h->req.cost_ns > 0)
        vsched__graph_raise_weight(&s->graph, target, h->req.cost_ns);
    if (vsched__node_terminal(target))
        vsched__handle_finish(s, h, target, p);
    else
        vsched__waiter_add(s, target, h, p);
}

void vsched__admit_batch(vsched *s, vsched_batch *b, vsched__pass *p)
{
    for (size_t i = 0; i < b->n; i++)
        vsched__admit(s, b->handles[i], p);
}

vsched__node *vsched__ensure_artifact(vsched *s, vsched__file *f,
                                      const char *profile, int prio,
                                      vsched__pass *p)
{
    return ensure_artifact(s, f, profile, prio, p);
}
