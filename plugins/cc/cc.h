/*
 * cc.h -- internals of the `cc` executor, shared by its files:
 *
 *   cc.c       descriptor, schema, create/destroy, Source/deps/Analysis
 *   scan.c     the #include scanner and include resolution
 *   compile.c  Artifact (compile) and the link job: argv, spawn, capture;
 *              the compiler's identity
 *   depfile.c  the compiler's -MD depfile, parsed into source names
 *   launcher.c the compile launcher (ccache, distcc) and its children's
 *              environment; hosts.c, distcc host lists
 *
 * Spawning, capture, paths and temporaries come from the plugins' helper
 * library (plugins/common/vp.h), shared with cmd.
 *
 * Every symbol here is hidden; the module exports only its entry.
 */
#ifndef VSCHED_PLUGINS_CC_H
#define VSCHED_PLUGINS_CC_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <vsched/plugin.h>

#include "../common/vp.h"

#define CC__HIDDEN __attribute__((visibility("hidden")))

/* A LIST value split into words. `v` points into `buf`; both malloc'ed. */
typedef struct cc_words {
    char **v;
    size_t n;
    char *buf;
} cc_words;

/* The flags of one profile, resolved once ("profile.NAME" key when set,
 * else the executor's). Immutable once published in the cache. */
typedef struct cc_profile {
    struct cc_profile *next;
    char *name;
    cc_words cflags, ldflags, libs;
    uint64_t compile_key; /* hash of compiler, cflags and include dirs */
    uint64_t link_key;    /* hash of compiler, ldflags and libs */
} cc_profile;

/* An instance. Everything but the profile cache is immutable after
 * create(); `lock` guards `profiles` (a list only ever prepended to, whose
 * entries live until destroy) and the calls into `cfg`. */
typedef struct cc_inst {
    const vsched_config *cfg; /* borrowed until destroy */
    char *root;               /* canonical source root, absolute */
    char *out_dir;            /* absolute */
    char *compiler;
    char *ar;              /* archiver of static targets */
    cc_words launcher;     /* words before the compiler (launcher.c) */
    char **env;            /* the children's environment; NULL: environ */
    int remote;            /* the launcher sends compiles to distcc */
    cc_words include_dirs; /* normalised source names under root */
    long long timeout;     /* seconds, 0 = none */
    pthread_mutex_t lock;
    cc_profile *profiles;  /* guarded by lock */
    unsigned long counter; /* temporary-name counter (atomic ops) */
    vp_sweep_gate sweep;   /* out_dir swept before the first output */
    int have_identity;     /* guarded by lock: identity is computed */
    int identity_rc;       /* guarded by lock: its status */
    uint64_t identity;     /* guarded by lock: the compiler's identity */
} cc_inst;

/* The snapshot of one source: its resolved includes, in first-seen order.
 * One malloc block (names stored after the array). */
typedef struct cc_snap {
    uint64_t content_hash;
    char kind[16]; /* the loader's classification, truncated */
    size_t n;
    char *inc[];
} cc_snap;

/* ---- cc.c ---------------------------------------------------------------- */

/* Split `s` (NULL = empty) into words. Returns 0 or VSCHED_ENOMEM. */
CC__HIDDEN int cc__words_parse(const char *s, cc_words *w);
/* Release a word list (idempotent). */
CC__HIDDEN void cc__words_free(cc_words *w);
/* The flags of `profile`, created on first use. Takes inst->lock. Returns
 * NULL on exhaustion. The result lives until destroy. */
CC__HIDDEN const cc_profile *cc__profile(cc_inst *cc, const char *profile);
/* ---- scan.c -------------------------------------------------------------- */

/* Scan `bytes` of source `name` for #include directives and resolve them
 * to source names under cc->root: quoted ones against name's directory,
 * then the include dirs; angled ones against the include dirs only.
 * Unresolved includes (system headers) are dropped; includes that resolve
 * outside the root are dropped with a warning through ctx->diag. Builds a
 * snapshot (malloc) into *snap. Returns 0 or VSCHED_ENOMEM. */
CC__HIDDEN int cc__scan(const cc_inst *cc, const vsched_ctx *ctx,
                        const char *name, const char *bytes, size_t len,
                        cc_snap **snap);

/* ---- compile.c ----------------------------------------------------------- */

/* Artifact stage: compile "c"/"cxx" snapshots into out_dir/PROFILE/NAME.o
 * (written to out->tmp_path); other kinds produce nothing. Returns 0,
 * VSCHED_ETOOL (compiler failed or cannot run; diag), VSCHED_ECANCELLED,
 * VSCHED_ETIMEDOUT, VSCHED_EIO, VSCHED_EINVAL or VSCHED_ENOMEM. */
CC__HIDDEN int cc__artifact(void *inst, const vsched_ctx *ctx,
                            const vsched_artifact_in *in,
                            vsched_artifact_out *out);
/* The executor's identity (ABI 1.1): a hash of `compiler --version`'s
 * output and exit status and of the compiler's binary (found on PATH when
 * the name has no '/'), computed once per instance (takes inst->lock
 * around the cached value, never while the compiler runs). Returns 0,
 * VSCHED_ETOOL (cannot run it, with a diagnostic) or VSCHED_ENOMEM. */
CC__HIDDEN int cc__identity(void *inst, const vsched_ctx *ctx,
                            const char *profile, uint64_t *id);
/* The compile command of `name` (ABI 1.1 command()): what cc__artifact
 * runs, without the launcher and the depfile flags, naming the final
 * output; empty for kinds other than "c"/"cxx". Touches no file. Returns
 * 0, VSCHED_EINVAL (an output name it cannot make) or VSCHED_ENOMEM. */
CC__HIDDEN int cc__command(void *inst, const vsched_ctx *ctx, const char *name,
                           const char *kind, const char *profile,
                           vsched_command_out *out);
/* Graph job of target NAME, into out_dir/PROFILE/OUTPUT: kind "link"
 * links the inputs (objects, then libraries) into an executable, "shared"
 * into a shared library (-shared, soname OUTPUT), "static" archives them
 * (ar rcsD). ldflags and libs come from [target.NAME] when it sets them,
 * else from the profile; OUTPUT is [target.NAME] output, else NAME,
 * NAME.a or NAME.so. Other kinds are VSCHED_EUNSUPPORTED. Same returns as
 * cc__artifact. */
CC__HIDDEN int cc__job(void *inst, const vsched_ctx *ctx,
                       const vsched_job_in *in, vsched_artifact_out *out);

/* ---- launcher.c ---------------------------------------------------------- */

/* Read `launcher`, `distcc_hosts` and `fallback` of the executor section
 * into cc->launcher, cc->remote and cc->env (see launcher.c). Returns NULL,
 * or the reason (static, or written into why[cap]) the configuration is
 * refused. */
CC__HIDDEN const char *cc__launcher_configure(cc_inst *cc,
                                              const vsched_config *cfg,
                                              char *why, size_t cap);
/* Release what cc__launcher_configure made (idempotent). */
CC__HIDDEN void cc__launcher_free(cc_inst *cc);
/* After `tool` failed with wait status `status` compiling `file`: when it
 * is the distcc launcher and the status is one of distcc's own (100..127),
 * say through ctx->diag what failed and what to do. */
CC__HIDDEN void cc__launcher_explain(const cc_inst *cc, const vsched_ctx *ctx,
                                     const char *file, const char *tool,
                                     int status);

/* ---- depfile.c ----------------------------------------------------------- */

/* The prerequisites of every rule of a Makefile-style depfile (as GCC's
 * -MD writes it), unescaped, in order, into *out (malloc'ed array of
 * malloc'ed strings, *n entries; NULL when none). Returns 0 or
 * VSCHED_ENOMEM (nothing returned). */
CC__HIDDEN int cc__depfile_parse(const char *text, size_t len, char ***out,
                                 size_t *n);
/* `paths` (n of them, absolute or relative to the working directory) as
 * distinct source names under cc->root, in order, leaving out files
 * outside the root, files that no longer exist and `self`; into *names
 * (ctx->alloc'ed array and strings, NULL when none). Returns 0 or
 * VSCHED_ENOMEM. */
CC__HIDDEN int cc__depfile_names(const cc_inst *cc, const vsched_ctx *ctx,
                                 const char *self, char **paths, size_t n,
                                 char ***names, size_t *n_names);

#endif
