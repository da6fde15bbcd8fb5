/*
 * summary -- the failure summary and the closing line; see summary.h.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/summary.h"
#include "common/cause.h"
#include "common/escape.h"
#include "common/util.h"

#define RED "\033[1;31m"
#define RESET "\033[0m"
#define NAMES_SHOWN 3 /* names listed of what was not built */

typedef struct failure {
    char *what;  /* "NAME [PROFILE]" or "link NAME [PROFILE]", escaped */
    char *first; /* first diagnostic line, escaped */
} failure;

struct vr_summary {
    failure *failed;
    size_t n_failed;
    size_t dep_failed;
    char *not_built[NAMES_SHOWN];
    size_t n_not_built;
};

vr_summary *vr_summary_new(void)
{
    return vr_xcalloc(1, sizeof(vr_summary));
}

void vr_summary_free(vr_summary *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n_failed; i++) {
        free(s->failed[i].what);
        free(s->failed[i].first);
    }
    free(s->failed);
    for (size_t i = 0; i < NAMES_SHOWN && i < s->n_not_built; i++)
        free(s->not_built[i]);
    free(s);
}

/* The first line of `text` holding `word` (any line when NULL), heap, or
 * NULL. */
static char *line_with(const char *text, const char *word)
{
    for (const char *p = text; *p != '\0';) {
        size_t n = strcspn(p, "\n");
        int blank = strspn(p, " \t") >= n;
        if (!blank && (word == NULL || memmem(p, n, word, strlen(word)))) {
            char *line = vr_xmalloc(n + 1);
            memcpy(line, p, n);
            line[n] = '\0';
            return line;
        }
        p += n + (p[n] == '\n');
    }
    return NULL;
}

/* Contract: see summary.h. */
char *vr_summary_first_line(const vsched_result *r)
{
    const vsched_diag *d = NULL;
    for (size_t i = 0; i < r->n_diags && d == NULL; i++)
        if (r->diags[i].severity == VSCHED_SEV_ERROR &&
            r->diags[i].message != NULL && r->diags[i].message[0] != '\0')
            d = &r->diags[i];
    for (size_t i = 0; i < r->n_diags && d == NULL; i++)
        if (r->diags[i].message != NULL && r->diags[i].message[0] != '\0')
            d = &r->diags[i];
    char *line = NULL;
    if (d != NULL) {
        line = line_with(d->message, "error");
        if (line == NULL)
            line = line_with(d->message, NULL);
        if (line != NULL && strchr(d->message, '\n') == NULL &&
            d->file != NULL) {
            char *loc = d->line > 0
                            ? vr_strfmt("%s:%u: %s", d->file, d->line, line)
                            : vr_strfmt("%s: %s", d->file, line);
            free(line);
            line = loc;
        }
    }
    if (line == NULL)
        line = vr_failure_headline(r);
    return line;
}

/* Contract: see summary.h. */
void vr_summary_failed(vr_summary *s, const char *label, const char *name,
                       const char *profile, const vsched_result *r)
{
    char *n = vr_escape_name(name), *p = vr_escape_name(profile);
    char *line = vr_summary_first_line(r);
    failure f = {
        vr_strfmt("%s%s%s%s%s%s", label != NULL ? label : "",
                  label != NULL ? " " : "", n, profile ? " [" : "", p,
                  profile ? "]" : ""),
        vr_escape_name(line),
    };
    free(line);
    free(n);
    free(p);
    s->failed = vr_xgrow(s->failed, s->n_failed, sizeof *s->failed);
    s->failed[s->n_failed++] = f;
}

/* Contract: see summary.h. */
void vr_summary_dep_failed(vr_summary *s)
{
    s->dep_failed++;
}

/* Contract: see summary.h. */
void vr_summary_not_built(vr_summary *s, const char *name)
{
    if (s->n_not_built < NAMES_SHOWN)
        s->not_built[s->n_not_built] = vr_escape_name(name);
    s->n_not_built++;
}

static void print_not_built(const vr_summary *s, FILE *out, int why,
                            long keep_going)
{
    if (why == VR_SUMMARY_INTERRUPTED)
        fprintf(out, "vsched-run: interrupted: %zu not built (",
                s->n_not_built);
    else
        fprintf(out,
                "vsched-run: stopped after %ld failure%s (-k %ld): %zu "
                "not built (",
                keep_going, keep_going == 1 ? "" : "s", keep_going,
                s->n_not_built);
    for (size_t i = 0; i < NAMES_SHOWN && i < s->n_not_built; i++)
        fprintf(out, "%s%s", i > 0 ? ", " : "", s->not_built[i]);
    if (s->n_not_built > NAMES_SHOWN)
        fprintf(out, " and %zu more", s->n_not_built - NAMES_SHOWN);
    fputs(why == VR_SUMMARY_INTERRUPTED ? "); what finished is recorded\n"
                                        : ")\n",
          out);
}

/* Contract: see summary.h. */
void vr_summary_print(const vr_summary *s, FILE *out, int color, int why,
                      long keep_going, const vr_summary_counts *c)
{
    const char *on = color ? RED : "", *off = color ? RESET : "";
    for (size_t i = 0; i < s->n_failed; i++)
        fprintf(out, "vsched-run: %sfailed%s: %s: %s\n", on, off,
                s->failed[i].what, s->failed[i].first);
    if (s->n_failed > 0 || s->dep_failed > 0)
        fprintf(out,
                "vsched-run: %s%zu failed%s, %zu not run because a "
                "dependency failed\n",
                s->n_failed ? on : "", s->n_failed, s->n_failed ? off : "",
                s->dep_failed);
    if (s->n_not_built > 0 && why != 0)
        print_not_built(s, out, why, keep_going);
    fprintf(out, "vsched-run: %zu built, %zu failed", c->built, c->failed);
    if (c->cancelled > 0)
        fprintf(out, ", %zu not built", c->cancelled);
    if (c->current > 0)
        fprintf(out, ", %zu up to date", c->current);
    if (c->restored > 0)
        fprintf(out, ", %zu from cache", c->restored);
    if (c->warnings > 0)
        fprintf(out, ", %zu warning%s", c->warnings,
                c->warnings == 1 ? "" : "s");
    fprintf(out, " (%.2f s)\n", c->seconds);
    fflush(out);
}
