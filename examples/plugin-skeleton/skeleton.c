/*
 * skeleton.c -- a complete, minimal vsched stage executor.
 *
 * Copy this directory, rename "skeleton" everywhere, and replace the four
 * stage bodies with your own. Build and install it with the Makefile next
 * to this file (`make`, `make install`); see README for how to run it.
 *
 * What it does, so the example builds something you can look at: its
 * sources are text files. In a source, a line
 *
 *     use NAME
 *
 * says "this file uses NAME" (a source name relative to the loader root),
 * and a line
 *
 *     error MESSAGE
 *
 * makes the file fail with MESSAGE as a diagnostic at that line. For each
 * profile the artifact is OUT_DIR/PROFILE/NAME.out: the profile's banner,
 * then the source text.
 *
 * Everything a plugin may use is in <vsched/plugin.h>; read it beside this
 * file, and vsched-plugin(7) for the rules (ownership, threading,
 * versioning, status codes).
 */

/* The only vsched header a plugin needs. It brings <stddef.h> and
 * <stdint.h>, the status codes (VSCHED_OK, VSCHED_E*), and every type used
 * below. `pkg-config --cflags vsched` puts it on the include path. */
#include <vsched/plugin.h>

#include <errno.h>    /* errno, EEXIST */
#include <stdio.h>    /* snprintf */
#include <stdlib.h>   /* malloc, free */
#include <string.h>   /* memcpy, memchr, strlen, strchr */
#include <sys/stat.h> /* mkdir */

/* ------------------------------------------------------------------------
 * Configuration schema: every key the [executor] section may hold. The host
 * validates the section against this table BEFORE create() runs (unknown
 * key, bad type, INT out of range, missing required key are reported with
 * FILE:LINE and exit status 2), so create() never sees a bad value.
 * `vsched-run --describe-plugin skeleton` prints this table.
 *
 * Fields: { name, type, default (INI text, or NULL for none), one line of
 * help, min, max (INT only; 0, 0 = any), flags }.
 */
static const vsched_key skeleton_schema[] = {
    /* A PATH is made absolute by the host, relative to the INI file's
     * directory, before the plugin reads it. REQUIRED: no default; the
     * host refuses a config without it. */
    {"out_dir", VSCHED_KEY_PATH, NULL, "directory receiving the outputs", 0,
     0, VSCHED_KEY_REQUIRED},
    /* PER_PROFILE: may also be set in [profile.NAME] to override the
     * [executor] value for that profile. */
    {"banner", VSCHED_KEY_STRING, "built by skeleton",
     "first line of every output", 0, 0, VSCHED_KEY_PER_PROFILE},
};

/* ------------------------------------------------------------------------
 * The instance: what create() builds from the configuration. The host
 * passes it back as `inst` to every operation. This one is never written
 * after create(), so concurrent calls are safe and the descriptor below
 * says VSCHED_PLUGIN_THREAD_SAFE.
 */
typedef struct skeleton_inst {
    /* Borrowed from the host: valid until destroy(). cfg->get may be
     * called from any thread (it only reads). */
    const vsched_config *cfg;
    /* Our own copy of out_dir (malloc'ed; freed by destroy()). */
    char *out_dir;
} skeleton_inst;

/* The snapshot: what source() parsed out of a file's bytes. It belongs to
 * the plugin (malloc'ed here, freed by skeleton_snapshot_free); the host
 * only holds the pointer and hands it back, borrowed, to extract_deps,
 * analysis and artifact. Several threads may read one snapshot at once, so
 * it is never modified after source() returns. */
typedef struct skeleton_snap {
    size_t len;      /* bytes of text */
    size_t n_uses;   /* entries of use[] */
    char **use;      /* names after "use ", pointing into names[] */
    char *text;      /* a copy of the source bytes */
    char names[];    /* the "use" names, NUL-separated */
} skeleton_snap;

/* ------------------------------------------------------------------------
 * Small helpers.
 */

/* 64-bit FNV-1a, continuing from `h`. Any stable hash does; a real plugin
 * might use xxhash. Hashes only need to change when the content does. */
static uint64_t skeleton_hash(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}
#define SKELETON_HASH_SEED 0xcbf29ce484222325ull

/* A copy of `s` in HOST memory (ctx->alloc). Every string or array a plugin
 * hands to the host through an out-parameter must come from ctx->alloc:
 * the host frees it with ctx->free when it is done with it. */
static char *skeleton_host_strdup(const vsched_ctx *ctx, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ctx->alloc(ctx, n);
    return d != NULL ? memcpy(d, s, n) : NULL;
}

/* Report a diagnostic. Plugins never print: the host collects diagnostics
 * (copying `message`) and shows them with the file's failure. */
static void skeleton_diag(const vsched_ctx *ctx, const char *file,
                          unsigned line, const char *message)
{
    ctx->diag(ctx, VSCHED_SEV_ERROR, file, line, message);
}

/* mkdir -p of the directory part of `path`. The host publishes an output by
 * renaming a temporary file beside it, so the directory must exist. */
static int skeleton_mkdirs(const vsched_ctx *ctx, const char *name,
                           const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    size_t n = slash != NULL ? (size_t)(slash - path) : 0;
    if (n == 0 || n >= sizeof dir)
        return VSCHED_OK;
    memcpy(dir, path, n);
    dir[n] = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            skeleton_diag(ctx, name, 0, "cannot create the output directory");
            return VSCHED_EIO;
        }
        if (c == '\0')
            return VSCHED_OK;
        *p = c;
    }
}

/* ------------------------------------------------------------------------
 * Stage 1, Source: parse the loaded bytes into a snapshot.
 *
 * `bytes` (len of them) are borrowed: the host frees them after the call,
 * so keep a copy of whatever the later stages need. `kind` is the loader's
 * classification ("other" for a .txt under the fs loader). Runs on a CPU
 * worker thread. Set out->snapshot (plugin-owned) and out->content_hash;
 * return VSCHED_OK, or a negative VSCHED_E* status (the file then fails,
 * with the diagnostics reported during the call).
 */
static int skeleton_source(void *inst, const vsched_ctx *ctx,
                           const char *name, const char *kind,
                           const char *bytes, size_t len,
                           vsched_source_out *out)
{
    (void)inst;
    (void)kind;
    /* Size the snapshot: one pass counting "use" lines and name bytes. */
    size_t n_uses = 0, name_bytes = 0;
    unsigned line = 1;
    for (const char *p = bytes, *end = bytes + len; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl != NULL ? nl : end;
        if (e - p > 4 && memcmp(p, "use ", 4) == 0) {
            n_uses++;
            name_bytes += (size_t)(e - p) - 4 + 1;
        } else if (e - p >= 6 && memcmp(p, "error ", 6) == 0) {
            /* A diagnostic with a line number, then failure. */
            char msg[256];
            snprintf(msg, sizeof msg, "%.*s", (int)(e - p - 6), p + 6);
            skeleton_diag(ctx, name, line, msg);
            return VSCHED_EINVAL;
        }
        p = e + 1;
        /* Long operations poll for cancellation (a newer edit superseded
         * this work, or the build was interrupted) and give up early. */
        if (ctx->is_cancelled(ctx))
            return VSCHED_ECANCELLED;
    }

    /* One malloc block: header, then names; the text and the pointer array
     * separately. Plugin memory, so plain malloc (not ctx->alloc). */
    skeleton_snap *s = malloc(sizeof *s + name_bytes);
    if (s == NULL)
        return VSCHED_ENOMEM;
    s->len = len;
    s->n_uses = 0;
    s->text = malloc(len + 1);
    s->use = malloc((n_uses + 1) * sizeof *s->use);
    if (s->text == NULL || s->use == NULL) {
        free(s->text);
        free(s->use);
        free(s);
        return VSCHED_ENOMEM;
    }
    memcpy(s->text, bytes, len);
    s->text[len] = '\0';
    char *w = s->names;
    for (const char *p = bytes, *end = bytes + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl != NULL ? nl : end;
        if (e - p > 4 && memcmp(p, "use ", 4) == 0) {
            size_t n = (size_t)(e - p) - 4;
            memcpy(w, p + 4, n);
            w[n] = '\0';
            s->use[s->n_uses++] = w;
            w += n + 1;
        }
        p = e + 1;
    }
    out->snapshot = s;                           /* plugin-owned from now */
    out->content_hash = skeleton_hash(SKELETON_HASH_SEED, bytes, len);
    return VSCHED_OK;
}

/* Release a snapshot made by skeleton_source. Called by the host exactly
 * once per snapshot, when no stage reads it any more (the file changed, or
 * the scheduler is destroyed). No ctx: it cannot fail or report. */
static void skeleton_snapshot_free(void *inst, void *snapshot)
{
    (void)inst;
    skeleton_snap *s = snapshot;
    if (s != NULL) {
        free(s->text);
        free(s->use);
        free(s);
    }
}

/* ------------------------------------------------------------------------
 * After Source: the file's dependencies, as source names.
 *
 *   deps      files to ingest too (the host loads and parses them);
 *   blockers  files whose Analysis must finish before this file's
 *             Analysis and Artifact run; their analysis hashes are given
 *             to our analysis() in this order.
 *
 * Both arrays and every string in them are ctx->alloc'ed and become the
 * host's. On failure return a negative status and leave nothing allocated
 * (free what you made with ctx->free).
 */
static int skeleton_extract_deps(void *inst, const vsched_ctx *ctx,
                                 const char *name, const void *snapshot,
                                 vsched_deps_out *out)
{
    (void)inst;
    (void)name;
    const skeleton_snap *s = snapshot; /* borrowed */
    memset(out, 0, sizeof *out);
    if (s->n_uses == 0)
        return VSCHED_OK; /* no deps: NULL arrays with count 0 are fine */
    char **deps = ctx->alloc(ctx, s->n_uses * sizeof *deps);
    char **blockers = ctx->alloc(ctx, s->n_uses * sizeof *blockers);
    size_t n = 0;
    int ok = deps != NULL && blockers != NULL;
    for (; ok && n < s->n_uses; n++) {
        /* Here every used file is both a dep and a blocker: our output
         * does not depend on it, but our analysis hash does. */
        deps[n] = skeleton_host_strdup(ctx, s->use[n]);
        blockers[n] = skeleton_host_strdup(ctx, s->use[n]);
        if (deps[n] == NULL || blockers[n] == NULL) {
            ctx->free(ctx, deps[n]);
            ctx->free(ctx, blockers[n]);
            ok = 0;
            break;
        }
    }
    if (!ok) {
        for (size_t i = 0; i < n; i++) {
            ctx->free(ctx, deps[i]);
            ctx->free(ctx, blockers[i]);
        }
        ctx->free(ctx, deps);
        ctx->free(ctx, blockers);
        return VSCHED_ENOMEM;
    }
    out->deps = deps;
    out->n_deps = n;
    out->blockers = blockers;
    out->n_blockers = n;
    return VSCHED_OK;
}

/* ------------------------------------------------------------------------
 * Stage 2, Analysis: the "interface hash" of the file and what it uses.
 *
 * `in` and everything in it are borrowed. in->blocker_hashes holds the
 * analysis hashes of the blockers, in extract_deps order, so a change in a
 * used file changes this hash too. Must be a pure function of its inputs:
 * equal inputs, equal hash (that is what makes incremental builds work).
 */
static int skeleton_analysis(void *inst, const vsched_ctx *ctx,
                             const vsched_analysis_in *in, uint64_t *hash)
{
    (void)inst;
    (void)ctx;
    uint64_t h = skeleton_hash(SKELETON_HASH_SEED, &in->content_hash,
                               sizeof in->content_hash);
    h = skeleton_hash(h, in->blocker_hashes,
                      in->n_blockers * sizeof *in->blocker_hashes);
    *hash = h;
    return VSCHED_OK;
}

/* ------------------------------------------------------------------------
 * Stage 3, Artifact: the output of one file for one profile.
 *
 * Two ways to hand over the output (all fields ctx->alloc'ed, host-owned):
 *   - write it yourself to a temporary file in the same directory as the
 *     final path and set out->tmp_path (compilers do this);
 *   - or, as here, return the bytes (out->bytes, out->len) and leave
 *     tmp_path NULL: the host writes them to a temporary file.
 * Either way the host publishes by rename(2) onto out->path (absolute),
 * so a reader never sees a half-written output; on failure it removes
 * tmp_path. A stage that makes no file leaves path NULL.
 */
static int skeleton_artifact(void *inst, const vsched_ctx *ctx,
                             const vsched_artifact_in *in,
                             vsched_artifact_out *out)
{
    const skeleton_inst *sk = inst;
    const skeleton_snap *s = in->snapshot; /* borrowed */
    memset(out, 0, sizeof *out);

    /* A per-profile key: [profile.NAME] banner when set, else the
     * [executor] value (the host filled in the schema default). get_str
     * (ABI 1.1) does that fallback; VSCHED_ENOENT leaves banner as is. */
    const char *banner = "";
    (void)sk->cfg->get_str(sk->cfg, in->profile, "banner", &banner);

    /* A profile name reaches the file system: refuse anything odd. */
    if (in->profile[0] == '\0' || in->profile[0] == '.' ||
        strchr(in->profile, '/') != NULL) {
        skeleton_diag(ctx, in->name, 0, "invalid profile name");
        return VSCHED_EINVAL;
    }
    size_t plen = strlen(sk->out_dir) + strlen(in->profile) +
                  strlen(in->name) + sizeof "//.out";
    size_t blen = strlen(banner);
    out->path = ctx->alloc(ctx, plen);
    out->bytes = ctx->alloc(ctx, blen + 1 + s->len + 1);
    if (out->path == NULL || out->bytes == NULL) {
        /* The host frees whatever is set, also on failure; clearing here
         * just keeps the example obviously leak-free. */
        ctx->free(ctx, out->path);
        ctx->free(ctx, out->bytes);
        memset(out, 0, sizeof *out);
        return VSCHED_ENOMEM;
    }
    snprintf(out->path, plen, "%s/%s/%s.out", sk->out_dir, in->profile,
             in->name);
    memcpy(out->bytes, banner, blen);
    out->bytes[blen] = '\n';
    memcpy(out->bytes + blen + 1, s->text, s->len);
    out->len = blen + 1 + s->len;
    /* A key of what was produced: analysis hash + profile + banner. */
    uint64_t h = skeleton_hash(SKELETON_HASH_SEED, &in->analysis_hash,
                               sizeof in->analysis_hash);
    h = skeleton_hash(h, in->profile, strlen(in->profile));
    out->artifact_hash = skeleton_hash(h, banner, blen);
    return skeleton_mkdirs(ctx, in->name, out->path);
}

/* ------------------------------------------------------------------------
 * Lifecycle. create() gets the validated configuration (borrowed, valid
 * until destroy) and returns the instance. On failure it returns a
 * negative status and may set *errmsg (ctx->alloc'ed, host-owned) to one
 * line; vsched-run prints "plugin 'skeleton': cannot create executor:
 * <errmsg>" and exits 2. create() and destroy() run on one thread.
 */
static int skeleton_create(const vsched_ctx *ctx, const vsched_config *cfg,
                           void **inst, char **errmsg)
{
    /* cfg->section is "executor"; out_dir is absolute and present (it is
     * REQUIRED, so the host checked). */
    const char *out_dir = cfg->get(cfg, cfg->section, "out_dir");
    if (out_dir == NULL || out_dir[0] != '/') {
        *errmsg = skeleton_host_strdup(ctx, "out_dir must be set");
        return VSCHED_ECONFIG;
    }
    skeleton_inst *sk = malloc(sizeof *sk);
    if (sk == NULL)
        return VSCHED_ENOMEM;
    sk->cfg = cfg;
    sk->out_dir = malloc(strlen(out_dir) + 1);
    if (sk->out_dir == NULL) {
        free(sk);
        return VSCHED_ENOMEM;
    }
    strcpy(sk->out_dir, out_dir);
    *inst = sk;
    return VSCHED_OK;
}

/* Destroy an instance. Every snapshot has been freed by then. */
static void skeleton_destroy(void *inst)
{
    skeleton_inst *sk = inst;
    if (sk != NULL)
        free(sk->out_dir);
    free(sk);
}

/* ------------------------------------------------------------------------
 * The operations table of the executor role. `size` tells the host which
 * fields this plugin knows (fields are only ever appended to the ABI).
 * Every operation but `job` is required.
 */
static const vsched_executor_ops skeleton_executor = {
    .size = sizeof(vsched_executor_ops),
    .source = skeleton_source,
    .extract_deps = skeleton_extract_deps,
    .analysis = skeleton_analysis,
    .artifact = skeleton_artifact,
    .snapshot_free = skeleton_snapshot_free,
    .job = NULL, /* optional: generic graph jobs such as a link step */
};

/* The descriptor: static, read-only, the same pointer on every call. */
static const vsched_plugin skeleton_plugin = {
    .abi_major = VSCHED_PLUGIN_ABI_MAJOR, /* the headers we compiled with */
    .abi_minor = VSCHED_PLUGIN_TARGET_MINOR, /* the oldest host we need */
    .size = sizeof(vsched_plugin),
    .name = "skeleton",                  /* what [executor] plugin = names */
    .version = "1.0",                    /* our own version, free form */
    .description = "example executor: copies text files under a banner",
    .roles = VSCHED_ROLE_EXECUTOR,       /* not a source loader */
    .flags = VSCHED_PLUGIN_THREAD_SAFE,  /* else the host serialises calls */
    .schema = skeleton_schema,
    .n_schema = sizeof skeleton_schema / sizeof skeleton_schema[0],
    .create = skeleton_create,
    .destroy = skeleton_destroy,
    .loader = NULL,                      /* no loader role */
    .executor = &skeleton_executor,
};

/* The one exported symbol. The argument is the module's file name without
 * ".so" (skeleton.so -> skeleton); it expands to
 * skeleton_LTX_vsched_plugin_entry, which the host looks up. Everything
 * else above is static, so nothing else is exported. */
VSCHED_PLUGIN_DEFINE(skeleton) { return &skeleton_plugin; }
