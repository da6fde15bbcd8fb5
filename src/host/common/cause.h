/*
 * cause -- the headline of a failure names its cause.
 *
 * A plugin that meets a system error returns VSCHED_EIO (the ABI has no
 * code per errno value) and says the errno's text in a diagnostic
 * ("b.c: cannot open: Permission denied"); the core's message of such a
 * failure then ends with the code's own text, "input/output error",
 * which names no cause. The host's failure text replaces it with the
 * errno text the failing stage's diagnostics end with, in the
 * headline's lower case ("cannot load b.c: permission denied").
 *
 * Thread-safety: none needed; reads the result, returns a new string.
 */
#ifndef VSCHED_HOST_CAUSE_H
#define VSCHED_HOST_CAUSE_H

#include <vsched/vsched.h>

/* The one-line reason of failed result `r` (malloc; never NULL but on
 * exhaustion, which aborts as vr_xstrdup does): r->message (or the
 * status's text), where the status is VSCHED_EIO and an error (else any)
 * diagnostic has a line ending in ": " and an errno text other than
 * EIO's, with "input/output error" at its end replaced by that text
 * (first letter lowered), or the text added in parentheses when the
 * message does not end so. */
char *vr_failure_headline(const vsched_result *r);

#endif
