/* cmd_place.c - the 'hsdag place' subcommand: run one placement method, score it, write the placement.
 * Not here: any placement logic (src/place) or simulation (src/sim); this file parses options and prints.
 * Entry points: cmd_place. */
#include "cli.h"

#include "hsdag/io.h"
#include "hsdag/place.h"
#include "hsdag/placement.h"

#include <getopt.h>
#include <math.h>
#include <string.h>

static void place_help(FILE *f)
{
    int32_t cnt;
    const hsdag_place_method *m = hsdag_place_methods(&cnt);
    static const char *const resp[] = {"ignores", "respects", "partial"};
    fprintf(
        f,
        "usage: hsdag place MODEL --method M [--devices D] [--out P.json] [--json] [options]\n\n"
        "Places every operator of MODEL on a device with method M, scores the placement with the simulator\n"
        "and prints its latency, the lower bound and the gap to it.\n\n"
        "options:\n"
        "  --method M        placement method (below), or a single device: cpu-only, gpu-only, accel-only,\n"
        "                    a device name (CPU, GPU, gpu0, acc1, ...) or <device>-only\n"
        "  --devices D       device preset (cpu-gpu, cpu-4gpu, tarnawski, tarnawski:K:L) or a device JSON "
        "file;\n"
        "                    default: tarnawski for Tarnawski JSON models, cpu-gpu otherwise\n"
        "  --semantics S     sequential | concurrent | tarnawski | auto (default auto: the device set's "
        "own)\n"
        "  --costs SRC       op costs: auto | roofline | file (default auto)\n"
        "  --profile CSV     per-op per-device costs (lines node,device,ms) overriding the cost model\n"
        "  --seed S          seed of random, metis and local-search (default 1)\n"
        "  --time-limit s    seconds for ilp (default 10) and local-search (default 10; a safety stop)\n"
        "  --max-evals N     local-search simulator evaluations (default 20000; the reproducible stop)\n"
        "  --budget N        measurements for the black-box methods (bb-random, bb-local) and the learned\n"
        "                    placers (hsdag*: placements sampled); default 500, the HSDAG paper's 25 x 20\n"
        "  --noise SIGMA     black-box methods see latency x exp(SIGMA z), z ~ N(0,1) seeded (default 0);\n"
        "                    the latency printed is always the noise-free one of the placement "
        "returned\n" CLI_MEM_HELP
        "  --init P.json     local-search start: placement JSON, affinity map or Tarnawski split\n"
        "                    (default: the best of every single device, heft, greedy-tarnawski, mincut)\n"
        "  --out P.json      write the placement as hsdag placement JSON ('-' = stdout)\n"
        "  --affinity OUT    write an OpenVINO affinity map (layer -> CPU/GPU) for HETERO\n"
        "  --split OUT       write a Tarnawski split {\"cpus\":[...],\"fpgas\":[...]}\n"
        "  --dot OUT         write Graphviz DOT with nodes coloured by device\n"
        "  --json            print the result as JSON (latency_ms, feasible, lower_bound_ms, gap, place_s, "
        "...)\n"
        "  --list            list the methods and exit\n"
        "  -h, --help        this help\n\n"
        "methods (memory caps / colour classes: respects, ignores or partial):\n");
    for (int32_t i = 0; i < cnt; i++)
        fprintf(f, "  %-17s [mem %s, colour %s]\n      %s\n", m[i].name, resp[m[i].memory], resp[m[i].color],
                m[i].summary);
    fprintf(
        f,
        "  %-17s [mem ignores, colour respects]\n      every op on that device, even ops it may not run\n"
        "      (then reported infeasible)\n\n"
        "Memory: an op charges its weights and output to its device; the heuristics do not reserve room for\n"
        "received copies (the sequential ilp does), so the simulator's verdict (\"feasible\") is the one to "
        "trust.\n"
        "The placers decide; the simulator scores. Exit status: 0 ok, 1 failure, 2 bad input or options.\n",
        "cpu-only, ...");
}

typedef struct place_args {
    const char *model, *devices, *method, *out, *affinity, *split, *dot, *init, *profile;
    hsdag_sim_config sc;
    hsdag_place_opts po;
    cli_mem mem;
    int json;
} place_args;

static int place_parse(int argc, char **argv, place_args *a)
{
    enum {
        O_DEV = 256,
        O_METH,
        O_OUT,
        O_JSON,
        O_SEED,
        O_TL,
        O_INIT,
        O_AFF,
        O_SPLIT,
        O_DOT,
        O_SEM,
        O_COSTS,
        O_PROF,
        O_EVALS,
        O_BUDGET,
        O_NOISE,
        O_MEM,
        O_LIST,
        O_HELP
    };
    static const struct option opts[] = {
        {"devices", required_argument, 0, O_DEV},   {"method", required_argument, 0, O_METH},
        {"out", required_argument, 0, O_OUT},       {"json", no_argument, 0, O_JSON},
        {"seed", required_argument, 0, O_SEED},     {"time-limit", required_argument, 0, O_TL},
        {"init", required_argument, 0, O_INIT},     {"affinity", required_argument, 0, O_AFF},
        {"split", required_argument, 0, O_SPLIT},   {"dot", required_argument, 0, O_DOT},
        {"semantics", required_argument, 0, O_SEM}, {"costs", required_argument, 0, O_COSTS},
        {"profile", required_argument, 0, O_PROF},  {"max-evals", required_argument, 0, O_EVALS},
        {"budget", required_argument, 0, O_BUDGET}, {"noise", required_argument, 0, O_NOISE},
        {"mem", required_argument, 0, O_MEM},       {"list", no_argument, 0, O_LIST},
        {"help", no_argument, 0, O_HELP},           {0, 0, 0, 0}};
    long lv;
    double dv;
    optind = 1;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        switch (c) {
        case O_DEV:
            a->devices = optarg;
            break;
        case O_METH:
            a->method = optarg;
            break;
        case O_OUT:
            a->out = optarg;
            break;
        case O_JSON:
            a->json = 1;
            break;
        case O_INIT:
            a->init = optarg;
            break;
        case O_AFF:
            a->affinity = optarg;
            break;
        case O_SPLIT:
            a->split = optarg;
            break;
        case O_DOT:
            a->dot = optarg;
            break;
        case O_PROF:
            a->profile = optarg;
            break;
        case O_SEED:
            if (cli_parse_int(optarg, 0, 0x7fffffffL, &lv) < 0)
                return cli_usage_error("place", "--seed: '%s' is not an integer in [0, 2^31)", optarg);
            a->po.seed = (uint64_t)lv;
            break;
        case O_TL:
            if (cli_parse_double(optarg, 1e-3, 1e6, &dv) < 0)
                return cli_usage_error(
                    "place", "--time-limit: '%s' is not a number of seconds in [0.001, 1e6]", optarg);
            a->po.time_limit_s = dv;
            break;
        case O_EVALS:
            if (cli_parse_int(optarg, 1, 1000000000L, &lv) < 0)
                return cli_usage_error("place", "--max-evals: '%s' is not an integer in [1, 1e9]", optarg);
            a->po.max_evals = lv;
            break;
        case O_BUDGET:
            if (cli_parse_int(optarg, 1, 1000000000L, &lv) < 0)
                return cli_usage_error("place", "--budget: '%s' is not an integer in [1, 1e9]", optarg);
            a->po.budget = lv;
            break;
        case O_NOISE:
            if (cli_parse_double(optarg, 0, 10, &dv) < 0)
                return cli_usage_error("place", "--noise: '%s' is not a sigma in [0, 10]", optarg);
            a->po.noise = dv;
            break;
        case O_MEM:
            if (cli_mem_add("place", &a->mem, optarg)) return CLI_BADINPUT;
            break;
        case O_SEM:
            if (hsdag_semantics_parse(&a->sc.semantics, optarg, NULL) < 0)
                return cli_usage_error(
                    "place", "--semantics: '%s' is not sequential, concurrent, tarnawski or auto", optarg);
            break;
        case O_COSTS:
            if (strcmp(optarg, "auto") == 0)
                a->sc.costs.source = HSDAG_COSTSRC_AUTO;
            else if (strcmp(optarg, "roofline") == 0)
                a->sc.costs.source = HSDAG_COSTSRC_ROOFLINE;
            else if (strcmp(optarg, "file") == 0)
                a->sc.costs.source = HSDAG_COSTSRC_FILE;
            else
                return cli_usage_error("place", "--costs: '%s' is not auto, roofline or file", optarg);
            break;
        case O_LIST: {
            int32_t cnt;
            const hsdag_place_method *m = hsdag_place_methods(&cnt);
            for (int32_t i = 0; i < cnt; i++) printf("%s\n", m[i].name);
            return -1;
        }
        case 'h':
        case O_HELP:
            place_help(stdout);
            return -1;
        default:
            return cli_usage_error("place", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) return cli_usage_error("place", "missing MODEL");
    if (optind + 1 < argc) return cli_usage_error("place", "unexpected argument '%s'", argv[optind + 1]);
    a->model = argv[optind];
    if (!a->method) return cli_usage_error("place", "missing --method (try --list)");
    return 0;
}

static int write_one(const char *path, int rc, hsdag_buf *b)
{
    if (rc < 0) {
        hsdag_buf_free(b);
        fprintf(stderr, "hsdag place: cannot write %s: %s\n", path, hsdag_status_str(rc));
        return CLI_FAIL;
    }
    int r = cli_write_out("place", path, b);
    hsdag_buf_free(b);
    return r;
}

static void print_result(const place_args *a, const hsdag_place_problem *p, const int32_t *dev,
                         const hsdag_place_result *r)
{
    int32_t k = p->k, per[HSDAG_MAX_DEVICES] = {0};
    for (int32_t v = 0; v < p->n; v++) per[dev[v]]++;
    if (a->json) {
        hsdag_buf b = {0};
        hsdag_buf_printf(&b, "{\"method\": ");
        hsdag_buf_json_str(&b, r->method);
        hsdag_buf_printf(&b, ", \"model\": ");
        hsdag_buf_json_str(&b, a->model);
        hsdag_buf_printf(&b, ", \"devices\": ");
        hsdag_buf_json_str(&b, p->devs->name ? p->devs->name : "");
        hsdag_buf_printf(&b, ", \"semantics\": \"%s\", \"latency_ms\": ", hsdag_semantics_name(p->sem));
        hsdag_buf_double(&b, r->latency_s * 1e3);
        hsdag_buf_printf(&b, ", \"feasible\": %s, \"lower_bound_ms\": ", r->feasible ? "true" : "false");
        hsdag_buf_double(&b, r->lower_bound_s * 1e3);
        hsdag_buf_printf(&b, ", \"gap\": ");
        if (isnan(r->gap))
            hsdag_buf_printf(&b, "null");
        else
            hsdag_buf_double(&b, r->gap);
        hsdag_buf_printf(&b, ", \"place_s\": ");
        hsdag_buf_double(&b, r->place_s);
        hsdag_buf_printf(&b, ", \"optimal\": %s, \"method_bound_ms\": ", r->rep.optimal ? "true" : "false");
        if (isnan(r->rep.bound_s))
            hsdag_buf_printf(&b, "null");
        else
            hsdag_buf_double(&b, r->rep.bound_s * 1e3);
        hsdag_buf_printf(&b, ", \"evals\": %lld, \"placements_evaluated\": %lld, \"best_episode\": ",
                         (long long)r->rep.evals, (long long)r->rep.evals);
        if (r->rep.best_episode >= 0)
            hsdag_buf_printf(&b, "%d", (int)r->rep.best_episode);
        else
            hsdag_buf_printf(&b, "null");
        hsdag_buf_printf(&b, ", \"wall_s\": ");
        hsdag_buf_double(&b, r->place_s);
        hsdag_buf_printf(&b, ", \"note\": ");
        hsdag_buf_json_str(&b, r->rep.note);
        hsdag_buf_printf(&b, ", \"ops_per_device\": {");
        for (int32_t d = 0; d < k; d++) {
            hsdag_buf_printf(&b, "%s", d ? ", " : "");
            hsdag_buf_json_str(&b, p->devs->dev[d].name);
            hsdag_buf_printf(&b, ": %d", (int)per[d]);
        }
        hsdag_buf_printf(&b, "}, \"peak_memory_bytes\": {");
        for (int32_t d = 0; d < k; d++) {
            hsdag_buf_printf(&b, "%s", d ? ", " : "");
            hsdag_buf_json_str(&b, p->devs->dev[d].name);
            hsdag_buf_printf(&b, ": ");
            hsdag_buf_double(&b, r->sim.peak_mem_bytes[d]);
        }
        hsdag_buf_printf(&b, "}, \"xfers\": %lld, \"xfer_bytes\": ", (long long)r->sim.n_xfers);
        hsdag_buf_double(&b, r->sim.xfer_bytes);
        hsdag_buf_printf(&b, "}\n");
        if (b.data) fputs(b.data, stdout);
        hsdag_buf_free(&b);
        return;
    }
    printf("method      %s\n", r->method);
    printf("devices     %s (%s semantics)\n", p->devs->name ? p->devs->name : "",
           hsdag_semantics_name(p->sem));
    printf("latency     %.6g ms%s\n", r->latency_s * 1e3, r->feasible ? "" : "  INFEASIBLE");
    printf("lower bound %.6g ms  (gap %s", r->lower_bound_s * 1e3, isnan(r->gap) ? "n/a" : "");
    if (!isnan(r->gap)) printf("%.2f%%", 100 * r->gap);
    printf(")\n");
    printf("placed in   %.3f ms%s\n", r->place_s * 1e3,
           r->rep.optimal ? "  (proven optimal for its model)" : "");
    printf("ops         ");
    for (int32_t d = 0; d < k; d++) printf("%s%s %d", d ? ", " : "", p->devs->dev[d].name, (int)per[d]);
    printf("\n");
    if (r->rep.note[0]) printf("note        %s\n", r->rep.note);
}

int cmd_place(int argc, char **argv)
{
    place_args a = {.sc = hsdag_sim_config_default(), .po = hsdag_place_opts_default()};
    int rc = place_parse(argc, argv, &a);
    if (rc) return rc < 0 ? CLI_OK : rc;
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    hsdag_devices *devs = NULL;
    hsdag_profile *prof = NULL;
    hsdag_place_problem *p = NULL;
    int32_t *dev = NULL, *init = NULL;
    int st;
    if ((st = hsdag_load_file(&g, a.model, HSDAG_FMT_UNKNOWN, &e)) < 0) goto fail;
    if ((st = hsdag_devices_load(&devs, a.devices, g, &e)) < 0) goto fail;
    if (a.profile) {
        if ((st = hsdag_profile_read_file(&prof, a.profile, &e)) < 0) goto fail;
        a.sc.costs.profile = prof;
    }
    if ((st = cli_mem_apply(&a.mem, devs, g, &a.sc, &e)) < 0) goto fail;
    if ((st = hsdag_place_problem_create(&p, g, devs, &a.sc, &e)) < 0) goto fail;
    size_t n1 = (size_t)(g->n_nodes ? g->n_nodes : 1);
    dev = hsdag_malloc(n1 * sizeof *dev);
    if (!dev) {
        st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
        goto fail;
    }
    if (a.init) {
        if (!(init = hsdag_malloc(n1 * sizeof *init))) {
            st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
            goto fail;
        }
        if ((st = hsdag_placement_read_file(init, NULL, a.init, g, devs, &e)) < 0) goto fail;
        a.po.init = init;
    }
    hsdag_place_result r;
    if ((st = hsdag_place_run(p, a.method, &a.po, dev, &r, &e)) < 0) goto fail;
    print_result(&a, p, dev, &r);
    rc = CLI_OK;
    hsdag_buf b = {0};
    if (a.out && rc == CLI_OK) rc = write_one(a.out, hsdag_placement_write_json(&b, g, devs, dev), &b);
    if (a.affinity && rc == CLI_OK)
        rc = write_one(a.affinity, hsdag_placement_write_affinity(&b, g, devs, dev), &b);
    if (a.split && rc == CLI_OK) rc = write_one(a.split, hsdag_placement_write_split(&b, g, devs, dev), &b);
    if (a.dot && rc == CLI_OK) {
        const char *names[HSDAG_MAX_DEVICES];
        for (int32_t d = 0; d < devs->n; d++) names[d] = devs->dev[d].name;
        rc = write_one(a.dot, hsdag_dot_write(&b, g, dev, names, devs->n), &b);
    }
    goto done;
fail:
    rc = cli_fail("place", st, &e);
done:
    hsdag_free(dev);
    hsdag_free(init);
    hsdag_place_problem_free(p);
    hsdag_profile_free(prof);
    hsdag_devices_free(devs);
    hsdag_graph_free(g);
    return rc;
}
