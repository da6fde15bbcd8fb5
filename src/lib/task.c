/*
 * task -- the memory of tasks, and what a file-stage task reads when it
 * starts.
 *
 * A task is built under the scheduler lock when a runner takes its node:
 * it copies or references every input (the snapshot, the content hash,
 * the blockers' analysis hashes with the id of each Analysis node it read
 * them from, the file's analysis hash and that node's id), so the stage
 * body runs unlocked on stable inputs and its completion can tell whether
 * they are still current. Task memory is recycled through a free list.
 *
 * Everything here runs with the scheduler lock held, except
 * vsched__task_free of a task nobody else can see.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "unit.h"

static vsched__task *task_alloc(vsched *s)
{
    vsched__task *t = s->task_free;
    if (t != NULL)
        s->task_free = t->next_free;
    else if ((t = malloc(sizeof *t)) == NULL)
        return NULL;
    memset(t, 0, sizeof *t);
    t->s = s;
    return t;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++)
        free(v[i]);
    free(v);
}

void vsched__task_free(vsched *s, vsched__task *t)
{
    if (t == NULL)
        return;
    if (t->new_snapshot != NULL) {
        /* Parsed, never integrated: the snapshot goes back to the
         * executor (after the unlock, through the dead list). */
        vsched__snap *sn = vsched__snap_new(t->new_snapshot);
        if (sn != NULL)
            vsched__snap_unref(s, sn);
    }
    vsched__snap_unref(s, t->snap);
    vsched__snap_unref(s, t->snap_new); /* parsed, never integrated */
    vsched__facts_unref(t->facts);
    if (t->dep_hashes != t->inline_dep_hashes)
        free(t->dep_hashes);
    free_strv(t->deps.deps, t->deps.n_deps);
    free_strv(t->deps.blockers, t->deps.n_blockers);
    vsched__diags_free(t->diags, t->n_diags);
    free(t->bytes);
    if (t->blocker_hashes != t->inline_hashes)
        free(t->blocker_hashes);
    if (t->consumed != t->inline_consumed)
        free(t->consumed);
    free(t->artifact_path);
    free(t->message);
    vsched__job_in_free(t->job);
    if (t->node != NULL)
        vsched__node_unref(s, t->node);
    t->next_free = s->task_free;
    s->task_free = t;
}

/* Analysis: each blocker's analysis hash, and the node it came from; for
 * a blocker in n's own unit, the unit hash. */
static int read_blockers(vsched *s, vsched__task *t, const vsched__node *n)
{
    const vsched__file *f = n->file;
    const vsched__unit *u = n->unit;
    t->unit_seq = u != NULL ? u->seq : 0;
    size_t nb = f->facts != NULL ? f->n_blockers : 0;
    t->n_blockers = nb;
    t->blocker_hashes = t->inline_hashes;
    t->consumed = t->inline_consumed;
    if (nb > 4) {
        t->blocker_hashes = malloc(nb * sizeof *t->blocker_hashes);
        t->consumed = malloc(nb * sizeof *t->consumed);
        if (t->blocker_hashes == NULL || t->consumed == NULL)
            return VSCHED_ENOMEM;
    }
    for (size_t i = 0; i < nb; i++) {
        vsched__node *a = vsched__blocker_analysis(s, f->blockers[i]);
        /* vsched__inputs_current checked each is a DONE Analysis, or a
         * member of n's unit. */
        t->blocker_hashes[i] = u != NULL && a->unit == u
                                   ? u->hash
                                   : a->file->analysis_hash;
        t->consumed[i] = a->id;
    }
    return VSCHED_OK;
}

vsched__task *vsched__task_for(vsched *s, vsched__node *n)
{
    vsched__task *t = task_alloc(s);
    if (t == NULL)
        return NULL;
    vsched__file *f = n->file;
    t->kind = n->kind;
    t->phase = n->phase;
    t->incarnation = f->incarnation;
    t->generation = n->generation;
    t->name = f->name;
    t->profile = n->profile;
    if (f->facts != NULL) {
        t->snap = vsched__snap_ref(f->snap);
        t->content_hash = f->facts->content_hash;
    }
    if (n->kind == VSCHED__K_SOURCE && f->has_content) {
        t->has_content = 1;
        t->len = f->content_len;
        t->bytes = malloc(f->content_len + 1);
        if (t->bytes == NULL)
            goto fail;
        memcpy(t->bytes, f->content, f->content_len);
        t->bytes[f->content_len] = '\0';
    } else if (n->kind == VSCHED__K_ANALYSIS) {
        if (read_blockers(s, t, n) != VSCHED_OK)
            goto fail;
    } else if (n->kind == VSCHED__K_ARTIFACT) {
        t->analysis_hash = f->analysis_hash;
        t->consumed_analysis = f->analysis->id;
    }
    vsched__node_ref(n);
    t->node = n;
    return t;

fail:
    vsched__task_free(s, t);
    return NULL;
}
