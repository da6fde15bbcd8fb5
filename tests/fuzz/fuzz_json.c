/*
 * fuzz_json -- the JSON writer's string escaping (src/host/common/json.c)
 * through a parser: the bytes written for any input are one JSON string
 * literal (RFC 8259: no raw control character, only the defined escapes,
 * \u surrogates paired) whose decoded value is valid UTF-8 and, when the
 * input was valid UTF-8 without NUL, equals the input byte for byte.
 */
#include <string.h>

#include "common/json.h"
#include "fuzz.h"

static int hexval(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

static size_t put_utf8(char *o, unsigned long cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18);
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* Four hex digits at s, or -1. */
static long hex4(const char *s, const char *end)
{
    if (end - s < 4)
        return -1;
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval((unsigned char)s[i]);
        if (h < 0)
            return -1;
        v = v << 4 | h;
    }
    return v;
}

/* Parse the string literal [s, end) strictly into out (*on bytes);
 * 0 when it is exactly one valid literal. */
static int parse_string(const char *s, const char *end, char *out, size_t *on)
{
    size_t o = 0;
    if (s >= end || *s++ != '"')
        return -1;
    while (s < end && *s != '"') {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20)
            return -1; /* a raw control character */
        if (c != '\\') {
            out[o++] = (char)c;
            s++;
            continue;
        }
        if (++s >= end)
            return -1;
        char e = *s++;
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e != '\0' && simple != NULL) {
            out[o++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            continue;
        }
        if (e != 'u')
            return -1;
        long u = hex4(s, end);
        if (u < 0)
            return -1;
        s += 4;
        unsigned long cp = (unsigned long)u;
        if (u >= 0xd800 && u <= 0xdbff) {
            if (end - s < 6 || s[0] != '\\' || s[1] != 'u')
                return -1;
            long lo = hex4(s + 2, end);
            if (lo < 0xdc00 || lo > 0xdfff)
                return -1;
            s += 6;
            cp = 0x10000 + (((unsigned long)u - 0xd800) << 10) +
                 ((unsigned long)lo - 0xdc00);
        } else if (u >= 0xdc00 && u <= 0xdfff) {
            return -1; /* a lone low surrogate */
        }
        o += put_utf8(out + o, cp);
    }
    if (s >= end || *s != '"' || s + 1 != end)
        return -1;
    *on = o;
    return 0;
}

/* 1 when [s, s+n) is valid UTF-8 (no overlong form, no surrogate). */
static int valid_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t k = c < 0x80                 ? 1
                   : c >= 0xc2 && c <= 0xdf ? 2
                   : c >= 0xe0 && c <= 0xef ? 3
                   : c >= 0xf0 && c <= 0xf4 ? 4
                                            : 0;
        if (k == 0 || i + k > n)
            return 0;
        unsigned long cp = k == 1 ? c : (unsigned long)(c & (0x7f >> k));
        for (size_t j = 1; j < k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (s[i + j] & 0x3f);
        }
        static const unsigned long min[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        i += k;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = NULL;
    size_t blen = 0;
    FILE *f = open_memstream(&buf, &blen);
    FUZZ_CHECK(f != NULL);
    vr_json_write_string(f, (const char *)data, size);
    FUZZ_CHECK(fclose(f) == 0);
    char *out = malloc(blen + 1);
    size_t on = 0;
    FUZZ_CHECK(parse_string(buf, buf + blen, out, &on) == 0);
    FUZZ_CHECK(valid_utf8((const unsigned char *)out, on));
    if (valid_utf8(data, size) && memchr(data, '\0', size) == NULL) {
        FUZZ_CHECK(on == size);
        FUZZ_CHECK(memcmp(out, data, size) == 0);
    }
    free(out);
    free(buf);
    return 0;
}
