/*
 * signals -- the signal thread; see signals.h.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/signals.h"

static pthread_mutex_t vr_sig_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t vr_sig_idle = PTHREAD_COND_INITIALIZER;
static vr_sig_phase vr_sig_mode = VR_SIG_EXIT; /* guarded by vr_sig_lock */
static vsched *vr_sig_sched;                   /* guarded by vr_sig_lock */
static int vr_sig_busy;                        /* guarded by vr_sig_lock */
static int vr_sig_wake = -1;                   /* guarded by vr_sig_lock */
static int vr_sig_started_build; /* a scheduler ran; guarded by vr_sig_lock */
static atomic_int vr_sig_count;
static pthread_t vr_sig_thread;    /* written by start, read by stop (main) */
static int vr_sig_started;         /* main thread only */
static atomic_int vr_sig_stopping; /* set by stop before it wakes the thread */

/* The wake-up vr_signals_stop sends the thread (blocked everywhere,
 * taken only by the thread's sigwait; sent by anyone else, ignored). */
#define VR_SIG_STOP_SIGNAL SIGUSR1

/* Call fn(pgid) for the process group of every child of this process
 * that leads a group of its own (tools run by plugins); 0 children ->
 * returns 0, else how many it saw. Reads /proc: no signal-safety is
 * needed, the signal thread is an ordinary thread. */
static int vr_each_child_group(void (*fn)(pid_t))
{
    DIR *d = opendir("/proc");
    if (d == NULL)
        return 0;
    pid_t self = getpid(), own = getpgrp();
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end, path[64], buf[512];
        long pid = strtol(e->d_name, &end, 10);
        if (*end != '\0' || pid <= 0)
            continue;
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "re");
        if (f == NULL)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        char *rp = strrchr(buf, ')'); /* the name may hold spaces */
        char state;
        long ppid, pgid;
        if (rp == NULL ||
            sscanf(rp + 1, " %c %ld %ld", &state, &ppid, &pgid) != 3 ||
            ppid != (long)self || state == 'Z')
            continue;
        n++;
        fn(pgid != (long)own ? (pid_t)-pgid : (pid_t)pid);
    }
    closedir(d);
    return n;
}

static void vr_term(pid_t target)
{
    kill(target, SIGTERM);
}
static void vr_kill(pid_t target)
{
    kill(target, SIGKILL);
}

/* Before an exit that does not wait for the build to wind down: every
 * tool a plugin started (in a process group of its own) gets SIGTERM,
 * then SIGKILL after at most VR_SIG_REAP_MS -- or SIGKILL at once when
 * the user asked for that (a second signal); their partial outputs are
 * left for the next run to sweep (plugins name them .tmp.PID.N). */
static void vr_end_children(int at_once)
{
    if (at_once) {
        vr_each_child_group(vr_kill);
        return;
    }
    if (vr_each_child_group(vr_term) == 0)
        return;
    for (int i = 0; i < VR_SIG_REAP_MS / 10; i++) {
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
        if (vr_each_child_group(vr_term) == 0)
            return;
    }
    vr_each_child_group(vr_kill);
}

/* The run ends here and now: keep its other threads from printing while
 * the tools are ended (the main thread, woken by their end, would print
 * a summary of a run that did not finish). Takes stdio's locks, waiting
 * at most 100 ms for a writer that holds one (a full pipe). */
static void vr_hush(void)
{
    FILE *f[2] = {stdout, stderr};
    struct timespec tick = {0, 1000000L};
    for (int i = 0; i < 2; i++)
        for (int t = 0; t < 100 && ftrylockfile(f[i]) != 0; t++)
            nanosleep(&tick, NULL);
}

static void *vr_signals_main(void *arg)
{
    sigset_t *set = arg;
    for (;;) {
        int sig = 0;
        if (sigwait(set, &sig) != 0)
            continue;
        if (sig == VR_SIG_STOP_SIGNAL) {
            if (atomic_load(&vr_sig_stopping))
                return NULL;
            continue;
        }
        atomic_fetch_add(&vr_sig_count, 1);
        pthread_mutex_lock(&vr_sig_lock);
        vr_sig_phase mode = vr_sig_mode;
        vsched *s = vr_sig_sched;
        if (mode == VR_SIG_CANCEL && s != NULL)
            vr_sig_busy = 1;
        int wake = mode == VR_SIG_WAKE ? vr_sig_wake : -1;
        int before_build = mode == VR_SIG_EXIT && !vr_sig_started_build;
        if (wake >= 0) {
            char c = 1;
            ssize_t w = write(wake, &c, 1); /* under the lock: fd open */
            (void)w;
        }
        pthread_mutex_unlock(&vr_sig_lock);
        if (mode == VR_SIG_EXIT || (mode == VR_SIG_WAKE && wake < 0)) {
            vr_hush();
            if (before_build) { /* else the summary said what was built */
                static const char m[] =
                    "vsched-run: interrupted before anything was built\n";
                ssize_t w = write(STDERR_FILENO, m, sizeof m - 1);
                (void)w;
            }
            vr_end_children(0);
            _exit(VR_EXIT_INTERRUPTED);
        }
        if (mode == VR_SIG_CANCEL && s != NULL) {
            vsched_cancel(s, "interrupted");
            pthread_mutex_lock(&vr_sig_lock);
            vr_sig_busy = 0;
            pthread_cond_broadcast(&vr_sig_idle);
            pthread_mutex_unlock(&vr_sig_lock);
        }
        /* The run now winds down; a second signal, or the grace period
         * running out, ends it whatever it is doing. */
        struct timespec grace = {VR_SIG_GRACE_S, 0};
        int again;
        do
            again = sigtimedwait(set, NULL, &grace);
        while (again == VR_SIG_STOP_SIGNAL && !atomic_load(&vr_sig_stopping));
        if (again == VR_SIG_STOP_SIGNAL)
            return NULL; /* the run ended in time: main exits 130 itself */
        vr_hush();
        vr_end_children(again > 0); /* a second signal: at once */
        _exit(VR_EXIT_INTERRUPTED);
    }
    return NULL;
}

/* Contract: see signals.h. */
int vr_signals_start(void)
{
    static sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, VR_SIG_STOP_SIGNAL);
    /* A reader that went away (`| head -1`) or a file-size limit must
     * not kill the run: the write fails (EPIPE, EFBIG) and is handled. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
        return -1;
    if (pthread_create(&vr_sig_thread, NULL, vr_signals_main, &set) != 0) {
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        return -1;
    }
    vr_sig_started = 1;
    return 0;
}

/* Contract: see signals.h. The thread is woken where it waits by
 * VR_SIG_STOP_SIGNAL sent to it alone (no pthread_cancel: unwinding a thread
 * that way upsets ASan), never inside vsched_cancel: `busy` is waited
 * out first, and the phase set to VR_SIG_EXIT so a signal arriving
 * meanwhile exits. */
void vr_signals_stop(void)
{
    if (!vr_sig_started)
        return;
    vr_sig_started = 0;
    pthread_mutex_lock(&vr_sig_lock);
    while (vr_sig_busy)
        pthread_cond_wait(&vr_sig_idle, &vr_sig_lock);
    vr_sig_mode = VR_SIG_EXIT;
    vr_sig_sched = NULL;
    pthread_mutex_unlock(&vr_sig_lock);
    atomic_store(&vr_sig_stopping, 1);
    pthread_kill(vr_sig_thread, VR_SIG_STOP_SIGNAL);
    pthread_join(vr_sig_thread, NULL);
}

/* Contract: see signals.h. */
void vr_signals_phase(vr_sig_phase phase, vsched *s)
{
    pthread_mutex_lock(&vr_sig_lock);
    while (vr_sig_busy)
        pthread_cond_wait(&vr_sig_idle, &vr_sig_lock);
    vr_sig_mode = phase;
    vr_sig_sched = phase == VR_SIG_CANCEL ? s : NULL;
    vr_sig_started_build |= phase == VR_SIG_CANCEL;
    int late = phase == VR_SIG_CANCEL && atomic_load(&vr_sig_count) > 0;
    pthread_mutex_unlock(&vr_sig_lock);
    if (late && s != NULL)
        vsched_cancel(s, "interrupted"); /* it came while planning */
}

/* Contract: see signals.h. */
void vr_signals_wake_fd(int fd)
{
    pthread_mutex_lock(&vr_sig_lock);
    vr_sig_wake = fd;
    pthread_mutex_unlock(&vr_sig_lock);
}

/* Contract: see signals.h. */
int vr_signals_caught(void)
{
    return atomic_load(&vr_sig_count) > 0;
}
