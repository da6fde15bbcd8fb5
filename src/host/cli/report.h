/*
 * report -- the --report FILE document: one JSON object (json.h) with
 *
 *   version   1
 *   files     one object per (input, profile), profile-major in input
 *             order: path (the input as named), profile, status
 *             ("ok", "failed", "dependency_failed", "skipped" when -k
 *             stopped the build before it, "cancelled" when interrupted),
 *             rebuilt (its output was made or restored this run), cached
 *             (restored from the cache), reason (why it was rebuilt, or
 *             "up to date"), duration_ms (its stage work this run);
 *   jobs      the link jobs, same fields, with name, kind and output;
 *   removed   outputs removed because their file left the inputs;
 *   stats     counts of the run (files, rebuilt, compiled, restored, kept,
 *             up_to_date, failed, sources_hashed, outputs_hashed,
 *             wall_ms) and of the cache.
 *
 * The file is written to a temporary name beside FILE and renamed, so a
 * reader never sees half a report. Main thread only.
 */
#ifndef VSCHED_HOST_REPORT_H
#define VSCHED_HOST_REPORT_H

#include <stdint.h>

#include "build/plan.h"
#include "state/cache.h"

/* How a run ended, beyond the plan's rows. */
typedef struct vr_run_info {
    int stopped;     /* -k cancelled the rest */
    int interrupted; /* a signal cancelled the rest */
    double wall_s;
    uint64_t sources_hashed, outputs_hashed;
    int have_cache;
    vr_cache_counts cache;
} vr_run_info;

/* Per-run tallies of the rows, as the summary and the report count them. */
typedef struct vr_tally {
    size_t rebuilt, compiled, restored, kept, current, failed, cancelled;
} vr_tally;

/* The report's status word of a row or link. */
const char *vr_report_status(int submitted, int status,
                             const vr_run_info *info);

void vr_tally_rows(const vr_plan *p, vr_tally *t);

/* Write the report to `path`. Returns 0, or VSCHED_EIO with *msg (heap). */
int vr_report_write(const char *path, const vr_plan *p,
                    const vr_run_info *info, char **msg);

#endif
