/*
 * incr -- the incremental context of one vsched-run: everything a build,
 * a dry run or --clean needs between its start and its end.
 *
 *   open    the state directory's lock (not for a dry run), the state
 *           database read into a snapshot (state.h), the run's source
 *           table (sources.h), the artifact cache (cache.h), per profile
 *           the configuration and tool hashes (keys.h: this calls the
 *           executor's identity operation once per profile), and the
 *           wrapped bindings (bind.h) with the records;
 *   start   the link plans handed to the bindings, the recorder
 *           (recorder.h) started, once the plan is known;
 *   finish  the last records committed, rows no artifact needs swept;
 *   close   everything released, the lock last.
 *
 * Paths come resolved in the settings (settings.h): STATE_DIR is [vsched]
 * state_dir (default .vsched) relative to the INI file; the cache is
 * [cache] dir, default STATE_DIR/cache; source files are stamped under
 * the canonical [loader] root.
 *
 * Not thread-safe: the main thread opens, starts, finishes and closes; in
 * between, the parts are as thread-safe as their own headers say. The
 * early part of open (vr_incr_early_start) runs on threads of its own
 * until open joins them.
 */
#ifndef VSCHED_HOST_INCR_H
#define VSCHED_HOST_INCR_H

#include <stddef.h>
#include <stdint.h>

#include "build/bind.h"
#include "build/build.h"
#include "build/recorder.h"
#include "state/cache.h"
#include "state/lock.h"
#include "state/sources.h"
#include "state/state.h"

typedef struct vr_incr {
    const vr_build *b;
    int dry;               /* -n: nothing is locked, written or run */
    const char *state_dir; /* absolute (b->settings) */
    const char *cache_dir; /* absolute, or NULL when the cache is off */
    char *root;            /* canonical loader root, or NULL */
    vr_lock *lock;
    vr_state *state;
    vr_snapshot snap;
    vr_sources *src;
    vr_cache *cache;
    vr_journal *journal;   /* outputs published, not yet recorded */
    vr_profile_keys *keys; /* one per profile */
    size_t n_keys;
    vr_bind *bind;
    vr_recorder *rec;        /* after start */
    uint64_t outputs_hashed; /* outputs read by the up-to-date check */
    vr_recorder_counts recorded;
} vr_incr;

/* The part of open that needs neither the inputs nor the profile list,
 * started on two threads while the caller expands the inputs
 * (vr_work_make): on one, the lock taken when it is free at once (a dry
 * run takes none), then the state read and the cache opened; on the
 * other, the executor's identity for each profile of vr_build_profiles.
 * The journal is settled by open (it removes files: not for a run whose
 * inputs turn out wrong). A lock another run holds is left to open, which
 * waits for it and says so; so is whatever a thread that could not start
 * would have done. Meanwhile the caller must not call the executor. Give
 * the result to vr_incr_open (once), then drop it. */
typedef struct vr_incr_early vr_incr_early;
vr_incr_early *vr_incr_early_start(const vr_build *b, int dry);

/* Join the early part's threads and release what open did not take
 * (the lock among it). NULL is a no-op. */
void vr_incr_early_drop(vr_incr_early *e);

/* Open for a build of `profiles` (or, with dry, a plan), taking over what
 * `early` (started with the same dry; may be NULL) did. Returns 0 with
 * *out set, or VSCHED_EIO / VSCHED_EERR (lock held and --no-wait) with
 * *msg (heap): the caller exits 2. */
int vr_incr_open(vr_incr **out, const vr_build *b, vr_incr_early *early,
                 char *const *profiles, size_t n_profiles, int dry,
                 char **msg);

/* Hand the link plans (borrowed until close) to the bindings and start
 * the recorder. Returns 0 or VSCHED_ENOMEM. */
int vr_incr_start(vr_incr *in, const vr_link_plan *links, size_t n_links);

/* Commit the remaining records and sweep; 0 or VSCHED_EIO (reported). */
int vr_incr_finish(vr_incr *in);

/* Release everything (finishing first if needed). NULL is a no-op. */
void vr_incr_close(vr_incr *in);

/* The hashes of `profile` (never NULL for a profile given to open). */
const vr_profile_keys *vr_incr_keys(const vr_incr *in, const char *profile);

#endif
