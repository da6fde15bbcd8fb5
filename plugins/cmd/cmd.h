/*
 * cmd.h -- internals of the `cmd` executor, shared by its files:
 *
 *   cmd.c       descriptor, schema, placeholders, create/destroy, the
 *               Source, deps and Analysis stages
 *   template.c  argv templates: parsed and checked at create(), expanded
 *               per call
 *   scan.c      Source-stage dependencies: the dep_regex matches and the
 *               scan command's depfile, resolved to source names
 *   depfile.c   Makefile-style depfiles, parsed into paths; paths turned
 *               into source names under the root
 *   run.c       running a tool (through plugins/common/proc.c) and what
 *               its end means
 *   artifact.c  the Artifact stage and the executor's identity
 *
 * Spawning, capture, paths and temporaries come from the plugins' helper
 * library (plugins/common/vp.h), shared with cc.
 *
 * Every symbol here is hidden; the module exports only its entry.
 */
#ifndef VSCHED_PLUGINS_CMD_H
#define VSCHED_PLUGINS_CMD_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include <vsched/plugin.h>

#include "../common/vp.h"

#define CMD__HIDDEN __attribute__((visibility("hidden")))

/* ---- placeholders -------------------------------------------------------- */

/* The placeholders a template may use: the fixed ones, then one per
 * configuration key that may be expanded (cmd.c lists them). A value
 * array handed to cmd__tpl_expand is indexed by these ids. */
enum {
    CMD_PH_IN,      /* the source, absolute path under the root */
    CMD_PH_OUT,     /* the temporary output path (Artifact only) */
    CMD_PH_NAME,    /* the source name, relative to the root */
    CMD_PH_PROFILE, /* the profile name (Artifact only) */
    CMD_PH_DEPFILE, /* a temporary depfile path the tool may write */
    CMD_PH_ROOT,    /* the source root, absolute */
    CMD_PH_FIXED,   /* first key placeholder: the keys, in schema order */
    CMD_PH_TOOL = CMD_PH_FIXED,
    CMD_PH_FLAGS,
    CMD_PH_INCLUDE_DIRS,
    CMD_PH_OUT_DIR,
    CMD_PH_OUT_SUFFIX,
    CMD_PH_SHELL,
    CMD_PH_TIMEOUT,
    CMD_PH_SOURCE_ROOT,
    CMD_PH_COUNT
};

#define CMD_PH_LIST 0x1u     /* a LIST value: one argv word per element */
#define CMD_PH_ARTIFACT 0x2u /* only meaningful at the Artifact stage */

typedef struct cmd_ph {
    const char *name;
    unsigned flags; /* CMD_PH_* */
} cmd_ph;

/* The placeholder table (ids as above) and its length. */
CMD__HIDDEN extern const cmd_ph cmd__placeholders[];
CMD__HIDDEN extern const size_t cmd__n_placeholders;

/* ---- templates ----------------------------------------------------------- */

/* One piece of a template word: literal text or a placeholder. */
typedef struct cmd_seg {
    int ph;           /* placeholder id, or -1 for literal text */
    const char *text; /* literal text (into cmd_tpl.lit), unescaped */
    size_t len;
} cmd_seg;

/* A parsed template. In argv form each word is a run of segments; in
 * shell form there is one word, the whole string. Immutable once parsed;
 * every pointer is owned by the template (cmd__tpl_free). */
typedef struct cmd_tpl {
    int shell; /* run as /bin/sh -c STRING */
    cmd_seg *seg;
    size_t n_seg;
    size_t *word; /* word k is seg[word[k] .. word[k + 1]) */
    size_t n_word;
    char *lit;     /* storage of the literal texts */
    uint64_t uses; /* bit i set when placeholder i appears */
} cmd_tpl;

/* Parse `text` as a template (argv form, or shell form when `shell`),
 * allowing only placeholders whose flags share nothing with `forbid`.
 * Syntax: words separated by blanks; '...' and "..." group a word (argv
 * form only; the shell form leaves quotes to the shell); {NAME} is a
 * placeholder, {{ and }} are literal braces. Returns 0, VSCHED_ENOMEM, or
 * VSCHED_ECONFIG with a one-line reason in `why` (what, at which column:
 * an unknown or misplaced placeholder, an unbalanced brace or quote, two
 * list placeholders in one word, an empty template). */
CMD__HIDDEN int cmd__tpl_parse(const char *text, int shell, unsigned forbid,
                               cmd_tpl *t, char *why, size_t cap);
/* Release a template (idempotent). */
CMD__HIDDEN void cmd__tpl_free(cmd_tpl *t);
/* 1 when the template uses placeholder `ph`. */
CMD__HIDDEN int cmd__tpl_uses(const cmd_tpl *t, int ph);
/* Expand `t` with vals[ph] (NULL = empty; a LIST value is split at
 * blanks) into *argv: a NULL-terminated malloc'ed vector of malloc'ed
 * strings (with no word at all when every word was an empty list). Argv form: a word that is one list placeholder becomes one
 * word per element; a word with a list placeholder and other text repeats
 * that text around each element ("-I{include_dirs}" -> -Ia -Ib); an empty
 * list yields no word. Shell form: argv is /bin/sh -c STRING, each value
 * single-quoted for the shell. Returns 0 or VSCHED_ENOMEM (*argv NULL). */
CMD__HIDDEN int cmd__tpl_expand(const cmd_tpl *t, const char *const *vals,
                                char ***argv);
/* Release an argv from cmd__tpl_expand (NULL accepted). */
CMD__HIDDEN void cmd__argv_free(char **argv);

/* ---- the instance -------------------------------------------------------- */

/* An instance: immutable after create(), so every operation may run
 * concurrently (regexec on one compiled pattern is thread-safe; cfg->get
 * only reads). */
typedef struct cmd_inst {
    const vsched_config *cfg; /* borrowed until destroy */
    char *root;               /* canonical source root, absolute */
    char *out_dir;            /* absolute */
    const char *out_suffix;   /* borrowed from cfg */
    char **include_dirs;      /* normalised source names under root */
    size_t n_include_dirs;
    long long timeout; /* seconds, 0 = none */
    cmd_tpl artifact;  /* the Artifact template */
    cmd_tpl scan;      /* the Source-stage template, when have_scan */
    int have_scan;
    regex_t regex; /* dep_regex, when have_regex */
    int have_regex;
    /* The executor-wide value of each placeholder key (by placeholder
     * id; fixed ids unused), borrowed from cfg but {tool} (made absolute
     * when it names a path) and {include_dirs} (normalised), which are
     * owned; per-profile keys are read per call. */
    const char **key_vals;
    uint64_t config_hash;  /* templates, regex and executor-wide values */
    unsigned long counter; /* temporary-name counter (atomic ops) */
    vp_sweep_gate sweep;   /* out_dir swept before the first output */
} cmd_inst;

/* The snapshot of one source: its dependencies, in first-seen order. One
 * malloc block (names stored after the array). */
typedef struct cmd_snap {
    uint64_t content_hash;
    size_t n;
    char *dep[];
} cmd_snap;

/* ---- cmd.c --------------------------------------------------------------- */

/* The value of key placeholder `ph` for `profile` ([profile.NAME] when
 * the key is per-profile and set there, else the executor's); NULL for
 * the empty profile means executor-wide. Never NULL for a key id. */
CMD__HIDDEN const char *cmd__key_value(const cmd_inst *cmd, int ph,
                                       const char *profile);

/* ---- scan.c -------------------------------------------------------------- */

/* The Source-stage dependencies of `name` (bytes borrowed): the first
 * capture group of every dep_regex match, resolved against name's
 * directory, then the include dirs (the first existing file under the
 * root wins; unresolved names are dropped, names resolving outside the
 * root dropped with a warning), followed by what the scan command
 * reports; distinct, without `name` itself. Builds a snapshot (malloc)
 * into *snap. Returns 0, VSCHED_ENOMEM, or the scan command's failure
 * (VSCHED_ETOOL, VSCHED_ECANCELLED, VSCHED_ETIMEDOUT; diagnostics). */
CMD__HIDDEN int cmd__scan(cmd_inst *cmd, const vsched_ctx *ctx,
                          const char *name, const char *bytes, size_t len,
                          cmd_snap **snap);

/* ---- depfile.c ----------------------------------------------------------- */

/* The prerequisites of every rule of a Makefile-style depfile, unescaped,
 * in order, into *out (malloc'ed array of malloc'ed strings, *n entries;
 * NULL when none). Targets are skipped. Syntax: "TARGET...: PREREQ..."
 * rules, one per line; backslash-newline continues a line; "\ " is a
 * space and "\#" a '#' in a name (a run of 2k backslashes before a space
 * is k literal backslashes and ends the name; 2k+1 are k and an escaped
 * space); "$$" is '$'; other backslashes are literal; a '#' starting a
 * word comments out the rest of the line; a "|" word (order-only
 * separator) is skipped. Returns 0 or VSCHED_ENOMEM (nothing returned). */
CMD__HIDDEN int cmd__depfile_parse(const char *text, size_t len, char ***out,
                                   size_t *n);
/* Release a list from cmd__depfile_parse. */
CMD__HIDDEN void cmd__strv_free(char **v, size_t n);
/* `paths` (n of them, absolute or relative to the root) as distinct
 * source names under cmd->root, in order, leaving out files outside the
 * root, files that do not exist and `self`; into *names (ctx->alloc'ed
 * array and strings, NULL when none). Returns 0 or VSCHED_ENOMEM. */
CMD__HIDDEN int cmd__depfile_names(const cmd_inst *cmd, const vsched_ctx *ctx,
                                   const char *self, char *const *paths,
                                   size_t n, char ***names, size_t *n_names);
/* ---- run.c --------------------------------------------------------------- */

/* Run argv in directory `cwd` with stdin on /dev/null, in a process group
 * of its own, stdout to the file `stdout_path` (created) when not NULL,
 * else captured with stderr into *o. Waits until the tool exits, ctx says
 * the work is cancelled, or `timeout` seconds (0 = none) pass; on
 * cancellation or timeout the whole group gets SIGTERM, then SIGKILL
 * after a second (vp_run; a run already cancelled does not start). The
 * child is reaped before returning. Returns one of the VP_* outcomes; *status is the wait status when VP_EXITED, the
 * errno value when VP_SPAWN_FAILED. The caller frees o->p. */
CMD__HIDDEN int cmd__run(const vsched_ctx *ctx, char *const argv[],
                         const char *cwd, const char *stdout_path,
                         long long timeout, vp_output *o, int *status);
/* Turn a finished run into a status with diagnostics about `file`: 0
 * (the tool's output, if any, reported as a note), VSCHED_ETOOL (exit
 * status not 0, killed, or could not start) or VSCHED_ETIMEDOUT, each
 * with the tool's output as an error, then what happened (an error) and
 * the command (a note); VSCHED_ECANCELLED without a word. */
CMD__HIDDEN int cmd__run_status(const vsched_ctx *ctx, const char *file,
                                char *const argv[], int outcome, int status,
                                long long timeout, vp_output *o);

/* ---- artifact.c ---------------------------------------------------------- */

/* Artifact stage: run the artifact template for in->profile into
 * out_dir/PROFILE/NAME + out_suffix (written to out->tmp_path: by the
 * tool through {out}, or from its stdout when the template has no
 * {out}); with {depfile}, the files the depfile names become out->deps.
 * Returns 0, VSCHED_ETOOL, VSCHED_ECANCELLED, VSCHED_ETIMEDOUT,
 * VSCHED_EIO, VSCHED_EINVAL or VSCHED_ENOMEM; on failure nothing is left
 * at the temporary paths. */
CMD__HIDDEN int cmd__artifact(void *inst, const vsched_ctx *ctx,
                              const vsched_artifact_in *in,
                              vsched_artifact_out *out);
/* The executor's identity for `profile` (ABI 1.1): a hash of the program
 * the artifact template runs (its path and bytes: /bin/sh for a shell
 * template). A program that cannot be found is hashed by its name (the
 * Artifact then fails saying so). Returns 0 or VSCHED_ENOMEM. */
CMD__HIDDEN int cmd__identity(void *inst, const vsched_ctx *ctx,
                              const char *profile, uint64_t *id);

#endif
