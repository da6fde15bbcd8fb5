/*
 * files -- file nodes: the per-file state the three stages hang off.
 *
 * A file node is identified by its canonical source name and, as an
 * object, by a process-unique monotonic `incarnation`; every content change
 * advances its `generation`. Work carries (incarnation, generation), so a
 * completion can be checked against the node it was dispatched for: a
 * successor object at the same generation never matches its predecessor.
 *
 * The table maps canonical names to live nodes (open addressing, xxh3).
 * Creation is an atomic ensure under the scheduler lock: a name that has a
 * node keeps it.
 *
 * Thread-safety: every function is called with the scheduler lock held.
 */
#ifndef VSCHED_LIB_FILES_H
#define VSCHED_LIB_FILES_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"

typedef struct vsched__artifact_slot {
    char *profile;          /* owned */
    vsched__node *node;     /* current generation's Artifact node */
    char *path;             /* published output, or NULL (owned) */
    uint64_t artifact_hash;
} vsched__artifact_slot;

typedef struct vsched__file {
    char *name;              /* canonical source name (owned) */
    uint64_t incarnation;    /* process-unique object identity */
    uint64_t generation;     /* advanced on each content change */
    char kind[32];           /* loader classification */

    /* Current-generation stage nodes; NULL until admitted. */
    vsched__node *source;
    vsched__node *analysis;
    vsched__artifact_slot *artifacts;
    size_t n_artifacts;

    /* Source facts, valid once `integrated` (deps recorded in the graph). */
    int integrated;
    void *snapshot;          /* executor-owned; freed by snapshot_free */
    uint64_t content_hash;
    struct vsched__file **deps;     /* forward deps */
    size_t n_deps;
    struct vsched__file **blockers; /* gate this file's Analysis/Artifact */
    size_t n_blockers;

    uint64_t analysis_hash;  /* valid once analysis is DONE */
} vsched__file;

typedef struct vsched__files {
    vsched__file **slots;
    size_t cap;              /* power of two */
    size_t n;
} vsched__files;

void vsched__files_init(vsched__files *t);
/* Free every file node; snapshots are released through `free_snapshot`. */
void vsched__files_fini(vsched__files *t,
                        void (*free_snapshot)(void *ctx, void *snap),
                        void *ctx);

vsched__file *vsched__files_find(const vsched__files *t, const char *name);
/* Find or create (atomic ensure). *created says which. NULL on exhaustion. */
vsched__file *vsched__files_ensure(vsched__files *t, const char *name,
                                   int *created);

/* Artifact slot of `profile`, created when absent; NULL on exhaustion. */
vsched__artifact_slot *vsched__file_artifact(vsched__file *f,
                                             const char *profile);

#endif
