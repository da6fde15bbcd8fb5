/*
 * mock_host.h -- a fake plugin host for calling plugin operations
 * directly, the way vsched-run calls them, and the assertions the test
 * programs share.
 *
 *   - EXPECT_INT / EXPECT_STR / EXPECT_CONTAINS (from cu.h).
 *   - a context (MOCK, mock_ctx()): diagnostics collected as text lines
 *     "FILE:LINE: SEVERITY: MESSAGE" with counts, a cancellation flag,
 *     the allocator on malloc.
 *   - a configuration (mock_cfg): a table of SECTION/KEY/VALUE, the
 *     plugin's schema defaults for its own section behind it, presented
 *     as a 1.0 host's vsched_config.
 *   - scratch files: a directory, paths in it, files written (with their
 *     directories), a tree removed.
 *
 * Not thread-safe but for the cancellation flag (atomic) and the
 * configuration's reads: one test at a time owns MOCK and its configs.
 */
#ifndef VSCHED_TESTS_MOCK_HOST_H
#define VSCHED_TESTS_MOCK_HOST_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <vsched/plugin.h>

#include "cu.h" /* EXPECT_INT, EXPECT_STR, EXPECT_CONTAINS */

/* ---- the context ---------------------------------------------------------- */

/* What a plugin said and whether its work is cancelled. */
typedef struct mock_host {
    vsched_ctx ctx;
    char diag[1 << 16]; /* every diagnostic, one line each, cut when full */
    size_t dlen;
    int n_err, n_warn;
    atomic_int cancel; /* is_cancelled() answers this */
} mock_host;

/* The one context of the program (reset by mock_ctx()). */
extern mock_host MOCK;

/* `h` reset (no diagnostics, not cancelled); its context. For a thread
 * that needs diagnostics of its own. */
const vsched_ctx *mock_ctx_init(mock_host *h);
/* mock_ctx_init(&MOCK). */
const vsched_ctx *mock_ctx(void);

/* ---- the configuration ---------------------------------------------------- */

typedef struct mock_kv {
    const char *section, *key, *value;
} mock_kv;

#define MOCK_KV_MAX 48

/* A plugin's configuration: borrowed by the instance made from it, so it
 * must outlive that instance; the strings it points to too. */
typedef struct mock_cfg {
    vsched_config cfg;
    const vsched_plugin *plugin; /* its schema gives the defaults */
    mock_kv kv[MOCK_KV_MAX + 1]; /* terminated by a NULL section */
    size_t n;
} mock_cfg;

/* `c` made the configuration of `plugin`'s section `section` as a 1.0
 * host gives it (config_dir `dir`), holding the entries of `kv` (NULL,
 * or terminated by a NULL section). get() answers the table's value,
 * else the schema default in `section`, else NULL. */
void mock_cfg_init(mock_cfg *c, const vsched_plugin *plugin,
                   const char *section, const char *dir, const mock_kv *kv);
/* One entry more (aborts past MOCK_KV_MAX: a test's mistake). */
void mock_cfg_add(mock_cfg *c, const char *section, const char *key,
                  const char *value);

/* ---- scratch files -------------------------------------------------------- */

/* A new directory /tmp/vsched-test-WHAT-XXXXXX (malloc). */
char *mock_tmpdir(const char *what);
/* dir/rel (malloc). */
char *mock_path2(const char *dir, const char *rel);
/* Write `text` to dir/rel, creating the directories under dir. */
void mock_put(const char *dir, const char *rel, const char *text);
/* Remove the tree `dir` and free the string. */
void mock_rm_rf(char *dir);
/* Number of files under `dir` whose name contains `part`, or -1. */
int mock_count_named(const char *dir, const char *part);

#endif
