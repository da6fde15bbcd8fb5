/*
 * world -- the test fixture shared by the scheduler suites: an in-memory
 * loader, a recording executor, and scheduler start/stop helpers; see
 * world.h.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vsched/vsched.h>

#include "cu.h"
#include "memfs.h"
#include "world.h"

/* ---- the in-memory world ------------------------------------------------ */

static void world_load(const char *name, const vsched_ctx *ctx)
{
    if (stage_hook != NULL)
        stage_hook('L', name, ctx);
    record('L', name);
}

static const char *world_classify(const char *name)
{
    const char *k = classify_hook != NULL ? classify_hook(name) : NULL;
    return k != NULL ? k : strstr(name, ".h") ? "header" : "c";
}

static memfs world = {NULL, MEMFS_REALPATH_NO_DOTDOT, world_load,
                      world_classify};

/* ---- the recording executor --------------------------------------------- */

pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
event events[4096];
size_t n_events;
atomic_int artifact_delay_us; /* makes some artifacts slow */
const char *fail_artifact;
int cycles_fail;
const vsched_loader_ops *loader_override; /* this file's Artifact fails */
void (*stage_hook)(char stage, const char *name, const vsched_ctx *ctx);
const char *(*classify_hook)(const char *name);

void record(char stage, const char *name)
{
    pthread_mutex_lock(&rec_lock);
    if (n_events < sizeof events / sizeof events[0]) {
        events[n_events].stage = stage;
        snprintf(events[n_events].name, sizeof events[n_events].name, "%s",
                 name);
        events[n_events].pool_kind = vsched_pool_current_kind();
        events[n_events].worker = vsched_pool_current_worker();
        n_events++;
    }
    pthread_mutex_unlock(&rec_lock);
}

/* Index of the first event (stage, name), or -1. */
long event_index(char stage, const char *name)
{
    long r = -1;
    pthread_mutex_lock(&rec_lock);
    for (size_t i = 0; i < n_events; i++)
        if (events[i].stage == stage && strcmp(events[i].name, name) == 0) {
            r = (long)i;
            break;
        }
    pthread_mutex_unlock(&rec_lock);
    return r;
}

size_t count_stage(char stage)
{
    size_t c = 0;
    pthread_mutex_lock(&rec_lock);
    for (size_t i = 0; i < n_events; i++)
        c += events[i].stage == stage;
    pthread_mutex_unlock(&rec_lock);
    return c;
}

static int rec_source(void *inst, const vsched_ctx *ctx, const char *name,
                      const char *kind, const char *bytes, size_t len,
                      vsched_source_out *out)
{
    if (stage_hook != NULL)
        stage_hook('S', name, ctx);
    record('S', name);
    memfs_snap *sn = memfs_snap_parse(bytes, len);
    out->snapshot = sn;
    out->content_hash = sn->hash;
    return VSCHED_OK;
}

static int rec_deps(void *inst, const vsched_ctx *ctx, const char *name,
                    const void *snapshot, vsched_deps_out *out)
{
    return memfs_snap_deps(ctx, snapshot, out);
}

static int rec_analysis(void *inst, const vsched_ctx *ctx,
                        const vsched_analysis_in *in, uint64_t *hash)
{
    if (stage_hook != NULL)
        stage_hook('A', in->name, ctx);
    record('A', in->name);
    uint64_t h = in->content_hash;
    for (size_t i = 0; i < in->n_blockers; i++)
        h = h * 1099511628211u ^ in->blocker_hashes[i];
    *hash = h;
    return VSCHED_OK;
}

static int rec_artifact(void *inst, const vsched_ctx *ctx,
                        const vsched_artifact_in *in, vsched_artifact_out *out)
{
    int us = atomic_load(&artifact_delay_us);
    if (us > 0 && in->name[0] == 's') { /* "slow..." files */
        struct timespec ts = {0, (long)us * 1000};
        nanosleep(&ts, NULL);
    }
    if (stage_hook != NULL)
        stage_hook('R', in->name, ctx);
    record('R', in->name);
    if (fail_artifact != NULL && strcmp(in->name, fail_artifact) == 0) {
        ctx->diag(ctx, VSCHED_SEV_ERROR, in->name, 3, "forced failure");
        return VSCHED_ETOOL;
    }
    out->artifact_hash = in->analysis_hash ^ 0x5a5a;
    return VSCHED_OK;
}

static const vsched_executor_ops rec_executor = {
    .size = sizeof(vsched_executor_ops),
    .source = rec_source,
    .extract_deps = rec_deps,
    .analysis = rec_analysis,
    .artifact = rec_artifact,
    .snapshot_free = memfs_snap_free,
};

/* ---- fixture ------------------------------------------------------------ */

vsched_pool *cpu, *io;
size_t io_capacity;

/* Observer: counts events; cancels the scheduler on the first failure. */
vsched *observed;
atomic_int events_seen, cancels;

void cancel_on_failure(void *user, const vsched_event *ev)
{
    (void)user;
    atomic_fetch_add(&events_seen, 1);
    if (ev->status != 0 && ev->status != VSCHED_ECANCELLED &&
        atomic_fetch_add(&cancels, 1) == 0)
        vsched_cancel(observed, "stopped after a failure");
}

vsched *start(const mem_file *files, unsigned cpu_threads)
{
    return start_with(files, cpu_threads, 0, NULL);
}

vsched *start_observed(const mem_file *files, unsigned cpu_threads,
                       vsched_observer_fn observer)
{
    return start_with(files, cpu_threads, 0, observer);
}

vsched *start_with(const mem_file *files, unsigned cpu_threads,
                   size_t inbox_capacity, vsched_observer_fn observer)
{
    world.files = files;
    n_events = 0;
    fail_artifact = NULL;
    stage_hook = NULL;
    classify_hook = NULL;
    atomic_store(&artifact_delay_us, 0);
    vsched_options o = {
        .size = sizeof o,
        .loader = loader_override != NULL
                      ? (vsched_loader_binding){loader_override, &world, 1}
                      : MEMFS_BINDING(&world),
        .executor = {&rec_executor, NULL, 1},
        .observer = observer,
        .inbox_capacity = inbox_capacity,
        .blocker_cycles_fail = cycles_fail,
    };
    if (io_capacity == 0)
        return memfs_start(&cpu, &io, cpu_threads, &o);
    CU_ASSERT_FATAL(
        vsched_pool_create(&cpu, VSCHED_POOL_CPU, cpu_threads, 0) == 0);
    CU_ASSERT_FATAL(vsched_pool_create(&io, VSCHED_POOL_IO, 1, io_capacity) ==
                    0);
    io_capacity = 0;
    o.cpu_pool = cpu;
    o.io_pool = io;
    vsched *s = NULL;
    CU_ASSERT_FATAL(vsched_create(&s, &o) == 0);
    return s;
}

void stop(vsched *s)
{
    memfs_stop(s, cpu, io);
}

int request(vsched *s, const char *name, vsched_stage stage,
            const vsched_result **res, vsched_handle **h)
{
    vsched_request r = REQ(name, stage, 0);
    CU_ASSERT_FATAL(vsched_submit_request(s, &r, h) == 0);
    return vsched_wait(*h, res);
}

void assert_occupancy_zero(const vsched_stats *st)
{
    CU_ASSERT_EQUAL(st->files, 0);
    CU_ASSERT_EQUAL(st->graph_nodes, 0);
    CU_ASSERT_EQUAL(st->edges, 0);
    CU_ASSERT_EQUAL(st->edges_capacity, 0);
    CU_ASSERT_EQUAL(st->waiters, 0);
    CU_ASSERT_EQUAL(st->waiters_capacity, 0);
    CU_ASSERT_EQUAL(st->blockers, 0);
    CU_ASSERT_EQUAL(st->blockers_capacity, 0);
}
