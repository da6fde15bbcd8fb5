/*
 * vsched/plugin.h -- the vsched plugin ABI, version 1.
 *
 * This is the only header a plugin needs. It includes nothing of vsched's
 * and compiles as C99 and as C++.
 *
 * A plugin is a shared object exporting exactly one symbol,
 * VSCHED_PLUGIN_ENTRY_SYMBOL, a function returning a pointer to a static
 * vsched_plugin descriptor. The host checks, in this order:
 *
 *   1. the entry symbol exists;
 *   2. abi_major == VSCHED_PLUGIN_ABI_MAJOR of the host, and abi_minor is not
 *      newer than the host's (an older minor is accepted: fields are only
 *      ever appended, and `size` says how many the plugin knows);
 *   3. every required operation of each declared role is non-NULL;
 *   4. the plugin's INI section validates against its schema;
 *
 * and only then calls create().
 *
 * Versioning policy: a change that removes, reorders or retypes a field,
 * changes the meaning of an operation or of a status code, changes
 * sizeof(vsched_key) (plugins lay keys out in arrays), or makes an
 * optional operation required, bumps VSCHED_PLUGIN_ABI_MAJOR. Adding a
 * field at the END of a struct that carries `size` (or of an out-struct
 * the host zero-fills), or a new OPTIONAL operation, bumps
 * VSCHED_PLUGIN_ABI_MINOR; nothing else may change within a major. The
 * host reads a field only when the struct's `size` covers it, and a plugin
 * reads a host-added field only when ctx->size / cfg->size covers it, so a
 * plugin built for an older minor keeps loading. Enforced by
 * the test suite (every 1.0 field keeps its offset and size, checked
 * against the frozen copy installed as <vsched/abi/plugin-1.0.h>) and by a
 * plugin compiled from that frozen copy alone. See vsched-plugin(7).
 *
 * Input structs (vsched_analysis_in, vsched_artifact_in, vsched_job_in)
 * grow the same way: their 1.0 fields stay first, where a 1.0 plugin reads
 * them, and `size` is the first 1.1 field, so a 1.0 plugin gets its 1.0
 * layout without any translation and a later plugin reads a field only
 * when in->size covers it. Out-structs (vsched_source_out, vsched_deps_out,
 * vsched_artifact_out) are zero-filled by the host before every call, at
 * the host's full size: a plugin sets what it knows and leaves the rest.
 *
 * Targeting an older minor: define VSCHED_PLUGIN_TARGET_MINOR (before
 * including this header, or with -D) to the oldest minor the plugin must
 * load on, and put VSCHED_PLUGIN_TARGET_MINOR in the descriptor's
 * abi_minor. Everything "Since" a later minor is then left out of the
 * structs, so sizeof() and every `size` the plugin reports are that
 * minor's, and the plugin loads on a host of that minor (as GLib's
 * GLIB_VERSION_MIN_REQUIRED). Default: this header's minor.
 *
 * What each minor added (every addition is marked "Since 1.N" below):
 *   1.1  vsched_artifact_out.deps / n_deps (the files an artifact read, as
 *        the tool reports them); vsched_executor_ops.identity (what,
 *        besides its configuration, decides the executor's outputs);
 *        VSCHED_PLUGIN_CYCLES_FORBIDDEN; `size` and the blockers'
 *        snapshots (vsched_blocker_in) in vsched_analysis_in and
 *        vsched_artifact_in, `size` in vsched_job_in;
 *        vsched_executor_ops.artifact_blockers (direct blockers or their
 *        closure); vsched_ctx.load / realpath (the loader through the
 *        context); vsched_config's host version, profile list, typed
 *        getters (get_str, get_int, get_bool, get_list) with the
 *        [profile.NAME] fallback, and blame (an error at a key's line);
 *        VSCHED_PLUGIN_TARGET_MINOR; vsched_executor_ops.command (the
 *        command artifact() would run, for compile_commands.json).
 *
 * Ownership, in one rule: a buffer a plugin hands to the host through an
 * out-parameter is allocated with ctx->alloc and owned by the host from then
 * on; a buffer the host hands to a plugin is borrowed for the duration of the
 * call. The one exception, opaque snapshots, is freed by the plugin's own
 * snapshot_free operation. Each field below says which rule applies.
 *
 * Threading: an operation may be called from any host thread. A plugin
 * whose instance is safe to call concurrently sets
 * VSCHED_PLUGIN_THREAD_SAFE; otherwise the host serialises every call into
 * that instance (per role; snapshot_free counts as an executor call).
 * create/destroy are always called from one thread. vsched_config.get
 * only reads and may be called from any thread until destroy().
 */
#ifndef VSCHED_PLUGIN_H
#define VSCHED_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VSCHED_PLUGIN_ABI_MAJOR 1
#define VSCHED_PLUGIN_ABI_MINOR 1

/* Since 1.1. The oldest minor of this major the plugin must load on; see
 * "Targeting an older minor" above. The descriptor's abi_minor. */
#ifndef VSCHED_PLUGIN_TARGET_MINOR
#define VSCHED_PLUGIN_TARGET_MINOR VSCHED_PLUGIN_ABI_MINOR
#endif
#if VSCHED_PLUGIN_TARGET_MINOR < 0 ||                                         \
    VSCHED_PLUGIN_TARGET_MINOR > VSCHED_PLUGIN_ABI_MINOR
#error                                                                        \
    "VSCHED_PLUGIN_TARGET_MINOR must name a minor of this header (0..VSCHED_PLUGIN_ABI_MINOR)"
#endif

/* The exported entry symbol's name. A plugin defines it with
 * VSCHED_PLUGIN_DEFINE(modname), where modname is the module's file name
 * without ".so" and with every character outside [A-Za-z0-9_] replaced by
 * '_'. That spells libltdl's per-module name, modname_LTX_vsched_plugin_entry,
 * which lets several plugins be linked into one program (preloaded) without
 * clashing. The host also accepts the plain name for hand-built modules.
 *
 * The rule, for a module file FILE.so (or FILE.la): the host looks up
 * FILE_LTX_vsched_plugin_entry (FILE mangled as above), then
 * vsched_plugin_entry. A module renamed after it was built keeps its old
 * prefixed symbol and is refused; the message names the symbols looked
 * for. Rebuild it with VSCHED_PLUGIN_DEFINE(newname), or export the plain
 * name.
 *
 *     VSCHED_PLUGIN_DEFINE(myexec) { return &my_descriptor; }
 */
#define VSCHED_PLUGIN_ENTRY_SYMBOL "vsched_plugin_entry"
#define VSCHED_PLUGIN_DEFINE(modname)                                         \
    VSCHED__EXTERN_C VSCHED_PLUGIN_EXPORT const struct vsched_plugin          \
        *modname##_LTX_vsched_plugin_entry(void);                             \
    VSCHED__EXTERN_C VSCHED_PLUGIN_EXPORT const struct vsched_plugin          \
        *modname##_LTX_vsched_plugin_entry(void)

#ifdef __cplusplus
#define VSCHED__EXTERN_C extern "C"
#else
#define VSCHED__EXTERN_C
#endif

/* Visibility for the entry symbol; everything else in a plugin should be
 * static or hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define VSCHED_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define VSCHED_PLUGIN_EXPORT
#endif

/*
 * Status codes: one list for plugins, the library and the host. Every
 * function in vsched returns 0 on success or one of these negative values.
 * X(NAME, value, message)
 */
#define VSCHED_ERROR_LIST(X)                                                  \
    X(ERR, -1, "operation failed")                                            \
    X(NOMEM, -2, "out of memory")                                             \
    X(INVAL, -3, "invalid argument")                                          \
    X(NOENT, -4, "no such file")                                              \
    X(ESCAPE, -5, "path resolves outside the loader root")                    \
    X(IO, -6, "input/output error")                                           \
    X(CANCELLED, -7, "cancelled")                                             \
    X(TOOL, -8, "external tool failed")                                       \
    X(UNSUPPORTED, -9, "operation not supported")                             \
    X(FULL, -10, "queue full")                                                \
    X(SUPERSEDED, -11, "superseded by newer content")                         \
    X(DEPFAIL, -12, "a dependency failed")                                    \
    X(CYCLE, -13, "dependency cycle")                                         \
    X(SHUTDOWN, -14, "scheduler is shutting down")                            \
    X(EXHAUSTED, -15, "generation counter exhausted")                         \
    X(ABI, -16, "plugin ABI mismatch")                                        \
    X(CONFIG, -17, "configuration error")                                     \
    X(STALE, -18, "stale identity")                                           \
    X(TIMEDOUT, -19, "timed out")

typedef enum vsched_status {
    VSCHED_OK = 0,
#define VSCHED__ERRENUM(name, value, msg) VSCHED_E##name = value,
    VSCHED_ERROR_LIST(VSCHED__ERRENUM)
#undef VSCHED__ERRENUM
    VSCHED_E__LAST = -20
} vsched_status;

/* ------------------------------------------------------------------------
 * The per-call context. The host builds one for every operation call; it is
 * valid only for the duration of that call.
 */
typedef enum vsched_severity {
    VSCHED_SEV_NOTE = 0,
    VSCHED_SEV_WARNING = 1,
    VSCHED_SEV_ERROR = 2
} vsched_severity;

typedef struct vsched_ctx vsched_ctx;
struct vsched_ctx {
    size_t size; /* sizeof(vsched_ctx) as the host knows it */

    /* Non-zero once the work this call belongs to has been cancelled
     * (superseded, interrupted, or a dependency failed) or its scheduler
     * is being destroyed. Long operations poll it and return
     * VSCHED_ECANCELLED (answered VSCHED_ESHUTDOWN at teardown). */
    int (*is_cancelled)(const vsched_ctx *ctx);

    /* Report one diagnostic. `file` may be NULL; `line` 0 means none.
     * `message` is borrowed (copied by the host); it may span lines, as a
     * compiler's stderr does. Plugins never print themselves. */
    void (*diag)(const vsched_ctx *ctx, vsched_severity sev, const char *file,
                 unsigned line, const char *message);

    /* The host allocator. Every buffer a plugin returns through an
     * out-parameter comes from alloc; the host frees it with free. alloc
     * returns NULL on exhaustion; realloc follows C's realloc. */
    void *(*alloc)(const vsched_ctx *ctx, size_t size);
    void *(*realloc)(const vsched_ctx *ctx, void *ptr, size_t size);
    void (*free)(const vsched_ctx *ctx, void *ptr);

    void *host; /* opaque to plugins */

#if VSCHED_PLUGIN_TARGET_MINOR >= 1
    /* Since 1.1. The run's source loader, for an executor: the same
     * operations as vsched_loader_ops.load and .realpath (root confinement
     * included), with the same ownership (ctx->alloc'ed, host-owned).
     * Executors reach sources through these, never through the file
     * system. NULL where the host has no loader to offer (create(), and
     * tools calling a single operation); check ctx->size first. They read
     * the loader's current content: for a blocker at the generation the
     * analysis hash covers, use in->blockers instead. A file artifact()
     * reads this way that is not among its deps belongs in out->deps, or
     * the host's up-to-date check does not know the output depends on it.
     * May be called from
     * the executor's operations only (the host serialises the loader when
     * it is not thread-safe; executor before loader, never the reverse). */
    int (*load)(const vsched_ctx *ctx, const char *name, char **bytes,
                size_t *len);
    int (*realpath)(const vsched_ctx *ctx, const char *name, char **canonical);
#endif
};

/* Since 1.1: a plugin may read ctx field F only when the host's context
 * covers it: VSCHED_HAS_FIELD(ctx, vsched_ctx, load) && ctx->load. Works
 * for every struct with a leading or 1.1 `size` member. */
#define VSCHED_HAS_FIELD(p, type, field)                                      \
    ((p)->size >= offsetof(type, field) + sizeof((p)->field))

/* ------------------------------------------------------------------------
 * Configuration schema: the keys a plugin accepts in its INI section.
 */
typedef enum vsched_key_type {
    VSCHED_KEY_STRING = 0, /* any text */
    VSCHED_KEY_INT = 1,    /* decimal integer within [min, max] */
    VSCHED_KEY_BOOL = 2,   /* true/false/yes/no/on/off/1/0 */
    VSCHED_KEY_PATH = 3,   /* resolved by the host relative to the INI's dir */
    VSCHED_KEY_LIST = 4    /* whitespace-separated words */
} vsched_key_type;

#define VSCHED_KEY_REQUIRED 0x1u    /* must be present (no default) */
#define VSCHED_KEY_PER_PROFILE 0x2u /* may be overridden in [profile.NAME] */

typedef struct vsched_key {
    const char *name; /* INI key */
    vsched_key_type type;
    const char *dflt;   /* default value as INI text, or NULL for none */
    const char *help;   /* one line */
    long long min, max; /* inclusive range for VSCHED_KEY_INT */
    unsigned flags;     /* VSCHED_KEY_* */
} vsched_key;

/* Read access to the validated configuration, handed to create(). Values
 * are borrowed and live until destroy(). For the plugin's own section,
 * defaults from the schema are filled in and PATH values are absolute. */
typedef struct vsched_config vsched_config;
struct vsched_config {
    size_t size;
    /* The plugin's own section name ("loader" or "executor"). */
    const char *section;
    /* Value of `key` in `section` ("executor", "profile.debug", ...), or
     * NULL when unset and without default. */
    const char *(*get)(const vsched_config *cfg, const char *section,
                       const char *key);
    /* Directory of the INI file, absolute. */
    const char *config_dir;
    void *host;

#if VSCHED_PLUGIN_TARGET_MINOR >= 1
    /* Since 1.1. The host's plugin ABI (VSCHED_PLUGIN_ABI_MAJOR/MINOR as
     * the host was built) and its package version ("1.4.0"): what a
     * plugin that targets an older minor reads to know what it may use. */
    unsigned host_abi_major, host_abi_minor;
    const char *host_version;

    /* Since 1.1. The profiles of the run's INI: NAME of every
     * [profile.NAME] section, in file order (borrowed, until destroy). */
    const char *const *profiles;
    size_t n_profiles;

    /* Since 1.1. Typed reads of a key of the plugin's own section, or with
     * `profile` non-NULL its [profile.PROFILE] value when that section
     * sets it, else the own section's (the fallback every per-profile key
     * wants). Schema defaults count as set. Each returns VSCHED_OK with
     * *out set; VSCHED_ENOENT when unset or empty (an empty value never
     * counts as a value), *out untouched; VSCHED_ECONFIG when the text is
     * not of the type (the host's message for create() is then
     * "[SECTION] KEY: ...", see blame). Strings and lists are borrowed,
     * until destroy.
     *   get_str   the text.
     *   get_int   a decimal integer, optional sign, no spaces, within
     *             long long ("12x", "1e3", " 5", "0x10" are errors).
     *   get_bool  true/false, yes/no, on/off, 1/0, any case; else error.
     *   get_list  whitespace-separated words (*words borrowed, *n >= 1). */
    int (*get_str)(const vsched_config *cfg, const char *profile,
                   const char *key, const char **out);
    int (*get_int)(const vsched_config *cfg, const char *profile,
                   const char *key, long long *out);
    int (*get_bool)(const vsched_config *cfg, const char *profile,
                    const char *key, int *out);
    int (*get_list)(const vsched_config *cfg, const char *profile,
                    const char *key, const char *const **words, size_t *n);

    /* Since 1.1. Say which key a failing create() is about: the host puts
     * that key's "FILE:LINE: " (or "--set: ") before create()'s message.
     * `section` NULL means the plugin's own; the last call wins. */
    void (*blame)(const vsched_config *cfg, const char *section,
                  const char *key);
#endif
};

/* ------------------------------------------------------------------------
 * Source loader role.
 */
typedef struct vsched_loader_ops {
    size_t size; /* sizeof(vsched_loader_ops) as the plugin knows it */

    /* Required. Read the whole source named `name` (a source name relative
     * to the loader root). On success *bytes (ctx->alloc, host-owned) and
     * *len are set; *bytes may stay NULL for an empty source (*len 0), never
     * otherwise. VSCHED_ENOENT when missing, VSCHED_EESCAPE when the
     * name resolves outside the root. */
    int (*load)(void *inst, const vsched_ctx *ctx, const char *name,
                char **bytes, size_t *len);

    /* Required. 1 if `name` exists, 0 if not, negative status on error. */
    int (*exists)(void *inst, const vsched_ctx *ctx, const char *name);

    /* Required. Kind of the source (e.g. "c", "header", "cxx"), written as
     * a NUL-terminated string into `kind` (caller buffer of `cap` bytes). */
    int (*classify)(void *inst, const vsched_ctx *ctx, const char *name,
                    char *kind, size_t cap);

    /* Required. Canonical source name of `name` (relative to the root,
     * "." and ".." resolved, symlinks followed) into *canonical
     * (ctx->alloc, host-owned). VSCHED_EESCAPE outside the root. */
    int (*realpath)(void *inst, const vsched_ctx *ctx, const char *name,
                    char **canonical);
} vsched_loader_ops;

/* ------------------------------------------------------------------------
 * Stage executor role.
 */

/* Result of the Source stage. */
typedef struct vsched_source_out {
    void *snapshot;        /* plugin-owned; released by snapshot_free */
    uint64_t content_hash; /* hash of the source content */
} vsched_source_out;

/* Result of extract_deps. Every array and string is ctx->alloc'ed and
 * host-owned. Names are source names relative to the loader root. */
typedef struct vsched_deps_out {
    char **deps; /* forward dependencies (ingested, loaded) */
    size_t n_deps;
    char **blockers; /* files whose Analysis gates this file's Analysis
                          and Artifact */
    size_t n_blockers;
} vsched_deps_out;

/* Since 1.1. One blocker as Analysis and Artifact see it. Borrowed for the
 * call: the snapshot is the one source() made of that file at the
 * generation the analysis hash covers (the host holds a reference while
 * the operation runs, and refuses the result if the file changed
 * meanwhile), so an executor expanding an include reads it here, never
 * from the file system or the loader. */
typedef struct vsched_blocker_in {
    const char *name;     /* canonical source name, as extract_deps gave */
    const void *snapshot; /* never NULL */
} vsched_blocker_in;

/* Input of the Analysis stage. */
typedef struct vsched_analysis_in {
    const char *name;     /* borrowed */
    const void *snapshot; /* borrowed; from source() */
    uint64_t content_hash;
    const uint64_t *blocker_hashes; /* borrowed; analysis hashes of the
                                       blockers, in extract_deps order */
    size_t n_blockers;
#if VSCHED_PLUGIN_TARGET_MINOR >= 1
    size_t size; /* Since 1.1: sizeof(vsched_analysis_in) as the host
                    knows it */
    /* Since 1.1. The direct blockers, n_blockers of them, in the order of
     * blocker_hashes. A blocker in the same cycle as this file (a cycle
     * building as one unit) is here too, its snapshot as parsed. */
    const vsched_blocker_in *blockers;
#endif
} vsched_analysis_in;

/* Input of the Artifact stage. */
typedef struct vsched_artifact_in {
    const char *name;     /* borrowed */
    const char *profile;  /* borrowed; profile name */
    const void *snapshot; /* borrowed */
    uint64_t analysis_hash;
#if VSCHED_PLUGIN_TARGET_MINOR >= 1
    size_t size; /* Since 1.1: sizeof(vsched_artifact_in) as the host
                    knows it */
    /* Since 1.1. The blockers whose Analysis the analysis hash covers:
     * with executor ops artifact_blockers = VSCHED_BLOCKERS_DIRECT (0)
     * the file's own blockers in extract_deps order; with
     * VSCHED_BLOCKERS_CLOSURE every file reachable through blockers
     * (blockers of blockers, ...), each once, in depth-first preorder
     * from the file's own, the file itself left out. */
    const vsched_blocker_in *blockers;
    size_t n_blockers;
#endif
} vsched_artifact_in;

/* Result of the Artifact stage. Either the plugin wrote its output to
 * tmp_path (it chose the name, in the same directory as path), or it
 * returns the bytes and leaves tmp_path NULL. The host publishes by rename
 * to `path`; on any failure it removes tmp_path. An executor whose stage
 * produces no file (a test executor) leaves path, tmp_path and bytes NULL.
 * All ctx->alloc'ed, host-owned. */
typedef struct vsched_artifact_out {
    char *path;     /* final output path (absolute) */
    char *tmp_path; /* where the plugin wrote it, or NULL */
    char *bytes;    /* output bytes when tmp_path is NULL */
    size_t len;
    uint64_t artifact_hash; /* key of what was produced (0 if unknown) */

#if VSCHED_PLUGIN_TARGET_MINOR >= 1
    /* Since 1.1. The files the artifact was made from, as the tool itself
     * reports them (for cc: the compiler's -MD depfile), as source names
     * relative to the loader root; files outside the root (system headers)
     * are left out. The host records them for its up-to-date check beside
     * extract_deps' dependencies, so a file the scanner missed (an include
     * through a macro) is still tracked. NULL/0 when the executor does not
     * know. Array and strings ctx->alloc'ed, host-owned, also on failure. */
    char **deps;
    size_t n_deps;
#endif
} vsched_artifact_out;

#if VSCHED_PLUGIN_TARGET_MINOR >= 1
/* Since 1.1. What command() returns: the command artifact() would run for
 * one file, for tools (compile_commands.json). Every pointer is
 * ctx->alloc'ed and host-owned once set, also on failure; argv's strings
 * too. All NULL/0 when the file has no command (a header). */
typedef struct vsched_command_out {
    char **argv; /* argc strings and a NULL: the tool and its arguments
                        as they would run, naming the final output (never a
                        temporary) and leaving out what only a run of the
                        host needs (cc: its -MD depfile, the launcher) */
    size_t argc;
    char *directory; /* absolute: the working directory argv runs in */
    char *file;      /* absolute path of the source file argv reads */
    char *output;    /* absolute path of the output argv writes */
} vsched_command_out;
#endif

/* A generic graph job (e.g. a link step). */
typedef struct vsched_job_in {
    const char *kind;          /* borrowed; job kind, e.g. "link" */
    const char *name;          /* borrowed; job name, e.g. "hello" */
    const char *profile;       /* borrowed */
    const char *const *inputs; /* borrowed; artifact paths */
    size_t n_inputs;
#if VSCHED_PLUGIN_TARGET_MINOR >= 1
    size_t size; /* Since 1.1: sizeof(vsched_job_in) as the host knows it */
#endif
} vsched_job_in;

typedef struct vsched_executor_ops {
    size_t size; /* sizeof(vsched_executor_ops) as the plugin knows it */

    /* Required. Parse the loaded bytes (borrowed) of `name` into a snapshot.
     * `kind` is the loader's classification. */
    int (*source)(void *inst, const vsched_ctx *ctx, const char *name,
                  const char *kind, const char *bytes, size_t len,
                  vsched_source_out *out);

    /* Required. Dependencies of a parsed snapshot (borrowed). */
    int (*extract_deps)(void *inst, const vsched_ctx *ctx, const char *name,
                        const void *snapshot, vsched_deps_out *out);

    /* Required. Analysis hash (an interface hash of the file and what it
     * depends on) into *hash. */
    int (*analysis)(void *inst, const vsched_ctx *ctx,
                    const vsched_analysis_in *in, uint64_t *hash);

    /* Required. Produce the artifact of `in->name` for `in->profile`. */
    int (*artifact)(void *inst, const vsched_ctx *ctx,
                    const vsched_artifact_in *in, vsched_artifact_out *out);

    /* Required. Release a snapshot returned by source(). */
    void (*snapshot_free)(void *inst, void *snapshot);

    /* Optional (may be NULL). Run a generic graph job; same output rules
     * as artifact(). */
    int (*job)(void *inst, const vsched_ctx *ctx, const vsched_job_in *in,
               vsched_artifact_out *out);

#if VSCHED_PLUGIN_TARGET_MINOR >= 1
    /* Since 1.1. Optional (may be NULL). The executor's identity for
     * `profile`: a hash of what, besides its configuration, decides what
     * artifact() and job() produce (for cc: the compiler's --version output
     * and a hash of its binary), into *id. The host calls it once per run
     * and profile, before any stage, and folds it into every artifact key
     * together with the plugin's name, version and configuration; without
     * it an executor is keyed by those alone. A failure is not fatal: the
     * host keys the run as "identity unknown", which rebuilds what the
     * executor built before. */
    int (*identity)(void *inst, const vsched_ctx *ctx, const char *profile,
                    uint64_t *id);

    /* Since 1.1. Optional (may be NULL). The command artifact() would run
     * for `name` (`kind`: the loader's classification) in `profile`, into
     * *out (zeroed by the host; see vsched_command_out), computed without
     * running anything and without creating or changing any file. Returns
     * 0 (a file without a command leaves *out empty), VSCHED_EINVAL (a name
     * or profile it cannot build) or VSCHED_ENOMEM; a failure may set
     * diagnostics through ctx->diag. Called from the host's main thread,
     * while no stage runs. */
    int (*command)(void *inst, const vsched_ctx *ctx, const char *name,
                   const char *kind, const char *profile,
                   vsched_command_out *out);

    /* Since 1.1. Not an operation: which blockers artifact() gets in
     * in->blockers. VSCHED_BLOCKERS_DIRECT (0, also for an ops table too
     * small to hold this field): the file's own. VSCHED_BLOCKERS_CLOSURE:
     * the transitive closure -- what an executor expanding nested
     * includes (a includes b includes c) needs, because the analysis hash
     * of a covers c through b's, and c's snapshot at that generation is
     * reachable nowhere else. It costs the scheduler one step per file of
     * the closure at each Artifact's start, under its lock: ask for it
     * only when artifact() reads the texts. */
    unsigned artifact_blockers;
#endif
} vsched_executor_ops;

#define VSCHED_BLOCKERS_DIRECT 0u
#define VSCHED_BLOCKERS_CLOSURE 1u

/* ------------------------------------------------------------------------
 * The descriptor.
 */
#define VSCHED_ROLE_LOADER 0x1u
#define VSCHED_ROLE_EXECUTOR 0x2u

#define VSCHED_PLUGIN_THREAD_SAFE 0x1u
/* Since 1.1, executors: blocker cycles are errors in this language (the
 * host then sets vsched_options.blocker_cycles_fail); without it a cycle
 * among blockers -- C headers with include guards that include each other
 * -- builds as one unit. */
#if VSCHED_PLUGIN_TARGET_MINOR >= 1
#define VSCHED_PLUGIN_CYCLES_FORBIDDEN 0x2u
#endif

typedef struct vsched_plugin {
    uint32_t abi_major;  /* VSCHED_PLUGIN_ABI_MAJOR the plugin was built for */
    uint32_t abi_minor;  /* the oldest minor it needs: write
                            VSCHED_PLUGIN_TARGET_MINOR */
    size_t size;         /* sizeof(vsched_plugin) as the plugin knows it */
    const char *name;    /* short name, [a-z0-9_-]+ */
    const char *version; /* the plugin's own version */
    const char *description; /* one line */
    unsigned roles;          /* VSCHED_ROLE_* */
    unsigned flags;          /* VSCHED_PLUGIN_* */

    const vsched_key *schema; /* accepted keys of the plugin's section */
    size_t n_schema;

    /* Required. Create an instance from validated configuration (borrowed,
     * valid until destroy). On failure return a negative status and set
     * *errmsg (ctx->alloc'ed, host-owned) to a one-line reason; cfg->blame
     * (1.1) points it at a key's line. Diagnostics through ctx->diag are
     * shown to the user tagged with the severity and the plugin's name
     * ("warning: plugin 'NAME': FILE:LINE: message"). */
    int (*create)(const vsched_ctx *ctx, const vsched_config *cfg, void **inst,
                  char **errmsg);
    /* Required. Destroy an instance. */
    void (*destroy)(void *inst);

    const vsched_loader_ops *loader;     /* when roles has LOADER */
    const vsched_executor_ops *executor; /* when roles has EXECUTOR */
} vsched_plugin;

/* The entry point every plugin exports. */
typedef const vsched_plugin *(*vsched_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif
#endif /* VSCHED_PLUGIN_H */
