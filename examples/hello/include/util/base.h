/* util/base.h -- the bottom of the example's include chain. */
#ifndef HELLO_UTIL_BASE_H
#define HELLO_UTIL_BASE_H

#define HELLO_NAME "vsched"

/* Sum of the squares 1..n. */
long base_sum_squares(int n);

#endif
