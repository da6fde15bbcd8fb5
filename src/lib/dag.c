/*
 * dag -- vsched_submit_dag: a sub-DAG inserted into the scheduler's graph
 * in one critical section, and the job graph's per-scheduler state.
 *
 * A submission goes through four steps, and only the last changes
 * anything:
 *
 *   1. check the shape (no lock): kinds, local references, gates, parents
 *      named before their children, no cycle among the new nodes;
 *   2. probe the caller's dedupe hook (no lock) -- DEDUPE_JOINED ends here;
 *   3. prepare (no lock): copies of every string, the job payloads, and the
 *      canonical name of each ARTIFACT spec (through the loader);
 *   4. under the scheduler lock: resolve existing ids, resources and dedupe
 *      keys; check again for cycles now that specs sharing a key collapse
 *      onto one node (A -> C, C -> B with B = A is a cycle); check room in
 *      the ready queue (BACKPRESSURED, or wait, ends here with nothing
 *      changed); then insert every node and edge and start runners -- all in
 *      that one hold, so no observer sees part of the sub-DAG.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void vsched__dag_init(vsched *s)
{
    s->dag.ready_capacity =
        s->opts.ready_capacity != 0 ? s->opts.ready_capacity : 64;
    s->dag.history = calloc(VSCHED__JOB_HISTORY, sizeof *s->dag.history);
    if (s->dag.history == NULL)
        abort();
    pthread_cond_init(&s->dag.changed, NULL);
}

void vsched__dag_fini(vsched *s)
{
    for (size_t i = 0; i < s->dag.n_res; i++) {
        vsched__nodevec_free(&s->dag.res[i]->holders);
        vsched__rq_fini(&s->dag.res[i]->waiting);
        free(s->dag.res[i]->name);
        free(s->dag.res[i]);
    }
    free(s->dag.res);
    vsched__nodevec_free(&s->dag.parked);
    vsched__stage_resources_fini(s);
    vsched__nodevec_free(&s->dag.keyed);
    free(s->dag.history);
    free(s->dag.admit);
    pthread_cond_destroy(&s->dag.changed);
}

/* ---- 1. shape ------------------------------------------------------------ */

static int nonempty(const char *s)
{
    return s != NULL && s[0] != '\0';
}

static int is_local(int64_t ref, size_t n)
{
    return ref >= 0 && (uint64_t)ref < n;
}

static int is_id(int64_t ref)
{
    return ref < 0 && ref != VSCHED_REF_NONE;
}

static int spec_valid(vsched *s, const vsched_node_spec *ns, size_t i,
                      const vsched_node_spec *all)
{
    if (ns->what == VSCHED_SPEC_ARTIFACT)
        return nonempty(ns->name) && nonempty(ns->profile);
    if (ns->what != VSCHED_SPEC_JOB || !nonempty(ns->kind) ||
        !nonempty(ns->name) || (ns->n_inputs > 0 && ns->inputs == NULL) ||
        (ns->n_resources > 0 && ns->resources == NULL))
        return 0;
    for (size_t k = 0; k < ns->n_inputs; k++)
        if (ns->inputs[k] == NULL)
            return 0;
    for (size_t k = 0; k < ns->n_resources; k++)
        if (!nonempty(ns->resources[k]))
            return 0;
    if ((ns->sem != NULL && ns->sem->s != s) ||
        (ns->token != NULL && ns->token->s != s))
        return 0;
    if (ns->parent == VSCHED_REF_NONE || is_id(ns->parent))
        return 1;
    /* A local parent is a job named earlier. */
    return is_local(ns->parent, i) && all[ns->parent].what == VSCHED_SPEC_JOB;
}

/* Kahn's algorithm over local edges mapped through rep[] (rep[i] is the
 * spec node i becomes; SIZE_MAX drops edges into it): VSCHED_ECYCLE if any
 * node remains. */
static int acyclic(const vsched_dag *dag, const size_t *rep)
{
    size_t n = dag->n_nodes;
    size_t *indeg = calloc(n + 1, sizeof *indeg);
    size_t *queue = calloc(n + 1, sizeof *queue);
    int rc = VSCHED_OK;
    if (indeg == NULL || queue == NULL) {
        rc = VSCHED_ENOMEM;
        goto out;
    }
#define FROM(e) (rep != NULL ? rep[(e)->from] : (size_t)(e)->from)
#define TO(e) (rep != NULL ? rep[(e)->to] : (size_t)(e)->to)
    for (size_t e = 0; e < dag->n_edges; e++) {
        const vsched_edge_spec *ed = &dag->edges[e];
        if (!is_local(ed->from, n) || TO(ed) == SIZE_MAX ||
            FROM(ed) == SIZE_MAX)
            continue;
        if (FROM(ed) == TO(ed)) {
            rc = VSCHED_ECYCLE; /* collapsed onto one node */
            goto out;
        }
        indeg[TO(ed)]++;
    }
    size_t head = 0, tail = 0, nodes = 0;
    for (size_t i = 0; i < n; i++)
        if (rep == NULL || rep[i] == i) {
            nodes++;
            if (indeg[i] == 0)
                queue[tail++] = i;
        }
    while (head < tail) {
        size_t u = queue[head++];
        for (size_t e = 0; e < dag->n_edges; e++) {
            const vsched_edge_spec *ed = &dag->edges[e];
            if (is_local(ed->from, n) && FROM(ed) == u && TO(ed) != SIZE_MAX &&
                --indeg[TO(ed)] == 0)
                queue[tail++] = TO(ed);
        }
    }
#undef FROM
#undef TO
    if (tail != nodes)
        rc = VSCHED_ECYCLE;
out:
    free(indeg);
    free(queue);
    return rc;
}

static int shape_valid(vsched *s, const vsched_dag *dag)
{
    size_t n = dag->n_nodes;
    if ((n > 0 && dag->nodes == NULL) ||
        (dag->n_edges > 0 && dag->edges == NULL))
        return VSCHED_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!spec_valid(s, &dag->nodes[i], i, dag->nodes))
            return VSCHED_EINVAL;
    for (size_t e = 0; e < dag->n_edges; e++) {
        const vsched_edge_spec *ed = &dag->edges[e];
        if (!is_local(ed->to, n) ||
            dag->nodes[ed->to].what != VSCHED_SPEC_JOB ||
            !(is_local(ed->from, n) || is_id(ed->from)) ||
            ed->from == ed->to ||
            (ed->gate != VSCHED_GATE_AFTER_SUCCESS &&
             ed->gate != VSCHED_GATE_AFTER_ANY &&
             ed->gate != VSCHED_GATE_AFTER_ADMISSION))
            return VSCHED_EINVAL;
    }
    return acyclic(dag, NULL);
}

/* ---- 3. preparation -------------------------------------------------------- */

/* What one spec becomes; built before the lock. */
typedef struct prep {
    vsched__job *job;     /* JOB: the payload (moved into the node) */
    char *canonical;      /* ARTIFACT: canonical source name */
    vsched__node *node;   /* under the lock: the node it is (or joined) */
    vsched__node *joined; /* under the lock: a live keyed job it reuses */
    size_t same_as;       /* under the lock: earlier spec it collapses
                              onto, or SIZE_MAX */
    int created;          /* under the lock: a new job node */
} prep;

static char **strv_copy(const char *const *v, size_t n)
{
    char **c = calloc(n + 1, sizeof *c);
    for (size_t i = 0; c != NULL && i < n; i++)
        if ((c[i] = strdup(v[i])) == NULL) {
            for (size_t k = 0; k < i; k++)
                free(c[k]);
            free(c);
            return NULL;
        }
    return c;
}

static vsched__job *job_prepare(const vsched_node_spec *ns)
{
    vsched__job *j = calloc(1, sizeof *j);
    if (j == NULL)
        return NULL;
    j->kind = strdup(ns->kind);
    j->name = strdup(ns->name);
    j->profile = ns->profile != NULL ? strdup(ns->profile) : NULL;
    j->key = ns->dedupe_key != NULL ? strdup(ns->dedupe_key) : NULL;
    j->inputs = strv_copy(ns->inputs, ns->n_inputs);
    j->n_inputs = ns->n_inputs;
    size_t nr = ns->n_resources;
    j->needs = calloc(nr + 1, sizeof *j->needs);
    j->grants = calloc(nr + 1, sizeof *j->grants);
    if (j->kind == NULL || j->name == NULL || j->inputs == NULL ||
        j->needs == NULL || j->grants == NULL ||
        (ns->profile != NULL && j->profile == NULL) ||
        (ns->dedupe_key != NULL && j->key == NULL)) {
        vsched__job_payload_free(j);
        return NULL;
    }
    return j;
}

static void preps_free(prep *pr, size_t n)
{
    for (size_t i = 0; pr != NULL && i < n; i++) {
        vsched__job_payload_free(pr[i].job);
        free(pr[i].canonical);
    }
    free(pr);
}

static int prepare(vsched *s, const vsched_dag *dag, prep **out)
{
    prep *pr = calloc(dag->n_nodes + 1, sizeof *pr);
    if (pr == NULL)
        return VSCHED_ENOMEM;
    for (size_t i = 0; i < dag->n_nodes; i++) {
        const vsched_node_spec *ns = &dag->nodes[i];
        int rc = VSCHED_OK;
        if (ns->what == VSCHED_SPEC_JOB) {
            if ((pr[i].job = job_prepare(ns)) == NULL)
                rc = VSCHED_ENOMEM;
        } else {
            rc = vsched__canonical_name(s, ns->name, &pr[i].canonical);
        }
        if (rc != VSCHED_OK) {
            preps_free(pr, dag->n_nodes);
            return rc;
        }
    }
    *out = pr;
    return VSCHED_OK;
}

/* ---- 4. under the lock ------------------------------------------------------ */

static vsched__node *live_keyed(vsched *s, const char *key)
{
    for (size_t i = 0; i < s->dag.keyed.n; i++)
        if (strcmp(s->dag.keyed.v[i]->k.job->key, key) == 0)
            return s->dag.keyed.v[i];
    return NULL;
}

/* A job node an id names, for a parent or an edge. */
static vsched__node *find_id(vsched *s, int64_t ref)
{
    return vsched__graph_find(&s->graph, (uint64_t)-ref);
}

/* Resolve existing ids, resources and dedupe keys; count the new jobs;
 * check the collapsed shape. Changes nothing visible (an unconfigured
 * resource may be created). */
/* The new jobs that can enter the ready queue at insertion: those no
 * edge holds back -- none from another new job, none from an unfinished
 * existing node. (An edge from an ARTIFACT spec is not counted as holding
 * one back: the bound errs on the side of room.) */
static size_t ready_at_insertion(vsched *s, const vsched_dag *dag,
                                 const prep *pr, const size_t *rep)
{
    size_t n = dag->n_nodes, k = 0;
    unsigned char *held = calloc(n + 1, 1);
    if (held == NULL)
        return n; /* as if all could: the bound stays a bound */
    for (size_t e = 0; e < dag->n_edges; e++) {
        const vsched_edge_spec *ed = &dag->edges[e];
        if (!is_local(ed->to, n))
            continue;
        if (is_id(ed->from)) {
            vsched__node *x = find_id(s, ed->from);
            held[ed->to] |= x != NULL && !vsched__node_terminal(x);
        } else if (is_local(ed->from, n)) {
            held[ed->to] |= dag->nodes[ed->from].what == VSCHED_SPEC_JOB;
        }
    }
    for (size_t i = 0; i < n; i++)
        k += dag->nodes[i].what == VSCHED_SPEC_JOB && rep[i] == i &&
             pr[i].joined == NULL && !held[i];
    free(held);
    return k;
}

static int resolve(vsched *s, const vsched_dag *dag, prep *pr, size_t *fresh)
{
    *fresh = 0;
    for (size_t e = 0; e < dag->n_edges; e++)
        if (is_id(dag->edges[e].from) &&
            find_id(s, dag->edges[e].from) == NULL)
            return VSCHED_ENOENT;
    size_t n = dag->n_nodes;
    size_t *rep = calloc(n + 1, sizeof *rep);
    if (rep == NULL)
        return VSCHED_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const vsched_node_spec *ns = &dag->nodes[i];
        pr[i].joined = NULL;
        pr[i].same_as = SIZE_MAX;
        rep[i] = i;
        if (ns->what != VSCHED_SPEC_JOB)
            continue;
        if (is_id(ns->parent)) {
            vsched__node *par = find_id(s, ns->parent);
            if (par == NULL) {
                free(rep);
                return VSCHED_ENOENT;
            }
            if (vsched__node_job(par) == NULL) {
                free(rep);
                return VSCHED_EINVAL;
            }
        }
        vsched__job *j = pr[i].job;
        j->n_needs = 0;
        for (size_t k = 0; k < ns->n_resources; k++) {
            vsched__resource *r = vsched__resource_get(s, ns->resources[k]);
            if (r == NULL) {
                free(rep);
                return VSCHED_ENOMEM;
            }
            int dup = 0;
            for (size_t m = 0; m < j->n_needs; m++)
                dup |= j->needs[m] == r;
            if (!dup)
                j->needs[j->n_needs++] = r;
        }
        if (j->key != NULL) {
            pr[i].joined = live_keyed(s, j->key);
            for (size_t k = 0; k < i && pr[i].joined == NULL; k++)
                if (pr[k].job != NULL && pr[k].same_as == SIZE_MAX &&
                    pr[k].joined == NULL && pr[k].job->key != NULL &&
                    strcmp(pr[k].job->key, j->key) == 0)
                    pr[i].same_as = k;
        }
        if (pr[i].joined != NULL)
            rep[i] = SIZE_MAX; /* an existing node: edges into it drop */
        else if (pr[i].same_as != SIZE_MAX)
            rep[i] = pr[i].same_as;
    }
    int rc = acyclic(dag, rep);
    if (rc == VSCHED_OK)
        *fresh = ready_at_insertion(s, dag, pr, rep);
    free(rep);
    return rc;
}

static vsched__node *ref_node(vsched *s, prep *pr, int64_t ref)
{
    if (ref >= 0)
        return pr[ref].node;
    return find_id(s, ref);
}

/* Create spec i's node (or take the one it is). */
static void insert_node(vsched *s, const vsched_node_spec *ns, prep *pr,
                        size_t i, vsched__pass *p)
{
    if (ns->what == VSCHED_SPEC_ARTIFACT) {
        int created;
        vsched__file *f =
            vsched__files_ensure(&s->files, pr[i].canonical, &created);
        if (f == NULL)
            abort(); /* an insertion is never half done */
        pr[i].node = vsched__ensure_artifact(
            s, f, vsched__intern(s, ns->profile), ns->priority, p);
        return;
    }
    if (pr[i].joined != NULL || pr[i].same_as != SIZE_MAX) {
        pr[i].node =
            pr[i].joined != NULL ? pr[i].joined : pr[pr[i].same_as].node;
        /* The same work, wanted at this priority too. */
        vsched__raise(s, pr[i].node, ns->priority, 0);
        return;
    }
    vsched__node *n = vsched__node_new(&s->graph, VSCHED__K_JOB, ns->priority);
    if (n == NULL)
        abort();
    vsched__job *j = pr[i].job;
    pr[i].job = NULL;
    n->k.job = j;
    if (ns->parent != VSCHED_REF_NONE) {
        j->parent = ref_node(s, pr, ns->parent);
        vsched__node_ref(j->parent);
    }
    if ((j->sem = ns->sem) != NULL)
        atomic_fetch_add(&j->sem->refs, 1);
    if ((j->token = ns->token) != NULL)
        atomic_fetch_add(&j->token->refs, 1);
    vsched__job_adopt(n);
    vsched__job_register(s, n);
    if (j->key != NULL) {
        if (vsched__nodevec_push(&s->dag.keyed, n) != VSCHED_OK)
            abort();
        j->keyed = 1;
    }
    pr[i].node = n;
    pr[i].created = 1;
}

static void insert(vsched *s, const vsched_dag *dag, prep *pr, uint64_t *ids,
                   vsched__pass *p)
{
    for (size_t i = 0; i < dag->n_nodes; i++) {
        insert_node(s, &dag->nodes[i], pr, i, p);
        ids[i] = pr[i].node->id;
    }
    for (size_t e = 0; e < dag->n_edges; e++) {
        const vsched_edge_spec *ed = &dag->edges[e];
        vsched__node *up = ref_node(s, pr, ed->from);
        vsched__node *d = pr[ed->to].node;
        /* Edges into a reused live job are dropped: its deps stand. */
        if (pr[ed->to].joined != NULL || up == d)
            continue;
        vsched__job_link(s, up, d, ed->gate, p);
    }
    for (size_t i = 0; i < dag->n_nodes; i++) {
        vsched__node *n = pr[i].node;
        if (!pr[i].created || vsched__node_terminal(n))
            continue;
        if (vsched_token_is_cancelled(n->k.job->token))
            vsched__job_cancel_tree(s, n,
                                    n->k.job->token->reason != NULL
                                        ? n->k.job->token->reason
                                        : "cancelled",
                                    p);
        else
            vsched__make_ready_if_free(s, n);
    }
}

static int may_block(vsched *s, const vsched_dag *dag)
{
    return dag->block && !vsched__on_driver(s) &&
           vsched_pool_current_kind() < 0;
}

int vsched_submit_dag(vsched *s, const vsched_dag *dag, uint64_t *ids,
                      vsched_admission *admission, void **joiner)
{
    if (s == NULL || dag == NULL || admission == NULL ||
        (dag->n_nodes > 0 && ids == NULL))
        return VSCHED_EINVAL;
    int rc = shape_valid(s, dag);
    if (rc != VSCHED_OK)
        return rc;
    const vsched_dedupe_hook *hook = dag->hook;
    void *j = NULL;
    if (hook != NULL && hook->probe != NULL && dag->key != NULL &&
        hook->probe(hook->user, dag->key, &j)) {
        if (joiner != NULL)
            *joiner = j;
        *admission = VSCHED_DEDUPE_JOINED;
        return VSCHED_OK;
    }
    prep *pr = NULL;
    if ((rc = prepare(s, dag, &pr)) != VSCHED_OK)
        return rc;
    vsched__pass p = {0};
    atomic_fetch_add(&s->inside, 1);
    vsched__lock(s);
    size_t fresh = 0;
    int room = 0;
    vsched__block bl;
    int blocking = 0;
    for (;;) {
        if (atomic_load(&s->stopping)) {
            rc = VSCHED_ESHUTDOWN;
            break;
        }
        if ((rc = resolve(s, dag, pr, &fresh)) != VSCHED_OK)
            break;
        size_t q = s->dag.queued;
        room = q == 0 || q + fresh <= s->dag.ready_capacity;
        if (room)
            break;
        if (!may_block(s, dag)) {
            *admission = VSCHED_BACKPRESSURED; /* nothing changed */
            break;
        }
        if (!blocking) {
            /* A pool worker gives its place to a stand-in first (the
             * room it waits for comes from jobs starting). */
            vsched__block_begin_locked(&bl, s);
            blocking = 1;
            continue;
        }
        /* Existing ids stay valid while we wait, or the next round's
         * resolve says they are gone. */
        s->node_waiters++;
        vsched__cond_wait(&s->dag.changed, s, vsched__block_pending(&bl));
        s->node_waiters--;
    }
    if (rc == VSCHED_OK && room) {
        insert(s, dag, pr, ids, &p);
        atomic_fetch_add(&s->submit_count, 1);
        *admission = VSCHED_ADMITTED;
        vsched__kick(s);
    }
    vsched__unlock_run(s, &p);
    if (blocking)
        vsched__block_end(&bl);
    atomic_fetch_sub(&s->inside, 1);
    preps_free(pr, dag->n_nodes);
    return rc;
}

int vsched_set_resource_capacity(vsched *s, const char *name,
                                 unsigned capacity)
{
    if (s == NULL || !nonempty(name) || capacity == 0)
        return VSCHED_EINVAL;
    vsched__pass p = {0};
    vsched__lock(s);
    vsched__resource *r = vsched__resource_get(s, name);
    if (r != NULL) {
        r->capacity = capacity;
        vsched__job_wake_parked(s); /* more room: parked jobs retry */
        vsched__stage_capacity_changed(s, r);
        vsched__kick(s);
    }
    vsched__unlock_run(s, &p);
    return r != NULL ? VSCHED_OK : VSCHED_ENOMEM;
}

size_t vsched_ready_queue_depth(vsched *s)
{
    vsched__lock(s);
    size_t n = s->dag.queued;
    vsched__unlock(s, NULL);
    return n;
}
