/*
 * artifacts -- the witness-fenced artifact store.
 *
 * A witness (canonical name, node incarnation, generation) is minted only
 * with a source snapshot, by vsched_get_witnessed_source. A commit is
 * accepted only into the SAME live node object (incarnation) at the
 * witnessed generation: a witness from a removed, reset or re-homed object
 * is refused even when its successor serves the same content at the same
 * generation number, because the successor's incarnation differs.
 *
 * All under the scheduler lock. Writers of a slot's committed data:
 * vsched_commit_artifact and vsched_remove_artifact_not_newer_than, only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int vsched_get_witnessed_source(vsched *s, const char *name, vsched_witness *w,
                                uint64_t *content_hash)
{
    if (s == NULL || name == NULL || w == NULL ||
        strlen(name) >= sizeof w->name)
        return VSCHED_EINVAL;
    vsched__lock(s);
    vsched__file *f = vsched__files_find(&s->files, name);
    int rc = VSCHED_ENOENT;
    if (f != NULL && f->facts != NULL && !f->retired) {
        memset(w, 0, sizeof *w);
        w->incarnation = f->incarnation;
        w->generation = f->generation;
        snprintf(w->name, sizeof w->name, "%s", f->name);
        if (content_hash != NULL)
            *content_hash = f->facts->content_hash;
        rc = VSCHED_OK;
    }
    vsched__unlock(s, NULL);
    return rc;
}

/* The live object a witness names, at its generation; NULL otherwise. */
static vsched__file *witnessed(vsched *s, const vsched_witness *w)
{
    vsched__file *f = vsched__files_find(&s->files, w->name);
    if (f == NULL || f->retired || f->incarnation != w->incarnation)
        return NULL;
    return f;
}

int vsched_commit_artifact(vsched *s, const vsched_witness *w,
                           const char *profile, const void *data, size_t len)
{
    if (s == NULL || w == NULL || profile == NULL || (len > 0 && !data))
        return VSCHED_EINVAL;
    void *copy = malloc(len > 0 ? len : 1);
    if (copy == NULL)
        return VSCHED_ENOMEM;
    if (len > 0)
        memcpy(copy, data, len);
    vsched__lock(s);
    vsched__file *f = witnessed(s, w);
    int rc = VSCHED_ESTALE;
    if (f != NULL && f->generation == w->generation) {
        vsched__slot *a = vsched__file_slot(f, vsched__intern(s, profile));
        if (a == NULL) {
            rc = VSCHED_ENOMEM;
        } else {
            free(a->data);
            a->data = copy;
            a->len = len;
            a->committed = 1;
            a->committed_generation = w->generation;
            copy = NULL;
            rc = VSCHED_OK;
        }
    }
    vsched__unlock(s, NULL);
    free(copy);
    return rc;
}

int vsched_remove_artifact_not_newer_than(vsched *s, const vsched_witness *w,
                                          const char *profile)
{
    if (s == NULL || w == NULL || profile == NULL)
        return VSCHED_EINVAL;
    vsched__lock(s);
    vsched__file *f = witnessed(s, w);
    int rc = f == NULL ? VSCHED_ESTALE : VSCHED_ENOENT;
    for (size_t i = 0; f != NULL && i < f->n_slots; i++) {
        vsched__slot *a = &f->slots[i];
        if (strcmp(a->profile, profile) != 0 || !a->committed)
            continue;
        if (a->committed_generation <= w->generation) {
            free(a->data);
            a->data = NULL;
            a->len = 0;
            a->committed = 0;
            rc = VSCHED_OK;
        }
    }
    vsched__unlock(s, NULL);
    return rc;
}

int vsched_get_artifact(vsched *s, const char *name, const char *profile,
                        void **data, size_t *len, uint64_t *generation)
{
    if (s == NULL || name == NULL || profile == NULL || data == NULL)
        return VSCHED_EINVAL;
    *data = NULL;
    vsched__lock(s);
    vsched__file *f = vsched__files_find(&s->files, name);
    int rc = VSCHED_ENOENT;
    for (size_t i = 0; f != NULL && i < f->n_slots; i++) {
        vsched__slot *a = &f->slots[i];
        if (strcmp(a->profile, profile) != 0 || !a->committed)
            continue;
        *data = malloc(a->len > 0 ? a->len : 1);
        if (*data == NULL) {
            rc = VSCHED_ENOMEM;
            break;
        }
        if (a->len > 0)
            memcpy(*data, a->data, a->len);
        if (len != NULL)
            *len = a->len;
        if (generation != NULL)
            *generation = a->committed_generation;
        rc = VSCHED_OK;
    }
    vsched__unlock(s, NULL);
    return rc;
}
