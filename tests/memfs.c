/*
 * memfs -- the in-memory source loader and scheduler start/stop shared by
 * the test fixtures; see memfs.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsched/vsched.h>

#include "cu.h"
#include "memfs.h"

/* ---- loader ------------------------------------------------------------- */

/* The entry `name` of fs, or NULL. */
static const memfs_file *memfs_find(const memfs *fs, const char *name)
{
    for (const memfs_file *f = fs->files; f != NULL && f->name != NULL; f++)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

char *memfs_strdup(const vsched_ctx *ctx, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ctx->alloc(ctx, n);
    memcpy(d, s, n);
    return d;
}

static int memfs_load(void *inst, const vsched_ctx *ctx, const char *name,
                      char **bytes, size_t *len)
{
    const memfs *fs = inst;
    const memfs_file *f = memfs_find(fs, name);
    if (fs->on_load != NULL)
        fs->on_load(name, ctx);
    if (f == NULL)
        return VSCHED_ENOENT;
    *bytes = memfs_strdup(ctx, f->content);
    *len = strlen(f->content);
    return VSCHED_OK;
}

static int memfs_exists(void *inst, const vsched_ctx *ctx, const char *name)
{
    return memfs_find(inst, name) != NULL;
}

static int memfs_classify(void *inst, const vsched_ctx *ctx, const char *name,
                          char *kind, size_t cap)
{
    const memfs *fs = inst;
    const char *k = fs->classify != NULL ? fs->classify(name) : NULL;
    snprintf(kind, cap, "%s", k != NULL ? k : "c");
    return VSCHED_OK;
}

static int memfs_realpath(void *inst, const vsched_ctx *ctx, const char *name,
                          char **canonical)
{
    const memfs *fs = inst;
    if ((fs->flags & MEMFS_REALPATH_NO_DOTDOT) && strstr(name, "..") != NULL)
        return VSCHED_EESCAPE;
    if ((fs->flags & MEMFS_REALPATH_EXISTING) && memfs_find(fs, name) == NULL)
        return VSCHED_ENOENT;
    *canonical = memfs_strdup(ctx, name);
    return VSCHED_OK;
}

const vsched_loader_ops memfs_loader_ops = {sizeof(vsched_loader_ops),
                                            memfs_load, memfs_exists,
                                            memfs_classify, memfs_realpath};

/* ---- scheduler ---------------------------------------------------------- */

static int memfs_create(vsched **s, vsched_pool *cpu, vsched_pool *io,
                        vsched_options *o)
{
    o->cpu_pool = cpu;
    o->io_pool = io;
    return vsched_create(s, o);
}

vsched *memfs_start(vsched_pool **cpu, vsched_pool **io, unsigned cpu_threads,
                    vsched_options *o)
{
    CU_ASSERT_FATAL(vsched_pool_create(cpu, VSCHED_POOL_CPU, cpu_threads, 0) ==
                    0);
    CU_ASSERT_FATAL(vsched_pool_create(io, VSCHED_POOL_IO, 1, 0) == 0);
    vsched *s = NULL;
    CU_ASSERT_FATAL(memfs_create(&s, *cpu, *io, o) == 0);
    return s;
}

int memfs_try_start(vsched **s, vsched_pool **cpu, vsched_pool **io,
                    unsigned cpu_threads, unsigned io_threads,
                    vsched_options *o)
{
    *s = NULL;
    *cpu = *io = NULL;
    if (vsched_pool_create(cpu, VSCHED_POOL_CPU, cpu_threads, 0) != 0 ||
        vsched_pool_create(io, VSCHED_POOL_IO, io_threads, 0) != 0)
        return -1;
    return memfs_create(s, *cpu, *io, o);
}

void memfs_stop(vsched *s, vsched_pool *cpu, vsched_pool *io)
{
    vsched_destroy(s);
    vsched_pool_destroy(cpu);
    vsched_pool_destroy(io);
}

memfs_snap *memfs_snap_parse(const char *bytes, size_t len)
{
    memfs_snap *sn = calloc(1, sizeof *sn);
    char *text = strndup(bytes, len);
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save))
        if (strncmp(line, "blocker ", 8) == 0) {
            sn->blockers =
                realloc(sn->blockers, (sn->n + 1) * sizeof *sn->blockers);
            sn->blockers[sn->n++] = strdup(line + 8);
        }
    free(text);
    uint64_t hash = 1469598103934665603u;
    for (size_t i = 0; i < len; i++)
        hash = (hash ^ (unsigned char)bytes[i]) * 1099511628211u;
    sn->hash = hash;
    return sn;
}

int memfs_snap_deps(const vsched_ctx *ctx, const memfs_snap *sn,
                    vsched_deps_out *out)
{
    out->n_deps = out->n_blockers = sn->n;
    out->deps = ctx->alloc(ctx, (sn->n + 1) * sizeof(char *));
    out->blockers = ctx->alloc(ctx, (sn->n + 1) * sizeof(char *));
    for (size_t i = 0; i < sn->n; i++) {
        out->deps[i] = memfs_strdup(ctx, sn->blockers[i]);
        out->blockers[i] = memfs_strdup(ctx, sn->blockers[i]);
    }
    return VSCHED_OK;
}

void memfs_snap_free(void *inst, void *snapshot)
{
    (void)inst;
    memfs_snap *sn = snapshot;
    for (size_t i = 0; i < sn->n; i++)
        free(sn->blockers[i]);
    free(sn->blockers);
    free(sn);
}
