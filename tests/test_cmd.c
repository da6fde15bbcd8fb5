/*
 * test_cmd.c -- the `cmd` executor through its descriptor, the way the
 * host calls it, with the mock host of tests/mock_host.h (a context
 * collecting diagnostics, with a cancellation flag; a configuration table
 * filling the schema's defaults), and its parts alone: the depfile parser, the templates.
 *
 * The Artifact tests run examples/text/txtc (a small text "compiler", a
 * shell script) and /bin/sh for real; the cancellation and timeout tests
 * use a script that blocks in sleep.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include <vsched/plugin.h>

#include "../plugins/cmd/cmd.h"
#include "cu.h"
#include "mock_host.h"

const vsched_plugin *cmd_LTX_vsched_plugin_entry(void);

/* ---- instances ------------------------------------------------------------ */

static const vsched_plugin *CMD;

/* Every instance's configuration lives until the end of the test. */
static mock_cfg CFGS[8];
static int n_cfgs;

/* create() over `root` (D/root; out_dir D/out) with `more`; *errmsg
 * receives a failure's message. */
static int make(const char *root, const mock_kv *more, void **inst,
                char **errmsg)
{
    static char out[8][4096];
    mock_cfg *t = &CFGS[n_cfgs % 8];
    const char *slash = strrchr(root, '/');
    snprintf(out[n_cfgs % 8], sizeof out[0], "%.*s/out",
             (int)(slash != NULL ? slash - root : 0), root);
    n_cfgs++;
    CMD = cmd_LTX_vsched_plugin_entry();
    mock_cfg_init(t, CMD, "executor", root, NULL);
    mock_cfg_add(t, "loader", "root", root);
    mock_cfg_add(t, "executor", "out_dir", out[(n_cfgs - 1) % 8]);
    for (; more != NULL && more->section != NULL; more++)
        mock_cfg_add(t, more->section, more->key, more->value);
    *inst = NULL;
    *errmsg = NULL;
    return CMD->create(mock_ctx(), &t->cfg, inst, errmsg);
}

/* An instance that must be created. */
static void *cmd_make(const char *root, const mock_kv *more)
{
    void *inst;
    char *err;
    int rc = make(root, more, &inst, &err);
    if (rc != VSCHED_OK)
        fprintf(stderr, "\n  cmd create: %s\n", err ? err : "?");
    EXPECT_INT(rc, VSCHED_OK);
    free(err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(inst);
    return inst;
}

/* The create() failure message with `more`. */
static char *make_error(const char *root, const mock_kv *more)
{
    void *inst;
    char *err;
    EXPECT_INT(make(root, more, &inst, &err), VSCHED_ECONFIG);
    CU_ASSERT_PTR_NULL(inst);
    if (inst != NULL)
        CMD->destroy(inst);
    CU_ASSERT_PTR_NOT_NULL(err);
    return err;
}

/* ---- files ---------------------------------------------------------------- */

/* A temp dir D with the source root D/root; returns D/root. */
static char *tree(char **top)
{
    *top = mock_tmpdir("cmd");
    char *root;
    CU_ASSERT_FATAL(asprintf(&root, "%s/root", *top) > 0);
    mkdir(root, 0777);
    return root;
}

/* The content of dir/rel (malloc), or NULL. */
static char *get(const char *dir, const char *rel)
{
    char *p = mock_path2(dir, rel);
    FILE *f = fopen(p, "r");
    free(p);
    if (f == NULL)
        return NULL;
    char *buf = calloc(1, 1 << 16);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* The text compiler of examples/text. */
static char *txtc(void)
{
    const char *top = getenv("top_srcdir");
    char *p = mock_path2(top != NULL ? top : ".", "examples/text/txtc");
    char *abs = realpath(p, NULL);
    free(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(abs);
    return abs;
}

/* ---- executor helpers ------------------------------------------------------ */

/* Words of a list joined by ' ' (malloc); frees the list (ctx->free). */
static char *joined(char **v, size_t n)
{
    char *out = calloc(1, 1);
    for (size_t i = 0; i < n; i++) {
        char *j;
        CU_ASSERT_FATAL(asprintf(&j, "%s%s%s", out, *out ? " " : "", v[i]) >
                        0);
        free(out);
        free(v[i]);
        out = j;
    }
    free(v);
    return out;
}

/* Source + extract_deps of root/name (read from disk); the deps joined,
 * with the blockers checked equal to them. *hash gets the content hash. */
static char *deps_of(void *inst, const char *root, const char *name,
                     int *rc_out)
{
    char *text = get(root, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    vsched_source_out so = {0};
    vsched_deps_out d = {0};
    int rc = CMD->executor->source(inst, &MOCK.ctx, name, "other", text,
                                   strlen(text), &so);
    if (rc_out != NULL)
        *rc_out = rc;
    if (rc != VSCHED_OK) {
        free(text);
        return NULL;
    }
    EXPECT_INT(so.content_hash, XXH3_64bits(text, strlen(text)));
    free(text);
    EXPECT_INT(
        CMD->executor->extract_deps(inst, &MOCK.ctx, name, so.snapshot, &d),
        VSCHED_OK);
    CMD->executor->snapshot_free(inst, so.snapshot);
    EXPECT_INT(d.n_deps, d.n_blockers);
    char *deps = joined(d.deps, d.n_deps);
    char *blockers = joined(d.blockers, d.n_blockers);
    EXPECT_STR(blockers, deps);
    free(blockers);
    return deps;
}

/* Source, then Artifact of root/name for `profile`; the host's part
 * (publishing tmp_path by rename) is left to the caller. */
static int build(void *inst, const char *root, const char *name,
                 const char *profile, vsched_artifact_out *o)
{
    char *text = get(root, name);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    vsched_source_out so = {0};
    int rc = CMD->executor->source(inst, &MOCK.ctx, name, "other", text,
                                   strlen(text), &so);
    free(text);
    memset(o, 0xAB, sizeof *o);
    if (rc != VSCHED_OK) {
        memset(o, 0, sizeof *o);
        return rc;
    }
    vsched_artifact_in in = {
        name, profile, so.snapshot, 42, sizeof(vsched_artifact_in), NULL, 0};
    rc = CMD->executor->artifact(inst, &MOCK.ctx, &in, o);
    CMD->executor->snapshot_free(inst, so.snapshot);
    return rc;
}

static void out_free(vsched_artifact_out *o)
{
    free(o->path);
    free(o->tmp_path);
    for (size_t i = 0; i < o->n_deps; i++)
        free(o->deps[i]);
    free(o->deps);
    memset(o, 0, sizeof *o);
}

/* The bytes the artifact wrote (at its tmp path), malloc. */
static char *artifact_text(const vsched_artifact_out *o)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(o->tmp_path);
    return get("", o->tmp_path + 1); /* get() joins "" + "/" + rest */
}

/* ---- the descriptor --------------------------------------------------------- */

static void descriptor_declares_abi_role_thread_safety_and_identity(void)
{
    const vsched_plugin *d = cmd_LTX_vsched_plugin_entry();
    EXPECT_STR(d->name, "cmd");
    EXPECT_INT(d->abi_major, VSCHED_PLUGIN_ABI_MAJOR);
    EXPECT_INT(d->abi_minor, VSCHED_PLUGIN_ABI_MINOR);
    EXPECT_INT(d->size, sizeof(vsched_plugin));
    EXPECT_INT(d->roles, VSCHED_ROLE_EXECUTOR);
    EXPECT_INT(d->flags & VSCHED_PLUGIN_THREAD_SAFE,
               VSCHED_PLUGIN_THREAD_SAFE);
    EXPECT_INT(d->executor->size, sizeof(vsched_executor_ops));
    CU_ASSERT_PTR_NOT_NULL(d->executor->identity);
    CU_ASSERT_PTR_NULL(d->executor->job);
    for (size_t i = 0; i < d->n_schema; i++) {
        CU_ASSERT_PTR_NOT_NULL(d->schema[i].help);
        int required = (d->schema[i].flags & VSCHED_KEY_REQUIRED) != 0;
        EXPECT_INT(required, d->schema[i].dflt == NULL &&
                                 strcmp(d->schema[i].name, "source_root"));
    }
}

/* Every key but the templates and the regex is a placeholder; LIST keys
 * expand to words, per-profile keys only where there is a profile. */
static void placeholders_are_the_fixed_names_and_the_schema_keys(void)
{
    const vsched_plugin *d = cmd_LTX_vsched_plugin_entry();
    static const char *const fixed[] = {"in",      "out",     "name",
                                        "profile", "depfile", "root"};
    for (int i = 0; i < CMD_PH_FIXED; i++)
        EXPECT_STR(cmd__placeholders[i].name, fixed[i]);
    size_t keys = 0;
    for (size_t i = 0; i < d->n_schema; i++) {
        const vsched_key *k = &d->schema[i];
        if (!strcmp(k->name, "artifact") || !strcmp(k->name, "scan") ||
            !strcmp(k->name, "dep_regex"))
            continue;
        size_t j = CMD_PH_FIXED;
        while (j < cmd__n_placeholders &&
               strcmp(cmd__placeholders[j].name, k->name) != 0)
            j++;
        CU_ASSERT_TRUE_FATAL(j < cmd__n_placeholders);
        EXPECT_INT((cmd__placeholders[j].flags & CMD_PH_LIST) != 0,
                   k->type == VSCHED_KEY_LIST);
        EXPECT_INT((cmd__placeholders[j].flags & CMD_PH_ARTIFACT) != 0,
                   (k->flags & VSCHED_KEY_PER_PROFILE) != 0);
        keys++;
    }
    EXPECT_INT(keys + CMD_PH_FIXED, cmd__n_placeholders);
}

/* ---- depfile parser ------------------------------------------------------- */

/* The prerequisites of `text`, joined by '|'. */
static char *prereqs(const char *text)
{
    char **v = NULL;
    size_t n = 0;
    EXPECT_INT(cmd__depfile_parse(text, strlen(text), &v, &n), VSCHED_OK);
    char *out = calloc(1, 1);
    for (size_t i = 0; i < n; i++) {
        char *j;
        CU_ASSERT_FATAL(asprintf(&j, "%s%s%s", out, i ? "|" : "", v[i]) > 0);
        free(out);
        out = j;
    }
    cmd__strv_free(v, n);
    return out;
}

#define EXPECT_PREREQS(text, want)                                            \
    do {                                                                      \
        char *got_ = prereqs(text);                                           \
        EXPECT_STR(got_, want);                                               \
        free(got_);                                                           \
    } while (0)

static void depfile_unescapes_spaces_hashes_and_dollars(void)
{
    EXPECT_PREREQS("out.o: a\\ b.txt c\\#d.txt e$$f.txt\n",
                   "a b.txt|c#d.txt|e$f.txt");
    EXPECT_PREREQS("t: two\\ \\ spaces tab\\\tname\n",
                   "two  spaces|tab\tname");
    /* gcc doubles the backslashes before an escaped space */
    EXPECT_PREREQS("t: back\\\\\\ slash\n", "back\\ slash");
    /* an even run before a space is literal backslashes, then a break */
    EXPECT_PREREQS("t: even\\\\ next\n", "even\\|next");
    /* any other backslash is literal: Windows-style names survive */
    EXPECT_PREREQS("t: C:\\dir\\x.h a\\b\n", "C:\\dir\\x.h|a\\b");
    EXPECT_PREREQS("t: lone$ $$$$\n", "lone$|$$");
}

static void depfile_continuations_join_lines(void)
{
    EXPECT_PREREQS("out: a \\\n  b \\\n\tc\n", "a|b|c");
    EXPECT_PREREQS("out: a\\\nb\n", "a|b"); /* a continuation is a blank */
    EXPECT_PREREQS("out: a \\\r\n b\r\n", "a|b");
    EXPECT_PREREQS("out: \\\n\\\n a\n", "a");
    EXPECT_PREREQS("out \\\n : x\n", "x"); /* the colon after a break */
    EXPECT_PREREQS("out: a", "a");         /* no final newline */
}

static void depfile_several_targets_and_rules_give_every_prerequisite(void)
{
    EXPECT_PREREQS("a.o b.o: x.h y.h\n", "x.h|y.h");
    /* -MP style empty rules, and a second rule */
    EXPECT_PREREQS("main.o: main.c x.h\nx.h:\n\nother.o : o.c\n",
                   "main.c|x.h|o.c");
    EXPECT_PREREQS("t:: dbl\n", "dbl");
    /* a colon inside a prerequisite or a target is part of the name */
    EXPECT_PREREQS("C:\\out.o: c:x y\n", "c:x|y");
    /* a line without a colon names no prerequisite */
    EXPECT_PREREQS("garbage words\nt: z\n", "z");
    EXPECT_PREREQS("", "");
    EXPECT_PREREQS("t:\n", "");
}

static void depfile_comments_and_order_only_separator(void)
{
    EXPECT_PREREQS("# a comment: x\nt: a # b c\n", "a");
    EXPECT_PREREQS("t: a\\#b\n", "a#b");
    EXPECT_PREREQS("t: a | order\n", "a|order");
    EXPECT_PREREQS("t: a|b\n", "a|b"); /* a name with a bar: one word */
}

static void depfile_names_are_existing_files_under_the_root(void)
{
    char *top, *root = tree(&top);
    mock_put(root, "a.txt", "");
    mock_put(root, "dir/b c.txt", "");
    mock_put(top, "outside.txt", "");
    void *cmd = cmd_make(root, (mock_kv[]){{"executor", "artifact", "true"},
                                           {NULL, NULL, NULL}});
    char *abs_b = mock_path2(root, "dir/b c.txt"),
         *out = mock_path2(top, "outside.txt");
    char *paths[] = {"a.txt",  abs_b,      "./dir/../a.txt", out,
                     "gone.x", "self.txt", "dir/b c.txt"};
    char **names = NULL;
    size_t n = 0;
    EXPECT_INT(
        cmd__depfile_names(cmd, mock_ctx(), "self.txt", paths, 7, &names, &n),
        VSCHED_OK);
    char *j = joined(names, n);
    EXPECT_STR(j, "a.txt dir/b c.txt");
    free(j);
    EXPECT_INT(
        cmd__depfile_names(cmd, &MOCK.ctx, "a.txt", paths, 1, &names, &n),
        VSCHED_OK);
    CU_ASSERT_PTR_NULL(names);
    EXPECT_INT(n, 0);
    CMD->destroy(cmd);
    free(abs_b), free(out), free(root);
    mock_rm_rf(top);
}

/* ---- templates -------------------------------------------------------------- */

/* Expand `text` (argv form) with the given values; the words joined by
 * '|', or the parse error. */
static char *expand(const char *text, int shell, const char *const *vals)
{
    cmd_tpl t;
    char why[1024], **argv = NULL;
    int rc = cmd__tpl_parse(text, shell, 0, &t, why, sizeof why);
    if (rc != VSCHED_OK)
        return strdup(why);
    EXPECT_INT(cmd__tpl_expand(&t, vals, &argv), VSCHED_OK);
    cmd__tpl_free(&t);
    char *out = calloc(1, 1);
    for (size_t i = 0; argv != NULL && argv[i] != NULL; i++) {
        char *j;
        CU_ASSERT_FATAL(asprintf(&j, "%s%s%s", out, i ? "|" : "", argv[i]) >
                        0);
        free(out);
        out = j;
    }
    cmd__argv_free(argv);
    return out;
}

#define EXPECT_EXPANDS(text, shell, vals, want)                               \
    do {                                                                      \
        char *got_ = expand(text, shell, vals);                               \
        EXPECT_STR(got_, want);                                               \
        free(got_);                                                           \
    } while (0)

static const char *V[CMD_PH_COUNT];

static void values(void)
{
    memset(V, 0, sizeof V);
    V[CMD_PH_IN] = "/r/my file;$(x).txt";
    V[CMD_PH_OUT] = "/o/out 1.tmp";
    V[CMD_PH_NAME] = "my file;$(x).txt";
    V[CMD_PH_PROFILE] = "release";
    V[CMD_PH_TOOL] = "/bin/txtc";
    V[CMD_PH_FLAGS] = "  -D A=1   -q ";
    V[CMD_PH_INCLUDE_DIRS] = "inc lib/x";
}

static void template_values_stay_one_word_whatever_they_hold(void)
{
    values();
    EXPECT_EXPANDS("{tool} -o {out} {in}", 0, V,
                   "/bin/txtc|-o|/o/out 1.tmp|/r/my file;$(x).txt");
    EXPECT_EXPANDS("  cp\t{in}   {out}  ", 0, V,
                   "cp|/r/my file;$(x).txt|/o/out 1.tmp");
    EXPECT_EXPANDS("--name={name} x{profile}y", 0, V,
                   "--name=my file;$(x).txt|xreleasey");
    /* quotes group words and disappear; an empty pair is an empty word */
    EXPECT_EXPANDS("echo 'a b' \"c {profile}\" '' x'y'z", 0, V,
                   "echo|a b|c release||xyz");
    EXPECT_EXPANDS("echo {{literal}} {{{profile}}}", 0, V,
                   "echo|{literal}|{release}");
    EXPECT_EXPANDS("echo {depfile}", 0, V, "echo|"); /* unset: empty */
}

static void template_list_values_expand_to_one_word_each(void)
{
    values();
    EXPECT_EXPANDS("cc {flags} x", 0, V, "cc|-D|A=1|-q|x");
    EXPECT_EXPANDS("cc -I{include_dirs} x", 0, V, "cc|-Iinc|-Ilib/x|x");
    EXPECT_EXPANDS("cc --dir={include_dirs}/ x", 0, V,
                   "cc|--dir=inc/|--dir=lib/x/|x");
    V[CMD_PH_FLAGS] = "";
    V[CMD_PH_INCLUDE_DIRS] = " ";
    EXPECT_EXPANDS("cc {flags} -I{include_dirs} x", 0, V, "cc|x");
}

static void template_shell_form_quotes_every_value(void)
{
    values();
    EXPECT_EXPANDS("cat {in} > {out}", 1, V,
                   "/bin/sh|-c|cat '/r/my file;$(x).txt' > '/o/out 1.tmp'");
    EXPECT_EXPANDS("x {flags} 'as is' {{}}", 1, V,
                   "/bin/sh|-c|x '-D' 'A=1' '-q' 'as is' {}");
    V[CMD_PH_NAME] = "it's";
    EXPECT_EXPANDS("echo {name}", 1, V, "/bin/sh|-c|echo 'it'\\''s'");
    /* and the shell reads the value back unchanged */
    cmd_tpl t;
    char why[256], **argv = NULL;
    V[CMD_PH_NAME] = "a 'b' \"c\" $d `e` \\f";
    EXPECT_INT(cmd__tpl_parse("printf %s {name}", 1, 0, &t, why, sizeof why),
               VSCHED_OK);
    EXPECT_INT(cmd__tpl_expand(&t, V, &argv), VSCHED_OK);
    char line[512];
    setenv("CMD_TEST_SCRIPT", argv[2], 1);
    FILE *f = popen("/bin/sh -c \"$CMD_TEST_SCRIPT\"", "r");
    size_t n = f != NULL ? fread(line, 1, sizeof line - 1, f) : 0;
    line[n] = '\0';
    if (f != NULL)
        pclose(f);
    EXPECT_STR(line, V[CMD_PH_NAME]);
    cmd__argv_free(argv);
    cmd__tpl_free(&t);
}

/* The parse error of `text`. */
static char *parse_error(const char *text, int shell, unsigned forbid)
{
    cmd_tpl t;
    char why[1024];
    int rc = cmd__tpl_parse(text, shell, forbid, &t, why, sizeof why);
    EXPECT_INT(rc, VSCHED_ECONFIG);
    if (rc == VSCHED_OK) {
        cmd__tpl_free(&t);
        return strdup("(parsed)");
    }
    return strdup(why);
}

#define EXPECT_PARSE_ERROR(text, shell, forbid, want)                         \
    do {                                                                      \
        char *got_ = parse_error(text, shell, forbid);                        \
        EXPECT_CONTAINS(got_, want);                                          \
        free(got_);                                                           \
    } while (0)

static void template_errors_name_the_mistake_and_its_column(void)
{
    EXPECT_PARSE_ERROR("{tool} {nme} {in}", 0, 0,
                       "unknown placeholder '{nme}' at column 8 (known: "
                       "{in}, {out}, {name}, {profile}, {depfile}, {root}, "
                       "{tool}, {flags}");
    EXPECT_PARSE_ERROR("cp {in {out}", 0, 0, "'{' at column 4 is not closed");
    EXPECT_PARSE_ERROR("cp {in", 0, 0, "'{' at column 4 is not closed");
    EXPECT_PARSE_ERROR("cp in} x", 0, 0, "'}' at column 6 has no '{'");
    EXPECT_PARSE_ERROR("cp {} x", 0, 0, "empty placeholder '{}' at column 4");
    EXPECT_PARSE_ERROR("echo 'a b", 0, 0,
                       "the single quote at column 6 is not closed");
    EXPECT_PARSE_ERROR("echo \"a", 0, 0,
                       "the double quote at column 6 is not closed");
    EXPECT_PARSE_ERROR("cc -I{include_dirs}{flags}", 0, 0,
                       "two list placeholders in one word at column 20 "
                       "('{include_dirs}' and '{flags}')");
    EXPECT_PARSE_ERROR("  \t ", 0, 0, "the template has no word to run");
    EXPECT_PARSE_ERROR("   ", 1, 0, "the template has no word to run");
    EXPECT_PARSE_ERROR("scan {in} -o {out}", 0, CMD_PH_ARTIFACT,
                       "placeholder '{out}' at column 14 has no value here");
    EXPECT_PARSE_ERROR("scan {flags} {in}", 0, CMD_PH_ARTIFACT,
                       "placeholder '{flags}' at column 6");
    EXPECT_PARSE_ERROR("echo {bad} 'ok", 1, 0, "unknown placeholder '{bad}'");
    /* in the shell form quotes are the shell's, and a list may share a
     * word with another */
    char *ok = expand("echo 'x {flags}{include_dirs}", 1, V);
    EXPECT_CONTAINS(ok, "/bin/sh|-c|echo 'x ");
    free(ok);
}

/* ---- create ------------------------------------------------------------------ */

static void create_rejects_bad_configuration_naming_the_key(void)
{
    char *top, *root = tree(&top), *err;
    err = make_error(root, (mock_kv[]){{"executor", "artifact", "x {nme}"},
                                       {NULL, NULL, NULL}});
    EXPECT_STR(err, "[executor] artifact: unknown placeholder '{nme}' at "
                    "column 3 (known: {in}, {out}, {name}, {profile}, "
                    "{depfile}, {root}, {tool}, {flags}, {include_dirs}, "
                    "{out_dir}, {out_suffix}, {shell}, {timeout}, "
                    "{source_root})");
    free(err);
    err = make_error(root, (mock_kv[]){{"executor", "artifact", "{tool} {in}"},
                                       {NULL, NULL, NULL}});
    EXPECT_STR(err, "[executor] artifact: runs {tool}, but tool is not set");
    free(err);
    err = make_error(root, (mock_kv[]){{"executor", "artifact", "x"},
                                       {"executor", "scan", "{tool} {in}"},
                                       {NULL, NULL, NULL}});
    EXPECT_STR(err, "[executor] scan: runs {tool}, but tool is not set");
    free(err);
    err = make_error(
        root, (mock_kv[]){{"executor", "artifact", ""}, {NULL, NULL, NULL}});
    EXPECT_STR(err, "[executor] artifact: the template is empty");
    free(err);
    err = make_error(root,
                     (mock_kv[]){{"executor", "artifact", "x"},
                                 {"executor", "scan", "dep {in} {profile}"},
                                 {NULL, NULL, NULL}});
    EXPECT_CONTAINS(err, "[executor] scan: placeholder '{profile}' at "
                         "column 10 has no value here");
    free(err);
    err = make_error(root,
                     (mock_kv[]){{"executor", "artifact", "x"},
                                 {"executor", "dep_regex", "^@include \"x\""},
                                 {NULL, NULL, NULL}});
    EXPECT_CONTAINS(err,
                    "[executor] dep_regex: '^@include \"x\"' has no group");
    free(err);
    err = make_error(root, (mock_kv[]){{"executor", "artifact", "x"},
                                       {"executor", "dep_regex", "a(b"},
                                       {NULL, NULL, NULL}});
    EXPECT_CONTAINS(err, "[executor] dep_regex: 'a(b': ");
    free(err);
    err = make_error(root, (mock_kv[]){{"executor", "artifact", "x"},
                                       {"executor", "out_suffix", ".d/x"},
                                       {NULL, NULL, NULL}});
    EXPECT_CONTAINS(err, "[executor] out_suffix: '.d/x' has a '/'");
    free(err);
    err =
        make_error(root, (mock_kv[]){{"executor", "artifact", "x"},
                                     {"executor", "include_dirs", "inc ../up"},
                                     {NULL, NULL, NULL}});
    EXPECT_STR(err, "[executor] include_dirs: '../up' is not inside the "
                    "source root");
    free(err);
    err = make_error(root,
                     (mock_kv[]){{"executor", "artifact", "x"},
                                 {"executor", "source_root", "/no/such/dir"},
                                 {NULL, NULL, NULL}});
    EXPECT_STR(err, "[executor] source_root: '/no/such/dir': No such file "
                    "or directory");
    free(err);
    free(root);
    mock_rm_rf(top);
}

/* ---- Source: dep_regex and scan ---------------------------------------------- */

static const char *const INCLUDE_RE = "^@include \"([^\"]+)\"";

static void regex_deps_resolve_beside_the_file_then_include_dirs(void)
{
    char *top, *root = tree(&top);
    mock_put(root, "doc/main.txt",
             "@include \"part.txt\"\n"          /* beside it */
             "@include \"common.txt\"\r\n"      /* in inc/, CRLF line */
             "@include \"lib.txt\"\n"           /* in lib/ (second dir) */
             "@include \"sub/deep.txt\"\n"      /* a path beside it */
             "@include \"missing.txt\"\n"       /* nowhere: dropped */
             "@include \"../../outside.txt\"\n" /* outside the root */
             "@include \"main.txt\"\n"          /* itself */
             "  @include \"indented.txt\"\n"    /* not at a line start */
             "text @include \"part.txt\"\n"
             "@include \"part.txt\"\n"); /* a duplicate */
    mock_put(root, "doc/part.txt", "");
    mock_put(root, "doc/sub/deep.txt", "");
    mock_put(root, "inc/common.txt", "");
    mock_put(root, "inc/part.txt", ""); /* shadowed by doc/part.txt */
    mock_put(root, "lib/lib.txt", "");
    mock_put(root, "doc/indented.txt", "");
    mock_put(top, "outside.txt", "");
    void *cmd =
        cmd_make(root, (mock_kv[]){{"executor", "artifact", "true"},
                                   {"executor", "dep_regex", INCLUDE_RE},
                                   {"executor", "include_dirs", "inc lib"},
                                   {NULL, NULL, NULL}});
    mock_ctx();
    char *deps = deps_of(cmd, root, "doc/main.txt", NULL);
    EXPECT_STR(deps, "doc/part.txt inc/common.txt lib/lib.txt "
                     "doc/sub/deep.txt");
    EXPECT_INT(MOCK.n_warn, 1);
    EXPECT_CONTAINS(MOCK.diag,
                    "doc/main.txt:6: warning: dependency "
                    "'../../outside.txt' resolves outside the source "
                    "root");
    free(deps);
    CMD->destroy(cmd);
    /* without a regex there is no dependency */
    cmd = cmd_make(root, (mock_kv[]){{"executor", "artifact", "true"},
                                     {NULL, NULL, NULL}});
    deps = deps_of(cmd, root, "doc/main.txt", NULL);
    EXPECT_STR(deps, "");
    free(deps);
    CMD->destroy(cmd);
    free(root);
    mock_rm_rf(top);
}

static void regex_matches_every_occurrence_on_a_line(void)
{
    char *top, *root = tree(&top);
    mock_put(root, "a.txt", "uses [b.txt] and [c.txt]; [] [d.txt\n[b.txt]\n");
    mock_put(root, "b.txt", "");
    mock_put(root, "c.txt", "");
    void *cmd =
        cmd_make(root, (mock_kv[]){{"executor", "artifact", "true"},
                                   {"executor", "dep_regex", "\\[([^]]*)\\]"},
                                   {NULL, NULL, NULL}});
    mock_ctx();
    char *deps = deps_of(cmd, root, "a.txt", NULL);
    EXPECT_STR(deps, "b.txt c.txt");
    free(deps);
    CMD->destroy(cmd);
    free(root);
    mock_rm_rf(top);
}

static void scan_command_reports_deps_through_depfile_or_stdout(void)
{
    char *top, *root = tree(&top);
    mock_put(root, "a.txt", "");
    mock_put(root, "b c.txt", "");
    mock_put(root, "d.txt", "");
    /* stdout: a make rule, names relative to the root (the tool's cwd) */
    void *cmd = cmd_make(
        root, (mock_kv[]){
                  {"executor", "artifact", "true"},
                  {"executor", "scan",
                   "printf '%s: b\\\\ c.txt \\\\\\n ./d.txt gone\\n' {name}"},
                  {NULL, NULL, NULL}});
    mock_ctx();
    char *deps = deps_of(cmd, root, "a.txt", NULL);
    EXPECT_STR(deps, "b c.txt d.txt");
    free(deps);
    CMD->destroy(cmd);
    /* {depfile}: the rule is read from there, and the file removed */
    cmd = cmd_make(
        root,
        (mock_kv[]){
            {"executor", "artifact", "true"},
            {"executor", "scan",
             "sh -c 'printf \"x: d.txt a.txt\\n\" >\"$1\"; echo chatter' sh "
             "{depfile}"},
            {NULL, NULL, NULL}});
    mock_ctx();
    deps = deps_of(cmd, root, "a.txt", NULL);
    EXPECT_STR(deps, "d.txt");
    free(deps);
    char *out = mock_path2(top, "out");
    EXPECT_INT(mock_count_named(out, ".scan."), 0);
    free(out);
    CMD->destroy(cmd);
    /* a failing scan fails the Source stage with the tool's message */
    cmd = cmd_make(
        root, (mock_kv[]){{"executor", "artifact", "true"},
                          {"executor", "scan",
                           "sh -c 'echo no deps for $0 >&2; exit 3' {name}"},
                          {NULL, NULL, NULL}});
    mock_ctx();
    int rc = 0;
    CU_ASSERT_PTR_NULL(deps_of(cmd, root, "a.txt", &rc));
    EXPECT_INT(rc, VSCHED_ETOOL);
    EXPECT_CONTAINS(MOCK.diag, "a.txt:0: error: no deps for a.txt");
    EXPECT_CONTAINS(MOCK.diag, "'sh' exited with status 3");
    CMD->destroy(cmd);
    free(root);
    mock_rm_rf(top);
}

/* ---- Analysis ------------------------------------------------------------------- */

static uint64_t analysis(void *cmd, uint64_t content, const uint64_t *b,
                         size_t n)
{
    vsched_analysis_in in = {
        "a.txt", NULL, content, b, n, sizeof(vsched_analysis_in), NULL};
    uint64_t h = 0;
    EXPECT_INT(CMD->executor->analysis(cmd, mock_ctx(), &in, &h), VSCHED_OK);
    return h;
}

static void analysis_hash_folds_content_blockers_and_templates(void)
{
    char *top, *root = tree(&top);
    mock_kv one[] = {{"executor", "artifact", "tool -o {out} {in}"},
                     {NULL, NULL, NULL}};
    mock_kv two[] = {{"executor", "artifact", "tool -O {out} {in}"},
                     {NULL, NULL, NULL}};
    mock_kv three[] = {{"executor", "artifact", "tool -o {out} {in}"},
                       {"executor", "include_dirs", "x"},
                       {NULL, NULL, NULL}};
    void *a = cmd_make(root, one), *a2 = cmd_make(root, one),
         *b = cmd_make(root, two), *c = cmd_make(root, three);
    uint64_t bl[] = {1, 2}, bl2[] = {1, 3};
    uint64_t h = analysis(a, 7, bl, 2);
    EXPECT_INT(analysis(a2, 7, bl, 2), h);         /* same config: same hash */
    CU_ASSERT_NOT_EQUAL(analysis(a, 8, bl, 2), h); /* content */
    CU_ASSERT_NOT_EQUAL(analysis(a, 7, bl2, 2), h); /* a blocker */
    CU_ASSERT_NOT_EQUAL(analysis(a, 7, bl, 1), h);
    CU_ASSERT_NOT_EQUAL(analysis(b, 7, bl, 2), h); /* the command */
    CU_ASSERT_NOT_EQUAL(analysis(c, 7, bl, 2), h); /* a key it uses */
    CMD->destroy(a), CMD->destroy(a2), CMD->destroy(b), CMD->destroy(c);
    free(root);
    mock_rm_rf(top);
}

/* ---- Artifact ----------------------------------------------------------------- */

/* The txtc tree: a page including a part beside it and one through the
 * include dirs, which includes one more (found only by the depfile: the
 * regex below does not see the indented include). */
static void txt_tree(const char *root)
{
    mock_put(root, "pages/my page.txt",
             "Hello @WHO@.\n@include \"part.txt\"\n@include "
             "\"common.txt\"\nEnd.\n");
    mock_put(root, "pages/part.txt", "part\n");
    mock_put(root, "inc/common.txt", "common\n@include \"deep $1.txt\"\n");
    mock_put(root, "inc/deep $1.txt", "deep #1\n");
}

static mock_kv *txt_config(const char *tool, const char *extra_key,
                           const char *extra_val)
{
    static mock_kv kv[10];
    int n = 0;
    kv[n++] = (mock_kv){"executor", "tool", tool};
    kv[n++] =
        (mock_kv){"executor", "artifact",
                  "{tool} {flags} -I{include_dirs} -o {out} -MF {depfile} "
                  "{in}"};
    kv[n++] = (mock_kv){"executor", "dep_regex", "^@include \"([^\"]+)\""};
    kv[n++] = (mock_kv){"executor", "include_dirs", "inc"};
    kv[n++] = (mock_kv){"executor", "out_suffix", ".out"};
    kv[n++] = (mock_kv){"executor", "flags", "-D WHO=world"};
    kv[n++] = (mock_kv){"profile.loud", "flags", "-D WHO=WORLD"};
    if (extra_key != NULL)
        kv[n++] = (mock_kv){"executor", extra_key, extra_val};
    kv[n] = (mock_kv){NULL, NULL, NULL};
    return kv;
}

static void artifact_runs_the_tool_into_a_temporary_beside_the_output(void)
{
    char *top, *root = tree(&top), *tool = txtc();
    txt_tree(root);
    void *cmd = cmd_make(root, txt_config(tool, NULL, NULL));
    vsched_artifact_out o;
    mock_ctx();
    EXPECT_INT(build(cmd, root, "pages/my page.txt", "release", &o),
               VSCHED_OK);
    char *want = mock_path2(top, "out/release/pages/my page.txt.out");
    EXPECT_STR(o.path, want);
    CU_ASSERT_TRUE(o.tmp_path != NULL &&
                   strncmp(o.tmp_path, want, strlen(want)) == 0 &&
                   strstr(o.tmp_path, ".tmp.") != NULL);
    char *text = artifact_text(&o);
    EXPECT_STR(text, "Hello world.\npart\ncommon\ndeep #1\nEnd.\n");
    free(text);
    CU_ASSERT_PTR_NULL(o.bytes);
    CU_ASSERT_NOT_EQUAL(o.artifact_hash, 0);
    /* what the tool read, from its depfile (with the include the regex
     * saw, and the one only the tool saw) */
    char *deps = joined(o.deps, o.n_deps);
    o.deps = NULL, o.n_deps = 0;
    EXPECT_STR(deps, "pages/part.txt inc/common.txt inc/deep $1.txt");
    free(deps);
    EXPECT_INT(MOCK.n_err, 0);
    char *outdir = mock_path2(top, "out");
    EXPECT_INT(mock_count_named(outdir, ".d"), 0); /* the depfile is gone */
    unlink(o.tmp_path);
    out_free(&o);
    /* the profile's flags */
    EXPECT_INT(build(cmd, root, "pages/my page.txt", "loud", &o), VSCHED_OK);
    text = artifact_text(&o);
    EXPECT_STR(text, "Hello WORLD.\npart\ncommon\ndeep #1\nEnd.\n");
    free(text);
    unlink(o.tmp_path);
    out_free(&o);
    CMD->destroy(cmd);
    free(want), free(outdir), free(tool), free(root);
    mock_rm_rf(top);
}

static void artifact_without_out_takes_the_tools_stdout(void)
{
    char *top, *root = tree(&top);
    void *cmd =
        cmd_make(root, (mock_kv[]){{"executor", "artifact", "tac {in}"},
                                   {NULL, NULL, NULL}});
    mock_put(root, "a b.txt", "one\ntwo\n");
    vsched_artifact_out o;
    mock_ctx();
    EXPECT_INT(build(cmd, root, "a b.txt", "release", &o), VSCHED_OK);
    char *text = artifact_text(&o);
    EXPECT_STR(text, "two\none\n");
    free(text);
    CU_ASSERT_PTR_NULL(o.deps);
    unlink(o.tmp_path);
    out_free(&o);
    CMD->destroy(cmd);
    free(root);
    mock_rm_rf(top);
}

/* 1 when no file PWNED or PWNED2 was made (in the tool's cwd, `root`,
 * or ours). */
static int no_pwned(const char *root)
{
    char *a = mock_path2(root, "PWNED"), *b = mock_path2(root, "PWNED2");
    int none = access(a, F_OK) != 0 && access(b, F_OK) != 0 &&
               access("PWNED", F_OK) != 0 && access("PWNED2", F_OK) != 0;
    free(a), free(b);
    return none;
}

static void artifact_names_with_metacharacters_are_never_a_shell(void)
{
    char *top, *root = tree(&top);
    const char *name = "x $(touch PWNED) `touch PWNED2`; 'q' \"d\" *.txt";
    mock_put(root, name, "payload\n");
    void *cmd =
        cmd_make(root, (mock_kv[]){{"executor", "artifact", "cp {in} {out}"},
                                   {NULL, NULL, NULL}});
    vsched_artifact_out o;
    mock_ctx();
    EXPECT_INT(build(cmd, root, name, "release", &o), VSCHED_OK);
    char *text = artifact_text(&o);
    EXPECT_STR(text, "payload\n");
    free(text);
    EXPECT_INT(no_pwned(root), 1);
    unlink(o.tmp_path);
    out_free(&o);
    CMD->destroy(cmd);
    /* the shell form quotes them for the shell */
    cmd = cmd_make(root, (mock_kv[]){{"executor", "artifact",
                                      "tr a-z A-Z < {in} > {out}"},
                                     {"executor", "shell", "true"},
                                     {NULL, NULL, NULL}});
    EXPECT_INT(build(cmd, root, name, "release", &o), VSCHED_OK);
    text = artifact_text(&o);
    EXPECT_STR(text, "PAYLOAD\n");
    free(text);
    EXPECT_INT(no_pwned(root), 1);
    unlink(o.tmp_path);
    out_free(&o);
    CMD->destroy(cmd);
    free(root);
    mock_rm_rf(top);
}

static void artifact_tool_failure_is_etool_with_its_stderr(void)
{
    char *top, *root = tree(&top), *tool = txtc();
    mock_put(root, "bad.txt", "fine\n@error broken on purpose\n");
    void *cmd = cmd_make(root, txt_config(tool, NULL, NULL));
    vsched_artifact_out o;
    mock_ctx();
    EXPECT_INT(build(cmd, root, "bad.txt", "release", &o), VSCHED_ETOOL);
    EXPECT_CONTAINS(MOCK.diag, "bad.txt:0: error: ");
    EXPECT_CONTAINS(MOCK.diag, "/root/bad.txt:2: error: broken on purpose\n");
    EXPECT_CONTAINS(MOCK.diag, "bad.txt:0: error: '");
    EXPECT_CONTAINS(MOCK.diag, "txtc' exited with status 1\n");
    EXPECT_CONTAINS(MOCK.diag, "bad.txt:0: note: command: ");
    EXPECT_CONTAINS(MOCK.diag, " -D WHO=world -Iinc -o /");
    CU_ASSERT_PTR_NULL(o.path);
    CU_ASSERT_PTR_NULL(o.tmp_path);
    char *outdir = mock_path2(top, "out");
    EXPECT_INT(mock_count_named(outdir, ".tmp."), 0); /* nothing left behind */
    CMD->destroy(cmd);
    /* a tool that succeeds without writing {out} */
    cmd = cmd_make(root, (mock_kv[]){{"executor", "artifact", "true {out}"},
                                     {NULL, NULL, NULL}});
    mock_ctx();
    EXPECT_INT(build(cmd, root, "bad.txt", "release", &o), VSCHED_ETOOL);
    EXPECT_CONTAINS(MOCK.diag,
                    "'true' succeeded but did not write its output");
    CMD->destroy(cmd);
    /* a tool that cannot be run */
    cmd = cmd_make(root, (mock_kv[]){{"executor", "artifact",
                                      "no-such-tool-xyz {in} {out}"},
                                     {NULL, NULL, NULL}});
    mock_ctx();
    EXPECT_INT(build(cmd, root, "bad.txt", "release", &o), VSCHED_ETOOL);
    EXPECT_CONTAINS(MOCK.diag,
                    "cannot run 'no-such-tool-xyz': No such file or "
                    "directory");
    EXPECT_INT(mock_count_named(outdir, ".tmp."), 0);
    CMD->destroy(cmd);
    free(outdir), free(tool), free(root);
    mock_rm_rf(top);
}

/* A tool that writes part of its output, starts a helper that ignores
 * SIGTERM (its pid in top/pid) and waits; "started" appears once it runs. */
static char *hung_tool(const char *top)
{
    char *p = mock_path2(top, "hung.sh"), *text;
    CU_ASSERT_FATAL(asprintf(&text,
                             "#!/bin/sh\n"
                             "echo partial > \"$1\"\n"
                             "sh -c 'trap \"\" TERM; sleep 30' &\n"
                             "echo $! > '%s/pid'\n"
                             ": > '%s/started'\n"
                             "trap '' TERM\n"
                             "sleep 30\n",
                             top, top) > 0);
    mock_put(top, "hung.sh", text);
    free(text);
    chmod(p, 0755);
    return p;
}

/* 1 once `pid` is gone or a zombie (killed; its reaper is not us). */
static int dead(pid_t pid)
{
    char path[64], stat[256] = "";
    for (int i = 0; i < 200; i++) {
        if (kill(pid, 0) != 0 && errno == ESRCH)
            return 1;
        snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
        FILE *f = fopen(path, "r");
        size_t n = f != NULL ? fread(stat, 1, sizeof stat - 1, f) : 0;
        if (f != NULL)
            fclose(f);
        stat[n] = '\0';
        const char *paren = strrchr(stat, ')');
        if (paren != NULL && paren[1] == ' ' && paren[2] == 'Z')
            return 1;
        usleep(10000);
    }
    return 0;
}

static pid_t read_pid(const char *top)
{
    char *text = get(top, "pid");
    pid_t pid = text != NULL ? (pid_t)atoi(text) : -1;
    free(text);
    return pid;
}

static void *cancel_when_started(void *arg)
{
    char *started = arg;
    for (int i = 0; i < 400 && access(started, F_OK) != 0; i++)
        usleep(10000);
    atomic_store(&MOCK.cancel, 1);
    return NULL;
}

static void artifact_cancellation_kills_the_group_and_removes_output(void)
{
    char *top, *root = tree(&top), *tool = hung_tool(top);
    char *started = mock_path2(top, "started"),
         *outdir = mock_path2(top, "out");
    mock_put(root, "slow.txt", "x\n");
    void *cmd =
        cmd_make(root, (mock_kv[]){{"executor", "tool", tool},
                                   {"executor", "artifact", "{tool} {out}"},
                                   {NULL, NULL, NULL}});
    vsched_artifact_out o;
    pthread_t th;
    mock_ctx();
    pthread_create(&th, NULL, cancel_when_started, started);
    time_t t0 = time(NULL);
    EXPECT_INT(build(cmd, root, "slow.txt", "release", &o), VSCHED_ECANCELLED);
    pthread_join(th, NULL);
    CU_ASSERT_TRUE(time(NULL) - t0 < 20); /* not the 30 s of the sleep */
    pid_t helper = read_pid(top);
    CU_ASSERT_TRUE(helper > 0);
    /* the helper ignored SIGTERM: the group's SIGKILL ended it */
    CU_ASSERT_TRUE(helper > 0 && dead(helper));
    CU_ASSERT_PTR_NULL(o.tmp_path);
    EXPECT_INT(mock_count_named(outdir, ".tmp."), 0);
    EXPECT_INT(MOCK.n_err, 0); /* a cancellation is not the tool's failure */
    CMD->destroy(cmd);
    free(tool), free(started), free(outdir), free(root);
    mock_rm_rf(top);
}

static void artifact_timeout_kills_a_hung_tool_and_fails_the_file(void)
{
    char *top, *root = tree(&top), *tool = hung_tool(top);
    char *outdir = mock_path2(top, "out");
    mock_put(root, "slow.txt", "x\n");
    void *cmd =
        cmd_make(root, (mock_kv[]){{"executor", "tool", tool},
                                   {"executor", "artifact", "{tool} {out}"},
                                   {"executor", "timeout", "1"},
                                   {NULL, NULL, NULL}});
    vsched_artifact_out o;
    mock_ctx();
    time_t t0 = time(NULL);
    EXPECT_INT(build(cmd, root, "slow.txt", "release", &o), VSCHED_ETIMEDOUT);
    CU_ASSERT_TRUE(time(NULL) - t0 < 10);
    EXPECT_CONTAINS(MOCK.diag, "hung.sh' timed out after 1 s and was killed");
    pid_t helper = read_pid(top);
    CU_ASSERT_TRUE(helper > 0 && dead(helper));
    EXPECT_INT(mock_count_named(outdir, ".tmp."), 0);
    CMD->destroy(cmd);
    free(tool), free(outdir), free(root);
    mock_rm_rf(top);
}

static void artifact_hash_follows_name_profile_and_its_flags(void)
{
    char *top, *root = tree(&top);
    mock_put(root, "a.txt", "a\n");
    mock_put(root, "b.txt", "b\n");
    mock_kv kv[] = {{"executor", "artifact", "cp {in} {out}"},
                    {"executor", "flags", "-x"},
                    {"profile.other", "flags", "-y"},
                    {NULL, NULL, NULL}};
    void *cmd = cmd_make(root, kv);
    vsched_artifact_out o;
    uint64_t h[4];
    const char *names[] = {"a.txt", "a.txt", "b.txt", "a.txt"};
    const char *profiles[] = {"release", "release", "release", "other"};
    for (int i = 0; i < 4; i++) {
        EXPECT_INT(build(cmd, root, names[i], profiles[i], &o), VSCHED_OK);
        h[i] = o.artifact_hash;
        unlink(o.tmp_path);
        out_free(&o);
    }
    EXPECT_INT(h[1], h[0]);
    CU_ASSERT_NOT_EQUAL(h[2], h[0]);
    CU_ASSERT_NOT_EQUAL(h[3], h[0]);
    CMD->destroy(cmd);
    /* only the profile's flags differ: only that profile's key does */
    kv[2].value = "-z";
    cmd = cmd_make(root, kv);
    EXPECT_INT(build(cmd, root, "a.txt", "release", &o), VSCHED_OK);
    EXPECT_INT(o.artifact_hash, h[0]);
    unlink(o.tmp_path);
    out_free(&o);
    EXPECT_INT(build(cmd, root, "a.txt", "other", &o), VSCHED_OK);
    CU_ASSERT_NOT_EQUAL(o.artifact_hash, h[3]);
    unlink(o.tmp_path);
    out_free(&o);
    CMD->destroy(cmd);
    free(root);
    mock_rm_rf(top);
}

static void identity_hashes_the_program_the_template_runs(void)
{
    char *top, *root = tree(&top);
    mock_put(top, "tool.sh", "#!/bin/sh\necho v1\n");
    char *tool = mock_path2(top, "tool.sh");
    chmod(tool, 0755);
    mock_kv kv[] = {{"executor", "tool", tool},
                    {"executor", "artifact", "{tool} {in} {out}"},
                    {NULL, NULL, NULL}};
    void *cmd = cmd_make(root, kv);
    uint64_t a = 0, b = 0, c = 0;
    EXPECT_INT(CMD->executor->identity(cmd, mock_ctx(), "release", &a),
               VSCHED_OK);
    EXPECT_INT(CMD->executor->identity(cmd, mock_ctx(), "debug", &b),
               VSCHED_OK);
    EXPECT_INT(b, a);
    mock_put(top, "tool.sh", "#!/bin/sh\necho v2\n");
    EXPECT_INT(CMD->executor->identity(cmd, mock_ctx(), "release", &c),
               VSCHED_OK);
    CU_ASSERT_NOT_EQUAL(c, a);
    CMD->destroy(cmd);
    /* a program that is not there: known by its name, not a failure */
    mock_kv missing[] = {{"executor", "artifact", "no-such-tool-xyz {in}"},
                         {NULL, NULL, NULL}};
    cmd = cmd_make(root, missing);
    EXPECT_INT(CMD->executor->identity(cmd, mock_ctx(), "release", &a),
               VSCHED_OK);
    EXPECT_INT(CMD->executor->identity(cmd, mock_ctx(), "release", &b),
               VSCHED_OK);
    EXPECT_INT(b, a);
    CMD->destroy(cmd);
    free(tool), free(root);
    mock_rm_rf(top);
}

/* Several threads building through one instance. */
typedef struct par_arg {
    void *cmd;
    const char *root;
    int index, failures;
} par_arg;

static void *par_build(void *arg)
{
    par_arg *a = arg;
    for (int i = 0; i < 6; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%d.txt", (a->index * 6 + i) % 12);
        char *text = get(a->root, name);
        vsched_source_out so = {0};
        vsched_artifact_out o = {0};
        if (CMD->executor->source(a->cmd, &MOCK.ctx, name, "other", text,
                                  strlen(text), &so) != VSCHED_OK) {
            a->failures++;
            free(text);
            continue;
        }
        vsched_artifact_in in = {
            name, "release", so.snapshot, 1, sizeof(vsched_artifact_in),
            NULL, 0};
        if (CMD->executor->artifact(a->cmd, &MOCK.ctx, &in, &o) != VSCHED_OK)
            a->failures++;
        char *got = o.tmp_path != NULL ? get("", o.tmp_path + 1) : NULL;
        if (got == NULL || strcmp(got, text) != 0)
            a->failures++;
        free(got);
        if (o.tmp_path != NULL)
            unlink(o.tmp_path);
        out_free(&o);
        CMD->executor->snapshot_free(a->cmd, so.snapshot);
        free(text);
    }
    return NULL;
}

static void concurrent_artifacts_share_one_instance(void)
{
    char *top, *root = tree(&top);
    for (int i = 0; i < 12; i++) {
        char name[32], text[64];
        snprintf(name, sizeof name, "f%d.txt", i);
        snprintf(text, sizeof text, "file %d\n@include \"f0.txt\"\n", i);
        mock_put(root, name, text);
    }
    void *cmd =
        cmd_make(root, (mock_kv[]){{"executor", "artifact", "cat {in}"},
                                   {"executor", "dep_regex", INCLUDE_RE},
                                   {NULL, NULL, NULL}});
    mock_ctx();
    pthread_t th[4];
    par_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (par_arg){cmd, root, i, 0};
        pthread_create(&th[i], NULL, par_build, &args[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        EXPECT_INT(args[i].failures, 0);
    }
    char *outdir = mock_path2(top, "out");
    EXPECT_INT(mock_count_named(outdir, ".tmp."), 0);
    CMD->destroy(cmd);
    free(outdir), free(root);
    mock_rm_rf(top);
}

int main(void)
{
    static const vr_cu_test tests[] = {
#define T_(name) {#name, name}
        T_(descriptor_declares_abi_role_thread_safety_and_identity),
        T_(placeholders_are_the_fixed_names_and_the_schema_keys),
        T_(depfile_unescapes_spaces_hashes_and_dollars),
        T_(depfile_continuations_join_lines),
        T_(depfile_several_targets_and_rules_give_every_prerequisite),
        T_(depfile_comments_and_order_only_separator),
        T_(depfile_names_are_existing_files_under_the_root),
        T_(template_values_stay_one_word_whatever_they_hold),
        T_(template_list_values_expand_to_one_word_each),
        T_(template_shell_form_quotes_every_value),
        T_(template_errors_name_the_mistake_and_its_column),
        T_(create_rejects_bad_configuration_naming_the_key),
        T_(regex_deps_resolve_beside_the_file_then_include_dirs),
        T_(regex_matches_every_occurrence_on_a_line),
        T_(scan_command_reports_deps_through_depfile_or_stdout),
        T_(analysis_hash_folds_content_blockers_and_templates),
        T_(artifact_runs_the_tool_into_a_temporary_beside_the_output),
        T_(artifact_without_out_takes_the_tools_stdout),
        T_(artifact_names_with_metacharacters_are_never_a_shell),
        T_(artifact_tool_failure_is_etool_with_its_stderr),
        T_(artifact_cancellation_kills_the_group_and_removes_output),
        T_(artifact_timeout_kills_a_hung_tool_and_fails_the_file),
        T_(artifact_hash_follows_name_profile_and_its_flags),
        T_(identity_hashes_the_program_the_template_runs),
        T_(concurrent_artifacts_share_one_instance),
#undef T_
        {NULL, NULL},
    };
    return vr_cu_main("cmd", tests);
}
