/*
 * cli -- the command line of vsched-run.
 */
#ifndef VSCHED_HOST_CLI_H
#define VSCHED_HOST_CLI_H

#include <stddef.h>
#include <stdio.h>

typedef struct vr_cli {
    const char *config; /* --config FILE ("-": standard input);
                                  NULL: ./vsched.ini */
    const char **dirs;  /* -C DIR (repeatable: each relative to the
                                  one before, as make's) */
    size_t n_dirs;
    int jobs;              /* -j N; -1 when not given */
    int keep_going;        /* -k N; -1 when not given */
    int verbosity;         /* -1 quiet, 0 normal, 1+ verbose */
    const char **profiles; /* --profile NAME (repeatable) */
    size_t n_profiles;
    const char **sets; /* --set SECTION.KEY=VALUE (repeatable) */
    size_t n_sets;
    int dry_run;        /* -n */
    int stats;          /* --stats */
    int deps;           /* --deps: print deps instead of building */
    int explain;        /* --explain: why each file is rebuilt */
    int clean;          /* --clean: remove outputs and state */
    int clean_cache;    /* --cache (with --clean): and the cache */
    int no_wait;        /* --no-wait: refuse a locked state_dir */
    const char *report; /* --report FILE */
    const char *trace;  /* --trace FILE: Chrome trace-event JSON */
    int compdb;         /* --compdb: compile_commands.json, no build */
    int graph;          /* --graph: Graphviz dot, no build */
    int color;          /* --color: VR_COLOR_* */
    int watch;          /* --watch: rebuild on change (watch.h) */
    int version, help, list_plugins;
    int list_targets;     /* --list-targets */
    const char *describe; /* --describe-plugin NAME */
    char **files;         /* operands: source or target names
                                  (borrowed argv) */
    size_t n_files;
    /* Set once the operands are resolved (vr_operands_resolve): 1 for
     * each that names a file -- never a target then, even when its
     * canonical name is a target's; NULL before. */
    const unsigned char *is_file;
} vr_cli;

/* --color=auto|always|never. auto: on a terminal unless NO_COLOR is set
 * (to anything but the empty string). */
#define VR_COLOR_AUTO 0
#define VR_COLOR_ALWAYS 1
#define VR_COLOR_NEVER 2

/* Exit statuses of vsched-run. */
#define VR_EXIT_OK 0
#define VR_EXIT_FAILED 1
#define VR_EXIT_USAGE 2
#define VR_EXIT_INTERRUPTED 130

/* Parse argv. Returns 0, or VSCHED_EINVAL with *err set to a one-line
 * message (caller frees) for unknown options, missing or bad arguments. */
int vr_cli_parse(vr_cli *cli, int argc, char **argv, char **err);
void vr_cli_free(vr_cli *cli);
/* The --help text. */
void vr_cli_usage(FILE *out);

#endif
