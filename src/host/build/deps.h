/*
 * deps -- `vsched-run --deps`: the batch metadata API, the second client of
 * the coordinator's batch primitive (coord.h).
 *
 * Each input (FILES, else [batch] inputs) is one batch item: one Source
 * request, submitted and waited for on a coordinator worker. The output is
 * one line per input, in input order:
 *     src/main.c: include/greet.h
 *     src/x.c: error: cannot load src/x.c: no such file
 */
#ifndef VSCHED_HOST_DEPS_H
#define VSCHED_HOST_DEPS_H

#include "build/build.h"

/* Print every input's resolved deps; returns VR_EXIT_OK, VR_EXIT_FAILED
 * when some input failed, or VR_EXIT_USAGE. */
int vr_deps_run(const vr_build *b);

#endif
