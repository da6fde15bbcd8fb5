/*
 * test_isolate_wire -- the framing and fields of the isolate protocol
 * (src/host/build/isolate_wire): what a worker sends is read back as it
 * was sent, and what a broken or hostile worker sends is refused without
 * reading or allocating past the message.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "build/isolate_wire.h"
#include "cu.h"

static void *t_alloc(const vsched_ctx *c, size_t n)
{
    (void)c;
    return malloc(n);
}
static void t_free(const vsched_ctx *c, void *p)
{
    (void)c;
    free(p);
}
static const vsched_ctx tctx = {
    .size = sizeof(vsched_ctx), .alloc = t_alloc, .free = t_free};

static void fields_round_trip_with_null_shapes_kept(void)
{
    vr_wbuf w = {0};
    char *names[] = {"a.h", NULL, "sub/b.h"};
    vr_w_u8(&w, 7);
    vr_w_u32(&w, 0xdeadbeefu);
    vr_w_u64(&w, 0x0102030405060708ull);
    vr_w_i32(&w, -19);
    vr_w_str(&w, "name.c");
    vr_w_str(&w, NULL);
    vr_w_blob(&w, "xy\0z", 4);
    vr_w_blob(&w, NULL, 5); /* a length with no bytes, as a plugin gave */
    vr_w_names(&w, names, 3);
    vr_w_names(&w, NULL, 3); /* deps = NULL, n_deps = 3 */
    vr_rbuf r = {w.p, w.len, 0, 0};
    CU_ASSERT_EQUAL(vr_r_u8(&r), 7);
    CU_ASSERT_EQUAL(vr_r_u32(&r), 0xdeadbeefu);
    CU_ASSERT_EQUAL(vr_r_u64(&r), 0x0102030405060708ull);
    CU_ASSERT_EQUAL(vr_r_i32(&r), -19);
    CU_ASSERT_STRING_EQUAL(vr_r_str(&r), "name.c");
    CU_ASSERT_PTR_NULL(vr_r_str(&r));
    int present = 0;
    size_t len = 0;
    const char *b = vr_r_blob(&r, &present, &len);
    CU_ASSERT(present == 1 && len == 4 && b != NULL &&
              memcmp(b, "xy\0z", 4) == 0);
    b = vr_r_blob(&r, &present, &len);
    CU_ASSERT(present == 0 && len == 5 && b == NULL);
    char **v = NULL;
    size_t n = 0;
    CU_ASSERT_EQUAL(vr_r_names(&r, &tctx, &v, &n), 0);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT(v != NULL && strcmp(v[0], "a.h") == 0 && v[1] == NULL &&
              strcmp(v[2], "sub/b.h") == 0);
    for (size_t i = 0; v != NULL && i < n; i++)
        free(v[i]);
    free(v);
    CU_ASSERT_EQUAL(vr_r_names(&r, &tctx, &v, &n), 0);
    CU_ASSERT_PTR_NULL(v);
    CU_ASSERT_EQUAL(n, 3);
    CU_ASSERT_FALSE(r.bad);
    CU_ASSERT_EQUAL(r.off, r.len);
    vr_w_free(&w);
}

static void a_truncated_or_lying_message_is_bad_not_overread(void)
{
    vr_wbuf w = {0};
    vr_w_str(&w, "abcdef");
    /* Cut inside the string: bad, NULL, nothing read past the end. */
    vr_rbuf r = {w.p, w.len - 3, 0, 0};
    CU_ASSERT_PTR_NULL(vr_r_str(&r));
    CU_ASSERT_TRUE(r.bad);
    CU_ASSERT_EQUAL(vr_r_u64(&r), 0); /* stays bad, reads nothing */
    vr_w_free(&w);

    /* A string whose terminator is not NUL, one with a NUL inside. */
    char s1[] = {3, 0, 0, 0, 'a', 'b', 'c', 'X'};
    r = (vr_rbuf){s1, sizeof s1, 0, 0};
    CU_ASSERT_PTR_NULL(vr_r_str(&r));
    CU_ASSERT_TRUE(r.bad);
    char s2[] = {3, 0, 0, 0, 'a', 0, 'c', 0};
    r = (vr_rbuf){s2, sizeof s2, 0, 0};
    CU_ASSERT_PTR_NULL(vr_r_str(&r));
    CU_ASSERT_TRUE(r.bad);

    /* A blob claiming more bytes than the message has. */
    vr_wbuf b = {0};
    vr_w_u8(&b, 1);
    vr_w_u64(&b, 1ull << 40);
    vr_w_raw(&b, "abc", 3);
    r = (vr_rbuf){b.p, b.len, 0, 0};
    int present = 0;
    size_t len = 0;
    CU_ASSERT_PTR_NULL(vr_r_blob(&r, &present, &len));
    CU_ASSERT_TRUE(r.bad);
    vr_w_free(&b);

    /* A names count of 2^60 in a 20-byte message: refused before any
     * allocation of that size. */
    vr_wbuf c = {0};
    vr_w_u8(&c, 1);
    vr_w_u64(&c, 1ull << 60);
    vr_w_str(&c, "x");
    r = (vr_rbuf){c.p, c.len, 0, 0};
    char **v = (char **)&c; /* must come back NULL */
    size_t n = 99;
    CU_ASSERT_EQUAL(vr_r_names(&r, &tctx, &v, &n), -1);
    CU_ASSERT_PTR_NULL(v);
    CU_ASSERT_EQUAL(n, 0);
    vr_w_free(&c);
}

static void frames_are_bounded_and_an_end_of_file_is_told_apart(void)
{
    int sv[2];
    CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    vr_wbuf w = {0};
    vr_w_str(&w, "payload");
    CU_ASSERT_EQUAL(vr_wire_send(sv[0], VR_W_RESULT, &w), 0);
    uint8_t t = 0;
    char *buf = NULL;
    size_t len = 0;
    CU_ASSERT_EQUAL(vr_wire_recv(sv[1], 0, &t, &buf, &len), 0);
    CU_ASSERT_EQUAL(t, VR_W_RESULT);
    CU_ASSERT_EQUAL(len, w.len);
    CU_ASSERT(buf != NULL && memcmp(buf, w.p, w.len) == 0);
    free(buf);
    vr_w_free(&w);

    /* A length over the bound: refused, the length told, nothing read. */
    unsigned char big[4] = {0xff, 0xff, 0xff, 0x7f};
    CU_ASSERT_EQUAL(write(sv[0], big, 4), 4);
    CU_ASSERT_EQUAL(vr_wire_recv(sv[1], 0, &t, &buf, &len), VSCHED_EINVAL);
    CU_ASSERT_EQUAL(len, 0x7fffffffu);
    CU_ASSERT_PTR_NULL(buf);

    /* A zero length is no message either. */
    unsigned char zero[4] = {0, 0, 0, 0};
    CU_ASSERT_EQUAL(write(sv[0], zero, 4), 4);
    CU_ASSERT_EQUAL(vr_wire_recv(sv[1], 0, &t, &buf, &len), VSCHED_EINVAL);

    /* Half a message, then the deadline: timed out, not hung. */
    unsigned char half[6] = {10, 0, 0, 0, VR_W_RESULT, 1};
    CU_ASSERT_EQUAL(write(sv[0], half, 6), 6);
    CU_ASSERT_EQUAL(
        vr_wire_recv(sv[1], vr_wire_now_ns() + 50000000ull, &t, &buf, &len),
        VSCHED_ETIMEDOUT);

    /* A clean end of file: VSCHED_EIO with errno 0. */
    int sv2[2];
    CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv2), 0);
    close(sv2[0]);
    errno = EBADF;
    CU_ASSERT_EQUAL(vr_wire_recv(sv2[1], 0, &t, &buf, &len), VSCHED_EIO);
    CU_ASSERT_EQUAL(errno, 0);
    close(sv2[1]);
    close(sv[0]);
    close(sv[1]);
}

int main(void)
{
    static const vr_cu_test tests[] = {
        {"fields_round_trip_with_null_shapes_kept",
         fields_round_trip_with_null_shapes_kept},
        {"a_truncated_or_lying_message_is_bad_not_overread",
         a_truncated_or_lying_message_is_bad_not_overread},
        {"frames_are_bounded_and_an_end_of_file_is_told_apart",
         frames_are_bounded_and_an_end_of_file_is_told_apart},
        {NULL, NULL},
    };
    return vr_cu_main("isolate_wire", tests);
}
