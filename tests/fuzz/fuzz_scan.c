/*
 * fuzz_scan -- cc's #include scanner (plugins/cc/scan.c, included here to
 * reach its static scanner) on any bytes: every directive it records has
 * a non-empty name without a newline, found at a line within the input.
 */
#include "../../plugins/cc/scan.c"

#include "fuzz.h"

/* What scan.c needs of the rest of the plugin (plugins/common/ctx.c), for the resolver
 * it also holds; the scanner itself calls neither. */
char *vp_host_strdup(const vsched_ctx *ctx, const char *s)
{
    (void)ctx;
    return strdup(s);
}

void vp_diagf(const vsched_ctx *ctx, vsched_severity sev, const char *file,
              unsigned line, const char *fmt, ...)
{
    (void)ctx, (void)sev, (void)file, (void)line, (void)fmt;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    scan_list l = {0};
    scan_bytes((const char *)data, size, &l);
    unsigned lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    for (size_t i = 0; i < l.n; i++) {
        FUZZ_CHECK(l.v[i].path != NULL && l.v[i].path[0] != '\0');
        FUZZ_CHECK(strchr(l.v[i].path, '\n') == NULL);
        FUZZ_CHECK(l.v[i].line >= 1 && l.v[i].line <= lines);
        free(l.v[i].path);
    }
    free(l.v);
    return 0;
}
