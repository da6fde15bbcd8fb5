/*
 * operands -- the command line's FILES, checked once; see operands.h.
 */
#include "build/operands.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <vsched/plugin.h>

#include "common/escape.h"
#include "common/util.h"
#include "config/plugin_host.h"
#include "config/schema.h"

/* A context that keeps the loader's first diagnostic instead of printing
 * it: the operand's own message says what is wrong. `ctx` is first, so
 * the loader's ctx pointer is the struct's. */
typedef struct heard {
    vsched_ctx ctx;
    char *first;
} heard;

static void heard_diag(const vsched_ctx *ctx, vsched_severity sev,
                       const char *file, unsigned line, const char *message)
{
    heard *h = (heard *)ctx;
    (void)sev;
    (void)file;
    (void)line;
    if (h->first == NULL && message != NULL)
        h->first = vr_xstrdup(message);
}

/* "under ROOT" when the loader has a root the host knows, else "under
 * the loader root". */
static char *where(const vr_build *b)
{
    const char *root = b->settings->loader_root;
    if (root == NULL)
        return vr_xstrdup("under the loader root");
    vr_esc e = {0};
    char *w = vr_strfmt("under %s", vr_esc_name(&e, root));
    vr_esc_done(&e);
    return w;
}

/* The message for an operand that names no file: a target it is close
 * to (a typo), else where FILES are looked for. */
static char *missing(const vr_build *b, const char *shown, const char *op)
{
    const vr_targets *t = b->targets;
    char *w = where(b);
    char *m = NULL;
    for (size_t i = 0; t != NULL && m == NULL && i < t->n; i++) {
        size_t d = vr_schema_distance(op, t->v[i].name);
        if (d <= 2 && d < strlen(op))
            m = vr_strfmt("'%s' is no target and no file %s; did you mean "
                          "target '%s'? (--list-targets lists them)",
                          shown, w, t->v[i].name);
    }
    if (m == NULL)
        m = vr_strfmt("'%s' is no target and no file %s: FILES name sources "
                      "relative to [loader] root (--list-targets lists the "
                      "targets)",
                      shown, w);
    free(w);
    return m;
}

/* Contract: see operands.h. */
int vr_loader_realpath(const vr_build *b, const char *name, char **canon,
                       char **why)
{
    heard h = {*vr_plugin_host_ctx(), NULL};
    h.ctx.diag = heard_diag;
    const vsched_loader_binding *lb = &b->loader;
    char *c = NULL;
    int rc = lb->ops->realpath(lb->inst, &h.ctx, name, &c);
    *canon = NULL;
    if (rc == VSCHED_OK && c == NULL) {
        rc = VSCHED_EINVAL;
        if (h.first == NULL)
            h.first = vr_xstrdup("no name returned");
    } else if (rc == VSCHED_OK) {
        *canon = vr_xstrdup(c);
    }
    if (c != NULL)
        h.ctx.free(&h.ctx, c);
    *why = h.first;
    return rc;
}

/* One FILE operand: its canonical name, or NULL with *err. */
static char *resolve(const vr_build *b, const char *op, char **err)
{
    if (op[0] == '\0') {
        char *w = where(b);
        *err = vr_strfmt("an empty FILE operand names nothing: give a "
                         "source %s, or a target (--list-targets)",
                         w);
        free(w);
        return NULL;
    }
    vr_esc e = {0};
    const char *shown = vr_esc_name(&e, op);
    char *name = NULL, *first = NULL;
    int rc = vr_loader_realpath(b, op, &name, &first);
    if (rc == VSCHED_OK) {
        /* name is the canonical one */
    } else if (rc == VSCHED_ENOENT) {
        *err = missing(b, shown, op);
    } else if (rc == VSCHED_EESCAPE) {
        const char *root = b->settings->loader_root;
        vr_esc er = {0};
        *err = vr_strfmt("'%s' is outside the loader root%s%s: FILES name "
                         "sources under it",
                         shown, root != NULL ? " " : "",
                         root != NULL ? vr_esc_name(&er, root) : "");
        vr_esc_done(&er);
    } else {
        *err = vr_strfmt("'%s': the loader cannot resolve it: %s", shown,
                         first != NULL ? first : vsched_strerror(rc));
    }
    free(first);
    const char *root = b->settings->loader_root;
    if (name != NULL && root != NULL) {
        char *path = vr_path_join(root, name);
        struct stat st;
        if (path != NULL && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            char *w = where(b);
            *err = vr_strfmt("'%s' is a directory %s, not a source: "
                             "name the files in it, or give a pattern in "
                             "[batch] inputs",
                             shown, w);
            free(w);
            free(name);
            name = NULL;
        }
        free(path);
    }
    vr_esc_done(&e);
    return name;
}

/* Contract: see operands.h. */
int vr_operands_resolve(const vr_build *b, char ***files,
                        unsigned char **is_file, char **err)
{
    size_t n = b->cli->n_files;
    *files = vr_xcalloc(n + 1, sizeof **files);
    *is_file = vr_xcalloc(n + 1, 1);
    *err = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *op = b->cli->files[i];
        if (b->targets != NULL && vr_targets_find(b->targets, op) >= 0) {
            (*files)[i] = vr_xstrdup(op);
            continue;
        }
        (*is_file)[i] = 1;
        if (((*files)[i] = resolve(b, op, err)) == NULL) {
            vr_build_inputs_free(*files, i);
            free(*is_file);
            *files = NULL;
            *is_file = NULL;
            return VSCHED_ECONFIG;
        }
    }
    return VSCHED_OK;
}
