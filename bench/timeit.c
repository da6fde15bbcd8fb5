/*
 * vsched-timeit -- wall time, CPU time and peak RSS of commands, for the
 * benchmark harness.
 *
 *     vsched-timeit [--out FILE] [--] CMD [ARGS...]
 *         Run CMD (no shell) and append one line to FILE (default stderr):
 *             wall_s=W cpu_s=C maxrss_kb=K status=S
 *         C is user + system time of CMD and every descendant it waited
 *         for (wait4); K is the largest RSS among them. Exits with CMD's
 *         exit status (128 + N when killed by signal N).
 *
 *     vsched-timeit [--out FILE] --each LIST
 *         Run every line of LIST as a command, one at a time, alone (the
 *         words of a line are separated by blanks; there is no quoting), and
 *         append one line with the sums:
 *             commands=N wall_s=W cpu_s=C
 *         Exits 1 at the first command that fails.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct usage {
    double wall, cpu;
    long maxrss_kb;
    int status; /* exit status, 128 + signal, or 127 when it cannot run */
} usage;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* Run argv to completion; 0, or -1 when it could not be started. */
static int run(char *const argv[], usage *u)
{
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "vsched-timeit: cannot run %s: %s\n", argv[0],
                strerror(errno));
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0)
        if (errno != EINTR)
            return -1;
    u->wall = now_s() - t0;
    u->cpu = tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
    u->maxrss_kb = ru.ru_maxrss;
    u->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

/* Split a line into words in place; returns the count (at most cap-1). */
static size_t split(char *line, char **argv, size_t cap)
{
    size_t n = 0;
    char *save = NULL;
    for (char *w = strtok_r(line, " \t\r\n", &save); w != NULL && n + 1 < cap;
         w = strtok_r(NULL, " \t\r\n", &save))
        argv[n++] = w;
    argv[n] = NULL;
    return n;
}

static int each(const char *list, FILE *out)
{
    FILE *f = fopen(list, "r");
    if (f == NULL) {
        fprintf(stderr, "vsched-timeit: cannot read %s: %s\n", list,
                strerror(errno));
        return 2;
    }
    char line[65536], *argv[1024];
    double wall = 0, cpu = 0;
    unsigned long n = 0;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
        if (split(line, argv, sizeof argv / sizeof argv[0]) == 0)
            continue;
        usage u;
        if (run(argv, &u) != 0 || u.status != 0) {
            fprintf(stderr, "vsched-timeit: command %lu failed: %s\n", n + 1,
                    argv[0]);
            rc = 1;
            break;
        }
        wall += u.wall;
        cpu += u.cpu;
        n++;
    }
    fclose(f);
    if (rc == 0)
        fprintf(out, "commands=%lu wall_s=%.6f cpu_s=%.6f\n", n, wall, cpu);
    return rc;
}

int main(int argc, char **argv)
{
    FILE *out = stderr;
    int i = 1;
    const char *list = NULL;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            if ((out = fopen(argv[++i], "a")) == NULL) {
                fprintf(stderr, "vsched-timeit: cannot write %s: %s\n",
                        argv[i], strerror(errno));
                return 2;
            }
        } else if (strcmp(argv[i], "--each") == 0 && i + 1 < argc) {
            list = argv[++i];
        } else {
            break;
        }
    }
    if (list != NULL)
        return each(list, out);
    if (i >= argc) {
        fputs("usage: vsched-timeit [--out FILE] [--] CMD [ARGS...]\n"
              "       vsched-timeit [--out FILE] --each LIST\n",
              stderr);
        return 2;
    }
    usage u;
    if (run(argv + i, &u) != 0) {
        fprintf(stderr, "vsched-timeit: cannot run %s: %s\n", argv[i],
                strerror(errno));
        return 127;
    }
    fprintf(out, "wall_s=%.6f cpu_s=%.6f maxrss_kb=%ld status=%d\n", u.wall,
            u.cpu, u.maxrss_kb, u.status);
    fflush(out);
    return u.status;
}
