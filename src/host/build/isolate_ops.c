/*
 * isolate_ops -- the executor binding of `[executor] isolate`: each
 * operation as a request to a worker and its answer read back into the
 * plugin's out-structs, and the snapshot proxies; see isolate.h. Every
 * request starts with one byte: 1 when the calling ctx offers the loader
 * (load and realpath), so the worker's ctx offers it too.
 */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "build/isolate_int.h"
#include "common/util.h"

static int vr_has_loader(const vsched_ctx *ctx)
{
    return VSCHED_HAS_FIELD(ctx, vsched_ctx, realpath) && ctx->load != NULL &&
           ctx->realpath != NULL;
}

static void vr_begin(vr_wbuf *w, const vsched_ctx *ctx)
{
    vr_w_u8(w, (uint8_t)vr_has_loader(ctx));
}

/* A snapshot reference: present, then the proxy's key. */
static void vr_w_ref(vr_wbuf *w, const void *snapshot)
{
    const vr_iso_snap *s = snapshot;
    vr_w_u8(w, s != NULL);
    if (s != NULL)
        vr_w_raw(w, s->key, sizeof s->key);
}

static char *vr_ctx_dup(const vsched_ctx *ctx, const char *s, int *oom)
{
    if (s == NULL)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = ctx->alloc(ctx, n);
    if (d == NULL)
        *oom = 1;
    else
        memcpy(d, s, n);
    return d;
}

/* ---- source and the proxies -------------------------------------------------- */

static void vr_snap_key(uint8_t key[16], const char *name, const char *kind,
                        const char *bytes, size_t len)
{
    XXH3_state_t *st = XXH3_createState();
    XXH3_128bits_reset(st);
    XXH3_128bits_update(st, name, strlen(name) + 1);
    XXH3_128bits_update(st, kind != NULL ? kind : "",
                        strlen(kind ? kind : "") + 1);
    if (len > 0)
        XXH3_128bits_update(st, bytes, len);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
    XXH3_freeState(st);
    memcpy(key, c.digest, 16);
}

static int i_source(void *inst, const vsched_ctx *ctx, const char *name,
                    const char *kind, const char *bytes, size_t len,
                    vsched_source_out *out)
{
    vr_isolate *iso = inst;
    vr_iso_snap *s = vr_xcalloc(1, sizeof *s);
    s->name = vr_xstrdup(name);
    s->kind = vr_xstrdup(kind != NULL ? kind : "");
    s->len = len;
    s->bytes = vr_xmalloc(len > 0 ? len : 1);
    if (len > 0)
        memcpy(s->bytes, bytes, len);
    vr_snap_key(s->key, s->name, s->kind, s->bytes, len);
    vr_wbuf w = {0};
    vr_begin(&w, ctx);
    vr_w_str(&w, s->name);
    vr_w_str(&w, s->kind);
    vr_w_raw(&w, s->key, 16);
    vr_w_blob(&w, s->bytes, len);
    vr_call c = {.iso = iso, .ctx = ctx, .op = "source", .name = name};
    int rc = vr_call_run(&c, VR_W_SOURCE, &w);
    vr_w_free(&w);
    if (rc == 0) {
        vr_rbuf r = {c.reply, c.reply_len, 0, 0};
        rc = vr_r_i32(&r);
        uint64_t h = vr_r_u64(&r);
        int has = vr_r_u8(&r);
        if (r.bad) {
            rc = vr_call_malformed(&c, "a truncated source result");
        } else {
            vr_call_done(&c);
            if (rc == 0) {
                out->content_hash = h;
                out->snapshot = has ? s : NULL;
                if (has)
                    s = NULL;
            }
        }
    }
    if (s != NULL) {
        free(s->name);
        free(s->kind);
        free(s->bytes);
        free(s);
    }
    return rc;
}

static void i_snapshot_free(void *inst, void *snapshot)
{
    (void)inst;
    vr_iso_snap *s = snapshot;
    if (s == NULL)
        return;
    free(s->name);
    free(s->kind);
    free(s->bytes);
    free(s);
}

/* ---- deps and analysis ------------------------------------------------------------- */

static int i_deps(void *inst, const vsched_ctx *ctx, const char *name,
                  const void *snapshot, vsched_deps_out *out)
{
    vr_wbuf w = {0};
    vr_begin(&w, ctx);
    vr_w_str(&w, name);
    vr_w_ref(&w, snapshot);
    const vr_iso_snap *refs[1] = {snapshot};
    vr_call c = {.iso = inst,
                 .ctx = ctx,
                 .op = "extract_deps",
                 .name = name,
                 .refs = refs,
                 .n_refs = 1};
    int rc = vr_call_run(&c, VR_W_DEPS, &w);
    vr_w_free(&w);
    if (rc != 0)
        return rc;
    vr_rbuf r = {c.reply, c.reply_len, 0, 0};
    rc = vr_r_i32(&r);
    if (vr_r_names(&r, ctx, &out->deps, &out->n_deps) != 0 ||
        vr_r_names(&r, ctx, &out->blockers, &out->n_blockers) != 0 ||
        r.off != r.len) {
        for (size_t i = 0; out->deps != NULL && i < out->n_deps; i++)
            ctx->free(ctx, out->deps[i]);
        if (out->deps != NULL)
            ctx->free(ctx, out->deps);
        memset(out, 0, sizeof *out);
        return vr_call_malformed(&c, "a malformed extract_deps result");
    }
    vr_call_done(&c);
    return rc;
}

static int i_analysis(void *inst, const vsched_ctx *ctx,
                      const vsched_analysis_in *in, uint64_t *hash)
{
    int blk = VSCHED_HAS_FIELD(in, vsched_analysis_in, blockers) &&
              in->blockers != NULL;
    size_t n = in->n_blockers;
    const vr_iso_snap **refs = vr_xcalloc(n + 1, sizeof *refs);
    refs[0] = in->snapshot;
    vr_wbuf w = {0};
    vr_begin(&w, ctx);
    vr_w_str(&w, in->name);
    vr_w_ref(&w, in->snapshot);
    vr_w_u64(&w, in->content_hash);
    vr_w_u64(&w, n);
    for (size_t i = 0; i < n; i++)
        vr_w_u64(&w, in->blocker_hashes != NULL ? in->blocker_hashes[i] : 0);
    vr_w_u8(&w, (uint8_t)blk);
    for (size_t i = 0; blk && i < n; i++) {
        vr_w_str(&w, in->blockers[i].name);
        vr_w_ref(&w, in->blockers[i].snapshot);
        refs[i + 1] = in->blockers[i].snapshot;
    }
    vr_call c = {.iso = inst,
                 .ctx = ctx,
                 .op = "analysis",
                 .name = in->name,
                 .refs = refs,
                 .n_refs = n + 1};
    int rc = vr_call_run(&c, VR_W_ANALYSIS, &w);
    vr_w_free(&w);
    free(refs);
    if (rc != 0)
        return rc;
    vr_rbuf r = {c.reply, c.reply_len, 0, 0};
    rc = vr_r_i32(&r);
    uint64_t h = vr_r_u64(&r);
    if (r.bad || r.off != r.len)
        return vr_call_malformed(&c, "a malformed analysis result");
    vr_call_done(&c);
    if (rc == 0)
        *hash = h;
    return rc;
}

/* ---- artifact and job --------------------------------------------------------------- */

/* Read an artifact or job result into *out (ctx->alloc'ed, host-owned).
 * The status, or VSCHED_EINVAL (malformed, reported). */
static int vr_read_artifact(vr_call *c, vsched_artifact_out *out)
{
    const vsched_ctx *ctx = c->ctx;
    vr_rbuf r = {c->reply, c->reply_len, 0, 0};
    int rc = vr_r_i32(&r);
    const char *path = vr_r_str(&r);
    const char *tmp = vr_r_str(&r);
    int present = 0;
    size_t len = 0;
    const char *bytes = vr_r_blob(&r, &present, &len);
    uint64_t ah = vr_r_u64(&r);
    char **deps = NULL;
    size_t n_deps = 0;
    if (r.bad || vr_r_names(&r, ctx, &deps, &n_deps) != 0 || r.off != r.len)
        return vr_call_malformed(c, "a malformed artifact result");
    int oom = 0;
    out->path = vr_ctx_dup(ctx, path, &oom);
    out->tmp_path = vr_ctx_dup(ctx, tmp, &oom);
    out->len = len;
    if (present) {
        out->bytes = ctx->alloc(ctx, len > 0 ? len : 1);
        if (out->bytes == NULL)
            oom = 1;
        else if (len > 0)
            memcpy(out->bytes, bytes, len);
    }
    out->artifact_hash = ah;
    out->deps = deps;
    out->n_deps = n_deps;
    vr_call_done(c);
    return oom && rc == 0 ? VSCHED_ENOMEM : rc;
}

static int i_artifact(void *inst, const vsched_ctx *ctx,
                      const vsched_artifact_in *in, vsched_artifact_out *out)
{
    int blk = VSCHED_HAS_FIELD(in, vsched_artifact_in, n_blockers) &&
              in->blockers != NULL;
    size_t n = blk ? in->n_blockers : 0;
    const vr_iso_snap **refs = vr_xcalloc(n + 1, sizeof *refs);
    refs[0] = in->snapshot;
    vr_wbuf w = {0};
    vr_begin(&w, ctx);
    vr_w_str(&w, in->name);
    vr_w_str(&w, in->profile);
    vr_w_ref(&w, in->snapshot);
    vr_w_u64(&w, in->analysis_hash);
    vr_w_u8(&w, (uint8_t)blk);
    vr_w_u64(&w, n);
    for (size_t i = 0; i < n; i++) {
        vr_w_str(&w, in->blockers[i].name);
        vr_w_ref(&w, in->blockers[i].snapshot);
        refs[i + 1] = in->blockers[i].snapshot;
    }
    vr_call c = {.iso = inst,
                 .ctx = ctx,
                 .op = "artifact",
                 .name = in->name,
                 .refs = refs,
                 .n_refs = n + 1};
    int rc = vr_call_run(&c, VR_W_ARTIFACT, &w);
    vr_w_free(&w);
    free(refs);
    return rc != 0 ? rc : vr_read_artifact(&c, out);
}

static int i_job(void *inst, const vsched_ctx *ctx, const vsched_job_in *in,
                 vsched_artifact_out *out)
{
    vr_wbuf w = {0};
    vr_begin(&w, ctx);
    vr_w_str(&w, in->kind);
    vr_w_str(&w, in->name);
    vr_w_str(&w, in->profile);
    vr_w_u64(&w, in->n_inputs);
    for (size_t i = 0; i < in->n_inputs; i++)
        vr_w_str(&w, in->inputs[i]);
    vr_call c = {.iso = inst, .ctx = ctx, .op = "job", .name = in->name};
    int rc = vr_call_run(&c, VR_W_JOB, &w);
    vr_w_free(&w);
    return rc != 0 ? rc : vr_read_artifact(&c, out);
}

/* Contract: see isolate_int.h. */
void vr_isolate_ops_init(vr_isolate *iso)
{
    const vsched_executor_ops *x = iso->desc->executor;
    int has_job =
        x->size >= offsetof(vsched_executor_ops, job) + sizeof x->job &&
        x->job != NULL;
    iso->ops = (vsched_executor_ops){
        .size = sizeof(vsched_executor_ops),
        .source = i_source,
        .extract_deps = i_deps,
        .analysis = i_analysis,
        .artifact = i_artifact,
        .snapshot_free = i_snapshot_free,
        .job = has_job ? i_job : NULL,
        .artifact_blockers =
            x->size >= offsetof(vsched_executor_ops, artifact_blockers) +
                           sizeof x->artifact_blockers
                ? x->artifact_blockers
                : VSCHED_BLOCKERS_DIRECT,
    };
}
