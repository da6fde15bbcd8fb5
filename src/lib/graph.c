/*
 * graph -- node memory, the id index, explicit edges and the ready queues;
 * see graph.h.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "pages.h"
#include "unit.h"

uint64_t vsched__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int vsched__nodevec_push(vsched__nodevec *v, vsched__node *n)
{
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 4;
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
    *v = (vsched__nodevec){0};
}

/* ---- edge vectors: small arrays recycled through the graph ---------------- */

/* Class c holds arrays of 4 << c pointers; larger ones are malloc'ed. */
static int edge_class(uint32_t cap)
{
    for (int c = 0; c < VSCHED__EDGE_CLASSES; c++)
        if (cap == 4u << c)
            return c;
    return -1;
}

static vsched__node **edge_array(vsched__graph *g, uint32_t cap)
{
    int c = edge_class(cap);
    if (c < 0)
        return malloc(cap * sizeof(vsched__node *));
    void **a = g->edge_free[c];
    if (a != NULL) {
        g->edge_free[c] = *a; /* a free array's first word links the list */
        return (vsched__node **)a;
    }
    return vsched__arena_alloc(&g->edge_arena, cap * sizeof(vsched__node *));
}

static void edge_array_free(vsched__graph *g, vsched__node **v, uint32_t cap)
{
    if (v == NULL)
        return;
    int c = edge_class(cap);
    if (c < 0) {
        free(v);
        return;
    }
    *(void **)v = g->edge_free[c];
    g->edge_free[c] = (void **)v;
}

int vsched__edgevec_push(vsched__graph *g, vsched__nodevec *v, vsched__node *n)
{
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? v->cap * 2 : 4;
        vsched__node **nv = edge_array(g, cap);
        if (nv == NULL)
            return VSCHED_ENOMEM;
        if (v->n > 0)
            memcpy(nv, v->v, v->n * sizeof *nv);
        edge_array_free(g, v->v, v->cap);
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = n;
    return VSCHED_OK;
}

void vsched__edgevec_free(vsched__graph *g, vsched__nodevec *v)
{
    edge_array_free(g, v->v, v->cap);
    *v = (vsched__nodevec){0};
}

void vsched__graph_init(vsched__graph *g)
{
    *g = (vsched__graph){0};
    for (int q = 0; q < 2; q++)
        vsched__rq_init(&g->ready[q]);
}

/* ---- the id index: open addressing on the id's low bits ------------------- *
 *
 * Ids are handed out in order, so nodes made together take neighbouring
 * slots: an insertion touches the cache lines the one before it did and
 * probes no other node (a scattering hash made both a cache miss at a
 * million files, half of admission's time). The bits above the table's
 * size are folded in so that ids a multiple of the size apart -- one
 * node kept per round of a steady churn -- do not pile into one chain.
 *
 * Robin Hood order: along a run, entries sit in the order of their home
 * slots (an insertion takes the place of the first entry nearer its own
 * home, which moves on). So a lookup stops at the first entry nearer its
 * home than the probe is, and a deletion moves back only the entries
 * displaced past the freed slot, stopping at one in its home: nodes
 * made together sit at home, one run as long as they are, and freeing
 * them in id order moved every later entry of the run per free. */

static size_t id_home(size_t cap, uint64_t id)
{
    unsigned bits = (unsigned)__builtin_ctzll((unsigned long long)cap);
    return (size_t)(id ^ (id >> bits)) & (cap - 1);
}

/* How far slot i is from the home of the entry in it. */
static size_t id_dist(size_t cap, const vsched__node *m, size_t i)
{
    return (i - id_home(cap, m->id)) & (cap - 1);
}

/* The slot holding id, or (size_t)-1. */
static size_t id_find(vsched__node *const *t, size_t cap, uint64_t id)
{
    size_t mask = cap - 1;
    size_t i = id_home(cap, id);
    for (size_t d = 0; t[i] != NULL && id_dist(cap, t[i], i) >= d; d++) {
        if (t[i]->id == id)
            return i;
        i = (i + 1) & mask;
    }
    return (size_t)-1;
}

/* Put n in t (it has a free slot). */
static void id_insert(vsched__node **t, size_t cap, vsched__node *n)
{
    size_t mask = cap - 1;
    size_t i = id_home(cap, n->id);
    for (size_t d = 0; t[i] != NULL; d++) {
        size_t de = id_dist(cap, t[i], i);
        if (de < d) { /* nearer its home: n takes its place */
            vsched__node *m = t[i];
            t[i] = n;
            n = m;
            d = de;
        }
        i = (i + 1) & mask;
    }
    t[i] = n;
}

static int ids_grow(vsched__graph *g)
{
    size_t cap = g->ids_cap ? g->ids_cap * 2 : 1024;
    size_t want = g->ids_n + 1 + g->ids_bulk;
    while (want * 4 > cap * 3 && cap < ((size_t)1 << 40))
        cap *= 2;
    vsched__node **t = vsched__table_alloc(cap);
    if (t == NULL)
        return VSCHED_ENOMEM;
    for (size_t i = 0; i < g->ids_cap; i++)
        if (g->ids[i] != NULL)
            id_insert(t, cap, g->ids[i]);
    vsched__table_free(g->ids, g->ids_cap);
    g->ids = t;
    g->ids_cap = cap;
    return VSCHED_OK;
}

static void ids_remove(vsched__graph *g, const vsched__node *n)
{
    if (g->ids_cap == 0)
        return;
    size_t mask = g->ids_cap - 1;
    size_t i = id_find(g->ids, g->ids_cap, n->id);
    if (i == (size_t)-1 || g->ids[i] != n)
        return;
    /* Backward shift: each entry after the hole that is away from its
     * home moves one slot back, up to an empty slot or one at home. */
    g->ids_n--;
    for (size_t j = (i + 1) & mask;
         g->ids[j] != NULL && id_dist(g->ids_cap, g->ids[j], j) > 0;
         j = (j + 1) & mask) {
        g->ids[i] = g->ids[j];
        i = j;
        g->ids_moved++;
    }
    g->ids[i] = NULL;
}

vsched__node *vsched__graph_find(const vsched__graph *g, uint64_t id)
{
    if (g->ids_cap == 0 || id == 0)
        return NULL;
    size_t i = id_find(g->ids, g->ids_cap, id);
    return i != (size_t)-1 ? g->ids[i] : NULL;
}

void vsched__graph_each(const vsched__graph *g,
                        void (*fn)(vsched__node *, void *), void *user)
{
    for (size_t i = 0; i < g->ids_cap; i++)
        if (g->ids[i] != NULL)
            fn(g->ids[i], user);
}

/* ---- node memory ------------------------------------------------------------ */

/* Process-wide, so an id is never reused, not even across schedulers. */
static atomic_uint_fast64_t next_node_id = 1;

/* Node memory comes in slabs of SLAB nodes of one kind, each of its kind's
 * size (vsched__node_size), threaded onto that kind's free list. Slabs are
 * carved from the graph's node arena (in huge pages once it is large:
 * arena.h) and freed with it at teardown. Under AddressSanitizer a slab
 * holds one node and is an allocation of its own, so that a read of
 * another kind's member (past the end of a smaller node) is reported, not
 * hidden in the next node; such slabs are linked for teardown. */
#define SLAB VSCHED__NODE_SLAB

typedef struct slab {
    struct slab *next;
    max_align_t nodes[]; /* SLAB nodes of one kind */
} slab;

static char *slab_memory(vsched__graph *g, size_t bytes)
{
#if VSCHED__NODE_SLAB == 1
    slab *sl = malloc(sizeof *sl + bytes);
    if (sl == NULL)
        return NULL;
    sl->next = g->slabs;
    g->slabs = sl;
    return (char *)sl->nodes;
#else
    return vsched__arena_alloc(&g->node_arena, bytes);
#endif
}

size_t vsched__node_size(vsched__node_kind kind)
{
    switch (kind) {
    case VSCHED__K_SOURCE: return offsetof(vsched__node, k);
    case VSCHED__K_ANALYSIS:
        return offsetof(vsched__node, k) + sizeof(((vsched__node *)0)->k.an);
    case VSCHED__K_ARTIFACT:
        return offsetof(vsched__node, k) + sizeof(((vsched__node *)0)->k.art);
    case VSCHED__K_JOB: break;
    }
    return offsetof(vsched__node, k) + sizeof(((vsched__node *)0)->k.job);
}

static int slab_grow(vsched__graph *g, vsched__node_kind kind)
{
    size_t size = vsched__node_size(kind);
    char *base = slab_memory(g, SLAB * size);
    if (base == NULL)
        return VSCHED_ENOMEM;
    for (size_t i = SLAB; i-- > 0;) {
        vsched__node *n = (vsched__node *)(void *)(base + i * size);
        n->file = (struct vsched__file *)g->free_list[kind];
        g->free_list[kind] = n;
    }
    return VSCHED_OK;
}

vsched__node *vsched__node_new(vsched__graph *g, vsched__node_kind kind,
                               int priority)
{
    if ((g->ids_n + 1) * 4 > g->ids_cap * 3 && ids_grow(g) != VSCHED_OK)
        return NULL;
    if (g->free_list[kind] == NULL && slab_grow(g, kind) != VSCHED_OK)
        return NULL;
    vsched__node *n = g->free_list[kind];
    g->free_list[kind] = (vsched__node *)n->file; /* the free link */
    memset(n, 0, vsched__node_size(kind));
    n->id = (uint64_t)atomic_fetch_add(&next_node_id, 1);
    n->kind = (uint8_t)kind;
    n->state = VSCHED__PENDING;
    n->priority = priority;
    n->refs = 1;
    n->in_structure = 1;
    atomic_init(&n->cancel, 0);
    id_insert(g->ids, g->ids_cap, n);
    g->ids_n++;
    g->live++;
    return n;
}

static void node_free(vsched *s, vsched__node *n)
{
    vsched__graph *g = &s->graph;
    ids_remove(g, n);
    g->retired--;
    g->edges_cap -= n->down.cap;
    for (uint32_t i = 0; i < n->down.n; i++)
        vsched__node_unref(s, n->down.v[i]);
    vsched__edgevec_free(g, &n->down);
    vsched__ups_clear(s, n);
    vsched__outcome_free(n->why);
    if (vsched__node_job(n) != NULL)
        vsched__job_free(s, n);
    if (n->file != NULL)
        vsched__file_unref(s, n->file);
    n->file = (struct vsched__file *)g->free_list[n->kind];
    g->free_list[n->kind] = n;
}

void vsched__node_unref(vsched *s, vsched__node *n)
{
    if (--n->refs == 0)
        node_free(s, n);
}

void vsched__node_retire(vsched *s, vsched__node *n)
{
    if (!n->in_structure)
        return;
    n->in_structure = 0;
    s->graph.live--;
    s->graph.retired++;
    if (vsched__node_job(n) != NULL)
        vsched__job_forget(s, n); /* no reference cycles among the gone */
    vsched__node_unref(s, n);
}

void vsched__graph_fini(vsched__graph *g)
{
    /* Teardown: every task is back; free what is left, unlinked. */
    for (size_t i = 0; i < g->ids_cap; i++) {
        vsched__node *n = g->ids[i];
        if (n == NULL)
            continue;
        vsched__edgevec_free(g, &n->down);
        if (n->kind == VSCHED__K_ANALYSIS)
            vsched__edgevec_free(g, &n->k.an.ups);
    }
    vsched__table_free(g->ids, g->ids_cap);
    vsched__arena_fini(&g->edge_arena);
    for (slab *sl = g->slabs; sl != NULL;) {
        slab *next = sl->next;
        free(sl);
        sl = next;
    }
    vsched__arena_fini(&g->node_arena);
    for (int q = 0; q < 2; q++)
        vsched__rq_fini(&g->ready[q]);
    *g = (vsched__graph){0};
}

uint32_t vsched__graph_stamp(vsched__graph *g)
{
    if (++g->stamp == 0) {
        /* Wrapped: clear every mark so old stamps cannot collide. */
        for (size_t i = 0; i < g->ids_cap; i++)
            if (g->ids[i] != NULL)
                g->ids[i]->mark = 0;
        vsched__units_clear_marks(g);
        g->stamp = 1;
    }
    return g->stamp;
}

/* ---- explicit edges --------------------------------------------------------- */

int vsched__edge_add(vsched__graph *g, vsched__node *up, vsched__node *down)
{
    uint32_t cap = up->down.cap;
    if (vsched__edgevec_push(g, &up->down, down) != VSCHED_OK)
        return VSCHED_ENOMEM;
    g->edges_cap += up->down.cap - cap;
    vsched__node_ref(down);
    if (vsched__node_unit(down) != NULL)
        vsched__unit_busy(down);
    vsched__deps_add(down, 1);
    vsched__xdeps_add(down, 1);
    g->edges++;
    return VSCHED_OK;
}

void vsched__ups_add(vsched *s, vsched__node *up, vsched__node *down)
{
    vsched__nodevec *v = &down->k.an.ups;
    if (v->n == v->cap) {
        /* Full: drop the stale entries before growing. */
        uint32_t k = 0;
        for (uint32_t i = 0; i < v->n; i++) {
            if (vsched__node_terminal(v->v[i]))
                vsched__node_unref(s, v->v[i]);
            else
                v->v[k++] = v->v[i];
        }
        v->n = k;
    }
    if (vsched__edgevec_push(&s->graph, v, up) != VSCHED_OK)
        abort(); /* an edge is never half recorded */
    vsched__node_ref(up);
}

void vsched__ups_remove(vsched *s, vsched__node *down, vsched__node *up)
{
    vsched__nodevec *v = &down->k.an.ups;
    for (uint32_t i = 0; i < v->n; i++)
        if (v->v[i] == up) {
            v->v[i] = v->v[--v->n];
            vsched__node_unref(s, up);
            return;
        }
}

void vsched__ups_clear(vsched *s, vsched__node *down)
{
    if (down->kind != VSCHED__K_ANALYSIS)
        return;
    vsched__nodevec v = down->k.an.ups;
    down->k.an.ups = (vsched__nodevec){0};
    for (uint32_t i = 0; i < v.n; i++)
        vsched__node_unref(s, v.v[i]);
    vsched__edgevec_free(&s->graph, &v);
}

/* ---- ready queues (ready.h) ----------------------------------------------------- */

int vsched__node_queue(const vsched__node *n)
{
    return n->kind == VSCHED__K_SOURCE && n->phase == 0 ? VSCHED__Q_IO
                                                        : VSCHED__Q_CPU;
}

void vsched__push_ready(vsched *s, vsched__node *n)
{
    vsched__rq *q = &s->graph.ready[vsched__node_queue(n)];
    if (n->state != VSCHED__READY) {
        n->state = VSCHED__READY;
        q->valid++;
    }
    vsched__node_ref(n);
    vsched__rq_push(q, n, n->priority, n->weight_us, ++n->ready_seq);
    if (vsched__node_job(n) != NULL)
        vsched__job_enqueued(s, n); /* in the bounded ready queue of jobs */
    if (!n->admitted) {
        n->admitted = 1;
        if (n->admit_edges)
            vsched__job_admitted(s, n, NULL);
    }
}

void vsched__make_ready_if_free(vsched *s, vsched__node *n)
{
    if (n->state != VSCHED__PENDING || vsched__deps(n) != 0 || n->doomed)
        return;
    if (vsched__node_unit(n) != NULL)
        vsched__unit_note_free(s, n); /* the unit is released whole */
    else if (vsched__stage_admit(s, n))
        vsched__push_ready(s, n); /* else it waits for a resource */
}

static int entry_valid(const vsched__entry *e)
{
    return e->node->state == VSCHED__READY && e->node->ready_seq == e->seq;
}

void vsched__unready(vsched *s, vsched__node *n)
{
    if (vsched__node_reserved(n) != NULL || n->res_wait)
        vsched__stage_unreserve(s, n);
    if (n->state != VSCHED__READY)
        return;
    s->graph.ready[vsched__node_queue(n)].valid--;
    n->state = VSCHED__PENDING;
    n->ready_seq++;
}

/* Drop every entry: the stale ones, and (reset) the valid ones too. */
static void queue_clear(vsched *s, vsched__rq *q)
{
    vsched__entry e;
    while (vsched__rq_pop(q, &e)) {
        if (entry_valid(&e)) {
            e.node->state = VSCHED__PENDING;
            e.node->ready_seq++;
        }
        vsched__node_unref(s, e.node);
    }
    q->valid = 0;
}

static int key_is(const vsched__rq *r, const vsched__rqkey *only)
{
    vsched__rqkey k;
    return vsched__rq_top_key(r, &k) && k.priority == only->priority &&
           k.wclass == only->wclass;
}

vsched__node *vsched__pop_ready(vsched *s, int q, const vsched__rqkey *only)
{
    vsched__rq *r = &s->graph.ready[q];
    vsched__entry e;
    while (r->valid > 0 && (only == NULL || key_is(r, only)) &&
           vsched__rq_pop(r, &e)) {
        if (!entry_valid(&e)) {
            vsched__node_unref(s, e.node);
            continue;
        }
        r->valid--;
        e.node->state = VSCHED__PENDING; /* the caller starts or parks it */
        e.node->ready_seq++;
        return e.node; /* the entry's reference is the caller's */
    }
    if (r->valid == 0 && r->entries > 0)
        queue_clear(s, r); /* only stale entries are left */
    return NULL;
}

void vsched__ready_clear(vsched *s)
{
    for (int q = 0; q < 2; q++)
        queue_clear(s, &s->graph.ready[q]);
}

void vsched__node_start(vsched__node *n, uint64_t now_ns)
{
    n->state = VSCHED__RUNNING;
    if (n->started_ns == 0)
        n->started_ns = now_ns;
}
