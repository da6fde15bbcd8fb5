/*
 * settings -- the host's keys validated and converted once; see
 * settings.h.
 */
#include "config/settings.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <vsched/plugin.h>

#include "common/util.h"
#include "config/schema.h"

/* Contract: see settings.h. */
int vr_settings_parse_size(const char *text, uint64_t *bytes)
{
    char *end = NULL;
    errno = 0;
    if (text == NULL || text[0] < '0' || text[0] > '9')
        return VSCHED_EINVAL;
    unsigned long long v = strtoull(text, &end, 10);
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'k':
    case 'K': shift = 10; break;
    case 'm':
    case 'M': shift = 20; break;
    case 'g':
    case 'G': shift = 30; break;
    case 't':
    case 'T': shift = 40; break;
    default: return VSCHED_EINVAL;
    }
    if (*end != '\0' && end[1] != '\0')
        return VSCHED_EINVAL;
    if (errno == ERANGE || (shift > 0 && v > (~0ull >> shift)))
        return VSCHED_EINVAL;
    *bytes = (uint64_t)v << shift;
    return VSCHED_OK;
}

/* A copy of `s`, or NULL for NULL. */
static char *vr_dup_or_null(const char *s)
{
    return s != NULL ? vr_xstrdup(s) : NULL;
}

/* The words of `list` (blanks separate them) appended to *v. */
static void vr_split_words(const char *list, char ***v, size_t *n)
{
    char *copy = vr_xstrdup(list);
    char *save = NULL;
    for (char *w = strtok_r(copy, " \t", &save); w != NULL;
         w = strtok_r(NULL, " \t", &save)) {
        *v = vr_xrealloc(*v, (*n + 1) * sizeof **v);
        (*v)[(*n)++] = vr_xstrdup(w);
    }
    free(copy);
}

static void vr_free_words(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* [vsched]: the pool sizes, the inbox and ready bounds, STATE_DIR. */
static void vr_read_vsched(vr_settings *s, const vr_config *cfg)
{
    const char *dir = vr_config_dir(cfg);
    s->cpu_threads = (unsigned)vr_schema_int(cfg, "vsched", "cpu_threads", 0);
    s->io_threads = (unsigned)vr_schema_int(cfg, "vsched", "io_threads", 2);
    s->coordinator_threads =
        (unsigned)vr_schema_int(cfg, "vsched", "coordinator_threads", 2);
    s->inbox_capacity =
        (size_t)vr_schema_int(cfg, "vsched", "inbox_capacity", 1024);
    s->ready_capacity =
        (size_t)vr_schema_int(cfg, "vsched", "ready_capacity", 64);
    const char *sd = vr_config_get(cfg, "vsched", "state_dir");
    s->state_dir =
        vr_path_join(dir, sd != NULL && sd[0] != '\0' ? sd : ".vsched");
}

/* [loader] and [executor]: the plugin names and the loader's root. */
static void vr_read_plugins(vr_settings *s, const vr_config *cfg)
{
    s->loader_plugin = vr_dup_or_null(vr_config_get(cfg, "loader", "plugin"));
    s->executor_plugin =
        vr_dup_or_null(vr_config_get(cfg, "executor", "plugin"));
    s->executor_isolate =
        vr_schema_bool(vr_config_get(cfg, "executor", "isolate")) == 1;
    s->isolate_timeout =
        (long)vr_schema_int(cfg, "executor", "isolate_timeout", 0);
    const char *out = vr_config_get(cfg, "executor", "out_dir");
    if (out != NULL && out[0] != '\0')
        s->out_dir = vr_path_join(vr_config_dir(cfg), out);
    const char *root = vr_config_get(cfg, "loader", "root");
    if (root != NULL) {
        s->loader_root = vr_path_join(vr_config_dir(cfg), root);
        s->loader_root_empty = root[0] == '\0';
    }
}

/* [batch]: inputs, profiles (default release), link, keep_going. */
static void vr_read_batch(vr_settings *s, const vr_config *cfg)
{
    const char *inputs = vr_config_get(cfg, "batch", "inputs");
    vr_split_words(inputs != NULL ? inputs : "", &s->inputs, &s->n_inputs);
    s->inputs_line = vr_config_line(cfg, "batch", "inputs");
    s->inputs_from_set = vr_config_from_set(cfg, "batch", "inputs");
    const char *profiles = vr_config_get(cfg, "batch", "profiles");
    vr_split_words(profiles != NULL ? profiles : "release", &s->profiles,
                   &s->n_profiles);
    if (s->n_profiles == 0)
        vr_split_words("release", &s->profiles, &s->n_profiles);
    const char *link = vr_config_get(cfg, "batch", "link");
    if (link != NULL && link[0] != '\0')
        s->link = vr_xstrdup(link);
    s->keep_going = (long)vr_schema_int(cfg, "batch", "keep_going", 1);
}

/* [watch]: the settle window and the polling interval of --watch. */
static void vr_read_watch(vr_settings *s, const vr_config *cfg)
{
    s->watch_settle_ms = (unsigned)vr_schema_int(cfg, "watch", "settle_ms", 5);
    s->watch_poll_ms =
        (unsigned)vr_schema_int(cfg, "watch", "poll_interval_ms", 500);
}

/* [cache]: max_size (the one value the schema leaves a string) and the
 * directory, STATE_DIR/cache by default; none when max_size is 0. */
static int vr_read_cache(vr_settings *s, const vr_config *cfg, char **err)
{
    const char *ms = vr_config_get(cfg, "cache", "max_size");
    s->cache_max_bytes = 2ull << 30;
    if (ms != NULL &&
        vr_settings_parse_size(ms, &s->cache_max_bytes) != VSCHED_OK) {
        unsigned line = vr_config_line(cfg, "cache", "max_size");
        *err = vr_config_from_set(cfg, "cache", "max_size")
                   ? vr_strfmt("--set: [cache] max_size: expected a size "
                               "such as 2G, 512M, 100K or 0, got '%s'",
                               ms)
                   : vr_strfmt("%s:%u: [cache] max_size: expected a size "
                               "such as 2G, 512M, 100K or 0, got '%s'",
                               vr_config_path(cfg), line, ms);
        return VSCHED_ECONFIG;
    }
    if (s->cache_max_bytes == 0)
        return VSCHED_OK;
    const char *cd = vr_config_get(cfg, "cache", "dir");
    s->cache_dir = cd != NULL && cd[0] != '\0'
                       ? vr_path_join(vr_config_dir(cfg), cd)
                       : vr_path_join(s->state_dir, "cache");
    return VSCHED_OK;
}

/* [resource.NAME] capacity, in file order. */
static void vr_read_resources(vr_settings *s, const vr_config *cfg)
{
    size_t n_sec = 0;
    const char *const *sec = vr_config_sections(cfg, &n_sec);
    for (size_t i = 0; i < n_sec; i++) {
        if (strncmp(sec[i], "resource.", 9) != 0)
            continue;
        s->resources = vr_xrealloc(s->resources, (s->n_resources + 1) *
                                                     sizeof *s->resources);
        vr_resource_setting *r = &s->resources[s->n_resources++];
        r->name = vr_xstrdup(sec[i] + 9);
        r->capacity = (unsigned)vr_schema_int(cfg, sec[i], "capacity", 1);
    }
}

/* Contract: see settings.h. */
int vr_settings_load(vr_settings *s, const vr_config *cfg, char **err)
{
    memset(s, 0, sizeof *s);
    *err = NULL;
    if (vr_schema_validate_host(cfg, err) != VSCHED_OK)
        return VSCHED_ECONFIG;
    s->path = vr_xstrdup(vr_config_path(cfg));
    vr_read_vsched(s, cfg);
    vr_read_plugins(s, cfg);
    vr_read_batch(s, cfg);
    vr_read_watch(s, cfg);
    if (vr_read_cache(s, cfg, err) != VSCHED_OK) {
        vr_settings_free(s);
        return VSCHED_ECONFIG;
    }
    vr_read_resources(s, cfg);
    return VSCHED_OK;
}

/* Contract: see settings.h. */
void vr_settings_free(vr_settings *s)
{
    free(s->path);
    free(s->state_dir);
    free(s->loader_plugin);
    free(s->executor_plugin);
    free(s->loader_root);
    vr_free_words(s->inputs, s->n_inputs);
    vr_free_words(s->profiles, s->n_profiles);
    free(s->link);
    free(s->cache_dir);
    free(s->out_dir);
    for (size_t i = 0; i < s->n_resources; i++)
        free(s->resources[i].name);
    free(s->resources);
    memset(s, 0, sizeof *s);
}
