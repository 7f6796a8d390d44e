/* bench_learn.c - `make bench` sections for the learners: HSDAG's 500-placement budget (25 x 20) per model
 * in thread CPU time, with the time per training step; PAC-ML's 1001-job episode per policy.
 * Not here: result quality (docs/results.md, make results). Entry points: bench_learn, bench_cluster. */
#include "hsdag/cluster.h"
#include "hsdag/learn.h"
#include "hsdag/io.h"

#include <math.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void learn_one(const char *path, const char *label)
{
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    hsdag_devices *d = NULL;
    hsdag_place_problem *p = NULL;
    hsdag_learn *L = NULL;
    if (hsdag_load_file(path, HSDAG_FMT_UNKNOWN, &g, &e) < 0 ||
        hsdag_devices_preset("cpu-gpu", g, &d, &e) < 0 || hsdag_place_problem_create(&p, g, d, NULL, &e) < 0)
        goto fail;
    hsdag_learn_config cfg = hsdag_learn_config_default();
    double t0 = cpu_s();
    if (hsdag_learn_create(&L, g, d->n, &cfg, &e) < 0) goto fail;
    double t1 = cpu_s();
    if (hsdag_learn_train(L, hsdag_learn_sim_eval, p->sim, NULL, NULL, &e) < 0) goto fail;
    double t2 = cpu_s();
    const int32_t *best;
    double lat;
    hsdag_learn_best(L, &best, &lat, NULL);
    long long n = (long long)hsdag_learn_evals(L);
    printf("| %-12s | %6d | %10lld | %9.3f | %9.3f | %10.3f | %10.4f |\n", label, (int)g->n_nodes, n, t1 - t0,
           t2 - t1, 1e3 * (t2 - t1) / (double)n, lat * 1e3);
    goto done;
fail:
    fprintf(stderr, "bench_learn: %s\n", e.msg);
done:
    hsdag_learn_free(L);
    hsdag_place_problem_free(p);
    hsdag_devices_free(d);
    hsdag_graph_free(g);
}

void bench_learn(void)
{
    hsdag_nn_set_threads(1);
    printf("\n## HSDAG training: the paper's budget (25 episodes x 20 placements), cpu-gpu, thread CPU "
           "time\n\n");
    printf("| %-12s | %6s | %10s | %9s | %9s | %10s | %10s |\n", "model", "nodes", "placements", "setup s",
           "train s", "ms / step", "best ms");
    printf("|--------------|--------|------------|-----------|-----------|------------|------------|\n");
    learn_one("tests/data/onnx/inception_v3.onnx", "Inception-V3");
    learn_one("tests/data/onnx/resnet50.onnx", "ResNet-50");
    learn_one("tests/data/onnx/bert_base.onnx", "BERT-base");
    printf("\nTarget: 500 placements on Inception-V3 in under 2 s on one core.\n");
}

void bench_cluster(void)
{
    static const char *pols[] = {"para-max", "para-min", "fixed:4", "lookahead", "learned"};
    hsdag_err e = {0};
    hsdag_cluster *env = NULL;
    hsdag_cluster_config c = hsdag_cluster_config_default();
    printf("\n## PAC-ML: one 1001-job episode (beta A), thread CPU time, median of 11\n\n");
    double t0 = cpu_s();
    if (hsdag_cluster_create(&c, NULL, NULL, 0, &env, &e) < 0) {
        fprintf(stderr, "bench_cluster: %s\n", e.msg);
        return;
    }
    printf("environment set-up (lookahead JCTs of 5 models x 6 degrees): %.1f ms\n\n", 1e3 * (cpu_s() - t0));
    printf("| %-16s | %9s | %13s |\n", "policy", "ms", "blocking rate");
    printf("|------------------|-----------|---------------|\n");
    for (size_t i = 0; i < sizeof pols / sizeof pols[0]; i++) {
        hsdag_cluster_policy p;
        if (hsdag_cluster_policy_parse(pols[i], &p, &e) < 0) continue;
        double t[11];
        hsdag_cluster_metrics m;
        int ok = 1;
        for (int k = 0; k < 11 && ok; k++) {
            double s = cpu_s();
            ok = hsdag_cluster_run(env, &p, 0, &m, &e) == 0;
            t[k] = cpu_s() - s;
        }
        if (!ok) {
            printf("| %-16s | %9s | %13s |\n", pols[i], "n/a", e.msg);
            continue;
        }
        for (int a = 0; a < 11; a++)
            for (int b = a + 1; b < 11; b++)
                if (t[b] < t[a]) {
                    double x = t[a];
                    t[a] = t[b];
                    t[b] = x;
                }
        printf("| %-16s | %9.3f | %13.3f |\n", pols[i], 1e3 * t[5], m.blocking_rate);
    }
    hsdag_cluster_free(env);
    printf("\nTarget: one 1001-job episode with a heuristic policy in under 100 ms on one core.\n");
}
