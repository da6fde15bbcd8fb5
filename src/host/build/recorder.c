/*
 * recorder -- the state writer thread; see recorder.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vsched/plugin.h>

#include "build/recorder.h"
#include "common/util.h"

typedef struct vr_event {
    char *kind; /* NULL: an artifact */
    char *name, *profile;
    uint64_t duration_ns;
} vr_event;

struct vr_recorder {
    vr_state *state;
    vr_sources *src;
    vr_bind *bind;
    vr_cache *cache;
    pthread_t thread;
    /* lock: guards queue, n_queue, cap_queue, stop; a leaf. `wake` is its
     * condition variable. */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    vr_event *queue;
    size_t n_queue, cap_queue;
    int stop;
    /* The thread's own (read by finish after the join). */
    vr_recorder_counts counts;
    int failed;
};

/* ---- one artifact ---------------------------------------------------------- */

/* The dependency list of an artifact being recorded. */
typedef struct vr_deplist {
    const char **names; /* borrowed from the reach list or the capture */
    int *covered;
    uint64_t *hash;
    size_t n;
} vr_deplist;

static int vr_listed(const vr_deplist *d, const char *name)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->names[i], name) == 0)
            return 1;
    return 0;
}

/* The content hash the build of `cap` saw of `name`; 0 in *trusted when
 * it cannot be vouched for. */
static uint64_t vr_dep_hash(vr_recorder *r, const vr_capture *cap,
                            const char *name, int *trusted)
{
    uint64_t h = 0;
    vr_stamp load_st, now;
    int have_st = 0;
    char *path = vr_sources_path(r->src, name);
    int stamped = path != NULL && vr_stamp_of(path, &now) == VSCHED_OK;
    free(path);
    if (vr_sources_load_info(r->src, name, &h, &load_st, &have_st)) {
        if (!have_st || !stamped || !vr_stamp_equal(&load_st, &now)) {
            *trusted = 0; /* changed since it was loaded */
            return have_st ? VR_HASH_UNKNOWN : h;
        }
        return h;
    }
    if (!stamped || vr_sources_current(r->src, name, &h) != VSCHED_OK) {
        *trusted = 0;
        return VR_HASH_UNKNOWN;
    }
    if (cap->outcome == VR_EXECUTED &&
        now.mtime_ns >= cap->started_wall_ns - VR_RACY_NS) {
        *trusted = 0; /* written while (or right before) it was read */
        return VR_HASH_UNKNOWN;
    }
    return h;
}

/* Give every dependency a sources row id (a dependency the run never
 * stamped, say a missing file, gets a row saying "unknown"). */
static int vr_dep_ids(vr_recorder *r, const vr_deplist *d, vr_dep *out)
{
    int rc = VSCHED_OK;
    for (size_t i = 0; rc == VSCHED_OK && i < d->n; i++) {
        int64_t id = 0;
        rc = vr_sources_write(r->src, r->state, d->names[i], &id);
        if (rc == VSCHED_OK && id == 0) {
            vr_stamp none = {0, 0, -1, 0};
            rc = vr_state_put_source(r->state, d->names[i], VR_HASH_UNKNOWN,
                                     &none, 0, &id);
        }
        out[i] = (vr_dep){id, d->hash[i], d->covered[i]};
    }
    return rc;
}

/* The output's hash and stamp after publication; 0, or -1 when it is not
 * there (then nothing is recorded: the next run finds it missing). */
static int vr_output(vr_recorder *r, const vr_capture *cap,
                     const uint8_t key[16], const vr_deplist *d, int trusted,
                     uint64_t *hash, vr_stamp *st)
{
    *hash = cap->out_hash;
    memset(st, 0, sizeof *st);
    if (cap->path == NULL)
        return 0;
    if (cap->outcome == VR_EXECUTED) {
        if (vr_hash_file(cap->path, hash, NULL) != VSCHED_OK)
            return -1;
        r->counts.outputs_hashed++;
        if (r->cache != NULL && trusted) {
            vr_cache_dep *cd = vr_xcalloc(d->n + 1, sizeof *cd);
            size_t n = 0;
            for (size_t i = 0; i < d->n; i++)
                if (!d->covered[i])
                    cd[n++] = (vr_cache_dep){(char *)d->names[i], d->hash[i]};
            vr_cache_store(r->cache, key, cap->path, *hash, cd, n);
            free(cd);
        }
    }
    return vr_stamp_of(cap->path, st) == VSCHED_OK ? 0 : -1;
}

static void vr_record_artifact(vr_recorder *r, const vr_event *ev)
{
    vr_capture cap;
    if (!vr_bind_capture(r->bind, NULL, ev->name, ev->profile, &cap))
        return;
    const vr_profile_keys *pk = vr_bind_keys(r->bind, ev->profile);
    const vr_art_row *old = vr_bind_record(r->bind, ev->name, ev->profile);
    vr_reach *reach = NULL;
    size_t nr = vr_sources_reach(r->src, ev->name, &reach);
    size_t cap_n = nr + cap.n_tool_deps + 1;
    vr_deplist d = {vr_xcalloc(cap_n, sizeof(char *)),
                    vr_xcalloc(cap_n, sizeof(int)),
                    vr_xcalloc(cap_n, sizeof(uint64_t)), 0};
    for (size_t i = 0; i < nr; i++) {
        d.names[d.n] = reach[i].name;
        d.covered[d.n++] = reach[i].covered;
    }
    for (size_t i = 0; i < cap.n_tool_deps; i++)
        if (!vr_listed(&d, cap.tool_deps[i]))
            d.names[d.n++] = cap.tool_deps[i];
    int trusted = 1;
    for (size_t i = 0; i < d.n; i++)
        d.hash[i] = vr_dep_hash(r, &cap, d.names[i], &trusted);
    r->counts.uncertain += !trusted;
    vr_art_row row = {0};
    vr_dep *deps = vr_xcalloc(d.n + 1, sizeof *deps);
    if (vr_output(r, &cap, cap.key, &d, trusted, &row.out_hash, &row.out_st) ==
            0 &&
        vr_dep_ids(r, &d, deps) == VSCHED_OK) {
        row.source = ev->name;
        row.profile = ev->profile;
        memcpy(row.key, cap.key, 16);
        row.config = pk != NULL ? pk->config : 0;
        row.tool = pk != NULL ? pk->tool : 0;
        row.deps = deps;
        row.n_deps = d.n;
        row.out_path = cap.path;
        row.duration_ns = cap.outcome == VR_EXECUTED || old == NULL
                              ? cap.duration_ns
                              : old->duration_ns;
        if (vr_state_put_artifact(r->state, &row) == VSCHED_OK)
            r->counts.artifacts++;
    }
    free(deps);
    free(d.names);
    free(d.covered);
    free(d.hash);
    free(reach);
    vr_capture_clear(&cap);
}

static void vr_record_job(vr_recorder *r, const vr_event *ev)
{
    vr_capture cap;
    if (!vr_bind_capture(r->bind, ev->kind, ev->name, ev->profile, &cap))
        return;
    const vr_job_row *old =
        vr_bind_job_record(r->bind, ev->kind, ev->name, ev->profile);
    vr_job_row row = {0};
    row.out_hash = cap.out_hash;
    int ok = 1;
    if (cap.path != NULL && cap.outcome == VR_EXECUTED)
        ok = vr_hash_file(cap.path, &row.out_hash, NULL) == VSCHED_OK;
    if (ok && cap.path != NULL)
        ok = vr_stamp_of(cap.path, &row.out_st) == VSCHED_OK;
    if (ok) {
        row.kind = ev->kind;
        row.name = ev->name;
        row.profile = ev->profile;
        memcpy(row.key, cap.key, 16);
        row.out_path = cap.path;
        row.duration_ns = cap.outcome == VR_EXECUTED || old == NULL
                              ? ev->duration_ns
                              : old->duration_ns;
        if (vr_state_put_job(r->state, &row) == VSCHED_OK)
            r->counts.jobs++;
    }
    vr_capture_clear(&cap);
}

/* ---- the thread ----------------------------------------------------------- */

static void vr_event_free(vr_event *e)
{
    free(e->kind);
    free(e->name);
    free(e->profile);
}

/* Record a batch in one transaction of the cache, then of the state. */
static void vr_record_batch(vr_recorder *r, vr_event *ev, size_t n)
{
    if (vr_state_begin(r->state) != VSCHED_OK)
        r->failed = 1;
    for (size_t i = 0; i < n; i++) {
        if (!r->failed) {
            if (ev[i].kind == NULL)
                vr_record_artifact(r, &ev[i]);
            else
                vr_record_job(r, &ev[i]);
        }
        vr_event_free(&ev[i]);
    }
    if (!r->failed && vr_sources_flush(r->src, r->state) != VSCHED_OK)
        r->failed = 1; /* files loaded for artifacts that failed, say */
    if (r->cache != NULL)
        vr_cache_commit(r->cache); /* entries before the rows naming them */
    if (!r->failed && vr_state_commit(r->state) != VSCHED_OK)
        r->failed = 1;
}

static void vr_deadline(struct timespec *ts, long ms)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_nsec += (ms % 1000) * 1000000L;
    ts->tv_sec += ms / 1000 + ts->tv_nsec / 1000000000L;
    ts->tv_nsec %= 1000000000L;
}

/* Test-only: while the file VSCHED_TEST_RECORDER_HOLD names exists, the
 * recorder records nothing (tests/rel_publish.sh kills a run between the
 * publication of its outputs and their records). Unset, it costs one
 * getenv per batch. */
static void vr_test_hold(void)
{
    const char *f = getenv("VSCHED_TEST_RECORDER_HOLD");
    struct timespec tick = {0, 10 * 1000000L};
    while (f != NULL && f[0] != '\0' && access(f, F_OK) == 0)
        nanosleep(&tick, NULL);
}

static void *vr_recorder_main(void *arg)
{
    vr_recorder *r = arg;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (r->n_queue == 0 && !r->stop)
            pthread_cond_wait(&r->wake, &r->lock);
        if (r->n_queue == 0 && r->stop)
            break;
        if (!r->stop) { /* a quiet moment gathers more into the batch */
            struct timespec ts;
            vr_deadline(&ts, VR_RECORDER_BATCH_MS);
            while (!r->stop &&
                   pthread_cond_timedwait(&r->wake, &r->lock, &ts) == 0)
                ;
        }
        vr_event *batch = r->queue;
        size_t n = r->n_queue;
        r->queue = NULL;
        r->n_queue = r->cap_queue = 0;
        pthread_mutex_unlock(&r->lock);
        vr_test_hold();
        vr_record_batch(r, batch, n);
        free(batch);
        pthread_mutex_lock(&r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

static void vr_push(vr_recorder *r, vr_event e)
{
    pthread_mutex_lock(&r->lock);
    if (r->n_queue == r->cap_queue) {
        r->cap_queue = r->cap_queue ? 2 * r->cap_queue : 64;
        r->queue = vr_xrealloc(r->queue, r->cap_queue * sizeof *r->queue);
    }
    r->queue[r->n_queue++] = e;
    if (r->n_queue == 1)
        pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->lock);
}

/* Contract: see recorder.h. */
void vr_recorder_artifact(vr_recorder *r, const char *name,
                          const char *profile)
{
    vr_push(r, (vr_event){NULL, vr_xstrdup(name),
                          vr_xstrdup(profile != NULL ? profile : ""), 0});
}

/* Contract: see recorder.h. */
void vr_recorder_job(vr_recorder *r, const char *kind, const char *name,
                     const char *profile, uint64_t duration_ns)
{
    vr_push(r, (vr_event){vr_xstrdup(kind), vr_xstrdup(name),
                          vr_xstrdup(profile != NULL ? profile : ""),
                          duration_ns});
}

/* Contract: see recorder.h. */
int vr_recorder_start(vr_recorder **out, vr_state *state, vr_sources *src,
                      vr_bind *bind, vr_cache *cache)
{
    vr_recorder *r = vr_xcalloc(1, sizeof *r);
    r->state = state;
    r->src = src;
    r->bind = bind;
    r->cache = cache;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->wake, NULL);
    if (pthread_create(&r->thread, NULL, vr_recorder_main, r) != 0) {
        pthread_cond_destroy(&r->wake);
        pthread_mutex_destroy(&r->lock);
        free(r);
        *out = NULL;
        return VSCHED_ENOMEM;
    }
    *out = r;
    return VSCHED_OK;
}

/* Contract: see recorder.h. */
int vr_recorder_finish(vr_recorder *r, vr_recorder_counts *counts)
{
    if (r == NULL)
        return VSCHED_OK;
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->thread, NULL);
    if (counts != NULL)
        *counts = r->counts;
    int rc = r->failed ? VSCHED_EIO : VSCHED_OK;
    pthread_cond_destroy(&r->wake);
    pthread_mutex_destroy(&r->lock);
    free(r->queue);
    free(r);
    return rc;
}
