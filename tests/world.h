/*
 * world.h -- the fixture shared by the scheduler test suites.
 *
 * Sources are a table of (name, content); content lines "blocker NAME"
 * declare blockers (they are also deps). The recording executor appends
 * every stage it runs to events[] -- 'L' load, 'S' source, 'A' analysis,
 * 'R' artifact -- with the kind of pool that ran it, and calls stage_hook
 * (when set) before doing a stage's work, which lets a test hold a stage
 * running, fail it, or make it wait on another request.
 */
#ifndef VSCHED_TESTS_WORLD_H
#define VSCHED_TESTS_WORLD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include <vsched/vsched.h>

#include "memfs.h"

/* A request for `stage` of `name` in profile "release". */
#define REQ(n, st, prio)                                                      \
    ((vsched_request){.name = (n),                                            \
                      .stage = (st),                                          \
                      .profile = "release",                                   \
                      .priority = (prio)})

/* A source: {NULL, NULL} ends a table. */
typedef memfs_file mem_file;

typedef struct event {
    char stage;
    char name[64];
    int pool_kind;
    int worker; /* vsched_pool_current_worker() */
} event;

extern pthread_mutex_t rec_lock; /* guards events, n_events */
extern event events[4096];
extern size_t n_events;
extern atomic_int artifact_delay_us; /* delay of "slow*" files' Artifact */
extern const char *fail_artifact;    /* this file's Artifact fails */
extern int cycles_fail; /* options.blocker_cycles_fail of the next start */
extern const vsched_loader_ops *loader_override; /* next start's loader */
extern vsched_pool *cpu, *io; /* pools of the running scheduler */
/* Transport capacity of the next start's I/O pool (0: the default); the
 * start resets it. */
extern size_t io_capacity;

/* When set, the loader's classification of a name (else by extension). */
extern const char *(*classify_hook)(const char *name);

/* Called before each stage's work ('L', 'S', 'A', 'R'), on the worker. */
extern void (*stage_hook)(char stage, const char *name, const vsched_ctx *ctx);

void record(char stage, const char *name);
/* Index of the first event (stage, name), or -1. */
long event_index(char stage, const char *name);
size_t count_stage(char stage);

vsched *start(const mem_file *files, unsigned cpu_threads);
vsched *start_observed(const mem_file *files, unsigned cpu_threads,
                       vsched_observer_fn observer);
/* Like start, with explicit options (cpu_threads, inbox capacity). */
vsched *start_with(const mem_file *files, unsigned cpu_threads,
                   size_t inbox_capacity, vsched_observer_fn observer);
void stop(vsched *s);
int request(vsched *s, const char *name, vsched_stage stage,
            const vsched_result **res, vsched_handle **h);

/* Assert every occupancy counter of st is zero (after a reset). */
void assert_occupancy_zero(const vsched_stats *st);

/* Observer that cancels `observed` on the first real failure. */
extern vsched *observed;
extern atomic_int events_seen, cancels;
void cancel_on_failure(void *user, const vsched_event *ev);

#endif
