/*
 * scan.c -- the #include scanner of the `cc` executor.
 *
 * The scanner reads C as the preprocessor's first phases do, without
 * expanding anything: backslash-newline splices are invisible everywhere,
 * comments are skipped (a directive may follow a block comment, even one
 * spanning lines, as in GCC), string and character literals are skipped so
 * that a quote or a comment opener inside them changes nothing, and a '#'
 * that is the first token of a line starts a directive. Only
 * `#include "x"`, `#include <x>` and `#include_next` forms are recorded;
 * computed includes (`#include MACRO`) are not followed: the compiler
 * resolves them, and the file is rebuilt only when its own content changes.
 *
 * Literals end at an unescaped newline, so an unbalanced quote (a digit
 * separator, an apostrophe in #error text) cannot swallow the rest of the
 * file.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cc.h"

/* A read position over the bytes, skipping line splices. */
typedef struct scan_cur {
    const char *p, *end;
    unsigned line; /* 1-based physical line of p */
} scan_cur;

/* One #include directive as written. */
typedef struct scan_inc {
    char *path; /* header name between the delimiters (malloc) */
    int angled; /* <...> */
    unsigned line;
} scan_inc;

typedef struct scan_list {
    scan_inc *v;
    size_t n, cap;
    int oom;
} scan_list;

static void cur_splice(scan_cur *c)
{
    while (c->p < c->end && c->p[0] == '\\') {
        size_t left = (size_t)(c->end - c->p);
        if (left >= 2 && c->p[1] == '\n')
            c->p += 2;
        else if (left >= 3 && c->p[1] == '\r' && c->p[2] == '\n')
            c->p += 3;
        else
            break;
        c->line++;
    }
}

/* The current logical character, or -1 at the end. */
static int cur_peek(scan_cur *c)
{
    cur_splice(c);
    return c->p < c->end ? (unsigned char)*c->p : -1;
}

static void cur_next(scan_cur *c)
{
    cur_splice(c);
    if (c->p < c->end && *c->p++ == '\n')
        c->line++;
}

/* The logical character after the current one, or -1. */
static int cur_peek2(const scan_cur *c)
{
    scan_cur t = *c;
    cur_next(&t);
    return cur_peek(&t);
}

static int is_hspace(int ch)
{
    return ch == ' ' || ch == '\t' || ch == '\f' || ch == '\v' || ch == '\r';
}

/* Skip a comment at the cursor; 1 if there was one. A line comment stops
 * before its newline. */
static int skip_comment(scan_cur *c)
{
    if (cur_peek(c) != '/')
        return 0;
    int second = cur_peek2(c);
    if (second == '/') {
        while (cur_peek(c) >= 0 && cur_peek(c) != '\n')
            cur_next(c);
        return 1;
    }
    if (second != '*')
        return 0;
    cur_next(c);
    cur_next(c);
    for (int ch; (ch = cur_peek(c)) >= 0;) {
        cur_next(c);
        if (ch == '*' && cur_peek(c) == '/') {
            cur_next(c);
            break;
        }
    }
    return 1;
}

/* Skip blanks and comments within the current line. */
static void skip_hspace(scan_cur *c)
{
    for (;;) {
        int ch = cur_peek(c);
        if (is_hspace(ch))
            cur_next(c);
        else if (!skip_comment(c))
            return;
    }
}

/* Skip a string or character literal opened by `q` at the cursor. */
static void skip_literal(scan_cur *c, int q)
{
    cur_next(c);
    for (int ch; (ch = cur_peek(c)) >= 0 && ch != '\n';) {
        cur_next(c);
        if (ch == '\\' && cur_peek(c) >= 0 && cur_peek(c) != '\n')
            cur_next(c);
        else if (ch == q)
            return;
    }
}

static void list_add(scan_list *l, const char *path, size_t n, int angled,
                     unsigned line)
{
    /* A header name holding a NUL byte names no file (it would be cut
     * short into another name, or into none): the compiler diagnoses it. */
    if (n == 0 || memchr(path, '\0', n) != NULL)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        scan_inc *v = realloc(l->v, cap * sizeof *v);
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
    memcpy(s, path, n);
    s[n] = '\0';
    l->v[l->n++] = (scan_inc){s, angled, line};
}

/* After '#': parse the directive name and, for an include, its header
 * name. Leaves the cursor on the rest of the line. */
static void scan_directive(scan_cur *c, scan_list *l)
{
    char word[16], path[PATH_MAX];
    size_t n = 0;
    unsigned line = c->line;
    skip_hspace(c);
    for (int ch; (ch = cur_peek(c)) == '_' || (ch >= 'a' && ch <= 'z') ||
                 (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');) {
        if (n + 1 < sizeof word)
            word[n++] = (char)ch;
        cur_next(c);
    }
    word[n] = '\0';
    if (strcmp(word, "include") != 0 && strcmp(word, "include_next") != 0)
        return;
    skip_hspace(c);
    int open = cur_peek(c), close = open == '<' ? '>' : '"';
    if (open != '"' && open != '<')
        return;
    cur_next(c);
    n = 0;
    for (int ch; (ch = cur_peek(c)) >= 0 && ch != '\n'; cur_next(c)) {
        if (ch == close) {
            cur_next(c);
            if (n > 0 && n < sizeof path)
                list_add(l, path, n, open == '<', line);
            return;
        }
        if (n < sizeof path)
            path[n++] = (char)ch;
    }
}

/* Collect the #include directives of [bytes, bytes + len) into `l`. */
static void scan_bytes(const char *bytes, size_t len, scan_list *l)
{
    scan_cur c = {bytes, bytes + len, 1};
    int bol = 1; /* only blanks and comments so far on this line */
    for (int ch; (ch = cur_peek(&c)) >= 0;) {
        if (ch == '\n') {
            cur_next(&c);
            bol = 1;
        } else if (is_hspace(ch)) {
            cur_next(&c);
        } else if (skip_comment(&c)) {
            continue; /* a comment leaves `bol` as it was, as in GCC */
        } else if (ch == '#' && bol) {
            cur_next(&c);
            scan_directive(&c, l);
            bol = 0;
        } else if (ch == '"' || ch == '\'') {
            skip_literal(&c, ch);
            bol = 0;
        } else {
            cur_next(&c);
            bol = 0;
        }
    }
}

/* ---- resolution ---------------------------------------------------------- */

/* Resolve `dir`/`path` under the root. Returns 1 with *rel set to the
 * canonical source name (malloc) when it is a file under the root, 2 when
 * it exists outside the root (*rel = the absolute path), 0 when absent. */
static int resolve_one(const cc_inst *cc, const char *dir, const char *path,
                       char **rel)
{
    char joined[PATH_MAX];
    int n;
    if (path[0] == '/')
        n = snprintf(joined, sizeof joined, "%s", path);
    else if (dir[0] != '\0')
        n = snprintf(joined, sizeof joined, "%s/%s/%s", cc->root, dir, path);
    else
        n = snprintf(joined, sizeof joined, "%s/%s", cc->root, path);
    if (n < 0 || (size_t)n >= sizeof joined)
        return 0;
    char *abs = realpath(joined, NULL);
    struct stat st;
    if (abs == NULL || stat(abs, &st) != 0 || S_ISDIR(st.st_mode)) {
        free(abs);
        return 0;
    }
    size_t rl = strlen(cc->root), skip = rl == 1 ? 1 : rl + 1;
    if (strncmp(abs, cc->root, rl) == 0 && abs[skip - 1] == '/') {
        memmove(abs, abs + skip, strlen(abs + skip) + 1);
        *rel = abs;
        return 1;
    }
    *rel = abs;
    return 2;
}

/* Resolve one directive of `name`; 1 with *dep set, 0 when not a dep. */
static int resolve_inc(const cc_inst *cc, const vsched_ctx *ctx,
                       const char *name, const scan_inc *inc, char **dep)
{
    int r = 0;
    if (!inc->angled || inc->path[0] == '/') {
        const char *slash = strrchr(name, '/');
        char dir[PATH_MAX];
        size_t dl = slash != NULL ? (size_t)(slash - name) : 0;
        if (dl >= sizeof dir)
            return 0;
        memcpy(dir, name, dl);
        dir[dl] = '\0';
        r = resolve_one(cc, dir, inc->path, dep);
    }
    for (size_t i = 0; r == 0 && inc->path[0] != '/' && i < cc->include_dirs.n;
         i++)
        r = resolve_one(cc, cc->include_dirs.v[i], inc->path, dep);
    if (r == 2) {
        vp_diagf(ctx, VSCHED_SEV_WARNING, name, inc->line,
                 "include %c%s%c resolves outside the source root (%s); "
                 "changes to it are not tracked",
                 inc->angled ? '<' : '"', inc->path, inc->angled ? '>' : '"',
                 *dep);
        free(*dep);
        *dep = NULL;
    }
    return r == 1;
}

/* Resolve the directives into distinct deps and pack them into a snapshot. */
static int build_snap(const cc_inst *cc, const vsched_ctx *ctx,
                      const char *name, const scan_list *l, cc_snap **out)
{
    char **deps = calloc(l->n + 1, sizeof *deps);
    size_t nd = 0, bytes = 0;
    int rc = deps != NULL ? VSCHED_OK : VSCHED_ENOMEM;
    for (size_t i = 0; rc == VSCHED_OK && i < l->n; i++) {
        char *dep = NULL;
        if (!resolve_inc(cc, ctx, name, &l->v[i], &dep))
            continue;
        size_t k = 0;
        while (k < nd && strcmp(deps[k], dep) != 0)
            k++;
        if (k < nd || strcmp(dep, name) == 0) {
            free(dep);
            continue;
        }
        deps[nd++] = dep;
        bytes += strlen(dep) + 1;
    }
    cc_snap *s = rc == VSCHED_OK
                     ? malloc(sizeof *s + nd * sizeof(char *) + bytes)
                     : NULL;
    if (s != NULL) {
        memset(s, 0, sizeof *s);
        char *store = (char *)&s->inc[nd];
        for (size_t k = 0; k < nd; k++) {
            size_t dl = strlen(deps[k]) + 1;
            s->inc[k] = memcpy(store, deps[k], dl);
            store += dl;
        }
        s->n = nd;
    }
    for (size_t k = 0; k < nd; k++)
        free(deps[k]);
    free(deps);
    *out = s;
    return s != NULL ? VSCHED_OK : VSCHED_ENOMEM;
}

/* Contract in cc.h. */
int cc__scan(const cc_inst *cc, const vsched_ctx *ctx, const char *name,
             const char *bytes, size_t len, cc_snap **snap)
{
    scan_list l = {0};
    *snap = NULL;
    if (bytes != NULL)
        scan_bytes(bytes, len, &l);
    int rc = l.oom ? VSCHED_ENOMEM : build_snap(cc, ctx, name, &l, snap);
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i].path);
    free(l.v);
    return rc;
}
