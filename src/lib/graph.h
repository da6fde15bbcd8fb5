/*
 * graph -- nodes of the scheduler's one graph, their edges, the id index
 * and the ready queues.
 *
 * A node is one unit of schedulable work: a file stage (Source, Analysis,
 * Artifact of one profile) or a generic job (dag.h).
 *
 *     PENDING --(last upstream done)--> READY --(taken by a runner)--> RUNNING
 *        |                                 |                              |
 *        +-------- FAILED / CANCELLED <----+--------------------+         v
 *                                                                        DONE
 *
 * Edges. A node counts the upstream nodes it still waits for in
 * deps_remaining. The edges inside one file are implicit -- Source(F) ->
 * Analysis(F) -> every Artifact(F, profile) -- and found through the file's
 * stage slots (files.h); the others are explicit, in the upstream node's
 * `down` list: Analysis(B) -> Analysis(F) for a blocker B of F, Artifact ->
 * job, job -> job. An explicit entry holds a reference on the downstream
 * node. When the upstream ends it releases its list; an entry whose
 * downstream ended first is skipped then (it no longer counts).
 *
 * Lifetime. Nodes are reference counted (under the scheduler lock). The
 * graph's own reference is the node's place in the structure: a file's
 * stage slot, or the job registry and its history (dag.h). A node leaves
 * the structure once (vsched__node_retire) when it is superseded, removed,
 * reset or forgotten; it is freed when its last reference goes: a running
 * task, a ready-queue entry, an edge, a job's record of it. Retired nodes
 * still referenced are counted as retired_pending.
 *
 * Ready queues: one per pool kind (CPU, I/O), ready.h.
 *
 * Ids come from one process-wide counter: monotonic, never reused. The id
 * index maps the ids of allocated nodes to them.
 *
 * Thread-safety: none of its own. Everything here runs with the scheduler
 * lock held.
 */
#ifndef VSCHED_LIB_GRAPH_H
#define VSCHED_LIB_GRAPH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

#include "arena.h"
#include "ready.h"

struct vsched;
struct vsched__file;
struct vsched__job;
struct vsched__task;
struct vsched__outcome;
struct vsched_handle;
struct vsched__unit;
struct vsched__needset;

typedef enum vsched__node_state {
    VSCHED__PENDING,
    VSCHED__READY,
    VSCHED__RUNNING,
    VSCHED__DONE,
    VSCHED__FAILED,
    VSCHED__CANCELLED
} vsched__node_state;

typedef enum vsched__node_kind {
    VSCHED__K_SOURCE, /* load on the I/O pool, parse + deps on the CPU pool */
    VSCHED__K_ANALYSIS,
    VSCHED__K_ARTIFACT,
    VSCHED__K_JOB /* generic graph job */
} vsched__node_kind;

/* Which ready queue (and pool) a node's next step belongs to. */
enum {
    VSCHED__Q_CPU = 0,
    VSCHED__Q_IO = 1
};

/* Size classes of edge vectors kept by the graph: 4, 8, 16, 32 entries. */
#define VSCHED__EDGE_CLASSES 4

/* A growable array of node pointers. */
typedef struct vsched__nodevec {
    struct vsched__node **v;
    uint32_t n, cap;
} vsched__nodevec;

typedef struct vsched__node {
    uint64_t id;
    struct vsched__file *file; /* file stages: a reference; NULL for jobs */
    uint64_t generation;       /* file stages: the file's, at creation */
    vsched__nodevec down;      /* explicit downstream (references) */
    struct vsched_handle *waiters; /* handles waiting for its end (a list) */
    struct vsched__task *task;     /* its task while out (prepared/running) */
    struct vsched__outcome *why;   /* message, failed_dep, diags; or NULL */
    uint64_t started_ns;
    /* What waits on upstream means nothing once the node is terminal, and
     * when it ended means nothing before: the two share a word. Read and
     * written through the accessors below only (a terminal node's counts
     * read 0 and drop writes; a live node's end reads 0). */
    union {
        struct {
            uint32_t deps_remaining; /* upstream nodes not yet DONE */
            uint32_t xdeps;          /* of which explicit edges */
        } wait;                      /* until terminal */
        uint64_t finished_ns;        /* once terminal */
    } end;

    int32_t priority;        /* effective: max over what demands it */
    uint32_t weight_us;      /* critical-path key: longest expected
                                      duration downstream, microseconds */
    uint32_t refs;
    uint32_t ready_seq; /* validates ready-queue entries */
    uint32_t mark;      /* traversal stamp */
    atomic_int cancel;  /* read by its running task */
    int32_t status;     /* 0 or negative vsched_status */
    uint8_t kind, state;
    uint8_t phase : 2;        /* Source: 0 load, 1 parse */
    uint8_t fail_stage : 2;   /* vsched_stage where a failure arose */
    uint8_t in_structure : 1; /* holds the graph's own reference */
    uint8_t admitted : 1;     /* was READY once (after-admission gates) */
    uint8_t executed : 1;     /* its executor call ran (stage_runs) */
    uint8_t admit_edges : 1;  /* AFTER_ADMISSION edges wait on it */
    uint8_t unit_free : 1;    /* counted in unit->free */
    uint8_t unit_held : 1;    /* finished, counted in unit->held */
    uint8_t doomed : 1;       /* queued for replacement (unit.h) */
    uint8_t res_wait : 1;     /* in a resource's waiting queue */

    /* What only one kind has, by kind (read through the accessors below,
     * which answer NULL or empty for the other kinds). Last, so that a node
     * is allocated with only its own kind's member (vsched__node_size): a
     * Source has none. Never read k of a node of another kind. */
    union {
        struct vsched__job *job; /* K_JOB: gates, resources (dag.h) */
        struct {                 /* K_ARTIFACT */
            const char *profile; /* interned profile name */
            struct vsched__needset *reserved; /* stage resources it holds
                                                 while READY (stage_res.c) */
        } art;
        struct {                 /* K_ANALYSIS */
            vsched__nodevec ups; /* the Analyses it waits on through edges
                                    (references; entries that ended are
                                    stale), until it ends */
            int64_t ord; /* topological order (an upstream's is smaller),
                            upstream.c */
            struct vsched__unit *unit; /* its blocker cycle (unit.h), or
                                          NULL */
        } an;
    } k;
} vsched__node;

/* The kind's own fields, or NULL (0, empty) for a node of another kind. */
static inline struct vsched__job *vsched__node_job(const vsched__node *n)
{
    return n->kind == VSCHED__K_JOB ? n->k.job : NULL;
}
static inline const char *vsched__node_profile(const vsched__node *n)
{
    return n->kind == VSCHED__K_ARTIFACT ? n->k.art.profile : NULL;
}
static inline struct vsched__needset *vsched__node_reserved(
    const vsched__node *n)
{
    return n->kind == VSCHED__K_ARTIFACT ? n->k.art.reserved : NULL;
}
static inline struct vsched__unit *vsched__node_unit(const vsched__node *n)
{
    return n->kind == VSCHED__K_ANALYSIS ? n->k.an.unit : NULL;
}
static inline int64_t vsched__node_ord(const vsched__node *n)
{
    return n->kind == VSCHED__K_ANALYSIS ? n->k.an.ord : 0;
}

typedef struct vsched__graph {
    vsched__rq ready[2]; /* VSCHED__Q_CPU, VSCHED__Q_IO */
    /* Id index: open addressing, id -> node, for every allocated node. */
    vsched__node **ids;
    size_t ids_cap, ids_n;
    size_t ids_moved; /* entries deletions moved back (a statistic) */
    /* Insertions still expected in a bulk admission, or 0: a growth makes
     * room for them at once, so a large batch rehashes the index once
     * (each rehash reads every node) instead of once per doubling. At
     * worst (a batch naming one file n times) the room is for 3n nodes
     * that never come: at most 64 bytes of slots per request, against the
     * 312 its handle costs. */
    size_t ids_bulk;
    vsched__node *free_list[4]; /* recycled node memory, by kind */
    vsched__arena node_arena;   /* node slabs (graph.c) */
    void *slabs;                /* node slabs made apart (ASan), a list */
    size_t live;                /* nodes in the structure */
    size_t retired;             /* allocated, out of the structure */
    size_t edges;               /* edges a live node still waits on */
    size_t edges_cap;           /* backing slots of the down lists */
    uint32_t stamp;             /* the last traversal stamp */
    int64_t ord_lo, ord_hi;     /* Analysis order numbers handed out */
    struct vsched__unit *units; /* blocker cycles (unit.h), a list */
    uint64_t unit_seq;          /* the last unit release's serial */
    uint64_t units_formed;
    vsched__nodevec doomed; /* nodes to replace (references) */
    /* Edge vectors (vsched__edgevec_*): free arrays of 4 << c pointers,
     * each list threaded through the arrays' first words, carved from
     * edge_arena (freed whole at teardown). */
    void **edge_free[VSCHED__EDGE_CLASSES];
    vsched__arena edge_arena;
} vsched__graph;

uint64_t vsched__now_ns(void);

void vsched__graph_init(vsched__graph *g);
/* Free every node still allocated (teardown, after every task is back). */
void vsched__graph_fini(vsched__graph *g);

/* Nodes a slab holds (graph.c): one under AddressSanitizer, so that each
 * node is an allocation of its own size. */
#if defined(__SANITIZE_ADDRESS__)
#define VSCHED__NODE_SLAB 1
#else
#define VSCHED__NODE_SLAB 128
#endif

/* The bytes a node of `kind` is allocated with: the shared fields and its
 * kind's member of k. */
size_t vsched__node_size(vsched__node_kind kind);

/* A PENDING node with one reference (the structure's). NULL on
 * exhaustion. */
vsched__node *vsched__node_new(vsched__graph *g, vsched__node_kind kind,
                               int priority);
static inline void vsched__node_ref(vsched__node *n)
{
    n->refs++;
}
/* Drop one reference; frees the node after its last (it must have left
 * the structure). */
void vsched__node_unref(struct vsched *s, vsched__node *n);
/* Leave the structure (once): drops the graph's reference. */
void vsched__node_retire(struct vsched *s, vsched__node *n);

static inline int vsched__node_terminal(const vsched__node *n);

/* Upstream still to end, and of it the explicit edges (0 once terminal);
 * the changes below do nothing to a terminal node. */
static inline uint32_t vsched__deps(const vsched__node *n)
{
    return vsched__node_terminal(n) ? 0 : n->end.wait.deps_remaining;
}
static inline uint32_t vsched__xdeps(const vsched__node *n)
{
    return vsched__node_terminal(n) ? 0 : n->end.wait.xdeps;
}
static inline void vsched__deps_add(vsched__node *n, int32_t d)
{
    if (!vsched__node_terminal(n))
        n->end.wait.deps_remaining += (uint32_t)d;
}
static inline void vsched__xdeps_add(vsched__node *n, int32_t d)
{
    if (!vsched__node_terminal(n))
        n->end.wait.xdeps += (uint32_t)d;
}
/* When it ended (0 until terminal). */
static inline uint64_t vsched__finished_ns(const vsched__node *n)
{
    return vsched__node_terminal(n) ? n->end.finished_ns : 0;
}

static inline int vsched__node_terminal(const vsched__node *n)
{
    return n->state >= VSCHED__DONE;
}
static inline int vsched__node_failed(const vsched__node *n)
{
    return n->state == VSCHED__FAILED || n->state == VSCHED__CANCELLED;
}

/* The node with this id, or NULL. */
vsched__node *vsched__graph_find(const vsched__graph *g, uint64_t id);
/* Call fn on every allocated node (no insertion or freeing meanwhile). */
void vsched__graph_each(const vsched__graph *g,
                        void (*fn)(vsched__node *, void *), void *user);

/* Explicit edge up -> down (up not terminal): down waits for up. */
int vsched__edge_add(vsched__graph *g, vsched__node *up, vsched__node *down);

/* Record the Analysis edge up -> down in down's ups (both Analyses). */
void vsched__ups_add(struct vsched *s, vsched__node *up, vsched__node *down);
/* Forget the entry of up in down's ups (an edge spent while up runs on). */
void vsched__ups_remove(struct vsched *s, vsched__node *down,
                        vsched__node *up);
/* Drop every entry (down ended); nothing to do unless down is an Analysis. */
void vsched__ups_clear(struct vsched *s, vsched__node *down);

/* Queue of a node's next step. */
int vsched__node_queue(const vsched__node *n);
/* PENDING, nothing left to wait for: make it READY. */
void vsched__make_ready_if_free(struct vsched *s, vsched__node *n);
/* Put a node READY (a prepared task stays with it). Its first admission
 * releases the AFTER_ADMISSION edges waiting on it. */
void vsched__push_ready(struct vsched *s, vsched__node *n);
/* Take a READY node out of its queue (state becomes PENDING); stage
 * resources it reserved go back (it reserves again when ready again). */
void vsched__unready(struct vsched *s, vsched__node *n);
/* Pop the best READY node of queue q, or NULL. It is left PENDING (and
 * admitted) for the caller to start or park; its entry's reference passes
 * to the caller. With `only`, a node of exactly that key or NULL. */
vsched__node *vsched__pop_ready(struct vsched *s, int q,
                                const vsched__rqkey *only);
/* READY nodes in queue q. */
static inline size_t vsched__ready_count(const vsched__graph *g, int q)
{
    return g->ready[q].valid;
}
/* Drop every entry (reset). */
void vsched__ready_clear(struct vsched *s);

/* A fresh traversal stamp for vsched__node.mark. */
uint32_t vsched__graph_stamp(vsched__graph *g);

void vsched__node_start(vsched__node *n, uint64_t now_ns);

int vsched__nodevec_push(vsched__nodevec *v, vsched__node *n);
void vsched__nodevec_free(vsched__nodevec *v);

/* The same for the vectors of a node's edges (down, ups) and of the
 * scheduler's short-lived worklists: arrays up to 32 entries come from the
 * graph's free lists instead of malloc. A vector filled by one pair must
 * be freed by the same pair. Scheduler lock held. */
int vsched__edgevec_push(vsched__graph *g, vsched__nodevec *v,
                         vsched__node *n);
void vsched__edgevec_free(vsched__graph *g, vsched__nodevec *v);

#endif
