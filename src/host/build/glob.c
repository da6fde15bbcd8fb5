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

#include "common/escape.h"
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
    char *root_real; /* realpath(root), once a link needs it */
    const segs *p;
    char ***v;
    size_t *n;
    char **bad; /* the first thing that could not be matched, and why */
    /* The link (relative to root) the walk entered to a directory outside
     * the root, or NULL: what is found below it is no source. */
    const char *via;
    /* The link (relative to root, as the walk spells it) it entered to a
     * directory under the root, and where that leads (relative, "" for
     * the root itself), or NULL: names below it are given as where they
     * are, one name per file however the pattern reached it. */
    const char *alias_from, *alias_to;
    const char *const *excl; /* exclude patterns: a match they name is none */
    size_t n_excl;
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

/* Set w->bad unless it is set (heap message). */
static void say_bad(walk *w, char *msg)
{
    if (*w->bad == NULL)
        *w->bad = msg;
    else
        free(msg);
}

/* 1 when `real` (a realpath) is the root or under it. */
static int under_root(walk *w, const char *real)
{
    if (w->root_real == NULL)
        w->root_real = realpath(w->root, NULL);
    const char *r = w->root_real != NULL ? w->root_real : w->root;
    size_t len = strlen(r);
    return strncmp(real, r, len) == 0 &&
           (real[len] == '\0' || real[len] == '/' ||
            (len > 0 && r[len - 1] == '/'));
}

/* Where the symbolic link ROOT/rel leads: 1 under the root; 0 elsewhere,
 * with its target in *real (heap); -1 nowhere (a loop, a dangling
 * target), with errno saying why. */
static int link_leads(walk *w, const char *rel, char **real)
{
    char *f = full_path(w, rel);
    *real = realpath(f, NULL);
    int err = errno;
    free(f);
    if (*real == NULL) {
        errno = err;
        return -1;
    }
    return under_root(w, *real);
}

/* 1 when ROOT/rel is a symbolic link (lstat). */
static int is_link(const walk *w, const char *rel)
{
    char *f = full_path(w, rel);
    struct stat st;
    int link = lstat(f, &st) == 0 && S_ISLNK(st.st_mode);
    free(f);
    return link;
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
        if (errno != ENOENT && errno != ENOTDIR && *w->bad == NULL) {
            int err = errno;
            vr_esc e = {0};
            *w->bad = vr_strfmt("cannot read directory %s: %s",
                                vr_esc_name(&e, f), strerror(err));
            vr_esc_done(&e);
        }
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

/* The root as the messages name it. */
static const char *root_shown(const walk *w)
{
    return w->root_real != NULL ? w->root_real : w->root;
}

/* `real` (a realpath under the root) relative to the root (heap; "" for
 * the root itself). */
static char *rel_of_real(const walk *w, const char *real)
{
    const char *tail = real + strlen(root_shown(w));
    while (*tail == '/')
        tail++;
    return vr_xstrdup(tail);
}

/* `rel` (heap, taken) as where it is when the walk reached it through the
 * link w->alias_from (heap). */
static char *unalias(const walk *w, char *rel)
{
    size_t len = w->alias_from != NULL ? strlen(w->alias_from) : 0;
    if (len == 0 || strncmp(rel, w->alias_from, len) != 0 || rel[len] != '/')
        return rel;
    char *to = w->alias_to[0] != '\0'
                   ? vr_strfmt("%s%s", w->alias_to, rel + len)
                   : vr_xstrdup(rel + len + 1);
    free(rel);
    return to;
}

/* ROOT/rel (heap, taken) matched where a file is named: `k` its kind
 * with links followed (kind_of), `link` 1 when it is a symbolic link.
 * A regular file under the root is a source; a directory, fifo, socket
 * or device is none and skipped; a link that leads nowhere or out of
 * the root, or a file reached through a link to a directory outside, is
 * reported (w->bad): a FILE operand naming it would be refused. */
static void take(walk *w, char *rel, int k, int link)
{
    if (k == 2 || (k == 0 && !link)) {
        free(rel);
        return;
    }
    /* What an exclude names is not held against the pattern (a regular
     * file is taken, and the caller's exclude drops it as before: that
     * says when it drops every input). */
    int excluded = 0;
    for (size_t i = 0; (w->via != NULL || link) && !excluded && i < w->n_excl;
         i++)
        excluded = vr_glob_excluded(w->excl[i], rel);
    if (excluded) {
        free(rel);
        return;
    }
    if (w->via != NULL) {
        vr_esc e1 = {0}, e2 = {0}, e3 = {0};
        say_bad(w, vr_strfmt("%s is outside the loader root %s (through the "
                             "symbolic link %s): patterns match sources "
                             "under it",
                             vr_esc_name(&e1, rel),
                             vr_esc_name(&e2, root_shown(w)),
                             vr_esc_name(&e3, w->via)));
        vr_esc_done(&e1);
        vr_esc_done(&e2);
        vr_esc_done(&e3);
        free(rel);
        return;
    }
    if (link) {
        char *real = NULL;
        int to = link_leads(w, rel, &real);
        vr_esc e1 = {0}, e2 = {0}, e3 = {0};
        if (to < 0)
            say_bad(w, vr_strfmt("%s is a symbolic link that leads nowhere "
                                 "(%s): remove the link, or narrow the "
                                 "pattern (or exclude the name)",
                                 vr_esc_name(&e1, rel), strerror(errno)));
        else if (to == 0)
            say_bad(w, vr_strfmt("%s is a symbolic link to %s, outside the "
                                 "loader root %s: patterns match sources "
                                 "under it",
                                 vr_esc_name(&e1, rel), vr_esc_name(&e2, real),
                                 vr_esc_name(&e3, root_shown(w))));
        vr_esc_done(&e1);
        vr_esc_done(&e2);
        vr_esc_done(&e3);
        if (to != 1 || k != 1) { /* k 0: a link to a fifo, socket, device */
            free(real);
            free(rel);
            return;
        }
        free(rel); /* named as the file it leads to, as the loader does */
        rel = rel_of_real(w, real);
        free(real);
        push(w, rel);
        return;
    }
    push(w, unalias(w, rel));
}

/* 1 when the entry is, or may be, a symbolic link (lstat settles an
 * unknown type). */
static int entry_is_link(const walk *w, const char *sub, const entry *e)
{
    return e->type == DT_LNK || (e->type == DT_UNKNOWN && is_link(w, sub));
}

static void expand(walk *w, size_t pi, const char *rel);

/* Go on at segment pi from the directory ROOT/sub, which `link` says is
 * a symbolic link: one that leads out of the root is walked, and what is
 * found below it reported (take); one that leads nowhere is listed as any
 * directory is (list_dir: a dangling one has nothing below, a loop is
 * reported). */
static void descend(walk *w, size_t pi, const char *sub, int link)
{
    if (!link || w->via != NULL) {
        expand(w, pi, sub);
        return;
    }
    char *real = NULL;
    int to = link_leads(w, sub, &real);
    const char *via = w->via, *from = w->alias_from, *to_rel = w->alias_to;
    char *alias = to == 1 ? rel_of_real(w, real) : NULL;
    free(real);
    if (to == 0)
        w->via = sub;
    if (alias != NULL) {
        w->alias_from = sub;
        w->alias_to = alias;
    }
    expand(w, pi, sub);
    w->via = via;
    w->alias_from = from;
    w->alias_to = to_rel;
    free(alias);
}

/* `**` at segment pi over ROOT/rel: zero directories, then each real,
 * visible subdirectory. */
static void expand_any(walk *w, size_t pi, const char *rel)
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

static void expand(walk *w, size_t pi, const char *rel)
{
    if (pi == w->p->n) {
        if (rel[0] != '\0')
            take(w, vr_xstrdup(rel), kind_of(w, rel, 1), is_link(w, rel));
        return;
    }
    if (pi + 1 == w->p->n && vr_glob_has_wildcard(w->p->v[pi]) &&
        strcmp(w->p->v[pi], "**") != 0) {
        /* The last segment names files. */
        size_t n = 0;
        entry *es = list_dir(w, rel, &n);
        for (size_t i = 0; i < n; i++) {
            if (fnmatch(w->p->v[pi], es[i].name, FNM_PERIOD | FNM_NOESCAPE) ==
                0) {
                char *sub = rel_join(rel, es[i].name);
                int k = kind_of_entry(w, sub, &es[i], 1);
                take(w, sub, k,
                     k != 1 || es[i].type != DT_REG
                         ? entry_is_link(w, sub, &es[i])
                         : 0);
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
                            ? -1
                            : kind_of_entry(w, sub, &es[i], 0);
                if (k == 1)
                    take(w, vr_xstrdup(sub), 1, 0);
                else if (k == 2)
                    expand(w, pi, sub);
                else if (k == 0 && entry_is_link(w, sub, &es[i]))
                    /* a link: to a file it is one (never followed into a
                     * directory) */
                    take(w, vr_xstrdup(sub), kind_of(w, sub, 1), 1);
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
        descend(w, pi + 1, sub, is_link(w, sub));
        free(sub);
        return;
    }
    size_t n = 0;
    entry *es = list_dir(w, rel, &n);
    for (size_t i = 0; i < n; i++) {
        if (fnmatch(seg, es[i].name, FNM_PERIOD | FNM_NOESCAPE) == 0) {
            char *sub = rel_join(rel, es[i].name);
            descend(w, pi + 1, sub, entry_is_link(w, sub, &es[i]));
            free(sub);
        }
        free(es[i].name);
    }
    free(es);
}

/* `pattern` as a name relative to the root (heap): itself when relative;
 * an absolute one whose literal directory (what precedes its first
 * wildcard segment) leads under the root, resolved as a name would be
 * (links followed: "/tmp/link/src/\*.c" is where the link leads), as the
 * rest under that directory; NULL (*bad set) for one elsewhere. */
static char *relative_pattern(walk *w, const char *pattern)
{
    if (pattern[0] != '/')
        return vr_xstrdup(pattern);
    /* cut: the '/' that ends the literal directory */
    size_t cut = 0;
    for (size_t i = 0; pattern[i] != '\0'; i++) {
        if (pattern[i] != '/')
            continue;
        size_t end = i + 1;
        while (pattern[end] != '\0' && pattern[end] != '/')
            end++;
        char *seg = vr_strfmt("%.*s", (int)(end - i - 1), pattern + i + 1);
        int wild = vr_glob_has_wildcard(seg);
        free(seg);
        cut = i; /* the last '/' before a wildcard segment, or the last */
        if (wild)
            break;
    }
    char *dir =
        cut > 0 ? vr_strfmt("%.*s", (int)cut, pattern) : vr_xstrdup("/");
    char *dir_real = realpath(dir, NULL);
    free(dir);
    const char *rest = pattern + cut;
    while (*rest == '/')
        rest++;
    char *rel = NULL;
    if (dir_real != NULL && under_root(w, dir_real)) {
        const char *tail = dir_real + strlen(root_shown(w));
        while (*tail == '/')
            tail++;
        rel = tail[0] != '\0' ? vr_strfmt("%s/%s", tail, rest)
                              : vr_xstrdup(rest);
    }
    free(dir_real);
    if (rel != NULL)
        return rel;
    vr_esc e = {0};
    say_bad(w, vr_strfmt("it lies outside the loader root %s: a pattern "
                         "names sources under it (relative to it, or "
                         "absolute under it)",
                         vr_esc_name(&e, root_shown(w))));
    vr_esc_done(&e);
    return NULL;
}

/* Contract: see glob.h. */
size_t vr_glob_expand(const char *root, const char *pattern,
                      const char *const *excl, size_t n_excl, char ***v,
                      size_t *n, char **bad)
{
    size_t before = *n;
    *bad = NULL;
    walk w = {.root = root,
              .v = v,
              .n = n,
              .bad = bad,
              .excl = excl,
              .n_excl = n_excl};
    size_t len = strlen(pattern);
    char *rel = relative_pattern(&w, pattern);
    segs p = {0};
    if (rel != NULL)
        segs_split(rel, &p);
    for (size_t i = 0; i < p.n && *bad == NULL; i++)
        if (strcmp(p.v[i], ".") == 0 || strcmp(p.v[i], "..") == 0)
            say_bad(&w, vr_strfmt("it has a '.' or '..' segment: a pattern "
                                  "names sources under the loader root "
                                  "without them"));
    w.p = &p;
    /* A trailing '/' names directories, and no directory is a source. */
    if (*bad == NULL && p.n > 0 && pattern[len - 1] != '/')
        expand(&w, 0, "");
    segs_free(&p);
    free(rel);
    free(w.root_real);
    /* Refused: nothing taken. */
    for (size_t i = before; *bad != NULL && i < *n; i++)
        free((*v)[i]);
    if (*bad != NULL)
        *n = before;
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
