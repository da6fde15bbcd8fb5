/*
 * graph -- Graphviz dot of files, stages, blockers and jobs; see graph.h.
 */
#include <stdlib.h>
#include <string.h>

#include "build/work.h"
#include "cli/graph.h"
#include "common/cause.h"
#include "common/escape.h"
#include "common/strmap.h"
#include "common/util.h"

/* One file reached: what its Source stage found. */
typedef struct gfile {
    char *name;
    int status;    /* of its Source stage */
    char *message; /* the reason when it failed */
    char **deps, **blockers;
    size_t n_deps, n_blockers;
} gfile;

typedef struct graph {
    vsched *s;
    gfile *files;
    size_t n, cap;
    vr_strmap *index; /* name -> files index */
} graph;

static char **dup_names(const char *const *v, size_t n)
{
    char **d = n ? vr_xcalloc(n, sizeof *d) : NULL;
    for (size_t i = 0; i < n; i++)
        d[i] = vr_xstrdup(v[i]);
    return d;
}

/* The Source stage of files[first + i]. */
static int source_item(void *ctx, size_t i, void *slot, char **msg)
{
    graph *g = ctx;
    gfile *f = slot;
    vsched_request req = {.name = f->name, .stage = VSCHED_STAGE_SOURCE};
    vsched_handle *h = NULL;
    (void)i;
    int rc = vsched_submit_request(g->s, &req, &h);
    if (rc != VSCHED_OK)
        return rc;
    const vsched_result *r = NULL;
    rc = vsched_wait(h, &r);
    if (rc == VSCHED_OK) {
        f->deps = dup_names(r->deps, r->n_deps);
        f->n_deps = r->n_deps;
        f->blockers = dup_names(r->blockers, r->n_blockers);
        f->n_blockers = r->n_blockers;
    } else if (r != NULL && r->message != NULL) {
        *msg = vr_failure_headline(r);
    }
    vsched_handle_release(h);
    return rc;
}

static void source_fail(void *ctx, size_t i, void *slot, int status,
                        const char *msg)
{
    gfile *f = slot;
    (void)ctx;
    (void)i;
    f->status = status;
    free(f->message);
    f->message = vr_xstrdup(msg);
}

/* Index of `name`, added when new. */
static size_t add_file(graph *g, const char *name)
{
    long i = vr_strmap_get(g->index, name);
    if (i >= 0)
        return (size_t)i;
    if (g->n == g->cap) {
        g->cap = g->cap ? g->cap * 2 : 64;
        g->files = vr_xrealloc(g->files, g->cap * sizeof *g->files);
    }
    memset(&g->files[g->n], 0, sizeof g->files[g->n]);
    g->files[g->n].name = vr_xstrdup(name);
    vr_strmap_put(g->index, name, (long)g->n);
    return g->n++;
}

/* Source stages of every file reached, round by round: each round one
 * coordinator batch of the files the last round named. */
static int reach(const vr_build *b, graph *g)
{
    int bad = 0;
    for (size_t done = 0; done < g->n;) {
        size_t from = done, to = g->n;
        vr_coord_policy pol = {
            .span_name = "graph",
            .sched = g->s,
            .slot_size = sizeof(gfile),
            .item = source_item,
            .fail = source_fail,
        };
        /* The slots are the files themselves: no add_file in the batch. */
        bad |= vr_coord_batch(b->coord, &pol, g, to - from, g->files + from) !=
               VSCHED_OK;
        for (size_t i = from; i < to; i++) {
            gfile f = g->files[i]; /* add_file may move the array */
            for (size_t k = 0; k < f.n_deps; k++)
                add_file(g, f.deps[k]);
            for (size_t k = 0; k < f.n_blockers; k++)
                add_file(g, f.blockers[k]);
        }
        done = to;
    }
    return bad;
}

/* The printable form of `s` inside a dot string: '"' and '\' of the
 * escaped name escaped again. */
static void put_dot_text(FILE *out, const char *s)
{
    char *e = vr_escape_name(s);
    for (const char *p = e; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            fputc('\\', out);
        fputc(*p, out);
    }
    free(e);
}

/* `s` as a quoted dot string. */
static void put_dot(FILE *out, const char *s)
{
    fputc('"', out);
    put_dot_text(out, s);
    fputc('"', out);
}

/* "HEAD" a dot line break "NAME", quoted. */
static void put_dot2(FILE *out, const char *head, const char *name)
{
    fputc('"', out);
    put_dot_text(out, head);
    fputs("\\n", out);
    put_dot_text(out, name);
    fputc('"', out);
}

static int has(char *const *v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return 1;
    return 0;
}

static void write_files(FILE *out, const graph *g)
{
    for (size_t i = 0; i < g->n; i++) {
        const gfile *f = &g->files[i];
        fprintf(out, "  f%zu [label=", i);
        put_dot(out, f->name);
        if (f->status != VSCHED_OK) {
            fputs(", color=red, fontcolor=red, tooltip=", out);
            put_dot(out, f->message != NULL ? f->message : "failed");
        }
        fputs("];\n", out);
    }
    for (size_t i = 0; i < g->n; i++) {
        const gfile *f = &g->files[i];
        for (size_t k = 0; k < f->n_blockers; k++)
            fprintf(out, "  f%ld -> f%zu [color=blue];\n",
                    vr_strmap_get(g->index, f->blockers[k]), i);
        for (size_t k = 0; k < f->n_deps; k++)
            if (!has(f->blockers, f->n_blockers, f->deps[k]))
                fprintf(out, "  f%ld -> f%zu [style=dashed];\n",
                        vr_strmap_get(g->index, f->deps[k]), i);
    }
}

/* The Artifact stage of each (input, profile) the run would build, and
 * each target's job: its objects and the libraries it links go into it. */
static void write_stages(FILE *out, const graph *g, const vr_work *w)
{
    for (size_t r = 0; r < w->n_rows; r++) {
        const vr_work_row *row = &w->rows[r];
        long f = vr_strmap_get(g->index, w->inputs[row->input]);
        fprintf(out, "  a%zu [shape=box, label=", r);
        char *l = vr_strfmt("artifact [%s]", row->profile);
        put_dot2(out, l, w->inputs[row->input]);
        free(l);
        fputs("];\n", out);
        if (f >= 0)
            fprintf(out, "  f%ld -> a%zu;\n", f, r);
    }
    for (size_t j = 0; j < w->n_jobs; j++) {
        const vr_work_job *job = &w->jobs[j];
        fprintf(out, "  j%zu [shape=doubleoctagon, label=", j);
        char *l = vr_strfmt("%s %s [%s]", job->kind, job->name, job->profile);
        put_dot(out, l);
        free(l);
        fputs("];\n", out);
        for (size_t k = 0; k < job->n_rows; k++)
            fprintf(out, "  a%zu -> j%zu;\n", job->rows[k], j);
        for (size_t k = 0; k < job->n_libs; k++)
            fprintf(out, "  j%zu -> j%zu [style=bold];\n", job->libs[k], j);
    }
}

static void graph_free(graph *g)
{
    for (size_t i = 0; i < g->n; i++) {
        gfile *f = &g->files[i];
        free(f->name);
        free(f->message);
        vr_build_inputs_free(f->deps, f->n_deps);
        vr_build_inputs_free(f->blockers, f->n_blockers);
    }
    free(g->files);
    vr_strmap_free(g->index);
}

/* Contract: see graph.h. */
int vr_graph_run(const vr_build *b)
{
    vr_work w;
    char *err = NULL;
    if (vr_work_make(&w, b, &err) != VSCHED_OK) {
        fprintf(b->err, "vsched-run: %s\n", err);
        free(err);
        return VR_EXIT_USAGE;
    }
    vr_session ss;
    int status = VR_EXIT_USAGE;
    if (vr_session_open(&ss, b, NULL, NULL) == 0) {
        graph g = {.s = ss.sched, .index = vr_strmap_new(64)};
        for (size_t i = 0; i < w.n_inputs; i++)
            add_file(&g, w.inputs[i]);
        int bad = reach(b, &g);
        fputs("digraph vsched {\n  rankdir=LR;\n  node [fontsize=10];\n",
              b->out);
        write_files(b->out, &g);
        write_stages(b->out, &g, &w);
        fputs("}\n", b->out);
        fflush(b->out);
        status = ferror(b->out) ? VR_EXIT_USAGE
                 : bad          ? VR_EXIT_FAILED
                                : VR_EXIT_OK;
        graph_free(&g);
    }
    vr_session_close(&ss);
    vr_work_free(&w);
    return status;
}
