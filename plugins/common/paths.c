/*
 * paths.c -- the file names of the executor plugins: output names that
 * stay under out_dir, directories made on the way, paths made absolute
 * or normalised, the program a command runs as (and its bytes hashed
 * into an identity), a whole file read.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vp.h"

/* Contract in vp.h. */
int vp_safe_name(const char *s)
{
    if (s == NULL || s[0] == '\0' || s[0] == '/')
        return 0;
    for (const char *p = s; *p != '\0';) {
        size_t len = strcspn(p, "/");
        if (len == 0 || (len == 1 && p[0] == '.') ||
            (len == 2 && p[0] == '.' && p[1] == '.'))
            return 0;
        p += len + (p[len] == '/');
    }
    return 1;
}

/* Contract in vp.h. */
int vp_mkdirs(const vsched_ctx *ctx, const char *file, const char *path)
{
    char dir[PATH_MAX], ebuf[128];
    const char *slash = strrchr(path, '/');
    size_t n = slash != NULL ? (size_t)(slash - path) : 0;
    if (n == 0 || n >= sizeof dir)
        return VSCHED_OK;
    memcpy(dir, path, n);
    dir[n] = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        struct stat st;
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0,
                     "cannot create directory '%s': %s", dir,
                     strerror_r(errno, ebuf, sizeof ebuf));
            return VSCHED_EIO;
        }
        if (c == '\0') {
            if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
                return VSCHED_OK;
            vp_diagf(ctx, VSCHED_SEV_ERROR, file, 0,
                     "cannot create directory '%s': not a directory", dir);
            return VSCHED_EIO;
        }
        *p = c;
    }
}

/* Contract in vp.h. */
char *vp_absolute(const char *base, const char *path)
{
    if (path[0] == '/' || base == NULL)
        return strdup(path);
    return vp_strfmt("%s/%s", base, path);
}

/* Contract in vp.h. */
int vp_normalise_dir(char *d)
{
    char *o = d;
    if (d[0] == '/')
        return -1;
    for (char *p = d; *p != '\0';) {
        while (*p == '/')
            p++;
        char *e = p + strcspn(p, "/");
        size_t len = (size_t)(e - p);
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            if (o == d)
                return -1;
            while (o > d && o[-1] != '/')
                o--;
            o -= o > d;
        } else if (len > 0 && !(len == 1 && p[0] == '.')) {
            if (o > d)
                *o++ = '/';
            memmove(o, p, len);
            o += len;
        }
        p = e;
    }
    if (o == d)
        *o++ = '.';
    *o = '\0';
    return 0;
}

/* Contract in vp.h. */
char *vp_which(const char *prog, const char *cwd)
{
    char cand[PATH_MAX];
    if (prog[0] == '/' || (cwd == NULL && strchr(prog, '/') != NULL))
        return realpath(prog, NULL);
    if (strchr(prog, '/') != NULL) {
        int w = snprintf(cand, sizeof cand, "%s/%s", cwd, prog);
        return w > 0 && (size_t)w < sizeof cand ? realpath(cand, NULL) : NULL;
    }
    const char *path = getenv("PATH");
    for (const char *p = path != NULL ? path : "/usr/bin:/bin"; *p != '\0';) {
        size_t n = strcspn(p, ":");
        int w =
            snprintf(cand, sizeof cand, "%.*s/%s", (int)n, n ? p : ".", prog);
        if (w > 0 && (size_t)w < sizeof cand && access(cand, X_OK) == 0)
            return realpath(cand, NULL);
        p += n + (p[n] == ':');
    }
    return NULL;
}

/* Contract in vp.h. */
void vp_hash_program(XXH3_state_t *st, const char *prog, const char *cwd,
                     const char *missing)
{
    char *bin = prog[0] != '\0' ? vp_which(prog, cwd) : NULL;
    size_t len = 0;
    char *bytes = bin != NULL ? vp_slurp(bin, &len) : NULL;
    const char *name = bin != NULL ? bin : missing;
    XXH3_64bits_update(st, name, strlen(name) + 1);
    if (bytes != NULL)
        XXH3_64bits_update(st, bytes, len);
    free(bytes);
    free(bin);
}

/* Contract in vp.h. */
char *vp_slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    *len = 0;
    if (fd < 0)
        return NULL;
    size_t n = 0, cap = 8192;
    char *buf = malloc(cap);
    while (buf != NULL) {
        if (n + 1 >= cap) {
            char *b = realloc(buf, cap *= 2);
            if (b == NULL) {
                free(buf);
                buf = NULL;
                errno = ENOMEM;
                break;
            }
            buf = b;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int err = errno;
            free(buf);
            buf = NULL;
            errno = err;
        } else if (r == 0) {
            break;
        } else {
            n += (size_t)r;
        }
    }
    int err = errno;
    close(fd);
    if (buf == NULL) {
        errno = err;
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}
