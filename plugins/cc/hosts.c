/*
 * hosts.c -- distcc host lists; see hosts.h for the grammar.
 *
 * The defaults are distcc(1)'s: a host without /LIMIT takes 4 jobs,
 * localhost 2. A limit, a port and the --localslots values must be
 * positive decimal numbers (a port at most 65535); anything else -- an
 * unknown option, an empty host, a stray character -- is refused with a
 * message naming the specification, rather than left for distcc to
 * misread at compile time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hosts.h"

#define HOSTS_REMOTE_DEFAULT 4
#define HOSTS_LOCAL_DEFAULT 2
#define HOSTS_NUMBER_MAX 100000L

/* The decimal number s[0..n) in 1..max, or -1. */
static long hosts_number(const char *s, size_t n, long max)
{
    long v = 0;
    if (n == 0 || n > 9)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v >= 1 && v <= max ? v : -1;
}

/* The options after the first ',' of a specification: lzo, cpp, auth,
 * auth=NAME. Returns 0 or -1 with why. */
static int hosts_options(const char *spec, const char *opt, size_t n,
                         cc_hosts *h, char *why, size_t cap)
{
    if (n == 0) {
        snprintf(why, cap, "'%s': empty option after ','", spec);
        return -1;
    }
    while (n > 0) {
        size_t len = 0;
        while (len < n && opt[len] != ',')
            len++;
        if (len == 3 && memcmp(opt, "cpp", 3) == 0)
            h->pump = 1;
        else if (!(len == 3 && memcmp(opt, "lzo", 3) == 0) &&
                 !(len == 4 && memcmp(opt, "auth", 4) == 0) &&
                 !(len > 5 && memcmp(opt, "auth=", 5) == 0)) {
            snprintf(why, cap,
                     "'%s': unknown option '%.*s' (distcc knows lzo, cpp "
                     "and auth)",
                     spec, (int)len, opt);
            return -1;
        }
        opt += len;
        n -= len;
        if (n > 0) { /* the ',' */
            opt++;
            n--;
            if (n == 0) {
                snprintf(why, cap, "'%s': empty option after ','", spec);
                return -1;
            }
        }
    }
    return 0;
}

/* One host specification s[0..n): adds its slots. */
static int hosts_host(const char *s, size_t n, cc_hosts *h, char *why,
                      size_t cap)
{
    char spec[512];
    snprintf(spec, sizeof spec, "%.*s", (int)(n < 500 ? n : 500), s);
    const char *comma = memchr(s, ',', n);
    size_t base = comma != NULL ? (size_t)(comma - s) : n;
    if (comma != NULL &&
        hosts_options(spec, comma + 1, n - base - 1, h, why, cap) != 0)
        return -1;
    const char *at = memchr(s, '@', base);
    size_t i = at != NULL ? (size_t)(at - s) + 1 : 0, id = i;
    if (i < base && s[i] == '[') { /* [IPv6] */
        const char *close = memchr(s + i, ']', base - i);
        if (close == NULL) {
            snprintf(why, cap, "'%s': '[' without ']'", spec);
            return -1;
        }
        i = (size_t)(close - s) + 1;
    } else {
        while (i < base && s[i] != ':' && s[i] != '/')
            i++;
    }
    if (i == id || (s[id] == '[' && i == id + 2)) {
        snprintf(why, cap, "'%s': no host name", spec);
        return -1;
    }
    size_t id_end = i;
    long limit = -1, port = -1;
    int command = 0;
    while (i < base) {
        char c = s[i++];
        size_t j = i;
        if (c == '/' && limit < 0) {
            while (j < base && s[j] != ':')
                j++;
            if ((limit = hosts_number(s + i, j - i, HOSTS_NUMBER_MAX)) < 0) {
                snprintf(why, cap,
                         "'%s': the job limit after '/' must be a number "
                         "from 1 to %ld",
                         spec, HOSTS_NUMBER_MAX);
                return -1;
            }
        } else if (c == ':' && at != NULL && !command) {
            j = base; /* :COMMAND runs to the options */
            command = 1;
            if (j == i) {
                snprintf(why, cap, "'%s': empty command after ':'", spec);
                return -1;
            }
        } else if (c == ':' && at == NULL && port < 0) {
            while (j < base && s[j] != '/')
                j++;
            if ((port = hosts_number(s + i, j - i, 65535)) < 0) {
                snprintf(why, cap,
                         "'%s': the port after ':' must be a number from 1 "
                         "to 65535",
                         spec);
                return -1;
            }
        } else {
            snprintf(why, cap, "'%s': unexpected '%c'", spec, c);
            return -1;
        }
        i = j;
    }
    /* Only the plain word is special: localhost:PORT is a daemon. */
    int local = at == NULL && port < 0 && id_end - id == 9 &&
                memcmp(s + id, "localhost", 9) == 0;
    if (limit < 0)
        limit = local ? HOSTS_LOCAL_DEFAULT : HOSTS_REMOTE_DEFAULT;
    h->slots += (unsigned long)limit;
    h->n_hosts++;
    h->n_local += (unsigned)local;
    return 0;
}

/* A global option (--...) s[0..n). */
static int hosts_global(const char *s, size_t n, cc_hosts *h, char *why,
                        size_t cap)
{
    static const char ls[] = "--localslots=", lc[] = "--localslots_cpp=";
    long *slot = NULL;
    size_t skip = 0;
    if (n == 11 && memcmp(s, "--randomize", 11) == 0) {
        h->randomize = 1;
        return 0;
    }
    if (n > sizeof lc - 1 && memcmp(s, lc, sizeof lc - 1) == 0) {
        slot = &h->localslots_cpp;
        skip = sizeof lc - 1;
    } else if (n > sizeof ls - 1 && memcmp(s, ls, sizeof ls - 1) == 0) {
        slot = &h->localslots;
        skip = sizeof ls - 1;
    }
    if (slot == NULL) {
        snprintf(why, cap,
                 "'%.*s': unknown option (distcc knows --randomize, "
                 "--localslots=N and --localslots_cpp=N)",
                 (int)(n < 200 ? n : 200), s);
        return -1;
    }
    if ((*slot = hosts_number(s + skip, n - skip, HOSTS_NUMBER_MAX)) < 0) {
        snprintf(why, cap, "'%.*s': needs a number from 1 to %ld",
                 (int)(n < 200 ? n : 200), s, HOSTS_NUMBER_MAX);
        return -1;
    }
    return 0;
}

/* Contract in hosts.h. */
int cc__hosts_parse(const char *text, cc_hosts *h, char *why, size_t cap)
{
    memset(h, 0, sizeof *h);
    h->localslots = h->localslots_cpp = -1;
    for (const char *p = text != NULL ? text : ""; *p != '\0';) {
        if (*p == '#') {
            p += strcspn(p, "\n");
            continue;
        }
        size_t n = strcspn(p, " \t\r\n\v\f#");
        if (n == 0) {
            p += *p != '\0' && *p != '#';
            continue;
        }
        int rc;
        if (n == 9 && memcmp(p, "+zeroconf", 9) == 0) {
            h->zeroconf = 1;
            rc = 0;
        } else if (p[0] == '-') {
            rc = hosts_global(p, n, h, why, cap);
        } else {
            rc = hosts_host(p, n, h, why, cap);
        }
        if (rc != 0)
            return -1;
        p += n;
    }
    if (h->n_hosts == 0 && !h->zeroconf) {
        snprintf(why, cap, "the host list names no host");
        return -1;
    }
    return 0;
}

/* Contract in hosts.h. */
char *cc__hosts_flatten(const char *text)
{
    size_t len = strlen(text);
    char *out = malloc(len + 1), *o = out;
    if (out == NULL)
        return NULL;
    for (const char *p = text; *p != '\0';) {
        if (*p == '#') {
            p += strcspn(p, "\n");
            continue;
        }
        size_t n = strcspn(p, " \t\r\n\v\f#");
        if (n == 0) {
            p += *p != '#';
            continue;
        }
        if (o > out)
            *o++ = ' ';
        memcpy(o, p, n);
        o += n;
        p += n;
    }
    *o = '\0';
    return out;
}

/* `name`'s value in `env` (NULL: the process's), or NULL. */
static const char *hosts_getenv(char *const *env, const char *name)
{
    if (env == NULL)
        return getenv(name);
    size_t n = strlen(name);
    for (; *env != NULL; env++)
        if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
            return *env + n + 1;
    return NULL;
}

/* Read the file `path` into src; 1, 0 when it does not exist, -1. */
static int hosts_read(const char *path, cc_hosts_src *src, char *why,
                      size_t cap)
{
    FILE *f = fopen(path, "re");
    if (f == NULL) {
        if (errno == ENOENT || errno == ENOTDIR)
            return 0;
        snprintf(why, cap, "cannot read the distcc host list %s: %s", path,
                 strerror(errno));
        return -1;
    }
    size_t n = 0, len = 0;
    char *text = NULL;
    FILE *m = open_memstream(&text, &n);
    char buf[4096];
    for (size_t r; m != NULL && (r = fread(buf, 1, sizeof buf, f)) > 0;)
        len += fwrite(buf, 1, r, m);
    int bad = ferror(f) || m == NULL;
    fclose(f);
    if (m != NULL)
        fclose(m);
    if (bad || text == NULL || strlen(text) != len) {
        free(text);
        snprintf(why, cap, "cannot read the distcc host list %s%s", path,
                 bad ? "" : ": it contains a NUL byte");
        return -1;
    }
    src->text = text;
    snprintf(src->origin, sizeof src->origin, "%s", path);
    return 1;
}

/* Contract in hosts.h. */
int cc__hosts_find(const char *given, char *const *env, cc_hosts_src *src,
                   char *why, size_t cap)
{
    memset(src, 0, sizeof *src);
    const char *v = given;
    const char *origin = "distcc_hosts";
    if (v == NULL || v[0] == '\0') {
        v = hosts_getenv(env, "DISTCC_HOSTS");
        origin = "DISTCC_HOSTS";
    }
    if (v != NULL && v[0] != '\0') {
        if ((src->text = strdup(v)) == NULL) {
            snprintf(why, cap, "out of memory");
            return -1;
        }
        snprintf(src->origin, sizeof src->origin, "%s", origin);
        return 1;
    }
    char path[4096];
    const char *dir = hosts_getenv(env, "DISTCC_DIR");
    const char *home = hosts_getenv(env, "HOME");
    int rc = 0;
    if (dir != NULL && dir[0] != '\0')
        snprintf(path, sizeof path, "%s/hosts", dir);
    else if (home != NULL && home[0] != '\0')
        snprintf(path, sizeof path, "%s/.distcc/hosts", home);
    else
        path[0] = '\0';
    if (path[0] != '\0' && (rc = hosts_read(path, src, why, cap)) != 0)
        return rc;
    return hosts_read("/etc/distcc/hosts", src, why, cap);
}
