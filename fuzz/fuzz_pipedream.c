/* fuzz_pipedream.c - libFuzzer target for the PipeDream graph.txt reader and the mirrored job graph.
 * Not here: the cluster simulator. Seed corpus fuzz/corpus/pipedream/, dictionary fuzz/dict/pipedream.dict.
 * Entry points: LLVMFuzzerTestOneInput. */
#include "hsdag/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hsdag_graph *g = NULL, *m = NULL;
    hsdag_err e = {0};
    if (hsdag_pipedream_read(&g, data, size, "fuzz", &e) == 0) {
        if (hsdag_pipedream_mirror(&m, g, &e) == 0) hsdag_graph_free(m);
        hsdag_graph_free(g);
    }
    return 0;
}
