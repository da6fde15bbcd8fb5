/*
 * clean -- vsched-run --clean [--cache]: remove every output the state
 * records under [executor] out_dir (objects and linked programs; the
 * temporaries a killed run left are the executor's sweep's, at the next
 * build that writes), then the state database; with --cache the artifact
 * cache too. Sources and the lock file (see lock.h) stay. Takes the state
 * directory's lock like a build (--no-wait applies). Needs no plugin:
 * main.c runs it before any is loaded, so a tree whose sources are gone
 * can be cleaned.
 */
#ifndef VSCHED_HOST_CLEAN_H
#define VSCHED_HOST_CLEAN_H

#include "build/build.h"

/* Returns the exit status (VR_EXIT_OK, or VR_EXIT_USAGE with a message on
 * b->err). */
int vr_clean_run(const vr_build *b);

#endif
