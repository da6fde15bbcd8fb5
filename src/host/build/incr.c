/*
 * incr -- the incremental context; see incr.h.
 */
#include <limits.h>
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

/* Contract: see incr.h. */
int vr_incr_open(vr_incr **out, const vr_build *b, char *const *profiles,
                 size_t n_profiles, int dry, char **msg)
{
    *out = NULL;
    *msg = NULL;
    vr_incr *in = vr_xcalloc(1, sizeof *in);
    in->b = b;
    in->dry = dry;
    in->state_dir = b->settings->state_dir;
    in->cache_dir = b->settings->cache_dir;
    int rc = VSCHED_OK;
    if (!dry)
        rc = vr_lock_take(&in->lock, in->state_dir, !b->cli->no_wait, b->err,
                          msg);
    if (rc == VSCHED_OK)
        rc =
            vr_state_open(&in->state, in->state_dir,
                          dry ? VR_STATE_READONLY : 0, &in->snap, b->err, msg);
    if (rc == VSCHED_OK && in->cache_dir != NULL && !dry)
        rc = vr_cache_open(&in->cache, in->cache_dir,
                           b->settings->cache_max_bytes, b->err, msg);
    if (rc == VSCHED_OK && !dry) {
        /* what a run killed between publishing and recording left */
        vr_journal_settle(in->state_dir, &in->snap, 0, b->out,
                          b->cli->verbosity < 0);
        rc = vr_journal_open(&in->journal, in->state_dir, msg);
    }
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
        k->tool = vr_keys_tool(b->executor_desc, b->executor.inst, profiles[i],
                               &failed);
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
