/*
 * settings -- the host's own keys of a configuration, validated once and
 * read into typed fields.
 *
 * vsched-run reads the INI file (config.h), applies --set, then calls
 * vr_settings_load: the host's sections are checked against their tables
 * (schema.h: section names, [loader]/[executor] plugin, [vsched], [batch],
 * [cache], [watch], [resource.NAME]) and every value the host uses is converted
 * here -- integers, lists split, paths made absolute against the INI
 * file's directory, [cache] max_size parsed. Every error is one line,
 * "FILE:LINE: message" (schema.h's rules), so a bad value stops the run
 * before any plugin is opened. The modules then take a vr_settings, not
 * the raw vr_config: no host key is looked up by string after this.
 *
 * Not here: the plugins' own sections ([loader] and [executor] apart from
 * `plugin`, [profile.NAME]), which the plugins receive through the plugin
 * host's config API (plugin_host.h) and keys.h hashes; [vsched]
 * plugin_path, which the plugin host reads itself because --list-plugins
 * and --describe-plugin search it without validating the file; and the
 * command line's overrides (-j, -k, --profile, FILES), which the modules
 * apply over these values (cli.h).
 *
 * A vr_settings owns every string and array it holds (it does not borrow
 * from the vr_config, which may be freed first). Read-only after load:
 * safe to read from any thread.
 */
#ifndef VSCHED_HOST_SETTINGS_H
#define VSCHED_HOST_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

/* [resource.NAME] capacity = N. */
typedef struct vr_resource_setting {
    char *name; /* NAME, without "resource." */
    unsigned capacity;
} vr_resource_setting;

typedef struct vr_settings {
    /* Where the values came from, for messages about them. */
    char *path;           /* the INI file as given */
    unsigned inputs_line; /* line of [batch] inputs (0: --set only) */
    int inputs_from_set;  /* [batch] inputs as --set gave it */

    /* [vsched] */
    unsigned cpu_threads; /* 0: one per online CPU */
    unsigned io_threads;
    unsigned coordinator_threads;
    size_t inbox_capacity;
    size_t ready_capacity;
    char *state_dir; /* absolute; default INI_DIR/.vsched */

    /* [loader] and [executor]: the plugin names. */
    char *loader_plugin;
    char *executor_plugin;
    /* [executor] isolate and isolate_timeout (build/isolate.h): the
     * executor's calls in worker processes; seconds, 0 = unset. */
    int executor_isolate;
    long isolate_timeout;
    /* [loader] root made absolute, where [batch] inputs are globbed; NULL
     * when unset. A loader whose root key is a plain string may leave it
     * empty: loader_root is then the INI's directory and loader_root_empty
     * is 1 (the incremental state tracks sources without a root). */
    char *loader_root;
    int loader_root_empty;
    /* [executor] out_dir made absolute, or NULL when unset: where the
     * bundled executors write every output (out_dir/PROFILE/...). The
     * host removes files only under it (state/journal.h, cli/clean.c)
     * and does not watch it. */
    char *out_dir;

    /* [batch] */
    char **inputs; /* the patterns, split on blanks */
    size_t n_inputs;
    char **profiles; /* [batch] profiles, else "release" */
    size_t n_profiles;
    char *link;      /* [batch] link, or NULL when unset/empty */
    long keep_going; /* stop after N failures; 0 = never */

    /* [cache] */
    uint64_t cache_max_bytes; /* max_size; 0 turns the cache off */
    char *cache_dir;          /* absolute; NULL when the cache is off */

    /* [watch] (--watch) */
    unsigned watch_settle_ms; /* settle_ms: quiet time before a rebuild */
    unsigned watch_poll_ms;   /* poll_interval_ms: polling fallback */

    /* [resource.NAME] sections, in file order. */
    vr_resource_setting *resources;
    size_t n_resources;
} vr_settings;

/* Validate the host's sections of cfg (vr_schema_validate_host) and fill
 * *s. Returns 0, or VSCHED_ECONFIG with *err = "FILE:LINE: message" (or
 * "--set: message" for a value of the command line; caller frees) and *s
 * empty. Either way vr_settings_free(s) may be called. */
int vr_settings_load(vr_settings *s, const vr_config *cfg, char **err);

/* Free what *s holds; *s is empty afterwards. */
void vr_settings_free(vr_settings *s);

/* Parse a size ("2G", "512M", "100k", "0"; powers of 1024) into *bytes,
 * as [cache] max_size. 0 or VSCHED_EINVAL. */
int vr_settings_parse_size(const char *text, uint64_t *bytes);

#endif
