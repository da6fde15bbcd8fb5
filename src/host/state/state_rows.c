/*
 * state_rows -- the rows of the state database: reading the snapshot, the
 * puts and drops, the sweep; see state.h and state_int.h.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>
#include <vsched/plugin.h>

#include "common/util.h"
#include "state/state_int.h"

static void vr_put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t vr_get_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* deps blob: 16 bytes per dep, little-endian: the source id with bit 63
 * set when covered, then the content hash. */
#define VR_DEP_BYTES 16
#define VR_DEP_COVERED (1ull << 63)

static char *vr_dup_col(sqlite3_stmt *s, int col)
{
    const unsigned char *t = sqlite3_column_text(s, col);
    return t != NULL ? vr_xstrdup((const char *)t) : NULL;
}

static void vr_stamp_cols(sqlite3_stmt *s, int col, vr_stamp *st)
{
    st->mtime_ns = sqlite3_column_int64(s, col);
    st->ctime_ns = sqlite3_column_int64(s, col + 1);
    st->size = sqlite3_column_int64(s, col + 2);
    st->ino = vr__i2u(sqlite3_column_int64(s, col + 3));
}

static void vr_bind_stamp(sqlite3_stmt *s, int col, const vr_stamp *st)
{
    sqlite3_bind_int64(s, col, st->mtime_ns);
    sqlite3_bind_int64(s, col + 1, st->ctime_ns);
    sqlite3_bind_int64(s, col + 2, st->size);
    sqlite3_bind_int64(s, col + 3, vr__u2i(st->ino));
}

static void vr_key_col(sqlite3_stmt *s, int col, uint8_t key[16])
{
    memset(key, 0, 16);
    const void *b = sqlite3_column_blob(s, col);
    if (b != NULL && sqlite3_column_bytes(s, col) == 16)
        memcpy(key, b, 16);
}

/* ---- reading ------------------------------------------------------------ */

/* Run `sql` row by row into `row(ctx, stmt)`; a SQLite status. */
static int vr_each(sqlite3 *db, const char *sql,
                   void (*row)(void *ctx, sqlite3_stmt *s), void *ctx)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        row(ctx, s);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static void vr_row_source(void *ctx, sqlite3_stmt *s)
{
    vr_snapshot *snap = ctx;
    snap->src = vr_xgrow(snap->src, snap->n_src, sizeof *snap->src);
    vr_src_row *r = &snap->src[snap->n_src++];
    r->id = sqlite3_column_int64(s, 0);
    r->path = vr_dup_col(s, 1);
    r->hash = vr__i2u(sqlite3_column_int64(s, 2));
    vr_stamp_cols(s, 3, &r->st);
    r->seen_ns = sqlite3_column_int64(s, 7);
    if (r->path == NULL)
        r->path = vr_xstrdup("");
}

static void vr_row_artifact(void *ctx, sqlite3_stmt *s)
{
    vr_snapshot *snap = ctx;
    snap->art = vr_xgrow(snap->art, snap->n_art, sizeof *snap->art);
    vr_art_row *r = &snap->art[snap->n_art++];
    memset(r, 0, sizeof *r);
    r->source = vr_dup_col(s, 0);
    r->profile = vr_dup_col(s, 1);
    vr_key_col(s, 2, r->key);
    r->config = vr__i2u(sqlite3_column_int64(s, 3));
    r->tool = vr__i2u(sqlite3_column_int64(s, 4));
    const unsigned char *b = sqlite3_column_blob(s, 5);
    size_t nb = (size_t)sqlite3_column_bytes(s, 5) / VR_DEP_BYTES;
    r->deps = vr_xcalloc(nb + 1, sizeof *r->deps);
    for (size_t i = 0; b != NULL && i < nb; i++) {
        uint64_t id = vr_get_le64(b + i * VR_DEP_BYTES);
        r->deps[i].source = (int64_t)(id & ~VR_DEP_COVERED);
        r->deps[i].covered = (id & VR_DEP_COVERED) != 0;
        r->deps[i].hash = vr_get_le64(b + i * VR_DEP_BYTES + 8);
    }
    r->n_deps = b != NULL ? nb : 0;
    r->out_path = vr_dup_col(s, 6);
    vr_stamp_cols(s, 7, &r->out_st);
    r->out_hash = vr__i2u(sqlite3_column_int64(s, 11));
    r->duration_ns = vr__i2u(sqlite3_column_int64(s, 12));
    if (r->source == NULL)
        r->source = vr_xstrdup("");
    if (r->profile == NULL)
        r->profile = vr_xstrdup("");
}

static void vr_row_job(void *ctx, sqlite3_stmt *s)
{
    vr_snapshot *snap = ctx;
    snap->job = vr_xgrow(snap->job, snap->n_job, sizeof *snap->job);
    vr_job_row *r = &snap->job[snap->n_job++];
    memset(r, 0, sizeof *r);
    r->kind = vr_dup_col(s, 0);
    r->name = vr_dup_col(s, 1);
    r->profile = vr_dup_col(s, 2);
    vr_key_col(s, 3, r->key);
    r->out_path = vr_dup_col(s, 4);
    vr_stamp_cols(s, 5, &r->out_st);
    r->out_hash = vr__i2u(sqlite3_column_int64(s, 9));
    r->duration_ns = vr__i2u(sqlite3_column_int64(s, 10));
    if (r->kind == NULL)
        r->kind = vr_xstrdup("");
    if (r->name == NULL)
        r->name = vr_xstrdup("");
    if (r->profile == NULL)
        r->profile = vr_xstrdup("");
}

/* Contract: see state.h. */
void vr_snapshot_free(vr_snapshot *snap)
{
    for (size_t i = 0; i < snap->n_src; i++)
        free(snap->src[i].path);
    for (size_t i = 0; i < snap->n_art; i++) {
        free(snap->art[i].source);
        free(snap->art[i].profile);
        free(snap->art[i].deps);
        free(snap->art[i].out_path);
    }
    for (size_t i = 0; i < snap->n_job; i++) {
        free(snap->job[i].kind);
        free(snap->job[i].name);
        free(snap->job[i].profile);
        free(snap->job[i].out_path);
    }
    free(snap->src);
    free(snap->art);
    free(snap->job);
    memset(snap, 0, sizeof *snap);
}

/* Contract: see state_int.h. */
int vr__state_load(vr_state *st, vr_snapshot *snap, char **why)
{
    memset(snap, 0, sizeof *snap);
    int rc = sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = vr_each(st->db,
                     "SELECT id, path, hash, mtime_ns, ctime_ns, size, ino,"
                     " seen_ns FROM sources",
                     vr_row_source, snap);
    if (rc == SQLITE_OK)
        rc = vr_each(st->db, "SELECT * FROM artifacts", vr_row_artifact, snap);
    if (rc == SQLITE_OK)
        rc = vr_each(st->db, "SELECT * FROM jobs", vr_row_job, snap);
    if (rc != SQLITE_OK)
        *why = vr_strfmt("%s", sqlite3_errmsg(st->db));
    int end = sqlite3_exec(st->db, rc == SQLITE_OK ? "COMMIT" : "ROLLBACK",
                           NULL, NULL, NULL);
    if (rc == SQLITE_OK && end != SQLITE_OK) {
        rc = end;
        *why = vr_strfmt("%s", sqlite3_errmsg(st->db));
    }
    if (rc != SQLITE_OK)
        vr_snapshot_free(snap);
    return rc;
}

/* Step a bound write statement to its end; reset it. */
static int vr_state_step(vr_state *st, sqlite3_stmt *s, const char *what)
{
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        rc = SQLITE_DONE;
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE ? VSCHED_OK : vr__state_fail(st, what);
}

/* Contract: see state.h. */
int vr_state_put_source(vr_state *st, const char *path, uint64_t hash,
                        const vr_stamp *stamp, int64_t seen_ns, int64_t *id)
{
    if (!vr__state_usable(st))
        return VSCHED_EIO;
    sqlite3_stmt *s = st->q[Q_PUT_SOURCE];
    sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, vr__u2i(hash));
    vr_bind_stamp(s, 3, stamp);
    sqlite3_bind_int64(s, 7, seen_ns);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(s, 0);
        rc = sqlite3_step(s);
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE ? VSCHED_OK
                             : vr__state_fail(st, "recording a source");
}

/* Contract: see state.h. */
int vr_state_put_artifact(vr_state *st, const vr_art_row *r)
{
    if (!vr__state_usable(st))
        return VSCHED_EIO;
    unsigned char *blob = vr_xmalloc(r->n_deps * VR_DEP_BYTES + 1);
    for (size_t i = 0; i < r->n_deps; i++) {
        uint64_t id = (uint64_t)r->deps[i].source |
                      (r->deps[i].covered ? VR_DEP_COVERED : 0);
        vr_put_le64(blob + i * VR_DEP_BYTES, id);
        vr_put_le64(blob + i * VR_DEP_BYTES + 8, r->deps[i].hash);
    }
    sqlite3_stmt *s = st->q[Q_PUT_ARTIFACT];
    sqlite3_bind_text(s, 1, r->source, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, r->profile, -1, SQLITE_STATIC);
    sqlite3_bind_blob(s, 3, r->key, 16, SQLITE_STATIC);
    sqlite3_bind_int64(s, 4, vr__u2i(r->config));
    sqlite3_bind_int64(s, 5, vr__u2i(r->tool));
    sqlite3_bind_blob(s, 6, blob, (int)(r->n_deps * VR_DEP_BYTES),
                      SQLITE_STATIC);
    if (r->out_path != NULL)
        sqlite3_bind_text(s, 7, r->out_path, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, 7);
    vr_bind_stamp(s, 8, &r->out_st);
    sqlite3_bind_int64(s, 12, vr__u2i(r->out_hash));
    sqlite3_bind_int64(s, 13, vr__u2i(r->duration_ns));
    int rc = vr_state_step(st, s, "recording an artifact");
    free(blob);
    return rc;
}

/* Contract: see state.h. */
int vr_state_drop_artifact(vr_state *st, const char *source,
                           const char *profile)
{
    if (!vr__state_usable(st))
        return VSCHED_EIO;
    sqlite3_stmt *s = st->q[Q_DROP_ARTIFACT];
    sqlite3_bind_text(s, 1, source, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, profile, -1, SQLITE_STATIC);
    return vr_state_step(st, s, "forgetting an artifact");
}

/* Contract: see state.h. */
int vr_state_put_job(vr_state *st, const vr_job_row *r)
{
    if (!vr__state_usable(st))
        return VSCHED_EIO;
    sqlite3_stmt *s = st->q[Q_PUT_JOB];
    sqlite3_bind_text(s, 1, r->kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, r->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, r->profile, -1, SQLITE_STATIC);
    sqlite3_bind_blob(s, 4, r->key, 16, SQLITE_STATIC);
    if (r->out_path != NULL)
        sqlite3_bind_text(s, 5, r->out_path, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, 5);
    vr_bind_stamp(s, 6, &r->out_st);
    sqlite3_bind_int64(s, 10, vr__u2i(r->out_hash));
    sqlite3_bind_int64(s, 11, vr__u2i(r->duration_ns));
    return vr_state_step(st, s, "recording a job");
}

/* Contract: see state.h. */
int vr_state_drop_job(vr_state *st, const char *kind, const char *name,
                      const char *profile)
{
    if (!vr__state_usable(st))
        return VSCHED_EIO;
    sqlite3_stmt *s = st->q[Q_DROP_JOB];
    sqlite3_bind_text(s, 1, kind, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 3, profile, -1, SQLITE_STATIC);
    return vr_state_step(st, s, "forgetting a job");
}

/* Contract: see state.h. */
int vr_state_drop_source(vr_state *st, int64_t id)
{
    if (!vr__state_usable(st))
        return VSCHED_EIO;
    sqlite3_stmt *s = st->q[Q_DROP_SOURCE];
    sqlite3_bind_int64(s, 1, id);
    return vr_state_step(st, s, "forgetting a source");
}

static int vr_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Contract: see state.h. Two scans (the ids referred to, then the rows),
 * then the deletes: no write runs under an open SELECT. */
int vr_state_sweep(vr_state *st, size_t *dropped)
{
    if (dropped != NULL)
        *dropped = 0;
    if (!vr__state_usable(st))
        return VSCHED_EIO;
    int64_t *used = NULL, *gone = NULL;
    size_t n_used = 0, cap_used = 0, n_gone = 0;
    sqlite3_stmt *s = NULL;
    int rc =
        sqlite3_prepare_v2(st->db, "SELECT deps FROM artifacts", -1, &s, NULL);
    while (rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
        const unsigned char *b = sqlite3_column_blob(s, 0);
        size_t nb = (size_t)sqlite3_column_bytes(s, 0) / VR_DEP_BYTES;
        if (n_used + nb + 1 > cap_used) {
            cap_used = 2 * (n_used + nb + 1);
            used = vr_xrealloc(used, cap_used * sizeof *used);
        }
        for (size_t i = 0; b != NULL && i < nb; i++)
            used[n_used++] =
                (int64_t)(vr_get_le64(b + i * VR_DEP_BYTES) & ~VR_DEP_COVERED);
    }
    sqlite3_finalize(s);
    if (n_used > 0)
        qsort(used, n_used, sizeof *used, vr_cmp_i64);
    if (rc == SQLITE_OK)
        rc =
            sqlite3_prepare_v2(st->db, "SELECT id FROM sources", -1, &s, NULL);
    while (rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0);
        if (n_used == 0 ||
            bsearch(&id, used, n_used, sizeof *used, vr_cmp_i64) == NULL) {
            gone = vr_xgrow(gone, n_gone, sizeof *gone);
            gone[n_gone++] = id;
        }
    }
    if (rc == SQLITE_OK)
        sqlite3_finalize(s);
    int out = rc == SQLITE_OK ? VSCHED_OK : vr__state_fail(st, "sweeping");
    for (size_t i = 0; out == VSCHED_OK && i < n_gone; i++)
        out = vr_state_drop_source(st, gone[i]);
    if (out == VSCHED_OK && dropped != NULL)
        *dropped = n_gone;
    free(used);
    free(gone);
    return out;
}
