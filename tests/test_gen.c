/* test_gen.c - the graph generators: the transformer against torch.onnx.export of the same configuration
 * (tests/data/gpt-export: op counts per type and total FLOPs), closed forms of its FLOPs, weights and KV cache,
 * op counts, config errors, and the random DAG's determinism, window and degree.
 * Not here: the JSON writer's round trip in general (test_json.c); speed (make bench-scale).
 * Entry points: main. */
#include "check.h"
#include "graph_eq.h"
#include "hsdag/gen.h"
#include "hsdag/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EXPORTS "tests/data/gpt-export/"

/* Op histogram of the ops a runtime executes (bookkeeping and folded nodes left out: the export's constants,
 * its shape arithmetic of expand, the Identity copies of deduplicated weights) and their FLOPs. */
typedef struct op_hist {
    const char *op[64];
    int32_t n[64];
    int k;
    double flops;
} op_hist;

static void hist_of(const hsdag_graph *g, op_hist *h)
{
    memset(h, 0, sizeof *h);
    for (int32_t v = 0; v < g->n_nodes; v++) {
        if (g->flags[v] & (HSDAG_NF_BOOKKEEPING | HSDAG_NF_FOLDED)) continue;
        h->flops += g->flops[v];
        int i = 0;
        while (i < h->k && strcmp(h->op[i], g->op[v]) != 0) i++;
        if (i == h->k) {
            if (h->k == 64) continue;
            h->op[h->k++] = g->op[v];
        }
        h->n[i]++;
    }
}

static int32_t hist_get(const op_hist *h, const char *op)
{
    for (int i = 0; i < h->k; i++)
        if (strcmp(h->op[i], op) == 0) return h->n[i];
    return 0;
}

/* The generated graph of c against the export at path: same ops per type, FLOPs within 1%. */
static void check_against_export(const hsdag_gen_transformer_config *c, const char *path)
{
    hsdag_graph *ref = NULL, *gen = NULL;
    hsdag_err e = {0};
    int rc = hsdag_load_file(&ref, path, HSDAG_FMT_UNKNOWN, &e);
    CHECK_EQ_INT(rc, 0);
    if (rc < 0) fprintf(stderr, "%s\n", e.msg);
    rc = hsdag_gen_transformer(&gen, c, &e);
    CHECK_EQ_INT(rc, 0);
    if (!ref || !gen) goto done;
    op_hist a, b;
    hist_of(gen, &a);
    hist_of(ref, &b);
    CHECK_EQ_INT(a.k, b.k);
    for (int i = 0; i < b.k; i++) {
        int32_t got = hist_get(&a, b.op[i]);
        if (got != b.n[i]) fprintf(stderr, "%s: %s: generated %d, exported %d\n", path, b.op[i], got, b.n[i]);
        CHECK_EQ_INT(got, b.n[i]);
    }
    double rel = fabs(a.flops - b.flops) / b.flops;
    if (rel > 0.01) fprintf(stderr, "%s: FLOPs generated %.17g, exported %.17g\n", path, a.flops, b.flops);
    CHECK(rel <= 0.01);
    CHECK(b.flops > 0);
    CHECK_EQ_INT(gen->n_nodes, hsdag_gen_transformer_ops(c));
done:
    hsdag_graph_free(ref);
    hsdag_graph_free(gen);
}

/* the configurations scripts/export-gpt.py was run with (tests/data/gpt-export/PROVENANCE.md) */
static void test_torch_exports(void)
{
    hsdag_gen_transformer_config c = hsdag_gen_transformer_config_default();
    c.layers = 2, c.hidden = 64, c.heads = 4, c.kv_heads = 2, c.ffn = 256, c.seq = 16, c.vocab = 100;
    c.batch = 2, c.dtype = HSDAG_DT_F32;
    check_against_export(&c, EXPORTS "gpt_prefill.onnx");
    c = hsdag_gen_transformer_config_default();
    c.layers = 2, c.hidden = 64, c.heads = 4, c.kv_heads = 1, c.ffn = 192, c.seq = 12, c.vocab = 100;
    c.decode = 1, c.tied = 1, c.bias = 0, c.dtype = HSDAG_DT_F32;
    check_against_export(&c, EXPORTS "gpt_decode.onnx");
}

static double sum_where(const hsdag_graph *g, const double *x, const char *op, const char *name_part)
{
    double s = 0;
    for (int32_t v = 0; v < g->n_nodes; v++)
        if ((!op || strcmp(g->op[v], op) == 0) && (!name_part || strstr(g->name[v], name_part)) &&
            isfinite(x[v]))
            s += x[v];
    return s;
}

/* FLOPs, weights and KV cache against the textbook closed forms (multiply-add = 2 FLOPs) */
static void test_closed_forms(void)
{
    const double L = 3, D = 128, H = 8, KVH = 2, HD = D / H, F = 512, S = 32, V = 1000, B = 2, esz = 2;
    hsdag_gen_transformer_config c = hsdag_gen_transformer_config_default();
    c.layers = 3, c.hidden = 128, c.heads = 8, c.kv_heads = 2, c.ffn = 512, c.seq = 32, c.vocab = 1000;
    c.batch = 2, c.dtype = HSDAG_DT_BF16;
    for (int decode = 0; decode < 2; decode++) {
        c.decode = decode;
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        CHECK_EQ_INT(hsdag_gen_transformer(&g, &c, &e), 0);
        if (!g) continue;
        double T = decode ? 1 : S, P = decode ? S : 0, Tk = P + T;
        /* weights of one block's projections: q and o D x D, k and v D x KVH*HD, up and down D x F */
        double wblock = 2 * D * D + 2 * D * KVH * HD + 2 * D * F;
        double proj = 2 * B * T * L * wblock, attn = L * 2 * (2 * B * H * T * Tk * HD),
               head = 2 * B * T * D * V;
        CHECK_NEAR(sum_where(g, g->flops, "MatMul", NULL), proj + attn + head, 0);
        double biases = L * (D + 2 * KVH * HD + D + F + D), norms = (2 * L + 1) * 2 * D;
        double mask = decode ? 0 : L * T * Tk;
        double weights = L * wblock + biases + norms + 2 * V * D + (S + decode) * D + mask;
        double kv = 2 * L * B * KVH * P * HD; /* the cache read in decode */
        CHECK_NEAR(sum_where(g, g->param_bytes, NULL, NULL), (weights + kv) * esz, 0);
        /* resident cache: every block's K and V for all Tk tokens */
        CHECK_NEAR(sum_where(g, g->mem_bytes, NULL, NULL), 2 * L * B * KVH * Tk * HD * esz, 0);
        CHECK_EQ_INT(g->n_nodes, hsdag_gen_transformer_ops(&c));
        CHECK_EQ_INT(g->n_nodes, 3 + 2 + (int)L * (decode ? 42 : 41));
        hsdag_graph_free(g);
    }
}

static void test_tied_and_names(void)
{
    hsdag_gen_transformer_config c = hsdag_gen_transformer_config_default();
    c.layers = 2, c.hidden = 64, c.heads = 4, c.seq = 8, c.vocab = 50, c.tied = 1, c.bias = 0;
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_gen_transformer(&g, &c, &e), 0);
    if (!g) return;
    int32_t w = hsdag_graph_find(g, "wte"), head = hsdag_graph_find(g, "lm_head.MatMul");
    CHECK(w >= 0 && head >= 0);
    if (w >= 0 && head >= 0) {
        CHECK_EQ_INT(g->out_off[w + 1] - g->out_off[w], 2); /* the embedding and the head */
        CHECK(hsdag_graph_edge_id(g, w, head) >= 0);
        CHECK_NEAR(g->edge_bytes[hsdag_graph_edge_id(g, w, head)], 50 * 64 * 2, 0);
        CHECK_NEAR(g->param_bytes[w], 50 * 64 * 2, 0);
        CHECK_NEAR(g->param_bytes[head], 0, 0);
        CHECK(g->flags[head] & HSDAG_NF_OUTPUT);
        CHECK(g->flags[w] & HSDAG_NF_BOOKKEEPING);
    }
    CHECK(hsdag_graph_find(g, "blocks.1.attn.scores.MatMul") >= 0);
    CHECK(hsdag_graph_find(g, "blocks.0.attn.k.repeat.Expand") < 0); /* no GQA: no repeat */
    CHECK(hsdag_graph_find(g, "blocks.0.attn.q.Add") < 0);           /* no bias */
    CHECK_STR(g->meta.name, "gpt-L2-d64-h4-kv4-s8-prefill");
    /* the JSON text round-trips exactly */
    hsdag_buf b1 = {0}, b2 = {0};
    hsdag_graph *g2 = NULL;
    CHECK(hsdag_json_write(&b1, g) == 0);
    CHECK_EQ_INT(hsdag_json_read(&g2, b1.data, b1.len, "gen", &e), 0);
    if (g2) {
        CHECK(graph_eq(g, g2));
        CHECK(hsdag_json_write(&b2, g2) == 0);
        CHECK(b1.len == b2.len && memcmp(b1.data, b2.data, b1.len) == 0);
    }
    hsdag_buf_free(&b1);
    hsdag_buf_free(&b2);
    hsdag_graph_free(g2);
    hsdag_graph_free(g);
}

static void test_config_errors(void)
{
    hsdag_gen_transformer_config c = hsdag_gen_transformer_config_default();
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    c.hidden = 100, c.heads = 12;
    CHECK_EQ_INT(hsdag_gen_transformer(&g, &c, &e), HSDAG_EINVAL);
    CHECK(strstr(e.msg, "hidden 100 is not a multiple of heads 12") != NULL);
    CHECK(g == NULL);
    c = hsdag_gen_transformer_config_default();
    c.kv_heads = 5;
    CHECK_EQ_INT(hsdag_gen_transformer(&g, &c, &e), HSDAG_EINVAL);
    CHECK(strstr(e.msg, "heads 12 is not a multiple of kv_heads 5") != NULL);
    CHECK_EQ_INT(hsdag_gen_transformer_ops(&c), -1);
    c = hsdag_gen_transformer_config_default();
    c.layers = 1000000;
    CHECK_EQ_INT(hsdag_gen_transformer(&g, &c, &e), HSDAG_ELIMIT);
    c = hsdag_gen_transformer_config_default();
    c.seq = 1 << 20, c.batch = 1 << 20; /* a 2^40 x 768 activation */
    c.layers = 1;
    CHECK_EQ_INT(hsdag_gen_transformer(&g, &c, &e), HSDAG_ELIMIT);
    c = hsdag_gen_transformer_config_default();
    c.layers = 0;
    CHECK_EQ_INT(hsdag_gen_transformer(&g, &c, &e), HSDAG_EINVAL);
}

static void test_random(void)
{
    hsdag_gen_random_config c = hsdag_gen_random_config_default();
    c.nodes = 5000, c.degree = 3, c.window = 20, c.seed = 7;
    hsdag_graph *a = NULL, *b = NULL, *d = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_gen_random(&a, &c, &e), 0);
    CHECK_EQ_INT(hsdag_gen_random(&b, &c, &e), 0);
    c.seed = 8;
    CHECK_EQ_INT(hsdag_gen_random(&d, &c, &e), 0);
    if (a && b && d) {
        CHECK(graph_eq(a, b));
        CHECK_EQ_INT(a->n_nodes, 5000);
        int differ = a->n_edges != d->n_edges;
        for (int32_t k = 0; k < a->n_edges && k < d->n_edges && !differ; k++)
            differ = a->out_dst[k] != d->out_dst[k] || a->edge_src[k] != d->edge_src[k];
        CHECK(differ);
        int in_window = 1;
        for (int32_t k = 0; k < a->n_edges; k++) in_window &= a->out_dst[k] - a->edge_src[k] <= 20;
        CHECK(in_window);
        double deg = (double)a->n_edges / a->n_nodes;
        CHECK(deg > 2.7 && deg < 3.1); /* 1..5 inputs uniformly, 1% sources */
        double flops = 0;
        for (int32_t v = 0; v < a->n_nodes; v++) flops += a->flops[v];
        CHECK(flops > 0);
    }
    hsdag_graph_free(a);
    hsdag_graph_free(b);
    hsdag_graph_free(d);
    c.degree = 0.5;
    CHECK_EQ_INT(hsdag_gen_random(&a, &c, &e), HSDAG_EINVAL);
}

int main(void)
{
    test_torch_exports();
    test_closed_forms();
    test_tied_and_names();
    test_config_errors();
    test_random();
    return check_summary("test_gen");
}
