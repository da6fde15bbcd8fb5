/*
 * internal.h -- the scheduler object, what travels between its threads,
 * and who calls what across libvsched's modules.
 *
 * Threads of a scheduler:
 *   - callers: bind requests to file lifetimes and push them to the inbox,
 *     wait on handles, call invalidate/remove/reset/cancel (which take the
 *     scheduler lock directly) and submit sub-DAGs (likewise);
 *   - the driver: the inbox's consumer; admits requests and batches, and
 *     re-dispatches when a pool refused work (its idle re-pump deadline);
 *   - runners (runner.c): pool tasks that take ready work, run it unlocked
 *     and integrate its completion themselves, then take the next -- one
 *     hold of the scheduler lock per task, no round trip through a queue;
 *   - a pool worker that blocks inside a task settles its batch and is
 *     replaced by a stand-in thread of its pool while it waits
 *     (vsched__block_begin, runner.c and pool.c);
 *   - observers and join callbacks run after a critical section, unlocked,
 *     on whichever of these threads ended it (pass.c).
 *
 * Lock ranks (take in increasing order, never the reverse):
 *   0. vsched.observer_lock  one observer call at a time; held around the
 *                            call, which may take the scheduler lock
 *                            (vsched_cancel from an observer)
 *   1. vsched.lock           the scheduler lock: the graph, files, facts
 *                            index, handles' results before they are done,
 *                            the job graph's state (dag.h), the artifact
 *                            store, the runner counts; vsched.dag.changed
 *                            is a condition variable on it, not a lock
 *   2. root.lock             the MVCC history (root.c); taken inside 1 by
 *                            publishers and by a new file object (the
 *                            name it keeps), alone by capture/lookup
 *   3. vsched.serial_*       serialise calls into a non-thread-safe plugin
 *                            (held around one plugin call, never with 1)
 *   4. inbox.lock            the inbox ring (never held while taking 1)
 *   5. pool locks            private to pool.c; leaves taken inside 1 by
 *                            vsched_pool_try_submit
 *   6. park buckets          park.c; leaves
 * Every acquisition of the scheduler lock goes through vsched__lock /
 * vsched__unlock, which also hand the snapshot frees requested under it to
 * the unlocking thread (no plugin call ever runs under it). A runner that
 * finds it taken tries again for a few microseconds before it sleeps on
 * it (sched.c: holds are shorter than a sleep and a wake).
 */
#ifndef VSCHED_LIB_INTERNAL_H
#define VSCHED_LIB_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsched/vsched.h>

#include "dag.h"
#include "files.h"
#include "graph.h"
#include "inbox.h"
#include "park.h"
#include "root.h"

#define VSCHED__HIDDEN __attribute__((visibility("hidden")))

/* Thread-locals read on every task (the lock holder, the current pool
 * worker): the initial-exec model reads them at a fixed offset instead of
 * calling __tls_get_addr, as a shared library's default model does. A
 * library loaded with dlopen takes them from glibc's static TLS surplus
 * (these are a few words). */
#define VSCHED__TLS _Thread_local __attribute__((tls_model("initial-exec")))

/* A cache line: what fields written by one thread and read by others
 * without a lock are aligned to, so that they do not share one. */
#define VSCHED__LINE 64

/* Why a node failed: its reason, the dependency that failed, and the
 * executor's diagnostics of its run. All owned. */
typedef struct vsched__outcome {
    char *message;
    char *failed_dep;
    vsched_diag *diags;
    size_t n_diags;
} vsched__outcome;

/* One run of a node's work. Built under the lock when a runner takes the
 * node (task.c), run unlocked (stages.c), integrated under the lock
 * (complete.c, gate.c). It holds a reference on its node, and reads only
 * what it copied or references (the file's name lives with the node). */
typedef struct vsched__task {
    vsched *s;
    vsched__node *node;
    struct vsched__task *next_free;
    uint8_t kind, phase;
    unsigned has_content : 1;
    unsigned ran : 1; /* the executor was called */
    uint64_t incarnation, generation;
    const char *name;    /* the file's or the job's */
    const char *profile; /* interned */
    char file_kind[32];  /* loader classification (Source) */
    uint64_t class_seq;  /* when it was made */

    /* Inputs. */
    char *bytes; /* Source: loaded or upserted bytes (owned) */
    size_t len;
    vsched__snap *snap; /* Analysis/Artifact: a reference */
    uint64_t content_hash;
    uint64_t analysis_hash;     /* Artifact: the file's, read at start */
    uint64_t consumed_analysis; /* Artifact: id of the Analysis it read */
    uint64_t unit_seq;          /* Analysis: its unit's release, or 0 */
    uint64_t *blocker_hashes;   /* Analysis: in extract_deps order */
    uint64_t *consumed;         /* Analysis: id of each blocker's Analysis */
    size_t n_blockers;
    uint64_t inline_hashes[4], inline_consumed[4];
    /* Analysis/Artifact (ABI 1.1 in->blockers): n_blk blockers' names and
     * snapshots -- Analysis: its direct blockers, aligned with
     * blocker_hashes; Artifact: direct or closure, as the executor asks
     * (vsched_executor_ops.artifact_blockers). blk[] and a reference on
     * each snapshot (blk_snaps[]) sit inline for up to 4, else in blk_mem
     * (owned); direct blockers' names point into the file's facts record
     * (blk_facts, a reference), the closure's into blk_mem. Read at start
     * under the lock (task.c), released in vsched__task_free. */
    vsched_blocker_in *blk;
    vsched__snap **blk_snaps;
    size_t n_blk;
    void *blk_mem;
    vsched__facts *blk_facts;
    vsched_blocker_in inline_blk[4];
    vsched__snap *inline_snaps[4];

    /* Outputs. */
    int status;
    char *message;        /* owned */
    void *new_snapshot;   /* Source: executor-owned */
    vsched_deps_out deps; /* Source: owned arrays and strings */
    /* Source, parsed: what integration publishes, built unlocked by the
     * stage (stages.c) -- the facts record (its names the directory's,
     * self references dropped) and the snapshot record. */
    vsched__facts *facts;
    vsched__snap *snap_new;
    uint64_t out_hash;
    char *artifact_path; /* owned */
    vsched_diag *diags;  /* owned, strings too */
    size_t n_diags;
    /* When and where it ran: set only with a task observer (its event). */
    uint64_t started_ns, finished_ns;
    int8_t pool_kind, worker;     /* the thread that ran it (pool.c) */
    int8_t step;                  /* its step, as it ran (runner.c) */
    uint64_t ran_ns;              /* how long it ran (runner.c) */
    struct vsched__needset *held; /* stage resources it holds (stage_res.c) */

    vsched_job_in *job; /* jobs: the op's input (owned) */
} vsched__task;

/* What few requests carry (a join callback, upsert bytes), apart from
 * their handle: allocated only for a request that has either. */
typedef struct vsched__req_extra {
    vsched_join_fn on_join; /* or NULL */
    void *join_user;
    struct vsched__content *content; /* upsert bytes (owned) until
                                        admitted, or NULL */
} vsched__req_extra;

static inline void vsched__req_extra_free(vsched__req_extra *x)
{
    if (x != NULL)
        free(x->content);
    free(x);
}

/* What a handle carries only until it is answered: the request as it was
 * bound, for admission and re-admission. */
typedef struct vsched__pending {
    vsched__file *file;      /* bound at submission (reference) */
    uint64_t epoch;          /* reset epoch at submission */
    uint64_t class_seq;      /* when its classification was made */
    uint64_t cost_ns;
    const char *kind;        /* loader classification (interned) */
    const char *profile_key; /* the profile, interned (slots key on it) */
    vsched_handle *next;     /* a node's waiter list; the readmit queue */
    struct vsched__req_extra *extra; /* what few requests carry, or NULL */
    int32_t priority;
    int16_t admit_status;    /* failure found before admission */
    uint8_t flags;           /* VSCHED_REQ_* still to apply */
    uint8_t join_fired;      /* its join callback was queued once */
} vsched__pending;

/* A request's handle. Its result's strings are the handle's own: name
 * (the canonical name, from submission), profile (a single handle's; a
 * batch's belong to the batch), and, once answered, message, failed_dep,
 * diags and artifact_path (copies); deps and blockers point into facts.
 *
 * Until it is answered, the part of the result only an answer writes
 * (incarnation onwards) holds the pending request instead (pend); the
 * answer takes it out first (vsched__handle_take, under the scheduler
 * lock; `done` says so once signalled). So a handle is the size of its answer plus a
 * few words, not of both. result.status, name, stage, profile, message
 * (a reason found at submission) and failed_stage are outside pend. */
#define VSCHED__PEND_AT offsetof(vsched_result, incarnation)
struct vsched_handle {
    union {
        vsched_result result; /* the answer; name/stage/profile are the
                                 request's */
        struct {
            unsigned char request_[VSCHED__PEND_AT];
            vsched__pending pend; /* until answered */
        };
    };
    vsched_batch *batch; /* owning batch, or NULL */
    atomic_int refs;     /* single handles: caller + scheduler +
                            a pending join callback */
    atomic_int done;     /* signalled: answered (so pend was taken) */
    /* Once answered, result.deps (when set) points into the facts record
     * the handle holds a reference on (vsched__facts_of_names). A single
     * handle owns result.name; a batch's handle does not (batch.names). */
};
_Static_assert(sizeof(vsched__pending) <=
                   sizeof(vsched_result) - VSCHED__PEND_AT,
               "the pending request fits where only an answer writes");

/* Take the pending request out of h to answer it (scheduler lock held):
 * the answer's part of the result is zeroed. Once per handle; the caller
 * frees the returned extra (vsched__req_extra_free). */
static inline vsched__pending vsched__handle_take(vsched_handle *h)
{
    vsched__pending pd;
    /* Through memcpy/memset: the bytes change type here. */
    memcpy(&pd, &h->pend, sizeof pd);
    memset((unsigned char *)&h->result + VSCHED__PEND_AT, 0,
           sizeof(vsched_result) - VSCHED__PEND_AT);
    return pd;
}

struct vsched_batch {
    vsched *s;
    size_t n;
    size_t block; /* bytes of its one allocation (pages.h), handles included */
    atomic_int refs;         /* caller + scheduler (until all answered) */
    atomic_size_t remaining; /* handles not yet answered */
    atomic_int done;
    vsched_handle *h; /* n handles, one allocation */
    /* A reference on the scheduler's name directory (root.h), taken at
     * creation: its handles' result names are the directory's copies,
     * valid while it lives, which is as long as the batch -- but for the
     * few the directory could not keep (a name the loader refused, or
     * exhaustion), which are the batch's own copies in `owned`. */
    struct vsched__root_dir *names;
    struct vsched__owned *owned;
};

/* A result name a batch owns (a list, freed with the batch). */
typedef struct vsched__owned {
    struct vsched__owned *next;
    char name[];
} vsched__owned;

/* One event for the observers: a stage that ended (holds a file
 * reference), or a task that ran (task: one allocation with its strings,
 * owned). */
typedef struct vsched__event {
    vsched_stage stage;
    vsched__file *file;
    const char *profile;
    int status;
    uint64_t started_ns, finished_ns;
    vsched_task_event *task;
} vsched__event;

/* A join callback to run after the unlock, copied from its request when
 * it was queued (the handle, held, gives the name and stage). */
typedef struct vsched__join {
    vsched_handle *h;
    vsched_join_fn fn;
    void *user;
} vsched__join;

/* What one critical section leaves for after the unlock (pass.c). */
typedef struct vsched__pass {
    vsched_handle **fin; /* handles to signal */
    size_t n_fin, cap_fin;
    struct vsched__join *joins; /* join callbacks to run (handles held) */
    size_t n_joins, cap_joins;
    vsched__event *events;
    size_t n_events, cap_events;
    vsched__snap *dead; /* snapshots to free through the executor */
    int wake_dag;       /* node waiters and blocked submitters */
    /* Tasks whose completion was integrated: their memory is released
     * after the unlock (spent), and they go back to the scheduler's free
     * list at this thread's next hold of the lock (clean), or are freed
     * with the pass. */
    struct vsched__task *spent, *clean;
    /* A clock reading that stands for "now" under this hold, or 0: a
     * runner sets it to the end of the runs it integrates, so the nodes
     * they finish are stamped without a clock read each. */
    uint64_t clock;
} vsched__pass;

/* The argument of a runner task: its scheduler and queue. */
typedef struct vsched__runner_arg {
    vsched *s;
    int q;
} vsched__runner_arg;

typedef struct vsched__strings {
    char **v;
    size_t cap, n;
    size_t last; /* the last name found or added */
} vsched__strings;

struct vsched {
    vsched_options opts;

    /* lock: the scheduler lock (rank 1); see the header comment. */
    pthread_mutex_t lock;
    vsched__graph graph;
    vsched__files files;
    vsched__filepool file_pool; /* the files' memory (files.h) */
    vsched__dependents dependents;
    vsched__strings strings; /* interned profile and kind names */
    vsched__dag dag;
    vsched__root_dir *root;                /* own lock, rank 2 */
    uint64_t epoch;                        /* advanced by each reset */
    vsched_handle *readmit, *readmit_tail; /* follow-latest re-admissions */
    vsched__snap *dead_snaps; /* freed by the next unlocking thread */
    vsched__snap *_Atomic serial_pending; /* frees for the serialised
                                             executor's next lock holder */
    vsched__task *task_free;              /* recycled task memory */
    size_t waiters;                       /* handles parked on nodes */
    size_t n_blockers;        /* blocker references in live facts */
    unsigned runners[2];      /* runner tasks submitted, not yet exited */
    unsigned busy[2];         /* of which running a task (unlocked) */
    unsigned runner_limit[2]; /* at most this many (the pools' threads) */
    unsigned blocked[2];      /* runners whose task blocks (runner.c):
                                 each raises the limit by one */
    /* Short work one runner at a time (runner.c, defer_runner): batches
     * integrated and runners ended, per queue; the count when a second
     * runner was last held back, and whether one is being held back. */
    uint64_t progress[2];
    uint64_t defer_progress[2];
    unsigned defer_armed[2];
    unsigned in_repump : 1; /* the driver's re-pump is kicking */
    /* Read-ahead: Sources loaded and waiting (READY, holding their task
     * and bytes) to be parsed on the CPU pool. Raised when a load
     * completes (complete.c); lowered when a runner takes one to parse
     * (runner.c) or the node ends first (outcome.c's finish): the only
     * three places a loaded Source's task changes hands. runner.c stops
     * taking loads at `readahead` (vsched__io_gated). */
    size_t loaded_waiting;
    size_t readahead;
    /* The I/O runners stopped at the window (not for want of loads): a
     * new one starts only once it drained to half (runner.c). */
    unsigned io_held : 1;
    /* How long tasks of each step (runner.c: load, parse, Analysis,
     * Artifact, job) run: a moving average in nanoseconds, which decides
     * whether runners take them in batches (runner.c). */
    uint64_t step_ns[5];
    vsched__runner_arg runner_args[2];
    atomic_int repump; /* a pool refused work: the driver retries */
    /* vsched_cancel calls so far: advanced (and cancel_reason replaced)
     * under the scheduler lock, read without it when an item is
     * submitted. An item admitted with an older epoch was submitted
     * before a cancel and is cancelled on admission (driver.c). */
    _Atomic uint64_t cancel_epoch;
    char *cancel_reason;   /* the last cancel's reason; scheduler lock */
    unsigned node_waiters; /* threads waiting on dag.changed
                                  (vsched_node_wait, blocked submitters) */
    /* Threads that may still touch this scheduler without being its
     * callers: runners submitted to a pool (from kick until their last
     * instruction), node waiters, blocked submitters.
     * Each one's LAST action is the decrement, so teardown frees nothing
     * until it reads zero. */
    atomic_int inside;
    atomic_size_t n_retired_files; /* retired objects not yet freed */

    vsched__inbox inbox; /* own lock, rank 4 */
    pthread_t driver;
    int driver_started;
    unsigned pager_hold; /* vsched__pager_hold's, released at destroy
                            (0: not held) */

    /* serial_*: taken around each plugin call when the plugin is not
     * thread-safe (rank 3, leaf apart from plugin code). */
    pthread_mutex_t serial_loader;
    pthread_mutex_t serial_executor;
    pthread_mutex_t observer_lock; /* rank 0 */

    /* Teardown began: written once, read without the lock by every runner
     * between two tasks. On a cache line of its own (the scheduler is
     * allocated VSCHED__LINE-aligned): next to the counters below, each
     * read fetched the line back from the core that last counted. */
    _Alignas(VSCHED__LINE) atomic_int stopping;
    /* Counted by submitters without the lock. */
    _Alignas(VSCHED__LINE) atomic_uint_fast64_t class_seq;
    atomic_uint_fast64_t submit_count;
    atomic_uint_fast64_t batch_submissions;
    /* Counted under the scheduler lock only (vsched__count), read by
     * vsched_stats without it. */
    _Alignas(VSCHED__LINE) atomic_uint_fast64_t dedup_joins;
    atomic_uint_fast64_t stale_refusals;
    atomic_uint_fast64_t stage_runs[3];
    atomic_uint_fast64_t stage_failures[3];
};

/* Lock held: one more in a statistic that only the scheduler lock's
 * holder writes. A relaxed load and store, not a locked read-modify-write:
 * the lock orders the writers, and a reader without it sees some recent
 * value whole. */
static inline void vsched__count(atomic_uint_fast64_t *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* ---- sched.c: the lock, handles ----------------------------------------- */
VSCHED__HIDDEN void vsched__lock(vsched *s);
/* Unlock; snapshot frees requested under the lock go to p (or are run
 * here when p is NULL). */
VSCHED__HIDDEN void vsched__unlock(vsched *s, vsched__pass *p);
/* 1 when the calling thread holds s's lock. */
VSCHED__HIDDEN int vsched__holds_lock(const vsched *s);
/* Wait on c with s's lock held (10 ms at most when timed). */
VSCHED__HIDDEN void vsched__cond_wait(pthread_cond_t *c, vsched *s, int timed);
/* Answer h: wake its waiter and drop the scheduler's reference. */
VSCHED__HIDDEN void vsched__handle_signal(vsched_handle *h);
VSCHED__HIDDEN void vsched__handle_hold(vsched_handle *h);
VSCHED__HIDDEN void vsched__handle_unref(vsched_handle *h);
VSCHED__HIDDEN const char *vsched__intern(vsched *s, const char *str);

/* ---- pass.c: after-unlock work ------------------------------------------ */
VSCHED__HIDDEN void vsched__pass_fin(vsched__pass *p, vsched_handle *h);
VSCHED__HIDDEN void vsched__pass_join(vsched__pass *p, vsched_handle *h);
VSCHED__HIDDEN void vsched__pass_event(vsched *s, vsched__pass *p,
                                       const vsched__node *n);
/* Queue a task event (ownership passes in). */
VSCHED__HIDDEN void vsched__pass_task_event(vsched__pass *p,
                                            vsched_task_event *ev);
/* Deliver events, signal handles, run join callbacks, free snapshots;
 * then empty p. Call with no scheduler lock held. */
VSCHED__HIDDEN void vsched__pass_run(vsched *s, vsched__pass *p);
VSCHED__HIDDEN void vsched__pass_free(vsched__pass *p);
/* Unlock, run p, free it: the end of most critical sections. */
VSCHED__HIDDEN void vsched__unlock_run(vsched *s, vsched__pass *p);

/* ---- outcome.c: terminal transitions (lock held) ------------------------ */
VSCHED__HIDDEN vsched_stage vsched__stage_of(const vsched__node *n);
VSCHED__HIDDEN void vsched__outcome_free(vsched__outcome *o);
/* Fill h's result from n's end and queue its signal. */
VSCHED__HIDDEN void vsched__handle_finish(vsched *s, vsched_handle *h,
                                          vsched__node *n, vsched__pass *p);
/* Answer h without a node: status and message (copied). */
VSCHED__HIDDEN void vsched__handle_refuse(vsched *s, vsched_handle *h,
                                          int status, const char *message,
                                          vsched__pass *p);
VSCHED__HIDDEN void vsched__waiter_add(vsched *s, vsched__node *n,
                                       vsched_handle *h, vsched__pass *p);
/* n finished DONE: answer its waiters, release its downstream. */
VSCHED__HIDDEN void vsched__node_done(vsched *s, vsched__node *n,
                                      vsched__pass *p);
/* End n (and, transitively, what waits on it) with a failure. Ownership
 * of message, failed_dep and diags passes in. origin: the vsched_stage
 * where the failure arose, or -1 for n's own. */
VSCHED__HIDDEN void vsched__node_fail(vsched *s, vsched__node *n, int status,
                                      char *message, char *failed_dep,
                                      vsched_diag *diags, size_t n_diags,
                                      int origin, vsched__pass *p);
/* End n silently: no event, no waiters (moved by the caller), no
 * downstream (detached by the caller); a replaced Analysis. */
VSCHED__HIDDEN void vsched__node_drop(vsched *s, vsched__node *n);
/* n (not terminal) will wait for up: an implicit or explicit edge, or at
 * once n's failure when up failed. Returns 0, or -1 when n failed. */
VSCHED__HIDDEN int vsched__wait_on(vsched *s, vsched__node *up,
                                   vsched__node *n, int explicit_edge,
                                   vsched__pass *p);

/* ---- upstream.c: what a node waits on ----------------------------------- */
/* The live object of f's name: f, or the table's (ensured) when retired. */
VSCHED__HIDDEN vsched__file *vsched__live(vsched *s, vsched__file *f);
/* Raise n's priority and weight (and its upstream's, transitively, while
 * not terminal), re-ordering the ready queues. */
VSCHED__HIDDEN void vsched__raise(vsched *s, vsched__node *n, int priority,
                                  uint32_t weight_us);
/* The current Analysis of blocker b's live object, or NULL. */
VSCHED__HIDDEN vsched__node *vsched__blocker_analysis(vsched *s,
                                                      vsched__file *b);
/* n, an Analysis, waits for up, the Analysis of one of its blockers: an
 * edge; or, when that closes a cycle, n's failure (VSCHED_ECYCLE, where
 * options.blocker_cycles_fail) or one unit of the cycle (unit.h).
 * Returns 0, or -1 when n failed. */
VSCHED__HIDDEN int vsched__link_blocker(vsched *s, vsched__node *up,
                                        vsched__node *n, vsched__pass *p);

/* ---- admit.c: admission (lock held) ------------------------------------- */
/* Bind h to the file object of its name at submission (lock held). */
VSCHED__HIDDEN int vsched__bind(vsched *s, vsched_handle *h);
VSCHED__HIDDEN void vsched__admit(vsched *s, vsched_handle *h,
                                  vsched__pass *p);
VSCHED__HIDDEN void vsched__admit_batch(vsched *s, vsched_batch *b,
                                        vsched__pass *p);
/* Admit the follow-latest waiters the last sweeps queued. */
VSCHED__HIDDEN void vsched__readmit_drain(vsched *s, vsched__pass *p);
VSCHED__HIDDEN void vsched__readmit_push(vsched *s, vsched_handle *h);
VSCHED__HIDDEN vsched__node *vsched__ensure_source(vsched *s, vsched__file *f,
                                                   int prio);
VSCHED__HIDDEN vsched__node *vsched__ensure_analysis(vsched *s,
                                                     vsched__file *f, int prio,
                                                     vsched__pass *p);
/* The same, for an Analysis about to be linked as another's blocker (a new
 * node is ordered first, upstream.c). */
VSCHED__HIDDEN vsched__node *vsched__ensure_blocker_analysis(vsched *s,
                                                             vsched__file *f,
                                                             int prio,
                                                             vsched__pass *p);
VSCHED__HIDDEN vsched__node *vsched__ensure_artifact(vsched *s,
                                                     vsched__file *f,
                                                     const char *profile,
                                                     int prio,
                                                     vsched__pass *p);
/* n, an Analysis of an integrated file, waits for each blocker's current
 * Analysis (ensured; vsched__link_blocker). */
VSCHED__HIDDEN void vsched__gate_on_blockers(vsched *s, vsched__node *n,
                                             vsched__pass *p);

/* ---- supersede.c: generations and retirement (lock held) ---------------- */
/* Advance f's generation and sweep its older work. VSCHED_EEXHAUSTED when
 * the counter cannot advance (nothing changes then). */
VSCHED__HIDDEN int vsched__advance_generation(vsched *s, vsched__file *f,
                                              vsched__pass *p);
/* Replace f by a successor object (new incarnation, generation 0, same
 * lifetime) classified `kind`; returns the successor. */
VSCHED__HIDDEN vsched__file *vsched__rehome(vsched *s, vsched__file *f,
                                            const char *kind,
                                            uint64_t class_seq,
                                            vsched__pass *p);
/* Analysis results built on f's old content are stale: drop or re-gate
 * them, transitively. f_done: f's old Analysis had finished DONE. */
VSCHED__HIDDEN void vsched__invalidate_dependents(vsched *s, vsched__file *f,
                                                  int f_done, vsched__pass *p);
/* Replace m, a doomed Analysis (unit.h), by a fresh one of its file --
 * same generation, its waiters and dependents moved over -- gated anew. */
VSCHED__HIDDEN void vsched__replace_analysis(vsched *s, vsched__node *m,
                                             vsched__pass *p);
/* End every node of the scheduler with status (teardown: SHUTDOWN). */
VSCHED__HIDDEN void vsched__retire_all(vsched *s, int status,
                                       const char *reason, vsched__pass *p);

/* ---- complete.c: a finished task (lock held) ---------------------------- */
VSCHED__HIDDEN void vsched__complete(vsched *s, vsched__task *t,
                                     vsched__pass *p);
/* Are the inputs n would consume (or t consumed) still the current ones?
 * If not, n is re-gated on them and 0 is returned. */
VSCHED__HIDDEN int vsched__inputs_current(vsched *s, vsched__node *n,
                                          const vsched__task *t,
                                          vsched__pass *p);

/* ---- runner.c: taking and running ready work ---------------------------- */
/* Start runners for ready work (lock held). */
VSCHED__HIDDEN void vsched__kick(vsched *s);
/* Whether the I/O queue holds back (read-ahead full): s->readahead
 * loaded Sources wait to be parsed, the CPU queue has ready work, and
 * the best load is no more urgent than the best CPU work. */
VSCHED__HIDDEN int vsched__io_gated(const vsched *s);
/* A loaded Source left the read-ahead (taken to parse, or ended); starts
 * the loads it held back. */
VSCHED__HIDDEN void vsched__loaded_taken(vsched *s);
/* A blocking wait by the calling thread (a stage or job waiting on a
 * handle, a node, or room in the ready queue), no lock held. On a pool
 * worker, begin settles its runner batch -- integrates what the batch
 * ran, hands what it has not started to the pool -- and has the pool
 * start a stand-in, so the wait is never for work its own thread holds
 * and never takes a thread from its pool; end undoes it. Elsewhere both
 * are no-ops. */
typedef struct vsched__block {
    vsched_pool *pool; /* the worker's pool, or NULL: nothing to undo */
    struct vsched__runner_batch *rb;
    unsigned flags; /* what vsched__pool_block_begin returned */
} vsched__block;
/* Reads only the calling thread's state and its own runner's scheduler:
 * never the scheduler of the handle waited for, which vsched_destroy may
 * free as soon as the handle is answered. */
VSCHED__HIDDEN void vsched__block_begin(vsched__block *b);
/* The same from under s's lock, which it releases meanwhile: the caller
 * re-checks what it waits for. */
VSCHED__HIDDEN void vsched__block_begin_locked(vsched__block *b, vsched *s);
/* 1 while the pool could start no stand-in (it has just retried): the
 * caller waits with a timeout (10 ms) and asks again. */
VSCHED__HIDDEN int vsched__block_pending(vsched__block *b);
/* Park until *flag (vsched__park_until), retrying the stand-in while the
 * pool could start none. */
VSCHED__HIDDEN void vsched__block_wait(vsched__block *b, const void *addr,
                                       const atomic_int *flag);
VSCHED__HIDDEN void vsched__block_end(vsched__block *b);

/* ---- task.c: task memory and inputs (lock held) ------------------------- */
/* The task of a file-stage node starting now (inputs read here). */
VSCHED__HIDDEN vsched__task *vsched__task_for(vsched *s, vsched__node *n);
VSCHED__HIDDEN void vsched__task_free(vsched *s, vsched__task *t);
/* The same for a completed task, in two halves: its node reference now
 * (lock held), the rest after the unlock (vsched__pass_run scrubs p's
 * spent tasks); vsched__tasks_recycle (lock held) returns the scrubbed
 * ones to the free list. */
VSCHED__HIDDEN void vsched__task_retire(vsched *s, vsched__task *t,
                                        vsched__pass *p);
VSCHED__HIDDEN void vsched__tasks_scrub(vsched *s, vsched__pass *p);
VSCHED__HIDDEN void vsched__tasks_recycle(vsched *s, vsched__pass *p);

/* ---- stages.c: task bodies (no lock) ------------------------------------ */
VSCHED__HIDDEN void vsched__task_execute(vsched__task *t);

/* ---- driver.c ----------------------------------------------------------- */
VSCHED__HIDDEN void *vsched__driver_main(void *arg);
/* Push an item; on the driver thread a full inbox is drained (processed
 * inline) first, so the driver never parks on its own inbox. */
VSCHED__HIDDEN int vsched__submit_item(vsched *s, vsched__item it);
VSCHED__HIDDEN int vsched__on_driver(const vsched *s);
/* Ask the driver for a re-pump soon (a pool refused work). */
VSCHED__HIDDEN void vsched__driver_repump(vsched *s);
/* Admit what the inbox holds, on this thread (lock held): a runner does
 * it before integrating a completion, so submission order is kept. */
VSCHED__HIDDEN void vsched__inbox_absorb(vsched *s, vsched__pass *p);

/* ---- ctx.c -------------------------------------------------------------- */
VSCHED__HIDDEN void vsched__ctx_init(vsched_ctx *ctx, vsched__task *t);
VSCHED__HIDDEN vsched_diag *vsched__diags_copy(const vsched_diag *d, size_t n);
VSCHED__HIDDEN void vsched__diags_free(vsched_diag *d, size_t n);
/* Canonical name through the loader; *out is malloc'd on VSCHED_OK. */
VSCHED__HIDDEN int vsched__canonical_name(vsched *s, const char *name,
                                          char **out);

/* ---- pool.c ------------------------------------------------------------- */
VSCHED__HIDDEN size_t vsched__pool_capacity(const vsched_pool *p);
/* 1 when the calling thread is a worker of p. */
VSCHED__HIDDEN int vsched__pool_is_current(const vsched_pool *p);
/* The pool whose worker the calling thread is, or NULL. */
VSCHED__HIDDEN vsched_pool *vsched__pool_current(void);
/* Work handed on to the pool outside its transport (intrusive: the job's
 * memory is the caller's until fn(job) runs). */
typedef struct vsched__pool_job {
    void (*fn)(struct vsched__pool_job *job);
    struct vsched__pool_job *next;
} vsched__pool_job;
/* Queue j ahead of the transport's tasks; never refused. */
VSCHED__HIDDEN void vsched__pool_push_urgent(vsched_pool *p,
                                             vsched__pool_job *j);
/* The calling worker of p is about to block: a stand-in thread keeps the
 * pool's workers able to run at its thread count, and a ring task's
 * transport slot is lent to the queue. Returns VSCHED__POOL_STANDIN
 * unless no thread could be started (retry with vsched__pool_block_retry
 * while blocked), with VSCHED__POOL_LENT when a slot was lent. Pair each
 * call with vsched__pool_block_end, given what it returned. */
#define VSCHED__POOL_STANDIN 1u
#define VSCHED__POOL_LENT 2u
VSCHED__HIDDEN unsigned vsched__pool_block_begin(vsched_pool *p);
VSCHED__HIDDEN int vsched__pool_block_retry(vsched_pool *p);
VSCHED__HIDDEN void vsched__pool_block_end(vsched_pool *p, unsigned flags);

/* ---- test hooks (tests link the core objects directly) ------------------ */
VSCHED__HIDDEN int vsched__test_set_generation(vsched *s, const char *name,
                                               uint64_t generation);
VSCHED__HIDDEN int vsched__test_published(vsched *s, const char *name,
                                          uint64_t incarnation,
                                          uint64_t generation,
                                          uint64_t content_hash);
VSCHED__HIDDEN size_t vsched__test_conflicts(vsched *s);
/* Print every unfinished node and what it waits on (takes the lock). */
VSCHED__HIDDEN void vsched__test_dump(vsched *s, FILE *out);
/* Edges that break the cycle search's order (printed); 0 when sound. */
VSCHED__HIDDEN size_t vsched__test_order_violations(vsched *s, FILE *out);
/* 1 once h has been answered (without waiting). */
VSCHED__HIDDEN int vsched__test_handle_done(vsched_handle *h);
/* Stand-ins of p that exited and are not joined yet (their stacks). */
VSCHED__HIDDEN unsigned vsched__test_pool_unjoined(vsched_pool *p);
/* At most `max` stand-ins alive at once in p (default 1024). */
VSCHED__HIDDEN void vsched__test_pool_standins(vsched_pool *p, unsigned max);
/* Nodes in the CPU (cpu != 0) or I/O ready queue (takes the lock). */
VSCHED__HIDDEN size_t vsched__test_ready(vsched *s, int cpu);

#endif
