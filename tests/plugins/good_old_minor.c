/*
 * good_old_minor -- a valid loader + executor test plugin whose descriptor
 * is exactly as large as ABI 1.0's, as a plugin built against an older
 * minor would be: the host must accept it and read no field past `size`.
 *
 * Its schema exercises validation: a required key (label), an INT with a
 * range (jobs, 1..64), PATH keys (out_dir, marker), a BOOL (fail) and
 * per-profile keys (jobs, out_dir, flags).
 *
 * create() records what it saw: when `marker` is set it appends one line
 * per value, "SECTION.KEY=VALUE" ("(null)" for NULL), and a line
 * "config_dir=DIR", so a test can tell whether create ran and what the
 * host's vsched_config returned. With fail = true create() fails with the
 * message "boom".
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vsched/plugin.h>

static const vsched_key good_old_minor_schema[] = {
    {"label", VSCHED_KEY_STRING, NULL, "a name; required", 0, 0,
     VSCHED_KEY_REQUIRED},
    {"jobs", VSCHED_KEY_INT, "4", "parallel jobs", 1, 64,
     VSCHED_KEY_PER_PROFILE},
    {"out_dir", VSCHED_KEY_PATH, "out", "output directory", 0, 0,
     VSCHED_KEY_PER_PROFILE},
    {"marker", VSCHED_KEY_PATH, NULL, "file create() appends to", 0, 0, 0},
    {"fail", VSCHED_KEY_BOOL, "false", "make create() fail", 0, 0, 0},
    {"flags", VSCHED_KEY_STRING, "", "extra flags", 0, 0,
     VSCHED_KEY_PER_PROFILE},
};

typedef struct good_old_minor_inst {
    int unused;
} good_old_minor_inst;

static const char *const good_old_minor_recorded[][2] = {
    {NULL, "label"},
    {NULL, "jobs"},
    {NULL, "out_dir"},
    {NULL, "fail"},
    {NULL, "flags"},
    {NULL, "plugin"},
    {NULL, "nonexistent"},
    {"profile.debug", "jobs"},
    {"profile.debug", "out_dir"},
    {"profile.debug", "flags"},
};

static void good_old_minor_record(const vsched_config *cfg, const char *path)
{
    FILE *f = fopen(path, "a");
    if (f == NULL)
        return;
    size_t n =
        sizeof good_old_minor_recorded / sizeof good_old_minor_recorded[0];
    for (size_t i = 0; i < n; i++) {
        const char *sec = good_old_minor_recorded[i][0];
        const char *key = good_old_minor_recorded[i][1];
        if (sec == NULL)
            sec = cfg->section;
        const char *v = cfg->get(cfg, sec, key);
        fprintf(f, "%s.%s=%s\n", sec, key, v != NULL ? v : "(null)");
    }
    fprintf(f, "config_dir=%s\n", cfg->config_dir);
    fclose(f);
}

static int good_old_minor_true(const char *v)
{
    return v != NULL && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0 ||
                         strcmp(v, "yes") == 0 || strcmp(v, "on") == 0);
}

static int good_old_minor_create(const vsched_ctx *ctx,
                                 const vsched_config *cfg, void **inst,
                                 char **errmsg)
{
    const char *marker = cfg->get(cfg, cfg->section, "marker");
    if (marker != NULL)
        good_old_minor_record(cfg, marker);
    if (good_old_minor_true(cfg->get(cfg, cfg->section, "fail"))) {
        char *m = ctx->alloc(ctx, sizeof "boom");
        if (m != NULL)
            memcpy(m, "boom", sizeof "boom");
        *errmsg = m;
        return VSCHED_EERR;
    }
    good_old_minor_inst *g = calloc(1, sizeof *g);
    if (g == NULL)
        return VSCHED_ENOMEM;
    *inst = g;
    return 0;
}

static void good_old_minor_destroy(void *inst)
{
    free(inst);
}

static int good_old_minor_load(void *inst, const vsched_ctx *ctx,
                               const char *name, char **bytes, size_t *len)
{
    return VSCHED_ENOENT;
}

static int good_old_minor_exists(void *inst, const vsched_ctx *ctx,
                                 const char *name)
{
    return 0;
}

static int good_old_minor_classify(void *inst, const vsched_ctx *ctx,
                                   const char *name, char *kind, size_t cap)
{
    if (cap < 2)
        return VSCHED_EINVAL;
    memcpy(kind, "c", 2);
    return 0;
}

static int good_old_minor_realpath(void *inst, const vsched_ctx *ctx,
                                   const char *name, char **canonical)
{
    return VSCHED_ENOENT;
}

static int good_old_minor_source(void *inst, const vsched_ctx *ctx,
                                 const char *name, const char *kind,
                                 const char *bytes, size_t len,
                                 vsched_source_out *out)
{
    out->snapshot = NULL;
    out->content_hash = len;
    return 0;
}

static int good_old_minor_extract_deps(void *inst, const vsched_ctx *ctx,
                                       const char *name, const void *snapshot,
                                       vsched_deps_out *out)
{
    memset(out, 0, sizeof *out);
    return 0;
}

static int good_old_minor_analysis(void *inst, const vsched_ctx *ctx,
                                   const vsched_analysis_in *in,
                                   uint64_t *hash)
{
    *hash = in->content_hash;
    return 0;
}

static int good_old_minor_artifact(void *inst, const vsched_ctx *ctx,
                                   const vsched_artifact_in *in,
                                   vsched_artifact_out *out)
{
    memset(out, 0, sizeof *out);
    return 0;
}

static void good_old_minor_snapshot_free(void *inst, void *snapshot)
{
}

static const vsched_loader_ops good_old_minor_loader = {
    .size = sizeof(vsched_loader_ops),
    .load = good_old_minor_load,
    .exists = good_old_minor_exists,
    .classify = good_old_minor_classify,
    .realpath = good_old_minor_realpath,
};

static const vsched_executor_ops good_old_minor_executor = {
    .size = sizeof(vsched_executor_ops),
    .source = good_old_minor_source,
    .extract_deps = good_old_minor_extract_deps,
    .analysis = good_old_minor_analysis,
    .artifact = good_old_minor_artifact,
    .snapshot_free = good_old_minor_snapshot_free,
    .job = NULL,
};

static const vsched_plugin good_old_minor_descriptor = {
    .abi_major = VSCHED_PLUGIN_ABI_MAJOR,
    .abi_minor = 0,
    /* The size of an ABI 1.0 descriptor, whatever later minors append. */
    .size = offsetof(vsched_plugin, executor) +
            sizeof(const vsched_executor_ops *),
    .name = "good_old_minor",
    .version = "1.2.3",
    .description = "test: a valid plugin with an ABI 1.0-sized descriptor",
    .roles = VSCHED_ROLE_LOADER | VSCHED_ROLE_EXECUTOR,
    .flags = VSCHED_PLUGIN_THREAD_SAFE,
    .schema = good_old_minor_schema,
    .n_schema = sizeof good_old_minor_schema / sizeof *good_old_minor_schema,
    .create = good_old_minor_create,
    .destroy = good_old_minor_destroy,
    .loader = &good_old_minor_loader,
    .executor = &good_old_minor_executor,
};

VSCHED_PLUGIN_DEFINE(good_old_minor)
{
    return &good_old_minor_descriptor;
}
