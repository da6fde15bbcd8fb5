/*
 * progress -- what vsched-run prints while it builds.
 *
 * On a terminal: one status line, rewritten in place, "[done/total] STAGE
 * file". Elsewhere: one plain line per finished file. Failures are printed
 * whole (message and the executor's diagnostics) by vr_progress_failure,
 * and vr_progress_summary ends the run with one line.
 *
 * Thread-safety: vr_progress_event may be called from the scheduler's
 * observer thread while the main thread waits; an internal mutex (leaf
 * lock) serialises all output.
 */
#ifndef VSCHED_HOST_PROGRESS_H
#define VSCHED_HOST_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

#include <vsched/vsched.h>

typedef struct vr_progress vr_progress;

/* verbosity: -1 quiet, 0 normal, 1 verbose (every stage). tty selects the
 * status-line mode. total counts the Artifact results expected. */
vr_progress *vr_progress_new(FILE *out, int verbosity, int tty, size_t total);
void vr_progress_free(vr_progress *p);

/* Scheduler observer (vsched_observer_fn). */
void vr_progress_event(void *p, const vsched_event *ev);

/* Clear the status line (terminal mode) before other output. */
void vr_progress_clear(vr_progress *p);

/* Print one failed result whole. */
void vr_progress_failure(vr_progress *p, const vsched_result *r);

/* Print the closing line: "vsched-run: N built, N failed[, N not
 * built][, N up to date][, N from cache] (S s)". */
void vr_progress_summary(vr_progress *p, size_t built, size_t failed,
                         size_t cancelled, size_t current, size_t restored,
                         double seconds);

#endif
