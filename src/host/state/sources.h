/*
 * sources -- what one run knows of each source file: the recorded row
 * (state.h), its current content hash as far as the run needed it, what
 * the scheduler loaded of it, and the dependencies the executor found in
 * it this run.
 *
 * The current hash of a file comes from the cheapest proof available:
 *
 *   1. the run loaded it (the loader's bytes, hashed as they passed);
 *   2. its stamp equals the recorded one and that stamp is trusted
 *      (stamp.h: not racy) -- a stat(2) call, nothing read;
 *   3. otherwise the host reads and hashes it, and the new stamp is noted
 *      for the next state write (a touched, unchanged file costs one read,
 *      once).
 *
 * Each file is checked at most once per run (memoised).
 *
 * Thread-safety: thread-safe. `lock` (a leaf) guards the table; file I/O
 * is done without it (two threads may check one file at once; both
 * answers are true, the first stored wins).
 */
#ifndef VSCHED_HOST_SOURCES_H
#define VSCHED_HOST_SOURCES_H

#include <stddef.h>
#include <stdint.h>

#include "state/stamp.h"
#include "state/state.h"

typedef struct vr_sources vr_sources;

/* The hash recorded for a dependency whose content could not be pinned
 * down (it changed while its dependent was built, or is missing): it
 * never equals a current hash of a file that exists, so the dependent is
 * rebuilt next time. */
#define VR_HASH_UNKNOWN 0ull

/* One source reachable from a file, for its artifact record. */
typedef struct vr_reach {
    const char *name; /* owned by the table */
    int covered;      /* reached through blockers only */
} vr_reach;

/* A table over the files under `root` (absolute; NULL when the loader has
 * no root: then no file can be stamped or read by the host, and every
 * check answers "changed"). Takes the snapshot's source rows (their paths
 * move into the table; snap->src is emptied). */
vr_sources *vr_sources_new(const char *root, vr_snapshot *snap);
void vr_sources_free(vr_sources *s);

/* The absolute path of a source name (heap), or NULL without a root. */
char *vr_sources_path(const vr_sources *s, const char *name);

/* The name of a sources row id, or NULL when the id is unknown. */
const char *vr_sources_name(vr_sources *s, int64_t id);

/* The current content hash of `name` (see above). Returns 0,
 * VSCHED_ENOENT (the file is gone, or there is no root) or VSCHED_EIO. */
int vr_sources_current(vr_sources *s, const char *name, uint64_t *hash);
/* The same by sources row id (VSCHED_ENOENT for an unknown id). */
int vr_sources_current_id(vr_sources *s, int64_t id, uint64_t *hash);

/* The index of the first of `deps` that is not current: its current hash
 * (by row id, as vr_sources_current_id) is not the one recorded, is
 * VR_HASH_UNKNOWN, or cannot be had (gone, unknown id, unreadable); n when
 * every one is current. The same answers as a call of
 * vr_sources_current_id per dep, under one hold of the lock (released
 * only around the I/O of a file not checked before): the up-to-date check
 * asks this once per artifact, from several threads. */
size_t vr_sources_first_changed(vr_sources *s, const vr_dep *deps, size_t n);

/* The loader wrapper's note: the run loaded `name`, whose bytes hash to
 * `hash`; `st` (NULL when it could not be taken) is its stamp taken at
 * wall time `seen_ns`, before the bytes were read. */
void vr_sources_loaded(vr_sources *s, const char *name, const vr_stamp *st,
                       int64_t seen_ns, uint64_t hash);
/* What the run loaded of `name`: 1 with *hash and *st (*have_st 0 when
 * no stamp was taken), 0 when it was not loaded. */
int vr_sources_load_info(vr_sources *s, const char *name, uint64_t *hash,
                         vr_stamp *st, int *have_st);

/* extract_deps of `name` this run (copied). */
void vr_sources_set_deps(vr_sources *s, const char *name, char *const *deps,
                         size_t n_deps, char *const *blockers,
                         size_t n_blockers);

/* Every file reachable from `name` through this run's deps and blockers,
 * `name` first, then in breadth-first order; covered when reachable
 * through blockers alone. *out is heap (caller frees the array). */
size_t vr_sources_reach(vr_sources *s, const char *name, vr_reach **out);

/* Write `name`'s row when the run learnt something the database does
 * not hold yet, and give its id in *id (0 when the run knows no stamp of
 * it). Returns 0 or the vr_state_put_source error. */
int vr_sources_write(vr_sources *s, vr_state *st, const char *name,
                     int64_t *id);

/* How many files vr_sources_flush would write now. */
size_t vr_sources_pending(vr_sources *s);

/* Write every file whose hash or stamp the run learnt and the database
 * does not hold yet (inside the caller's transaction); ids are noted.
 * Returns 0 or the first vr_state_put_source error. */
int vr_sources_flush(vr_sources *s, vr_state *st);

/* How many files the host read to hash them (not the loader's loads). */
uint64_t vr_sources_hashed(vr_sources *s);

#endif
