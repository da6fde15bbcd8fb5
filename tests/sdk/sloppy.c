/*
 * sloppy -- a test executor that breaks the rules of <vsched/plugin.h> on
 * purpose, one of each kind, so tests/sdk.sh can check that
 * vsched-plugin-test reports every one:
 *
 *   source        leaks one ctx->alloc block per call;
 *   extract_deps  for a.txt: returns the dep name from malloc, not
 *                 ctx->alloc, and a non-canonical blocker "./x.txt";
 *   analysis      is not pure (a call counter feeds the hash);
 *   artifact      returns a relative path;
 *   classify/...  (it has no loader role).
 */
#include <stdlib.h>
#include <string.h>
#include <vsched/plugin.h>

typedef struct sloppy_inst {
    unsigned long calls;
} sloppy_inst;

static char *sloppy_host_strdup(const vsched_ctx *ctx, const char *s)
{
    char *d = ctx->alloc(ctx, strlen(s) + 1);
    return d != NULL ? strcpy(d, s) : NULL;
}

static int sloppy_source(void *inst, const vsched_ctx *ctx, const char *name,
                         const char *kind, const char *bytes, size_t len,
                         vsched_source_out *out)
{
    (void)ctx->alloc(ctx, 16); /* leaked host memory */
    out->snapshot = NULL;
    out->content_hash = len;
    return VSCHED_OK;
}

static int sloppy_extract_deps(void *inst, const vsched_ctx *ctx,
                               const char *name, const void *snapshot,
                               vsched_deps_out *out)
{
    memset(out, 0, sizeof *out);
    if (strcmp(name, "a.txt") != 0)
        return VSCHED_OK; /* only a.txt has deps */
    out->deps = ctx->alloc(ctx, sizeof(char *));
    out->blockers = ctx->alloc(ctx, sizeof(char *));
    if (out->deps == NULL || out->blockers == NULL)
        return VSCHED_ENOMEM;
    out->deps[0] = strdup("x.txt"); /* wrong allocator */
    out->n_deps = 1;
    out->blockers[0] = sloppy_host_strdup(ctx, "./x.txt"); /* not canonical */
    out->n_blockers = 1;
    return VSCHED_OK;
}

static int sloppy_analysis(void *inst, const vsched_ctx *ctx,
                           const vsched_analysis_in *in, uint64_t *hash)
{
    sloppy_inst *s = inst;
    *hash = in->content_hash + s->calls++; /* not a pure function */
    return VSCHED_OK;
}

static int sloppy_artifact(void *inst, const vsched_ctx *ctx,
                           const vsched_artifact_in *in,
                           vsched_artifact_out *out)
{
    memset(out, 0, sizeof *out);
    out->path = sloppy_host_strdup(ctx, "relative/out.txt");
    out->bytes = sloppy_host_strdup(ctx, "x");
    out->len = 1;
    return out->path != NULL && out->bytes != NULL ? VSCHED_OK : VSCHED_ENOMEM;
}

static void sloppy_snapshot_free(void *inst, void *snapshot)
{
}

static int sloppy_create(const vsched_ctx *ctx, const vsched_config *cfg,
                         void **inst, char **errmsg)
{
    *inst = calloc(1, sizeof(sloppy_inst));
    return *inst != NULL ? VSCHED_OK : VSCHED_ENOMEM;
}

static void sloppy_destroy(void *inst)
{
    free(inst);
}

static const vsched_executor_ops sloppy_executor = {
    .size = sizeof(vsched_executor_ops),
    .source = sloppy_source,
    .extract_deps = sloppy_extract_deps,
    .analysis = sloppy_analysis,
    .artifact = sloppy_artifact,
    .snapshot_free = sloppy_snapshot_free,
};

static const vsched_plugin sloppy_plugin = {
    .abi_major = VSCHED_PLUGIN_ABI_MAJOR,
    .abi_minor = VSCHED_PLUGIN_ABI_MINOR,
    .size = sizeof(vsched_plugin),
    .name = "sloppy",
    .version = "0",
    .description = "test: breaks the ABI's rules on purpose",
    .roles = VSCHED_ROLE_EXECUTOR,
    .flags = 0,
    .create = sloppy_create,
    .destroy = sloppy_destroy,
    .executor = &sloppy_executor,
};

VSCHED_PLUGIN_DEFINE(sloppy)
{
    return &sloppy_plugin;
}
