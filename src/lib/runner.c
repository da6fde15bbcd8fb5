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
 * A worker that blocks inside a task (vsched_wait, vsched_wait_batch or
 * vsched_node_wait from a stage or job, or a blocked vsched_submit_dag)
 * goes through vsched__block_begin: its batch is settled (below) and its
 * pool starts a stand-in thread in its place, while the scheduler lets
 * one more runner run (blocked[q]). Nothing runs on the blocked thread's
 * own stack meanwhile: a task run there could not return before the one
 * under it, and the one under it may be what it waits for (a wait that
 * ran other ready work inline hung that way). So a pool whose every
 * worker waits still progresses, and only a real cycle of waits can
 * hang.
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

/* Runners of queue q that may run at once: the pool's threads, plus one
 * for each runner blocked in a task (its pool starts a stand-in). */
static unsigned runner_cap(const vsched *s, int q)
{
    return s->runner_limit[q] + s->blocked[q];
}

/* Gated at `limit` loaded Sources waiting: a running I/O runner stops
 * taking loads at the read-ahead; once the runners stopped there
 * (io_held), a new one starts only when the window drained to half of
 * it, so the I/O threads take loads in runs instead of being woken for
 * each slot a parse frees. Runners that stopped for want of loads are
 * started again at once by the next load (the window is not full). */
static int io_gated_at(const vsched *s, size_t limit)
{
    if (s->loaded_waiting < limit)
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

int vsched__io_gated(const vsched *s)
{
    return io_gated_at(s, s->readahead);
}

static size_t io_restart(const vsched *s)
{
    return s->readahead / 2;
}

void vsched__loaded_taken(vsched *s)
{
    if (s->loaded_waiting-- == io_restart(s))
        vsched__kick(s);
}

static int short_step(const vsched *s, const vsched__node *n);

/* Lock held: hold back one more runner of queue q? Work whose steps run
 * shorter than the lock costs them (the short steps of RUNNER_BATCH_NS)
 * is taken by one runner at a time: a second one only waits for the
 * scheduler lock the first holds for most of each round, and every wait
 * is a sleep and a wake (100k files of empty stages ran in 0.58 s on two
 * CPU runners, 0.39 s on one, 0.37 s with one CPU thread). A second
 * runner starts once the first made no progress (integrated no batch and
 * did not end) between two of the driver's re-pumps, at least 1 ms
 * apart: a task that blocks outside the scheduler, or runs long, holds
 * back nothing for longer than that. Work of unknown or longer steps
 * (compiles) starts every runner the pool allows, as before. */
static int defer_runner(vsched *s, int q)
{
    if (s->runners[q] <= s->blocked[q])
        return 0; /* no runner at work: start one */
    const vsched__node *top = vsched__rq_peek(&s->graph.ready[q]);
    if (top == NULL || !short_step(s, top))
        return 0;
    if (!s->defer_armed[q] || s->defer_progress[q] != s->progress[q]) {
        s->defer_armed[q] = 1;
        s->defer_progress[q] = s->progress[q];
    } else if (s->in_repump) {
        s->defer_armed[q] = 0; /* no progress for a re-pump's delay */
        return 0;
    }
    vsched__driver_repump(s); /* look again after the delay */
    return 1;
}

void vsched__kick(vsched *s)
{
    if (atomic_load_explicit(&s->stopping, memory_order_relaxed))
        return;
    for (int q = 0; q < 2; q++) {
        /* Runners not busy running a task will take ready work; start more
         * while the ready work outnumbers them, up to the pool's size. */
        size_t ready = vsched__ready_count(&s->graph, q);
        if (q == VSCHED__Q_IO && ready > 0 &&
            io_gated_at(s, s->runners[q] == 0 && s->io_held ? io_restart(s)
                                                            : s->readahead))
            ready = 0;
        while (s->runners[q] < runner_cap(s, q) &&
               s->runners[q] - s->busy[q] < ready && !defer_runner(s, q)) {
            atomic_fetch_add(&s->inside, 1);
            if (vsched_pool_try_submit(pool_of(s, q), runner_main,
                                       &s->runner_args[q]) != VSCHED_OK) {
                atomic_fetch_sub(&s->inside, 1);
                /* FULL (or stopping): a re-pump after a deadline. */
                vsched__driver_repump(s);
                break;
            }
            s->runners[q]++;
            if (q == VSCHED__Q_IO)
                s->io_held = 0;
        }
    }
}

/* The step a task of n runs: load, parse, Analysis, Artifact, job (the
 * index of its moving average, s->step_ns). */
static int step_of(const vsched__node *n, int phase)
{
    if (vsched__node_job(n) != NULL)
        return 4;
    if (n->kind == VSCHED__K_SOURCE)
        return phase ? 1 : 0;
    return n->kind == VSCHED__K_ANALYSIS ? 2 : 3;
}

/* Take the best ready node of queue q (with `only`, of that key) and
 * start it: its task, or NULL. */
static vsched__task *take_ready(vsched *s, int q, vsched__pass *p,
                                const vsched__rqkey *only, uint64_t now)
{
    if (q == VSCHED__Q_IO && vsched__io_gated(s)) {
        s->io_held = 1;
        return NULL; /* taken up again by vsched__loaded_taken's kick */
    }
    for (;;) {
        vsched__node *n = vsched__pop_ready(s, q, only);
        if (n == NULL)
            return NULL;
        vsched__task *t;
        if (vsched__node_job(n) != NULL) {
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
        t->step = (int8_t)step_of(n, t->phase); /* n is at hand here */
        vsched__node_start(n, now);
        vsched__node_unref(s, n); /* the task holds its own reference */
        return t;
    }
}

static int pass_empty(const vsched__pass *p)
{
    return p->n_fin == 0 && p->n_joins == 0 && p->n_events == 0 &&
           p->dead == NULL && !p->wake_dag && p->spent == NULL;
}

/* Batches. Steps whose tasks run shorter than RUNNER_BATCH_NS on average
 * (a moving average per step: load, parse, Analysis, Artifact, job) are
 * taken up to RUNNER_BATCH under one hold of the lock, and their
 * completions integrated under the next: work that short costs less than
 * the lock round trip it would otherwise pay per task. A step of unknown
 * or longer duration (a compile) is taken one task at a time, so the
 * pool's threads share it out as it becomes ready.
 *
 * Order is kept. A batch holds only nodes of the first one's key
 * (priority, weight class), taken in queue order; what their completions
 * make ready has no greater key (a node's priority and weight never exceed
 * its upstream's) and would queue behind the rest of that key anyway. So
 * the nodes of a batch start in the order single takes would start them;
 * only a submission arriving meanwhile waits for the batch (on average
 * under RUNNER_BATCH x RUNNER_BATCH_NS, 0.64 ms, and far less for the
 * empty stages that make a step's average tiny). A batch also leaves
 * enough ready work of its queue for each other runner, and a batch of
 * loads stays inside the read-ahead
 * window. A batch's nodes take one clock reading as their started_ns,
 * read when the batch is taken, so a later node of a batch reads up to
 * the batch's earlier tasks early (at most RUNNER_BATCH x RUNNER_BATCH_NS
 * on average); what the batch's completions finish is stamped with the
 * end of its last run (unless it started after that), read before the
 * lock is taken again. The task observer's times are read as each task
 * runs.
 *
 * Liveness. A task of a batch that blocks may wait for what the batch
 * holds: work taken into it after the blocked task, not started, or work
 * before it that ran but whose completion is integrated only when the
 * batch ends (a parse whose Analysis the waiter wants). So before the
 * thread blocks, settle integrates what the batch ran and hands what it
 * has not started to the pool as a new runner (rest_main), ahead of the
 * pool's queue: nothing taken waits behind its own waiter. */
/* 32, not 8: 100k files T=2 0.583 -> 0.538 s (7 alternated runs), the
 * lock taken a quarter as often; 64 measured the same as 32. */
#define RUNNER_BATCH 32
#define RUNNER_BATCH_NS 20000u

/* The batch a thread is running (innermost first), for settle. Only its
 * thread touches it. */
typedef struct vsched__runner_batch {
    vsched *s;
    int q;
    vsched__task **t; /* entries settled early are set to NULL */
    size_t n, next;   /* next: the first not yet started */
    size_t ran;       /* the entries before it have run */
    size_t timed;     /* the entries before it have their ran_ns */
    uint64_t *clock;  /* when the last of those ended */
    unsigned blocks;  /* nested block sections of its running task */
    struct vsched__runner_batch *outer;
} runner_batch;

static _Thread_local runner_batch *running_batch;

/* Run t; how long it ran is set by the next clock reading (ran_ns 1 until
 * then: it ran). */
static void run_one(vsched__task *t)
{
    vsched__task_execute(t);
    t->ran_ns = 1;
}

/* A later task of a batch: run, unless the scheduler began to stop since
 * the batch was taken -- then it is answered as work that had not
 * started (VSCHED_ESHUTDOWN, as destroy answers what is still queued). */
static void run_member(vsched__task *t)
{
    if (!atomic_load(&t->s->stopping)) {
        run_one(t);
        return;
    }
    t->status = VSCHED_ESHUTDOWN;
    t->ran_ns = 0;
}

/* Time the tasks rb->t[timed..upto), which ran back to back since
 * *rb->clock: ONE clock reading, shared out evenly among those that ran,
 * becomes *rb->clock. A batch's tasks of one step are timed together
 * (the average per step is all their times serve), so a batch of eight
 * short parses reads the clock once, not eight times: each reading cost
 * more than 50 ns, a fifth of an empty task. */
static void run_spread(runner_batch *rb, size_t upto)
{
    if (upto <= rb->timed)
        return;
    uint64_t end = vsched__now_ns();
    size_t k = 0;
    for (size_t i = rb->timed; i < upto; i++)
        k += rb->t[i] != NULL && rb->t[i]->ran_ns != 0;
    uint64_t each = k > 0 ? (end - *rb->clock) / k + 1 : 0;
    for (size_t i = rb->timed; i < upto; i++)
        if (rb->t[i] != NULL && rb->t[i]->ran_ns != 0)
            rb->t[i]->ran_ns = each;
    *rb->clock = end;
    rb->timed = upto;
}

/* Lock held: t's run counts in its step's average. */
static void note_run(vsched *s, const vsched__task *t)
{
    if (t->ran_ns == 0)
        return; /* not run */
    uint64_t *avg = &s->step_ns[t->step];
    if (*avg == 0)
        *avg = t->ran_ns;
    else
        *avg = *avg - *avg / 8 + t->ran_ns / 8;
}

static int short_step(const vsched *s, const vsched__node *n)
{
    uint64_t avg = s->step_ns[step_of(n, n->phase)];
    return avg != 0 && avg < RUNNER_BATCH_NS;
}

static int take_more(const vsched *s, int q, size_t taken)
{
    const vsched__node *next = vsched__rq_peek(&s->graph.ready[q]);
    if (taken >= RUNNER_BATCH || next == NULL || !short_step(s, next) ||
        vsched__ready_count(&s->graph, q) < runner_cap(s, q))
        return 0;
    /* Loads of a batch count against the read-ahead window before they
     * complete. */
    return q != VSCHED__Q_IO || s->loaded_waiting + taken < s->readahead;
}

/* Complete t (lock held). */
static void integrate(vsched *s, vsched__task *t, vsched__pass *p)
{
    note_run(s, t);
    vsched__complete(s, t, p);
}

/* Run what the thread's running batch has not started (no lock held): a
 * task that blocks settles the rest (settle). A batch taken just now runs
 * its first task whatever happens; any other task is answered
 * VSCHED_ESHUTDOWN instead if teardown began since it was taken. */
static void run_rest(runner_batch *rb, int taken_now)
{
    while (rb->next < rb->n) {
        vsched__task *t = rb->t[rb->next];
        if (rb->next > rb->timed && t->step != rb->t[rb->next - 1]->step)
            run_spread(rb, rb->next); /* the end of a run of one step */
        rb->ran = rb->next++;
        if (taken_now && rb->ran == 0)
            run_one(t);
        else
            run_member(t);
    }
    run_spread(rb, rb->n);
}

/* The loop of a runner, entered with the lock held: n > 0 tasks of
 * `batch` have run (their last run ended at `clock`) and are integrated
 * first. Exits with the lock released. */
static void runner_loop(vsched *s, int q, vsched__task **batch, size_t n,
                        uint64_t clock)
{
    vsched__pass p = {0};
    unsigned budget = RUNNER_BUDGET;
    for (;;) {
        if (n > 0) {
            /* What was submitted before these completions is admitted
             * before they are integrated. */
            vsched__inbox_absorb(s, &p);
            p.clock = clock; /* when the last of them ended */
            for (size_t i = 0; i < n; i++)
                if (batch[i] != NULL)
                    integrate(s, batch[i], &p);
            p.clock = 0;
            n = 0;
            s->progress[q]++;
        }
        vsched__rqkey key;
        uint64_t now = vsched__now_ns(); /* the batch's start */
        /* More runners than the limit (a blocked one is back): one goes. */
        int surplus = s->runners[q] > runner_cap(s, q);
        while (!surplus && !atomic_load(&s->stopping) && budget > 0 &&
               (n == 0 || take_more(s, q, n))) {
            vsched__task *t = take_ready(s, q, &p, n > 0 ? &key : NULL, now);
            if (t == NULL)
                break;
            if (n == 0)
                key =
                    (vsched__rqkey){t->node->priority,
                                    vsched__weight_class(t->node->weight_us)};
            batch[n++] = t;
            budget--;
        }
        if (n == 0) {
            s->runners[q]--;
            s->progress[q]++;
            vsched__kick(s); /* a successor, if the budget ran out */
            /* The last completions' tasks go back to the free list now,
             * not to the allocator with this runner's pass. */
            vsched__tasks_scrub(s, &p);
            vsched__tasks_recycle(s, &p);
            break;
        }
        s->busy[q]++;
        vsched__kick(s);
        vsched__unlock(s, &p);
        /* The batch is this thread's from here: a callback of the pass
         * that blocks settles it (hands it all on). */
        clock = vsched__now_ns();
        runner_batch rb = {s, q, batch, n, 0, 0, 0, &clock, 0, running_batch};
        running_batch = &rb;
        if (!pass_empty(&p)) {
            vsched__pass_run(s, &p);
            clock = vsched__now_ns();
        }
        run_rest(&rb, 1);
        running_batch = rb.outer;
        vsched__lock(s);
        vsched__tasks_recycle(s, &p);
        s->busy[q]--;
    }
    vsched__unlock_run(s, &p);
    atomic_fetch_sub(&s->inside, 1); /* the last touch of s */
}

static void runner_main(void *arg)
{
    vsched__runner_arg *ra = arg;
    vsched__task *batch[RUNNER_BATCH];
    vsched__lock(ra->s);
    runner_loop(ra->s, ra->q, batch, 0, 0);
}

/* The rest of a batch whose task blocked, handed to the pool: a runner
 * that starts by running it (counted in runners and busy, and `inside`,
 * from the hand-off). */
typedef struct batch_rest {
    vsched__pool_job job; /* first: the pool's handle on it */
    vsched *s;
    int q;
    size_t n;
    vsched__task *t[RUNNER_BATCH];
} batch_rest;

static void rest_main(vsched__pool_job *job)
{
    batch_rest *r = (batch_rest *)job;
    vsched *s = r->s;
    int q = r->q;
    size_t n = r->n;
    vsched__task *batch[RUNNER_BATCH];
    for (size_t i = 0; i < n; i++)
        batch[i] = r->t[i];
    free(r);
    uint64_t clock = vsched__now_ns();
    runner_batch rb = {s, q, batch, n, 0, 0, 0, &clock, 0, running_batch};
    running_batch = &rb;
    run_rest(&rb, 0);
    running_batch = rb.outer;
    vsched__lock(s);
    s->busy[q]--;
    runner_loop(s, q, batch, n, clock);
}

/* Lock not held. The thread's batch is about to block in one of its
 * tasks, rb->t[rb->ran]: integrate what ran before it, and hand what has
 * not started to the pool as a new runner, which a stand-in runs. The
 * blocked runner counts against the runner limit no more while it waits
 * (rb->s->blocked[q]). */
static void settle(runner_batch *rb)
{
    vsched *s = rb->s;
    int q = rb->q;
    /* What ran before the blocking task is timed now: its last run counts
     * up to here, a little of the blocking task's too. */
    run_spread(rb, rb->ran);
    batch_rest *rest = NULL;
    if (rb->next < rb->n) {
        rest = malloc(sizeof *rest);
        if (rest == NULL) {
            /* Run them here, before blocking: the fallback. */
            while (rb->next < rb->n) {
                vsched__task *t = rb->t[rb->next];
                rb->t[rb->next++] = NULL;
                uint64_t clock = vsched__now_ns();
                run_member(t);
                if (t->ran_ns != 0)
                    t->ran_ns = vsched__now_ns() - clock + 1;
                vsched__pass p = {0};
                vsched__lock(s);
                vsched__inbox_absorb(s, &p);
                integrate(s, t, &p);
                vsched__kick(s);
                vsched__unlock_run(s, &p);
            }
        } else {
            *rest = (batch_rest){{rest_main, NULL}, s, q, 0, {NULL}};
            while (rb->next < rb->n) {
                rest->t[rest->n++] = rb->t[rb->next];
                rb->t[rb->next++] = NULL; /* integrated by the rest */
            }
        }
    }
    vsched__pass p = {0};
    vsched__lock(s);
    vsched__inbox_absorb(s, &p);
    p.clock = *rb->clock;
    for (size_t i = 0; i < rb->ran; i++) {
        if (rb->t[i] != NULL)
            integrate(s, rb->t[i], &p);
        rb->t[i] = NULL;
    }
    p.clock = 0;
    s->blocked[q]++;
    if (rest != NULL) {
        s->runners[q]++;
        s->busy[q]++;
        atomic_fetch_add(&s->inside, 1);
    }
    vsched__kick(s);
    vsched__unlock(s, &p);
    /* Handed on before the pass runs: a join callback it runs may wait
     * for the rest. */
    if (rest != NULL)
        vsched__pool_push_urgent(pool_of(s, q), &rest->job);
    vsched__pass_run(s, &p);
    vsched__pass_free(&p);
}

void vsched__block_begin(vsched__block *b)
{
    b->pool = vsched__pool_current();
    b->rb = NULL;
    if (b->pool == NULL)
        return; /* not a pool worker: it may block */
    /* A runner's own scheduler lives while the runner does. */
    runner_batch *rb = running_batch;
    b->rb = rb;
    /* Nested (a join callback that settle ran waits too): settled once. */
    if (rb != NULL && rb->blocks++ == 0)
        settle(rb);
    b->flags = vsched__pool_block_begin(b->pool);
}

void vsched__block_begin_locked(vsched__block *b, vsched *s)
{
    vsched__unlock(s, NULL);
    vsched__block_begin(b);
    vsched__lock(s);
}

int vsched__block_pending(vsched__block *b)
{
    if (b->pool != NULL && !(b->flags & VSCHED__POOL_STANDIN) &&
        vsched__pool_block_retry(b->pool))
        b->flags |= VSCHED__POOL_STANDIN;
    return b->pool != NULL && !(b->flags & VSCHED__POOL_STANDIN);
}

void vsched__block_wait(vsched__block *b, const void *addr,
                        const atomic_int *flag)
{
    /* No stand-in could be started: retry while the flag is not set. */
    while (vsched__block_pending(b) && !vsched__park_until_ms(addr, flag, 10))
        ;
    vsched__park_until(addr, flag);
}

void vsched__block_end(vsched__block *b)
{
    if (b->pool == NULL)
        return;
    vsched__pool_block_end(b->pool, b->flags);
    runner_batch *rb = b->rb;
    if (rb != NULL && --rb->blocks == 0) {
        vsched__lock(rb->s);
        rb->s->blocked[rb->q]--;
        vsched__unlock(rb->s, NULL);
    }
}
