/*
 * sched -- the public scheduler object: create/destroy, submission,
 * waiting, batches and counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int bindings_valid(const vsched_options *o)
{
    const vsched_loader_ops *l = o->loader.ops;
    const vsched_executor_ops *e = o->executor.ops;
    return l != NULL && e != NULL && l->load != NULL && l->classify != NULL &&
           l->realpath != NULL && e->source != NULL &&
           e->extract_deps != NULL && e->analysis != NULL &&
           e->artifact != NULL && e->snapshot_free != NULL;
}

int vsched_create(vsched **out, const vsched_options *opts)
{
    if (out == NULL || opts == NULL || opts->size < sizeof *opts ||
        opts->cpu_pool == NULL || opts->io_pool == NULL ||
        vsched_pool_get_kind(opts->cpu_pool) != VSCHED_POOL_CPU ||
        vsched_pool_get_kind(opts->io_pool) != VSCHED_POOL_IO ||
        !bindings_valid(opts))
        return VSCHED_EINVAL;
    vsched *s = calloc(1, sizeof *s);
    if (s == NULL)
        return VSCHED_ENOMEM;
    s->opts = *opts;
    size_t cap = opts->inbox_capacity ? opts->inbox_capacity : 1024;
    if (vsched__inbox_init(&s->inbox, cap) != VSCHED_OK) {
        free(s);
        return VSCHED_ENOMEM;
    }
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->serial_loader, NULL);
    pthread_mutex_init(&s->serial_executor, NULL);
    pthread_mutex_init(&s->task_lock, NULL);
    pthread_mutex_init(&s->observer_lock, NULL);
    pthread_cond_init(&s->task_cond, NULL);
    vsched__graph_init(&s->graph);
    vsched__graph_init(&s->grave_graph);
    vsched__files_init(&s->files);
    vsched__dag_init(s);
    s->root = vsched__root_dir_new();
    if (s->root == NULL) {
        vsched_destroy(s);
        return VSCHED_ENOMEM;
    }
    if (pthread_create(&s->driver, NULL, vsched__driver_main, s) != 0) {
        vsched_destroy(s);
        return VSCHED_ENOMEM;
    }
    s->driver_started = 1;
    *out = s;
    return VSCHED_OK;
}

void vsched_destroy(vsched *s)
{
    if (s == NULL)
        return;
    atomic_store(&s->stopping, 1);
    vsched__inbox_stop(&s->inbox); /* the teardown channel, not an item */
    if (s->driver_started) {
        pthread_join(s->driver, NULL);
        vsched__driver_teardown(s);
    }

    /* Tasks still on the pools see `stopping` and return quickly; their
     * completions are refused by the closed inbox. Wait for them. */
    pthread_mutex_lock(&s->task_lock);
    while (s->live_tasks > 0)
        pthread_cond_wait(&s->task_cond, &s->task_lock);
    pthread_mutex_unlock(&s->task_lock);

    /* Items that reached the inbox before it closed. */
    vsched__item items[64];
    size_t n;
    while ((n = vsched__inbox_drain(&s->inbox, items, 64)) > 0) {
        for (size_t i = 0; i < n; i++) {
            if (items[i].kind == VSCHED__ITEM_COMPLETE) {
                vsched__task_free(items[i].ptr);
                continue;
            }
            vsched_handle **hs = NULL;
            size_t nh = 1;
            if (items[i].kind == VSCHED__ITEM_BATCH) {
                vsched_batch *b = items[i].ptr;
                hs = b->handles;
                nh = b->n;
            } else {
                hs = (vsched_handle **)&items[i].ptr;
            }
            for (size_t k = 0; k < nh; k++) {
                hs[k]->result.status = VSCHED_ESHUTDOWN;
                hs[k]->result.name = hs[k]->canonical;
                hs[k]->result.stage = hs[k]->req.stage;
                vsched__handle_signal(hs[k]);
            }
        }
    }
    /* Every task is back: free what the graph and the graveyard hold. */
    vsched__graph *graphs[2] = {&s->graph, &s->grave_graph};
    for (int g = 0; g < 2; g++) {
        for (size_t i = 0; i < graphs[g]->all.n; i++)
            vsched__task_free(graphs[g]->all.v[i]->pending_task);
        vsched__graph_fini(graphs[g]);
    }
    vsched__files_fini(&s->files);
    vsched__dag_fini(s);
    for (size_t i = 0; i < s->n_retired; i++)
        vsched__file_free(s->retired_files[i]);
    for (size_t i = 0; i < s->n_grave_files; i++)
        vsched__file_free(s->grave_files[i]);
    free(s->retired_files);
    free(s->grave_files);
    vsched__root_dir_release(s->root);
    vsched__inbox_fini(&s->inbox);
    pthread_cond_destroy(&s->task_cond);
    pthread_mutex_destroy(&s->task_lock);
    pthread_mutex_destroy(&s->observer_lock);
    for (size_t i = 0; i < s->n_events; i++) {
        free((char *)s->events[i].name);
        free((char *)s->events[i].profile);
    }
    free(s->events);
    pthread_mutex_destroy(&s->serial_executor);
    pthread_mutex_destroy(&s->serial_loader);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* ---- handles ------------------------------------------------------------ */

static vsched_handle *handle_new(vsched *s, const vsched_request *req)
{
    vsched_handle *h = calloc(1, sizeof *h);
    if (h == NULL)
        return NULL;
    h->s = s;
    h->req = *req;
    h->req.name = strdup(req->name);
    h->req.profile = strdup(req->profile != NULL ? req->profile : "");
    h->req.content = NULL;
    if (req->flags & VSCHED_REQ_CONTENT) {
        char *c = malloc(req->content_len + 1);
        if (c != NULL) {
            if (req->content_len > 0)
                memcpy(c, req->content, req->content_len);
            c[req->content_len] = '\0';
        }
        h->req.content = c;
        if (c == NULL) {
            free((char *)h->req.name);
            free((char *)h->req.profile);
            free(h);
            return NULL;
        }
    }
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->cond, NULL);
    atomic_init(&h->refs, 2); /* caller + scheduler */
    if (h->req.name == NULL || h->req.profile == NULL) {
        free((char *)h->req.name);
        free((char *)h->req.profile);
        free(h);
        return NULL;
    }
    return h;
}

static void strv_free(char **v)
{
    for (size_t i = 0; v != NULL && v[i] != NULL; i++)
        free(v[i]);
    free(v);
}

static void handle_free(vsched_handle *h)
{
    strv_free(h->r_deps);
    strv_free(h->r_blockers);
    free((char *)h->req.name);
    free((char *)h->req.profile);
    free((char *)h->req.content);
    free(h->canonical);
    free(h->r_message);
    free(h->r_failed_dep);
    free(h->r_artifact_path);
    vsched__diags_free(h->r_diags, h->r_n_diags);
    pthread_cond_destroy(&h->cond);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

void vsched__handle_unref(vsched_handle *h)
{
    if (atomic_fetch_sub(&h->refs, 1) == 1)
        handle_free(h);
}

void vsched__handle_signal(vsched_handle *h)
{
    pthread_mutex_lock(&h->lock);
    h->done = 1;
    pthread_cond_broadcast(&h->cond);
    pthread_mutex_unlock(&h->lock);
    vsched__handle_unref(h);
}

/* Resolve the request's name through the loader (in the caller's thread,
 * before admission); failures are answered without a node. */
static void handle_resolve(vsched *s, vsched_handle *h)
{
    const vsched_loader_binding *lb = &s->opts.loader;
    vsched_ctx ctx;
    vsched__task probe = {.s = s};
    vsched__node dummy = {0};
    probe.node = &dummy;
    vsched__ctx_init(&ctx, &probe);
    char *canon = NULL;
    if (!lb->thread_safe)
        pthread_mutex_lock(&s->serial_loader);
    int rc = lb->ops->realpath(lb->inst, &ctx, h->req.name, &canon);
    if (!lb->thread_safe)
        pthread_mutex_unlock(&s->serial_loader);
    if (rc == VSCHED_OK && canon != NULL) {
        h->canonical = canon;
        /* The classification decides a re-home at admission. */
        if (!lb->thread_safe)
            pthread_mutex_lock(&s->serial_loader);
        if (lb->ops->classify(lb->inst, &ctx, canon, h->kind,
                              sizeof h->kind) != VSCHED_OK)
            h->kind[0] = '\0';
        if (!lb->thread_safe)
            pthread_mutex_unlock(&s->serial_loader);
        h->kind[sizeof h->kind - 1] = '\0';
        vsched__diags_free(probe.diags, probe.n_diags);
        return;
    }
    free(canon);
    h->canonical = strdup(h->req.name);
    h->admit_status = rc < 0 ? rc : VSCHED_EINVAL;
    /* The loader's own words, when it gave any, say more than the code. */
    const char *why = probe.n_diags > 0 && probe.diags[0].message != NULL
                          ? probe.diags[0].message
                          : vsched_strerror(h->admit_status);
    if (asprintf(&h->r_message, "%s: %s", h->req.name, why) < 0)
        h->r_message = NULL;
    vsched__diags_free(probe.diags, probe.n_diags);
}

static int request_valid(const vsched_request *r)
{
    if (r == NULL || r->name == NULL || r->name[0] == '\0')
        return 0;
    if (r->stage < VSCHED_STAGE_SOURCE || r->stage > VSCHED_STAGE_ARTIFACT)
        return 0;
    if (r->stage == VSCHED_STAGE_ARTIFACT &&
        (r->profile == NULL || r->profile[0] == '\0'))
        return 0;
    return 1;
}

int vsched_submit_request(vsched *s, const vsched_request *req,
                          vsched_handle **out)
{
    if (s == NULL || out == NULL || !request_valid(req))
        return VSCHED_EINVAL;
    vsched_handle *h = handle_new(s, req);
    if (h == NULL)
        return VSCHED_ENOMEM;
    handle_resolve(s, h);
    int rc = vsched__submit_item(s, (vsched__item){VSCHED__ITEM_REQUEST, h});
    if (rc != VSCHED_OK) {
        handle_free(h);
        return rc;
    }
    atomic_fetch_add(&s->submit_count, 1);
    *out = h;
    return VSCHED_OK;
}

int vsched_wait(vsched_handle *h, const vsched_result **res)
{
    if (h == NULL)
        return VSCHED_EINVAL;
    /* A CPU worker must not block its own pool: it runs ready work. */
    if (vsched_pool_current_kind() == VSCHED_POOL_CPU &&
        !atomic_load(&h->s->stopping))
        vsched__pump_until(h->s, h);
    pthread_mutex_lock(&h->lock);
    while (!h->done)
        pthread_cond_wait(&h->cond, &h->lock);
    pthread_mutex_unlock(&h->lock);
    if (res != NULL)
        *res = &h->result;
    return h->result.status;
}

void vsched_handle_release(vsched_handle *h)
{
    if (h != NULL)
        vsched__handle_unref(h);
}

/* ---- batches ------------------------------------------------------------ */

static vsched_batch *batch_new(vsched *s, const vsched_request *reqs,
                               size_t n)
{
    vsched_batch *b = calloc(1, sizeof *b);
    if (b == NULL)
        return NULL;
    b->s = s;
    b->handles = calloc(n + 1, sizeof *b->handles);
    b->results = calloc(n + 1, sizeof *b->results);
    if (b->handles == NULL || b->results == NULL)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        b->handles[i] = handle_new(s, &reqs[i]);
        if (b->handles[i] == NULL)
            goto fail;
        b->handles[i]->batch = b;
        b->n = i + 1;
    }
    for (size_t i = 0; i < n; i++)
        handle_resolve(s, b->handles[i]);
    return b;

fail:
    for (size_t i = 0; i < b->n; i++)
        handle_free(b->handles[i]);
    free(b->handles);
    free(b->results);
    free(b);
    return NULL;
}

static int batch_args_valid(vsched *s, const vsched_request *reqs, size_t n,
                            vsched_batch **out)
{
    if (s == NULL || out == NULL || (n > 0 && reqs == NULL))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!request_valid(&reqs[i]))
            return 0;
    return 1;
}

int vsched_submit_batch(vsched *s, const vsched_request *reqs, size_t n,
                        vsched_batch **out)
{
    if (!batch_args_valid(s, reqs, n, out))
        return VSCHED_EINVAL;
    vsched_batch *b = batch_new(s, reqs, n);
    if (b == NULL)
        return VSCHED_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        vsched_handle *h = b->handles[i];
        if (vsched__submit_item(s, (vsched__item){VSCHED__ITEM_REQUEST, h}) !=
            VSCHED_OK) {
            /* Closed mid-batch: answer the rest ourselves. */
            h->result.status = VSCHED_ESHUTDOWN;
            h->result.name = h->canonical;
            vsched__handle_signal(h);
            continue;
        }
        atomic_fetch_add(&s->submit_count, 1);
    }
    *out = b;
    return VSCHED_OK;
}

int vsched_submit_batch_atomic(vsched *s, const vsched_request *reqs,
                               size_t n, vsched_batch **out)
{
    if (!batch_args_valid(s, reqs, n, out))
        return VSCHED_EINVAL;
    vsched_batch *b = batch_new(s, reqs, n);
    if (b == NULL)
        return VSCHED_ENOMEM;
    if (n > 0) {
        int rc = vsched__submit_item(s, (vsched__item){VSCHED__ITEM_BATCH, b});
        if (rc != VSCHED_OK) {
            for (size_t i = 0; i < n; i++) /* drop the scheduler's refs */
                vsched__handle_signal(b->handles[i]);
            vsched_batch_release(b);
            return rc;
        }
        atomic_fetch_add(&s->submit_count, 1);
    }
    *out = b;
    return VSCHED_OK;
}

int vsched_wait_batch(vsched_batch *b, const vsched_result **res)
{
    if (b == NULL)
        return VSCHED_EINVAL;
    int worst = VSCHED_OK;
    for (size_t i = 0; i < b->n; i++) {
        int rc = vsched_wait(b->handles[i], &b->results[i]);
        if (rc != VSCHED_OK && worst == VSCHED_OK)
            worst = rc;
    }
    if (res != NULL)
        for (size_t i = 0; i < b->n; i++)
            res[i] = b->results[i];
    return worst;
}

size_t vsched_batch_size(const vsched_batch *b)
{
    return b != NULL ? b->n : 0;
}

void vsched_batch_release(vsched_batch *b)
{
    if (b == NULL)
        return;
    for (size_t i = 0; i < b->n; i++)
        vsched__handle_unref(b->handles[i]);
    free(b->handles);
    free(b->results);
    free(b);
}

/* ---- counters ----------------------------------------------------------- */

void vsched_get_stats(vsched *s, vsched_stats *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&s->lock);
    out->files = s->files.n;
    out->graph_nodes = s->graph.all.n;
    out->edges = s->graph.edges;
    out->waiters = s->waiters;
    out->ready_depth_max = s->graph.heap_max;
    for (size_t i = 0; i < s->graph.all.n; i++) {
        const vsched__node *n = s->graph.all.v[i];
        out->edges_capacity += n->upstream.cap + n->downstream.cap;
        out->waiters_capacity += n->cap_waiters;
    }
    for (size_t i = 0; i < s->files.cap; i++) {
        const vsched__file *f = s->files.slots[i];
        if (f != NULL && f->blockers != NULL) {
            out->blockers += f->n_blockers;
            out->blockers_capacity += f->n_blockers + 1;
        }
    }
    out->retired_pending = s->n_grave_files + s->grave_graph.all.n;
    pthread_mutex_unlock(&s->lock);
    size_t versions, roots;
    vsched__root_counts(s->root, &versions, &roots);
    out->source_versions = versions;
    out->live_roots = roots;
    out->submit_count = atomic_load(&s->submit_count);
    out->batch_submissions = atomic_load(&s->batch_submissions);
    out->dedup_joins = atomic_load(&s->dedup_joins);
    out->stale_completion_refusals = atomic_load(&s->stale_refusals);
    out->inbox_depth_max = vsched__inbox_depth_max(&s->inbox);
    for (int i = 0; i < 3; i++) {
        out->stage_runs[i] = atomic_load(&s->stage_runs[i]);
        out->stage_failures[i] = atomic_load(&s->stage_failures[i]);
    }
}

void vsched_account_batch_submission(vsched *s)
{
    atomic_fetch_add(&s->batch_submissions, 1);
}
