/* util/fmt.h -- formatting helpers; includes its sibling by a quoted,
 * directory-relative include. */
#ifndef HELLO_UTIL_FMT_H
#define HELLO_UTIL_FMT_H

#include <stddef.h>

#include "base.h"

/* Write "hello, NAME" into buf (cap bytes); returns buf. */
char *fmt_greeting(char *buf, size_t cap, const char *name);

#endif
