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
 *   AFTER_ADMISSION  still an edge at up's end means up was never admitted
 *                    (graph.c removes it on admission): cancelled
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
    if (n->job != NULL)
        return n->job->name;
    return n->file != NULL ? n->file->name : "?";
}

static vsched_gate gate_of(const vsched__node *d, const vsched__node *up)
{
    const vsched__job *j = d->job;
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
    if (up->status == VSCHED_ECANCELLED && up->failed_dep != NULL &&
        up->message != NULL) {
        root = strdup(up->failed_dep);
        msg = strdup(up->message);
    } else {
        const char *name = vsched__node_name(up);
        const char *how = gate == VSCHED_GATE_AFTER_ADMISSION
                              ? "ended before it was admitted"
                          : up->state == VSCHED__CANCELLED ? "was cancelled"
                                                           : "failed";
        root = strdup(name);
        if (asprintf(&msg, "dependency '%s' %s: %s", name, how,
                     up->message != NULL ? up->message
                                         : vsched_strerror(up->status)) < 0)
            msg = NULL;
    }
    vsched__fail_node(s, d, VSCHED_ECANCELLED, msg, root, NULL, 0, -1, p);
}

/* Apply the gate of up -> d now that up is terminal. counted: the edge is
 * in d's deps_remaining. */
static void apply_end(vsched *s, vsched__node *up, vsched__node *d,
                      vsched_gate gate, int counted, vsched__pass *p)
{
    if (vsched__node_terminal(d))
        return;
    int ok = gate == VSCHED_GATE_AFTER_ANY ||
             (gate == VSCHED_GATE_AFTER_SUCCESS &&
              up->state == VSCHED__DONE) ||
             (gate == VSCHED_GATE_AFTER_ADMISSION && up->admitted);
    if (!ok) {
        cancel_for(s, up, d, gate, p);
        return;
    }
    if (counted) {
        d->deps_remaining--;
        vsched__graph_make_ready_if_free(&s->graph, d);
    }
}

void vsched__job_upstream_ended(vsched *s, vsched__node *up, vsched__node *d,
                                vsched__pass *p)
{
    apply_end(s, up, d, gate_of(d, up), 1, p);
}

void vsched__job_link(vsched *s, vsched__node *up, vsched__node *d,
                      vsched_gate gate, vsched__pass *p)
{
    vsched__job *j = d->job;
    vsched__jobdep *v = realloc(j->deps, (j->n_deps + 1) * sizeof *v);
    if (v == NULL)
        abort(); /* an insertion is never half done */
    j->deps = v;
    j->deps[j->n_deps++] = (vsched__jobdep){up, gate};
    if (vsched__node_terminal(up)) {
        apply_end(s, up, d, gate, 0, p);
        return;
    }
    if (gate == VSCHED_GATE_AFTER_ADMISSION && up->admitted)
        return; /* already satisfied */
    if (vsched__graph_add_edge(&s->graph, up, d) != VSCHED_OK ||
        (gate == VSCHED_GATE_AFTER_ADMISSION &&
         vsched__nodevec_push(&up->admit_waiters, d) != VSCHED_OK))
        abort();
}

void vsched__job_cancel_tree(vsched *s, vsched__node *n, const char *reason,
                             vsched__pass *p)
{
    vsched__nodevec work = {0};
    if (vsched__nodevec_push(&work, n) != VSCHED_OK)
        abort();
    while (work.n > 0) {
        vsched__node *x = work.v[--work.n];
        if (vsched__node_terminal(x) ||
            atomic_exchange((atomic_int *)&x->cancel, 1) != 0)
            continue; /* ended, or reached already */
        /* Downstream first collected: x's end may release some of them. */
        for (size_t i = 0; i < x->downstream.n; i++)
            if (vsched__nodevec_push(&work, x->downstream.v[i]) != VSCHED_OK)
                abort();
        if (x->state != VSCHED__RUNNING)
            vsched__fail_node(s, x, VSCHED_ECANCELLED, strdup(reason), NULL,
                              NULL, 0, -1, p);
        /* A running one stops at its next ctx->is_cancelled and ends
         * through vsched__job_complete. */
    }
    vsched__nodevec_free(&work);
}

void vsched__job_complete(vsched *s, vsched__task *t, vsched__pass *p)
{
    vsched__node *n = t->node;
    if (n->state != VSCHED__RUNNING) {
        vsched__task_free(t); /* ended meanwhile (shutdown) */
        return;
    }
    vsched__diags_free(n->diags, n->n_diags);
    n->diags = NULL;
    n->n_diags = 0;
    if (t->status != VSCHED_OK) {
        char *msg = t->message;
        t->message = NULL;
        vsched_token *tok = n->job->token;
        if (t->status == VSCHED_ECANCELLED && tok != NULL &&
            tok->reason != NULL) {
            free(msg); /* the canceller's reason says more */
            msg = strdup(tok->reason);
        }
        if (msg == NULL)
            msg = strdup(vsched_strerror(t->status));
        vsched__fail_node(s, n, t->status, msg, NULL, t->diags, t->n_diags,
                          -1, p);
    } else {
        n->diags = t->diags;
        n->n_diags = t->n_diags;
        free(n->job->output);
        n->job->output = t->artifact_path;
        t->artifact_path = NULL;
        vsched__node_finish(&s->graph, n, VSCHED__DONE, 0, NULL, NULL,
                            vsched__now_ns());
        vsched__job_ended(s, n);
        vsched__release_downstream(s, n, p);
    }
    t->diags = NULL;
    t->n_diags = 0;
    vsched__task_free(t);
}

/* The path an upstream node produced, or NULL. */
static const char *output_of(const vsched__node *up)
{
    if (up->job != NULL)
        return up->job->output;
    if (up->kind != VSCHED__K_ARTIFACT || up->file == NULL)
        return NULL;
    const vsched__file *f = up->file;
    for (size_t i = 0; i < f->n_artifacts; i++)
        if (strcmp(f->artifacts[i].profile, up->profile) == 0)
            return f->artifacts[i].path;
    return NULL;
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
    t->node = n;
    t->epoch = s->epoch;
    t->kind = VSCHED__K_JOB;
    t->name = strdup(n->job->name);
    t->job = calloc(1, sizeof *t->job);
    if (t->name == NULL || t->job == NULL ||
        job_in_fill(t->job, n->job) != VSCHED_OK) {
        vsched__task_free(t);
        return NULL;
    }
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

static void strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void vsched__job_free(vsched__job *j)
{
    if (j == NULL)
        return;
    free(j->kind);
    free(j->name);
    free(j->profile);
    strv_free(j->inputs, j->n_inputs);
    free(j->key);
    free(j->deps);
    free(j->needs);
    free(j->grants);
    free(j->output);
    vsched_sem_release(j->sem);
    vsched_token_release(j->token);
    free(j);
}
