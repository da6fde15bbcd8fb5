/*
 * fuzz_depfile -- both depfile parsers (cc's and cmd's) on any bytes:
 * each returns 0 with words that are non-empty and NUL-free, or ENOMEM
 * with nothing; and a rule written back from cc's words (each escaped as
 * make wants) parses to the same words.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../../plugins/cc/cc.h"
#include "../../plugins/cmd/cmd.h"
#include "fuzz.h"

/* What the parsers' files need of the plugins' helper library
 * (plugins/common/ctx.c), for the name resolution they also hold; the
 * parsers call none of these. */
char *vp_host_strdup(const vsched_ctx *ctx, const char *s)
{
    (void)ctx;
    return strdup(s);
}

char *vp_strfmt(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

/* Write `w` escaped for a depfile as gcc does: "\ " for a blank, "\#",
 * "$$" for '$'. (Words holding a backslash are left out of the round
 * trip: make's rules for those depend on what follows.) */
static size_t put_word(char *out, const char *w)
{
    size_t n = 0;
    for (const char *p = w; *p; p++) {
        if (*p == ' ' || *p == '\t' || *p == '#')
            out[n++] = '\\';
        else if (*p == '$')
            out[n++] = '$';
        out[n++] = *p;
    }
    return n;
}

static void free_words(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char **v = NULL;
    size_t n = 0;
    if (cc__depfile_parse(text, size, &v, &n) == 0) {
        size_t len = 8;
        for (size_t i = 0; i < n; i++) {
            FUZZ_CHECK(v[i] != NULL && v[i][0] != '\0');
            len += 2 * strlen(v[i]) + 1;
        }
        /* the round trip: "t: w1 w2 ..." parses to the same words, as
         * long as no word holds a character make cannot escape */
        int plain = 1;
        for (size_t i = 0; i < n && plain; i++)
            plain = strpbrk(v[i], "\n\r:\\") == NULL;
        if (plain) {
            char *rule = malloc(len + 4);
            size_t at = 0;
            memcpy(rule, "t:", 2);
            at = 2;
            for (size_t i = 0; i < n; i++) {
                rule[at++] = ' ';
                at += put_word(rule + at, v[i]);
            }
            rule[at++] = '\n';
            char **w = NULL;
            size_t m = 0;
            FUZZ_CHECK(cc__depfile_parse(rule, at, &w, &m) == 0);
            FUZZ_CHECK(m == n);
            for (size_t i = 0; i < n && i < m; i++)
                FUZZ_CHECK(strcmp(v[i], w[i]) == 0);
            free_words(w, m);
            free(rule);
        }
        free_words(v, n);
    } else {
        FUZZ_CHECK(v == NULL && n == 0);
    }
    v = NULL;
    n = 0;
    if (cmd__depfile_parse(text, size, &v, &n) == 0) {
        for (size_t i = 0; i < n; i++)
            FUZZ_CHECK(v[i] != NULL);
        cmd__strv_free(v, n);
    } else {
        FUZZ_CHECK(v == NULL && n == 0);
    }
    return 0;
}
