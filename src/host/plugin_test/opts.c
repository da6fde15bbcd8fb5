/*
 * opts -- the command line of vsched-plugin-test; see plugin_test.h.
 */
#include <getopt.h>
#include <string.h>

#include <vsched/vsched.h>

#include "common/util.h"
#include "plugin_test/plugin_test.h"

enum {
    OPT_CONFIG = 256,
    OPT_SET,
    OPT_PROFILE,
    OPT_ROOT,
    OPT_ROLE,
    OPT_STAGE,
    OPT_JOB,
    OPT_CANCELLED,
    OPT_HELP,
    OPT_VERSION
};

static const struct option pt_long_opts[] = {
    {"config", required_argument, NULL, OPT_CONFIG},
    {"set", required_argument, NULL, OPT_SET},
    {"profile", required_argument, NULL, OPT_PROFILE},
    {"root", required_argument, NULL, OPT_ROOT},
    {"role", required_argument, NULL, OPT_ROLE},
    {"stage", required_argument, NULL, OPT_STAGE},
    {"job", required_argument, NULL, OPT_JOB},
    {"cancelled", no_argument, NULL, OPT_CANCELLED},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

void pt_usage(FILE *out)
{
    fputs("usage: vsched-plugin-test [options] PLUGIN [FILE...]\n"
          "\n"
          "Load one plugin as vsched-run does (PLUGIN is a name searched\n"
          "like vsched-run's, or a path containing '/') and call each of\n"
          "its operations on FILES (source names relative to the loader\n"
          "root), printing the results.\n"
          "\n"
          "options:\n"
          "  --config FILE          INI file with the plugin's section\n"
          "                         ([executor] or [loader]), [profile.*]\n"
          "                         and [vsched] plugin_path\n"
          "  --set SECTION.KEY=VALUE  set a configuration key (repeatable)\n"
          "  --root DIR             loader root (default: [loader] root, or\n"
          "                         the built-in fs loader over .)\n"
          "  --role ROLE            test only ROLE: loader or executor\n"
          "  --stage STAGE          stop after STAGE: source, analysis or\n"
          "                         artifact (default artifact)\n"
          "  --profile NAME         artifact profile (repeatable; default\n"
          "                         [batch] profiles, else release)\n"
          "  --job KIND:NAME        also call job() with every artifact\n"
          "  --cancelled            is_cancelled() answers 1\n"
          "  --version              print the version and exit\n"
          "  --help                 print this help and exit\n"
          "\n"
          "exit status: 0 every operation succeeded, 1 an operation failed\n"
          "or a contract was broken, 2 usage, configuration or plugin error\n",
          out);
}

static void pt_push(const char ***v, size_t *n, const char *s)
{
    *v = vr_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = s;
}

static int pt_parse_role(const char *arg, unsigned *roles)
{
    if (strcmp(arg, "loader") == 0)
        *roles = VSCHED_ROLE_LOADER;
    else if (strcmp(arg, "executor") == 0)
        *roles = VSCHED_ROLE_EXECUTOR;
    else
        return -1;
    return 0;
}

static int pt_parse_stage(const char *arg, int *stage)
{
    for (int s = VSCHED_STAGE_SOURCE; s <= VSCHED_STAGE_ARTIFACT; s++)
        if (strcmp(arg, vsched_stage_name((vsched_stage)s)) == 0) {
            *stage = s;
            return 0;
        }
    return -1;
}

/* Contract: see plugin_test.h. */
int pt_parse(pt_opts *o, int argc, char **argv, char **err)
{
    memset(o, 0, sizeof *o);
    o->last_stage = VSCHED_STAGE_ARTIFACT;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":", pt_long_opts, NULL)) != -1) {
        switch (c) {
        case OPT_CONFIG: o->config = optarg; break;
        case OPT_SET: pt_push(&o->sets, &o->n_sets, optarg); break;
        case OPT_PROFILE: pt_push(&o->profiles, &o->n_profiles, optarg); break;
        case OPT_ROOT: o->root = optarg; break;
        case OPT_JOB: o->job = optarg; break;
        case OPT_CANCELLED: o->cancelled = 1; break;
        case OPT_HELP: o->help = 1; break;
        case OPT_VERSION: o->version = 1; break;
        case OPT_ROLE:
            if (pt_parse_role(optarg, &o->roles) != 0) {
                *err = vr_strfmt("--role: expected loader or executor, got "
                                 "'%s'",
                                 optarg);
                return -1;
            }
            break;
        case OPT_STAGE:
            if (pt_parse_stage(optarg, &o->last_stage) != 0) {
                *err = vr_strfmt("--stage: expected source, analysis or "
                                 "artifact, got '%s'",
                                 optarg);
                return -1;
            }
            break;
        case ':':
            *err =
                vr_strfmt("option '%s' needs an argument", argv[optind - 1]);
            return -1;
        default:
            *err = vr_strfmt("unknown option '%s'", argv[optind - 1]);
            return -1;
        }
    }
    if (o->job != NULL) {
        const char *colon = strchr(o->job, ':');
        if (colon == NULL || colon == o->job || colon[1] == '\0') {
            *err = vr_strfmt("--job: expected KIND:NAME, got '%s'", o->job);
            return -1;
        }
    }
    if (optind < argc)
        o->plugin = argv[optind++];
    o->files = argv + optind;
    o->n_files = (size_t)(argc - optind);
    if (o->plugin == NULL && !o->help && !o->version) {
        *err = vr_xstrdup("no PLUGIN given");
        return -1;
    }
    return 0;
}
