/* The library's own tests: exit 0 when every case holds. */
#include <stdio.h>
#include <string.h>

#include "calc.h"

int main(void)
{
    static const struct { const char *in; double want; } cases[] = {
        {"1 + 2 * 3", 7}, {"(1 + 2) * 3", 9}, {"sqrt(16) + abs(0 - 2)", 6},
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double v;
        const char *err;
        if (calc_eval(cases[i].in, &v, &err) != 0 || v != cases[i].want) {
            printf("FAIL %s\n", cases[i].in);
            bad = 1;
        }
    }
    char buf[64];
    const char *err;
    if (calc_rpn("1 + 2 * 3", buf, sizeof buf, &err) != 0 ||
        strcmp(buf, "1 2 3 * +") != 0) {
        printf("FAIL rpn: %s\n", buf);
        bad = 1;
    }
    printf(bad ? "calc tests failed\n" : "calc tests passed\n");
    return bad;
}
