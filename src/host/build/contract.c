/*
 * contract -- what an executor returns, checked; see contract.h.
 */
#include <stdio.h>
#include <string.h>

#include "build/contract.h"

/* Why names[0..n) breaks the contract (static text), or NULL. */
static const char *vr_names_problem(char **names, size_t n, size_t *at)
{
    if (n > 0 && names == NULL) {
        *at = 0;
        return "a count with a NULL array";
    }
    for (size_t i = 0; i < n; i++) {
        *at = i;
        if (names[i] == NULL)
            return "a NULL name";
        if (names[i][0] == '\0')
            return "an empty name";
        for (const unsigned char *p = (const unsigned char *)names[i]; *p; p++)
            if (*p < 0x20 || *p == 0x7f)
                return "a name holding a control character";
    }
    return NULL;
}

static void vr_free_names(const vsched_ctx *ctx, char **v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++)
        if (v[i] != NULL)
            ctx->free(ctx, v[i]);
    if (v != NULL)
        ctx->free(ctx, v);
}

static void vr_violation(const vsched_ctx *ctx, const char *name,
                         const char *plugin, const char *what)
{
    char msg[512];
    snprintf(msg, sizeof msg,
             "plugin '%s' broke the executor contract: %s (a bug in the "
             "plugin: report it to its authors)",
             plugin != NULL ? plugin : "executor", what);
    ctx->diag(ctx, VSCHED_SEV_ERROR, name, 0, msg);
}

/* Contract: see contract.h. */
int vr_contract_deps(const char *plugin, const vsched_ctx *ctx,
                     const char *name, vsched_deps_out *out)
{
    size_t at = 0;
    const char *list = "deps";
    const char *why = vr_names_problem(out->deps, out->n_deps, &at);
    if (why == NULL) {
        list = "blockers";
        why = vr_names_problem(out->blockers, out->n_blockers, &at);
    }
    if (why == NULL)
        return 0;
    char what[256];
    const char *shown = list[0] == 'd'
                            ? (out->deps ? out->deps[at] : NULL)
                            : (out->blockers ? out->blockers[at] : NULL);
    snprintf(what, sizeof what,
             "extract_deps returned %s in %s (#%zu of %zu%s%s%s)", why, list,
             at + 1, list[0] == 'd' ? out->n_deps : out->n_blockers,
             shown != NULL ? ": '" : "", shown != NULL ? shown : "",
             shown != NULL ? "'" : "");
    vr_violation(ctx, name, plugin, what);
    vr_free_names(ctx, out->deps, out->deps != NULL ? out->n_deps : 0);
    vr_free_names(ctx, out->blockers,
                  out->blockers != NULL ? out->n_blockers : 0);
    memset(out, 0, sizeof *out);
    return VSCHED_EINVAL;
}

/* Contract: see contract.h. */
int vr_contract_artifact(const char *plugin, const vsched_ctx *ctx,
                         const char *op, const char *name,
                         vsched_artifact_out *out)
{
    char what[256];
    size_t at = 0;
    const char *why = NULL;
    if (out->path == NULL && (out->bytes != NULL || out->tmp_path != NULL))
        why = "returned bytes or a temporary but no path";
    else if (out->bytes == NULL && out->len > 0 && out->tmp_path == NULL)
        why = "returned a length but no bytes";
    else if (out->path != NULL && out->path[0] != '/')
        why = "returned a relative path (outputs are absolute)";
    if (why != NULL) {
        snprintf(what, sizeof what, "%s %s", op, why);
    } else if ((why = vr_names_problem(out->deps, out->n_deps, &at)) != NULL) {
        snprintf(what, sizeof what, "%s returned %s in deps (#%zu of %zu)", op,
                 why, at + 1, out->n_deps);
        vr_free_names(ctx, out->deps, out->deps != NULL ? out->n_deps : 0);
        out->deps = NULL;
        out->n_deps = 0;
    } else {
        return 0;
    }
    vr_violation(ctx, name, plugin, what);
    return VSCHED_EINVAL;
}
