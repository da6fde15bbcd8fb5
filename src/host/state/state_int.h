/*
 * state_int -- what the two files of the state database share. Private to
 * src/host/state/state*.c (the rest of the host uses state.h).
 *
 *   state.c       opening (schema, version, corrupt or foreign files moved
 *                 aside), closing, transactions, removal
 *   state_rows.c  the rows: the deps encoding, reading the snapshot, the
 *                 puts and drops, the sweep
 */
#ifndef VSCHED_HOST_STATE_INT_H
#define VSCHED_HOST_STATE_INT_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "state/state.h"

/* The prepared writes, made once at open (state.c), used by state_rows.c. */
enum {
    Q_PUT_SOURCE,
    Q_PUT_ARTIFACT,
    Q_DROP_ARTIFACT,
    Q_PUT_JOB,
    Q_DROP_JOB,
    Q_DROP_SOURCE,
    Q_N
};

struct vr_state {
    sqlite3 *db; /* NULL: read-only run without a database */
    char *path;  /* STATE_DIR/state.db */
    char *shown; /* path as messages print it (escape.h) */
    /* READONLY with a -wal beside path: the private directory holding the
     * copy of the database and its WAL that is read instead (removed at
     * close), else NULL. */
    char *copy_dir;
    FILE *err; /* where the one corruption message goes */
    unsigned flags;
    int broken; /* a write failed: no more writes, move aside */
    int in_txn;
    sqlite3_stmt *q[Q_N];
};

/* Report the first failed write (once, on st->err), then refuse writes;
 * returns VSCHED_EIO. */
int vr__state_fail(vr_state *st, const char *what);
/* 1 when writes may go on: a database, not broken, not read-only. */
int vr__state_usable(const vr_state *st);
/* Read every table in one read transaction into *snap; a SQLite status.
 * On failure *snap is empty and *why (heap) is SQLite's message for the
 * failure, taken before the rollback (which resets it to "not an
 * error"). */
int vr__state_load(vr_state *st, vr_snapshot *snap, char **why);

/* SQLite keeps 64-bit integers signed; hashes and inodes are unsigned. */
static inline int64_t vr__u2i(uint64_t v)
{
    int64_t i;
    memcpy(&i, &v, sizeof i);
    return i;
}

static inline uint64_t vr__i2u(int64_t v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

#endif
