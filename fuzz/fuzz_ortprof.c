/* fuzz_ortprof.c - libFuzzer target for the ONNX Runtime bridge's JSON reader (hsdag_ortprof_parse) against a small
 * fixed graph, with the CSV writer run on whatever parses.
 * Not here: checks of the numbers (tests/test_calibrate.c); this looks for crashes, leaks and UB.
 * Entry points: LLVMFuzzerTestOneInput. */
#include "hsdag/ortprof.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static hsdag_graph *graph(void)
{
    static hsdag_graph *g;
    if (g) return g;
    hsdag_gb *b = hsdag_gb_create();
    hsdag_err e = {0};
    const int64_t d4[4] = {1, 3, 8, 8}, d2[2] = {1, 10};
    HSDAG_ASSERT(b);
    for (int i = 0; i < 4; i++) {
        char nm[8];
        snprintf(nm, sizeof nm, "n%d", i);
        int32_t v = hsdag_gb_add_node(b, nm, i == 3 ? "Gemm" : "Conv");
        HSDAG_ASSERT(v == i);
        HSDAG_ASSERT(
            hsdag_gb_add_output(b, v, HSDAG_DT_F32, i == 3 ? 2 : (i == 2 ? -1 : 4), i == 3 ? d2 : d4) == 0);
        if (i) HSDAG_ASSERT(hsdag_gb_add_edge(b, i - 1, i, 768) == 0);
    }
    HSDAG_ASSERT(hsdag_gb_finish(b, &g, &e) == 0);
    hsdag_gb_free(b);
    return g;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const hsdag_graph *g = graph();
    hsdag_ortprof *p = NULL;
    hsdag_err e = {0};
    if (hsdag_ortprof_parse(&p, data, size, "fuzz", g, &e) < 0) {
        HSDAG_ASSERT(p == NULL && e.msg[0] && !strchr(e.msg, '\n'));
        return 0;
    }
    int32_t total = 0;
    for (int s = 0; s < HSDAG_ORT_STATUS_COUNT_; s++) total += p->n_status[s];
    HSDAG_ASSERT(total == g->n_nodes && p->n_diff_list <= p->n_shape_diffs);
    hsdag_buf b = {0};
    HSDAG_ASSERT(hsdag_ortprof_write_csv(&b, p, g, "CPU") == 0 || b.oom);
    hsdag_buf_free(&b);
    hsdag_ortprof_free(p);
    return 0;
}
