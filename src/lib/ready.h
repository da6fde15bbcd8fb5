/*
 * ready -- the ready queues: READY nodes in the order runners take them.
 *
 * One queue per pool kind (CPU, I/O). The order: priority first (higher
 * first), then the weight -- the longest expected duration downstream, the
 * critical-path key -- then first ready, first taken. Weights are compared
 * by class (a quarter of an octave each: 1.00x, 1.19x, 1.41x, 1.68x, 2x,
 * ...), finer than any duration estimate is.
 *
 * Shape: a bucket per (priority, weight class), each a FIFO ring of
 * entries, and a max-heap of the non-empty buckets. With equal keys -- a
 * batch of equal priority and unknown durations, the common case -- a
 * push or a pop is O(1) and never compares nodes; distinct keys cost
 * O(log k) in their number k, not in the number of nodes.
 *
 * Deletion is lazy: an entry is valid while its node is READY with the
 * entry's ready_seq; a priority raise pushes a fresh entry, a removal bumps
 * the node's ready_seq. Each entry holds a reference on its node.
 *
 * Thread-safety: none of its own; the scheduler lock is held for all of
 * it.
 */
#ifndef VSCHED_LIB_READY_H
#define VSCHED_LIB_READY_H

#include <stddef.h>
#include <stdint.h>

struct vsched__node;

typedef struct vsched__entry {
    struct vsched__node *node;
    uint32_t seq;
} vsched__entry;

typedef struct vsched__bucket {
    int32_t priority;
    uint32_t wclass;
    vsched__entry *ring;
    uint32_t head, n, cap;
    uint32_t heap_index;          /* in the heap while n > 0 */
    struct vsched__bucket *chain; /* the key table's chain */
} vsched__bucket;

typedef struct vsched__rq {
    vsched__bucket **heap; /* non-empty buckets, best on top */
    size_t heap_n, heap_cap;
    vsched__bucket **table; /* every bucket by key (chained) */
    size_t table_cap, table_n;
    size_t valid;   /* READY nodes held */
    size_t entries; /* entries held, stale included */
} vsched__rq;

/* The weight class of a weight in microseconds. */
uint32_t vsched__weight_class(uint32_t weight_us);

void vsched__rq_init(vsched__rq *q);
void vsched__rq_fini(vsched__rq *q);
/* Append an entry (the caller's node reference moves in). Exhaustion
 * aborts: a ready node must not be lost. */
void vsched__rq_push(vsched__rq *q, struct vsched__node *n, int32_t priority,
                     uint32_t weight_us, uint32_t seq);
/* The priority of the best bucket (its entries may be stale: a hint);
 * 0 when empty. */
int vsched__rq_top_priority(const vsched__rq *q, int32_t *priority);
/* A queue position's key: what orders buckets. */
typedef struct vsched__rqkey {
    int32_t priority;
    uint32_t wclass;
} vsched__rqkey;

/* The key of the best bucket (a hint, as above); 0 when empty. */
int vsched__rq_top_key(const vsched__rq *q, vsched__rqkey *key);
/* The node of the first entry of the best bucket (maybe stale), or NULL. */
struct vsched__node *vsched__rq_peek(const vsched__rq *q);
/* Take the first entry of the best bucket; 0 when empty. */
int vsched__rq_pop(vsched__rq *q, vsched__entry *out);

#endif
