/*
 * vsched-churn-bench -- dedup and supersession under load: several threads
 * submit requests for a shared set of files while another invalidates
 * them, one measurement per process.
 *
 *     vsched-churn-bench [--files M] [--submitters K] [--threads T]
 *                        [--ms D] [--cost-us C] [--invalidate-us U]
 *
 * The M synthetic files (synth.h, blockers at strides 7, 14, 21) are first
 * built once. Then for D milliseconds K threads each submit one Artifact
 * request at a time for a random file and wait for it (every other request
 * with VSCHED_REQ_FOLLOW_LATEST), while one thread calls vsched_invalidate
 * on a random file every U microseconds. Each stage spins C microseconds,
 * so identical requests overlap (dedup joins) and invalidations land on
 * running work (stale completions, refused).
 *
 * Prints one line:
 *     churn files=M submitters=K threads=T seconds=E completed=N
 *         superseded=N invalidations=N stale_refusals=N dedup_joins=N
 *         completed_per_s=R superseded_per_s=R stale_per_s=R dedup_per_s=R
 * (completed: requests answered OK; superseded: answered
 * VSCHED_ESUPERSEDED; stale refusals and dedup joins are the scheduler's
 * counters over the run). Exits 0 only when every answer was OK or
 * SUPERSEDED and a final batch of every file, after the storm, is all OK;
 * 1 otherwise (a hang is killed by a watchdog), 2 on usage errors.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vsched/vsched.h>

#include "synth.h"

typedef struct opts {
    unsigned files, submitters, threads, ms, cost_us, invalidate_us;
} opts;

typedef struct shared {
    vsched *s;
    const opts *o;
    atomic_int stop;
    atomic_ulong completed, superseded, errors, invalidations;
} shared;

typedef struct worker {
    shared *sh;
    uint64_t rng;
    pthread_t th;
} worker;

static uint64_t next_rand(uint64_t *x)
{
    *x ^= *x << 13; /* xorshift64 */
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void pick_name(worker *w, char *buf, size_t cap)
{
    synth_name(buf, cap, (size_t)(next_rand(&w->rng) % w->sh->o->files));
}

static void *submitter(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    for (unsigned long k = 0; !atomic_load(&sh->stop); k++) {
        char name[32];
        pick_name(w, name, sizeof name);
        vsched_request r = {.name = name,
                            .stage = VSCHED_STAGE_ARTIFACT,
                            .profile = "bench",
                            .flags = k % 2 ? VSCHED_REQ_FOLLOW_LATEST : 0};
        vsched_handle *h = NULL;
        const vsched_result *res = NULL;
        int rc = vsched_submit_request(sh->s, &r, &h);
        if (rc == VSCHED_OK)
            rc = vsched_wait(h, &res);
        int st = rc != VSCHED_OK ? rc : res->status;
        if (st == VSCHED_OK) {
            atomic_fetch_add(&sh->completed, 1);
        } else if (st == VSCHED_ESUPERSEDED) {
            atomic_fetch_add(&sh->superseded, 1);
        } else if (atomic_fetch_add(&sh->errors, 1) == 0) {
            fprintf(stderr, "vsched-churn-bench: %s: %s%s%s\n", name,
                    vsched_errname(st),
                    res != NULL && res->message != NULL ? ": " : "",
                    res != NULL && res->message != NULL ? res->message : "");
        }
        vsched_handle_release(h);
    }
    return NULL;
}

static void *invalidator(void *arg)
{
    worker *w = arg;
    shared *sh = w->sh;
    struct timespec gap = {0, (long)sh->o->invalidate_us * 1000};
    while (!atomic_load(&sh->stop)) {
        char name[32];
        pick_name(w, name, sizeof name);
        if (vsched_invalidate(sh->s, name) == VSCHED_OK)
            atomic_fetch_add(&sh->invalidations, 1);
        if (gap.tv_nsec > 0)
            nanosleep(&gap, NULL);
    }
    return NULL;
}

/* One atomic batch of every file; 0 when every result is OK. */
static int build_all(vsched *s, unsigned n)
{
    vsched_request *r = calloc(n, sizeof *r);
    char(*names)[16] = calloc(n, sizeof *names);
    const vsched_result **res = calloc(n, sizeof *res);
    vsched_batch *b = NULL;
    int rc = r != NULL && names != NULL && res != NULL ? 0 : VSCHED_ENOMEM;
    for (unsigned i = 0; rc == 0 && i < n; i++) {
        synth_name(names[i], sizeof names[i], i);
        r[i] = (vsched_request){.name = names[i],
                                .stage = VSCHED_STAGE_ARTIFACT,
                                .profile = "bench"};
    }
    if (rc == 0)
        rc = vsched_submit_batch_atomic(s, r, n, &b);
    if (rc == 0)
        rc = vsched_wait_batch(b, res);
    for (unsigned i = 0; rc == 0 && i < n; i++)
        if (res[i]->status != VSCHED_OK) {
            fprintf(stderr, "vsched-churn-bench: final build of %s: %s\n",
                    names[i], vsched_errname(res[i]->status));
            rc = res[i]->status;
        }
    vsched_batch_release(b);
    free(res);
    free(names);
    free(r);
    return rc;
}

static void watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "vsched-churn-bench: watchdog: hang\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(1);
}

static int parse(int argc, char **argv, opts *o)
{
    static const struct {
        const char *flag;
        size_t off;
        unsigned long min, max;
    } keys[] = {
        {"--files", offsetof(opts, files), 1, 1000000},
        {"--submitters", offsetof(opts, submitters), 1, 256},
        {"--threads", offsetof(opts, threads), 1, 256},
        {"--ms", offsetof(opts, ms), 1, 3600000},
        {"--cost-us", offsetof(opts, cost_us), 0, 1000000},
        {"--invalidate-us", offsetof(opts, invalidate_us), 0, 999999},
    };
    for (int i = 1; i < argc; i += 2) {
        size_t k = 0;
        while (k < sizeof keys / sizeof keys[0] &&
               strcmp(argv[i], keys[k].flag) != 0)
            k++;
        char *end = NULL;
        unsigned long v = i + 1 < argc ? strtoul(argv[i + 1], &end, 10) : 0;
        if (k == sizeof keys / sizeof keys[0] || i + 1 >= argc ||
            *argv[i + 1] == '\0' || *end != '\0' || v < keys[k].min ||
            v > keys[k].max)
            return -1;
        *(unsigned *)((char *)o + keys[k].off) = (unsigned)v;
    }
    return 0;
}

int main(int argc, char **argv)
{
    opts o = {64, 4, 2, 2000, 20, 200};
    if (parse(argc, argv, &o) != 0) {
        fputs("usage: vsched-churn-bench [--files M] [--submitters K] "
              "[--threads T] [--ms D] [--cost-us C] [--invalidate-us U]\n",
              stderr);
        return 2;
    }
    signal(SIGALRM, watchdog);
    alarm(o.ms / 1000 + 120);
    synth sy = {.n = o.files, .cost_ns = (uint64_t)o.cost_us * 1000};
    synth_parse_strides(&sy, "7,14,21");
    vsched_pool *cpu = NULL, *io = NULL;
    vsched *s = NULL;
    int rc = vsched_pool_create(&cpu, VSCHED_POOL_CPU, o.threads, 0);
    if (rc == 0)
        rc = vsched_pool_create(&io, VSCHED_POOL_IO, 1, 0);
    vsched_options so = {.size = sizeof so,
                         .cpu_pool = cpu,
                         .io_pool = io,
                         .loader = {&synth_loader_ops, &sy, 1},
                         .executor = {&synth_executor_ops, &sy, 1}};
    if (rc == 0)
        rc = vsched_create(&s, &so);
    if (rc == 0)
        rc = build_all(s, o.files);
    if (rc != 0) {
        fprintf(stderr, "vsched-churn-bench: setup: %s\n",
                vsched_strerror(rc));
        return 1;
    }

    shared sh = {.s = s, .o = &o};
    worker *w = calloc(o.submitters + 1, sizeof *w);
    if (w == NULL)
        return 1;
    vsched_stats before, after;
    vsched_get_stats(s, &before);
    uint64_t t0 = synth_now_ns();
    for (unsigned k = 0; k <= o.submitters; k++) {
        w[k] = (worker){.sh = &sh, .rng = 0x9e3779b97f4a7c15ull * (k + 1)};
        pthread_create(&w[k].th, NULL,
                       k < o.submitters ? submitter : invalidator, &w[k]);
    }
    struct timespec d = {(time_t)(o.ms / 1000), (long)(o.ms % 1000) * 1000000};
    nanosleep(&d, NULL);
    atomic_store(&sh.stop, 1);
    for (unsigned k = 0; k <= o.submitters; k++)
        pthread_join(w[k].th, NULL);
    double secs = (double)(synth_now_ns() - t0) / 1e9;
    vsched_get_stats(s, &after);
    int final = build_all(s, o.files);

    unsigned long ok = atomic_load(&sh.completed);
    unsigned long sup = atomic_load(&sh.superseded);
    unsigned long long stale =
        after.stale_completion_refusals - before.stale_completion_refusals;
    unsigned long long joins = after.dedup_joins - before.dedup_joins;
    printf("churn files=%u submitters=%u threads=%u seconds=%.3f "
           "completed=%lu superseded=%lu invalidations=%lu "
           "stale_refusals=%llu dedup_joins=%llu completed_per_s=%.1f "
           "superseded_per_s=%.1f stale_per_s=%.1f dedup_per_s=%.1f\n",
           o.files, o.submitters, o.threads, secs, ok, sup,
           atomic_load(&sh.invalidations), stale, joins, (double)ok / secs,
           (double)sup / secs, (double)stale / secs, (double)joins / secs);
    vsched_destroy(s);
    vsched_pool_destroy(io);
    vsched_pool_destroy(cpu);
    free(w);
    unsigned long errors = atomic_load(&sh.errors);
    if (errors != 0)
        fprintf(stderr, "vsched-churn-bench: %lu requests failed\n", errors);
    return errors == 0 && final == 0 && ok > 0 ? 0 : 1;
}
