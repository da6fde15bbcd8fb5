/*
 * progress -- status line and plain progress output; see progress.h.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "common/cause.h"
#include "common/escape.h"
#include "common/util.h"

#define RED "\033[1;31m"
#define YELLOW "\033[1;33m"
#define RESET "\033[0m"

struct vr_progress {
    FILE *out;
    int verbosity;
    int tty;
    int color;
    size_t total;
    /* lock: guards the fields below and all output (leaf). */
    pthread_mutex_t lock;
    size_t done;
    size_t warnings;
    int line_dirty; /* a status line is on screen */
};

vr_progress *vr_progress_new(FILE *out, int verbosity, int tty, int color,
                             size_t total)
{
    vr_progress *p = vr_xcalloc(1, sizeof *p);
    p->out = out;
    p->verbosity = verbosity;
    p->tty = tty;
    p->color = color;
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

/* Contract: see progress.h. */
int vr_progress_use_color(FILE *out, int mode)
{
    if (mode == VR_COLOR_ALWAYS)
        return 1;
    if (mode == VR_COLOR_NEVER)
        return 0;
    const char *no = getenv("NO_COLOR");
    return (no == NULL || no[0] == '\0') && isatty(fileno(out));
}

/* Contract: see progress.h. */
unsigned vr_progress_width(int fd)
{
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *c = getenv("COLUMNS");
    long v = c != NULL ? strtol(c, NULL, 10) : 0;
    return v > 0 && v < 10000 ? (unsigned)v : 80;
}

/* Back from `i` to the start of a UTF-8 sequence. */
static size_t utf8_start(const char *s, size_t i)
{
    while (i > 0 && ((unsigned char)s[i] & 0xc0) == 0x80)
        i--;
    return i;
}

/* Contract: see progress.h. */
void vr_progress_elide(const char *line, unsigned width, char *buf, size_t cap)
{
    size_t len = strlen(line);
    if (cap == 0)
        return;
    if (len <= width || width < 8) {
        size_t n = len < cap - 1 ? len : cap - 1;
        if (width < 8 && n > width)
            n = utf8_start(line, width);
        memcpy(buf, line, n);
        buf[n] = '\0';
        return;
    }
    size_t keep = width - 3, head = keep / 2, tail = keep - head;
    if (keep + 4 > cap)
        head = tail = (cap - 4) / 2;
    head = utf8_start(line, head);
    size_t from = len - tail;
    while (from < len && ((unsigned char)line[from] & 0xc0) == 0x80)
        from++;
    memcpy(buf, line, head);
    memcpy(buf + head, "...", 3);
    memcpy(buf + head + 3, line + from, len - from);
    buf[head + 3 + (len - from)] = '\0';
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

/* The status line on a terminal, one column short of the width (a line
 * that fills it wraps on some terminals): "[done/total] [FAILED ]STAGE "
 * whole and the name elided in the middle to what is left (the whole line
 * when even the prefix does not fit); the FAILED mark coloured after
 * elision (codes take no columns). */
static void status_line(vr_progress *p, const vsched_event *ev, int failed)
{
    char *name = vr_escape_name(ev->name);
    char *head =
        vr_strfmt("[%zu/%zu] %s%s ", p->done, p->total,
                  failed ? "FAILED " : "", vsched_stage_name(ev->stage));
    unsigned width = vr_progress_width(fileno(p->out));
    width = width > 1 ? width - 1 : width;
    size_t hl = strlen(head), cap = hl + strlen(name) + 1;
    char *shown = vr_xmalloc(cap);
    if (hl + 8 <= width) {
        memcpy(shown, head, hl);
        vr_progress_elide(name, width - (unsigned)hl, shown + hl, cap - hl);
    } else {
        char *line = vr_strfmt("%s%s", head, name);
        vr_progress_elide(line, width, shown, cap);
        free(line);
    }
    char *mark = failed && p->color ? strstr(shown, "FAILED ") : NULL;
    fputs("\r\033[K", p->out);
    if (mark != NULL && mark < shown + hl) {
        fprintf(p->out, "%.*s" RED "FAILED" RESET "%s", (int)(mark - shown),
                shown, mark + 6);
    } else {
        fputs(shown, p->out);
    }
    p->line_dirty = 1;
    free(shown);
    free(head);
    free(name);
}

void vr_progress_event(void *user, const vsched_event *ev)
{
    vr_progress *p = user;
    int is_result = ev->stage == VSCHED_STAGE_ARTIFACT;
    /* A stage of content that changed since (--watch) is neither done nor
     * failed: its file is built again at the new generation. */
    if (ev->status == VSCHED_ESUPERSEDED)
        return;
    int failed = ev->status != 0;
    pthread_mutex_lock(&p->lock);
    if (is_result && p->done < p->total)
        p->done++;
    /* Cancelled stages are counted, not listed: the summary says how many
     * were not built. A terminal shows every stage (one line, rewritten);
     * plain output the results, every stage with -v. */
    if (p->verbosity < 0 || ev->status == VSCHED_ECANCELLED ||
        (!p->tty && !is_result && p->verbosity < 1)) {
        pthread_mutex_unlock(&p->lock);
        return;
    }
    if (p->tty) {
        status_line(p, ev, failed);
    } else {
        fprintf(p->out, "[%zu/%zu] %s%s%s%s%s ", p->done, p->total,
                failed && p->color ? RED : "", failed ? "FAILED" : "",
                failed && p->color ? RESET : "", failed ? " " : "",
                vsched_stage_name(ev->stage));
        if (ev->profile != NULL && ev->profile[0] != '\0') {
            vr_put_name(p->out, ev->profile);
            fputc(' ', p->out);
        }
        vr_put_name(p->out, ev->name);
        fputc('\n', p->out);
    }
    fflush(p->out);
    pthread_mutex_unlock(&p->lock);
}

static const char *sev_name(vsched_severity s)
{
    switch (s) {
    case VSCHED_SEV_NOTE: return "note";
    case VSCHED_SEV_WARNING: return "warning";
    default: return "error";
    }
}

/* The diagnostics of r, whole. */
static void print_diags(vr_progress *p, const vsched_result *r)
{
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
        } else {
            /* One line of a plugin's: its name and words escaped. */
            vr_esc ef = {0}, em = {0};
            const char *m = vr_esc_name(&em, msg);
            if (d->file != NULL && d->line > 0)
                fprintf(p->out, "%s:%u: %s: %s\n", vr_esc_name(&ef, d->file),
                        d->line, sev_name(d->severity), m);
            else if (d->file != NULL)
                fprintf(p->out, "%s: %s: %s\n", vr_esc_name(&ef, d->file),
                        sev_name(d->severity), m);
            else
                fprintf(p->out, "%s: %s\n", sev_name(d->severity), m);
            vr_esc_done(&ef);
            vr_esc_done(&em);
        }
    }
}

/* "NAME [PROFILE]" of a result, escaped. */
static void print_what(vr_progress *p, const vsched_result *r)
{
    vr_put_name(p->out, r->name);
    if (r->stage == VSCHED_STAGE_ARTIFACT && r->profile != NULL) {
        fputs(" [", p->out);
        vr_put_name(p->out, r->profile);
        fputc(']', p->out);
    }
}

void vr_progress_failure(vr_progress *p, const vsched_result *r)
{
    pthread_mutex_lock(&p->lock);
    clear_locked(p);
    fputs(p->color ? RED "FAILED" RESET ": " : "FAILED: ", p->out);
    print_what(p, r);
    char *headline = vr_failure_headline(r);
    fprintf(p->out, " (%s): ", vsched_stage_name(r->failed_stage));
    vr_put_name(p->out, headline); /* a plugin's words may repeat a name */
    fputc('\n', p->out);
    free(headline);
    print_diags(p, r);
    fflush(p->out);
    pthread_mutex_unlock(&p->lock);
}

/* Contract: see progress.h. */
void vr_progress_warning(vr_progress *p, const vsched_result *r,
                         const char *plugin)
{
    if (r->n_diags == 0)
        return;
    pthread_mutex_lock(&p->lock);
    p->warnings++;
    if (p->verbosity >= 0) {
        clear_locked(p);
        fputs(p->color ? YELLOW "WARNING" RESET ": " : "WARNING: ", p->out);
        print_what(p, r);
        fprintf(p->out, " (%s)\n", plugin != NULL ? plugin : "executor");
        print_diags(p, r);
        fflush(p->out);
    }
    pthread_mutex_unlock(&p->lock);
}

/* Contract: see progress.h. */
size_t vr_progress_warnings(vr_progress *p)
{
    pthread_mutex_lock(&p->lock);
    size_t n = p->warnings;
    pthread_mutex_unlock(&p->lock);
    return n;
}
