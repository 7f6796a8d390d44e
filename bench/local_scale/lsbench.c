/* lsbench.c - local search at 100k-1M ops (docs/scale.md, "Local search"): the registered local-search placer
 *   called directly, so the CLI's lower bound (minutes under a memory cap at 100k) is not part of the run;
 *   prints the start's latency (the placer stopped after its starts), the final one, the note and CPU seconds.
 * Not here: the scale benchmark itself (scripts/bench-scale.py). Built by make bench and make test as
 *   build/lsbench.
 * Usage: lsbench GRAPH DEVICES MEMSPEC[,MEMSPEC...]|- SEMANTICS CPU_SECONDS [SEED] */
#include "hsdag/io.h"
#include "hsdag/place.h"
#include "hsdag/sim.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: lsbench G DEVS MEMSPEC|- SEM SECONDS [SEED]\n");
        return 2;
    }
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    hsdag_devices *d = NULL;
    hsdag_place_problem *p = NULL;
    double c0 = hsdag_cpu_now();
    if (hsdag_load_file(&g, argv[1], HSDAG_FMT_UNKNOWN, &e) < 0) {
        puts(e.msg);
        return 1;
    }
    if (hsdag_devices_preset(&d, argv[2], g, &e) < 0) {
        puts(e.msg);
        return 1;
    }
    hsdag_sim_config sc = hsdag_sim_config_default();
    hsdag_semantics_parse(&sc.semantics, argv[4], &e);
    for (char *t = strtok(argv[3], ","); t && strcmp(t, "-"); t = strtok(NULL, ","))
        if (hsdag_devices_mem_override(d, g, &sc, t, &e) < 0) {
            puts(e.msg);
            return 1;
        }
    if (hsdag_place_problem_create(&p, g, d, &sc, &e) < 0) {
        puts(e.msg);
        return 1;
    }
    double c1 = hsdag_cpu_now();
    const hsdag_place_method *m = hsdag_place_method_find("local-search");
    int32_t *dev = malloc((size_t)g->n_nodes * sizeof *dev);
    hsdag_place_opts o = hsdag_place_opts_default();
    o.seed = argc > 6 ? strtoull(argv[6], 0, 10) : 0;
    o.time_limit_cpu = 1;
    o.time_limit_s = atof(argv[5]);
    o.max_evals = (p->k == 2 ? p->k + 3 : p->k + 2) + 1; /* the start only */
    hsdag_place_report r0 = {.bound_s = NAN, .objective_s = NAN}, r = r0;
    if (m->fn(p, &o, dev, &r0, &e) < 0) {
        puts(e.msg);
        return 1;
    }
    double c2 = hsdag_cpu_now();
    o.max_evals = 2000000000;
    if (m->fn(p, &o, dev, &r, &e) < 0) {
        puts(e.msg);
        return 1;
    }
    double c3 = hsdag_cpu_now();
    hsdag_sim_result sr;
    hsdag_sim_run(p->sim, dev, &sr);
    printf("n=%d k=%d start %.6f ms final %.6f ms (sim %.6f ms feasible %d) gain %.4f%% | %s | load+problem "
           "%.2f s, start %.2f s, search %.2f s CPU\n",
           g->n_nodes, p->k, r0.objective_s * 1e3, r.objective_s * 1e3, sr.objective_s * 1e3, sr.feasible,
           100 * (1 - r.objective_s / r0.objective_s), r.note, c1 - c0, c2 - c1, c3 - c2);
    return 0;
}
