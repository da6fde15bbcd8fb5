/*
 * v1_0_plugin -- an executor built ONLY from the frozen ABI 1.0 layouts of
 * <vsched/abi/plugin-1.0.h>, never from the current <vsched/plugin.h>: what a plugin
 * compiled against vsched 1.0 looks like to every later 1.x host. The
 * tests load it through the current host (tests/test_abi_layout.c) and
 * build with it through vsched-run and vsched-plugin-test (tests/sdk.sh).
 *
 * Behaviour: a source line "blocker NAME" makes NAME a dep and a blocker;
 * the artifact is OUT_DIR/PROFILE/NAME.v10 holding "v1.0 PROFILE NAME
 * BYTES\n" (returned as bytes); the analysis hash mixes the content hash
 * with the blocker hashes. create() refuses a host whose context or
 * configuration is smaller than 1.0's (a host may only grow them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <vsched/abi/plugin-1.0.h>

static const v1_0_key v10_schema[] = {
    {"out_dir", V1_0_KEY_PATH, NULL, "directory receiving the outputs", 0, 0,
     V1_0_KEY_REQUIRED},
};

typedef struct v10_inst {
    char out_dir[4096];
} v10_inst;

typedef struct v10_snap {
    size_t len;
    size_t n;     /* blocker names in names[] */
    char names[]; /* NUL-separated */
} v10_snap;

static uint64_t v10_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static char *v10_strdup(const v1_0_ctx *ctx, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ctx->alloc(ctx, n);
    return d != NULL ? memcpy(d, s, n) : NULL;
}

static int v10_source(void *inst, const v1_0_ctx *ctx, const char *name,
                      const char *kind, const char *bytes, size_t len,
                      v1_0_source_out *out)
{
    v10_snap *s = malloc(sizeof *s + len + 1);
    if (s == NULL)
        return V1_0_ENOMEM;
    s->len = len;
    s->n = 0;
    char *w = s->names;
    for (const char *p = bytes, *end = bytes + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl != NULL ? nl : end;
        if (e - p > 8 && memcmp(p, "blocker ", 8) == 0) {
            memcpy(w, p + 8, (size_t)(e - p - 8));
            w[e - p - 8] = '\0';
            w += e - p - 8 + 1;
            s->n++;
        }
        p = e + 1;
    }
    out->snapshot = s;
    out->content_hash = v10_hash(0xcbf29ce484222325ull, bytes, len);
    return V1_0_OK;
}

static int v10_extract_deps(void *inst, const v1_0_ctx *ctx, const char *name,
                            const void *snapshot, v1_0_deps_out *out)
{
    const v10_snap *s = snapshot;
    memset(out, 0, sizeof *out);
    if (s->n == 0)
        return V1_0_OK;
    out->deps = ctx->alloc(ctx, s->n * sizeof(char *));
    out->blockers = ctx->alloc(ctx, s->n * sizeof(char *));
    if (out->deps == NULL || out->blockers == NULL)
        return V1_0_ENOMEM; /* the host frees what is set */
    const char *p = s->names;
    for (size_t i = 0; i < s->n; i++, p += strlen(p) + 1) {
        if ((out->deps[i] = v10_strdup(ctx, p)) == NULL)
            return V1_0_ENOMEM;
        out->n_deps++;
        if ((out->blockers[i] = v10_strdup(ctx, p)) == NULL)
            return V1_0_ENOMEM;
        out->n_blockers++;
    }
    return V1_0_OK;
}

static int v10_analysis(void *inst, const v1_0_ctx *ctx,
                        const v1_0_analysis_in *in, uint64_t *hash)
{
    uint64_t h = v10_hash(0xcbf29ce484222325ull, &in->content_hash,
                          sizeof in->content_hash);
    *hash = v10_hash(h, in->blocker_hashes,
                     in->n_blockers * sizeof *in->blocker_hashes);
    return V1_0_OK;
}

static void v10_mkdirs(char *path)
{
    for (char *p = path + 1; *p != '\0'; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0777);
            *p = '/';
        }
}

static int v10_artifact(void *inst, const v1_0_ctx *ctx,
                        const v1_0_artifact_in *in, v1_0_artifact_out *out)
{
    const v10_inst *v = inst;
    const v10_snap *s = in->snapshot;
    char path[8192], text[8192];
    memset(out, 0, sizeof *out);
    snprintf(path, sizeof path, "%s/%s/%s.v10", v->out_dir, in->profile,
             in->name);
    int n = snprintf(text, sizeof text, "v1.0 %s %s %zu\n", in->profile,
                     in->name, s->len);
    v10_mkdirs(path);
    out->path = v10_strdup(ctx, path);
    out->bytes = v10_strdup(ctx, text);
    if (out->path == NULL || out->bytes == NULL)
        return V1_0_ENOMEM;
    out->len = (size_t)n;
    out->artifact_hash = in->analysis_hash;
    return V1_0_OK;
}

static void v10_snapshot_free(void *inst, void *snapshot)
{
    free(snapshot);
}

static int v10_create(const v1_0_ctx *ctx, const v1_0_config *cfg, void **inst,
                      char **errmsg)
{
    if (ctx->size < sizeof(v1_0_ctx) || cfg->size < sizeof(v1_0_config)) {
        *errmsg = v10_strdup(ctx, "host context smaller than ABI 1.0's");
        return V1_0_EABI;
    }
    const char *out_dir = cfg->get(cfg, cfg->section, "out_dir");
    v10_inst *v = calloc(1, sizeof *v);
    if (v == NULL)
        return V1_0_ENOMEM;
    snprintf(v->out_dir, sizeof v->out_dir, "%s",
             out_dir != NULL ? out_dir : ".");
    *inst = v;
    return V1_0_OK;
}

static void v10_destroy(void *inst)
{
    free(inst);
}

static const v1_0_executor_ops v10_executor = {
    sizeof(v1_0_executor_ops),
    v10_source,
    v10_extract_deps,
    v10_analysis,
    v10_artifact,
    v10_snapshot_free,
    NULL,
};

/* Positional on purpose: this is the 1.0 field order. */
static const v1_0_plugin v10_descriptor = {
    V1_0_ABI_MAJOR,
    V1_0_ABI_MINOR,
    sizeof(v1_0_plugin),
    "v1_0_plugin",
    "1.0.0",
    "test: an executor compiled against the frozen ABI 1.0 layouts",
    V1_0_ROLE_EXECUTOR,
    V1_0_PLUGIN_THREAD_SAFE,
    v10_schema,
    sizeof v10_schema / sizeof v10_schema[0],
    v10_create,
    v10_destroy,
    NULL,
    &v10_executor,
};

V1_0_PLUGIN_DEFINE(v1_0_plugin)
{
    return &v10_descriptor;
}
