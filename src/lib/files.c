/*
 * files -- the file-node table; see files.h.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "files.h"

/* Process-wide: incarnations are never reused, across schedulers too. */
static atomic_uint_fast64_t next_incarnation = 1;

void vsched__files_init(vsched__files *t)
{
    *t = (vsched__files){0};
}

vsched__snap *vsched__snap_new(void *p, const vsched_executor_binding *eb,
                               pthread_mutex_t *serial)
{
    vsched__snap *sn = malloc(sizeof *sn);
    if (sn == NULL)
        return NULL;
    sn->p = p;
    sn->eb = eb;
    sn->serial = serial;
    atomic_init(&sn->refs, 1);
    return sn;
}

vsched__snap *vsched__snap_ref(vsched__snap *sn)
{
    if (sn != NULL)
        atomic_fetch_add(&sn->refs, 1);
    return sn;
}

void vsched__snap_unref(vsched__snap *sn)
{
    if (sn == NULL || atomic_fetch_sub(&sn->refs, 1) != 1)
        return;
    if (sn->p != NULL) {
        if (sn->serial != NULL)
            pthread_mutex_lock(sn->serial);
        sn->eb->ops->snapshot_free(sn->eb->inst, sn->p);
        if (sn->serial != NULL)
            pthread_mutex_unlock(sn->serial);
    }
    free(sn);
}

void vsched__file_clear_source(vsched__file *f)
{
    vsched__snap_unref(f->snap);
    f->snap = NULL;
    free(f->deps);
    free(f->blockers);
    f->deps = f->blockers = NULL;
    f->n_deps = f->n_blockers = 0;
    f->integrated = 0;
    f->content_hash = 0;
    f->analysis_hash = 0;
}

void vsched__file_free(vsched__file *f)
{
    vsched__file_clear_source(f);
    for (size_t i = 0; i < f->n_artifacts; i++) {
        free(f->artifacts[i].profile);
        free(f->artifacts[i].path);
        free(f->artifacts[i].data);
    }
    free(f->artifacts);
    free(f->content);
    free(f->name);
    free(f);
}

void vsched__files_fini(vsched__files *t)
{
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i] != NULL)
            vsched__file_free(t->slots[i]);
    free(t->slots);
    *t = (vsched__files){0};
}

static size_t slot_of(const vsched__files *t, const char *name)
{
    size_t mask = t->cap - 1;
    size_t i = (size_t)XXH3_64bits(name, strlen(name)) & mask;
    while (t->slots[i] != NULL && strcmp(t->slots[i]->name, name) != 0)
        i = (i + 1) & mask;
    return i;
}

vsched__file *vsched__files_find(const vsched__files *t, const char *name)
{
    if (t->cap == 0)
        return NULL;
    return t->slots[slot_of(t, name)];
}

static int grow(vsched__files *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    vsched__files nt = {.slots = calloc(cap, sizeof(vsched__file *)),
                        .cap = cap};
    if (nt.slots == NULL)
        return VSCHED_ENOMEM;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slots[i] != NULL)
            nt.slots[slot_of(&nt, t->slots[i]->name)] = t->slots[i];
    nt.n = t->n;
    free(t->slots);
    *t = nt;
    return VSCHED_OK;
}

vsched__file *vsched__files_ensure(vsched__files *t, const char *name,
                                   int *created)
{
    *created = 0;
    vsched__file *f = vsched__files_find(t, name);
    if (f != NULL)
        return f;
    if ((t->n + 1) * 4 > t->cap * 3 && grow(t) != VSCHED_OK)
        return NULL;
    f = calloc(1, sizeof *f);
    if (f == NULL || (f->name = strdup(name)) == NULL) {
        free(f);
        return NULL;
    }
    f->incarnation = atomic_fetch_add(&next_incarnation, 1);
    t->slots[slot_of(t, name)] = f;
    t->n++;
    *created = 1;
    return f;
}

void vsched__files_remove(vsched__files *t, vsched__file *f)
{
    if (t->cap == 0)
        return;
    size_t mask = t->cap - 1;
    size_t i = slot_of(t, f->name);
    if (t->slots[i] != f)
        return;
    /* Backward-shift deletion keeps every probe chain unbroken. */
    t->slots[i] = NULL;
    t->n--;
    for (size_t j = (i + 1) & mask; t->slots[j] != NULL; j = (j + 1) & mask) {
        vsched__file *g = t->slots[j];
        t->slots[j] = NULL;
        t->slots[slot_of(t, g->name)] = g;
    }
}

vsched__artifact_slot *vsched__file_artifact(vsched__file *f,
                                             const char *profile)
{
    for (size_t i = 0; i < f->n_artifacts; i++)
        if (strcmp(f->artifacts[i].profile, profile) == 0)
            return &f->artifacts[i];
    vsched__artifact_slot *a =
        realloc(f->artifacts, (f->n_artifacts + 1) * sizeof *a);
    if (a == NULL)
        return NULL;
    f->artifacts = a;
    vsched__artifact_slot *slot = &a[f->n_artifacts];
    *slot = (vsched__artifact_slot){.profile = strdup(profile)};
    if (slot->profile == NULL)
        return NULL;
    f->n_artifacts++;
    return slot;
}
