/* fuzz_json.c - libFuzzer target for the hsdag JSON reader and the Tarnawski split reader; every graph
 * the reader accepts must write, re-read and re-write to the identical text, and whatever the streaming
 * reader takes the json-c tree reader must take as the same graph (the same written text).
 * Not here: seed selection (fuzz/corpus/json) or the dictionary (fuzz/dict/json.dict).
 * Entry points: LLVMFuzzerTestOneInput. */
#include "hsdag/io.h"
#include "hsdag/split.h"
#include "../src/io/json_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The split reader is fuzzed against the accepted graph itself (ids are its file ids). */
static void fuzz_split(const hsdag_graph *g, const uint8_t *data, size_t size)
{
    int32_t *dev = hsdag_malloc(((size_t)g->n_nodes + 1) * sizeof *dev), nc, na;
    hsdag_err e = {0};
    if (!dev) return;
    if (hsdag_split_read(dev, &nc, &na, data, size, "split", g, &e) == 0) {
        hsdag_buf b = {0};
        if (hsdag_split_write(&b, g, dev, na, nc, &e) < 0) abort();
        hsdag_buf_free(&b);
    }
    hsdag_free(dev);
}

/* The streaming reader fed the text in newline-aligned pieces (as hsdag_load_file reads a large file): the same
 * answer as on the whole text. */
static void fuzz_pieces(const uint8_t *data, size_t size, int rs, const hsdag_graph *gs)
{
    FILE *f = size ? fmemopen((void *)(uintptr_t)data, size, "rb") : NULL;
    if (!f) return;
    hsdag_graph *gf = NULL;
    int rf = hsdag_json_read_file_stream(&gf, f, 3);
    fclose(f);
    if (rf != rs || (rf == 0) != (gf != NULL)) abort();
    if (gf) {
        hsdag_buf a = {0}, b = {0};
        if (hsdag_json_write(&a, gs) < 0 || hsdag_json_write(&b, gf) < 0) abort();
        if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) abort();
        hsdag_buf_free(&a);
        hsdag_buf_free(&b);
    }
    hsdag_graph_free(gf);
}

/* The two readers behind hsdag_json_read: the streaming one may leave a text to the tree one, never take one
 * the tree one refuses or read it differently. */
static void fuzz_two_readers(const uint8_t *data, size_t size)
{
    hsdag_graph *gs = NULL, *gt = NULL;
    hsdag_err e = {0};
    int rs = hsdag_json_read_stream(&gs, data, size);
    fuzz_pieces(data, size, rs, gs);
    if (rs != 0) {
        if (gs) abort();
        return;
    }
    if (hsdag_json_read_tree(&gt, data, size, "fuzz", &e) != 0) abort();
    hsdag_buf a = {0}, b = {0};
    if (hsdag_json_write(&a, gs) < 0 || hsdag_json_write(&b, gt) < 0) abort();
    if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) abort();
    hsdag_buf_free(&a);
    hsdag_buf_free(&b);
    hsdag_graph_free(gs);
    hsdag_graph_free(gt);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_two_readers(data, size);
    hsdag_graph *g = NULL, *g2 = NULL;
    hsdag_err e = {0};
    if (hsdag_json_read(&g, data, size, "fuzz", &e) < 0) {
        if (!e.msg[0] || strchr(e.msg, '\n')) abort();
        return 0;
    }
    hsdag_buf w1 = {0}, w2 = {0};
    if (hsdag_json_write(&w1, g) < 0 || hsdag_json_read(&g2, w1.data, w1.len, "rt", &e) < 0) abort();
    if (hsdag_json_write(&w2, g2) < 0 || w1.len != w2.len || memcmp(w1.data, w2.data, w1.len) != 0) abort();
    fuzz_split(g, data, size);
    hsdag_buf_free(&w1);
    hsdag_buf_free(&w2);
    hsdag_graph_free(g);
    hsdag_graph_free(g2);
    return 0;
}
