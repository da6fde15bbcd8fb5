/*
 * test_block -- workers that block inside tasks (a stage, a job, a host
 * task or a join callback waiting on the scheduler), tested from outside:
 * supersession, reset and teardown while they wait, waits nested 30 to 40
 * deep, schedulers sharing pools, jobs waiting on jobs, capped stand-ins,
 * thousands of block cycles, pools full of waiting host tasks, the ring
 * under many blocked rests of batches, and a join callback that waits on
 * a pool worker. Invariants: every wait ends, results are the ones a run
 * without waits gives, the thread count returns to the pools' size, and
 * no host task is lost or run twice.
 *
 * A hang fails the test (_exit(3)) with what hung; VSCHED_TEST_PAUSE=1
 * keeps the process instead, for a debugger.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vsched/vsched.h>

#include "cu.h"
#include "memfs.h"
#include "threads.h"

int vsched__test_handle_done(vsched_handle *h);
size_t vsched__test_ready(vsched *s, int cpu);
unsigned vsched__test_pool_unjoined(vsched_pool *p);
void vsched__test_pool_standins(vsched_pool *p, unsigned max);

/* ---- helpers ------------------------------------------------------------ */

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* The threads of this process but the pager, which is the process's
 * while any scheduler lives (src/lib/pager.h), not one world's. */
static int n_tasks(void)
{
    return vr_threads(VR_PAGER_THREAD, 0);
}

/* The thread count once the threads an earlier test left are gone (a
 * stand-in exits on its own after its pool's destroy returned): polled
 * until it has not changed for 100 ms, for up to 3 s. Measured with
 * n_tasks() at once, a base one too high under load made a test expect a
 * thread its world never had. */
static int settled_tasks(void)
{
    int n = n_tasks(), still = 0;
    for (int i = 0; i < 3000 && still < 100; i++) {
        sleep_ms(1);
        int m = n_tasks();
        still = m == n ? still + 1 : 0;
        n = m;
    }
    return n;
}

/* Poll (up to ms) until the thread count is at most want. */
static int tasks_back_to(int want, int ms)
{
    for (int i = 0; i < ms && n_tasks() > want; i++)
        sleep_ms(1);
    return n_tasks();
}

/* Hook called before each stage ('L','S','A','R') and job ('J'). */
static void (*hook)(char stage, const char *name, const vsched_ctx *ctx);
static atomic_int job_calls;

static void load_hook(const char *name, const vsched_ctx *ctx)
{
    if (hook != NULL)
        hook('L', name, ctx);
}

static memfs fs = {NULL, MEMFS_REALPATH_NO_DOTDOT, load_hook, NULL};

static int x_source(void *inst, const vsched_ctx *ctx, const char *name,
                    const char *kind, const char *bytes, size_t len,
                    vsched_source_out *out)
{
    (void)inst;
    (void)kind;
    if (hook != NULL)
        hook('S', name, ctx);
    memfs_snap *sn = memfs_snap_parse(bytes, len);
    out->snapshot = sn;
    out->content_hash = sn->hash;
    return VSCHED_OK;
}

static int x_deps(void *inst, const vsched_ctx *ctx, const char *name,
                  const void *snapshot, vsched_deps_out *out)
{
    (void)inst;
    (void)name;
    return memfs_snap_deps(ctx, snapshot, out);
}

/* What the stage returns, when a hook sets it (Analysis only). */
static _Thread_local int hook_rc;

static int x_analysis(void *inst, const vsched_ctx *ctx,
                      const vsched_analysis_in *in, uint64_t *hash)
{
    (void)inst;
    hook_rc = VSCHED_OK;
    if (hook != NULL)
        hook('A', in->name, ctx);
    if (hook_rc != VSCHED_OK)
        return hook_rc;
    uint64_t h = in->content_hash;
    for (size_t i = 0; i < in->n_blockers; i++)
        h = h * 1099511628211u ^ in->blocker_hashes[i];
    *hash = h;
    return VSCHED_OK;
}

static int x_artifact(void *inst, const vsched_ctx *ctx,
                      const vsched_artifact_in *in, vsched_artifact_out *out)
{
    (void)inst;
    if (hook != NULL)
        hook('R', in->name, ctx);
    out->artifact_hash = in->analysis_hash ^ 0x5a5a;
    return VSCHED_OK;
}

static int x_job(void *inst, const vsched_ctx *ctx, const vsched_job_in *in,
                 vsched_artifact_out *out)
{
    (void)inst;
    (void)out;
    atomic_fetch_add(&job_calls, 1);
    if (hook != NULL)
        hook('J', in->name, ctx);
    return VSCHED_OK;
}

static const vsched_executor_ops x_ops = {
    .size = sizeof(vsched_executor_ops),
    .source = x_source,
    .extract_deps = x_deps,
    .analysis = x_analysis,
    .artifact = x_artifact,
    .snapshot_free = memfs_snap_free,
    .job = x_job,
};

typedef struct world {
    vsched *s;
    vsched_pool *cpu, *io;
} world;

static vsched_task_observer_fn next_task_observer;
static vsched_observer_fn next_observer;
static size_t next_ready_capacity;

static vsched *make_sched(vsched_pool *cpu, vsched_pool *io)
{
    vsched_options o = {
        .size = sizeof o,
        .cpu_pool = cpu,
        .io_pool = io,
        .loader = MEMFS_BINDING(&fs),
        .executor = {&x_ops, NULL, 1},
        .task_observer = next_task_observer,
        .observer = next_observer,
        .ready_capacity = next_ready_capacity,
    };
    vsched *s = NULL;
    CU_ASSERT_FATAL(vsched_create(&s, &o) == 0);
    return s;
}

static void wstart(world *w, const memfs_file *files, unsigned cpu_threads,
                   unsigned io_threads, size_t io_cap)
{
    fs.files = files;
    CU_ASSERT_FATAL(
        vsched_pool_create(&w->cpu, VSCHED_POOL_CPU, cpu_threads, 0) == 0);
    CU_ASSERT_FATAL(
        vsched_pool_create(&w->io, VSCHED_POOL_IO, io_threads, io_cap) == 0);
    w->s = make_sched(w->cpu, w->io);
}

static void wstop(world *w)
{
    vsched_destroy(w->s);
    vsched_pool_destroy(w->cpu);
    vsched_pool_destroy(w->io);
    hook = NULL;
    next_task_observer = NULL;
    next_observer = NULL;
    next_ready_capacity = 0;
}

static vsched_request req(const char *name, vsched_stage st)
{
    return (vsched_request){.name = name, .stage = st, .profile = "release"};
}

static vsched_handle *sub(vsched *s, const char *name, vsched_stage st)
{
    vsched_request r = req(name, st);
    vsched_handle *h = NULL;
    CU_ASSERT_FATAL(vsched_submit_request(s, &r, &h) == 0);
    return h;
}

/* Wait for h, at most ms; _exit(3) with a message on a hang (so the test
 * run does not stall; attach gdb with VSCHED_TEST_PAUSE=1). */
static int bounded_wait(vsched_handle *h, int ms, const char *what)
{
    for (int i = 0; i < ms && !vsched__test_handle_done(h); i++)
        sleep_ms(1);
    if (!vsched__test_handle_done(h)) {
        fprintf(stderr, "HANG: %s (pid %d)\n", what, (int)getpid());
        if (getenv("VSCHED_TEST_PAUSE") != NULL)
            pause();
        _exit(3);
    }
    return vsched_wait(h, NULL);
}

/* ---- a gate -------------------------------------------------------------- */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_entered, g_open;

static void gate_reset(void)
{
    pthread_mutex_lock(&g_lock);
    g_entered = 0;
    g_open = 0;
    pthread_mutex_unlock(&g_lock);
}

/* Enter the gate, wait until opened or cancelled. */
static void gate_pass(const vsched_ctx *ctx)
{
    pthread_mutex_lock(&g_lock);
    g_entered++;
    pthread_cond_broadcast(&g_cond);
    while (!g_open && !(ctx != NULL && ctx->is_cancelled(ctx))) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 2000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&g_cond, &g_lock, &ts);
    }
    pthread_mutex_unlock(&g_lock);
}

static int gate_wait_entered(int n, int ms)
{
    int ok;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < ms && g_entered < n; i++) {
        pthread_mutex_unlock(&g_lock);
        sleep_ms(1);
        pthread_mutex_lock(&g_lock);
    }
    ok = g_entered >= n;
    pthread_mutex_unlock(&g_lock);
    return ok;
}

/* Set *flag under m and wake every waiter on c. */
static void raise_flag(pthread_mutex_t *m, pthread_cond_t *c, int *flag)
{
    pthread_mutex_lock(m);
    *flag = 1;
    pthread_cond_broadcast(c);
    pthread_mutex_unlock(m);
}

static void gate_open(void)
{
    raise_flag(&g_lock, &g_cond, &g_open);
}

/* ---- 1: supersession / teardown while a stage waits ---------------------- */

static vsched *cur;
static atomic_int outer_rc;
static atomic_int outer_waits;

/* outer.c's Analysis waits for inner.c's Artifact; inner.c's Artifact is
 * held at the gate. */
static void outer_waits_inner(char stage, const char *name,
                              const vsched_ctx *ctx)
{
    if (stage == 'R' && strcmp(name, "inner.c") == 0) {
        gate_pass(ctx);
        return;
    }
    if (stage == 'A' && strcmp(name, "outer.c") == 0) {
        vsched_request r = req("inner.c", VSCHED_STAGE_ARTIFACT);
        vsched_handle *h = NULL;
        int rc = vsched_submit_request(cur, &r, &h);
        if (rc == 0) {
            atomic_fetch_add(&outer_waits, 1);
            rc = vsched_wait(h, NULL);
            vsched_handle_release(h);
        }
        atomic_store(&outer_rc, rc);
    }
}

static const memfs_file two[] = {{"outer.c", "int o;\n"},
                                 {"inner.c", "int i;\n"},
                                 {"fresh.c", "int f;\n"},
                                 {NULL, NULL}};

enum {
    OP_RESET,
    OP_REMOVE,
    OP_INVALIDATE,
    OP_CANCEL
};

static void supersede_while_waiting(int op)
{
    world w;
    int base = settled_tasks();
    gate_reset();
    wstart(&w, two, 1, 1, 0);
    cur = w.s;
    atomic_store(&outer_rc, -999);
    hook = outer_waits_inner;
    vsched_handle *ho = sub(w.s, "outer.c", VSCHED_STAGE_ARTIFACT);
    CU_ASSERT_FATAL(gate_wait_entered(1, 5000));
    switch (op) {
    case OP_RESET: vsched_reset(w.s); break;
    case OP_REMOVE: CU_ASSERT_EQUAL(vsched_remove(w.s, "inner.c"), 0); break;
    case OP_INVALIDATE:
        CU_ASSERT_EQUAL(vsched_invalidate(w.s, "inner.c"), 0);
        break;
    case OP_CANCEL: vsched_cancel(w.s, "cancelled while waiting"); break;
    }
    int rc = bounded_wait(ho, 5000, "outer after supersession");
    CU_ASSERT(op == OP_RESET || op == OP_CANCEL ? rc != 0 : rc == 0);
    if (op == OP_REMOVE)
        CU_ASSERT_EQUAL(atomic_load(&outer_rc), VSCHED_ESHUTDOWN);
    gate_open();
    /* Fresh work completes: the runner counts did not drift. */
    for (int k = 0; k < 20; k++) {
        vsched_handle *hf = sub(w.s, "fresh.c", VSCHED_STAGE_ARTIFACT);
        CU_ASSERT_EQUAL(bounded_wait(hf, 5000, "fresh after supersession"), 0);
        vsched_handle_release(hf);
        CU_ASSERT_EQUAL(vsched_invalidate(w.s, "fresh.c"), 0);
    }
    vsched_handle_release(ho);
    /* Threads: 1 cpu + 1 io + driver, no stand-in left. */
    int now = tasks_back_to(base + 3, 2000);
    CU_ASSERT_EQUAL(now, base + 3);
    if (now != base + 3)
        fprintf(stderr, "threads: %d, expected %d\n", now, base + 3);
    hook = NULL;
    wstop(&w);
    CU_ASSERT_EQUAL(tasks_back_to(base, 2000), base);
}

static void reset_while_waiting(void)
{
    supersede_while_waiting(OP_RESET);
}
static void remove_while_waiting(void)
{
    supersede_while_waiting(OP_REMOVE);
}
static void invalidate_while_waiting(void)
{
    supersede_while_waiting(OP_INVALIDATE);
}
static void cancel_while_waiting(void)
{
    supersede_while_waiting(OP_CANCEL);
}

/* Destroy the scheduler while outer.c's Analysis waits (its target held),
 * then destroy the pools at once. */
static void destroy_while_waiting(void)
{
    for (int round = 0; round < 20; round++) {
        world w;
        int base = settled_tasks();
        gate_reset();
        wstart(&w, two, 1 + round % 3, 1, 0);
        cur = w.s;
        atomic_store(&outer_rc, -999);
        hook = outer_waits_inner;
        vsched_handle *ho = sub(w.s, "outer.c", VSCHED_STAGE_ARTIFACT);
        CU_ASSERT_FATAL(gate_wait_entered(1, 5000));
        vsched_destroy(w.s);
        if (atomic_load(&outer_rc) != VSCHED_ESHUTDOWN)
            fprintf(stderr, "round %d: outer_rc %d (%s) waits %d\n", round,
                    atomic_load(&outer_rc),
                    vsched_errname(atomic_load(&outer_rc)),
                    atomic_load(&outer_waits));
        /* A target that completed while destroy began may answer 0. */
        CU_ASSERT(atomic_load(&outer_rc) == VSCHED_ESHUTDOWN ||
                  atomic_load(&outer_rc) == 0);
        vsched_handle_release(ho);
        vsched_pool_destroy(w.cpu);
        vsched_pool_destroy(w.io);
        hook = NULL;
        CU_ASSERT_EQUAL(tasks_back_to(base, 2000), base);
    }
}

/* ---- 2: deep nested waits ------------------------------------------------ */

static char chain_names[64][16];
static memfs_file chain[65];
static int chain_len;

static void make_chain(int n)
{
    chain_len = n;
    for (int i = 0; i < n; i++) {
        snprintf(chain_names[i], sizeof chain_names[i], "f%02d.c", i);
        chain[i] = (memfs_file){chain_names[i], "int x;\n"};
    }
    chain[n] = (memfs_file){NULL, NULL};
}

static atomic_int chain_stage = 'A';

/* fN's chain_stage waits on f(N-1)'s Artifact. */
static void chain_hook(char stage, const char *name, const vsched_ctx *ctx)
{
    (void)ctx;
    if (stage != atomic_load(&chain_stage) || name[0] != 'f')
        return;
    int n = atoi(name + 1);
    if (n == 0)
        return;
    vsched_request r = req(chain_names[n - 1], VSCHED_STAGE_ARTIFACT);
    vsched_handle *h = NULL;
    CU_ASSERT_FATAL(vsched_submit_request(cur, &r, &h) == 0);
    const vsched_result *res;
    CU_ASSERT_EQUAL(vsched_wait(h, &res), 0);
    CU_ASSERT(res->started_ns <= res->finished_ns);
    vsched_handle_release(h);
}

static void deep_nested_waits(char stage, unsigned threads, int depth)
{
    world w;
    int base = settled_tasks();
    make_chain(depth);
    wstart(&w, chain, threads, 1, 0);
    cur = w.s;
    atomic_store(&chain_stage, stage);
    hook = chain_hook;
    for (int round = 0; round < 5; round++) {
        vsched_handle *h =
            sub(w.s, chain_names[depth - 1], VSCHED_STAGE_ARTIFACT);
        CU_ASSERT_EQUAL(bounded_wait(h, 20000, "deep chain"), 0);
        const vsched_result *r;
        vsched_wait(h, &r);
        CU_ASSERT(r->started_ns <= r->finished_ns);
        vsched_handle_release(h);
        vsched_reset(w.s);
    }
    int want = base + (int)threads + 1 + 1;
    int now = tasks_back_to(want, 3000);
    if (now != want)
        fprintf(stderr, "threads after deep chain: %d, expected %d\n", now,
                want);
    CU_ASSERT_EQUAL(now, want);
    wstop(&w);
    CU_ASSERT_EQUAL(tasks_back_to(base, 2000), base);
}

static void deep_nested_waits_in_analysis(void)
{
    deep_nested_waits('A', 1, 40);
}
static void deep_nested_waits_in_artifact_2_threads(void)
{
    deep_nested_waits('R', 2, 40);
}
static void deep_nested_waits_in_loads(void)
{
    deep_nested_waits('L', 1, 30);
}
static void deep_nested_waits_in_parses(void)
{
    deep_nested_waits('S', 1, 30);
}

/* ---- 3: two schedulers on one pool --------------------------------------- */

static vsched *s_a, *s_b;

/* On s_a, x.c's Analysis waits for s_b's y.c Artifact; on s_b, y.c's
 * Analysis waits for s_a's z.c Artifact. */
static void cross_hook(char stage, const char *name, const vsched_ctx *ctx)
{
    (void)ctx;
    if (stage != 'A')
        return;
    vsched *target = NULL;
    const char *what = NULL;
    if (strcmp(name, "x.c") == 0) {
        target = s_b;
        what = "y.c";
    } else if (strcmp(name, "y.c") == 0) {
        target = s_a;
        what = "z.c";
    } else {
        return;
    }
    vsched_request r = req(what, VSCHED_STAGE_ARTIFACT);
    vsched_handle *h = NULL;
    CU_ASSERT_FATAL(vsched_submit_request(target, &r, &h) == 0);
    CU_ASSERT_EQUAL(vsched_wait(h, NULL), 0);
    vsched_handle_release(h);
}

static const memfs_file xyz[] = {{"x.c", "int x;\n"},
                                 {"y.c", "int y;\n"},
                                 {"z.c", "int z;\n"},
                                 {NULL, NULL}};

static void two_schedulers_share_a_pool_and_wait_on_each_other(void)
{
    int base = settled_tasks();
    vsched_pool *cpu, *io;
    fs.files = xyz;
    CU_ASSERT_FATAL(vsched_pool_create(&cpu, VSCHED_POOL_CPU, 1, 0) == 0);
    CU_ASSERT_FATAL(vsched_pool_create(&io, VSCHED_POOL_IO, 1, 1) == 0);
    s_a = make_sched(cpu, io);
    s_b = make_sched(cpu, io);
    hook = cross_hook;
    for (int round = 0; round < 50; round++) {
        vsched_handle *h = sub(s_a, "x.c", VSCHED_STAGE_ARTIFACT);
        CU_ASSERT_EQUAL(bounded_wait(h, 10000, "cross schedulers"), 0);
        vsched_handle_release(h);
        vsched_reset(s_a);
        vsched_reset(s_b);
    }
    int want = base + 1 + 1 + 2;
    int now = tasks_back_to(want, 3000);
    if (now != want)
        fprintf(stderr, "threads after cross: %d, expected %d\n", now, want);
    CU_ASSERT_EQUAL(now, want);
    hook = NULL;
    vsched_destroy(s_a);
    vsched_destroy(s_b);
    vsched_pool_destroy(cpu);
    vsched_pool_destroy(io);
}

/* ---- 4: DAG jobs that wait ---------------------------------------------- */

static uint64_t wait_for_id;
static atomic_int jwait_rc = -999;
static atomic_int jdag_rc = -999, jdag_adm = -999;

static void job_hook(char stage, const char *name, const vsched_ctx *ctx)
{
    (void)ctx;
    if (stage != 'J')
        return;
    if (strcmp(name, "held") == 0) {
        gate_pass(ctx);
    } else if (strcmp(name, "waiter") == 0) {
        vsched_node_info info;
        int rc = vsched_node_wait(cur, wait_for_id, &info);
        if (rc == 0)
            vsched_node_info_clear(&info);
        atomic_store(&jwait_rc, rc);
    } else if (strcmp(name, "filewaiter") == 0) {
        vsched_request r = req("x.c", VSCHED_STAGE_ARTIFACT);
        vsched_handle *h = NULL;
        CU_ASSERT_FATAL(vsched_submit_request(cur, &r, &h) == 0);
        atomic_store(&jwait_rc, vsched_wait(h, NULL));
        vsched_handle_release(h);
    } else if (strcmp(name, "submitter") == 0) {
        /* A blocking submit from a job: documented not to wait. */
        vsched_node_spec n[3];
        for (int i = 0; i < 3; i++)
            n[i] = (vsched_node_spec){.what = VSCHED_SPEC_JOB,
                                      .kind = "test",
                                      .name = "sub",
                                      .parent = VSCHED_REF_NONE};
        uint64_t ids[3];
        vsched_admission adm = -1;
        vsched_dag d = {.nodes = n, .n_nodes = 3, .block = 1};
        atomic_store(&jdag_rc, vsched_submit_dag(cur, &d, ids, &adm, NULL));
        atomic_store(&jdag_adm, (int)adm);
    }
}

static vsched_node_spec job(const char *name)
{
    return (vsched_node_spec){.what = VSCHED_SPEC_JOB,
                              .kind = "test",
                              .name = name,
                              .parent = VSCHED_REF_NONE};
}

static int poll_terminal(vsched *s, uint64_t id, int ms)
{
    for (int i = 0; i < ms; i++) {
        vsched_node_info info;
        if (vsched_node_get(s, id, &info) == 0) {
            int st = info.state;
            vsched_node_info_clear(&info);
            if (st >= VSCHED_NODE_DONE)
                return st;
        }
        sleep_ms(1);
    }
    fprintf(stderr, "HANG: node %llu not terminal\n", (unsigned long long)id);
    if (getenv("VSCHED_TEST_PAUSE") != NULL)
        pause();
    _exit(3);
}

/* A job waits (vsched_node_wait) on a job queued behind it, ready
 * capacity 1, one CPU thread. */
static void a_job_waits_on_a_job_queued_behind_it(void)
{
    world w;
    next_ready_capacity = 1;
    wstart(&w, xyz, 1, 1, 0);
    cur = w.s;
    hook = job_hook;
    for (int round = 0; round < 30; round++) {
        /* waiter first (priority 5), then target: the target is queued
         * behind the waiter. */
        /* Make the target's id known before the waiter runs: submit the
         * target held back behind a gate job. */
        vsched_node_spec g = job("gatekeeper");
        uint64_t gid;
        vsched_admission adm;
        vsched_dag d1 = {.nodes = &g, .n_nodes = 1};
        CU_ASSERT_FATAL(vsched_submit_dag(w.s, &d1, &gid, &adm, NULL) == 0);
        uint64_t tid;
        vsched_node_spec t = job("target");
        vsched_edge_spec e = {VSCHED_REF_ID(gid), 0, VSCHED_GATE_AFTER_ANY};
        vsched_dag d2 = {.nodes = &t, .n_nodes = 1, .edges = &e, .n_edges = 1};
        CU_ASSERT_FATAL(vsched_submit_dag(w.s, &d2, &tid, &adm, NULL) == 0);
        wait_for_id = tid;
        uint64_t wid;
        vsched_node_spec wn = job("waiter");
        wn.priority = 5;
        vsched_dag d3 = {.nodes = &wn, .n_nodes = 1, .block = 1};
        CU_ASSERT_FATAL(vsched_submit_dag(w.s, &d3, &wid, &adm, NULL) == 0);
        CU_ASSERT_EQUAL(poll_terminal(w.s, wid, 10000), VSCHED_NODE_DONE);
        CU_ASSERT_EQUAL(atomic_load(&jwait_rc), 0);
        CU_ASSERT_EQUAL(poll_terminal(w.s, tid, 10000), VSCHED_NODE_DONE);
        vsched_node_info info;
        CU_ASSERT_EQUAL(vsched_node_get(w.s, wid, &info), 0);
        CU_ASSERT(info.started_ns <= info.finished_ns);
        vsched_node_info_clear(&info);
    }
    wstop(&w);
}

/* A job waits for a file's Artifact; a job submits a DAG blocking. */
static void jobs_wait_on_files_and_submit(void)
{
    world w;
    next_ready_capacity = 1;
    wstart(&w, xyz, 1, 1, 1);
    cur = w.s;
    hook = job_hook;
    for (int round = 0; round < 30; round++) {
        vsched_node_spec n[2] = {job("filewaiter"), job("submitter")};
        uint64_t ids[2];
        vsched_admission adm;
        vsched_dag d = {.nodes = n, .n_nodes = 2, .block = 1};
        CU_ASSERT_FATAL(vsched_submit_dag(w.s, &d, ids, &adm, NULL) == 0);
        CU_ASSERT_EQUAL(poll_terminal(w.s, ids[0], 10000), VSCHED_NODE_DONE);
        CU_ASSERT_EQUAL(poll_terminal(w.s, ids[1], 10000), VSCHED_NODE_DONE);
        CU_ASSERT_EQUAL(atomic_load(&jwait_rc), 0);
        CU_ASSERT_EQUAL(atomic_load(&jdag_rc), 0);
        vsched_invalidate(w.s, "x.c");
    }
    wstop(&w);
}

/* ---- 5: the stand-in cap ------------------------------------------------- */

/* Two stages wait at once with a cap of one stand-in: the first waits on
 * the gate (main opens it), the second on fresh work. */
static void capped_stand_ins_progress_once_a_waiter_returns(void)
{
    world w;
    wstart(&w, two, 1, 1, 0);
    cur = w.s;
    vsched__test_pool_standins(w.cpu, 1);
    gate_reset();
    hook = outer_waits_inner;
    vsched_handle *ho = sub(w.s, "outer.c", VSCHED_STAGE_ARTIFACT);
    CU_ASSERT_FATAL(gate_wait_entered(1, 5000));
    /* inner.c's Artifact (on the stand-in) is held; outer.c waits. The
     * pool now has its one stand-in busy: another wait finds no room. */
    sleep_ms(50);
    gate_open();
    CU_ASSERT_EQUAL(bounded_wait(ho, 5000, "capped"), 0);
    vsched_handle_release(ho);
    wstop(&w);
}

/* ---- 6: churn of many block/unblock cycles ------------------------------ */

static char churn_names[200][16];
static memfs_file churn[201];

static void churn_hook(char stage, const char *name, const vsched_ctx *ctx)
{
    (void)ctx;
    if (name[0] != 'c')
        return;
    int n = atoi(name + 1);
    if (n < 2 ||
        (stage != 'A' && stage != 'R' && stage != 'L' && stage != 'S'))
        return;
    if ((n + stage) % 3 != 0)
        return;
    int a = (n * 7 + stage) % n, b = (n * 13 + stage) % n;
    vsched_request r[2] = {req(churn_names[a], VSCHED_STAGE_ARTIFACT),
                           req(churn_names[b], VSCHED_STAGE_ANALYSIS)};
    vsched_batch *bt = NULL;
    if (vsched_submit_batch(cur, r, 2, &bt) == 0) {
        const vsched_result *res[2];
        int rc = vsched_wait_batch(bt, res);
        if (rc == 0)
            for (int i = 0; i < 2; i++)
                CU_ASSERT(res[i]->started_ns <= res[i]->finished_ns);
        vsched_batch_release(bt);
    }
}

static void many_block_cycles_return_to_pool_size(void)
{
    for (int i = 0; i < 200; i++) {
        snprintf(churn_names[i], sizeof churn_names[i], "c%03d.c", i);
        churn[i] = (memfs_file){churn_names[i], "int c;\n"};
    }
    churn[200] = (memfs_file){NULL, NULL};
    int base = settled_tasks();
    world w;
    wstart(&w, churn, 3, 2, 2);
    cur = w.s;
    hook = churn_hook;
    for (int round = 0; round < 10; round++) {
        vsched_request r[200];
        for (int i = 0; i < 200; i++)
            r[i] = req(churn_names[i], VSCHED_STAGE_ARTIFACT);
        vsched_batch *b = NULL;
        CU_ASSERT_FATAL(vsched_submit_batch(w.s, r, 200, &b) == 0);
        const vsched_result *res[200];
        CU_ASSERT_EQUAL(vsched_wait_batch(b, res), 0);
        for (int i = 0; i < 200; i++)
            CU_ASSERT(res[i]->started_ns <= res[i]->finished_ns);
        vsched_batch_release(b);
        if (round % 2 == 0)
            vsched_reset(w.s);
        else
            for (int i = 0; i < 200; i += 3)
                vsched_invalidate(w.s, churn_names[i]);
    }
    int want = base + 3 + 2 + 1;
    int now = tasks_back_to(want, 3000);
    if (now != want)
        fprintf(stderr, "threads after churn: %d, expected %d\n", now, want);
    CU_ASSERT_EQUAL(now, want);
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    CU_ASSERT_EQUAL(st.waiters, 0);
    wstop(&w);
    CU_ASSERT_EQUAL(tasks_back_to(base, 2000), base);
}

/* ---- 7: a host task on the scheduler's pool waits ------------------------ */

static atomic_int host_done;

static void host_task(void *arg)
{
    (void)arg;
    vsched_handle *h = sub(cur, "f05.c", VSCHED_STAGE_ARTIFACT);
    CU_ASSERT_EQUAL(vsched_wait(h, NULL), 0);
    vsched_handle_release(h);
    atomic_fetch_add(&host_done, 1);
}

static void host_tasks_fill_the_pool_and_wait(void)
{
    world w;
    make_chain(10);
    wstart(&w, chain, 2, 1, 0);
    cur = w.s;
    atomic_store(&chain_stage, 'A');
    hook = chain_hook;
    atomic_store(&host_done, 0);
    int sent = 0;
    for (int i = 0; i < 8; i++)
        sent += vsched_pool_try_submit(w.cpu, host_task, NULL) == 0;
    for (int i = 0; i < 10000 && atomic_load(&host_done) < sent; i++)
        sleep_ms(1);
    if (atomic_load(&host_done) < sent) {
        fprintf(stderr, "HANG: host tasks %d/%d\n", atomic_load(&host_done),
                sent);
        if (getenv("VSCHED_TEST_PAUSE") != NULL)
            pause();
        _exit(3);
    }
    wstop(&w);
}

/* ---- 9: task observer times ----------------------------------------------- */

static atomic_int bad_times;

static void times_observer(void *user, const vsched_task_event *ev)
{
    (void)user;
    if (ev->started_ns > ev->finished_ns)
        atomic_fetch_add(&bad_times, 1);
}

static void task_times_are_ordered_under_nested_waits(void)
{
    world w;
    make_chain(30);
    next_task_observer = times_observer;
    atomic_store(&bad_times, 0);
    wstart(&w, chain, 1, 1, 0);
    cur = w.s;
    atomic_store(&chain_stage, 'A');
    hook = chain_hook;
    vsched_handle *h = sub(w.s, chain_names[29], VSCHED_STAGE_ARTIFACT);
    CU_ASSERT_EQUAL(bounded_wait(h, 20000, "task times"), 0);
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(atomic_load(&bad_times), 0);
    wstop(&w);
}

/* ---- 10: blocked rests and the transport's ring ------------------------- */

static vsched *s_other;
static atomic_int rest_blocked;

/* b*'s Analysis waits for g.c's Artifact on another scheduler (held at
 * the gate there). */
static void rest_hook(char stage, const char *name, const vsched_ctx *ctx)
{
    if (stage == 'R' && strcmp(name, "g.c") == 0) {
        gate_pass(ctx);
        return;
    }
    if (stage != 'A' || name[0] != 'b')
        return;
    vsched_request r = req("g.c", VSCHED_STAGE_ARTIFACT);
    vsched_handle *h = NULL;
    CU_ASSERT_FATAL(vsched_submit_request(s_other, &r, &h) == 0);
    atomic_fetch_add(&rest_blocked, 1);
    CU_ASSERT_EQUAL(vsched_wait(h, NULL), 0);
    vsched_handle_release(h);
}

static atomic_int host_hold;
static atomic_int host_runs[64];

static void holding_task(void *arg)
{
    (void)arg;
    atomic_store(&host_hold, 2);
    while (atomic_load(&host_hold) == 2)
        sleep_ms(1);
}

static void counting_task(void *arg)
{
    atomic_fetch_add(&host_runs[(intptr_t)arg], 1);
}

static const memfs_file bfiles[] = {
    {"w0.c", "int w;\n"}, {"w1.c", "int w;\n"}, {"w2.c", "int w;\n"},
    {"b0.c", "int b;\n"}, {"b1.c", "int b;\n"}, {"b2.c", "int b;\n"},
    {"b3.c", "int b;\n"}, {"b4.c", "int b;\n"}, {"b5.c", "int b;\n"},
    {"b6.c", "int b;\n"}, {"b7.c", "int b;\n"}, {"g.c", "int g;\n"},
    {NULL, NULL}};
static const char *const bnames[8] = {"b0.c", "b1.c", "b2.c", "b3.c",
                                      "b4.c", "b5.c", "b6.c", "b7.c"};

static void hold_cpu(vsched_pool *p)
{
    atomic_store(&host_hold, 1);
    CU_ASSERT_FATAL(vsched_pool_try_submit(p, holding_task, NULL) == 0);
    while (atomic_load(&host_hold) != 2)
        sleep_ms(1);
}

static int ready_is(vsched *s, int cpu, size_t n)
{
    for (int i = 0; i < 5000 && vsched__test_ready(s, cpu) != n; i++)
        sleep_ms(1);
    return vsched__test_ready(s, cpu) == n;
}

/* Eight Analyses taken in one batch on the only CPU worker each wait in
 * turn: the first on the worker, each later one on the stand-in that ran
 * the rest of the batch (an urgent job, outside the ring). The pool
 * counts eight blocked workers and admits eight more ring tasks than its
 * capacity -- but only one blocked worker holds a ring slot. */
static void blocked_rests_do_not_overfill_the_ring(void)
{
    world w;
    gate_reset();
    wstart(&w, bfiles, 1, 1, 0);
    vsched_pool *cpu2, *io2;
    CU_ASSERT_FATAL(vsched_pool_create(&cpu2, VSCHED_POOL_CPU, 1, 0) == 0);
    CU_ASSERT_FATAL(vsched_pool_create(&io2, VSCHED_POOL_IO, 1, 0) == 0);
    s_other = make_sched(cpu2, io2);
    cur = w.s;
    /* Analyses known to be short; b* parsed. */
    for (int i = 0; i < 3; i++) {
        vsched_handle *h = sub(w.s, bfiles[i].name, VSCHED_STAGE_ANALYSIS);
        CU_ASSERT_EQUAL(vsched_wait(h, NULL), 0);
        vsched_handle_release(h);
    }
    for (int i = 0; i < 8; i++) {
        vsched_handle *h = sub(w.s, bnames[i], VSCHED_STAGE_SOURCE);
        CU_ASSERT_EQUAL(vsched_wait(h, NULL), 0);
        vsched_handle_release(h);
    }
    hook = rest_hook;
    atomic_store(&rest_blocked, 0);
    hold_cpu(w.cpu);
    vsched_handle *hb[8];
    for (int i = 0; i < 8; i++)
        hb[i] = sub(w.s, bnames[i], VSCHED_STAGE_ANALYSIS);
    CU_ASSERT_FATAL(ready_is(w.s, 1, 8));
    atomic_store(&host_hold, 0); /* the runner takes all eight */
    for (int i = 0; i < 5000 && atomic_load(&rest_blocked) < 8; i++)
        sleep_ms(1);
    fprintf(stderr, "\n  blocked in Analyses: %d\n",
            atomic_load(&rest_blocked));
    CU_ASSERT_FATAL(gate_wait_entered(1, 5000));
    sleep_ms(50);
    /* One able thread (the last stand-in): hold it, then queue tasks. */
    hold_cpu(w.cpu);
    int accepted = 0;
    for (intptr_t i = 0; i < 64; i++) {
        atomic_store(&host_runs[i], 0);
        if (vsched_pool_try_submit(w.cpu, counting_task, (void *)i) != 0)
            break;
        accepted++;
    }
    fprintf(stderr, "  accepted %d host tasks (capacity %d)\n", accepted, 4);
    atomic_store(&host_hold, 0);
    sleep_ms(200);
    int lost = 0, dup = 0;
    for (int i = 0; i < accepted; i++) {
        int r = atomic_load(&host_runs[i]);
        lost += r == 0;
        dup += r > 1;
        if (r != 1)
            fprintf(stderr, "  host task %d ran %d times\n", i, r);
    }
    CU_ASSERT_EQUAL(lost, 0);
    CU_ASSERT_EQUAL(dup, 0);
    gate_open();
    for (int i = 0; i < 8; i++) {
        CU_ASSERT_EQUAL(bounded_wait(hb[i], 5000, "blocked rests"), 0);
        vsched_handle_release(hb[i]);
    }
    vsched_destroy(s_other);
    vsched_pool_destroy(cpu2);
    vsched_pool_destroy(io2);
    wstop(&w);
}

/* ---- 11: a join callback admitted on a pool worker waits ----------------- */

static atomic_int join_on_pool, join_finished;

static void join_waits2(void *user, const char *name, vsched_stage st)
{
    (void)user;
    (void)name;
    (void)st;
    if (vsched_pool_current_kind() < 0)
        return;
    atomic_fetch_add(&join_on_pool, 1);
    vsched_handle *h = sub(cur, "z.c", VSCHED_STAGE_ARTIFACT);
    CU_ASSERT(vsched_wait(h, NULL) == 0);
    vsched_handle_release(h);
    atomic_fetch_add(&join_finished, 1);
}

static vsched_handle *joined_h;

static void join_hook(char stage, const char *name, const vsched_ctx *ctx)
{
    if (stage == 'L' && strcmp(name, "qh.h") == 0) {
        gate_pass(ctx);
        return;
    }
    if (stage == 'A' && strcmp(name, "p.c") == 0) {
        vsched_request r = req("q.c", VSCHED_STAGE_ANALYSIS);
        r.on_join = join_waits2;
        CU_ASSERT_FATAL(vsched_submit_request(cur, &r, &joined_h) == 0);
    }
}

static const memfs_file jfiles[] = {{"p.c", "int p;\n"},
                                    {"q.c", "blocker qh.h\n"},
                                    {"qh.h", "int qh;\n"},
                                    {"z.c", "int z;\n"},
                                    {NULL, NULL}};

static void a_join_callback_on_a_pool_worker_waits(void)
{
    world w;
    wstart(&w, jfiles, 1, 2, 0);
    cur = w.s;
    hook = join_hook;
    atomic_store(&join_on_pool, 0);
    atomic_store(&join_finished, 0);
    for (int round = 0; round < 200; round++) {
        gate_reset();
        joined_h = NULL;
        vsched_handle *hq = sub(w.s, "q.c", VSCHED_STAGE_ANALYSIS);
        CU_ASSERT_FATAL(gate_wait_entered(1, 5000));
        vsched_handle *hp = sub(w.s, "p.c", VSCHED_STAGE_ARTIFACT);
        int before = atomic_load(&join_on_pool);
        int fin = atomic_load(&join_finished);
        CU_ASSERT_EQUAL(bounded_wait(hp, 5000, "p.c"), 0);
        for (int i = 0; i < 3000 && atomic_load(&join_on_pool) > before &&
                        atomic_load(&join_finished) == fin;
             i++)
            sleep_ms(1);
        if (atomic_load(&join_on_pool) > before &&
            atomic_load(&join_finished) == fin) {
            fprintf(stderr,
                    "HANG: round %d: a join callback on a pool "
                    "worker waits for z.c forever (pid %d)\n",
                    round, (int)getpid());
            if (getenv("VSCHED_TEST_PAUSE") != NULL)
                pause();
            _exit(3);
        }
        gate_open();
        CU_ASSERT_EQUAL(bounded_wait(hq, 5000, "q.c"), 0);
        vsched_handle_release(hq);
        vsched_handle_release(hp);
        if (joined_h != NULL) {
            bounded_wait(joined_h, 5000, "joined q.c");
            vsched_handle_release(joined_h);
        }
        vsched_reset(w.s);
    }
    fprintf(stderr, "\n  joins on a pool worker: %d\n",
            atomic_load(&join_on_pool));
    wstop(&w);
}

/* ---- 12: a wait that starts while its scheduler is destroyed ------------- */

static vsched_handle *race_h;
static atomic_int race_rc = -999;

static void fresh_gate(char stage, const char *name, const vsched_ctx *ctx)
{
    if (stage == 'A' && strcmp(name, "fresh.c") == 0)
        gate_pass(ctx);
}

static void *late_waiter(void *arg)
{
    (void)arg;
    atomic_store(&race_rc, vsched_wait(race_h, NULL));
    return NULL;
}

/* A burst of blocking host tasks on a pool of their own, then none: the
 * stand-ins leave, and so do their stacks. An exiting stand-in joins the
 * one that exited before it, so one exited thread at most is left to
 * join; before, every exited one stayed unjoined (its stack mapped) until
 * the pool's next block or destroy: 199 of them, 1.6 GB of address space
 * here. */
static atomic_int burst_started, burst_done;
static vsched *burst_target;

static void burst_gate(char stage, const char *name, const vsched_ctx *ctx)
{
    if (stage == 'R' && strcmp(name, "inner.c") == 0)
        gate_pass(ctx);
}

static atomic_int burst_linger; /* stand-ins stay 100 ms after the wait */

static void burst_task(void *arg)
{
    (void)arg;
    atomic_fetch_add(&burst_started, 1);
    vsched_handle *h = sub(burst_target, "inner.c", VSCHED_STAGE_ARTIFACT);
    vsched_wait(h, NULL);
    vsched_handle_release(h);
    if (atomic_load(&burst_linger) && vsched_pool_current_worker() != 0)
        sleep_ms(100);
    atomic_fetch_add(&burst_done, 1);
}

static int reaches(atomic_int *v, int n, int ms)
{
    for (int i = 0; i < ms && atomic_load(v) < n; i++)
        sleep_ms(1);
    return atomic_load(v) >= n;
}

/* A world, and a host pool of one thread (transport capacity cap) whose n
 * tasks each wait on inner.c's held Artifact: returns once all started,
 * the first on the worker, each next on the stand-in the one before got. */
static vsched_pool *burst_start(world *w, size_t cap, int n, int linger)
{
    gate_reset();
    wstart(w, two, 1, 1, 0);
    burst_target = w->s;
    hook = burst_gate;
    vsched_pool *p;
    CU_ASSERT_FATAL(vsched_pool_create(&p, VSCHED_POOL_IO, 1, cap) == 0);
    atomic_store(&burst_started, 0);
    atomic_store(&burst_done, 0);
    atomic_store(&burst_linger, linger);
    int sent = 0;
    for (int i = 0; i < n; i++)
        sent += vsched_pool_try_submit(p, burst_task, NULL) == 0;
    CU_ASSERT_FATAL(sent == n);
    CU_ASSERT_FATAL(reaches(&burst_started, n, 10000));
    return p;
}

static void stand_ins_leave_with_their_stacks(void)
{
    world w;
    int base = settled_tasks();
    vsched_pool *p = burst_start(&w, 512, 200, 0);
    gate_open();
    CU_ASSERT_FATAL(reaches(&burst_done, 200, 10000));
    /* The scheduler's 2 workers and driver, the pool's 1 worker. */
    CU_ASSERT_EQUAL(tasks_back_to(base + 4, 5000), base + 4);
    CU_ASSERT(vsched__test_pool_unjoined(p) <= 1);
    vsched_pool_destroy(p);
    wstop(&w);
}

/* A pool destroyed while its stand-ins still run the tasks they took:
 * each stand-in, leaving, joins the one that left before it, and destroy
 * joins those it found; a thread joined by both was joined and freed
 * twice (a double free, 1 run in several thousand of the chain tests).
 * The worker's task returns at once, so destroy gets past the workers
 * while the stand-ins' tasks still sleep; they leave after it took the
 * list. */
static void a_pool_destroyed_while_its_stand_ins_run(void)
{
    enum {
        TASKS = 6
    };
    for (int round = 0; round < 3; round++) {
        world w;
        int base = settled_tasks();
        /* Each task waits on the worker or a stand-in of its own. */
        vsched_pool *p = burst_start(&w, 64, TASKS, 1);
        gate_open();
        vsched_pool_destroy(p);
        CU_ASSERT_EQUAL(atomic_load(&burst_done), TASKS);
        wstop(&w);
        CU_ASSERT_EQUAL(tasks_back_to(base, 5000), base);
    }
}

/* ---- teardown with the driver held ---------------------------------------
 * A join callback holds the driver (it runs there: the request joined a
 * stage in flight), so what is submitted meanwhile stays in the inbox,
 * and destroy, which joins the driver, is held before it answers
 * anything. */
static pthread_mutex_t d_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t d_cond = PTHREAD_COND_INITIALIZER;
static int d_held, d_free, d_on_pool;

static void hold_driver(void *user, const char *name, vsched_stage st)
{
    (void)user, (void)name, (void)st;
    pthread_mutex_lock(&d_lock);
    d_held = 1;
    d_on_pool = vsched_pool_current_kind() != -1;
    pthread_cond_broadcast(&d_cond);
    while (!d_free)
        pthread_cond_wait(&d_cond, &d_lock);
    pthread_mutex_unlock(&d_lock);
}

/* Join the stage of `name` held in the gate with a request whose join
 * callback holds the driver; returns when it does. */
static vsched_handle *driver_hold(vsched *s, const char *name)
{
    pthread_mutex_lock(&d_lock);
    d_held = d_free = 0;
    pthread_mutex_unlock(&d_lock);
    vsched_request r = req(name, VSCHED_STAGE_ANALYSIS);
    r.on_join = hold_driver;
    vsched_handle *h = NULL;
    CU_ASSERT_FATAL(vsched_submit_request(s, &r, &h) == 0);
    pthread_mutex_lock(&d_lock);
    while (!d_held)
        pthread_cond_wait(&d_cond, &d_lock);
    pthread_mutex_unlock(&d_lock);
    CU_ASSERT_FALSE(d_on_pool); /* the driver it holds */
    return h;
}

static void driver_free(void)
{
    raise_flag(&d_lock, &d_cond, &d_free);
}

static vsched *td_sched;
static atomic_int td_done, td_submitted, td_inner_rc;

static void *destroyer(void *arg)
{
    (void)arg;
    vsched_destroy(td_sched);
    atomic_store(&td_done, 1);
    return NULL;
}

/* After the destroy: the held stage's request (ho) and the one that held
 * the driver (hj) were both answered as shut down; the pools go. */
static void held_teardown_end(world *w, vsched_handle *ho, vsched_handle *hj)
{
    CU_ASSERT_EQUAL(vsched_wait(ho, NULL), VSCHED_ESHUTDOWN);
    CU_ASSERT_EQUAL(vsched_wait(hj, NULL), VSCHED_ESHUTDOWN);
    vsched_handle_release(ho);
    vsched_handle_release(hj);
    vsched_pool_destroy(w->cpu);
    vsched_pool_destroy(w->io);
    hook = NULL;
}

/* outer.c's Analysis, once let through, submits inner.c's, and waits on
 * it once teardown began: the request is still in the inbox, behind the
 * held driver (and the wait's hand-over of its batch admits nothing once
 * teardown began). */
static void outer_submits_and_waits(char stage, const char *name,
                                    const vsched_ctx *ctx)
{
    if (stage != 'A' || strcmp(name, "outer.c") != 0)
        return;
    gate_pass(NULL);
    vsched_request r = req("inner.c", VSCHED_STAGE_ANALYSIS);
    vsched_handle *h = NULL;
    int rc = vsched_submit_request(td_sched, &r, &h);
    atomic_store(&td_submitted, 1);
    if (rc == VSCHED_OK) {
        /* Other work until teardown begins; then the wait. */
        for (int i = 0; i < 5000 && !ctx->is_cancelled(ctx); i++)
            sleep_ms(1);
        rc = vsched_wait(h, NULL);
        vsched_handle_release(h);
    }
    atomic_store(&td_inner_rc, rc);
}

/* Destroy stops the driver, which leaves what is still in the inbox; a
 * stage waits on one of those requests. destroy answered the inbox only
 * after every runner had returned -- the waiting one never did: a hang
 * (found by a stage submitting and waiting in a loop while destroyed, 15%
 * of destroys). */
static void destroy_answers_the_inbox_a_stage_waits_on(void)
{
    world w;
    int base = settled_tasks();
    gate_reset();
    wstart(&w, two, 1, 1, 0);
    td_sched = w.s;
    atomic_store(&td_done, 0);
    atomic_store(&td_submitted, 0);
    atomic_store(&td_inner_rc, 1);
    hook = outer_submits_and_waits;
    vsched_handle *ho = sub(w.s, "outer.c", VSCHED_STAGE_ANALYSIS);
    CU_ASSERT_FATAL(gate_wait_entered(1, 5000));
    vsched_handle *hj = driver_hold(w.s, "outer.c");
    gate_open(); /* the stage submits inner.c behind the held driver */
    for (int i = 0; i < 5000 && !atomic_load(&td_submitted); i++)
        sleep_ms(1);
    CU_ASSERT_FATAL(atomic_load(&td_submitted));
    pthread_t th;
    pthread_create(&th, NULL, destroyer, NULL);
    sleep_ms(50); /* destroy stops the inbox, then joins the driver */
    driver_free();
    for (int i = 0; i < 10000 && !atomic_load(&td_done); i++)
        sleep_ms(1);
    if (!atomic_load(&td_done)) {
        fprintf(stderr,
                "HANG: destroy with a stage waiting on the inbox "
                "(pid %d)\n",
                (int)getpid());
        if (getenv("VSCHED_TEST_PAUSE") != NULL)
            pause();
        _exit(3);
    }
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(atomic_load(&td_inner_rc), VSCHED_ESHUTDOWN);
    held_teardown_end(&w, ho, hj);
    CU_ASSERT_EQUAL(tasks_back_to(base, 2000), base);
}

/* outer.c's Analysis runs until told to stop, and says it was cancelled
 * -- as a stage does when ctx->is_cancelled says so. */
static void outer_runs_until_stopped(char stage, const char *name,
                                     const vsched_ctx *ctx)
{
    if (stage != 'A' || strcmp(name, "outer.c") != 0)
        return;
    gate_pass(ctx); /* until destroy begins: is_cancelled */
    hook_rc = VSCHED_ECANCELLED;
}

/* A stage that stops because teardown began reports VSCHED_ECANCELLED
 * (ctx->is_cancelled is true once destroy starts); completed before
 * destroy answered the rest, its request was answered "cancelled", which
 * a host reads as a user's vsched_cancel. It is a shutdown. */
static void a_stage_stopped_by_destroy_is_answered_shutdown(void)
{
    world w;
    gate_reset();
    wstart(&w, two, 1, 1, 0);
    td_sched = w.s;
    atomic_store(&td_done, 0);
    hook = outer_runs_until_stopped;
    vsched_handle *ho = sub(w.s, "outer.c", VSCHED_STAGE_ANALYSIS);
    CU_ASSERT_FATAL(gate_wait_entered(1, 5000));
    vsched_handle *hj = driver_hold(w.s, "outer.c");
    pthread_t th;
    pthread_create(&th, NULL, destroyer, NULL);
    /* The stage sees the teardown and returns while destroy waits for the
     * driver: its completion is integrated first. */
    for (int i = 0; i < 2000 && !vsched__test_handle_done(ho); i++)
        sleep_ms(1);
    driver_free();
    pthread_join(th, NULL);
    const vsched_result *r = NULL;
    int rc = vsched_wait(ho, &r);
    if (rc != VSCHED_ESHUTDOWN)
        fprintf(stderr, "\n    answered %s: %s\n", vsched_errname(rc),
                r->message != NULL ? r->message : "(no message)");
    held_teardown_end(&w, ho, hj);
}

/* A wait that starts while its scheduler is destroyed: destroy may
 * answer the handle and free the scheduler between the wait's first look
 * at the handle and its blocking, so the wait must touch nothing but the
 * handle and its own thread's state (ASan sees a use after free
 * otherwise). The gap is tiny: rounds vary the delay. */
static void a_wait_racing_destroy(void)
{
    for (int round = 0; round < 60; round++) {
        world w;
        gate_reset();
        wstart(&w, two, 1, 1, 0);
        hook = fresh_gate;
        race_h = sub(w.s, "fresh.c", VSCHED_STAGE_ANALYSIS);
        CU_ASSERT_FATAL(gate_wait_entered(1, 5000));
        atomic_store(&race_rc, -999);
        pthread_t th;
        pthread_create(&th, NULL, late_waiter, NULL);
        struct timespec d = {0, (long)(round % 12) * 20000L};
        nanosleep(&d, NULL);
        vsched_destroy(w.s);
        vsched_pool_destroy(w.cpu);
        vsched_pool_destroy(w.io);
        hook = NULL;
        pthread_join(th, NULL);
        /* Destroy answers it, unless the held stage (its gate gives way
         * to cancellation) completed first. */
        int rc = atomic_load(&race_rc);
        CU_ASSERT(rc == VSCHED_ESHUTDOWN || rc == VSCHED_OK);
        vsched_handle_release(race_h);
    }
}

static const vr_cu_test tests[] = {
    {"reset_while_waiting", reset_while_waiting},
    {"remove_while_waiting", remove_while_waiting},
    {"invalidate_while_waiting", invalidate_while_waiting},
    {"cancel_while_waiting", cancel_while_waiting},
    {"destroy_while_waiting", destroy_while_waiting},
    {"deep_nested_waits_in_analysis", deep_nested_waits_in_analysis},
    {"deep_nested_waits_in_artifact_2_threads",
     deep_nested_waits_in_artifact_2_threads},
    {"deep_nested_waits_in_loads", deep_nested_waits_in_loads},
    {"deep_nested_waits_in_parses", deep_nested_waits_in_parses},
    {"two_schedulers_share_a_pool_and_wait_on_each_other",
     two_schedulers_share_a_pool_and_wait_on_each_other},
    {"a_job_waits_on_a_job_queued_behind_it",
     a_job_waits_on_a_job_queued_behind_it},
    {"jobs_wait_on_files_and_submit", jobs_wait_on_files_and_submit},
    {"capped_stand_ins_progress_once_a_waiter_returns",
     capped_stand_ins_progress_once_a_waiter_returns},
    {"many_block_cycles_return_to_pool_size",
     many_block_cycles_return_to_pool_size},
    {"host_tasks_fill_the_pool_and_wait", host_tasks_fill_the_pool_and_wait},
    {"task_times_are_ordered_under_nested_waits",
     task_times_are_ordered_under_nested_waits},
    {"blocked_rests_do_not_overfill_the_ring",
     blocked_rests_do_not_overfill_the_ring},
    {"a_join_callback_on_a_pool_worker_waits",
     a_join_callback_on_a_pool_worker_waits},
    {"stand_ins_leave_with_their_stacks", stand_ins_leave_with_their_stacks},
    {"a_pool_destroyed_while_its_stand_ins_run",
     a_pool_destroyed_while_its_stand_ins_run},
    {"destroy_answers_the_inbox_a_stage_waits_on",
     destroy_answers_the_inbox_a_stage_waits_on},
    {"a_stage_stopped_by_destroy_is_answered_shutdown",
     a_stage_stopped_by_destroy_is_answered_shutdown},
    {"a_wait_racing_destroy", a_wait_racing_destroy},
    {NULL, NULL},
};

int main(void)
{
    /* Sanitizer runtimes may start a thread of their own on first use:
     * let it exist before any test counts threads. */
    vsched_pool *p = NULL;
    if (vsched_pool_create(&p, VSCHED_POOL_CPU, 1, 0) == 0)
        vsched_pool_destroy(p);
    sleep_ms(20);
    return vr_cu_main("block", tests);
}
