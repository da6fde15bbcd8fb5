/*
 * notify -- inotify over a tree, or a periodic scan; see notify.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strmap.h"
#include "common/util.h"
#include "watch/notify.h"

#define VR_DIR_MASK                                                           \
    (IN_CLOSE_WRITE | IN_MODIFY | IN_CREATE | IN_DELETE | IN_MOVED_FROM |     \
     IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR |               \
     IN_EXCL_UNLINK)

/* A file's stamp as the scan saw it. */
typedef struct vr_seen {
    char *name;
    int64_t mtime_ns, ctime_ns;
    uint64_t size, ino;
} vr_seen;

typedef struct vr_scan {
    vr_seen *v;
    size_t n, cap;
    vr_strmap *index; /* name -> v index */
} vr_scan;

struct vr_notify {
    vr_notify_opts o;
    char *root;
    char **skip;
    int fd;      /* inotify, or -1 when polling */
    char **dirs; /* by watch descriptor: the directory's name ("" for
                          the root), NULL when not (or no longer) watched */
    size_t n_dirs;
    size_t watches;
    int root_wd;
    vr_scan last; /* polling: the previous scan */
};

/* ---- names -------------------------------------------------------------- */

static int vr_hidden(const char *base)
{
    size_t n = strlen(base);
    return base[0] == '.' || (n > 0 && base[n - 1] == '~');
}

static char *vr_child(const char *dir, const char *base)
{
    return dir[0] == '\0' ? vr_xstrdup(base) : vr_strfmt("%s/%s", dir, base);
}

static char *vr_abs(const vr_notify *n, const char *rel)
{
    return rel[0] == '\0' ? vr_xstrdup(n->root)
                          : vr_strfmt("%s/%s", n->root, rel);
}

static int vr_skipped(const vr_notify *n, const char *abs)
{
    for (size_t i = 0; i < n->o.n_skip; i++)
        if (strcmp(abs, n->skip[i]) == 0)
            return 1;
    return 0;
}

/* ---- polling ------------------------------------------------------------ */

static void vr_scan_free(vr_scan *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].name);
    free(s->v);
    vr_strmap_free(s->index);
    memset(s, 0, sizeof *s);
}

static void vr_scan_add(vr_scan *s, const char *name, const struct stat *st)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->v = vr_xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n] = (vr_seen){
        vr_xstrdup(name),
        (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
        (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
        (uint64_t)st->st_size, (uint64_t)st->st_ino};
    vr_strmap_put(s->index, name, (long)s->n++);
}

/* Every regular file under rel (depth first), into s. */
static void vr_scan_dir(const vr_notify *n, const char *rel, vr_scan *s)
{
    char *abs = vr_abs(n, rel);
    DIR *d = vr_skipped(n, abs) ? NULL : opendir(abs);
    free(abs);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (vr_hidden(e->d_name))
            continue;
        char *child = vr_child(rel, e->d_name);
        char *path = vr_abs(n, child);
        struct stat st;
        if (lstat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                vr_scan_dir(n, child, s);
            else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
                vr_scan_add(s, child, &st);
        }
        free(path);
        free(child);
    }
    closedir(d);
}

static int vr_root_is_dir(const vr_notify *n)
{
    struct stat st;
    return stat(n->root, &st) == 0 && S_ISDIR(st.st_mode);
}

/* One scan, compared with the last one. */
static int vr_poll_take(vr_notify *n, vr_notify_fn fn, void *user)
{
    if (!vr_root_is_dir(n))
        return VR_NOTIFY_GONE;
    vr_scan now = {NULL, 0, 0, vr_strmap_new(n->last.n + 16)};
    vr_scan_dir(n, "", &now);
    for (size_t i = 0; i < now.n; i++) {
        const vr_seen *a = &now.v[i];
        long j = vr_strmap_get(n->last.index, a->name);
        const vr_seen *b = j >= 0 ? &n->last.v[j] : NULL;
        if (b == NULL || a->mtime_ns != b->mtime_ns ||
            a->ctime_ns != b->ctime_ns || a->size != b->size ||
            a->ino != b->ino)
            fn(user, a->name);
    }
    for (size_t j = 0; j < n->last.n; j++)
        if (vr_strmap_get(now.index, n->last.v[j].name) < 0)
            fn(user, n->last.v[j].name); /* deleted */
    vr_scan_free(&n->last);
    n->last = now;
    return 0;
}

/* ---- inotify ------------------------------------------------------------ */

static unsigned long vr_sysctl(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long v = 0;
    if (f != NULL) {
        if (fscanf(f, "%lu", &v) != 1)
            v = 0;
        fclose(f);
    }
    return v;
}

static void vr_drop_watches(vr_notify *n)
{
    if (n->fd >= 0)
        close(n->fd);
    n->fd = -1;
    for (size_t i = 0; i < n->n_dirs; i++)
        free(n->dirs[i]);
    free(n->dirs);
    n->dirs = NULL;
    n->n_dirs = n->watches = 0;
}

/* inotify cannot watch the tree: say why and what to do, then poll. */
static void vr_fall_back(vr_notify *n, const char *what, const char *where)
{
    size_t had = n->watches;
    vr_drop_watches(n);
    FILE *e = n->o.err;
    if (strcmp(what, "instances") == 0)
        fprintf(e,
                "vsched-run: watch: no inotify instance is left (%s); the "
                "limit is fs.inotify.max_user_instances = %lu: raise it "
                "(sysctl fs.inotify.max_user_instances=1024) or stop other "
                "watchers; polling the tree every %u ms instead\n",
                where, vr_sysctl("/proc/sys/fs/inotify/max_user_instances"),
                n->o.poll_ms);
    else
        fprintf(e,
                "vsched-run: watch: cannot watch %s: the inotify watch "
                "limit is reached after %zu directories "
                "(fs.inotify.max_user_watches = %lu); raise it (sysctl "
                "fs.inotify.max_user_watches=524288); polling the tree every "
                "%u ms instead\n",
                where, had, vr_sysctl("/proc/sys/fs/inotify/max_user_watches"),
                n->o.poll_ms);
    fflush(e);
    vr_scan_free(&n->last);
    n->last.index = vr_strmap_new(64);
    vr_scan_dir(n, "", &n->last);
}

/* Watch directory rel and everything under it. With `report`, the files
 * found are reported (they may predate the watch). Returns -1 once the
 * module fell back to polling. */
static int vr_watch_tree(vr_notify *n, const char *rel, int report,
                         vr_notify_fn fn, void *user)
{
    char *abs = vr_abs(n, rel);
    if (vr_skipped(n, abs)) {
        free(abs);
        return 0;
    }
    int wd = inotify_add_watch(n->fd, abs, VR_DIR_MASK);
    if (wd < 0) {
        int e = errno;
        if (e == ENOSPC) {
            vr_fall_back(n, "watches", abs);
            free(abs);
            return -1;
        }
        free(abs);
        return 0; /* gone already, or not a directory: nothing to watch */
    }
    if ((size_t)wd >= n->n_dirs) {
        size_t cap = (size_t)wd + 64;
        n->dirs = vr_xrealloc(n->dirs, cap * sizeof *n->dirs);
        memset(n->dirs + n->n_dirs, 0, (cap - n->n_dirs) * sizeof *n->dirs);
        n->n_dirs = cap;
    }
    if (n->dirs[wd] == NULL)
        n->watches++;
    free(n->dirs[wd]);
    n->dirs[wd] = vr_xstrdup(rel);
    DIR *d = opendir(abs);
    free(abs);
    if (d == NULL)
        return 0;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (vr_hidden(e->d_name))
            continue;
        char *child = vr_child(rel, e->d_name);
        char *path = vr_abs(n, child);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            rc = vr_watch_tree(n, child, report, fn, user);
        else if (report)
            fn(user, child);
        free(path);
        free(child);
    }
    closedir(d);
    return rc;
}

/* One event of a watched directory. */
static int vr_event(vr_notify *n, const struct inotify_event *ev,
                    vr_notify_fn fn, void *user)
{
    if (ev->mask & IN_Q_OVERFLOW) {
        fn(user, NULL);
        return 0;
    }
    if (ev->wd < 0 || (size_t)ev->wd >= n->n_dirs || n->dirs[ev->wd] == NULL)
        return 0;
    if (ev->wd == n->root_wd &&
        (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT)))
        return VR_NOTIFY_GONE;
    if (ev->mask & IN_IGNORED) { /* that directory went */
        free(n->dirs[ev->wd]);
        n->dirs[ev->wd] = NULL;
        n->watches--;
        return 0;
    }
    if (ev->len == 0 || ev->name[0] == '\0' || vr_hidden(ev->name))
        return 0;
    char *child = vr_child(n->dirs[ev->wd], ev->name);
    if ((ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
        fn(user, child);
        vr_watch_tree(n, child, 1, fn, user);
    } else {
        fn(user, child); /* a file, or a directory that left */
    }
    free(child);
    return 0;
}

static int vr_inotify_take(vr_notify *n, vr_notify_fn fn, void *user)
{
    _Alignas(struct inotify_event) char buf[16384];
    for (;;) {
        ssize_t len = read(n->fd, buf, sizeof buf);
        if (len < 0 && errno == EINTR)
            continue;
        if (len <= 0)
            return 0; /* EAGAIN: all taken */
        for (char *p = buf; p < buf + len;) {
            const struct inotify_event *ev = (const void *)p;
            p += sizeof *ev + ev->len;
            if (vr_event(n, ev, fn, user) == VR_NOTIFY_GONE)
                return VR_NOTIFY_GONE;
            if (n->fd < 0) /* fell back to polling meanwhile */
                return vr_poll_take(n, fn, user);
        }
    }
}

/* ---- the module --------------------------------------------------------- */

static void vr_ignore(void *user, const char *name)
{
    (void)user;
    (void)name;
}

/* Contract: see notify.h. */
int vr_notify_open(vr_notify **out, const vr_notify_opts *o, char **err)
{
    *out = NULL;
    struct stat st;
    if (stat(o->root, &st) != 0) {
        *err = vr_strfmt("cannot watch %s: %s", o->root, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        *err = vr_strfmt("cannot watch %s: not a directory", o->root);
        return -1;
    }
    vr_notify *n = vr_xcalloc(1, sizeof *n);
    n->o = *o;
    n->root = vr_xstrdup(o->root);
    n->skip = vr_xcalloc(o->n_skip + 1, sizeof *n->skip);
    for (size_t i = 0; i < o->n_skip; i++)
        n->skip[i] = vr_xstrdup(o->skip[i]);
    n->root_wd = -1;
    n->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (n->fd < 0) {
        vr_fall_back(n, "instances", strerror(errno));
    } else if (vr_watch_tree(n, "", 0, vr_ignore, NULL) == 0) {
        n->root_wd = 1; /* the first watch of a fresh instance */
        for (size_t i = 0; i < n->n_dirs; i++)
            if (n->dirs[i] != NULL && n->dirs[i][0] == '\0')
                n->root_wd = (int)i;
    }
    *out = n;
    return 0;
}

/* Contract: see notify.h. */
void vr_notify_close(vr_notify *n)
{
    if (n == NULL)
        return;
    vr_drop_watches(n);
    vr_scan_free(&n->last);
    for (size_t i = 0; i < n->o.n_skip; i++)
        free(n->skip[i]);
    free(n->skip);
    free(n->root);
    free(n);
}

/* Contract: see notify.h. */
int vr_notify_fd(const vr_notify *n)
{
    return n->fd;
}

/* Contract: see notify.h. */
int vr_notify_polling(const vr_notify *n)
{
    return n->fd < 0;
}

/* Contract: see notify.h. */
size_t vr_notify_watches(const vr_notify *n)
{
    return n->watches;
}

/* Contract: see notify.h. */
int vr_notify_take(vr_notify *n, vr_notify_fn fn, void *user)
{
    return n->fd >= 0 ? vr_inotify_take(n, fn, user)
                      : vr_poll_take(n, fn, user);
}
