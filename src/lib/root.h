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
 * Publication is atomic with the node transition it records: publishers
 * call vsched__root_begin (takes the directory lock, opens a new epoch),
 * mutate the node, vsched__root_put each version, then vsched__root_end.
 * A capture is therefore totally ordered against every transition.
 *
 * Lock: root_dir.lock (rank 2) guards every field; publishers take it while
 * holding the scheduler lock (rank 1); capture, lookup and release take it
 * alone. The directory is reference-counted (scheduler + live roots), so a
 * root may outlive its scheduler.
 */
#ifndef VSCHED_LIB_ROOT_H
#define VSCHED_LIB_ROOT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

typedef struct vsched__version {
    uint64_t epoch;
    uint64_t incarnation, generation;
    uint64_t content_hash;
    vsched_source_state state;
} vsched__version;

typedef struct vsched__history {
    char *name;
    vsched__version *v;
    size_t n, cap;
} vsched__history;

typedef struct vsched__root_dir {
    pthread_mutex_t lock;
    int refs;                 /* scheduler + live roots */
    uint64_t epoch;           /* the newest visible epoch */
    vsched__history **slots;  /* open addressing by name */
    size_t cap, n;
    size_t n_versions;
    struct vsched_root *roots; /* live leases, a doubly linked list */
    size_t n_roots;
} vsched__root_dir;

struct vsched_root {
    vsched__root_dir *dir;
    uint64_t epoch;
    struct vsched_root *prev, *next;
};

vsched__root_dir *vsched__root_dir_new(void);
/* Drop the scheduler's reference. */
void vsched__root_dir_release(vsched__root_dir *d);

void vsched__root_begin(vsched__root_dir *d);
/* Record one version at the open epoch. On exhaustion the version is lost
 * and lookups keep answering the previous one; returns VSCHED_ENOMEM. */
int vsched__root_put(vsched__root_dir *d, const char *name,
                     vsched_source_state state, uint64_t incarnation,
                     uint64_t generation, uint64_t content_hash);
void vsched__root_end(vsched__root_dir *d);

void vsched__root_counts(vsched__root_dir *d, size_t *versions,
                         size_t *roots);

#endif
