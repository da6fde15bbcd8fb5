/*
 * plugin_host_int -- what the three files of the plugin host share. Private
 * to src/host/config/plugin_*.c; not installed, not for the rest of the host
 * (which uses plugin_host.h).
 *
 *   plugin_host.c      libltdl init/exit, vr_plugin_lock, the search path,
 *                      open / check / close, descriptor and origin.
 *   plugin_instance.c  vr_plugin_instantiate / vr_plugin_destroy_instance,
 *                      the vsched_config snapshot given to create(), and
 *                      the host vsched_ctx.
 *   plugin_config.c    the ABI 1.1 part of that vsched_config: host
 *                      version, profiles, typed getters, blame.
 *   plugin_list.c      vr_plugin_list / vr_plugin_describe.
 *
 * Every name here is vr__-prefixed. Only plugin_host.c calls libltdl or
 * takes vr_plugin_lock (see the lock's comment there); the others reach
 * libltdl through the functions below, never directly.
 */
#ifndef VSCHED_HOST_PLUGIN_HOST_INT_H
#define VSCHED_HOST_PLUGIN_HOST_INT_H

#include <ltdl.h>
#include <pthread.h>
#include <stddef.h>
#include <vsched/plugin.h>

#include "config/config.h"
#include "config/plugin_host.h"

/* A live instance and the configuration snapshot it was created with;
 * defined in plugin_instance.c, opaque elsewhere. */
struct vr__instance;

/* An open plugin. Not thread-safe: opened, instantiated, destroyed and
 * closed from one thread; the descriptor is read-only and may be read by
 * any thread while the plugin is open. */
struct vr_plugin {
    lt_dlhandle handle;             /* NULL for a built-in */
    const vsched_plugin *desc;      /* checked */
    char *label;                    /* module name, used in every message */
    char *origin;                   /* "built-in" or the loaded file */
    struct vr__instance *instances; /* live instances (plugin_instance.c) */
};

/* A growable list of heap strings, owned by the list. Zero-initialise
 * ({ 0 }) to start empty; release with vr__strv_free. */
typedef struct vr__strv {
    char **v;
    size_t n, cap;
} vr__strv;

/* ---- plugin_host.c ------------------------------------------------------ */

/* The preloaded table given to vr_plugin_host_init, or NULL. Static
 * storage of the program. Takes vr_plugin_lock. */
const lt_dlsymlist *vr__preloaded(void);

/* "loader", "executor" or "unknown" for one role bit. Static storage. */
const char *vr__role_name(unsigned role);

/* 1 when s ends with suffix, else 0. */
int vr__has_suffix(const char *s, const char *suffix);

/* Module name of a file or originator name: the base name without a
 * ".la", ".so" or ".a" extension. Heap string, owned by the caller. */
char *vr__module_name(const char *path);

/* Append s (taking ownership) unless an equal string is present; then s is
 * freed. */
void vr__strv_add_unique(vr__strv *sv, char *s);
/* Free every string and the array; sv is empty afterwards. */
void vr__strv_free(vr__strv *sv);

/* Append to `dirs` the directories searched after the built-ins, in order,
 * without duplicates: [vsched] plugin_path of cfg (relative to its
 * directory; cfg may be NULL), $VSCHED_PLUGIN_PATH, VSCHED_PLUGINSDIR. */
void vr__search_dirs(vr__strv *dirs, const vr_config *cfg);

/* Whether the lt_dlopenext of `base` finds a file: sets *file (heap,
 * caller frees) to the path it will load (NAME.la before NAME.so, or NAME
 * as is when it ends in .la/.so) and returns 1, or returns 0. */
int vr__module_file(const char *base, char **file);

/* dl_reason.c: why the module `file` (.la or .so) cannot be loaded, in
 * dlopen(3)'s words (the missing library, "file too short", an undefined
 * symbol); heap, caller frees; NULL when dlopen itself succeeds or gives
 * no reason. Caller holds vr_plugin_lock. */
char *vr__dl_reason(const char *file);

/* Open and check the module file(s) `base` (a path; see vr__module_file).
 * Returns 1 when no such file exists (*err untouched), 0 with *out set, or
 * a negative status of vr_plugin_open with *err set. Takes vr_plugin_lock
 * around libltdl calls. */
int vr__open_file(vr_plugin **out, const char *base, char **err);

/* ---- plugin_config.c ---------------------------------------------------- */
/* What the 1.1 members of one instance's vsched_config own. `lock` guards
 * lists, blame_* and scratch (the getters may be called from any thread
 * until destroy); a leaf lock, nothing is called while it is held. */
typedef struct vr__cfgx {
    pthread_mutex_t lock;
    char **profiles; /* NAME of each [profile.NAME], heap */
    size_t n_profiles;
    struct vr_words *lists;          /* get_list results, kept until destroy */
    char *blame_section, *blame_key; /* the key create()'s error is about */
    char *scratch;                   /* "profile.NAME" of the last lookup */
} vr__cfgx;
/* Fill c's 1.1 members (host version, profiles of cfg, getters, blame)
 * backed by x; release with vr__cfgx_free. */
void vr__cfgx_init(vsched_config *c, vr__cfgx *x, const vr_config *cfg);
void vr__cfgx_free(vr__cfgx *x);

/* ---- plugin_instance.c -------------------------------------------------- */
/* The vr__cfgx of the instance whose configuration cfg is. */
vr__cfgx *vr__instance_cfgx(const vsched_config *cfg);

/* Destroy every instance of p still alive (plugin's destroy(), then its
 * configuration snapshot); p->instances is NULL afterwards. */
void vr__destroy_instances(vr_plugin *p);

#endif
