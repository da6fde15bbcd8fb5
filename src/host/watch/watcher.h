/*
 * watcher -- the thread of --watch that turns changes (notify.h) into
 * settled sets of names, and stops stale work of a build in progress.
 *
 * The settle window: a change starts (and every further change restarts)
 * a quiet period of `settle_ms`; when it ends, the names seen meanwhile
 * are one set -- a burst of saves, an editor's temporary-and-rename, a
 * checkout -- handed to the main thread (vr_watcher_wait). While a build
 * is running (vr_watcher_session gave its scheduler), each name of a
 * settled set that is a file is also invalidated in that scheduler at
 * once (vsched_invalidate): its running compile of the old content is
 * asked to stop, its completion is refused, and the build's requests,
 * which follow the latest content, are served by the new generation. The
 * set still goes to the main thread, which checks it in the next build.
 *
 * Thread-safety: vr_watcher_session, vr_watcher_wait and vr_watcher_stop
 * are called by one thread (the watch loop's). `lock` (a host leaf: never
 * held while calling the library) guards the settled set, the flags and
 * the scheduler; `busy` and `idle` let vr_watcher_session(NULL) wait until
 * an invalidation in progress on the watcher thread has returned, so the
 * scheduler can be destroyed safely afterwards.
 */
#ifndef VSCHED_HOST_WATCHER_H
#define VSCHED_HOST_WATCHER_H

#include <stddef.h>

#include <vsched/vsched.h>

#include "watch/notify.h"

typedef struct vr_watcher vr_watcher;

/* A settled set of changes, as vr_watcher_wait hands it over. */
typedef struct vr_changes {
    char **names; /* heap, distinct, relative to the root */
    size_t n;
    int all;   /* the kernel dropped events: anything may have changed */
    int fresh; /* some arrived while no build was running (else every
                       one was already invalidated in a running build) */
} vr_changes;

void vr_changes_free(vr_changes *c);

/* What vr_watcher_wait returns. */
#define VR_WATCH_CHANGES 0
#define VR_WATCH_GONE 1  /* the root went away */
#define VR_WATCH_WOKEN 2 /* a byte came on the wake descriptor (a signal) */

/* Watch the tree o->root (notify.h) on a new thread. Returns 0, or -1
 * with *err (heap). */
int vr_watcher_start(vr_watcher **out, const vr_notify_opts *o,
                     unsigned settle_ms, char **err);
/* Stop the thread and free everything. */
void vr_watcher_stop(vr_watcher *w);

/* The descriptor whose input wakes vr_watcher_wait (for the signal
 * thread: signals.h VR_SIG_WAKE). Open until vr_watcher_stop. */
int vr_watcher_wake_fd(const vr_watcher *w);

/* The scheduler of the build now running, or NULL once it ends (waits for
 * an invalidation in progress). Setting one empties the absorbed set. */
void vr_watcher_session(vr_watcher *w, vsched *s);
/* The names invalidated in the build given last (since its session
 * began), into *out (the caller frees it). */
void vr_watcher_absorbed(vr_watcher *w, vr_changes *out);

/* Block until a settled set is there (*out filled; the caller frees it),
 * the root went, or the wake descriptor got input. */
int vr_watcher_wait(vr_watcher *w, vr_changes *out);

/* 1 when the tree is polled instead of watched; the count of watched
 * directories. */
int vr_watcher_polling(vr_watcher *w);
size_t vr_watcher_watches(vr_watcher *w);

#endif
