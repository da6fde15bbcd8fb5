/*
 * json -- the streaming JSON writer; see json.h.
 */
#include <stdlib.h>
#include <string.h>

#include <vsched/plugin.h>

#include "common/json.h"
#include "common/util.h"

/* One open container. */
typedef struct vr_json_level {
    char kind;      /* '{' or '[' */
    int count;      /* members written */
    int want_value; /* object: a key was written, its value is due */
} vr_json_level;

struct vr_json {
    FILE *out;
    int inline_depth;
    int depth;
    int done;  /* the top-level value is complete */
    int error; /* 0, VSCHED_EIO or VSCHED_EINVAL: the first problem */
    vr_json_level st[VR_JSON_MAX_DEPTH];
};

/* Contract: see json.h. */
vr_json *vr_json_new(FILE *out, int inline_depth)
{
    vr_json *j = vr_xcalloc(1, sizeof *j);
    j->out = out;
    j->inline_depth = inline_depth;
    return j;
}

static void vr_json_fail(vr_json *j, int status)
{
    if (j->error == 0)
        j->error = status;
}

/* Line break and indentation before an element at the current depth. */
static void vr_json_break(vr_json *j)
{
    if (j->depth > j->inline_depth) {
        return;
    }
    fputc('\n', j->out);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->out);
}

/* Before any value: the separator, or misuse. */
static int vr_json_before_value(vr_json *j)
{
    if (j->depth == 0) {
        if (j->done) {
            vr_json_fail(j, VSCHED_EINVAL);
            return -1;
        }
        return 0;
    }
    vr_json_level *l = &j->st[j->depth - 1];
    if (l->kind == '{') {
        if (!l->want_value) {
            vr_json_fail(j, VSCHED_EINVAL); /* a value without a key */
            return -1;
        }
        l->want_value = 0;
        return 0;
    }
    if (l->count++ > 0)
        fputc(',', j->out);
    if (j->depth > j->inline_depth && l->count > 1)
        fputc(' ', j->out);
    vr_json_break(j);
    return 0;
}

static void vr_json_after_value(vr_json *j)
{
    if (j->depth == 0) {
        j->done = 1;
        fputc('\n', j->out);
    }
}

static void vr_json_open(vr_json *j, char kind)
{
    if (vr_json_before_value(j) != 0)
        return;
    if (j->depth == VR_JSON_MAX_DEPTH) {
        vr_json_fail(j, VSCHED_EINVAL);
        return;
    }
    fputc(kind, j->out);
    j->st[j->depth++] = (vr_json_level){kind, 0, 0};
}

static void vr_json_close(vr_json *j, char kind)
{
    if (j->depth == 0 || j->st[j->depth - 1].kind != kind ||
        j->st[j->depth - 1].want_value) {
        vr_json_fail(j, VSCHED_EINVAL);
        return;
    }
    int had = j->st[j->depth - 1].count > 0;
    j->depth--;
    if (had && j->depth + 1 <= j->inline_depth)
        vr_json_break(j);
    fputc(kind == '{' ? '}' : ']', j->out);
    vr_json_after_value(j);
}

/* Contract: see json.h. */
void vr_json_object(vr_json *j)
{
    vr_json_open(j, '{');
}

/* Contract: see json.h. */
void vr_json_end_object(vr_json *j)
{
    vr_json_close(j, '{');
}

/* Contract: see json.h. */
void vr_json_array(vr_json *j)
{
    vr_json_open(j, '[');
}

/* Contract: see json.h. */
void vr_json_end_array(vr_json *j)
{
    vr_json_close(j, '[');
}

/* Contract: see json.h. */
void vr_json_key(vr_json *j, const char *key)
{
    if (j->depth == 0 || j->st[j->depth - 1].kind != '{' ||
        j->st[j->depth - 1].want_value || key == NULL) {
        vr_json_fail(j, VSCHED_EINVAL);
        return;
    }
    vr_json_level *l = &j->st[j->depth - 1];
    if (l->count++ > 0)
        fputc(',', j->out);
    if (j->depth > j->inline_depth && l->count > 1)
        fputc(' ', j->out);
    vr_json_break(j);
    vr_json_write_string(j->out, key, strlen(key));
    fputs(": ", j->out);
    l->want_value = 1;
}

/* Length of the valid UTF-8 sequence at p (n bytes left), or 0 when the
 * byte at p does not start one (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
static size_t vr_utf8_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (n < len || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return len;
}

/* Contract: see json.h. */
void vr_json_write_string(FILE *out, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            fputc('\\', out);
            fputc(c, out);
            i++;
        } else if (c < 0x20 || c == 0x7F) {
            static const char short_esc[] = "btnvfr"; /* 8..13 */
            if (c >= 8 && c <= 13 && c != 11)
                fprintf(out, "\\%c", short_esc[c - 8]);
            else
                fprintf(out, "\\u%04x", c);
            i++;
        } else {
            size_t len = vr_utf8_len(p + i, n - i);
            if (len == 0) {
                fputs("\\ufffd", out); /* not UTF-8: the replacement */
                i++;
            } else {
                fwrite(p + i, 1, len, out);
                i += len;
            }
        }
    }
    fputc('"', out);
}

/* Contract: see json.h. */
void vr_json_string(vr_json *j, const char *s)
{
    if (s == NULL) {
        vr_json_null(j);
        return;
    }
    if (vr_json_before_value(j) != 0)
        return;
    vr_json_write_string(j->out, s, strlen(s));
    vr_json_after_value(j);
}

/* Contract: see json.h. */
void vr_json_int(vr_json *j, long long v)
{
    if (vr_json_before_value(j) != 0)
        return;
    fprintf(j->out, "%lld", v);
    vr_json_after_value(j);
}

/* Contract: see json.h. */
void vr_json_uint(vr_json *j, unsigned long long v)
{
    if (vr_json_before_value(j) != 0)
        return;
    fprintf(j->out, "%llu", v);
    vr_json_after_value(j);
}

/* Contract: see json.h. */
void vr_json_bool(vr_json *j, int v)
{
    if (vr_json_before_value(j) != 0)
        return;
    fputs(v ? "true" : "false", j->out);
    vr_json_after_value(j);
}

/* Contract: see json.h. */
void vr_json_null(vr_json *j)
{
    if (vr_json_before_value(j) != 0)
        return;
    fputs("null", j->out);
    vr_json_after_value(j);
}

/* Contract: see json.h. */
int vr_json_finish(vr_json *j)
{
    int rc = j->error;
    if (rc == 0 && (!j->done || j->depth != 0))
        rc = VSCHED_EINVAL;
    if (rc == 0 && (fflush(j->out) != 0 || ferror(j->out)))
        rc = VSCHED_EIO;
    free(j);
    return rc;
}
