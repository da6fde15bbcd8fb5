/*
 * cfgprobe -- a 1.1 executor whose instance is the vsched_config it was
 * created with, so tests/test_abi_1_1.c can call the typed getters the
 * host handed it. create() also reports one diagnostic of each severity,
 * and fails, blaming [SECTION] KEY, when `fail_key` (and optionally
 * `fail_section`) is set.
 */
#include <vsched/plugin.h>

#include <string.h>

static const vsched_key probe_schema[] = {
    {"num", VSCHED_KEY_STRING, NULL, "text for get_int", 0, 0,
     VSCHED_KEY_PER_PROFILE},
    {"flag", VSCHED_KEY_STRING, NULL, "text for get_bool", 0, 0,
     VSCHED_KEY_PER_PROFILE},
    {"words", VSCHED_KEY_STRING, NULL, "text for get_list", 0, 0,
     VSCHED_KEY_PER_PROFILE},
    {"dflt", VSCHED_KEY_INT, "7", "a default", 0, 100, 0},
    {"need", VSCHED_KEY_STRING, NULL, "required", 0, 0, VSCHED_KEY_REQUIRED},
    {"fail_key", VSCHED_KEY_STRING, NULL, "blame this key", 0, 0, 0},
    {"fail_section", VSCHED_KEY_STRING, NULL, "... in this section", 0, 0, 0},
    {"talk", VSCHED_KEY_BOOL, "false", "report diagnostics", 0, 0, 0},
    {"a_key_name_longer_than_sixteen", VSCHED_KEY_INT, "1", "columns", 0, 9,
     0},
};

static int p_create(const vsched_ctx *ctx, const vsched_config *cfg,
                    void **inst, char **errmsg)
{
    int talk = 0;
    (void)cfg->get_bool(cfg, NULL, "talk", &talk);
    if (talk) {
        ctx->diag(ctx, VSCHED_SEV_NOTE, NULL, 0, "a note");
        ctx->diag(ctx, VSCHED_SEV_WARNING, "probe.txt", 3, "a warning");
        ctx->diag(ctx, VSCHED_SEV_ERROR, "probe.txt", 0, "an error");
    }
    const char *key = NULL, *section = NULL;
    if (cfg->get_str(cfg, NULL, "fail_key", &key) == VSCHED_OK) {
        (void)cfg->get_str(cfg, NULL, "fail_section", &section);
        cfg->blame(cfg, section, key);
        const char msg[] = "refused on purpose";
        *errmsg = ctx->alloc(ctx, sizeof msg);
        if (*errmsg != NULL)
            memcpy(*errmsg, msg, sizeof msg);
        return VSCHED_ECONFIG;
    }
    *inst = (void *)cfg;
    return VSCHED_OK;
}

static void p_destroy(void *inst)
{
    (void)inst;
}

static int p_source(void *inst, const vsched_ctx *ctx, const char *name,
                    const char *kind, const char *bytes, size_t len,
                    vsched_source_out *out)
{
    (void)inst, (void)ctx, (void)name, (void)kind, (void)bytes, (void)len;
    (void)out;
    return VSCHED_EUNSUPPORTED;
}

static int p_deps(void *inst, const vsched_ctx *ctx, const char *name,
                  const void *snapshot, vsched_deps_out *out)
{
    (void)inst, (void)ctx, (void)name, (void)snapshot, (void)out;
    return VSCHED_EUNSUPPORTED;
}

static int p_analysis(void *inst, const vsched_ctx *ctx,
                      const vsched_analysis_in *in, uint64_t *hash)
{
    (void)inst, (void)ctx, (void)in, (void)hash;
    return VSCHED_EUNSUPPORTED;
}

static int p_artifact(void *inst, const vsched_ctx *ctx,
                      const vsched_artifact_in *in, vsched_artifact_out *out)
{
    (void)inst, (void)ctx, (void)in, (void)out;
    return VSCHED_EUNSUPPORTED;
}

static void p_free(void *inst, void *snapshot)
{
    (void)inst, (void)snapshot;
}

static const vsched_executor_ops p_ops = {
    .size = sizeof(vsched_executor_ops),
    .source = p_source,
    .extract_deps = p_deps,
    .analysis = p_analysis,
    .artifact = p_artifact,
    .snapshot_free = p_free,
};

static const vsched_plugin p_plugin = {
    .abi_major = VSCHED_PLUGIN_ABI_MAJOR,
    .abi_minor = VSCHED_PLUGIN_TARGET_MINOR,
    .size = sizeof(vsched_plugin),
    .name = "cfgprobe",
    .version = "1",
    .description = "hands its configuration to the test",
    .roles = VSCHED_ROLE_EXECUTOR,
    .schema = probe_schema,
    .n_schema = sizeof probe_schema / sizeof probe_schema[0],
    .create = p_create,
    .destroy = p_destroy,
    .executor = &p_ops,
};

VSCHED_PLUGIN_DEFINE(cfgprobe)
{
    return &p_plugin;
}
