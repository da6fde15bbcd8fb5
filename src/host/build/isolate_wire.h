/*
 * isolate_wire -- the framing and encoding of the isolate protocol
 * (isolate.h): what the host and an executor worker say to each other
 * over their socket.
 *
 * A message is a 4-byte little-endian length L (1 <= L <= VR_WIRE_MAX),
 * then L bytes: a type byte (vr_wire_type) and the payload. A payload is
 * a sequence of fields, each little-endian:
 *
 *   u8, u32, u64     as they are;
 *   str              u32 length (0xffffffff: a NULL string), the bytes,
 *                    then one NUL byte (checked by the reader);
 *   blob             u8 present, u64 length, then (present) the bytes;
 *   names            u8 present, u64 count, then (present) count strs:
 *                    the shape of a plugin's array exactly as returned (a
 *                    NULL array behind a count, NULL entries), so the
 *                    host's contract checks see what the plugin did.
 *
 * A reader never trusts a length: every field is bounds-checked against
 * the message, and a count is checked against the bytes left before
 * anything is allocated for it. A malformed message sets `bad` in the
 * reader; the caller then treats the peer as broken.
 *
 * Thread-safety: none; a buffer belongs to one thread.
 */
#ifndef VSCHED_HOST_ISOLATE_WIRE_H
#define VSCHED_HOST_ISOLATE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <vsched/plugin.h>

/* Largest message, in bytes (an artifact's bytes travel in one). */
#define VR_WIRE_MAX (256u * 1024u * 1024u)
#define VR_WIRE_PROTOCOL 1u

typedef enum vr_wire_type {
    /* host -> worker */
    VR_W_HELLO = 1,  /* protocol, plugin, config path, dir, entries */
    VR_W_SOURCE = 2, /* the operations, one call at a time */
    VR_W_DEPS = 3,
    VR_W_ANALYSIS = 4,
    VR_W_ARTIFACT = 5,
    VR_W_JOB = 6,
    VR_W_SNAP = 7,    /* answers NEED: a snapshot's name, kind, bytes */
    VR_W_LOADED = 8,  /* answers LOAD: status, bytes */
    VR_W_REALED = 9,  /* answers REALPATH: status, name */
    VR_W_CANCEL = 10, /* the call in flight was cancelled */
    /* worker -> host */
    VR_W_READY = 32,   /* answers HELLO: status, message */
    VR_W_RESULT = 33,  /* ends a call */
    VR_W_NEED = 34,    /* the worker lacks snapshot #i of the call */
    VR_W_DIAG = 35,    /* ctx->diag */
    VR_W_LOAD = 36,    /* ctx->load */
    VR_W_REALPATH = 37 /* ctx->realpath */
} vr_wire_type;

/* A message being written (heap, grows). */
typedef struct vr_wbuf {
    char *p;
    size_t len, cap;
} vr_wbuf;

void vr_w_u8(vr_wbuf *w, uint8_t v);
void vr_w_u32(vr_wbuf *w, uint32_t v);
void vr_w_u64(vr_wbuf *w, uint64_t v);
void vr_w_i32(vr_wbuf *w, int v);
void vr_w_raw(vr_wbuf *w, const void *p, size_t n);
void vr_w_str(vr_wbuf *w, const char *s);
void vr_w_blob(vr_wbuf *w, const char *p, size_t n);
void vr_w_names(vr_wbuf *w, char *const *v, size_t n);
void vr_w_free(vr_wbuf *w);

/* A message being read: p[0..len), borrowed. */
typedef struct vr_rbuf {
    const char *p;
    size_t len, off;
    int bad; /* set by the first field that does not fit */
} vr_rbuf;

uint8_t vr_r_u8(vr_rbuf *r);
uint32_t vr_r_u32(vr_rbuf *r);
uint64_t vr_r_u64(vr_rbuf *r);
int vr_r_i32(vr_rbuf *r);
/* 16 raw bytes into out. */
void vr_r_raw(vr_rbuf *r, void *out, size_t n);
/* A str: borrowed from the message (NUL-terminated), NULL for a NULL
 * string or when bad. */
const char *vr_r_str(vr_rbuf *r);
/* A blob: *present, *len, the bytes borrowed (NULL when absent). */
const char *vr_r_blob(vr_rbuf *r, int *present, size_t *len);
/* A names array, copied with ctx->alloc (host-owned, as a plugin's):
 * *v NULL when absent (then *n is the count as sent). 0, or -1 when bad
 * or out of memory (nothing left allocated, *v NULL, *n 0). */
int vr_r_names(vr_rbuf *r, const vsched_ctx *ctx, char ***v, size_t *n);

/* Send one message of `type` with payload w (NULL: empty). 0, or
 * VSCHED_EIO (errno set). SIGPIPE is never raised (MSG_NOSIGNAL). */
int vr_wire_send(int fd, uint8_t type, const vr_wbuf *w);

/* Receive one message into *buf (heap, *len bytes of payload after the
 * type, which goes to *type). `deadline_ns` (CLOCK_MONOTONIC; 0: none)
 * bounds the wait for the rest of a message once its first byte came.
 * Returns 0; VSCHED_EIO at end of file or a read error (errno; 0 for a
 * clean end of file); VSCHED_EINVAL for a length of 0 or over
 * VR_WIRE_MAX (*len then holds the length announced); VSCHED_ETIMEDOUT. */
int vr_wire_recv(int fd, uint64_t deadline_ns, uint8_t *type, char **buf,
                 size_t *len);

/* CLOCK_MONOTONIC in ns. */
uint64_t vr_wire_now_ns(void);

#endif
