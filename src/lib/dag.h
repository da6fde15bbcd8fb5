/*
 * dag -- generic jobs on the scheduler's one graph, and what they need to
 * start: named resources, CPU concurrency permits, parents, gates.
 *
 * A job is a graph node of kind VSCHED__K_JOB whose `job` field points at a
 * vsched__job. File stages stay what they are; a job may depend on them
 * (an ARTIFACT spec of vsched_submit_dag finds or admits Artifact(file,
 * profile) and links it like any upstream node), never the reverse.
 *
 * Edges of a job carry gates (vsched_gate): the job's `deps` record each
 * upstream node (a reference) with its gate; the edge itself is in the
 * upstream's `down` list like every explicit edge. An AFTER_ADMISSION
 * edge is also recorded in the scheduler's admission table (gate.c),
 * released when the upstream is first pushed ready.
 *
 * Starting a job (runner.c asks vsched__job_can_start, and then
 * vsched__job_started, in one hold of the lock) takes everything at once
 * or nothing:
 *   - a permit of its semaphore, if any;
 *   - each resource: a borrow of an ancestor's grant if one holds it (the
 *     ancestor's grant serves ONE child branch at a time), else a fresh
 *     unit, which becomes this node's grant for its whole subtree.
 * A job that cannot start is parked (holding nothing); every release
 * re-queues the parked jobs. Before parking, and whenever a unit is taken
 * while jobs are parked, the wait-for graph is checked: a job waiting for
 * units that only subtrees depending on it hold can never start, and is
 * failed with a reason naming the chain (resource.c).
 *
 * Settling. A job's permit and grants follow its running work, not its
 * state: they are given back when the job is terminal AND its task has
 * returned (a reset or a cancellation ends the node at once, but a task
 * still running keeps what it took until it returns). `live` counts the
 * unsettled nodes of a subtree; the grants of a holder go back when its
 * subtree has settled.
 *
 * Ready queue ledger: `queued` counts jobs in the ready queue -- their
 * gates fired, not yet started (ready, or parked for a permit or units);
 * a pending job is not in it. Writers, enumerated: vsched__job_enqueued
 * (+, on a job's first push onto a ready queue after it was pending),
 * vsched__job_started and vsched__job_ended (-). ready_depth_max is its
 * high-water mark. Room for a sub-DAG counts its jobs that can be ready at
 * insertion.
 *
 * Registry: non-terminal jobs are on the active list (token cancel, reset,
 * teardown walk it); terminal jobs stay queryable by id in a bounded
 * history (the newest VSCHED__JOB_HISTORY), then leave the graph and are
 * freed once nothing refers to them.
 *
 * Thread-safety: everything here runs with the scheduler lock held, except
 * where a function says otherwise. The semaphore and token objects are
 * guarded by the lock of the scheduler they were created for; their
 * reference counts and the token's flag are atomics.
 */
#ifndef VSCHED_LIB_DAG_H
#define VSCHED_LIB_DAG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

#include "graph.h"

struct vsched__pass;
struct vsched__task;

#define VSCHED__JOB_HISTORY 4096

/* A named counting semaphore. */
typedef struct vsched__resource {
    char *name; /* owned */
    unsigned capacity;
    unsigned in_use;         /* units held as grants or by stage tasks */
    unsigned peak;           /* the most ever in use */
    vsched__rq waiting;      /* stage nodes waiting for a unit (refs;
                                 stage_res.c) */
    vsched__nodevec holders; /* nodes holding a unit (no references) */
} vsched__resource;

/* A unit of a resource held for a node's subtree. */
typedef struct vsched__grant {
    vsched__resource *res;
    vsched__node *branch; /* the child of the holder whose subtree
                                 borrows it now, or NULL */
} vsched__grant;

/* One upstream edge of a job and its gate. */
typedef struct vsched__jobdep {
    vsched__node *up; /* a reference */
    vsched_gate gate;
} vsched__jobdep;

struct vsched_sem {
    vsched *s;
    unsigned capacity;
    unsigned in_use; /* scheduler lock */
    atomic_int refs;
};

struct vsched_token {
    vsched *s;
    atomic_int cancelled;
    atomic_int refs;
    char *reason; /* scheduler lock; owned */
};

typedef struct vsched__job {
    char *kind, *name, *profile; /* for the executor's job op (owned) */
    char **inputs;               /* explicit inputs (owned) */
    size_t n_inputs;
    char *key;            /* dedupe key or NULL (owned) */
    vsched__jobdep *deps; /* upstream edges with gates, in order */
    size_t n_deps;
    vsched__node *parent;     /* a job node (reference), or NULL */
    size_t live;              /* unsettled nodes of the subtree */
    vsched__resource **needs; /* resources taken at start */
    size_t n_needs;
    vsched__grant *grants; /* units held for the subtree */
    size_t n_grants;
    vsched_sem *sem;           /* a reference, or NULL */
    vsched_token *token;       /* a reference, or NULL */
    char *output;              /* produced path (owned) */
    vsched__node *prev, *next; /* the active list */
    unsigned queued : 1;       /* counted in the ready-queue ledger */
    unsigned parked : 1;       /* on the parked list */
    unsigned permit : 1;       /* holds a permit of sem */
    unsigned keyed : 1;        /* in the dedupe index */
    unsigned task_out : 1;     /* its task has not returned */
    unsigned settled : 1;      /* terminal and its task back */
    unsigned active : 1;       /* on the active list */
} vsched__job;

/* An AFTER_ADMISSION edge waiting for its upstream's first admission. */
typedef struct vsched__admit_edge {
    vsched__node *up, *down; /* references */
} vsched__admit_edge;

/* The scheduler's job-graph state (a member of struct vsched). */
typedef struct vsched__dag {
    size_t ready_capacity;
    size_t queued;          /* the ready-queue ledger */
    size_t queued_max;      /* its high-water mark */
    vsched__resource **res; /* the resource table */
    size_t n_res, cap_res;
    vsched__nodevec parked; /* jobs waiting for a resource or permit
                                     (references) */
    struct vsched__stage_need *stage_needs; /* what stage tasks take */
    size_t n_stage_needs;
    vsched__nodevec keyed;  /* live jobs with a dedupe key (no refs) */
    vsched__node *active;   /* non-terminal jobs (the graph's ref) */
    vsched__node **history; /* terminal jobs, a ring (the graph's ref) */
    size_t hist_head, hist_n;
    vsched__admit_edge *admit; /* pending AFTER_ADMISSION edges */
    size_t n_admit, cap_admit;
    /* changed: broadcast when nodes end or the ledger drops; waited on
     * with the scheduler lock by vsched_node_wait and blocking
     * submitters. */
    pthread_cond_t changed;
} vsched__dag;

/* ---- dag.c: submission --------------------------------------------------- */
void vsched__dag_init(vsched *s);
void vsched__dag_fini(vsched *s);

/* ---- resource.c: resources, permits, parents, deadlocks ------------------ */
vsched__resource *vsched__resource_get(vsched *s, const char *name);
/* Account a new node in its parents' subtrees. */
void vsched__job_adopt(vsched__node *n);
/* Can n start now? If not, park it (or fail it when it never can) and
 * return 0. */
int vsched__job_can_start(vsched *s, vsched__node *n, struct vsched__pass *p);
/* n starts: take what can_start found free. */
void vsched__job_started(vsched *s, vsched__node *n, struct vsched__pass *p);
/* Move every parked job (and stage task) back to the ready queue. */
void vsched__job_wake_parked(vsched *s);

/* ---- stage_res.c: resources of file-stage tasks -------------------------- */
struct vsched__task;
/* n is about to become READY: 1 when it may (its stage resources, if it
 * needs any, are reserved), 0 when it waits for a unit instead. */
int vsched__stage_admit(vsched *s, vsched__node *n);
/* n starts as t: its reservation moves to the task. */
void vsched__stage_start(vsched__node *n, struct vsched__task *t);
/* t returned: its units go back; waiters are admitted. */
void vsched__stage_returned(vsched *s, struct vsched__task *t);
/* n ends or leaves the ready queue: what it reserved goes back. */
void vsched__stage_unreserve(vsched *s, vsched__node *n);
/* r's capacity changed: admit its waiters while it has units. */
void vsched__stage_capacity_changed(vsched *s, vsched__resource *r);
/* Forget every waiter (reset), and free the table (teardown). */
void vsched__stage_waiters_clear(vsched *s);
void vsched__stage_resources_fini(vsched *s);
/* n (a job) became terminal: ledger, dedupe key, registry; and, if its
 * task is not out, settle it. */
void vsched__job_ended(vsched *s, vsched__node *n);
/* n's task returned (its node may have ended meanwhile). */
void vsched__job_task_returned(vsched *s, vsched__node *n);
/* Put a new job on the active list. */
void vsched__job_register(vsched *s, vsched__node *n);
/* n (a job) was pushed onto a ready queue: in the ledger, once. */
void vsched__job_enqueued(vsched *s, vsched__node *n);
/* Forget every terminal job of the history (reset). */
void vsched__job_history_clear(vsched *s);
/* n left the graph: drop the references it holds that nothing will use
 * again -- its upstream records now, its parent once its subtree has
 * settled -- so no cycle of references (a parent held by its child, the
 * child's dependent held by the parent's edge record) outlives them. */
void vsched__job_forget(vsched *s, vsched__node *n);

/* ---- gate.c: edges with gates, job outcomes ------------------------------ */
/* Record up -> d (d a new job) with gate; applies it at once when up is
 * already terminal or admitted. Nothing is recorded when d already
 * ended. */
void vsched__job_link(vsched *s, vsched__node *up, vsched__node *d,
                      vsched_gate gate, struct vsched__pass *p);
/* up ended: apply the gate of up -> d (d a job). */
void vsched__job_upstream_ended(vsched *s, vsched__node *up, vsched__node *d,
                                struct vsched__pass *p);
/* n was pushed ready for the first time: its AFTER_ADMISSION edges. */
void vsched__job_admitted(vsched *s, vsched__node *n, struct vsched__pass *p);
/* Cancel n (not terminal) and everything downstream of it, transitively. */
void vsched__job_cancel_tree(vsched *s, vsched__node *n, const char *reason,
                             struct vsched__pass *p);
/* A finished job task (lock held). */
void vsched__job_complete(vsched *s, struct vsched__task *t,
                          struct vsched__pass *p);
/* The task of a job node starting now; NULL on exhaustion. */
struct vsched__task *vsched__job_task(vsched *s, vsched__node *n);
/* Free a task's job input. */
void vsched__job_in_free(vsched_job_in *in);
/* Name of any node for messages: job name or source name. */
const char *vsched__node_name(const vsched__node *n);
/* Free a job's payload; called when its node is freed. */
void vsched__job_free(vsched *s, vsched__node *n);
/* Free a payload that holds no node references (a prepared spec, or the
 * rest of a freed node's). */
void vsched__job_payload_free(vsched__job *j);

#endif
