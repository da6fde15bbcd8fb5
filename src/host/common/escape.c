/*
 * escape -- printable names; see escape.h.
 */
#include <stdlib.h>
#include <string.h>

#include "common/escape.h"
#include "common/util.h"

/* The escape of byte c into buf (at most 5 bytes and a NUL); 0 when c
 * stands for itself. */
static int escape_byte(unsigned char c, char buf[6])
{
    if (c == '\\')
        return (void)strcpy(buf, "\\\\"), 1;
    if (c == '\n')
        return (void)strcpy(buf, "\\n"), 1;
    if (c == '\r')
        return (void)strcpy(buf, "\\r"), 1;
    if (c == '\t')
        return (void)strcpy(buf, "\\t"), 1;
    if (c < 0x20 || c == 0x7f) {
        static const char hex[] = "0123456789abcdef";
        buf[0] = '\\';
        buf[1] = 'x';
        buf[2] = hex[c >> 4];
        buf[3] = hex[c & 15];
        buf[4] = '\0';
        return 1;
    }
    return 0;
}

/* Contract: see escape.h. */
int vr_name_is_plain(const char *s)
{
    char buf[6];
    for (const unsigned char *p = (const unsigned char *)(s ? s : "");
         *p != '\0'; p++)
        if (escape_byte(*p, buf))
            return 0;
    return 1;
}

/* Contract: see escape.h. */
char *vr_escape_name(const char *s)
{
    s = s != NULL ? s : "";
    size_t len = strlen(s);
    char *d = vr_xmalloc(len * 4 + 1), *q = d, buf[6];
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0';
         p++) {
        if (escape_byte(*p, buf)) {
            size_t n = strlen(buf);
            memcpy(q, buf, n);
            q += n;
        } else {
            *q++ = (char)*p;
        }
    }
    *q = '\0';
    return d;
}

/* Contract: see escape.h. */
void vr_put_name(FILE *out, const char *s)
{
    if (vr_name_is_plain(s)) {
        fputs(s != NULL ? s : "", out);
        return;
    }
    char *e = vr_escape_name(s);
    fputs(e, out);
    free(e);
}
