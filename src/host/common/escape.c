/*
 * escape -- names made safe for a terminal; see escape.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/escape.h"
#include "common/util.h"

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when invalid
 * (overlong forms, surrogates and code points past U+10FFFF included).
 * *cp is the code point. */
static size_t vr_utf8_seq(const unsigned char *s, size_t len, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
        n = 2, v = c & 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3, v = c & 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4, v = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (n > len)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0;
    *cp = v;
    return n;
}

/* Append `n` bytes of `p` at out+*at when they fit; *at grows anyway. */
static void vr_put(char *out, size_t cap, size_t *at, const char *p, size_t n)
{
    if (*at < cap) {
        size_t room = cap - *at;
        memcpy(out + *at, p, n < room ? n : room);
    }
    *at += n;
}

/* Contract: see escape.h. */
size_t vr_escape(char *out, size_t cap, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    size_t at = 0;
    for (size_t i = 0; i < len;) {
        uint32_t cp = 0;
        size_t n = vr_utf8_seq(u + i, len - i, &cp);
        char e[4] = {'\\', 0, 0, 0};
        size_t en = 2;
        if (n == 0 || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f)) {
            /* one byte at a time: a C1 control's two bytes both */
            size_t k = n == 0 ? 1 : n;
            for (size_t j = 0; j < k; j++) {
                unsigned char b = u[i + j];
                switch (b) {
                case '\n':
                    e[1] = 'n';
                    en = 2;
                    break;
                case '\t':
                    e[1] = 't';
                    en = 2;
                    break;
                case '\r':
                    e[1] = 'r';
                    en = 2;
                    break;
                case 0x1b:
                    e[1] = 'e';
                    en = 2;
                    break;
                default:
                    e[1] = 'x', e[2] = hex[b >> 4], e[3] = hex[b & 15];
                    en = 4;
                }
                vr_put(out, cap, &at, e, en);
            }
            i += k;
        } else if (cp == '\\') {
            e[1] = '\\';
            vr_put(out, cap, &at, e, 2);
            i++;
        } else {
            vr_put(out, cap, &at, s + i, n);
            i += n;
        }
    }
    if (cap > 0)
        out[at < cap ? at : cap - 1] = '\0';
    return at;
}

/* Contract: see escape.h. */
const char *vr_esc_name(vr_esc *e, const char *s)
{
    vr_esc_done(e);
    if (s == NULL)
        return "(null)";
    size_t len = strlen(s);
    size_t need = vr_escape(NULL, 0, s, len);
    if (need == len && memchr(s, '\\', len) == NULL)
        return s; /* nothing was escaped: same length, no backslash added */
    e->heap = vr_xmalloc(need + 1);
    vr_escape(e->heap, need + 1, s, len);
    return e->heap;
}

/* Contract: see escape.h. */
void vr_esc_done(vr_esc *e)
{
    free(e->heap);
    e->heap = NULL;
}

/* Contract: see escape.h. */
int vr_name_is_plain(const char *s)
{
    if (s == NULL)
        return 1;
    size_t len = strlen(s);
    return vr_escape(NULL, 0, s, len) == len; /* an escape adds a byte */
}

/* Contract: see escape.h. */
char *vr_escape_name(const char *s)
{
    s = s != NULL ? s : "";
    size_t len = strlen(s);
    size_t need = vr_escape(NULL, 0, s, len);
    char *d = vr_xmalloc(need + 1);
    vr_escape(d, need + 1, s, len);
    return d;
}

/* Contract: see escape.h. */
void vr_put_name(FILE *out, const char *s)
{
    vr_esc e = {0};
    if (s != NULL)
        fputs(vr_esc_name(&e, s), out);
    vr_esc_done(&e);
}
