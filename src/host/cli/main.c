/*
 * vsched-run -- read an INI file, load the loader and executor plugins it
 * names, and run a batch build (or --deps, or --clean) through libvsched,
 * fanned out on the host's coordinator pool (coord.h); incremental state
 * and the artifact cache under [vsched] state_dir (incr.h); with --watch,
 * again on every change (watch.h). --compdb and --graph describe the
 * build instead (compdb.h, graph.h).
 */
#include <ltdl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/vsched.h>

#include "build/build.h"
#include "build/coord.h"
#include "build/deps.h"
#include "build/isolate.h"
#include "build/operands.h"
#include "build/work.h"
#include "cli/clean.h"
#include "cli/cli.h"
#include "cli/compdb.h"
#include "cli/find_config.h"
#include "cli/graph.h"
#include "cli/run.h"
#include "cli/signals.h"
#include "config/config.h"
#include "config/plugin_host.h"
#include "config/settings.h"
#include "config/targets.h"
#include "watch/watch.h"

/* Loaded plugins and their instances, torn down in reverse; `iso` the
 * worker pool of [executor] isolate (isolate.h), or NULL. */
typedef struct loaded {
    vr_plugin *loader_plugin, *executor_plugin;
    void *loader_inst, *executor_inst;
    vr_isolate *iso;
} loaded;

static void unload(loaded *l)
{
    vr_isolate_free(l->iso);
    if (l->executor_inst != NULL)
        vr_plugin_destroy_instance(l->executor_plugin, l->executor_inst);
    if (l->loader_inst != NULL)
        vr_plugin_destroy_instance(l->loader_plugin, l->loader_inst);
    vr_plugin_close(l->executor_plugin);
    vr_plugin_close(l->loader_plugin);
}

/* Open the plugin `name` ([section] plugin). */
static int open_role(const vr_config *cfg, const char *name, vr_plugin **p)
{
    char *err = NULL;
    if (vr_plugin_open(p, name, cfg, &err) != VSCHED_OK) {
        fprintf(stderr, "vsched-run: %s\n", err != NULL ? err : "error");
        free(err);
        return -1;
    }
    return 0;
}

/* Instantiate the open plugin `p` with its section of cfg. */
static int make_role(const vr_config *cfg, vr_plugin *p, const char *section,
                     unsigned role, void **inst)
{
    char *err = NULL;
    if (vr_plugin_instantiate(p, role, cfg, section, inst, &err) !=
        VSCHED_OK) {
        fprintf(stderr, "vsched-run: %s\n", err != NULL ? err : "error");
        free(err);
        return -1;
    }
    return 0;
}

/* [executor] isolate: the worker pool, over the configuration as it is
 * now (after --set and the targets' variant profiles). */
static int isolate_role(const vr_config *cfg, const vr_settings *set,
                        loaded *l)
{
    if (!set->executor_isolate)
        return 0;
    const vsched_plugin *d = vr_plugin_descriptor(l->executor_plugin);
    const char *origin = vr_plugin_origin(l->executor_plugin);
    vr_isolate_opts o = {
        .desc = d,
        .plugin =
            strcmp(origin, "built-in") == 0 ? set->executor_plugin : origin,
        .cfg = cfg,
        .timeout_s = vr_isolate_timeout(cfg, d, set->isolate_timeout),
    };
    char *err = NULL;
    if (vr_isolate_new(&l->iso, &o, &err) != VSCHED_OK) {
        fprintf(stderr, "vsched-run: %s\n", err);
        free(err);
        return -1;
    }
    return 0;
}

/* Targets need an executor with a job operation: refused before its
 * configuration gets the targets' variant profiles. */
static int check_jobs(const vr_settings *set, const vr_targets *t,
                      vr_plugin *executor)
{
    const vsched_plugin *d = vr_plugin_descriptor(executor);
    const vsched_executor_ops *x = d->executor;
    if (t->n == 0 ||
        (x != NULL && VR_OPS_COVERS(x, vsched_executor_ops, job) &&
         x->job != NULL))
        return 0;
    fprintf(stderr,
            "vsched-run: %s: executor '%s' cannot link: it has no "
            "job operation; targets and [batch] link need one (the "
            "cc executor has)\n",
            set->path, d->name);
    return -1;
}

/* Create the coordinator pool once for the run ([vsched]
 * coordinator_threads; never handed to the scheduler), then run the batch
 * the command line asks for: --deps, or the build. */
static int run_batch(const vr_cli *cli, const vr_settings *set,
                     const vr_config *cfg, const loaded *l,
                     const vr_targets *targets)
{
    const vsched_plugin *ld = vr_plugin_descriptor(l->loader_plugin);
    const vsched_plugin *ex = vr_plugin_descriptor(l->executor_plugin);
    vr_build b = {
        .cli = cli,
        .settings = set,
        .cfg = cfg,
        .loader = {ld->loader, l->loader_inst,
                   (ld->flags & VSCHED_PLUGIN_THREAD_SAFE) != 0},
        .executor = {ex->executor, l->executor_inst,
                     (ex->flags & VSCHED_PLUGIN_THREAD_SAFE) != 0},
        .loader_desc = ld,
        .executor_desc = ex,
        .out = stdout,
        .err = stderr,
        .targets = targets,
        .interrupted = vr_signals_caught,
    };
    if (l->iso != NULL)
        b.stages = vr_isolate_binding(l->iso);
    /* FILES are checked and made canonical once, here; everything after
     * sees only canonical names (operands.h). */
    vr_cli resolved = *cli;
    char **files = NULL, *err = NULL;
    unsigned char *is_file = NULL;
    if (vr_operands_resolve(&b, &files, &is_file, &err) != VSCHED_OK) {
        fprintf(stderr, "vsched-run: %s\n", err);
        free(err);
        return VR_EXIT_USAGE;
    }
    resolved.files = files;
    resolved.is_file = is_file;
    b.cli = &resolved;
    if (vr_coord_create(&b.coord, set->coordinator_threads) != VSCHED_OK) {
        fprintf(stderr, "vsched-run: cannot start coordinator threads\n");
        vr_build_inputs_free(files, cli->n_files);
        free(is_file);
        return VR_EXIT_USAGE;
    }
    int status = cli->deps     ? vr_deps_run(&b)
                 : cli->compdb ? vr_compdb_run(&b)
                 : cli->graph  ? vr_graph_run(&b)
                 : cli->watch  ? vr_watch_run(&b)
                               : vr_build_run(&b);
    vr_coord_destroy(b.coord);
    vr_build_inputs_free(files, cli->n_files);
    free(is_file);
    return status;
}

static int run(const vr_cli *cli)
{
    char *err = NULL;
    vr_config *cfg = NULL;
    if (cli->config == NULL && access(VR_CONFIG_DEFAULT, F_OK) != 0) {
        if (cli->list_plugins)
            return vr_plugin_list(stdout, NULL) == 0 ? VR_EXIT_OK
                                                     : VR_EXIT_USAGE;
        if (cli->describe != NULL) {
            int rc = vr_plugin_describe(stdout, cli->describe, NULL, &err);
            if (rc != 0)
                fprintf(stderr, "vsched-run: %s\n", err);
            free(err);
            return rc == 0 ? VR_EXIT_OK : VR_EXIT_USAGE;
        }
    }
    if (vr_config_find(cli, &cfg, &err) != VSCHED_OK)
        goto config_error;
    for (size_t i = 0; i < cli->n_sets; i++)
        if (vr_config_set(cfg, cli->sets[i], &err) != VSCHED_OK)
            goto config_error;
    if (cli->list_plugins || cli->describe != NULL) {
        int rc = cli->list_plugins
                     ? vr_plugin_list(stdout, cfg)
                     : vr_plugin_describe(stdout, cli->describe, cfg, &err);
        if (rc != 0)
            fprintf(stderr, "vsched-run: %s\n", err);
        free(err);
        vr_config_free(cfg);
        return rc == 0 ? VR_EXIT_OK : VR_EXIT_USAGE;
    }
    vr_settings set;
    if (vr_settings_load(&set, cfg, &err) != VSCHED_OK)
        goto config_error;
    vr_targets targets;
    if (vr_targets_load(&targets, cfg, set.link, set.inputs, set.n_inputs,
                        &err) != VSCHED_OK) {
        vr_settings_free(&set);
        goto config_error;
    }
    if (cli->list_targets || cli->clean) {
        /* Neither loads a plugin: --list-targets reads the configuration,
         * --clean the state and the outputs under out_dir, so a tree whose
         * loader root is gone can still be cleaned. */
        vr_build nb = {.cli = cli,
                       .settings = &set,
                       .cfg = cfg,
                       .out = stdout,
                       .err = stderr,
                       .targets = &targets};
        int rc;
        if (cli->list_targets)
            rc = vr_work_list_targets(&nb) == VSCHED_OK ? VR_EXIT_OK
                                                        : VR_EXIT_USAGE;
        else
            rc = vr_clean_run(&nb);
        vr_targets_free(&targets);
        vr_settings_free(&set);
        vr_config_free(cfg);
        return rc;
    }
    loaded l = {0};
    int status = VR_EXIT_USAGE;
    if (open_role(cfg, set.loader_plugin, &l.loader_plugin) == 0 &&
        make_role(cfg, l.loader_plugin, "loader", VSCHED_ROLE_LOADER,
                  &l.loader_inst) == 0 &&
        open_role(cfg, set.executor_plugin, &l.executor_plugin) == 0 &&
        check_jobs(&set, &targets, l.executor_plugin) == 0) {
        /* The variant profiles' sections exist before the executor is
         * made (targets.h). */
        if (cli->n_profiles > 0)
            vr_targets_vary(&targets, cfg, (char *const *)cli->profiles,
                            cli->n_profiles, set.loader_root);
        else
            vr_targets_vary(&targets, cfg, set.profiles, set.n_profiles,
                            set.loader_root);
        if (make_role(cfg, l.executor_plugin, "executor", VSCHED_ROLE_EXECUTOR,
                      &l.executor_inst) == 0 &&
            isolate_role(cfg, &set, &l) == 0)
            status = run_batch(cli, &set, cfg, &l, &targets);
    }
    unload(&l);
    vr_targets_free(&targets);
    vr_settings_free(&set);
    vr_config_free(cfg);
    return status;

config_error:
    fprintf(stderr, "vsched-run: %s\n", err != NULL ? err : "error");
    free(err);
    vr_config_free(cfg);
    return VR_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    /* A worker of [executor] isolate (isolate.h): started by a run, never
     * by hand; nothing else of vsched-run runs in it. */
    if (argc == 2 && strcmp(argv[1], VR_ISOLATE_WORKER_FLAG) == 0)
        return vr_isolate_worker_main(VR_ISOLATE_FD, lt_preloaded_symbols);
    vr_cli cli;
    char *err = NULL;
    if (vr_cli_parse(&cli, argc, argv, &err) != VSCHED_OK) {
        fprintf(stderr, "vsched-run: %s; try 'vsched-run --help'\n", err);
        free(err);
        return VR_EXIT_USAGE;
    }
    if (cli.help) {
        vr_cli_usage(stdout);
        vr_cli_free(&cli);
        return VR_EXIT_OK;
    }
    if (cli.version) {
        printf("vsched-run %s (libvsched %s, plugin ABI %d.%d)\n",
               VSCHED_VERSION_STRING, vsched_version(),
               VSCHED_PLUGIN_ABI_MAJOR, VSCHED_PLUGIN_ABI_MINOR);
        vr_cli_free(&cli);
        return VR_EXIT_OK;
    }
    if (vr_change_dirs(&cli) != 0) {
        vr_cli_free(&cli);
        return VR_EXIT_USAGE;
    }
    /* Before any thread exists: SIGINT/SIGTERM go to one waiting thread
     * (signals.h), never to a handler. */
    if (vr_signals_start() != 0)
        fprintf(stderr, "vsched-run: cannot watch for signals; an "
                        "interrupt stops the run at once\n");
    if (vr_plugin_host_init(lt_preloaded_symbols) != VSCHED_OK) {
        fprintf(stderr, "vsched-run: cannot initialise libltdl\n");
        vr_cli_free(&cli);
        return VR_EXIT_USAGE;
    }
    int status = run(&cli);
    vr_plugin_host_exit();
    vr_cli_free(&cli);
    vr_signals_stop();
    return status;
}
