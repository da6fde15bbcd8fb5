/*
 * cause -- the headline of a failure names its cause; see cause.h.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cause.h"
#include "common/util.h"

/* errno values beyond this have no text of their own in glibc. */
#define MAX_ERRNO 140

/* 1 when the line s[0..n) ends with ": " and `text`. */
static int ends_with_cause(const char *s, size_t n, const char *text)
{
    size_t t = strlen(text);
    return n >= t + 2 && memcmp(s + n - t, text, t) == 0 &&
           memcmp(s + n - t - 2, ": ", 2) == 0;
}

/* The errno whose text one line of `msg` ends with (not EIO), or 0. */
static int cause_in(const char *msg)
{
    char buf[128];
    for (const char *p = msg; p != NULL && *p != '\0';) {
        size_t n = strcspn(p, "\n");
        for (int e = 1; e < MAX_ERRNO; e++) {
            const char *text = strerror_r(e, buf, sizeof buf);
            if (e != EIO && strncmp(text, "Unknown error", 13) != 0 &&
                ends_with_cause(p, n, text))
                return e;
        }
        p += n + (p[n] == '\n');
    }
    return 0;
}

/* The cause the diagnostics of `r` give: errors first, then any. */
static int cause_of(const vsched_result *r)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < r->n_diags; i++) {
            const vsched_diag *d = &r->diags[i];
            int e = (pass == 1 || d->severity == VSCHED_SEV_ERROR) &&
                            d->message != NULL
                        ? cause_in(d->message)
                        : 0;
            if (e != 0)
                return e;
        }
    return 0;
}

/* Contract: see cause.h. */
char *vr_failure_headline(const vsched_result *r)
{
    const char *msg =
        r->message != NULL ? r->message : vsched_strerror(r->status);
    int e = r->status == VSCHED_EIO ? cause_of(r) : 0;
    if (e == 0)
        return vr_xstrdup(msg);
    char buf[128];
    char *cause = vr_xstrdup(strerror_r(e, buf, sizeof buf));
    cause[0] = (char)tolower((unsigned char)cause[0]);
    const char *eio = vsched_strerror(VSCHED_EIO);
    size_t m = strlen(msg), k = strlen(eio);
    char *line = m >= k && strcmp(msg + m - k, eio) == 0
                     ? vr_strfmt("%.*s%s", (int)(m - k), msg, cause)
                     : vr_strfmt("%s (%s)", msg, cause);
    free(cause);
    return line;
}
