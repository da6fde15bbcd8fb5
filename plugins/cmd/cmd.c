/*
 * cmd.c -- the `cmd` executor: any toolchain, driven by argv templates.
 *
 * Source finds a file's dependencies (scan.c: a regex over its lines
 * and/or a scan command's depfile); they are also blockers, so a file's
 * Analysis hash covers everything it reaches, and it folds the templates
 * too, so changing a command rebuilds. Artifact runs the artifact
 * template for a profile (artifact.c), with no shell unless `shell =
 * true`, and reports the files the tool's own depfile names.
 *
 * Configuration is read once, at create(): both templates are parsed and
 * checked there (an unknown placeholder, an unbalanced brace or quote is
 * a configuration error naming the key), the regex compiled. Only the
 * per-profile key `flags` is looked up per call, through cfg->get.
 *
 * Thread safety: an instance is immutable after create(); every
 * operation may run concurrently.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <xxhash.h>

#include "cmd.h"

static const vsched_key cmd_schema[] = {
    {"artifact", VSCHED_KEY_STRING, NULL,
     "argv template of the Artifact stage, e.g. {tool} {flags} -o {out} {in}",
     0, 0, VSCHED_KEY_REQUIRED},
    {"scan", VSCHED_KEY_STRING, "",
     "argv template run at the Source stage; the make rule it writes to "
     "{depfile} (or stdout) names dependencies",
     0, 0, 0},
    {"dep_regex", VSCHED_KEY_STRING, "",
     "POSIX extended regex matched on each source line; its first group "
     "names a dependency",
     0, 0, 0},
    {"include_dirs", VSCHED_KEY_LIST, "",
     "where dep_regex names are looked for after the file's own directory "
     "(source names)",
     0, 0, 0},
    {"tool", VSCHED_KEY_STRING, "",
     "program for {tool}: a name searched on PATH, or a path relative to "
     "the INI file",
     0, 0, 0},
    {"flags", VSCHED_KEY_LIST, "", "words for {flags}", 0, 0,
     VSCHED_KEY_PER_PROFILE},
    {"out_dir", VSCHED_KEY_PATH, NULL, "directory receiving the outputs", 0, 0,
     VSCHED_KEY_REQUIRED},
    {"out_suffix", VSCHED_KEY_STRING, "",
     "appended to the source name: the output is out_dir/PROFILE/NAME+suffix",
     0, 0, 0},
    {"shell", VSCHED_KEY_BOOL, "false",
     "run each template as one /bin/sh -c string (values quoted for it)", 0, 0,
     0},
    {"timeout", VSCHED_KEY_INT, "0",
     "seconds before a tool is killed and its file fails (0 = none)", 0,
     604800, 0},
    {"source_root", VSCHED_KEY_PATH, NULL,
     "directory the source names are relative to (default: [loader] root)", 0,
     0, 0},
};

/* Contract in cmd.h. The fixed placeholders, then every key of the
 * schema but the templates and the regex (tests/test_cmd.c checks the
 * two tables agree: LIST keys are lists, per-profile keys Artifact-only). */
const cmd_ph cmd__placeholders[] = {
    [CMD_PH_IN] = {"in", 0},
    [CMD_PH_OUT] = {"out", CMD_PH_ARTIFACT},
    [CMD_PH_NAME] = {"name", 0},
    [CMD_PH_PROFILE] = {"profile", CMD_PH_ARTIFACT},
    [CMD_PH_DEPFILE] = {"depfile", 0},
    [CMD_PH_ROOT] = {"root", 0},
    [CMD_PH_TOOL] = {"tool", 0},
    [CMD_PH_FLAGS] = {"flags", CMD_PH_LIST | CMD_PH_ARTIFACT},
    [CMD_PH_INCLUDE_DIRS] = {"include_dirs", CMD_PH_LIST},
    [CMD_PH_OUT_DIR] = {"out_dir", 0},
    [CMD_PH_OUT_SUFFIX] = {"out_suffix", 0},
    [CMD_PH_SHELL] = {"shell", 0},
    [CMD_PH_TIMEOUT] = {"timeout", 0},
    [CMD_PH_SOURCE_ROOT] = {"source_root", 0},
};
const size_t cmd__n_placeholders =
    sizeof cmd__placeholders / sizeof cmd__placeholders[0];

_Static_assert(sizeof cmd__placeholders / sizeof cmd__placeholders[0] ==
                       CMD_PH_COUNT &&
                   CMD_PH_COUNT <= 64,
               "one entry per id; cmd_tpl.uses has a bit per placeholder");

static const vsched_key *schema_key(const char *name)
{
    for (size_t i = 0; i < sizeof cmd_schema / sizeof cmd_schema[0]; i++)
        if (strcmp(cmd_schema[i].name, name) == 0)
            return &cmd_schema[i];
    return NULL;
}

/* Contract in cmd.h. */
const char *cmd__key_value(const cmd_inst *cmd, int ph, const char *profile)
{
    const char *name = cmd__placeholders[ph].name, *v = NULL;
    const vsched_key *k = schema_key(name);
    char section[256];
    if (profile != NULL && profile[0] != '\0' && k != NULL &&
        (k->flags & VSCHED_KEY_PER_PROFILE) &&
        (size_t)snprintf(section, sizeof section, "profile.%s", profile) <
            sizeof section)
        v = cmd->cfg->get(cmd->cfg, section, name);
    if (v == NULL)
        v = cmd->key_vals[ph];
    return v != NULL ? v : "";
}

/* ---- stages -------------------------------------------------------------- */

static int cmd_source(void *inst, const vsched_ctx *ctx, const char *name,
                      const char *kind, const char *bytes, size_t len,
                      vsched_source_out *out)
{
    cmd_snap *snap;
    (void)kind; /* every kind is built the same way */
    int rc = cmd__scan(inst, ctx, name, bytes, len, &snap);
    if (rc != VSCHED_OK)
        return rc;
    snap->content_hash = XXH3_64bits(bytes, len);
    out->snapshot = snap;
    out->content_hash = snap->content_hash;
    return VSCHED_OK;
}

static int cmd_extract_deps(void *inst, const vsched_ctx *ctx,
                            const char *name, const void *snapshot,
                            vsched_deps_out *out)
{
    const cmd_snap *s = snapshot;
    return vp_deps_out(ctx, s->dep, s->n, out);
}

/* The file's content, its blockers' hashes (which cover what they reach)
 * and the instance's templates: a changed command changes every hash. */
static int cmd_analysis(void *inst, const vsched_ctx *ctx,
                        const vsched_analysis_in *in, uint64_t *hash)
{
    const cmd_inst *cmd = inst;
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL)
        return VSCHED_ENOMEM;
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, &in->content_hash, sizeof in->content_hash);
    if (in->n_blockers > 0)
        XXH3_64bits_update(st, in->blocker_hashes,
                           in->n_blockers * sizeof *in->blocker_hashes);
    XXH3_64bits_update(st, &cmd->config_hash, sizeof cmd->config_hash);
    *hash = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return VSCHED_OK;
}

static void cmd_snapshot_free(void *inst, void *snapshot)
{
    free(snapshot);
}

/* ---- lifecycle ----------------------------------------------------------- */

static void cmd_destroy(void *inst)
{
    cmd_inst *cmd = inst;
    if (cmd == NULL)
        return;
    cmd__tpl_free(&cmd->artifact);
    cmd__tpl_free(&cmd->scan);
    if (cmd->have_regex)
        regfree(&cmd->regex);
    cmd__strv_free(cmd->include_dirs, cmd->n_include_dirs);
    if (cmd->key_vals != NULL) {
        free((char *)cmd->key_vals[CMD_PH_TOOL]);
        free((char *)cmd->key_vals[CMD_PH_INCLUDE_DIRS]);
    }
    free(cmd->key_vals);
    free(cmd->root);
    free(cmd->out_dir);
    vp_sweep_gate_fini(&cmd->sweep);
    free(cmd);
}

/* The include dirs, normalised, and their joined text for
 * {include_dirs}; NULL or a reason. */
static const char *read_include_dirs(cmd_inst *cmd, const char *v,
                                     char **joined, char *why, size_t cap)
{
    size_t n = 0, len = strlen(v);
    char **dirs = calloc(len / 2 + 2, sizeof *dirs);
    char *text = calloc(2 * len + 2, 1), *save = NULL;
    char *copy = strdup(v);
    cmd->include_dirs = dirs;
    *joined = text;
    if (dirs == NULL || text == NULL || copy == NULL) {
        free(copy);
        return "out of memory";
    }
    for (char *t = strtok_r(copy, " \t\r\n", &save); t != NULL;
         t = strtok_r(NULL, " \t\r\n", &save)) {
        if ((dirs[n] = strdup(t)) == NULL)
            break;
        cmd->n_include_dirs = ++n;
        if (vp_normalise_dir(dirs[n - 1]) != 0) {
            snprintf(why, cap,
                     "include_dirs: '%s' is not inside the source root", t);
            free(copy);
            return why;
        }
        if (n > 1)
            strcat(text, " ");
        strcat(text, dirs[n - 1]);
    }
    free(copy);
    return NULL;
}

/* The executor-wide value of each placeholder key. */
static const char *read_keys(cmd_inst *cmd, const vsched_config *cfg,
                             char *why, size_t cap)
{
    const char *sec = cfg->section, *v;
    cmd->key_vals = calloc(cmd__n_placeholders, sizeof *cmd->key_vals);
    if (cmd->key_vals == NULL)
        return "out of memory";
    for (size_t i = CMD_PH_FIXED; i < cmd__n_placeholders; i++) {
        v = cfg->get(cfg, sec, cmd__placeholders[i].name);
        cmd->key_vals[i] = v != NULL ? v : "";
    }
    /* tool: a path is relative to the INI file; a bare name stays one
     * (posix_spawnp searches PATH) */
    v = cmd->key_vals[CMD_PH_TOOL];
    char *tool =
        strchr(v, '/') != NULL ? vp_absolute(cfg->config_dir, v) : strdup(v);
    cmd->key_vals[CMD_PH_TOOL] = tool;
    char *joined = NULL;
    const char *err = read_include_dirs(
        cmd, cmd->key_vals[CMD_PH_INCLUDE_DIRS], &joined, why, cap);
    cmd->key_vals[CMD_PH_INCLUDE_DIRS] = joined;
    if (tool == NULL || joined == NULL)
        return "out of memory";
    return err;
}

/* Parse template `key` into `t` (*have = 1), allowing the placeholders
 * that share no flag with `forbid`; an empty value is an error when
 * `required`, else *have = 0. NULL, or the reason in `why`. */
static const char *read_template(const vsched_config *cfg, const char *key,
                                 int required, int shell, unsigned forbid,
                                 cmd_tpl *t, int *have, char *why, size_t cap)
{
    const char *v = cfg->get(cfg, cfg->section, key);
    char reason[1024];
    *have = 0;
    if ((v == NULL || v[0] == '\0') && required) {
        snprintf(why, cap, "%s: the template is empty", key);
        return why;
    }
    if (v == NULL || v[0] == '\0')
        return NULL;
    int rc = cmd__tpl_parse(v, shell, forbid, t, reason, sizeof reason);
    if (rc == VSCHED_ENOMEM)
        return "out of memory";
    if (rc != VSCHED_OK) {
        snprintf(why, cap, "%s: %s", key, reason);
        return why;
    }
    *have = 1;
    return NULL;
}

static const char *read_regex(cmd_inst *cmd, const vsched_config *cfg,
                              char *why, size_t cap)
{
    const char *v = cfg->get(cfg, cfg->section, "dep_regex");
    char reason[256];
    if (v == NULL || v[0] == '\0')
        return NULL;
    int rc = regcomp(&cmd->regex, v, REG_EXTENDED);
    if (rc != 0) {
        regerror(rc, &cmd->regex, reason, sizeof reason);
        snprintf(why, cap, "dep_regex: '%s': %s", v, reason);
        return why;
    }
    cmd->have_regex = 1;
    if (cmd->regex.re_nsub == 0) {
        snprintf(why, cap,
                 "dep_regex: '%s' has no group: put the dependency's name in "
                 "( ), e.g. ^@include \"([^\"]+)\"",
                 v);
        return why;
    }
    return NULL;
}

/* Everything the instance's outputs depend on besides the sources. */
static uint64_t config_hash(const cmd_inst *cmd, const vsched_config *cfg)
{
    static const char *const keys[] = {"artifact", "scan", "dep_regex"};
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL)
        return 0;
    XXH3_64bits_reset(st);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = cfg->get(cfg, cfg->section, keys[i]);
        XXH3_64bits_update(st, v != NULL ? v : "", v ? strlen(v) + 1 : 1);
    }
    for (size_t i = CMD_PH_FIXED; i < cmd__n_placeholders; i++)
        XXH3_64bits_update(st, cmd->key_vals[i], strlen(cmd->key_vals[i]) + 1);
    XXH3_64bits_update(st, cmd->root, strlen(cmd->root) + 1);
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}

/* Read the executor section into `cmd`; NULL or a reason. */
static const char *configure(cmd_inst *cmd, const vsched_config *cfg,
                             char *why, size_t cap)
{
    const char *sec = cfg->section, *v, *err;
    char ebuf[128];
    if ((v = cfg->get(cfg, sec, "out_dir")) == NULL || v[0] == '\0')
        return "out_dir: not set";
    if ((cmd->out_dir = vp_absolute(cfg->config_dir, v)) == NULL)
        return "out of memory";
    if ((v = cfg->get(cfg, sec, "source_root")) == NULL &&
        (v = cfg->get(cfg, "loader", "root")) == NULL)
        return "source_root: not set, and no root in [loader]";
    char *abs = vp_absolute(cfg->config_dir, v);
    if (abs == NULL)
        return "out of memory";
    if ((cmd->root = realpath(abs, NULL)) == NULL)
        snprintf(why, cap, "source_root: '%s': %s", abs,
                 strerror_r(errno, ebuf, sizeof ebuf));
    free(abs);
    if (cmd->root == NULL)
        return why;
    if ((err = read_keys(cmd, cfg, why, cap)) != NULL)
        return err;
    cmd->out_suffix = cmd->key_vals[CMD_PH_OUT_SUFFIX];
    if (strchr(cmd->out_suffix, '/') != NULL) {
        snprintf(why, cap,
                 "out_suffix: '%s' has a '/'; outputs stay beside each other "
                 "under out_dir/PROFILE",
                 cmd->out_suffix);
        return why;
    }
    v = cfg->get(cfg, sec, "timeout");
    cmd->timeout = v != NULL ? strtoll(v, NULL, 10) : 0;
    v = cfg->get(cfg, sec, "shell"); /* a boolean, checked by the host */
    int shell = v != NULL &&
                (strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 ||
                 strcasecmp(v, "on") == 0 || strcmp(v, "1") == 0);
    int have = 0;
    if ((err = read_template(cfg, "artifact", 1, shell, 0, &cmd->artifact,
                             &have, why, cap)) != NULL ||
        (err = read_template(cfg, "scan", 0, shell, CMD_PH_ARTIFACT,
                             &cmd->scan, &cmd->have_scan, why, cap)) != NULL ||
        (err = read_regex(cmd, cfg, why, cap)) != NULL)
        return err;
    if (cmd->key_vals[CMD_PH_TOOL][0] == '\0' &&
        (cmd__tpl_uses(&cmd->artifact, CMD_PH_TOOL) ||
         (cmd->have_scan && cmd__tpl_uses(&cmd->scan, CMD_PH_TOOL)))) {
        snprintf(why, cap, "%s: runs {tool}, but tool is not set",
                 cmd__tpl_uses(&cmd->artifact, CMD_PH_TOOL) ? "artifact"
                                                            : "scan");
        return why;
    }
    cmd->config_hash = config_hash(cmd, cfg);
    return NULL;
}

static int cmd_create(const vsched_ctx *ctx, const vsched_config *cfg,
                      void **inst, char **errmsg)
{
    cmd_inst *cmd = calloc(1, sizeof *cmd);
    if (cmd == NULL)
        return VSCHED_ENOMEM;
    vp_sweep_gate_init(&cmd->sweep);
    cmd->cfg = cfg;
    char why[PATH_MAX + 1024], msg[PATH_MAX + 1100];
    const char *err = configure(cmd, cfg, why, sizeof why);
    if (err != NULL) {
        /* "[SECTION] KEY: ..." lets the host point at the key's line */
        snprintf(msg, sizeof msg, "[%s] %s", cfg->section, err);
        *errmsg = vp_host_strdup(ctx, msg);
        cmd_destroy(cmd);
        return VSCHED_ECONFIG;
    }
    *inst = cmd;
    return VSCHED_OK;
}

static const vsched_executor_ops cmd_executor = {
    .size = sizeof(vsched_executor_ops),
    .source = cmd_source,
    .extract_deps = cmd_extract_deps,
    .analysis = cmd_analysis,
    .artifact = cmd__artifact,
    .snapshot_free = cmd_snapshot_free,
    .job = NULL,
    .identity = cmd__identity,
};

static const vsched_plugin cmd_plugin = {
    .abi_major = VSCHED_PLUGIN_ABI_MAJOR,
    .abi_minor = VSCHED_PLUGIN_ABI_MINOR,
    .size = sizeof(vsched_plugin),
    .name = "cmd",
    .version = "1.0",
    .description = "generic executor: argv templates, deps from a regex or "
                   "a depfile",
    .roles = VSCHED_ROLE_EXECUTOR,
    .flags = VSCHED_PLUGIN_THREAD_SAFE,
    .schema = cmd_schema,
    .n_schema = sizeof cmd_schema / sizeof cmd_schema[0],
    .create = cmd_create,
    .destroy = cmd_destroy,
    .executor = &cmd_executor,
};

/* The cmd plugin's descriptor (static storage, never NULL). */
VSCHED_PLUGIN_DEFINE(cmd)
{
    return &cmd_plugin;
}
