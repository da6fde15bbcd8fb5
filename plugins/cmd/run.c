/*
 * run.c -- running a tool for the `cmd` executor, and what its end means.
 *
 * A tool runs from an argv (a shell only when the template asked for one:
 * then argv is /bin/sh -c STRING), in the source root, through the
 * plugins' helper (plugins/common/proc.c: a process group of its own,
 * output captured with a cap, cancellation and the timeout kill the
 * group). Its stdout and stderr are captured together, or stdout goes to
 * the output file and stderr is captured.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "cmd.h"

/* Contract in cmd.h. */
int cmd__run(const vsched_ctx *ctx, char *const argv[], const char *cwd,
             const char *stdout_path, long long timeout, vp_output *o,
             int *status)
{
    const vp_spawn how = {.cwd = cwd, .stdout_path = stdout_path};
    if (argv[0] != NULL && ctx->is_cancelled != NULL &&
        ctx->is_cancelled(ctx)) {
        memset(o, 0, sizeof *o);
        *status = 0;
        return VP_CANCELLED;
    }
    return vp_run(ctx, argv, &how, timeout, o, status);
}

/* ---- reporting ----------------------------------------------------------- */

/* The command as one line, each word quoted when it needs it, shortened
 * to fit `cap`. */
static void command_line(char *const argv[], char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; argv[i] != NULL && o + 1 < cap; i++) {
        const char *w = argv[i];
        int plain = w[0] != '\0' &&
                    strspn(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRS"
                              "TUVWXYZ0123456789-_./=:,+@%") == strlen(w);
        int n = snprintf(buf + o, cap - o, "%s%s%s%s", i ? " " : "",
                         plain ? "" : "'", w, plain ? "" : "'");
        if (n < 0 || (size_t)n >= cap - o) {
            if (cap > 4)
                memcpy(buf + cap - 4, "...", 4);
            return;
        }
        o += (size_t)n;
    }
}

/* Contract in cmd.h. */
int cmd__run_status(const vsched_ctx *ctx, const char *file,
                    char *const argv[], int outcome, int status,
                    long long timeout, vp_output *o)
{
    char cmdline[1024], ebuf[128];
    const char *prog = argv[0] != NULL ? argv[0] : "";
    int ok =
        outcome == VP_EXITED && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (outcome == VP_CANCELLED)
        return VSCHED_ECANCELLED;
    vp_output_mark_truncated(o);
    if (o->n > 0)
        ctx->diag(ctx, ok ? VSCHED_SEV_NOTE : VSCHED_SEV_ERROR, file, 0, o->p);
    if (ok)
        return VSCHED_OK;
    if (outcome == VP_SPAWN_FAILED && argv[0] == NULL)
        vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0,
                 "the command expanded to no words");
    else if (outcome == VP_SPAWN_FAILED)
        vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0, "cannot run '%s': %s", prog,
                 strerror_r(status, ebuf, sizeof ebuf));
    else if (outcome == VP_TIMEDOUT)
        vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0,
                 "'%s' timed out after %lld s and was killed", prog, timeout);
    else if (WIFSIGNALED(status))
        vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0,
                 "'%s' was killed by signal %d", prog, WTERMSIG(status));
    else
        vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0, "'%s' exited with status %d",
                 prog, WEXITSTATUS(status));
    if (argv[0] != NULL) {
        command_line(argv, cmdline, sizeof cmdline);
        vp_diagf(ctx, VSCHED_SEV_NOTE, file, 0, "command: %s", cmdline);
    }
    return outcome == VP_TIMEDOUT ? VSCHED_ETIMEDOUT : VSCHED_ETOOL;
}
