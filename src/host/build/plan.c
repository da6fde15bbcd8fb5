/*
 * plan -- deciding what a run does; see plan.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/plugin.h>

#include "build/plan.h"
#include "common/strmap.h"
#include "common/util.h"
#include "config/plugin_host.h"
#include "state/keys.h"

/* The canonical name of input `name`: itself when it has a record under
 * that name (the common case: no plugin call), else the loader's
 * realpath, else itself (the scheduler then reports what is wrong). */
static char *vr_canonical(vr_incr *in, const char *name,
                          char *const *profiles, size_t n_profiles)
{
    for (size_t p = 0; p < n_profiles; p++)
        if (vr_bind_record(in->bind, name, profiles[p]) != NULL)
            return vr_xstrdup(name);
    const vsched_loader_binding *lb = &in->b->loader;
    const vsched_ctx *ctx = vr_plugin_host_ctx();
    char *canon = NULL;
    if (lb->ops->realpath(lb->inst, ctx, name, &canon) == VSCHED_OK &&
        canon != NULL) {
        char *c = vr_xstrdup(canon);
        ctx->free(ctx, canon);
        return c;
    }
    if (canon != NULL)
        ctx->free(ctx, canon);
    return vr_xstrdup(name);
}

/* ---- the up-to-date check, fanned out ---------------------------------------
 *
 * Rows are independent and sources.h is thread-safe, so the check of
 * every row (stat calls, mostly) is one coordinator batch of chunks of
 * rows; each chunk counts the outputs it read into its own slot. */
#define VR_PLAN_CHUNK 256

typedef struct check_batch {
    vr_plan *p;
    vr_incr *in;
} check_batch;

static int check_item(void *ctx, size_t i, void *slot, char **msg)
{
    check_batch *cb = ctx;
    uint64_t *hashed = slot;
    size_t end = (i + 1) * VR_PLAN_CHUNK;
    (void)msg;
    for (size_t k = i * VR_PLAN_CHUNK; k < end && k < cb->p->n_rows; k++) {
        vr_row *r = &cb->p->rows[k];
        const vr_profile_keys *pk = vr_incr_keys(cb->in, r->profile);
        vr_dirty_artifact(cb->in->src, r->rec, pk->config, pk->tool, &r->v,
                          hashed);
    }
    return VSCHED_OK;
}

static const vr_coord_policy check_policy = {
    .span_name = "check",
    .slot_size = sizeof(uint64_t),
    .item = check_item,
};

/* Check every row (vr_dirty_artifact), on the coordinator's threads. */
static void vr_plan_check(vr_plan *p, vr_incr *in)
{
    check_batch cb = {p, in};
    size_t n = (p->n_rows + VR_PLAN_CHUNK - 1) / VR_PLAN_CHUNK;
    uint64_t *hashed = vr_xcalloc(n + 1, sizeof *hashed);
    vr_coord_batch(in->b->coord, &check_policy, &cb, n, hashed);
    for (size_t i = 0; i < n; i++)
        in->outputs_hashed += hashed[i];
    free(hashed);
}

/* Decide one profile's link. */
static void vr_plan_link(vr_plan *p, vr_incr *in, vr_link *l, size_t prof)
{
    vr_row *rows = &p->rows[prof * p->n_inputs];
    l->inputs = vr_xcalloc(p->n_inputs + 1, sizeof *l->inputs);
    l->given = vr_xcalloc(p->n_inputs + 1, sizeof *l->given);
    const char **paths = vr_xcalloc(p->n_inputs + 1, sizeof *paths);
    uint64_t *hashes = vr_xcalloc(p->n_inputs + 1, sizeof *hashes);
    size_t n = 0;
    const char *first_dirty = NULL;
    for (size_t i = 0; i < p->n_inputs; i++) {
        l->inputs[l->n_inputs++] = rows[i].name;
        if (rows[i].req >= 0) {
            if (first_dirty == NULL)
                first_dirty = rows[i].name;
            continue;
        }
        if (rows[i].rec != NULL && rows[i].rec->out_path != NULL) {
            l->given[l->n_given++] = rows[i].rec->out_path;
            paths[n] = rows[i].rec->out_path;
            hashes[n++] = rows[i].rec->out_hash;
        }
    }
    l->rec = vr_bind_job_record(in->bind, "link", l->name, l->profile);
    memset(&l->v, 0, sizeof l->v);
    if (first_dirty != NULL) {
        l->v.reason = l->rec != NULL ? VR_INPUTS : VR_NEW;
        l->v.what = l->rec != NULL ? vr_xstrdup(first_dirty) : NULL;
    } else {
        const vr_profile_keys *k = vr_incr_keys(in, l->profile);
        uint8_t key[16];
        vr_keys_job(key, "link", l->name, l->profile, k->config, k->tool,
                    paths, hashes, n);
        vr_dirty_job(l->rec, key, &l->v, &in->outputs_hashed);
    }
    l->run = l->v.reason != VR_CURRENT;
    free(paths);
    free(hashes);
}

/* The records of these profiles whose source is not an input any more,
 * and the links of these profiles that are no longer configured. */
static void vr_plan_removed(vr_plan *p, vr_incr *in, char *const *profiles,
                            size_t n_profiles, const char *link)
{
    vr_strmap *here = vr_strmap_new(p->n_rows);
    for (size_t i = 0; i < p->n_rows; i++) {
        char *k = vr_strmap_key(p->rows[i].name, p->rows[i].profile, NULL);
        vr_strmap_put(here, k, 1);
        free(k);
    }
    vr_strmap *profs = vr_strmap_new(n_profiles);
    for (size_t i = 0; i < n_profiles; i++)
        vr_strmap_put(profs, profiles[i], 1);
    for (size_t i = 0; i < in->snap.n_art; i++) {
        const vr_art_row *r = &in->snap.art[i];
        char *k = vr_strmap_key(r->source, r->profile, NULL);
        int gone = vr_strmap_get(profs, r->profile) >= 0 &&
                   vr_strmap_get(here, k) < 0;
        free(k);
        if (!gone)
            continue;
        p->removed = vr_xrealloc(p->removed,
                                 (p->n_removed + 1) * sizeof *p->removed);
        p->removed[p->n_removed++] = (vr_removal){
            vr_xstrdup(r->source), vr_xstrdup(r->profile),
            r->out_path != NULL ? vr_xstrdup(r->out_path) : NULL, 0};
    }
    for (size_t i = 0; i < in->snap.n_job; i++) {
        const vr_job_row *j = &in->snap.job[i];
        if (strcmp(j->kind, "link") != 0 ||
            vr_strmap_get(profs, j->profile) < 0 ||
            (link != NULL && strcmp(j->name, link) == 0))
            continue;
        p->removed = vr_xrealloc(p->removed,
                                 (p->n_removed + 1) * sizeof *p->removed);
        p->removed[p->n_removed++] = (vr_removal){
            vr_xstrdup(j->name), vr_xstrdup(j->profile),
            j->out_path != NULL ? vr_xstrdup(j->out_path) : NULL, 1};
    }
    vr_strmap_free(here);
    vr_strmap_free(profs);
}

/* Contract: see plan.h. */
void vr_plan_make(vr_plan *p, vr_incr *in, char *const *inputs,
                  size_t n_inputs, char *const *profiles, size_t n_profiles,
                  const char *link, int sweep)
{
    memset(p, 0, sizeof *p);
    p->n_inputs = n_inputs;
    p->n_profiles = n_profiles;
    p->n_rows = n_inputs * n_profiles;
    p->rows = vr_xcalloc(p->n_rows + 1, sizeof *p->rows);
    char **canon = vr_xcalloc(n_inputs + 1, sizeof *canon);
    for (size_t i = 0; i < n_inputs; i++)
        canon[i] = vr_canonical(in, inputs[i], profiles, n_profiles);
    for (size_t pr = 0; pr < n_profiles; pr++)
        for (size_t i = 0; i < n_inputs; i++) {
            vr_row *r = &p->rows[pr * n_inputs + i];
            r->input = inputs[i];
            r->name = vr_xstrdup(canon[i]);
            r->profile = profiles[pr];
            r->rec = vr_bind_record(in->bind, r->name, r->profile);
            r->req = -1;
        }
    vr_plan_check(p, in);
    for (size_t i = 0; i < p->n_rows; i++) {
        vr_row *r = &p->rows[i];
        if (r->v.reason != VR_CURRENT)
            r->req = (long)p->n_dirty++; /* request order: row order */
        else if (r->v.out_restamped)
            p->restamped++;
    }
    for (size_t i = 0; i < n_inputs; i++)
        free(canon[i]);
    free(canon);
    if (link != NULL) {
        p->links = vr_xcalloc(n_profiles + 1, sizeof *p->links);
        p->link_plans = vr_xcalloc(n_profiles + 1, sizeof *p->link_plans);
        for (size_t pr = 0; pr < n_profiles; pr++) {
            vr_link *l = &p->links[p->n_links];
            l->name = link;
            l->profile = profiles[pr];
            vr_plan_link(p, in, l, pr);
            p->link_plans[p->n_links++] = (vr_link_plan){
                l->name, l->profile, l->inputs, l->n_inputs};
        }
    }
    if (sweep)
        vr_plan_removed(p, in, profiles, n_profiles, link);
}

/* Remove one output that left the build; say so. */
static void vr_remove_output(const vr_removal *r, FILE *out, int quiet)
{
    if (r->out_path == NULL || unlink(r->out_path) != 0) {
        if (r->out_path != NULL && errno != ENOENT)
            fprintf(out, "vsched-run: cannot remove %s: %s\n", r->out_path,
                    strerror(errno));
        return;
    }
    if (!quiet)
        fprintf(out, r->is_job ? "vsched-run: removed %s (link %s [%s] is "
                                 "no longer configured)\n"
                               : "vsched-run: removed %s (%s [%s] is no "
                                 "longer an input)\n",
                r->out_path, r->what, r->profile);
}

/* Contract: see plan.h. */
void vr_plan_apply(vr_plan *p, vr_incr *in, FILE *out, int quiet)
{
    for (size_t i = 0; i < p->n_removed; i++)
        vr_remove_output(&p->removed[i], out, quiet);
    if (p->n_removed == 0 && p->restamped == 0 &&
        vr_sources_pending(in->src) == 0)
        return; /* nothing to write: the run stays one read transaction */
    if (vr_state_begin(in->state) != VSCHED_OK)
        return;
    int rc = VSCHED_OK;
    for (size_t i = 0; rc == VSCHED_OK && i < p->n_removed; i++) {
        const vr_removal *r = &p->removed[i];
        rc = r->is_job ? vr_state_drop_job(in->state, "link", r->what,
                                           r->profile)
                       : vr_state_drop_artifact(in->state, r->what,
                                                r->profile);
    }
    for (size_t i = 0; rc == VSCHED_OK && i < p->n_rows; i++) {
        const vr_row *r = &p->rows[i];
        if (r->req >= 0 || !r->v.out_restamped || r->rec == NULL)
            continue;
        vr_art_row row = *r->rec;
        row.out_st = r->v.new_out_st;
        rc = vr_state_put_artifact(in->state, &row);
    }
    if (rc == VSCHED_OK)
        rc = vr_sources_flush(in->src, in->state);
    if (rc == VSCHED_OK && p->n_removed > 0)
        rc = vr_state_sweep(in->state, NULL);
    if (rc == VSCHED_OK)
        vr_state_commit(in->state);
}

/* Contract: see plan.h. */
void vr_plan_free(vr_plan *p)
{
    for (size_t i = 0; i < p->n_rows; i++) {
        free(p->rows[i].name);
        vr_verdict_clear(&p->rows[i].v);
    }
    for (size_t i = 0; i < p->n_links; i++) {
        free(p->links[i].inputs);
        free(p->links[i].given);
        vr_verdict_clear(&p->links[i].v);
        vsched_node_info_clear(&p->links[i].info);
    }
    for (size_t i = 0; i < p->n_removed; i++) {
        free(p->removed[i].what);
        free(p->removed[i].profile);
        free(p->removed[i].out_path);
    }
    free(p->rows);
    free(p->links);
    free(p->link_plans);
    free(p->removed);
    memset(p, 0, sizeof *p);
}
