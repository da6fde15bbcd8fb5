/*
 * build -- the batch compile of vsched-run, and the scheduler session it
 * shares with the other host batch APIs (deps.h).
 *
 * Expands the inputs, creates the stage pools and the scheduler around the
 * loaded plugins, and runs the compile as ONE batch of the coordinator
 * (coord.h): its shared wait point submits every (input, profile) Artifact
 * request as ONE atomic batch and waits for it with ONE vsched_wait_batch
 * on a coordinator worker; its items then take the results in input order.
 */
#ifndef VSCHED_HOST_BUILD_H
#define VSCHED_HOST_BUILD_H

#include <stdio.h>

#include <vsched/vsched.h>

#include "cli.h"
#include "config.h"
#include "coord.h"

typedef struct vr_build {
    const vr_cli *cli;
    const vr_config *cfg;
    vsched_loader_binding loader;
    vsched_executor_binding executor;
    FILE *out;   /* progress and results */
    FILE *err;   /* errors */
    vr_coord *coord; /* the host's coordinator pool (borrowed); required */
} vr_build;

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
/* The --stats lines. */
void vr_session_print_stats(FILE *out, vsched *s);

/* Expand the build's inputs into source names (heap array of heap strings,
 * *n entries): FILES from the command line if any, else [batch] inputs,
 * each a glob pattern under [loader] root when the loader has a root (a
 * pattern without wildcards is taken as a name). A pattern matching nothing
 * is an error. Returns 0 or VSCHED_ECONFIG with *err set. */
int vr_build_inputs(const vr_build *b, char ***names, size_t *n, char **err);

/* Free what vr_build_inputs returned. */
void vr_build_inputs_free(char **names, size_t n);

/* Run the build; returns the process exit status (VR_EXIT_*). */
int vr_build_run(const vr_build *b);

#endif
