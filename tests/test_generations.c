/*
 * test_generations -- identity, supersession, removal, reset, the MVCC
 * source root, witness-fenced artifacts, and the scheduler's liveness
 * paths (re-entrant join callbacks, inbox pressure, CPU workers that wait).
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
#include "world.h"

/* Internal hooks (tests link the core objects directly). */
int vsched__test_set_generation(vsched *s, const char *name,
                                uint64_t generation);
int vsched__test_handle_done(vsched_handle *h);
size_t vsched__test_ready(vsched *s, int cpu);
void vsched__test_pool_standins(vsched_pool *p, unsigned max);

static const mem_file files[] = {
    {"a.c", "blocker h.h\n"}, {"h.h", "int h;\n"},     {"b.c", "int b;\n"},
    {"inner.c", "int i;\n"},  {"outer.c", "int o;\n"}, {NULL, NULL},
};

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

/* ---- a gate that holds one stage of one file running --------------------- */

static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static char gate_stage;
static const char *gate_name;
static int gate_entered, gate_open;

static void gate_hook(char stage, const char *name, const vsched_ctx *ctx)
{
    (void)ctx;
    if (stage != gate_stage || strcmp(name, gate_name) != 0)
        return;
    pthread_mutex_lock(&gate_lock);
    gate_entered++;
    pthread_cond_broadcast(&gate_cond);
    while (!gate_open)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
}

static void gate_arm(char stage, const char *name)
{
    gate_stage = stage;
    gate_name = name;
    gate_entered = 0;
    gate_open = 0;
    stage_hook = gate_hook;
}

static void gate_wait_entered(void)
{
    pthread_mutex_lock(&gate_lock);
    while (gate_entered == 0)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
}

static void gate_release(void)
{
    pthread_mutex_lock(&gate_lock);
    gate_open = 1;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
}

static vsched_handle *submit(vsched *s, const char *name, vsched_stage st,
                             unsigned flags)
{
    vsched_request r = REQ(name, st, 0);
    r.flags = flags;
    vsched_handle *h = NULL;
    CU_ASSERT_FATAL(vsched_submit_request(s, &r, &h) == 0);
    return h;
}

static vsched_handle *upsert(vsched *s, const char *name, const char *text)
{
    vsched_request r = REQ(name, VSCHED_STAGE_SOURCE, 0);
    r.flags = VSCHED_REQ_CONTENT;
    r.content = text;
    r.content_len = strlen(text);
    vsched_handle *h = NULL;
    CU_ASSERT_FATAL(vsched_submit_request(s, &r, &h) == 0);
    return h;
}

/* Wait until the scheduler has processed everything submitted so far. */
static void settle(vsched *s)
{
    vsched_handle *h = submit(s, "b.c", VSCHED_STAGE_SOURCE, 0);
    vsched_wait(h, NULL);
    vsched_handle_release(h);
}

/* Wait (bounded) until `n` stale completions have been refused: a released
 * stale task comes back on its own time. */
static void wait_stale(vsched *s, uint64_t n)
{
    vsched_stats st;
    vsched_get_stats(s, &st);
    for (int i = 0; i < 5000 && st.stale_completion_refusals < n; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        vsched_get_stats(s, &st);
    }
}

/* ---- identity ----------------------------------------------------------- */

static void successor_after_remove_has_new_incarnation_and_generation_zero(
    void)
{
    vsched *s = start(files, 2);
    const vsched_result *r;
    vsched_handle *h;
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    uint64_t inc0 = r->incarnation;
    CU_ASSERT_EQUAL(r->generation, 0);
    vsched_handle_release(h);
    vsched_handle_release(upsert(s, "b.c", "int b2;\n"));
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    CU_ASSERT_EQUAL(r->incarnation, inc0);
    CU_ASSERT_EQUAL(r->generation, 1);
    CU_ASSERT_EQUAL(r->content_hash, fnv("int b2;\n"));
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(vsched_remove(s, "b.c"), 0);
    CU_ASSERT_EQUAL(vsched_remove(s, "b.c"), VSCHED_ENOENT);
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    CU_ASSERT(r->incarnation > inc0);
    CU_ASSERT_EQUAL(r->generation, 0);
    CU_ASSERT_EQUAL(r->content_hash, fnv("int b;\n")); /* loader's copy */
    vsched_handle_release(h);
    stop(s);
}

static void generation_exhaustion_refuses_and_never_wraps(void)
{
    vsched *s = start(files, 1);
    const vsched_result *r;
    vsched_handle *h;
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(vsched__test_set_generation(s, "b.c", UINT64_MAX - 1), 0);
    CU_ASSERT_EQUAL(vsched_invalidate(s, "b.c"), 0); /* -> MAX */
    CU_ASSERT_EQUAL(vsched_invalidate(s, "b.c"), VSCHED_EEXHAUSTED);
    h = upsert(s, "b.c", "x");
    CU_ASSERT_EQUAL(vsched_wait(h, &r), VSCHED_EEXHAUSTED);
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    CU_ASSERT_EQUAL(r->generation, UINT64_MAX);
    CU_ASSERT_EQUAL(r->content_hash, fnv("int b;\n")); /* upsert refused */
    vsched_handle_release(h);
    stop(s);
}

/* ---- supersession --------------------------------------------------------- */

static void invalidate_while_running_supersedes_waiter_and_refuses_late_work(
    void)
{
    vsched *s = start(files, 2);
    gate_arm('R', "b.c");
    vsched_handle *h = submit(s, "b.c", VSCHED_STAGE_ARTIFACT, 0);
    gate_wait_entered();
    CU_ASSERT_EQUAL(vsched_invalidate(s, "b.c"), 0);
    const vsched_result *r;
    /* Answered while the stale stage is still running: never stranded. */
    CU_ASSERT_EQUAL(vsched_wait(h, &r), VSCHED_ESUPERSEDED);
    CU_ASSERT_EQUAL(r->generation, 0);
    vsched_handle_release(h);
    gate_release();
    wait_stale(s, 1);
    vsched_stats st;
    vsched_get_stats(s, &st);
    CU_ASSERT_EQUAL(st.stale_completion_refusals, 1);
    CU_ASSERT_EQUAL(st.waiters, 0);
    vsched_handle *h2;
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_ARTIFACT, &r, &h2), 0);
    CU_ASSERT_EQUAL(r->generation, 1);
    CU_ASSERT_EQUAL(count_stage('R'), 2);
    vsched_handle_release(h2);
    stop(s);
}

static void follow_latest_waiter_is_readmitted_at_the_new_generation(void)
{
    vsched *s = start(files, 2);
    gate_arm('R', "b.c");
    vsched_handle *h =
        submit(s, "b.c", VSCHED_STAGE_ARTIFACT, VSCHED_REQ_FOLLOW_LATEST);
    gate_wait_entered();
    vsched_handle *u = upsert(s, "b.c", "int newer;\n");
    /* The upsert is admitted (its Source parsed on the other thread)
     * before the stale Artifact may finish: released first, that one
     * could complete at generation 0 ahead of the upsert's admission,
     * and answer the waiter there, correctly (seen under TSan, loaded). */
    CU_ASSERT_EQUAL(vsched_wait(u, NULL), 0);
    gate_release();
    const vsched_result *r;
    CU_ASSERT_EQUAL(vsched_wait(h, &r), 0);
    CU_ASSERT_EQUAL(r->generation, 1);
    CU_ASSERT_EQUAL(r->content_hash, fnv("int newer;\n"));
    vsched_handle_release(h);
    vsched_handle_release(u);
    stop(s);
}

static void close_file_drops_upserted_content(void)
{
    vsched *s = start(files, 1);
    const vsched_result *r;
    vsched_handle *h = upsert(s, "b.c", "overlay");
    CU_ASSERT_EQUAL(vsched_wait(h, &r), 0);
    CU_ASSERT_EQUAL(r->content_hash, fnv("overlay"));
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(vsched_close_file(s, "b.c"), 0);
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    CU_ASSERT_EQUAL(r->content_hash, fnv("int b;\n"));
    CU_ASSERT_EQUAL(r->generation, 2);
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(vsched_close_file(s, "nope.c"), VSCHED_ENOENT);
    stop(s);
}

static void dependent_is_regated_on_the_new_generation_of_its_blocker(void)
{
    vsched *s = start(files, 2);
    gate_arm('A', "h.h");
    vsched_handle *h = submit(s, "a.c", VSCHED_STAGE_ARTIFACT, 0);
    gate_wait_entered();
    vsched_handle *u = upsert(s, "h.h", "int h2;\n");
    CU_ASSERT_EQUAL(vsched_wait(u, NULL), 0);
    gate_release();
    const vsched_result *r;
    /* a.c neither failed nor ran on the old header: its analysis hash is
     * the recorder's fold of its content hash with h.h's NEW hash. */
    CU_ASSERT_EQUAL(vsched_wait(h, &r), 0);
    uint64_t expect = fnv("blocker h.h\n") * 1099511628211u ^ fnv("int h2;\n");
    CU_ASSERT_EQUAL(r->analysis_hash, expect);
    vsched_handle *hh;
    const vsched_result *rh;
    CU_ASSERT_EQUAL(request(s, "h.h", VSCHED_STAGE_ANALYSIS, &rh, &hh), 0);
    CU_ASSERT_EQUAL(rh->generation, 1);
    CU_ASSERT_EQUAL(rh->analysis_hash, fnv("int h2;\n"));
    vsched_handle_release(hh);
    vsched_handle_release(h);
    vsched_handle_release(u);
    stop(s);
}

static void remove_answers_waiters_with_shutdown(void)
{
    vsched *s = start(files, 2);
    gate_arm('R', "b.c");
    vsched_handle *h =
        submit(s, "b.c", VSCHED_STAGE_ARTIFACT, VSCHED_REQ_FOLLOW_LATEST);
    gate_wait_entered();
    CU_ASSERT_EQUAL(vsched_remove(s, "b.c"), 0);
    CU_ASSERT_EQUAL(vsched_wait(h, NULL), VSCHED_ESHUTDOWN);
    vsched_handle_release(h);
    gate_release();
    stop(s);
}

static void analysis_gates_on_the_successor_of_a_removed_blocker(void)
{
    vsched *s = start(files, 2);
    const vsched_result *r;
    vsched_handle *h;
    /* a.c integrated with h.h as a blocker, then h.h removed: a later
     * Analysis of a.c must gate on h.h's successor, not the retired
     * object (which admits nothing and would strand the request). */
    CU_ASSERT_EQUAL(request(s, "a.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(vsched_remove(s, "h.h"), 0);
    CU_ASSERT_EQUAL(request(s, "a.c", VSCHED_STAGE_ANALYSIS, &r, &h), 0);
    uint64_t expect = fnv("blocker h.h\n") * 1099511628211u ^ fnv("int h;\n");
    CU_ASSERT_EQUAL(r->analysis_hash, expect);
    vsched_handle_release(h);
    stop(s);
}

/* A blocker's edit reaches the files that fold it whatever became of the
 * objects involved: in a fresh scheduler, after a reset (the dependents
 * index went whole), and after the blocker was removed (its successor
 * object is another than the one the dependent's facts hold). */
static void a_blocker_edit_reaches_its_dependents_after_reset_and_remove(void)
{
    vsched *s = start(files, 2);
    const vsched_result *r;
    vsched_handle *h;
    uint64_t folded = fnv("blocker h.h\n") * 1099511628211u;
    for (int round = 0; round < 3; round++) {
        if (round == 1)
            vsched_reset(s);
        if (round == 2)
            CU_ASSERT_EQUAL(vsched_remove(s, "h.h"), 0);
        CU_ASSERT_EQUAL(request(s, "a.c", VSCHED_STAGE_ANALYSIS, &r, &h), 0);
        vsched_handle_release(h);
        char text[32];
        snprintf(text, sizeof text, "int h%d;\n", round);
        vsched_handle *u = upsert(s, "h.h", text);
        CU_ASSERT_EQUAL(vsched_wait(u, NULL), 0);
        vsched_handle_release(u);
        CU_ASSERT_EQUAL(request(s, "a.c", VSCHED_STAGE_ANALYSIS, &r, &h), 0);
        CU_ASSERT_EQUAL(r->analysis_hash, folded ^ fnv(text));
        vsched_handle_release(h);
    }
    stop(s);
}

static void reset_returns_all_occupancy_to_zero(void)
{
    vsched *s = start(files, 2);
    const vsched_result *r;
    vsched_handle *h;
    CU_ASSERT_EQUAL(request(s, "a.c", VSCHED_STAGE_ARTIFACT, &r, &h), 0);
    vsched_handle_release(h);
    vsched_stats st;
    vsched_get_stats(s, &st);
    CU_ASSERT(st.files == 2 && st.graph_nodes >= 5 && st.blockers == 1);
    CU_ASSERT(st.edges_capacity >= st.edges);
    /* Reset with work in flight returns promptly and answers it. */
    gate_arm('R', "b.c");
    h = submit(s, "b.c", VSCHED_STAGE_ARTIFACT, 0);
    gate_wait_entered();
    vsched_reset(s);
    CU_ASSERT_EQUAL(vsched_wait(h, NULL), VSCHED_ESHUTDOWN);
    vsched_handle_release(h);
    vsched_get_stats(s, &st);
    assert_occupancy_zero(&st);
    CU_ASSERT(st.retired_pending > 0); /* the held task is still out */
    gate_release();
    stage_hook = NULL;
    CU_ASSERT_EQUAL(request(s, "a.c", VSCHED_STAGE_ARTIFACT, &r, &h), 0);
    vsched_handle_release(h);
    /* The held task comes back on its own time; bounded wait for it. */
    for (int i = 0; i < 5000 && st.retired_pending != 0; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        settle(s);
        vsched_get_stats(s, &st);
    }
    CU_ASSERT_EQUAL(st.retired_pending, 0); /* freed once it came back */
    CU_ASSERT(st.stale_completion_refusals >= 1);
    stop(s);
}

static void source_request_joins_live_source_and_gets_integrated_deps(void)
{
    vsched *s = start(files, 2);
    gate_arm('S', "a.c"); /* hold the parse: Source is live, not done */
    vsched_handle *h1 = submit(s, "a.c", VSCHED_STAGE_SOURCE, 0);
    gate_wait_entered();
    vsched_handle *h2 = submit(s, "a.c", VSCHED_STAGE_SOURCE, 0);
    settle(s); /* h2 admitted while the Source is still running */
    int early = vsched__test_handle_done(h2);
    CU_ASSERT_EQUAL(early, 0); /* no early result */
    gate_release();
    const vsched_result *r1, *r2;
    CU_ASSERT_EQUAL(vsched_wait(h1, &r1), 0);
    CU_ASSERT_EQUAL(vsched_wait(h2, &r2), 0);
    /* Both answered only after the deps were integrated. */
    CU_ASSERT_EQUAL_FATAL(r2->n_deps, 1);
    CU_ASSERT_STRING_EQUAL(r2->deps[0], "h.h");
    CU_ASSERT_EQUAL(r1->n_deps, 1);
    CU_ASSERT_EQUAL(count_stage('S') >= 1, 1);
    CU_ASSERT_EQUAL(count_stage('A'), 0); /* Source-only: no Analysis */
    vsched_stats st;
    vsched_get_stats(s, &st);
    CU_ASSERT(st.dedup_joins >= 1);
    vsched_handle_release(h1);
    vsched_handle_release(h2);
    stop(s);
}

static mem_file wide[201];
static char wide_names[200][16];
static vsched *polled;
static atomic_int torn_seen;

/* Runs on a worker as each load starts -- the first work dispatched after
 * admission: admission of an atomic batch is one critical section, so
 * every file of it is already there. */
static void files_at_source(char stage, const char *name, const vsched_ctx *c)
{
    (void)name;
    (void)c;
    if (stage != 'L')
        return;
    vsched_stats st;
    vsched_get_stats(polled, &st);
    if (st.files != 200)
        atomic_store(&torn_seen, (int)st.files);
}

static void atomic_batch_is_never_seen_half_admitted(void)
{
    for (int i = 0; i < 200; i++) {
        snprintf(wide_names[i], sizeof wide_names[i], "w%02d.c", i);
        wide[i] = (mem_file){wide_names[i], "int w;\n"};
    }
    wide[200] = (mem_file){NULL, NULL};
    for (int round = 0; round < 30; round++) {
        vsched *s = start(wide, 2);
        polled = s;
        atomic_store(&torn_seen, 0);
        stage_hook = files_at_source;
        vsched_request *reqs = calloc(200, sizeof *reqs);
        for (int i = 0; i < 200; i++)
            reqs[i] = REQ(wide_names[i], VSCHED_STAGE_SOURCE, 0);
        vsched_batch *b;
        CU_ASSERT_FATAL(vsched_submit_batch_atomic(s, reqs, 200, &b) == 0);
        CU_ASSERT_EQUAL(vsched_wait_batch(b, NULL), 0);
        CU_ASSERT_EQUAL(atomic_load(&torn_seen), 0);
        vsched_batch_release(b);
        free(reqs);
        stop(s);
    }
}

/* ---- MVCC source root --------------------------------------------------- */

static void source_root_answers_as_of_its_epoch_and_reclaims_by_lease(void)
{
    vsched *s = start(files, 1);
    vsched_root *r0, *r1, *r2, *r3;
    vsched_source_info in;
    CU_ASSERT_EQUAL(vsched_capture_source_root(s, &r0), 0);
    const vsched_result *r;
    vsched_handle *h;
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(vsched_capture_source_root(s, &r1), 0);
    CU_ASSERT_EQUAL(vsched_invalidate(s, "b.c"), 0);
    CU_ASSERT_EQUAL(vsched_capture_source_root(s, &r2), 0);
    CU_ASSERT_EQUAL(vsched_remove(s, "b.c"), 0);
    CU_ASSERT_EQUAL(vsched_capture_source_root(s, &r3), 0);

    vsched_root_lookup(r0, "b.c", &in);
    CU_ASSERT_EQUAL(in.state, VSCHED_SOURCE_UNKNOWN);
    vsched_root_lookup(r1, "b.c", &in);
    CU_ASSERT_EQUAL(in.state, VSCHED_SOURCE_PRESENT);
    CU_ASSERT_EQUAL(in.generation, 0);
    CU_ASSERT_EQUAL(in.content_hash, fnv("int b;\n"));
    vsched_root_lookup(r2, "b.c", &in);
    CU_ASSERT_EQUAL(in.state, VSCHED_SOURCE_PENDING);
    CU_ASSERT_EQUAL(in.generation, 1);
    vsched_root_lookup(r3, "b.c", &in);
    CU_ASSERT_EQUAL(in.state, VSCHED_SOURCE_ABSENT);
    CU_ASSERT(vsched_root_epoch(r1) < vsched_root_epoch(r2));

    /* r0 is live: every version is visible to someone. */
    CU_ASSERT_EQUAL(vsched_reclaim_source_versions(s), 0);
    vsched_root_release(r0);
    vsched_root_release(r1);
    vsched_root_release(r2);
    /* Only r3 (and the present) remain: the two older versions go. */
    CU_ASSERT_EQUAL(vsched_reclaim_source_versions(s), 2);
    vsched_root_lookup(r3, "b.c", &in);
    CU_ASSERT_EQUAL(in.state, VSCHED_SOURCE_ABSENT);
    vsched_stats st;
    vsched_get_stats(s, &st);
    CU_ASSERT_EQUAL(st.live_roots, 1);
    CU_ASSERT_EQUAL(st.source_versions, 1);
    stop(s);
    /* A root may outlive its scheduler. */
    vsched_root_lookup(r3, "b.c", &in);
    CU_ASSERT_EQUAL(in.state, VSCHED_SOURCE_ABSENT);
    vsched_root_release(r3);
}

/* Teardown retires every file, but a root captured before it sees its own
 * epoch: the file stays PRESENT with its content, as a reset would not
 * leave it. */
static void root_captured_before_destroy_still_sees_its_epoch(void)
{
    vsched *s = start(files, 1);
    const vsched_result *r;
    vsched_handle *h;
    vsched_root *root;
    vsched_source_info in;
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(vsched_capture_source_root(s, &root), 0);
    uint64_t epoch = vsched_root_epoch(root);
    stop(s);
    CU_ASSERT_EQUAL(vsched_root_lookup(root, "b.c", &in), 0);
    CU_ASSERT_EQUAL(in.state, VSCHED_SOURCE_PRESENT);
    CU_ASSERT_EQUAL(in.generation, 0);
    CU_ASSERT_EQUAL(in.content_hash, fnv("int b;\n"));
    CU_ASSERT_EQUAL(vsched_root_epoch(root), epoch);
    CU_ASSERT_EQUAL(vsched_root_lookup(root, "x.c", &in), 0);
    CU_ASSERT_EQUAL(in.state, VSCHED_SOURCE_UNKNOWN);
    vsched_root_release(root);
}

/* ---- witnesses -------------------------------------------------------- */

/* A file's first profile has its slot inside the file object, the others
 * in an array: every profile keeps its own Artifact node and committed
 * data whichever way the slots grew. */
static void every_profile_keeps_its_artifact_and_committed_data(void)
{
    static const char *const profiles[] = {"p0", "p1", "p2", "p3", "p4"};
    enum {
        NP = sizeof profiles / sizeof *profiles
    };
    vsched *s = start(files, 2);
    vsched_handle *h[NP];
    for (int i = 0; i < NP; i++) {
        vsched_request r = REQ("b.c", VSCHED_STAGE_ARTIFACT, 0);
        r.profile = profiles[i];
        CU_ASSERT_FATAL(vsched_submit_request(s, &r, &h[i]) == 0);
    }
    for (int i = 0; i < NP; i++) {
        const vsched_result *r = NULL;
        CU_ASSERT_EQUAL(vsched_wait(h[i], &r), 0);
        CU_ASSERT_EQUAL(r->status, VSCHED_OK);
        CU_ASSERT_STRING_EQUAL(r->profile, profiles[i]);
        vsched_handle_release(h[i]);
    }
    vsched_witness w;
    uint64_t hash;
    CU_ASSERT_EQUAL_FATAL(vsched_get_witnessed_source(s, "b.c", &w, &hash), 0);
    for (int i = 0; i < NP; i++)
        CU_ASSERT_EQUAL(
            vsched_commit_artifact(s, &w, profiles[i], profiles[i], 3), 0);
    for (int i = NP; i-- > 0;) {
        void *data = NULL;
        size_t len = 0;
        uint64_t gen = 99;
        CU_ASSERT_EQUAL_FATAL(
            vsched_get_artifact(s, "b.c", profiles[i], &data, &len, &gen), 0);
        CU_ASSERT_EQUAL(len, 3);
        CU_ASSERT_EQUAL(memcmp(data, profiles[i], 3), 0);
        CU_ASSERT_EQUAL(gen, 0);
        free(data);
    }
    CU_ASSERT_EQUAL(vsched_remove_artifact_not_newer_than(s, &w, "p0"), 0);
    void *data = NULL;
    size_t len = 0;
    uint64_t gen = 0;
    CU_ASSERT_EQUAL(vsched_get_artifact(s, "b.c", "p0", &data, &len, &gen),
                    VSCHED_ENOENT);
    CU_ASSERT_EQUAL(vsched_get_artifact(s, "b.c", "p4", &data, &len, &gen), 0);
    free(data);
    stop(s);
}

static void witness_commits_only_into_the_same_live_object_and_generation(void)
{
    vsched *s = start(files, 1);
    const vsched_result *r;
    vsched_handle *h;
    vsched_witness w, w2;
    uint64_t hash;
    CU_ASSERT_EQUAL(vsched_get_witnessed_source(s, "b.c", &w, &hash),
                    VSCHED_ENOENT);
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(vsched_get_witnessed_source(s, "b.c", &w, &hash), 0);
    CU_ASSERT_EQUAL(hash, fnv("int b;\n"));
    CU_ASSERT_EQUAL(vsched_commit_artifact(s, &w, "release", "obj", 3), 0);
    void *data;
    size_t len;
    uint64_t gen;
    CU_ASSERT_EQUAL(
        vsched_get_artifact(s, "b.c", "release", &data, &len, &gen), 0);
    CU_ASSERT_EQUAL(len, 3);
    CU_ASSERT_EQUAL(memcmp(data, "obj", 3), 0);
    free(data);

    /* A successor object at the same generation, same content: refused. */
    CU_ASSERT_EQUAL(vsched_remove(s, "b.c"), 0);
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(vsched_get_witnessed_source(s, "b.c", &w2, &hash), 0);
    CU_ASSERT_EQUAL(w2.generation, w.generation);
    CU_ASSERT_NOT_EQUAL(w2.incarnation, w.incarnation);
    CU_ASSERT_EQUAL(vsched_commit_artifact(s, &w, "release", "old", 3),
                    VSCHED_ESTALE);
    CU_ASSERT_EQUAL(vsched_remove_artifact_not_newer_than(s, &w, "release"),
                    VSCHED_ESTALE);
    CU_ASSERT_EQUAL(
        vsched_get_artifact(s, "b.c", "release", &data, &len, &gen),
        VSCHED_ENOENT);

    /* Same object, older generation: refused; eviction by a newer witness
     * works, by an older one does not touch a newer artifact. */
    CU_ASSERT_EQUAL(vsched_commit_artifact(s, &w2, "release", "new", 3), 0);
    CU_ASSERT_EQUAL(vsched_invalidate(s, "b.c"), 0);
    CU_ASSERT_EQUAL(vsched_commit_artifact(s, &w2, "release", "x", 1),
                    VSCHED_ESTALE);
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    vsched_handle_release(h);
    vsched_witness w3;
    CU_ASSERT_EQUAL(vsched_get_witnessed_source(s, "b.c", &w3, NULL), 0);
    CU_ASSERT_EQUAL(w3.generation, w2.generation + 1);
    CU_ASSERT_EQUAL(vsched_commit_artifact(s, &w3, "release", "v3", 2), 0);
    CU_ASSERT_EQUAL(vsched_remove_artifact_not_newer_than(s, &w2, "release"),
                    VSCHED_ENOENT); /* the artifact is newer than w2 */
    CU_ASSERT_EQUAL(vsched_remove_artifact_not_newer_than(s, &w3, "release"),
                    0);
    CU_ASSERT_EQUAL(
        vsched_get_artifact(s, "b.c", "release", &data, &len, &gen),
        VSCHED_ENOENT);
    stop(s);
}

static const char *as_cxx(const char *name)
{
    return strcmp(name, "b.c") == 0 ? "cxx" : NULL;
}

static void rehome_makes_a_successor_object_and_refuses_old_witnesses(void)
{
    vsched *s = start(files, 1);
    const vsched_result *r;
    vsched_handle *h;
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    uint64_t inc0 = r->incarnation;
    vsched_handle_release(h);
    vsched_witness w, w2;
    CU_ASSERT_EQUAL(vsched_get_witnessed_source(s, "b.c", &w, NULL), 0);
    classify_hook = as_cxx; /* the loader now sees another language */
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    CU_ASSERT(r->incarnation > inc0);
    CU_ASSERT_EQUAL(r->generation, 0);
    CU_ASSERT_EQUAL(r->content_hash, fnv("int b;\n")); /* same content */
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(vsched_get_witnessed_source(s, "b.c", &w2, NULL), 0);
    CU_ASSERT_EQUAL(w2.generation, w.generation);
    CU_ASSERT_EQUAL(vsched_commit_artifact(s, &w, "release", "o", 1),
                    VSCHED_ESTALE);
    CU_ASSERT_EQUAL(vsched_commit_artifact(s, &w2, "release", "n", 1), 0);
    /* A second request with the same classification keeps the object. */
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    CU_ASSERT_EQUAL(r->incarnation, w2.incarnation);
    vsched_handle_release(h);
    stop(s);
}

/* Committed artifacts of two profiles and upserted content live side by
 * side on one object (its extras, files.h): each commit replaces only its
 * own profile's, an eviction takes only its own, and a re-home keeps the
 * content but not the commits (an old witness is refused anyway). */
static void commits_of_two_profiles_and_content_share_an_object(void)
{
    vsched *s = start(files, 1);
    const vsched_result *r;
    vsched_handle *h = upsert(s, "b.c", "int up;\n");
    CU_ASSERT_EQUAL(vsched_wait(h, &r), 0);
    vsched_handle_release(h);
    vsched_witness w;
    CU_ASSERT_EQUAL_FATAL(vsched_get_witnessed_source(s, "b.c", &w, NULL), 0);
    CU_ASSERT_EQUAL(vsched_commit_artifact(s, &w, "release", "r1", 2), 0);
    CU_ASSERT_EQUAL(vsched_commit_artifact(s, &w, "debug", "d1", 2), 0);
    CU_ASSERT_EQUAL(vsched_commit_artifact(s, &w, "release", "r22", 3), 0);
    void *data = NULL;
    size_t len = 0;
    uint64_t gen = 0;
    CU_ASSERT_EQUAL(vsched_get_artifact(s, "b.c", "release", &data, &len, &gen),
                    0);
    CU_ASSERT(len == 3 && memcmp(data, "r22", 3) == 0);
    free(data);
    CU_ASSERT_EQUAL(vsched_get_artifact(s, "b.c", "debug", &data, &len, &gen),
                    0);
    CU_ASSERT(len == 2 && memcmp(data, "d1", 2) == 0);
    free(data);
    CU_ASSERT_EQUAL(vsched_remove_artifact_not_newer_than(s, &w, "debug"), 0);
    CU_ASSERT_EQUAL(vsched_get_artifact(s, "b.c", "debug", &data, &len, &gen),
                    VSCHED_ENOENT);
    CU_ASSERT_EQUAL(vsched_get_artifact(s, "b.c", "release", &data, &len, &gen),
                    0);
    free(data);
    /* The content is still the upsert's. */
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    CU_ASSERT_EQUAL(r->content_hash, fnv("int up;\n"));
    vsched_handle_release(h);
    classify_hook = as_cxx; /* re-home */
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    CU_ASSERT_EQUAL(r->content_hash, fnv("int up;\n"));
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(vsched_get_artifact(s, "b.c", "release", &data, &len, &gen),
                    VSCHED_ENOENT);
    CU_ASSERT_EQUAL(vsched_commit_artifact(s, &w, "release", "x", 1),
                    VSCHED_ESTALE);
    stop(s);
}

/* The successor a re-home makes keeps the upserted content (the old
 * object's word holds the successor from then on: files.h), and removing
 * the name afterwards frees both. */
static void rehome_keeps_upserted_content_in_the_successor(void)
{
    vsched *s = start(files, 1);
    const vsched_result *r;
    vsched_handle *h = upsert(s, "b.c", "int up;\n");
    CU_ASSERT_EQUAL(vsched_wait(h, &r), 0);
    CU_ASSERT_EQUAL(r->content_hash, fnv("int up;\n"));
    uint64_t inc0 = r->incarnation;
    vsched_handle_release(h);
    classify_hook = as_cxx;
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    CU_ASSERT(r->incarnation > inc0);
    CU_ASSERT_EQUAL(r->content_hash, fnv("int up;\n")); /* not the disk's */
    vsched_handle_release(h);
    /* Once more, after a second re-home back: still the upsert. */
    classify_hook = NULL;
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    CU_ASSERT_EQUAL(r->content_hash, fnv("int up;\n"));
    vsched_handle_release(h);
    CU_ASSERT_EQUAL(vsched_remove(s, "b.c"), 0);
    CU_ASSERT_EQUAL(request(s, "b.c", VSCHED_STAGE_SOURCE, &r, &h), 0);
    CU_ASSERT_EQUAL(r->content_hash, fnv("int b;\n")); /* the disk's again */
    vsched_handle_release(h);
    stop(s);
}

/* ---- liveness ------------------------------------------------------------ */

static vsched *join_sched;
static atomic_int joins_seen, joins_done;

static void on_join_resubmit(void *user, const char *name, vsched_stage st)
{
    (void)user;
    (void)st;
    atomic_fetch_add(&joins_seen, 1);
    /* Re-enter from the driver thread with a tiny inbox: 20 submissions
     * must not park the driver on its own inbox. */
    for (int i = 0; i < 20; i++) {
        vsched_handle *h = submit(join_sched, name, VSCHED_STAGE_SOURCE, 0);
        vsched_handle_release(h);
    }
    atomic_store(&joins_done, 1);
}

static void join_callback_runs_unlocked_and_may_reenter(void)
{
    vsched *s = start_with(files, 1, 2, NULL);
    join_sched = s;
    atomic_store(&joins_seen, 0);
    atomic_store(&joins_done, 0);
    vsched_request reqs[2] = {REQ("a.c", VSCHED_STAGE_ARTIFACT, 0),
                              REQ("a.c", VSCHED_STAGE_ARTIFACT, 0)};
    reqs[1].on_join = on_join_resubmit;
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(s, reqs, 2, &b) == 0);
    CU_ASSERT_EQUAL(vsched_wait_batch(b, NULL), 0);
    vsched_batch_release(b);
    /* The callback runs after the waiters wake: wait (bounded) for it. */
    for (int i = 0; i < 5000 && !atomic_load(&joins_done); i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    settle(s);
    CU_ASSERT_EQUAL(atomic_load(&joins_done), 1);
    CU_ASSERT_EQUAL(atomic_load(&joins_seen), 1);
    vsched_stats st;
    vsched_get_stats(s, &st);
    CU_ASSERT(st.inbox_depth_max <= 2);
    CU_ASSERT_EQUAL(st.submit_count, 1 + 20 + 1);
    stop(s);
}

typedef struct flood_arg {
    vsched *s;
    int n;
} flood_arg;

static void *flood(void *arg)
{
    flood_arg *a = arg;
    vsched_handle **hs = calloc((size_t)a->n, sizeof *hs);
    for (int i = 0; i < a->n; i++) {
        vsched_request r = REQ(i % 2 ? "a.c" : "b.c", VSCHED_STAGE_SOURCE, 0);
        if (vsched_submit_request(a->s, &r, &hs[i]) != 0)
            hs[i] = NULL;
    }
    int ok = 1;
    for (int i = 0; i < a->n; i++) {
        ok &= hs[i] != NULL && vsched_wait(hs[i], NULL) == 0;
        vsched_handle_release(hs[i]);
    }
    free(hs);
    return (void *)(intptr_t)ok;
}

static void inbox_flood_never_exceeds_capacity_or_drops(void)
{
    vsched *s = start_with(files, 2, 16, NULL);
    pthread_t th[8];
    flood_arg a = {s, 500};
    for (int i = 0; i < 8; i++)
        pthread_create(&th[i], NULL, flood, &a);
    int ok = 1;
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(th[i], &r);
        ok &= (int)(intptr_t)r;
    }
    CU_ASSERT(ok);
    vsched_stats st;
    vsched_get_stats(s, &st);
    CU_ASSERT_EQUAL(st.submit_count, 4000);
    CU_ASSERT(st.inbox_depth_max <= 16);
    CU_ASSERT(st.inbox_depth_max >= 1);
    CU_ASSERT_EQUAL(st.waiters, 0);
    stop(s);
}

static vsched *wait_sched;
static atomic_int inner_status;

static void wait_inside_stage(char stage, const char *name,
                              const vsched_ctx *ctx)
{
    (void)ctx;
    if (stage != 'A' || strcmp(name, "outer.c") != 0)
        return;
    /* A CPU worker waits on other CPU work: with one CPU thread only a
     * stand-in can run it. */
    vsched_handle *h = submit(wait_sched, "inner.c", VSCHED_STAGE_ARTIFACT, 0);
    atomic_store(&inner_status, vsched_wait(h, NULL));
    vsched_handle_release(h);
}

static void a_cpu_worker_that_waits_leaves_its_pool_working(void)
{
    vsched *s = start(files, 1);
    wait_sched = s;
    atomic_store(&inner_status, -999);
    stage_hook = wait_inside_stage;
    const vsched_result *r;
    vsched_handle *h;
    CU_ASSERT_EQUAL(request(s, "outer.c", VSCHED_STAGE_ANALYSIS, &r, &h), 0);
    CU_ASSERT_EQUAL(atomic_load(&inner_status), 0);
    CU_ASSERT(event_index('R', "inner.c") >= 0);
    CU_ASSERT(event_index('R', "inner.c") < event_index('A', "outer.c"));
    /* On the stand-in's lane, not on the waiting worker's stack. */
    CU_ASSERT_EQUAL(events[event_index('R', "inner.c")].worker, 1);
    vsched_handle_release(h);
    stop(s);
}

static mem_file many[42];
static char many_names[40][16];

/* many[0..n): files PREFIXnn.c (nn the index, two digits), each `text`. */
static void many_files(const char *prefix, int n, const char *text)
{
    for (int i = 0; i < n; i++) {
        snprintf(many_names[i], sizeof many_names[i], "%s%02d.c", prefix, i);
        many[i] = (mem_file){many_names[i], text};
    }
}

static void high_priority_demand_runs_before_lower_ready_work(void)
{
    many_files("slow", 40, "int z;\n");
    many[40] = (mem_file){"a.c", "blocker h.h\n"};
    many[41] = (mem_file){"h.h", "int h;\n"};
    vsched *s = start(many, 1);
    atomic_store(&artifact_delay_us, 1000);
    vsched_request low[40];
    for (int i = 0; i < 40; i++)
        low[i] = REQ(many_names[i], VSCHED_STAGE_ARTIFACT, 0);
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(s, low, 40, &b) == 0);
    vsched_request hi = REQ("a.c", VSCHED_STAGE_ARTIFACT, 100);
    vsched_handle *h;
    CU_ASSERT_FATAL(vsched_submit_request(s, &hi, &h) == 0);
    CU_ASSERT_EQUAL(vsched_wait(h, NULL), 0);
    CU_ASSERT_EQUAL(vsched_wait_batch(b, NULL), 0);
    /* The demanded chain (h.h's Analysis included) overtook most of the
     * forty slow low-priority Artifacts already queued. */
    long art_a = event_index('R', "a.c");
    long ana_h = event_index('A', "h.h");
    CU_ASSERT(ana_h < art_a);
    CU_ASSERT(art_a < event_index('R', "slow20.c"));
    vsched_handle_release(h);
    vsched_batch_release(b);
    stop(s);
}

/* Wait (bounded) until `name`'s stage `stage` was recorded. */
static int recorded(char stage, const char *name)
{
    for (int i = 0; i < 5000 && event_index(stage, name) < 0; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return event_index(stage, name) >= 0;
}

/* Short tasks are taken several per hold of the scheduler lock, but a
 * batch never mixes keys. Twenty low-priority parses are ready, then a
 * demanded file's, while an Analysis holds the one CPU worker: once it is
 * free, the demanded file's whole chain (parse, Analysis, Artifact) runs
 * before any of the twenty, as it would one task at a time -- its
 * Analysis and Artifact become ready only after twenty parses were. */
static void batched_short_tasks_keep_priority_order(void)
{
    many_files("q", 20, "int q;\n");
    many[20] = (mem_file){"hot.c", "int hot;\n"};
    many[21] = (mem_file){"hold.c", "int hold;\n"};
    many[22] = (mem_file){NULL, NULL};
    vsched *s = start(many, 1);
    /* hold.c's parse makes parses known to be short; its Analysis holds
     * the worker. */
    gate_arm('A', "hold.c");
    vsched_handle *hold = submit(s, "hold.c", VSCHED_STAGE_ANALYSIS, 0);
    gate_wait_entered();
    vsched_request low[20];
    for (int i = 0; i < 20; i++)
        low[i] = REQ(many_names[i], VSCHED_STAGE_ARTIFACT, 0);
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(s, low, 20, &b) == 0);
    for (int i = 0; i < 20; i++)
        CU_ASSERT_FATAL(recorded('L', many_names[i]));
    vsched_request hot = REQ("hot.c", VSCHED_STAGE_ARTIFACT, 9);
    vsched_handle *h = NULL;
    CU_ASSERT_FATAL(vsched_submit_request(s, &hot, &h) == 0);
    CU_ASSERT_FATAL(recorded('L', "hot.c"));
    gate_release();
    CU_ASSERT_EQUAL(vsched_wait(h, NULL), 0);
    CU_ASSERT_EQUAL(vsched_wait_batch(b, NULL), 0);
    CU_ASSERT_EQUAL(vsched_wait(hold, NULL), 0);
    long hot_art = event_index('R', "hot.c");
    CU_ASSERT(event_index('S', "hot.c") < event_index('A', "hot.c"));
    CU_ASSERT(event_index('A', "hot.c") < hot_art);
    for (int i = 0; i < 20; i++)
        CU_ASSERT(hot_art < event_index('S', many_names[i]));
    vsched_handle_release(h);
    vsched_handle_release(hold);
    vsched_batch_release(b);
    stop(s);
}

/* Wait up to 10 s for h; a worker stuck for good fails the run now
 * (saying why) rather than hanging it. */
static void finish_or_exit(vsched_handle *h, const char *why)
{
    for (int i = 0; i < 10000 && !vsched__test_handle_done(h); i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (!vsched__test_handle_done(h)) {
        fprintf(stderr, "%s\n", why);
        _exit(1);
    }
}

/* Requests of the Analyses of the first n of many_names, waited for: the
 * steps up to Analysis then have known (short) durations. */
static void warm_up(vsched *s, int n)
{
    for (int i = 0; i < n; i++) {
        vsched_handle *w = submit(s, many_names[i], VSCHED_STAGE_ANALYSIS, 0);
        CU_ASSERT_EQUAL(vsched_wait(w, NULL), 0);
        vsched_handle_release(w);
    }
}

/* Start on one CPU worker with `warm` numbered files ("w00.c" ..., their
 * Analyses run first: see warm_up), then one file per letter of
 * `letters` ("a" gives "a.c", "int a;\n"). */
static char letter_names[8][4], letter_texts[8][12];

static vsched *start_warm(int warm, const char *letters)
{
    many_files("w", warm, "int w;\n");
    int n = warm;
    for (int i = 0; letters[i] != '\0' && i < 8; i++, n++) {
        snprintf(letter_names[i], sizeof letter_names[i], "%c.c", letters[i]);
        snprintf(letter_texts[i], sizeof letter_texts[i], "int %c;\n",
                 letters[i]);
        many[n] = (mem_file){letter_names[i], letter_texts[i]};
    }
    many[n] = (mem_file){NULL, NULL};
    vsched *s = start(many, 1);
    warm_up(s, warm);
    return s;
}

/* Wait (bounded) until `n` nodes are in the CPU (on_cpu != 0) or I/O
 * ready queue. */
static int queued(vsched *s, int on_cpu, size_t n)
{
    for (int i = 0; i < 5000 && vsched__test_ready(s, on_cpu) != n; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return vsched__test_ready(s, on_cpu) == n;
}

/* A task of a batch that waits: a.c's Analysis waits (vsched_wait from
 * inside the stage) for b.c's, taken into the same batch after it, on the
 * only CPU worker. The waiting worker runs the rest of its batch, so both
 * finish; a wait that looked only at the ready queue would hang. */
static vsched_handle *wait_target;

static void wait_hook(char stage, const char *name, const vsched_ctx *ctx)
{
    gate_hook(stage, name, ctx);
    if (stage == 'A' && strcmp(name, "a.c") == 0 && wait_target != NULL)
        CU_ASSERT_EQUAL(vsched_wait(wait_target, NULL), 0);
}

static void a_batched_task_that_waits_runs_the_rest_of_its_batch(void)
{
    vsched *s = start_warm(3, "abg"); /* parses, Analyses known short */
    /* g.c's Artifact holds the worker while a.c and b.c are loaded. */
    gate_arm('R', "g.c");
    stage_hook = wait_hook;
    vsched_handle *hg = submit(s, "g.c", VSCHED_STAGE_ARTIFACT, 0);
    gate_wait_entered();
    vsched_request both[2] = {REQ("a.c", VSCHED_STAGE_ANALYSIS, 0),
                              REQ("b.c", VSCHED_STAGE_ANALYSIS, 0)};
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(s, both, 2, &b) == 0);
    wait_target = submit(s, "b.c", VSCHED_STAGE_ANALYSIS, 0);
    CU_ASSERT_FATAL(recorded('L', "a.c") && recorded('L', "b.c"));
    gate_release();
    vsched_handle *ha = submit(s, "a.c", VSCHED_STAGE_ANALYSIS, 0);
    finish_or_exit(ha, "a.c's Analysis never finished: its worker waits "
                       "on work of its own batch");
    CU_ASSERT_EQUAL(vsched_wait(ha, NULL), 0);
    CU_ASSERT_EQUAL(vsched_wait_batch(b, NULL), 0);
    CU_ASSERT_EQUAL(vsched_wait(hg, NULL), 0);
    /* b.c's Analysis ran while a.c's waited (the world records a stage
     * after its hook returns). */
    CU_ASSERT(event_index('A', "b.c") < event_index('A', "a.c"));
    vsched_handle_release(ha);
    vsched_handle_release(hg);
    vsched_handle_release(wait_target);
    wait_target = NULL;
    vsched_batch_release(b);
    stop(s);
}

/* A task of a batch that waits for what an earlier task of its batch
 * enables: b.c's parse and a.c's Analysis are taken in one batch, in that
 * order, and a.c's Analysis waits for b.c's. b.c's parse has run, but a
 * batch's completions are integrated when the batch ends: the waiting
 * worker integrates them first, or b.c's Analysis never becomes ready. */
static void a_batched_task_that_waits_integrates_what_its_batch_ran(void)
{
    vsched *s = start_warm(3, "abg"); /* parses, Analyses known short */
    /* a.c parsed. */
    vsched_handle *src = submit(s, "a.c", VSCHED_STAGE_SOURCE, 0);
    CU_ASSERT_EQUAL(vsched_wait(src, NULL), 0);
    vsched_handle_release(src);
    /* g.c's Artifact holds the worker while b.c's parse, then a.c's
     * Analysis, become ready. */
    gate_arm('R', "g.c");
    stage_hook = wait_hook;
    vsched_handle *hg = submit(s, "g.c", VSCHED_STAGE_ARTIFACT, 0);
    gate_wait_entered();
    wait_target = submit(s, "b.c", VSCHED_STAGE_ANALYSIS, 0);
    CU_ASSERT_FATAL(queued(s, 1, 1));
    vsched_handle *ha = submit(s, "a.c", VSCHED_STAGE_ANALYSIS, 0);
    CU_ASSERT_FATAL(queued(s, 1, 2));
    gate_release();
    finish_or_exit(ha, "a.c's Analysis never finished: its worker waits "
                       "on a completion of its own batch");
    CU_ASSERT_EQUAL(vsched_wait(ha, NULL), 0);
    CU_ASSERT_EQUAL(vsched_wait(hg, NULL), 0);
    /* One batch, in queue order: b.c's parse, then a.c's Analysis, which
     * waited while b.c's Analysis ran. */
    CU_ASSERT(event_index('S', "b.c") < event_index('A', "b.c"));
    CU_ASSERT(event_index('A', "b.c") < event_index('A', "a.c"));
    vsched_handle_release(ha);
    vsched_handle_release(hg);
    vsched_handle_release(wait_target);
    wait_target = NULL;
    stop(s);
}

/* The same on the I/O pool: a load that waits. Three loads are taken in
 * one batch -- b.c's, a.c's, c.c's -- and a.c's waits
 * for the Analyses of b.c (loaded before it: its completion is held by
 * the batch) and of c.c (after it: not started). */
static vsched_batch *load_wait_target;

static void load_wait_hook(char stage, const char *name, const vsched_ctx *c)
{
    gate_hook(stage, name, c);
    if (stage == 'L' && strcmp(name, "a.c") == 0 && load_wait_target != NULL)
        CU_ASSERT_EQUAL(vsched_wait_batch(load_wait_target, NULL), 0);
}

/* 1: wanted; 2: holding the I/O worker; 0: released. */
static atomic_int io_held;

static void hold_io(void *arg)
{
    (void)arg;
    atomic_store(&io_held, 2);
    while (atomic_load(&io_held) != 0) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

static void a_batched_load_that_waits_settles_its_batch(void)
{
    vsched *s = start_warm(3, "abc"); /* loads known to be short */
    /* A host task holds the only I/O worker while three loads queue (a
     * held load would make loads long on average: they would not be
     * batched). */
    atomic_store(&io_held, 1);
    CU_ASSERT_FATAL(vsched_pool_try_submit(io, hold_io, NULL) == 0);
    while (atomic_load(&io_held) == 1)
        sched_yield();
    stage_hook = load_wait_hook;
    vsched_handle *hb = submit(s, "b.c", VSCHED_STAGE_ANALYSIS, 0);
    CU_ASSERT_FATAL(queued(s, 0, 1));
    vsched_handle *ha = submit(s, "a.c", VSCHED_STAGE_ANALYSIS, 0);
    CU_ASSERT_FATAL(queued(s, 0, 2));
    vsched_handle *hc = submit(s, "c.c", VSCHED_STAGE_ANALYSIS, 0);
    CU_ASSERT_FATAL(queued(s, 0, 3));
    vsched_request both[2] = {REQ("b.c", VSCHED_STAGE_ANALYSIS, 0),
                              REQ("c.c", VSCHED_STAGE_ANALYSIS, 0)};
    CU_ASSERT_FATAL(
        vsched_submit_batch_atomic(s, both, 2, &load_wait_target) == 0);
    atomic_store(&io_held, 0);
    finish_or_exit(ha, "a.c's Analysis never finished: its load waits on "
                       "loads of its own batch");
    CU_ASSERT_EQUAL(vsched_wait(ha, NULL), 0);
    CU_ASSERT_EQUAL(vsched_wait(hb, NULL), 0);
    CU_ASSERT_EQUAL(vsched_wait(hc, NULL), 0);
    /* The world records a load after its hook returns. */
    CU_ASSERT(event_index('A', "b.c") < event_index('L', "a.c"));
    CU_ASSERT(event_index('A', "c.c") < event_index('L', "a.c"));
    vsched_handle_release(ha);
    vsched_handle_release(hb);
    vsched_handle_release(hc);
    vsched_batch_release(load_wait_target);
    load_wait_target = NULL;
    stop(s);
}

/* The only I/O worker's load waits for another file's Analysis, whose
 * load is queued behind it, and the I/O transport has room for one task:
 * the load's runner. A stand-in takes the worker's place, and the
 * transport takes one more task while it waits. (Loads of unknown
 * duration are taken one at a time.) */
static void a_load_that_waits_leaves_its_pool_working(void)
{
    io_capacity = 1;
    vsched *s = start_warm(0, "ab");
    atomic_store(&io_held, 1);
    CU_ASSERT_FATAL(vsched_pool_try_submit(io, hold_io, NULL) == 0);
    while (atomic_load(&io_held) == 1)
        sched_yield();
    stage_hook = load_wait_hook;
    vsched_handle *ha = submit(s, "a.c", VSCHED_STAGE_ANALYSIS, 0);
    CU_ASSERT_FATAL(queued(s, 0, 1));
    vsched_request b = REQ("b.c", VSCHED_STAGE_ANALYSIS, 0);
    CU_ASSERT_FATAL(vsched_submit_batch(s, &b, 1, &load_wait_target) == 0);
    CU_ASSERT_FATAL(queued(s, 0, 2));
    atomic_store(&io_held, 0);
    finish_or_exit(ha, "a.c's Analysis never finished: its load waits on "
                       "a load queued behind it");
    CU_ASSERT_EQUAL(vsched_wait(ha, NULL), 0);
    CU_ASSERT_EQUAL(vsched_wait_batch(load_wait_target, NULL), 0);
    CU_ASSERT(event_index('L', "b.c") < event_index('L', "a.c"));
    CU_ASSERT(event_index('A', "b.c") < event_index('L', "a.c"));
    /* b.c's load ran on the stand-in, a.c's on the pool's own thread. */
    CU_ASSERT_EQUAL(events[event_index('L', "b.c")].worker, 1);
    CU_ASSERT_EQUAL(events[event_index('L', "a.c")].worker, 0);
    vsched_handle_release(ha);
    vsched_batch_release(load_wait_target);
    load_wait_target = NULL;
    stop(s);
}

/* A host task on the only CPU worker waits for an Artifact, whose stages
 * need that pool: a stand-in runs them. Once the host task is back, the
 * stand-in leaves: every later task runs on the pool's own thread. */
static vsched *host_sched;
static atomic_int host_status = -999;

static void host_waits(void *arg)
{
    (void)arg;
    vsched_request r = REQ("a.c", VSCHED_STAGE_ARTIFACT, 0);
    vsched_handle *h = NULL;
    int rc = vsched_submit_request(host_sched, &r, &h);
    if (rc == 0) {
        rc = vsched_wait(h, NULL);
        vsched_handle_release(h);
    }
    atomic_store(&host_status, rc);
}

static atomic_int lane_seen;

static void note_lane(void *arg)
{
    (void)arg;
    atomic_store(&lane_seen, vsched_pool_current_worker());
}

static void a_host_task_that_waits_gets_a_stand_in_that_leaves_after(void)
{
    vsched *s = start_warm(0, "a");
    host_sched = s;
    atomic_store(&host_status, -999);
    CU_ASSERT_FATAL(vsched_pool_try_submit(cpu, host_waits, NULL) == 0);
    for (int i = 0; i < 10000 && atomic_load(&host_status) == -999; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    if (atomic_load(&host_status) == -999) {
        fprintf(stderr, "the host task's wait never ended: it held the "
                        "pool's only worker\n");
        _exit(1);
    }
    CU_ASSERT_EQUAL(atomic_load(&host_status), 0);
    CU_ASSERT_EQUAL(events[event_index('S', "a.c")].worker, 1);
    CU_ASSERT_EQUAL(events[event_index('R', "a.c")].worker, 1);
    for (int i = 0; i < 20; i++) {
        atomic_store(&lane_seen, -2);
        while (vsched_pool_try_submit(cpu, note_lane, NULL) != 0)
            sched_yield();
        while (atomic_load(&lane_seen) == -2)
            sched_yield();
        CU_ASSERT_EQUAL(atomic_load(&lane_seen), 0);
    }
    stop(s);
}

/* Every task of a pool waits: host tasks on the only CPU worker wait for
 * an Artifact whose load is held at a gate, each stand-in taking the
 * next, which waits in turn. With stand-ins capped at 8, the pool stops
 * at lanes 0 .. 8, and the rest wait their turn; raised, the waiting
 * workers get their stand-ins (they retry), and all finish once the gate
 * opens -- their stages run on stand-ins -- then the stand-ins leave. */
static atomic_int waits_entered, waits_done, lane_max;

static void host_waits_too(void *arg)
{
    (void)arg;
    int lane = vsched_pool_current_worker();
    for (int m = atomic_load(&lane_max);
         lane > m && !atomic_compare_exchange_weak(&lane_max, &m, lane);)
        ;
    atomic_fetch_add(&waits_entered, 1);
    vsched_request r = REQ("a.c", VSCHED_STAGE_ARTIFACT, 0);
    vsched_handle *h = NULL;
    if (vsched_submit_request(host_sched, &r, &h) == 0) {
        if (vsched_wait(h, NULL) == 0)
            atomic_fetch_add(&waits_done, 1);
        vsched_handle_release(h);
    }
}

/* Wait (bounded) until *v reaches n. */
static int reaches(atomic_int *v, int n)
{
    for (int i = 0; i < 10000 && atomic_load(v) < n; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return atomic_load(v) >= n;
}

static void stand_ins_are_capped_and_retried_when_every_task_waits(void)
{
    vsched *s = start_warm(0, "a");
    host_sched = s;
    atomic_store(&waits_entered, 0);
    atomic_store(&waits_done, 0);
    atomic_store(&lane_max, -1);
    vsched__test_pool_standins(cpu, 8);
    gate_arm('L', "a.c"); /* on the I/O pool: the CPU pool has only them */
    /* The transport takes 4 tasks, and one more per blocked worker. */
    int queued = 0;
    for (int i = 0; i < 10000 && queued < 12; i++) {
        if (vsched_pool_try_submit(cpu, host_waits_too, NULL) == 0) {
            queued++;
            continue;
        }
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    CU_ASSERT_FATAL(queued == 12);
    CU_ASSERT_FATAL(reaches(&waits_entered, 9));
    struct timespec ms50 = {0, 50000000};
    nanosleep(&ms50, NULL);
    CU_ASSERT_EQUAL(atomic_load(&waits_entered), 9);
    CU_ASSERT_EQUAL(atomic_load(&lane_max), 8);
    vsched__test_pool_standins(cpu, 64);
    CU_ASSERT(reaches(&waits_entered, queued));
    gate_release();
    CU_ASSERT(reaches(&waits_done, queued));
    CU_ASSERT(atomic_load(&lane_max) <= queued);
    CU_ASSERT(events[event_index('S', "a.c")].worker >= 1);
    for (int i = 0; i < 20; i++) {
        atomic_store(&lane_seen, -2);
        while (vsched_pool_try_submit(cpu, note_lane, NULL) != 0)
            sched_yield();
        while (atomic_load(&lane_seen) == -2)
            sched_yield();
        CU_ASSERT_EQUAL(atomic_load(&lane_seen), 0);
    }
    stop(s);
}

/* Waits that nest must not invert. b.c's parse waits for a.c's Analysis;
 * c.c's parse, queued before a.c's, waits for b.c's Analysis. A worker
 * that ran c.c's parse on top of the waiting b.c parse, on its own stack,
 * would hang: c.c's parse needs b.c's Analysis, which needs b.c's parse to
 * return, and it cannot while c.c's parse runs above it. */
static vsched_handle *parse_waits[2]; /* b.c's wait, c.c's wait */

static void nested_wait_hook(char stage, const char *name,
                             const vsched_ctx *ctx)
{
    gate_hook(stage, name, ctx);
    if (stage != 'S')
        return;
    vsched_handle *h = strcmp(name, "b.c") == 0   ? parse_waits[0]
                       : strcmp(name, "c.c") == 0 ? parse_waits[1]
                                                  : NULL;
    if (h != NULL)
        CU_ASSERT_EQUAL(vsched_wait(h, NULL), 0);
}

static void waits_that_nest_never_wait_under_their_own_stack(void)
{
    vsched *s = start_warm(0, "abcg");
    gate_arm('R', "g.c");
    stage_hook = nested_wait_hook;
    vsched_handle *hg = submit(s, "g.c", VSCHED_STAGE_ARTIFACT, 0);
    gate_wait_entered();
    vsched_handle *hb = submit(s, "b.c", VSCHED_STAGE_ANALYSIS, 0);
    vsched_handle *hc = submit(s, "c.c", VSCHED_STAGE_ANALYSIS, 0);
    CU_ASSERT_FATAL(queued(s, 1, 2));
    parse_waits[0] = submit(s, "a.c", VSCHED_STAGE_ANALYSIS, 0);
    CU_ASSERT_FATAL(queued(s, 1, 3));
    parse_waits[1] = submit(s, "b.c", VSCHED_STAGE_ANALYSIS, 0);
    gate_release();
    finish_or_exit(hc, "c.c's Analysis never finished: a wait ran "
                       "above the work it waits for");
    CU_ASSERT_EQUAL(vsched_wait(hb, NULL), 0);
    CU_ASSERT_EQUAL(vsched_wait(hc, NULL), 0);
    CU_ASSERT_EQUAL(vsched_wait(hg, NULL), 0);
    /* The world records a parse after its hook returns. */
    CU_ASSERT(event_index('A', "a.c") < event_index('S', "b.c"));
    CU_ASSERT(event_index('A', "b.c") < event_index('S', "c.c"));
    for (int i = 0; i < 2; i++) {
        vsched_handle_release(parse_waits[i]);
        parse_waits[i] = NULL;
    }
    vsched_handle_release(hb);
    vsched_handle_release(hc);
    vsched_handle_release(hg);
    stop(s);
}

/* Equal priority, known durations: the longest Artifact starts first, and
 * its weight reaches its upstream (Source, Analysis), so its whole chain
 * overtakes shorter work queued before it. */
static void longest_expected_work_starts_first_among_equal_priority(void)
{
    many_files("c", 12, "int z;\n");
    many[12] = (mem_file){NULL, NULL};
    vsched *s = start(many, 1);
    /* Hold the only CPU worker so everything is queued before it runs. */
    gate_arm('S', "c00.c");
    vsched_handle *first = submit(s, "c00.c", VSCHED_STAGE_SOURCE, 0);
    gate_wait_entered();
    vsched_request reqs[11];
    for (int i = 0; i < 11; i++) {
        reqs[i] = REQ(many_names[i + 1], VSCHED_STAGE_ARTIFACT, 0);
        reqs[i].cost_ns = (uint64_t)(i == 6 ? 900 : 10 + i) * 1000000u;
    }
    vsched_batch *b = NULL;
    CU_ASSERT_FATAL(vsched_submit_batch_atomic(s, reqs, 11, &b) == 0);
    gate_release();
    CU_ASSERT_EQUAL(vsched_wait_batch(b, NULL), 0);
    /* c07.c (900 ms expected) ran its Artifact first; then by weight,
     * c11.c (20 ms) before c02.c (11 ms). */
    long r7 = event_index('R', "c07.c");
    for (int i = 1; i <= 11; i++)
        if (i != 7)
            CU_ASSERT(r7 < event_index('R', many_names[i]));
    CU_ASSERT(event_index('S', "c07.c") < event_index('S', "c01.c"));
    CU_ASSERT(event_index('R', "c11.c") < event_index('R', "c02.c"));
    vsched_handle_release(first);
    vsched_batch_release(b);
    stop(s);
}

static const vr_cu_test tests[] = {
    {"successor_after_remove_has_new_incarnation_and_generation_zero",
     successor_after_remove_has_new_incarnation_and_generation_zero},
    {"generation_exhaustion_refuses_and_never_wraps",
     generation_exhaustion_refuses_and_never_wraps},
    {"invalidate_while_running_supersedes_waiter_and_refuses_late_work",
     invalidate_while_running_supersedes_waiter_and_refuses_late_work},
    {"follow_latest_waiter_is_readmitted_at_the_new_generation",
     follow_latest_waiter_is_readmitted_at_the_new_generation},
    {"close_file_drops_upserted_content", close_file_drops_upserted_content},
    {"dependent_is_regated_on_the_new_generation_of_its_blocker",
     dependent_is_regated_on_the_new_generation_of_its_blocker},
    {"remove_answers_waiters_with_shutdown",
     remove_answers_waiters_with_shutdown},
    {"analysis_gates_on_the_successor_of_a_removed_blocker",
     analysis_gates_on_the_successor_of_a_removed_blocker},
    {"a_blocker_edit_reaches_its_dependents_after_reset_and_remove",
     a_blocker_edit_reaches_its_dependents_after_reset_and_remove},
    {"reset_returns_all_occupancy_to_zero",
     reset_returns_all_occupancy_to_zero},
    {"source_request_joins_live_source_and_gets_integrated_deps",
     source_request_joins_live_source_and_gets_integrated_deps},
    {"atomic_batch_is_never_seen_half_admitted",
     atomic_batch_is_never_seen_half_admitted},
    {"source_root_answers_as_of_its_epoch_and_reclaims_by_lease",
     source_root_answers_as_of_its_epoch_and_reclaims_by_lease},
    {"root_captured_before_destroy_still_sees_its_epoch",
     root_captured_before_destroy_still_sees_its_epoch},
    {"every_profile_keeps_its_artifact_and_committed_data",
     every_profile_keeps_its_artifact_and_committed_data},
    {"witness_commits_only_into_the_same_live_object_and_generation",
     witness_commits_only_into_the_same_live_object_and_generation},
    {"rehome_makes_a_successor_object_and_refuses_old_witnesses",
     rehome_makes_a_successor_object_and_refuses_old_witnesses},
    {"rehome_keeps_upserted_content_in_the_successor",
     rehome_keeps_upserted_content_in_the_successor},
    {"commits_of_two_profiles_and_content_share_an_object",
     commits_of_two_profiles_and_content_share_an_object},
    {"join_callback_runs_unlocked_and_may_reenter",
     join_callback_runs_unlocked_and_may_reenter},
    {"inbox_flood_never_exceeds_capacity_or_drops",
     inbox_flood_never_exceeds_capacity_or_drops},
    {"a_cpu_worker_that_waits_leaves_its_pool_working",
     a_cpu_worker_that_waits_leaves_its_pool_working},
    {"high_priority_demand_runs_before_lower_ready_work",
     high_priority_demand_runs_before_lower_ready_work},
    {"batched_short_tasks_keep_priority_order",
     batched_short_tasks_keep_priority_order},
    {"a_batched_task_that_waits_runs_the_rest_of_its_batch",
     a_batched_task_that_waits_runs_the_rest_of_its_batch},
    {"a_batched_task_that_waits_integrates_what_its_batch_ran",
     a_batched_task_that_waits_integrates_what_its_batch_ran},
    {"a_batched_load_that_waits_settles_its_batch",
     a_batched_load_that_waits_settles_its_batch},
    {"a_load_that_waits_leaves_its_pool_working",
     a_load_that_waits_leaves_its_pool_working},
    {"a_host_task_that_waits_gets_a_stand_in_that_leaves_after",
     a_host_task_that_waits_gets_a_stand_in_that_leaves_after},
    {"stand_ins_are_capped_and_retried_when_every_task_waits",
     stand_ins_are_capped_and_retried_when_every_task_waits},
    {"waits_that_nest_never_wait_under_their_own_stack",
     waits_that_nest_never_wait_under_their_own_stack},
    {"longest_expected_work_starts_first_among_equal_priority",
     longest_expected_work_starts_first_among_equal_priority},
    {NULL, NULL},
};

int main(void)
{
    return vr_cu_main("generations", tests);
}
