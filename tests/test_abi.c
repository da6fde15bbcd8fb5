/*
 * test_abi -- the plugin host's checks: finding plugins, ABI versions,
 * required operations, schema validation before create(), create()
 * failures, the configuration a plugin sees, and listing/describing.
 *
 * The test-only plugins of tests/plugins/ are found under
 * $top_builddir/tests/plugins (top_builddir is set by `make check`; "."
 * when unset). The built-ins fs, cc and null are linked in with
 * -dlpreopen.
 */
#include <ltdl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "config/plugin_host.h"
#include "cu.h"

#ifndef VSCHED_PLUGINSDIR
#define VSCHED_PLUGINSDIR "/usr/local/lib/vsched/plugins"
#endif

/* ---- helpers ------------------------------------------------------------ */

/* Absolute $top_builddir/tests/plugins (static storage). */
static const char *plugdir(void)
{
    static char dir[4096];
    if (dir[0] == '\0') {
        const char *top = getenv("top_builddir");
        char rel[4096];
        snprintf(rel, sizeof rel, "%s/tests/plugins",
                 top != NULL && top[0] != '\0' ? top : ".");
        if (realpath(rel, dir) == NULL)
            snprintf(dir, sizeof dir, "%s", rel);
    }
    return dir;
}

/* Heap string "DIR/rest". */
static char *in_dir(const char *dir, const char *rest)
{
    char *s = NULL;
    if (asprintf(&s, "%s/%s", dir, rest) < 0)
        abort();
    return s;
}

/* A fresh empty directory (heap string). */
static char *make_tmpdir(void)
{
    char tmpl[] = "/tmp/vsched-abi-XXXXXX";
    if (mkdtemp(tmpl) == NULL)
        abort();
    return strdup(tmpl);
}

static void remove_tree(const char *dir)
{
    char *cmd = NULL;
    if (asprintf(&cmd, "rm -rf '%s'", dir) < 0)
        abort();
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    free(cmd);
}

/* Parse INI text as "test.ini" in `dir`; fails the test on error. */
static vr_config *config(const char *text, const char *dir)
{
    vr_config *cfg = NULL;
    char *err = NULL;
    int rc = vr_config_load_string(&cfg, text, "test.ini", dir, &err);
    if (rc != 0)
        fprintf(stderr, "config: %s\n", err);
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    free(err);
    return cfg;
}

/* Open by name; expects failure with exactly status `want` and message
 * `msg` (not compared when NULL). */
static void expect_open_error(const char *name, const vr_config *cfg, int want,
                              const char *msg)
{
    vr_plugin *p = NULL;
    char *err = NULL;
    int rc = vr_plugin_open(&p, name, cfg, &err);
    CU_ASSERT_EQUAL(rc, want);
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    if (msg != NULL && strcmp(err, msg) != 0)
        fprintf(stderr, "\n  got:  %s\n  want: %s\n", err, msg);
    if (msg != NULL)
        CU_ASSERT_STRING_EQUAL(err, msg);
    vr_plugin_close(p);
    free(err);
}

static vr_plugin *open_ok(const char *name, const vr_config *cfg)
{
    vr_plugin *p = NULL;
    char *err = NULL;
    int rc = vr_plugin_open(&p, name, cfg, &err);
    if (rc != 0)
        fprintf(stderr, "\n  open %s: %s\n", name, err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NULL(err);
    free(err);
    return p;
}

/* The test plugin `mod` opened by path. */
static vr_plugin *open_test_plugin(const char *mod)
{
    char *path = in_dir(plugdir(), mod);
    vr_plugin *p = open_ok(path, NULL);
    free(path);
    return p;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int contains(const char *hay, const char *needle)
{
    return hay != NULL && strstr(hay, needle) != NULL;
}

/* ---- ABI and descriptor checks ------------------------------------------ */

static void major_mismatch_names_both_versions(void)
{
    char *path = in_dir(plugdir(), "bad_major"), *want = NULL;
    if (asprintf(&want,
                 "plugin 'bad_major' was built for plugin ABI 2.0; this "
                 "vsched-run speaks ABI 1.%d (major versions must match): "
                 "rebuild the plugin against vsched 1.x headers",
                 VSCHED_PLUGIN_ABI_MINOR) < 0)
        abort();
    expect_open_error(path, NULL, VSCHED_EABI, want);
    free(want);
    free(path);
}

static void newer_minor_names_both_versions_and_says_upgrade(void)
{
    char *path = in_dir(plugdir(), "bad_minor"), *want = NULL;
    if (asprintf(&want,
                 "plugin 'bad_minor' needs plugin ABI 1.%d, newer than this "
                 "vsched-run's 1.%d: upgrade vsched-run, or rebuild the "
                 "plugin with -DVSCHED_PLUGIN_TARGET_MINOR=%d",
                 VSCHED_PLUGIN_ABI_MINOR + 1, VSCHED_PLUGIN_ABI_MINOR,
                 VSCHED_PLUGIN_ABI_MINOR) < 0)
        abort();
    expect_open_error(path, NULL, VSCHED_EABI, want);
    free(want);
    free(path);
}

static void missing_entry_symbol_says_not_a_plugin(void)
{
    char *path = in_dir(plugdir(), "no_entry");
    char *so = in_dir(plugdir(), ".libs/no_entry.so");
    char *want = NULL;
    if (asprintf(&want,
                 "%s is not a vsched plugin: no symbol "
                 "no_entry_LTX_vsched_plugin_entry or "
                 "vsched_plugin_entry (a module renamed after it "
                 "was built keeps its old name's symbol: rebuild it "
                 "with VSCHED_PLUGIN_DEFINE(no_entry))",
                 so) < 0)
        abort();
    expect_open_error(path, NULL, VSCHED_EABI, want);
    free(want);
    free(so);
    free(path);
}

static void missing_required_op_names_role_and_operation(void)
{
    char *path = in_dir(plugdir(), "missing_op");
    expect_open_error(path, NULL, VSCHED_EABI,
                      "plugin 'missing_op' declares role executor but its "
                      "operation 'artifact' is missing");
    free(path);
}

static void older_minor_sized_descriptor_is_accepted(void)
{
    vr_plugin *p = open_test_plugin("good_old_minor");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    const vsched_plugin *d = vr_plugin_descriptor(p);
    CU_ASSERT_STRING_EQUAL(d->name, "good_old_minor");
    CU_ASSERT_STRING_EQUAL(d->version, "1.2.3");
    CU_ASSERT_EQUAL(d->size, offsetof(vsched_plugin, executor) +
                                 sizeof(const vsched_executor_ops *));
    char *so = in_dir(plugdir(), ".libs/good_old_minor.so");
    CU_ASSERT_STRING_EQUAL(vr_plugin_origin(p), so);
    free(so);
    vr_plugin_close(p);
}

static void empty_name_is_invalid(void)
{
    expect_open_error("", NULL, VSCHED_EINVAL, "plugin name is empty");
}

/* ---- search ------------------------------------------------------------- */

static void not_found_lists_every_searched_dir(void)
{
    setenv("VSCHED_PLUGIN_PATH", "/nonexistent/e1::/nonexistent/e2", 1);
    vr_config *cfg =
        config("[vsched]\nplugin_path = p1 p2:../p3\n", "/nonexistent/conf");
    expect_open_error(
        "nosuch", cfg, VSCHED_ENOENT,
        "plugin 'nosuch' not found (searched: built-in, "
        "/nonexistent/conf/p1, /nonexistent/conf/p2, "
        "/nonexistent/p3, /nonexistent/e1, /nonexistent/e2, " VSCHED_PLUGINSDIR
        "); set [vsched] plugin_path or "
        "VSCHED_PLUGIN_PATH");
    vr_config_free(cfg);
    unsetenv("VSCHED_PLUGIN_PATH");
}

static void not_found_without_config_lists_env_and_installed_dir(void)
{
    unsetenv("VSCHED_PLUGIN_PATH");
    expect_open_error(
        "nosuch", NULL, VSCHED_ENOENT,
        "plugin 'nosuch' not found (searched: built-in, " VSCHED_PLUGINSDIR
        "); set [vsched] plugin_path or "
        "VSCHED_PLUGIN_PATH");
}

static void env_plugin_path_is_searched(void)
{
    char *path = NULL;
    if (asprintf(&path, "/nonexistent:%s", plugdir()) < 0)
        abort();
    setenv("VSCHED_PLUGIN_PATH", path, 1);
    vr_plugin *p = open_ok("good_old_minor", NULL);
    CU_ASSERT_PTR_NOT_NULL(p);
    if (p != NULL)
        CU_ASSERT_STRING_EQUAL(vr_plugin_descriptor(p)->name,
                               "good_old_minor");
    vr_plugin_close(p);
    unsetenv("VSCHED_PLUGIN_PATH");
    free(path);
}

static void config_plugin_path_is_relative_to_ini_dir(void)
{
    unsetenv("VSCHED_PLUGIN_PATH");
    /* The INI "sits" in tests/plugins/.libs: ".." is tests/plugins. */
    char *libs = in_dir(plugdir(), ".libs");
    vr_config *cfg = config("[vsched]\nplugin_path = /nonexistent ..\n", libs);
    vr_plugin *p = open_ok("good_old_minor", cfg);
    CU_ASSERT_PTR_NOT_NULL(p);
    vr_plugin_close(p);
    vr_config_free(cfg);
    free(libs);
}

static void found_but_unloadable_stops_search_with_reason(void)
{
    char *tmp = make_tmpdir();
    char *so = in_dir(tmp, "good_old_minor.so");
    FILE *f = fopen(so, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("not an ELF file\n", f);
    fclose(f);
    /* The broken copy comes first; the good one (env) must not be used. */
    setenv("VSCHED_PLUGIN_PATH", plugdir(), 1);
    char *text = NULL;
    if (asprintf(&text, "[vsched]\nplugin_path = %s\n", tmp) < 0)
        abort();
    vr_config *cfg = config(text, tmp);
    vr_plugin *p = NULL;
    char *err = NULL;
    int rc = vr_plugin_open(&p, "good_old_minor", cfg, &err);
    CU_ASSERT_EQUAL(rc, VSCHED_EERR);
    CU_ASSERT_PTR_NULL(p);
    char *want = NULL;
    if (asprintf(&want, "cannot load plugin 'good_old_minor' from %s: ", so) <
        0)
        abort();
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(strncmp(err, want, strlen(want)), 0);
    CU_ASSERT(strlen(err) > strlen(want)); /* libltdl's reason follows */
    free(want);
    free(err);
    vr_plugin_close(p);
    vr_config_free(cfg);
    free(text);
    unsetenv("VSCHED_PLUGIN_PATH");
    remove_tree(tmp);
    free(so);
    free(tmp);
}

static void path_with_slash_is_opened_as_is(void)
{
    char *la = in_dir(plugdir(), "good_old_minor.la");
    vr_plugin *p = open_ok(la, NULL);
    CU_ASSERT_PTR_NOT_NULL(p);
    vr_plugin_close(p);
    free(la);
}

static void path_with_slash_not_found_names_the_files_tried(void)
{
    expect_open_error("/nonexistent/x", NULL, VSCHED_ENOENT,
                      "plugin file '/nonexistent/x' not found (tried "
                      "/nonexistent/x.la and /nonexistent/x.so)");
    expect_open_error("./nothing.so", NULL, VSCHED_ENOENT,
                      "plugin file './nothing.so' not found");
}

/* ---- built-ins (linked with -dlpreopen) --------------------------------- */

static void builtins_open_by_name_without_search_path(void)
{
    unsetenv("VSCHED_PLUGIN_PATH");
    static const char *const names[] = {"fs", "cc", "null"};
    for (size_t i = 0; i < 3; i++) {
        vr_plugin *p = open_ok(names[i], NULL);
        CU_ASSERT_PTR_NOT_NULL(p);
        if (p == NULL)
            continue;
        CU_ASSERT_STRING_EQUAL(vr_plugin_origin(p), "built-in");
        CU_ASSERT_STRING_EQUAL(vr_plugin_descriptor(p)->name, names[i]);
        vr_plugin_close(p);
    }
}

static void role_not_provided_is_refused(void)
{
    vr_plugin *p = open_ok("fs", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    vr_config *cfg = config("[executor]\nplugin = fs\n", "/tmp");
    void *inst = NULL;
    char *err = NULL;
    int rc = vr_plugin_instantiate(p, VSCHED_ROLE_EXECUTOR, cfg, "executor",
                                   &inst, &err);
    CU_ASSERT_EQUAL(rc, VSCHED_EINVAL);
    CU_ASSERT_PTR_NULL(inst);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_STRING_EQUAL(err, "plugin 'fs' does not provide role executor");
    free(err);
    vr_config_free(cfg);
    vr_plugin_close(p);
}

/* ---- instantiate: schema, create, configuration ------------------------- */

/* Instantiate good_old_minor as `role` from INI text in a fresh directory
 * (where create() writes its marker, "marker.txt"). Returns the status;
 * *err_out (may be NULL) receives the message, *marker_out the marker
 * file's contents or NULL when create() never ran. */
static int instantiate_good(unsigned role, const char *section,
                            const char *ini, char **err_out, char **marker_out,
                            char **dir_out)
{
    char *tmp = make_tmpdir();
    vr_config *cfg = config(ini, tmp);
    vr_plugin *p = open_test_plugin("good_old_minor");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    void *inst = NULL;
    char *err = NULL;
    int rc = vr_plugin_instantiate(p, role, cfg, section, &inst, &err);
    if (rc == 0) {
        CU_ASSERT_PTR_NOT_NULL(inst);
        CU_ASSERT_PTR_NULL(err);
    } else {
        CU_ASSERT_PTR_NULL(inst);
        CU_ASSERT_PTR_NOT_NULL(err);
    }
    char *marker = in_dir(tmp, "marker.txt");
    if (marker_out != NULL)
        *marker_out = read_file(marker);
    free(marker);
    vr_plugin_destroy_instance(p, inst);
    vr_plugin_close(p);
    vr_config_free(cfg);
    if (err_out != NULL)
        *err_out = err;
    else
        free(err);
    remove_tree(tmp);
    if (dir_out != NULL)
        *dir_out = tmp;
    else
        free(tmp);
    return rc;
}

static void schema_error_is_reported_before_create(void)
{
    char *err = NULL, *marker = NULL;
    int rc = instantiate_good(VSCHED_ROLE_EXECUTOR, "executor",
                              "[executor]\nplugin = good_old_minor\n"
                              "label = x\nmarker = marker.txt\njobs = 100\n",
                              &err, &marker, NULL);
    CU_ASSERT_EQUAL(rc, VSCHED_ECONFIG);
    CU_ASSERT(contains(err, "test.ini:5: "));
    CU_ASSERT(contains(err, "jobs"));
    CU_ASSERT(contains(err, "1..64"));
    CU_ASSERT_PTR_NULL(marker); /* create() never ran */
    free(err);
    free(marker);
}

static void missing_required_key_is_reported_before_create(void)
{
    char *err = NULL, *marker = NULL;
    int rc = instantiate_good(VSCHED_ROLE_EXECUTOR, "executor",
                              "[executor]\nplugin = good_old_minor\n"
                              "marker = marker.txt\n",
                              &err, &marker, NULL);
    CU_ASSERT_EQUAL(rc, VSCHED_ECONFIG);
    CU_ASSERT(contains(err, "test.ini"));
    CU_ASSERT(contains(err, "label"));
    CU_ASSERT_PTR_NULL(marker);
    free(err);
    free(marker);
}

static void unknown_key_is_reported_before_create(void)
{
    char *err = NULL, *marker = NULL;
    int rc = instantiate_good(VSCHED_ROLE_EXECUTOR, "executor",
                              "[executor]\nplugin = good_old_minor\n"
                              "label = x\nmarker = marker.txt\nflag = -O2\n",
                              &err, &marker, NULL);
    CU_ASSERT_EQUAL(rc, VSCHED_ECONFIG);
    CU_ASSERT(contains(err, "test.ini:5: "));
    CU_ASSERT(contains(err, "flag"));
    CU_ASSERT_PTR_NULL(marker);
    free(err);
    free(marker);
}

static void profile_section_accepts_only_per_profile_keys(void)
{
    char *err = NULL, *marker = NULL;
    int rc = instantiate_good(VSCHED_ROLE_EXECUTOR, "executor",
                              "[executor]\nplugin = good_old_minor\n"
                              "label = x\nmarker = marker.txt\n"
                              "[profile.debug]\nfail = true\n",
                              &err, &marker, NULL);
    CU_ASSERT_EQUAL(rc, VSCHED_ECONFIG);
    CU_ASSERT(contains(err, "test.ini:6: "));
    CU_ASSERT(contains(err, "fail"));
    CU_ASSERT_PTR_NULL(marker);
    free(err);
    free(marker);
}

static void profile_sections_are_not_checked_for_a_loader(void)
{
    char *err = NULL, *marker = NULL;
    int rc = instantiate_good(VSCHED_ROLE_LOADER, "loader",
                              "[loader]\nplugin = good_old_minor\n"
                              "label = x\nmarker = marker.txt\n"
                              "[profile.debug]\nfail = true\n",
                              &err, &marker, NULL);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NULL(err);
    CU_ASSERT(contains(marker, "loader.label=x\n"));
    free(err);
    free(marker);
}

static void create_failure_carries_plugin_message(void)
{
    char *err = NULL, *marker = NULL;
    int rc = instantiate_good(VSCHED_ROLE_EXECUTOR, "executor",
                              "[executor]\nplugin = good_old_minor\n"
                              "label = x\nmarker = marker.txt\nfail = 1\n",
                              &err, &marker, NULL);
    CU_ASSERT_EQUAL(rc, VSCHED_EERR);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_STRING_EQUAL(err, "plugin 'good_old_minor': cannot create "
                                "executor: boom");
    CU_ASSERT_PTR_NOT_NULL(marker); /* create() did run */
    free(err);
    free(marker);
}

static void config_get_returns_defaults_and_absolute_paths(void)
{
    char *marker = NULL, *dir = NULL;
    int rc = instantiate_good(VSCHED_ROLE_EXECUTOR, "executor",
                              "[executor]\nplugin = good_old_minor\n"
                              "label = x\nmarker = marker.txt\n"
                              "[profile.debug]\njobs = 8\n"
                              "out_dir = ../dbg\n",
                              NULL, &marker, &dir);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(marker);
    char *want = NULL;
    const char *parent = "/tmp"; /* make_tmpdir() makes /tmp/vsched-abi-* */
    if (asprintf(&want,
                 "executor.label=x\n"
                 "executor.jobs=4\n"
                 "executor.out_dir=%s/out\n"
                 "executor.fail=false\n"
                 "executor.flags=\n"
                 "executor.plugin=good_old_minor\n"
                 "executor.nonexistent=(null)\n"
                 "profile.debug.jobs=8\n"
                 "profile.debug.out_dir=%s/dbg\n"
                 "profile.debug.flags=(null)\n"
                 "config_dir=%s\n",
                 dir, parent, dir) < 0)
        abort();
    if (strcmp(marker, want) != 0)
        fprintf(stderr, "\n  got:\n%s  want:\n%s", marker, want);
    CU_ASSERT_STRING_EQUAL(marker, want);
    free(want);
    free(marker);
    free(dir);
}

static void destroying_twice_is_harmless(void)
{
    char *tmp = make_tmpdir();
    vr_config *cfg = config("[loader]\nlabel = x\n", tmp);
    vr_plugin *p = open_test_plugin("good_old_minor");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    void *a = NULL, *b = NULL;
    char *err = NULL;
    CU_ASSERT_EQUAL(
        vr_plugin_instantiate(p, VSCHED_ROLE_LOADER, cfg, "loader", &a, &err),
        0);
    CU_ASSERT_EQUAL(
        vr_plugin_instantiate(p, VSCHED_ROLE_LOADER, cfg, "loader", &b, &err),
        0);
    CU_ASSERT_PTR_NULL(err);
    CU_ASSERT_PTR_NOT_NULL(a);
    CU_ASSERT(a != b);
    vr_config_free(cfg); /* instances do not borrow the vr_config */
    vr_plugin_destroy_instance(p, a);
    vr_plugin_destroy_instance(p, a); /* ignored */
    vr_plugin_close(p);               /* destroys b */
    remove_tree(tmp);
    free(tmp);
}

/* ---- list, describe, context -------------------------------------------- */

static char *capture_describe(const char *name, int *rc, char **err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    *rc = vr_plugin_describe(f, name, NULL, err);
    fclose(f);
    return buf;
}

static void describe_prints_every_key_with_type_default_range_flags(void)
{
    char *path = in_dir(plugdir(), "good_old_minor");
    int rc = 0;
    char *err = NULL;
    char *text = capture_describe(path, &rc, &err);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_PTR_NULL(err);
    CU_ASSERT(contains(text, "name:          good_old_minor\n"));
    CU_ASSERT(contains(text, "version:       1.2.3\n"));
    CU_ASSERT(contains(text, "roles:         loader, executor\n"));
    CU_ASSERT(contains(text, "thread-safety: thread-safe"));
    CU_ASSERT(contains(text, "description:   test: a valid plugin"));
    CU_ASSERT(contains(text, "  label            string  default: none  "
                             "required  -- a name; required\n"));
    CU_ASSERT(contains(text, "  jobs             int     default: 4  "
                             "range: 1..64  per-profile  -- parallel jobs\n"));
    CU_ASSERT(contains(text, "  out_dir          path    default: out  "
                             "per-profile  -- output directory\n"));
    CU_ASSERT(contains(text, "  flags            string  default: \"\"  "
                             "per-profile  -- extra flags\n"));
    free(text);
    free(err);
    free(path);
}

static void describe_of_a_missing_plugin_fails_with_not_found(void)
{
    int rc = 0;
    char *err = NULL;
    char *text = capture_describe("nosuch", &rc, &err);
    CU_ASSERT_EQUAL(rc, VSCHED_ENOENT);
    CU_ASSERT(contains(err, "plugin 'nosuch' not found"));
    free(text);
    free(err);
}

static void list_shows_builtins_and_search_path_plugins(void)
{
    setenv("VSCHED_PLUGIN_PATH", plugdir(), 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(vr_plugin_list(f, NULL), 0);
    fclose(f);
    char *so = in_dir(plugdir(), ".libs/good_old_minor.so");
    char *line = NULL;
    if (asprintf(&line,
                 "good_old_minor 1.2.3      loader, executor  %s  "
                 "test: a valid plugin with an ABI 1.0-sized "
                 "descriptor\n",
                 so) < 0)
        abort();
    CU_ASSERT(contains(buf, line));
    CU_ASSERT(contains(buf, "unusable: plugin 'bad_major' was built for "
                            "plugin ABI 2.0"));
    CU_ASSERT(contains(buf, "unusable: plugin 'missing_op' declares role "
                            "executor"));
    CU_ASSERT(contains(buf, "\nfs ") || strncmp(buf, "fs ", 3) == 0);
    CU_ASSERT(contains(buf, "  built-in  "));
    free(line);
    free(so);
    free(buf);
    unsetenv("VSCHED_PLUGIN_PATH");
}

static void host_ctx_uses_malloc_and_is_never_cancelled(void)
{
    const vsched_ctx *ctx = vr_plugin_host_ctx();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctx);
    CU_ASSERT_EQUAL(ctx->size, sizeof(vsched_ctx));
    CU_ASSERT_EQUAL(ctx->is_cancelled(ctx), 0);
    char *m = ctx->alloc(ctx, 4);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    m = ctx->realloc(ctx, m, 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    free(m); /* the host frees with free(): same allocator */
    ctx->free(ctx, NULL);
}

/* ---- threads and lifetime ----------------------------------------------- */

static void *open_close_many(void *arg)
{
    const char *path = arg;
    for (int i = 0; i < 50; i++) {
        vr_plugin *p = NULL;
        char *err = NULL;
        if (vr_plugin_open(&p, path, NULL, &err) != 0) {
            free(err);
            return (void *)1;
        }
        vr_plugin_close(p);
    }
    return NULL;
}

static void concurrent_opens_are_serialised(void)
{
    char *path = in_dir(plugdir(), "good_old_minor");
    pthread_t t[8];
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL_FATAL(
            pthread_create(&t[i], NULL, open_close_many, path), 0);
    for (int i = 0; i < 8; i++) {
        void *res = (void *)1;
        pthread_join(t[i], &res);
        CU_ASSERT_PTR_NULL(res);
    }
    free(path);
}

static void open_after_host_exit_is_refused(void)
{
    vr_plugin_host_exit();
    vr_plugin *p = NULL;
    char *err = NULL;
    CU_ASSERT_EQUAL(vr_plugin_open(&p, "fs", NULL, &err), VSCHED_EINVAL);
    CU_ASSERT(contains(err, "not initialised"));
    free(err);
    CU_ASSERT_EQUAL_FATAL(vr_plugin_host_init(lt_preloaded_symbols), 0);
    vr_plugin *q = open_ok("fs", NULL); /* built-ins are back */
    CU_ASSERT_PTR_NOT_NULL(q);
    vr_plugin_close(q);
}

/* ---- main --------------------------------------------------------------- */

static const vr_cu_test tests[] = {
    {"major_mismatch_names_both_versions", major_mismatch_names_both_versions},
    {"newer_minor_names_both_versions_and_says_upgrade",
     newer_minor_names_both_versions_and_says_upgrade},
    {"missing_entry_symbol_says_not_a_plugin",
     missing_entry_symbol_says_not_a_plugin},
    {"missing_required_op_names_role_and_operation",
     missing_required_op_names_role_and_operation},
    {"older_minor_sized_descriptor_is_accepted",
     older_minor_sized_descriptor_is_accepted},
    {"empty_name_is_invalid", empty_name_is_invalid},
    {"not_found_lists_every_searched_dir", not_found_lists_every_searched_dir},
    {"not_found_without_config_lists_env_and_installed_dir",
     not_found_without_config_lists_env_and_installed_dir},
    {"env_plugin_path_is_searched", env_plugin_path_is_searched},
    {"config_plugin_path_is_relative_to_ini_dir",
     config_plugin_path_is_relative_to_ini_dir},
    {"found_but_unloadable_stops_search_with_reason",
     found_but_unloadable_stops_search_with_reason},
    {"path_with_slash_is_opened_as_is", path_with_slash_is_opened_as_is},
    {"path_with_slash_not_found_names_the_files_tried",
     path_with_slash_not_found_names_the_files_tried},
    {"builtins_open_by_name_without_search_path",
     builtins_open_by_name_without_search_path},
    {"role_not_provided_is_refused", role_not_provided_is_refused},
    {"schema_error_is_reported_before_create",
     schema_error_is_reported_before_create},
    {"missing_required_key_is_reported_before_create",
     missing_required_key_is_reported_before_create},
    {"unknown_key_is_reported_before_create",
     unknown_key_is_reported_before_create},
    {"profile_section_accepts_only_per_profile_keys",
     profile_section_accepts_only_per_profile_keys},
    {"profile_sections_are_not_checked_for_a_loader",
     profile_sections_are_not_checked_for_a_loader},
    {"create_failure_carries_plugin_message",
     create_failure_carries_plugin_message},
    {"config_get_returns_defaults_and_absolute_paths",
     config_get_returns_defaults_and_absolute_paths},
    {"destroying_twice_is_harmless", destroying_twice_is_harmless},
    {"describe_prints_every_key_with_type_default_range_flags",
     describe_prints_every_key_with_type_default_range_flags},
    {"describe_of_a_missing_plugin_fails_with_not_found",
     describe_of_a_missing_plugin_fails_with_not_found},
    {"list_shows_builtins_and_search_path_plugins",
     list_shows_builtins_and_search_path_plugins},
    {"host_ctx_uses_malloc_and_is_never_cancelled",
     host_ctx_uses_malloc_and_is_never_cancelled},
    {"concurrent_opens_are_serialised", concurrent_opens_are_serialised},
    {"open_after_host_exit_is_refused", open_after_host_exit_is_refused},
    {NULL, NULL},
};

int main(void)
{
    LTDL_SET_PRELOADED_SYMBOLS();
    if (vr_plugin_host_init(lt_preloaded_symbols) != 0) {
        fprintf(stderr, "test_abi: cannot initialise the plugin host\n");
        return 99;
    }
    int rc = vr_cu_main("abi", tests);
    vr_plugin_host_exit();
    return rc;
}
