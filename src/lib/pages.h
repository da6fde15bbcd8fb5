/*
 * pages -- bulk memory in huge pages: the chunks of the arenas (node and
 * file slabs, names, edges) and the large tables and batch blocks.
 *
 * A scheduler of a million files touches over a gigabyte in one pass, and
 * each 4 KiB page is a fault when first written: about 10 us on a virtual
 * machine whose guest page tables are shadowed (doc/benchmarks.md), so
 * faults were a third of a run there. A block of at least VSCHED__HUGE_MIN
 * (a quarter of a huge page) is mapped on its own, rounded up to whole
 * huge pages, aligned to 2 MiB and advised MADV_HUGEPAGE, so that where
 * the kernel has transparent huge pages in "madvise" or "always" mode one
 * fault maps 2 MiB: at 10k files a run took 2.7k faults, and a third less
 * time with tables, batch blocks and arenas past 256 KiB in huge pages,
 * for 5 MB more resident memory. Smaller blocks come from calloc: a small
 * scheduler pays no 2 MiB page for a few objects.
 * Where huge pages are off the advice is ignored and nothing else
 * changes. VSCHED_HUGEPAGES=0 in the environment (read once) turns the
 * advice off, to measure what it buys.
 *
 * Thread-safety: any thread; no state but the environment read once.
 */
#ifndef VSCHED_LIB_PAGES_H
#define VSCHED_LIB_PAGES_H

#include <stddef.h>

/* A huge page. */
#define VSCHED__HUGE_BYTES ((size_t)2 << 20)
/* Blocks this large or larger are mapped on their own, in huge pages. */
#define VSCHED__HUGE_MIN (VSCHED__HUGE_BYTES / 4)

/* `bytes` zeroed bytes, 16-byte aligned (2 MiB aligned at
 * VSCHED__HUGE_MIN and above); NULL on exhaustion. */
void *vsched__pages_alloc(size_t bytes);
/* vsched__pages_alloc, for a block about to be written whole (a batch's
 * handles, its scratch arrays): a block of VSCHED__HUGE_MIN or more is
 * queued to be faulted in by the pager (pager.h) meanwhile. */
void *vsched__pages_alloc_ahead(size_t bytes);
/* Free a block of vsched__pages_alloc, given the same `bytes` (the pager
 * forgets it first); NULL is a no-op. */
void vsched__pages_free(void *p, size_t bytes);

/* A zeroed table of `cap` pointer slots (the name tables, the id index),
 * through vsched__pages_alloc (not ahead: the id index of a batch's
 * nodes fills its slots in runs and leaves whole pages of a table made
 * for the batch untouched, 8 MB at a million files); freed with vsched__table_free and the same
 * cap. */
void *vsched__table_alloc(size_t cap);
void vsched__table_free(void *t, size_t cap);

#endif
