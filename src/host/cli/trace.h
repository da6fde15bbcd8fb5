/*
 * trace -- --trace FILE: the run as Chrome trace-event JSON
 * ({"traceEvents": [...]}, the format Perfetto and chrome://tracing
 * open).
 *
 * One complete event ("ph": "X", ts and dur in microseconds from the
 * start of the run) per task the scheduler ran -- a Source's load and
 * parse, an Analysis, an Artifact, a job -- heard from the task observer
 * (vsched_options.task_observer); the process lane (pid) is the pool
 * whose thread ran it and tid that thread's index in its pool
 * (vsched_pool_current_worker). A task whose result was stale and
 * refused is kept, with "refused": true in its args. Beside them, in
 * lanes of their own:
 *
 *   pid 3 "coordinator"  one event per host batch (vr_coord_trace), tid
 *                        the batch's nesting depth;
 *   pid 4 "cache"        one event per artifact restored from the cache,
 *                        tid the CPU worker that restored it;
 *   pid 5 "vsched-run"   the run's own phases on the main thread (plan,
 *                        build).
 *
 * Lanes are named by "M" metadata events (process_name, thread_name).
 * One thread's events never overlap: a pool thread runs one task at a
 * time, and the lanes above are one per thread or depth.
 *
 * Thread-safety: vr_trace_task is a task observer (called one at a time
 * by the scheduler, on any thread); `lock` (a leaf) guards the events.
 * The rest is main thread only, after the scheduler is gone.
 */
#ifndef VSCHED_HOST_TRACE_H
#define VSCHED_HOST_TRACE_H

#include <stdint.h>

#include <vsched/vsched.h>

#include "build/bind.h"
#include "build/coord.h"

typedef struct vr_trace vr_trace;

/* A trace whose time zero is `t0_ns` (CLOCK_MONOTONIC). Never NULL. */
vr_trace *vr_trace_new(uint64_t t0_ns);
void vr_trace_free(vr_trace *t);

/* Task observer (vsched_task_observer_fn). */
void vr_trace_task(void *trace, const vsched_task_event *ev);

/* A phase of the run on the main thread (lane "vsched-run"). */
void vr_trace_phase(vr_trace *t, const char *name, uint64_t start_ns,
                    uint64_t end_ns);

/* Write the trace to `path` through a temporary name beside it (a reader
 * never sees half a file): the tasks heard, the coordinator's batch spans
 * of `coord` and the restores `bind` captured (either may be NULL).
 * Returns 0, or VSCHED_EIO with *msg (heap) naming the file and why. */
int vr_trace_write(vr_trace *t, const char *path, vr_coord *coord,
                   vr_bind *bind, char **msg);

/* CLOCK_MONOTONIC now, in ns (the clock of task events). */
uint64_t vr_trace_now_ns(void);

#endif
