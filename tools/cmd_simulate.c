/* cmd_simulate.c - 'hsdag simulate MODEL --placement P': latency, lower bound, busy time, transfers and peak
 * memory of one placement on a device set, as text or JSON; the placement again in any output format, a
 * Chrome/Perfetto trace and an evaluation-rate benchmark.
 * Not here: choosing placements ('hsdag place'), the simulator itself (src/sim/).
 * Entry points: cmd_simulate.
 */
#include "simcli.h"

#include <math.h>
#include <string.h>
#include <time.h>

/* Reads the placement; widens a defaulted Tarnawski device set when a split needs more groups. */
static int read_placement(simcli *s, int32_t **dev_out, hsdag_placement_info *pi)
{
    const cli_args *a = s->a;
    hsdag_err e = {0};
    int32_t *dev = hsdag_malloc(((size_t)s->g->n_nodes + 1) * sizeof *dev);
    if (!dev) return cli_fail(a->name, HSDAG_ENOMEM, NULL);
    int rc = hsdag_placement_from_spec(dev, pi, a->placement, s->g, s->devs, &e);
    if (rc < 0 && pi->format == HSDAG_PLF_SPLIT && s->devices_defaulted &&
        s->g->meta.format == HSDAG_FMT_TARNAWSKI &&
        (pi->split_fpgas > s->g->meta.max_accels || pi->split_cpus > s->g->meta.max_cpus)) {
        char spec[64];
        int32_t k = pi->split_fpgas > s->g->meta.max_accels ? pi->split_fpgas : s->g->meta.max_accels;
        int32_t l = pi->split_cpus > s->g->meta.max_cpus ? pi->split_cpus : s->g->meta.max_cpus;
        snprintf(spec, sizeof spec, "tarnawski:%d:%d", (int)k, (int)(l > 0 ? l : 1));
        if (!a->quiet)
            fprintf(stderr,
                    "hsdag simulate: note: the split has %d accelerator and %d CPU groups, the model allows "
                    "%d and %d; simulating on %s (infeasible when over maxFPGAs)\n",
                    (int)pi->split_fpgas, (int)pi->split_cpus, (int)s->g->meta.max_accels,
                    (int)s->g->meta.max_cpus, spec);
        if ((rc = simcli_set_devices(s, spec)) != CLI_OK) {
            hsdag_free(dev);
            return rc;
        }
        rc = hsdag_placement_from_spec(dev, pi, a->placement, s->g, s->devs, &e);
    }
    if (rc < 0) {
        hsdag_free(dev);
        return cli_fail(a->name, rc, &e);
    }
    *dev_out = dev;
    return CLI_OK;
}

/* CPU time of this process: evaluations per second on one core, whatever else the machine is running. */
static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void print_text(const simcli *s, const hsdag_place_problem *p, const int32_t *dev,
                       const hsdag_place_result *pr, const hsdag_placement_info *pi, double eps)
{
    const hsdag_devices *d = p->devs;
    const hsdag_costs *c = p->c;
    const hsdag_sim_result *r = &pr->sim;
    printf("model      %s (%d nodes, %d edges)\n", s->model, (int)s->g->n_nodes, (int)s->g->n_edges);
    printf("devices    %s (%d), semantics %s, op costs %s%s\n", d->name, (int)d->n,
           hsdag_semantics_name(r->semantics), hsdag_costsrc_name(c->source),
           c->n_profiled ? " + profile" : "");
    printf("placement  %s (%d nodes listed)\n", s->a->placement, (int)pi->n_listed);
    printf("latency    %.6f ms   (lower bound %.6f ms, %s)\n", r->makespan_s * 1e3, pr->lower_bound_s * 1e3,
           pr->lower_bound_rule);
    printf("feasible   %s", r->feasible ? "yes" : "no");
    if (r->max_excess_bytes > 0) printf(" - memory exceeded by %.0f bytes", r->max_excess_bytes);
    if (r->n_unsupported) printf(" - %d ops on devices that cannot run them", (int)r->n_unsupported);
    if (r->n_color_violations) printf(" - %d colour classes split", (int)r->n_color_violations);
    if (d->max_accels_used >= 0 && r->accels_used > d->max_accels_used)
        printf(" - %d accelerators used, %d allowed", (int)r->accels_used, (int)d->max_accels_used);
    printf("\n");
    printf("transfers  %lld copies, %.0f bytes, %.6f ms\n", (long long)r->n_xfers, r->xfer_bytes,
           r->xfer_s * 1e3);
    if (r->semantics == HSDAG_SEM_TARNAWSKI)
        printf("blocks     %d accelerator blocks, %d cycle cuts\n", (int)r->n_blocks, (int)r->n_cycle_cuts);
    printf("%-12s %5s %12s %16s %16s\n", "device", "ops", "busy ms", "peak bytes", "capacity");
    for (int32_t k = 0; k < d->n; k++) {
        int32_t ops = 0;
        for (int32_t v = 0; v < s->g->n_nodes; v++) ops += dev[v] == k;
        char cap[32];
        if (d->dev[k].mem_capacity > 0)
            snprintf(cap, sizeof cap, "%.0f", d->dev[k].mem_capacity);
        else
            snprintf(cap, sizeof cap, "unlimited");
        printf("%-12.12s %5d %12.6f %16.0f %16s%s\n", d->dev[k].name, (int)ops, r->busy_s[k] * 1e3,
               r->peak_mem_bytes[k], cap, r->excess_bytes[k] > 0 ? "  OVER" : "");
    }
    if (eps > 0) printf("speed      %.0f evaluations/s\n", eps);
}

int cmd_simulate(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, CMD_SIMULATE);
    int rc = cli_parse(&a, argc, argv);
    if (rc != CLI_CONTINUE) return rc;
    if (!a.placement)
        return cli_usage_error(a.name, "missing --placement (a file, a device name or cpu-only)");
    simcli s = {0};
    hsdag_place_problem *p = NULL;
    int32_t *dev = NULL;
    hsdag_err e = {0};
    hsdag_placement_info pi = {0};
    if ((rc = simcli_load(&a, &s)) != CLI_OK) goto done;
    if ((rc = read_placement(&s, &dev, &pi)) != CLI_OK) goto done;
    if ((rc = simcli_problem(&s, &p)) != CLI_OK) goto done;
    if (cli_given(&a, priority) && p->sem != HSDAG_SEM_CONCURRENT) {
        rc = cli_usage_error(a.name, "--priority applies to concurrent semantics only (this run is %s)",
                             hsdag_semantics_name(p->sem));
        goto done;
    }
    hsdag_place_result r;
    int st = hsdag_place_score(p, dev, &r, &e);
    if (st < 0) {
        rc = cli_fail(a.name, st, &e);
        goto done;
    }
    double eps = NAN;
    if (cli_given(&a, repeat)) {
        hsdag_sim_result r2;
        double t0 = cpu_seconds();
        for (long i = 0; i < a.repeat; i++) hsdag_sim_run(p->sim, dev, &r2);
        double dt = cpu_seconds() - t0;
        eps = dt > 0 ? round((double)a.repeat / dt) : INFINITY;
        hsdag_place_score(p, dev, &r, &e); /* the reported result is the same evaluation */
    }
    if (a.json) {
        hsdag_buf b = {0};
        hsdag_place_json_info info = {.model = s.model,
                                      .placement = a.placement,
                                      .placement_format = hsdag_placement_format_name(pi.format),
                                      .seed = -1,
                                      .evals_per_s = eps};
        hsdag_place_result_write_json(&b, p, dev, &r, &info);
        rc = cli_write_out(a.name, "-", &b);
        hsdag_buf_free(&b);
    } else {
        print_text(&s, p, dev, &r, &pi, isnan(eps) ? 0 : eps);
        rc = CLI_OK;
    }
    simcli_outputs o = simcli_outputs_of(&a);
    if (rc == CLI_OK) rc = simcli_write_outputs(&s, p, dev, &o);
done:
    hsdag_place_problem_free(p);
    hsdag_free(dev);
    simcli_free(&s);
    return rc;
}
