/*
 * dirty -- the up-to-date check: is a recorded artifact (or job) still
 * what its inputs would make, and if not, the first reason why.
 *
 * An artifact is current when, in this order:
 *
 *   1. it has a record (else "new");
 *   2. the executor's tool hash is the recorded one ("compiler changed")
 *      and so is the configuration hash ("flags changed") -- keys.h;
 *   3. every file it was built from (the source first, then every file
 *      reached through the executor's deps and blockers, and every file
 *      the tool itself reported, such as a compiler's depfile) has the
 *      content hash it had when the artifact was built ("source changed",
 *      "dependency X changed"); the current hashes come from sources.h,
 *      which answers from a stat(2) when the stamp is unchanged;
 *   4. its output exists ("output missing") and still has the recorded
 *      stamp, or else the recorded content hash ("output modified"; an
 *      equal hash only refreshes the recorded stamp).
 *
 * Nothing here reads a source whose stamp is unchanged, and nothing calls
 * a plugin: on a run where nothing changed, the check is stat calls only.
 *
 * Thread-safe (it keeps nothing; sources.h is thread-safe).
 */
#ifndef VSCHED_HOST_DIRTY_H
#define VSCHED_HOST_DIRTY_H

#include <stdint.h>

#include "state/sources.h"
#include "state/state.h"

typedef enum vr_reason {
    VR_CURRENT = 0,  /* up to date */
    VR_NEW,          /* never built (in this state) */
    VR_TOOL,         /* the executor or its tool changed */
    VR_FLAGS,        /* the effective configuration changed */
    VR_SOURCE,       /* the source's content changed */
    VR_DEP,          /* a dependency's content changed (what) */
    VR_OUT_MISSING,  /* the output is gone */
    VR_OUT_MODIFIED, /* the output was changed by someone else */
    VR_INPUTS        /* a job's inputs or flags changed (what: an input) */
} vr_reason;

typedef struct vr_verdict {
    vr_reason reason;
    char *what;        /* heap: the dependency or input named, or NULL */
    int out_restamped; /* current, but the output's stamp changed (same
                            content): record new_out_st */
    vr_stamp new_out_st;
} vr_verdict;

/* Check `row` (NULL: no record) against the current config and tool
 * hashes. *outputs_hashed (may be NULL) counts outputs read. */
void vr_dirty_artifact(vr_sources *src, const vr_art_row *row, uint64_t config,
                       uint64_t tool, vr_verdict *v, uint64_t *outputs_hashed);

/* Check a job's record against the key its inputs give now, and its
 * output. */
void vr_dirty_job(const vr_job_row *row, const uint8_t key[16], vr_verdict *v,
                  uint64_t *outputs_hashed);

/* The output check alone (step 4). */
void vr_dirty_output(const char *path, const vr_stamp *rec_st,
                     uint64_t rec_hash, vr_verdict *v,
                     uint64_t *outputs_hashed);

/* "new", "dependency include/x.h changed", ...: heap. */
char *vr_reason_text(const vr_verdict *v);
/* The short name of a reason ("dependency"), static. */
const char *vr_reason_name(vr_reason r);

void vr_verdict_clear(vr_verdict *v);

#endif
