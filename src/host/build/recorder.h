/*
 * recorder -- writes what a run built into the state, while it builds.
 *
 * The scheduler's observer tells the recorder of every Artifact stage
 * that finished well; the recorder thread then turns the binding's
 * capture (bind.h) into an artifacts row:
 *
 *   - the files it was built from: the source and everything reached
 *     through this run's deps and blockers (covered: through blockers),
 *     plus what the executor said it read, each with the content hash the
 *     build saw. A file whose stamp changed between its load and the
 *     recording, or (for a file only the executor named) that was modified
 *     after the executor started, is recorded as VR_HASH_UNKNOWN: its
 *     dependent is rebuilt next time, and such an output is never cached;
 *   - the output's content hash (read back once) and stamp, taken after
 *     the output is in place and stored in the cache (a hard link changes
 *     the stamp's ctime);
 *   - the key, the configuration and tool hashes, and the duration (a
 *     restored or kept artifact keeps its last compile's duration).
 *
 * Writes are batched: each wake-up takes every queued event, lets a short
 * quiet period (VR_RECORDER_BATCH_MS) gather more, and commits them in one
 * transaction (cache index first, then the state), so a record is only
 * ever committed after its output is in place, and a kill loses at most
 * the last batch (those files are rebuilt or restored).
 *
 * Thread-safety: vr_recorder_artifact and vr_recorder_job may be called
 * from any thread (the observer runs on the scheduler's driver thread);
 * `lock` (a leaf) guards the queue and the stop flag. The thread alone
 * uses the state between start and finish.
 */
#ifndef VSCHED_HOST_RECORDER_H
#define VSCHED_HOST_RECORDER_H

#include <stdint.h>
#include <stdio.h>

#include "build/bind.h"
#include "state/cache.h"
#include "state/sources.h"
#include "state/state.h"

#define VR_RECORDER_BATCH_MS 100

typedef struct vr_recorder vr_recorder;

typedef struct vr_recorder_counts {
    uint64_t artifacts; /* artifacts rows written */
    uint64_t jobs;      /* jobs rows written */
    uint64_t uncertain; /* recorded with an uncertain dependency */
    uint64_t outputs_hashed;
} vr_recorder_counts;

/* Start the thread. Everything is borrowed until vr_recorder_finish.
 * Returns 0 or VSCHED_ENOMEM (no thread: nothing will be recorded). */
int vr_recorder_start(vr_recorder **out, vr_state *state, vr_sources *src,
                      vr_bind *bind, vr_cache *cache);

/* Queue the record of a finished artifact / job (strings copied). Cheap:
 * fit for an observer. */
void vr_recorder_artifact(vr_recorder *r, const char *name,
                          const char *profile);
void vr_recorder_job(vr_recorder *r, const char *kind, const char *name,
                     const char *profile, uint64_t duration_ns);

/* Record what is queued, commit, stop the thread, free. *counts may be
 * NULL. Returns 0, or VSCHED_EIO when the state could not be written.
 * NULL is a no-op returning 0. */
int vr_recorder_finish(vr_recorder *r, vr_recorder_counts *counts);

#endif
