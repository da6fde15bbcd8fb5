/*
 * gate -- edges of jobs and their gates, the end of a job, cancellation
 * trees, and the task a job runs.
 *
 * When an upstream node ends, outcome.c hands each job downstream of it to
 * vsched__job_upstream_ended, which applies the gate of that edge:
 *
 *   AFTER_SUCCESS    up DONE: one fewer upstream; else the job is
 *                    cancelled, its message naming the first failure
 *   AFTER_ANY        one fewer upstream, whatever the outcome
 *   AFTER_ADMISSION  the edge is still there, so up was never admitted
 *                    (its first push onto a ready queue spends the edge,
 *                    vsched__job_admitted): cancelled
 *
 * and a cancelled job's own downstream hears of it the same way, so the
 * failure travels transitively with its first reason.
 *
 * Everything here runs with the scheduler lock held.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *vsched__node_name(const vsched__node *n)
{
    if (vsched__node_job(n) != NULL)
        return n->k.job->name;
    return n->file != NULL ? n->file->name : "?";
}

static vsched_gate gate_of(const vsched__node *d, const vsched__node *up)
{
    const vsched__job *j = vsched__node_job(d);
    for (size_t i = 0; i < j->n_deps; i++)
        if (j->deps[i].up == up)
            return j->deps[i].gate;
    return VSCHED_GATE_AFTER_SUCCESS;
}

/* Cancel d because up ended the wrong way for the gate; keep the first
 * failure's name and reason when up was itself cancelled by one. */
static void cancel_for(vsched *s, vsched__node *up, vsched__node *d,
                       vsched_gate gate, vsched__pass *p)
{
    char *msg = NULL, *root = NULL;
    const vsched__outcome *o = up->why;
    if (up->status == VSCHED_ECANCELLED && o != NULL &&
        o->failed_dep != NULL && o->message != NULL) {
        root = strdup(o->failed_dep);
        msg = strdup(o->message);
    } else {
        const char *name = vsched__node_name(up);
        const char *how = gate == VSCHED_GATE_AFTER_ADMISSION
                              ? "ended before it was admitted"
                          : up->state == VSCHED__CANCELLED ? "was cancelled"
                                                           : "failed";
        root = strdup(name);
        if (asprintf(&msg, "dependency '%s' %s: %s", name, how,
                     o != NULL && o->message != NULL
                         ? o->message
                         : vsched_strerror(up->status)) < 0)
            msg = NULL;
    }
    vsched__node_fail(s, d, VSCHED_ECANCELLED, msg, root, NULL, 0, -1, p);
}

/* Drop the admission-table entries of up -> d (or of up, d == NULL). */
static void admit_forget(vsched *s, vsched__node *up, vsched__node *d)
{
    vsched__dag *g = &s->dag;
    for (size_t i = 0; i < g->n_admit;) {
        vsched__admit_edge *e = &g->admit[i];
        if (e->up == up && (d == NULL || e->down == d)) {
            vsched__node_unref(s, e->up);
            vsched__node_unref(s, e->down);
            *e = g->admit[--g->n_admit];
            continue;
        }
        i++;
    }
}

/* Apply the gate of up -> d now that up is terminal. counted: the edge is
 * in d's deps_remaining. */
static void apply_end(vsched *s, vsched__node *up, vsched__node *d,
                      vsched_gate gate, int counted, vsched__pass *p)
{
    if (vsched__node_terminal(d))
        return;
    int ok =
        gate == VSCHED_GATE_AFTER_ANY ||
        (gate == VSCHED_GATE_AFTER_SUCCESS && up->state == VSCHED__DONE) ||
        (gate == VSCHED_GATE_AFTER_ADMISSION && up->admitted);
    if (!ok) {
        cancel_for(s, up, d, gate, p);
        return;
    }
    if (counted) {
        vsched__deps_add(d, -1);
        vsched__make_ready_if_free(s, d);
    }
}

void vsched__job_upstream_ended(vsched *s, vsched__node *up, vsched__node *d,
                                vsched__pass *p)
{
    vsched_gate g = gate_of(d, up);
    if (g == VSCHED_GATE_AFTER_ADMISSION)
        admit_forget(s, up, d);
    apply_end(s, up, d, g, 1, p);
}

void vsched__job_link(vsched *s, vsched__node *up, vsched__node *d,
                      vsched_gate gate, vsched__pass *p)
{
    if (vsched__node_terminal(d))
        return; /* cancelled at insertion: it waits for nothing */
    vsched__job *j = vsched__node_job(d);
    vsched__jobdep *v = realloc(j->deps, (j->n_deps + 1) * sizeof *v);
    if (v == NULL)
        abort(); /* an insertion is never half done */
    j->deps = v;
    vsched__node_ref(up);
    j->deps[j->n_deps++] = (vsched__jobdep){up, gate};
    if (vsched__node_terminal(up)) {
        apply_end(s, up, d, gate, 0, p);
        return;
    }
    if (gate == VSCHED_GATE_AFTER_ADMISSION && up->admitted)
        return; /* already satisfied */
    if (vsched__edge_add(&s->graph, up, d) != VSCHED_OK)
        abort();
    vsched__raise(s, up, d->priority, d->weight_us);
    if (gate == VSCHED_GATE_AFTER_ADMISSION) {
        vsched__dag *g = &s->dag;
        if (g->n_admit == g->cap_admit) {
            size_t cap = g->cap_admit ? g->cap_admit * 2 : 8;
            vsched__admit_edge *a = realloc(g->admit, cap * sizeof *a);
            if (a == NULL)
                abort();
            g->admit = a;
            g->cap_admit = cap;
        }
        vsched__node_ref(up);
        vsched__node_ref(d);
        g->admit[g->n_admit++] = (vsched__admit_edge){up, d};
        up->admit_edges = 1;
    }
}

/* Remove the explicit edge up -> d (a spent after-admission edge). */
static void edge_drop(vsched *s, vsched__node *up, vsched__node *d)
{
    for (uint32_t i = 0; i < up->down.n; i++)
        if (up->down.v[i] == d) {
            up->down.v[i] = up->down.v[--up->down.n];
            vsched__xdeps_add(d, -1);
            vsched__deps_add(d, -1);
            s->graph.edges--;
            vsched__node_unref(s, d);
            return;
        }
}

void vsched__job_admitted(vsched *s, vsched__node *n, vsched__pass *p)
{
    (void)p;
    vsched__dag *g = &s->dag;
    n->admit_edges = 0;
    for (size_t i = 0; i < g->n_admit;) {
        vsched__admit_edge e = g->admit[i];
        if (e.up != n) {
            i++;
            continue;
        }
        g->admit[i] = g->admit[--g->n_admit];
        if (!vsched__node_terminal(e.down)) {
            edge_drop(s, n, e.down);
            vsched__make_ready_if_free(s, e.down);
        }
        vsched__node_unref(s, e.up);
        vsched__node_unref(s, e.down);
    }
}

void vsched__job_cancel_tree(vsched *s, vsched__node *n, const char *reason,
                             vsched__pass *p)
{
    vsched__nodevec work = {0};
    uint32_t stamp = vsched__graph_stamp(&s->graph);
    char *why = strdup(reason);
    vsched__node_ref(n);
    if (vsched__nodevec_push(&work, n) != VSCHED_OK)
        abort();
    n->mark = stamp;
    while (work.n > 0) {
        vsched__node *x = work.v[--work.n];
        if (!vsched__node_terminal(x)) {
            /* Its downstream first (x's end may release some of them,
             * whatever their gate: they are cancelled too). */
            for (uint32_t i = 0; i < x->down.n; i++) {
                vsched__node *d = x->down.v[i];
                if (d->mark != stamp && !vsched__node_terminal(d)) {
                    d->mark = stamp;
                    vsched__node_ref(d);
                    if (vsched__nodevec_push(&work, d) != VSCHED_OK)
                        abort();
                }
            }
            if (x->state == VSCHED__RUNNING)
                /* It stops at its next ctx->is_cancelled and ends through
                 * vsched__job_complete. */
                atomic_store(&x->cancel, 1);
            else
                vsched__node_fail(s, x, VSCHED_ECANCELLED, strdup(why), NULL,
                                  NULL, 0, -1, p);
        }
        vsched__node_unref(s, x);
    }
    free(why);
    vsched__nodevec_free(&work);
}

void vsched__job_complete(vsched *s, vsched__task *t, vsched__pass *p)
{
    vsched__node *n = t->node;
    vsched__job_task_returned(s, n);
    if (n->state != VSCHED__RUNNING) {
        /* Ended meanwhile (a reset or teardown): nothing to publish. */
        vsched__count(&s->stale_refusals);
        vsched__task_free(s, t);
        return;
    }
    if (t->status != VSCHED_OK) {
        char *msg = t->message;
        t->message = NULL;
        vsched_token *tok = n->k.job->token;
        if (t->status == VSCHED_ECANCELLED && tok != NULL &&
            tok->reason != NULL) {
            free(msg); /* the canceller's reason says more */
            msg = strdup(tok->reason);
        }
        if (msg == NULL)
            msg = strdup(vsched_strerror(t->status));
        vsched__node_fail(s, n, t->status, msg, NULL, t->diags, t->n_diags, -1,
                          p);
    } else {
        if (t->n_diags > 0) {
            vsched__outcome *o = calloc(1, sizeof *o);
            if (o != NULL) {
                o->diags = t->diags;
                o->n_diags = t->n_diags;
                vsched__outcome_free(n->why);
                n->why = o;
                t->diags = NULL;
                t->n_diags = 0;
            }
        }
        free(n->k.job->output);
        n->k.job->output = t->artifact_path;
        t->artifact_path = NULL;
        vsched__node_done(s, n, p);
    }
    t->diags = NULL; /* moved into the node's outcome */
    t->n_diags = 0;
    vsched__task_free(s, t);
}

/* The path an upstream node produced, or NULL. */
static const char *output_of(const vsched__node *up)
{
    if (vsched__node_job(up) != NULL)
        return up->k.job->output;
    if (up->kind != VSCHED__K_ARTIFACT || up->file == NULL ||
        up->state != VSCHED__DONE)
        return NULL;
    vsched__slot *sl =
        vsched__file_find_slot(up->file, vsched__node_profile(up));
    return sl != NULL ? sl->path : NULL;
}

static int job_in_fill(vsched_job_in *in, const vsched__job *j)
{
    size_t cap = j->n_inputs + j->n_deps;
    char **v = calloc(cap + 1, sizeof *v);
    if (v == NULL)
        return VSCHED_ENOMEM;
    in->inputs = (const char *const *)v;
    size_t k = 0;
    for (size_t i = 0; i < j->n_inputs; i++)
        if ((v[k++] = strdup(j->inputs[i])) == NULL)
            return VSCHED_ENOMEM;
    for (size_t i = 0; i < j->n_deps; i++) {
        const char *o = j->deps[i].gate == VSCHED_GATE_AFTER_SUCCESS
                            ? output_of(j->deps[i].up)
                            : NULL;
        if (o != NULL && (v[k++] = strdup(o)) == NULL)
            return VSCHED_ENOMEM;
    }
    in->n_inputs = k;
    in->kind = strdup(j->kind);
    in->name = strdup(j->name);
    in->profile = j->profile != NULL ? strdup(j->profile) : NULL;
    if (in->kind == NULL || in->name == NULL ||
        (j->profile != NULL && in->profile == NULL))
        return VSCHED_ENOMEM;
    return VSCHED_OK;
}

vsched__task *vsched__job_task(vsched *s, vsched__node *n)
{
    vsched__task *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->s = s;
    t->kind = VSCHED__K_JOB;
    t->name = n->k.job->name;
    t->job = calloc(1, sizeof *t->job);
    if (t->job == NULL ||
        job_in_fill(t->job, vsched__node_job(n)) != VSCHED_OK) {
        vsched__task_free(s, t);
        return NULL;
    }
    vsched__node_ref(n);
    t->node = n;
    return t;
}

void vsched__job_in_free(vsched_job_in *in)
{
    if (in == NULL)
        return;
    char **v = (char **)in->inputs;
    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        free(v[i]);
    free(v);
    free((char *)in->kind);
    free((char *)in->name);
    free((char *)in->profile);
    free(in);
}

void vsched__job_payload_free(vsched__job *j)
{
    if (j == NULL)
        return;
    free(j->kind);
    free(j->name);
    free(j->profile);
    for (size_t i = 0; j->inputs != NULL && i < j->n_inputs; i++)
        free(j->inputs[i]);
    free(j->inputs);
    free(j->key);
    free(j->deps);
    free(j->needs);
    free(j->grants);
    free(j->output);
    vsched_sem_release(j->sem);
    vsched_token_release(j->token);
    free(j);
}

void vsched__job_free(vsched *s, vsched__node *n)
{
    vsched__job *j = vsched__node_job(n);
    n->k.job = NULL;
    for (size_t i = 0; i < j->n_deps; i++)
        vsched__node_unref(s, j->deps[i].up);
    if (j->parent != NULL)
        vsched__node_unref(s, j->parent);
    vsched__job_payload_free(j);
}
