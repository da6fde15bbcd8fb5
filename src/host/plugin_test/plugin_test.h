/*
 * plugin_test -- what the files of vsched-plugin-test share (main.c
 * describes the program; doc/vsched-plugin-test.1 is its manual):
 *
 *   main.c      the order of a run: configuration, opening the plugin and
 *               the loader feeding it, the run, the summary line;
 *   opts.c      the command line;
 *   ctx.c       the test context: output lines, the checking allocator,
 *               the vsched_ctx callbacks;
 *   loader.c    the loader operations on one file;
 *   executor.c  the files of the run: source, extract_deps and analysis,
 *               blockers first, then each FILE's artifacts;
 *   artifact.c  artifact, job and identity, and publishing their output
 *               as the host does.
 *
 * One thread, no scheduler: nothing here is thread-safe.
 */
#ifndef VSCHED_HOST_PLUGIN_TEST_H
#define VSCHED_HOST_PLUGIN_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <vsched/plugin.h>

#include "common/util.h"

#define PT_EXIT_OK 0
#define PT_EXIT_FAILED 1
#define PT_EXIT_USAGE 2

/* ---- command line (opts.c) ---------------------------------------------- */

typedef struct pt_opts {
    const char *config; /* --config FILE, or NULL */
    const char **sets;  /* --set SECTION.KEY=VALUE, in order */
    size_t n_sets;
    const char **profiles; /* --profile NAME */
    size_t n_profiles;
    const char *root; /* --root DIR */
    unsigned roles;   /* --role: VSCHED_ROLE_* bits, 0 = all */
    int last_stage;   /* --stage: last vsched_stage to run */
    const char *job;  /* --job KIND:NAME */
    int cancelled;    /* --cancelled */
    int help, version;
    const char *plugin;
    char **files;
    size_t n_files;
} pt_opts;

/* Parse argv into *o (which borrows argv). Returns 0, or -1 with *err set
 * (heap). */
int pt_parse(pt_opts *o, int argc, char **argv, char **err);
/* The --help text. */
void pt_usage(FILE *out);

/* ---- the test run and its context (ctx.c) ------------------------------- */

/* The test allocator keeps this many recently freed blocks, to tell a
 * double free from a foreign pointer. */
#define PT_DEAD_RING 4096

/* One source file as far as the run took it. */
typedef struct pt_file {
    char *name; /* canonical source name (heap) */
    int state;  /* 0 new, 1 in progress, 2 done */
    int status; /* 0, or the status it failed with */
    int have_snapshot;
    void *snapshot; /* executor-owned until snapshot_free */
    uint64_t content_hash;
    uint64_t analysis_hash;
    vsched_deps_out deps; /* host-owned (test allocator) */
    char **artifacts;     /* published path per profile, or NULL */
} pt_file;

typedef struct pt_run {
    const pt_opts *opts;
    vsched_ctx ctx;      /* ctx.host points back here */
    const char *current; /* name of the file being worked on */
    int quiet_diags;     /* repeated calls: do not print again */
    void **live_v;       /* ctx->alloc blocks not yet freed */
    size_t live, live_cap;
    void **dead_v; /* ring of the last PT_DEAD_RING freed */
    size_t dead_next;
    size_t failed_ops;
    size_t violations;
    size_t warnings;

    const vsched_loader_ops *lops;
    void *linst;
    const vsched_executor_ops *xops;
    void *xinst;

    char **profiles;
    size_t n_profiles;
    pt_file *files;
    size_t n_files, cap_files;
} pt_run;

/* Set up r's allocator state and its vsched_ctx (ctx.host = r), for a run
 * with r->opts set; pt_ctx_fini frees what is left. */
void pt_ctx_init(pt_run *r);
void pt_ctx_fini(pt_run *r);

/* A line about the current file: "NAME: TEXT". */
void pt_say(const pt_run *r, const char *fmt, ...) VR_PRINTF(2, 3);
/* "NAME: contract: TEXT", counted as a violation. */
void pt_violation(pt_run *r, const char *fmt, ...) VR_PRINTF(2, 3);
/* "NAME: warning: TEXT", counted as a warning. */
void pt_warning(pt_run *r, const char *fmt, ...) VR_PRINTF(2, 3);
/* Print an operation's outcome; returns rc normalised (0 or negative). A
 * status outside the VSCHED_E* list is a contract violation. */
int pt_outcome(pt_run *r, const char *op, int rc, const char *detail);
/* Release a buffer the plugin handed to the host, as the host would
 * (`what` names it in a violation). */
void pt_release(pt_run *r, void *p, const char *what);

/* ---- loader operations (loader.c) --------------------------------------- */

/* realpath of `name`: the canonical name (heap, via strdup) or NULL;
 * printed (and checked for idempotence) when `print` is non-zero. */
char *pt_realpath(pt_run *r, const char *name, int print);
void pt_exists(pt_run *r, const char *name);
/* classify into kind[cap]; 0 or a status. */
int pt_classify(pt_run *r, const char *name, char *kind, size_t cap);
/* load: *bytes (heap copy via malloc, NUL-terminated) and *len, or a
 * status. */
int pt_load(pt_run *r, const char *name, char **bytes, size_t *len);

/* ---- executor operations (executor.c, artifact.c) ----------------------- */

/* The file named `name` in the run, added when new. The array may move:
 * a pointer is valid until the next call. */
pt_file *pt_file_get(pt_run *r, const char *name);
/* The blockers of `name` as the scheduler hands them to Analysis (direct,
 * in order) and Artifact (direct, or with `closure` the transitive
 * closure in breadth-first order, each once, `name` left out): names and
 * snapshots borrowed from r's files. Heap array of *n (free it); every
 * blocker must already have been parsed. */
vsched_blocker_in *pt_blockers(pt_run *r, const char *name, int closure,
                               size_t *n);
/* Take `name` (canonical) through load, source, extract_deps and, when
 * asked, analysis. Returns 0, 1 when it is already in progress (a blocker
 * cycle), or the status it failed with. Each file is worked once. */
int pt_prepare(pt_run *r, const char *name, int want_analysis);
/* Everything for one named FILE. */
void pt_one(pt_run *r, const char *given);
/* Free the run's files (snapshots, deps, artifact paths) and profiles. */
void pt_run_free(pt_run *r);

/* artifact of f for profile r->profiles[p], published. */
void pt_artifact(pt_run *r, pt_file *f, size_t p);
/* command (ABI 1.1, optional) of f for profile r->profiles[p], after its
 * artifact: argv whole, paths absolute, and the output it names the one
 * artifact published. */
void pt_command(pt_run *r, const pt_file *f, size_t p);
/* job KIND:NAME (--job) for each profile, with the published artifacts. */
void pt_job(pt_run *r);
/* identity (ABI 1.1, optional) of each profile, twice: it must be stable
 * within a run, since the host folds it into every artifact key. */
void pt_identity(pt_run *r);

#endif
