/*
 * work -- the objects and target jobs a run is asked for; see work.h.
 */
#include "build/work.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsched/plugin.h>

#include "common/strmap.h"
#include "common/util.h"

typedef struct builder {
    vr_work *w;
    vr_strmap *input_ix; /* name -> index into w->inputs */
    size_t inputs_cap, rows_cap;
    long *row_at; /* [input * n_profiles + profile]: its row, or -1 */
} builder;

static size_t input_of(builder *bd, const char *name)
{
    long i = vr_strmap_get(bd->input_ix, name);
    if (i >= 0)
        return (size_t)i;
    vr_work *w = bd->w;
    size_t np = w->n_profiles;
    if (w->n_inputs == bd->inputs_cap) {
        bd->inputs_cap = bd->inputs_cap ? 2 * bd->inputs_cap : 64;
        w->inputs = vr_xrealloc(w->inputs, bd->inputs_cap * sizeof *w->inputs);
        bd->row_at =
            vr_xrealloc(bd->row_at, bd->inputs_cap * np * sizeof *bd->row_at);
    }
    for (size_t p = 0; p < np; p++)
        bd->row_at[w->n_inputs * np + p] = -1;
    w->inputs[w->n_inputs] = vr_xstrdup(name);
    vr_strmap_put(bd->input_ix, name, (long)w->n_inputs);
    return w->n_inputs++;
}

/* The row of (name, profile); `profile` is one of w->profiles. */
static size_t row_of(builder *bd, const char *name, const char *profile)
{
    size_t in = input_of(bd, name);
    vr_work *w = bd->w;
    size_t p = 0;
    while (p < w->n_profiles && w->profiles[p] != profile)
        p++;
    assert(p < w->n_profiles);
    long *r = &bd->row_at[in * w->n_profiles + p];
    if (*r < 0) {
        if (w->n_rows == bd->rows_cap) {
            bd->rows_cap = bd->rows_cap ? 2 * bd->rows_cap : 64;
            w->rows = vr_xrealloc(w->rows, bd->rows_cap * sizeof *w->rows);
        }
        w->rows[w->n_rows] = (vr_work_row){in, profile};
        *r = (long)w->n_rows++;
    }
    return (size_t)*r;
}

/* The profile named `name` in w->profiles (borrowed). */
static const char *profile_named(const vr_work *w, const char *name)
{
    for (size_t i = 0; i < w->n_profiles; i++)
        if (strcmp(w->profiles[i], name) == 0)
            return w->profiles[i];
    return w->profiles[0];
}

static void mark(const vr_targets *t, size_t i, unsigned char *sel)
{
    if (sel[i])
        return;
    sel[i] = 1;
    for (size_t k = 0; k < t->v[i].n_link_with; k++)
        mark(t, t->v[i].link_with[k], sel);
}

/* Every target's expanded inputs (less excludes), deduplicated. */
static int expand_targets(const vr_build *b, const vr_targets *t,
                          const unsigned char *sel, char *const *batch,
                          size_t n_batch, char ****names, size_t **n,
                          char **err)
{
    *names = vr_xcalloc(t->n + 1, sizeof **names);
    *n = vr_xcalloc(t->n + 1, sizeof **n);
    for (size_t i = 0; i < t->n; i++) {
        const vr_target *tg = &t->v[i];
        if (!sel[i])
            continue;
        if (tg->implicit) {
            (*names)[i] = vr_xcalloc(n_batch + 1, sizeof(char *));
            for (size_t k = 0; k < n_batch; k++)
                (*names)[i][(*n)[i]++] = vr_xstrdup(batch[k]);
            continue;
        }
        char *what = vr_strfmt("[target.%s] inputs", tg->name);
        int rc = vr_build_expand(b, tg->inputs, tg->n_inputs, tg->exclude,
                                 tg->n_exclude, tg->inputs_where, what,
                                 &(*names)[i], &(*n)[i], err);
        free(what);
        if (rc != VSCHED_OK)
            return rc;
        vr_build_dedupe((*names)[i], &(*n)[i]);
        if ((*n)[i] == 0) {
            *err = vr_strfmt("%s[target.%s] exclude removes every input; "
                             "the target has nothing to build",
                             tg->inputs_where, tg->name);
            return VSCHED_ECONFIG;
        }
    }
    return VSCHED_OK;
}

/* The jobs of one profile, in link order. */
static void add_jobs(builder *bd, const vr_targets *t, const size_t *order,
                     const unsigned char *sel, char ***names, size_t *n,
                     const char *profile)
{
    vr_work *w = bd->w;
    long *job_of = vr_xcalloc(t->n + 1, sizeof *job_of);
    for (size_t o = 0; o < t->n; o++) {
        size_t i = order[o];
        const vr_target *tg = &t->v[i];
        job_of[i] = -1;
        if (!sel[i])
            continue;
        const char *obj = profile_named(w, vr_targets_variant(t, i, profile));
        vr_work_job j = {
            .kind = vr_target_job_kind(tg->kind),
            .name = tg->name,
            .profile = profile,
            .obj_profile = obj,
            .salt = tg->salt,
        };
        j.rows = vr_xcalloc(n[i] + 1, sizeof *j.rows);
        for (size_t k = 0; k < n[i]; k++)
            j.rows[j.n_rows++] = row_of(bd, names[i][k], obj);
        if (tg->kind != VR_TARGET_STATIC) { /* an archive links nothing */
            size_t nl = 0;
            size_t *line = vr_targets_link_line(t, i, &nl);
            j.libs = vr_xcalloc(nl + 1, sizeof *j.libs);
            for (size_t k = 0; k < nl; k++)
                j.libs[j.n_libs++] = (size_t)job_of[line[k]];
            free(line);
        }
        w->jobs = vr_xrealloc(w->jobs, (w->n_jobs + 1) * sizeof *w->jobs);
        job_of[i] = (long)w->n_jobs;
        w->jobs[w->n_jobs++] = j;
    }
    free(job_of);
}

/* Contract: see work.h. */
int vr_work_make(vr_work *w, const vr_build *b, char **err)
{
    memset(w, 0, sizeof *w);
    *err = NULL;
    static const vr_targets none = {0};
    const vr_targets *t = b->targets != NULL ? b->targets : &none;
    w->profiles = vr_build_profiles(b, &w->n_base_profiles);
    w->n_profiles = w->n_base_profiles;
    for (size_t i = 0; i < t->n_extra; i++) {
        w->profiles = vr_xrealloc(w->profiles,
                                  (w->n_profiles + 1) * sizeof *w->profiles);
        w->profiles[w->n_profiles++] = vr_xstrdup(t->extra[i]);
    }
    unsigned char *sel = vr_xcalloc(t->n + 1, 1);
    int files = 0, targets = 0;
    for (size_t i = 0; i < b->cli->n_files; i++) {
        long k = vr_build_operand_target(b, i);
        if (k >= 0) {
            mark(t, (size_t)k, sel);
            targets = 1;
        } else {
            files = 1; /* checked and canonical already (operands.h) */
        }
    }
    w->sweep = !files && !targets;
    /* batch: [batch] inputs (the shorthand target's too); plain: the
     * sources built in every profile without a target. */
    char **batch = NULL, **plain = NULL, ***names = NULL;
    size_t n_batch = 0, n_plain = 0, *n = NULL;
    int rc = VSCHED_OK;
    if (files)
        rc = vr_build_inputs(b, &plain, &n_plain, err); /* FILES only */
    if (rc == VSCHED_OK && b->settings->n_inputs > 0 && (!files || targets)) {
        char *where = vr_build_batch_where(b);
        rc = vr_build_expand(b, b->settings->inputs, b->settings->n_inputs,
                             NULL, 0, where, "[batch] inputs", &batch,
                             &n_batch, err);
        free(where);
        if (rc == VSCHED_OK)
            vr_build_dedupe(batch, &n_batch);
    }
    if (rc == VSCHED_OK && w->sweep && n_batch > 0) {
        plain = vr_xrealloc(plain, (n_plain + n_batch) * sizeof *plain);
        for (size_t i = 0; i < n_batch; i++)
            plain[n_plain++] = vr_xstrdup(batch[i]);
    }
    if (w->sweep)
        memset(sel, 1, t->n);
    if (rc == VSCHED_OK)
        rc = expand_targets(b, t, sel, batch, n_batch, &names, &n, err);
    if (rc == VSCHED_OK && n_plain == 0 && t->n == 0) {
        *err = vr_strfmt("%s: no inputs: set [batch] inputs, define a "
                         "[target.NAME] or name FILES",
                         b->settings->path);
        rc = VSCHED_ECONFIG;
    }
    builder bd = {w, vr_strmap_new(n_plain), 0, 0, NULL};
    size_t *order = vr_targets_order(t);
    for (size_t p = 0; rc == VSCHED_OK && p < w->n_base_profiles; p++) {
        const char *prof = w->profiles[p];
        for (size_t i = 0; i < n_plain; i++)
            row_of(&bd, plain[i], prof);
        add_jobs(&bd, t, order, sel, names, n, prof);
    }
    free(order);
    vr_strmap_free(bd.input_ix);
    free(bd.row_at);
    for (size_t i = 0; names != NULL && i < t->n; i++)
        vr_build_inputs_free(names[i], n[i]);
    free(names);
    free(n);
    vr_build_inputs_free(batch, n_batch);
    vr_build_inputs_free(plain, n_plain);
    free(sel);
    if (rc != VSCHED_OK)
        vr_work_free(w);
    return rc;
}

/* Contract: see work.h. */
void vr_work_free(vr_work *w)
{
    vr_build_inputs_free(w->inputs, w->n_inputs);
    vr_build_inputs_free(w->profiles, w->n_profiles);
    for (size_t i = 0; i < w->n_jobs; i++) {
        free(w->jobs[i].rows);
        free(w->jobs[i].libs);
    }
    free(w->jobs);
    free(w->rows);
    memset(w, 0, sizeof *w);
}

/* Contract: see work.h. */
int vr_work_list_targets(const vr_build *b)
{
    static const vr_targets none = {0};
    const vr_targets *t = b->targets != NULL ? b->targets : &none;
    unsigned char *sel = vr_xcalloc(t->n + 1, 1);
    memset(sel, 1, t->n);
    char **batch = NULL, ***names = NULL, *err = NULL;
    size_t n_batch = 0, *n = NULL;
    char *where = vr_build_batch_where(b);
    int rc =
        vr_build_expand(b, b->settings->inputs, b->settings->n_inputs, NULL, 0,
                        where, "[batch] inputs", &batch, &n_batch, &err);
    free(where);
    if (rc == VSCHED_OK) {
        vr_build_dedupe(batch, &n_batch);
        rc = expand_targets(b, t, sel, batch, n_batch, &names, &n, &err);
    }
    for (size_t i = 0; rc == VSCHED_OK && i < t->n; i++) {
        const vr_target *tg = &t->v[i];
        fprintf(b->out, "%s %s %zu input%s", tg->name,
                vr_target_kind_name(tg->kind), n[i], n[i] == 1 ? "" : "s");
        if (tg->n_link_with > 0)
            fputs(" links", b->out);
        for (size_t k = 0; k < tg->n_link_with; k++)
            fprintf(b->out, " %s", t->v[tg->link_with[k]].name);
        fputc('\n', b->out);
    }
    if (rc != VSCHED_OK)
        fprintf(b->err, "vsched-run: %s\n", err);
    free(err);
    for (size_t i = 0; names != NULL && i < t->n; i++)
        vr_build_inputs_free(names[i], n[i]);
    free(names);
    free(n);
    vr_build_inputs_free(batch, n_batch);
    free(sel);
    return rc;
}
