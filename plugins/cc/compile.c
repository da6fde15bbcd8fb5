/*
 * compile.c -- running the compiler for the `cc` executor.
 *
 * A tool runs from an argv, never through a shell, through the plugins'
 * helper (plugins/common/proc.c: a process group of its own, output
 * captured, cancellation and the timeout kill the group), in cc's
 * children's environment. A tool writes to a temporary name next to its
 * final output, which is removed on every failure; the host renames it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "cc.h"

/* Report a failed run of argv[0] about `file`. */
static void cc_report_failure(const vsched_ctx *ctx, const char *tool,
                              const char *file, int status, vp_output *o)
{
    if (o->n > 0) {
        vp_output_mark_truncated(o);
        ctx->diag(ctx, VSCHED_SEV_ERROR, file, 0, o->p);
    } else if (WIFSIGNALED(status)) {
        vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0, "'%s' killed by signal %d",
                 tool, WTERMSIG(status));
    } else {
        vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0, "'%s' exited with status %d",
                 tool, WEXITSTATUS(status));
    }
}

/* Run argv, writing `tmp`; `file` names the work in diagnostics. Removes
 * `tmp` on any failure. */
static int cc_run(const cc_inst *cc, const vsched_ctx *ctx, char *const argv[],
                  const char *file, const char *tmp)
{
    char ebuf[128];
    int status = 0;
    vp_output o;
    const vp_spawn how = {.env = cc->env};
    int outcome = vp_run(ctx, argv, &how, cc->timeout, &o, &status);
    int rc = VSCHED_OK;
    struct stat st;
    if (outcome == VP_SPAWN_FAILED) {
        vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0, "cannot run '%s': %s",
                 argv[0], strerror_r(status, ebuf, sizeof ebuf));
        rc = VSCHED_ETOOL;
    } else if (outcome == VP_CANCELLED) {
        rc = VSCHED_ECANCELLED;
    } else if (outcome == VP_TIMEDOUT) {
        vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0,
                 "'%s' timed out after %lld s and was killed%s%s", argv[0],
                 cc->timeout, o.n ? ":\n" : "", o.n ? o.p : "");
        rc = VSCHED_ETIMEDOUT;
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        cc_report_failure(ctx, argv[0], file, status, &o);
        cc__launcher_explain(cc, ctx, file, argv[0], status);
        rc = VSCHED_ETOOL;
    } else if (stat(tmp, &st) != 0 || st.st_size == 0) {
        /* the temporary was created empty (O_EXCL): a tool that wrote
         * nothing leaves it so */
        vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0,
                 "'%s' succeeded but did not write %s", argv[0], tmp);
        rc = VSCHED_ETOOL;
    } else if (o.n > 0) {
        ctx->diag(ctx, VSCHED_SEV_WARNING, file, 0, o.p);
    }
    if (rc != VSCHED_OK)
        unlink(tmp);
    free(o.p);
    return rc;
}

/* ---- outputs ------------------------------------------------------------- */

/* The output path of `rel` for `profile` (out_dir/PROFILE/REL + ext)
 * into path[cap]. `ext` is appended to REL when non-NULL, REL's own
 * extension kept (a.c -> a.c.o, a.cc -> a.cc.o): names stay unique per
 * source, so no two sources ever compile to one object. VSCHED_EINVAL
 * (with a diagnostic) for a name or profile that cannot be one. */
static int cc_out_path(const cc_inst *cc, const vsched_ctx *ctx,
                       const char *file, const char *profile, const char *rel,
                       const char *ext, char *path, size_t cap)
{
    if (!vp_safe_name(rel) || !vp_safe_name(profile) || strchr(profile, '/')) {
        vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0,
                 "cc: invalid output name '%s' for profile '%s'", rel,
                 profile != NULL ? profile : "(null)");
        return VSCHED_EINVAL;
    }
    int n = snprintf(path, cap, "%s/%s/%s%s", cc->out_dir, profile, rel,
                     ext != NULL ? ext : "");
    if (n < 0 || (size_t)n >= cap) {
        vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0,
                 "cc: output path for '%s' is longer than PATH_MAX (%d); "
                 "shorten out_dir or the source's name",
                 rel, PATH_MAX);
        return VSCHED_EINVAL;
    }
    return VSCHED_OK;
}

/* Fill out->path (cc_out_path) and out->tmp_path (created with O_EXCL)
 * and create the directory. */
static int cc_paths(cc_inst *cc, const vsched_ctx *ctx, const char *file,
                    const char *profile, const char *rel, const char *ext,
                    vsched_artifact_out *out)
{
    char path[PATH_MAX], tmp[PATH_MAX + 64];
    int rc = cc_out_path(cc, ctx, file, profile, rel, ext, path, sizeof path);
    if (rc != VSCHED_OK)
        return rc;
    rc = vp_mkdirs(ctx, file, path);
    if (rc != VSCHED_OK)
        return rc;
    vp_sweep_once(&cc->sweep, cc->out_dir); /* what a killed run left */
    int err = vp_tmp_create(tmp, sizeof tmp, path, &cc->counter);
    if (err != 0) {
        vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0,
                 "cc: cannot create a temporary beside %s: %s", path,
                 strerror(err));
        return VSCHED_EIO;
    }
    out->path = vp_host_strdup(ctx, path);
    out->tmp_path = vp_host_strdup(ctx, tmp);
    return out->path != NULL && out->tmp_path != NULL ? VSCHED_OK
                                                      : VSCHED_ENOMEM;
}

/* The files the compile of `name` read, from its depfile, into out->deps.
 * A depfile that cannot be read leaves the list empty (the scanner's deps
 * still hold); only exhaustion fails. */
static int cc_take_depfile(cc_inst *cc, const vsched_ctx *ctx,
                           const char *name, const char *depfile,
                           vsched_artifact_out *out)
{
    size_t len = 0, n = 0;
    char *text = vp_slurp(depfile, &len), **paths = NULL;
    if (text == NULL) {
        vp_diagf(ctx, VSCHED_SEV_WARNING, name, 0,
                 "cc: the compiler wrote no dependency file %s; headers "
                 "only it saw are not tracked",
                 depfile);
        return VSCHED_OK;
    }
    int rc = cc__depfile_parse(text, len, &paths, &n);
    free(text);
    if (rc == VSCHED_OK)
        rc = cc__depfile_names(cc, ctx, name, paths, n, &out->deps,
                               &out->n_deps);
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    return rc;
}

/* An argv under construction; every string is its own (malloc), and the
 * vector stays NULL-terminated. An allocation failure sets `oom`. */
typedef struct cc_argv {
    char **v;
    size_t n, cap;
    int oom;
} cc_argv;

__attribute__((format(printf, 2, 3))) static void cc_arg(cc_argv *a,
                                                         const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (rc >= 0 && a->n + 2 > a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        char **v = realloc(a->v, cap * sizeof *v);
        if (v != NULL) {
            a->v = v;
            a->cap = cap;
        }
    }
    if (rc < 0 || a->n + 2 > a->cap) {
        free(rc >= 0 ? s : NULL);
        a->oom = 1;
        return;
    }
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

static void cc_args(cc_argv *a, const cc_words *w)
{
    for (size_t i = 0; i < w->n; i++)
        cc_arg(a, "%s", w->v[i]);
}

static void cc_argv_free(cc_argv *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
}

/* Append the compile of `name` for profile `p` writing `output` (after
 * the launcher, if any): compiler, cflags, include dirs, the depfile
 * flags when `depfile` is non-NULL, -c SOURCE -o OUTPUT. The one place
 * the command is made, so that command() names what artifact() runs. */
static void cc_compile_argv(const cc_inst *cc, const cc_profile *p,
                            const char *name, const char *depfile,
                            const char *output, cc_argv *a)
{
    cc_arg(a, "%s", cc->compiler);
    cc_args(a, &p->cflags);
    for (size_t i = 0; i < cc->include_dirs.n; i++)
        cc_arg(a, "-I%s/%s", cc->root, cc->include_dirs.v[i]);
    if (depfile != NULL) {
        cc_arg(a, "-MD");
        cc_arg(a, "-MF");
        cc_arg(a, "%s", depfile);
    }
    cc_arg(a, "-c");
    cc_arg(a, "%s/%s", cc->root, name);
    cc_arg(a, "-o");
    cc_arg(a, "%s", output);
}

/* Run `a` writing out->tmp_path; clears `out` on failure. */
static int cc_run_argv(cc_inst *cc, const vsched_ctx *ctx, cc_argv *a,
                       const char *file, vsched_artifact_out *out)
{
    int rc =
        a->oom ? VSCHED_ENOMEM : cc_run(cc, ctx, a->v, file, out->tmp_path);
    cc_argv_free(a);
    if (rc != VSCHED_OK)
        vp_out_clear(ctx, out);
    return rc;
}

/* Contract in cc.h. */
int cc__artifact(void *inst, const vsched_ctx *ctx,
                 const vsched_artifact_in *in, vsched_artifact_out *out)
{
    cc_inst *cc = inst;
    const cc_snap *s = in->snapshot;
    memset(out, 0, sizeof *out);
    if (strcmp(s->kind, "c") != 0 && strcmp(s->kind, "cxx") != 0)
        return VSCHED_OK; /* headers and other files produce nothing */
    const cc_profile *p = cc__profile(cc, in->profile);
    if (p == NULL)
        return VSCHED_ENOMEM;
    int rc = cc_paths(cc, ctx, in->name, in->profile, in->name, ".o", out);
    if (rc != VSCHED_OK) {
        vp_out_clear(ctx, out);
        return rc;
    }
    char depfile[PATH_MAX + 80];
    snprintf(depfile, sizeof depfile, "%s.d", out->tmp_path);
    cc_argv a = {0};
    cc_args(&a, &cc->launcher);
    cc_compile_argv(cc, p, in->name, depfile, out->tmp_path, &a);
    rc = cc_run_argv(cc, ctx, &a, in->name, out);
    if (rc == VSCHED_OK)
        rc = cc_take_depfile(cc, ctx, in->name, depfile, out);
    unlink(depfile);
    if (rc != VSCHED_OK) {
        if (out->tmp_path != NULL)
            unlink(out->tmp_path);
        vp_out_clear(ctx, out);
        return rc;
    }
    uint64_t key[2] = {in->analysis_hash, p->compile_key};
    out->artifact_hash = XXH3_64bits_withSeed(
        key, sizeof key, XXH3_64bits(in->name, strlen(in->name)));
    return VSCHED_OK;
}

/* ---- command ------------------------------------------------------------- */

static void cc_command_clear(const vsched_ctx *ctx, vsched_command_out *out)
{
    for (size_t i = 0; out->argv != NULL && i < out->argc; i++)
        ctx->free(ctx, out->argv[i]);
    if (out->argv != NULL)
        ctx->free(ctx, out->argv);
    if (out->directory != NULL)
        ctx->free(ctx, out->directory);
    if (out->file != NULL)
        ctx->free(ctx, out->file);
    if (out->output != NULL)
        ctx->free(ctx, out->output);
    memset(out, 0, sizeof *out);
}

/* Contract in cc.h. */
int cc__command(void *inst, const vsched_ctx *ctx, const char *name,
                const char *kind, const char *profile, vsched_command_out *out)
{
    cc_inst *cc = inst;
    memset(out, 0, sizeof *out);
    if (kind == NULL || (strcmp(kind, "c") != 0 && strcmp(kind, "cxx") != 0))
        return VSCHED_OK; /* headers and other files have no command */
    const cc_profile *p = cc__profile(cc, profile);
    if (p == NULL)
        return VSCHED_ENOMEM;
    char path[PATH_MAX], cwd[PATH_MAX], file[PATH_MAX];
    int rc =
        cc_out_path(cc, ctx, name, profile, name, ".o", path, sizeof path);
    if (rc != VSCHED_OK)
        return rc;
    int n = snprintf(file, sizeof file, "%s/%s", cc->root, name);
    if (n < 0 || (size_t)n >= sizeof file || getcwd(cwd, sizeof cwd) == NULL)
        return VSCHED_EINVAL;
    cc_argv a = {0};
    cc_compile_argv(cc, p, name, NULL, path, &a);
    if (a.oom) {
        cc_argv_free(&a);
        return VSCHED_ENOMEM;
    }
    out->argv = ctx->alloc(ctx, (a.n + 1) * sizeof *out->argv);
    rc = out->argv != NULL ? VSCHED_OK : VSCHED_ENOMEM;
    for (size_t i = 0; rc == VSCHED_OK && i < a.n; i++) {
        out->argv[i] = vp_host_strdup(ctx, a.v[i]);
        out->argc = i + 1;
        out->argv[i + 1] = NULL;
        if (out->argv[i] == NULL)
            rc = VSCHED_ENOMEM;
    }
    cc_argv_free(&a);
    out->directory = vp_host_strdup(ctx, cwd);
    out->file = vp_host_strdup(ctx, file);
    out->output = vp_host_strdup(ctx, path);
    if (rc == VSCHED_OK &&
        (out->directory == NULL || out->file == NULL || out->output == NULL))
        rc = VSCHED_ENOMEM;
    if (rc != VSCHED_OK)
        cc_command_clear(ctx, out);
    return rc;
}

/* ---- identity ------------------------------------------------------------ */

/* Hash `compiler --version` and the compiler's binary into *id. */
static int cc_compute_identity(cc_inst *cc, const vsched_ctx *ctx,
                               uint64_t *id)
{
    char ebuf[128];
    char *argv[] = {cc->compiler, "--version", NULL};
    int status = 0;
    vp_output o;
    const vp_spawn how = {.env = cc->env};
    if (vp_run(ctx, argv, &how, cc->timeout, &o, &status) == VP_SPAWN_FAILED) {
        vp_diagf(ctx, VSCHED_SEV_ERROR, NULL, 0, "cannot run '%s': %s",
                 cc->compiler, strerror_r(status, ebuf, sizeof ebuf));
        return VSCHED_ETOOL;
    }
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL) {
        free(o.p);
        return VSCHED_ENOMEM;
    }
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, &status, sizeof status);
    if (o.p != NULL)
        XXH3_64bits_update(st, o.p, o.n);
    free(o.p);
    vp_hash_program(st, cc->compiler, NULL, "");
    *id = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return VSCHED_OK;
}

/* Contract in cc.h. The compiler is the same for every profile. */
int cc__identity(void *inst, const vsched_ctx *ctx, const char *profile,
                 uint64_t *id)
{
    cc_inst *cc = inst;
    (void)profile;
    pthread_mutex_lock(&cc->lock);
    int have = cc->have_identity;
    int rc = cc->identity_rc;
    uint64_t v = cc->identity;
    pthread_mutex_unlock(&cc->lock);
    if (!have) {
        rc = cc_compute_identity(cc, ctx, &v);
        pthread_mutex_lock(&cc->lock);
        if (!cc->have_identity) { /* the first to finish wins */
            cc->have_identity = 1;
            cc->identity_rc = rc;
            cc->identity = v;
        }
        rc = cc->identity_rc;
        v = cc->identity;
        pthread_mutex_unlock(&cc->lock);
    }
    *id = v;
    return rc;
}

/* What a job of target NAME uses beyond its profile: [target.NAME]
 * ldflags and libs when that section sets them (else the profile's), and
 * the output file name ([target.NAME] output, else NAME, NAME.a or
 * NAME.so by kind). */
typedef struct cc_job_conf {
    cc_words own_ldflags, own_libs; /* the target's, when it sets them */
    const cc_words *ldflags, *libs; /* what the job uses */
    char *output;
} cc_job_conf;

static void cc_job_conf_free(cc_job_conf *c)
{
    cc__words_free(&c->own_ldflags);
    cc__words_free(&c->own_libs);
    free(c->output);
}

/* Read under cc->lock (it serialises cfg calls). */
static int cc_job_conf_read(cc_inst *cc, const cc_profile *p,
                            const vsched_job_in *in, cc_job_conf *c)
{
    memset(c, 0, sizeof *c);
    char section[512];
    if ((size_t)snprintf(section, sizeof section, "target.%s", in->name) >=
        sizeof section)
        section[0] = '\0';
    const char *ext = strcmp(in->kind, "static") == 0   ? ".a"
                      : strcmp(in->kind, "shared") == 0 ? ".so"
                                                        : "";
    pthread_mutex_lock(&cc->lock);
    const vsched_config *cfg = cc->cfg;
    const char *ld = section[0] ? cfg->get(cfg, section, "ldflags") : NULL;
    const char *libs = section[0] ? cfg->get(cfg, section, "libs") : NULL;
    const char *out = section[0] ? cfg->get(cfg, section, "output") : NULL;
    int rc = cc__words_parse(ld, &c->own_ldflags);
    if (rc == VSCHED_OK)
        rc = cc__words_parse(libs, &c->own_libs);
    if (rc == VSCHED_OK &&
        asprintf(&c->output, "%s%s", out != NULL ? out : in->name,
                 out != NULL ? "" : ext) < 0) {
        c->output = NULL;
        rc = VSCHED_ENOMEM;
    }
    pthread_mutex_unlock(&cc->lock);
    c->ldflags = ld != NULL ? &c->own_ldflags : &p->ldflags;
    c->libs = libs != NULL ? &c->own_libs : &p->libs;
    return rc;
}

/* Hash of a job: its command, then each input's path and content. */
static uint64_t cc_link_hash(const cc_profile *p, const cc_job_conf *c,
                             const vsched_job_in *in)
{
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL)
        return 0;
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, &p->link_key, sizeof p->link_key);
    XXH3_64bits_update(st, in->kind, strlen(in->kind) + 1);
    XXH3_64bits_update(st, c->output, strlen(c->output) + 1);
    for (size_t i = 0; i < c->ldflags->n; i++)
        XXH3_64bits_update(st, c->ldflags->v[i], strlen(c->ldflags->v[i]) + 1);
    XXH3_64bits_update(st, "\n", 1);
    for (size_t i = 0; i < c->libs->n; i++)
        XXH3_64bits_update(st, c->libs->v[i], strlen(c->libs->v[i]) + 1);
    char buf[65536];
    for (size_t i = 0; i < in->n_inputs; i++) {
        XXH3_64bits_update(st, in->inputs[i], strlen(in->inputs[i]) + 1);
        int fd = open(in->inputs[i], O_RDONLY | O_CLOEXEC);
        for (ssize_t r; fd >= 0 && (r = read(fd, buf, sizeof buf)) > 0;)
            XXH3_64bits_update(st, buf, (size_t)r);
        if (fd >= 0)
            close(fd);
    }
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}

/* The argv of a job writing `tmp`: an executable or shared library is
 * linked by the compiler driver (objects, then libraries in the order
 * given, then libs); a static library is `ar rcsD` over the objects. */
static void cc_job_argv(cc_inst *cc, const cc_job_conf *c,
                        const vsched_job_in *in, const char *tmp, cc_argv *a)
{
    if (strcmp(in->kind, "static") == 0) {
        cc_arg(a, "%s", cc->ar);
        cc_arg(a, "rcsD");
        cc_arg(a, "%s", tmp);
        for (size_t i = 0; i < in->n_inputs; i++)
            cc_arg(a, "%s", in->inputs[i]);
        return;
    }
    cc_arg(a, "%s", cc->compiler); /* links run locally: no launcher */
    if (strcmp(in->kind, "shared") == 0) {
        cc_arg(a, "-shared");
        cc_arg(a, "-Wl,-soname,%s", c->output);
    }
    cc_args(a, c->ldflags);
    for (size_t i = 0; i < in->n_inputs; i++)
        cc_arg(a, "%s", in->inputs[i]);
    cc_arg(a, "-o");
    cc_arg(a, "%s", tmp);
    cc_args(a, c->libs);
}

/* Contract in cc.h. */
int cc__job(void *inst, const vsched_ctx *ctx, const vsched_job_in *in,
            vsched_artifact_out *out)
{
    cc_inst *cc = inst;
    memset(out, 0, sizeof *out);
    if (in->kind == NULL || in->name == NULL ||
        (strcmp(in->kind, "link") != 0 && strcmp(in->kind, "static") != 0 &&
         strcmp(in->kind, "shared") != 0))
        return VSCHED_EUNSUPPORTED;
    const cc_profile *p = cc__profile(cc, in->profile);
    if (p == NULL)
        return VSCHED_ENOMEM;
    cc_job_conf c;
    int rc = cc_job_conf_read(cc, p, in, &c);
    if (rc == VSCHED_OK)
        rc = cc_paths(cc, ctx, in->name, in->profile, c.output, NULL, out);
    if (rc != VSCHED_OK) {
        cc_job_conf_free(&c);
        vp_out_clear(ctx, out);
        return rc;
    }
    /* ar updates an archive that exists, and an empty file is none: the
     * temporary reserved with O_EXCL (its name unique to this process)
     * goes, and ar creates it. */
    if (strcmp(in->kind, "static") == 0)
        (void)unlink(out->tmp_path);
    cc_argv a = {0};
    cc_job_argv(cc, &c, in, out->tmp_path, &a);
    if ((rc = cc_run_argv(cc, ctx, &a, in->name, out)) == VSCHED_OK)
        out->artifact_hash = cc_link_hash(p, &c, in);
    cc_job_conf_free(&c);
    return rc;
}
