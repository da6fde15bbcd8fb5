/*
 * bad_minor -- test plugin that needs a newer plugin ABI minor than the
 * host speaks. Otherwise complete, so that only the version check can
 * reject it.
 */
#include <vsched/plugin.h>

static int bad_minor_create(const vsched_ctx *ctx, const vsched_config *cfg,
                            void **inst, char **errmsg)
{
    *inst = NULL;
    return 0;
}

static void bad_minor_destroy(void *inst)
{
}

static int bad_minor_load(void *inst, const vsched_ctx *ctx, const char *name,
                          char **bytes, size_t *len)
{
    return VSCHED_EUNSUPPORTED;
}

static int bad_minor_exists(void *inst, const vsched_ctx *ctx,
                            const char *name)
{
    return 0;
}

static int bad_minor_classify(void *inst, const vsched_ctx *ctx,
                              const char *name, char *kind, size_t cap)
{
    return VSCHED_EUNSUPPORTED;
}

static int bad_minor_realpath(void *inst, const vsched_ctx *ctx,
                              const char *name, char **canonical)
{
    return VSCHED_EUNSUPPORTED;
}

static const vsched_loader_ops bad_minor_loader = {
    .size = sizeof(vsched_loader_ops),
    .load = bad_minor_load,
    .exists = bad_minor_exists,
    .classify = bad_minor_classify,
    .realpath = bad_minor_realpath,
};

static const vsched_plugin bad_minor_descriptor = {
    .abi_major = VSCHED_PLUGIN_ABI_MAJOR,
    .abi_minor = VSCHED_PLUGIN_ABI_MINOR + 1,
    .size = sizeof(vsched_plugin),
    .name = "bad_minor",
    .version = "0",
    .description = "test: needs a newer plugin ABI minor",
    .roles = VSCHED_ROLE_LOADER,
    .create = bad_minor_create,
    .destroy = bad_minor_destroy,
    .loader = &bad_minor_loader,
};

VSCHED_PLUGIN_DEFINE(bad_minor)
{
    return &bad_minor_descriptor;
}
