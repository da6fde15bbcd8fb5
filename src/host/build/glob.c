/*
 * glob -- recursive source patterns; see glob.h.
 */
#include "build/glob.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/util.h"

/* Contract: see glob.h. */
int vr_glob_has_wildcard(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The '/'-separated segments of s (empty ones dropped), in one block. */
typedef struct segs {
    char **v;
    size_t n;
    char *buf;
} segs;

static void segs_split(const char *s, segs *g)
{
    g->buf = vr_xstrdup(s);
    g->v = vr_xcalloc(strlen(s) / 2 + 2, sizeof *g->v);
    g->n = 0;
    char *save = NULL;
    for (char *t = strtok_r(g->buf, "/", &save); t != NULL;
         t = strtok_r(NULL, "/", &save))
        g->v[g->n++] = t;
}

static void segs_free(segs *g)
{
    free(g->v);
    free(g->buf);
}

/* Segments p[pi..] against name segments s[si..]. */
static int match_segs(const segs *p, size_t pi, const segs *s, size_t si)
{
    if (pi == p->n)
        return si == s->n;
    if (strcmp(p->v[pi], "**") == 0) {
        if (match_segs(p, pi + 1, s, si))
            return 1;
        return si < s->n && s->v[si][0] != '.' && match_segs(p, pi, s, si + 1);
    }
    if (si == s->n ||
        fnmatch(p->v[pi], s->v[si], FNM_PERIOD | FNM_NOESCAPE) != 0)
        return 0;
    return match_segs(p, pi + 1, s, si + 1);
}

/* Contract: see glob.h. */
int vr_glob_match(const char *pattern, const char *name)
{
    segs p, s;
    segs_split(pattern, &p);
    segs_split(name, &s);
    int m = match_segs(&p, 0, &s, 0);
    segs_free(&p);
    segs_free(&s);
    return m;
}

/* Contract: see glob.h. */
int vr_glob_excluded(const char *pattern, const char *name)
{
    segs p, s;
    segs_split(pattern, &p);
    segs_split(name, &s);
    int m = 0;
    size_t full = s.n;
    for (s.n = 1; s.n <= full && !m; s.n++)
        m = match_segs(&p, 0, &s, 0);
    s.n = full;
    segs_free(&p);
    segs_free(&s);
    return m;
}

typedef struct walk {
    const char *root;
    const segs *p;
    char ***v;
    size_t *n;
    char **bad; /* the first directory that could not be read, and why */
} walk;

/* ROOT/rel ("" is the root itself). Heap. */
static char *full_path(const walk *w, const char *rel)
{
    return rel[0] != '\0' ? vr_strfmt("%s/%s", w->root, rel)
                          : vr_xstrdup(w->root);
}

static char *rel_join(const char *rel, const char *name)
{
    return rel[0] != '\0' ? vr_strfmt("%s/%s", rel, name) : vr_xstrdup(name);
}

/* 1 regular file, 2 directory, 0 other or absent (links followed). */
static int kind_of(const walk *w, const char *rel, int follow)
{
    char *f = full_path(w, rel);
    struct stat st;
    int rc = follow ? stat(f, &st) : lstat(f, &st);
    free(f);
    if (rc != 0)
        return 0;
    return S_ISREG(st.st_mode) ? 1 : S_ISDIR(st.st_mode) ? 2 : 0;
}

/* 1 when ROOT/rel is a symbolic link whose target cannot be reached (a
 * loop, a dangling link). */
static int broken_link(const walk *w, const char *rel)
{
    char *f = full_path(w, rel);
    struct stat st;
    int broken =
        lstat(f, &st) == 0 && S_ISLNK(st.st_mode) && stat(f, &st) != 0;
    free(f);
    return broken;
}

/* A directory entry: its name and what readdir says it is (DT_*, or
 * DT_UNKNOWN where the file system does not say), so a regular file or a
 * real directory is known without a stat. */
typedef struct entry {
    char *name;
    unsigned char type;
} entry;

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

/* The entries of ROOT/rel, sorted by name (heap array, heap names). */
static entry *list_dir(const walk *w, const char *rel, size_t *n)
{
    char *f = full_path(w, rel);
    DIR *d = opendir(f);
    entry *v = NULL;
    *n = 0;
    if (d == NULL) {
        /* Absent, or no directory: nothing there to match. Anything else
         * (a link loop, a permission) hides names the pattern may mean. */
        if (errno != ENOENT && errno != ENOTDIR && *w->bad == NULL)
            *w->bad =
                vr_strfmt("cannot read directory %s: %s", f, strerror(errno));
        free(f);
        return NULL;
    }
    free(f);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        v = vr_xrealloc(v, (*n + 1) * sizeof *v);
        v[(*n)++] = (entry){vr_xstrdup(e->d_name), e->d_type};
    }
    closedir(d);
    if (*n > 1)
        qsort(v, *n, sizeof *v, cmp_entry);
    return v;
}

/* kind_of for an entry of ROOT/rel's listing: readdir's type where it
 * settles the answer (a regular file is one whether links are followed
 * or not; a directory entry is a real directory), a stat otherwise. */
static int kind_of_entry(const walk *w, const char *sub, const entry *e,
                         int follow)
{
    if (e->type == DT_REG)
        return 1;
    if (e->type == DT_DIR)
        return 2;
    if (e->type != DT_UNKNOWN && e->type != DT_LNK)
        return 0; /* a fifo, socket or device */
    return kind_of(w, sub, follow);
}

static void push(const walk *w, char *name)
{
    *w->v = vr_xrealloc(*w->v, (*w->n + 1) * sizeof **w->v);
    (*w->v)[(*w->n)++] = name;
}

static void expand(const walk *w, size_t pi, const char *rel);

/* `**` at segment pi over ROOT/rel: zero directories, then each real,
 * visible subdirectory. */
static void expand_any(const walk *w, size_t pi, const char *rel)
{
    expand(w, pi + 1, rel);
    size_t n = 0;
    entry *es = list_dir(w, rel, &n);
    for (size_t i = 0; i < n; i++) {
        char *sub = rel_join(rel, es[i].name);
        if (es[i].name[0] != '.' && kind_of_entry(w, sub, &es[i], 0) == 2)
            expand(w, pi, sub);
        free(sub);
        free(es[i].name);
    }
    free(es);
}

static void expand(const walk *w, size_t pi, const char *rel)
{
    if (pi == w->p->n) {
        if (rel[0] != '\0' && kind_of(w, rel, 1) == 1)
            push(w, vr_xstrdup(rel));
        return;
    }
    if (pi + 1 == w->p->n && vr_glob_has_wildcard(w->p->v[pi]) &&
        strcmp(w->p->v[pi], "**") != 0) {
        /* The last segment names files: a regular one matches; so does a
         * link that leads nowhere (a loop, a dangling target) -- a source
         * the user's pattern named that cannot be read is built and fails,
         * saying why, rather than vanishing. A directory is no source. */
        size_t n = 0;
        entry *es = list_dir(w, rel, &n);
        for (size_t i = 0; i < n; i++) {
            if (fnmatch(w->p->v[pi], es[i].name, FNM_PERIOD | FNM_NOESCAPE) ==
                0) {
                char *sub = rel_join(rel, es[i].name);
                if (kind_of_entry(w, sub, &es[i], 1) == 1 ||
                    (es[i].type != DT_REG && es[i].type != DT_DIR &&
                     broken_link(w, sub)))
                    push(w, sub);
                else
                    free(sub); /* a directory, fifo, socket or device */
            }
            free(es[i].name);
        }
        free(es);
        return;
    }
    const char *seg = w->p->v[pi];
    if (strcmp(seg, "**") == 0) {
        if (pi + 1 == w->p->n) { /* a trailing ** : every file below */
            size_t n = 0;
            entry *es = list_dir(w, rel, &n);
            for (size_t i = 0; i < n; i++) {
                char *sub = rel_join(rel, es[i].name);
                int k = es[i].name[0] == '.'
                            ? 0
                            : kind_of_entry(w, sub, &es[i], 0);
                if (k == 1 || (k == 0 && kind_of(w, sub, 1) == 1))
                    push(w, vr_xstrdup(sub));
                else if (k == 2)
                    expand(w, pi, sub);
                free(sub);
                free(es[i].name);
            }
            free(es);
            return;
        }
        expand_any(w, pi, rel);
        return;
    }
    if (!vr_glob_has_wildcard(seg)) {
        char *sub = rel_join(rel, seg);
        expand(w, pi + 1, sub);
        free(sub);
        return;
    }
    size_t n = 0;
    entry *es = list_dir(w, rel, &n);
    for (size_t i = 0; i < n; i++) {
        if (fnmatch(seg, es[i].name, FNM_PERIOD | FNM_NOESCAPE) == 0) {
            char *sub = rel_join(rel, es[i].name);
            expand(w, pi + 1, sub);
            free(sub);
        }
        free(es[i].name);
    }
    free(es);
}

/* Contract: see glob.h. */
size_t vr_glob_expand(const char *root, const char *pattern, char ***v,
                      size_t *n, char **bad)
{
    segs p;
    segs_split(pattern, &p);
    size_t before = *n;
    *bad = NULL;
    walk w = {root, &p, v, n, bad};
    if (p.n > 0)
        expand(&w, 0, "");
    segs_free(&p);
    /* Several `**` can reach one name twice; each name once, sorted. */
    size_t added = *n - before;
    if (added > 1)
        qsort(*v + before, added, sizeof **v, cmp_str);
    size_t out = before;
    for (size_t i = before; i < *n; i++) {
        if (out > before && strcmp((*v)[out - 1], (*v)[i]) == 0) {
            free((*v)[i]);
            continue;
        }
        (*v)[out++] = (*v)[i];
    }
    *n = out;
    return out - before;
}
