/* fuzz.h: what every fuzz target in tests/fuzz/ shares.
 *
 * Each fuzz_<name>.c defines LLVMFuzzerTestOneInput and is built twice: with clang and libFuzzer by
 * `make fuzz` (tests/fuzz/run.sh), which searches for new inputs, and with gcc under ASan and UBSan
 * together with replay_main.c, which feeds it every file of tests/fuzz/seeds/<name>/ as part of
 * `make test`. A target checks properties of the parser's output with FUZZ_CHECK, not merely that the
 * parser does not crash; a failed check aborts, which both builds report as a failure. */
#ifndef ZK_FUZZ_H
#define ZK_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts with the failed property and where it is, so that libFuzzer saves the input as a crash. */
#define FUZZ_CHECK(cond)                                                                            \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                                \
        }                                                                                           \
    } while (0)

#endif
