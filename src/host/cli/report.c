/*
 * report -- the JSON report of a run; see report.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/vsched.h>

#include "cli/report.h"
#include "common/json.h"
#include "common/util.h"

/* Contract: see report.h. */
const char *vr_report_status(int submitted, int status,
                             const vr_run_info *info)
{
    if (!submitted)
        return "ok";
    if (status == 0)
        return "ok";
    if (status == VSCHED_EDEPFAIL || status == VSCHED_ECYCLE)
        return "dependency_failed";
    if (status == VSCHED_ECANCELLED)
        return info->interrupted ? "cancelled"
               : info->stopped   ? "skipped"
                                 : "cancelled";
    return "failed";
}

/* Contract: see report.h. */
void vr_tally_rows(const vr_plan *p, vr_tally *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < p->n_rows; i++) {
        const vr_row *r = &p->rows[i];
        if (r->req < 0) {
            t->current++;
            continue;
        }
        int st = r->ran ? r->status : VSCHED_EERR;
        if (st == VSCHED_ECANCELLED) {
            t->cancelled++;
        } else if (st != 0) {
            t->failed++;
        } else if (r->outcome == VR_KEPT) {
            t->kept++;
            t->current++;
        } else {
            t->rebuilt++;
            if (r->outcome == VR_RESTORED)
                t->restored++;
            else
                t->compiled++;
        }
    }
}

static double vr_ms(uint64_t ns)
{
    return (double)ns / 1e6;
}

static void vr_report_rows(vr_json *j, const vr_plan *p,
                           const vr_run_info *info)
{
    vr_json_key(j, "files");
    vr_json_array(j);
    for (size_t i = 0; i < p->n_rows; i++) {
        const vr_row *r = &p->rows[i];
        int sub = r->req >= 0;
        int ok = sub && r->ran && r->status == 0;
        vr_json_object(j);
        vr_json_key(j, "path");
        vr_json_string(j, r->name);
        vr_json_key(j, "profile");
        vr_json_string(j, r->profile);
        vr_json_key(j, "status");
        vr_json_string(
            j, vr_report_status(sub, r->ran ? r->status : VSCHED_EERR, info));
        vr_json_key(j, "rebuilt");
        vr_json_bool(j, ok && r->outcome != VR_KEPT);
        vr_json_key(j, "cached");
        vr_json_bool(j, ok && r->outcome == VR_RESTORED);
        vr_json_key(j, "reason");
        char *why = vr_reason_text(&r->v);
        vr_json_string(j, why);
        free(why);
        vr_json_key(j, "duration_ms");
        vr_json_uint(j, (unsigned long long)(vr_ms(r->duration_ns) + 0.5));
        vr_json_end_object(j);
    }
    vr_json_end_array(j);
}

static void vr_report_jobs(vr_json *j, const vr_plan *p,
                           const vr_run_info *info)
{
    vr_json_key(j, "jobs");
    vr_json_array(j);
    for (size_t i = 0; i < p->n_links; i++) {
        const vr_link *l = &p->links[i];
        int done = l->run && l->info.state == VSCHED_NODE_DONE;
        int status =
            !l->run                                  ? 0
            : l->info.state == VSCHED_NODE_CANCELLED ? VSCHED_ECANCELLED
            : done                                   ? 0
                   : (l->info.status != 0 ? l->info.status : VSCHED_EERR);
        if (l->run && l->info.state == VSCHED_NODE_CANCELLED &&
            l->info.failed_dep != NULL && !info->interrupted)
            status = VSCHED_EDEPFAIL;
        vr_json_object(j);
        vr_json_key(j, "name");
        vr_json_string(j, l->name);
        vr_json_key(j, "kind");
        vr_json_string(j, l->kind);
        vr_json_key(j, "profile");
        vr_json_string(j, l->profile);
        vr_json_key(j, "status");
        vr_json_string(j, vr_report_status(l->run, status, info));
        vr_json_key(j, "rebuilt");
        vr_json_bool(j, done && l->outcome == VR_EXECUTED);
        vr_json_key(j, "reason");
        char *why = vr_reason_text(&l->v);
        vr_json_string(j, why);
        free(why);
        vr_json_key(j, "duration_ms");
        uint64_t ns = l->info.finished_ns > l->info.started_ns
                          ? l->info.finished_ns - l->info.started_ns
                          : 0;
        vr_json_uint(j, (unsigned long long)(vr_ms(ns) + 0.5));
        vr_json_key(j, "output");
        const char *o = l->info.output != NULL ? l->info.output
                        : l->rec != NULL       ? l->rec->out_path
                                               : NULL;
        vr_json_string(j, o);
        vr_json_end_object(j);
    }
    vr_json_end_array(j);
}

static void vr_report_stats(vr_json *j, const vr_plan *p,
                            const vr_run_info *info)
{
    vr_tally t;
    vr_tally_rows(p, &t);
    vr_json_key(j, "stats");
    vr_json_object(j);
    vr_json_key(j, "files");
    vr_json_uint(j, p->n_rows);
    vr_json_key(j, "rebuilt");
    vr_json_uint(j, t.rebuilt);
    vr_json_key(j, "compiled");
    vr_json_uint(j, t.compiled);
    vr_json_key(j, "restored");
    vr_json_uint(j, t.restored);
    vr_json_key(j, "kept");
    vr_json_uint(j, t.kept);
    vr_json_key(j, "up_to_date");
    vr_json_uint(j, t.current);
    vr_json_key(j, "failed");
    vr_json_uint(j, t.failed);
    vr_json_key(j, "not_built");
    vr_json_uint(j, t.cancelled);
    vr_json_key(j, "removed");
    vr_json_uint(j, p->n_removed);
    vr_json_key(j, "sources_hashed");
    vr_json_uint(j, info->sources_hashed);
    vr_json_key(j, "outputs_hashed");
    vr_json_uint(j, info->outputs_hashed);
    vr_json_key(j, "wall_ms");
    vr_json_uint(j, (unsigned long long)(info->wall_s * 1000.0 + 0.5));
    vr_json_key(j, "cache");
    if (!info->have_cache) {
        vr_json_null(j);
    } else {
        vr_json_object(j);
        vr_json_key(j, "hits");
        vr_json_uint(j, info->cache.hits);
        vr_json_key(j, "misses");
        vr_json_uint(j, info->cache.misses);
        vr_json_key(j, "stored");
        vr_json_uint(j, info->cache.stored);
        vr_json_key(j, "restored_bytes");
        vr_json_uint(j, info->cache.restored_bytes);
        vr_json_key(j, "stored_bytes");
        vr_json_uint(j, info->cache.stored_bytes);
        vr_json_end_object(j);
    }
    vr_json_end_object(j);
}

/* Contract: see report.h. */
int vr_report_write(const char *path, const vr_plan *p,
                    const vr_run_info *info, char **msg)
{
    *msg = NULL;
    char *tmp = vr_strfmt("%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        *msg =
            vr_strfmt("cannot write the report %s: %s", path, strerror(errno));
        free(tmp);
        return VSCHED_EIO;
    }
    vr_json *j = vr_json_new(f, 2);
    vr_json_object(j);
    vr_json_key(j, "version");
    vr_json_int(j, 1);
    vr_report_rows(j, p, info);
    vr_report_jobs(j, p, info);
    vr_json_key(j, "removed");
    vr_json_array(j);
    for (size_t i = 0; i < p->n_removed; i++) {
        vr_json_object(j);
        vr_json_key(j, p->removed[i].is_job ? "link" : "path");
        vr_json_string(j, p->removed[i].what);
        vr_json_key(j, "profile");
        vr_json_string(j, p->removed[i].profile);
        vr_json_key(j, "output");
        vr_json_string(j, p->removed[i].out_path);
        vr_json_end_object(j);
    }
    vr_json_end_array(j);
    vr_report_stats(j, p, info);
    vr_json_end_object(j);
    int rc = vr_json_finish(j);
    if (fclose(f) != 0 && rc == VSCHED_OK)
        rc = VSCHED_EIO;
    if (rc == VSCHED_OK && rename(tmp, path) != 0)
        rc = VSCHED_EIO;
    if (rc != VSCHED_OK) {
        *msg = vr_strfmt("cannot write the report %s: %s", path,
                         strerror(errno != 0 ? errno : EIO));
        unlink(tmp);
    }
    free(tmp);
    return rc;
}
