/*
 * test_abi_1_1 -- the versioning story and the configuration API of plugin
 * ABI 1.1, through the real plugin host and real modules (libltdl):
 *   - a plugin built with 1.1 headers and VSCHED_PLUGIN_TARGET_MINOR 0
 *     declares 1.0 and passes a 1.0 host's version check; a plugin built
 *     for 1.1 is refused by it with the documented message;
 *   - the host's ABI and version as a plugin reads them;
 *   - typed getters with every bad value, the [profile.NAME] fallback,
 *     the profile list; blame puts the key's FILE:LINE before create()'s
 *     error; create()'s diagnostics carry their severity and the plugin.
 */
#include <ltdl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/plugin.h>
#include <vsched/vsched.h>

#include "config/config.h"
#include "config/plugin_host.h"
#include "cu.h"

static char *module(const char *name)
{
    const char *top = getenv("top_builddir");
    char *p = NULL;
    if (asprintf(&p, "%s/tests/abi/%s",
                 top != NULL && top[0] != '\0' ? top : ".", name) < 0)
        abort();
    return p;
}

static vr_plugin *open_module(const char *name)
{
    char *path = module(name), *err = NULL;
    vr_plugin *p = NULL;
    int rc = vr_plugin_open(&p, path, NULL, &err);
    if (rc != 0)
        fprintf(stderr, "\n  open %s: %s\n", path, err);
    free(err);
    free(path);
    return p;
}

/* ---- versions ------------------------------------------------------------ */

static void target_minor_0_plugin_declares_1_0_and_passes_a_1_0_host(void)
{
    vr_plugin *p = open_module("target10_plugin");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    const vsched_plugin *d = vr_plugin_descriptor(p);
    CU_ASSERT_EQUAL(d->abi_major, 1);
    CU_ASSERT_EQUAL(d->abi_minor, 0);
    /* The struct sizes it reports are 1.0's (static asserts in the
     * plugin); the executor table stops before identity. */
    CU_ASSERT(d->executor->size <= offsetof(vsched_executor_ops, identity));
    char *err = NULL;
    CU_ASSERT_EQUAL(vr_plugin_check_abi("target10_plugin", d, 1, 0, &err), 0);
    CU_ASSERT_PTR_NULL(err);
    vr_plugin_close(p);
}

static void plugin_built_for_1_1_is_refused_by_a_1_0_host(void)
{
    vr_plugin *p = open_module("cfgprobe");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    const vsched_plugin *d = vr_plugin_descriptor(p);
    CU_ASSERT_EQUAL(d->abi_minor, 1);
    char *err = NULL;
    CU_ASSERT_EQUAL(vr_plugin_check_abi("cfgprobe", d, 1, 0, &err),
                    VSCHED_EABI);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_STRING_EQUAL(err,
                           "plugin 'cfgprobe' needs plugin ABI 1.1, newer "
                           "than this vsched-run's 1.0: upgrade vsched-run, "
                           "or rebuild the plugin with "
                           "-DVSCHED_PLUGIN_TARGET_MINOR=0");
    free(err);
    err = NULL;
    CU_ASSERT_EQUAL(vr_plugin_check_abi("cfgprobe", d, 2, 0, &err),
                    VSCHED_EABI);
    CU_ASSERT_PTR_NOT_NULL(err);
    CU_ASSERT_PTR_NOT_NULL(err != NULL ? strstr(err, "major versions must "
                                                     "match")
                                       : NULL);
    free(err);
    vr_plugin_close(p);
}

/* ---- configuration ------------------------------------------------------- */

typedef struct probe {
    vr_plugin *p;
    vr_config *cfg;
    void *inst;
    char *err;
    int rc;
} probe;

static probe make_probe(const char *ini)
{
    probe pr = {0};
    pr.p = open_module("cfgprobe");
    CU_ASSERT_PTR_NOT_NULL_FATAL(pr.p);
    char *err = NULL;
    CU_ASSERT_EQUAL_FATAL(
        vr_config_load_string(&pr.cfg, ini, "t.ini", "/tmp", &err), 0);
    pr.rc = vr_plugin_instantiate(pr.p, VSCHED_ROLE_EXECUTOR, pr.cfg,
                                  "executor", &pr.inst, &pr.err);
    return pr;
}

static void drop_probe(probe *pr)
{
    if (pr->inst != NULL)
        vr_plugin_destroy_instance(pr->p, pr->inst);
    vr_plugin_close(pr->p);
    vr_config_free(pr->cfg);
    free(pr->err);
}

static const vsched_config *cfg_of(const probe *pr)
{
    CU_ASSERT_EQUAL_FATAL(pr->rc, 0);
    return pr->inst;
}

static void host_version_and_profiles_are_visible(void)
{
    probe pr = make_probe("[executor]\nneed = x\n[profile.debug]\n"
                          "[profile.fast]\nnum = 1\n");
    const vsched_config *c = cfg_of(&pr);
    CU_ASSERT(c->size >= sizeof(vsched_config));
    CU_ASSERT_EQUAL(c->host_abi_major, VSCHED_PLUGIN_ABI_MAJOR);
    CU_ASSERT_EQUAL(c->host_abi_minor, VSCHED_PLUGIN_ABI_MINOR);
    CU_ASSERT_STRING_EQUAL(c->host_version, VSCHED_VERSION_STRING);
    CU_ASSERT_EQUAL_FATAL(c->n_profiles, 2);
    CU_ASSERT_STRING_EQUAL(c->profiles[0], "debug");
    CU_ASSERT_STRING_EQUAL(c->profiles[1], "fast");
    drop_probe(&pr);
}

/* get_int of `text` in [executor] num. */
static int int_of(const char *text, long long *v)
{
    char ini[256];
    snprintf(ini, sizeof ini, "[executor]\nneed = x\nnum = %s\n", text);
    probe pr = make_probe(ini);
    const vsched_config *c = cfg_of(&pr);
    int rc = c->get_int(c, NULL, "num", v);
    drop_probe(&pr);
    return rc;
}

static void get_int_accepts_whole_decimals_only(void)
{
    long long v = 0;
    CU_ASSERT_EQUAL(int_of("42", &v), VSCHED_OK);
    CU_ASSERT_EQUAL(v, 42);
    CU_ASSERT_EQUAL(int_of("-7", &v), VSCHED_OK);
    CU_ASSERT_EQUAL(v, -7);
    CU_ASSERT_EQUAL(int_of("+3", &v), VSCHED_OK);
    CU_ASSERT_EQUAL(v, 3);
    CU_ASSERT_EQUAL(int_of("9223372036854775807", &v), VSCHED_OK);
    CU_ASSERT_EQUAL(v, 9223372036854775807LL);
    static const char *const bad[] = {"12x",
                                      "1e3",
                                      "0x10",
                                      "1.5",
                                      "yes",
                                      "-",
                                      "+",
                                      "9223372036854775808",
                                      "-9223372036854775809",
                                      "1 2",
                                      NULL};
    for (size_t i = 0; bad[i] != NULL; i++) {
        v = 99;
        int rc = int_of(bad[i], &v);
        if (rc != VSCHED_ECONFIG)
            fprintf(stderr, "\n  get_int('%s') = %d\n", bad[i], rc);
        CU_ASSERT_EQUAL(rc, VSCHED_ECONFIG);
        CU_ASSERT_EQUAL(v, 99); /* untouched on error */
    }
    v = 99;
    CU_ASSERT_EQUAL(int_of("", &v), VSCHED_ENOENT); /* empty is unset */
    CU_ASSERT_EQUAL(v, 99);
}

static void get_int_reads_schema_defaults_and_unset_is_enoent(void)
{
    probe pr = make_probe("[executor]\nneed = x\n");
    const vsched_config *c = cfg_of(&pr);
    long long v = 0;
    CU_ASSERT_EQUAL(c->get_int(c, NULL, "dflt", &v), VSCHED_OK);
    CU_ASSERT_EQUAL(v, 7);
    CU_ASSERT_EQUAL(c->get_int(c, NULL, "num", &v), VSCHED_ENOENT);
    CU_ASSERT_EQUAL(c->get_int(c, NULL, "no_such_key", &v), VSCHED_ENOENT);
    CU_ASSERT_EQUAL(c->get_int(c, NULL, NULL, &v), VSCHED_ENOENT);
    drop_probe(&pr);
}

static int bool_of(const char *text, int *v)
{
    char ini[256];
    snprintf(ini, sizeof ini, "[executor]\nneed = x\nflag = %s\n", text);
    probe pr = make_probe(ini);
    const vsched_config *c = cfg_of(&pr);
    int rc = c->get_bool(c, NULL, "flag", v);
    drop_probe(&pr);
    return rc;
}

static void get_bool_takes_the_eight_spellings_in_any_case(void)
{
    static const char *const yes[] = {"true", "YES", "On", "1", NULL};
    static const char *const no[] = {"false", "No", "OFF", "0", NULL};
    int v;
    for (size_t i = 0; yes[i] != NULL; i++) {
        v = -1;
        CU_ASSERT_EQUAL(bool_of(yes[i], &v), VSCHED_OK);
        CU_ASSERT_EQUAL(v, 1);
    }
    for (size_t i = 0; no[i] != NULL; i++) {
        v = -1;
        CU_ASSERT_EQUAL(bool_of(no[i], &v), VSCHED_OK);
        CU_ASSERT_EQUAL(v, 0);
    }
    static const char *const bad[] = {"maybe", "2",       "truee", "y",
                                      "t",     "enabled", "-1",    NULL};
    for (size_t i = 0; bad[i] != NULL; i++) {
        v = -1;
        CU_ASSERT_EQUAL(bool_of(bad[i], &v), VSCHED_ECONFIG);
        CU_ASSERT_EQUAL(v, -1);
    }
    CU_ASSERT_EQUAL(bool_of("", &v), VSCHED_ENOENT);
}

static void get_list_splits_and_keeps_the_words(void)
{
    probe pr = make_probe("[executor]\nneed = x\nwords = a  b\tc\n"
                          "[profile.p]\nwords = one\n[profile.q]\n"
                          "words = \n");
    const vsched_config *c = cfg_of(&pr);
    const char *const *w = NULL, *const *again = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL_FATAL(c->get_list(c, NULL, "words", &w, &n), VSCHED_OK);
    CU_ASSERT_EQUAL_FATAL(n, 3);
    CU_ASSERT_STRING_EQUAL(w[0], "a");
    CU_ASSERT_STRING_EQUAL(w[1], "b");
    CU_ASSERT_STRING_EQUAL(w[2], "c");
    CU_ASSERT_EQUAL(c->get_list(c, NULL, "words", &again, &n), VSCHED_OK);
    CU_ASSERT_PTR_EQUAL(again, w); /* borrowed until destroy, not redone */
    CU_ASSERT_EQUAL(c->get_list(c, "p", "words", &w, &n), VSCHED_OK);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_STRING_EQUAL(w[0], "one");
    /* An empty per-profile value falls back to the own section. */
    CU_ASSERT_EQUAL(c->get_list(c, "q", "words", &w, &n), VSCHED_OK);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_EQUAL(c->get_list(c, NULL, "num", &w, &n), VSCHED_ENOENT);
    drop_probe(&pr);

    pr = make_probe("[executor]\nneed = x\nwords =  \t \n");
    c = cfg_of(&pr);
    CU_ASSERT_EQUAL(c->get_list(c, NULL, "words", &w, &n), VSCHED_ENOENT);
    drop_probe(&pr);
}

static void profile_lookup_falls_back_to_the_own_section(void)
{
    probe pr = make_probe("[executor]\nneed = x\nnum = 1\nflag = no\n"
                          "[profile.debug]\nnum = 2\n[profile.bad]\n"
                          "num = two\n");
    const vsched_config *c = cfg_of(&pr);
    long long v = 0;
    int b = -1;
    CU_ASSERT_EQUAL(c->get_int(c, "debug", "num", &v), VSCHED_OK);
    CU_ASSERT_EQUAL(v, 2);
    CU_ASSERT_EQUAL(c->get_int(c, "release", "num", &v), VSCHED_OK);
    CU_ASSERT_EQUAL(v, 1); /* no [profile.release]: the own value */
    CU_ASSERT_EQUAL(c->get_bool(c, "debug", "flag", &b), VSCHED_OK);
    CU_ASSERT_EQUAL(b, 0); /* not set per profile: the own value */
    CU_ASSERT_EQUAL(c->get_int(c, "bad", "num", &v), VSCHED_ECONFIG);
    const char *s = NULL;
    CU_ASSERT_EQUAL(c->get_str(c, "debug", "num", &s), VSCHED_OK);
    CU_ASSERT_STRING_EQUAL(s, "2");
    drop_probe(&pr);
}

static void blame_points_create_error_at_the_key_line(void)
{
    probe pr = make_probe("[executor]\nneed = x\nnum = 5\n"
                          "fail_key = num\n");
    CU_ASSERT_EQUAL(pr.rc, VSCHED_EERR);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pr.err);
    CU_ASSERT_STRING_EQUAL(pr.err, "t.ini:3: plugin 'cfgprobe': cannot "
                                   "create executor: refused on purpose");
    drop_probe(&pr);

    pr = make_probe("[executor]\nneed = x\nfail_key = num\n"
                    "fail_section = profile.d\n[profile.d]\nnum = 9\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(pr.err);
    CU_ASSERT_STRING_EQUAL(pr.err, "t.ini:6: plugin 'cfgprobe': cannot "
                                   "create executor: refused on purpose");
    drop_probe(&pr);

    /* A key that is not set has no line: the message stands alone. */
    pr = make_probe("[executor]\nneed = x\nfail_key = words\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(pr.err);
    CU_ASSERT_STRING_EQUAL(pr.err, "plugin 'cfgprobe': cannot create "
                                   "executor: refused on purpose");
    drop_probe(&pr);
}

static void empty_value_does_not_satisfy_a_required_key(void)
{
    probe pr = make_probe("[executor]\nnum = 1\nneed =\n");
    CU_ASSERT_EQUAL(pr.rc, VSCHED_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pr.err);
    CU_ASSERT_STRING_EQUAL(pr.err, "t.ini:3: [executor] need: a required "
                                   "key needs a value (it is set but "
                                   "empty)");
    CU_ASSERT_PTR_NULL(pr.inst);
    drop_probe(&pr);
}

static void create_diagnostics_name_severity_and_plugin(void)
{
    fflush(stderr);
    char path[] = "/tmp/vsched-diag.XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    int saved = dup(2);
    dup2(fd, 2);
    probe pr = make_probe("[executor]\nneed = x\ntalk = yes\n");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    CU_ASSERT_EQUAL(pr.rc, 0);
    drop_probe(&pr);
    char buf[1024] = {0};
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    close(fd);
    unlink(path);
    CU_ASSERT(n > 0);
    CU_ASSERT_STRING_EQUAL(buf, "note: plugin 'cfgprobe': a note\n"
                                "warning: plugin 'cfgprobe': probe.txt:3: a "
                                "warning\n"
                                "error: plugin 'cfgprobe': probe.txt: an "
                                "error\n");
}

/* ---- describe ------------------------------------------------------------- */

static void describe_columns_line_up_past_a_long_key_name(void)
{
    char *buf = NULL, *err = NULL, *path = module("cfgprobe");
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(vr_plugin_describe(f, path, NULL, &err), 0);
    fclose(f);
    /* The type column starts at the same offset on every key line. */
    long col = -1;
    int lines = 0, same = 1;
    for (char *l = strstr(buf, "keys:\n"); l != NULL && *l != '\0';) {
        char *nl = strchr(l, '\n');
        if (strncmp(l, "  ", 2) == 0) {
            char *name_end = strchr(l + 2, ' ');
            char *type = name_end;
            while (type != NULL && *type == ' ')
                type++;
            long c = type != NULL ? (long)(type - l) : -1;
            if (col < 0)
                col = c;
            same &= c == col;
            lines++;
        }
        l = nl != NULL ? nl + 1 : NULL;
    }
    CU_ASSERT_EQUAL(lines, 9);
    CU_ASSERT(same);
    CU_ASSERT_EQUAL(col,
                    2 + (long)strlen("a_key_name_longer_than_sixteen") + 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "  a_key_name_longer_than_sixteen "
                                       "int     default: 1  range: 0..9"));
    free(buf);
    free(err);
    free(path);
}

int main(void)
{
    static const vr_cu_test tests[] = {
        {"target_minor_0_plugin_declares_1_0_and_passes_a_1_0_host",
         target_minor_0_plugin_declares_1_0_and_passes_a_1_0_host},
        {"plugin_built_for_1_1_is_refused_by_a_1_0_host",
         plugin_built_for_1_1_is_refused_by_a_1_0_host},
        {"host_version_and_profiles_are_visible",
         host_version_and_profiles_are_visible},
        {"get_int_accepts_whole_decimals_only",
         get_int_accepts_whole_decimals_only},
        {"get_int_reads_schema_defaults_and_unset_is_enoent",
         get_int_reads_schema_defaults_and_unset_is_enoent},
        {"get_bool_takes_the_eight_spellings_in_any_case",
         get_bool_takes_the_eight_spellings_in_any_case},
        {"get_list_splits_and_keeps_the_words",
         get_list_splits_and_keeps_the_words},
        {"profile_lookup_falls_back_to_the_own_section",
         profile_lookup_falls_back_to_the_own_section},
        {"blame_points_create_error_at_the_key_line",
         blame_points_create_error_at_the_key_line},
        {"empty_value_does_not_satisfy_a_required_key",
         empty_value_does_not_satisfy_a_required_key},
        {"create_diagnostics_name_severity_and_plugin",
         create_diagnostics_name_severity_and_plugin},
        {"describe_columns_line_up_past_a_long_key_name",
         describe_columns_line_up_past_a_long_key_name},
        {NULL, NULL},
    };
    if (vr_plugin_host_init(NULL) != 0) {
        fprintf(stderr, "test_abi_1_1: cannot initialise the plugin host\n");
        return 99;
    }
    int rc = vr_cu_main("abi_1_1", tests);
    vr_plugin_host_exit();
    return rc;
}
