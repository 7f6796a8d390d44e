/* fuzz_suite.c - libFuzzer target for the benchmark suite reader (hsdag_suite_parse).
 * Not here: running a suite (the compare command; tests/cli/place.sh). Looks for crashes, leaks and UB.
 * Entry points: LLVMFuzzerTestOneInput. */
#include "hsdag/io.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hsdag_suite *s = NULL;
    hsdag_err e = {0};
    if (hsdag_suite_parse(&s, data, size, "fuzz", &e) < 0) {
        HSDAG_ASSERT(s == NULL && e.msg[0] && !strchr(e.msg, '\n'));
    } else {
        HSDAG_ASSERT(s->n > 0);
        for (int32_t i = 0; i < s->n; i++)
            HSDAG_ASSERT(s->entry[i].name && s->entry[i].model && s->entry[i].n_mem <= 16);
    }
    hsdag_suite_free(s);
    return 0;
}
