/*
 * fuzz.h -- the one entry point every fuzz target defines (libFuzzer's),
 * and the checks it makes: a failed check aborts, which libFuzzer and the
 * corpus replay (replay.c) both report as a finding.
 */
#ifndef VSCHED_TESTS_FUZZ_H
#define VSCHED_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,  \
                    #cond);                                                   \
            abort();                                                          \
        }                                                                     \
    } while (0)

#endif
