/*
 * tmp.c -- temporaries of the executor plugins, and those of runs that
 * died. Every output is written to OUTPUT.tmp.PID.NR beside it (N a
 * counter, R 64 random bits in hex: a name no other user can pre-create
 * or plant a link at) and renamed
 * into place by the host; a run killed outright (SIGKILL, a power cut, a
 * second interrupt) leaves the temporaries of the tools it had started
 * (and their .d depfiles). An instance sweeps its output directory at
 * create(): every such file whose PID is not a live process goes; a live
 * writer's (a concurrent run with another state directory) stay.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "vp.h"

/* Contract in vp.h. */
pid_t vp_tmp_owner(const char *base)
{
    const char *t = strstr(base, ".tmp.");
    while (t != NULL) {
        char *end;
        long pid = strtol(t + 5, &end, 10);
        if (end != t + 5 && *end == '.' && pid > 0 && t[5] != '-' &&
            t[5] != '+')
            return (pid_t)pid;
        t = strstr(t + 1, ".tmp.");
    }
    return 0;
}

/* nftw gives its callback no argument: the count of one sweep, kept per
 * thread (two instances may be created at once). */
static _Thread_local size_t swept;

static int sweep_one(const char *path, const struct stat *st, int type,
                     struct FTW *ftw)
{
    (void)st;
    if (type != FTW_F && type != FTW_SL)
        return 0;
    pid_t pid = vp_tmp_owner(path + ftw->base);
    if (pid > 0 && pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH &&
        unlink(path) == 0)
        swept++;
    return 0;
}

/* Contract in vp.h. */
size_t vp_sweep_stale(const char *dir)
{
    swept = 0;
    nftw(dir, sweep_one, 16, FTW_PHYS);
    return swept;
}

/* 64 bits no other user can guess: the kernel's random source, or (if
 * it fails) the clock and the address space's layout mixed. */
static uint64_t unguessable(void)
{
    uint64_t r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    r = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
        (uint64_t)(uintptr_t)&ts;
    r ^= r >> 33;
    r *= 0xff51afd7ed558ccdULL;
    return r ^ (r >> 33);
}

/* Contract in vp.h. */
int vp_tmp_name(char *tmp, size_t size, const char *path,
                unsigned long *counter)
{
    unsigned long k = __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
    int n = snprintf(tmp, size, "%s.tmp.%ld.%lu%016" PRIx64, path,
                     (long)getpid(), k, unguessable());
    return n < 0 || (size_t)n >= size ? ENAMETOOLONG : 0;
}

/* Contract in vp.h. */
int vp_tmp_create(char *tmp, size_t size, const char *path,
                  unsigned long *counter)
{
    for (int tries = 0; tries < 100; tries++) {
        int err = vp_tmp_name(tmp, size, path, counter);
        if (err != 0)
            return err;
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            close(fd);
            return 0;
        }
        if (errno != EEXIST)
            return errno;
    }
    return EEXIST;
}
