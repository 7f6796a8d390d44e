/* bench_place.c - `make bench` section: time to place with each method on BERT-base and Inception-V3
 * (median of repeated runs, thread CPU time), with the resulting latency and gap to the bound.
 * Not here: correctness (tests/test_place.c). Entry points: bench_place. */
#include "hsdag/io.h"
#include "hsdag/place.h"

#include <math.h>
#include <string.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void one_model(const char *path, const char *label, const char *preset)
{
    static const struct {
        const char *m;
        int runs;
    } methods[] = {{"gpu-only", 21}, {"heft", 21}, {"m-etf", 21},       {"m-topo", 21}, {"mincut", 21},
                   {"metis", 11},    {"m-sct", 3}, {"local-search", 1}, {"ilp", 1}};
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    hsdag_devices *d = NULL;
    hsdag_place_problem *p = NULL;
    if (hsdag_load_file(&g, path, HSDAG_FMT_UNKNOWN, &e) < 0 || hsdag_devices_preset(&d, preset, g, &e) < 0 ||
        hsdag_place_problem_create(&p, g, d, NULL, &e) < 0) {
        fprintf(stderr, "bench_place: %s\n", e.msg);
        goto done;
    }
    int32_t *dev = hsdag_malloc((size_t)g->n_nodes * sizeof *dev);
    for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
        double t[21];
        hsdag_place_result r;
        int runs = methods[i].runs, ok = 1;
        for (int k = 0; k < runs && ok; k++) {
            hsdag_place_opts o = hsdag_place_opts_default();
            double t0 = cpu_s();
            if (hsdag_place_run(p, methods[i].m, &o, dev, &r, &e) < 0) ok = 0;
            t[k] = cpu_s() - t0;
        }
        if (!ok) {
            printf("| %-12s | %-9s | %-13s | %12s | %10s | %8s |\n", label, preset, methods[i].m, "n/a", "",
                   "");
            continue;
        }
        qsort(t, (size_t)runs, sizeof *t, cmp_d);
        printf("| %-12s | %-9s | %-13s | %12.3f | %10.4f | %7.2f%% |\n", label, preset, methods[i].m,
               t[runs / 2] * 1e3, r.latency_s * 1e3, 100 * r.gap);
    }
    hsdag_free(dev);
done:
    hsdag_place_problem_free(p);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

void bench_place(void)
{
    printf("\n## Placement: CPU time to place (median; includes one scoring run), latency and gap to the "
           "bound\n\n");
    printf("| %-12s | %-9s | %-13s | %12s | %10s | %8s |\n", "model", "devices", "method", "place ms",
           "latency ms", "gap");
    printf("|--------------|-----------|---------------|--------------|------------|----------|\n");
    one_model("tests/data/onnx/bert_base.onnx", "BERT-base", "cpu-gpu");
    one_model("tests/data/onnx/inception_v3.onnx", "Inception-V3", "cpu-gpu");
    one_model("tests/data/onnx/bert_base.onnx", "BERT-base", "cpu-4gpu");
    printf("\nTargets: HEFT, m-ETF and mincut under 10 ms on BERT-base; ILP within its time limit (10 s).\n");
}
