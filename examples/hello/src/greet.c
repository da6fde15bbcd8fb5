/* greet.c -- prints the greeting and a computed value. */
#include <stdio.h>

#include <greet.h>

void greet(void)
{
    char buf[64];
    puts(fmt_greeting(buf, sizeof buf, HELLO_NAME));
    printf("sum of squares 1..10 = %ld\n", base_sum_squares(10));
}
