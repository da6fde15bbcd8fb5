/*
 * incl.c -- an example vsched executor for a text language with includes,
 * written against plugin ABI 1.1.
 *
 * Language: a source is text. A line
 *
 *     @include NAME
 *
 * is replaced, in the output, by the expanded text of NAME (a source name
 * relative to the loader root), recursively. A line
 *
 *     @warn MESSAGE
 *
 * is dropped from the output and reported as a warning at its line (the
 * build still succeeds, unless `strict` is on). Include cycles are errors
 * in this language (VSCHED_PLUGIN_CYCLES_FORBIDDEN).
 *
 * What it shows a plugin author, beyond the skeleton:
 *   - artifact() expands nested includes from in->blockers, the snapshots
 *     the analysis hash covers, asking for the closure of the blockers
 *     (artifact_blockers = VSCHED_BLOCKERS_CLOSURE): it never opens a
 *     source itself;
 *   - the output is written to a temporary file of its own (tmp_path),
 *     which the host renames onto `path`;
 *   - typed configuration (get_int, get_bool, get_str with the
 *     [profile.NAME] fallback), the profile list and blame in create();
 *   - a generic job ("book"): the host's link step, concatenating the
 *     artifacts.
 */
#include <vsched/plugin.h>
#if VSCHED_PLUGIN_TARGET_MINOR < 1
#error "incl needs plugin ABI 1.1 (in->blockers, typed getters)"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const vsched_key incl_schema[] = {
    {"out_dir", VSCHED_KEY_PATH, NULL, "directory receiving the outputs", 0,
     0, VSCHED_KEY_REQUIRED},
    {"header", VSCHED_KEY_STRING, "", "first line of every output", 0, 0,
     VSCHED_KEY_PER_PROFILE},
    {"max_depth", VSCHED_KEY_INT, "16", "deepest include nesting", 1, 1000,
     0},
    {"strict", VSCHED_KEY_BOOL, "false", "treat @warn lines as errors", 0, 0,
     VSCHED_KEY_PER_PROFILE},
};

typedef struct incl_inst {
    const vsched_config *cfg; /* borrowed until destroy */
    char *out_dir;
    long long max_depth;
} incl_inst;

/* A parsed source: its text, and the names it includes. */
typedef struct incl_snap {
    char *text;
    size_t len;
    char **inc; /* n_inc names, pointing into text's copy below */
    size_t n_inc;
    char *names;
} incl_snap;

static uint64_t incl_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}
#define INCL_SEED 0xcbf29ce484222325ull

/* The line [p, e) as "@include NAME": NAME's span, else 0. */
static int incl_is_include(const char *p, const char *e, const char **name,
                           size_t *n)
{
    static const char kw[] = "@include ";
    if ((size_t)(e - p) <= sizeof kw - 1 || memcmp(p, kw, sizeof kw - 1))
        return 0;
    *name = p + sizeof kw - 1;
    *n = (size_t)(e - *name);
    return 1;
}

static char *incl_strdup(const vsched_ctx *ctx, const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = ctx->alloc(ctx, n);
    return d != NULL ? memcpy(d, s, n) : NULL;
}

static void incl_snapshot_free(void *inst, void *snapshot)
{
    (void)inst;
    incl_snap *s = snapshot;
    if (s != NULL) {
        free(s->text);
        free(s->inc);
        free(s->names);
        free(s);
    }
}

static int incl_source(void *inst, const vsched_ctx *ctx, const char *name,
                       const char *kind, const char *bytes, size_t len,
                       vsched_source_out *out)
{
    (void)inst, (void)ctx, (void)name, (void)kind;
    incl_snap *s = calloc(1, sizeof *s);
    if (s == NULL)
        return VSCHED_ENOMEM;
    s->text = malloc(len + 1);
    s->names = malloc(len + 1);
    s->inc = malloc((len / 10 + 1) * sizeof *s->inc);
    if (s->text == NULL || s->names == NULL || s->inc == NULL) {
        incl_snapshot_free(NULL, s);
        return VSCHED_ENOMEM;
    }
    memcpy(s->text, bytes, len);
    s->text[len] = '\0';
    s->len = len;
    char *w = s->names;
    for (const char *p = bytes, *end = bytes + len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl != NULL ? nl : end;
        const char *n;
        size_t k;
        if (incl_is_include(p, e, &n, &k)) {
            memcpy(w, n, k);
            w[k] = '\0';
            s->inc[s->n_inc++] = w;
            w += k + 1;
        }
        p = e + 1;
    }
    out->snapshot = s;
    out->content_hash = incl_hash(INCL_SEED, bytes, len);
    return VSCHED_OK;
}

/* Every include is a dependency and a blocker: the file's output depends
 * on the included text, and so on its Analysis. */
static int incl_extract_deps(void *inst, const vsched_ctx *ctx,
                             const char *name, const void *snapshot,
                             vsched_deps_out *out)
{
    (void)inst, (void)name;
    const incl_snap *s = snapshot;
    if (s->n_inc == 0)
        return VSCHED_OK; /* the host zero-filled *out */
    out->deps = ctx->alloc(ctx, s->n_inc * sizeof *out->deps);
    out->blockers = ctx->alloc(ctx, s->n_inc * sizeof *out->blockers);
    if (out->deps == NULL || out->blockers == NULL)
        return VSCHED_ENOMEM; /* the host frees what was handed over */
    for (size_t i = 0; i < s->n_inc; i++) {
        out->deps[i] = incl_strdup(ctx, s->inc[i]);
        out->blockers[i] = incl_strdup(ctx, s->inc[i]);
        out->n_deps = out->n_blockers = i + 1;
        if (out->deps[i] == NULL || out->blockers[i] == NULL)
            return VSCHED_ENOMEM;
    }
    return VSCHED_OK;
}

/* The analysis hash: the file's content and its blockers' hashes, so it
 * covers every file reachable through includes. */
static int incl_analysis(void *inst, const vsched_ctx *ctx,
                         const vsched_analysis_in *in, uint64_t *hash)
{
    (void)inst, (void)ctx;
    uint64_t h = incl_hash(INCL_SEED, &in->content_hash,
                           sizeof in->content_hash);
    *hash = incl_hash(h, in->blocker_hashes,
                      in->n_blockers * sizeof *in->blocker_hashes);
    return VSCHED_OK;
}

/* ---- expansion ----------------------------------------------------------- */

typedef struct incl_buf {
    char *p;
    size_t len, cap;
} incl_buf;

static int incl_put(incl_buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (p == NULL)
            return VSCHED_ENOMEM;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    return VSCHED_OK;
}

/* What one artifact() call expands with. */
typedef struct incl_run {
    const vsched_ctx *ctx;
    const vsched_artifact_in *in;
    long long max_depth;
    int strict, warned_as_error;
    incl_buf out;
} incl_run;

/* The snapshot of blocker `name`, from in->blockers. */
static const incl_snap *incl_find(const incl_run *r, const char *name)
{
    for (size_t i = 0; i < r->in->n_blockers; i++)
        if (strcmp(r->in->blockers[i].name, name) == 0)
            return r->in->blockers[i].snapshot;
    return NULL;
}

static int incl_expand(incl_run *r, const char *name, const incl_snap *s,
                       long long depth)
{
    const vsched_ctx *ctx = r->ctx;
    unsigned line = 1;
    for (const char *p = s->text, *end = s->text + s->len; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl != NULL ? nl : end;
        const char *n;
        size_t k;
        int rc = VSCHED_OK;
        if (incl_is_include(p, e, &n, &k)) {
            char inc[4096];
            snprintf(inc, sizeof inc, "%.*s", (int)k, n);
            const incl_snap *b = incl_find(r, inc);
            if (depth >= r->max_depth) {
                ctx->diag(ctx, VSCHED_SEV_ERROR, name, line,
                          "includes nested deeper than max_depth");
                return VSCHED_EINVAL;
            }
            if (b == NULL) {
                /* Cannot happen: every include is a blocker, and the host
                 * hands the closure. Say so rather than guess. */
                ctx->diag(ctx, VSCHED_SEV_ERROR, name, line,
                          "included file not among the blockers");
                return VSCHED_EINVAL;
            }
            rc = incl_expand(r, inc, b, depth + 1);
        } else if (e - p >= 6 && memcmp(p, "@warn ", 6) == 0) {
            char msg[512];
            snprintf(msg, sizeof msg, "%.*s", (int)(e - p - 6), p + 6);
            ctx->diag(ctx, r->strict ? VSCHED_SEV_ERROR : VSCHED_SEV_WARNING,
                      name, line, msg);
            r->warned_as_error |= r->strict;
        } else {
            rc = incl_put(&r->out, p, (size_t)(e - p));
            if (rc == VSCHED_OK)
                rc = incl_put(&r->out, "\n", 1);
        }
        if (rc != VSCHED_OK)
            return rc;
        p = e + 1;
    }
    return VSCHED_OK;
}

/* mkdir -p of path's directory. */
static int incl_mkdirs(const char *path)
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
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            return VSCHED_EIO;
        *p = c;
        if (c == '\0')
            return VSCHED_OK;
    }
}

/* Write the expansion to a temporary file beside `path`: out->tmp_path
 * (host-owned); the host renames it onto out->path, or removes it. */
static int incl_write_tmp(const vsched_ctx *ctx, const incl_buf *b,
                          vsched_artifact_out *out)
{
    size_t n = strlen(out->path) + sizeof ".tmp.XXXXXX";
    out->tmp_path = ctx->alloc(ctx, n);
    if (out->tmp_path == NULL)
        return VSCHED_ENOMEM;
    snprintf(out->tmp_path, n, "%s.tmp.XXXXXX", out->path);
    int fd = mkstemp(out->tmp_path);
    if (fd < 0) {
        ctx->free(ctx, out->tmp_path);
        out->tmp_path = NULL;
        return VSCHED_EIO;
    }
    size_t off = 0;
    while (off < b->len) {
        ssize_t w = write(fd, b->p + off, b->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    int ok = off == b->len;
    ok &= fchmod(fd, 0644) == 0;
    ok &= close(fd) == 0;
    return ok ? VSCHED_OK : VSCHED_EIO; /* the host removes tmp_path */
}

static int incl_artifact(void *inst, const vsched_ctx *ctx,
                         const vsched_artifact_in *in,
                         vsched_artifact_out *out)
{
    const incl_inst *x = inst;
    const vsched_config *cfg = x->cfg;
    if (strchr(in->profile, '/') != NULL || in->profile[0] == '.') {
        ctx->diag(ctx, VSCHED_SEV_ERROR, in->name, 0, "invalid profile name");
        return VSCHED_EINVAL;
    }
    incl_run r = {ctx, in, x->max_depth, 0, 0, {NULL, 0, 0}};
    const char *header = "";
    (void)cfg->get_str(cfg, in->profile, "header", &header);
    (void)cfg->get_bool(cfg, in->profile, "strict", &r.strict);

    size_t n = strlen(x->out_dir) + strlen(in->profile) + strlen(in->name) +
               sizeof "//.out";
    out->path = ctx->alloc(ctx, n);
    if (out->path == NULL)
        return VSCHED_ENOMEM;
    snprintf(out->path, n, "%s/%s/%s.out", x->out_dir, in->profile, in->name);

    int rc = header[0] != '\0' ? incl_put(&r.out, header, strlen(header))
                               : VSCHED_OK;
    if (rc == VSCHED_OK && header[0] != '\0')
        rc = incl_put(&r.out, "\n", 1);
    if (rc == VSCHED_OK)
        rc = incl_expand(&r, in->name, in->snapshot, 0);
    if (rc == VSCHED_OK && r.warned_as_error)
        rc = VSCHED_EINVAL;
    if (rc == VSCHED_OK && incl_mkdirs(out->path) != VSCHED_OK) {
        ctx->diag(ctx, VSCHED_SEV_ERROR, in->name, 0,
                  "cannot create the output directory");
        rc = VSCHED_EIO;
    }
    if (rc == VSCHED_OK)
        rc = incl_write_tmp(ctx, &r.out, out);
    if (rc == VSCHED_OK)
        out->artifact_hash = incl_hash(incl_hash(INCL_SEED, &in->analysis_hash,
                                                 sizeof in->analysis_hash),
                                       r.out.p, r.out.len);
    free(r.out.p);
    return rc; /* on failure the host frees path and removes tmp_path */
}

/* The "book" job: the artifacts (in->inputs) concatenated, as bytes. */
static int incl_job(void *inst, const vsched_ctx *ctx, const vsched_job_in *in,
                    vsched_artifact_out *out)
{
    const incl_inst *x = inst;
    incl_buf b = {NULL, 0, 0};
    int rc = VSCHED_OK;
    for (size_t i = 0; i < in->n_inputs && rc == VSCHED_OK; i++) {
        FILE *f = fopen(in->inputs[i], "rb"); /* an output, not a source */
        if (f == NULL) {
            ctx->diag(ctx, VSCHED_SEV_ERROR, in->inputs[i], 0,
                      "cannot read this artifact");
            rc = VSCHED_EIO;
            break;
        }
        char chunk[4096];
        size_t k;
        while (rc == VSCHED_OK && (k = fread(chunk, 1, sizeof chunk, f)) > 0)
            rc = incl_put(&b, chunk, k);
        fclose(f);
    }
    size_t n = strlen(x->out_dir) + strlen(in->profile) + strlen(in->name) +
               sizeof "//.book";
    if (rc == VSCHED_OK && (out->path = ctx->alloc(ctx, n)) == NULL)
        rc = VSCHED_ENOMEM;
    if (rc == VSCHED_OK) {
        snprintf(out->path, n, "%s/%s/%s.book", x->out_dir, in->profile,
                 in->name);
        out->bytes = ctx->alloc(ctx, b.len + 1);
        if (out->bytes == NULL)
            rc = VSCHED_ENOMEM;
    }
    if (rc == VSCHED_OK) {
        if (b.len > 0)
            memcpy(out->bytes, b.p, b.len);
        out->len = b.len;
        out->artifact_hash = incl_hash(INCL_SEED, b.p != NULL ? b.p : "",
                                       b.len);
        rc = incl_mkdirs(out->path);
    }
    free(b.p);
    return rc;
}

static int incl_create(const vsched_ctx *ctx, const vsched_config *cfg,
                       void **inst, char **errmsg)
{
    /* This plugin declares 1.1 (VSCHED_PLUGIN_TARGET_MINOR), so no host
     * older than 1.1 loads it: the 1.1 members of cfg are there. */
    const char *out_dir = NULL;
    long long depth = 16;
    if (cfg->get_str(cfg, NULL, "out_dir", &out_dir) != VSCHED_OK ||
        cfg->get_int(cfg, NULL, "max_depth", &depth) != VSCHED_OK)
        return VSCHED_ECONFIG; /* the schema guarantees both */
    /* A header starting with '@' would read as a directive: refuse it,
     * pointing at the line that sets it. */
    for (size_t i = 0; i <= cfg->n_profiles; i++) {
        const char *p = i < cfg->n_profiles ? cfg->profiles[i] : NULL;
        const char *h = NULL;
        if (cfg->get_str(cfg, p, "header", &h) == VSCHED_OK && h[0] == '@') {
            char section[256];
            snprintf(section, sizeof section, "profile.%s", p ? p : "");
            int from_profile = p != NULL &&
                               cfg->get(cfg, section, "header") != NULL &&
                               cfg->get(cfg, section, "header")[0] != '\0';
            cfg->blame(cfg, from_profile ? section : NULL, "header");
            *errmsg = incl_strdup(ctx, "header: must not start with '@' (it "
                                       "would read as a directive)");
            return VSCHED_ECONFIG;
        }
    }
    incl_inst *x = calloc(1, sizeof *x);
    if (x == NULL || (x->out_dir = malloc(strlen(out_dir) + 1)) == NULL) {
        free(x);
        return VSCHED_ENOMEM;
    }
    strcpy(x->out_dir, out_dir);
    x->cfg = cfg;
    x->max_depth = depth;
    if (cfg->n_profiles == 0)
        ctx->diag(ctx, VSCHED_SEV_NOTE, NULL, 0,
                  "no [profile.NAME] sections: every profile uses [executor]");
    *inst = x;
    return VSCHED_OK;
}

static void incl_destroy(void *inst)
{
    incl_inst *x = inst;
    if (x != NULL)
        free(x->out_dir);
    free(x);
}

static const vsched_executor_ops incl_executor = {
    .size = sizeof(vsched_executor_ops),
    .source = incl_source,
    .extract_deps = incl_extract_deps,
    .analysis = incl_analysis,
    .artifact = incl_artifact,
    .snapshot_free = incl_snapshot_free,
    .job = incl_job,
    .identity = NULL,
    .artifact_blockers = VSCHED_BLOCKERS_CLOSURE, /* nested includes */
};

static const vsched_plugin incl_plugin = {
    .abi_major = VSCHED_PLUGIN_ABI_MAJOR,
    .abi_minor = VSCHED_PLUGIN_TARGET_MINOR, /* 1.1: in->blockers, getters */
    .size = sizeof(vsched_plugin),
    .name = "incl",
    .version = "1.0",
    .description = "example executor: text with nested @include lines",
    .roles = VSCHED_ROLE_EXECUTOR,
    .flags = VSCHED_PLUGIN_THREAD_SAFE | VSCHED_PLUGIN_CYCLES_FORBIDDEN,
    .schema = incl_schema,
    .n_schema = sizeof incl_schema / sizeof incl_schema[0],
    .create = incl_create,
    .destroy = incl_destroy,
    .loader = NULL,
    .executor = &incl_executor,
};

VSCHED_PLUGIN_DEFINE(incl) { return &incl_plugin; }
