/*
 * rogue -- a test executor that misbehaves on the files that ask it to,
 * for the bad-input corpus (tests/rel_corpus.sh) and isolation tests.
 *
 * A source's lines of the form "rogue: WORD [ARG]" choose what happens:
 *
 *   dep NAME          NAME is a dependency and a blocker (a header)
 *   crash OP          SIGSEGV inside OP (source, deps, analysis, artifact)
 *   abort OP          abort() inside OP
 *   hang OP           sleep 3600 s inside OP (ignoring cancellation)
 *   fail OP           return VSCHED_ETOOL with a diagnostic from OP
 *   exit OP           _exit(7) inside OP (a plugin that calls exit)
 *   garbage OP        write junk to every socket descriptor of the
 *                     process, then go on (a plugin scribbling on a
 *                     descriptor it does not own: under [executor] isolate
 *                     the worker's channel to the host)
 *   warn OP           a warning diagnostic from OP, then go on
 *   read NAME         artifact appends the bytes of NAME, found through
 *                     ctx->realpath and read through ctx->load (ABI 1.1)
 *   null-deps         extract_deps returns deps = NULL with n_deps = 3
 *   null-blockers     extract_deps returns blockers = NULL, n_blockers = 2
 *   null-dep          one dependency name is NULL
 *   empty-dep         one dependency name is ""
 *   escape-dep        one dependency is "../../../../etc/passwd"
 *   self-dep          the file depends on itself
 *   many-deps N       N dependencies gen/0 ... gen/N-1 (missing files)
 *   ctrl-dep          one dependency name holds an escape character
 *   no-output         artifact returns a path but neither bytes nor tmp_path
 *   bytes-no-path     artifact returns bytes but no path
 *   null-out-deps     artifact returns out->deps = NULL with n_deps = 2
 *   missing-tmp       artifact names a tmp_path that does not exist
 *
 * Any other file builds: artifact returns its bytes for the host to write
 * to out_dir/PROFILE/NAME.out. Built twice: `rogue` (blocker cycles build
 * as one unit) and `rogue_strict` (VSCHED_PLUGIN_CYCLES_FORBIDDEN).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vsched/plugin.h>

#ifdef ROGUE_STRICT
#define ROGUE_NAME "rogue_strict"
#define ROGUE_FLAGS                                                           \
    (VSCHED_PLUGIN_THREAD_SAFE | VSCHED_PLUGIN_CYCLES_FORBIDDEN)
#else
#define ROGUE_NAME "rogue"
#define ROGUE_FLAGS VSCHED_PLUGIN_THREAD_SAFE
#endif

static const vsched_key rogue_schema[] = {
    {"out_dir", VSCHED_KEY_PATH, NULL, "directory receiving the outputs", 0, 0,
     VSCHED_KEY_REQUIRED},
};

typedef struct rogue_inst {
    char *out_dir;
} rogue_inst;

/* The snapshot: the source's bytes, NUL-terminated. */
typedef struct rogue_snap {
    size_t len;
    char text[];
} rogue_snap;

static char *rogue_strdup(const vsched_ctx *ctx, const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = ctx->alloc(ctx, n);
    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

/* 1 if the text holds the directive "rogue: WORD" (then *arg is what
 * follows it on the line, up to 255 bytes). */
static int rogue_has(const char *text, const char *word, char *arg)
{
    size_t wl = strlen(word);
    for (const char *p = text; (p = strstr(p, "rogue: ")) != NULL; p++) {
        const char *w = p + 7;
        if (strncmp(w, word, wl) != 0 ||
            (w[wl] != ' ' && w[wl] != '\n' && w[wl] != '\0'))
            continue;
        if (arg != NULL) {
            const char *a = w[wl] == ' ' ? w + wl + 1 : w + wl;
            size_t n = strcspn(a, "\n");
            n = n > 255 ? 255 : n;
            memcpy(arg, a, n);
            arg[n] = '\0';
        }
        return 1;
    }
    return 0;
}

/* Misbehave in `op` as the text asks; a status or 0. */
static int rogue_act(const vsched_ctx *ctx, const char *name, const char *text,
                     const char *op)
{
    char arg[256];
    if (rogue_has(text, "crash", arg) && strcmp(arg, op) == 0) {
        volatile int *p = NULL;
        *p = 1;
        raise(SIGSEGV);
    }
    if (rogue_has(text, "abort", arg) && strcmp(arg, op) == 0)
        abort();
    if (rogue_has(text, "hang", arg) && strcmp(arg, op) == 0)
        sleep(3600);
    if (rogue_has(text, "exit", arg) && strcmp(arg, op) == 0)
        _exit(7);
    if (rogue_has(text, "garbage", arg) && strcmp(arg, op) == 0) {
        static const char junk[16] = "\xff\xff\xff\x7fgarbage!garb";
        for (int fd = 0; fd < 64; fd++) {
            struct stat st;
            if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
                write(fd, junk, sizeof junk) < 0)
                continue;
        }
    }
    if (rogue_has(text, "warn", arg) && strcmp(arg, op) == 0)
        ctx->diag(ctx, VSCHED_SEV_WARNING, name, 2, "rogue: warning as asked");
    if (rogue_has(text, "fail", arg) && strcmp(arg, op) == 0) {
        ctx->diag(ctx, VSCHED_SEV_ERROR, name, 1, "rogue: failing as asked");
        return VSCHED_ETOOL;
    }
    return 0;
}

static int rogue_create(const vsched_ctx *ctx, const vsched_config *cfg,
                        void **inst, char **errmsg)
{
    (void)errmsg;
    const char *out = cfg->get(cfg, cfg->section, "out_dir");
    rogue_inst *r = calloc(1, sizeof *r);
    if (r == NULL || (r->out_dir = strdup(out)) == NULL) {
        free(r);
        return VSCHED_ENOMEM;
    }
    (void)ctx;
    *inst = r;
    return 0;
}

static void rogue_destroy(void *inst)
{
    rogue_inst *r = inst;
    free(r->out_dir);
    free(r);
}

static int rogue_source(void *inst, const vsched_ctx *ctx, const char *name,
                        const char *kind, const char *bytes, size_t len,
                        vsched_source_out *out)
{
    (void)inst;
    (void)kind;
    rogue_snap *s = malloc(sizeof *s + len + 1);
    if (s == NULL)
        return VSCHED_ENOMEM;
    s->len = len;
    if (len > 0)
        memcpy(s->text, bytes, len);
    s->text[len] = '\0';
    int rc = rogue_act(ctx, name, s->text, "source");
    if (rc != 0) {
        free(s);
        return rc;
    }
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)bytes[i]) * 1099511628211ull;
    out->snapshot = s;
    out->content_hash = h;
    return 0;
}

/* deps = the "dep NAME" lines, then what the directives add. */
static int rogue_deps(void *inst, const vsched_ctx *ctx, const char *name,
                      const void *snapshot, vsched_deps_out *out)
{
    (void)inst;
    const rogue_snap *s = snapshot;
    memset(out, 0, sizeof *out);
    int rc = rogue_act(ctx, name, s->text, "deps");
    if (rc != 0)
        return rc;
    if (rogue_has(s->text, "null-deps", NULL)) {
        out->n_deps = 3;
        return 0;
    }
    if (rogue_has(s->text, "null-blockers", NULL)) {
        out->n_blockers = 2;
        return 0;
    }
    char arg[256];
    size_t many = 0, n = 0, cap = 8;
    if (rogue_has(s->text, "many-deps", arg))
        many = strtoul(arg, NULL, 10);
    cap += many;
    char **v = ctx->alloc(ctx, cap * sizeof *v);
    if (v == NULL)
        return VSCHED_ENOMEM;
    for (const char *p = s->text;
         (p = strstr(p, "rogue: dep ")) != NULL && n < 4; p++) {
        size_t l = strcspn(p + 11, "\n");
        char nm[256];
        snprintf(nm, sizeof nm, "%.*s", (int)(l > 255 ? 255 : l), p + 11);
        v[n++] = rogue_strdup(ctx, nm);
    }
    if (rogue_has(s->text, "null-dep", NULL))
        v[n++] = NULL;
    if (rogue_has(s->text, "empty-dep", NULL))
        v[n++] = rogue_strdup(ctx, "");
    if (rogue_has(s->text, "escape-dep", NULL))
        v[n++] = rogue_strdup(ctx, "../../../../etc/passwd");
    if (rogue_has(s->text, "ctrl-dep", NULL))
        v[n++] = rogue_strdup(ctx, "x\033[2J.h");
    if (rogue_has(s->text, "self-dep", NULL))
        v[n++] = rogue_strdup(ctx, name);
    for (size_t i = 0; i < many; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "gen/%zu", i);
        v[n++] = rogue_strdup(ctx, nm);
    }
    if (n == 0) {
        ctx->free(ctx, v);
        return 0;
    }
    char **b = ctx->alloc(ctx, n * sizeof *b);
    if (b == NULL) {
        for (size_t i = 0; i < n; i++)
            ctx->free(ctx, v[i]);
        ctx->free(ctx, v);
        return VSCHED_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        b[i] = v[i] != NULL ? rogue_strdup(ctx, v[i]) : NULL;
    out->deps = v;
    out->n_deps = n;
    out->blockers = b;
    out->n_blockers = many > 0 ? 0 : n; /* missing files are no blockers */
    if (many > 0) {
        for (size_t i = 0; i < n; i++)
            ctx->free(ctx, b[i]);
        ctx->free(ctx, b);
        out->blockers = NULL;
    }
    return 0;
}

static int rogue_analysis(void *inst, const vsched_ctx *ctx,
                          const vsched_analysis_in *in, uint64_t *hash)
{
    (void)inst;
    const rogue_snap *s = in->snapshot;
    int rc = rogue_act(ctx, in->name, s->text, "analysis");
    if (rc != 0)
        return rc;
    uint64_t h = in->content_hash;
    for (size_t i = 0; i < in->n_blockers; i++)
        h = (h ^ in->blocker_hashes[i]) * 1099511628211ull;
    *hash = h;
    return 0;
}

static int rogue_artifact(void *inst, const vsched_ctx *ctx,
                          const vsched_artifact_in *in,
                          vsched_artifact_out *out)
{
    rogue_inst *r = inst;
    const rogue_snap *s = in->snapshot;
    memset(out, 0, sizeof *out);
    int rc = rogue_act(ctx, in->name, s->text, "artifact");
    if (rc != 0)
        return rc;
    size_t nl = strlen(in->name);
    if (nl >= 2 && strcmp(in->name + nl - 2, ".h") == 0)
        return 0; /* headers produce nothing */
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%s/%s.out", r->out_dir,
                     in->profile, in->name);
    if (n < 0 || (size_t)n >= sizeof path)
        return VSCHED_EINVAL;
    /* the output's directory */
    for (char *p = path + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        (void)mkdir(path, 0777);
        *p = '/';
    }
    if (rogue_has(s->text, "null-out-deps", NULL))
        out->n_deps = 2;
    if (!rogue_has(s->text, "bytes-no-path", NULL))
        out->path = rogue_strdup(ctx, path);
    if (rogue_has(s->text, "no-output", NULL))
        return 0;
    if (rogue_has(s->text, "missing-tmp", NULL)) {
        char tmp[4200];
        snprintf(tmp, sizeof tmp, "%s.never-written", path);
        out->tmp_path = rogue_strdup(ctx, tmp);
        return 0;
    }
    char *extra = NULL;
    size_t n_extra = 0;
    char arg[256];
    if (rogue_has(s->text, "read", arg)) {
        char *canon = NULL;
        if (!VSCHED_HAS_FIELD(ctx, vsched_ctx, load) || ctx->load == NULL ||
            ctx->realpath(ctx, arg, &canon) != 0 ||
            ctx->load(ctx, canon, &extra, &n_extra) != 0) {
            if (canon != NULL)
                ctx->free(ctx, canon);
            ctx->diag(ctx, VSCHED_SEV_ERROR, in->name, 1,
                      "rogue: cannot read through the context");
            return VSCHED_EIO;
        }
        ctx->free(ctx, canon);
    }
    out->bytes = ctx->alloc(ctx, s->len + n_extra + 1);
    if (out->bytes == NULL) {
        if (extra != NULL)
            ctx->free(ctx, extra);
        return VSCHED_ENOMEM;
    }
    memcpy(out->bytes, s->text, s->len);
    if (n_extra > 0)
        memcpy(out->bytes + s->len, extra, n_extra);
    if (extra != NULL)
        ctx->free(ctx, extra);
    out->len = s->len + n_extra;
    out->artifact_hash = in->analysis_hash;
    return 0;
}

static void rogue_snapshot_free(void *inst, void *snapshot)
{
    (void)inst;
    free(snapshot);
}

static const vsched_executor_ops rogue_executor = {
    .size = sizeof(vsched_executor_ops),
    .source = rogue_source,
    .extract_deps = rogue_deps,
    .analysis = rogue_analysis,
    .artifact = rogue_artifact,
    .snapshot_free = rogue_snapshot_free,
};

static const vsched_plugin rogue_descriptor = {
    .abi_major = VSCHED_PLUGIN_ABI_MAJOR,
    .abi_minor = VSCHED_PLUGIN_ABI_MINOR,
    .size = sizeof(vsched_plugin),
    .name = ROGUE_NAME,
    .version = "1.0",
    .description = "test: an executor that misbehaves where a file asks",
    .roles = VSCHED_ROLE_EXECUTOR,
    .flags = ROGUE_FLAGS,
    .schema = rogue_schema,
    .n_schema = sizeof rogue_schema / sizeof *rogue_schema,
    .create = rogue_create,
    .destroy = rogue_destroy,
    .executor = &rogue_executor,
};

#ifdef ROGUE_STRICT
VSCHED_PLUGIN_DEFINE(rogue_strict)
#else
VSCHED_PLUGIN_DEFINE(rogue)
#endif
{
    return &rogue_descriptor;
}
