/*
 * internal.h -- the scheduler object and what travels between its threads.
 *
 * Threads of a scheduler:
 *   - callers: submit requests (push to the inbox), wait on handles, and
 *     call invalidate/remove/reset (which take the scheduler lock directly);
 *   - the driver: the inbox's consumer; admits requests, integrates
 *     completions and dispatches ready nodes, all under `lock`;
 *   - pool workers (host-owned pools): run one task each, unlocked, and
 *     push the completion to the inbox. A CPU worker that waits on a handle
 *     runs ready CPU work itself meanwhile (see vsched_wait).
 *
 * Lock ranks (take in increasing order, never the reverse):
 *   1. vsched.lock        the scheduler lock: graph, files, handles' targets,
 *                         the artifact store, the graveyard, and the job
 *                         graph's state (dag.h: resources, grants, permits
 *                         of every vsched_sem of this scheduler, tokens'
 *                         reasons); vsched.dag.changed is a condition
 *                         variable on it, not a lock of its own
 *   2. root.lock          the MVCC source directory (root.c); taken inside 1
 *                         by publishers, alone by capture/lookup
 *   3. vsched.serial_*    serialise calls into a non-thread-safe plugin
 *                         (held only around one plugin call, never with 1)
 *   4. inbox.lock         the inbox ring (never held while taking 1)
 *   5. handle.lock        one handle's completion flag
 *   6. vsched.task_lock   count of live tasks (teardown)
 *   7. vsched.observer_lock  one observer call at a time
 * Pool locks are private to pool.c and leaves.
 */
#ifndef VSCHED_LIB_INTERNAL_H
#define VSCHED_LIB_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

#include "dag.h"
#include "files.h"
#include "graph.h"
#include "inbox.h"
#include "root.h"

#define VSCHED__HIDDEN __attribute__((visibility("hidden")))

/* One unit of work handed to a pool; see stages.c. Owned by the driver
 * until dispatched, by the worker while it runs, by the driver again once
 * its completion is popped from the inbox. */
typedef struct vsched__task {
    vsched *s;
    vsched__node *node;       /* the node it runs for */
    uint64_t epoch;           /* s->epoch at dispatch (reset detection) */
    vsched__node_kind kind;
    int phase;                /* Source: 0 load, 1 parse */
    uint64_t incarnation, generation;
    char *name;               /* canonical source name (owned) */
    char *profile;            /* Artifact (owned) */
    char file_kind[32];       /* loader classification */

    /* Inputs. */
    char *bytes;              /* loaded source (owned, freed after parse) */
    size_t len;
    int has_content;          /* Source: bytes come from an upsert */
    vsched__snap *snap;       /* a reference, for Analysis/Artifact */
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

    /* K_JOB: the job op's input, strings and array owned (gate.c). */
    vsched_job_in *job;
} vsched__task;

struct vsched_handle {
    vsched *s;
    vsched_request req;       /* name/profile/content owned */
    char *canonical;          /* resolved name (owned) */
    char kind[32];            /* the loader's classification, or "" */
    int admit_status;         /* failure found before admission */
    vsched_batch *batch;      /* owning batch, or NULL */

    /* Result, written once under the scheduler lock before `done`. */
    vsched_result result;
    char *r_message, *r_failed_dep, *r_artifact_path; /* owned */
    vsched_diag *r_diags;
    size_t r_n_diags;
    char **r_deps, **r_blockers; /* owned copies, NULL-terminated */

    /* lock: guards done (rank 5). */
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

/* What one critical section leaves for after the unlock: handles to
 * signal and join callbacks to run. */
typedef struct vsched__pass {
    vsched_handle **fin;
    size_t n_fin, cap_fin;
    vsched_handle **joins;
    size_t n_joins, cap_joins;
} vsched__pass;

struct vsched {
    vsched_options opts;

    /* lock: the scheduler lock (rank 1). Guards graph, files, every node
     * and file field, handle results before done, inflight, waiters,
     * events, epoch, the graveyard. */
    pthread_mutex_t lock;
    vsched__graph graph;
    vsched__files files;
    size_t inflight;          /* tasks dispatched, completion not processed */
    size_t waiters;           /* handles parked on nodes */
    vsched_event *events;     /* stage events not yet delivered */
    size_t n_events, cap_events;

    /* Reset: the current epoch; objects retired by earlier epochs wait in
     * the graveyard until the tasks dispatched in them have come back. */
    uint64_t epoch;
    size_t grave_inflight;    /* tasks of earlier epochs still out */
    vsched__graph grave_graph;
    vsched__file **grave_files;
    size_t n_grave_files, cap_grave_files;
    /* Objects retired by vsched_remove in this epoch (nodes of the current
     * graph still point at them). */
    vsched__file **retired_files;
    size_t n_retired, cap_retired;

    vsched__root_dir *root;   /* MVCC source directory (own lock, rank 2) */

    /* The job graph's resources, ledger, parked jobs (dag.h); guarded by
     * `lock` like the graph. */
    vsched__dag dag;

    vsched__inbox inbox;
    pthread_t driver;
    int driver_started;

    /* serial_*: taken around each plugin call when the plugin is not
     * thread-safe (rank 3, leaf apart from plugin code). */
    pthread_mutex_t serial_loader;
    pthread_mutex_t serial_executor;

    /* task_lock: guards live_tasks (rank 6). */
    pthread_mutex_t task_lock;
    pthread_cond_t task_cond;
    size_t live_tasks;        /* tasks handed to a pool, not yet retired */

    /* observer_lock: one observer call at a time (rank 7). */
    pthread_mutex_t observer_lock;

    atomic_int stopping;

    atomic_uint_fast64_t submit_count;
    atomic_uint_fast64_t batch_submissions;
    atomic_uint_fast64_t dedup_joins;
    atomic_uint_fast64_t stale_refusals;
    atomic_uint_fast64_t stage_runs[3];
    atomic_uint_fast64_t stage_failures[3];
};

/* ---- pass.c: after-unlock work ------------------------------------------ */
VSCHED__HIDDEN void vsched__pass_fin(vsched__pass *p, vsched_handle *h);
VSCHED__HIDDEN void vsched__pass_join(vsched__pass *p, vsched_handle *h);
/* Fire events, signal handles, run join callbacks; then empty p. Call with
 * no scheduler lock held. */
VSCHED__HIDDEN void vsched__pass_run(vsched *s, vsched__pass *p);
VSCHED__HIDDEN void vsched__pass_free(vsched__pass *p);
VSCHED__HIDDEN void vsched__fire_events(vsched *s);

/* ---- outcome.c: terminal transitions (lock held) ------------------------ */
VSCHED__HIDDEN vsched_stage vsched__stage_of(const vsched__node *n);
VSCHED__HIDDEN void vsched__handle_finish(vsched *s, vsched_handle *h,
                                          vsched__node *n, vsched__pass *p);
/* Answer h without a node (admission refused): status and message. */
VSCHED__HIDDEN void vsched__handle_refuse(vsched_handle *h, int status,
                                          const char *message,
                                          vsched__pass *p);
VSCHED__HIDDEN void vsched__waiter_add(vsched *s, vsched__node *n,
                                       vsched_handle *h, vsched__pass *p);
VSCHED__HIDDEN void vsched__event_push(vsched *s, const vsched__node *n);
VSCHED__HIDDEN void vsched__fail_node(vsched *s, vsched__node *n, int status,
                                      char *message, char *failed_dep,
                                      vsched_diag *diags, size_t n_diags,
                                      int origin, vsched__pass *p);
VSCHED__HIDDEN void vsched__release_downstream(vsched *s, vsched__node *n,
                                               vsched__pass *p);
VSCHED__HIDDEN void vsched__link(vsched *s, vsched__node *up,
                                 vsched__node *down, vsched__pass *p);

/* ---- admit.c: stage admission (lock held) ------------------------------- */
VSCHED__HIDDEN vsched__node *vsched__ensure_source(vsched *s, vsched__file *f,
                                                   int prio);
VSCHED__HIDDEN vsched__node *vsched__ensure_analysis(vsched *s,
                                                     vsched__file *f,
                                                     int prio,
                                                     vsched__pass *p);
/* f itself, or -- when f was retired (removed, re-homed) -- the live
 * object of the same name, ensured. */
VSCHED__HIDDEN vsched__file *vsched__file_live(vsched *s, vsched__file *f);
VSCHED__HIDDEN void vsched__gate_on_blockers(vsched *s, vsched__file *f,
                                             vsched__pass *p);
VSCHED__HIDDEN void vsched__admit(vsched *s, vsched_handle *h,
                                  vsched__pass *p);
VSCHED__HIDDEN void vsched__admit_batch(vsched *s, vsched_batch *b,
                                        vsched__pass *p);
/* Find or admit Artifact(f, profile) at priority prio (dag.c). */
VSCHED__HIDDEN vsched__node *vsched__ensure_artifact(vsched *s,
                                                     vsched__file *f,
                                                     const char *profile,
                                                     int prio,
                                                     vsched__pass *p);

/* ---- supersede.c: generations and retirement (lock held) ---------------- */
/* Advance f's generation and sweep its older work. VSCHED_EEXHAUSTED when
 * the counter cannot advance (nothing changes then). */
VSCHED__HIDDEN int vsched__advance_generation(vsched *s, vsched__file *f,
                                              vsched__pass *p);
/* Replace f by a successor object (new incarnation, generation 0) because
 * the loader now classifies it as `kind`; returns the successor. */
VSCHED__HIDDEN vsched__file *vsched__rehome(vsched *s, vsched__file *f,
                                            const char *kind,
                                            vsched__pass *p);
/* Graveyard: a completion of an earlier epoch came back. */
VSCHED__HIDDEN void vsched__grave_task_returned(vsched *s);

/* ---- complete.c: completion integration (lock held) --------------------- */
VSCHED__HIDDEN void vsched__complete(vsched *s, vsched__task *t,
                                     vsched__pass *p);
VSCHED__HIDDEN void vsched__break_cycles(vsched *s, vsched__pass *p);

/* ---- driver.c ----------------------------------------------------------- */
VSCHED__HIDDEN void *vsched__driver_main(void *arg);
VSCHED__HIDDEN void vsched__driver_teardown(vsched *s);
/* Push an item; on the driver thread a full inbox is drained (processed
 * inline) first, so the driver never parks on its own inbox. */
VSCHED__HIDDEN int vsched__submit_item(vsched *s, vsched__item it);
/* Dispatch ready work (lock held). */
VSCHED__HIDDEN void vsched__dispatch(vsched *s);
/* 1 when the calling thread is s's driver. */
VSCHED__HIDDEN int vsched__on_driver(const vsched *s);
/* A CPU worker waiting on h: run ready CPU work inline until h is done. */
VSCHED__HIDDEN void vsched__pump_until(vsched *s, vsched_handle *h);

/* ---- stages.c: task bodies ---------------------------------------------- */
VSCHED__HIDDEN void vsched__task_run(void *arg);
/* Run a task's body on the calling thread, without delivering it. */
VSCHED__HIDDEN void vsched__task_execute(vsched__task *t);
VSCHED__HIDDEN void vsched__task_free(vsched__task *t);
VSCHED__HIDDEN void vsched__task_retire(vsched *s);

/* ---- sched.c ------------------------------------------------------------ */
VSCHED__HIDDEN void vsched__handle_signal(vsched_handle *h);
VSCHED__HIDDEN void vsched__handle_unref(vsched_handle *h);

/* ---- ctx.c -------------------------------------------------------------- */
VSCHED__HIDDEN void vsched__ctx_init(vsched_ctx *ctx, vsched__task *t);
VSCHED__HIDDEN vsched_diag *vsched__diags_copy(const vsched_diag *d,
                                               size_t n);
VSCHED__HIDDEN void vsched__diags_free(vsched_diag *d, size_t n);

/* ---- pool.c ------------------------------------------------------------- */
VSCHED__HIDDEN size_t vsched__pool_capacity(const vsched_pool *p);
/* Run one task queued on p on the calling thread; 0 when none is queued.
 * For a worker of p that must wait: it drains its own pool meanwhile. */
VSCHED__HIDDEN int vsched__pool_run_one(vsched_pool *p);

/* ---- test hooks (tests link the core objects directly) ------------------ */
/* Set name's generation (to test exhaustion). VSCHED_ENOENT if untracked. */
VSCHED__HIDDEN int vsched__test_set_generation(vsched *s, const char *name,
                                               uint64_t generation);

/* 1 when the source directory holds a PRESENT version of name with
 * exactly this identity and hash (nothing reclaimed in between). */
VSCHED__HIDDEN int vsched__test_published(vsched *s, const char *name,
                                          uint64_t incarnation,
                                          uint64_t generation,
                                          uint64_t content_hash);
/* Pairs of PRESENT versions published for one (name, incarnation,
 * generation): a generation's Source is integrated at most once. */
VSCHED__HIDDEN size_t vsched__test_conflicts(vsched *s);

#endif
