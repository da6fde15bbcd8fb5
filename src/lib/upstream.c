/*
 * upstream -- what a node waits on: the live object of a name, priority
 * and weight inheritance, and the search for blocker cycles.
 *
 * The upstream of a non-terminal node:
 *   Artifact(F)   Analysis(F)
 *   Analysis(F)   Source(F), and the current Analysis of each blocker of F
 *                 (once F's Source is integrated)
 *   Source(F)     nothing
 *   job           the upstream nodes recorded in its deps
 * Only non-terminal upstream counts: an edge from a finished node is spent.
 * A pending Analysis of an integrated file waits for every blocker's
 * current Analysis that is not DONE (admit.c gates it, supersede.c keeps
 * it gated when a blocker changes), so this list is exactly what it waits
 * for. Everything here iterates with an explicit stack: chains of blockers
 * are as long as the trees users build.
 *
 * Lock held for everything here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

vsched__file *vsched__live(vsched *s, vsched__file *f)
{
    if (!f->retired)
        return f;
    int created;
    vsched__file *live = vsched__files_ensure(&s->files, f->name, &created);
    if (live == NULL)
        abort(); /* cannot gate on nothing; exhaustion is fatal here */
    return live;
}

/* The live object of f's name if there is one (no ensure). */
static vsched__file *live_peek(vsched *s, vsched__file *f)
{
    return f->retired ? vsched__files_find_h(&s->files, f->name, 0, f->hash)
                      : f;
}

typedef void (*up_fn)(vsched__node *up, void *arg);

static void each_up(vsched *s, vsched__node *n, up_fn fn, void *arg)
{
    vsched__file *f = n->file;
    switch (n->kind) {
    case VSCHED__K_ARTIFACT:
        if (f->analysis != NULL && !vsched__node_terminal(f->analysis))
            fn(f->analysis, arg);
        break;
    case VSCHED__K_ANALYSIS:
        if (f->source != NULL && !vsched__node_terminal(f->source))
            fn(f->source, arg);
        if (f->facts == NULL || f->analysis != n)
            break;
        for (size_t i = 0; i < f->n_blockers; i++) {
            vsched__file *b = live_peek(s, f->blockers[i]);
            if (b != NULL && b->analysis != NULL &&
                !vsched__node_terminal(b->analysis))
                fn(b->analysis, arg);
        }
        break;
    case VSCHED__K_JOB:
        for (size_t i = 0; i < n->job->n_deps; i++)
            if (!vsched__node_terminal(n->job->deps[i].up))
                fn(n->job->deps[i].up, arg);
        break;
    default:
        break;
    }
}

/* ---- inheritance ---------------------------------------------------------- */

typedef struct raise_ctx {
    vsched__nodevec stack;
    int priority;
    uint32_t weight_us;
} raise_ctx;

static int wants(const vsched__node *n, const raise_ctx *c)
{
    return !vsched__node_terminal(n) &&
           (n->priority < c->priority || n->weight_us < c->weight_us);
}

static void raise_push(vsched__node *up, void *arg)
{
    raise_ctx *c = arg;
    if (wants(up, c) && vsched__nodevec_push(&c->stack, up) != VSCHED_OK)
        abort();
}

void vsched__raise(vsched *s, vsched__node *n, int priority,
                   uint32_t weight_us)
{
    raise_ctx c = {{0}, priority, weight_us};
    if (!wants(n, &c))
        return;
    raise_push(n, &c);
    while (c.stack.n > 0) {
        vsched__node *x = c.stack.v[--c.stack.n];
        if (!wants(x, &c))
            continue;
        if (x->priority < priority)
            x->priority = priority;
        if (x->weight_us < weight_us)
            x->weight_us = weight_us;
        if (x->state == VSCHED__READY)
            vsched__push_ready(s, x); /* a fresh entry with the new keys */
        each_up(s, x, raise_push, &c);
    }
    vsched__nodevec_free(&c.stack);
}

/* ---- cycles ----------------------------------------------------------------- */

typedef struct search {
    vsched__nodevec nodes;   /* visited, in discovery order */
    size_t *parent;          /* parent[i]: index of who found nodes[i] */
    size_t cap_parent;
    size_t from;             /* index being expanded */
    vsched__node *target;
    uint32_t stamp;
    int found;
} search;

static void visit(vsched__node *up, void *arg)
{
    search *q = arg;
    if (q->found || up->state != VSCHED__PENDING)
        return;
    if (up == q->target) {
        q->found = 1;
        return;
    }
    if (up->mark == q->stamp)
        return;
    up->mark = q->stamp;
    if (vsched__nodevec_push(&q->nodes, up) != VSCHED_OK)
        abort();
    if (q->nodes.n > q->cap_parent) {
        q->cap_parent = q->cap_parent ? q->cap_parent * 2 : 64;
        size_t *v = realloc(q->parent, q->cap_parent * sizeof *v);
        if (v == NULL)
            abort();
        q->parent = v;
    }
    q->parent[q->nodes.n - 1] = q->from;
}

/* "dependency cycle: a -> b -> ... -> a", eliding the middle of a long
 * chain. chain[0..n) in waiting order (chain[i] waits on chain[i+1], and
 * the last on chain[0]). */
static char *cycle_message(vsched__node *const *chain, size_t n)
{
    char *m = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&m, &len);
    if (f == NULL)
        return NULL;
    fputs("dependency cycle: ", f);
    for (size_t i = 0; i < n; i++) {
        if (n > 8 && i == 4) {
            fprintf(f, "... (%zu more) -> ", n - 7);
            i = n - 3;
        }
        fprintf(f, "%s -> ", vsched__node_name(chain[i]));
    }
    fputs(vsched__node_name(chain[0]), f);
    if (fclose(f) != 0) {
        free(m);
        return NULL;
    }
    return m;
}

char *vsched__cycle_through(vsched *s, vsched__node *up, vsched__node *n)
{
    if (up == n)
        return cycle_message(&n, 1);
    if (up->state != VSCHED__PENDING)
        return NULL; /* it waits on nothing: no cycle through it */
    search q = {.target = n, .stamp = vsched__graph_stamp(&s->graph)};
    up->mark = q.stamp;
    vsched__nodevec_push(&q.nodes, up);
    q.cap_parent = 64;
    q.parent = malloc(q.cap_parent * sizeof *q.parent);
    if (q.parent == NULL)
        abort();
    q.parent[0] = SIZE_MAX;
    size_t at = 0;
    for (; at < q.nodes.n && !q.found; at++) {
        q.from = at;
        each_up(s, q.nodes.v[at], visit, &q);
    }
    char *msg = NULL;
    if (q.found) {
        /* nodes[at-1] waits on n; walk back to up. The chain in waiting
         * order: n, up, ..., nodes[at-1]. */
        size_t len = 1;
        for (size_t i = at - 1; i != SIZE_MAX; i = q.parent[i])
            len++;
        vsched__node **chain = malloc(len * sizeof *chain);
        if (chain == NULL)
            abort();
        chain[0] = n;
        size_t k = len;
        for (size_t i = at - 1; i != SIZE_MAX; i = q.parent[i])
            chain[--k] = q.nodes.v[i];
        msg = cycle_message(chain, len);
        free(chain);
    }
    vsched__nodevec_free(&q.nodes);
    free(q.parent);
    return msg;
}
