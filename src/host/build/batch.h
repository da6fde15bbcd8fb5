/*
 * batch -- the scheduler's part of a build: the plan's rows that are not
 * current, and the links that must run, as ONE batch of the coordinator
 * (coord.h).
 *
 * The batch's shared wait point (setup) submits every dirty (input,
 * profile) Artifact request as ONE atomic batch -- each with its last
 * recorded duration as cost_ns, so equal-priority ready work runs the
 * longest chain first -- then the link jobs as ONE DAG submission gated
 * on those Artifact nodes, and waits with ONE vsched_wait_batch on a
 * coordinator worker; its items then take the results in request order.
 *
 * When any of those durations is known, the dirty files' Analysis runs
 * first, as a batch of its own waited for before the Artifact batch is
 * submitted: the include scan finds headers level by level, and a long
 * file whose headers are not yet scanned when a worker frees would
 * otherwise lose that worker to a short compile (and the scan to the
 * compiles already running). Discovered first, every compile is ready
 * at once and they start longest first. The scan costs well under one
 * percent of a short compile per file (doc/benchmarks.md, workload 7).
 * A cancel (SIGINT, -k) that ends the scan is issued again once the
 * Artifact batch is submitted (vsched_cancel ends what was submitted
 * before it, admitted or not). A signal in the instant between the
 * scan's answer and that submission is not seen by it: the run then
 * winds down at the signal thread's grace exit.
 *
 * A link's job gets the current objects' recorded paths as explicit
 * inputs and depends (after success) on the Artifact nodes of the dirty
 * ones, so a failed or cancelled object cancels it; the binding (bind.h)
 * puts the object paths back in input order.
 *
 * Main thread only.
 */
#ifndef VSCHED_HOST_BATCH_H
#define VSCHED_HOST_BATCH_H

#include <vsched/vsched.h>

#include "build/build.h"
#include "build/plan.h"

/* Run it on the started session: every row with req >= 0 gets res (owned
 * by *batch, which the caller releases with vsched_batch_release after
 * the last use), every link with run gets info. Returns 0, or -1 when the
 * batch could not be submitted (said on b->err; rows keep res NULL). */
int vr_batch_run(const vr_build *b, vr_session *ss, vr_plan *p,
                 vsched_batch **batch);

#endif
