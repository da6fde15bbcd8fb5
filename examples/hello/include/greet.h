/* greet.h -- the example's top-level header (found through include_dirs). */
#ifndef HELLO_GREET_H
#define HELLO_GREET_H

#include "util/fmt.h"

/* Print the greeting and the computed value to stdout. */
void greet(void);

#endif
