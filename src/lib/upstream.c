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
 * for. Everything here iterates with an explicit stack or worklist: chains
 * of blockers are as long as the trees users build.
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

/* ---- cycles: incremental topological order ---------------------------------
 *
 * Cycles can form only among Analysis nodes (a Source waits on nothing,
 * jobs are never upstream of file stages). Every non-terminal Analysis
 * has an order number, smaller upstream than downstream: the invariant of
 * a topological order (Pearce and Kelly's dynamic algorithm). Linking
 * up -> n (n waits on up):
 *
 *   - ord(up) < ord(n): the order already allows it; nothing to search;
 *   - else the affected region is searched: downstream of n among the
 *     nodes ordered at most ord(up) (reaching up is a cycle), upstream of
 *     up among those ordered at least ord(n); the order numbers of the two
 *     sets are dealt out again, up's side first.
 *
 * The cost is the size of that region, not of the graph. New Analyses are
 * ordered last, or first when made as a blocker of another (where an
 * upstream belongs), so chains discovered file by file cost nothing.
 * Iterative throughout.
 */

/* Downstream Analyses of n (explicit edges) that still wait. */
static void each_down(vsched__node *n, up_fn fn, void *arg)
{
    for (uint32_t i = 0; i < n->down.n; i++) {
        vsched__node *d = n->down.v[i];
        if (d->kind == VSCHED__K_ANALYSIS && !vsched__node_terminal(d))
            fn(d, arg);
    }
}

/* Upstream Analyses of n (its blockers') that n still waits on. */
static void each_up_analysis(vsched *s, vsched__node *n, up_fn fn, void *arg)
{
    vsched__file *f = n->file;
    if (f->facts == NULL || f->analysis != n)
        return;
    for (size_t i = 0; i < f->n_blockers; i++) {
        vsched__file *b = live_peek(s, f->blockers[i]);
        if (b != NULL && b->analysis != NULL &&
            !vsched__node_terminal(b->analysis))
            fn(b->analysis, arg);
    }
}

typedef struct region {
    vsched__nodevec nodes;   /* visited, in discovery order */
    size_t *parent;          /* parent[i]: index of who found nodes[i] */
    size_t cap_parent;
    size_t from;             /* index being expanded */
    vsched__node *target;    /* reaching it is a cycle */
    int64_t bound;           /* forward: ord <= bound; backward: >= */
    int forward;
    uint32_t stamp;
    int found;
} region;

static void region_add(region *r, vsched__node *x, size_t parent)
{
    x->mark = r->stamp;
    if (vsched__nodevec_push(&r->nodes, x) != VSCHED_OK)
        abort();
    if (r->nodes.n > r->cap_parent) {
        r->cap_parent = r->cap_parent ? r->cap_parent * 2 : 64;
        size_t *v = realloc(r->parent, r->cap_parent * sizeof *v);
        if (v == NULL)
            abort();
        r->parent = v;
    }
    r->parent[r->nodes.n - 1] = parent;
}

static void region_visit(vsched__node *x, void *arg)
{
    region *r = arg;
    if (r->found)
        return;
    if (x == r->target) {
        r->found = 1;
        return;
    }
    if (x->mark == r->stamp ||
        (r->forward ? x->ord > r->bound : x->ord < r->bound))
        return;
    region_add(r, x, r->from);
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

static int by_ord(const void *a, const void *b)
{
    int64_t x = (*(vsched__node *const *)a)->ord;
    int64_t y = (*(vsched__node *const *)b)->ord;
    return x < y ? -1 : x > y;
}

static int64_t *ords_of(const vsched__nodevec *v, size_t *n, int64_t *out)
{
    for (uint32_t i = 0; i < v->n; i++)
        out[(*n)++] = v->v[i]->ord;
    return out;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

char *vsched__cycle_through(vsched *s, vsched__node *up, vsched__node *n)
{
    if (up == n)
        return cycle_message(&n, 1);
    if (up->ord < n->ord)
        return NULL; /* the order allows it */
    /* Forward from n, within ord <= ord(up): reaching up is a cycle. */
    region fw = {.target = up, .bound = up->ord, .forward = 1,
                 .stamp = vsched__graph_stamp(&s->graph)};
    region_add(&fw, n, SIZE_MAX);
    for (size_t at = 0; at < fw.nodes.n && !fw.found; at++) {
        fw.from = at;
        each_down(fw.nodes.v[at], region_visit, &fw);
    }
    char *msg = NULL;
    if (fw.found) {
        /* nodes[from] is waited on by up; walk back to n. The chain in
         * waiting order: n, up, nodes[from], ..., the first after n. */
        size_t len = 1;
        for (size_t i = fw.from; i != SIZE_MAX; i = fw.parent[i])
            len++;
        vsched__node **chain = malloc(len * sizeof *chain);
        if (chain == NULL)
            abort();
        chain[0] = n;
        chain[1] = up;
        size_t k = 2;
        for (size_t i = fw.from; i != SIZE_MAX && fw.nodes.v[i] != n;
             i = fw.parent[i])
            chain[k++] = fw.nodes.v[i];
        msg = cycle_message(chain, k);
        free(chain);
        vsched__nodevec_free(&fw.nodes);
        free(fw.parent);
        return msg;
    }
    /* Backward from up, within ord >= ord(n). */
    region bw = {.target = NULL, .bound = n->ord, .forward = 0,
                 .stamp = vsched__graph_stamp(&s->graph)};
    region_add(&bw, up, SIZE_MAX);
    for (size_t at = 0; at < bw.nodes.n; at++) {
        bw.from = at;
        each_up_analysis(s, bw.nodes.v[at], region_visit, &bw);
    }
    /* Deal the region's order numbers out again: up's side first, each
     * side keeping its own relative order. */
    size_t total = fw.nodes.n + bw.nodes.n, k = 0;
    int64_t *ords = malloc((total + 1) * sizeof *ords);
    if (ords == NULL)
        abort();
    ords_of(&bw.nodes, &k, ords);
    ords_of(&fw.nodes, &k, ords);
    qsort(ords, total, sizeof *ords, cmp_i64);
    qsort(bw.nodes.v, bw.nodes.n, sizeof *bw.nodes.v, by_ord);
    qsort(fw.nodes.v, fw.nodes.n, sizeof *fw.nodes.v, by_ord);
    k = 0;
    for (uint32_t i = 0; i < bw.nodes.n; i++)
        bw.nodes.v[i]->ord = ords[k++];
    for (uint32_t i = 0; i < fw.nodes.n; i++)
        fw.nodes.v[i]->ord = ords[k++];
    free(ords);
    vsched__nodevec_free(&fw.nodes);
    vsched__nodevec_free(&bw.nodes);
    free(fw.parent);
    free(bw.parent);
    return NULL;
}
