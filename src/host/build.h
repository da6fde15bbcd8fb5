/*
 * build -- the batch compile of vsched-run.
 *
 * Expands the inputs, creates the pools and the scheduler around the loaded
 * plugins, submits every (input, profile) Artifact request as ONE atomic
 * batch, waits for the whole batch, and reports in input order.
 */
#ifndef VSCHED_HOST_BUILD_H
#define VSCHED_HOST_BUILD_H

#include <stdio.h>

#include <vsched/vsched.h>

#include "cli.h"
#include "config.h"

typedef struct vr_build {
    const vr_cli *cli;
    const vr_config *cfg;
    vsched_loader_binding loader;
    vsched_executor_binding executor;
    FILE *out;   /* progress and results */
    FILE *err;   /* errors */
} vr_build;

/* Expand the build's inputs into source names (heap array of heap strings,
 * *n entries): FILES from the command line if any, else [batch] inputs,
 * each a glob pattern under [loader] root when the loader has a root (a
 * pattern without wildcards is taken as a name). A pattern matching nothing
 * is an error. Returns 0 or VSCHED_ECONFIG with *err set. */
int vr_build_inputs(const vr_build *b, char ***names, size_t *n, char **err);

/* Run the build; returns the process exit status (VR_EXIT_*). */
int vr_build_run(const vr_build *b);

#endif
