/* cmd_simulate.c - 'hsdag simulate MODEL --placement P': latency, busy time, transfers and peak memory of one
 * placement on a device set, as text or JSON, optionally a Chrome/Perfetto trace and an evaluation-rate
 * benchmark.
 * Not here: choosing placements ('hsdag place'), the simulator itself (src/sim/).
 * Entry points: cmd_simulate.
 */
#include "simcli.h"

#include <getopt.h>
#include <math.h>
#include <string.h>
#include <time.h>

static void help(void)
{
    printf(
        "usage: hsdag simulate MODEL --placement P [options]\n\n"
        "Simulates one inference request of MODEL (ONNX, OpenVINO IR, Tarnawski JSON, PipeDream, hsdag "
        "JSON,\n"
        "NNCF DOT) placed by P on a device set, and prints its latency, busy time per device, transfers and\n"
        "peak memory per device. A placement that exceeds a memory capacity, puts an op on a device that\n"
        "cannot run it, splits a colour class or uses more accelerators than allowed is reported "
        "infeasible.\n\n"
        "options:\n"
        "  --placement P     an hsdag placement JSON, an OpenVINO affinity map, a Tarnawski split, or a\n"
        "                    shorthand: a device name or '<device>-only' / 'cpu-only' / 'gpu-only'\n");
    simcli_help_common(stdout);
    printf("  --priority R      concurrent semantics: rank (HEFT upward rank, default) | topo\n"
           "  --trace FILE      write the schedule as Chrome/Perfetto trace JSON (chrome://tracing, "
           "ui.perfetto.dev)\n"
           "  --repeat N        run the same evaluation N more times and report evaluations per second of\n"
           "                    CPU time (one core; \"evals_per_s\" in --json)\n"
           "  --export-json F   write the placement as hsdag placement JSON\n"
           "  --export-affinity F  write it as an OpenVINO affinity map (layer -> \"CPU\"/\"GPU\")\n"
           "  --export-split F  write it as a Tarnawski split\n"
           "  --help            this text\n\n"
           "For a Tarnawski split with more accelerator groups than the model's maxFPGAs, the default device "
           "set\n"
           "is widened to fit and the result is marked infeasible.\n"
           "Exit status: 0 ok (also for an infeasible placement), 1 failure, 2 bad input or options.\n");
}

typedef struct sim_opts {
    const char *placement, *trace, *exp_json, *exp_aff, *exp_split;
    hsdag_semantics sem;
    hsdag_costsrc costs;
    hsdag_priority prio;
    long repeat;
    int json;
} sim_opts;

/* Reads the placement; widens a defaulted Tarnawski device set when a split needs more groups. */
static int read_placement(simcli *s, const sim_opts *o, int32_t **dev_out, hsdag_placement_info *pi)
{
    hsdag_err e = {0};
    int32_t *dev = hsdag_malloc(((size_t)s->g->n_nodes + 1) * sizeof *dev);
    if (!dev) return cli_fail("simulate", HSDAG_ENOMEM, NULL);
    int rc = hsdag_placement_from_spec(dev, pi, o->placement, s->g, s->devs, &e);
    if (rc < 0 && pi->format == HSDAG_PLF_SPLIT && s->devices_defaulted &&
        s->g->meta.format == HSDAG_FMT_TARNAWSKI &&
        (pi->split_fpgas > s->g->meta.max_accels || pi->split_cpus > s->g->meta.max_cpus)) {
        char spec[64];
        int32_t k = pi->split_fpgas > s->g->meta.max_accels ? pi->split_fpgas : s->g->meta.max_accels;
        int32_t l = pi->split_cpus > s->g->meta.max_cpus ? pi->split_cpus : s->g->meta.max_cpus;
        snprintf(spec, sizeof spec, "tarnawski:%d:%d", (int)k, (int)(l > 0 ? l : 1));
        fprintf(stderr,
                "hsdag simulate: note: the split has %d accelerator and %d CPU groups, the model allows %d "
                "and %d; simulating on %s (infeasible when over maxFPGAs)\n",
                (int)pi->split_fpgas, (int)pi->split_cpus, (int)s->g->meta.max_accels,
                (int)s->g->meta.max_cpus, spec);
        if ((rc = simcli_set_devices("simulate", s, spec)) != CLI_OK) {
            hsdag_free(dev);
            return rc;
        }
        rc = hsdag_placement_from_spec(dev, pi, o->placement, s->g, s->devs, &e);
    }
    if (rc < 0) {
        hsdag_free(dev);
        return cli_fail("simulate", rc, &e);
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

static int export_one(const char *path, int which, const simcli *s, const int32_t *dev)
{
    if (!path) return CLI_OK;
    hsdag_buf b = {0};
    int rc = which == 0   ? hsdag_placement_write_json(&b, s->g, s->devs, dev)
             : which == 1 ? hsdag_placement_write_affinity(&b, s->g, s->devs, dev)
                          : hsdag_placement_write_split(&b, s->g, s->devs, dev);
    int out = rc < 0 ? cli_fail("simulate", rc, NULL) : cli_write_out("simulate", path, &b);
    hsdag_buf_free(&b);
    return out;
}

static void print_text(const simcli *s, const hsdag_sim *sim, const int32_t *dev, const hsdag_sim_result *r,
                       const hsdag_bound *bd, const hsdag_placement_info *pi, const char *placement,
                       double eps)
{
    const hsdag_devices *d = s->devs;
    const hsdag_costs *c = hsdag_sim_costs(sim);
    printf("model      %s (%d nodes, %d edges)\n", s->model, (int)s->g->n_nodes, (int)s->g->n_edges);
    printf("devices    %s (%d), semantics %s, op costs %s%s\n", d->name, (int)d->n,
           hsdag_semantics_name(r->semantics), simcli_costs_name(c->source),
           c->n_profiled ? " + profile" : "");
    printf("placement  %s (%d nodes listed)\n", placement, (int)pi->n_listed);
    printf("latency    %.6f ms   (lower bound %.6f ms, %s)\n", r->makespan_s * 1e3, bd->lower_s * 1e3,
           bd->rule);
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

static void print_json(const simcli *s, const hsdag_sim *sim, const hsdag_sim_result *r,
                       const hsdag_bound *bd, const hsdag_placement_info *pi, const char *placement,
                       double eps, hsdag_buf *b)
{
    const hsdag_devices *d = s->devs;
    const hsdag_costs *c = hsdag_sim_costs(sim);
    static const char *const pf[] = {"unknown", "hsdag", "affinity", "tarnawski-split", "shorthand"};
    hsdag_buf_printf(b, "{\"model\": ");
    hsdag_buf_json_str(b, s->model);
    hsdag_buf_printf(b, ", \"nodes\": %d, \"edges\": %d, \"devices\": ", (int)s->g->n_nodes,
                     (int)s->g->n_edges);
    hsdag_buf_json_str(b, d->name);
    hsdag_buf_printf(b, ", \"semantics\": \"%s\", \"op_costs\": \"%s\", \"profiled\": %d, \"placement\": ",
                     hsdag_semantics_name(r->semantics), simcli_costs_name(c->source), (int)c->n_profiled);
    hsdag_buf_json_str(b, placement);
    hsdag_buf_printf(b, ", \"placement_format\": \"%s\",\n \"latency_ms\": ", pf[pi->format]);
    hsdag_buf_double(b, r->makespan_s * 1e3);
    hsdag_buf_printf(b, ", \"lower_bound_ms\": ");
    hsdag_buf_double(b, bd->lower_s * 1e3);
    hsdag_buf_printf(b, ", \"lower_bound_rule\": \"%s\", \"feasible\": %s, \"max_excess_bytes\": ", bd->rule,
                     r->feasible ? "true" : "false");
    hsdag_buf_double(b, r->max_excess_bytes);
    hsdag_buf_printf(b,
                     ", \"unsupported_ops\": %d, \"color_violations\": %d, \"accelerators_used\": %d, "
                     "\"max_accelerators\": %d,\n \"transfers\": %lld, \"transfer_bytes\": ",
                     (int)r->n_unsupported, (int)r->n_color_violations, (int)r->accels_used,
                     (int)d->max_accels_used, (long long)r->n_xfers);
    hsdag_buf_double(b, r->xfer_bytes);
    hsdag_buf_printf(b, ", \"transfer_ms\": ");
    hsdag_buf_double(b, r->xfer_s * 1e3);
    if (r->semantics == HSDAG_SEM_TARNAWSKI)
        hsdag_buf_printf(b, ", \"blocks\": %d, \"cycle_cuts\": %d", (int)r->n_blocks, (int)r->n_cycle_cuts);
    const char *keys[] = {"busy_ms", "peak_memory_bytes", "excess_bytes", "capacity_bytes"};
    for (int f = 0; f < 4; f++) {
        hsdag_buf_printf(b, ",\n \"%s\": {", keys[f]);
        for (int32_t k = 0; k < d->n; k++) {
            hsdag_buf_printf(b, "%s", k ? ", " : "");
            hsdag_buf_json_str(b, d->dev[k].name);
            hsdag_buf_printf(b, ": ");
            double x = f == 0   ? r->busy_s[k] * 1e3
                       : f == 1 ? r->peak_mem_bytes[k]
                       : f == 2 ? r->excess_bytes[k]
                                : d->dev[k].mem_capacity;
            hsdag_buf_double(b, x);
        }
        hsdag_buf_printf(b, "}");
    }
    if (eps > 0) {
        hsdag_buf_printf(b, ",\n \"evals_per_s\": ");
        hsdag_buf_double(b, round(eps));
    }
    hsdag_buf_printf(b, "}\n");
}

static int parse_opts(int argc, char **argv, sim_opts *o, simcli *s)
{
    static const struct option lo[] = {{"placement", required_argument, 0, 'p'},
                                       {"devices", required_argument, 0, 'd'},
                                       {"semantics", required_argument, 0, 's'},
                                       {"costs", required_argument, 0, 'c'},
                                       {"profile", required_argument, 0, 'P'},
                                       {"priority", required_argument, 0, 'r'},
                                       {"trace", required_argument, 0, 't'},
                                       {"repeat", required_argument, 0, 'n'},
                                       {"json", no_argument, 0, 'j'},
                                       {"export-json", required_argument, 0, 'J'},
                                       {"export-affinity", required_argument, 0, 'A'},
                                       {"export-split", required_argument, 0, 'S'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    opterr = 0;
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (ch) {
        case 'p':
            o->placement = optarg;
            break;
        case 'd':
            s->devices = optarg;
            break;
        case 's':
            if (hsdag_semantics_parse(&o->sem, optarg, NULL) < 0)
                return cli_usage_error("simulate",
                                       "--semantics '%s': want sequential, concurrent or tarnawski", optarg);
            break;
        case 'c':
            if (simcli_parse_costs(optarg, &o->costs) < 0)
                return cli_usage_error("simulate", "--costs '%s': want auto, roofline or file", optarg);
            break;
        case 'P':
            s->profile = optarg;
            break;
        case 'r':
            if (strcmp(optarg, "rank") == 0)
                o->prio = HSDAG_PRIO_UPWARD_RANK;
            else if (strcmp(optarg, "topo") == 0)
                o->prio = HSDAG_PRIO_TOPO;
            else
                return cli_usage_error("simulate", "--priority '%s': want rank or topo", optarg);
            break;
        case 't':
            o->trace = optarg;
            break;
        case 'n':
            if (cli_parse_int(optarg, 1, 1000000000L, &o->repeat) < 0)
                return cli_usage_error("simulate", "--repeat '%s': want an integer 1..1e9", optarg);
            break;
        case 'j':
            o->json = 1;
            break;
        case 'J':
            o->exp_json = optarg;
            break;
        case 'A':
            o->exp_aff = optarg;
            break;
        case 'S':
            o->exp_split = optarg;
            break;
        case 'h':
            help();
            return -1;
        case ':':
            return cli_usage_error("simulate", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("simulate", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("simulate", optind >= argc ? "no MODEL given" : "more than one MODEL given");
    s->model = argv[optind];
    if (!o->placement)
        return cli_usage_error("simulate", "no --placement given (a file, a device name or cpu-only)");
    return 0;
}

int cmd_simulate(int argc, char **argv)
{
    sim_opts o = {.sem = HSDAG_SEM_AUTO, .costs = HSDAG_COSTSRC_AUTO, .prio = HSDAG_PRIO_UPWARD_RANK};
    simcli s = {0};
    int rc = parse_opts(argc, argv, &o, &s);
    if (rc) return rc < 0 ? CLI_OK : rc;
    int32_t *dev = NULL;
    hsdag_sim *sim = NULL;
    hsdag_buf b = {0};
    hsdag_err e = {0};
    hsdag_placement_info pi = {0};
    if ((rc = simcli_load("simulate", &s)) != CLI_OK) goto done;
    if ((rc = read_placement(&s, &o, &dev, &pi)) != CLI_OK) goto done;
    hsdag_sim_config cfg = hsdag_sim_config_default();
    cfg.semantics = o.sem;
    cfg.priority = o.prio;
    cfg.costs.source = o.costs;
    cfg.costs.profile = s.prof;
    cfg.record_trace = o.trace != NULL;
    int lrc = hsdag_sim_create(&sim, s.g, s.devs, &cfg, &e);
    if (lrc < 0) {
        rc = cli_fail("simulate", lrc, &e);
        goto done;
    }
    hsdag_sim_result r;
    if ((lrc = hsdag_sim_run(sim, dev, &r)) < 0) {
        rc = cli_fail("simulate", lrc, &e);
        goto done;
    }
    double eps = 0;
    if (o.repeat > 0) {
        hsdag_sim_result r2;
        double t0 = cpu_seconds();
        for (long i = 0; i < o.repeat; i++) hsdag_sim_run(sim, dev, &r2);
        double dt = cpu_seconds() - t0;
        eps = dt > 0 ? (double)o.repeat / dt : INFINITY;
        hsdag_sim_run(sim, dev, &r); /* the reported result (and trace) is the same evaluation */
    }
    hsdag_bound bd;
    if ((lrc = hsdag_bound_compute(&bd, hsdag_sim_costs(sim), r.semantics, NULL, NULL, &e)) < 0) {
        rc = cli_fail("simulate", lrc, &e);
        goto done;
    }
    if (o.trace) {
        hsdag_buf tb = {0};
        lrc = hsdag_sim_trace_write(sim, &tb, &e);
        rc = lrc < 0 ? cli_fail("simulate", lrc, &e) : cli_write_out("simulate", o.trace, &tb);
        hsdag_buf_free(&tb);
        if (rc != CLI_OK) goto done;
    }
    if ((rc = export_one(o.exp_json, 0, &s, dev)) != CLI_OK ||
        (rc = export_one(o.exp_aff, 1, &s, dev)) != CLI_OK ||
        (rc = export_one(o.exp_split, 2, &s, dev)) != CLI_OK)
        goto done;
    if (o.json) {
        print_json(&s, sim, &r, &bd, &pi, o.placement, eps, &b);
        rc = cli_write_out("simulate", "-", &b);
    } else {
        print_text(&s, sim, dev, &r, &bd, &pi, o.placement, eps);
        rc = CLI_OK;
    }
done:
    hsdag_buf_free(&b);
    hsdag_sim_free(sim);
    hsdag_free(dev);
    simcli_free(&s);
    return rc;
}
