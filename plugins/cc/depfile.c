/*
 * depfile.c -- the compiler's own dependency list for the `cc` executor.
 *
 * Every compile runs with `-MD -MF TMP.d`: the compiler writes a Makefile
 * rule naming every file it read, including headers reached through a
 * macro (`#include HEADER`) or a branch the #include scanner (scan.c)
 * cannot judge. After a successful compile the rule is parsed here and
 * its prerequisites are turned into source names under the root; files
 * outside the root (system headers) are left out, as ninja's `deps = gcc`
 * users do with -MMD. The host records the list for its up-to-date check
 * (vsched_artifact_out.deps, ABI 1.1).
 *
 * The syntax is what GCC writes (gcc/mkdeps.cc) and GNU make reads:
 * "TARGET...: PREREQ..." with backslash-newline continuations; a space,
 * tab or '#' in a name is written "\ ", "\t"-as-"\<TAB>" or "\#" (with
 * the backslashes before an escaped space doubled), '$' as "$$"; any other
 * backslash is literal. Several rules may follow each other (-MP adds
 * empty ones); the prerequisites of all of them are taken.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cc.h"

/* A growable list of malloc'ed words. */
typedef struct dep_list {
    char **v;
    size_t n, cap;
    int oom;
} dep_list;

static void list_push(dep_list *l, const char *w, size_t n)
{
    /* a word holding a NUL byte (not a depfile a compiler wrote) names no
     * file: cut short, it would name another one */
    if (l->oom || memchr(w, '\0', n) != NULL)
        return;
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
    char *s = malloc(n + 1);
    if (s == NULL) {
        l->oom = 1;
        return;
    }
    memcpy(s, w, n);
    s[n] = '\0';
    l->v[l->n++] = s;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* Read one word at *p (blanks and continuations already skipped) into
 * `buf`, unescaping. Sets *colon when the word ends with an unescaped ':'
 * (which is not copied). Returns the word's length. */
static size_t read_word(const char **p, const char *end, char *buf, size_t cap,
                        int *colon)
{
    size_t n = 0;
    const char *s = *p;
    *colon = 0;
    while (s < end && !is_blank(*s) && *s != '\n') {
        char c = *s;
        if (c == '\\') {
            /* A run of backslashes before a space, tab or '#': every pair
             * is one literal backslash, an odd one escapes the char. */
            const char *q = s;
            while (q < end && *q == '\\')
                q++;
            size_t run = (size_t)(q - s);
            if (q < end && (*q == ' ' || *q == '\t' || *q == '#')) {
                for (size_t k = 0; k < run / 2 && n < cap; k++)
                    buf[n++] = '\\';
                if (run % 2 == 0) { /* the char is not escaped: ends here */
                    s = q;
                    break;
                }
                if (n < cap)
                    buf[n++] = *q;
                s = q + 1;
                continue;
            }
            if (q < end &&
                (*q == '\n' || (*q == '\r' && q + 1 < end && q[1] == '\n')) &&
                run == 1) {
                break; /* a continuation ends the word */
            }
            for (size_t k = 0; k < run && n < cap; k++)
                buf[n++] = '\\';
            s = q;
            continue;
        }
        if (c == '$' && s + 1 < end && s[1] == '$') {
            if (n < cap)
                buf[n++] = '$';
            s += 2;
            continue;
        }
        if (c == ':' && (s + 1 == end || is_blank(s[1]) || s[1] == '\n')) {
            *colon = 1;
            s++;
            break;
        }
        if (n < cap)
            buf[n++] = c;
        s++;
    }
    *p = s;
    return n;
}

/* Contract in cc.h. */
int cc__depfile_parse(const char *text, size_t len, char ***out, size_t *n)
{
    dep_list l = {0};
    const char *p = text, *end = text + len;
    char word[PATH_MAX];
    int in_prereqs = 0; /* after the rule's ':' */
    *out = NULL;
    *n = 0;
    while (p < end) {
        if (is_blank(*p)) {
            p++;
            continue;
        }
        if (*p == '\\' && p + 1 < end &&
            (p[1] == '\n' || (p[1] == '\r' && p + 2 < end && p[2] == '\n'))) {
            p += p[1] == '\n' ? 2 : 3; /* continuation: the rule goes on */
            continue;
        }
        if (*p == '\n') {
            in_prereqs = 0; /* end of the rule */
            p++;
            continue;
        }
        int colon = 0;
        size_t wl = read_word(&p, end, word, sizeof word, &colon);
        if (in_prereqs && wl > 0)
            list_push(&l, word, wl);
        if (colon)
            in_prereqs = 1;
    }
    if (l.oom) {
        for (size_t i = 0; i < l.n; i++)
            free(l.v[i]);
        free(l.v);
        return VSCHED_ENOMEM;
    }
    *out = l.v;
    *n = l.n;
    return VSCHED_OK;
}

/* Contract in cc.h. */
int cc__depfile_names(const cc_inst *cc, const vsched_ctx *ctx,
                      const char *self, char **paths, size_t n, char ***names,
                      size_t *n_names)
{
    char **v = ctx->alloc(ctx, (n + 1) * sizeof *v);
    size_t k = 0, rl = strlen(cc->root);
    *names = NULL;
    *n_names = 0;
    if (v == NULL)
        return VSCHED_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        char *abs = realpath(paths[i], NULL);
        if (abs == NULL)
            continue; /* gone already: the next run sees it missing */
        const char *rel = NULL;
        if (rl == 1 && abs[0] == '/')
            rel = abs + 1;
        else if (strncmp(abs, cc->root, rl) == 0 && abs[rl] == '/')
            rel = abs + rl + 1;
        int keep = rel != NULL && rel[0] != '\0' && strcmp(rel, self) != 0;
        for (size_t j = 0; keep && j < k; j++)
            keep = strcmp(v[j], rel) != 0;
        if (keep && (v[k] = vp_host_strdup(ctx, rel)) != NULL)
            k++;
        else if (keep) {
            free(abs);
            while (k > 0)
                ctx->free(ctx, v[--k]);
            ctx->free(ctx, v);
            return VSCHED_ENOMEM;
        }
        free(abs);
    }
    if (k == 0) {
        ctx->free(ctx, v);
        return VSCHED_OK;
    }
    *names = v;
    *n_names = k;
    return VSCHED_OK;
}
