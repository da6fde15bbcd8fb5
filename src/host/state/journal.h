/*
 * journal -- outputs published and not yet recorded.
 *
 * An output is renamed into place by the worker that made it; its record
 * reaches the state database later, in the recorder's next transaction.
 * A run killed in between leaves a file no record vouches for: it may be
 * the object of content the sources no longer have, or of a file that
 * then leaves the build, whose outputs are found (and removed) only
 * through their records. So before an output is handed over for
 * publication, its path is appended to STATE_DIR/published (one
 * write(2) of the path and a NUL; a SIGKILL cannot undo a finished
 * write), and the file is emptied once the run's records are committed.
 * The next run that takes the state directory settles what a killed run
 * left before it plans: a listed path that no record vouches for (a row
 * with that output whose recorded stamp is the file's) is removed, and
 * said so; the input it belonged to is then rebuilt, or, when it left
 * the build, nothing is left of it. --clean removes every listed path.
 *
 * Thread-safety: vr_journal_note may be called from any thread (a leaf
 * mutex guards the descriptor); the rest by the main thread, under the
 * state directory's lock (lock.h).
 */
#ifndef VSCHED_HOST_JOURNAL_H
#define VSCHED_HOST_JOURNAL_H

#include <stdio.h>

#include "state/state.h"

typedef struct vr_journal vr_journal;

/* Open STATE_DIR/published for appending (created when absent, mode
 * 0666 less the umask). Returns 0 with *out set, or VSCHED_EIO with *msg
 * (heap) naming the file and the cause. */
int vr_journal_open(vr_journal **out, const char *state_dir, char **msg);

/* `path` (absolute) is about to be published. A failed write is
 * remembered: vr_journal_clear then leaves the file as it is. NULL
 * journal or path: a no-op. */
void vr_journal_note(vr_journal *j, const char *path);

/* Every path noted so far is recorded (the state is committed): empty
 * the file. */
void vr_journal_clear(vr_journal *j);

/* Close (NULL is a no-op); the file stays as it is. */
void vr_journal_close(vr_journal *j);

/* Settle STATE_DIR/published as a killed run left it: remove each listed
 * file that no record of `snap` vouches for (every listed file when
 * `all`), saying "vsched-run: removed PATH (published by a run killed
 * before recording it)" on `out` unless `quiet`, then empty the journal.
 * A missing journal is an empty one. Returns how many files were
 * removed. */
size_t vr_journal_settle(const char *state_dir, const vr_snapshot *snap,
                         int all, FILE *out, int quiet);

#endif
