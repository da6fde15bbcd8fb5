/*
 * escape -- names as a terminal or a log line may show them.
 *
 * A source name can hold any byte but '/' and NUL: a newline, a carriage
 * return or an escape sequence in it would forge or erase lines of the
 * status output. Printed names go through here: bytes 0x20..0x7e other
 * than '\' and bytes >= 0x80 (UTF-8) as they are; '\' as "\\"; newline,
 * carriage return and tab as "\n", "\r", "\t"; every other byte as
 * "\xHH". The mapping is one to one, so two names never print alike.
 *
 * Thread-safe (no state).
 */
#ifndef VSCHED_HOST_ESCAPE_H
#define VSCHED_HOST_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* The escaped form of `s` (NULL prints as ""), heap, caller frees. */
char *vr_escape_name(const char *s);

/* Write the escaped form of `s` to `out`. */
void vr_put_name(FILE *out, const char *s);

/* 1 when `s` prints as itself. */
int vr_name_is_plain(const char *s);

#endif
