/* test_json.c - hsdag JSON: exact round trips (write -> read -> write byte-identical, every IR field equal)
 * on every Tarnawski workload, a hand-built graph with shapes/dtypes/flags/odd strings/odd numbers and
 * random graphs; a bad-input table; the DOT writer checked by running Graphviz `dot -Tsvg`.
 * Not here: the Tarnawski reader's own numbers (test_tarnawski.c). Entry points: main. */
#include "check.h"
#include "oom_sweep.h"
#include "graph_eq.h"
#include "hsdag/gen.h"
#include "hsdag/io.h"
#include "hsdag/split.h"
#include "../src/io/json_int.h"
#include "../src/io/jsonstream.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DATA "tests/data/tarnawski/"

/* The streaming reader against the tree reader on one text: when it takes the text the tree reader takes it
 * too and builds an equal graph (must_take: it has to take it, e.g. any text hsdag itself wrote). Returns
 * 1 if the streaming reader took it. */
static int stream_vs_tree(const void *buf, size_t len, const char *label, int must_take)
{
    hsdag_graph *gs = NULL, *gt = NULL;
    hsdag_err e = {0};
    int rs = hsdag_json_read_stream(&gs, buf, len), rt = hsdag_json_read_tree(&gt, buf, len, label, &e);
    if (must_take && rs != 0)
        fprintf(stderr, "%s: the streaming reader did not take hsdag's own text\n", label);
    if (must_take) CHECK_EQ_INT(rs, 0);
    CHECK(rs == 0 || rs == HSDAG_JSTREAM_STOP);
    CHECK(rs == 0 || gs == NULL);
    if (rs == 0) {
        if (rt != 0) fprintf(stderr, "%s: taken by the streaming reader only (tree: %s)\n", label, e.msg);
        CHECK_EQ_INT(rt, 0);
        if (gt) {
            int eq = graph_eq(gs, gt);
            if (!eq) fprintf(stderr, "%s: the two readers built different graphs\n", label);
            CHECK(eq);
        }
    }
    /* the same reader fed the text in newline-aligned pieces, as hsdag_load_file reads a large file: pieces far
     * shorter than a line, so every piece boundary and buffer growth is crossed */
    static const size_t pieces[] = {1, 4096};
    for (size_t i = 0; i < sizeof pieces / sizeof *pieces && len > 0; i++) {
        FILE *f = fmemopen((void *)(uintptr_t)buf, len, "rb");
        CHECK(f != NULL);
        if (!f) break;
        hsdag_graph *gf = NULL;
        int rf = hsdag_json_read_file_stream(&gf, f, pieces[i]);
        fclose(f);
        if (rf != rs) fprintf(stderr, "%s: in pieces of %zu: %d, whole: %d\n", label, pieces[i], rf, rs);
        CHECK_EQ_INT(rf, rs);
        if (gf && gs) CHECK(graph_eq(gf, gs));
        hsdag_graph_free(gf);
    }
    hsdag_graph_free(gs);
    hsdag_graph_free(gt);
    return rs == 0;
}

/* write -> read -> write; returns the re-read graph (caller frees) or NULL. */
static hsdag_graph *roundtrip(const hsdag_graph *g, const char *label)
{
    hsdag_buf w1 = {0}, w2 = {0};
    hsdag_graph *g2 = NULL;
    hsdag_err e = {0};
    CHECK(hsdag_json_write(&w1, g) == 0);
    stream_vs_tree(w1.data, w1.len, label, 1);
    int rc = hsdag_json_read(&g2, w1.data, w1.len, label, &e);
    CHECK_EQ_INT(rc, 0);
    if (rc < 0) fprintf(stderr, "%s: %s\n", label, e.msg);
    if (g2) {
        CHECK(hsdag_json_write(&w2, g2) == 0);
        int same = w1.len == w2.len && memcmp(w1.data, w2.data, w1.len) == 0;
        if (!same) fprintf(stderr, "%s: rewritten text differs\n", label);
        CHECK(same);
        int eq = graph_eq(g, g2);
        if (!eq) fprintf(stderr, "%s: graphs differ\n", label);
        CHECK(eq);
    }
    hsdag_buf_free(&w1);
    hsdag_buf_free(&w2);
    return g2;
}

static const char *const tw_files[] = {
    "latency-inputs/LayerGraphs/bert24_inference.json",
    "latency-inputs/LayerGraphs/gnmt_inference.json",
    "latency-inputs/LayerGraphs/inceptionv3_inference.json",
    "latency-inputs/LayerGraphs/resnet50_inference.json",
    "latency-inputs/OperatorGraphs/bert_l-12_inference.json",
    "latency-inputs/OperatorGraphs/bert_l-3_inference.json",
    "latency-inputs/OperatorGraphs/bert_l-6_inference.json",
    "latency-inputs/OperatorGraphs/resnet50_inference.json",
    "throughput-inputs/LayerGraphs/bert24_inference.json",
    "throughput-inputs/LayerGraphs/bert24_training.json",
    "throughput-inputs/LayerGraphs/gnmt_inference.json",
    "throughput-inputs/LayerGraphs/gnmt_training.json",
    "throughput-inputs/LayerGraphs/inceptionv3_inference.json",
    "throughput-inputs/LayerGraphs/inceptionv3_training.json",
    "throughput-inputs/LayerGraphs/resnet50_inference.json",
    "throughput-inputs/LayerGraphs/resnet50_training.json",
    "throughput-inputs/OperatorGraphs/bert_L-12_training.json",
    "throughput-inputs/OperatorGraphs/bert_l-12_inference.json",
    "throughput-inputs/OperatorGraphs/bert_l-3_inference.json",
    "throughput-inputs/OperatorGraphs/bert_l-3_training.json",
    "throughput-inputs/OperatorGraphs/bert_l-6_inference.json",
    "throughput-inputs/OperatorGraphs/bert_l-6_training.json",
    "throughput-inputs/OperatorGraphs/resnet50_inference.json",
    "throughput-inputs/OperatorGraphs/resnet50_training.json",
};

static hsdag_graph *load_tw(const char *rel)
{
    char path[512];
    snprintf(path, sizeof path, DATA "%s", rel);
    char *buf;
    size_t len;
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    if (hsdag_read_file(&buf, &len, path, 0, &e) == 0) {
        hsdag_tarnawski_read(&g, buf, len, path, &e);
        hsdag_free(buf);
    }
    if (!g) fprintf(stderr, "%s\n", e.msg);
    return g;
}

static void test_tarnawski_roundtrips(void)
{
    for (size_t i = 0; i < sizeof tw_files / sizeof tw_files[0]; i++) {
        hsdag_graph *g = load_tw(tw_files[i]);
        CHECK(g != NULL);
        if (!g) continue;
        hsdag_graph *g2 = roundtrip(g, tw_files[i]);
        if (g2) CHECK_EQ_INT(g2->meta.format, HSDAG_FMT_TARNAWSKI); /* the source format survives */
        hsdag_graph_free(g2);
        hsdag_graph_free(g);
    }
}

/* A graph exercising every field: shapes of every rank kind, all dtypes, flags, explicit opclass,
 * renamed nodes, strings needing escapes, numbers needing 17 digits, subnormals, -0, NaN. */
static hsdag_graph *build_odd(void)
{
    hsdag_gb *b = hsdag_gb_create();
    const char *names[] = {"in\"put\\",
                           "conv 1\n\tx",
                           "\xc3\xbcn\xc3\xaf"
                           "c\xc3\xb6"
                           "d\xc3\xa9 \xe2\x82\xac",
                           "",
                           "dup",
                           "dup",
                           "ctl\x01\x1f\xff",
                           "tail\\"};
    const char *ops[] = {"Parameter", "Conv", "Relu", "", "MatMul", "Add", "WeirdOp", "Result"};
    int32_t v[8];
    for (int i = 0; i < 8; i++) v[i] = hsdag_gb_add_node(b, names[i], ops[i]);
    hsdag_gb_set_opclass(b, v[1], HSDAG_OP_CONV);
    hsdag_gb_set_opclass(b, v[4], HSDAG_OP_MATMUL);
    hsdag_gb_set_opclass(b, v[0], HSDAG_OP_BOOKKEEPING);
    hsdag_gb_set_flags(b, v[0], HSDAG_NF_INPUT);
    hsdag_gb_set_flags(b, v[7], HSDAG_NF_OUTPUT | HSDAG_NF_BACKWARD | HSDAG_NF_NO_ACCEL);
    hsdag_gb_set_flops(b, v[1], 0.1 + 0.2);
    hsdag_gb_set_flops(b, v[4], 9.99999999999999e23); /* just below HSDAG_MAX_FLOPS */
    hsdag_gb_set_flops(b, v[5], 5e-324);
    hsdag_gb_set_param_bytes(b, v[1], 123456789012345678.0);
    hsdag_gb_set_param_bytes(b, v[4], 9007199254740993.0); /* rounds to 2^53 + 2 */
    hsdag_gb_set_mem_bytes(b, v[2], -0.0);
    hsdag_gb_set_mem_bytes(b, v[3], 1.0 / 3.0);
    hsdag_gb_set_color(b, v[2], 7);
    hsdag_gb_set_color(b, v[3], 7);
    hsdag_gb_set_file_id(b, v[5], -12);
    hsdag_gb_set_file_id(b, v[6], 2147483647);
    hsdag_gb_set_cost(b, v[1], HSDAG_COST_CPU, 2.5);
    hsdag_gb_set_cost(b, v[1], HSDAG_COST_BWD, 1e-7);
    hsdag_gb_set_cost(b, v[2], HSDAG_COST_ACCEL, 0.3);
    int64_t d4[4] = {1, 3, 224, 224}, big[2] = {1000000, 1000000}, dyn[3] = {-1, 128, -1};
    hsdag_gb_add_output(b, v[0], HSDAG_DT_F32, 4, d4);
    hsdag_gb_add_output(b, v[1], HSDAG_DT_F16, 4, d4);
    hsdag_gb_add_output(b, v[1], HSDAG_DT_U1, 2, big);
    hsdag_gb_add_output(b, v[2], HSDAG_DT_I4, 0, NULL);       /* scalar */
    hsdag_gb_add_output(b, v[3], HSDAG_DT_UNKNOWN, -1, NULL); /* unknown rank */
    hsdag_gb_add_output(b, v[4], HSDAG_DT_BF16, 3, dyn);
    for (int t = HSDAG_DT_F64; t < HSDAG_DT_COUNT_; t++)
        hsdag_gb_add_output(b, v[5], (hsdag_dtype)t, 1, &d4[1]);
    hsdag_gb_add_edge_ex(b, v[0], v[1], 602112, 0.25);
    hsdag_gb_add_edge(b, v[1], v[2], 1e12);
    hsdag_gb_add_edge(b, v[1], v[3], 0);
    hsdag_gb_add_edge_ex(b, v[2], v[4], 3.0000000000000004, 1.0 / 7.0);
    hsdag_gb_add_edge(b, v[3], v[4], 17);
    hsdag_gb_add_edge(b, v[4], v[5], 17);
    hsdag_gb_add_edge(b, v[0], v[6], 1);
    hsdag_gb_add_edge(b, v[6], v[7], 2);
    hsdag_gb_add_edge(b, v[5], v[7], 3);
    hsdag_graph_meta m = {.format = HSDAG_FMT_ONNX,
                          .file_nodes = 9,
                          .file_edges = 12,
                          .ir_version = 8,
                          .opset = 17,
                          .max_accels = 4,
                          .max_cpus = 2,
                          .max_size_per_accel = 16e9,
                          .name = "odd \"model\""};
    hsdag_gb_set_meta(b, &m);
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    if (hsdag_gb_finish(b, &g, &e) < 0) fprintf(stderr, "build_odd: %s\n", e.msg);
    hsdag_gb_free(b);
    return g;
}

/* ---- every other bundled importer's files round-trip too ---- */
typedef int (*reader_fn)(hsdag_graph **, const void *, size_t, const char *, hsdag_err *);

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Round-trips every file in dir ending in ext through reader (and, for PipeDream, its mirrored job
 * graph). Returns the number of files read; every file in these folders must be accepted. */
static int roundtrip_dir(const char *dir, const char *ext, reader_fn reader, int mirror)
{
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d) return 0;
    char *names[256];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < 256) {
        size_t l = strlen(de->d_name), el = strlen(ext);
        if (l > el && strcmp(de->d_name + l - el, ext) == 0) names[n++] = strdup(de->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, name_cmp);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        char path[600], *buf;
        size_t len;
        hsdag_err e = {0};
        hsdag_graph *g = NULL;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (hsdag_read_file(&buf, &len, path, 0, &e) == 0) {
            if (reader(&g, buf, len, path, &e) < 0) fprintf(stderr, "%s\n", e.msg);
            hsdag_free(buf);
        }
        CHECK(g != NULL);
        if (g) {
            ok++;
            hsdag_graph_free(roundtrip(g, path));
            hsdag_graph *m = NULL;
            if (mirror && hsdag_pipedream_mirror(&m, g, &e) == 0)
                hsdag_graph_free(roundtrip(m, path));
            else if (mirror)
                CHECK(0);
            hsdag_graph_free(m);
            hsdag_graph_free(g);
        }
        free(names[i]);
    }
    return ok;
}

static void test_other_formats_roundtrip(void)
{
    CHECK_EQ_INT(roundtrip_dir("tests/data/onnx", ".onnx", hsdag_onnx_read, 0), 9);
    CHECK_EQ_INT(roundtrip_dir("tests/data/onnx-light", ".onnx", hsdag_onnx_read, 0), 9);
    CHECK_EQ_INT(roundtrip_dir("tests/data/openvino", ".xml", hsdag_ovxml_read, 0), 2);
    CHECK_EQ_INT(roundtrip_dir("tests/data/pipedream", ".txt", hsdag_pipedream_read, 1), 16);
    const char *nncf[] = {"onnx", "onnx_quantized", "openvino", "torch_fx", "torch_hook"};
    int dots = 0;
    for (size_t i = 0; i < sizeof nncf / sizeof nncf[0]; i++) {
        char dir[128];
        snprintf(dir, sizeof dir, "tests/data/nncf/%s", nncf[i]);
        dots += roundtrip_dir(dir, ".dot", hsdag_dot_read, 0);
    }
    CHECK_EQ_INT(dots, 7);
}

static void test_odd_graph(void)
{
    hsdag_graph *g = build_odd();
    CHECK(g != NULL);
    if (!g) return;
    int renamed = 0;
    for (int32_t v = 0; v < g->n_nodes; v++) renamed += (g->flags[v] & HSDAG_NF_RENAMED) != 0;
    CHECK_EQ_INT(renamed, 2); /* the empty name and the second "dup" */
    hsdag_graph *g2 = roundtrip(g, "odd");
    if (g2) {
        int32_t v = hsdag_graph_find(g2, "conv 1\n\tx");
        CHECK(v >= 0);
        if (v >= 0) CHECK_NEAR(g2->flops[v], 0.1 + 0.2, 0);
        CHECK_STR(g2->meta.name, "odd \"model\"");
        CHECK_EQ_INT(g2->meta.opset, 17);
    }
    hsdag_graph_free(g2);
    /* the text itself: NaN as null, unknown rank as null, scalar as [] */
    hsdag_buf w = {0};
    hsdag_json_write(&w, g);
    CHECK(strstr(w.data, "\"format\":\"hsdag-graph\",\"version\":1") != NULL);
    CHECK(strstr(w.data, "\"shape\":null") != NULL);
    CHECK(strstr(w.data, "\"shape\":[]") != NULL);
    CHECK(strstr(w.data, "\"flops\":0.30000000000000004") != NULL);
    CHECK(strstr(w.data, "\"flops\":4.94065645841247e-324") != NULL);
    CHECK(strstr(w.data, "\"cost_ms\":{\"cpu\":null,\"accel\":0.3,\"bwd\":null}") != NULL);
    CHECK(strstr(w.data, "\"mem_bytes\":0,") != NULL); /* -0 written as 0 */
    CHECK(strstr(w.data, "\"output\",\"backward\",\"no_accel\"]") != NULL);
    hsdag_buf_free(&w);
    hsdag_graph_free(g);
}

/* Random DAGs with random bit patterns for every double, from subnormals up to 2^39 (below every limit of
 * graph.h: 1e12 ms, 1e18 B, 1e24 FLOP). */
static double rand_double(hsdag_rng *r)
{
    switch (hsdag_rng_below(r, 5)) {
    case 0:
        return NAN;
    case 1:
        return (double)hsdag_rng_below(r, 1000000);
    case 2:
        return hsdag_rng_uniform(r);
    default: {
        double x = ldexp(1.0 + hsdag_rng_uniform(r), (int)hsdag_rng_below(r, 1039) - 1000);
        return isfinite(x) ? x : 1.0;
    }
    }
}

static void test_random_graphs(void)
{
    hsdag_rng r;
    hsdag_rng_seed(&r, 20241129);
    for (int it = 0; it < 30; it++) {
        hsdag_gb *b = hsdag_gb_create();
        int n = 1 + (int)hsdag_rng_below(&r, 60);
        for (int i = 0; i < n; i++) {
            char name[32], op[16];
            snprintf(name, sizeof name, "n%u", (unsigned)hsdag_rng_below(&r, 40)); /* some duplicates */
            snprintf(op, sizeof op, "op%u", (unsigned)hsdag_rng_below(&r, 5));
            int32_t v = hsdag_gb_add_node(b, name, hsdag_rng_below(&r, 2) ? op : "Conv");
            hsdag_gb_set_flops(
                b, v, hsdag_rng_below(&r, 2) ? (double)hsdag_rng_below(&r, 1u << 30) : rand_double(&r));
            double pb = rand_double(&r), mb = rand_double(&r);
            hsdag_gb_set_param_bytes(b, v, isnan(pb) ? 0 : pb);
            hsdag_gb_set_mem_bytes(b, v, mb);
            for (int k = 0; k < HSDAG_COST_KINDS_; k++)
                hsdag_gb_set_cost(b, v, (hsdag_costkind)k, rand_double(&r));
            hsdag_gb_set_color(b, v, (int32_t)hsdag_rng_below(&r, 5) - 1);
            hsdag_gb_set_flags(b, v, hsdag_rng_below(&r, 128));
            int nout = (int)hsdag_rng_below(&r, 3);
            for (int o = 0; o < nout; o++) {
                int rank = (int)hsdag_rng_below(&r, 6) - 1;
                int64_t dims[5];
                for (int d = 0; d < rank; d++) dims[d] = (int64_t)hsdag_rng_below(&r, 300) - 1;
                hsdag_gb_add_output(b, v, (hsdag_dtype)hsdag_rng_below(&r, HSDAG_DT_COUNT_), rank, dims);
            }
        }
        int m = (int)hsdag_rng_below(&r, (uint32_t)(3 * n + 1));
        for (int k = 0; k < m && n > 1; k++) {
            int32_t u = (int32_t)hsdag_rng_below(&r, (uint32_t)n),
                    w = (int32_t)hsdag_rng_below(&r, (uint32_t)n);
            if (u == w) continue;
            if (u > w) {
                int32_t t = u;
                u = w;
                w = t;
            } /* acyclic by construction */
            double bytes = rand_double(&r);
            hsdag_gb_add_edge_ex(b, u, w, isnan(bytes) ? 0 : bytes, rand_double(&r));
        }
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        CHECK(hsdag_gb_finish(b, &g, &e) == 0);
        hsdag_gb_free(b);
        if (!g) continue;
        hsdag_graph_free(roundtrip(g, "random"));
        hsdag_graph_free(g);
    }
}

static void test_minimal_and_defaults(void)
{
    const char *t = "{\"format\":\"hsdag-graph\",\"version\":1,\"nodes\":[{\"name\":\"a\",\"op\":\"Conv\"},"
                    "{\"name\":\"b\",\"op\":\"Relu\",\"outputs\":[{\"dtype\":\"f32\",\"shape\":[2,3]}]}],"
                    "\"edges\":[{\"src\":1,\"dst\":0,\"bytes\":24}]}";
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_json_read(&g, t, strlen(t), "min.json", &e), 0);
    if (!g) return;
    /* not topological in the file: the builder reorders (b first) */
    CHECK_STR(g->name[0], "b");
    CHECK_STR(g->name[1], "a");
    CHECK_EQ_INT(g->file_id[0], 1); /* default file_id = index in the file */
    CHECK_NEAR(g->out_bytes[0], 24, 0);
    CHECK(isnan(g->mem_bytes[1]));
    CHECK_EQ_INT(g->color[1], -1);
    CHECK_EQ_INT(g->meta.format, HSDAG_FMT_JSON);
    CHECK_EQ_INT(g->meta.max_accels, -1);
    hsdag_graph_free(roundtrip(g, "min"));
    hsdag_graph_free(g);
}

#define HJ_HEAD "{\"format\":\"hsdag-graph\",\"version\":1,"
static void test_bad_inputs(void)
{
    static const struct {
        const char *text, *msg;
        int rc;
    } bad[] = {
        {"{\"format\":\"onnx\",\"version\":1,\"nodes\":[],\"edges\":[]}",
         "h.json: format is 'onnx', not 'hsdag-graph'", HSDAG_EFORMAT},
        {"{\"version\":1}", "h.json: format is missing", HSDAG_EPARSE},
        {"{\"format\":\"hsdag-graph\",\"version\":2,\"nodes\":[],\"edges\":[]}",
         "h.json: version 2 is not supported", HSDAG_EUNSUPPORTED},
        {HJ_HEAD "\"nodes\":[],\"edges\":[]", "h.json: JSON text ends early", HSDAG_EPARSE},
        {HJ_HEAD "\"nodes\":[{\"op\":\"x\"}],\"edges\":[]}", "h.json: nodes[0]: name is missing",
         HSDAG_EPARSE},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\",\"flops\":-1}],\"edges\":[]}",
         "h.json: nodes[0] 'a': flops is negative", HSDAG_EPARSE},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\",\"flops\":NaN}],\"edges\":[]}",
         "h.json: nodes[0] 'a': flops is not a finite number", HSDAG_EPARSE},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\",\"color\":null}],\"edges\":[]}",
         "h.json: nodes[0] 'a': color is null", HSDAG_EPARSE},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\",\"opclass\":\"magic\"}],\"edges\":[]}",
         "h.json: nodes[0] 'a': opclass 'magic' is not a known class", HSDAG_EPARSE},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\",\"flags\":[\"fast\"]}],\"edges\":[]}",
         "h.json: nodes[0] 'a': flags[0] is not a known flag name", HSDAG_EPARSE},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\",\"outputs\":[{\"dtype\":\"f99\",\"shape\":[1]}]}],"
                 "\"edges\":[]}",
         "h.json: nodes[0] 'a': outputs[0]: dtype 'f99' is not a known type", HSDAG_EPARSE},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\",\"outputs\":[{\"dtype\":\"f32\",\"shape\":[1,-2]}]}"
                 "],\"edges\":[]}",
         "h.json: nodes[0] 'a': outputs[0]: shape[1] is below -1", HSDAG_EPARSE},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\",\"outputs\":[{\"dtype\":\"f32\",\"shape\":[1,2,3,4,"
                 "5,6,7,8,9,1,2,3,4,5,6,7,8]}]}],\"edges\":[]}",
         "h.json: nodes[0] 'a': outputs[0]: rank 17 exceeds 16", HSDAG_ELIMIT},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\",\"outputs\":[{\"dtype\":\"f32\"}]}],\"edges\":[]}",
         "h.json: nodes[0] 'a': outputs[0]: shape is missing", HSDAG_EPARSE},
        {HJ_HEAD "\"meta\":{\"source_format\":\"excel\"},\"nodes\":[],\"edges\":[]}",
         "h.json: meta: source_format 'excel' is not a known format", HSDAG_EPARSE},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\"}],\"edges\":[{\"src\":0,\"dst\":5}]}",
         "h.json: edges[0] (0 -> 5): node index out of range (1 nodes)", HSDAG_EDANGLING},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\"},{\"name\":\"b\",\"op\":\"x\"}],"
                 "\"edges\":[{\"src\":0,\"dst\":1},{\"src\":0,\"dst\":1}]}",
         "h.json: edges[1] (0 -> 1): duplicate edge (also edges[0])", HSDAG_EPARSE},
        /* two duplicates: the first in file order is named (as the Tarnawski reader does) */
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\"},{\"name\":\"b\",\"op\":\"x\"},{\"name\":\"c\","
                 "\"op\":\"x\"}],"
                 "\"edges\":[{\"src\":0,\"dst\":1},{\"src\":1,\"dst\":2},{\"src\":1,\"dst\":2},{\"src\":0,"
                 "\"dst\":1}]}",
         "h.json: edges[2] (1 -> 2): duplicate edge (also edges[1])", HSDAG_EPARSE},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\"},{\"name\":\"b\",\"op\":\"x\"}],"
                 "\"edges\":[{\"src\":0,\"dst\":1},{\"src\":1,\"dst\":0}]}",
         "h.json: graph has a cycle through node", HSDAG_ECYCLE},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\"}],\"edges\":[{\"src\":0,\"dst\":0}]}",
         "h.json: edges[0] (0 -> 0): edge from a node to itself", HSDAG_ECYCLE},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\\nb\",\"op\":\"x\",\"flops\":-2}],\"edges\":[]}",
         "h.json: nodes[0] 'a", HSDAG_EPARSE}, /* messages stay one line */
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\\nb\",\"op\":\"x\"},{\"name\":\"c\",\"op\":\"x\"}],"
                 "\"edges\":[{\"src\":0,\"dst\":1},{\"src\":1,\"dst\":0}]}",
         "h.json: graph has a cycle through node '", HSDAG_ECYCLE},
        {HJ_HEAD "\"nodes\":[{\"name\":\"a\",\"op\":\"x\",\"file_id\":3000000000}],\"edges\":[]}",
         "h.json: nodes[0] 'a': file_id is too large", HSDAG_ELIMIT},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        int rc = hsdag_json_read(&g, bad[i].text, strlen(bad[i].text), "h.json", &e);
        CHECK_EQ_INT(rc, bad[i].rc);
        CHECK_EQ_INT(hsdag_json_read_stream(&g, bad[i].text, strlen(bad[i].text)), HSDAG_JSTREAM_STOP);
        CHECK(g == NULL);
        int ok = strncmp(e.msg, bad[i].msg, strlen(bad[i].msg)) == 0 && !strchr(e.msg, '\n');
        if (!ok) fprintf(stderr, "bad[%zu]: got '%s'\n", i, e.msg);
        CHECK(ok);
        hsdag_graph_free(g);
    }
}

/* ---- DOT: run Graphviz on our output ---- */
static int count_str(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
    return n;
}

/* Writes dot text to a temp file, runs `dot -Tsvg`, returns the number of drawn nodes or -1. */
static int run_dot(const hsdag_buf *dot, const char *dir)
{
    char in[512], out[512], cmd[1200];
    snprintf(in, sizeof in, "%s/g.dot", dir);
    snprintf(out, sizeof out, "%s/g.svg", dir);
    hsdag_err e = {0};
    if (hsdag_write_file_atomic(in, dot->data, dot->len, &e) < 0) return -1;
    snprintf(cmd, sizeof cmd, "dot -Tsvg '%s' -o '%s' 2>'%s/err.txt'", in, out, dir);
    if (system(cmd) != 0) {
        snprintf(cmd, sizeof cmd, "cat '%s/err.txt' >&2", dir);
        if (system(cmd) != 0) fprintf(stderr, "dot failed\n");
        return -1;
    }
    char *svg;
    size_t len;
    if (hsdag_read_file(&svg, &len, out, 0, &e) < 0) return -1;
    int n = strstr(svg, "<svg") ? count_str(svg, "class=\"node\"") : -1;
    hsdag_free(svg);
    return n;
}

static void test_dot(void)
{
    char dir[] = "/tmp/hsdag_test_dot_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    /* the odd graph, no devices: every node drawn, nasty names survive */
    hsdag_graph *g = build_odd();
    if (g) {
        hsdag_buf d = {0};
        CHECK(hsdag_dot_write(&d, g, NULL, NULL, 0) == 0);
        CHECK(strstr(d.data, "n0 [label=\"in\\\"put\\\\\\nParameter\"") != NULL);
        CHECK(strstr(d.data, "[label=\"931 GiB\"]") != NULL); /* 1e12 bytes */
        CHECK(strstr(d.data, "[label=\"588 KiB\"]") != NULL); /* 602112 bytes */
        CHECK_EQ_INT(run_dot(&d, dir), g->n_nodes);
        hsdag_buf_free(&d);
        /* invalid UTF-8 in a name is replaced, Graphviz still accepts it */
        hsdag_gb *b = hsdag_gb_create();
        hsdag_gb_add_node(b, "bad\xff\xfe utf8 \xe2\x82", "Op\"x");
        hsdag_graph *g2 = NULL;
        CHECK(hsdag_gb_finish(b, &g2, NULL) == 0);
        hsdag_gb_free(b);
        if (g2) {
            hsdag_buf d2 = {0};
            CHECK(hsdag_dot_write(&d2, g2, NULL, NULL, 0) == 0);
            CHECK(strstr(d2.data, "bad?? utf8 ??\\nOp\\\"x") != NULL);
            CHECK_EQ_INT(run_dot(&d2, dir), 1);
            hsdag_buf_free(&d2);
        }
        hsdag_graph_free(g2);
        hsdag_graph_free(g);
    }
    /* a real workload coloured by the human expert's split, with the legend */
    g = load_tw("throughput-inputs/LayerGraphs/bert24_inference.json");
    if (g) {
        char *buf;
        size_t len;
        hsdag_err e = {0};
        int32_t *dev = hsdag_malloc((size_t)g->n_nodes * sizeof *dev), nc = 0, na = 0;
        CHECK(hsdag_read_file(&buf, &len, DATA "human-experts/bert24_inference_expert.json", 0, &e) == 0);
        CHECK(hsdag_split_read(dev, &nc, &na, buf, len, "expert", g, &e) == 0);
        const char *names[] = {"GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "GPU5", "CPU"};
        hsdag_buf d = {0};
        CHECK(hsdag_dot_write(&d, g, dev, names, na + nc) == 0);
        CHECK(strstr(d.data, "legend6 [label=\"CPU\"") != NULL);
        CHECK_EQ_INT(count_str(d.data, "fillcolor=\"#8dd3c7\""),
                     8 + 1); /* GPU0's 8 nodes + its legend entry */
        CHECK_EQ_INT(run_dot(&d, dir), g->n_nodes + na + nc);
        dev[0] = -1; /* an unplaced node adds a legend entry */
        hsdag_buf_free(&d);
        CHECK(hsdag_dot_write(&d, g, dev, NULL, na + nc) == 0);
        CHECK(strstr(d.data, "legend_unplaced") != NULL);
        CHECK(strstr(d.data, "legend0 [label=\"device 0\"") != NULL);
        CHECK_EQ_INT(run_dot(&d, dir), g->n_nodes + na + nc + 1);
        hsdag_buf_free(&d);
        hsdag_free(buf);
        hsdag_free(dev);
        hsdag_graph_free(g);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* Allocation-failure injection through the hsdag JSON reader and writer, the split reader and writer
 * and the file loader: every failure point gives ENOMEM with a one-line message naming the input (or
 * succeeds), never a crash, another status or a leak (ASan run). Loops run until an attempt succeeds,
 * so every allocation point of the call is hit once. */
static void test_alloc_failures(void)
{
    hsdag_graph *g = build_odd();
    CHECK(g != NULL);
    if (!g) return;
    hsdag_buf text = {0};
    CHECK(hsdag_json_write(&text, g) == 0);
    oom_sweep s = oom_sweep_run(hsdag_json_read, text.data, text.len, "odd.json", 100000, 1);
    CHECK(s.ok);
    CHECK(s.oom - s.oom_bad_msg > 10);
    CHECK_EQ_INT(s.other + s.oom_bad_msg, 0);

    /* writer: the buffer's oom flag becomes ENOMEM */
    int ok = 0, bad = 0, oom = 0;
    for (long n = 1; n < 1000 && !ok; n++) {
        hsdag_buf w = {0};
        hsdag_alloc_fail_after(n);
        int rc = hsdag_json_write(&w, g);
        hsdag_alloc_fail_after(0);
        if (rc == 0)
            ok = (w.len == text.len && memcmp(w.data, text.data, w.len) == 0), bad += !ok;
        else if (rc == HSDAG_ENOMEM)
            oom++;
        else
            bad++;
        hsdag_buf_free(&w);
    }
    CHECK(ok);
    CHECK(oom > 0);
    CHECK_EQ_INT(bad, 0);

    /* split reader and writer on the odd graph (file ids 0..4, -12, 2147483647, 7) */
    static const char split[] = "{\"cpus\":[{\"nodes\":[0,1,2]},{\"nodes\":[-12]}],"
                                "\"fpgas\":[{\"nodes\":[3,4,2147483647,7]}]}";
    int32_t dev[8], nc = 0, na = 0;
    hsdag_err e0 = {0};
    int base = hsdag_split_read(dev, &nc, &na, split, sizeof split - 1, "s.json", g, &e0);
    if (base < 0) fprintf(stderr, "split: %s\n", e0.msg);
    CHECK_EQ_INT(base, 0);
    ok = bad = oom = 0;
    for (long n = 1; n < 1000 && !ok && base == 0; n++) {
        hsdag_err e = {0};
        hsdag_buf w = {0};
        hsdag_alloc_fail_after(n);
        int rc = hsdag_split_read(dev, &nc, &na, split, sizeof split - 1, "s.json", g, &e);
        if (rc == 0) rc = hsdag_split_write(&w, g, dev, na, nc, &e);
        hsdag_alloc_fail_after(0);
        if (rc == 0)
            ok = 1;
        else if (rc == HSDAG_ENOMEM && strstr(e.msg, "out of memory"))
            oom++;
        else
            bad++;
        hsdag_buf_free(&w);
    }
    CHECK(ok);
    CHECK(oom > 0);
    CHECK_EQ_INT(bad, 0);

    /* the file loader (read buffer, detection, reader) */
    char path[] = "/tmp/hsdag_test_json_oomXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(write(fd, text.data, text.len) == (ssize_t)text.len);
        close(fd);
        ok = bad = oom = 0;
        for (long n = 1; n < 100000 && !ok; n++) {
            hsdag_graph *r = NULL;
            hsdag_err e = {0};
            hsdag_alloc_fail_after(n);
            int rc = hsdag_load_file(&r, path, HSDAG_FMT_UNKNOWN, &e);
            hsdag_alloc_fail_after(0);
            if (rc == 0)
                ok = r && r->n_nodes == g->n_nodes;
            else if (rc == HSDAG_ENOMEM && r == NULL && strstr(e.msg, path) == e.msg)
                oom++;
            else
                bad++;
            hsdag_graph_free(r);
        }
        unlink(path);
        CHECK(ok);
        CHECK(oom > 10);
        CHECK_EQ_INT(bad, 0);
    }
    hsdag_buf_free(&text);
    hsdag_graph_free(g);
}

/* hsdag_load on an absent or empty buffer, detected or forced to each format: a clean error naming the
 * input (NULL + 0 in detection was undefined behaviour, an abort under UBSan) */
static void test_load_empty(void)
{
    for (int f = HSDAG_FMT_UNKNOWN; f <= HSDAG_FMT_DOT; f++) {
        for (int nul = 0; nul < 2; nul++) {
            hsdag_graph *g = NULL;
            hsdag_err e = {0};
            int rc = hsdag_load(&g, nul ? NULL : "", 0, (hsdag_format)f, "empty.in", &e);
            CHECK(rc < 0 && g == NULL);
            CHECK(strncmp(e.msg, "empty.in: ", 10) == 0);
        }
    }
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_load(&g, NULL, 5, HSDAG_FMT_UNKNOWN, "x", &e), HSDAG_EINVAL);
    CHECK_EQ_INT(hsdag_detect(NULL, 0, "a.dot"), HSDAG_FMT_DOT);
}

/* ---- the streaming reader against the tree reader ---- */

/* Every file in the directories that hold hsdag JSON (tests/data/legacy, the fuzz corpora of the JSON and
 * load targets), graph or not: the two readers agree. */
static void test_stream_bundled(void)
{
    static const char *const dirs[] = {"tests/data/legacy", "fuzz/corpus/json", "fuzz/corpus/load"};
    int taken = 0, files = 0;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        DIR *d = opendir(dirs[i]);
        CHECK(d != NULL);
        struct dirent *de;
        while (d && (de = readdir(d)) != NULL) {
            if (de->d_name[0] == '.') continue;
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dirs[i], de->d_name);
            char *buf;
            size_t len;
            hsdag_err e = {0};
            if (hsdag_read_file(&buf, &len, path, 0, &e) != 0) continue;
            files++;
            taken += stream_vs_tree(buf, len, path, 0);
            hsdag_free(buf);
        }
        if (d) closedir(d);
    }
    CHECK(files >= 6);
    CHECK(taken >= 4); /* shapes_with_split.json carries a second document: not a graph file */
    /* generated graphs of both kinds */
    hsdag_gen_transformer_config tc = hsdag_gen_transformer_config_default();
    tc.layers = 3, tc.kv_heads = 4, tc.decode = 1, tc.tied = 1;
    hsdag_gen_random_config rc = hsdag_gen_random_config_default();
    hsdag_graph *g[2] = {NULL, NULL};
    hsdag_err e = {0};
    CHECK(hsdag_gen_transformer(&g[0], &tc, &e) == 0);
    CHECK(hsdag_gen_random(&g[1], &rc, &e) == 0);
    for (int i = 0; i < 2; i++) {
        if (g[i]) hsdag_graph_free(roundtrip(g[i], i ? "random" : "transformer"));
        hsdag_graph_free(g[i]);
    }
}

/* A file large enough for hsdag_load_file to stream it (4 MiB and up): the same graph as hsdag_load on its bytes,
 * and a damaged copy still gets the whole-file reader's message. */
static void test_stream_file(void)
{
    hsdag_gen_random_config rc = hsdag_gen_random_config_default();
    rc.nodes = 20000;
    hsdag_graph *g = NULL, *gf = NULL, *gb = NULL;
    hsdag_err e = {0};
    hsdag_buf w = {0};
    CHECK(hsdag_gen_random(&g, &rc, &e) == 0);
    CHECK(g && hsdag_json_write(&w, g) == 0);
    CHECK(w.len >= (size_t)4 << 20);
    char path[] = "/tmp/hsdag_test_json_bigXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    for (int pass = 0; pass < 2 && fd >= 0 && w.data; pass++) {
        if (pass == 1) memcpy(w.data + w.len / 2, "}}}", 3); /* a syntax error half-way */
        FILE *f = fopen(path, "wb");
        CHECK(f && fwrite(w.data, 1, w.len, f) == w.len);
        if (f) fclose(f);
        int rf = hsdag_load_file(&gf, path, HSDAG_FMT_UNKNOWN, &e);
        char msg[sizeof e.msg];
        memcpy(msg, e.msg, sizeof msg);
        int rb = hsdag_load(&gb, w.data, w.len, HSDAG_FMT_UNKNOWN, path, &e);
        CHECK_EQ_INT(rf, rb);
        CHECK_EQ_INT(rf == 0, pass == 0);
        if (rf == 0 && gf && gb) CHECK(graph_eq(gf, gb));
        if (rf != 0) CHECK(strcmp(msg, e.msg) == 0);
        hsdag_graph_free(gf);
        hsdag_graph_free(gb);
        gf = gb = NULL;
    }
    if (fd >= 0) close(fd), unlink(path);
    hsdag_free(w.data);
    hsdag_graph_free(g);
}

/* Legal layouts hsdag never writes: keys in any order, blanks everywhere, escapes, numbers as doubles,
 * unknown keys with nested values, unsorted edges; and texts the streaming reader leaves to json-c. */
static void test_stream_layouts(void)
{
    static const char *const take[] = {
        " {\"nodes\" :[] , \"version\":1.0,\n\"edges\":[],\"format\":\"hsdag-graph\"}\r\n",
        "{\"x\":{\"a\":[1,{\"b\":null}],\"c\":true},\"format\":\"hsdag-graph\",\"version\":1,\"nodes\":[{"
        "\"op\":"
        "\"R\\u00e9lu\",\"name\":\"a\\\"\\/"
        "\\n\",\"color\":2.0,\"flops\":1.5e3,\"cost_ms\":{\"cpu\":null,\"gpu\":7},"
        "\"outputs\":[{\"shape\":null,\"dtype\":\"float16\"},{\"dtype\":\"unknown\",\"shape\":[]}]},"
        "{\"name\":\"b\",\"op\":\"x\",\"flags\":[\"input\",4096]},{\"name\":\"c\",\"op\":\"y\"}],"
        "\"edges\":[{\"src\":1,\"dst\":2,\"bytes\":null},{\"dst\":1,\"src\":0,\"cost_ms\":-0.0}],"
        "\"meta\":{\"name\":\"m\",\"opset\":-5,\"max_size_per_accel\":null}}",
    };
    static const char *const leave[] = {
        "{\"format\":\"hsdag-graph\",\"format\":\"hsdag-graph\",\"version\":1,\"nodes\":[],\"edges\":[]}",
        "{\"format\":\"hsdag-graph\",\"version\":1,\"edges\":[],\"nodes\":[]}",
        "{\"format\":\"hsdag-graph\",\"version\":1,\"nodes\":[{\"name\":\"\\ud83d\\ude00\",\"op\":\"x\"}],"
        "\"edges\":[]}",
        "{\"format\":\"hsdag-graph\",\"version\":1,\"nodes\":[{\"name\":\"a\tb\",\"op\":\"x\"}],\"edges\":[]"
        "}",
        "{\"format\":\"hsdag-graph\",\"version\":1,\"nodes\":[{\"name\":\"a\",\"op\":\"x\",\"flops\":1.}],"
        "\"edges\":[]}",
        "{\"format\":\"hsdag-graph\",\"version\":1,\"nodes\":[],\"edges\":[],\"x\":[[[[[[[[[[[[[]]]]]]]]]]]]]"
        "}",
    };
    for (size_t i = 0; i < sizeof take / sizeof take[0]; i++)
        CHECK(stream_vs_tree(take[i], strlen(take[i]), "take", 1));
    for (size_t i = 0; i < sizeof leave / sizeof leave[0]; i++) {
        hsdag_graph *g = NULL;
        CHECK_EQ_INT(hsdag_json_read_stream(&g, leave[i], strlen(leave[i])), HSDAG_JSTREAM_STOP);
        stream_vs_tree(leave[i], strlen(leave[i]), "leave", 0);
        hsdag_err e = {0};
        CHECK_EQ_INT(hsdag_json_read(&g, leave[i], strlen(leave[i]), "leave", &e), 0); /* json-c takes them */
        hsdag_graph_free(g);
    }
}

/* Seeded mutations of small texts (byte changes, insertions of JSON punctuation, deletions, swapped spans):
 * whatever the streaming reader takes, the tree reader takes as the same graph. */
static void test_stream_mutations(void)
{
    static const char alphabet[] = "{}[]\",:0123456789-.eE+ \n\\utfnrlsa\x00\x7f\xc3\xa9";
    hsdag_graph *g = build_odd();
    hsdag_buf base = {0};
    CHECK(g && hsdag_json_write(&base, g) == 0);
    hsdag_graph_free(g);
    if (!base.data) return;
    hsdag_rng rng;
    hsdag_rng_seed(&rng, 15);
    char *t = hsdag_malloc(base.len + 64);
    int taken = 0, n = getenv("MUT_N") ? atoi(getenv("MUT_N")) : 3000;
    for (int it = 0; it < n && t; it++) {
        size_t len = base.len;
        memcpy(t, base.data, len);
        int edits = 1 + (int)hsdag_rng_below(&rng, 3);
        for (int k = 0; k < edits && len > 2; k++) {
            size_t at = hsdag_rng_below(&rng, (uint32_t)len);
            char c = alphabet[hsdag_rng_below(&rng, sizeof alphabet - 1)];
            switch (hsdag_rng_below(&rng, 4)) {
            case 0:
                t[at] = c;
                break;
            case 1: /* insert */
                memmove(t + at + 1, t + at, len - at);
                t[at] = c;
                len++;
                break;
            case 2: /* delete */
                memmove(t + at, t + at + 1, len - at - 1);
                len--;
                break;
            default: { /* copy a short span elsewhere (duplicated keys, values, elements) */
                size_t from = hsdag_rng_below(&rng, (uint32_t)len), w = 1 + hsdag_rng_below(&rng, 16);
                if (from + w > len) w = len - from;
                if (len + w > base.len + 60) break;
                char span[16];
                memcpy(span, t + from, w); /* before the shift: the span may straddle at */
                memmove(t + at + w, t + at, len - at);
                memcpy(t + at, span, w);
                len += w;
                break;
            }
            }
        }
        taken += stream_vs_tree(t, len, "mutation", 0);
    }
    CHECK(taken > 10); /* some mutations keep the text valid (digits in numbers, letters in names) */
    hsdag_free(t);
    hsdag_buf_free(&base);
}

int main(void)
{
    test_tarnawski_roundtrips();
    test_other_formats_roundtrip();
    test_odd_graph();
    test_random_graphs();
    test_minimal_and_defaults();
    test_bad_inputs();
    test_dot();
    test_alloc_failures();
    test_load_empty();
    test_stream_bundled();
    test_stream_file();
    test_stream_layouts();
    test_stream_mutations();
    return check_summary("test_json");
}
