/* fuzz_profile.c - libFuzzer target for the per-op profile CSV reader (hsdag_profile_parse).
 * Not here: applying a profile to a cost table (tests/test_devices.c). Looks for crashes, leaks and UB.
 * Entry points: LLVMFuzzerTestOneInput. */
#include "hsdag/devices.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hsdag_profile *p = NULL;
    hsdag_err e = {0};
    if (hsdag_profile_parse(&p, data, size, "fuzz", &e) < 0)
        HSDAG_ASSERT(p == NULL && e.msg[0] && !strchr(e.msg, '\n'));
    else
        HSDAG_ASSERT(hsdag_profile_count(p) >= 0);
    hsdag_profile_free(p);
    return 0;
}
