/*
 * batch -- dirty rows and links as one coordinator batch; see batch.h.
 */
#include <stdlib.h>
#include <string.h>

#include "build/batch.h"
#include "common/util.h"

typedef struct compile_batch {
    vsched *s;
    const vsched_request *reqs;
    const vsched_request *scan; /* the Analysis requests run first, or NULL */
    size_t n_scan;
    vsched_batch *batch;       /* released by the caller */
    const vsched_result **res; /* res[i] owned by batch */
    const vsched_dag *link;    /* the link jobs, or NULL */
    int (*interrupted)(void);  /* vr_build's, or NULL */
    uint64_t *link_ids;        /* ids of link->nodes */
    int link_rc;               /* its submission's status */
} compile_batch;

/* Discovery first: every dirty file's Analysis (its include scan, and the
 * Source and Analysis of every header it reaches) as one batch, waited
 * for before any compile is submitted. Its results are not kept: the
 * Artifact requests find those nodes done. A failed Analysis fails its
 * Artifact request the same way later. Returns the message of a
 * cancellation that ended the scan (SIGINT, -k; owned by the caller), or
 * NULL. */
static char *scan_first(const compile_batch *cb)
{
    vsched_batch *scan = NULL;
    if (vsched_submit_batch_atomic(cb->s, cb->scan, cb->n_scan, &scan) !=
        VSCHED_OK)
        return NULL; /* the Artifact batch then discovers as it goes */
    if (cb->interrupted != NULL && cb->interrupted())
        vsched_cancel(cb->s, "interrupted"); /* it came before the submit */
    const vsched_result **res = vr_xcalloc(cb->n_scan, sizeof *res);
    vsched_wait_batch(scan, res);
    char *cancelled = NULL;
    for (size_t i = 0; i < cb->n_scan && cancelled == NULL; i++)
        if (res[i]->status == VSCHED_ECANCELLED)
            cancelled = vr_xstrdup(res[i]->message != NULL ? res[i]->message
                                                           : "cancelled");
    free(res);
    vsched_batch_release(scan);
    return cancelled;
}

static int compile_setup(void *ctx, size_t n, char **msg)
{
    compile_batch *cb = ctx;
    char *cancelled = cb->scan != NULL && n > 0 ? scan_first(cb) : NULL;
    int rc = n > 0 ? vsched_submit_batch_atomic(cb->s, cb->reqs, n, &cb->batch)
                   : VSCHED_OK;
    if (rc != VSCHED_OK) {
        free(cancelled);
        cb->batch = NULL;
        *msg = vr_strfmt("cannot submit the batch: %s", vsched_strerror(rc));
        return rc;
    }
    if (cb->link != NULL) {
        /* The link jobs join the same graph while the objects build: one
         * DAG submission, gated on the batch's Artifact nodes. */
        vsched_admission adm = VSCHED_BACKPRESSURED;
        cb->link_rc =
            vsched_submit_dag(cb->s, cb->link, cb->link_ids, &adm, NULL);
        if (cb->link_rc == VSCHED_OK && adm != VSCHED_ADMITTED)
            cb->link_rc = VSCHED_EFULL;
    }
    /* A cancellation that ended the scan ends the Artifact batch and the
     * links too, and so does a stop asked for before they were submitted
     * (a signal while planning or scanning cancelled only what existed):
     * submitted before this cancel, they are cancelled when admitted. */
    if (cancelled != NULL)
        vsched_cancel(cb->s, cancelled);
    else if (cb->interrupted != NULL && cb->interrupted())
        vsched_cancel(cb->s, "interrupted");
    if (cb->batch != NULL)
        vsched_wait_batch(cb->batch, cb->res); /* every res[i] is set */
    free(cancelled);
    return VSCHED_OK;
}

static int compile_item(void *ctx, size_t i, void *slot, char **msg)
{
    compile_batch *cb = ctx;
    const vsched_result **row = slot;
    *row = cb->res[i];
    (void)msg; /* the result carries its own message */
    return (*row)->status;
}

static const vr_coord_policy compile_policy = {
    .span_name = "compile",
    .slot_size = sizeof(const vsched_result *),
    .setup = compile_setup,
    .item = compile_item,
    .fail = NULL, /* a failed row keeps its vsched_result (or NULL) */
};

/* The target jobs' sub-DAG: for each job that runs, one "KIND" job
 * holding the `link` resource, with the current objects and libraries as
 * explicit inputs, depending after success on the Artifact node of each
 * of its dirty objects (one spec node per row, shared by the jobs that
 * need it) and on the jobs of its libraries that run. A job waits for
 * nothing else, so the first link starts while other targets compile.
 * job_at[k] is the node index of link k's job, or -1. */
typedef struct link_dag {
    vsched_dag dag;
    vsched_node_spec *nodes;
    vsched_edge_spec *edges;
    uint64_t *ids;
    long *job_at;
} link_dag;

static const char *const link_resources[] = {"link"};

static int link_dag_build(link_dag *ld, const vr_plan *p)
{
    size_t nn = 0, ne = 0, edge_cap = 1;
    for (size_t k = 0; k < p->n_links; k++)
        edge_cap += p->links[k].n_rows + p->links[k].n_libs;
    ld->nodes = vr_xcalloc(p->n_rows + p->n_links + 1, sizeof *ld->nodes);
    ld->edges = vr_xcalloc(edge_cap, sizeof *ld->edges);
    ld->ids = vr_xcalloc(p->n_rows + p->n_links + 1, sizeof *ld->ids);
    ld->job_at = vr_xcalloc(p->n_links + 1, sizeof *ld->job_at);
    long *art_at = vr_xcalloc(p->n_rows + 1, sizeof *art_at);
    for (size_t i = 0; i < p->n_rows; i++)
        art_at[i] = -1;
    for (size_t k = 0; k < p->n_links; k++) {
        const vr_link *l = &p->links[k];
        ld->job_at[k] = -1;
        if (!l->run)
            continue;
        size_t first_edge = ne;
        for (size_t i = 0; i < l->n_rows; i++) {
            size_t ri = l->rows[i];
            const vr_row *r = &p->rows[ri];
            if (r->req < 0)
                continue;
            if (art_at[ri] < 0) {
                art_at[ri] = (long)nn;
                ld->nodes[nn++] = (vsched_node_spec){
                    .what = VSCHED_SPEC_ARTIFACT,
                    .name = r->input,
                    .profile = r->profile,
                    .parent = VSCHED_REF_NONE,
                };
            }
            ld->edges[ne++] =
                (vsched_edge_spec){VSCHED_REF_LOCAL((size_t)art_at[ri]),
                                   VSCHED_REF_NONE, VSCHED_GATE_AFTER_SUCCESS};
        }
        for (size_t i = 0; i < l->n_libs; i++)
            if (ld->job_at[l->libs[i]] >= 0)
                ld->edges[ne++] = (vsched_edge_spec){
                    VSCHED_REF_LOCAL((size_t)ld->job_at[l->libs[i]]),
                    VSCHED_REF_NONE, VSCHED_GATE_AFTER_SUCCESS};
        size_t job = nn++;
        for (size_t e = first_edge; e < ne; e++)
            ld->edges[e].to = VSCHED_REF_LOCAL(job);
        ld->nodes[job] = (vsched_node_spec){
            .what = VSCHED_SPEC_JOB,
            .kind = l->kind,
            .name = l->name,
            .profile = l->profile,
            .inputs = l->given,
            .n_inputs = l->n_given,
            .parent = VSCHED_REF_NONE,
            .resources = link_resources,
            .n_resources = 1,
        };
        ld->job_at[k] = (long)job;
    }
    free(art_at);
    ld->dag = (vsched_dag){ld->nodes, nn, ld->edges, ne, NULL, NULL, 1};
    return nn > 0;
}

static void link_dag_free(link_dag *ld)
{
    free(ld->nodes);
    free(ld->edges);
    free(ld->ids);
    free(ld->job_at);
}

/* The Analysis requests of scan_first when a duration is known for any
 * of the n Artifact requests (the order they then start in is the
 * durations', and it needs every file discovered), else NULL: with no
 * duration known, compiles start in request order and discovery runs
 * under them. */
static vsched_request *scan_requests(const vsched_request *reqs, size_t n)
{
    size_t known = 0;
    for (size_t i = 0; i < n; i++)
        known += reqs[i].cost_ns > 0;
    if (known == 0)
        return NULL;
    vsched_request *scan = vr_xcalloc(n, sizeof *scan);
    for (size_t i = 0; i < n; i++)
        scan[i] = (vsched_request){
            .name = reqs[i].name,
            .stage = VSCHED_STAGE_ANALYSIS,
            .flags = reqs[i].flags,
        };
    return scan;
}

/* Contract: see batch.h. */
int vr_batch_run(const vr_build *b, vr_session *ss, vr_plan *p,
                 vsched_batch **batch)
{
    size_t n = p->n_dirty;
    vsched_request *reqs = vr_xcalloc(n + 1, sizeof *reqs);
    for (size_t i = 0; i < p->n_rows; i++) {
        const vr_row *r = &p->rows[i];
        if (r->req < 0)
            continue;
        reqs[r->req] = (vsched_request){
            .name = r->input,
            .stage = VSCHED_STAGE_ARTIFACT,
            .profile = r->profile,
            .cost_ns = r->rec != NULL ? r->rec->duration_ns : 0,
            /* --watch invalidates files while they build: the request
             * then waits for the new generation instead of failing. */
            .flags = b->hooks != NULL ? VSCHED_REQ_FOLLOW_LATEST : 0,
        };
    }
    vsched_request *scan = scan_requests(reqs, n);
    compile_batch cb = {.s = ss->sched,
                        .reqs = reqs,
                        .scan = scan,
                        .n_scan = n,
                        .interrupted = b->interrupted};
    link_dag ld = {0};
    if (link_dag_build(&ld, p)) {
        cb.link = &ld.dag;
        cb.link_ids = ld.ids;
    }
    cb.res = vr_xcalloc(n + 1, sizeof *cb.res);
    const vsched_result **rows = vr_xcalloc(n + 1, sizeof *rows);
    vr_coord_policy pol = compile_policy;
    pol.sched = ss->sched;
    int rc = 0;
    if (n > 0) {
        vr_coord_batch(b->coord, &pol, &cb, n, rows);
        if (cb.batch == NULL) {
            fprintf(b->err, "vsched-run: cannot submit the batch\n");
            rc = -1;
        }
    } else {
        char *msg = NULL;
        compile_setup(&cb, 0, &msg); /* only links: no item to fan out */
        free(msg);
    }
    for (size_t i = 0; rc == 0 && i < p->n_rows; i++)
        if (p->rows[i].req >= 0)
            p->rows[i].res = rows[p->rows[i].req];
    for (size_t k = 0; k < p->n_links; k++) {
        if (ld.job_at[k] < 0)
            continue;
        if (rc != 0 || cb.link == NULL || cb.link_rc != VSCHED_OK) {
            p->links[k].info.state = VSCHED_NODE_FAILED;
            p->links[k].info.status =
                cb.link_rc != 0 ? cb.link_rc : VSCHED_EERR;
            continue;
        }
        vsched_node_wait(ss->sched, ld.ids[ld.job_at[k]], &p->links[k].info);
    }
    if (cb.link != NULL && cb.link_rc != VSCHED_OK)
        fprintf(b->err, "vsched-run: cannot submit the link: %s\n",
                vsched_strerror(cb.link_rc));
    link_dag_free(&ld);
    free(rows);
    free(cb.res);
    free(scan);
    free(reqs);
    *batch = cb.batch;
    return rc;
}
