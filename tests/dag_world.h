/*
 * dag_world.h -- the fixture of the job-graph suite (test_dag.c).
 *
 * An in-memory loader over a table of sources and an executor whose
 * Artifact writes a small object file under a scratch directory and whose
 * generic `job` op acts by the job's name:
 *
 *   hold*   enters (dw_wait_entered sees it), then waits until the test
 *           opens its gate (dw_open) -- or until ctx->is_cancelled, when it
 *           leaves a partial output behind as its tmp_path and returns
 *           VSCHED_ECANCELLED (the scheduler must remove it);
 *   fail*   returns VSCHED_ETOOL with a diagnostic;
 *   other   succeeds at once.
 *
 * Every job records its start order, its inputs and the peak number of
 * jobs running at once. A job whose profile is "out" produces a file.
 */
#ifndef VSCHED_TESTS_DAG_WORLD_H
#define VSCHED_TESTS_DAG_WORLD_H

#include <stddef.h>

#include <vsched/vsched.h>

#include "memfs.h"

/* A source: {NULL, NULL} ends a table. */
typedef memfs_file dw_file;

/* Start a scheduler over `files` with `cpu_threads` CPU workers and the
 * given ready capacity (0 = default). */
vsched *dw_start(const dw_file *files, unsigned cpu_threads,
                 size_t ready_capacity);
void dw_stop(vsched *s);
/* The scratch directory of this run's outputs. */
const char *dw_dir(void);
/* The source whose Artifact fails (NULL: none). */
void dw_fail_artifact(const char *name);

/* Artifact runs of a source named hold* (its Artifact waits on the gate
 * named after it, like a hold* job). */
int dw_runs(const char *name);

/* Gates of hold* jobs (and hold* sources' Artifacts). */
void dw_wait_entered(const char *name);
int dw_entered(const char *name);
void dw_open(const char *name);

/* Order in which jobs started: index of `name`, or -1. */
long dw_start_index(const char *name);
/* Jobs running right now, and the most ever at once. */
int dw_running(void);
int dw_max_running(void);
/* Inputs the last run of `name` received, joined by ' ' (static buffer). */
const char *dw_inputs(const char *name);

/* A JOB spec with defaults: kind "test", no parent. */
vsched_node_spec dw_job(const char *name, int priority);
/* Submit in return mode; asserts admission; ids[] out. */
void dw_submit(vsched *s, const vsched_node_spec *nodes, size_t n,
               const vsched_edge_spec *edges, size_t ne, uint64_t *ids);
/* Wait for id and return its final state (info cleared by the caller). */
vsched_node_state dw_wait(vsched *s, uint64_t id, vsched_node_info *info);
vsched_node_state dw_state(vsched *s, uint64_t id);

#endif
