/*
 * test_dag -- the job graph: sub-DAG submission, edge gates, named
 * resources with parent re-entrancy, CPU concurrency permits, priority
 * inheritance, cancellation tokens, backpressure, dedupe, node state and
 * the JSON projection. One test per rule, named after it.
 *
 * Nothing here is timed: a job named hold* stays running until the test
 * opens its gate (dag_world.h), so "X has not started while Y runs" is a
 * state the scheduler cannot leave before the test acts.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/vsched.h>

#include "cu.h"
#include "dag_world.h"

static const dw_file files[] = {
    {"a.c", "int a;\n"},     {"b.c", "int b;\n"}, {"bad.c", "int bad;\n"},
    {"holdf.c", "int f;\n"}, {NULL, NULL},
};

#define EDGE(f, t, g) ((vsched_edge_spec){(f), (t), VSCHED_GATE_##g})

static uint64_t graph_nodes(vsched *s)
{
    vsched_stats st;
    vsched_get_stats(s, &st);
    return st.graph_nodes;
}

/* ---- submission ------------------------------------------------------------ */

static void dag_ids_come_back_in_the_order_named_and_increase(void)
{
    vsched *s = dw_start(files, 2, 0);
    vsched_node_spec n[3] = {dw_job("x", 0), dw_job("y", 0), dw_job("z", 0)};
    vsched_edge_spec e[] = {EDGE(2, 0, AFTER_SUCCESS)}; /* z before x */
    vsched_node_spec m[3] = {dw_job("x2", 0), dw_job("y2", 0),
                             dw_job("z2", 0)};
    uint64_t a[3], b[3];
    dw_submit(s, n, 3, e, 1, a);
    dw_submit(s, m, 3, NULL, 0, b);
    CU_ASSERT(a[0] != 0 && a[0] < a[1] && a[1] < a[2]);
    CU_ASSERT(a[2] < b[0] && b[0] < b[1] && b[1] < b[2]);
    vsched_node_info info;
    CU_ASSERT_EQUAL(dw_wait(s, a[0], &info), VSCHED_NODE_DONE);
    CU_ASSERT_STRING_EQUAL(info.name, "x");
    vsched_node_info_clear(&info);
    CU_ASSERT(dw_start_index("z") < dw_start_index("x"));
    dw_stop(s);
}

static void bad_references_are_rejected_and_insert_nothing(void)
{
    vsched *s = dw_start(files, 1, 0);
    uint64_t ids[3] = {0};
    vsched_node_spec n[2] = {dw_job("x", 0), dw_job("y", 0)};
    dw_submit(s, n, 1, NULL, 0, ids);
    vsched_node_info done;
    CU_ASSERT_EQUAL(dw_wait(s, ids[0], &done), VSCHED_NODE_DONE);
    vsched_node_info_clear(&done);
    uint64_t before = graph_nodes(s);
    vsched_admission adm;
    /* An unknown existing id as upstream. */
    vsched_edge_spec e1[] = {
        EDGE(VSCHED_REF_ID(ids[0] + 1000), 1, AFTER_SUCCESS)};
    vsched_dag d = {n, 2, e1, 1, NULL, NULL, 0};
    CU_ASSERT_EQUAL(vsched_submit_dag(s, &d, ids, &adm, NULL), VSCHED_ENOENT);
    /* An unknown parent. */
    vsched_node_spec np[2] = {dw_job("x", 0), dw_job("y", 0)};
    np[1].parent = VSCHED_REF_ID(ids[0] + 1000);
    d = (vsched_dag){np, 2, NULL, 0, NULL, NULL, 0};
    CU_ASSERT_EQUAL(vsched_submit_dag(s, &d, ids, &adm, NULL), VSCHED_ENOENT);
    /* A local reference out of range, and a parent named after its child. */
    vsched_edge_spec e2[] = {EDGE(0, 5, AFTER_SUCCESS)};
    d = (vsched_dag){n, 2, e2, 1, NULL, NULL, 0};
    CU_ASSERT_EQUAL(vsched_submit_dag(s, &d, ids, &adm, NULL), VSCHED_EINVAL);
    np[1].parent = VSCHED_REF_NONE;
    np[0].parent = VSCHED_REF_LOCAL(1);
    d = (vsched_dag){np, 2, NULL, 0, NULL, NULL, 0};
    CU_ASSERT_EQUAL(vsched_submit_dag(s, &d, ids, &adm, NULL), VSCHED_EINVAL);
    /* A cycle among the new nodes. */
    vsched_edge_spec e3[] = {EDGE(0, 1, AFTER_SUCCESS), EDGE(1, 0, AFTER_ANY)};
    d = (vsched_dag){n, 2, e3, 2, NULL, NULL, 0};
    CU_ASSERT_EQUAL(vsched_submit_dag(s, &d, ids, &adm, NULL), VSCHED_ECYCLE);
    /* An artifact of a source the loader does not know. */
    vsched_node_spec na[2] = {
        {.what = VSCHED_SPEC_ARTIFACT, .name = "nope.c", .profile = "r"},
        dw_job("y", 0)};
    d = (vsched_dag){na, 2, NULL, 0, NULL, NULL, 0};
    CU_ASSERT_EQUAL(vsched_submit_dag(s, &d, ids, &adm, NULL), VSCHED_ENOENT);
    CU_ASSERT_EQUAL(graph_nodes(s), before);
    CU_ASSERT_EQUAL(vsched_ready_queue_depth(s), 0);
    dw_stop(s);
}

/* Observer thread: the job count is always a multiple of the sub-DAG. */
typedef struct watch {
    vsched *s;
    atomic_int stop;
    int torn;
    long looks;
} watch;

static void *watch_main(void *arg)
{
    watch *w = arg;
    while (!atomic_load(&w->stop)) {
        if (graph_nodes(w->s) % 50 != 0)
            w->torn = 1;
        w->looks++;
    }
    return NULL;
}

static void dag_insert_is_atomic_no_observer_sees_half(void)
{
    vsched *s = dw_start(files, 2, 1000);
    watch w = {s, 0, 0, 0};
    pthread_t th;
    pthread_create(&th, NULL, watch_main, &w);
    vsched_node_spec n[50];
    vsched_edge_spec e[49];
    for (int i = 0; i < 50; i++)
        n[i] = dw_job("x", 0);
    for (int i = 0; i < 49; i++)
        e[i] = EDGE(i, i + 1, AFTER_SUCCESS);
    uint64_t ids[50];
    for (int r = 0; r < 20; r++)
        dw_submit(s, n, 50, e, 49, ids);
    atomic_store(&w.stop, 1);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(w.torn, 0);
    CU_ASSERT_EQUAL(graph_nodes(s), 1000);
    dw_stop(s);
}

/* ---- gates ------------------------------------------------------------------- */

static void failed_upstream_cancels_after_success_dependents_transitively(void)
{
    vsched *s = dw_start(files, 2, 0);
    vsched_node_spec n[3] = {dw_job("fail1", 0), dw_job("mid", 0),
                             dw_job("leaf", 0)};
    vsched_edge_spec e[] = {EDGE(0, 1, AFTER_SUCCESS),
                            EDGE(1, 2, AFTER_SUCCESS)};
    uint64_t ids[3];
    dw_submit(s, n, 3, e, 2, ids);
    vsched_node_info info;
    CU_ASSERT_EQUAL(dw_wait(s, ids[0], &info), VSCHED_NODE_FAILED);
    CU_ASSERT_EQUAL(info.status, VSCHED_ETOOL);
    vsched_node_info_clear(&info);
    for (int i = 1; i < 3; i++) {
        CU_ASSERT_EQUAL(dw_wait(s, ids[i], &info), VSCHED_NODE_CANCELLED);
        CU_ASSERT_EQUAL(info.status, VSCHED_ECANCELLED);
        CU_ASSERT_STRING_EQUAL(info.failed_dep, "fail1");
        CU_ASSERT_PTR_NOT_NULL(
            strstr(info.message, "dependency 'fail1' failed"));
        vsched_node_info_clear(&info);
    }
    CU_ASSERT_EQUAL(dw_start_index("mid"), -1);
    CU_ASSERT_EQUAL(dw_start_index("leaf"), -1);
    dw_stop(s);
}

static void after_any_runs_after_a_failed_upstream(void)
{
    vsched *s = dw_start(files, 2, 0);
    vsched_node_spec n[2] = {dw_job("fail1", 0), dw_job("after", 0)};
    vsched_edge_spec e[] = {EDGE(0, 1, AFTER_ANY)};
    uint64_t ids[2];
    dw_submit(s, n, 2, e, 1, ids);
    vsched_node_info info;
    CU_ASSERT_EQUAL(dw_wait(s, ids[1], &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    CU_ASSERT_EQUAL(dw_state(s, ids[0]), VSCHED_NODE_FAILED);
    CU_ASSERT(dw_start_index("fail1") < dw_start_index("after"));
    dw_stop(s);
}

static void after_admission_releases_once_upstream_is_queued_not_finished(void)
{
    vsched *s = dw_start(files, 3, 0);
    /* holdG gates holdA (after success); holdA gates B on admission. */
    vsched_node_spec n[3] = {dw_job("holdG", 0), dw_job("holdA", 0),
                             dw_job("B", 0)};
    vsched_edge_spec e[] = {EDGE(0, 1, AFTER_SUCCESS),
                            EDGE(1, 2, AFTER_ADMISSION)};
    uint64_t ids[3];
    dw_submit(s, n, 3, e, 2, ids);
    dw_wait_entered("holdG");
    CU_ASSERT_EQUAL(dw_state(s, ids[1]), VSCHED_NODE_PENDING);
    CU_ASSERT_EQUAL(dw_state(s, ids[2]), VSCHED_NODE_PENDING);
    dw_open("holdG");
    /* A admitted: B runs to the end while A still runs. */
    vsched_node_info info;
    CU_ASSERT_EQUAL(dw_wait(s, ids[2], &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    dw_wait_entered("holdA");
    CU_ASSERT_EQUAL(dw_state(s, ids[1]), VSCHED_NODE_RUNNING);
    dw_open("holdA");
    CU_ASSERT_EQUAL(dw_wait(s, ids[1], &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);

    /* An upstream that ends without being admitted cancels the gate. */
    vsched_node_spec m[3] = {dw_job("fail2", 0), dw_job("never", 0),
                             dw_job("C", 0)};
    vsched_edge_spec f[] = {EDGE(0, 1, AFTER_SUCCESS),
                            EDGE(1, 2, AFTER_ADMISSION)};
    dw_submit(s, m, 3, f, 2, ids);
    CU_ASSERT_EQUAL(dw_wait(s, ids[2], &info), VSCHED_NODE_CANCELLED);
    CU_ASSERT_STRING_EQUAL(info.failed_dep, "fail2");
    vsched_node_info_clear(&info);
    dw_stop(s);
}

/* A node's upstream counts and its end time share a word (graph.h): a
 * node that waits on upstream reads no end, in its info and in the JSON,
 * however many edges it waits on; once it ends, its end is a time at or
 * after its start, and the edges it waited on left the graph's count. */
static void a_waiting_node_has_no_end_time_and_an_ended_one_has_its_own(void)
{
    vsched *s = dw_start(files, 2, 0);
    /* W waits on five upstream jobs, one of them held running. */
    vsched_node_spec n[6] = {dw_job("holdU", 0), dw_job("u1", 0),
                             dw_job("u2", 0), dw_job("u3", 0),
                             dw_job("u4", 0), dw_job("W", 0)};
    vsched_edge_spec e[] = {EDGE(0, 5, AFTER_SUCCESS), EDGE(1, 5, AFTER_ANY),
                            EDGE(2, 5, AFTER_ANY), EDGE(3, 5, AFTER_ANY),
                            EDGE(4, 5, AFTER_ANY)};
    uint64_t ids[6];
    dw_submit(s, n, 6, e, 5, ids);
    dw_wait_entered("holdU");
    vsched_node_info info;
    for (int i = 1; i <= 4; i++) {
        CU_ASSERT_EQUAL(dw_wait(s, ids[i], &info), VSCHED_NODE_DONE);
        vsched_node_info_clear(&info);
    }
    CU_ASSERT_EQUAL(vsched_node_get(s, ids[5], &info), VSCHED_OK);
    CU_ASSERT_EQUAL(info.state, VSCHED_NODE_PENDING);
    CU_ASSERT_EQUAL(info.started_ns, 0);
    CU_ASSERT_EQUAL(info.finished_ns, 0);
    vsched_node_info_clear(&info);
    CU_ASSERT_EQUAL(vsched_node_get(s, ids[0], &info), VSCHED_OK);
    CU_ASSERT_EQUAL(info.state, VSCHED_NODE_RUNNING);
    CU_ASSERT(info.started_ns > 0);
    CU_ASSERT_EQUAL(info.finished_ns, 0);
    vsched_node_info_clear(&info);
    char *json = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(vsched_graph_json(s, &json, &len), VSCHED_OK);
    char key[64];
    snprintf(key, sizeof key, "\"id\":%llu,", (unsigned long long)ids[5]);
    const char *w = strstr(json, key);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    const char *fin = strstr(w, "\"finished_ns\":");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fin);
    CU_ASSERT_EQUAL(strtoull(fin + strlen("\"finished_ns\":"), NULL, 10), 0);
    free(json);
    dw_open("holdU");
    CU_ASSERT_EQUAL(dw_wait(s, ids[5], &info), VSCHED_NODE_DONE);
    CU_ASSERT(info.started_ns > 0);
    CU_ASSERT(info.finished_ns >= info.started_ns);
    vsched_node_info_clear(&info);
    vsched_stats st;
    vsched_get_stats(s, &st);
    CU_ASSERT_EQUAL(st.edges, 0);
    dw_stop(s);
}

/* ---- resources ------------------------------------------------------------------ */

static void unconfigured_resource_has_capacity_one_configured_has_n(void)
{
    vsched *s = dw_start(files, 4, 0);
    const char *r[] = {"res"};
    vsched_node_spec n[2] = {dw_job("hold1", 1), dw_job("hold2", 0)};
    for (int i = 0; i < 2; i++) {
        n[i].resources = r;
        n[i].n_resources = 1;
    }
    uint64_t ids[2];
    dw_submit(s, n, 2, NULL, 0, ids);
    dw_wait_entered("hold1");
    /* Both were dispatched in the submission's one pass: hold2 is parked
     * on the unit hold1 holds. */
    CU_ASSERT_EQUAL(dw_state(s, ids[1]), VSCHED_NODE_READY);
    CU_ASSERT_FALSE(dw_entered("hold2"));
    dw_open("hold1");
    dw_wait_entered("hold2");
    dw_open("hold2");
    vsched_node_info info;
    CU_ASSERT_EQUAL(dw_wait(s, ids[1], &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);

    /* Capacity 2: both hold at once. */
    CU_ASSERT_EQUAL(vsched_set_resource_capacity(s, "res", 2), 0);
    n[0].name = "hold3";
    n[1].name = "hold4";
    dw_submit(s, n, 2, NULL, 0, ids);
    dw_wait_entered("hold3");
    dw_wait_entered("hold4");
    CU_ASSERT_EQUAL(dw_running(), 2);
    dw_open("hold3");
    dw_open("hold4");
    CU_ASSERT_EQUAL(dw_wait(s, ids[1], &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    dw_stop(s);
}

static void all_or_nothing_acquisition_never_holds_and_waits(void)
{
    /* holdZ holds b and waits for W; X needs a and b; W needs a. Under
     * hold-and-wait X would take a and wait for b: W could never run, Z
     * never finish -- a deadlock. X must take nothing while b is out. */
    vsched *s = dw_start(files, 4, 0);
    const char *rb[] = {"b"}, *rab[] = {"a", "b"}, *ra[] = {"a"};
    vsched_node_spec n[3] = {dw_job("holdZ", 30), dw_job("X", 20),
                             dw_job("W", 10)};
    n[0].resources = rb;
    n[0].n_resources = 1;
    n[1].resources = rab;
    n[1].n_resources = 2;
    n[2].resources = ra;
    n[2].n_resources = 1;
    uint64_t ids[3];
    dw_submit(s, n, 3, NULL, 0, ids);
    dw_wait_entered("holdZ");
    vsched_node_info info;
    CU_ASSERT_EQUAL(dw_wait(s, ids[2], &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    CU_ASSERT_EQUAL(dw_state(s, ids[1]), VSCHED_NODE_READY);
    dw_open("holdZ");
    CU_ASSERT_EQUAL(dw_wait(s, ids[1], &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    CU_ASSERT(dw_start_index("W") < dw_start_index("X"));
    dw_stop(s);
}

static void parent_subtree_holds_the_unit_and_children_borrow_it(void)
{
    /* P holds r (capacity 1) for its subtree. Its children C1 and C2 need
     * r: they borrow P's grant, one branch at a time (G, C1's child,
     * borrows inside C1's branch). U, outside the subtree, needs r too and
     * gets it only once the whole subtree is terminal. */
    vsched *s = dw_start(files, 4, 0);
    const char *r[] = {"r"};
    vsched_node_spec n[5] = {dw_job("holdP", 40), dw_job("holdC1", 30),
                             dw_job("holdC2", 20), dw_job("holdG", 25),
                             dw_job("holdU", 10)};
    for (int i = 0; i < 5; i++) {
        n[i].resources = r;
        n[i].n_resources = 1;
    }
    n[1].parent = VSCHED_REF_LOCAL(0);
    n[2].parent = VSCHED_REF_LOCAL(0);
    n[3].parent = VSCHED_REF_LOCAL(1);
    uint64_t ids[5];
    dw_submit(s, n, 5, NULL, 0, ids);
    dw_wait_entered("holdP");
    dw_wait_entered("holdC1"); /* borrowed, though r's one unit is out */
    dw_wait_entered("holdG");  /* re-entrant, inside C1's branch */
    CU_ASSERT_EQUAL(dw_state(s, ids[2]), VSCHED_NODE_READY); /* C2 waits */
    CU_ASSERT_EQUAL(dw_state(s, ids[4]), VSCHED_NODE_READY); /* U waits */
    dw_open("holdP");
    vsched_node_info info;
    CU_ASSERT_EQUAL(dw_wait(s, ids[0], &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    CU_ASSERT_FALSE(dw_entered("holdU")); /* P done, subtree is not */
    dw_open("holdC1");
    CU_ASSERT_EQUAL(dw_wait(s, ids[1], &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    CU_ASSERT_FALSE(dw_entered("holdC2")); /* C1's branch lives on in G */
    dw_open("holdG");
    dw_wait_entered("holdC2"); /* C1's branch ended: C2's turn */
    CU_ASSERT_FALSE(dw_entered("holdU"));
    dw_open("holdC2");
    CU_ASSERT_EQUAL(dw_wait(s, ids[2], &info), VSCHED_NODE_DONE);
    uint64_t c2_end = info.finished_ns;
    vsched_node_info_clear(&info);
    dw_wait_entered("holdU"); /* the subtree is terminal: unit released */
    dw_open("holdU");
    CU_ASSERT_EQUAL(dw_wait(s, ids[4], &info), VSCHED_NODE_DONE);
    CU_ASSERT(info.started_ns >= c2_end);
    vsched_node_info_clear(&info);
    dw_stop(s);
}

/* ---- CPU concurrency permits --------------------------------------------------------- */

static void cpu_semaphore_caps_running_nodes_handshake(void)
{
    vsched *s = dw_start(files, 4, 0);
    vsched_sem *sem = NULL;
    CU_ASSERT_EQUAL_FATAL(vsched_sem_create(s, 2, &sem), 0);
    static const char *names[6] = {"hold0", "hold1", "hold2",
                                   "hold3", "hold4", "hold5"};
    vsched_node_spec n[6];
    for (int i = 0; i < 6; i++) {
        n[i] = dw_job(names[i], 6 - i); /* start in name order */
        n[i].sem = sem;
    }
    uint64_t ids[6];
    dw_submit(s, n, 6, NULL, 0, ids);
    vsched_sem_release(sem); /* the nodes keep their own references */
    /* Two run at a time; with four workers free the others stay queued
     * until a permit comes back. */
    dw_wait_entered(names[0]);
    for (int k = 0; k < 6; k++) {
        if (k + 1 < 6) {
            dw_wait_entered(names[k + 1]); /* the second permit */
            CU_ASSERT_EQUAL(dw_state(s, ids[k + 1]), VSCHED_NODE_RUNNING);
        }
        CU_ASSERT(vsched_sem_in_use(sem) <= 2);
        if (k + 2 < 6) {
            CU_ASSERT_FALSE(dw_entered(names[k + 2]));
            CU_ASSERT_EQUAL(dw_state(s, ids[k + 2]), VSCHED_NODE_READY);
        }
        if (k + 1 < 6)
            dw_open(names[k]);
    }
    dw_open(names[5]);
    vsched_node_info info;
    for (int i = 0; i < 6; i++) {
        CU_ASSERT_EQUAL(dw_wait(s, ids[i], &info), VSCHED_NODE_DONE);
        vsched_node_info_clear(&info);
    }
    CU_ASSERT_EQUAL(dw_max_running(), 2);
    dw_stop(s);
}

static void cpu_permit_is_released_on_failure_and_cancellation(void)
{
    vsched *s = dw_start(files, 2, 0);
    vsched_sem *sem = NULL;
    vsched_token *tok = NULL;
    CU_ASSERT_EQUAL_FATAL(vsched_sem_create(s, 1, &sem), 0);
    CU_ASSERT_EQUAL_FATAL(vsched_token_create(s, &tok), 0);
    vsched_node_spec n[3] = {dw_job("fail1", 3), dw_job("holdC", 2),
                             dw_job("after", 1)};
    for (int i = 0; i < 3; i++)
        n[i].sem = sem;
    n[1].token = tok;
    uint64_t ids[3];
    dw_submit(s, n, 3, NULL, 0, ids);
    dw_wait_entered("holdC"); /* fail1's permit came back */
    CU_ASSERT_EQUAL(dw_state(s, ids[0]), VSCHED_NODE_FAILED);
    CU_ASSERT_EQUAL(vsched_sem_in_use(sem), 1);
    vsched_token_cancel(tok, "stop holdC");
    vsched_node_info info;
    CU_ASSERT_EQUAL(dw_wait(s, ids[1], &info), VSCHED_NODE_CANCELLED);
    CU_ASSERT_STRING_EQUAL(info.message, "stop holdC");
    vsched_node_info_clear(&info);
    CU_ASSERT_EQUAL(dw_wait(s, ids[2], &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    CU_ASSERT_EQUAL(vsched_sem_in_use(sem), 0);
    vsched_sem_release(sem);
    vsched_token_release(tok);
    dw_stop(s);
}

/* ---- priority inheritance -------------------------------------------------------- */

static void late_high_priority_dependent_raises_queued_upstream(void)
{
    vsched *s = dw_start(files, 2, 0);
    const char *slot[] = {"slot"};
    /* holdB takes the one slot; q1..q3 and x queue behind it at 0. */
    vsched_node_spec n[5] = {dw_job("holdB", 9), dw_job("q1", 0),
                             dw_job("q2", 0), dw_job("q3", 0), dw_job("x", 0)};
    for (int i = 0; i < 5; i++) {
        n[i].resources = slot;
        n[i].n_resources = 1;
    }
    uint64_t ids[5], did[1];
    dw_submit(s, n, 5, NULL, 0, ids);
    dw_wait_entered("holdB");
    /* A late dependent at 10 lifts x above the older q's. */
    vsched_node_spec d[1] = {dw_job("d", 10)};
    vsched_edge_spec e[] = {EDGE(VSCHED_REF_ID(ids[4]), 0, AFTER_SUCCESS)};
    dw_submit(s, d, 1, e, 1, did);
    vsched_node_info info;
    CU_ASSERT_EQUAL_FATAL(vsched_node_get(s, ids[4], &info), 0);
    CU_ASSERT_EQUAL(info.priority, 10);
    vsched_node_info_clear(&info);
    dw_open("holdB");
    CU_ASSERT_EQUAL(dw_wait(s, did[0], &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    for (int i = 1; i < 4; i++) {
        CU_ASSERT_EQUAL(dw_wait(s, ids[i], &info), VSCHED_NODE_DONE);
        vsched_node_info_clear(&info);
        CU_ASSERT(dw_start_index("x") < dw_start_index(n[i].name));
    }
    dw_stop(s);
}

/* ---- cancellation ------------------------------------------------------------------ */

static void token_cancel_ends_every_unfinished_node_transitively(void)
{
    vsched *s = dw_start(files, 2, 0);
    vsched_token *tok = NULL;
    CU_ASSERT_EQUAL_FATAL(vsched_token_create(s, &tok), 0);
    /* done1 finishes first; holdR runs; next waits on it; tail (no token)
     * waits on next after ANY outcome -- still cancelled, transitively. */
    vsched_node_spec n[4] = {dw_job("done1", 5), dw_job("holdR", 4),
                             dw_job("next", 0), dw_job("tail", 0)};
    n[0].token = n[1].token = n[2].token = tok;
    vsched_edge_spec e[] = {EDGE(0, 1, AFTER_SUCCESS),
                            EDGE(1, 2, AFTER_SUCCESS), EDGE(2, 3, AFTER_ANY)};
    uint64_t ids[4];
    dw_submit(s, n, 4, e, 3, ids);
    dw_wait_entered("holdR");
    vsched_token_cancel(tok, "user pressed stop");
    CU_ASSERT(vsched_token_is_cancelled(tok));
    vsched_node_info info;
    CU_ASSERT_EQUAL(dw_wait(s, ids[1], &info), VSCHED_NODE_CANCELLED);
    CU_ASSERT_STRING_EQUAL(info.message, "user pressed stop");
    CU_ASSERT_PTR_NULL(info.output);
    vsched_node_info_clear(&info);
    /* The running job was told to stop; its partial output is gone and
     * nothing was published. */
    char path[512];
    snprintf(path, sizeof path, "%s/holdR.partial", dw_dir());
    CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
    snprintf(path, sizeof path, "%s/holdR.final", dw_dir());
    CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
    CU_ASSERT_EQUAL(dw_state(s, ids[0]), VSCHED_NODE_DONE);
    for (int i = 2; i < 4; i++) {
        CU_ASSERT_EQUAL(dw_wait(s, ids[i], &info), VSCHED_NODE_CANCELLED);
        vsched_node_info_clear(&info);
    }
    CU_ASSERT_EQUAL(dw_start_index("next"), -1);
    CU_ASSERT_EQUAL(dw_start_index("tail"), -1);
    /* Later nodes carrying a cancelled token are cancelled on insertion. */
    vsched_node_spec late[1] = {dw_job("late", 0)};
    late[0].token = tok;
    dw_submit(s, late, 1, NULL, 0, ids);
    CU_ASSERT_EQUAL(dw_state(s, ids[0]), VSCHED_NODE_CANCELLED);
    vsched_token_release(tok);
    dw_stop(s);
}

/* ---- backpressure ------------------------------------------------------------------ */

typedef struct blocked_submit {
    vsched *s;
    vsched_node_spec spec[1];
    uint64_t id;
    vsched_admission adm;
    atomic_int returned;
} blocked_submit;

static void *submit_blocking(void *arg)
{
    blocked_submit *b = arg;
    vsched_dag d = {b->spec, 1, NULL, 0, NULL, NULL, 1};
    vsched_submit_dag(b->s, &d, &b->id, &b->adm, NULL);
    atomic_store(&b->returned, 1);
    return NULL;
}

static void backpressure_returns_without_mutating_or_blocks_for_room(void)
{
    vsched *s = dw_start(files, 2, 2); /* ready_capacity 2 */
    const char *r[] = {"one"};
    vsched_node_spec n[3] = {dw_job("holdH", 9), dw_job("q1", 0),
                             dw_job("q2", 0)};
    for (int i = 0; i < 3; i++) {
        n[i].resources = r;
        n[i].n_resources = 1;
    }
    uint64_t ids[3];
    dw_submit(s, n, 3, NULL, 0, ids); /* an empty queue takes 3 > 2 */
    dw_wait_entered("holdH");
    CU_ASSERT_EQUAL(vsched_ready_queue_depth(s), 2);
    uint64_t before = graph_nodes(s);
    char *json_before = NULL, *json_after = NULL;
    size_t len;
    CU_ASSERT_EQUAL(vsched_graph_json(s, &json_before, &len), 0);
    vsched_node_spec more[1] = {dw_job("more", 0)};
    uint64_t id = 7777;
    vsched_admission adm = VSCHED_ADMITTED;
    vsched_dag d = {more, 1, NULL, 0, NULL, NULL, 0};
    CU_ASSERT_EQUAL(vsched_submit_dag(s, &d, &id, &adm, NULL), 0);
    CU_ASSERT_EQUAL(adm, VSCHED_BACKPRESSURED);
    CU_ASSERT_EQUAL(id, 7777);
    CU_ASSERT_EQUAL(graph_nodes(s), before);
    CU_ASSERT_EQUAL(vsched_ready_queue_depth(s), 2);
    CU_ASSERT_EQUAL(vsched_graph_json(s, &json_after, &len), 0);
    CU_ASSERT_STRING_EQUAL(json_before, json_after);
    free(json_before);
    free(json_after);

    /* Block mode waits for room, then is admitted. */
    blocked_submit b = {.s = s, .spec = {dw_job("more", 0)}};
    pthread_t th;
    pthread_create(&th, NULL, submit_blocking, &b);
    CU_ASSERT_EQUAL(atomic_load(&b.returned), 0);
    dw_open("holdH");
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(b.adm, VSCHED_ADMITTED);
    CU_ASSERT(b.id > ids[2]);
    vsched_node_info info;
    CU_ASSERT_EQUAL(dw_wait(s, b.id, &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    dw_stop(s);
}

/* ---- dedupe --------------------------------------------------------------------- */

static void dedupe_key_joins_a_live_job_in_the_graph(void)
{
    vsched *s = dw_start(files, 2, 0);
    vsched_node_spec n[2] = {dw_job("holdK", 0), dw_job("holdK", 5)};
    n[0].dedupe_key = n[1].dedupe_key = "key";
    uint64_t ids[2];
    dw_submit(s, n, 2, NULL, 0, ids);
    CU_ASSERT_EQUAL(ids[0], ids[1]); /* collapsed within the sub-DAG */
    uint64_t before = graph_nodes(s);
    vsched_node_spec again[1] = {dw_job("holdK", 0)};
    again[0].dedupe_key = "key";
    uint64_t id2;
    dw_submit(s, again, 1, NULL, 0, &id2);
    CU_ASSERT_EQUAL(id2, ids[0]); /* joined the live node */
    CU_ASSERT_EQUAL(graph_nodes(s), before);
    vsched_node_info info;
    CU_ASSERT_EQUAL_FATAL(vsched_node_get(s, ids[0], &info), 0);
    CU_ASSERT_EQUAL(info.priority, 5);
    vsched_node_info_clear(&info);
    dw_open("holdK");
    CU_ASSERT_EQUAL(dw_wait(s, ids[0], &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    /* Finished: the key is free, a new node is made. */
    dw_submit(s, again, 1, NULL, 0, &id2);
    CU_ASSERT(id2 > ids[0]);
    dw_stop(s);
}

static int probes;
static int probe_table(void *user, const char *key, void **joiner)
{
    probes++;
    if (strcmp(key, "in-flight") != 0)
        return 0;
    *joiner = user;
    return 1;
}

static void dedupe_hook_is_probed_before_admission(void)
{
    vsched *s = dw_start(files, 2, 0);
    int flight = 42;
    vsched_dedupe_hook hook = {probe_table, &flight};
    vsched_node_spec n[1] = {dw_job("x", 0)};
    uint64_t id = 0;
    void *joiner = NULL;
    vsched_admission adm;
    vsched_dag d = {n, 1, NULL, 0, "in-flight", &hook, 0};
    uint64_t before = graph_nodes(s);
    CU_ASSERT_EQUAL(vsched_submit_dag(s, &d, &id, &adm, &joiner), 0);
    CU_ASSERT_EQUAL(adm, VSCHED_DEDUPE_JOINED);
    CU_ASSERT_PTR_EQUAL(joiner, &flight);
    CU_ASSERT_EQUAL(id, 0);
    CU_ASSERT_EQUAL(graph_nodes(s), before);
    d.key = "new";
    CU_ASSERT_EQUAL(vsched_submit_dag(s, &d, &id, &adm, &joiner), 0);
    CU_ASSERT_EQUAL(adm, VSCHED_ADMITTED);
    CU_ASSERT_EQUAL(probes, 2);
    /* No hook: the no-op default admits. */
    d.hook = NULL;
    d.key = "in-flight";
    CU_ASSERT_EQUAL(vsched_submit_dag(s, &d, &id, &adm, &joiner), 0);
    CU_ASSERT_EQUAL(adm, VSCHED_ADMITTED);
    CU_ASSERT_EQUAL(probes, 2);
    dw_stop(s);
}

/* ---- file stages, node state, JSON --------------------------------------------- */

static void job_depends_on_file_artifacts_and_gets_their_paths(void)
{
    vsched *s = dw_start(files, 2, 0);
    vsched_node_spec n[3] = {
        {.what = VSCHED_SPEC_ARTIFACT, .name = "a.c", .profile = "release"},
        {.what = VSCHED_SPEC_ARTIFACT, .name = "b.c", .profile = "release"},
        dw_job("link", 0)};
    const char *extra[] = {"-lm"};
    n[2].inputs = extra;
    n[2].n_inputs = 1;
    n[2].profile = "out";
    vsched_edge_spec e[] = {EDGE(0, 2, AFTER_SUCCESS),
                            EDGE(1, 2, AFTER_SUCCESS)};
    uint64_t ids[3];
    dw_submit(s, n, 3, e, 2, ids);
    vsched_node_info info;
    CU_ASSERT_EQUAL(dw_wait(s, ids[2], &info), VSCHED_NODE_DONE);
    char want[1024];
    snprintf(want, sizeof want, "-lm %s/a.c.release %s/b.c.release", dw_dir(),
             dw_dir());
    CU_ASSERT_STRING_EQUAL(dw_inputs("link"), want);
    char out[512];
    snprintf(out, sizeof out, "%s/link.out", dw_dir());
    CU_ASSERT_STRING_EQUAL(info.output, out);
    CU_ASSERT_EQUAL(access(out, F_OK), 0);
    vsched_node_info_clear(&info);
    /* The ids are the stage nodes': a file request sees the same node. */
    CU_ASSERT_EQUAL(dw_wait(s, ids[0], &info), VSCHED_NODE_DONE);
    CU_ASSERT_STRING_EQUAL(info.name, "a.c");
    vsched_node_info_clear(&info);

    /* A failing artifact cancels the job with a reason naming the file. */
    dw_fail_artifact("bad.c");
    n[1].name = "bad.c";
    n[2].name = "link2";
    dw_submit(s, n, 3, e, 2, ids);
    CU_ASSERT_EQUAL(dw_wait(s, ids[2], &info), VSCHED_NODE_CANCELLED);
    CU_ASSERT_STRING_EQUAL(info.failed_dep, "bad.c");
    CU_ASSERT_PTR_NOT_NULL(strstr(info.message, "'bad.c' failed"));
    vsched_node_info_clear(&info);
    CU_ASSERT_EQUAL(dw_start_index("link2"), -1);
    dw_stop(s);
}

static void job_on_a_superseded_artifact_follows_the_new_generation(void)
{
    vsched *s = dw_start(files, 2, 0);
    vsched_node_spec n[2] = {{.what = VSCHED_SPEC_ARTIFACT,
                              .name = "holdf.c",
                              .profile = "release"},
                             dw_job("after", 0)};
    vsched_edge_spec e[] = {EDGE(0, 1, AFTER_SUCCESS)};
    uint64_t ids[2];
    dw_submit(s, n, 2, e, 1, ids);
    dw_wait_entered("holdf.c");
    /* The artifact the job waits on is superseded while it runs: the job
     * must neither be cancelled nor run on the stale output. */
    CU_ASSERT_EQUAL(vsched_invalidate(s, "holdf.c"), 0);
    dw_open("holdf.c");
    vsched_node_info info;
    CU_ASSERT_EQUAL(dw_wait(s, ids[1], &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    CU_ASSERT_EQUAL(dw_runs("holdf.c"), 2);
    char want[512];
    snprintf(want, sizeof want, "%s/holdf.c.release", dw_dir());
    CU_ASSERT_STRING_EQUAL(dw_inputs("after"), want);
    dw_stop(s);
}

static void node_state_has_monotonic_timestamps_and_outcome(void)
{
    vsched *s = dw_start(files, 2, 0);
    vsched_node_spec n[2] = {dw_job("ok", 0), dw_job("fail1", 0)};
    uint64_t ids[2];
    uint64_t t0 = 0;
    vsched_node_info info;
    dw_submit(s, n, 2, NULL, 0, ids);
    CU_ASSERT_EQUAL(dw_wait(s, ids[0], &info), VSCHED_NODE_DONE);
    CU_ASSERT_EQUAL(info.status, 0);
    CU_ASSERT_PTR_NULL(info.message);
    CU_ASSERT(info.started_ns > t0 && info.finished_ns >= info.started_ns);
    vsched_node_info_clear(&info);
    CU_ASSERT_EQUAL(dw_wait(s, ids[1], &info), VSCHED_NODE_FAILED);
    CU_ASSERT_EQUAL(info.status, VSCHED_ETOOL);
    CU_ASSERT_PTR_NOT_NULL(strstr(info.message, "fail1"));
    CU_ASSERT(info.started_ns > 0 && info.finished_ns >= info.started_ns);
    vsched_node_info_clear(&info);
    CU_ASSERT_EQUAL(vsched_node_get(s, ids[1] + 100000, &info), VSCHED_ENOENT);
    /* A reset retires the graph: the ids stop resolving. */
    vsched_reset(s);
    CU_ASSERT_EQUAL(vsched_node_get(s, ids[0], &info), VSCHED_ENOENT);
    dw_stop(s);
}

/* A scheduler with no node projects an empty list (the sort of none is
 * skipped: qsort wants an array even of no elements, UBSan says). */
static void graph_json_of_an_empty_graph_is_an_empty_list(void)
{
    vsched *s = dw_start(files, 1, 0);
    char *json = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(vsched_graph_json(s, &json, &len), 0);
    CU_ASSERT_EQUAL(strlen(json), len);
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "{\"nodes\":["));
    CU_ASSERT_PTR_NULL(strstr(json, "\"id\""));
    free(json);
    dw_stop(s);
}

static void graph_json_projects_nodes_states_and_gated_edges(void)
{
    vsched *s = dw_start(files, 2, 0);
    const char *r[] = {"link"};
    vsched_node_spec n[3] = {
        {.what = VSCHED_SPEC_ARTIFACT, .name = "a.c", .profile = "release"},
        dw_job("fail1", 0),
        dw_job("j\"q", 3)};
    n[2].resources = r;
    n[2].n_resources = 1;
    vsched_edge_spec e[] = {EDGE(0, 2, AFTER_SUCCESS), EDGE(1, 2, AFTER_ANY)};
    uint64_t ids[3];
    dw_submit(s, n, 3, e, 2, ids);
    vsched_node_info info;
    CU_ASSERT_EQUAL(dw_wait(s, ids[2], &info), VSCHED_NODE_DONE);
    vsched_node_info_clear(&info);
    char *json = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL_FATAL(vsched_graph_json(s, &json, &len), 0);
    CU_ASSERT_EQUAL(strlen(json), len);
    char want[256];
    snprintf(want, sizeof want,
             "{\"id\":%llu,\"kind\":\"job\",\"name\":\"j\\\"q\","
             "\"state\":\"done\",\"priority\":3,\"status\":0",
             (unsigned long long)ids[2]);
    CU_ASSERT_PTR_NOT_NULL(strstr(json, want));
    snprintf(want, sizeof want,
             "\"resources\":[\"link\"],\"deps\":[{\"id\":%llu,\"gate\":"
             "\"after_success\"},{\"id\":%llu,\"gate\":\"after_any\"}]",
             (unsigned long long)ids[0], (unsigned long long)ids[1]);
    CU_ASSERT_PTR_NOT_NULL(strstr(json, want));
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"kind\":\"artifact\",\"name\":"
                                        "\"a.c\",\"state\":\"done\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"state\":\"failed\""));
    CU_ASSERT(strncmp(json, "{\"nodes\":[", 10) == 0);
    free(json);
    dw_stop(s);
}

int main(void)
{
    static const vr_cu_test tests[] = {
        {"job_on_a_superseded_artifact_follows_the_new_generation",
         job_on_a_superseded_artifact_follows_the_new_generation},
#define T_(f) {#f, f}
        T_(dag_ids_come_back_in_the_order_named_and_increase),
        T_(bad_references_are_rejected_and_insert_nothing),
        T_(dag_insert_is_atomic_no_observer_sees_half),
        T_(failed_upstream_cancels_after_success_dependents_transitively),
        T_(after_any_runs_after_a_failed_upstream),
        T_(after_admission_releases_once_upstream_is_queued_not_finished),
        T_(a_waiting_node_has_no_end_time_and_an_ended_one_has_its_own),
        T_(unconfigured_resource_has_capacity_one_configured_has_n),
        T_(all_or_nothing_acquisition_never_holds_and_waits),
        T_(parent_subtree_holds_the_unit_and_children_borrow_it),
        T_(cpu_semaphore_caps_running_nodes_handshake),
        T_(cpu_permit_is_released_on_failure_and_cancellation),
        T_(late_high_priority_dependent_raises_queued_upstream),
        T_(token_cancel_ends_every_unfinished_node_transitively),
        T_(backpressure_returns_without_mutating_or_blocks_for_room),
        T_(dedupe_key_joins_a_live_job_in_the_graph),
        T_(dedupe_hook_is_probed_before_admission),
        T_(job_depends_on_file_artifacts_and_gets_their_paths),
        T_(node_state_has_monotonic_timestamps_and_outcome),
        T_(graph_json_of_an_empty_graph_is_an_empty_list),
        T_(graph_json_projects_nodes_states_and_gated_edges),
#undef T_
        {NULL, NULL},
    };
    return vr_cu_main("dag", tests);
}
