/*
 * test_sched -- the file-stage scheduler of libvsched, driven through its
 * public API with the in-memory world of world.h.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vsched/vsched.h>

#include "cu.h"
#include "world.h"

/* ---- tests -------------------------------------------------------------- */

static const mem_file nested[] = {
    {"main.c", "blocker greet.h\nblocker util.h\n"},
    {"greet.h", "blocker fmt.h\n"},
    {"fmt.h", "blocker base.h\n"},
    {"base.h", "int x;\n"},
    {"util.h", "blocker base.h\n"},
    {"other.c", "blocker fmt.h\n"},
    {NULL, NULL},
};

static void header_analysis_completes_before_any_artifact_that_includes_it(
    void)
{
    vsched *s = start(nested, 2);
    vsched_request reqs[] = {
        REQ("main.c", VSCHED_STAGE_ARTIFACT, 0),
        REQ("other.c", VSCHED_STAGE_ARTIFACT, 0),
    };
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(s, reqs, 2, &b) == 0);
    const vsched_result *res[2];
    CU_ASSERT_EQUAL(vsched_wait_batch(b, res), 0);
    CU_ASSERT_EQUAL(res[0]->status, 0);
    CU_ASSERT_EQUAL(res[1]->status, 0);
    long art_main = event_index('R', "main.c");
    long art_other = event_index('R', "other.c");
    CU_ASSERT(art_main >= 0 && art_other >= 0);
    const char *main_hdrs[] = {"greet.h", "util.h", "fmt.h", "base.h"};
    for (size_t i = 0; i < 4; i++) {
        long a = event_index('A', main_hdrs[i]);
        CU_ASSERT(a >= 0);
        CU_ASSERT(a < art_main);
    }
    CU_ASSERT(event_index('A', "fmt.h") < art_other);
    CU_ASSERT(event_index('A', "base.h") < art_other);
    /* Transitive order among the headers themselves. */
    CU_ASSERT(event_index('A', "base.h") < event_index('A', "fmt.h"));
    CU_ASSERT(event_index('A', "fmt.h") < event_index('A', "greet.h"));
    /* Each stage ran once per file even though base.h is shared. */
    CU_ASSERT_EQUAL(count_stage('S'), 6);
    CU_ASSERT_EQUAL(count_stage('A'), 6);
    CU_ASSERT_EQUAL(count_stage('R'), 2);
    vsched_batch_release(b);
    stop(s);
}

static void analysis_hash_covers_included_headers(void)
{
    vsched *s = start(nested, 2);
    const vsched_result *r;
    vsched_handle *h;
    CU_ASSERT_EQUAL(request(s, "other.c", VSCHED_STAGE_ANALYSIS, &r, &h), 0);
    CU_ASSERT_NOT_EQUAL(r->analysis_hash, 0);
    CU_ASSERT_NOT_EQUAL(r->analysis_hash, r->content_hash);
    vsched_handle_release(h);
    stop(s);
}

static mem_file ordered[41];
static char ordered_names[40][16];

/* Forty files named slowNN.c / fastNN.c (their Artifacts can be slowed). */
static void init_ordered(void)
{
    for (int i = 0; i < 40; i++) {
        snprintf(ordered_names[i], sizeof ordered_names[i], "%s%02d.c",
                 i < 20 ? "slow" : "fast", i);
        ordered[i] = (mem_file){ordered_names[i], "int y;\n"};
    }
    ordered[40] = (mem_file){NULL, NULL};
}

/* Short work runs on one CPU runner at a time (runner.c, defer_runner),
 * but a task that blocks outside the scheduler holds nothing back for
 * long: here, once every step is known to be short, a.c's Artifact waits
 * (on a condition variable, unseen by the scheduler) for b.c's Artifact,
 * submitted after it; a second runner must start for b.c. The wait gives
 * up after 10 s, which fails the test. */
enum {
    WARM_FILES = 400
};
static mem_file warm_world[WARM_FILES + 3];
static char warm_names[WARM_FILES][16];
static pthread_mutex_t ab_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ab_cond = PTHREAD_COND_INITIALIZER;
static int a_entered, b_done, a_timed_out;

static void a_waits_for_b(char stage, const char *name, const vsched_ctx *ctx)
{
    (void)ctx;
    if (stage != 'R')
        return;
    pthread_mutex_lock(&ab_lock);
    if (strcmp(name, "b.c") == 0) {
        b_done = 1;
        pthread_cond_broadcast(&ab_cond);
    } else if (strcmp(name, "a.c") == 0) {
        a_entered = 1;
        pthread_cond_broadcast(&ab_cond);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 10;
        while (!b_done && !a_timed_out)
            a_timed_out =
                pthread_cond_timedwait(&ab_cond, &ab_lock, &until) != 0;
    }
    pthread_mutex_unlock(&ab_lock);
}

static void a_blocked_short_task_does_not_hold_back_the_rest(void)
{
    for (int i = 0; i < WARM_FILES; i++) {
        snprintf(warm_names[i], sizeof warm_names[i], "w%03d.c", i);
        warm_world[i] = (mem_file){warm_names[i], "int w;\n"};
    }
    warm_world[WARM_FILES] = (mem_file){"a.c", "int a;\n"};
    warm_world[WARM_FILES + 1] = (mem_file){"b.c", "int b;\n"};
    warm_world[WARM_FILES + 2] = (mem_file){NULL, NULL};
    a_entered = b_done = a_timed_out = 0;
    vsched *s = start(warm_world, 2);
    /* Every step's average is known, and short. */
    static vsched_request warm[WARM_FILES];
    for (int i = 0; i < WARM_FILES; i++)
        warm[i] = REQ(warm_names[i], VSCHED_STAGE_ARTIFACT, 0);
    vsched_batch *wb = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(s, warm, WARM_FILES, &wb) == 0);
    CU_ASSERT_EQUAL(vsched_wait_batch(wb, NULL), 0);
    vsched_batch_release(wb);
    stage_hook = a_waits_for_b;
    vsched_handle *ha = NULL, *hb = NULL;
    vsched_request ra = REQ("a.c", VSCHED_STAGE_ARTIFACT, 0);
    vsched_request rb = REQ("b.c", VSCHED_STAGE_ARTIFACT, 0);
    CU_ASSERT_FATAL(vsched_submit_request(s, &ra, &ha) == 0);
    pthread_mutex_lock(&ab_lock);
    while (!a_entered)
        pthread_cond_wait(&ab_cond, &ab_lock);
    pthread_mutex_unlock(&ab_lock);
    CU_ASSERT_FATAL(vsched_submit_request(s, &rb, &hb) == 0);
    const vsched_result *res = NULL;
    CU_ASSERT_EQUAL(vsched_wait(hb, &res), 0);
    CU_ASSERT_EQUAL(vsched_wait(ha, &res), 0);
    CU_ASSERT_EQUAL(a_timed_out, 0);
    stage_hook = NULL;
    vsched_handle_release(ha);
    vsched_handle_release(hb);
    stop(s);
}

/* Several threads wait on one batch at once, each with its own array:
 * each gets every result, in input order, and nothing of the batch is
 * written by a waiter (ThreadSanitizer checks; the batch once kept an
 * array of its own that every waiter filled). */
typedef struct batch_waiter {
    vsched_batch *b;
    const vsched_result *res[40];
    int rc;
} batch_waiter;

static void *wait_one_batch(void *arg)
{
    batch_waiter *w = arg;
    w->rc = vsched_wait_batch(w->b, w->res);
    return NULL;
}

static void many_threads_wait_on_one_batch(void)
{
    init_ordered();
    vsched *s = start(ordered, 2);
    atomic_store(&artifact_delay_us, 500);
    vsched_request reqs[40];
    for (int i = 0; i < 40; i++)
        reqs[i] = REQ(ordered_names[i], VSCHED_STAGE_ARTIFACT, 0);
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(s, reqs, 40, &b) == 0);
    enum {
        W = 4
    };
    static batch_waiter w[W];
    pthread_t th[W];
    for (int k = 0; k < W; k++) {
        w[k] = (batch_waiter){.b = b, .rc = -1};
        CU_ASSERT_FATAL(pthread_create(&th[k], NULL, wait_one_batch, &w[k]) ==
                        0);
    }
    for (int k = 0; k < W; k++)
        pthread_join(th[k], NULL);
    int wrong = 0;
    for (int k = 0; k < W; k++) {
        wrong += w[k].rc != 0;
        for (int i = 0; i < 40; i++)
            wrong += w[k].res[i] == NULL ||
                     strcmp(w[k].res[i]->name, ordered_names[i]) != 0 ||
                     w[k].res[i] != w[0].res[i];
    }
    CU_ASSERT_EQUAL(wrong, 0);
    vsched_batch_release(b);
    stop(s);
}

static void wait_batch_returns_results_in_input_order(void)
{
    /* Slow files first, fast ones later: completion order differs from
     * input order, results must not. */
    init_ordered();
    vsched *s = start(ordered, 2);
    atomic_store(&artifact_delay_us, 2000);
    vsched_request reqs[40];
    for (int i = 0; i < 40; i++)
        reqs[i] = REQ(ordered_names[i], VSCHED_STAGE_ARTIFACT, i < 20 ? 0 : 5);
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch(s, reqs, 40, &b) == 0);
    CU_ASSERT_EQUAL(vsched_batch_size(b), 40);
    const vsched_result *res[40];
    CU_ASSERT_EQUAL(vsched_wait_batch(b, res), 0);
    for (int i = 0; i < 40; i++) {
        CU_ASSERT_STRING_EQUAL(res[i]->name, ordered_names[i]);
        CU_ASSERT_EQUAL(res[i]->status, 0);
        CU_ASSERT_EQUAL(res[i]->stage, VSCHED_STAGE_ARTIFACT);
    }
    /* The fast, higher-priority half did finish first at least once:
     * otherwise this test would not exercise reordering. */
    CU_ASSERT(event_index('R', "fast39.c") < event_index('R', "slow19.c"));
    vsched_batch_release(b);
    stop(s);
}

static void source_only_request_stops_after_dependency_integration(void)
{
    vsched *s = start(nested, 2);
    const vsched_result *r;
    vsched_handle *h;
    CU_ASSERT_EQUAL(request(s, "greet.h", VSCHED_STAGE_SOURCE, &r, &h), 0);
    CU_ASSERT_EQUAL(r->stage, VSCHED_STAGE_SOURCE);
    CU_ASSERT_EQUAL_FATAL(r->n_deps, 1);
    CU_ASSERT_STRING_EQUAL(r->deps[0], "fmt.h");
    CU_ASSERT_EQUAL_FATAL(r->n_blockers, 1);
    CU_ASSERT_STRING_EQUAL(r->blockers[0], "fmt.h");
    CU_ASSERT_NOT_EQUAL(r->content_hash, 0);
    vsched_handle_release(h);
    /* Its dependency was ingested (Source ran), nothing was analysed. */
    CU_ASSERT_EQUAL(count_stage('A'), 0);
    CU_ASSERT(event_index('S', "greet.h") >= 0);
    /* A later Analysis request admits the missing stages. */
    CU_ASSERT_EQUAL(request(s, "greet.h", VSCHED_STAGE_ANALYSIS, &r, &h), 0);
    CU_ASSERT(event_index('A', "base.h") >= 0);
    CU_ASSERT(event_index('A', "greet.h") > event_index('A', "fmt.h"));
    CU_ASSERT_EQUAL(count_stage('S'), 3); /* greet, fmt, base: once each */
    vsched_handle_release(h);
    stop(s);
}

static const mem_file broken[] = {
    {"a.c", "blocker gone.h\n"},
    {"x.h", "blocker y.h\n"},
    {"y.h", "blocker x.h\n"},
    {"c.c", "blocker x.h\n"},
    {"ok.c", "int z;\n"},
    {"bad.c", "int z;\n"},
    {NULL, NULL},
};

static void missing_blocker_fails_dependent_naming_it(void)
{
    vsched *s = start(broken, 2);
    const vsched_result *r;
    vsched_handle *h;
    CU_ASSERT_EQUAL(request(s, "a.c", VSCHED_STAGE_ARTIFACT, &r, &h),
                    VSCHED_EDEPFAIL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r->failed_dep);
    CU_ASSERT_STRING_EQUAL(r->failed_dep, "gone.h");
    CU_ASSERT_PTR_NOT_NULL(strstr(r->message, "gone.h"));
    CU_ASSERT_EQUAL(count_stage('R'), 0);
    vsched_handle_release(h);
    stop(s);
}

static void blocker_cycle_is_reported_not_hung(void)
{
    cycles_fail = 1; /* a language that forbids them */
    vsched *s = start(broken, 2);
    cycles_fail = 0;
    const vsched_result *r;
    vsched_handle *h;
    CU_ASSERT_EQUAL(request(s, "c.c", VSCHED_STAGE_ARTIFACT, &r, &h),
                    VSCHED_ECYCLE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r->message);
    CU_ASSERT_PTR_NOT_NULL(strstr(r->message, "x.h"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r->message, "cycle"));
    vsched_handle_release(h);
    /* The scheduler still works afterwards. */
    CU_ASSERT_EQUAL(request(s, "ok.c", VSCHED_STAGE_ARTIFACT, &r, &h), 0);
    vsched_handle_release(h);
    stop(s);
}

/* Where the language allows them (the default), the same cycle builds. */
static void blocker_cycle_builds_by_default(void)
{
    vsched *s = start(broken, 2);
    const vsched_result *r;
    vsched_handle *h;
    CU_ASSERT_EQUAL(request(s, "c.c", VSCHED_STAGE_ARTIFACT, &r, &h), 0);
    CU_ASSERT_EQUAL(r->unit_hash, 0); /* c.c is outside the cycle */
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(request(s, "x.h", VSCHED_STAGE_ANALYSIS, &r, &h), 0);
    CU_ASSERT_NOT_EQUAL(r->unit_hash, 0);
    vsched_handle_release(h);
    vsched_stats st;
    vsched_get_stats(s, &st);
    CU_ASSERT_EQUAL(st.cycle_units, 1);
    stop(s);
}

/* A loader may leave *bytes NULL for an empty source -- never for one it
 * says has bytes. */
static int sparse_load(void *inst, const vsched_ctx *ctx, const char *name,
                       char **bytes, size_t *len)
{
    if (strcmp(name, "empty.c") == 0 || strcmp(name, "liar.c") == 0) {
        *bytes = NULL;
        *len = name[0] == 'e' ? 0 : 5;
        return VSCHED_OK;
    }
    return memfs_loader_ops.load(inst, ctx, name, bytes, len);
}

static void an_empty_source_may_come_without_bytes(void)
{
    static const mem_file files[] = {
        {"empty.c", ""}, {"liar.c", "12345"}, {NULL, NULL}};
    static vsched_loader_ops ops;
    ops = memfs_loader_ops;
    ops.load = sparse_load;
    loader_override = &ops;
    vsched *s = start(files, 1);
    loader_override = NULL;
    const vsched_result *r;
    vsched_handle *h;
    CU_ASSERT_EQUAL(request(s, "empty.c", VSCHED_STAGE_ARTIFACT, &r, &h), 0);
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(request(s, "liar.c", VSCHED_STAGE_ARTIFACT, &r, &h),
                    VSCHED_EINVAL);
    CU_ASSERT_PTR_NOT_NULL(r->message);
    CU_ASSERT_PTR_NOT_NULL(strstr(r->message, "no bytes"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r->message, "liar.c"));
    vsched_handle_release(h);
    stop(s);
}

static void executor_failure_carries_diagnostics_and_spares_the_rest(void)
{
    vsched *s = start(broken, 2);
    fail_artifact = "bad.c";
    vsched_request reqs[] = {
        REQ("ok.c", VSCHED_STAGE_ARTIFACT, 0),
        REQ("bad.c", VSCHED_STAGE_ARTIFACT, 0),
    };
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(s, reqs, 2, &b) == 0);
    const vsched_result *res[2];
    CU_ASSERT_EQUAL(vsched_wait_batch(b, res), VSCHED_ETOOL);
    CU_ASSERT_EQUAL(res[0]->status, 0);
    CU_ASSERT_EQUAL(res[1]->status, VSCHED_ETOOL);
    CU_ASSERT_EQUAL(res[1]->failed_stage, VSCHED_STAGE_ARTIFACT);
    CU_ASSERT_EQUAL_FATAL(res[1]->n_diags, 1);
    CU_ASSERT_STRING_EQUAL(res[1]->diags[0].message, "forced failure");
    CU_ASSERT_EQUAL(res[1]->diags[0].line, 3);
    vsched_batch_release(b);
    stop(s);
}

static void unresolvable_name_fails_without_running_anything(void)
{
    vsched *s = start(broken, 1);
    const vsched_result *r;
    vsched_handle *h;
    CU_ASSERT_EQUAL(request(s, "../etc/passwd", VSCHED_STAGE_SOURCE, &r, &h),
                    VSCHED_EESCAPE);
    CU_ASSERT_EQUAL(count_stage('S'), 0);
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(request(s, "nope.c", VSCHED_STAGE_ARTIFACT, &r, &h),
                    VSCHED_ENOENT);
    CU_ASSERT_EQUAL(r->failed_stage, VSCHED_STAGE_SOURCE);
    vsched_handle_release(h);
    stop(s);
}

static void parse_runs_on_cpu_pool_and_load_on_io_pool(void)
{
    vsched *s = start(nested, 2);
    const vsched_result *r;
    vsched_handle *h;
    CU_ASSERT_EQUAL(request(s, "main.c", VSCHED_STAGE_ARTIFACT, &r, &h), 0);
    vsched_handle_release(h);
    size_t loads = 0;
    pthread_mutex_lock(&rec_lock);
    for (size_t i = 0; i < n_events; i++) {
        loads += events[i].stage == 'L';
        CU_ASSERT_EQUAL(events[i].pool_kind, events[i].stage == 'L'
                                                 ? VSCHED_POOL_IO
                                                 : VSCHED_POOL_CPU);
    }
    pthread_mutex_unlock(&rec_lock);
    CU_ASSERT_EQUAL(loads, 5);
    stop(s);
}

static void identical_requests_join_one_waiter_group(void)
{
    vsched *s = start(nested, 1);
    vsched_request reqs[] = {
        REQ("main.c", VSCHED_STAGE_ARTIFACT, 0),
        REQ("main.c", VSCHED_STAGE_ARTIFACT, 0),
        REQ("main.c", VSCHED_STAGE_ARTIFACT, 0),
    };
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(s, reqs, 3, &b) == 0);
    const vsched_result *res[3];
    CU_ASSERT_EQUAL(vsched_wait_batch(b, res), 0);
    vsched_stats st;
    vsched_get_stats(s, &st);
    CU_ASSERT_EQUAL(st.dedup_joins, 2);
    CU_ASSERT_EQUAL(count_stage('R'), 1);
    CU_ASSERT_EQUAL(res[0]->analysis_hash, res[2]->analysis_hash);
    CU_ASSERT_EQUAL(res[0]->incarnation, res[1]->incarnation);
    vsched_batch_release(b);
    stop(s);
}

static void atomic_batch_counts_one_submission_plain_batch_counts_each(void)
{
    vsched *s = start(nested, 1);
    vsched_request reqs[] = {
        REQ("main.c", VSCHED_STAGE_SOURCE, 0),
        REQ("other.c", VSCHED_STAGE_SOURCE, 0),
        REQ("util.h", VSCHED_STAGE_SOURCE, 0),
    };
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(s, reqs, 3, &b) == 0);
    CU_ASSERT_EQUAL(vsched_wait_batch(b, NULL), 0);
    vsched_batch_release(b);
    vsched_stats st;
    vsched_get_stats(s, &st);
    CU_ASSERT_EQUAL(st.submit_count, 1);
    CU_ASSERT_FATAL(vsched_submit_batch(s, reqs, 3, &b) == 0);
    CU_ASSERT_EQUAL(vsched_wait_batch(b, NULL), 0);
    vsched_batch_release(b);
    vsched_get_stats(s, &st);
    CU_ASSERT_EQUAL(st.submit_count, 4);
    CU_ASSERT(st.inbox_depth_max >= 1);
    CU_ASSERT_EQUAL(st.waiters, 0);
    stop(s);
}

static void destroy_answers_parked_waiters_with_shutdown(void)
{
    init_ordered();
    vsched *s = start(ordered, 1);
    atomic_store(&artifact_delay_us, 20000);
    vsched_request reqs[20];
    for (int i = 0; i < 20; i++)
        reqs[i] = REQ(ordered_names[i], VSCHED_STAGE_ARTIFACT, 0);
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(s, reqs, 20, &b) == 0);
    vsched_destroy(s);
    const vsched_result *res[20];
    vsched_wait_batch(b, res); /* must return: nobody is stranded */
    int shut = 0;
    for (int i = 0; i < 20; i++) {
        CU_ASSERT(res[i]->status == 0 || res[i]->status == VSCHED_ESHUTDOWN);
        shut += res[i]->status == VSCHED_ESHUTDOWN;
    }
    CU_ASSERT(shut > 0);
    vsched_batch_release(b);
    vsched_pool_destroy(cpu);
    vsched_pool_destroy(io);
}

static void observer_may_cancel_on_first_failure_without_deadlock(void)
{
    init_ordered();
    vsched *s = start_observed(ordered, 1, cancel_on_failure);
    observed = s;
    atomic_store(&events_seen, 0);
    atomic_store(&cancels, 0);
    fail_artifact = "slow00.c";
    /* Slow Artifacts: the cancel surely lands while many are still to
     * come, whatever order the first stages ran in. */
    atomic_store(&artifact_delay_us, 2000);
    vsched_request reqs[20];
    for (int i = 0; i < 20; i++)
        reqs[i] = REQ(ordered_names[i], VSCHED_STAGE_ARTIFACT, 20 - i);
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(s, reqs, 20, &b) == 0);
    const vsched_result *res[20];
    vsched_wait_batch(b, res);
    CU_ASSERT_EQUAL(res[0]->status, VSCHED_ETOOL);
    int cancelled = 0;
    for (int i = 1; i < 20; i++) {
        CU_ASSERT(res[i]->status == 0 || res[i]->status == VSCHED_ECANCELLED);
        cancelled += res[i]->status == VSCHED_ECANCELLED;
    }
    CU_ASSERT(cancelled > 0);
    CU_ASSERT_EQUAL(atomic_load(&cancels), 1);
    /* Every stage that ended, ran or not, was reported. */
    CU_ASSERT(atomic_load(&events_seen) >= 20);
    vsched_batch_release(b);
    stop(s);
}

static atomic_int artifact_events;

static void count_artifacts(void *user, const vsched_event *ev)
{
    (void)user;
    if (ev->stage == VSCHED_STAGE_ARTIFACT) {
        /* A slow observer: a waiter woken before delivery would see 0. */
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
        atomic_fetch_add(&artifact_events, 1);
    }
}

static void observer_hears_a_stage_before_its_waiter_wakes(void)
{
    for (int round = 0; round < 50; round++) {
        vsched *s = start_observed(nested, 2, count_artifacts);
        atomic_store(&artifact_events, 0);
        const vsched_result *r;
        vsched_handle *h;
        CU_ASSERT_EQUAL(request(s, "other.c", VSCHED_STAGE_ARTIFACT, &r, &h),
                        0);
        CU_ASSERT_EQUAL(atomic_load(&artifact_events), 1);
        vsched_handle_release(h);
        stop(s);
    }
}

static const vr_cu_test tests[] = {
    {"observer_hears_a_stage_before_its_waiter_wakes",
     observer_hears_a_stage_before_its_waiter_wakes},

    {"header_analysis_completes_before_any_artifact_that_includes_it",
     header_analysis_completes_before_any_artifact_that_includes_it},
    {"analysis_hash_covers_included_headers",
     analysis_hash_covers_included_headers},
    {"many_threads_wait_on_one_batch", many_threads_wait_on_one_batch},
    {"a_blocked_short_task_does_not_hold_back_the_rest",
     a_blocked_short_task_does_not_hold_back_the_rest},
    {"wait_batch_returns_results_in_input_order",
     wait_batch_returns_results_in_input_order},
    {"source_only_request_stops_after_dependency_integration",
     source_only_request_stops_after_dependency_integration},
    {"missing_blocker_fails_dependent_naming_it",
     missing_blocker_fails_dependent_naming_it},
    {"blocker_cycle_is_reported_not_hung", blocker_cycle_is_reported_not_hung},
    {"blocker_cycle_builds_by_default", blocker_cycle_builds_by_default},
    {"an_empty_source_may_come_without_bytes",
     an_empty_source_may_come_without_bytes},
    {"executor_failure_carries_diagnostics_and_spares_the_rest",
     executor_failure_carries_diagnostics_and_spares_the_rest},
    {"unresolvable_name_fails_without_running_anything",
     unresolvable_name_fails_without_running_anything},
    {"parse_runs_on_cpu_pool_and_load_on_io_pool",
     parse_runs_on_cpu_pool_and_load_on_io_pool},
    {"identical_requests_join_one_waiter_group",
     identical_requests_join_one_waiter_group},
    {"atomic_batch_counts_one_submission_plain_batch_counts_each",
     atomic_batch_counts_one_submission_plain_batch_counts_each},
    {"destroy_answers_parked_waiters_with_shutdown",
     destroy_answers_parked_waiters_with_shutdown},
    {"observer_may_cancel_on_first_failure_without_deadlock",
     observer_may_cancel_on_first_failure_without_deadlock},
    {NULL, NULL},
};

int main(void)
{
    return vr_cu_main("sched", tests);
}
