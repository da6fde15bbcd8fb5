/*
 * sources -- the run's table of source files; see sources.h.
 *
 * Entries live in one growable array and are found through two open-
 * addressing indexes (by name, by row id); an entry's index never changes
 * and its strings never move, but the array may, so entries are touched
 * only under `lock`.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <vsched/plugin.h>
#include <xxhash.h>

#include "common/util.h"
#include "state/sources.h"

enum {
    CUR_UNKNOWN,
    CUR_OK,
    CUR_MISSING,
    CUR_ERROR
};

typedef struct vr_src {
    char *name;
    int64_t id;  /* sources row id, 0 when not written yet */
    int has_rec; /* the row as it was at open */
    uint64_t rec_hash;
    vr_stamp rec_st;
    int64_t rec_seen;
    int cur; /* CUR_*: the current hash, when checked */
    uint64_t cur_hash;
    vr_stamp cur_st;
    int64_t cur_seen;
    int cur_read;            /* cur_* came from reading the file */
    int loaded, load_has_st; /* what the loader gave this run */
    uint64_t load_hash;
    vr_stamp load_st;
    int64_t load_seen;
    int has_deps;
    char **deps, **blockers; /* this run's extract_deps */
    size_t n_deps, n_blockers;
    int written;      /* flushed this run */
    unsigned walk[2]; /* generation of the last walk that reached
                                 it: over blockers, over everything */
} vr_src;

struct vr_sources {
    char *root;
    /* lock: guards everything below; a leaf. Adaptive (it spins a little
     * before it sleeps): the up-to-date check takes it for every artifact
     * from each coordinator thread and holds it for a few lookups, shorter
     * than a sleeping waiter takes to wake. */
    pthread_mutex_t lock;
    vr_src *v;
    size_t n, cap;
    size_t *by_name, *by_id; /* slots hold index + 1; 0 is empty */
    size_t slots;            /* power of two, > 2 n */
    uint64_t hashed;
    unsigned walk_gen; /* generation of the current walk */
};

/* ---- indexes -------------------------------------------------------------- */

static size_t vr_slot_name(const vr_sources *s, const char *name)
{
    return (size_t)XXH3_64bits(name, strlen(name)) & (s->slots - 1);
}

static size_t vr_slot_id(const vr_sources *s, int64_t id)
{
    return (size_t)XXH3_64bits(&id, sizeof id) & (s->slots - 1);
}

static void vr_index_put_id(vr_sources *s, size_t i)
{
    size_t k = vr_slot_id(s, s->v[i].id);
    while (s->by_id[k] != 0)
        k = (k + 1) & (s->slots - 1);
    s->by_id[k] = i + 1;
}

static void vr_index_put(vr_sources *s, size_t i)
{
    size_t k = vr_slot_name(s, s->v[i].name);
    while (s->by_name[k] != 0)
        k = (k + 1) & (s->slots - 1);
    s->by_name[k] = i + 1;
    if (s->v[i].id != 0)
        vr_index_put_id(s, i);
}

static void vr_rehash(vr_sources *s)
{
    free(s->by_name);
    free(s->by_id);
    s->slots = 64;
    while (s->slots < 2 * s->n + 2)
        s->slots *= 2;
    s->by_name = vr_xcalloc(s->slots, sizeof *s->by_name);
    s->by_id = vr_xcalloc(s->slots, sizeof *s->by_id);
    for (size_t i = 0; i < s->n; i++)
        vr_index_put(s, i);
}

/* Index of `name`, or -1. Caller holds lock (or owns the table). */
static long vr_find(const vr_sources *s, const char *name)
{
    for (size_t k = vr_slot_name(s, name);; k = (k + 1) & (s->slots - 1)) {
        size_t e = s->by_name[k];
        if (e == 0)
            return -1;
        if (strcmp(s->v[e - 1].name, name) == 0)
            return (long)(e - 1);
    }
}

static long vr_find_id(const vr_sources *s, int64_t id)
{
    for (size_t k = vr_slot_id(s, id);; k = (k + 1) & (s->slots - 1)) {
        size_t e = s->by_id[k];
        if (e == 0)
            return -1;
        if (s->v[e - 1].id == id)
            return (long)(e - 1);
    }
}

/* Index of `name`, added when missing. Caller holds lock. */
static size_t vr_ensure(vr_sources *s, const char *name)
{
    long i = vr_find(s, name);
    if (i >= 0)
        return (size_t)i;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->v = vr_xrealloc(s->v, s->cap * sizeof *s->v);
    }
    memset(&s->v[s->n], 0, sizeof s->v[s->n]);
    s->v[s->n].name = vr_xstrdup(name);
    s->n++;
    if (2 * s->n + 2 > s->slots)
        vr_rehash(s);
    else
        vr_index_put(s, s->n - 1);
    return s->n - 1;
}

/* ---- life ------------------------------------------------------------------- */

/* Contract: see sources.h. */
vr_sources *vr_sources_new(const char *root, vr_snapshot *snap)
{
    vr_sources *s = vr_xcalloc(1, sizeof *s);
    s->root = root != NULL ? vr_xstrdup(root) : NULL;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&s->lock, &a);
    pthread_mutexattr_destroy(&a);
    s->cap = snap->n_src + 256;
    s->v = vr_xcalloc(s->cap, sizeof *s->v);
    for (size_t i = 0; i < snap->n_src; i++) {
        vr_src *e = &s->v[s->n++];
        e->name = snap->src[i].path;
        e->id = snap->src[i].id;
        e->has_rec = 1;
        e->rec_hash = snap->src[i].hash;
        e->rec_st = snap->src[i].st;
        e->rec_seen = snap->src[i].seen_ns;
        snap->src[i].path = NULL;
    }
    free(snap->src);
    snap->src = NULL;
    snap->n_src = 0;
    vr_rehash(s);
    return s;
}

static void vr_strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Contract: see sources.h. */
void vr_sources_free(vr_sources *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].name);
        vr_strv_free(s->v[i].deps, s->v[i].n_deps);
        vr_strv_free(s->v[i].blockers, s->v[i].n_blockers);
    }
    free(s->v);
    free(s->by_name);
    free(s->by_id);
    free(s->root);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* Contract: see sources.h. */
char *vr_sources_path(const vr_sources *s, const char *name)
{
    return s->root != NULL ? vr_path_join(s->root, name) : NULL;
}

/* Contract: see sources.h. The string lives as long as the table. */
const char *vr_sources_name(vr_sources *s, int64_t id)
{
    pthread_mutex_lock(&s->lock);
    long i = vr_find_id(s, id);
    const char *n = i >= 0 ? s->v[i].name : NULL;
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* ---- current hashes ----------------------------------------------------------- */

/* Check entry i (lock held on entry and on return; released around the
 * I/O). */
static int vr_check_locked(vr_sources *s, size_t i, uint64_t *hash)
{
    vr_src *e = &s->v[i];
    if (e->loaded) {
        *hash = e->load_hash;
        return VSCHED_OK;
    }
    if (e->cur == CUR_UNKNOWN) {
        int has_rec = e->has_rec;
        uint64_t rec_hash = e->rec_hash;
        vr_stamp rec_st = e->rec_st, st;
        int64_t rec_seen = e->rec_seen;
        char *path = vr_sources_path(s, e->name);
        pthread_mutex_unlock(&s->lock);
        int64_t seen = vr_wall_ns();
        int rc = path != NULL ? vr_stamp_of(path, &st) : VSCHED_ENOENT;
        int cur, read = 0;
        uint64_t h = 0;
        if (rc == VSCHED_OK && has_rec && vr_stamp_equal(&st, &rec_st) &&
            vr_stamp_trusted(&rec_st, rec_seen)) {
            h = rec_hash;
            cur = CUR_OK;
        } else if (rc == VSCHED_OK) {
            seen = vr_wall_ns();
            rc = vr_hash_file(path, &h, &st);
            read = rc == VSCHED_OK;
            cur = rc == VSCHED_OK       ? CUR_OK
                  : rc == VSCHED_ENOENT ? CUR_MISSING
                                        : CUR_ERROR;
        } else {
            cur = rc == VSCHED_ENOENT ? CUR_MISSING : CUR_ERROR;
        }
        free(path);
        pthread_mutex_lock(&s->lock);
        e = &s->v[i];
        if (e->cur == CUR_UNKNOWN && !e->loaded) {
            e->cur = cur;
            e->cur_hash = h;
            e->cur_st = st;
            e->cur_seen = seen;
            e->cur_read = read;
            s->hashed += (uint64_t)read;
        } else if (e->loaded) {
            *hash = e->load_hash;
            return VSCHED_OK;
        }
    }
    *hash = e->cur_hash;
    return e->cur == CUR_OK        ? VSCHED_OK
           : e->cur == CUR_MISSING ? VSCHED_ENOENT
                                   : VSCHED_EIO;
}

/* Contract: see sources.h. */
int vr_sources_current(vr_sources *s, const char *name, uint64_t *hash)
{
    pthread_mutex_lock(&s->lock);
    int rc = vr_check_locked(s, vr_ensure(s, name), hash);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Contract: see sources.h. */
int vr_sources_current_id(vr_sources *s, int64_t id, uint64_t *hash)
{
    pthread_mutex_lock(&s->lock);
    long i = vr_find_id(s, id);
    int rc = i >= 0 ? vr_check_locked(s, (size_t)i, hash) : VSCHED_ENOENT;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Contract: see sources.h. */
size_t vr_sources_first_changed(vr_sources *s, const vr_dep *deps, size_t n)
{
    size_t i = 0;
    pthread_mutex_lock(&s->lock);
    for (; i < n; i++) {
        uint64_t h = 0;
        long e = vr_find_id(s, deps[i].source);
        if (e < 0 || vr_check_locked(s, (size_t)e, &h) != VSCHED_OK ||
            h != deps[i].hash || h == VR_HASH_UNKNOWN)
            break;
    }
    pthread_mutex_unlock(&s->lock);
    return i;
}

/* ---- what the run loaded and found ----------------------------------------------- */

/* Contract: see sources.h. */
void vr_sources_loaded(vr_sources *s, const char *name, const vr_stamp *st,
                       int64_t seen_ns, uint64_t hash)
{
    pthread_mutex_lock(&s->lock);
    size_t i = vr_ensure(s, name); /* may move s->v: index it after */
    vr_src *e = &s->v[i];
    e->loaded = 1;
    e->load_hash = hash;
    e->load_has_st = st != NULL;
    if (st != NULL)
        e->load_st = *st;
    e->load_seen = seen_ns;
    e->written = 0;
    pthread_mutex_unlock(&s->lock);
}

/* Contract: see sources.h. */
int vr_sources_load_info(vr_sources *s, const char *name, uint64_t *hash,
                         vr_stamp *st, int *have_st)
{
    pthread_mutex_lock(&s->lock);
    long i = vr_find(s, name);
    int loaded = i >= 0 && s->v[i].loaded;
    if (loaded) {
        *hash = s->v[i].load_hash;
        *st = s->v[i].load_st;
        *have_st = s->v[i].load_has_st;
    }
    pthread_mutex_unlock(&s->lock);
    return loaded;
}

static char **vr_strv_dup(char *const *v, size_t n)
{
    char **d = vr_xcalloc(n + 1, sizeof *d);
    for (size_t i = 0; i < n; i++)
        d[i] = vr_xstrdup(v[i] != NULL ? v[i] : "");
    return d;
}

/* Contract: see sources.h. */
void vr_sources_set_deps(vr_sources *s, const char *name, char *const *deps,
                         size_t n_deps, char *const *blockers,
                         size_t n_blockers)
{
    char **d = vr_strv_dup(deps, deps != NULL ? n_deps : 0);
    char **b = vr_strv_dup(blockers, blockers != NULL ? n_blockers : 0);
    pthread_mutex_lock(&s->lock);
    for (size_t k = 0; deps != NULL && k < n_deps; k++)
        vr_ensure(s, d[k]); /* every dep is an entry the walk can reach */
    for (size_t k = 0; blockers != NULL && k < n_blockers; k++)
        vr_ensure(s, b[k]);
    size_t i = vr_ensure(s, name); /* may move s->v: index it after */
    vr_src *e = &s->v[i];
    vr_strv_free(e->deps, e->n_deps);
    vr_strv_free(e->blockers, e->n_blockers);
    e->deps = d;
    e->n_deps = deps != NULL ? n_deps : 0;
    e->blockers = b;
    e->n_blockers = blockers != NULL ? n_blockers : 0;
    e->has_deps = 1;
    pthread_mutex_unlock(&s->lock);
}

/* Breadth-first from `start` over blockers (pass 0) or over deps and
 * blockers (pass 1), marking each entry reached with the walk's
 * generation; the order of the second walk goes to *order. Caller holds
 * lock. */
static size_t vr_walk(vr_sources *s, size_t start, int pass, size_t **order)
{
    size_t head = 0, tail = 0, cap = 64;
    size_t *q = vr_xmalloc(cap * sizeof *q);
    unsigned gen = s->walk_gen;
    q[tail++] = start;
    s->v[start].walk[pass] = gen;
    while (head < tail) {
        size_t cur = q[head++];
        for (int list = pass == 0 ? 1 : 0; list < 2; list++) {
            char **v = list == 0 ? s->v[cur].deps : s->v[cur].blockers;
            size_t n = list == 0 ? s->v[cur].n_deps : s->v[cur].n_blockers;
            for (size_t k = 0; k < n; k++) {
                long j = vr_find(s, v[k]);
                if (j < 0 || s->v[j].walk[pass] == gen)
                    continue;
                s->v[j].walk[pass] = gen;
                if (tail == cap)
                    q = vr_xrealloc(q, (cap *= 2) * sizeof *q);
                q[tail++] = (size_t)j;
            }
        }
    }
    if (order != NULL)
        *order = q;
    else
        free(q);
    return tail;
}

/* Contract: see sources.h. Dependencies never seen by the run (a missing
 * header) were still made entries by vr_sources_set_deps, so they are
 * reached and recorded (as missing, they make the dependent rebuild). */
size_t vr_sources_reach(vr_sources *s, const char *name, vr_reach **out)
{
    pthread_mutex_lock(&s->lock);
    size_t start = vr_ensure(s, name), *order = NULL;
    if (++s->walk_gen == 0) { /* wrapped: forget every old mark */
        for (size_t i = 0; i < s->n; i++)
            s->v[i].walk[0] = s->v[i].walk[1] = 0;
        s->walk_gen = 1;
    }
    vr_walk(s, start, 0, NULL);
    size_t n = vr_walk(s, start, 1, &order);
    vr_reach *r = vr_xcalloc(n + 1, sizeof *r);
    for (size_t i = 0; i < n; i++)
        r[i] = (vr_reach){s->v[order[i]].name,
                          s->v[order[i]].walk[0] == s->walk_gen};
    pthread_mutex_unlock(&s->lock);
    free(order);
    *out = r;
    return n;
}

/* ---- writing back ------------------------------------------------------------------- */

/* What entry e would be written with: 1 with the fields set, 0 when it
 * has nothing new for the database. Caller holds lock. */
static int vr_to_write(const vr_src *e, const vr_stamp **stamp, uint64_t *hash,
                       int64_t *seen)
{
    *stamp = NULL;
    if (e->loaded && e->load_has_st) {
        *stamp = &e->load_st;
        *hash = e->load_hash;
        *seen = e->load_seen;
    } else if (!e->loaded && e->cur == CUR_OK && e->cur_read) {
        *stamp = &e->cur_st;
        *hash = e->cur_hash;
        *seen = e->cur_seen;
    }
    if (*stamp == NULL || e->written)
        return 0;
    return !(e->has_rec && e->id != 0 && e->rec_hash == *hash &&
             vr_stamp_equal(&e->rec_st, *stamp) && e->rec_seen == *seen);
}

/* Contract: see sources.h. */
size_t vr_sources_pending(vr_sources *s)
{
    size_t n = 0;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n; i++) {
        const vr_stamp *stamp;
        uint64_t hash;
        int64_t seen;
        n += (size_t)vr_to_write(&s->v[i], &stamp, &hash, &seen);
    }
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* Write entry i when it has something new (caller holds lock). */
static int vr_write_locked(vr_sources *s, vr_state *st, size_t i)
{
    vr_src *e = &s->v[i];
    const vr_stamp *stamp = NULL;
    uint64_t hash = 0;
    int64_t seen = 0;
    if (!vr_to_write(e, &stamp, &hash, &seen))
        return VSCHED_OK;
    int64_t old = e->id, id = 0;
    int rc = vr_state_put_source(st, e->name, hash, stamp, seen, &id);
    if (rc != VSCHED_OK)
        return rc;
    e->written = 1;
    e->has_rec = 1;
    e->rec_hash = hash;
    e->rec_st = *stamp;
    e->rec_seen = seen;
    if (old == 0) {
        e->id = id;
        vr_index_put_id(s, i); /* the id index learns it */
    }
    return VSCHED_OK;
}

/* Contract: see sources.h. */
int vr_sources_write(vr_sources *s, vr_state *st, const char *name,
                     int64_t *id)
{
    pthread_mutex_lock(&s->lock);
    size_t i = vr_ensure(s, name);
    int rc = vr_write_locked(s, st, i);
    *id = s->v[i].id;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Contract: see sources.h. Runs on the one thread that writes the state;
 * the lock is held throughout (the puts are in-memory work of SQLite's
 * within the open transaction). */
int vr_sources_flush(vr_sources *s, vr_state *st)
{
    int rc = VSCHED_OK;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n && rc == VSCHED_OK; i++)
        rc = vr_write_locked(s, st, i);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Contract: see sources.h. */
uint64_t vr_sources_hashed(vr_sources *s)
{
    pthread_mutex_lock(&s->lock);
    uint64_t n = s->hashed;
    pthread_mutex_unlock(&s->lock);
    return n;
}
