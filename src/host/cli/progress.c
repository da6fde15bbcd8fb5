/*
 * progress -- status line and plain progress output; see progress.h.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli/progress.h"
#include "common/escape.h"
#include "common/util.h"

struct vr_progress {
    FILE *out;
    int verbosity;
    int tty;
    size_t total;
    /* lock: guards done and all output (leaf). */
    pthread_mutex_t lock;
    size_t done;
    int line_dirty; /* a status line is on screen */
};

vr_progress *vr_progress_new(FILE *out, int verbosity, int tty, size_t total)
{
    vr_progress *p = vr_xcalloc(1, sizeof *p);
    p->out = out;
    p->verbosity = verbosity;
    p->tty = tty;
    p->total = total;
    pthread_mutex_init(&p->lock, NULL);
    return p;
}

void vr_progress_free(vr_progress *p)
{
    if (p == NULL)
        return;
    pthread_mutex_destroy(&p->lock);
    free(p);
}

static void clear_locked(vr_progress *p)
{
    if (p->tty && p->line_dirty) {
        fputs("\r\033[K", p->out);
        p->line_dirty = 0;
    }
}

void vr_progress_clear(vr_progress *p)
{
    pthread_mutex_lock(&p->lock);
    clear_locked(p);
    fflush(p->out);
    pthread_mutex_unlock(&p->lock);
}

void vr_progress_event(void *user, const vsched_event *ev)
{
    vr_progress *p = user;
    int is_result = ev->stage == VSCHED_STAGE_ARTIFACT;
    pthread_mutex_lock(&p->lock);
    if (is_result && p->done < p->total)
        p->done++;
    /* Cancelled stages are counted, not listed: the summary says how many
     * were not built. */
    if (p->verbosity < 0 || (!is_result && p->verbosity < 1) ||
        ev->status == VSCHED_ECANCELLED) {
        pthread_mutex_unlock(&p->lock);
        return;
    }
    const char *stage = vsched_stage_name(ev->stage);
    const char *verdict = ev->status == 0 ? "" : "FAILED ";
    vr_esc en = {0}, ep = {0};
    const char *name = vr_esc_name(&en, ev->name);
    if (p->tty) {
        fprintf(p->out, "\r\033[K[%zu/%zu] %s%s %s", p->done, p->total,
                verdict, stage, name);
        p->line_dirty = 1;
    } else if (ev->profile != NULL && ev->profile[0] != '\0') {
        fprintf(p->out, "[%zu/%zu] %s%s %s %s\n", p->done, p->total,
                verdict, stage, vr_esc_name(&ep, ev->profile), name);
    } else {
        fprintf(p->out, "[%zu/%zu] %s%s %s\n", p->done, p->total, verdict,
                stage, name);
    }
    vr_esc_done(&en);
    vr_esc_done(&ep);
    fflush(p->out);
    pthread_mutex_unlock(&p->lock);
}

static const char *sev_name(vsched_severity s)
{
    switch (s) {
    case VSCHED_SEV_NOTE:
        return "note";
    case VSCHED_SEV_WARNING:
        return "warning";
    default:
        return "error";
    }
}

void vr_progress_failure(vr_progress *p, const vsched_result *r)
{
    pthread_mutex_lock(&p->lock);
    clear_locked(p);
    vr_esc e = {0};
    fprintf(p->out, "FAILED: %s", vr_esc_name(&e, r->name));
    if (r->stage == VSCHED_STAGE_ARTIFACT && r->profile != NULL)
        fprintf(p->out, " [%s]", vr_esc_name(&e, r->profile));
    vr_esc_done(&e);
    fprintf(p->out, " (%s): %s\n", vsched_stage_name(r->failed_stage),
            r->message != NULL ? r->message : vsched_strerror(r->status));
    for (size_t i = 0; i < r->n_diags; i++) {
        const vsched_diag *d = &r->diags[i];
        const char *msg = d->message != NULL ? d->message : "";
        size_t len = strlen(msg);
        /* A compiler's output is already "file:line: ..." text: print it
         * as it is. A short diagnostic gets its location. */
        if (strchr(msg, '\n') != NULL && len > 0) {
            fputs(msg, p->out);
            if (msg[len - 1] != '\n')
                fputc('\n', p->out);
        } else if (d->file != NULL && d->line > 0) {
            fprintf(p->out, "%s:%u: %s: %s\n", d->file, d->line,
                    sev_name(d->severity), msg);
        } else if (d->file != NULL) {
            fprintf(p->out, "%s: %s: %s\n", d->file, sev_name(d->severity),
                    msg);
        } else {
            fprintf(p->out, "%s: %s\n", sev_name(d->severity), msg);
        }
    }
    fflush(p->out);
    pthread_mutex_unlock(&p->lock);
}

void vr_progress_summary(vr_progress *p, size_t built, size_t failed,
                         size_t cancelled, size_t current, size_t restored,
                         double seconds)
{
    pthread_mutex_lock(&p->lock);
    clear_locked(p);
    fprintf(p->out, "vsched-run: %zu built, %zu failed", built, failed);
    if (cancelled > 0)
        fprintf(p->out, ", %zu not built", cancelled);
    if (current > 0)
        fprintf(p->out, ", %zu up to date", current);
    if (restored > 0)
        fprintf(p->out, ", %zu from cache", restored);
    fprintf(p->out, " (%.2f s)\n", seconds);
    fflush(p->out);
    pthread_mutex_unlock(&p->lock);
}
