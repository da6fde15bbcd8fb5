/*
 * test_cli -- the output helpers of vsched-run alone: name escaping, the
 * status line's elision, the summary's first diagnostic line, the trace
 * file's shape.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/progress.h"
#include "cli/summary.h"
#include "cli/trace.h"
#include "common/escape.h"
#include "cu.h"

static void check_escape(const char *in, const char *want)
{
    char *got = vr_escape_name(in);
    CU_ASSERT_STRING_EQUAL(got, want);
    CU_ASSERT_EQUAL(vr_name_is_plain(in), strcmp(in, want) == 0);
    free(got);
}

static void escape_is_one_to_one_and_leaves_utf8_alone(void)
{
    check_escape("src/a.c", "src/a.c");
    check_escape("a b\"c'$(x)", "a b\"c'$(x)");
    check_escape("a\nb", "a\\nb");
    check_escape("a\\nb", "a\\\\nb"); /* differs from the one above */
    check_escape("\r\t\033[2J\x7f", "\\r\\t\\e[2J\\x7f");
    check_escape("\x01\x1f", "\\x01\\x1f");
    check_escape("caf\xc3\xa9.c", "caf\xc3\xa9.c");
    char *e = vr_escape_name(NULL);
    CU_ASSERT_STRING_EQUAL(e, "");
    free(e);
}

static void elision_keeps_both_ends_and_fits_the_width(void)
{
    char buf[256];
    vr_progress_elide("short", 40, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "short");
    const char *name = "src/a_very_long_directory_name/and_a_long_file.c";
    for (unsigned w = 8; w < strlen(name); w++) {
        vr_progress_elide(name, w, buf, sizeof buf);
        CU_ASSERT_EQUAL(strlen(buf), w);
        CU_ASSERT_PTR_NOT_NULL(strstr(buf, "..."));
        CU_ASSERT_EQUAL(strncmp(buf, "src", w >= 10 ? 3 : 2), 0);
        CU_ASSERT_EQUAL(buf[strlen(buf) - 1], 'c');
    }
    vr_progress_elide(name, 20, buf, sizeof buf);
    CU_ASSERT_STRING_EQUAL(buf, "src/a_ve...ng_file.c");
    /* Never a split UTF-8 sequence: each e-acute is 2 bytes. */
    const char *u = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
                    "\xc3\xa9\xc3\xa9\xc3\xa9";
    for (unsigned w = 8; w < 20; w++) {
        vr_progress_elide(u, w, buf, sizeof buf);
        CU_ASSERT_TRUE(strlen(buf) <= w);
        const char *dots = strstr(buf, "...");
        CU_ASSERT_PTR_NOT_NULL_FATAL(dots);
        CU_ASSERT_EQUAL((dots - buf) % 2, 0);
        CU_ASSERT_EQUAL(strlen(dots + 3) % 2, 0);
    }
    vr_progress_elide(name, 5, buf, sizeof buf); /* too narrow: cut */
    CU_ASSERT_STRING_EQUAL(buf, "src/a");
}

static void first_line_is_the_first_error_line(void)
{
    vsched_diag d[2] = {
        {VSCHED_SEV_WARNING, "a.c", 3, "unused x"},
        {VSCHED_SEV_ERROR, NULL, 0,
         "a.c: In function 'f':\na.c:2:5: error: 'y' undeclared\n"
         "a.c:2:5: note: each undeclared identifier\n"},
    };
    vsched_result r = {.status = VSCHED_ETOOL,
                       .name = "a.c",
                       .message = "external tool failed",
                       .diags = d,
                       .n_diags = 2};
    char *l = vr_summary_first_line(&r);
    CU_ASSERT_STRING_EQUAL(l, "a.c:2:5: error: 'y' undeclared");
    free(l);
    r.n_diags = 1; /* only a one-line diagnostic: located */
    l = vr_summary_first_line(&r);
    CU_ASSERT_STRING_EQUAL(l, "a.c:3: unused x");
    free(l);
    r.n_diags = 0; /* none: the message */
    l = vr_summary_first_line(&r);
    CU_ASSERT_STRING_EQUAL(l, "external tool failed");
    free(l);
    r.message = NULL;
    l = vr_summary_first_line(&r);
    CU_ASSERT_STRING_EQUAL(l, vsched_strerror(VSCHED_ETOOL));
    free(l);
}

static void summary_counts_and_names_what_was_not_built(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    vr_summary *s = vr_summary_new();
    vsched_result r = {.status = VSCHED_ETOOL, .message = "boom"};
    vr_summary_failed(s, NULL, "x\ny.c", "release", &r);
    vr_summary_dep_failed(s);
    for (int i = 0; i < 5; i++) {
        char n[16];
        snprintf(n, sizeof n, "n%d.c", i);
        vr_summary_not_built(s, n);
    }
    vr_summary_counts c = {.built = 2,
                           .failed = 1,
                           .cancelled = 6,
                           .warnings = 1,
                           .seconds = 0.5};
    vr_summary_print(s, f, 0, VR_SUMMARY_INTERRUPTED, 1, &c);
    fclose(f);
    CU_ASSERT_STRING_EQUAL(
        text, "vsched-run: failed: x\\ny.c [release]: boom\n"
              "vsched-run: 1 failed, 1 not run because a dependency failed\n"
              "vsched-run: interrupted: 5 not built (n0.c, n1.c, n2.c and 2 "
              "more); what finished is recorded\n"
              "vsched-run: 2 built, 1 failed, 6 not built, 1 warning (0.50 "
              "s)\n");
    vr_summary_free(s);
    free(text);
}

static void trace_file_holds_the_tasks_named_lanes_and_escaped_names(void)
{
    char path[] = "/tmp/vsched-test-trace.XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_TRUE_FATAL(fd >= 0);
    close(fd);
    vr_trace *t = vr_trace_new(1000);
    vsched_task_event ev = {.name = "a\"b\n.c",
                            .step = "parse",
                            .pool = VSCHED_POOL_CPU,
                            .worker = 1,
                            .started_ns = 3000,
                            .finished_ns = 5500};
    vr_trace_task(t, &ev);
    char *msg = NULL;
    CU_ASSERT_EQUAL(vr_trace_write(t, path, NULL, NULL, &msg), 0);
    vr_trace_free(t);
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    unlink(path);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"traceEvents\":["));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(buf, "{\"name\":\"a\\\"b\\n.c\",\"cat\":\"parse\",\"ph\":\"X\","
                    "\"ts\":2.000,\"dur\":2.500,\"pid\":1,\"tid\":1,"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf,
                                  "\"thread_name\",\"ph\":\"M\",\"pid\":1,"
                                  "\"tid\":1,\"args\":{\"name\":\"cpu 1\"}"));
    vr_trace *t2 = vr_trace_new(0);
    CU_ASSERT_EQUAL(
        vr_trace_write(t2, "/no/such/dir/t.json", NULL, NULL, &msg),
        VSCHED_EIO);
    CU_ASSERT_PTR_NOT_NULL(msg);
    CU_ASSERT_PTR_NOT_NULL(msg != NULL ? strstr(msg, "/no/such/dir") : NULL);
    free(msg);
    vr_trace_free(t2);
}

int main(void)
{
    static const vr_cu_test tests[] = {
#define T_(name) {#name, name}
        T_(escape_is_one_to_one_and_leaves_utf8_alone),
        T_(elision_keeps_both_ends_and_fits_the_width),
        T_(first_line_is_the_first_error_line),
        T_(summary_counts_and_names_what_was_not_built),
        T_(trace_file_holds_the_tasks_named_lanes_and_escaped_names),
#undef T_
        {NULL, NULL},
    };
    return vr_cu_main("cli", tests);
}
