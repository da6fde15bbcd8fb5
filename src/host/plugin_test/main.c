/*
 * vsched-plugin-test -- a testing aid for plugin authors: load ONE plugin
 * through the same plugin host as vsched-run (search path, ABI checks,
 * schema validation, create()) and call each of its operations on given
 * files, one thread, no scheduler, printing every result.
 *
 *   vsched-plugin-test [options] PLUGIN [FILE...]
 *
 * Output: one line per operation and file, "NAME: OP: ok DETAILS" or
 * "NAME: OP: failed VSCHED_EXXX (message)", the diagnostics the plugin
 * reported ("NAME: diag: SEVERITY FILE:LINE: MESSAGE"), and the contract
 * checks below ("NAME: contract: ..." for a rule of <vsched/plugin.h> that
 * was broken, "NAME: warning: ..." for something suspicious). The last line
 * counts files, failed operations and contract violations.
 *
 * Which operations run (see doc/vsched-plugin-test.1):
 *   - loader role: realpath, exists, classify, load;
 *   - executor role: source (twice: the content hash must be stable),
 *     extract_deps, analysis (twice: the hash must be a pure function of
 *     the inputs; each blocker is taken through source and analysis first,
 *     depth first, cycles reported), artifact for each profile (published
 *     like the host does: rename of tmp_path, or the bytes written to a
 *     temporary file and renamed), and job when --job is given.
 * The executor's bytes come from the plugin's own loader role when that is
 * tested too, else from the [loader] plugin of --config, else from the
 * built-in fs loader over --root (default ".").
 *
 * Contract checks: every buffer handed to the host must come from
 * ctx->alloc (the test context's allocator keeps the set of its live
 * blocks: a foreign pointer, a double free or a block still live at the
 * end is reported); statuses must be 0 or a VSCHED_E* code; classify must
 * NUL-terminate within the buffer; dependency names must be non-empty,
 * and canonical (a fixed point of the loader's realpath) or they name a
 * second file node; an artifact path must be absolute and a tmp_path must
 * exist beside it.
 *
 * Exit status: 0 every operation succeeded and no contract was broken; 1
 * an operation failed or a contract was broken; 2 usage, configuration,
 * or the plugin could not be loaded or created.
 *
 * The files of the program are listed in plugin_test.h; this one is the
 * order of a run.
 */
#include <errno.h>
#include <limits.h>
#include <ltdl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/vsched.h>

#include "common/util.h"
#include "config/config.h"
#include "config/plugin_host.h"
#include "plugin_test/plugin_test.h"

/* ---- setup -------------------------------------------------------------- */

/* What the run holds open. */
typedef struct pt_plugins {
    vr_plugin *plugin, *loader_plugin; /* loader_plugin may equal plugin */
    void *loader_inst, *executor_inst;
} pt_plugins;

static int pt_fail_setup(char *err)
{
    fprintf(stderr, "vsched-plugin-test: %s\n", err != NULL ? err : "error");
    free(err);
    return PT_EXIT_USAGE;
}

/* The configuration: --config or an empty one, then --set, then --root. */
static int pt_config(const pt_opts *o, vr_config **cfg, char **err)
{
    int rc;
    if (o->config != NULL) {
        rc = vr_config_load(cfg, o->config, err);
    } else {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof cwd) == NULL)
            strcpy(cwd, "/");
        rc = vr_config_load_string(cfg, "", "(no --config)", cwd, err);
    }
    for (size_t i = 0; rc == 0 && i < o->n_sets; i++)
        rc = vr_config_set(*cfg, o->sets[i], err);
    return rc;
}

/* --root sets [loader] root. When the tested plugin is not its own
 * loader (`self` 0) and the configuration names none, [loader] becomes the
 * built-in fs over --root, or over "." without one. */
static int pt_loader_config(const pt_opts *o, vr_config *cfg, int self,
                            char **err)
{
    int rc = 0, dflt = 0;
    if (!self && vr_config_get(cfg, "loader", "plugin") == NULL) {
        rc = vr_config_set(cfg, "loader.plugin=fs", err);
        dflt = vr_config_get(cfg, "loader", "root") == NULL;
    }
    if (rc == 0 && (o->root != NULL || dflt)) {
        char *abs = realpath(o->root != NULL ? o->root : ".", NULL);
        if (abs == NULL) {
            *err = vr_strfmt("--root %s: %s", o->root, strerror(errno));
            return VSCHED_EINVAL;
        }
        char *set = vr_strfmt("loader.root=%s", abs);
        rc = vr_config_set(cfg, set, err);
        free(set);
        free(abs);
    }
    return rc;
}

/* Profiles: --profile, else [batch] profiles, else release. */
static void pt_profiles(pt_run *r, const vr_config *cfg)
{
    const pt_opts *o = r->opts;
    for (size_t i = 0; i < o->n_profiles; i++) {
        r->profiles = vr_xrealloc(r->profiles,
                                  (r->n_profiles + 1) * sizeof *r->profiles);
        r->profiles[r->n_profiles++] = vr_xstrdup(o->profiles[i]);
    }
    if (r->n_profiles > 0)
        return;
    const char *list = vr_config_get(cfg, "batch", "profiles");
    char *copy = vr_xstrdup(list != NULL ? list : "");
    char *save = NULL;
    for (char *w = strtok_r(copy, " \t", &save); w != NULL;
         w = strtok_r(NULL, " \t", &save)) {
        r->profiles = vr_xrealloc(r->profiles,
                                  (r->n_profiles + 1) * sizeof *r->profiles);
        r->profiles[r->n_profiles++] = vr_xstrdup(w);
    }
    free(copy);
    if (r->n_profiles == 0) {
        r->profiles = vr_xmalloc(sizeof *r->profiles);
        r->profiles[r->n_profiles++] = vr_xstrdup("release");
    }
}

static const char *pt_roles_text(unsigned roles)
{
    if ((roles & VSCHED_ROLE_LOADER) && (roles & VSCHED_ROLE_EXECUTOR))
        return "loader, executor";
    return (roles & VSCHED_ROLE_LOADER) ? "loader" : "executor";
}

static void pt_describe(const char *what, const vr_plugin *p, unsigned roles)
{
    const vsched_plugin *d = vr_plugin_descriptor(p);
    printf("%s: %s %s, ABI %u.%u, %s, %s (%s)\n", what, d->name,
           d->version != NULL ? d->version : "-", (unsigned)d->abi_major,
           (unsigned)d->abi_minor, pt_roles_text(roles),
           (d->flags & VSCHED_PLUGIN_THREAD_SAFE) ? "thread-safe"
                                                  : "not thread-safe",
           vr_plugin_origin(p));
}

/* Open the plugin (and the loader feeding an executor), create the
 * instances. Returns 0 or an exit status with the message printed. */
static int pt_open(const pt_opts *o, vr_config *cfg, pt_plugins *pl, pt_run *r)
{
    char *err = NULL;
    if (vr_plugin_open(&pl->plugin, o->plugin, cfg, &err) != 0)
        return pt_fail_setup(err);
    const vsched_plugin *d = vr_plugin_descriptor(pl->plugin);
    unsigned roles = o->roles != 0 ? o->roles : d->roles;
    if ((d->roles & roles) != roles)
        return pt_fail_setup(vr_strfmt("plugin '%s' does not provide role "
                                       "%s",
                                       d->name, pt_roles_text(roles)));
    pt_describe("plugin", pl->plugin, roles);
    int self = (roles & VSCHED_ROLE_LOADER) != 0;
    if (pt_loader_config(o, cfg, self, &err) != 0)
        return pt_fail_setup(err);
    if (self) {
        pl->loader_plugin = pl->plugin;
    } else {
        const char *name = vr_config_get(cfg, "loader", "plugin");
        if (vr_plugin_open(&pl->loader_plugin, name, cfg, &err) != 0)
            return pt_fail_setup(err);
        pt_describe("loader", pl->loader_plugin, VSCHED_ROLE_LOADER);
    }
    if (vr_plugin_instantiate(pl->loader_plugin, VSCHED_ROLE_LOADER, cfg,
                              "loader", &pl->loader_inst, &err) != 0)
        return pt_fail_setup(err);
    r->lops = vr_plugin_descriptor(pl->loader_plugin)->loader;
    r->linst = pl->loader_inst;
    if (roles & VSCHED_ROLE_EXECUTOR) {
        if (vr_plugin_instantiate(pl->plugin, VSCHED_ROLE_EXECUTOR, cfg,
                                  "executor", &pl->executor_inst, &err) != 0)
            return pt_fail_setup(err);
        r->xops = d->executor;
        r->xinst = pl->executor_inst;
    }
    return 0;
}

static void pt_close(pt_plugins *pl)
{
    if (pl->executor_inst != NULL)
        vr_plugin_destroy_instance(pl->plugin, pl->executor_inst);
    if (pl->loader_inst != NULL)
        vr_plugin_destroy_instance(pl->loader_plugin, pl->loader_inst);
    if (pl->loader_plugin != pl->plugin)
        vr_plugin_close(pl->loader_plugin);
    vr_plugin_close(pl->plugin);
}

static int pt_main(const pt_opts *o)
{
    char *err = NULL;
    vr_config *cfg = NULL;
    if (pt_config(o, &cfg, &err) != 0) {
        vr_config_free(cfg);
        return pt_fail_setup(err);
    }
    pt_run r = {.opts = o};
    pt_ctx_init(&r);
    pt_plugins pl = {0};
    int status = pt_open(o, cfg, &pl, &r);
    if (status == 0) {
        pt_profiles(&r, cfg);
        pt_identity(&r);
        for (size_t i = 0; i < o->n_files; i++)
            pt_one(&r, o->files[i]);
        if (o->job != NULL && r.xops != NULL &&
            o->last_stage >= VSCHED_STAGE_ARTIFACT)
            pt_job(&r);
        pt_run_free(&r);
        if (r.live != 0)
            pt_violation(&r,
                         "%zu ctx->alloc blocks were never handed to "
                         "the host nor freed (a leak of host memory)",
                         r.live);
        printf("vsched-plugin-test: %zu files, %zu failed operations, %zu "
               "contract violations, %zu warnings\n",
               o->n_files, r.failed_ops, r.violations, r.warnings);
        status = r.failed_ops + r.violations > 0 ? PT_EXIT_FAILED : PT_EXIT_OK;
    } else {
        pt_run_free(&r);
    }
    pt_close(&pl);
    vr_config_free(cfg);
    pt_ctx_fini(&r);
    return status;
}

int main(int argc, char **argv)
{
    pt_opts o;
    char *err = NULL;
    int status;
    if (pt_parse(&o, argc, argv, &err) != 0) {
        fprintf(stderr,
                "vsched-plugin-test: %s; try 'vsched-plugin-test "
                "--help'\n",
                err);
        free(err);
        status = PT_EXIT_USAGE;
    } else if (o.help) {
        pt_usage(stdout);
        status = PT_EXIT_OK;
    } else if (o.version) {
        printf("vsched-plugin-test %s (plugin ABI %d.%d)\n",
               VSCHED_VERSION_STRING, VSCHED_PLUGIN_ABI_MAJOR,
               VSCHED_PLUGIN_ABI_MINOR);
        status = PT_EXIT_OK;
    } else if (vr_plugin_host_init(lt_preloaded_symbols) != 0) {
        fprintf(stderr, "vsched-plugin-test: cannot initialise libltdl\n");
        status = PT_EXIT_USAGE;
    } else {
        setvbuf(stdout, NULL, _IOLBF, 0);
        status = pt_main(&o);
        vr_plugin_host_exit();
    }
    free(o.sets);
    free(o.profiles);
    return status;
}
