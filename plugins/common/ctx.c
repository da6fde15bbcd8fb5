/*
 * ctx.c -- what the executor plugins say and hand back through the
 * host's context: formatted diagnostics, host-allocated copies, an
 * Artifact's outputs cleared, a snapshot's names as deps and blockers.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vp.h"

/* Contract in vp.h. */
char *vp_host_strdup(const vsched_ctx *ctx, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ctx->alloc(ctx, n);
    return d != NULL ? memcpy(d, s, n) : NULL;
}

/* Contract in vp.h. */
void vp_diagf(const vsched_ctx *ctx, vsched_severity sev, const char *file,
              unsigned line, const char *fmt, ...)
{
    char buf[PATH_MAX + 1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ctx->diag(ctx, sev, file, line, buf);
}

/* Contract in vp.h. */
char *vp_strfmt(const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&s, fmt, ap);
    va_end(ap);
    return rc >= 0 ? s : NULL; /* vasprintf leaves s undefined on failure */
}

/* Contract in vp.h. */
void vp_out_clear(const vsched_ctx *ctx, vsched_artifact_out *out)
{
    if (out->path != NULL)
        ctx->free(ctx, out->path);
    if (out->tmp_path != NULL)
        ctx->free(ctx, out->tmp_path);
    for (size_t i = 0; out->deps != NULL && i < out->n_deps; i++)
        ctx->free(ctx, out->deps[i]);
    if (out->deps != NULL)
        ctx->free(ctx, out->deps);
    memset(out, 0, sizeof *out);
}

/* A ctx->alloc'ed copy of names[0..n) with a NULL after them, or NULL. */
static char **host_strv(const vsched_ctx *ctx, char *const *names, size_t n)
{
    char **v = ctx->alloc(ctx, (n + 1) * sizeof(char *));
    for (size_t i = 0; v != NULL && i < n; i++) {
        if ((v[i] = vp_host_strdup(ctx, names[i])) == NULL) {
            while (i > 0)
                ctx->free(ctx, v[--i]);
            ctx->free(ctx, v);
            v = NULL;
        }
    }
    return v;
}

/* Contract in vp.h. */
int vp_deps_out(const vsched_ctx *ctx, char *const *names, size_t n,
                vsched_deps_out *out)
{
    memset(out, 0, sizeof *out);
    char **deps = host_strv(ctx, names, n);
    char **blockers = deps != NULL ? host_strv(ctx, names, n) : NULL;
    if (blockers == NULL) {
        for (size_t i = 0; deps != NULL && i < n; i++)
            ctx->free(ctx, deps[i]);
        if (deps != NULL)
            ctx->free(ctx, deps);
        return VSCHED_ENOMEM;
    }
    *out = (vsched_deps_out){deps, n, blockers, n};
    return VSCHED_OK;
}
