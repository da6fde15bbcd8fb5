/*
 * journal -- outputs published and not yet recorded; see journal.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vsched/plugin.h>

#include "common/escape.h"
#include "common/strmap.h"
#include "common/util.h"
#include "state/journal.h"
#include "state/stamp.h"

#define VR_JOURNAL_FILE "published"

struct vr_journal {
    int fd;
    /* lock: guards the writes to fd and `lost`; a leaf. */
    pthread_mutex_t lock;
    int lost; /* a note could not be written */
};

/* The journal at `path`, opened with `flags` only if it is a regular
 * file of its own: never through a symbolic link, never a FIFO, device
 * or directory, never a second name of some other file (a tree copied
 * with cp -al). It is the state directory's own file; what else is there
 * is not ours to read, write or empty. -1 with errno set, ENOTSUP for
 * what is not one. */
static int vr_journal_fd(const char *path, int flags)
{
    int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
    /* ELOOP: a symbolic link; EISDIR: a directory opened to write; ENXIO:
     * a FIFO opened to write with no reader. */
    if (fd < 0 && (errno == ELOOP || errno == EISDIR || errno == ENXIO))
        errno = ENOTSUP;
    struct stat st;
    if (fd >= 0 &&
        (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)) {
        close(fd);
        fd = -1;
        errno = ENOTSUP;
    }
    return fd;
}

/* What is wrong with the journal at `path` that vr_journal_fd refused
 * with `err` (heap). */
static char *vr_journal_problem(const char *path, int err)
{
    vr_esc e = {0};
    const char *shown = vr_esc_name(&e, path);
    char *m = err == ENOTSUP
                  ? vr_strfmt("%s is not a regular file of its own: it is "
                              "where vsched-run keeps its journal of "
                              "outputs; remove it",
                              shown)
                  : vr_strfmt("cannot open %s: %s", shown, strerror(err));
    vr_esc_done(&e);
    return m;
}

/* "vsched-run: kept PATH: WHY" on err. */
static void vr_say_kept(FILE *err, const char *path, const char *why)
{
    fputs("vsched-run: kept ", err);
    vr_put_name(err, path);
    fprintf(err, ": %s\n", why);
}

/* Contract: see journal.h. */
char *vr_output_target(const char *out_real, const char *path, FILE *err)
{
    if (path == NULL || path[0] == '\0')
        return NULL; /* a record with no output */
    errno = EXDEV;   /* no out_dir: nothing is under it */
    char *at =
        out_real != NULL ? vr_path_resolve_inside(out_real, path) : NULL;
    if (at == NULL) {
        if (errno == EXDEV && err != NULL) {
            char *real = realpath(path, NULL);
            vr_say_kept(err, path,
                        real != NULL && out_real != NULL &&
                                strcmp(real, out_real) == 0
                            ? "it is [executor] out_dir itself"
                            : "it is not under [executor] out_dir");
            free(real);
        }
        return NULL;
    }
    struct stat st;
    int found = lstat(at, &st) == 0;
    if (found && !S_ISDIR(st.st_mode))
        return at;
    if (found && err != NULL) /* no executor writes a directory */
        vr_say_kept(err, at, "it is a directory, not an output");
    else if (!found && errno != ENOENT && err != NULL) {
        fputs("vsched-run: cannot remove ", err);
        vr_put_name(err, at);
        fprintf(err, ": %s\n", strerror(errno));
    }
    free(at);
    return NULL;
}

/* Contract: see journal.h. */
char *vr_output_unlink(char *at, FILE *err, int quiet)
{
    if (at == NULL || unlink(at) == 0)
        return at;
    if (errno == EISDIR) { /* made a directory since */
        if (!quiet)
            vr_say_kept(err, at, "it is a directory, not an output");
    } else if (errno != ENOENT) {
        fputs("vsched-run: cannot remove ", err);
        vr_put_name(err, at);
        fprintf(err, ": %s\n", strerror(errno));
    }
    free(at);
    return NULL;
}

/* Contract: see journal.h. */
char *vr_output_remove(const char *out_real, const char *path, FILE *err,
                       int quiet)
{
    return vr_output_unlink(
        vr_output_target(out_real, path, quiet ? NULL : err), err, quiet);
}

/* Contract: see journal.h. */
int vr_journal_remove(const char *state_dir, char **msg)
{
    char *path = vr_path_join(state_dir, VR_JOURNAL_FILE);
    int rc = VSCHED_OK;
    if (unlink(path) != 0 && errno != ENOENT) {
        int err = errno;
        vr_esc e = {0};
        *msg = vr_strfmt("cannot remove %s: %s", vr_esc_name(&e, path),
                         strerror(err));
        vr_esc_done(&e);
        rc = VSCHED_EIO;
    }
    free(path);
    return rc;
}

/* Contract: see journal.h. */
int vr_journal_check(const char *state_dir, int to_write, char **msg)
{
    char *path = vr_path_join(state_dir, VR_JOURNAL_FILE);
    int fd = vr_journal_fd(path, to_write ? O_WRONLY | O_APPEND : O_RDONLY);
    int rc = VSCHED_OK;
    if (fd >= 0)
        close(fd);
    else if (errno != ENOENT) {
        *msg = vr_journal_problem(path, errno);
        rc = VSCHED_EIO;
    }
    free(path);
    return rc;
}

/* Contract: see journal.h. */
int vr_journal_open(vr_journal **out, const char *state_dir, char **msg)
{
    char *path = vr_path_join(state_dir, VR_JOURNAL_FILE);
    int fd = vr_journal_fd(path, O_WRONLY | O_CREAT | O_APPEND);
    *out = NULL;
    if (fd < 0) {
        *msg = vr_journal_problem(path, errno);
        free(path);
        return VSCHED_EIO;
    }
    free(path);
    vr_journal *j = vr_xcalloc(1, sizeof *j);
    j->fd = fd;
    pthread_mutex_init(&j->lock, NULL);
    *out = j;
    return VSCHED_OK;
}

/* Contract: see journal.h. */
void vr_journal_note(vr_journal *j, const char *path, const char *tmp_path)
{
    if (j == NULL || path == NULL)
        return;
    vr_stamp st;
    if (tmp_path == NULL || vr_stamp_of(tmp_path, &st) != VSCHED_OK)
        return; /* nothing to know the file by: never removed (journal.h) */
    /* "INO:SIZE:MTIME:PATH\0" in one write(2): names may hold '\n'. */
    char *note = vr_strfmt("%llu:%lld:%lld:%s", (unsigned long long)st.ino,
                           (long long)st.size, (long long)st.mtime_ns, path);
    size_t n = strlen(note) + 1;
    pthread_mutex_lock(&j->lock);
    ssize_t w;
    do
        w = write(j->fd, note, n);
    while (w < 0 && errno == EINTR);
    if (w != (ssize_t)n)
        j->lost = 1;
    pthread_mutex_unlock(&j->lock);
    free(note);
}

/* Contract: see journal.h. */
void vr_journal_clear(vr_journal *j)
{
    if (j == NULL)
        return;
    pthread_mutex_lock(&j->lock);
    if (!j->lost && ftruncate(j->fd, 0) != 0)
        j->lost = 1;
    pthread_mutex_unlock(&j->lock);
}

/* Contract: see journal.h. */
void vr_journal_close(vr_journal *j)
{
    if (j == NULL)
        return;
    close(j->fd);
    pthread_mutex_destroy(&j->lock);
    free(j);
}

/* The whole of `path` (malloc, *len bytes), or NULL. */
static char *vr_read_all(const char *path, size_t *len)
{
    int fd = vr_journal_fd(path, O_RDONLY);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (f == NULL) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    size_t n = 0, cap = 4096;
    char *buf = vr_xcalloc(1, cap);
    for (size_t r; (r = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap)
            buf = vr_xrealloc(buf, cap *= 2);
    }
    fclose(f);
    *len = n;
    return buf;
}

/* 1 when a record of `snap` vouches for the file at `path` as it is:
 * one records an output with the file's very stamp (inode, size, mtime,
 * ctime). The file is known by its stamp, not by how a note spells its
 * name ("out/./release/a.o" is the recorded "out/release/a.o"). */
static int vr_vouched(const vr_snapshot *snap, const char *path)
{
    vr_stamp st;
    if (vr_stamp_of(path, &st) != VSCHED_OK)
        return 1; /* not there: nothing to distrust */
    for (size_t i = 0; i < snap->n_art; i++)
        if (snap->art[i].out_path != NULL &&
            vr_stamp_equal(&snap->art[i].out_st, &st))
            return 1;
    for (size_t i = 0; i < snap->n_job; i++)
        if (snap->job[i].out_path != NULL &&
            vr_stamp_equal(&snap->job[i].out_st, &st))
            return 1;
    return 0;
}

/* One note "INO:SIZE:MTIME:PATH" (journal.h): the path (in `note`) and
 * the stamp of the file published there, or NULL when the note is not
 * one (cut short by a kill, or written by an older vsched-run). */
static const char *vr_parse_note(const char *note, vr_stamp *st)
{
    unsigned long long ino;
    long long size, mtime;
    int used = -1;
    if (sscanf(note, "%llu:%lld:%lld:%n", &ino, &size, &mtime, &used) != 3 ||
        used < 0 || note[used] != '/')
        return NULL;
    *st = (vr_stamp){.mtime_ns = mtime, .size = size, .ino = ino};
    return note + used;
}

/* 1 when the file at `path` is the one the note's stamp describes: the
 * rename that published it keeps its inode, size and mtime (not its
 * ctime). */
static int vr_still_published(const char *path, const vr_stamp *noted)
{
    vr_stamp now;
    return vr_stamp_of(path, &now) == VSCHED_OK && now.ino == noted->ino &&
           now.size == noted->size && now.mtime_ns == noted->mtime_ns;
}

/* Each file the journal notes that is still the one published, lies
 * inside `out_dir` and that no record of `snap` vouches for (every such
 * resolved: fn(path, arg), which returns 1 to count
 * it. Returns the count. */
static size_t vr_journal_scan(const char *file, const char *out_dir,
                              const vr_snapshot *snap,
                              int (*fn)(const char *path, void *arg),
                              void *arg)
{
    size_t len = 0, counted = 0;
    char *out_real = out_dir != NULL ? realpath(out_dir, NULL) : NULL;
    char *text = out_real != NULL ? vr_read_all(file, &len) : NULL;
    for (size_t at = 0; text != NULL && at < len;) {
        const char *note = text + at;
        size_t n = strnlen(note, len - at);
        at += n + 1;
        vr_stamp noted;
        const char *noted_path = at > len ? NULL : vr_parse_note(note, &noted);
        char *path = noted_path != NULL
                         ? vr_path_resolve_inside(out_real, noted_path)
                         : NULL;
        /* Otherwise it names no output, or that file is gone or
         * replaced. */
        if (path != NULL && vr_still_published(path, &noted) &&
            !vr_vouched(snap, path))
            counted += fn(path, arg) != 0;
        free(path);
    }
    free(text);
    free(out_real);
    return counted;
}

/* What a stale note's output gets said with (settle and -n). */
#define VR_STALE_WHY " (published by an earlier run that did not record it)\n"

typedef struct vr_settle_arg {
    FILE *out;
    int quiet;
} vr_settle_arg;

static int vr_settle_one(const char *path, void *arg)
{
    const vr_settle_arg *a = arg;
    if (unlink(path) != 0)
        return 0;
    if (!a->quiet) {
        fputs("vsched-run: removed ", a->out);
        vr_put_name(a->out, path);
        fputs(VR_STALE_WHY, a->out);
    }
    return 1;
}

typedef struct vr_list_arg {
    FILE *out;
    vr_strmap *listed;
} vr_list_arg;

/* A path noted twice is removed once: listed once. */
static int vr_list_one(const char *path, void *arg)
{
    vr_list_arg *a = arg;
    if (vr_strmap_get(a->listed, path) >= 0)
        return 0;
    vr_strmap_put(a->listed, path, 0);
    fputs("remove ", a->out);
    vr_put_name(a->out, path);
    fputs(VR_STALE_WHY, a->out);
    return 1;
}

static int vr_pending_one(const char *path, void *arg)
{
    vr_strmap *set = arg;
    if (vr_strmap_get(set, path) >= 0)
        return 0;
    vr_strmap_put(set, path, 0);
    return 1;
}

/* Contract: see journal.h. */
size_t vr_journal_pending(const char *state_dir, const char *out_dir,
                          const vr_snapshot *snap, vr_strmap *set)
{
    char *file = vr_path_join(state_dir, VR_JOURNAL_FILE);
    size_t n = vr_journal_scan(file, out_dir, snap, vr_pending_one, set);
    free(file);
    return n;
}

/* Contract: see journal.h. */
size_t vr_journal_list(const char *state_dir, const char *out_dir,
                       const vr_snapshot *snap, vr_strmap *listed, FILE *out)
{
    char *file = vr_path_join(state_dir, VR_JOURNAL_FILE);
    vr_list_arg a = {out, listed};
    size_t n = vr_journal_scan(file, out_dir, snap, vr_list_one, &a);
    free(file);
    return n;
}

/* Contract: see journal.h. */
size_t vr_journal_settle(const char *state_dir, const char *out_dir,
                         const vr_snapshot *snap, FILE *out, FILE *err,
                         int quiet)
{
    char *file = vr_path_join(state_dir, VR_JOURNAL_FILE);
    vr_settle_arg a = {out, quiet};
    size_t removed = vr_journal_scan(file, out_dir, snap, vr_settle_one, &a);
    /* Emptied only when it is the journal; one that cannot be opened is
     * left as it is (vr_journal_open says what is wrong with it). */
    int fd = vr_journal_fd(file, O_WRONLY);
    if (fd >= 0 && ftruncate(fd, 0) != 0) {
        int e = errno;
        fputs("vsched-run: cannot empty ", err);
        vr_put_name(err, file);
        fprintf(err, ": %s\n", strerror(e));
    }
    if (fd >= 0)
        close(fd);
    free(file);
    return removed;
}
