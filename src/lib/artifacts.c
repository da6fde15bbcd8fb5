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
#include <stdint.h>
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
    if (s == NULL || w == NULL || profile == NULL || (len > 0 && !data) ||
        len > SIZE_MAX - sizeof(vsched__commit))
        return VSCHED_EINVAL;
    vsched__commit *copy = malloc(sizeof *copy + len);
    if (copy == NULL)
        return VSCHED_ENOMEM;
    copy->generation = w->generation;
    copy->len = len;
    copy->next = NULL;
    if (len > 0)
        memcpy(copy->data, data, len);
    vsched__lock(s);
    vsched__file *f = witnessed(s, w);
    int rc = VSCHED_ESTALE;
    if (f != NULL && f->generation == w->generation) {
        vsched__file_extra *x = vsched__file_extra_make(f);
        if (x == NULL) {
            rc = VSCHED_ENOMEM;
        } else {
            copy->profile = vsched__intern(s, profile);
            /* Replaces the profile's commit, if any. */
            vsched__commit **at = &x->commits;
            while (*at != NULL && (*at)->profile != copy->profile)
                at = &(*at)->next;
            if (*at != NULL) {
                copy->next = (*at)->next;
                free(*at);
            }
            *at = copy;
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
    vsched__file_extra *x = f != NULL ? vsched__file_extra_of(f) : NULL;
    for (vsched__commit **at = x != NULL ? &x->commits : NULL;
         at != NULL && *at != NULL;) {
        vsched__commit *c = *at;
        if (strcmp(c->profile, profile) == 0 &&
            c->generation <= w->generation) {
            *at = c->next;
            free(c);
            rc = VSCHED_OK;
        } else {
            at = &c->next;
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
    const vsched__file_extra *x = f != NULL ? vsched__file_extra_of(f) : NULL;
    for (const vsched__commit *c = x != NULL ? x->commits : NULL; c != NULL;
         c = c->next) {
        if (strcmp(c->profile, profile) != 0)
            continue;
        *data = malloc(c->len > 0 ? c->len : 1);
        if (*data == NULL) {
            rc = VSCHED_ENOMEM;
            break;
        }
        if (c->len > 0)
            memcpy(*data, c->data, c->len);
        if (len != NULL)
            *len = c->len;
        if (generation != NULL)
            *generation = c->generation;
        rc = VSCHED_OK;
    }
    vsched__unlock(s, NULL);
    return rc;
}
