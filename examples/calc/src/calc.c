/* calc: evaluate each argument. */
#include <stdio.h>

#include "calc.h"

int main(int argc, char **argv)
{
    int status = 0;
    for (int i = 1; i < argc; i++) {
        double v;
        const char *err;
        if (calc_eval(argv[i], &v, &err) == 0) {
            printf("%g\n", v);
        } else {
            fprintf(stderr, "calc: %s: %s\n", argv[i], err);
            status = 1;
        }
    }
    return status;
}
