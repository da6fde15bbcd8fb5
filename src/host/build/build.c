/*
 * build -- the inputs and profiles of a build, and the scheduler session;
 * see build.h. The run itself is cli/run.c; its batch, batch.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "build/build.h"
#include "build/glob.h"
#include "build/operands.h"
#include "build/remote.h"
#include "cli/progress.h"
#include "common/escape.h"
#include "common/util.h"

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
void vr_build_dedupe(char **v, size_t *n)
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

/* Contract: see build.h. */
vsched_executor_binding vr_build_stages(const vr_build *b)
{
    return b->stages.ops != NULL ? b->stages : b->executor;
}

/* What is wrong with `name`, a name (no wildcard) of an inputs list under
 * `root`, as a FILE operand would be refused (operands.h) and as a
 * pattern's match would be (glob.h): "matches no file" (absent, below a
 * non-directory, or ending in '/'), a symbolic link that leads nowhere
 * (dangling, a loop), a directory, a FIFO, socket or device (only
 * regular files are sources), or, by the loader's realpath when b has a
 * loader, a file outside its root. NULL when nothing is. */
static const char *vr_input_name_problem(const vr_build *b, const char *root,
                                         const char *name)
{
    size_t len = strlen(name);
    if (len > 0 && name[len - 1] == '/')
        return "matches no file under";
    char *path = vr_path_join(root, name);
    struct stat st;
    int rc = stat(path, &st);
    int err = errno;
    int link = rc != 0 && lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
    free(path);
    if (rc != 0 && err == ENOENT && link)
        return "is a symbolic link that leads nowhere (its target does "
               "not exist), under";
    if (rc != 0)
        return err == ENOENT || err == ENOTDIR ? "matches no file under"
               : err == ELOOP ? "is a symbolic link that leads nowhere "
                                "(a loop), under"
                              : NULL;
    if (S_ISDIR(st.st_mode))
        return "names a directory, not a source, under";
    if (!S_ISREG(st.st_mode))
        return "names no regular file (a FIFO, socket or device), not a "
               "source, under";
    if (b->loader.ops == NULL)
        return NULL; /* --list-targets: no loader is made */
    char *canon = NULL, *why = NULL;
    rc = vr_loader_realpath(b, name, &canon, &why);
    free(canon);
    free(why);
    return rc == VSCHED_EESCAPE ? "names a file outside the loader root"
                                : NULL;
}

/* Contract: see build.h. */
int vr_build_expand(const vr_build *b, char *const *pats, size_t n_pats,
                    char *const *excl, size_t n_excl, const char *where,
                    const char *what, char ***names, size_t *n, char **err)
{
    const vr_settings *s = b->settings;
    const char *root = s->loader_root;
    size_t first = *n;
    for (size_t i = 0; i < n_pats; i++) {
        const char *pat = pats[i];
        if (root == NULL || !vr_glob_has_wildcard(pat)) {
            /* A name: under a root, one a FILE operand could not be is
             * an error, as a pattern matching nothing is. */
            const char *problem =
                root != NULL ? vr_input_name_problem(b, root, pat) : NULL;
            if (problem != NULL) {
                vr_esc ep = {0}, er = {0};
                *err = vr_strfmt("%s%s: pattern '%s' %s %s", where, what,
                                 vr_esc_name(&ep, pat), problem,
                                 vr_esc_name(&er, root));
                vr_esc_done(&ep);
                vr_esc_done(&er);
                return VSCHED_ECONFIG;
            }
            names_push(names, n, vr_xstrdup(pat));
            continue;
        }
        char *bad = NULL;
        size_t added = vr_glob_expand(root, pat, (const char *const *)excl,
                                      n_excl, names, n, &bad);
        if (bad != NULL || added == 0) {
            vr_esc ep = {0}, er = {0};
            *err = bad != NULL
                       ? vr_strfmt("%s%s: pattern '%s': %s", where, what,
                                   vr_esc_name(&ep, pat), bad)
                       : vr_strfmt("%s%s: pattern '%s' matches no file "
                                   "under %s",
                                   where, what, vr_esc_name(&ep, pat),
                                   vr_esc_name(&er, root));
            vr_esc_done(&ep);
            vr_esc_done(&er);
            free(bad);
            return VSCHED_ECONFIG;
        }
    }
    size_t out = first;
    for (size_t i = first; i < *n; i++) {
        size_t k = 0;
        while (k < n_excl && !vr_glob_excluded(excl[k], (*names)[i]))
            k++;
        if (k < n_excl)
            free((*names)[i]);
        else
            (*names)[out++] = (*names)[i];
    }
    *n = out;
    return VSCHED_OK;
}

/* Contract: see build.h. */
char *vr_build_batch_where(const vr_build *b)
{
    const vr_settings *s = b->settings;
    if (s->inputs_from_set) /* as vr_schema_where says it */
        return vr_xstrdup("--set: ");
    return s->inputs_line > 0 ? vr_strfmt("%s:%u: ", s->path, s->inputs_line)
                              : vr_strfmt("%s: ", s->path);
}

/* Contract: see build.h. */
long vr_build_operand_target(const vr_build *b, size_t i)
{
    if (b->targets == NULL || (b->cli->is_file && b->cli->is_file[i]))
        return -1;
    return vr_targets_find(b->targets, b->cli->files[i]);
}

int vr_build_inputs(const vr_build *b, char ***names, size_t *n, char **err)
{
    *names = NULL;
    *n = 0;
    *err = NULL;
    int named = 0;
    for (size_t i = 0; i < b->cli->n_files; i++)
        if (vr_build_operand_target(b, i) < 0) {
            names_push(names, n, vr_xstrdup(b->cli->files[i]));
            named = 1;
        }
    if (named) {
        vr_build_dedupe(*names, n); /* canonical: one name per file */
        return VSCHED_OK;
    }
    const vr_settings *s = b->settings;
    char *where = vr_build_batch_where(b);
    int rc = vr_build_expand(b, s->inputs, s->n_inputs, NULL, 0, where,
                             "[batch] inputs", names, n, err);
    free(where);
    const vr_targets *t = b->targets;
    for (size_t i = 0; rc == VSCHED_OK && t != NULL && i < t->n; i++) {
        if (t->v[i].implicit)
            continue;
        char *what = vr_strfmt("[target.%s] inputs", t->v[i].name);
        rc = vr_build_expand(b, t->v[i].inputs, t->v[i].n_inputs,
                             t->v[i].exclude, t->v[i].n_exclude,
                             t->v[i].inputs_where, what, names, n, err);
        free(what);
    }
    if (rc == VSCHED_OK && *n == 0) {
        *err = vr_strfmt("%s: no inputs: set [batch] inputs, define a "
                         "[target.NAME] or name FILES",
                         s->path);
        rc = VSCHED_ECONFIG;
    }
    if (rc != VSCHED_OK) {
        vr_build_inputs_free(*names, *n);
        *names = NULL;
        *n = 0;
        return rc;
    }
    vr_build_dedupe(*names, n);
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
    unsigned cpu = b->cli->jobs > 0 ? (unsigned)b->cli->jobs : s->cpu_threads;
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
        .executor = vr_build_stages(b),
        .inbox_capacity = s->inbox_capacity,
        .observer = observer,
        .observer_user = observer_user,
        .ready_capacity = s->ready_capacity,
        .task_observer = b->task_observer,
        .task_observer_user = b->task_observer_user,
        /* ABI 1.1: the executor's language forbids blocker cycles. */
        .blocker_cycles_fail =
            b->executor_desc != NULL &&
            (b->executor_desc->flags & VSCHED_PLUGIN_CYCLES_FORBIDDEN) != 0,
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
            fprintf(b->err,
                    "vsched-run: cannot set [resource.%s] "
                    "capacity\n",
                    r->name);
            return -1;
        }
    }
    /* Compiles sent to distcc hold `remote` (remote.h). */
    return vr_remote_wire(ss->sched, b);
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
            U(st.ready_depth_max), U(st.files), U(st.graph_nodes), U(st.edges),
            U(st.edges_capacity), U(st.waiters), U(st.waiters_capacity),
            U(st.blockers), U(st.blockers_capacity), U(st.source_versions),
            U(st.live_roots), U(st.retired_pending), U(st.stage_runs[0]),
            U(st.stage_runs[1]), U(st.stage_runs[2]), U(st.stage_failures[0]),
            U(st.stage_failures[1]), U(st.stage_failures[2]));
#undef U
}
