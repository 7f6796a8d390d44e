/* fuzz_ovxml.c - libFuzzer target for the OpenVINO IR .xml reader (hsdag_ovxml_read).
 * Not here: checks of the numbers (tests/test_ovxml.c); this only looks for crashes, leaks and UB.
 * Entry points: LLVMFuzzerTestOneInput. */
#include "hsdag/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    if (hsdag_ovxml_read(&g, data, size, "fuzz", &e) == 0) {
        HSDAG_ASSERT(g->n_nodes == g->meta.file_nodes);
        HSDAG_ASSERT(g->n_edges <= g->meta.file_edges);
    } else {
        HSDAG_ASSERT(g == NULL && e.msg[0]);
    }
    hsdag_graph_free(g);
    return 0;
}
