/*
 * mock_host.c -- the fake plugin host of the test programs (contracts in
 * mock_host.h).
 */
#include <ftw.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "mock_host.h"

mock_host MOCK;

/* ---- the context ---------------------------------------------------------- */

static int is_cancelled(const vsched_ctx *c)
{
    return atomic_load(&((mock_host *)c->host)->cancel);
}

static void diag(const vsched_ctx *c, vsched_severity sev, const char *file,
                 unsigned line, const char *msg)
{
    mock_host *t = c->host;
    static const char *const names[] = {"note", "warning", "error"};
    t->n_err += sev == VSCHED_SEV_ERROR;
    t->n_warn += sev == VSCHED_SEV_WARNING;
    int n =
        snprintf(t->diag + t->dlen, sizeof t->diag - t->dlen,
                 "%s:%u: %s: %s\n", file ? file : "-", line, names[sev], msg);
    if (n > 0)
        t->dlen += (size_t)n < sizeof t->diag - t->dlen
                       ? (size_t)n
                       : sizeof t->diag - t->dlen - 1;
}

static void *alloc(const vsched_ctx *c, size_t n)
{
    (void)c;
    return malloc(n);
}

static void *re_alloc(const vsched_ctx *c, void *p, size_t n)
{
    (void)c;
    return realloc(p, n);
}

static void dealloc(const vsched_ctx *c, void *p)
{
    (void)c;
    free(p);
}

/* Contract in mock_host.h. */
const vsched_ctx *mock_ctx_init(mock_host *h)
{
    memset(h, 0, sizeof *h);
    h->ctx = (vsched_ctx){sizeof(vsched_ctx),
                          is_cancelled,
                          diag,
                          alloc,
                          re_alloc,
                          dealloc,
                          h,
                          NULL,
                          NULL};
    return &h->ctx;
}

/* Contract in mock_host.h. */
const vsched_ctx *mock_ctx(void)
{
    return mock_ctx_init(&MOCK);
}

/* ---- the configuration ---------------------------------------------------- */

/* The table's value, else the schema default in the plugin's section. */
static const char *get(const vsched_config *c, const char *section,
                       const char *key)
{
    const mock_cfg *t = c->host;
    for (const mock_kv *kv = t->kv; kv->section != NULL; kv++)
        if (strcmp(kv->section, section) == 0 && strcmp(kv->key, key) == 0)
            return kv->value;
    for (size_t i = 0;
         strcmp(section, c->section) == 0 && i < t->plugin->n_schema; i++)
        if (strcmp(t->plugin->schema[i].name, key) == 0)
            return t->plugin->schema[i].dflt;
    return NULL;
}

/* Contract in mock_host.h. */
void mock_cfg_init(mock_cfg *c, const vsched_plugin *plugin,
                   const char *section, const char *dir, const mock_kv *kv)
{
    memset(c, 0, sizeof *c);
    c->cfg = (vsched_config){
        .size = offsetof(vsched_config, host_abi_major), /* a 1.0 host */
        .section = section,
        .get = get,
        .config_dir = dir,
        .host = c};
    c->plugin = plugin;
    for (; kv != NULL && kv->section != NULL; kv++)
        mock_cfg_add(c, kv->section, kv->key, kv->value);
}

/* Contract in mock_host.h. */
void mock_cfg_add(mock_cfg *c, const char *section, const char *key,
                  const char *value)
{
    if (c->n == MOCK_KV_MAX) {
        fprintf(stderr, "mock_cfg: more than %d keys\n", MOCK_KV_MAX);
        abort();
    }
    c->kv[c->n++] = (mock_kv){section, key, value};
}

/* ---- scratch files -------------------------------------------------------- */

/* Contract in mock_host.h. */
char *mock_tmpdir(const char *what)
{
    char *d = NULL;
    CU_ASSERT_FATAL(asprintf(&d, "/tmp/vsched-test-%s-XXXXXX", what) > 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(d));
    return d;
}

/* Contract in mock_host.h. */
char *mock_path2(const char *dir, const char *rel)
{
    char *p;
    CU_ASSERT_FATAL(asprintf(&p, "%s/%s", dir, rel) > 0);
    return p;
}

/* Contract in mock_host.h. */
void mock_put(const char *dir, const char *rel, const char *text)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    for (size_t i = strlen(dir) + 1; p[i] != '\0'; i++) {
        if (p[i] == '/') {
            p[i] = '\0';
            mkdir(p, 0777);
            p[i] = '/';
        }
    }
    FILE *f = fopen(p, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fputs(text, f);
    fclose(f);
}

static int rm_one(const char *p, const struct stat *st, int flag,
                  struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

/* Contract in mock_host.h. */
void mock_rm_rf(char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

/* Contract in mock_host.h. */
int mock_count_named(const char *dir, const char *part)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "find '%s' -name '*%s*' | wc -l", dir, part);
    FILE *f = popen(cmd, "r");
    int n = -1;
    if (f != NULL && fscanf(f, "%d", &n) != 1)
        n = -1;
    if (f != NULL)
        pclose(f);
    return n;
}
