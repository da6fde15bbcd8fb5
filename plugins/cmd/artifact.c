/*
 * artifact.c -- the Artifact stage of the `cmd` executor, and its
 * identity.
 *
 * The output of source NAME in profile P is out_dir/P/NAME + out_suffix.
 * The tool writes a temporary name beside it -- {out}, or its stdout when
 * the template has no {out} -- and the host renames it into place, so a
 * failed, cancelled or timed-out run never leaves a partial output: the
 * temporary file (and the depfile) are removed on every failure. With
 * {depfile} in the template, the make rule the tool writes there names
 * the files it read; they are handed to the host (ABI 1.1 deps) for its
 * up-to-date check.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "cmd.h"

/* Fill out->path and out->tmp_path and create their directory. */
static int out_paths(cmd_inst *cmd, const vsched_ctx *ctx,
                     const vsched_artifact_in *in, vsched_artifact_out *out)
{
    if (!vp_safe_name(in->name) || !vp_safe_name(in->profile) ||
        strchr(in->profile, '/') != NULL) {
        vp_diagf(ctx, VSCHED_SEV_ERROR, in->name, 0,
                 "cmd: invalid output name '%s' for profile '%s'", in->name,
                 in->profile != NULL ? in->profile : "(null)");
        return VSCHED_EINVAL;
    }
    char path[PATH_MAX], tmp[PATH_MAX + 64];
    int n = snprintf(path, sizeof path, "%s/%s/%s%s", cmd->out_dir,
                     in->profile, in->name, cmd->out_suffix);
    if (n < 0 || (size_t)n >= sizeof path) {
        vp_diagf(ctx, VSCHED_SEV_ERROR, in->name, 0,
                 "cmd: the output path is too long");
        return VSCHED_EINVAL;
    }
    vp_sweep_once(&cmd->sweep, cmd->out_dir); /* what a killed run left */
    vp_tmp_name(tmp, sizeof tmp, path, &cmd->counter); /* fits: path does */
    int rc = vp_mkdirs(ctx, in->name, path);
    if (rc != VSCHED_OK)
        return rc;
    out->path = vp_host_strdup(ctx, path);
    out->tmp_path = vp_host_strdup(ctx, tmp);
    return out->path != NULL && out->tmp_path != NULL ? VSCHED_OK
                                                      : VSCHED_ENOMEM;
}

/* The files the tool's depfile names, into out->deps. A depfile that is
 * missing leaves the list empty (with a warning: the Source-stage deps
 * still hold); only exhaustion fails. */
static int take_depfile(const cmd_inst *cmd, const vsched_ctx *ctx,
                        const char *name, const char *depfile,
                        vsched_artifact_out *out)
{
    size_t len = 0, n = 0;
    char *text = vp_slurp(depfile, &len), **paths = NULL;
    if (text == NULL) {
        vp_diagf(ctx, VSCHED_SEV_WARNING, name, 0,
                 "the tool wrote no dependency file {depfile}; files only "
                 "it read are not tracked");
        return VSCHED_OK;
    }
    int rc = cmd__depfile_parse(text, len, &paths, &n);
    free(text);
    if (rc == VSCHED_OK)
        rc = cmd__depfile_names(cmd, ctx, name, paths, n, &out->deps,
                                &out->n_deps);
    cmd__strv_free(paths, n);
    return rc;
}

/* The values of every placeholder for one call; fixed ones may be NULL
 * (empty). `vals` has cmd__n_placeholders entries. */
static void fill_vals(const cmd_inst *cmd, const char *profile,
                      const char **vals)
{
    for (size_t i = CMD_PH_FIXED; i < cmd__n_placeholders; i++)
        vals[i] = cmd__key_value(cmd, (int)i, profile);
    vals[CMD_PH_PROFILE] = profile;
    vals[CMD_PH_ROOT] = cmd->root;
}

/* What the artifact key covers besides the Analysis hash (the source,
 * what it reaches, the templates): the name, the profile and its flags. */
static uint64_t artifact_hash(const cmd_inst *cmd,
                              const vsched_artifact_in *in, const char *flags)
{
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL)
        return 0;
    XXH3_64bits_reset(st);
    XXH3_64bits_update(st, &in->analysis_hash, sizeof in->analysis_hash);
    XXH3_64bits_update(st, &cmd->config_hash, sizeof cmd->config_hash);
    XXH3_64bits_update(st, in->name, strlen(in->name) + 1);
    XXH3_64bits_update(st, in->profile, strlen(in->profile) + 1);
    XXH3_64bits_update(st, flags, strlen(flags) + 1);
    uint64_t h = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    return h;
}

/* Run the expanded command and collect what it made. */
static int run_tool(cmd_inst *cmd, const vsched_ctx *ctx, const char *name,
                    char **argv, const char *depfile, vsched_artifact_out *out)
{
    int to_stdout = !cmd__tpl_uses(&cmd->artifact, CMD_PH_OUT);
    vp_output o = {0};
    int status = 0;
    int outcome =
        cmd__run(ctx, argv, cmd->root, to_stdout ? out->tmp_path : NULL,
                 cmd->timeout, &o, &status);
    int rc =
        cmd__run_status(ctx, name, argv, outcome, status, cmd->timeout, &o);
    free(o.p);
    if (rc == VSCHED_OK && access(out->tmp_path, F_OK) != 0) {
        vp_diagf(ctx, VSCHED_SEV_ERROR, name, 0,
                 "'%s' succeeded but did not write its output {out} (%s)",
                 argv[0], out->tmp_path);
        rc = VSCHED_ETOOL;
    }
    if (rc == VSCHED_OK && depfile != NULL)
        rc = take_depfile(cmd, ctx, name, depfile, out);
    return rc;
}

/* Contract in cmd.h. */
int cmd__artifact(void *inst, const vsched_ctx *ctx,
                  const vsched_artifact_in *in, vsched_artifact_out *out)
{
    cmd_inst *cmd = inst;
    const char **vals = calloc(cmd__n_placeholders, sizeof *vals);
    char *src = NULL, *depfile = NULL, **argv = NULL;
    memset(out, 0, sizeof *out);
    int rc = vals != NULL ? out_paths(cmd, ctx, in, out) : VSCHED_ENOMEM;
    if (rc == VSCHED_OK &&
        ((src = vp_strfmt("%s/%s", cmd->root, in->name)) == NULL ||
         (cmd__tpl_uses(&cmd->artifact, CMD_PH_DEPFILE) &&
          (depfile = vp_strfmt("%s.d", out->tmp_path)) == NULL)))
        rc = VSCHED_ENOMEM;
    if (rc == VSCHED_OK) {
        fill_vals(cmd, in->profile, vals);
        vals[CMD_PH_IN] = src;
        vals[CMD_PH_OUT] = out->tmp_path;
        vals[CMD_PH_NAME] = in->name;
        vals[CMD_PH_DEPFILE] = depfile;
        rc = cmd__tpl_expand(&cmd->artifact, vals, &argv);
    }
    if (rc == VSCHED_OK)
        rc = run_tool(cmd, ctx, in->name, argv, depfile, out);
    if (rc == VSCHED_OK)
        out->artifact_hash = artifact_hash(
            cmd, in, vals[CMD_PH_FLAGS] ? vals[CMD_PH_FLAGS] : "");
    if (depfile != NULL)
        unlink(depfile);
    if (rc != VSCHED_OK) {
        if (out->tmp_path != NULL)
            unlink(out->tmp_path);
        vp_out_clear(ctx, out);
    }
    cmd__argv_free(argv);
    free(depfile);
    free(src);
    free(vals);
    return rc;
}

/* ---- identity ------------------------------------------------------------ */

/* Contract in cmd.h. */
int cmd__identity(void *inst, const vsched_ctx *ctx, const char *profile,
                  uint64_t *id)
{
    cmd_inst *cmd = inst;
    const char **vals = calloc(cmd__n_placeholders, sizeof *vals);
    char **argv = NULL;
    if (vals == NULL)
        return VSCHED_ENOMEM;
    fill_vals(cmd, profile != NULL ? profile : "", vals);
    int rc = cmd__tpl_expand(&cmd->artifact, vals, &argv);
    free(vals);
    if (rc != VSCHED_OK)
        return rc;
    XXH3_state_t *st = XXH3_createState();
    if (st == NULL) {
        cmd__argv_free(argv);
        return VSCHED_ENOMEM;
    }
    XXH3_64bits_reset(st);
    const char *prog = argv[0] != NULL ? argv[0] : "";
    vp_hash_program(st, prog, cmd->root, prog);
    *id = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    cmd__argv_free(argv);
    return VSCHED_OK;
}
