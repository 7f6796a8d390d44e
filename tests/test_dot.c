/* test_dot.c - tests of the NNCF DOT reader on bundled NNCF reference graphs (all five flavours), a
 * hand-written file with the quirks (parallel edges, port ids, labels, dtypes, dynamic dims) and bad input.
 * Not here: the DOT writer (hsdag_dot_write). Expected numbers: `gc` and tests/data/nncf/expect.py.
 * Entry points: main. */
#include "check.h"
#include "oom_sweep.h"

#include "hsdag/io.h"

#include <string.h>

#define DIR "tests/data/nncf/"

static int load(const char *path, hsdag_graph **g, hsdag_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = hsdag_read_file(&buf, &len, path, 0, e);
    if (rc < 0) return rc;
    rc = hsdag_dot_read(g, buf, len, path, e);
    hsdag_free(buf);
    return rc;
}

static double sum(const double *a, int32_t n)
{
    double s = 0;
    for (int32_t i = 0; i < n; i++) s += a[i];
    return s;
}

/* Counts from `gc` (and grep -c ' -> '), byte totals from expect.py. */
typedef struct real_case {
    const char *file;
    int nodes, edges, ir_edges;
    double edge_bytes, param_bytes;
} real_case;

static void test_real(void)
{
    static const real_case cases[] = {
        {"onnx/resnet18.dot", 51, 58, 58, 27303840, 0},
        {"onnx_quantized/resnet50_cpu_spr.dot", 348, 363, 363, 437953952, 0},
        {"openvino/mobilenet-v3-small.dot", 207, 221, 221, 24189312, 10103488},
        {"openvino/resnet-18.dot", 76, 83, 83, 152038280, 44657464},
        {"torch_fx/resnet18.dot", 193, 180, 180, 84035136, 46796448},
        {"torch_hook/model_graph_resnext50_32x4d.dot", 444, 459, 459, 117775936, 100388512},
        {"torch_hook/model_graph_vgg16.dot", 74, 73, 73, 556082240, 553430176},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const real_case *c = &cases[i];
        char path[256];
        snprintf(path, sizeof path, DIR "%s", c->file);
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        int rc = load(path, &g, &e);
        CHECK_EQ_INT(rc, 0);
        if (rc < 0) {
            fprintf(stderr, "%s\n", e.msg);
            continue;
        }
        CHECK_EQ_INT(g->meta.format, HSDAG_FMT_DOT);
        CHECK_EQ_INT(g->meta.file_nodes, c->nodes);
        CHECK_EQ_INT(g->meta.file_edges, c->edges);
        CHECK_EQ_INT(g->n_nodes, c->nodes);
        CHECK_EQ_INT(g->n_edges, c->ir_edges);
        CHECK_NEAR(sum(g->edge_bytes, g->n_edges), c->edge_bytes, 0.5);
        CHECK_NEAR(sum(g->param_bytes, g->n_nodes), c->param_bytes, 0.5);
        hsdag_graph_free(g);
    }
}

/* Node details: names without the id prefix, ops, file ids, input order for FLOPs in each flavour. */
static void test_details(void)
{
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    /* openvino: data edge first in the file, weight Constant edge at the end */
    if (load(DIR "openvino/resnet-18.dot", &g, &e) == 0) {
        int32_t v = hsdag_graph_find(g, "/conv1/Conv/WithoutBiases");
        CHECK(v >= 0);
        if (v >= 0) {
            CHECK_STR(g->op[v], "Convolution");
            CHECK_EQ_INT(g->file_id[v], 1);
            CHECK_NEAR(g->flops[v], 2.0 * 64 * 224 * 224 * 27, 0); /* out [1,64,224,224], W [64,3,3,3] */
            CHECK_NEAR(g->param_bytes[v], 64.0 * 27 * 4, 0);
            int32_t s = g->out_shape_off[v];
            CHECK_EQ_INT(g->out_shape_off[v + 1] - s, 1);
            CHECK_EQ_INT(g->shape_rank[s], 4);
            CHECK_EQ_INT(g->shape_dtype[s], HSDAG_DT_F32);
        }
        CHECK(hsdag_graph_find(g, "input.1") >= 0);
        CHECK(hsdag_graph_find(g, "onnx::Conv_247") >= 0); /* from the label; the DOT id has "^^" */
    } else {
        CHECK(0);
    }
    hsdag_graph_free(g);
    g = NULL;
    /* torch_fx: the weight edge comes first in the file; constants are ordered after the data */
    if (load(DIR "torch_fx/resnet18.dot", &g, &e) == 0) {
        int32_t v = hsdag_graph_find(g, "conv2d");
        CHECK(v >= 0);
        if (v >= 0) {
            CHECK_EQ_INT(g->file_id[v], 123);
            CHECK_NEAR(g->flops[v], 2.0 * 64 * 112 * 112 * 147, 0);
            CHECK_NEAR(g->param_bytes[v], 64.0 * 3 * 7 * 7 * 4, 0);
        }
        int32_t w = hsdag_graph_find(g, "conv1_weight");
        CHECK(w >= 0 && g->opclass[w] == HSDAG_OP_BOOKKEEPING);
    } else {
        CHECK(0);
    }
    hsdag_graph_free(g);
    g = NULL;
    /* torch_hook: unprefixed names, in_port_id order, dtype=float */
    if (load(DIR "torch_hook/model_graph_vgg16.dot", &g, &e) == 0) {
        int32_t v = hsdag_graph_find(g, "features/0/conv2d/0");
        CHECK(v >= 0);
        if (v >= 0) {
            CHECK_EQ_INT(g->file_id[v], 3);
            CHECK_STR(g->op[v], "conv2d");
            CHECK_NEAR(g->flops[v], 2.0 * 64 * 32 * 32 * 27, 0);
            CHECK_NEAR(g->param_bytes[v], (64.0 * 27 + 64) * 4, 0); /* weight + bias */
        }
        CHECK(hsdag_graph_find(g, "x") >= 0);
    } else {
        CHECK(0);
    }
    hsdag_graph_free(g);
    g = NULL;
    /* onnx_quantized: the label attribute carries the real name ("::" is "^^" in the DOT id) */
    if (load(DIR "onnx_quantized/resnet50_cpu_spr.dot", &g, &e) == 0) {
        CHECK(hsdag_graph_find(g, "QuantizeLinear_onnx::Conv_497_1") >= 0);
        CHECK(hsdag_graph_find(g, "/conv1/Conv") >= 0);
    } else {
        CHECK(0);
    }
    hsdag_graph_free(g);
}

/* hand/quirks.dot (worked by hand): 8 nodes, 8 edge statements, 6 IR edges; cat -> sq twice with one
 * label (one tensor: 1024 B), split -> cat on out ports 0 and 1 (two tensors: 1024 B), conv -> split
 * dtype=half (512 B); edge bytes 1024+576+512+1024+1024+0 = 4160; conv FLOPs 2*256*36 = 18432,
 * sq 256 (its output is dynamic: the largest input); param 576 (the Constant weight). */
static void test_quirks(void)
{
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    int rc = load(DIR "hand/quirks.dot", &g, &e);
    CHECK_EQ_INT(rc, 0);
    if (rc < 0) {
        fprintf(stderr, "%s\n", e.msg);
        return;
    }
    CHECK_EQ_INT(g->meta.file_nodes, 8);
    CHECK_EQ_INT(g->meta.file_edges, 8);
    CHECK_EQ_INT(g->n_nodes, 8);
    CHECK_EQ_INT(g->n_edges, 6);
    CHECK_STR(g->meta.name, "quirks");
    CHECK_NEAR(sum(g->edge_bytes, g->n_edges), 4160.0, 0);
    CHECK_NEAR(sum(g->flops, g->n_nodes), 18688.0, 0);
    CHECK_NEAR(sum(g->param_bytes, g->n_nodes), 576.0, 0);
    int32_t w = hsdag_graph_find(g, "w"), conv = hsdag_graph_find(g, "conv::main");
    int32_t split = hsdag_graph_find(g, "split"), cat = hsdag_graph_find(g, "cat");
    int32_t sq = hsdag_graph_find(g, "sq"), orphan = hsdag_graph_find(g, "orphan");
    CHECK(w >= 0 && conv >= 0 && split >= 0 && cat >= 0 && sq >= 0 && orphan >= 0);
    if (w < 0 || conv < 0 || split < 0 || cat < 0 || sq < 0 || orphan < 0) {
        hsdag_graph_free(g);
        return;
    }
    CHECK(w < conv); /* the first edge statement mentions w before its node statement */
    CHECK_EQ_INT(g->file_id[conv], 2);
    CHECK_EQ_INT(g->file_id[orphan], 7); /* no id attribute: its index */
    CHECK_STR(g->op[orphan], "Unknown");
    CHECK(g->flags[orphan] & HSDAG_NF_UNKNOWN_OP);
    CHECK_NEAR(g->flops[conv], 18432.0, 0);
    CHECK_NEAR(g->param_bytes[conv], 576.0, 0);
    CHECK_EQ_INT(g->out_shape_off[split + 1] - g->out_shape_off[split], 2);
    CHECK_NEAR(g->edge_bytes[hsdag_graph_edge_id(g, split, cat)], 1024.0, 0);
    CHECK_NEAR(g->edge_bytes[hsdag_graph_edge_id(g, cat, sq)], 1024.0, 0);
    CHECK_NEAR(g->edge_bytes[hsdag_graph_edge_id(g, conv, split)], 512.0, 0);
    CHECK_EQ_INT(g->shape_dtype[g->out_shape_off[conv]], HSDAG_DT_F16);
    int32_t s = g->out_shape_off[sq];
    CHECK_EQ_INT(g->shape_rank[s], 4);
    CHECK_EQ_INT(g->shape_dims[g->shape_dim_off[s]], -1);
    CHECK_NEAR(g->flops[sq], 256.0, 0);
    hsdag_graph_free(g);
}

typedef struct bad_case {
    const char *file;
    int status;
    const char *needle;
} bad_case;

static void test_bad(void)
{
    static const bad_case cases[] = {
        {"truncated.dot", HSDAG_EPARSE, "DOT syntax error in line 82"}, /* 81 newlines, cut inside line 82 */
        {"undirected.dot", HSDAG_EUNSUPPORTED, "undirected"},
        {"cycle.dot", HSDAG_ECYCLE, "cycle"},
        {"selfloop.dot", HSDAG_ECYCLE, "edge to itself"},
        {"shape_1e13.dot", HSDAG_ELIMIT, "1e+13 elements"},
        {"rank17.dot", HSDAG_ELIMIT, "rank above 16"},
        {"nul.dot", HSDAG_EPARSE, "NUL byte at offset 102"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, DIR "hand/%s", cases[i].file);
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        double t0 = hsdag_now();
        int rc = load(path, &g, &e);
        CHECK(hsdag_now() - t0 < 0.5);
        CHECK_EQ_INT(rc, cases[i].status);
        CHECK(g == NULL);
        CHECK(strchr(e.msg, '\n') == NULL);
        CHECK(strncmp(e.msg, path, strlen(path)) == 0);
        if (!strstr(e.msg, cases[i].needle)) {
            fprintf(stderr, "FAIL %s: message '%s' lacks '%s'\n", cases[i].file, e.msg, cases[i].needle);
            CHECK(0);
        }
        hsdag_graph_free(g);
    }
    /* a 10^12-element tensor (4 TB) is absurd: ELIMIT, no allocation for it */
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(load(DIR "hand/shape_1e12.dot", &g, &e), HSDAG_ELIMIT);
    CHECK(g == NULL);
    CHECK(strstr(e.msg, "1e+12 elements") != NULL);
    g = NULL;

    CHECK_EQ_INT(hsdag_dot_read(&g, "", 0, NULL, &e), HSDAG_EPARSE);
    CHECK(strncmp(e.msg, "<buffer>: ", 10) == 0);
    CHECK_EQ_INT(hsdag_dot_read(&g, "digraph {", 9, "x.dot", &e), HSDAG_EPARSE);
    CHECK_STR(e.msg, "x.dot: DOT syntax error in line 1");
    /* random bytes without NUL reach cgraph: an error, never a crash; the parser recovers after it */
    hsdag_rng r;
    hsdag_rng_seed(&r, 11);
    char junk[2048];
    for (int t = 0; t < 20; t++) {
        for (size_t i = 0; i < sizeof junk; i++) junk[i] = (char)(1 + hsdag_rng_below(&r, 255));
        if (t % 2) memcpy(junk, "digraph { \"0 a\" -> ", 19);
        int rc = hsdag_dot_read(&g, junk, sizeof junk, "junk", &e);
        CHECK(rc < 0 && g == NULL && strchr(e.msg, '\n') == NULL);
    }
    /* cgraph's scanner state must not leak from one read into the next: neither the text after the
     * first graph (it used to be parsed as the start of the next input) nor a start condition left
     * inside an HTML string or a quoted string by a syntax error */
    static const char *const spoilers[] = {
        "digraph g {\n\"0ze\":10,\"colorClass\":1},{\"id\":2,\"name\":\"b\"}", /* fuzz_load find */
        "digraph { a -> b } digraph { c }",
        "digraph { a -> b } \"x",
        "digraph { a [label=<x",
        "digraph { a -> b [label=\"[1, 2]\" }",
    };
    for (size_t i = 0; i < sizeof spoilers / sizeof spoilers[0]; i++) {
        int rc = hsdag_dot_read(&g, spoilers[i], strlen(spoilers[i]), "spoil.dot", &e);
        CHECK_EQ_INT(rc, HSDAG_EPARSE);
        if (i >= 1 && i <= 2) CHECK(strstr(e.msg, "continues after the first graph") != NULL);
        const char *good = "digraph {\n a -> b [label=\"[2]\"]\n}\n// comment\n/* more */\n# 12 \"x.dot\"\n";
        CHECK_EQ_INT(hsdag_dot_read(&g, good, strlen(good), "good.dot", &e), 0);
        CHECK(g && g->n_nodes == 2 && g->n_edges == 1);
        hsdag_graph_free(g);
        g = NULL;
    }
    /* '#' starts a comment anywhere outside a string (cgraph's scanner), so the pre-scan must skip it too:
     * it counted "t#;" as a statement end and no edge, and the bound on cgraph's edges was wrong (fuzz_dot) */
    const char *hash = "digraph{t#;\n->\"\"}";
    CHECK_EQ_INT(hsdag_dot_read(&g, hash, strlen(hash), "hash.dot", &e), 0);
    CHECK(g && g->n_nodes == 2 && g->n_edges == 1);
    hsdag_graph_free(g);
    g = NULL;
    const char *ok = "digraph { a -> b [label=\"[2]\"] }";
    CHECK_EQ_INT(hsdag_dot_read(&g, ok, strlen(ok), "ok", &e), 0);
    if (g) {
        CHECK_EQ_INT(g->n_nodes, 2);
        CHECK_NEAR(g->edge_bytes[0], 8.0, 0);
        CHECK_STR(g->meta.name, "");
    }
    hsdag_graph_free(g);
}

static void test_alloc_failures(void)
{
    char *buf = NULL;
    size_t len = 0;
    hsdag_err e = {0};
    if (hsdag_read_file(&buf, &len, DIR "hand/quirks.dot", 0, &e) < 0) {
        CHECK(0);
        return;
    }
    oom_sweep s = oom_sweep_run(hsdag_dot_read, buf, len, "q", 300, 0);
    CHECK(s.ok > 0 && s.oom > 0);
    CHECK_EQ_INT(s.other, 0);
    hsdag_free(buf);
}

int main(void)
{
    test_real();
    test_details();
    test_quirks();
    test_bad();
    test_alloc_failures();
    return check_summary("test_dot");
}
