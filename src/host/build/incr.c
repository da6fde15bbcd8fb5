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

/* Contract: see incr.h. */
int vr_incr_dirs(const vr_config *cfg, char **state_dir, char **cache_dir,
                 uint64_t *max_bytes, char **msg)
{
    const char *dir = vr_config_dir(cfg);
    const char *sd = vr_config_get(cfg, "vsched", "state_dir");
    *state_dir = vr_path_join(dir, sd != NULL && sd[0] != '\0' ? sd
                                                               : ".vsched");
    *cache_dir = NULL;
    *msg = NULL;
    const char *ms = vr_config_get(cfg, "cache", "max_size");
    *max_bytes = 2ull << 30;
    if (ms != NULL && vr_cache_parse_size(ms, max_bytes) != VSCHED_OK) {
        unsigned line = vr_config_line(cfg, "cache", "max_size");
        *msg = vr_config_from_set(cfg, "cache", "max_size")
                   ? vr_strfmt("--set: [cache] max_size: expected a size "
                               "such as 2G, 512M, 100K or 0, got '%s'",
                               ms)
                   : vr_strfmt("%s:%u: [cache] max_size: expected a size "
                               "such as 2G, 512M, 100K or 0, got '%s'",
                               vr_config_path(cfg), line, ms);
        free(*state_dir);
        *state_dir = NULL;
        return VSCHED_ECONFIG;
    }
    if (*max_bytes == 0)
        return VSCHED_OK;
    const char *cd = vr_config_get(cfg, "cache", "dir");
    *cache_dir = cd != NULL && cd[0] != '\0'
                     ? vr_path_join(dir, cd)
                     : vr_path_join(*state_dir, "cache");
    return VSCHED_OK;
}

/* The canonical loader root (heap), or NULL when the loader has none. */
static char *vr_loader_root(const vr_config *cfg)
{
    const char *root = vr_config_get(cfg, "loader", "root");
    if (root == NULL || root[0] == '\0')
        return NULL;
    char *abs = vr_path_join(vr_config_dir(cfg), root);
    char *real = abs != NULL ? realpath(abs, NULL) : NULL;
    if (real == NULL)
        return abs;
    free(abs);
    return real;
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
    uint64_t max_bytes = 0;
    int rc = vr_incr_dirs(b->cfg, &in->state_dir, &in->cache_dir,
                          &max_bytes, msg);
    if (rc == VSCHED_OK && !dry)
        rc = vr_lock_take(&in->lock, in->state_dir, !b->cli->no_wait, b->err,
                          msg);
    if (rc == VSCHED_OK)
        rc = vr_state_open(&in->state, in->state_dir,
                           dry ? VR_STATE_READONLY : 0, &in->snap, b->err,
                           msg);
    if (rc == VSCHED_OK && in->cache_dir != NULL && !dry)
        rc = vr_cache_open(&in->cache, in->cache_dir, max_bytes, b->err, msg);
    if (rc != VSCHED_OK) {
        vr_incr_close(in);
        return rc;
    }
    in->root = vr_loader_root(b->cfg);
    in->src = vr_sources_new(in->root, &in->snap);
    in->keys = vr_xcalloc(n_profiles + 1, sizeof *in->keys);
    for (size_t i = 0; i < n_profiles; i++) {
        vr_profile_keys *k = &in->keys[in->n_keys++];
        k->profile = profiles[i];
        k->config = vr_keys_config(b->cfg, b->executor_desc, b->loader_desc,
                                   profiles[i]);
        int failed = 0;
        k->tool = vr_keys_tool(b->executor_desc, b->executor.inst,
                               profiles[i], &failed);
        if (failed != 0)
            fprintf(b->err, "vsched-run: executor '%s' cannot tell its "
                            "identity (%s): what it built before is "
                            "rebuilt\n",
                    b->executor_desc->name, vsched_strerror(failed));
    }
    vr_bind_opts o = {
        .loader = b->loader,
        .executor = b->executor,
        .sources = in->src,
        .cache = in->cache,
        .snap = &in->snap,
        .keys = in->keys,
        .n_keys = in->n_keys,
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
    vr_sources_free(in->src);
    vr_snapshot_free(&in->snap);
    vr_state_close(in->state);
    vr_lock_release(in->lock);
    free(in->keys);
    free(in->root);
    free(in->state_dir);
    free(in->cache_dir);
    free(in);
}
