/* fmt.c -- formatting and arithmetic helpers of the example. */
#include <stdio.h>

#include <util/fmt.h>

char *fmt_greeting(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "hello, %s", name);
    return buf;
}

long base_sum_squares(int n)
{
    long sum = 0;
    for (int i = 1; i <= n; i++)
        sum += (long)i * i;
    return sum;
}
