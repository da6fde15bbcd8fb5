/*
 * coord -- the host's coordinator pool and its one batch primitive.
 *
 * Two kinds of worker threads cooperate in vsched-run, and they must never
 * be the same threads:
 *
 *   scheduler stage workers  libvsched's CPU and I/O vsched_pools, created
 *                            by the host and handed to the scheduler; they
 *                            run Source, Analysis and Artifact work.
 *   coordinator workers      this module's own threads, created once by
 *                            the host from [vsched] coordinator_threads and
 *                            NEVER handed to the scheduler; they run host
 *                            batch items, whose outer waits (vsched_wait,
 *                            vsched_wait_batch) block on stage work.
 *
 * The invariant: no worker waits for a job of its own pool. A coordinator
 * worker may block on stage work, because the stage pools proceed on their
 * own threads; stage work never needs a coordinator worker (a batch is
 * refused on a stage worker); and a batch started from inside a batch item
 * is not fanned out again on the coordinator (that would stack a second
 * outer wait on the same finite pool): it runs inline, sequentially, on the
 * thread running the item. tests/test_coord.c pins each rule. It also
 * runs the items on a stage pool instead: that finishes only because
 * libvsched replaces each stage worker blocked in an outer wait by a
 * stand-in thread (without that, it starved); the separate pool does not
 * depend on it, and keeps the stage pools' threads for stage work.
 *
 * Every host batch API (the batch compile, --deps, any later one) goes
 * through vr_coord_batch(); a client supplies only a vr_coord_policy: its
 * item work, an optional shared wait point run once before the items, and
 * the conversion of a failed item into its own result type. The primitive
 * owns the rest: empty and single-item fast paths, results in input order,
 * the per-item failure boundary, one vsched_account_batch_submission per
 * non-empty batch, and one trace span per batch.
 *
 * Thread-safety: a vr_coord is thread-safe; several threads may run
 * batches on it at once (they share its workers). The policy, ctx and
 * slots are borrowed for the duration of one vr_coord_batch() call.
 */
#ifndef VSCHED_HOST_COORD_H
#define VSCHED_HOST_COORD_H

#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

typedef struct vr_coord vr_coord;

/* What one host batch API supplies. Callbacks run with no coordinator lock
 * held, on a coordinator worker (fan-out) or on the calling thread (fast
 * paths and nested batches); they may call any scheduler operation and may
 * start a nested batch (which then runs inline). */
typedef struct vr_coord_policy {
    const char *span_name; /* names the batch's trace span (copied) */
    vsched *sched;         /* counted once per non-empty batch; may be NULL */
    size_t slot_size;      /* bytes of one item's result slot */
    /* Optional: the batch's shared wait point, run once per non-empty
     * batch before any item (e.g. ONE vsched_submit_batch_atomic and ONE
     * vsched_wait_batch whose results the items then convert). Returns 0
     * or a negative vsched_status, optionally with *msg (heap; the
     * primitive frees it); on failure every item fails with that status
     * and message, and no item runs. */
    int (*setup)(void *ctx, size_t n, char **msg);
    /* Required: item i; writes its result into `slot` (slot i of the
     * caller's array). Returns 0 or a negative vsched_status (a positive
     * return counts as VSCHED_EERR), optionally with *msg as above. */
    int (*item)(void *ctx, size_t i, void *slot, char **msg);
    /* Optional: turn a failure of item i (or of setup) into item i's own
     * error result in `slot`. `msg` is never NULL and is valid for the call
     * only. Runs on the thread that ran the item. */
    void (*fail)(void *ctx, size_t i, void *slot, int status, const char *msg);
} vr_coord_policy;

/* How a batch ran. */
typedef enum vr_coord_mode {
    VR_COORD_EMPTY = 0,  /* no item: nothing ran, nothing counted */
    VR_COORD_SINGLE = 1, /* one item, run on the calling thread */
    VR_COORD_INLINE = 2, /* nested in an item: run sequentially in place */
    VR_COORD_FANOUT = 3  /* items spread over the coordinator workers */
} vr_coord_mode;

/* One batch's trace span. */
typedef struct vr_coord_span {
    const char *name; /* valid until vr_coord_destroy() */
    size_t items, failed;
    vr_coord_mode mode;
    unsigned depth;            /* 0 top level; n inside n enclosing items */
    uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
} vr_coord_span;

/* Start a coordinator pool of `threads` (>= 1) workers. Returns 0,
 * VSCHED_EINVAL, or VSCHED_ENOMEM when a thread cannot start. */
int vr_coord_create(vr_coord **out, unsigned threads);

/* TEST ONLY -- breaks the invariant on purpose. A coordinator with no
 * threads of its own that fans items out onto `pool` (borrowed: one of the
 * scheduler's own stage pools), so that tests/test_coord.c can show what
 * sharing a stage pool does. Never use it in vsched-run. */
int vr_coord_create_sharing_for_test(vr_coord **out, vsched_pool *pool);

/* Run what is queued, join the workers, free the trace. No batch may be
 * running on `c`. NULL is a no-op. */
void vr_coord_destroy(vr_coord *c);

/* Worker threads of `c` (0 for a sharing test coordinator). */
unsigned vr_coord_threads(const vr_coord *c);

/* Run a batch of n items of policy p over ctx, item i writing slot
 * (char *)slots + i * p->slot_size (slots may be NULL when slot_size is
 * 0). Every item runs exactly once, or fails through p->fail; one failing
 * item never stops the others; slot i is always item i's result whatever
 * the completion order. n == 0 returns at once; n == 1 runs on the calling
 * thread; inside an item (see vr_coord_depth) the batch runs inline.
 * Blocks until every item is done. Returns 0 when every item succeeded,
 * else the status of the first failed item in input order; VSCHED_EINVAL
 * (nothing run) for bad arguments or when called from a scheduler stage
 * worker outside any item. Takes the coordinator's queue lock and the
 * batch's lock, never both at once, never while a callback runs. */
int vr_coord_batch(vr_coord *c, const vr_coord_policy *p, void *ctx, size_t n,
                   void *slots);

/* The coordinator whose worker is the calling thread, or NULL (a sharing
 * test coordinator's items report it too). */
const vr_coord *vr_coord_current(void);

/* Number of batch items (or setups) enclosing the calling thread: 0 outside
 * any item. A batch started at depth > 0 runs inline. */
unsigned vr_coord_depth(void);

/* Copy up to `cap` recorded spans, oldest first (in the order batches
 * ended), into out; returns how many are recorded. Span names stay valid
 * until vr_coord_destroy(). Takes the trace lock. */
size_t vr_coord_trace(vr_coord *c, vr_coord_span *out, size_t cap);

#endif
