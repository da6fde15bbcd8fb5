/*
 * sched -- the public scheduler object: create/destroy, the lock,
 * submission, waiting, batches and counters.
 *
 * Submission, in the caller's thread: the request's name is resolved and
 * classified by the loader (no lock), then the request is bound -- under
 * the scheduler lock, once per request or once per batch -- to the file
 * object of its name and to the reset epoch (admit.c), and pushed to the
 * inbox. Handles and batches are reference counted: the caller's
 * reference, and the scheduler's until the request is answered, so either
 * may go first. A batch is one allocation holding its handles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "pager.h"
#include "pages.h"
#include "unit.h"

/* ---- the scheduler lock ------------------------------------------------------ */

static VSCHED__TLS const vsched *lock_holder;

/* How long a thread that finds the scheduler lock taken tries again
 * before it sleeps on the mutex. Holds are short (a batch's completions
 * and the next batch: microseconds), and a sleep costs a futex wait, a
 * wake and two context switches -- more than the hold it waits out.
 * Measured on 2 cores (doc/benchmarks.md): 1, 2, 5, 10, 20 and 60 us;
 * 5 us was fastest at 10k and 100k files, with no more CPU time than
 * sleeping at once. */
#define LOCK_SPIN_NS 5000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Take the scheduler lock. A pool worker (a runner) that finds it taken
 * tries again between pauses for LOCK_SPIN_NS (the clock read every 16
 * pauses) before it sleeps on it; any other thread sleeps at once: pool
 * workers are as many as the pools' threads, but callers are as many as
 * the host makes, and a caller spinning takes a core from the runner it
 * waits for. (bench/run's workload 8, 4 submitters and an invalidator on
 * 2 cores: 8 rounds each, every thread spinning gave a median of 47.5k
 * completions/s against 52.2k with none; runners alone spinning, 42.8k
 * against 42.1k in 6 later rounds.) */
void vsched__lock(vsched *s)
{
    if (pthread_mutex_trylock(&s->lock) == 0)
        goto held;
    if (vsched_pool_current_kind() >= 0) {
        uint64_t until = 0;
        for (unsigned i = 1;; i++) {
            cpu_relax();
            if (pthread_mutex_trylock(&s->lock) == 0)
                goto held;
            if (i % 16 != 0)
                continue;
            uint64_t now = vsched__now_ns();
            if (until == 0)
                until = now + LOCK_SPIN_NS;
            else if (now >= until)
                break;
        }
    }
    pthread_mutex_lock(&s->lock);
held:
    lock_holder = s;
}

int vsched__holds_lock(const vsched *s)
{
    return lock_holder == s;
}

void vsched__cond_wait(pthread_cond_t *c, vsched *s, int timed)
{
    if (!timed) {
        pthread_cond_wait(c, &s->lock);
        return;
    }
    struct timespec until;
    vsched__deadline_ms(&until, 10);
    pthread_cond_timedwait(c, &s->lock, &until);
}

void vsched__unlock(vsched *s, vsched__pass *p)
{
    vsched__snap *dead = s->dead_snaps;
    s->dead_snaps = NULL;
    lock_holder = NULL;
    pthread_mutex_unlock(&s->lock);
    if (dead == NULL)
        return;
    if (p == NULL) {
        vsched__snaps_free(s, dead);
        return;
    }
    vsched__snap **tail = &dead;
    while (*tail != NULL)
        tail = &(*tail)->next_dead;
    *tail = p->dead;
    p->dead = dead;
}

/* ---- interned names ------------------------------------------------------------ */

const char *vsched__intern(vsched *s, const char *str)
{
    vsched__strings *t = &s->strings;
    /* Names come in runs (one profile, one kind for a whole batch): the
     * last hit first. */
    if (t->n > 0 && strcmp(t->v[t->last], str) == 0)
        return t->v[t->last];
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i], str) == 0) {
            t->last = i;
            return t->v[i];
        }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 8;
        char **v = realloc(t->v, cap * sizeof *v);
        if (v == NULL)
            abort(); /* a handful of profile and kind names */
        t->v = v;
        t->cap = cap;
    }
    char *c = strdup(str);
    if (c == NULL)
        abort();
    t->last = t->n;
    t->v[t->n++] = c;
    return c;
}

/* ---- create / destroy ---------------------------------------------------------- */

static int bindings_valid(const vsched_options *o)
{
    const vsched_loader_ops *l = o->loader.ops;
    const vsched_executor_ops *e = o->executor.ops;
    return l != NULL && e != NULL && l->load != NULL && l->classify != NULL &&
           l->realpath != NULL && e->source != NULL &&
           e->extract_deps != NULL && e->analysis != NULL &&
           e->artifact != NULL && e->snapshot_free != NULL;
}

int vsched_create(vsched **out, const vsched_options *opts)
{
    if (out == NULL || opts == NULL || opts->size < sizeof *opts ||
        opts->cpu_pool == NULL || opts->io_pool == NULL ||
        vsched_pool_get_kind(opts->cpu_pool) != VSCHED_POOL_CPU ||
        vsched_pool_get_kind(opts->io_pool) != VSCHED_POOL_IO ||
        !bindings_valid(opts))
        return VSCHED_EINVAL;
    /* Aligned as its members ask (VSCHED__LINE); sizeof is a multiple of
     * that, as aligned_alloc wants. */
    vsched *s = aligned_alloc(_Alignof(vsched), sizeof *s);
    if (s == NULL)
        return VSCHED_ENOMEM;
    memset(s, 0, sizeof *s);
    s->opts = *opts;
    size_t cap = opts->inbox_capacity ? opts->inbox_capacity : 1024;
    if (vsched__inbox_init(&s->inbox, cap) != VSCHED_OK) {
        free(s);
        return VSCHED_ENOMEM;
    }
    s->pager_hold = vsched__pager_hold(); /* released by vsched_destroy */
    /* Critical sections are short and frequent: spin a little before
     * sleeping on the lock. */
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&s->lock, &attr);
    pthread_mutexattr_destroy(&attr);
    pthread_mutex_init(&s->serial_loader, NULL);
    pthread_mutex_init(&s->serial_executor, NULL);
    pthread_mutex_init(&s->observer_lock, NULL);
    vsched__graph_init(&s->graph);
    vsched__files_init(&s->files);
    vsched__dag_init(s);
    for (int q = 0; q < 2; q++)
        s->runner_args[q] = (vsched__runner_arg){s, q};
    s->runner_limit[VSCHED__Q_CPU] = vsched_pool_threads(opts->cpu_pool);
    s->runner_limit[VSCHED__Q_IO] = vsched_pool_threads(opts->io_pool);
    /* Loads run ahead of parsing by a bounded window: enough to keep
     * every CPU thread fed and every I/O thread's latency hidden, without
     * holding a whole tree's bytes at once. */
    s->readahead = 4 * ((size_t)s->runner_limit[VSCHED__Q_CPU] +
                        s->runner_limit[VSCHED__Q_IO]);
    if (s->readahead < 64)
        s->readahead = 64;
    s->files.pool = &s->file_pool;
    s->root = vsched__root_dir_new();
    if (s->root == NULL) {
        vsched_destroy(s); /* an empty file table: nothing to list */
        return VSCHED_ENOMEM;
    }
    s->file_pool.names = s->root;
    if (pthread_create(&s->driver, NULL, vsched__driver_main, s) != 0) {
        vsched_destroy(s);
        return VSCHED_ENOMEM;
    }
    s->driver_started = 1;
    *out = s;
    return VSCHED_OK;
}

/* Answer every request still in the inbox (after the driver stopped). */
static void drain_inbox(vsched *s)
{
    vsched__item items[64];
    size_t n;
    while ((n = vsched__inbox_drain(&s->inbox, items, 64)) > 0) {
        vsched__pass p = {0};
        vsched__lock(s);
        for (size_t i = 0; i < n; i++) {
            if (items[i].kind == VSCHED__ITEM_BATCH) {
                vsched_batch *b = items[i].ptr;
                for (size_t k = 0; k < b->n; k++)
                    vsched__handle_refuse(s, &b->h[k], VSCHED_ESHUTDOWN,
                                          "scheduler shut down", &p);
            } else {
                vsched__handle_refuse(s, items[i].ptr, VSCHED_ESHUTDOWN,
                                      "scheduler shut down", &p);
            }
        }
        vsched__unlock_run(s, &p);
    }
}

void vsched_destroy(vsched *s)
{
    if (s == NULL)
        return;
    atomic_store(&s->stopping, 1);
    vsched__inbox_stop(&s->inbox); /* the teardown channel, not an item */
    if (s->driver_started)
        pthread_join(s->driver, NULL);
    vsched__pass p = {0};
    vsched__lock(s);
    if (s->root != NULL)
        vsched__retire_all(s, VSCHED_ESHUTDOWN, "scheduler shut down", &p);
    /* Node waiters and blocked submitters see `stopping` and return;
     * runners (and the rests of batches handed on) finish the task they
     * run (its completion is refused) and exit. */
    pthread_cond_broadcast(&s->dag.changed);
    vsched__unlock_run(s, &p);
    /* The inbox is closed, the driver left what it held, and runners
     * admit nothing once teardown began: answer it before waiting for
     * them, since a stage may wait on a request it queued (and it is
     * answered nowhere else). */
    drain_inbox(s);
    while (atomic_load(&s->inside) > 0) {
        /* Each one's last action is its decrement: poll, then free. */
        vsched__lock(s);
        pthread_cond_broadcast(&s->dag.changed);
        vsched__unlock(s, NULL);
        struct timespec ms = {0, 500000};
        nanosleep(&ms, NULL);
    }

    /* Nothing runs any more: free what is left. */
    lock_holder = NULL;
    vsched__files_fini(s, &s->files);
    vsched__dag_fini(s);
    vsched__dependents_fini(&s->dependents, s->root);
    vsched__units_fini(s);
    vsched__graph_fini(&s->graph);
    vsched__filepool_fini(&s->file_pool); /* no object is referenced now */
    for (vsched__task *t = s->task_free; t != NULL;) {
        vsched__task *next = t->next_free;
        free(t);
        t = next;
    }
    vsched__snaps_free(s, s->dead_snaps);
    vsched__executor_flush(s, 1);
    for (size_t i = 0; i < s->strings.n; i++)
        free(s->strings.v[i]);
    free(s->strings.v);
    free(s->cancel_reason);
    vsched__root_dir_release(s->root);
    vsched__inbox_fini(&s->inbox);
    pthread_mutex_destroy(&s->observer_lock);
    pthread_mutex_destroy(&s->serial_executor);
    pthread_mutex_destroy(&s->serial_loader);
    pthread_mutex_destroy(&s->lock);
    unsigned pager = s->pager_hold;
    free(s);
    if (pager != 0)
        vsched__pager_release(pager); /* the last one joins the pager */
}

/* ---- handles -------------------------------------------------------------------- */

/* Fill h from req; profile is h's copy of the profile (owned by h or its
 * batch). */
static int handle_init(vsched_handle *h, const vsched_request *req,
                       const char *profile)
{
    memset(h, 0, sizeof *h);
    h->result.stage = req->stage;
    h->result.profile = profile;
    h->pend.priority = req->priority;
    /* The flags the scheduler acts on; others mean nothing here. */
    h->pend.flags = (uint8_t)(req->flags &
                         (VSCHED_REQ_FOLLOW_LATEST | VSCHED_REQ_CONTENT));
    h->pend.cost_ns = req->cost_ns;
    h->pend.kind = "";
    atomic_init(&h->done, 0);
    atomic_init(&h->refs, 2); /* caller + scheduler */
    int content = (req->flags & VSCHED_REQ_CONTENT) != 0;
    if (req->on_join == NULL && !content)
        return VSCHED_OK;
    vsched__req_extra *x = calloc(1, sizeof *x);
    if (x == NULL)
        return VSCHED_ENOMEM;
    h->pend.extra = x;
    x->on_join = req->on_join;
    x->join_user = req->join_user;
    if (content) {
        if (req->content_len > SIZE_MAX - sizeof *x->content - 1)
            return VSCHED_ENOMEM;
        x->content = malloc(sizeof *x->content + req->content_len + 1);
        if (x->content == NULL)
            return VSCHED_ENOMEM;
        x->content->len = req->content_len;
        if (req->content_len > 0)
            memcpy(x->content->bytes, req->content, req->content_len);
        x->content->bytes[req->content_len] = '\0';
    }
    return VSCHED_OK;
}

/* s: the scheduler, for a handle still bound to its file object -- one
 * whose submission failed, while s lives; an answered handle holds no
 * file (outcome.c), and s may be gone by then. */
static void handle_fini(vsched *s, vsched_handle *h)
{
    vsched_result *r = &h->result;
    if (!atomic_load_explicit(&h->done, memory_order_relaxed)) {
        if (h->pend.file != NULL)
            vsched__file_unref(s, h->pend.file); /* never admitted */
        vsched__req_extra_free(h->pend.extra);
    } else {
        if (r->deps != NULL)
            vsched__facts_unref(vsched__facts_of_names(
                r->deps, r->n_deps + r->n_blockers));
        free((char *)r->artifact_path);
        vsched__diags_free((vsched_diag *)r->diags, r->n_diags);
    }
    free((char *)r->failed_dep);
    if (h->batch == NULL)
        free((char *)r->name);
    free((char *)r->message);
}

static void batch_unref(vsched_batch *b)
{
    if (atomic_fetch_sub(&b->refs, 1) != 1)
        return;
    for (size_t i = 0; i < b->n; i++)
        handle_fini(b->s, &b->h[i]);
    while (b->owned != NULL) {
        vsched__owned *o = b->owned;
        b->owned = o->next;
        free(o);
    }
    vsched__root_dir_release(b->names);
    vsched__pages_free(b, b->block);
}

void vsched__handle_hold(vsched_handle *h)
{
    if (h->batch != NULL)
        atomic_fetch_add(&h->batch->refs, 1);
    else
        atomic_fetch_add(&h->refs, 1);
}

void vsched__handle_unref(vsched_handle *h)
{
    if (h->batch != NULL) {
        batch_unref(h->batch);
        return;
    }
    if (atomic_fetch_sub(&h->refs, 1) == 1) {
        handle_fini(NULL, h); /* answered: bound to no file */
        free((char *)h->result.profile);
        free(h);
    }
}

void vsched__handle_signal(vsched_handle *h)
{
    vsched_batch *b = h->batch;
    if (b == NULL) {
        vsched__park_set(h, &h->done);
        vsched__handle_unref(h);
        return;
    }
    atomic_store(&h->done, 1);
    if (atomic_fetch_sub(&b->remaining, 1) == 1) {
        vsched__park_set(b, &b->done);
        batch_unref(b); /* the scheduler's reference */
    }
}

/* A copy of `name` the batch owns (freed with it); "" on exhaustion. */
static const char *batch_own(vsched_batch *b, const char *name)
{
    size_t len = strlen(name);
    vsched__owned *o = malloc(sizeof *o + len + 1);
    if (o == NULL)
        return "";
    memcpy(o->name, name, len + 1);
    o->next = b->owned;
    b->owned = o;
    return o->name;
}

/* The loader's context for resolving names: one per submission, reused
 * for each of its requests (the probe task only collects diagnostics). */
typedef struct resolver {
    vsched__task probe;
    vsched_ctx ctx;
} resolver;

static void resolver_init(vsched *s, resolver *r)
{
    memset(&r->probe, 0, sizeof r->probe);
    r->probe.s = s;
    vsched__ctx_init(&r->ctx, &r->probe);
}

/* Resolve the request's name and classify it through the loader (in the
 * caller's thread, before admission); failures are answered at admission
 * without a node. The resolver's diagnostics are emptied on return.
 *
 * A batch's handle (h->batch set, holding the name directory) takes the
 * directory's copy of its canonical name as result.name and frees the
 * loader's at once: one copy a file instead of two, and the next name the
 * loader makes reuses the memory (a copy freed after the whole batch was
 * bound would stay in the heap as a hole). `more`: names still to come in
 * the batch, a growth hint for the directory. */
static void handle_resolve(vsched *s, resolver *r, vsched_handle *h,
                           const char *name, char kind[32], size_t more)
{
    const vsched_loader_binding *lb = &s->opts.loader;
    vsched__task *probe = &r->probe;
    const vsched_ctx *ctx = &r->ctx;
    char *canon = NULL;
    kind[0] = '\0';
    if (!lb->thread_safe)
        pthread_mutex_lock(&s->serial_loader);
    int rc = lb->ops->realpath(lb->inst, ctx, name, &canon);
    if (rc == VSCHED_OK && canon != NULL &&
        lb->ops->classify(lb->inst, ctx, canon, kind, 32) != VSCHED_OK)
        kind[0] = '\0';
    h->pend.class_seq = atomic_fetch_add(&s->class_seq, 1) + 1;
    if (!lb->thread_safe)
        pthread_mutex_unlock(&s->serial_loader);
    kind[31] = '\0';
    const char *kept = NULL;
    if (rc == VSCHED_OK && canon != NULL && h->batch != NULL) {
        size_t len = strlen(canon);
        kept = vsched__root_name(h->batch->names, canon,
                                 vsched__name_hash(canon, len), more);
    }
    if (kept != NULL) {
        free(canon);
        h->result.name = kept;
    } else if (rc == VSCHED_OK && canon != NULL && h->batch == NULL) {
        h->result.name = canon;
    } else if (rc == VSCHED_OK && canon != NULL) {
        /* The directory could not keep it: answered at admission. */
        h->result.name = batch_own(h->batch, canon);
        h->pend.admit_status = VSCHED_ENOMEM;
        free(canon);
    } else {
        free(canon);
        h->result.name = h->batch != NULL ? batch_own(h->batch, name)
                                          : strdup(name);
        /* A status of the list (plugin.h); anything else is EINVAL. */
        h->pend.admit_status =
            (int16_t)(rc < 0 && rc > VSCHED_E__LAST ? rc : VSCHED_EINVAL);
        /* The loader's own words, when it gave any, say more than the
         * code. */
        const char *why = probe->n_diags > 0 && probe->diags[0].message != NULL
                              ? probe->diags[0].message
                              : vsched_strerror(h->pend.admit_status);
        char *m;
        h->result.message = asprintf(&m, "%s: %s", name, why) < 0 ? NULL : m;
    }
    if (probe->n_diags > 0) {
        vsched__diags_free(probe->diags, probe->n_diags);
        probe->diags = NULL;
        probe->n_diags = 0;
    }
}

static int request_valid(const vsched_request *r)
{
    if (r == NULL || r->name == NULL || r->name[0] == '\0')
        return 0;
    if (r->stage < VSCHED_STAGE_SOURCE || r->stage > VSCHED_STAGE_ARTIFACT)
        return 0;
    if (r->stage == VSCHED_STAGE_ARTIFACT &&
        (r->profile == NULL || r->profile[0] == '\0'))
        return 0;
    return 1;
}

/* Bind resolved handles under the lock (classifications and profiles are
 * interned here). */
static void bind_all(vsched *s, vsched_handle *const *hs, size_t n,
                     char (*kinds)[32])
{
    const char *profile = NULL, *key = NULL;
    vsched__lock(s);
    for (size_t i = 0; i < n; i++) {
        vsched_handle *h = hs[i];
        h->pend.kind = kinds[i][0] != '\0' ? vsched__intern(s, kinds[i]) : "";
        /* A batch shares one copy of each run of equal profiles. */
        if (h->result.profile != profile) {
            profile = h->result.profile;
            key = vsched__intern(s, profile);
        }
        h->pend.profile_key = key;
        s->files.bulk = n - 1 - i; /* a growth hint (files.h) */
        vsched__bind(s, h);
    }
    s->files.bulk = 0;
    vsched__unlock(s, NULL);
}

static vsched_handle *handle_new(vsched *s, const vsched_request *req)
{
    vsched_handle *h = malloc(sizeof *h);
    char *profile = strdup(req->profile != NULL ? req->profile : "");
    if (h == NULL || profile == NULL) {
        free(h); /* never initialised: nothing of it to finish */
        free(profile);
        return NULL;
    }
    if (handle_init(h, req, profile) != VSCHED_OK) {
        handle_fini(s, h);
        free(h);
        free(profile);
        return NULL;
    }
    return h;
}

int vsched_submit_request(vsched *s, const vsched_request *req,
                          vsched_handle **out)
{
    if (s == NULL || out == NULL || !request_valid(req))
        return VSCHED_EINVAL;
    vsched_handle *h = handle_new(s, req);
    if (h == NULL)
        return VSCHED_ENOMEM;
    char kind[1][32];
    resolver r;
    resolver_init(s, &r);
    handle_resolve(s, &r, h, req->name, kind[0], 0);
    bind_all(s, &h, 1, kind);
    int rc =
        vsched__submit_item(s, (vsched__item){VSCHED__ITEM_REQUEST, h, 0});
    if (rc != VSCHED_OK) {
        /* Never queued: h is still bound to its file, and s is alive to
         * drop that reference (which a removal meanwhile may have left
         * the last one). */
        handle_fini(s, h);
        free((char *)h->result.profile);
        free(h);
        return rc;
    }
    atomic_fetch_add(&s->submit_count, 1);
    *out = h;
    return VSCHED_OK;
}

int vsched_request_key(vsched *s, const vsched_request *req, char **key)
{
    if (s == NULL || key == NULL || !request_valid(req))
        return VSCHED_EINVAL;
    char *canon = NULL;
    int rc = vsched__canonical_name(s, req->name, &canon);
    if (rc != VSCHED_OK)
        return rc;
    int n = asprintf(key, "%s:%s:%s", vsched_stage_name(req->stage),
                     req->stage == VSCHED_STAGE_ARTIFACT ? req->profile : "",
                     canon);
    free(canon);
    return n < 0 ? VSCHED_ENOMEM : VSCHED_OK;
}

int vsched_submit_request_hooked(vsched *s, const vsched_request *req,
                                 const vsched_dedupe_hook *hook,
                                 vsched_admission *admission, void **joiner,
                                 vsched_handle **out)
{
    if (s == NULL || out == NULL || admission == NULL || !request_valid(req))
        return VSCHED_EINVAL;
    *out = NULL;
    if (hook != NULL && hook->probe != NULL) {
        char *key = NULL;
        int rc = vsched_request_key(s, req, &key);
        if (rc != VSCHED_OK)
            return rc;
        void *j = NULL;
        int joined = hook->probe(hook->user, key, &j);
        free(key);
        if (joined) {
            if (joiner != NULL)
                *joiner = j;
            *admission = VSCHED_DEDUPE_JOINED;
            return VSCHED_OK;
        }
    }
    int rc = vsched_submit_request(s, req, out);
    if (rc == VSCHED_OK)
        *admission = VSCHED_ADMITTED;
    return rc;
}

int vsched_wait(vsched_handle *h, const vsched_result **res)
{
    if (h == NULL)
        return VSCHED_EINVAL;
    if (!atomic_load(&h->done)) {
        vsched__block bl;
        vsched__block_begin(
            &bl); /* the scheduler may be gone once h is done */
        vsched__block_wait(&bl, h, &h->done);
        vsched__block_end(&bl);
    }
    if (res != NULL)
        *res = &h->result;
    return h->result.status;
}

void vsched_handle_release(vsched_handle *h)
{
    if (h != NULL && h->batch == NULL)
        vsched__handle_unref(h);
}

int vsched__test_handle_done(vsched_handle *h)
{
    return atomic_load(&h->done);
}

/* ---- batches ---------------------------------------------------------------------- */

static vsched_batch *batch_new(vsched *s, const vsched_request *reqs, size_t n)
{
    /* One allocation: the batch, its handles and one copy of the profile
     * name of each run of requests with equal ones (no profile counts as
     * ""): counted by the rule the copy below follows. */
    size_t bytes = 0;
    const char *prev = "";
    for (size_t i = 0; i < n; i++) {
        const char *pr = reqs[i].profile != NULL ? reqs[i].profile : "";
        if (strcmp(pr, prev) != 0)
            bytes += strlen(pr) + 1;
        prev = pr;
    }
    size_t block =
        sizeof(vsched_batch) + n * sizeof(vsched_handle) + bytes + 1;
    /* Filled front to back right away: faulted in ahead (pager.h). */
    vsched_batch *b = vsched__pages_alloc_ahead(block);
    if (b == NULL)
        return NULL;
    b->block = block;
    b->s = s;
    b->n = n;
    b->names = vsched__root_dir_hold(s->root);
    b->owned = NULL;
    b->h = (vsched_handle *)(b + 1);
    char *names = (char *)(b->h + n);
    atomic_init(&b->refs, n > 0 ? 2 : 1);
    atomic_init(&b->remaining, n);
    atomic_init(&b->done, n == 0);
    const char *last = "";
    for (size_t i = 0; i < n; i++) {
        const char *pr = reqs[i].profile != NULL ? reqs[i].profile : "";
        if (strcmp(pr, last) != 0) {
            size_t l = strlen(pr) + 1;
            memcpy(names, pr, l);
            last = names;
            names += l;
        }
        if (handle_init(&b->h[i], &reqs[i], last) != VSCHED_OK) {
            b->n = i + 1;
            atomic_store(&b->refs, 1);
            batch_unref(b);
            return NULL;
        }
        b->h[i].batch = b;
    }
    /* Scratch for the whole batch (huge pages when large: pages.h). */
    vsched_handle **hs = vsched__pages_alloc_ahead((n + 1) * sizeof *hs);
    char(*kinds)[32] = vsched__pages_alloc_ahead((n + 1) * sizeof *kinds);
    if (hs == NULL || kinds == NULL) {
        vsched__pages_free(hs, (n + 1) * sizeof *hs);
        vsched__pages_free(kinds, (n + 1) * sizeof *kinds);
        atomic_store(&b->refs, 1);
        batch_unref(b);
        return NULL;
    }
    resolver r;
    resolver_init(s, &r);
    for (size_t i = 0; i < n; i++) {
        hs[i] = &b->h[i];
        handle_resolve(s, &r, hs[i], reqs[i].name, kinds[i], n - 1 - i);
    }
    if (n > 0)
        bind_all(s, hs, n, kinds);
    vsched__pages_free(hs, (n + 1) * sizeof *hs);
    vsched__pages_free(kinds, (n + 1) * sizeof *kinds);
    return b;
}

static int batch_args_valid(vsched *s, const vsched_request *reqs, size_t n,
                            vsched_batch **out)
{
    if (s == NULL || out == NULL || (n > 0 && reqs == NULL))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!request_valid(&reqs[i]))
            return 0;
    return 1;
}

/* Answer a handle the inbox refused (closed). */
static void refuse_unsubmitted(vsched *s, vsched_handle *h)
{
    vsched__pass p = {0};
    vsched__lock(s);
    vsched__handle_refuse(s, h, VSCHED_ESHUTDOWN, "scheduler shut down", &p);
    vsched__unlock_run(s, &p);
}

int vsched_submit_batch(vsched *s, const vsched_request *reqs, size_t n,
                        vsched_batch **out)
{
    if (!batch_args_valid(s, reqs, n, out))
        return VSCHED_EINVAL;
    vsched_batch *b = batch_new(s, reqs, n);
    if (b == NULL)
        return VSCHED_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        vsched_handle *h = &b->h[i];
        if (vsched__submit_item(
                s, (vsched__item){VSCHED__ITEM_REQUEST, h, 0}) != VSCHED_OK) {
            refuse_unsubmitted(s, h); /* closed mid-batch */
            continue;
        }
        atomic_fetch_add(&s->submit_count, 1);
    }
    *out = b;
    return VSCHED_OK;
}

int vsched_submit_batch_atomic(vsched *s, const vsched_request *reqs, size_t n,
                               vsched_batch **out)
{
    if (!batch_args_valid(s, reqs, n, out))
        return VSCHED_EINVAL;
    vsched_batch *b = batch_new(s, reqs, n);
    if (b == NULL)
        return VSCHED_ENOMEM;
    if (n > 0) {
        int rc =
            vsched__submit_item(s, (vsched__item){VSCHED__ITEM_BATCH, b, 0});
        if (rc != VSCHED_OK) {
            for (size_t i = 0; i < n; i++)
                refuse_unsubmitted(s, &b->h[i]);
            vsched_batch_release(b);
            return rc;
        }
        atomic_fetch_add(&s->submit_count, 1);
    }
    *out = b;
    return VSCHED_OK;
}

int vsched_wait_batch(vsched_batch *b, const vsched_result **res)
{
    if (b == NULL)
        return VSCHED_EINVAL;
    if (!atomic_load(&b->done)) {
        vsched__block bl;
        vsched__block_begin(&bl);
        vsched__block_wait(&bl, b, &b->done);
        vsched__block_end(&bl);
    }
    int worst = VSCHED_OK;
    for (size_t i = 0; i < b->n; i++) {
        if (b->h[i].result.status != VSCHED_OK && worst == VSCHED_OK)
            worst = b->h[i].result.status;
        if (res != NULL)
            res[i] = &b->h[i].result;
    }
    return worst;
}

size_t vsched_batch_size(const vsched_batch *b)
{
    return b != NULL ? b->n : 0;
}

void vsched_batch_release(vsched_batch *b)
{
    if (b != NULL)
        batch_unref(b);
}

/* ---- counters ---------------------------------------------------------------------- */

void vsched_get_stats(vsched *s, vsched_stats *out)
{
    memset(out, 0, sizeof *out);
    vsched__lock(s);
    out->files = s->files.n;
    out->graph_nodes = s->graph.live;
    out->edges = s->graph.edges;
    out->edges_capacity = s->graph.edges_cap;
    out->waiters = s->waiters;
    out->waiters_capacity = s->waiters; /* a list: no spare backing */
    out->blockers = s->n_blockers;
    out->blockers_capacity = s->n_blockers;
    out->ready_depth_max = s->dag.queued_max;
    out->retired_pending = s->graph.retired + atomic_load(&s->n_retired_files);
    out->cycle_units = vsched__units_formed(s);
    vsched__unlock(s, NULL);
    size_t versions, roots;
    vsched__root_counts(s->root, &versions, &roots);
    out->source_versions = versions;
    out->live_roots = roots;
    out->submit_count = atomic_load(&s->submit_count);
    out->batch_submissions = atomic_load(&s->batch_submissions);
    out->dedup_joins = atomic_load(&s->dedup_joins);
    out->stale_completion_refusals = atomic_load(&s->stale_refusals);
    out->inbox_depth_max = vsched__inbox_depth_max(&s->inbox);
    for (int i = 0; i < 3; i++) {
        out->stage_runs[i] = atomic_load(&s->stage_runs[i]);
        out->stage_failures[i] = atomic_load(&s->stage_failures[i]);
    }
}

void vsched_account_batch_submission(vsched *s)
{
    atomic_fetch_add(&s->batch_submissions, 1);
}
