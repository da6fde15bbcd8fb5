/*
 * test_units -- blocker cycles that build as one unit (C headers with
 * include guards that include each other), over the public API.
 *
 * What a unit promises, each checked here:
 *   - the cycle builds (no VSCHED_ECYCLE) unless the options forbid it;
 *   - every member folds the same unit hash for each blocker inside the
 *     cycle (vsched_result.unit_hash), its own Analysis hash for the rest;
 *   - that hash depends on the members' contents and what they depend on
 *     outside, not on the order the cycle was discovered in;
 *   - no member runs before what the cycle waits on outside is DONE, and
 *     nothing downstream of a member runs before every member finished;
 *   - a failing member fails the cycle and its dependents, never hangs;
 *   - an edit of a member while the unit runs rebuilds it from the new
 *     content (the stale runs refused and counted), as a fresh build would;
 *   - cycles that grow into each other merge; an edit that breaks the
 *     cycle leaves ordinary Analyses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/vsched.h>

#include "cu.h"
#include "sound_world.h"

int vsched__test_handle_done(vsched_handle *h);

/* Request name to stage and wait; copies what the checks need. */
typedef struct seen {
    int status;
    uint64_t content, analysis, unit;
    char failed_dep[64];
    char message[256];
} seen;

static seen ask(vsched *s, const char *name, vsched_stage stage)
{
    vsched_handle *h = sw_submit(s, name, stage, 0);
    const vsched_result *r = NULL;
    seen out = {0};
    out.status = vsched_wait(h, &r);
    out.content = r->content_hash;
    out.analysis = r->analysis_hash;
    out.unit = r->unit_hash;
    snprintf(out.failed_dep, sizeof out.failed_dep, "%s",
             r->failed_dep != NULL ? r->failed_dep : "");
    snprintf(out.message, sizeof out.message, "%s",
             r->message != NULL ? r->message : "");
    vsched_handle_release(h);
    return out;
}

static uint64_t fold1(uint64_t c, uint64_t b)
{
    return sw_fold(c, &b, 1);
}

/* ---- the plain cycle --------------------------------------------------------- */

static const memfs_file pair[] = {
    {"a.h", "blocker b.h\n"},
    {"b.h", "blocker a.h\n"},
    {"main.c", "blocker a.h\n"},
    {NULL, NULL},
};

static void two_headers_that_include_each_other_build(void)
{
    sw_world w;
    sw_options o = {.files = pair, .cpu_threads = 2};
    sw_start(&w, &o);
    seen m = ask(w.s, "main.c", VSCHED_STAGE_ARTIFACT);
    CU_ASSERT_EQUAL(m.status, 0);
    seen a = ask(w.s, "a.h", VSCHED_STAGE_ANALYSIS);
    seen b = ask(w.s, "b.h", VSCHED_STAGE_ANALYSIS);
    CU_ASSERT_EQUAL(a.status, 0);
    CU_ASSERT_EQUAL(b.status, 0);
    CU_ASSERT_NOT_EQUAL(a.unit, 0);
    CU_ASSERT_EQUAL(a.unit, b.unit);
    CU_ASSERT_EQUAL(a.analysis, fold1(a.content, a.unit));
    CU_ASSERT_EQUAL(b.analysis, fold1(b.content, b.unit));
    /* Outside the cycle: an ordinary Analysis over a.h's. */
    seen mc = ask(w.s, "main.c", VSCHED_STAGE_ANALYSIS);
    CU_ASSERT_EQUAL(mc.unit, 0);
    CU_ASSERT_EQUAL(mc.analysis, fold1(mc.content, a.analysis));
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    CU_ASSERT_EQUAL(st.cycle_units, 1);
    CU_ASSERT_EQUAL(st.stage_runs[VSCHED_STAGE_ANALYSIS], 3);
    CU_ASSERT_EQUAL(st.edges, 0);
    sw_stop(&w);
}

/* ---- order independence --------------------------------------------------------
 * a -> b -> a, and a -> x -> y -> b: one component of four, found as a
 * two-cycle first and grown through it, or all at once, depending on which
 * file is asked for first. */

static const memfs_file four[] = {
    {"a.h", "blocker b.h\nblocker x.h\n"},
    {"b.h", "blocker a.h\n"},
    {"x.h", "blocker y.h\n"},
    {"y.h", "blocker b.h\n"},
    {"top.c", "blocker y.h\n"},
    {NULL, NULL},
};

static uint64_t unit_of_four(const char *first, seen out[4])
{
    static const char *const names[4] = {"a.h", "b.h", "x.h", "y.h"};
    sw_world w;
    sw_options o = {.files = four, .cpu_threads = 2};
    sw_start(&w, &o);
    CU_ASSERT_EQUAL(ask(w.s, first, VSCHED_STAGE_ANALYSIS).status, 0);
    for (int i = 0; i < 4; i++)
        out[i] = ask(w.s, names[i], VSCHED_STAGE_ANALYSIS);
    sw_stop(&w);
    return out[0].unit;
}

static void a_cycle_grown_through_another_is_one_unit_in_any_order(void)
{
    static const char *const firsts[] = {"a.h", "b.h", "x.h", "y.h", "top.c"};
    uint64_t u0 = 0;
    for (size_t k = 0; k < sizeof firsts / sizeof firsts[0]; k++) {
        seen m[4];
        uint64_t u = unit_of_four(firsts[k], m);
        CU_ASSERT_NOT_EQUAL(u, 0);
        for (int i = 0; i < 4; i++) {
            CU_ASSERT_EQUAL(m[i].status, 0);
            CU_ASSERT_EQUAL(m[i].unit, u);
        }
        /* a.h's blockers, b.h and x.h, are both inside. */
        uint64_t both[2] = {u, u};
        CU_ASSERT_EQUAL(m[0].analysis, sw_fold(m[0].content, both, 2));
        CU_ASSERT_EQUAL(m[3].analysis, fold1(m[3].content, u));
        if (k == 0)
            u0 = u;
        CU_ASSERT_EQUAL(u, u0);
    }
}

/* ---- what the unit waits on --------------------------------------------------- */

static const memfs_file outside[] = {
    {"a.h", "blocker b.h\n"},
    {"b.h", "blocker a.h\nblocker ext.h\n"},
    {"ext.h", "int e;\n"},
    {"user.c", "blocker b.h\n"},
    {NULL, NULL},
};

static void no_member_runs_before_the_outside_and_all_finish_together(void)
{
    sw_world w;
    sw_options o = {.files = outside, .cpu_threads = 2};
    sw_start(&w, &o);
    sw_arm("A:ext.h");
    vsched_handle *h = sw_submit(w.s, "user.c", VSCHED_STAGE_ARTIFACT, 0);
    sw_wait_entered("A:ext.h");
    sw_sleep_ms(50);
    /* No Analysis got past the executor: the cycle waits for ext.h. */
    CU_ASSERT_EQUAL(sw_calls('A'), 0);
    sw_arm("A:a.h"); /* hold one member */
    sw_open("A:ext.h");
    sw_wait_entered("A:a.h");
    sw_sleep_ms(50);
    /* b.h finished (held), but nothing downstream of the cycle ran, and
     * b.h's own request is not answered before a.h finishes. */
    vsched_handle *hb = sw_submit(w.s, "b.h", VSCHED_STAGE_ANALYSIS, 0);
    sw_sleep_ms(20);
    CU_ASSERT_EQUAL(sw_calls('A'), 2); /* ext.h, b.h (a.h is held) */
    CU_ASSERT_FALSE(vsched__test_handle_done(hb));
    CU_ASSERT_FALSE(vsched__test_handle_done(h));
    CU_ASSERT_EQUAL(sw_calls('R'), 0);
    sw_open("A:a.h");
    const vsched_result *r = NULL;
    CU_ASSERT_EQUAL(vsched_wait(h, &r), 0);
    CU_ASSERT_EQUAL(vsched_wait(hb, &r), 0);
    uint64_t u = r->unit_hash;
    vsched_handle_release(hb);
    vsched_handle_release(h);
    seen e = ask(w.s, "ext.h", VSCHED_STAGE_ANALYSIS);
    seen b = ask(w.s, "b.h", VSCHED_STAGE_ANALYSIS);
    uint64_t bb[2] = {u, e.analysis};
    CU_ASSERT_EQUAL(b.analysis, sw_fold(b.content, bb, 2));
    sw_stop(&w);
}

/* The unit hash covers what it depends on outside: a new ext.h gives a
 * new unit hash to both members. */
static void an_edit_outside_the_cycle_rebuilds_it_with_a_new_hash(void)
{
    sw_world w;
    sw_options o = {.files = outside, .cpu_threads = 2};
    sw_start(&w, &o);
    seen a0 = ask(w.s, "a.h", VSCHED_STAGE_ANALYSIS);
    CU_ASSERT_EQUAL(a0.status, 0);
    vsched_handle *h = sw_upsert(w.s, "ext.h", "int e2;\n");
    CU_ASSERT_EQUAL(vsched_wait(h, NULL), 0);
    vsched_handle_release(h);
    seen a1 = ask(w.s, "a.h", VSCHED_STAGE_ANALYSIS);
    seen b1 = ask(w.s, "b.h", VSCHED_STAGE_ANALYSIS);
    CU_ASSERT_EQUAL(a1.status, 0);
    CU_ASSERT_NOT_EQUAL(a1.unit, a0.unit);
    CU_ASSERT_EQUAL(a1.unit, b1.unit);
    CU_ASSERT_EQUAL(a1.analysis, fold1(a1.content, a1.unit));
    sw_stop(&w);
}

/* ---- failure ------------------------------------------------------------------ */

static const memfs_file broken_cycle[] = {
    {"a.h", "blocker b.h\n"},
    {"b.h", "blocker a.h\nblocker gone.h\n"},
    {"user.c", "blocker a.h\n"},
    {NULL, NULL},
};

static void a_member_that_fails_fails_the_cycle_and_its_users(void)
{
    sw_world w;
    sw_options o = {.files = broken_cycle, .cpu_threads = 2};
    sw_start(&w, &o);
    seen u = ask(w.s, "user.c", VSCHED_STAGE_ARTIFACT);
    CU_ASSERT_EQUAL(u.status, VSCHED_EDEPFAIL);
    CU_ASSERT_PTR_NOT_NULL(strstr(u.message, "gone.h"));
    seen a = ask(w.s, "a.h", VSCHED_STAGE_ANALYSIS);
    seen b = ask(w.s, "b.h", VSCHED_STAGE_ANALYSIS);
    CU_ASSERT_EQUAL(a.status, VSCHED_EDEPFAIL);
    CU_ASSERT_EQUAL(b.status, VSCHED_EDEPFAIL);
    CU_ASSERT_STRING_EQUAL(b.failed_dep, "gone.h");
    CU_ASSERT_PTR_NOT_NULL(strstr(a.message, "gone.h"));
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    CU_ASSERT_EQUAL(st.edges, 0);
    CU_ASSERT_EQUAL(st.waiters, 0);
    sw_stop(&w);
}

/* ---- supersession ---------------------------------------------------------------- */

static const memfs_file pair_v2[] = {
    {"a.h", "blocker b.h\n"},
    {"b.h", "int two;\nblocker a.h\n"},
    {"main.c", "blocker a.h\n"},
    {NULL, NULL},
};

static void an_edit_of_a_member_while_the_unit_runs_rebuilds_it(void)
{
    /* What a fresh build of the new content gives. */
    sw_world w;
    sw_options o2 = {.files = pair_v2, .cpu_threads = 2};
    sw_start(&w, &o2);
    seen ref_a = ask(w.s, "a.h", VSCHED_STAGE_ANALYSIS);
    seen ref_m = ask(w.s, "main.c", VSCHED_STAGE_ANALYSIS);
    sw_stop(&w);
    CU_ASSERT_EQUAL(ref_a.status, 0);

    sw_options o = {.files = pair, .cpu_threads = 2};
    sw_start(&w, &o);
    sw_arm("A:a.h");
    vsched_handle *hm = sw_submit(w.s, "main.c", VSCHED_STAGE_ANALYSIS, 0);
    vsched_handle *ha = sw_submit(w.s, "a.h", VSCHED_STAGE_ANALYSIS, 0);
    sw_wait_entered("A:a.h");
    vsched_handle *up = sw_upsert(w.s, "b.h", "int two;\nblocker a.h\n");
    CU_ASSERT_EQUAL(vsched_wait(up, NULL), 0);
    vsched_handle_release(up);
    sw_open("A:a.h");
    const vsched_result *r = NULL;
    /* a.h did not change: its request is answered from the new unit. */
    CU_ASSERT_EQUAL(vsched_wait(ha, &r), 0);
    CU_ASSERT_EQUAL(r->unit_hash, ref_a.unit);
    CU_ASSERT_EQUAL(r->analysis_hash, ref_a.analysis);
    CU_ASSERT_EQUAL(vsched_wait(hm, &r), 0);
    CU_ASSERT_EQUAL(r->analysis_hash, ref_m.analysis);
    vsched_handle_release(ha);
    vsched_handle_release(hm);
    /* The stale a.h run was asked to stop; its return is refused (it may
     * come after the answers: poll for it). */
    vsched_stats st;
    for (int i = 0; i < 5000; i++) {
        vsched_get_stats(w.s, &st);
        if (st.stale_completion_refusals >= 1)
            break;
        sw_sleep_ms(1);
    }
    CU_ASSERT(st.stale_completion_refusals >= 1);
    CU_ASSERT_EQUAL(st.waiters, 0);
    CU_ASSERT_EQUAL(st.edges, 0);
    sw_stop(&w);
}

static void an_edit_that_breaks_the_cycle_leaves_plain_analyses(void)
{
    sw_world w;
    sw_options o = {.files = pair, .cpu_threads = 2};
    sw_start(&w, &o);
    CU_ASSERT_EQUAL(ask(w.s, "main.c", VSCHED_STAGE_ARTIFACT).status, 0);
    vsched_handle *up = sw_upsert(w.s, "b.h", "int alone;\n");
    CU_ASSERT_EQUAL(vsched_wait(up, NULL), 0);
    vsched_handle_release(up);
    seen a = ask(w.s, "a.h", VSCHED_STAGE_ANALYSIS);
    seen b = ask(w.s, "b.h", VSCHED_STAGE_ANALYSIS);
    CU_ASSERT_EQUAL(a.status, 0);
    CU_ASSERT_EQUAL(a.unit, 0);
    CU_ASSERT_EQUAL(b.unit, 0);
    CU_ASSERT_EQUAL(b.analysis, b.content);
    CU_ASSERT_EQUAL(a.analysis, fold1(a.content, b.analysis));
    sw_stop(&w);
}

/* Two separate cycles, then edits that join them into one. */
static const memfs_file two_pairs[] = {
    {"a.h", "blocker b.h\n"},
    {"b.h", "blocker a.h\n"},
    {"c.h", "blocker d.h\n"},
    {"d.h", "blocker c.h\n"},
    {NULL, NULL},
};

static void cycles_joined_by_edits_merge_into_one_unit(void)
{
    sw_world w;
    sw_options o = {.files = two_pairs, .cpu_threads = 2};
    sw_start(&w, &o);
    seen a = ask(w.s, "a.h", VSCHED_STAGE_ANALYSIS);
    seen c = ask(w.s, "c.h", VSCHED_STAGE_ANALYSIS);
    CU_ASSERT_NOT_EQUAL(a.unit, 0);
    CU_ASSERT_NOT_EQUAL(c.unit, 0);
    CU_ASSERT_NOT_EQUAL(a.unit, c.unit);
    vsched_handle *h1 = sw_upsert(w.s, "b.h", "blocker a.h\nblocker c.h\n");
    vsched_handle *h2 = sw_upsert(w.s, "d.h", "blocker c.h\nblocker a.h\n");
    CU_ASSERT_EQUAL(vsched_wait(h1, NULL), 0);
    CU_ASSERT_EQUAL(vsched_wait(h2, NULL), 0);
    vsched_handle_release(h1);
    vsched_handle_release(h2);
    static const char *const names[4] = {"a.h", "b.h", "c.h", "d.h"};
    seen m[4];
    for (int i = 0; i < 4; i++) {
        m[i] = ask(w.s, names[i], VSCHED_STAGE_ANALYSIS);
        CU_ASSERT_EQUAL(m[i].status, 0);
        CU_ASSERT_EQUAL(m[i].unit, m[0].unit);
    }
    CU_ASSERT_NOT_EQUAL(m[0].unit, a.unit);
    uint64_t both[2] = {m[0].unit, m[0].unit};
    CU_ASSERT_EQUAL(m[1].analysis, sw_fold(m[1].content, both, 2));
    sw_stop(&w);
}

/* Where the language forbids them, the same cycle fails with its chain. */
static void where_cycles_are_errors_the_cycle_fails(void)
{
    sw_world w;
    sw_options o = {.files = four, .cpu_threads = 2, .cycles_fail = 1};
    sw_start(&w, &o);
    seen t = ask(w.s, "top.c", VSCHED_STAGE_ANALYSIS);
    CU_ASSERT(t.status == VSCHED_ECYCLE);
    CU_ASSERT_PTR_NOT_NULL(strstr(t.message, "dependency cycle: "));
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    CU_ASSERT_EQUAL(st.cycle_units, 0);
    CU_ASSERT_EQUAL(st.edges, 0);
    sw_stop(&w);
}

/* ---- a cycle closed while its dependents are re-gated -------------------------
 * f <-> g, and q waits on f. g is edited to block on q as well while f's
 * Analysis runs: the unit dissolves, f's Analysis is replaced, and its
 * dependents are re-gated on the replacement in one operation, closing
 * the cycle f -> g -> q -> f. The edit settles, and the three build as
 * one unit. (supersede.c's regate makes the re-gated Analyses ready only
 * after every link: a unit released between two links was dissolved by
 * the second, and rebuilt and dissolved for ever under the lock. That
 * livelock was caught by test_churn's blocker cycles, seed 207, under
 * load; this scenario settles with or without the fix.) */
static const memfs_file loop3[] = {
    {"f.h", "blocker g.h\n"},
    {"g.h", "blocker f.h\n"},
    {"q.h", "blocker f.h\n"},
    {NULL, NULL},
};

static void a_cycle_closed_while_its_dependents_are_regated_settles(void)
{
    sw_world w;
    sw_options o = {.files = loop3, .cpu_threads = 2};
    sw_start(&w, &o);
    sw_arm("A:f.h");
    vsched_handle *hq = sw_submit(w.s, "q.h", VSCHED_STAGE_ANALYSIS, 0);
    sw_wait_entered("A:f.h");
    sw_waiter up;
    sw_waiter_start(&up, sw_upsert(w.s, "g.h", "blocker f.h\nblocker q.h\n"));
    if (!sw_waiter_done(&up, 20000)) {
        /* The scheduler spins under its lock: nothing can be torn down. */
        printf("\n    the edit never settled (units formed and dissolved "
               "for ever)\n");
        fflush(stdout);
        _exit(1);
    }
    CU_ASSERT_EQUAL(up.status, 0);
    sw_waiter_finish(&up);
    sw_open("A:f.h");
    const vsched_result *r = NULL;
    CU_ASSERT_EQUAL(vsched_wait(hq, &r), 0);
    vsched_handle_release(hq);
    seen f = ask(w.s, "f.h", VSCHED_STAGE_ANALYSIS);
    seen g = ask(w.s, "g.h", VSCHED_STAGE_ANALYSIS);
    seen q = ask(w.s, "q.h", VSCHED_STAGE_ANALYSIS);
    CU_ASSERT_EQUAL(f.status, 0);
    CU_ASSERT_NOT_EQUAL(f.unit, 0);
    CU_ASSERT_EQUAL(f.unit, g.unit); /* one unit of three */
    CU_ASSERT_EQUAL(f.unit, q.unit);
    vsched_stats st;
    vsched_get_stats(w.s, &st);
    CU_ASSERT(st.cycle_units <= 4);
    CU_ASSERT_EQUAL(st.waiters, 0);
    CU_ASSERT_EQUAL(st.edges, 0);
    sw_stop(&w);
}

static const vr_cu_test tests[] = {
    {"two_headers_that_include_each_other_build",
     two_headers_that_include_each_other_build},
    {"a_cycle_grown_through_another_is_one_unit_in_any_order",
     a_cycle_grown_through_another_is_one_unit_in_any_order},
    {"no_member_runs_before_the_outside_and_all_finish_together",
     no_member_runs_before_the_outside_and_all_finish_together},
    {"an_edit_outside_the_cycle_rebuilds_it_with_a_new_hash",
     an_edit_outside_the_cycle_rebuilds_it_with_a_new_hash},
    {"a_member_that_fails_fails_the_cycle_and_its_users",
     a_member_that_fails_fails_the_cycle_and_its_users},
    {"an_edit_of_a_member_while_the_unit_runs_rebuilds_it",
     an_edit_of_a_member_while_the_unit_runs_rebuilds_it},
    {"an_edit_that_breaks_the_cycle_leaves_plain_analyses",
     an_edit_that_breaks_the_cycle_leaves_plain_analyses},
    {"cycles_joined_by_edits_merge_into_one_unit",
     cycles_joined_by_edits_merge_into_one_unit},
    {"a_cycle_closed_while_its_dependents_are_regated_settles",
     a_cycle_closed_while_its_dependents_are_regated_settles},
    {"where_cycles_are_errors_the_cycle_fails",
     where_cycles_are_errors_the_cycle_fails},
    {NULL, NULL},
};

int main(void)
{
    return vr_cu_main("units", tests);
}
