/* test_devices.c - device presets (their datasheet-derived numbers), the device JSON schema (round trip, bad
 * input, allocation failures), the cost table (roofline by hand, file costs, AUTO, profile overrides) and
 * bounds.
 * Not here: scheduling (test_sim.c).
 * Entry points: main.
 */
#include "check.h"
#include "hsdag/sim.h"

#include <string.h>

static hsdag_devices *parse(const char *js, hsdag_err *e)
{
    hsdag_devices *d = NULL;
    int rc = hsdag_devices_parse(&d, js, strlen(js), "t.json", e);
    return rc < 0 ? NULL : d;
}

static void test_presets(void)
{
    hsdag_devices *d = NULL;
    hsdag_err e = {0};
    CHECK(hsdag_devices_preset(&d, "cpu-gpu", NULL, &e) == 0);
    CHECK_EQ_INT(d->n, 2);
    CHECK_STR(d->dev[0].name, "CPU");
    CHECK_STR(d->dev[1].name, "GPU");
    CHECK_NEAR(d->dev[0].peak_flops, 819.2e9, 1);   /* 8 P-cores x 32 FLOP/cycle x 3.2 GHz */
    CHECK_NEAR(d->dev[1].peak_flops, 17203.2e9, 1); /* 4096 lanes x 2 x 2.1 GHz */
    CHECK_NEAR(d->dev[0].mem_bw, 76.8e9, 1);
    CHECK_NEAR(d->dev[1].mem_bw, 560e9, 1);
    CHECK_NEAR(d->link[1].bandwidth, 31.5076923e9, 1e3); /* PCIe 4.0 x16 */
    CHECK(d->semantics == HSDAG_SEM_SEQUENTIAL);
    CHECK_EQ_INT(d->n_resources, 2); /* one channel per direction */
    hsdag_devices_free(d);

    CHECK(hsdag_devices_preset(&d, "cpu-4gpu", NULL, &e) == 0);
    CHECK_EQ_INT(d->n, 5);
    CHECK(d->semantics == HSDAG_SEM_CONCURRENT);
    CHECK_EQ_INT(d->n_resources, 2); /* a shared switch: down and up */
    CHECK_STR(d->dev[4].ov_name, "GPU.3");
    CHECK_NEAR(d->link[1 * 5 + 2].file_factor, 2, 0);
    CHECK_NEAR(d->link[0 * 5 + 2].file_factor, 1, 0);
    hsdag_devices_free(d);

    CHECK(hsdag_devices_preset(&d, "cpu-igpu", NULL, &e) == 0);
    CHECK_NEAR(d->dev[1].peak_flops, 793.6e9, 1);
    hsdag_devices_free(d);

    CHECK(hsdag_devices_preset(&d, "tarnawski", NULL, &e) == HSDAG_EINVAL);
    CHECK(strstr(e.msg, "tarnawski:K") != NULL);
    CHECK(hsdag_devices_preset(&d, "tarnawski:3:2", NULL, &e) == 0);
    CHECK_EQ_INT(d->n, 5);
    CHECK_STR(d->dev[0].name, "acc0");
    CHECK_STR(d->dev[3].name, "cpu0");
    CHECK(d->semantics == HSDAG_SEM_TARNAWSKI);
    CHECK_NEAR(d->link[0 * 5 + 3].file_factor, 1, 0);
    CHECK_NEAR(d->link[0 * 5 + 1].file_factor, 2, 0);
    CHECK_NEAR(d->link[3 * 5 + 4].file_factor, 0, 0);
    CHECK_NEAR(d->link[3 * 5 + 4].bandwidth, 0, 0); /* CPUs share DRAM */
    hsdag_devices_free(d);
    const char *bad[] = {"tarnawski:",   "tarnawski:x", "tarnawski:3:", "tarnawski:3:0",
                         "tarnawski:99", "gpu-cpu",     "tarnawskix"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        d = NULL;
        CHECK(hsdag_devices_preset(&d, bad[i], NULL, &e) < 0);
        CHECK(d == NULL);
        CHECK(strchr(e.msg, '\n') == NULL);
    }
    for (const char *const *p = hsdag_devices_preset_names(); *p; p++) {
        int rc = hsdag_devices_load(&d, *p, NULL, &e);
        CHECK(rc == 0 || strcmp(*p, "tarnawski") == 0);
        hsdag_devices_free(d);
        d = NULL;
    }
    CHECK(hsdag_devices_load(&d, "no/such/file.json", NULL, &e) == HSDAG_EIO);
}

static void test_roundtrip(void)
{
    const char *names[] = {"cpu-gpu", "cpu-4gpu", "tarnawski:2:3"};
    for (int i = 0; i < 3; i++) {
        hsdag_devices *d = NULL, *d2 = NULL;
        hsdag_err e = {0};
        CHECK(hsdag_devices_preset(&d, names[i], NULL, &e) == 0);
        hsdag_buf b = {0};
        CHECK(hsdag_devices_write_json(&b, d) == 0);
        d2 = parse(b.data, &e);
        CHECK(d2 != NULL);
        if (!d2) {
            fprintf(stderr, "%s\n", e.msg);
            hsdag_devices_free(d);
            hsdag_buf_free(&b);
            continue;
        }
        CHECK_EQ_INT(d2->n, d->n);
        CHECK_EQ_INT(d2->n_resources, d->n_resources);
        CHECK(d2->semantics == d->semantics);
        CHECK_EQ_INT(d2->max_accels_used, d->max_accels_used);
        for (int32_t k = 0; k < d->n; k++) {
            CHECK_STR(d2->dev[k].name, d->dev[k].name);
            CHECK(d2->dev[k].kind == d->dev[k].kind && d2->dev[k].peak_flops == d->dev[k].peak_flops &&
                  d2->dev[k].mem_bw == d->dev[k].mem_bw &&
                  d2->dev[k].mem_capacity == d->dev[k].mem_capacity &&
                  d2->dev[k].launch_s == d->dev[k].launch_s);
            CHECK(memcmp(d2->dev[k].eff, d->dev[k].eff, sizeof d->dev[k].eff) == 0);
        }
        for (int32_t k = 0; k < d->n * d->n; k++) {
            if (k / d->n == k % d->n) continue;
            CHECK(d2->link[k].latency_s == d->link[k].latency_s &&
                  d2->link[k].bandwidth == d->link[k].bandwidth &&
                  d2->link[k].file_factor == d->link[k].file_factor);
            CHECK_STR(d2->resource_name[d2->link[k].resource], d->resource_name[d->link[k].resource]);
        }
        hsdag_buf_free(&b);
        hsdag_devices_free(d);
        hsdag_devices_free(d2);
    }
}

#define DEV(x) "{\"name\":\"" x "\",\"kind\":\"cpu\",\"peak_flops\":1e9,\"mem_bandwidth\":1e9}"

static void test_bad_json(void)
{
    struct {
        const char *js, *want;
        int status;
    } cases[] = {
        {"", "t.json: empty input", HSDAG_EPARSE},
        {"{\"devices\": [", "JSON text ends early", HSDAG_EPARSE},
        {"{} x", "JSON syntax error at line 1, column 4", HSDAG_EPARSE},
        {"[]", "top level is not an object", HSDAG_EPARSE},
        {"{}", "t.json: devices is missing", HSDAG_EPARSE},
        {"{\"devices\": []}", "'devices' has 0 entries", HSDAG_ELIMIT},
        {"{\"devices\": [" DEV("a") "], \"colour\": 1}", "unknown key 'colour'", HSDAG_EPARSE},
        {"{\"devices\": [{\"name\":\"a\",\"kind\":\"tpu\",\"peak_flops\":1e9,\"mem_bandwidth\":1}]}",
         "kind 'tpu'", HSDAG_EPARSE},
        {"{\"devices\": [{\"name\":\"a\",\"kind\":\"cpu\",\"mem_bandwidth\":1e9}]}",
         "device 'a': peak_flops is missing", HSDAG_EPARSE},
        {"{\"devices\": [{\"name\":\"a\",\"kind\":\"cpu\",\"peak_flops\":-1,\"mem_bandwidth\":1e9}]}",
         "peak_flops is below 1000 (-1)", HSDAG_EPARSE},
        {"{\"devices\": [{\"name\":\"a\",\"kind\":\"cpu\",\"peak_flops\":\"fast\",\"mem_bandwidth\":1e9}]}",
         "peak_flops is not a number (string)", HSDAG_EPARSE},
        {"{\"devices\": [{\"name\":\"a\",\"kind\":\"cpu\",\"peak_flops\":1e9,\"mem_bandwidth\":1e9,"
         "\"efficiency\":{\"convolution\":0.5}}]}",
         "unknown op class 'convolution'", HSDAG_EPARSE},
        {"{\"devices\": [{\"name\":\"a\",\"kind\":\"cpu\",\"peak_flops\":1e9,\"mem_bandwidth\":1e9,"
         "\"efficiency\":{\"conv\":1.5}}]}",
         "efficiency: conv is too large (1.5 > 1)", HSDAG_ELIMIT},
        {"{\"devices\": [" DEV("a") "," DEV("a") "]}", "duplicate device name", HSDAG_EPARSE},
        {"{\"devices\": [" DEV("a") "," DEV("b") "]}", "no link from 'a' to 'b'", HSDAG_EPARSE},
        {"{\"devices\": [" DEV("a") "," DEV(
             "b") "], \"links\": [{\"from\":\"a\",\"to\":\"c\",\"bandwidth\":1}]}",
         "unknown device 'c'", HSDAG_EPARSE},
        {"{\"devices\": [" DEV("a") "," DEV(
             "b") "], \"links\": [{\"from\":\"a\",\"to\":\"a\",\"bandwidth\":1}]}",
         "to itself", HSDAG_EPARSE},
        {"{\"devices\": [" DEV("a") "," DEV(
             "b") "], \"links\": [{\"from\":\"a\",\"to\":\"b\",\"bandwidth\":1},"
                  "{\"from\":\"b\",\"to\":\"a\",\"bandwidth\":1}]}",
         "given twice", HSDAG_EPARSE},
        {"{\"devices\": [" DEV("a") "," DEV("b") "], \"links\": [{\"from\":\"a\",\"to\":\"b\"}]}",
         "links[0]: bandwidth is missing", HSDAG_EPARSE},
        {"{\"devices\": [" DEV("a") "], \"semantics\": \"parallel\"}", "semantics 'parallel'", HSDAG_EPARSE},
        {"{\"devices\": [" DEV("") "]}", "1..400 characters", HSDAG_EPARSE},
        {"{\"devices\": [1]}", "not an object", HSDAG_EPARSE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        hsdag_err e = {0};
        hsdag_devices *d = NULL;
        int rc = hsdag_devices_parse(&d, cases[i].js, strlen(cases[i].js), "t.json", &e);
        CHECK_EQ_INT(rc, cases[i].status);
        CHECK(d == NULL);
        if (!strstr(e.msg, cases[i].want)) fprintf(stderr, "case %zu: got '%s'\n", i, e.msg);
        CHECK(strstr(e.msg, cases[i].want) != NULL);
        CHECK(strncmp(e.msg, "t.json: ", 8) == 0);
        CHECK(strchr(e.msg, '\n') == NULL);
    }
    /* a good file with every optional field, a shared bus and a default link */
    const char *ok =
        "{\"name\":\"lab\",\"semantics\":\"concurrent\",\"devices\":["
        "{\"name\":\"c\",\"kind\":\"cpu\",\"peak_flops\":1e9,\"mem_bandwidth\":2e9,\"mem_capacity\":1e6,"
        "\"launch_overhead_s\":1e-6,\"openvino\":\"CPU\",\"efficiency\":{\"default\":0.5,\"conv\":0.25}}"
        "," DEV("g") "," DEV("h") "],"
                                  "\"links\":[{\"from\":\"c\",\"to\":\"g\",\"latency_s\":1e-5,\"bandwidth\":"
                                  "1e9,\"bus\":\"pcie\"},"
                                  "{\"from\":\"c\",\"to\":\"h\",\"latency_s\":1e-5,\"bandwidth\":1e9,\"bus\":"
                                  "\"pcie\",\"symmetric\":false}],"
                                  "\"default_link\":{\"bandwidth\":5e8}}";
    hsdag_err e = {0};
    hsdag_devices *d = parse(ok, &e);
    CHECK(d != NULL);
    if (!d) {
        fprintf(stderr, "%s\n", e.msg);
        return;
    }
    CHECK(d->semantics == HSDAG_SEM_CONCURRENT);
    CHECK_NEAR(d->dev[0].eff[HSDAG_OP_CONV], 0.25, 0);
    CHECK_NEAR(d->dev[0].eff[HSDAG_OP_MATMUL], 0.5, 0);
    CHECK_NEAR(d->dev[1].eff[HSDAG_OP_MATMUL], 1.0, 0);
    CHECK_EQ_INT(d->link[0 * 3 + 1].resource, d->link[1 * 3 + 0].resource); /* both directions on "pcie" */
    CHECK_EQ_INT(d->link[0 * 3 + 2].resource, d->link[0 * 3 + 1].resource);
    CHECK(d->link[2 * 3 + 0].resource != d->link[0 * 3 + 1].resource); /* h -> c from the default link */
    CHECK_NEAR(d->link[2 * 3 + 0].bandwidth, 5e8, 0);
    CHECK_EQ_INT(hsdag_devices_find(d, "G"), 1); /* case-insensitive fallback */
    CHECK_EQ_INT(hsdag_devices_find(d, "x"), -1);
    hsdag_devices_free(d);

    /* allocation failures at every step: a clean error, no leak (ASan) */
    int done = 0;
    for (long k = 1; k < 2000 && !done; k++) {
        hsdag_alloc_fail_after(k);
        d = parse(ok, &e);
        hsdag_alloc_fail_after(0);
        if (d)
            done = 1;
        else
            CHECK(e.status == HSDAG_ENOMEM);
        hsdag_devices_free(d);
    }
    CHECK(done);
}

/* ---- cost table ---- */

static const char *dev_ab =
    "{\"devices\":["
    "{\"name\":\"A\",\"kind\":\"gpu\",\"peak_flops\":1e12,\"mem_bandwidth\":1e10,\"launch_overhead_s\":1e-5,"
    "\"efficiency\":{\"conv\":0.5}},"
    "{\"name\":\"B\",\"kind\":\"cpu\",\"peak_flops\":1e10,\"mem_bandwidth\":1e8}],"
    "\"links\":[{\"from\":\"A\",\"to\":\"B\",\"latency_s\":1e-4,\"bandwidth\":1e9}]}";

static hsdag_graph *conv_graph(int with_file_costs)
{
    hsdag_gb *b = hsdag_gb_create();
    int32_t x = hsdag_gb_add_node(b, "x", "Parameter");
    int32_t c = hsdag_gb_add_node(b, "conv,1", "Conv");
    int32_t y = hsdag_gb_add_node(b, "y", "Relu");
    hsdag_gb_set_opclass(b, x, HSDAG_OP_BOOKKEEPING);
    hsdag_gb_set_opclass(b, c, HSDAG_OP_CONV);
    hsdag_gb_set_opclass(b, y, HSDAG_OP_ELEMWISE);
    hsdag_gb_set_flops(b, c, 4e9);
    hsdag_gb_set_param_bytes(b, c, 1e6);
    int64_t dims[1] = {1000};
    hsdag_gb_add_output(b, c, HSDAG_DT_F32, 1, dims); /* 4000 bytes */
    hsdag_gb_add_output(b, y, HSDAG_DT_F32, 1, dims);
    hsdag_gb_set_flops(b, y, 1000);
    hsdag_gb_add_edge(b, x, c, 8000);
    hsdag_gb_add_edge(b, c, y, 4000);
    if (with_file_costs) {
        hsdag_gb_set_cost(b, c, HSDAG_COST_CPU, 50);
        hsdag_gb_set_cost(b, c, HSDAG_COST_ACCEL, 2);
        hsdag_gb_set_cost(b, y, HSDAG_COST_ACCEL, 0.5); /* no CPU column for y */
        hsdag_gb_set_flags(b, y, HSDAG_NF_NO_ACCEL);
    }
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    if (hsdag_gb_finish(b, &g, &e) < 0) fprintf(stderr, "%s\n", e.msg);
    hsdag_gb_free(b);
    return g;
}

static void test_costs(void)
{
    hsdag_err e = {0};
    hsdag_devices *d = parse(dev_ab, &e);
    hsdag_graph *g = conv_graph(0);
    CHECK(d && g);
    if (!d || !g) return;
    hsdag_costs *c = NULL;
    hsdag_costs_config cfg = hsdag_costs_config_default();
    CHECK(hsdag_costs_create(&c, g, d, &cfg, &e) == 0);
    CHECK(c->source == HSDAG_COSTSRC_ROOFLINE);
    int32_t x = hsdag_graph_find(g, "x"), cv = hsdag_graph_find(g, "conv,1"), y = hsdag_graph_find(g, "y");
    /* bookkeeping: 0 everywhere, no launch */
    CHECK_NEAR(c->node_s[x * 2 + 0], 0, 0);
    CHECK_NEAR(c->node_s[x * 2 + 1], 0, 0);
    /* conv on A: max(4e9 / (1e12 * 0.5), (8000 + 4000 + 1e6) / 1e10) + 1e-5 = 8e-3 + 1e-5 */
    CHECK_NEAR(c->node_s[cv * 2 + 0], 8.01e-3, 1e-15);
    /* conv on B: max(4e9 / 1e10, 1.012e6 / 1e8) = 0.4 */
    CHECK_NEAR(c->node_s[cv * 2 + 1], 0.4, 1e-15);
    /* relu on B: memory bound: (4000 + 4000) / 1e8 = 8e-5 */
    CHECK_NEAR(c->node_s[y * 2 + 1], 8e-5, 1e-18);
    CHECK_NEAR(c->xfer_bytes[x], 8000, 0);
    CHECK_NEAR(c->static_bytes[cv], 1e6, 0);
    CHECK_NEAR(c->act_bytes[cv], 4000, 0);
    CHECK_NEAR(hsdag_costs_xfer_s(c, cv, 0, 1), 1e-4 + 4000 / 1e9, 1e-18);
    CHECK_NEAR(hsdag_costs_xfer_s(c, cv, 1, 1), 0, 0);
    CHECK_NEAR(hsdag_roofline_s(&d->dev[0], HSDAG_OP_CONV, 4e9, 1.012e6), 8.01e-3, 1e-15);

    /* lower bounds: sum of minimum costs, critical path */
    hsdag_bound bd;
    CHECK(hsdag_bound_compute(&bd, c, HSDAG_SEM_SEQUENTIAL, NULL, NULL, &e) == 0);
    double want = 8.01e-3 + c->node_s[y * 2 + 0];
    CHECK_NEAR(bd.lower_s, want, 1e-15);
    CHECK_STR(bd.rule, "sum-min-cost");
    CHECK(hsdag_bound_compute(&bd, c, HSDAG_SEM_CONCURRENT, NULL, NULL, &e) == 0);
    CHECK_NEAR(bd.critical_path_s, want, 1e-15);
    CHECK_NEAR(bd.work_per_device_s, want / 2, 1e-15);
    CHECK_NEAR(bd.lower_s, want, 1e-15);
    hsdag_costs_free(c);
    hsdag_graph_free(g);

    /* file costs: the CPU column on cpu devices, ACCEL on the others; y has no CPU column -> AUTO is
     * roofline */
    g = conv_graph(1);
    CHECK(hsdag_costs_create(&c, g, d, &cfg, &e) == 0);
    CHECK(c->source == HSDAG_COSTSRC_ROOFLINE);
    hsdag_costs_free(c);
    cfg.source = HSDAG_COSTSRC_FILE;
    CHECK(hsdag_costs_create(&c, g, d, &cfg, &e) == 0);
    CHECK_NEAR(c->node_s[cv * 2 + 0], 2e-3, 1e-18);
    CHECK_NEAR(c->node_s[cv * 2 + 1], 50e-3, 1e-18);
    CHECK_NEAR(c->node_s[y * 2 + 0], 0.5e-3, 1e-18);
    CHECK_NEAR(c->node_s[y * 2 + 1], 8e-5, 1e-18); /* fallback to the roofline */
    CHECK_EQ_INT(c->allowed[y * 2 + 0], 0);        /* NO_ACCEL on the gpu */
    CHECK_EQ_INT(c->allowed[y * 2 + 1], 1);
    /* the bound uses allowed devices only: y at its CPU cost */
    CHECK(hsdag_bound_compute(&bd, c, HSDAG_SEM_SEQUENTIAL, NULL, NULL, &e) == 0);
    CHECK_NEAR(bd.lower_s, 2e-3 + 8e-5, 1e-15);
    hsdag_costs_free(c);

    /* profile overrides any source; node names may contain commas; a header line and comments */
    const char *csv = "node,device,ms\n# measured\n\"conv,1\",B,7.5\n y , A , 0.25 \r\n";
    hsdag_profile *p = NULL;
    CHECK(hsdag_profile_parse(&p, csv, strlen(csv), "p.csv", &e) == 0);
    CHECK_EQ_INT(hsdag_profile_count(p), 2);
    cfg.profile = p;
    CHECK(hsdag_costs_create(&c, g, d, &cfg, &e) == 0);
    CHECK_NEAR(c->node_s[cv * 2 + 1], 7.5e-3, 1e-18);
    CHECK_NEAR(c->node_s[y * 2 + 0], 0.25e-3, 1e-18);
    CHECK_NEAR(c->node_s[cv * 2 + 0], 2e-3, 1e-18);
    CHECK_EQ_INT(c->n_profiled, 2);
    hsdag_costs_free(c);
    hsdag_profile_free(p);
    struct {
        const char *csv, *want;
    } bad[] = {
        {"x,A\n", "line 1: expected 'node,device,ms'"}, {"x,A,1\nx,A,fast\n", "line 2: 'fast' is not a time"},
        {"x,A,-1\n", "line 1: '-1' is not a time"},     {"nosuch,A,1\n", "line 1: unknown node 'nosuch'"},
        {"x,Z,1\n", "line 1: unknown device 'Z'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        p = NULL;
        c = NULL;
        int rc = hsdag_profile_parse(&p, bad[i].csv, strlen(bad[i].csv), "p.csv", &e);
        if (rc == 0) {
            cfg.profile = p;
            rc = hsdag_costs_create(&c, g, d, &cfg, &e);
        }
        CHECK(rc < 0);
        CHECK(c == NULL);
        if (!strstr(e.msg, bad[i].want)) fprintf(stderr, "profile case %zu: got '%s'\n", i, e.msg);
        CHECK(strstr(e.msg, bad[i].want) != NULL);
        hsdag_profile_free(p);
    }
    hsdag_graph_free(g);
    hsdag_devices_free(d);
}

static void test_semantics_names(void)
{
    hsdag_semantics s;
    for (int i = 0; i < HSDAG_SEM_COUNT_; i++) {
        CHECK(hsdag_semantics_parse(&s, hsdag_semantics_name(i), NULL) == 0);
        CHECK_EQ_INT(s, i);
    }
    CHECK(hsdag_semantics_parse(&s, "auto", NULL) == 0 && s == HSDAG_SEM_AUTO);
    CHECK(hsdag_semantics_parse(&s, "Sequential", NULL) == HSDAG_EINVAL);
    CHECK_STR(hsdag_devkind_name(HSDAG_DEV_ACCEL), "accel");
}

int main(void)
{
    test_presets();
    test_roundtrip();
    test_bad_json();
    test_costs();
    test_semantics_names();
    return check_summary("test_devices");
}
