/*
 * fs.c -- the `fs` source loader: sources are files under one directory.
 *
 * A source name is a path relative to the loader root. Every operation
 * confines the name to the root twice: lexically (a name whose ".." would
 * climb above the root is refused before the file system is touched, so a
 * missing escaping file is EESCAPE, not ENOENT), then physically (realpath(3)
 * of root/NAME must lie under the canonical root, which catches symlinks).
 * follow_outside = true relaxes only the physical check: a symlink may lead
 * out of the tree, and the file keeps its in-tree name.
 *
 * Thread safety: an instance is immutable after create(); every operation
 * may run concurrently.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vsched/plugin.h>

typedef struct fs_inst {
    char *root; /* canonical absolute root, no trailing '/' */
    size_t root_len;
    int follow_outside; /* symlinks may leave the root */
} fs_inst;

/* A name resolved against the root. */
typedef struct fs_path {
    char *abs; /* realpath(3) result (malloc) */
    char *rel; /* canonical source name (malloc) */
} fs_path;

static const vsched_key fs_schema[] = {
    {"root", VSCHED_KEY_PATH, NULL, "directory holding the sources", 0, 0,
     VSCHED_KEY_REQUIRED},
    {"follow_outside", VSCHED_KEY_BOOL, "false",
     "allow symlinks that leave root", 0, 0, 0},
};

__attribute__((format(printf, 3, 4))) static char *fs_format(
    const vsched_ctx *ctx, int use_host, const char *fmt, ...)
{
    char buf[PATH_MAX + 256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t n = strlen(buf) + 1;
    char *s = use_host ? ctx->alloc(ctx, n) : malloc(n);
    if (s != NULL)
        memcpy(s, buf, n);
    return s;
}

static void fs_diag(const vsched_ctx *ctx, const char *name, const char *what,
                    int err)
{
    char ebuf[128];
    char *msg =
        fs_format(ctx, 0, "%s: %s", what, strerror_r(err, ebuf, sizeof ebuf));
    if (msg != NULL)
        ctx->diag(ctx, VSCHED_SEV_ERROR, name, 0, msg);
    free(msg);
}

/* 1 when `path` is the canonical root or lies under it. */
static int fs_under_root(const fs_inst *fs, const char *path)
{
    return strncmp(path, fs->root, fs->root_len) == 0 &&
           (path[fs->root_len] == '\0' || path[fs->root_len] == '/' ||
            fs->root_len == 1);
}

/* Lexical confinement: 0 when `name`'s ".." components never climb above
 * the start, -1 when they do. */
static int fs_lexically_inside(const char *name)
{
    long depth = 0;
    const char *p = name;
    while (*p != '\0') {
        while (*p == '/')
            p++;
        const char *e = p;
        while (*e != '\0' && *e != '/')
            e++;
        size_t n = (size_t)(e - p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (--depth < 0)
                return -1;
        } else if (n > 0 && !(n == 1 && p[0] == '.')) {
            depth++;
        }
        p = e;
    }
    return 0;
}

/* The source name of an absolute path under the root ("." for the root). */
static char *fs_relative(const fs_inst *fs, const char *abs)
{
    const char *r = abs + fs->root_len;
    while (*r == '/')
        r++;
    return strdup(*r == '\0' ? "." : r);
}

/* Lexically normalised `name` ("a/./b/../c" -> "a/c"); `name` is known not
 * to climb above the root. */
static char *fs_normalise(const char *name)
{
    size_t n = strlen(name);
    char *out = malloc(n + 2);
    if (out == NULL)
        return NULL;
    size_t o = 0;
    for (const char *p = name; *p != '\0';) {
        while (*p == '/')
            p++;
        const char *e = p;
        while (*e != '\0' && *e != '/')
            e++;
        size_t len = (size_t)(e - p);
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
        } else if (len > 0 && !(len == 1 && p[0] == '.')) {
            if (o > 0)
                out[o++] = '/';
            memcpy(out + o, p, len);
            o += len;
        }
        p = e;
    }
    if (o == 0)
        out[o++] = '.';
    out[o] = '\0';
    return out;
}

/* A missing absolute name (`path`, writable): 1 when it would lie under
 * the root -- textually, or once its directory is resolved (the root may
 * be spelt through a symbolic link: the canonical root is not a prefix of
 * that spelling). */
static int fs_missing_inside(const fs_inst *fs, char *path)
{
    if (fs_under_root(fs, path) &&
        fs_lexically_inside(path + fs->root_len) == 0)
        return 1;
    char *slash = strrchr(path, '/');
    if (slash == NULL || slash == path)
        return 0;
    *slash = '\0';
    char *dir = realpath(path, NULL);
    *slash = '/';
    if (dir == NULL)
        return 0;
    int inside = fs_under_root(fs, dir) && strcmp(slash + 1, "..") != 0;
    free(dir);
    return inside;
}

/* Resolve `name` to a confined path. Returns 0, VSCHED_EINVAL (empty name,
 * symlink loop, name too long), VSCHED_EESCAPE, VSCHED_ENOENT, VSCHED_EIO or
 * VSCHED_ENOMEM; no diagnostics. */
static int fs_resolve(const fs_inst *fs, const char *name, fs_path *out)
{
    out->abs = out->rel = NULL;
    if (name == NULL || name[0] == '\0')
        return VSCHED_EINVAL;
    char joined[PATH_MAX];
    int n;
    if (name[0] == '/') {
        n = snprintf(joined, sizeof joined, "%s", name);
    } else {
        if (fs_lexically_inside(name) != 0)
            return VSCHED_EESCAPE;
        n = snprintf(joined, sizeof joined, "%s/%s", fs->root, name);
    }
    if (n < 0 || (size_t)n >= sizeof joined)
        return VSCHED_EINVAL;
    char *abs = realpath(joined, NULL);
    int err = errno;
    if (abs == NULL && name[0] == '/' && !fs_missing_inside(fs, joined))
        return VSCHED_EESCAPE; /* a missing absolute name outside the root */
    if (abs == NULL) {
        switch (err) {
        case ENOENT:
        case ENOTDIR: return VSCHED_ENOENT;
        case ENOMEM: return VSCHED_ENOMEM;
        case ELOOP:
        case ENAMETOOLONG: return VSCHED_EINVAL;
        default: return VSCHED_EIO;
        }
    }
    if (fs_under_root(fs, abs)) {
        out->rel = fs_relative(fs, abs);
    } else if (fs->follow_outside && name[0] != '/') {
        out->rel = fs_normalise(name);
    } else {
        free(abs);
        return VSCHED_EESCAPE;
    }
    if (out->rel == NULL) {
        free(abs);
        return VSCHED_ENOMEM;
    }
    out->abs = abs;
    return VSCHED_OK;
}

static void fs_path_free(fs_path *p)
{
    free(p->abs);
    free(p->rel);
}

/* Report a resolve failure worth a message (not ENOENT: callers probe). */
static int fs_fail(const vsched_ctx *ctx, const char *name, int rc)
{
    if (rc == VSCHED_EESCAPE)
        ctx->diag(ctx, VSCHED_SEV_ERROR, name, 0,
                  "path resolves outside the loader root");
    else if (rc == VSCHED_EINVAL)
        ctx->diag(ctx, VSCHED_SEV_ERROR, name, 0,
                  "invalid source name (empty, too long or a symlink loop)");
    else if (rc == VSCHED_EIO)
        fs_diag(ctx, name, "cannot resolve", errno);
    return rc;
}

/* Read all of `fd` into a ctx->alloc'ed buffer, NUL-terminated past len. */
static int fs_read_all(const vsched_ctx *ctx, int fd, size_t hint,
                       char **bytes, size_t *len)
{
    size_t cap = hint + 2 > 4096 ? hint + 2 : 4096, n = 0;
    char *buf = ctx->alloc(ctx, cap);
    if (buf == NULL)
        return VSCHED_ENOMEM;
    for (;;) {
        if (n + 1 >= cap) {
            char *nb =
                cap > SIZE_MAX / 2 ? NULL : ctx->realloc(ctx, buf, cap * 2);
            if (nb == NULL) {
                ctx->free(ctx, buf);
                return VSCHED_ENOMEM;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r == 0)
            break;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            ctx->free(ctx, buf);
            return VSCHED_EIO;
        }
        n += (size_t)r;
    }
    buf[n] = '\0';
    *bytes = buf;
    *len = n;
    return VSCHED_OK;
}

static int fs_load(void *inst, const vsched_ctx *ctx, const char *name,
                   char **bytes, size_t *len)
{
    fs_path p;
    int rc = fs_resolve(inst, name, &p);
    if (rc != VSCHED_OK)
        return rc == VSCHED_ENOENT ? rc : fs_fail(ctx, name, rc);
    int fd = open(p.abs, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int err = errno;
        rc = err == ENOENT ? VSCHED_ENOENT : VSCHED_EIO;
        if (rc == VSCHED_EIO)
            fs_diag(ctx, name, "cannot open", err);
    } else if (!S_ISREG(st.st_mode)) {
        ctx->diag(ctx, VSCHED_SEV_ERROR, name, 0,
                  S_ISDIR(st.st_mode) ? "is a directory, not a source file"
                                      : "not a regular file");
        rc = VSCHED_EINVAL;
    } else {
        rc = fs_read_all(ctx, fd, (size_t)st.st_size, bytes, len);
        if (rc == VSCHED_EIO)
            fs_diag(ctx, name, "cannot read", errno);
    }
    if (fd >= 0)
        close(fd);
    fs_path_free(&p);
    return rc;
}

static int fs_exists(void *inst, const vsched_ctx *ctx, const char *name)
{
    fs_path p;
    int rc = fs_resolve(inst, name, &p);
    if (rc == VSCHED_ENOENT)
        return 0;
    if (rc != VSCHED_OK)
        return fs_fail(ctx, name, rc);
    fs_path_free(&p);
    return 1;
}

/* Kind by extension of the last path component. */
static const char *fs_kind_of(const char *name)
{
    static const struct {
        const char *ext, *kind;
    } kinds[] = {
        {"c", "c"},     {"h", "header"},  {"cc", "cxx"},     {"cpp", "cxx"},
        {"cxx", "cxx"}, {"hh", "header"}, {"hpp", "header"},
    };
    const char *base = strrchr(name, '/');
    base = base != NULL ? base + 1 : name;
    const char *dot = strrchr(base, '.');
    if (dot == NULL || dot == base)
        return "other";
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(dot + 1, kinds[i].ext) == 0)
            return kinds[i].kind;
    return "other";
}

static int fs_classify(void *inst, const vsched_ctx *ctx, const char *name,
                       char *kind, size_t cap)
{
    if (name == NULL || kind == NULL)
        return VSCHED_EINVAL;
    const char *k = fs_kind_of(name);
    if (strlen(k) >= cap)
        return VSCHED_EINVAL;
    strcpy(kind, k);
    return VSCHED_OK;
}

static int fs_realpath(void *inst, const vsched_ctx *ctx, const char *name,
                       char **canonical)
{
    fs_path p;
    int rc = fs_resolve(inst, name, &p);
    if (rc != VSCHED_OK)
        return rc == VSCHED_ENOENT ? rc : fs_fail(ctx, name, rc);
    size_t n = strlen(p.rel) + 1;
    *canonical = ctx->alloc(ctx, n);
    if (*canonical != NULL)
        memcpy(*canonical, p.rel, n);
    fs_path_free(&p);
    return *canonical != NULL ? VSCHED_OK : VSCHED_ENOMEM;
}

static int fs_parse_bool(const char *v)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    for (size_t i = 0; v != NULL && i < sizeof yes / sizeof yes[0]; i++)
        if (strcasecmp(v, yes[i]) == 0)
            return 1;
    return 0;
}

static int fs_create(const vsched_ctx *ctx, const vsched_config *cfg,
                     void **inst, char **errmsg)
{
    const char *root = cfg->get(cfg, cfg->section, "root");
    char ebuf[128];
    if (root == NULL) {
        *errmsg = fs_format(ctx, 1, "fs: [%s] root is not set", cfg->section);
        return VSCHED_ECONFIG;
    }
    fs_inst *fs = calloc(1, sizeof *fs);
    if (fs == NULL)
        return VSCHED_ENOMEM;
    fs->root = realpath(root, NULL);
    struct stat st;
    if (fs->root == NULL || stat(fs->root, &st) != 0 || !S_ISDIR(st.st_mode)) {
        int err = fs->root == NULL ? errno : ENOTDIR;
        *errmsg = fs_format(ctx, 1, "fs: root '%s': %s", root,
                            strerror_r(err, ebuf, sizeof ebuf));
        free(fs->root);
        free(fs);
        return VSCHED_ECONFIG;
    }
    fs->root_len = strlen(fs->root);
    fs->follow_outside =
        fs_parse_bool(cfg->get(cfg, cfg->section, "follow_outside"));
    *inst = fs;
    return VSCHED_OK;
}

static void fs_destroy(void *inst)
{
    fs_inst *fs = inst;
    if (fs != NULL)
        free(fs->root);
    free(fs);
}

static const vsched_loader_ops fs_loader = {
    .size = sizeof(vsched_loader_ops),
    .load = fs_load,
    .exists = fs_exists,
    .classify = fs_classify,
    .realpath = fs_realpath,
};

static const vsched_plugin fs_plugin = {
    .abi_major = VSCHED_PLUGIN_ABI_MAJOR,
    .abi_minor = VSCHED_PLUGIN_ABI_MINOR,
    .size = sizeof(vsched_plugin),
    .name = "fs",
    .version = "1.0",
    .description = "source loader over a directory tree",
    .roles = VSCHED_ROLE_LOADER,
    .flags = VSCHED_PLUGIN_THREAD_SAFE,
    .schema = fs_schema,
    .n_schema = sizeof fs_schema / sizeof fs_schema[0],
    .create = fs_create,
    .destroy = fs_destroy,
    .loader = &fs_loader,
};

/* The fs plugin's descriptor (static storage, never NULL). */
VSCHED_PLUGIN_DEFINE(fs)
{
    return &fs_plugin;
}
