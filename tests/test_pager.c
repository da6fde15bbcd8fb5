/*
 * test_pager -- huge blocks faulted in ahead of their writer
 * (src/lib/pager.h), against the core's allocation helpers directly.
 *
 * What the pager promises, each checked here through the kernel's own
 * account of which pages are mapped (mincore(2)):
 *   - a block queued through vsched__pages_alloc_ahead is faulted in by
 *     the pager thread, and reads as zero;
 *   - a block not queued is left alone: the pager touches only what it is
 *     given, so a plain huge block stays unmapped until written;
 *   - a block freed while queued is forgotten: its queued parts are
 *     counted as forgotten, not faulted, blocks mapped afterwards at the
 *     same addresses stay unmapped, and its places in the queue are free
 *     again (a live block queued behind many freed ones is faulted in);
 *   - an arena past 8 MiB keeps one spare huge chunk, faulted in once
 *     the chunk before it is half used (not before), and its next growth
 *     takes that spare;
 *   - the pager runs while a scheduler holds it: vsched_create starts the
 *     "vsched-pager" thread, the last vsched_destroy joins it, and with
 *     none held (or VSCHED_PAGER=0) nothing is faulted in;
 *   - holding and releasing from many threads at once, with blocks queued
 *     and freed meanwhile, neither hangs nor leaves a thread behind;
 *   - a forked child can use and free blocks, and start its own pager,
 *     also after releasing the holds it inherited.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#include <vsched/vsched.h>

#include "../bench/synth.h"
#include "arena.h"
#include "cu.h"
#include "pager.h"
#include "pages.h"
#include "threads.h"

/* Pages of [p, p + len) the kernel has mapped. */
static size_t resident(const void *p, size_t len)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t n = (len + (size_t)page - 1) / (size_t)page;
    unsigned char *vec = malloc(n);
    if (vec == NULL || mincore((void *)p, len, vec) != 0) {
        free(vec);
        return (size_t)-1;
    }
    size_t r = 0;
    for (size_t i = 0; i < n; i++)
        r += vec[i] & 1;
    free(vec);
    return r;
}

static size_t pages_of(size_t len)
{
    return (len + (size_t)sysconf(_SC_PAGESIZE) - 1) /
           (size_t)sysconf(_SC_PAGESIZE);
}

/* Wait up to 10 s for every page of the block to be mapped. */
static int wait_resident(const void *p, size_t len)
{
    for (int i = 0; i < 1000; i++) {
        if (resident(p, len) == pages_of(len))
            return 1;
        struct timespec ms = {0, 10000000};
        nanosleep(&ms, NULL);
    }
    return 0;
}

/* Wait until the pager has nothing queued that it may still reach: a
 * marker block queued last is faulted in (the queue is served in
 * order, and a part's rest goes behind what was queued before it). */
static void wait_drained(void)
{
    void *m = vsched__pages_alloc_ahead(VSCHED__HUGE_BYTES);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT(wait_resident(m, VSCHED__HUGE_BYTES));
    vsched__pages_free(m, VSCHED__HUGE_BYTES);
}

static int pager_disabled(void)
{
    const char *v = getenv("VSCHED_PAGER");
    return v != NULL && strcmp(v, "0") == 0;
}

/* Threads of this process named "vsched-pager". */
static int pager_threads(void)
{
    return vr_threads(VR_PAGER_THREAD, 1);
}

/* Poll (up to 2 s) until the pager threads number want: a joined thread
 * may stay listed for a moment after its join. */
static int pager_threads_become(int want)
{
    int n = pager_threads();
    for (int i = 0; i < 200 && n != want; i++) {
        struct timespec ms = {0, 10000000};
        nanosleep(&ms, NULL);
        n = pager_threads();
    }
    return n;
}

static void a_queued_block_is_faulted_in_and_an_unqueued_one_is_not(void)
{
    if (pager_disabled())
        return; /* the VSCHED_PAGER=0 pass checks the other side below */
    unsigned hold = vsched__pager_hold();
    size_t len = 4 * VSCHED__HUGE_BYTES + 12345;
    size_t steps0;
    vsched__pager_counts(&steps0, NULL);
    unsigned char *plain = vsched__pages_alloc(len);
    unsigned char *ahead = vsched__pages_alloc_ahead(len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(plain);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ahead);
    CU_ASSERT(wait_resident(ahead, len));
    size_t steps1;
    vsched__pager_counts(&steps1, NULL);
    CU_ASSERT(steps1 - steps0 >= 5); /* a huge page a step, at most */
    /* Faulted in, not written: every byte reads zero. */
    size_t nonzero = 0;
    for (size_t i = 0; i < len; i += 4096)
        nonzero += ahead[i] != 0;
    CU_ASSERT_EQUAL(nonzero + ahead[len - 1], 0);
    /* The pager touched nothing it was not given. */
    wait_drained();
    CU_ASSERT_EQUAL(resident(plain, len), 0);
    vsched__pages_free(plain, len);
    vsched__pages_free(ahead, len);
    vsched__pager_release(hold);
}

static void a_block_freed_while_queued_is_forgotten(void)
{
    if (pager_disabled())
        return;
    unsigned hold = vsched__pager_hold();
    enum {
        BLOCKS = 64
    };
    size_t len = 2 * VSCHED__HUGE_BYTES;
    void *b[BLOCKS];
    size_t steps0, forgot0;
    wait_drained();
    vsched__pager_counts(&steps0, &forgot0);
    /* Queued while the pager takes nothing, freed before it could. */
    vsched__pager_pause(1);
    for (int i = 0; i < BLOCKS; i++) {
        b[i] = vsched__pages_alloc_ahead(len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b[i]);
    }
    for (int i = 0; i < BLOCKS; i++)
        vsched__pages_free(b[i], len);
    vsched__pager_pause(0);
    size_t steps1, forgot1;
    vsched__pager_counts(&steps1, &forgot1);
    CU_ASSERT_EQUAL(forgot1 - forgot0, BLOCKS);
    CU_ASSERT_EQUAL(steps1, steps0);
    /* And freed while the pager works on them: whatever it reached or
     * not, nothing hangs and nothing is touched after the free. */
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < BLOCKS; i++) {
            b[i] = vsched__pages_alloc_ahead(len);
            CU_ASSERT_PTR_NOT_NULL_FATAL(b[i]);
        }
        for (int i = 0; i < BLOCKS; i++)
            vsched__pages_free(b[i], len);
    }
    /* Blocks mapped now, likely at the same addresses, are not faulted
     * in by a part of a freed block the pager still held. */
    for (int i = 0; i < BLOCKS; i++) {
        b[i] = vsched__pages_alloc(len);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b[i]);
    }
    wait_drained();
    size_t touched = 0;
    for (int i = 0; i < BLOCKS; i++) {
        touched += resident(b[i], len);
        vsched__pages_free(b[i], len);
    }
    CU_ASSERT_EQUAL(touched, 0);
    vsched__pager_release(hold);
}

static void forgotten_parts_leave_room_in_the_queue(void)
{
    if (pager_disabled())
        return;
    unsigned hold = vsched__pager_hold();
    wait_drained();
    /* More blocks queued and freed, while the pager takes nothing, than
     * its queue has places: each forget gives its place back ... */
    vsched__pager_pause(1);
    for (int i = 0; i < 600; i++) {
        void *b = vsched__pages_alloc_ahead(VSCHED__HUGE_BYTES);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        vsched__pages_free(b, VSCHED__HUGE_BYTES);
    }
    /* ... so a live block queued behind them is faulted in. */
    void *live = vsched__pages_alloc_ahead(VSCHED__HUGE_BYTES);
    CU_ASSERT_PTR_NOT_NULL_FATAL(live);
    vsched__pager_pause(0);
    CU_ASSERT(wait_resident(live, VSCHED__HUGE_BYTES));
    vsched__pages_free(live, VSCHED__HUGE_BYTES);
    vsched__pager_release(hold);
}

static void a_large_arena_keeps_one_spare_chunk_faulted_in(void)
{
    unsigned hold = vsched__pager_hold();
    vsched__arena a = VSCHED__ARENA_INIT;
    /* Below 8 MiB: no spare. */
    while (a.total < ((size_t)6 << 20))
        CU_ASSERT_PTR_NOT_NULL_FATAL(vsched__arena_alloc(&a, 1000));
    CU_ASSERT_PTR_NULL(a.spare);
    while (a.total < ((size_t)9 << 20))
        CU_ASSERT_PTR_NOT_NULL_FATAL(vsched__arena_alloc(&a, 1000));
    /* Past it: the spare is mapped with the chunk it follows ... */
    const vsched__chunk *cur = a.chunks;
    void *spare = a.spare;
    CU_ASSERT_PTR_NOT_NULL_FATAL(spare);
    CU_ASSERT_EQUAL((uintptr_t)spare % VSCHED__HUGE_BYTES, 0);
    /* ... and left alone while that chunk is less than half used ... */
    while ((char *)a.at < (const char *)cur + VSCHED__HUGE_BYTES / 4)
        CU_ASSERT_PTR_NOT_NULL_FATAL(vsched__arena_alloc(&a, 1000));
    struct timespec ms = {0, 50000000};
    nanosleep(&ms, NULL);
    CU_ASSERT_EQUAL(resident(spare, VSCHED__HUGE_BYTES), 0);
    /* ... and faulted in once it is. */
    while ((char *)a.at < (const char *)cur + VSCHED__HUGE_BYTES / 2)
        CU_ASSERT_PTR_NOT_NULL_FATAL(vsched__arena_alloc(&a, 1000));
    if (!pager_disabled())
        CU_ASSERT(wait_resident(spare, VSCHED__HUGE_BYTES));
    /* The next growth takes the spare and maps a new one. */
    while (a.chunks == cur)
        CU_ASSERT_PTR_NOT_NULL_FATAL(vsched__arena_alloc(&a, 1000));
    CU_ASSERT_PTR_EQUAL(a.chunks, spare);
    CU_ASSERT_PTR_NOT_NULL(a.spare);
    CU_ASSERT_PTR_NOT_EQUAL(a.spare, spare);
    vsched__arena_fini(&a); /* frees the spare too (ASan: no leak) */
    CU_ASSERT_PTR_NULL(a.spare);
    vsched__pager_release(hold);
}

static void a_scheduler_holds_the_pager_while_it_lives(void)
{
    CU_ASSERT_EQUAL(pager_threads_become(0), 0); /* nothing held yet */
    vsched_pool *cpu = NULL, *io = NULL;
    CU_ASSERT_EQUAL_FATAL(vsched_pool_create(&cpu, VSCHED_POOL_CPU, 1, 0), 0);
    CU_ASSERT_EQUAL_FATAL(vsched_pool_create(&io, VSCHED_POOL_IO, 1, 0), 0);
    synth sy = {0};
    CU_ASSERT_EQUAL_FATAL(synth_parse_strides(&sy, "7"), 0);
    sy.n = 10;
    CU_ASSERT_EQUAL_FATAL(synth_count(&sy), 0);
    vsched_options o = {
        .size = sizeof o,
        .cpu_pool = cpu,
        .io_pool = io,
        .loader = {&synth_loader_ops, &sy, 1},
        .executor = {&synth_executor_ops, &sy, 1},
    };
    vsched *s1 = NULL, *s2 = NULL;
    CU_ASSERT_EQUAL_FATAL(vsched_create(&s1, &o), VSCHED_OK);
    CU_ASSERT_EQUAL_FATAL(vsched_create(&s2, &o), VSCHED_OK);
    int want = pager_disabled() ? 0 : 1;
    CU_ASSERT_EQUAL(pager_threads_become(want), want);
    vsched_destroy(s1);
    CU_ASSERT_EQUAL(pager_threads_become(want), want); /* s2 holds it */
    vsched_destroy(s2);
    CU_ASSERT_EQUAL(pager_threads_become(0), 0); /* joined by the last */
    /* Not held: a queued block is left to its writer. */
    void *b = vsched__pages_alloc_ahead(VSCHED__HUGE_BYTES);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    struct timespec ms = {0, 50000000};
    nanosleep(&ms, NULL);
    CU_ASSERT_EQUAL(resident(b, VSCHED__HUGE_BYTES), 0);
    vsched__pages_free(b, VSCHED__HUGE_BYTES);
    vsched_pool_destroy(io);
    vsched_pool_destroy(cpu);
    synth_free(&sy);
}

static void *hold_churn(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int i = 0; i < 200; i++) {
        unsigned hold = vsched__pager_hold();
        size_t len = VSCHED__HUGE_MIN + (size_t)(rand_r(&seed) % 4) *
                                            VSCHED__HUGE_BYTES;
        void *b = vsched__pages_alloc_ahead(len);
        if (b != NULL && rand_r(&seed) % 2)
            ((volatile char *)b)[len - 1] = 1; /* its writer, meanwhile */
        if (rand_r(&seed) % 3 == 0)
            sched_yield();
        vsched__pages_free(b, len);
        vsched__pager_release(hold);
    }
    return NULL;
}

static void holding_and_releasing_from_many_threads_leaves_no_thread(void)
{
    enum {
        THREADS = 6
    };
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        CU_ASSERT_EQUAL_FATAL(
            pthread_create(&t[i], NULL, hold_churn, (void *)(uintptr_t)(i + 1)),
            0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(pager_threads_become(0), 0);
}

static void a_forked_child_uses_blocks_and_starts_its_own_pager(void)
{
    unsigned parent_hold = vsched__pager_hold();
    void *b = vsched__pages_alloc_ahead(8 * VSCHED__HUGE_BYTES);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        alarm(20);
        /* The parent's pager is not here: freeing may not wait for it. */
        vsched__pages_free(b, 8 * VSCHED__HUGE_BYTES);
#ifdef __SANITIZE_THREAD__
        /* ThreadSanitizer refuses new threads after a multi-threaded
         * fork: the free above is what this pass checks. */
        _exit(0);
#endif
        /* The parent's hold (a scheduler the child inherited) released
         * here, twice, is not one of the child's: its own hold still
         * starts a pager. */
        vsched__pager_release(parent_hold);
        vsched__pager_release(parent_hold);
        unsigned hold = vsched__pager_hold();
        void *c = vsched__pages_alloc_ahead(VSCHED__HUGE_BYTES);
        int ok = c != NULL &&
                 (pager_disabled() || wait_resident(c, VSCHED__HUGE_BYTES));
        vsched__pages_free(c, VSCHED__HUGE_BYTES);
        vsched__pager_release(hold);
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &st, 0), pid);
    CU_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    vsched__pages_free(b, 8 * VSCHED__HUGE_BYTES);
    vsched__pager_release(parent_hold);
}

static const vr_cu_test tests[] = {
    {"a_queued_block_is_faulted_in_and_an_unqueued_one_is_not",
     a_queued_block_is_faulted_in_and_an_unqueued_one_is_not},
    {"a_block_freed_while_queued_is_forgotten",
     a_block_freed_while_queued_is_forgotten},
    {"forgotten_parts_leave_room_in_the_queue",
     forgotten_parts_leave_room_in_the_queue},
    {"a_large_arena_keeps_one_spare_chunk_faulted_in",
     a_large_arena_keeps_one_spare_chunk_faulted_in},
    {"a_scheduler_holds_the_pager_while_it_lives",
     a_scheduler_holds_the_pager_while_it_lives},
    {"holding_and_releasing_from_many_threads_leaves_no_thread",
     holding_and_releasing_from_many_threads_leaves_no_thread},
    {"a_forked_child_uses_blocks_and_starts_its_own_pager",
     a_forked_child_uses_blocks_and_starts_its_own_pager},
    {NULL, NULL},
};

int main(void)
{
    return vr_cu_main("pager", tests);
}
