/*
 * test_stress -- many threads of random submit / upsert / invalidate /
 * close / remove / reset / wait against one scheduler, with invariants
 * checked after quiescence:
 *
 *   - every waiter finished (a watchdog fails the run after a bound);
 *   - every status is a legal one for what the run did;
 *   - no stale result was delivered as current: each generation's Source
 *     was integrated at most once (a stale completion would publish a
 *     second version for the same identity), and every successful result's
 *     (incarnation, generation, content hash) is exactly a version the
 *     scheduler published for that file;
 *   - after a final reset, all occupancy is zero, and the objects retired
 *     while work was in flight are freed once that work comes back.
 *
 * Seeded and reproducible: VSCHED_STRESS_SEED (default 1) and
 * VSCHED_STRESS_OPS (operations per thread, default 1500) and
 * VSCHED_STRESS_THREADS (default 4) make a larger run one variable away.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/vsched.h>

#include "cu.h"
#include "world.h"

int vsched__test_published(vsched *s, const char *name, uint64_t incarnation,
                           uint64_t generation, uint64_t content_hash);
size_t vsched__test_conflicts(vsched *s);

#define N_FILES 300
#define MAX_OUT 64

static mem_file table[N_FILES + 1];
static char names[N_FILES][16];
static char contents[N_FILES][64];

static unsigned long env_or(const char *name, unsigned long dflt)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? strtoul(v, NULL, 10) : dflt;
}

/* xorshift64*: one stream per thread, from the run's seed. */
static uint64_t next(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 2685821657736338717u;
}

/* Content of file i: up to 3 blockers among files j < i (acyclic). */
static void make_content(char *buf, size_t cap, int i, uint64_t *rng)
{
    int n = i == 0 ? 0 : (int)(next(rng) % 4);
    size_t off = (size_t)snprintf(buf, cap, "v%llu\n",
                                  (unsigned long long)(next(rng) % 1000));
    for (int k = 0; k < n && off < cap; k++)
        off += (size_t)snprintf(buf + off, cap - off, "blocker f%d\n",
                                (int)(next(rng) % (uint64_t)i));
}

typedef struct outcome {
    char name[16];
    int status;
    uint64_t incarnation, generation, content_hash;
} outcome;

typedef struct worker {
    vsched *s;
    uint64_t rng;
    unsigned long ops;
    outcome *seen; /* every finished request's result */
    size_t n_seen, cap_seen;
    unsigned long illegal;
} worker;

static void keep(worker *w, vsched_handle *h)
{
    const vsched_result *r = NULL;
    int st = vsched_wait(h, &r);
    if (w->n_seen == w->cap_seen) {
        w->cap_seen = w->cap_seen ? w->cap_seen * 2 : 256;
        w->seen = realloc(w->seen, w->cap_seen * sizeof *w->seen);
    }
    outcome *o = &w->seen[w->n_seen++];
    snprintf(o->name, sizeof o->name, "%s", r->name);
    o->status = st;
    o->incarnation = r->incarnation;
    o->generation = r->generation;
    o->content_hash = r->content_hash;
    if (st != 0 && st != VSCHED_ESUPERSEDED && st != VSCHED_ESHUTDOWN &&
        st != VSCHED_EDEPFAIL)
        w->illegal++;
    vsched_handle_release(h);
}

static void *run_worker(void *arg)
{
    worker *w = arg;
    vsched_handle *out[MAX_OUT];
    size_t n_out = 0;
    for (unsigned long op = 0; op < w->ops; op++) {
        int f = (int)(next(&w->rng) % N_FILES);
        unsigned dice = (unsigned)(next(&w->rng) % 100);
        if (dice < 45 && n_out < MAX_OUT) {
            vsched_request r = REQ(names[f], (vsched_stage)(dice % 3), 0);
            r.priority = (int)(next(&w->rng) % 3);
            if (next(&w->rng) % 4 == 0)
                r.flags |= VSCHED_REQ_FOLLOW_LATEST;
            if (vsched_submit_request(w->s, &r, &out[n_out]) == 0)
                n_out++;
        } else if (dice < 58 && n_out < MAX_OUT) {
            char buf[64];
            make_content(buf, sizeof buf, f, &w->rng);
            vsched_request r = REQ(names[f], VSCHED_STAGE_ANALYSIS, 0);
            r.flags = VSCHED_REQ_CONTENT;
            r.content = buf;
            r.content_len = strlen(buf);
            if (vsched_submit_request(w->s, &r, &out[n_out]) == 0)
                n_out++;
        } else if (dice < 70) {
            vsched_invalidate(w->s, names[f]);
        } else if (dice < 74) {
            vsched_close_file(w->s, names[f]);
        } else if (dice < 78) {
            vsched_remove(w->s, names[f]);
        } else if (dice < 79 && next(&w->rng) % 4 == 0) {
            vsched_reset(w->s);
        } else if (n_out > 0) {
            keep(w, out[0]);
            memmove(out, out + 1, --n_out * sizeof *out);
        }
    }
    while (n_out > 0)
        keep(w, out[--n_out]);
    return NULL;
}

static void random_operations_keep_every_invariant(void)
{
    unsigned long seed = env_or("VSCHED_STRESS_SEED", 1);
    unsigned long ops = env_or("VSCHED_STRESS_OPS", 1500);
    unsigned long nthreads = env_or("VSCHED_STRESS_THREADS", 4);
    if (nthreads < 1 || nthreads > 64)
        nthreads = 4;
    uint64_t rng = seed * 0x9e3779b97f4a7c15u + 1;
    for (int i = 0; i < N_FILES; i++) {
        snprintf(names[i], sizeof names[i], "f%d", i);
        make_content(contents[i], sizeof contents[i], i, &rng);
        table[i] = (mem_file){names[i], contents[i]};
    }
    table[N_FILES] = (mem_file){NULL, NULL};
    printf("\n    seed=%lu threads=%lu ops/thread=%lu\n", seed, nthreads, ops);

    vsched *s = start_with(table, 2, 64, NULL);
    pthread_t th[64];
    worker *ws = calloc(nthreads, sizeof *ws);
    for (unsigned long i = 0; i < nthreads; i++) {
        ws[i] = (worker){.s = s, .rng = rng + i * 7919 + 1, .ops = ops};
        pthread_create(&th[i], NULL, run_worker, &ws[i]);
    }
    for (unsigned long i = 0; i < nthreads; i++)
        pthread_join(th[i], NULL);

    /* Quiescent: every waiter has returned (or the watchdog fired). */
    unsigned long total = 0, illegal = 0, ok = 0, stale = 0;
    for (unsigned long i = 0; i < nthreads; i++) {
        for (size_t k = 0; k < ws[i].n_seen; k++) {
            const outcome *o = &ws[i].seen[k];
            total++;
            if (o->status == 0 && o->content_hash != 0) {
                ok++;
                if (!vsched__test_published(s, o->name, o->incarnation,
                                            o->generation, o->content_hash))
                    stale++;
            }
        }
        illegal += ws[i].illegal;
    }
    vsched_stats st;
    vsched_get_stats(s, &st);
    printf("    results=%lu ok=%lu stale_refusals=%llu dedup_joins=%llu "
           "inbox_depth_max=%llu\n",
           total, ok, (unsigned long long)st.stale_completion_refusals,
           (unsigned long long)st.dedup_joins,
           (unsigned long long)st.inbox_depth_max);
    CU_ASSERT(total > 0);
    CU_ASSERT(ok > 0);
    CU_ASSERT_EQUAL(illegal, 0);
    CU_ASSERT_EQUAL(stale, 0);
    CU_ASSERT_EQUAL(vsched__test_conflicts(s), 0);
    CU_ASSERT_EQUAL(st.waiters, 0);
    CU_ASSERT(st.inbox_depth_max <= 64);

    vsched_reset(s);
    vsched_get_stats(s, &st);
    assert_occupancy_zero(&st);
    /* Work in flight at the reset comes back and frees the graveyard. */
    for (int tries = 0; tries < 2000 && st.retired_pending != 0; tries++) {
        usleep(1000);
        vsched_handle *h;
        vsched_request r = REQ("f0", VSCHED_STAGE_SOURCE, 0);
        if (vsched_submit_request(s, &r, &h) == 0) {
            vsched_wait(h, NULL);
            vsched_handle_release(h);
        }
        vsched_get_stats(s, &st);
    }
    CU_ASSERT_EQUAL(st.retired_pending, 0);
    stop(s);
    for (unsigned long i = 0; i < nthreads; i++)
        free(ws[i].seen);
    free(ws);
}

static const vr_cu_test tests[] = {
    {"random_operations_keep_every_invariant",
     random_operations_keep_every_invariant},
    {NULL, NULL},
};

int main(void)
{
    return vr_cu_main("stress", tests);
}
