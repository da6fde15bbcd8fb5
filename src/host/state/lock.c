/*
 * lock -- the state directory's writer lock; see lock.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vsched/plugin.h>

#include "common/escape.h"
#include "common/util.h"
#include "state/lock.h"

struct vr_lock {
    int fd;
};

/* Contract: see lock.h. */
int vr_mkdirs(const char *dir, char **msg)
{
    char *p = vr_xstrdup(dir);
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            int err = errno;
            vr_esc e = {0};
            *msg = vr_strfmt("cannot create directory %s: %s",
                             vr_esc_name(&e, p), strerror(err));
            vr_esc_done(&e);
            free(p);
            return VSCHED_EIO;
        }
        if (c == '\0')
            break;
        *s = c;
    }
    struct stat st;
    int ok = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
    if (!ok) {
        vr_esc e = {0};
        *msg = vr_strfmt("cannot create directory %s: not a directory",
                         vr_esc_name(&e, p));
        vr_esc_done(&e);
    }
    free(p);
    return ok ? VSCHED_OK : VSCHED_EIO;
}

/* The pid holding a conflicting lock on fd, or 0 when unknown. */
static long vr_lock_holder(int fd)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK)
        return 0;
    return (long)fl.l_pid;
}

/* Record our pid in the lock file (best effort: only messages use it). */
static void vr_lock_note_pid(int fd)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0 && n > 0)
        (void)!pwrite(fd, buf, (size_t)n, 0);
}

/* The lock held on fd: our pid noted in the file. */
static vr_lock *vr_lock_held(int fd)
{
    vr_lock_note_pid(fd);
    vr_lock *l = vr_xmalloc(sizeof *l);
    l->fd = fd;
    return l;
}

/* Contract: see lock.h. */
int vr_lock_take(vr_lock **out, const char *dir, int wait, FILE *err,
                 char **msg)
{
    *out = NULL;
    *msg = NULL;
    int rc = vr_mkdirs(dir, msg);
    if (rc != VSCHED_OK)
        return rc;
    char *path = vr_path_join(dir, "lock");
    /* names as messages print them */
    char *shown = vr_escape_name(path), *dir_shown = vr_escape_name(dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        *msg = vr_strfmt("cannot open %s: %s", shown, strerror(errno));
        free(path);
        free(shown);
        free(dir_shown);
        return VSCHED_EIO;
    }
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_SETLK, &fl) != 0) {
        if (errno != EACCES && errno != EAGAIN) {
            *msg = vr_strfmt("cannot lock %s: %s", shown, strerror(errno));
            rc = VSCHED_EIO;
        } else if (!wait) {
            long pid = vr_lock_holder(fd);
            *msg = vr_strfmt("%s is in use by another vsched-run (pid %ld) "
                             "and --no-wait was given: let that run finish "
                             "or run again without --no-wait",
                             dir_shown, pid);
            rc = VSCHED_EERR;
        } else {
            if (err != NULL) {
                long pid = vr_lock_holder(fd);
                fprintf(err,
                        "vsched-run: waiting for %s: another vsched-run "
                        "(pid %ld) is using it\n",
                        dir_shown, pid);
                fflush(err);
            }
            while (fcntl(fd, F_SETLKW, &fl) != 0) {
                if (errno != EINTR) {
                    *msg = vr_strfmt("cannot lock %s: %s", shown,
                                     strerror(errno));
                    rc = VSCHED_EIO;
                    break;
                }
            }
        }
    }
    free(path);
    free(shown);
    free(dir_shown);
    if (rc != VSCHED_OK) {
        close(fd);
        return rc;
    }
    *out = vr_lock_held(fd);
    return VSCHED_OK;
}

/* Contract: see lock.h. */
int vr_lock_try(vr_lock **out, const char *dir)
{
    *out = NULL;
    char *path = vr_path_join(dir, "lock");
    int fd = open(path, O_RDWR | O_CLOEXEC);
    free(path);
    if (fd < 0)
        return VSCHED_EERR;
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_SETLK, &fl) != 0) {
        close(fd);
        return VSCHED_EERR;
    }
    *out = vr_lock_held(fd);
    return VSCHED_OK;
}

/* Contract: see lock.h. Closing the descriptor drops the lock. */
void vr_lock_release(vr_lock *l)
{
    if (l == NULL)
        return;
    close(l->fd);
    free(l);
}
