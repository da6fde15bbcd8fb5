/*
 * test_vp.c -- the plugins' helper library (plugins/common/) on its own:
 * temporaries' names and the sweep of dead writers', running a tool
 * (capture and its cap, a spawn failure, stdout to a file, the timeout
 * ending the whole group), names and paths. Real processes and files.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../plugins/common/vp.h"
#include "cu.h"
#include "mock_host.h"

/* A pid that was a process and is one no more. */
static pid_t dead_pid(void)
{
    pid_t p = fork();
    CU_ASSERT_FATAL(p >= 0);
    if (p == 0)
        _exit(0);
    waitpid(p, NULL, 0);
    return p;
}

/* R: the 16 hex digits of vp_tmp_name. */
#define R16 "0123456789abcdef"

static void tmp_owner_reads_the_pid_of_tmp_pid_dot_only(void)
{
    /* the three names written: an executor's temporary (and its
     * depfile), a scan's depfile, a restore's */
    EXPECT_INT(vp_tmp_owner("a.c.o.tmp.123.0" R16), 123);
    EXPECT_INT(vp_tmp_owner("a.c.o.tmp.123.17" R16 ".d"), 123);
    EXPECT_INT(vp_tmp_owner(".scan.tmp.77.4" R16 ".d"), 77);
    EXPECT_INT(vp_tmp_owner("x.tmp.9.r2"), 9);
    EXPECT_INT(vp_tmp_owner("a.tmp.123"), 0); /* no dot after the pid */
    EXPECT_INT(vp_tmp_owner("a.tmp.-5.0" R16), 0);
    EXPECT_INT(vp_tmp_owner("a.tmp.+5.0" R16), 0);
    EXPECT_INT(vp_tmp_owner("a.tmp.x.0" R16), 0);
    EXPECT_INT(vp_tmp_owner("a.tmp.0.1" R16), 0);
    EXPECT_INT(vp_tmp_owner("plain.o"), 0);
    /* the first ".tmp." that parses wins */
    EXPECT_INT(vp_tmp_owner("a.tmp.b.tmp.42.1" R16), 42);
    /* a user's files that merely hold ".tmp.PID.": never a temporary */
    EXPECT_INT(vp_tmp_owner("parse.tmp.99999.c"), 0);
    EXPECT_INT(vp_tmp_owner("report.tmp.1999.txt"), 0);
    EXPECT_INT(vp_tmp_owner("f.c.o.tmp.424242.x"), 0);
    EXPECT_INT(vp_tmp_owner("a.o.tmp.12.0"), 0);           /* no R */
    EXPECT_INT(vp_tmp_owner("a.o.tmp.12.0" R16 "0"), 12);  /* N 00 */
    EXPECT_INT(vp_tmp_owner("a.o.tmp.12.x" R16), 0);       /* N not digits */
    EXPECT_INT(vp_tmp_owner("a.o.tmp.12.0" R16 ".dx"), 0); /* after .d */
    EXPECT_INT(vp_tmp_owner("a.o.tmp.12.0ABCDEF0123456789"), 0); /* upper */
    EXPECT_INT(vp_tmp_owner("a.o.tmp.12.r"), 0);
    EXPECT_INT(vp_tmp_owner("a.o.tmp.12.r3.c"), 0);
    /* The pid as vp_tmp_name writes it: decimal, no blank, sign or
     * leading zero, and within pid_t (never truncated into another). */
    EXPECT_INT(vp_tmp_owner("a.tmp. 4000000.0" R16), 0);
    EXPECT_INT(vp_tmp_owner("a.tmp.\t4000000.0" R16), 0);
    EXPECT_INT(vp_tmp_owner("a.tmp.004000000.0" R16), 0);
    EXPECT_INT(vp_tmp_owner("a.tmp.4299967296.0" R16), 0); /* 2^32 + 5e6 */
    EXPECT_INT(vp_tmp_owner("a.tmp.2147483648.r1"), 0);    /* INT_MAX + 1 */
    EXPECT_INT(vp_tmp_owner("a.tmp.2147483647.r1"), 2147483647);
}

static void sweep_removes_dead_writers_files_and_keeps_the_rest(void)
{
    char *d = mock_tmpdir("vp");
    char dead[64], live[64], mine[64];
    pid_t gone = dead_pid();
    snprintf(dead, sizeof dead, "sub/a.o.tmp.%ld.0" R16, (long)gone);
    snprintf(live, sizeof live, "a.o.tmp.%ld.0" R16, (long)getppid());
    snprintf(mine, sizeof mine, "b.o.tmp.%ld.3" R16, (long)getpid());
    mock_put(d, dead, "partial");
    mock_put(d, live, "a live writer's");
    mock_put(d, mine, "this process's");
    mock_put(d, "a.o", "an output");
    mock_put(d, "notes.tmp.txt", "no pid");
    EXPECT_INT(vp_sweep_stale(d), 1);
    EXPECT_INT(mock_count_named(d, ".tmp."), 3);
    char *p = mock_path2(d, dead);
    EXPECT_INT(access(p, F_OK), -1);
    free(p);
    EXPECT_INT(vp_sweep_stale(d), 0); /* nothing more */
    EXPECT_INT(vp_sweep_stale("/nonexistent/vsched-vp"), 0);
    mock_rm_rf(d);
}

/* The sweep enters directories, not links to them, and removes a dead
 * writer's link as it removes its file. */
static void sweep_enters_directories_not_links_to_them(void)
{
    char *d = mock_tmpdir("vp");
    char *other = mock_tmpdir("vp-other");
    char deep[96], there[64], link_name[64];
    pid_t gone = dead_pid();
    snprintf(deep, sizeof deep, "a/b/c/d.o.tmp.%ld.1" R16, (long)gone);
    snprintf(there, sizeof there, "x.o.tmp.%ld.2" R16, (long)gone);
    snprintf(link_name, sizeof link_name, "l.o.tmp.%ld.3" R16, (long)gone);
    mock_put(d, deep, "partial");
    mock_put(other, there, "another tree's");
    char *into = mock_path2(d, "linked");
    EXPECT_INT(symlink(other, into), 0);
    char *dangling = mock_path2(d, link_name);
    EXPECT_INT(symlink("/nonexistent/vsched-vp", dangling), 0);
    EXPECT_INT(vp_sweep_stale(d), 2); /* the deep file and the link */
    char *p = mock_path2(d, deep);
    EXPECT_INT(access(p, F_OK), -1);
    struct stat st;
    EXPECT_INT(lstat(dangling, &st), -1);
    char *q = mock_path2(other, there);
    EXPECT_INT(access(q, F_OK), 0); /* behind the link: not entered */
    EXPECT_INT(lstat(into, &st), 0);
    free(p);
    free(q);
    free(into);
    free(dangling);
    mock_rm_rf(d);
    mock_rm_rf(other);
}

/* tmp is OUT.tmp.PID.N followed by 16 lowercase hex digits. */
static int tmp_name_is(const char *tmp, const char *out, unsigned long n)
{
    char want[4200];
    snprintf(want, sizeof want, "%s.tmp.%ld.%lu", out, (long)getpid(), n);
    size_t w = strlen(want);
    if (strncmp(tmp, want, w) != 0 || strlen(tmp) != w + 16)
        return 0;
    return strspn(tmp + w, "0123456789abcdef") == 16;
}

static void tmp_create_is_exclusive_unguessable_and_counts_on(void)
{
    char *d = mock_tmpdir("vp");
    char *out = mock_path2(d, "x.o"), tmp[4096], again[4096];
    unsigned long counter = 5;
    EXPECT_INT(vp_tmp_create(tmp, sizeof tmp, out, &counter), 0);
    CU_ASSERT_TRUE(tmp_name_is(tmp, out, 5));
    EXPECT_INT(counter, 6);
    struct stat st;
    EXPECT_INT(lstat(tmp, &st), 0);
    CU_ASSERT_TRUE(S_ISREG(st.st_mode) && st.st_size == 0);
    /* the sweep knows it as this process's */
    const char *base = strrchr(tmp, '/') + 1;
    EXPECT_INT(vp_tmp_owner(base), getpid());
    /* the same counter value never gives the same name twice: what
     * follows the counter is random, so no name can be planted ahead */
    counter = 5;
    EXPECT_INT(vp_tmp_name(again, sizeof again, out, &counter), 0);
    CU_ASSERT_TRUE(tmp_name_is(again, out, 5));
    CU_ASSERT_TRUE(strcmp(tmp, again) != 0);
    EXPECT_INT(vp_tmp_create(tmp, 8, out, &counter), ENAMETOOLONG);
    free(out);
    mock_rm_rf(d);
}

static void run_captures_output_up_to_the_cap_and_marks_the_cut(void)
{
    const vsched_ctx *c = mock_ctx();
    char *const echo[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    vp_output o;
    int status = -1;
    EXPECT_INT(vp_run(c, echo, NULL, 0, &o, &status), VP_EXITED);
    CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3);
    EXPECT_STR(o.p, "out\nerr\n");
    EXPECT_INT(o.truncated, 0);
    free(o.p);
    /* 2 MiB of output: 1 MiB kept, the rest drained (the tool never
     * blocks on a full pipe), the cut said at the end */
    char *const big[] = {"sh", "-c", "head -c 2097152 /dev/zero | tr '\\0' x",
                         NULL};
    EXPECT_INT(vp_run(c, big, NULL, 0, &o, &status), VP_EXITED);
    EXPECT_INT(status, 0);
    EXPECT_INT(o.n, VP_OUTPUT_MAX);
    EXPECT_INT(o.truncated, 1);
    vp_output_mark_truncated(&o);
    EXPECT_CONTAINS(o.p + o.n - 40, "[... output truncated ...]\n");
    EXPECT_INT(strlen(o.p), VP_OUTPUT_MAX);
    free(o.p);
}

static void run_failures_spawn_stdout_file_and_empty_argv(void)
{
    const vsched_ctx *c = mock_ctx();
    char *const missing[] = {"/nonexistent/vsched-tool", NULL};
    vp_output o;
    int status = 0;
    EXPECT_INT(vp_run(c, missing, NULL, 0, &o, &status), VP_SPAWN_FAILED);
    EXPECT_INT(status, ENOENT);
    free(o.p);
    char *const none[] = {NULL};
    EXPECT_INT(vp_run(c, none, NULL, 0, &o, &status), VP_SPAWN_FAILED);
    EXPECT_INT(status, EINVAL);
    /* stdout to a file relative to cwd, stderr still captured */
    char *d = mock_tmpdir("vp");
    char *const both[] = {"sh", "-c", "pwd; echo e >&2", NULL};
    const vp_spawn how = {.cwd = d, .stdout_path = "std.out"};
    EXPECT_INT(vp_run(c, both, &how, 0, &o, &status), VP_EXITED);
    EXPECT_STR(o.p, "e\n");
    free(o.p);
    char *p = mock_path2(d, "std.out"), *txt;
    size_t len;
    txt = vp_slurp(p, &len);
    char *real = realpath(d, NULL);
    char want[4200];
    snprintf(want, sizeof want, "%s\n", real);
    EXPECT_STR(txt, want);
    free(txt), free(p), free(real);
    mock_rm_rf(d);
}

static void run_timeout_ends_the_whole_group(void)
{
    const vsched_ctx *c = mock_ctx();
    char *d = mock_tmpdir("vp");
    char script[4300];
    /* a helper in the same group that ignores SIGTERM, its pid noted */
    snprintf(script, sizeof script,
             "sh -c 'trap \"\" TERM; sleep 30' & echo $! >%s/helper; "
             "trap '' TERM; sleep 30",
             d);
    char *const hang[] = {"sh", "-c", script, NULL};
    vp_output o;
    int status = 0;
    EXPECT_INT(vp_run(c, hang, NULL, 1, &o, &status), VP_TIMEDOUT);
    free(o.p);
    char *p = mock_path2(d, "helper");
    size_t len;
    char *txt = vp_slurp(p, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(txt);
    pid_t helper = (pid_t)atol(txt);
    int gone = 0;
    for (int i = 0; i < 200 && !gone; i++) {
        char stat[64], buf[256] = "";
        snprintf(stat, sizeof stat, "/proc/%ld/stat", (long)helper);
        FILE *f = fopen(stat, "r");
        gone = f == NULL || (fgets(buf, sizeof buf, f) != NULL &&
                             strstr(buf, ") Z ") != NULL);
        if (f != NULL)
            fclose(f);
        if (!gone)
            usleep(10000);
    }
    CU_ASSERT_TRUE(gone);
    free(txt), free(p);
    mock_rm_rf(d);
}

static void names_and_paths(void)
{
    CU_ASSERT_TRUE(vp_safe_name("a/b.c"));
    CU_ASSERT_FALSE(vp_safe_name("../x.c"));
    CU_ASSERT_FALSE(vp_safe_name("a/../../x.c"));
    CU_ASSERT_FALSE(vp_safe_name("/etc/passwd"));
    CU_ASSERT_FALSE(vp_safe_name("a//b"));
    CU_ASSERT_FALSE(vp_safe_name("./a"));
    CU_ASSERT_FALSE(vp_safe_name(""));
    CU_ASSERT_FALSE(vp_safe_name(NULL));
    /* "" becomes ".": the buffer has room for two bytes */
    char d1[] = "a/./b/../c/", d2[2] = "", d3[] = "a/../..", d4[] = "/abs";
    EXPECT_INT(vp_normalise_dir(d1), 0);
    EXPECT_STR(d1, "a/c");
    EXPECT_INT(vp_normalise_dir(d2), 0);
    EXPECT_STR(d2, ".");
    EXPECT_INT(vp_normalise_dir(d3), -1);
    EXPECT_INT(vp_normalise_dir(d4), -1);
    char *a = vp_absolute("/base", "rel/x");
    EXPECT_STR(a, "/base/rel/x");
    free(a);
    a = vp_absolute("/base", "/abs");
    EXPECT_STR(a, "/abs");
    free(a);
    char *sh = vp_which("sh", NULL), *real = realpath("/bin/sh", NULL);
    CU_ASSERT_PTR_NOT_NULL(sh);
    CU_ASSERT_TRUE(sh != NULL && sh[0] == '/');
    free(sh), free(real);
    CU_ASSERT_PTR_NULL(vp_which("vsched-no-such-tool", NULL));
    char *bin = vp_which("sh", "/bin/../bin"); /* no '/': PATH, not cwd */
    CU_ASSERT_PTR_NOT_NULL(bin);
    free(bin);
}

#define T_(name)                                                              \
    {                                                                         \
#name, name                                                           \
    }
static const vr_cu_test tests[] = {
    T_(tmp_owner_reads_the_pid_of_tmp_pid_dot_only),
    T_(sweep_removes_dead_writers_files_and_keeps_the_rest),
    T_(sweep_enters_directories_not_links_to_them),
    T_(tmp_create_is_exclusive_unguessable_and_counts_on),
    T_(run_captures_output_up_to_the_cap_and_marks_the_cut),
    T_(run_failures_spawn_stdout_file_and_empty_argv),
    T_(run_timeout_ends_the_whole_group),
    T_(names_and_paths),
    {NULL, NULL}};

int main(void)
{
    return vr_cu_main("vp", tests);
}
