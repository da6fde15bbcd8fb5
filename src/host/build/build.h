/*
 * build -- what a build is made of: its inputs and profiles, and the
 * scheduler session (stage pools + scheduler) it shares with the other
 * host batch APIs (deps.h).
 *
 * The order of a run is cli/run.c (vr_build_run, cli/run.h): the
 * incremental plan (plan.h), then only what is not current through the
 * scheduler as ONE batch of the coordinator (batch.h), then the records
 * and the report.
 */
#ifndef VSCHED_HOST_BUILD_H
#define VSCHED_HOST_BUILD_H

#include <stdio.h>

#include <vsched/vsched.h>

#include "build/coord.h"
#include "cli/cli.h"
#include "config/config.h"
#include "config/settings.h"
#include "config/targets.h"

/* What --watch (watch/watch.h) asks of one build run; NULL in a plain
 * run. The run calls `session` with its scheduler once it is open and
 * with NULL before it is destroyed (from the main thread; the callee may
 * hand the scheduler to another thread meanwhile, and must have taken it
 * back when the NULL call returns); its requests then follow the latest
 * content (VSCHED_REQ_FOLLOW_LATEST), so a file invalidated while it
 * builds is built again at its new generation. The counts are filled by
 * vr_build_run. */
typedef struct vr_build_hooks {
    void (*session)(void *user, vsched *s);
    void *user;
    int quiet_noop;         /* in: do not say "nothing to do" */
    size_t rebuilt, failed; /* out: files rebuilt, failed or not built */
    int scheduled;          /* out: 1 when the scheduler ran */
} vr_build_hooks;

typedef struct vr_build {
    const vr_cli *cli;
    const vr_settings *settings; /* the host's keys, validated */
    const vr_config *cfg;        /* the plugins' sections only (keys.h) */
    vsched_loader_binding loader;
    vsched_executor_binding executor; /* the plugin's own instance */
    /* The binding the stages call (vr_build_stages): [executor] isolate's
     * worker pool (isolate.h), or all NULL for `executor` itself.
     * identity() and command() always go to `executor`. */
    vsched_executor_binding stages;
    const vsched_plugin *loader_desc; /* their descriptors */
    const vsched_plugin *executor_desc;
    FILE *out;       /* progress and results */
    FILE *err;       /* errors */
    vr_coord *coord; /* the host's coordinator pool (borrowed); required */
    const vr_targets *targets; /* [target.*] and [batch] link, varied;
                                  NULL: none */
    /* Optional: the session's task observer (--trace, cli/trace.h). */
    vsched_task_observer_fn task_observer;
    void *task_observer_user;
    vr_build_hooks *hooks; /* --watch's, or NULL */
    /* Nonzero once the user asked the run to stop (SIGINT, SIGTERM), or
     * NULL: what the build submits afterwards is cancelled at once, since
     * a vsched_cancel ends only what was submitted before it. */
    int (*interrupted)(void);
} vr_build;

/* The executor binding of the stages: b->stages when set, else
 * b->executor. */
vsched_executor_binding vr_build_stages(const vr_build *b);

/* The scheduler and its stage pools for one run. The coordinator is not
 * part of it: it is never handed to the scheduler. */
typedef struct vr_session {
    vsched_pool *cpu_pool, *io_pool;
    vsched *sched;
} vr_session;

/* Create the stage pools ([vsched] cpu_threads or -j, io_threads) and the
 * scheduler with `observer` (may be NULL). Returns 0, or -1 after printing
 * the reason to b->err; either way vr_session_close() cleans up. */
int vr_session_open(vr_session *ss, const vr_build *b,
                    vsched_observer_fn observer, void *observer_user);
/* Destroy the scheduler, then its pools. */
void vr_session_close(vr_session *ss);
/* The --stats lines of the scheduler: of a live one, or of counters
 * taken before it was destroyed. */
void vr_session_print_stats(FILE *out, vsched *s);
void vr_session_print_counters(FILE *out, const vsched_stats *st);

/* The target operand i of the command line names (an index into
 * b->targets), or -1: a file operand (cli.is_file) is never a target. */
long vr_build_operand_target(const vr_build *b, size_t i);

/* Expand the build's inputs into source names (heap array of heap strings,
 * *n entries): the FILES of the command line that are not target names
 * if any, else [batch] inputs and every target's inputs (less its
 * excludes), each a glob pattern (glob.h) under [loader] root when the
 * loader has a root (a pattern without wildcards is taken as a name).
 * Duplicates are dropped, the first kept. A pattern matching nothing is
 * an error naming it. Returns 0 or VSCHED_ECONFIG with *err set. */
int vr_build_inputs(const vr_build *b, char ***names, size_t *n, char **err);

/* Append to *names (*n entries) the names `pats` match under the loader
 * root (glob.h), without those `excl` removes; `where` ("FILE:LINE: " or
 * "--set: ", as schema.h makes it) and `what` say where the patterns are
 * for "WHERE WHAT: pattern 'P' matches no file under ROOT". Returns 0 or
 * VSCHED_ECONFIG with *err set (*names keeps what was appended; the
 * caller frees it). */
int vr_build_expand(const vr_build *b, char *const *pats, size_t n_pats,
                    char *const *excl, size_t n_excl, const char *where,
                    const char *what, char ***names, size_t *n, char **err);

/* Where [batch] inputs is set, as vr_build_expand takes it (heap). */
char *vr_build_batch_where(const vr_build *b);

/* Drop repeated names of v (*n entries), keeping the first occurrence
 * and the order; the dropped strings are freed. */
void vr_build_dedupe(char **v, size_t *n);

/* Free what vr_build_inputs returned. */
void vr_build_inputs_free(char **names, size_t n);

/* The profiles to build: --profile flags, else [batch] profiles, else
 * "release". Heap array of heap strings (vr_build_inputs_free). */
char **vr_build_profiles(const vr_build *b, size_t *n);

#endif
