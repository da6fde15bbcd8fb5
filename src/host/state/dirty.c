/*
 * dirty -- the up-to-date check; see dirty.h.
 */
#include <stdlib.h>
#include <string.h>

#include <vsched/plugin.h>

#include "common/util.h"
#include "state/dirty.h"

static void vr_set(vr_verdict *v, vr_reason r, const char *what)
{
    v->reason = r;
    free(v->what);
    v->what = what != NULL ? vr_xstrdup(what) : NULL;
}

/* Contract: see dirty.h. */
void vr_dirty_output(const char *path, const vr_stamp *rec_st,
                     uint64_t rec_hash, vr_verdict *v,
                     uint64_t *outputs_hashed)
{
    vr_stamp st;
    if (path == NULL)
        return; /* the artifact is no file */
    if (vr_stamp_of(path, &st) != VSCHED_OK) {
        vr_set(v, VR_OUT_MISSING, NULL);
        return;
    }
    if (vr_stamp_equal(&st, rec_st))
        return;
    uint64_t h = 0;
    int rc = vr_hash_file(path, &h, &st);
    if (outputs_hashed != NULL)
        (*outputs_hashed)++;
    if (rc != VSCHED_OK || h != rec_hash) {
        vr_set(v, rc == VSCHED_ENOENT ? VR_OUT_MISSING : VR_OUT_MODIFIED,
               NULL);
        return;
    }
    v->out_restamped = 1; /* touched, same bytes */
    v->new_out_st = st;
}

/* Contract: see dirty.h. */
void vr_dirty_artifact(vr_sources *src, const vr_art_row *row, uint64_t config,
                       uint64_t tool, vr_verdict *v, uint64_t *outputs_hashed)
{
    memset(v, 0, sizeof *v);
    if (row == NULL) {
        vr_set(v, VR_NEW, NULL);
        return;
    }
    if (row->tool != tool) {
        vr_set(v, VR_TOOL, NULL);
        return;
    }
    if (row->config != config) {
        vr_set(v, VR_FLAGS, NULL);
        return;
    }
    size_t i = vr_sources_first_changed(src, row->deps, row->n_deps);
    if (i < row->n_deps) {
        const char *name = vr_sources_name(src, row->deps[i].source);
        if (i == 0 || (name != NULL && strcmp(name, row->source) == 0))
            vr_set(v, VR_SOURCE, NULL);
        else
            vr_set(v, VR_DEP, name != NULL ? name : "(a removed file)");
        return;
    }
    if (row->n_deps == 0) {
        vr_set(v, VR_SOURCE, NULL); /* a record without its source */
        return;
    }
    vr_dirty_output(row->out_path, &row->out_st, row->out_hash, v,
                    outputs_hashed);
}

/* Contract: see dirty.h. */
void vr_dirty_job(const vr_job_row *row, const uint8_t key[16], vr_verdict *v,
                  uint64_t *outputs_hashed)
{
    memset(v, 0, sizeof *v);
    if (row == NULL) {
        vr_set(v, VR_NEW, NULL);
        return;
    }
    if (memcmp(row->key, key, 16) != 0) {
        vr_set(v, VR_INPUTS, NULL);
        return;
    }
    vr_dirty_output(row->out_path, &row->out_st, row->out_hash, v,
                    outputs_hashed);
}

/* Contract: see dirty.h. */
const char *vr_reason_name(vr_reason r)
{
    switch (r) {
    case VR_CURRENT: return "current";
    case VR_NEW: return "new";
    case VR_TOOL: return "compiler";
    case VR_FLAGS: return "flags";
    case VR_SOURCE: return "source";
    case VR_DEP: return "dependency";
    case VR_OUT_MISSING: return "output_missing";
    case VR_OUT_MODIFIED: return "output_modified";
    case VR_INPUTS: return "inputs";
    }
    return "unknown";
}

/* Contract: see dirty.h. */
char *vr_reason_text(const vr_verdict *v)
{
    switch (v->reason) {
    case VR_CURRENT: return vr_xstrdup("up to date");
    case VR_NEW: return vr_xstrdup("new");
    case VR_TOOL: return vr_xstrdup("compiler changed");
    case VR_FLAGS: return vr_xstrdup("flags changed");
    case VR_SOURCE: return vr_xstrdup("source changed");
    case VR_DEP:
        return vr_strfmt("dependency %s changed",
                         v->what != NULL ? v->what : "(unknown)");
    case VR_OUT_MISSING: return vr_xstrdup("output missing");
    case VR_OUT_MODIFIED: return vr_xstrdup("output modified");
    case VR_INPUTS:
        return v->what != NULL ? vr_strfmt("input %s changed", v->what)
                               : vr_xstrdup("inputs or flags changed");
    }
    return vr_xstrdup("unknown");
}

/* Contract: see dirty.h. */
void vr_verdict_clear(vr_verdict *v)
{
    free(v->what);
    memset(v, 0, sizeof *v);
}
