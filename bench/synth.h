/*
 * synth.h -- an in-process source loader and stage executor for the
 * scheduler benchmarks: no file I/O, stage bodies that do (almost) nothing.
 *
 * The sources are "f0" .. "f{n-1}". Source(f<i>) returns as blockers the
 * files f<i-s> for each stride s with s <= i, and no other deps, so the
 * scheduler gates Artifact(f<i>) on Analysis(f<i-s>). Loads return no
 * bytes; the snapshot is a dummy pointer; hashes are derived from the index.
 *
 * Counting (synth.runs != NULL): each stage of each file increments its
 * own counter (relaxed atomic load + store, no read-modify-write, so
 * counting costs a plain store), and Artifact(f<i>) checks that the
 * Analysis of each of its blockers already ran; a violation is counted in
 * synth.order_violations. synth_check() then says whether every stage of
 * every file ran exactly once.
 *
 * Thread safety: the operations may run concurrently; a synth is set up
 * before the scheduler starts and read-only (but for its counters) while
 * it runs.
 */
#ifndef VSCHED_BENCH_SYNTH_H
#define VSCHED_BENCH_SYNTH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <vsched/vsched.h>

#define SYNTH_MAX_STRIDES 8

typedef struct synth {
    size_t n; /* files f0 .. f{n-1} */
    unsigned strides[SYNTH_MAX_STRIDES];
    size_t n_strides;
    uint64_t cost_ns; /* CPU spun per stage; 0: none */
    /* Per-file run counters of Source, Analysis, Artifact (3 * n bytes),
     * or NULL for no counting. */
    _Atomic unsigned char *runs;
    atomic_ulong order_violations;
} synth;

/* Stage indices into the counters. */
enum {
    SYNTH_SOURCE = 0,
    SYNTH_ANALYSIS = 1,
    SYNTH_ARTIFACT = 2
};

extern const vsched_loader_ops synth_loader_ops;
extern const vsched_executor_ops synth_executor_ops;

/* Parse "7,14,21" into sy->strides; 0, or -1 on a malformed list. */
int synth_parse_strides(synth *sy, const char *list);
/* Allocate the counters (zeroed); 0 or -1. */
int synth_count(synth *sy);
void synth_free(synth *sy);
/* Number of blockers f<i> has. */
size_t synth_blockers_of(const synth *sy, size_t i);
/* Stage runs counted over every file (3 * n when each ran once). */
size_t synth_runs_total(const synth *sy);
/* 0 when every stage of every file ran exactly once and no order
 * violation was seen; else -1 with a reason in why. */
int synth_check(const synth *sy, char *why, size_t cap);

/* The name of f<i> into buf ("f123"); returns its length. */
size_t synth_name(char *buf, size_t cap, size_t i);

/* Monotonic time in nanoseconds. */
uint64_t synth_now_ns(void);
/* Peak resident set of this process in KiB (VmHWM, else ru_maxrss). */
long synth_peak_rss_kb(void);

#endif
