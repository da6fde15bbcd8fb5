/*
 * run -- the order of one vsched-run build (vr_build_run, run.h):
 *
 *   1. the inputs and profiles (build.c);
 *   2. --clean goes to clean.c; everything else opens the incremental
 *      context (incr.h: lock, state, cache, keys) and makes the plan
 *      (plan.h): which (input, profile) are current, which links run,
 *      which outputs left the build;
 *   3. -n prints the plan and stops; otherwise the removals and refreshed
 *      stamps are written, and when nothing is left to build the run says
 *      "nothing to do" -- the scheduler is never started;
 *   4. the rest runs as one batch (batch.h) on a session whose bindings
 *      are the incremental ones (bind.h), the recorder writing the state
 *      as artifacts finish;
 *   5. failures, --explain lines, the summary, --report and --stats.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "build/batch.h"
#include "build/build.h"
#include "build/incr.h"
#include "build/plan.h"
#include "build/remote.h"
#include "build/work.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "cli/run.h"
#include "cli/signals.h"
#include "cli/summary.h"
#include "cli/trace.h"
#include "common/escape.h"
#include "common/names.h"
#include "common/util.h"
#include "state/journal.h"

static double vr_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Observer: progress output, -k (stop after N failures), and the
 * recorder's cue that an artifact is in place. */
typedef struct build_watch {
    vr_progress *progress;
    vsched *s;
    vr_recorder *rec;
    long keep_going; /* 0 = never stop */
    long failures;
    int stopped; /* -k cancelled the rest (written on the driver) */
} build_watch;

static void on_event(void *user, const vsched_event *ev)
{
    build_watch *w = user;
    vr_progress_event(w->progress, ev);
    if (ev->stage != VSCHED_STAGE_ARTIFACT)
        return;
    if (ev->status == 0 && w->rec != NULL)
        vr_recorder_artifact(w->rec, ev->name, ev->profile);
    if (ev->status != 0 && ev->status != VSCHED_ECANCELLED &&
        ev->status != VSCHED_ESUPERSEDED && ev->status != VSCHED_EDEPFAIL) {
        w->failures++;
        if (w->keep_going > 0 && w->failures == w->keep_going &&
            w->s != NULL) {
            w->stopped = 1;
            vsched_cancel(w->s, "not built: stopped after earlier failures "
                                "(see -k)");
        }
    }
}

/* -n: what would be rebuilt and why, and what removed, one line each. */
static void print_plan(const vr_build *b, const vr_incr *in, const vr_plan *p)
{
    /* What would be removed: the journal's files first, as the run
     * settles the journal before it removes what left the build; a path
     * is removed once, whoever names it. */
    vr_strmap *listed = vr_strmap_new(16);
    size_t stale = vr_journal_list(in->state_dir, b->settings->out_dir,
                                   &in->snap, listed, b->out);
    for (size_t i = 0; i < p->n_rows; i++) {
        const vr_row *r = &p->rows[i];
        if (r->req < 0)
            continue;
        char *why = vr_reason_text(&r->v);
        vr_esc ep = {0}, ei = {0};
        fprintf(b->out, "artifact %s %s: %s\n", vr_esc_name(&ep, r->profile),
                vr_esc_name(&ei, r->name), why);
        vr_esc_done(&ep);
        vr_esc_done(&ei);
        free(why);
    }
    for (size_t k = 0; k < p->n_links; k++) {
        const vr_link *l = &p->links[k];
        if (!l->run)
            continue;
        char *why = vr_reason_text(&l->v);
        vr_esc ek = {0}, ep = {0}, en = {0};
        fprintf(b->out, "%s %s %s: %s\n", vr_esc_name(&ek, l->kind),
                vr_esc_name(&ep, l->profile), vr_esc_name(&en, l->name), why);
        vr_esc_done(&ek);
        vr_esc_done(&ep);
        vr_esc_done(&en);
        free(why);
    }
    const char *out_dir = b->settings->out_dir;
    char *out_real =
        out_dir != NULL && p->n_removed > 0 ? realpath(out_dir, NULL) : NULL;
    for (size_t i = 0; i < p->n_removed; i++) {
        char *at = vr_removal_target(&p->removed[i], out_real, NULL);
        if (at != NULL && vr_strmap_get(listed, at) < 0) {
            fputs("remove ", b->out);
            vr_put_name(b->out, at);
            fputc('\n', b->out);
            stale++;
            vr_strmap_put_owned(listed, at, 0);
        } else
            free(at);
    }
    free(out_real);
    vr_strmap_free(listed);
    if (p->n_dirty == 0 && stale == 0 && b->cli->verbosity >= 0) {
        int links = 0;
        for (size_t k = 0; k < p->n_links; k++)
            links |= p->links[k].run;
        if (!links)
            fprintf(b->out, "vsched-run: nothing to do\n");
    }
}

/* What came back and what the bindings did, for each row and link (the
 * results are copied: the batch is released before the scheduler). */
static void take_outcomes(vr_incr *in, vr_plan *p)
{
    vr_capture c;
    for (size_t i = 0; i < p->n_rows; i++) {
        vr_row *r = &p->rows[i];
        if (r->req < 0 || r->res == NULL)
            continue;
        r->ran = 1;
        r->status = r->res->status;
        r->duration_ns = r->res->finished_ns > r->res->started_ns
                             ? r->res->finished_ns - r->res->started_ns
                             : 0;
        if (r->status == 0 &&
            vr_bind_capture(in->bind, NULL, r->res->name, r->profile, &c)) {
            r->outcome = c.outcome;
            vr_capture_clear(&c);
        }
    }
    for (size_t k = 0; k < p->n_links; k++) {
        vr_link *l = &p->links[k];
        if (l->run && l->info.state == VSCHED_NODE_DONE &&
            vr_bind_capture(in->bind, l->kind, l->name, l->profile, &c)) {
            l->outcome = c.outcome;
            vr_capture_clear(&c);
        }
    }
}

/* Queue the records of the links that ran. */
static void record_links(vr_incr *in, const vr_plan *p)
{
    for (size_t k = 0; k < p->n_links; k++) {
        const vr_link *l = &p->links[k];
        if (!l->run || l->info.state != VSCHED_NODE_DONE)
            continue;
        uint64_t ns = l->info.finished_ns > l->info.started_ns
                          ? l->info.finished_ns - l->info.started_ns
                          : 0;
        vr_recorder_job(in->rec, l->kind, l->name, l->profile, ns);
    }
}

/* 1 when an Artifact of `profile` failed (itself, or by a dependency)
 * this run. */
static int profile_failed(const vr_plan *p, const char *profile)
{
    for (size_t i = 0; i < p->n_rows; i++) {
        const vr_row *r = &p->rows[i];
        if (r->req >= 0 && r->res != NULL && r->res->status != 0 &&
            r->res->status != VSCHED_ECANCELLED &&
            strcmp(r->profile, profile) == 0)
            return 1;
    }
    return 0;
}

/* Failures of rows (printed whole, and noted in the summary), the
 * warnings of the rows that succeeded, and the link lines; returns 1 when
 * something failed or was not built. */
static int report_failures(const vr_build *b, vr_progress *prog,
                           vr_summary *sum, const vr_plan *p, int verbose)
{
    int bad = 0;
    for (size_t i = 0; i < p->n_rows; i++) {
        const vr_row *r = &p->rows[i];
        if (r->req < 0)
            continue;
        if (r->res == NULL || r->res->status == VSCHED_ECANCELLED) {
            bad = 1;
            vr_summary_not_built(sum, r->name);
        } else if (r->res->status == VSCHED_EDEPFAIL) {
            bad = 1;
            vr_progress_failure(prog, r->res);
            vr_summary_dep_failed(sum);
        } else if (r->res->status != 0) {
            bad = 1;
            vr_progress_failure(prog, r->res);
            vr_summary_failed(sum, NULL, r->res->name, r->profile, r->res);
        } else {
            vr_progress_warning(
                prog, r->res,
                b->executor_desc != NULL ? b->executor_desc->name : NULL);
            if (verbose && r->res->artifact_path != NULL)
                fprintf(b->out, "%s -> %s\n", r->res->name,
                        r->res->artifact_path);
        }
    }
    for (size_t k = 0; k < p->n_links; k++) {
        const vr_link *l = &p->links[k];
        const vsched_node_info *in = &l->info;
        if (!l->run)
            continue;
        if (in->state == VSCHED_NODE_DONE) {
            if (b->cli->verbosity >= 0)
                fprintf(b->out,
                        l->outcome == VR_KEPT
                            ? "vsched-run: %s is up to date\n"
                        : strcmp(l->kind, "static") == 0
                            ? "vsched-run: archived %s\n"
                            : "vsched-run: linked %s\n",
                        in->output != NULL ? in->output
                        : l->rec != NULL   ? l->rec->out_path
                                           : l->name);
            continue;
        }
        bad = 1;
        if (in->state == VSCHED_NODE_CANCELLED) {
            fprintf(b->out, "vsched-run: %s %s [%s] not run: %s\n", l->kind,
                    l->name, l->profile,
                    in->message != NULL ? in->message : "cancelled");
            /* Not run because an object failed, or because the build
             * was cut short (interrupt, -k) before its objects were. */
            if (profile_failed(p, l->profile))
                vr_summary_dep_failed(sum);
            else {
                char *what = vr_strfmt("link %s [%s]", l->name, l->profile);
                vr_summary_not_built(sum, what);
                free(what);
            }
            continue;
        }
        vsched_result r = {
            .status = in->status,
            .name = l->name,
            .stage = VSCHED_STAGE_SOURCE, /* no Artifact row: no profile */
            .failed_stage = VSCHED_STAGE_ARTIFACT,
            .message = in->message,
            .diags = in->diags,
            .n_diags = in->n_diags,
        };
        vr_progress_failure(prog, &r);
        vr_summary_failed(sum, "link", l->name, l->profile, &r);
    }
    return bad;
}

/* --explain: one line per rebuilt file and link, in input order. */
static void explain(const vr_build *b, const vr_plan *p)
{
    for (size_t i = 0; i < p->n_rows; i++) {
        const vr_row *r = &p->rows[i];
        if (r->req < 0 || !r->ran || r->status != 0 || r->outcome == VR_KEPT)
            continue;
        char *why = vr_reason_text(&r->v);
        vr_esc en = {0}, ep = {0};
        fprintf(b->out, "vsched-run: explain: %s [%s]: %s%s\n",
                vr_esc_name(&en, r->name), vr_esc_name(&ep, r->profile), why,
                r->outcome == VR_RESTORED ? "; restored from cache" : "");
        vr_esc_done(&en);
        vr_esc_done(&ep);
        free(why);
    }
    for (size_t k = 0; k < p->n_links; k++) {
        const vr_link *l = &p->links[k];
        if (!l->run || l->info.state != VSCHED_NODE_DONE ||
            l->outcome == VR_KEPT)
            continue;
        char *why = vr_reason_text(&l->v);
        fprintf(b->out, "vsched-run: explain: %s %s [%s]: %s\n", l->kind,
                l->name, l->profile, why);
        free(why);
    }
}

static void print_incr_stats(const vr_build *b, const vr_plan *p,
                             const vr_run_info *info)
{
    vr_tally t;
    vr_tally_rows(p, &t);
    fprintf(b->out,
            "stats: incremental files=%zu up_to_date=%zu rebuilt=%zu "
            "compiled=%zu restored=%zu kept=%zu removed=%zu "
            "sources_hashed=%llu outputs_hashed=%llu\n",
            p->n_rows, t.current, t.rebuilt, t.compiled, t.restored, t.kept,
            p->n_removed, (unsigned long long)info->sources_hashed,
            (unsigned long long)info->outputs_hashed);
    if (info->have_cache)
        fprintf(b->out,
                "stats: cache hits=%llu misses=%llu stored=%llu "
                "restored_bytes=%llu stored_bytes=%llu max_bytes=%llu\n",
                (unsigned long long)info->cache.hits,
                (unsigned long long)info->cache.misses,
                (unsigned long long)info->cache.stored,
                (unsigned long long)info->cache.restored_bytes,
                (unsigned long long)info->cache.stored_bytes,
                (unsigned long long)info->cache.max_bytes);
}

/* -k N in force: the flag, else [vsched] keep_going. */
static long vr_keep_going(const vr_build *b)
{
    return b->cli->keep_going >= 0 ? b->cli->keep_going
                                   : b->settings->keep_going;
}

static void gather_info(vr_incr *in, vr_run_info *info)
{
    info->sources_hashed = vr_sources_hashed(in->src);
    info->outputs_hashed = in->outputs_hashed + in->recorded.outputs_hashed;
    info->have_cache = in->cache != NULL;
    if (in->cache != NULL)
        vr_cache_get_counts(in->cache, &info->cache);
}

/* Summary, explain, report and stats at the end of a run; returns the
 * exit status given the build's. `sched` is the scheduler's last counters
 * (NULL when it never started). */
static int finish_run(const vr_build *b, vr_incr *in, vr_plan *p,
                      vr_progress *prog, const vr_summary *sum,
                      const vsched_stats *sched, const char *resources,
                      vr_run_info *info, int status)
{
    gather_info(in, info);
    vr_tally t;
    vr_tally_rows(p, &t);
    if (b->hooks != NULL) {
        b->hooks->rebuilt = t.rebuilt;
        b->hooks->failed = t.failed + t.cancelled;
        b->hooks->scheduled = sched != NULL;
    }
    if (sched == NULL) {
        if (b->cli->verbosity >= 0 &&
            (b->hooks == NULL || !b->hooks->quiet_noop))
            fprintf(b->out, "vsched-run: nothing to do\n");
    } else {
        if (b->cli->explain)
            explain(b, p);
        if (b->cli->verbosity >= 0 || status != VR_EXIT_OK) {
            vr_progress_clear(prog);
            /* Failed: what failed itself, rows and links; not built:
             * what was cancelled or waited on a failure. */
            size_t dep = 0, link_failed = 0, link_skipped = 0;
            for (size_t i = 0; i < p->n_rows; i++)
                dep += p->rows[i].req >= 0 && p->rows[i].ran &&
                       p->rows[i].status == VSCHED_EDEPFAIL;
            for (size_t k = 0; k < p->n_links; k++) {
                const vr_link *l = &p->links[k];
                link_failed += l->run && l->info.state == VSCHED_NODE_FAILED;
                link_skipped +=
                    l->run && l->info.state == VSCHED_NODE_CANCELLED;
            }
            vr_summary_counts c = {
                .built = t.rebuilt,
                .failed = t.failed - dep + link_failed,
                .cancelled = t.cancelled + dep + link_skipped,
                .current = t.current,
                .restored = t.restored,
                .warnings = vr_progress_warnings(prog),
                .seconds = info->wall_s,
            };
            int why = info->interrupted ? VR_SUMMARY_INTERRUPTED
                      : info->stopped   ? VR_SUMMARY_STOPPED
                                        : 0;
            vr_summary_print(sum, b->out,
                             vr_progress_use_color(b->out, b->cli->color), why,
                             vr_keep_going(b), &c);
        }
    }
    char *msg = NULL;
    if (b->cli->report != NULL &&
        vr_report_write(b->cli->report, p, info, &msg) != VSCHED_OK) {
        fprintf(b->err, "vsched-run: %s\n", msg);
        free(msg);
        if (status == VR_EXIT_OK)
            status = VR_EXIT_USAGE;
    }
    if (b->cli->stats &&
        (sched != NULL || b->hooks == NULL || !b->hooks->quiet_noop)) {
        if (sched != NULL)
            vr_session_print_counters(b->out, sched);
        if (resources != NULL)
            fputs(resources, b->out);
        print_incr_stats(b, p, info);
    }
    if (info->interrupted || vr_signals_caught())
        status = VR_EXIT_INTERRUPTED;
    return status;
}

/* Steps 4 and 5 with the scheduler. The session is closed (no observer
 * call can come any more) before the recorder's last batch is committed;
 * the bindings outlive both. */
static int build(const vr_build *b, vr_incr *in, vr_plan *p, double t0,
                 vr_trace *trace)
{
    vr_run_info info = {0};
    long kg = vr_keep_going(b);
    int tty = isatty(fileno(b->out));
    vr_progress *prog = vr_progress_new(
        b->out, b->cli->verbosity, tty,
        vr_progress_use_color(b->out, b->cli->color), p->n_dirty);
    if (vr_incr_start(in, p->link_plans, p->n_links) != VSCHED_OK) {
        fprintf(b->err, "vsched-run: cannot start the recorder thread\n");
        vr_progress_free(prog);
        return VR_EXIT_USAGE;
    }
    vr_summary *sum = vr_summary_new();
    build_watch watch = {prog, NULL, in->rec, kg, 0, 0};
    vr_build wb = *b;
    wb.loader = vr_bind_loader(in->bind);
    wb.executor = vr_bind_executor(in->bind);
    wb.stages = wb.executor; /* the bindings call isolate's, if any */
    if (trace != NULL) {
        wb.task_observer = vr_trace_task;
        wb.task_observer_user = trace;
    }
    uint64_t build_ns = vr_trace_now_ns();
    vr_session ss;
    vsched_stats counters;
    char *resources = NULL; /* the --stats lines of the resources */
    int status = VR_EXIT_USAGE, ran = 0;
    vsched_batch *batch = NULL;
    if (vr_session_open(&ss, &wb, on_event, &watch) == 0) {
        watch.s = ss.sched;
        vr_signals_phase(VR_SIG_CANCEL, ss.sched);
        if (b->hooks != NULL)
            b->hooks->session(b->hooks->user, ss.sched);
        int rc = vr_batch_run(b, &ss, p, &batch);
        if (b->hooks != NULL)
            b->hooks->session(b->hooks->user, NULL);
        vr_signals_phase(VR_SIG_DEFER, NULL);
        info.wall_s = vr_now_s() - t0;
        vr_progress_clear(prog);
        info.stopped = watch.stopped;
        info.interrupted = vr_signals_caught();
        if (rc == 0) {
            take_outcomes(in, p);
            record_links(in, p);
            status = report_failures(b, prog, sum, p, b->cli->verbosity > 0)
                         ? VR_EXIT_FAILED
                         : VR_EXIT_OK;
        }
        vsched_get_stats(ss.sched, &counters);
        resources = vr_remote_resource_lines(ss.sched);
        ran = 1;
    }
    vsched_batch_release(batch); /* rows keep copies; before the scheduler */
    for (size_t i = 0; i < p->n_rows; i++)
        p->rows[i].res = NULL;
    vr_session_close(&ss);
    vr_incr_finish(in); /* a failure to record is said, not fatal */
    if (trace != NULL)
        vr_trace_phase(trace, "build", build_ns, vr_trace_now_ns());
    if (ran)
        status = finish_run(b, in, p, prog, sum, &counters, resources, &info,
                            status);
    vr_summary_free(sum);
    free(resources);
    vr_progress_free(prog);
    return status;
}

/* --trace FILE: write it; a failure to is said and makes the run's
 * status 2 when it was 0. */
static int write_trace(const vr_build *b, vr_trace *trace, vr_incr *in,
                       int status)
{
    char *msg = NULL;
    if (trace == NULL)
        return status;
    if (vr_trace_write(trace, b->cli->trace, b->coord,
                       in != NULL ? in->bind : NULL, &msg) != VSCHED_OK) {
        fprintf(b->err, "vsched-run: %s\n", msg);
        free(msg);
        if (status == VR_EXIT_OK)
            status = VR_EXIT_USAGE;
    }
    return status;
}

/* Profile and link names become file names of the outputs: refuse a bad
 * one before anything is compiled (names.h). 0 or -1 (reported). */
static int check_names(const vr_build *b, char **profiles, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *why = vr_name_problem(profiles[i]);
        if (why != NULL) {
            vr_esc e = {0};
            fprintf(b->err,
                    "vsched-run: profile name '%s' %s (from %s); a profile "
                    "names a directory of the outputs: use a plain name\n",
                    vr_esc_name(&e, profiles[i]), why,
                    b->cli->n_profiles > 0 ? "--profile" : "[batch] profiles");
            vr_esc_done(&e);
            return -1;
        }
    }
    for (size_t i = 0; b->targets != NULL && i < b->targets->n; i++) {
        const char *name = b->targets->v[i].name;
        const char *why = vr_name_problem(name);
        if (why == NULL)
            continue;
        vr_esc e = {0};
        if (b->targets->v[i].implicit)
            fprintf(b->err,
                    "vsched-run: [batch] link '%s' %s; the program is "
                    "written to out_dir/PROFILE/LINK: use a plain file "
                    "name\n",
                    vr_esc_name(&e, name), why);
        else
            fprintf(b->err,
                    "vsched-run: [target.%s] %s; its output is written "
                    "under out_dir/PROFILE/: use a plain file name\n",
                    vr_esc_name(&e, name), why);
        vr_esc_done(&e);
        return -1;
    }
    return 0;
}

/* Contract: see build.h. */
int vr_build_run(const vr_build *b)
{
    double t0 = vr_now_s();
    char *err = NULL;
    /* The state is read and the executor's identity asked while the
     * inputs are expanded: a no-op is mostly these three, and none needs
     * the others. */
    vr_incr_early *early = vr_incr_early_start(b, b->cli->dry_run);
    vr_work work;
    if (vr_work_make(&work, b, &err) != VSCHED_OK) {
        vr_incr_early_drop(early);
        fprintf(b->err, "vsched-run: %s\n", err);
        free(err);
        return VR_EXIT_USAGE;
    }
    vr_incr *in = NULL;
    int status = VR_EXIT_USAGE;
    if (check_names(b, work.profiles, work.n_base_profiles) != 0)
        goto done;
    vr_signals_phase(VR_SIG_EXIT, NULL);
    int orc = vr_incr_open(&in, b, early, work.profiles, work.n_profiles,
                           b->cli->dry_run, &err);
    vr_incr_early_drop(early);
    early = NULL;
    if (orc != VSCHED_OK) {
        fprintf(b->err, "vsched-run: %s\n", err);
        free(err);
        goto done;
    }
    vr_trace *trace = b->cli->trace != NULL && !b->cli->dry_run
                          ? vr_trace_new((uint64_t)(t0 * 1e9))
                          : NULL;
    uint64_t plan_ns = vr_trace_now_ns();
    vr_plan plan;
    vr_plan_make(&plan, in, &work);
    if (trace != NULL)
        vr_trace_phase(trace, "plan", plan_ns, vr_trace_now_ns());
    int links = 0;
    for (size_t k = 0; k < plan.n_links; k++)
        links |= plan.links[k].run;
    if (b->cli->dry_run) {
        print_plan(b, in, &plan);
        status = VR_EXIT_OK;
    } else {
        vr_plan_apply(&plan, in, b->out, b->cli->verbosity < 0);
        if (plan.n_dirty == 0 && !links) {
            vr_signals_phase(VR_SIG_DEFER, NULL);
            vr_run_info info = {0};
            info.wall_s = vr_now_s() - t0;
            status = finish_run(b, in, &plan, NULL, NULL, NULL, NULL, &info,
                                VR_EXIT_OK);
        } else {
            status = build(b, in, &plan, t0, trace);
        }
        status = write_trace(b, trace, in, status);
    }
    vr_trace_free(trace);
    vr_plan_free(&plan);
done:
    vr_incr_early_drop(early);
    vr_incr_close(in);
    vr_work_free(&work);
    return status;
}
