/*
 * ctx -- the vsched_ctx handed to plugin operations run by the scheduler.
 *
 * One context per task run; ctx->host points at the task. Diagnostics are
 * appended to the task (only its own worker touches it while it runs), and
 * cancellation reads the node's flag and the scheduler's stop flag.
 *
 * ABI 1.1: ctx->load and ctx->realpath call the scheduler's loader for an
 * executor, under the serial-loader lock when the loader is not
 * thread-safe. Lock order: an executor call may hold serial_executor and
 * then take serial_loader here; nothing takes serial_executor while it
 * holds serial_loader (run_load and vsched__canonical_name call only the
 * loader), so the two never deadlock.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int ctx_is_cancelled(const vsched_ctx *ctx)
{
    vsched__task *t = ctx->host;
    return (t->node != NULL &&
            atomic_load_explicit(&t->node->cancel, memory_order_acquire)) ||
           atomic_load(&t->s->stopping);
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

static void ctx_diag(const vsched_ctx *ctx, vsched_severity sev,
                     const char *file, unsigned line, const char *message)
{
    vsched__task *t = ctx->host;
    vsched_diag *d = realloc(t->diags, (t->n_diags + 1) * sizeof *d);
    if (d == NULL)
        return; /* a diagnostic lost to exhaustion; the status still tells */
    t->diags = d;
    d[t->n_diags] = (vsched_diag){sev, dup_or_null(file), line,
                                  strdup(message != NULL ? message : "")};
    t->n_diags++;
}

static void *ctx_alloc(const vsched_ctx *ctx, size_t n)
{
    return malloc(n != 0 ? n : 1);
}

static void *ctx_realloc(const vsched_ctx *ctx, void *p, size_t n)
{
    return realloc(p, n != 0 ? n : 1);
}

static void ctx_free(const vsched_ctx *ctx, void *p)
{
    free(p);
}

static int ctx_load(const vsched_ctx *ctx, const char *name, char **bytes,
                    size_t *len)
{
    vsched__task *t = ctx->host;
    const vsched_loader_binding *lb = &t->s->opts.loader;
    if (name == NULL || bytes == NULL || len == NULL || name[0] == '\0')
        return VSCHED_EINVAL;
    *bytes = NULL;
    *len = 0;
    if (!lb->thread_safe)
        pthread_mutex_lock(&t->s->serial_loader);
    int rc = lb->ops->load(lb->inst, ctx, name, bytes, len);
    if (!lb->thread_safe)
        pthread_mutex_unlock(&t->s->serial_loader);
    if (rc == VSCHED_OK && *bytes == NULL && *len != 0)
        rc = VSCHED_EINVAL; /* NULL is for an empty source only */
    if (rc != VSCHED_OK) {
        free(*bytes);
        *bytes = NULL;
        *len = 0;
    }
    return rc < 0 || rc == VSCHED_OK ? rc : VSCHED_EERR;
}

static int ctx_realpath(const vsched_ctx *ctx, const char *name,
                        char **canonical)
{
    vsched__task *t = ctx->host;
    if (name == NULL || canonical == NULL || name[0] == '\0')
        return VSCHED_EINVAL;
    *canonical = NULL;
    return vsched__canonical_name(t->s, name, canonical);
}

void vsched__ctx_init(vsched_ctx *ctx, vsched__task *t)
{
    *ctx = (vsched_ctx){
        .size = sizeof *ctx,
        .is_cancelled = ctx_is_cancelled,
        .diag = ctx_diag,
        .alloc = ctx_alloc,
        .realloc = ctx_realloc,
        .free = ctx_free,
        .host = t,
        .load = ctx_load,
        .realpath = ctx_realpath,
    };
}

vsched_diag *vsched__diags_copy(const vsched_diag *d, size_t n)
{
    if (n == 0)
        return NULL;
    vsched_diag *c = calloc(n, sizeof *c);
    if (c == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        c[i] = (vsched_diag){d[i].severity, dup_or_null(d[i].file), d[i].line,
                             dup_or_null(d[i].message)};
    return c;
}

void vsched__diags_free(vsched_diag *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free((char *)d[i].file);
        free((char *)d[i].message);
    }
    free(d);
}

/* The loader's canonical name of `name`, computed on the caller's thread
 * under the serial-loader lock when the loader is not thread-safe. */
int vsched__canonical_name(vsched *s, const char *name, char **out)
{
    const vsched_loader_binding *lb = &s->opts.loader;
    vsched__task probe = {.s = s};
    vsched_ctx ctx;
    vsched__ctx_init(&ctx, &probe);
    char *canon = NULL;
    if (!lb->thread_safe)
        pthread_mutex_lock(&s->serial_loader);
    int rc = lb->ops->realpath(lb->inst, &ctx, name, &canon);
    if (!lb->thread_safe)
        pthread_mutex_unlock(&s->serial_loader);
    vsched__diags_free(probe.diags, probe.n_diags);
    if (rc == VSCHED_OK && canon == NULL)
        rc = VSCHED_EINVAL;
    if (rc != VSCHED_OK) {
        free(canon);
        return rc < 0 ? rc : VSCHED_EINVAL;
    }
    *out = canon;
    return VSCHED_OK;
}
