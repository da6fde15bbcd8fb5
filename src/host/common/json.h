/*
 * json -- a streaming JSON writer (RFC 8259) for vsched-run's reports.
 *
 * The writer keeps the nesting and the commas; the caller says what comes
 * next. Every string is escaped: '"', '\\' and every control byte
 * (U+0000..U+001F, and DEL) become escapes, valid UTF-8 passes through,
 * and each byte that does not start a valid UTF-8 sequence (a file name
 * in another encoding, say) becomes U+FFFD, so the output is always valid
 * JSON and valid UTF-8 whatever the names hold.
 *
 * Layout: containers nested at most `inline_depth` deep are written one
 * element per line with two-space indentation; deeper ones on one line
 * (a report's per-file objects are one line each).
 *
 * A misuse (a value where a key is due, unbalanced ends, nesting beyond
 * VR_JSON_MAX_DEPTH) or a failed write is remembered and reported by
 * vr_json_finish; nothing aborts. Not thread-safe: one writer, one thread.
 */
#ifndef VSCHED_HOST_JSON_H
#define VSCHED_HOST_JSON_H

#include <stdint.h>
#include <stdio.h>

#define VR_JSON_MAX_DEPTH 32

typedef struct vr_json vr_json;

/* A writer onto `out` (borrowed). Never NULL (aborts on exhaustion). */
vr_json *vr_json_new(FILE *out, int inline_depth);

/* Free the writer. Returns 0 when the document was complete and every
 * write succeeded, VSCHED_EIO for a failed write, VSCHED_EINVAL for a
 * misuse or an unfinished document. Does not close `out`. */
int vr_json_finish(vr_json *j);

void vr_json_object(vr_json *j);
void vr_json_end_object(vr_json *j);
void vr_json_array(vr_json *j);
void vr_json_end_array(vr_json *j);

/* The key of the next member (inside an object only). */
void vr_json_key(vr_json *j, const char *key);

/* Values. A NULL string is written as null. */
void vr_json_string(vr_json *j, const char *s);
void vr_json_int(vr_json *j, long long v);
void vr_json_uint(vr_json *j, unsigned long long v);
void vr_json_bool(vr_json *j, int v);
void vr_json_null(vr_json *j);

/* Write `s` (n bytes) escaped as a JSON string, quotes included. */
void vr_json_write_string(FILE *out, const char *s, size_t n);

#endif
