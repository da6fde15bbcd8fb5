/*
 * scan.c -- the Source-stage dependencies of the `cmd` executor.
 *
 * Two sources, both optional, used in this order:
 *
 *   dep_regex  a POSIX extended regular expression matched against each
 *              line of the source (without its line end; '^' and '$' are
 *              the line's ends); the first capture group of every match
 *              names a file, resolved like a quoted C include: against the
 *              including file's directory, then each include dir, the
 *              first existing file under the root winning. A name found
 *              nowhere is dropped (the tool may find it elsewhere; it
 *              fails if not), one resolving outside the root dropped with
 *              a warning.
 *   scan       a command run on the file (its template expanded without a
 *              profile) whose Makefile-style dependency output -- written
 *              to {depfile}, or printed on stdout when the template has
 *              no {depfile} -- names the files, relative to the root.
 *
 * The result is distinct source names without the file itself; they
 * become the file's dependencies and blockers (cmd.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"

/* A growable list of distinct malloc'ed names. */
typedef struct name_list {
    char **v;
    size_t n, cap, bytes;
    int oom;
} name_list;

/* Add `s` (taking it) unless it is NULL, `self` or already there. */
static void names_add(name_list *l, char *s, const char *self)
{
    int keep = s != NULL && !l->oom && strcmp(s, self) != 0;
    for (size_t i = 0; keep && i < l->n; i++)
        keep = strcmp(l->v[i], s) != 0;
    if (keep && l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **v = realloc(l->v, cap * sizeof *v);
        if (v == NULL)
            l->oom = 1;
        else
            l->v = v, l->cap = cap;
    }
    if (!keep || l->oom) {
        free(s);
        return;
    }
    l->v[l->n++] = s;
    l->bytes += strlen(s) + 1;
}

/* ---- dep_regex ----------------------------------------------------------- */

/* Resolve `dir`/`path` under the root: 1 with *rel the source name
 * (malloc) of an existing regular file under the root, 2 when it exists
 * outside the root (*rel = the absolute path), 0 when absent. */
static int resolve_one(const cmd_inst *cmd, const char *dir, const char *path,
                       char **rel)
{
    char joined[PATH_MAX];
    int n =
        path[0] == '/' ? snprintf(joined, sizeof joined, "%s", path)
        : dir[0] != '\0'
            ? snprintf(joined, sizeof joined, "%s/%s/%s", cmd->root, dir, path)
            : snprintf(joined, sizeof joined, "%s/%s", cmd->root, path);
    if (n < 0 || (size_t)n >= sizeof joined)
        return 0;
    char *abs = realpath(joined, NULL);
    struct stat st;
    if (abs == NULL || stat(abs, &st) != 0 || !S_ISREG(st.st_mode)) {
        free(abs);
        return 0;
    }
    size_t rl = strlen(cmd->root), skip = rl == 1 ? 1 : rl + 1;
    *rel = abs;
    if (strncmp(abs, cmd->root, rl) != 0 || abs[skip - 1] != '/')
        return 2;
    memmove(abs, abs + skip, strlen(abs + skip) + 1);
    return 1;
}

/* One matched name of `file` (line `line`) into `l`. */
static void regex_dep(const cmd_inst *cmd, const vsched_ctx *ctx,
                      const char *file, unsigned line, const char *path,
                      name_list *l)
{
    const char *slash = strrchr(file, '/');
    char dir[PATH_MAX], *dep = NULL;
    size_t dl = slash != NULL ? (size_t)(slash - file) : 0;
    if (dl >= sizeof dir)
        return;
    memcpy(dir, file, dl);
    dir[dl] = '\0';
    int r = resolve_one(cmd, dir, path, &dep);
    for (size_t i = 0; r == 0 && path[0] != '/' && i < cmd->n_include_dirs;
         i++)
        r = resolve_one(cmd, cmd->include_dirs[i], path, &dep);
    if (r == 2) {
        vp_diagf(ctx, VSCHED_SEV_WARNING, file, line,
                 "dependency '%s' resolves outside the source root (%s); "
                 "changes to it are not tracked",
                 path, dep);
        free(dep);
        return;
    }
    if (r == 1)
        names_add(l, dep, file);
}

/* Every dep_regex match of [bytes, bytes + len), line by line. */
static int regex_deps(const cmd_inst *cmd, const vsched_ctx *ctx,
                      const char *name, const char *bytes, size_t len,
                      name_list *l)
{
    char *line = NULL, *cap = NULL;
    size_t line_cap = 0;
    unsigned lineno = 0;
    for (size_t at = 0; at < len && !l->oom;) {
        const char *nl = memchr(bytes + at, '\n', len - at);
        size_t n = nl != NULL ? (size_t)(nl - (bytes + at)) : len - at;
        size_t next = at + n + (nl != NULL);
        lineno++;
        if (n > 0 && bytes[at + n - 1] == '\r')
            n--;
        if (n + 1 > line_cap) {
            char *p = realloc(line, n + 1);
            if (p == NULL) {
                l->oom = 1;
                break;
            }
            line = p;
            line_cap = n + 1;
        }
        memcpy(line, bytes + at, n);
        line[n] = '\0'; /* a NUL byte inside ends the line for the regex */
        regmatch_t m[2];
        for (size_t off = 0; off <= n && !l->oom;) {
            int flags = off > 0 ? REG_NOTBOL : 0;
            if (regexec(&cmd->regex, line + off, 2, m, flags) != 0)
                break;
            if (m[1].rm_so >= 0 && m[1].rm_eo > m[1].rm_so) {
                size_t cn = (size_t)(m[1].rm_eo - m[1].rm_so);
                if ((cap = strndup(line + off + m[1].rm_so, cn)) == NULL)
                    l->oom = 1;
                else
                    regex_dep(cmd, ctx, name, lineno, cap, l);
                free(cap);
            }
            /* the next match starts after this one (at least one byte) */
            off += m[0].rm_eo > 0 ? (size_t)m[0].rm_eo : 1;
        }
        at = next;
    }
    free(line);
    return l->oom ? VSCHED_ENOMEM : VSCHED_OK;
}

/* ---- the scan command ---------------------------------------------------- */

/* Add the existing files under the root that the make rule in `depfile`
 * names (relative to the root, or absolute). */
static int take_rule(const cmd_inst *cmd, const vsched_ctx *ctx,
                     const char *name, const char *depfile, int written,
                     name_list *l)
{
    size_t len = 0, n = 0, nn = 0;
    char *text = vp_slurp(depfile, &len), **paths = NULL, **names = NULL;
    if (text == NULL) {
        if (written) /* the tool was to write it */
            vp_diagf(ctx, VSCHED_SEV_WARNING, name, 0,
                     "the scan command wrote no dependency file {depfile}");
        return VSCHED_OK;
    }
    int rc = cmd__depfile_parse(text, len, &paths, &n);
    free(text);
    if (rc == VSCHED_OK)
        rc = cmd__depfile_names(cmd, ctx, name, paths, n, &names, &nn);
    for (size_t i = 0; i < nn; i++) {
        if (rc == VSCHED_OK)
            names_add(l, strdup(names[i]), name);
        ctx->free(ctx, names[i]);
    }
    if (names != NULL)
        ctx->free(ctx, names);
    cmd__strv_free(paths, n);
    return rc != VSCHED_OK ? rc : l->oom ? VSCHED_ENOMEM : VSCHED_OK;
}

/* Run the scan template on `name` and add the files it reports: in the
 * rule it writes to {depfile}, or else in its stdout (sent to that same
 * file, so that what it says on stderr stays a diagnostic). */
static int scan_deps(cmd_inst *cmd, const vsched_ctx *ctx, const char *name,
                     name_list *l)
{
    const char **vals = calloc(cmd__n_placeholders, sizeof *vals);
    char *in = NULL, *depfile = NULL, **argv = NULL;
    int written = cmd__tpl_uses(&cmd->scan, CMD_PH_DEPFILE);
    char base[PATH_MAX + 64], tmp[PATH_MAX + 128];
    int rc = vals != NULL ? VSCHED_OK : VSCHED_ENOMEM;
    /* out_dir/.scan.tmp.PID.NR.d: unguessable, and what the sweep knows */
    if (rc == VSCHED_OK &&
        (snprintf(base, sizeof base, "%s/.scan", cmd->out_dir) >=
             (int)sizeof base ||
         vp_tmp_name(tmp, sizeof tmp, base, &cmd->counter) != 0))
        rc = VSCHED_EINVAL;
    if (rc == VSCHED_OK &&
        ((in = vp_strfmt("%s/%s", cmd->root, name)) == NULL ||
         (depfile = vp_strfmt("%s.d", tmp)) == NULL))
        rc = VSCHED_ENOMEM;
    if (rc == VSCHED_OK) {
        for (size_t i = CMD_PH_FIXED; i < cmd__n_placeholders; i++)
            vals[i] = cmd->key_vals[i];
        vals[CMD_PH_IN] = in;
        vals[CMD_PH_NAME] = name;
        vals[CMD_PH_ROOT] = cmd->root;
        vals[CMD_PH_DEPFILE] = depfile;
        rc = cmd__tpl_expand(&cmd->scan, vals, &argv);
    }
    free(vals);
    if (rc == VSCHED_OK)
        rc = vp_mkdirs(ctx, name, depfile);
    if (rc == VSCHED_OK) {
        vp_output o = {0};
        int status = 0;
        int outcome = cmd__run(ctx, argv, cmd->root, written ? NULL : depfile,
                               cmd->timeout, &o, &status);
        rc = cmd__run_status(ctx, name, argv, outcome, status, cmd->timeout,
                             &o);
        free(o.p);
    }
    if (rc == VSCHED_OK)
        rc = take_rule(cmd, ctx, name, depfile, written, l);
    if (depfile != NULL)
        unlink(depfile);
    free(depfile);
    free(in);
    cmd__argv_free(argv);
    return rc;
}

/* ---- the snapshot -------------------------------------------------------- */

static cmd_snap *pack(const name_list *l)
{
    cmd_snap *s = malloc(sizeof *s + l->n * sizeof(char *) + l->bytes);
    if (s == NULL)
        return NULL;
    memset(s, 0, sizeof *s);
    char *store = (char *)&s->dep[l->n];
    for (size_t k = 0; k < l->n; k++) {
        size_t dl = strlen(l->v[k]) + 1;
        s->dep[k] = memcpy(store, l->v[k], dl);
        store += dl;
    }
    s->n = l->n;
    return s;
}

/* Contract in cmd.h. */
int cmd__scan(cmd_inst *cmd, const vsched_ctx *ctx, const char *name,
              const char *bytes, size_t len, cmd_snap **snap)
{
    name_list l = {0};
    int rc = VSCHED_OK;
    *snap = NULL;
    if (cmd->have_regex)
        rc = regex_deps(cmd, ctx, name, bytes, len, &l);
    if (rc == VSCHED_OK && cmd->have_scan)
        rc = scan_deps(cmd, ctx, name, &l);
    if (rc == VSCHED_OK && (*snap = pack(&l)) == NULL)
        rc = VSCHED_ENOMEM;
    cmd__strv_free(l.v, l.n);
    return rc;
}
