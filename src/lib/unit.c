/*
 * unit -- blocker cycles that build as one unit; see unit.h.
 *
 * Counters of a unit, enumerated with their writers:
 *   live    join (+1), leave_one (-1)
 *   free    join (carries the bit), count_free and vsched__unit_note_free
 *           (+1, setting unit_free), vsched__unit_busy and leave_one (-1,
 *           clearing it), release (reset to 0 with every bit)
 *   held    join (carries), vsched__unit_hold (+1), complete and
 *           leave_one (-1)
 *   doomed  join (carries), dissolve (the bit, on nodes that leave at
 *           once), leave_one (-1 while the bit is set)
 *   holds   vsched__unit_leave and the loops of complete and dissolve
 * A unit is freed when live and holds are both zero.
 *
 * Everything here runs with the scheduler lock held.
 */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "internal.h"
#include "unit.h"

static vsched__unit *unit_new(vsched *s)
{
    vsched__unit *u = calloc(1, sizeof *u);
    if (u == NULL)
        abort(); /* a cycle cannot be half joined */
    vsched__graph *g = &s->graph;
    u->next = g->units;
    if (g->units != NULL)
        g->units->prev = u;
    g->units = u;
    g->units_formed++;
    return u;
}

static void unit_free(vsched *s, vsched__unit *u)
{
    vsched__graph *g = &s->graph;
    if (u->prev != NULL)
        u->prev->next = u->next;
    else
        g->units = u->next;
    if (u->next != NULL)
        u->next->prev = u->prev;
    vsched__nodevec members = u->members;
    free(u);
    for (uint32_t i = 0; i < members.n; i++)
        vsched__node_unref(s, members.v[i]);
    vsched__nodevec_free(&members);
}

static void maybe_free(vsched *s, vsched__unit *u)
{
    if (u->live == 0 && u->holds == 0)
        unit_free(s, u);
}

void vsched__unit_unhold(vsched *s, vsched__unit *u)
{
    u->holds--;
    maybe_free(s, u);
}

static void join(vsched__unit *u, vsched__node *x)
{
    if (vsched__nodevec_push(&u->members, x) != VSCHED_OK)
        abort();
    vsched__node_ref(x);
    x->k.an.unit = u;
    u->live++;
    u->free += x->unit_free;
    u->held += x->unit_held;
    u->doomed += x->doomed;
}

/* x leaves u (its bits go with it); its order is the vertex's. */
static void leave_one(vsched__unit *u, vsched__node *x)
{
    x->k.an.unit = NULL;
    u->free -= x->unit_free;
    u->held -= x->unit_held;
    u->doomed -= x->doomed;
    x->unit_free = 0;
    x->unit_held = 0;
    x->k.an.ord = u->ord;
    u->live--;
}

/* Count x free when it is (no release here: see vsched__unit_form). */
static void count_free(vsched__node *x)
{
    if (!x->unit_free && !x->unit_held && x->state == VSCHED__PENDING &&
        vsched__deps(x) == 0) {
        x->unit_free = 1;
        vsched__node_unit(x)->free++;
    }
}

/* ---- forming ---------------------------------------------------------------- */

/* Spend m's edges into members of u (they no longer wait on each other);
 * each released member is recorded in `freed`. */
static void spend_out(vsched *s, vsched__unit *u, vsched__node *m,
                      vsched__nodevec *freed)
{
    vsched__nodevec *v = &m->down;
    uint32_t k = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        vsched__node *d = v->v[i];
        if (vsched__node_unit(d) == u && !vsched__node_terminal(d)) {
            vsched__deps_add(d, -1);
            vsched__xdeps_add(d, -1);
            s->graph.edges--;
            vsched__ups_remove(s, d, m);
            if (vsched__nodevec_push(freed, d) != VSCHED_OK)
                abort();
            vsched__node_unref(s, d); /* the edge's; u holds one */
            continue;
        }
        v->v[k++] = d;
    }
    v->n = k;
}

vsched__unit *vsched__unit_form(vsched *s, vsched__node *const *v, size_t n)
{
    /* The biggest unit among the vertices absorbs the rest. */
    vsched__unit *base = NULL;
    for (size_t i = 0; i < n; i++) {
        vsched__unit *u = vsched__node_unit(v[i]);
        if (u != NULL && (base == NULL || u->live > base->live))
            base = u;
    }
    if (base == NULL) {
        base = unit_new(s);
        base->ord = v[0]->k.an.ord;
    }
    /* Who joins now (marked with a fresh stamp: edges from the members
     * already in base are found through the joiners' blockers). */
    uint32_t stamp = vsched__graph_stamp(&s->graph);
    vsched__nodevec joined = {0};
    for (size_t i = 0; i < n; i++) {
        vsched__unit *u = vsched__node_unit(v[i]);
        if (u == base)
            continue;
        if (u == NULL) {
            v[i]->mark = stamp;
            join(base, v[i]);
            if (vsched__nodevec_push(&joined, v[i]) != VSCHED_OK)
                abort();
            continue;
        }
        /* Merge u into base (its vertex mark was this search's: leave it
         * behind with the unit). */
        u->holds++;
        for (uint32_t k = 0; k < u->members.n; k++) {
            vsched__node *m = u->members.v[k];
            if (vsched__node_unit(m) != u)
                continue;
            uint8_t fr = m->unit_free, he = m->unit_held;
            leave_one(u, m);
            m->unit_free = fr;
            m->unit_held = he;
            m->mark = stamp;
            join(base, m);
            if (vsched__nodevec_push(&joined, m) != VSCHED_OK)
                abort();
        }
        u->state = VSCHED__UNIT_OVER;
        vsched__unit_unhold(s, u);
    }
    /* Edges among the members are spent: out of each joiner, and into
     * each joiner from the members base had. */
    vsched__nodevec freed = {0};
    for (uint32_t i = 0; i < joined.n; i++) {
        vsched__node *m = joined.v[i];
        spend_out(s, base, m, &freed);
        vsched__file *f = m->file;
        for (size_t b = 0; f->facts != NULL && b < vsched__file_n_blockers(f);
             b++) {
            vsched__node *a =
                vsched__blocker_analysis(s, vsched__file_blocker(f, b));
            if (a == NULL || vsched__node_unit(a) != base || a->mark == stamp)
                continue;
            /* Only edges into m: keep the others. */
            vsched__nodevec *dv = &a->down;
            uint32_t k = 0;
            for (uint32_t j = 0; j < dv->n; j++) {
                if (dv->v[j] == m && !vsched__node_terminal(m)) {
                    vsched__deps_add(m, -1);
                    vsched__xdeps_add(m, -1);
                    s->graph.edges--;
                    vsched__ups_remove(s, m, a);
                    vsched__node_unref(s, m);
                    continue;
                }
                dv->v[k++] = dv->v[j];
            }
            dv->n = k;
        }
    }
    for (uint32_t i = 0; i < joined.n; i++)
        count_free(joined.v[i]);
    for (uint32_t i = 0; i < freed.n; i++)
        count_free(freed.v[i]);
    vsched__nodevec_free(&joined);
    vsched__nodevec_free(&freed);
    /* No release here: the node being gated may have blockers still to
     * link; its caller's vsched__make_ready_if_free checks the unit. */
    return base;
}

/* ---- release ------------------------------------------------------------------ */

static int by_name(const void *a, const void *b)
{
    const vsched__node *x = *(vsched__node *const *)a;
    const vsched__node *y = *(vsched__node *const *)b;
    return strcmp(x->file->name, y->file->name);
}

/* The unit hash: the members sorted by name, each with its content hash
 * and, per blocker in order, the blocker's Analysis hash or (inside the
 * unit) its name. */
static uint64_t unit_hash(vsched *s, vsched__unit *u)
{
    vsched__node **m = malloc(u->live * sizeof *m);
    if (m == NULL)
        abort();
    size_t n = 0;
    for (uint32_t i = 0; i < u->members.n; i++)
        if (vsched__node_unit(u->members.v[i]) == u)
            m[n++] = u->members.v[i];
    qsort(m, n, sizeof *m, by_name);
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL || XXH3_64bits_reset(st) != XXH_OK)
        abort();
    static const unsigned char inside = 1, outside = 2;
    for (size_t i = 0; i < n; i++) {
        const vsched__file *f = m[i]->file;
        XXH3_64bits_update(st, f->name, strlen(f->name) + 1);
        uint64_t c = f->facts != NULL ? f->facts->content_hash : 0;
        XXH3_64bits_update(st, &c, sizeof c);
        for (size_t b = 0; f->facts != NULL && b < vsched__file_n_blockers(f);
             b++) {
            vsched__node *a =
                vsched__blocker_analysis(s, vsched__file_blocker(f, b));
            if (a != NULL && vsched__node_unit(a) == u) {
                XXH3_64bits_update(st, &inside, 1);
                XXH3_64bits_update(st, a->file->name,
                                   strlen(a->file->name) + 1);
            } else {
                uint64_t h = a != NULL ? a->file->analysis_hash : 0;
                XXH3_64bits_update(st, &outside, 1);
                XXH3_64bits_update(st, &h, sizeof h);
            }
        }
    }
    free(m);
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}

static void release(vsched *s, vsched__unit *u)
{
    u->hash = unit_hash(s, u);
    u->state = VSCHED__UNIT_RUN;
    u->seq = ++s->graph.unit_seq;
    u->free = 0;
    for (uint32_t i = 0; i < u->members.n; i++) {
        vsched__node *m = u->members.v[i];
        if (vsched__node_unit(m) != u)
            continue;
        m->unit_free = 0;
        vsched__push_ready(s, m);
    }
}

void vsched__unit_note_free(vsched *s, vsched__node *n)
{
    vsched__unit *u = vsched__node_unit(n);
    if (u->state != VSCHED__UNIT_GATHER)
        return;
    count_free(n);
    if (u->free == u->live && u->doomed == 0)
        release(s, u);
}

/* ---- the end -------------------------------------------------------------------- */

void vsched__unit_hold(vsched *s, vsched__node *n, vsched__pass *p)
{
    vsched__unit *u = vsched__node_unit(n);
    n->state = VSCHED__PENDING;
    n->unit_held = 1;
    u->held++;
    if (u->held < u->live)
        return;
    /* The last one: all are DONE together. */
    u->state = VSCHED__UNIT_OVER;
    u->holds++;
    for (uint32_t i = 0; i < u->members.n; i++) {
        vsched__node *m = u->members.v[i];
        if (vsched__node_unit(m) == u && m->unit_held)
            vsched__node_done(s, m, p); /* leaves through finish */
    }
    vsched__unit_unhold(s, u);
}

vsched__unit *vsched__unit_leave(vsched *s, vsched__node *n)
{
    vsched__unit *u = vsched__node_unit(n);
    leave_one(u, n);
    if (u->state == VSCHED__UNIT_OVER) {
        maybe_free(s, u);
        return NULL;
    }
    u->holds++;
    return u;
}

void vsched__unit_dissolve(vsched *s, vsched__unit *u)
{
    u->state = VSCHED__UNIT_OVER;
    u->holds++;
    for (uint32_t i = 0; i < u->members.n; i++) {
        vsched__node *m = u->members.v[i];
        if (vsched__node_unit(m) != u)
            continue;
        leave_one(u, m);
        if (vsched__node_terminal(m) || m->doomed)
            continue;
        /* Not run again as it was: replaced after the operation. A held
         * result is dropped with it; a running one is refused. */
        m->doomed = 1;
        vsched__unready(s, m);
        if (vsched__nodevec_push(&s->graph.doomed, m) != VSCHED_OK)
            abort();
        vsched__node_ref(m);
    }
    vsched__unit_unhold(s, u);
}

void vsched__units_drain(vsched *s, vsched__pass *p)
{
    vsched__nodevec *q = &s->graph.doomed;
    while (q->n > 0) {
        vsched__node *m = q->v[--q->n];
        vsched__replace_analysis(s, m, p);
        vsched__node_unref(s, m);
    }
}

uint64_t vsched__units_formed(const vsched *s)
{
    return s->graph.units_formed;
}

void vsched__units_clear_marks(vsched__graph *g)
{
    for (vsched__unit *u = g->units; u != NULL; u = u->next)
        u->mark = 0;
}

void vsched__units_fini(vsched *s)
{
    vsched__graph *g = &s->graph;
    while (g->units != NULL) {
        vsched__unit *u = g->units;
        g->units = u->next;
        vsched__nodevec_free(&u->members);
        free(u);
    }
    g->doomed.n = 0;
    vsched__nodevec_free(&g->doomed);
}
