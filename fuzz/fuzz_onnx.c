/* fuzz_onnx.c - libFuzzer target for the ONNX importer (hsdag_onnx_read on arbitrary bytes).
 * Not here: checks of the numbers (tests/test_onnx.c); this only looks for crashes, leaks and UB.
 * Entry points: LLVMFuzzerTestOneInput. */
#include <stddef.h>
#include <stdint.h>

#include "hsdag/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    if (hsdag_onnx_read(&g, data, size, "fuzz.onnx", &e) == 0) {
        /* touch what a consumer reads */
        double s = 0;
        for (int32_t i = 0; i < g->n_nodes; i++) s += g->flops[i] + g->param_bytes[i] + g->out_bytes[i];
        for (int32_t k = 0; k < g->n_edges; k++) s += g->edge_bytes[k];
        (void)s;
        hsdag_graph_free(g);
    }
    return 0;
}
