/*
 * notify -- what changed under a source root: inotify over the whole
 * directory tree, or, when the kernel cannot watch it, a periodic scan.
 *
 * Every directory under `root` is watched (inotify watches directories,
 * so a file created, deleted, renamed over -- an editor's write to a
 * temporary and rename -- or written in place is seen, whoever did it),
 * except the directories given as `skip` (the outputs and the state,
 * which the build itself writes) and hidden ones (a name starting with
 * '.': .git, .vsched). A directory created later is watched as soon as
 * its creation is read, and the files already in it are reported.
 * Changed names are reported relative to the root ("src/a.c"); hidden
 * files and editor backups ("a.c~") are not reported.
 *
 * The watch limit: when inotify_add_watch fails with ENOSPC (the user's
 * fs.inotify.max_user_watches is reached) or no inotify instance can be
 * had (fs.inotify.max_user_instances), a message on `err` names the
 * sysctl and the interval, every watch is dropped, and the tree is
 * scanned every `poll_ms` instead: a file whose stamp (mtime, ctime,
 * size, inode) differs from the last scan's, or that appeared or went,
 * is reported.
 *
 * The root itself going away (removed, renamed, unmounted; or no longer
 * a directory when polled) is reported as VR_NOTIFY_GONE.
 *
 * Not thread-safe: one thread (the watcher's, watcher.h) owns it.
 */
#ifndef VSCHED_HOST_NOTIFY_H
#define VSCHED_HOST_NOTIFY_H

#include <stddef.h>
#include <stdio.h>

typedef struct vr_notify vr_notify;

/* Called for each changed name (relative to the root; valid during the
 * call), or with NULL when the kernel dropped events (queue overflow):
 * then anything may have changed. */
typedef void (*vr_notify_fn)(void *user, const char *name);

typedef struct vr_notify_opts {
    const char *root;        /* absolute directory */
    const char *const *skip; /* absolute directories not watched */
    size_t n_skip;
    unsigned poll_ms; /* polling interval of the fallback */
    FILE *err;        /* where the fallback is announced */
} vr_notify_opts;

#define VR_NOTIFY_GONE 1

/* Watch the tree. Returns 0, or -1 with *err (heap) when the root is not
 * a readable directory. */
int vr_notify_open(vr_notify **out, const vr_notify_opts *o, char **err);
void vr_notify_close(vr_notify *n);

/* The descriptor to poll(2) for input, or -1 when polling the tree. */
int vr_notify_fd(const vr_notify *n);
/* 1 when the tree is scanned instead of watched. */
int vr_notify_polling(const vr_notify *n);
/* Directories watched (0 when polling). */
size_t vr_notify_watches(const vr_notify *n);

/* Take what is there: read the pending inotify events (non-blocking), or
 * when polling scan the tree once. Calls fn for each change. Returns 0,
 * or VR_NOTIFY_GONE once the root went away. */
int vr_notify_take(vr_notify *n, vr_notify_fn fn, void *user);

#endif
