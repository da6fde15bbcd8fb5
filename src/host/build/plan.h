/*
 * plan -- what a run must do, decided before anything runs: for every
 * (input, profile) whether its artifact is current and, if not, the first
 * reason (dirty.h); for every profile's link whether it must run; and
 * which recorded outputs belong to files that left the inputs.
 *
 * The check of the rows runs on the coordinator's threads (one batch,
 * coord.h): it is stat calls, and they overlap. Only the dirty rows
 * become requests, so on a run where nothing changed
 * the scheduler is never started: the plan costs the state's one read
 * transaction and stat calls.
 *
 * Rows are profile-major, inputs in input order (the order of the
 * requests and of the report). Not thread-safe: built and read by the
 * main thread.
 */
#ifndef VSCHED_HOST_PLAN_H
#define VSCHED_HOST_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

#include "build/bind.h"
#include "build/incr.h"
#include "build/work.h"
#include "state/dirty.h"

typedef struct vr_row {
    const char *input;     /* as named (borrowed from the inputs) */
    char *name;            /* canonical source name (heap) */
    const char *profile;   /* borrowed */
    const vr_art_row *rec; /* its record, or NULL */
    vr_verdict v;          /* VR_CURRENT, or why it is rebuilt */
    long req;              /* index of its request, -1 when current */
    /* After the run: */
    const vsched_result *res; /* owned by the batch, NULL when current;
                                valid until the batch is released */
    int ran;                  /* a result came back (copied below) */
    int status;               /* its status */
    uint64_t duration_ns;     /* its stage work */
    vr_outcome outcome;       /* what the binding did, 0 when nothing */
} vr_row;

typedef struct vr_link {
    const char *kind; /* "link", "static", "shared" */
    const char *name, *profile;
    const char *obj_profile; /* the profile of its objects */
    const size_t *rows;      /* its objects: indices into vr_plan.rows
                                (borrowed from the work, or own_rows) */
    size_t n_rows;
    size_t *own_rows;   /* heap, when inputs named two ways were merged */
    const size_t *libs; /* the links it links with: earlier links */
    size_t n_libs;
    const char **lib_kinds, **lib_names; /* theirs, for bind.h */
    uint64_t salt;                       /* the target's own keys */
    const vr_job_row *rec;
    vr_verdict v; /* VR_CURRENT, or why it runs */
    int run;
    const char **inputs; /* canonical names in input order (borrowed
                                from the rows) */
    size_t n_inputs;
    const char **given; /* explicit job inputs: the current rows'
                                recorded outputs, in input order */
    size_t n_given;
    /* After the run: */
    vsched_node_info info;
    vr_outcome outcome;
} vr_link;

typedef struct vr_removal {
    char *kind; /* the job's kind; NULL for a source */
    char *what; /* source name or job name */
    char *profile;
    char *out_path;  /* may be NULL */
    vr_stamp out_st; /* the output as recorded */
    uint64_t out_hash;
    int is_job;
    /* its output is also the recorded output of what stays (a record
     * naming another's output): the record goes, the file stays */
    int shared;
} vr_removal;

/* Where the run removes r's output (heap), or NULL when it keeps it,
 * saying why on `err` (NULL: nowhere): the rule of vr_output_target
 * against `out_real` (realpath of out_dir, or NULL), and an output whose
 * bytes are no longer the ones recorded (someone replaced it: it is
 * theirs) stays too; one merely touched still goes. The run and -n both
 * decide by this. */
char *vr_removal_target(const vr_removal *r, const char *out_real, FILE *err);

typedef struct vr_plan {
    vr_row *rows;
    size_t n_rows, n_inputs, n_profiles;
    size_t n_dirty;
    vr_link *links; /* one per target and profile, each after
                                the links it links with */
    size_t n_links;
    vr_link_plan *link_plans; /* the same, as bind.h takes them */
    vr_removal *removed;      /* outputs of files that left the inputs */
    size_t n_removed;
    size_t restamped; /* outputs touched but unchanged */
} vr_plan;

/* Decide for what `w` asks (borrowed until vr_plan_free). `w->sweep`
 * says everything configured is built, so a record of another source or
 * job of these profiles belongs to something that left the build. Calls
 * the loader's realpath (host context) for inputs without a record under
 * their own name. Never fails. */
void vr_plan_make(vr_plan *p, vr_incr *in, const vr_work *w);

/* Carry out the part of the plan that needs no stage: remove the outputs
 * of files that left the inputs (saying so on `out`) and write, in one
 * transaction and only when there is any, those removals, the refreshed
 * stamps of touched-but-unchanged outputs and sources. */
void vr_plan_apply(vr_plan *p, vr_incr *in, FILE *out, int quiet);

void vr_plan_free(vr_plan *p);

#endif
