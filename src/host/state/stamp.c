/*
 * stamp -- file stamps and content hashes; see stamp.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <vsched/plugin.h>
#include <xxhash.h>

#include "state/stamp.h"

static void vr_stamp_fill(vr_stamp *st, const struct stat *sb)
{
    st->mtime_ns =
        (int64_t)sb->st_mtim.tv_sec * 1000000000LL + sb->st_mtim.tv_nsec;
    st->ctime_ns =
        (int64_t)sb->st_ctim.tv_sec * 1000000000LL + sb->st_ctim.tv_nsec;
    st->size = (int64_t)sb->st_size;
    st->ino = (uint64_t)sb->st_ino;
}

/* Contract: see stamp.h. */
int vr_stamp_of(const char *path, vr_stamp *st)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return errno == ENOENT || errno == ENOTDIR ? VSCHED_ENOENT
                                                   : VSCHED_EIO;
    if (!S_ISREG(sb.st_mode))
        return VSCHED_ENOENT;
    vr_stamp_fill(st, &sb);
    return VSCHED_OK;
}

/* Contract: see stamp.h. */
int vr_stamp_equal(const vr_stamp *a, const vr_stamp *b)
{
    return a->mtime_ns == b->mtime_ns && a->ctime_ns == b->ctime_ns &&
           a->size == b->size && a->ino == b->ino;
}

/* Contract: see stamp.h. */
int vr_stamp_trusted(const vr_stamp *st, int64_t seen_ns)
{
    return st->mtime_ns <= seen_ns - VR_RACY_NS;
}

/* Contract: see stamp.h. */
int64_t vr_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Contract: see stamp.h. */
uint64_t vr_hash_bytes(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}

/* Fill buf from fd until it is full or the file ends; the byte count, or
 * -1 on an error. */
static ssize_t vr_fill(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        n += (size_t)r;
    }
    return (ssize_t)n;
}

/* Contract: see stamp.h. A file of one buffer is hashed in one call; a
 * larger one through the streaming state (the same function). */
int vr_hash_file(const char *path, uint64_t *hash, vr_stamp *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? VSCHED_ENOENT
                                                   : VSCHED_EIO;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return VSCHED_ENOENT;
    }
    if (st != NULL)
        vr_stamp_fill(st, &sb);
    static _Thread_local char buf[1 << 16];
    XXH3_state_t *xs = NULL;
    int rc = VSCHED_OK;
    ssize_t n = vr_fill(fd, buf, sizeof buf);
    if (n < 0) {
        rc = VSCHED_EIO;
    } else if ((size_t)n < sizeof buf) {
        *hash = XXH3_64bits(buf, (size_t)n); /* the whole file */
    } else if ((xs = XXH3_createState()) == NULL) {
        rc = VSCHED_ENOMEM;
    } else {
        XXH3_64bits_reset(xs);
        while (n > 0) {
            XXH3_64bits_update(xs, buf, (size_t)n);
            n = vr_fill(fd, buf, sizeof buf);
        }
        if (n < 0)
            rc = VSCHED_EIO;
        else
            *hash = XXH3_64bits_digest(xs);
    }
    XXH3_freeState(xs);
    close(fd);
    return rc;
}
