/*
 * cc.c -- the `cc` executor: C/C++ compiles with include tracking.
 *
 * Source scans a file's #include directives into dependencies that are also
 * blockers, so a file's Analysis hash covers every header it reaches
 * (scan.c). Artifact compiles with per-profile flags through an optional
 * launcher, and the "link" job links (compile.c). This file holds the
 * descriptor, configuration and the hashing stages.
 *
 * Configuration: the executor section's keys are read at create(); the
 * per-profile keys (cflags, ldflags, libs) are looked up in
 * [profile.NAME] the first time a profile is used and cached.
 *
 * Thread safety: thread-safe; see cc_inst in cc.h for the lock.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "cc.h"

static const vsched_key cc_schema[] = {
    {"compiler", VSCHED_KEY_STRING, "cc", "compiler driver to run", 0, 0, 0},
    {"cflags", VSCHED_KEY_LIST, "", "compile flags", 0, 0,
     VSCHED_KEY_PER_PROFILE},
    {"include_dirs", VSCHED_KEY_LIST, "",
     "include directories, as source names relative to the loader root", 0, 0,
     0},
    {"source_root", VSCHED_KEY_PATH, NULL,
     "directory the source names are relative to (default: [loader] root)", 0,
     0, 0},
    {"out_dir", VSCHED_KEY_PATH, NULL, "directory receiving the outputs", 0, 0,
     VSCHED_KEY_REQUIRED},
    {"launcher", VSCHED_KEY_LIST, "",
     "command prefixed to compiles: ccache, distcc or ccache distcc", 0, 0, 0},
    {"distcc_hosts", VSCHED_KEY_STRING, NULL,
     "distcc host list for the compiles (default: DISTCC_HOSTS, "
     "~/.distcc/hosts, /etc/distcc/hosts)",
     0, 0, 0},
    {"fallback", VSCHED_KEY_BOOL, NULL,
     "distcc compiles locally when a host fails (DISTCC_FALLBACK; unset: "
     "inherited)",
     0, 0, 0},
    {"ldflags", VSCHED_KEY_LIST, "", "link flags", 0, 0,
     VSCHED_KEY_PER_PROFILE},
    {"libs", VSCHED_KEY_LIST, "", "libraries, after the objects", 0, 0,
     VSCHED_KEY_PER_PROFILE},
    {"ar", VSCHED_KEY_STRING, "ar",
     "archiver of static targets (run as ar rcsD LIB OBJECTS...)", 0, 0, 0},
    {"timeout", VSCHED_KEY_INT, "0",
     "seconds before a compile or link is killed (0 = none)", 0, 604800, 0},
};

/* ---- helpers shared by the cc files -------------------------------------- */

/* Contract in cc.h. */
int cc__words_parse(const char *s, cc_words *w)
{
    memset(w, 0, sizeof *w);
    if ((w->buf = strdup(s != NULL ? s : "")) == NULL)
        return VSCHED_ENOMEM;
    size_t cap = strlen(w->buf) / 2 + 2;
    if ((w->v = calloc(cap, sizeof(char *))) == NULL) {
        cc__words_free(w);
        return VSCHED_ENOMEM;
    }
    char *save = NULL;
    for (char *t = strtok_r(w->buf, " \t\r\n", &save); t != NULL;
         t = strtok_r(NULL, " \t\r\n", &save))
        w->v[w->n++] = t;
    return VSCHED_OK;
}

/* Contract in cc.h. */
void cc__words_free(cc_words *w)
{
    free(w->v);
    free(w->buf);
    memset(w, 0, sizeof *w);
}

/* ---- profiles ------------------------------------------------------------ */

static void cc_hash_words(XXH3_state_t *st, const cc_words *w)
{
    for (size_t i = 0; i < w->n; i++)
        XXH3_64bits_update(st, w->v[i], strlen(w->v[i]) + 1);
    XXH3_64bits_update(st, "\n", 1);
}

static void cc_profile_free(cc_profile *p)
{
    cc__words_free(&p->cflags);
    cc__words_free(&p->ldflags);
    cc__words_free(&p->libs);
    free(p->name);
    free(p);
}

/* A profile's value of `key`: [profile.NAME] when set, else the
 * executor's. Caller holds cc->lock (it serialises cfg calls). */
static const char *cc_profile_key(const cc_inst *cc, const char *profile,
                                  const char *key)
{
    char section[256];
    const vsched_config *cfg = cc->cfg;
    const char *v = NULL;
    if (profile[0] != '\0' &&
        (size_t)snprintf(section, sizeof section, "profile.%s", profile) <
            sizeof section)
        v = cfg->get(cfg, section, key);
    return v != NULL ? v : cfg->get(cfg, cfg->section, key);
}

static cc_profile *cc_profile_new(const cc_inst *cc, const char *profile)
{
    cc_profile *p = calloc(1, sizeof *p);
    XXH3_state_t *st = XXH3_createState();
    if (p == NULL || st == NULL || (p->name = strdup(profile)) == NULL ||
        cc__words_parse(cc_profile_key(cc, profile, "cflags"), &p->cflags) ||
        cc__words_parse(cc_profile_key(cc, profile, "ldflags"), &p->ldflags) ||
        cc__words_parse(cc_profile_key(cc, profile, "libs"), &p->libs)) {
        if (p != NULL)
            cc_profile_free(p);
        XXH3_freeState(st);
        return NULL;
    }
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, cc->compiler, strlen(cc->compiler) + 1);
    XXH3_64bits_update(st, cc->root, strlen(cc->root) + 1);
    cc_hash_words(st, &cc->include_dirs);
    cc_hash_words(st, &p->cflags);
    p->compile_key = XXH3_64bits_digest(st);
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, cc->compiler, strlen(cc->compiler) + 1);
    cc_hash_words(st, &p->ldflags);
    cc_hash_words(st, &p->libs);
    p->link_key = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return p;
}

/* Contract in cc.h. */
const cc_profile *cc__profile(cc_inst *cc, const char *profile)
{
    if (profile == NULL)
        profile = "";
    pthread_mutex_lock(&cc->lock);
    cc_profile *p = cc->profiles;
    while (p != NULL && strcmp(p->name, profile) != 0)
        p = p->next;
    if (p == NULL && (p = cc_profile_new(cc, profile)) != NULL) {
        p->next = cc->profiles;
        cc->profiles = p;
    }
    pthread_mutex_unlock(&cc->lock);
    return p;
}

/* ---- stages -------------------------------------------------------------- */

static int cc_source(void *inst, const vsched_ctx *ctx, const char *name,
                     const char *kind, const char *bytes, size_t len,
                     vsched_source_out *out)
{
    int scan =
        kind != NULL && (strcmp(kind, "c") == 0 || strcmp(kind, "cxx") == 0 ||
                         strcmp(kind, "header") == 0);
    cc_snap *snap;
    int rc = cc__scan(inst, ctx, name, scan ? bytes : NULL, len, &snap);
    if (rc != VSCHED_OK)
        return rc;
    snprintf(snap->kind, sizeof snap->kind, "%s", kind != NULL ? kind : "");
    snap->content_hash = XXH3_64bits(bytes, len);
    out->snapshot = snap;
    out->content_hash = snap->content_hash;
    return VSCHED_OK;
}

static int cc_extract_deps(void *inst, const vsched_ctx *ctx, const char *name,
                           const void *snapshot, vsched_deps_out *out)
{
    const cc_snap *s = snapshot;
    return vp_deps_out(ctx, s->inc, s->n, out);
}

static int cc_analysis(void *inst, const vsched_ctx *ctx,
                       const vsched_analysis_in *in, uint64_t *hash)
{
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL)
        return VSCHED_ENOMEM;
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, &in->content_hash, sizeof in->content_hash);
    if (in->n_blockers > 0)
        XXH3_64bits_update(st, in->blocker_hashes,
                           in->n_blockers * sizeof *in->blocker_hashes);
    *hash = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return VSCHED_OK;
}

static void cc_snapshot_free(void *inst, void *snapshot)
{
    free(snapshot);
}

/* ---- lifecycle ----------------------------------------------------------- */

/* Normalise each include dir in place; -1 (and its index in *bad) when
 * one is absolute or climbs above the root. */
static int cc_normalise_dirs(cc_words *w, size_t *bad)
{
    for (size_t i = 0; i < w->n; i++) {
        *bad = i;
        if (vp_normalise_dir(w->v[i]) != 0)
            return -1;
    }
    return 0;
}

static void cc_destroy(void *inst)
{
    cc_inst *cc = inst;
    if (cc == NULL)
        return;
    for (cc_profile *p = cc->profiles, *next; p != NULL; p = next) {
        next = p->next;
        cc_profile_free(p);
    }
    cc__launcher_free(cc);
    cc__words_free(&cc->include_dirs);
    free(cc->compiler);
    free(cc->ar);
    free(cc->root);
    free(cc->out_dir);
    pthread_mutex_destroy(&cc->lock);
    vp_sweep_gate_fini(&cc->sweep);
    free(cc);
}

/* Read the executor section into `cc`; NULL or a static reason. */
static const char *cc_configure(cc_inst *cc, const vsched_config *cfg,
                                char *why, size_t cap)
{
    const char *sec = cfg->section, *v;
    v = cfg->get(cfg, sec, "compiler");
    if (v == NULL || v[0] == '\0')
        return "compiler is empty";
    if ((cc->compiler = strdup(v)) == NULL)
        return "out of memory";
    v = cfg->get(cfg, sec, "ar");
    if (v == NULL || v[0] == '\0')
        return "[executor] ar: the archiver is empty; set ar = ar";
    if ((cc->ar = strdup(v)) == NULL)
        return "out of memory";
    if ((v = cfg->get(cfg, sec, "out_dir")) == NULL || v[0] == '\0')
        return "out_dir is not set";
    if ((cc->out_dir = vp_absolute(cfg->config_dir, v)) == NULL)
        return "out of memory";
    if ((v = cfg->get(cfg, sec, "source_root")) == NULL &&
        (v = cfg->get(cfg, "loader", "root")) == NULL)
        return "set source_root, or root in [loader]";
    char *abs = vp_absolute(cfg->config_dir, v);
    if (abs == NULL)
        return "out of memory";
    char ebuf[128];
    if ((cc->root = realpath(abs, NULL)) == NULL)
        snprintf(why, cap, "source root '%s': %s", abs,
                 strerror_r(errno, ebuf, sizeof ebuf));
    free(abs);
    if (cc->root == NULL)
        return why;
    size_t bad;
    if (cc__words_parse(cfg->get(cfg, sec, "include_dirs"), &cc->include_dirs))
        return "out of memory";
    if (cc_normalise_dirs(&cc->include_dirs, &bad) != 0) {
        snprintf(why, cap, "include_dirs: '%s' is not inside the source root",
                 cc->include_dirs.v[bad]);
        return why;
    }
    v = cfg->get(cfg, sec, "timeout");
    cc->timeout = v != NULL ? strtoll(v, NULL, 10) : 0;
    return cc__launcher_configure(cc, cfg, why, cap);
}

static int cc_create(const vsched_ctx *ctx, const vsched_config *cfg,
                     void **inst, char **errmsg)
{
    cc_inst *cc = calloc(1, sizeof *cc);
    if (cc == NULL)
        return VSCHED_ENOMEM;
    pthread_mutex_init(&cc->lock, NULL);
    vp_sweep_gate_init(&cc->sweep);
    cc->cfg = cfg;
    char why[PATH_MAX + 128], msg[PATH_MAX + 160];
    const char *err = cc_configure(cc, cfg, why, sizeof why);
    if (err != NULL) {
        snprintf(msg, sizeof msg, "cc: [%s] %s", cfg->section, err);
        *errmsg = vp_host_strdup(ctx, msg);
        cc_destroy(cc);
        return VSCHED_ECONFIG;
    }
    *inst = cc;
    return VSCHED_OK;
}

static const vsched_executor_ops cc_executor = {
    .size = sizeof(vsched_executor_ops),
    .source = cc_source,
    .extract_deps = cc_extract_deps,
    .analysis = cc_analysis,
    .artifact = cc__artifact,
    .snapshot_free = cc_snapshot_free,
    .job = cc__job,
    .identity = cc__identity,
    .command = cc__command,
};

static const vsched_plugin cc_plugin = {
    .abi_major = VSCHED_PLUGIN_ABI_MAJOR,
    .abi_minor = VSCHED_PLUGIN_ABI_MINOR,
    .size = sizeof(vsched_plugin),
    .name = "cc",
    .version = "1.1",
    .description = "C/C++ compiler executor with #include tracking",
    .roles = VSCHED_ROLE_EXECUTOR,
    .flags = VSCHED_PLUGIN_THREAD_SAFE,
    .schema = cc_schema,
    .n_schema = sizeof cc_schema / sizeof cc_schema[0],
    .create = cc_create,
    .destroy = cc_destroy,
    .executor = &cc_executor,
};

/* The cc plugin's descriptor (static storage, never NULL). */
VSCHED_PLUGIN_DEFINE(cc)
{
    return &cc_plugin;
}
