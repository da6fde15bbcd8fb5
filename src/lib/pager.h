/*
 * pager -- huge blocks populated ahead of their first write, on a thread
 * of their own.
 *
 * The first write to a fresh page costs a fault and the zeroing of the
 * page (pages.h): on the benchmark machine, a virtual machine, the
 * zeroing of a 2 MiB huge page runs slower than the code that fills it,
 * so at a million files a fifth of the timed run was the kernel zeroing
 * pages for the thread that binds the batch (the batch's handles, file
 * objects and names) and for the driver that admits it (the node slabs),
 * while the other core idled. A block that will be written soon -- an
 * arena's next chunk, a batch's block and its scratch arrays -- is
 * queued here, and the pager thread faults it in (MADV_POPULATE_WRITE:
 * the kernel maps the pages as a write would, without writing), so the
 * thread that fills the block finds its pages mapped. The block's
 * contents are not touched: pages read as zero either way, and a page the
 * owner writes first is simply skipped.
 *
 * One pager per process, started by the first vsched_create that holds
 * it and stopped (joined) by the vsched_destroy that releases it last.
 * Without a pager (not held, VSCHED_PAGER=0 in the environment, the
 * thread could not be started, or a kernel without MADV_POPULATE_WRITE)
 * nothing is queued and pages are faulted by their first write, as
 * before.
 *
 * Thread-safety: every function may be called from any thread. The
 * pager's lock is a leaf: nothing else is taken while it is held, and it
 * may be taken under any other lock (blocks are freed under the
 * scheduler's and the directory's).
 */
#ifndef VSCHED_LIB_PAGER_H
#define VSCHED_LIB_PAGER_H

#include <stddef.h>

/* Count one user of the pager (vsched_create); the first starts it.
 * Returns the hold, which vsched__pager_release is given back. */
unsigned vsched__pager_hold(void);

/* Drop the user `held` (vsched_destroy); the last stops the thread and
 * waits for it. A hold taken before a fork(), released in the child, is
 * ignored there: the child's pager has users of its own. Never called on
 * the pager's own thread. */
void vsched__pager_release(unsigned held);

/* Queue [p, p + len) -- part of a block mapped by vsched__pages_alloc --
 * to be faulted in. A no-op without a pager, or when the queue is full
 * (the block is then faulted by its first writes). */
void vsched__pager_ahead(void *p, size_t len);

/* The block [p, p + len) is about to be unmapped: forget every queued
 * part of it, and wait while the pager faults a part of it in. After
 * this returns the pager will not touch the block. */
void vsched__pager_forget(void *p, size_t len);

/* For tests: while paused (1) the pager takes nothing from its queue, so
 * a test can queue and forget parts it has certainly not reached. */
void vsched__pager_pause(int paused);

/* For tests: how many steps (a huge page each at most) the pager has
 * faulted in since the process started, and how many queued parts were
 * forgotten before it reached them. */
void vsched__pager_counts(size_t *steps, size_t *forgotten);

#endif
