/*
 * synth -- the in-process loader and executor of the scheduler
 * benchmarks; see synth.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "synth.h"

uint64_t synth_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

long synth_peak_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f != NULL && fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmHWM:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    if (f != NULL)
        fclose(f);
    if (kb < 0) {
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) == 0)
            kb = ru.ru_maxrss;
    }
    return kb;
}

/* By hand: snprintf would be most of what an empty stage body costs. */
size_t synth_name(char *buf, size_t cap, size_t i)
{
    char digits[24];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + i % 10);
        i /= 10;
    } while (i > 0);
    if (cap < n + 2)
        return 0;
    buf[0] = 'f';
    for (size_t k = 0; k < n; k++)
        buf[1 + k] = digits[n - 1 - k];
    buf[n + 1] = '\0';
    return n + 1;
}

int synth_parse_strides(synth *sy, const char *list)
{
    sy->n_strides = 0;
    for (const char *p = list; *p != '\0';) {
        char *end = NULL;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || v == 0 || v > 1000000000ul ||
            sy->n_strides == SYNTH_MAX_STRIDES ||
            (*end != ',' && *end != '\0'))
            return -1;
        sy->strides[sy->n_strides++] = (unsigned)v;
        p = *end == ',' ? end + 1 : end;
    }
    return 0;
}

int synth_count(synth *sy)
{
    sy->runs = calloc(sy->n * 3 + 1, 1);
    atomic_init(&sy->order_violations, 0);
    return sy->runs != NULL ? 0 : -1;
}

void synth_free(synth *sy)
{
    free((void *)sy->runs);
    sy->runs = NULL;
}

size_t synth_blockers_of(const synth *sy, size_t i)
{
    size_t k = 0;
    for (size_t j = 0; j < sy->n_strides; j++)
        k += sy->strides[j] <= i;
    return k;
}

size_t synth_runs_total(const synth *sy)
{
    size_t total = 0;
    for (size_t i = 0; sy->runs != NULL && i < sy->n * 3; i++)
        total += atomic_load_explicit(&sy->runs[i], memory_order_relaxed);
    return total;
}

int synth_check(const synth *sy, char *why, size_t cap)
{
    static const char *const stage[] = {"source", "analysis", "artifact"};
    for (size_t i = 0; sy->runs != NULL && i < sy->n * 3; i++) {
        unsigned r = atomic_load_explicit(&sy->runs[i], memory_order_relaxed);
        if (r != 1) {
            snprintf(why, cap, "%s of f%zu ran %u times", stage[i % 3], i / 3,
                     r);
            return -1;
        }
    }
    unsigned long v = atomic_load(&sy->order_violations);
    if (v != 0) {
        snprintf(why, cap, "%lu artifacts ran before a blocker's analysis", v);
        return -1;
    }
    return 0;
}

/* ---- helpers ---------------------------------------------------------- */

/* Index of "f<i>" (decimal, no leading zero) when i < n, else -1. */
static long long synth_index(const synth *sy, const char *name)
{
    if (name[0] != 'f' || name[1] < '0' || name[1] > '9' ||
        (name[1] == '0' && name[2] != '\0'))
        return -1;
    unsigned long long i = 0;
    for (const char *p = name + 1; *p != '\0'; p++) {
        if (*p < '0' || *p > '9' || i > sy->n)
            return -1;
        i = i * 10 + (unsigned)(*p - '0');
    }
    return i < sy->n ? (long long)i : -1;
}

static void synth_bump(const synth *sy, size_t i, int stage)
{
    if (sy->runs == NULL)
        return;
    _Atomic unsigned char *c = &sy->runs[i * 3 + (size_t)stage];
    unsigned char v = atomic_load_explicit(c, memory_order_relaxed);
    atomic_store_explicit(c, (unsigned char)(v + 1), memory_order_relaxed);
}

static void synth_spin(const synth *sy)
{
    if (sy->cost_ns == 0)
        return;
    uint64_t end = synth_now_ns() + sy->cost_ns;
    while (synth_now_ns() < end)
        ;
}

static uint64_t synth_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull; /* splitmix64 */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static char *synth_dup(const vsched_ctx *ctx, const char *s, size_t n)
{
    char *d = ctx->alloc(ctx, n + 1);
    if (d != NULL)
        memcpy(d, s, n + 1);
    return d;
}

/* ---- loader ------------------------------------------------------------ */

static int synth_load(void *inst, const vsched_ctx *ctx, const char *name,
                      char **bytes, size_t *len)
{
    if (synth_index(inst, name) < 0)
        return VSCHED_ENOENT;
    *bytes = NULL;
    *len = 0;
    return VSCHED_OK;
}

static int synth_exists(void *inst, const vsched_ctx *ctx, const char *name)
{
    return synth_index(inst, name) >= 0;
}

static int synth_classify(void *inst, const vsched_ctx *ctx, const char *name,
                          char *kind, size_t cap)
{
    if (cap < 2)
        return VSCHED_EINVAL;
    memcpy(kind, "c", 2);
    return VSCHED_OK;
}

static int synth_realpath(void *inst, const vsched_ctx *ctx, const char *name,
                          char **canonical)
{
    if (synth_index(inst, name) < 0)
        return VSCHED_ENOENT;
    *canonical = synth_dup(ctx, name, strlen(name));
    return *canonical != NULL ? VSCHED_OK : VSCHED_ENOMEM;
}

const vsched_loader_ops synth_loader_ops = {
    .size = sizeof(vsched_loader_ops),
    .load = synth_load,
    .exists = synth_exists,
    .classify = synth_classify,
    .realpath = synth_realpath,
};

/* ---- executor ---------------------------------------------------------- */

static char synth_snapshot; /* every snapshot points here */

static int synth_source(void *inst, const vsched_ctx *ctx, const char *name,
                        const char *kind, const char *bytes, size_t len,
                        vsched_source_out *out)
{
    const synth *sy = inst;
    long long i = synth_index(sy, name);
    if (i < 0)
        return VSCHED_ENOENT;
    synth_spin(sy);
    synth_bump(sy, (size_t)i, SYNTH_SOURCE);
    out->snapshot = &synth_snapshot;
    out->content_hash = synth_mix((uint64_t)i);
    return VSCHED_OK;
}

static int synth_extract_deps(void *inst, const vsched_ctx *ctx,
                              const char *name, const void *snapshot,
                              vsched_deps_out *out)
{
    const synth *sy = inst;
    size_t i = (size_t)synth_index(sy, name), k = 0;
    memset(out, 0, sizeof *out);
    size_t nb = synth_blockers_of(sy, i);
    if (nb == 0)
        return VSCHED_OK;
    char **v = ctx->alloc(ctx, nb * sizeof *v);
    if (v == NULL)
        return VSCHED_ENOMEM;
    for (size_t j = 0; j < sy->n_strides; j++) {
        if (sy->strides[j] > i)
            continue;
        char buf[32];
        size_t n = synth_name(buf, sizeof buf, i - sy->strides[j]);
        if ((v[k] = synth_dup(ctx, buf, n)) == NULL) {
            while (k > 0)
                ctx->free(ctx, v[--k]);
            ctx->free(ctx, v);
            return VSCHED_ENOMEM;
        }
        k++;
    }
    out->blockers = v;
    out->n_blockers = k;
    return VSCHED_OK;
}

static int synth_analysis(void *inst, const vsched_ctx *ctx,
                          const vsched_analysis_in *in, uint64_t *hash)
{
    const synth *sy = inst;
    long long i = synth_index(sy, in->name);
    if (i < 0)
        return VSCHED_ENOENT;
    synth_spin(sy);
    synth_bump(sy, (size_t)i, SYNTH_ANALYSIS);
    uint64_t h = in->content_hash;
    for (size_t k = 0; k < in->n_blockers; k++)
        h = synth_mix(h ^ in->blocker_hashes[k]);
    *hash = h;
    return VSCHED_OK;
}

static int synth_artifact(void *inst, const vsched_ctx *ctx,
                          const vsched_artifact_in *in,
                          vsched_artifact_out *out)
{
    synth *sy = inst;
    long long i = synth_index(sy, in->name);
    memset(out, 0, sizeof *out);
    if (i < 0)
        return VSCHED_ENOENT;
    synth_spin(sy);
    synth_bump(sy, (size_t)i, SYNTH_ARTIFACT);
    for (size_t j = 0; sy->runs != NULL && j < sy->n_strides; j++) {
        size_t s = sy->strides[j];
        if (s <= (size_t)i &&
            atomic_load_explicit(
                &sy->runs[((size_t)i - s) * 3 + SYNTH_ANALYSIS],
                memory_order_relaxed) == 0)
            atomic_fetch_add(&sy->order_violations, 1);
    }
    out->artifact_hash = in->analysis_hash ^ 0xa5a5a5a5u;
    return VSCHED_OK;
}

static void synth_snapshot_free(void *inst, void *snapshot)
{
    (void)inst;
    (void)snapshot;
}

const vsched_executor_ops synth_executor_ops = {
    .size = sizeof(vsched_executor_ops),
    .source = synth_source,
    .extract_deps = synth_extract_deps,
    .analysis = synth_analysis,
    .artifact = synth_artifact,
    .snapshot_free = synth_snapshot_free,
    .job = NULL,
};
