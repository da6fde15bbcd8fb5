/*
 * escape -- names made safe for a terminal and for line-oriented output.
 *
 * A file name may hold any byte but '/' and NUL: a newline would split
 * one progress line into two, an escape sequence would drive the
 * terminal (clear the screen, retitle the window, fake a line). Human
 * output passes every name through vr_esc_name first: control characters
 * (C0, DEL, and the C1 range U+0080..U+009F) and bytes that are not valid
 * UTF-8 are written as C escapes (\n, \t, \r, \e, \xHH), a backslash as
 * \\; everything else, printable UTF-8 included, is kept. A name that
 * needs nothing is returned as is, without a copy. (JSON output escapes
 * by its own rules, json.h.)
 *
 * The mapping is one to one (a backslash is escaped too), so two names
 * never print alike.
 *
 * Thread-safety: none needed; the buffer is the caller's.
 */
#ifndef VSCHED_HOST_ESCAPE_H
#define VSCHED_HOST_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* A caller's escape buffer: on the stack, released by vr_esc_done. */
typedef struct vr_esc {
    char *heap; /* the escaped copy, when one was needed */
} vr_esc;

/* `s` escaped (see above), or `s` itself when nothing needs escaping;
 * "(null)" for NULL. The result lives until vr_esc_done(e) or the next
 * vr_esc_name on `e`. Never fails (allocation failure aborts, util.h). */
const char *vr_esc_name(vr_esc *e, const char *s);

/* Release what vr_esc_name allocated; `e` may be reused after. */
void vr_esc_done(vr_esc *e);

/* The escaped form of s[0..len) into out (cap bytes, always terminated
 * when cap > 0); returns the length the whole escaped form needs, not
 * counting the terminator (like snprintf). */
size_t vr_escape(char *out, size_t cap, const char *s, size_t len);

/* The escaped form of `s` (NULL: ""), heap, caller frees. */
char *vr_escape_name(const char *s);

/* Write the escaped form of `s` (NULL: nothing) to `out`. */
void vr_put_name(FILE *out, const char *s);

/* 1 when `s` prints as itself. */
int vr_name_is_plain(const char *s);

#endif
