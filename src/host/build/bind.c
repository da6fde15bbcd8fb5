/*
 * bind -- the wrapped loader and executor; see bind.h.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "build/bind.h"
#include "build/contract.h"
#include "common/strmap.h"
#include "common/util.h"
#include "config/plugin_host.h"
#include "state/dirty.h"
#include "state/keys.h"

struct vr_bind {
    vr_bind_opts o;
    vsched_loader_ops lops; /* the wrappers, handed to the scheduler */
    vsched_executor_ops xops;
    vr_strmap *records; /* "source\x1fprofile" -> snap->art index */
    vr_strmap *jobs;    /* "kind\x1fname\x1fprofile" -> snap->job */
    /* lock: guards captures, by_key, the counts and tmp_counter; a leaf. */
    pthread_mutex_t lock;
    vr_capture *captures;
    size_t n_captures;
    vr_strmap *by_key; /* "name\x1fprofile" (artifact) or
                                 "link\x1fname\x1fprofile" -> captures */
    uint64_t kept, restored, executed;
    unsigned long tmp_counter;
};

static uint64_t vr_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- lookups ------------------------------------------------------------- */

/* Contract: see bind.h. */
const vr_art_row *vr_bind_record(const vr_bind *b, const char *name,
                                 const char *profile)
{
    char *k = vr_strmap_key(name, profile, NULL);
    long i = vr_strmap_get(b->records, k);
    free(k);
    return i >= 0 ? &b->o.snap->art[i] : NULL;
}

/* Contract: see bind.h. */
const vr_job_row *vr_bind_job_record(const vr_bind *b, const char *kind,
                                     const char *name, const char *profile)
{
    char *k = vr_strmap_key(kind, name, profile);
    long i = vr_strmap_get(b->jobs, k);
    free(k);
    return i >= 0 ? &b->o.snap->job[i] : NULL;
}

/* Contract: see bind.h. */
const vr_profile_keys *vr_bind_keys(const vr_bind *b, const char *profile)
{
    for (size_t i = 0; i < b->o.n_keys; i++)
        if (strcmp(b->o.keys[i].profile, profile != NULL ? profile : "") == 0)
            return &b->o.keys[i];
    return NULL;
}

static char **vr_names_dup(char *const *v, size_t n)
{
    if (n == 0)
        return NULL;
    char **d = vr_xcalloc(n + 1, sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = vr_xstrdup(v[i] != NULL ? v[i] : "");
    return d;
}

/* Store capture c (its strings move in) for `key`. */
static void vr_capture_put(vr_bind *b, const char *key, vr_capture *c)
{
    pthread_mutex_lock(&b->lock);
    long i = vr_strmap_get(b->by_key, key);
    if (i < 0) {
        b->captures = vr_xrealloc(b->captures,
                                  (b->n_captures + 1) * sizeof *b->captures);
        i = (long)b->n_captures++;
        vr_strmap_put(b->by_key, key, i);
    } else {
        vr_capture_clear(&b->captures[i]);
    }
    b->captures[i] = *c;
    if (c->outcome == VR_KEPT)
        b->kept++;
    else if (c->outcome == VR_RESTORED)
        b->restored++;
    else
        b->executed++;
    pthread_mutex_unlock(&b->lock);
    memset(c, 0, sizeof *c);
}

/* Contract: see bind.h. */
int vr_bind_capture(vr_bind *b, const char *kind, const char *name,
                    const char *profile, vr_capture *out)
{
    char *k = kind != NULL ? vr_strmap_key(kind, name, profile)
                           : vr_strmap_key(name, profile, NULL);
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&b->lock);
    long i = vr_strmap_get(b->by_key, k);
    if (i >= 0) {
        const vr_capture *c = &b->captures[i];
        *out = *c;
        out->path = c->path != NULL ? vr_xstrdup(c->path) : NULL;
        out->tool_deps = vr_names_dup(c->tool_deps, c->n_tool_deps);
    }
    pthread_mutex_unlock(&b->lock);
    free(k);
    return i >= 0;
}

/* Contract: see bind.h. */
void vr_capture_clear(vr_capture *c)
{
    free(c->path);
    for (size_t i = 0; i < c->n_tool_deps; i++)
        free(c->tool_deps[i]);
    free(c->tool_deps);
    memset(c, 0, sizeof *c);
}

/* Contract: see bind.h. */
void vr_bind_counts(vr_bind *b, uint64_t *kept, uint64_t *restored,
                    uint64_t *executed)
{
    pthread_mutex_lock(&b->lock);
    *kept = b->kept;
    *restored = b->restored;
    *executed = b->executed;
    pthread_mutex_unlock(&b->lock);
}

/* ---- the loader ------------------------------------------------------------ */

static int w_load(void *inst, const vsched_ctx *ctx, const char *name,
                  char **bytes, size_t *len)
{
    vr_bind *b = inst;
    char *path = vr_sources_path(b->o.sources, name);
    vr_stamp st;
    int64_t seen = vr_wall_ns();
    int have = path != NULL && vr_stamp_of(path, &st) == VSCHED_OK;
    free(path);
    int rc = b->o.loader.ops->load(b->o.loader.inst, ctx, name, bytes, len);
    if (rc == VSCHED_OK)
        vr_sources_loaded(b->o.sources, name, have ? &st : NULL, seen,
                          vr_hash_bytes(*bytes != NULL ? *bytes : "",
                                        *bytes != NULL ? *len : 0));
    return rc;
}

static int w_exists(void *inst, const vsched_ctx *ctx, const char *name)
{
    vr_bind *b = inst;
    return b->o.loader.ops->exists(b->o.loader.inst, ctx, name);
}

static int w_classify(void *inst, const vsched_ctx *ctx, const char *name,
                      char *kind, size_t cap)
{
    vr_bind *b = inst;
    return b->o.loader.ops->classify(b->o.loader.inst, ctx, name, kind, cap);
}

static int w_realpath(void *inst, const vsched_ctx *ctx, const char *name,
                      char **canonical)
{
    vr_bind *b = inst;
    return b->o.loader.ops->realpath(b->o.loader.inst, ctx, name, canonical);
}

/* ---- the executor: pass-through stages --------------------------------------- */

static int w_source(void *inst, const vsched_ctx *ctx, const char *name,
                    const char *kind, const char *bytes, size_t len,
                    vsched_source_out *out)
{
    vr_bind *b = inst;
    return b->o.executor.ops->source(b->o.executor.inst, ctx, name, kind,
                                     bytes, len, out);
}

static int w_extract_deps(void *inst, const vsched_ctx *ctx, const char *name,
                          const void *snapshot, vsched_deps_out *out)
{
    vr_bind *b = inst;
    int rc = b->o.executor.ops->extract_deps(b->o.executor.inst, ctx, name,
                                             snapshot, out);
    if (rc == VSCHED_OK)
        rc = vr_contract_deps(b->o.executor_name, ctx, name, out);
    if (rc == VSCHED_OK)
        vr_sources_set_deps(b->o.sources, name, out->deps, out->n_deps,
                            out->blockers, out->n_blockers);
    return rc;
}

static int w_analysis(void *inst, const vsched_ctx *ctx,
                      const vsched_analysis_in *in, uint64_t *hash)
{
    vr_bind *b = inst;
    return b->o.executor.ops->analysis(b->o.executor.inst, ctx, in, hash);
}

static void w_snapshot_free(void *inst, void *snapshot)
{
    vr_bind *b = inst;
    b->o.executor.ops->snapshot_free(b->o.executor.inst, snapshot);
}

/* ---- the executor: artifacts --------------------------------------------------- */

/* 1 when every dependency of `row` that its key does not cover still has
 * the recorded content. */
static int vr_uncovered_current(vr_bind *b, const vr_art_row *row)
{
    for (size_t i = 0; i < row->n_deps; i++) {
        uint64_t h = 0;
        if (row->deps[i].covered)
            continue;
        if (vr_sources_current_id(b->o.sources, row->deps[i].source, &h) !=
                VSCHED_OK ||
            h != row->deps[i].hash || h == VR_HASH_UNKNOWN)
            return 0;
    }
    return 1;
}

/* 1 when every file of a cache entry has the content it was built from. */
static int vr_entry_current(vr_bind *b, const vr_cache_entry *e)
{
    for (size_t i = 0; i < e->n_deps; i++) {
        uint64_t h = 0;
        if (vr_sources_current(b->o.sources, e->deps[i].name, &h) !=
                VSCHED_OK ||
            h != e->deps[i].hash)
            return 0;
    }
    return 1;
}

/* A temporary name beside `path` for a restore (heap). */
static char *vr_restore_tmp(vr_bind *b, const char *path)
{
    pthread_mutex_lock(&b->lock);
    unsigned long k = b->tmp_counter++;
    pthread_mutex_unlock(&b->lock);
    return vr_strfmt("%s.tmp.%ld.r%lu", path, (long)getpid(), k);
}

static char *vr_ctx_strdup(const vsched_ctx *ctx, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ctx->alloc(ctx, n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* Try the cache for `key`; 1 when restored (out and *cap filled). */
static int vr_try_restore(vr_bind *b, const vsched_ctx *ctx,
                          const uint8_t key[16], vsched_artifact_out *out,
                          vr_capture *cap)
{
    vr_cache_entry e;
    if (b->o.cache == NULL)
        return 0;
    uint64_t t0 = vr_mono_ns();
    if (vr_cache_lookup(b->o.cache, key, &e) != VSCHED_OK) {
        vr_cache_miss(b->o.cache);
        return 0;
    }
    int ok = 0;
    if (!vr_entry_current(b, &e)) {
        vr_cache_miss(b->o.cache);
    } else {
        char *tmp = vr_restore_tmp(b, e.out_path);
        if (vr_cache_restore(b->o.cache, &e, tmp) == VSCHED_OK) {
            out->path = vr_ctx_strdup(ctx, e.out_path);
            out->tmp_path = vr_ctx_strdup(ctx, tmp);
            ok = out->path != NULL && out->tmp_path != NULL;
            if (!ok) {
                unlink(tmp);
                if (out->path != NULL)
                    ctx->free(ctx, out->path);
                if (out->tmp_path != NULL)
                    ctx->free(ctx, out->tmp_path);
                out->path = out->tmp_path = NULL;
            }
        }
        free(tmp);
    }
    if (ok) {
        cap->outcome = VR_RESTORED;
        cap->restore_start_ns = t0;
        cap->restore_end_ns = vr_mono_ns();
        cap->path = vr_xstrdup(e.out_path);
        cap->out_hash = e.hash;
        cap->n_tool_deps = e.n_deps;
        cap->tool_deps =
            e.n_deps ? vr_xcalloc(e.n_deps, sizeof(char *)) : NULL;
        for (size_t i = 0; i < e.n_deps; i++)
            cap->tool_deps[i] = vr_xstrdup(e.deps[i].name);
    }
    vr_cache_entry_clear(&e);
    return ok;
}

/* Take the executor's deps (ctx->alloc'ed) into the capture. */
static void vr_take_deps(const vsched_ctx *ctx, vsched_artifact_out *mine,
                         vr_capture *cap)
{
    if (mine->deps != NULL && mine->n_deps > 0) {
        cap->tool_deps = vr_names_dup(mine->deps, mine->n_deps);
        cap->n_tool_deps = mine->n_deps;
    }
    for (size_t i = 0; mine->deps != NULL && i < mine->n_deps; i++)
        if (mine->deps[i] != NULL)
            ctx->free(ctx, mine->deps[i]);
    if (mine->deps != NULL)
        ctx->free(ctx, mine->deps);
    mine->deps = NULL;
    mine->n_deps = 0;
}

static int w_artifact(void *inst, const vsched_ctx *ctx,
                      const vsched_artifact_in *in, vsched_artifact_out *out)
{
    vr_bind *b = inst;
    const vr_profile_keys *pk = vr_bind_keys(b, in->profile);
    vr_capture cap = {0};
    uint8_t key[16];
    vr_keys_artifact(key, in->name, in->profile, in->analysis_hash,
                     pk != NULL ? pk->config : 0, pk != NULL ? pk->tool : 0);
    memcpy(cap.key, key, 16);
    const vr_art_row *row = vr_bind_record(b, in->name, in->profile);
    char *ckey = vr_strmap_key(in->name, in->profile, NULL);
    if (row != NULL && memcmp(row->key, key, 16) == 0 &&
        vr_uncovered_current(b, row)) {
        vr_verdict v = {0};
        vr_dirty_output(row->out_path, &row->out_st, row->out_hash, &v, NULL);
        int intact = v.reason == VR_CURRENT;
        vr_verdict_clear(&v);
        if (intact) {
            cap.outcome = VR_KEPT;
            cap.path =
                row->out_path != NULL ? vr_xstrdup(row->out_path) : NULL;
            cap.out_hash = row->out_hash;
            vr_capture_put(b, ckey, &cap);
            free(ckey);
            return VSCHED_OK; /* nothing to publish */
        }
    }
    if (vr_try_restore(b, ctx, key, out, &cap)) {
        vr_journal_note(b->o.journal, out->path,
                        out->tmp_path); /* published next */
        vr_capture_put(b, ckey, &cap);
        free(ckey);
        return VSCHED_OK;
    }
    vsched_artifact_out mine;
    memset(&mine, 0, sizeof mine);
    cap.started_wall_ns = vr_wall_ns();
    uint64_t t0 = vr_mono_ns();
    int rc = b->o.executor.ops->artifact(b->o.executor.inst, ctx, in, &mine);
    cap.duration_ns = vr_mono_ns() - t0;
    if (rc == VSCHED_OK)
        rc = vr_contract_artifact(b->o.executor_name, ctx, "artifact",
                                  in->name, &mine);
    vr_take_deps(ctx, &mine, &cap);
    out->path = mine.path;
    out->tmp_path = mine.tmp_path;
    out->bytes = mine.bytes;
    out->len = mine.len;
    out->artifact_hash = mine.artifact_hash;
    if (rc == VSCHED_OK) {
        cap.outcome = VR_EXECUTED;
        cap.path = mine.path != NULL ? vr_xstrdup(mine.path) : NULL;
        vr_journal_note(b->o.journal, mine.path,
                        mine.tmp_path); /* published next */
        vr_capture_put(b, ckey, &cap);
    } else {
        vr_capture_clear(&cap);
    }
    free(ckey);
    return rc;
}

/* ---- the executor: jobs ---------------------------------------------------------- */

static const vr_link_plan *vr_link_of(const vr_bind *b, const char *kind,
                                      const char *name, const char *profile)
{
    for (size_t i = 0; i < b->o.n_links; i++)
        if (strcmp(b->o.links[i].kind, kind) == 0 &&
            strcmp(b->o.links[i].name, name) == 0 &&
            strcmp(b->o.links[i].profile, profile != NULL ? profile : "") == 0)
            return &b->o.links[i];
    return NULL;
}

/* Contract: see bind.h. */
uint64_t vr_bind_job_config(uint64_t config, uint64_t salt)
{
    if (salt == 0)
        return config;
    uint64_t v[2] = {config, salt};
    return XXH3_64bits(v, sizeof v);
}

/* The output of job (kind, name, profile) now: its path and content hash
 * (hashed from the file when this run made it). 0 when it has none. */
static int vr_job_output(vr_bind *b, const char *kind, const char *name,
                         const char *profile, char **path, uint64_t *hash)
{
    vr_capture c;
    if (vr_bind_capture(b, kind, name, profile, &c)) {
        *path = c.path;
        *hash = c.out_hash;
        c.path = NULL;
        int made = c.outcome == VR_EXECUTED;
        vr_capture_clear(&c);
        if (*path != NULL && made && vr_hash_file(*path, hash, NULL) != 0)
            *hash = VR_HASH_UNKNOWN;
        return *path != NULL;
    }
    const vr_job_row *row = vr_bind_job_record(b, kind, name, profile);
    if (row == NULL || row->out_path == NULL)
        return 0;
    *path = vr_xstrdup(row->out_path);
    *hash = row->out_hash;
    return 1;
}

/* The object of input `name` for `profile` now: its path and content hash
 * (hashed from the file when this run made it). 0 when it has none. */
static int vr_object(vr_bind *b, const char *name, const char *profile,
                     char **path, uint64_t *hash)
{
    vr_capture c;
    const vr_art_row *row = vr_bind_record(b, name, profile);
    if (vr_bind_capture(b, NULL, name, profile, &c)) {
        *path = c.path;
        *hash = c.out_hash;
        c.path = NULL;
        int made = c.outcome == VR_EXECUTED;
        vr_capture_clear(&c);
        if (*path != NULL && made && vr_hash_file(*path, hash, NULL) != 0)
            *hash = VR_HASH_UNKNOWN;
        return *path != NULL;
    }
    if (row == NULL || row->out_path == NULL)
        return 0;
    *path = vr_xstrdup(row->out_path);
    *hash = row->out_hash;
    return 1;
}

/* 1 when every path of `in->inputs` is one of `paths` (which also holds
 * the objects this run kept: they were not published, so the scheduler
 * does not hand them in). */
static int vr_covers(const vsched_job_in *in, char **paths, size_t n)
{
    for (size_t i = 0; i < in->n_inputs; i++) {
        size_t k = 0;
        while (k < n && strcmp(in->inputs[i], paths[k]) != 0)
            k++;
        if (k == n)
            return 0;
    }
    return 1;
}

/* A link's output is one of the files it links: a target named like the
 * object of one of its inputs ([target.a.c.o] with a.c), whose program
 * would replace that object. VSCHED_EINVAL with a diagnostic (the core
 * then drops the temporary: nothing is published), else VSCHED_OK.
 * who[i] names what paths[i] is the output of. */
static int vr_job_clash(const vsched_ctx *ctx, const vsched_job_in *in,
                        char *const *paths, const char *const *who, size_t n,
                        const char *out_path)
{
    for (size_t i = 0; out_path != NULL && i < n; i++) {
        if (strcmp(paths[i], out_path) != 0)
            continue;
        /* Raw: whoever prints a diagnostic escapes it (progress.c). */
        char *msg = vr_strfmt("the output of target '%s' (%s) is the object "
                              "of %s, which it links: rename the target",
                              in->name, out_path, who[i]);
        ctx->diag(ctx, VSCHED_SEV_ERROR, in->name, 0, msg);
        free(msg);
        return VSCHED_EINVAL;
    }
    return VSCHED_OK;
}

static int w_job(void *inst, const vsched_ctx *ctx, const vsched_job_in *in,
                 vsched_artifact_out *out)
{
    vr_bind *b = inst;
    const vr_link_plan *lp =
        in->kind != NULL && in->name != NULL
            ? vr_link_of(b, in->kind, in->name, in->profile)
            : NULL;
    if (lp == NULL)
        return b->o.executor.ops->job(b->o.executor.inst, ctx, in, out);
    size_t room = lp->n_inputs + lp->n_libs + 1;
    char **paths = vr_xcalloc(room, sizeof *paths);
    const char **who = vr_xcalloc(room, sizeof *who);
    uint64_t *hashes = vr_xcalloc(room, sizeof *hashes);
    size_t n = 0;
    for (size_t i = 0; i < lp->n_inputs; i++)
        if (vr_object(b, lp->inputs[i], lp->obj_profile, &paths[n],
                      &hashes[n]))
            who[n++] = lp->inputs[i];
    for (size_t i = 0; i < lp->n_libs; i++)
        if (vr_job_output(b, lp->lib_kinds[i], lp->lib_names[i], in->profile,
                          &paths[n], &hashes[n]))
            who[n++] = lp->lib_names[i];
    vsched_job_in ordered = *in;
    if (vr_covers(in, paths, n)) {
        ordered.inputs = (const char *const *)paths;
        ordered.n_inputs = n;
    }
    const vr_profile_keys *pk = vr_bind_keys(b, in->profile);
    vr_capture cap = {0};
    vr_keys_job(cap.key, in->kind, in->name, in->profile,
                vr_bind_job_config(pk != NULL ? pk->config : 0, lp->salt),
                pk != NULL ? pk->tool : 0, (const char *const *)paths, hashes,
                n);
    const vr_job_row *row =
        vr_bind_job_record(b, in->kind, in->name, in->profile);
    char *ckey = vr_strmap_key(in->kind, in->name, in->profile);
    int rc = VSCHED_OK, done = 0;
    if (row != NULL && memcmp(row->key, cap.key, 16) == 0 &&
        ordered.inputs == (const char *const *)paths) {
        vr_verdict v = {0};
        vr_dirty_output(row->out_path, &row->out_st, row->out_hash, &v, NULL);
        if (v.reason == VR_CURRENT) {
            cap.outcome = VR_KEPT;
            cap.path = row->out_path ? vr_xstrdup(row->out_path) : NULL;
            cap.out_hash = row->out_hash;
            done = 1;
        }
        vr_verdict_clear(&v);
    }
    if (!done) {
        vsched_artifact_out mine;
        memset(&mine, 0, sizeof mine);
        cap.started_wall_ns = vr_wall_ns();
        uint64_t t0 = vr_mono_ns();
        rc = b->o.executor.ops->job(b->o.executor.inst, ctx, &ordered, &mine);
        if (rc == VSCHED_OK)
            rc = vr_job_clash(ctx, in, paths, who, n, mine.path);
        cap.duration_ns = vr_mono_ns() - t0;
        vr_take_deps(ctx, &mine, &cap);
        out->path = mine.path;
        out->tmp_path = mine.tmp_path;
        out->bytes = mine.bytes;
        out->len = mine.len;
        out->artifact_hash = mine.artifact_hash;
        cap.outcome = VR_EXECUTED;
        cap.path = mine.path != NULL ? vr_xstrdup(mine.path) : NULL;
        if (rc == VSCHED_OK)
            vr_journal_note(b->o.journal, mine.path,
                            mine.tmp_path); /* published next */
    }
    if (rc == VSCHED_OK)
        vr_capture_put(b, ckey, &cap);
    else
        vr_capture_clear(&cap);
    free(ckey);
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    free(who);
    free(hashes);
    return rc;
}

/* ---- life ------------------------------------------------------------------------- */

/* Contract: see bind.h. */
vr_bind *vr_bind_new(const vr_bind_opts *o)
{
    vr_bind *b = vr_xcalloc(1, sizeof *b);
    b->o = *o;
    pthread_mutex_init(&b->lock, NULL);
    b->records = vr_strmap_new(o->snap->n_art);
    for (size_t i = 0; i < o->snap->n_art; i++) {
        vr_strmap_put_owned(b->records,
                            vr_strmap_key(o->snap->art[i].source,
                                          o->snap->art[i].profile, NULL),
                            (long)i);
    }
    b->jobs = vr_strmap_new(o->snap->n_job);
    for (size_t i = 0; i < o->snap->n_job; i++) {
        const vr_job_row *j = &o->snap->job[i];
        vr_strmap_put_owned(
            b->jobs, vr_strmap_key(j->kind, j->name, j->profile), (long)i);
    }
    b->by_key = vr_strmap_new(64);
    b->lops = (vsched_loader_ops){
        .size = sizeof(vsched_loader_ops),
        .load = w_load,
        .exists = w_exists,
        .classify = w_classify,
        .realpath = w_realpath,
    };
    const vsched_executor_ops *x = o->executor.ops;
    b->xops = (vsched_executor_ops){
        .size = sizeof(vsched_executor_ops),
        .source = w_source,
        .extract_deps = w_extract_deps,
        .analysis = w_analysis,
        .artifact = w_artifact,
        .snapshot_free = w_snapshot_free,
        .job = VR_OPS_COVERS(x, vsched_executor_ops, job) && x->job != NULL
                   ? w_job
                   : NULL,
        /* ABI 1.1: the plugin's choice of blockers reaches the core. */
        .artifact_blockers =
            VR_OPS_COVERS(x, vsched_executor_ops, artifact_blockers)
                ? x->artifact_blockers
                : VSCHED_BLOCKERS_DIRECT,
    };
    return b;
}

/* Contract: see bind.h. */
void vr_bind_free(vr_bind *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < b->n_captures; i++)
        vr_capture_clear(&b->captures[i]);
    free(b->captures);
    vr_strmap_free(b->by_key);
    vr_strmap_free(b->records);
    vr_strmap_free(b->jobs);
    pthread_mutex_destroy(&b->lock);
    free(b);
}

/* Contract: see bind.h. */
void vr_bind_set_links(vr_bind *b, const vr_link_plan *links, size_t n)
{
    b->o.links = links;
    b->o.n_links = n;
}

/* Contract: see bind.h. */
vsched_loader_binding vr_bind_loader(vr_bind *b)
{
    return (vsched_loader_binding){&b->lops, b, b->o.loader.thread_safe};
}

/* Contract: see bind.h. */
vsched_executor_binding vr_bind_executor(vr_bind *b)
{
    return (vsched_executor_binding){&b->xops, b, b->o.executor.thread_safe};
}
