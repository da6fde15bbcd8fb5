/*
 * test_incr.c -- the incremental host modules on their own: the JSON
 * writer, stamps and hashes, the state database (round trip, schema
 * version, corrupt and foreign files, the sweep), the artifact cache
 * (store, restore, in-place changes, LRU trim), the state_dir lock across
 * processes, and the up-to-date check's reasons. Real files in a scratch
 * directory, a real SQLite database, real processes.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#include <vsched/plugin.h>

#include "cli/report.h"
#include "common/json.h"
#include "common/strmap.h"
#include "config/settings.h"
#include "cu.h"
#include "mock_host.h"
#include "state/cache.h"
#include "state/dirty.h"
#include "state/lock.h"
#include "state/sources.h"
#include "state/stamp.h"
#include "state/state.h"

/* ---- scratch files ----------------------------------------------------- */

static char *tmpdir(void)
{
    char tmpl[] = "/tmp/vsched-test-incr-XXXXXX";
    if (mkdtemp(tmpl) == NULL)
        abort();
    return strdup(tmpl);
}

static char *path2(const char *dir, const char *rel)
{
    char *p = NULL;
    if (asprintf(&p, "%s/%s", dir, rel) < 0)
        abort();
    return p;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static void rm_rf(const char *dir)
{
    char *cmd = NULL;
    if (asprintf(&cmd, "rm -rf '%s'", dir) < 0 || system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    free(cmd);
}

/* What a stream wrote, NUL-terminated (heap). */
static char *slurp(FILE *f)
{
    fflush(f);
    long n = ftell(f);
    rewind(f);
    char *s = calloc((size_t)n + 1, 1);
    if (n > 0 && fread(s, 1, (size_t)n, f) != (size_t)n)
        abort();
    return s;
}

/* ---- json ----------------------------------------------------------------- */

static char *json_of_string(const char *s, size_t n)
{
    FILE *f = tmpfile();
    vr_json_write_string(f, s, n);
    char *out = slurp(f);
    fclose(f);
    return out;
}

static void json_escapes_quotes_backslashes_and_every_control_byte(void)
{
    char *a = json_of_string("a\"b\\c", 5);
    EXPECT_STR(a, "\"a\\\"b\\\\c\"");
    static const char ctl[] = "\x01\b\t\n\f\r\x1f\x7f/";
    char *b = json_of_string(ctl, sizeof ctl - 1);
    EXPECT_STR(b, "\"\\u0001\\b\\t\\n\\f\\r\\u001f\\u007f/\"");
    char *c = json_of_string("x\0y", 3); /* a NUL inside a counted name */
    EXPECT_STR(c, "\"x\\u0000y\"");
    free(a);
    free(b);
    free(c);
}

static void json_keeps_valid_utf8_and_replaces_every_invalid_byte(void)
{
    /* é (2 bytes), € (3), 😀 (4) pass through */
    char *ok = json_of_string("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9);
    EXPECT_STR(ok, "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    /* a lone 0xff, a truncated sequence, an overlong '/', a surrogate,
     * and a code point above U+10FFFF: each byte that starts no valid
     * sequence is one U+FFFD */
    char *bad = json_of_string("\xff"
                               "a"
                               "\xe2\x82"
                               "b"
                               "\xc0\xaf"
                               "c"
                               "\xed\xa0\x80"
                               "d"
                               "\xf4\x90\x80\x80",
                               16);
    EXPECT_STR(bad, "\"\\ufffda\\ufffd\\ufffdb\\ufffd\\ufffdc"
                    "\\ufffd\\ufffd\\ufffdd\\ufffd\\ufffd\\ufffd\\ufffd\"");
    free(ok);
    free(bad);
}

static void json_document_layout_and_misuse_is_reported(void)
{
    FILE *f = tmpfile();
    vr_json *j = vr_json_new(f, 1);
    vr_json_object(j);
    vr_json_key(j, "v");
    vr_json_int(j, -3);
    vr_json_key(j, "list");
    vr_json_array(j);
    vr_json_uint(j, 18446744073709551615ull);
    vr_json_bool(j, 1);
    vr_json_string(j, NULL);
    vr_json_end_array(j);
    vr_json_end_object(j);
    EXPECT_INT(vr_json_finish(j), 0);
    char *s = slurp(f);
    EXPECT_STR(s, "{\n  \"v\": -3,\n  \"list\": [18446744073709551615, "
                  "true, null]\n}\n");
    free(s);
    fclose(f);

    f = tmpfile();
    j = vr_json_new(f, 1);
    vr_json_object(j);
    vr_json_int(j, 1); /* a value without its key */
    vr_json_end_object(j);
    EXPECT_INT(vr_json_finish(j), VSCHED_EINVAL);
    fclose(f);
    f = tmpfile();
    j = vr_json_new(f, 1);
    vr_json_array(j); /* never closed */
    EXPECT_INT(vr_json_finish(j), VSCHED_EINVAL);
    fclose(f);
}

/* ---- stamps and hashes ---------------------------------------------------- */

static void file_hash_equals_the_hash_of_its_bytes_small_and_large(void)
{
    char *dir = tmpdir(), *p = path2(dir, "f");
    size_t n = (1 << 16) * 3 + 17; /* several read buffers */
    char *big = malloc(n + 1);
    for (size_t i = 0; i < n; i++)
        big[i] = (char)('a' + i % 23);
    big[n] = '\0';
    for (int round = 0; round < 2; round++) {
        size_t len = round == 0 ? 5 : n;
        FILE *f = fopen(p, "wb");
        fwrite(big, 1, len, f);
        fclose(f);
        uint64_t h = 0;
        vr_stamp st;
        EXPECT_INT(vr_hash_file(p, &h, &st), VSCHED_OK);
        CU_ASSERT_EQUAL(h, vr_hash_bytes(big, len));
        EXPECT_INT(st.size, len);
    }
    uint64_t h;
    EXPECT_INT(vr_hash_file(dir, &h, NULL), VSCHED_ENOENT); /* a dir */
    char *missing = path2(dir, "nope");
    EXPECT_INT(vr_hash_file(missing, &h, NULL), VSCHED_ENOENT);
    vr_stamp st;
    EXPECT_INT(vr_stamp_of(missing, &st), VSCHED_ENOENT);
    free(missing);
    free(big);
    free(p);
    rm_rf(dir);
    free(dir);
}

static void stamp_taken_right_after_a_write_is_not_trusted(void)
{
    vr_stamp st = {.mtime_ns = 1000LL * 1000000000LL};
    CU_ASSERT_FALSE(vr_stamp_trusted(&st, st.mtime_ns));
    CU_ASSERT_FALSE(vr_stamp_trusted(&st, st.mtime_ns + VR_RACY_NS - 1));
    CU_ASSERT_TRUE(vr_stamp_trusted(&st, st.mtime_ns + VR_RACY_NS));
    vr_stamp a = {1, 2, 3, 4}, b = a;
    CU_ASSERT_TRUE(vr_stamp_equal(&a, &b));
    b.ctime_ns++;
    CU_ASSERT_FALSE(vr_stamp_equal(&a, &b));
}

/* ---- state ------------------------------------------------------------------ */

static char *sql_text(const char *db, const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *s = NULL;
    char *out = NULL;
    if (sqlite3_open(db, &h) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK &&
        sqlite3_step(s) == SQLITE_ROW)
        out = strdup((const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    sqlite3_close(h);
    return out;
}

static void sql_exec(const char *db, const char *sql)
{
    sqlite3 *h = NULL;
    CU_ASSERT_EQUAL(sqlite3_open(db, &h), SQLITE_OK);
    CU_ASSERT_EQUAL(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
}

/* Open dir's state, expecting success; messages go to *errs (heap). */
static vr_state *open_ok(const char *dir, unsigned flags, vr_snapshot *snap,
                         char **errs)
{
    FILE *err = tmpfile();
    vr_state *st = NULL;
    char *msg = NULL;
    int rc = vr_state_open(&st, dir, flags, snap, err, &msg);
    if (rc != 0)
        fprintf(stderr, "\n  vr_state_open: %s\n", msg ? msg : "?");
    EXPECT_INT(rc, VSCHED_OK);
    free(msg);
    *errs = slurp(err);
    fclose(err);
    return st;
}

static void state_round_trip_keeps_every_field(void)
{
    char *dir = tmpdir(), *errs = NULL, *db = path2(dir, "state.db");
    vr_snapshot snap;
    vr_state *st = open_ok(dir, 0, &snap, &errs);
    EXPECT_STR(errs, "");
    free(errs);
    EXPECT_INT(snap.n_src + snap.n_art + snap.n_job, 0);
    vr_stamp s1 = {111, 222, 333, 444}, out = {5, 6, 7, 8};
    int64_t id1 = 0, id2 = 0;
    CU_ASSERT_EQUAL(vr_state_begin(st), 0);
    EXPECT_INT(vr_state_put_source(st, "src/a.c", 0xfedcba9876543210ull, &s1,
                                   999, &id1),
               0);
    EXPECT_INT(vr_state_put_source(st, "inc/a.h", 7, &s1, 999, &id2), 0);
    CU_ASSERT_NOT_EQUAL(id1, id2);
    vr_dep deps[2] = {{id1, 0xfedcba9876543210ull, 1}, {id2, 7, 0}};
    vr_art_row a = {
        .source = "src/a.c",
        .profile = "release",
        .key = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 255},
        .config = 0x8000000000000001ull,
        .tool = 42,
        .deps = deps,
        .n_deps = 2,
        .out_path = "/o/a.o",
        .out_st = out,
        .out_hash = 77,
        .duration_ns = 123456};
    EXPECT_INT(vr_state_put_artifact(st, &a), 0);
    vr_job_row j = {.kind = "link",
                    .name = "prog",
                    .profile = "release",
                    .key = {9},
                    .out_path = "/o/prog",
                    .out_st = out,
                    .out_hash = 5,
                    .duration_ns = 9};
    EXPECT_INT(vr_state_put_job(st, &j), 0);
    CU_ASSERT_EQUAL(vr_state_commit(st), 0);
    vr_state_close(st);
    vr_snapshot_free(&snap);

    char *v = sql_text(db, "PRAGMA user_version");
    EXPECT_STR(v, "1");
    free(v);
    v = sql_text(db, "PRAGMA journal_mode");
    EXPECT_STR(v, "wal");
    free(v);

    st = open_ok(dir, 0, &snap, &errs);
    free(errs);
    EXPECT_INT(snap.n_src, 2);
    EXPECT_INT(snap.n_art, 1);
    EXPECT_INT(snap.n_job, 1);
    const vr_art_row *r = &snap.art[0];
    EXPECT_STR(r->source, "src/a.c");
    CU_ASSERT_EQUAL(memcmp(r->key, a.key, 16), 0);
    CU_ASSERT_EQUAL(r->config, a.config);
    EXPECT_INT(r->tool, 42);
    EXPECT_INT(r->n_deps, 2);
    CU_ASSERT_TRUE(r->deps[0].source == id1 && r->deps[0].covered == 1 &&
                   r->deps[0].hash == 0xfedcba9876543210ull);
    CU_ASSERT_TRUE(r->deps[1].source == id2 && r->deps[1].covered == 0 &&
                   r->deps[1].hash == 7);
    CU_ASSERT_TRUE(vr_stamp_equal(&r->out_st, &out));
    EXPECT_INT(r->out_hash, 77);
    EXPECT_INT(r->duration_ns, 123456);
    EXPECT_STR(snap.job[0].out_path, "/o/prog");
    for (size_t i = 0; i < snap.n_src; i++)
        if (snap.src[i].id == id1)
            CU_ASSERT_TRUE(snap.src[i].hash == 0xfedcba9876543210ull &&
                           vr_stamp_equal(&snap.src[i].st, &s1) &&
                           snap.src[i].seen_ns == 999);
    /* The sweep keeps what an artifact names and drops the rest. */
    CU_ASSERT_EQUAL(vr_state_begin(st), 0);
    int64_t id3 = 0;
    EXPECT_INT(vr_state_put_source(st, "gone.h", 1, &s1, 1, &id3), 0);
    size_t dropped = 0;
    EXPECT_INT(vr_state_sweep(st, &dropped), 0);
    EXPECT_INT(dropped, 1);
    CU_ASSERT_EQUAL(vr_state_commit(st), 0);
    vr_state_close(st);
    vr_snapshot_free(&snap);
    v = sql_text(db, "SELECT group_concat(path) FROM sources ORDER BY path");
    CU_ASSERT_TRUE(v != NULL && strstr(v, "gone.h") == NULL &&
                   strstr(v, "inc/a.h") != NULL);
    free(v);
    free(db);
    rm_rf(dir);
    free(dir);
}

static void state_of_a_newer_schema_is_refused_naming_both_versions(void)
{
    char *dir = tmpdir(), *errs = NULL, *db = path2(dir, "state.db");
    vr_snapshot snap;
    vr_state_close(open_ok(dir, 0, &snap, &errs));
    free(errs);
    sql_exec(db, "PRAGMA user_version = 9");
    vr_state *st = NULL;
    char *msg = NULL;
    EXPECT_INT(vr_state_open(&st, dir, 0, &snap, stderr, &msg),
               VSCHED_ECONFIG);
    CU_ASSERT_PTR_NULL(st);
    EXPECT_CONTAINS(msg, db);
    EXPECT_CONTAINS(msg, "state schema version 9, newer than this "
                         "vsched-run's 1");
    CU_ASSERT_EQUAL(access(db, F_OK), 0); /* not moved aside: not corrupt */
    free(msg);
    free(db);
    rm_rf(dir);
    free(dir);
}

/* Replace dir/state.db by `bytes` and open: moved aside, message, empty. */
static void expect_moved_aside(const char *dir, const char *bytes, size_t n,
                               const char *why)
{
    char *db = path2(dir, "state.db"), *aside = path2(dir, "state.db.corrupt");
    FILE *f = fopen(db, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
    char *errs = NULL;
    vr_snapshot snap;
    vr_state *st = open_ok(dir, 0, &snap, &errs);
    EXPECT_CONTAINS(errs, db);
    EXPECT_CONTAINS(errs, why);
    EXPECT_CONTAINS(errs, "moved it to");
    EXPECT_CONTAINS(errs, "building from scratch");
    EXPECT_INT(snap.n_src + snap.n_art + snap.n_job, 0);
    CU_ASSERT_EQUAL(access(aside, F_OK), 0);
    /* the fresh database works */
    CU_ASSERT_EQUAL(vr_state_begin(st), 0);
    CU_ASSERT_EQUAL(vr_state_commit(st), 0);
    vr_state_close(st);
    vr_snapshot_free(&snap);
    free(errs);
    free(db);
    free(aside);
}

static void corrupt_truncated_and_foreign_states_are_moved_aside(void)
{
    char *dir = tmpdir(), *errs = NULL, *db = path2(dir, "state.db");
    vr_snapshot snap;
    vr_state *st = open_ok(dir, 0, &snap, &errs);
    free(errs);
    vr_stamp s = {1, 1, 1, 1};
    CU_ASSERT_EQUAL(vr_state_begin(st), 0);
    char name[64];
    for (int i = 0; i < 2000; i++) { /* several pages */
        int64_t id;
        snprintf(name, sizeof name, "src/some/rather/long/name/%04d.c", i);
        vr_state_put_source(st, name, (uint64_t)i, &s, 1, &id);
    }
    CU_ASSERT_EQUAL(vr_state_commit(st), 0);
    vr_state_close(st);
    vr_snapshot_free(&snap);
    /* truncated to half */
    FILE *f = fopen(db, "rb");
    char *bytes = malloc(1 << 20);
    size_t n = fread(bytes, 1, 1 << 20, f);
    fclose(f);
    CU_ASSERT_TRUE(n > 8192);
    expect_moved_aside(dir, bytes, n / 2, "malformed");
    /* garbage */
    expect_moved_aside(dir, "this is not a database, just text\n", 34,
                       "not a database");
    /* a valid SQLite file of someone else */
    unlink(db);
    sql_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(1);");
    f = fopen(db, "rb");
    n = fread(bytes, 1, 1 << 20, f);
    fclose(f);
    expect_moved_aside(dir, bytes, n, "not a vsched state database");
    free(bytes);
    free(db);
    rm_rf(dir);
    free(dir);
}

static void readonly_open_creates_nothing_and_moves_nothing(void)
{
    char *dir = tmpdir(), *sub = path2(dir, "state"), *errs = NULL;
    vr_snapshot snap;
    vr_state *st = open_ok(sub, VR_STATE_READONLY, &snap, &errs);
    EXPECT_INT(snap.n_art, 0);
    CU_ASSERT_NOT_EQUAL(access(sub, F_OK), 0); /* not even the directory */
    EXPECT_INT(vr_state_begin(st), VSCHED_EIO);
    vr_state_close(st);
    free(errs);
    mkdir(sub, 0777);
    char *db = path2(sub, "state.db");
    put(db, "garbage garbage garbage");
    st = open_ok(sub, VR_STATE_READONLY, &snap, &errs);
    EXPECT_CONTAINS(errs, "planning as if nothing had been built");
    vr_state_close(st);
    char *aside = path2(sub, "state.db.corrupt");
    CU_ASSERT_NOT_EQUAL(access(aside, F_OK), 0);
    CU_ASSERT_EQUAL(access(db, F_OK), 0);
    free(errs);
    free(aside);
    free(db);
    free(sub);
    rm_rf(dir);
    free(dir);
}

/* One source row "a.c" written into the database of `dir`, left open
 * (its -wal beside it) when `keep`, else closed. */
static vr_state *state_with_one_row(const char *dir, int keep)
{
    vr_snapshot snap;
    char *errs = NULL;
    vr_state *st = open_ok(dir, 0, &snap, &errs);
    free(errs);
    vr_snapshot_free(&snap);
    vr_stamp s1 = {1, 2, 3, 4};
    int64_t id = 0;
    CU_ASSERT_EQUAL(vr_state_begin(st), 0);
    EXPECT_INT(vr_state_put_source(st, "a.c", 9, &s1, 5, &id), 0);
    CU_ASSERT_EQUAL(vr_state_commit(st), 0);
    if (keep)
        return st;
    vr_state_close(st);
    return NULL;
}

static void readonly_open_reads_and_writes_no_file(void)
{
    /* characters a URI gives meaning to, in the directory's name */
    char *dir = tmpdir(), *sub = path2(dir, "st ?#%&=ate");
    char *wal = path2(sub, "state.db-wal"), *shm = path2(sub, "state.db-shm");
    mkdir(sub, 0777);
    state_with_one_row(sub, 0);
    CU_ASSERT_NOT_EQUAL(access(wal, F_OK), 0);
    vr_snapshot snap;
    char *errs = NULL;
    vr_state *st = open_ok(sub, VR_STATE_READONLY, &snap, &errs);
    EXPECT_STR(errs, "");
    EXPECT_INT(snap.n_src, 1);
    if (snap.n_src == 1)
        EXPECT_STR(snap.src[0].path, "a.c");
    /* no -wal, no -shm: nothing was created beside the database */
    CU_ASSERT_NOT_EQUAL(access(wal, F_OK), 0);
    CU_ASSERT_NOT_EQUAL(access(shm, F_OK), 0);
    vr_state_close(st);
    vr_snapshot_free(&snap);
    free(errs);
    CU_ASSERT_NOT_EQUAL(access(wal, F_OK), 0);
    /* A run holding the database open: what it committed is in its WAL,
     * and read from there. */
    rm_rf(sub);
    mkdir(sub, 0777);
    vr_state *writer = state_with_one_row(sub, 1);
    CU_ASSERT_EQUAL(access(wal, F_OK), 0);
    st = open_ok(sub, VR_STATE_READONLY, &snap, &errs);
    EXPECT_STR(errs, "");
    EXPECT_INT(snap.n_src, 1);
    vr_state_close(st);
    vr_snapshot_free(&snap);
    free(errs);
    vr_state_close(writer);
    free(wal);
    free(shm);
    free(sub);
    rm_rf(dir);
    free(dir);
}

/* ---- cache ------------------------------------------------------------------- */

static vr_cache *cache_ok(const char *dir, uint64_t max)
{
    vr_cache *c = NULL;
    char *msg = NULL;
    EXPECT_INT(vr_cache_open(&c, dir, max, stderr, &msg), VSCHED_OK);
    free(msg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    return c;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    char *s = calloc(1 << 16, 1);
    size_t n = fread(s, 1, (1 << 16) - 1, f);
    s[n] = '\0';
    fclose(f);
    return s;
}

static void cache_stores_restores_and_remembers_uncovered_deps(void)
{
    char *dir = tmpdir(), *cdir = path2(dir, "cache"),
         *out = path2(dir, "a.o");
    put(out, "object bytes");
    vr_cache *c = cache_ok(cdir, 1 << 20);
    uint8_t key[16] = {0xab, 1, 2};
    vr_cache_dep deps[1] = {{"src/hidden.h", 99}};
    EXPECT_INT(vr_cache_store(c, key, out, 1234, deps, 1), 0);
    EXPECT_INT(vr_cache_commit(c), 0);
    vr_cache_close(c);

    c = cache_ok(cdir, 1 << 20); /* a later run */
    vr_cache_entry e;
    uint8_t other[16] = {1};
    EXPECT_INT(vr_cache_lookup(c, other, &e), VSCHED_ENOENT);
    EXPECT_INT(vr_cache_lookup(c, key, &e), VSCHED_OK);
    EXPECT_STR(e.out_path, out);
    EXPECT_INT(e.hash, 1234);
    EXPECT_INT(e.size, 12);
    EXPECT_INT(e.n_deps, 1);
    EXPECT_STR(e.deps[0].name, "src/hidden.h");
    EXPECT_INT(e.deps[0].hash, 99);
    unlink(out); /* the output is gone: restore it */
    char *tmp = path2(dir, "sub/dir/a.o.tmp");
    EXPECT_INT(vr_cache_restore(c, &e, tmp), VSCHED_OK);
    char *got = read_all(tmp);
    EXPECT_STR(got, "object bytes");
    free(got);
    vr_cache_counts k;
    vr_cache_get_counts(c, &k);
    EXPECT_INT(k.hits, 1);
    EXPECT_INT(k.restored_bytes, 12);
    /* the restored file is modified in place (it shares the entry's inode
     * when hard-linked): the entry is never restored again */
    struct timespec later[2] = {{0, UTIME_OMIT}, {time(NULL) + 5, 0}};
    FILE *f = fopen(tmp, "ab");
    fputs(" changed", f);
    fclose(f);
    utimensat(AT_FDCWD, tmp, later, 0); /* whatever the clock's tick */
    char *tmp2 = path2(dir, "again.tmp");
    int rc = vr_cache_restore(c, &e, tmp2);
    struct stat sa, sb;
    int linked =
        stat(tmp, &sa) == 0 && lstat(tmp2, &sb) == 0 && sa.st_ino == sb.st_ino;
    if (rc == VSCHED_OK && !linked) {
        /* it was a copy: the entry itself is intact and was restored */
        got = read_all(tmp2);
        EXPECT_STR(got, "object bytes");
        free(got);
    }
    vr_cache_entry_clear(&e);
    if (rc != VSCHED_OK || linked) {
        EXPECT_INT(rc, VSCHED_ENOENT);
        CU_ASSERT_NOT_EQUAL(access(tmp2, F_OK), 0);
        EXPECT_INT(vr_cache_lookup(c, key, &e), VSCHED_ENOENT); /* dropped */
    }
    vr_cache_close(c);
    free(tmp);
    free(tmp2);
    free(out);
    free(cdir);
    rm_rf(dir);
    free(dir);
}

static void cache_trims_least_recently_used_first(void)
{
    char *dir = tmpdir(), *cdir = path2(dir, "cache");
    vr_cache *c = cache_ok(cdir, 250); /* room for two 100-byte entries */
    char body[101];
    memset(body, 'x', 100);
    body[100] = '\0';
    uint8_t keys[3][16] = {{1}, {2}, {3}};
    char *outs[3];
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "o%d", i);
        outs[i] = path2(dir, name);
        put(outs[i], body);
        EXPECT_INT(vr_cache_store(c, keys[i], outs[i], (uint64_t)i, NULL, 0),
                   0);
        vr_cache_commit(c);
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL); /* distinct last-use times */
    }
    /* use entry 0 again: entry 1 is now the least recently used */
    vr_cache_entry e;
    EXPECT_INT(vr_cache_lookup(c, keys[0], &e), 0);
    char *tmp = path2(dir, "r.tmp");
    EXPECT_INT(vr_cache_restore(c, &e, tmp), 0);
    vr_cache_entry_clear(&e);
    vr_cache_commit(c);
    EXPECT_INT(vr_cache_trim(c), 0);
    vr_cache_counts k;
    vr_cache_get_counts(c, &k);
    EXPECT_INT(k.trimmed, 1);
    EXPECT_INT(k.total_bytes, 200);
    EXPECT_INT(vr_cache_lookup(c, keys[1], &e), VSCHED_ENOENT);
    EXPECT_INT(vr_cache_lookup(c, keys[0], &e), 0);
    vr_cache_entry_clear(&e);
    EXPECT_INT(vr_cache_lookup(c, keys[2], &e), 0);
    vr_cache_entry_clear(&e);
    vr_cache_close(c);
    for (int i = 0; i < 3; i++)
        free(outs[i]);
    free(tmp);
    free(cdir);
    rm_rf(dir);
    free(dir);
}

static void cache_sizes_parse_with_binary_suffixes(void)
{
    uint64_t v = 1;
    EXPECT_INT(vr_settings_parse_size("0", &v), 0);
    EXPECT_INT(v, 0);
    EXPECT_INT(vr_settings_parse_size("2G", &v), 0);
    EXPECT_INT(v, 2ull << 30);
    EXPECT_INT(vr_settings_parse_size("512m", &v), 0);
    EXPECT_INT(v, 512ull << 20);
    EXPECT_INT(vr_settings_parse_size("100K", &v), 0);
    EXPECT_INT(v, 102400);
    EXPECT_INT(vr_settings_parse_size("7", &v), 0);
    EXPECT_INT(v, 7);
    EXPECT_INT(vr_settings_parse_size("2GB", &v), VSCHED_EINVAL);
    EXPECT_INT(vr_settings_parse_size("-1", &v), VSCHED_EINVAL);
    EXPECT_INT(vr_settings_parse_size("lots", &v), VSCHED_EINVAL);
    EXPECT_INT(vr_settings_parse_size("99999999999T", &v), VSCHED_EINVAL);
}

/* ---- lock ----------------------------------------------------------------------- */

static void lock_held_by_another_process_refuses_without_wait(void)
{
    char *dir = tmpdir(), *state = path2(dir, "a/b/state");
    int ready[2], go[2];
    CU_ASSERT_EQUAL_FATAL(pipe(ready), 0);
    CU_ASSERT_EQUAL_FATAL(pipe(go), 0);
    pid_t child = fork();
    if (child == 0) {
        vr_lock *l = NULL;
        char *msg = NULL;
        char c = vr_lock_take(&l, state, 0, stderr, &msg) == 0 ? 'y' : 'n';
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
            _exit(3);
        vr_lock_release(l);
        _exit(0);
    }
    char c = 0;
    CU_ASSERT_EQUAL(read(ready[0], &c, 1), 1);
    CU_ASSERT_EQUAL(c, 'y');
    vr_lock *l = NULL;
    char *msg = NULL;
    EXPECT_INT(vr_lock_take(&l, state, 0, stderr, &msg), VSCHED_EERR);
    CU_ASSERT_PTR_NULL(l);
    char want[64];
    snprintf(want, sizeof want, "(pid %ld)", (long)child);
    EXPECT_CONTAINS(msg, state);
    EXPECT_CONTAINS(msg, want);
    EXPECT_CONTAINS(msg, "--no-wait");
    free(msg);
    msg = NULL;
    /* waiting: the child lets go after we started waiting */
    FILE *err = tmpfile();
    if (write(go[1], "x", 1) != 1)
        abort();
    EXPECT_INT(vr_lock_take(&l, state, 1, err, &msg), VSCHED_OK);
    CU_ASSERT_PTR_NOT_NULL(l);
    vr_lock_release(l);
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_INT(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
    fclose(err);
    free(state);
    rm_rf(dir);
    free(dir);
}

/* The early part of a run tries the lock without waiting and without
 * creating anything: a missing directory, or a lock another process holds,
 * is refused (EERR) so that the run falls back to vr_lock_take and its
 * messages; a free lock is taken, and then holds off others. */
static void lock_try_takes_only_a_free_existing_lock(void)
{
    char *dir = tmpdir(), *state = path2(dir, "a/b/state");
    vr_lock *l = NULL;
    EXPECT_INT(vr_lock_try(&l, state), VSCHED_EERR);
    CU_ASSERT_PTR_NULL(l);
    struct stat sb;
    CU_ASSERT_NOT_EQUAL(stat(state, &sb), 0); /* created nothing */
    char *msg = NULL;
    EXPECT_INT(vr_lock_take(&l, state, 0, stderr, &msg), VSCHED_OK);
    vr_lock_release(l);
    l = NULL;
    int ready[2], go[2];
    CU_ASSERT_EQUAL_FATAL(pipe(ready), 0);
    CU_ASSERT_EQUAL_FATAL(pipe(go), 0);
    pid_t child = fork();
    if (child == 0) {
        vr_lock *cl = NULL;
        char c = vr_lock_try(&cl, state) == 0 ? 'y' : 'n';
        if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
            _exit(3);
        vr_lock_release(cl);
        _exit(0);
    }
    char c = 0;
    CU_ASSERT_EQUAL(read(ready[0], &c, 1), 1);
    CU_ASSERT_EQUAL(c, 'y'); /* free and present: taken */
    EXPECT_INT(vr_lock_try(&l, state), VSCHED_EERR); /* held: refused */
    CU_ASSERT_PTR_NULL(l);
    EXPECT_INT(vr_lock_take(&l, state, 0, stderr, &msg), VSCHED_EERR);
    free(msg);
    l = NULL;
    if (write(go[1], "x", 1) != 1)
        abort();
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_INT(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
    EXPECT_INT(vr_lock_try(&l, state), VSCHED_OK); /* let go: free again */
    vr_lock_release(l);
    for (int k = 0; k < 2; k++) {
        close(ready[k]);
        close(go[k]);
    }
    free(state);
    rm_rf(dir);
    free(dir);
}

/* ---- the up-to-date check ---------------------------------------------------------- */

/* A load or a deps record of a name the table did not have grows it; what
 * was recorded must land in the grown table (it was once written through
 * a pointer into the array the growth had just freed). */
static void loads_recorded_while_the_table_grows_are_kept(void)
{
    vr_snapshot snap = {0};
    vr_sources *src = vr_sources_new("/nonexistent", &snap);
    char name[32];
    for (unsigned i = 0; i < 1500; i++) {
        snprintf(name, sizeof name, "f%u.c", i);
        vr_sources_loaded(src, name, NULL, 0, 1000 + i);
    }
    unsigned kept = 0;
    for (unsigned i = 0; i < 1500; i++) {
        uint64_t h = 0;
        vr_stamp st;
        int have = 1;
        snprintf(name, sizeof name, "f%u.c", i);
        kept += vr_sources_load_info(src, name, &h, &st, &have) == 1 &&
                h == 1000 + i && have == 0;
    }
    EXPECT_INT(kept, 1500);
    vr_sources_free(src);
}

/* A sources table of the files `names` under dir, each written now (its
 * name as its bytes) and recorded with its hash (hash[i]) and a stamp old
 * enough to be trusted; row ids 1..n. */
static vr_sources *trusted_sources(const char *dir, const char *const *names,
                                   size_t n, uint64_t *hash)
{
    int64_t old = vr_wall_ns() + 10 * VR_RACY_NS;
    vr_snapshot snap = {0};
    snap.src = calloc(n, sizeof *snap.src);
    for (size_t i = 0; i < n; i++) {
        char *p = path2(dir, names[i]);
        vr_stamp st;
        put(p, names[i]);
        vr_hash_file(p, &hash[i], &st);
        snap.src[i] =
            (vr_src_row){(int64_t)i + 1, strdup(names[i]), hash[i], st, old};
        free(p);
    }
    snap.n_src = n;
    return vr_sources_new(dir, &snap);
}

static void dirty_check_gives_the_first_reason_and_reads_only_changed_files(
    void)
{
    char *dir = tmpdir(), *o = path2(dir, "a.o");
    static const char *const names[] = {"a.c", "h.h"};
    uint64_t hs[2];
    vr_sources *src = trusted_sources(dir, names, 2, hs);
    uint64_t ha = hs[0], hh = hs[1], ho;
    put(o, "obj");
    vr_stamp so;
    vr_hash_file(o, &ho, &so);
    vr_dep deps[2] = {{1, ha, 1}, {2, hh, 1}};
    vr_art_row r = {.source = "a.c",
                    .profile = "release",
                    .config = 5,
                    .tool = 6,
                    .deps = deps,
                    .n_deps = 2,
                    .out_path = o,
                    .out_st = so,
                    .out_hash = ho};
    vr_verdict v;
    vr_dirty_artifact(src, NULL, 5, 6, &v, NULL);
    EXPECT_INT(v.reason, VR_NEW);
    vr_verdict_clear(&v);
    vr_dirty_artifact(src, &r, 5, 7, &v, NULL);
    EXPECT_INT(v.reason, VR_TOOL);
    vr_verdict_clear(&v);
    vr_dirty_artifact(src, &r, 4, 6, &v, NULL);
    EXPECT_INT(v.reason, VR_FLAGS);
    vr_verdict_clear(&v);
    uint64_t outs = 0;
    vr_dirty_artifact(src, &r, 5, 6, &v, &outs);
    EXPECT_INT(v.reason, VR_CURRENT);
    EXPECT_INT(vr_sources_hashed(src), 0); /* stat only */
    EXPECT_INT(outs, 0);
    vr_verdict_clear(&v);
    deps[1].hash = hh + 1; /* as if built from another h.h */
    vr_dirty_artifact(src, &r, 5, 6, &v, NULL);
    EXPECT_INT(v.reason, VR_DEP);
    char *t = vr_reason_text(&v);
    EXPECT_STR(t, "dependency h.h changed");
    free(t);
    vr_verdict_clear(&v);
    deps[1].hash = hh;
    unlink(o);
    vr_dirty_artifact(src, &r, 5, 6, &v, NULL);
    EXPECT_INT(v.reason, VR_OUT_MISSING);
    vr_verdict_clear(&v);
    put(o, "OBJ");
    vr_dirty_artifact(src, &r, 5, 6, &v, &outs);
    EXPECT_INT(v.reason, VR_OUT_MODIFIED);
    EXPECT_INT(outs, 1);
    vr_verdict_clear(&v);
    put(o, "obj"); /* rewritten with the same bytes: a new stamp only */
    vr_dirty_artifact(src, &r, 5, 6, &v, &outs);
    EXPECT_INT(v.reason, VR_CURRENT);
    CU_ASSERT_TRUE(v.out_restamped);
    vr_verdict_clear(&v);
    vr_sources_free(src);
    free(o);
    rm_rf(dir);
    free(dir);
}

/* vr_sources_first_changed answers what a vr_sources_current_id per dep
 * would (the first that is not current, or n), once per artifact, from
 * several threads at once. */
typedef struct first_changed_arg {
    vr_sources *src;
    const vr_dep *deps;
    size_t n, answered_n;
} first_changed_arg;

static void *first_changed_thread(void *arg)
{
    first_changed_arg *a = arg;
    for (int i = 0; i < 2000; i++)
        a->answered_n +=
            vr_sources_first_changed(a->src, a->deps, a->n) == a->n;
    return NULL;
}

static void first_changed_finds_the_first_dep_not_current(void)
{
    char *dir = tmpdir(), *g = path2(dir, "g.h");
    static const char *const names[] = {"a.c", "h.h", "g.h"};
    uint64_t hs[3];
    vr_sources *src = trusted_sources(dir, names, 3, hs);
    uint64_t ha = hs[0], hh = hs[1], hg = hs[2];
    vr_dep deps[3] = {{1, ha, 1}, {2, hh, 1}, {3, hg, 1}};
    EXPECT_INT(vr_sources_first_changed(src, deps, 0), 0);
    /* every thread sees every dep current, and nothing is read twice */
    pthread_t th[4];
    first_changed_arg args[4];
    for (int k = 0; k < 4; k++) {
        args[k] = (first_changed_arg){src, deps, 3, 0};
        CU_ASSERT_EQUAL_FATAL(
            pthread_create(&th[k], NULL, first_changed_thread, &args[k]), 0);
    }
    for (int k = 0; k < 4; k++) {
        pthread_join(th[k], NULL);
        EXPECT_INT(args[k].answered_n, 2000);
    }
    EXPECT_INT(vr_sources_hashed(src), 0); /* stat only, once each */
    deps[1].hash = hh + 1;                 /* built from another h.h */
    EXPECT_INT(vr_sources_first_changed(src, deps, 3), 1);
    deps[1].hash = hh;
    deps[2].source = 99; /* a row the state does not have */
    EXPECT_INT(vr_sources_first_changed(src, deps, 3), 2);
    EXPECT_INT(vr_sources_first_changed(src, deps, 2), 2);
    deps[2].source = 3;
    deps[0].hash = VR_HASH_UNKNOWN; /* never hashed: never current */
    EXPECT_INT(vr_sources_first_changed(src, deps, 3), 0);
    deps[0].hash = ha;
    /* a dep not checked yet that is gone: vr_sources_current_id says
     * ENOENT, first_changed points at it */
    vr_sources_free(src);
    src = trusted_sources(dir, names, 3, hs);
    unlink(g);
    EXPECT_INT(vr_sources_first_changed(src, deps, 3), 2);
    uint64_t cur = 0;
    EXPECT_INT(vr_sources_current_id(src, 3, &cur), VSCHED_ENOENT);
    EXPECT_INT(vr_sources_first_changed(src, deps, 2), 2);
    vr_sources_free(src);
    free(g);
    rm_rf(dir);
    free(dir);
}

/* ---- the string map ------------------------------------------------------------------ */

/* Every key is found across growths (slots keep their hash: a growth
 * rehashes no string), a value is replaced in place, a key the map takes
 * over is freed when it was there already (ASan: no leak), and composite
 * keys are the parts joined by 0x1f. */
static void strmap_keeps_every_key_across_growth(void)
{
    vr_strmap *m = vr_strmap_new(0);
    char k[64];
    for (long i = 0; i < 5000; i++) {
        snprintf(k, sizeof k, "src/f%04ld.c", i);
        if (i % 2)
            vr_strmap_put(m, k, i);
        else
            vr_strmap_put_owned(m, strdup(k), i);
    }
    vr_strmap_put(m, "", 7);
    long found = 0;
    for (long i = 0; i < 5000; i++) {
        snprintf(k, sizeof k, "src/f%04ld.c", i);
        found += vr_strmap_get(m, k) == i;
    }
    EXPECT_INT(found, 5000);
    EXPECT_INT(vr_strmap_get(m, ""), 7);
    EXPECT_INT(vr_strmap_get(m, "src/f5000.c"), -1);
    EXPECT_INT(vr_strmap_get(m, "src/f0001.c\x1f"), -1);
    vr_strmap_put(m, "src/f0001.c", 42);
    vr_strmap_put_owned(m, strdup("src/f0002.c"), 43);
    EXPECT_INT(vr_strmap_get(m, "src/f0001.c"), 42);
    EXPECT_INT(vr_strmap_get(m, "src/f0002.c"), 43);
    char *two = vr_strmap_key("a.c", "release", NULL);
    char *none = vr_strmap_key("a.c", NULL, NULL);
    char *three = vr_strmap_key("link", "app", "debug");
    EXPECT_STR(two, "a.c\x1frelease");
    EXPECT_STR(none, "a.c\x1f");
    EXPECT_STR(three, "link\x1f"
                      "app\x1f"
                      "debug");
    vr_strmap_put_owned(m, two, 1);
    vr_strmap_put_owned(m, none, 2);
    vr_strmap_put_owned(m, three, 3);
    EXPECT_INT(vr_strmap_get(m, "a.c\x1frelease"), 1);
    EXPECT_INT(vr_strmap_get(m, "a.c\x1f"), 2);
    EXPECT_INT(vr_strmap_get(m, "link\x1f"
                                "app\x1f"
                                "debug"),
               3);
    vr_strmap_free(m);
}

/* ---- the report's status words ------------------------------------------------------ */

static void report_status_words_follow_how_the_run_ended(void)
{
    vr_run_info plain = {0}, stopped = {0}, interrupted = {0};
    stopped.stopped = 1;
    interrupted.interrupted = 1;
    interrupted.stopped = 1;
    EXPECT_STR(vr_report_status(0, VSCHED_EERR, &plain), "ok"); /* current */
    EXPECT_STR(vr_report_status(1, 0, &plain), "ok");
    EXPECT_STR(vr_report_status(1, VSCHED_ETOOL, &plain), "failed");
    EXPECT_STR(vr_report_status(1, VSCHED_EDEPFAIL, &plain),
               "dependency_failed");
    EXPECT_STR(vr_report_status(1, VSCHED_ECANCELLED, &stopped), "skipped");
    EXPECT_STR(vr_report_status(1, VSCHED_ECANCELLED, &interrupted),
               "cancelled");
    EXPECT_STR(vr_report_status(1, VSCHED_ECANCELLED, &plain), "cancelled");
}

int main(void)
{
    static const vr_cu_test tests[] = {
#define T_(name) {#name, name}
        T_(json_escapes_quotes_backslashes_and_every_control_byte),
        T_(json_keeps_valid_utf8_and_replaces_every_invalid_byte),
        T_(json_document_layout_and_misuse_is_reported),
        T_(file_hash_equals_the_hash_of_its_bytes_small_and_large),
        T_(stamp_taken_right_after_a_write_is_not_trusted),
        T_(state_round_trip_keeps_every_field),
        T_(state_of_a_newer_schema_is_refused_naming_both_versions),
        T_(corrupt_truncated_and_foreign_states_are_moved_aside),
        T_(readonly_open_creates_nothing_and_moves_nothing),
        T_(readonly_open_reads_and_writes_no_file),
        T_(cache_stores_restores_and_remembers_uncovered_deps),
        T_(cache_trims_least_recently_used_first),
        T_(cache_sizes_parse_with_binary_suffixes),
        T_(lock_held_by_another_process_refuses_without_wait),
        T_(lock_try_takes_only_a_free_existing_lock),
        T_(dirty_check_gives_the_first_reason_and_reads_only_changed_files),
        T_(first_changed_finds_the_first_dep_not_current),
        T_(loads_recorded_while_the_table_grows_are_kept),
        T_(strmap_keeps_every_key_across_growth),
        T_(report_status_words_follow_how_the_run_ended),
#undef T_
        {NULL, NULL},
    };
    return vr_cu_main("incr", tests);
}
