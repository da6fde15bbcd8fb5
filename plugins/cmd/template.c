/*
 * template.c -- the argv templates of the `cmd` executor.
 *
 * A template is parsed once, at create(), into words of segments (literal
 * text and placeholder ids), and every mistake is reported then with its
 * column. Expansion is then a pure function of the parsed template and
 * one value per placeholder: no word splitting of values (a source name
 * with spaces stays one argv word), no globbing, no shell. Only a shell
 * template (`shell = true`) meets a shell, and its values reach it
 * single-quoted.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"

/* Contract in cmd.h. */
void cmd__tpl_free(cmd_tpl *t)
{
    free(t->seg);
    free(t->word);
    free(t->lit);
    memset(t, 0, sizeof *t);
}

/* Contract in cmd.h. */
int cmd__tpl_uses(const cmd_tpl *t, int ph)
{
    return ph >= 0 && ph < 64 && (t->uses >> ph & 1u) != 0;
}

/* ---- parsing ------------------------------------------------------------- */

/* The parser's state: the text, the segments so far, the literal being
 * collected. */
typedef struct tpl_parser {
    const char *text;
    unsigned forbid;
    cmd_tpl *t;
    size_t cap_seg, cap_word;
    size_t lit_n;     /* bytes used in t->lit */
    size_t run_start; /* start in t->lit of the literal being collected */
    int in_word;      /* a word has begun (text, quotes or placeholder) */
    int list_ph;      /* the list placeholder of this word, or -1 */
    int oom;
    char *why;
    size_t cap;
} tpl_parser;

static int tpl_push_seg(tpl_parser *p, cmd_seg s)
{
    cmd_tpl *t = p->t;
    if (t->n_seg == p->cap_seg) {
        size_t cap = p->cap_seg ? 2 * p->cap_seg : 16;
        cmd_seg *v = realloc(t->seg, cap * sizeof *v);
        if (v == NULL)
            return p->oom = 1, -1;
        t->seg = v;
        p->cap_seg = cap;
    }
    t->seg[t->n_seg++] = s;
    return 0;
}

/* End the literal run collected so far as a segment. */
static void tpl_flush(tpl_parser *p)
{
    size_t n = p->lit_n - p->run_start;
    if (n > 0)
        tpl_push_seg(p, (cmd_seg){-1, p->t->lit + p->run_start, n});
    p->run_start = p->lit_n;
}

/* Record that a word starts at the current segment. */
static void tpl_begin_word(tpl_parser *p)
{
    cmd_tpl *t = p->t;
    if (p->in_word)
        return;
    p->in_word = 1;
    p->list_ph = -1;
    if (t->n_word + 2 > p->cap_word) {
        size_t cap = p->cap_word ? 2 * p->cap_word : 16;
        size_t *v = realloc(t->word, cap * sizeof *v);
        if (v == NULL) {
            p->oom = 1;
            return;
        }
        t->word = v;
        p->cap_word = cap;
    }
    t->word[t->n_word++] = t->n_seg;
    t->word[t->n_word] = t->n_seg;
}

static void tpl_end_word(tpl_parser *p)
{
    if (!p->in_word)
        return;
    tpl_flush(p);
    p->t->word[p->t->n_word] = p->t->n_seg;
    p->in_word = 0;
}

__attribute__((format(printf, 2, 3))) static int tpl_fail(tpl_parser *p,
                                                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, p->cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* The list of every placeholder name, for "unknown placeholder". */
static void tpl_known(char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < cmd__n_placeholders && o < cap; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s{%s}", i ? ", " : "",
                              cmd__placeholders[i].name);
}

/* A placeholder opened at text[at] ('{'); *end is set past its '}'. */
static int tpl_placeholder(tpl_parser *p, size_t at, size_t *end)
{
    const char *s = p->text + at + 1;
    size_t n = strcspn(s, "{}");
    if (s[n] != '}')
        return tpl_fail(p,
                        "'{' at column %zu is not closed (write {{ for a "
                        "literal brace)",
                        at + 1);
    if (n == 0)
        return tpl_fail(p, "empty placeholder '{}' at column %zu", at + 1);
    char name[64];
    int ph = -1;
    if (n < sizeof name) {
        memcpy(name, s, n);
        name[n] = '\0';
        for (size_t i = 0; i < cmd__n_placeholders && ph < 0; i++)
            if (strcmp(cmd__placeholders[i].name, name) == 0)
                ph = (int)i;
    } else {
        snprintf(name, sizeof name, "%.40s...", s);
    }
    if (ph < 0) {
        char known[512];
        tpl_known(known, sizeof known);
        return tpl_fail(p,
                        "unknown placeholder '{%s}' at column %zu (known: %s)",
                        name, at + 1, known);
    }
    const cmd_ph *def = &cmd__placeholders[ph];
    if (def->flags & p->forbid)
        return tpl_fail(p,
                        "placeholder '{%s}' at column %zu has no value here: "
                        "only the Artifact stage has a profile and an output",
                        name, at + 1);
    tpl_begin_word(p);
    if ((def->flags & CMD_PH_LIST) && !p->t->shell) {
        if (p->list_ph >= 0)
            return tpl_fail(p,
                            "two list placeholders in one word at column %zu "
                            "('{%s}' and '{%s}')",
                            at + 1, cmd__placeholders[p->list_ph].name, name);
        p->list_ph = ph;
    }
    tpl_flush(p);
    tpl_push_seg(p, (cmd_seg){ph, NULL, 0});
    p->t->uses |= (uint64_t)1 << ph;
    *end = at + 1 + n + 1;
    return 0;
}

static int tpl_is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Parse the text; 0 or -1 with p->why (or p->oom). */
static int tpl_parse(tpl_parser *p)
{
    const char *s = p->text;
    char quote = 0;
    size_t qcol = 0;
    for (size_t i = 0; s[i] != '\0';) {
        char c = s[i];
        if (!p->t->shell && quote == 0 && tpl_is_blank(c)) {
            tpl_end_word(p);
            i++;
        } else if (!p->t->shell && (c == '\'' || c == '"') &&
                   (quote == 0 || quote == c)) {
            tpl_begin_word(p); /* '' is an empty word */
            quote = quote ? 0 : c;
            qcol = i + 1;
            i++;
        } else if ((c == '{' || c == '}') && s[i + 1] == c) {
            tpl_begin_word(p);
            p->t->lit[p->lit_n++] = c;
            i += 2;
        } else if (c == '}') {
            return tpl_fail(p,
                            "'}' at column %zu has no '{' (write }} for a "
                            "literal brace)",
                            i + 1);
        } else if (c == '{') {
            if (tpl_placeholder(p, i, &i) != 0)
                return -1;
        } else {
            tpl_begin_word(p);
            p->t->lit[p->lit_n++] = c;
            i++;
        }
        if (p->oom)
            return -1;
    }
    if (quote != 0)
        return tpl_fail(p, "the %s at column %zu is not closed",
                        quote == '"' ? "double quote" : "single quote", qcol);
    tpl_end_word(p);
    if (p->t->n_word == 0)
        return tpl_fail(p, "the template has no word to run");
    return p->oom ? -1 : 0;
}

/* Contract in cmd.h. */
int cmd__tpl_parse(const char *text, int shell, unsigned forbid, cmd_tpl *t,
                   char *why, size_t cap)
{
    memset(t, 0, sizeof *t);
    t->shell = shell != 0;
    size_t len = strlen(text);
    if ((t->lit = malloc(len + 1)) == NULL) /* literals only shrink */
        return VSCHED_ENOMEM;
    tpl_parser p = {text, forbid, t, 0, 0, 0, 0, 0, -1, 0, why, cap};
    if (shell) /* the whole string is one word */
        tpl_begin_word(&p);
    int rc = tpl_parse(&p);
    if (rc == 0 && shell && len == strspn(text, " \t\r\n")) {
        snprintf(why, cap, "the template has no word to run");
        rc = -1;
    }
    if (rc != 0) {
        cmd__tpl_free(t);
        return p.oom ? VSCHED_ENOMEM : VSCHED_ECONFIG;
    }
    return VSCHED_OK;
}

/* ---- expansion ----------------------------------------------------------- */

/* A growable byte string; `oom` sticks. */
typedef struct tpl_buf {
    char *p;
    size_t n, cap;
    int oom;
} tpl_buf;

static void buf_add(tpl_buf *b, const char *s, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (p == NULL) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

/* `s` single-quoted for /bin/sh ("it's" -> 'it'\''s'). */
static void buf_add_quoted(tpl_buf *b, const char *s, size_t n)
{
    buf_add(b, "'", 1);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\'')
            buf_add(b, "'\\''", 4);
        else
            buf_add(b, s + i, 1);
    }
    buf_add(b, "'", 1);
}

/* The words of a LIST value: each is [*at, *at + len) of `v`; returns
 * the next word's length and advances *pos, or 0 at the end. */
static size_t list_next(const char *v, size_t *pos, const char **at)
{
    size_t i = *pos;
    while (v[i] != '\0' && tpl_is_blank(v[i]))
        i++;
    size_t n = 0;
    while (v[i + n] != '\0' && !tpl_is_blank(v[i + n]))
        n++;
    *at = v + i;
    *pos = i + n;
    return n;
}

/* A growing argv; `oom` sticks. */
typedef struct tpl_argv {
    char **v;
    size_t n, cap;
    int oom;
} tpl_argv;

static void argv_push(tpl_argv *a, char *s)
{
    if (s == NULL || a->oom) {
        a->oom = 1;
        free(s);
        return;
    }
    if (a->n + 2 > a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 16;
        char **v = realloc(a->v, cap * sizeof *v);
        if (v == NULL) {
            a->oom = 1;
            free(s);
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = s;
    a->v[a->n] = NULL;
}

/* Append the segments [from, to) of `t` to `b`, the list segment `lseg`
 * replaced by [el, el + el_n). */
static void word_text(const cmd_tpl *t, const char *const *vals, size_t from,
                      size_t to, size_t lseg, const char *el, size_t el_n,
                      tpl_buf *b)
{
    buf_add(b, "", 0); /* an empty word is still a word */
    for (size_t k = from; k < to; k++) {
        const cmd_seg *sg = &t->seg[k];
        if (sg->ph < 0) {
            buf_add(b, sg->text, sg->len);
        } else if (k == lseg) {
            buf_add(b, el, el_n);
        } else {
            const char *v = vals[sg->ph] != NULL ? vals[sg->ph] : "";
            buf_add(b, v, strlen(v));
        }
    }
}

/* Expand word w (argv form) into `a`. */
static void expand_word(const cmd_tpl *t, const char *const *vals, size_t w,
                        tpl_argv *a)
{
    size_t from = t->word[w], to = t->word[w + 1], lseg = (size_t)-1;
    for (size_t k = from; k < to; k++)
        if (t->seg[k].ph >= 0 &&
            (cmd__placeholders[t->seg[k].ph].flags & CMD_PH_LIST))
            lseg = k;
    if (lseg == (size_t)-1) {
        tpl_buf b = {0};
        word_text(t, vals, from, to, lseg, NULL, 0, &b);
        if (b.oom)
            free(b.p);
        argv_push(a, b.oom ? NULL : b.p);
        return;
    }
    const char *v = vals[t->seg[lseg].ph] != NULL ? vals[t->seg[lseg].ph] : "",
               *el;
    size_t pos = 0, n;
    while ((n = list_next(v, &pos, &el)) > 0) {
        tpl_buf b = {0};
        word_text(t, vals, from, to, lseg, el, n, &b);
        if (b.oom)
            free(b.p);
        argv_push(a, b.oom ? NULL : b.p);
    }
}

/* The shell string of a shell template. */
static char *shell_string(const cmd_tpl *t, const char *const *vals)
{
    tpl_buf b = {0};
    buf_add(&b, "", 0);
    for (size_t k = 0; k < t->n_seg; k++) {
        const cmd_seg *sg = &t->seg[k];
        const char *v = sg->ph >= 0 && vals[sg->ph] ? vals[sg->ph] : "", *el;
        if (sg->ph < 0) {
            buf_add(&b, sg->text, sg->len);
        } else if (cmd__placeholders[sg->ph].flags & CMD_PH_LIST) {
            size_t pos = 0, n;
            for (int first = 1; (n = list_next(v, &pos, &el)) > 0; first = 0) {
                if (!first)
                    buf_add(&b, " ", 1);
                buf_add_quoted(&b, el, n);
            }
        } else {
            buf_add_quoted(&b, v, strlen(v));
        }
    }
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}

/* Contract in cmd.h. */
int cmd__tpl_expand(const cmd_tpl *t, const char *const *vals, char ***argv)
{
    tpl_argv a = {calloc(16, sizeof(char *)), 0, 16, 0};
    *argv = NULL;
    if (a.v == NULL)
        return VSCHED_ENOMEM;
    if (t->shell) {
        argv_push(&a, strdup("/bin/sh"));
        argv_push(&a, strdup("-c"));
        argv_push(&a, shell_string(t, vals));
    } else {
        for (size_t w = 0; w < t->n_word; w++)
            expand_word(t, vals, w, &a);
    }
    if (a.oom) {
        cmd__argv_free(a.v);
        return VSCHED_ENOMEM;
    }
    *argv = a.v;
    return VSCHED_OK;
}

/* Contract in cmd.h. */
void cmd__argv_free(char **argv)
{
    for (size_t i = 0; argv != NULL && argv[i] != NULL; i++)
        free(argv[i]);
    free(argv);
}
