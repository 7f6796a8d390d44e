/* fuzz_placement.c - libFuzzer target for placement files (hsdag placement JSON, affinity maps, Tarnawski
 * splits)
 * read against a fixed four-node graph on the cpu-gpu preset; whatever parses is written back and re-read.
 * The streaming reader is compared with the json-c one: it may leave a text to it, never take one it refuses or
 * read it differently.
 * Not here: checks of the mapping (tests/test_sim.c); this looks for crashes, leaks and UB.
 * Entry points: LLVMFuzzerTestOneInput. */
#include "../src/io/placement_int.h"
#include "hsdag/placement.h"

#include <stdlib.h>

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static hsdag_graph *fz_graph(void)
{
    hsdag_gb *b = hsdag_gb_create();
    const char *names[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) {
        int32_t v = hsdag_gb_add_node(b, names[i], "Relu");
        hsdag_gb_set_file_id(b, v, 10 + i);
    }
    hsdag_gb_add_edge(b, 0, 1, 4);
    hsdag_gb_add_edge(b, 1, 2, 4);
    hsdag_gb_add_edge(b, 1, 3, 4);
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    hsdag_gb_finish(b, &g, &e);
    hsdag_gb_free(b);
    return g;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static hsdag_graph *g;
    static hsdag_devices *d;
    hsdag_err e = {0};
    if (!g) g = fz_graph();
    if (!d) hsdag_devices_preset(&d, "cpu-gpu", NULL, &e);
    if (!g || !d) return 0;
    int32_t dev[4], dev2[4];
    hsdag_placement_info pi, pi2;
    if (hsdag_placement_parse_stream(dev, &pi, data, size, g, d) == 0) {
        if (hsdag_placement_parse_tree(dev2, &pi2, data, size, "fuzz", g, d, &e) != 0) abort();
        if (memcmp(dev, dev2, sizeof dev) != 0 || pi.format != pi2.format || pi.n_listed != pi2.n_listed)
            abort();
    }
    if (hsdag_placement_parse(dev, &pi, data, size, "fuzz", g, d, &e) < 0) {
        HSDAG_ASSERT(e.msg[0] && !strchr(e.msg, '\n'));
        return 0;
    }
    for (int i = 0; i < 4; i++) HSDAG_ASSERT(dev[i] >= 0 && dev[i] < d->n);
    hsdag_buf b = {0};
    if (hsdag_placement_write_json(&b, g, d, dev) == 0) {
        HSDAG_ASSERT(hsdag_placement_parse(dev2, NULL, b.data, b.len, "rt", g, d, &e) == 0);
        HSDAG_ASSERT(memcmp(dev, dev2, sizeof dev) == 0);
    }
    hsdag_buf_free(&b);
    return 0;
}
