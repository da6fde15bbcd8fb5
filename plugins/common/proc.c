/*
 * proc.c -- running a tool for an executor plugin.
 *
 * A tool runs from an argv with posix_spawnp (a shell only when the
 * plugin's argv asks for one), in a process group of its own, with stdin
 * on /dev/null. Its stdout and stderr go to one pipe drained while it
 * runs (a chatty tool never blocks on a full pipe), or stdout to a file
 * and stderr to the pipe. The wait polls the pipe and a pidfd of the
 * child with a 50 ms tick, checking cancellation and the timeout at each
 * tick; a cancelled or timed-out tool's whole group gets SIGTERM, then
 * SIGKILL after a second, so the helpers it started go too. The leader
 * is reaped only after the group is signalled: until then its pid, which
 * is the group's id, cannot be reused.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vp.h"

extern char **environ;

#define VP_TICK_MS 50

static long long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int cancelled(const vsched_ctx *ctx)
{
    return ctx->is_cancelled != NULL && ctx->is_cancelled(ctx);
}

/* ---- output capture ------------------------------------------------------ */

/* Read what is available on `fd`; 0 at end of file or on error, 1 while
 * the pipe is open. Past VP_OUTPUT_MAX the rest is read and dropped. */
static int drain(int fd, vp_output *o)
{
    char chunk[16384];
    for (;;) {
        ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 && errno == EAGAIN;
        size_t keep = (size_t)r;
        if (o->n + keep > VP_OUTPUT_MAX) {
            keep = VP_OUTPUT_MAX - o->n;
            o->truncated = 1;
        }
        if (o->n + keep + 1 > o->cap) {
            size_t cap = o->cap ? o->cap : 4096;
            while (cap < o->n + keep + 1)
                cap *= 2;
            char *p = realloc(o->p, cap);
            if (p == NULL) {
                o->truncated = 1;
                continue;
            }
            o->p = p;
            o->cap = cap;
        }
        memcpy(o->p + o->n, chunk, keep);
        o->n += keep;
        o->p[o->n] = '\0';
    }
}

/* Contract in vp.h. */
void vp_output_mark_truncated(vp_output *o)
{
    static const char mark[] = "\n[... output truncated ...]\n";
    if (o->truncated && o->n >= sizeof mark)
        memcpy(o->p + o->n - (sizeof mark - 1), mark, sizeof mark);
}

/* ---- waiting and killing ------------------------------------------------- */

/* 1 once `pid` has exited (left unreaped, so its group id stays ours). */
static int exited(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno == ECHILD;
    return si.si_pid == pid;
}

/* Block up to `ms` for output or the child's exit (or just sleep). */
static void park(int pidfd, int rfd, int ms)
{
    struct pollfd fds[2];
    nfds_t n = 0;
    if (rfd >= 0)
        fds[n++] = (struct pollfd){.fd = rfd, .events = POLLIN};
    if (pidfd >= 0)
        fds[n++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
    if (n > 0) {
        poll(fds, n, ms);
    } else {
        struct timespec ts = {0, (long)ms * 1000000};
        nanosleep(&ts, NULL);
    }
}

/* Terminate the group of `pid`: SIGTERM, SIGKILL after a second. */
static void kill_group(pid_t pid, int pidfd)
{
    kill(-pid, SIGTERM);
    for (int i = 0; i < 1000 / VP_TICK_MS && !exited(pid); i++)
        park(pidfd, -1, VP_TICK_MS);
    kill(-pid, SIGKILL); /* the leader is a zombie: also ends stragglers */
}

/* Run until the child exits, the work is cancelled or the deadline
 * passes, capturing output; the child is reaped on return. */
static int wait_child(const vsched_ctx *ctx, pid_t pid, int rfd,
                      long long timeout, vp_output *o, int *status)
{
    int pidfd = (int)pidfd_open(pid, 0); /* -1 on old kernels: sleep ticks */
    long long deadline = timeout > 0 ? now_ms() + timeout * 1000 : 0;
    int outcome = VP_EXITED, backoff = 1;
    fcntl(rfd, F_SETFL, fcntl(rfd, F_GETFL) | O_NONBLOCK);
    for (;;) {
        if (rfd >= 0 && !drain(rfd, o)) {
            close(rfd);
            rfd = -1;
        }
        if (exited(pid))
            break;
        if (cancelled(ctx) || (deadline && now_ms() >= deadline)) {
            outcome = cancelled(ctx) ? VP_CANCELLED : VP_TIMEDOUT;
            kill_group(pid, pidfd);
            break;
        }
        if (rfd >= 0 || pidfd >= 0) {
            park(pidfd, rfd, VP_TICK_MS);
        } else { /* no pidfd: sleep 1, 2, 4 ... 50 ms */
            park(-1, -1, backoff);
            backoff = backoff < VP_TICK_MS / 2 ? backoff * 2 : VP_TICK_MS;
        }
    }
    if (rfd >= 0) {
        drain(rfd, o); /* what the tool wrote before exiting */
        close(rfd);
    }
    if (pidfd >= 0)
        close(pidfd);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR)
        ;
    return outcome;
}

/* ---- spawning ------------------------------------------------------------ */

/* Spawn argv as `how` says; 0 or an errno value. */
static int spawn(char *const argv[], const vp_spawn *how, pid_t *pid, int *rfd)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0)
        return errno;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawn_file_actions_init(&fa);
    /* The actions run in order: a relative stdout_path or argv[0] is
     * taken relative to cwd, as the tool itself would see it. */
    if (how->cwd != NULL)
        posix_spawn_file_actions_addchdir_np(&fa, how->cwd);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (how->stdout_path != NULL)
        posix_spawn_file_actions_addopen(
            &fa, 1, how->stdout_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
            0666);
    else
        posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP |
                                      POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    int err = posix_spawnp(pid, argv[0], &fa, &at, argv,
                           how->env != NULL ? how->env : environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    close(pfd[1]);
    if (err != 0)
        close(pfd[0]);
    else
        *rfd = pfd[0];
    return err;
}

/* Contract in vp.h. */
int vp_run(const vsched_ctx *ctx, char *const argv[], const vp_spawn *how,
           long long timeout, vp_output *o, int *status)
{
    static const vp_spawn plain = {NULL, NULL, NULL};
    pid_t pid = -1;
    int rfd = -1;
    memset(o, 0, sizeof *o);
    *status = 0;
    if (argv[0] == NULL) {
        *status = EINVAL;
        return VP_SPAWN_FAILED;
    }
    int err = spawn(argv, how != NULL ? how : &plain, &pid, &rfd);
    if (err != 0) {
        *status = err;
        return VP_SPAWN_FAILED;
    }
    return wait_child(ctx, pid, rfd, timeout, o, status);
}
