/*
 * vsched-sched-bench -- scheduling overhead of libvsched on a synthetic
 * DAG, one measurement per process.
 *
 *     vsched-sched-bench [--files N] [--threads T] [--io-threads I]
 *                        [--strides 7,14,21] [--phases 1]
 *
 * N files x 3 stages; Source(f<i>) returns the blockers f<i-s> for each
 * stride s (synth.h), stage bodies are empty. The timed region is
 * everything a caller does to get the graph built and run: create the
 * CPU pool (T threads) and the I/O pool (I threads), the scheduler, the
 * N Artifact requests, ONE vsched_submit_batch_atomic, ONE
 * vsched_wait_batch. Teardown is timed separately.
 *
 * Prints one line:
 *     vsched files=N threads=T wall_s=W teardown_s=D peak_rss_kb=K
 *         rss_per_file_b=B nodes=X
 * where X is the stage runs the executor counted (3N when correct). Exits
 * 0 only when the run was correct: every result is OK with the expected
 * blockers, every stage of every file ran exactly once, no Artifact ran
 * before a blocker's Analysis, and the scheduler's stage counters agree.
 * Otherwise it says what was wrong and exits 1; 2 on usage errors. Peak
 * RSS is this process's (VmHWM), so run one measurement per process.
 *
 * --phases 1 adds a second line, from a task observer (so it costs a
 * little): when the submission returned, when the first task started and
 * the last one finished, and how long tasks ran per pool thread --
 *     phases submit_s=S first_task_s=F last_task_s=L busy_cpu_s=a,b
 *         busy_io_s=c
 * (times from the start of the timed region).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsched/vsched.h>

#include "synth.h"

typedef struct opts {
    size_t files;
    unsigned threads, io_threads;
    const char *strides;
    int phases;
} opts;

/* --phases: what the task observer saw (one call at a time). */
#define PHASE_LANES 64
static struct {
    uint64_t first, last;
    uint64_t busy[2][PHASE_LANES];
} ph = {UINT64_MAX, 0, {{0}}};

static void phase_task(void *user, const vsched_task_event *e)
{
    (void)user;
    if (e->started_ns < ph.first)
        ph.first = e->started_ns;
    if (e->finished_ns > ph.last)
        ph.last = e->finished_ns;
    if (e->worker >= 0 && e->worker < PHASE_LANES)
        ph.busy[e->pool][e->worker] += e->finished_ns - e->started_ns;
}

static void print_busy(const char *key, const uint64_t *v, unsigned n)
{
    printf(" %s=", key);
    for (unsigned i = 0; i < n && i < PHASE_LANES; i++)
        printf("%s%.6f", i ? "," : "", (double)v[i] / 1e9);
}

static int usage(void)
{
    fputs("usage: vsched-sched-bench [--files N] [--threads T] "
          "[--io-threads I] [--strides LIST] [--phases 0|1]\n",
          stderr);
    return 2;
}

static int parse(int argc, char **argv, opts *o)
{
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            return -1;
        const char *a = argv[i], *v = argv[++i];
        char *end = NULL;
        unsigned long long n = strtoull(v, &end, 10);
        int num = *v != '\0' && *end == '\0';
        if (strcmp(a, "--files") == 0 && num && n > 0 && n <= 100000000ull)
            o->files = (size_t)n;
        else if (strcmp(a, "--threads") == 0 && num && n > 0 && n <= 1024)
            o->threads = (unsigned)n;
        else if (strcmp(a, "--io-threads") == 0 && num && n > 0 && n <= 1024)
            o->io_threads = (unsigned)n;
        else if (strcmp(a, "--strides") == 0)
            o->strides = v;
        else if (strcmp(a, "--phases") == 0 && num && n <= 1)
            o->phases = (int)n;
        else
            return -1;
    }
    return 0;
}

/* The N requests; names live in one buffer (*names, caller frees). */
static vsched_request *make_requests(size_t n, char **names)
{
    vsched_request *r = calloc(n, sizeof *r);
    char *buf = malloc(n * 12 + 1), *p = buf;
    if (r == NULL || buf == NULL) {
        free(r);
        free(buf);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        r[i].name = p;
        p += synth_name(p, 12, i) + 1;
        r[i].stage = VSCHED_STAGE_ARTIFACT;
        r[i].profile = "bench";
    }
    *names = buf;
    return r;
}

/* 0 when every result is OK with the expected blockers. */
static int check_results(const synth *sy, const vsched_result **res, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const vsched_result *r = res[i];
        if (r == NULL || r->status != VSCHED_OK) {
            fprintf(stderr, "vsched-sched-bench: f%zu: %s%s%s\n", i,
                    r != NULL ? vsched_errname(r->status) : "no result",
                    r != NULL && r->message != NULL ? ": " : "",
                    r != NULL && r->message != NULL ? r->message : "");
            return -1;
        }
        if (r->n_blockers != synth_blockers_of(sy, i)) {
            fprintf(stderr,
                    "vsched-sched-bench: f%zu: %zu blockers, "
                    "expected %zu\n",
                    i, r->n_blockers, synth_blockers_of(sy, i));
            return -1;
        }
    }
    return 0;
}

static int check_stats(vsched *s, size_t n)
{
    vsched_stats st;
    vsched_get_stats(s, &st);
    for (int k = 0; k < 3; k++)
        if (st.stage_runs[k] != n || st.stage_failures[k] != 0) {
            fprintf(stderr,
                    "vsched-sched-bench: %s ran %llu times "
                    "(%llu failed), expected %zu\n",
                    vsched_stage_name((vsched_stage)k),
                    (unsigned long long)st.stage_runs[k],
                    (unsigned long long)st.stage_failures[k], n);
            return -1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    opts o = {10000, 2, 1, "7,14,21", 0};
    synth sy = {0};
    if (parse(argc, argv, &o) != 0 || synth_parse_strides(&sy, o.strides))
        return usage();
    sy.n = o.files;
    if (synth_count(&sy) != 0)
        return 1;
    const vsched_result **res = calloc(o.files, sizeof *res);
    if (res == NULL)
        return 1;

    uint64_t t0 = synth_now_ns();
    vsched_pool *cpu = NULL, *io = NULL;
    vsched *s = NULL;
    vsched_batch *b = NULL;
    char *names = NULL;
    vsched_request *reqs = NULL;
    int rc = vsched_pool_create(&cpu, VSCHED_POOL_CPU, o.threads, 0);
    if (rc == 0)
        rc = vsched_pool_create(&io, VSCHED_POOL_IO, o.io_threads, 0);
    vsched_options so = {
        .size = sizeof so,
        .cpu_pool = cpu,
        .io_pool = io,
        .loader = {&synth_loader_ops, &sy, 1},
        .executor = {&synth_executor_ops, &sy, 1},
        .task_observer = o.phases ? phase_task : NULL,
    };
    if (rc == 0)
        rc = vsched_create(&s, &so);
    if (rc == 0 && (reqs = make_requests(o.files, &names)) == NULL)
        rc = VSCHED_ENOMEM;
    if (rc == 0)
        rc = vsched_submit_batch_atomic(s, reqs, o.files, &b);
    uint64_t t_submit = synth_now_ns();
    free(reqs); /* the library copied what it keeps */
    free(names);
    if (rc == 0)
        rc = vsched_wait_batch(b, res);
    uint64_t t1 = synth_now_ns();

    char why[256] = "";
    int bad = rc != 0;
    if (bad)
        fprintf(stderr, "vsched-sched-bench: %s\n", vsched_strerror(rc));
    if (bad && b != NULL) {
        /* Say which request failed, and why. */
        vsched_wait_batch(b, res);
        check_results(&sy, res, o.files);
    }
    if (!bad)
        bad = check_results(&sy, res, o.files) != 0 ||
              check_stats(s, o.files) != 0;
    if (!bad && synth_check(&sy, why, sizeof why) != 0) {
        fprintf(stderr, "vsched-sched-bench: %s\n", why);
        bad = 1;
    }
    vsched_batch_release(b);
    if (s != NULL)
        vsched_destroy(s);
    if (io != NULL)
        vsched_pool_destroy(io);
    if (cpu != NULL)
        vsched_pool_destroy(cpu);
    uint64_t t2 = synth_now_ns();
    long kb = synth_peak_rss_kb();
    printf("vsched files=%zu threads=%u wall_s=%.6f teardown_s=%.6f "
           "peak_rss_kb=%ld rss_per_file_b=%.1f nodes=%zu\n",
           o.files, o.threads, (double)(t1 - t0) / 1e9,
           (double)(t2 - t1) / 1e9, kb, (double)kb * 1024.0 / (double)o.files,
           synth_runs_total(&sy));
    if (o.phases) {
        printf("phases submit_s=%.6f first_task_s=%.6f last_task_s=%.6f",
               (double)(t_submit - t0) / 1e9,
               ph.first != UINT64_MAX ? (double)(ph.first - t0) / 1e9 : 0.0,
               ph.last != 0 ? (double)(ph.last - t0) / 1e9 : 0.0);
        print_busy("busy_cpu_s", ph.busy[VSCHED_POOL_CPU], o.threads);
        print_busy("busy_io_s", ph.busy[VSCHED_POOL_IO], o.io_threads);
        putchar('\n');
    }
    free(res);
    synth_free(&sy);
    return bad ? 1 : 0;
}
