/*
 * target10_plugin -- an executor built against the CURRENT <vsched/plugin.h>
 * with VSCHED_PLUGIN_TARGET_MINOR 0: what a plugin author does to keep
 * loading on a 1.0 host after upgrading the headers. Its structs must have
 * exactly the frozen 1.0 sizes (checked here at compile time), and its
 * descriptor says 1.0 (checked by tests/test_abi_1_1.c at run time).
 */
#define VSCHED_PLUGIN_TARGET_MINOR 0
#include <vsched/abi/plugin-1.0.h>
#include <vsched/plugin.h>

#include <string.h>

_Static_assert(sizeof(vsched_ctx) == sizeof(v1_0_ctx), "ctx not 1.0");
_Static_assert(sizeof(vsched_config) == sizeof(v1_0_config), "config");
_Static_assert(sizeof(vsched_analysis_in) == sizeof(v1_0_analysis_in),
               "analysis_in not 1.0");
_Static_assert(sizeof(vsched_artifact_in) == sizeof(v1_0_artifact_in),
               "artifact_in not 1.0");
_Static_assert(sizeof(vsched_job_in) == sizeof(v1_0_job_in), "job_in");
_Static_assert(sizeof(vsched_executor_ops) == sizeof(v1_0_executor_ops),
               "executor_ops not 1.0");
_Static_assert(sizeof(vsched_plugin) == sizeof(v1_0_plugin), "descriptor");

static int t_source(void *inst, const vsched_ctx *ctx, const char *name,
                    const char *kind, const char *bytes, size_t len,
                    vsched_source_out *out)
{
    (void)inst, (void)ctx, (void)name, (void)kind;
    out->snapshot = (void *)1;
    out->content_hash = len + 1;
    (void)bytes;
    return VSCHED_OK;
}

static int t_deps(void *inst, const vsched_ctx *ctx, const char *name,
                  const void *snapshot, vsched_deps_out *out)
{
    (void)inst, (void)ctx, (void)name, (void)snapshot, (void)out;
    return VSCHED_OK;
}

static int t_analysis(void *inst, const vsched_ctx *ctx,
                      const vsched_analysis_in *in, uint64_t *hash)
{
    (void)inst, (void)ctx;
    *hash = in->content_hash;
    return VSCHED_OK;
}

static int t_artifact(void *inst, const vsched_ctx *ctx,
                      const vsched_artifact_in *in, vsched_artifact_out *out)
{
    (void)inst, (void)ctx, (void)in, (void)out;
    return VSCHED_OK;
}

static void t_free(void *inst, void *snapshot)
{
    (void)inst, (void)snapshot;
}

static int t_create(const vsched_ctx *ctx, const vsched_config *cfg,
                    void **inst, char **errmsg)
{
    (void)ctx, (void)cfg, (void)errmsg;
    *inst = (void *)1;
    return VSCHED_OK;
}

static void t_destroy(void *inst)
{
    (void)inst;
}

static const vsched_executor_ops t_ops = {
    .size = sizeof(vsched_executor_ops),
    .source = t_source,
    .extract_deps = t_deps,
    .analysis = t_analysis,
    .artifact = t_artifact,
    .snapshot_free = t_free,
};

static const vsched_plugin t_plugin = {
    .abi_major = VSCHED_PLUGIN_ABI_MAJOR,
    .abi_minor = VSCHED_PLUGIN_TARGET_MINOR,
    .size = sizeof(vsched_plugin),
    .name = "target10_plugin",
    .version = "1",
    .description = "built with 1.1 headers for 1.0 hosts",
    .roles = VSCHED_ROLE_EXECUTOR,
    .create = t_create,
    .destroy = t_destroy,
    .executor = &t_ops,
};

VSCHED_PLUGIN_DEFINE(target10_plugin)
{
    return &t_plugin;
}
