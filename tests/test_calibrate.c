/* test_calibrate.c - the ONNX Runtime bridge's JSON against a graph (statuses, CSV, shape differences, bad
 * input, allocation failures) and the device fit (recovers a known device from synthetic profiles, scores held-out
 * models, builds device sets).
 * Not here: running ONNX Runtime (tests/cli/profile.sh, where it is installed).
 * Entry points: main. */
#include "check.h"
#include "hsdag/calibrate.h"
#include "hsdag/io.h"
#include "hsdag/ortprof.h"
#include "hsdag/sim.h"

#include <string.h>

static hsdag_graph *load(const char *path)
{
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    if (hsdag_load_file(&g, path, HSDAG_FMT_UNKNOWN, &e) < 0) fprintf(stderr, "%s\n", e.msg);
    return g;
}

/* A bridge JSON for alexnet: node 0 a kernel of 2.5 ms, node 1 fused into 0, node 2 folded, the rest removed;
 * shapes: node 0 right, node 1 wrong in one dim, node 3 of another rank. */
static void bridge_json(const hsdag_graph *g, hsdag_buf *b)
{
    hsdag_buf_printf(b, "{\"format\": \"hsdag-ort-profile\", \"version\": 1, \"ort_version\": \"1.23.2\", "
                        "\"threads\": 1, \"runs\": 5, \"warmup\": 2, \"opt\": \"all\", \"median_ms\": 3.5, "
                        "\"kernel_ms\": 3.0, \"nodes\": [");
    for (int32_t v = 0; v < g->n_nodes; v++) {
        const char *st = v == 0 ? "kernel" : v == 1 ? "fused" : v == 2 ? "folded" : "removed";
        hsdag_buf_printf(b, "%s{\"i\": %d, \"status\": \"%s\", \"into\": %d, \"ms\": %s}", v ? ", " : "",
                         (int)g->file_id[v], st, v == 1 ? (int)g->file_id[0] : -1, v == 0 ? "2.5" : "0");
    }
    hsdag_buf_printf(b,
                     "], \"orphan_kernels\": [{\"kernel\": \"ReorderInput\", \"op\": \"ReorderInput\", "
                     "\"ms\": 0.5, \"into\": %d}], \"shapes\": [",
                     (int)g->file_id[0]);
    for (int32_t v = 0; v < 4; v++) {
        int32_t s = g->out_shape_off[v];
        int rank = g->shape_rank[s];
        const int64_t *d = g->shape_dims + g->shape_dim_off[s];
        hsdag_buf_printf(b, "%s{\"i\": %d, \"out\": [[", v ? ", " : "", (int)g->file_id[v]);
        for (int i = 0; i < rank + (v == 3); i++)
            hsdag_buf_printf(b, "%s%lld", i ? "," : "",
                             (long long)(i < rank ? d[i] + (v == 1 && i == 1) : 1));
        hsdag_buf_printf(b, "]]}");
    }
    hsdag_buf_printf(b, "]}");
}

static void test_ortprof(void)
{
    hsdag_graph *g = load("tests/data/onnx/alexnet.onnx");
    CHECK(g != NULL);
    if (!g) return;
    hsdag_buf js = {0};
    bridge_json(g, &js);
    hsdag_ortprof *p = NULL;
    hsdag_err e = {0};
    CHECK(hsdag_ortprof_parse(&p, js.data, js.len, "bridge", g, &e) == 0);
    if (p) {
        CHECK_EQ_INT(p->n_status[HSDAG_ORT_KERNEL], 1);
        CHECK_EQ_INT(p->n_status[HSDAG_ORT_FUSED], 1);
        CHECK_EQ_INT(p->n_status[HSDAG_ORT_FOLDED], 1);
        CHECK_EQ_INT(p->n_status[HSDAG_ORT_REMOVED], g->n_nodes - 3);
        CHECK_EQ_INT(p->into[1], 0);
        CHECK_NEAR(p->node_ms[0], 2.5, 0);
        CHECK_NEAR(p->orphan_ms, 0.5, 1e-12);
        CHECK_NEAR(p->median_ms, 3.5, 0);
        CHECK(p->has_shapes);
        CHECK_EQ_INT(p->n_shapes_checked, 4);
        CHECK_EQ_INT(p->n_shape_diffs, 2);
        CHECK_EQ_INT(p->n_shape_unknown, 0);
        CHECK_EQ_INT(p->diffs[0].node, 1);
        CHECK_EQ_INT(p->diffs[1].node, 3);
        hsdag_buf csv = {0};
        CHECK(hsdag_ortprof_write_csv(&csv, p, g, "CPU") == 0);
        char want[512];
        snprintf(want, sizeof want, "\n%s,CPU,2.5\n", g->name[0]);
        CHECK(strstr(csv.data, want) != NULL);
        snprintf(want, sizeof want, "\n#fused,%s,%s\n", g->name[1], g->name[0]);
        CHECK(strstr(csv.data, want) != NULL);
        snprintf(want, sizeof want, "\n#folded,%s\n", g->name[2]);
        CHECK(strstr(csv.data, want) != NULL);
        /* the CSV is a profile: every node once, the fused line kept for calibrate */
        hsdag_profile *pr = NULL;
        CHECK(hsdag_profile_parse(&pr, csv.data, csv.len, "p.csv", &e) == 0);
        CHECK_EQ_INT(hsdag_profile_count(pr), g->n_nodes);
        CHECK_EQ_INT(hsdag_profile_fused_count(pr), 1);
        hsdag_profile_free(pr);
        hsdag_buf_free(&csv);
    }
    hsdag_ortprof_free(p);
    /* allocation failures: ENOMEM with one line, nothing leaked (ASan), then success */
    int oom = 0, ok = 0;
    for (long n = 1; n < 400 && !ok; n++) {
        hsdag_ortprof *q = NULL;
        hsdag_err e2 = {0};
        hsdag_alloc_fail_after(n);
        int rc = hsdag_ortprof_parse(&q, js.data, js.len, "bridge", g, &e2);
        hsdag_alloc_fail_after(0);
        if (rc == HSDAG_ENOMEM) oom += q == NULL && strchr(e2.msg, '\n') == NULL;
        ok = rc == 0;
        hsdag_ortprof_free(q);
    }
    CHECK(ok && oom > 0);
    /* bad input: one line naming the input */
    static const char *const bad[] = {
        "",
        "[]",
        "{\"format\": \"other\", \"version\": 1}",
        "{\"format\": \"hsdag-ort-profile\", \"version\": 2}",
        "{\"format\": \"hsdag-ort-profile\", \"version\": 1, \"median_ms\": 1, \"kernel_ms\": 1, \"nodes\": "
        "[{\"i\": 99999, \"status\": \"kernel\"}]}",
        "{\"format\": \"hsdag-ort-profile\", \"version\": 1, \"median_ms\": 1, \"kernel_ms\": 1, \"nodes\": "
        "[{\"i\": 0, \"status\": \"vanished\"}]}",
        "{\"format\": \"hsdag-ort-profile\", \"version\": 1, \"median_ms\": -1, \"kernel_ms\": 1, \"nodes\": "
        "[]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hsdag_ortprof *q = NULL;
        hsdag_err e3 = {0};
        int rc = hsdag_ortprof_parse(&q, bad[i], strlen(bad[i]), "bridge", g, &e3);
        CHECK(rc < 0 && rc != HSDAG_ENOMEM); /* EPARSE, or ELIMIT for a later version */
        CHECK(q == NULL && strncmp(e3.msg, "bridge", 6) == 0 && !strchr(e3.msg, '\n'));
    }
    hsdag_buf_free(&js);
    hsdag_graph_free(g);
}

/* A profile measured on a known device: every node's roofline time there, as hsdag profile writes it. */
static hsdag_profile *synthetic_profile(const hsdag_graph *g, const hsdag_device *dev)
{
    hsdag_buf b = {0};
    hsdag_buf_printf(&b, "node,device,ms\n");
    for (int32_t v = 0; v < g->n_nodes; v++) {
        double f, by, el;
        int bk = hsdag_costs_node_work(g, v, &f, &by, &el);
        double ms = bk ? 0 : 1e3 * hsdag_roofline_elems_s(dev, (hsdag_opclass)g->opclass[v], f, by, el);
        hsdag_buf_printf(&b, "%s,CPU,%.9g\n", g->name[v], ms);
    }
    hsdag_profile *p = NULL;
    hsdag_err e = {0};
    if (hsdag_profile_parse(&p, b.data, b.len, "synthetic", &e) < 0) fprintf(stderr, "%s\n", e.msg);
    hsdag_buf_free(&b);
    return p;
}

static void test_fit(void)
{
    hsdag_device truth = {.name = "CPU",
                          .ov_name = "CPU",
                          .kind = HSDAG_DEV_CPU,
                          .peak_flops = 60e9,
                          .mem_bw = 12e9,
                          .launch_s = 4e-6};
    for (int c = 0; c < HSDAG_OP_CLASS_COUNT_; c++) truth.eff[c] = 0.5;
    truth.eff[HSDAG_OP_CONV] = 1.0;
    truth.eff[HSDAG_OP_MATMUL] = 0.7;
    const char *paths[3] = {"tests/data/onnx/resnet50.onnx", "tests/data/onnx/bert_base.onnx",
                            "tests/data/onnx/mobilenet_v2.onnx"};
    hsdag_graph *g[3];
    hsdag_profile *p[3];
    for (int i = 0; i < 3; i++) {
        g[i] = load(paths[i]);
        p[i] = g[i] ? synthetic_profile(g[i], &truth) : NULL;
        CHECK(g[i] && p[i]);
        if (!g[i] || !p[i]) return;
    }
    hsdag_calib_config cc = hsdag_calib_config_default();
    hsdag_calib_result r;
    hsdag_calib_model m[3];
    hsdag_err e = {0};
    /* fit on two models, predict the third */
    CHECK(hsdag_calibrate_fit(&r, m, (const hsdag_graph *const *)g, (const hsdag_profile *const *)p, 2, &cc,
                              &e) == 0);
    for (int i = 0; i < 2; i++) {
        CHECK(fabs(m[i].predicted_ms / m[i].measured_ms - 1) < 0.02);
        CHECK(m[i].spearman > 0.98);
    }
    CHECK(fabs(r.dev.peak_flops * r.dev.eff[HSDAG_OP_CONV] / 60e9 - 1) < 0.05);
    CHECK(fabs(r.dev.peak_flops * r.dev.eff[HSDAG_OP_MATMUL] / 42e9 - 1) < 0.05);
    /* memory-bound ops: the fitted device may model small ones with a cache level the truth lacks, so compare
     * times, not the bandwidth figure */
    for (double by = 1e6; by <= 1e8; by *= 10) { /* the range of the three models' ops */
        double tf = hsdag_roofline_s(&r.dev, HSDAG_OP_ELEMWISE, 0, by),
               tt = hsdag_roofline_s(&truth, HSDAG_OP_ELEMWISE, 0, by);
        if (fabs(tf / tt - 1) >= 0.15) fprintf(stderr, "bytes %g: fitted %g s, truth %g s\n", by, tf, tt);
        CHECK(fabs(tf / tt - 1) < 0.15);
    }
    hsdag_calib_model held;
    CHECK(hsdag_calibrate_eval(&held, &r.dev, g[2], p[2], &cc, &e) == 0);
    CHECK(fabs(held.predicted_ms / held.measured_ms - 1) < 0.05);
    CHECK(held.spearman > 0.95);
    /* deterministic */
    hsdag_calib_result r2;
    CHECK(hsdag_calibrate_fit(&r2, NULL, (const hsdag_graph *const *)g, (const hsdag_profile *const *)p, 2,
                              &cc, &e) == 0);
    CHECK(r2.dev.peak_flops == r.dev.peak_flops && r2.dev.mem_bw == r.dev.mem_bw && r2.loss == r.loss);
    /* the fitted CPU as a device set of its own and inside a preset; both parse back with the same numbers */
    const char *bases[2] = {NULL, "cpu-gpu"};
    for (int k = 0; k < 2; k++) {
        hsdag_devices *d = NULL, *d2 = NULL;
        CHECK(hsdag_calibrate_devices(&d, &r.dev, "this-cpu", bases[k], &e) == 0);
        if (!d) continue;
        CHECK_EQ_INT(d->n, k ? 2 : 1);
        CHECK_STR(d->name, "this-cpu");
        hsdag_buf b = {0};
        CHECK(hsdag_devices_write_json(&b, d) == 0);
        CHECK(hsdag_devices_parse(&d2, b.data, b.len, "w.json", &e) == 0);
        if (d2) {
            CHECK(d2->dev[0].peak_flops == r.dev.peak_flops && d2->dev[0].launch_s == r.dev.launch_s);
            CHECK(d2->dev[0].eff[HSDAG_OP_MATMUL] == r.dev.eff[HSDAG_OP_MATMUL]);
            if (k) CHECK(d2->dev[1].peak_flops == d->dev[1].peak_flops);
        }
        hsdag_buf_free(&b);
        hsdag_devices_free(d2);
        hsdag_devices_free(d);
    }
    /* a profile naming a node the model does not have */
    static const char badcsv[] = "node,device,ms\nnot_a_node,CPU,1\n";
    hsdag_profile *bp = NULL;
    CHECK(hsdag_profile_parse(&bp, badcsv, sizeof badcsv - 1, "b.csv", &e) == 0);
    const char *labels[1] = {"b.csv"};
    cc.labels = labels;
    CHECK(hsdag_calibrate_fit(&r2, NULL, (const hsdag_graph *const *)g, (const hsdag_profile *const *)&bp, 1,
                              &cc, &e) == HSDAG_EINVAL);
    CHECK(strstr(e.msg, "b.csv: ") == e.msg && strstr(e.msg, "not_a_node"));
    hsdag_profile_free(bp);
    for (int i = 0; i < 3; i++) {
        hsdag_profile_free(p[i]);
        hsdag_graph_free(g[i]);
    }
}

int main(void)
{
    test_ortprof();
    test_fit();
    return check_summary("test_calibrate");
}
