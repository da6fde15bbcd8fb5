/*
 * null.c -- the `null` plugin: a fake loader and executor for tests and
 * benchmarks.
 *
 * As a loader it serves `files` synthetic sources "f0" .. "f{files-1}".
 * The content of f<i> is up to `deps` lines "blocker f<j>", each j drawn
 * from [0, i) by a pure function of (seed, i, k) and deduplicated, so the
 * graph is acyclic, f0 has no blockers, and two runs with one seed agree.
 *
 * As an executor it reads dependencies from text lines of any source (the
 * synthetic ones or real files through `fs`):
 *     dep NAME        a forward dependency
 *     blocker NAME    a dependency whose Analysis gates this file
 * Other lines are ignored. Each stage (Source, Analysis, Artifact) burns
 * `cost_us` microseconds of CPU on a monotonic clock, polling cancellation;
 * Artifact writes nothing and fails on purpose for the names in `fail`.
 *
 * Thread safety: an instance is immutable after create().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xxhash.h>

#include <vsched/plugin.h>

typedef struct null_inst {
    unsigned long long files; /* number of synthetic sources */
    unsigned deps;            /* blockers drawn per synthetic source */
    long long cost_us;        /* CPU burnt per stage */
    unsigned long long seed;
    char **fail; /* sorted names whose Artifact fails */
    size_t n_fail;
    char *fail_buf; /* storage of the fail words */
} null_inst;

/* One dependency line of a snapshot. */
typedef struct null_dep {
    const char *name; /* into the snapshot's trailing storage */
    int blocker;      /* 1 for "blocker NAME", 0 for "dep NAME" */
} null_dep;

/* Snapshot: one malloc block, the dep array then the names. */
typedef struct null_snap {
    size_t n, n_blockers;
    null_dep dep[];
} null_snap;

#define NULL_MAX_DEPS 64

static const vsched_key null_schema[] = {
    {"files", VSCHED_KEY_INT, "100",
     "number of synthetic files f0 .. f{N-1} (loader)", 0, 100000000, 0},
    {"deps", VSCHED_KEY_INT, "3", "blockers per synthetic file (loader)", 0,
     NULL_MAX_DEPS, 0},
    {"cost_us", VSCHED_KEY_INT, "0",
     "CPU microseconds burnt per stage (executor)", 0, 10000000, 0},
    {"fail", VSCHED_KEY_LIST, "",
     "source names whose Artifact fails (executor)", 0, 0, 0},
    {"seed", VSCHED_KEY_INT, "1", "seed of the synthetic graph (loader)", 0,
     INT64_MAX, 0},
};

/* ---- synthetic sources ------------------------------------------------- */

static uint64_t null_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull; /* splitmix64 */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Index of a synthetic name "f<i>" (no sign, no leading zero), or -1. */
static long long null_index(const null_inst *nl, const char *name)
{
    if (name == NULL || name[0] != 'f' || name[1] < '0' || name[1] > '9' ||
        (name[1] == '0' && name[2] != '\0'))
        return -1;
    unsigned long long i = 0;
    for (const char *p = name + 1; *p != '\0'; p++) {
        if (*p < '0' || *p > '9' || i > nl->files)
            return -1;
        i = i * 10 + (unsigned)(*p - '0');
    }
    return i < nl->files ? (long long)i : -1;
}

/* The distinct blockers of f<i>, in draw order; returns their count. */
static size_t null_blockers_of(const null_inst *nl, unsigned long long i,
                               unsigned long long *out)
{
    size_t n = 0;
    for (unsigned k = 0; i > 0 && k < nl->deps; k++) {
        uint64_t r = null_mix(null_mix(nl->seed) ^ null_mix(i * 64 + k));
        unsigned long long j = r % i;
        size_t m = 0;
        while (m < n && out[m] != j)
            m++;
        if (m == n)
            out[n++] = j;
    }
    return n;
}

static int null_load(void *inst, const vsched_ctx *ctx, const char *name,
                     char **bytes, size_t *len)
{
    const null_inst *nl = inst;
    long long i = null_index(nl, name);
    if (i < 0)
        return VSCHED_ENOENT;
    unsigned long long b[NULL_MAX_DEPS];
    size_t n = null_blockers_of(nl, (unsigned long long)i, b);
    size_t cap = n * 32 + 1, o = 0;
    char *buf = ctx->alloc(ctx, cap);
    if (buf == NULL)
        return VSCHED_ENOMEM;
    for (size_t k = 0; k < n; k++)
        o += (size_t)snprintf(buf + o, cap - o, "blocker f%llu\n", b[k]);
    buf[o] = '\0';
    *bytes = buf;
    *len = o;
    return VSCHED_OK;
}

static int null_exists(void *inst, const vsched_ctx *ctx, const char *name)
{
    return null_index(inst, name) >= 0;
}

static int null_classify(void *inst, const vsched_ctx *ctx, const char *name,
                         char *kind, size_t cap)
{
    if (kind == NULL || cap < sizeof "null")
        return VSCHED_EINVAL;
    memcpy(kind, "null", sizeof "null");
    return VSCHED_OK;
}

static int null_realpath(void *inst, const vsched_ctx *ctx, const char *name,
                         char **canonical)
{
    if (null_index(inst, name) < 0)
        return VSCHED_ENOENT;
    size_t n = strlen(name) + 1;
    if ((*canonical = ctx->alloc(ctx, n)) == NULL)
        return VSCHED_ENOMEM;
    memcpy(*canonical, name, n);
    return VSCHED_OK;
}

/* ---- executor ---------------------------------------------------------- */

static int null_cancelled(const vsched_ctx *ctx)
{
    return ctx->is_cancelled != NULL && ctx->is_cancelled(ctx);
}

/* Burn `us` microseconds of CPU; VSCHED_ECANCELLED if cancelled meanwhile. */
static int null_spin(const vsched_ctx *ctx, long long us)
{
    if (us <= 0)
        return VSCHED_OK;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    long long now = (long long)t.tv_sec * 1000000000 + t.tv_nsec;
    long long deadline = now + us * 1000;
    for (unsigned k = 1; now < deadline; k++) {
        if (k % 1024 == 0 && null_cancelled(ctx))
            return VSCHED_ECANCELLED;
        clock_gettime(CLOCK_MONOTONIC, &t);
        now = (long long)t.tv_sec * 1000000000 + t.tv_nsec;
    }
    return VSCHED_OK;
}

/* If [p, e) is "dep NAME" or "blocker NAME", set the name span and kind. */
static int null_parse_line(const char *p, const char *e, const char **name,
                           size_t *len, int *blocker)
{
    while (e > p && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
        e--;
    size_t kw;
    if ((size_t)(e - p) > 4 && memcmp(p, "dep ", 4) == 0)
        kw = 4, *blocker = 0;
    else if ((size_t)(e - p) > 8 && memcmp(p, "blocker ", 8) == 0)
        kw = 8, *blocker = 1;
    else
        return 0;
    for (p += kw; p < e && (*p == ' ' || *p == '\t');)
        p++;
    if (p == e || memchr(p, '\0', (size_t)(e - p)) != NULL)
        return 0;
    *name = p;
    *len = (size_t)(e - p);
    return 1;
}

/* Parse the dependency lines of [bytes, bytes+len) into `snap` (NULL to
 * count only); returns the bytes of names, and the entry count in *n. */
static size_t null_parse(const char *bytes, size_t len, null_snap *snap,
                         size_t *n)
{
    char *store = snap != NULL ? (char *)&snap->dep[*n] : NULL;
    size_t k = 0, used = 0;
    for (const char *p = bytes, *end = bytes + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl != NULL ? nl : end, *name;
        size_t nlen;
        int blocker;
        if (null_parse_line(p, e, &name, &nlen, &blocker)) {
            if (snap != NULL) {
                memcpy(store + used, name, nlen);
                store[used + nlen] = '\0';
                snap->dep[k] = (null_dep){store + used, blocker};
                snap->n_blockers += (size_t)blocker;
            }
            k++;
            used += nlen + 1;
        }
        p = e + 1;
    }
    *n = k;
    return used;
}

static int null_source(void *inst, const vsched_ctx *ctx, const char *name,
                       const char *kind, const char *bytes, size_t len,
                       vsched_source_out *out)
{
    const null_inst *nl = inst;
    int rc = null_spin(ctx, nl->cost_us);
    if (rc != VSCHED_OK)
        return rc;
    size_t n;
    size_t names = null_parse(bytes, len, NULL, &n);
    null_snap *snap = malloc(sizeof *snap + n * sizeof(null_dep) + names);
    if (snap == NULL)
        return VSCHED_ENOMEM;
    snap->n = n;
    snap->n_blockers = 0;
    null_parse(bytes, len, snap, &n);
    out->snapshot = snap;
    out->content_hash = XXH3_64bits(bytes, len);
    return VSCHED_OK;
}

static char *null_strdup(const vsched_ctx *ctx, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ctx->alloc(ctx, n);
    return d != NULL ? memcpy(d, s, n) : NULL;
}

static void null_free_names(const vsched_ctx *ctx, char **v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++)
        ctx->free(ctx, v[i]);
    ctx->free(ctx, v);
}

static int null_extract_deps(void *inst, const vsched_ctx *ctx,
                             const char *name, const void *snapshot,
                             vsched_deps_out *out)
{
    const null_snap *s = snapshot;
    memset(out, 0, sizeof *out);
    char **deps = ctx->alloc(ctx, (s->n + 1) * sizeof(char *));
    char **blk = ctx->alloc(ctx, (s->n_blockers + 1) * sizeof(char *));
    size_t nd = 0, nb = 0;
    int ok = deps != NULL && blk != NULL;
    for (size_t i = 0; ok && i < s->n; i++) {
        ok = (deps[nd] = null_strdup(ctx, s->dep[i].name)) != NULL;
        nd += (size_t)ok;
        if (ok && s->dep[i].blocker) {
            ok = (blk[nb] = null_strdup(ctx, s->dep[i].name)) != NULL;
            nb += (size_t)ok;
        }
    }
    if (!ok) {
        null_free_names(ctx, deps, nd);
        null_free_names(ctx, blk, nb);
        return VSCHED_ENOMEM;
    }
    *out = (vsched_deps_out){deps, nd, blk, nb};
    return VSCHED_OK;
}

/* XXH3 over the content hash followed by the blocker hashes. */
static uint64_t null_interface_hash(uint64_t content, const uint64_t *b,
                                    size_t n)
{
    uint64_t small[NULL_MAX_DEPS + 1];
    uint64_t *v = n < NULL_MAX_DEPS ? small : malloc((n + 1) * sizeof *v);
    if (v == NULL) /* out of memory: chain instead of concatenating */
        return XXH3_64bits_withSeed(b, n * sizeof *b, content);
    v[0] = content;
    if (n > 0)
        memcpy(v + 1, b, n * sizeof *b);
    uint64_t h = XXH3_64bits(v, (n + 1) * sizeof *v);
    if (v != small)
        free(v);
    return h;
}

static int null_analysis(void *inst, const vsched_ctx *ctx,
                         const vsched_analysis_in *in, uint64_t *hash)
{
    int rc = null_spin(ctx, ((const null_inst *)inst)->cost_us);
    if (rc == VSCHED_OK)
        *hash = null_interface_hash(in->content_hash, in->blocker_hashes,
                                    in->n_blockers);
    return rc;
}

static int null_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int null_artifact(void *inst, const vsched_ctx *ctx,
                         const vsched_artifact_in *in,
                         vsched_artifact_out *out)
{
    const null_inst *nl = inst;
    memset(out, 0, sizeof *out);
    int rc = null_spin(ctx, nl->cost_us);
    if (rc != VSCHED_OK)
        return rc;
    if (nl->n_fail > 0 && bsearch(&in->name, nl->fail, nl->n_fail,
                                  sizeof(char *), null_cmp_str) != NULL) {
        ctx->diag(ctx, VSCHED_SEV_ERROR, in->name, 0, "null: forced failure");
        return VSCHED_ETOOL;
    }
    const char *profile = in->profile != NULL ? in->profile : "";
    out->artifact_hash =
        in->analysis_hash ^ XXH3_64bits(profile, strlen(profile));
    return VSCHED_OK;
}

static int null_job(void *inst, const vsched_ctx *ctx, const vsched_job_in *in,
                    vsched_artifact_out *out)
{
    memset(out, 0, sizeof *out);
    return VSCHED_OK;
}

static void null_snapshot_free(void *inst, void *snapshot)
{
    free(snapshot);
}

/* ---- lifecycle --------------------------------------------------------- */

static long long null_int(const vsched_config *cfg, const char *key,
                          long long dflt)
{
    const char *v = cfg->get(cfg, cfg->section, key);
    return v != NULL ? strtoll(v, NULL, 10) : dflt;
}

/* Split the `fail` list into sorted words. */
static int null_parse_fail(null_inst *nl, const char *list)
{
    if (list == NULL)
        return VSCHED_OK;
    if ((nl->fail_buf = strdup(list)) == NULL)
        return VSCHED_ENOMEM;
    size_t cap = strlen(list) / 2 + 1;
    if ((nl->fail = malloc(cap * sizeof(char *))) == NULL)
        return VSCHED_ENOMEM;
    char *save = NULL;
    for (char *w = strtok_r(nl->fail_buf, " \t\r\n", &save); w != NULL;
         w = strtok_r(NULL, " \t\r\n", &save))
        nl->fail[nl->n_fail++] = w;
    qsort(nl->fail, nl->n_fail, sizeof(char *), null_cmp_str);
    return VSCHED_OK;
}

static void null_destroy(void *inst)
{
    null_inst *nl = inst;
    if (nl == NULL)
        return;
    free(nl->fail);
    free(nl->fail_buf);
    free(nl);
}

static int null_create(const vsched_ctx *ctx, const vsched_config *cfg,
                       void **inst, char **errmsg)
{
    null_inst *nl = calloc(1, sizeof *nl);
    if (nl == NULL)
        return VSCHED_ENOMEM;
    nl->files = (unsigned long long)null_int(cfg, "files", 100);
    nl->deps = (unsigned)null_int(cfg, "deps", 3);
    nl->cost_us = null_int(cfg, "cost_us", 0);
    nl->seed = (unsigned long long)null_int(cfg, "seed", 1);
    if (nl->deps > NULL_MAX_DEPS) {
        null_destroy(nl);
        static const char msg[] = "null: deps must be at most 64";
        if ((*errmsg = ctx->alloc(ctx, sizeof msg)) != NULL)
            memcpy(*errmsg, msg, sizeof msg);
        return VSCHED_ECONFIG;
    }
    if (null_parse_fail(nl, cfg->get(cfg, cfg->section, "fail")) != 0) {
        null_destroy(nl);
        return VSCHED_ENOMEM;
    }
    *inst = nl;
    return VSCHED_OK;
}

static const vsched_loader_ops null_loader = {
    .size = sizeof(vsched_loader_ops),
    .load = null_load,
    .exists = null_exists,
    .classify = null_classify,
    .realpath = null_realpath,
};

static const vsched_executor_ops null_executor = {
    .size = sizeof(vsched_executor_ops),
    .source = null_source,
    .extract_deps = null_extract_deps,
    .analysis = null_analysis,
    .artifact = null_artifact,
    .snapshot_free = null_snapshot_free,
    .job = null_job,
};

static const vsched_plugin null_plugin = {
    .abi_major = VSCHED_PLUGIN_ABI_MAJOR,
    .abi_minor = VSCHED_PLUGIN_ABI_MINOR,
    .size = sizeof(vsched_plugin),
    .name = "null",
    .version = "1.0",
    .description = "fake loader and executor with configurable cost and deps",
    .roles = VSCHED_ROLE_LOADER | VSCHED_ROLE_EXECUTOR,
    .flags = VSCHED_PLUGIN_THREAD_SAFE,
    .schema = null_schema,
    .n_schema = sizeof null_schema / sizeof null_schema[0],
    .create = null_create,
    .destroy = null_destroy,
    .loader = &null_loader,
    .executor = &null_executor,
};

/* The null plugin's descriptor (static storage, never NULL). */
VSCHED_PLUGIN_DEFINE(null)
{
    return &null_plugin;
}
