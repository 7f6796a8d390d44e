/* fuzz_tarnawski.c - libFuzzer target for the Tarnawski JSON reader; every graph it accepts must also
 * survive an hsdag JSON round trip (write -> read -> write byte-identical) and the DOT writer.
 * Not here: seed selection (fuzz/corpus/tarnawski) or the dictionary (fuzz/dict/tarnawski.dict).
 * Entry points: LLVMFuzzerTestOneInput. */
#include "hsdag/io.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hsdag_graph *g = NULL, *g2 = NULL;
    hsdag_err e = {0};
    if (hsdag_tarnawski_read(&g, data, size, "fuzz", &e) < 0) {
        if (!e.msg[0] || strchr(e.msg, '\n')) abort(); /* errors are one non-empty line */
        return 0;
    }
    hsdag_buf w1 = {0}, w2 = {0}, d = {0};
    if (hsdag_json_write(&w1, g) < 0 || hsdag_json_read(&g2, w1.data, w1.len, "rt", &e) < 0) abort();
    if (hsdag_json_write(&w2, g2) < 0 || w1.len != w2.len || memcmp(w1.data, w2.data, w1.len) != 0) abort();
    if (hsdag_dot_write(&d, g, NULL, NULL, 0) < 0) abort();
    hsdag_buf_free(&w1);
    hsdag_buf_free(&w2);
    hsdag_buf_free(&d);
    hsdag_graph_free(g);
    hsdag_graph_free(g2);
    return 0;
}
