/* fuzz_policy.c - libFuzzer target for the pre-trained policy file loader (hsdag_policy_load).
 * Not here: placing with a policy (tests/test_baselines.c, tests/cli/pretrain.sh); the values are not checked
 * against a network here (that happens when a policy is placed).
 * Entry point: LLVMFuzzerTestOneInput. Seed: fuzz/corpus/policy/ (a tiny policy with three values). */
#include "hsdag/pretrain.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    hsdag_err e = {0};
    hsdag_policy *p = NULL, *q = NULL;
    if (hsdag_policy_load(&p, data, size, "fuzz", &e) == 0) {
        /* a loaded policy saves, and its image loads and saves back to the same bytes */
        hsdag_buf a = {0}, b = {0};
        HSDAG_ASSERT(hsdag_policy_save(p, &a, &e) == 0);
        HSDAG_ASSERT(hsdag_policy_load(&q, a.data, a.len, "fuzz", &e) == 0);
        HSDAG_ASSERT(hsdag_policy_save(q, &b, &e) == 0);
        HSDAG_ASSERT(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
        hsdag_buf_free(&a);
        hsdag_buf_free(&b);
    }
    hsdag_policy_free(p);
    hsdag_policy_free(q);
    return 0;
}
