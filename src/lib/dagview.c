/*
 * dagview -- what callers see of the graph: one node's state (and waiting
 * for its end) and the JSON projection of the whole graph.
 *
 * Both read under the scheduler lock and copy out; the JSON text is built
 * in memory under the lock and written by the caller afterwards, so no
 * I/O ever happens while the lock is held.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *vsched_gate_name(vsched_gate gate)
{
    switch (gate) {
    case VSCHED_GATE_AFTER_SUCCESS: return "after_success";
    case VSCHED_GATE_AFTER_ANY: return "after_any";
    case VSCHED_GATE_AFTER_ADMISSION: return "after_admission";
    }
    return "?";
}

const char *vsched_node_state_name(vsched_node_state st)
{
    static const char *const names[] = {"pending", "ready",  "running",
                                        "done",    "failed", "cancelled"};
    return (unsigned)st < 6 ? names[st] : "?";
}

static vsched_node_state public_state(const vsched__node *n)
{
    switch (n->state) {
    case VSCHED__PENDING:
        /* Parked on a resource, or taken for a start: its gates fired. */
        return (vsched__node_job(n) != NULL && n->k.job->parked) ||
                       (n->admitted && vsched__deps(n) == 0)
                   ? VSCHED_NODE_READY
                   : VSCHED_NODE_PENDING;
    case VSCHED__READY: return VSCHED_NODE_READY;
    case VSCHED__RUNNING: return VSCHED_NODE_RUNNING;
    case VSCHED__DONE: return VSCHED_NODE_DONE;
    case VSCHED__FAILED: return VSCHED_NODE_FAILED;
    default: return VSCHED_NODE_CANCELLED;
    }
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

static const char *output_path(const vsched__node *n)
{
    if (vsched__node_job(n) != NULL)
        return n->k.job->output;
    if (n->kind != VSCHED__K_ARTIFACT || n->file == NULL ||
        n->state != VSCHED__DONE)
        return NULL;
    vsched__slot *sl =
        vsched__file_find_slot(n->file, vsched__node_profile(n));
    return sl != NULL ? sl->path : NULL;
}

static void fill(vsched_node_info *out, const vsched__node *n)
{
    *out = (vsched_node_info){
        .id = n->id,
        .state = public_state(n),
        .status = n->status,
        .priority = n->priority,
        .started_ns = n->started_ns,
        .finished_ns = vsched__finished_ns(n),
        .name = dup_or_null(vsched__node_name(n)),
        .message = dup_or_null(n->why != NULL ? n->why->message : NULL),
        .failed_dep = dup_or_null(n->why != NULL ? n->why->failed_dep : NULL),
        .output = dup_or_null(output_path(n)),
    };
    if (n->why != NULL) {
        out->diags = vsched__diags_copy(n->why->diags, n->why->n_diags);
        out->n_diags = out->diags != NULL ? n->why->n_diags : 0;
    }
}

int vsched_node_get(vsched *s, uint64_t id, vsched_node_info *out)
{
    if (s == NULL || out == NULL)
        return VSCHED_EINVAL;
    memset(out, 0, sizeof *out);
    vsched__lock(s);
    vsched__node *n = vsched__graph_find(&s->graph, id);
    if (n != NULL)
        fill(out, n);
    vsched__unlock(s, NULL);
    return n != NULL ? VSCHED_OK : VSCHED_ENOENT;
}

int vsched_node_wait(vsched *s, uint64_t id, vsched_node_info *out)
{
    if (s == NULL || out == NULL)
        return VSCHED_EINVAL;
    memset(out, 0, sizeof *out);
    atomic_fetch_add(&s->inside, 1);
    vsched__lock(s);
    vsched__node *n;
    int rc = VSCHED_OK;
    vsched__block bl;
    int blocking = 0;
    /* Look the id up each round: the node may be freed meanwhile. Teardown
     * answers every waiter before it frees anything. */
    s->node_waiters++;
    while ((n = vsched__graph_find(&s->graph, id)) != NULL &&
           !vsched__node_terminal(n) && !atomic_load(&s->stopping)) {
        if (!blocking) {
            /* A pool worker gives its place to a stand-in first. */
            vsched__block_begin_locked(&bl, s);
            blocking = 1;
            continue;
        }
        vsched__cond_wait(&s->dag.changed, s, vsched__block_pending(&bl));
    }
    if (n == NULL)
        rc = atomic_load(&s->stopping) ? VSCHED_ESHUTDOWN : VSCHED_ENOENT;
    else if (!vsched__node_terminal(n))
        rc = VSCHED_ESHUTDOWN;
    else
        fill(out, n);
    s->node_waiters--;
    vsched__unlock(s, NULL);
    if (blocking)
        vsched__block_end(&bl);
    atomic_fetch_sub(&s->inside, 1); /* the last touch of s */
    return rc;
}

void vsched_node_info_clear(vsched_node_info *info)
{
    if (info == NULL)
        return;
    free(info->name);
    free(info->message);
    free(info->failed_dep);
    free(info->output);
    vsched__diags_free(info->diags, info->n_diags);
    memset(info, 0, sizeof *info);
}

/* ---- JSON ----------------------------------------------------------------- */

static void json_str(FILE *f, const char *s)
{
    if (s == NULL) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

static const char *kind_name(const vsched__node *n)
{
    static const char *const names[] = {"source", "analysis", "artifact",
                                        "job"};
    return names[n->kind];
}

static void json_job(FILE *f, const vsched__node *n)
{
    const vsched__job *j = vsched__node_job(n);
    fputs(",\"job_kind\":", f);
    json_str(f, j->kind);
    fputs(",\"profile\":", f);
    json_str(f, j->profile);
    fprintf(f, ",\"parent\":%llu,\"resources\":[",
            (unsigned long long)(j->parent != NULL ? j->parent->id : 0));
    for (size_t i = 0; i < j->n_needs; i++) {
        fputs(i ? "," : "", f);
        json_str(f, j->needs[i]->name);
    }
    fputs("],\"deps\":[", f);
    for (size_t i = 0; i < j->n_deps; i++)
        fprintf(f, "%s{\"id\":%llu,\"gate\":\"%s\"}", i ? "," : "",
                (unsigned long long)j->deps[i].up->id,
                vsched_gate_name(j->deps[i].gate));
    fputc(']', f);
}

/* The structural upstream of a file stage: what it waits (or waited) on,
 * as the current nodes of its inputs. */
static void json_upstream(vsched *s, FILE *f, const vsched__node *n)
{
    const vsched__file *fl = n->file;
    int first = 1;
#define ID(x)                                                                 \
    do {                                                                      \
        if ((x) != NULL && (x) != n) {                                        \
            fprintf(f, "%s%llu", first ? "" : ",",                            \
                    (unsigned long long)(x)->id);                             \
            first = 0;                                                        \
        }                                                                     \
    } while (0)
    fputs(",\"upstream\":[", f);
    if (n->kind == VSCHED__K_ARTIFACT) {
        ID(fl->analysis);
    } else if (n->kind == VSCHED__K_ANALYSIS) {
        ID(fl->source);
        for (size_t i = 0; i < vsched__file_n_blockers(fl); i++) {
            vsched__file *b = vsched__file_blocker(fl, i);
            if (b->retired)
                b = vsched__files_find_kept(&s->files, b->name);
            if (b != NULL)
                ID(b->analysis);
        }
    }
#undef ID
    fputc(']', f);
}

static void json_node(vsched *s, FILE *f, const vsched__node *n)
{
    const vsched__outcome *o = n->why;
    fprintf(f, "{\"id\":%llu,\"kind\":\"%s\",\"name\":",
            (unsigned long long)n->id, kind_name(n));
    json_str(f, vsched__node_name(n));
    fprintf(f, ",\"state\":\"%s\",\"priority\":%d,\"status\":%d",
            vsched_node_state_name(public_state(n)), n->priority, n->status);
    fputs(",\"error\":", f);
    json_str(f, o != NULL ? o->message : NULL);
    fputs(",\"failed_dep\":", f);
    json_str(f, o != NULL ? o->failed_dep : NULL);
    fprintf(f, ",\"started_ns\":%llu,\"finished_ns\":%llu",
            (unsigned long long)n->started_ns,
            (unsigned long long)vsched__finished_ns(n));
    if (vsched__node_job(n) != NULL) {
        json_job(f, n);
    } else {
        fputs(",\"profile\":", f);
        json_str(f, vsched__node_profile(n));
        json_upstream(s, f, n);
    }
    fputs(",\"output\":", f);
    json_str(f, output_path(n));
    fputc('}', f);
}

static void collect(vsched__node *n, void *user)
{
    vsched__nodevec *v = user;
    if (vsched__nodevec_push(v, n) != VSCHED_OK)
        abort();
}

static int by_id(const void *a, const void *b)
{
    uint64_t x = (*(vsched__node *const *)a)->id;
    uint64_t y = (*(vsched__node *const *)b)->id;
    return x < y ? -1 : x > y;
}

int vsched_graph_json(vsched *s, char **buf, size_t *len)
{
    if (s == NULL || buf == NULL || len == NULL)
        return VSCHED_EINVAL;
    FILE *f = open_memstream(buf, len);
    if (f == NULL)
        return VSCHED_ENOMEM;
    vsched__lock(s);
    vsched__nodevec all = {0};
    vsched__graph_each(&s->graph, collect, &all);
    if (all.n > 0) /* qsort wants an array, even of none */
        qsort(all.v, all.n, sizeof *all.v, by_id);
    fputs("{\"nodes\":[", f);
    for (uint32_t i = 0; i < all.n; i++) {
        fputs(i ? ",\n" : "\n", f);
        json_node(s, f, all.v[i]);
    }
    fputs("\n]}\n", f);
    vsched__unlock(s, NULL);
    vsched__nodevec_free(&all);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        free(*buf);
        *buf = NULL;
        return VSCHED_ENOMEM;
    }
    return VSCHED_OK;
}
