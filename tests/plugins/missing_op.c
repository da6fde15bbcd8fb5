/*
 * missing_op -- test plugin declaring the executor role with a required
 * operation (artifact) left NULL. The host must reject it at open time,
 * naming the role and the operation.
 */
#include <vsched/plugin.h>

static int missing_op_create(const vsched_ctx *ctx, const vsched_config *cfg,
                             void **inst, char **errmsg)
{
    *inst = NULL;
    return 0;
}

static void missing_op_destroy(void *inst)
{
}

static int missing_op_source(void *inst, const vsched_ctx *ctx,
                             const char *name, const char *kind,
                             const char *bytes, size_t len,
                             vsched_source_out *out)
{
    return VSCHED_EUNSUPPORTED;
}

static int missing_op_extract_deps(void *inst, const vsched_ctx *ctx,
                                   const char *name, const void *snapshot,
                                   vsched_deps_out *out)
{
    return VSCHED_EUNSUPPORTED;
}

static int missing_op_analysis(void *inst, const vsched_ctx *ctx,
                               const vsched_analysis_in *in, uint64_t *hash)
{
    return VSCHED_EUNSUPPORTED;
}

static void missing_op_snapshot_free(void *inst, void *snapshot)
{
}

static const vsched_executor_ops missing_op_executor = {
    .size = sizeof(vsched_executor_ops),
    .source = missing_op_source,
    .extract_deps = missing_op_extract_deps,
    .analysis = missing_op_analysis,
    .artifact = NULL, /* the defect under test */
    .snapshot_free = missing_op_snapshot_free,
};

static const vsched_plugin missing_op_descriptor = {
    .abi_major = VSCHED_PLUGIN_ABI_MAJOR,
    .abi_minor = VSCHED_PLUGIN_ABI_MINOR,
    .size = sizeof(vsched_plugin),
    .name = "missing_op",
    .version = "0",
    .description = "test: executor without its artifact operation",
    .roles = VSCHED_ROLE_EXECUTOR,
    .create = missing_op_create,
    .destroy = missing_op_destroy,
    .executor = &missing_op_executor,
};

VSCHED_PLUGIN_DEFINE(missing_op)
{
    return &missing_op_descriptor;
}
