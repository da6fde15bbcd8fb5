/*
 * watcher -- the settle window and the in-flight invalidation; see
 * watcher.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/strmap.h"
#include "common/util.h"
#include "watch/watcher.h"

/* A set of names in arrival order. Owned by one side at a time. */
typedef struct vr_nameset {
    char **v;
    size_t n, cap;
    vr_strmap *index;
    int all;
} vr_nameset;

struct vr_watcher {
    vr_notify *notify; /* the watcher thread's alone after start */
    char *root;
    unsigned settle_ms, poll_ms;
    pthread_t thread;
    int ctl[2];         /* main -> thread: a byte means stop */
    int wake[2];        /* thread -> main: something to see */
    int intr[2];        /* signals -> main: stop (signals.h VR_SIG_WAKE) */
    vr_nameset pending; /* the thread's: seen, not settled yet */
    uint64_t events;    /* the thread's: changes seen, a repeat included */

    /* lock: guards everything below (a host leaf). */
    pthread_mutex_t lock;
    pthread_cond_t idle; /* busy went to 0 */
    vr_nameset ready;    /* settled, not taken by the main thread */
    int fresh;           /* ready holds names seen with no build live */
    int gone;
    vsched *sched;       /* the build running now, or NULL */
    int busy;            /* the thread is invalidating in sched */
    vr_nameset absorbed; /* invalidated in the build given last */
    int polling;
    size_t watches;
};

static uint64_t vr_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- name sets ---------------------------------------------------------- */

static void vr_nameset_add(vr_nameset *s, const char *name)
{
    if (name == NULL) {
        s->all = 1;
        return;
    }
    if (s->index == NULL)
        s->index = vr_strmap_new(16);
    if (vr_strmap_get(s->index, name) >= 0)
        return;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->v = vr_xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n] = vr_xstrdup(name);
    vr_strmap_put(s->index, name, (long)s->n++);
}

static void vr_nameset_clear(vr_nameset *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    vr_strmap_free(s->index);
    memset(s, 0, sizeof *s);
}

/* Contract: see watcher.h. */
void vr_changes_free(vr_changes *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->names[i]);
    free(c->names);
    memset(c, 0, sizeof *c);
}

/* ---- the thread --------------------------------------------------------- */

static void vr_on_change(void *user, const char *name)
{
    vr_watcher *w = user;
    w->events++;
    vr_nameset_add(&w->pending, name);
}

static void vr_poke(int fd)
{
    char c = 1;
    ssize_t w = write(fd, &c, 1); /* a full pipe already says it */
    (void)w;
}

static int vr_is_file(const vr_watcher *w, const char *name)
{
    char *path = vr_strfmt("%s/%s", w->root, name);
    struct stat st;
    int ok = stat(path, &st) == 0 && S_ISREG(st.st_mode);
    free(path);
    return ok;
}

/* The quiet period ended: invalidate in the running build, hand over. */
static void vr_settle(vr_watcher *w)
{
    vr_nameset set = w->pending;
    memset(&w->pending, 0, sizeof w->pending);
    pthread_mutex_lock(&w->lock);
    vsched *s = w->sched;
    if (s != NULL)
        w->busy = 1;
    pthread_mutex_unlock(&w->lock);
    vr_nameset absorbed = {0};
    for (size_t i = 0; s != NULL && i < set.n; i++)
        if (vr_is_file(w, set.v[i]) &&
            vsched_invalidate(s, set.v[i]) == VSCHED_OK)
            vr_nameset_add(&absorbed, set.v[i]);
    pthread_mutex_lock(&w->lock);
    if (s != NULL) {
        w->busy = 0;
        for (size_t i = 0; i < absorbed.n; i++)
            vr_nameset_add(&w->absorbed, absorbed.v[i]);
        pthread_cond_broadcast(&w->idle);
    } else {
        w->fresh = 1;
    }
    for (size_t i = 0; i < set.n; i++)
        vr_nameset_add(&w->ready, set.v[i]);
    w->ready.all |= set.all;
    w->polling = vr_notify_polling(w->notify);
    w->watches = vr_notify_watches(w->notify);
    pthread_mutex_unlock(&w->lock);
    vr_nameset_clear(&set);
    vr_nameset_clear(&absorbed);
    vr_poke(w->wake[1]);
}

static void *vr_watcher_main(void *arg)
{
    vr_watcher *w = arg;
    uint64_t last_change = 0, next_scan = vr_mono_ms() + w->poll_ms;
    for (;;) {
        uint64_t now = vr_mono_ms();
        int polling = vr_notify_polling(w->notify);
        long timeout = -1;
        if (w->pending.n > 0 || w->pending.all)
            timeout = (long)(last_change + w->settle_ms > now
                                 ? last_change + w->settle_ms - now
                                 : 0);
        if (polling) {
            long t = (long)(next_scan > now ? next_scan - now : 0);
            timeout = timeout < 0 || t < timeout ? t : timeout;
        }
        struct pollfd fds[2] = {{w->ctl[0], POLLIN, 0},
                                {vr_notify_fd(w->notify), POLLIN, 0}};
        int rc = poll(fds, polling ? 1 : 2, (int)timeout);
        if (rc < 0 && errno != EINTR)
            break;
        if (fds[0].revents != 0)
            break; /* stop */
        now = vr_mono_ms();
        int take =
            (!polling && fds[1].revents != 0) || (polling && now >= next_scan);
        if (take) {
            uint64_t before = w->events;
            if (vr_notify_take(w->notify, vr_on_change, w) == VR_NOTIFY_GONE) {
                pthread_mutex_lock(&w->lock);
                w->gone = 1;
                pthread_mutex_unlock(&w->lock);
                vr_poke(w->wake[1]);
                break;
            }
            if (w->events != before) /* a repeat restarts the window too */
                last_change = now;
            if (polling)
                next_scan = now + w->poll_ms;
        }
        if ((w->pending.n > 0 || w->pending.all) &&
            now >= last_change + w->settle_ms)
            vr_settle(w);
    }
    return NULL;
}

/* ---- the main thread's side --------------------------------------------- */

static int vr_pipe(int fds[2])
{
    if (pipe(fds) != 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        fcntl(fds[i], F_SETFD, FD_CLOEXEC);
        fcntl(fds[i], F_SETFL, O_NONBLOCK);
    }
    return 0;
}

/* Contract: see watcher.h. */
int vr_watcher_start(vr_watcher **out, const vr_notify_opts *o,
                     unsigned settle_ms, char **err)
{
    *out = NULL;
    vr_watcher *w = vr_xcalloc(1, sizeof *w);
    w->ctl[0] = w->ctl[1] = w->wake[0] = w->wake[1] = -1;
    w->intr[0] = w->intr[1] = -1;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->idle, NULL);
    w->root = vr_xstrdup(o->root);
    w->settle_ms = settle_ms;
    w->poll_ms = o->poll_ms;
    if (vr_notify_open(&w->notify, o, err) != 0)
        goto fail;
    w->polling = vr_notify_polling(w->notify);
    w->watches = vr_notify_watches(w->notify);
    if (vr_pipe(w->ctl) != 0 || vr_pipe(w->wake) != 0 ||
        vr_pipe(w->intr) != 0) {
        *err =
            vr_strfmt("cannot watch %s: pipe: %s", o->root, strerror(errno));
        goto fail;
    }
    if (pthread_create(&w->thread, NULL, vr_watcher_main, w) != 0) {
        *err = vr_strfmt("cannot watch %s: cannot start a thread", o->root);
        goto fail;
    }
    *out = w;
    return 0;
fail:
    for (int i = 0; i < 2; i++) {
        if (w->ctl[i] >= 0)
            close(w->ctl[i]);
        if (w->wake[i] >= 0)
            close(w->wake[i]);
        if (w->intr[i] >= 0)
            close(w->intr[i]);
    }
    vr_notify_close(w->notify);
    pthread_cond_destroy(&w->idle);
    pthread_mutex_destroy(&w->lock);
    free(w->root);
    free(w);
    return -1;
}

/* Contract: see watcher.h. */
void vr_watcher_stop(vr_watcher *w)
{
    if (w == NULL)
        return;
    vr_poke(w->ctl[1]);
    pthread_join(w->thread, NULL);
    for (int i = 0; i < 2; i++) {
        close(w->ctl[i]);
        close(w->wake[i]);
        close(w->intr[i]);
    }
    vr_notify_close(w->notify);
    vr_nameset_clear(&w->pending);
    vr_nameset_clear(&w->ready);
    vr_nameset_clear(&w->absorbed);
    pthread_cond_destroy(&w->idle);
    pthread_mutex_destroy(&w->lock);
    free(w->root);
    free(w);
}

/* Contract: see watcher.h. */
int vr_watcher_wake_fd(const vr_watcher *w)
{
    return w->intr[1];
}

/* Contract: see watcher.h. */
void vr_watcher_session(vr_watcher *w, vsched *s)
{
    pthread_mutex_lock(&w->lock);
    while (w->busy)
        pthread_cond_wait(&w->idle, &w->lock);
    w->sched = s;
    if (s != NULL)
        vr_nameset_clear(&w->absorbed);
    pthread_mutex_unlock(&w->lock);
}

/* Contract: see watcher.h. */
void vr_watcher_absorbed(vr_watcher *w, vr_changes *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&w->lock);
    out->n = w->absorbed.n;
    out->names = vr_xcalloc(out->n + 1, sizeof *out->names);
    for (size_t i = 0; i < out->n; i++)
        out->names[i] = vr_xstrdup(w->absorbed.v[i]);
    pthread_mutex_unlock(&w->lock);
}

/* Contract: see watcher.h. */
int vr_watcher_wait(vr_watcher *w, vr_changes *out)
{
    memset(out, 0, sizeof *out);
    for (;;) {
        pthread_mutex_lock(&w->lock);
        int gone = w->gone;
        if (!gone && (w->ready.n > 0 || w->ready.all)) {
            out->names = w->ready.v;
            out->n = w->ready.n;
            out->all = w->ready.all;
            out->fresh = w->fresh;
            vr_strmap_free(w->ready.index);
            memset(&w->ready, 0, sizeof w->ready);
            w->fresh = 0;
        }
        pthread_mutex_unlock(&w->lock);
        if (gone)
            return VR_WATCH_GONE;
        if (out->n > 0 || out->all)
            return VR_WATCH_CHANGES;
        struct pollfd p[2] = {{w->wake[0], POLLIN, 0},
                              {w->intr[0], POLLIN, 0}};
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            return VR_WATCH_WOKEN;
        char buf[64];
        while (read(w->wake[0], buf, sizeof buf) > 0)
            ;
        if (p[1].revents != 0)
            return VR_WATCH_WOKEN;
    }
}

/* Contract: see watcher.h. */
int vr_watcher_polling(vr_watcher *w)
{
    pthread_mutex_lock(&w->lock);
    int p = w->polling;
    pthread_mutex_unlock(&w->lock);
    return p;
}

/* Contract: see watcher.h. */
size_t vr_watcher_watches(vr_watcher *w)
{
    pthread_mutex_lock(&w->lock);
    size_t n = w->watches;
    pthread_mutex_unlock(&w->lock);
    return n;
}
