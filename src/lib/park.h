/*
 * park -- waiting for a flag without a lock of its own.
 *
 * Handles and batches become done once; many of them exist and few are
 * waited for at a time, so none carries a mutex and condition variable.
 * A waiter parks on one of a fixed set of buckets chosen by the address it
 * waits on; whoever makes the flag true wakes that bucket if anyone sleeps
 * there. The protocol (both sides sequentially consistent):
 *
 *   waiter:  lock(b); b.sleepers++; while (!ready()) wait(b); sleepers--;
 *   waker:   make ready (seq_cst); if (b.sleepers > 0) lock, broadcast
 *
 * so either the waiter sees the flag or the waker sees the sleeper, and a
 * broadcast taken under the bucket lock cannot slip between the waiter's
 * check and its wait. Sharing a bucket costs only a spurious wake-up.
 *
 * Locks: each bucket's lock is a leaf (rank 8), held only around a check
 * and a wait or a broadcast.
 */
#ifndef VSCHED_LIB_PARK_H
#define VSCHED_LIB_PARK_H

#include <stdatomic.h>

/* Block until *flag != 0 (an acquire load sees it). */
void vsched__park_until(const void *addr, const atomic_int *flag);
/* Like vsched__park_until, giving up after ms milliseconds; returns the
 * flag. */
int vsched__park_until_ms(const void *addr, const atomic_int *flag, int ms);
/* Set *flag to 1 and wake the waiters parked on addr. */
void vsched__park_set(const void *addr, atomic_int *flag);
/* Wake the waiters parked on addr (after making their condition true). */
void vsched__park_wake(const void *addr);

struct timespec;
/* *at = now + ms on CLOCK_REALTIME (the clock of pthread_cond_timedwait). */
void vsched__deadline_ms(struct timespec *at, int ms);

#endif
