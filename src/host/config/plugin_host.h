/*
 * plugin_host -- finding, loading, checking and instantiating plugins.
 *
 * Plugins are libtool modules loaded through libltdl. Search order for a
 * plugin NAME: the built-in (preloaded) modules, then each directory of
 * [vsched] plugin_path (relative to the INI's directory), then each
 * directory of $VSCHED_PLUGIN_PATH (':'-separated), then the installed
 * plugin dir (VSCHED_PLUGINSDIR). NAME may also be a path containing '/',
 * loaded as it is.
 *
 * Checks, each with a one-line message naming the plugin and what to do:
 * entry symbol missing; ABI major different or minor newer (both versions
 * named); descriptor size too small; a required operation missing for a
 * declared role; role not provided; schema validation of the plugin's INI
 * section (via schema.h) before create(); create() failure with the
 * plugin's own message.
 *
 * Locking: libltdl is not thread-safe. Every libltdl call in the process
 * goes through this module under vr_plugin_lock (rank: outermost; taken
 * only by this module, never while holding a scheduler lock).
 */
#ifndef VSCHED_HOST_PLUGIN_HOST_H
#define VSCHED_HOST_PLUGIN_HOST_H

#include <stddef.h>
#include <stdio.h>
#include <vsched/plugin.h>

#include "config/config.h"

typedef struct vr_plugin vr_plugin;

/* Non-zero when ops table `ops` of type `type` is large enough to hold
 * `field`: the host reads an operation a later minor appended only then
 * (a plugin built for an older minor has a smaller table). */
#define VR_OPS_COVERS(ops, type, field)                                       \
    ((ops)->size >= offsetof(type, field) + sizeof((ops)->field))

/* Initialise libltdl and register the preloaded built-in modules. Call once
 * from main (or a test) before any other function here; `preloaded` is the
 * program's lt_preloaded_symbols (pass the LTDL_SET_PRELOADED_SYMBOLS
 * table) or NULL. Returns 0 or VSCHED_EERR. */
int vr_plugin_host_init(const void *preloaded);
/* Release libltdl. */
void vr_plugin_host_exit(void);

/* Search path: directories tried after the built-ins, in order. cfg may be
 * NULL (then only $VSCHED_PLUGIN_PATH and the installed dir). */
int vr_plugin_open(vr_plugin **out, const char *name, const vr_config *cfg,
                   char **err);

/* The version part of the descriptor check, as a host speaking plugin ABI
 * host_major.host_minor makes it (vr_plugin_open passes this build's
 * VSCHED_PLUGIN_ABI_MAJOR/MINOR; a test passes 1, 0 to be a 1.0 host).
 * Returns 0, or VSCHED_EABI with *err (heap) set to one of the messages
 * of vsched-plugin(7): "plugin 'L' was built for plugin ABI M.m; this
 * vsched-run speaks ABI H.h (major versions must match): ...", "plugin
 * 'L' needs plugin ABI M.m, newer than this vsched-run's H.h: upgrade
 * vsched-run, or rebuild the plugin with -DVSCHED_PLUGIN_TARGET_MINOR=h",
 * or a descriptor smaller than 1.0's. */
int vr_plugin_check_abi(const char *label, const vsched_plugin *d,
                        unsigned host_major, unsigned host_minor, char **err);

/* The checked descriptor. */
const vsched_plugin *vr_plugin_descriptor(const vr_plugin *p);
/* Where it came from: "built-in" or the module's path. */
const char *vr_plugin_origin(const vr_plugin *p);

/* Validate cfg's `section` ("loader" or "executor") and its [profile.*]
 * sections (executor only: keys flagged VSCHED_KEY_PER_PROFILE) against
 * the plugin's schema, then call create(). `role` is VSCHED_ROLE_LOADER or
 * VSCHED_ROLE_EXECUTOR; the plugin must provide it. *inst is the instance.
 * Errors: VSCHED_ECONFIG (schema, "FILE:LINE: ..."), VSCHED_EERR (create
 * failed: "plugin 'cc': cannot create executor: <plugin message>"). */
int vr_plugin_instantiate(vr_plugin *p, unsigned role, const vr_config *cfg,
                          const char *section, void **inst, char **err);
/* Destroy an instance made by vr_plugin_instantiate. */
void vr_plugin_destroy_instance(vr_plugin *p, void *inst);

/* Close the module (after every instance is destroyed). */
void vr_plugin_close(vr_plugin *p);

/* Print the names of every plugin found (built-in and on the search path),
 * one per line: "NAME VERSION ROLES ORIGIN  DESCRIPTION". */
int vr_plugin_list(FILE *out, const vr_config *cfg);
/* Print the schema of one plugin: each key, type, default, range, help. */
int vr_plugin_describe(FILE *out, const char *name, const vr_config *cfg,
                       char **err);

/* The host side of the plugin context (ctx.alloc == malloc etc.), for
 * create() and tools. */
const vsched_ctx *vr_plugin_host_ctx(void);

#endif
