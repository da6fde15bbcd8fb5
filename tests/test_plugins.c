/*
 * test_plugins.c -- the shipped plugins (fs, cc, null) driven through their
 * descriptors, the way the host calls them, with the mock host of
 * tests/mock_host.h: a context whose diag collects messages and whose
 * is_cancelled reads a flag, and a configuration table that fills schema
 * defaults for the plugin's section.
 *
 * The cc tests run the system `cc` for real; the cancellation and timeout
 * tests use a small script as the "compiler" that blocks in sleep(1).
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include <vsched/plugin.h>

#include "cu.h"
#include "mock_host.h"

const vsched_plugin *fs_LTX_vsched_plugin_entry(void);
const vsched_plugin *cc_LTX_vsched_plugin_entry(void);
const vsched_plugin *null_LTX_vsched_plugin_entry(void);
int cc__depfile_parse(const char *text, size_t len, char ***out, size_t *n);

/* ---- instances ------------------------------------------------------------ */

static mock_cfg CFG;

/* create() with `kv`; *errmsg receives the message on failure. */
static int make(const vsched_plugin *pl, const char *section, const char *dir,
                const mock_kv *kv, void **inst, char **errmsg)
{
    mock_cfg_init(&CFG, pl, section, dir, kv);
    *inst = NULL;
    *errmsg = NULL;
    return pl->create(mock_ctx(), &CFG.cfg, inst, errmsg);
}

/* ---- files ---------------------------------------------------------------- */

static char *tmpdir(void)
{
    return mock_tmpdir("plugins");
}

/* Number of entries of `dir` whose name contains ".tmp.". */
static int tmp_leftovers(const char *dir)
{
    return mock_count_named(dir, ".tmp.");
}

/* ---- executor helpers ------------------------------------------------------ */

/* Source + extract_deps of `text`; returns the deps joined by ' ' (malloc)
 * and checks the blockers equal the deps when `same_blockers`. */
static char *deps_of(const vsched_plugin *pl, void *inst, const char *name,
                     const char *kind, const char *text, char **blockers)
{
    const vsched_ctx *c = &MOCK.ctx;
    vsched_source_out so = {0};
    vsched_deps_out d = {0};
    EXPECT_INT(
        pl->executor->source(inst, c, name, kind, text, strlen(text), &so),
        VSCHED_OK);
    EXPECT_INT(so.content_hash, XXH3_64bits(text, strlen(text)));
    EXPECT_INT(pl->executor->extract_deps(inst, c, name, so.snapshot, &d),
               VSCHED_OK);
    pl->executor->snapshot_free(inst, so.snapshot);
    char *out[2] = {calloc(1, 1), calloc(1, 1)};
    char **lists[2] = {d.deps, d.blockers};
    size_t ns[2] = {d.n_deps, d.n_blockers};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < ns[l]; i++) {
            char *j;
            CU_ASSERT_FATAL(asprintf(&j, "%s%s%s", out[l], *out[l] ? " " : "",
                                     lists[l][i]) > 0);
            free(out[l]);
            free(lists[l][i]);
            out[l] = j;
        }
        free(lists[l]);
    }
    if (blockers != NULL)
        *blockers = out[1];
    else
        free(out[1]);
    return out[0];
}

/* ---- descriptors ------------------------------------------------------------ */

static void descriptors_declare_abi_roles_and_thread_safety(void)
{
    const vsched_plugin *fs = fs_LTX_vsched_plugin_entry(),
                        *cc = cc_LTX_vsched_plugin_entry(),
                        *nl = null_LTX_vsched_plugin_entry();
    const vsched_plugin *all[] = {fs, cc, nl};
    for (int i = 0; i < 3; i++) {
        EXPECT_INT(all[i]->abi_major, VSCHED_PLUGIN_ABI_MAJOR);
        EXPECT_INT(all[i]->abi_minor, VSCHED_PLUGIN_ABI_MINOR);
        EXPECT_INT(all[i]->size, sizeof(vsched_plugin));
        EXPECT_INT(all[i]->flags & VSCHED_PLUGIN_THREAD_SAFE,
                   VSCHED_PLUGIN_THREAD_SAFE);
        CU_ASSERT_TRUE(all[i]->n_schema > 0);
    }
    EXPECT_STR(fs->name, "fs");
    EXPECT_INT(fs->roles, VSCHED_ROLE_LOADER);
    EXPECT_STR(fs->schema[0].name, "root");
    EXPECT_INT(fs->schema[0].flags, VSCHED_KEY_REQUIRED);
    EXPECT_INT(cc->roles, VSCHED_ROLE_EXECUTOR);
    CU_ASSERT_PTR_NOT_NULL(cc->executor->job);
    EXPECT_INT(nl->roles, VSCHED_ROLE_LOADER | VSCHED_ROLE_EXECUTOR);
}

/* ---- fs --------------------------------------------------------------------- */

static const vsched_plugin *FS;

/* An fs instance over a new temp dir holding `root/`, with follow_outside. */
static void *fs_make(const char *root, const char *follow)
{
    FS = fs_LTX_vsched_plugin_entry();
    mock_kv kv[] = {{"loader", "root", root},
                    {"loader", "follow_outside", follow},
                    {NULL, NULL, NULL}};
    void *inst;
    char *err;
    EXPECT_INT(make(FS, "loader", root, kv, &inst, &err), VSCHED_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(inst);
    return inst;
}

static int fs_rp(void *inst, const char *name, char **out)
{
    *out = NULL;
    return FS->loader->realpath(inst, &MOCK.ctx, name, out);
}

static void fs_load_reads_whole_file_including_nul_bytes(void)
{
    char *d = tmpdir(), *p = mock_path2(d, "bin.dat");
    FILE *f = fopen(p, "wb");
    fwrite("a\0b\0c", 1, 5, f);
    fclose(f);
    void *fs = fs_make(d, "false");
    char *bytes = NULL;
    size_t len = 0;
    EXPECT_INT(FS->loader->load(fs, &MOCK.ctx, "bin.dat", &bytes, &len),
               VSCHED_OK);
    EXPECT_INT(len, 5);
    CU_ASSERT_TRUE(bytes != NULL && memcmp(bytes, "a\0b\0c", 5) == 0);
    free(bytes);
    FS->destroy(fs);
    free(p);
    mock_rm_rf(d);
}

static void fs_realpath_resolves_dot_and_dotdot_inside_root(void)
{
    char *d = tmpdir(), *c;
    mock_put(d, "include/a.h", "");
    mock_put(d, "src/x.c", "");
    void *fs = fs_make(d, "false");
    EXPECT_INT(fs_rp(fs, "src/../include/./a.h", &c), VSCHED_OK);
    EXPECT_STR(c, "include/a.h");
    free(c);
    EXPECT_INT(fs_rp(fs, "./src//x.c", &c), VSCHED_OK);
    EXPECT_STR(c, "src/x.c");
    free(c);
    FS->destroy(fs);
    mock_rm_rf(d);
}

static void fs_dotdot_escape_is_refused_even_for_missing_files(void)
{
    char *d = tmpdir(), *c, *bytes;
    size_t len;
    mock_put(d, "root/a.c", "");
    mock_put(d, "secret.txt", "s");
    char *root = mock_path2(d, "root");
    void *fs = fs_make(root, "false");
    EXPECT_INT(fs_rp(fs, "../secret.txt", &c), VSCHED_EESCAPE);
    EXPECT_INT(fs_rp(fs, "../no-such-file", &c), VSCHED_EESCAPE);
    EXPECT_INT(fs_rp(fs, "a.c/../../secret.txt", &c), VSCHED_EESCAPE);
    EXPECT_INT(FS->loader->load(fs, &MOCK.ctx, "../secret.txt", &bytes, &len),
               VSCHED_EESCAPE);
    EXPECT_INT(FS->loader->exists(fs, &MOCK.ctx, "../secret.txt"),
               VSCHED_EESCAPE);
    EXPECT_CONTAINS(MOCK.diag, "outside the loader root");
    FS->destroy(fs);
    free(root);
    mock_rm_rf(d);
}

static void fs_absolute_name_is_confined_to_root(void)
{
    char *d = tmpdir(), *c;
    mock_put(d, "a.c", "");
    void *fs = fs_make(d, "false");
    char *abs = mock_path2(d, "a.c");
    EXPECT_INT(fs_rp(fs, "/etc/hostname", &c), VSCHED_EESCAPE);
    EXPECT_INT(fs_rp(fs, "/", &c), VSCHED_EESCAPE);
    EXPECT_INT(fs_rp(fs, abs, &c), VSCHED_OK);
    EXPECT_STR(c, "a.c");
    free(c);
    EXPECT_INT(fs_rp(fs, "", &c), VSCHED_EINVAL);
    FS->destroy(fs);
    free(abs);
    mock_rm_rf(d);
}

static void fs_symlink_leaving_root_is_refused_unless_follow_outside(void)
{
    char *d = tmpdir(), *c, *bytes = NULL;
    size_t len;
    mock_put(d, "root/in.c", "");
    mock_put(d, "outside/x.h", "outside!");
    char *root = mock_path2(d, "root"), *link = mock_path2(d, "root/x.h"),
         *dlink = mock_path2(d, "root/out"),
         *target = mock_path2(d, "outside/x.h"),
         *tdir = mock_path2(d, "outside");
    CU_ASSERT_FATAL(symlink(target, link) == 0 && symlink(tdir, dlink) == 0);
    void *fs = fs_make(root, "false");
    EXPECT_INT(fs_rp(fs, "x.h", &c), VSCHED_EESCAPE);
    EXPECT_INT(fs_rp(fs, "out/x.h", &c), VSCHED_EESCAPE);
    EXPECT_INT(FS->loader->load(fs, &MOCK.ctx, "x.h", &bytes, &len),
               VSCHED_EESCAPE);
    FS->destroy(fs);
    fs = fs_make(root, "true");
    EXPECT_INT(FS->loader->load(fs, &MOCK.ctx, "out/./x.h", &bytes, &len),
               VSCHED_OK);
    EXPECT_INT(len, 8);
    free(bytes);
    EXPECT_INT(fs_rp(fs, "out/./x.h", &c), VSCHED_OK);
    EXPECT_STR(c, "out/x.h"); /* keeps its in-tree name */
    free(c);
    EXPECT_INT(fs_rp(fs, "../outside/x.h", &c), VSCHED_EESCAPE);
    FS->destroy(fs);
    free(root), free(link), free(dlink), free(target), free(tdir);
    mock_rm_rf(d);
}

static void fs_symlink_inside_root_resolves_to_target_name(void)
{
    char *d = tmpdir(), *c;
    mock_put(d, "real/a.h", "");
    char *link = mock_path2(d, "alias");
    CU_ASSERT_FATAL(symlink("real", link) == 0);
    void *fs = fs_make(d, "false");
    EXPECT_INT(fs_rp(fs, "alias/a.h", &c), VSCHED_OK);
    EXPECT_STR(c, "real/a.h");
    free(c);
    FS->destroy(fs);
    free(link);
    mock_rm_rf(d);
}

static void fs_missing_is_enoent_and_symlink_loop_is_einval(void)
{
    char *d = tmpdir(), *c, *bytes;
    size_t len;
    mock_put(d, "here.c", "");
    void *fs = fs_make(d, "false");
    EXPECT_INT(fs_rp(fs, "gone.c", &c), VSCHED_ENOENT);
    EXPECT_INT(fs_rp(fs, "here.c/sub", &c), VSCHED_ENOENT);
    EXPECT_INT(FS->loader->load(fs, &MOCK.ctx, "gone.c", &bytes, &len),
               VSCHED_ENOENT);
    EXPECT_INT(FS->loader->exists(fs, &MOCK.ctx, "gone.c"), 0);
    EXPECT_INT(FS->loader->exists(fs, &MOCK.ctx, "here.c"), 1);
    EXPECT_INT(MOCK.n_err, 0); /* probing a missing file is not an error */
    char *loop = mock_path2(d, "loop");
    CU_ASSERT_FATAL(symlink("loop", loop) == 0);
    EXPECT_INT(FS->loader->load(fs, &MOCK.ctx, "loop", &bytes, &len),
               VSCHED_EINVAL);
    EXPECT_CONTAINS(MOCK.diag, "loop:0: error: ");
    FS->destroy(fs);
    free(loop);
    mock_rm_rf(d);
}

static void fs_loading_a_directory_is_einval_with_diag(void)
{
    char *d = tmpdir(), *bytes = NULL;
    size_t len;
    mock_put(d, "dir/a.c", "");
    void *fs = fs_make(d, "false");
    EXPECT_INT(FS->loader->load(fs, &MOCK.ctx, "dir", &bytes, &len),
               VSCHED_EINVAL);
    CU_ASSERT_PTR_NULL(bytes);
    EXPECT_INT(MOCK.n_err, 1);
    EXPECT_CONTAINS(MOCK.diag, "dir:0: error: is a directory");
    FS->destroy(fs);
    mock_rm_rf(d);
}

static void fs_classify_by_extension(void)
{
    static const char *const cases[][2] = {
        {"a.c", "c"},         {"d/b.h", "header"},
        {"x.cc", "cxx"},      {"x.cpp", "cxx"},
        {"x.cxx", "cxx"},     {"x.hh", "header"},
        {"x.hpp", "header"},  {"Makefile", "other"},
        {"x.c.txt", "other"}, {"dir.c/file", "other"},
        {".c", "other"},
    };
    char *d = tmpdir(), kind[16];
    void *fs = fs_make(d, "false");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        EXPECT_INT(FS->loader->classify(fs, &MOCK.ctx, cases[i][0], kind,
                                        sizeof kind),
                   VSCHED_OK);
        EXPECT_STR(kind, cases[i][1]);
    }
    EXPECT_INT(FS->loader->classify(fs, &MOCK.ctx, "a.h", kind, 3),
               VSCHED_EINVAL);
    FS->destroy(fs);
    mock_rm_rf(d);
}

static void fs_create_fails_with_message_on_missing_root(void)
{
    const vsched_plugin *fs = fs_LTX_vsched_plugin_entry();
    mock_kv kv[] = {{"loader", "root", "/nonexistent/vsched/root"},
                    {NULL, NULL, NULL}};
    void *inst;
    char *err;
    EXPECT_INT(make(fs, "loader", "/", kv, &inst, &err), VSCHED_ECONFIG);
    CU_ASSERT_PTR_NULL(inst);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    EXPECT_STR(err, "fs: root '/nonexistent/vsched/root': "
                    "No such file or directory");
    free(err);
}

/* ---- cc ---------------------------------------------------------------------- */

static const vsched_plugin *CC;

/* A cc instance over `root` with out_dir root/../out (or `out`), extra
 * settings in `more` (up to 6, NULL-terminated). */
static void *cc_make(const char *root, const char *out, const mock_kv *more)
{
    static mock_kv kv[12];
    static char *outbuf;
    CC = cc_LTX_vsched_plugin_entry();
    free(outbuf);
    outbuf = out != NULL ? strdup(out) : mock_path2(root, "../out");
    size_t n = 0;
    kv[n++] = (mock_kv){"loader", "root", root};
    kv[n++] = (mock_kv){"executor", "out_dir", outbuf};
    for (; more != NULL && more->section != NULL && n < 11; more++)
        kv[n++] = *more;
    kv[n] = (mock_kv){NULL, NULL, NULL};
    void *inst;
    char *err;
    int rc = make(CC, "executor", root, kv, &inst, &err);
    if (rc != VSCHED_OK)
        fprintf(stderr, "\n  cc create: %s\n", err ? err : "?");
    EXPECT_INT(rc, VSCHED_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(inst);
    return inst;
}

/* A temp dir D with the source root D/root; returns D/root. */
static char *cc_tree(char **top)
{
    *top = tmpdir();
    char *root = mock_path2(*top, "root");
    mkdir(root, 0777);
    return root;
}

static void cc_quoted_include_prefers_includer_dir_then_include_dirs(void)
{
    char *top, *root = cc_tree(&top);
    mock_put(root, "src/x.h", "");
    mock_put(root, "include/x.h", "");
    mock_put(root, "include/y.h", "");
    mock_kv more[] = {{"executor", "include_dirs", "include"},
                      {NULL, NULL, NULL}};
    void *cc = cc_make(root, NULL, more);
    char *deps = deps_of(CC, cc, "src/a.c", "c",
                         "#include \"x.h\"\n#include \"y.h\"\n"
                         "#include <x.h>\n",
                         NULL);
    EXPECT_STR(deps, "src/x.h include/y.h include/x.h");
    free(deps);
    CC->destroy(cc);
    free(root);
    mock_rm_rf(top);
}

static void cc_angled_include_uses_include_dirs_only_and_skips_system(void)
{
    char *top, *root = cc_tree(&top);
    mock_put(root, "src/local.h", "");
    mock_put(root, "include/pub.h", "");
    mock_kv more[] = {{"executor", "include_dirs", "include"},
                      {NULL, NULL, NULL}};
    void *cc = cc_make(root, NULL, more);
    char *deps = deps_of(CC, cc, "src/a.c", "c",
                         "#include <stdio.h>\n#include <local.h>\n"
                         "#include <pub.h>\n#include \"missing.h\"\n"
                         "#include <sys/types.h>\n",
                         NULL);
    EXPECT_STR(deps, "include/pub.h");
    EXPECT_INT(MOCK.dlen, 0); /* system and unresolved headers: no noise */
    free(deps);
    CC->destroy(cc);
    free(root);
    mock_rm_rf(top);
}

static void cc_nested_relative_includes_resolve_to_normalised_names(void)
{
    char *top, *root = cc_tree(&top);
    mock_put(root, "include/greet.h", "");
    mock_put(root, "include/util/base.h", "");
    mock_put(root, "include/util/fmt.h", "");
    void *cc = cc_make(root, NULL, NULL);
    char *deps = deps_of(CC, cc, "include/util/fmt.h", "header",
                         "#include \"base.h\"\n#include \"../greet.h\"\n"
                         "#include \"./base.h\"\n#include \"fmt.h\"\n",
                         NULL);
    /* base.h once; fmt.h including itself is not a dependency */
    EXPECT_STR(deps, "include/util/base.h include/greet.h");
    free(deps);
    CC->destroy(cc);
    free(root);
    mock_rm_rf(top);
}

static void cc_includes_in_comments_and_strings_are_ignored(void)
{
    char *top, *root = cc_tree(&top);
    const char *names[] = {"c1.h",   "c2.h",   "c3.h",   "c4.h",  "c5.h",
                           "yes1.h", "yes2.h", "yes3.h", "yes4.h"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        mock_put(root, names[i], "");
    void *cc = cc_make(root, NULL, NULL);
    char *deps = deps_of(CC, cc, "a.c", "c",
                         "/* #include \"c1.h\" */\n"
                         "// #include \"c2.h\"\n"
                         "/*\n#include \"c3.h\"\n*/\n"
                         "const char *s = \"#include \\\"c4.h\\\"\";\n"
                         "const char *t = \"/*\";\n"
                         "#include \"yes1.h\"\n"
                         "char q = '\"';\n"
                         "#include \"yes2.h\"\n"
                         "#define END \"*/\"\n"
                         "#include \"yes3.h\" /* opens a comment\n"
                         "#include \"c5.h\"\n"
                         "*/ int x;\n"
                         "// a line comment continued \\\n"
                         "#include \"c5.h\"\n"
                         "#include \"yes4.h\"\n",
                         NULL);
    EXPECT_STR(deps, "yes1.h yes2.h yes3.h yes4.h");
    free(deps);
    CC->destroy(cc);
    free(root);
    mock_rm_rf(top);
}

static void cc_directive_spellings_with_comments_and_continuations(void)
{
    char *top, *root = cc_tree(&top);
    const char *names[] = {"a.h", "b.h", "c.h",     "d.h", "e.h",
                           "f.h", "g.h", "inc/i.h", "j.h"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        mock_put(root, names[i], "");
    mock_kv more[] = {{"executor", "include_dirs", "inc"}, {NULL, NULL, NULL}};
    void *cc = cc_make(root, NULL, more);
    char *deps = deps_of(CC, cc, "x.c", "c",
                         "   #  include \"a.h\"\n"
                         "#/* c */include/* d */\"b.h\"\n"
                         "/* leading */ #include \"c.h\"\n"
                         "/* multi\n   line */ #include \"d.h\"\n"
                         "#inc\\\nlude \"e.h\"\n"
                         "# \\\r\n  include \\\n\"f.h\"\n"
                         "int y; #include \"nope.h\"\n"
                         "#include \"g.h\" // trailing\n"
                         "\t#include\t<i.h>\n"
                         "#include \"j.h\"\r\n"
                         "#include MACRO_HEADER\n"
                         "#define nope \"z.h\"\n",
                         NULL);
    EXPECT_STR(deps, "a.h b.h c.h d.h e.h f.h g.h inc/i.h j.h");
    free(deps);
    CC->destroy(cc);
    free(root);
    mock_rm_rf(top);
}

static void cc_include_outside_root_is_not_a_dep_and_warns(void)
{
    char *top, *root = cc_tree(&top);
    mock_put(top, "outside.h", "");
    mock_put(root, "in.h", "");
    char *target = mock_path2(top, "outside.h"),
         *link = mock_path2(root, "link.h");
    CU_ASSERT_FATAL(symlink(target, link) == 0);
    void *cc = cc_make(root, NULL, NULL);
    char text[1024];
    snprintf(text, sizeof text,
             "#include \"../outside.h\"\n#include \"%s\"\n"
             "#include \"link.h\"\n#include \"in.h\"\n",
             target);
    char *deps = deps_of(CC, cc, "a.c", "c", text, NULL);
    EXPECT_STR(deps, "in.h");
    EXPECT_INT(MOCK.n_warn, 3);
    EXPECT_CONTAINS(MOCK.diag, "a.c:1: warning: include \"../outside.h\" "
                               "resolves outside the source root");
    EXPECT_CONTAINS(MOCK.diag, "a.c:3: warning: include \"link.h\"");
    free(deps);
    CC->destroy(cc);
    free(target), free(link), free(root);
    mock_rm_rf(top);
}

static void cc_deps_are_deduplicated_and_equal_blockers(void)
{
    char *top, *root = cc_tree(&top);
    mock_put(root, "a.h", "");
    mock_put(root, "b.h", "");
    void *cc = cc_make(root, NULL, NULL);
    char *blockers;
    char *deps = deps_of(CC, cc, "m.c", "c",
                         "#include \"b.h\"\n#include \"a.h\"\n"
                         "#include \"./b.h\"\n",
                         &blockers);
    EXPECT_STR(deps, "b.h a.h");
    EXPECT_STR(blockers, "b.h a.h");
    free(deps);
    free(blockers);
    deps = deps_of(CC, cc, "notes.txt", "other", "#include \"a.h\"\n", NULL);
    EXPECT_STR(deps, ""); /* only C and C++ sources are scanned */
    free(deps);
    CC->destroy(cc);
    free(root);
    mock_rm_rf(top);
}

static uint64_t cc_hash(void *cc, uint64_t content, const uint64_t *b,
                        size_t n)
{
    vsched_analysis_in in = {
        "a.c", NULL, content, b, n, sizeof(vsched_analysis_in), NULL};
    uint64_t h = 0;
    EXPECT_INT(CC->executor->analysis(cc, &MOCK.ctx, &in, &h), VSCHED_OK);
    return h;
}

static void cc_analysis_hash_changes_with_blocker_hashes_only(void)
{
    char *top, *root = cc_tree(&top);
    void *cc = cc_make(root, NULL, NULL);
    uint64_t b1[] = {2, 3}, b2[] = {2, 4}, b3[] = {3, 2};
    uint64_t h = cc_hash(cc, 1, b1, 2);
    EXPECT_INT(cc_hash(cc, 1, b1, 2), h);
    CU_ASSERT_NOT_EQUAL(cc_hash(cc, 1, b2, 2), h);
    CU_ASSERT_NOT_EQUAL(cc_hash(cc, 1, b3, 2), h);
    CU_ASSERT_NOT_EQUAL(cc_hash(cc, 5, b1, 2), h);
    CU_ASSERT_NOT_EQUAL(cc_hash(cc, 1, b1, 1), h);
    uint64_t cat[] = {1, 2, 3};
    EXPECT_INT(h, XXH3_64bits(cat, sizeof cat));
    CC->destroy(cc);
    free(root);
    mock_rm_rf(top);
}

/* Source of `name` (text put on disk too) and its Artifact for `profile`. */
static int cc_build(void *cc, const char *root, const char *name,
                    const char *text, const char *profile,
                    vsched_artifact_out *out)
{
    mock_put(root, name, text);
    const char *dot = strrchr(name, '.');
    const char *kind = strcmp(dot, ".c") == 0 ? "c" : "header";
    vsched_source_out so = {0};
    EXPECT_INT(CC->executor->source(cc, &MOCK.ctx, name, kind, text,
                                    strlen(text), &so),
               VSCHED_OK);
    vsched_artifact_in in = {
        name, profile, so.snapshot, 42, sizeof(vsched_artifact_in), NULL, 0};
    memset(out, 0xAB, sizeof *out); /* the plugin must set every field */
    int rc = CC->executor->artifact(cc, &MOCK.ctx, &in, out);
    CC->executor->snapshot_free(cc, so.snapshot);
    return rc;
}

static void out_free(vsched_artifact_out *o)
{
    free(o->path);
    free(o->tmp_path);
    free(o->bytes);
    for (size_t i = 0; o->deps != NULL && i < o->n_deps; i++)
        free(o->deps[i]);
    free(o->deps);
}

/* The artifact's deps (ABI 1.1) as one line "a b c", sorted; heap. */
static char *out_deps(const vsched_artifact_out *o)
{
    char **v = calloc(o->n_deps + 1, sizeof *v);
    size_t len = 1;
    for (size_t i = 0; i < o->n_deps; i++) {
        v[i] = o->deps[i];
        len += strlen(v[i]) + 1;
    }
    for (size_t i = 1; i < o->n_deps; i++) /* insertion sort: a few names */
        for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
            char *t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    char *line = calloc(len, 1);
    for (size_t i = 0; i < o->n_deps; i++) {
        if (i > 0)
            strcat(line, " ");
        strcat(line, v[i]);
    }
    free(v);
    return line;
}

static void cc_artifact_compiles_to_tmp_path_under_profile_dir(void)
{
    char *top, *root = cc_tree(&top), *out = mock_path2(top, "out");
    mock_kv more[] = {{"profile.debug", "cflags", "-O0 -g"},
                      {NULL, NULL, NULL}};
    void *cc = cc_make(root, out, more);
    vsched_artifact_out o, o2;
    EXPECT_INT(cc_build(cc, root, "src/ok.c", "int ok(void) { return 1; }\n",
                        "release", &o),
               VSCHED_OK);
    char *want = mock_path2(out, "release/src/ok.c.o");
    EXPECT_STR(o.path, want);
    CU_ASSERT_TRUE(strncmp(o.tmp_path, want, strlen(want)) == 0 &&
                   strncmp(o.tmp_path + strlen(want), ".tmp.", 5) == 0);
    CU_ASSERT_PTR_NULL(o.bytes);
    char magic[4] = {0};
    FILE *f = fopen(o.tmp_path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(fread(magic, 1, 4, f), 4);
    fclose(f);
    CU_ASSERT_TRUE(memcmp(magic, "\177ELF", 4) == 0);
    CU_ASSERT_EQUAL(access(want, F_OK), -1); /* publishing is the host's */
    CU_ASSERT_NOT_EQUAL(o.artifact_hash, 0);
    EXPECT_INT(MOCK.dlen, 0);
    EXPECT_INT(cc_build(cc, root, "src/ok.c", "int ok(void) { return 1; }\n",
                        "debug", &o2),
               VSCHED_OK);
    CU_ASSERT_NOT_EQUAL(o2.artifact_hash, o.artifact_hash);
    CU_ASSERT_TRUE(strcmp(o.tmp_path, o2.tmp_path) != 0);
    out_free(&o);
    out_free(&o2);
    free(want);
    CC->destroy(cc);
    free(root), free(out);
    mock_rm_rf(top);
}

/* The depfile grammar GCC writes: continuations, several rules (-MP's
 * empty ones too), escaped spaces, '#' and '$', literal backslashes. */
static void cc_depfile_parse_takes_every_prerequisite_unescaped(void)
{
    static const char text[] =
        "out/a.o.tmp.1.2: /r/src/a.c /r/include/x.h \\\n"
        "  /r/my\\ dir/y.h /r/h\\#1.h /r/cost$$.h\\\n"
        " /r/back\\slash.h /r/two\\\\\\ sp.h\n"
        "/r/include/x.h:\n"
        "\n"
        "other.o: /r/z.h\r\n";
    char **v = NULL;
    size_t n = 0;
    EXPECT_INT(cc__depfile_parse(text, sizeof text - 1, &v, &n), VSCHED_OK);
    static const char *const want[] = {
        "/r/src/a.c", "/r/include/x.h",   "/r/my dir/y.h", "/r/h#1.h",
        "/r/cost$.h", "/r/back\\slash.h", "/r/two\\ sp.h", "/r/z.h"};
    EXPECT_INT(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n && i < sizeof want / sizeof want[0]; i++)
        EXPECT_STR(v[i], want[i]);
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
    EXPECT_INT(cc__depfile_parse("", 0, &v, &n), VSCHED_OK);
    EXPECT_INT(n, 0);
    CU_ASSERT_PTR_NULL(v);
}

/* artifact() returns what the compiler read (its -MD depfile): a header
 * reached through a macro, which the #include scanner cannot see, and the
 * quoted ones, as source names; not the system headers, not the file
 * itself; and no depfile is left behind. */
static void cc_artifact_returns_the_compilers_own_deps(void)
{
    char *top, *root = cc_tree(&top), *out = mock_path2(top, "out");
    mock_put(root, "include/vis.h", "#include \"sub/deep.h\"\n");
    mock_put(root, "include/sub/deep.h", "int deep;\n");
    mock_put(root, "src/hidden.h", "int hidden;\n");
    mock_kv more[] = {{"executor", "include_dirs", "include"},
                      {NULL, NULL, NULL}};
    void *cc = cc_make(root, out, more);
    vsched_artifact_out o;
    mock_ctx();
    EXPECT_INT(cc_build(cc, root, "src/m.c",
                        "#define HDR \"hidden.h\"\n#include HDR\n"
                        "#include <stdio.h>\n#include \"vis.h\"\n"
                        "int m(void) { return hidden + deep; }\n",
                        "release", &o),
               VSCHED_OK);
    char *deps = out_deps(&o);
    EXPECT_STR(deps, "include/sub/deep.h include/vis.h src/hidden.h");
    free(deps);
    char *d = mock_path2(out, "release/src");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ls '%s' | grep -c '\\.d$'", d);
    FILE *f = popen(cmd, "r");
    int nd = -1;
    if (f == NULL || fscanf(f, "%d", &nd) != 1)
        nd = -1;
    if (f != NULL)
        pclose(f);
    EXPECT_INT(nd, 0);
    out_free(&o);
    free(d);
    CC->destroy(cc);
    free(root), free(out);
    mock_rm_rf(top);
}

/* A "compiler" that says it is version `v` and otherwise runs cc. */
static char *versioned_compiler(const char *top, const char *v)
{
    char *script = mock_path2(top, "vcc"), text[512];
    snprintf(text, sizeof text,
             "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'vcc %s'; "
             "exit 0; fi\nexec cc \"$@\"\n",
             v);
    mock_put(top, "vcc", text);
    chmod(script, 0755);
    return script;
}

/* identity (ABI 1.1) is stable for one compiler and changes with what
 * the compiler says it is; a missing compiler is ETOOL, with a message. */
static void cc_identity_follows_the_compilers_version(void)
{
    char *top, *root = cc_tree(&top);
    char *script = versioned_compiler(top, "1.0");
    mock_kv more[] = {{"executor", "compiler", script}, {NULL, NULL, NULL}};
    void *cc = cc_make(root, NULL, more);
    CU_ASSERT_PTR_NOT_NULL_FATAL(CC->executor->identity);
    uint64_t a = 0, b = 0, c = 0;
    EXPECT_INT(CC->executor->identity(cc, mock_ctx(), "release", &a),
               VSCHED_OK);
    EXPECT_INT(CC->executor->identity(cc, mock_ctx(), "debug", &b), VSCHED_OK);
    CU_ASSERT_EQUAL(a, b);
    CC->destroy(cc);
    free(versioned_compiler(top, "2.0"));
    cc = cc_make(root, NULL, more);
    EXPECT_INT(CC->executor->identity(cc, mock_ctx(), "release", &c),
               VSCHED_OK);
    CU_ASSERT_NOT_EQUAL(a, c);
    CC->destroy(cc);
    mock_kv none[] = {{"executor", "compiler", "no-such-cc-xyz"},
                      {NULL, NULL, NULL}};
    cc = cc_make(root, NULL, none);
    EXPECT_INT(CC->executor->identity(cc, mock_ctx(), "release", &c),
               VSCHED_ETOOL);
    EXPECT_CONTAINS(MOCK.diag, "cannot run 'no-such-cc-xyz'");
    CC->destroy(cc);
    free(script);
    free(root);
    mock_rm_rf(top);
}

static void cc_artifact_reports_compiler_warnings(void)
{
    char *top, *root = cc_tree(&top);
    mock_kv more[] = {{"executor", "cflags", "-Wall"}, {NULL, NULL, NULL}};
    void *cc = cc_make(root, NULL, more);
    vsched_artifact_out o;
    mock_ctx();
    EXPECT_INT(cc_build(cc, root, "w.c",
                        "int f(void) { int unused_var; return 0; }\n",
                        "release", &o),
               VSCHED_OK);
    EXPECT_INT(MOCK.n_warn, 1);
    EXPECT_CONTAINS(MOCK.diag, "unused_var");
    CU_ASSERT_EQUAL(access(o.tmp_path, F_OK), 0);
    out_free(&o);
    CC->destroy(cc);
    free(root);
    mock_rm_rf(top);
}

static void cc_compile_error_is_etool_with_compiler_message(void)
{
    char *top, *root = cc_tree(&top), *out = mock_path2(top, "out");
    void *cc = cc_make(root, out, NULL);
    vsched_artifact_out o;
    mock_ctx();
    EXPECT_INT(cc_build(cc, root, "src/bad.c",
                        "int f(void) { return no_such_symbol; }\n", "release",
                        &o),
               VSCHED_ETOOL);
    CU_ASSERT_PTR_NULL(o.path);
    CU_ASSERT_PTR_NULL(o.tmp_path);
    EXPECT_INT(MOCK.n_err, 1);
    EXPECT_CONTAINS(MOCK.diag, "src/bad.c:0: error: ");
    EXPECT_CONTAINS(MOCK.diag, "no_such_symbol");
    EXPECT_INT(tmp_leftovers(out), 0);
    CC->destroy(cc);
    free(root), free(out);
    mock_rm_rf(top);
}

static void cc_missing_compiler_is_etool_with_cannot_run(void)
{
    char *top, *root = cc_tree(&top);
    mock_kv more[] = {{"executor", "compiler", "gcc-99"}, {NULL, NULL, NULL}};
    void *cc = cc_make(root, NULL, more);
    vsched_artifact_out o;
    mock_ctx();
    EXPECT_INT(cc_build(cc, root, "a.c", "int x;\n", "release", &o),
               VSCHED_ETOOL);
    EXPECT_CONTAINS(MOCK.diag,
                    "cannot run 'gcc-99': No such file or directory");
    CC->destroy(cc);
    free(root);
    mock_rm_rf(top);
}

/* A "compiler" script that creates its -o file, records its pid, ignores
 * SIGTERM when `stubborn`, and blocks in sleep 30 under the same pid. */
static char *hung_compiler(const char *top, int stubborn)
{
    char *script = mock_path2(top, "hung-cc"), *pidf = mock_path2(top, "pid"),
         text[1024];
    snprintf(text, sizeof text,
             "#!/bin/sh\nfor a; do out=$a; done\n: > \"$out\"\n%s"
             "echo $$ > '%s'\nexec sleep 30\n",
             stubborn ? "trap '' TERM\n" : "", pidf);
    mock_put(top, "hung-cc", text);
    chmod(script, 0755);
    free(pidf);
    return script;
}

/* Cancel MOCK once the pid file `arg` exists. */
static void *cancel_when_started(void *arg)
{
    for (int i = 0; i < 1000 && access(arg, F_OK) != 0; i++)
        usleep(10000);
    usleep(50000);
    atomic_store(&MOCK.cancel, 1);
    return NULL;
}

static pid_t read_pid(const char *top)
{
    char *p = mock_path2(top, "pid");
    FILE *f = fopen(p, "r");
    int pid = -1;
    if (f == NULL || fscanf(f, "%d", &pid) != 1)
        pid = -1;
    if (f != NULL)
        fclose(f);
    free(p);
    return (pid_t)pid;
}

static void cc_cancellation_kills_a_running_compiler(void)
{
    char *top, *root = cc_tree(&top), *out = mock_path2(top, "out");
    char *script = hung_compiler(top, 1), *pidf = mock_path2(top, "pid");
    mock_kv more[] = {{"executor", "compiler", script}, {NULL, NULL, NULL}};
    void *cc = cc_make(root, out, more);
    vsched_artifact_out o;
    pthread_t th;
    mock_ctx();
    pthread_create(&th, NULL, cancel_when_started, pidf);
    time_t t0 = time(NULL);
    EXPECT_INT(cc_build(cc, root, "slow.c", "int x;\n", "release", &o),
               VSCHED_ECANCELLED);
    pthread_join(th, NULL);
    CU_ASSERT_TRUE(time(NULL) - t0 < 20); /* not the 30 s of the sleep */
    pid_t pid = read_pid(top);
    CU_ASSERT_TRUE(pid > 0);
    /* SIGTERM was ignored: SIGKILL followed, and the child was reaped */
    CU_ASSERT_TRUE(pid > 0 && kill(pid, 0) == -1 && errno == ESRCH);
    CU_ASSERT_PTR_NULL(o.tmp_path);
    EXPECT_INT(tmp_leftovers(out), 0);
    CC->destroy(cc);
    free(root), free(out), free(script), free(pidf);
    mock_rm_rf(top);
}

static void cc_timeout_kills_a_hung_compiler(void)
{
    char *top, *root = cc_tree(&top), *out = mock_path2(top, "out");
    char *script = hung_compiler(top, 0);
    mock_kv more[] = {{"executor", "compiler", script},
                      {"executor", "timeout", "1"},
                      {NULL, NULL, NULL}};
    void *cc = cc_make(root, out, more);
    vsched_artifact_out o;
    mock_ctx();
    EXPECT_INT(cc_build(cc, root, "slow.c", "int x;\n", "release", &o),
               VSCHED_ETIMEDOUT);
    EXPECT_CONTAINS(MOCK.diag, "timed out after 1 s");
    pid_t pid = read_pid(top);
    CU_ASSERT_TRUE(pid > 0 && kill(pid, 0) == -1 && errno == ESRCH);
    EXPECT_INT(tmp_leftovers(out), 0);
    CC->destroy(cc);
    free(root), free(out), free(script);
    mock_rm_rf(top);
}

static void cc_header_artifact_produces_nothing(void)
{
    char *top, *root = cc_tree(&top), *out = mock_path2(top, "out");
    void *cc = cc_make(root, out, NULL);
    vsched_artifact_out o;
    EXPECT_INT(cc_build(cc, root, "a.h", "int x;\n", "release", &o),
               VSCHED_OK);
    CU_ASSERT_PTR_NULL(o.path);
    CU_ASSERT_PTR_NULL(o.tmp_path);
    CU_ASSERT_PTR_NULL(o.bytes);
    CU_ASSERT_EQUAL(access(out, F_OK), -1);
    CC->destroy(cc);
    free(root), free(out);
    mock_rm_rf(top);
}

/* Rename o's tmp to its path, as the host publishes. */
static void publish(vsched_artifact_out *o)
{
    CU_ASSERT_FATAL(o->tmp_path != NULL && rename(o->tmp_path, o->path) == 0);
}

static void cc_link_job_produces_runnable_binary_with_profile_flags(void)
{
    char *top, *root = cc_tree(&top), *out = mock_path2(top, "out");
    mock_kv more[] = {{"executor", "cflags", "-DANSWER=1"},
                      {"executor", "include_dirs", "include"},
                      {"profile.debug", "cflags", "-DANSWER=42 -O0"},
                      {"profile.debug", "libs", "-lm"},
                      {NULL, NULL, NULL}};
    mock_put(root, "include/twice.h", "int twice(int);\n");
    void *cc = cc_make(root, out, more);
    vsched_artifact_out a, b, l;
    EXPECT_INT(cc_build(cc, root, "src/main.c",
                        "#include <stdio.h>\n#include <twice.h>\n"
                        "int main(void) { printf(\"answer %d\\n\", "
                        "twice(ANSWER) / 2); return 0; }\n",
                        "debug", &a),
               VSCHED_OK);
    EXPECT_INT(cc_build(cc, root, "src/twice.c",
                        "#include <math.h>\n#include <twice.h>\n"
                        "int twice(int x) { return (int)(2 * fabs(x)); }\n",
                        "debug", &b),
               VSCHED_OK);
    publish(&a);
    publish(&b);
    const char *inputs[] = {a.path, b.path};
    vsched_job_in job = {"link", "hello", "debug",
                         inputs, 2,       sizeof(vsched_job_in)};
    EXPECT_INT(CC->executor->job(cc, &MOCK.ctx, &job, &l), VSCHED_OK);
    char *want = mock_path2(out, "debug/hello");
    EXPECT_STR(l.path, want);
    CU_ASSERT_NOT_EQUAL(l.artifact_hash, 0);
    publish(&l);
    char line[64] = "";
    FILE *p = popen(want, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof line, p));
    EXPECT_INT(pclose(p), 0);
    EXPECT_STR(line, "answer 42\n");
    out_free(&l);
    vsched_job_in bad = {"archive", "x", "debug",
                         inputs,    2,   sizeof(vsched_job_in)};
    EXPECT_INT(CC->executor->job(cc, &MOCK.ctx, &bad, &l),
               VSCHED_EUNSUPPORTED);
    out_free(&a), out_free(&b), free(want);
    CC->destroy(cc);
    free(root), free(out);
    mock_rm_rf(top);
}

static void cc_link_failure_is_etool_with_linker_message(void)
{
    char *top, *root = cc_tree(&top), *out = mock_path2(top, "out");
    void *cc = cc_make(root, out, NULL);
    vsched_artifact_out a, l;
    EXPECT_INT(cc_build(cc, root, "m.c",
                        "int missing_fn(void);\n"
                        "int main(void) { return missing_fn(); }\n",
                        "release", &a),
               VSCHED_OK);
    publish(&a);
    const char *inputs[] = {a.path};
    vsched_job_in job = {"link", "prog", "release",
                         inputs, 1,      sizeof(vsched_job_in)};
    mock_ctx();
    EXPECT_INT(CC->executor->job(cc, &MOCK.ctx, &job, &l), VSCHED_ETOOL);
    CU_ASSERT_PTR_NULL(l.path);
    EXPECT_CONTAINS(MOCK.diag, "prog:0: error: ");
    EXPECT_CONTAINS(MOCK.diag, "missing_fn");
    EXPECT_INT(tmp_leftovers(out), 0);
    out_free(&a);
    CC->destroy(cc);
    free(root), free(out);
    mock_rm_rf(top);
}

/* One compile of a concurrency test, with a context of its own. */
typedef struct cc_job_arg {
    void *cc;
    const char *name;
    mock_host t;
    int rc;
    vsched_artifact_out out;
} cc_job_arg;

static void *cc_compile_thread(void *arg)
{
    cc_job_arg *j = arg;
    mock_ctx_init(&j->t);
    vsched_source_out so = {0};
    const char *text = "int f(void) { return 7; }\n";
    j->rc = CC->executor->source(j->cc, &j->t.ctx, j->name, "c", text,
                                 strlen(text), &so);
    vsched_artifact_in in = {
        j->name, j->name[4] == '0' ? "a" : "b", so.snapshot,
        1,       sizeof(vsched_artifact_in),    NULL,
        0};
    if (j->rc == VSCHED_OK)
        j->rc = CC->executor->artifact(j->cc, &j->t.ctx, &in, &j->out);
    CC->executor->snapshot_free(j->cc, so.snapshot);
    return NULL;
}

static void cc_concurrent_compiles_share_one_instance(void)
{
    char *top, *root = cc_tree(&top), *out = mock_path2(top, "out");
    enum {
        N = 6
    };
    static const char *const names[N] = {"src/0.c", "src/1.c", "src/2.c",
                                         "src/3.c", "src/4.c", "src/5.c"};
    for (int i = 0; i < N; i++)
        mock_put(root, names[i], "int f(void) { return 7; }\n");
    void *cc = cc_make(root, out, NULL);
    cc_job_arg *jobs = calloc(N, sizeof *jobs);
    pthread_t th[N];
    for (int i = 0; i < N; i++) {
        jobs[i].cc = cc;
        jobs[i].name = names[i];
        pthread_create(&th[i], NULL, cc_compile_thread, &jobs[i]);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
        EXPECT_INT(jobs[i].rc, VSCHED_OK);
        CU_ASSERT_TRUE(jobs[i].out.tmp_path != NULL &&
                       access(jobs[i].out.tmp_path, F_OK) == 0);
        EXPECT_INT(jobs[i].t.dlen, 0);
        out_free(&jobs[i].out);
    }
    free(jobs);
    CC->destroy(cc);
    free(root), free(out);
    mock_rm_rf(top);
}

static void cc_create_validates_roots_and_include_dirs(void)
{
    char *top, *root = cc_tree(&top), *err;
    void *inst;
    const vsched_plugin *cc = cc_LTX_vsched_plugin_entry();
    /* [loader] root is relative to the config dir when source_root unset */
    mock_kv rel[] = {{"loader", "root", "root"},
                     {"executor", "out_dir", "out"},
                     {NULL, NULL, NULL}};
    EXPECT_INT(make(cc, "executor", top, rel, &inst, &err), VSCHED_OK);
    cc->destroy(inst);
    mock_kv esc[] = {{"loader", "root", root},
                     {"executor", "out_dir", "/tmp"},
                     {"executor", "include_dirs", "include ../up"},
                     {NULL, NULL, NULL}};
    EXPECT_INT(make(cc, "executor", top, esc, &inst, &err), VSCHED_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    EXPECT_CONTAINS(err, "include_dirs");
    free(err);
    mock_kv none[] = {{"executor", "out_dir", "/tmp"}, {NULL, NULL, NULL}};
    EXPECT_INT(make(cc, "executor", top, none, &inst, &err), VSCHED_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    EXPECT_STR(err, "cc: [executor] set source_root, or root in [loader]");
    free(err);
    free(root);
    mock_rm_rf(top);
}

/* ---- null -------------------------------------------------------------------- */

static const vsched_plugin *NL;

static void *null_make(const char *files, const char *deps, const char *seed,
                       const char *cost, const char *fail)
{
    NL = null_LTX_vsched_plugin_entry();
    mock_kv kv[] = {{"loader", "files", files}, {"loader", "deps", deps},
                    {"loader", "seed", seed},   {"loader", "cost_us", cost},
                    {"loader", "fail", fail},   {NULL, NULL, NULL}};
    void *inst;
    char *err;
    EXPECT_INT(make(NL, "loader", "/", kv, &inst, &err), VSCHED_OK);
    CU_ASSERT_PTR_NOT_NULL_FATAL(inst);
    return inst;
}

static char *null_load(void *nl, const char *name)
{
    char *bytes = NULL;
    size_t len;
    EXPECT_INT(NL->loader->load(nl, &MOCK.ctx, name, &bytes, &len), VSCHED_OK);
    CU_ASSERT_FATAL(bytes != NULL && strlen(bytes) == len);
    return bytes;
}

static void null_synthetic_graph_is_acyclic_and_deterministic(void)
{
    void *a = null_make("300", "5", "7", "0", "");
    void *b = null_make("300", "5", "7", "0", "");
    void *c = null_make("300", "5", "8", "0", "");
    int total = 0, differs = 0;
    for (int i = 0; i < 300; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        char *ta = null_load(a, name), *tb = null_load(b, name),
             *tc = null_load(c, name), *blk;
        EXPECT_STR(ta, tb);
        differs += strcmp(ta, tc) != 0;
        char *deps = deps_of(NL, a, name, "null", ta, &blk);
        EXPECT_STR(deps, blk); /* every synthetic line is a blocker */
        int js[64], n = 0, used = 0;
        for (char *w = deps; n < 64 && sscanf(w, " f%d%n", &js[n], &used) == 1;
             w += used, n++) {
            CU_ASSERT_TRUE(js[n] >= 0 &&
                           js[n] < i); /* earlier only: acyclic */
            for (int k = 0; k < n; k++)
                CU_ASSERT_NOT_EQUAL(js[k], js[n]); /* deduplicated */
        }
        CU_ASSERT_TRUE(n <= 5 && n <= i);
        if (i == 0)
            EXPECT_INT(n, 0);
        total += n;
        free(ta), free(tb), free(tc), free(deps), free(blk);
    }
    CU_ASSERT_TRUE(total > 300 * 3); /* dedup removes few of the 5 draws */
    CU_ASSERT_TRUE(differs > 200);   /* the seed matters */
    NL->destroy(a), NL->destroy(b), NL->destroy(c);
}

static void null_synthetic_blockers_are_distinct(void)
{
    void *nl = null_make("50", "64", "3", "0", "");
    char *text = null_load(nl, "f10");
    int seen[10] = {0}, n = 0;
    for (char *p = text; (p = strstr(p, "blocker f")) != NULL; p++, n++) {
        int j = atoi(p + 9);
        CU_ASSERT_TRUE(j >= 0 && j < 10);
        if (j >= 0 && j < 10)
            EXPECT_INT(seen[j]++, 0);
    }
    CU_ASSERT_TRUE(n > 5 && n <= 10); /* 64 draws from [0, 10), deduped */
    free(text);
    NL->destroy(nl);
}

static void null_names_outside_the_range_are_enoent(void)
{
    void *nl = null_make("200", "3", "1", "0", "");
    static const char *const bad[] = {
        "f200", "f01", "f", "g1", "f-1", "f1x", "", "f99999999999999999999"};
    char *c = NULL, *bytes, kind[8];
    size_t len;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        EXPECT_INT(NL->loader->exists(nl, &MOCK.ctx, bad[i]), 0);
        EXPECT_INT(NL->loader->load(nl, &MOCK.ctx, bad[i], &bytes, &len),
                   VSCHED_ENOENT);
        EXPECT_INT(NL->loader->realpath(nl, &MOCK.ctx, bad[i], &c),
                   VSCHED_ENOENT);
    }
    EXPECT_INT(NL->loader->exists(nl, &MOCK.ctx, "f199"), 1);
    EXPECT_INT(NL->loader->exists(nl, &MOCK.ctx, "f0"), 1);
    EXPECT_INT(NL->loader->realpath(nl, &MOCK.ctx, "f42", &c), VSCHED_OK);
    EXPECT_STR(c, "f42");
    free(c);
    EXPECT_INT(NL->loader->classify(nl, &MOCK.ctx, "f42", kind, sizeof kind),
               VSCHED_OK);
    EXPECT_STR(kind, "null");
    NL->destroy(nl);
}

static void null_parses_dep_and_blocker_lines_of_any_file(void)
{
    void *nl = null_make("1", "0", "1", "0", "");
    char *blk;
    char *deps = deps_of(NL, nl, "x.c", "c",
                         "dep a.h\nblocker b.h\r\n# noise\nblocker   c.h  \n"
                         "dep \ndeps x\nblocker\n  dep y\ndep d.h",
                         &blk);
    EXPECT_STR(deps, "a.h b.h c.h d.h");
    EXPECT_STR(blk, "b.h c.h");
    free(deps), free(blk);
    NL->destroy(nl);
}

static int null_artifact(void *nl, const char *name, const char *profile,
                         uint64_t analysis, vsched_artifact_out *out)
{
    vsched_source_out so = {0};
    EXPECT_INT(NL->executor->source(nl, &MOCK.ctx, name, "null", "", 0, &so),
               VSCHED_OK);
    vsched_artifact_in in = {
        name, profile, so.snapshot, analysis, sizeof(vsched_artifact_in),
        NULL, 0};
    memset(out, 0xAB, sizeof *out);
    int rc = NL->executor->artifact(nl, &MOCK.ctx, &in, out);
    NL->executor->snapshot_free(nl, so.snapshot);
    return rc;
}

static void null_forced_failure_is_etool_with_diag(void)
{
    void *nl = null_make("10", "3", "1", "0", "f3 f7");
    vsched_artifact_out o;
    mock_ctx();
    EXPECT_INT(null_artifact(nl, "f3", "release", 1, &o), VSCHED_ETOOL);
    EXPECT_STR(MOCK.diag, "f3:0: error: null: forced failure\n");
    EXPECT_INT(null_artifact(nl, "f7", "release", 1, &o), VSCHED_ETOOL);
    EXPECT_INT(null_artifact(nl, "f4", "release", 1, &o), VSCHED_OK);
    EXPECT_INT(MOCK.n_err, 2);
    NL->destroy(nl);
}

static void null_artifact_writes_nothing_and_keys_on_profile(void)
{
    void *nl = null_make("10", "3", "1", "0", "");
    vsched_artifact_out o;
    EXPECT_INT(null_artifact(nl, "f1", "debug", 0x1234, &o), VSCHED_OK);
    CU_ASSERT_PTR_NULL(o.path);
    CU_ASSERT_PTR_NULL(o.tmp_path);
    CU_ASSERT_PTR_NULL(o.bytes);
    EXPECT_INT(o.len, 0);
    EXPECT_INT(o.artifact_hash, 0x1234 ^ XXH3_64bits("debug", 5));
    vsched_job_in job = {"link", "all", "debug",
                         NULL,   0,     sizeof(vsched_job_in)};
    EXPECT_INT(NL->executor->job(nl, &MOCK.ctx, &job, &o), VSCHED_OK);
    CU_ASSERT_PTR_NULL(o.path);
    uint64_t b[] = {7, 8}, h = 0, cat[] = {3, 7, 8};
    vsched_analysis_in in = {"f1", NULL, 3, b, 2, sizeof(vsched_analysis_in),
                             NULL};
    EXPECT_INT(NL->executor->analysis(nl, &MOCK.ctx, &in, &h), VSCHED_OK);
    EXPECT_INT(h, XXH3_64bits(cat, sizeof cat)); /* same formula as cc */
    NL->destroy(nl);
}

static long long ns_of(clockid_t clk)
{
    struct timespec t;
    clock_gettime(clk, &t);
    return (long long)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void null_cost_burns_cpu_rather_than_sleeping(void)
{
    void *nl = null_make("10", "3", "1", "40000", "");
    vsched_artifact_out o;
    struct rusage r0, r1;
    getrusage(RUSAGE_THREAD, &r0);
    long long w0 = ns_of(CLOCK_MONOTONIC);
    EXPECT_INT(null_artifact(nl, "f1", "release", 1, &o), VSCHED_OK);
    long long wall = ns_of(CLOCK_MONOTONIC) - w0;
    getrusage(RUSAGE_THREAD, &r1);
    /* source + artifact: two stages of 40 ms each */
    CU_ASSERT_TRUE(wall >= 80000000);
    /* Spinning, the thread never gives up the CPU by itself: a sleep (one
     * per stage at least) would be a voluntary context switch. Counted
     * rather than timed, so a loaded machine, which only preempts
     * (involuntary switches), cannot make it fail. */
    CU_ASSERT_TRUE(r1.ru_nvcsw - r0.ru_nvcsw <= 1);
    NL->destroy(nl);
}

static void null_cost_stops_when_cancelled(void)
{
    void *nl = null_make("10", "3", "1", "10000000", "");
    uint64_t h = 0;
    vsched_analysis_in in = {
        "f1", NULL, 3, NULL, 0, sizeof(vsched_analysis_in), NULL};
    mock_ctx();
    atomic_store(&MOCK.cancel, 1);
    EXPECT_INT(NL->executor->analysis(nl, &MOCK.ctx, &in, &h),
               VSCHED_ECANCELLED);
    NL->destroy(nl);
}

int main(void)
{
    static const vr_cu_test tests[] = {
#define T_(name) {#name, name}
        T_(descriptors_declare_abi_roles_and_thread_safety),
        T_(fs_load_reads_whole_file_including_nul_bytes),
        T_(fs_realpath_resolves_dot_and_dotdot_inside_root),
        T_(fs_dotdot_escape_is_refused_even_for_missing_files),
        T_(fs_absolute_name_is_confined_to_root),
        T_(fs_symlink_leaving_root_is_refused_unless_follow_outside),
        T_(fs_symlink_inside_root_resolves_to_target_name),
        T_(fs_missing_is_enoent_and_symlink_loop_is_einval),
        T_(fs_loading_a_directory_is_einval_with_diag),
        T_(fs_classify_by_extension),
        T_(fs_create_fails_with_message_on_missing_root),
        T_(cc_quoted_include_prefers_includer_dir_then_include_dirs),
        T_(cc_angled_include_uses_include_dirs_only_and_skips_system),
        T_(cc_nested_relative_includes_resolve_to_normalised_names),
        T_(cc_includes_in_comments_and_strings_are_ignored),
        T_(cc_directive_spellings_with_comments_and_continuations),
        T_(cc_include_outside_root_is_not_a_dep_and_warns),
        T_(cc_deps_are_deduplicated_and_equal_blockers),
        T_(cc_analysis_hash_changes_with_blocker_hashes_only),
        T_(cc_artifact_compiles_to_tmp_path_under_profile_dir),
        T_(cc_depfile_parse_takes_every_prerequisite_unescaped),
        T_(cc_artifact_returns_the_compilers_own_deps),
        T_(cc_identity_follows_the_compilers_version),
        T_(cc_artifact_reports_compiler_warnings),
        T_(cc_compile_error_is_etool_with_compiler_message),
        T_(cc_missing_compiler_is_etool_with_cannot_run),
        T_(cc_cancellation_kills_a_running_compiler),
        T_(cc_timeout_kills_a_hung_compiler),
        T_(cc_header_artifact_produces_nothing),
        T_(cc_link_job_produces_runnable_binary_with_profile_flags),
        T_(cc_link_failure_is_etool_with_linker_message),
        T_(cc_concurrent_compiles_share_one_instance),
        T_(cc_create_validates_roots_and_include_dirs),
        T_(null_synthetic_graph_is_acyclic_and_deterministic),
        T_(null_synthetic_blockers_are_distinct),
        T_(null_names_outside_the_range_are_enoent),
        T_(null_parses_dep_and_blocker_lines_of_any_file),
        T_(null_forced_failure_is_etool_with_diag),
        T_(null_artifact_writes_nothing_and_keys_on_profile),
        T_(null_cost_burns_cpu_rather_than_sleeping),
        T_(null_cost_stops_when_cancelled),
#undef T_
        {NULL, NULL},
    };
    return vr_cu_main("plugins", tests);
}
