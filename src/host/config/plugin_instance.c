/*
 * plugin_instance.c -- instances of an open plugin, and the configuration
 * each is created with.
 *
 * vr_plugin_instantiate validates the plugin's INI section (and, for an
 * executor, every [profile.*] section) against the plugin's schema, then
 * calls create() with a vsched_config that reads from a snapshot taken
 * here: the plugin's own section with schema defaults filled in, PATH
 * values made absolute against the INI's directory, and every other value
 * as configured. The snapshot belongs to the instance record and lives
 * until vr_plugin_destroy_instance, whatever happens to the vr_config.
 *
 * Also here: the host's vsched_ctx, given to create() and to tools.
 *
 * No lock: an instance is made and destroyed on the thread that owns its
 * vr_plugin (see struct vr_plugin in plugin_host_int.h). Nothing here
 * calls libltdl.
 */
#include "config/plugin_host_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vsched/vsched.h>

#include "common/escape.h"
#include "common/util.h"
#include "config/schema.h"

/* One value of a vsched_config, owned by the instance record. */
typedef struct vr_kv {
    char *section;
    char *key;
    char *value; /* NULL: unset and without default */
} vr_kv;

/* What the host keeps per instance: the configuration handed to create(),
 * a snapshot of every value (so the plugin may read it until destroy,
 * whatever happens to the vr_config), with defaults filled in and PATH
 * values made absolute. */
typedef struct vr__instance {
    void *inst;
    vsched_config cfg;
    char *section;
    char *config_dir;
    vr_kv *kv;
    size_t n_kv, cap_kv;
    vr__cfgx x; /* the 1.1 members of cfg (plugin_config.c) */
    struct vr__instance *next;
} vr_instance;

/* ------------------------------------------------------------------------
 * Host context.
 */

static int vr_ctx_is_cancelled(const vsched_ctx *ctx)
{
    return 0;
}

static const char *vr_sev_name(vsched_severity sev)
{
    return sev == VSCHED_SEV_ERROR     ? "error"
           : sev == VSCHED_SEV_WARNING ? "warning"
                                       : "note";
}

/* "SEVERITY: plugin 'NAME': FILE:LINE: MESSAGE" on stderr; ctx->host is
 * the plugin's label, or NULL for the process-wide context. */
static void vr_ctx_diag(const vsched_ctx *ctx, vsched_severity sev,
                        const char *file, unsigned line, const char *message)
{
    const char *label = ctx->host;
    char *who =
        label != NULL ? vr_strfmt("plugin '%s'", label) : vr_xstrdup("plugin");
    if (message == NULL)
        message = "";
    /* A plugin's words may repeat a name: escaped, as every name is. */
    vr_esc ew = {0}, ef = {0}, em = {0};
    const char *w = vr_esc_name(&ew, who), *m = vr_esc_name(&em, message);
    if (file != NULL && line != 0)
        fprintf(stderr, "%s: %s: %s:%u: %s\n", vr_sev_name(sev), w,
                vr_esc_name(&ef, file), line, m);
    else if (file != NULL)
        fprintf(stderr, "%s: %s: %s: %s\n", vr_sev_name(sev), w,
                vr_esc_name(&ef, file), m);
    else
        fprintf(stderr, "%s: %s: %s\n", vr_sev_name(sev), w, m);
    vr_esc_done(&ew);
    vr_esc_done(&ef);
    vr_esc_done(&em);
    free(who);
}

static void *vr_ctx_alloc(const vsched_ctx *ctx, size_t size)
{
    return malloc(size);
}

static void *vr_ctx_realloc(const vsched_ctx *ctx, void *ptr, size_t size)
{
    return realloc(ptr, size);
}

static void vr_ctx_free(const vsched_ctx *ctx, void *ptr)
{
    free(ptr);
}

static const vsched_ctx vr_host_ctx = {
    .size = sizeof(vsched_ctx),
    .is_cancelled = vr_ctx_is_cancelled,
    .diag = vr_ctx_diag,
    .alloc = vr_ctx_alloc,
    .realloc = vr_ctx_realloc,
    .free = vr_ctx_free,
    .host = NULL,
};

/* Contract: a process-wide context whose alloc/realloc/free are malloc,
 * realloc and free, is_cancelled always 0, load/realpath NULL (no loader
 * here), and diag writes "SEVERITY: plugin: FILE:LINE: MESSAGE" to
 * stderr (create() gets a copy naming the plugin). Static storage;
 * thread-safe. */
const vsched_ctx *vr_plugin_host_ctx(void)
{
    return &vr_host_ctx;
}

/* ------------------------------------------------------------------------
 * Instances and their configuration.
 */

static void vr_instance_put(vr_instance *w, const char *section,
                            const char *key, char *value)
{
    if (w->n_kv == w->cap_kv) {
        w->cap_kv = w->cap_kv ? 2 * w->cap_kv : 16;
        w->kv = vr_xrealloc(w->kv, w->cap_kv * sizeof *w->kv);
    }
    vr_kv *kv = &w->kv[w->n_kv++];
    kv->section = vr_xstrdup(section);
    kv->key = vr_xstrdup(key);
    kv->value = value;
}

static const vr_kv *vr_instance_find(const vr_instance *w, const char *section,
                                     const char *key)
{
    for (size_t i = 0; i < w->n_kv; i++)
        if (strcmp(w->kv[i].section, section) == 0 &&
            strcmp(w->kv[i].key, key) == 0)
            return &w->kv[i];
    return NULL;
}

static void vr_instance_free(vr_instance *w)
{
    for (size_t i = 0; i < w->n_kv; i++) {
        free(w->kv[i].section);
        free(w->kv[i].key);
        free(w->kv[i].value);
    }
    free(w->kv);
    free(w->section);
    free(w->config_dir);
    vr__cfgx_free(&w->x);
    free(w);
}

/* Contract: see plugin_host_int.h. */
vr__cfgx *vr__instance_cfgx(const vsched_config *cfg)
{
    return &((vr_instance *)cfg->host)->x;
}

/* vsched_config.get: every value was resolved when the instance was made. */
static const char *vr_config_cb_get(const vsched_config *cfg,
                                    const char *section, const char *key)
{
    const vr_instance *w = cfg->host;
    if (section == NULL || key == NULL)
        return NULL;
    const vr_kv *kv = vr_instance_find(w, section, key);
    return kv != NULL ? kv->value : NULL;
}

/* A heap copy of `value`, made absolute against `dir` when the key is a
 * PATH (an empty value stays empty: "unset"). */
static char *vr_resolve(const vsched_key *k, const char *value,
                        const char *dir)
{
    if (value == NULL)
        return NULL;
    if (k != NULL && k->type == VSCHED_KEY_PATH && value[0] != '\0') {
        char *abs = vr_path_join(dir, value);
        if (abs != NULL)
            return abs;
    }
    return vr_xstrdup(value);
}

static const vsched_key *vr_schema_key(const vsched_plugin *d, const char *key)
{
    for (size_t i = 0; i < d->n_schema; i++)
        if (strcmp(d->schema[i].name, key) == 0)
            return &d->schema[i];
    return NULL;
}

static int vr_is_profile_section(const char *section)
{
    return strncmp(section, "profile.", strlen("profile.")) == 0;
}

/* Snapshot cfg for one instance: the plugin's own section with schema
 * defaults filled in, PATH keys of it and of [profile.*] made absolute,
 * then every other value as configured. */
static vr_instance *vr_instance_new(const vsched_plugin *d,
                                    const vr_config *cfg, const char *section)
{
    vr_instance *w = vr_xcalloc(1, sizeof *w);
    const char *dir = vr_config_dir(cfg);
    w->section = vr_xstrdup(section);
    w->config_dir = vr_xstrdup(dir != NULL ? dir : "/");

    for (size_t i = 0; i < d->n_schema; i++) {
        const vsched_key *k = &d->schema[i];
        const char *v = vr_config_get(cfg, section, k->name);
        vr_instance_put(w, section, k->name,
                        vr_resolve(k, v != NULL ? v : k->dflt, w->config_dir));
    }
    size_t n = 0;
    const vr_config_entry *e = vr_config_entries(cfg, &n);
    for (size_t i = 0; i < n; i++) {
        if (vr_instance_find(w, e[i].section, e[i].key) != NULL)
            continue;
        const vsched_key *k = vr_is_profile_section(e[i].section)
                                  ? vr_schema_key(d, e[i].key)
                                  : NULL;
        const char *v = vr_config_get(cfg, e[i].section, e[i].key);
        vr_instance_put(
            w, e[i].section, e[i].key,
            vr_resolve(k, v != NULL ? v : e[i].value, w->config_dir));
    }

    w->cfg.size = sizeof(vsched_config);
    w->cfg.section = w->section;
    w->cfg.get = vr_config_cb_get;
    w->cfg.config_dir = w->config_dir;
    w->cfg.host = w;
    vr__cfgx_init(&w->cfg, &w->x, cfg);
    return w;
}

/* Schema validation of the plugin's section, and for an executor of every
 * [profile.*] section (per-profile keys only). */
static int vr_validate(const vr_plugin *p, unsigned role, const vr_config *cfg,
                       const char *section, char **err)
{
    const vsched_plugin *d = p->desc;
    /* The host's keys of the section: `plugin`, and for an executor
     * [executor] isolate and isolate_timeout (schema.c). */
    static const char *const ignore[] = {"plugin", NULL};
    static const char *const ignore_x[] = {"plugin", "isolate",
                                           "isolate_timeout", NULL};
    int rc = vr_schema_validate(
        cfg, section, d->schema, d->n_schema,
        role == VSCHED_ROLE_EXECUTOR ? ignore_x : ignore, 0, err);
    if (rc != 0 || role != VSCHED_ROLE_EXECUTOR)
        return rc;
    size_t n = 0;
    const char *const *sections = vr_config_sections(cfg, &n);
    for (size_t i = 0; i < n && rc == 0; i++)
        if (vr_is_profile_section(sections[i]))
            rc = vr_schema_validate(cfg, sections[i], d->schema, d->n_schema,
                                    NULL, 1, err);
    return rc;
}

/* Where a create() message points: a message naming a key as "[SECTION]
 * KEY: ..." (optionally after "NAME: ", the plugin's name) is about that
 * key, and gets its "FILE:LINE: " (or "--set: ") when the file sets it.
 * Heap string, "" when the message names no key that is set. */
static char *vr_create_where(const vr_config *cfg, const char *plugin,
                             const char *msg)
{
    size_t n = strlen(plugin);
    if (strncmp(msg, plugin, n) == 0 && strncmp(msg + n, ": ", 2) == 0)
        msg += n + 2;
    const char *close = msg[0] == '[' ? strchr(msg, ']') : NULL;
    if (close == NULL || close[1] != ' ')
        return vr_xstrdup("");
    const char *key = close + 2;
    size_t klen = strspn(key, "abcdefghijklmnopqrstuvwxyz"
                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-");
    if (klen == 0 || key[klen] != ':')
        return vr_xstrdup("");
    char *section = vr_strfmt("%.*s", (int)(close - msg - 1), msg + 1);
    char *k = vr_strfmt("%.*s", (int)klen, key);
    char *where = vr_config_get(cfg, section, k) != NULL
                      ? vr_schema_where(cfg, section, k)
                      : vr_xstrdup("");
    free(section);
    free(k);
    return where;
}

/* Contract: see plugin_host.h. cfg must not be NULL; the instance does not
 * borrow it (the values the plugin reads are copied and live until
 * vr_plugin_destroy_instance). Errors, *err set (caller frees):
 * VSCHED_EINVAL role not provided ("plugin 'fs' does not provide role
 * executor"); VSCHED_ECONFIG schema ("FILE:LINE: ..."), create() not
 * called; VSCHED_EERR create() failed ("plugin 'cc': cannot create
 * executor: <plugin message>", after the FILE:LINE of the key the message
 * names, see vr_create_where). Calls create() on the calling thread. */
int vr_plugin_instantiate(vr_plugin *p, unsigned role, const vr_config *cfg,
                          const char *section, void **inst, char **err)
{
    *inst = NULL;
    *err = NULL;
    const vsched_plugin *d = p->desc;
    if ((role != VSCHED_ROLE_LOADER && role != VSCHED_ROLE_EXECUTOR) ||
        (d->roles & role) == 0) {
        *err = vr_strfmt("plugin '%s' does not provide role %s", p->label,
                         vr__role_name(role));
        return VSCHED_EINVAL;
    }
    int rc = vr_validate(p, role, cfg, section, err);
    if (rc != 0)
        return rc;

    vr_instance *w = vr_instance_new(d, cfg, section);
    char *errmsg = NULL;
    void *made = NULL;
    /* The host context, its diagnostics tagged with the plugin. */
    vsched_ctx own = *vr_plugin_host_ctx();
    own.host = p->label;
    const vsched_ctx *ctx = &own;
    rc = d->create(ctx, &w->cfg, &made, &errmsg);
    if (rc != 0) {
        const char *why = errmsg != NULL && errmsg[0] != '\0'
                              ? errmsg
                              : vsched_strerror(rc < 0 ? rc : VSCHED_EERR);
        char *where =
            w->x.blame_section != NULL && w->x.blame_key != NULL &&
                    vr_config_get(cfg, w->x.blame_section, w->x.blame_key) !=
                        NULL
                ? vr_schema_where(cfg, w->x.blame_section, w->x.blame_key)
                : vr_create_where(cfg, d->name, why);
        *err = vr_strfmt("%splugin '%s': cannot create %s: %s", where,
                         p->label, vr__role_name(role), why);
        free(where);
        ctx->free(ctx, errmsg);
        vr_instance_free(w);
        return VSCHED_EERR;
    }
    ctx->free(ctx, errmsg); /* a message with success is ignored */
    w->inst = made;
    w->next = p->instances;
    p->instances = w;
    *inst = made;
    return 0;
}

/* Contract: calls the plugin's destroy() on an instance made by
 * vr_plugin_instantiate and frees the configuration it was given. An
 * instance not (or no longer) known to p is ignored, so a double destroy
 * is harmless. */
void vr_plugin_destroy_instance(vr_plugin *p, void *inst)
{
    for (vr_instance **wp = &p->instances; *wp != NULL; wp = &(*wp)->next) {
        vr_instance *w = *wp;
        if (w->inst == inst) {
            *wp = w->next;
            p->desc->destroy(inst);
            vr_instance_free(w);
            return;
        }
    }
}

/* Contract: see plugin_host_int.h. Called by vr_plugin_close; newest
 * instance first, like repeated vr_plugin_destroy_instance calls. */
void vr__destroy_instances(vr_plugin *p)
{
    while (p->instances != NULL)
        vr_plugin_destroy_instance(p, p->instances->inst);
}
