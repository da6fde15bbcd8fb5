/*
 * plugin_config.c -- the ABI 1.1 half of the vsched_config handed to
 * create(): the host's version, the profile list, typed getters with the
 * [profile.NAME] fallback, and blame (which key create()'s error is
 * about).
 *
 * Everything reads the instance's snapshot through cfg->get (see
 * plugin_instance.c), so a typed value is exactly the text the plugin
 * would read itself. The one thing written after create() is the cache of
 * split lists, guarded by vr__cfgx.lock, so the getters stay callable
 * from any thread until destroy(), as the ABI says.
 */
#include "config/plugin_host_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "config/schema.h"
#include <vsched/vsched.h>

/* One split list, kept until destroy (get_list hands out borrowed
 * words). */
typedef struct vr_words {
    char *section, *key;
    char *buf; /* the words, NUL-separated */
    const char **v;
    size_t n;
    struct vr_words *next;
} vr_words;

/* The value get_* reads: [profile.PROFILE] KEY when set and non-empty,
 * else the plugin's own section's. Sets *section to where it came from. */
static const char *vr_lookup(const vsched_config *cfg, const char *profile,
                             const char *key, const char **section)
{
    vr__cfgx *x = vr__instance_cfgx(cfg);
    if (key == NULL)
        return NULL;
    if (profile != NULL) {
        free(x->scratch);
        x->scratch = vr_strfmt("profile.%s", profile);
        const char *v = cfg->get(cfg, x->scratch, key);
        if (v != NULL && v[0] != '\0') {
            *section = x->scratch;
            return v;
        }
    }
    *section = cfg->section;
    return cfg->get(cfg, cfg->section, key);
}

static int vr_get_str(const vsched_config *cfg, const char *profile,
                      const char *key, const char **out)
{
    vr__cfgx *x = vr__instance_cfgx(cfg);
    const char *section;
    pthread_mutex_lock(&x->lock);
    const char *v = vr_lookup(cfg, profile, key, &section);
    pthread_mutex_unlock(&x->lock);
    if (v == NULL || v[0] == '\0')
        return VSCHED_ENOENT;
    *out = v;
    return VSCHED_OK;
}

static int vr_get_int(const vsched_config *cfg, const char *profile,
                      const char *key, long long *out)
{
    const char *v;
    int rc = vr_get_str(cfg, profile, key, &v);
    if (rc != VSCHED_OK)
        return rc;
    long long n;
    if (vr_schema_parse_int(v, &n) != 0)
        return VSCHED_ECONFIG;
    *out = n;
    return VSCHED_OK;
}

static int vr_get_bool(const vsched_config *cfg, const char *profile,
                       const char *key, int *out)
{
    const char *v;
    int rc = vr_get_str(cfg, profile, key, &v);
    if (rc != VSCHED_OK)
        return rc;
    int b = vr_schema_bool(v);
    if (b < 0)
        return VSCHED_ECONFIG;
    *out = b;
    return VSCHED_OK;
}

/* Split v at whitespace into a new vr_words. */
static vr_words *vr_split(const char *section, const char *key, const char *v)
{
    vr_words *w = vr_xcalloc(1, sizeof *w);
    w->section = vr_xstrdup(section);
    w->key = vr_xstrdup(key);
    w->buf = vr_xstrdup(v);
    size_t cap = 0;
    for (char *p = w->buf; *p != '\0';) {
        while (isspace((unsigned char)*p))
            *p++ = '\0';
        if (*p == '\0')
            break;
        if (w->n == cap) {
            cap = cap ? 2 * cap : 8;
            w->v = vr_xrealloc(w->v, cap * sizeof *w->v);
        }
        w->v[w->n++] = p;
        while (*p != '\0' && !isspace((unsigned char)*p))
            p++;
    }
    return w;
}

static int vr_get_list(const vsched_config *cfg, const char *profile,
                       const char *key, const char *const **words, size_t *n)
{
    vr__cfgx *x = vr__instance_cfgx(cfg);
    const char *section;
    int rc = VSCHED_ENOENT;
    pthread_mutex_lock(&x->lock);
    const char *v = vr_lookup(cfg, profile, key, &section);
    if (v != NULL) {
        vr_words *w = x->lists;
        while (w != NULL &&
               (strcmp(w->section, section) != 0 || strcmp(w->key, key) != 0))
            w = w->next;
        if (w == NULL) {
            w = vr_split(section, key, v);
            w->next = x->lists;
            x->lists = w;
        }
        if (w->n > 0) {
            *words = w->v;
            *n = w->n;
            rc = VSCHED_OK;
        }
    }
    pthread_mutex_unlock(&x->lock);
    return rc;
}

static void vr_blame(const vsched_config *cfg, const char *section,
                     const char *key)
{
    vr__cfgx *x = vr__instance_cfgx(cfg);
    pthread_mutex_lock(&x->lock);
    free(x->blame_section);
    free(x->blame_key);
    x->blame_section = vr_xstrdup(section != NULL ? section : cfg->section);
    x->blame_key = key != NULL ? vr_xstrdup(key) : NULL;
    pthread_mutex_unlock(&x->lock);
}

/* Contract: see plugin_host_int.h. */
void vr__cfgx_init(vsched_config *c, vr__cfgx *x, const vr_config *cfg)
{
    memset(x, 0, sizeof *x);
    pthread_mutex_init(&x->lock, NULL);
    size_t n = 0;
    const char *const *sections = vr_config_sections(cfg, &n);
    x->profiles = vr_xcalloc(n + 1, sizeof *x->profiles);
    for (size_t i = 0; i < n; i++)
        if (strncmp(sections[i], "profile.", 8) == 0)
            x->profiles[x->n_profiles++] = vr_xstrdup(sections[i] + 8);
    c->host_abi_major = VSCHED_PLUGIN_ABI_MAJOR;
    c->host_abi_minor = VSCHED_PLUGIN_ABI_MINOR;
    c->host_version = VSCHED_VERSION_STRING;
    c->profiles = (const char *const *)x->profiles;
    c->n_profiles = x->n_profiles;
    c->get_str = vr_get_str;
    c->get_int = vr_get_int;
    c->get_bool = vr_get_bool;
    c->get_list = vr_get_list;
    c->blame = vr_blame;
}

/* Contract: see plugin_host_int.h. */
void vr__cfgx_free(vr__cfgx *x)
{
    for (size_t i = 0; i < x->n_profiles; i++)
        free(x->profiles[i]);
    free(x->profiles);
    while (x->lists != NULL) {
        vr_words *w = x->lists;
        x->lists = w->next;
        free(w->section);
        free(w->key);
        free(w->buf);
        free(w->v);
        free(w);
    }
    free(x->blame_section);
    free(x->blame_key);
    free(x->scratch);
    pthread_mutex_destroy(&x->lock);
}
