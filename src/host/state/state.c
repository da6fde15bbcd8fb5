/*
 * state -- the SQLite state database: opening, closing, transactions; see
 * state.h. The rows are state_rows.c; what both share, state_int.h.
 *
 * A statement that cannot be prepared at open means the tables are not
 * the ones this version writes: the database is treated as foreign.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>
#include <vsched/plugin.h>

#include "common/escape.h"
#include "common/util.h"
#include "state/lock.h"
#include "state/state_int.h"

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

/* ---- small helpers ------------------------------------------------------ */

static int vr_is_corruption(int rc)
{
    rc &= 0xff;
    return rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB ||
           rc == SQLITE_FORMAT || rc == SQLITE_SCHEMA;
}

/* Contract: see state_int.h. */
int vr__state_fail(vr_state *st, const char *what)
{
    if (!st->broken && st->err != NULL)
        fprintf(st->err,
                "vsched-run: %s: %s failed: %s; this run's records are not "
                "kept (outputs are fine; the next run rebuilds what it "
                "cannot prove current)\n",
                st->shown, what, sqlite3_errmsg(st->db));
    st->broken = 1;
    return VSCHED_EIO;
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
enum {
    VR_OPEN_OK,
    VR_OPEN_BAD,
    VR_OPEN_NEWER,
    VR_OPEN_FAILED
};

/* The files of the database at `path`: itself, its WAL, its index. */
static const char *const vr_db_suffix[] = {"", "-wal", "-shm"};

/* Each file of the database that exists is a regular file (links
 * followed, as SQLite opens them): a FIFO there would block the open
 * (read-only) or fail it with "disk I/O error", a directory fail it.
 * 0, or VSCHED_EIO with *msg (heap) saying what to do. */
static int vr_db_files_check(const char *path, char **msg)
{
    for (size_t i = 0; i < 3; i++) {
        char *f = vr_strfmt("%s%s", path, vr_db_suffix[i]);
        struct stat sb;
        int bad = stat(f, &sb) == 0 && !S_ISREG(sb.st_mode);
        if (bad) {
            vr_esc e = {0};
            *msg = vr_strfmt("%s is not a regular file: it is where "
                             "vsched-run keeps its state; remove it",
                             vr_esc_name(&e, f));
            vr_esc_done(&e);
        }
        free(f);
        if (bad)
            return VSCHED_EIO;
    }
    return VSCHED_OK;
}

/* Remove st->copy_dir and what SQLite made in it. */
static void vr_copy_remove(vr_state *st)
{
    if (st->copy_dir == NULL)
        return;
    char *db = vr_path_join(st->copy_dir, "state.db");
    for (size_t i = 0; i < 3; i++) {
        char *f = vr_strfmt("%s%s", db, vr_db_suffix[i]);
        unlink(f);
        free(f);
    }
    free(db);
    rmdir(st->copy_dir);
    free(st->copy_dir);
    st->copy_dir = NULL;
}

/* READONLY with a -wal beside the database (a run has it open, or one
 * was killed): what must be read is partly in the WAL, and even a
 * read-only connection writes the -shm index (creating it when absent).
 * So the database and its WAL are copied into a private directory and
 * the copy read. Returns the path to open (heap): the copy's, or st->path
 * when there is no -wal or the copy cannot be made. */
static char *vr_readonly_source(vr_state *st)
{
    char *wal = vr_strfmt("%s-wal", st->path);
    int have_wal = access(wal, F_OK) == 0;
    const char *tmp = getenv("TMPDIR");
    char *dir = have_wal
                    ? vr_strfmt("%s/vsched-state.XXXXXX",
                                tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp")
                    : NULL;
    char *copy = NULL;
    if (dir != NULL && mkdtemp(dir) != NULL) {
        st->copy_dir = dir;
        dir = NULL;
        copy = vr_path_join(st->copy_dir, "state.db");
        char *copy_wal = vr_strfmt("%s-wal", copy);
        int ok = vr_file_copy(st->path, copy) == 0 &&
                 (vr_file_copy(wal, copy_wal) == 0 || errno == ENOENT);
        free(copy_wal);
        if (!ok) {
            free(copy);
            copy = NULL;
            vr_copy_remove(st);
        }
    }
    free(dir);
    free(wal);
    return copy != NULL ? copy : vr_xstrdup(st->path);
}

/* The URI that opens `path` read-only (heap). A WAL database opened
 * read-only still gets its -wal and -shm files created beside it, so
 * when no -wal exists (no run has the database open, and none left one
 * behind) it is opened immutable: no lock taken, no file created. A run
 * that starts meanwhile writes its WAL, not the database, until it
 * checkpoints, which at worst makes this read fail as corrupt: -n then
 * plans as if nothing had been built, which it says. With a -wal there,
 * `path` is the private copy of vr_readonly_source. */
static char *vr_readonly_uri(const char *path)
{
    char *wal = vr_strfmt("%s-wal", path);
    int immutable = access(wal, F_OK) != 0 && errno == ENOENT;
    free(wal);
    size_t n = strlen(path);
    char *uri = vr_xcalloc(1, sizeof "file://" + 3 * n +
                                  sizeof "?mode=ro&immutable=1");
    /* an absolute path gets an empty authority: "//x" is no host */
    char *o = uri + sprintf(uri, path[0] == '/' ? "file://" : "file:");
    for (const unsigned char *c = (const unsigned char *)path; *c; c++)
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
            (*c >= '0' && *c <= '9') || strchr("/-._~", *c) != NULL)
            *o++ = (char)*c;
        else
            o += sprintf(o, "%%%02X", *c);
    strcpy(o, immutable ? "?mode=ro&immutable=1" : "?mode=ro");
    return uri;
}

/* Open the file, check it is ours, create the schema in an empty one,
 * prepare the statements and read everything. *why (heap) says what was
 * wrong for BAD/NEWER/FAILED. */
static int vr_state_try(vr_state *st, vr_snapshot *snap, char **why)
{
    int ro = (st->flags & VR_STATE_READONLY) != 0;
    char *source = ro ? vr_readonly_source(st) : NULL;
    char *uri = ro ? vr_readonly_uri(source) : NULL;
    free(source);
    int rc = sqlite3_open_v2(ro ? uri : st->path, &st->db,
                             ro ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
                                : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                             NULL);
    free(uri);
    if (rc != SQLITE_OK) {
        *why = vr_strfmt("%s",
                         st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc));
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
        *why =
            vr_strfmt("%s has state schema version %lld, newer than this "
                      "vsched-run's %d: use a newer vsched-run, or remove "
                      "%s (and rebuild from scratch)",
                      st->shown, (long long)ver, VR_STATE_VERSION, st->shown);
        return VR_OPEN_NEWER;
    }
    if (tables == 0 && app == 0 && ver == 0) {
        if (ro)
            return VR_OPEN_OK; /* empty: an empty snapshot */
        char sql[64];
        snprintf(sql, sizeof sql,
                 "PRAGMA application_id = %d;"
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
        sqlite3_exec(st->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
    }
    for (int i = 0; !ro && i < Q_N; i++) {
        rc = sqlite3_prepare_v3(st->db, vr_queries[i], -1,
                                SQLITE_PREPARE_PERSISTENT, &st->q[i], NULL);
        if (rc != SQLITE_OK) {
            *why = vr_strfmt("unexpected tables: %s", sqlite3_errmsg(st->db));
            return VR_OPEN_BAD;
        }
    }
    rc = vr__state_load(st, snap, why);
    if (rc != SQLITE_OK) {
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
    st->shown = vr_escape_name(st->path);
    st->err = err;
    st->flags = flags;
    int ro = (flags & VR_STATE_READONLY) != 0;
    if (ro && access(st->path, F_OK) != 0) {
        *out = st; /* nothing recorded yet */
        return VSCHED_OK;
    }
    if ((!ro && vr_mkdirs(dir, msg) != VSCHED_OK) ||
        vr_db_files_check(st->path, msg) != VSCHED_OK) {
        vr_state_close(st);
        return VSCHED_EIO;
    }
    char *why = NULL;
    int r = vr_state_try(st, snap, &why);
    if (r == VR_OPEN_BAD) {
        vr_state_finalize(st);
        if (ro) {
            fprintf(err,
                    "vsched-run: %s cannot be used (%s); planning as "
                    "if nothing had been built\n",
                    st->shown, why);
            free(why);
            *out = st;
            return VSCHED_OK;
        }
        if (vr_move_aside(st->path) != 0) {
            *msg = vr_strfmt("%s cannot be used (%s) and cannot be moved "
                             "aside (%s): remove it by hand",
                             st->shown, why, strerror(errno));
            free(why);
            goto fail;
        }
        fprintf(err,
                "vsched-run: %s cannot be used (%s); moved it to "
                "%s.corrupt and building from scratch\n",
                st->shown, why, st->shown);
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
        *msg = vr_strfmt("cannot open %s: %s", st->shown,
                         why != NULL ? why : "error");
        free(why);
    }
fail:
    vr_state_finalize(st);
    vr_copy_remove(st);
    free(st->path);
    free(st->shown);
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
        fprintf(st->err,
                "vsched-run: moved %s to %s.corrupt; the next run "
                "builds from scratch\n",
                st->shown, st->shown);
    vr_copy_remove(st);
    free(st->path);
    free(st->shown);
    free(st);
}

/* Contract: see state.h. */
int vr_state_broken(const vr_state *st)
{
    return st->broken;
}

/* ---- writing -------------------------------------------------------------- */

/* Contract: see state_int.h. */
int vr__state_usable(const vr_state *st)
{
    return st->db != NULL && !st->broken && !(st->flags & VR_STATE_READONLY);
}

/* Contract: see state.h. */
int vr_state_begin(vr_state *st)
{
    if (!vr__state_usable(st))
        return VSCHED_EIO;
    if (sqlite3_exec(st->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return vr__state_fail(st, "BEGIN");
    st->in_txn = 1;
    return VSCHED_OK;
}

/* Contract: see state.h. */
int vr_state_commit(vr_state *st)
{
    if (!vr__state_usable(st) || !st->in_txn)
        return VSCHED_EIO;
    st->in_txn = 0;
    if (sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
        return vr__state_fail(st, "COMMIT");
    }
    return VSCHED_OK;
}

/* Contract: see state.h. */
int vr_state_remove(const char *dir, char **msg)
{
    /* and the copy a run moved aside (vr_move_aside): state too */
    static const char *const names[] = {"state.db", "state.db-wal",
                                        "state.db-shm", "state.db.corrupt",
                                        "state.db.corrupt-wal"};
    *msg = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char *p = vr_path_join(dir, names[i]);
        if (unlink(p) != 0 && errno != ENOENT) {
            int err = errno;
            vr_esc e = {0};
            *msg = vr_strfmt("cannot remove %s: %s", vr_esc_name(&e, p),
                             strerror(err));
            vr_esc_done(&e);
            free(p);
            return VSCHED_EIO;
        }
        free(p);
    }
    return VSCHED_OK;
}
