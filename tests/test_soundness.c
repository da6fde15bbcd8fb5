/*
 * test_soundness -- the scheduler contract under churn: each test pins one
 * promise that a random-operation audit over the public API found broken
 * (a driver crash, a use after free, hangs, results computed on dead
 * inputs, lost capacities, torn roots, leaks of edges and objects).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsched/vsched.h>

#include "cu.h"
#include "sound_world.h"

static const memfs_file files[] = {
    {"a.c", "blocker h.h\n"}, {"h.h", "int h;\n"}, {"g.c", "int g;\n"},
    {"f.c", "int f;\n"},      {"x.c", "int x;\n"}, {"b.c", "int b;\n"},
    {"c.c", "int c;\n"},      {NULL, NULL},
};

static sw_options opts(unsigned cpu_threads)
{
    return (sw_options){.files = files, .cpu_threads = cpu_threads};
}

/* Wait for a request and return its status (the result stays readable
 * through *res until the handle is released). */
static int wait_for(vsched_handle *h, const vsched_result **res)
{
    return vsched_wait(h, res);
}

/* Request `name` to `stage` and wait; the handle is released. */
static int ask(vsched *s, const char *name, vsched_stage stage,
               uint64_t *analysis_hash)
{
    vsched_handle *h = sw_submit(s, name, stage, 0);
    const vsched_result *r = NULL;
    int st = wait_for(h, &r);
    if (analysis_hash != NULL)
        *analysis_hash = r->analysis_hash;
    vsched_handle_release(h);
    return st;
}

/* ---- holding the driver: a join callback that waits ----------------------
 * X1 holds Source(x.c) running; X2, identical, joins X1's waiter group and
 * its join callback (run by the driver after the unlock) waits here, so
 * the driver admits nothing more until driver_release(). */
static pthread_mutex_t dlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t dcond = PTHREAD_COND_INITIALIZER;
static int driver_blocked, driver_free;

static void block_driver(void *user, const char *name, vsched_stage st)
{
    (void)user, (void)name, (void)st;
    pthread_mutex_lock(&dlock);
    driver_blocked = 1;
    pthread_cond_broadcast(&dcond);
    while (!driver_free)
        pthread_cond_wait(&dcond, &dlock);
    pthread_mutex_unlock(&dlock);
}

static void driver_hold(vsched *s, vsched_handle **x1, vsched_handle **x2)
{
    driver_blocked = driver_free = 0;
    sw_arm("S:x.c");
    *x1 = sw_submit(s, "x.c", VSCHED_STAGE_SOURCE, 0);
    sw_wait_entered("S:x.c");
    vsched_request r = sw_req("x.c", VSCHED_STAGE_SOURCE, 0);
    r.on_join = block_driver;
    CU_ASSERT_FATAL(vsched_submit_request(s, &r, x2) == 0);
    pthread_mutex_lock(&dlock);
    while (!driver_blocked)
        pthread_cond_wait(&dcond, &dlock);
    pthread_mutex_unlock(&dlock);
}

static void driver_release(void)
{
    pthread_mutex_lock(&dlock);
    driver_free = 1;
    pthread_cond_broadcast(&dcond);
    pthread_mutex_unlock(&dlock);
}

/* ---- 1. dedupe collapse ---------------------------------------------------- */

/* A -> C, C -> B with B carrying A's dedupe key: collapsed, A <-> C is a
 * cycle although the spec indices are acyclic. It is refused whole. */
static void dedupe_collapse_that_closes_a_cycle_is_refused(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    vsched_node_spec n[3] = {sw_job("a"), sw_job("c"), sw_job("b")};
    n[0].dedupe_key = "k";
    n[2].dedupe_key = "k";
    vsched_edge_spec e[2] = {
        {VSCHED_REF_LOCAL(0), VSCHED_REF_LOCAL(1), VSCHED_GATE_AFTER_SUCCESS},
        {VSCHED_REF_LOCAL(1), VSCHED_REF_LOCAL(2), VSCHED_GATE_AFTER_SUCCESS},
    };
    vsched_dag dag = {n, 3, e, 2, NULL, NULL, 0};
    uint64_t ids[3] = {0};
    vsched_admission adm = VSCHED_BACKPRESSURED;
    vsched_stats before, after;
    vsched_get_stats(w.s, &before);
    CU_ASSERT_EQUAL(vsched_submit_dag(w.s, &dag, ids, &adm, NULL),
                    VSCHED_ECYCLE);
    vsched_get_stats(w.s, &after);
    CU_ASSERT_EQUAL(after.graph_nodes, before.graph_nodes);
    /* The driver is alive and idle-time checks meet no job. */
    sw_sleep_ms(20);
    CU_ASSERT_EQUAL(ask(w.s, "g.c", VSCHED_STAGE_ARTIFACT, NULL), 0);
    sw_stop(&w);
}

/* ---- 2. batch released before admission ------------------------------------ */

static void batch_released_before_admission_is_still_admitted_and_answered(
    void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    vsched_handle *x1, *x2;
    driver_hold(w.s, &x1, &x2);
    vsched_request reqs[3] = {sw_req("f.c", VSCHED_STAGE_ARTIFACT, 0),
                              sw_req("g.c", VSCHED_STAGE_ARTIFACT, 0),
                              sw_req("b.c", VSCHED_STAGE_SOURCE, 0)};
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(w.s, reqs, 3, &b) == 0);
    vsched_batch_release(b); /* before the driver has admitted it */
    driver_release();
    sw_open("S:x.c");
    CU_ASSERT_EQUAL(wait_for(x1, NULL), 0);
    CU_ASSERT_EQUAL(wait_for(x2, NULL), 0);
    /* The released batch was admitted and ran: its files' stages are
     * done and nothing waits any more. */
    CU_ASSERT_EQUAL(ask(w.s, "f.c", VSCHED_STAGE_ARTIFACT, NULL), 0);
    CU_ASSERT_EQUAL(ask(w.s, "g.c", VSCHED_STAGE_ARTIFACT, NULL), 0);
    /* b.c is upstream of neither: its Source may still run. Once it is
     * done, a waiter the released batch left stranded would still count. */
    CU_ASSERT_EQUAL(ask(w.s, "b.c", VSCHED_STAGE_SOURCE, NULL), 0);
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    CU_ASSERT_EQUAL(st.waiters, 0);
    CU_ASSERT_EQUAL(sw_calls('R'), 2);
    vsched_handle_release(x1);
    vsched_handle_release(x2);
    sw_stop(&w);
}

/* ---- 3. admission on a retired object -------------------------------------- */

static const char *kind_c(const char *name)
{
    return strcmp(name, "f.c") == 0 ? "c" : NULL;
}

static const char *kind_x(const char *name)
{
    return strcmp(name, "f.c") == 0 ? "x" : NULL;
}

/* W follows the latest content of f.c, classified "c". U re-classifies
 * f.c as "x" and upserts it: the re-home supersedes W, whose re-admission
 * must not re-home the file back (its classification is older) nor let U
 * land on a retired object. U's content wins and W ends on U's object. */
static void upsert_with_reclassification_lands_on_the_live_object(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    atomic_store(&sw_kind_of, kind_c);
    /* f.c is loaded and classified "c"; W waits on its held Analysis. */
    CU_ASSERT_EQUAL(ask(w.s, "f.c", VSCHED_STAGE_SOURCE, NULL), 0);
    sw_arm("A:f.c");
    vsched_handle *wh =
        sw_submit(w.s, "f.c", VSCHED_STAGE_ANALYSIS, VSCHED_REQ_FOLLOW_LATEST);
    sw_wait_entered("A:f.c");
    atomic_store(&sw_kind_of, kind_x);
    vsched_handle *uh = sw_upsert(w.s, "f.c", "int g;\n");
    /* U needs only its Source: answered while W's Analysis is held. */
    const vsched_result *ru = NULL, *rw = NULL;
    CU_ASSERT_EQUAL(wait_for(uh, &ru), 0);
    CU_ASSERT_EQUAL(ru->content_hash, sw_fnv("int g;\n"));
    sw_open("A:f.c");
    CU_ASSERT_EQUAL(wait_for(wh, &rw), 0);
    CU_ASSERT_EQUAL(rw->incarnation, ru->incarnation);
    CU_ASSERT_EQUAL(rw->content_hash, sw_fnv("int g;\n"));
    /* A fresh request sees the same live object and content. */
    vsched_handle *h = sw_submit(w.s, "f.c", VSCHED_STAGE_SOURCE, 0);
    const vsched_result *r = NULL;
    CU_ASSERT_EQUAL(wait_for(h, &r), 0);
    CU_ASSERT_EQUAL(r->incarnation, ru->incarnation);
    CU_ASSERT_EQUAL(r->content_hash, sw_fnv("int g;\n"));
    /* The source root never went backwards: it names the live object. */
    vsched_root *root;
    vsched_source_info info;
    CU_ASSERT_FATAL(vsched_capture_source_root(w.s, &root) == 0);
    vsched_root_lookup(root, "f.c", &info);
    CU_ASSERT_EQUAL(info.state, VSCHED_SOURCE_PRESENT);
    CU_ASSERT_EQUAL(info.incarnation, ru->incarnation);
    vsched_root_release(root);
    vsched_handle_release(h);
    vsched_handle_release(uh);
    vsched_handle_release(wh);
    sw_stop(&w);
}

/* The same churn, then a reset while the re-admitted follower waits:
 * every waiter, on whichever object, is answered. */
static void reset_answers_waiters_of_every_object(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    atomic_store(&sw_kind_of, kind_c);
    /* f.c is loaded and classified "c"; W waits on its held Analysis. */
    CU_ASSERT_EQUAL(ask(w.s, "f.c", VSCHED_STAGE_SOURCE, NULL), 0);
    sw_arm("A:f.c");
    vsched_handle *wh =
        sw_submit(w.s, "f.c", VSCHED_STAGE_ANALYSIS, VSCHED_REQ_FOLLOW_LATEST);
    sw_wait_entered("A:f.c");
    atomic_store(&sw_kind_of, kind_x);
    /* The only I/O worker is held, so U's Source stays queued. */
    sw_arm("L:b.c");
    vsched_handle *hb = sw_submit(w.s, "b.c", VSCHED_STAGE_SOURCE, 0);
    sw_wait_entered("L:b.c");
    vsched_handle *uh = sw_upsert(w.s, "f.c", "int g;\n");
    sw_sleep_ms(20); /* let the driver admit U */
    vsched_reset(w.s);
    sw_waiter a, b;
    sw_waiter_start(&a, wh);
    sw_waiter_start(&b, uh);
    CU_ASSERT(sw_waiter_done(&a, 5000));
    CU_ASSERT(sw_waiter_done(&b, 5000));
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    CU_ASSERT_EQUAL(st.waiters, 0);
    sw_open("A:f.c");
    sw_open("L:b.c");
    if (!atomic_load(&a.done) || !atomic_load(&b.done))
        vsched_cancel(w.s, "test cleanup");
    sw_waiter_finish(&a);
    sw_waiter_finish(&b);
    CU_ASSERT_EQUAL(wait_for(hb, NULL), VSCHED_ESHUTDOWN);
    vsched_handle_release(hb);
    sw_stop(&w);
}

/* ---- 4. analysis on a dead input ------------------------------------------- */

static uint64_t a_hash_with(const char *header)
{
    uint64_t b = sw_fnv(header);
    return sw_fold(sw_fnv("blocker h.h\n"), &b, 1);
}

/* Analysis(a.c) is READY (its blocker h.h's Analysis finished) but waits
 * for the one CPU worker when h.h gets new content: it must not run on
 * h.h's old (or zeroed) hash. */
static void ready_dependent_analysis_uses_its_blockers_current_hash(void)
{
    sw_world w;
    sw_options o = opts(1);
    sw_start(&w, &o);
    sw_arm("A:h.h");
    sw_arm("R:g.c");
    vsched_handle *ha = sw_submit(w.s, "a.c", VSCHED_STAGE_ANALYSIS, 0);
    sw_wait_entered("A:h.h");
    /* Higher priority work takes the worker once h.h's Analysis ends. */
    vsched_request rg = sw_req("g.c", VSCHED_STAGE_ARTIFACT, 10);
    vsched_handle *hg = NULL;
    CU_ASSERT_FATAL(vsched_submit_request(w.s, &rg, &hg) == 0);
    sw_sleep_ms(20);
    sw_open("A:h.h");
    sw_wait_entered("R:g.c"); /* Analysis(a.c) is now READY, not run */
    CU_ASSERT_EQUAL(sw_calls('A') >= 1, 1);
    vsched_handle *hu = sw_upsert(w.s, "h.h", "int h2;\n");
    sw_sleep_ms(20);
    sw_open("R:g.c");
    const vsched_result *r = NULL;
    CU_ASSERT_EQUAL(wait_for(ha, &r), 0);
    CU_ASSERT_EQUAL(r->analysis_hash, a_hash_with("int h2;\n"));
    CU_ASSERT_EQUAL(wait_for(hu, NULL), 0);
    CU_ASSERT_EQUAL(wait_for(hg, NULL), 0);
    vsched_handle_release(ha);
    vsched_handle_release(hg);
    vsched_handle_release(hu);
    sw_stop(&w);
}

/* Analysis(a.c) is RUNNING on h.h's old hash when h.h changes: its
 * completion is refused (counted) and it runs again on the new hash. */
static void running_dependent_analysis_is_refused_and_rerun(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    sw_arm("A:a.c");
    vsched_handle *ha = sw_submit(w.s, "a.c", VSCHED_STAGE_ARTIFACT, 0);
    sw_wait_entered("A:a.c");
    vsched_handle *hu = sw_upsert(w.s, "h.h", "int h2;\n");
    CU_ASSERT_EQUAL(wait_for(hu, NULL), 0);
    sw_open("A:a.c");
    const vsched_result *r = NULL;
    CU_ASSERT_EQUAL(wait_for(ha, &r), 0);
    CU_ASSERT_EQUAL(r->analysis_hash, a_hash_with("int h2;\n"));
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    CU_ASSERT(st.stale_completion_refusals >= 1);
    CU_ASSERT_EQUAL(sw_calls('R'), 1); /* one Artifact, on the new hash */
    vsched_handle_release(ha);
    vsched_handle_release(hu);
    sw_stop(&w);
}

/* Analysis(a.c) and its Artifact are DONE when h.h changes: the next
 * demand recomputes both instead of answering from the stale results. */
static void done_dependent_is_rebuilt_after_its_blocker_changes(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    uint64_t before = 0, after = 0;
    CU_ASSERT_EQUAL(ask(w.s, "a.c", VSCHED_STAGE_ARTIFACT, &before), 0);
    CU_ASSERT_EQUAL(before, a_hash_with("int h;\n"));
    vsched_handle *hu = sw_upsert(w.s, "h.h", "int h2;\n");
    CU_ASSERT_EQUAL(wait_for(hu, NULL), 0);
    vsched_handle_release(hu);
    CU_ASSERT_EQUAL(ask(w.s, "a.c", VSCHED_STAGE_ARTIFACT, &after), 0);
    CU_ASSERT_EQUAL(after, a_hash_with("int h2;\n"));
    CU_ASSERT_EQUAL(sw_calls('R'), 2);
    /* Unchanged inputs: answered from the done stages, nothing re-run. */
    CU_ASSERT_EQUAL(ask(w.s, "a.c", VSCHED_STAGE_ARTIFACT, NULL), 0);
    CU_ASSERT_EQUAL(sw_calls('R'), 2);
    sw_stop(&w);
}

/* ---- 5. deadlock through a parent's grant ---------------------------------- */

/* P holds r (capacity 1) for its subtree; its child c waits for x; x needs
 * r. Nothing can ever run x: the scheduler says so, naming the chain,
 * instead of hanging. */
static void grant_held_for_a_subtree_that_waits_on_its_taker_is_a_deadlock(
    void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    static const char *const r[] = {"r"};
    vsched_node_spec n[3] = {sw_job("p"), sw_job("c"), sw_job("x")};
    n[0].resources = r;
    n[0].n_resources = 1;
    n[1].parent = VSCHED_REF_LOCAL(0);
    n[2].resources = r;
    n[2].n_resources = 1;
    vsched_edge_spec e[1] = {
        {VSCHED_REF_LOCAL(2), VSCHED_REF_LOCAL(1), VSCHED_GATE_AFTER_SUCCESS}};
    vsched_dag dag = {n, 3, e, 1, NULL, NULL, 0};
    uint64_t ids[3];
    vsched_admission adm;
    CU_ASSERT_FATAL(vsched_submit_dag(w.s, &dag, ids, &adm, NULL) == 0);
    CU_ASSERT_FATAL(adm == VSCHED_ADMITTED);
    vsched_node_info ix, ic, ip;
    vsched_node_state sx = sw_node_poll(w.s, ids[2], 5000, &ix);
    CU_ASSERT_EQUAL(sx, VSCHED_NODE_FAILED);
    CU_ASSERT(ix.message != NULL && strstr(ix.message, "deadlock") != NULL &&
              strstr(ix.message, "'p'") != NULL &&
              strstr(ix.message, "'c'") != NULL);
    CU_ASSERT_EQUAL(sw_node_poll(w.s, ids[1], 5000, &ic),
                    VSCHED_NODE_CANCELLED);
    CU_ASSERT_EQUAL(sw_node_poll(w.s, ids[0], 5000, &ip), VSCHED_NODE_DONE);
    vsched_node_info_clear(&ix);
    vsched_node_info_clear(&ic);
    vsched_node_info_clear(&ip);
    if (sx != VSCHED_NODE_FAILED)
        vsched_cancel(w.s, "test cleanup");
    /* r was given back: a new taker runs. */
    vsched_node_spec m = sw_job("after");
    m.resources = r;
    m.n_resources = 1;
    vsched_dag d2 = {&m, 1, NULL, 0, NULL, NULL, 0};
    CU_ASSERT_FATAL(vsched_submit_dag(w.s, &d2, ids, &adm, NULL) == 0);
    vsched_node_info ia;
    CU_ASSERT_EQUAL(sw_node_poll(w.s, ids[0], 5000, &ia), VSCHED_NODE_DONE);
    vsched_node_info_clear(&ia);
    sw_stop(&w);
}

/* ---- 6. idle re-pump -------------------------------------------------------- */

static pthread_mutex_t hlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hcond = PTHREAD_COND_INITIALIZER;
static int host_open, host_running;

static void host_task(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&hlock);
    host_running++;
    pthread_cond_broadcast(&hcond);
    while (!host_open)
        pthread_cond_wait(&hcond, &hlock);
    pthread_mutex_unlock(&hlock);
}

/* Fill `pool` (1 worker, capacity 4) with host tasks that wait. */
static void fill_with_host_tasks(vsched_pool *pool)
{
    host_open = host_running = 0;
    /* A slot is given back just after the task that held it returns, so a
     * scheduler task that just finished may hold one for a moment. */
    int queued = 0;
    for (int tries = 0; queued < 4 && tries < 5000; tries++) {
        if (vsched_pool_try_submit(pool, host_task, NULL) == 0)
            queued++;
        else
            sw_sleep_ms(1);
    }
    CU_ASSERT_FATAL(queued == 4);
    CU_ASSERT_EQUAL(vsched_pool_try_submit(pool, host_task, NULL),
                    VSCHED_EFULL);
    pthread_mutex_lock(&hlock);
    while (host_running == 0)
        pthread_cond_wait(&hcond, &hlock);
    pthread_mutex_unlock(&hlock);
}

static void drain_host_tasks(void)
{
    pthread_mutex_lock(&hlock);
    host_open = 1;
    pthread_cond_broadcast(&hcond);
    pthread_mutex_unlock(&hlock);
}

/* The CPU pool is full of host tasks when a parse becomes ready: once the
 * pool drains, the work runs, though no completion of the scheduler's own
 * work arrives to trigger a dispatch. */
static void ready_work_refused_by_a_full_pool_runs_when_it_drains(void)
{
    sw_world w;
    sw_options o = opts(1);
    sw_start(&w, &o);
    fill_with_host_tasks(w.cpu);
    sw_waiter wt;
    sw_waiter_start(&wt, sw_submit(w.s, "f.c", VSCHED_STAGE_SOURCE, 0));
    sw_sleep_ms(50); /* loaded; the parse found the pool full */
    drain_host_tasks();
    CU_ASSERT(sw_waiter_done(&wt, 5000));
    if (!atomic_load(&wt.done))
        vsched_cancel(w.s, "test cleanup");
    CU_ASSERT_EQUAL(wt.status, 0);
    sw_waiter_finish(&wt);
    sw_stop(&w);
}

/* An I/O transport of capacity 1: a load's completion arrives while its
 * slot is still taken, so the next load is refused; it must still run. */
static void io_transport_of_capacity_one_never_strands_a_load(void)
{
    sw_world w;
    sw_options o = opts(1);
    o.io_capacity = 1;
    sw_start(&w, &o);
    vsched_request reqs[5] = {sw_req("a.c", VSCHED_STAGE_SOURCE, 0),
                              sw_req("g.c", VSCHED_STAGE_SOURCE, 0),
                              sw_req("f.c", VSCHED_STAGE_SOURCE, 0),
                              sw_req("x.c", VSCHED_STAGE_SOURCE, 0),
                              sw_req("b.c", VSCHED_STAGE_SOURCE, 0)};
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(w.s, reqs, 5, &b) == 0);
    /* Wait on the last one from a thread so the test can bound it. */
    sw_waiter wt;
    vsched_handle *last = sw_submit(w.s, "c.c", VSCHED_STAGE_SOURCE, 0);
    sw_waiter_start(&wt, last);
    CU_ASSERT(sw_waiter_done(&wt, 5000));
    if (!atomic_load(&wt.done))
        vsched_cancel(w.s, "test cleanup");
    CU_ASSERT_EQUAL(vsched_wait_batch(b, NULL), 0);
    sw_waiter_finish(&wt);
    vsched_batch_release(b);
    sw_stop(&w);
}

/* ---- 7. capacities across reset -------------------------------------------- */

static void reset_keeps_the_capacity_of_jobs_still_running(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    static const char *const r[] = {"r"};
    vsched_sem *sem;
    CU_ASSERT_FATAL(vsched_sem_create(w.s, 1, &sem) == 0);
    /* The held jobs ignore the reset's cancellation: they keep running,
     * and keep what they took, until opened. */
    atomic_store(&sw_stubborn, 1);
    sw_arm("J:r-1");
    sw_arm("J:s-1");
    vsched_node_spec n[2] = {sw_job("r-1"), sw_job("s-1")};
    n[0].resources = r;
    n[0].n_resources = 1;
    n[1].sem = sem;
    vsched_dag dag = {n, 2, NULL, 0, NULL, NULL, 0};
    uint64_t ids[2];
    vsched_admission adm;
    CU_ASSERT_FATAL(vsched_submit_dag(w.s, &dag, ids, &adm, NULL) == 0);
    sw_wait_entered("J:r-1");
    sw_wait_entered("J:s-1");
    vsched_reset(w.s); /* both still run */
    CU_ASSERT_EQUAL(vsched_sem_in_use(sem), 1);
    vsched_node_spec m[2] = {sw_job("r-2"), sw_job("s-2")};
    m[0].resources = r;
    m[0].n_resources = 1;
    m[1].sem = sem;
    vsched_dag d2 = {m, 2, NULL, 0, NULL, NULL, 0};
    CU_ASSERT_FATAL(vsched_submit_dag(w.s, &d2, ids, &adm, NULL) == 0);
    sw_sleep_ms(100);
    /* r and the permit are still taken by the jobs from before the reset. */
    CU_ASSERT_EQUAL(sw_calls('J'), 2);
    sw_open("J:r-1");
    sw_open("J:s-1");
    vsched_node_info i0, i1;
    CU_ASSERT_EQUAL(sw_node_poll(w.s, ids[0], 5000, &i0), VSCHED_NODE_DONE);
    CU_ASSERT_EQUAL(sw_node_poll(w.s, ids[1], 5000, &i1), VSCHED_NODE_DONE);
    vsched_node_info_clear(&i0);
    vsched_node_info_clear(&i1);
    CU_ASSERT_EQUAL(sw_job_peak("r"), 1);
    CU_ASSERT_EQUAL(sw_job_peak("s"), 1);
    CU_ASSERT_EQUAL(vsched_sem_in_use(sem), 0);
    vsched_sem_release(sem);
    sw_stop(&w);
}

/* ---- 8. one batch, one epoch ------------------------------------------------ */

typedef struct root_reader {
    vsched *s;
    atomic_int stop;
    unsigned long captures, torn, backwards;
} root_reader;

static void *read_roots(void *arg)
{
    root_reader *rr = arg;
    uint64_t last[2] = {0, 0};
    static const char *const names[2] = {"a.c", "g.c"};
    while (!atomic_load(&rr->stop)) {
        vsched_root *root;
        if (vsched_capture_source_root(rr->s, &root) != 0)
            continue;
        vsched_source_info in[2];
        for (int i = 0; i < 2; i++)
            vsched_root_lookup(root, names[i], &in[i]);
        if (in[0].state != VSCHED_SOURCE_UNKNOWN &&
            in[1].state != VSCHED_SOURCE_UNKNOWN) {
            rr->captures++;
            rr->torn += in[0].generation != in[1].generation;
            for (int i = 0; i < 2; i++) {
                rr->backwards += in[i].generation < last[i];
                last[i] = in[i].generation;
            }
        }
        vsched_root_release(root);
    }
    return NULL;
}

static void atomic_upsert_batch_is_never_seen_torn_by_a_root(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    root_reader rr = {.s = w.s};
    pthread_t th;
    CU_ASSERT_FATAL(pthread_create(&th, NULL, read_roots, &rr) == 0);
    for (int i = 0; i < 300; i++) {
        char ca[32], cg[32];
        snprintf(ca, sizeof ca, "int a%d;\n", i);
        snprintf(cg, sizeof cg, "int g%d;\n", i);
        vsched_request reqs[2] = {sw_req("a.c", VSCHED_STAGE_SOURCE, 0),
                                  sw_req("g.c", VSCHED_STAGE_SOURCE, 0)};
        reqs[0].flags = reqs[1].flags = VSCHED_REQ_CONTENT;
        reqs[0].content = ca;
        reqs[0].content_len = strlen(ca);
        reqs[1].content = cg;
        reqs[1].content_len = strlen(cg);
        vsched_batch *b = NULL;
        CU_ASSERT_FATAL(vsched_submit_batch_atomic(w.s, reqs, 2, &b) == 0);
        vsched_wait_batch(b, NULL);
        vsched_batch_release(b);
    }
    atomic_store(&rr.stop, 1);
    pthread_join(th, NULL);
    printf("\n    captures=%lu torn=%lu backwards=%lu\n", rr.captures, rr.torn,
           rr.backwards);
    CU_ASSERT(rr.captures > 0);
    CU_ASSERT_EQUAL(rr.torn, 0);
    CU_ASSERT_EQUAL(rr.backwards, 0);
    sw_stop(&w);
}

/* ---- 9. no edge into a job cancelled at insertion --------------------------- */

static void job_cancelled_at_insertion_keeps_no_edge(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    vsched_node_spec f = sw_job("fail-1");
    vsched_dag d1 = {&f, 1, NULL, 0, NULL, NULL, 0};
    uint64_t fid, ids[2];
    vsched_admission adm;
    CU_ASSERT_FATAL(vsched_submit_dag(w.s, &d1, &fid, &adm, NULL) == 0);
    vsched_node_info inf;
    CU_ASSERT_EQUAL(sw_node_poll(w.s, fid, 5000, &inf), VSCHED_NODE_FAILED);
    vsched_node_info_clear(&inf);
    /* j waits on the failed job (cancelled at once) and on k. */
    sw_arm("J:k");
    vsched_node_spec n[2] = {sw_job("k"), sw_job("j")};
    vsched_edge_spec e[2] = {
        {VSCHED_REF_ID(fid), VSCHED_REF_LOCAL(1), VSCHED_GATE_AFTER_SUCCESS},
        {VSCHED_REF_LOCAL(0), VSCHED_REF_LOCAL(1), VSCHED_GATE_AFTER_SUCCESS},
    };
    vsched_dag d2 = {n, 2, e, 2, NULL, NULL, 0};
    CU_ASSERT_FATAL(vsched_submit_dag(w.s, &d2, ids, &adm, NULL) == 0);
    CU_ASSERT_EQUAL(sw_node_poll(w.s, ids[1], 5000, &inf),
                    VSCHED_NODE_CANCELLED);
    vsched_node_info_clear(&inf);
    sw_open("J:k");
    CU_ASSERT_EQUAL(sw_node_poll(w.s, ids[0], 5000, &inf), VSCHED_NODE_DONE);
    vsched_node_info_clear(&inf);
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    CU_ASSERT_EQUAL(st.edges, 0);
    sw_stop(&w);
}

/* ---- 10. queued requests outlive neither remove nor reset ------------------- */

static void queued_request_ends_with_the_lifetime_it_was_submitted_in(
    int reset)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    CU_ASSERT_EQUAL(ask(w.s, "f.c", VSCHED_STAGE_SOURCE, NULL), 0);
    vsched_handle *x1, *x2;
    driver_hold(w.s, &x1, &x2);
    vsched_handle *h = sw_submit(w.s, "f.c", VSCHED_STAGE_SOURCE, 0);
    if (reset)
        vsched_reset(w.s);
    else
        CU_ASSERT_EQUAL(vsched_remove(w.s, "f.c"), 0);
    driver_release();
    CU_ASSERT_EQUAL(wait_for(h, NULL), VSCHED_ESHUTDOWN);
    sw_open("S:x.c");
    wait_for(x1, NULL);
    wait_for(x2, NULL);
    /* Nothing re-created f.c after its lifetime ended. */
    vsched_witness wit;
    CU_ASSERT_EQUAL(vsched_get_witnessed_source(w.s, "f.c", &wit, NULL),
                    VSCHED_ENOENT);
    vsched_root *root;
    vsched_source_info info;
    CU_ASSERT_FATAL(vsched_capture_source_root(w.s, &root) == 0);
    vsched_root_lookup(root, "f.c", &info);
    CU_ASSERT_EQUAL(info.state, VSCHED_SOURCE_ABSENT);
    vsched_root_release(root);
    vsched_handle_release(h);
    vsched_handle_release(x1);
    vsched_handle_release(x2);
    sw_stop(&w);
}

static void request_queued_before_remove_is_answered_shutdown(void)
{
    queued_request_ends_with_the_lifetime_it_was_submitted_in(0);
}

static void request_queued_before_reset_is_answered_shutdown(void)
{
    queued_request_ends_with_the_lifetime_it_was_submitted_in(1);
}

/* A cancel ends what was submitted before it, admitted or not: a request
 * and an atomic batch still in the inbox when vsched_cancel is called end
 * VSCHED_ECANCELLED with its reason when the driver admits them; what is
 * submitted after the cancel runs. */
static void work_queued_before_a_cancel_is_cancelled_at_admission(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    vsched_handle *x1, *x2;
    driver_hold(w.s, &x1, &x2);
    vsched_handle *h = sw_submit(w.s, "f.c", VSCHED_STAGE_ARTIFACT, 0);
    vsched_request reqs[2] = {sw_req("g.c", VSCHED_STAGE_ARTIFACT, 0),
                              sw_req("b.c", VSCHED_STAGE_ARTIFACT, 0)};
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(w.s, reqs, 2, &b) == 0);
    vsched_cancel(w.s, "stopped here");
    vsched_handle *after = sw_submit(w.s, "c.c", VSCHED_STAGE_ARTIFACT, 0);
    driver_release();
    sw_open("S:x.c");
    const vsched_result *r = NULL;
    CU_ASSERT_EQUAL(wait_for(h, &r), VSCHED_ECANCELLED);
    CU_ASSERT_TRUE(r != NULL && r->message != NULL &&
                   strcmp(r->message, "stopped here") == 0);
    const vsched_result *br[2] = {NULL, NULL};
    vsched_wait_batch(b, br);
    CU_ASSERT_EQUAL(br[0]->status, VSCHED_ECANCELLED);
    CU_ASSERT_EQUAL(br[1]->status, VSCHED_ECANCELLED);
    CU_ASSERT_EQUAL(wait_for(after, NULL), 0);
    wait_for(x1, NULL);
    wait_for(x2, NULL);
    /* Only c.c's Artifact reached the executor. */
    CU_ASSERT_EQUAL(sw_calls('R'), 1);
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    CU_ASSERT_EQUAL(st.waiters, 0);
    vsched_batch_release(b);
    vsched_handle_release(h);
    vsched_handle_release(after);
    vsched_handle_release(x1);
    vsched_handle_release(x2);
    sw_stop(&w);
}

/* ---- 11. no plugin call under the scheduler lock --------------------------- */

typedef struct invalidator {
    vsched *s;
    atomic_int done;
} invalidator;

static void *invalidate_f(void *arg)
{
    invalidator *iv = arg;
    vsched_invalidate(iv->s, "f.c");
    atomic_store(&iv->done, 1);
    return NULL;
}

/* With a serialised (not thread-safe) executor held in g.c's Artifact,
 * invalidating f.c (which frees f.c's snapshot through the executor)
 * returns at once: the free waits for the executor, not the caller. */
static void invalidate_never_waits_for_an_unrelated_plugin_call(void)
{
    sw_world w;
    sw_options o = opts(2);
    o.executor_serial = 1;
    sw_start(&w, &o);
    CU_ASSERT_EQUAL(ask(w.s, "f.c", VSCHED_STAGE_SOURCE, NULL), 0);
    sw_arm("R:g.c");
    vsched_handle *hg = sw_submit(w.s, "g.c", VSCHED_STAGE_ARTIFACT, 0);
    sw_wait_entered("R:g.c");
    invalidator iv = {.s = w.s};
    pthread_t th;
    CU_ASSERT_FATAL(pthread_create(&th, NULL, invalidate_f, &iv) == 0);
    for (int i = 0; i < 3000 && !atomic_load(&iv.done); i++)
        sw_sleep_ms(1);
    CU_ASSERT(atomic_load(&iv.done)); /* returned while g.c still runs */
    sw_open("R:g.c");
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(wait_for(hg, NULL), 0);
    vsched_handle_release(hg);
    sw_stop(&w);
}

/* ---- 12. cycles found when they form --------------------------------------- */

static const memfs_file cycle_files[] = {
    {"x.c", "blocker a.h\n"}, {"a.h", "blocker b.h\n"},
    {"b.h", "blocker a.h\n"}, {"s0.c", "int s;\n"},
    {"s1.c", "int s;\n"},     {"s2.c", "int s;\n"},
    {"s3.c", "int s;\n"},     {"s4.c", "int s;\n"},
    {"s5.c", "int s;\n"},     {"s6.c", "int s;\n"},
    {"s7.c", "int s;\n"},     {NULL, NULL},
};

typedef struct streamer {
    vsched *s;
    atomic_int stop;
    atomic_ulong sent;
} streamer;

/* Keep requests of other files in flight. */
static void *stream(void *arg)
{
    streamer *st = arg;
    static const char *const names[7] = {"s0.c", "s1.c", "s2.c", "s3.c",
                                         "s4.c", "s5.c", "s6.c"};
    vsched_handle *h[7] = {NULL};
    for (unsigned long k = 0; !atomic_load(&st->stop); k++) {
        int i = (int)(k % 7);
        if (h[i] != NULL) {
            vsched_wait(h[i], NULL);
            vsched_handle_release(h[i]);
        }
        vsched_invalidate(st->s, names[i]);
        vsched_request r = sw_req(names[i], VSCHED_STAGE_ARTIFACT, 0);
        vsched_submit_request(st->s, &r, &h[i]);
        atomic_fetch_add(&st->sent, 1);
    }
    for (int i = 0; i < 7; i++)
        if (h[i] != NULL) {
            vsched_wait(h[i], NULL);
            vsched_handle_release(h[i]);
        }
    return NULL;
}

static void blocker_cycle_is_reported_while_other_work_streams(void)
{
    sw_world w;
    sw_options o = {.files = cycle_files, .cpu_threads = 2, .cycles_fail = 1};
    sw_start(&w, &o);
    /* Other work runs the whole time: one Artifact held running, and a
     * stream of requests of other files around it. The scheduler is
     * never quiescent. */
    sw_arm("R:s7.c");
    vsched_handle *held = sw_submit(w.s, "s7.c", VSCHED_STAGE_ARTIFACT, 0);
    sw_wait_entered("R:s7.c");
    streamer st = {.s = w.s};
    pthread_t th;
    CU_ASSERT_FATAL(pthread_create(&th, NULL, stream, &st) == 0);
    sw_sleep_ms(20);
    sw_waiter wt;
    sw_waiter_start(&wt, sw_submit(w.s, "x.c", VSCHED_STAGE_ANALYSIS, 0));
    int answered = sw_waiter_done(&wt, 5000);
    unsigned long sent = atomic_load(&st.sent);
    atomic_store(&st.stop, 1);
    CU_ASSERT(answered);
    printf("\n    answered while %lu other requests streamed\n", sent);
    if (!answered)
        vsched_cancel(w.s, "test cleanup");
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(wt.status, VSCHED_ECYCLE);
    CU_ASSERT(wt.r != NULL && wt.r->message != NULL &&
              strstr(wt.r->message, "cycle") != NULL);
    sw_waiter_finish(&wt);
    sw_open("R:s7.c");
    CU_ASSERT_EQUAL(wait_for(held, NULL), 0);
    vsched_handle_release(held);
    sw_stop(&w);
}

/* ---- 13. honest counters ----------------------------------------------------- */

/* A dispatch the pool refuses does not stamp started_ns. */
static void started_ns_is_when_the_stage_started(void)
{
    sw_world w;
    sw_options o = opts(1);
    sw_start(&w, &o);
    CU_ASSERT_EQUAL(ask(w.s, "f.c", VSCHED_STAGE_SOURCE, NULL), 0);
    fill_with_host_tasks(w.cpu);
    vsched_handle *h = sw_submit(w.s, "f.c", VSCHED_STAGE_ANALYSIS, 0);
    sw_sleep_ms(200); /* its dispatch is refused meanwhile */
    uint64_t t_release = sw_now_ns();
    drain_host_tasks();
    /* Something to complete, should the scheduler wait for a completion
     * to dispatch again. */
    CU_ASSERT_EQUAL(ask(w.s, "g.c", VSCHED_STAGE_SOURCE, NULL), 0);
    const vsched_result *r = NULL;
    CU_ASSERT_EQUAL(wait_for(h, &r), 0);
    CU_ASSERT(r->started_ns >= t_release);
    CU_ASSERT(r->finished_ns >= r->started_ns);
    vsched_handle_release(h);
    sw_stop(&w);
}

/* A stage cancelled before its executor ran is not counted as run. */
static void stage_runs_count_only_what_the_executor_ran(void)
{
    sw_world w;
    sw_options o = opts(1);
    sw_start(&w, &o);
    /* a.c's Artifact runs on past the cancel until opened, so the world
     * counts it (it counts only calls that pass their gate: one that saw
     * the cancel at its gate first did run, but went uncounted). */
    atomic_store(&sw_stubborn, 1);
    sw_arm("R:a.c");
    vsched_handle *ha = sw_submit(w.s, "a.c", VSCHED_STAGE_ARTIFACT, 0);
    sw_wait_entered("R:a.c");
    vsched_handle *hb = sw_submit(w.s, "b.c", VSCHED_STAGE_ARTIFACT, 0);
    vsched_handle *hc = sw_submit(w.s, "c.c", VSCHED_STAGE_ARTIFACT, 0);
    sw_sleep_ms(50); /* b.c, c.c: Source and Analysis need the worker */
    vsched_cancel(w.s, "stop");
    sw_open("R:a.c");
    wait_for(ha, NULL);
    CU_ASSERT_EQUAL(wait_for(hb, NULL), VSCHED_ECANCELLED);
    CU_ASSERT_EQUAL(wait_for(hc, NULL), VSCHED_ECANCELLED);
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    CU_ASSERT_EQUAL(st.stage_runs[VSCHED_STAGE_ARTIFACT], sw_calls('R'));
    CU_ASSERT_EQUAL(st.stage_runs[VSCHED_STAGE_ANALYSIS], sw_calls('A'));
    CU_ASSERT_EQUAL(st.stage_runs[VSCHED_STAGE_SOURCE], sw_calls('S'));
    vsched_handle_release(ha);
    vsched_handle_release(hb);
    vsched_handle_release(hc);
    sw_stop(&w);
}

/* ready_depth_max is the high-water mark of vsched_ready_queue_depth. */
static void ready_depth_max_tracks_the_ready_queue_depth(void)
{
    sw_world w;
    sw_options o = opts(1);
    sw_start(&w, &o);
    sw_arm("R:a.c");
    vsched_handle *ha = sw_submit(w.s, "a.c", VSCHED_STAGE_ARTIFACT, 0);
    sw_wait_entered("R:a.c");
    vsched_request reqs[4] = {sw_req("b.c", VSCHED_STAGE_ARTIFACT, 0),
                              sw_req("c.c", VSCHED_STAGE_ARTIFACT, 0),
                              sw_req("f.c", VSCHED_STAGE_ARTIFACT, 0),
                              sw_req("g.c", VSCHED_STAGE_ARTIFACT, 0)};
    vsched_batch *b;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(w.s, reqs, 4, &b) == 0);
    vsched_node_spec n[3] = {sw_job("j1"), sw_job("j2"), sw_job("j3")};
    vsched_dag dag = {n, 3, NULL, 0, NULL, NULL, 0};
    uint64_t ids[3];
    vsched_admission adm;
    CU_ASSERT_FATAL(vsched_submit_dag(w.s, &dag, ids, &adm, NULL) == 0);
    sw_sleep_ms(50);
    size_t depth = vsched_ready_queue_depth(w.s);
    CU_ASSERT_EQUAL(depth, 3);
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    CU_ASSERT_EQUAL(st.ready_depth_max, 3);
    sw_open("R:a.c");
    vsched_wait_batch(b, NULL);
    wait_for(ha, NULL);
    vsched_batch_release(b);
    vsched_handle_release(ha);
    sw_stop(&w);
}

/* ---- 14. join callbacks fire once, from the pass ----------------------------- */

static vsched *join_sched;
static atomic_int join_calls;

static void join_invalidates(void *user, const char *name, vsched_stage st)
{
    (void)user, (void)st;
    atomic_fetch_add(&join_calls, 1);
    vsched_invalidate(join_sched, name);
}

static void join_callback_fires_once_even_when_it_supersedes_its_file(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    join_sched = w.s;
    atomic_store(&join_calls, 0);
    sw_arm("S:f.c");
    vsched_handle *h1 =
        sw_submit(w.s, "f.c", VSCHED_STAGE_ANALYSIS, VSCHED_REQ_FOLLOW_LATEST);
    sw_wait_entered("S:f.c");
    vsched_request r = sw_req("f.c", VSCHED_STAGE_ANALYSIS, 0);
    r.flags = VSCHED_REQ_FOLLOW_LATEST;
    r.on_join = join_invalidates;
    vsched_handle *h2;
    CU_ASSERT_FATAL(vsched_submit_request(w.s, &r, &h2) == 0);
    for (int i = 0; i < 2000 && atomic_load(&join_calls) == 0; i++)
        sw_sleep_ms(1);
    sw_sleep_ms(20);
    sw_open("S:f.c");
    CU_ASSERT_EQUAL(wait_for(h1, NULL), 0);
    CU_ASSERT_EQUAL(wait_for(h2, NULL), 0);
    CU_ASSERT_EQUAL(atomic_load(&join_calls), 1);
    vsched_handle_release(h1);
    vsched_handle_release(h2);
    sw_stop(&w);
}

/* ---- 15. node waiters and destroy -------------------------------------------- */

typedef struct node_waiter {
    vsched *s;
    uint64_t id;
    int rc;
    vsched_node_info info;
    atomic_int done;
} node_waiter;

static void *wait_node(void *arg)
{
    node_waiter *nw = arg;
    nw->rc = vsched_node_wait(nw->s, nw->id, &nw->info);
    atomic_store(&nw->done, 1);
    return NULL;
}

static void destroy_answers_node_waiters_first(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    sw_arm("J:held");
    vsched_node_spec n = sw_job("held");
    vsched_dag dag = {&n, 1, NULL, 0, NULL, NULL, 0};
    uint64_t id;
    vsched_admission adm;
    CU_ASSERT_FATAL(vsched_submit_dag(w.s, &dag, &id, &adm, NULL) == 0);
    sw_wait_entered("J:held");
    node_waiter nw[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        nw[i] = (node_waiter){.s = w.s, .id = id};
        CU_ASSERT_FATAL(pthread_create(&th[i], NULL, wait_node, &nw[i]) == 0);
    }
    sw_sleep_ms(20);
    vsched_destroy(w.s); /* the job is asked to stop; waiters answered */
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        /* Answered before anything is freed: the job ended by the
         * teardown, or by its own return once asked to stop. */
        CU_ASSERT(nw[i].rc == VSCHED_ESHUTDOWN ||
                  (nw[i].rc == 0 && (nw[i].info.status == VSCHED_ESHUTDOWN ||
                                     nw[i].info.status == VSCHED_ECANCELLED)));
        vsched_node_info_clear(&nw[i].info);
    }
    vsched_pool_destroy(w.cpu);
    vsched_pool_destroy(w.io);
    sw_reset_gates();
}

/* ---- 16. reclamation --------------------------------------------------------- */

static void superseded_and_removed_objects_are_reclaimed(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    for (int i = 0; i < 300; i++) {
        CU_ASSERT_EQUAL(ask(w.s, "a.c", VSCHED_STAGE_ARTIFACT, NULL), 0);
        vsched_invalidate(w.s, "a.c");
        vsched_invalidate(w.s, "h.h");
    }
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    printf("\n    after 300 generations: graph_nodes=%llu edges=%llu "
           "retired_pending=%llu\n",
           (unsigned long long)st.graph_nodes, (unsigned long long)st.edges,
           (unsigned long long)st.retired_pending);
    /* The current generation's stages only (a.c: 3, h.h: 2). */
    CU_ASSERT(st.graph_nodes <= 5);
    for (int i = 0; i < 200; i++) {
        CU_ASSERT_EQUAL(ask(w.s, "g.c", VSCHED_STAGE_ARTIFACT, NULL), 0);
        CU_ASSERT_EQUAL(vsched_remove(w.s, "g.c"), 0);
    }
    vsched_get_stats(w.s, &st);
    CU_ASSERT(st.graph_nodes <= 5);
    CU_ASSERT_EQUAL(st.retired_pending, 0);
    CU_ASSERT_EQUAL(st.files, 2);
    sw_stop(&w);
}

/* Finished jobs that hold references to each other -- a child holds its
 * parent, a job holds what it waited on, and a spec collapsing onto an
 * earlier one by dedupe key closes the loop -- are freed once they leave
 * the graph. */
static void finished_jobs_that_refer_to_each_other_are_freed(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    vsched_node_spec n[4] = {sw_job("fail-a"), sw_job("p"), sw_job("r"),
                             sw_job("x")};
    n[0].dedupe_key = "k";
    n[1].parent = VSCHED_REF_LOCAL(0);
    n[3].dedupe_key = "k"; /* is n[0] */
    vsched_edge_spec e[2] = {
        {VSCHED_REF_LOCAL(1), VSCHED_REF_LOCAL(2), VSCHED_GATE_AFTER_SUCCESS},
        {VSCHED_REF_LOCAL(2), VSCHED_REF_LOCAL(3),
         VSCHED_GATE_AFTER_ADMISSION},
    };
    vsched_dag dag = {n, 4, e, 2, NULL, NULL, 0};
    uint64_t ids[4];
    vsched_admission adm;
    CU_ASSERT_FATAL(vsched_submit_dag(w.s, &dag, ids, &adm, NULL) == 0);
    CU_ASSERT_EQUAL(ids[3], ids[0]);
    vsched_node_info info;
    CU_ASSERT_EQUAL(sw_node_poll(w.s, ids[0], 5000, &info),
                    VSCHED_NODE_FAILED);
    vsched_node_info_clear(&info);
    for (int i = 1; i < 3; i++) {
        CU_ASSERT(sw_node_poll(w.s, ids[i], 5000, &info) >= VSCHED_NODE_DONE);
        vsched_node_info_clear(&info);
    }
    vsched_reset(w.s); /* they leave the graph */
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    for (int i = 0; i < 2000 && st.retired_pending != 0; i++) {
        sw_sleep_ms(1);
        vsched_get_stats(w.s, &st);
    }
    CU_ASSERT_EQUAL(st.retired_pending, 0);
    CU_ASSERT_EQUAL(st.graph_nodes, 0);
    sw_stop(&w);
}

/* A reset while a grandchild job still runs: when its task returns, the
 * settling walks up through ancestors that already left the graph, each
 * held only by its child. */
static void a_subtree_settling_after_reset_frees_its_ancestors_safely(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    atomic_store(&sw_stubborn, 1);
    sw_arm("J:g");
    vsched_node_spec n[3] = {sw_job("p"), sw_job("c"), sw_job("g")};
    n[1].parent = VSCHED_REF_LOCAL(0);
    n[2].parent = VSCHED_REF_LOCAL(1);
    vsched_dag dag = {n, 3, NULL, 0, NULL, NULL, 0};
    uint64_t ids[3];
    vsched_admission adm;
    CU_ASSERT_FATAL(vsched_submit_dag(w.s, &dag, ids, &adm, NULL) == 0);
    sw_wait_entered("J:g");
    vsched_node_info info;
    CU_ASSERT_EQUAL(sw_node_poll(w.s, ids[0], 5000, &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    CU_ASSERT_EQUAL(sw_node_poll(w.s, ids[1], 5000, &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    vsched_reset(w.s); /* all three leave the graph; g still runs */
    sw_open("J:g");
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    for (int i = 0; i < 2000 && st.retired_pending != 0; i++) {
        sw_sleep_ms(1);
        vsched_get_stats(w.s, &st);
    }
    CU_ASSERT_EQUAL(st.retired_pending, 0);
    sw_stop(&w);
}

/* A blocker cycle of 200,000 files: found without recursion (the stack
 * would not hold a frame per file) and reported where cycles are errors,
 * or built as one unit where they are not. VSCHED_CHAIN sets
 * another length (the sanitizer passes use a shorter one: they check the
 * same code for races and leaks, at ten times the cost per step). */
static long chain_len = 200000;

static const char *chain_content(const char *name, char *buf, size_t cap)
{
    if (name[0] != 'c')
        return NULL;
    long i = strtol(name + 1, NULL, 10);
    if (i < 0 || i >= chain_len)
        return NULL;
    snprintf(buf, cap, "blocker c%ld\n", (i + 1) % chain_len);
    return buf;
}

static void a_blocker_cycle_of_200k_files_is_found_without_recursion(void)
{
    const char *len = getenv("VSCHED_CHAIN");
    if (len != NULL && atol(len) > 1)
        chain_len = atol(len);
    sw_world w;
    sw_options o = {
        .cpu_threads = 2, .content_of = chain_content, .cycles_fail = 1};
    sw_start(&w, &o);
    vsched_handle *h = sw_submit(w.s, "c0", VSCHED_STAGE_ANALYSIS, 0);
    const vsched_result *r = NULL;
    int st = wait_for(h, &r);
    CU_ASSERT(st == VSCHED_ECYCLE || st == VSCHED_EDEPFAIL);
    CU_ASSERT(r->message != NULL && strstr(r->message, "cycle") != NULL);
    vsched_handle_release(h);
    sw_stop(&w);
}

static void a_blocker_cycle_of_200k_files_builds_as_one_unit(void)
{
    sw_world w;
    sw_options o = {.cpu_threads = 2, .content_of = chain_content};
    sw_start(&w, &o);
    vsched_handle *h = sw_submit(w.s, "c0", VSCHED_STAGE_ANALYSIS, 0);
    const vsched_result *r = NULL;
    CU_ASSERT_EQUAL_FATAL(wait_for(h, &r), 0);
    uint64_t u = r->unit_hash;
    CU_ASSERT_NOT_EQUAL(u, 0);
    /* c0's one blocker (c1) is inside the unit: it folded the unit hash. */
    CU_ASSERT_EQUAL(r->analysis_hash, sw_fold(r->content_hash, &u, 1));
    vsched_handle_release(h);
    /* Every member was built in the same unit. */
    char last[32];
    snprintf(last, sizeof last, "c%ld", chain_len - 1);
    h = sw_submit(w.s, last, VSCHED_STAGE_ANALYSIS, 0);
    CU_ASSERT_EQUAL_FATAL(wait_for(h, &r), 0);
    CU_ASSERT_EQUAL(r->unit_hash, u);
    CU_ASSERT_EQUAL(r->analysis_hash, sw_fold(r->content_hash, &u, 1));
    vsched_handle_release(h);
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    CU_ASSERT_EQUAL(st.stage_runs[VSCHED_STAGE_ANALYSIS], (uint64_t)chain_len);
    CU_ASSERT_EQUAL(st.edges, 0);
    sw_stop(&w);
}

/* ---- 18. task events (traces) ---------------------------------------------- */

typedef struct task_log {
    pthread_mutex_t lock;
    vsched_task_event ev[64];
    char names[64][32], steps[64][16];
    size_t n;
} task_log;

static void log_task(void *user, const vsched_task_event *ev)
{
    task_log *l = user;
    pthread_mutex_lock(&l->lock);
    if (l->n < 64) {
        l->ev[l->n] = *ev;
        snprintf(l->names[l->n], sizeof l->names[0], "%s", ev->name);
        snprintf(l->steps[l->n], sizeof l->steps[0], "%s", ev->step);
        l->n++;
    }
    pthread_mutex_unlock(&l->lock);
}

static const memfs_file traced_files[] = {
    {"t.c", "blocker t.h\n"}, {"t.h", "int h;\n"}, {NULL, NULL}};

/* One event per task that ran, on the pool and thread that ran it; runs on
 * one thread never overlap. */
static void every_task_is_reported_with_its_pool_and_thread(void)
{
    static task_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
    log.n = 0;
    sw_world w;
    sw_options o = {.files = traced_files,
                    .cpu_threads = 2,
                    .task_observer = log_task,
                    .task_observer_user = &log};
    sw_start(&w, &o);
    CU_ASSERT_EQUAL(ask(w.s, "t.c", VSCHED_STAGE_ARTIFACT, NULL), 0);
    vsched_node_spec n[1] = {sw_job("j1")};
    vsched_dag dag = {n, 1, NULL, 0, NULL, NULL, 0};
    uint64_t id;
    vsched_admission adm;
    CU_ASSERT_FATAL(vsched_submit_dag(w.s, &dag, &id, &adm, NULL) == 0);
    vsched_node_info info;
    CU_ASSERT_EQUAL(sw_node_poll(w.s, id, 5000, &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    sw_stop(&w); /* every event delivered */
    /* t.c: load, parse, analysis, artifact; t.h: load, parse, analysis;
     * the job. */
    static const char *const want[][2] = {
        {"t.c", "load"},     {"t.c", "parse"}, {"t.c", "analysis"},
        {"t.c", "artifact"}, {"t.h", "load"},  {"t.h", "parse"},
        {"t.h", "analysis"}, {"j1", "test"}};
    CU_ASSERT_EQUAL(log.n, 8);
    for (size_t k = 0; k < 8; k++) {
        size_t hits = 0;
        for (size_t i = 0; i < log.n; i++)
            if (strcmp(log.names[i], want[k][0]) == 0 &&
                strcmp(log.steps[i], want[k][1]) == 0) {
                hits++;
                const vsched_task_event *e = &log.ev[i];
                CU_ASSERT_EQUAL(e->pool, strcmp(want[k][1], "load") == 0
                                             ? VSCHED_POOL_IO
                                             : VSCHED_POOL_CPU);
                CU_ASSERT(e->worker >= 0 &&
                          e->worker < (e->pool == VSCHED_POOL_IO ? 1 : 2));
                CU_ASSERT(e->started_ns > 0 &&
                          e->started_ns <= e->finished_ns);
                CU_ASSERT_EQUAL(e->status, 0);
                CU_ASSERT_EQUAL(e->refused, 0);
                CU_ASSERT_EQUAL(e->is_job, strcmp(want[k][0], "j1") == 0);
                CU_ASSERT(e->node != 0);
            }
        CU_ASSERT_EQUAL(hits, 1);
    }
    for (size_t i = 0; i < log.n; i++)
        for (size_t j = i + 1; j < log.n; j++) {
            const vsched_task_event *a = &log.ev[i], *b = &log.ev[j];
            if (a->pool == b->pool && a->worker == b->worker)
                CU_ASSERT(a->finished_ns <= b->started_ns ||
                          b->finished_ns <= a->started_ns);
        }
}

/* A task whose result went stale is reported refused. */
static void a_stale_task_is_reported_refused(void)
{
    static task_log log = {.lock = PTHREAD_MUTEX_INITIALIZER};
    log.n = 0;
    sw_world w;
    sw_options o = {.files = traced_files,
                    .cpu_threads = 2,
                    .task_observer = log_task,
                    .task_observer_user = &log};
    sw_start(&w, &o);
    atomic_store(&sw_stubborn, 1); /* the stale run returns normally */
    sw_arm("A:t.h");
    vsched_handle *h = sw_submit(w.s, "t.h", VSCHED_STAGE_ANALYSIS, 0);
    sw_wait_entered("A:t.h");
    vsched_invalidate(w.s, "t.h");
    sw_open("A:t.h");
    vsched_wait(h, NULL);
    vsched_handle_release(h);
    sw_stop(&w);
    size_t refused = 0;
    for (size_t i = 0; i < log.n; i++)
        if (strcmp(log.steps[i], "analysis") == 0 && log.ev[i].refused)
            refused++;
    CU_ASSERT_EQUAL(refused, 1);
}

/* ---- 20. the ready queue of jobs holds ready jobs -----------------------------
 * A chain of 20 jobs with its head running: 19 jobs wait on their
 * upstream, none is ready, so the queue is empty and a 1-node sub-DAG is
 * admitted without blocking (they once counted, and backpressured it). */
static void jobs_waiting_on_their_upstream_take_no_room(void)
{
    sw_world w;
    sw_options o = opts(2);
    o.ready_capacity = 8;
    sw_start(&w, &o);
    enum {
        N = 20
    };
    vsched_node_spec n[N];
    vsched_edge_spec e[N];
    char names[N][8];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "c%d", i);
        n[i] = sw_job(names[i]);
        if (i > 0)
            e[i - 1] = (vsched_edge_spec){VSCHED_REF_LOCAL(i - 1),
                                          VSCHED_REF_LOCAL(i),
                                          VSCHED_GATE_AFTER_SUCCESS};
    }
    sw_arm("J:c0");
    vsched_dag dag = {n, N, e, N - 1, NULL, NULL, 0};
    uint64_t ids[N];
    vsched_admission adm;
    CU_ASSERT_FATAL(vsched_submit_dag(w.s, &dag, ids, &adm, NULL) == 0);
    CU_ASSERT_EQUAL(adm, VSCHED_ADMITTED);
    sw_wait_entered("J:c0");
    CU_ASSERT_EQUAL(vsched_ready_queue_depth(w.s), 0);
    vsched_node_spec one[1] = {sw_job("extra")};
    vsched_dag d1 = {one, 1, NULL, 0, NULL, NULL, 0};
    uint64_t id1;
    CU_ASSERT_EQUAL(vsched_submit_dag(w.s, &d1, &id1, &adm, NULL), 0);
    CU_ASSERT_EQUAL(adm, VSCHED_ADMITTED);
    vsched_node_info info;
    sw_open("J:c0");
    for (int i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(sw_node_poll(w.s, ids[i], 5000, &info),
                        VSCHED_NODE_DONE);
        vsched_node_info_clear(&info);
    }
    CU_ASSERT_EQUAL(sw_node_poll(w.s, id1, 5000, &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    CU_ASSERT_EQUAL(vsched_ready_queue_depth(w.s), 0);
    sw_stop(&w);
}

/* ---- 21. a resource deadlock through two subtrees ------------------------------
 * PA holds r for its subtree, whose child cP waits on needS; QA holds s
 * for its subtree, whose child cQ waits on needR; needS needs s, needR
 * needs r. Neither can ever start: one of them fails naming the chain
 * (both once waited forever), and the rest then runs. */
static void a_deadlock_through_two_holders_is_reported(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    static const char *const r[] = {"r"}, *const sres[] = {"s"};
    vsched_node_spec n[6] = {sw_job("PA"), sw_job("QA"),    sw_job("cP"),
                             sw_job("cQ"), sw_job("needS"), sw_job("needR")};
    n[0].resources = r;
    n[0].n_resources = 1;
    n[1].resources = sres;
    n[1].n_resources = 1;
    n[2].parent = VSCHED_REF_LOCAL(0);
    n[3].parent = VSCHED_REF_LOCAL(1);
    n[4].resources = sres;
    n[4].n_resources = 1;
    n[5].resources = r;
    n[5].n_resources = 1;
    vsched_edge_spec e[2] = {
        {VSCHED_REF_LOCAL(4), VSCHED_REF_LOCAL(2), VSCHED_GATE_AFTER_SUCCESS},
        {VSCHED_REF_LOCAL(5), VSCHED_REF_LOCAL(3), VSCHED_GATE_AFTER_SUCCESS}};
    vsched_dag dag = {n, 6, e, 2, NULL, NULL, 0};
    uint64_t ids[6];
    vsched_admission adm;
    CU_ASSERT_FATAL(vsched_submit_dag(w.s, &dag, ids, &adm, NULL) == 0);
    vsched_node_info info[6];
    int failed = 0, done = 0;
    for (int i = 0; i < 6; i++) {
        vsched_node_state st = sw_node_poll(w.s, ids[i], 5000, &info[i]);
        CU_ASSERT(st >= VSCHED_NODE_DONE);
        done += st == VSCHED_NODE_DONE;
        if (st == VSCHED_NODE_FAILED) {
            failed++;
            CU_ASSERT_EQUAL(info[i].status, VSCHED_ECYCLE);
            CU_ASSERT(info[i].message != NULL &&
                      strstr(info[i].message, "resource deadlock") != NULL &&
                      strstr(info[i].message, "'PA'") != NULL &&
                      strstr(info[i].message, "'QA'") != NULL &&
                      strstr(info[i].message, "'cP' waits on") != NULL &&
                      strstr(info[i].message, "'cQ' waits on") != NULL);
        }
    }
    CU_ASSERT_EQUAL(failed, 1);
    CU_ASSERT_EQUAL(done, 4); /* PA, QA, and the other need's side */
    for (int i = 0; i < 6; i++)
        vsched_node_info_clear(&info[i]);
    sw_stop(&w);
}

/* ---- 22. resources held by Artifact tasks -----------------------------------
 * Artifacts of "release" hold "remote" (capacity 2): with 4 CPU threads,
 * 2 run at once; the others wait, the highest priority first; "debug"
 * needs nothing; units follow the running tasks.
 *
 * No step depends on timing: r3 and r4 have their Analysis before their
 * Artifacts are asked for, so each Artifact waits for a unit as soon as
 * the driver takes its request; the driver takes requests in order, so
 * once the debug Artifact asked after them is done, both wait. */
static const memfs_file res_files[] = {
    {"r0.c", "int a;\n"}, {"r1.c", "int a;\n"}, {"r2.c", "int a;\n"},
    {"r3.c", "int a;\n"}, {"r4.c", "int a;\n"}, {"d0.c", "int a;\n"},
    {NULL, NULL}};

static int entered_count(const char *const *keys, size_t n)
{
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += sw_entered(keys[i]) > 0;
    return k;
}

static void artifact_tasks_hold_their_stage_resources(void)
{
    sw_world w;
    sw_options o = opts(4);
    o.files = res_files;
    sw_start(&w, &o);
    static const char *const remote[] = {"remote"};
    CU_ASSERT_EQUAL(vsched_set_stage_resources(w.s, VSCHED_STAGE_ARTIFACT,
                                               "release", remote, 1),
                    0);
    CU_ASSERT_EQUAL(vsched_set_stage_resources(w.s, VSCHED_STAGE_ANALYSIS,
                                               NULL, remote, 1),
                    VSCHED_EINVAL);
    CU_ASSERT_EQUAL(vsched_set_resource_capacity(w.s, "remote", 2), 0);
    static const char *const keys[] = {"R:r0.c", "R:r1.c", "R:r2.c", "R:r3.c",
                                       "R:r4.c"};
    for (int i = 0; i < 5; i++)
        sw_arm(keys[i]);
    CU_ASSERT_EQUAL(ask(w.s, "r3.c", VSCHED_STAGE_ANALYSIS, NULL), 0);
    CU_ASSERT_EQUAL(ask(w.s, "r4.c", VSCHED_STAGE_ANALYSIS, NULL), 0);
    vsched_handle *h[5];
    for (int i = 0; i < 3; i++)
        h[i] = sw_submit(w.s, keys[i] + 2, VSCHED_STAGE_ARTIFACT, 0);
    for (int i = 0; i < 2000 && entered_count(keys, 3) < 2; i++)
        sw_sleep_ms(5);
    sw_sleep_ms(30);
    CU_ASSERT_EQUAL(entered_count(keys, 3), 2);
    /* Two more wait: the later one, of higher priority, gets the next
     * unit; a debug Artifact needs none and runs meanwhile. */
    vsched_request r3 = sw_req("r3.c", VSCHED_STAGE_ARTIFACT, 0);
    vsched_request r4 = sw_req("r4.c", VSCHED_STAGE_ARTIFACT, 5);
    CU_ASSERT_FATAL(vsched_submit_request(w.s, &r3, &h[3]) == 0);
    CU_ASSERT_FATAL(vsched_submit_request(w.s, &r4, &h[4]) == 0);
    vsched_request rd = sw_req("d0.c", VSCHED_STAGE_ARTIFACT, 0);
    rd.profile = "debug";
    vsched_handle *hd;
    CU_ASSERT_FATAL(vsched_submit_request(w.s, &rd, &hd) == 0);
    CU_ASSERT_EQUAL(wait_for(hd, NULL), 0);
    vsched_handle_release(hd);
    vsched_resource_stats rs;
    CU_ASSERT_EQUAL(vsched_resource_info(w.s, "remote", &rs), 0);
    CU_ASSERT_EQUAL(rs.capacity, 2);
    CU_ASSERT_EQUAL(rs.in_use, 2);
    CU_ASSERT_EQUAL(rs.peak, 2);
    /* Let one of the first two finish: the waiting one of priority 5. */
    int first = sw_entered("R:r0.c") ? 0 : 1;
    sw_open(keys[first]);
    CU_ASSERT_EQUAL(wait_for(h[first], NULL), 0);
    sw_wait_entered("R:r4.c");
    sw_sleep_ms(20);
    CU_ASSERT_EQUAL(sw_entered("R:r3.c"), 0);
    for (int i = 0; i < 5; i++)
        sw_open(keys[i]);
    for (int i = 0; i < 5; i++) {
        CU_ASSERT_EQUAL(wait_for(h[i], NULL), 0);
        vsched_handle_release(h[i]);
    }
    CU_ASSERT_EQUAL(vsched_resource_info(w.s, "remote", &rs), 0);
    CU_ASSERT_EQUAL(rs.in_use, 0);
    CU_ASSERT_EQUAL(rs.peak, 2);
    CU_ASSERT_EQUAL(vsched_resource_info(w.s, "nothing", &rs), VSCHED_ENOENT);
    const char *names[8];
    size_t n = vsched_resource_names(w.s, names, 8);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_STRING_EQUAL(names[0], "remote");
    sw_stop(&w);
}

/* A waiting Artifact superseded, and a reset while units are held: units
 * follow the tasks, and nothing waits on after its node ended. */
static void stage_resources_follow_the_tasks_across_supersession_and_reset(
    void)
{
    sw_world w;
    sw_options o = opts(2);
    o.files = res_files;
    sw_start(&w, &o);
    static const char *const remote[] = {"remote"};
    vsched_set_stage_resources(w.s, VSCHED_STAGE_ARTIFACT, NULL, remote, 1);
    sw_arm("R:r0.c");
    vsched_handle *h0 = sw_submit(w.s, "r0.c", VSCHED_STAGE_ARTIFACT, 0);
    sw_wait_entered("R:r0.c");
    vsched_handle *h1 = sw_submit(w.s, "r1.c", VSCHED_STAGE_ARTIFACT, 0);
    sw_sleep_ms(30); /* r1 waits for the unit */
    vsched_invalidate(w.s, "r1.c");
    CU_ASSERT_EQUAL(wait_for(h1, NULL), VSCHED_ESUPERSEDED);
    vsched_handle_release(h1);
    atomic_store(&sw_stubborn, 1); /* r0 keeps running past the reset */
    vsched_reset(w.s);
    CU_ASSERT_EQUAL(wait_for(h0, NULL), VSCHED_ESHUTDOWN);
    vsched_handle_release(h0);
    vsched_resource_stats rs;
    CU_ASSERT_EQUAL(vsched_resource_info(w.s, "remote", &rs), 0);
    CU_ASSERT_EQUAL(rs.in_use, 1); /* r0's task has not returned */
    sw_open("R:r0.c");
    for (int i = 0; i < 500 && rs.in_use != 0; i++) {
        sw_sleep_ms(2);
        vsched_resource_info(w.s, "remote", &rs);
    }
    CU_ASSERT_EQUAL(rs.in_use, 0);
    CU_ASSERT_EQUAL(ask(w.s, "r2.c", VSCHED_STAGE_ARTIFACT, NULL), 0);
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    CU_ASSERT_EQUAL(st.waiters, 0);
    sw_stop(&w);
}

/* ---- 19. a batch mixing stages with and without a profile ------------------
 * The batch keeps one copy of each run of equal profiles; the count and
 * the copy once disagreed on a request without one between two with one
 * (ASan: heap-buffer-overflow in batch_new). */
static void a_batch_alternating_profiles_and_sources(void)
{
    sw_world w;
    sw_options o = opts(1);
    sw_start(&w, &o);
    vsched_request q[6] = {
        sw_req("f.c", VSCHED_STAGE_ARTIFACT, 0),
        sw_req("f.c", VSCHED_STAGE_SOURCE, 0),
        sw_req("f.c", VSCHED_STAGE_ARTIFACT, 0),
        sw_req("f.c", VSCHED_STAGE_SOURCE, 0),
        sw_req("f.c", VSCHED_STAGE_ARTIFACT, 0),
        sw_req("f.c", VSCHED_STAGE_ANALYSIS, 0),
    };
    q[1].profile = NULL;
    q[3].profile = "";
    q[4].profile = "debug";
    q[5].profile = NULL;
    for (int atomic = 0; atomic < 2; atomic++) {
        vsched_batch *b = NULL;
        CU_ASSERT_FATAL((atomic ? vsched_submit_batch_atomic(w.s, q, 6, &b)
                                : vsched_submit_batch(w.s, q, 6, &b)) == 0);
        const vsched_result *res[6];
        CU_ASSERT_EQUAL(vsched_wait_batch(b, res), 0);
        CU_ASSERT_STRING_EQUAL(res[0]->profile, "release");
        CU_ASSERT_STRING_EQUAL(res[2]->profile, "release");
        CU_ASSERT_STRING_EQUAL(res[4]->profile, "debug");
        for (int i = 0; i < 6; i++)
            CU_ASSERT_EQUAL(res[i]->stage, q[i].stage);
        vsched_batch_release(b);
    }
    sw_stop(&w);
}

/* ---- 17. the dedupe hook on a single request ----------------------------- */

static char probed_key[256];
static int probe_answer;

static int probe(void *user, const char *key, void **joiner)
{
    snprintf(probed_key, sizeof probed_key, "%s", key);
    if (probe_answer)
        *joiner = user;
    return probe_answer;
}

static void dedupe_hook_is_probed_for_a_request_too(void)
{
    sw_world w;
    sw_options o = opts(2);
    sw_start(&w, &o);
    static int flight;
    vsched_dedupe_hook hook = {probe, &flight};
    vsched_request r = sw_req("g.c", VSCHED_STAGE_ARTIFACT, 0);
    char *key = NULL;
    CU_ASSERT_FATAL(vsched_request_key(w.s, &r, &key) == 0);
    CU_ASSERT_STRING_EQUAL(key, "artifact:release:g.c");
    vsched_stats before, after;
    vsched_get_stats(w.s, &before);
    probe_answer = 1;
    vsched_admission adm = VSCHED_ADMITTED;
    void *joiner = NULL;
    vsched_handle *h = (vsched_handle *)&flight;
    CU_ASSERT_EQUAL(
        vsched_submit_request_hooked(w.s, &r, &hook, &adm, &joiner, &h), 0);
    CU_ASSERT_EQUAL(adm, VSCHED_DEDUPE_JOINED);
    CU_ASSERT_PTR_EQUAL(joiner, &flight);
    CU_ASSERT_PTR_NULL(h);
    CU_ASSERT_STRING_EQUAL(probed_key, key);
    vsched_get_stats(w.s, &after);
    CU_ASSERT_EQUAL(after.submit_count, before.submit_count);
    CU_ASSERT_EQUAL(sw_calls('S'), 0);
    probe_answer = 0;
    CU_ASSERT_EQUAL(
        vsched_submit_request_hooked(w.s, &r, &hook, &adm, &joiner, &h), 0);
    CU_ASSERT_EQUAL(adm, VSCHED_ADMITTED);
    CU_ASSERT_FATAL(h != NULL);
    CU_ASSERT_EQUAL(wait_for(h, NULL), 0);
    vsched_handle_release(h);
    free(key);
    sw_stop(&w);
}

/* ---- 19. bounded read-ahead ------------------------------------------------ */

/* Loads run ahead of parsing by a bounded window: with the one CPU thread
 * held in a parse, the I/O pool stops loading after a window of sources
 * instead of holding the whole tree's bytes; a more urgent request is
 * still loaded at once; released, everything completes. */
#define RA_FILES 1000

static atomic_uint ra_loads;
static atomic_int ra_urgent_loaded;

static const char *ra_content(const char *name, char *buf, size_t cap)
{
    if (name[0] != 'f' && strcmp(name, "urgent.c") != 0)
        return NULL;
    snprintf(buf, cap, "int %c;\n", name[0]);
    return buf;
}

static void ra_observe(void *user, const vsched_task_event *ev)
{
    (void)user;
    if (ev->pool != VSCHED_POOL_IO || strcmp(ev->step, "load") != 0)
        return;
    atomic_fetch_add(&ra_loads, 1);
    if (strcmp(ev->name, "urgent.c") == 0)
        atomic_store(&ra_urgent_loaded, 1);
}

/* The load count once it stopped changing for 400 ms (at most 10 s). */
static unsigned ra_settled_loads(void)
{
    unsigned last = atomic_load(&ra_loads);
    int still = 0;
    for (int i = 0; i < 200 && still < 8; i++) {
        sw_sleep_ms(50);
        unsigned now = atomic_load(&ra_loads);
        still = now == last ? still + 1 : 0;
        last = now;
    }
    return last;
}

/* One CPU and one I/O thread, the parses of the first `armed` files held
 * (the first one holds the CPU thread), the load counts at zero. */
static void ra_start(sw_world *w, int armed)
{
    atomic_store(&ra_loads, 0);
    atomic_store(&ra_urgent_loaded, 0);
    sw_options o = {.cpu_threads = 1,
                    .io_threads = 1,
                    .content_of = ra_content,
                    .task_observer = ra_observe};
    sw_start(w, &o);
    char name[32];
    for (int i = 0; i < armed; i++) {
        snprintf(name, sizeof name, "S:f%04d.c", i);
        sw_arm(name);
    }
}

static void loads_run_ahead_of_parsing_by_a_bounded_window(void)
{
    sw_world w;
    ra_start(&w, 200);
    char name[32];
    static vsched_handle *h[RA_FILES + 1];
    for (int i = 0; i < RA_FILES; i++) {
        snprintf(name, sizeof name, "f%04d.c", i);
        h[i] = sw_submit(w.s, name, VSCHED_STAGE_SOURCE, 0);
    }
    unsigned held = ra_settled_loads();
    /* The window (64 with one thread per pool), the parse holding the
     * CPU thread, and a load in flight when the window filled. */
    CU_ASSERT(held >= 2);
    CU_ASSERT(held <= 64 + 2);
    vsched_request r = sw_req("urgent.c", VSCHED_STAGE_SOURCE, 10);
    CU_ASSERT_FATAL(vsched_submit_request(w.s, &r, &h[RA_FILES]) == 0);
    for (int i = 0; i < 200 && !atomic_load(&ra_urgent_loaded); i++)
        sw_sleep_ms(25);
    CU_ASSERT(atomic_load(&ra_urgent_loaded));
    CU_ASSERT(atomic_load(&ra_loads) <= held + 1);
    sw_reset_gates();
    for (int i = 0; i <= RA_FILES; i++) {
        const vsched_result *res = NULL;
        CU_ASSERT_EQUAL(wait_for(h[i], &res), 0);
        vsched_handle_release(h[i]);
    }
    CU_ASSERT_EQUAL(atomic_load(&ra_loads), RA_FILES + 1);
    sw_stop(&w);
}

/* The window fills however the loads arrive: submitted one at a time,
 * each after the one before was loaded (so the I/O runner runs dry in
 * between), with the CPU thread held in the first parse, loads go on until
 * the window is full -- no fewer. */
static void loads_fill_the_window_when_submitted_one_at_a_time(void)
{
    enum {
        N = 100
    };
    sw_world w;
    ra_start(&w, N);
    char name[32];
    static vsched_handle *h[N];
    int waiting = 1;
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "f%04d.c", i);
        h[i] = sw_submit(w.s, name, VSCHED_STAGE_SOURCE, 0);
        for (int k = 0; waiting && atomic_load(&ra_loads) < (unsigned)i + 1;
             k++) {
            if (k == 100)
                waiting = 0; /* held back: the rest are just submitted */
            sw_sleep_ms(2);
        }
    }
    unsigned held = ra_settled_loads();
    /* The window of 64 and the parse holding the CPU thread. */
    CU_ASSERT(held >= 64 + 1);
    CU_ASSERT(held <= 64 + 2);
    sw_reset_gates();
    for (int i = 0; i < N; i++) {
        CU_ASSERT_EQUAL(wait_for(h[i], NULL), 0);
        vsched_handle_release(h[i]);
    }
    CU_ASSERT_EQUAL(atomic_load(&ra_loads), N);
    sw_stop(&w);
}

static const vr_cu_test tests[] = {
    {"dedupe_collapse_that_closes_a_cycle_is_refused",
     dedupe_collapse_that_closes_a_cycle_is_refused},
    {"batch_released_before_admission_is_still_admitted_and_answered",
     batch_released_before_admission_is_still_admitted_and_answered},
    {"upsert_with_reclassification_lands_on_the_live_object",
     upsert_with_reclassification_lands_on_the_live_object},
    {"reset_answers_waiters_of_every_object",
     reset_answers_waiters_of_every_object},
    {"ready_dependent_analysis_uses_its_blockers_current_hash",
     ready_dependent_analysis_uses_its_blockers_current_hash},
    {"running_dependent_analysis_is_refused_and_rerun",
     running_dependent_analysis_is_refused_and_rerun},
    {"done_dependent_is_rebuilt_after_its_blocker_changes",
     done_dependent_is_rebuilt_after_its_blocker_changes},
    {"grant_held_for_a_subtree_that_waits_on_its_taker_is_a_deadlock",
     grant_held_for_a_subtree_that_waits_on_its_taker_is_a_deadlock},
    {"ready_work_refused_by_a_full_pool_runs_when_it_drains",
     ready_work_refused_by_a_full_pool_runs_when_it_drains},
    {"io_transport_of_capacity_one_never_strands_a_load",
     io_transport_of_capacity_one_never_strands_a_load},
    {"reset_keeps_the_capacity_of_jobs_still_running",
     reset_keeps_the_capacity_of_jobs_still_running},
    {"atomic_upsert_batch_is_never_seen_torn_by_a_root",
     atomic_upsert_batch_is_never_seen_torn_by_a_root},
    {"job_cancelled_at_insertion_keeps_no_edge",
     job_cancelled_at_insertion_keeps_no_edge},
    {"request_queued_before_remove_is_answered_shutdown",
     request_queued_before_remove_is_answered_shutdown},
    {"request_queued_before_reset_is_answered_shutdown",
     request_queued_before_reset_is_answered_shutdown},
    {"work_queued_before_a_cancel_is_cancelled_at_admission",
     work_queued_before_a_cancel_is_cancelled_at_admission},
    {"invalidate_never_waits_for_an_unrelated_plugin_call",
     invalidate_never_waits_for_an_unrelated_plugin_call},
    {"blocker_cycle_is_reported_while_other_work_streams",
     blocker_cycle_is_reported_while_other_work_streams},
    {"started_ns_is_when_the_stage_started",
     started_ns_is_when_the_stage_started},
    {"stage_runs_count_only_what_the_executor_ran",
     stage_runs_count_only_what_the_executor_ran},
    {"ready_depth_max_tracks_the_ready_queue_depth",
     ready_depth_max_tracks_the_ready_queue_depth},
    {"join_callback_fires_once_even_when_it_supersedes_its_file",
     join_callback_fires_once_even_when_it_supersedes_its_file},
    {"destroy_answers_node_waiters_first", destroy_answers_node_waiters_first},
    {"superseded_and_removed_objects_are_reclaimed",
     superseded_and_removed_objects_are_reclaimed},
    {"finished_jobs_that_refer_to_each_other_are_freed",
     finished_jobs_that_refer_to_each_other_are_freed},
    {"a_subtree_settling_after_reset_frees_its_ancestors_safely",
     a_subtree_settling_after_reset_frees_its_ancestors_safely},
    {"a_blocker_cycle_of_200k_files_is_found_without_recursion",
     a_blocker_cycle_of_200k_files_is_found_without_recursion},
    {"a_blocker_cycle_of_200k_files_builds_as_one_unit",
     a_blocker_cycle_of_200k_files_builds_as_one_unit},
    {"every_task_is_reported_with_its_pool_and_thread",
     every_task_is_reported_with_its_pool_and_thread},
    {"a_stale_task_is_reported_refused", a_stale_task_is_reported_refused},
    {"a_batch_alternating_profiles_and_sources",
     a_batch_alternating_profiles_and_sources},
    {"jobs_waiting_on_their_upstream_take_no_room",
     jobs_waiting_on_their_upstream_take_no_room},
    {"a_deadlock_through_two_holders_is_reported",
     a_deadlock_through_two_holders_is_reported},
    {"artifact_tasks_hold_their_stage_resources",
     artifact_tasks_hold_their_stage_resources},
    {"stage_resources_follow_the_tasks_across_supersession_and_reset",
     stage_resources_follow_the_tasks_across_supersession_and_reset},
    {"dedupe_hook_is_probed_for_a_request_too",
     dedupe_hook_is_probed_for_a_request_too},
    {"loads_run_ahead_of_parsing_by_a_bounded_window",
     loads_run_ahead_of_parsing_by_a_bounded_window},
    {"loads_fill_the_window_when_submitted_one_at_a_time",
     loads_fill_the_window_when_submitted_one_at_a_time},
    {NULL, NULL},
};

int main(void)
{
    return vr_cu_main("soundness", tests);
}
