/*
 * work -- what a run is asked to build, before anything is checked: the
 * (source, profile) objects and the target jobs, from the configuration
 * and the command line's operands.
 *
 *   no operands     [batch] inputs in every profile, and every target
 *                   (its objects in its variant profile, targets.h);
 *   FILES           those sources in every profile, no job;
 *   TARGETS         those targets and the targets they link with, and
 *                   their objects; FILES and TARGETS may be mixed.
 *
 * Jobs are listed so that each comes after the jobs it links (its
 * libraries), one per (target, profile). A job waits only for its own
 * objects and its libraries (batch.h).
 *
 * Owns everything; main thread only.
 */
#ifndef VSCHED_HOST_WORK_H
#define VSCHED_HOST_WORK_H

#include <stddef.h>
#include <stdint.h>

#include "build/build.h"

/* One object: a source in a profile (a variant profile for a target's
 * objects with their own flags). */
typedef struct vr_work_row {
    size_t input;        /* index into vr_work.inputs */
    const char *profile; /* borrowed from vr_work.profiles */
} vr_work_row;

/* One target job in one profile. */
typedef struct vr_work_job {
    const char *kind;        /* "link", "static", "shared" (static) */
    const char *name;        /* the target's (borrowed from b->targets) */
    const char *profile;     /* the profile (output directory, keys) */
    const char *obj_profile; /* the profile of its objects */
    size_t *rows;            /* its objects, indices into rows, in input
                                 order */
    size_t n_rows;
    size_t *libs; /* the jobs it links, link order; each index
                                 is smaller than this job's */
    size_t n_libs;
    uint64_t salt; /* the target's own keys (targets.h) */
} vr_work_job;

typedef struct vr_work {
    char **inputs; /* source names, as named */
    size_t n_inputs;
    char **profiles; /* built profiles, then variant profiles */
    size_t n_profiles, n_base_profiles;
    vr_work_row *rows; /* profile-major; each (input, profile) once */
    size_t n_rows;
    vr_work_job *jobs;
    size_t n_jobs;
    int sweep; /* everything configured is built: records
                                 of sources and jobs no longer in it are
                                 removed */
} vr_work;

/* Decide. Returns 0, or VSCHED_ECONFIG with *err (a pattern matching
 * nothing, no inputs); *w is then empty. */
int vr_work_make(vr_work *w, const vr_build *b, char **err);

void vr_work_free(vr_work *w);

/* --list-targets: one line per target, in file order, on b->out:
 * "NAME KIND N input(s)[ links A B]", the inputs counted after globs
 * and excludes. Returns 0, or VSCHED_ECONFIG after saying why on b->err
 * (a pattern matching nothing). */
int vr_work_list_targets(const vr_build *b);

#endif
