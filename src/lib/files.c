/*
 * files -- file node objects, facts, snapshots and the name table; see
 * files.h.
 */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "internal.h"
#include "pages.h"

/* Process-wide: incarnations are never reused, across schedulers too. */
static atomic_uint_fast64_t next_incarnation = 1;

/* ---- snapshots ---------------------------------------------------------------- */

vsched__snap *vsched__snap_new(void *p)
{
    vsched__facts *fa = calloc(1, sizeof *fa);
    if (fa == NULL)
        return NULL;
    fa->snapshot = p;
    atomic_init(&fa->snapshot_refs, 1);
    atomic_init(&fa->refs, 1); /* the snapshot's */
    return fa;
}

vsched__snap *vsched__snap_ref(vsched__snap *sn)
{
    if (sn != NULL)
        atomic_fetch_add_explicit(&sn->snapshot_refs, 1,
                                  memory_order_relaxed);
    return sn;
}

static void free_list(vsched *s, vsched__snap *list)
{
    const vsched_executor_binding *eb = &s->opts.executor;
    while (list != NULL) {
        vsched__snap *next = list->next_dead;
        if (list->snapshot != NULL)
            eb->ops->snapshot_free(eb->inst, list->snapshot);
        list->snapshot = NULL;
        vsched__facts_unref(list); /* the snapshot's reference */
        list = next;
    }
}

void vsched__executor_flush(vsched *s, int wait)
{
    while (atomic_load(&s->serial_pending) != NULL) {
        if (wait)
            pthread_mutex_lock(&s->serial_executor);
        else if (pthread_mutex_trylock(&s->serial_executor) != 0)
            return; /* its holder flushes after its call */
        free_list(s, atomic_exchange(&s->serial_pending, NULL));
        pthread_mutex_unlock(&s->serial_executor);
    }
}

void vsched__snaps_free(vsched *s, vsched__snap *list)
{
    if (list == NULL)
        return;
    if (s->opts.executor.thread_safe) {
        free_list(s, list);
        return;
    }
    /* A serialised executor may be busy with another file's work: the
     * frees go to whoever holds its lock next, never waited for here. */
    vsched__snap *tail = list;
    while (tail->next_dead != NULL)
        tail = tail->next_dead;
    vsched__snap *head = atomic_load(&s->serial_pending);
    do
        tail->next_dead = head;
    while (!atomic_compare_exchange_weak(&s->serial_pending, &head, list));
    vsched__executor_flush(s, 0);
}

void vsched__snap_unref(vsched *s, vsched__snap *sn)
{
    if (sn == NULL || atomic_fetch_sub_explicit(&sn->snapshot_refs, 1,
                                                memory_order_acq_rel) != 1)
        return;
    if (vsched__holds_lock(s)) {
        /* No plugin call under the scheduler lock: after the unlock. */
        sn->next_dead = s->dead_snaps;
        s->dead_snaps = sn;
        return;
    }
    sn->next_dead = NULL;
    vsched__snaps_free(s, sn);
}

/* ---- facts -------------------------------------------------------------------- */

/* The bytes of a facts record naming n files. */
static size_t facts_size(size_t n)
{
    return sizeof(vsched__facts) + (n + 1) * sizeof(char *) +
           n * sizeof(vsched__file *);
}

vsched__facts *vsched__facts_new(vsched__root_dir *dir, uint64_t content_hash,
                                 void *snapshot, const char *const *names,
                                 size_t n_deps, size_t n_blockers,
                                 uint64_t *hashes)
{
    size_t n = n_deps + n_blockers;
    if (n_deps > UINT32_MAX || n_blockers > UINT32_MAX)
        return NULL;
    /* From the directory the record holds (in huge pages at scale: the
     * heap's 4 KiB pages cost a fault each, a quarter of a million-file
     * run's faults). */
    vsched__facts *fa = vsched__root_block(dir, facts_size(n));
    if (fa == NULL)
        return NULL;
    fa->snapshot = snapshot;
    fa->next_dead = NULL;
    atomic_init(&fa->snapshot_refs, 1);
    atomic_init(&fa->refs, 2); /* the caller's and its snapshot's */
    fa->content_hash = content_hash;
    fa->n_deps = (uint32_t)n_deps; /* before the accessors: they count */
    fa->n_blockers = (uint32_t)n_blockers;
    vsched__file **files = vsched__facts_files(fa);
    const char **kept = vsched__facts_dep_names(fa);
    for (size_t i = 0; i < n; i++) {
        hashes[i] = vsched__name_hash(names[i], strlen(names[i]));
        files[i] = NULL;
    }
    kept[n] = NULL;
    if (vsched__root_names(dir, names, hashes, n, kept) != VSCHED_OK) {
        vsched__root_block_free(dir, fa, facts_size(n));
        return NULL;
    }
    fa->names = vsched__root_dir_hold(dir);
    return fa;
}

vsched__facts *vsched__facts_ref(vsched__facts *fa)
{
    if (fa != NULL)
        atomic_fetch_add_explicit(&fa->refs, 1, memory_order_relaxed);
    return fa;
}

void vsched__facts_unref(vsched__facts *fa)
{
    if (fa == NULL ||
        atomic_fetch_sub_explicit(&fa->refs, 1, memory_order_acq_rel) != 1)
        return;
    vsched__root_dir *d = fa->names;
    if (d == NULL) { /* a snapshot's record alone (vsched__snap_new) */
        free(fa);
        return;
    }
    vsched__root_block_free(d, fa, facts_size(fa->n_deps + fa->n_blockers));
    vsched__root_dir_release(d); /* may free the block's memory: last */
}

/* ---- file objects ------------------------------------------------------------- */

/* File objects per slab (carved from the pool's arena). */
#define FILE_SLAB 64

/* The free link of an object in a pool list. */
#define NEXT_FREE(f) ((f)->u.successor)

static vsched__file *pool_take(vsched__filepool *p)
{
    if (p->free == NULL)
        p->free =
            atomic_exchange_explicit(&p->returned, NULL, memory_order_acquire);
    if (p->free == NULL) {
        vsched__file *sl =
            vsched__arena_alloc(&p->slabs, FILE_SLAB * sizeof *sl);
        if (sl == NULL)
            return NULL;
        for (size_t i = FILE_SLAB; i-- > 0;) {
            NEXT_FREE(&sl[i]) = p->free;
            p->free = &sl[i];
        }
    }
    vsched__file *f = p->free;
    p->free = NEXT_FREE(f);
    return f;
}

/* Any thread, with or without the scheduler lock. */
static void pool_return(vsched__filepool *p, vsched__file *f)
{
    vsched__file *head =
        atomic_load_explicit(&p->returned, memory_order_relaxed);
    do
        NEXT_FREE(f) = head;
    while (!atomic_compare_exchange_weak_explicit(
        &p->returned, &head, f, memory_order_release, memory_order_relaxed));
}

void vsched__filepool_fini(vsched__filepool *p)
{
    vsched__arena_fini(&p->slabs);
    p->free = NULL;
    atomic_store(&p->returned, NULL);
}

vsched__file *vsched__file_new(vsched__filepool *p, const char *name)
{
    vsched__file *f = pool_take(p);
    if (f == NULL)
        return NULL;
    memset(f, 0, sizeof *f);
    f->name = name;
    atomic_init(&f->refs, 1);
    f->incarnation = atomic_fetch_add(&next_incarnation, 1);
    f->kind = "";
    return f;
}

/* ---- the dependents index --------------------------------------------------- */

/* An entry lives in the index's arena until the index goes, and is found
 * from its name's word in the MVCC directory (vsched__root_word), so a
 * blocker's entry costs no probe; its first DEP_INLINE dependents are kept
 * inline (most names have few), more in a heap array. */
#define DEP_INLINE 4
typedef struct vsched__depentry {
    vsched__filevec files; /* .v: inline_v, or the heap array */
    struct vsched__file *inline_v[DEP_INLINE];
} vsched__depentry;

static vsched__depentry *dep_find(const vsched__file *named)
{
    return *vsched__root_word(named->name);
}

static vsched__depentry *dep_ensure(vsched__dependents *d,
                                    const vsched__file *named)
{
    void **word = vsched__root_word(named->name);
    if (*word != NULL)
        return *word;
    vsched__depentry *e = vsched__arena_alloc(&d->arena, sizeof *e);
    if (e == NULL)
        abort(); /* an unindexed dependent would miss invalidations */
    e->files = (vsched__filevec){e->inline_v, 0, DEP_INLINE};
    d->n++;
    *word = e;
    return e;
}

const vsched__filevec *vsched__dependents_of(const vsched *s,
                                             const vsched__file *named)
{
    (void)s;
    const vsched__depentry *e = dep_find(named);
    return e != NULL ? &e->files : NULL;
}

static void dep_free(void *word)
{
    vsched__depentry *e = word;
    if (e->files.v != e->inline_v)
        free(e->files.v);
}

void vsched__dependents_fini(vsched__dependents *d, vsched__root_dir *names)
{
    /* Every entry hangs off its name's word, and only there. */
    if (d->n > 0)
        vsched__root_words_clear(names, dep_free);
    vsched__arena_fini(&d->arena);
    *d = (vsched__dependents){0};
}

static void filevec_remove(vsched__filevec *v, const vsched__file *f)
{
    for (uint32_t i = 0; i < v->n; i++)
        if (v->v[i] == f) {
            v->v[i] = v->v[--v->n];
            return;
        }
}

static void dep_push(vsched__depentry *e, vsched__file *f)
{
    vsched__filevec *v = &e->files;
    if (v->n == v->cap) {
        uint32_t cap = v->cap * 2;
        vsched__file **nv = v->v == e->inline_v
                                ? malloc(cap * sizeof *nv)
                                : realloc(v->v, cap * sizeof *nv);
        if (nv == NULL)
            abort(); /* an unindexed dependent would miss invalidations */
        if (v->v == e->inline_v)
            memcpy(nv, e->inline_v, sizeof e->inline_v);
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = f;
}

static void index_blockers(vsched *s, vsched__file *f, int add)
{
    for (size_t i = 0; i < vsched__file_n_blockers(f); i++) {
        vsched__file *b = vsched__file_blocker(f, i);
        if (add) {
            dep_push(dep_ensure(&s->dependents, b), f);
            continue;
        }
        vsched__depentry *e = dep_find(b);
        if (e != NULL)
            filevec_remove(&e->files, f);
    }
}

void vsched__file_clear_source(vsched *s, vsched__file *f)
{
    if (f->facts == NULL)
        return;
    index_blockers(s, f, 0);
    s->n_blockers -= f->facts->n_blockers;
    /* The file's reference on the snapshot; its own on the record keeps
     * the record readable below. */
    vsched__facts *fa = f->facts;
    vsched__snap_unref(s, fa);
    /* The deps and blockers: the references the object holds (the arrays
     * live in the facts record). */
    for (size_t i = 0; i < fa->n_deps + fa->n_blockers; i++)
        vsched__file_unref(s, vsched__facts_files(fa)[i]);
    vsched__facts_unref(fa);
    f->facts = NULL;
}

void vsched__file_set_source(vsched *s, vsched__file *f, vsched__facts *fa)
{
    vsched__file_clear_source(s, f);
    vsched__file **v = vsched__facts_files(fa);
    for (size_t i = 0; i < fa->n_deps + fa->n_blockers; i++)
        vsched__file_ref(v[i]);
    f->facts = fa;
    index_blockers(s, f, 1);
    s->n_blockers += fa->n_blockers;
}

void vsched__file_unref(vsched *s, vsched__file *f)
{
    if (atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) != 1)
        return;
    /* Out of the table and unreferenced: nothing indexes it any more
     * (its facts were dropped when it left the table). */
    if (f->retired)
        atomic_fetch_sub(&s->n_retired_files, 1);
    vsched__file_clear_source(s, f);
    vsched__slot *slots = vsched__file_slots(f);
    for (uint32_t i = 0; i < f->n_slots; i++)
        free(slots[i].path);
    if (f->n_slots > 1)
        free(slots);
    vsched__file *successor = vsched__file_successor(f);
    vsched__file_extra_free(f);
    pool_return(&s->file_pool, f);
    if (successor != NULL)
        vsched__file_unref(s, successor);
}

vsched__file_extra *vsched__file_extra_make(vsched__file *f)
{
    if (f->u.extra == NULL)
        f->u.extra = calloc(1, sizeof *f->u.extra);
    return f->u.extra;
}

int vsched__file_set_content(vsched__file *f, vsched__content *c)
{
    if (c == NULL && f->u.extra == NULL)
        return VSCHED_OK;
    vsched__file_extra *x = vsched__file_extra_make(f);
    if (x == NULL)
        return VSCHED_ENOMEM;
    free(x->content);
    x->content = c;
    return VSCHED_OK;
}

void vsched__file_extra_free(vsched__file *f)
{
    vsched__file_extra *x = vsched__file_extra_of(f);
    if (x == NULL)
        return;
    free(x->content);
    while (x->commits != NULL) {
        vsched__commit *c = x->commits;
        x->commits = c->next;
        free(c);
    }
    free(x);
    f->u.extra = NULL;
}

vsched__slot *vsched__file_find_slot(vsched__file *f, const char *profile)
{
    vsched__slot *slots = vsched__file_slots(f);
    for (uint32_t i = 0; i < f->n_slots; i++)
        if (slots[i].profile == profile)
            return &slots[i];
    return NULL;
}

vsched__slot *vsched__file_slot(vsched__file *f, const char *profile)
{
    vsched__slot *sl = vsched__file_find_slot(f, profile);
    if (sl != NULL)
        return sl;
    vsched__slot *v;
    if (f->n_slots == 0) {
        v = &f->sl.one; /* the first profile's slot lives in the object */
    } else if (f->n_slots == 1) {
        v = malloc(2 * sizeof *v);
        if (v == NULL)
            return NULL;
        v[0] = f->sl.one; /* before the word turns into the array's */
        f->sl.many = v;
    } else {
        v = realloc(f->sl.many, (f->n_slots + 1) * sizeof *v);
        if (v == NULL)
            return NULL;
        f->sl.many = v;
    }
    sl = &v[f->n_slots++];
    *sl = (vsched__slot){.profile = profile};
    return sl;
}

/* ---- the table ---------------------------------------------------------------- */

void vsched__files_init(vsched__files *t)
{
    *t = (vsched__files){.pool = t->pool};
}

uint64_t vsched__name_hash(const char *name, size_t len)
{
    return XXH3_64bits(name, len);
}

/* The table's word for the name `kept` (the directory's copy). */
static vsched__file **word_of(const char *kept)
{
    return (vsched__file **)vsched__root_file(kept);
}

vsched__file *vsched__files_find_h(const vsched__files *t, const char *name,
                                   size_t len, uint64_t hash)
{
    (void)len;
    if (t->n == 0)
        return NULL;
    const char *kept = vsched__root_find(t->pool->names, name, hash);
    return kept != NULL ? *word_of(kept) : NULL;
}

vsched__file *vsched__files_find_kept(const vsched__files *t,
                                     const char *kept)
{
    (void)t;
    return *word_of(kept);
}

vsched__file *vsched__files_find(const vsched__files *t, const char *name)
{
    size_t len = strlen(name);
    return vsched__files_find_h(t, name, len, vsched__name_hash(name, len));
}

vsched__file *vsched__files_ensure(vsched__files *t, const char *name,
                                   int *created)
{
    size_t len = strlen(name);
    return vsched__files_ensure_h(t, name, len, vsched__name_hash(name, len),
                                  created);
}

vsched__file *vsched__files_ensure_kept(vsched__files *t, const char *kept,
                                        int *created)
{
    vsched__file **w = word_of(kept);
    *created = 0;
    if (*w != NULL)
        return *w;
    vsched__file *f = vsched__file_new(t->pool, kept);
    if (f == NULL)
        return NULL;
    *w = f; /* the table's reference */
    t->n++;
    *created = 1;
    return f;
}

vsched__file *vsched__files_ensure_h(vsched__files *t, const char *name,
                                     size_t len, uint64_t hash, int *created)
{
    (void)len;
    *created = 0;
    const char *kept = vsched__root_name(t->pool->names, name, hash, t->bulk);
    return kept != NULL ? vsched__files_ensure_kept(t, kept, created) : NULL;
}

vsched__file **vsched__files_list(vsched__files *t, size_t *n, int take)
{
    vsched__file **v = malloc((t->n + 1) * sizeof *v);
    *n = 0;
    if (t->n == 0) /* also before the directory exists (vsched_create) */
        return v;
    if (v == NULL)
        abort();
    *n = vsched__root_files(t->pool->names, (void **)v, t->n, take);
    if (*n != t->n) /* a word set outside the table's count */
        abort();
    if (take)
        t->n = 0;
    return v;
}

void vsched__files_remove(vsched__files *t, vsched__file *f)
{
    vsched__file **w = word_of(f->name);
    if (*w != f)
        return;
    *w = NULL;
    t->n--;
}

void vsched__files_replace(vsched__files *t, vsched__file *old,
                           vsched__file *f)
{
    (void)t;
    vsched__file **w = word_of(old->name);
    if (*w == old)
        *w = f;
}

void vsched__files_fini(vsched *s, vsched__files *t)
{
    size_t n;
    vsched__file **v = vsched__files_list(t, &n, 1);
    for (size_t i = 0; i < n; i++) {
        vsched__file_clear_source(s, v[i]);
        vsched__file_unref(s, v[i]);
    }
    free(v);
    vsched__files_init(t);
}
