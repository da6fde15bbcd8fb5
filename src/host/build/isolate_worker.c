/*
 * isolate_worker -- the worker side of `[executor] isolate` (isolate.h):
 * `vsched-run --isolate-worker`, serving one host on descriptor 3.
 *
 * It reads HELLO (the configuration and the plugin), opens the plugin
 * through libltdl and creates its instance exactly as the host did,
 * answers READY, then serves one call at a time until end of file. The
 * snapshots it holds are a cache keyed by the host's proxy keys: source()
 * stores the one it makes; a call naming a key it lacks asks the host
 * (NEED) for the file and re-creates it. The cache is emptied (every
 * snapshot freed with snapshot_free) when a call would take it past
 * VR_ISOLATE_CACHE entries, and at the end.
 *
 * Single-threaded: nothing here is shared.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build/isolate.h"
#include "build/isolate_wire.h"
#include "common/util.h"
#include "config/config.h"
#include "config/plugin_host.h"

#define VR_SLOTS (2 * VR_ISOLATE_CACHE) /* open addressing, half full */
#define VR_EXIT_PROTOCOL 3              /* the host broke the protocol */

typedef struct vr_slot {
    uint8_t key[16];
    void *snap; /* NULL: empty */
} vr_slot;

typedef struct vr_wk {
    int fd;
    const vsched_plugin *d;
    const vsched_executor_ops *x;
    void *inst;
    vsched_ctx ctx, quiet; /* quiet: for re-creations (no diagnostics) */
    int cancelled;
    vr_slot *slots;
    size_t n_snaps;
    const uint8_t (*keys)[16]; /* the current call's references */
    const uint8_t *present;
    size_t n_keys;
} vr_wk;

static void vr_wk_die(void)
{
    _exit(VR_EXIT_PROTOCOL);
}

/* Receive the next message that is not CANCEL (a CANCEL sets the flag).
 * End of file or a broken frame ends the worker (the host is gone). */
static char *vr_wk_recv(vr_wk *k, uint8_t *type, size_t *len)
{
    for (;;) {
        char *buf = NULL;
        if (vr_wire_recv(k->fd, 0, type, &buf, len) != 0)
            vr_wk_die();
        if (*type != VR_W_CANCEL)
            return buf;
        k->cancelled = 1;
        free(buf);
    }
}

static void vr_wk_send(vr_wk *k, uint8_t type, const vr_wbuf *w)
{
    if (vr_wire_send(k->fd, type, w) != 0)
        vr_wk_die();
}

/* ---- the context ------------------------------------------------------------- */

static int wk_is_cancelled(const vsched_ctx *ctx)
{
    vr_wk *k = ctx->host;
    struct pollfd p = {.fd = k->fd, .events = POLLIN};
    while (!k->cancelled && poll(&p, 1, 0) > 0) {
        uint8_t t = 0;
        size_t n = 0;
        char *buf = NULL;
        if (vr_wire_recv(k->fd, 0, &t, &buf, &n) != 0 || t != VR_W_CANCEL)
            vr_wk_die(); /* only CANCEL comes unasked */
        free(buf);
        k->cancelled = 1;
    }
    return k->cancelled;
}

static void wk_diag(const vsched_ctx *ctx, vsched_severity sev,
                    const char *file, unsigned line, const char *message)
{
    vr_wk *k = ctx->host;
    vr_wbuf w = {0};
    vr_w_u32(&w, (uint32_t)sev);
    vr_w_str(&w, file);
    vr_w_u32(&w, line);
    vr_w_str(&w, message != NULL ? message : "");
    vr_wk_send(k, VR_W_DIAG, &w);
    vr_w_free(&w);
}

static void wk_quiet_diag(const vsched_ctx *ctx, vsched_severity sev,
                          const char *file, unsigned line, const char *message)
{
    (void)ctx, (void)sev, (void)file, (void)line, (void)message;
}

static void *wk_alloc(const vsched_ctx *ctx, size_t n)
{
    (void)ctx;
    return malloc(n > 0 ? n : 1);
}

static void *wk_realloc(const vsched_ctx *ctx, void *p, size_t n)
{
    (void)ctx;
    return realloc(p, n);
}

static void wk_free(const vsched_ctx *ctx, void *p)
{
    (void)ctx;
    free(p);
}

/* Send `op` with `name` to the host and read its answer, of type `reply`
 * (any other ends the worker), into *r; *rc is its first field, the
 * status. The returned buffer backs *r: the caller frees it. */
static char *wk_ask(vr_wk *k, uint8_t op, uint8_t reply, const char *name,
                    vr_rbuf *r, int *rc)
{
    vr_wbuf w = {0};
    vr_w_str(&w, name);
    vr_wk_send(k, op, &w);
    vr_w_free(&w);
    uint8_t t = 0;
    size_t n = 0;
    char *buf = vr_wk_recv(k, &t, &n);
    *r = (vr_rbuf){buf, n, 0, 0};
    *rc = vr_r_i32(r);
    if (t != reply)
        vr_wk_die();
    return buf;
}

static int wk_load(const vsched_ctx *ctx, const char *name, char **bytes,
                   size_t *len)
{
    vr_rbuf r;
    int rc;
    char *buf = wk_ask(ctx->host, VR_W_LOAD, VR_W_LOADED, name, &r, &rc);
    int present = 0;
    size_t bl = 0;
    const char *b = vr_r_blob(&r, &present, &bl);
    if (r.bad)
        vr_wk_die();
    if (rc == 0) {
        *bytes = present && bl > 0 ? malloc(bl) : NULL;
        if (*bytes != NULL)
            memcpy(*bytes, b, bl);
        *len = *bytes != NULL ? bl : 0;
        if (present && bl > 0 && *bytes == NULL)
            rc = VSCHED_ENOMEM;
    }
    free(buf);
    return rc;
}

static int wk_realpath(const vsched_ctx *ctx, const char *name,
                       char **canonical)
{
    vr_rbuf r;
    int rc;
    char *buf = wk_ask(ctx->host, VR_W_REALPATH, VR_W_REALED, name, &r, &rc);
    const char *s = vr_r_str(&r);
    if (r.bad || (rc == 0 && s == NULL))
        vr_wk_die();
    if (rc == 0 && (*canonical = strdup(s)) == NULL)
        rc = VSCHED_ENOMEM;
    free(buf);
    return rc;
}

static void vr_wk_ctx(vr_wk *k, vsched_ctx *c, int quiet)
{
    memset(c, 0, sizeof *c);
    c->size = sizeof *c;
    c->is_cancelled = wk_is_cancelled;
    c->diag = quiet ? wk_quiet_diag : wk_diag;
    c->alloc = wk_alloc;
    c->realloc = wk_realloc;
    c->free = wk_free;
    c->host = k;
}

/* ---- the snapshot cache -------------------------------------------------------- */

static size_t vr_slot_of(const vr_wk *k, const uint8_t key[16])
{
    uint64_t h;
    memcpy(&h, key, sizeof h);
    size_t i = (size_t)(h % VR_SLOTS);
    while (k->slots[i].snap != NULL && memcmp(k->slots[i].key, key, 16) != 0)
        i = (i + 1) % VR_SLOTS;
    return i;
}

static void vr_cache_flush(vr_wk *k)
{
    for (size_t i = 0; i < VR_SLOTS; i++)
        if (k->slots[i].snap != NULL) {
            k->x->snapshot_free(k->inst, k->slots[i].snap);
            k->slots[i].snap = NULL;
        }
    k->n_snaps = 0;
}

/* Keep snap under key (replacing, and freeing, one already there). The
 * caller made room (vr_make_room): nothing resolved for the call in
 * flight is freed here. */
static void vr_cache_put(vr_wk *k, const uint8_t key[16], void *snap)
{
    size_t i = vr_slot_of(k, key);
    if (k->slots[i].snap != NULL)
        k->x->snapshot_free(k->inst, k->slots[i].snap);
    else
        k->n_snaps++;
    memcpy(k->slots[i].key, key, 16);
    k->slots[i].snap = snap;
}

/* The snapshot of reference #i of the call: cached, or re-created from
 * the bytes the host sends. NULL for an absent reference; *rc set when it
 * cannot be re-created. */
static const void *vr_resolve(vr_wk *k, size_t i, int *rc)
{
    if (!k->present[i])
        return NULL;
    size_t s = vr_slot_of(k, k->keys[i]);
    if (k->slots[s].snap != NULL)
        return k->slots[s].snap;
    vr_wbuf w = {0};
    vr_w_u32(&w, (uint32_t)i);
    vr_wk_send(k, VR_W_NEED, &w);
    vr_w_free(&w);
    uint8_t t = 0;
    size_t n = 0;
    char *buf = vr_wk_recv(k, &t, &n);
    vr_rbuf r = {buf, n, 0, 0};
    const char *name = vr_r_str(&r);
    const char *kind = vr_r_str(&r);
    int present = 0;
    size_t len = 0;
    const char *bytes = vr_r_blob(&r, &present, &len);
    if (t != VR_W_SNAP || r.bad || name == NULL || kind == NULL)
        vr_wk_die();
    vsched_source_out so = {0};
    int st = k->x->source(k->inst, &k->quiet, name, kind, bytes, len, &so);
    free(buf);
    if (st != 0 || so.snapshot == NULL) {
        if (so.snapshot != NULL)
            k->x->snapshot_free(k->inst, so.snapshot);
        *rc = st != 0 ? st : VSCHED_EINVAL;
        return NULL;
    }
    vr_cache_put(k, k->keys[i], so.snapshot);
    return k->slots[vr_slot_of(k, k->keys[i])].snap;
}

/* Room for n more snapshots before a call resolves its references. */
static void vr_make_room(vr_wk *k, size_t n)
{
    if (k->n_snaps + n > VR_ISOLATE_CACHE)
        vr_cache_flush(k);
}

/* ---- the calls --------------------------------------------------------------------- */

/* A call's references: up to VR_ISOLATE_CACHE (a host asking for more is
 * refused: the cache could not hold them at once). */
typedef struct vr_refs {
    uint8_t (*keys)[16];
    uint8_t *present;
    size_t n;
} vr_refs;

static int vr_refs_init(vr_wk *k, vr_refs *f, size_t n)
{
    if (n > VR_ISOLATE_CACHE)
        return -1;
    f->keys = vr_xcalloc(n + 1, 16);
    f->present = vr_xcalloc(n + 1, 1);
    f->n = n;
    k->keys = (const uint8_t(*)[16])f->keys;
    k->present = f->present;
    k->n_keys = n;
    return 0;
}

static void vr_read_ref(vr_rbuf *r, vr_refs *f, size_t i)
{
    f->present[i] = vr_r_u8(r) != 0;
    if (f->present[i])
        vr_r_raw(r, f->keys[i], 16);
}

/* A file's own reference, read before the count of its blockers says
 * how large the table is; it becomes entry 0 (vr_refs_own). */
typedef struct vr_own_ref {
    uint8_t present;
    uint8_t key[16];
} vr_own_ref;

static void vr_read_own(vr_rbuf *r, vr_own_ref *o)
{
    memset(o, 0, sizeof *o);
    o->present = vr_r_u8(r) != 0;
    if (o->present)
        vr_r_raw(r, o->key, 16);
}

static void vr_refs_own(vr_refs *f, const vr_own_ref *o)
{
    memcpy(f->keys[0], o->key, 16);
    f->present[0] = o->present;
}

/* The snapshots of the table: the file's own into *own and, with
 * `blockers`, each of b[0..n-1]'s. 0, or the failure of the first that
 * could not be re-created. */
static int vr_resolve_refs(vr_wk *k, size_t n, int blockers, const void **own,
                           vsched_blocker_in *b)
{
    vr_make_room(k, n + 1);
    int rc = 0;
    *own = vr_resolve(k, 0, &rc);
    for (size_t i = 0; blockers && rc == 0 && i < n; i++)
        b[i].snapshot = vr_resolve(k, i + 1, &rc);
    return rc;
}

static void vr_refs_free(vr_wk *k, vr_refs *f)
{
    free(f->keys);
    free(f->present);
    k->keys = NULL;
    k->present = NULL;
    k->n_keys = 0;
}

static void vr_send_result(vr_wk *k, const vr_wbuf *w)
{
    vr_wk_send(k, VR_W_RESULT, w);
}

static void vr_free_names(char **v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++)
        free(v[i]);
    free(v);
}

/* The answer of artifact() or job(): everything as the plugin left it,
 * then freed (the worker's alloc is malloc). */
static void vr_put_artifact(vr_wbuf *w, int rc, vsched_artifact_out *o)
{
    vr_w_i32(w, rc);
    vr_w_str(w, o->path);
    vr_w_str(w, o->tmp_path);
    vr_w_blob(w, o->bytes, o->len);
    vr_w_u64(w, o->artifact_hash);
    vr_w_names(w, o->deps, o->n_deps);
    free(o->path);
    free(o->tmp_path);
    free(o->bytes);
    if (o->deps != NULL)
        vr_free_names(o->deps, o->n_deps);
}

static void wk_source(vr_wk *k, vr_rbuf *r, vr_wbuf *w)
{
    const char *name = vr_r_str(r);
    const char *kind = vr_r_str(r);
    uint8_t key[16];
    vr_r_raw(r, key, 16);
    int present = 0;
    size_t len = 0;
    const char *bytes = vr_r_blob(r, &present, &len);
    if (r->bad || name == NULL)
        vr_wk_die();
    vsched_source_out so = {0};
    int rc = k->x->source(k->inst, &k->ctx, name, kind, bytes, len, &so);
    if (rc == 0 && so.snapshot != NULL) {
        vr_make_room(k, 1);
        vr_cache_put(k, key, so.snapshot);
    } else if (so.snapshot != NULL) {
        k->x->snapshot_free(k->inst, so.snapshot);
        so.snapshot = NULL;
    }
    vr_w_i32(w, rc);
    vr_w_u64(w, so.content_hash);
    vr_w_u8(w, so.snapshot != NULL);
}

/* The failure of a reference that could not be re-created. */
static int vr_unresolved(vr_wk *k, const char *name, int rc)
{
    wk_diag(&k->ctx, VSCHED_SEV_ERROR, name, 0,
            "the isolated worker could not re-create a snapshot with the "
            "plugin's source() (it failed where it succeeded before)");
    return rc;
}

static void wk_deps(vr_wk *k, vr_rbuf *r, vr_wbuf *w)
{
    const char *name = vr_r_str(r);
    vr_refs f;
    vr_refs_init(k, &f, 1);
    vr_read_ref(r, &f, 0);
    if (r->bad || name == NULL)
        vr_wk_die();
    vr_make_room(k, 1);
    int rc = 0;
    const void *snap = vr_resolve(k, 0, &rc);
    vsched_deps_out o = {0};
    if (rc == 0)
        rc = k->x->extract_deps(k->inst, &k->ctx, name, snap, &o);
    else
        rc = vr_unresolved(k, name, rc);
    vr_w_i32(w, rc);
    vr_w_names(w, o.deps, o.n_deps);
    vr_w_names(w, o.blockers, o.n_blockers);
    vr_free_names(o.deps, o.deps != NULL ? o.n_deps : 0);
    vr_free_names(o.blockers, o.blockers != NULL ? o.n_blockers : 0);
    vr_refs_free(k, &f);
}

static void wk_analysis(vr_wk *k, vr_rbuf *r, vr_wbuf *w)
{
    vsched_analysis_in in = {0};
    in.size = sizeof in;
    in.name = vr_r_str(r);
    vr_own_ref own;
    vr_read_own(r, &own);
    in.content_hash = vr_r_u64(r);
    uint64_t n = vr_r_u64(r);
    vr_refs f;
    if (r->bad || in.name == NULL || n > (r->len - r->off) / 8 ||
        vr_refs_init(k, &f, (size_t)n + 1) != 0)
        vr_wk_die();
    vr_refs_own(&f, &own);
    uint64_t *hashes = vr_xcalloc(n + 1, sizeof *hashes);
    for (uint64_t i = 0; i < n; i++)
        hashes[i] = vr_r_u64(r);
    int blk = vr_r_u8(r) != 0;
    vsched_blocker_in *b = vr_xcalloc(n + 1, sizeof *b);
    for (uint64_t i = 0; blk && i < n; i++) {
        b[i].name = vr_r_str(r);
        vr_read_ref(r, &f, (size_t)i + 1);
    }
    if (r->bad)
        vr_wk_die();
    int rc = vr_resolve_refs(k, (size_t)n, blk, &in.snapshot, b);
    in.blocker_hashes = hashes;
    in.n_blockers = (size_t)n;
    in.blockers = blk ? b : NULL;
    uint64_t h = 0;
    if (rc == 0)
        rc = k->x->analysis(k->inst, &k->ctx, &in, &h);
    else
        rc = vr_unresolved(k, in.name, rc);
    vr_w_i32(w, rc);
    vr_w_u64(w, h);
    free(hashes);
    free(b);
    vr_refs_free(k, &f);
}

static void wk_artifact(vr_wk *k, vr_rbuf *r, vr_wbuf *w)
{
    vsched_artifact_in in = {0};
    in.size = sizeof in;
    in.name = vr_r_str(r);
    in.profile = vr_r_str(r);
    vr_own_ref own;
    vr_read_own(r, &own);
    in.analysis_hash = vr_r_u64(r);
    int blk = vr_r_u8(r) != 0;
    uint64_t n = vr_r_u64(r);
    vr_refs f;
    if (r->bad || in.name == NULL || n > (r->len - r->off) / 5 ||
        vr_refs_init(k, &f, (size_t)n + 1) != 0)
        vr_wk_die();
    vr_refs_own(&f, &own);
    vsched_blocker_in *b = vr_xcalloc(n + 1, sizeof *b);
    for (uint64_t i = 0; i < n; i++) {
        b[i].name = vr_r_str(r);
        vr_read_ref(r, &f, (size_t)i + 1);
    }
    if (r->bad)
        vr_wk_die();
    int rc = vr_resolve_refs(k, (size_t)n, 1, &in.snapshot, b);
    in.blockers = blk ? b : NULL;
    in.n_blockers = (size_t)n;
    vsched_artifact_out o = {0};
    if (rc == 0)
        rc = k->x->artifact(k->inst, &k->ctx, &in, &o);
    else
        rc = vr_unresolved(k, in.name, rc);
    vr_put_artifact(w, rc, &o);
    free(b);
    vr_refs_free(k, &f);
}

static void wk_job(vr_wk *k, vr_rbuf *r, vr_wbuf *w)
{
    vsched_job_in in = {0};
    in.size = sizeof in;
    in.kind = vr_r_str(r);
    in.name = vr_r_str(r);
    in.profile = vr_r_str(r);
    uint64_t n = vr_r_u64(r);
    if (r->bad || n > (r->len - r->off) / 4)
        vr_wk_die();
    const char **inputs = vr_xcalloc(n + 1, sizeof *inputs);
    for (uint64_t i = 0; i < n; i++)
        inputs[i] = vr_r_str(r);
    if (r->bad)
        vr_wk_die();
    in.inputs = inputs;
    in.n_inputs = (size_t)n;
    vsched_artifact_out o = {0};
    int rc = k->x->job != NULL ? k->x->job(k->inst, &k->ctx, &in, &o)
                               : VSCHED_EUNSUPPORTED;
    vr_put_artifact(w, rc, &o);
    free(inputs);
}

/* Serve one call (type, payload); the loader flag comes first. */
static void vr_wk_call(vr_wk *k, uint8_t type, char *buf, size_t len)
{
    vr_rbuf r = {buf, len, 0, 0};
    int loader = vr_r_u8(&r) != 0;
    k->ctx.load = loader ? wk_load : NULL;
    k->ctx.realpath = loader ? wk_realpath : NULL;
    k->quiet.load = k->ctx.load;
    k->quiet.realpath = k->ctx.realpath;
    k->cancelled = 0; /* a CANCEL read before this call was for an older one */
    vr_wbuf w = {0};
    switch (type) {
    case VR_W_SOURCE: wk_source(k, &r, &w); break;
    case VR_W_DEPS: wk_deps(k, &r, &w); break;
    case VR_W_ANALYSIS: wk_analysis(k, &r, &w); break;
    case VR_W_ARTIFACT: wk_artifact(k, &r, &w); break;
    case VR_W_JOB: wk_job(k, &r, &w); break;
    default: vr_wk_die();
    }
    vr_send_result(k, &w);
    vr_w_free(&w);
}

/* ---- start and end ------------------------------------------------------------------- */

/* HELLO: the configuration rebuilt, the plugin opened and created. 0, or
 * a status with *err (heap). */
static int vr_wk_hello(vr_wk *k, vr_config **cfg, vr_plugin **p, char **err)
{
    uint8_t t = 0;
    size_t n = 0;
    char *buf = NULL;
    if (vr_wire_recv(k->fd, 0, &t, &buf, &n) != 0 || t != VR_W_HELLO)
        vr_wk_die();
    vr_rbuf r = {buf, n, 0, 0};
    uint32_t proto = vr_r_u32(&r);
    const char *plugin = vr_r_str(&r);
    const char *path = vr_r_str(&r);
    const char *dir = vr_r_str(&r);
    uint64_t ne = vr_r_u64(&r);
    int rc = VSCHED_EINVAL;
    if (r.bad || proto != VR_WIRE_PROTOCOL || plugin == NULL || path == NULL)
        vr_wk_die();
    rc = vr_config_load_string(cfg, "", path, dir, err);
    for (uint64_t i = 0; rc == 0 && i < ne; i++) {
        const char *sec = vr_r_str(&r), *key = vr_r_str(&r);
        const char *val = vr_r_str(&r);
        if (r.bad || sec == NULL || key == NULL)
            vr_wk_die();
        char *a = vr_strfmt("%s.%s=%s", sec, key, val != NULL ? val : "");
        rc = vr_config_set(*cfg, a, err);
        free(a);
    }
    if (rc == 0)
        rc = vr_plugin_open(p, plugin, *cfg, err);
    if (rc == 0)
        rc = vr_plugin_instantiate(*p, VSCHED_ROLE_EXECUTOR, *cfg, "executor",
                                   &k->inst, err);
    free(buf);
    return rc;
}

/* Contract: see isolate.h. */
int vr_isolate_worker_main(int fd, const void *preloaded)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        fprintf(stderr,
                "vsched-run: %s is internal: vsched-run starts "
                "its workers itself for [executor] isolate = true\n",
                VR_ISOLATE_WORKER_FLAG);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    vr_wk k = {.fd = fd};
    vr_wk_ctx(&k, &k.ctx, 0);
    vr_wk_ctx(&k, &k.quiet, 1);
    vr_config *cfg = NULL;
    vr_plugin *p = NULL;
    char *err = NULL;
    int rc = vr_plugin_host_init(preloaded);
    if (rc != 0)
        err = vr_xstrdup("cannot initialise libltdl");
    else
        rc = vr_wk_hello(&k, &cfg, &p, &err);
    vr_wbuf w = {0};
    vr_w_i32(&w, rc);
    vr_w_str(&w, err);
    vr_wk_send(&k, VR_W_READY, &w);
    vr_w_free(&w);
    free(err);
    if (rc == 0) {
        k.d = vr_plugin_descriptor(p);
        k.x = k.d->executor;
        k.slots = vr_xcalloc(VR_SLOTS, sizeof *k.slots);
        for (;;) {
            uint8_t t = 0;
            size_t n = 0;
            char *buf = NULL;
            int r = vr_wire_recv(fd, 0, &t, &buf, &n);
            if (r != 0)
                break;            /* the host closed: the end */
            if (t != VR_W_CANCEL) /* CANCEL between calls: too late */
                vr_wk_call(&k, t, buf, n);
            free(buf);
        }
        vr_cache_flush(&k);
        free(k.slots);
        vr_plugin_destroy_instance(p, k.inst);
    }
    vr_plugin_close(p);
    vr_config_free(cfg);
    vr_plugin_host_exit();
    close(fd);
    return rc == 0 ? 0 : 1;
}
