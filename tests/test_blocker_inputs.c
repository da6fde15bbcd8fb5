/*
 * test_blocker_inputs -- what ABI 1.1 hands Analysis and Artifact about
 * their blockers, through the real scheduler (libvsched, its pools and
 * the memfs loader):
 *   - Analysis gets its direct blockers, in extract_deps order, each with
 *     the snapshot source() made of that file;
 *   - Artifact gets the direct blockers by default, and the closure
 *     (depth-first preorder, each once, the file left out) when the
 *     executor sets artifact_blockers = VSCHED_BLOCKERS_CLOSURE;
 *   - members of a blocker cycle building as one unit see each other;
 *   - the input structs carry the host's size;
 *   - ctx->load and ctx->realpath reach the loader from an executor.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsched/vsched.h>

#include "cu.h"
#include "memfs.h"

static const memfs_file tree[] = {
    {"a", "blocker b\nblocker c\n"},
    {"b", "blocker d\n"},
    {"c", "blocker d\n"},
    {"d", ""},
    {"x", "blocker y\n"},
    {"y", "blocker x\n"},
    {NULL, NULL},
};
static memfs fs = {tree, 0, NULL, NULL};

/* What the executor saw, for the file being checked. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static char seen_analysis[256], seen_artifact[256], seen_load[256];
static size_t seen_analysis_size, seen_artifact_size;

/* "NAME:FIRST-BLOCKER-OF-ITS-SNAPSHOT,..." of a blocker list. */
static void describe(char *buf, size_t cap, const vsched_blocker_in *b,
                     size_t n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && o < cap; i++) {
        const memfs_snap *sn = b[i].snapshot;
        o += (size_t)snprintf(buf + o, cap - o, "%s%s:%s", i ? "," : "",
                              b[i].name,
                              sn == NULL  ? "NULL"
                              : sn->n > 0 ? sn->blockers[0]
                                          : "-");
    }
}

static int t_source(void *inst, const vsched_ctx *ctx, const char *name,
                    const char *kind, const char *bytes, size_t len,
                    vsched_source_out *out)
{
    memfs_snap *sn = memfs_snap_parse(bytes, len);
    if (sn == NULL)
        return VSCHED_ENOMEM;
    out->snapshot = sn;
    out->content_hash = sn->hash;
    return VSCHED_OK;
}

static int t_deps(void *inst, const vsched_ctx *ctx, const char *name,
                  const void *snapshot, vsched_deps_out *out)
{
    return memfs_snap_deps(ctx, snapshot, out);
}

static int t_analysis(void *inst, const vsched_ctx *ctx,
                      const vsched_analysis_in *in, uint64_t *hash)
{
    *hash = in->content_hash + 1;
    for (size_t i = 0; i < in->n_blockers; i++)
        *hash = *hash * 31 + in->blocker_hashes[i];
    if (strcmp(in->name, "a") == 0 || strcmp(in->name, "x") == 0) {
        pthread_mutex_lock(&seen_lock);
        describe(seen_analysis, sizeof seen_analysis, in->blockers,
                 in->n_blockers);
        seen_analysis_size = in->size;
        pthread_mutex_unlock(&seen_lock);
    }
    return VSCHED_OK;
}

static int t_artifact(void *inst, const vsched_ctx *ctx,
                      const vsched_artifact_in *in, vsched_artifact_out *out)
{
    if (strcmp(in->name, "a") != 0 && strcmp(in->name, "x") != 0)
        return VSCHED_OK;
    char *bytes = NULL, *canon = NULL;
    size_t len = 0;
    int rc_load = ctx->load(ctx, "b", &bytes, &len);
    char *none = NULL;
    size_t nlen = 7;
    int rc_missing = ctx->load(ctx, "nope", &none, &nlen);
    int rc_real = ctx->realpath(ctx, "c", &canon);
    pthread_mutex_lock(&seen_lock);
    describe(seen_artifact, sizeof seen_artifact, in->blockers,
             in->n_blockers);
    seen_artifact_size = in->size;
    snprintf(seen_load, sizeof seen_load, "%d %.*s|%d %s %zu|%d %s", rc_load,
             (int)len, bytes != NULL ? bytes : "", rc_missing,
             none == NULL ? "NULL" : "set", nlen, rc_real,
             canon != NULL ? canon : "NULL");
    pthread_mutex_unlock(&seen_lock);
    ctx->free(ctx, bytes);
    ctx->free(ctx, canon);
    return VSCHED_OK;
}

static vsched_executor_ops ops = {
    .size = sizeof(vsched_executor_ops),
    .source = t_source,
    .extract_deps = t_deps,
    .analysis = t_analysis,
    .artifact = t_artifact,
    .snapshot_free = memfs_snap_free,
};

/* Build `name` to Artifact with a fresh scheduler (executor and loader
 * declared thread-safe or not); returns the status. */
static int build(const char *name, unsigned which, int thread_safe)
{
    ops.artifact_blockers = which;
    memset(seen_analysis, 0, sizeof seen_analysis);
    memset(seen_artifact, 0, sizeof seen_artifact);
    memset(seen_load, 0, sizeof seen_load);
    vsched_pool *cpu, *io;
    vsched_options o = {
        .size = sizeof o,
        .loader = {&memfs_loader_ops, &fs, thread_safe},
        .executor = {&ops, NULL, thread_safe},
    };
    vsched *s = memfs_start(&cpu, &io, 2, &o);
    vsched_request rq = {
        .name = name, .stage = VSCHED_STAGE_ARTIFACT, .profile = "release"};
    vsched_handle *h = NULL;
    CU_ASSERT_EQUAL_FATAL(vsched_submit_request(s, &rq, &h), VSCHED_OK);
    const vsched_result *r = NULL;
    CU_ASSERT_EQUAL(vsched_wait(h, &r), VSCHED_OK);
    int st = r != NULL ? r->status : VSCHED_EERR;
    vsched_handle_release(h);
    memfs_stop(s, cpu, io);
    return st;
}

static void analysis_sees_direct_blockers_with_their_snapshots(void)
{
    CU_ASSERT_EQUAL(build("a", VSCHED_BLOCKERS_DIRECT, 1), VSCHED_OK);
    CU_ASSERT_STRING_EQUAL(seen_analysis, "b:d,c:d");
    CU_ASSERT_EQUAL(seen_analysis_size, sizeof(vsched_analysis_in));
}

static void artifact_sees_direct_blockers_by_default(void)
{
    CU_ASSERT_EQUAL(build("a", VSCHED_BLOCKERS_DIRECT, 1), VSCHED_OK);
    CU_ASSERT_STRING_EQUAL(seen_artifact, "b:d,c:d");
    CU_ASSERT_EQUAL(seen_artifact_size, sizeof(vsched_artifact_in));
}

static void artifact_closure_is_preorder_each_once(void)
{
    CU_ASSERT_EQUAL(build("a", VSCHED_BLOCKERS_CLOSURE, 1), VSCHED_OK);
    CU_ASSERT_STRING_EQUAL(seen_artifact, "b:d,d:-,c:d");
}

static void artifact_closure_of_a_cycle_leaves_the_file_out(void)
{
    CU_ASSERT_EQUAL(build("x", VSCHED_BLOCKERS_CLOSURE, 1), VSCHED_OK);
    CU_ASSERT_STRING_EQUAL(seen_artifact, "y:x");
    CU_ASSERT_STRING_EQUAL(seen_analysis, "y:x");
}

static void serialised_executor_reaches_the_loader_through_ctx(void)
{
    /* Executor and loader both serialised: the executor's lock is held
     * while ctx->load takes the loader's. */
    CU_ASSERT_EQUAL(build("a", VSCHED_BLOCKERS_DIRECT, 0), VSCHED_OK);
    CU_ASSERT_STRING_EQUAL(seen_load, "0 blocker d\n|-4 NULL 0|0 c");
}

int main(void)
{
    static const vr_cu_test tests[] = {
        {"analysis_sees_direct_blockers_with_their_snapshots",
         analysis_sees_direct_blockers_with_their_snapshots},
        {"artifact_sees_direct_blockers_by_default",
         artifact_sees_direct_blockers_by_default},
        {"artifact_closure_is_preorder_each_once",
         artifact_closure_is_preorder_each_once},
        {"artifact_closure_of_a_cycle_leaves_the_file_out",
         artifact_closure_of_a_cycle_leaves_the_file_out},
        {"serialised_executor_reaches_the_loader_through_ctx",
         serialised_executor_reaches_the_loader_through_ctx},
        {NULL, NULL},
    };
    return vr_cu_main("blocker_inputs", tests);
}
