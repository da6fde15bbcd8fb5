/*
 * util.c -- checked allocation, formatted strings and lexical paths.
 *
 * Paths here are handled as text: vr_path_join never touches the file
 * system except for getcwd() when a relative result must be made absolute.
 * ".." is resolved lexically, which is what a user means by "relative to
 * the INI file" and never depends on what exists on disk.
 */
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

static void vr_oom(size_t n)
{
    fprintf(stderr, "vsched-run: out of memory (allocating %zu bytes)\n", n);
    abort();
}

/* Contract: as malloc, never NULL (aborts); n == 0 yields a unique
 * pointer. */
void *vr_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        vr_oom(n);
    return p;
}

/* Contract: as calloc, never NULL (aborts), including on n*size overflow. */
void *vr_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL)
        vr_oom(n * size);
    return p;
}

/* Contract: as realloc, never NULL (aborts); p is untouched on abort. */
void *vr_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (q == NULL)
        vr_oom(n);
    return q;
}

/* Contract: heap copy of s (s must not be NULL), never NULL (aborts). */
/* Contract: see util.h. */
void *vr_xgrow(void *v, size_t n, size_t size)
{
    if (n != 0 && (n & (n - 1)) != 0)
        return v; /* n is not a power of two: below the capacity */
    size_t cap = n == 0 ? 1 : 2 * n;
    if (cap < n || cap > (size_t)-1 / size) {
        fprintf(stderr, "vsched-run: out of memory\n");
        abort();
    }
    return vr_xrealloc(v, cap * size);
}

char *vr_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = vr_xmalloc(n);
    memcpy(d, s, n);
    return d;
}

/* Contract: printf-formatted heap string, caller frees; never NULL. */
char *vr_strfmt(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap);
    va_end(ap);
    if (n < 0)
        vr_oom(strlen(fmt));
    return s;
}

/* Current directory as a heap string, or NULL (errno set). */
static char *vr_cwd(void)
{
    char *cwd = getcwd(NULL, 0);
    if (cwd == NULL && errno == ENOMEM)
        vr_oom(0);
    return cwd;
}

/* Append the components of `p` to the normalised absolute path in out
 * (out[0..*len), always starting with '/'), resolving "." and "..". out has
 * room for everything appended. */
static void vr_path_push(char *out, size_t *len, const char *p)
{
    while (*p != '\0') {
        while (*p == '/')
            p++;
        size_t n = strcspn(p, "/");
        if (n == 0)
            break;
        if (n == 1 && p[0] == '.') {
            /* nothing */
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            while (*len > 1 && out[*len - 1] != '/')
                (*len)--;
            if (*len > 1)
                (*len)--; /* the separator; "/" stays at the root */
        } else {
            if (*len > 1)
                out[(*len)++] = '/';
            memcpy(out + *len, p, n);
            *len += n;
        }
        p += n;
    }
    out[*len] = '\0';
}

/* Contract: see util.h. Returns NULL (errno set) only when neither `path`
 * nor `dir` is absolute and the current directory cannot be read. `dir`
 * may be NULL (the current directory). Caller frees. */
char *vr_path_join(const char *dir, const char *path)
{
    char *cwd = NULL;
    const char *parts[3] = {NULL, NULL, NULL};
    if (path[0] == '/') {
        parts[0] = path;
    } else if (dir != NULL && dir[0] == '/') {
        parts[0] = dir;
        parts[1] = path;
    } else {
        cwd = vr_cwd();
        if (cwd == NULL)
            return NULL;
        parts[0] = cwd;
        parts[1] = dir != NULL ? dir : "";
        parts[2] = path;
    }
    size_t cap = 2;
    for (int i = 0; i < 3 && parts[i] != NULL; i++)
        cap += strlen(parts[i]) + 1;
    char *out = vr_xmalloc(cap);
    size_t len = 1;
    out[0] = '/';
    for (int i = 0; i < 3 && parts[i] != NULL; i++)
        vr_path_push(out, &len, parts[i]);
    free(cwd);
    return out;
}

/* Contract: see util.h. The directory is taken lexically ("a/b/x.ini" ->
 * "a/b", "x.ini" -> ".", trailing slashes ignored), then made absolute and
 * normalised as by vr_path_join. NULL as for vr_path_join. */
char *vr_path_dirname_abs(const char *path)
{
    size_t end = strlen(path);
    while (end > 1 && path[end - 1] == '/')
        end--;
    while (end > 0 && path[end - 1] != '/')
        end--;
    char *dir = vr_xmalloc(end + 2);
    if (end == 0) {
        strcpy(dir, ".");
    } else {
        memcpy(dir, path, end);
        dir[end] = '\0';
    }
    char *abs = vr_path_join(NULL, dir);
    free(dir);
    return abs;
}

/* Contract: see util.h. */
char *vr_path_resolve_inside(const char *dir_real, const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        errno = EXDEV;
        return NULL;
    }
    /* The parent exactly as written: a lexical clean-up would drop an
     * "x/.." that the kernel resolves through the link x. */
    char *parent = slash == NULL ? vr_xstrdup(".")
                   : slash == path
                       ? vr_xstrdup("/")
                       : vr_strfmt("%.*s", (int)(slash - path), path);
    char *real = realpath(parent, NULL);
    free(parent);
    if (real == NULL) {
        errno = ENOENT;
        return NULL;
    }
    size_t n = strlen(dir_real);
    int inside = strncmp(real, dir_real, n) == 0 &&
                 (real[n] == '\0' || real[n] == '/' || n == 1);
    char *at = inside
                   ? vr_strfmt("%s%s%s", real,
                               real[strlen(real) - 1] == '/' ? "" : "/", base)
                   : NULL;
    free(real);
    if (at == NULL)
        errno = EXDEV;
    return at;
}

/* Contract: see util.h. */
int vr_file_copy(const char *src, const char *dst)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    struct stat sb;
    int out = -1, rc = -1;
    if (fstat(in, &sb) == 0)
        out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                   sb.st_mode & 0777);
    if (out >= 0 && ioctl(out, FICLONE, in) == 0) {
        rc = 0;
    } else if (out >= 0) {
        rc = 0;
        for (;;) {
            ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 20, 0);
            if (n == 0)
                break;
            if (n > 0)
                continue;
            if (errno == EINTR)
                continue;
            char buf[65536]; /* no copy_file_range here: plain copy */
            ssize_t r;
            while ((r = read(in, buf, sizeof buf)) > 0)
                if (write(out, buf, (size_t)r) != r) {
                    r = -1;
                    break;
                }
            rc = r < 0 ? -1 : 0;
            break;
        }
    }
    if (out >= 0 && close(out) != 0)
        rc = -1;
    int err = errno;
    close(in);
    if (rc != 0 && out >= 0)
        unlink(dst);
    errno = err;
    return rc;
}
