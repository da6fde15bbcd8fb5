/*
 * test_escape -- names made safe for human output (src/host/common/escape).
 */
#include <stdlib.h>
#include <string.h>

#include "common/escape.h"
#include "cu.h"

static void expect(const char *in, const char *want)
{
    vr_esc e = {0};
    const char *got = vr_esc_name(&e, in);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "escape(\"%s\"): got \"%s\", want \"%s\"\n", in, got,
                want);
    CU_ASSERT_STRING_EQUAL(got, want);
    vr_esc_done(&e);
}

static void plain_names_are_returned_without_a_copy(void)
{
    const char *s = "src/main.c";
    vr_esc e = {0};
    CU_ASSERT_PTR_EQUAL(vr_esc_name(&e, s), s);
    CU_ASSERT_PTR_NULL(e.heap);
    expect("a b$(x)`y`;|&.c", "a b$(x)`y`;|&.c"); /* shell chars are text */
    expect("latin\xc3\xa9.c", "latin\xc3\xa9.c"); /* printable UTF-8 kept */
    expect("\xe2\x82\xac", "\xe2\x82\xac");
    CU_ASSERT_STRING_EQUAL(vr_esc_name(&e, NULL), "(null)");
}

static void controls_and_escape_sequences_are_written_as_c_escapes(void)
{
    expect("a\nb.c", "a\\nb.c");
    expect("\x1b[2J\x1b]0;title\x07.c", "\\e[2J\\e]0;title\\x07.c");
    expect("t\tr\r", "t\\tr\\r");
    expect("del\x7f", "del\\x7f");
    expect("back\\slash", "back\\\\slash"); /* so an escape is unambiguous */
    expect("\x01", "\\x01");
}

static void c1_controls_and_invalid_utf8_are_escaped_bytewise(void)
{
    expect("csi\xc2\x9b"
           "2J",
           "csi\\xc2\\x9b2J");     /* U+009B CSI */
    expect("raw\x9b", "raw\\x9b"); /* a lone 8-bit CSI */
    expect("latin1\xe9.c", "latin1\\xe9.c");
    expect("over\xc0\xaf", "over\\xc0\\xaf");        /* overlong '/' */
    expect("sur\xed\xa0\x80", "sur\\xed\\xa0\\x80"); /* a surrogate */
    expect("cut\xe2\x82", "cut\\xe2\\x82");          /* truncated sequence */
}

static void the_length_is_reported_like_snprintf(void)
{
    char buf[8];
    size_t n = vr_escape(buf, sizeof buf, "a\nbcdefgh", 9);
    CU_ASSERT_EQUAL(n, 10);
    CU_ASSERT_STRING_EQUAL(buf, "a\\nbcde"); /* truncated, terminated */
    CU_ASSERT_EQUAL(vr_escape(NULL, 0, "\x1b", 1), 2);
    /* an embedded NUL (a length past it) is escaped, not a terminator */
    n = vr_escape(buf, sizeof buf, "a\0b", 3);
    CU_ASSERT_EQUAL(n, 6);
    CU_ASSERT_STRING_EQUAL(buf, "a\\x00b");
}

int main(void)
{
    static const vr_cu_test tests[] = {
        {"plain_names_are_returned_without_a_copy",
         plain_names_are_returned_without_a_copy},
        {"controls_and_escape_sequences_are_written_as_c_escapes",
         controls_and_escape_sequences_are_written_as_c_escapes},
        {"c1_controls_and_invalid_utf8_are_escaped_bytewise",
         c1_controls_and_invalid_utf8_are_escaped_bytewise},
        {"the_length_is_reported_like_snprintf",
         the_length_is_reported_like_snprintf},
        {NULL, NULL},
    };
    return vr_cu_main("escape", tests);
}
