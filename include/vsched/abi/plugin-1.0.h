/*
 * vsched/abi/plugin-1.0.h -- a FROZEN copy of the plugin ABI 1.0 layouts
 * of <vsched/plugin.h>, as released. Never change a layout here: it is
 * what a plugin compiled against vsched 1.0 headers has baked into its
 * binary, and what every 1.x host keeps accepting.
 *
 * Every name carries a v1_0_ prefix so this header can be included beside
 * the current <vsched/plugin.h> (the layout check of the vsched test suite
 * compares the two field by field), and a plugin can be built from it
 * alone, the way a 1.0 plugin was built. A plugin author who wants the
 * 1.0 layouts under their usual names builds against <vsched/plugin.h>
 * with VSCHED_PLUGIN_TARGET_MINOR defined to 0 instead (vsched-plugin(7)).
 *
 * When a minor ships, a frozen copy of it (plugin-1.N.h) joins this one.
 */
#ifndef VSCHED_TESTS_PLUGIN_V1_0_H
#define VSCHED_TESTS_PLUGIN_V1_0_H

#include <stddef.h>
#include <stdint.h>

#define V1_0_ABI_MAJOR 1
#define V1_0_ABI_MINOR 0
#define V1_0_ENTRY_SYMBOL "vsched_plugin_entry"

/* Status codes of 1.0 (the values are part of the ABI). */
#define V1_0_STATUS_LIST(X)                                                   \
    X(OK, 0)                                                                  \
    X(EERR, -1)                                                               \
    X(ENOMEM, -2)                                                             \
    X(EINVAL, -3)                                                             \
    X(ENOENT, -4)                                                             \
    X(EESCAPE, -5)                                                            \
    X(EIO, -6)                                                                \
    X(ECANCELLED, -7)                                                         \
    X(ETOOL, -8)                                                              \
    X(EUNSUPPORTED, -9)                                                       \
    X(EFULL, -10)                                                             \
    X(ESUPERSEDED, -11)                                                       \
    X(EDEPFAIL, -12)                                                          \
    X(ECYCLE, -13)                                                            \
    X(ESHUTDOWN, -14)                                                         \
    X(EEXHAUSTED, -15)                                                        \
    X(EABI, -16)                                                              \
    X(ECONFIG, -17)                                                           \
    X(ESTALE, -18)                                                            \
    X(ETIMEDOUT, -19)

enum {
#define V1_0__ENUM(name, value) V1_0_##name = value,
    V1_0_STATUS_LIST(V1_0__ENUM)
#undef V1_0__ENUM
    V1_0__LAST = -20
};

typedef enum v1_0_severity {
    V1_0_SEV_NOTE = 0,
    V1_0_SEV_WARNING = 1,
    V1_0_SEV_ERROR = 2
} v1_0_severity;

typedef struct v1_0_ctx v1_0_ctx;
struct v1_0_ctx {
    size_t size;
    int (*is_cancelled)(const v1_0_ctx *ctx);
    void (*diag)(const v1_0_ctx *ctx, v1_0_severity sev, const char *file,
                 unsigned line, const char *message);
    void *(*alloc)(const v1_0_ctx *ctx, size_t size);
    void *(*realloc)(const v1_0_ctx *ctx, void *ptr, size_t size);
    void (*free)(const v1_0_ctx *ctx, void *ptr);
    void *host;
};

typedef enum v1_0_key_type {
    V1_0_KEY_STRING = 0,
    V1_0_KEY_INT = 1,
    V1_0_KEY_BOOL = 2,
    V1_0_KEY_PATH = 3,
    V1_0_KEY_LIST = 4
} v1_0_key_type;

#define V1_0_KEY_REQUIRED 0x1u
#define V1_0_KEY_PER_PROFILE 0x2u

typedef struct v1_0_key {
    const char *name;
    v1_0_key_type type;
    const char *dflt;
    const char *help;
    long long min, max;
    unsigned flags;
} v1_0_key;

typedef struct v1_0_config v1_0_config;
struct v1_0_config {
    size_t size;
    const char *section;
    const char *(*get)(const v1_0_config *cfg, const char *section,
                       const char *key);
    const char *config_dir;
    void *host;
};

typedef struct v1_0_loader_ops {
    size_t size;
    int (*load)(void *inst, const v1_0_ctx *ctx, const char *name,
                char **bytes, size_t *len);
    int (*exists)(void *inst, const v1_0_ctx *ctx, const char *name);
    int (*classify)(void *inst, const v1_0_ctx *ctx, const char *name,
                    char *kind, size_t cap);
    int (*realpath)(void *inst, const v1_0_ctx *ctx, const char *name,
                    char **canonical);
} v1_0_loader_ops;

typedef struct v1_0_source_out {
    void *snapshot;
    uint64_t content_hash;
} v1_0_source_out;

typedef struct v1_0_deps_out {
    char **deps;
    size_t n_deps;
    char **blockers;
    size_t n_blockers;
} v1_0_deps_out;

typedef struct v1_0_analysis_in {
    const char *name;
    const void *snapshot;
    uint64_t content_hash;
    const uint64_t *blocker_hashes;
    size_t n_blockers;
} v1_0_analysis_in;

typedef struct v1_0_artifact_in {
    const char *name;
    const char *profile;
    const void *snapshot;
    uint64_t analysis_hash;
} v1_0_artifact_in;

typedef struct v1_0_artifact_out {
    char *path;
    char *tmp_path;
    char *bytes;
    size_t len;
    uint64_t artifact_hash;
} v1_0_artifact_out;

typedef struct v1_0_job_in {
    const char *kind;
    const char *name;
    const char *profile;
    const char *const *inputs;
    size_t n_inputs;
} v1_0_job_in;

typedef struct v1_0_executor_ops {
    size_t size;
    int (*source)(void *inst, const v1_0_ctx *ctx, const char *name,
                  const char *kind, const char *bytes, size_t len,
                  v1_0_source_out *out);
    int (*extract_deps)(void *inst, const v1_0_ctx *ctx, const char *name,
                        const void *snapshot, v1_0_deps_out *out);
    int (*analysis)(void *inst, const v1_0_ctx *ctx,
                    const v1_0_analysis_in *in, uint64_t *hash);
    int (*artifact)(void *inst, const v1_0_ctx *ctx,
                    const v1_0_artifact_in *in, v1_0_artifact_out *out);
    void (*snapshot_free)(void *inst, void *snapshot);
    int (*job)(void *inst, const v1_0_ctx *ctx, const v1_0_job_in *in,
               v1_0_artifact_out *out);
} v1_0_executor_ops;

#define V1_0_ROLE_LOADER 0x1u
#define V1_0_ROLE_EXECUTOR 0x2u
#define V1_0_PLUGIN_THREAD_SAFE 0x1u

typedef struct v1_0_plugin {
    uint32_t abi_major;
    uint32_t abi_minor;
    size_t size;
    const char *name;
    const char *version;
    const char *description;
    unsigned roles;
    unsigned flags;
    const v1_0_key *schema;
    size_t n_schema;
    int (*create)(const v1_0_ctx *ctx, const v1_0_config *cfg, void **inst,
                  char **errmsg);
    void (*destroy)(void *inst);
    const v1_0_loader_ops *loader;
    const v1_0_executor_ops *executor;
} v1_0_plugin;

/* The 1.0 entry point, exported as MODNAME_LTX_vsched_plugin_entry. */
#if defined(__GNUC__) || defined(__clang__)
#define V1_0_EXPORT __attribute__((visibility("default")))
#else
#define V1_0_EXPORT
#endif
#define V1_0_PLUGIN_DEFINE(modname)                                           \
    V1_0_EXPORT const v1_0_plugin *modname##_LTX_vsched_plugin_entry(void);   \
    V1_0_EXPORT const v1_0_plugin *modname##_LTX_vsched_plugin_entry(void)

#endif /* VSCHED_TESTS_PLUGIN_V1_0_H */
