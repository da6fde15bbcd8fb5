/*
 * test_targets -- the parts of targets alone: glob matching and the walk
 * over a real directory tree (glob.h), [target.NAME] loading, link order
 * and variants (config/targets.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vsched/plugin.h>

#include "build/glob.h"
#include "config/config.h"
#include "config/targets.h"
#include "cu.h"

/* ---- matching ---------------------------------------------------------- */

static void double_star_matches_zero_or_more_directories(void)
{
    CU_ASSERT(vr_glob_match("src/**/*.c", "src/a.c"));
    CU_ASSERT(vr_glob_match("src/**/*.c", "src/x/a.c"));
    CU_ASSERT(vr_glob_match("src/**/*.c", "src/x/y/z/a.c"));
    CU_ASSERT(!vr_glob_match("src/**/*.c", "lib/a.c"));
    CU_ASSERT(!vr_glob_match("src/**/*.c", "src/a.h"));
    CU_ASSERT(vr_glob_match("**/main.c", "main.c"));
    CU_ASSERT(vr_glob_match("**/main.c", "a/b/main.c"));
    CU_ASSERT(vr_glob_match("a/**", "a/b/c"));
    CU_ASSERT(!vr_glob_match("a/**/b", "a/c"));
}

static void star_stays_within_one_segment(void)
{
    CU_ASSERT(vr_glob_match("src/*.c", "src/a.c"));
    CU_ASSERT(!vr_glob_match("src/*.c", "src/x/a.c"));
    CU_ASSERT(!vr_glob_match("*", "a/b"));
    CU_ASSERT(vr_glob_match("src/?.c", "src/a.c"));
    CU_ASSERT(vr_glob_match("src/[ab].c", "src/b.c"));
    CU_ASSERT(!vr_glob_match("src/[ab].c", "src/c.c"));
}

static void hidden_names_match_only_when_written(void)
{
    CU_ASSERT(!vr_glob_match("src/*.c", "src/.a.c"));
    CU_ASSERT(!vr_glob_match("**/*.c", ".git/a.c"));
    CU_ASSERT(!vr_glob_match("src/**/*.c", "src/.hidden/a.c"));
    CU_ASSERT(vr_glob_match("src/.*.c", "src/.a.c"));
}

static void braces_are_ordinary_characters(void)
{
    CU_ASSERT(!vr_glob_match("src/{a,b}.c", "src/a.c"));
    CU_ASSERT(vr_glob_match("src/{a,b}.c", "src/{a,b}.c"));
}

static void exclude_removes_a_directory_and_what_is_under_it(void)
{
    CU_ASSERT(vr_glob_excluded("src/tests", "src/tests/a.c"));
    CU_ASSERT(vr_glob_excluded("src/tests", "src/tests/deep/a.c"));
    CU_ASSERT(vr_glob_excluded("src/*/gen", "src/x/gen/a.c"));
    CU_ASSERT(vr_glob_excluded("src/main.c", "src/main.c"));
    CU_ASSERT(vr_glob_excluded("**/test_*.c", "src/x/test_a.c"));
    CU_ASSERT(!vr_glob_excluded("src/tests", "src/testsuite/a.c"));
    CU_ASSERT(!vr_glob_excluded("src/main.c", "src/main.cc"));
    CU_ASSERT(!vr_glob_excluded("tests", "src/tests/a.c"));
}

/* ---- the walk over a real tree -------------------------------------------- */

static char tree[64];

static void put(const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tree, rel);
    for (char *p = path + strlen(tree) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs("x\n", f);
    fclose(f);
}

static char *joined(char **v, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(v[i]) + 1;
    char *s = calloc(1, len);
    for (size_t i = 0; i < n; i++) {
        strcat(s, v[i]);
        if (i + 1 < n)
            strcat(s, "|");
    }
    return s;
}

static void expect_expand(const char *pattern, const char *want)
{
    char **v = NULL;
    size_t n = 0;
    char *bad = NULL;
    vr_glob_expand(tree, pattern, NULL, 0, &v, &n, &bad);
    CU_ASSERT_PTR_NULL(bad);
    free(bad);
    char *got = joined(v, n);
    EXPECT_STR(got, want);
    free(got);
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void walk_finds_nested_files_sorted_and_skips_the_rest(void)
{
    strcpy(tree, "/tmp/vsched_test_targets_XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tree));
    put("src/b.c");
    put("src/a.c");
    put("src/x/c.c");
    put("src/x/y/d.c");
    put("src/x/y/d.h");
    put("src/.hid/e.c");
    put("src/odd name $(x);.c");
    put("src/dir.c/inside.c"); /* a directory named like a source */
    char path[512], target[512];
    snprintf(path, sizeof path, "%s/src/loop", tree);
    snprintf(target, sizeof target, "%s/src", tree);
    CU_ASSERT(symlink(target, path) == 0); /* a loop for ** */
    snprintf(path, sizeof path, "%s/src/linked.c", tree);
    CU_ASSERT(symlink("a.c", path) == 0); /* a link to a source is one */
    snprintf(path, sizeof path, "%s/src/pipe.c", tree);
    CU_ASSERT(mkfifo(path, 0600) == 0); /* a fifo is none */
    /* a link is named as the file it leads to: src/linked.c is src/a.c */
    expect_expand("src/**/*.c", "src/a.c|src/b.c|src/dir.c/inside.c|"
                                "src/odd name $(x);.c|src/x/c.c|src/x/y/d.c");
    expect_expand("src/*.c", "src/a.c|src/b.c|src/odd name $(x);.c");
    expect_expand("src/**", "src/a.c|src/b.c|src/dir.c/inside.c|"
                            "src/odd name $(x);.c|src/x/c.c|"
                            "src/x/y/d.c|src/x/y/d.h");
    expect_expand("src/**/**/*.h", "src/x/y/d.h"); /* reached twice, once */
    expect_expand("src/loop/a.c", "src/a.c");      /* reached through a link */
    expect_expand("nothere/**/*.c", "");
    expect_expand("src/{a,b}.c", "");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tree);
    CU_ASSERT(system(cmd) == 0);
}

/* vr_glob_expand refuses `pattern`: nothing appended, and *bad says
 * `what`. */
static void expect_bad(const char *pattern, const char *what)
{
    char **v = NULL, *bad = NULL;
    size_t n = 0;
    EXPECT_INT(vr_glob_expand(tree, pattern, NULL, 0, &v, &n, &bad), 0);
    EXPECT_INT(n, 0);
    CU_ASSERT_PTR_NOT_NULL(bad);
    if (bad == NULL || strstr(bad, what) == NULL)
        fprintf(stderr, "\n  pattern '%s': got '%s', want '%s'\n", pattern,
                bad != NULL ? bad : "(nothing)", what);
    CU_ASSERT(bad != NULL && strstr(bad, what) != NULL);
    free(bad);
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void mklink(const char *target, const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tree, rel);
    CU_ASSERT(symlink(target, path) == 0);
}

/* What a pattern matches must be a source a FILE operand could name: a
 * link that leads nowhere (wherever the pattern meets it) and a directory
 * the pattern must read and cannot are reported, not taken for "no
 * match" nor built to fail later. */
static void broken_links_and_unreadable_directories_are_reported(void)
{
    strcpy(tree, "/tmp/vsched_test_targets_XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tree));
    put("src/a.c");
    put("in/ok.c");
    mklink("/nonexistent/gone.c", "src/gone.c");
    mklink("self.c", "src/self.c");
    mklink("ld", "src/ld"); /* a directory no one can read */
    mklink("/nonexistent/x.c", "in/gone.c");
    expect_bad("src/*.c", "src/gone.c is a symbolic link that leads nowhere");
    expect_bad("src/s*.c", "src/self.c is a symbolic link that leads nowhere");
    expect_bad("in/**", "in/gone.c is a symbolic link that leads nowhere");
    expect_bad("**/*.c", "in/gone.c is a symbolic link that leads nowhere");
    expect_expand("src/a*.c", "src/a.c");
    expect_expand("in/o*", "in/ok.c");
    expect_bad("src/ld/*.c", "/src/ld: Too many levels of symbolic links");
    expect_bad("src/ld/*.c", "cannot read directory ");
    /* a match an exclude names is not held against the pattern (the
     * caller drops what the excludes name from the rest) */
    const char *const excl[] = {"src/gone.c", "src/self.c", "in"};
    char **v = NULL, *bad = NULL;
    size_t n = 0;
    EXPECT_INT(vr_glob_expand(tree, "src/*.c", excl, 3, &v, &n, &bad), 1);
    CU_ASSERT_PTR_NULL(bad);
    EXPECT_INT(vr_glob_expand(tree, "**/*.c", excl, 3, &v, &n, &bad), 2);
    CU_ASSERT_PTR_NULL(bad);
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
    free(bad);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tree);
    CU_ASSERT(system(cmd) == 0);
}

/* A pattern names sources under the root: it never reaches outside, not
 * with '..', not through a symbolic link (to a directory or to a file),
 * not as an absolute path elsewhere; an absolute path under the root is
 * taken as the name relative to it, and a trailing '/' (a directory)
 * matches no source. */
static void patterns_stay_under_the_root(void)
{
    strcpy(tree, "/tmp/vsched_test_targets_XXXXXX");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(tree));
    put("root/src/a.c");
    put("root/src/sub/b.c");
    put("outside/x.c");
    mklink("../outside", "root/ext");            /* a directory outside */
    mklink("../../outside/x.c", "root/src/x.c"); /* a file outside */
    mklink("sub", "root/src/in");                /* a directory inside */
    mklink("a.c", "root/src/also.c");            /* a file inside */
    char root[128];
    snprintf(root, sizeof root, "%s", tree);
    strcat(tree, "/root"); /* the walks below are under root */
    expect_bad("ext/*.c", "ext/x.c is outside the loader root");
    expect_bad("e*/*.c", "ext/x.c is outside the loader root");
    expect_bad("src/*.c", "src/x.c is a symbolic link to");
    expect_bad("src/x*", "outside the loader root");
    expect_bad("src/**", "src/x.c is a symbolic link to");
    expect_bad("../outside/*.c", "'..'");
    expect_bad("src/../src/*.c", "'..'");
    expect_bad("src/./*.c", "'.'");
    /* one name per file, however the pattern reaches it */
    expect_expand("src/in/*.c", "src/sub/b.c");
    expect_expand("src/*/*.c", "src/sub/b.c");
    expect_expand("src/al*.c", "src/a.c");
    char pat[256];
    snprintf(pat, sizeof pat, "%s/src/a?c", tree);
    expect_expand(pat, "src/a.c");
    snprintf(pat, sizeof pat, "%s/outside/*.c", root);
    expect_bad(pat, "outside the loader root");
    expect_bad("/*.c", "outside the loader root");
    expect_expand("*/", "");
    expect_expand("src/*/", "");
    expect_expand("src//a?c", "src/a.c");
    /* absolute, its directory spelt through a link: where it leads */
    mklink(tree, "../lnk"); /* lnk -> root */
    snprintf(pat, sizeof pat, "%s/lnk/src/a?c", root);
    expect_expand(pat, "src/a.c");
    snprintf(pat, sizeof pat, "%s/src/in/*.c", tree); /* in -> sub */
    expect_expand(pat, "src/sub/b.c");
    snprintf(pat, sizeof pat, "%s/ext/*.c", tree); /* ext leads out */
    expect_bad(pat, "outside the loader root");
    /* the root "/": every absolute pattern is under it */
    char **v = NULL, *bad = NULL;
    size_t n = 0;
    snprintf(pat, sizeof pat, "%s/src/a?c", tree);
    EXPECT_INT(vr_glob_expand("/", pat, NULL, 0, &v, &n, &bad), 1);
    CU_ASSERT_PTR_NULL(bad);
    snprintf(pat, sizeof pat, "%s/src/a.c", tree);
    if (n == 1)
        EXPECT_STR(v[0], pat + 1);
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
    free(bad);
    strcpy(tree, root);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tree);
    CU_ASSERT(system(cmd) == 0);
}

/* ---- [target.NAME] ------------------------------------------------------------ */

static const char *head = "[loader]\nplugin = fs\nroot = .\n"
                          "[executor]\nplugin = cc\ncflags = -O2\n";

static vr_config *conf(const char *body)
{
    char *text = malloc(strlen(head) + strlen(body) + 1);
    strcpy(text, head);
    strcat(text, body);
    vr_config *cfg = NULL;
    char *err = NULL;
    int rc = vr_config_load_string(&cfg, text, "t.ini", "/w", &err);
    EXPECT_INT(rc, 0);
    free(err);
    free(text);
    return cfg;
}

static void expect_load_error(const char *body, const char *message)
{
    vr_config *cfg = conf(body);
    vr_targets t;
    char *err = NULL;
    EXPECT_INT(vr_targets_load(&t, cfg, NULL, NULL, 0, &err), VSCHED_ECONFIG);
    EXPECT_STR(err, message);
    EXPECT_INT(t.n, 0);
    free(err);
    vr_targets_free(&t);
    vr_config_free(cfg);
}

static void cycles_are_named_from_where_they_start(void)
{
    expect_load_error("[target.a]\nkind = static\ninputs = a.c\n"
                      "link_with = b\n"
                      "[target.b]\nkind = static\ninputs = b.c\n"
                      "link_with = a\n",
                      "t.ini:10: [target.a] link_with: cycle among targets: "
                      "a -> b -> a; a target cannot link, even indirectly, "
                      "with itself");
    expect_load_error("[target.e]\nkind = executable\ninputs = e.c\n"
                      "link_with = x\n"
                      "[target.x]\nkind = shared\ninputs = x.c\n"
                      "link_with = y\n"
                      "[target.y]\nkind = static\ninputs = y.c\n"
                      "link_with = x\n",
                      "t.ini:14: [target.x] link_with: cycle among targets: "
                      "x -> y -> x; a target cannot link, even indirectly, "
                      "with itself");
}

static void bad_targets_are_refused_at_their_key(void)
{
    expect_load_error("[target.a]\nkind = lib\ninputs = a.c\n",
                      "t.ini:8: [target.a] kind: expected executable, static "
                      "or shared, got 'lib'");
    expect_load_error("[target.a]\nkind = static\ninputs = a.c\n"
                      "output = x/y.a\n",
                      "t.ini:10: [target.a] output: expected a file name "
                      "without '/', got 'x/y.a'");
    expect_load_error("[target.a]\nkind = static\ninputs =\n",
                      "t.ini:9: [target.a] inputs: empty; name the "
                      "target's sources (glob patterns under the loader "
                      "root)");
    expect_load_error("[target.a]\nkind = executable\ninputs = a.c\n"
                      "link_with = b\n"
                      "[target.b]\nkind = executable\ninputs = b.c\n",
                      "t.ini:10: [target.a] link_with: 'b' is an executable; "
                      "only static and shared targets can be linked with");
}

static void link_line_puts_each_library_after_all_that_need_it(void)
{
    /* app -> ui, net; ui -> core; net -> core, z: core and z last. */
    vr_config *cfg =
        conf("[target.app]\nkind = executable\ninputs = a.c\n"
             "link_with = ui net\n"
             "[target.ui]\nkind = static\ninputs = u.c\nlink_with = core\n"
             "[target.net]\nkind = shared\ninputs = n.c\nlink_with = core z\n"
             "[target.core]\nkind = static\ninputs = c.c\n"
             "[target.z]\nkind = static\ninputs = z.c\n");
    vr_targets t;
    char *err = NULL;
    EXPECT_INT(vr_targets_load(&t, cfg, NULL, NULL, 0, &err), 0);
    EXPECT_INT(t.n, 5);
    size_t n = 0;
    size_t *line = vr_targets_link_line(&t, 0, &n);
    EXPECT_INT(n, 4);
    const char *want[] = {"ui", "net", "core", "z"};
    for (size_t i = 0; i < n && i < 4; i++)
        EXPECT_STR(t.v[line[i]].name, want[i]);
    free(line);
    size_t *order = vr_targets_order(&t);
    long pos[5];
    for (size_t i = 0; i < 5; i++)
        pos[order[i]] = (long)i;
    for (size_t i = 0; i < t.n; i++) /* every library before its user */
        for (size_t k = 0; k < t.v[i].n_link_with; k++)
            CU_ASSERT(pos[t.v[i].link_with[k]] < pos[i]);
    free(order);
    EXPECT_STR(vr_target_job_kind(t.v[0].kind), "link");
    EXPECT_STR(vr_target_job_kind(t.v[2].kind), "shared");
    EXPECT_STR(vr_target_job_kind(t.v[3].kind), "static");
    vr_targets_free(&t);
    vr_config_free(cfg);
}

static void equal_flags_share_a_variant_and_other_flags_get_their_own(void)
{
    vr_config *cfg =
        conf("[profile.debug]\ncflags = -O0 -g\nlibs = -lm\n"
             "[target.plain]\nkind = static\ninputs = p.c\n"
             "[target.d1]\nkind = static\ninputs = a.c\ndefines = X=1\n"
             "[target.d2]\nkind = executable\ninputs = b.c\ndefines = X=1\n"
             "[target.so]\nkind = shared\ninputs = s.c\n"
             "[target.same]\nkind = static\ninputs = s.c\ncflags = -O2\n");
    vr_targets t;
    char *err = NULL;
    EXPECT_INT(vr_targets_load(&t, cfg, "prog", (char *[]){"m.c"}, 1, &err),
               0);
    char *profiles[] = {"release", "debug"};
    vr_targets_vary(&t, cfg, profiles, 2, "/src");
    EXPECT_STR(vr_targets_variant(&t, 0, "release"), "release");
    EXPECT_STR(vr_targets_variant(&t, 1, "release"), "release+d1");
    EXPECT_STR(vr_targets_variant(&t, 2, "release"), "release+d1");
    EXPECT_STR(vr_targets_variant(&t, 3, "release"), "release+so");
    /* cflags equal to the executor's: the profile itself */
    EXPECT_STR(vr_targets_variant(&t, 4, "release"), "release");
    /* in debug the profile's cflags differ from the target's own */
    EXPECT_STR(vr_targets_variant(&t, 4, "debug"), "debug+same");
    EXPECT_STR(vr_targets_variant(&t, 1, "debug"), "debug+d1");
    /* the [batch] link shorthand is a plain executable */
    EXPECT_STR(t.v[5].name, "prog");
    EXPECT_INT(t.v[5].implicit, 1);
    EXPECT_STR(vr_targets_variant(&t, 5, "debug"), "debug");
    EXPECT_STR(vr_config_get(cfg, "profile.release+d1", "cflags"),
               "-O2 -DX=1");
    EXPECT_STR(vr_config_get(cfg, "profile.release+so", "cflags"),
               "-O2 -fPIC");
    EXPECT_STR(vr_config_get(cfg, "profile.debug+d1", "cflags"),
               "-O0 -g -DX=1");
    EXPECT_STR(vr_config_get(cfg, "profile.debug+same", "cflags"), "-O2");
    /* the rest of [profile.debug] is copied into its variants */
    EXPECT_STR(vr_config_get(cfg, "profile.debug+d1", "libs"), "-lm");
    EXPECT_INT(t.n_extra, 5);
    vr_targets_free(&t);
    vr_config_free(cfg);
}

static void include_dirs_are_under_the_root(void)
{
    vr_config *cfg = conf("[target.a]\nkind = executable\ninputs = a.c\n"
                          "include_dirs = inc gen/inc\n");
    vr_targets t;
    char *err = NULL;
    EXPECT_INT(vr_targets_load(&t, cfg, NULL, NULL, 0, &err), 0);
    char *profiles[] = {"release"};
    vr_targets_vary(&t, cfg, profiles, 1, "/r");
    EXPECT_STR(vr_config_get(cfg, "profile.release+a", "cflags"),
               "-O2 -I/r/inc -I/r/gen/inc");
    vr_targets_free(&t);
    vr_config_free(cfg);
}

static void salt_covers_the_link_keys_only(void)
{
    vr_config *a = conf("[target.a]\nkind = executable\ninputs = a.c\n");
    vr_config *b = conf("[target.a]\nkind = executable\ninputs = a.c\n"
                        "ldflags = -s\n");
    vr_config *c = conf("[target.a]\nkind = executable\ninputs = a.c b.c\n"
                        "defines = Q\n");
    vr_targets ta, tb, tc;
    char *err = NULL;
    EXPECT_INT(vr_targets_load(&ta, a, NULL, NULL, 0, &err), 0);
    EXPECT_INT(vr_targets_load(&tb, b, NULL, NULL, 0, &err), 0);
    EXPECT_INT(vr_targets_load(&tc, c, NULL, NULL, 0, &err), 0);
    CU_ASSERT(ta.v[0].salt != 0);
    CU_ASSERT(ta.v[0].salt != tb.v[0].salt);
    /* inputs and compile flags reach the key through the objects */
    CU_ASSERT(ta.v[0].salt == tc.v[0].salt);
    vr_targets_free(&ta);
    vr_targets_free(&tb);
    vr_targets_free(&tc);
    vr_config_free(a);
    vr_config_free(b);
    vr_config_free(c);
}

static const vr_cu_test tests[] = {
    {"double_star_matches_zero_or_more_directories",
     double_star_matches_zero_or_more_directories},
    {"broken_links_and_unreadable_directories_are_reported",
     broken_links_and_unreadable_directories_are_reported},
    {"patterns_stay_under_the_root", patterns_stay_under_the_root},
    {"star_stays_within_one_segment", star_stays_within_one_segment},
    {"hidden_names_match_only_when_written",
     hidden_names_match_only_when_written},
    {"braces_are_ordinary_characters", braces_are_ordinary_characters},
    {"exclude_removes_a_directory_and_what_is_under_it",
     exclude_removes_a_directory_and_what_is_under_it},
    {"walk_finds_nested_files_sorted_and_skips_the_rest",
     walk_finds_nested_files_sorted_and_skips_the_rest},
    {"cycles_are_named_from_where_they_start",
     cycles_are_named_from_where_they_start},
    {"bad_targets_are_refused_at_their_key",
     bad_targets_are_refused_at_their_key},
    {"link_line_puts_each_library_after_all_that_need_it",
     link_line_puts_each_library_after_all_that_need_it},
    {"equal_flags_share_a_variant_and_other_flags_get_their_own",
     equal_flags_share_a_variant_and_other_flags_get_their_own},
    {"include_dirs_are_under_the_root", include_dirs_are_under_the_root},
    {"salt_covers_the_link_keys_only", salt_covers_the_link_keys_only},
    {NULL, NULL},
};

int main(void)
{
    return vr_cu_main("targets", tests);
}
