/*
 * tmp.c -- temporaries of the executor plugins, and those of runs that
 * died. Every output is written to OUTPUT.tmp.PID.NR beside it (N a
 * counter, R 64 random bits in hex: a name no other user can pre-create
 * or plant a link at) and renamed
 * into place by the host; a run killed outright (SIGKILL, a power cut, a
 * second interrupt) leaves the temporaries of the tools it had started
 * (and their .d depfiles). An instance sweeps its output directory at
 * create(): every such file whose PID is not a live process goes; a live
 * writer's (a concurrent run with another state directory) stay. Only
 * names of exactly those forms are temporaries (vp_tmp_owner): a user's
 * "notes.tmp.1999.txt" under the output directory is not one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vp.h"

/* 1 when `s` is what follows "PID." in a temporary's name, to its end:
 * NR (vp_tmp_name: N decimal, R 16 lowercase hex digits) or rN (a
 * restore's), then ".d" or nothing (a depfile beside a temporary). */
static int tmp_suffix(const char *s)
{
    size_t n = 0;
    if (s[0] == 'r') {
        for (n = 1; s[n] >= '0' && s[n] <= '9'; n++)
            ;
        if (n == 1)
            return 0;
    } else {
        size_t digits = 0;
        for (; (s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f');
             n++)
            if (s[n] <= '9' && digits == n)
                digits++;
        if (n < 17 || digits < n - 16)
            return 0; /* no N, or N not decimal, or no R */
    }
    return s[n] == '\0' || strcmp(s + n, ".d") == 0;
}

/* Contract in vp.h. */
pid_t vp_tmp_owner(const char *base)
{
    for (const char *t = strstr(base, ".tmp."); t != NULL;
         t = strstr(t + 1, ".tmp.")) {
        /* The pid as vp_tmp_name prints it: a digit 1-9 first, then
         * digits, within pid_t (INT_MAX on Linux) -- no blank, sign or
         * leading zero, and never a larger number truncated. */
        const char *d = t + 5;
        long long pid = 0; /* at most 10 * INT_MAX + 9 */
        size_t n = 0;
        if (*d < '1' || *d > '9')
            continue;
        for (; d[n] >= '0' && d[n] <= '9' && pid <= INT_MAX; n++)
            pid = pid * 10 + (d[n] - '0');
        if (pid <= INT_MAX && d[n] == '.' && tmp_suffix(d + n + 1))
            return (pid_t)pid;
    }
    return 0;
}

/* Directories deeper than this below the swept one are not entered (each
 * level holds one descriptor open). */
#define SWEEP_DEPTH 64

/* Sweep the directory open at dfd (taken), `depth` levels below the
 * top. The entries' types come from readdir, so no entry is stat'ed
 * unless the file system leaves its type unknown: a no-op build's sweep
 * of a 10k-object tree reads the directories only. */
static size_t sweep_dir(int dfd, unsigned depth)
{
    DIR *d = fdopendir(dfd);
    if (d == NULL) {
        close(dfd);
        return 0;
    }
    size_t swept = 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            continue;
        unsigned char type = e->d_type;
        struct stat st;
        if (type == DT_UNKNOWN &&
            fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) == 0)
            type = S_ISDIR(st.st_mode)   ? DT_DIR
                   : S_ISREG(st.st_mode) ? DT_REG
                   : S_ISLNK(st.st_mode) ? DT_LNK
                                         : DT_UNKNOWN;
        if (type == DT_DIR) {
            int sub =
                depth < SWEEP_DEPTH
                    ? openat(dirfd(d), name,
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                    : -1;
            if (sub >= 0)
                swept += sweep_dir(sub, depth + 1);
            continue;
        }
        if (type != DT_REG && type != DT_LNK)
            continue;
        pid_t pid = vp_tmp_owner(name);
        if (pid > 0 && pid != getpid() && kill(pid, 0) != 0 &&
            errno == ESRCH && unlinkat(dirfd(d), name, 0) == 0)
            swept++;
    }
    closedir(d);
    return swept;
}

/* Contract in vp.h. */
size_t vp_sweep_stale(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return dfd >= 0 ? sweep_dir(dfd, 0) : 0;
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

/* Contract in vp.h. */
void vp_sweep_gate_init(vp_sweep_gate *g)
{
    pthread_mutex_init(&g->lock, NULL);
    atomic_init(&g->done, 0);
}

/* Contract in vp.h. */
void vp_sweep_gate_fini(vp_sweep_gate *g)
{
    pthread_mutex_destroy(&g->lock);
}

/* Contract in vp.h. */
void vp_sweep_once(vp_sweep_gate *g, const char *dir)
{
    if (atomic_load_explicit(&g->done, memory_order_acquire))
        return;
    pthread_mutex_lock(&g->lock);
    if (!atomic_load_explicit(&g->done, memory_order_relaxed)) {
        vp_sweep_stale(dir);
        atomic_store_explicit(&g->done, 1, memory_order_release);
    }
    pthread_mutex_unlock(&g->lock);
}
