/*
 * incr -- the incremental context; see incr.h.
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <vsched/plugin.h>

#include "build/incr.h"
#include "common/util.h"
#include "state/keys.h"

/* The canonical loader root (heap), or NULL when the loader has none. */
static char *vr_loader_root(const vr_settings *s)
{
    if (s->loader_root == NULL || s->loader_root_empty)
        return NULL;
    char *real = realpath(s->loader_root, NULL);
    return real != NULL ? real : vr_xstrdup(s->loader_root);
}

static vr_incr *vr_incr_new(const vr_build *b, int dry)
{
    vr_incr *in = vr_xcalloc(1, sizeof *in);
    in->b = b;
    in->dry = dry;
    in->state_dir = b->settings->state_dir;
    in->cache_dir = b->settings->cache_dir;
    return in;
}

/* What open does once the lock is held (or, dry, without one): the state
 * read and the cache opened. (The journal is settled by open itself, after
 * the inputs were found valid: settling removes files.) */
static int vr_incr_open_state(vr_incr *in, char **msg)
{
    const vr_build *b = in->b;
    int dry = in->dry;
    int rc =
        vr_state_open(&in->state, in->state_dir, dry ? VR_STATE_READONLY : 0,
                      &in->snap, b->err, msg);
    if (rc == VSCHED_OK && in->cache_dir != NULL && !dry)
        rc = vr_cache_open(&in->cache, in->cache_dir,
                           b->settings->cache_max_bytes, b->err, msg);
    return rc;
}

/* ---- the early part -------------------------------------------------------
 *
 * Two threads, each writing only its own fields of the struct until the
 * join in vr_incr_early_join (which orders those writes before every
 * read). The state thread owns `in` and state_rc/state_msg; the tool
 * thread owns tool[] and failed[]. Neither calls anything the main thread
 * calls meanwhile (vr_work_make expands the inputs: the glob, the loader
 * root, the configuration, all read-only): the executor's identity is
 * called by the tool thread alone, and only SQLite by the state thread. */
struct vr_incr_early {
    const vr_build *b;
    int dry;
    pthread_t state_thread, tool_thread;
    int state_started, tool_started, joined;
    vr_incr *in;     /* lock, state, cache: when state_taken */
    int state_taken; /* the state thread took the lock (or, dry, read) */
    int state_rc;
    char *state_msg;
    char **profiles; /* vr_build_profiles */
    size_t n_profiles;
    uint64_t *tool;
    int *failed;
};

static void *vr_early_state(void *arg)
{
    vr_incr_early *e = arg;
    vr_incr *in = e->in;
    /* A lock another run holds is waited for in open, with its message
     * (and not at all when the inputs turn out to be wrong). */
    if (!e->dry && vr_lock_try(&in->lock, in->state_dir) != VSCHED_OK)
        return NULL;
    e->state_taken = 1;
    e->state_rc = vr_incr_open_state(in, &e->state_msg);
    return NULL;
}

static void *vr_early_tool(void *arg)
{
    vr_incr_early *e = arg;
    const vr_build *b = e->b;
    for (size_t i = 0; i < e->n_profiles; i++)
        e->tool[i] = vr_keys_tool(b->executor_desc, b->executor.inst,
                                  e->profiles[i], &e->failed[i]);
    return NULL;
}

/* Contract: see incr.h. */
vr_incr_early *vr_incr_early_start(const vr_build *b, int dry)
{
    vr_incr_early *e = vr_xcalloc(1, sizeof *e);
    e->b = b;
    e->dry = dry;
    e->in = vr_incr_new(b, dry);
    e->profiles = vr_build_profiles(b, &e->n_profiles);
    e->tool = vr_xcalloc(e->n_profiles + 1, sizeof *e->tool);
    e->failed = vr_xcalloc(e->n_profiles + 1, sizeof *e->failed);
    /* A thread that cannot be started leaves its part to open. */
    e->state_started =
        pthread_create(&e->state_thread, NULL, vr_early_state, e) == 0;
    if (e->n_profiles > 0 && b->executor_desc != NULL)
        e->tool_started =
            pthread_create(&e->tool_thread, NULL, vr_early_tool, e) == 0;
    return e;
}

static void vr_incr_early_join(vr_incr_early *e)
{
    if (e->joined)
        return;
    e->joined = 1;
    if (e->state_started)
        pthread_join(e->state_thread, NULL);
    if (e->tool_started)
        pthread_join(e->tool_thread, NULL);
}

/* Contract: see incr.h. */
void vr_incr_early_drop(vr_incr_early *e)
{
    if (e == NULL)
        return;
    vr_incr_early_join(e);
    vr_incr_close(e->in);
    free(e->state_msg);
    vr_build_inputs_free(e->profiles, e->n_profiles);
    free(e->tool);
    free(e->failed);
    free(e);
}

/* The tool hash of `profile` the early part computed (1), or 0. */
static int vr_early_tool_of(const vr_incr_early *e, const char *profile,
                            uint64_t *tool, int *failed)
{
    for (size_t i = 0; e != NULL && e->tool_started && i < e->n_profiles; i++)
        if (strcmp(e->profiles[i], profile) == 0) {
            *tool = e->tool[i];
            *failed = e->failed[i];
            return 1;
        }
    return 0;
}

/* Contract: see incr.h. */
int vr_incr_open(vr_incr **out, const vr_build *b, vr_incr_early *early,
                 char *const *profiles, size_t n_profiles, int dry, char **msg)
{
    *out = NULL;
    *msg = NULL;
    vr_incr *in;
    int rc = VSCHED_OK;
    if (early != NULL)
        vr_incr_early_join(early);
    if (early != NULL && early->state_taken) {
        in = early->in;
        early->in = NULL;
        rc = early->state_rc;
        *msg = early->state_msg;
        early->state_msg = NULL;
    } else {
        in = vr_incr_new(b, dry);
        if (!dry)
            rc = vr_lock_take(&in->lock, in->state_dir, !b->cli->no_wait,
                              b->cli->verbosity < 0 ? NULL : b->err, msg);
        if (rc == VSCHED_OK)
            rc = vr_incr_open_state(in, msg);
    }
    if (rc == VSCHED_OK && !dry) {
        /* what a run killed between publishing and recording left */
        vr_journal_settle(in->state_dir, b->settings->out_dir, &in->snap,
                          b->out, b->err, b->cli->verbosity < 0);
        rc = vr_journal_open(&in->journal, in->state_dir, msg);
    } else if (rc == VSCHED_OK) /* -n refuses the journal the run would */
        rc = vr_journal_check(in->state_dir, 0, msg);
    if (rc != VSCHED_OK) {
        vr_incr_close(in);
        return rc;
    }
    in->root = vr_loader_root(b->settings);
    in->src = vr_sources_new(in->root, &in->snap);
    in->keys = vr_xcalloc(n_profiles + 1, sizeof *in->keys);
    for (size_t i = 0; i < n_profiles; i++) {
        vr_profile_keys *k = &in->keys[in->n_keys++];
        k->profile = profiles[i];
        k->config = vr_keys_config(b->cfg, b->executor_desc, b->loader_desc,
                                   profiles[i]);
        int failed = 0;
        if (!vr_early_tool_of(early, profiles[i], &k->tool, &failed))
            k->tool = vr_keys_tool(b->executor_desc, b->executor.inst,
                                   profiles[i], &failed);
        if (failed != 0)
            fprintf(b->err,
                    "vsched-run: executor '%s' cannot tell its "
                    "identity (%s): what it built before is "
                    "rebuilt\n",
                    b->executor_desc->name, vsched_strerror(failed));
    }
    vr_bind_opts o = {
        .loader = b->loader,
        .executor = vr_build_stages(b),
        .sources = in->src,
        .cache = in->cache,
        .snap = &in->snap,
        .keys = in->keys,
        .n_keys = in->n_keys,
        .executor_name =
            b->executor_desc != NULL ? b->executor_desc->name : NULL,
        .journal = in->journal,
    };
    in->bind = vr_bind_new(&o);
    *out = in;
    return VSCHED_OK;
}

/* Contract: see incr.h. */
const vr_profile_keys *vr_incr_keys(const vr_incr *in, const char *profile)
{
    for (size_t i = 0; i < in->n_keys; i++)
        if (strcmp(in->keys[i].profile, profile) == 0)
            return &in->keys[i];
    return NULL;
}

/* Contract: see incr.h. */
int vr_incr_start(vr_incr *in, const vr_link_plan *links, size_t n_links)
{
    vr_bind_set_links(in->bind, links, n_links);
    if (in->dry)
        return VSCHED_OK;
    return vr_recorder_start(&in->rec, in->state, in->src, in->bind,
                             in->cache);
}

/* Contract: see incr.h. */
int vr_incr_finish(vr_incr *in)
{
    if (in->rec == NULL)
        return VSCHED_OK;
    int rc = vr_recorder_finish(in->rec, &in->recorded);
    in->rec = NULL;
    if (rc == VSCHED_OK && in->recorded.artifacts > 0 &&
        vr_state_begin(in->state) == VSCHED_OK) {
        if (vr_state_sweep(in->state, NULL) == VSCHED_OK)
            rc = vr_state_commit(in->state);
        else
            rc = VSCHED_EIO;
    }
    if (rc == VSCHED_OK)
        vr_journal_clear(in->journal); /* every publication is recorded */
    return rc;
}

/* Contract: see incr.h. */
void vr_incr_close(vr_incr *in)
{
    if (in == NULL)
        return;
    vr_incr_finish(in);
    vr_bind_free(in->bind);
    vr_cache_close(in->cache);
    vr_journal_close(in->journal);
    vr_sources_free(in->src);
    vr_snapshot_free(&in->snap);
    vr_state_close(in->state);
    vr_lock_release(in->lock);
    free(in->keys);
    free(in->root);
    free(in);
}
