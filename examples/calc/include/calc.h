/* calc -- a tiny expression language: numbers, + - * / ( ), and the
 * functions of the math library (sqrt, abs). */
#ifndef CALC_H
#define CALC_H

/* Tokens of an expression. */
typedef enum { T_NUM, T_OP, T_NAME, T_END, T_BAD } calc_tok;

typedef struct calc_lexer {
    const char *p;
    calc_tok tok;
    double num;
    char op;
    char name[16];
} calc_lexer;

void calc_lex_init(calc_lexer *lx, const char *text);
void calc_lex_next(calc_lexer *lx);

/* Evaluate `text` into *out; 0, or -1 with *err set (static text). */
int calc_eval(const char *text, double *out, const char **err);
/* Print `text` in reverse Polish notation; 0 or -1 with *err set. */
int calc_rpn(const char *text, char *buf, unsigned cap, const char **err);

/* The math library: 0 with *out set, or -1 when `name` is unknown. */
int calc_call(const char *name, double arg, double *out);

#endif
