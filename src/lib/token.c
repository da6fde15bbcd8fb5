/*
 * token -- the two handles a caller attaches to many nodes: the CPU
 * concurrency semaphore and the cancellation token.
 *
 * Both are bound to one scheduler and reference counted (the caller's
 * reference plus one per node carrying it; a node drops its reference when
 * it is freed). A semaphore is a handle, never a pre-acquired permit:
 * resource.c takes a permit per node when it starts and gives it back when
 * it settles (terminal, its task returned). A token's flag is an atomic
 * latch; cancelling also walks the active jobs under the scheduler lock
 * (gate.c: vsched__job_cancel_tree).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int vsched_sem_create(vsched *s, unsigned capacity, vsched_sem **out)
{
    if (s == NULL || out == NULL || capacity == 0)
        return VSCHED_EINVAL;
    vsched_sem *sem = calloc(1, sizeof *sem);
    if (sem == NULL)
        return VSCHED_ENOMEM;
    sem->s = s;
    sem->capacity = capacity;
    atomic_init(&sem->refs, 1);
    *out = sem;
    return VSCHED_OK;
}

void vsched_sem_release(vsched_sem *sem)
{
    if (sem != NULL && atomic_fetch_sub(&sem->refs, 1) == 1)
        free(sem);
}

unsigned vsched_sem_in_use(vsched_sem *sem)
{
    if (sem == NULL)
        return 0;
    vsched__lock(sem->s);
    unsigned n = sem->in_use;
    vsched__unlock(sem->s, NULL);
    return n;
}

int vsched_token_create(vsched *s, vsched_token **out)
{
    if (s == NULL || out == NULL)
        return VSCHED_EINVAL;
    vsched_token *t = calloc(1, sizeof *t);
    if (t == NULL)
        return VSCHED_ENOMEM;
    t->s = s;
    atomic_init(&t->cancelled, 0);
    atomic_init(&t->refs, 1);
    *out = t;
    return VSCHED_OK;
}

void vsched_token_release(vsched_token *tok)
{
    if (tok != NULL && atomic_fetch_sub(&tok->refs, 1) == 1) {
        free(tok->reason);
        free(tok);
    }
}

int vsched_token_is_cancelled(const vsched_token *tok)
{
    return tok != NULL && atomic_load(&tok->cancelled);
}

void vsched_token_cancel(vsched_token *tok, const char *reason)
{
    if (tok == NULL)
        return;
    vsched *s = tok->s;
    vsched__pass p = {0};
    vsched__lock(s);
    if (tok->reason == NULL)
        tok->reason = strdup(reason != NULL ? reason : "cancelled");
    atomic_store(&tok->cancelled, 1);
    const char *why = tok->reason != NULL ? tok->reason : "cancelled";
    /* The active jobs carrying it (cancelling may end others: collect
     * first). */
    vsched__nodevec v = {0};
    for (vsched__node *n = s->dag.active; n != NULL; n = n->k.job->next)
        if (n->k.job->token == tok) {
            vsched__node_ref(n);
            if (vsched__nodevec_push(&v, n) != VSCHED_OK)
                abort();
        }
    for (uint32_t i = 0; i < v.n; i++) {
        if (!vsched__node_terminal(v.v[i]))
            vsched__job_cancel_tree(s, v.v[i], why, &p);
        vsched__node_unref(s, v.v[i]);
    }
    vsched__nodevec_free(&v);
    vsched__kick(s); /* what the cancellations released */
    vsched__unlock_run(s, &p);
}
