/*
 * schema.c -- checking INI sections against vsched_key tables.
 *
 * One checker for the host's sections and every plugin's. Each error is the
 * first one found, in file order: first unknown or ill-typed keys, then
 * missing required keys. A message points at the key's line, at the
 * section header for a missing key, at no line for a missing section, and
 * says "--set" for a value that came from the command line.
 *
 * VSCHED_KEY_INT with min == max == 0 means "no range" (a table that leaves
 * the range out); any other pair is an inclusive range.
 */
#include "config/schema.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"

/* ---- host key tables ------------------------------------------------- */

#define VR_INT(name, dflt, lo, hi, flags, help)                               \
    {                                                                         \
        name, VSCHED_KEY_INT, dflt, help, lo, hi, flags                       \
    }
#define VR_KEY(name, type, dflt, flags, help)                                 \
    {                                                                         \
        name, type, dflt, help, 0, 0, flags                                   \
    }

const vsched_key vr_schema_vsched[] = {
    VR_INT("cpu_threads", "0", 0, 1024, 0,
           "CPU stage threads; 0 = online CPUs"),
    VR_INT("io_threads", "2", 1, 256, 0, "I/O stage threads"),
    VR_INT("coordinator_threads", "2", 1, 256, 0,
           "threads running batch fan-out and coordination"),
    VR_KEY("state_dir", VSCHED_KEY_PATH, ".vsched", 0,
           "incremental state directory, relative to the INI file"),
    VR_KEY("plugin_path", VSCHED_KEY_STRING, NULL, 0,
           "extra plugin directories (separated by blanks or ':'), "
           "relative to the INI file"),
    VR_INT("inbox_capacity", "1024", 1, 1048576, 0,
           "capacity of the scheduler's inbox queue"),
    VR_INT("ready_capacity", "64", 1, 1048576, 0,
           "bound of the job graph's ready queue (jobs not yet started)"),
};
const size_t vr_schema_vsched_n =
    sizeof vr_schema_vsched / sizeof vr_schema_vsched[0];

/* The host's keys of [executor] (the rest of it is the plugin's). */
const vsched_key vr_schema_executor[] = {
    VR_KEY("isolate", VSCHED_KEY_BOOL, "false", 0,
           "run the executor's calls in worker processes: a crash, abort or "
           "hang fails one file, not the run"),
    VR_INT("isolate_timeout", "0", 0, 604800, 0,
           "with isolate: seconds before a call's worker is killed (0: the "
           "executor's own timeout plus 1 s, else none)"),
};
const size_t vr_schema_executor_n =
    sizeof vr_schema_executor / sizeof vr_schema_executor[0];

const vsched_key vr_schema_batch[] = {
    VR_KEY("inputs", VSCHED_KEY_LIST, NULL, VSCHED_KEY_REQUIRED,
           "glob patterns of the sources, relative to the loader root"),
    VR_KEY("profiles", VSCHED_KEY_LIST, "release", 0,
           "profiles to build; each may have a [profile.NAME] section"),
    VR_KEY("link", VSCHED_KEY_STRING, NULL, 0,
           "name of the program linked after every object (a graph job)"),
    VR_INT("keep_going", "1", 0, 1000000, 0,
           "stop after N failures, 0 = never stop"),
};
const size_t vr_schema_batch_n =
    sizeof vr_schema_batch / sizeof vr_schema_batch[0];

const vsched_key vr_schema_cache[] = {
    VR_KEY("dir", VSCHED_KEY_PATH, NULL, 0,
           "artifact cache directory, relative to the INI file (default: "
           "STATE_DIR/cache)"),
    VR_KEY("max_size", VSCHED_KEY_STRING, "2G", 0,
           "largest size of the cache (K, M, G, T: powers of 1024); 0 "
           "turns the cache off"),
};
const size_t vr_schema_cache_n =
    sizeof vr_schema_cache / sizeof vr_schema_cache[0];

const vsched_key vr_schema_watch[] = {
    VR_INT("settle_ms", "5", 0, 10000, 0,
           "--watch: quiet time after the last change before a rebuild "
           "starts (a burst of saves is one rebuild)"),
    VR_INT("poll_interval_ms", "500", 10, 60000, 0,
           "--watch: how often the tree is scanned when inotify cannot "
           "watch it (max_user_watches reached)"),
};
const size_t vr_schema_watch_n =
    sizeof vr_schema_watch / sizeof vr_schema_watch[0];

const vsched_key vr_schema_resource[] = {
    VR_INT("capacity", NULL, 1, 65536, VSCHED_KEY_REQUIRED,
           "how many jobs may hold this resource at once"),
};
const size_t vr_schema_resource_n =
    sizeof vr_schema_resource / sizeof vr_schema_resource[0];

/* [target.NAME]: one program or library (config/targets.h reads it). */
const vsched_key vr_schema_target[] = {
    VR_KEY("kind", VSCHED_KEY_STRING, NULL, VSCHED_KEY_REQUIRED,
           "executable, static or shared"),
    VR_KEY("inputs", VSCHED_KEY_LIST, NULL, VSCHED_KEY_REQUIRED,
           "glob patterns of its sources under the loader root (** "
           "recursive)"),
    VR_KEY("exclude", VSCHED_KEY_LIST, "", 0,
           "glob patterns removed from inputs (a directory removes what "
           "is under it)"),
    VR_KEY("link_with", VSCHED_KEY_LIST, "", 0,
           "other targets linked in, in this order"),
    VR_KEY("output", VSCHED_KEY_STRING, NULL, 0,
           "file name of the result (default NAME, NAME.a, NAME.so)"),
    VR_KEY("cflags", VSCHED_KEY_LIST, NULL, 0,
           "compile flags of its objects, instead of the executor's"),
    VR_KEY("defines", VSCHED_KEY_LIST, "", 0,
           "preprocessor definitions (NAME or NAME=VALUE) of its objects"),
    VR_KEY("include_dirs", VSCHED_KEY_LIST, "", 0,
           "include directories of its objects, searched first"),
    VR_KEY("ldflags", VSCHED_KEY_LIST, NULL, 0,
           "link flags, instead of the executor's"),
    VR_KEY("libs", VSCHED_KEY_LIST, NULL, 0,
           "libraries after the objects, instead of the executor's"),
};
const size_t vr_schema_target_n =
    sizeof vr_schema_target / sizeof vr_schema_target[0];

/* ---- helpers --------------------------------------------------------- */

/* Contract: optimal-string-alignment distance (insertions, deletions,
 * substitutions and adjacent transpositions each cost 1). */
size_t vr_schema_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *rows = vr_xmalloc(3 * (lb + 1) * sizeof *rows);
    size_t *pp = rows, *prev = rows + lb + 1, *cur = rows + 2 * (lb + 1);
    for (size_t j = 0; j <= lb; j++)
        prev[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t d = prev[j - 1] + cost;
            if (prev[j] + 1 < d)
                d = prev[j] + 1;
            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
                a[i - 2] == b[j - 1] && pp[j - 2] + 1 < d)
                d = pp[j - 2] + 1;
            cur[j] = d;
        }
        size_t *t = pp;
        pp = prev;
        prev = cur;
        cur = t;
    }
    size_t d = prev[lb];
    free(rows);
    return d;
}

/* Is `typed` close enough to `cand` to suggest it? */
static int vr_close(const char *typed, const char *cand)
{
    size_t d = vr_schema_distance(typed, cand);
    return d <= 2 && d < strlen(typed);
}

/* Contract: see schema.h. */
char *vr_schema_where(const vr_config *cfg, const char *section,
                      const char *key)
{
    if (key != NULL && vr_config_from_set(cfg, section, key))
        return vr_xstrdup("--set: ");
    unsigned line = vr_config_line(cfg, section, key);
    if (line == 0 && key == NULL && vr_config_has_section(cfg, section))
        return vr_xstrdup("--set: ");
    if (line == 0)
        return vr_strfmt("%s: ", vr_config_path(cfg));
    return vr_strfmt("%s:%u: ", vr_config_path(cfg), line);
}

/* Set *err to where(section, key) + the formatted message; VSCHED_ECONFIG. */
static int vr_error(char **err, const vr_config *cfg, const char *section,
                    const char *key, const char *fmt, ...) VR_PRINTF(5, 6);
static int vr_error(char **err, const vr_config *cfg, const char *section,
                    const char *key, const char *fmt, ...)
{
    char *where = vr_schema_where(cfg, section, key), *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    va_end(ap);
    *err = vr_strfmt("%s%s", where, msg ? msg : "out of memory");
    free(where);
    free(msg);
    return VSCHED_ECONFIG;
}

/* Contract: see schema.h. */
int vr_schema_parse_int(const char *s, long long *v)
{
    const char *p = s + (*s == '+' || *s == '-');
    if (!isdigit((unsigned char)*p))
        return -1;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p != '\0')
        return -1;
    errno = 0;
    *v = strtoll(s, NULL, 10);
    return errno == ERANGE ? 1 : 0;
}

/* Contract: 1 for true/yes/on/1, 0 for false/no/off/0 (any case), -1 for
 * anything else including NULL. */
int vr_schema_bool(const char *value)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    if (value == NULL)
        return -1;
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(value, yes[i]) == 0)
            return 1;
        if (strcasecmp(value, no[i]) == 0)
            return 0;
    }
    return -1;
}

/* Contract: the integer value of section.key, or dflt when the key is
 * absent or not an integer (cannot happen after validation). */
long long vr_schema_int(const vr_config *cfg, const char *section,
                        const char *key, long long dflt)
{
    const char *v = vr_config_get(cfg, section, key);
    long long n;
    if (v == NULL || vr_schema_parse_int(v, &n) != 0)
        return dflt;
    return n;
}

/* Check one value against its key. */
static int vr_check_value(const vr_config *cfg, const char *section,
                          const vsched_key *k, const char *v, char **err)
{
    long long n = 0, lo, hi;
    int r;
    switch (k->type) {
    case VSCHED_KEY_INT:
        r = vr_schema_parse_int(v, &n);
        if (r < 0)
            return vr_error(err, cfg, section, k->name,
                            "[%s] %s: expected an integer, got '%s'", section,
                            k->name, v);
        lo = k->min;
        hi = k->max;
        if (lo == 0 && hi == 0) { /* no range given */
            lo = LLONG_MIN;
            hi = LLONG_MAX;
        }
        if (r > 0 || n < lo || n > hi)
            return vr_error(err, cfg, section, k->name,
                            "[%s] %s: %s is out of range %lld..%lld", section,
                            k->name, v, lo, hi);
        return 0;
    case VSCHED_KEY_BOOL:
        if (vr_schema_bool(v) < 0)
            return vr_error(err, cfg, section, k->name,
                            "[%s] %s: expected a boolean (true/false, "
                            "yes/no, on/off, 1/0), got '%s'",
                            section, k->name, v);
        return 0;
    case VSCHED_KEY_PATH:
        if (*v == '\0')
            return vr_error(err, cfg, section, k->name,
                            "[%s] %s: expected a path, got an empty value",
                            section, k->name);
        return 0;
    case VSCHED_KEY_STRING:
    case VSCHED_KEY_LIST:
    default: return 0;
    }
}

static int vr_in_list(const char *const *list, const char *s)
{
    for (; list != NULL && *list != NULL; list++)
        if (strcmp(*list, s) == 0)
            return 1;
    return 0;
}

static int vr_accepted(const vsched_key *k, int per_profile)
{
    return !per_profile || (k->flags & VSCHED_KEY_PER_PROFILE);
}

/* The unknown-key error: a close name, or every accepted key. */
static int vr_unknown_key(const vr_config *cfg, const char *section,
                          const char *key, const vsched_key *schema, size_t n,
                          const char *const *ignore, int per_profile,
                          char **err)
{
    for (const char *const *i = ignore; i != NULL && *i != NULL; i++)
        if (vr_close(key, *i))
            return vr_error(err, cfg, section, key,
                            "unknown key '%s' in [%s]; did you mean '%s'?",
                            key, section, *i);
    for (size_t i = 0; i < n; i++)
        if (vr_accepted(&schema[i], per_profile) &&
            vr_close(key, schema[i].name))
            return vr_error(err, cfg, section, key,
                            "unknown key '%s' in [%s]; did you mean '%s'?",
                            key, section, schema[i].name);
    size_t len = 1;
    for (const char *const *i = ignore; i != NULL && *i != NULL; i++)
        len += strlen(*i) + 2;
    for (size_t i = 0; i < n; i++)
        len += strlen(schema[i].name) + 2;
    char *list = vr_xmalloc(len);
    list[0] = '\0';
    for (const char *const *i = ignore; i != NULL && *i != NULL; i++)
        strcat(strcat(list, list[0] ? ", " : ""), *i);
    for (size_t i = 0; i < n; i++)
        if (vr_accepted(&schema[i], per_profile))
            strcat(strcat(list, list[0] ? ", " : ""), schema[i].name);
    int rc =
        list[0] ? vr_error(err, cfg, section, key,
                           "unknown key '%s' in [%s]; accepted keys: %s", key,
                           section, list)
                : vr_error(
                      err, cfg, section, key,
                      "unknown key '%s' in [%s]; this section accepts no keys",
                      key, section);
    free(list);
    return rc;
}

static const vsched_key *vr_lookup(const vsched_key *schema, size_t n,
                                   const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(schema[i].name, key) == 0)
            return &schema[i];
    return NULL;
}

/* Contract: see schema.h. A section absent from cfg is valid unless it has
 * a required key ("FILE: missing section [S]"). Required keys are not
 * enforced in per_profile mode (profiles only override). */
int vr_schema_validate(const vr_config *cfg, const char *section,
                       const vsched_key *schema, size_t n,
                       const char *const *ignore, int per_profile, char **err)
{
    *err = NULL;
    size_t ne, nall;
    const size_t *idx = vr_config_section_entries(cfg, section, &ne);
    const vr_config_entry *all = vr_config_entries(cfg, &nall);
    for (size_t i = 0; i < ne; i++) {
        const vr_config_entry *e = &all[idx[i]];
        if (vr_in_list(ignore, e->key))
            continue;
        const vsched_key *k = vr_lookup(schema, n, e->key);
        if (k == NULL)
            return vr_unknown_key(cfg, section, e->key, schema, n, ignore,
                                  per_profile, err);
        if (!vr_accepted(k, per_profile))
            return vr_error(err, cfg, section, e->key,
                            "key '%s' cannot be set per profile in [%s]",
                            e->key, section);
        int rc = vr_check_value(cfg, section, k, e->value, err);
        if (rc != 0)
            return rc;
    }
    if (per_profile)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const char *v = vr_config_get(cfg, section, schema[i].name);
        if (!(schema[i].flags & VSCHED_KEY_REQUIRED) || v == NULL)
            continue;
        if (v[0] == '\0')
            return vr_error(err, cfg, section, schema[i].name,
                            "[%s] %s: a required key needs a value (it is "
                            "set but empty)",
                            section, schema[i].name);
    }
    for (size_t i = 0; i < n; i++) {
        if (!(schema[i].flags & VSCHED_KEY_REQUIRED) ||
            vr_config_get(cfg, section, schema[i].name) != NULL)
            continue;
        if (!vr_config_has_section(cfg, section)) {
            *err = vr_strfmt("%s: missing section [%s]", vr_config_path(cfg),
                             section);
            return VSCHED_ECONFIG;
        }
        return vr_error(err, cfg, section, NULL,
                        "[%s] missing required key '%s'", section,
                        schema[i].name);
    }
    return 0;
}

/* ---- the whole file -------------------------------------------------- */

static const char *const vr_fixed_sections[] = {"vsched", "loader", "executor",
                                                "batch",  "cache",  "watch"};
#define VR_N_FIXED (sizeof vr_fixed_sections / sizeof vr_fixed_sections[0])
static const char *const vr_named_sections[] = {"profile", "resource",
                                                "target"};
#define VR_N_NAMED (sizeof vr_named_sections / sizeof vr_named_sections[0])

/* NAME of [profile.NAME] / [resource.NAME]: non-empty, [A-Za-z0-9_.-]. */
static int vr_good_name(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_.-", *s))
            return 0;
    return 1;
}

/* Check one section name: 0, or VSCHED_ECONFIG with the message. */
static int vr_check_section_name(const vr_config *cfg, const char *name,
                                 char **err)
{
    for (size_t i = 0; i < VR_N_FIXED; i++)
        if (strcmp(name, vr_fixed_sections[i]) == 0)
            return 0;
    const char *dot = strchr(name, '.');
    size_t plen = dot ? (size_t)(dot - name) : strlen(name);
    for (size_t i = 0; i < VR_N_NAMED; i++) {
        const char *p = vr_named_sections[i];
        if (strlen(p) != plen || strncmp(name, p, plen) != 0)
            continue;
        if (dot != NULL && vr_good_name(dot + 1))
            return 0;
        return vr_error(err, cfg, name, NULL,
                        "bad section name [%s]; expected [%s.NAME] with a "
                        "NAME of letters, digits, '_', '.' or '-'",
                        name, p);
    }
    /* The nearest close name ([watcj] is [watch], not [batch]). */
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (size_t i = 0; i < VR_N_FIXED; i++) {
        size_t d = vr_schema_distance(name, vr_fixed_sections[i]);
        if (vr_close(name, vr_fixed_sections[i]) && d < best_d) {
            best = vr_fixed_sections[i];
            best_d = d;
        }
    }
    if (best != NULL)
        return vr_error(err, cfg, name, NULL,
                        "unknown section [%s]; did you mean [%s]?", name,
                        best);
    if (dot != NULL) {
        char *prefix = vr_strfmt("%.*s", (int)plen, name);
        for (size_t i = 0; i < VR_N_NAMED; i++) {
            if (vr_close(prefix, vr_named_sections[i])) {
                free(prefix);
                return vr_error(err, cfg, name, NULL,
                                "unknown section [%s]; did you mean [%s%s]?",
                                name, vr_named_sections[i], dot);
            }
        }
        free(prefix);
    }
    return vr_error(err, cfg, name, NULL,
                    "unknown section [%s]; accepted sections: [vsched], "
                    "[loader], [executor], [batch], [cache], "
                    "[watch], [profile.NAME], [resource.NAME], [target.NAME]",
                    name);
}

/* The host's keys of [executor] (vr_schema_executor), the plugin's keys
 * left for the plugin's own validation. */
static int vr_check_executor_keys(const vr_config *cfg, char **err)
{
    size_t n = 0, ne = 0;
    const size_t *idx = vr_config_section_entries(cfg, "executor", &n);
    const vr_config_entry *e = vr_config_entries(cfg, &ne);
    const char **ignore = vr_xcalloc(n + 1, sizeof *ignore);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *key = e[idx[i]].key;
        if (vr_lookup(vr_schema_executor, vr_schema_executor_n, key) == NULL)
            ignore[k++] = key;
    }
    int rc = vr_schema_validate(cfg, "executor", vr_schema_executor,
                                vr_schema_executor_n, ignore, 0, err);
    free(ignore);
    return rc;
}

/* [loader] / [executor]: present, with a non-empty `plugin`. The rest of
 * the section is the plugin's, checked once it is loaded. */
static int vr_check_plugin_section(const vr_config *cfg, const char *section,
                                   char **err)
{
    if (!vr_config_has_section(cfg, section)) {
        *err = vr_strfmt("%s: missing section [%s]", vr_config_path(cfg),
                         section);
        return VSCHED_ECONFIG;
    }
    const char *plugin = vr_config_get(cfg, section, "plugin");
    if (plugin == NULL)
        return vr_error(err, cfg, section, NULL,
                        "[%s] missing required key 'plugin'", section);
    if (*plugin == '\0')
        return vr_error(err, cfg, section, "plugin",
                        "[%s] plugin: expected a plugin name, got an empty "
                        "value",
                        section);
    return 0;
}

/* Contract: see schema.h. Order: section names in file order, then
 * [loader], [executor], [vsched], [batch], each [resource.NAME]; the first
 * error is reported. [batch] is required (it has the required `inputs`). */
int vr_schema_validate_host(const vr_config *cfg, char **err)
{
    *err = NULL;
    size_t ns;
    const char *const *names = vr_config_sections(cfg, &ns);
    int targets = 0;
    for (size_t i = 0; i < ns; i++) {
        if (vr_check_section_name(cfg, names[i], err) != 0)
            return VSCHED_ECONFIG;
        targets |= strncmp(names[i], "target.", 7) == 0;
    }
    /* With targets, [batch] inputs is optional: they name the sources. */
    vsched_key batch[sizeof vr_schema_batch / sizeof vr_schema_batch[0]];
    memcpy(batch, vr_schema_batch, sizeof batch);
    if (targets)
        batch[0].flags &= ~(unsigned)VSCHED_KEY_REQUIRED;
    if (vr_check_plugin_section(cfg, "loader", err) != 0 ||
        vr_check_plugin_section(cfg, "executor", err) != 0 ||
        vr_check_executor_keys(cfg, err) != 0 ||
        vr_schema_validate(cfg, "vsched", vr_schema_vsched, vr_schema_vsched_n,
                           NULL, 0, err) != 0 ||
        vr_schema_validate(cfg, "batch", batch, vr_schema_batch_n, NULL, 0,
                           err) != 0 ||
        vr_schema_validate(cfg, "cache", vr_schema_cache, vr_schema_cache_n,
                           NULL, 0, err) != 0 ||
        vr_schema_validate(cfg, "watch", vr_schema_watch, vr_schema_watch_n,
                           NULL, 0, err) != 0)
        return VSCHED_ECONFIG;
    for (size_t i = 0; i < ns; i++)
        if (strncmp(names[i], "resource.", 9) == 0 &&
            vr_schema_validate(cfg, names[i], vr_schema_resource,
                               vr_schema_resource_n, NULL, 0, err) != 0)
            return VSCHED_ECONFIG;
    for (size_t i = 0; i < ns; i++)
        if (strncmp(names[i], "target.", 7) == 0 &&
            vr_schema_validate(cfg, names[i], vr_schema_target,
                               vr_schema_target_n, NULL, 0, err) != 0)
            return VSCHED_ECONFIG;
    return 0;
}
