/*
 * loader -- the loader operations of vsched-plugin-test on one file:
 * realpath (and whether it is idempotent), exists, classify, load; see
 * plugin_test.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsched/vsched.h>

#include "common/util.h"
#include "plugin_test/plugin_test.h"

/* Contract: see plugin_test.h. */
char *pt_realpath(pt_run *r, const char *name, int print)
{
    char *canon = NULL;
    int rc = r->lops->realpath(r->linst, &r->ctx, name, &canon);
    if (!print) {
        char *copy = rc == 0 && canon != NULL ? vr_xstrdup(canon) : NULL;
        pt_release(r, canon, "realpath's *canonical");
        return copy;
    }
    if (rc == 0 && canon == NULL) {
        pt_violation(r, "realpath returned 0 without setting *canonical");
        rc = VSCHED_EERR;
    }
    if (pt_outcome(r, "realpath", rc, rc == 0 ? canon : NULL) != 0) {
        pt_release(r, canon, "realpath's *canonical"); /* host frees it */
        return NULL;
    }
    char *copy = vr_xstrdup(canon);
    pt_release(r, canon, "realpath's *canonical");
    char *again = pt_realpath(r, copy, 0);
    if (again == NULL || strcmp(again, copy) != 0)
        pt_warning(r, "realpath is not idempotent: realpath(\"%s\") is %s%s%s",
                   copy, again != NULL ? "\"" : "",
                   again != NULL ? again : "an error",
                   again != NULL ? "\"" : "");
    free(again);
    return copy;
}

/* Contract: see plugin_test.h. */
void pt_exists(pt_run *r, const char *name)
{
    int rc = r->lops->exists(r->linst, &r->ctx, name);
    if (rc == 0 || rc == 1) {
        pt_say(r, "exists: ok %d", rc);
        return;
    }
    pt_outcome(r, "exists", rc, NULL);
}

/* Contract: see plugin_test.h. */
int pt_classify(pt_run *r, const char *name, char *kind, size_t cap)
{
    memset(kind, 0x7f, cap);
    int rc = r->lops->classify(r->linst, &r->ctx, name, kind, cap);
    if (rc == 0 && memchr(kind, '\0', cap) == NULL) {
        pt_violation(r, "classify did not NUL-terminate within %zu bytes",
                     cap);
        rc = VSCHED_EERR;
    }
    if (rc != 0)
        kind[0] = '\0';
    return pt_outcome(r, "classify", rc, rc == 0 ? kind : NULL);
}

/* Contract: see plugin_test.h. */
int pt_load(pt_run *r, const char *name, char **bytes, size_t *len)
{
    char *b = NULL;
    size_t n = 0;
    int rc = r->lops->load(r->linst, &r->ctx, name, &b, &n);
    if (rc == 0 && b == NULL && n > 0) {
        pt_violation(r, "load returned %zu bytes but *bytes is NULL", n);
        rc = VSCHED_EERR;
    }
    char detail[64];
    snprintf(detail, sizeof detail, "%zu bytes", n);
    rc = pt_outcome(r, "load", rc, detail);
    *bytes = NULL;
    *len = 0;
    if (rc == 0) {
        *bytes = vr_xmalloc(n + 1);
        if (n > 0)
            memcpy(*bytes, b, n);
        (*bytes)[n] = '\0';
        *len = n;
    }
    pt_release(r, b, "load's *bytes");
    return rc;
}
