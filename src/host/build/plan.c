/*
 * plan -- deciding what a run does; see plan.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/plugin.h>

#include "build/plan.h"
#include "common/escape.h"
#include "common/strmap.h"
#include "common/util.h"
#include "config/plugin_host.h"
#include "state/journal.h"
#include "state/keys.h"

/* The canonical name of input `name`: itself when it has a record under
 * that name (the common case: no plugin call), else the loader's
 * realpath, else itself (the scheduler then reports what is wrong). */
static char *vr_canonical(vr_incr *in, const char *name, char *const *profiles,
                          size_t n_profiles)
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

/* -n's view of the journal. The run settles it before it plans
 * (vr_incr_open): an output removed there is missing when the run checks
 * it, and what it belongs to is rebuilt. -n removes nothing, so it plans
 * each row and link whose recorded output settling would remove as
 * missing. Empty (no allocation past the set) unless -n found notes. */
typedef struct vr_unsettled {
    vr_strmap *gone; /* resolved paths settling removes */
    char *out_real;  /* realpath of out_dir, when there are any */
} vr_unsettled;

static void vr_unsettled_init(vr_unsettled *u, const vr_incr *in)
{
    u->gone = NULL;
    u->out_real = NULL;
    const char *out_dir = in->b->settings->out_dir;
    if (!in->dry || out_dir == NULL)
        return;
    u->gone = vr_strmap_new(16);
    if (vr_journal_pending(in->state_dir, out_dir, &in->snap, u->gone) > 0)
        u->out_real = realpath(out_dir, NULL);
}

/* A verdict of current made missing when settling removes `out_path`. */
static void vr_unsettled_apply(const vr_unsettled *u, const char *out_path,
                               vr_verdict *v)
{
    if (u->out_real == NULL || out_path == NULL || v->reason != VR_CURRENT)
        return;
    char *at = vr_path_resolve_inside(u->out_real, out_path);
    if (at != NULL && vr_strmap_get(u->gone, at) >= 0) {
        vr_verdict_clear(v);
        memset(v, 0, sizeof *v);
        v->reason = VR_OUT_MISSING;
    }
    free(at);
}

static void vr_unsettled_fini(vr_unsettled *u)
{
    vr_strmap_free(u->gone);
    free(u->out_real);
}

/* Decide one link: its objects, then its libraries (decided before it). */
static void vr_plan_link(vr_plan *p, vr_incr *in, vr_link *l,
                         const vr_unsettled *u)
{
    size_t cap = l->n_rows + l->n_libs + 1;
    l->inputs = vr_xcalloc(cap, sizeof *l->inputs);
    l->given = vr_xcalloc(cap, sizeof *l->given);
    l->lib_kinds = vr_xcalloc(l->n_libs + 1, sizeof *l->lib_kinds);
    l->lib_names = vr_xcalloc(l->n_libs + 1, sizeof *l->lib_names);
    const char **paths = vr_xcalloc(cap, sizeof *paths);
    uint64_t *hashes = vr_xcalloc(cap, sizeof *hashes);
    size_t n = 0;
    const char *first_dirty = NULL;
    for (size_t k = 0; k < l->n_rows; k++) {
        const vr_row *r = &p->rows[l->rows[k]];
        l->inputs[l->n_inputs++] = r->name;
        if (r->req >= 0) {
            if (first_dirty == NULL)
                first_dirty = r->name;
            continue;
        }
        if (r->rec != NULL && r->rec->out_path != NULL) {
            l->given[l->n_given++] = r->rec->out_path;
            paths[n] = r->rec->out_path;
            hashes[n++] = r->rec->out_hash;
        }
    }
    for (size_t k = 0; k < l->n_libs; k++) {
        const vr_link *lib = &p->links[l->libs[k]];
        l->lib_kinds[k] = lib->kind;
        l->lib_names[k] = lib->name;
        if (lib->run) {
            if (first_dirty == NULL)
                first_dirty = lib->name;
            continue;
        }
        if (lib->rec != NULL && lib->rec->out_path != NULL) {
            l->given[l->n_given++] = lib->rec->out_path;
            paths[n] = lib->rec->out_path;
            hashes[n++] = lib->rec->out_hash;
        }
    }
    l->rec = vr_bind_job_record(in->bind, l->kind, l->name, l->profile);
    memset(&l->v, 0, sizeof l->v);
    if (first_dirty != NULL) {
        l->v.reason = l->rec != NULL ? VR_INPUTS : VR_NEW;
        l->v.what = l->rec != NULL ? vr_xstrdup(first_dirty) : NULL;
    } else {
        const vr_profile_keys *k = vr_incr_keys(in, l->profile);
        uint8_t key[16];
        vr_keys_job(key, l->kind, l->name, l->profile,
                    vr_bind_job_config(k->config, l->salt), k->tool, paths,
                    hashes, n);
        vr_dirty_job(l->rec, key, &l->v, &in->outputs_hashed);
        vr_unsettled_apply(u, l->rec != NULL ? l->rec->out_path : NULL, &l->v);
    }
    l->run = l->v.reason != VR_CURRENT;
    free(paths);
    free(hashes);
}

/* 1 when `kind` is the kind of a target's job. */
static int vr_is_target_kind(const char *kind)
{
    return strcmp(kind, "link") == 0 || strcmp(kind, "static") == 0 ||
           strcmp(kind, "shared") == 0;
}

/* 1 when `profile` is one of these profiles, or a variant
 * "BASE+TARGET" of one of the first n_base of them (a variant no longer
 * made: its records are of the build too). */
static int vr_plan_profile(const vr_strmap *profs, const vr_strmap *bases,
                           const char *profile)
{
    if (vr_strmap_get(profs, profile) >= 0)
        return 1;
    const char *plus = strchr(profile, '+');
    if (plus == NULL)
        return 0;
    char *base = vr_strfmt("%.*s", (int)(plus - profile), profile);
    int in = vr_strmap_get(bases, base) >= 0;
    free(base);
    return in;
}

/* The records of these profiles whose source is not an input any more,
 * and the jobs of these profiles that are no longer configured. */
/* Mark each removal whose output is also the recorded output of a record
 * that stays (`here`: the artifacts rows found; `jobs`: the links
 * configured): a record naming another's output (a state forged, or
 * copied from another tree) must not make the run delete an output it
 * then calls current. Outputs are compared resolved under out_dir
 * (vr_path_resolve_inside), so no spelling of the path escapes this;
 * only a run that removes something pays for it. */
static void vr_plan_shared(vr_plan *p, const vr_incr *in,
                           const unsigned char *here, const vr_strmap *jobs)
{
    const char *out_dir = in->b->settings->out_dir;
    char *out_real = out_dir != NULL ? realpath(out_dir, NULL) : NULL;
    if (out_real == NULL)
        return; /* nothing is removed without out_dir */
    vr_strmap *kept = vr_strmap_new(in->snap.n_art + in->snap.n_job + 1);
    for (size_t i = 0; i < in->snap.n_art + in->snap.n_job; i++) {
        const char *path;
        if (i < in->snap.n_art) {
            path = here[i] ? in->snap.art[i].out_path : NULL;
        } else {
            const vr_job_row *j = &in->snap.job[i - in->snap.n_art];
            char *k = vr_strmap_key(j->kind, j->name, j->profile);
            path = vr_strmap_get(jobs, k) >= 0 ? j->out_path : NULL;
            free(k);
        }
        char *at = path != NULL && path[0] != '\0'
                       ? vr_path_resolve_inside(out_real, path)
                       : NULL;
        if (at != NULL)
            vr_strmap_put_owned(kept, at, 1);
    }
    for (size_t i = 0; i < p->n_removed; i++) {
        vr_removal *r = &p->removed[i];
        char *at = r->out_path != NULL && r->out_path[0] != '\0'
                       ? vr_path_resolve_inside(out_real, r->out_path)
                       : NULL;
        r->shared = at != NULL && vr_strmap_get(kept, at) >= 0;
        free(at);
    }
    vr_strmap_free(kept);
    free(out_real);
}

static void vr_plan_removed(vr_plan *p, vr_incr *in, char *const *profiles,
                            size_t n_profiles, size_t n_base)
{
    /* A record is here when a row found it (vr_bind_record: the record
     * of the row's name and profile, one per pair). */
    unsigned char *here = vr_xcalloc(in->snap.n_art + 1, 1);
    for (size_t i = 0; i < p->n_rows; i++)
        if (p->rows[i].rec != NULL)
            here[p->rows[i].rec - in->snap.art] = 1;
    vr_strmap *jobs = vr_strmap_new(p->n_links + 1);
    for (size_t i = 0; i < p->n_links; i++) {
        const vr_link *l = &p->links[i];
        char *k = vr_strmap_key(l->kind, l->name, l->profile);
        vr_strmap_put(jobs, k, 1);
        free(k);
    }
    vr_strmap *profs = vr_strmap_new(n_profiles);
    vr_strmap *bases = vr_strmap_new(n_base + 1);
    for (size_t i = 0; i < n_profiles; i++)
        vr_strmap_put(profs, profiles[i], 1);
    for (size_t i = 0; i < n_base; i++)
        vr_strmap_put(bases, profiles[i], 1);
    for (size_t i = 0; i < in->snap.n_art; i++) {
        const vr_art_row *r = &in->snap.art[i];
        if (here[i] || !vr_plan_profile(profs, bases, r->profile))
            continue;
        p->removed = vr_xgrow(p->removed, p->n_removed, sizeof *p->removed);
        p->removed[p->n_removed++] =
            (vr_removal){NULL,
                         vr_xstrdup(r->source),
                         vr_xstrdup(r->profile),
                         r->out_path != NULL ? vr_xstrdup(r->out_path) : NULL,
                         r->out_st,
                         r->out_hash,
                         0,
                         0};
    }
    for (size_t i = 0; i < in->snap.n_job; i++) {
        const vr_job_row *j = &in->snap.job[i];
        if (!vr_is_target_kind(j->kind) ||
            vr_strmap_get(profs, j->profile) < 0)
            continue;
        char *k = vr_strmap_key(j->kind, j->name, j->profile);
        int here_now = vr_strmap_get(jobs, k) >= 0;
        free(k);
        if (here_now)
            continue;
        p->removed = vr_xgrow(p->removed, p->n_removed, sizeof *p->removed);
        p->removed[p->n_removed++] =
            (vr_removal){vr_xstrdup(j->kind),
                         vr_xstrdup(j->name),
                         vr_xstrdup(j->profile),
                         j->out_path != NULL ? vr_xstrdup(j->out_path) : NULL,
                         j->out_st,
                         j->out_hash,
                         1,
                         0};
    }
    if (p->n_removed > 0)
        vr_plan_shared(p, in, here, jobs);
    free(here);
    vr_strmap_free(jobs);
    vr_strmap_free(profs);
    vr_strmap_free(bases);
}

/* A job's objects through row_map (work row -> plan row), each once, in
 * their first order: the job then owns its row list. */
static void merge_rows(vr_link *l, const size_t *row_map, size_t n_rows)
{
    unsigned char *here = vr_xcalloc(n_rows + 1, 1);
    l->own_rows = vr_xcalloc(l->n_rows + 1, sizeof *l->own_rows);
    size_t n = 0;
    for (size_t k = 0; k < l->n_rows; k++) {
        size_t r = row_map[l->rows[k]];
        if (!here[r]) {
            here[r] = 1;
            l->own_rows[n++] = r;
        }
    }
    free(here);
    l->rows = l->own_rows;
    l->n_rows = n;
}

/* Contract: see plan.h. */
void vr_plan_make(vr_plan *p, vr_incr *in, const vr_work *w)
{
    memset(p, 0, sizeof *p);
    p->n_inputs = w->n_inputs;
    p->n_profiles = w->n_profiles;
    p->rows = vr_xcalloc(w->n_rows + 1, sizeof *p->rows);
    char **canon = vr_xcalloc(w->n_inputs + 1, sizeof *canon);
    int renamed = 0;
    for (size_t i = 0; i < w->n_inputs; i++) {
        canon[i] = vr_canonical(in, w->inputs[i], w->profiles, w->n_profiles);
        renamed |= strcmp(canon[i], w->inputs[i]) != 0;
    }
    /* Inputs named two ways (`./a.c` and `a.c` in [batch] inputs, a
     * symbolic link and its target) have one canonical name: one object,
     * the first row standing for the others (row_map). Work's inputs are
     * distinct as named, so only a renamed input can meet another. */
    size_t *row_map =
        renamed ? vr_xcalloc(w->n_rows + 1, sizeof *row_map) : NULL;
    vr_strmap *seen = renamed ? vr_strmap_new(w->n_rows) : NULL;
    for (size_t i = 0; i < w->n_rows; i++) {
        const char *name = canon[w->rows[i].input];
        if (seen != NULL) {
            char *key = vr_strmap_key(name, w->rows[i].profile, NULL);
            long at = vr_strmap_get(seen, key);
            if (at >= 0) {
                row_map[i] = (size_t)at;
                free(key);
                continue;
            }
            row_map[i] = p->n_rows;
            vr_strmap_put_owned(seen, key, (long)p->n_rows);
        }
        vr_row *r = &p->rows[p->n_rows++];
        r->input = w->inputs[w->rows[i].input];
        r->name = vr_xstrdup(name);
        r->profile = w->rows[i].profile;
        r->rec = vr_bind_record(in->bind, r->name, r->profile);
        r->req = -1;
    }
    vr_strmap_free(seen);
    vr_plan_check(p, in);
    vr_unsettled u;
    vr_unsettled_init(&u, in);
    for (size_t i = 0; i < p->n_rows; i++) {
        vr_row *r = &p->rows[i];
        vr_unsettled_apply(&u, r->rec != NULL ? r->rec->out_path : NULL,
                           &r->v);
        if (r->v.reason != VR_CURRENT)
            r->req = (long)p->n_dirty++; /* request order: row order */
        else if (r->v.out_restamped)
            p->restamped++;
    }
    for (size_t i = 0; i < w->n_inputs; i++)
        free(canon[i]);
    free(canon);
    p->links = vr_xcalloc(w->n_jobs + 1, sizeof *p->links);
    p->link_plans = vr_xcalloc(w->n_jobs + 1, sizeof *p->link_plans);
    for (size_t k = 0; k < w->n_jobs; k++) {
        const vr_work_job *j = &w->jobs[k];
        vr_link *l = &p->links[p->n_links];
        l->kind = j->kind;
        l->name = j->name;
        l->profile = j->profile;
        l->obj_profile = j->obj_profile;
        l->rows = j->rows;
        l->n_rows = j->n_rows;
        if (row_map != NULL)
            merge_rows(l, row_map, p->n_rows);
        l->libs = j->libs;
        l->n_libs = j->n_libs;
        l->salt = j->salt;
        vr_plan_link(p, in, l, &u);
        p->link_plans[p->n_links++] = (vr_link_plan){
            l->kind,     l->name,      l->profile,   l->obj_profile, l->inputs,
            l->n_inputs, l->lib_kinds, l->lib_names, l->n_libs,      l->salt};
    }
    free(row_map);
    vr_unsettled_fini(&u);
    if (w->sweep)
        vr_plan_removed(p, in, w->profiles, w->n_profiles, w->n_base_profiles);
}

/* 1 when r's output is no longer the one recorded, in its bytes (a
 * touched one with the same bytes still is): someone replaced it, so it
 * is theirs and stays. */
static int vr_removal_replaced(const vr_removal *r, const char *at)
{
    vr_verdict v = {0};
    vr_dirty_output(at, &r->out_st, r->out_hash, &v, NULL);
    int replaced = v.reason == VR_OUT_MODIFIED;
    vr_verdict_clear(&v);
    return replaced;
}

/* Contract: see plan.h. */
char *vr_removal_target(const vr_removal *r, const char *out_real, FILE *err)
{
    if (r->shared)
        return NULL; /* another's output, which stays */
    char *at = vr_output_target(out_real, r->out_path, err);
    if (at != NULL && vr_removal_replaced(r, at)) {
        if (err != NULL) {
            fputs("vsched-run: kept ", err);
            vr_put_name(err, r->out_path);
            fputs(": it changed since vsched-run wrote it\n", err);
        }
        free(at);
        at = NULL;
    }
    return at;
}

/* Remove one output that left the build (vr_removal_target), saying so on
 * `out` unless quiet, what is kept or fails on `err`. */
static void vr_remove_output(const vr_removal *r, const char *out_real,
                             FILE *out, FILE *err, int quiet)
{
    char *at = vr_output_unlink(
        vr_removal_target(r, out_real, quiet ? NULL : err), err, quiet);
    if (at != NULL && !quiet) {
        vr_esc e1 = {0}, e2 = {0}, e3 = {0};
        fputs("vsched-run: removed ", out);
        vr_put_name(out, at);
        if (r->is_job)
            fprintf(out, " (%s %s [%s] is no longer configured)\n",
                    vr_esc_name(&e1, r->kind), vr_esc_name(&e2, r->what),
                    vr_esc_name(&e3, r->profile));
        else
            fprintf(out, " (%s [%s] is no longer an input)\n",
                    vr_esc_name(&e1, r->what), vr_esc_name(&e2, r->profile));
        vr_esc_done(&e1);
        vr_esc_done(&e2);
        vr_esc_done(&e3);
    }
    free(at);
}

/* Contract: see plan.h. */
void vr_plan_apply(vr_plan *p, vr_incr *in, FILE *out, int quiet)
{
    const char *out_dir = in->b->settings->out_dir;
    char *out_real =
        out_dir != NULL && p->n_removed > 0 ? realpath(out_dir, NULL) : NULL;
    for (size_t i = 0; i < p->n_removed; i++)
        vr_remove_output(&p->removed[i], out_real, out, in->b->err, quiet);
    free(out_real);
    if (p->n_removed == 0 && p->restamped == 0 &&
        vr_sources_pending(in->src) == 0)
        return; /* nothing to write: the run stays one read transaction */
    if (vr_state_begin(in->state) != VSCHED_OK)
        return;
    int rc = VSCHED_OK;
    for (size_t i = 0; rc == VSCHED_OK && i < p->n_removed; i++) {
        const vr_removal *r = &p->removed[i];
        rc = r->is_job
                 ? vr_state_drop_job(in->state, r->kind, r->what, r->profile)
                 : vr_state_drop_artifact(in->state, r->what, r->profile);
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
        free(p->links[i].own_rows);
        free(p->links[i].inputs);
        free(p->links[i].given);
        free(p->links[i].lib_kinds);
        free(p->links[i].lib_names);
        vr_verdict_clear(&p->links[i].v);
        vsched_node_info_clear(&p->links[i].info);
    }
    for (size_t i = 0; i < p->n_removed; i++) {
        free(p->removed[i].kind);
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
