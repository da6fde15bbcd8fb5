/*
 * files -- file node objects, the facts their Source established, parsed
 * snapshots, and the table of live objects by canonical name.
 *
 * A file node object is identified by its canonical name and, as an
 * object, by a process-unique monotonic `incarnation`; every content change
 * advances its `generation`. Its submission lifetime starts with the
 * first object of a name and goes on in the successor a re-home creates
 * (a re-classification keeps queued requests valid: a request bound to the
 * old object follows `successor`); removal and reset end it. An object leaves the table once (retired): then it admits and
 * publishes nothing, and `successor` names the object that replaced it, if
 * a re-home did.
 *
 * The object holds its current generation's stage nodes (Source, Analysis,
 * one Artifact per profile), each one graph reference, and what its
 * integrated Source established: the snapshot (a reference), the deps and
 * blockers as file objects (references), and the facts record of their
 * names shared with results. The dependents index is the reverse of every object's blocker
 * list, keyed by NAME (so a blocker's successor objects find the files
 * that fold it): the files whose Analysis folds an object of that name.
 *
 * References: files and facts count theirs atomically, so results and
 * events may drop them without the scheduler lock; a file leaves memory
 * only after it left the table, and a facts record drops its snapshot
 * through the executor (snapshot frees requested under the scheduler lock
 * are deferred until it is released: vsched__snap_unref).
 *
 * Thread-safety: apart from the reference counts, every field is guarded
 * by the scheduler lock.
 */
#ifndef VSCHED_LIB_FILES_H
#define VSCHED_LIB_FILES_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

#include "arena.h"
#include "graph.h"

struct vsched;

/* Upserted bytes: one allocation, the length ahead of them (and a NUL
 * after, for plugins that read text). */
typedef struct vsched__content {
    size_t len;
    char bytes[];
} vsched__content;

struct vsched__file;

/* What an integrated Source established, in one allocation: the
 * executor's parsed snapshot, and what a result names -- the content hash
 * and the deps' and blockers' names. Immutable once made but for the
 * snapshot's release, shared by the file, its tasks and the results
 * handed to callers. Its names are the name directory's copies (root.h),
 * held by a reference on the directory, so a result may outlive the
 * scheduler and the record copies no name.
 *
 * Two counts. `snapshot_refs` counts who reads the snapshot (the file,
 * tasks); at its last the snapshot is freed through the executor -- after
 * the unlock when the scheduler lock is held (vsched__snap_unref) -- and
 * the snapshot's one reference on the record goes. `refs` counts the
 * record (the file, tasks, results, and that one of a live snapshot); at
 * its last the record is freed, on any thread. A record made only to
 * hand a snapshot back (vsched__snap_new) names nothing. */
typedef struct vsched__facts {
    void *snapshot;                 /* executor-owned, or NULL */
    struct vsched__facts *next_dead; /* on vsched.dead_snaps */
    atomic_int snapshot_refs;
    atomic_int refs;
    uint32_t n_deps, n_blockers;
    uint64_t content_hash;
    struct vsched__root_dir *names; /* a reference, or NULL */
    /* Then, in the same block: the integrating file's deps[] and
     * blockers[] (n_deps + n_blockers file pointers; the file holds the
     * references, results never read them) and the names (n_deps +
     * n_blockers + 1 pointers, deps first, NULL-ended); read through the
     * accessors below. */
} vsched__facts;

/* A reference on a record's snapshot is a vsched__snap. */
typedef vsched__facts vsched__snap;

static inline struct vsched__file **vsched__facts_files(vsched__facts *fa)
{
    return (struct vsched__file **)(fa + 1);
}
/* The deps' names; the blockers' follow them. */
static inline const char **vsched__facts_dep_names(const vsched__facts *fa)
{
    return (const char **)((struct vsched__file *const *)(fa + 1) +
                           fa->n_deps + fa->n_blockers);
}
static inline const char **vsched__facts_blocker_names(const vsched__facts *fa)
{
    return vsched__facts_dep_names(fa) + fa->n_deps;
}
/* The record whose vsched__facts_dep_names are `names`, of n_deps +
 * n_blockers = n names (the inverse of the accessor: a result keeps only
 * its deps pointer). */
static inline vsched__facts *vsched__facts_of_names(const char *const *names,
                                                    size_t n)
{
    return (vsched__facts *)(void *)((struct vsched__file *const *)(
                                         const void *)names -
                                     n) -
           1;
}

typedef struct vsched__slot {
    const char *profile; /* interned */
    vsched__node *node;  /* current generation's Artifact, or NULL */
    char *path;          /* published output (owned), or NULL */
    uint64_t artifact_hash;
} vsched__slot;

/* A committed artifact of one profile (vsched_commit_artifact: the
 * witness-fenced store, artifacts.c), on its file's list. */
typedef struct vsched__commit {
    struct vsched__commit *next;
    const char *profile; /* interned */
    uint64_t generation; /* the witness's */
    size_t len;
    unsigned char data[]; /* len bytes */
} vsched__commit;

/* What few objects in the table carry, apart: upserted content and
 * committed artifacts. */
typedef struct vsched__file_extra {
    struct vsched__content *content; /* overriding the loader, or NULL */
    vsched__commit *commits;         /* owned, or NULL */
} vsched__file_extra;

typedef struct vsched__filevec {
    struct vsched__file **v;
    uint32_t n, cap;
} vsched__filevec;

typedef struct vsched__file {
    atomic_int refs;        /* the table, nodes, handles, facts, events */
    uint32_t n_slots : 31;  /* of slots[] */
    uint32_t retired : 1;   /* left the table */
    uint64_t incarnation;   /* process-unique object identity */
    uint64_t generation;    /* advanced on each content change */
    const char *kind;     /* loader classification (interned), or "" */
    uint64_t class_seq;   /* when that classification was made */

    /* Current-generation stage nodes (graph references); NULL until
     * admitted. */
    vsched__node *source, *analysis;
    /* One Artifact slot per profile, read through vsched__file_slots: the
     * first profile's in the object (most files have one), more in a heap
     * array that takes the first one along. */
    union {
        vsched__slot one;   /* n_slots <= 1 */
        vsched__slot *many; /* n_slots > 1 */
    } sl;

    /* While it is in the table: what few objects carry (upserted content,
     * committed artifacts), or NULL -- read through vsched__file_extra_of.
     * Once retired (retire_file frees it): the object a re-home replaced
     * it with (a reference), or NULL. */
    union {
        vsched__file_extra *extra;
        struct vsched__file *successor;
    } u;

    /* The integrated Source (facts != NULL), or nothing. */
    vsched__facts *facts; /* a reference, and one on its snapshot */
    uint64_t analysis_hash; /* valid while analysis is DONE */
    uint64_t unit_hash;     /* of the unit it was built in (unit.h), or 0 */

    /* Canonical source name: the MVCC directory's copy (root.h), one per
     * name however many objects it had, valid while the directory lives
     * -- which is longer than any file object. */
    const char *name;
} vsched__file;

/* The object's n_slots Artifact slots. */
static inline vsched__slot *vsched__file_slots(vsched__file *f)
{
    return f->n_slots > 1 ? f->sl.many : &f->sl.one;
}

/* The extras of an object in the table, or NULL. */
static inline vsched__file_extra *vsched__file_extra_of(const vsched__file *f)
{
    return f->retired ? NULL : f->u.extra;
}
/* Upserted content of an object in the table, or NULL. */
static inline struct vsched__content *vsched__file_content(
    const vsched__file *f)
{
    const vsched__file_extra *x = vsched__file_extra_of(f);
    return x != NULL ? x->content : NULL;
}
/* The extras of f (in the table), made when absent; NULL on exhaustion.
 * Scheduler lock held. */
vsched__file_extra *vsched__file_extra_make(vsched__file *f);
/* f's upserted content becomes c (owned; NULL: none), the old one freed.
 * VSCHED_ENOMEM (c not taken) when f has no extras and none can be made. */
int vsched__file_set_content(vsched__file *f, struct vsched__content *c);
/* Free f's extras (its content and commits); f is in the table or
 * unreferenced. */
void vsched__file_extra_free(vsched__file *f);
/* What replaced a retired object (a re-home), or NULL. */
static inline vsched__file *vsched__file_successor(const vsched__file *f)
{
    return f->retired ? f->u.successor : NULL;
}

/* The integrated Source's snapshot (the record: a vsched__snap), or NULL. */
static inline vsched__snap *vsched__file_snap(const vsched__file *f)
{
    return f->facts;
}
/* The integrated Source's deps and blockers (file references the object
 * holds, kept in its facts record's storage), or none. */
static inline uint32_t vsched__file_n_deps(const vsched__file *f)
{
    return f->facts != NULL ? f->facts->n_deps : 0;
}
static inline uint32_t vsched__file_n_blockers(const vsched__file *f)
{
    return f->facts != NULL ? f->facts->n_blockers : 0;
}
static inline vsched__file *vsched__file_dep(const vsched__file *f, size_t i)
{
    return vsched__facts_files(f->facts)[i];
}
static inline vsched__file *vsched__file_blocker(const vsched__file *f,
                                                 size_t i)
{
    return vsched__facts_files(f->facts)[f->facts->n_deps + i];
}

/* File object memory: objects of one size carved from slabs of
 * FILE_SLAB, recycled through two free lists -- `free`, popped and
 * pushed under the scheduler lock, and `returned`, where a last
 * reference dropped on any thread without the lock (a result's event, a
 * handle) pushes atomically; an allocation that finds `free` empty takes
 * the whole `returned` list at once (one exchange: no ABA). Slabs come
 * from an arena (in huge pages once it is large: arena.h), freed whole at
 * teardown, after the graph. */
typedef struct vsched__filepool {
    vsched__arena slabs;            /* scheduler lock; freed whole */
    vsched__file *free;             /* scheduler lock */
    vsched__file *_Atomic returned; /* any thread */
    struct vsched__root_dir *names; /* where names are kept (root.h) */
} vsched__filepool;

/* The file table: name -> current file object. It is no table of its
 * own: each name's object is the second word the MVCC directory keeps
 * with the name (vsched__root_file), so a name the directory already
 * gave out (a batch's result name, a facts record's, an object's) finds
 * its object without a probe, and a new name costs one probe, the
 * directory's. The scheduler lock guards the words and n. */
typedef struct vsched__files {
    size_t n;               /* objects in the table */
    vsched__filepool *pool; /* the scheduler's; kept by vsched__files_init */
    /* Names still expected in a bulk binding, or 0: a growth of the
     * directory makes room for them at once, so a large batch rehashes
     * once instead of once per doubling. At worst (a batch naming one new
     * file n times) the room is for n names. */
    size_t bulk;
} vsched__files;

/* The dependents index: blocker name -> files whose facts list it. A
 * name's entry hangs off its word in the MVCC directory (root.h), so it
 * spans every object of the name. Entries are never removed (a name's
 * list may empty), so they live in an arena freed with the index, which
 * empties their words first (walking the directory: the words are the
 * only list of the entries). */
typedef struct vsched__dependents {
    size_t n; /* entries (each found from its name's word) */
    vsched__arena arena;
} vsched__dependents;

/* ---- snapshots -------------------------------------------------------------- */
/* A record of nothing but the snapshot p (one reference on it): to hand
 * back through the executor a snapshot that was never integrated. NULL on
 * exhaustion. */
vsched__snap *vsched__snap_new(void *p);
vsched__snap *vsched__snap_ref(vsched__snap *sn);
/* Drop a reference; the last one frees the snapshot through the
 * executor -- at once, or after the unlock when the caller holds the
 * scheduler lock. */
void vsched__snap_unref(struct vsched *s, vsched__snap *sn);
/* Free the snapshots whose last reference went under the lock (called
 * without it). For an executor that is not thread-safe the frees are
 * handed to whoever holds its serialising lock next (never waited for). */
void vsched__snaps_free(struct vsched *s, vsched__snap *list);
/* Run the frees handed to a serialised executor: when its lock is free
 * (or, wait = 1, once it is). Called without the lock held. */
void vsched__executor_flush(struct vsched *s, int wait);

/* ---- facts ------------------------------------------------------------------ */
/* A record of the parsed snapshot and names[0..n_deps) (deps) then the
 * blockers after them, each named in the directory `dir` (one hold of its
 * lock) and its hash left in hashes[] (the caller's array, n_deps +
 * n_blockers long); files[] is left for integration to fill. The caller
 * holds one reference on the record and one on the snapshot (the same
 * pointer). Any thread, without the scheduler lock. NULL on exhaustion
 * (the snapshot is then still the caller's). */
vsched__facts *vsched__facts_new(struct vsched__root_dir *dir,
                                 uint64_t content_hash, void *snapshot,
                                 const char *const *names, size_t n_deps,
                                 size_t n_blockers, uint64_t *hashes);
vsched__facts *vsched__facts_ref(vsched__facts *fa);
/* Any thread, any time (it refers to nothing). */
void vsched__facts_unref(vsched__facts *fa);

/* ---- file objects ----------------------------------------------------------- */
/* A new object (one reference, the caller's) from pool p; `name` is the
 * directory's copy (vsched__root_name). NULL on exhaustion. Scheduler lock
 * held. */
vsched__file *vsched__file_new(vsched__filepool *p, const char *name);
/* Free every slab (teardown: no object is referenced any more). */
void vsched__filepool_fini(vsched__filepool *p);
static inline vsched__file *vsched__file_ref(vsched__file *f)
{
    atomic_fetch_add_explicit(&f->refs, 1, memory_order_relaxed);
    return f;
}
void vsched__file_unref(struct vsched *s, vsched__file *f);

/* Artifact slot of `profile` (interned), created when absent. */
vsched__slot *vsched__file_slot(vsched__file *f, const char *profile);
/* The slot of profile, or NULL. */
vsched__slot *vsched__file_find_slot(vsched__file *f, const char *profile);

/* f's Source is integrated: fa (the caller's references on the record
 * and on its snapshot pass to f), whose files[] holds the deps then the
 * blockers (references taken here); the dependents index follows. */
void vsched__file_set_source(struct vsched *s, vsched__file *f,
                             vsched__facts *fa);
/* Forget what f's Source established. */
void vsched__file_clear_source(struct vsched *s, vsched__file *f);

/* The files whose facts list a blocker named `name` (NULL: none). */
const vsched__filevec *vsched__dependents_of(const struct vsched *s,
                                             const vsched__file *named);
void vsched__dependents_fini(vsched__dependents *d,
                             struct vsched__root_dir *names);

/* ---- the table -------------------------------------------------------------- */
/* An empty table (its pool, if any, is kept). */
void vsched__files_init(vsched__files *t);
void vsched__files_fini(struct vsched *s, vsched__files *t);
uint64_t vsched__name_hash(const char *name, size_t len);
vsched__file *vsched__files_find(const vsched__files *t, const char *name);
vsched__file *vsched__files_find_h(const vsched__files *t, const char *name,
                                   size_t len, uint64_t hash);
/* The object of a name that is the directory's copy already (a file
 * object's name), or NULL: no probe. */
vsched__file *vsched__files_find_kept(const vsched__files *t,
                                     const char *kept);
/* Find or create (atomic ensure). NULL on exhaustion. */
vsched__file *vsched__files_ensure(vsched__files *t, const char *name,
                                   int *created);
/* The same, with the name's length and hash known. */
vsched__file *vsched__files_ensure_h(vsched__files *t, const char *name,
                                     size_t len, uint64_t hash, int *created);
/* The same for a name that is the directory's copy already (a file
 * object's name, a batch's result name: root.h): neither hashed nor looked
 * up in the directory again. */
vsched__file *vsched__files_ensure_kept(vsched__files *t, const char *kept,
                                        int *created);
/* Every object in the table, into a new array (the caller frees it;
 * *n its length); the references stay the table's -- or, take = 1, the
 * table is emptied and they pass to the caller. Scheduler lock held.
 * Aborts on exhaustion: it is for reset, cancellation and teardown, which
 * cannot stop half way. */
vsched__file **vsched__files_list(vsched__files *t, size_t *n, int take);
/* Take f out of the table; its reference passes to the caller. */
void vsched__files_remove(vsched__files *t, vsched__file *f);
/* Put f (a new object) where `old` was; the table's reference on old
 * passes to the caller. */
void vsched__files_replace(vsched__files *t, vsched__file *old,
                           vsched__file *f);

#endif
