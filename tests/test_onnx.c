/* test_onnx.c - the ONNX importer on the bundled exports (exact counts and totals) and on hand-built
 * protobufs.
 * Not here: op-cost rules on hand shapes (test_opcost.c), the CLI. Numbers come from
 * tests/data/onnx/expect.py.
 * Entry points: main. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "oom_sweep.h"
#include "hsdag/io.h"

/* ---- expected values: /usr/bin/python3 tests/data/onnx/expect.py --infer (independent of the C code)
 * ---- */
typedef struct expect {
    const char *path;
    int nodes, pairs;
    double param, flops;
    int unknown, book;
    double edge_bytes, convmm;
    int ir, opset;
} expect;

static const expect files[] = {
    {"tests/data/onnx/alexnet.onnx", 20, 19, 244403360, 1429674240, 0, 0, 4372480, 1428376960, 7, 13},
    {"tests/data/onnx/bert_base.onnx", 1563, 1828, 437928960, 22435744444, 0, 948, 1043330864, 22348431360, 7,
     13},
    {"tests/data/onnx/googlenet.onnx", 179, 205, 26470496, 3012582128, 0, 40, 47624736, 2996752384, 7, 13},
    {"tests/data/onnx/inception_v3.onnx", 316, 350, 95269408, 11459930112, 0, 92, 131371712, 11426432192, 7,
     13},
    {"tests/data/onnx/mobilenet_v2.onnx", 209, 218, 13951264, 607933440, 0, 109, 52928440, 601548544, 7, 13},
    {"tests/data/onnx/resnet50.onnx", 169, 184, 102121888, 8195403264, 0, 47, 128356352, 8178368512, 7, 13},
    {"tests/data/onnx/squeezenet1_1.onnx", 83, 90, 4941984, 704033808, 0, 18, 28575584, 698303872, 7, 13},
    {"tests/data/onnx/vgg16.onnx", 48, 47, 553430176, 30960230912, 0, 10, 114797312, 30940528640, 7, 13},
    {"tests/data/onnx/vit_b_16.onnx", 1523, 1792, 346270624, 35271667654, 0, 907, 973795587, 35127656448, 7,
     13},
    {"tests/data/onnx-light/light_bvlc_alexnet.onnx", 40, 39, 288, 1312998152, 0, 18, 251059520, 1309120768,
     3, 9},
    {"tests/data/onnx-light/light_densenet121.onnx", 1746, 1803, 12664, 5796221952, 0, 1078, 389771936,
     5668323328, 3, 9},
    {"tests/data/onnx-light/light_inception_v1.onnx", 237, 263, 6456, 2881403160, 0, 95, 78521472, 2863112704,
     3, 9},
    {"tests/data/onnx-light/light_inception_v2.onnx", 916, 943, 24136, 4079658952, 0, 545, 143287744,
     4037703680, 3, 9},
    {"tests/data/onnx-light/light_resnet50.onnx", 415, 430, 10376, 8250978184, 0, 239, 275159616, 8178368512,
     3, 9},
    {"tests/data/onnx-light/light_shufflenet.onnx", 446, 461, 4776, 270819576, 0, 243, 66780896, 249329056, 3,
     9},
    {"tests/data/onnx-light/light_squeezenet.onnx", 105, 112, 3496, 704038808, 0, 40, 33852288, 698303872, 3,
     9},
    {"tests/data/onnx-light/light_vgg19.onnx", 82, 81, 1224, 39285111688, 0, 38, 699809344, 39264124928, 3,
     9},
    {"tests/data/onnx-light/light_zfnet512.onnx", 38, 37, 288, 2974413704, 0, 16, 367838144, 2963454016, 3,
     9},
};

static hsdag_graph *load(const char *path, hsdag_err *e)
{
    char *buf;
    size_t len;
    hsdag_graph *g = NULL;
    if (hsdag_read_file(&buf, &len, path, 0, e) < 0) return NULL;
    if (hsdag_onnx_read(&g, buf, len, path, e) < 0) g = NULL;
    hsdag_free(buf);
    return g;
}

static int32_t count_op(const hsdag_graph *g, const char *op)
{
    int32_t c = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) c += strcmp(g->op[i], op) == 0;
    return c;
}

static void test_bundled(void)
{
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        const expect *x = &files[f];
        hsdag_err e = {0};
        hsdag_graph *g = load(x->path, &e);
        CHECK(g != NULL);
        if (!g) {
            fprintf(stderr, "  %s\n", e.msg);
            continue;
        }
        hsdag_graph_stats s;
        CHECK(hsdag_graph_stats_compute(g, &s, &e) == 0);
        double eb = 0, convmm = 0;
        int32_t book = 0;
        for (int32_t k = 0; k < g->n_edges; k++) eb += g->edge_bytes[k];
        for (int32_t i = 0; i < g->n_nodes; i++) {
            if (g->opclass[i] == HSDAG_OP_CONV || g->opclass[i] == HSDAG_OP_MATMUL) convmm += g->flops[i];
            book += (g->flags[i] & HSDAG_NF_BOOKKEEPING) != 0;
        }
        int ok_before = check_fail_;
        CHECK_EQ_INT(g->n_nodes, x->nodes);
        CHECK_EQ_INT(g->meta.file_nodes, x->nodes);
        CHECK_EQ_INT(g->n_edges, x->pairs);
        CHECK_EQ_INT(g->meta.file_edges, x->pairs);
        CHECK_EQ_INT(g->meta.format, HSDAG_FMT_ONNX);
        CHECK_EQ_INT(g->meta.ir_version, x->ir);
        CHECK_EQ_INT(g->meta.opset, x->opset);
        CHECK_NEAR(s.param_bytes, x->param, 0); /* sums of integers below 2^53: exact */
        CHECK_NEAR(s.total_flops, x->flops, 0);
        CHECK_NEAR(convmm, x->convmm, 0);
        CHECK_NEAR(eb, x->edge_bytes, 0);
        CHECK_EQ_INT(s.unknown_ops, x->unknown);
        CHECK_EQ_INT(book, x->book);
        if (check_fail_ != ok_before) fprintf(stderr, "  ^ in %s\n", x->path);
        hsdag_graph_stats_free(&s);
        hsdag_graph_free(g);
    }
}

/* Architecture numbers worked out by hand, so the reference script is checked too. */
static void test_known_models(void)
{
    hsdag_err e = {0};
    hsdag_graph *g = load("tests/data/onnx/resnet50.onnx", &e);
    CHECK(g != NULL);
    if (g) {
        /* torchvision resnet50: 25,557,032 parameters; BatchNorm folded into conv biases drops one of the two
         * BN parameters per channel (26,560 channels), giving 25,530,472 floats */
        double p = 0;
        for (int32_t i = 0; i < g->n_nodes; i++) p += g->param_bytes[i];
        CHECK_NEAR(p, 25530472.0 * 4, 0);
        CHECK_EQ_INT(count_op(g, "Conv"), 53);
        CHECK_EQ_INT(count_op(g, "Identity"), 47);
        /* first node in file order and topological order */
        int32_t gemm = hsdag_graph_find(g, "/fc/Gemm");
        CHECK(gemm >= 0);
        if (gemm >= 0) {
            int32_t s = g->out_shape_off[gemm];
            CHECK_EQ_INT(g->shape_rank[s], 2);
            CHECK_EQ_INT(g->shape_dims[g->shape_dim_off[s]], 1);
            CHECK_EQ_INT(g->shape_dims[g->shape_dim_off[s] + 1], 1000);
            CHECK_EQ_INT(g->shape_dtype[s], HSDAG_DT_F32);
            CHECK_NEAR(g->flops[gemm], 2.0 * 2048 * 1000, 0);
            CHECK_NEAR(g->param_bytes[gemm], (2048.0 * 1000 + 1000) * 4, 0);
        }
        for (int32_t k = 0; k < g->n_edges; k++) CHECK(g->edge_src[k] < g->out_dst[k]);
        hsdag_graph_free(g);
    }
    /* ViT-B/16, 197 tokens, d=768, 12 heads, MLP 3072: conv stem + 12 x (qkv, QK^T, AV, out proj, 2 MLP) +
     * head */
    g = load("tests/data/onnx/vit_b_16.onnx", &e);
    CHECK(g != NULL);
    if (g) {
        double mm = 0;
        for (int32_t i = 0; i < g->n_nodes; i++)
            if (g->opclass[i] == HSDAG_OP_CONV || g->opclass[i] == HSDAG_OP_MATMUL) mm += g->flops[i];
        double want = 2.0 * 196 * 768 * 768 +
                      12 * (2.0 * 197 * 768 * 2304 + 2 * 2.0 * 12 * 197 * 197 * 64 + 2.0 * 197 * 768 * 768 +
                            2 * 2.0 * 197 * 768 * 3072) +
                      2.0 * 768 * 1000;
        CHECK_NEAR(mm, want, 0);
        hsdag_graph_free(g);
    }
    /* BERT-base encoder, seq 128, plus the 768x768 pooler */
    g = load("tests/data/onnx/bert_base.onnx", &e);
    CHECK(g != NULL);
    if (g) {
        double mm = 0, p = 0;
        for (int32_t i = 0; i < g->n_nodes; i++) {
            if (g->opclass[i] == HSDAG_OP_MATMUL) mm += g->flops[i];
            p += g->param_bytes[i];
        }
        double want = 12 * (2.0 * 128 * 768 * 2304 + 2 * 2.0 * 12 * 128 * 128 * 64 + 2.0 * 128 * 768 * 768 +
                            2 * 2.0 * 128 * 768 * 3072) +
                      2.0 * 768 * 768;
        CHECK_NEAR(mm, want, 0);
        /* the export shares identical cloned layers through Identity nodes; charging each reader restores the
         * per-layer weights: embeddings (30522+512+2)x768 + 12 layers x 7,087,872 + 2 LayerNorms + pooler */
        double layer =
            2304.0 * 768 + 2304 + 768.0 * 768 + 768 + 3072.0 * 768 + 3072 + 768.0 * 3072 + 768 + 4 * 768;
        double want_p = (30522.0 + 512 + 2) * 768 + 12 * layer + 2 * 768 + 768.0 * 768 + 768;
        CHECK_NEAR(p, want_p * 4, 0);
        hsdag_graph_free(g);
    }
}

/* ---- a minimal protobuf writer for hand-made models (field numbers from onnx.proto) ---- */
typedef struct pb {
    unsigned char *d;
    size_t n, cap;
} pb;

static void pb_raw(pb *b, const void *p, size_t n)
{
    if (hsdag_grow((void **)&b->d, &b->cap, b->n + n + 1, 1) < 0) abort();
    memcpy(b->d + b->n, p, n);
    b->n += n;
}

static void pb_varint(pb *b, uint64_t v)
{
    unsigned char c[10];
    int k = 0;
    do {
        c[k] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v) c[k] |= 0x80;
        k++;
    } while (v);
    pb_raw(b, c, (size_t)k);
}

static void pb_int(pb *b, int field, int64_t v)
{
    pb_varint(b, (uint64_t)field << 3);
    pb_varint(b, (uint64_t)v);
}

static void pb_bytes(pb *b, int field, const void *p, size_t n)
{
    pb_varint(b, ((uint64_t)field << 3) | 2);
    pb_varint(b, n);
    pb_raw(b, p, n);
}

static void pb_str(pb *b, int field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

/* appends sub as a message field and frees it */
static void pb_msg(pb *b, int field, pb *sub)
{
    pb_bytes(b, field, sub->d ? sub->d : (unsigned char *)"", sub->n);
    hsdag_free(sub->d);
    memset(sub, 0, sizeof *sub);
}

/* ValueInfoProto {name, type {tensor_type {elem_type, shape {dim...}}}}; rank -1 = no shape; dims -1 =
 * dim_param */
static void add_value(pb *g, int field, const char *name, int elem, int rank, const int64_t *dims)
{
    pb vi = {0}, tp = {0}, tt = {0}, sh = {0};
    pb_str(&vi, 1, name);
    pb_int(&tt, 1, elem);
    if (rank >= 0) {
        for (int i = 0; i < rank; i++) {
            pb dim = {0};
            if (dims[i] < 0)
                pb_str(&dim, 2, "batch");
            else
                pb_int(&dim, 1, dims[i]);
            pb_msg(&sh, 1, &dim);
        }
        pb_msg(&tt, 2, &sh);
    }
    pb_msg(&tp, 1, &tt);
    pb_msg(&vi, 2, &tp);
    pb_msg(g, field, &vi);
}

static void add_init(pb *g, const char *name, int elem, int rank, const int64_t *dims)
{
    pb t = {0};
    for (int i = 0; i < rank; i++) pb_int(&t, 1, dims[i]);
    pb_int(&t, 2, elem);
    pb_str(&t, 8, name);
    pb_msg(g, 5, &t);
}

/* node: ins/outs are NULL-terminated lists; attrs is a pre-built list of AttributeProto fields (may be
 * NULL) */
static void add_node(pb *g, const char *name, const char *op, const char *const *ins, const char *const *outs,
                     pb *attrs)
{
    pb n = {0};
    for (; ins && *ins; ins++) pb_str(&n, 1, *ins);
    for (; outs && *outs; outs++) pb_str(&n, 2, *outs);
    if (name) pb_str(&n, 3, name);
    if (op) pb_str(&n, 4, op);
    if (attrs && attrs->n) pb_raw(&n, attrs->d, attrs->n);
    if (attrs) {
        hsdag_free(attrs->d);
        memset(attrs, 0, sizeof *attrs);
    }
    pb_msg(g, 1, &n);
}

static void attr_int(pb *list, const char *name, int64_t v)
{
    pb a = {0};
    pb_str(&a, 1, name);
    pb_int(&a, 3, v);
    pb_int(&a, 20, 2); /* INT */
    pb_msg(list, 5, &a);
}

static void attr_ints(pb *list, const char *name, const int64_t *v, int n)
{
    pb a = {0};
    pb_str(&a, 1, name);
    for (int i = 0; i < n; i++) pb_int(&a, 8, v[i]);
    pb_int(&a, 20, 7); /* INTS */
    pb_msg(list, 5, &a);
}

static void attr_str(pb *list, const char *name, const char *s)
{
    pb a = {0};
    pb_str(&a, 1, name);
    pb_str(&a, 4, s);
    pb_int(&a, 20, 3); /* STRING */
    pb_msg(list, 5, &a);
}

static void attr_graph(pb *list, const char *name, pb *graph)
{
    pb a = {0};
    pb_str(&a, 1, name);
    pb_msg(&a, 6, graph);
    pb_int(&a, 20, 5); /* GRAPH */
    pb_msg(list, 5, &a);
}

/* ModelProto {ir_version 8, opset_import {"" 17}, graph} */
static void model_of(pb *m, pb *graph)
{
    pb op = {0};
    pb_int(m, 1, 8);
    pb_str(&op, 1, "");
    pb_int(&op, 2, 17);
    pb_msg(m, 8, &op);
    pb_msg(m, 7, graph);
}

static int read_model(pb *graph, hsdag_graph **g, hsdag_err *e)
{
    pb m = {0};
    model_of(&m, graph);
    int rc = hsdag_onnx_read(g, m.d, m.n, "hand.onnx", e);
    hsdag_free(m.d);
    return rc;
}

#define L(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_hand_basic(void)
{
    /* X[1,3,8,8] -> Conv(W init [4,3,3,3], pads 1) -> Relu -> Add(z, z) -> FooOp (custom) ; no value_info */
    pb g = {0}, at = {0};
    int64_t xd[] = {1, 3, 8, 8}, wd[] = {4, 3, 3, 3}, pads[] = {1, 1, 1, 1};
    pb_str(&g, 2, "tiny");
    add_init(&g, "W", 1, 4, wd);
    add_value(&g, 11, "X", 1, 4, xd);
    attr_ints(&at, "pads", pads, 4);
    add_node(&g, "conv", "Conv", L("X", "W"), L("y"), &at);
    add_node(&g, "", "Relu", L("y"), L("z"), NULL);
    add_node(&g, "add", "Add", L("z", "z"), L("a"), NULL);
    add_node(&g, "foo", "FooOp", L("a"), L("b"), NULL);
    add_value(&g, 12, "b", 1, -1, NULL);
    hsdag_graph *gr = NULL;
    hsdag_err e = {0};
    CHECK(read_model(&g, &gr, &e) == 0);
    if (!gr) {
        fprintf(stderr, "  %s\n", e.msg);
        return;
    }
    CHECK_EQ_INT(gr->n_nodes, 4);
    CHECK_EQ_INT(gr->n_edges, 3);
    CHECK_EQ_INT(gr->meta.file_edges, 3);
    CHECK_EQ_INT(gr->meta.ir_version, 8);
    CHECK_EQ_INT(gr->meta.opset, 17);
    CHECK_STR(gr->meta.name, "tiny");
    CHECK_STR(gr->name[0], "conv");
    CHECK_STR(gr->name[1], "Relu_1"); /* unnamed node: "<op>_<index>" */
    CHECK(gr->flags[1] & HSDAG_NF_RENAMED);
    CHECK_NEAR(gr->flops[0], 2.0 * (4 * 8 * 8) * 27, 0); /* output [1,4,8,8] inferred from pads */
    CHECK_NEAR(gr->flops[1], 256, 0);
    CHECK_NEAR(gr->flops[2], 256, 0);
    CHECK_NEAR(gr->param_bytes[0], 4 * 27 * 4, 0);
    CHECK_NEAR(gr->edge_bytes[hsdag_graph_edge_id(gr, 1, 2)], 1024,
               0); /* z read twice by Add: counted once */
    CHECK(gr->flags[3] & HSDAG_NF_UNKNOWN_OP);
    CHECK_EQ_INT(gr->opclass[3], HSDAG_OP_UNKNOWN);
    CHECK_NEAR(gr->out_bytes[2], 1024, 0);
    hsdag_graph_free(gr);
}

static void test_hand_weights(void)
{
    /* weight-free export: X[2,16] data, W[16,8] and bias[8] weights as graph inputs, W shared by two MatMuls,
     * ids int64 input read by Gather as indices, table[10,16] a weight read as Gather data */
    pb g = {0};
    int64_t xd[] = {2, 16}, wd[] = {16, 8}, bd[] = {8}, idd[] = {2}, td[] = {10, 16};
    add_value(&g, 11, "X", 1, 2, xd);
    add_value(&g, 11, "W", 1, 2, wd);
    add_value(&g, 11, "bias", 1, 1, bd);
    add_value(&g, 11, "ids", 7, 1, idd);
    add_value(&g, 11, "table", 1, 2, td);
    add_node(&g, "mm1", "MatMul", L("X", "W"), L("h1"), NULL);
    add_node(&g, "addb", "Add", L("h1", "bias"), L("h2"), NULL);
    add_node(&g, "emb", "Gather", L("table", "ids"), L("e"), NULL);
    add_node(&g, "mm2", "MatMul", L("e", "W"), L("h3"), NULL);
    add_node(&g, "sum", "Add", L("h2", "h3"), L("out"), NULL);
    hsdag_graph *gr = NULL;
    hsdag_err e = {0};
    CHECK(read_model(&g, &gr, &e) == 0);
    if (!gr) {
        fprintf(stderr, "  %s\n", e.msg);
        return;
    }
    int32_t mm1 = hsdag_graph_find(gr, "mm1"), mm2 = hsdag_graph_find(gr, "mm2"),
            addb = hsdag_graph_find(gr, "addb"), emb = hsdag_graph_find(gr, "emb"),
            sum = hsdag_graph_find(gr, "sum");
    CHECK(mm1 >= 0 && mm2 >= 0 && addb >= 0 && emb >= 0 && sum >= 0);
    if (mm1 >= 0 && mm2 >= 0 && addb >= 0 && emb >= 0 && sum >= 0) {
        CHECK_NEAR(gr->param_bytes[mm1], 16 * 8 * 4, 0); /* W charged to each reader */
        CHECK_NEAR(gr->param_bytes[mm2], 16 * 8 * 4, 0);
        CHECK_NEAR(gr->param_bytes[addb], 8 * 4, 0);      /* bias: graph input in no activation slot */
        CHECK_NEAR(gr->param_bytes[emb], 10 * 16 * 4, 0); /* Gather table; ids (int64) are data */
        CHECK_NEAR(gr->param_bytes[sum], 0, 0);
        CHECK_NEAR(gr->flops[mm1], 2.0 * 2 * 8 * 16, 0);
        CHECK_NEAR(gr->flops[mm2], 2.0 * 2 * 8 * 16, 0); /* e inferred as [2,16] */
        CHECK_EQ_INT(gr->n_edges, 4);
    }
    hsdag_graph_free(gr);
}

static void test_hand_shapes(void)
{
    /* Constant value_ints -> ConstantOfShape; Shape -> Gather -> Unsqueeze -> Concat -> Reshape; Einsum; Gemm
     * transA;
     * MaxPool with kernel_shape; an If whose branch reads an outer tensor */
    pb g = {0}, at = {0}, br = {0};
    int64_t xd[] = {2, 3, 4}, yd[] = {2, 4, 5}, cd[] = {2, 6}, zero[] = {0}, two[] = {2}, k22[] = {2, 2};
    int64_t pd[] = {1, 2, 6, 6};
    add_value(&g, 11, "x", 1, 3, xd);
    add_value(&g, 11, "y", 1, 3, yd);
    add_value(&g, 11, "c", 1, 2, cd);
    add_value(&g, 11, "p", 1, 4, pd);
    add_value(&g, 11, "cond", 9, 0, NULL);
    attr_ints(&at, "value_ints", two, 1);
    add_node(&g, "k", "Constant", NULL, L("kshape"), &at);                   /* [2] */
    add_node(&g, "fill", "ConstantOfShape", L("kshape"), L("filled"), NULL); /* f32 [2] */
    attr_str(&at, "equation", "bij,bjk->bik");
    add_node(&g, "ein", "Einsum", L("x", "y"), L("xy"), &at); /* [2,3,5] */
    add_node(&g, "shp", "Shape", L("xy"), L("s"), NULL);
    attr_ints(&at, "value_ints", zero, 1);
    add_node(&g, "i0", "Constant", NULL, L("idx"), &at);
    add_node(&g, "g0", "Gather", L("s", "idx"), L("b"), NULL); /* [2] */
    attr_ints(&at, "value_ints", (const int64_t[]){-1}, 1);
    add_node(&g, "m1", "Constant", NULL, L("minus1"), &at);
    attr_int(&at, "axis", 0);
    add_node(&g, "cat", "Concat", L("b", "minus1"), L("newshape"), &at);
    add_node(&g, "rs", "Reshape", L("xy", "newshape"), L("flat"), NULL); /* [2,15] */
    attr_int(&at, "transA", 1);
    add_node(&g, "gemm", "Gemm", L("flat", "c"), L("gout"), &at); /* A^T [15,2] x c[2,6] -> [15,6] */
    attr_ints(&at, "kernel_shape", k22, 2);
    attr_ints(&at, "strides", k22, 2);
    add_node(&g, "pool", "MaxPool", L("p"), L("pooled"), &at); /* [1,2,3,3], window 4 */
    add_node(&g, "inner", "Relu", L("filled"), L("r_in"), NULL);
    pb_str(&br, 2, "then");
    add_node(&br, "use", "Identity", L("pooled"), L("t_out"), NULL);
    add_value(&br, 12, "t_out", 1, -1, NULL);
    attr_graph(&at, "then_branch", &br);
    add_node(&g, "if", "If", L("cond"), L("if_out"), &at);
    hsdag_graph *gr = NULL;
    hsdag_err e = {0};
    CHECK(read_model(&g, &gr, &e) == 0);
    if (!gr) {
        fprintf(stderr, "  %s\n", e.msg);
        return;
    }
    CHECK_EQ_INT(gr->n_nodes, 13);
    int32_t fill = hsdag_graph_find(gr, "fill"), ein = hsdag_graph_find(gr, "ein"),
            rs = hsdag_graph_find(gr, "rs");
    int32_t pool = hsdag_graph_find(gr, "pool"), iff = hsdag_graph_find(gr, "if"),
            gemm = hsdag_graph_find(gr, "gemm");
    CHECK(fill >= 0 && ein >= 0 && rs >= 0 && pool >= 0 && iff >= 0 && gemm >= 0);
    if (fill >= 0 && ein >= 0 && rs >= 0 && pool >= 0 && iff >= 0 && gemm >= 0) {
        CHECK_NEAR(gr->flops[gemm], 2.0 * 15 * 6 * 2, 0);
        CHECK_NEAR(gr->out_bytes[gemm], 15 * 6 * 4, 0);
        CHECK_NEAR(gr->out_bytes[fill], 2 * 4, 0);
        CHECK_NEAR(gr->flops[ein], 2.0 * 2 * 3 * 4 * 5, 0);
        int32_t s = gr->out_shape_off[rs];
        CHECK_EQ_INT(gr->shape_rank[s], 2);
        CHECK_EQ_INT(gr->shape_dims[gr->shape_dim_off[s]], 2);
        CHECK_EQ_INT(gr->shape_dims[gr->shape_dim_off[s] + 1], 15);
        CHECK_NEAR(gr->flops[pool], 18.0 * 4, 0);
        CHECK(hsdag_graph_edge_id(gr, pool, iff) >= 0); /* captured by the then-branch */
        CHECK_EQ_INT(gr->in_off[iff + 1] - gr->in_off[iff], 1);
        CHECK(gr->flags[iff] & HSDAG_NF_UNKNOWN_OP); /* control flow: opaque, byte-only */
    }
    hsdag_graph_free(gr);
}

static int bad_graph(pb *g, int want, const char *needle)
{
    hsdag_graph *gr = NULL;
    hsdag_err e = {0};
    int rc = read_model(g, &gr, &e);
    hsdag_graph_free(gr);
    int ok = rc == want && strstr(e.msg, "hand.onnx") && (!needle || strstr(e.msg, needle)) &&
             !strchr(e.msg, '\n');
    if (!ok) fprintf(stderr, "  got %d (%s), want %d with '%s'\n", rc, e.msg, want, needle ? needle : "");
    return ok;
}

static void test_hand_bad(void)
{
    pb g = {0};
    int64_t big[] = {100000, 100000}, huge[] = {1000000, 1000000};
    int64_t r17[17];
    for (int i = 0; i < 17; i++) r17[i] = 1;
    /* 10^10 elements: a number, not an allocation; 10^12 is above HSDAG_MAX_ELEMS (1e11): ELIMIT */
    add_value(&g, 11, "x", 1, 2, big);
    add_node(&g, "r", "Relu", L("x"), L("y"), NULL);
    hsdag_graph *gr = NULL;
    hsdag_err e = {0};
    CHECK(read_model(&g, &gr, &e) == 0);
    if (gr) {
        CHECK_NEAR(gr->flops[0], 1e10, 0);
        CHECK_NEAR(gr->out_bytes[0], 4e10, 0);
        hsdag_graph_free(gr);
    }
    add_value(&g, 11, "x", 1, 2, huge);
    add_node(&g, "r", "Relu", L("x"), L("y"), NULL);
    CHECK(bad_graph(&g, HSDAG_ELIMIT, "elements"));
    add_value(&g, 11, "x", 1, 17, r17);
    add_node(&g, "r", "Relu", L("x"), L("y"), NULL);
    CHECK(bad_graph(&g, HSDAG_ELIMIT, "rank"));
    add_node(&g, "a", "Relu", L("q"), L("p"), NULL);
    add_node(&g, "b", "Relu", L("p"), L("q"), NULL);
    CHECK(bad_graph(&g, HSDAG_ECYCLE, "cycle"));
    add_node(&g, "a", "Relu", L("nowhere"), L("p"), NULL);
    CHECK(bad_graph(&g, HSDAG_EDANGLING, "nowhere"));
    add_node(&g, "a", "Relu", NULL, L("p"), NULL);
    add_node(&g, "b", "Relu", NULL, L("p"), NULL);
    CHECK(bad_graph(&g, HSDAG_EPARSE, "also produced"));
    add_node(&g, "a", NULL, NULL, L("p"), NULL);
    CHECK(bad_graph(&g, HSDAG_EPARSE, "op_type"));
    CHECK(bad_graph(&g, HSDAG_EPARSE, "no nodes"));
    /* If bodies nested 40 deep: 120 protobuf levels */
    pb inner = {0};
    add_node(&inner, "leaf", "Relu", L("x"), L("y"), NULL);
    for (int d = 0; d < 40; d++) {
        pb at = {0}, outer = {0};
        attr_graph(&at, "then_branch", &inner);
        add_node(&outer, "if", "If", NULL, L("o"), &at);
        inner = outer;
    }
    CHECK(bad_graph(&inner, HSDAG_ELIMIT, "nested"));

    /* not a model at all */
    const char *msgs[] = {"", "\x08", "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "hello world"};
    for (size_t i = 0; i < 4; i++) {
        e.msg[0] = '\0';
        int rc = hsdag_onnx_read(&gr, msgs[i], strlen(msgs[i]), "junk.onnx", &e);
        CHECK(rc == HSDAG_EPARSE && gr == NULL && strstr(e.msg, "junk.onnx"));
    }
}

static void test_truncated_random(void)
{
    char *buf;
    size_t len;
    hsdag_err e = {0};
    CHECK(hsdag_read_file(&buf, &len, "tests/data/onnx/squeezenet1_1.onnx", 0, &e) == 0);
    if (!buf) return;
    size_t cuts[] = {1, 2, 7, 64, 1000, len / 3, len / 2, len - 100, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        hsdag_graph *g = NULL;
        int rc = hsdag_onnx_read(&g, buf, cuts[i], "cut.onnx", &e);
        CHECK(rc < 0 && g == NULL);
        hsdag_graph_free(g);
    }
    hsdag_rng r;
    hsdag_rng_seed(&r, 1);
    int rejected = 0;
    for (int t = 0; t < 200; t++) {
        unsigned char junk[512];
        size_t n = 1 + hsdag_rng_below(&r, sizeof junk);
        for (size_t i = 0; i < n; i++) junk[i] = (unsigned char)hsdag_rng_u64(&r);
        hsdag_graph *g = NULL;
        int rc = hsdag_onnx_read(&g, junk, n, "random.onnx", &e);
        rejected += rc < 0;
        hsdag_graph_free(g);
    }
    CHECK_EQ_INT(rejected, 200);
    /* flip bytes of a real file: any outcome but a crash or leak (ASan) */
    hsdag_rng_seed(&r, 2);
    for (int t = 0; t < 100; t++) {
        size_t at = hsdag_rng_below(&r, (uint32_t)len);
        char old = buf[at];
        buf[at] = (char)hsdag_rng_u64(&r);
        hsdag_graph *g = NULL;
        int rc = hsdag_onnx_read(&g, buf, len, "flip.onnx", &e);
        CHECK(rc == 0 ? g != NULL : g == NULL);
        hsdag_graph_free(g);
        buf[at] = old;
    }
    hsdag_free(buf);
}

static void test_alloc_failures(void)
{
    char *buf;
    size_t len;
    hsdag_err e = {0};
    CHECK(hsdag_read_file(&buf, &len, "tests/data/onnx/alexnet.onnx", 0, &e) == 0);
    if (!buf) return;
    oom_sweep s = oom_sweep_run(hsdag_onnx_read, buf, len, "alexnet.onnx", 100000, 1);
    CHECK_EQ_INT(s.other, 0);
    CHECK(s.first_ok > 10 && s.first_ok < 100000);
    hsdag_free(buf);
}

static void test_deterministic(void)
{
    hsdag_err e = {0};
    hsdag_graph *a = load("tests/data/onnx/vit_b_16.onnx", &e),
                *b = load("tests/data/onnx/vit_b_16.onnx", &e);
    CHECK(a && b);
    if (a && b) {
        int same = a->n_nodes == b->n_nodes && a->n_edges == b->n_edges;
        for (int32_t i = 0; same && i < a->n_nodes; i++)
            same = strcmp(a->name[i], b->name[i]) == 0 && a->flops[i] == b->flops[i] &&
                   a->param_bytes[i] == b->param_bytes[i] && a->out_bytes[i] == b->out_bytes[i];
        for (int32_t k = 0; same && k < a->n_edges; k++)
            same = a->out_dst[k] == b->out_dst[k] && a->edge_bytes[k] == b->edge_bytes[k];
        CHECK(same);
    }
    hsdag_graph_free(a);
    hsdag_graph_free(b);
}

int main(void)
{
    test_bundled();
    test_known_models();
    test_hand_basic();
    test_hand_weights();
    test_hand_shapes();
    test_hand_bad();
    test_truncated_random();
    test_alloc_failures();
    test_deterministic();
    return check_summary("test_onnx");
}
