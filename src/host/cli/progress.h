/*
 * progress -- what vsched-run prints while it builds: the status line.
 *
 * On a terminal: one status line, rewritten in place, "[done/total] STAGE
 * file" for every stage that ends (done counts Artifact results), elided
 * in the middle to the terminal's width, ninja style. Elsewhere: one
 * plain line per finished artifact ("[done/total] artifact PROFILE
 * file"; every stage with -v). Names are printed escaped (escape.h).
 *
 * Failures are printed whole (message and the executor's diagnostics) by
 * vr_progress_failure; the diagnostics of a stage that succeeded (compiler
 * warnings) by vr_progress_warning, tagged with the file and the plugin,
 * and counted -- unless quiet, which counts them only. Colour (when
 * enabled) marks FAILED red and WARNING yellow.
 *
 * Thread-safety: vr_progress_event may be called from the scheduler's
 * observer thread while the main thread waits; `lock` (a leaf) serialises
 * all output and guards the counts.
 */
#ifndef VSCHED_HOST_PROGRESS_H
#define VSCHED_HOST_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

#include <vsched/vsched.h>

typedef struct vr_progress vr_progress;

/* verbosity: -1 quiet, 0 normal, 1 verbose (every stage). tty selects the
 * status-line mode, color the colour codes. total counts the Artifact
 * results expected. */
vr_progress *vr_progress_new(FILE *out, int verbosity, int tty, int color,
                             size_t total);
void vr_progress_free(vr_progress *p);

/* 1 when colour is on for `out` under --color mode `mode` (VR_COLOR_*):
 * always; never; auto: `out` is a terminal and NO_COLOR is unset or
 * empty. */
int vr_progress_use_color(FILE *out, int mode);

/* Scheduler observer (vsched_observer_fn). */
void vr_progress_event(void *p, const vsched_event *ev);

/* Clear the status line (terminal mode) before other output. */
void vr_progress_clear(vr_progress *p);

/* Print one failed result whole. */
void vr_progress_failure(vr_progress *p, const vsched_result *r);

/* A result that succeeded with diagnostics: print them whole, tagged
 * "WARNING: NAME [PROFILE] (PLUGIN)", and count one warning (printed or,
 * when quiet, not). Nothing for a result without diagnostics. */
void vr_progress_warning(vr_progress *p, const vsched_result *r,
                         const char *plugin);

/* Warnings counted so far. */
size_t vr_progress_warnings(vr_progress *p);

/* The width the status line is elided to: the terminal's columns (of
 * `fd`), else $COLUMNS, else 80. */
unsigned vr_progress_width(int fd);

/* `line` elided in the middle to at most `width` bytes with "..." (never
 * splitting a UTF-8 sequence), into buf[cap]. */
void vr_progress_elide(const char *line, unsigned width, char *buf,
                       size_t cap);

#endif
