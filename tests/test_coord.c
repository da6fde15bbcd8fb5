/*
 * test_coord -- the host's coordinator pool and batch primitive (coord.h):
 * fast paths, input order, the failure boundary, accounting, trace spans,
 * re-entrancy collapse, which threads run what, and the starvation shape
 * the separate coordinator pool exists to prevent (which libvsched's
 * stand-ins for blocked workers now also survive).
 *
 * Scheduler tests use an in-memory loader (content lines "blocker NAME"
 * declare blockers) and a recording executor that notes, for every stage it
 * runs, the thread, vsched_pool_current_kind() and vr_coord_current().
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vsched/vsched.h>

#include "build/coord.h"
#include "cu.h"
#include "memfs.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Who ran something: the thread and its two role markers. */
typedef struct who {
    pthread_t thread;
    int pool_kind;         /* vsched_pool_current_kind() */
    const vr_coord *coord; /* vr_coord_current() */
    unsigned depth;        /* vr_coord_depth() */
} who;

static who whoami(void)
{
    return (who){pthread_self(), vsched_pool_current_kind(),
                 vr_coord_current(), vr_coord_depth()};
}

/* ---- the in-memory world and the recording executor --------------------- */

typedef memfs_file mem_file;

typedef struct stage_run {
    char stage; /* 'L' load, 'S' source, 'A' analysis, 'R' artifact */
    who by;
} stage_run;

/* rec_lock: guards runs, n_runs. Leaf. */
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static stage_run runs[4096];
static size_t n_runs;

static void record(char stage)
{
    pthread_mutex_lock(&rec_lock);
    if (n_runs < sizeof runs / sizeof runs[0])
        runs[n_runs++] = (stage_run){stage, whoami()};
    pthread_mutex_unlock(&rec_lock);
}

static size_t count_runs(char stage)
{
    size_t c = 0;
    pthread_mutex_lock(&rec_lock);
    for (size_t i = 0; i < n_runs; i++)
        c += runs[i].stage == stage;
    pthread_mutex_unlock(&rec_lock);
    return c;
}

static void record_load(const char *name, const vsched_ctx *ctx)
{
    (void)name, (void)ctx;
    record('L');
}

static memfs world = {NULL, 0, record_load, NULL};

static int rec_source(void *inst, const vsched_ctx *ctx, const char *name,
                      const char *kind, const char *bytes, size_t len,
                      vsched_source_out *out)
{
    (void)inst, (void)ctx, (void)name, (void)kind;
    record('S');
    memfs_snap *sn = memfs_snap_parse(bytes, len);
    out->snapshot = sn;
    out->content_hash = sn->hash;
    return VSCHED_OK;
}

static int rec_deps(void *inst, const vsched_ctx *ctx, const char *name,
                    const void *snapshot, vsched_deps_out *out)
{
    (void)inst, (void)name;
    return memfs_snap_deps(ctx, snapshot, out);
}

/* Set by the role test: the coordinator a stage tries to start a batch on,
 * and what vr_coord_batch answered it. */
static vr_coord *stage_probe_coord;
static atomic_int stage_probe_rc = 1;
static atomic_int stage_probe_items;

static int count_item(void *ctx, size_t i, void *slot, char **msg)
{
    (void)ctx, (void)i, (void)slot, (void)msg;
    atomic_fetch_add(&stage_probe_items, 1);
    return VSCHED_OK;
}

static int rec_analysis(void *inst, const vsched_ctx *ctx,
                        const vsched_analysis_in *in, uint64_t *hash)
{
    (void)inst, (void)ctx;
    record('A');
    if (stage_probe_coord != NULL && atomic_load(&stage_probe_rc) == 1) {
        vr_coord_policy p = {.span_name = "from-stage", .item = count_item};
        atomic_store(&stage_probe_rc,
                     vr_coord_batch(stage_probe_coord, &p, NULL, 2, NULL));
    }
    *hash = in->content_hash * 31u + in->n_blockers;
    return VSCHED_OK;
}

static int rec_artifact(void *inst, const vsched_ctx *ctx,
                        const vsched_artifact_in *in, vsched_artifact_out *out)
{
    (void)inst, (void)ctx;
    record('R');
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

/* A scheduler over `files` with its own stage pools. */
typedef struct fixture {
    vsched_pool *cpu, *io;
    vsched *s;
} fixture;

static int fixture_start_io(fixture *fx, const mem_file *files, unsigned cpu,
                            unsigned io)
{
    world.files = files;
    n_runs = 0;
    vsched_options o = {.size = sizeof o};
    o.loader = MEMFS_BINDING(&world);
    o.executor = (vsched_executor_binding){&rec_executor, NULL, 1};
    return memfs_try_start(&fx->s, &fx->cpu, &fx->io, cpu, io, &o);
}

static int fixture_start(fixture *fx, const mem_file *files, unsigned cpu)
{
    return fixture_start_io(fx, files, cpu, 1);
}

static void fixture_stop(fixture *fx)
{
    memfs_stop(fx->s, fx->cpu, fx->io);
}

static uint64_t batch_submissions(vsched *s)
{
    vsched_stats st;
    vsched_get_stats(s, &st);
    return st.batch_submissions;
}

/* ---- running a batch under a bound -------------------------------------- */

typedef struct bounded {
    vr_coord *c;
    const vr_coord_policy *p;
    void *ctx;
    size_t n;
    void *slots;
    int rc;
    pthread_mutex_t lock; /* guards finished; leaf */
    pthread_cond_t cond;
    int finished;
} bounded;

static void *bounded_main(void *arg)
{
    bounded *b = arg;
    int rc = vr_coord_batch(b->c, b->p, b->ctx, b->n, b->slots);
    pthread_mutex_lock(&b->lock);
    b->rc = rc;
    b->finished = 1;
    pthread_cond_signal(&b->cond);
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* Run the batch on a helper thread; 1 when it finished within `ms` (then
 * joined), 0 when it did not (the helper is left running, detached). */
static int run_bounded(bounded *b, long ms)
{
    pthread_mutex_init(&b->lock, NULL);
    pthread_cond_init(&b->cond, NULL);
    b->finished = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, bounded_main, b) != 0)
        return 0;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += ms / 1000;
    dl.tv_nsec += (ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&b->lock);
    while (!b->finished &&
           pthread_cond_timedwait(&b->cond, &b->lock, &dl) == 0)
        ;
    int done = b->finished;
    pthread_mutex_unlock(&b->lock);
    if (done)
        pthread_join(t, NULL);
    else
        pthread_detach(t);
    return done;
}

/* ---- nesting: re-entrancy collapse -------------------------------------- */

#define FAN 3

typedef struct nest_ctx {
    vr_coord *c;
    unsigned level;   /* of the items of this batch: 1, 2 or 3 */
    pthread_t parent; /* thread of the enclosing item (level > 1) */
} nest_ctx;

typedef struct nest_rec {
    unsigned level;
    who by;
    pthread_t parent;
} nest_rec;

static nest_rec nest_log[FAN + FAN * FAN + FAN * FAN * FAN];
static atomic_size_t nest_n;

static int nest_item(void *ctx, size_t i, void *slot, char **msg);

static const vr_coord_policy nest_policy = {
    .span_name = "nest", .slot_size = sizeof(int), .item = nest_item};

static int nest_item(void *ctx, size_t i, void *slot, char **msg)
{
    const nest_ctx *nc = ctx;
    size_t k = atomic_fetch_add(&nest_n, 1);
    if (k < sizeof nest_log / sizeof nest_log[0])
        nest_log[k] = (nest_rec){nc->level, whoami(), nc->parent};
    *(int *)slot = (int)(nc->level * 100 + i);
    if (nc->level == 3)
        return VSCHED_OK;
    nest_ctx inner = {nc->c, nc->level + 1, pthread_self()};
    int slots[FAN] = {0};
    int rc = vr_coord_batch(nc->c, &nest_policy, &inner, FAN, slots);
    for (int j = 0; j < FAN && rc == VSCHED_OK; j++)
        if (slots[j] != (int)((nc->level + 1) * 100) + j) {
            *msg = strdup("nested result out of place");
            rc = VSCHED_EERR;
        }
    return rc;
}

static void nested_batches_three_deep_run_inline_on_the_one_worker(void)
{
    vr_coord *c = NULL;
    CU_ASSERT_FATAL(vr_coord_create(&c, 1) == 0);
    atomic_store(&nest_n, 0);
    nest_ctx top = {c, 1, pthread_self()};
    int slots[FAN] = {0};
    bounded b = {
        .c = c, .p = &nest_policy, .ctx = &top, .n = FAN, .slots = slots};
    /* Without the collapse the lone worker would wait for itself. */
    CU_ASSERT_FATAL(run_bounded(&b, 3000));
    CU_ASSERT_EQUAL(b.rc, 0);
    CU_ASSERT_EQUAL_FATAL(atomic_load(&nest_n), 3 + 9 + 27);
    pthread_t worker = nest_log[0].by.thread;
    for (size_t k = 0; k < 3 + 9 + 27; k++) {
        const nest_rec *r = &nest_log[k];
        CU_ASSERT_PTR_EQUAL(r->by.coord, c);    /* a coordinator worker */
        CU_ASSERT_EQUAL(r->by.pool_kind, -1);   /* not a stage worker */
        CU_ASSERT_EQUAL(r->by.depth, r->level); /* marker per level */
        CU_ASSERT(pthread_equal(r->by.thread, worker));
        CU_ASSERT(!pthread_equal(r->by.thread, pthread_self()));
        if (r->level > 1) /* inline: on the thread of its enclosing item */
            CU_ASSERT(pthread_equal(r->by.thread, r->parent));
    }
    for (int j = 0; j < FAN; j++)
        CU_ASSERT_EQUAL(slots[j], 100 + j);
    vr_coord_span sp[16];
    CU_ASSERT_EQUAL_FATAL(vr_coord_trace(c, sp, 16), 1 + 3 + 9);
    size_t inline_spans = 0;
    for (size_t k = 0; k < 13; k++)
        if (sp[k].depth > 0) {
            inline_spans++;
            CU_ASSERT_EQUAL(sp[k].mode, VR_COORD_INLINE);
        }
    CU_ASSERT_EQUAL(inline_spans, 12);
    /* The outer batch ends last. */
    CU_ASSERT_EQUAL(sp[12].mode, VR_COORD_FANOUT);
    CU_ASSERT_EQUAL(sp[12].depth, 0);
    vr_coord_destroy(c);
}

/* ---- fast paths --------------------------------------------------------- */

static atomic_int probe_calls;

static int probe_setup(void *ctx, size_t n, char **msg)
{
    (void)n, (void)msg;
    *(who *)ctx = whoami();
    return VSCHED_OK;
}

static int probe_item(void *ctx, size_t i, void *slot, char **msg)
{
    (void)ctx, (void)i, (void)msg;
    atomic_fetch_add(&probe_calls, 1);
    *(who *)slot = whoami();
    return VSCHED_OK;
}

static const vr_coord_policy probe_policy = {.span_name = "probe",
                                             .slot_size = sizeof(who),
                                             .setup = probe_setup,
                                             .item = probe_item};

static void empty_and_single_item_batches_use_no_worker(void)
{
    vr_coord *c = NULL;
    CU_ASSERT_FATAL(vr_coord_create(&c, 1) == 0);
    pthread_t me = pthread_self();
    who setup_by = {0};
    who slots[2];
    atomic_store(&probe_calls, 0);

    CU_ASSERT_EQUAL(vr_coord_batch(c, &probe_policy, &setup_by, 0, NULL), 0);
    CU_ASSERT_EQUAL(atomic_load(&probe_calls), 0);
    CU_ASSERT_PTR_NULL(setup_by.coord); /* setup did not run either */
    CU_ASSERT_EQUAL(setup_by.depth, 0);

    CU_ASSERT_EQUAL(vr_coord_batch(c, &probe_policy, &setup_by, 1, slots), 0);
    CU_ASSERT_EQUAL(atomic_load(&probe_calls), 1);
    CU_ASSERT(pthread_equal(slots[0].thread, me));
    CU_ASSERT_PTR_NULL(slots[0].coord);
    CU_ASSERT_EQUAL(slots[0].depth, 1);
    CU_ASSERT(pthread_equal(setup_by.thread, me));

    /* Contrast: two items fan out, setup and items on the worker. */
    CU_ASSERT_EQUAL(vr_coord_batch(c, &probe_policy, &setup_by, 2, slots), 0);
    for (int i = 0; i < 2; i++) {
        CU_ASSERT(!pthread_equal(slots[i].thread, me));
        CU_ASSERT_PTR_EQUAL(slots[i].coord, c);
    }
    CU_ASSERT_PTR_EQUAL(setup_by.coord, c);

    vr_coord_span sp[3];
    CU_ASSERT_EQUAL_FATAL(vr_coord_trace(c, sp, 3), 3);
    CU_ASSERT_EQUAL(sp[0].mode, VR_COORD_EMPTY);
    CU_ASSERT_EQUAL(sp[0].items, 0);
    CU_ASSERT_EQUAL(sp[1].mode, VR_COORD_SINGLE);
    CU_ASSERT_EQUAL(sp[2].mode, VR_COORD_FANOUT);
    vr_coord_destroy(c);
}

/* ---- input order -------------------------------------------------------- */

#define ORDERED 16
static atomic_int finish_seq;
static int finished_at[ORDERED];

static int slow_first_item(void *ctx, size_t i, void *slot, char **msg)
{
    (void)ctx, (void)msg;
    sleep_ms(i == 0 ? 60 : (long)(i % 3));
    *(size_t *)slot = i * 7 + 1;
    finished_at[i] = atomic_fetch_add(&finish_seq, 1);
    return VSCHED_OK;
}

static void results_keep_input_order_when_items_finish_out_of_order(void)
{
    vr_coord *c = NULL;
    CU_ASSERT_FATAL(vr_coord_create(&c, 4) == 0);
    atomic_store(&finish_seq, 0);
    vr_coord_policy p = {.span_name = "order",
                         .slot_size = sizeof(size_t),
                         .item = slow_first_item};
    size_t slots[ORDERED] = {0};
    CU_ASSERT_EQUAL(vr_coord_batch(c, &p, NULL, ORDERED, slots), 0);
    for (size_t i = 0; i < ORDERED; i++)
        CU_ASSERT_EQUAL(slots[i], i * 7 + 1);
    /* The first item finished last: completion order was not input order. */
    CU_ASSERT_EQUAL(finished_at[0], ORDERED - 1);
    vr_coord_destroy(c);
}

/* ---- failure boundary --------------------------------------------------- */

typedef struct row {
    int status;
    int value;
    char msg[64];
} row;

static atomic_int row_calls;

static int sometimes_failing_item(void *ctx, size_t i, void *slot, char **msg)
{
    (void)ctx;
    atomic_fetch_add(&row_calls, 1);
    if (i == 3) {
        *msg = strdup("boom 3");
        return VSCHED_ETOOL;
    }
    if (i == 5)
        return 7; /* positive: counts as VSCHED_EERR */
    ((row *)slot)->value = (int)i;
    return VSCHED_OK;
}

static void row_fail(void *ctx, size_t i, void *slot, int status,
                     const char *msg)
{
    (void)ctx, (void)i;
    row *r = slot;
    r->status = status;
    snprintf(r->msg, sizeof r->msg, "%s", msg);
}

static int failing_setup(void *ctx, size_t n, char **msg)
{
    (void)ctx, (void)n;
    *msg = strdup("disk gone");
    return VSCHED_EIO;
}

static void a_failing_item_is_its_own_error_and_the_rest_complete(void)
{
    vr_coord *c = NULL;
    CU_ASSERT_FATAL(vr_coord_create(&c, 2) == 0);
    vr_coord_policy p = {.span_name = "rows",
                         .slot_size = sizeof(row),
                         .item = sometimes_failing_item,
                         .fail = row_fail};
    row rows[8];
    memset(rows, 0, sizeof rows);
    atomic_store(&row_calls, 0);
    CU_ASSERT_EQUAL(vr_coord_batch(c, &p, NULL, 8, rows), VSCHED_ETOOL);
    CU_ASSERT_EQUAL(atomic_load(&row_calls), 8);
    for (int i = 0; i < 8; i++) {
        if (i == 3 || i == 5)
            continue;
        CU_ASSERT_EQUAL(rows[i].status, 0);
        CU_ASSERT_EQUAL(rows[i].value, i);
    }
    CU_ASSERT_EQUAL(rows[3].status, VSCHED_ETOOL);
    CU_ASSERT_STRING_EQUAL(rows[3].msg, "boom 3");
    CU_ASSERT_EQUAL(rows[5].status, VSCHED_EERR);
    CU_ASSERT_STRING_EQUAL(rows[5].msg, vsched_strerror(VSCHED_EERR));

    /* A failed shared wait point fails every item, none runs. */
    p.setup = failing_setup;
    memset(rows, 0, sizeof rows);
    atomic_store(&row_calls, 0);
    CU_ASSERT_EQUAL(vr_coord_batch(c, &p, NULL, 8, rows), VSCHED_EIO);
    CU_ASSERT_EQUAL(atomic_load(&row_calls), 0);
    for (int i = 0; i < 8; i++) {
        CU_ASSERT_EQUAL(rows[i].status, VSCHED_EIO);
        CU_ASSERT_STRING_EQUAL(rows[i].msg, "disk gone");
    }
    vr_coord_span sp[2];
    CU_ASSERT_EQUAL_FATAL(vr_coord_trace(c, sp, 2), 2);
    CU_ASSERT_EQUAL(sp[0].failed, 2);
    CU_ASSERT_EQUAL(sp[1].failed, 8);
    vr_coord_destroy(c);
}

/* ---- accounting and trace spans ----------------------------------------- */

static const mem_file tiny[] = {{"a.c", "int a;\n"}, {NULL, NULL}};

typedef struct pair_ctx {
    vr_coord *c;
    const vr_coord_policy *inner;
} pair_ctx;

static int nested_pair_item(void *ctx, size_t i, void *slot, char **msg)
{
    (void)i, (void)slot, (void)msg;
    const pair_ctx *pc = ctx;
    return vr_coord_batch(pc->c, pc->inner, NULL, 2, NULL);
}

static void one_accounting_bump_per_non_empty_batch(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fixture_start(&fx, tiny, 1) == 0);
    vr_coord *c = NULL;
    CU_ASSERT_FATAL(vr_coord_create(&c, 2) == 0);
    vr_coord_policy p = {
        .span_name = "count", .sched = fx.s, .item = count_item};
    CU_ASSERT_EQUAL(vr_coord_batch(c, &p, NULL, 0, NULL), 0);
    CU_ASSERT_EQUAL(batch_submissions(fx.s), 0);
    CU_ASSERT_EQUAL(vr_coord_batch(c, &p, NULL, 1, NULL), 0);
    CU_ASSERT_EQUAL(batch_submissions(fx.s), 1);
    CU_ASSERT_EQUAL(vr_coord_batch(c, &p, NULL, 5, NULL), 0);
    CU_ASSERT_EQUAL(batch_submissions(fx.s), 2);
    CU_ASSERT_EQUAL(vr_coord_batch(c, &p, NULL, 0, NULL), 0);
    CU_ASSERT_EQUAL(batch_submissions(fx.s), 2);
    /* An outer batch of 2 whose items each run an inline batch of 2. */
    vr_coord_policy outer = {
        .span_name = "outer", .sched = fx.s, .item = nested_pair_item};
    pair_ctx pc = {c, &p};
    CU_ASSERT_EQUAL(vr_coord_batch(c, &outer, &pc, 2, NULL), 0);
    CU_ASSERT_EQUAL(batch_submissions(fx.s), 2 + 1 + 2);
    /* No scheduler in the policy: nothing to count. */
    p.sched = NULL;
    CU_ASSERT_EQUAL(vr_coord_batch(c, &p, NULL, 3, NULL), 0);
    CU_ASSERT_EQUAL(batch_submissions(fx.s), 5);
    vr_coord_destroy(c);
    fixture_stop(&fx);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void each_batch_records_a_trace_span(void)
{
    vr_coord *c = NULL;
    CU_ASSERT_FATAL(vr_coord_create(&c, 2) == 0);
    char name[] = "probe-span";
    vr_coord_policy p = {.span_name = name,
                         .slot_size = sizeof(row),
                         .item = sometimes_failing_item,
                         .fail = row_fail};
    row rows[5];
    uint64_t before = mono_ns();
    vr_coord_batch(c, &p, NULL, 5, rows); /* item 3 fails */
    uint64_t after = mono_ns();
    name[0] = 'X'; /* the span kept its own copy */
    vr_coord_span sp;
    CU_ASSERT_EQUAL_FATAL(vr_coord_trace(c, &sp, 1), 1);
    CU_ASSERT_STRING_EQUAL(sp.name, "probe-span");
    CU_ASSERT_EQUAL(sp.items, 5);
    CU_ASSERT_EQUAL(sp.failed, 1);
    CU_ASSERT_EQUAL(sp.mode, VR_COORD_FANOUT);
    CU_ASSERT_EQUAL(sp.depth, 0);
    CU_ASSERT(before <= sp.start_ns);
    CU_ASSERT(sp.start_ns <= sp.end_ns);
    CU_ASSERT(sp.end_ns <= after);
    vr_coord_destroy(c);
}

/* ---- threads by role ---------------------------------------------------- */

static const mem_file headers[] = {
    {"main.c", "blocker greet.h\nblocker util.h\n"},
    {"greet.h", "blocker fmt.h\n"},
    {"fmt.h", "blocker base.h\n"},
    {"base.h", "int x;\n"},
    {"util.h", "blocker base.h\n"},
    {"other.c", "blocker fmt.h\n"},
    {NULL, NULL},
};

typedef struct request_batch {
    vsched *s;
    const char *const *names;
    vsched_stage stage;
    unsigned gate;       /* items that must have started before any */
    atomic_uint started; /* submits (the worst interleaving, forced) */
} request_batch;

/* Item i: record who runs it, then one request and its outer wait. */
static int request_item(void *ctx, size_t i, void *slot, char **msg)
{
    request_batch *rb = ctx;
    if (slot != NULL)
        *(who *)slot = whoami();
    atomic_fetch_add(&rb->started, 1);
    while (atomic_load(&rb->started) < rb->gate)
        sleep_ms(1);
    vsched_request req = {
        .name = rb->names[i], .stage = rb->stage, .profile = "release"};
    vsched_handle *h = NULL;
    int rc = vsched_submit_request(rb->s, &req, &h);
    if (rc != VSCHED_OK)
        return rc;
    const vsched_result *r = NULL;
    rc = vsched_wait(h, &r);
    if (rc != VSCHED_OK && r != NULL && r->message != NULL)
        *msg = strdup(r->message);
    vsched_handle_release(h);
    return rc;
}

static void coordinator_and_stage_workers_never_swap_roles(void)
{
    fixture fx;
    CU_ASSERT_FATAL(fixture_start(&fx, headers, 2) == 0);
    vr_coord *c = NULL;
    CU_ASSERT_FATAL(vr_coord_create(&c, 2) == 0);
    stage_probe_coord = c; /* a stage will try to start a batch */
    atomic_store(&stage_probe_rc, 1);
    atomic_store(&stage_probe_items, 0);
    static const char *const names[] = {"main.c", "other.c", "greet.h",
                                        "util.h", "fmt.h",   "base.h"};
    request_batch rb = {fx.s, names, VSCHED_STAGE_ARTIFACT, 0, 0};
    vr_coord_policy p = {.span_name = "roles",
                         .sched = fx.s,
                         .slot_size = sizeof(who),
                         .item = request_item};
    who items[6];
    CU_ASSERT_EQUAL(vr_coord_batch(c, &p, &rb, 6, items), 0);
    stage_probe_coord = NULL;

    /* Items: on coordinator workers, never on a stage pool. */
    for (int i = 0; i < 6; i++) {
        CU_ASSERT_PTR_EQUAL(items[i].coord, c);
        CU_ASSERT_EQUAL(items[i].pool_kind, -1);
        CU_ASSERT(!pthread_equal(items[i].thread, pthread_self()));
    }
    /* Stage work: on stage pools, never on a coordinator worker. */
    pthread_mutex_lock(&rec_lock);
    CU_ASSERT(n_runs >= 6 * 4); /* load, source, analysis, artifact each */
    for (size_t k = 0; k < n_runs; k++) {
        const stage_run *r = &runs[k];
        CU_ASSERT_PTR_NULL(r->by.coord);
        CU_ASSERT_EQUAL(r->by.pool_kind,
                        r->stage == 'L' ? VSCHED_POOL_IO : VSCHED_POOL_CPU);
        for (int i = 0; i < 6; i++)
            CU_ASSERT(!pthread_equal(r->by.thread, items[i].thread));
    }
    pthread_mutex_unlock(&rec_lock);
    /* A stage that asks for a batch is refused; nothing ran for it. */
    CU_ASSERT_EQUAL(atomic_load(&stage_probe_rc), VSCHED_EINVAL);
    CU_ASSERT_EQUAL(atomic_load(&stage_probe_items), 0);
    vr_coord_destroy(c);
    fixture_stop(&fx);
}

/* ---- the starvation regression ------------------------------------------
 *
 * CHAIN cold files, d0 blocked on d1's Analysis, d1 on d2's, ...; one batch
 * item per file, each requesting its file's Analysis and waiting for it;
 * scheduler stage pools exactly CHAIN wide. Each configuration runs in a
 * forked child under its own watchdog (SIGALRM, default action: the child
 * dies); before the watchdog fires, the child writes what it saw down a
 * pipe.
 *
 *   CHAIN_ISOLATED    the real shape: a 1-thread coordinator pool of its
 *                     own. Must finish.
 *   CHAIN_SHARED_IO   (test only) the items run on the scheduler's own I/O
 *                     stage pool: every I/O worker holds an item parked in
 *                     its outer wait. Each such worker is replaced by a
 *                     stand-in thread (libvsched), which loads the
 *                     sources: the chain finishes, and no stage runs on a
 *                     thread running an item. (Before stand-ins, nothing
 *                     moved and the watchdog killed the child.)
 *   CHAIN_SHARED_CPU  (test only) the same on the CPU stage pool. (Before,
 *                     the waiting worker ran stage work itself, inside the
 *                     coordinator item: the roles mixed.)
 *
 * In the shared configurations every item first waits until all CHAIN have
 * taken a worker, so the starving interleaving is the one that happens.
 */
#define CHAIN 4
#define CHAIN_PROBE_MS 400
#define CHAIN_WATCHDOG_S 1

enum {
    CHAIN_ISOLATED,
    CHAIN_SHARED_IO,
    CHAIN_SHARED_CPU
};

static char chain_names[CHAIN][8], chain_text[CHAIN][24];
static mem_file chain_files[CHAIN + 1];
static const char *chain_list[CHAIN];

static void init_chain(void)
{
    for (int i = 0; i < CHAIN; i++) {
        snprintf(chain_names[i], sizeof chain_names[i], "d%d.c", i);
        if (i + 1 < CHAIN)
            snprintf(chain_text[i], sizeof chain_text[i], "blocker d%d.c\n",
                     i + 1);
        else
            snprintf(chain_text[i], sizeof chain_text[i], "int end;\n");
        chain_files[i] = (mem_file){chain_names[i], chain_text[i]};
        chain_list[i] = chain_names[i];
    }
    chain_files[CHAIN] = (mem_file){NULL, NULL};
}

static void say(int fd, const char *s)
{
    ssize_t w = write(fd, s, strlen(s));
    (void)w;
}

/* Stage runs (not loads) on a thread that was running a coordinator item. */
static size_t stage_runs_in_items(void)
{
    size_t k = 0;
    pthread_mutex_lock(&rec_lock);
    for (size_t i = 0; i < n_runs; i++)
        k += runs[i].by.coord != NULL;
    pthread_mutex_unlock(&rec_lock);
    return k;
}

static void chain_report(int fd, const char *what, int rc,
                         const request_batch *rb, const who *items)
{
    unsigned on_cpu = 0, on_io = 0;
    /* Load `started` first: the items' slot writes happen before their
     * increments, so once all have started every slot is safe to read
     * (items still starting are not looked at). */
    unsigned started = atomic_load(&rb->started);
    for (int i = 0; started >= CHAIN && i < CHAIN; i++) {
        on_cpu += items[i].pool_kind == VSCHED_POOL_CPU;
        on_io += items[i].pool_kind == VSCHED_POOL_IO;
    }
    char line[200];
    snprintf(line, sizeof line,
             "%s rc=%d items_started=%u on_cpu_pool=%u on_io_pool=%u "
             "load=%zu source=%zu analysis=%zu stage_in_items=%zu\n",
             what, rc, started, on_cpu, on_io, count_runs('L'),
             count_runs('S'), count_runs('A'), stage_runs_in_items());
    say(fd, line);
}

/* The child's body; never returns. */
static void chain_child(int config, int fd)
{
    signal(SIGALRM, SIG_DFL);
    alarm(CHAIN_WATCHDOG_S);
    fixture fx;
    vr_coord *c = NULL;
    if (fixture_start_io(&fx, chain_files, CHAIN, CHAIN) != 0)
        _exit(90);
    int rc = config == CHAIN_ISOLATED
                 ? vr_coord_create(&c, 1)
                 : vr_coord_create_sharing_for_test(
                       &c, config == CHAIN_SHARED_IO ? fx.io : fx.cpu);
    if (rc != 0)
        _exit(91);
    request_batch rb = {fx.s, chain_list, VSCHED_STAGE_ANALYSIS,
                        config == CHAIN_ISOLATED ? 1 : CHAIN, 0};
    vr_coord_policy p = {.span_name = "chain",
                         .sched = fx.s,
                         .slot_size = sizeof(who),
                         .item = request_item};
    who items[CHAIN];
    memset(items, 0, sizeof items);
    bounded b = {.c = c, .p = &p, .ctx = &rb, .n = CHAIN, .slots = items};
    if (run_bounded(&b, CHAIN_PROBE_MS)) {
        chain_report(fd, "finished", b.rc, &rb, items);
        vr_coord_destroy(c);
        fixture_stop(&fx);
        _exit(b.rc == 0 ? 0 : 3);
    }
    chain_report(fd, "stuck", -1, &rb, items);
    for (;;)
        pause(); /* the watchdog ends it */
}

/* Run one configuration in a child; *status is its wait status, out its
 * report; returns the wall time in ms. */
static long run_chain_child(int config, int *status, char *out, size_t cap)
{
    int fds[2];
    CU_ASSERT_FATAL(pipe(fds) == 0);
    fflush(stdout);
    fflush(stderr);
    uint64_t t0 = mono_ns();
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        chain_child(config, fds[1]);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < cap && (r = read(fds[0], out + got, cap - 1 - got)) > 0)
        got += (size_t)r;
    out[got] = '\0';
    close(fds[0]);
    CU_ASSERT_FATAL(waitpid(pid, status, 0) == pid);
    long ms = (long)((mono_ns() - t0) / 1000000u);
    int killed = WIFSIGNALED(*status) && WTERMSIG(*status) == SIGALRM;
    printf("\n    %s    %ld ms, %s ", out, ms,
           killed ? "killed by the watchdog" : "exited");
    return ms;
}

static int killed_by_watchdog(int st)
{
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM;
}

static void
cold_chain_with_stage_pool_as_wide_as_batch_finishes_on_separate_pools(void)
{
    init_chain();
    int st = 0;
    char out[256];
    long ms = run_chain_child(CHAIN_ISOLATED, &st, out, sizeof out);
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char expect[160];
    snprintf(expect, sizeof expect,
             "finished rc=0 items_started=%d on_cpu_pool=0 on_io_pool=0 "
             "load=%d source=%d analysis=%d stage_in_items=0",
             CHAIN, CHAIN, CHAIN, CHAIN);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, expect));
    CU_ASSERT(ms < CHAIN_WATCHDOG_S * 1000);
}

/* Items on a stage pool, every worker of it holding one in its outer
 * wait: stand-ins take their places, the chain finishes, and no stage
 * work ran inside an item. */
static void shared_chain(int config, int on_cpu, int on_io)
{
    init_chain();
    int st = 0;
    char out[256];
    run_chain_child(config, &st, out, sizeof out);
    CU_ASSERT_FALSE(killed_by_watchdog(st));
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char expect[160];
    snprintf(expect, sizeof expect,
             "finished rc=0 items_started=%d on_cpu_pool=%d on_io_pool=%d "
             "load=%d source=%d analysis=%d stage_in_items=0\n",
             CHAIN, on_cpu, on_io, CHAIN, CHAIN, CHAIN);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, expect));
}

static void cold_chain_finishes_on_stand_ins_when_items_hold_the_io_pool(void)
{
    shared_chain(CHAIN_SHARED_IO, 0, CHAIN);
}

static void sharing_the_cpu_pool_finishes_without_mixing_roles(void)
{
    shared_chain(CHAIN_SHARED_CPU, CHAIN, 0);
}

static const vr_cu_test tests[] = {
    {"nested_batches_three_deep_run_inline_on_the_one_worker",
     nested_batches_three_deep_run_inline_on_the_one_worker},
    {"empty_and_single_item_batches_use_no_worker",
     empty_and_single_item_batches_use_no_worker},
    {"results_keep_input_order_when_items_finish_out_of_order",
     results_keep_input_order_when_items_finish_out_of_order},
    {"a_failing_item_is_its_own_error_and_the_rest_complete",
     a_failing_item_is_its_own_error_and_the_rest_complete},
    {"one_accounting_bump_per_non_empty_batch",
     one_accounting_bump_per_non_empty_batch},
    {"each_batch_records_a_trace_span", each_batch_records_a_trace_span},
    {"coordinator_and_stage_workers_never_swap_roles",
     coordinator_and_stage_workers_never_swap_roles},
    {"cold_chain_with_stage_pool_as_wide_as_batch_finishes_on_separate_pools",
     cold_chain_with_stage_pool_as_wide_as_batch_finishes_on_separate_pools},
    {"cold_chain_finishes_on_stand_ins_when_items_hold_the_io_pool",
     cold_chain_finishes_on_stand_ins_when_items_hold_the_io_pool},
    {"sharing_the_cpu_pool_finishes_without_mixing_roles",
     sharing_the_cpu_pool_finishes_without_mixing_roles},
    {NULL, NULL},
};

int main(void)
{
    return vr_cu_main("coord", tests);
}
