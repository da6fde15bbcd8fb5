/*
 * arena -- bump allocation in chunks; see arena.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "pager.h"
#include "pages.h"

#define ALIGN 16u
#define FIRST_CHUNK 4096u
#define MAX_CHUNK (256u * 1024u)
/* Past this much, chunks are huge pages (pages.h): an arena this large
 * wastes at most one partly used huge page at its end (under 2 MiB on
 * 256 KiB or more). */
#define HUGE_AFTER ((size_t)256 << 10)

/* Past this much, the next huge chunk is mapped one chunk early and
 * faulted in by the pager (arena.h). Below it a spare would cost more
 * resident memory than the faults it saves: 8 MiB is where the 2 MiB
 * spare is a quarter of the arena at most. */
#define SPARE_AFTER ((size_t)8 << 20)

/* The header rounded up to ALIGN: where a chunk's space starts. */
#define HEADER ((sizeof(vsched__chunk) + ALIGN - 1) & ~(size_t)(ALIGN - 1))

static int grow(vsched__arena *a, size_t n)
{
    size_t size = a->next_size != 0 ? a->next_size : FIRST_CHUNK;
    if (a->total >= HUGE_AFTER)
        size = VSCHED__HUGE_BYTES;
    else if (size < MAX_CHUNK)
        a->next_size = size * 2;
    if (n > size - HEADER)
        size = HEADER + n; /* an oversized request: a chunk of its own */
    vsched__chunk *c;
    int spare = size == VSCHED__HUGE_BYTES && a->total >= SPARE_AFTER;
    if (spare) {
        c = a->spare != NULL ? a->spare : vsched__pages_alloc(size);
        /* The next one, faulted in while this one fills (from its
         * middle on); without it (exhaustion) the next growth maps its
         * own. */
        a->spare = vsched__pages_alloc(size);
    } else {
        c = vsched__pages_alloc(size);
    }
    if (c == NULL)
        return -1;
    c->size = size;
    c->next = a->chunks;
    a->chunks = c;
    a->total += size;
    a->at = (char *)c + HEADER;
    a->end = (char *)c + size;
    a->spare_at = spare && a->spare != NULL ? (uintptr_t)c + size / 2
                                            : UINTPTR_MAX;
    return 0;
}

void *vsched__arena_alloc(vsched__arena *a, size_t n)
{
    if (n > SIZE_MAX - 2 * ALIGN - HEADER)
        return NULL;
    n = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    if (n == 0)
        n = ALIGN;
    if (a->at == NULL || (size_t)(a->end - a->at) < n) {
        if (grow(a, n) != 0)
            return NULL;
    }
    void *p = a->at;
    a->at += n;
    if ((uintptr_t)a->at >= a->spare_at) {
        /* Half of this chunk is used: the next one is needed soon. */
        a->spare_at = UINTPTR_MAX;
        vsched__pager_ahead(a->spare, VSCHED__HUGE_BYTES);
    }
    return p; /* chunks come zeroed and are never reused */
}

void vsched__arena_fini(vsched__arena *a)
{
    for (vsched__chunk *c = a->chunks; c != NULL;) {
        vsched__chunk *next = c->next;
        vsched__pages_free(c, c->size);
        c = next;
    }
    vsched__pages_free(a->spare, VSCHED__HUGE_BYTES);
    *a = (vsched__arena)VSCHED__ARENA_INIT;
}
