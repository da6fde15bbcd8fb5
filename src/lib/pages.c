/*
 * pages -- bulk memory in huge pages; see pages.h.
 */
#define _DEFAULT_SOURCE /* MADV_HUGEPAGE */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pager.h"
#include "pages.h"

static int advise = 1;
static pthread_once_t advise_once = PTHREAD_ONCE_INIT;

static void read_advise(void)
{
    const char *v = getenv("VSCHED_HUGEPAGES");
    advise = v == NULL || strcmp(v, "0") != 0;
}

/* The mapping of a huge block: its bytes rounded up to whole huge pages. */
static size_t mapped_bytes(size_t bytes)
{
    return (bytes + VSCHED__HUGE_BYTES - 1) & ~(VSCHED__HUGE_BYTES - 1);
}

void *vsched__pages_alloc(size_t bytes)
{
    if (bytes < VSCHED__HUGE_MIN)
        return calloc(1, bytes > 0 ? bytes : 1);
    if (bytes > SIZE_MAX - 2 * VSCHED__HUGE_BYTES)
        return NULL;
    size_t len = mapped_bytes(bytes);
    /* Map a huge page more than needed and trim both ends to alignment. */
    size_t span = len + VSCHED__HUGE_BYTES;
    char *m = mmap(NULL, span, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    uintptr_t at = ((uintptr_t)m + VSCHED__HUGE_BYTES - 1) &
                   ~(uintptr_t)(VSCHED__HUGE_BYTES - 1);
    char *p = (char *)at;
    size_t head = (size_t)(p - m), tail = span - head - len;
    if (head > 0)
        munmap(m, head);
    if (tail > 0)
        munmap(p + len, tail);
    pthread_once(&advise_once, read_advise);
    if (advise)
        (void)madvise(p, len, MADV_HUGEPAGE); /* a hint: refused is fine */
    return p; /* anonymous pages read as zero */
}

void *vsched__pages_alloc_ahead(size_t bytes)
{
    void *p = vsched__pages_alloc(bytes);
    if (p != NULL && bytes >= VSCHED__HUGE_MIN)
        vsched__pager_ahead(p, bytes);
    return p;
}

void vsched__pages_free(void *p, size_t bytes)
{
    if (p == NULL)
        return;
    if (bytes < VSCHED__HUGE_MIN) {
        free(p);
        return;
    }
    vsched__pager_forget(p, mapped_bytes(bytes));
    munmap(p, mapped_bytes(bytes));
}

void *vsched__table_alloc(size_t cap)
{
    if (cap > SIZE_MAX / sizeof(void *))
        return NULL;
    return vsched__pages_alloc(cap * sizeof(void *));
}

void vsched__table_free(void *t, size_t cap)
{
    vsched__pages_free(t, cap * sizeof(void *));
}
