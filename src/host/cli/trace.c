/*
 * trace -- Chrome trace-event JSON of a run; see trace.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/trace.h"
#include "common/json.h"
#include "common/util.h"

enum {
    LANE_CPU = 1,
    LANE_IO = 2,
    LANE_COORD = 3,
    LANE_CACHE = 4,
    LANE_MAIN = 5
};

/* One event, strings owned. */
typedef struct tr_event {
    char *name, *profile, *cat;
    int pid, tid;
    int status, refused, is_job;
    uint64_t start_ns, end_ns;
} tr_event;

struct vr_trace {
    uint64_t t0;
    /* lock: guards ev, n, cap (leaf; taken by the task observer). */
    pthread_mutex_t lock;
    tr_event *ev;
    size_t n, cap;
    int max_tid[LANE_MAIN + 1]; /* highest tid seen per lane */
};

uint64_t vr_trace_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

vr_trace *vr_trace_new(uint64_t t0_ns)
{
    vr_trace *t = vr_xcalloc(1, sizeof *t);
    t->t0 = t0_ns;
    pthread_mutex_init(&t->lock, NULL);
    for (int i = 0; i <= LANE_MAIN; i++)
        t->max_tid[i] = -1;
    return t;
}

void vr_trace_free(vr_trace *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->ev[i].name);
        free(t->ev[i].profile);
        free(t->ev[i].cat);
    }
    free(t->ev);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* Append e (its strings move in). Takes the lock. */
static void push(vr_trace *t, tr_event *e)
{
    pthread_mutex_lock(&t->lock);
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->ev = vr_xrealloc(t->ev, t->cap * sizeof *t->ev);
    }
    t->ev[t->n++] = *e;
    if (e->tid > t->max_tid[e->pid])
        t->max_tid[e->pid] = e->tid;
    pthread_mutex_unlock(&t->lock);
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? vr_xstrdup(s) : NULL;
}

/* Contract: see trace.h. */
void vr_trace_task(void *user, const vsched_task_event *ev)
{
    vr_trace *t = user;
    tr_event e = {
        .name = ev->is_job ? vr_strfmt("%s %s", ev->step ? ev->step : "job",
                                       ev->name ? ev->name : "?")
                           : vr_xstrdup(ev->name != NULL ? ev->name : "?"),
        .profile = dup_or_null(ev->profile),
        .cat = vr_xstrdup(ev->is_job         ? "job"
                          : ev->step != NULL ? ev->step
                                             : vsched_stage_name(ev->stage)),
        .pid = ev->pool == VSCHED_POOL_IO ? LANE_IO : LANE_CPU,
        .tid = ev->worker >= 0 ? ev->worker : 0,
        .status = ev->status,
        .refused = ev->refused,
        .is_job = ev->is_job,
        .start_ns = ev->started_ns,
        .end_ns = ev->finished_ns > ev->started_ns ? ev->finished_ns
                                                   : ev->started_ns,
    };
    push(t, &e);
}

/* Contract: see trace.h. */
void vr_trace_phase(vr_trace *t, const char *name, uint64_t start_ns,
                    uint64_t end_ns)
{
    tr_event e = {.name = vr_xstrdup(name),
                  .cat = vr_xstrdup("run"),
                  .pid = LANE_MAIN,
                  .start_ns = start_ns,
                  .end_ns = end_ns > start_ns ? end_ns : start_ns};
    push(t, &e);
}

/* Microseconds since t0, with the nanoseconds as three decimals. */
static void put_us(FILE *f, uint64_t t0, uint64_t ns)
{
    uint64_t d = ns > t0 ? ns - t0 : 0;
    fprintf(f, "%llu.%03llu", (unsigned long long)(d / 1000),
            (unsigned long long)(d % 1000));
}

static void put_meta(FILE *f, const char *what, int pid, int tid,
                     const char *name, int *first)
{
    fprintf(f,
            "%s\n{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
            "\"args\":{\"name\":",
            *first ? "" : ",", what, pid, tid);
    vr_json_write_string(f, name, strlen(name));
    fputs("}}", f);
    *first = 0;
}

static void put_event(FILE *f, uint64_t t0, const tr_event *e, int *first)
{
    fprintf(f, "%s\n{\"name\":", *first ? "" : ",");
    vr_json_write_string(f, e->name, strlen(e->name));
    fputs(",\"cat\":", f);
    vr_json_write_string(f, e->cat, strlen(e->cat));
    fputs(",\"ph\":\"X\",\"ts\":", f);
    put_us(f, t0, e->start_ns);
    fputs(",\"dur\":", f);
    put_us(f, e->start_ns, e->end_ns);
    fprintf(f, ",\"pid\":%d,\"tid\":%d,\"args\":{", e->pid, e->tid);
    fputs("\"status\":", f);
    const char *st = e->status == 0 ? "ok" : vsched_errname(e->status);
    vr_json_write_string(f, st, strlen(st));
    if (e->profile != NULL) {
        fputs(",\"profile\":", f);
        vr_json_write_string(f, e->profile, strlen(e->profile));
    }
    if (e->refused)
        fputs(",\"refused\":true", f);
    fputs("}}", f);
    *first = 0;
}

/* The coordinator's spans and the restores, as events of the trace. */
static void gather_host(vr_trace *t, vr_coord *coord, vr_bind *bind)
{
    size_t n = coord != NULL ? vr_coord_trace(coord, NULL, 0) : 0;
    vr_coord_span *sp = n ? vr_xcalloc(n, sizeof *sp) : NULL;
    n = n ? vr_coord_trace(coord, sp, n) : 0;
    for (size_t i = 0; i < n; i++) {
        tr_event e = {.name = vr_xstrdup(sp[i].name ? sp[i].name : "batch"),
                      .cat = vr_xstrdup("batch"),
                      .pid = LANE_COORD,
                      .tid = (int)sp[i].depth,
                      .start_ns = sp[i].start_ns,
                      .end_ns = sp[i].end_ns > sp[i].start_ns ? sp[i].end_ns
                                                              : sp[i].start_ns,
                      .status = sp[i].failed ? VSCHED_EERR : 0};
        push(t, &e);
    }
    free(sp);
    if (bind == NULL)
        return;
    size_t tasks = t->n;
    for (size_t i = 0; i < tasks; i++) {
        const tr_event *a = &t->ev[i];
        vr_capture c;
        if (a->pid != LANE_CPU || a->is_job || strcmp(a->cat, "artifact") ||
            !vr_bind_capture(bind, NULL, a->name, a->profile, &c))
            continue;
        if (c.outcome == VR_RESTORED && c.restore_end_ns >= a->start_ns &&
            c.restore_end_ns <= a->end_ns) {
            tr_event e = {.name = vr_xstrdup(a->name),
                          .profile = dup_or_null(a->profile),
                          .cat = vr_xstrdup("restore"),
                          .pid = LANE_CACHE,
                          .tid = a->tid,
                          .start_ns = c.restore_start_ns,
                          .end_ns = c.restore_end_ns};
            push(t, &e);
        }
        vr_capture_clear(&c);
    }
}

static const char *lane_name(int pid)
{
    static const char *const names[] = {
        "", "cpu pool", "io pool", "coordinator", "cache", "vsched-run"};
    return names[pid];
}

static const char *thread_prefix(int pid)
{
    static const char *const names[] = {
        "", "cpu", "io", "batch depth", "restore on cpu", "main"};
    return names[pid];
}

/* Contract: see trace.h. */
int vr_trace_write(vr_trace *t, const char *path, vr_coord *coord,
                   vr_bind *bind, char **msg)
{
    gather_host(t, coord, bind);
    char *tmp = vr_strfmt("%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (f == NULL) {
        *msg = vr_strfmt("--trace %s: cannot write %s: %s", path, tmp,
                         strerror(errno));
        free(tmp);
        return VSCHED_EIO;
    }
    int first = 1;
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", f);
    for (int pid = LANE_CPU; pid <= LANE_MAIN; pid++) {
        if (t->max_tid[pid] < 0)
            continue;
        put_meta(f, "process_name", pid, 0, lane_name(pid), &first);
        for (int tid = 0; tid <= t->max_tid[pid]; tid++) {
            char *n = pid == LANE_MAIN
                          ? vr_xstrdup("main")
                          : vr_strfmt("%s %d", thread_prefix(pid), tid);
            put_meta(f, "thread_name", pid, tid, n, &first);
            free(n);
        }
    }
    for (size_t i = 0; i < t->n; i++)
        put_event(f, t->t0, &t->ev[i], &first);
    fputs("\n]}\n", f);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        *msg = vr_strfmt("--trace %s: cannot write it: %s", path,
                         strerror(errno));
        unlink(tmp);
        free(tmp);
        return VSCHED_EIO;
    }
    free(tmp);
    return VSCHED_OK;
}
