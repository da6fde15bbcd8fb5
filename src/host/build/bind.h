/*
 * bind -- the loader and executor bindings the scheduler is given in an
 * incremental run: the plugins' own operations wrapped by the host.
 *
 *   load          stamps the file (before reading), calls the loader and
 *                 hashes the bytes as they pass (sources.h);
 *   extract_deps  calls the executor and notes the dependencies;
 *   artifact      computes the artifact key (keys.h) from the Analysis
 *                 hash the scheduler hands in, then, in this order:
 *                   KEPT      the key is the recorded one, the files the
 *                             key does not cover are unchanged and the
 *                             output is intact: nothing runs, no file is
 *                             published (an interface-hash executor's
 *                             early cut-off);
 *                   RESTORED  the cache has the key and the files it does
 *                             not cover are unchanged: the entry is
 *                             linked to a temporary name beside its
 *                             output path and the scheduler publishes it
 *                             by rename, as if the executor had made it;
 *                   EXECUTED  the executor runs; what it says it read
 *                             (ABI 1.1 deps) and its output path are
 *                             captured;
 *   job           for a target's job (link, static, shared): orders the
 *                 object paths as the inputs are ordered, then the
 *                 libraries' outputs in link order (the scheduler appends
 *                 the outputs of what it rebuilt after the ones handed
 *                 in), keys the job on them and skips it when the key and
 *                 the output are current;
 *   the rest      passed through.
 *
 * What each call did is kept as a capture, read by the recorder once the
 * scheduler reports the stage done (the output is in place by then).
 *
 * Thread-safety: the bindings are called concurrently from the stage
 * pools exactly as the plugins would be (thread_safe as the plugins say;
 * the scheduler serialises a plugin that is not). `lock` (a leaf) guards
 * the captures; no plugin call and no file I/O is made under it.
 */
#ifndef VSCHED_HOST_BIND_H
#define VSCHED_HOST_BIND_H

#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

#include "state/cache.h"
#include "state/journal.h"
#include "state/sources.h"
#include "state/state.h"

typedef enum vr_outcome {
    VR_KEPT = 1,
    VR_RESTORED = 2,
    VR_EXECUTED = 3
} vr_outcome;

/* What one artifact() or job() call did (a copy for the reader). */
typedef struct vr_capture {
    vr_outcome outcome;
    uint8_t key[16];
    char *path;        /* the output path, NULL when no file */
    uint64_t out_hash; /* KEPT and RESTORED: known; EXECUTED: 0 */
    char **tool_deps;  /* EXECUTED: the files the executor said it
                               read; RESTORED: the cache entry's */
    size_t n_tool_deps;
    int64_t started_wall_ns;                   /* when the executor started */
    uint64_t duration_ns;                      /* the executor's time */
    uint64_t restore_start_ns, restore_end_ns; /* RESTORED: when the cache
                               linked it (CLOCK_MONOTONIC; for --trace) */
} vr_capture;

/* One profile's hashes (keys.h). */
typedef struct vr_profile_keys {
    const char *profile;
    uint64_t config, tool;
} vr_profile_keys;

/* A target's job in one profile: its objects (canonical names in input
 * order, built in obj_profile), then the jobs it links with, in link
 * order; `salt` (the target's own keys) is folded into its key. */
typedef struct vr_link_plan {
    const char *kind, *name, *profile;
    const char *obj_profile;
    const char *const *inputs;
    size_t n_inputs;
    const char *const *lib_kinds, *const *lib_names;
    size_t n_libs;
    uint64_t salt;
} vr_link_plan;

/* The configuration hash of a job of a target: the profile's, salted
 * with the target's own keys (0: the profile's as it is). */
uint64_t vr_bind_job_config(uint64_t config, uint64_t salt);

typedef struct vr_bind_opts {
    vsched_loader_binding loader; /* the plugins' own bindings */
    vsched_executor_binding executor;
    vr_sources *sources;         /* borrowed */
    vr_cache *cache;             /* borrowed; NULL: no cache */
    const vr_snapshot *snap;     /* borrowed: the records */
    const vr_profile_keys *keys; /* borrowed, n_keys entries */
    size_t n_keys;
    const vr_link_plan *links; /* borrowed, n_links entries */
    size_t n_links;
    const char *executor_name; /* borrowed: names it in contract
                                         violations (contract.h) */
    vr_journal *journal;       /* borrowed; NULL: outputs are not journaled */
} vr_bind_opts;

typedef struct vr_bind vr_bind;

/* Never NULL. Everything in `o` is borrowed until vr_bind_free. */
vr_bind *vr_bind_new(const vr_bind_opts *o);
void vr_bind_free(vr_bind *b);

/* The link plans (borrowed until free), before the scheduler starts. */
void vr_bind_set_links(vr_bind *b, const vr_link_plan *links, size_t n);

/* The wrapped bindings to hand to vsched_create (valid until free). */
vsched_loader_binding vr_bind_loader(vr_bind *b);
vsched_executor_binding vr_bind_executor(vr_bind *b);

/* The record of (name, profile) / of a job, or NULL. */
const vr_art_row *vr_bind_record(const vr_bind *b, const char *name,
                                 const char *profile);
const vr_job_row *vr_bind_job_record(const vr_bind *b, const char *kind,
                                     const char *name, const char *profile);
/* The hashes of a profile, or NULL. */
const vr_profile_keys *vr_bind_keys(const vr_bind *b, const char *profile);

/* A copy of what artifact() (kind NULL) or job() (kind "link") did for
 * (name, profile): 1 with *out filled (vr_capture_clear), 0 when it did
 * not run. */
int vr_bind_capture(vr_bind *b, const char *kind, const char *name,
                    const char *profile, vr_capture *out);
void vr_capture_clear(vr_capture *c);

/* Outcome counts: kept, restored, executed artifacts. */
void vr_bind_counts(vr_bind *b, uint64_t *kept, uint64_t *restored,
                    uint64_t *executed);

#endif
