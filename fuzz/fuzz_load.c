/* fuzz_load.c - libFuzzer target for format detection and the whole loader (hsdag_load over every
 * reader, ONNX and PipeDream included), run twice: plainly, then with one allocation failing.
 * Not here: per-format properties (fuzz_<format>.c); this checks detection, dispatch and that an
 * allocation failure anywhere gives ENOMEM (or no change), never a crash, a leak or another status.
 * Entry points: LLVMFuzzerTestOneInput. */
#include "hsdag/io.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    int rc = hsdag_load(&g, data, size, HSDAG_FMT_UNKNOWN, "fuzz", &e);
    if (rc < 0) {
        if (g || !e.msg[0] || strchr(e.msg, '\n') || strncmp(e.msg, "fuzz", 4) != 0) abort();
    } else {
        hsdag_graph_stats st;
        if (hsdag_graph_stats_compute(g, &st, &e) < 0) abort();
        hsdag_graph_stats_free(&st);
    }
    /* the same input with the k-th allocation failing (k from the input, 1..256) */
    long k = 1 + (long)((size * 31 + (size ? data[size / 2] : 0)) % 256);
    hsdag_graph *g2 = NULL;
    hsdag_err e2 = {0};
    hsdag_alloc_fail_after(k);
    int rc2 = hsdag_load(&g2, data, size, HSDAG_FMT_UNKNOWN, "fuzz", &e2);
    hsdag_alloc_fail_after(0);
    if (rc2 != rc && rc2 != HSDAG_ENOMEM) abort();
    if (rc2 < 0 && (g2 || !e2.msg[0] || strchr(e2.msg, '\n'))) abort();
    if (rc2 == 0 && (!g2 || !g || g2->n_nodes != g->n_nodes || g2->n_edges != g->n_edges)) abort();
    hsdag_graph_free(g);
    hsdag_graph_free(g2);
    return 0;
}
