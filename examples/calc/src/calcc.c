/* calcc: "compile" each argument to reverse Polish notation. */
#include <stdio.h>

#include "calc.h"

int main(int argc, char **argv)
{
    int status = 0;
    for (int i = 1; i < argc; i++) {
        char buf[512];
        const char *err;
        if (calc_rpn(argv[i], buf, sizeof buf, &err) == 0) {
            printf("%s\n", buf);
        } else {
            fprintf(stderr, "calcc: %s: %s\n", argv[i], err);
            status = 1;
        }
    }
    return status;
}
