/*
 * graph -- the job graph: the scheduler's core data structure.
 *
 * A node is one unit of schedulable work: a file stage (Source, Analysis,
 * Artifact of one profile) or a generic job (dag.h). Edges run from an
 * upstream node to the nodes that wait for it; a node becomes READY when
 * its last upstream finishes, and the ready set is a binary heap ordered by
 * effective priority (higher first), then by id (older first).
 *
 * Life of a node:
 *
 *     PENDING --(last upstream done)--> READY --(dispatched)--> RUNNING
 *        |                                 |                       |
 *        +-------- FAILED / CANCELLED <----+---------------+       v
 *                                                                 DONE
 *
 * vsched__node_finish is the single choke point of terminal transitions and
 * stamps finished_ns; vsched__node_start stamps started_ns.
 *
 * Thread-safety: none of its own. Every function here is called with the
 * scheduler lock (vsched.lock) held.
 */
#ifndef VSCHED_LIB_GRAPH_H
#define VSCHED_LIB_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

struct vsched__file;
struct vsched_handle;
struct vsched__job;

typedef enum vsched__node_state {
    VSCHED__PENDING,
    VSCHED__READY,
    VSCHED__RUNNING,
    VSCHED__DONE,
    VSCHED__FAILED,
    VSCHED__CANCELLED
} vsched__node_state;

typedef enum vsched__node_kind {
    VSCHED__K_SOURCE,   /* load on the I/O pool, parse + deps on the CPU pool */
    VSCHED__K_ANALYSIS,
    VSCHED__K_ARTIFACT,
    VSCHED__K_JOB       /* generic graph job */
} vsched__node_kind;

/* A growable array of node pointers. */
typedef struct vsched__nodevec {
    struct vsched__node **v;
    size_t n, cap;
} vsched__nodevec;

typedef struct vsched__node {
    uint64_t id;                 /* monotonic within a scheduler */
    vsched__node_kind kind;
    vsched__node_state state;
    int priority;                /* effective: max over what demands it */
    /* Longest expected duration (ns) of the work downstream of it, this
     * node included: the second ordering key of the ready heap. */
    uint64_t weight;
    size_t heap_index;           /* position in the ready heap when READY */

    /* Identity of the file work this node belongs to. */
    struct vsched__file *file;   /* NULL for generic jobs */
    uint64_t incarnation;
    uint64_t generation;
    char *profile;               /* Artifact: profile name (owned) */

    size_t deps_remaining;       /* upstream nodes not yet DONE */
    vsched__nodevec upstream;    /* what this node waits for */
    vsched__nodevec downstream;  /* who waits for this node */

    /* Phase of a Source node: 0 = loading, 1 = parsing. */
    int phase;
    /* A task prepared for this node but not yet accepted by its pool (the
     * pool was full, or the Source load finished and parse is next). */
    void *pending_task;

    /* Outcome. */
    int status;                  /* 0 or negative vsched_status */
    char *message;               /* reason, when status != 0 (owned) */
    char *failed_dep;            /* the dependency that failed (owned) */
    int fail_stage;              /* vsched_stage where the failure arose */
    vsched_diag *diags;          /* diagnostics of the run (owned) */
    size_t n_diags;
    uint64_t started_ns, finished_ns;

    /* Handles waiting for this node's terminal state. */
    struct vsched_handle **waiters;
    size_t n_waiters, cap_waiters;

    /* Cancellation flag read by the running task (atomic int). */
    int cancel;

    /* Generic job: gates, resources, parent (dag.h); NULL for stages. */
    struct vsched__job *job;
    /* Set when first pushed ready (its gates fired): an AFTER_ADMISSION
     * edge is then satisfied. admit_waiters are the nodes such edges gate;
     * push_ready releases them (one fewer upstream each) and forgets them. */
    int admitted;
    vsched__nodevec admit_waiters;
} vsched__node;

typedef struct vsched__graph {
    uint64_t next_id;            /* one past the newest node's id */
    vsched__nodevec all;         /* every node, for teardown and reports */
    vsched__node **heap;         /* ready heap */
    size_t heap_n, heap_cap;
    size_t heap_max;             /* ready depth high-water mark */
    size_t edges;                /* live upstream->downstream edges */
    size_t unfinished;           /* nodes not yet terminal */
} vsched__graph;

int vsched__nodevec_push(vsched__nodevec *v, vsched__node *n);
void vsched__nodevec_free(vsched__nodevec *v);

void vsched__graph_init(vsched__graph *g);
/* Free every node (teardown only). */
void vsched__graph_fini(vsched__graph *g);

/* Create a PENDING node with no edges; NULL on exhaustion. Ids come from
 * one process-wide counter: monotonic, never reused (not even by a reset,
 * which starts a fresh graph), so ids increase along g->all. */
vsched__node *vsched__node_new(vsched__graph *g, vsched__node_kind kind,
                               int priority);

/* Make `down` wait for `up`. If `up` is already DONE nothing is recorded.
 * Returns VSCHED_OK or VSCHED_ENOMEM. */
int vsched__graph_add_edge(vsched__graph *g, vsched__node *up,
                           vsched__node *down);

/* PENDING node with no remaining upstream -> READY (pushed on the heap). */
int vsched__graph_make_ready_if_free(vsched__graph *g, vsched__node *n);

/* The node with this id, or NULL (binary search over g->all). */
vsched__node *vsched__graph_find(const vsched__graph *g, uint64_t id);

/* Pop the best READY node, or NULL. */
vsched__node *vsched__graph_pop_ready(vsched__graph *g);
/* Put a popped node back (its pool was full). */
int vsched__graph_push_ready(vsched__graph *g, vsched__node *n);

/* Raise n's priority (and its upstream's, transitively, while not
 * terminal) to at least `priority`, re-ordering the heap. */
void vsched__graph_raise_priority(vsched__graph *g, vsched__node *n,
                                  int priority);
/* The same for the weight (critical-path key). */
void vsched__graph_raise_weight(vsched__graph *g, vsched__node *n,
                                uint64_t weight);

void vsched__node_start(vsched__node *n, uint64_t now_ns);
/* Terminal transition: record the outcome. Ownership of message,
 * failed_dep and diags passes to the node. Does not touch downstream. */
void vsched__node_finish(vsched__graph *g, vsched__node *n,
                         vsched__node_state state, int status, char *message,
                         char *failed_dep, uint64_t now_ns);

static inline int vsched__node_terminal(const vsched__node *n)
{
    return n->state >= VSCHED__DONE;
}

uint64_t vsched__now_ns(void);

/* Free a job's payload (dag: gate.c); called when its node is freed. */
void vsched__job_free(struct vsched__job *j);

#endif
