/*
 * dump -- test hooks over the graph: every unfinished node and what it
 * waits on (for a watchdog to print when a stress run stops making
 * progress), the depth of a ready queue, and a check of the cycle search's invariant -- every edge
 * between Analyses still waiting goes from a smaller order number to a
 * larger one, and none joins two members of one unit.
 */
#include <stdio.h>

#include "internal.h"
#include "unit.h"

static const char *const state_names[] = {"PENDING", "READY",  "RUNNING",
                                          "DONE",    "FAILED", "CANCELLED"};
static const char *const kind_names[] = {"source", "analysis", "artifact",
                                         "job"};

static void dump_one(vsched__node *n, void *arg)
{
    FILE *out = arg;
    if (vsched__node_terminal(n) || !n->in_structure)
        return;
    fprintf(out, "  #%llu %s %s %s deps=%u xdeps=%u ord=%lld waiters=%s%s%s",
            (unsigned long long)n->id, kind_names[n->kind],
            vsched__node_name(n), state_names[n->state], vsched__deps(n),
            vsched__xdeps(n), (long long)vsched__node_ord(n),
            n->waiters != NULL ? "yes" : "no", n->doomed ? " doomed" : "",
            n->task != NULL ? " task" : "");
    if (vsched__node_unit(n) != NULL) {
        const vsched__unit *u = vsched__node_unit(n);
        fprintf(
            out, " unit=%p[state=%d live=%u free=%u held=%u doomed=%u]%s%s",
            (const void *)u, u->state, u->live, u->free, u->held, u->doomed,
            n->unit_free ? " free" : "", n->unit_held ? " held" : "");
    }
    for (uint32_t i = 0; n->kind == VSCHED__K_ANALYSIS && i < n->k.an.ups.n;
         i++)
        if (!vsched__node_terminal(n->k.an.ups.v[i]))
            fprintf(out, " up=#%llu",
                    (unsigned long long)n->k.an.ups.v[i]->id);
    for (uint32_t i = 0; i < n->down.n; i++)
        fprintf(out, " down=#%llu", (unsigned long long)n->down.v[i]->id);
    fputc('\n', out);
}

void vsched__test_dump(vsched *s, FILE *out)
{
    vsched__lock(s);
    fprintf(out, "unfinished nodes (doomed queue %u):\n", s->graph.doomed.n);
    vsched__graph_each(&s->graph, dump_one, out);
    vsched__unlock(s, NULL);
}

size_t vsched__test_ready(vsched *s, int cpu)
{
    vsched__lock(s);
    size_t n =
        vsched__ready_count(&s->graph, cpu ? VSCHED__Q_CPU : VSCHED__Q_IO);
    vsched__unlock(s, NULL);
    return n;
}

/* ---- the topological order of the cycle search (upstream.c) ------------ */

typedef struct order_check {
    FILE *out;
    size_t bad;
} order_check;

static int64_t vertex_ord(const vsched__node *n)
{
    return vsched__node_unit(n) != NULL ? vsched__node_unit(n)->ord
                                        : vsched__node_ord(n);
}

static void check_edges(vsched__node *n, void *arg)
{
    order_check *c = arg;
    if (vsched__node_terminal(n) || n->doomed || n->kind != VSCHED__K_ANALYSIS)
        return;
    for (uint32_t i = 0; i < n->down.n; i++) {
        const vsched__node *d = n->down.v[i];
        if (d->kind != VSCHED__K_ANALYSIS || vsched__node_terminal(d) ||
            d->doomed)
            continue;
        int inside = vsched__node_unit(n) != NULL &&
                     vsched__node_unit(d) == vsched__node_unit(n);
        if (!inside && vertex_ord(n) < vertex_ord(d))
            continue;
        if (c->bad++ < 8)
            fprintf(c->out, "  order: #%llu %s (%lld) -> #%llu %s (%lld)%s\n",
                    (unsigned long long)n->id, vsched__node_name(n),
                    (long long)vertex_ord(n), (unsigned long long)d->id,
                    vsched__node_name(d), (long long)vertex_ord(d),
                    inside ? " inside one unit" : "");
    }
}

size_t vsched__test_order_violations(vsched *s, FILE *out)
{
    order_check c = {out, 0};
    vsched__lock(s);
    vsched__graph_each(&s->graph, check_edges, &c);
    vsched__unlock(s, NULL);
    return c.bad;
}
