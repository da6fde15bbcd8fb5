/*
 * test_config.c -- the INI reader (config.c), the schema checker
 * (schema.c), the typed settings (settings.c) and the path helpers
 * (util.c).
 *
 * Every error message is asserted exactly: they are the user interface.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "config/config.h"
#include "config/schema.h"
#include "config/settings.h"
#include "cu.h"

/* ---- helpers --------------------------------------------------------- */

static vr_config *load_ok(const char *text)
{
    vr_config *cfg = NULL;
    char *err = NULL;
    int rc = vr_config_load_string(&cfg, text, "t.ini", "/etc/vsched", &err);
    EXPECT_INT(rc, 0);
    EXPECT_STR(err, NULL);
    free(err);
    return cfg;
}

static void expect_load_error(const char *text, const char *message)
{
    vr_config *cfg = NULL;
    char *err = NULL;
    int rc = vr_config_load_string(&cfg, text, "t.ini", "/etc/vsched", &err);
    EXPECT_INT(rc, VSCHED_ECONFIG);
    CU_ASSERT_PTR_NULL(cfg);
    EXPECT_STR(err, message);
    free(err);
    vr_config_free(cfg);
}

/* Write len bytes to a fresh temp file; its path into path[64]. */
static void write_temp(char *path, const char *data, size_t len)
{
    strcpy(path, "/tmp/vsched_test_config_XXXXXX");
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_FATAL(write(fd, data, len) == (ssize_t)len);
    close(fd);
}

/* Text of `n` bytes: "k = " followed by 'x's. */
static char *pair_of_length(size_t n)
{
    char *s = vr_xmalloc(n + 1);
    memcpy(s, "k = ", 4);
    memset(s + 4, 'x', n - 4);
    s[n] = '\0';
    return s;
}

/* An executor-like plugin schema. */
static const vsched_key exec_schema[] = {
    {"compiler", VSCHED_KEY_STRING, "cc", "C compiler", 0, 0, 0},
    {"cflags", VSCHED_KEY_LIST, "-O2", "flags", 0, 0, VSCHED_KEY_PER_PROFILE},
    {"out_dir", VSCHED_KEY_PATH, NULL, "output dir", 0, 0,
     VSCHED_KEY_REQUIRED},
    {"jobs", VSCHED_KEY_INT, "1", "parallel jobs", 1, 64, 0},
    {"verbose", VSCHED_KEY_BOOL, "false", "chatty", 0, 0,
     VSCHED_KEY_PER_PROFILE},
    {"offset", VSCHED_KEY_INT, "0", "no range", 0, 0, 0},
};
static const size_t exec_n = sizeof exec_schema / sizeof exec_schema[0];
static const char *const plugin_key[] = {"plugin", NULL};

/* Validate [executor] (or per_profile `section`) of text; the message or
 * NULL. Caller frees. */
static char *validate(const char *text, const char *section, int per_profile)
{
    vr_config *cfg = load_ok(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
    char *err = NULL;
    int rc = vr_schema_validate(cfg, section, exec_schema, exec_n, plugin_key,
                                per_profile, &err);
    EXPECT_INT(rc, err ? VSCHED_ECONFIG : 0);
    vr_config_free(cfg);
    return err;
}

static void expect_valid(const char *text, const char *message)
{
    char *err = validate(text, "executor", 0);
    EXPECT_STR(err, message);
    free(err);
}

#define HOST_LOADER "[loader]\nplugin = fs\nroot = ../examples\n"
#define HOST_EXECUTOR "[executor]\nplugin = cc\ncflags = -O2\n"
#define HOST_BATCH "[batch]\ninputs = src/*.c\n"
#define HOST_OK HOST_LOADER HOST_EXECUTOR HOST_BATCH /* 8 lines */

static void expect_host(const char *text, const char *message)
{
    vr_config *cfg = load_ok(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
    char *err = NULL;
    int rc = vr_schema_validate_host(cfg, &err);
    EXPECT_INT(rc, message ? VSCHED_ECONFIG : 0);
    EXPECT_STR(err, message);
    free(err);
    vr_config_free(cfg);
}

/* ---- reading: happy paths -------------------------------------------- */

static void values_and_lines_are_recorded(void)
{
    vr_config *cfg = load_ok("[vsched]\ncpu_threads = 4\n\n[executor]\n"
                             "cflags = -O2 -Wall\n");
    EXPECT_STR(vr_config_get(cfg, "vsched", "cpu_threads"), "4");
    EXPECT_STR(vr_config_get(cfg, "executor", "cflags"), "-O2 -Wall");
    EXPECT_INT(vr_config_line(cfg, "vsched", "cpu_threads"), 2);
    EXPECT_INT(vr_config_line(cfg, "executor", "cflags"), 5);
    EXPECT_INT(vr_config_line(cfg, "executor", NULL), 4);
    EXPECT_STR(vr_config_path(cfg), "t.ini");
    CU_ASSERT(vr_config_has_section(cfg, "vsched"));
    CU_ASSERT(!vr_config_has_section(cfg, "batch"));
    CU_ASSERT(!vr_config_from_set(cfg, "vsched", "cpu_threads"));
    vr_config_free(cfg);
}

static void absent_key_has_no_value_and_no_line(void)
{
    vr_config *cfg = load_ok("[vsched]\nio_threads = 2\n");
    EXPECT_STR(vr_config_get(cfg, "vsched", "cpu_threads"), NULL);
    EXPECT_STR(vr_config_get(cfg, "batch", "io_threads"), NULL);
    EXPECT_INT(vr_config_line(cfg, "vsched", "cpu_threads"), 0);
    EXPECT_INT(vr_config_line(cfg, "batch", NULL), 0);
    vr_config_free(cfg);
}

static void section_with_dots_is_one_section(void)
{
    vr_config *cfg = load_ok("[profile.debug.x86]\ncflags = -O0 -g\n");
    EXPECT_STR(vr_config_get(cfg, "profile.debug.x86", "cflags"), "-O0 -g");
    size_t n;
    const char *const *names = vr_config_sections(cfg, &n);
    EXPECT_INT(n, 1);
    EXPECT_STR(names[0], "profile.debug.x86");
    vr_config_free(cfg);
}

static void inline_comment_needs_whitespace_before_semicolon(void)
{
    vr_config *cfg = load_ok("[s] ; header comment\n"
                             "a = b ; comment\n"
                             "b = x;y\n"
                             "c = x # not a comment\n"
                             "d = ; only a comment\n"
                             "e = tab\t; comment\n");
    EXPECT_STR(vr_config_get(cfg, "s", "a"), "b");
    EXPECT_STR(vr_config_get(cfg, "s", "b"), "x;y");
    EXPECT_STR(vr_config_get(cfg, "s", "c"), "x # not a comment");
    EXPECT_STR(vr_config_get(cfg, "s", "d"), "");
    EXPECT_STR(vr_config_get(cfg, "s", "e"), "tab");
    vr_config_free(cfg);
}

static void comment_and_blank_lines_are_counted(void)
{
    vr_config *cfg = load_ok("; comment\n# comment\n\n   \n  ; indented\n"
                             "[s]\nk = v\n");
    EXPECT_INT(vr_config_line(cfg, "s", NULL), 6);
    EXPECT_INT(vr_config_line(cfg, "s", "k"), 7);
    vr_config_free(cfg);
}

static void values_are_raw_text_trimmed(void)
{
    vr_config *cfg = load_ok("[s]\nq =   \"a  b\"  \nsq = 'x'\n"
                             "eq = a=b\nempty =\nsp = a   b\n");
    EXPECT_STR(vr_config_get(cfg, "s", "q"), "\"a  b\"");
    EXPECT_STR(vr_config_get(cfg, "s", "sq"), "'x'");
    EXPECT_STR(vr_config_get(cfg, "s", "eq"), "a=b");
    EXPECT_STR(vr_config_get(cfg, "s", "empty"), "");
    EXPECT_STR(vr_config_get(cfg, "s", "sp"), "a   b");
    vr_config_free(cfg);
}

static void whitespace_inside_section_brackets_is_trimmed(void)
{
    vr_config *cfg = load_ok("  [ batch ]  \ninputs = a.c\n");
    EXPECT_STR(vr_config_get(cfg, "batch", "inputs"), "a.c");
    vr_config_free(cfg);
}

static void crlf_line_endings_are_stripped(void)
{
    vr_config *cfg = load_ok("[s]\r\nk = v\r\nlast = w");
    EXPECT_STR(vr_config_get(cfg, "s", "k"), "v");
    EXPECT_STR(vr_config_get(cfg, "s", "last"), "w");
    EXPECT_INT(vr_config_line(cfg, "s", "last"), 3);
    vr_config_free(cfg);
}

static void utf8_bom_is_skipped(void)
{
    vr_config *cfg = load_ok("\xEF\xBB\xBF[s]\nk = v\n");
    CU_ASSERT(vr_config_has_section(cfg, "s"));
    vr_config_free(cfg);
}

static void indented_key_is_a_key_not_a_continuation(void)
{
    vr_config *cfg = load_ok("[s]\nk = a\n  j = b\n");
    EXPECT_STR(vr_config_get(cfg, "s", "k"), "a");
    EXPECT_STR(vr_config_get(cfg, "s", "j"), "b");
    vr_config_free(cfg);
}

static void same_key_in_two_sections_is_not_a_duplicate(void)
{
    vr_config *cfg = load_ok("[a]\nk = 1\n[b]\nk = 2\n");
    EXPECT_STR(vr_config_get(cfg, "a", "k"), "1");
    EXPECT_STR(vr_config_get(cfg, "b", "k"), "2");
    vr_config_free(cfg);
}

static void entries_and_sections_keep_file_order(void)
{
    vr_config *cfg = load_ok("[b]\nz = 1\na = 2\n[a]\nm = 3\n[c]\n");
    size_t n;
    const vr_config_entry *e = vr_config_entries(cfg, &n);
    EXPECT_INT(n, 3);
    EXPECT_STR(e[0].section, "b");
    EXPECT_STR(e[0].key, "z");
    EXPECT_STR(e[1].key, "a");
    EXPECT_STR(e[2].section, "a");
    EXPECT_STR(e[2].value, "3");
    EXPECT_INT(e[2].line, 5);
    const char *const *names = vr_config_sections(cfg, &n);
    EXPECT_INT(n, 3);
    EXPECT_STR(names[0], "b");
    EXPECT_STR(names[1], "a");
    EXPECT_STR(names[2], "c");
    const size_t *idx = vr_config_section_entries(cfg, "b", &n);
    EXPECT_INT(n, 2);
    EXPECT_INT(idx[0], 0);
    EXPECT_INT(idx[1], 1);
    idx = vr_config_section_entries(cfg, "c", &n);
    EXPECT_INT(n, 0);
    idx = vr_config_section_entries(cfg, "nope", &n);
    CU_ASSERT_PTR_NULL(idx);
    EXPECT_INT(n, 0);
    vr_config_free(cfg);
}

static void section_name_longer_than_inih_buffer_is_kept(void)
{
    char name[81], text[200];
    memset(name, 'n', 80);
    name[80] = '\0';
    snprintf(text, sizeof text, "[%s]\nk = v\n", name);
    vr_config *cfg = load_ok(text);
    EXPECT_STR(vr_config_get(cfg, name, "k"), "v");
    vr_config_free(cfg);
}

static void many_keys_load_and_look_up(void)
{
    size_t n = 20000;
    char *text = vr_xmalloc(n * 24 + 8);
    size_t len = (size_t)sprintf(text, "[s]\n");
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(text + len, "key%zu = %zu\n", i, i);
    vr_config *cfg = load_ok(text);
    EXPECT_STR(vr_config_get(cfg, "s", "key12345"), "12345");
    EXPECT_INT(vr_config_line(cfg, "s", "key19999"), 20001);
    vr_config_free(cfg);
    free(text);
}

static void load_string_dir_is_absolute_and_normalised(void)
{
    vr_config *cfg = NULL;
    char *err = NULL;
    CU_ASSERT(
        vr_config_load_string(&cfg, "", "t.ini", "/etc/./vsched/", &err) == 0);
    EXPECT_STR(vr_config_dir(cfg), "/etc/vsched");
    vr_config_free(cfg);
    CU_ASSERT(vr_config_load_string(&cfg, "", "t.ini", NULL, &err) == 0);
    char *cwd = getcwd(NULL, 0);
    EXPECT_STR(vr_config_dir(cfg), cwd);
    free(cwd);
    vr_config_free(cfg);
}

/* ---- reading: errors ------------------------------------------------- */

static void line_without_equals_is_a_syntax_error(void)
{
    expect_load_error("[s]\nk = v\njust words\n",
                      "t.ini:3: syntax error: expected [section], "
                      "KEY = VALUE or a comment");
}

static void continuation_line_is_a_syntax_error(void)
{
    expect_load_error("[executor]\ncflags = -O2\n    -Wall\n",
                      "t.ini:3: syntax error: expected [section], "
                      "KEY = VALUE or a comment");
}

static void comment_before_equals_is_a_syntax_error(void)
{
    expect_load_error("[s]\nk ; = v\n",
                      "t.ini:2: syntax error: expected [section], "
                      "KEY = VALUE or a comment");
}

static void unclosed_section_header_is_a_syntax_error(void)
{
    expect_load_error("[s]\nk = v\n[batch\n",
                      "t.ini:3: syntax error: section header without "
                      "closing ']'");
}

static void text_after_section_header_is_a_syntax_error(void)
{
    expect_load_error("[batch] inputs = a.c\n",
                      "t.ini:1: syntax error: unexpected text after ']' "
                      "(comments start with ';')");
}

static void empty_section_name_is_a_syntax_error(void)
{
    expect_load_error("[ ]\n", "t.ini:1: syntax error: empty section name");
}

static void semicolon_in_section_name_is_a_syntax_error(void)
{
    expect_load_error("[a ;b]\n", "t.ini:1: syntax error: '[' or ';' "
                                  "inside a section name");
}

static void colon_separator_is_a_syntax_error(void)
{
    expect_load_error("[s]\nk: v\n", "t.ini:2: syntax error: expected '=' "
                                     "between key and value, not ':'");
}

static void missing_key_name_is_a_syntax_error(void)
{
    expect_load_error("[s]\n = v\n",
                      "t.ini:2: syntax error: missing key before '='");
}

static void duplicate_key_names_both_lines(void)
{
    expect_load_error("[vsched]\n\n[executor]\ncflags = -O2\nplugin = cc\n"
                      "\n\n\ncflags = -O0\n",
                      "t.ini:9: duplicate key 'cflags' in [executor] "
                      "(first at line 4)");
}

static void duplicate_section_names_both_lines(void)
{
    expect_load_error("[vsched]\n\n[batch]\ninputs = a\n[loader]\n"
                      "plugin = fs\n\n\n\n\n\n[batch]\n",
                      "t.ini:12: duplicate section [batch] "
                      "(first at line 3)");
}

static void key_before_any_section_is_an_error(void)
{
    expect_load_error("; header\ncpu_threads = 4\n[vsched]\n",
                      "t.ini:2: key 'cpu_threads' before any [section] "
                      "header");
}

static void line_of_4096_bytes_is_accepted(void)
{
    char *line = pair_of_length(VR_CONFIG_MAX_LINE);
    char *text = vr_strfmt("[s]\n%s\n", line);
    vr_config *cfg = load_ok(text);
    EXPECT_INT(strlen(vr_config_get(cfg, "s", "k")), VR_CONFIG_MAX_LINE - 4);
    vr_config_free(cfg);
    free(text);
    free(line);
}

static void line_of_4097_bytes_is_too_long(void)
{
    char *line = pair_of_length(VR_CONFIG_MAX_LINE + 1);
    char *text = vr_strfmt("[s]\n%s\n", line);
    expect_load_error(text, "t.ini:2: line too long (4097 bytes, "
                            "at most 4096)");
    free(text);
    free(line);
}

static void very_long_line_is_an_error_not_truncated(void)
{
    char *line = pair_of_length(100000);
    char *text = vr_strfmt("[s]\nok = 1\n%s", line);
    expect_load_error(text, "t.ini:3: line too long (100000 bytes, "
                            "at most 4096)");
    free(text);
    free(line);
}

/* ---- reading files --------------------------------------------------- */

static void file_is_read_with_absolute_dir(void)
{
    char path[64];
    const char data[] = "[loader]\nplugin = fs\n";
    write_temp(path, data, sizeof data - 1);
    vr_config *cfg = NULL;
    char *err = NULL;
    EXPECT_INT(vr_config_load(&cfg, path, &err), 0);
    EXPECT_STR(err, NULL);
    EXPECT_STR(vr_config_get(cfg, "loader", "plugin"), "fs");
    EXPECT_STR(vr_config_path(cfg), path);
    char *tmp = realpath("/tmp", NULL);
    EXPECT_STR(vr_config_dir(cfg), tmp);
    vr_config_free(cfg);

    /* A relative path: the directory is still absolute. */
    char *cwd = getcwd(NULL, 0);
    CU_ASSERT_FATAL(chdir("/tmp") == 0);
    EXPECT_INT(vr_config_load(&cfg, path + 5, &err), 0);
    EXPECT_STR(vr_config_path(cfg), path + 5);
    EXPECT_STR(vr_config_dir(cfg), tmp);
    vr_config_free(cfg);
    CU_ASSERT(chdir(cwd) == 0);
    free(cwd);
    free(tmp);
    unlink(path);
}

static void empty_file_is_an_empty_config(void)
{
    char path[64];
    write_temp(path, "", 0);
    vr_config *cfg = NULL;
    char *err = NULL;
    EXPECT_INT(vr_config_load(&cfg, path, &err), 0);
    size_t n = 99;
    vr_config_sections(cfg, &n);
    EXPECT_INT(n, 0);
    vr_config_free(cfg);
    unlink(path);
}

static void missing_file_is_unreadable(void)
{
    vr_config *cfg = NULL;
    char *err = NULL;
    EXPECT_INT(vr_config_load(&cfg, "/nonexistent/vsched.ini", &err),
               VSCHED_ECONFIG);
    CU_ASSERT_PTR_NULL(cfg);
    EXPECT_STR(err, "/nonexistent/vsched.ini: cannot read: "
                    "No such file or directory");
    free(err);
}

static void directory_is_unreadable(void)
{
    vr_config *cfg = NULL;
    char *err = NULL;
    EXPECT_INT(vr_config_load(&cfg, "/tmp", &err), VSCHED_ECONFIG);
    CU_ASSERT_PTR_NULL(cfg);
    EXPECT_STR(err, "/tmp: cannot read: Is a directory");
    free(err);
}

static void long_line_in_file_names_its_line(void)
{
    char path[64];
    char *line = pair_of_length(VR_CONFIG_MAX_LINE + 1);
    char *data = vr_strfmt("[s]\r\nok = 1\r\n%s\r\n", line);
    write_temp(path, data, strlen(data));
    vr_config *cfg = NULL;
    char *err = NULL;
    EXPECT_INT(vr_config_load(&cfg, path, &err), VSCHED_ECONFIG);
    char *want =
        vr_strfmt("%s:3: line too long (4097 bytes, at most 4096)", path);
    EXPECT_STR(err, want);
    free(want);
    free(err);
    free(data);
    free(line);
    unlink(path);
}

static void line_of_4096_bytes_with_crlf_is_accepted_from_file(void)
{
    char path[64];
    char *line = pair_of_length(VR_CONFIG_MAX_LINE);
    char *data = vr_strfmt("[s]\r\n%s\r\n", line);
    write_temp(path, data, strlen(data));
    vr_config *cfg = NULL;
    char *err = NULL;
    EXPECT_INT(vr_config_load(&cfg, path, &err), 0);
    EXPECT_STR(err, NULL);
    EXPECT_INT(strlen(vr_config_get(cfg, "s", "k")), VR_CONFIG_MAX_LINE - 4);
    vr_config_free(cfg);
    free(data);
    free(line);
    unlink(path);
}

static void nul_byte_in_file_is_an_error(void)
{
    char path[64];
    const char data[] = "[vsched]\nio_threads = 2\0 junk\n";
    write_temp(path, data, sizeof data - 1);
    vr_config *cfg = NULL;
    char *err = NULL;
    EXPECT_INT(vr_config_load(&cfg, path, &err), VSCHED_ECONFIG);
    char *want = vr_strfmt("%s:2: NUL byte in the line (is this a text "
                           "file?)",
                           path);
    EXPECT_STR(err, want);
    free(want);
    free(err);
    unlink(path);
}

/* ---- --set ----------------------------------------------------------- */

static void set_overrides_a_file_value(void)
{
    vr_config *cfg = load_ok("[executor]\ncflags = -O2\n");
    char *err = NULL;
    EXPECT_INT(vr_config_set(cfg, "executor.cflags= -O0 -g ", &err), 0);
    EXPECT_STR(err, NULL);
    EXPECT_STR(vr_config_get(cfg, "executor", "cflags"), "-O0 -g");
    EXPECT_INT(vr_config_line(cfg, "executor", "cflags"), 2);
    CU_ASSERT(vr_config_from_set(cfg, "executor", "cflags"));
    size_t n;
    vr_config_entries(cfg, &n);
    EXPECT_INT(n, 1);
    vr_config_free(cfg);
}

static void set_adds_a_key_and_a_section(void)
{
    vr_config *cfg = load_ok("[executor]\ncflags = -O2\n");
    char *err = NULL;
    EXPECT_INT(vr_config_set(cfg, "executor.launcher=ccache", &err), 0);
    EXPECT_INT(vr_config_set(cfg, "profile.debug.cflags=-O0 -g", &err), 0);
    EXPECT_INT(vr_config_set(cfg, "a.b=c=d", &err), 0);
    EXPECT_STR(vr_config_get(cfg, "executor", "launcher"), "ccache");
    EXPECT_STR(vr_config_get(cfg, "profile.debug", "cflags"), "-O0 -g");
    EXPECT_STR(vr_config_get(cfg, "a", "b"), "c=d");
    CU_ASSERT(vr_config_has_section(cfg, "profile.debug"));
    EXPECT_INT(vr_config_line(cfg, "profile.debug", NULL), 0);
    size_t n;
    const vr_config_entry *e = vr_config_entries(cfg, &n);
    EXPECT_INT(n, 4);
    EXPECT_STR(e[1].key, "launcher");
    EXPECT_INT(e[1].line, 0);
    EXPECT_STR(e[2].section, "profile.debug");
    const char *const *names = vr_config_sections(cfg, &n);
    EXPECT_INT(n, 3);
    EXPECT_STR(names[1], "profile.debug");
    vr_config_free(cfg);
}

static void set_malformed_is_einval(void)
{
    static const char *const bad[] = {
        "xyz", "=1", "a=1", ".k=1", "a.=1", "exec utor.x=1", "a.b"};
    vr_config *cfg = load_ok("");
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *err = NULL;
        EXPECT_INT(vr_config_set(cfg, bad[i], &err), VSCHED_EINVAL);
        char *want =
            vr_strfmt("--set: expected SECTION.KEY=VALUE, got '%s'", bad[i]);
        EXPECT_STR(err, want);
        free(want);
        free(err);
    }
    size_t n;
    vr_config_sections(cfg, &n);
    EXPECT_INT(n, 0);
    vr_config_free(cfg);
}

static void set_value_error_says_set(void)
{
    vr_config *cfg = load_ok("[vsched]\ncpu_threads = 2\n" HOST_OK);
    char *err = NULL;
    EXPECT_INT(vr_config_set(cfg, "vsched.cpu_threads=many", &err), 0);
    EXPECT_INT(vr_schema_validate_host(cfg, &err), VSCHED_ECONFIG);
    EXPECT_STR(err, "--set: [vsched] cpu_threads: expected an integer, "
                    "got 'many'");
    free(err);
    vr_config_free(cfg);
}

static void set_unknown_section_says_set(void)
{
    vr_config *cfg = load_ok(HOST_OK);
    char *err = NULL;
    EXPECT_INT(vr_config_set(cfg, "exectuor.plugin=cc", &err), 0);
    EXPECT_INT(vr_schema_validate_host(cfg, &err), VSCHED_ECONFIG);
    EXPECT_STR(err, "--set: unknown section [exectuor]; did you mean "
                    "[executor]?");
    free(err);
    vr_config_free(cfg);
}

/* ---- schema: one section --------------------------------------------- */

static void valid_section_passes(void)
{
    expect_valid("[executor]\nplugin = cc\nout_dir = out\ncompiler = gcc\n"
                 "jobs = 64\nverbose = Yes\noffset = -99999999999\n"
                 "cflags = anything ; at all\n",
                 NULL);
}

static void unknown_key_suggests_close_name(void)
{
    expect_valid("[executor]\nplugin = cc\nout_dir = o\ncflag = -O2\n",
                 "t.ini:4: unknown key 'cflag' in [executor]; did you mean "
                 "'cflags'?");
    expect_valid("[executor]\nout_dir = o\nplgin = cc\n",
                 "t.ini:3: unknown key 'plgin' in [executor]; did you mean "
                 "'plugin'?");
    expect_valid("[executor]\nout_dir = o\ncomplier = cc\n",
                 "t.ini:3: unknown key 'complier' in [executor]; did you "
                 "mean 'compiler'?");
}

static void unknown_key_far_from_all_lists_accepted_keys(void)
{
    expect_valid("[executor]\nplugin = cc\nout_dir = o\noptimisation = 3\n",
                 "t.ini:4: unknown key 'optimisation' in [executor]; "
                 "accepted keys: plugin, compiler, cflags, out_dir, jobs, "
                 "verbose, offset");
}

static void section_without_keys_says_so(void)
{
    vr_config *cfg = load_ok("[x]\nk = v\n");
    char *err = NULL;
    EXPECT_INT(vr_schema_validate(cfg, "x", NULL, 0, NULL, 0, &err),
               VSCHED_ECONFIG);
    EXPECT_STR(err, "t.ini:2: unknown key 'k' in [x]; this section accepts "
                    "no keys");
    free(err);
    vr_config_free(cfg);
}

static void int_of_wrong_type_names_key_and_value(void)
{
    expect_valid("[executor]\nout_dir = o\njobs = many\n",
                 "t.ini:3: [executor] jobs: expected an integer, got "
                 "'many'");
    expect_valid("[executor]\nout_dir = o\njobs = 1.5\n",
                 "t.ini:3: [executor] jobs: expected an integer, got '1.5'");
    expect_valid("[executor]\nout_dir = o\njobs = 0x10\n",
                 "t.ini:3: [executor] jobs: expected an integer, got "
                 "'0x10'");
    expect_valid("[executor]\nout_dir = o\njobs =\n",
                 "t.ini:3: [executor] jobs: expected an integer, got ''");
}

static void int_out_of_range_shows_the_range(void)
{
    expect_valid("[executor]\nout_dir = o\njobs = 65\n",
                 "t.ini:3: [executor] jobs: 65 is out of range 1..64");
    expect_valid("[executor]\nout_dir = o\njobs = 0\n",
                 "t.ini:3: [executor] jobs: 0 is out of range 1..64");
    expect_valid("[executor]\nout_dir = o\njobs = +1\n", NULL);
}

static void int_overflow_is_out_of_range(void)
{
    expect_valid("[executor]\nout_dir = o\njobs = 99999999999999999999\n",
                 "t.ini:3: [executor] jobs: 99999999999999999999 is out "
                 "of range 1..64");
    expect_valid("[executor]\nout_dir = o\noffset = 99999999999999999999\n",
                 "t.ini:3: [executor] offset: 99999999999999999999 is out "
                 "of range -9223372036854775808..9223372036854775807");
}

static void bad_bool_lists_accepted_words(void)
{
    expect_valid("[executor]\nout_dir = o\nverbose = maybe\n",
                 "t.ini:3: [executor] verbose: expected a boolean "
                 "(true/false, yes/no, on/off, 1/0), got 'maybe'");
}

static void bool_words_are_read(void)
{
    static const char *const yes[] = {"true", "YES", "On", "1"};
    static const char *const no[] = {"false", "No", "OFF", "0"};
    for (size_t i = 0; i < 4; i++) {
        EXPECT_INT(vr_schema_bool(yes[i]), 1);
        EXPECT_INT(vr_schema_bool(no[i]), 0);
    }
    EXPECT_INT(vr_schema_bool("2"), -1);
    EXPECT_INT(vr_schema_bool(""), -1);
    EXPECT_INT(vr_schema_bool(NULL), -1);
}

static void empty_path_is_an_error(void)
{
    expect_valid("[executor]\nout_dir =\n",
                 "t.ini:2: [executor] out_dir: expected a path, got an "
                 "empty value");
}

static void string_and_list_accept_any_text(void)
{
    expect_valid("[executor]\nout_dir = o\ncompiler =\ncflags = \"a\" $b\n",
                 NULL);
}

static void missing_required_key_points_at_section_header(void)
{
    expect_valid("[vsched]\n\n[executor]\ncompiler = cc\n",
                 "t.ini:3: [executor] missing required key 'out_dir'");
}

static void missing_section_has_no_line(void)
{
    expect_valid("[vsched]\n", "t.ini: missing section [executor]");
}

static void absent_section_without_required_keys_is_valid(void)
{
    vr_config *cfg = load_ok("");
    char *err = NULL;
    EXPECT_INT(vr_schema_validate(cfg, "vsched", vr_schema_vsched,
                                  vr_schema_vsched_n, NULL, 0, &err),
               0);
    EXPECT_STR(err, NULL);
    vr_config_free(cfg);
}

static void per_profile_rejects_a_key_not_per_profile(void)
{
    char *err = validate("[profile.debug]\ncflags = -O0\ncompiler = clang\n",
                         "profile.debug", 1);
    EXPECT_STR(err, "t.ini:3: key 'compiler' cannot be set per profile in "
                    "[profile.debug]");
    free(err);
}

static void per_profile_accepts_profile_keys_without_required(void)
{
    char *err = validate("[profile.debug]\ncflags = -O0 -g\nverbose = on\n",
                         "profile.debug", 1);
    EXPECT_STR(err, NULL);
    free(err);
    err =
        validate("[profile.debug]\nverbose = sometimes\n", "profile.debug", 1);
    EXPECT_STR(err, "t.ini:2: [profile.debug] verbose: expected a boolean "
                    "(true/false, yes/no, on/off, 1/0), got 'sometimes'");
    free(err);
}

static void per_profile_suggests_only_profile_keys(void)
{
    char *err = validate("[profile.debug]\ncflag = -O0\n", "profile.debug", 1);
    EXPECT_STR(err, "t.ini:2: unknown key 'cflag' in [profile.debug]; did "
                    "you mean 'cflags'?");
    free(err);
    err = validate("[profile.debug]\nwhatever = 1\n", "profile.debug", 1);
    EXPECT_STR(err, "t.ini:2: unknown key 'whatever' in [profile.debug]; "
                    "accepted keys: plugin, cflags, verbose");
    free(err);
}

static void schema_int_reads_value_or_default(void)
{
    vr_config *cfg = load_ok("[vsched]\ncpu_threads = 12\nio_threads = x\n");
    EXPECT_INT(vr_schema_int(cfg, "vsched", "cpu_threads", 0), 12);
    EXPECT_INT(vr_schema_int(cfg, "vsched", "coordinator_threads", 2), 2);
    EXPECT_INT(vr_schema_int(cfg, "vsched", "io_threads", 7), 7);
    vr_config_free(cfg);
}

static void distance_counts_edits_and_transpositions(void)
{
    EXPECT_INT(vr_schema_distance("kitten", "sitting"), 3);
    EXPECT_INT(vr_schema_distance("exectuor", "executor"), 1);
    EXPECT_INT(vr_schema_distance("", "abc"), 3);
    EXPECT_INT(vr_schema_distance("abc", ""), 3);
    EXPECT_INT(vr_schema_distance("cflags", "cflags"), 0);
}

/* ---- schema: the host's file ----------------------------------------- */

static void host_tables_hold_the_documented_keys(void)
{
    EXPECT_INT(vr_schema_vsched_n, 7);
    EXPECT_STR(vr_schema_vsched[0].name, "cpu_threads");
    EXPECT_STR(vr_schema_vsched[0].dflt, "0");
    EXPECT_INT(vr_schema_vsched[0].max, 1024);
    EXPECT_INT(vr_schema_batch_n, 4);
    EXPECT_STR(vr_schema_batch[1].dflt, "release");
    CU_ASSERT(vr_schema_batch[0].flags & VSCHED_KEY_REQUIRED);
    EXPECT_INT(vr_schema_resource_n, 1);
    CU_ASSERT(vr_schema_resource[0].flags & VSCHED_KEY_REQUIRED);
    for (size_t i = 0; i < vr_schema_vsched_n; i++)
        CU_ASSERT(vr_schema_vsched[i].help && *vr_schema_vsched[i].help);
}

static void host_minimal_config_is_valid(void)
{
    expect_host(HOST_OK, NULL);
}

static void host_reference_config_is_valid(void)
{
    expect_host("[vsched]\ncpu_threads = 0 ; online CPUs\nio_threads = 2\n"
                "coordinator_threads = 2\nstate_dir = .vsched\n"
                "plugin_path = plugins\ninbox_capacity = 1024\n"
                "ready_capacity = 64\n" HOST_LOADER
                "[executor]\nplugin = cc\ncompiler = cc\nlauncher =\n"
                "[profile.debug]\ncflags = -O0 -g\n"
                "[resource.link]\ncapacity = 1\n"
                "[batch]\ninputs = src/*.c\nprofiles = release debug\n"
                "link = hello\nkeep_going = 0\n",
                NULL);
}

static void host_does_not_check_plugin_keys(void)
{
    expect_host("[loader]\nplugin = fs\nrooot = x\n"
                "[executor]\nplugin = cc\nanything = goes\n" HOST_BATCH,
                NULL);
}

static void host_unknown_section_suggests_close_name(void)
{
    expect_host(HOST_OK "\n[exectuor]\n",
                "t.ini:10: unknown section [exectuor]; did you mean "
                "[executor]?");
    expect_host("[Vsched]\n" HOST_OK,
                "t.ini:1: unknown section [Vsched]; did you mean [vsched]?");
}

static void host_unknown_section_far_from_all_lists_sections(void)
{
    expect_host(HOST_OK "[toolchain]\n",
                "t.ini:9: unknown section [toolchain]; accepted sections: "
                "[vsched], [loader], [executor], [batch], [cache], "
                "[watch], [profile.NAME], [resource.NAME], [target.NAME]");
}

static void host_section_prefix_typo_suggests_named_section(void)
{
    expect_host(HOST_OK "[profiles.debug]\n",
                "t.ini:9: unknown section [profiles.debug]; did you mean "
                "[profile.debug]?");
}

static void host_bad_profile_or_resource_name_is_rejected(void)
{
    expect_host(HOST_OK "[resource.a b]\ncapacity = 1\n",
                "t.ini:9: bad section name [resource.a b]; expected "
                "[resource.NAME] with a NAME of letters, digits, '_', '.' "
                "or '-'");
    expect_host(HOST_OK "[profile.]\n",
                "t.ini:9: bad section name [profile.]; expected "
                "[profile.NAME] with a NAME of letters, digits, '_', '.' "
                "or '-'");
    expect_host(HOST_OK "[profile]\n",
                "t.ini:9: bad section name [profile]; expected "
                "[profile.NAME] with a NAME of letters, digits, '_', '.' "
                "or '-'");
}

static void host_missing_loader_or_executor_section(void)
{
    expect_host(HOST_EXECUTOR HOST_BATCH, "t.ini: missing section [loader]");
    expect_host(HOST_LOADER HOST_BATCH, "t.ini: missing section [executor]");
}

static void host_plugin_key_is_required(void)
{
    expect_host(HOST_LOADER "\n[executor]\ncflags = -O2\n" HOST_BATCH,
                "t.ini:5: [executor] missing required key 'plugin'");
    expect_host("[loader]\nplugin =\n" HOST_EXECUTOR HOST_BATCH,
                "t.ini:2: [loader] plugin: expected a plugin name, got an "
                "empty value");
}

static void host_vsched_keys_are_checked(void)
{
    expect_host("[vsched]\ncpu_threads = 5000\n" HOST_OK,
                "t.ini:2: [vsched] cpu_threads: 5000 is out of range "
                "0..1024");
    expect_host("[vsched]\ncpu_threads = many\n" HOST_OK,
                "t.ini:2: [vsched] cpu_threads: expected an integer, got "
                "'many'");
    expect_host("[vsched]\ncpu_thread = 2\n" HOST_OK,
                "t.ini:2: unknown key 'cpu_thread' in [vsched]; did you "
                "mean 'cpu_threads'?");
    expect_host("[vsched]\nstate_dir =\n" HOST_OK,
                "t.ini:2: [vsched] state_dir: expected a path, got an "
                "empty value");
}

static void host_watch_keys_are_checked(void)
{
    expect_host(HOST_OK "[watch]\nsettle_ms = 10001\n",
                "t.ini:10: [watch] settle_ms: 10001 is out of range "
                "0..10000");
    expect_host(HOST_OK "[watch]\npoll_interval_ms = 5\n",
                "t.ini:10: [watch] poll_interval_ms: 5 is out of range "
                "10..60000");
    expect_host(HOST_OK "[watch]\nsettle_m = 5\n",
                "t.ini:10: unknown key 'settle_m' in [watch]; did you mean "
                "'settle_ms'?");
    expect_host(HOST_OK "[watch]\nsettle = 5\n",
                "t.ini:10: unknown key 'settle' in [watch]; accepted keys: "
                "settle_ms, poll_interval_ms");
    expect_host(HOST_OK "[watcj]\n",
                "t.ini:9: unknown section [watcj]; did you mean [watch]?");
}

static void settings_read_the_watch_keys(void)
{
    vr_config *cfg = load_ok(HOST_OK "[watch]\nsettle_ms = 0\n"
                                     "poll_interval_ms = 75\n");
    vr_settings s;
    char *err = NULL;
    EXPECT_INT(vr_settings_load(&s, cfg, &err), 0);
    EXPECT_INT(s.watch_settle_ms, 0);
    EXPECT_INT(s.watch_poll_ms, 75);
    vr_settings_free(&s);
    vr_config_free(cfg);
    cfg = load_ok(HOST_OK);
    EXPECT_INT(vr_settings_load(&s, cfg, &err), 0);
    EXPECT_INT(s.watch_settle_ms, 5); /* the defaults */
    EXPECT_INT(s.watch_poll_ms, 500);
    vr_settings_free(&s);
    vr_config_free(cfg);
}

static void host_batch_requires_inputs(void)
{
    expect_host(HOST_LOADER HOST_EXECUTOR "[batch]\nprofiles = release\n",
                "t.ini:7: [batch] missing required key 'inputs'");
    expect_host(HOST_LOADER HOST_EXECUTOR, "t.ini: missing section [batch]");
    expect_host(HOST_OK "keep_going = -1\n",
                "t.ini:9: [batch] keep_going: -1 is out of range "
                "0..1000000");
}

static void host_resource_requires_capacity_in_range(void)
{
    expect_host(HOST_OK "[resource.link]\n",
                "t.ini:9: [resource.link] missing required key "
                "'capacity'");
    expect_host(HOST_OK "[resource.link]\ncapacity = 0\n",
                "t.ini:10: [resource.link] capacity: 0 is out of range "
                "1..65536");
    expect_host(HOST_OK "[resource.cpu-heavy.1]\ncapacity = 65536\n", NULL);
}

/* ---- settings -------------------------------------------------------- */

static void settings_take_defaults_when_keys_are_absent(void)
{
    vr_config *cfg = load_ok(HOST_OK);
    vr_settings s;
    char *err = NULL;
    EXPECT_INT(vr_settings_load(&s, cfg, &err), 0);
    EXPECT_STR(err, NULL);
    EXPECT_STR(s.path, "t.ini");
    EXPECT_INT(s.cpu_threads, 0);
    EXPECT_INT(s.io_threads, 2);
    EXPECT_INT(s.coordinator_threads, 2);
    EXPECT_INT(s.inbox_capacity, 1024);
    EXPECT_INT(s.ready_capacity, 64);
    EXPECT_STR(s.state_dir, "/etc/vsched/.vsched");
    EXPECT_STR(s.loader_plugin, "fs");
    EXPECT_STR(s.executor_plugin, "cc");
    EXPECT_STR(s.loader_root, "/etc/examples");
    EXPECT_INT(s.n_inputs, 1);
    EXPECT_STR(s.inputs[0], "src/*.c");
    EXPECT_INT(s.n_profiles, 1);
    EXPECT_STR(s.profiles[0], "release");
    EXPECT_STR(s.link, NULL);
    EXPECT_INT(s.keep_going, 1);
    EXPECT_INT(s.cache_max_bytes, 2ull << 30);
    EXPECT_STR(s.cache_dir, "/etc/vsched/.vsched/cache");
    EXPECT_INT(s.n_resources, 0);
    vr_settings_free(&s);
    vr_config_free(cfg);
}

static void settings_convert_every_host_key(void)
{
    vr_config *cfg = load_ok(
        "[vsched]\ncpu_threads = 3\nio_threads = 4\n"
        "coordinator_threads = 5\ninbox_capacity = 6\n"
        "ready_capacity = 7\nstate_dir = ../st\n"
        "[loader]\nplugin = fs\nroot = src\n"
        "[executor]\nplugin = cc\n"
        "[batch]\ninputs = a.c  *.c\tb/*.c\nprofiles = debug release\n"
        "link = app\nkeep_going = 0\n"
        "[cache]\nmax_size = 0\ndir = c\n"
        "[resource.link]\ncapacity = 2\n[resource.db]\ncapacity = 9\n");
    vr_settings s;
    char *err = NULL;
    EXPECT_INT(vr_settings_load(&s, cfg, &err), 0);
    EXPECT_INT(s.cpu_threads, 3);
    EXPECT_INT(s.io_threads, 4);
    EXPECT_INT(s.coordinator_threads, 5);
    EXPECT_INT(s.inbox_capacity, 6);
    EXPECT_INT(s.ready_capacity, 7);
    EXPECT_STR(s.state_dir, "/etc/st");
    EXPECT_STR(s.loader_root, "/etc/vsched/src");
    EXPECT_INT(s.loader_root_empty, 0);
    EXPECT_INT(s.n_inputs, 3);
    EXPECT_STR(s.inputs[1], "*.c");
    EXPECT_STR(s.inputs[2], "b/*.c");
    EXPECT_INT(s.inputs_line, 14);
    EXPECT_INT(s.n_profiles, 2);
    EXPECT_STR(s.profiles[0], "debug");
    EXPECT_STR(s.link, "app");
    EXPECT_INT(s.keep_going, 0);
    EXPECT_INT(s.cache_max_bytes, 0);
    EXPECT_STR(s.cache_dir, NULL); /* max_size 0: no cache */
    EXPECT_INT(s.n_resources, 2);
    EXPECT_STR(s.resources[1].name, "db");
    EXPECT_INT(s.resources[1].capacity, 9);
    vr_settings_free(&s);
    vr_config_free(cfg);
}

static void settings_reject_a_bad_cache_size_at_its_line(void)
{
    vr_config *cfg = load_ok(HOST_OK "[cache]\nmax_size = 2GB\n");
    vr_settings s;
    char *err = NULL;
    EXPECT_INT(vr_settings_load(&s, cfg, &err), VSCHED_ECONFIG);
    EXPECT_STR(err, "t.ini:10: [cache] max_size: expected a size such as "
                    "2G, 512M, 100K or 0, got '2GB'");
    free(err);
    EXPECT_STR(s.state_dir, NULL);
    vr_settings_free(&s);
    EXPECT_INT(vr_config_set(cfg, "cache.max_size=lots", &err), 0);
    EXPECT_INT(vr_settings_load(&s, cfg, &err), VSCHED_ECONFIG);
    EXPECT_STR(err, "--set: [cache] max_size: expected a size such as 2G, "
                    "512M, 100K or 0, got 'lots'");
    free(err);
    vr_settings_free(&s);
    vr_config_free(cfg);
}

static void settings_report_host_schema_errors(void)
{
    vr_config *cfg = load_ok(HOST_OK "[vsched]\nio_threads = 0\n");
    vr_settings s;
    char *err = NULL;
    EXPECT_INT(vr_settings_load(&s, cfg, &err), VSCHED_ECONFIG);
    EXPECT_STR(err, "t.ini:10: [vsched] io_threads: 0 is out of range "
                    "1..256");
    free(err);
    vr_settings_free(&s);
    vr_config_free(cfg);
}

/* ---- util ------------------------------------------------------------ */

static void path_join_normalises_lexically(void)
{
    static const char *const cases[][3] = {
        {"/a/b", "../c/./d//e/", "/a/c/d/e"},
        {"/a/b", "/x/../y", "/y"},
        {"/", "../..", "/"},
        {"/a/b", "", "/a/b"},
        {"/a//b/", ".", "/a/b"},
        {"/a", "b/../../../c", "/c"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *p = vr_path_join(cases[i][0], cases[i][1]);
        EXPECT_STR(p, cases[i][2]);
        free(p);
    }
}

static void relative_paths_are_made_absolute_against_cwd(void)
{
    char *cwd = getcwd(NULL, 0);
    const char *sep = strcmp(cwd, "/") == 0 ? "" : "/";
    char *want = vr_strfmt("%s%ssub/x", cwd, sep);
    char *p = vr_path_join("sub/.", "x");
    EXPECT_STR(p, want);
    free(p);
    free(want);
    p = vr_path_dirname_abs("x.ini");
    EXPECT_STR(p, cwd);
    free(p);
    want = vr_strfmt("%s%sa/b", cwd, sep);
    p = vr_path_dirname_abs("a/b/x.ini");
    EXPECT_STR(p, want);
    free(p);
    free(want);
    free(cwd);
}

static void dirname_of_absolute_path(void)
{
    char *p = vr_path_dirname_abs("/etc/vsched/x.ini");
    EXPECT_STR(p, "/etc/vsched");
    free(p);
    p = vr_path_dirname_abs("/x.ini");
    EXPECT_STR(p, "/");
    free(p);
    p = vr_path_dirname_abs("/etc/vsched/");
    EXPECT_STR(p, "/etc");
    free(p);
}

static void strfmt_formats(void)
{
    char *s = vr_strfmt("%s:%u: %d%%", "f", 7u, -3);
    EXPECT_STR(s, "f:7: -3%");
    free(s);
    s = vr_xstrdup("");
    EXPECT_STR(s, "");
    free(s);
}

static const vr_cu_test tests[] = {
    {"values_and_lines_are_recorded", values_and_lines_are_recorded},
    {"absent_key_has_no_value_and_no_line",
     absent_key_has_no_value_and_no_line},
    {"section_with_dots_is_one_section", section_with_dots_is_one_section},
    {"inline_comment_needs_whitespace_before_semicolon",
     inline_comment_needs_whitespace_before_semicolon},
    {"comment_and_blank_lines_are_counted",
     comment_and_blank_lines_are_counted},
    {"values_are_raw_text_trimmed", values_are_raw_text_trimmed},
    {"whitespace_inside_section_brackets_is_trimmed",
     whitespace_inside_section_brackets_is_trimmed},
    {"crlf_line_endings_are_stripped", crlf_line_endings_are_stripped},
    {"utf8_bom_is_skipped", utf8_bom_is_skipped},
    {"indented_key_is_a_key_not_a_continuation",
     indented_key_is_a_key_not_a_continuation},
    {"same_key_in_two_sections_is_not_a_duplicate",
     same_key_in_two_sections_is_not_a_duplicate},
    {"entries_and_sections_keep_file_order",
     entries_and_sections_keep_file_order},
    {"section_name_longer_than_inih_buffer_is_kept",
     section_name_longer_than_inih_buffer_is_kept},
    {"many_keys_load_and_look_up", many_keys_load_and_look_up},
    {"load_string_dir_is_absolute_and_normalised",
     load_string_dir_is_absolute_and_normalised},
    {"line_without_equals_is_a_syntax_error",
     line_without_equals_is_a_syntax_error},
    {"continuation_line_is_a_syntax_error",
     continuation_line_is_a_syntax_error},
    {"comment_before_equals_is_a_syntax_error",
     comment_before_equals_is_a_syntax_error},
    {"unclosed_section_header_is_a_syntax_error",
     unclosed_section_header_is_a_syntax_error},
    {"text_after_section_header_is_a_syntax_error",
     text_after_section_header_is_a_syntax_error},
    {"empty_section_name_is_a_syntax_error",
     empty_section_name_is_a_syntax_error},
    {"semicolon_in_section_name_is_a_syntax_error",
     semicolon_in_section_name_is_a_syntax_error},
    {"colon_separator_is_a_syntax_error", colon_separator_is_a_syntax_error},
    {"missing_key_name_is_a_syntax_error", missing_key_name_is_a_syntax_error},
    {"duplicate_key_names_both_lines", duplicate_key_names_both_lines},
    {"duplicate_section_names_both_lines", duplicate_section_names_both_lines},
    {"key_before_any_section_is_an_error", key_before_any_section_is_an_error},
    {"line_of_4096_bytes_is_accepted", line_of_4096_bytes_is_accepted},
    {"line_of_4097_bytes_is_too_long", line_of_4097_bytes_is_too_long},
    {"very_long_line_is_an_error_not_truncated",
     very_long_line_is_an_error_not_truncated},
    {"file_is_read_with_absolute_dir", file_is_read_with_absolute_dir},
    {"empty_file_is_an_empty_config", empty_file_is_an_empty_config},
    {"missing_file_is_unreadable", missing_file_is_unreadable},
    {"directory_is_unreadable", directory_is_unreadable},
    {"long_line_in_file_names_its_line", long_line_in_file_names_its_line},
    {"line_of_4096_bytes_with_crlf_is_accepted_from_file",
     line_of_4096_bytes_with_crlf_is_accepted_from_file},
    {"nul_byte_in_file_is_an_error", nul_byte_in_file_is_an_error},
    {"set_overrides_a_file_value", set_overrides_a_file_value},
    {"set_adds_a_key_and_a_section", set_adds_a_key_and_a_section},
    {"set_malformed_is_einval", set_malformed_is_einval},
    {"set_value_error_says_set", set_value_error_says_set},
    {"set_unknown_section_says_set", set_unknown_section_says_set},
    {"valid_section_passes", valid_section_passes},
    {"unknown_key_suggests_close_name", unknown_key_suggests_close_name},
    {"unknown_key_far_from_all_lists_accepted_keys",
     unknown_key_far_from_all_lists_accepted_keys},
    {"section_without_keys_says_so", section_without_keys_says_so},
    {"int_of_wrong_type_names_key_and_value",
     int_of_wrong_type_names_key_and_value},
    {"int_out_of_range_shows_the_range", int_out_of_range_shows_the_range},
    {"int_overflow_is_out_of_range", int_overflow_is_out_of_range},
    {"bad_bool_lists_accepted_words", bad_bool_lists_accepted_words},
    {"bool_words_are_read", bool_words_are_read},
    {"empty_path_is_an_error", empty_path_is_an_error},
    {"string_and_list_accept_any_text", string_and_list_accept_any_text},
    {"missing_required_key_points_at_section_header",
     missing_required_key_points_at_section_header},
    {"missing_section_has_no_line", missing_section_has_no_line},
    {"absent_section_without_required_keys_is_valid",
     absent_section_without_required_keys_is_valid},
    {"per_profile_rejects_a_key_not_per_profile",
     per_profile_rejects_a_key_not_per_profile},
    {"per_profile_accepts_profile_keys_without_required",
     per_profile_accepts_profile_keys_without_required},
    {"per_profile_suggests_only_profile_keys",
     per_profile_suggests_only_profile_keys},
    {"schema_int_reads_value_or_default", schema_int_reads_value_or_default},
    {"distance_counts_edits_and_transpositions",
     distance_counts_edits_and_transpositions},
    {"host_tables_hold_the_documented_keys",
     host_tables_hold_the_documented_keys},
    {"host_minimal_config_is_valid", host_minimal_config_is_valid},
    {"host_reference_config_is_valid", host_reference_config_is_valid},
    {"host_does_not_check_plugin_keys", host_does_not_check_plugin_keys},
    {"host_unknown_section_suggests_close_name",
     host_unknown_section_suggests_close_name},
    {"host_unknown_section_far_from_all_lists_sections",
     host_unknown_section_far_from_all_lists_sections},
    {"host_section_prefix_typo_suggests_named_section",
     host_section_prefix_typo_suggests_named_section},
    {"host_bad_profile_or_resource_name_is_rejected",
     host_bad_profile_or_resource_name_is_rejected},
    {"host_missing_loader_or_executor_section",
     host_missing_loader_or_executor_section},
    {"host_plugin_key_is_required", host_plugin_key_is_required},
    {"host_vsched_keys_are_checked", host_vsched_keys_are_checked},
    {"host_watch_keys_are_checked", host_watch_keys_are_checked},
    {"settings_read_the_watch_keys", settings_read_the_watch_keys},
    {"host_batch_requires_inputs", host_batch_requires_inputs},
    {"host_resource_requires_capacity_in_range",
     host_resource_requires_capacity_in_range},
    {"settings_take_defaults_when_keys_are_absent",
     settings_take_defaults_when_keys_are_absent},
    {"settings_convert_every_host_key", settings_convert_every_host_key},
    {"settings_reject_a_bad_cache_size_at_its_line",
     settings_reject_a_bad_cache_size_at_its_line},
    {"settings_report_host_schema_errors", settings_report_host_schema_errors},
    {"path_join_normalises_lexically", path_join_normalises_lexically},
    {"relative_paths_are_made_absolute_against_cwd",
     relative_paths_are_made_absolute_against_cwd},
    {"dirname_of_absolute_path", dirname_of_absolute_path},
    {"strfmt_formats", strfmt_formats},
    {NULL, NULL},
};

int main(void)
{
    return vr_cu_main("config", tests);
}
