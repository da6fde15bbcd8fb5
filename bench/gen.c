/*
 * vsched-gen -- a deterministic generated C tree, for tests and benchmarks.
 *
 *     vsched-gen [options] DIR
 *       --seed S        seed of every choice (default 1)
 *       --files N       .c files under src/ (default 100)
 *       --headers H     headers per level (default 20)
 *       --levels L      header levels, include/l1 .. include/lL (default 3)
 *       --dirs D        spread the .c files over D folders src/dK (default 1:
 *                       all directly under src/)
 *       --funcs F       functions per .c file (default 8)
 *       --long K        K .c files are long (default 0) ...
 *       --long-funcs M  ... with M functions each (default 40 x funcs) ...
 *       --long-from I   ... starting at file I (default 0: the first K)
 *
 * Layout written under DIR (created; existing files are overwritten):
 *
 *   include/lK/hNNN.h  level-K headers with include guards; a level-K
 *                      header includes 0-2 headers of level K+1 (level L
 *                      includes none), so includes form a DAG three deep;
 *   include/all.h      the prototypes of every file's entry function;
 *   src/[dK/]fNNNN.c   each includes 1-3 level-1 headers (and sometimes a
 *                      level-2 one) and defines `int fNNNN_run(int)`;
 *                      f0000.c also defines main(), calling every entry;
 *   deps.txt           one line per .c: "src/f0003.c: include/l1/h002.h
 *                      include/l2/h005.h ...", its transitive headers
 *                      (include/all.h first, then by level and index),
 *                      paths relative to DIR;
 *   sources.txt        the .c files, one per line, by index.
 *
 * Every header's inline function calls those of the headers it includes,
 * so an edit of any header changes what its includers compile. The same
 * options give byte-identical trees.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct opts {
    uint64_t seed;
    unsigned files, headers, levels, dirs, funcs, n_long, long_funcs,
        long_from;
    const char *dir;
} opts;

/* splitmix64: one stream, advanced by every choice. */
static uint64_t rnd(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void die(const char *what, const char *path)
{
    fprintf(stderr, "vsched-gen: %s %s: %s\n", what, path, strerror(errno));
    exit(1);
}

static void mkdirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p != '\0'; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            die("cannot create", buf);
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        die("cannot create", buf);
}

static FILE *create(const opts *o, const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", o->dir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    mkdirs(path);
    *slash = '/';
    FILE *f = fopen(path, "w");
    if (f == NULL)
        die("cannot write", path);
    return f;
}

static void finish(FILE *f, const char *rel)
{
    if (ferror(f) || fclose(f) != 0)
        die("cannot write", rel);
}

/* Header (level, index) includes inc[level][index][0..n). */
typedef struct header {
    unsigned n_inc;
    unsigned inc[2]; /* indices at level + 1 */
} header;

static void header_path(char *buf, size_t cap, unsigned level, unsigned i)
{
    snprintf(buf, cap, "include/l%u/h%03u.h", level + 1, i);
}

static void source_path(const opts *o, char *buf, size_t cap, unsigned i)
{
    if (o->dirs > 1)
        snprintf(buf, cap, "src/d%u/f%04u.c", i % o->dirs, i);
    else
        snprintf(buf, cap, "src/f%04u.c", i);
}

static void write_header(const opts *o, header **hs, unsigned level,
                         unsigned i)
{
    char rel[256];
    header_path(rel, sizeof rel, level, i);
    FILE *f = create(o, rel);
    const header *h = &hs[level][i];
    fprintf(f, "#ifndef GEN_L%u_H%03u\n#define GEN_L%u_H%03u\n", level + 1, i,
            level + 1, i);
    for (unsigned k = 0; k < h->n_inc; k++)
        fprintf(f, "#include \"l%u/h%03u.h\"\n", level + 2, h->inc[k]);
    fprintf(f, "\n#define L%u_H%03u_K %uu\n", level + 1, i,
            (level + 1) * 1000 + i);
    fprintf(f, "struct l%u_h%03u { int a; long b; };\n", level + 1, i);
    fprintf(f,
            "static inline int l%u_h%03u_fn(int x)\n{\n    int r = x * %u;\n",
            level + 1, i, i + 3);
    for (unsigned k = 0; k < h->n_inc; k++)
        fprintf(f, "    r += l%u_h%03u_fn(r);\n", level + 2, h->inc[k]);
    fprintf(f, "    return r ^ (int)L%u_H%03u_K;\n}\n#endif\n", level + 1, i);
    finish(f, rel);
}

/* Mark every header reachable from (level, i) in seen[level][..]. */
static void reach(const opts *o, header **hs, unsigned char **seen,
                  unsigned level, unsigned i)
{
    if (seen[level][i])
        return;
    seen[level][i] = 1;
    if (level + 1 >= o->levels)
        return;
    for (unsigned k = 0; k < hs[level][i].n_inc; k++)
        reach(o, hs, seen, level + 1, hs[level][i].inc[k]);
}

static void write_source(const opts *o, header **hs, uint64_t *rng, unsigned i,
                         FILE *deps)
{
    char rel[256];
    source_path(o, rel, sizeof rel, i);
    unsigned n1 = 1 + (unsigned)(rnd(rng) % 3);
    unsigned inc[4][2]; /* (level, index) */
    unsigned n = 0;
    for (unsigned k = 0; k < n1; k++) {
        unsigned h = (unsigned)(rnd(rng) % o->headers);
        int dup = 0;
        for (unsigned m = 0; m < n; m++)
            dup |= inc[m][0] == 0 && inc[m][1] == h;
        if (!dup) {
            inc[n][0] = 0;
            inc[n][1] = h;
            n++;
        }
    }
    if (o->levels > 1 && rnd(rng) % 3 == 0) {
        inc[n][0] = 1;
        inc[n][1] = (unsigned)(rnd(rng) % o->headers);
        n++;
    }
    FILE *f = create(o, rel);
    fprintf(f, "/* generated by vsched-gen */\n");
    for (unsigned k = 0; k < n; k++)
        fprintf(f, "#include \"l%u/h%03u.h\"\n", inc[k][0] + 1, inc[k][1]);
    fprintf(f, "#include \"all.h\"\n\n");
    unsigned nf = i >= o->long_from && i - o->long_from < o->n_long
                      ? o->long_funcs
                      : o->funcs;
    for (unsigned k = 0; k < nf; k++) {
        fprintf(f, "static int f%04u_g%u(int x)\n{\n", i, k);
        fprintf(f, "    int acc = x;\n    for (int j = 0; j < %u; j++) {\n",
                4 + k % 7);
        fprintf(f, "        acc = acc * %u + (j ^ %u);\n", 31 + k, i);
        fprintf(f, "        if (acc %% %u == 0)\n            acc += %u;\n",
                3 + k % 5, k);
        fprintf(f, "    }\n");
        if (k > 0)
            fprintf(f, "    acc += f%04u_g%u(acc & 7);\n", i, k - 1);
        fprintf(f, "    return acc;\n}\n\n");
    }
    fprintf(f, "int f%04u_run(int x)\n{\n    int r = f%04u_g%u(x);\n", i, i,
            nf - 1);
    for (unsigned k = 0; k < n; k++)
        fprintf(f, "    r += l%u_h%03u_fn(r);\n", inc[k][0] + 1, inc[k][1]);
    fprintf(f, "    return r;\n}\n");
    if (i == 0) {
        fprintf(f, "\n#include <stdio.h>\n\nint main(void)\n{\n"
                   "    unsigned long sum = 0;\n");
        for (unsigned k = 0; k < o->files; k++)
            fprintf(f, "    sum += (unsigned)f%04u_run(%u);\n", k, k);
        fprintf(f, "    printf(\"%%lu\\n\", sum);\n    return 0;\n}\n");
    }
    finish(f, rel);

    /* Its transitive headers, for deps.txt. */
    unsigned char **seen = calloc(o->levels, sizeof *seen);
    for (unsigned l = 0; l < o->levels; l++)
        seen[l] = calloc(o->headers, 1);
    for (unsigned k = 0; k < n; k++)
        reach(o, hs, seen, inc[k][0], inc[k][1]);
    fprintf(deps, "%s: include/all.h", rel);
    for (unsigned l = 0; l < o->levels; l++)
        for (unsigned h = 0; h < o->headers; h++)
            if (seen[l][h]) {
                char hp[256];
                header_path(hp, sizeof hp, l, h);
                fprintf(deps, " %s", hp);
            }
    fputc('\n', deps);
    for (unsigned l = 0; l < o->levels; l++)
        free(seen[l]);
    free(seen);
}

static unsigned arg_uint(const char *flag, const char *v)
{
    char *end = NULL;
    errno = 0;
    unsigned long n = v != NULL ? strtoul(v, &end, 10) : 0;
    if (v == NULL || *v == '\0' || *end != '\0' || errno != 0 || n > 1000000) {
        fprintf(stderr, "vsched-gen: %s needs a number up to 1000000\n", flag);
        exit(2);
    }
    return (unsigned)n;
}

static void usage(FILE *f)
{
    fputs("usage: vsched-gen [--seed S] [--files N] [--headers H] "
          "[--levels L] [--dirs D]\n"
          "                  [--funcs F] [--long K] [--long-funcs M]\n"
          "                  [--long-from I] DIR\n",
          f);
}

int main(int argc, char **argv)
{
    opts o = {1, 100, 20, 3, 1, 8, 0, 0, 0, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (a[0] != '-') {
            if (o.dir != NULL) {
                usage(stderr);
                return 2;
            }
            o.dir = a;
            continue;
        }
        unsigned n = arg_uint(a, v);
        i++;
        if (strcmp(a, "--seed") == 0)
            o.seed = n;
        else if (strcmp(a, "--files") == 0)
            o.files = n;
        else if (strcmp(a, "--headers") == 0)
            o.headers = n;
        else if (strcmp(a, "--levels") == 0)
            o.levels = n;
        else if (strcmp(a, "--dirs") == 0)
            o.dirs = n;
        else if (strcmp(a, "--funcs") == 0)
            o.funcs = n;
        else if (strcmp(a, "--long") == 0)
            o.n_long = n;
        else if (strcmp(a, "--long-funcs") == 0)
            o.long_funcs = n;
        else if (strcmp(a, "--long-from") == 0)
            o.long_from = n;
        else {
            fprintf(stderr, "vsched-gen: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (o.dir == NULL || o.files == 0 || o.headers == 0 || o.levels == 0 ||
        o.funcs == 0 || o.dirs == 0 || o.files > 9999 || o.headers > 999) {
        usage(stderr);
        fputs("vsched-gen: needs DIR, 1..9999 files, 1..999 headers and "
              "at least one level, function and folder\n",
              stderr);
        return 2;
    }
    if (o.long_funcs == 0)
        o.long_funcs = 40 * o.funcs;
    uint64_t rng = o.seed * 0x2545f4914f6cdd1dull + 7;

    header **hs = calloc(o.levels, sizeof *hs);
    for (unsigned l = 0; l < o.levels; l++) {
        hs[l] = calloc(o.headers, sizeof **hs);
        for (unsigned i = 0; l + 1 < o.levels && i < o.headers; i++) {
            unsigned n = (unsigned)(rnd(&rng) % 3);
            for (unsigned k = 0; k < n; k++) {
                unsigned t = (unsigned)(rnd(&rng) % o.headers);
                if (k == 1 && t == hs[l][i].inc[0])
                    continue;
                hs[l][i].inc[hs[l][i].n_inc++] = t;
            }
        }
    }
    for (unsigned l = 0; l < o.levels; l++)
        for (unsigned i = 0; i < o.headers; i++)
            write_header(&o, hs, l, i);

    FILE *all = create(&o, "include/all.h");
    fputs("#ifndef GEN_ALL_H\n#define GEN_ALL_H\n", all);
    for (unsigned i = 0; i < o.files; i++)
        fprintf(all, "int f%04u_run(int x);\n", i);
    fputs("#endif\n", all);
    finish(all, "include/all.h");

    FILE *deps = create(&o, "deps.txt");
    FILE *srcs = create(&o, "sources.txt");
    for (unsigned i = 0; i < o.files; i++) {
        write_source(&o, hs, &rng, i, deps);
        char rel[256];
        source_path(&o, rel, sizeof rel, i);
        fprintf(srcs, "%s\n", rel);
    }
    finish(deps, "deps.txt");
    finish(srcs, "sources.txt");
    for (unsigned l = 0; l < o.levels; l++)
        free(hs[l]);
    free(hs);
    return 0;
}
