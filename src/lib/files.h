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

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

#include "graph.h"

/* A parsed snapshot shared by the file and the tasks reading it; freed
 * through the executor when the last reference goes. */
typedef struct vsched__snap {
    void *p;                 /* executor-owned */
    atomic_int refs;
    const vsched_executor_binding *eb;
    pthread_mutex_t *serial; /* held around snapshot_free, or NULL */
} vsched__snap;

/* serial: the executor's serialising lock when it is not thread-safe. */
vsched__snap *vsched__snap_new(void *p, const vsched_executor_binding *eb,
                               pthread_mutex_t *serial);
vsched__snap *vsched__snap_ref(vsched__snap *sn);
void vsched__snap_unref(vsched__snap *sn);

typedef struct vsched__artifact_slot {
    char *profile;          /* owned */
    vsched__node *node;     /* current generation's Artifact node */
    char *path;             /* published output, or NULL (owned) */
    uint64_t artifact_hash;
    /* Witness-fenced store (vsched_commit_artifact). */
    int committed;
    void *data;             /* owned */
    size_t len;
    uint64_t committed_generation;
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

    int retired;             /* removed/reset: admits and publishes nothing */

    /* Upserted content overriding the loader (VSCHED_REQ_CONTENT). */
    char *content;           /* owned */
    size_t content_len;
    int has_content;

    /* Source facts, valid once `integrated` (deps recorded in the graph). */
    int integrated;
    vsched__snap *snap;      /* one reference */
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
/* Free the table and every file node in it. */
void vsched__files_fini(vsched__files *t);
/* Free one file node (its snapshot reference, artifacts, overlay). */
void vsched__file_free(vsched__file *f);
/* Take f out of the table (the object stays alive for the caller). */
void vsched__files_remove(vsched__files *t, vsched__file *f);
/* Drop f's Source facts (snapshot reference, deps, blockers). */
void vsched__file_clear_source(vsched__file *f);

vsched__file *vsched__files_find(const vsched__files *t, const char *name);
/* Find or create (atomic ensure). *created says which. NULL on exhaustion. */
vsched__file *vsched__files_ensure(vsched__files *t, const char *name,
                                   int *created);

/* Artifact slot of `profile`, created when absent; NULL on exhaustion. */
vsched__artifact_slot *vsched__file_artifact(vsched__file *f,
                                             const char *profile);

#endif
