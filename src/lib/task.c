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
 * Blockers' snapshots (ABI 1.1, vsched_analysis_in/artifact_in.blockers)
 * are read here too, a reference taken on each. They are the snapshots
 * the analysis hash covers: an Analysis runs only when each blocker's
 * Analysis is DONE (or a member of its unit), and an Artifact only when
 * the file's own is, which folds its blockers' and theirs in turn. A
 * blocker whose content changes afterwards (a new generation) sweeps its
 * Analysis and forgets every dependent's, transitively
 * (vsched__invalidate_dependents), so the input gate of complete.c --
 * the blockers' Analysis ids for an Analysis, the file's Analysis id for
 * an Artifact -- refuses a result made from a superseded snapshot: no
 * further check is needed for the closure.
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

/* Drop everything t holds but its node: no scheduler state is touched,
 * so it runs with or without the lock. */
static void task_scrub(vsched *s, vsched__task *t)
{
    if (t->new_snapshot != NULL) {
        /* Parsed, never integrated: the snapshot goes back to the
         * executor (after the unlock, through the dead list). */
        vsched__snap *sn = vsched__snap_new(t->new_snapshot);
        if (sn != NULL)
            vsched__snap_unref(s, sn);
    }
    vsched__snap_unref(s, t->snap);
    vsched__snap_unref(s, t->snap_new); /* parsed, never integrated */
    for (size_t i = 0; i < t->n_blk; i++)
        vsched__snap_unref(s, t->blk_snaps[i]);
    free(t->blk_mem); /* blk, blk_snaps and copied names, when not inline */
    vsched__facts_unref(t->blk_facts);
    vsched__facts_unref(t->facts);
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
}

void vsched__task_free(vsched *s, vsched__task *t)
{
    if (t == NULL)
        return;
    task_scrub(s, t);
    if (t->node != NULL)
        vsched__node_unref(s, t->node);
    t->next_free = s->task_free;
    s->task_free = t;
}

void vsched__task_retire(vsched *s, vsched__task *t, vsched__pass *p)
{
    if (t->node != NULL)
        vsched__node_unref(s, t->node);
    t->node = NULL;
    t->next_free = p->spent;
    p->spent = t;
}

void vsched__tasks_scrub(vsched *s, vsched__pass *p)
{
    while (p->spent != NULL) {
        vsched__task *t = p->spent;
        p->spent = t->next_free;
        task_scrub(s, t);
        t->next_free = p->clean;
        p->clean = t;
    }
}

void vsched__tasks_recycle(vsched *s, vsched__pass *p)
{
    while (p->clean != NULL) {
        vsched__task *t = p->clean;
        p->clean = t->next_free;
        t->next_free = s->task_free;
        s->task_free = t;
    }
}

/* Analysis: each blocker's analysis hash, and the node it came from; for
 * a blocker in n's own unit, the unit hash. */
static int read_blockers(vsched *s, vsched__task *t, const vsched__node *n)
{
    const vsched__file *f = n->file;
    const vsched__unit *u = vsched__node_unit(n);
    t->unit_seq = u != NULL ? u->seq : 0;
    size_t nb = f->facts != NULL ? vsched__file_n_blockers(f) : 0;
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
        vsched__node *a =
            vsched__blocker_analysis(s, vsched__file_blocker(f, i));
        /* vsched__inputs_current checked each is a DONE Analysis, or a
         * member of n's unit. */
        t->blocker_hashes[i] = u != NULL && vsched__node_unit(a) == u
                                   ? u->hash
                                   : a->file->analysis_hash;
        t->consumed[i] = a->id;
    }
    return VSCHED_OK;
}

/* The live object behind a blocker reference (the object its Analysis
 * belongs to), or the reference itself when it has no Analysis. */
static const vsched__file *blocker_live(vsched *s, vsched__file *b)
{
    vsched__node *a = vsched__blocker_analysis(s, b);
    return a != NULL ? a->file : b;
}

/* A growable list of files. */
typedef struct filev {
    const vsched__file **v;
    size_t n, cap;
} filev;

static int filev_push(filev *fv, const vsched__file *f)
{
    if (fv->n == fv->cap) {
        size_t cap = fv->cap ? 2 * fv->cap : 16;
        const vsched__file **v = realloc(fv->v, cap * sizeof *v);
        if (v == NULL)
            return VSCHED_ENOMEM;
        fv->v = v;
        fv->cap = cap;
    }
    fv->v[fv->n++] = f;
    return VSCHED_OK;
}

/* Set of visited files: open addressing on the pointer, never full
 * beyond half. */
typedef struct fileset {
    const vsched__file **v;
    size_t cap, n;
} fileset;

/* 1 if f was added, 0 if already there, negative on exhaustion. */
static int fileset_add(fileset *fs, const vsched__file *f)
{
    if (2 * (fs->n + 1) > fs->cap) {
        size_t cap = fs->cap ? 2 * fs->cap : 64;
        const vsched__file **v = calloc(cap, sizeof *v);
        if (v == NULL)
            return VSCHED_ENOMEM;
        for (size_t i = 0; i < fs->cap; i++)
            if (fs->v[i] != NULL) {
                size_t j = ((uintptr_t)fs->v[i] >> 4) & (cap - 1);
                while (v[j] != NULL)
                    j = (j + 1) & (cap - 1);
                v[j] = fs->v[i];
            }
        free(fs->v);
        fs->v = v;
        fs->cap = cap;
    }
    size_t j = ((uintptr_t)f >> 4) & (fs->cap - 1);
    for (; fs->v[j] != NULL; j = (j + 1) & (fs->cap - 1))
        if (fs->v[j] == f)
            return 0;
    fs->v[j] = f;
    fs->n++;
    return 1;
}

/* The closure of f's blockers, depth-first preorder from f's own, each
 * live file once, f left out. */
static int blocker_closure(vsched *s, const vsched__file *f, filev *out)
{
    fileset seen = {0};
    filev stack = {0};
    int rc = fileset_add(&seen, f);
    for (size_t i = vsched__file_n_blockers(f); rc >= 0 && i-- > 0;)
        rc = filev_push(&stack, blocker_live(s, vsched__file_blocker(f, i)));
    while (rc >= 0 && stack.n > 0) {
        const vsched__file *b = stack.v[--stack.n];
        rc = fileset_add(&seen, b);
        if (rc <= 0)
            continue;
        rc = filev_push(out, b);
        for (size_t i = b->facts != NULL ? vsched__file_n_blockers(b) : 0;
             rc >= 0 && i-- > 0;)
            rc = filev_push(&stack,
                            blocker_live(s, vsched__file_blocker(b, i)));
    }
    free(seen.v);
    free(stack.v);
    return rc < 0 ? rc : VSCHED_OK;
}

/* Room for n entries of t->blk and t->blk_snaps plus `extra` bytes:
 * inline when it fits, else one allocation (t->blk_mem). Returns the
 * extra bytes' start (or a non-NULL pointer when extra is 0), NULL on
 * exhaustion. */
static char *blk_room(vsched__task *t, size_t n, size_t extra)
{
    size_t head = n * sizeof *t->blk + n * sizeof *t->blk_snaps;
    if (n <= 4 && extra == 0) {
        t->blk = t->inline_blk;
        t->blk_snaps = t->inline_snaps;
        return (char *)t->inline_blk;
    }
    char *mem = malloc(head + extra);
    if (mem == NULL)
        return NULL;
    t->blk_mem = mem;
    t->blk = (vsched_blocker_in *)(void *)mem;
    t->blk_snaps = (vsched__snap **)(void *)(mem + n * sizeof *t->blk);
    return mem + head;
}

/* Entry i: b's snapshot (a reference) under `name`. */
static void blk_set(vsched__task *t, size_t i, const vsched__file *b,
                    const char *name)
{
    vsched__snap *sn = vsched__file_snap(b);
    t->blk_snaps[i] = vsched__snap_ref(sn);
    t->blk[i] = (vsched_blocker_in){name, sn != NULL ? sn->snapshot : NULL};
}

/* The closure of f's blockers; names copied (they come from many
 * files' records). */
static int read_closure(vsched *s, vsched__task *t, const vsched__file *f)
{
    filev fv = {0};
    int rc = blocker_closure(s, f, &fv);
    size_t names = 0;
    for (size_t i = 0; rc == VSCHED_OK && i < fv.n; i++)
        names += strlen(fv.v[i]->name) + 1;
    char *w = rc == VSCHED_OK && fv.n > 0 ? blk_room(t, fv.n, names) : NULL;
    if (rc == VSCHED_OK && fv.n > 0 && w == NULL)
        rc = VSCHED_ENOMEM;
    for (size_t i = 0; rc == VSCHED_OK && i < fv.n; i++) {
        size_t len = strlen(fv.v[i]->name) + 1;
        memcpy(w, fv.v[i]->name, len);
        blk_set(t, i, fv.v[i], w);
        w += len;
    }
    if (rc == VSCHED_OK)
        t->n_blk = fv.n;
    free(fv.v);
    return rc;
}

/* The blockers an Analysis (direct, in order) or an Artifact (direct or
 * closure) of f sees. Direct ones are named by f's facts record, which
 * the task keeps a reference on: no copy, nothing allocated for up to
 * four. */
static int read_blocker_snaps(vsched *s, vsched__task *t,
                              const vsched__file *f, int closure)
{
    size_t n = f->facts != NULL ? vsched__file_n_blockers(f) : 0;
    if (n == 0)
        return VSCHED_OK;
    if (closure)
        return read_closure(s, t, f);
    if (blk_room(t, n, 0) == NULL)
        return VSCHED_ENOMEM;
    t->blk_facts = vsched__facts_ref(f->facts);
    for (size_t i = 0; i < n; i++)
        blk_set(t, i, blocker_live(s, vsched__file_blocker(f, i)),
                vsched__facts_blocker_names(f->facts)[i]);
    t->n_blk = n;
    return VSCHED_OK;
}

/* The executor asked for the closure (ABI 1.1), its ops table big enough
 * to say so. */
static int wants_closure(const vsched *s)
{
    const vsched_executor_ops *ops = s->opts.executor.ops;
    return ops != NULL &&
           VSCHED_HAS_FIELD(ops, vsched_executor_ops, artifact_blockers) &&
           ops->artifact_blockers == VSCHED_BLOCKERS_CLOSURE;
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
    t->profile = vsched__node_profile(n);
    if (f->facts != NULL) {
        t->snap = vsched__snap_ref(vsched__file_snap(f));
        t->content_hash = f->facts->content_hash;
    }
    if (n->kind == VSCHED__K_SOURCE && vsched__file_content(f) != NULL) {
        const vsched__content *c = vsched__file_content(f);
        t->has_content = 1;
        t->len = c->len;
        t->bytes = malloc(c->len + 1);
        if (t->bytes == NULL)
            goto fail;
        memcpy(t->bytes, c->bytes, c->len + 1);
    } else if (n->kind == VSCHED__K_ANALYSIS) {
        if (read_blockers(s, t, n) != VSCHED_OK ||
            read_blocker_snaps(s, t, f, 0) != VSCHED_OK)
            goto fail;
    } else if (n->kind == VSCHED__K_ARTIFACT) {
        t->analysis_hash = f->analysis_hash;
        t->consumed_analysis = f->analysis->id;
        if (read_blocker_snaps(s, t, f, wants_closure(s)) != VSCHED_OK)
            goto fail;
    }
    vsched__node_ref(n);
    t->node = n;
    return t;

fail:
    vsched__task_free(s, t);
    return NULL;
}
