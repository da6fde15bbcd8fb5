/*
 * stages -- the bodies of stage tasks, run on pool workers without the
 * scheduler lock.
 *
 *   Source, phase 0 (I/O pool): loader.load + loader.classify
 *   Source, phase 1 (CPU pool): executor.source + executor.extract_deps
 *   Analysis        (CPU pool): executor.analysis
 *   Artifact        (CPU pool): executor.artifact, then atomic publication
 *                               (rename of the plugin's temporary output)
 *
 * A task reads only what was copied into it when it was taken (plus the
 * file's snapshot, which it holds a reference on) and writes only its own
 * outputs; the runner that ran it integrates them under the lock
 * (complete.c). What a plugin returns is checked here before the core
 * trusts it: a dependency array the plugin claims but did not fill, or a
 * name that is NULL or empty, fails the file with a message naming the
 * operation. Dependency names are taken as the canonical source names
 * the ABI says they are (a name outside the root fails its own load, and
 * its dependent names it).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static char *fmt_msg(const char *what, const char *name, int rc)
{
    char *m = NULL;
    if (asprintf(&m, "%s %s: %s", what, name, vsched_strerror(rc)) < 0)
        return NULL;
    return m;
}

static void lock_if(pthread_mutex_t *m, int thread_safe)
{
    if (!thread_safe)
        pthread_mutex_lock(m);
}

static void unlock_if(pthread_mutex_t *m, int thread_safe)
{
    if (!thread_safe)
        pthread_mutex_unlock(m);
}

/* After a call into a serialised executor: the snapshot frees handed to
 * it meanwhile. */
static void executor_unlock(vsched *s, int thread_safe)
{
    if (thread_safe)
        return;
    pthread_mutex_unlock(&s->serial_executor);
    vsched__executor_flush(s, 0);
}

static void run_load(vsched__task *t, const vsched_ctx *ctx)
{
    vsched *s = t->s;
    const vsched_loader_binding *lb = &s->opts.loader;
    lock_if(&s->serial_loader, lb->thread_safe);
    /* Upserted content replaces the loader's copy; it is still classified. */
    int rc = t->has_content
                 ? VSCHED_OK
                 : lb->ops->load(lb->inst, ctx, t->name, &t->bytes, &t->len);
    if (rc == VSCHED_OK && t->bytes == NULL && !t->has_content &&
        t->len != 0) {
        rc = VSCHED_EINVAL; /* NULL is for an empty source only */
        if (asprintf(&t->message,
                     "cannot load %s: the loader returned no "
                     "bytes for a source of %zu bytes",
                     t->name, t->len) < 0)
            t->message = NULL;
    }
    if (rc == VSCHED_OK) {
        rc = lb->ops->classify(lb->inst, ctx, t->name, t->file_kind,
                               sizeof t->file_kind);
        t->class_seq = atomic_fetch_add(&s->class_seq, 1) + 1;
    }
    unlock_if(&s->serial_loader, lb->thread_safe);
    t->file_kind[sizeof t->file_kind - 1] = '\0';
    if (rc != VSCHED_OK) {
        t->status = rc < 0 ? rc : VSCHED_EERR;
        if (t->message == NULL)
            t->message = fmt_msg("cannot load", t->name, t->status);
    }
}

/* Check one dependency array a plugin returned. Returns 0, or a status
 * with t->message set. */
static int check_names(vsched__task *t, const char *what, char **v, size_t n)
{
    if (n > 0 && v == NULL) {
        if (asprintf(&t->message,
                     "%s: extract_deps returned %zu %s but no "
                     "array",
                     t->name, n, what) < 0)
            t->message = NULL;
        return VSCHED_EINVAL;
    }
    for (size_t i = 0; i < n; i++)
        if (v[i] == NULL || v[i][0] == '\0') {
            if (asprintf(&t->message, "%s: extract_deps returned %s %s #%zu",
                         t->name, v[i] == NULL ? "a NULL" : "an empty", what,
                         i + 1) < 0)
                t->message = NULL;
            return VSCHED_EINVAL;
        }
    return VSCHED_OK;
}

static int prepare_source(vsched__task *t);

static void run_parse(vsched__task *t, const vsched_ctx *ctx)
{
    vsched *s = t->s;
    const vsched_executor_binding *eb = &s->opts.executor;
    vsched_source_out out = {0};
    lock_if(&s->serial_executor, eb->thread_safe);
    t->ran = 1;
    /* An empty source may come without bytes (plugin.h). */
    int rc = eb->ops->source(eb->inst, ctx, t->name, t->file_kind,
                             t->bytes != NULL ? t->bytes : "", t->len, &out);
    if (rc == VSCHED_OK) {
        t->new_snapshot = out.snapshot;
        t->out_hash = out.content_hash;
        rc = eb->ops->extract_deps(eb->inst, ctx, t->name, out.snapshot,
                                   &t->deps);
    }
    executor_unlock(s, eb->thread_safe);
    free(t->bytes);
    t->bytes = NULL;
    if (rc == VSCHED_OK) {
        rc = check_names(t, "deps", t->deps.deps, t->deps.n_deps);
        if (rc == VSCHED_OK)
            rc = check_names(t, "blockers", t->deps.blockers,
                             t->deps.n_blockers);
        if (rc != VSCHED_OK) {
            /* Not ours to free element by element: the counts lie. */
            if (t->deps.deps == NULL)
                t->deps.n_deps = 0;
            if (t->deps.blockers == NULL)
                t->deps.n_blockers = 0;
        }
        if (rc == VSCHED_OK)
            rc = prepare_source(t);
    }
    if (rc != VSCHED_OK) {
        t->status = rc < 0 ? rc : VSCHED_EERR;
        if (t->message == NULL)
            t->message = fmt_msg("cannot parse", t->name, t->status);
    }
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++)
        free(v[i]);
    free(v);
}

/* What integration will publish, built here without the scheduler lock:
 * the facts record (self references dropped, each name the directory's
 * copy) and the snapshot's record; the executor's arrays are freed.
 * Integration then only looks the names up, by the directory's copy. */
static int prepare_source(vsched__task *t)
{
    size_t nd = t->deps.n_deps, nb = t->deps.n_blockers, n = nd + nb;
    const char *inline_names[16];
    uint64_t inline_hashes[16];
    const char **names = n <= 16 ? inline_names : malloc(n * sizeof *names);
    uint64_t *hashes = n <= 16 ? inline_hashes : malloc(n * sizeof *hashes);
    if (names == NULL || hashes == NULL) {
        if (names != inline_names)
            free(names);
        if (hashes != inline_hashes)
            free(hashes);
        return VSCHED_ENOMEM; /* task_free hands the snapshot back */
    }
    size_t kd = 0, kb = 0;
    for (size_t i = 0; i < nd; i++)
        if (strcmp(t->deps.deps[i], t->name) != 0)
            names[kd++] = t->deps.deps[i];
    for (size_t i = 0; i < nb; i++)
        if (strcmp(t->deps.blockers[i], t->name) != 0)
            names[kd + kb++] = t->deps.blockers[i];
    t->facts = vsched__facts_new(t->s->root, t->out_hash, t->new_snapshot,
                                 names, kd, kb, hashes);
    if (t->facts != NULL) {
        t->new_snapshot = NULL; /* the record's now */
        t->snap_new = t->facts; /* the reference on it */
    }
    if (names != inline_names)
        free(names);
    if (hashes != inline_hashes)
        free(hashes);
    free_names(t->deps.deps, nd);
    free_names(t->deps.blockers, nb);
    t->deps = (vsched_deps_out){0};
    return t->facts != NULL ? VSCHED_OK : VSCHED_ENOMEM;
}

static void run_analysis(vsched__task *t, const vsched_ctx *ctx)
{
    vsched *s = t->s;
    const vsched_executor_binding *eb = &s->opts.executor;
    /* 1.0 fields first, then the 1.1 ones (plugin.h: a 1.0 plugin reads
     * its prefix); the blockers as task.c read them. */
    vsched_analysis_in in = {
        t->name,         t->snap != NULL ? t->snap->snapshot : NULL,
        t->content_hash, t->blocker_hashes,
        t->n_blockers,   sizeof in,
        t->blk};
    lock_if(&s->serial_executor, eb->thread_safe);
    t->ran = 1;
    int rc = eb->ops->analysis(eb->inst, ctx, &in, &t->out_hash);
    executor_unlock(s, eb->thread_safe);
    if (rc != VSCHED_OK) {
        t->status = rc < 0 ? rc : VSCHED_EERR;
        t->message = fmt_msg("analysis failed for", t->name, t->status);
    }
}

/* Create a temporary file beside `path`, PATH.tmp.PID.N, with O_EXCL (no
 * name another user pre-created is written through) and mode 0666 less
 * the umask (a published output gets the mode any new file would, not
 * mkstemp's 0600). Returns the descriptor and sets *tmp, or -1 with *err. */
static int open_tmp(const char *path, char **tmp, int *err)
{
    static atomic_ulong counter;
    for (int tries = 0; tries < 100; tries++) {
        unsigned long k = atomic_fetch_add(&counter, 1);
        if (asprintf(tmp, "%s.tmp.%ld.h%lu", path, (long)getpid(), k) < 0) {
            *err = ENOMEM;
            return -1;
        }
        int fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0)
            return fd;
        *err = errno;
        free(*tmp);
        *tmp = NULL;
        if (*err != EEXIST)
            return -1;
    }
    return -1;
}

/* Write bytes to a temporary file beside `path`; returns its name. A write
 * past a file-size limit fails with EFBIG (the host ignores SIGXFSZ). */
static char *write_tmp(const char *path, const char *bytes, size_t len,
                       int *err)
{
    char *tmp = NULL;
    int fd = open_tmp(path, &tmp, err);
    if (fd < 0)
        return NULL;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, bytes + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            *err = w < 0 ? errno : EIO;
            close(fd);
            unlink(tmp);
            free(tmp);
            return NULL;
        }
        off += (size_t)w;
    }
    if (close(fd) != 0) {
        *err = errno;
        unlink(tmp);
        free(tmp);
        return NULL;
    }
    return tmp;
}

/* Publish the artifact: rename the temporary output onto its final path. */
static int publish(vsched__task *t, vsched_artifact_out *out)
{
    if (out->path == NULL) {
        if (out->tmp_path != NULL)
            unlink(out->tmp_path);
        return VSCHED_OK; /* the stage produces no file */
    }
    int err = 0;
    char *tmp = out->tmp_path;
    if (tmp == NULL) {
        tmp = write_tmp(out->path, out->bytes != NULL ? out->bytes : "",
                        out->len, &err);
        if (tmp == NULL)
            goto fail;
    }
    if (rename(tmp, out->path) != 0) {
        err = errno;
        int never_written =
            err == ENOENT && tmp == out->tmp_path && access(tmp, F_OK) != 0;
        unlink(tmp);
        if (never_written) {
            /* the executor named a temporary it never wrote */
            if (asprintf(&t->message,
                         "cannot write %s: the executor's "
                         "temporary %s does not exist",
                         out->path, tmp) < 0)
                t->message = NULL;
            return VSCHED_EIO;
        }
        goto fail;
    }
    /* When the executor's temporary and the output were already one file
     * (two links: a cache restore onto an output that is that object),
     * rename(2) does nothing and succeeds. The temporary was handed over
     * to be published, so its name goes either way (ENOENT otherwise). */
    if (tmp == out->tmp_path)
        (void)unlink(tmp);
    else
        free(tmp);
    t->artifact_path = out->path;
    out->path = NULL;
    return VSCHED_OK;

fail:
    if (tmp != out->tmp_path)
        free(tmp);
    if (asprintf(&t->message, "cannot write %s: %s", out->path,
                 strerror(err)) < 0)
        t->message = NULL;
    return VSCHED_EIO;
}

static void run_artifact(vsched__task *t, const vsched_ctx *ctx)
{
    vsched *s = t->s;
    const vsched_executor_binding *eb = &s->opts.executor;
    vsched_artifact_in in = {
        t->name,          t->profile, t->snap != NULL ? t->snap->snapshot : NULL,
        t->analysis_hash, sizeof in,  t->blk,
        t->n_blk};
    vsched_artifact_out out = {0};
    lock_if(&s->serial_executor, eb->thread_safe);
    t->ran = 1;
    int rc = eb->ops->artifact(eb->inst, ctx, &in, &out);
    executor_unlock(s, eb->thread_safe);
    if (rc == VSCHED_OK) {
        t->out_hash = out.artifact_hash;
        rc = publish(t, &out);
    } else {
        if (out.tmp_path != NULL)
            unlink(out.tmp_path);
        t->message = fmt_msg("cannot build", t->name, rc < 0 ? rc : -1);
    }
    if (rc != VSCHED_OK)
        t->status = rc < 0 ? rc : VSCHED_EERR;
    free(out.path);
    free(out.tmp_path);
    free(out.bytes);
    free_names(out.deps,
               out.n_deps); /* 1.1: read by a host wrapper, not here */
}

/* A generic graph job through the executor's optional `job` op; its
 * output is published like an artifact's. */
static void run_job(vsched__task *t, const vsched_ctx *ctx)
{
    vsched *s = t->s;
    const vsched_executor_binding *eb = &s->opts.executor;
    if (eb->ops->size <
            offsetof(vsched_executor_ops, job) + sizeof eb->ops->job ||
        eb->ops->job == NULL) {
        t->status = VSCHED_EUNSUPPORTED;
        if (asprintf(&t->message,
                     "job %s: the executor has no job "
                     "operation",
                     t->name) < 0)
            t->message = NULL;
        return;
    }
    vsched_artifact_out out = {0};
    t->job->size = sizeof *t->job; /* 1.1 */
    lock_if(&s->serial_executor, eb->thread_safe);
    int rc = eb->ops->job(eb->inst, ctx, t->job, &out);
    executor_unlock(s, eb->thread_safe);
    if (rc == VSCHED_OK) {
        t->out_hash = out.artifact_hash;
        rc = publish(t, &out);
    } else {
        if (out.tmp_path != NULL)
            unlink(out.tmp_path); /* no partial output survives */
        if (asprintf(&t->message, "%s %s: %s", t->job->kind, t->name,
                     vsched_strerror(rc < 0 ? rc : VSCHED_EERR)) < 0)
            t->message = NULL;
    }
    if (rc != VSCHED_OK)
        t->status = rc < 0 ? rc : VSCHED_EERR;
    free(out.path);
    free(out.tmp_path);
    free(out.bytes);
    free_names(out.deps,
               out.n_deps); /* 1.1: read by a host wrapper, not here */
}

void vsched__task_execute(vsched__task *t)
{
    vsched_ctx ctx;
    vsched__ctx_init(&ctx, t);
    /* Where and when it ran are read by the task observer only
     * (complete.c, task_event): two clock reads a task saved without one. */
    int observed = t->s->opts.task_observer != NULL;
    if (observed) {
        t->pool_kind = (int8_t)vsched_pool_current_kind();
        t->worker = (int8_t)vsched_pool_current_worker();
        t->started_ns = vsched__now_ns();
    }
    if (ctx.is_cancelled(&ctx)) {
        t->status = VSCHED_ECANCELLED;
    } else {
        switch (t->kind) {
        case VSCHED__K_SOURCE:
            if (t->phase == 0)
                run_load(t, &ctx);
            else
                run_parse(t, &ctx);
            break;
        case VSCHED__K_ANALYSIS: run_analysis(t, &ctx); break;
        case VSCHED__K_ARTIFACT: run_artifact(t, &ctx); break;
        case VSCHED__K_JOB: run_job(t, &ctx); break;
        }
    }
    if (observed)
        t->finished_ns = vsched__now_ns();
}
