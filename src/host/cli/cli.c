/*
 * cli -- option parsing with getopt_long; see cli.h.
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <vsched/plugin.h>

#include "cli/cli.h"
#include "common/escape.h"
#include "common/util.h"

enum {
    OPT_PROFILE = 256,
    OPT_SET,
    OPT_STATS,
    OPT_VERSION,
    OPT_HELP,
    OPT_LIST,
    OPT_DESCRIBE,
    OPT_CONFIG,
    OPT_DEPS,
    OPT_EXPLAIN,
    OPT_CLEAN,
    OPT_CACHE,
    OPT_NO_WAIT,
    OPT_REPORT,
    OPT_LIST_TARGETS,
    OPT_TRACE,
    OPT_COMPDB,
    OPT_GRAPH,
    OPT_COLOR,
    OPT_WATCH
};

static const struct option long_opts[] = {
    {"config", required_argument, NULL, OPT_CONFIG},
    {"jobs", required_argument, NULL, 'j'},
    {"keep-going", required_argument, NULL, 'k'},
    {"dry-run", no_argument, NULL, 'n'},
    {"verbose", no_argument, NULL, 'v'},
    {"quiet", no_argument, NULL, 'q'},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"set", required_argument, NULL, OPT_SET},
    {"stats", no_argument, NULL, OPT_STATS},
    {"deps", no_argument, NULL, OPT_DEPS},
    {"explain", no_argument, NULL, OPT_EXPLAIN},
    {"clean", no_argument, NULL, OPT_CLEAN},
    {"cache", no_argument, NULL, OPT_CACHE},
    {"no-wait", no_argument, NULL, OPT_NO_WAIT},
    {"report", required_argument, NULL, OPT_REPORT},
    {"trace", required_argument, NULL, OPT_TRACE},
    {"compdb", no_argument, NULL, OPT_COMPDB},
    {"graph", no_argument, NULL, OPT_GRAPH},
    {"color", required_argument, NULL, OPT_COLOR},
    {"directory", required_argument, NULL, 'C'},
    {"watch", no_argument, NULL, OPT_WATCH},
    {"list-plugins", no_argument, NULL, OPT_LIST},
    {"list-targets", no_argument, NULL, OPT_LIST_TARGETS},
    {"describe-plugin", required_argument, NULL, OPT_DESCRIBE},
    {"version", no_argument, NULL, OPT_VERSION},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

void vr_cli_usage(FILE *out)
{
    fputs(
        "usage: vsched-run [--config FILE] [options] [FILES or TARGETS...]\n"
        "\n"
        "Build the sources named by [batch] inputs and the [target.NAME]\n"
        "programs and libraries (or only the FILES, source names relative\n"
        "to the loader root, and the TARGETS named, with what they link)\n"
        "through Source, Analysis and Artifact, for each profile.\n"
        "\n"
        "options:\n"
        "  --config FILE          the INI file (default: ./vsched.ini; - "
        "reads\n"
        "                         it from standard input)\n"
        "  -C, --directory DIR    change to DIR first (before looking for\n"
        "                         vsched.ini)\n"
        "  -j, --jobs N           CPU stage threads (overrides cpu_threads)\n"
        "  -k, --keep-going N     stop after N failures (0 = never; default "
        "1,\n"
        "                         as ninja's -k)\n"
        "  -n, --dry-run          print what would be rebuilt and why, build\n"
        "                         nothing\n"
        "  -v, --verbose          say more (repeatable)\n"
        "  -q, --quiet            print failures only, then the summary\n"
        "                         of a failed run (no progress, no\n"
        "                         warnings; a good run prints nothing)\n"
        "  --color WHEN           auto (default: on a terminal, unless\n"
        "                         NO_COLOR is set), always or never\n"
        "  --profile NAME         build this profile (repeatable; overrides\n"
        "                         [batch] profiles)\n"
        "  --set SECTION.KEY=VALUE  override a configuration key\n"
        "  --stats                print scheduler counters after the run\n"
        "  --deps                 print each input's resolved dependencies\n"
        "                         (one line per input), build nothing\n"
        "  --explain              say why each file is rebuilt\n"
        "  --report FILE          write a JSON report of the run to FILE\n"
        "  --trace FILE           write a Chrome trace-event JSON of the run\n"
        "                         to FILE (Perfetto, chrome://tracing)\n"
        "  --compdb               print compile_commands.json (every "
        "Artifact\n"
        "                         command), build nothing\n"
        "  --graph                print the graph of files, stages, blockers\n"
        "                         and jobs as Graphviz dot, build nothing\n"
        "  --watch                stay running: rebuild on every change,\n"
        "                         stopping compiles of stale content\n"
        "  --clean                remove the outputs and the state, build\n"
        "                         nothing\n"
        "  --cache                with --clean: remove the artifact cache "
        "too\n"
        "  --no-wait              when another vsched-run uses the state\n"
        "                         directory, fail instead of waiting\n"
        "  --list-plugins         list the plugins found and exit\n"
        "  --list-targets         list the configured targets and exit\n"
        "  --describe-plugin NAME print a plugin's configuration keys\n"
        "  --version              print the version and exit\n"
        "  --help                 print this help and exit\n"
        "\n"
        "exit status: 0 ok, 1 build failed, 2 usage, configuration or\n"
        "plugin error, 130 interrupted\n",
        out);
}

static int parse_count(const char *opt, const char *arg, int *out, char **err)
{
    char *end = NULL;
    long v = strtol(arg, &end, 10);
    if (arg[0] == '\0' || *end != '\0' || v < 0 || v > INT_MAX) {
        *err = vr_strfmt("%s: expected a non-negative integer, got '%s'", opt,
                         arg);
        return VSCHED_EINVAL;
    }
    *out = (int)v;
    return VSCHED_OK;
}

static int parse_color(const char *arg, int *out, char **err)
{
    static const char *const names[] = {"auto", "always", "never"};
    for (int i = 0; i < 3; i++)
        if (strcmp(arg, names[i]) == 0) {
            *out = i; /* VR_COLOR_AUTO, _ALWAYS, _NEVER */
            return VSCHED_OK;
        }
    *err = vr_strfmt("--color: expected auto, always or never, got '%s'", arg);
    return VSCHED_EINVAL;
}

static void push(const char ***v, size_t *n, const char *s)
{
    *v = vr_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = s;
}

int vr_cli_parse(vr_cli *cli, int argc, char **argv, char **err)
{
    memset(cli, 0, sizeof *cli);
    cli->jobs = cli->keep_going = -1;
    *err = NULL;
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":C:j:k:nvq", long_opts, NULL)) !=
           -1) {
        int rc = VSCHED_OK;
        switch (c) {
        case OPT_CONFIG: cli->config = optarg; break;
        case 'j':
            rc = parse_count("-j", optarg, &cli->jobs, err);
            if (rc == VSCHED_OK && cli->jobs == 0) {
                *err = vr_strfmt("-j: expected at least 1, got 0");
                rc = VSCHED_EINVAL;
            }
            break;
        case 'k': rc = parse_count("-k", optarg, &cli->keep_going, err); break;
        case 'n': cli->dry_run = 1; break;
        case 'v':
            cli->verbosity = cli->verbosity < 0 ? 1 : cli->verbosity + 1;
            break;
        case 'q': cli->verbosity = -1; break;
        case OPT_PROFILE:
            push(&cli->profiles, &cli->n_profiles, optarg);
            break;
        case OPT_SET: push(&cli->sets, &cli->n_sets, optarg); break;
        case OPT_STATS: cli->stats = 1; break;
        case OPT_DEPS: cli->deps = 1; break;
        case OPT_EXPLAIN: cli->explain = 1; break;
        case OPT_CLEAN: cli->clean = 1; break;
        case OPT_CACHE: cli->clean_cache = 1; break;
        case OPT_NO_WAIT: cli->no_wait = 1; break;
        case OPT_REPORT: cli->report = optarg; break;
        case OPT_TRACE: cli->trace = optarg; break;
        case OPT_COMPDB: cli->compdb = 1; break;
        case OPT_GRAPH: cli->graph = 1; break;
        case OPT_COLOR: rc = parse_color(optarg, &cli->color, err); break;
        case 'C': push(&cli->dirs, &cli->n_dirs, optarg); break;
        case OPT_WATCH: cli->watch = 1; break;
        case OPT_LIST: cli->list_plugins = 1; break;
        case OPT_LIST_TARGETS: cli->list_targets = 1; break;
        case OPT_DESCRIBE: cli->describe = optarg; break;
        case OPT_VERSION: cli->version = 1; break;
        case OPT_HELP: cli->help = 1; break;
        case ':':
            *err =
                vr_strfmt("option '%s' needs an argument", argv[optind - 1]);
            rc = VSCHED_EINVAL;
            break;
        default:
            *err = vr_strfmt("unknown option '%s'", argv[optind - 1]);
            rc = VSCHED_EINVAL;
            break;
        }
        if (rc != VSCHED_OK) {
            vr_cli_free(cli);
            return rc;
        }
    }
    cli->files = argv + optind;
    cli->n_files = (size_t)(argc - optind);
    if (cli->clean_cache && !cli->clean) {
        *err = vr_strfmt("--cache goes with --clean (--clean --cache "
                         "removes the artifact cache too)");
        vr_cli_free(cli);
        return VSCHED_EINVAL;
    }
    if (cli->clean && cli->n_files > 0) {
        vr_esc e = {0};
        *err = vr_strfmt("--clean removes every output and the state: it "
                         "takes no FILES (got '%s'); run it without them",
                         vr_esc_name(&e, cli->files[0]));
        vr_esc_done(&e);
        vr_cli_free(cli);
        return VSCHED_EINVAL;
    }
    int only = cli->deps + cli->compdb + cli->graph + cli->clean;
    if (only > 1) {
        *err = vr_strfmt("--deps, --compdb, --graph and --clean each replace "
                         "the build: give one of them");
        vr_cli_free(cli);
        return VSCHED_EINVAL;
    }
    if (cli->trace != NULL && only > 0) {
        *err = vr_strfmt("--trace records a build: it cannot be combined "
                         "with %s",
                         cli->deps     ? "--deps"
                         : cli->compdb ? "--compdb"
                         : cli->graph  ? "--graph"
                                       : "--clean");
        vr_cli_free(cli);
        return VSCHED_EINVAL;
    }
    if (cli->clean && (cli->deps || cli->dry_run)) {
        *err = vr_strfmt("--clean cannot be combined with %s",
                         cli->deps ? "--deps" : "-n");
        vr_cli_free(cli);
        return VSCHED_EINVAL;
    }
    if (cli->watch && (cli->clean || cli->deps || cli->dry_run)) {
        *err = vr_strfmt("--watch cannot be combined with %s",
                         cli->clean  ? "--clean"
                         : cli->deps ? "--deps"
                                     : "-n");
        vr_cli_free(cli);
        return VSCHED_EINVAL;
    }
    return VSCHED_OK;
}

void vr_cli_free(vr_cli *cli)
{
    free(cli->profiles);
    free(cli->sets);
    free(cli->dirs);
    cli->profiles = cli->sets = cli->dirs = NULL;
    cli->n_profiles = cli->n_sets = cli->n_dirs = 0;
}
