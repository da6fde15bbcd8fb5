/*
 * config.c -- the INI file, read through libinih, plus --set overrides.
 *
 * The INI dialect (the reference for vsched.ini(5)):
 *
 *   - A line is a [section] header, a KEY = VALUE pair, a comment (first
 *     non-blank character ';' or '#'), or blank. Anything else is a syntax
 *     error; in particular an indented line without '=' is NOT a
 *     continuation of the previous value (inih's multiline mode is off).
 *   - ';' preceded by whitespace starts a comment anywhere on a line; '#'
 *     does so only at the start of a line. ':' is not a separator.
 *   - Values are raw text with surrounding whitespace trimmed. There is no
 *     quoting and no escape: quotes are part of the value, and a value
 *     cannot contain " ;" (whitespace then ';').
 *   - Section names and keys are case-sensitive. A section name may contain
 *     dots ([profile.debug]); whitespace inside the brackets is trimmed.
 *   - A key may appear once per section, a section header once per file.
 *   - Lines longer than VR_CONFIG_MAX_LINE bytes (not counting "\n" or
 *     "\r\n") and NUL bytes are errors. A UTF-8 BOM on line 1 is skipped.
 *
 * inih does the tokenising. It is driven through ini_parse_stream() with
 * our own reader (vr_read_line) because inih's handler gets no line number,
 * its fixed buffer cuts long lines silently, and its section buffer holds
 * 49 characters: the reader reads whole lines, counts them, rejects long
 * lines and NULs, and tracks section headers itself; the handler
 * (vr_on_pair) then knows the exact line and section of each pair.
 *
 * Storage: entries and sections in file order, each with a hash index
 * (config_index.h) so that loading and lookups stay linear in the file
 * size.
 */
#include "config/config.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vsched/plugin.h>

#include "common/util.h"
#include "config/config_index.h"

/* One section: its header line (0 when made by --set) and the indices of
 * its entries in cfg->entries, in order. */
typedef struct vr_section {
    unsigned line;
    size_t *ents;
    size_t n_ents, cap_ents;
} vr_section;

struct vr_config {
    char *path;
    char *dir;

    vr_config_entry *entries; /* strings owned here; section points into
                                 names[] */
    unsigned char *from_set;  /* per entry: value came from --set */
    size_t n_entries, cap_entries;
    vr__index entry_index; /* (section, key) -> entry */

    char **names; /* section names, owned */
    vr_section *sections;
    size_t n_sections, cap_sections;
    vr__index section_index; /* section name -> section */
};

/* ---- lookups (through config_index) ---------------------------------- */

/* What vr_find_section / vr_find_entry look for: key NULL for a section. */
typedef struct vr_lookup {
    const vr_config *cfg;
    const char *section;
    const char *key;
} vr_lookup;

static int vr_is_section(const void *ctx, size_t idx)
{
    const vr_lookup *q = ctx;
    return strcmp(q->cfg->names[idx], q->section) == 0;
}

static int vr_is_entry(const void *ctx, size_t idx)
{
    const vr_lookup *q = ctx;
    const vr_config_entry *e = &q->cfg->entries[idx];
    return strcmp(e->section, q->section) == 0 && strcmp(e->key, q->key) == 0;
}

static long vr_find_section(const vr_config *cfg, const char *section)
{
    vr_lookup q = {cfg, section, NULL};
    return vr__index_find(&cfg->section_index, vr__index_hash(section, NULL),
                          vr_is_section, &q);
}

static long vr_find_entry(const vr_config *cfg, const char *section,
                          const char *key)
{
    vr_lookup q = {cfg, section, key};
    return vr__index_find(&cfg->entry_index, vr__index_hash(section, key),
                          vr_is_entry, &q);
}

/* ---- building -------------------------------------------------------- */

/* Append a section known to be absent; returns its index. */
static size_t vr_add_section(vr_config *cfg, const char *name, unsigned line)
{
    if (cfg->n_sections == cfg->cap_sections) {
        cfg->cap_sections = cfg->cap_sections ? 2 * cfg->cap_sections : 8;
        cfg->names =
            vr_xrealloc(cfg->names, cfg->cap_sections * sizeof *cfg->names);
        cfg->sections = vr_xrealloc(cfg->sections,
                                    cfg->cap_sections * sizeof *cfg->sections);
    }
    size_t i = cfg->n_sections++;
    cfg->names[i] = vr_xstrdup(name);
    cfg->sections[i] = (vr_section){.line = line};
    vr__index_add(&cfg->section_index, vr__index_hash(name, NULL), i);
    return i;
}

/* Append key = value to section `si`, the key known to be absent. */
static void vr_add_entry(vr_config *cfg, size_t si, const char *key,
                         const char *value, unsigned line, int from_set)
{
    if (cfg->n_entries == cfg->cap_entries) {
        cfg->cap_entries = cfg->cap_entries ? 2 * cfg->cap_entries : 16;
        cfg->entries =
            vr_xrealloc(cfg->entries, cfg->cap_entries * sizeof *cfg->entries);
        cfg->from_set = vr_xrealloc(cfg->from_set, cfg->cap_entries);
    }
    size_t i = cfg->n_entries++;
    cfg->entries[i] = (vr_config_entry){.section = cfg->names[si],
                                        .key = vr_xstrdup(key),
                                        .value = vr_xstrdup(value),
                                        .line = line};
    cfg->from_set[i] = (unsigned char)from_set;
    vr__index_add(&cfg->entry_index, vr__index_hash(cfg->names[si], key), i);

    vr_section *sec = &cfg->sections[si];
    if (sec->n_ents == sec->cap_ents) {
        sec->cap_ents = sec->cap_ents ? 2 * sec->cap_ents : 4;
        sec->ents = vr_xrealloc(sec->ents, sec->cap_ents * sizeof *sec->ents);
    }
    sec->ents[sec->n_ents++] = i;
}

/* Contract: frees cfg and everything it owns; NULL is a no-op. */
void vr_config_free(vr_config *cfg)
{
    if (cfg == NULL)
        return;
    for (size_t i = 0; i < cfg->n_entries; i++) {
        free((char *)cfg->entries[i].key);
        free((char *)cfg->entries[i].value);
    }
    for (size_t i = 0; i < cfg->n_sections; i++) {
        free(cfg->names[i]);
        free(cfg->sections[i].ents);
    }
    free(cfg->entries);
    free(cfg->from_set);
    free(cfg->names);
    free(cfg->sections);
    vr__index_free(&cfg->entry_index);
    vr__index_free(&cfg->section_index);
    free(cfg->path);
    free(cfg->dir);
    free(cfg);
}

/* ---- parsing --------------------------------------------------------- */

/* State shared by the reader and the handler of one parse. */
typedef struct vr_parse {
    vr_config *cfg;
    FILE *fp;         /* file input, or NULL */
    const char *text; /* string input */
    size_t pos;
    unsigned lineno; /* line last handed to inih */
    long section;    /* current section index, -1 before the first */
    char *err;       /* first error, "FILE:LINE: ..." */
    char line[VR_CONFIG_MAX_LINE + 2]; /* current line, '\r' kept, NUL */
} vr_parse;

static void vr_fail(vr_parse *ps, const char *msg)
{
    if (ps->err == NULL)
        ps->err = vr_strfmt("%s:%u: %s", ps->cfg->path, ps->lineno, msg);
}

static int vr_getc(vr_parse *ps)
{
    if (ps->fp != NULL)
        return getc_unlocked(ps->fp);
    unsigned char c = (unsigned char)ps->text[ps->pos];
    if (c == '\0')
        return EOF;
    ps->pos++;
    return c;
}

/* Read the next line into ps->line without its "\n" or "\r\n", counting
 * it. Returns its length in bytes, or -1 at the end of input or on an
 * error (ps->err set). A line longer than the buffer is consumed and
 * counted but not stored, so that no input can make us allocate. */
static long vr_next_line(vr_parse *ps)
{
    const size_t room = sizeof ps->line - 1;
    size_t n = 0;
    int c, last = EOF;
    errno = 0;
    while ((c = vr_getc(ps)) != EOF && c != '\n') {
        if (c == '\0') {
            ps->lineno++;
            vr_fail(ps, "NUL byte in the line (is this a text file?)");
            return -1;
        }
        if (n < room)
            ps->line[n] = (char)c;
        n++;
        last = c;
    }
    if (ps->fp != NULL && ferror(ps->fp)) {
        ps->err = vr_strfmt("%s: cannot read: %s", ps->cfg->path,
                            strerror(errno ? errno : EIO));
        return -1;
    }
    if (c == EOF && n == 0)
        return -1;
    ps->lineno++;
    if (last == '\r')
        n--;
    if (n > VR_CONFIG_MAX_LINE) {
        char *m = vr_strfmt("line too long (%zu bytes, at most %d)", n,
                            VR_CONFIG_MAX_LINE);
        vr_fail(ps, m);
        free(m);
        return -1;
    }
    ps->line[n] = '\0';
    return (long)n;
}

/* Check a "[name]" header line (s: first non-blank character, '['); note
 * the section. 0, or -1 with ps->err set. */
static int vr_header(vr_parse *ps, char *s)
{
    char *close = strchr(s, ']');
    if (close == NULL) {
        vr_fail(ps, "syntax error: section header without closing ']'");
        return -1;
    }
    char *after = close + 1;
    while (isspace((unsigned char)*after))
        after++;
    if (*after != '\0' && *after != ';') {
        vr_fail(ps, "syntax error: unexpected text after ']' "
                    "(comments start with ';')");
        return -1;
    }
    char *name = s + 1;
    while (isspace((unsigned char)*name))
        name++;
    char *end = close;
    while (end > name && isspace((unsigned char)end[-1]))
        end--;
    if (end == name) {
        vr_fail(ps, "syntax error: empty section name");
        return -1;
    }
    char saved = *end;
    *end = '\0';
    int rc = 0;
    if (strpbrk(name, "[;") != NULL) {
        vr_fail(ps, "syntax error: '[' or ';' inside a section name");
        rc = -1;
    } else {
        long i = vr_find_section(ps->cfg, name);
        if (i >= 0) {
            char *m = vr_strfmt("duplicate section [%s] (first at line %u)",
                                name, ps->cfg->sections[i].line);
            vr_fail(ps, m);
            free(m);
            rc = -1;
        } else {
            ps->section = (long)vr_add_section(ps->cfg, name, ps->lineno);
        }
    }
    *end = saved;
    return rc;
}

/* Syntax checks inih does not make on a non-header line (s: first
 * non-blank character). 0, or -1 with ps->err set. */
static int vr_pair_line(vr_parse *ps, const char *s)
{
    if (*s == '\0' || *s == ';' || *s == '#')
        return 0; /* blank or comment */
    for (const char *p = s; *p && *p != '='; p++) {
        if (*p == ':') {
            vr_fail(ps, "syntax error: expected '=' between key and value, "
                        "not ':'");
            return -1;
        }
        if (*p == ';' && p > s && isspace((unsigned char)p[-1]))
            break; /* comment: inih reports the missing '=' */
    }
    return 0;
}

/* The ini_reader: hand inih the next whole line, checking its length,
 * NULs and section headers; NULL ends the parse (end of input, or an error
 * in ps->err). */
static char *vr_read_line(char *str, int num, void *stream)
{
    vr_parse *ps = stream;
    if (ps->err != NULL)
        return NULL;
    long n = vr_next_line(ps);
    if (n < 0)
        return NULL;
    char *line = ps->line;
    if (ps->lineno == 1 && strncmp(line, "\xEF\xBB\xBF", 3) == 0) {
        line += 3; /* UTF-8 BOM */
        n -= 3;
    }
    if (n >= num) { /* cannot happen: ini_max_line is set above the limit */
        vr_fail(ps, "line too long for the INI parser");
        return NULL;
    }
    char *s = line;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '[' ? vr_header(ps, s) < 0 : vr_pair_line(ps, s) < 0)
        return NULL;
    memcpy(str, line, (size_t)n + 1);
    return str;
}

/* The ini_handler: one KEY = VALUE of the line last read. 1 to go on. */
static int vr_on_pair(void *user, const char *section, const char *name,
                      const char *value)
{
    vr_parse *ps = user;
    vr_config *cfg = ps->cfg;
    (void)section; /* inih's copy is cut at 49 bytes: use ours */
    char *m = NULL;
    if (*name == '\0') {
        m = vr_strfmt("syntax error: missing key before '='");
    } else if (ps->section < 0) {
        m = vr_strfmt("key '%s' before any [section] header", name);
    } else {
        const char *sec = cfg->names[ps->section];
        long i = vr_find_entry(cfg, sec, name);
        if (i < 0) {
            vr_add_entry(cfg, (size_t)ps->section, name, value, ps->lineno, 0);
            return 1;
        }
        m = vr_strfmt("duplicate key '%s' in [%s] (first at line %u)", name,
                      sec, cfg->entries[i].line);
    }
    vr_fail(ps, m);
    free(m);
    return 0;
}

/* inih's runtime options, saved around a parse. */
typedef struct vr_ini_opts {
    bool multiline, bom, inline_comments, use_stack, stop_first, no_value;
    char *start_prefixes, *inline_prefixes;
    int max_line;
} vr_ini_opts;

static char vr_start_prefixes[] = ";#";
static char vr_inline_prefixes[] = ";";

static vr_ini_opts vr_ini_setup(void)
{
    vr_ini_opts old = {ini_allow_multiline,
                       ini_allow_bom,
                       ini_allow_inline_comments,
                       ini_use_stack,
                       ini_stop_on_first_error,
                       ini_allow_no_value,
                       ini_start_comment_prefixes,
                       ini_inline_comment_prefixes,
                       ini_max_line};
    ini_allow_multiline = false;
    ini_allow_bom = false; /* the reader strips it */
    ini_allow_inline_comments = true;
    ini_use_stack = true;
    ini_stop_on_first_error = true;
    ini_allow_no_value = false;
    ini_start_comment_prefixes = vr_start_prefixes;
    ini_inline_comment_prefixes = vr_inline_prefixes;
    ini_max_line = VR_CONFIG_MAX_LINE + 3; /* line, "\r\n", NUL */
    return old;
}

static void vr_ini_restore(const vr_ini_opts *o)
{
    ini_allow_multiline = o->multiline;
    ini_allow_bom = o->bom;
    ini_allow_inline_comments = o->inline_comments;
    ini_use_stack = o->use_stack;
    ini_stop_on_first_error = o->stop_first;
    ini_allow_no_value = o->no_value;
    ini_start_comment_prefixes = o->start_prefixes;
    ini_inline_comment_prefixes = o->inline_prefixes;
    ini_max_line = o->max_line;
}

/* Parse from ps (fp or text set) into ps->cfg. 0 or VSCHED_ECONFIG. */
static int vr_parse_all(vr_parse *ps, char **err)
{
    ps->section = -1;
    vr_ini_opts old = vr_ini_setup();
    int rc = ini_parse_stream(vr_read_line, ps, vr_on_pair, ps);
    vr_ini_restore(&old);
    if (ps->err == NULL && rc != 0)
        ps->err = rc > 0 ? vr_strfmt("%s:%d: syntax error: expected "
                                     "[section], KEY = VALUE or a comment",
                                     ps->cfg->path, rc)
                         : vr_strfmt("%s: cannot parse (inih error %d)",
                                     ps->cfg->path, rc);
    if (ps->err == NULL)
        return 0;
    *err = ps->err;
    return VSCHED_ECONFIG;
}

static vr_config *vr_config_new(const char *path)
{
    vr_config *cfg = vr_xcalloc(1, sizeof *cfg);
    cfg->path = vr_xstrdup(path);
    return cfg;
}

/* Absolute, symlink-free directory of the file `path`, or NULL. */
static char *vr_real_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir;
    if (slash == NULL)
        dir = vr_xstrdup(".");
    else if (slash == path)
        dir = vr_xstrdup("/");
    else
        dir = vr_strfmt("%.*s", (int)(slash - path), path);
    char *real = realpath(dir, NULL);
    free(dir);
    return real;
}

/* Contract: see config.h. On success *out is owned by the caller
 * (vr_config_free); on failure *out is NULL and *err is set. */
int vr_config_load(vr_config **out, const char *path, char **err)
{
    *out = NULL;
    *err = NULL;
    FILE *fp = fopen(path, "r");
    if (fp == NULL) {
        *err = vr_strfmt("%s: cannot read: %s", path, strerror(errno));
        return VSCHED_ECONFIG;
    }
    vr_parse *ps = vr_xcalloc(1, sizeof *ps);
    ps->cfg = vr_config_new(path);
    ps->fp = fp;
    int rc = vr_parse_all(ps, err);
    vr_config *cfg = ps->cfg;
    free(ps);
    fclose(fp);
    if (rc == 0) {
        cfg->dir = vr_real_dir(path);
        if (cfg->dir == NULL) {
            *err = vr_strfmt("%s: cannot resolve its directory: %s", path,
                             strerror(errno));
            rc = VSCHED_ECONFIG;
        }
    }
    if (rc != 0) {
        vr_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

/* Contract: see config.h. `dir` NULL means the current directory; a
 * relative dir is made absolute (lexically) against it. */
int vr_config_load_string(vr_config **out, const char *text, const char *name,
                          const char *dir, char **err)
{
    *out = NULL;
    *err = NULL;
    vr_parse *ps = vr_xcalloc(1, sizeof *ps);
    ps->cfg = vr_config_new(name);
    ps->text = text;
    int rc = vr_parse_all(ps, err);
    vr_config *cfg = ps->cfg;
    free(ps);
    if (rc == 0) {
        cfg->dir = vr_path_join(NULL, dir != NULL ? dir : ".");
        if (cfg->dir == NULL) {
            *err = vr_strfmt("%s: cannot resolve its directory: %s", name,
                             strerror(errno));
            rc = VSCHED_ECONFIG;
        }
    }
    if (rc != 0) {
        vr_config_free(cfg);
        return rc;
    }
    *out = cfg;
    return 0;
}

/* ---- overrides and queries ------------------------------------------- */

/* Contract: see config.h. The value is trimmed like a file value. The
 * overridden entry keeps its file line (0 for a new key) and is marked as
 * coming from --set (vr_config_from_set). */
int vr_config_set(vr_config *cfg, const char *assignment, char **err)
{
    *err = NULL;
    const char *eq = strchr(assignment, '=');
    const char *dot = NULL;
    for (const char *p = assignment; eq != NULL && p < eq; p++) {
        if (isspace((unsigned char)*p) || *p == '[' || *p == ']')
            eq = NULL;
        else if (*p == '.')
            dot = p;
    }
    if (eq == NULL || dot == NULL || dot == assignment || dot + 1 == eq) {
        *err = vr_strfmt("--set: expected SECTION.KEY=VALUE, got '%s'",
                         assignment);
        return VSCHED_EINVAL;
    }
    char *section = vr_strfmt("%.*s", (int)(dot - assignment), assignment);
    char *key = vr_strfmt("%.*s", (int)(eq - dot - 1), dot + 1);
    const char *v = eq + 1;
    while (isspace((unsigned char)*v))
        v++;
    size_t vlen = strlen(v);
    while (vlen > 0 && isspace((unsigned char)v[vlen - 1]))
        vlen--;
    char *value = vr_strfmt("%.*s", (int)vlen, v);

    long ei = vr_find_entry(cfg, section, key);
    if (ei >= 0) {
        free((char *)cfg->entries[ei].value);
        cfg->entries[ei].value = value;
        cfg->from_set[ei] = 1;
    } else {
        long si = vr_find_section(cfg, section);
        if (si < 0)
            si = (long)vr_add_section(cfg, section, 0);
        vr_add_entry(cfg, (size_t)si, key, value, 0, 1);
        free(value);
    }
    free(section);
    free(key);
    return 0;
}

/* Contract: see config.h; borrowed, valid until the key is --set again or
 * cfg is freed. */
const char *vr_config_get(const vr_config *cfg, const char *section,
                          const char *key)
{
    long i = vr_find_entry(cfg, section, key);
    return i >= 0 ? cfg->entries[i].value : NULL;
}

/* Contract: see config.h. */
unsigned vr_config_line(const vr_config *cfg, const char *section,
                        const char *key)
{
    if (key == NULL) {
        long si = vr_find_section(cfg, section);
        return si >= 0 ? cfg->sections[si].line : 0;
    }
    long i = vr_find_entry(cfg, section, key);
    return i >= 0 ? cfg->entries[i].line : 0;
}

/* Contract: 1 when the current value of section.key came from --set,
 * else 0 (also when absent). */
int vr_config_from_set(const vr_config *cfg, const char *section,
                       const char *key)
{
    long i = vr_find_entry(cfg, section, key);
    return i >= 0 && cfg->from_set[i];
}

/* Contract: see config.h. */
int vr_config_has_section(const vr_config *cfg, const char *section)
{
    return vr_find_section(cfg, section) >= 0;
}

/* Contract: see config.h; valid until the next vr_config_set. */
const vr_config_entry *vr_config_entries(const vr_config *cfg, size_t *n)
{
    *n = cfg->n_entries;
    return cfg->entries;
}

/* Contract: see config.h; valid until the next vr_config_set. */
const char *const *vr_config_sections(const vr_config *cfg, size_t *n)
{
    *n = cfg->n_sections;
    return (const char *const *)cfg->names;
}

/* Contract: indices into vr_config_entries() of the keys of `section`, in
 * order (--set additions last); NULL with *n = 0 when the section is
 * absent. Owned by cfg, valid until the next vr_config_set. */
const size_t *vr_config_section_entries(const vr_config *cfg,
                                        const char *section, size_t *n)
{
    long si = vr_find_section(cfg, section);
    if (si < 0) {
        *n = 0;
        return NULL;
    }
    *n = cfg->sections[si].n_ents;
    return cfg->sections[si].ents;
}

/* Contract: see config.h; owned by cfg. */
const char *vr_config_path(const vr_config *cfg)
{
    return cfg->path;
}

/* Contract: see config.h; owned by cfg, absolute, no trailing '/'. */
const char *vr_config_dir(const vr_config *cfg)
{
    return cfg->dir;
}
