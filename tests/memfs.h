/*
 * memfs.h -- the in-memory source loader and scheduler start/stop shared by
 * the test fixtures (world.c, dag_world.c, test_coord.c).
 *
 * A memfs is a table of (name, content) sources served through
 * vsched_loader_ops: bind it with MEMFS_BINDING(&fs). Its fields are read
 * by the loader's operations and may be changed only while no scheduler
 * uses it.
 */
#ifndef VSCHED_TESTS_MEMFS_H
#define VSCHED_TESTS_MEMFS_H

#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

typedef struct memfs_file {
    const char *name;
    const char *content;
} memfs_file;

/* memfs.flags: what realpath refuses (else it echoes any name). */
enum {
    MEMFS_REALPATH_EXISTING = 1, /* a name not in the table: ENOENT */
    MEMFS_REALPATH_NO_DOTDOT = 2 /* a name containing "..": ESCAPE */
};

typedef struct memfs {
    const memfs_file *files; /* ends with {NULL, NULL}; NULL: empty */
    unsigned flags;          /* MEMFS_REALPATH_* */
    /* When set, called by every load (found or not) before it answers. */
    void (*on_load)(const char *name, const vsched_ctx *ctx);
    /* When set, the kind of `name`; NULL (or no callback) means "c". */
    const char *(*classify)(const char *name);
} memfs;

extern const vsched_loader_ops memfs_loader_ops;

/* A thread-safe loader binding serving *fs. */
#define MEMFS_BINDING(fs) ((vsched_loader_binding){&memfs_loader_ops, (fs), 1})

/* A copy of s in ctx->alloc'ed memory (owned by the host once handed out). */
char *memfs_strdup(const vsched_ctx *ctx, const char *s);

/* The snapshot of the test executors: the "blocker NAME" lines of a
 * source (each also a dep) and the FNV-1a hash of its bytes. */
typedef struct memfs_snap {
    char **blockers;
    size_t n;
    uint64_t hash;
} memfs_snap;

/* Parse loaded bytes (borrowed) into a snapshot (malloc'ed). */
memfs_snap *memfs_snap_parse(const char *bytes, size_t len);
/* extract_deps of a memfs_snap: every blocker as a dep and a blocker. */
int memfs_snap_deps(const vsched_ctx *ctx, const memfs_snap *sn,
                    vsched_deps_out *out);
/* Usable as vsched_executor_ops.snapshot_free. */
void memfs_snap_free(void *inst, void *snapshot);

/* Create a CPU pool of cpu_threads workers, an IO pool of one, and a
 * scheduler with options *o (whose cpu_pool and io_pool are set here);
 * each step is CU_ASSERT_FATAL'ed. */
vsched *memfs_start(vsched_pool **cpu, vsched_pool **io, unsigned cpu_threads,
                    vsched_options *o);
/* The same without assertions, with io_threads IO workers: 0, -1 when a
 * pool cannot be created, or vsched_create's status. */
int memfs_try_start(vsched **s, vsched_pool **cpu, vsched_pool **io,
                    unsigned cpu_threads, unsigned io_threads,
                    vsched_options *o);
/* Destroy the scheduler, then its pools. */
void memfs_stop(vsched *s, vsched_pool *cpu, vsched_pool *io);

#endif
