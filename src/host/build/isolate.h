/*
 * isolate -- `[executor] isolate = true`: the executor's stage calls run
 * in worker processes, so a crash, an abort, a hang past the timeout or
 * a garbled answer fails the file in flight and the batch goes on.
 *
 * Workers. Each is vsched-run itself, started with posix_spawn (never a
 * bare fork of this multithreaded process) as `vsched-run
 * --isolate-worker` with its end of a socketpair on descriptor 3, in a
 * process group of its own (an interrupt at the terminal reaches the
 * host, which cancels; a fast exit ends every child's group, signals.h)
 * and with no signal blocked. The host sends it the effective
 * configuration (every key as the host holds it after --config, --set and
 * the targets' variant profiles) and the plugin to open (the module path
 * the host loaded, or the built-in's name); the worker loads that plugin
 * through libltdl, creates its own instance and answers one call at a
 * time (isolate_worker.c). Workers are started on demand: a call takes an
 * idle worker or starts one, so the pool grows to the number of threads
 * that call the executor at once (the stage pools), and isolation costs
 * no parallelism; a plugin without VSCHED_PLUGIN_THREAD_SAFE is still
 * called one call at a time, as in-process.
 *
 * Snapshots. What the scheduler holds is a host-side proxy: the file's
 * name, kind and loaded bytes, and a 128-bit key of the three. source()
 * runs in a worker, which keeps the real snapshot in a cache under that
 * key; a later call naming the proxy (its own file, or a blocker's)
 * finds it there, or asks the host for the bytes and re-creates it with
 * the plugin's source() (diagnostics of a re-creation are dropped: the
 * first parse reported them). A worker's cache holds up to
 * VR_ISOLATE_CACHE snapshots and is emptied, with snapshot_free, when a
 * call would overflow it, and when the worker ends. snapshot_free of a
 * proxy frees the proxy only.
 *
 * The context. diag, load and realpath of the worker's ctx are forwarded
 * to the host, which answers them with the calling thread's own ctx
 * (load and realpath are offered only where the host's ctx has them);
 * is_cancelled is answered by the host sending CANCEL once the call's
 * ctx is cancelled; a call still running VR_ISOLATE_CANCEL_MS after that
 * has its worker killed and fails as cancelled. alloc is the worker's
 * own; what comes back is copied into ctx->alloc'ed buffers.
 *
 * Failures, each a diagnostic on the file naming the plugin, the
 * operation, the file and the cause, the worker ended and replaced by the
 * next call:
 *   plugin 'P' crashed (SIGSEGV) in OP of NAME     a signal: VSCHED_ETOOL
 *   plugin 'P' exited (status N) in OP of NAME     exit: VSCHED_ETOOL
 *   plugin 'P' sent a malformed answer ...         VSCHED_EINVAL
 *   plugin 'P' timed out in OP of NAME after S s   VSCHED_ETIMEDOUT
 * What a worker returns goes through the same contract checks as an
 * in-process result (the bindings of bind.c sit above this binding).
 *
 * Timeout: [executor] isolate_timeout seconds when set (> 0), else the
 * executor's own `timeout` key when its schema has one and it is > 0,
 * plus VR_ISOLATE_GRACE_S (the plugin's own timeout fires first and is
 * reported by the plugin); else none.
 *
 * Not isolated: create/destroy of the host's own instance, identity()
 * and command() (called once per run or by --compdb, from the main
 * thread, in the host's process). A tool a plugin started in a process
 * group of its own outlives a worker killed at the timeout until it ends
 * (the plugin's own `timeout`, which the isolate timeout exceeds by
 * VR_ISOLATE_GRACE_S by default, is what stops it).
 *
 * Thread-safety: the binding may be called from any thread. `lock`
 * (a leaf: no call to a worker and no plugin call under it) guards the
 * idle list; a worker belongs to one call at a time.
 */
#ifndef VSCHED_HOST_ISOLATE_H
#define VSCHED_HOST_ISOLATE_H

#include <stddef.h>

#include <vsched/vsched.h>

#include "config/config.h"

#define VR_ISOLATE_WORKER_FLAG "--isolate-worker"
#define VR_ISOLATE_FD 3
#define VR_ISOLATE_CACHE 4096
#define VR_ISOLATE_CANCEL_MS 2000
#define VR_ISOLATE_GRACE_S 1

typedef struct vr_isolate vr_isolate;

typedef struct vr_isolate_opts {
    const vsched_plugin *desc; /* the executor's descriptor (borrowed) */
    const char *plugin;        /* what the worker opens: the module's path,
                                  or the built-in's name */
    const vr_config *cfg;      /* the effective configuration (copied) */
    unsigned timeout_s;        /* 0: none (vr_isolate_timeout) */
} vr_isolate_opts;

/* The timeout of a call for cfg and the executor `desc`: isolate_timeout
 * when > 0, else the executor's int `timeout` key (when its schema has
 * one) plus VR_ISOLATE_GRACE_S, else 0 (none). Seconds. */
unsigned vr_isolate_timeout(const vr_config *cfg, const vsched_plugin *desc,
                            long isolate_timeout);

/* Make the pool (no worker starts until the first call). 0, or
 * VSCHED_EERR with *err (heap) when this program cannot be found to be
 * started again (/proc/self/exe). */
int vr_isolate_new(vr_isolate **out, const vr_isolate_opts *o, char **err);

/* The binding to give the scheduler (and bind.c) instead of the plugin's:
 * source, extract_deps, analysis, artifact, snapshot_free and (when the
 * plugin has it) job forwarded to workers; artifact_blockers copied.
 * Valid until vr_isolate_free. */
vsched_executor_binding vr_isolate_binding(vr_isolate *iso);

/* End every worker (end of file on its socket, then SIGKILL after
 * VR_ISOLATE_CANCEL_MS) and reap it; no call may be in flight. NULL ok. */
void vr_isolate_free(vr_isolate *iso);

/* The worker's main(): serve the host on descriptor `fd` until end of
 * file. `preloaded` is the program's lt_preloaded_symbols. Returns the
 * exit status (0 at a clean end). isolate_worker.c. */
int vr_isolate_worker_main(int fd, const void *preloaded);

#endif
