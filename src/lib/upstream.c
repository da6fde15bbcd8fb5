/*
 * upstream -- what a node waits on: the live object of a name, priority
 * and weight inheritance, and linking an Analysis to a blocker's, where
 * blocker cycles are found as they form.
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
#include "unit.h"

vsched__file *vsched__live(vsched *s, vsched__file *f)
{
    if (!f->retired)
        return f;
    int created;
    vsched__file *live =
        vsched__files_ensure_kept(&s->files, f->name, &created);
    if (live == NULL)
        abort(); /* cannot gate on nothing; exhaustion is fatal here */
    return live;
}

/* The live object of f's name if there is one (no ensure). */
static vsched__file *live_peek(vsched *s, vsched__file *f)
{
    return f->retired ? vsched__files_find_kept(&s->files, f->name) : f;
}

vsched__node *vsched__blocker_analysis(vsched *s, vsched__file *b)
{
    vsched__file *live = live_peek(s, b);
    return live != NULL ? live->analysis : NULL;
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
        for (size_t i = 0; i < vsched__file_n_blockers(f); i++) {
            vsched__file *b = live_peek(s, vsched__file_blocker(f, i));
            if (b != NULL && b->analysis != NULL &&
                !vsched__node_terminal(b->analysis))
                fn(b->analysis, arg);
        }
        /* A unit runs together: its members are each other's upstream. */
        if (vsched__node_unit(n) != NULL)
            for (uint32_t i = 0; i < vsched__node_unit(n)->members.n; i++) {
                vsched__node *m = vsched__node_unit(n)->members.v[i];
                if (m != n && vsched__node_unit(m) == vsched__node_unit(n))
                    fn(m, arg);
            }
        break;
    case VSCHED__K_JOB:
        for (size_t i = 0; i < n->k.job->n_deps; i++)
            if (!vsched__node_terminal(n->k.job->deps[i].up))
                fn(n->k.job->deps[i].up, arg);
        break;
    default: break;
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
 * jobs are never upstream of file stages). The search runs over VERTICES:
 * an Analysis, or a unit (unit.h) standing for all its members, with one
 * order number and one traversal mark. Every vertex that still waits has
 * an order number, smaller upstream than downstream: the invariant of a
 * topological order (Pearce and Kelly's dynamic algorithm). Linking
 * up -> n (n waits on up):
 *
 *   - ord(up) < ord(n): the order already allows it; nothing to search;
 *   - else the affected region is searched: F, downstream of n (its
 *     waiting dependents, through the edges) among the vertices ordered at
 *     most ord(up); B, upstream of up (through the blockers) among those
 *     ordered at least ord(n). A vertex in both -- up reached from n is
 *     one -- lies on a cycle through the new edge: F and B meet exactly in
 *     the strongly connected component the edge closes (with up and n).
 *   - no cycle: the region's order numbers are dealt out again, B first,
 *     then F, each keeping its relative order;
 *   - a cycle, where the executor's language forbids them: n fails with a
 *     message naming the chain, and nothing is linked;
 *   - a cycle otherwise: the component becomes one unit (merging units in
 *     it); the numbers are dealt B-only, the unit, F-only -- no edge
 *     leaves F for B outside the component, so the order holds.
 *
 * Doomed nodes (unit.h) are invisible to the search: their order number is
 * their dissolved unit's, shared; their edges move to their replacements,
 * and are searched then.
 *
 * The cost is the size of that region, not of the graph. New Analyses are
 * ordered last, or first when made as a blocker of another (where an
 * upstream belongs), so chains discovered file by file cost nothing.
 * Iterative throughout.
 */

static int64_t ord_of(const vsched__node *x)
{
    return vsched__node_unit(x) != NULL ? vsched__node_unit(x)->ord
                                        : x->k.an.ord;
}

static void set_ord(vsched__node *x, int64_t o)
{
    if (vsched__node_unit(x) != NULL)
        vsched__node_unit(x)->ord = o;
    else
        x->k.an.ord = o;
}

static uint32_t mark_of(const vsched__node *x)
{
    return vsched__node_unit(x) != NULL ? vsched__node_unit(x)->mark : x->mark;
}

static void set_mark(vsched__node *x, uint32_t m)
{
    if (vsched__node_unit(x) != NULL)
        vsched__node_unit(x)->mark = m;
    else
        x->mark = m;
}

static int same_vertex(const vsched__node *a, const vsched__node *b)
{
    return a == b || (vsched__node_unit(a) != NULL &&
                      vsched__node_unit(a) == vsched__node_unit(b));
}

/* Calls fn on each member of x's vertex. */
static void each_member(vsched__node *x, up_fn fn, void *arg)
{
    vsched__unit *u = vsched__node_unit(x);
    if (u == NULL) {
        fn(x, arg);
        return;
    }
    for (uint32_t i = 0; i < u->members.n; i++)
        if (vsched__node_unit(u->members.v[i]) == u)
            fn(u->members.v[i], arg);
}

typedef struct step {
    up_fn fn;
    void *arg;
    vsched *s;
    const vsched__unit *u; /* the vertex's unit, or NULL */
} step;

/* Downstream vertices of a member: the Analyses its edges release. */
static void down_of_member(vsched__node *m, void *arg)
{
    step *st = arg;
    for (uint32_t i = 0; i < m->down.n; i++) {
        vsched__node *d = m->down.v[i];
        if (d->kind == VSCHED__K_ANALYSIS && !vsched__node_terminal(d) &&
            !d->doomed && (st->u == NULL || vsched__node_unit(d) != st->u))
            st->fn(d, st->arg);
    }
}

/* Upstream vertices of a member: the unfinished Analyses its edges wait
 * on. Edges only -- not the blocker lists, which also name what is about
 * to be linked (the rest of a node being gated, a node detached by a
 * sweep, a doomed one): the order must hold for edges, and a search that
 * followed a relation not yet an edge would deal numbers against it. */
static void up_of_member(vsched__node *m, void *arg)
{
    step *st = arg;
    for (uint32_t i = 0; i < m->k.an.ups.n; i++) {
        vsched__node *a = m->k.an.ups.v[i];
        if (!vsched__node_terminal(a) && !a->doomed &&
            (st->u == NULL || vsched__node_unit(a) != st->u))
            st->fn(a, st->arg);
    }
}

static void each_down_v(vsched__node *x, up_fn fn, void *arg)
{
    step st = {fn, arg, NULL, vsched__node_unit(x)};
    each_member(x, down_of_member, &st);
}

static void each_up_v(vsched *s, vsched__node *x, up_fn fn, void *arg)
{
    step st = {fn, arg, s, vsched__node_unit(x)};
    each_member(x, up_of_member, &st);
}

typedef struct region {
    vsched__nodevec nodes; /* visited vertices, in discovery order */
    size_t *parent;        /* parent[i]: index of who found nodes[i] */
    size_t cap_parent;
    size_t from;   /* index being expanded */
    int64_t bound; /* forward: ord <= bound; backward: >= */
    int forward;
    uint32_t stamp;
    uint32_t other;       /* the other search's stamp (backward) */
    vsched__nodevec meet; /* backward: vertices the forward one had */
} region;

static void region_add(region *r, vsched__node *x, size_t parent)
{
    if (r->other != 0 && mark_of(x) == r->other &&
        vsched__nodevec_push(&r->meet, x) != VSCHED_OK)
        abort();
    set_mark(x, r->stamp);
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
    int64_t o = ord_of(x);
    if (mark_of(x) == r->stamp || (r->forward ? o > r->bound : o < r->bound))
        return;
    region_add(r, x, r->from);
}

static void region_free(region *r)
{
    vsched__nodevec_free(&r->nodes);
    vsched__nodevec_free(&r->meet);
    free(r->parent);
}

static size_t region_index(const region *r, const vsched__node *x)
{
    for (size_t i = 0; i < r->nodes.n; i++)
        if (same_vertex(r->nodes.v[i], x))
            return i;
    abort(); /* only asked for what it visited */
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

/* The chain through x, where the searches met: n waits on up, up on ...
 * x (back along B's discovery), x on ... n (along F's). */
static char *chain_message(const region *fw, const region *bw,
                           vsched__node *up, vsched__node *n, vsched__node *x)
{
    size_t cap = fw->nodes.n + bw->nodes.n + 2, k = 0;
    vsched__node **chain = malloc(cap * sizeof *chain);
    if (chain == NULL)
        abort();
    chain[k++] = n;
    size_t b0 = k;
    for (size_t i = region_index(bw, x); i != SIZE_MAX; i = bw->parent[i])
        chain[k++] = bw->nodes.v[i]; /* x ... up */
    for (size_t i = b0, j = k - 1; i < j; i++, j--) {
        vsched__node *t = chain[i];
        chain[i] = chain[j];
        chain[j] = t; /* up ... x */
    }
    if (same_vertex(x, n))
        k--; /* x is n: the chain closes there */
    else
        for (size_t i = fw->parent[region_index(fw, x)];
             i != SIZE_MAX && i != 0; i = fw->parent[i])
            chain[k++] = fw->nodes.v[i]; /* after x, before n */
    char *msg = cycle_message(chain, k);
    free(chain);
    return msg;
}

static int by_ord(const void *a, const void *b)
{
    int64_t x = ord_of(*(vsched__node *const *)a);
    int64_t y = ord_of(*(vsched__node *const *)b);
    return x < y ? -1 : x > y;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Keep the vertices of v marked `keep` (in place). */
static void keep_marked(vsched__nodevec *v, uint32_t keep)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < v->n; i++)
        if (mark_of(v->v[i]) == keep)
            v->v[k++] = v->v[i];
    v->n = k;
}

/* Deal the region's order numbers out again: B-only, then the component
 * (one vertex; NULL when there is none), then F-only, each in its old
 * relative order. Returns the component's number. */
static int64_t redeal(region *fw, region *bw, const vsched__nodevec *scc)
{
    size_t total = fw->nodes.n + bw->nodes.n, k = 0;
    int64_t *ords = malloc((total + 1) * sizeof *ords);
    if (ords == NULL)
        abort();
    /* Each vertex once: the component's are in both searches. */
    keep_marked(&bw->nodes, bw->stamp);
    keep_marked(&fw->nodes, fw->stamp);
    for (uint32_t i = 0; i < bw->nodes.n; i++)
        ords[k++] = ord_of(bw->nodes.v[i]);
    for (uint32_t i = 0; i < fw->nodes.n; i++)
        ords[k++] = ord_of(fw->nodes.v[i]);
    for (uint32_t i = 0; scc != NULL && i < scc->n; i++)
        ords[k++] = ord_of(scc->v[i]);
    qsort(ords, k, sizeof *ords, cmp_i64);
    qsort(bw->nodes.v, bw->nodes.n, sizeof *bw->nodes.v, by_ord);
    qsort(fw->nodes.v, fw->nodes.n, sizeof *fw->nodes.v, by_ord);
    /* B-only takes the lowest numbers and F-only the highest: B's never
     * rise and F's never fall, so edges from outside the region still
     * agree (the component's collapse leaves numbers unused between). */
    for (uint32_t i = 0; i < bw->nodes.n; i++)
        set_ord(bw->nodes.v[i], ords[i]);
    int64_t mid = scc != NULL && scc->n > 0 ? ords[bw->nodes.n] : 0;
    for (uint32_t i = 0; i < fw->nodes.n; i++)
        set_ord(fw->nodes.v[i], ords[k - fw->nodes.n + i]);
    free(ords);
    return mid;
}

typedef enum link_verdict {
    LINK_EDGE, /* no cycle: link it */
    LINK_UNIT, /* a cycle, built as a unit: nothing to link */
    LINK_FAIL  /* a cycle where they are errors: *msg says which */
} link_verdict;

static link_verdict search(vsched *s, vsched__node *up, vsched__node *n,
                           char **msg)
{
    int fail = s->opts.blocker_cycles_fail;
    if (ord_of(up) < ord_of(n))
        return LINK_EDGE; /* the order allows it */
    region fw = {.bound = ord_of(up),
                 .forward = 1,
                 .stamp = vsched__graph_stamp(&s->graph)};
    region_add(&fw, n, SIZE_MAX);
    for (size_t at = 0; at < fw.nodes.n; at++) {
        fw.from = at;
        each_down_v(fw.nodes.v[at], region_visit, &fw);
    }
    region bw = {.bound = ord_of(n),
                 .forward = 0,
                 .stamp = vsched__graph_stamp(&s->graph),
                 .other = fw.stamp};
    region_add(&bw, up, SIZE_MAX);
    for (size_t at = 0; at < bw.nodes.n; at++) {
        bw.from = at;
        each_up_v(s, bw.nodes.v[at], region_visit, &bw);
    }
    if (bw.meet.n == 0) {
        redeal(&fw, &bw, NULL);
        region_free(&fw);
        region_free(&bw);
        return LINK_EDGE;
    }
    if (fail) {
        *msg = chain_message(&fw, &bw, up, n, bw.meet.v[0]);
        region_free(&fw);
        region_free(&bw);
        return LINK_FAIL;
    }
    /* The component: where the searches met, with up and n. */
    uint32_t scc_mark = vsched__graph_stamp(&s->graph);
    vsched__nodevec scc = {0};
    vsched__node *ends[2] = {up, n};
    for (uint32_t i = 0; i < bw.meet.n + 2; i++) {
        vsched__node *x = i < bw.meet.n ? bw.meet.v[i] : ends[i - bw.meet.n];
        if (mark_of(x) == scc_mark)
            continue;
        set_mark(x, scc_mark);
        if (vsched__nodevec_push(&scc, x) != VSCHED_OK)
            abort();
    }
    int64_t mid = redeal(&fw, &bw, &scc);
    vsched__unit *u = vsched__unit_form(s, scc.v, scc.n);
    u->ord = mid;
    vsched__nodevec_free(&scc);
    region_free(&fw);
    region_free(&bw);
    return LINK_UNIT;
}

int vsched__link_blocker(vsched *s, vsched__node *up, vsched__node *n,
                         vsched__pass *p)
{
    if (vsched__node_terminal(n))
        return -1;
    if (n->doomed)
        return 0; /* replaced after this operation, and gated anew */
    if (vsched__node_unit(n) != NULL &&
        vsched__node_unit(n)->state != VSCHED__UNIT_GATHER) {
        /* Released on inputs that change under it: the unit is built
         * again, from fresh nodes. */
        vsched__unit_dissolve(s, vsched__node_unit(n));
        return 0;
    }
    if (same_vertex(up, n)) {
        if (!s->opts.blocker_cycles_fail)
            return 0; /* inside one unit: nothing to wait for */
        vsched__node_fail(s, n, VSCHED_ECYCLE, cycle_message(&n, 1),
                          strdup(vsched__node_name(up)), NULL, 0, -1, p);
        return -1;
    }
    if (vsched__node_terminal(up) || up->doomed)
        return vsched__wait_on(s, up, n, 1, p); /* a doomed up's edges move
                                                   to its replacement, and
                                                   are searched then */
    char *msg = NULL;
    switch (search(s, up, n, &msg)) {
    case LINK_UNIT: return 0;
    case LINK_FAIL:
        vsched__node_fail(s, n, VSCHED_ECYCLE, msg,
                          strdup(vsched__node_name(up)), NULL, 0, -1, p);
        return -1;
    default: return vsched__wait_on(s, up, n, 1, p);
    }
}
