/*
 * deps -- the --deps batch through the coordinator; see deps.h.
 */
#include <stdlib.h>
#include <string.h>

#include "build/deps.h"
#include "common/cause.h"
#include "common/escape.h"
#include "common/util.h"

/* One input's line, after the "NAME:" prefix. */
typedef struct deps_row {
    int status; /* 0 or a negative vsched_status */
    char *text; /* heap: " dep dep..." on success, the reason on failure */
} deps_row;

typedef struct deps_batch {
    vsched *s;
    char **names;
} deps_batch;

/* " a b c" from a Source result's deps, each name escaped (escape.h):
 * a name holding a space or a newline cannot fake another dependency or
 * another line. */
static char *join_deps(const vsched_result *r)
{
    size_t len = 1;
    for (size_t k = 0; k < r->n_deps; k++)
        len += vr_escape(NULL, 0, r->deps[k], strlen(r->deps[k])) + 1;
    char *text = vr_xmalloc(len);
    char *p = text;
    for (size_t k = 0; k < r->n_deps; k++) {
        *p++ = ' ';
        p += vr_escape(p, (size_t)(text + len - p), r->deps[k],
                       strlen(r->deps[k]));
    }
    *p = '\0';
    return text;
}

static int deps_item(void *ctx, size_t i, void *slot, char **msg)
{
    deps_batch *db = ctx;
    deps_row *row = slot;
    vsched_request req = {.name = db->names[i], .stage = VSCHED_STAGE_SOURCE};
    vsched_handle *h = NULL;
    int rc = vsched_submit_request(db->s, &req, &h);
    if (rc != VSCHED_OK)
        return rc;
    const vsched_result *r = NULL;
    rc = vsched_wait(h, &r);
    if (rc == VSCHED_OK)
        row->text = join_deps(r);
    else if (r != NULL && r->message != NULL)
        *msg = vr_failure_headline(r);
    vsched_handle_release(h);
    return rc;
}

static void deps_fail(void *ctx, size_t i, void *slot, int status,
                      const char *msg)
{
    (void)ctx;
    (void)i;
    deps_row *row = slot;
    row->status = status;
    free(row->text);
    row->text = vr_xstrdup(msg);
}

static const vr_coord_policy deps_policy = {
    .span_name = "deps",
    .slot_size = sizeof(deps_row),
    .setup = NULL,
    .item = deps_item,
    .fail = deps_fail,
};

int vr_deps_run(const vr_build *b)
{
    char **names = NULL, *err = NULL;
    size_t n = 0;
    if (vr_build_inputs(b, &names, &n, &err) != VSCHED_OK) {
        fprintf(b->err, "vsched-run: %s\n", err);
        free(err);
        return VR_EXIT_USAGE;
    }
    int status = VR_EXIT_OK;
    if (b->cli->dry_run) {
        for (size_t i = 0; i < n; i++) {
            vr_esc e = {0};
            fprintf(b->out, "source %s\n", vr_esc_name(&e, names[i]));
            vr_esc_done(&e);
        }
        vr_build_inputs_free(names, n);
        return status;
    }
    vr_session ss;
    status = VR_EXIT_USAGE;
    if (vr_session_open(&ss, b, NULL, NULL) == 0) {
        deps_batch db = {ss.sched, names};
        deps_row *rows = vr_xcalloc(n + 1, sizeof *rows);
        vr_coord_policy pol = deps_policy;
        pol.sched = ss.sched;
        int rc = vr_coord_batch(b->coord, &pol, &db, n, rows);
        for (size_t i = 0; i < n; i++) {
            const char *text = rows[i].text != NULL ? rows[i].text : "";
            vr_esc e = {0};
            if (rows[i].status == VSCHED_OK)
                fprintf(b->out, "%s:%s\n", vr_esc_name(&e, names[i]), text);
            else
                fprintf(b->out, "%s: error: %s\n", vr_esc_name(&e, names[i]),
                        text);
            vr_esc_done(&e);
            free(rows[i].text);
        }
        if (b->cli->stats)
            vr_session_print_stats(b->out, ss.sched);
        free(rows);
        status = rc == VSCHED_OK ? VR_EXIT_OK : VR_EXIT_FAILED;
    }
    vr_session_close(&ss);
    vr_build_inputs_free(names, n);
    return status;
}
