/*
 * graph -- nodes, edges and the ready heap; see graph.h.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "graph.h"

uint64_t vsched__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int vsched__nodevec_push(vsched__nodevec *v, vsched__node *n)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        vsched__node **nv = realloc(v->v, cap * sizeof *nv);
        if (nv == NULL)
            return VSCHED_ENOMEM;
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = n;
    return VSCHED_OK;
}

void vsched__nodevec_free(vsched__nodevec *v)
{
    free(v->v);
    v->v = NULL;
    v->n = v->cap = 0;
}

void vsched__graph_init(vsched__graph *g)
{
    *g = (vsched__graph){.next_id = 1};
}

/* Process-wide, so an id is never reused by a reset's fresh graph. */
static atomic_uint_fast64_t next_node_id = 1;

static void node_free(vsched__node *n)
{
    vsched__job_free(n->job);
    vsched__nodevec_free(&n->admit_waiters);
    vsched__nodevec_free(&n->upstream);
    vsched__nodevec_free(&n->downstream);
    for (size_t i = 0; i < n->n_diags; i++) {
        free((char *)n->diags[i].file);
        free((char *)n->diags[i].message);
    }
    free(n->diags);
    free(n->profile);
    free(n->message);
    free(n->failed_dep);
    free(n->waiters);
    free(n);
}

void vsched__graph_fini(vsched__graph *g)
{
    for (size_t i = 0; i < g->all.n; i++)
        node_free(g->all.v[i]);
    vsched__nodevec_free(&g->all);
    free(g->heap);
    *g = (vsched__graph){0};
}

vsched__node *vsched__node_new(vsched__graph *g, vsched__node_kind kind,
                               int priority)
{
    vsched__node *n = calloc(1, sizeof *n);
    if (n == NULL)
        return NULL;
    if (vsched__nodevec_push(&g->all, n) != VSCHED_OK) {
        free(n);
        return NULL;
    }
    n->id = (uint64_t)atomic_fetch_add(&next_node_id, 1);
    g->next_id = n->id + 1;
    n->kind = kind;
    n->state = VSCHED__PENDING;
    n->priority = priority;
    g->unfinished++;
    return n;
}

int vsched__graph_add_edge(vsched__graph *g, vsched__node *up,
                           vsched__node *down)
{
    if (up->state == VSCHED__DONE)
        return VSCHED_OK;
    if (vsched__nodevec_push(&up->downstream, down) != VSCHED_OK)
        return VSCHED_ENOMEM;
    if (vsched__nodevec_push(&down->upstream, up) != VSCHED_OK) {
        up->downstream.n--;
        return VSCHED_ENOMEM;
    }
    down->deps_remaining++;
    g->edges++;
    if (up->priority < down->priority)
        vsched__graph_raise_priority(g, up, down->priority);
    if (up->weight < down->weight)
        vsched__graph_raise_weight(g, up, down->weight);
    return VSCHED_OK;
}

/* ---- ready heap: max-heap on (priority, weight, -id) -------------------- */

static int better(const vsched__node *a, const vsched__node *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    if (a->weight != b->weight)
        return a->weight > b->weight;
    return a->id < b->id;
}

static void heap_set(vsched__graph *g, size_t i, vsched__node *n)
{
    g->heap[i] = n;
    n->heap_index = i;
}

static void sift_up(vsched__graph *g, size_t i)
{
    vsched__node *n = g->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!better(n, g->heap[parent]))
            break;
        heap_set(g, i, g->heap[parent]);
        i = parent;
    }
    heap_set(g, i, n);
}

static void sift_down(vsched__graph *g, size_t i)
{
    vsched__node *n = g->heap[i];
    for (;;) {
        size_t l = 2 * i + 1, best = i;
        vsched__node *bn = n;
        if (l < g->heap_n && better(g->heap[l], bn))
            best = l, bn = g->heap[l];
        if (l + 1 < g->heap_n && better(g->heap[l + 1], bn))
            best = l + 1, bn = g->heap[l + 1];
        if (best == i)
            break;
        heap_set(g, i, bn);
        i = best;
    }
    heap_set(g, i, n);
}

vsched__node *vsched__graph_find(const vsched__graph *g, uint64_t id)
{
    size_t lo = 0, hi = g->all.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t m = g->all.v[mid]->id;
        if (m == id)
            return g->all.v[mid];
        if (m < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int vec_remove(vsched__nodevec *v, const vsched__node *n)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->v[i] == n) {
            v->v[i] = v->v[--v->n];
            return 1;
        }
    return 0;
}

/* n was admitted to the ready queue: its AFTER_ADMISSION edges fire. Each
 * is spent and removed from the graph, so n's later end owes d nothing. */
static void release_admission_waiters(vsched__graph *g, vsched__node *n)
{
    vsched__nodevec w = n->admit_waiters;
    n->admit_waiters = (vsched__nodevec){0};
    for (size_t i = 0; i < w.n; i++) {
        vsched__node *d = w.v[i];
        if (vsched__node_terminal(d) || !vec_remove(&n->downstream, d))
            continue;
        vec_remove(&d->upstream, n);
        g->edges--;
        d->deps_remaining--;
        vsched__graph_make_ready_if_free(g, d);
    }
    vsched__nodevec_free(&w);
}

int vsched__graph_push_ready(vsched__graph *g, vsched__node *n)
{
    if (g->heap_n == g->heap_cap) {
        size_t cap = g->heap_cap ? g->heap_cap * 2 : 64;
        vsched__node **h = realloc(g->heap, cap * sizeof *h);
        if (h == NULL)
            return VSCHED_ENOMEM;
        g->heap = h;
        g->heap_cap = cap;
    }
    n->state = VSCHED__READY;
    heap_set(g, g->heap_n++, n);
    sift_up(g, g->heap_n - 1);
    if (g->heap_n > g->heap_max)
        g->heap_max = g->heap_n;
    if (!n->admitted) {
        n->admitted = 1;
        release_admission_waiters(g, n);
    }
    return VSCHED_OK;
}

int vsched__graph_make_ready_if_free(vsched__graph *g, vsched__node *n)
{
    if (n->state != VSCHED__PENDING || n->deps_remaining != 0)
        return VSCHED_OK;
    return vsched__graph_push_ready(g, n);
}

vsched__node *vsched__graph_pop_ready(vsched__graph *g)
{
    if (g->heap_n == 0)
        return NULL;
    vsched__node *top = g->heap[0];
    g->heap_n--;
    if (g->heap_n > 0) {
        heap_set(g, 0, g->heap[g->heap_n]);
        sift_down(g, 0);
    }
    top->state = VSCHED__PENDING; /* caller moves it to RUNNING or back */
    return top;
}

void vsched__graph_raise_priority(vsched__graph *g, vsched__node *n,
                                  int priority)
{
    if (n->priority >= priority || vsched__node_terminal(n))
        return;
    n->priority = priority;
    if (n->state == VSCHED__READY)
        sift_up(g, n->heap_index);
    for (size_t i = 0; i < n->upstream.n; i++)
        vsched__graph_raise_priority(g, n->upstream.v[i], priority);
}

void vsched__graph_raise_weight(vsched__graph *g, vsched__node *n,
                                uint64_t weight)
{
    if (n->weight >= weight || vsched__node_terminal(n))
        return;
    n->weight = weight;
    if (n->state == VSCHED__READY)
        sift_up(g, n->heap_index);
    for (size_t i = 0; i < n->upstream.n; i++)
        vsched__graph_raise_weight(g, n->upstream.v[i], weight);
}

void vsched__node_start(vsched__node *n, uint64_t now_ns)
{
    n->state = VSCHED__RUNNING;
    if (n->started_ns == 0)
        n->started_ns = now_ns;
}

void vsched__node_finish(vsched__graph *g, vsched__node *n,
                         vsched__node_state state, int status, char *message,
                         char *failed_dep, uint64_t now_ns)
{
    if (n->state == VSCHED__READY) {
        /* Remove from the heap: move the last entry into its slot. */
        size_t i = n->heap_index;
        g->heap_n--;
        if (i < g->heap_n) {
            vsched__node *moved = g->heap[g->heap_n];
            heap_set(g, i, moved);
            sift_down(g, i);
            sift_up(g, moved->heap_index);
        }
    }
    n->state = state;
    n->status = status;
    free(n->message);
    n->message = message;
    free(n->failed_dep);
    n->failed_dep = failed_dep;
    n->finished_ns = now_ns;
    if (n->started_ns == 0)
        n->started_ns = now_ns;
    g->unfinished--;
    /* Edges into a terminal node are spent. */
    g->edges -= n->upstream.n;
}
