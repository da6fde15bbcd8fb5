/*
 * root -- the MVCC source directory: for every source name, the history of
 * what the scheduler published about it, each version stamped with the
 * epoch it became visible in.
 *
 * A captured root (vsched_root) is a lease on one epoch: lookups through it
 * answer as of that epoch, and reclamation frees only versions that neither
 * the present nor any live root can see. Capture is O(1): one lock, one
 * scalar read, one list link.
 *
 * Publication. A publisher opens a publication (vsched__root_begin), puts
 * versions and closes it (vsched__root_end). Versions put while it is open
 * carry the next epoch, which captures cannot see until the outermost
 * close makes it visible: everything published between the outermost
 * begin and end -- an atomic batch's every upsert, a reset's every removal,
 * a re-home's retirement and successor -- is one epoch, never seen torn.
 * Publications nest (a sweep inside an admission inside a batch): only the
 * outermost pair opens and closes the epoch. A put outside any publication
 * is one of its own: its version and the epoch's visibility are written in
 * one hold of root_dir.lock (one lock pair per integrated Source).
 *
 * Locks: the publication state (depth, open epoch) is guarded by the
 * scheduler lock, which every publisher holds; root_dir.lock (rank 2) guards
 * the history and the leases, and is held only briefly: by a put, the
 * closing of an epoch, a capture, a lookup, a release, a name kept for a
 * new file object (vsched__root_name: the directory holds the one copy
 * of every name its scheduler's file objects and dependents index use,
 * and keeps the scheduler's word for each: vsched__root_word). The directory is
 * reference counted (scheduler + live roots), so a root may outlive its
 * scheduler.
 */
#ifndef VSCHED_LIB_ROOT_H
#define VSCHED_LIB_ROOT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

#include "arena.h"

typedef struct vsched__version {
    uint64_t epoch;
    uint64_t incarnation, generation;
    uint64_t content_hash;
    vsched_source_state state;
} vsched__version;

typedef struct vsched__history vsched__history;

/* The largest block vsched__root_block carves; larger ones are malloc'ed,
 * and under AddressSanitizer every block is (so that an overrun of one is
 * reported, not hidden in the next). */
#define VSCHED__ROOT_BLOCK_MAX 512u
#if defined(__SANITIZE_ADDRESS__)
#define VSCHED__ROOT_BLOCK_CARVED 0
#else
#define VSCHED__ROOT_BLOCK_CARVED VSCHED__ROOT_BLOCK_MAX
#endif

typedef struct vsched__root_dir {
    pthread_mutex_t lock; /* rank 2: history, leases, visible */
    atomic_int refs;  /* scheduler + live roots + batches + facts records */
    uint64_t visible; /* the newest epoch captures see */
    vsched__history **slots; /* open addressing by name */
    size_t cap, n;
    size_t n_versions;
    vsched__arena arena;       /* the histories (never freed before the dir)
                                  and the slabs of the blocks below */
    /* Free blocks of vsched__root_block, by size class (8 bytes apart),
     * each linked through its first word. */
    void *blocks_free[VSCHED__ROOT_BLOCK_MAX / 8];
    struct vsched_root *roots; /* live leases, a doubly linked list */
    size_t n_roots;

    /* Publication state: the scheduler lock guards these. */
    unsigned depth; /* open begin/end pairs */
    uint64_t open;  /* epoch of the open publication */
} vsched__root_dir;

struct vsched_root {
    vsched__root_dir *dir;
    uint64_t epoch;
    struct vsched_root *prev, *next;
};

vsched__root_dir *vsched__root_dir_new(void);
/* Drop the scheduler's reference. */
void vsched__root_dir_release(vsched__root_dir *d);
/* One more reference on d (any thread): the names it keeps stay valid
 * until the matching release. */
vsched__root_dir *vsched__root_dir_hold(vsched__root_dir *d);

/* Publication (scheduler lock held). */
void vsched__root_begin(vsched__root_dir *d);
/* Record one version of the name `kept` -- the directory's own copy, as
 * vsched__root_name returned it, so its history is found without a probe
 * -- in the open publication. On exhaustion the version is lost and
 * lookups keep answering the previous one; VSCHED_ENOMEM. */
int vsched__root_put(vsched__root_dir *d, const char *kept,
                     vsched_source_state state, uint64_t incarnation,
                     uint64_t generation, uint64_t content_hash);
void vsched__root_end(vsched__root_dir *d);

/* The directory's copy of `name` (hash: XXH3 of its bytes, as the file
 * table's), made with an empty history when the name is new: one copy per
 * name, valid until the directory is freed. `more`: new names still
 * expected (a growth hint: room for them is made at once). Any lock but root_dir.lock may be held;
 * NULL on exhaustion. */
const char *vsched__root_name(vsched__root_dir *d, const char *name,
                              uint64_t hash, size_t more);
/* The directory's copies of n names (hashes as above) into kept[], in one
 * hold of root_dir.lock. VSCHED_ENOMEM when one could not be made (kept[]
 * is then partly set). */
int vsched__root_names(vsched__root_dir *d, const char *const *names,
                       const uint64_t *hashes, size_t n, const char **kept);

/* The scheduler's word kept with the name `kept` (the directory's copy,
 * as for vsched__root_put): NULL until the scheduler stores there, which
 * it does for the dependents index (files.c). The scheduler lock guards
 * the word; leases never read it, and the scheduler empties every word it
 * set before it lets the directory go. */
void **vsched__root_word(const char *kept);

/* The scheduler's second word kept with the name `kept`: its current file
 * object of the name (files.h: the file table is these words), or NULL.
 * Guarded like vsched__root_word. */
void **vsched__root_file(const char *kept);

/* The directory's copy of `name` (hash as for vsched__root_name), or NULL
 * when the directory has none: nothing is made. */
const char *vsched__root_find(vsched__root_dir *d, const char *name,
                              uint64_t hash);

/* The file words that are set, up to cap of them into out[] (in the
 * directory's order), in one hold of root_dir.lock; returns how many it
 * put there. take: each word put is cleared. The caller holds the
 * scheduler lock (no word changes meanwhile). */
size_t vsched__root_files(vsched__root_dir *d, void **out, size_t cap,
                          int take);

/* A block of `size` bytes (8-byte aligned, not zeroed) that lives no
 * longer than the directory -- whoever keeps one keeps a reference on
 * the directory (a facts record does). Carved from the directory's arena
 * (in huge pages once it is large) in classes 8 bytes apart, recycled
 * through per-class free lists, in one hold of root_dir.lock; larger
 * blocks are malloc'ed. Any thread. NULL on exhaustion. */
void *vsched__root_block(vsched__root_dir *d, size_t size);
/* Give back a block of vsched__root_block, with the same size. */
void vsched__root_block_free(vsched__root_dir *d, void *p, size_t size);

/* The hash vsched__root_name was given for `kept` (the directory's copy):
 * written once when the name was made, so any thread that holds the
 * directory and was handed the name may read it without a lock. */
uint64_t vsched__root_hash(const char *kept);

/* Call fn on every name's word that is set, then clear it (the
 * scheduler's index is torn down; takes the directory lock). */
void vsched__root_words_clear(vsched__root_dir *d, void (*fn)(void *word));

void vsched__root_counts(vsched__root_dir *d, size_t *versions, size_t *roots);

#endif
