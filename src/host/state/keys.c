/*
 * keys -- configuration, tool, artifact and job keys; see keys.h.
 */
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "common/util.h"
#include "config/plugin_host.h"
#include "state/keys.h"

/* Feed a string and its terminator (NULL as a distinct marker). */
static void vr_feed(XXH3_state_t *st, const char *s)
{
    if (s == NULL)
        XXH3_64bits_update(st, "\x01", 2);
    else
        XXH3_64bits_update(st, s, strlen(s) + 1);
}

static void vr_feed128(XXH3_state_t *st, const char *s)
{
    if (s == NULL)
        XXH3_128bits_update(st, "\x01", 2);
    else
        XXH3_128bits_update(st, s, strlen(s) + 1);
}

/* Indices of schema[0..n) sorted by key name. */
static size_t *vr_sorted(const vsched_key *schema, size_t n)
{
    size_t *ix = vr_xmalloc((n + 1) * sizeof *ix);
    for (size_t i = 0; i < n; i++)
        ix[i] = i;
    for (size_t i = 1; i < n; i++)
        for (size_t j = i;
             j > 0 && strcmp(schema[ix[j - 1]].name, schema[ix[j]].name) > 0;
             j--) {
            size_t t = ix[j];
            ix[j] = ix[j - 1];
            ix[j - 1] = t;
        }
    return ix;
}

/* Feed every key of `d`'s schema as the plugin sees it in `section` (and,
 * for per-profile keys, [profile.P] first when profile is not NULL). */
static void vr_feed_section(XXH3_state_t *st, const vr_config *cfg,
                            const vsched_plugin *d, const char *section,
                            const char *profile)
{
    char *psec = profile != NULL ? vr_strfmt("profile.%s", profile) : NULL;
    size_t *ix = vr_sorted(d->schema, d->n_schema);
    vr_feed(st, d->name);
    for (size_t i = 0; i < d->n_schema; i++) {
        const vsched_key *k = &d->schema[ix[i]];
        const char *v = NULL;
        if (psec != NULL && (k->flags & VSCHED_KEY_PER_PROFILE))
            v = vr_config_get(cfg, psec, k->name);
        if (v == NULL)
            v = vr_config_get(cfg, section, k->name);
        if (v == NULL)
            v = k->dflt;
        char *abs = NULL;
        if (v != NULL && k->type == VSCHED_KEY_PATH && v[0] != '\0')
            abs = vr_path_join(vr_config_dir(cfg), v);
        vr_feed(st, k->name);
        vr_feed(st, abs != NULL ? abs : v);
        free(abs);
    }
    free(ix);
    free(psec);
}

/* Contract: see keys.h. */
uint64_t vr_keys_config(const vr_config *cfg, const vsched_plugin *executor,
                        const vsched_plugin *loader, const char *profile)
{
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL)
        abort();
    XXH3_64bits_reset(st);
    vr_feed_section(st, cfg, executor, "executor", profile);
    if (loader != NULL)
        vr_feed_section(st, cfg, loader, "loader", NULL);
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}

/* Contract: see keys.h. */
uint64_t vr_keys_tool(const vsched_plugin *executor, void *inst,
                      const char *profile, int *failed)
{
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL)
        abort();
    XXH3_64bits_reset(st);
    vr_feed(st, executor->name);
    vr_feed(st, executor->version);
    const vsched_executor_ops *x = executor->executor;
    int rc = 0;
    if (x != NULL && VR_OPS_COVERS(x, vsched_executor_ops, identity) &&
        x->identity != NULL) {
        uint64_t id = 0;
        rc = x->identity(inst, vr_plugin_host_ctx(), profile, &id);
        if (rc == 0) {
            XXH3_64bits_update(st, "identity", 9);
            XXH3_64bits_update(st, &id, sizeof id);
        } else {
            XXH3_64bits_update(st, "unknown", 8);
            XXH3_64bits_update(st, &rc, sizeof rc);
        }
    }
    if (failed != NULL)
        *failed = rc;
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}

static void vr_digest128(XXH3_state_t *st, uint8_t key[16])
{
    XXH128_hash_t h = XXH3_128bits_digest(st);
    XXH128_canonical_t c;
    XXH128_canonicalFromHash(&c, h);
    memcpy(key, c.digest, 16);
}

/* Contract: see keys.h. */
void vr_keys_artifact(uint8_t key[16], const char *name, const char *profile,
                      uint64_t analysis, uint64_t config, uint64_t tool)
{
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL)
        abort();
    XXH3_128bits_reset(st);
    vr_feed128(st, "artifact");
    vr_feed128(st, name);
    vr_feed128(st, profile);
    uint64_t v[3] = {analysis, config, tool};
    XXH3_128bits_update(st, v, sizeof v);
    vr_digest128(st, key);
    XXH3_freeState(st);
}

/* Contract: see keys.h. */
void vr_keys_job(uint8_t key[16], const char *kind, const char *name,
                 const char *profile, uint64_t config, uint64_t tool,
                 const char *const *paths, const uint64_t *hashes, size_t n)
{
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL)
        abort();
    XXH3_128bits_reset(st);
    vr_feed128(st, "job");
    vr_feed128(st, kind);
    vr_feed128(st, name);
    vr_feed128(st, profile);
    uint64_t v[3] = {config, tool, (uint64_t)n};
    XXH3_128bits_update(st, v, sizeof v);
    for (size_t i = 0; i < n; i++) {
        vr_feed128(st, paths[i]);
        XXH3_128bits_update(st, &hashes[i], sizeof hashes[i]);
    }
    vr_digest128(st, key);
    XXH3_freeState(st);
}

/* Contract: see keys.h. */
void vr_keys_hex(const uint8_t key[16], char buf[33])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        buf[2 * i] = hex[key[i] >> 4];
        buf[2 * i + 1] = hex[key[i] & 15];
    }
    buf[32] = '\0';
}
