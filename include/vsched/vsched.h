/*
 * vsched/vsched.h -- the embedding API of libvsched.
 *
 * libvsched schedules per-file work through three stages (Source, Analysis,
 * Artifact per profile) on a job graph, executing it with a stage executor
 * and a source loader that speak the plugin ABI of <vsched/plugin.h>.
 *
 * Conventions for every function declared here:
 *   - returns 0 (VSCHED_OK) or a negative vsched_status; vsched_strerror()
 *     names it;
 *   - pointers passed in are borrowed for the duration of the call unless a
 *     comment says the library keeps them;
 *   - objects are thread-safe unless a comment says otherwise.
 */
#ifndef VSCHED_VSCHED_H
#define VSCHED_VSCHED_H

#include <stddef.h>
#include <stdint.h>

#include <vsched/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define VSCHED_API __attribute__((visibility("default")))
#else
#define VSCHED_API
#endif

/* Library version. */
#define VSCHED_VERSION_STRING "0.1.0"
VSCHED_API const char *vsched_version(void);

/* Message of a status code ("queue full"); never NULL. */
VSCHED_API const char *vsched_strerror(int status);
/* Symbolic name of a status code ("VSCHED_EFULL"); never NULL. */
VSCHED_API const char *vsched_errname(int status);

/* ------------------------------------------------------------------------
 * Pools. The host creates them and hands them to the scheduler, which
 * keeps a reference but never owns their lifetime: destroy the scheduler
 * first, then its pools.
 */
typedef struct vsched_pool vsched_pool;

typedef enum vsched_pool_kind {
    VSCHED_POOL_CPU = 0, /* stage execution: parse, Analysis, Artifact */
    VSCHED_POOL_IO = 1   /* source loading only */
} vsched_pool_kind;

typedef void (*vsched_task_fn)(void *arg);

/* Create a pool of `threads` workers (>= 1) whose transport holds at most
 * `capacity` queued-or-running tasks (0 picks 4 x threads; smaller values
 * are raised to 4 x threads for CPU pools). */
VSCHED_API int vsched_pool_create(vsched_pool **out, vsched_pool_kind kind,
                                  unsigned threads, size_t capacity);
/* Queue `fn(arg)`. VSCHED_EFULL when the transport is saturated: nothing
 * was queued, the caller keeps `arg`. Never blocks. */
VSCHED_API int vsched_pool_try_submit(vsched_pool *pool, vsched_task_fn fn,
                                      void *arg);
/* Run every queued task, then join the workers and free the pool. */
VSCHED_API void vsched_pool_destroy(vsched_pool *pool);
VSCHED_API vsched_pool_kind vsched_pool_get_kind(const vsched_pool *pool);
VSCHED_API unsigned vsched_pool_threads(const vsched_pool *pool);
/* Kind of the pool whose worker is the calling thread, or -1 if the caller
 * is no pool worker. */
VSCHED_API int vsched_pool_current_kind(void);
/* Index (0 .. threads-1) of the calling thread within its pool, or -1 if
 * the caller is no pool worker: a stable lane for traces. While a worker
 * blocks inside a task (vsched_wait from a stage), a stand-in thread
 * runs the pool's work in its place, with the lowest index from
 * `threads` up that no other stand-in has. */
VSCHED_API int vsched_pool_current_worker(void);

/* ------------------------------------------------------------------------
 * The scheduler.
 */
typedef struct vsched vsched;

typedef enum vsched_stage {
    VSCHED_STAGE_SOURCE = 0,
    VSCHED_STAGE_ANALYSIS = 1,
    VSCHED_STAGE_ARTIFACT = 2
} vsched_stage;

/* Short lower-case name of a stage ("source"). */
VSCHED_API const char *vsched_stage_name(vsched_stage stage);

/* A loaded plugin instance in one role. The library keeps these pointers
 * until vsched_destroy(). When thread_safe is 0 the library serialises
 * every call into `inst`: a call that waits (vsched_wait) for work that
 * needs another call into the same instance then waits forever. */
typedef struct vsched_loader_binding {
    const vsched_loader_ops *ops;
    void *inst;
    int thread_safe;
} vsched_loader_binding;

typedef struct vsched_executor_binding {
    const vsched_executor_ops *ops;
    void *inst;
    int thread_safe;
} vsched_executor_binding;

/* What an observer hears: one stage of one file finished. */
typedef struct vsched_event {
    vsched_stage stage;
    const char *name;                 /* canonical source name */
    const char *profile;              /* Artifact only, else NULL */
    int status;                       /* 0 or negative vsched_status */
    uint64_t started_ns, finished_ns; /* monotonic */
} vsched_event;

/* What a task observer hears: one task ran -- a Source's load (I/O pool)
 * or parse, an Analysis or Artifact executor call, or a job -- with the
 * thread that ran it and when. */
typedef struct vsched_task_event {
    uint64_t node;      /* graph node id of the stage or job */
    vsched_stage stage; /* file stages (jobs: VSCHED_STAGE_ARTIFACT) */
    int is_job;
    const char *name;      /* canonical source name, or the job's name */
    const char *profile;   /* Artifact only, else NULL */
    const char *step;      /* "load", "parse", "analysis", "artifact",
                                  or the job's kind */
    vsched_pool_kind pool; /* the pool whose thread ran it */
    int worker;            /* vsched_pool_current_worker() of it */
    int status;            /* the task's own result (0 or negative) */
    int refused;           /* 1: its result was stale and refused */
    uint64_t started_ns, finished_ns; /* monotonic: the run itself */
} vsched_task_event;

/* Called like the observer below (unlocked, one call at a time, on the
 * thread that integrated the task), after each task returns and before
 * the events of the stages it ended. Strings valid for the call only. */
typedef void (*vsched_task_observer_fn)(void *user,
                                        const vsched_task_event *ev);

/* Called without any scheduler lock held, once per stage that ends (done,
 * failed, or cancelled), on the thread that ended it -- a pool worker that
 * ran the stage, the driver, or a caller of invalidate, remove, reset or
 * cancel -- one call at a time. A stage's event is delivered before the
 * waiters of that stage wake. It must return promptly; it may call
 * vsched_cancel and vsched_get_stats, never vsched_wait or a submit. The
 * event and its strings are valid for the call only. */
typedef void (*vsched_observer_fn)(void *user, const vsched_event *ev);

typedef struct vsched_options {
    size_t size;           /* sizeof(vsched_options) */
    vsched_pool *cpu_pool; /* required; stage execution */
    vsched_pool *io_pool;  /* required; source loading */
    vsched_loader_binding loader;
    vsched_executor_binding executor;
    size_t inbox_capacity;       /* 0 = 1024 */
    vsched_observer_fn observer; /* optional */
    void *observer_user;
    /* Job graph: bound of the ready queue of jobs (vsched_submit_dag);
     * 0 = 64. */
    size_t ready_capacity;
    /* Blocker cycles. 0 (the default): a cycle builds as one unit, as C
     * headers with include guards that include each other do -- every
     * member's Analysis waits for what the cycle waits on outside it,
     * folds one hash of all the members for each blocker inside it, and
     * all members finish together (vsched_result.unit_hash). 1: for a
     * language that forbids them, a cycle fails the file that closes it
     * (VSCHED_ECYCLE, the chain in the message) and what depends on it. */
    int blocker_cycles_fail;
    /* Optional: hears every task that ran (traces). */
    vsched_task_observer_fn task_observer;
    void *task_observer_user;
} vsched_options;

/* Create a scheduler and start its driver thread. */
VSCHED_API int vsched_create(vsched **out, const vsched_options *opts);
/* Stop the driver promptly, cancel what has not run, finish every waiter
 * (VSCHED_ESHUTDOWN, also requests still queued and work that stopped
 * because of the teardown), join, free. Pools are left to the caller. */
VSCHED_API void vsched_destroy(vsched *s);

/* One request: bring `name` to `stage` (for Artifact, in `profile`). */
#define VSCHED_REQ_FOLLOW_LATEST 0x1u /* re-admit on supersession */
#define VSCHED_REQ_CONTENT 0x2u       /* upsert: content replaces the source */

/* Called when a request joined an identical in-flight request's waiter
 * group instead of admitting new work -- at most once per request, also
 * when a follow-latest request is re-admitted. Runs after the scheduler
 * lock is released, on the thread that admitted it (the driver, or a pool
 * worker that admitted queued requests before integrating its work); it
 * may re-enter the scheduler (submit, invalidate), but not wait. */
typedef void (*vsched_join_fn)(void *user, const char *name,
                               vsched_stage stage);

typedef struct vsched_request {
    const char *name; /* source name; copied */
    vsched_stage stage;
    const char *profile; /* Artifact only; copied */
    int priority;        /* higher runs first; 0 is normal */
    unsigned flags;      /* VSCHED_REQ_* */
    /* VSCHED_REQ_CONTENT: new content of the source (copied). Admission
     * advances the file's generation and supersedes older work in the same
     * critical section; Source then parses this content instead of
     * loading. */
    const char *content;
    size_t content_len;
    vsched_join_fn on_join; /* optional */
    void *join_user;
    /* Expected duration of the requested stage in nanoseconds (e.g. its
     * last run's, from the host's records), or 0 when unknown. Ready work
     * of equal priority runs longest remaining chain first: a node's weight
     * is the largest expected duration of the work downstream of it,
     * inherited through its upstream like priority. */
    uint64_t cost_ns;
} vsched_request;

typedef struct vsched_handle vsched_handle;
typedef struct vsched_batch vsched_batch;

/* A diagnostic reported by a plugin while serving a request. */
typedef struct vsched_diag {
    vsched_severity severity;
    const char *file; /* may be NULL */
    unsigned line;
    const char *message;
} vsched_diag;

/* The outcome of one request; owned by its handle, valid until the handle
 * is released. */
typedef struct vsched_result {
    int status;                /* 0 or a negative vsched_status */
    const char *name;          /* canonical source name */
    vsched_stage stage;        /* the requested stage */
    const char *profile;       /* Artifact only */
    vsched_stage failed_stage; /* the stage that failed, when status != 0 */
    const char *failed_dep;    /* VSCHED_EDEPFAIL/ECYCLE: the dependency */
    const char *message;       /* one-line reason when status != 0 */
    uint64_t incarnation;      /* identity of the file node that served it */
    uint64_t generation;
    uint64_t content_hash;
    uint64_t analysis_hash;
    const char *artifact_path; /* Artifact only */
    const char *const *deps;   /* forward deps found by Source, canonical */
    size_t n_deps;
    const char *const *blockers; /* blockers found by Source, canonical */
    size_t n_blockers;
    const vsched_diag *diags; /* diagnostics of the failing or final stage */
    size_t n_diags;
    uint64_t started_ns, finished_ns; /* monotonic; stage work of this file */
    /* The hash of the blocker cycle whose unit built this file's Analysis
     * (folded for each blocker inside the cycle), or 0. */
    uint64_t unit_hash;
} vsched_result;

/* Submit one request; *out receives a handle the caller releases with
 * vsched_handle_release (after or instead of waiting). The request binds
 * to the submission lifetime of its file: if the file is removed, or the
 * scheduler reset, before the request is admitted, it is answered
 * VSCHED_ESHUTDOWN and creates nothing. */
VSCHED_API int vsched_submit_request(vsched *s, const vsched_request *req,
                                     vsched_handle **out);
/* Block until the request finishes; *res is owned by the handle. It may
 * be called from inside a stage or job: the calling pool worker does not
 * hold its pool meanwhile (a stand-in thread takes its place), so only a
 * cycle of waits can hang. */
VSCHED_API int vsched_wait(vsched_handle *h, const vsched_result **res);
VSCHED_API void vsched_handle_release(vsched_handle *h);

/* Submit n requests as n inbox items (non-atomic: an observer may see part
 * of the batch admitted). */
VSCHED_API int vsched_submit_batch(vsched *s, const vsched_request *reqs,
                                   size_t n, vsched_batch **out);
/* Submit n requests as ONE inbox item admitted in one critical section. */
VSCHED_API int vsched_submit_batch_atomic(vsched *s,
                                          const vsched_request *reqs, size_t n,
                                          vsched_batch **out);
/* Wait for every request of a batch; res[i] (owned by the batch) is the
 * result of reqs[i]. Never returns a partial set. */
VSCHED_API int vsched_wait_batch(vsched_batch *b, const vsched_result **res);
VSCHED_API size_t vsched_batch_size(const vsched_batch *b);
/* Drop the caller's reference. A batch may be released before it is
 * waited for, even before it is admitted: the scheduler keeps its own
 * reference until every request of it is answered. */
VSCHED_API void vsched_batch_release(vsched_batch *b);

/* Stop: every stage not yet running finishes with VSCHED_ECANCELLED
 * (`reason` becomes its message; copied), running stages are asked to stop
 * (ctx->is_cancelled), and every waiter is answered. This covers every
 * request and batch submitted before the call, admitted or not: one still
 * in the inbox is cancelled when it is admitted. What is submitted after
 * the call returns runs as usual. Takes the scheduler lock; callable from
 * any thread, including an observer. */
VSCHED_API void vsched_cancel(vsched *s, const char *reason);

/* ------------------------------------------------------------------------
 * Supersession. Each of these advances the file's generation (or retires
 * its node object) and sweeps its older work in ONE critical section:
 * older stage work is cancelled, a late completion of it publishes nothing
 * (counted in stale_completion_refusals), and its waiters finish with
 * VSCHED_ESUPERSEDED -- or, when they asked for VSCHED_REQ_FOLLOW_LATEST,
 * are re-admitted at the new generation. No waiter is ever stranded.
 * Work of other files that waited on the swept work is re-gated on the new
 * generation. What was DERIVED from the old content is not reused either:
 * every Analysis that folded it (transitively, through blockers) and its
 * file's Artifacts are forgotten if finished, gated again if released to
 * run, and refused when they return if running -- a later demand
 * recomputes them, and no result built on a dead input is published.
 * Generations use checked arithmetic: VSCHED_EEXHAUSTED when a node's
 * counter cannot advance (it never wraps).
 */

/* Content of `name` changed on disk: reload it on the next demand.
 * VSCHED_ENOENT when the scheduler does not track `name`. */
VSCHED_API int vsched_invalidate(vsched *s, const char *name);
/* Drop upserted content of `name` (the loader's copy counts again) and
 * advance its generation. VSCHED_ENOENT when untracked. */
VSCHED_API int vsched_close_file(vsched *s, const char *name);
/* Retire `name`'s node object: waiters finish with VSCHED_ESHUTDOWN, the
 * source root records it absent, and a later request creates a successor
 * object (new incarnation, generation 0). VSCHED_ENOENT when untracked. */
VSCHED_API int vsched_remove(vsched *s, const char *name);
/* Retire every file node and drop the whole graph: all occupancy returns
 * to zero, every waiter is answered (VSCHED_ESHUTDOWN), and requests still
 * queued are answered so when admitted. Returns promptly; work still
 * running finishes unseen, and keeps the resource units and permits it
 * took until it returns. */
VSCHED_API void vsched_reset(vsched *s);

/* ------------------------------------------------------------------------
 * MVCC source root: what the scheduler knew of every source, as of one
 * moment. Capture is O(1); a root is a retention lease.
 */
typedef struct vsched_root vsched_root;

typedef enum vsched_source_state {
    VSCHED_SOURCE_UNKNOWN = 0, /* never published as of the root */
    VSCHED_SOURCE_ABSENT = 1,  /* removed */
    VSCHED_SOURCE_PENDING = 2, /* tracked; content of this generation not
                                  yet loaded */
    VSCHED_SOURCE_PRESENT = 3  /* loaded: content_hash is valid */
} vsched_source_state;

typedef struct vsched_source_info {
    vsched_source_state state;
    uint64_t incarnation;
    uint64_t generation;
    uint64_t content_hash;
} vsched_source_info;

VSCHED_API int vsched_capture_source_root(vsched *s, vsched_root **out);
/* As of the root's epoch. Never reads later publications. */
VSCHED_API int vsched_root_lookup(const vsched_root *root, const char *name,
                                  vsched_source_info *out);
VSCHED_API uint64_t vsched_root_epoch(const vsched_root *root);
VSCHED_API void vsched_root_release(vsched_root *root);
/* Free every version no live root (nor the present) can see; returns how
 * many were freed. */
VSCHED_API size_t vsched_reclaim_source_versions(vsched *s);

/* ------------------------------------------------------------------------
 * Witness-fenced artifacts. A witness names one live file node object at
 * one generation; it comes only with a source snapshot.
 */
typedef struct vsched_witness {
    uint64_t incarnation;
    uint64_t generation;
    char name[256];
} vsched_witness;

/* The witness of `name`'s current integrated Source, and its content
 * hash. VSCHED_ENOENT when untracked or not loaded at this generation. */
VSCHED_API int vsched_get_witnessed_source(vsched *s, const char *name,
                                           vsched_witness *w,
                                           uint64_t *content_hash);
/* Publish `data` (copied) as `profile`'s artifact of the witnessed file,
 * only into the same live node object at the witnessed generation;
 * otherwise VSCHED_ESTALE and nothing changes. */
VSCHED_API int vsched_commit_artifact(vsched *s, const vsched_witness *w,
                                      const char *profile, const void *data,
                                      size_t len);
/* Evict `profile`'s committed artifact of the witnessed object when it is
 * not newer than the witness's generation. VSCHED_ESTALE for another
 * object; VSCHED_ENOENT when there is nothing to evict. */
VSCHED_API int vsched_remove_artifact_not_newer_than(vsched *s,
                                                     const vsched_witness *w,
                                                     const char *profile);
/* Copy of the committed artifact of `name`/`profile` (malloc'ed, caller
 * frees) and the generation it was committed at. VSCHED_ENOENT if none. */
VSCHED_API int vsched_get_artifact(vsched *s, const char *name,
                                   const char *profile, void **data,
                                   size_t *len, uint64_t *generation);

/* Counters; a snapshot, consistent with itself. */
typedef struct vsched_stats {
    uint64_t submit_count;      /* inbox submissions (a batch counts 1) */
    uint64_t batch_submissions; /* vsched_account_batch_submission calls */
    uint64_t dedup_joins;
    uint64_t stale_completion_refusals;
    uint64_t inbox_depth_max;
    uint64_t ready_depth_max;  /* most vsched_ready_queue_depth ever */
    uint64_t files;            /* live file nodes */
    uint64_t graph_nodes;      /* nodes in the graph: current stages
                                      of live files, unfinished jobs, and
                                      the recent finished jobs */
    uint64_t edges;            /* live dependency edges */
    uint64_t edges_capacity;   /* backing slots of the edge lists */
    uint64_t waiters;          /* parked request waiters */
    uint64_t waiters_capacity; /* backing slots of the waiter lists */
    uint64_t blockers;         /* recorded blocker references */
    uint64_t blockers_capacity;
    uint64_t source_versions; /* versions held by the source root */
    uint64_t live_roots;      /* captured roots not yet released */
    uint64_t retired_pending; /* retired file objects and nodes still
                                      held by in-flight work (freed when
                                      it returns) */
    uint64_t stage_runs[3];   /* executed Source/Analysis/Artifact */
    uint64_t stage_failures[3];
    uint64_t cycle_units; /* blocker cycles built as one unit
                                      (formed, merged ones included) */
} vsched_stats;

VSCHED_API void vsched_get_stats(vsched *s, vsched_stats *out);
/* Count one host batch submission (the coordinator calls it once per
 * non-empty batch); lock-free. */
VSCHED_API void vsched_account_batch_submission(vsched *s);

/* ------------------------------------------------------------------------
 * The job graph. One graph per scheduler: the file stages above are nodes
 * in it, and vsched_submit_dag adds generic jobs (run by the executor's
 * `job` operation) that may depend on them and on each other.
 *
 * A node id is opaque, non-zero and monotonic within a process run; it is
 * never reused (not even after vsched_reset). Nodes are reclaimed once
 * nothing can reach them, so an id stops resolving (VSCHED_ENOENT) after a
 * reset, once a file stage is superseded and its work is back, or once a
 * finished job has left the history of the newest 4096 finished jobs.
 */

/* When an edge from -> to is satisfied. */
typedef enum vsched_gate {
    /* `from` finished DONE. If it fails or is cancelled, `to` is cancelled
     * (VSCHED_ECANCELLED, a message naming the failure), and so on
     * transitively. */
    VSCHED_GATE_AFTER_SUCCESS = 0,
    /* `from` reached any terminal state. */
    VSCHED_GATE_AFTER_ANY = 1,
    /* `from` was admitted to the ready queue (its own gates fired); `to`
     * may then run beside it. If `from` ends without ever being admitted,
     * `to` is cancelled. */
    VSCHED_GATE_AFTER_ADMISSION = 2
} vsched_gate;

/* Short lower-case name of a gate ("after_success"). */
VSCHED_API const char *vsched_gate_name(vsched_gate gate);

/* The outcome of a submission attempt. */
typedef enum vsched_admission {
    VSCHED_ADMITTED = 0,      /* inserted; ids are valid */
    VSCHED_DEDUPE_JOINED = 1, /* the dedupe hook found a live flight; nothing
                                  was inserted; see `joiner` */
    VSCHED_BACKPRESSURED = 2  /* the ready queue is full; nothing changed */
} vsched_admission;

/* A node reference in a submission: the i-th node of this submission, the
 * id of a node already in the graph, or none (parent only). */
#define VSCHED_REF_NONE INT64_MIN
#define VSCHED_REF_LOCAL(i) ((int64_t)(i))
#define VSCHED_REF_ID(id) (-(int64_t)(id))

/* Per-call CPU concurrency semaphore: a handle attached to many nodes. A
 * permit is taken when such a node is dispatched and given back when it
 * ends (done, failed or cancelled), so at most `capacity` of them run at
 * once. Bound to the scheduler it was created for; reference counted
 * (nodes keep their own reference). */
typedef struct vsched_sem vsched_sem;
/* capacity >= 1, else VSCHED_EINVAL. */
VSCHED_API int vsched_sem_create(vsched *s, unsigned capacity,
                                 vsched_sem **out);
VSCHED_API void vsched_sem_release(vsched_sem *sem);
/* Permits held right now (takes the scheduler lock). */
VSCHED_API unsigned vsched_sem_in_use(vsched_sem *sem);

/* Cancellation token: a one-shot latch shared by the nodes it is attached
 * to. Bound to the scheduler it was created for, valid while that lives;
 * reference counted (nodes keep their own reference). */
typedef struct vsched_token vsched_token;
VSCHED_API int vsched_token_create(vsched *s, vsched_token **out);
VSCHED_API void vsched_token_release(vsched_token *tok);
/* Cancel every node carrying the token that is not yet complete, and
 * every node depending on one of them, transitively (whatever the gate):
 * queued nodes end VSCHED_ECANCELLED with `reason` (copied; NULL gives
 * "cancelled"), running ones are asked to stop (ctx->is_cancelled) and end
 * when their operation returns. Nodes submitted later with this token are
 * cancelled on insertion. Idempotent. Takes the scheduler lock. */
VSCHED_API void vsched_token_cancel(vsched_token *tok, const char *reason);
VSCHED_API int vsched_token_is_cancelled(const vsched_token *tok);

typedef enum vsched_spec_kind {
    VSCHED_SPEC_JOB = 0,     /* a job run by the executor's `job` op */
    VSCHED_SPEC_ARTIFACT = 1 /* the Artifact(name, profile) file stage:
                                 found or admitted, never a new kind of
                                 work; its id is the stage node's id */
} vsched_spec_kind;

typedef struct vsched_node_spec {
    vsched_spec_kind what;
    const char *kind;    /* JOB: job kind for the executor ("link") */
    const char *name;    /* JOB: job name; ARTIFACT: source name */
    const char *profile; /* JOB: handed to the op (may be NULL);
                             ARTIFACT: required */
    /* JOB: inputs handed to the op before the outputs of its
     * after-success upstream nodes (copied). */
    const char *const *inputs;
    size_t n_inputs;
    int priority; /* higher runs first; inherited by upstream */
    /* JOB: structural parent (a JOB), or VSCHED_REF_NONE. A local parent
     * must be named before its children. */
    int64_t parent;
    /* JOB: named resources taken all-or-nothing when the node starts
     * (copied; an unconfigured name has capacity 1). */
    const char *const *resources;
    size_t n_resources;
    vsched_sem *sem;     /* JOB: optional CPU concurrency semaphore */
    vsched_token *token; /* JOB: optional cancellation token */
    /* JOB: optional in-graph dedupe key: a live job with the same key (in
     * the graph or earlier in this submission) is reused -- its id comes
     * back and this spec's edges into it are dropped. */
    const char *dedupe_key;
} vsched_node_spec;

typedef struct vsched_edge_spec {
    int64_t from; /* a local reference or an existing id */
    int64_t to;   /* a local JOB reference */
    vsched_gate gate;
} vsched_edge_spec;

/* Caller-side pre-admission dedupe (singleflight over the caller's own
 * in-flight table). probe() returns 1 and sets *joiner when an equivalent
 * flight is live -- the submission then inserts nothing -- or 0 to
 * proceed. Called on the submitting thread, no scheduler lock held. */
typedef struct vsched_dedupe_hook {
    int (*probe)(void *user, const char *key, void **joiner);
    void *user;
} vsched_dedupe_hook;

/* The scheduler's dedupe identity of a request, as the key a hook is
 * probed with: "STAGE:PROFILE:CANONICAL" ("artifact:release:src/a.c";
 * PROFILE empty below Artifact). *key is malloc'ed (caller frees). The
 * name is resolved through the loader. */
VSCHED_API int vsched_request_key(vsched *s, const vsched_request *req,
                                  char **key);
/* vsched_submit_request with the caller's dedupe hook probed first, with
 * the request's key: when it finds a live flight, *admission is
 * VSCHED_DEDUPE_JOINED, *joiner is its joiner, *out is NULL and nothing is
 * submitted; else the request is submitted (VSCHED_ADMITTED). hook may be
 * NULL (the no-op hook). */
VSCHED_API int vsched_submit_request_hooked(
    vsched *s, const vsched_request *req, const vsched_dedupe_hook *hook,
    vsched_admission *admission, void **joiner, vsched_handle **out);

typedef struct vsched_dag {
    const vsched_node_spec *nodes;
    size_t n_nodes;
    const vsched_edge_spec *edges;
    size_t n_edges;
    const char *key;                /* identity probed through hook */
    const vsched_dedupe_hook *hook; /* NULL: the no-op hook */
    /* When the ready queue of jobs has no room: 1 waits for room, 0 answers
     * VSCHED_BACKPRESSURED. (Called from the driver thread -- an observer
     * or join callback -- or a pool worker, it never waits.) */
    int block;
} vsched_dag;

/* Insert a sub-DAG atomically: under one hold of the scheduler lock, so
 * no observer ever sees part of it. On VSCHED_ADMITTED ids[i] (caller
 * array of n_nodes) is the id of nodes[i]. Everything is validated before
 * anything changes: an unknown existing id (VSCHED_ENOENT), a bad local
 * reference, parent or gate (VSCHED_EINVAL), a cycle among the new nodes
 * (VSCHED_ECYCLE), or an ARTIFACT name the loader rejects insert nothing.
 * Room: the jobs in the ready queue (their gates fired, not yet started)
 * and the new jobs no edge holds back may not exceed ready_capacity --
 * unless the queue is empty, so a sub-DAG larger than the bound still
 * gets in; jobs waiting on their upstream take no room. Returns 0 with
 * *admission set, or a negative status. */
VSCHED_API int vsched_submit_dag(vsched *s, const vsched_dag *dag,
                                 uint64_t *ids, vsched_admission *admission,
                                 void **joiner);

/* Capacity of the named resource (created when absent). Lowering it below
 * what is held makes later acquisitions wait. A job that could only ever
 * get units held for subtrees that wait on it (a parent holds r for its
 * subtree, a child waits for the job, the job needs r) fails with
 * VSCHED_ECYCLE and a message naming the chain, instead of waiting
 * forever. */
VSCHED_API int vsched_set_resource_capacity(vsched *s, const char *name,
                                            unsigned capacity);
/* The named resources every task of `stage` in `profile` takes when it
 * starts and gives back when it returns -- e.g. "remote" for compiles
 * sent to other machines, so the CPU pool may be wider than this machine
 * while no more compiles run than the remote hosts take. Artifact only
 * (else VSCHED_EINVAL); profile NULL: every profile without an entry of
 * its own. The resources are the job graph's (created at capacity 1 when
 * absent; vsched_set_resource_capacity sizes them); a task takes them
 * all-or-nothing, waits READY while they are busy, and holds them for
 * its task only (never for a subtree). Replaces the previous entry; n 0
 * clears it. */
VSCHED_API int vsched_set_stage_resources(vsched *s, vsched_stage stage,
                                          const char *profile,
                                          const char *const *names, size_t n);

/* A resource's capacity, units in use now, and the most ever in use. */
typedef struct vsched_resource_stats {
    unsigned capacity, in_use, peak;
} vsched_resource_stats;
/* VSCHED_ENOENT when no job or stage ever named it. */
VSCHED_API int vsched_resource_info(vsched *s, const char *name,
                                    vsched_resource_stats *out);
/* The names of every resource (valid while s lives), up to cap of them
 * into names[]; returns how many there are. */
VSCHED_API size_t vsched_resource_names(vsched *s, const char **names,
                                        size_t cap);

/* Jobs in the ready queue: their gates fired, not yet started (waiting
 * for a worker, a permit or resource units). */
VSCHED_API size_t vsched_ready_queue_depth(vsched *s);

typedef enum vsched_node_state {
    VSCHED_NODE_PENDING = 0, /* gates not yet fired */
    VSCHED_NODE_READY = 1,   /* queued: waits for a worker, resource or
                                 permit */
    VSCHED_NODE_RUNNING = 2,
    VSCHED_NODE_DONE = 3,
    VSCHED_NODE_FAILED = 4,
    VSCHED_NODE_CANCELLED = 5
} vsched_node_state;

/* Short lower-case name of a node state ("running"). */
VSCHED_API const char *vsched_node_state_name(vsched_node_state st);

/* A node's state. Strings are owned by the info: vsched_node_info_clear. */
typedef struct vsched_node_info {
    uint64_t id;
    vsched_node_state state;
    int status;                       /* 0 or negative vsched_status */
    int priority;                     /* effective (inherited) priority */
    uint64_t started_ns, finished_ns; /* monotonic; 0 until then */
    char *name;                       /* job name or source name */
    char *message;                    /* reason when status != 0, else NULL */
    char *failed_dep;   /* the upstream failure that cancelled it */
    char *output;       /* produced path, or NULL */
    vsched_diag *diags; /* the executor's diagnostics of its run */
    size_t n_diags;
} vsched_node_info;

VSCHED_API int vsched_node_get(vsched *s, uint64_t id, vsched_node_info *out);
/* Block until the node is terminal, then fill *out. VSCHED_ENOENT when the
 * id does not resolve (or stops resolving: a reset); VSCHED_ESHUTDOWN when
 * vsched_destroy runs meanwhile (it answers every node waiter before it
 * frees anything). Not from an observer, a join callback or a pool
 * worker. */
VSCHED_API int vsched_node_wait(vsched *s, uint64_t id, vsched_node_info *out);
VSCHED_API void vsched_node_info_clear(vsched_node_info *info);

/* JSON projection of the whole graph (nodes with state, outcome, times,
 * priority, parent, resources, edges with gates) into *buf (malloc'ed,
 * caller frees), *len bytes without the NUL. Built under the scheduler
 * lock into memory; no I/O under the lock. */
VSCHED_API int vsched_graph_json(vsched *s, char **buf, size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* VSCHED_VSCHED_H */
