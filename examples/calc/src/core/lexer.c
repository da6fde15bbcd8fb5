#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "calc.h"

void calc_lex_init(calc_lexer *lx, const char *text)
{
    lx->p = text;
    calc_lex_next(lx);
}

void calc_lex_next(calc_lexer *lx)
{
    while (isspace((unsigned char)*lx->p))
        lx->p++;
    if (*lx->p == '\0') {
        lx->tok = T_END;
    } else if (isdigit((unsigned char)*lx->p) || *lx->p == '.') {
        char *end;
        lx->num = strtod(lx->p, &end);
        lx->p = end;
        lx->tok = T_NUM;
    } else if (isalpha((unsigned char)*lx->p)) {
        size_t n = 0;
        while (isalpha((unsigned char)*lx->p) && n + 1 < sizeof lx->name)
            lx->name[n++] = *lx->p++;
        lx->name[n] = '\0';
        lx->tok = T_NAME;
    } else if (strchr("+-*/()", *lx->p) != NULL) {
        lx->op = *lx->p++;
        lx->tok = T_OP;
    } else {
        lx->tok = T_BAD;
    }
}
