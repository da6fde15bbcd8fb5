/*
 * sweep -- temporaries of runs that died: a run killed outright (SIGKILL,
 * a power cut, a second interrupt) leaves the partial outputs of the
 * compiles it had started, named OUTPUT.tmp.PID.N (and .d depfiles
 * beside them). At create() the instance removes every such file under
 * out_dir whose PID is not a live process; a live writer's temporaries
 * (a concurrent run with another state directory) are kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "cc.h"

/* The writer's pid in a temporary's base name ".tmp.PID.", or 0. */
static pid_t cc_tmp_owner(const char *base)
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

static int cc_sweep_one(const char *path, const struct stat *st, int type,
                        struct FTW *ftw)
{
    (void)st;
    if (type != FTW_F && type != FTW_SL)
        return 0;
    pid_t pid = cc_tmp_owner(path + ftw->base);
    if (pid > 0 && pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH)
        unlink(path);
    return 0;
}

/* Contract in cc.h. */
void cc__sweep_stale(const char *out_dir)
{
    nftw(out_dir, cc_sweep_one, 16, FTW_PHYS);
}

/* Contract in cc.h. */
int cc__tmp_create(char *tmp, size_t size, const char *path,
                   unsigned long *counter)
{
    for (int tries = 0; tries < 100; tries++) {
        unsigned long k = __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
        int n = snprintf(tmp, size, "%s.tmp.%ld.%lu", path, (long)getpid(), k);
        if (n < 0 || (size_t)n >= size)
            return ENAMETOOLONG;
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
