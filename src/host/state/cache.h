/*
 * cache -- the built-in artifact cache: outputs stored by artifact key,
 * restored instead of running the executor when a key was built before
 * (so a branch switch away and back costs restores, not compiles).
 *
 * Layout of [cache] dir:
 *
 *   index.db             SQLite (WAL): one row per entry -- key, the
 *                        output path it was built for, size, content hash,
 *                        the entry file's stamp, last use, and the files
 *                        the output was made from that its key does not
 *                        cover (a header only the compiler's depfile
 *                        named), each with its content hash
 *   objects/KK/KEY       the entry files (KEY: 32 hex digits)
 *
 * An entry is stored by hard link from the published output (a copy when
 * the cache is on another file system), and restored the same way into a
 * temporary name the caller then renames. An entry whose file no longer
 * has the stamp recorded for it (modified in place through a hard link,
 * or removed) is dropped, never restored. Entries are trimmed least
 * recently used first to `max_size` bytes.
 *
 * Several processes may share one cache directory (SQLite's locking).
 *
 * Thread-safety: a vr_cache is thread-safe. `lock` (a leaf: nothing else
 * is taken while it is held) guards the SQLite connection, its open
 * transaction and the counters.
 */
#ifndef VSCHED_HOST_CACHE_H
#define VSCHED_HOST_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct vr_cache vr_cache;

/* A file an entry's output was made from that its key does not cover. */
typedef struct vr_cache_dep {
    char *name;    /* source name */
    uint64_t hash; /* its content hash then */
} vr_cache_dep;

/* What a lookup found (owned by the caller: vr_cache_entry_clear). */
typedef struct vr_cache_entry {
    uint8_t key[16];
    char *out_path; /* the output path it was built for */
    uint64_t hash;  /* content hash of the output */
    int64_t size;
    vr_cache_dep *deps;
    size_t n_deps;
} vr_cache_entry;

typedef struct vr_cache_counts {
    uint64_t hits, misses, stored;
    uint64_t restored_bytes, stored_bytes;
    uint64_t trimmed;     /* entries removed by trimming */
    uint64_t total_bytes; /* after the last trim (0 when not trimmed) */
    uint64_t max_bytes;
} vr_cache_counts;

/* Open (creating) the cache in `dir`. Returns 0 with *out set, or
 * VSCHED_EIO with *msg (heap) naming the directory. A corrupt index is
 * replaced by an empty one with a message on `err` (entries are
 * rebuilt as needed). */
int vr_cache_open(vr_cache **out, const char *dir, uint64_t max_bytes,
                  FILE *err, char **msg);
/* Commit pending index writes, trim, close. NULL is a no-op. */
void vr_cache_close(vr_cache *c);

/* The entry of `key`: 0 with *e filled, or VSCHED_ENOENT. */
int vr_cache_lookup(vr_cache *c, const uint8_t key[16], vr_cache_entry *e);
void vr_cache_entry_clear(vr_cache_entry *e);

/* Put the entry's file at `dest` (must not exist; its directory is
 * created): a hard link, else a copy. Counts a hit. Returns 0,
 * VSCHED_ENOENT when the entry's file is gone or changed (the entry is
 * dropped), or VSCHED_EIO. */
int vr_cache_restore(vr_cache *c, const vr_cache_entry *e, const char *dest);

/* Count a lookup that did not restore. */
void vr_cache_miss(vr_cache *c);

/* Store the published output `path` (content hash `hash`) under `key`,
 * remembering it was built for `path` and from `deps` (copied). Returns 0
 * or VSCHED_EIO (the build goes on without it). */
int vr_cache_store(vr_cache *c, const uint8_t key[16], const char *path,
                   uint64_t hash, const vr_cache_dep *deps, size_t n_deps);

/* Commit the pending index writes (stores, last-use times) in one
 * transaction. 0 or VSCHED_EIO. */
int vr_cache_commit(vr_cache *c);

/* Trim to max_bytes, least recently used first. 0 or VSCHED_EIO. */
int vr_cache_trim(vr_cache *c);

void vr_cache_get_counts(vr_cache *c, vr_cache_counts *out);

/* Remove the cache directory `dir` and everything in it (--clean
 * --cache). 0 or VSCHED_EIO with *msg. */
int vr_cache_remove_dir(const char *dir, char **msg);

#endif
