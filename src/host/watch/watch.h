/*
 * watch -- vsched-run --watch: build, then stay running and build again
 * on every settled set of changes under the loader's root, each build a
 * normal run (plan, batch, records, report) whose output is one block
 * ending in a line
 *
 *     watch: 2 changed, 5 rebuilt, 0 failed (0.41 s)
 *
 * Changes are watched from before the first build starts (watcher.h); a
 * change while a build runs stops the stale work in it at once, and the
 * build finishes with the new content; the next build then checks what
 * changed (usually: nothing left to do, and nothing is printed).
 *
 * Ends with 130 on SIGINT/SIGTERM (between builds at once, during one
 * after its running compiles were stopped and what finished recorded), 1
 * when the root went away, 2 when the first build could not start
 * (configuration, state) or the root cannot be watched.
 */
#ifndef VSCHED_HOST_WATCH_H
#define VSCHED_HOST_WATCH_H

#include "build/build.h"

/* Run --watch; returns the exit status (VR_EXIT_*). */
int vr_watch_run(const vr_build *b);

#endif
