/* A recursive-descent parser that evaluates or prints as it goes. */
#include <stdio.h>
#include <string.h>

#include "calc.h"
#include "parser.h"

static int expr(calc_parse *ps, double *v);

static void emit(calc_parse *ps, const char *s)
{
    if (ps->buf == NULL)
        return;
    size_t len = strlen(ps->buf);
    snprintf(ps->buf + len, ps->cap - len, "%s%s", len ? " " : "", s);
}

static int primary(calc_parse *ps, double *v)
{
    calc_lexer *lx = &ps->lx;
    if (lx->tok == T_NUM) {
        char num[32];
        *v = lx->num;
        snprintf(num, sizeof num, "%g", lx->num);
        emit(ps, num);
        calc_lex_next(lx);
        return 0;
    }
    if (lx->tok == T_NAME) {
        char name[16];
        strcpy(name, lx->name);
        calc_lex_next(lx);
        if (lx->tok != T_OP || lx->op != '(')
            return ps->err = "expected '(' after a function name", -1;
        calc_lex_next(lx);
        double arg;
        if (expr(ps, &arg) != 0)
            return -1;
        if (lx->tok != T_OP || lx->op != ')')
            return ps->err = "expected ')'", -1;
        calc_lex_next(lx);
        emit(ps, name);
        if (calc_call(name, arg, v) != 0)
            return ps->err = "unknown function", -1;
        return 0;
    }
    if (lx->tok == T_OP && lx->op == '(') {
        calc_lex_next(lx);
        if (expr(ps, v) != 0)
            return -1;
        if (lx->tok != T_OP || lx->op != ')')
            return ps->err = "expected ')'", -1;
        calc_lex_next(lx);
        return 0;
    }
    return ps->err = "expected a number, a function or '('", -1;
}

static int term(calc_parse *ps, double *v)
{
    if (primary(ps, v) != 0)
        return -1;
    while (ps->lx.tok == T_OP && (ps->lx.op == '*' || ps->lx.op == '/')) {
        char op[2] = {ps->lx.op, '\0'};
        double r;
        calc_lex_next(&ps->lx);
        if (primary(ps, &r) != 0)
            return -1;
        *v = op[0] == '*' ? *v * r : *v / r;
        emit(ps, op);
    }
    return 0;
}

static int expr(calc_parse *ps, double *v)
{
    if (term(ps, v) != 0)
        return -1;
    while (ps->lx.tok == T_OP && (ps->lx.op == '+' || ps->lx.op == '-')) {
        char op[2] = {ps->lx.op, '\0'};
        double r;
        calc_lex_next(&ps->lx);
        if (term(ps, &r) != 0)
            return -1;
        *v = op[0] == '+' ? *v + r : *v - r;
        emit(ps, op);
    }
    return 0;
}

int calc_parse_run(calc_parse *ps, const char *text, double *v)
{
    calc_lex_init(&ps->lx, text);
    if (expr(ps, v) != 0)
        return -1;
    if (ps->lx.tok != T_END)
        return ps->err = "unexpected text after the expression", -1;
    return 0;
}
