/*
 * ctx -- the test context of vsched-plugin-test: the output lines, the
 * checking allocator behind ctx->alloc, and the other vsched_ctx
 * callbacks; see plugin_test.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsched/vsched.h>

#include "common/util.h"
#include "plugin_test/plugin_test.h"

/* Contract of the output lines: see plugin_test.h. */
void pt_say(const pt_run *r, const char *fmt, ...)
{
    va_list ap;
    printf("%s: ", r->current != NULL ? r->current : "-");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

void pt_violation(pt_run *r, const char *fmt, ...)
{
    va_list ap;
    printf("%s: contract: ", r->current != NULL ? r->current : "-");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    r->violations++;
}

void pt_warning(pt_run *r, const char *fmt, ...)
{
    va_list ap;
    printf("%s: warning: ", r->current != NULL ? r->current : "-");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    r->warnings++;
}

int pt_outcome(pt_run *r, const char *op, int rc, const char *detail)
{
    if (rc == VSCHED_OK) {
        pt_say(r, "%s: ok%s%s", op, detail != NULL ? " " : "",
               detail != NULL ? detail : "");
        return 0;
    }
    if (rc > 0 || strcmp(vsched_errname(rc), "VSCHED_E?") == 0) {
        pt_violation(r,
                     "%s returned %d, which is neither 0 nor a "
                     "VSCHED_E* status",
                     op, rc);
        rc = VSCHED_EERR;
    }
    pt_say(r, "%s: failed %s (%s)", op, vsched_errname(rc),
           vsched_strerror(rc));
    r->failed_ops++;
    return rc;
}

/* The test allocator: the run keeps the set of blocks ctx->alloc handed
 * out and not yet freed (and a ring of recently freed ones), so a buffer
 * the host receives can be checked to come from ctx->alloc without ever
 * reading memory outside it (the check is sanitizer-clean), and a block
 * still live at the end is a leak of host memory (PT_DEAD_RING). */
/* Index of p in r->live_v, or -1. */
static long pt_live_find(const pt_run *r, const void *p)
{
    for (size_t i = r->live; i-- > 0;)
        if (r->live_v[i] == p)
            return (long)i;
    return -1;
}

static void pt_live_add(pt_run *r, void *p)
{
    if (r->live == r->live_cap) {
        r->live_cap = r->live_cap ? 2 * r->live_cap : 64;
        r->live_v = vr_xrealloc(r->live_v, r->live_cap * sizeof *r->live_v);
    }
    r->live_v[r->live++] = p;
    for (size_t i = 0; i < PT_DEAD_RING; i++) /* an address reused */
        if (r->dead_v[i] == p)
            r->dead_v[i] = NULL;
}

static void pt_live_remove(pt_run *r, size_t i)
{
    r->dead_v[r->dead_next++ % PT_DEAD_RING] = r->live_v[i];
    r->live_v[i] = r->live_v[--r->live];
}

/* Index of p when it is a live ctx->alloc block. Otherwise a violation
 * naming `what`, and -1 for a block freed already (it must not be freed
 * again) or -2 for a foreign pointer (which the host would free(): so does
 * the caller, as the host's allocator is malloc). */
static long pt_check_block(pt_run *r, const void *p, const char *what)
{
    long i = pt_live_find(r, p);
    if (i >= 0)
        return i;
    int dead = 0;
    for (size_t k = 0; k < PT_DEAD_RING && !dead; k++)
        dead = r->dead_v[k] == p;
    if (dead)
        pt_violation(r, "%s was already freed", what);
    else
        pt_violation(r, "%s was not allocated with ctx->alloc", what);
    return dead ? -1 : -2;
}

static void *pt_ctx_alloc(const vsched_ctx *ctx, size_t n)
{
    pt_run *r = ctx->host;
    void *p = malloc(n != 0 ? n : 1);
    if (p != NULL)
        pt_live_add(r, p);
    return p;
}

static void pt_ctx_free(const vsched_ctx *ctx, void *p)
{
    pt_run *r = ctx->host;
    if (p == NULL)
        return;
    long i = pt_check_block(r, p, "a pointer given to ctx->free");
    if (i >= 0)
        pt_live_remove(r, (size_t)i);
    if (i != -1)
        free(p);
}

static void *pt_ctx_realloc(const vsched_ctx *ctx, void *p, size_t n)
{
    pt_run *r = ctx->host;
    if (p == NULL)
        return pt_ctx_alloc(ctx, n);
    long i = pt_check_block(r, p, "a pointer given to ctx->realloc");
    if (i < 0)
        return NULL;
    void *np = realloc(p, n != 0 ? n : 1);
    if (np == NULL)
        return NULL;
    r->live_v[i] = np;
    return np;
}

/* Contract: see plugin_test.h. */
void pt_release(pt_run *r, void *p, const char *what)
{
    if (p == NULL)
        return;
    long i = pt_check_block(r, p, what);
    if (i >= 0)
        pt_live_remove(r, (size_t)i);
    if (i != -1)
        free(p);
}

static int pt_ctx_is_cancelled(const vsched_ctx *ctx)
{
    const pt_run *r = ctx->host;
    return r->opts->cancelled;
}

static const char *pt_severity(vsched_severity sev)
{
    switch (sev) {
    case VSCHED_SEV_NOTE: return "note";
    case VSCHED_SEV_WARNING: return "warning";
    case VSCHED_SEV_ERROR: return "error";
    }
    return "?";
}

/* "NAME: diag: SEVERITY FILE:LINE: MESSAGE", continuation lines indented. */
static void pt_ctx_diag(const vsched_ctx *ctx, vsched_severity sev,
                        const char *file, unsigned line, const char *message)
{
    pt_run *r = ctx->host;
    if (message == NULL) {
        pt_violation(r, "diag() called with a NULL message");
        return;
    }
    if (r->quiet_diags)
        return;
    printf("%s: diag: %s ", r->current != NULL ? r->current : "-",
           pt_severity(sev));
    if (file != NULL && line != 0)
        printf("%s:%u: ", file, line);
    else if (file != NULL)
        printf("%s: ", file);
    for (const char *p = message; *p != '\0'; p++) {
        putchar(*p);
        if (*p == '\n' && p[1] != '\0')
            fputs("    ", stdout);
    }
    if (message[0] == '\0' || message[strlen(message) - 1] != '\n')
        putchar('\n');
}

/* Contract: see plugin_test.h. */
void pt_ctx_init(pt_run *r)
{
    r->dead_v = vr_xcalloc(PT_DEAD_RING, sizeof *r->dead_v);
    r->ctx = (vsched_ctx){
        .size = sizeof(vsched_ctx),
        .is_cancelled = pt_ctx_is_cancelled,
        .diag = pt_ctx_diag,
        .alloc = pt_ctx_alloc,
        .realloc = pt_ctx_realloc,
        .free = pt_ctx_free,
        .host = r,
    };
}

/* Contract: see plugin_test.h. */
void pt_ctx_fini(pt_run *r)
{
    for (size_t i = 0; i < r->live; i++)
        free(r->live_v[i]);
    free(r->live_v);
    free(r->dead_v);
}
