/*
 * artifact -- artifact, command, job and identity in vsched-plugin-test, and their
 * output checked and published as the host does (rename of tmp_path, or
 * the bytes written to a temporary file and renamed); see plugin_test.h.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/vsched.h>

#include "common/util.h"
#include "config/plugin_host.h"
#include "plugin_test/plugin_test.h"

/* dirname of an absolute path (heap). */
static char *pt_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash != NULL ? (size_t)(slash - path) : 0;
    return vr_strfmt("%.*s", (int)n, path);
}

/* Write `bytes` to a temporary file beside `path` and rename it there, as
 * the host does. Returns 0 or errno. */
static int pt_write_bytes(const char *path, const char *bytes, size_t len)
{
    char *tmp = vr_strfmt("%s.tmp.%ld.XXXXXX", path, (long)getpid());
    int fd = mkstemp(tmp);
    int err = fd < 0 ? errno : 0;
    for (size_t off = 0; err == 0 && off < len;) {
        ssize_t w = write(fd, bytes + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            err = w < 0 ? errno : EIO;
        else
            off += (size_t)w;
    }
    if (fd >= 0 && close(fd) != 0 && err == 0)
        err = errno;
    if (err == 0 && rename(tmp, path) != 0)
        err = errno;
    if (err != 0 && fd >= 0)
        unlink(tmp);
    free(tmp);
    return err;
}

/* Check and publish an artifact or job output. Returns the published path
 * (heap) or NULL; *how says what was done. */
static char *pt_publish(pt_run *r, const char *op, vsched_artifact_out *out,
                        int *rc)
{
    *rc = 0;
    if (out->path == NULL) {
        if (out->tmp_path != NULL) {
            pt_violation(r, "%s set tmp_path but no path", op);
            unlink(out->tmp_path);
        } else if (out->bytes != NULL) {
            pt_warning(r, "%s returned bytes but no path: they are dropped",
                       op);
        }
        return NULL;
    }
    if (out->path[0] != '/') {
        pt_violation(r, "%s: path '%s' is not absolute", op, out->path);
        *rc = VSCHED_EERR;
        return NULL;
    }
    if (out->tmp_path != NULL) {
        char *d1 = pt_dirname(out->path), *d2 = pt_dirname(out->tmp_path);
        int same = strcmp(d1, d2) == 0;
        free(d1);
        free(d2);
        if (!same)
            pt_violation(r,
                         "%s: tmp_path '%s' is not in the directory of "
                         "path '%s' (the rename would not be atomic)",
                         op, out->tmp_path, out->path);
        if (access(out->tmp_path, F_OK) != 0) {
            pt_violation(r, "%s: tmp_path '%s' does not exist", op,
                         out->tmp_path);
            *rc = VSCHED_EERR;
            return NULL;
        }
        if (rename(out->tmp_path, out->path) != 0)
            *rc = errno;
    } else {
        *rc = pt_write_bytes(out->path, out->bytes != NULL ? out->bytes : "",
                             out->len);
    }
    if (*rc != 0) {
        pt_say(r, "%s: cannot publish %s: %s", op, out->path, strerror(*rc));
        *rc = VSCHED_EIO;
        return NULL;
    }
    return vr_xstrdup(out->path);
}

/* The files an artifact says it read (ABI 1.1): named like deps, then
 * released as the host does. */
static void pt_out_deps(pt_run *r, vsched_artifact_out *out, const char *op)
{
    if (out->n_deps > 0 && out->deps == NULL)
        pt_violation(r, "%s set %zu deps but a NULL array", op, out->n_deps);
    for (size_t i = 0; out->deps != NULL && i < out->n_deps; i++) {
        const char *d = out->deps[i];
        if (d == NULL || d[0] == '\0' || d[0] == '/') {
            pt_violation(r, "%s: deps[%zu] is %s", op, i,
                         d == NULL      ? "NULL"
                         : d[0] == '\0' ? "empty"
                                        : "absolute");
        } else {
            pt_say(r, "%s read: %s", op, d);
            char *canon = pt_realpath(r, d, 0);
            if (canon != NULL && strcmp(canon, d) != 0)
                pt_warning(r,
                           "%s: '%s' is not canonical (the loader's "
                           "realpath says '%s')",
                           op, d, canon);
            free(canon);
        }
        pt_release(r, out->deps[i], "an artifact deps name");
    }
    pt_release(r, out->deps, "the artifact deps array");
    out->deps = NULL;
    out->n_deps = 0;
}

static void pt_out_release(pt_run *r, vsched_artifact_out *out, const char *op)
{
    char what[64];
    pt_out_deps(r, out, op);
    snprintf(what, sizeof what, "%s's out->path", op);
    pt_release(r, out->path, what);
    snprintf(what, sizeof what, "%s's out->tmp_path", op);
    pt_release(r, out->tmp_path, what);
    snprintf(what, sizeof what, "%s's out->bytes", op);
    pt_release(r, out->bytes, what);
}

/* Contract: see plugin_test.h. */
void pt_artifact(pt_run *r, pt_file *f, size_t p)
{
    const char *profile = r->profiles[p];
    char op[128];
    snprintf(op, sizeof op, "artifact[%s]", profile);
    const vsched_executor_ops *x = r->xops;
    int closure =
        VSCHED_HAS_FIELD(x, vsched_executor_ops, artifact_blockers) &&
        x->artifact_blockers == VSCHED_BLOCKERS_CLOSURE;
    size_t nb = 0;
    char *fname = vr_xstrdup(f->name);
    vsched_blocker_in *blk = pt_blockers(r, fname, closure, &nb);
    free(fname);
    vsched_artifact_in in = {f->name,   profile, f->snapshot, f->analysis_hash,
                             sizeof in, blk,     nb};
    vsched_artifact_out out = {0};
    int rc = r->xops->artifact(r->xinst, &r->ctx, &in, &out);
    free(blk);
    if (rc != 0) {
        if (out.tmp_path != NULL)
            unlink(out.tmp_path);
        pt_outcome(r, op, rc, NULL);
        pt_out_release(r, &out, op);
        return;
    }
    int prc;
    char *path = pt_publish(r, op, &out, &prc);
    char *detail = vr_strfmt("%s (%s) artifact_hash=0x%016llx",
                             path != NULL ? path : "no file",
                             out.path == NULL       ? "nothing written"
                             : out.tmp_path != NULL ? "via tmp_path"
                                                    : "from bytes",
                             (unsigned long long)out.artifact_hash);
    pt_outcome(r, op, prc, prc == 0 ? detail : NULL);
    free(detail);
    f->artifacts[p] = path;
    pt_out_release(r, &out, op);
    pt_command(r, f, p);
}

static int pt_absolute(const char *s)
{
    return s != NULL && s[0] == '/';
}

/* What command() returned for f, checked against what artifact()
 * published. */
static void pt_command_check(pt_run *r, const pt_file *f, size_t p,
                             const char *op, const vsched_command_out *c)
{
    int bad = 0;
    for (size_t i = 0; c->argv != NULL && i < c->argc; i++)
        bad |= c->argv[i] == NULL;
    if (bad || (c->argc > 0) != (c->argv != NULL) ||
        (c->argv != NULL && c->argv[c->argc] != NULL))
        pt_violation(r, "%s: argv does not hold argc strings and a NULL", op);
    if (c->argc > 0 && (!pt_absolute(c->directory) || !pt_absolute(c->file) ||
                        !pt_absolute(c->output)))
        pt_violation(r,
                     "%s: directory, file and output must be absolute "
                     "paths",
                     op);
    const char *made = f->artifacts[p];
    if (c->argc > 0 && made != NULL && c->output != NULL &&
        strcmp(c->output, made) != 0)
        pt_violation(r, "%s names output %s, but artifact wrote %s", op,
                     c->output, made);
    if (c->argc > 0 && made == NULL)
        pt_warning(r, "%s gives a command, but artifact wrote no file", op);
    if (c->argc == 0 && made != NULL)
        pt_warning(r, "%s gives no command, but artifact wrote %s", op, made);
}

/* Contract: see plugin_test.h. */
void pt_command(pt_run *r, const pt_file *f, size_t p)
{
    if (!VR_OPS_COVERS(r->xops, vsched_executor_ops, command) ||
        r->xops->command == NULL)
        return;
    char op[128], kind[64] = "";
    snprintf(op, sizeof op, "command[%s]", r->profiles[p]);
    if (pt_classify(r, f->name, kind, sizeof kind) != 0)
        return;
    vsched_command_out c = {0};
    int rc =
        r->xops->command(r->xinst, &r->ctx, f->name, kind, r->profiles[p], &c);
    char *detail =
        vr_strfmt("%zu arguments%s%s", c.argc, c.argc > 0 ? ", output " : "",
                  c.argc > 0 && c.output ? c.output : "");
    pt_outcome(r, op, rc, rc == 0 ? detail : NULL);
    free(detail);
    if (rc == 0)
        pt_command_check(r, f, p, op, &c);
    for (size_t i = 0; c.argv != NULL && i < c.argc; i++)
        pt_release(r, c.argv[i], "command argv[i]");
    pt_release(r, c.argv, "command argv");
    pt_release(r, c.directory, "command directory");
    pt_release(r, c.file, "command file");
    pt_release(r, c.output, "command output");
}

/* Contract: see plugin_test.h. */
void pt_job(pt_run *r)
{
    const char *spec = r->opts->job;
    const char *colon = strchr(spec, ':');
    char *kind = vr_strfmt("%.*s", (int)(colon - spec), spec);
    r->current = "job";
    for (size_t p = 0; p < r->n_profiles; p++) {
        const char **inputs = vr_xcalloc(r->n_files + 1, sizeof *inputs);
        size_t n = 0;
        for (size_t i = 0; i < r->n_files; i++)
            if (r->files[i].artifacts[p] != NULL)
                inputs[n++] = r->files[i].artifacts[p];
        char op[256];
        snprintf(op, sizeof op, "job[%s %s %s]", kind, colon + 1,
                 r->profiles[p]);
        if (r->xops->job == NULL ||
            r->xops->size <
                offsetof(vsched_executor_ops, job) + sizeof r->xops->job) {
            pt_say(r, "%s: not provided (the optional operation is NULL)", op);
            free(inputs);
            continue;
        }
        vsched_job_in in = {kind,   colon + 1, r->profiles[p],
                            inputs, n,         sizeof in};
        vsched_artifact_out out = {0};
        int rc = r->xops->job(r->xinst, &r->ctx, &in, &out);
        if (rc == 0) {
            char *path = pt_publish(r, op, &out, &rc);
            char *detail = vr_strfmt("%zu inputs, %s", n,
                                     path != NULL ? path : "no file");
            pt_outcome(r, op, rc, rc == 0 ? detail : NULL);
            free(detail);
            free(path);
        } else {
            if (out.tmp_path != NULL)
                unlink(out.tmp_path);
            pt_outcome(r, op, rc, NULL);
        }
        pt_out_release(r, &out, op);
        free(inputs);
    }
    free(kind);
}

/* Contract: see plugin_test.h. */
void pt_identity(pt_run *r)
{
    if (r->xops == NULL ||
        !VR_OPS_COVERS(r->xops, vsched_executor_ops, identity) ||
        r->xops->identity == NULL)
        return;
    r->current = "identity";
    for (size_t p = 0; p < r->n_profiles; p++) {
        char op[128];
        snprintf(op, sizeof op, "identity[%s]", r->profiles[p]);
        uint64_t a = 0, b = 0;
        int rc = r->xops->identity(r->xinst, &r->ctx, r->profiles[p], &a);
        if (rc == 0)
            rc = r->xops->identity(r->xinst, &r->ctx, r->profiles[p], &b);
        char *detail = vr_strfmt("0x%016llx", (unsigned long long)a);
        pt_outcome(r, op, rc, rc == 0 ? detail : NULL);
        free(detail);
        if (rc == 0 && a != b)
            pt_violation(r, "%s is not stable: 0x%016llx, then 0x%016llx", op,
                         (unsigned long long)a, (unsigned long long)b);
    }
}
