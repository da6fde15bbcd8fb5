#include "calc.h"
#include "parser.h"

int calc_eval(const char *text, double *out, const char **err)
{
    calc_parse ps = {.buf = 0};
    int rc = calc_parse_run(&ps, text, out);
    *err = ps.err;
    return rc;
}

int calc_rpn(const char *text, char *buf, unsigned cap, const char **err)
{
    double v;
    buf[0] = '\0';
    calc_parse ps = {.buf = buf, .cap = cap};
    int rc = calc_parse_run(&ps, text, &v);
    *err = ps.err;
    return rc;
}
