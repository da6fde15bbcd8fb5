/*
 * test_alloc -- the core's allocation helpers: the arena behind the
 * dependents index, the MVCC history and the edge vectors, and the edge
 * vectors' per-size free lists (src/lib/arena.h, src/lib/graph.h).
 *
 * What they promise, each checked here:
 *   - arena memory is 16-byte aligned, zeroed, never overlapping, also
 *     for a request larger than a chunk; fini leaves a usable arena;
 *   - an edge vector keeps its entries, in order, across every growth
 *     (through each size class and past the largest into the heap);
 *   - a freed array of a class is the next one that class hands out, so
 *     a graph that keeps making and dropping edges reuses its memory.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "arena.h"
#include "cu.h"
#include "graph.h"

static void arena_memory_is_aligned_zeroed_and_disjoint(void)
{
    vsched__arena a = VSCHED__ARENA_INIT;
    enum {
        N = 3000
    };
    static unsigned char *p[N];
    static size_t len[N];
    for (size_t i = 0; i < N; i++) {
        len[i] = i % 97 == 0 ? 9000 : 1 + (i * 37) % 300; /* some > chunk */
        p[i] = vsched__arena_alloc(&a, len[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p[i]);
        CU_ASSERT_EQUAL((uintptr_t)p[i] % 16, 0);
        size_t nonzero = 0;
        for (size_t k = 0; k < len[i]; k++)
            nonzero += p[i][k] != 0;
        CU_ASSERT_EQUAL(nonzero, 0);
        memset(p[i], (int)(i % 251) + 1, len[i]);
    }
    /* Every block still holds its own pattern: none overlapped another. */
    size_t wrong = 0;
    for (size_t i = 0; i < N; i++)
        for (size_t k = 0; k < len[i]; k++)
            wrong += p[i][k] != (unsigned char)((i % 251) + 1);
    CU_ASSERT_EQUAL(wrong, 0);
    vsched__arena_fini(&a);
    CU_ASSERT_PTR_NULL(a.chunks);
    unsigned char *q = vsched__arena_alloc(&a, 40);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT_EQUAL(q[0] | q[39], 0);
    vsched__arena_fini(&a);
}

static void edge_vector_keeps_its_entries_across_every_growth(void)
{
    vsched__graph g;
    vsched__graph_init(&g);
    static vsched__node nodes[100];
    vsched__nodevec v = {0};
    for (uint32_t i = 0; i < 100; i++) {
        CU_ASSERT_EQUAL_FATAL(vsched__edgevec_push(&g, &v, &nodes[i]),
                              VSCHED_OK);
        CU_ASSERT_EQUAL(v.n, i + 1);
        size_t wrong = 0;
        for (uint32_t k = 0; k <= i; k++)
            wrong += v.v[k] != &nodes[k];
        CU_ASSERT_EQUAL(wrong, 0);
    }
    CU_ASSERT_EQUAL(v.cap, 128); /* 4, 8, 16, 32 from the graph, then heap */
    vsched__edgevec_free(&g, &v);
    CU_ASSERT_PTR_NULL(v.v);
    CU_ASSERT_EQUAL(v.n + v.cap, 0);
    vsched__graph_fini(&g);
}

static void freed_edge_arrays_are_reused_by_their_size_class(void)
{
    vsched__graph g;
    vsched__graph_init(&g);
    static vsched__node x;
    vsched__nodevec a = {0}, b = {0}, c = {0};
    CU_ASSERT_EQUAL(vsched__edgevec_push(&g, &a, &x), VSCHED_OK);
    vsched__node **first = a.v;
    vsched__edgevec_free(&g, &a);
    CU_ASSERT_EQUAL(vsched__edgevec_push(&g, &b, &x), VSCHED_OK);
    CU_ASSERT_PTR_EQUAL(b.v, first); /* the freed 4-array came back */
    /* Growing b to 8 frees its 4-array; c gets it. */
    for (int i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(vsched__edgevec_push(&g, &b, &x), VSCHED_OK);
    CU_ASSERT_EQUAL(b.cap, 8);
    CU_ASSERT_PTR_NOT_EQUAL(b.v, first);
    CU_ASSERT_EQUAL(vsched__edgevec_push(&g, &c, &x), VSCHED_OK);
    CU_ASSERT_PTR_EQUAL(c.v, first);
    CU_ASSERT_PTR_EQUAL(b.v[4], &x);
    vsched__edgevec_free(&g, &b);
    vsched__edgevec_free(&g, &c);
    vsched__graph_fini(&g);
}

static const vr_cu_test tests[] = {
    {"arena_memory_is_aligned_zeroed_and_disjoint",
     arena_memory_is_aligned_zeroed_and_disjoint},
    {"edge_vector_keeps_its_entries_across_every_growth",
     edge_vector_keeps_its_entries_across_every_growth},
    {"freed_edge_arrays_are_reused_by_their_size_class",
     freed_edge_arrays_are_reused_by_their_size_class},
    {NULL, NULL},
};

int main(void)
{
    return vr_cu_main("alloc", tests);
}
