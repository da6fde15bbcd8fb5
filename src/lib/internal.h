/*
 * internal.h -- the scheduler object and what travels between its threads.
 *
 * Threads of a scheduler:
 *   - callers: submit requests (push to the inbox) and wait on handles;
 *   - the driver: the inbox's only consumer; admits requests, integrates
 *     completions and dispatches ready nodes, all under `lock`;
 *   - pool workers (host-owned pools): run one task each, unlocked, and
 *     push the completion to the inbox.
 *
 * Lock ranks (take in increasing order, never the reverse):
 *   1. vsched.lock        the scheduler lock: graph, files, handles' targets
 *   2. vsched.serial_*    serialise calls into a non-thread-safe plugin
 *                         (held only around one plugin call, never with 1)
 *   3. inbox.lock         the inbox ring (never held while taking 1)
 *   4. handle.lock        one handle's completion flag
 *   5. vsched.task_lock   count of live tasks (teardown)
 *   6. vsched.observer_lock  one observer call at a time
 * Pool locks are private to pool.c and leaves.
 */
#ifndef VSCHED_LIB_INTERNAL_H
#define VSCHED_LIB_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

#include "files.h"
#include "graph.h"
#include "inbox.h"

#define VSCHED__HIDDEN __attribute__((visibility("hidden")))

/* One unit of work handed to a pool; see stages.c. Owned by the driver
 * until dispatched, by the worker while it runs, by the driver again once
 * its completion is popped from the inbox. */
typedef struct vsched__task {
    vsched *s;
    vsched__node *node;       /* the node it runs for (lives until destroy) */
    vsched__node_kind kind;
    int phase;                /* Source: 0 load, 1 parse */
    uint64_t incarnation, generation;
    char *name;               /* canonical source name (owned) */
    char *profile;            /* Artifact (owned) */
    char file_kind[32];       /* loader classification */

    /* Inputs. */
    char *bytes;              /* loaded source (owned, freed after parse) */
    size_t len;
    const void *snapshot;     /* borrowed from the file for Analysis/Artifact */
    uint64_t content_hash;
    uint64_t analysis_hash;
    uint64_t *blocker_hashes; /* owned */
    size_t n_blockers;

    /* Outputs. */
    int status;
    char *message;            /* owned */
    void *new_snapshot;       /* Source: executor-owned snapshot */
    vsched_deps_out deps;     /* Source: owned arrays and strings */
    uint64_t out_hash;
    char *artifact_path;      /* owned */
    vsched_diag *diags;       /* owned, strings too */
    size_t n_diags;
    uint64_t started_ns, finished_ns;
} vsched__task;

struct vsched_handle {
    vsched *s;
    vsched_request req;       /* name/profile owned */
    char *canonical;          /* resolved name (owned) */
    int admit_status;         /* failure found before admission */
    vsched_batch *batch;      /* owning batch, or NULL */

    /* Result, written once by the driver before `done` is set. */
    vsched_result result;
    char *r_message, *r_failed_dep, *r_artifact_path; /* owned */
    vsched_diag *r_diags;
    size_t r_n_diags;
    char **r_deps, **r_blockers; /* owned copies, NULL-terminated */

    /* lock: guards done (rank 4). */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    atomic_int refs;          /* caller + scheduler */
};

struct vsched_batch {
    vsched *s;
    size_t n;
    vsched_handle **handles;
    const vsched_result **results;
};

struct vsched {
    vsched_options opts;

    /* lock: the scheduler lock (rank 1). Guards graph, files, every node
     * and file field, handle->result before done, inflight, waiters. */
    pthread_mutex_t lock;
    vsched__graph graph;
    vsched__files files;
    size_t inflight;          /* tasks dispatched, completion not processed */
    size_t waiters;           /* handles parked on nodes */
    vsched_event *events;     /* stage events not yet delivered */
    size_t n_events, cap_events;

    /* observer_lock: serialises observer calls (rank 6, innermost). */
    pthread_mutex_t observer_lock;

    vsched__inbox inbox;
    pthread_t driver;
    int driver_started;

    /* serial_*: taken around each plugin call when the plugin is not
     * thread-safe (rank 2, leaf apart from plugin code). */
    pthread_mutex_t serial_loader;
    pthread_mutex_t serial_executor;

    /* task_lock: guards live_tasks (rank 5). */
    pthread_mutex_t task_lock;
    pthread_cond_t task_cond;
    size_t live_tasks;        /* tasks handed to a pool, not yet retired */

    atomic_int stopping;

    atomic_uint_fast64_t submit_count;
    atomic_uint_fast64_t batch_submissions;
    atomic_uint_fast64_t dedup_joins;
    atomic_uint_fast64_t stale_refusals;
    atomic_uint_fast64_t stage_runs[3];
    atomic_uint_fast64_t stage_failures[3];
};

/* driver.c */
VSCHED__HIDDEN void *vsched__driver_main(void *arg);
VSCHED__HIDDEN void vsched__driver_teardown(vsched *s);

VSCHED__HIDDEN void vsched__fire_events(vsched *s);

/* stages.c: pool entry points */
VSCHED__HIDDEN void vsched__task_run(void *arg);
VSCHED__HIDDEN void vsched__task_free(vsched__task *t);
VSCHED__HIDDEN void vsched__task_retire(vsched *s);

/* sched.c: handle completion (called by the driver after unlocking) */
VSCHED__HIDDEN void vsched__handle_signal(vsched_handle *h);
VSCHED__HIDDEN void vsched__handle_unref(vsched_handle *h);

/* ctx.c */
VSCHED__HIDDEN void vsched__ctx_init(vsched_ctx *ctx, vsched__task *t);
VSCHED__HIDDEN vsched_diag *vsched__diags_copy(const vsched_diag *d,
                                               size_t n);
VSCHED__HIDDEN void vsched__diags_free(vsched_diag *d, size_t n);

/* pool.c */
VSCHED__HIDDEN size_t vsched__pool_capacity(const vsched_pool *p);

#endif
