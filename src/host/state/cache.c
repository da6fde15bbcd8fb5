/*
 * cache -- the artifact cache; see cache.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>
#include <vsched/plugin.h>

#include "common/escape.h"
#include "common/util.h"
#include "state/cache.h"
#include "state/lock.h"
#include "state/stamp.h"

static const char vr_cache_schema[] =
    "CREATE TABLE IF NOT EXISTS entries(key BLOB PRIMARY KEY,"
    " out_path TEXT NOT NULL, size INTEGER NOT NULL, hash INTEGER NOT NULL,"
    " mtime_ns INTEGER NOT NULL, ino INTEGER NOT NULL,"
    " used_ns INTEGER NOT NULL, deps BLOB NOT NULL);"
    "CREATE INDEX IF NOT EXISTS entries_used ON entries(used_ns);";

enum {
    C_GET,
    C_PUT,
    C_DROP,
    C_TOUCH,
    C_N
};

static const char *const vr_cache_sql[C_N] = {
    "SELECT out_path, size, hash, mtime_ns, ino, deps FROM entries"
    " WHERE key = ?1",
    "INSERT OR REPLACE INTO entries VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    "DELETE FROM entries WHERE key = ?1",
    "UPDATE entries SET used_ns = ?2 WHERE key = ?1",
};

struct vr_cache {
    char *dir;
    uint64_t max_bytes;
    FILE *err;
    /* lock: guards db, q, in_txn, counts and the stored-this-run flag; a
     * leaf. */
    pthread_mutex_t lock;
    sqlite3 *db;
    sqlite3_stmt *q[C_N];
    int in_txn;
    int broken;
    unsigned long tmp_counter;
    vr_cache_counts counts;
};

/* ---- helpers ---------------------------------------------------------- */

static char *vr_cache_file(const vr_cache *c, const uint8_t key[16])
{
    char hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", key[i]);
    return vr_strfmt("%s/objects/%.2s/%s", c->dir, hex, hex);
}

static int64_t vr_c_i64(uint64_t v)
{
    int64_t i;
    memcpy(&i, &v, sizeof i);
    return i;
}

static uint64_t vr_c_u64(int64_t v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* deps blob: per dep, the hash (8 bytes LE), the name's length (4 bytes
 * LE), the name. */
static unsigned char *vr_deps_blob(const vr_cache_dep *d, size_t n,
                                   size_t *len)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += 12 + strlen(d[i].name);
    unsigned char *b = vr_xmalloc(total + 1), *p = b;
    for (size_t i = 0; i < n; i++) {
        size_t nl = strlen(d[i].name);
        for (int k = 0; k < 8; k++)
            *p++ = (unsigned char)(d[i].hash >> (8 * k));
        for (int k = 0; k < 4; k++)
            *p++ = (unsigned char)(nl >> (8 * k));
        memcpy(p, d[i].name, nl);
        p += nl;
    }
    *len = total;
    return b;
}

/* Decode a deps blob; -1 when malformed. */
static int vr_deps_parse(const unsigned char *b, size_t len, vr_cache_entry *e)
{
    size_t off = 0;
    while (off < len) {
        if (len - off < 12)
            return -1;
        uint64_t h = 0;
        uint32_t nl = 0;
        for (int k = 0; k < 8; k++)
            h |= (uint64_t)b[off + k] << (8 * k);
        for (int k = 0; k < 4; k++)
            nl |= (uint32_t)b[off + 8 + k] << (8 * k);
        off += 12;
        if (nl == 0 || nl > len - off)
            return -1;
        e->deps = vr_xgrow(e->deps, e->n_deps, sizeof *e->deps);
        e->deps[e->n_deps].name = vr_strfmt("%.*s", (int)nl, b + off);
        e->deps[e->n_deps++].hash = h;
        off += nl;
    }
    return 0;
}

/* Put src at the new name dst: a hard link, else a copy. 0 or -1. */
static int vr_link_or_copy(const char *src, const char *dst)
{
    if (link(src, dst) == 0)
        return 0;
    if (errno == ENOENT)
        return -1;
    return vr_file_copy(src, dst);
}

static int vr_cache_begin_locked(vr_cache *c)
{
    if (c->broken)
        return -1;
    if (!c->in_txn) {
        if (sqlite3_exec(c->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) !=
            SQLITE_OK) {
            if (c->err != NULL)
                fprintf(c->err,
                        "vsched-run: cache %s: %s; not storing "
                        "this run's outputs\n",
                        c->dir, sqlite3_errmsg(c->db));
            c->broken = 1;
            return -1;
        }
        c->in_txn = 1;
    }
    return 0;
}

static int vr_cache_step_locked(vr_cache *c, sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* ---- open and close ------------------------------------------------------- */

static int vr_cache_connect(vr_cache *c, const char *path)
{
    if (sqlite3_open_v2(path, &c->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        NULL) != SQLITE_OK)
        return -1;
    sqlite3_busy_timeout(c->db, 30000);
    sqlite3_exec(c->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
    sqlite3_exec(c->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
    if (sqlite3_exec(c->db, vr_cache_schema, NULL, NULL, NULL) != SQLITE_OK)
        return -1;
    for (int i = 0; i < C_N; i++)
        if (sqlite3_prepare_v3(c->db, vr_cache_sql[i], -1,
                               SQLITE_PREPARE_PERSISTENT, &c->q[i],
                               NULL) != SQLITE_OK)
            return -1;
    return 0;
}

static void vr_cache_disconnect(vr_cache *c)
{
    for (int i = 0; i < C_N; i++) {
        sqlite3_finalize(c->q[i]);
        c->q[i] = NULL;
    }
    sqlite3_close(c->db);
    c->db = NULL;
}

/* Contract: see cache.h. */
int vr_cache_open(vr_cache **out, const char *dir, uint64_t max_bytes,
                  FILE *err, char **msg)
{
    *out = NULL;
    *msg = NULL;
    char *objects = vr_path_join(dir, "objects");
    int rc = vr_mkdirs(objects, msg);
    free(objects);
    if (rc != VSCHED_OK)
        return VSCHED_EIO;
    vr_cache *c = vr_xcalloc(1, sizeof *c);
    c->dir = vr_xstrdup(dir);
    c->max_bytes = max_bytes;
    c->err = err;
    c->counts.max_bytes = max_bytes;
    pthread_mutex_init(&c->lock, NULL);
    char *path = vr_path_join(dir, "index.db");
    if (vr_cache_connect(c, path) != 0) {
        fprintf(err,
                "vsched-run: cache index %s cannot be used (%s); "
                "starting an empty one\n",
                path, c->db != NULL ? sqlite3_errmsg(c->db) : "error");
        vr_cache_disconnect(c);
        char *wal = vr_strfmt("%s-wal", path),
             *shm = vr_strfmt("%s-shm", path);
        unlink(path);
        unlink(wal);
        unlink(shm);
        free(wal);
        free(shm);
        if (vr_cache_connect(c, path) != 0) {
            *msg = vr_strfmt("cannot open the cache index %s: %s", path,
                             c->db != NULL ? sqlite3_errmsg(c->db) : "error");
            vr_cache_disconnect(c);
            free(path);
            pthread_mutex_destroy(&c->lock);
            free(c->dir);
            free(c);
            return VSCHED_EIO;
        }
    }
    free(path);
    *out = c;
    return VSCHED_OK;
}

/* Contract: see cache.h. */
void vr_cache_close(vr_cache *c)
{
    if (c == NULL)
        return;
    vr_cache_commit(c);
    if (c->counts.stored > 0)
        vr_cache_trim(c);
    vr_cache_disconnect(c);
    pthread_mutex_destroy(&c->lock);
    free(c->dir);
    free(c);
}

/* ---- lookup and restore ---------------------------------------------------- */

/* The recorded stamp fields of an entry. */
typedef struct vr_entry_stamp {
    int64_t size, mtime_ns;
    uint64_t ino;
} vr_entry_stamp;

static int vr_cache_get_locked(vr_cache *c, const uint8_t key[16],
                               vr_cache_entry *e, vr_entry_stamp *es)
{
    sqlite3_stmt *s = c->q[C_GET];
    memset(e, 0, sizeof *e);
    sqlite3_bind_blob(s, 1, key, 16, SQLITE_STATIC);
    int rc = VSCHED_ENOENT;
    if (sqlite3_step(s) == SQLITE_ROW) {
        memcpy(e->key, key, 16);
        e->out_path = vr_xstrdup((const char *)sqlite3_column_text(s, 0));
        e->size = sqlite3_column_int64(s, 1);
        e->hash = vr_c_u64(sqlite3_column_int64(s, 2));
        es->size = e->size;
        es->mtime_ns = sqlite3_column_int64(s, 3);
        es->ino = vr_c_u64(sqlite3_column_int64(s, 4));
        const unsigned char *b = sqlite3_column_blob(s, 5);
        size_t bl = (size_t)sqlite3_column_bytes(s, 5);
        rc = b == NULL && bl > 0 ? VSCHED_ENOENT : VSCHED_OK;
        if (rc == VSCHED_OK && vr_deps_parse(b, bl, e) != 0)
            rc = VSCHED_ENOENT;
    }
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc != VSCHED_OK)
        vr_cache_entry_clear(e);
    return rc;
}

/* Contract: see cache.h. */
int vr_cache_lookup(vr_cache *c, const uint8_t key[16], vr_cache_entry *e)
{
    vr_entry_stamp es;
    pthread_mutex_lock(&c->lock);
    int rc = vr_cache_get_locked(c, key, e, &es);
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* Contract: see cache.h. */
void vr_cache_entry_clear(vr_cache_entry *e)
{
    free(e->out_path);
    for (size_t i = 0; i < e->n_deps; i++)
        free(e->deps[i].name);
    free(e->deps);
    memset(e, 0, sizeof *e);
}

/* Forget an entry whose file cannot be trusted (caller holds lock). */
static void vr_cache_drop_locked(vr_cache *c, const uint8_t key[16],
                                 const char *file)
{
    unlink(file);
    if (vr_cache_begin_locked(c) != 0)
        return;
    sqlite3_bind_blob(c->q[C_DROP], 1, key, 16, SQLITE_STATIC);
    vr_cache_step_locked(c, c->q[C_DROP]);
}

/* Contract: see cache.h. The entry's stamp is checked against the index
 * right before linking: a file changed in place is never restored. */
int vr_cache_restore(vr_cache *c, const vr_cache_entry *e, const char *dest)
{
    char *file = vr_cache_file(c, e->key), *msg = NULL;
    char *dir = vr_path_dirname_abs(dest);
    int rc = vr_mkdirs(dir, &msg);
    free(dir);
    free(msg);
    vr_stamp st;
    vr_cache_entry now;
    vr_entry_stamp es;
    pthread_mutex_lock(&c->lock);
    if (rc == VSCHED_OK) {
        rc = vr_cache_get_locked(c, e->key, &now, &es);
        vr_cache_entry_clear(&now);
    }
    if (rc == VSCHED_OK &&
        (vr_stamp_of(file, &st) != VSCHED_OK || st.size != es.size ||
         st.mtime_ns != es.mtime_ns || st.ino != es.ino)) {
        vr_cache_drop_locked(c, e->key, file);
        rc = VSCHED_ENOENT;
    }
    pthread_mutex_unlock(&c->lock);
    if (rc == VSCHED_OK && vr_link_or_copy(file, dest) != 0)
        rc = VSCHED_EIO;
    pthread_mutex_lock(&c->lock);
    if (rc == VSCHED_OK) {
        c->counts.hits++;
        c->counts.restored_bytes += (uint64_t)e->size;
        if (vr_cache_begin_locked(c) == 0) {
            sqlite3_bind_blob(c->q[C_TOUCH], 1, e->key, 16, SQLITE_STATIC);
            sqlite3_bind_int64(c->q[C_TOUCH], 2, vr_wall_ns());
            vr_cache_step_locked(c, c->q[C_TOUCH]);
        }
    } else {
        c->counts.misses++;
    }
    pthread_mutex_unlock(&c->lock);
    free(file);
    return rc;
}

/* Contract: see cache.h. */
void vr_cache_miss(vr_cache *c)
{
    pthread_mutex_lock(&c->lock);
    c->counts.misses++;
    pthread_mutex_unlock(&c->lock);
}

/* ---- store, commit, trim ---------------------------------------------------- */

/* Contract: see cache.h. The entry file is put in place (link or copy to a
 * temporary name, then rename) before its row is written, so a row never
 * names a missing or partial file. */
int vr_cache_store(vr_cache *c, const uint8_t key[16], const char *path,
                   uint64_t hash, const vr_cache_dep *deps, size_t n_deps)
{
    char *file = vr_cache_file(c, key), *msg = NULL;
    char *dir = vr_path_dirname_abs(file);
    int rc = vr_mkdirs(dir, &msg);
    free(dir);
    free(msg);
    unsigned long k = __atomic_fetch_add(&c->tmp_counter, 1, __ATOMIC_RELAXED);
    char *tmp = vr_strfmt("%s.tmp.%ld.%lu", file, (long)getpid(), k);
    vr_stamp st;
    if (rc == VSCHED_OK &&
        (vr_link_or_copy(path, tmp) != 0 || rename(tmp, file) != 0 ||
         vr_stamp_of(file, &st) != VSCHED_OK))
        rc = VSCHED_EIO;
    unlink(tmp);
    free(tmp);
    size_t bl = 0;
    unsigned char *blob =
        rc == VSCHED_OK ? vr_deps_blob(deps, n_deps, &bl) : NULL;
    pthread_mutex_lock(&c->lock);
    if (rc == VSCHED_OK && vr_cache_begin_locked(c) == 0) {
        sqlite3_stmt *s = c->q[C_PUT];
        sqlite3_bind_blob(s, 1, key, 16, SQLITE_STATIC);
        sqlite3_bind_text(s, 2, path, -1, SQLITE_STATIC);
        sqlite3_bind_int64(s, 3, st.size);
        sqlite3_bind_int64(s, 4, vr_c_i64(hash));
        sqlite3_bind_int64(s, 5, st.mtime_ns);
        sqlite3_bind_int64(s, 6, vr_c_i64(st.ino));
        sqlite3_bind_int64(s, 7, vr_wall_ns());
        sqlite3_bind_blob(s, 8, blob, (int)bl, SQLITE_STATIC);
        if (vr_cache_step_locked(c, s) == 0) {
            c->counts.stored++;
            c->counts.stored_bytes += (uint64_t)st.size;
        } else {
            rc = VSCHED_EIO;
        }
    } else if (rc == VSCHED_OK) {
        rc = VSCHED_EIO;
    }
    pthread_mutex_unlock(&c->lock);
    free(blob);
    free(file);
    return rc;
}

/* Contract: see cache.h. */
int vr_cache_commit(vr_cache *c)
{
    pthread_mutex_lock(&c->lock);
    int rc = VSCHED_OK;
    if (c->in_txn) {
        c->in_txn = 0;
        if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
            sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
            rc = VSCHED_EIO;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* Contract: see cache.h. The victims are collected first and deleted
 * after the scan (no writes under a running SELECT). */
int vr_cache_trim(vr_cache *c)
{
    pthread_mutex_lock(&c->lock);
    sqlite3_stmt *sum = NULL, *old = NULL;
    int64_t total = 0;
    int rc = sqlite3_prepare_v2(c->db,
                                "SELECT COALESCE(SUM(size), 0) FROM "
                                "entries",
                                -1, &sum, NULL);
    if (rc == SQLITE_OK && sqlite3_step(sum) == SQLITE_ROW)
        total = sqlite3_column_int64(sum, 0);
    sqlite3_finalize(sum);
    uint8_t(*victims)[16] = NULL;
    size_t n = 0;
    if (rc == SQLITE_OK && (uint64_t)total > c->max_bytes)
        rc = sqlite3_prepare_v2(c->db,
                                "SELECT key, size FROM entries "
                                "ORDER BY used_ns",
                                -1, &old, NULL);
    while (old != NULL && (uint64_t)total > c->max_bytes &&
           sqlite3_step(old) == SQLITE_ROW) {
        victims = vr_xgrow(victims, n, sizeof *victims);
        memset(victims[n], 0, 16);
        if (sqlite3_column_bytes(old, 0) == 16)
            memcpy(victims[n], sqlite3_column_blob(old, 0), 16);
        n++;
        total -= sqlite3_column_int64(old, 1);
    }
    sqlite3_finalize(old);
    for (size_t i = 0; i < n; i++) {
        char *file = vr_cache_file(c, victims[i]);
        vr_cache_drop_locked(c, victims[i], file);
        free(file);
        c->counts.trimmed++;
    }
    free(victims);
    c->counts.total_bytes = (uint64_t)(total > 0 ? total : 0);
    if (c->in_txn) {
        c->in_txn = 0;
        if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
            sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
            rc = SQLITE_ERROR;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return rc == SQLITE_OK ? VSCHED_OK : VSCHED_EIO;
}

/* Contract: see cache.h. */
void vr_cache_get_counts(vr_cache *c, vr_cache_counts *out)
{
    pthread_mutex_lock(&c->lock);
    *out = c->counts;
    pthread_mutex_unlock(&c->lock);
}

static int vr_rm_one(const char *path, const struct stat *sb, int flag,
                     struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    int rc = flag == FTW_DP ? rmdir(path) : unlink(path);
    return rc != 0 && errno != ENOENT ? -1 : 0;
}

/* Contract: see cache.h. Symbolic links are removed, never followed. */
int vr_cache_remove_dir(const char *dir, char **msg)
{
    *msg = NULL;
    if (access(dir, F_OK) != 0)
        return VSCHED_OK;
    if (nftw(dir, vr_rm_one, 16, FTW_DEPTH | FTW_PHYS) != 0) {
        int err = errno;
        vr_esc e = {0};
        *msg = vr_strfmt("cannot remove the cache %s: %s",
                         vr_esc_name(&e, dir), strerror(err));
        vr_esc_done(&e);
        return VSCHED_EIO;
    }
    return VSCHED_OK;
}
