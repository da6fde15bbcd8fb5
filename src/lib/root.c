/*
 * root -- MVCC source directory and root leases; see root.h.
 */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "internal.h"
#include "names.h"
#include "pages.h"

/* One name's versions, oldest first: the first inline (a name most often
 * has one -- its content as integrated), more in a heap array. */
struct vsched__history {
    uint64_t hash;
    uint32_t n, cap; /* cap 1: the inline one */
    void *word;      /* the scheduler's (vsched__root_word) */
    void *file;      /* the scheduler's (vsched__root_file) */
    union {
        vsched__version one; /* cap == 1 */
        vsched__version *v;  /* cap > 1: a heap array */
    } at;
    char name[];
};

static vsched__version *versions(vsched__history *h)
{
    return h->cap == 1 ? &h->at.one : h->at.v;
}

static const vsched__version *versions_c(const vsched__history *h)
{
    return h->cap == 1 ? &h->at.one : h->at.v;
}

vsched__root_dir *vsched__root_dir_new(void)
{
    vsched__root_dir *d = calloc(1, sizeof *d);
    if (d == NULL)
        return NULL;
    pthread_mutex_init(&d->lock, NULL);
    atomic_init(&d->refs, 1);
    return d;
}

static void dir_free(vsched__root_dir *d)
{
    for (size_t i = 0; i < d->cap; i++)
        if (d->slots[i] != NULL && d->slots[i]->cap > 1)
            free(d->slots[i]->at.v);
    vsched__table_free(d->slots, d->cap);
    vsched__arena_fini(&d->arena);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

vsched__root_dir *vsched__root_dir_hold(vsched__root_dir *d)
{
    atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
    return d;
}

/* Drop a reference taken under root_dir.lock, releasing the lock first:
 * the last one frees d (whoever drops it saw every write made under the
 * lock before, through the acquire). */
static void dir_unref_locked(vsched__root_dir *d)
{
    pthread_mutex_unlock(&d->lock);
    if (atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) == 1)
        dir_free(d);
}

void vsched__root_dir_release(vsched__root_dir *d)
{
    if (d != NULL &&
        atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) == 1)
        dir_free(d);
}

static size_t slot_of(vsched__history *const *slots, size_t cap,
                      const char *name, uint64_t hash)
{
    return VSCHED__NAME_SLOT(vsched__history, slots, cap, name, hash);
}

static vsched__history *find(const vsched__root_dir *d, const char *name,
                             uint64_t hash)
{
    if (d->cap == 0)
        return NULL;
    return d->slots[slot_of(d->slots, d->cap, name, hash)];
}

static vsched__history *ensure(vsched__root_dir *d, const char *name,
                               uint64_t hash, size_t more)
{
    vsched__history *h = find(d, name, hash);
    if (h != NULL)
        return h;
    if ((d->n + 1) * 4 > d->cap * 3) {
        size_t cap = d->cap ? d->cap * 2 : 64;
        while ((d->n + 1 + more) * 4 > cap * 3 && cap < ((size_t)1 << 40))
            cap *= 2;
        vsched__history **ns = vsched__table_alloc(cap);
        if (ns == NULL)
            return NULL;
        for (size_t i = 0; i < d->cap; i++)
            if (d->slots[i] != NULL)
                ns[slot_of(ns, cap, d->slots[i]->name, d->slots[i]->hash)] =
                    d->slots[i];
        vsched__table_free(d->slots, d->cap);
        d->slots = ns;
        d->cap = cap;
    }
    size_t len = strlen(name);
    h = vsched__arena_alloc(&d->arena, sizeof *h + len + 1);
    if (h == NULL)
        return NULL;
    h->hash = hash;
    h->n = 0;
    h->cap = 1;
    h->word = NULL;
    h->file = NULL;
    memcpy(h->name, name, len + 1);
    d->slots[slot_of(d->slots, d->cap, name, hash)] = h;
    d->n++;
    return h;
}

void vsched__root_begin(vsched__root_dir *d)
{
    if (d->depth++ == 0) {
        /* Only publishers write `visible`, and they all hold the scheduler
         * lock: reading it here needs no directory lock. */
        d->open = d->visible + 1;
    }
}

/* The history whose name `kept` is (the directory's copy). */
static vsched__history *history_of(const char *kept)
{
    return (vsched__history *)(void *)(kept - offsetof(vsched__history, name));
}

void **vsched__root_word(const char *kept)
{
    return &history_of(kept)->word;
}

void **vsched__root_file(const char *kept)
{
    return &history_of(kept)->file;
}

const char *vsched__root_find(vsched__root_dir *d, const char *name,
                              uint64_t hash)
{
    pthread_mutex_lock(&d->lock);
    vsched__history *h = find(d, name, hash);
    pthread_mutex_unlock(&d->lock);
    return h != NULL ? h->name : NULL;
}

size_t vsched__root_files(vsched__root_dir *d, void **out, size_t cap,
                          int take)
{
    size_t n = 0;
    pthread_mutex_lock(&d->lock);
    for (size_t i = 0; i < d->cap; i++) {
        vsched__history *h = d->slots[i];
        if (h != NULL && h->file != NULL && n < cap) {
            out[n++] = h->file;
            if (take)
                h->file = NULL;
        }
    }
    pthread_mutex_unlock(&d->lock);
    return n;
}

/* Blocks per slab a class carves at once. */
#define BLOCK_SLAB 64

void *vsched__root_block(vsched__root_dir *d, size_t size)
{
    if (size == 0 || size > VSCHED__ROOT_BLOCK_CARVED)
        return malloc(size > 0 ? size : 1);
    size_t c = (size - 1) / 8, bytes = (c + 1) * 8;
    pthread_mutex_lock(&d->lock);
    void *p = d->blocks_free[c];
    if (p == NULL) {
        char *slab = vsched__arena_alloc(&d->arena, BLOCK_SLAB * bytes);
        if (slab != NULL) {
            for (size_t i = BLOCK_SLAB; i-- > 1;) {
                *(void **)(void *)(slab + i * bytes) = d->blocks_free[c];
                d->blocks_free[c] = slab + i * bytes;
            }
            p = slab;
        }
    } else {
        d->blocks_free[c] = *(void **)p;
    }
    pthread_mutex_unlock(&d->lock);
    return p;
}

void vsched__root_block_free(vsched__root_dir *d, void *p, size_t size)
{
    if (p == NULL)
        return;
    if (size == 0 || size > VSCHED__ROOT_BLOCK_CARVED) {
        free(p);
        return;
    }
    size_t c = (size - 1) / 8;
    pthread_mutex_lock(&d->lock);
    *(void **)p = d->blocks_free[c];
    d->blocks_free[c] = p;
    pthread_mutex_unlock(&d->lock);
}

uint64_t vsched__root_hash(const char *kept)
{
    return history_of(kept)->hash;
}

void vsched__root_words_clear(vsched__root_dir *d, void (*fn)(void *word))
{
    pthread_mutex_lock(&d->lock);
    for (size_t i = 0; i < d->cap; i++) {
        vsched__history *h = d->slots[i];
        if (h != NULL && h->word != NULL) {
            fn(h->word);
            h->word = NULL;
        }
    }
    pthread_mutex_unlock(&d->lock);
}

int vsched__root_put(vsched__root_dir *d, const char *kept,
                     vsched_source_state state, uint64_t incarnation,
                     uint64_t generation, uint64_t content_hash)
{
    /* Outside a publication the put is one of its own, made visible in
     * the same hold of the directory lock. */
    int opened = d->depth == 0;
    if (opened)
        d->open = d->visible + 1;
    vsched__version ver = {d->open, incarnation, generation, content_hash,
                           state};
    int rc = VSCHED_OK;
    pthread_mutex_lock(&d->lock);
    vsched__history *h = history_of(kept);
    if (h->n > 0 && versions(h)[h->n - 1].epoch == d->open) {
        /* Two changes of one name in one publication: the last wins. */
        versions(h)[h->n - 1] = ver;
    } else {
        if (h->n == h->cap) {
            uint32_t cap = h->cap == 1 ? 4 : h->cap * 2;
            vsched__version *v =
                cap < h->cap  ? NULL /* 2^31 versions of one name */
                : h->cap == 1 ? malloc(cap * sizeof *v)
                              : realloc(h->at.v, cap * sizeof *v);
            if (v == NULL) {
                rc = VSCHED_ENOMEM;
                goto out;
            }
            if (h->cap == 1)
                v[0] = h->at.one;
            h->at.v = v;
            h->cap = cap;
        }
        versions(h)[h->n++] = ver;
        d->n_versions++;
    }
out:
    if (opened)
        d->visible = d->open;
    pthread_mutex_unlock(&d->lock);
    return rc;
}

const char *vsched__root_name(vsched__root_dir *d, const char *name,
                              uint64_t hash, size_t more)
{
    pthread_mutex_lock(&d->lock);
    vsched__history *h = ensure(d, name, hash, more);
    pthread_mutex_unlock(&d->lock);
    return h != NULL ? h->name : NULL;
}

int vsched__root_names(vsched__root_dir *d, const char *const *names,
                       const uint64_t *hashes, size_t n, const char **kept)
{
    int rc = VSCHED_OK;
    pthread_mutex_lock(&d->lock);
    for (size_t i = 0; i < n && rc == VSCHED_OK; i++) {
        vsched__history *h = ensure(d, names[i], hashes[i], n - 1 - i);
        if (h == NULL)
            rc = VSCHED_ENOMEM;
        else
            kept[i] = h->name;
    }
    pthread_mutex_unlock(&d->lock);
    return rc;
}

void vsched__root_end(vsched__root_dir *d)
{
    if (--d->depth > 0)
        return;
    pthread_mutex_lock(&d->lock);
    d->visible = d->open;
    pthread_mutex_unlock(&d->lock);
}

void vsched__root_counts(vsched__root_dir *d, size_t *versions, size_t *roots)
{
    pthread_mutex_lock(&d->lock);
    *versions = d->n_versions;
    *roots = d->n_roots;
    pthread_mutex_unlock(&d->lock);
}

/* ---- public: leases ------------------------------------------------------ */

int vsched_capture_source_root(vsched *s, vsched_root **out)
{
    if (s == NULL || out == NULL)
        return VSCHED_EINVAL;
    vsched_root *r = calloc(1, sizeof *r);
    if (r == NULL)
        return VSCHED_ENOMEM;
    vsched__root_dir *d = s->root;
    pthread_mutex_lock(&d->lock);
    r->dir = d;
    r->epoch = d->visible;
    r->next = d->roots;
    if (d->roots != NULL)
        d->roots->prev = r;
    d->roots = r;
    d->n_roots++;
    atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&d->lock);
    *out = r;
    return VSCHED_OK;
}

uint64_t vsched_root_epoch(const vsched_root *r)
{
    return r->epoch;
}

int vsched_root_lookup(const vsched_root *r, const char *name,
                       vsched_source_info *out)
{
    if (r == NULL || name == NULL || out == NULL)
        return VSCHED_EINVAL;
    *out = (vsched_source_info){VSCHED_SOURCE_UNKNOWN, 0, 0, 0};
    vsched__root_dir *d = r->dir;
    uint64_t hash = XXH3_64bits(name, strlen(name));
    pthread_mutex_lock(&d->lock);
    const vsched__history *h = find(d, name, hash);
    for (size_t i = h != NULL ? h->n : 0; i-- > 0;) {
        const vsched__version *v = &versions_c(h)[i];
        if (v->epoch <= r->epoch) {
            *out = (vsched_source_info){v->state, v->incarnation,
                                        v->generation, v->content_hash};
            break;
        }
    }
    pthread_mutex_unlock(&d->lock);
    return VSCHED_OK;
}

void vsched_root_release(vsched_root *r)
{
    if (r == NULL)
        return;
    vsched__root_dir *d = r->dir;
    pthread_mutex_lock(&d->lock);
    if (r->prev != NULL)
        r->prev->next = r->next;
    else
        d->roots = r->next;
    if (r->next != NULL)
        r->next->prev = r->prev;
    d->n_roots--;
    free(r);
    dir_unref_locked(d);
}

size_t vsched_reclaim_source_versions(vsched *s)
{
    vsched__root_dir *d = s->root;
    size_t freed = 0;
    pthread_mutex_lock(&d->lock);
    uint64_t floor = d->visible;
    for (const vsched_root *r = d->roots; r != NULL; r = r->next)
        if (r->epoch < floor)
            floor = r->epoch;
    for (size_t i = 0; i < d->cap; i++) {
        vsched__history *h = d->slots[i];
        if (h == NULL)
            continue;
        /* The newest version at or below the floor is what the oldest
         * reader sees; everything before it is visible to no one. */
        vsched__version *v = versions(h);
        size_t keep = 0;
        for (size_t k = h->n; k-- > 0;)
            if (v[k].epoch <= floor) {
                keep = k;
                break;
            }
        if (keep > 0) {
            memmove(v, v + keep, (h->n - keep) * sizeof *v);
            h->n -= (uint32_t)keep;
            freed += keep;
        }
    }
    d->n_versions -= freed;
    pthread_mutex_unlock(&d->lock);
    return freed;
}

static const vsched__history *find_name(vsched__root_dir *d, const char *name)
{
    return find(d, name, XXH3_64bits(name, strlen(name)));
}

int vsched__test_published(vsched *s, const char *name, uint64_t incarnation,
                           uint64_t generation, uint64_t content_hash)
{
    vsched__root_dir *d = s->root;
    int found = 0;
    pthread_mutex_lock(&d->lock);
    const vsched__history *h = find_name(d, name);
    const vsched__version *v = h != NULL ? versions_c(h) : NULL;
    for (size_t i = 0; h != NULL && i < h->n && !found; i++)
        found = v[i].state == VSCHED_SOURCE_PRESENT &&
                v[i].incarnation == incarnation &&
                v[i].generation == generation &&
                v[i].content_hash == content_hash;
    pthread_mutex_unlock(&d->lock);
    return found;
}

size_t vsched__test_conflicts(vsched *s)
{
    vsched__root_dir *d = s->root;
    size_t conflicts = 0;
    pthread_mutex_lock(&d->lock);
    for (size_t i = 0; i < d->cap; i++) {
        const vsched__history *h = d->slots[i];
        const vsched__version *v = h != NULL ? versions_c(h) : NULL;
        for (size_t a = 0; h != NULL && a < h->n; a++)
            for (size_t b = a + 1; b < h->n; b++)
                conflicts += v[a].state == VSCHED_SOURCE_PRESENT &&
                             v[b].state == VSCHED_SOURCE_PRESENT &&
                             v[a].incarnation == v[b].incarnation &&
                             v[a].generation == v[b].generation;
    }
    pthread_mutex_unlock(&d->lock);
    return conflicts;
}
