/*
 * compdb -- compile_commands.json; see compdb.h.
 */
#include <stdlib.h>
#include <string.h>

#include "build/work.h"
#include "cli/compdb.h"
#include "common/escape.h"
#include "common/json.h"
#include "common/util.h"
#include "config/plugin_host.h"

static void clear_command(vsched_command_out *c)
{
    for (size_t i = 0; c->argv != NULL && i < c->argc; i++)
        free(c->argv[i]);
    free(c->argv);
    free(c->directory);
    free(c->file);
    free(c->output);
    memset(c, 0, sizeof *c);
}

/* 1 when what command() returned is whole: argc strings, and every path
 * (the host validates what a plugin returns). */
static int command_valid(const vsched_command_out *c)
{
    if (c->argc == 0)
        return c->argv == NULL || c->argv[0] == NULL;
    if (c->argv == NULL || c->directory == NULL || c->file == NULL ||
        c->output == NULL || c->directory[0] != '/')
        return 0;
    for (size_t i = 0; i < c->argc; i++)
        if (c->argv[i] == NULL)
            return 0;
    return 1;
}

static void write_entry(vr_json *j, const vsched_command_out *c)
{
    vr_json_object(j);
    vr_json_key(j, "directory");
    vr_json_string(j, c->directory);
    vr_json_key(j, "file");
    vr_json_string(j, c->file);
    vr_json_key(j, "arguments");
    vr_json_array(j);
    for (size_t i = 0; i < c->argc; i++)
        vr_json_string(j, c->argv[i]);
    vr_json_end_array(j);
    vr_json_key(j, "output");
    vr_json_string(j, c->output);
    vr_json_end_object(j);
}

/* The entry of (name, profile) into j; 0, or -1 after saying why. */
static int one(const vr_build *b, vr_json *j, const char *name,
               const char *profile)
{
    const vsched_ctx *ctx = vr_plugin_host_ctx();
    char kind[64] = "";
    int rc =
        b->loader.ops->classify(b->loader.inst, ctx, name, kind, sizeof kind);
    kind[sizeof kind - 1] = '\0';
    vsched_command_out c;
    memset(&c, 0, sizeof c);
    if (rc == VSCHED_OK)
        rc = b->executor.ops->command(b->executor.inst, ctx, name, kind,
                                      profile, &c);
    if (rc == VSCHED_OK && !command_valid(&c))
        rc = VSCHED_EINVAL;
    if (rc != VSCHED_OK) {
        fputs("vsched-run: --compdb: ", b->err);
        vr_put_name(b->err, name);
        fprintf(b->err, " [%s]: no command: %s\n", profile,
                vsched_strerror(rc));
    } else if (c.argc > 0) {
        write_entry(j, &c);
    }
    clear_command(&c);
    return rc == VSCHED_OK ? 0 : -1;
}

/* Contract: see compdb.h. */
int vr_compdb_run(const vr_build *b)
{
    const vsched_executor_ops *x = b->executor.ops;
    if (!VR_OPS_COVERS(x, vsched_executor_ops, command) ||
        x->command == NULL) {
        fprintf(b->err,
                "vsched-run: --compdb: executor '%s' cannot say its "
                "commands (it has no command() operation, plugin "
                "ABI 1.1)\n",
                b->executor_desc->name);
        return VR_EXIT_USAGE;
    }
    vr_work w;
    char *err = NULL;
    if (vr_work_make(&w, b, &err) != VSCHED_OK) {
        fprintf(b->err, "vsched-run: %s\n", err);
        free(err);
        return VR_EXIT_USAGE;
    }
    vr_json *j = vr_json_new(b->out, 1);
    int bad = 0;
    vr_json_array(j);
    /* Every (input, profile) the run would compile: variant profiles of
     * targets included (their own flags, -fPIC). */
    for (size_t r = 0; r < w.n_rows; r++)
        bad |= one(b, j, w.inputs[w.rows[r].input], w.rows[r].profile) != 0;
    vr_json_end_array(j);
    int rc = vr_json_finish(j);
    fputc('\n', b->out);
    fflush(b->out);
    vr_work_free(&w);
    if (rc != VSCHED_OK || ferror(b->out)) {
        fprintf(b->err, "vsched-run: --compdb: cannot write standard "
                        "output\n");
        return VR_EXIT_USAGE;
    }
    return bad ? VR_EXIT_FAILED : VR_EXIT_OK;
}
