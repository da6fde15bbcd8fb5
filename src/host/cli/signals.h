/*
 * signals -- SIGINT and SIGTERM for vsched-run: cancel in-flight work,
 * keep the state consistent, exit 130.
 *
 * Both signals are blocked in every thread (vr_signals_start must run
 * before any other thread exists) and taken by one thread in sigwait(2),
 * so nothing runs in a signal handler. What the first signal does
 * depends on the phase the main thread declared:
 *
 *   VR_SIG_EXIT     nothing is in flight (waiting for the state lock,
 *                   planning): exit 130 at once; SQLite rolls back any
 *                   open transaction and the kernel drops the lock;
 *   VR_SIG_CANCEL   a scheduler runs: vsched_cancel it, so running
 *                   compiles are stopped and the build ends; what finished
 *                   is still recorded; the run then exits 130;
 *   VR_SIG_DEFER    recording and reporting: remember it; the run exits
 *                   130 when done;
 *   VR_SIG_WAKE     --watch waits for changes between builds (nothing in
 *                   flight, the state committed): write one byte to the
 *                   descriptor given by vr_signals_wake_fd, so the watch
 *                   loop wakes and ends the run with 130 itself.
 *
 * A second signal exits 130 at once in any phase, and so does the end of
 * a grace period of VR_SIG_GRACE_S seconds after the first (a run asked
 * to stop never outlives it: cancelled compiles end within a second, the
 * last records and the report take far less). Such an exit first ends
 * the process group of every child (plugins run tools in groups of their
 * own, which a signal to vsched-run's group does not reach): SIGTERM,
 * SIGKILL after VR_SIG_REAP_MS; partial outputs they leave are removed by
 * the next run that writes (cc and cmd sweep their out_dir for
 * temporaries of dead runs before their first output).
 *
 * SIGPIPE and SIGXFSZ are ignored: a closed standard output does not stop
 * the build (what it prints is dropped, quietly), and a write past
 * `ulimit -f` fails with EFBIG as that file's failure.
 *
 * Thread-safety: `lock` (host rank, never held while calling the
 * library) guards the phase and the scheduler; `busy` and its condition
 * variable let vr_signals_phase wait until a vsched_cancel in progress on
 * the signal thread has returned, so the scheduler can be destroyed
 * safely afterwards.
 */
#ifndef VSCHED_HOST_SIGNALS_H
#define VSCHED_HOST_SIGNALS_H

#include <vsched/vsched.h>

#define VR_SIG_GRACE_S 10
#define VR_SIG_REAP_MS 500

typedef enum vr_sig_phase {
    VR_SIG_EXIT = 0,
    VR_SIG_CANCEL = 1,
    VR_SIG_DEFER = 2,
    VR_SIG_WAKE = 3
} vr_sig_phase;

/* Block SIGINT/SIGTERM and start the waiting thread. 0 or VSCHED_EERR
 * (then the signals keep their default action). */
int vr_signals_start(void);

/* Enter a phase; `s` is the scheduler for VR_SIG_CANCEL (else NULL).
 * Leaving VR_SIG_CANCEL waits for a cancel in progress to return. */
void vr_signals_phase(vr_sig_phase phase, vsched *s);

/* The descriptor VR_SIG_WAKE writes to (-1: none; then VR_SIG_WAKE acts
 * as VR_SIG_EXIT). The caller keeps it open while the phase lasts. */
void vr_signals_wake_fd(int fd);

/* End the signal thread (woken by SIGUSR1 sent to it alone, joined:
 * nothing of it outlives the run, which valgrind checks) before main
 * returns; SIGINT/SIGTERM stay blocked, so one arriving after it is
 * dropped as the process exits. SIGUSR1 sent from outside is ignored.
 * No-op when vr_signals_start failed or was not called. Main thread
 * only. */
void vr_signals_stop(void);

/* 1 once SIGINT or SIGTERM arrived. */
int vr_signals_caught(void);

#endif
