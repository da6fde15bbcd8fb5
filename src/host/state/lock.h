/*
 * lock -- one writer per state directory.
 *
 * Two vsched-run on one state_dir would interleave their records and
 * publish outputs over each other. Each run that may write (a build,
 * --clean) first takes an exclusive fcntl(2) lock on STATE_DIR/lock, a
 * file that is created once and never removed (removing it would let a
 * waiter and a newcomer lock two different files). The kernel drops the
 * lock when the process ends, however it ends, so a killed run never
 * leaves a stale lock behind. The file holds the pid of the last holder,
 * for the messages.
 *
 * Not thread-safe: one thread takes a lock (the main thread, or the
 * thread that opens the state early, incr.c) and the main thread
 * releases it. The lock is the process's, whichever thread took it.
 */
#ifndef VSCHED_HOST_LOCK_H
#define VSCHED_HOST_LOCK_H

#include <stdio.h>

typedef struct vr_lock vr_lock;

/* Create `dir` (and its parents) when missing and lock dir/lock. When the
 * lock is held by another process: with `wait`, say so once on `err`
 * ("waiting for ..."; nothing when `err` is NULL, as for -q) and block
 * until it is free; without, fail. Returns
 * 0 with *out set, or VSCHED_EERR (held, no wait) / VSCHED_EIO (cannot
 * create or lock) with *msg (heap) saying what, where and what to do. */
int vr_lock_take(vr_lock **out, const char *dir, int wait, FILE *err,
                 char **msg);

/* Lock dir/lock only if that can be done at once: the file exists and
 * no other process holds it. Creates nothing and says nothing. Returns 0
 * with *out set, or VSCHED_EERR (absent, held, or any failure: the caller
 * falls back to vr_lock_take, which says what is wrong). */
int vr_lock_try(vr_lock **out, const char *dir);

/* Release the lock and free it. NULL is a no-op. */
void vr_lock_release(vr_lock *l);

/* mkdir -p: 0 or VSCHED_EIO with *msg (heap). */
int vr_mkdirs(const char *dir, char **msg);

#endif
