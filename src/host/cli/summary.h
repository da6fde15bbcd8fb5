/*
 * summary -- the end of a build's output, after the failures printed
 * whole:
 *
 *   vsched-run: failed: NAME [PROFILE]: FIRST DIAGNOSTIC LINE   (each)
 *   vsched-run: N failed, M not run because a dependency failed
 *   vsched-run: interrupted: K not built (A, B, C and 2 more); what
 *               finished is recorded                   (or: stopped
 *               after N failures (-k N): K not built (...))
 *   vsched-run: B built, F failed[, K not built][, U up to date][, R from
 *               cache][, W warnings] (S s)
 *
 * The first two parts only when something failed, the third only when
 * something was not built. The first diagnostic line is the first line
 * with "error" in it of the first error diagnostic (a compiler's output
 * starts with "In function ..."), else its first line, else the result's
 * message; names are escaped (escape.h).
 *
 * Not thread-safe: the main thread fills and prints it after the batch.
 */
#ifndef VSCHED_HOST_SUMMARY_H
#define VSCHED_HOST_SUMMARY_H

#include <stddef.h>
#include <stdio.h>

#include <vsched/vsched.h>

typedef struct vr_summary vr_summary;

/* Why what was not built was not: */
#define VR_SUMMARY_INTERRUPTED 1 /* a signal */
#define VR_SUMMARY_STOPPED 2     /* -k N */

/* The counts of the closing line. */
typedef struct vr_summary_counts {
    size_t built, failed, cancelled, current, restored, warnings;
    double seconds;
} vr_summary_counts;

vr_summary *vr_summary_new(void);
void vr_summary_free(vr_summary *s);

/* A failed file (`label` NULL) or job ("link"): `name`, `profile` (may be
 * NULL) and r's first diagnostic line are copied. */
void vr_summary_failed(vr_summary *s, const char *label, const char *name,
                       const char *profile, const vsched_result *r);
/* One not run because a dependency failed. */
void vr_summary_dep_failed(vr_summary *s);
/* One not built because the build was cut short; `name` is copied. */
void vr_summary_not_built(vr_summary *s, const char *name);

/* The first diagnostic line of r (see above), heap; "" when r says
 * nothing. */
char *vr_summary_first_line(const vsched_result *r);

/* Print it (see above). `why` is VR_SUMMARY_INTERRUPTED,
 * VR_SUMMARY_STOPPED or 0, `keep_going` the -k N in force. `color`: the
 * failures in red. */
void vr_summary_print(const vr_summary *s, FILE *out, int color, int why,
                      long keep_going, const vr_summary_counts *c);

#endif
