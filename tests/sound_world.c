/*
 * sound_world -- the fixture of the soundness suites; see sound_world.h.
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
#include "sound_world.h"

uint64_t sw_fnv(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * SW_PRIME;
    return h;
}

uint64_t sw_fold(uint64_t c, const uint64_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        c = c * SW_PRIME ^ b[i];
    return c;
}

void sw_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

uint64_t sw_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- gates -----------------------------------------------------------------
 * lock: guards gates[], counts[] and the job tallies (the fixture's only
 * lock; a leaf: nothing else is taken while it is held). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

typedef struct gate {
    char key[80];
    int armed, entered, open;
} gate;
static gate gates[256];
static size_t n_gates;

static gate *gate_find(const char *key, int create)
{
    for (size_t i = 0; i < n_gates; i++)
        if (strcmp(gates[i].key, key) == 0)
            return &gates[i];
    if (!create || n_gates == sizeof gates / sizeof gates[0])
        return NULL;
    gate *g = &gates[n_gates++];
    memset(g, 0, sizeof *g);
    snprintf(g->key, sizeof g->key, "%s", key);
    return g;
}

void sw_arm(const char *key)
{
    pthread_mutex_lock(&lock);
    gate *g = gate_find(key, 1);
    g->armed = 1;
    g->entered = 0;
    g->open = 0;
    pthread_mutex_unlock(&lock);
}

void sw_open(const char *key)
{
    pthread_mutex_lock(&lock);
    gate *g = gate_find(key, 1);
    g->open = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

int sw_entered(const char *key)
{
    pthread_mutex_lock(&lock);
    gate *g = gate_find(key, 0);
    int e = g != NULL ? g->entered : 0;
    pthread_mutex_unlock(&lock);
    return e;
}

void sw_wait_entered(const char *key)
{
    pthread_mutex_lock(&lock);
    gate *g = gate_find(key, 1);
    while (!g->entered)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
}

void sw_reset_gates(void)
{
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_gates; i++)
        gates[i].open = 1;
    pthread_cond_broadcast(&cond);
    n_gates = 0;
    pthread_mutex_unlock(&lock);
}

atomic_int sw_delay_us;
atomic_int sw_stubborn;

static void delay(void)
{
    int us = atomic_load(&sw_delay_us);
    if (us > 0) {
        uint64_t until = sw_now_ns() + (uint64_t)us * 1000u;
        while (sw_now_ns() < until)
            ;
    }
}

atomic_int sw_nested_waits;
atomic_ulong sw_nested_done;
static vsched *_Atomic world_sched;

/* A stage of file "fN" waits, from inside, for the Analysis of a file
 * below it (sw_nested_waits per mille of calls). */
static void nested_wait(const char *name)
{
    int pm = atomic_load(&sw_nested_waits);
    vsched *s = atomic_load(&world_sched);
    if (pm <= 0 || s == NULL || name[0] != 'f' || name[1] < '1' ||
        name[1] > '9')
        return;
    static _Atomic uint64_t seq;
    uint64_t x = (atomic_fetch_add(&seq, 1) + 1) * 0x9e3779b97f4a7c15u;
    x ^= sw_fnv(name);
    x ^= x >> 31;
    if (x % 1000 >= (uint64_t)pm)
        return;
    char below[16];
    unsigned long n = strtoul(name + 1, NULL, 10);
    snprintf(below, sizeof below, "f%lu", (unsigned long)((x >> 20) % n));
    vsched_request r =
        sw_req(below, VSCHED_STAGE_ANALYSIS, (int)((x >> 40) % 3));
    vsched_handle *h;
    if (vsched_submit_request(s, &r, &h) != VSCHED_OK)
        return;
    vsched_wait(h, NULL);
    vsched_handle_release(h);
    atomic_fetch_add(&sw_nested_done, 1);
}

/* Pass the gate `key` (executor side); VSCHED_ECANCELLED when cancelled
 * while held. */
static int gate_pass(const vsched_ctx *ctx, char stage, const char *name)
{
    nested_wait(name);
    delay();
    char key[80];
    snprintf(key, sizeof key, "%c:%s", stage, name);
    int rc = VSCHED_OK;
    pthread_mutex_lock(&lock);
    gate *g = gate_find(key, 0);
    if (g != NULL && g->armed) {
        g->entered++;
        pthread_cond_broadcast(&cond);
        while (!g->open) {
            if (ctx != NULL && !atomic_load(&sw_stubborn) &&
                ctx->is_cancelled(ctx)) {
                rc = VSCHED_ECANCELLED;
                break;
            }
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 1000000; /* re-check cancellation */
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&cond, &lock, &until);
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

/* ---- counts ---------------------------------------------------------------- */

static unsigned calls[4]; /* S A R J */

static int stage_index(char stage)
{
    return stage == 'S' ? 0 : stage == 'A' ? 1 : stage == 'R' ? 2 : 3;
}

static void count(char stage)
{
    pthread_mutex_lock(&lock);
    calls[stage_index(stage)]++;
    pthread_mutex_unlock(&lock);
}

unsigned sw_calls(char stage)
{
    pthread_mutex_lock(&lock);
    unsigned c = calls[stage_index(stage)];
    pthread_mutex_unlock(&lock);
    return c;
}

typedef struct tally {
    char prefix[32];
    int running, peak;
} tally;
static tally tallies[32];
static size_t n_tallies;

static tally *tally_of(const char *name)
{
    char prefix[32];
    size_t n = strcspn(name, "-");
    if (n >= sizeof prefix)
        n = sizeof prefix - 1;
    memcpy(prefix, name, n);
    prefix[n] = '\0';
    for (size_t i = 0; i < n_tallies; i++)
        if (strcmp(tallies[i].prefix, prefix) == 0)
            return &tallies[i];
    if (n_tallies == sizeof tallies / sizeof tallies[0])
        return NULL;
    tally *t = &tallies[n_tallies++];
    memset(t, 0, sizeof *t);
    memcpy(t->prefix, prefix, n + 1);
    return t;
}

int sw_job_peak(const char *prefix)
{
    pthread_mutex_lock(&lock);
    int p = 0;
    for (size_t i = 0; i < n_tallies; i++)
        if (strcmp(tallies[i].prefix, prefix) == 0)
            p = tallies[i].peak;
    pthread_mutex_unlock(&lock);
    return p;
}

/* ---- loader ---------------------------------------------------------------- */

const char *(*_Atomic sw_kind_of)(const char *name);
static const char *(*content_of)(const char *name, char *buf, size_t cap);

static const char *world_classify(const char *name)
{
    const char *(*k)(const char *) = atomic_load(&sw_kind_of);
    const char *kind = k != NULL ? k(name) : NULL;
    return kind != NULL ? kind : strstr(name, ".h") ? "header" : "c";
}

static memfs world = {NULL, MEMFS_REALPATH_NO_DOTDOT, NULL, world_classify};

/* A loader serving synthetic sources when the test gives content_of,
 * else the memfs table. */
static int syn_load(void *inst, const vsched_ctx *ctx, const char *name,
                    char **bytes, size_t *len)
{
    if (gate_pass(ctx, 'L', name) != VSCHED_OK)
        return VSCHED_ECANCELLED;
    if (content_of == NULL)
        return memfs_loader_ops.load(inst, ctx, name, bytes, len);
    char buf[256];
    const char *c = content_of(name, buf, sizeof buf);
    if (c == NULL)
        return VSCHED_ENOENT;
    *bytes = memfs_strdup(ctx, c);
    *len = strlen(c);
    return *bytes != NULL ? VSCHED_OK : VSCHED_ENOMEM;
}

static int syn_exists(void *inst, const vsched_ctx *ctx, const char *name)
{
    if (content_of == NULL)
        return memfs_loader_ops.exists(inst, ctx, name);
    char buf[256];
    return content_of(name, buf, sizeof buf) != NULL;
}

static const vsched_loader_ops loader = {sizeof(vsched_loader_ops), syn_load,
                                         syn_exists, NULL, NULL};
static vsched_loader_ops loader_ops; /* loader + memfs classify/realpath */

/* ---- executor -------------------------------------------------------------- */

static int e_source(void *inst, const vsched_ctx *ctx, const char *name,
                    const char *kind, const char *bytes, size_t len,
                    vsched_source_out *out)
{
    if (gate_pass(ctx, 'S', name) != VSCHED_OK)
        return VSCHED_ECANCELLED;
    count('S');
    memfs_snap *sn = memfs_snap_parse(bytes, len);
    out->snapshot = sn;
    out->content_hash = sn->hash;
    return VSCHED_OK;
}

static int e_deps(void *inst, const vsched_ctx *ctx, const char *name,
                  const void *snapshot, vsched_deps_out *out)
{
    return memfs_snap_deps(ctx, snapshot, out);
}

static int e_analysis(void *inst, const vsched_ctx *ctx,
                      const vsched_analysis_in *in, uint64_t *hash)
{
    if (gate_pass(ctx, 'A', in->name) != VSCHED_OK)
        return VSCHED_ECANCELLED;
    count('A');
    *hash = sw_fold(in->content_hash, in->blocker_hashes, in->n_blockers);
    return VSCHED_OK;
}

static atomic_int artifacts_running, artifacts_peak;

int sw_artifact_peak(void)
{
    return atomic_load(&artifacts_peak);
}

static int e_artifact(void *inst, const vsched_ctx *ctx,
                      const vsched_artifact_in *in, vsched_artifact_out *out)
{
    int now = atomic_fetch_add(&artifacts_running, 1) + 1;
    for (int p = atomic_load(&artifacts_peak);
         now > p && !atomic_compare_exchange_weak(&artifacts_peak, &p, now);)
        ;
    int rc = gate_pass(ctx, 'R', in->name);
    if (rc == VSCHED_OK) {
        count('R');
        delay(); /* more time counted as running, under stress */
        out->artifact_hash = in->analysis_hash ^ 0x5a5a;
    }
    atomic_fetch_sub(&artifacts_running, 1);
    return rc == VSCHED_OK ? VSCHED_OK : VSCHED_ECANCELLED;
}

static int e_job(void *inst, const vsched_ctx *ctx, const vsched_job_in *in,
                 vsched_artifact_out *out)
{
    pthread_mutex_lock(&lock);
    calls[3]++;
    tally *t = tally_of(in->name);
    if (t != NULL && ++t->running > t->peak)
        t->peak = t->running;
    pthread_mutex_unlock(&lock);
    int rc = gate_pass(ctx, 'J', in->name);
    pthread_mutex_lock(&lock);
    if (t != NULL)
        t->running--;
    pthread_mutex_unlock(&lock);
    if (rc != VSCHED_OK)
        return rc;
    if (strncmp(in->name, "fail", 4) == 0) {
        ctx->diag(ctx, VSCHED_SEV_ERROR, NULL, 0, "job failed on purpose");
        return VSCHED_ETOOL;
    }
    return VSCHED_OK;
}

static const vsched_executor_ops executor = {
    .size = sizeof(vsched_executor_ops),
    .source = e_source,
    .extract_deps = e_deps,
    .analysis = e_analysis,
    .artifact = e_artifact,
    .snapshot_free = memfs_snap_free,
    .job = e_job,
};

/* ---- scheduler ------------------------------------------------------------- */

void sw_start(sw_world *w, const sw_options *o)
{
    world.files = o->files;
    content_of = o->content_of;
    atomic_store(&sw_kind_of, NULL);
    atomic_store(&sw_delay_us, 0);
    atomic_store(&sw_stubborn, 0);
    sw_reset_gates();
    pthread_mutex_lock(&lock);
    memset(calls, 0, sizeof calls);
    n_tallies = 0;
    atomic_store(&artifacts_peak, 0);
    pthread_mutex_unlock(&lock);
    loader_ops = loader;
    loader_ops.classify = memfs_loader_ops.classify;
    loader_ops.realpath = memfs_loader_ops.realpath;
    unsigned ct = o->cpu_threads ? o->cpu_threads : 1;
    unsigned it = o->io_threads ? o->io_threads : 1;
    CU_ASSERT_FATAL(vsched_pool_create(&w->cpu, VSCHED_POOL_CPU, ct,
                                       o->cpu_capacity) == 0);
    CU_ASSERT_FATAL(
        vsched_pool_create(&w->io, VSCHED_POOL_IO, it, o->io_capacity) == 0);
    vsched_options so = {
        .size = sizeof so,
        .cpu_pool = w->cpu,
        .io_pool = w->io,
        .loader = {&loader_ops, &world, 1},
        .executor = {&executor, NULL, !o->executor_serial},
        .inbox_capacity = o->inbox_capacity,
        .ready_capacity = o->ready_capacity,
        .observer = o->observer,
        .observer_user = o->observer_user,
        .blocker_cycles_fail = o->cycles_fail,
        .task_observer = o->task_observer,
        .task_observer_user = o->task_observer_user,
    };
    CU_ASSERT_FATAL(vsched_create(&w->s, &so) == 0);
    atomic_store(&sw_nested_waits, 0);
    atomic_store(&sw_nested_done, 0);
    atomic_store(&world_sched, w->s);
}

void sw_stop(sw_world *w)
{
    sw_reset_gates();
    atomic_store(&world_sched, NULL);
    vsched_destroy(w->s);
    vsched_pool_destroy(w->cpu);
    vsched_pool_destroy(w->io);
    w->s = NULL;
}

vsched_request sw_req(const char *name, vsched_stage stage, int prio)
{
    return (vsched_request){
        .name = name, .stage = stage, .profile = "release", .priority = prio};
}

vsched_handle *sw_submit(vsched *s, const char *name, vsched_stage stage,
                         unsigned flags)
{
    vsched_request r = sw_req(name, stage, 0);
    r.flags = flags;
    vsched_handle *h = NULL;
    CU_ASSERT_FATAL(vsched_submit_request(s, &r, &h) == 0);
    return h;
}

vsched_handle *sw_upsert(vsched *s, const char *name, const char *content)
{
    vsched_request r = sw_req(name, VSCHED_STAGE_SOURCE, 0);
    r.flags = VSCHED_REQ_CONTENT;
    r.content = content;
    r.content_len = strlen(content);
    vsched_handle *h = NULL;
    CU_ASSERT_FATAL(vsched_submit_request(s, &r, &h) == 0);
    return h;
}

static void *waiter_main(void *arg)
{
    sw_waiter *w = arg;
    w->status = vsched_wait(w->h, &w->r);
    atomic_store(&w->done, 1);
    return NULL;
}

void sw_waiter_start(sw_waiter *w, vsched_handle *h)
{
    w->h = h;
    w->r = NULL;
    w->status = 1;
    atomic_store(&w->done, 0);
    CU_ASSERT_FATAL(pthread_create(&w->th, NULL, waiter_main, w) == 0);
}

int sw_waiter_done(sw_waiter *w, int ms)
{
    for (int i = 0; i < ms && !atomic_load(&w->done); i++)
        sw_sleep_ms(1);
    return atomic_load(&w->done);
}

void sw_waiter_finish(sw_waiter *w)
{
    pthread_join(w->th, NULL);
    vsched_handle_release(w->h);
    w->h = NULL;
}

vsched_node_state sw_node_poll(vsched *s, uint64_t id, int ms,
                               vsched_node_info *info)
{
    vsched_node_state st = VSCHED_NODE_PENDING;
    for (int i = 0;; i++) {
        memset(info, 0, sizeof *info);
        if (vsched_node_get(s, id, info) != VSCHED_OK)
            return VSCHED_NODE_PENDING;
        st = info->state;
        if (st >= VSCHED_NODE_DONE || i >= ms)
            return st;
        vsched_node_info_clear(info);
        sw_sleep_ms(1);
    }
}

vsched_node_spec sw_job(const char *name)
{
    return (vsched_node_spec){.what = VSCHED_SPEC_JOB,
                              .kind = "test",
                              .name = name,
                              .parent = VSCHED_REF_NONE};
}
