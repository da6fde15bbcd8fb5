#ifndef CALC_PARSER_H
#define CALC_PARSER_H
#include "calc.h"

typedef struct calc_parse {
    calc_lexer lx;
    char *buf;        /* RPN output, or NULL */
    unsigned cap;
    const char *err;
} calc_parse;

int calc_parse_run(calc_parse *ps, const char *text, double *v);
#endif
