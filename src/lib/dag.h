/*
 * dag -- generic jobs on the scheduler's one graph, and what they need to
 * start: named resources, CPU concurrency permits, parents, gates.
 *
 * A job is a graph node of kind VSCHED__K_JOB whose `job` field points at a
 * vsched__job. File stages (Source, Analysis, Artifact) stay what they were;
 * a job may depend on them (an ARTIFACT spec of vsched_submit_dag finds or
 * admits Artifact(file, profile) and links it like any upstream node), never
 * the reverse.
 *
 * Edges of a job carry gates (vsched_gate). The gate of an edge up -> job
 * lives in the job's `deps` (keyed by the upstream node), the edge itself in
 * the graph (up->downstream, job->upstream, deps_remaining) like every edge;
 * an AFTER_ADMISSION edge is also in up->admit_waiters, released by graph.c
 * when `up` is first pushed ready.
 *
 * Starting a job (driver.c calls vsched__job_can_start, then, once its task
 * is accepted by the pool, vsched__job_started -- both in one hold of the
 * scheduler lock) takes everything at once or nothing:
 *   - a permit of its semaphore, if any;
 *   - each resource: a borrow of an ancestor's grant if one holds it (the
 *     ancestor's grant serves ONE child branch at a time), else a fresh
 *     unit, which becomes this node's grant for its whole subtree.
 * A node that cannot start is parked (state PENDING, `parked`); every
 * release re-queues all parked nodes. A grant is released when its
 * holder's subtree is terminal: each terminal transition walks the parent
 * chain, decrementing `live` (the unfinished nodes of each subtree).
 *
 * Ready queue ledger: `queued` counts jobs admitted and not yet started
 * (pending, ready or parked). Writers, enumerated: vsched__dag_insert (+),
 * vsched__job_started and vsched__job_ended (-), vsched__dag_sync (reset).
 *
 * Reset: vsched_reset moves the whole graph to the graveyard without
 * telling this module; every entry point calls vsched__dag_sync first,
 * which sees the epoch change and drops the parked list, the dedupe index,
 * the ledger and every resource's and semaphore's use count.
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

/* A named counting semaphore. */
typedef struct vsched__resource {
    char *name;               /* owned */
    unsigned capacity;
    unsigned in_use;          /* units held as grants */
} vsched__resource;

/* A unit of a resource held for a node's subtree. */
typedef struct vsched__grant {
    vsched__resource *res;
    vsched__node *branch;     /* the child of the holder whose subtree
                                 borrows it now, or NULL */
} vsched__grant;

/* One upstream edge of a job and its gate. */
typedef struct vsched__jobdep {
    vsched__node *up;
    vsched_gate gate;
} vsched__jobdep;

struct vsched_sem {
    vsched *s;
    unsigned capacity;
    unsigned in_use;          /* scheduler lock */
    uint64_t epoch;           /* s->epoch in_use belongs to */
    atomic_int refs;
};

struct vsched_token {
    vsched *s;
    atomic_int cancelled;
    atomic_int refs;
    char *reason;             /* scheduler lock; owned */
};

typedef struct vsched__job {
    char *kind, *name, *profile;  /* for the executor's job op (owned) */
    char **inputs;                /* explicit inputs (owned) */
    size_t n_inputs;
    char *key;                    /* dedupe key or NULL (owned) */
    vsched__jobdep *deps;         /* upstream edges with gates, in order */
    size_t n_deps;
    vsched__node *parent;         /* a job node, or NULL */
    size_t live;                  /* unfinished nodes of the subtree */
    vsched__resource **needs;     /* resources taken at start */
    size_t n_needs;
    vsched__grant *grants;        /* units held for the subtree */
    size_t n_grants;
    vsched_sem *sem;              /* a reference, or NULL */
    vsched_token *token;          /* a reference, or NULL */
    char *output;                 /* produced path (owned) */
    unsigned queued : 1;          /* counted in the ready-queue ledger */
    unsigned parked : 1;          /* on the parked list */
    unsigned permit : 1;          /* holds a permit of sem */
    unsigned keyed : 1;           /* in the dedupe index */
} vsched__job;

/* The scheduler's job-graph state (a member of struct vsched). */
typedef struct vsched__dag {
    uint64_t epoch;               /* s->epoch this state belongs to */
    size_t ready_capacity;
    size_t queued;                /* the ready-queue ledger */
    vsched__resource **res;       /* the resource table */
    size_t n_res, cap_res;
    vsched__nodevec parked;       /* jobs waiting for a resource or permit */
    vsched__nodevec keyed;        /* live jobs with a dedupe key */
    /* changed: broadcast (after the unlock, by vsched__pass_run, or under
     * the lock) when nodes end or the ledger drops; waited on with the
     * scheduler lock by vsched_node_wait and blocking submitters. */
    pthread_cond_t changed;
} vsched__dag;

/* ---- dag.c: submission ------------------------------------------------- */
void vsched__dag_init(vsched *s);
void vsched__dag_fini(vsched *s);
/* Forget state of an earlier epoch (after a reset). */
void vsched__dag_sync(vsched *s);

/* ---- resource.c: resources, permits, parents --------------------------- */
vsched__resource *vsched__resource_get(vsched *s, const char *name);
/* Account a new node in its parents' subtrees. */
void vsched__job_adopt(vsched__node *n);
/* Can n start now? If not, park it and return 0. */
int vsched__job_can_start(vsched *s, vsched__node *n);
/* n's task was accepted: take what can_start found free. */
void vsched__job_started(vsched *s, vsched__node *n);
/* Move every parked job back to the ready heap; each retries at
 * dispatch. */
void vsched__job_wake_parked(vsched *s);
/* n (a job) became terminal: permit, ledger, subtree roll-up, grants. */
void vsched__job_ended(vsched *s, vsched__node *n);

/* ---- gate.c: edges with gates, job outcomes ----------------------------- */
/* Record up -> d (d a new job) with gate; applies it at once when up is
 * already terminal or admitted. */
void vsched__job_link(vsched *s, vsched__node *up, vsched__node *d,
                      vsched_gate gate, struct vsched__pass *p);
/* up ended: apply the gate of up -> d (d a job). */
void vsched__job_upstream_ended(vsched *s, vsched__node *up, vsched__node *d,
                                struct vsched__pass *p);
/* Cancel n (not terminal) and everything downstream of it, transitively. */
void vsched__job_cancel_tree(vsched *s, vsched__node *n, const char *reason,
                             struct vsched__pass *p);
/* A finished job task (lock held, current epoch). */
struct vsched__task;
void vsched__job_complete(vsched *s, struct vsched__task *t,
                          struct vsched__pass *p);
/* The task of a job node; NULL on exhaustion. */
struct vsched__task *vsched__job_task(vsched *s, vsched__node *n);
/* Free a task's job input (task_free). */
void vsched__job_in_free(vsched_job_in *in);
/* Name of any node for messages: job name or source name. */
const char *vsched__node_name(const vsched__node *n);

/* ---- graph.c calls this when it frees a node ---------------------------- */
void vsched__job_free(vsched__job *j);

#endif
