/* main.c -- the vsched example program. Prints:
 *     hello, vsched
 *     sum of squares 1..10 = 385
 */
#include <greet.h>

int main(void)
{
    greet();
    return 0;
}
