/* fuzz_nnckpt.c - libFuzzer target for the nn parameter checkpoint loader (hsdag_nn_params_load).
 * Not here: checks of the loaded numbers (test_nn.c does those); the model shape is fixed below.
 * Entry point: LLVMFuzzerTestOneInput. Seed: fuzz/corpus/nnckpt/ (images of this exact model, version 1 and 2). */
#include "hsdag/nn.h"

#include <string.h>

/* The model every input is loaded into: "l" Linear 3 -> 2 with bias, then "x" (2, 3). */
static hsdag_nn_params *make_model(void)
{
    hsdag_err e = {0};
    hsdag_nn_params *p = NULL;
    hsdag_nn_linear l;
    hsdag_rng r;
    hsdag_rng_seed(&r, 1);
    if (hsdag_nn_params_create(&p, NULL) < 0) return NULL;
    if (hsdag_nn_linear_add(p, &l, "l", 3, 2, 1, &e) < 0 ||
        hsdag_nn_params_add(p, "x", 2, 3, HSDAG_NN_INIT_NORMAL, 1.0f, &e) < 0 ||
        hsdag_nn_params_alloc(p, &r, &e) < 0) {
        hsdag_nn_params_free(p);
        return NULL;
    }
    return p;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    hsdag_nn_params *p = make_model();
    if (!p) return 0;
    hsdag_err e = {0};
    size_t used = 0;
    if (hsdag_nn_params_load(p, data, size, &used, &e) == 0) {
        HSDAG_ASSERT(used <= size);
        /* a loaded version-2 image saves back to the same bytes; a version-1 one to a version-2 image that
         * loads again */
        hsdag_buf b = {0};
        if (hsdag_nn_params_save(p, &b, &e) == 0) {
            if (size > 8 && data[8] == 2) HSDAG_ASSERT(b.len == used && memcmp(b.data, data, used) == 0);
            HSDAG_ASSERT(hsdag_nn_params_load(p, b.data, b.len, &used, &e) == 0 && used == b.len);
        }
        hsdag_buf_free(&b);
    }
    hsdag_nn_params_free(p);
    return 0;
}
