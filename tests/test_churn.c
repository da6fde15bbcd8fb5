/*
 * test_churn -- every operation of the public API in random interleavings
 * from many threads, including the ones nobody designed for, with
 * invariants checked during the run and at quiescence:
 *
 *   requests (every stage, priorities, follow-latest, the same key twice in
 *   one batch), plain and atomic batches (some released before they are
 *   waited for), upserts, pair upserts in one atomic batch, invalidate,
 *   close, remove, reset, re-classification (re-home), source-root
 *   captures, witnessed commits, sub-DAGs of jobs with all three gates,
 *   named resources, parents, CPU semaphores, cancellation tokens, dedupe
 *   keys and ARTIFACT specs, host tasks filling the pools, node gets and
 *   waits, under small inbox and transport capacities.
 *
 * Invariants:
 *   - every waiter is answered (a watchdog fails the run, printing the
 *     scheduler's counters, when the threads do not finish);
 *   - every status is one the operations can produce;
 *   - a source root never goes backwards for a name, and never shows one
 *     atomic pair upsert half applied;
 *   - resources and semaphores never run more jobs than their capacity,
 *     nor Artifacts holding a stage resource more tasks (peak), and give
 *     every unit back;
 *   - at quiescence every file's Analysis is consistent with its blockers'
 *     current Analyses (no result built on a dead input), every successful
 *     result names a version the scheduler published, no waiter and no
 *     edge is left, every job is terminal;
 *   - after a final reset, occupancy is zero and retired objects are freed
 *     once in-flight work returns.
 *
 * Seeded and reproducible up to thread timing: VSCHED_CHURN_SEED (default
 * 1), VSCHED_CHURN_MS (milliseconds per configuration, default 1500) and
 * VSCHED_CHURN_THREADS (default 6).
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
#include "sound_world.h"

int vsched__test_published(vsched *s, const char *name, uint64_t incarnation,
                           uint64_t generation, uint64_t content_hash);
void vsched__test_dump(vsched *s, FILE *out);
size_t vsched__test_order_violations(vsched *s, FILE *out);

#define N_FILES 120
#define N_PAIRS 4
#define MAX_OUT 24
#define MAX_IDS 512

static memfs_file table[N_FILES + 2 * N_PAIRS + 1];
static char names[N_FILES][16];
static char contents[N_FILES][96];
static char pair_names[2 * N_PAIRS][16];
static atomic_int kinds[N_FILES];

static unsigned long env_or(const char *name, unsigned long dflt)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? strtoul(v, NULL, 10) : dflt;
}

static uint64_t next(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 2685821657736338717u;
}

/* Blocker cycles: when set, a third of the blockers are drawn from every
 * file, so cycles form, grow, merge and break as contents change. */
static int cyclic;

/* Content of file i: a version line and up to 3 blockers among j < i
 * (any j != i when cyclic). */
static void make_content(char *buf, size_t cap, int i, uint64_t *rng)
{
    int n = i == 0 && !cyclic ? 0 : (int)(next(rng) % 4);
    size_t off = (size_t)snprintf(buf, cap, "v%llu\n",
                                  (unsigned long long)(next(rng) % 100000));
    for (int k = 0; k < n && off < cap; k++) {
        int j;
        if (cyclic && (i == 0 || next(rng) % 3 == 0))
            j = (i + 1 + (int)(next(rng) % (N_FILES - 1))) % N_FILES;
        else
            j = (int)(next(rng) % (uint64_t)i);
        off += (size_t)snprintf(buf + off, cap - off, "blocker f%d\n", j);
    }
}

static const char *kind_of(const char *name)
{
    if (name[0] != 'f')
        return NULL;
    long i = strtol(name + 1, NULL, 10);
    if (i < 0 || i >= N_FILES)
        return NULL;
    return atomic_load(&kinds[i]) ? "k" : "c";
}

/* ---- one thread's run ------------------------------------------------------ */

/* The mix of operations: 0 every operation; 1 blockers superseded while
 * their dependents' Analysis runs (requests of Analysis and Artifact,
 * upserts and invalidations of the low-numbered files every other file
 * draws its blockers from; no removal, reset or cancel). */
static int mix;

typedef struct worker {
    vsched *s;
    vsched_pool *cpu;
    vsched_sem *sem;
    uint64_t rng;
    uint64_t deadline_ns;
    unsigned long ops, results, ok, illegal, stale_ok, jobs, backwards;
    uint64_t ids[MAX_IDS];
    size_t n_ids;
    /* Last (incarnation, generation) this thread's captures saw per file. */
    uint64_t seen_inc[N_FILES], seen_gen[N_FILES];
} worker;

static int legal(int st)
{
    return st == 0 || st == VSCHED_ESUPERSEDED || st == VSCHED_ESHUTDOWN ||
           st == VSCHED_EDEPFAIL || st == VSCHED_ECANCELLED;
}

static void keep(worker *w, vsched_handle *h)
{
    const vsched_result *r = NULL;
    int st = vsched_wait(h, &r);
    w->results++;
    if (!legal(st)) {
        w->illegal++;
        printf("    illegal status %s for %s: %s\n", vsched_errname(st),
               r->name, r->message != NULL ? r->message : "");
    }
    if (st == 0) {
        w->ok++;
        if (r->content_hash != 0 &&
            !vsched__test_published(w->s, r->name, r->incarnation,
                                    r->generation, r->content_hash))
            w->stale_ok++;
    }
    vsched_handle_release(h);
}

static vsched_request random_request(worker *w, int f)
{
    vsched_request r = sw_req(names[f], (vsched_stage)(next(&w->rng) % 3),
                              (int)(next(&w->rng) % 3));
    if (next(&w->rng) % 4 == 0)
        r.flags |= VSCHED_REQ_FOLLOW_LATEST;
    return r;
}

static void do_batch(worker *w, int atomic)
{
    vsched_request reqs[8];
    size_t n = 1 + next(&w->rng) % 7;
    for (size_t i = 0; i < n; i++) {
        int f = (int)(next(&w->rng) % N_FILES);
        reqs[i] = random_request(w, f);
        if (i > 0 && next(&w->rng) % 4 == 0)
            reqs[i] = reqs[i - 1]; /* the same key twice in one batch */
    }
    vsched_batch *b = NULL;
    int rc = atomic ? vsched_submit_batch_atomic(w->s, reqs, n, &b)
                    : vsched_submit_batch(w->s, reqs, n, &b);
    if (rc != 0)
        return;
    if (next(&w->rng) % 3 == 0) {
        vsched_batch_release(b); /* never waited for */
        return;
    }
    const vsched_result *res[8];
    vsched_wait_batch(b, res);
    for (size_t i = 0; i < n; i++) {
        w->results++;
        if (!legal(res[i]->status)) {
            w->illegal++;
            printf("    illegal batch status %s for %s: %s\n",
                   vsched_errname(res[i]->status), res[i]->name,
                   res[i]->message != NULL ? res[i]->message : "");
        }
    }
    vsched_batch_release(b);
}

static void do_pair_upsert(worker *w)
{
    int p = (int)(next(&w->rng) % N_PAIRS);
    char c0[32], c1[32];
    snprintf(c0, sizeof c0, "p%llu\n", (unsigned long long)next(&w->rng));
    snprintf(c1, sizeof c1, "q%llu\n", (unsigned long long)next(&w->rng));
    vsched_request reqs[2] = {
        sw_req(pair_names[2 * p], VSCHED_STAGE_SOURCE, 0),
        sw_req(pair_names[2 * p + 1], VSCHED_STAGE_SOURCE, 0)};
    reqs[0].flags = reqs[1].flags = VSCHED_REQ_CONTENT;
    reqs[0].content = c0;
    reqs[0].content_len = strlen(c0);
    reqs[1].content = c1;
    reqs[1].content_len = strlen(c1);
    vsched_batch *b = NULL;
    if (vsched_submit_batch_atomic(w->s, reqs, 2, &b) == 0) {
        vsched_wait_batch(b, NULL);
        vsched_batch_release(b);
    }
}

/* Roots: never backwards for a name, never a pair half upserted. */
static void do_capture(worker *w)
{
    vsched_root *root;
    if (vsched_capture_source_root(w->s, &root) != 0)
        return;
    for (int k = 0; k < 8; k++) {
        int f = (int)(next(&w->rng) % N_FILES);
        vsched_source_info in;
        vsched_root_lookup(root, names[f], &in);
        if (in.state == VSCHED_SOURCE_PENDING ||
            in.state == VSCHED_SOURCE_PRESENT) {
            if (in.incarnation < w->seen_inc[f] ||
                (in.incarnation == w->seen_inc[f] &&
                 in.generation < w->seen_gen[f])) {
                w->backwards++;
                printf("    root went backwards for %s: %llu/%llu after "
                       "%llu/%llu\n",
                       names[f], (unsigned long long)in.incarnation,
                       (unsigned long long)in.generation,
                       (unsigned long long)w->seen_inc[f],
                       (unsigned long long)w->seen_gen[f]);
            }
            w->seen_inc[f] = in.incarnation;
            w->seen_gen[f] = in.generation;
        }
    }
    for (int p = 0; p < N_PAIRS; p++) {
        vsched_source_info a, b;
        vsched_root_lookup(root, pair_names[2 * p], &a);
        vsched_root_lookup(root, pair_names[2 * p + 1], &b);
        if ((a.state == VSCHED_SOURCE_UNKNOWN) !=
                (b.state == VSCHED_SOURCE_UNKNOWN) ||
            (a.state != VSCHED_SOURCE_UNKNOWN &&
             a.generation != b.generation)) {
            w->backwards++;
            printf("    torn pair %s/%s: %d:%llu vs %d:%llu\n",
                   pair_names[2 * p], pair_names[2 * p + 1], (int)a.state,
                   (unsigned long long)a.generation, (int)b.state,
                   (unsigned long long)b.generation);
        }
    }
    vsched_root_release(root);
}

static void do_witness(worker *w)
{
    int f = (int)(next(&w->rng) % N_FILES);
    vsched_witness wit;
    uint64_t hash;
    if (vsched_get_witnessed_source(w->s, names[f], &wit, &hash) != 0)
        return;
    vsched_commit_artifact(w->s, &wit, "mem", "x", 1);
    if (next(&w->rng) % 2)
        vsched_remove_artifact_not_newer_than(w->s, &wit, "mem");
}

static void remember(worker *w, uint64_t id)
{
    if (w->n_ids < MAX_IDS)
        w->ids[w->n_ids++] = id;
    else
        w->ids[next(&w->rng) % MAX_IDS] = id;
}

static const char *const R1[] = {"r1"}, *const R2[] = {"r2"},
                         *const PR[] = {"pr"};

/* A small random sub-DAG of jobs (and ARTIFACT specs). */
static void do_dag(worker *w)
{
    vsched_node_spec n[6];
    vsched_edge_spec e[10];
    char nm[6][32], key[6][8];
    size_t nn = 1 + next(&w->rng) % 6, ne = 0;
    vsched_token *tok = NULL;
    if (next(&w->rng) % 4 == 0)
        vsched_token_create(w->s, &tok);
    for (size_t i = 0; i < nn; i++) {
        unsigned d = (unsigned)(next(&w->rng) % 10);
        const char *pfx = d < 2   ? "r1"
                          : d < 4 ? "r2"
                          : d < 5 ? "s"
                          : d < 6 ? "fail"
                          : d < 7 ? "p"
                                  : "plain";
        snprintf(nm[i], sizeof nm[i], "%s-%llu", pfx,
                 (unsigned long long)(next(&w->rng) % 1000000));
        n[i] = sw_job(nm[i]);
        n[i].priority = (int)(next(&w->rng) % 3);
        if (d < 2) {
            n[i].resources = R1;
            n[i].n_resources = 1;
        } else if (d < 4) {
            n[i].resources = R2;
            n[i].n_resources = 1;
        } else if (d < 5) {
            n[i].sem = w->sem;
        } else if (d == 6) {
            /* "p": takes pr, under the previous job when there is one
             * (borrowing its grant, or waiting on it: a deadlock the
             * scheduler must name, not hang on). */
            n[i].resources = PR;
            n[i].n_resources = 1;
            if (i > 0 && n[i - 1].what == VSCHED_SPEC_JOB &&
                next(&w->rng) % 2 == 0)
                n[i].parent = VSCHED_REF_LOCAL(i - 1);
        } else if (d == 7 && i > 0) {
            n[i] = (vsched_node_spec){
                .what = VSCHED_SPEC_ARTIFACT,
                .name = names[next(&w->rng) % N_FILES],
                .profile = "release",
                .parent = VSCHED_REF_NONE,
            };
            continue;
        }
        n[i].token = tok;
        if (next(&w->rng) % 5 == 0) {
            snprintf(key[i], sizeof key[i], "k%d", (int)(next(&w->rng) % 4));
            n[i].dedupe_key = key[i];
        }
    }
    for (size_t i = 1; i < nn && ne < 10; i++) {
        if (n[i].what != VSCHED_SPEC_JOB)
            continue;
        size_t k = next(&w->rng) % 3;
        for (size_t m = 0; m < k && ne < 10; m++) {
            e[ne].from = VSCHED_REF_LOCAL(next(&w->rng) % i);
            if (w->n_ids > 0 && next(&w->rng) % 4 == 0)
                e[ne].from = VSCHED_REF_ID(w->ids[next(&w->rng) % w->n_ids]);
            e[ne].to = VSCHED_REF_LOCAL(i);
            e[ne].gate = (vsched_gate)(next(&w->rng) % 3);
            ne++;
        }
    }
    vsched_dag dag = {n, nn, e, ne, NULL, NULL, (int)(next(&w->rng) % 2)};
    uint64_t ids[6];
    vsched_admission adm = VSCHED_BACKPRESSURED;
    int rc = vsched_submit_dag(w->s, &dag, ids, &adm, NULL);
    if (rc == 0 && adm == VSCHED_ADMITTED) {
        w->jobs += nn;
        for (size_t i = 0; i < nn; i++)
            remember(w, ids[i]);
    } else if (rc != 0 && rc != VSCHED_ENOENT && rc != VSCHED_ECYCLE &&
               rc != VSCHED_ESHUTDOWN) {
        w->illegal++;
        printf("    submit_dag: %s\n", vsched_errname(rc));
    }
    if (tok != NULL) {
        if (next(&w->rng) % 2 == 0)
            vsched_token_cancel(tok, "churn");
        vsched_token_release(tok);
    }
}

static void host_sleep(void *arg)
{
    (void)arg;
    usleep(200);
}

static void *run_worker(void *arg)
{
    worker *w = arg;
    vsched_handle *out[MAX_OUT];
    size_t n_out = 0;
    while (sw_now_ns() < w->deadline_ns) {
        w->ops++;
        int f = (int)(next(&w->rng) % N_FILES);
        unsigned dice = (unsigned)(next(&w->rng) % 1000);
        if (mix == 1) {
            if (dice < 500 && n_out < MAX_OUT) {
                vsched_request r = random_request(w, f);
                r.stage = next(&w->rng) % 2 ? VSCHED_STAGE_ARTIFACT
                                            : VSCHED_STAGE_ANALYSIS;
                if (vsched_submit_request(w->s, &r, &out[n_out]) == 0)
                    n_out++;
                continue;
            }
            int b = (int)(next(&w->rng) % 12); /* a common blocker */
            if (dice < 650 && n_out < MAX_OUT) {
                char buf[96];
                make_content(buf, sizeof buf, b, &w->rng);
                vsched_request r = random_request(w, b);
                r.flags |= VSCHED_REQ_CONTENT;
                r.content = buf;
                r.content_len = strlen(buf);
                if (vsched_submit_request(w->s, &r, &out[n_out]) == 0)
                    n_out++;
                continue;
            }
            if (dice < 800) {
                vsched_invalidate(w->s, names[b]);
                continue;
            }
            if (n_out > 0) {
                size_t k = next(&w->rng) % n_out;
                keep(w, out[k]);
                out[k] = out[--n_out];
            }
            continue;
        }
        if (dice < 300 && n_out < MAX_OUT) {
            vsched_request r = random_request(w, f);
            if (vsched_submit_request(w->s, &r, &out[n_out]) == 0)
                n_out++;
        } else if (dice < 380 && n_out < MAX_OUT) {
            char buf[96];
            make_content(buf, sizeof buf, f, &w->rng);
            vsched_request r = random_request(w, f);
            r.flags |= VSCHED_REQ_CONTENT;
            r.content = buf;
            r.content_len = strlen(buf);
            if (vsched_submit_request(w->s, &r, &out[n_out]) == 0)
                n_out++;
        } else if (dice < 420) {
            do_batch(w, 0);
        } else if (dice < 470) {
            do_batch(w, 1);
        } else if (dice < 490) {
            do_pair_upsert(w);
        } else if (dice < 560) {
            vsched_invalidate(w->s, names[f]);
        } else if (dice < 580) {
            vsched_close_file(w->s, names[f]);
        } else if (dice < 610) {
            vsched_remove(w->s, names[f]);
        } else if (dice < 613) {
            vsched_reset(w->s);
        } else if (dice < 630) {
            atomic_fetch_xor(&kinds[f], 1); /* re-home on next request */
        } else if (dice < 660) {
            do_capture(w);
        } else if (dice < 675) {
            do_witness(w);
        } else if (dice < 760) {
            do_dag(w);
        } else if (dice < 780) {
            vsched_pool_try_submit(w->cpu, host_sleep, NULL);
        } else if (dice < 800 && w->n_ids > 0) {
            vsched_node_info info;
            if (vsched_node_get(w->s, w->ids[next(&w->rng) % w->n_ids],
                                &info) == 0)
                vsched_node_info_clear(&info);
        } else if (dice < 805 && w->n_ids > 0) {
            vsched_node_info info;
            if (vsched_node_wait(w->s, w->ids[next(&w->rng) % w->n_ids],
                                 &info) == 0)
                vsched_node_info_clear(&info);
        } else if (dice < 806) {
            vsched_cancel(w->s, "churn");
        } else if (dice < 815) {
            vsched_stats st;
            vsched_get_stats(w->s, &st);
        } else if (n_out > 0) {
            size_t k = next(&w->rng) % n_out;
            keep(w, out[k]);
            out[k] = out[--n_out];
        }
    }
    while (n_out > 0)
        keep(w, out[--n_out]);
    return NULL;
}

/* ---- watchdog ---------------------------------------------------------------- */

static vsched *watched;
static atomic_int finished;
/* Edges found against the cycle search's order while the run went on. */
static atomic_ulong order_violations;
static uint64_t watch_deadline;

static void *watchdog(void *arg)
{
    (void)arg;
    while (!atomic_load(&finished)) {
        if (sw_now_ns() > watch_deadline) {
            vsched_stats st;
            vsched_get_stats(watched, &st);
            printf("    WATCHDOG: stuck; waiters=%llu files=%llu nodes=%llu "
                   "edges=%llu ready_queue=%zu retired_pending=%llu\n",
                   (unsigned long long)st.waiters,
                   (unsigned long long)st.files,
                   (unsigned long long)st.graph_nodes,
                   (unsigned long long)st.edges,
                   vsched_ready_queue_depth(watched),
                   (unsigned long long)st.retired_pending);
            vsched__test_dump(watched, stdout);
            fflush(stdout);
            _exit(97);
        }
        atomic_fetch_add(&order_violations,
                         vsched__test_order_violations(watched, stdout));
        sw_sleep_ms(50);
    }
    return NULL;
}

/* ---- checks at quiescence ---------------------------------------------------- */

/* Every file's Analysis folds its blockers' current Analysis hashes --
 * or, for a blocker in the same cycle (unit), the unit hash. */
static unsigned long inconsistent_analyses(vsched *s)
{
    unsigned long bad = 0;
    for (int f = 0; f < N_FILES; f++) {
        vsched_handle *h = sw_submit(s, names[f], VSCHED_STAGE_ANALYSIS, 0);
        const vsched_result *r = NULL;
        if (vsched_wait(h, &r) != 0) {
            vsched_handle_release(h);
            continue;
        }
        uint64_t b[8];
        size_t nb = r->n_blockers < 8 ? r->n_blockers : 8;
        int ok = 1;
        for (size_t i = 0; i < nb; i++) {
            vsched_handle *hb =
                sw_submit(s, r->blockers[i], VSCHED_STAGE_ANALYSIS, 0);
            const vsched_result *rb = NULL;
            ok &= vsched_wait(hb, &rb) == 0;
            b[i] = r->unit_hash != 0 && rb->unit_hash == r->unit_hash
                       ? r->unit_hash
                       : rb->analysis_hash;
            vsched_handle_release(hb);
        }
        if (ok && r->analysis_hash != sw_fold(r->content_hash, b, nb)) {
            bad++;
            printf("    %s: analysis %llx built on dead inputs\n", names[f],
                   (unsigned long long)r->analysis_hash);
        }
        vsched_handle_release(h);
    }
    return bad;
}

static void churn(const char *label, sw_options *o, int which)
{
    mix = which & 1;
    cyclic = (which & 2) != 0;
    unsigned long seed = env_or("VSCHED_CHURN_SEED", 1);
    unsigned long ms = env_or("VSCHED_CHURN_MS", 1500);
    unsigned long nth = env_or("VSCHED_CHURN_THREADS", 6);
    if (nth < 1 || nth > 32)
        nth = 6;
    uint64_t rng = seed * 0x9e3779b97f4a7c15u + 1;
    for (int i = 0; i < N_FILES; i++) {
        snprintf(names[i], sizeof names[i], "f%d", i);
        make_content(contents[i], sizeof contents[i], i, &rng);
        table[i] = (memfs_file){names[i], contents[i]};
        atomic_store(&kinds[i], 0);
    }
    for (int i = 0; i < 2 * N_PAIRS; i++) {
        snprintf(pair_names[i], sizeof pair_names[i], "p%d", i);
        table[N_FILES + i] = (memfs_file){pair_names[i], "p\n"};
    }
    table[N_FILES + 2 * N_PAIRS] = (memfs_file){NULL, NULL};
    o->files = table;
    printf("\n    %s: seed=%lu threads=%lu ms=%lu\n", label, seed, nth, ms);

    sw_world sw;
    sw_start(&sw, o);
    atomic_store(&sw_kind_of, kind_of);
    atomic_store(&sw_delay_us, 20);
    /* Stages wait from inside for other files' Analyses, unless a wait
     * could close a cycle (blocker cycles) or hold the only executor
     * (a serial one). */
    int nested = !cyclic && !o->executor_serial;
    atomic_store(&sw_nested_waits, nested ? 20 : 0);
    vsched_set_resource_capacity(sw.s, "r2", 2);
    /* Artifacts hold a stage resource too: "as" (capacity 2) for every
     * profile -- the same table the jobs' resources are in. */
    static const char *const as[] = {"as"};
    CU_ASSERT_FATAL(vsched_set_stage_resources(sw.s, VSCHED_STAGE_ARTIFACT,
                                               NULL, as, 1) == 0);
    vsched_set_resource_capacity(sw.s, "as", 2);
    vsched_sem *sem;
    CU_ASSERT_FATAL(vsched_sem_create(sw.s, 2, &sem) == 0);

    watched = sw.s;
    atomic_store(&finished, 0);
    atomic_store(&order_violations, 0);
    watch_deadline = sw_now_ns() + (ms + 60000) * 1000000u;
    pthread_t dog;
    pthread_create(&dog, NULL, watchdog, NULL);

    pthread_t th[32];
    worker *ws = calloc(nth, sizeof *ws);
    uint64_t deadline = sw_now_ns() + ms * 1000000u;
    for (unsigned long i = 0; i < nth; i++) {
        ws[i] = (worker){.s = sw.s,
                         .cpu = sw.cpu,
                         .sem = sem,
                         .rng = rng + i * 7919 + 1,
                         .deadline_ns = deadline};
        pthread_create(&th[i], NULL, run_worker, &ws[i]);
    }
    for (unsigned long i = 0; i < nth; i++)
        pthread_join(th[i], NULL);

    unsigned long ops = 0, results = 0, ok = 0, illegal = 0, stale = 0,
                  jobs = 0, backwards = 0;
    for (unsigned long i = 0; i < nth; i++) {
        ops += ws[i].ops;
        results += ws[i].results;
        ok += ws[i].ok;
        illegal += ws[i].illegal;
        stale += ws[i].stale_ok;
        jobs += ws[i].jobs;
        backwards += ws[i].backwards;
    }
    /* Quiescent: every job ends (they only need time). */
    unsigned long unfinished = 0;
    for (unsigned long i = 0; i < nth; i++)
        for (size_t k = 0; k < ws[i].n_ids; k++) {
            vsched_node_info info;
            int rc = vsched_node_wait(sw.s, ws[i].ids[k], &info);
            if (rc == 0) {
                unfinished += info.state < VSCHED_NODE_DONE;
                vsched_node_info_clear(&info);
            }
        }
    /* Requests of released batches may still run: quiescence is when
     * nothing waits any more (the watchdog bounds it). */
    vsched_stats st;
    vsched_get_stats(sw.s, &st);
    while (st.waiters != 0 || st.edges != 0 ||
           vsched_ready_queue_depth(sw.s) != 0) {
        sw_sleep_ms(1);
        vsched_get_stats(sw.s, &st);
    }
    unsigned long dead = inconsistent_analyses(sw.s);
    printf("    ops=%lu results=%lu ok=%lu jobs=%lu nested_waits=%lu "
           "stale_refusals=%llu "
           "dedup_joins=%llu inbox_depth_max=%llu peak r1=%d r2=%d s=%d\n",
           ops, results, ok, jobs, atomic_load(&sw_nested_done),
           (unsigned long long)st.stale_completion_refusals,
           (unsigned long long)st.dedup_joins,
           (unsigned long long)st.inbox_depth_max, sw_job_peak("r1"),
           sw_job_peak("r2"), sw_job_peak("s"));
    CU_ASSERT(results > 0);
    CU_ASSERT(ok > 0);
    if (nested)
        CU_ASSERT(atomic_load(&sw_nested_done) > 0);
    CU_ASSERT_EQUAL(illegal, 0);
    CU_ASSERT_EQUAL(stale, 0);
    CU_ASSERT_EQUAL(backwards, 0);
    CU_ASSERT_EQUAL(unfinished, 0);
    CU_ASSERT_EQUAL(dead, 0);
    CU_ASSERT_EQUAL(atomic_load(&order_violations), 0);
    vsched_resource_stats as_st;
    CU_ASSERT_EQUAL(vsched_resource_info(sw.s, "as", &as_st), 0);
    CU_ASSERT(as_st.peak >= 1 && as_st.peak <= 2);
    CU_ASSERT(sw_artifact_peak() >= 1 && sw_artifact_peak() <= 2);
    CU_ASSERT_EQUAL(as_st.in_use, 0);
    CU_ASSERT_EQUAL(st.waiters, 0);
    CU_ASSERT_EQUAL(st.edges, 0);
    CU_ASSERT(sw_job_peak("r1") <= 1);
    CU_ASSERT(sw_job_peak("r2") <= 2);
    CU_ASSERT(sw_job_peak("s") <= 2);
    if (o->inbox_capacity > 0)
        CU_ASSERT(st.inbox_depth_max <= o->inbox_capacity);

    vsched_reset(sw.s);
    vsched_get_stats(sw.s, &st);
    CU_ASSERT_EQUAL(st.files, 0);
    CU_ASSERT_EQUAL(st.waiters, 0);
    CU_ASSERT_EQUAL(st.edges, 0);
    for (int i = 0;
         i < 5000 && (st.retired_pending != 0 || st.graph_nodes != 0); i++) {
        sw_sleep_ms(1);
        vsched_get_stats(sw.s, &st);
    }
    CU_ASSERT_EQUAL(st.retired_pending, 0);
    CU_ASSERT_EQUAL(st.graph_nodes, 0);
    CU_ASSERT_EQUAL(vsched_sem_in_use(sem), 0);
    vsched_sem_release(sem);
    atomic_store(&finished, 1);
    pthread_join(dog, NULL);
    sw_stop(&sw);
    free(ws);
}

static void churn_with_a_one_slot_inbox_and_transport(void)
{
    sw_options o = {.cpu_threads = 2,
                    .io_threads = 1,
                    .io_capacity = 1,
                    .inbox_capacity = 1,
                    .ready_capacity = 4};
    churn("inbox 1, I/O transport 1, ready capacity 4", &o, 0);
}

static void churn_with_wide_pools(void)
{
    sw_options o = {.cpu_threads = 3, .io_threads = 2, .inbox_capacity = 64};
    churn("inbox 64, 3 CPU, 2 I/O", &o, 0);
}

static void churn_with_a_serial_executor_and_one_worker(void)
{
    sw_options o = {.cpu_threads = 1, .io_threads = 1, .executor_serial = 1};
    churn("serial executor, 1 CPU", &o, 0);
}

static void churn_with_blocker_cycles(void)
{
    sw_options o = {.cpu_threads = 3, .io_threads = 2, .inbox_capacity = 16};
    churn("blocker cycles, every operation", &o, 2);
}

static void churn_superseding_cycles_under_their_dependents(void)
{
    sw_options o = {.cpu_threads = 2, .io_threads = 1, .inbox_capacity = 8};
    churn("blocker cycles superseded under running dependents", &o, 3);
}

static void churn_superseding_blockers_under_their_dependents(void)
{
    sw_options o = {.cpu_threads = 3, .io_threads = 2, .inbox_capacity = 16};
    churn("blockers superseded under running dependents", &o, 1);
}

static const vr_cu_test tests[] = {
    {"churn_with_a_one_slot_inbox_and_transport",
     churn_with_a_one_slot_inbox_and_transport},
    {"churn_with_wide_pools", churn_with_wide_pools},
    {"churn_with_a_serial_executor_and_one_worker",
     churn_with_a_serial_executor_and_one_worker},
    {"churn_superseding_blockers_under_their_dependents",
     churn_superseding_blockers_under_their_dependents},
    {"churn_with_blocker_cycles", churn_with_blocker_cycles},
    {"churn_superseding_cycles_under_their_dependents",
     churn_superseding_cycles_under_their_dependents},
    {NULL, NULL},
};

int main(void)
{
    return vr_cu_main("churn", tests);
}
