/*
 * isolate_wire -- framing and fields of the isolate protocol; see
 * isolate_wire.h.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "build/isolate_wire.h"
#include "common/util.h"

#define VR_NULL_STR 0xffffffffu

/* Contract: see isolate_wire.h. */
uint64_t vr_wire_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- writing --------------------------------------------------------------- */

/* Contract: see isolate_wire.h. */
void vr_w_raw(vr_wbuf *w, const void *p, size_t n)
{
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n)
            cap *= 2;
        w->p = vr_xrealloc(w->p, cap);
        w->cap = cap;
    }
    if (n > 0)
        memcpy(w->p + w->len, p, n);
    w->len += n;
}

/* Contract: see isolate_wire.h. */
void vr_w_u8(vr_wbuf *w, uint8_t v)
{
    vr_w_raw(w, &v, 1);
}

/* Contract: see isolate_wire.h. */
void vr_w_u32(vr_wbuf *w, uint32_t v)
{
    unsigned char b[4];
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    vr_w_raw(w, b, 4);
}

/* Contract: see isolate_wire.h. */
void vr_w_u64(vr_wbuf *w, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    vr_w_raw(w, b, 8);
}

/* Contract: see isolate_wire.h. */
void vr_w_i32(vr_wbuf *w, int v)
{
    vr_w_u32(w, (uint32_t)v);
}

/* Contract: see isolate_wire.h. */
void vr_w_str(vr_wbuf *w, const char *s)
{
    if (s == NULL) {
        vr_w_u32(w, VR_NULL_STR);
        return;
    }
    size_t n = strlen(s);
    vr_w_u32(w, (uint32_t)n);
    vr_w_raw(w, s, n + 1);
}

/* Contract: see isolate_wire.h. */
void vr_w_blob(vr_wbuf *w, const char *p, size_t n)
{
    vr_w_u8(w, p != NULL);
    vr_w_u64(w, n);
    if (p != NULL)
        vr_w_raw(w, p, n);
}

/* Contract: see isolate_wire.h. */
void vr_w_names(vr_wbuf *w, char *const *v, size_t n)
{
    vr_w_u8(w, v != NULL);
    vr_w_u64(w, n);
    for (size_t i = 0; v != NULL && i < n; i++)
        vr_w_str(w, v[i]);
}

/* Contract: see isolate_wire.h. */
void vr_w_free(vr_wbuf *w)
{
    free(w->p);
    memset(w, 0, sizeof *w);
}

/* ---- reading --------------------------------------------------------------- */

static const unsigned char *vr_r_take(vr_rbuf *r, size_t n)
{
    if (r->bad || n > r->len - r->off) {
        r->bad = 1;
        return NULL;
    }
    const unsigned char *p = (const unsigned char *)r->p + r->off;
    r->off += n;
    return p;
}

/* Contract: see isolate_wire.h. */
uint8_t vr_r_u8(vr_rbuf *r)
{
    const unsigned char *p = vr_r_take(r, 1);
    return p != NULL ? p[0] : 0;
}

/* The next n bytes as a little-endian number (0 past the end). */
static uint64_t r_le(vr_rbuf *r, int n)
{
    const unsigned char *p = vr_r_take(r, (size_t)n);
    uint64_t v = 0;
    for (int i = 0; p != NULL && i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* Contract: see isolate_wire.h. */
uint32_t vr_r_u32(vr_rbuf *r)
{
    return (uint32_t)r_le(r, 4);
}

/* Contract: see isolate_wire.h. */
uint64_t vr_r_u64(vr_rbuf *r)
{
    return r_le(r, 8);
}

/* Contract: see isolate_wire.h. */
int vr_r_i32(vr_rbuf *r)
{
    return (int)(int32_t)vr_r_u32(r);
}

/* Contract: see isolate_wire.h. */
void vr_r_raw(vr_rbuf *r, void *out, size_t n)
{
    const unsigned char *p = vr_r_take(r, n);
    if (p != NULL)
        memcpy(out, p, n);
    else
        memset(out, 0, n);
}

/* Contract: see isolate_wire.h. */
const char *vr_r_str(vr_rbuf *r)
{
    uint32_t n = vr_r_u32(r);
    if (r->bad || n == VR_NULL_STR)
        return NULL;
    const unsigned char *p = vr_r_take(r, (size_t)n + 1);
    if (p == NULL || p[n] != '\0' || memchr(p, '\0', n) != NULL) {
        r->bad = 1;
        return NULL;
    }
    return (const char *)p;
}

/* Contract: see isolate_wire.h. */
const char *vr_r_blob(vr_rbuf *r, int *present, size_t *len)
{
    *present = vr_r_u8(r) != 0;
    uint64_t n = vr_r_u64(r);
    *len = (size_t)n;
    if (r->bad || !*present)
        return NULL;
    if (n > r->len - r->off) {
        r->bad = 1;
        return NULL;
    }
    return (const char *)vr_r_take(r, (size_t)n);
}

/* Contract: see isolate_wire.h. */
int vr_r_names(vr_rbuf *r, const vsched_ctx *ctx, char ***v, size_t *n)
{
    *v = NULL;
    *n = 0;
    int present = vr_r_u8(r) != 0;
    uint64_t count = vr_r_u64(r);
    if (r->bad)
        return -1;
    if (!present) {
        *n = (size_t)count;
        return 0;
    }
    /* Each entry takes at least 4 bytes: a count beyond that is a lie. */
    if (count > (r->len - r->off) / 4) {
        r->bad = 1;
        return -1;
    }
    char **a = ctx->alloc(ctx, (count ? count : 1) * sizeof *a);
    if (a == NULL)
        return -1;
    size_t i = 0;
    for (; i < count; i++) {
        const char *s = vr_r_str(r);
        if (r->bad)
            break;
        a[i] = NULL;
        if (s != NULL) {
            size_t l = strlen(s) + 1;
            a[i] = ctx->alloc(ctx, l);
            if (a[i] == NULL) {
                r->bad = 1;
                break;
            }
            memcpy(a[i], s, l);
        }
    }
    if (r->bad) {
        for (size_t k = 0; k < i; k++)
            if (a[k] != NULL)
                ctx->free(ctx, a[k]);
        ctx->free(ctx, a);
        return -1;
    }
    *v = a;
    *n = (size_t)count;
    return 0;
}

/* ---- framing --------------------------------------------------------------- */

static int vr_write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return VSCHED_EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Contract: see isolate_wire.h. */
int vr_wire_send(int fd, uint8_t type, const vr_wbuf *w)
{
    size_t plen = w != NULL ? w->len : 0;
    unsigned char hdr[5];
    uint32_t l = (uint32_t)(plen + 1);
    for (int i = 0; i < 4; i++)
        hdr[i] = (unsigned char)(l >> (8 * i));
    hdr[4] = type;
    int rc = vr_write_all(fd, (const char *)hdr, sizeof hdr);
    if (rc == 0 && plen > 0)
        rc = vr_write_all(fd, w->p, plen);
    return rc;
}

/* Read n bytes; a clean end of file before the first byte gives
 * VSCHED_EIO with errno 0. */
static int vr_read_all(int fd, char *p, size_t n, uint64_t deadline_ns)
{
    while (n > 0) {
        if (deadline_ns != 0) {
            uint64_t now = vr_wire_now_ns();
            if (now >= deadline_ns)
                return VSCHED_ETIMEDOUT;
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            int ms = (int)((deadline_ns - now) / 1000000u) + 1;
            int k = poll(&pfd, 1, ms);
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                return VSCHED_EIO;
            if (k == 0)
                continue;
        }
        ssize_t k = read(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k == 0)
            errno = 0;
        if (k <= 0)
            return VSCHED_EIO;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Contract: see isolate_wire.h. */
int vr_wire_recv(int fd, uint64_t deadline_ns, uint8_t *type, char **buf,
                 size_t *len)
{
    unsigned char hdr[4];
    *buf = NULL;
    *len = 0;
    int rc = vr_read_all(fd, (char *)hdr, 4, deadline_ns);
    if (rc != 0)
        return rc;
    uint32_t l = 0;
    for (int i = 0; i < 4; i++)
        l |= (uint32_t)hdr[i] << (8 * i);
    if (l == 0 || l > VR_WIRE_MAX) {
        *len = l;
        return VSCHED_EINVAL;
    }
    char *b = vr_xmalloc(l);
    rc = vr_read_all(fd, b, l, deadline_ns);
    if (rc != 0) {
        if (rc == VSCHED_EIO && errno == 0)
            errno = EPIPE; /* cut off inside a message */
        free(b);
        return rc;
    }
    *type = (uint8_t)b[0];
    memmove(b, b + 1, l - 1);
    *buf = b;
    *len = l - 1;
    return 0;
}
