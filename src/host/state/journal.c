/*
 * journal -- outputs published and not yet recorded; see journal.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vsched/plugin.h>

#include "common/escape.h"
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

/* Contract: see journal.h. */
int vr_journal_open(vr_journal **out, const char *state_dir, char **msg)
{
    char *path = vr_path_join(state_dir, VR_JOURNAL_FILE);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    *out = NULL;
    if (fd < 0) {
        *msg = vr_strfmt("cannot open %s: %s", path, strerror(errno));
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
void vr_journal_note(vr_journal *j, const char *path)
{
    if (j == NULL || path == NULL)
        return;
    size_t n = strlen(path) + 1; /* with its NUL: names may hold '\n' */
    pthread_mutex_lock(&j->lock);
    ssize_t w;
    do
        w = write(j->fd, path, n);
    while (w < 0 && errno == EINTR);
    if (w != (ssize_t)n)
        j->lost = 1;
    pthread_mutex_unlock(&j->lock);
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
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
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

/* 1 when a record of `snap` vouches for the file at `path` as it is. */
static int vr_vouched(const vr_snapshot *snap, const char *path)
{
    vr_stamp st;
    if (vr_stamp_of(path, &st) != VSCHED_OK)
        return 1; /* not there: nothing to distrust */
    for (size_t i = 0; i < snap->n_art; i++)
        if (snap->art[i].out_path != NULL &&
            strcmp(snap->art[i].out_path, path) == 0)
            return vr_stamp_equal(&snap->art[i].out_st, &st);
    for (size_t i = 0; i < snap->n_job; i++)
        if (snap->job[i].out_path != NULL &&
            strcmp(snap->job[i].out_path, path) == 0)
            return vr_stamp_equal(&snap->job[i].out_st, &st);
    return 0;
}

/* Contract: see journal.h. */
size_t vr_journal_settle(const char *state_dir, const vr_snapshot *snap,
                         int all, FILE *out, int quiet)
{
    char *file = vr_path_join(state_dir, VR_JOURNAL_FILE);
    size_t len = 0, removed = 0;
    char *text = vr_read_all(file, &len);
    for (size_t at = 0; text != NULL && at < len;) {
        const char *path = text + at;
        size_t n = strnlen(path, len - at);
        at += n + 1;
        if (n == 0 || at > len || path[0] != '/')
            continue; /* a note cut short by the kill names nothing */
        if ((all || !vr_vouched(snap, path)) && unlink(path) == 0) {
            removed++;
            if (!quiet) {
                fputs("vsched-run: removed ", out);
                vr_put_name(out, path);
                fputs(" (published by a run killed before recording it)\n",
                      out);
            }
        }
    }
    free(text);
    if (truncate(file, 0) != 0 && errno != ENOENT)
        fprintf(out, "vsched-run: cannot empty %s: %s\n", file,
                strerror(errno));
    free(file);
    return removed;
}
