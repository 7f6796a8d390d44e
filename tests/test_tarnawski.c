/* test_tarnawski.c - the Tarnawski JSON reader and split reader/writer on every bundled workload and
 * expert split (tests/data/tarnawski), plus a bad-input table and allocation-failure injection.
 * Not here: hsdag JSON round trips (test_json.c). Expected numbers were computed independently with
 * python3's json module from the same files (sums in file order). Entry points: main. */
#include "check.h"
#include "oom_sweep.h"
#include "hsdag/io.h"
#include "hsdag/split.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DATA "tests/data/tarnawski/"

typedef struct tw_expect {
    const char *path;
    int nodes, edges, max_fpgas, max_cpus;
    double max_size, sum_cpu, sum_fpga, sum_size, sum_edge_cost, sum_edge_size;
    int backward, no_color;
} tw_expect;

static const tw_expect expects[] = {
    {"latency-inputs/LayerGraphs/bert24_inference.json", 32, 55, 5, 8, 629145600, 924.06000000000006,
     92.406000000000006, 1824824592, 167.21726953983307, 359096352, 0, 0},
    {"latency-inputs/LayerGraphs/gnmt_inference.json", 96, 122, 6, 8, 629145600, 1825.6299999999999,
     182.56299999999996, 2466507520, 634.38510894775391, 1362331648, 0, 0},
    {"latency-inputs/LayerGraphs/inceptionv3_inference.json", 326, 363, 12, 8, 2147483648, 3109.690000000001,
     310.96899999999977, 16795418824, 9553.463701158762, 20515907080, 0, 0},
    {"latency-inputs/LayerGraphs/resnet50_inference.json", 177, 193, 14, 8, 2147483648, 2014.4999999999995,
     201.45000000000005, 19410956452, 10331.420900300145, 22186557444, 0, 0},
    {"latency-inputs/OperatorGraphs/bert_l-12_inference.json", 783, 843, 8, 8, 2147483648, 14783.939125050802,
     642.77996195873277, 9285684584, 5037.5973410555162, 10818157915, 0, 11},
    {"latency-inputs/OperatorGraphs/bert_l-3_inference.json", 235, 250, 4, 8, 629145600, 1135.1090857658728,
     49.352568946342295, 1512867688, 574.42179956706241, 1233561421, 0, 11},
    {"latency-inputs/OperatorGraphs/bert_l-6_inference.json", 418, 448, 6, 8, 629145600, 1781.6147060085964,
     77.461508956895557, 2230918504, 943.24270734796301, 2025598290, 0, 11},
    {"latency-inputs/OperatorGraphs/resnet50_inference.json", 604, 619, 9, 8, 629145600, 7478.0357576017741,
     325.13198946094656, 3513477024, 2621.4242881978862, 5629465793, 0, 0},
    {"throughput-inputs/LayerGraphs/bert24_inference.json", 32, 55, 6, 1, 17185374208, 924.06000000000006,
     92.406000000000006, 1824824592, 0.16721726953983307, 359096352, 0, 0},
    {"throughput-inputs/LayerGraphs/bert24_training.json", 64, 110, 6, 1, 17185374208, 2178.1300000000006,
     217.81299999999999, 3649649184, 0.33443453907966614, 943874128, 32, 0},
    {"throughput-inputs/LayerGraphs/gnmt_inference.json", 96, 122, 6, 1, 17185374208, 1825.6299999999999,
     182.56299999999996, 2466507520, 0.63438510894775391, 1362331648, 0, 0},
    {"throughput-inputs/LayerGraphs/gnmt_training.json", 192, 244, 6, 1, 17185374208, 5204.5300000000007,
     520.45299999999997, 4933015040, 1.2687702178955078, 3175059456, 96, 0},
    {"throughput-inputs/LayerGraphs/inceptionv3_inference.json", 326, 363, 6, 1, 17185374208,
     3109.690000000001, 310.96899999999977, 16795418824, 9.553463701158762, 20515907080, 0, 0},
    {"throughput-inputs/LayerGraphs/inceptionv3_training.json", 652, 726, 6, 1, 17185374208,
     7107.3800000000037, 710.73799999999926, 33590837648, 19.106927402317524, 40835614224, 326, 0},
    {"throughput-inputs/LayerGraphs/resnet50_inference.json", 177, 193, 6, 1, 17185374208, 2014.4999999999995,
     201.45000000000005, 19410956452, 10.331420900300145, 22186557444, 0, 0},
    {"throughput-inputs/LayerGraphs/resnet50_training.json", 354, 386, 6, 1, 17185374208, 4623.8099999999995,
     462.38100000000014, 38821912904, 20.66284180060029, 44245176328, 177, 0},
    {"throughput-inputs/OperatorGraphs/bert_L-12_training.json", 2012, 2751, 6, 1, 17185374208,
     43510.073400325025, 1891.7423217532687, 23270902776, 16762.315428757574, 35996798285, 1229, 39},
    {"throughput-inputs/OperatorGraphs/bert_l-12_inference.json", 783, 843, 6, 1, 17185374208,
     14783.939125050802, 642.77996195873277, 9285684584, 5037.5973410555162, 10818157915, 0, 11},
    {"throughput-inputs/OperatorGraphs/bert_l-3_inference.json", 235, 250, 3, 1, 17185374208,
     1135.1090857658728, 49.352568946342295, 1512867688, 574.42179956706241, 1233561421, 0, 11},
    {"throughput-inputs/OperatorGraphs/bert_l-3_training.json", 600, 817, 3, 1, 17185374208,
     2828.7061484562414, 122.98722384592422, 3298392568, 2546.6624766704626, 5468916025, 365, 21},
    {"throughput-inputs/OperatorGraphs/bert_l-6_inference.json", 418, 448, 3, 1, 17185374208,
     1781.6147060085964, 77.461508956895557, 2230918504, 943.24270734796301, 2025598290, 0, 11},
    {"throughput-inputs/OperatorGraphs/bert_l-6_training.json", 1071, 1462, 3, 1, 17185374208,
     4437.0859543160159, 192.91678062243599, 4911576568, 3743.256002839189, 8038581056, 653, 27},
    {"throughput-inputs/OperatorGraphs/resnet50_inference.json", 604, 619, 6, 1, 17185374208,
     7478.0357576017741, 325.13198946094656, 3513477024, 2621.4242881978862, 5629465793, 0, 0},
    {"throughput-inputs/OperatorGraphs/resnet50_training.json", 1243, 1806, 6, 1, 17185374208,
     15752.482782594809, 684.89055576498902, 7094182112, 7888.238639861811, 16939863490, 639, 16},
};
#define N_EXPECT ((int)(sizeof expects / sizeof expects[0]))

static hsdag_graph *load(const char *rel, hsdag_err *e)
{
    char path[512];
    snprintf(path, sizeof path, DATA "%s", rel);
    char *buf;
    size_t len;
    hsdag_graph *g = NULL;
    if (hsdag_read_file(&buf, &len, path, 0, e) < 0) return NULL;
    hsdag_tarnawski_read(&g, buf, len, path, e);
    hsdag_free(buf);
    return g;
}

static void check_rel(double got, double want)
{
    CHECK_NEAR(got, want, 1e-9 * fabs(want) + 1e-12);
}

static void test_workload(const tw_expect *x)
{
    hsdag_err e = {0};
    hsdag_graph *g = load(x->path, &e);
    CHECK(g != NULL);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        return;
    }
    CHECK_EQ_INT(g->n_nodes, x->nodes);
    CHECK_EQ_INT(g->n_edges, x->edges);
    CHECK_EQ_INT(g->meta.format, HSDAG_FMT_TARNAWSKI);
    CHECK_EQ_INT(g->meta.file_nodes, x->nodes);
    CHECK_EQ_INT(g->meta.file_edges, x->edges);
    CHECK_EQ_INT(g->meta.max_accels, x->max_fpgas);
    CHECK_EQ_INT(g->meta.max_cpus, x->max_cpus);
    CHECK_NEAR(g->meta.max_size_per_accel, x->max_size, 0);
    double cpu = 0, fpga = 0, size = 0, ecost = 0, ebytes = 0;
    int bwd = 0, nocolor = 0, noacc = 0, renamed = 0;
    for (int32_t v = 0; v < g->n_nodes; v++) {
        cpu += g->cost_ms[v * HSDAG_COST_KINDS_ + HSDAG_COST_CPU];
        fpga += g->cost_ms[v * HSDAG_COST_KINDS_ + HSDAG_COST_ACCEL];
        CHECK(isnan(g->cost_ms[v * HSDAG_COST_KINDS_ + HSDAG_COST_BWD]));
        size += g->mem_bytes[v];
        bwd += (g->flags[v] & HSDAG_NF_BACKWARD) != 0;
        noacc += (g->flags[v] & HSDAG_NF_NO_ACCEL) != 0;
        renamed += (g->flags[v] & HSDAG_NF_RENAMED) != 0;
        nocolor += g->color[v] < 0;
    }
    for (int32_t k = 0; k < g->n_edges; k++) {
        CHECK(g->edge_src[k] < g->out_dst[k]); /* topological order */
        ecost += g->edge_cost_ms[k];
        ebytes += g->edge_bytes[k];
    }
    /* a Tarnawski edge cost belongs to the source node: equal on all its out-edges */
    int same = 1;
    for (int32_t v = 0; v < g->n_nodes; v++)
        for (int32_t k = g->out_off[v] + 1; k < g->out_off[v + 1]; k++)
            if (g->edge_cost_ms[k] != g->edge_cost_ms[g->out_off[v]]) same = 0;
    CHECK(same);
    check_rel(cpu, x->sum_cpu);
    check_rel(fpga, x->sum_fpga);
    check_rel(size, x->sum_size);
    check_rel(ecost, x->sum_edge_cost);
    check_rel(ebytes, x->sum_edge_size);
    CHECK_EQ_INT(bwd, x->backward);
    CHECK_EQ_INT(nocolor, x->no_color);
    CHECK_EQ_INT(noacc, 0);
    CHECK_EQ_INT(renamed, 0);
    hsdag_graph_free(g);
}

/* Spot values of single nodes, read off the files by eye. */
static void test_spot_values(void)
{
    hsdag_err e = {0};
    hsdag_graph *g = load("latency-inputs/LayerGraphs/bert24_inference.json", &e);
    CHECK(g != NULL);
    if (!g) return;
    int32_t v = hsdag_graph_find(g, "node3");
    CHECK(v >= 0);
    if (v >= 0) {
        CHECK_EQ_INT(g->file_id[v], 3);
        CHECK_NEAR(g->cost_ms[v * HSDAG_COST_KINDS_ + HSDAG_COST_CPU], 6.959999999999999, 0);
        CHECK_NEAR(g->cost_ms[v * HSDAG_COST_KINDS_ + HSDAG_COST_ACCEL], 0.696, 0);
        CHECK_NEAR(g->mem_bytes[v], 131325952.0, 0);
        CHECK_EQ_INT(g->color[v], 3);
        CHECK_STR(g->op[v], "Measured");
    }
    hsdag_graph_free(g);
    /* operator graph: names are tensor names, ids start at 0 */
    g = load("latency-inputs/OperatorGraphs/bert_l-3_inference.json", &e);
    CHECK(g != NULL);
    if (!g) return;
    v = hsdag_graph_find(g, "cls.seq_relationship.weight");
    CHECK(v >= 0);
    hsdag_graph_free(g);
}

/* ---- splits ---- */
typedef struct split_expect {
    const char *split, *graph;
    int n_fpgas, n_cpus;
    int per_fpga[6];
} split_expect;

static const split_expect splits[] = {
    {"bert24_inference_expert.json",
     "throughput-inputs/LayerGraphs/bert24_inference.json",
     6,
     1,
     {8, 4, 4, 4, 4, 8}},
    {"bert24_inference_expert.json",
     "latency-inputs/LayerGraphs/bert24_inference.json",
     6,
     1,
     {8, 4, 4, 4, 4, 8}},
    {"bert24_training_expert.json",
     "throughput-inputs/LayerGraphs/bert24_training.json",
     6,
     1,
     {16, 8, 8, 8, 8, 16}},
    {"gnmt_inference_expert.json",
     "throughput-inputs/LayerGraphs/gnmt_inference.json",
     6,
     1,
     {14, 15, 21, 19, 14, 13}},
    {"gnmt_inference_expert.json",
     "latency-inputs/LayerGraphs/gnmt_inference.json",
     6,
     1,
     {14, 15, 21, 19, 14, 13}},
    {"gnmt_training_expert.json",
     "throughput-inputs/LayerGraphs/gnmt_training.json",
     6,
     1,
     {28, 30, 42, 38, 28, 26}},
    {"inceptionv3_inference_expert.json",
     "throughput-inputs/LayerGraphs/inceptionv3_inference.json",
     6,
     1,
     {18, 69, 78, 64, 61, 36}},
    {"inceptionv3_inference_expert.json",
     "latency-inputs/LayerGraphs/inceptionv3_inference.json",
     6,
     1,
     {18, 69, 78, 64, 61, 36}},
    {"resnet50_inference_expert.json",
     "throughput-inputs/LayerGraphs/resnet50_inference.json",
     6,
     1,
     {5, 32, 42, 42, 42, 14}},
    {"resnet50_inference_expert.json",
     "latency-inputs/LayerGraphs/resnet50_inference.json",
     6,
     1,
     {5, 32, 42, 42, 42, 14}},
};

static void test_split(const split_expect *x)
{
    hsdag_err e = {0};
    hsdag_graph *g = load(x->graph, &e);
    CHECK(g != NULL);
    if (!g) return;
    char path[512];
    snprintf(path, sizeof path, DATA "human-experts/%s", x->split);
    char *buf = NULL;
    size_t len = 0;
    CHECK(hsdag_read_file(&buf, &len, path, 0, &e) == 0);
    int32_t *dev = hsdag_malloc((size_t)g->n_nodes * sizeof *dev),
            *dev2 = hsdag_malloc((size_t)g->n_nodes * sizeof *dev2);
    int32_t nc = -1, na = -1;
    int rc = hsdag_split_read(dev, &nc, &na, buf, len, path, g, &e);
    CHECK_EQ_INT(rc, 0);
    if (rc < 0) fprintf(stderr, "%s\n", e.msg);
    CHECK_EQ_INT(na, x->n_fpgas);
    CHECK_EQ_INT(nc, x->n_cpus);
    int count[8] = {0};
    for (int32_t v = 0; v < g->n_nodes && rc == 0; v++) {
        CHECK(dev[v] >= 0 && dev[v] < na + nc);
        if (dev[v] >= 0 && dev[v] < 8) count[dev[v]]++;
    }
    for (int i = 0; i < 6; i++) CHECK_EQ_INT(count[i], x->per_fpga[i]);
    CHECK_EQ_INT(count[6], 0); /* the experts put nothing on the CPU */
    /* write -> read gives the same assignment */
    hsdag_buf out = {0};
    CHECK(hsdag_split_write(&out, g, dev, na, nc, &e) == 0);
    int32_t nc2 = -1, na2 = -1;
    CHECK(hsdag_split_read(dev2, &nc2, &na2, out.data, out.len, "rewritten", g, &e) == 0);
    CHECK_EQ_INT(na2, na);
    CHECK_EQ_INT(nc2, nc);
    CHECK(memcmp(dev, dev2, (size_t)g->n_nodes * sizeof *dev) == 0);
    hsdag_buf_free(&out);
    hsdag_free(dev);
    hsdag_free(dev2);
    hsdag_free(buf);
    hsdag_graph_free(g);
}

static void test_split_errors(void)
{
    hsdag_err e = {0};
    hsdag_graph *g = load("throughput-inputs/LayerGraphs/bert24_training.json", &e);
    CHECK(g != NULL);
    if (!g) return;
    int32_t *dev = hsdag_malloc((size_t)g->n_nodes * sizeof *dev), nc, na;
    /* an inference split does not cover the training graph's backward nodes */
    char *buf;
    size_t len;
    CHECK(hsdag_read_file(&buf, &len, DATA "human-experts/bert24_inference_expert.json", 0, &e) == 0);
    CHECK(hsdag_split_read(dev, &nc, &na, buf, len, "inf.json", g, &e) == HSDAG_EPARSE);
    CHECK(strstr(e.msg, "inf.json: node id 33 ('node1grad') is in no group of the split") != NULL);
    hsdag_free(buf);
    static const struct {
        const char *text, *msg;
        int rc;
    } bad[] = {
        {"{\"cpus\":[],\"fpgas\":[{\"nodes\":[1,999]}]}",
         "s.json: fpgas[0].nodes[1]: id 999 is not a node of the graph", HSDAG_EDANGLING},
        {"{\"cpus\":[{\"nodes\":[1]}],\"fpgas\":[{\"nodes\":[1]}]}",
         "s.json: cpus[0].nodes[0]: node id 1 ('node1') is listed twice (also in fpgas[0])", HSDAG_EPARSE},
        {"{\"cpus\":[]}", "s.json: fpgas is missing", HSDAG_EPARSE},
        {"{\"cpus\":[],\"fpgas\":[{\"nodes\":[\"1\"]}]}", "s.json: fpgas[0]: nodes[0] is not an integer",
         HSDAG_EPARSE},
        {"{\"cpus\":[],\"fpgas\":[7]}", "s.json: fpgas[0] is not an object", HSDAG_EPARSE},
        {"{\"cpus\":[],\"fpgas\":[{\"nodes\":[1]}", "s.json: JSON text ends early", HSDAG_EPARSE},
        {"[]", "s.json: top level is not a JSON object", HSDAG_EPARSE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        e.msg[0] = 0;
        int rc = hsdag_split_read(dev, &nc, &na, bad[i].text, strlen(bad[i].text), "s.json", g, &e);
        CHECK_EQ_INT(rc, bad[i].rc);
        if (!strstr(e.msg, bad[i].msg)) fprintf(stderr, "split bad[%zu]: got '%s'\n", i, e.msg);
        CHECK(strstr(e.msg, bad[i].msg) != NULL);
    }
    /* writer rejects devices out of range */
    for (int32_t v = 0; v < g->n_nodes; v++) dev[v] = 0;
    dev[3] = 7;
    hsdag_buf out = {0};
    CHECK(hsdag_split_write(&out, g, dev, 6, 1, &e) == HSDAG_EINVAL);
    hsdag_buf_free(&out);
    hsdag_free(dev);
    hsdag_graph_free(g);
}

/* ---- bad input ---- */
#define NODE(id, extra)                                                                                      \
    "{\"id\":" #id ",\"supportedOnFpga\":1,\"cpuLatency\":1.5,\"fpgaLatency\":0.5,\"isBackwardNode\":false," \
    "\"size\":100" extra "}"
#define WRAP(nodes, edges) \
    "{\"maxSizePerFPGA\":1e9,\"maxFPGAs\":2,\"maxCPUs\":1,\"nodes\":[" nodes "],\"edges\":[" edges "]}"

static void test_small_semantics(void)
{
    /* name default, missing edge size -> cost/1000 * 2^31, NO_ACCEL and BACKWARD flags, missing colorClass */
    const char *t =
        WRAP(NODE(5, ",\"colorClass\":2") ","
                                          "{\"id\":7,\"supportedOnFpga\":false,\"cpuLatency\":2,"
                                          "\"fpgaLatency\":1,\"isBackwardNode\":1,\"size\":0,\"name\":\"b\"}",
             "{\"sourceId\":5,\"destId\":7,\"cost\":0.5}");
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    int rc = hsdag_tarnawski_read(&g, t, strlen(t), "t.json", &e);
    CHECK_EQ_INT(rc, 0);
    if (!g) return;
    CHECK_STR(g->name[0], "node5");
    CHECK_STR(g->name[1], "b");
    CHECK_EQ_INT(g->color[0], 2);
    CHECK_EQ_INT(g->color[1], -1);
    CHECK(!(g->flags[0] & (HSDAG_NF_NO_ACCEL | HSDAG_NF_BACKWARD)));
    CHECK((g->flags[1] & HSDAG_NF_NO_ACCEL) && (g->flags[1] & HSDAG_NF_BACKWARD));
    CHECK_NEAR(g->edge_bytes[0], 0.5 / 1000 * 2147483648.0, 0);
    CHECK_NEAR(g->edge_cost_ms[0], 0.5, 0);
    CHECK_EQ_INT(g->file_id[1], 7);
    hsdag_graph_free(g);
    /* meta fields are optional (unknown: -1 / NAN) */
    t = "{\"nodes\":[],\"edges\":[]}";
    rc = hsdag_tarnawski_read(&g, t, strlen(t), "t.json", &e);
    CHECK_EQ_INT(rc, 0);
    if (!g) return;
    CHECK_EQ_INT(g->n_nodes, 0);
    CHECK_EQ_INT(g->meta.max_accels, -1);
    CHECK(isnan(g->meta.max_size_per_accel));
    hsdag_graph_free(g);
}

static void test_bad_inputs(void)
{
    static const struct {
        const char *text, *msg;
        int rc;
    } bad[] = {
        {"", "b.json: empty input", HSDAG_EPARSE},
        {"{\"maxFPGAs\":2,\"nodes\":[{\"id\":1", "b.json: JSON text ends early", HSDAG_EPARSE},
        {"[1,2]", "b.json: top level is not a JSON object", HSDAG_EPARSE},
        {"{\"nodes\":[]} x", "b.json: JSON syntax error at line 1, column 14", HSDAG_EPARSE},
        {"{\"nodes\":[]}{}", "b.json: JSON syntax error", HSDAG_EPARSE},
        {"{\"nodes\":[],}", "b.json: JSON syntax error", HSDAG_EPARSE},
        {"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
         "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
         "b.json: JSON nesting deeper than 32", HSDAG_ELIMIT},
        {"{\"edges\":[]}", "b.json: nodes is missing", HSDAG_EPARSE},
        {"{\"nodes\":{},\"edges\":[]}", "b.json: nodes is not an array (object)", HSDAG_EPARSE},
        {"{\"maxFPGAs\":-1,\"nodes\":[],\"edges\":[]}", "b.json: maxFPGAs is negative (-1)", HSDAG_EPARSE},
        {"{\"maxFPGAs\":2.5,\"nodes\":[],\"edges\":[]}", "b.json: maxFPGAs is not an integer", HSDAG_EPARSE},
        {"{\"maxSizePerFPGA\":NaN,\"nodes\":[],\"edges\":[]}",
         "b.json: maxSizePerFPGA is not a finite number", HSDAG_EPARSE},
        {WRAP("7", ""), "b.json: nodes[0] is not an object", HSDAG_EPARSE},
        {WRAP("{\"cpuLatency\":1}", ""), "b.json: nodes[0]: id is missing", HSDAG_EPARSE},
        {WRAP("{\"id\":-4}", ""), "b.json: nodes[0]: id is negative (-4)", HSDAG_EPARSE},
        {WRAP("{\"id\":99999999999}", ""), "b.json: nodes[0]: id is too large", HSDAG_ELIMIT},
        {WRAP(NODE(1, "") "," NODE(77, ",\"cpuLatency\":\"fast\""), ""),
         "b.json: nodes[1] (id 77): cpuLatency is not a number (string)", HSDAG_EPARSE},
        {WRAP(NODE(77, ",\"cpuLatency\":NaN"), ""),
         "b.json: nodes[0] (id 77): cpuLatency is not a finite number", HSDAG_EPARSE},
        {WRAP(NODE(77, ",\"fpgaLatency\":-Infinity"), ""),
         "b.json: nodes[0] (id 77): fpgaLatency is not a finite number", HSDAG_EPARSE},
        {WRAP(NODE(77, ",\"fpgaLatency\":1e400"), ""),
         "b.json: nodes[0] (id 77): fpgaLatency is not a finite number", HSDAG_EPARSE},
        {WRAP(NODE(77, ",\"fpgaLatency\":-0.5"), ""), "b.json: nodes[0] (id 77): fpgaLatency is negative",
         HSDAG_EPARSE},
        {WRAP(NODE(77, ",\"cpuLatency\":1e13"), ""), "b.json: nodes[0] (id 77): cpuLatency is too large",
         HSDAG_ELIMIT},
        {WRAP(NODE(77, ",\"size\":99999999999999999999"), ""),
         "b.json: nodes[0] (id 77): size is an integer too large", HSDAG_ELIMIT},
        {WRAP(NODE(77, ",\"supportedOnFpga\":2"), ""),
         "b.json: nodes[0] (id 77): supportedOnFpga is not a boolean", HSDAG_EPARSE},
        {WRAP(NODE(77, ",\"name\":3"), ""), "b.json: nodes[0] (id 77): name is not a string (int)",
         HSDAG_EPARSE},
        {WRAP(NODE(77, ",\"name\":\"a\\u0000b\""), ""),
         "b.json: nodes[0] (id 77): name contains a NUL character", HSDAG_EPARSE},
        {WRAP(NODE(77, ",\"colorClass\":-3"), ""), "b.json: nodes[0] (id 77): colorClass is negative",
         HSDAG_EPARSE},
        {WRAP(NODE(77, ",\"size\":null"), ""), "b.json: nodes[0] (id 77): size is null", HSDAG_EPARSE},
        {WRAP(NODE(1, "") "," NODE(2, "") "," NODE(1, ""), ""),
         "b.json: nodes[2] (id 1): duplicate id (also nodes[0])", HSDAG_EPARSE},
        {WRAP(NODE(1, "") "," NODE(2, ""), "{\"sourceId\":1,\"destId\":9,\"cost\":1}"),
         "b.json: edges[0] (1 -> 9): destId 9 is not a node id", HSDAG_EDANGLING},
        {WRAP(NODE(1, "") "," NODE(2, ""), "{\"sourceId\":8,\"destId\":2,\"cost\":1}"),
         "b.json: edges[0] (8 -> 2): sourceId 8 is not a node id", HSDAG_EDANGLING},
        {WRAP(NODE(1, "") "," NODE(2, ""), "{\"sourceId\":1,\"destId\":2}"),
         "b.json: edges[0] (1 -> 2): cost is missing", HSDAG_EPARSE},
        {WRAP(NODE(1, "") "," NODE(2, ""), "{\"sourceId\":1,\"destId\":2,\"cost\":1,\"size\":-1}"),
         "b.json: edges[0] (1 -> 2): size is negative", HSDAG_EPARSE},
        {WRAP(NODE(1, "") "," NODE(2, ""), "{\"sourceId\":2,\"destId\":2,\"cost\":1}"),
         "b.json: edges[0] (2 -> 2): edge from a node to itself", HSDAG_ECYCLE},
        {WRAP(NODE(1, "") "," NODE(2, ""),
              "{\"sourceId\":1,\"destId\":2,\"cost\":1},{\"sourceId\":1,\"destId\":2,\"cost\":1}"),
         "b.json: edges[1] (1 -> 2): duplicate edge (also edges[0])", HSDAG_EPARSE},
        {WRAP(NODE(1, "") "," NODE(2, "") "," NODE(3, ""),
              "{\"sourceId\":1,\"destId\":2,\"cost\":1},{\"sourceId\":2,\"destId\":3,\"cost\":1},"
              "{\"sourceId\":3,\"destId\":2,\"cost\":1}"),
         "b.json: graph has a cycle through node 'node", HSDAG_ECYCLE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        int rc = hsdag_tarnawski_read(&g, bad[i].text, strlen(bad[i].text), "b.json", &e);
        CHECK_EQ_INT(rc, bad[i].rc);
        CHECK(g == NULL);
        int ok = strncmp(e.msg, bad[i].msg, strlen(bad[i].msg)) == 0 && !strchr(e.msg, '\n');
        if (!ok) fprintf(stderr, "bad[%zu]: got '%s'\n", i, e.msg);
        CHECK(ok);
        hsdag_graph_free(g);
    }
    /* a NUL byte inside the buffer */
    static const char nul[] = "{\"nodes\":[]\0,\"edges\":[]}";
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    CHECK_EQ_INT(hsdag_tarnawski_read(&g, nul, sizeof nul - 1, "b.json", &e), HSDAG_EPARSE);
    CHECK(strstr(e.msg, "NUL byte at offset 11") != NULL);
}

/* Every prefix of a real file is rejected cleanly (truncation), and allocation failures are reported. */
static void test_truncation_and_oom(void)
{
    char *buf;
    size_t len;
    hsdag_err e = {0};
    CHECK(hsdag_read_file(&buf, &len, DATA "latency-inputs/LayerGraphs/bert24_inference.json", 0, &e) == 0);
    int all_fail = 1;
    for (size_t cut = 0; cut + 1 < len; cut += 97) {
        hsdag_graph *g = NULL;
        if (hsdag_tarnawski_read(&g, buf, cut, "cut.json", &e) == 0) all_fail = 0;
        hsdag_graph_free(g);
    }
    CHECK(all_fail);
    oom_sweep s = oom_sweep_run(hsdag_tarnawski_read, buf, len, "oom.json", 200, 1);
    CHECK(s.ok);
    CHECK(s.oom > 0);
    CHECK_EQ_INT(s.other, 0);
    hsdag_free(buf);
}

int main(void)
{
    for (int i = 0; i < N_EXPECT; i++) test_workload(&expects[i]);
    test_spot_values();
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) test_split(&splits[i]);
    test_split_errors();
    test_small_semantics();
    test_bad_inputs();
    test_truncation_and_oom();
    return check_summary("test_tarnawski");
}
