/*
 * plugin_list.c -- what `vsched-run --list-plugins` and
 * `--describe-plugin NAME` print.
 *
 * Listing walks the same places as vr_plugin_open, in the same order: the
 * built-ins of the preloaded table, then each search directory (its ".la"
 * and ".so" files, sorted). Every candidate is opened and checked through
 * plugin_host.c, so a listed plugin is one vr_plugin_open would accept, and
 * one it would reject is listed as unusable with the reason.
 *
 * Reads plugins only through the vr_plugin_* accessors; libltdl is reached
 * only through plugin_host.c (plugin_host_int.h). No lock of its own.
 */
#include "config/plugin_host_int.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vsched/vsched.h>

#include "common/util.h"

/* "loader", "executor", "loader, executor" or "none". Static storage. */
static const char *vr_roles_text(unsigned roles)
{
    unsigned both = VSCHED_ROLE_LOADER | VSCHED_ROLE_EXECUTOR;
    if ((roles & both) == both)
        return "loader, executor";
    if (roles & VSCHED_ROLE_LOADER)
        return "loader";
    if (roles & VSCHED_ROLE_EXECUTOR)
        return "executor";
    return "none";
}

/* One line of the list: "NAME VERSION ROLES ORIGIN  DESCRIPTION". */
static void vr_list_line(FILE *out, const vr_plugin *p)
{
    const vsched_plugin *d = vr_plugin_descriptor(p);
    fprintf(out, "%-14s %-10s %-17s %s  %s\n", d->name,
            d->version != NULL ? d->version : "-", vr_roles_text(d->roles),
            vr_plugin_origin(p), d->description != NULL ? d->description : "");
}

/* Module names (".la"/".so" files) in `dir`, sorted, without duplicates. */
static void vr_dir_modules(vr__strv *mods, const char *dir)
{
    DIR *dp = opendir(dir);
    if (dp == NULL)
        return;
    struct dirent *de;
    while ((de = readdir(dp)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (vr__has_suffix(de->d_name, ".la") ||
            vr__has_suffix(de->d_name, ".so"))
            vr__strv_add_unique(mods, vr__module_name(de->d_name));
    }
    closedir(dp);
    for (size_t i = 1; i < mods->n; i++) /* insertion sort: few entries */
        for (size_t j = i; j > 0 && strcmp(mods->v[j - 1], mods->v[j]) > 0;
             j--) {
            char *t = mods->v[j];
            mods->v[j] = mods->v[j - 1];
            mods->v[j - 1] = t;
        }
}

/* Contract: see plugin_host.h. A name found twice is listed where the
 * search finds it first (later ones are shadowed). A module that cannot be
 * used is listed as "NAME  -  -  FILE  unusable: REASON". Returns 0, or
 * VSCHED_EIO when writing to `out` failed. */
int vr_plugin_list(FILE *out, const vr_config *cfg)
{
    vr__strv seen = {0};
    for (const lt_dlsymlist *s = vr__preloaded(); s != NULL && s->name; s++) {
        if (s->address != NULL || strcmp(s->name, "@PROGRAM@") == 0)
            continue;
        char *mod = vr__module_name(s->name);
        vr_plugin *p = NULL;
        char *err = NULL;
        if (vr_plugin_open(&p, mod, NULL, &err) == 0) {
            vr_list_line(out, p);
            vr_plugin_close(p);
        } else {
            fprintf(out, "%-14s %-10s %-17s %s  unusable: %s\n", mod, "-", "-",
                    "built-in", err);
        }
        free(err);
        vr__strv_add_unique(&seen, mod);
    }
    vr__strv dirs = {0};
    vr__search_dirs(&dirs, cfg);
    for (size_t i = 0; i < dirs.n; i++) {
        vr__strv mods = {0};
        vr_dir_modules(&mods, dirs.v[i]);
        for (size_t j = 0; j < mods.n; j++) {
            size_t before = seen.n;
            vr__strv_add_unique(&seen, vr_xstrdup(mods.v[j]));
            if (seen.n == before)
                continue; /* shadowed */
            char *base = vr_strfmt("%s/%s", dirs.v[i], mods.v[j]);
            vr_plugin *p = NULL;
            char *err = NULL;
            int rc = vr__open_file(&p, base, &err);
            if (rc == 0) {
                vr_list_line(out, p);
                vr_plugin_close(p);
            } else if (rc < 0) {
                char *file = NULL;
                if (!vr__module_file(base, &file))
                    file = vr_xstrdup(base);
                fprintf(out, "%-14s %-10s %-17s %s  unusable: %s\n", mods.v[j],
                        "-", "-", file, err);
                free(file);
            }
            free(err);
            free(base);
        }
        vr__strv_free(&mods);
    }
    vr__strv_free(&dirs);
    vr__strv_free(&seen);
    return ferror(out) ? VSCHED_EIO : 0;
}

static const char *vr_type_name(vsched_key_type t)
{
    switch (t) {
    case VSCHED_KEY_STRING: return "string";
    case VSCHED_KEY_INT: return "int";
    case VSCHED_KEY_BOOL: return "bool";
    case VSCHED_KEY_PATH: return "path";
    case VSCHED_KEY_LIST: return "list";
    }
    return "?";
}

/* One schema key: "  NAME  TYPE  default: V  [range: A..B]  [required]
 * [per-profile]  -- HELP", NAME padded to `width` so the columns line up
 * whatever the longest key. */
static void vr_describe_key(FILE *out, const vsched_key *k, int width)
{
    fprintf(out, "  %-*s %-6s", width, k->name, vr_type_name(k->type));
    if (k->dflt == NULL)
        fputs("  default: none", out);
    else if (k->dflt[0] == '\0')
        fputs("  default: \"\"", out);
    else
        fprintf(out, "  default: %s", k->dflt);
    if (k->type == VSCHED_KEY_INT)
        fprintf(out, "  range: %lld..%lld", k->min, k->max);
    if (k->flags & VSCHED_KEY_REQUIRED)
        fputs("  required", out);
    if (k->flags & VSCHED_KEY_PER_PROFILE)
        fputs("  per-profile", out);
    fprintf(out, "  -- %s\n", k->help != NULL ? k->help : "");
}

/* Contract: see plugin_host.h. Opens `name` as vr_plugin_open does and
 * prints: name, version, origin, description, roles, thread-safety, then
 * one line per key (name, type, default, range for INT, required /
 * per-profile, help). Returns 0, an error of vr_plugin_open (*err set), or
 * VSCHED_EIO when writing failed. */
int vr_plugin_describe(FILE *out, const char *name, const vr_config *cfg,
                       char **err)
{
    vr_plugin *p = NULL;
    int rc = vr_plugin_open(&p, name, cfg, err);
    if (rc != 0)
        return rc;
    const vsched_plugin *d = vr_plugin_descriptor(p);
    fprintf(out, "name:          %s\n", d->name);
    fprintf(out, "version:       %s\n", d->version != NULL ? d->version : "-");
    fprintf(out, "origin:        %s\n", vr_plugin_origin(p));
    fprintf(out, "description:   %s\n",
            d->description != NULL ? d->description : "");
    fprintf(out, "roles:         %s\n", vr_roles_text(d->roles));
    fprintf(out, "thread-safety: %s\n",
            (d->flags & VSCHED_PLUGIN_THREAD_SAFE)
                ? "thread-safe (an instance may be called from several "
                  "threads at once)"
                : "not thread-safe (the host serialises calls into an "
                  "instance)");
    fprintf(out, "keys:%s\n", d->n_schema == 0 ? " none" : "");
    int width = 16;
    for (size_t i = 0; i < d->n_schema; i++) {
        size_t n = d->schema[i].name != NULL ? strlen(d->schema[i].name) : 0;
        if (n > (size_t)width && n < 256)
            width = (int)n;
    }
    for (size_t i = 0; i < d->n_schema; i++)
        vr_describe_key(out, &d->schema[i], width);
    vr_plugin_close(p);
    if (ferror(out)) {
        *err = vr_strfmt("cannot write the description of plugin '%s'", name);
        return VSCHED_EIO;
    }
    return 0;
}
