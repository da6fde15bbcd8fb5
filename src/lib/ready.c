/*
 * ready -- FIFO buckets under a heap of keys; see ready.h.
 */
#include <stdlib.h>

#include "pages.h"
#include "ready.h"

uint32_t vsched__weight_class(uint32_t w)
{
    if (w == 0)
        return 0;
    /* 4 classes per octave: the octave, then the two bits below the top
     * bit. */
    unsigned top = 31u - (unsigned)__builtin_clz(w);
    unsigned frac = top >= 2 ? (w >> (top - 2)) & 3u : (w << (2 - top)) & 3u;
    return 1u + top * 4u + frac;
}

void vsched__rq_init(vsched__rq *q)
{
    *q = (vsched__rq){0};
}

void vsched__rq_fini(vsched__rq *q)
{
    for (size_t i = 0; i < q->table_cap; i++)
        for (vsched__bucket *b = q->table[i]; b != NULL;) {
            vsched__bucket *next = b->chain;
            vsched__pages_free(b->ring, b->cap * sizeof *b->ring);
            free(b);
            b = next;
        }
    free(q->table);
    free(q->heap);
    *q = (vsched__rq){0};
}

static int better(const vsched__bucket *a, const vsched__bucket *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return a->wclass > b->wclass;
}

static void heap_set(vsched__rq *q, size_t i, vsched__bucket *b)
{
    q->heap[i] = b;
    b->heap_index = (uint32_t)i;
}

static void sift_up(vsched__rq *q, size_t i)
{
    vsched__bucket *b = q->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!better(b, q->heap[parent]))
            break;
        heap_set(q, i, q->heap[parent]);
        i = parent;
    }
    heap_set(q, i, b);
}

static void sift_down(vsched__rq *q, size_t i)
{
    vsched__bucket *b = q->heap[i];
    for (;;) {
        size_t l = 2 * i + 1, best = i;
        vsched__bucket *bb = b;
        if (l < q->heap_n && better(q->heap[l], bb))
            best = l, bb = q->heap[l];
        if (l + 1 < q->heap_n && better(q->heap[l + 1], bb))
            best = l + 1, bb = q->heap[l + 1];
        if (best == i)
            break;
        heap_set(q, i, bb);
        i = best;
    }
    heap_set(q, i, b);
}

static size_t key_slot(const vsched__rq *q, int32_t priority, uint32_t wc)
{
    uint64_t k = (uint64_t)(uint32_t)priority << 32 | wc;
    return (size_t)(k * 0x9e3779b97f4a7c15ull >> 40) & (q->table_cap - 1);
}

static vsched__bucket *bucket_of(vsched__rq *q, int32_t priority, uint32_t wc)
{
    if (q->table_cap > 0)
        for (vsched__bucket *b = q->table[key_slot(q, priority, wc)];
             b != NULL; b = b->chain)
            if (b->priority == priority && b->wclass == wc)
                return b;
    if (q->table_n + 1 > q->table_cap) {
        size_t cap = q->table_cap ? q->table_cap * 2 : 16;
        vsched__bucket **t = calloc(cap, sizeof *t);
        if (t == NULL)
            abort(); /* a ready node must not be lost */
        vsched__rq old = *q;
        q->table = t;
        q->table_cap = cap;
        for (size_t i = 0; i < old.table_cap; i++)
            for (vsched__bucket *b = old.table[i]; b != NULL;) {
                vsched__bucket *next = b->chain;
                size_t s = key_slot(q, b->priority, b->wclass);
                b->chain = t[s];
                t[s] = b;
                b = next;
            }
        free(old.table);
    }
    vsched__bucket *b = calloc(1, sizeof *b);
    if (b == NULL)
        abort();
    b->priority = priority;
    b->wclass = wc;
    size_t s = key_slot(q, priority, wc);
    b->chain = q->table[s];
    q->table[s] = b;
    q->table_n++;
    return b;
}

/* Ring capacities are powers of two (64, doubling); an emptied ring
 * larger than this is freed, and one larger than this that is less than
 * a quarter full is halved. */
#define RING_KEEP 4096u

/* Move b's entries, in order, into a new ring of cap entries (cap >= n).
 * 0 on exhaustion (b unchanged). */
static int ring_resize(vsched__bucket *b, uint32_t cap)
{
    vsched__entry *ring = vsched__pages_alloc(cap * sizeof *ring);
    if (ring == NULL)
        return 0;
    for (uint32_t i = 0; i < b->n; i++)
        ring[i] = b->ring[(b->head + i) & (b->cap - 1)];
    vsched__pages_free(b->ring, b->cap * sizeof *ring);
    b->ring = ring;
    b->head = 0;
    b->cap = cap;
    return 1;
}

void vsched__rq_push(vsched__rq *q, struct vsched__node *n, int32_t priority,
                     uint32_t weight_us, uint32_t seq)
{
    vsched__bucket *b =
        bucket_of(q, priority, vsched__weight_class(weight_us));
    if (b->n == b->cap && !ring_resize(b, b->cap ? b->cap * 2 : 64))
        abort();
    b->ring[(b->head + b->n) & (b->cap - 1)] = (vsched__entry){n, seq};
    if (b->n++ == 0) {
        if (q->heap_n == q->heap_cap) {
            size_t cap = q->heap_cap ? q->heap_cap * 2 : 16;
            vsched__bucket **h = realloc(q->heap, cap * sizeof *h);
            if (h == NULL)
                abort();
            q->heap = h;
            q->heap_cap = cap;
        }
        heap_set(q, q->heap_n, b);
        sift_up(q, q->heap_n++);
    }
    q->entries++;
}

int vsched__rq_top_priority(const vsched__rq *q, int32_t *priority)
{
    if (q->heap_n == 0)
        return 0;
    *priority = q->heap[0]->priority;
    return 1;
}

int vsched__rq_top_key(const vsched__rq *q, vsched__rqkey *key)
{
    if (q->heap_n == 0)
        return 0;
    key->priority = q->heap[0]->priority;
    key->wclass = q->heap[0]->wclass;
    return 1;
}

struct vsched__node *vsched__rq_peek(const vsched__rq *q)
{
    if (q->heap_n == 0)
        return NULL;
    const vsched__bucket *b = q->heap[0];
    return b->ring[b->head].node;
}

int vsched__rq_pop(vsched__rq *q, vsched__entry *out)
{
    if (q->heap_n == 0)
        return 0;
    vsched__bucket *b = q->heap[0];
    *out = b->ring[b->head];
    b->head = (b->head + 1) & (b->cap - 1);
    q->entries--;
    if (--b->n == 0) {
        /* The bucket leaves the heap (it stays in the table for reuse).
         * A ring grown past RING_KEEP entries goes: a batch of a million
         * files fills one to a million entries once, and the memory is
         * better given back than kept for a burst that may not come. */
        b->head = 0;
        if (b->cap > RING_KEEP) { /* emptied */
            vsched__pages_free(b->ring, b->cap * sizeof *b->ring);
            b->ring = NULL;
            b->cap = 0;
        }
        if (--q->heap_n > 0) {
            heap_set(q, 0, q->heap[q->heap_n]);
            sift_down(q, 0);
        }
    } else if (b->cap > RING_KEEP && b->n < b->cap / 4) {
        /* A large ring drained slowly (a million loads let out by the
         * read-ahead window over the whole run) gives its memory back as
         * it goes, not all at the end: halved at a quarter full, each
         * copy paid for by the pops since the last (and, on exhaustion,
         * simply kept). */
        (void)ring_resize(b, b->cap / 2);
    }
    return 1;
}
