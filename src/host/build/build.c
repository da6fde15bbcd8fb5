/*
 * build -- the inputs and profiles of a build, and the scheduler session;
 * see build.h. The run itself is cli/run.c; its batch, batch.c.
 */
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "build/build.h"
#include "cli/progress.h"
#include "common/util.h"

static int has_wildcard(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

static void names_push(char ***v, size_t *n, char *s)
{
    *v = vr_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = s;
}

void vr_build_inputs_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* qsort comparator of an array of C strings. */
static int cmp_path(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first directory glob could not read, and why (glob's error
 * callback has no user pointer; inputs are expanded on the main thread
 * only, one pattern at a time). */
static _Thread_local char *glob_bad_dir;
static _Thread_local int glob_bad_errno;

static int glob_error(const char *path, int eno)
{
    if (glob_bad_dir == NULL) {
        glob_bad_dir = vr_xstrdup(path);
        glob_bad_errno = eno;
    }
    return 1; /* stop: an unreadable directory is an error, not "no match" */
}

/* Glob `pattern` under `root`, appending names relative to root. Returns
 * how many it added, or -1 with *err set when a directory could not be
 * read (GLOB_ERR: named, with its errno). */
static int expand_pattern(const char *root, const char *pattern, char ***v,
                          size_t *n, char **err)
{
    char *full = vr_path_join(root, pattern);
    glob_t g;
    glob_bad_dir = NULL;
    int rc = glob(full, GLOB_NOSORT | GLOB_ERR, glob_error, &g);
    free(full);
    if (rc != 0) {
        if (rc != GLOB_NOMATCH)
            globfree(&g);
        if (rc == GLOB_ABORTED && glob_bad_dir != NULL) {
            *err = vr_strfmt("cannot read directory %s: %s", glob_bad_dir,
                             strerror(glob_bad_errno));
            free(glob_bad_dir);
            glob_bad_dir = NULL;
            return -1;
        }
        return 0;
    }
    /* Sorted for a stable input order. */
    qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, cmp_path);
    size_t rootlen = strlen(root);
    size_t added = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *p = g.gl_pathv[i];
        if (strncmp(p, root, rootlen) == 0 && p[rootlen] == '/')
            p += rootlen + 1;
        names_push(v, n, vr_xstrdup(p));
        added++;
    }
    globfree(&g);
    return (int)added;
}

typedef struct ranked {
    char *name;
    size_t index;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c != 0)
        return c;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Drop repeated names (two patterns matching one file), keeping the first
 * occurrence and the input order. */
static void dedupe(char **v, size_t *n)
{
    ranked *r = vr_xmalloc((*n + 1) * sizeof *r);
    for (size_t i = 0; i < *n; i++)
        r[i] = (ranked){v[i], i};
    qsort(r, *n, sizeof *r, cmp_ranked);
    unsigned char *dup = vr_xcalloc(*n + 1, 1);
    for (size_t i = 1; i < *n; i++)
        dup[r[i].index] = strcmp(r[i].name, r[i - 1].name) == 0;
    free(r);
    for (size_t i = 0; i < *n; i++)
        if (dup[i]) {
            free(v[i]);
            v[i] = NULL;
        }
    free(dup);
    size_t out = 0;
    for (size_t i = 0; i < *n; i++)
        if (v[i] != NULL)
            v[out++] = v[i];
    *n = out;
}

int vr_build_inputs(const vr_build *b, char ***names, size_t *n, char **err)
{
    *names = NULL;
    *n = 0;
    *err = NULL;
    if (b->cli->n_files > 0) {
        for (size_t i = 0; i < b->cli->n_files; i++)
            names_push(names, n, vr_xstrdup(b->cli->files[i]));
        return VSCHED_OK;
    }
    const vr_settings *s = b->settings;
    const char *root = s->loader_root;
    int rc = VSCHED_OK;
    for (size_t i = 0; i < s->n_inputs; i++) {
        const char *pat = s->inputs[i];
        if (root == NULL || !has_wildcard(pat)) {
            names_push(names, n, vr_xstrdup(pat));
            continue;
        }
        char *why = NULL;
        int added = expand_pattern(root, pat, names, n, &why);
        if (added < 0) {
            *err = vr_strfmt("%s:%u: [batch] inputs: pattern '%s': %s",
                             s->path, s->inputs_line, pat, why);
            free(why);
            rc = VSCHED_ECONFIG;
            break;
        }
        if (added == 0) {
            *err = vr_strfmt("%s:%u: [batch] inputs: pattern '%s' matches "
                             "no file under %s",
                             s->path, s->inputs_line, pat, root);
            rc = VSCHED_ECONFIG;
            break;
        }
    }
    if (rc == VSCHED_OK && *n == 0) {
        *err = vr_strfmt("%s: no inputs: set [batch] inputs or name FILES",
                         s->path);
        rc = VSCHED_ECONFIG;
    }
    if (rc != VSCHED_OK) {
        vr_build_inputs_free(*names, *n);
        *names = NULL;
        *n = 0;
        return rc;
    }
    dedupe(*names, n);
    return VSCHED_OK;
}

/* Contract: see build.h. */
char **vr_build_profiles(const vr_build *b, size_t *n)
{
    char **v = NULL;
    *n = 0;
    if (b->cli->n_profiles > 0) {
        for (size_t i = 0; i < b->cli->n_profiles; i++)
            names_push(&v, n, vr_xstrdup(b->cli->profiles[i]));
        return v;
    }
    for (size_t i = 0; i < b->settings->n_profiles; i++)
        names_push(&v, n, vr_xstrdup(b->settings->profiles[i]));
    return v;
}

static unsigned online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

int vr_session_open(vr_session *ss, const vr_build *b,
                    vsched_observer_fn observer, void *observer_user)
{
    const vr_settings *s = b->settings;
    *ss = (vr_session){NULL, NULL, NULL};
    unsigned cpu = b->cli->jobs > 0 ? (unsigned)b->cli->jobs
                                    : s->cpu_threads;
    if (cpu == 0)
        cpu = online_cpus();
    unsigned io = s->io_threads;
    if (vsched_pool_create(&ss->cpu_pool, VSCHED_POOL_CPU, cpu, 0) != 0 ||
        vsched_pool_create(&ss->io_pool, VSCHED_POOL_IO, io, 0) != 0) {
        fprintf(b->err, "vsched-run: cannot start worker threads\n");
        return -1;
    }
    vsched_options o = {
        .size = sizeof o,
        .cpu_pool = ss->cpu_pool,
        .io_pool = ss->io_pool,
        .loader = b->loader,
        .executor = b->executor,
        .inbox_capacity = s->inbox_capacity,
        .observer = observer,
        .observer_user = observer_user,
        .ready_capacity = s->ready_capacity,
        /* an executor whose language forbids blocker cycles says so in its
         * descriptor; otherwise a cycle (guarded headers including each
         * other) builds as one unit */
        .blocker_cycles_fail = b->executor_desc != NULL &&
                               (b->executor_desc->flags &
                                VSCHED_PLUGIN_CYCLES_FORBIDDEN) != 0,
    };
    if (vsched_create(&ss->sched, &o) != 0) {
        fprintf(b->err, "vsched-run: cannot start the scheduler\n");
        return -1;
    }
    /* [resource.NAME] capacity = N; other names get capacity 1 on use. */
    for (size_t i = 0; i < s->n_resources; i++) {
        const vr_resource_setting *r = &s->resources[i];
        if (vsched_set_resource_capacity(ss->sched, r->name, r->capacity) !=
            0) {
            fprintf(b->err, "vsched-run: cannot set [resource.%s] "
                            "capacity\n",
                    r->name);
            return -1;
        }
    }
    return 0;
}

void vr_session_close(vr_session *ss)
{
    vsched_destroy(ss->sched);
    vsched_pool_destroy(ss->cpu_pool);
    vsched_pool_destroy(ss->io_pool);
    *ss = (vr_session){NULL, NULL, NULL};
}

void vr_session_print_stats(FILE *out, vsched *s)
{
    vsched_stats st;
    vsched_get_stats(s, &st);
    vr_session_print_counters(out, &st);
}

void vr_session_print_counters(FILE *out, const vsched_stats *stp)
{
    const vsched_stats st = *stp;
#define U(x) ((unsigned long long)(x))
    fprintf(out,
            "stats: submit_count=%llu batch_submissions=%llu "
            "dedup_joins=%llu stale_completion_refusals=%llu "
            "inbox_depth_max=%llu ready_depth_max=%llu\n"
            "stats: occupancy files=%llu graph_nodes=%llu "
            "edges=%llu/%llu waiters=%llu/%llu blockers=%llu/%llu "
            "source_versions=%llu live_roots=%llu retired_pending=%llu\n"
            "stats: runs source=%llu analysis=%llu artifact=%llu "
            "failures source=%llu analysis=%llu artifact=%llu\n",
            U(st.submit_count), U(st.batch_submissions), U(st.dedup_joins),
            U(st.stale_completion_refusals), U(st.inbox_depth_max),
            U(st.ready_depth_max), U(st.files), U(st.graph_nodes),
            U(st.edges), U(st.edges_capacity), U(st.waiters),
            U(st.waiters_capacity), U(st.blockers), U(st.blockers_capacity),
            U(st.source_versions), U(st.live_roots), U(st.retired_pending),
            U(st.stage_runs[0]), U(st.stage_runs[1]), U(st.stage_runs[2]),
            U(st.stage_failures[0]), U(st.stage_failures[1]),
            U(st.stage_failures[2]));
#undef U
}

/* Contract: see build.h. */
const char *vr_build_link_name(const vr_build *b)
{
    if (b->cli->n_files > 0)
        return NULL;
    return b->settings->link;
}
