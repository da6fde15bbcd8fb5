/*
 * stage_res -- named resources held by file-stage tasks.
 *
 * vsched_set_stage_resources names the resources every Artifact task of
 * a profile (or of every profile) holds -- "remote" for compiles sent to
 * other machines, say, so the CPU pool can be wider than this machine
 * without running more compiles than the remote hosts take. They are the
 * job graph's resources (one table, one capacity and peak each), but held
 * per task: never for a subtree, never borrowed.
 *
 * The units are RESERVED when the node would become READY, not when a
 * runner takes it: a node whose resources are busy waits in the queue of
 * the first busy one (a ready queue of its own, in the same priority and
 * critical-path order), so no runner ever pops work it cannot start and
 * nothing is re-queued in a loop. When units come back, the waiters of
 * each resource that got them are admitted in order, each reserving all
 * it needs or moving to the queue of its next busy resource -- until the
 * units are gone or the queue is empty, so a free unit never sits beside
 * a waiter.
 *
 * The reservation is a needset (the entry of the table at that moment,
 * reference counted, so a later vsched_set_stage_resources never changes
 * what goes back): held by the node while READY, by its task while it
 * runs, given back when the task returns, when the node ends unstarted,
 * or when it leaves the ready queue to wait for something again.
 *
 * Writers of vsched__resource.in_use for stage work: reserve (+),
 * give_back (-). Everything here runs with the scheduler lock held.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct vsched__needset {
    unsigned refs;
    size_t n;
    vsched__resource *res[];
} vsched__needset;

/* The table: what stage tasks of `profile` (interned; NULL: every
 * profile without an entry) need. */
typedef struct vsched__stage_need {
    const char *profile;
    vsched__needset *set;
} vsched__stage_need;

static void needset_unref(vsched__needset *ns)
{
    if (ns != NULL && --ns->refs == 0)
        free(ns);
}

static vsched__stage_need *find_need(vsched__dag *d, const char *profile)
{
    for (size_t i = 0; i < d->n_stage_needs; i++)
        if (d->stage_needs[i].profile == profile)
            return &d->stage_needs[i];
    return NULL;
}

static vsched__needset *needs_of(vsched *s, const vsched__node *n)
{
    if (n->kind != VSCHED__K_ARTIFACT || s->dag.n_stage_needs == 0)
        return NULL;
    const vsched__stage_need *e = find_need(&s->dag, vsched__node_profile(n));
    if (e == NULL)
        e = find_need(&s->dag, NULL);
    return e != NULL && e->set->n > 0 ? e->set : NULL;
}

/* Reserve every unit of ns, or return the first busy resource. */
static vsched__resource *reserve(vsched__needset *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        if (ns->res[i]->in_use >= ns->res[i]->capacity)
            return ns->res[i];
    for (size_t i = 0; i < ns->n; i++) {
        vsched__resource *r = ns->res[i];
        if (++r->in_use > r->peak)
            r->peak = r->in_use;
    }
    ns->refs++;
    return NULL;
}

static void wait_on_resource(vsched__node *n, vsched__resource *r)
{
    n->res_wait = 1;
    vsched__node_ref(n); /* the entry's */
    vsched__rq_push(&r->waiting, n, n->priority, n->weight_us, ++n->ready_seq);
}

int vsched__stage_admit(vsched *s, vsched__node *n)
{
    if (vsched__node_reserved(n) != NULL || n->res_wait)
        return vsched__node_reserved(n) != NULL;
    vsched__needset *ns = needs_of(s, n);
    if (ns == NULL)
        return 1;
    vsched__resource *busy = reserve(ns);
    if (busy == NULL) {
        n->k.art.reserved = ns;
        return 1;
    }
    wait_on_resource(n, busy);
    return 0;
}

/* Admit the waiters of r while it has units. */
static void admit_waiters(vsched *s, vsched__resource *r)
{
    vsched__entry e;
    while (r->in_use < r->capacity && vsched__rq_pop(&r->waiting, &e)) {
        vsched__node *x = e.node;
        if (!x->res_wait || x->ready_seq != e.seq) {
            vsched__node_unref(s, x); /* stale */
            continue;
        }
        x->res_wait = 0;
        x->ready_seq++;
        if (!vsched__node_terminal(x) && x->state == VSCHED__PENDING)
            vsched__make_ready_if_free(s, x); /* reserves, or waits again */
        vsched__node_unref(s, x);
    }
}

static void give_back(vsched *s, vsched__needset *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        ns->res[i]->in_use--;
    for (size_t i = 0; i < ns->n; i++)
        admit_waiters(s, ns->res[i]);
    needset_unref(ns);
}

void vsched__stage_start(vsched__node *n, vsched__task *t)
{
    t->held = vsched__node_reserved(n);
    if (t->held != NULL)
        n->k.art.reserved = NULL;
}

void vsched__stage_returned(vsched *s, vsched__task *t)
{
    vsched__needset *ns = t->held;
    t->held = NULL;
    if (ns != NULL)
        give_back(s, ns);
}

void vsched__stage_unreserve(vsched *s, vsched__node *n)
{
    vsched__needset *ns = vsched__node_reserved(n);
    n->res_wait = 0; /* a queue entry of it goes stale */
    if (ns == NULL)
        return;
    n->k.art.reserved = NULL;
    give_back(s, ns);
}

void vsched__stage_capacity_changed(vsched *s, vsched__resource *r)
{
    admit_waiters(s, r);
}

void vsched__stage_waiters_clear(vsched *s)
{
    for (size_t i = 0; i < s->dag.n_res; i++) {
        vsched__entry e;
        while (vsched__rq_pop(&s->dag.res[i]->waiting, &e)) {
            e.node->res_wait = 0;
            vsched__node_unref(s, e.node);
        }
    }
}

void vsched__stage_resources_fini(vsched *s)
{
    vsched__dag *d = &s->dag;
    for (size_t i = 0; i < d->n_stage_needs; i++)
        needset_unref(d->stage_needs[i].set);
    free(d->stage_needs);
    d->stage_needs = NULL;
    d->n_stage_needs = 0;
}

/* ---- public ------------------------------------------------------------------ */

int vsched_set_stage_resources(vsched *s, vsched_stage stage,
                               const char *profile, const char *const *names,
                               size_t n)
{
    if (s == NULL || stage != VSCHED_STAGE_ARTIFACT ||
        (n > 0 && names == NULL) || (profile != NULL && profile[0] == '\0'))
        return VSCHED_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (names[i] == NULL || names[i][0] == '\0')
            return VSCHED_EINVAL;
    vsched__needset *ns = malloc(sizeof *ns + n * sizeof ns->res[0]);
    if (ns == NULL)
        return VSCHED_ENOMEM;
    ns->refs = 1;
    ns->n = 0;
    vsched__pass p = {0};
    vsched__lock(s);
    int rc = VSCHED_OK;
    for (size_t i = 0; i < n; i++) {
        vsched__resource *r = vsched__resource_get(s, names[i]);
        if (r == NULL) {
            rc = VSCHED_ENOMEM;
            break;
        }
        int dup = 0;
        for (size_t m = 0; m < ns->n; m++)
            dup |= ns->res[m] == r;
        if (!dup)
            ns->res[ns->n++] = r;
    }
    const char *key = profile != NULL ? vsched__intern(s, profile) : NULL;
    vsched__dag *d = &s->dag;
    vsched__stage_need *e = rc == VSCHED_OK ? find_need(d, key) : NULL;
    if (rc == VSCHED_OK && e == NULL) {
        vsched__stage_need *v =
            realloc(d->stage_needs, (d->n_stage_needs + 1) * sizeof *v);
        if (v == NULL) {
            rc = VSCHED_ENOMEM;
        } else {
            d->stage_needs = v;
            e = &v[d->n_stage_needs++];
            *e = (vsched__stage_need){key, NULL};
        }
    }
    if (rc == VSCHED_OK) {
        needset_unref(e->set);
        e->set = ns; /* nodes that reserved keep the set they reserved */
        ns = NULL;
    }
    vsched__unlock_run(s, &p);
    needset_unref(ns);
    return rc;
}

int vsched_resource_info(vsched *s, const char *name,
                         vsched_resource_stats *out)
{
    if (s == NULL || name == NULL || out == NULL)
        return VSCHED_EINVAL;
    int rc = VSCHED_ENOENT;
    vsched__lock(s);
    for (size_t i = 0; i < s->dag.n_res; i++) {
        const vsched__resource *r = s->dag.res[i];
        if (strcmp(r->name, name) == 0) {
            *out = (vsched_resource_stats){r->capacity, r->in_use, r->peak};
            rc = VSCHED_OK;
            break;
        }
    }
    vsched__unlock(s, NULL);
    return rc;
}

size_t vsched_resource_names(vsched *s, const char **names, size_t cap)
{
    if (s == NULL)
        return 0;
    vsched__lock(s);
    size_t n = s->dag.n_res;
    for (size_t i = 0; i < n && i < cap && names != NULL; i++)
        names[i] = s->dag.res[i]->name;
    vsched__unlock(s, NULL);
    return n;
}
