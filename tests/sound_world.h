/*
 * sound_world.h -- the fixture of the soundness suites (test_soundness.c,
 * test_churn.c): an in-memory loader, a recording executor with named
 * gates, jobs, and scheduler start/stop with every pool and option
 * chosen by the test.
 *
 * Gates: a stage of a file, or a job, can be held running. Keys are
 * "L:name" (load), "S:name" (parse), "A:name" (Analysis), "R:name"
 * (Artifact) and "J:name" (job). sw_arm(key) closes a gate; the stage then
 * enters it (sw_entered, sw_wait_entered) and waits until sw_open(key) or
 * until its ctx->is_cancelled. An unarmed key passes at once.
 *
 * The executor: Source parses "blocker NAME" lines (each also a dep) and
 * hashes the bytes (FNV-1a); Analysis folds the content hash with the
 * blocker hashes in order (h = h * FNV_PRIME ^ b); Artifact produces no
 * file; the `job` op fails for names starting "fail" and counts how many
 * jobs run at once per first resource-like prefix (sw_job_peak). Every
 * call that reached the executor is counted per stage (sw_calls).
 */
#ifndef VSCHED_TESTS_SOUND_WORLD_H
#define VSCHED_TESTS_SOUND_WORLD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

#include "memfs.h"

#define SW_PRIME 1099511628211u

/* FNV-1a of a string: the content hash the executor gives it. */
uint64_t sw_fnv(const char *s);
/* The Analysis hash of content `c` with blockers' analysis hashes b[]. */
uint64_t sw_fold(uint64_t c, const uint64_t *b, size_t n);

typedef struct sw_options {
    const memfs_file *files; /* ends with {NULL, NULL} */
    unsigned cpu_threads;    /* 0: 1 */
    size_t cpu_capacity;     /* 0: 4 x threads */
    unsigned io_threads;     /* 0: 1 */
    size_t io_capacity;      /* 0: 4 x threads */
    size_t inbox_capacity;   /* 0: library default */
    size_t ready_capacity;   /* 0: library default */
    int executor_serial;     /* 1: the executor is not thread-safe */
    vsched_observer_fn observer;
    void *observer_user;
    /* Loader: synthetic sources served by a function (NULL: files). */
    const char *(*content_of)(const char *name, char *buf, size_t cap);
    int cycles_fail; /* options.blocker_cycles_fail */
    vsched_task_observer_fn task_observer;
    void *task_observer_user;
} sw_options;

typedef struct sw_world {
    vsched *s;
    vsched_pool *cpu, *io;
} sw_world;

void sw_start(sw_world *w, const sw_options *o);
void sw_stop(sw_world *w);

/* The loader's classification of each name (NULL: ".h" -> "header",
 * else "c"). May change while a scheduler runs. */
extern const char *(*_Atomic sw_kind_of)(const char *name);

/* Gates. */
void sw_arm(const char *key);
void sw_open(const char *key);
int sw_entered(const char *key);
void sw_wait_entered(const char *key);
/* Open every gate and forget them (between tests). */
void sw_reset_gates(void);

/* Microseconds every executor call and load spins for (interleavings in
 * the stress tests); 0 by default. */
extern atomic_int sw_delay_us;
/* When set, a held gate ignores cancellation: its stage keeps running
 * until opened, as a plugin that never polls ctx->is_cancelled would. */
extern atomic_int sw_stubborn;

/* Re-entrant waits: while sw_nested_waits (per mille) is set, that share
 * of the stage calls of a file "fN" (N > 0) -- loads, parses, Analyses,
 * Artifacts -- submit a request for the Analysis of a file f0 .. f(N-1)
 * and wait for it from inside the stage (sw_nested_done counts them).
 * Waits point down, so with blockers that point down too no wait closes
 * a cycle. Off (0) at sw_start. */
extern atomic_int sw_nested_waits;
extern atomic_ulong sw_nested_done;

/* Executor calls that reached the plugin, per stage ('S','A','R','J'). */
unsigned sw_calls(char stage);
/* Artifact executor calls at once, the most since sw_start. */
int sw_artifact_peak(void);
/* Jobs named with prefix "pfx" running now / the most ever at once. */
int sw_job_peak(const char *prefix);

/* A request in profile "release". */
vsched_request sw_req(const char *name, vsched_stage stage, int prio);
/* Submit, asserting success. */
vsched_handle *sw_submit(vsched *s, const char *name, vsched_stage stage,
                         unsigned flags);
vsched_handle *sw_upsert(vsched *s, const char *name, const char *content);

/* A handle waited for on a thread of its own, so a test can bound the
 * wait: sw_waiter_done(w, ms) is 1 once the wait returned (within ms). */
typedef struct sw_waiter {
    vsched_handle *h;
    pthread_t th;
    atomic_int done;
    int status;
    const vsched_result *r;
} sw_waiter;
void sw_waiter_start(sw_waiter *w, vsched_handle *h);
int sw_waiter_done(sw_waiter *w, int ms);
/* Join the thread (the wait must end first) and release the handle. */
void sw_waiter_finish(sw_waiter *w);

/* The state of node id, polled until it is terminal or ms pass; returns
 * the last state seen (info filled, caller clears). */
vsched_node_state sw_node_poll(vsched *s, uint64_t id, int ms,
                               vsched_node_info *info);

/* A JOB spec: kind "test", no parent. */
vsched_node_spec sw_job(const char *name);

void sw_sleep_ms(int ms);
uint64_t sw_now_ns(void);

#endif
