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
 * A note is "INO:SIZE:MTIME:PATH" and the NUL: the stamp of the
 * temporary about to be renamed onto PATH (a rename keeps all three).
 * Only the file a note describes is ever removed: one gone, replaced or
 * rewritten since (by the user, by a later publication, or a note that
 * names some other file) is left alone, and so is a note without a
 * stamp (cut short, or not this format). An output the executor hands
 * over as bytes, with no temporary (the scheduler writes it), gets no
 * note: it is never removed on the journal's word.
 *
 * Thread-safety: vr_journal_note may be called from any thread (a leaf
 * mutex guards the descriptor); the rest by the main thread, under the
 * state directory's lock (lock.h).
 */
#ifndef VSCHED_HOST_JOURNAL_H
#define VSCHED_HOST_JOURNAL_H

#include <stdio.h>

#include "common/strmap.h"
#include "state/state.h"

typedef struct vr_journal vr_journal;

/* Open STATE_DIR/published for appending (created when absent, mode
 * 0666 less the umask). Returns 0 with *out set, or VSCHED_EIO with *msg
 * (heap) naming the file and the cause. The journal is read, emptied and
 * appended to only when that name is a regular file: a symbolic link
 * there is never followed (it would empty the file it points to), and
 * anything else at the name makes this fail saying to remove it. */
int vr_journal_open(vr_journal **out, const char *state_dir, char **msg);

/* `path` (absolute) is about to be published by renaming `tmp_path`
 * onto it: note it with the temporary's stamp. A failed write is
 * remembered: vr_journal_clear then leaves the file as it is. NULL
 * journal, path or tmp_path, or a temporary that cannot be stat'ed: a
 * no-op. */
void vr_journal_note(vr_journal *j, const char *path, const char *tmp_path);

/* Every path noted so far is recorded (the state is committed): empty
 * the file. */
void vr_journal_clear(vr_journal *j);

/* Close (NULL is a no-op); the file stays as it is. */
void vr_journal_close(vr_journal *j);

/* Remove the output `path` if it lies inside the output directory
 * `out_real` (realpath of the settings' out_dir, or NULL for none;
 * vr_path_resolve_inside): the one rule for every output the host
 * removes on a record's word (a state row, --clean). Returns the path
 * removed (heap), or NULL: absent, not inside (said on `err` unless
 * `quiet`: "vsched-run: kept PATH: it is not under [executor] out_dir"),
 * a directory (kept, said the same way: "... it is a directory, not an
 * output"), or not removable (said on `err`). */
char *vr_output_remove(const char *out_real, const char *path, FILE *err,
                       int quiet);

/* What vr_output_remove(out_real, path) would remove, decided by the same
 * rule, removing nothing: the resolved path (heap), or NULL with what is
 * kept, and why, said on `err` as vr_output_remove says it (NULL: said
 * nowhere). NULL or empty `path` names no output. -n lists these. */
char *vr_output_target(const char *out_real, const char *path, FILE *err);

/* Remove `at` (a vr_output_target result, taken; NULL is a no-op): `at`
 * when it was removed, else NULL, what failed said on `err` (a directory
 * found there since, unless `quiet`). */
char *vr_output_unlink(char *at, FILE *err, int quiet);

/* 0 when STATE_DIR/published is absent or the journal's own regular
 * file, which can be written when `to_write` (else read); else
 * VSCHED_EIO with *msg (heap) saying what is wrong and what to do, as
 * vr_journal_open would. For --clean, which settles the journal without
 * opening it (to_write), and -n, which opens nothing but refuses what the
 * run would (not to_write: a state directory it may only read is fine). */
int vr_journal_check(const char *state_dir, int to_write, char **msg);

/* Remove STATE_DIR/published (absent is fine), once vr_journal_check
 * passed and it is settled: --clean leaves no state but the lock. 0, or
 * VSCHED_EIO with *msg (heap). */
int vr_journal_remove(const char *state_dir, char **msg);

/* Settle STATE_DIR/published as a run that did not record its outputs
 * (killed, or its state could not be written) left it: remove each noted
 * file that is still the one noted, that lies inside `out_dir` (the
 * settings' out_dir, vr_path_inside: a note naming any other file, which
 * anyone who can stat it could forge, is no output) and that no record
 * of `snap` vouches for (holds its stamp), saying
 * "vsched-run: removed PATH (published by an earlier run that did not
 * record it)" on `out` unless `quiet`; then empty the journal (a failure
 * to is said on `err`). Nothing is removed when out_dir is NULL or
 * missing. Anything but the journal's own regular file at its name, or
 * a journal that cannot be opened, is neither read nor emptied and is
 * left for vr_journal_open to say what is wrong with it.
 * A missing journal is an empty one. Returns how many files were
 * removed. */
size_t vr_journal_settle(const char *state_dir, const char *out_dir,
                         const vr_snapshot *snap, FILE *out, FILE *err,
                         int quiet);

/* What vr_journal_settle would remove, each resolved path
 * put in `set`, nothing removed or printed: what -n plans as missing.
 * Returns how many were new to `set`. */
size_t vr_journal_pending(const char *state_dir, const char *out_dir,
                          const vr_snapshot *snap, vr_strmap *set);

/* What vr_journal_settle would remove, one line each on
 * `out`: "remove PATH (published by an earlier run that did not record
 * it)", for -n; nothing is removed or emptied. Each PATH (resolved) is
 * put in `listed` and none already there is listed: settling removes a
 * file noted twice once. Returns how many lines. */
size_t vr_journal_list(const char *state_dir, const char *out_dir,
                       const vr_snapshot *snap, vr_strmap *listed, FILE *out);

#endif
