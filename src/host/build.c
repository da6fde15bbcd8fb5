/*
 * build -- the scheduler session and the batch compile; see build.h.
 */
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "build.h"
#include "progress.h"
#include "schema.h"
#include "util.h"

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

/* Glob `pattern` under `root`, appending names relative to root. */
static int expand_pattern(const char *root, const char *pattern, char ***v,
                          size_t *n)
{
    char *full = vr_path_join(root, pattern);
    glob_t g;
    int rc = glob(full, GLOB_NOSORT | GLOB_ERR, NULL, &g);
    free(full);
    if (rc != 0) {
        if (rc != GLOB_NOMATCH)
            globfree(&g);
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
    const char *inputs = vr_config_get(b->cfg, "batch", "inputs");
    const char *root_rel = vr_config_get(b->cfg, "loader", "root");
    char *root = root_rel != NULL
                     ? vr_path_join(vr_config_dir(b->cfg), root_rel)
                     : NULL;
    char *list = vr_xstrdup(inputs != NULL ? inputs : "");
    char *save = NULL;
    int rc = VSCHED_OK;
    for (char *pat = strtok_r(list, " \t", &save); pat != NULL;
         pat = strtok_r(NULL, " \t", &save)) {
        if (root == NULL || !has_wildcard(pat)) {
            names_push(names, n, vr_xstrdup(pat));
            continue;
        }
        if (expand_pattern(root, pat, names, n) == 0) {
            *err = vr_strfmt("%s:%u: [batch] inputs: pattern '%s' matches "
                             "no file under %s",
                             vr_config_path(b->cfg),
                             vr_config_line(b->cfg, "batch", "inputs"), pat,
                             root);
            rc = VSCHED_ECONFIG;
            break;
        }
    }
    free(list);
    free(root);
    if (rc == VSCHED_OK && *n == 0) {
        *err = vr_strfmt("%s: no inputs: set [batch] inputs or name FILES",
                         vr_config_path(b->cfg));
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

/* Profiles: --profile flags, else [batch] profiles. */
static char **profiles_of(const vr_build *b, size_t *n)
{
    char **v = NULL;
    *n = 0;
    if (b->cli->n_profiles > 0) {
        for (size_t i = 0; i < b->cli->n_profiles; i++)
            names_push(&v, n, vr_xstrdup(b->cli->profiles[i]));
        return v;
    }
    const char *list = vr_config_get(b->cfg, "batch", "profiles");
    char *copy = vr_xstrdup(list != NULL ? list : "release");
    char *save = NULL;
    for (char *p = strtok_r(copy, " \t", &save); p != NULL;
         p = strtok_r(NULL, " \t", &save))
        names_push(&v, n, vr_xstrdup(p));
    free(copy);
    if (*n == 0)
        names_push(&v, n, vr_xstrdup("release"));
    return v;
}

static unsigned online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int vr_session_open(vr_session *ss, const vr_build *b,
                    vsched_observer_fn observer, void *observer_user)
{
    *ss = (vr_session){NULL, NULL, NULL};
    unsigned cpu = b->cli->jobs > 0
                       ? (unsigned)b->cli->jobs
                       : (unsigned)vr_schema_int(b->cfg, "vsched",
                                                 "cpu_threads", 0);
    if (cpu == 0)
        cpu = online_cpus();
    unsigned io = (unsigned)vr_schema_int(b->cfg, "vsched", "io_threads", 2);
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
        .inbox_capacity = (size_t)vr_schema_int(b->cfg, "vsched",
                                                "inbox_capacity", 1024),
        .observer = observer,
        .observer_user = observer_user,
        .ready_capacity = (size_t)vr_schema_int(b->cfg, "vsched",
                                                "ready_capacity", 64),
    };
    if (vsched_create(&ss->sched, &o) != 0) {
        fprintf(b->err, "vsched-run: cannot start the scheduler\n");
        return -1;
    }
    /* [resource.NAME] capacity = N; other names get capacity 1 on use. */
    size_t n_sec = 0;
    const char *const *sec = vr_config_sections(b->cfg, &n_sec);
    for (size_t i = 0; i < n_sec; i++) {
        if (strncmp(sec[i], "resource.", 9) != 0)
            continue;
        long long cap = vr_schema_int(b->cfg, sec[i], "capacity", 1);
        if (vsched_set_resource_capacity(ss->sched, sec[i] + 9,
                                         (unsigned)cap) != 0) {
            fprintf(b->err, "vsched-run: cannot set [%s] capacity\n",
                    sec[i]);
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

/* Observer: progress output, and -k: stop after N failures. */
typedef struct build_watch {
    vr_progress *progress;
    vsched *s;
    long keep_going; /* 0 = never stop */
    long failures;
} build_watch;

static void on_event(void *user, const vsched_event *ev)
{
    build_watch *w = user;
    vr_progress_event(w->progress, ev);
    if (ev->status != 0 && ev->status != VSCHED_ECANCELLED &&
        ev->status != VSCHED_EDEPFAIL && ev->stage == VSCHED_STAGE_ARTIFACT) {
        w->failures++;
        if (w->keep_going > 0 && w->failures == w->keep_going && w->s != NULL)
            vsched_cancel(w->s, "not built: stopped after earlier failures "
                                "(see -k)");
    }
}

/* ---- the compile as one coordinator batch --------------------------------
 *
 * The item set is the (input, profile) requests. The batch's shared wait
 * point (setup) makes ONE atomic submission of all of them and ONE
 * vsched_wait_batch, on a coordinator worker; item i then takes result i,
 * and a failed build becomes item i's failure.
 */
typedef struct compile_batch {
    vsched *s;
    const vsched_request *reqs;
    vsched_batch *batch;        /* released by the caller */
    const vsched_result **res;  /* res[i] owned by batch */
    const vsched_dag *link;     /* the link jobs, or NULL */
    uint64_t *link_ids;         /* ids of link->nodes */
    int link_rc;                /* its submission's status */
} compile_batch;

static int compile_setup(void *ctx, size_t n, char **msg)
{
    compile_batch *cb = ctx;
    int rc = vsched_submit_batch_atomic(cb->s, cb->reqs, n, &cb->batch);
    if (rc != VSCHED_OK) {
        cb->batch = NULL;
        *msg = vr_strfmt("cannot submit the batch: %s", vsched_strerror(rc));
        return rc;
    }
    if (cb->link != NULL) {
        /* The link jobs join the same graph while the objects build: one
         * DAG submission, gated on the batch's Artifact nodes. */
        vsched_admission adm = VSCHED_BACKPRESSURED;
        cb->link_rc = vsched_submit_dag(cb->s, cb->link, cb->link_ids, &adm,
                                        NULL);
        if (cb->link_rc == VSCHED_OK && adm != VSCHED_ADMITTED)
            cb->link_rc = VSCHED_EFULL;
    }
    vsched_wait_batch(cb->batch, cb->res); /* every res[i] is set */
    return VSCHED_OK;
}

static int compile_item(void *ctx, size_t i, void *slot, char **msg)
{
    compile_batch *cb = ctx;
    const vsched_result **row = slot;
    *row = cb->res[i];
    (void)msg; /* the result carries its own message */
    return (*row)->status;
}

static const vr_coord_policy compile_policy = {
    .span_name = "compile",
    .slot_size = sizeof(const vsched_result *),
    .setup = compile_setup,
    .item = compile_item,
    .fail = NULL, /* a failed row keeps its vsched_result (or NULL) */
};

/* Print per-row output and the summary; returns the exit status. */
static int report(const vr_build *b, vr_progress *prog,
                  const vsched_result **rows, size_t n, double seconds)
{
    size_t built = 0, failed = 0, cancelled = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i]->status == 0) {
            built++;
            if (b->cli->verbosity > 0 && rows[i]->artifact_path != NULL)
                fprintf(b->out, "%s -> %s\n", rows[i]->name,
                        rows[i]->artifact_path);
        } else if (rows[i]->status == VSCHED_ECANCELLED) {
            cancelled++;
        } else {
            failed++;
            vr_progress_failure(prog, rows[i]);
        }
    }
    if (b->cli->verbosity >= 0 || failed > 0)
        vr_progress_summary(prog, built, failed, cancelled, seconds);
    return failed + cancelled > 0 ? VR_EXIT_FAILED : VR_EXIT_OK;
}

/* [batch] link = NAME, when the inputs are [batch] inputs (FILES on the
 * command line build just those objects); NULL otherwise. */
static const char *link_name(const vr_build *b)
{
    const char *link = vr_config_get(b->cfg, "batch", "link");
    if (link == NULL || link[0] == '\0' || b->cli->n_files > 0)
        return NULL;
    return link;
}

/* The link sub-DAG: per profile, Artifact(input) for every input, and one
 * "link" job depending on all of them after success and holding the
 * `link` resource. Its inputs are those objects' paths, in input order. */
typedef struct link_dag {
    vsched_dag dag;
    vsched_node_spec *nodes;
    vsched_edge_spec *edges;
    uint64_t *ids;
    size_t n_jobs;
} link_dag;

static const char *const link_resources[] = {"link"};

static void link_dag_build(link_dag *ld, const char *name,
                           const vsched_request *reqs, size_t n_inputs,
                           size_t n_profiles)
{
    size_t per = n_inputs + 1;
    ld->nodes = vr_xcalloc(per * n_profiles + 1, sizeof *ld->nodes);
    ld->edges = vr_xcalloc(n_inputs * n_profiles + 1, sizeof *ld->edges);
    ld->ids = vr_xcalloc(per * n_profiles + 1, sizeof *ld->ids);
    size_t ne = 0;
    for (size_t p = 0; p < n_profiles; p++) {
        const char *profile = reqs[p * n_inputs].profile;
        size_t job = p * per + n_inputs;
        for (size_t i = 0; i < n_inputs; i++) {
            ld->nodes[p * per + i] = (vsched_node_spec){
                .what = VSCHED_SPEC_ARTIFACT,
                .name = reqs[p * n_inputs + i].name,
                .profile = profile,
                .parent = VSCHED_REF_NONE,
            };
            ld->edges[ne++] = (vsched_edge_spec){
                VSCHED_REF_LOCAL(p * per + i), VSCHED_REF_LOCAL(job),
                VSCHED_GATE_AFTER_SUCCESS};
        }
        ld->nodes[job] = (vsched_node_spec){
            .what = VSCHED_SPEC_JOB,
            .kind = "link",
            .name = name,
            .profile = profile,
            .parent = VSCHED_REF_NONE,
            .resources = link_resources,
            .n_resources = 1,
        };
    }
    ld->n_jobs = n_profiles;
    ld->dag = (vsched_dag){ld->nodes, per * n_profiles, ld->edges, ne,
                           NULL, NULL, 1};
}

static void link_dag_free(link_dag *ld)
{
    free(ld->nodes);
    free(ld->edges);
    free(ld->ids);
}

/* Wait for every link job (before the summary: the wall time includes
 * them). infos[k] is job k's end, or its state stays 0 (PENDING) when the
 * id did not resolve. */
static void wait_links(vr_session *ss, const link_dag *ld,
                       vsched_node_info *infos)
{
    size_t per = ld->dag.n_nodes / ld->n_jobs;
    for (size_t k = 0; k < ld->n_jobs; k++)
        vsched_node_wait(ss->sched, ld->ids[k * per + per - 1], &infos[k]);
}

/* Say how each link went; returns 1 if any did not produce its program. */
static int report_links(const vr_build *b, vr_progress *prog,
                        const link_dag *ld, int submit_rc,
                        vsched_node_info *infos)
{
    if (submit_rc != VSCHED_OK) {
        fprintf(b->err, "vsched-run: cannot submit the link: %s\n",
                vsched_strerror(submit_rc));
        return 1;
    }
    int bad = 0;
    size_t per = ld->dag.n_nodes / ld->n_jobs;
    for (size_t k = 0; k < ld->n_jobs; k++) {
        const vsched_node_spec *spec = &ld->nodes[k * per + per - 1];
        const vsched_node_info *in = &infos[k];
        if (in->state == VSCHED_NODE_DONE) {
            if (b->cli->verbosity >= 0)
                fprintf(b->out, "vsched-run: linked %s\n", in->output);
            continue;
        }
        bad = 1;
        if (in->state == VSCHED_NODE_CANCELLED) {
            fprintf(b->out, "vsched-run: link %s [%s] not run: %s\n",
                    spec->name, spec->profile,
                    in->message != NULL ? in->message : "cancelled");
            continue;
        }
        vsched_result r = {
            .status = in->status,
            .name = spec->name,
            .stage = VSCHED_STAGE_SOURCE, /* no Artifact row: no profile */
            .failed_stage = VSCHED_STAGE_ARTIFACT,
            .message = in->message,
            .diags = in->diags,
            .n_diags = in->n_diags,
        };
        vr_progress_failure(prog, &r);
    }
    return bad;
}

/* Build reqs[0..n_req) on the started session; returns the exit status. */
static int compile(const vr_build *b, vr_session *ss, vr_progress *prog,
                   const vsched_request *reqs, size_t n_inputs,
                   size_t n_profiles)
{
    size_t n_req = n_inputs * n_profiles;
    compile_batch cb = {ss->sched, reqs, NULL, NULL, NULL, NULL, 0};
    link_dag ld = {0};
    const char *link = link_name(b);
    if (link != NULL) {
        link_dag_build(&ld, link, reqs, n_inputs, n_profiles);
        cb.link = &ld.dag;
        cb.link_ids = ld.ids;
    }
    cb.res = vr_xcalloc(n_req + 1, sizeof *cb.res);
    const vsched_result **rows = vr_xcalloc(n_req + 1, sizeof *rows);
    vr_coord_policy pol = compile_policy;
    pol.sched = ss->sched;
    double t0 = now_s();
    vr_coord_batch(b->coord, &pol, &cb, n_req, rows);
    vsched_node_info *infos = vr_xcalloc(ld.n_jobs + 1, sizeof *infos);
    int linking = cb.batch != NULL && link != NULL;
    if (linking && cb.link_rc == VSCHED_OK)
        wait_links(ss, &ld, infos);
    double t1 = now_s();
    vr_progress_clear(prog);
    int status = VR_EXIT_USAGE;
    if (cb.batch == NULL)
        fprintf(b->err, "vsched-run: cannot submit the batch\n");
    else
        status = report(b, prog, rows, n_req, t1 - t0);
    if (linking && report_links(b, prog, &ld, cb.link_rc, infos) &&
        status == VR_EXIT_OK)
        status = VR_EXIT_FAILED;
    for (size_t k = 0; k < ld.n_jobs; k++)
        vsched_node_info_clear(&infos[k]);
    free(infos);
    link_dag_free(&ld);
    if (b->cli->stats && cb.batch != NULL)
        vr_session_print_stats(b->out, ss->sched);
    vsched_batch_release(cb.batch);
    free(rows);
    free(cb.res);
    return status;
}

int vr_build_run(const vr_build *b)
{
    char **inputs = NULL, *err = NULL;
    size_t n_inputs = 0, n_profiles = 0;
    if (vr_build_inputs(b, &inputs, &n_inputs, &err) != VSCHED_OK) {
        fprintf(b->err, "vsched-run: %s\n", err);
        free(err);
        return VR_EXIT_USAGE;
    }
    char **profiles = profiles_of(b, &n_profiles);
    size_t n_req = n_inputs * n_profiles;
    int status = VR_EXIT_OK;
    if (b->cli->dry_run) {
        for (size_t p = 0; p < n_profiles; p++) {
            for (size_t i = 0; i < n_inputs; i++)
                fprintf(b->out, "artifact %s %s\n", profiles[p], inputs[i]);
            if (link_name(b) != NULL)
                fprintf(b->out, "link %s %s\n", profiles[p], link_name(b));
        }
        goto done;
    }

    long kg = b->cli->keep_going >= 0
                  ? b->cli->keep_going
                  : (long)vr_schema_int(b->cfg, "batch", "keep_going", 1);
    int tty = isatty(fileno(b->out));
    vr_progress *prog = vr_progress_new(b->out, b->cli->verbosity, tty, n_req);
    build_watch watch = {prog, NULL, kg, 0};
    vr_session ss;
    status = VR_EXIT_USAGE;
    if (vr_session_open(&ss, b, on_event, &watch) == 0) {
        watch.s = ss.sched;
        vsched_request *reqs = vr_xcalloc(n_req + 1, sizeof *reqs);
        for (size_t p = 0; p < n_profiles; p++)
            for (size_t i = 0; i < n_inputs; i++)
                reqs[p * n_inputs + i] = (vsched_request){
                    .name = inputs[i],
                    .stage = VSCHED_STAGE_ARTIFACT,
                    .profile = profiles[p],
                };
        status = compile(b, &ss, prog, reqs, n_inputs, n_profiles);
        free(reqs);
    }
    vr_session_close(&ss);
    vr_progress_free(prog);

done:
    vr_build_inputs_free(inputs, n_inputs);
    vr_build_inputs_free(profiles, n_profiles);
    return status;
}
