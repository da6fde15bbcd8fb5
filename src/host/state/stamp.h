/*
 * stamp -- what the incremental host knows of one file on disk: its stamp
 * (the stat(2) fields the up-to-date check compares) and its content hash
 * (xxh3-64 of its bytes, the same function whether the bytes come from a
 * loader or from the file).
 *
 * A stamp is trusted only when it is not "racy": a file whose mtime lies
 * within VR_RACY_NS before the moment its stamp was taken may be written
 * again within the same timestamp tick, leaving an equal stamp over other
 * bytes (git's "racy clean" problem). Such a stamp never vouches for the
 * content; the next run reads the file again.
 *
 * No state, no locks: every function may be called from any thread.
 */
#ifndef VSCHED_HOST_STAMP_H
#define VSCHED_HOST_STAMP_H

#include <stddef.h>
#include <stdint.h>

/* The margin of the racy-stamp rule: more than one tick of the kernel's
 * coarse file-time clock on any configuration (HZ >= 50). */
#define VR_RACY_NS (50 * 1000 * 1000LL)

typedef struct vr_stamp {
    int64_t mtime_ns; /* st_mtim, nanoseconds since the epoch */
    int64_t ctime_ns; /* st_ctim */
    int64_t size;
    uint64_t ino;
} vr_stamp;

/* stat(2) of `path` into *st (following symbolic links). Returns 0,
 * VSCHED_ENOENT when it does not exist or is not a regular file, or
 * VSCHED_EIO. */
int vr_stamp_of(const char *path, vr_stamp *st);

/* 1 when every field is equal. */
int vr_stamp_equal(const vr_stamp *a, const vr_stamp *b);

/* 1 when a stamp taken at wall time `seen_ns` may vouch for the content:
 * the file's mtime is at least VR_RACY_NS older than that. */
int vr_stamp_trusted(const vr_stamp *st, int64_t seen_ns);

/* The wall clock (CLOCK_REALTIME) in nanoseconds, comparable with file
 * times. */
int64_t vr_wall_ns(void);

/* xxh3-64 of `n` bytes. */
uint64_t vr_hash_bytes(const void *p, size_t n);

/* xxh3-64 of the whole file `path` (read, never mapped), and its stamp
 * taken on the open descriptor before reading (*st may be NULL). Returns
 * 0, VSCHED_ENOENT, VSCHED_EIO or VSCHED_ENOMEM. */
int vr_hash_file(const char *path, uint64_t *hash, vr_stamp *st);

#endif
