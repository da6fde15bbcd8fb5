/*
 * executor -- the files of a vsched-plugin-test run through the executor:
 * source (twice), extract_deps (names checked), analysis (twice), each
 * blocker depth first with cycles reported, then each FILE's artifacts;
 * see plugin_test.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsched/vsched.h>

#include "common/util.h"
#include "plugin_test/plugin_test.h"

/* Contract: see plugin_test.h. */
pt_file *pt_file_get(pt_run *r, const char *name)
{
    for (size_t i = 0; i < r->n_files; i++)
        if (strcmp(r->files[i].name, name) == 0)
            return &r->files[i];
    if (r->n_files == r->cap_files) {
        r->cap_files = r->cap_files ? 2 * r->cap_files : 16;
        r->files = vr_xrealloc(r->files, r->cap_files * sizeof *r->files);
    }
    pt_file *f = &r->files[r->n_files++];
    memset(f, 0, sizeof *f);
    f->name = vr_xstrdup(name);
    f->artifacts = vr_xcalloc(r->n_profiles + 1, sizeof *f->artifacts);
    return f;
}

/* Check the names of a deps array: non-NULL, non-empty, canonical. */
static void pt_check_names(pt_run *r, char **v, size_t n, const char *what)
{
    if (n > 0 && v == NULL) {
        pt_violation(r, "extract_deps set %zu %s but a NULL array", n, what);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i] == NULL || v[i][0] == '\0') {
            pt_violation(r, "extract_deps: %s[%zu] is %s", what, i,
                         v[i] == NULL ? "NULL" : "empty");
            continue;
        }
        pt_say(r, "%s: %s", strcmp(what, "deps") == 0 ? "dep" : "blocker",
               v[i]);
        char *canon = pt_realpath(r, v[i], 0);
        if (canon != NULL && strcmp(canon, v[i]) != 0)
            pt_warning(r,
                       "%s '%s' is not canonical (the loader's realpath "
                       "says '%s'): the host would track two files",
                       strcmp(what, "deps") == 0 ? "dep" : "blocker", v[i],
                       canon);
        free(canon);
    }
}

/* Free a deps result as the host does: the arrays up to their counts. */
static void pt_deps_release(pt_run *r, vsched_deps_out *d)
{
    for (size_t k = 0; d->deps != NULL && k < d->n_deps; k++)
        pt_release(r, d->deps[k], "a deps name");
    for (size_t k = 0; d->blockers != NULL && k < d->n_blockers; k++)
        pt_release(r, d->blockers[k], "a blockers name");
    pt_release(r, d->deps, "the deps array");
    pt_release(r, d->blockers, "the blockers array");
    memset(d, 0, sizeof *d);
}

/* source (twice) + extract_deps of f, from `bytes`. */
static int pt_source(pt_run *r, pt_file *f, const char *kind,
                     const char *bytes, size_t len)
{
    vsched_source_out out = {0}, again = {0};
    int rc =
        r->xops->source(r->xinst, &r->ctx, f->name, kind, bytes, len, &out);
    char detail[64];
    snprintf(detail, sizeof detail, "content_hash=0x%016llx",
             (unsigned long long)out.content_hash);
    if ((rc = pt_outcome(r, "source", rc, detail)) != 0)
        return rc;
    f->snapshot = out.snapshot;
    f->have_snapshot = 1;
    f->content_hash = out.content_hash;
    r->quiet_diags = 1;
    int rc2 =
        r->xops->source(r->xinst, &r->ctx, f->name, kind, bytes, len, &again);
    r->quiet_diags = 0;
    if (rc2 != 0 || again.content_hash != out.content_hash)
        pt_violation(r,
                     "source is not repeatable: a second call on the same "
                     "bytes gave %s",
                     rc2 != 0 ? vsched_errname(rc2) : "another content hash");
    if (rc2 == 0 && again.snapshot != NULL)
        r->xops->snapshot_free(r->xinst, again.snapshot);

    rc = r->xops->extract_deps(r->xinst, &r->ctx, f->name, f->snapshot,
                               &f->deps);
    snprintf(detail, sizeof detail, "%zu deps, %zu blockers",
             rc == 0 ? f->deps.n_deps : 0, rc == 0 ? f->deps.n_blockers : 0);
    if ((rc = pt_outcome(r, "extract_deps", rc, detail)) != 0) {
        pt_deps_release(r, &f->deps); /* the host frees what is set */
        return rc;
    }
    pt_check_names(r, f->deps.deps, f->deps.n_deps, "deps");
    pt_check_names(r, f->deps.blockers, f->deps.n_blockers, "blockers");
    return 0;
}

/* Analysis hashes of f's blockers into a heap array (NULL when none), or
 * NULL with *rc set when a blocker fails. */
static uint64_t *pt_blocker_hashes(pt_run *r, pt_file *f, int *rc)
{
    size_t n = f->deps.n_blockers;
    uint64_t *h = vr_xcalloc(n + 1, sizeof *h);
    char *name = vr_xstrdup(f->name);
    *rc = 0;
    for (size_t i = 0; i < n && *rc == 0; i++) {
        const char *b = f->deps.blockers[i];
        if (b == NULL || b[0] == '\0')
            continue;
        int st = pt_prepare(r, b, 1);
        pt_file *bf = pt_file_get(r, b);
        f = pt_file_get(r, name); /* the array may have moved */
        r->current = f->name;     /* pt_prepare moved on to the blocker */
        if (st == 1) {
            pt_say(r,
                   "analysis: failed VSCHED_ECYCLE (blocker cycle "
                   "through '%s')",
                   b);
            *rc = VSCHED_ECYCLE;
        } else if (st != 0) {
            pt_say(r,
                   "analysis: failed VSCHED_EDEPFAIL (blocker '%s' "
                   "failed)",
                   b);
            *rc = VSCHED_EDEPFAIL;
        } else {
            h[i] = bf->analysis_hash;
            pt_say(r, "blocker_hash: %s 0x%016llx", b,
                   (unsigned long long)h[i]);
        }
    }
    free(name);
    if (*rc != 0) {
        r->failed_ops++;
        free(h);
        return NULL;
    }
    return h;
}

/* Contract: see plugin_test.h. */
vsched_blocker_in *pt_blockers(pt_run *r, const char *name, int closure,
                               size_t *n)
{
    vsched_blocker_in *v = NULL;
    size_t cap = 0;
    *n = 0;
    const char **todo = vr_xmalloc(sizeof *todo);
    size_t nt = 0, cap_t = 1;
    todo[nt++] = name;
    for (size_t k = 0; k < nt; k++) {
        pt_file *f = pt_file_get(r, todo[k]);
        for (size_t i = 0; i < f->deps.n_blockers; i++) {
            pt_file *b = pt_file_get(r, f->deps.blockers[i]);
            int seen = !closure ? 0 : strcmp(b->name, name) == 0;
            for (size_t j = 0; closure && !seen && j < *n; j++)
                seen = strcmp(v[j].name, b->name) == 0;
            if (seen)
                continue;
            if (*n == cap) {
                cap = cap ? 2 * cap : 8;
                v = vr_xrealloc(v, cap * sizeof *v);
            }
            v[(*n)++] = (vsched_blocker_in){b->name, b->snapshot};
            if (closure) {
                if (nt == cap_t) {
                    cap_t *= 2;
                    todo = vr_xrealloc(todo, cap_t * sizeof *todo);
                }
                todo[nt++] = b->name;
            }
        }
        if (!closure)
            break;
    }
    free(todo);
    return v;
}

/* analysis (twice) of f. */
static int pt_analysis(pt_run *r, const char *name)
{
    int rc;
    uint64_t *bh = pt_blocker_hashes(r, pt_file_get(r, name), &rc);
    if (rc != 0)
        return rc;
    pt_file *f = pt_file_get(r, name);
    size_t nb = 0;
    vsched_blocker_in *blk = pt_blockers(r, name, 0, &nb);
    f = pt_file_get(r, name);
    vsched_analysis_in in = {f->name, f->snapshot,        f->content_hash,
                             bh,      f->deps.n_blockers, sizeof in,
                             blk};
    uint64_t hash = 0, again = 0;
    rc = r->xops->analysis(r->xinst, &r->ctx, &in, &hash);
    char detail[64];
    snprintf(detail, sizeof detail, "analysis_hash=0x%016llx",
             (unsigned long long)hash);
    if ((rc = pt_outcome(r, "analysis", rc, detail)) == 0) {
        f->analysis_hash = hash;
        r->quiet_diags = 1;
        int rc2 = r->xops->analysis(r->xinst, &r->ctx, &in, &again);
        r->quiet_diags = 0;
        if (rc2 != 0 || again != hash)
            pt_violation(r,
                         "analysis is not a pure function of its inputs: "
                         "a second call gave %s",
                         rc2 != 0 ? vsched_errname(rc2) : "another hash");
    }
    free(bh);
    free(blk);
    return rc;
}

/* Contract: see plugin_test.h. */
int pt_prepare(pt_run *r, const char *name, int want_analysis)
{
    pt_file *f = pt_file_get(r, name);
    if (f->state == 1)
        return 1;
    if (f->state == 2)
        return f->status;
    f->state = 1;
    r->current = f->name;
    char kind[32];
    char *bytes = NULL;
    size_t len = 0;
    pt_exists(r, name);
    int rc = pt_classify(r, name, kind, sizeof kind);
    if (rc == 0)
        rc = pt_load(r, name, &bytes, &len);
    if (rc == 0 && r->xops != NULL)
        rc = pt_source(r, f, kind, bytes, len);
    free(bytes);
    if (rc == 0 && r->xops != NULL && want_analysis)
        rc = pt_analysis(r, name);
    f = pt_file_get(r, name);
    f->state = 2;
    f->status = rc;
    return rc;
}

/* Contract: see plugin_test.h. */
void pt_one(pt_run *r, const char *given)
{
    r->current = given;
    char *canon = pt_realpath(r, given, 1);
    if (canon == NULL)
        return;
    int want_analysis =
        r->xops != NULL && r->opts->last_stage >= VSCHED_STAGE_ANALYSIS;
    int rc = pt_prepare(r, canon, want_analysis);
    pt_file *f = pt_file_get(r, canon);
    r->current = f->name;
    if (rc == 0 && r->xops != NULL &&
        r->opts->last_stage >= VSCHED_STAGE_ARTIFACT)
        for (size_t p = 0; p < r->n_profiles; p++)
            pt_artifact(r, pt_file_get(r, canon), p);
    free(canon);
}

/* Contract: see plugin_test.h. */
void pt_run_free(pt_run *r)
{
    for (size_t i = 0; i < r->n_files; i++) {
        pt_file *f = &r->files[i];
        r->current = f->name;
        if (f->have_snapshot && f->snapshot != NULL)
            r->xops->snapshot_free(r->xinst, f->snapshot);
        pt_deps_release(r, &f->deps);
        for (size_t p = 0; p < r->n_profiles; p++)
            free(f->artifacts[p]);
        free(f->artifacts);
        free(f->name);
    }
    free(r->files);
    r->current = NULL;
    for (size_t p = 0; p < r->n_profiles; p++)
        free(r->profiles[p]);
    free(r->profiles);
}
