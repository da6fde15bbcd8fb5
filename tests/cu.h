/*
 * cu.h -- the shared CUnit runner of the test programs.
 *
 * Each test program lists its tests in a vr_cu_test array and calls
 * vr_cu_main(). The runner prints CUnit's basic-mode run summary and exits
 * 0 only when every assertion passed and at least one test ran.
 * VSCHED_TEST_ONLY=NAME runs one test of the program.
 */
#ifndef VSCHED_TESTS_CU_H
#define VSCHED_TESTS_CU_H

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct vr_cu_test {
    const char *name;
    void (*fn)(void);
} vr_cu_test;

/* Watchdog: a test program that hangs is killed after this many seconds
 * (VSCHED_TEST_TIMEOUT overrides), failing instead of stalling the run. */
#define VR_CU_TIMEOUT 300

static inline void vr_cu_watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "test watchdog: timed out (hang?)\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(98);
}

static inline int vr_cu_main(const char *suite_name, const vr_cu_test *tests)
{
    const char *limit = getenv("VSCHED_TEST_TIMEOUT");
    signal(SIGALRM, vr_cu_watchdog);
    alarm(limit != NULL ? (unsigned)atoi(limit) : VR_CU_TIMEOUT);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 99;
    CU_pSuite suite = CU_add_suite(suite_name, NULL, NULL);
    if (suite == NULL)
        return 99;
    /* VSCHED_TEST_ONLY=NAME runs that test alone (e.g. under a debugger). */
    const char *only = getenv("VSCHED_TEST_ONLY");
    for (const vr_cu_test *t = tests; t->name != NULL; t++)
        if ((only == NULL || strcmp(only, t->name) == 0) &&
            CU_add_test(suite, t->name, t->fn) == NULL)
            return 99;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    unsigned failed = CU_get_number_of_failures();
    unsigned ran = CU_get_number_of_tests_run();
    unsigned tests_failed = CU_get_number_of_tests_failed();
    CU_cleanup_registry();
    fflush(stdout);
    if (ran == 0)
        return 99;
    return (failed == 0 && tests_failed == 0) ? 0 : 1;
}

/* ---- assertions: they print both values when they fail ----------------------------------------------------------- */

#define EXPECT_INT(actual, expected)                                          \
    do {                                                                      \
        long long a_ = (long long)(actual), e_ = (long long)(expected);       \
        if (a_ != e_)                                                         \
            fprintf(stderr, "\n  %s:%d: %s == %lld, expected %lld\n",         \
                    __FILE__, __LINE__, #actual, a_, e_);                     \
        CU_ASSERT_EQUAL(a_, e_);                                              \
    } while (0)
#define EXPECT_STR(actual, expected)                                          \
    do {                                                                      \
        const char *a_ = (actual), *e_ = (expected);                          \
        int ok_ = a_ != NULL && e_ != NULL ? strcmp(a_, e_) == 0 : a_ == e_;  \
        if (!ok_)                                                             \
            fprintf(stderr, "\n  %s:%d: %s == \"%s\", expected \"%s\"\n",     \
                    __FILE__, __LINE__, #actual, a_ ? a_ : "(null)",          \
                    e_ ? e_ : "(null)");                                      \
        CU_ASSERT_TRUE(ok_);                                                  \
    } while (0)
#define EXPECT_CONTAINS(haystack, needle)                                     \
    do {                                                                      \
        const char *h_ = (haystack), *n_ = (needle);                          \
        int ok_ = h_ != NULL && strstr(h_, n_) != NULL;                       \
        if (!ok_)                                                             \
            fprintf(stderr, "\n  %s:%d: \"%s\" lacks \"%s\"\n", __FILE__,     \
                    __LINE__, h_ ? h_ : "(null)", n_);                        \
        CU_ASSERT_TRUE(ok_);                                                  \
    } while (0)

#endif
