/*
 * isolate -- the worker pool of `[executor] isolate`: starting a worker,
 * one call's conversation with it, and ending it; see isolate.h. The
 * operations themselves are isolate_ops.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "build/isolate_int.h"
#include "common/util.h"
#include "config/schema.h"

extern char **environ;

#define VR_POLL_MS 50        /* how often a waiting call looks at ctx */
#define VR_START_S 60        /* a worker's create() may take this long */
#define VR_EXIT_WAIT_MS 1000 /* after end of file, for its exit status */

static void vr_sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000u, (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- one worker -------------------------------------------------------------- */

/* Reap w (SIGKILL to its group first when `kill_now`, or when it has not
 * exited VR_EXIT_WAIT_MS after end of file) and free it. *status gets
 * its wait status (-1 when it could not be reaped). */
static void vr_worker_end(vr_worker *w, int kill_now, int *status)
{
    int st = -1;
    if (w->fd >= 0)
        close(w->fd);
    if (kill_now) {
        kill(-w->pid, SIGKILL);
        kill(w->pid, SIGKILL);
    }
    for (unsigned waited = 0;; waited += 10) {
        pid_t r = waitpid(w->pid, &st, kill_now ? 0 : WNOHANG);
        if (r == w->pid || (r < 0 && errno != EINTR)) {
            if (r < 0)
                st = -1;
            break;
        }
        if (r == 0 && waited >= VR_EXIT_WAIT_MS) {
            kill(-w->pid, SIGKILL);
            kill(w->pid, SIGKILL);
            kill_now = 1;
        } else if (r == 0) {
            vr_sleep_ms(10);
        }
    }
    if (status != NULL)
        *status = st;
    free(w);
}

/* "crashed (SIGSEGV)", "exited (status 3)", ... for a wait status (heap). */
static char *vr_death(int st)
{
    if (st != -1 && WIFSIGNALED(st)) {
        const char *abbr = sigabbrev_np(WTERMSIG(st));
        return abbr != NULL ? vr_strfmt("crashed (SIG%s)", abbr)
                            : vr_strfmt("crashed (signal %d)", WTERMSIG(st));
    }
    if (st != -1 && WIFEXITED(st))
        return vr_strfmt("exited (status %d)", WEXITSTATUS(st));
    return vr_xstrdup("ended (its exit status is unknown)");
}

/* Start a worker and hand it the configuration: the worker, or NULL with
 * *why (heap). */
static vr_worker *vr_worker_start(vr_isolate *iso, char **why)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        *why = vr_strfmt("socketpair: %s", strerror(errno));
        return NULL;
    }
    /* Its end above VR_ISOLATE_FD, so the dup2 below always copies (and
     * so clears close-on-exec). */
    int child = fcntl(sv[1], F_DUPFD_CLOEXEC, VR_ISOLATE_FD + 1);
    close(sv[1]);
    if (child < 0) {
        *why = vr_strfmt("fcntl: %s", strerror(errno));
        close(sv[0]);
        return NULL;
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none;
    sigemptyset(&none);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, child, VR_ISOLATE_FD);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at,
                             POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    char *argv[] = {iso->exe, (char *)VR_ISOLATE_WORKER_FLAG, NULL};
    pid_t pid = -1;
    /* /proc/self/exe, not the name: the running program's own file even
     * when vsched-run was replaced (reinstalled) since it started. */
    int rc = posix_spawn(&pid, "/proc/self/exe", &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(child);
    if (rc != 0) {
        *why = vr_strfmt("cannot run %s: %s", iso->exe, strerror(rc));
        close(sv[0]);
        return NULL;
    }
    vr_worker *w = vr_xcalloc(1, sizeof *w);
    w->pid = pid;
    w->fd = sv[0];
    uint8_t type = 0;
    char *buf = NULL;
    size_t len = 0;
    rc = vr_wire_send(w->fd, VR_W_HELLO, &iso->hello);
    if (rc == 0)
        rc = vr_wire_recv(w->fd, vr_wire_now_ns() + VR_START_S * 1000000000ull,
                          &type, &buf, &len);
    vr_rbuf r = {buf, len, 0, 0};
    int status = rc == 0 && type == VR_W_READY ? vr_r_i32(&r) : VSCHED_EIO;
    const char *msg = rc == 0 && type == VR_W_READY ? vr_r_str(&r) : NULL;
    if (rc == 0 && type == VR_W_READY && !r.bad && status == 0) {
        free(buf);
        return w;
    }
    int st = -1;
    if (rc == 0 && type == VR_W_READY && !r.bad) {
        *why = vr_xstrdup(msg != NULL ? msg : "its instance was not created");
        vr_worker_end(w, 0, NULL);
    } else {
        vr_worker_end(w, rc != VSCHED_EIO, &st);
        char *d = vr_death(st);
        *why = rc == VSCHED_ETIMEDOUT
                   ? vr_strfmt("it did not start within %d s", VR_START_S)
                   : vr_strfmt("it %s while starting", d);
        free(d);
    }
    free(buf);
    return NULL;
}

/* ---- the pool ------------------------------------------------------------------ */

static vr_worker *vr_take(vr_isolate *iso)
{
    pthread_mutex_lock(&iso->lock);
    vr_worker *w = iso->idle;
    if (w != NULL)
        iso->idle = w->next;
    pthread_mutex_unlock(&iso->lock);
    return w;
}

static void vr_give_back(vr_isolate *iso, vr_worker *w)
{
    pthread_mutex_lock(&iso->lock);
    w->next = iso->idle;
    iso->idle = w;
    pthread_mutex_unlock(&iso->lock);
}

/* ---- one call -------------------------------------------------------------------- */

/* Report "plugin 'P' <what> in OP of NAME<tail>" on the call's file. */
static void vr_report(const vr_call *c, const char *what, const char *tail)
{
    /* Raw: whoever prints a diagnostic escapes it (progress.c). */
    char *msg = vr_strfmt("plugin '%s' %s in %s of %s%s", c->iso->desc->name,
                          what, c->op, c->name != NULL ? c->name : "?", tail);
    c->ctx->diag(c->ctx, VSCHED_SEV_ERROR, c->name, 0, msg);
    free(msg);
}

/* The worker of c died or broke: end it and say why. */
static int vr_fail(vr_call *c, vr_worker *w, int kill_now, int rc,
                   const char *cause)
{
    int st = -1;
    vr_worker_end(w, kill_now, &st);
    c->w = NULL;
    if (rc == VSCHED_ECANCELLED)
        return rc;
    char *d = cause == NULL ? vr_death(st) : NULL;
    vr_report(c, cause != NULL ? cause : d,
              "; its worker was replaced ([executor] isolate)");
    free(d);
    return rc;
}

/* Answer one message of the worker during a call. 0 (RESULT: *done set),
 * or -1 with *why (static text) when the message breaks the protocol. */
static int vr_serve(vr_call *c, int fd, uint8_t type, char *buf, size_t len,
                    int *done, const char **why)
{
    vr_rbuf r = {buf, len, 0, 0};
    vr_wbuf w = {0};
    int rc = 0;
    const vsched_ctx *ctx = c->ctx;
    int loader = VSCHED_HAS_FIELD(ctx, vsched_ctx, realpath) &&
                 ctx->load != NULL && ctx->realpath != NULL;
    if (type == VR_W_RESULT) {
        c->reply = buf;
        c->reply_len = len;
        *done = 1;
        return 0;
    }
    if (type == VR_W_DIAG) {
        uint32_t sev = vr_r_u32(&r);
        const char *file = vr_r_str(&r);
        uint32_t line = vr_r_u32(&r);
        const char *msg = vr_r_str(&r);
        if (r.bad || msg == NULL || sev > VSCHED_SEV_ERROR) {
            *why = "a malformed diagnostic";
            rc = -1;
        } else {
            ctx->diag(ctx, (vsched_severity)sev, file, line, msg);
        }
    } else if (type == VR_W_NEED) {
        uint32_t i = vr_r_u32(&r);
        if (r.bad || i >= c->n_refs || c->refs[i] == NULL) {
            *why = "a request for a snapshot the call does not have";
            rc = -1;
        } else {
            const vr_iso_snap *s = c->refs[i];
            vr_w_str(&w, s->name);
            vr_w_str(&w, s->kind);
            vr_w_blob(&w, s->bytes != NULL ? s->bytes : "", s->len);
            rc = vr_wire_send(fd, VR_W_SNAP, &w) == 0 ? 0 : 1;
        }
    } else if (type == VR_W_LOAD || type == VR_W_REALPATH) {
        const char *name = vr_r_str(&r);
        if (r.bad || name == NULL || !loader) {
            *why = !loader ? "a loader call where the context has no loader"
                           : "a malformed loader call";
            rc = -1;
        } else if (type == VR_W_LOAD) {
            char *bytes = NULL;
            size_t n = 0;
            int s = ctx->load(ctx, name, &bytes, &n);
            vr_w_i32(&w, s);
            vr_w_blob(&w, s == 0 ? (bytes != NULL ? bytes : "") : NULL,
                      s == 0 ? n : 0);
            if (bytes != NULL)
                ctx->free(ctx, bytes);
            rc = vr_wire_send(fd, VR_W_LOADED, &w) == 0 ? 0 : 1;
        } else {
            char *canon = NULL;
            int s = ctx->realpath(ctx, name, &canon);
            vr_w_i32(&w, s);
            vr_w_str(&w, s == 0 ? canon : NULL);
            if (canon != NULL)
                ctx->free(ctx, canon);
            rc = vr_wire_send(fd, VR_W_REALED, &w) == 0 ? 0 : 1;
        }
    } else {
        *why = "a message of an unknown type";
        rc = -1;
    }
    vr_w_free(&w);
    free(buf);
    return rc > 0 ? 0 : rc; /* a failed send shows as end of file next */
}

/* Contract: see isolate_int.h. */
int vr_call_run(vr_call *c, uint8_t type, const vr_wbuf *req)
{
    vr_isolate *iso = c->iso;
    c->reply = NULL;
    c->reply_len = 0;
    c->w = NULL;
    vr_worker *w = vr_take(iso);
    if (w == NULL) {
        char *why = NULL;
        w = vr_worker_start(iso, &why);
        if (w == NULL) {
            char *what =
                vr_strfmt("could not start an isolated worker (%s)", why);
            vr_report(c, what, "");
            free(what);
            free(why);
            return VSCHED_EERR;
        }
    }
    uint64_t t0 = vr_wire_now_ns();
    uint64_t deadline =
        iso->timeout_s > 0 ? t0 + (uint64_t)iso->timeout_s * 1000000000ull : 0;
    uint64_t cancel_by = 0;
    if (vr_wire_send(w->fd, type, req) != 0)
        return vr_fail(c, w, 0, VSCHED_ETOOL, NULL);
    for (;;) {
        uint64_t now = vr_wire_now_ns();
        if (deadline != 0 && now >= deadline) {
            char *what =
                vr_strfmt("timed out (no answer after %u s)", iso->timeout_s);
            int rc = vr_fail(c, w, 1, VSCHED_ETIMEDOUT, what);
            free(what);
            return rc;
        }
        if (cancel_by == 0 && c->ctx->is_cancelled(c->ctx)) {
            cancel_by = now + VR_ISOLATE_CANCEL_MS * 1000000ull;
            (void)vr_wire_send(w->fd, VR_W_CANCEL, NULL);
        }
        if (cancel_by != 0 && now >= cancel_by)
            return vr_fail(c, w, 1, VSCHED_ECANCELLED, NULL);
        struct pollfd pfd = {.fd = w->fd, .events = POLLIN};
        int k = poll(&pfd, 1, VR_POLL_MS);
        if (k < 0 && errno != EINTR)
            return vr_fail(c, w, 1, VSCHED_ETOOL, NULL);
        if (k <= 0)
            continue;
        uint8_t mt = 0;
        char *buf = NULL;
        size_t len = 0;
        int rc = vr_wire_recv(w->fd, deadline, &mt, &buf, &len);
        if (rc == VSCHED_EINVAL) {
            char *what = vr_strfmt(
                "sent a malformed answer (a message of %zu bytes; the "
                "bound is %u MiB)",
                len, VR_WIRE_MAX >> 20);
            rc = vr_fail(c, w, 1, VSCHED_EINVAL, what);
            free(what);
            return rc;
        }
        if (rc == VSCHED_ETIMEDOUT)
            continue; /* the top of the loop ends it */
        if (rc != 0)  /* end of file: it died; its status says how */
            return vr_fail(c, w, 0, VSCHED_ETOOL, NULL);
        int done = 0;
        const char *why = NULL;
        if (vr_serve(c, w->fd, mt, buf, len, &done, &why) != 0) {
            char *what = vr_strfmt("sent a malformed answer (%s)", why);
            rc = vr_fail(c, w, 1, VSCHED_EINVAL, what);
            free(what);
            return rc;
        }
        if (done) {
            c->w = w;
            return 0;
        }
    }
}

/* Contract: see isolate_int.h. */
void vr_call_done(vr_call *c)
{
    if (c->w != NULL)
        vr_give_back(c->iso, c->w);
    c->w = NULL;
    free(c->reply);
    c->reply = NULL;
}

/* Contract: see isolate_int.h. */
int vr_call_malformed(vr_call *c, const char *what)
{
    free(c->reply);
    c->reply = NULL;
    char *cause = vr_strfmt("sent a malformed answer (%s)", what);
    int rc = VSCHED_EINVAL;
    if (c->w != NULL)
        rc = vr_fail(c, c->w, 1, VSCHED_EINVAL, cause);
    free(cause);
    return rc;
}

/* ---- life -------------------------------------------------------------------------- */

/* Contract: see isolate.h. */
unsigned vr_isolate_timeout(const vr_config *cfg, const vsched_plugin *desc,
                            long isolate_timeout)
{
    if (isolate_timeout > 0)
        return (unsigned)isolate_timeout;
    for (size_t i = 0; i < desc->n_schema; i++) {
        const vsched_key *k = &desc->schema[i];
        if (strcmp(k->name, "timeout") != 0 || k->type != VSCHED_KEY_INT)
            continue;
        const char *v = vr_config_get(cfg, "executor", "timeout");
        long long t = 0;
        if (v == NULL)
            v = k->dflt;
        if (v != NULL && vr_schema_parse_int(v, &t) == 0 && t > 0 &&
            t < 604800)
            return (unsigned)t + VR_ISOLATE_GRACE_S;
    }
    return 0;
}

/* The HELLO payload: protocol, plugin, the configuration's path and
 * directory, and every (section, key, value) as the host holds it. */
static void vr_hello(vr_wbuf *w, const char *plugin, const vr_config *cfg)
{
    size_t n = 0;
    const vr_config_entry *e = vr_config_entries(cfg, &n);
    vr_w_u32(w, VR_WIRE_PROTOCOL);
    vr_w_str(w, plugin);
    vr_w_str(w, vr_config_path(cfg));
    vr_w_str(w, vr_config_dir(cfg));
    vr_w_u64(w, n);
    for (size_t i = 0; i < n; i++) {
        vr_w_str(w, e[i].section);
        vr_w_str(w, e[i].key);
        vr_w_str(w, vr_config_get(cfg, e[i].section, e[i].key));
    }
}

/* Contract: see isolate.h. */
int vr_isolate_new(vr_isolate **out, const vr_isolate_opts *o, char **err)
{
    char exe[PATH_MAX];
    *out = NULL;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || (size_t)n >= sizeof exe - 1) {
        *err = vr_strfmt("[executor] isolate: cannot find this program to "
                         "start its workers (/proc/self/exe: %s); is /proc "
                         "mounted?",
                         n < 0 ? strerror(errno) : "too long");
        return VSCHED_EERR;
    }
    exe[n] = '\0';
    vr_isolate *iso = vr_xcalloc(1, sizeof *iso);
    iso->desc = o->desc;
    iso->plugin = vr_xstrdup(o->plugin);
    iso->exe = vr_xstrdup(exe);
    iso->timeout_s = o->timeout_s;
    pthread_mutex_init(&iso->lock, NULL);
    vr_hello(&iso->hello, o->plugin, o->cfg);
    vr_isolate_ops_init(iso);
    *out = iso;
    return 0;
}

/* Contract: see isolate.h. */
void vr_isolate_free(vr_isolate *iso)
{
    if (iso == NULL)
        return;
    /* End of file to all at once, then reap each (they exit together). */
    for (vr_worker *w = iso->idle; w != NULL; w = w->next) {
        close(w->fd);
        w->fd = -1;
    }
    while (iso->idle != NULL) {
        vr_worker *w = iso->idle;
        iso->idle = w->next;
        vr_worker_end(w, 0, NULL);
    }
    vr_w_free(&iso->hello);
    pthread_mutex_destroy(&iso->lock);
    free(iso->plugin);
    free(iso->exe);
    free(iso);
}

/* Contract: see isolate.h. */
vsched_executor_binding vr_isolate_binding(vr_isolate *iso)
{
    return (vsched_executor_binding){
        &iso->ops, iso, (iso->desc->flags & VSCHED_PLUGIN_THREAD_SAFE) != 0};
}
