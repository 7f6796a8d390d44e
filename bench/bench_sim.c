/* bench_sim.c - `make bench` section for the simulator: evaluations per CPU second of each semantics on the
 * bundled ResNet-50, Inception-V3 and BERT-base ONNX graphs and a Tarnawski workload, random placements
 * (seeded), median of several timed batches.
 * Not here: correctness (tests/test_sim.c); no timed assertions (shared, noisy machines).
 * Entry points: bench_sim (called from bench.c's main).
 */
#include "hsdag/io.h"
#include "hsdag/sim.h"

#include <stdlib.h>
#include <time.h>

void bench_sim(void);

static double sim_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int sim_dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define SIM_BATCHES 7
#define SIM_PLACEMENTS 64

/* Median over batches of evaluations per CPU second; each batch cycles through 64 random placements. */
static double sim_rate(hsdag_sim *s, const int32_t *pl, int32_t n, double min_batch_s)
{
    hsdag_sim_result r;
    long per = 16;
    for (;;) { /* size a batch to take about min_batch_s */
        double t0 = sim_cpu_now();
        for (long i = 0; i < per; i++) hsdag_sim_run(s, pl + (size_t)(i % SIM_PLACEMENTS) * n, &r);
        if (sim_cpu_now() - t0 >= min_batch_s || per > (1L << 28)) break;
        per *= 2;
    }
    double rate[SIM_BATCHES];
    for (int b = 0; b < SIM_BATCHES; b++) {
        double t0 = sim_cpu_now();
        for (long i = 0; i < per; i++) hsdag_sim_run(s, pl + (size_t)(i % SIM_PLACEMENTS) * n, &r);
        double dt = sim_cpu_now() - t0;
        rate[b] = dt > 0 ? (double)per / dt : 0;
    }
    qsort(rate, SIM_BATCHES, sizeof *rate, sim_dbl_cmp);
    return rate[SIM_BATCHES / 2];
}

static void sim_model(const char *path, const char *label, const char *devices)
{
    hsdag_graph *g = NULL;
    hsdag_devices *d = NULL;
    hsdag_sim *s = NULL;
    hsdag_err e = {0};
    if (hsdag_load_file(&g, path, HSDAG_FMT_UNKNOWN, &e) < 0 || hsdag_devices_load(&d, devices, g, &e) < 0 ||
        hsdag_sim_create(&s, g, d, NULL, &e) < 0) {
        printf("| %-28s | %s |\n", label, e.msg);
        goto out;
    }
    int32_t n = g->n_nodes;
    int32_t *pl = malloc((size_t)SIM_PLACEMENTS * (size_t)n * sizeof *pl);
    hsdag_rng rng;
    hsdag_rng_seed(&rng, 42);
    /* random placements by contiguous topological runs (a placer's typical output), 1 to 9 switches */
    for (int p = 0; p < SIM_PLACEMENTS; p++) {
        int32_t cur = (int32_t)hsdag_rng_below(&rng, (uint32_t)d->n);
        double sw = (1.0 + hsdag_rng_below(&rng, 9)) / (n > 0 ? n : 1);
        for (int32_t v = 0; v < n; v++) {
            if (hsdag_rng_uniform(&rng) < sw) cur = (int32_t)hsdag_rng_below(&rng, (uint32_t)d->n);
            pl[(size_t)p * n + v] = cur;
        }
    }
    printf("| %-28s | %-9s | %6d |", label, d->name, (int)n);
    for (int sem = 0; sem < HSDAG_SEM_COUNT_; sem++) {
        hsdag_sim_set_semantics(s, (hsdag_semantics)sem);
        printf(" %11.0f |", sim_rate(s, pl, n, 0.02));
    }
    printf("\n");
    free(pl);
out:
    hsdag_sim_free(s);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

void bench_sim(void)
{
    printf("\n## Simulator: evaluations per CPU second (median of %d batches, %d random placements)\n\n",
           SIM_BATCHES, SIM_PLACEMENTS);
    printf("| %-28s | %-9s | %6s | %11s | %11s | %11s |\n", "model", "devices", "nodes", "sequential",
           "concurrent", "tarnawski");
    printf(
        "|------------------------------|-----------|--------|-------------|-------------|-------------|\n");
    sim_model("tests/data/onnx/resnet50.onnx", "ResNet-50 (ONNX)", "cpu-gpu");
    sim_model("tests/data/onnx/inception_v3.onnx", "Inception-V3 (ONNX)", "cpu-gpu");
    sim_model("tests/data/onnx/bert_base.onnx", "BERT-base (ONNX)", "cpu-gpu");
    sim_model("tests/data/onnx/bert_base.onnx", "BERT-base (ONNX)", "cpu-4gpu");
    sim_model("tests/data/tarnawski/latency-inputs/OperatorGraphs/bert_l-3_inference.json",
              "BERT-3 ops (Tarnawski)", NULL);
    printf("\nTargets (issue 3): >= 200,000/s on ResNet-50 and >= 50,000/s on BERT-base, one core; "
           "docs/simulator.md "
           "section 7 says which semantics meet them.\n");
}
