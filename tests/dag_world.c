/*
 * dag_world -- the fixture of the job-graph suite; see dag_world.h.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vsched/vsched.h>

#include "cu.h"
#include "dag_world.h"
#include "memfs.h"

/* The sources (realpath knows only names in the table). */
static memfs world = {NULL, MEMFS_REALPATH_EXISTING, NULL, NULL};
static const char *fail_artifact;
static char scratch[256];
static vsched_pool *cpu, *io;

/* lock: guards everything below (the fixture's only lock; leaf). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

typedef struct gate {
    char name[64];
    int entered, open;
    int runs; /* Artifact runs of a hold* source */
    char inputs[1024];
} gate;
static gate gates[128];
static size_t n_gates;
static char started[128][64];
static size_t n_started;
static int running, max_running;

static gate *gate_of(const char *name)
{
    for (size_t i = 0; i < n_gates; i++)
        if (strcmp(gates[i].name, name) == 0)
            return &gates[i];
    CU_ASSERT_FATAL(n_gates < sizeof gates / sizeof gates[0]);
    gate *g = &gates[n_gates++];
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name);
    return g;
}

/* ---- executor ----------------------------------------------------------- */

static int e_source(void *inst, const vsched_ctx *ctx, const char *name,
                    const char *kind, const char *bytes, size_t len,
                    vsched_source_out *out)
{
    out->snapshot = malloc(1);
    out->content_hash = len;
    return VSCHED_OK;
}

static int e_deps(void *inst, const vsched_ctx *ctx, const char *name,
                  const void *snapshot, vsched_deps_out *out)
{
    return VSCHED_OK;
}

static int e_analysis(void *inst, const vsched_ctx *ctx,
                      const vsched_analysis_in *in, uint64_t *hash)
{
    *hash = in->content_hash;
    return VSCHED_OK;
}

/* Output path of `what` in the scratch directory (ctx->alloc'ed). */
static char *out_path(const vsched_ctx *ctx, const char *what,
                      const char *profile)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s/%s.%s", scratch, what,
             profile != NULL ? profile : "none");
    for (char *c = buf + strlen(scratch) + 1; *c; c++)
        if (*c == '/')
            *c = '_';
    return memfs_strdup(ctx, buf);
}

static int hold(const vsched_ctx *ctx, gate *g, vsched_artifact_out *out);

static int e_artifact(void *inst, const vsched_ctx *ctx,
                      const vsched_artifact_in *in, vsched_artifact_out *out)
{
    if (fail_artifact != NULL && strcmp(in->name, fail_artifact) == 0) {
        ctx->diag(ctx, VSCHED_SEV_ERROR, in->name, 1, "forced failure");
        return VSCHED_ETOOL;
    }
    if (strncmp(in->name, "hold", 4) == 0) {
        /* Sources named hold*: their Artifact waits for the gate too. */
        pthread_mutex_lock(&lock);
        gate *g = gate_of(in->name);
        g->runs++;
        int rc = hold(ctx, g, out);
        pthread_mutex_unlock(&lock);
        if (rc != VSCHED_OK)
            return rc;
    }
    out->path = out_path(ctx, in->name, in->profile);
    out->bytes = memfs_strdup(ctx, "obj");
    out->len = 3;
    return VSCHED_OK;
}

static void e_snapshot_free(void *inst, void *snapshot)
{
    free(snapshot);
}

/* hold*: wait for the gate; on cancellation leave a partial output. */
static int hold(const vsched_ctx *ctx, gate *g, vsched_artifact_out *out)
{
    g->entered = 1;
    pthread_cond_broadcast(&cond);
    while (!g->open) {
        if (ctx->is_cancelled(ctx)) {
            out->path = out_path(ctx, g->name, "final");
            out->tmp_path = out_path(ctx, g->name, "partial");
            FILE *f = fopen(out->tmp_path, "w");
            if (f != NULL) {
                fputs("partial", f);
                fclose(f);
            }
            return VSCHED_ECANCELLED;
        }
        /* Re-check cancellation now and then; nothing is asserted on
         * this period. */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 1000000;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&cond, &lock, &until);
    }
    return VSCHED_OK;
}

static int e_job(void *inst, const vsched_ctx *ctx, const vsched_job_in *in,
                 vsched_artifact_out *out)
{
    pthread_mutex_lock(&lock);
    gate *g = gate_of(in->name);
    if (n_started < sizeof started / sizeof started[0])
        snprintf(started[n_started++], sizeof started[0], "%s", in->name);
    if (++running > max_running)
        max_running = running;
    g->inputs[0] = '\0';
    for (size_t i = 0; i < in->n_inputs; i++) {
        size_t l = strlen(g->inputs);
        snprintf(g->inputs + l, sizeof g->inputs - l, "%s%s", i ? " " : "",
                 in->inputs[i]);
    }
    int rc = VSCHED_OK;
    if (strncmp(in->name, "hold", 4) == 0)
        rc = hold(ctx, g, out);
    running--;
    pthread_mutex_unlock(&lock);
    if (rc != VSCHED_OK)
        return rc;
    if (strncmp(in->name, "fail", 4) == 0) {
        ctx->diag(ctx, VSCHED_SEV_ERROR, NULL, 0, "job failed on purpose");
        return VSCHED_ETOOL;
    }
    if (in->profile != NULL && strcmp(in->profile, "out") == 0) {
        out->path = out_path(ctx, in->name, "out");
        out->bytes = memfs_strdup(ctx, "out");
        out->len = 3;
    }
    return VSCHED_OK;
}

static const vsched_executor_ops executor = {
    .size = sizeof(vsched_executor_ops),
    .source = e_source,
    .extract_deps = e_deps,
    .analysis = e_analysis,
    .artifact = e_artifact,
    .snapshot_free = e_snapshot_free,
    .job = e_job,
};

/* ---- scheduler ---------------------------------------------------------- */

vsched *dw_start(const dw_file *files, unsigned cpu_threads,
                 size_t ready_capacity)
{
    world.files = files;
    fail_artifact = NULL;
    pthread_mutex_lock(&lock);
    n_gates = n_started = 0;
    running = max_running = 0;
    pthread_mutex_unlock(&lock);
    snprintf(scratch, sizeof scratch, "/tmp/vsched_dag.XXXXXX");
    CU_ASSERT_FATAL(mkdtemp(scratch) != NULL);
    vsched_options o = {
        .size = sizeof o,
        .loader = MEMFS_BINDING(&world),
        .executor = {&executor, NULL, 1},
        .ready_capacity = ready_capacity,
    };
    return memfs_start(&cpu, &io, cpu_threads, &o);
}

void dw_stop(vsched *s)
{
    memfs_stop(s, cpu, io);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", scratch);
}

const char *dw_dir(void)
{
    return scratch;
}

int dw_runs(const char *name)
{
    pthread_mutex_lock(&lock);
    int r = gate_of(name)->runs;
    pthread_mutex_unlock(&lock);
    return r;
}

void dw_fail_artifact(const char *name)
{
    fail_artifact = name;
}

void dw_wait_entered(const char *name)
{
    pthread_mutex_lock(&lock);
    gate *g = gate_of(name);
    while (!g->entered)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
}

int dw_entered(const char *name)
{
    pthread_mutex_lock(&lock);
    int e = gate_of(name)->entered;
    pthread_mutex_unlock(&lock);
    return e;
}

void dw_open(const char *name)
{
    pthread_mutex_lock(&lock);
    gate_of(name)->open = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

long dw_start_index(const char *name)
{
    long r = -1;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_started && r < 0; i++)
        if (strcmp(started[i], name) == 0)
            r = (long)i;
    pthread_mutex_unlock(&lock);
    return r;
}

int dw_running(void)
{
    pthread_mutex_lock(&lock);
    int r = running;
    pthread_mutex_unlock(&lock);
    return r;
}

int dw_max_running(void)
{
    pthread_mutex_lock(&lock);
    int r = max_running;
    pthread_mutex_unlock(&lock);
    return r;
}

const char *dw_inputs(const char *name)
{
    static char buf[1024];
    pthread_mutex_lock(&lock);
    snprintf(buf, sizeof buf, "%s", gate_of(name)->inputs);
    pthread_mutex_unlock(&lock);
    return buf;
}

vsched_node_spec dw_job(const char *name, int priority)
{
    return (vsched_node_spec){.what = VSCHED_SPEC_JOB,
                              .kind = "test",
                              .name = name,
                              .priority = priority,
                              .parent = VSCHED_REF_NONE};
}

void dw_submit(vsched *s, const vsched_node_spec *nodes, size_t n,
               const vsched_edge_spec *edges, size_t ne, uint64_t *ids)
{
    vsched_dag dag = {nodes, n, edges, ne, NULL, NULL, 0};
    vsched_admission adm = VSCHED_BACKPRESSURED;
    CU_ASSERT_EQUAL_FATAL(vsched_submit_dag(s, &dag, ids, &adm, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(adm, VSCHED_ADMITTED);
}

vsched_node_state dw_wait(vsched *s, uint64_t id, vsched_node_info *info)
{
    CU_ASSERT_EQUAL_FATAL(vsched_node_wait(s, id, info), 0);
    return info->state;
}

vsched_node_state dw_state(vsched *s, uint64_t id)
{
    vsched_node_info info;
    CU_ASSERT_EQUAL_FATAL(vsched_node_get(s, id, &info), 0);
    vsched_node_state st = info.state;
    vsched_node_info_clear(&info);
    return st;
}
