/*
 * vp.h -- the helper library of the shipped executor plugins (cc, cmd):
 * what both need and neither should write again.
 *
 *   ctx.c    diagnostics, host-allocated copies, an artifact_out cleared
 *   paths.c  output names, mkdir -p, absolute and normalised paths, the
 *            program a name runs as, a whole file read
 *   proc.c   running a tool: spawn (argv, never a shell of our own), a
 *            process group of its own, capture with a cap, cancellation,
 *            timeout, the group killed
 *   tmp.c    temporaries beside an output (O_EXCL), and those left by a
 *            run that died removed
 *
 * It is a libtool convenience library (plugins/common/libvplugin.la)
 * linked into each plugin module and into each built-in variant. It
 * speaks only include/vsched/plugin.h: no host code. Every symbol is
 * vp_-prefixed and hidden, so a module exports only its entry and two
 * built-ins linked into one program share one copy (an archive member is
 * taken once) without a clash with the host's vr_* symbols.
 */
#ifndef VSCHED_PLUGINS_COMMON_VP_H
#define VSCHED_PLUGINS_COMMON_VP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <vsched/plugin.h>
#include <xxhash.h>

#define VP_HIDDEN __attribute__((visibility("hidden")))

/* ---- ctx.c --------------------------------------------------------------- */

/* Copy of `s` from ctx->alloc, or NULL. */
VP_HIDDEN char *vp_host_strdup(const vsched_ctx *ctx, const char *s);
/* Report `fmt` through ctx->diag with severity `sev` about `file`
 * (formatted into a buffer of PATH_MAX + 1 KiB: longer text is cut). */
VP_HIDDEN void vp_diagf(const vsched_ctx *ctx, vsched_severity sev,
                        const char *file, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The formatted string (malloc), or NULL on exhaustion. */
VP_HIDDEN char *vp_strfmt(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/* Free what `out` holds (path, tmp_path, deps: ctx->alloc'ed) and zero
 * it. The files are not touched. */
VP_HIDDEN void vp_out_clear(const vsched_ctx *ctx, vsched_artifact_out *out);
/* extract_deps of a snapshot whose `n` dependency names are `names`:
 * they are the deps and also the blockers, each list a ctx->alloc'ed copy
 * (array and strings). Returns 0, or VSCHED_ENOMEM with *out zeroed. */
VP_HIDDEN int vp_deps_out(const vsched_ctx *ctx, char *const *names, size_t n,
                          vsched_deps_out *out);

/* ---- paths.c ------------------------------------------------------------- */

/* 1 when `s` is a relative name without empty, "." or ".." components:
 * one that stays under the directory it is joined to. */
VP_HIDDEN int vp_safe_name(const char *s);
/* mkdir -p of the directory part of `path`; VSCHED_EIO with a diagnostic
 * about `file` when it cannot be made (or is not a directory). */
VP_HIDDEN int vp_mkdirs(const vsched_ctx *ctx, const char *file,
                        const char *path);
/* `path` made absolute against `base` (malloc; a copy when `path` is
 * absolute or `base` NULL), or NULL. */
VP_HIDDEN char *vp_absolute(const char *base, const char *path);
/* `d` lexically normalised in place ("a/./b/../c" -> "a/c", "" -> ".":
 * `d` has room for two bytes); -1 when it is absolute or climbs above its
 * start. */
VP_HIDDEN int vp_normalise_dir(char *d);
/* The file `prog` runs as, canonical (heap string), or NULL: searched on
 * PATH when it has no '/', else taken relative to `cwd` (the working
 * directory when `cwd` is NULL). */
VP_HIDDEN char *vp_which(const char *prog, const char *cwd);
/* The whole file at `path` (malloc, NUL-terminated, *len bytes), or NULL
 * with errno set. */
VP_HIDDEN char *vp_slurp(const char *path, size_t *len);

/* Fold the program `prog` runs as (vp_which) into `st`: its canonical
 * path with its NUL, then its bytes; `missing` with its NUL stands for
 * the path when it cannot be found (or `prog` is empty). */
VP_HIDDEN void vp_hash_program(XXH3_state_t *st, const char *prog,
                               const char *cwd, const char *missing);

/* ---- proc.c -------------------------------------------------------------- */

/* Output captured from a tool (stdout and stderr on one pipe, or stderr
 * alone when stdout goes to a file), NUL-terminated when n > 0; at most
 * VP_OUTPUT_MAX bytes are kept, the rest read and dropped (`truncated`).
 * The caller frees p. */
typedef struct vp_output {
    char *p;
    size_t n, cap;
    int truncated;
} vp_output;

#define VP_OUTPUT_MAX (1u << 20)

/* How a run ended. */
enum {
    VP_EXITED,      /* *status is the wait status */
    VP_CANCELLED,   /* ctx said so; the group was killed */
    VP_TIMEDOUT,    /* the timeout passed; the group was killed */
    VP_SPAWN_FAILED /* *status is the errno value */
};

/* Where a tool runs: NULL fields take the plugin's own (working
 * directory, output captured, `environ`). */
typedef struct vp_spawn {
    const char *cwd;         /* chdir before exec; relative paths follow */
    const char *stdout_path; /* stdout to this file (created, truncated) */
    char *const *env;        /* the environment */
} vp_spawn;

/* Run argv (argv[0] searched on PATH) with stdin on /dev/null, in a
 * process group of its own, signals at their defaults and none blocked.
 * Waits until it exits, ctx says the work is cancelled, or `timeout`
 * seconds (0 = none) pass, polling the output pipe and a pidfd with a
 * 50 ms tick; on cancellation or timeout the whole group gets SIGTERM,
 * then SIGKILL a second later, so the helpers it started go too. The
 * child is reaped before returning. An empty argv is VP_SPAWN_FAILED
 * with EINVAL. Returns a VP_* outcome; *o is filled (zeroed first). */
VP_HIDDEN int vp_run(const vsched_ctx *ctx, char *const argv[],
                     const vp_spawn *how, long long timeout, vp_output *o,
                     int *status);
/* When `o` was cut, end its text with a line saying so. */
VP_HIDDEN void vp_output_mark_truncated(vp_output *o);

/* ---- tmp.c --------------------------------------------------------------- */

/* The temporary name of an output written by this process:
 * PATH.tmp.PID.NR, N from *counter (atomic), R 16 hex digits of
 * getrandom(2) (unguessable: no other user can pre-create the name or
 * plant a link at it), into tmp[size]. 0, or ENAMETOOLONG. The name is
 * what vp_sweep_stale recognises. */
VP_HIDDEN int vp_tmp_name(char *tmp, size_t size, const char *path,
                          unsigned long *counter);
/* Create a vp_tmp_name with O_EXCL (mode 0666 & ~umask) into tmp,
 * retrying on a name that exists: no name another user pre-created is
 * ever written through. 0 or an errno value. */
VP_HIDDEN int vp_tmp_create(char *tmp, size_t size, const char *path,
                            unsigned long *counter);
/* The writer's pid in a temporary's base name, or 0: one holding
 * ".tmp.PID." (PID decimal as printed: no sign, blank or leading zero,
 * at most INT_MAX) followed, to its end, by NR as vp_tmp_name writes it
 * (N decimal, R 16 lowercase hex digits) or by rN (the host's restores),
 * either with ".d" after it or not. */
VP_HIDDEN pid_t vp_tmp_owner(const char *base);
/* Remove every file or link under `dir`, down to 64 levels (links to
 * directories are not followed), whose base name is a temporary's
 * (vp_tmp_owner) with PID not a live process: what a run killed
 * outright left. A live writer's temporaries (a concurrent run) and this
 * process's are kept.
 * Entries are told apart by readdir's types, with no stat per entry
 * unless the file system leaves a type unknown. Errors are ignored (a
 * missing dir has nothing to sweep). Returns how many files were
 * removed. */
VP_HIDDEN size_t vp_sweep_stale(const char *dir);

/* vp_sweep_stale once per gate: an executor sweeps when it first writes
 * an output, not when it is created, so a run that writes nothing (-n,
 * --compdb, --graph, --deps) removes nothing either. The first caller
 * sweeps while later ones wait for it; then every call is one atomic
 * load. vp_sweep_gate_init before the first, vp_sweep_gate_fini after
 * the last. */
typedef struct vp_sweep_gate {
    pthread_mutex_t lock; /* a leaf: held for the sweep only */
    atomic_int done;
} vp_sweep_gate;
VP_HIDDEN void vp_sweep_gate_init(vp_sweep_gate *g);
VP_HIDDEN void vp_sweep_gate_fini(vp_sweep_gate *g);
VP_HIDDEN void vp_sweep_once(vp_sweep_gate *g, const char *dir);

#endif
