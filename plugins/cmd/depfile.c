/*
 * depfile.c -- Makefile-style dependency files for the `cmd` executor.
 *
 * Many tools write the files they read as a make rule (gcc -MD, sassc
 * --deps-style tools, protoc --dependency_out, ...): "TARGET...: PREREQ...",
 * continued over lines with a backslash before the newline. Names escape
 * a space as "\ " (the backslashes before it doubled), a '#' as "\#" and a
 * '$' as "$$"; any other backslash is literal (so "C:\dir\x" survives).
 * Several rules may follow each other, each with several targets (and -MP
 * style empty rules); the prerequisites of all of them are taken, targets
 * never. Both the Artifact stage ({depfile}) and the scan command use this.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"

/* A growable list of malloc'ed words, and the word being read. */
typedef struct dep_list {
    char **v;
    size_t n, cap;
    char *w; /* current word */
    size_t wn, wcap;
    int oom;
} dep_list;

static void word_add(dep_list *l, char c)
{
    if (l->oom)
        return;
    if (l->wn + 2 > l->wcap) {
        size_t cap = l->wcap ? 2 * l->wcap : 64;
        char *w = realloc(l->w, cap);
        if (w == NULL) {
            l->oom = 1;
            return;
        }
        l->w = w;
        l->wcap = cap;
    }
    l->w[l->wn++] = c;
}

/* End the current word: keep it as a prerequisite when `keep`. */
static void word_end(dep_list *l, int keep)
{
    if (l->oom || l->wn == 0 || !keep) {
        l->wn = 0;
        return;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **v = realloc(l->v, cap * sizeof *v);
        if (v == NULL) {
            l->oom = 1;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    char *s = malloc(l->wn + 1);
    if (s == NULL) {
        l->oom = 1;
        return;
    }
    memcpy(s, l->w, l->wn);
    s[l->wn] = '\0';
    l->v[l->n++] = s;
    l->wn = 0;
}

/* Length of a line end at p ("\n" or "\r\n"), or 0. */
static size_t eol_at(const char *p, const char *end)
{
    if (p < end && *p == '\n')
        return 1;
    if (p + 1 < end && p[0] == '\r' && p[1] == '\n')
        return 2;
    return 0;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* 1 when the ':' (or "::") at p ends a target list: it is followed by a
 * blank, a line end, a continuation or the end of the text. */
static int colon_ends_targets(const char *p, const char *end, size_t *skip)
{
    const char *q = p + 1;
    if (q < end && *q == ':')
        q++;
    *skip = (size_t)(q - p);
    return q == end || is_blank(*q) || eol_at(q, end) ||
           (*q == '\\' && eol_at(q + 1, end));
}

/* Contract in cmd.h. */
int cmd__depfile_parse(const char *text, size_t len, char ***out, size_t *n)
{
    dep_list l = {0};
    const char *p = text, *end = text + len;
    int prereqs = 0; /* after this rule's ':' */
    *out = NULL;
    *n = 0;
    while (p < end && !l.oom) {
        size_t e, skip;
        if (is_blank(*p) || *p == '\r') { /* a lone CR is a blank too */
            word_end(&l, prereqs);
            p++;
        } else if ((e = eol_at(p, end)) > 0) {
            word_end(&l, prereqs);
            prereqs = 0; /* the rule ends with its line */
            p += e;
        } else if (*p == '\\' && (e = eol_at(p + 1, end)) > 0) {
            word_end(&l, prereqs); /* continuation: a blank */
            p += 1 + e;
        } else if (*p == '#' && l.wn == 0) {
            while (p < end && *p != '\n') /* a comment, to the line end */
                p++;
        } else if (*p == ':' && !prereqs &&
                   colon_ends_targets(p, end, &skip)) {
            word_end(&l, 0); /* the last target */
            prereqs = 1;
            p += skip;
        } else if (*p == '\\') {
            /* A run of backslashes before a space, tab or '#': each pair
             * is one backslash; an odd one escapes the character. Before
             * anything else backslashes are literal. */
            const char *q = p;
            while (q < end && *q == '\\')
                q++;
            size_t run = (size_t)(q - p);
            int escapable = q < end && (is_blank(*q) || *q == '#');
            for (size_t k = 0; k < (escapable ? run / 2 : run); k++)
                word_add(&l, '\\');
            if (escapable && run % 2 == 1) {
                word_add(&l, *q);
                q++;
            } else if (!escapable && eol_at(q, end)) {
                /* "\\\\\n": the last one continues the line */
                l.wn--;
                q--;
            }
            p = q;
        } else if (*p == '$' && p + 1 < end && p[1] == '$') {
            word_add(&l, '$');
            p += 2;
        } else if (*p == '|' && l.wn == 0 &&
                   (p + 1 == end || is_blank(p[1]) || eol_at(p + 1, end))) {
            p++; /* the order-only separator */
        } else {
            word_add(&l, *p);
            p++;
        }
    }
    word_end(&l, prereqs);
    free(l.w);
    if (l.oom) {
        cmd__strv_free(l.v, l.n);
        return VSCHED_ENOMEM;
    }
    *out = l.v;
    *n = l.n;
    return VSCHED_OK;
}

/* Contract in cmd.h. */
void cmd__strv_free(char **v, size_t n)
{
    for (size_t i = 0; v != NULL && i < n; i++)
        free(v[i]);
    free(v);
}

/* Contract in cmd.h. */
int cmd__depfile_names(const cmd_inst *cmd, const vsched_ctx *ctx,
                       const char *self, char *const *paths, size_t n,
                       char ***names, size_t *n_names)
{
    char **v = ctx->alloc(ctx, (n + 1) * sizeof *v);
    size_t k = 0, rl = strlen(cmd->root);
    *names = NULL;
    *n_names = 0;
    if (v == NULL)
        return VSCHED_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        char *joined = paths[i][0] != '/'
                           ? vp_strfmt("%s/%s", cmd->root, paths[i])
                           : NULL;
        if (joined == NULL && paths[i][0] != '/')
            goto oom;
        char *abs = realpath(joined != NULL ? joined : paths[i], NULL);
        free(joined);
        if (abs == NULL)
            continue; /* gone already: the next run sees it missing */
        const char *rel = NULL;
        if (rl == 1)
            rel = abs + 1;
        else if (strncmp(abs, cmd->root, rl) == 0 && abs[rl] == '/')
            rel = abs + rl + 1;
        int keep = rel != NULL && rel[0] != '\0' && strcmp(rel, self) != 0;
        for (size_t j = 0; keep && j < k; j++)
            keep = strcmp(v[j], rel) != 0;
        char *copy = keep ? vp_host_strdup(ctx, rel) : NULL;
        free(abs);
        if (keep && copy == NULL)
            goto oom;
        if (keep)
            v[k++] = copy;
    }
    if (k == 0) {
        ctx->free(ctx, v);
        return VSCHED_OK;
    }
    *names = v;
    *n_names = k;
    return VSCHED_OK;
oom:
    while (k > 0)
        ctx->free(ctx, v[--k]);
    ctx->free(ctx, v);
    return VSCHED_ENOMEM;
}
