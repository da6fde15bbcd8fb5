/*
 * test_cause.c -- the headline of a failure (src/host/common/cause.c):
 * "input/output error" replaced by the errno text a diagnostic ends with,
 * and left alone wherever that would not be true.
 */
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "cu.h"
#include "mock_host.h"

/* The headline of a result with `status`, `message` and one diagnostic
 * of `sev` saying `diag` (none when NULL). */
static char *headline(int status, const char *message, vsched_severity sev,
                      const char *diag)
{
    vsched_diag d = {sev, "b.c", 0, diag};
    vsched_result r = {0};
    r.status = status;
    r.message = message;
    r.diags = diag != NULL ? &d : NULL;
    r.n_diags = diag != NULL;
    return vr_failure_headline(&r);
}

#define EXPECT_HEADLINE(status, message, sev, diag, want)                     \
    do {                                                                      \
        char *h_ = headline(status, message, sev, diag);                      \
        EXPECT_STR(h_, want);                                                 \
        free(h_);                                                             \
    } while (0)

static void eio_headline_names_the_errno_its_diagnostic_ends_with(void)
{
    EXPECT_HEADLINE(VSCHED_EIO, "cannot load b.c: input/output error",
                    VSCHED_SEV_ERROR, "cannot open: Permission denied",
                    "cannot load b.c: permission denied");
    EXPECT_HEADLINE(VSCHED_EIO, "cannot build b.c: input/output error",
                    VSCHED_SEV_ERROR,
                    "cc: cannot create a temporary beside /o/b.c.o: No "
                    "space left on device",
                    "cannot build b.c: no space left on device");
}

static void a_cause_on_any_line_of_a_long_diagnostic_is_found(void)
{
    EXPECT_HEADLINE(VSCHED_EIO, "cannot build b.c: input/output error",
                    VSCHED_SEV_ERROR,
                    "first line\ncannot create directory 'out': Read-only "
                    "file system\nlast line",
                    "cannot build b.c: read-only file system");
}

static void a_message_not_ending_in_the_code_text_gets_the_cause_added(void)
{
    EXPECT_HEADLINE(VSCHED_EIO, "cannot read b.c", VSCHED_SEV_ERROR,
                    "cannot open: Permission denied",
                    "cannot read b.c (permission denied)");
    EXPECT_HEADLINE(VSCHED_EIO, NULL, VSCHED_SEV_ERROR,
                    "cannot open: Permission denied", "permission denied");
}

static void without_a_cause_or_for_other_codes_the_message_stays(void)
{
    /* no diagnostic, or one naming no errno */
    EXPECT_HEADLINE(VSCHED_EIO, "cannot load b.c: input/output error",
                    VSCHED_SEV_ERROR, NULL,
                    "cannot load b.c: input/output error");
    EXPECT_HEADLINE(VSCHED_EIO, "cannot load b.c: input/output error",
                    VSCHED_SEV_ERROR, "the disk said no",
                    "cannot load b.c: input/output error");
    /* a real EIO is its own cause */
    EXPECT_HEADLINE(VSCHED_EIO, "cannot load b.c: input/output error",
                    VSCHED_SEV_ERROR, "cannot read: Input/output error",
                    "cannot load b.c: input/output error");
    /* the errno text must end the line, after ": " */
    EXPECT_HEADLINE(VSCHED_EIO, "cannot load b.c: input/output error",
                    VSCHED_SEV_ERROR, "Permission denied is what it said",
                    "cannot load b.c: input/output error");
    /* other statuses keep their message whatever the diagnostics say */
    EXPECT_HEADLINE(VSCHED_ETOOL, "cannot build b.c: external tool failed",
                    VSCHED_SEV_ERROR, "ld: cannot open: Permission denied",
                    "cannot build b.c: external tool failed");
    EXPECT_HEADLINE(VSCHED_ENOENT, NULL, VSCHED_SEV_ERROR, NULL,
                    "no such file");
}

static void an_error_diagnostic_wins_over_a_note(void)
{
    vsched_diag d[2] = {
        {VSCHED_SEV_NOTE, "b.c", 0, "probe: No such file or directory"},
        {VSCHED_SEV_ERROR, "b.c", 0, "cannot open: Permission denied"}};
    vsched_result r = {0};
    r.status = VSCHED_EIO;
    r.message = "cannot load b.c: input/output error";
    r.diags = d;
    r.n_diags = 2;
    char *h = vr_failure_headline(&r);
    EXPECT_STR(h, "cannot load b.c: permission denied");
    free(h);
}

#define T_(name)                                                              \
    {                                                                         \
#name, name                                                           \
    }
static const vr_cu_test tests[] = {
    T_(eio_headline_names_the_errno_its_diagnostic_ends_with),
    T_(a_cause_on_any_line_of_a_long_diagnostic_is_found),
    T_(a_message_not_ending_in_the_code_text_gets_the_cause_added),
    T_(without_a_cause_or_for_other_codes_the_message_stays),
    T_(an_error_diagnostic_wins_over_a_note),
    {NULL, NULL}};

int main(void)
{
    return vr_cu_main("cause", tests);
}
