/*
 * isolate_int -- what the two host-side files of isolate.h share: the
 * pool (isolate.c: workers, their life and one call's conversation) and
 * the binding's operations (isolate_ops.c: the requests, the answers,
 * the snapshot proxies). Not for other modules.
 */
#ifndef VSCHED_HOST_ISOLATE_INT_H
#define VSCHED_HOST_ISOLATE_INT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "build/isolate.h"
#include "build/isolate_wire.h"

/* The host-side snapshot: what a worker needs to re-create the plugin's
 * own (isolate.h). Immutable once made; freed by snapshot_free. */
typedef struct vr_iso_snap {
    uint8_t key[16]; /* XXH3-128 of name, kind and bytes */
    char *name, *kind;
    char *bytes;
    size_t len;
} vr_iso_snap;

typedef struct vr_worker {
    pid_t pid;
    int fd; /* the host's end of the socketpair */
    struct vr_worker *next;
} vr_worker;

struct vr_isolate {
    const vsched_plugin *desc;
    char *plugin; /* what the worker opens */
    char *exe;    /* this program's path: the workers' argv[0] */
    unsigned timeout_s;
    vr_wbuf hello; /* the HELLO payload, made once */
    vsched_executor_ops ops;
    /* lock: guards idle; a leaf (no I/O, no plugin call and no other
     * lock under it). */
    pthread_mutex_t lock;
    vr_worker *idle;
};

/* One call: the operation and file it is about (for messages), the
 * snapshots a NEED may ask for, and the answer. */
typedef struct vr_call {
    vr_isolate *iso;
    const vsched_ctx *ctx;
    const char *op;   /* "artifact" */
    const char *name; /* the file, or the job's name */
    const vr_iso_snap *const *refs;
    size_t n_refs;
    char *reply; /* RESULT payload (heap), reply_len bytes */
    size_t reply_len;
    vr_worker *w; /* held from a successful vr_call_run to vr_call_done */
} vr_call;

/* Run call c: request `type` with payload req on a worker (idle, or
 * started now), serve its NEED, DIAG, LOAD and REALPATH messages, end at
 * its RESULT (c->reply; the worker stays held in c->w). 0, or a failure
 * already reported through c->ctx->diag (isolate.h: VSCHED_ETOOL,
 * EINVAL, ETIMEDOUT, ECANCELLED without a message, EERR when no worker
 * starts), the worker ended and nothing held. */
int vr_call_run(vr_call *c, uint8_t type, const vr_wbuf *req);
/* After a successful vr_call_run: the worker back to the idle list,
 * c->reply freed. */
void vr_call_done(vr_call *c);

/* A RESULT that does not parse: the worker is broken. Reports it as a
 * malformed answer (`what`), ends the worker, frees c->reply; returns
 * VSCHED_EINVAL. */
int vr_call_malformed(vr_call *c, const char *what);

/* The ops table (isolate_ops.c), for vr_isolate_new. */
void vr_isolate_ops_init(vr_isolate *iso);

#endif
