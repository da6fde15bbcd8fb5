/*
 * watch -- the watch loop of vsched-run --watch; see watch.h.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/stat.h>

#include "cli/run.h"
#include "cli/signals.h"
#include "common/strmap.h"
#include "common/util.h"
#include "watch/watch.h"
#include "watch/watcher.h"

static double vr_watch_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What the session callback needs. */
typedef struct vr_watch_ctx {
    vr_watcher *w;
    vsched *sched;     /* the build's, while it runs */
    vr_strmap *inputs; /* the last build's inputs */
} vr_watch_ctx;

/* The build's requests are answered; a compile of stale content may still
 * be on its way out (asked to stop, its child being killed). Give it up
 * to two seconds to return, so its refusal is in this build's counters
 * and its process is gone before the next build starts. */
static void vr_watch_settle_sched(vsched *s)
{
    for (int i = 0; i < 2000; i++) {
        vsched_stats st;
        vsched_get_stats(s, &st);
        if (st.retired_pending == 0)
            return;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* The build hooks' session callback: the watcher invalidates changed
 * files in the running build. */
static void vr_watch_session(void *user, vsched *s)
{
    vr_watch_ctx *x = user;
    if (s == NULL && x->sched != NULL)
        vr_watch_settle_sched(x->sched);
    x->sched = s;
    vr_watcher_session(x->w, s);
}

/* The directories the build writes: not watched. */
static size_t vr_watch_skips(const vr_build *b, char *skip[3])
{
    size_t n = 0;
    const vr_settings *set = b->settings;
    skip[n++] = vr_xstrdup(set->state_dir);
    if (set->cache_dir != NULL)
        skip[n++] = vr_xstrdup(set->cache_dir);
    if (set->out_dir != NULL)
        skip[n++] = vr_xstrdup(set->out_dir);
    return n;
}

static void vr_watch_banner(const vr_build *b, vr_watcher *w, const char *root)
{
    if (b->cli->verbosity < 0)
        return;
    if (vr_watcher_polling(w))
        fprintf(b->out,
                "vsched-run: watching %s by polling; Ctrl-C "
                "stops\n",
                root);
    else
        fprintf(b->out,
                "vsched-run: watching %s (%zu directories); "
                "Ctrl-C stops\n",
                root, vr_watcher_watches(w));
    fflush(b->out);
}

/* The inputs of the last build (vr_build_inputs), to count an input that
 * went as a change. */
static vr_strmap *vr_watch_inputs(const vr_build *b)
{
    char **v = NULL, *err = NULL;
    size_t n = 0;
    vr_strmap *m = vr_strmap_new(64);
    if (vr_build_inputs(b, &v, &n, &err) == VSCHED_OK) {
        for (size_t i = 0; i < n; i++)
            vr_strmap_put(m, v[i], (long)i);
        vr_build_inputs_free(v, n);
    }
    free(err); /* matching nothing is said by the build itself */
    return m;
}

/* Add the changes of *c that count to `seen`: a file of the tree that
 * is there now, or an input of the last build that went (not a
 * directory, not a temporary that came and went). */
static size_t vr_watch_count(const char *root, const vr_strmap *inputs,
                             const vr_changes *c, vr_strmap *seen)
{
    size_t added = 0;
    for (size_t i = 0; i < c->n; i++) {
        char *path = vr_strfmt("%s/%s", root, c->names[i]);
        struct stat st;
        int there = lstat(path, &st) == 0;
        free(path);
        if (there ? S_ISDIR(st.st_mode)
                  : vr_strmap_get(inputs, c->names[i]) < 0)
            continue;
        if (vr_strmap_get(seen, c->names[i]) < 0) {
            vr_strmap_put(seen, c->names[i], 1);
            added++;
        }
    }
    return added;
}

/* One build for a settled set of changes; returns its exit status. */
static int vr_watch_round(const vr_build *wb, vr_watch_ctx *x,
                          const char *root, const vr_changes *c)
{
    vr_build_hooks *h = wb->hooks;
    h->rebuilt = h->failed = 0;
    h->scheduled = 0;
    double t0 = vr_watch_now();
    int status = vr_build_run(wb);
    double dt = vr_watch_now() - t0;
    vr_changes absorbed;
    vr_watcher_absorbed(x->w, &absorbed);
    /* Changes distinct by name: taken before the build, or invalidated
     * while it ran. */
    vr_strmap *seen = vr_strmap_new(c->n + absorbed.n + 1);
    size_t changed = 0;
    if (c->fresh || c->all)
        changed += vr_watch_count(root, x->inputs, c, seen);
    if (h->scheduled)
        changed += vr_watch_count(root, x->inputs, &absorbed, seen);
    vr_strmap_free(seen);
    vr_changes_free(&absorbed);
    vr_strmap_free(x->inputs);
    x->inputs = vr_watch_inputs(wb);
    if (status == VR_EXIT_INTERRUPTED)
        return status;
    /* A set already handled inside the last build and found current is
     * not news. */
    if (!c->fresh && !c->all && changed == 0 && h->rebuilt == 0 &&
        h->failed == 0 && status == VR_EXIT_OK)
        return status;
    fprintf(wb->out,
            "watch: %zu changed, %zu rebuilt, %zu failed "
            "(%.2f s)\n",
            changed, h->rebuilt, h->failed, dt);
    fflush(wb->out);
    return status;
}

static int vr_watch_loop(const vr_build *wb, vr_watch_ctx *x, const char *root)
{
    for (;;) {
        if (vr_signals_caught())
            return VR_EXIT_INTERRUPTED;
        vr_signals_phase(VR_SIG_WAKE, NULL);
        if (vr_signals_caught()) /* came before the phase was set */
            return VR_EXIT_INTERRUPTED;
        vr_changes c;
        int rc = vr_watcher_wait(x->w, &c);
        vr_signals_phase(VR_SIG_DEFER, NULL);
        if (vr_signals_caught() || rc == VR_WATCH_WOKEN) {
            vr_changes_free(&c);
            return VR_EXIT_INTERRUPTED;
        }
        if (rc == VR_WATCH_GONE) {
            fprintf(wb->err,
                    "vsched-run: watch: the source root %s was removed or "
                    "moved away; stopping (run vsched-run --watch again "
                    "once it is back)\n",
                    root);
            return VR_EXIT_FAILED;
        }
        int status = vr_watch_round(wb, x, root, &c);
        vr_changes_free(&c);
        if (status == VR_EXIT_INTERRUPTED)
            return status;
    }
}

/* Contract: see watch.h. */
int vr_watch_run(const vr_build *b)
{
    const char *root = b->settings->loader_root;
    if (root == NULL) {
        fprintf(b->err, "vsched-run: --watch needs a loader with a root "
                        "directory ([loader] root): there is no tree to "
                        "watch\n");
        return VR_EXIT_USAGE;
    }
    char *skip[3];
    size_t n_skip = vr_watch_skips(b, skip);
    vr_notify_opts o = {root, (const char *const *)skip, n_skip,
                        b->settings->watch_poll_ms, b->err};
    vr_watcher *w = NULL;
    char *err = NULL;
    int status = VR_EXIT_USAGE;
    if (vr_watcher_start(&w, &o, b->settings->watch_settle_ms, &err) != 0) {
        fprintf(b->err, "vsched-run: watch: %s\n", err);
        free(err);
        goto done;
    }
    vr_signals_wake_fd(vr_watcher_wake_fd(w));
    vr_watch_ctx x = {w, NULL, NULL};
    vr_build_hooks hooks = {vr_watch_session, &x, 0, 0, 0, 0};
    vr_build wb = *b;
    wb.hooks = &hooks;
    status = vr_build_run(&wb);
    if (status != VR_EXIT_USAGE && status != VR_EXIT_INTERRUPTED) {
        vr_watch_banner(b, w, root);
        hooks.quiet_noop = 1; /* the watch line says it */
        x.inputs = vr_watch_inputs(&wb);
        status = vr_watch_loop(&wb, &x, root);
    }
    vr_strmap_free(x.inputs);
    vr_signals_phase(VR_SIG_DEFER, NULL);
    vr_signals_wake_fd(-1);
    vr_watcher_stop(w);
done:
    for (size_t i = 0; i < n_skip; i++)
        free(skip[i]);
    return status;
}
