/*
 * state -- the incremental state of one state_dir: STATE_DIR/state.db, a
 * SQLite database (WAL journal, schema version in PRAGMA user_version,
 * our PRAGMA application_id).
 *
 * What it holds (schema version VR_STATE_VERSION):
 *
 *   sources    one row per file the build read: its source name, content
 *              hash (stamp.h) and the stamp it had when that hash was
 *              taken, with the time the stamp was taken (for the racy
 *              rule). A pure cache of "this stamp had these bytes": it
 *              never says what an output was built from.
 *   artifacts  one row per (source, profile) built: the artifact key, the
 *              configuration and tool hashes it was built with, the files
 *              it was built from with the content hash of each AS BUILT
 *              (so a source row updated by a later run never makes an old
 *              output look current), the output's path, stamp and hash,
 *              and the last duration.
 *   jobs       one row per (kind, name, profile) graph job (the link): its
 *              key over the inputs' hashes, output path, stamp, hash and
 *              duration.
 *
 * A run reads everything once, at open, in one read transaction
 * (vr_state_open fills a vr_snapshot), and writes in batched transactions
 * (vr_state_begin / vr_state_commit around any number of puts): never one
 * commit per file. SQLite makes each transaction atomic, so a run killed
 * at any point leaves the last committed state.
 *
 * A database that is corrupt, truncated or not ours is moved aside to
 * state.db.corrupt (its -wal with it) with a message naming it, and the
 * run goes on as a cold build; one with a newer schema is refused, naming
 * both versions. A write that finds corruption mid-run stops the run's
 * writes (one message) and the database is moved aside when it is closed.
 *
 * Not thread-safe: one thread uses a vr_state at a time (vsched-run: the
 * main thread to open and close, the recorder thread to write between).
 */
#ifndef VSCHED_HOST_STATE_H
#define VSCHED_HOST_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "state/stamp.h"

#define VR_STATE_VERSION 1

typedef struct vr_state vr_state;

/* A file an artifact was built from, with its content hash then. */
typedef struct vr_dep {
    int64_t source; /* sources row id */
    uint64_t hash;  /* content hash when the artifact was built */
    int covered;    /* reached through blockers: folded into the artifact
                        key by the Analysis hash */
} vr_dep;

typedef struct vr_src_row {
    int64_t id;
    char *path; /* source name */
    uint64_t hash;
    vr_stamp st;
    int64_t seen_ns; /* wall time the stamp was taken */
} vr_src_row;

typedef struct vr_art_row {
    char *source; /* canonical source name */
    char *profile;
    uint8_t key[16];
    uint64_t config, tool;
    vr_dep *deps; /* the source itself first */
    size_t n_deps;
    char *out_path; /* NULL: the artifact is no file */
    vr_stamp out_st;
    uint64_t out_hash;
    uint64_t duration_ns;
} vr_art_row;

typedef struct vr_job_row {
    char *kind, *name, *profile;
    uint8_t key[16];
    char *out_path;
    vr_stamp out_st;
    uint64_t out_hash;
    uint64_t duration_ns;
} vr_job_row;

/* Everything the database held at open. */
typedef struct vr_snapshot {
    vr_src_row *src;
    size_t n_src;
    vr_art_row *art;
    size_t n_art;
    vr_job_row *job;
    size_t n_job;
} vr_snapshot;

#define VR_STATE_READONLY 0x1u /* -n: never create, write or move aside */

/* Open STATE_DIR/state.db (created when absent, unless READONLY: then a
 * missing database is an empty snapshot) and read it into *snap. A
 * database that cannot be used is moved aside with a message on `err` and
 * replaced by an empty one (READONLY: reported and read as empty).
 * Returns 0, or VSCHED_ECONFIG (newer schema) / VSCHED_EIO (cannot create
 * or open the directory's database at all) with *msg (heap). */
int vr_state_open(vr_state **out, const char *dir, unsigned flags,
                  vr_snapshot *snap, FILE *err, char **msg);

/* Close; when the run found corruption, move the database aside. NULL is
 * a no-op. */
void vr_state_close(vr_state *st);

/* Free what a snapshot owns (not the struct). */
void vr_snapshot_free(vr_snapshot *snap);

/* Batches. begin/commit return 0 or VSCHED_EIO; after a failure (or once
 * the database turned out corrupt) every write is a no-op returning
 * VSCHED_EIO, reported once on the `err` given to open. */
int vr_state_begin(vr_state *st);
int vr_state_commit(vr_state *st);

/* Insert or update the sources row of `path`; *id receives its id. */
int vr_state_put_source(vr_state *st, const char *path, uint64_t hash,
                        const vr_stamp *stamp, int64_t seen_ns, int64_t *id);
int vr_state_put_artifact(vr_state *st, const vr_art_row *row);
int vr_state_drop_artifact(vr_state *st, const char *source,
                           const char *profile);
int vr_state_put_job(vr_state *st, const vr_job_row *row);
int vr_state_drop_job(vr_state *st, const char *kind, const char *name,
                      const char *profile);
/* Delete the sources row `id` (no artifact refers to it any more). */
int vr_state_drop_source(vr_state *st, int64_t id);

/* Delete every sources row that no artifact's deps refer to any more (a
 * header that was removed or renamed), inside the caller's transaction;
 * *dropped (may be NULL) counts them. 0 or VSCHED_EIO. */
int vr_state_sweep(vr_state *st, size_t *dropped);

/* 1 once a write failed or found corruption. */
int vr_state_broken(const vr_state *st);

/* Remove STATE_DIR/state.db, its -wal and -shm, and the state.db.corrupt
 * (and its -wal) a run moved aside (for --clean). 0 or VSCHED_EIO with
 * *msg. */
int vr_state_remove(const char *dir, char **msg);

#endif
