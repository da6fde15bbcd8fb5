/*
 * signals -- the signal thread; see signals.h.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/signals.h"

static pthread_mutex_t vr_sig_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t vr_sig_idle = PTHREAD_COND_INITIALIZER;
static vr_sig_phase vr_sig_mode = VR_SIG_EXIT; /* guarded by vr_sig_lock */
static vsched *vr_sig_sched;                   /* guarded by vr_sig_lock */
static int vr_sig_busy;                        /* guarded by vr_sig_lock */
static int vr_sig_wake = -1;                   /* guarded by vr_sig_lock */
static atomic_int vr_sig_count;

static void *vr_signals_main(void *arg)
{
    sigset_t *set = arg;
    for (;;) {
        int sig = 0;
        if (sigwait(set, &sig) != 0)
            continue;
        atomic_fetch_add(&vr_sig_count, 1);
        pthread_mutex_lock(&vr_sig_lock);
        vr_sig_phase mode = vr_sig_mode;
        vsched *s = vr_sig_sched;
        if (mode == VR_SIG_CANCEL && s != NULL)
            vr_sig_busy = 1;
        int wake = mode == VR_SIG_WAKE ? vr_sig_wake : -1;
        if (wake >= 0) {
            char c = 1;
            ssize_t w = write(wake, &c, 1); /* under the lock: fd open */
            (void)w;
        }
        pthread_mutex_unlock(&vr_sig_lock);
        if (mode == VR_SIG_EXIT || (mode == VR_SIG_WAKE && wake < 0))
            _exit(VR_EXIT_INTERRUPTED);
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
        sigtimedwait(set, NULL, &grace);
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
    if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
        return -1;
    pthread_t t;
    if (pthread_create(&t, NULL, vr_signals_main, &set) != 0) {
        pthread_sigmask(SIG_UNBLOCK, &set, NULL);
        return -1;
    }
    pthread_detach(t);
    return 0;
}

/* Contract: see signals.h. */
void vr_signals_phase(vr_sig_phase phase, vsched *s)
{
    pthread_mutex_lock(&vr_sig_lock);
    while (vr_sig_busy)
        pthread_cond_wait(&vr_sig_idle, &vr_sig_lock);
    vr_sig_mode = phase;
    vr_sig_sched = phase == VR_SIG_CANCEL ? s : NULL;
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
