/*
 * arena -- bump allocation for entries that live as long as their table.
 *
 * The dependents index (files.c) and the MVCC history (root.c) never free
 * an entry before the table itself goes: an entry per name ever indexed
 * or published. Taking them from an arena saves a malloc and a free per
 * name (about a fifth of what integrating a Source cost) and lets the
 * table's teardown free chunks, not entries.
 *
 * Chunks grow from 4 KiB; once the arena holds 256 KiB, each new chunk is
 * one huge page (pages.h). A request larger than a chunk gets a
 * chunk of its own. Memory is 16-byte aligned and zeroed.
 *
 * Once the arena holds 8 MiB it keeps a spare huge page: the chunk after
 * the current one, mapped in advance and handed to the pager (pager.h)
 * once the current chunk is half full, so that the thread filling the
 * arena finds its next chunk faulted in. The price: an arena that stops
 * growing past the middle of its last chunk holds one huge page more
 * (2 bytes a file at a million files).
 *
 * Thread-safety: none; the owning table's lock guards its arena.
 */
#ifndef VSCHED_LIB_ARENA_H
#define VSCHED_LIB_ARENA_H

#include <stddef.h>
#include <stdint.h>

/* A chunk's header; its space follows, 16-byte aligned. */
typedef struct vsched__chunk {
    struct vsched__chunk *next;
    size_t size; /* bytes of the chunk, header included */
} vsched__chunk;

typedef struct vsched__arena {
    struct vsched__chunk *chunks; /* newest first */
    char *at, *end;               /* free space of the newest chunk */
    size_t next_size;             /* the next chunk's size */
    size_t total;                 /* bytes of all its chunks */
    void *spare;                  /* the next huge chunk, or NULL */
    uintptr_t spare_at; /* past this address of the current chunk the
                           spare is queued to the pager; UINTPTR_MAX
                           once it is (or when there is none) */
} vsched__arena;

#define VSCHED__ARENA_INIT                                                    \
    {                                                                         \
        NULL, NULL, NULL, 0, 0, NULL, UINTPTR_MAX                             \
    }

/* n zeroed bytes, 16-byte aligned, valid until vsched__arena_fini; NULL
 * on exhaustion. */
void *vsched__arena_alloc(vsched__arena *a, size_t n);
/* Free every chunk; the arena is empty (and usable) again. */
void vsched__arena_fini(vsched__arena *a);

#endif
