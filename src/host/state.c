/*
 * state -- the SQLite state database; see state.h.
 *
 * All SQL lives here, as prepared statements made once at open. A
 * statement that cannot be prepared at open means the tables are not the
 * ones this version writes: the database is treated as foreign.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>
#include <vsched/plugin.h>

#include "lock.h"
#include "state.h"
#include "util.h"

/* "vsch": says the file is ours, whatever its user_version. */
#define VR_STATE_APP_ID 0x76736368

static const char vr_schema_sql[] =
    "CREATE TABLE sources(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,"
    " hash INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,"
    " ctime_ns INTEGER NOT NULL, size INTEGER NOT NULL,"
    " ino INTEGER NOT NULL, seen_ns INTEGER NOT NULL);"
    "CREATE TABLE artifacts(source TEXT NOT NULL, profile TEXT NOT NULL,"
    " key BLOB NOT NULL, config INTEGER NOT NULL, tool INTEGER NOT NULL,"
    " deps BLOB NOT NULL, out_path TEXT, out_mtime_ns INTEGER NOT NULL,"
    " out_ctime_ns INTEGER NOT NULL, out_size INTEGER NOT NULL,"
    " out_ino INTEGER NOT NULL, out_hash INTEGER NOT NULL,"
    " duration_ns INTEGER NOT NULL, PRIMARY KEY(source, profile));"
    "CREATE TABLE jobs(kind TEXT NOT NULL, name TEXT NOT NULL,"
    " profile TEXT NOT NULL, key BLOB NOT NULL, out_path TEXT,"
    " out_mtime_ns INTEGER NOT NULL, out_ctime_ns INTEGER NOT NULL,"
    " out_size INTEGER NOT NULL, out_ino INTEGER NOT NULL,"
    " out_hash INTEGER NOT NULL, duration_ns INTEGER NOT NULL,"
    " PRIMARY KEY(kind, name, profile));";

enum {
    Q_PUT_SOURCE,
    Q_PUT_ARTIFACT,
    Q_DROP_ARTIFACT,
    Q_PUT_JOB,
    Q_DROP_JOB,
    Q_DROP_SOURCE,
    Q_N
};

static const char *const vr_queries[Q_N] = {
    "INSERT INTO sources(path, hash, mtime_ns, ctime_ns, size, ino, seen_ns)"
    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(path) DO UPDATE SET"
    " hash = ?2, mtime_ns = ?3, ctime_ns = ?4, size = ?5, ino = ?6,"
    " seen_ns = ?7 RETURNING id",
    "INSERT OR REPLACE INTO artifacts VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
    " ?9, ?10, ?11, ?12, ?13)",
    "DELETE FROM artifacts WHERE source = ?1 AND profile = ?2",
    "INSERT OR REPLACE INTO jobs VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
    " ?10, ?11)",
    "DELETE FROM jobs WHERE kind = ?1 AND name = ?2 AND profile = ?3",
    "DELETE FROM sources WHERE id = ?1",
};

struct vr_state {
    sqlite3 *db;         /* NULL: read-only run without a database */
    char *path;          /* STATE_DIR/state.db */
    FILE *err;           /* where the one corruption message goes */
    unsigned flags;
    int broken;          /* a write failed: no more writes, move aside */
    int in_txn;
    sqlite3_stmt *q[Q_N];
};

/* ---- small helpers ------------------------------------------------------ */

static int vr_is_corruption(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ||
           rc == SQLITE_FORMAT || rc == SQLITE_SCHEMA;
}

/* Report the first failed write, then refuse writes. */
static int vr_state_fail(vr_state *st, const char *what)
{
    if (!st->broken && st->err != NULL)
        fprintf(st->err,
                "vsched-run: %s: %s failed: %s; this run's records are not "
                "kept (outputs are fine; the next run rebuilds what it "
                "cannot prove current)\n",
                st->path, what, sqlite3_errmsg(st->db));
    st->broken = 1;
    return VSCHED_EIO;
}

static int64_t vr_u2i(uint64_t v)
{
    int64_t i;
    memcpy(&i, &v, sizeof i);
    return i;
}

static uint64_t vr_i2u(int64_t v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

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
    st->ino = vr_i2u(sqlite3_column_int64(s, col + 3));
}

static void vr_bind_stamp(sqlite3_stmt *s, int col, const vr_stamp *st)
{
    sqlite3_bind_int64(s, col, st->mtime_ns);
    sqlite3_bind_int64(s, col + 1, st->ctime_ns);
    sqlite3_bind_int64(s, col + 2, st->size);
    sqlite3_bind_int64(s, col + 3, vr_u2i(st->ino));
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
    snap->src = vr_xrealloc(snap->src, (snap->n_src + 1) * sizeof *snap->src);
    vr_src_row *r = &snap->src[snap->n_src++];
    r->id = sqlite3_column_int64(s, 0);
    r->path = vr_dup_col(s, 1);
    r->hash = vr_i2u(sqlite3_column_int64(s, 2));
    vr_stamp_cols(s, 3, &r->st);
    r->seen_ns = sqlite3_column_int64(s, 7);
    if (r->path == NULL)
        r->path = vr_xstrdup("");
}

static void vr_row_artifact(void *ctx, sqlite3_stmt *s)
{
    vr_snapshot *snap = ctx;
    snap->art = vr_xrealloc(snap->art, (snap->n_art + 1) * sizeof *snap->art);
    vr_art_row *r = &snap->art[snap->n_art++];
    memset(r, 0, sizeof *r);
    r->source = vr_dup_col(s, 0);
    r->profile = vr_dup_col(s, 1);
    vr_key_col(s, 2, r->key);
    r->config = vr_i2u(sqlite3_column_int64(s, 3));
    r->tool = vr_i2u(sqlite3_column_int64(s, 4));
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
    r->out_hash = vr_i2u(sqlite3_column_int64(s, 11));
    r->duration_ns = vr_i2u(sqlite3_column_int64(s, 12));
    if (r->source == NULL)
        r->source = vr_xstrdup("");
    if (r->profile == NULL)
        r->profile = vr_xstrdup("");
}

static void vr_row_job(void *ctx, sqlite3_stmt *s)
{
    vr_snapshot *snap = ctx;
    snap->job = vr_xrealloc(snap->job, (snap->n_job + 1) * sizeof *snap->job);
    vr_job_row *r = &snap->job[snap->n_job++];
    memset(r, 0, sizeof *r);
    r->kind = vr_dup_col(s, 0);
    r->name = vr_dup_col(s, 1);
    r->profile = vr_dup_col(s, 2);
    vr_key_col(s, 3, r->key);
    r->out_path = vr_dup_col(s, 4);
    vr_stamp_cols(s, 5, &r->out_st);
    r->out_hash = vr_i2u(sqlite3_column_int64(s, 9));
    r->duration_ns = vr_i2u(sqlite3_column_int64(s, 10));
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

/* Read every table in one read transaction; a SQLite status. */
static int vr_state_load(vr_state *st, vr_snapshot *snap)
{
    memset(snap, 0, sizeof *snap);
    int rc = sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = vr_each(st->db,
                     "SELECT id, path, hash, mtime_ns, ctime_ns, size, ino,"
                     " seen_ns FROM sources",
                     vr_row_source, snap);
    if (rc == SQLITE_OK)
        rc = vr_each(st->db, "SELECT * FROM artifacts", vr_row_artifact,
                     snap);
    if (rc == SQLITE_OK)
        rc = vr_each(st->db, "SELECT * FROM jobs", vr_row_job, snap);
    int end = sqlite3_exec(st->db, rc == SQLITE_OK ? "COMMIT" : "ROLLBACK",
                           NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = end;
    if (rc != SQLITE_OK)
        vr_snapshot_free(snap);
    return rc;
}

/* ---- opening -------------------------------------------------------------- */

static int vr_pragma_int(sqlite3 *db, const char *sql, int64_t *v)
{
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        *v = sqlite3_column_int64(s, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(s);
    return rc;
}

static void vr_state_finalize(vr_state *st)
{
    for (int i = 0; i < Q_N; i++) {
        sqlite3_finalize(st->q[i]);
        st->q[i] = NULL;
    }
    sqlite3_close(st->db);
    st->db = NULL;
}

/* What opening found. */
enum { VR_OPEN_OK, VR_OPEN_BAD, VR_OPEN_NEWER, VR_OPEN_FAILED };

/* Open the file, check it is ours, create the schema in an empty one,
 * prepare the statements and read everything. *why (heap) says what was
 * wrong for BAD/NEWER/FAILED. */
static int vr_state_try(vr_state *st, vr_snapshot *snap, char **why)
{
    int ro = (st->flags & VR_STATE_READONLY) != 0;
    int rc = sqlite3_open_v2(st->path, &st->db,
                             ro ? SQLITE_OPEN_READONLY
                                : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                             NULL);
    if (rc != SQLITE_OK) {
        *why = vr_strfmt("%s", st->db ? sqlite3_errmsg(st->db)
                                      : sqlite3_errstr(rc));
        return vr_is_corruption(rc) ? VR_OPEN_BAD : VR_OPEN_FAILED;
    }
    sqlite3_busy_timeout(st->db, 30000);
    int64_t app = 0, ver = 0, tables = 0;
    rc = vr_pragma_int(st->db, "PRAGMA application_id", &app);
    if (rc == SQLITE_OK)
        rc = vr_pragma_int(st->db, "PRAGMA user_version", &ver);
    if (rc == SQLITE_OK)
        rc = vr_pragma_int(st->db, "SELECT count(*) FROM sqlite_master",
                           &tables);
    if (rc != SQLITE_OK) {
        *why = vr_strfmt("%s", sqlite3_errmsg(st->db));
        return vr_is_corruption(rc) ? VR_OPEN_BAD : VR_OPEN_FAILED;
    }
    if (app == VR_STATE_APP_ID && ver > VR_STATE_VERSION) {
        *why = vr_strfmt("%s has state schema version %lld, newer than this "
                         "vsched-run's %d: use a newer vsched-run, or remove "
                         "%s (and rebuild from scratch)",
                         st->path, (long long)ver, VR_STATE_VERSION,
                         st->path);
        return VR_OPEN_NEWER;
    }
    if (tables == 0 && app == 0 && ver == 0) {
        if (ro)
            return VR_OPEN_OK; /* empty: an empty snapshot */
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA application_id = %d;"
                                  "PRAGMA user_version = %d;",
                 VR_STATE_APP_ID, VR_STATE_VERSION);
        rc = sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_exec(st->db, vr_schema_sql, NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            rc = sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            *why = vr_strfmt("cannot create the schema: %s",
                             sqlite3_errmsg(st->db));
            return vr_is_corruption(rc) ? VR_OPEN_BAD : VR_OPEN_FAILED;
        }
    } else if (app != VR_STATE_APP_ID || ver != VR_STATE_VERSION) {
        *why = vr_strfmt("not a vsched state database (application id "
                         "0x%llx, schema version %lld)",
                         (unsigned long long)app, (long long)ver);
        return VR_OPEN_BAD;
    }
    if (!ro) {
        sqlite3_exec(st->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
        sqlite3_exec(st->db, "PRAGMA synchronous = NORMAL", NULL, NULL,
                     NULL);
    }
    for (int i = 0; !ro && i < Q_N; i++) {
        rc = sqlite3_prepare_v3(st->db, vr_queries[i], -1,
                                SQLITE_PREPARE_PERSISTENT, &st->q[i], NULL);
        if (rc != SQLITE_OK) {
            *why = vr_strfmt("unexpected tables: %s", sqlite3_errmsg(st->db));
            return VR_OPEN_BAD;
        }
    }
    rc = vr_state_load(st, snap);
    if (rc != SQLITE_OK) {
        *why = vr_strfmt("%s", sqlite3_errmsg(st->db));
        return (rc & 0xff) == SQLITE_ERROR || vr_is_corruption(rc)
                   ? VR_OPEN_BAD
                   : VR_OPEN_FAILED;
    }
    return VR_OPEN_OK;
}

/* Move `path` aside to path.corrupt, its WAL with it (a WAL left beside
 * a new database would be replayed into it); drop its shared-memory
 * index. 0, or -1 with errno set. */
static int vr_move_aside(const char *path)
{
    char *to = vr_strfmt("%s.corrupt", path);
    char *wal = vr_strfmt("%s-wal", path), *wal_to = vr_strfmt("%s-wal", to);
    char *shm = vr_strfmt("%s-shm", path);
    int rc = 0;
    if (unlink(wal_to) != 0 && errno != ENOENT)
        rc = -1; /* an older pair's WAL must not sit beside this copy */
    if (rc == 0 && rename(path, to) != 0 && errno != ENOENT)
        rc = -1;
    if (rc == 0 && rename(wal, wal_to) != 0 && errno != ENOENT)
        rc = -1;
    if (rc == 0 && unlink(shm) != 0 && errno != ENOENT)
        rc = -1;
    free(to);
    free(wal);
    free(wal_to);
    free(shm);
    return rc;
}

/* Contract: see state.h. */
int vr_state_open(vr_state **out, const char *dir, unsigned flags,
                  vr_snapshot *snap, FILE *err, char **msg)
{
    *out = NULL;
    *msg = NULL;
    memset(snap, 0, sizeof *snap);
    vr_state *st = vr_xcalloc(1, sizeof *st);
    st->path = vr_path_join(dir, "state.db");
    st->err = err;
    st->flags = flags;
    int ro = (flags & VR_STATE_READONLY) != 0;
    if (ro && access(st->path, F_OK) != 0) {
        *out = st; /* nothing recorded yet */
        return VSCHED_OK;
    }
    if (!ro && vr_mkdirs(dir, msg) != VSCHED_OK) {
        vr_state_close(st);
        return VSCHED_EIO;
    }
    char *why = NULL;
    int r = vr_state_try(st, snap, &why);
    if (r == VR_OPEN_BAD) {
        vr_state_finalize(st);
        if (ro) {
            fprintf(err, "vsched-run: %s cannot be used (%s); planning as "
                         "if nothing had been built\n",
                    st->path, why);
            free(why);
            *out = st;
            return VSCHED_OK;
        }
        if (vr_move_aside(st->path) != 0) {
            *msg = vr_strfmt("%s cannot be used (%s) and cannot be moved "
                             "aside (%s): remove it by hand",
                             st->path, why, strerror(errno));
            free(why);
            goto fail;
        }
        fprintf(err, "vsched-run: %s cannot be used (%s); moved it to "
                     "%s.corrupt and building from scratch\n",
                st->path, why, st->path);
        free(why);
        why = NULL;
        r = vr_state_try(st, snap, &why);
    }
    if (r == VR_OPEN_OK) {
        free(why);
        *out = st;
        return VSCHED_OK;
    }
    if (r == VR_OPEN_NEWER) {
        *msg = why;
    } else {
        *msg = vr_strfmt("cannot open %s: %s", st->path,
                         why != NULL ? why : "error");
        free(why);
    }
fail:
    vr_state_finalize(st);
    free(st->path);
    free(st);
    return r == VR_OPEN_NEWER ? VSCHED_ECONFIG : VSCHED_EIO;
}

/* Contract: see state.h. */
void vr_state_close(vr_state *st)
{
    if (st == NULL)
        return;
    if (st->in_txn && st->db != NULL)
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    vr_state_finalize(st);
    if (st->broken && !(st->flags & VR_STATE_READONLY) &&
        vr_move_aside(st->path) == 0 && st->err != NULL)
        fprintf(st->err, "vsched-run: moved %s to %s.corrupt; the next run "
                         "builds from scratch\n",
                st->path, st->path);
    free(st->path);
    free(st);
}

/* Contract: see state.h. */
int vr_state_broken(const vr_state *st)
{
    return st->broken;
}

/* ---- writing -------------------------------------------------------------- */

static int vr_state_usable(const vr_state *st)
{
    return st->db != NULL && !st->broken &&
           !(st->flags & VR_STATE_READONLY);
}

/* Contract: see state.h. */
int vr_state_begin(vr_state *st)
{
    if (!vr_state_usable(st))
        return VSCHED_EIO;
    if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
        SQLITE_OK)
        return vr_state_fail(st, "BEGIN");
    st->in_txn = 1;
    return VSCHED_OK;
}

/* Contract: see state.h. */
int vr_state_commit(vr_state *st)
{
    if (!vr_state_usable(st) || !st->in_txn)
        return VSCHED_EIO;
    st->in_txn = 0;
    if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        return vr_state_fail(st, "COMMIT");
    }
    return VSCHED_OK;
}

/* Step a bound write statement to its end; reset it. */
static int vr_state_step(vr_state *st, sqlite3_stmt *s, const char *what)
{
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        rc = SQLITE_DONE;
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE ? VSCHED_OK : vr_state_fail(st, what);
}

/* Contract: see state.h. */
int vr_state_put_source(vr_state *st, const char *path, uint64_t hash,
                        const vr_stamp *stamp, int64_t seen_ns, int64_t *id)
{
    if (!vr_state_usable(st))
        return VSCHED_EIO;
    sqlite3_stmt *s = st->q[Q_PUT_SOURCE];
    sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(s, 2, vr_u2i(hash));
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
                             : vr_state_fail(st, "recording a source");
}

/* Contract: see state.h. */
int vr_state_put_artifact(vr_state *st, const vr_art_row *r)
{
    if (!vr_state_usable(st))
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
    sqlite3_bind_int64(s, 4, vr_u2i(r->config));
    sqlite3_bind_int64(s, 5, vr_u2i(r->tool));
    sqlite3_bind_blob(s, 6, blob, (int)(r->n_deps * VR_DEP_BYTES),
                      SQLITE_STATIC);
    if (r->out_path != NULL)
        sqlite3_bind_text(s, 7, r->out_path, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(s, 7);
    vr_bind_stamp(s, 8, &r->out_st);
    sqlite3_bind_int64(s, 12, vr_u2i(r->out_hash));
    sqlite3_bind_int64(s, 13, vr_u2i(r->duration_ns));
    int rc = vr_state_step(st, s, "recording an artifact");
    free(blob);
    return rc;
}

/* Contract: see state.h. */
int vr_state_drop_artifact(vr_state *st, const char *source,
                           const char *profile)
{
    if (!vr_state_usable(st))
        return VSCHED_EIO;
    sqlite3_stmt *s = st->q[Q_DROP_ARTIFACT];
    sqlite3_bind_text(s, 1, source, -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 2, profile, -1, SQLITE_STATIC);
    return vr_state_step(st, s, "forgetting an artifact");
}

/* Contract: see state.h. */
int vr_state_put_job(vr_state *st, const vr_job_row *r)
{
    if (!vr_state_usable(st))
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
    sqlite3_bind_int64(s, 10, vr_u2i(r->out_hash));
    sqlite3_bind_int64(s, 11, vr_u2i(r->duration_ns));
    return vr_state_step(st, s, "recording a job");
}

/* Contract: see state.h. */
int vr_state_drop_job(vr_state *st, const char *kind, const char *name,
                      const char *profile)
{
    if (!vr_state_usable(st))
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
    if (!vr_state_usable(st))
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
    if (!vr_state_usable(st))
        return VSCHED_EIO;
    int64_t *used = NULL, *gone = NULL;
    size_t n_used = 0, n_gone = 0;
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, "SELECT deps FROM artifacts", -1, &s,
                                NULL);
    while (rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
        const unsigned char *b = sqlite3_column_blob(s, 0);
        size_t nb = (size_t)sqlite3_column_bytes(s, 0) / VR_DEP_BYTES;
        used = vr_xrealloc(used, (n_used + nb + 1) * sizeof *used);
        for (size_t i = 0; b != NULL && i < nb; i++)
            used[n_used++] = (int64_t)(vr_get_le64(b + i * VR_DEP_BYTES) &
                                       ~VR_DEP_COVERED);
    }
    sqlite3_finalize(s);
    if (n_used > 0)
        qsort(used, n_used, sizeof *used, vr_cmp_i64);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(st->db, "SELECT id FROM sources", -1, &s,
                                NULL);
    while (rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(s, 0);
        if (n_used == 0 ||
            bsearch(&id, used, n_used, sizeof *used, vr_cmp_i64) == NULL) {
            gone = vr_xrealloc(gone, (n_gone + 1) * sizeof *gone);
            gone[n_gone++] = id;
        }
    }
    if (rc == SQLITE_OK)
        sqlite3_finalize(s);
    int out = rc == SQLITE_OK ? VSCHED_OK : vr_state_fail(st, "sweeping");
    for (size_t i = 0; out == VSCHED_OK && i < n_gone; i++)
        out = vr_state_drop_source(st, gone[i]);
    if (out == VSCHED_OK && dropped != NULL)
        *dropped = n_gone;
    free(used);
    free(gone);
    return out;
}

/* Contract: see state.h. */
int vr_state_remove(const char *dir, char **msg)
{
    static const char *const names[] = {"state.db", "state.db-wal",
                                        "state.db-shm"};
    *msg = NULL;
    for (size_t i = 0; i < 3; i++) {
        char *p = vr_path_join(dir, names[i]);
        if (unlink(p) != 0 && errno != ENOENT) {
            *msg = vr_strfmt("cannot remove %s: %s", p, strerror(errno));
            free(p);
            return VSCHED_EIO;
        }
        free(p);
    }
    return VSCHED_OK;
}
