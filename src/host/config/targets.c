/*
 * targets -- [target.NAME] read, checked and varied; see targets.h.
 */
#include "config/targets.h"

#include <stdlib.h>
#include <string.h>

#include <vsched/plugin.h>
#include <xxhash.h>

#include "common/util.h"
#include "config/schema.h"

static void words_push(char ***v, size_t *n, const char *w)
{
    *v = vr_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = vr_xstrdup(w);
}

/* The blank-separated words of `list` (NULL: none) appended to *v. */
static void words_split(const char *list, char ***v, size_t *n)
{
    char *copy = vr_xstrdup(list != NULL ? list : "");
    char *save = NULL;
    for (char *w = strtok_r(copy, " \t", &save); w != NULL;
         w = strtok_r(NULL, " \t", &save))
        words_push(v, n, w);
    free(copy);
}

static void words_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Contract: see targets.h. */
const char *vr_target_job_kind(vr_target_kind k)
{
    return k == VR_TARGET_STATIC   ? "static"
           : k == VR_TARGET_SHARED ? "shared"
                                   : "link";
}

/* Contract: see targets.h. */
const char *vr_target_kind_name(vr_target_kind k)
{
    return k == VR_TARGET_STATIC   ? "static"
           : k == VR_TARGET_SHARED ? "shared"
                                   : "executable";
}

/* Contract: see targets.h. */
long vr_targets_find(const vr_targets *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i].name, name) == 0)
            return (long)i;
    return -1;
}

/* An error at [section] key; VSCHED_ECONFIG. */
static int target_error(char **err, const vr_config *cfg, const char *section,
                        const char *key, const char *what)
{
    char *where = vr_schema_where(cfg, section, key);
    *err = vr_strfmt("%s%s", where, what);
    free(where);
    return VSCHED_ECONFIG;
}

static void feed(XXH3_state_t *st, const char *s)
{
    XXH3_64bits_update(st, s != NULL ? s : "\x01",
                       s != NULL ? strlen(s) + 1 : 2);
}

/* One [target.NAME] section into t->v[t->n]. */
static int target_read(vr_targets *t, const vr_config *cfg,
                       const char *section, char **err)
{
    const char *name = section + strlen("target.");
    const char *kind = vr_config_get(cfg, section, "kind");
    vr_target tg = {0};
    if (strcmp(kind, "executable") == 0)
        tg.kind = VR_TARGET_EXECUTABLE;
    else if (strcmp(kind, "static") == 0)
        tg.kind = VR_TARGET_STATIC;
    else if (strcmp(kind, "shared") == 0)
        tg.kind = VR_TARGET_SHARED;
    else {
        char *m = vr_strfmt("[%s] kind: expected executable, static or "
                            "shared, got '%s'",
                            section, kind);
        target_error(err, cfg, section, "kind", m);
        free(m);
        return VSCHED_ECONFIG;
    }
    const char *output = vr_config_get(cfg, section, "output");
    if (output != NULL &&
        (output[0] == '\0' || strchr(output, '/') != NULL ||
         strcmp(output, ".") == 0 || strcmp(output, "..") == 0)) {
        char *m = vr_strfmt("[%s] output: expected a file name without "
                            "'/', got '%s'",
                            section, output);
        target_error(err, cfg, section, "output", m);
        free(m);
        return VSCHED_ECONFIG;
    }
    tg.name = vr_xstrdup(name);
    words_split(vr_config_get(cfg, section, "inputs"), &tg.inputs,
                &tg.n_inputs);
    words_split(vr_config_get(cfg, section, "exclude"), &tg.exclude,
                &tg.n_exclude);
    tg.inputs_where = vr_schema_where(cfg, section, "inputs");
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL)
        abort();
    XXH3_64bits_reset(st);
    feed(st, "target");
    feed(st, kind);
    feed(st, output);
    feed(st, vr_config_get(cfg, section, "ldflags"));
    feed(st, vr_config_get(cfg, section, "libs"));
    feed(st, vr_config_get(cfg, section, "link_with"));
    tg.salt = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    t->v = vr_xrealloc(t->v, (t->n + 1) * sizeof *t->v);
    t->v[t->n++] = tg;
    if (tg.n_inputs == 0) {
        char *m = vr_strfmt("[%s] inputs: empty; name the target's sources "
                            "(glob patterns under the loader root)",
                            section);
        target_error(err, cfg, section, "inputs", m);
        free(m);
        return VSCHED_ECONFIG;
    }
    return VSCHED_OK;
}

/* link_with names -> indices. */
static int target_links(vr_targets *t, const vr_config *cfg, size_t i,
                        char **err)
{
    vr_target *tg = &t->v[i];
    char *section = vr_strfmt("target.%s", tg->name);
    char **w = NULL;
    size_t n = 0;
    words_split(vr_config_get(cfg, section, "link_with"), &w, &n);
    int rc = VSCHED_OK;
    tg->link_with = vr_xcalloc(n + 1, sizeof *tg->link_with);
    for (size_t k = 0; k < n && rc == VSCHED_OK; k++) {
        long j = vr_targets_find(t, w[k]);
        char *m = NULL;
        if (j < 0)
            m = vr_strfmt("[%s] link_with: no target '%s'; define "
                          "[target.%s] or remove the name",
                          section, w[k], w[k]);
        else if (t->v[j].kind == VR_TARGET_EXECUTABLE)
            m = vr_strfmt("[%s] link_with: '%s' is an executable; only "
                          "static and shared targets can be linked with",
                          section, w[k]);
        if (m != NULL) {
            rc = target_error(err, cfg, section, "link_with", m);
            free(m);
            break;
        }
        tg->link_with[tg->n_link_with++] = (size_t)j;
    }
    words_free(w, n);
    free(section);
    return rc;
}

/* Depth-first colours for the cycle check. */
enum {
    WHITE,
    GREY,
    BLACK
};

/* 1 when a cycle is reachable from i; *path then names it from *start,
 * the target where it closes. */
static int cycle_from(const vr_targets *t, size_t i, unsigned char *colour,
                      size_t *stack, size_t depth, char **path, size_t *start)
{
    colour[i] = GREY;
    stack[depth] = i;
    for (size_t k = 0; k < t->v[i].n_link_with; k++) {
        size_t j = t->v[i].link_with[k];
        if (colour[j] == GREY) {
            size_t from = 0;
            while (stack[from] != j)
                from++;
            char *s = vr_xstrdup(t->v[j].name);
            for (size_t d = from + 1; d <= depth; d++) {
                char *n = vr_strfmt("%s -> %s", s, t->v[stack[d]].name);
                free(s);
                s = n;
            }
            *path = vr_strfmt("%s -> %s", s, t->v[j].name);
            *start = j;
            free(s);
            return 1;
        }
        if (colour[j] == WHITE &&
            cycle_from(t, j, colour, stack, depth + 1, path, start))
            return 1;
    }
    colour[i] = BLACK;
    return 0;
}

static int target_cycles(const vr_targets *t, const vr_config *cfg, char **err)
{
    unsigned char *colour = vr_xcalloc(t->n + 1, 1);
    size_t *stack = vr_xcalloc(t->n + 1, sizeof *stack);
    char *path = NULL;
    size_t start = 0;
    int rc = VSCHED_OK;
    for (size_t i = 0; i < t->n && path == NULL; i++)
        if (colour[i] == WHITE &&
            cycle_from(t, i, colour, stack, 0, &path, &start)) {
            char *section = vr_strfmt("target.%s", t->v[start].name);
            char *m = vr_strfmt("[%s] link_with: cycle among targets: %s; "
                                "a target cannot link, even indirectly, "
                                "with itself",
                                section, path);
            rc = target_error(err, cfg, section, "link_with", m);
            free(m);
            free(section);
        }
    free(path);
    free(stack);
    free(colour);
    return rc;
}

/* Contract: see targets.h. */
int vr_targets_load(vr_targets *t, const vr_config *cfg, const char *link,
                    char *const *batch_inputs, size_t n_batch_inputs,
                    char **err)
{
    memset(t, 0, sizeof *t);
    *err = NULL;
    size_t ns = 0;
    const char *const *sec = vr_config_sections(cfg, &ns);
    int rc = VSCHED_OK;
    for (size_t i = 0; i < ns && rc == VSCHED_OK; i++)
        if (strncmp(sec[i], "target.", 7) == 0)
            rc = target_read(t, cfg, sec[i], err);
    for (size_t i = 0; i < t->n && rc == VSCHED_OK; i++)
        rc = target_links(t, cfg, i, err);
    if (rc == VSCHED_OK)
        rc = target_cycles(t, cfg, err);
    if (rc == VSCHED_OK && link != NULL) {
        if (vr_targets_find(t, link) >= 0) {
            char *m = vr_strfmt("[batch] link: '%s' is also a [target.%s]; "
                                "name the program in one place",
                                link, link);
            rc = target_error(err, cfg, "batch", "link", m);
            free(m);
        } else {
            vr_target tg = {0};
            tg.name = vr_xstrdup(link);
            tg.implicit = 1;
            tg.inputs_where = vr_schema_where(cfg, "batch", "inputs");
            for (size_t i = 0; i < n_batch_inputs; i++)
                words_push(&tg.inputs, &tg.n_inputs, batch_inputs[i]);
            tg.link_with = vr_xcalloc(1, sizeof *tg.link_with);
            t->v = vr_xrealloc(t->v, (t->n + 1) * sizeof *t->v);
            t->v[t->n++] = tg;
        }
    }
    if (rc != VSCHED_OK)
        vr_targets_free(t);
    return rc;
}

/* The compile flags target i's objects need for `profile`, or NULL when
 * they are the profile's own. Heap string. */
static char *target_cflags(const vr_target *tg, const vr_config *cfg,
                           const char *profile, const char *root)
{
    if (tg->implicit)
        return NULL;
    char *section = vr_strfmt("target.%s", tg->name);
    char *psec = vr_strfmt("profile.%s", profile);
    const char *own = vr_config_get(cfg, section, "cflags");
    const char *base = vr_config_get(cfg, psec, "cflags");
    if (base == NULL)
        base = vr_config_get(cfg, "executor", "cflags");
    char *flags = vr_xstrdup(own != NULL ? own : base != NULL ? base : "");
    int differs = own != NULL && strcmp(own, base != NULL ? base : "") != 0;
    char **w = NULL;
    size_t n = 0;
    words_split(vr_config_get(cfg, section, "defines"), &w, &n);
    for (size_t i = 0; i < n; i++) {
        char *f = vr_strfmt("%s -D%s", flags, w[i]);
        free(flags);
        flags = f;
    }
    differs |= n > 0;
    words_free(w, n);
    w = NULL;
    n = 0;
    words_split(vr_config_get(cfg, section, "include_dirs"), &w, &n);
    for (size_t i = 0; i < n; i++) {
        char *f = vr_strfmt("%s -I%s/%s", flags, root, w[i]);
        free(flags);
        flags = f;
    }
    differs |= n > 0;
    words_free(w, n);
    if (tg->kind == VR_TARGET_SHARED) {
        char *f = vr_strfmt("%s -fPIC", flags);
        free(flags);
        flags = f;
        differs = 1;
    }
    free(section);
    free(psec);
    if (!differs) {
        free(flags);
        return NULL;
    }
    return flags;
}

/* Add [profile.VARIANT] as a copy of [profile.PROFILE] with `cflags`. */
static void add_variant(vr_config *cfg, const char *profile,
                        const char *variant, const char *cflags)
{
    char *psec = vr_strfmt("profile.%s", profile);
    size_t ne = 0, nk = 0;
    const vr_config_entry *e = vr_config_entries(cfg, &ne);
    const size_t *ix = vr_config_section_entries(cfg, psec, &nk);
    char **copies = vr_xcalloc(nk + 1, sizeof *copies);
    size_t nc = 0;
    for (size_t k = 0; k < nk; k++)
        if (strcmp(e[ix[k]].key, "cflags") != 0)
            copies[nc++] = vr_strfmt("profile.%s.%s=%s", variant, e[ix[k]].key,
                                     e[ix[k]].value);
    char *err = NULL;
    for (size_t k = 0; k < nc; k++) { /* entries move: copied first */
        vr_config_set(cfg, copies[k], &err);
        free(err);
        free(copies[k]);
    }
    char *set = vr_strfmt("profile.%s.cflags=%s", variant, cflags);
    vr_config_set(cfg, set, &err);
    free(err);
    free(set);
    free(copies);
    free(psec);
}

/* Contract: see targets.h. */
void vr_targets_vary(vr_targets *t, vr_config *cfg, char *const *profiles,
                     size_t n_profiles, const char *root)
{
    for (size_t p = 0; p < n_profiles; p++)
        words_push(&t->profiles, &t->n_profiles, profiles[p]);
    char **made_flags = NULL;
    size_t n_made = 0;
    for (size_t i = 0; i < t->n; i++)
        t->v[i].variants = vr_xcalloc(n_profiles + 1, sizeof(char *));
    for (size_t p = 0; p < n_profiles; p++) {
        size_t first = t->n_extra;
        for (size_t i = 0; i < t->n; i++) {
            vr_target *tg = &t->v[i];
            char *flags =
                target_cflags(tg, cfg, profiles[p], root != NULL ? root : ".");
            if (flags == NULL) {
                tg->variants[p] = vr_xstrdup(profiles[p]);
                continue;
            }
            size_t k = first;
            while (k < t->n_extra && strcmp(made_flags[k], flags) != 0)
                k++;
            if (k == t->n_extra) {
                char *name = vr_strfmt("%s+%s", profiles[p], tg->name);
                add_variant(cfg, profiles[p], name, flags);
                t->extra =
                    vr_xrealloc(t->extra, (t->n_extra + 1) * sizeof *t->extra);
                t->extra[t->n_extra++] = name;
                made_flags =
                    vr_xrealloc(made_flags, (n_made + 1) * sizeof *made_flags);
                made_flags[n_made++] = vr_xstrdup(flags);
            }
            tg->variants[p] = vr_xstrdup(t->extra[k]);
            free(flags);
        }
    }
    words_free(made_flags, n_made);
}

/* Contract: see targets.h. */
const char *vr_targets_variant(const vr_targets *t, size_t i,
                               const char *profile)
{
    for (size_t p = 0; p < t->n_profiles; p++)
        if (strcmp(t->profiles[p], profile) == 0 && t->v[i].variants != NULL)
            return t->v[i].variants[p];
    return profile;
}

static void order_visit(const vr_targets *t, size_t i, unsigned char *seen,
                        size_t *out, size_t *n)
{
    if (seen[i])
        return;
    seen[i] = 1;
    for (size_t k = 0; k < t->v[i].n_link_with; k++)
        order_visit(t, t->v[i].link_with[k], seen, out, n);
    out[(*n)++] = i;
}

/* Contract: see targets.h. */
size_t *vr_targets_order(const vr_targets *t)
{
    unsigned char *seen = vr_xcalloc(t->n + 1, 1);
    size_t *out = vr_xcalloc(t->n + 1, sizeof *out), n = 0;
    for (size_t i = 0; i < t->n; i++)
        order_visit(t, i, seen, out, &n);
    free(seen);
    return out;
}

static void line_visit(const vr_targets *t, size_t i, size_t **v, size_t *n)
{
    for (size_t k = 0; k < t->v[i].n_link_with; k++) {
        size_t j = t->v[i].link_with[k];
        *v = vr_xrealloc(*v, (*n + 1) * sizeof **v);
        (*v)[(*n)++] = j;
        line_visit(t, j, v, n);
    }
}

/* Contract: see targets.h. Duplicates keep their last place, so each
 * library comes after every library that needs it. */
size_t *vr_targets_link_line(const vr_targets *t, size_t i, size_t *n)
{
    size_t *v = NULL, m = 0;
    line_visit(t, i, &v, &m);
    size_t out = 0;
    for (size_t a = 0; a < m; a++) {
        int later = 0;
        for (size_t b = a + 1; b < m && !later; b++)
            later = v[b] == v[a];
        if (!later)
            v[out++] = v[a];
    }
    *n = out;
    if (v == NULL)
        v = vr_xcalloc(1, sizeof *v);
    return v;
}

/* Contract: see targets.h. */
void vr_targets_free(vr_targets *t)
{
    for (size_t i = 0; i < t->n; i++) {
        vr_target *tg = &t->v[i];
        free(tg->name);
        words_free(tg->inputs, tg->n_inputs);
        words_free(tg->exclude, tg->n_exclude);
        free(tg->inputs_where);
        free(tg->link_with);
        for (size_t p = 0; tg->variants != NULL && p < t->n_profiles; p++)
            free(tg->variants[p]);
        free(tg->variants);
    }
    free(t->v);
    words_free(t->profiles, t->n_profiles);
    words_free(t->extra, t->n_extra);
    memset(t, 0, sizeof *t);
}
