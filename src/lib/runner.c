/*
 * runner -- taking ready work and running it.
 *
 * A runner is a task on one of the scheduler's pools (CPU or I/O). It
 * loops: under ONE hold of the scheduler lock it integrates the completion
 * of the task it just ran and takes the next ready node of its queue; then,
 * unlocked, it delivers what that critical section left (events, handle
 * signals, snapshot frees) and runs the task. No completion travels through
 * a queue to another thread, and a worker never sleeps between tasks while
 * ready work remains.
 *
 * vsched__kick (lock held) starts runners while a queue's READY nodes
 * outnumber its runners that are not busy running a task, up to the
 * pool's thread count. A runner yields its pool slot
 * after RUNNER_BUDGET tasks (so host tasks sharing the pool get a turn),
 * starting a successor if work remains. When the pool refuses a runner
 * (FULL), the driver is asked to re-pump after an idle deadline: ready work
 * is never stranded waiting for a completion that will not come.
 *
 * Taking a node (take_ready) is where a job takes its permit and resources
 * (or parks), and where a file stage's inputs are checked one last time:
 * an Analysis whose blocker results are no longer the current ones is
 * gated again instead of started.
 *
 * A CPU worker that waits on a handle (vsched_wait from inside a stage)
 * runs ready CPU work itself meanwhile (vsched__pump_until), so a pool
 * whose every worker waits still progresses.
 */
#include <stdlib.h>

#include "internal.h"
#include "unit.h"

#define RUNNER_BUDGET 256

static void runner_main(void *arg);

static vsched_pool *pool_of(vsched *s, int q)
{
    return q == VSCHED__Q_IO ? s->opts.io_pool : s->opts.cpu_pool;
}

int vsched__io_gated(const vsched *s)
{
    if (s->loaded_waiting < s->readahead)
        return 0;
    const vsched__rq *cpu = &s->graph.ready[VSCHED__Q_CPU];
    const vsched__rq *io = &s->graph.ready[VSCHED__Q_IO];
    int32_t pc, pi;
    if (cpu->valid == 0 || !vsched__rq_top_priority(cpu, &pc))
        return 0; /* nothing would parse them sooner: never a stall */
    if (vsched__rq_top_priority(io, &pi) && pi > pc)
        return 0; /* more urgent than anything ready to run */
    return 1;
}

void vsched__loaded_taken(vsched *s)
{
    if (s->loaded_waiting-- == s->readahead)
        vsched__kick(s);
}

void vsched__kick(vsched *s)
{
    if (atomic_load_explicit(&s->stopping, memory_order_relaxed))
        return;
    for (int q = 0; q < 2; q++) {
        /* Runners not busy running a task will take ready work; start more
         * while the ready work outnumbers them, up to the pool's size. */
        size_t ready = vsched__ready_count(&s->graph, q);
        if (q == VSCHED__Q_IO && ready > 0 && vsched__io_gated(s))
            ready = 0;
        while (s->runners[q] < s->runner_limit[q] &&
               s->runners[q] - s->busy[q] < ready) {
            atomic_fetch_add(&s->inside, 1);
            if (vsched_pool_try_submit(pool_of(s, q), runner_main,
                                       &s->runner_args[q]) != VSCHED_OK) {
                atomic_fetch_sub(&s->inside, 1);
                /* FULL (or stopping): a re-pump after a deadline. */
                vsched__driver_repump(s);
                break;
            }
            s->runners[q]++;
        }
    }
}

/* Take the best ready node of queue q and start it: its task, or NULL. */
static vsched__task *take_ready(vsched *s, int q, vsched__pass *p)
{
    if (q == VSCHED__Q_IO && vsched__io_gated(s))
        return NULL; /* taken up again by vsched__loaded_taken's kick */
    for (;;) {
        vsched__node *n = vsched__pop_ready(s, q);
        if (n == NULL)
            return NULL;
        vsched__task *t;
        if (n->job != NULL) {
            if (!vsched__job_can_start(s, n, p)) {
                vsched__node_unref(s, n); /* parked (or failed) */
                continue;
            }
            t = vsched__job_task(s, n);
            if (t != NULL)
                vsched__job_started(s, n, p);
        } else if (n->task != NULL) {
            t = n->task; /* a loaded Source, to parse */
            vsched__loaded_taken(s);
        } else {
            if (!vsched__inputs_current(s, n, NULL, p)) {
                vsched__node_unref(s, n); /* gated again */
                vsched__units_drain(s, p);
                continue;
            }
            t = vsched__task_for(s, n);
            if (t != NULL)
                vsched__stage_start(n, t); /* what it reserved */
        }
        if (t == NULL) {
            /* Exhaustion: leave it ready; the re-pump retries. */
            vsched__push_ready(s, n);
            vsched__node_unref(s, n);
            vsched__driver_repump(s);
            return NULL;
        }
        n->task = t;
        vsched__node_start(n, vsched__now_ns());
        vsched__node_unref(s, n); /* the task holds its own reference */
        return t;
    }
}

static int pass_empty(const vsched__pass *p)
{
    return p->n_fin == 0 && p->n_joins == 0 && p->n_events == 0 &&
           p->dead == NULL && !p->wake_dag;
}

static void runner_main(void *arg)
{
    vsched__runner_arg *ra = arg;
    vsched *s = ra->s;
    int q = ra->q;
    vsched__pass p = {0};
    vsched__task *done = NULL;
    unsigned budget = RUNNER_BUDGET;
    vsched__lock(s);
    for (;;) {
        if (done != NULL) {
            /* What was submitted before this completion is admitted
             * before it is integrated. */
            vsched__inbox_absorb(s, &p);
            vsched__complete(s, done, &p);
            done = NULL;
        }
        vsched__task *t = NULL;
        if (!atomic_load(&s->stopping) && budget-- > 0)
            t = take_ready(s, q, &p);
        if (t == NULL) {
            s->runners[q]--;
            vsched__kick(s); /* a successor, if the budget ran out */
            break;
        }
        s->busy[q]++;
        vsched__kick(s);
        vsched__unlock(s, &p);
        if (!pass_empty(&p))
            vsched__pass_run(s, &p);
        vsched__task_execute(t);
        done = t;
        vsched__lock(s);
        s->busy[q]--;
    }
    vsched__unlock_run(s, &p);
    atomic_fetch_sub(&s->inside, 1); /* the last touch of s */
}

void vsched__pump_until(vsched *s, const void *addr, const atomic_int *flag)
{
    vsched__pass p = {0};
    atomic_fetch_add(&s->inside, 1);
    vsched__lock(s);
    while (!atomic_load(flag) && !atomic_load(&s->stopping)) {
        vsched__task *t = take_ready(s, VSCHED__Q_CPU, &p);
        vsched__kick(s);
        vsched__unlock(s, &p);
        vsched__pass_run(s, &p);
        if (t != NULL) {
            vsched__task_execute(t);
            vsched__lock(s);
            vsched__inbox_absorb(s, &p);
            vsched__complete(s, t, &p);
            continue;
        }
        /* Nothing ready: work already handed to our pool, else a short
         * wait for the flag (new ready work does not wake us). */
        if (!vsched__pool_run_one(s->opts.cpu_pool))
            vsched__park_until_ms(addr, flag, 1);
        vsched__lock(s);
    }
    vsched__unlock_run(s, &p);
    atomic_fetch_sub(&s->inside, 1); /* the last touch of s */
}
