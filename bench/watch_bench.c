/*
 * vsched-watch-bench -- the latency of vsched-run --watch, measured from
 * outside as a user sees it: over N edits of one source file, the time
 * from the end of the write (close(2) returned) to
 *
 *   start  -- the compiler starting (the compiler is a two-line wrapper
 *             that creates a stamp file, then execs cc: the time includes
 *             the wrapper's shell starting), and
 *   output -- the object renamed into place (IN_MOVED_TO in out_dir),
 *
 * both seen through inotify by this process, on CLOCK_MONOTONIC. Reports
 * the median and the 95th percentile of each; asserts nothing.
 *
 *   vsched-watch-bench VSCHED_RUN [EDITS [SETTLE_MS]]
 *
 * The tree (8 small sources, one header) lives in a fresh directory under
 * $TMPDIR, removed at the end. Each edit waits for the build's summary
 * line before the next one, so every edit is its own build.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "vsched-watch-bench: cannot write %s: %s\n", path,
                strerror(errno));
        exit(1);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    int p95 = (int)(0.95 * (n - 1) + 0.5);
    printf("%-28s median %7.2f ms   p95 %7.2f ms   min %7.2f   max %7.2f "
           "(%d edits)\n",
           what, v[n / 2], v[p95], v[0], v[n - 1], n);
}

/* Read the child's output until a line starting with `prefix` (or
 * timeout_ms); 0 when seen. */
static int read_until(int fd, const char *prefix, int timeout_ms)
{
    static char buf[65536];
    static size_t len;
    double end = now_ms() + timeout_ms;
    for (;;) {
        char *line = buf;
        for (char *nl; (nl = memchr(line, '\n', len - (size_t)(line - buf)));
             line = nl + 1) {
            if (strncmp(line, prefix, strlen(prefix)) == 0) {
                len -= (size_t)(nl + 1 - buf);
                memmove(buf, nl + 1, len);
                return 0;
            }
        }
        len -= (size_t)(line - buf);
        memmove(buf, line, len);
        int left = (int)(end - now_ms());
        struct pollfd p = {fd, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return -1;
        ssize_t r = read(fd, buf + len, sizeof buf - len - 1);
        if (r <= 0)
            return -1;
        len += (size_t)r;
    }
}

/* Wait for an event on wd naming `name` (mask bits); its time, or -1. */
static double wait_event(int in, int wd, const char *name, uint32_t mask,
                         int timeout_ms)
{
    _Alignas(struct inotify_event) char buf[8192];
    double end = now_ms() + timeout_ms;
    for (;;) {
        int left = (int)(end - now_ms());
        struct pollfd p = {in, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, left) <= 0)
            return -1;
        double t = now_ms();
        ssize_t r = read(in, buf, sizeof buf);
        for (char *q = buf; r > 0 && q < buf + r;) {
            const struct inotify_event *ev = (const void *)q;
            q += sizeof *ev + ev->len;
            if (ev->wd == wd && (ev->mask & mask) && ev->len > 0 &&
                strcmp(ev->name, name) == 0)
                return t;
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: vsched-watch-bench VSCHED_RUN [EDITS "
                        "[SETTLE_MS]]\n");
        return 2;
    }
    int edits = argc > 2 ? atoi(argv[2]) : 50;
    const char *settle = argc > 3 ? argv[3] : "5";
    if (edits < 1)
        edits = 1;
    char dir[] = "/tmp/vsched-watch-bench.XXXXXX";
    if (mkdtemp(dir) == NULL)
        return 1;
    char p[4096], q[4096];
    snprintf(p, sizeof p, "%s/tree", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/tree/src", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/stamp", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/out", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/out/release", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/out/release/src", dir);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/tree/src/h.h", dir);
    put(p, "#define H 1\n");
    for (int i = 0; i < 8; i++) {
        snprintf(p, sizeof p, "%s/tree/src/f%d.c", dir, i);
        snprintf(q, sizeof q,
                 "#include \"h.h\"\nint f%d(void) { return H; }\n", i);
        put(p, q);
    }
    snprintf(p, sizeof p, "%s/cc-wrap", dir);
    snprintf(q, sizeof q, "#!/bin/sh\n: >%s/stamp/start\nexec cc \"$@\"\n",
             dir);
    put(p, q);
    chmod(p, 0755);
    snprintf(p, sizeof p, "%s/b.ini", dir);
    snprintf(q, sizeof q,
             "[vsched]\nstate_dir = state\n[loader]\nplugin = fs\nroot = "
             "tree\n[executor]\nplugin = cc\ncompiler = %s/cc-wrap\ncflags "
             "= -O0\nout_dir = out\n[batch]\ninputs = src/*.c\n[watch]\n"
             "settle_ms = %s\n",
             dir, settle);
    put(p, q);

    int in = inotify_init1(IN_CLOEXEC);
    snprintf(p, sizeof p, "%s/stamp", dir);
    int wd_start = inotify_add_watch(in, p, IN_CLOSE_WRITE);
    snprintf(p, sizeof p, "%s/out/release/src", dir);
    int wd_out = inotify_add_watch(in, p, IN_MOVED_TO);
    int fds[2];
    if (in < 0 || wd_start < 0 || wd_out < 0 || pipe(fds) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        snprintf(p, sizeof p, "%s/b.ini", dir);
        execl(argv[1], argv[1], "--config", p, "--watch", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    int rc = 1;
    double *start = calloc((size_t)edits, sizeof *start);
    double *output = calloc((size_t)edits, sizeof *output);
    if (read_until(fds[0], "vsched-run: watching", 60000) != 0) {
        fprintf(stderr, "vsched-watch-bench: the watch did not start\n");
        goto done;
    }
    /* drain the first build's events */
    while (wait_event(in, -2, "", 0, 50) >= 0)
        ;
    snprintf(p, sizeof p, "%s/tree/src/f3.c", dir);
    for (int i = 0; i < edits; i++) {
        snprintf(q, sizeof q, "int f3(void) { return %d; }\n", i + 2);
        put(p, q);
        double t0 = now_ms();
        double t1 = wait_event(in, wd_start, "start", IN_CLOSE_WRITE, 10000);
        double t2 = wait_event(in, wd_out, "f3.c.o", IN_MOVED_TO, 10000);
        if (t1 < 0 || t2 < 0 || read_until(fds[0], "watch: ", 10000) != 0) {
            fprintf(stderr, "vsched-watch-bench: edit %d was not rebuilt\n",
                    i + 1);
            goto done;
        }
        start[i] = t1 - t0;
        output[i] = t2 - t0;
        struct timespec gap = {0, 30 * 1000000};
        nanosleep(&gap, NULL);
    }
    printf("vsched-run --watch, settle_ms = %s, one edit of 1 of 8 files "
           "per build:\n",
           settle);
    report("write -> compiler starts", start, edits);
    report("write -> output renamed", output, edits);
    rc = 0;
done:
    kill(pid, SIGINT);
    waitpid(pid, NULL, 0);
    free(start);
    free(output);
    snprintf(q, sizeof q, "rm -rf '%s'", dir);
    if (system(q) != 0)
        fprintf(stderr, "vsched-watch-bench: cannot remove %s\n", dir);
    return rc;
}
