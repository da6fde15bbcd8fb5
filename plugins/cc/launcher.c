/*
 * launcher.c -- the compile launcher of the `cc` executor: ccache, distcc,
 * or the pair `ccache distcc`, and the environment its children get.
 *
 * `launcher` words are put before the compiler of every compile (links
 * never get them). Two launchers are known by their file name:
 *
 *   distcc         the compile is sent to the hosts of the host list
 *                  (hosts.h); the list is checked at create() and handed
 *                  to every child as DISTCC_HOSTS, with
 *                  --localslots_cpp=<online CPUs> added when the list does
 *                  not bound local preprocessing itself: in plain (non-pump)
 *                  mode distcc preprocesses on this machine, inside the
 *                  client, and that lock is what keeps a deep -j from
 *                  running more preprocessors than there are cores. A
 *                  client waiting for that lock retries every
 *                  DISTCC_PAUSE_TIME_MSEC, set to 10 ms unless the
 *                  environment sets it (distcc's 1 s makes each wait a
 *                  1 s stall). DISTCC_SKIP_LOCAL_RETRY=1 (unless set)
 *                  keeps one file's compile error from being compiled
 *                  twice and from failing the others' compiles.
 *   ccache distcc  ccache runs first (hit: no compile at all); on a miss
 *                  it calls distcc through CCACHE_PREFIX, which is how
 *                  ccache documents the pair.
 *
 * `distcc ccache` (distcc sending ccache to another machine) and pump mode
 * (a host with ",cpp") are refused: pump mode needs an include server
 * started around the whole build and trusts that no header changes while
 * it runs, which a watching, superseding scheduler cannot promise.
 *
 * `fallback` sets DISTCC_FALLBACK for the children: true lets distcc
 * compile locally when a host fails, false makes such a compile fail;
 * unset, the children inherit vsched-run's environment (distcc's default
 * is to fall back).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cc.h"
#include "hosts.h"

extern char **environ;

#define CC_DISTCC_PAUSE_MS "10"

static const char *cc_base(const char *word)
{
    const char *s = strrchr(word, '/');
    return s != NULL ? s + 1 : word;
}

/* Index of the first word named `name`, or -1. */
static long cc_find_word(const cc_words *w, const char *name)
{
    for (size_t i = 0; i < w->n; i++)
        if (strcmp(cc_base(w->v[i]), name) == 0)
            return (long)i;
    return -1;
}

/* Environment entries (malloc'ed strings) put before environ's own. */
typedef struct cc_envset {
    char *v[6];
    size_t n;
} cc_envset;

static int cc_env_add(cc_envset *e, const char *name, const char *value)
{
    char *s = NULL;
    if (asprintf(&s, "%s=%s", name, value) < 0)
        return -1;
    e->v[e->n++] = s;
    return 0;
}

/* environ without the names set in `e`, followed by `e` (which it then
 * owns); NULL on exhaustion. */
static char **cc_env_build(cc_envset *e)
{
    size_t n = 0;
    while (environ[n] != NULL)
        n++;
    char **env = calloc(n + e->n + 1, sizeof *env);
    if (env == NULL)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int shadowed = 0;
        for (size_t j = 0; j < e->n && !shadowed; j++) {
            size_t len = (size_t)(strchr(e->v[j], '=') - e->v[j]) + 1;
            shadowed = strncmp(environ[i], e->v[j], len) == 0;
        }
        if (!shadowed && (env[k++] = strdup(environ[i])) == NULL) {
            for (size_t j = 0; j + 1 < k; j++)
                free(env[j]);
            free(env);
            return NULL;
        }
    }
    for (size_t j = 0; j < e->n; j++) {
        env[k++] = e->v[j];
        e->v[j] = NULL;
    }
    e->n = 0;
    return env;
}

/* DISTCC_HOSTS for the children into `e`, after checking the list. */
static const char *cc_distcc_hosts(const vsched_config *cfg, cc_envset *e,
                                   char *why, size_t cap)
{
    char msg[1024];
    cc_hosts_src src;
    const char *given = cfg->get(cfg, cfg->section, "distcc_hosts");
    int found = cc__hosts_find(given, NULL, &src, msg, sizeof msg);
    if (found < 0) {
        snprintf(why, cap, "launcher distcc: %s", msg);
        return why;
    }
    if (found == 0) {
        snprintf(why, cap,
                 "launcher distcc: no distcc hosts: set distcc_hosts, or "
                 "DISTCC_HOSTS, or list them in ~/.distcc/hosts");
        return why;
    }
    cc_hosts h;
    const char *err = NULL;
    if (cc__hosts_parse(src.text, &h, msg, sizeof msg) != 0) {
        snprintf(why, cap, "%s: %s", src.origin, msg);
        err = why;
    } else if (h.pump) {
        snprintf(why, cap,
                 "%s: a host asks for distcc's pump mode (',cpp'), which "
                 "vsched does not support: remove ',cpp' (plain mode still "
                 "distributes every compile)",
                 src.origin);
        err = why;
    }
    char *flat = err == NULL ? cc__hosts_flatten(src.text) : NULL;
    free(src.text);
    if (err != NULL)
        return err;
    if (flat == NULL)
        return "out of memory";
    char *list = NULL;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int rc = h.localslots_cpp > 0 ? asprintf(&list, "%s", flat)
                                  : asprintf(&list, "%s --localslots_cpp=%ld",
                                             flat, cpus > 0 ? cpus : 1);
    free(flat);
    if (rc < 0)
        return "out of memory";
    rc = cc_env_add(e, "DISTCC_HOSTS", list);
    free(list);
    /* A client waiting for a preprocessing slot sleeps this long between
     * tries; distcc's 1 s default stalls every compile that waits, and
     * with -j deeper than the cores most of them do. */
    if (rc == 0 && getenv("DISTCC_PAUSE_TIME_MSEC") == NULL)
        rc = cc_env_add(e, "DISTCC_PAUSE_TIME_MSEC", CC_DISTCC_PAUSE_MS);
    /* A compile error on a host makes distcc retry the file locally
     * (compiling a broken file twice) and, failing that too, back the
     * host off for 60 s: with fallbacks off every later compile of the
     * build then fails "failed to distribute". */
    if (rc == 0 && getenv("DISTCC_SKIP_LOCAL_RETRY") == NULL)
        rc = cc_env_add(e, "DISTCC_SKIP_LOCAL_RETRY", "1");
    return rc == 0 ? NULL : "out of memory";
}

/* Contract in cc.h. */
const char *cc__launcher_configure(cc_inst *cc, const vsched_config *cfg,
                                   char *why, size_t cap)
{
    const char *sec = cfg->section;
    if (cc__words_parse(cfg->get(cfg, sec, "launcher"), &cc->launcher))
        return "out of memory";
    cc_words *w = &cc->launcher;
    long d = cc_find_word(w, "distcc"), c = cc_find_word(w, "ccache");
    cc_envset e = {{NULL}, 0};
    const char *err = NULL;
    if (d >= 0 && c > d) {
        snprintf(why, cap,
                 "launcher '%s %s': distcc would run ccache on another "
                 "machine; write 'ccache distcc'",
                 w->v[d], w->v[c]);
        return why;
    }
    if (d >= 0 && c >= 0) {
        if ((size_t)d + 1 != w->n) {
            snprintf(why, cap,
                     "launcher: with ccache, distcc must be the last word "
                     "('ccache distcc')");
            return why;
        }
        if (cc_env_add(&e, "CCACHE_PREFIX", w->v[d]) != 0)
            return "out of memory";
        w->n--; /* ccache calls distcc itself */
    }
    cc->remote = d >= 0;
    if (cc->remote)
        err = cc_distcc_hosts(cfg, &e, why, cap);
    const char *fb = cfg->get(cfg, sec, "fallback");
    if (err == NULL && fb != NULL && fb[0] != '\0') {
        int on = strchr("tTyY1", fb[0]) != NULL || strcasecmp(fb, "on") == 0;
        if (cc_env_add(&e, "DISTCC_FALLBACK", on ? "1" : "0") != 0)
            err = "out of memory";
    }
    if (err == NULL && e.n > 0 && (cc->env = cc_env_build(&e)) == NULL)
        err = "out of memory";
    for (size_t i = 0; i < e.n; i++)
        free(e.v[i]);
    return err;
}

/* Contract in cc.h. */
void cc__launcher_free(cc_inst *cc)
{
    for (size_t i = 0; cc->env != NULL && cc->env[i] != NULL; i++)
        free(cc->env[i]);
    free(cc->env);
    cc->env = NULL;
    cc__words_free(&cc->launcher);
}

/* distcc's own exit statuses (distcc(1), EXIT CODES). */
static const char *cc_distcc_status(int code)
{
    switch (code) {
    case 100: return "general distcc failure";
    case 101: return "bad arguments";
    case 102: return "bind failed";
    case 103: return "connect failed";
    case 104: return "compiler crashed";
    case 105: return "out of memory";
    case 106: return "bad host specification";
    case 107: return "I/O error";
    case 108: return "truncated";
    case 109: return "protocol error";
    case 110: return "compiler not found on the remote host";
    case 111: return "recursive call to distcc";
    case 112: return "failed to discard privileges";
    case 113: return "network access denied";
    case 114: return "in use by another process";
    case 115: return "no such file";
    case 116: return "no hosts defined and fallbacks disabled";
    case 118: return "timeout";
    case 119: return "GSS-API error";
    case 120: return "called for preprocessing";
    default: return NULL;
    }
}

/* Contract in cc.h. */
void cc__launcher_explain(const cc_inst *cc, const vsched_ctx *ctx,
                          const char *file, const char *tool, int status)
{
    if (!cc->remote || cc->launcher.n == 0 ||
        strcmp(tool, cc->launcher.v[0]) != 0 || !WIFEXITED(status))
        return;
    const char *what = cc_distcc_status(WEXITSTATUS(status));
    if (what == NULL)
        return;
    const char *hosts = NULL;
    for (size_t i = 0; cc->env != NULL && cc->env[i] != NULL; i++)
        if (strncmp(cc->env[i], "DISTCC_HOSTS=", 13) == 0)
            hosts = cc->env[i] + 13;
    vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0,
             "distcc could not compile it (status %d: %s): check that "
             "distccd runs on the hosts (DISTCC_HOSTS=%s) and allows this "
             "machine (--allow), or set fallback = true to compile "
             "locally when a host fails",
             WEXITSTATUS(status), what, hosts != NULL ? hosts : "?");
}
