/*
 * inbox -- the scheduler's bounded submission channel.
 *
 * Every request and batch reaches the scheduler through the inbox. Its
 * consumers: the driver, and every runner before it integrates a
 * completion (runner.c) -- so a request submitted before a stage's
 * completion is integrated is admitted before it, whoever gets there
 * first. Producers wait for a free slot
 * (they are never the consumer, so waiting cannot park the consumer), and
 * nothing is ever dropped while the inbox is open. After close, pushes are
 * refused with VSCHED_ESHUTDOWN and the caller disposes of its item.
 *
 * Teardown is NOT an inbox item: the driver's private stop flag lives here
 * beside the ring, guarded by the same lock, so a stop request can never be
 * consumed by anyone but the driver and never waits for capacity.
 */
#ifndef VSCHED_LIB_INBOX_H
#define VSCHED_LIB_INBOX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef enum vsched__item_kind {
    VSCHED__ITEM_REQUEST, /* one vsched_handle */
    VSCHED__ITEM_BATCH    /* a vsched_batch admitted as one unit */
} vsched__item_kind;

typedef struct vsched__item {
    vsched__item_kind kind;
    void *ptr;
    /* The scheduler's cancel epoch when it was submitted: older than the
     * epoch at admission, a vsched_cancel came after it (driver.c). */
    uint64_t epoch;
} vsched__item;

typedef struct vsched__inbox {
    /* lock: guards every field below. Rank 3: taken after the scheduler
     * lock is released (never while holding it) and before nothing. */
    pthread_mutex_t lock;
    pthread_cond_t nonempty; /* items arrived, or stop requested */
    pthread_cond_t nonfull;  /* a slot freed, or closed */
    vsched__item *ring;
    size_t capacity;
    size_t head, count;
    size_t depth_max;   /* largest count ever observed */
    int closed;         /* pushes refused */
    int stop;           /* teardown signal for the driver */
    int nudged;         /* the driver should run a pass */
    atomic_size_t hint; /* `count`, readable without the lock */
} vsched__inbox;

int vsched__inbox_init(vsched__inbox *q, size_t capacity);
void vsched__inbox_fini(vsched__inbox *q);

/* Append one item, waiting while the inbox is full. VSCHED_ESHUTDOWN when
 * closed (the item was not taken). */
int vsched__inbox_push(vsched__inbox *q, vsched__item item);

/* Append without waiting: VSCHED_EFULL when full, VSCHED_ESHUTDOWN when
 * closed (the item was not taken in either case). */
int vsched__inbox_try_push(vsched__inbox *q, vsched__item item);

/* Driver side: wait until items are queued, stop is set, the driver is
 * nudged, or timeout_ms pass (-1: no deadline); then move up to `max`
 * items into out[]. Returns the count moved (0 after a nudge or the
 * deadline), or -1 on stop. */
long vsched__inbox_pop_wait(vsched__inbox *q, vsched__item *out, size_t max,
                            int timeout_ms);

/* Wake the driver for a pass without an item (never waits). */
void vsched__inbox_nudge(vsched__inbox *q);

/* Ask the driver to stop (teardown channel) and refuse further pushes. */
void vsched__inbox_stop(vsched__inbox *q);

/* Move whatever is still queued into out[] (up to max) without waiting;
 * for teardown after the driver has exited. */
size_t vsched__inbox_drain(vsched__inbox *q, vsched__item *out, size_t max);

size_t vsched__inbox_depth_max(vsched__inbox *q);

/* Items queued, without the lock (a hint: acquire-ordered after the push
 * that made it). */
static inline size_t vsched__inbox_hint(vsched__inbox *q)
{
    return atomic_load_explicit(&q->hint, memory_order_acquire);
}

#endif
