/*
 * run -- the order of one vsched-run build: the plan, -n, "nothing to
 * do", the batch, the records and the report (run.c lists the steps).
 */
#ifndef VSCHED_HOST_RUN_H
#define VSCHED_HOST_RUN_H

#include "build/build.h"

/* Run the build; returns the process exit status (VR_EXIT_*). */
int vr_build_run(const vr_build *b);

#endif
