/* test_ovxml.c - tests of the OpenVINO IR reader on the real ResNet-50 IR, a hand-written v10 file with
 * the quirks of IR files in the wild, and the bad-input suite (entity bomb, XXE, dangling, cycle, ...).
 * Not here: format detection and the CLI (tests/cli/). Expected numbers come from
 * tests/data/openvino/expect.py.
 * Entry points: main. */
#include "check.h"
#include "oom_sweep.h"
#include "../src/io/ioutil.h"

#include "hsdag/io.h"

#include <string.h>

#define DIR "tests/data/openvino/"

static int load(const char *path, hsdag_graph **g, hsdag_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = hsdag_read_file(&buf, &len, path, 0, e);
    if (rc < 0) return rc;
    rc = hsdag_ovxml_read(g, buf, len, path, e);
    hsdag_free(buf);
    return rc;
}

static double sum(const double *a, int32_t n)
{
    double s = 0;
    for (int32_t i = 0; i < n; i++) s += a[i];
    return s;
}

static int32_t find(const hsdag_graph *g, const char *name)
{
    int32_t v = hsdag_graph_find(g, name);
    if (v < 0) fprintf(stderr, "node '%s' not found\n", name);
    return v;
}

static void check_topo(const hsdag_graph *g)
{
    int ok = 1;
    for (int32_t u = 0; u < g->n_nodes; u++)
        for (int32_t k = g->out_off[u]; k < g->out_off[u + 1]; k++)
            if (g->out_dst[k] <= u) ok = 0;
    CHECK(ok);
}

/* resnet-50-pytorch.xml (openvino_notebooks): 399 layers, 414 edges per SOURCES.md; totals from expect.py */
static void test_resnet50(void)
{
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    int rc = load(DIR "resnet-50-pytorch.xml", &g, &e);
    CHECK_EQ_INT(rc, 0);
    if (rc < 0) {
        fprintf(stderr, "%s\n", e.msg);
        return;
    }
    CHECK_EQ_INT(g->meta.format, HSDAG_FMT_OVXML);
    CHECK_EQ_INT(g->meta.file_nodes, 399);
    CHECK_EQ_INT(g->meta.file_edges, 414);
    CHECK_EQ_INT(g->n_nodes, 399);
    CHECK_EQ_INT(g->n_edges, 414);
    CHECK_EQ_INT(g->meta.ir_version, 11);
    CHECK_STR(g->meta.name, "torch-jit-export");
    CHECK_NEAR(sum(g->param_bytes, g->n_nodes), 51060982.0, 0.5);
    CHECK_NEAR(sum(g->flops, g->n_nodes), 8206668776.0, 0.5);
    CHECK_NEAR(sum(g->edge_bytes, g->n_edges), 327117282.0, 0.5);
    check_topo(g);

    int32_t data = find(g, "data");
    CHECK(data >= 0);
    if (data >= 0) {
        CHECK_STR(g->op[data], "Parameter");
        CHECK(g->flags[data] & HSDAG_NF_INPUT);
        CHECK_EQ_INT(g->file_id[data], 0);
        int32_t s = g->out_shape_off[data];
        CHECK_EQ_INT(g->out_shape_off[data + 1] - s, 1);
        CHECK_EQ_INT(g->shape_rank[s], 4);
        CHECK_EQ_INT(g->shape_dtype[s], HSDAG_DT_F32);
        CHECK_NEAR(hsdag_graph_shape_elems(g, s), 150528.0, 0);
    }
    /* a compressed weight: Const f16 -> Convert (decompression) -> Convolution */
    int32_t wc = find(g, "Gather_5859_compressed"), w = find(g, "Gather_5859"), conv = -1;
    CHECK(wc >= 0 && w >= 0);
    if (wc >= 0 && w >= 0) {
        CHECK_STR(g->op[wc], "Const");
        CHECK_EQ_INT(g->opclass[wc], HSDAG_OP_BOOKKEEPING);
        CHECK_EQ_INT(g->shape_dtype[g->out_shape_off[wc]], HSDAG_DT_F16);
        CHECK_NEAR(g->param_bytes[wc], 0, 0);
        CHECK_NEAR(g->flops[w], 0, 0); /* constant-valued: folded */
        CHECK_EQ_INT(g->out_off[w + 1] - g->out_off[w], 1);
        conv = g->out_dst[g->out_off[w]];
        CHECK_STR(g->op[conv], "Convolution");
        /* first conv: 64x3x7x7 weights in f16 = 18816 bytes; out 1x64x112x112, 2*out*3*7*7 FLOPs */
        CHECK_NEAR(g->param_bytes[conv], 18816.0, 0);
        CHECK_NEAR(g->flops[conv], 2.0 * 802816 * 147, 0);
        CHECK_NEAR(g->edge_bytes[hsdag_graph_edge_id(g, wc, w)], 18816.0, 0);
        CHECK_NEAR(g->edge_bytes[hsdag_graph_edge_id(g, w, conv)], 37632.0, 0);
    }
    int n_res = 0;
    for (int32_t v = 0; v < g->n_nodes; v++)
        if (g->flags[v] & HSDAG_NF_OUTPUT) n_res++;
    CHECK_EQ_INT(n_res, 1);
    hsdag_graph_free(g);
}

/* quirks-v10.xml: version="10" opset layers, ids out of file order, a Const with output port id 1, an
 * f16 weight through Convert, GroupConvolution, x*x (two <edge>s, one tensor), Split -> Concat on two
 * ports (two tensors, one IR edge), -1 dims, unsorted <edge>s, top-level rt_info, " />" closings.
 * Totals from expect.py (and by hand in the comments below): 17 layers, 18 edge elements,
 * 16 IR edges, 83384 param bytes, 374794 FLOPs, 126768 edge bytes. */
static void test_quirks(void)
{
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    int rc = load(DIR "quirks-v10.xml", &g, &e);
    CHECK_EQ_INT(rc, 0);
    if (rc < 0) {
        fprintf(stderr, "%s\n", e.msg);
        return;
    }
    CHECK_EQ_INT(g->meta.file_nodes, 17);
    CHECK_EQ_INT(g->meta.file_edges, 18);
    CHECK_EQ_INT(g->n_nodes, 17);
    CHECK_EQ_INT(g->n_edges, 16);
    CHECK_EQ_INT(g->meta.ir_version, 10);
    CHECK_STR(g->meta.name, "quirks-v10");
    CHECK_NEAR(sum(g->param_bytes, g->n_nodes), 83384.0, 0);
    CHECK_NEAR(sum(g->flops, g->n_nodes), 374794.0, 0);
    CHECK_NEAR(sum(g->edge_bytes, g->n_edges), 126768.0, 0);
    check_topo(g);
    int32_t in = find(g, "input"), conv = find(g, "conv"), w16 = find(g, "w_fp16"), w = find(g, "w");
    int32_t dw = find(g, "dw"), sq = find(g, "sq"), flat = find(g, "flat"), fc = find(g, "fc");
    int32_t split = find(g, "split"), cat = find(g, "cat"), add = find(g, "add"), dyn = find(g, "dyn");
    int32_t out = find(g, "out");
    if (in < 0 || conv < 0 || w16 < 0 || w < 0 || dw < 0 || sq < 0 || flat < 0 || fc < 0 || split < 0 ||
        cat < 0 || add < 0 || dyn < 0 || out < 0) {
        CHECK(0);
        hsdag_graph_free(g);
        return;
    }
    CHECK_EQ_INT(g->file_id[conv], 3); /* first in the file, placed after its inputs */
    CHECK(conv > in && conv > w);
    CHECK_EQ_INT(g->file_id[w16], 1);
    CHECK_EQ_INT(g->shape_dtype[g->out_shape_off[w16]], HSDAG_DT_F16);
    CHECK_NEAR(g->param_bytes[conv], 1152.0, 0);    /* 8x8x3x3 f16 through the Convert */
    CHECK_NEAR(g->flops[conv], 2.0 * 2048 * 72, 0); /* out 1x8x16x16, W[1:] = 8x3x3 */
    CHECK_NEAR(g->param_bytes[dw], 288.0, 0);       /* 8x1x1x3x3 f32 */
    CHECK_NEAR(g->flops[dw], 2.0 * 2048 * 9, 0);    /* GroupConvolution: W[2:] = 1x3x3 */
    CHECK_NEAR(g->edge_bytes[hsdag_graph_edge_id(g, dw, sq)], 8192.0, 0); /* x*x: one tensor */
    CHECK_NEAR(g->flops[sq], 2048.0, 0);
    CHECK_NEAR(g->param_bytes[flat], 16.0, 0); /* the i64 shape constant */
    CHECK_NEAR(g->param_bytes[fc], 81920.0, 0);
    CHECK_NEAR(g->flops[fc], 2.0 * 10 * 2048, 0); /* transpose_b */
    CHECK_NEAR(g->param_bytes[split], 8.0, 0);    /* scalar i64 axis */
    CHECK_EQ_INT(g->out_shape_off[split + 1] - g->out_shape_off[split], 2);
    CHECK_NEAR(g->edge_bytes[hsdag_graph_edge_id(g, split, cat)], 40.0, 0); /* two [1,5] f32 tensors */
    CHECK_NEAR(g->edge_bytes[hsdag_graph_edge_id(g, dyn, add)], 0.0, 0);    /* [-1,10]: unknown */
    int32_t s = g->out_shape_off[dyn];
    CHECK_EQ_INT(g->shape_rank[s], 2);
    CHECK_EQ_INT(g->shape_dims[g->shape_dim_off[s]], -1);
    CHECK_NEAR(hsdag_graph_shape_elems(g, s), -1.0, 0);
    CHECK_NEAR(g->flops[add], 10.0, 0);
    CHECK(g->flags[out] & HSDAG_NF_OUTPUT);
    CHECK_EQ_INT(g->out_shape_off[out + 1] - g->out_shape_off[out], 0);
    hsdag_graph_free(g);
}

/* ---- bad input: status, one-line message naming the file, and quick ---- */
typedef struct bad_case {
    const char *file;
    int status;
    const char *needle;
} bad_case;

static void test_bad_files(void)
{
    static const bad_case cases[] = {
        {"entity_bomb.xml", HSDAG_EUNSUPPORTED, "DOCTYPE"},
        {"xxe.xml", HSDAG_EUNSUPPORTED, "DOCTYPE"},
        {"xxe_dtd.xml", HSDAG_EUNSUPPORTED, "DOCTYPE"},
        /* a bad XML declaration, then a bomb whose first entity name is not UTF-8: libxml2 went on past its
         * errors and expanded the entities for minutes (a fuzz-smoke timeout) */
        {"entity_bomb_bad_decl.xml", HSDAG_EUNSUPPORTED, "line 2: document has a DOCTYPE"},
        {"dangling_edge.xml", HSDAG_EDANGLING, "from-layer=7: no such layer"},
        {"dangling_port.xml", HSDAG_EDANGLING, "no output port 5"},
        {"cycle.xml", HSDAG_ECYCLE, "cycle"},
        {"truncated.xml", HSDAG_EPARSE, "XML error"},
        {"shape_1e13.xml", HSDAG_ELIMIT, "1e+13 elements"},
        {"rank17.xml", HSDAG_ELIMIT, "rank above 16"},
        {"dup_id.xml", HSDAG_EPARSE, "layer id=1 'again': duplicate layer id"},
        {"bad_dim.xml", HSDAG_EPARSE, "bad dim 'four'"},
        {"version7.xml", HSDAG_EUNSUPPORTED, "IR version 7"},
        {"not_net.xml", HSDAG_EFORMAT, "not <net>"},
        {"no_type.xml", HSDAG_EPARSE, "missing type"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, DIR "bad/%s", cases[i].file);
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        double t0 = hsdag_now();
        int rc = load(path, &g, &e);
        double dt = hsdag_now() - t0;
        CHECK_EQ_INT(rc, cases[i].status);
        CHECK(g == NULL);
        CHECK(strchr(e.msg, '\n') == NULL);
        CHECK(strncmp(e.msg, path, strlen(path)) == 0);
        if (!strstr(e.msg, cases[i].needle)) {
            fprintf(stderr, "FAIL %s: message '%s' lacks '%s'\n", cases[i].file, e.msg, cases[i].needle);
            CHECK(0);
        }
        CHECK(!strstr(e.msg, "root:")); /* nothing of /etc/passwd */
        CHECK(dt < 0.5);
        hsdag_graph_free(g);
    }
}

/* A 10^12-element tensor (4 TB) is absurd: refused with ELIMIT at once, without allocating for it. */
static void test_tera_shape(void)
{
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    double t0 = hsdag_now();
    int rc = load(DIR "bad/shape_1e12.xml", &g, &e);
    CHECK(hsdag_now() - t0 < 0.5);
    CHECK_EQ_INT(rc, HSDAG_ELIMIT);
    CHECK(g == NULL);
    CHECK(strstr(e.msg, "1e+12 elements") != NULL);
    hsdag_graph_free(g);
}

static void test_bad_buffers(void)
{
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_ovxml_read(&g, "", 0, NULL, &e), HSDAG_EPARSE);
    CHECK(strncmp(e.msg, "<buffer>: ", 10) == 0);
    CHECK_EQ_INT(hsdag_ovxml_read(&g, "<net", 4, "x.xml", &e), HSDAG_EPARSE);
    CHECK(strncmp(e.msg, "x.xml: line ", 12) == 0);
    CHECK_EQ_INT(hsdag_ovxml_read(&g, NULL, 3, "x", &e), HSDAG_EINVAL);
    /* random bytes: a parse error, never a crash */
    hsdag_rng r;
    hsdag_rng_seed(&r, 7);
    char junk[4096];
    for (int t = 0; t < 20; t++) {
        for (size_t i = 0; i < sizeof junk; i++) junk[i] = (char)(hsdag_rng_u64(&r) & 0xff);
        if (t % 2) memcpy(junk, "<?xml version=\"1.0\"?><net version=\"11\"><layers>", 47);
        int rc = hsdag_ovxml_read(&g, junk, sizeof junk, "junk", &e);
        CHECK(rc == HSDAG_EPARSE);
        CHECK(g == NULL && strchr(e.msg, '\n') == NULL);
    }
    /* <net> without layers, and an empty net */
    CHECK_EQ_INT(hsdag_ovxml_read(&g, "<net version=\"11\"/>", 19, "n", &e), HSDAG_EPARSE);
    const char *empty = "<net name=\"e\" version=\"11\"><layers/><edges/></net>";
    CHECK_EQ_INT(hsdag_ovxml_read(&g, empty, strlen(empty), "n", &e), 0);
    if (g) CHECK_EQ_INT(g->n_nodes, 0);
    hsdag_graph_free(g);
}

/* Every allocation failure on the quirks file gives ENOMEM (or success), never a crash or a leak. */
static void test_alloc_failures(void)
{
    char *buf = NULL;
    size_t len = 0;
    hsdag_err e = {0};
    if (hsdag_read_file(&buf, &len, DIR "quirks-v10.xml", 0, &e) < 0) {
        CHECK(0);
        return;
    }
    oom_sweep s = oom_sweep_run(hsdag_ovxml_read, buf, len, "q", 400, 0);
    CHECK(s.ok > 0 && s.oom > 0);
    CHECK_EQ_INT(s.other, 0);
    hsdag_free(buf);
}

/* the strict integer rule shared by the IR and DOT readers (src/io/ioutil.c) */
static void test_parse_i64(void)
{
    int64_t v = 0;
    CHECK(hsdag_ioutil_parse_i64(" 42\n", &v) == 0 && v == 42);
    CHECK(hsdag_ioutil_parse_i64("-1", &v) == 0 && v == -1);
    CHECK(hsdag_ioutil_parse_i64("\t+7 \r", &v) == 0 && v == 7);
    CHECK(hsdag_ioutil_parse_i64("9223372036854775807", &v) == 0 && v == INT64_MAX);
    CHECK(hsdag_ioutil_parse_i64("9223372036854775808", &v) < 0);
    CHECK(hsdag_ioutil_parse_i64("", &v) < 0);
    CHECK(hsdag_ioutil_parse_i64(NULL, &v) < 0);
    CHECK(hsdag_ioutil_parse_i64("4x", &v) < 0);
    CHECK(hsdag_ioutil_parse_i64("1 2", &v) < 0);
    CHECK(hsdag_ioutil_parse_i64("\v3", &v) < 0);
    CHECK(hsdag_ioutil_parse_i64("0x10", &v) < 0);
}

int main(void)
{
    test_resnet50();
    test_quirks();
    test_bad_files();
    test_tera_shape();
    test_bad_buffers();
    test_alloc_failures();
    test_parse_i64();
    return check_summary("test_ovxml");
}
