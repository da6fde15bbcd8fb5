/*
 * test_abi_layout -- the plugin ABI versioning policy, enforced.
 *
 * Policy (vsched-plugin(7), <vsched/plugin.h>): within one major version
 * fields are only appended, at the end of a struct that carries `size`,
 * and each such addition bumps the minor; nothing is removed, reordered or
 * retyped; status codes, key types and flag bits keep their values;
 * vsched_key (laid out by plugins in arrays) never changes size.
 *
 * Two halves:
 *   - at COMPILE time, every field of the frozen 1.0 layouts
 *     (include/vsched/abi/plugin-1.0.h) must sit at the same offset with the same
 *     size in the current header, and a struct that grew needs a minor
 *     above 0: breaking the policy breaks the build of this test;
 *   - at RUN time, a plugin compiled from the frozen 1.0 header alone
 *     (tests/abi/v1_0_plugin.c) is opened, checked, configured and driven
 *     through every operation by the current host.
 */
#include <ltdl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/plugin.h>
#include <vsched/vsched.h>

#include "config/config.h"
#include "config/plugin_host.h"
#include "cu.h"
#include <vsched/abi/plugin-1.0.h>

/* ---- compile-time layout checks ------------------------------------------ */

#define FIELD_SIZE(type, field) sizeof(((type *)0)->field)

/* Field `f` of current type `cur` is where v1.0 type `old` had it. */
#define SAME_FIELD(cur, old, f)                                               \
    _Static_assert(offsetof(cur, f) == offsetof(old, f),                      \
                   #cur "." #f " moved: ABI 1.0 plugins would break");        \
    _Static_assert(FIELD_SIZE(cur, f) == FIELD_SIZE(old, f),                  \
                   #cur "." #f " changed size: ABI 1.0 plugins would break")

/* A struct may grow (appended fields), only with a minor bump. */
#define MAY_GROW(cur, old)                                                    \
    _Static_assert(sizeof(cur) >= sizeof(old),                                \
                   #cur " shrank below its ABI 1.0 size");                    \
    _Static_assert(sizeof(cur) == sizeof(old) || VSCHED_PLUGIN_ABI_MINOR > 0, \
                   #cur " grew without a VSCHED_PLUGIN_ABI_MINOR bump")

_Static_assert(VSCHED_PLUGIN_ABI_MAJOR == V1_0_ABI_MAJOR,
               "major bump: freeze a new tests/abi/plugin_vN_0.h and point "
               "this test at it");
_Static_assert(VSCHED_PLUGIN_ABI_MINOR >= V1_0_ABI_MINOR,
               "the minor went backwards");

SAME_FIELD(vsched_ctx, v1_0_ctx, size);
SAME_FIELD(vsched_ctx, v1_0_ctx, is_cancelled);
SAME_FIELD(vsched_ctx, v1_0_ctx, diag);
SAME_FIELD(vsched_ctx, v1_0_ctx, alloc);
SAME_FIELD(vsched_ctx, v1_0_ctx, realloc);
SAME_FIELD(vsched_ctx, v1_0_ctx, free);
SAME_FIELD(vsched_ctx, v1_0_ctx, host);
MAY_GROW(vsched_ctx, v1_0_ctx);

SAME_FIELD(vsched_key, v1_0_key, name);
SAME_FIELD(vsched_key, v1_0_key, type);
SAME_FIELD(vsched_key, v1_0_key, dflt);
SAME_FIELD(vsched_key, v1_0_key, help);
SAME_FIELD(vsched_key, v1_0_key, min);
SAME_FIELD(vsched_key, v1_0_key, max);
SAME_FIELD(vsched_key, v1_0_key, flags);
_Static_assert(sizeof(vsched_key) == sizeof(v1_0_key),
               "vsched_key changed size: plugins lay it out in arrays, so "
               "that is a major change");

SAME_FIELD(vsched_config, v1_0_config, size);
SAME_FIELD(vsched_config, v1_0_config, section);
SAME_FIELD(vsched_config, v1_0_config, get);
SAME_FIELD(vsched_config, v1_0_config, config_dir);
SAME_FIELD(vsched_config, v1_0_config, host);
MAY_GROW(vsched_config, v1_0_config);

SAME_FIELD(vsched_loader_ops, v1_0_loader_ops, size);
SAME_FIELD(vsched_loader_ops, v1_0_loader_ops, load);
SAME_FIELD(vsched_loader_ops, v1_0_loader_ops, exists);
SAME_FIELD(vsched_loader_ops, v1_0_loader_ops, classify);
SAME_FIELD(vsched_loader_ops, v1_0_loader_ops, realpath);
MAY_GROW(vsched_loader_ops, v1_0_loader_ops);

SAME_FIELD(vsched_source_out, v1_0_source_out, snapshot);
SAME_FIELD(vsched_source_out, v1_0_source_out, content_hash);
MAY_GROW(vsched_source_out, v1_0_source_out);

SAME_FIELD(vsched_deps_out, v1_0_deps_out, deps);
SAME_FIELD(vsched_deps_out, v1_0_deps_out, n_deps);
SAME_FIELD(vsched_deps_out, v1_0_deps_out, blockers);
SAME_FIELD(vsched_deps_out, v1_0_deps_out, n_blockers);
MAY_GROW(vsched_deps_out, v1_0_deps_out);

SAME_FIELD(vsched_analysis_in, v1_0_analysis_in, name);
SAME_FIELD(vsched_analysis_in, v1_0_analysis_in, snapshot);
SAME_FIELD(vsched_analysis_in, v1_0_analysis_in, content_hash);
SAME_FIELD(vsched_analysis_in, v1_0_analysis_in, blocker_hashes);
SAME_FIELD(vsched_analysis_in, v1_0_analysis_in, n_blockers);
MAY_GROW(vsched_analysis_in, v1_0_analysis_in);

SAME_FIELD(vsched_artifact_in, v1_0_artifact_in, name);
SAME_FIELD(vsched_artifact_in, v1_0_artifact_in, profile);
SAME_FIELD(vsched_artifact_in, v1_0_artifact_in, snapshot);
SAME_FIELD(vsched_artifact_in, v1_0_artifact_in, analysis_hash);
MAY_GROW(vsched_artifact_in, v1_0_artifact_in);

SAME_FIELD(vsched_artifact_out, v1_0_artifact_out, path);
SAME_FIELD(vsched_artifact_out, v1_0_artifact_out, tmp_path);
SAME_FIELD(vsched_artifact_out, v1_0_artifact_out, bytes);
SAME_FIELD(vsched_artifact_out, v1_0_artifact_out, len);
SAME_FIELD(vsched_artifact_out, v1_0_artifact_out, artifact_hash);
MAY_GROW(vsched_artifact_out, v1_0_artifact_out);

SAME_FIELD(vsched_job_in, v1_0_job_in, kind);
SAME_FIELD(vsched_job_in, v1_0_job_in, name);
SAME_FIELD(vsched_job_in, v1_0_job_in, profile);
SAME_FIELD(vsched_job_in, v1_0_job_in, inputs);
SAME_FIELD(vsched_job_in, v1_0_job_in, n_inputs);
MAY_GROW(vsched_job_in, v1_0_job_in);

SAME_FIELD(vsched_executor_ops, v1_0_executor_ops, size);
SAME_FIELD(vsched_executor_ops, v1_0_executor_ops, source);
SAME_FIELD(vsched_executor_ops, v1_0_executor_ops, extract_deps);
SAME_FIELD(vsched_executor_ops, v1_0_executor_ops, analysis);
SAME_FIELD(vsched_executor_ops, v1_0_executor_ops, artifact);
SAME_FIELD(vsched_executor_ops, v1_0_executor_ops, snapshot_free);
SAME_FIELD(vsched_executor_ops, v1_0_executor_ops, job);
MAY_GROW(vsched_executor_ops, v1_0_executor_ops);

SAME_FIELD(vsched_plugin, v1_0_plugin, abi_major);
SAME_FIELD(vsched_plugin, v1_0_plugin, abi_minor);
SAME_FIELD(vsched_plugin, v1_0_plugin, size);
SAME_FIELD(vsched_plugin, v1_0_plugin, name);
SAME_FIELD(vsched_plugin, v1_0_plugin, version);
SAME_FIELD(vsched_plugin, v1_0_plugin, description);
SAME_FIELD(vsched_plugin, v1_0_plugin, roles);
SAME_FIELD(vsched_plugin, v1_0_plugin, flags);
SAME_FIELD(vsched_plugin, v1_0_plugin, schema);
SAME_FIELD(vsched_plugin, v1_0_plugin, n_schema);
SAME_FIELD(vsched_plugin, v1_0_plugin, create);
SAME_FIELD(vsched_plugin, v1_0_plugin, destroy);
SAME_FIELD(vsched_plugin, v1_0_plugin, loader);
SAME_FIELD(vsched_plugin, v1_0_plugin, executor);
MAY_GROW(vsched_plugin, v1_0_plugin);

/* What 1.1 appended lies wholly past the end of the 1.0 layout, so a 1.0
 * plugin (whose tables and out-structs end there) never overlaps it. */
#define APPENDED_AFTER(cur, old, f)                                           \
    _Static_assert(offsetof(cur, f) >= sizeof(old),                           \
                   #cur "." #f " is not appended after the 1.0 layout")
_Static_assert(VSCHED_PLUGIN_ABI_MINOR >= 1, "1.1 fields need minor >= 1");
APPENDED_AFTER(vsched_artifact_out, v1_0_artifact_out, deps);
APPENDED_AFTER(vsched_artifact_out, v1_0_artifact_out, n_deps);
APPENDED_AFTER(vsched_executor_ops, v1_0_executor_ops, identity);

/* Status codes keep their values (every 1.0 code exists, unchanged). */
#define SAME_STATUS(name, value)                                              \
    _Static_assert(VSCHED_##name == (value),                                  \
                   "VSCHED_" #name " changed its value");
V1_0_STATUS_LIST(SAME_STATUS)

_Static_assert((int)VSCHED_KEY_STRING == (int)V1_0_KEY_STRING &&
                   (int)VSCHED_KEY_INT == (int)V1_0_KEY_INT &&
                   (int)VSCHED_KEY_BOOL == (int)V1_0_KEY_BOOL &&
                   (int)VSCHED_KEY_PATH == (int)V1_0_KEY_PATH &&
                   (int)VSCHED_KEY_LIST == (int)V1_0_KEY_LIST,
               "a key type changed its value");
_Static_assert(VSCHED_KEY_REQUIRED == V1_0_KEY_REQUIRED &&
                   VSCHED_KEY_PER_PROFILE == V1_0_KEY_PER_PROFILE,
               "a key flag changed its value");
_Static_assert(VSCHED_ROLE_LOADER == V1_0_ROLE_LOADER &&
                   VSCHED_ROLE_EXECUTOR == V1_0_ROLE_EXECUTOR &&
                   VSCHED_PLUGIN_THREAD_SAFE == V1_0_PLUGIN_THREAD_SAFE,
               "a role or plugin flag changed its value");
_Static_assert((int)VSCHED_SEV_NOTE == (int)V1_0_SEV_NOTE &&
                   (int)VSCHED_SEV_WARNING == (int)V1_0_SEV_WARNING &&
                   (int)VSCHED_SEV_ERROR == (int)V1_0_SEV_ERROR,
               "a severity changed its value");

/* ---- run-time: a 1.0 plugin through the current host ---------------------- */

static char *v10_path(void)
{
    const char *top = getenv("top_builddir");
    char *p = NULL;
    if (asprintf(&p, "%s/tests/abi/v1_0_plugin",
                 top != NULL && top[0] != '\0' ? top : ".") < 0)
        abort();
    return p;
}

static void entry_symbol_name_is_unchanged(void)
{
    CU_ASSERT_STRING_EQUAL(VSCHED_PLUGIN_ENTRY_SYMBOL, V1_0_ENTRY_SYMBOL);
}

static void v1_0_plugin_opens_with_its_1_0_descriptor(void)
{
    char *path = v10_path(), *err = NULL;
    vr_plugin *p = NULL;
    int rc = vr_plugin_open(&p, path, NULL, &err);
    if (rc != 0)
        fprintf(stderr, "\n  open %s: %s\n", path, err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_PTR_NULL(err);
    const vsched_plugin *d = vr_plugin_descriptor(p);
    CU_ASSERT_EQUAL(d->abi_major, 1);
    CU_ASSERT_EQUAL(d->abi_minor, 0);
    CU_ASSERT_EQUAL(d->size, sizeof(v1_0_plugin));
    CU_ASSERT_STRING_EQUAL(d->name, "v1_0_plugin");
    CU_ASSERT_EQUAL(d->roles, VSCHED_ROLE_EXECUTOR);
    CU_ASSERT_EQUAL(d->n_schema, 1);
    CU_ASSERT_STRING_EQUAL(d->schema[0].name, "out_dir");
    CU_ASSERT_EQUAL(d->schema[0].type, VSCHED_KEY_PATH);
    CU_ASSERT_EQUAL(d->schema[0].flags, VSCHED_KEY_REQUIRED);
    CU_ASSERT_EQUAL(d->executor->size, sizeof(v1_0_executor_ops));
    CU_ASSERT_PTR_NULL(d->executor->job);
    vr_plugin_close(p);
    free(path);
}

/* Make a fresh directory; heap string. */
static char *tmpdir(void)
{
    char tmpl[] = "/tmp/vsched-abi-layout-XXXXXX";
    if (mkdtemp(tmpl) == NULL)
        abort();
    return strdup(tmpl);
}

static void v1_0_plugin_runs_every_operation_under_the_current_host(void)
{
    char *path = v10_path(), *err = NULL, *dir = tmpdir();
    vr_plugin *p = NULL;
    CU_ASSERT_EQUAL_FATAL(vr_plugin_open(&p, path, NULL, &err), 0);
    vr_config *cfg = NULL;
    CU_ASSERT_EQUAL_FATAL(vr_config_load_string(&cfg,
                                                "[executor]\nout_dir = out\n",
                                                "t.ini", dir, &err),
                          0);
    void *inst = NULL;
    int rc = vr_plugin_instantiate(p, VSCHED_ROLE_EXECUTOR, cfg, "executor",
                                   &inst, &err);
    if (rc != 0)
        fprintf(stderr, "\n  instantiate: %s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);

    const vsched_executor_ops *x = vr_plugin_descriptor(p)->executor;
    const vsched_ctx *ctx = vr_plugin_host_ctx();
    static const char text[] = "blocker b.txt\nhello\n";
    vsched_source_out so = {0};
    CU_ASSERT_EQUAL(
        x->source(inst, ctx, "a.txt", "other", text, sizeof text - 1, &so), 0);
    CU_ASSERT_PTR_NOT_NULL(so.snapshot);
    CU_ASSERT_NOT_EQUAL(so.content_hash, 0);

    vsched_deps_out deps = {0};
    CU_ASSERT_EQUAL_FATAL(
        x->extract_deps(inst, ctx, "a.txt", so.snapshot, &deps), 0);
    CU_ASSERT_EQUAL_FATAL(deps.n_deps, 1);
    CU_ASSERT_EQUAL_FATAL(deps.n_blockers, 1);
    CU_ASSERT_STRING_EQUAL(deps.deps[0], "b.txt");
    CU_ASSERT_STRING_EQUAL(deps.blockers[0], "b.txt");

    uint64_t bh = 42, h1 = 0, h2 = 0, h3 = 0;
    vsched_analysis_in ai = {"a.txt", so.snapshot, so.content_hash,
                             &bh,     1,           sizeof(vsched_analysis_in),
                             NULL};
    CU_ASSERT_EQUAL(x->analysis(inst, ctx, &ai, &h1), 0);
    CU_ASSERT_EQUAL(x->analysis(inst, ctx, &ai, &h2), 0);
    bh = 43;
    CU_ASSERT_EQUAL(x->analysis(inst, ctx, &ai, &h3), 0);
    CU_ASSERT_EQUAL(h1, h2);     /* pure */
    CU_ASSERT_NOT_EQUAL(h1, h3); /* covers the blocker */

    vsched_artifact_in in = {
        "a.txt", "release", so.snapshot, h1, sizeof(vsched_artifact_in),
        NULL,    0};
    vsched_artifact_out out = {0};
    CU_ASSERT_EQUAL_FATAL(x->artifact(inst, ctx, &in, &out), 0);
    char *want = NULL;
    if (asprintf(&want, "%s/out/release/a.txt.v10", dir) < 0)
        abort();
    CU_ASSERT_STRING_EQUAL(out.path, want);
    CU_ASSERT_PTR_NULL(out.tmp_path);
    CU_ASSERT_EQUAL(out.len, strlen("v1.0 release a.txt 20\n"));
    CU_ASSERT_NSTRING_EQUAL(out.bytes, "v1.0 release a.txt 20\n", out.len);
    CU_ASSERT_EQUAL(out.artifact_hash, h1);

    free(out.path);
    free(out.bytes);
    for (size_t i = 0; i < deps.n_deps; i++)
        free(deps.deps[i]);
    for (size_t i = 0; i < deps.n_blockers; i++)
        free(deps.blockers[i]);
    free(deps.deps);
    free(deps.blockers);
    x->snapshot_free(inst, so.snapshot);
    vr_plugin_destroy_instance(p, inst);
    vr_plugin_close(p);
    vr_config_free(cfg);
    char *cmd = NULL;
    if (asprintf(&cmd, "rm -rf '%s'", dir) < 0 || system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    free(cmd);
    free(want);
    free(dir);
    free(path);
    free(err);
}

static void v1_0_plugin_is_validated_against_its_schema(void)
{
    char *path = v10_path(), *err = NULL, *dir = tmpdir();
    vr_plugin *p = NULL;
    CU_ASSERT_EQUAL_FATAL(vr_plugin_open(&p, path, NULL, &err), 0);
    vr_config *cfg = NULL;
    CU_ASSERT_EQUAL_FATAL(vr_config_load_string(&cfg,
                                                "[executor]\nout_dri = x\n",
                                                "t.ini", dir, &err),
                          0);
    void *inst = NULL;
    CU_ASSERT_EQUAL(vr_plugin_instantiate(p, VSCHED_ROLE_EXECUTOR, cfg,
                                          "executor", &inst, &err),
                    VSCHED_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_STRING_EQUAL(err, "t.ini:2: unknown key 'out_dri' in "
                                "[executor]; did you mean 'out_dir'?");
    CU_ASSERT_PTR_NULL(inst);
    free(err);
    vr_plugin_close(p);
    vr_config_free(cfg);
    rmdir(dir);
    free(dir);
    free(path);
}

static const vr_cu_test tests[] = {
    {"entry_symbol_name_is_unchanged", entry_symbol_name_is_unchanged},
    {"v1_0_plugin_opens_with_its_1_0_descriptor",
     v1_0_plugin_opens_with_its_1_0_descriptor},
    {"v1_0_plugin_runs_every_operation_under_the_current_host",
     v1_0_plugin_runs_every_operation_under_the_current_host},
    {"v1_0_plugin_is_validated_against_its_schema",
     v1_0_plugin_is_validated_against_its_schema},
    {NULL, NULL},
};

int main(void)
{
    if (vr_plugin_host_init(NULL) != 0) {
        fprintf(stderr, "test_abi_layout: cannot initialise the plugin "
                        "host\n");
        return 99;
    }
    int rc = vr_cu_main("abi_layout", tests);
    vr_plugin_host_exit();
    return rc;
}
