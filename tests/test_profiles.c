/*
 * test_profiles -- one file built for more profiles than a 16-bit count
 * holds: every Artifact is answered, none aborts the process (a file's
 * profile count was once 16 bits, and the 65536th profile aborted in
 * admission). Apart from test_sched because it takes seconds: interning
 * and finding a profile are linear in the profiles a file has.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vsched/vsched.h>

#include "cu.h"
#include "world.h"

static const mem_file one_file[] = {{"a.c", "int a;\n"}, {NULL, NULL}};

static void more_profiles_than_sixteen_bits_hold(void)
{
    enum {
        N = 65536 + 8
    };
    vsched *s = start(one_file, 2);
    vsched_request *reqs = calloc(N, sizeof *reqs);
    char *names = malloc((size_t)N * 12);
    const vsched_result **res = calloc(N, sizeof *res);
    CU_ASSERT_FATAL(reqs != NULL && names != NULL && res != NULL);
    for (size_t i = 0; i < N; i++) {
        snprintf(names + 12 * i, 12, "p%zu", i);
        reqs[i] = (vsched_request){.name = "a.c",
                                   .stage = VSCHED_STAGE_ARTIFACT,
                                   .profile = names + 12 * i};
    }
    vsched_batch *b = NULL;
    CU_ASSERT_EQUAL_FATAL(vsched_submit_batch(s, reqs, N, &b), VSCHED_OK);
    CU_ASSERT_EQUAL(vsched_wait_batch(b, res), VSCHED_OK);
    size_t wrong = 0;
    for (size_t i = 0; i < N; i++)
        wrong += res[i]->status != VSCHED_OK ||
                 strcmp(res[i]->profile, names + 12 * i) != 0;
    CU_ASSERT_EQUAL(wrong, 0);
    vsched_batch_release(b);
    stop(s);
    free(res);
    free(names);
    free(reqs);
}

int main(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    /* Interning and finding a profile are linear in a file's profiles:
     * 65544 of them take seconds here, over the watchdog's five minutes
     * under a sanitizer. Said as a skip (77), not as a pass. */
    puts("test_profiles: skipped under a sanitizer (minutes there)");
    return 77;
#endif
    static const vr_cu_test tests[] = {
        {"more_profiles_than_sixteen_bits_hold",
         more_profiles_than_sixteen_bits_hold},
        {NULL, NULL},
    };
    return vr_cu_main("profiles", tests);
}
