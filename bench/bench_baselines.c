/* bench_baselines.c - `make bench` section for the learned placers at the HSDAG paper's budget: thread CPU
 * time per measurement (500 measurements, cpu-4gpu) of HSDAG, Placeto and the RNN placer, on every bundled model
 * and a generated 10,000-op graph, run side by side so the ratios compare like with like.
 * Not here: result quality (docs/results.md, make results). Entry points: bench_baselines. */
#include "hsdag/io.h"
#include "hsdag/placeto.h"
#include "hsdag/rnnplace.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

uint8_t *bench_make_big_onnx(int target_nodes, size_t *len); /* bench.c */

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* seconds of thread CPU time for 500 measurements of one method, or NAN; *lat the best latency */
static double run(hsdag_place_problem *p, int which, double *lat, int64_t *evals)
{
    hsdag_err e = {0};
    double t0 = cpu_s(), t = NAN;
    *lat = NAN;
    *evals = 0;
    if (which == 0) {
        hsdag_learn_config c = hsdag_learn_config_default();
        hsdag_learn *L = NULL;
        if (hsdag_learn_create(&L, p->g, p->k, &c, &e) == 0 &&
            hsdag_learn_train(L, hsdag_learn_sim_eval, p->sim, NULL, NULL, &e) == 0) {
            t = cpu_s() - t0;
            hsdag_learn_best(L, NULL, lat, NULL);
            *evals = hsdag_learn_evals(L);
        }
        hsdag_learn_free(L);
    } else if (which == 1) {
        hsdag_placeto_config c = hsdag_placeto_config_default();
        hsdag_placeto_policy *pol = NULL;
        hsdag_placeto *P = NULL;
        if (hsdag_placeto_policy_create(&pol, p->k, &c, &e) == 0 &&
            hsdag_placeto_create(&P, p, &c, &e) == 0 &&
            hsdag_placeto_train(P, pol, hsdag_learn_sim_eval, p->sim, c.budget, -1, &e) == 0) {
            t = cpu_s() - t0;
            hsdag_placeto_best(P, NULL, lat, NULL, NULL);
            *evals = hsdag_placeto_evals(P);
        }
        hsdag_placeto_free(P);
        hsdag_placeto_policy_free(pol);
    } else {
        hsdag_rnnplace_config c = hsdag_rnnplace_config_default();
        hsdag_rnnplace *R = NULL;
        if (hsdag_rnnplace_create(&R, p, &c, &e) == 0 &&
            hsdag_rnnplace_train(R, hsdag_learn_sim_eval, p->sim, c.budget, &e) == 0) {
            t = cpu_s() - t0;
            hsdag_rnnplace_best(R, NULL, lat, NULL, NULL);
            *evals = hsdag_rnnplace_evals(R);
        }
        hsdag_rnnplace_free(R);
    }
    if (isnan(t)) fprintf(stderr, "bench_baselines: %s\n", e.msg);
    return t;
}

static void one(hsdag_graph *g, const char *label)
{
    static const char *names[3] = {"hsdag", "placeto", "rnn"};
    hsdag_err e = {0};
    hsdag_devices *d = NULL;
    hsdag_place_problem *p = NULL;
    if (hsdag_devices_preset(&d, "cpu-4gpu", g, &e) < 0 ||
        hsdag_place_problem_create(&p, g, d, NULL, &e) < 0) {
        fprintf(stderr, "bench_baselines: %s\n", e.msg);
        goto done;
    }
    double ms[3];
    for (int w = 0; w < 3; w++) {
        double lat;
        int64_t n;
        double t = run(p, w, &lat, &n);
        ms[w] = n ? 1e3 * t / (double)n : NAN;
        printf("| %-16s | %6d | %-8s | %6lld | %9.2f | %8.2f | %7.2fx | %10.4f |\n", label, (int)g->n_nodes,
               names[w], (long long)n, t, ms[w], ms[w] / ms[0], lat * 1e3);
    }
done:
    hsdag_place_problem_free(p);
    hsdag_devices_free(d);
}

void bench_baselines(void)
{
    hsdag_nn_set_threads(1);
    printf("\n## Learned placers at 500 measurements (cpu-4gpu), thread CPU time, one run each\n\n");
    printf("| %-16s | %6s | %-8s | %6s | %9s | %8s | %8s | %10s |\n", "model", "ops", "method", "evals",
           "total s", "ms/eval", "vs hsdag", "best ms");
    printf(
        "|------------------|--------|----------|--------|-----------|----------|----------|------------|\n");
    static const char *models[] = {"alexnet",  "bert_base",     "googlenet", "inception_v3", "mobilenet_v2",
                                   "resnet50", "squeezenet1_1", "vgg16",     "vit_b_16"};
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/data/onnx/%s.onnx", models[i]);
        hsdag_graph *g = NULL;
        hsdag_err e = {0};
        if (hsdag_load_file(&g, path, HSDAG_FMT_UNKNOWN, &e) < 0) {
            fprintf(stderr, "bench_baselines: %s\n", e.msg);
            continue;
        }
        one(g, models[i]);
        hsdag_graph_free(g);
    }
    size_t len = 0;
    uint8_t *big = bench_make_big_onnx(10000, &len);
    hsdag_graph *g = NULL;
    hsdag_err e = {0};
    if (hsdag_load(&g, big, len, HSDAG_FMT_UNKNOWN, "generated 10,000-op graph", &e) == 0)
        one(g, "generated 10k");
    else
        fprintf(stderr, "bench_baselines: %s\n", e.msg);
    hsdag_graph_free(g);
    free(big);
    printf("\nTarget: Placeto and the RNN placer within the same order of time per measurement as HSDAG (< "
           "10x).\n");
}
