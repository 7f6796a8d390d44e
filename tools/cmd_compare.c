/* cmd_compare.c - the 'hsdag compare' subcommand: every placement method on one model, one table; or every
 *                 instance of a benchmark suite (--suite NAME: bench/NAME.suite), one table each and a summary
 *                 against each instance's best known latency.
 * Not here: any placement logic (src/place, src/learn); a method that does not apply (mincut on three
 *           devices) is a row with its reason, not a failure of the command.
 * Entry points: cmd_compare. */
#include "cli.h"

#include "hsdag/io.h"
#include "hsdag/place.h"

#include <getopt.h>
#include <math.h>
#include <string.h>

#define CMP_MAX_METHODS 128

static void compare_help(FILE *f)
{
    fprintf(
        f,
        "usage: hsdag compare MODEL [--devices D] [--methods a,b,c] [--json] [options]\n"
        "       hsdag compare --suite NAME [--methods a,b,c] [--json] [options]\n\n"
        "Runs every placement method on MODEL and prints one table: simulated latency, gap to the lower\n"
        "bound, feasibility (memory, unsupported ops, colour classes) and the time each method took.\n"
        "With --suite, runs every instance of bench/NAME.suite (or the file NAME) and ends with a summary:\n"
        "each method's latency relative to the instance's best known latency.\n\n"
        "options:\n"
        "  --suite NAME      a benchmark suite: bench/NAME.suite, or a path (docs/hsdag.md, \"hard suite\")\n"
        "  --devices D       device preset or device JSON file (default: tarnawski for Tarnawski JSON, "
        "else cpu-gpu)\n"
        "  --methods LIST    comma-separated methods (default: cpu-only / gpu-only / accel-only for each "
        "kind of\n"
        "                    device in the set, then every registered method; see hsdag place --list)\n"
        "  --semantics S     sequential | concurrent | tarnawski | auto (default auto)\n"
        "  --costs SRC       auto | roofline | file (default auto)\n" CLI_MEM_HELP
        "  --seed S          seed for the stochastic methods (default 1)\n"
        "  --time-limit s    seconds for ilp and local-search each (default 10)\n"
        "  --max-evals N     local-search simulator evaluations (default 20000)\n"
        "  --budget N        measurements of the black-box methods and learned placers (default 500)\n"
        "  --noise SIGMA     log-normal noise on what the black-box methods measure (default 0); the table\n"
        "                    always shows the noise-free latency of the placement each returned\n"
        "  --json            print {\"lower_bound_ms\": x, \"methods\": [{\"method\", \"latency_ms\", "
        "\"feasible\",\n"
        "                    \"gap\", \"place_s\", ...}, ...]} (with --suite: {\"suite\", \"instances\": "
        "[...]})\n"
        "  -h, --help        this help\n\n"
        "gap = (latency - bound) / bound. Exit status: 0 ok, 1 failure, 2 bad input or options.\n");
}

typedef struct cmp_row {
    char name[64];
    int ok;
    hsdag_place_result r;
    char err[256];
} cmp_row;

/* One instance: what to load and how. */
typedef struct cmp_inst {
    const char *name; /* suite entry name, NULL outside a suite */
    const char *model, *devices, *semantics, *costs;
    const char *const *mem;
    int n_mem;
    double best_ms; /* NAN if unknown */
    const char *how;
} cmp_inst;

typedef struct cmp_args {
    const char *methods, *suite;
    int json;
    hsdag_place_opts po;
    hsdag_sim_config sc; /* from --semantics / --costs (a suite entry's own override them) */
    const char *devices;
    cli_mem mem;
} cmp_args;

/* In a suite, a single-device name that this instance's set lacks (gpu-only on Tarnawski accelerators) is a
 * row marked n/a instead of an error. */
static int split_methods(const char *list, const hsdag_devices *devs, cmp_row *rows, int *n, int in_suite)
{
    const char *s = list;
    *n = 0;
    while (*s) {
        const char *c = strchr(s, ',');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        if (len == 0 || len >= sizeof rows[0].name)
            return cli_usage_error("compare", "--methods: empty or overlong name in '%s'", list);
        if (*n >= CMP_MAX_METHODS)
            return cli_usage_error("compare", "--methods: more than %d", CMP_MAX_METHODS);
        memcpy(rows[*n].name, s, len);
        rows[*n].name[len] = 0;
        if (!hsdag_place_method_find(rows[*n].name) && hsdag_place_single_device(devs, rows[*n].name) < 0) {
            if (!in_suite) return cli_usage_error("compare", "--methods: unknown method '%s'", rows[*n].name);
            snprintf(rows[*n].err, sizeof rows[*n].err, "no such device in this set");
        }
        (*n)++;
        s += len + (c ? 1 : 0);
    }
    if (*n == 0) return cli_usage_error("compare", "--methods: empty list");
    return 0;
}

static void default_methods(const hsdag_devices *devs, cmp_row *rows, int *n)
{
    *n = 0;
    /* one single-device row per device kind (identical GPUs or Tarnawski accelerators would repeat the
     * row) */
    for (int kind = 0; kind < HSDAG_DEV_KIND_COUNT_; kind++)
        if (hsdag_devices_first_of(devs, (hsdag_devkind)kind) >= 0)
            snprintf(rows[(*n)++].name, sizeof rows[0].name, "%s-only",
                     hsdag_devkind_name((hsdag_devkind)kind));
    int32_t cnt;
    const hsdag_place_method *m = hsdag_place_methods(&cnt);
    for (int32_t i = 0; i < cnt && *n < CMP_MAX_METHODS; i++)
        if (m[i].in_compare) snprintf(rows[(*n)++].name, sizeof rows[0].name, "%s", m[i].name);
}

static void json_instance(hsdag_buf *o, const cmp_inst *in, const hsdag_place_problem *p,
                          const hsdag_bound *b, const cmp_row *rows, int n)
{
    hsdag_buf_printf(o, "{");
    if (in->name) {
        hsdag_buf_printf(o, "\"name\": ");
        hsdag_buf_json_str(o, in->name);
        hsdag_buf_printf(o, ", \"model\": ");
        hsdag_buf_json_str(o, in->model);
        hsdag_buf_printf(o, ", \"best_known_ms\": ");
        if (isnan(in->best_ms))
            hsdag_buf_printf(o, "null");
        else
            hsdag_buf_double(o, in->best_ms);
        hsdag_buf_printf(o, ", \"best_known_how\": ");
        hsdag_buf_json_str(o, in->how ? in->how : "");
        hsdag_buf_printf(o, ", ");
    }
    hsdag_buf_printf(o, "\"devices\": ");
    hsdag_buf_json_str(o, p->devs->name ? p->devs->name : "");
    hsdag_buf_printf(o, ", \"semantics\": \"%s\", \"lower_bound_ms\": ", hsdag_semantics_name(p->sem));
    hsdag_buf_double(o, b->lower_s * 1e3);
    hsdag_buf_printf(o, ", \"bound_rule\": ");
    hsdag_buf_json_str(o, b->rule ? b->rule : "");
    hsdag_buf_printf(o, ", \"capacity_bytes\": {");
    for (int32_t d = 0; d < p->k; d++) {
        hsdag_buf_printf(o, "%s", d ? ", " : "");
        hsdag_buf_json_str(o, p->devs->dev[d].name);
        hsdag_buf_printf(o, ": ");
        hsdag_buf_double(o, p->devs->dev[d].mem_capacity);
    }
    hsdag_buf_printf(o, "}, \"methods\": [");
    for (int i = 0; i < n; i++) {
        const hsdag_place_result *r = &rows[i].r;
        hsdag_buf_printf(o, "%s\n  {\"method\": ", i ? "," : "");
        hsdag_buf_json_str(o, rows[i].name);
        if (!rows[i].ok) {
            hsdag_buf_printf(o, ", \"latency_ms\": null, \"feasible\": false, \"gap\": null, \"place_s\": ");
            hsdag_buf_double(o, r->place_s);
            hsdag_buf_printf(o, ", \"error\": ");
            hsdag_buf_json_str(o, rows[i].err);
            hsdag_buf_printf(o, "}");
            continue;
        }
        hsdag_buf_printf(o, ", \"latency_ms\": ");
        hsdag_buf_double(o, r->latency_s * 1e3);
        hsdag_buf_printf(o, ", \"feasible\": %s, \"gap\": ", r->feasible ? "true" : "false");
        if (isnan(r->gap))
            hsdag_buf_printf(o, "null");
        else
            hsdag_buf_double(o, r->gap);
        hsdag_buf_printf(o, ", \"place_s\": ");
        hsdag_buf_double(o, r->place_s);
        hsdag_buf_printf(o, ", \"optimal\": %s, \"method_bound_ms\": ", r->rep.optimal ? "true" : "false");
        if (isnan(r->rep.bound_s))
            hsdag_buf_printf(o, "null");
        else
            hsdag_buf_double(o, r->rep.bound_s * 1e3);
        hsdag_buf_printf(o, ", \"placements_evaluated\": %lld, \"best_episode\": ", (long long)r->rep.evals);
        if (r->rep.best_episode >= 0)
            hsdag_buf_printf(o, "%d", (int)r->rep.best_episode);
        else
            hsdag_buf_printf(o, "null");
        hsdag_buf_printf(o, ", \"note\": ");
        hsdag_buf_json_str(o, r->rep.note);
        hsdag_buf_printf(o, "}");
    }
    hsdag_buf_printf(o, "\n]}");
}

static void print_table(const cmp_inst *in, const hsdag_place_problem *p, const hsdag_bound *b,
                        const cmp_row *rows, int n)
{
    if (in->name) {
        printf("== %s: %s", in->name, in->model);
        for (int i = 0; i < in->n_mem; i++) printf(" --mem %s", in->mem[i]);
        if (isnan(in->best_ms))
            printf("; best known: none\n");
        else
            printf("; best known %.6g ms (%s)\n", in->best_ms, in->how ? in->how : "");
    }
    printf("devices %s, %s semantics, %d ops; lower bound %.6g ms (%s)\n\n",
           p->devs->name ? p->devs->name : "", hsdag_semantics_name(p->sem), (int)p->n, b->lower_s * 1e3,
           b->rule ? b->rule : "");
    printf("%-18s %12s %9s %-10s %11s  %s\n", "method", "latency_ms", "gap", "feasible", "place_ms", "note");
    for (int i = 0; i < n; i++) {
        const hsdag_place_result *r = &rows[i].r;
        if (!rows[i].ok) {
            printf("%-18s %12s %9s %-10s %11.3f  %s\n", rows[i].name, "-", "-", "n/a", r->place_s * 1e3,
                   rows[i].err);
            continue;
        }
        char gap[32];
        if (isnan(r->gap))
            snprintf(gap, sizeof gap, "n/a");
        else
            snprintf(gap, sizeof gap, "%.2f%%", 100 * r->gap);
        printf("%-18s %12.6g %9s %-10s %11.3f  %s\n", rows[i].name, r->latency_s * 1e3, gap,
               r->feasible ? "yes" : "NO", r->place_s * 1e3, r->rep.note);
    }
    /* one line per method saying what it is */
    printf("\n");
    for (int i = 0; i < n; i++) {
        const hsdag_place_method *m = hsdag_place_method_find(rows[i].name);
        printf("  %-16s %s\n", rows[i].name,
               m ? m->summary : "every op on one device (the paper's single-device baselines)");
    }
}

/* Loads one instance and runs every method on it. Returns CLI_OK or an exit code (error printed). */
static int run_instance(const cmp_args *a, const cmp_inst *in, cmp_row *rows, int *n_rows, hsdag_buf *json)
{
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    hsdag_devices *devs = NULL;
    hsdag_place_problem *p = NULL;
    int32_t *dev = NULL;
    int rc = CLI_OK, st, n = 0;
    hsdag_bound b;
    hsdag_sim_config sc = a->sc;
    memset(rows, 0, sizeof *rows * CMP_MAX_METHODS);
    if (in->semantics && hsdag_semantics_parse(&sc.semantics, in->semantics, NULL) < 0) {
        st = hsdag_err_set(&e, HSDAG_EINVAL,
                           "%s: --semantics '%s' is not sequential, concurrent, tarnawski or auto", in->name,
                           in->semantics);
        goto fail;
    }
    if (in->costs) {
        if (strcmp(in->costs, "auto") == 0)
            sc.costs.source = HSDAG_COSTSRC_AUTO;
        else if (strcmp(in->costs, "roofline") == 0)
            sc.costs.source = HSDAG_COSTSRC_ROOFLINE;
        else if (strcmp(in->costs, "file") == 0)
            sc.costs.source = HSDAG_COSTSRC_FILE;
        else {
            st = hsdag_err_set(&e, HSDAG_EINVAL, "%s: --costs '%s' is not auto, roofline or file", in->name,
                               in->costs);
            goto fail;
        }
    }
    if ((st = hsdag_load_file(&g, in->model, HSDAG_FMT_UNKNOWN, &e)) < 0) goto fail;
    if ((st = hsdag_devices_load(&devs, in->devices, g, &e)) < 0) goto fail;
    for (int i = 0; i < in->n_mem; i++)
        if ((st = hsdag_devices_mem_override(devs, g, &sc, in->mem[i], &e)) < 0) goto fail;
    if (a->methods) {
        if ((rc = split_methods(a->methods, devs, rows, &n, in->name != NULL)) != 0) goto done;
    } else {
        default_methods(devs, rows, &n);
    }
    if ((st = hsdag_place_problem_create(&p, g, devs, &sc, &e)) < 0) goto fail;
    if ((st = hsdag_place_lower_bound(p, &b, &e)) < 0) goto fail;
    if (!(dev = hsdag_malloc((size_t)(g->n_nodes ? g->n_nodes : 1) * sizeof *dev))) {
        st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
        goto fail;
    }
    cli_progress pr;
    cli_progress_start(&pr, in->name ? in->name : "compare", n, a->json);
    for (int i = 0; i < n; i++) {
        hsdag_err me = {0};
        cli_progress_update(&pr, i, rows[i].name);
        if (rows[i].err[0]) continue; /* not applicable here (already says why) */
        int mr = hsdag_place_run(p, rows[i].name, &a->po, dev, &rows[i].r, &me);
        rows[i].ok = mr == 0;
        if (mr < 0)
            snprintf(rows[i].err, sizeof rows[i].err, "%.250s", me.msg[0] ? me.msg : hsdag_status_str(mr));
        if (mr == HSDAG_ENOMEM) /* a method that ran out of memory is a row; the others still run */
            fprintf(stderr, "hsdag compare: %s: %s\n", rows[i].name, rows[i].err);
    }
    cli_progress_update(&pr, n, "");
    cli_progress_end(&pr);
    if (json)
        json_instance(json, in, p, &b, rows, n);
    else
        print_table(in, p, &b, rows, n);
    *n_rows = n;
    goto done;
fail:
    if (in->name) hsdag_err_prefix(&e, in->name);
    rc = cli_fail("compare", st, &e);
done:
    hsdag_free(dev);
    hsdag_place_problem_free(p);
    hsdag_devices_free(devs);
    hsdag_graph_free(g);
    return rc;
}

/* ---- suites ---- */

typedef struct sum_col {
    char name[64];
    double log_ratio; /* sum over instances of log(latency / best known) */
    int n, infeasible, best;
} sum_col;

static const char *suite_path(const char *name, char *buf, size_t cap)
{
    if (strchr(name, '/') || strstr(name, ".suite")) return name;
    snprintf(buf, cap, "bench/%s.suite", name);
    return buf;
}

static int run_suite(const cmp_args *a, cmp_row *rows)
{
    char pbuf[4096];
    const char *path = suite_path(a->suite, pbuf, sizeof pbuf);
    hsdag_err e = {0};
    hsdag_suite *S = NULL;
    int st = hsdag_suite_read_file(&S, path, &e);
    if (st < 0) return cli_fail("compare", st, &e);
    sum_col *cols = hsdag_calloc(CMP_MAX_METHODS, sizeof *cols);
    hsdag_buf js = {0};
    int ncols = 0, rc = CLI_OK;
    if (!cols) {
        hsdag_suite_free(S);
        return cli_fail("compare", HSDAG_ENOMEM, NULL);
    }
    if (a->json) {
        hsdag_buf_printf(&js, "{\"suite\": ");
        hsdag_buf_json_str(&js, a->suite);
        hsdag_buf_printf(&js,
                         ", \"seed\": %llu, \"budget\": %lld, \"noise\": ", (unsigned long long)a->po.seed,
                         (long long)(a->po.budget > 0 ? a->po.budget : 500));
        hsdag_buf_double(&js, a->po.noise);
        hsdag_buf_printf(&js, ", \"instances\": [\n");
    }
    for (int32_t k = 0; k < S->n && rc == CLI_OK; k++) {
        const hsdag_suite_entry *en = &S->entry[k];
        cmp_inst in = {.name = en->name,
                       .model = en->model,
                       .devices = en->devices ? en->devices : a->devices,
                       .semantics = en->semantics,
                       .costs = en->costs,
                       .mem = en->mem,
                       .n_mem = en->n_mem,
                       .best_ms = en->best_ms,
                       .how = en->how};
        int n = 0;
        if (a->json && k) hsdag_buf_printf(&js, ",\n");
        rc = run_instance(a, &in, rows, &n, a->json ? &js : NULL);
        if (rc != CLI_OK) break;
        if (!a->json) printf("\n");
        /* the best latency of this run, so "best" counts rows that tie the best row */
        double best_run = INFINITY;
        for (int i = 0; i < n; i++)
            if (rows[i].ok && rows[i].r.feasible && rows[i].r.latency_s < best_run)
                best_run = rows[i].r.latency_s;
        for (int i = 0; i < n; i++) {
            int c = 0;
            while (c < ncols && strcmp(cols[c].name, rows[i].name) != 0) c++;
            if (c == ncols) {
                if (ncols == CMP_MAX_METHODS) continue;
                snprintf(cols[ncols++].name, sizeof cols[0].name, "%s", rows[i].name);
            }
            if (!rows[i].ok || !rows[i].r.feasible) {
                cols[c].infeasible++;
                continue;
            }
            double ref = isnan(en->best_ms) ? best_run * 1e3 : en->best_ms;
            cols[c].log_ratio += log(rows[i].r.latency_s * 1e3 / ref);
            cols[c].n++;
            if (rows[i].r.latency_s <= best_run * (1 + 1e-9)) cols[c].best++;
        }
    }
    if (rc == CLI_OK && a->json) {
        hsdag_buf_printf(&js, "\n]}\n");
        rc = cli_write_out("compare", "-", &js);
    } else if (rc == CLI_OK) {
        printf("== summary: %s, %d instances (seed %llu, budget %lld, noise %g)\n\n", a->suite, (int)S->n,
               (unsigned long long)a->po.seed, (long long)(a->po.budget > 0 ? a->po.budget : 500),
               a->po.noise);
        printf("%-18s %22s %10s %14s\n", "method", "geomean vs best known", "best row", "infeasible/n/a");
        for (int c = 0; c < ncols; c++) {
            char gm[32];
            if (cols[c].n)
                snprintf(gm, sizeof gm, "%+.2f%%", 100 * (exp(cols[c].log_ratio / cols[c].n) - 1));
            else
                snprintf(gm, sizeof gm, "-");
            printf("%-18s %22s %10d %14d\n", cols[c].name, gm, cols[c].best, cols[c].infeasible);
        }
        printf(
            "\ngeomean over the instances where the method is feasible; best row = ties the best latency of "
            "this run.\n");
    }
    hsdag_buf_free(&js);
    hsdag_free(cols);
    hsdag_suite_free(S);
    return rc;
}

int cmd_compare(int argc, char **argv)
{
    enum {
        O_DEV = 256,
        O_METH,
        O_JSON,
        O_SEED,
        O_TL,
        O_SEM,
        O_COSTS,
        O_EVALS,
        O_BUDGET,
        O_NOISE,
        O_MEM,
        O_SUITE,
        O_HELP
    };
    static const struct option opts[] = {
        {"devices", required_argument, 0, O_DEV},   {"methods", required_argument, 0, O_METH},
        {"json", no_argument, 0, O_JSON},           {"seed", required_argument, 0, O_SEED},
        {"time-limit", required_argument, 0, O_TL}, {"semantics", required_argument, 0, O_SEM},
        {"costs", required_argument, 0, O_COSTS},   {"max-evals", required_argument, 0, O_EVALS},
        {"budget", required_argument, 0, O_BUDGET}, {"noise", required_argument, 0, O_NOISE},
        {"mem", required_argument, 0, O_MEM},       {"suite", required_argument, 0, O_SUITE},
        {"help", no_argument, 0, O_HELP},           {0, 0, 0, 0}};
    cmp_args a = {.sc = hsdag_sim_config_default(), .po = hsdag_place_opts_default()};
    long lv;
    double dv;
    optind = 1;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        switch (c) {
        case O_DEV:
            a.devices = optarg;
            break;
        case O_METH:
            a.methods = optarg;
            break;
        case O_JSON:
            a.json = 1;
            break;
        case O_SUITE:
            a.suite = optarg;
            break;
        case O_SEED:
            if (cli_parse_int(optarg, 0, 0x7fffffffL, &lv) < 0)
                return cli_usage_error("compare", "--seed: '%s' is not an integer in [0, 2^31)", optarg);
            a.po.seed = (uint64_t)lv;
            break;
        case O_TL:
            if (cli_parse_double(optarg, 1e-3, 1e6, &dv) < 0)
                return cli_usage_error(
                    "compare", "--time-limit: '%s' is not a number of seconds in [0.001, 1e6]", optarg);
            a.po.time_limit_s = dv;
            break;
        case O_EVALS:
            if (cli_parse_int(optarg, 1, 1000000000L, &lv) < 0)
                return cli_usage_error("compare", "--max-evals: '%s' is not an integer in [1, 1e9]", optarg);
            a.po.max_evals = lv;
            break;
        case O_BUDGET:
            if (cli_parse_int(optarg, 1, 1000000000L, &lv) < 0)
                return cli_usage_error("compare", "--budget: '%s' is not an integer in [1, 1e9]", optarg);
            a.po.budget = lv;
            break;
        case O_NOISE:
            if (cli_parse_double(optarg, 0, 10, &dv) < 0)
                return cli_usage_error("compare", "--noise: '%s' is not a sigma in [0, 10]", optarg);
            a.po.noise = dv;
            break;
        case O_MEM:
            if (cli_mem_add("compare", &a.mem, optarg)) return CLI_BADINPUT;
            break;
        case O_SEM:
            if (hsdag_semantics_parse(&a.sc.semantics, optarg, NULL) < 0)
                return cli_usage_error("compare",
                                       "--semantics: '%s' is not sequential, concurrent, tarnawski or "
                                       "auto",
                                       optarg);
            break;
        case O_COSTS:
            if (strcmp(optarg, "auto") == 0)
                a.sc.costs.source = HSDAG_COSTSRC_AUTO;
            else if (strcmp(optarg, "roofline") == 0)
                a.sc.costs.source = HSDAG_COSTSRC_ROOFLINE;
            else if (strcmp(optarg, "file") == 0)
                a.sc.costs.source = HSDAG_COSTSRC_FILE;
            else
                return cli_usage_error("compare", "--costs: '%s' is not auto, roofline or file", optarg);
            break;
        case 'h':
        case O_HELP:
            compare_help(stdout);
            return CLI_OK;
        default:
            return cli_usage_error("compare", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    cmp_row *rows = hsdag_calloc(CMP_MAX_METHODS, sizeof *rows);
    if (!rows) return cli_fail("compare", HSDAG_ENOMEM, NULL);
    int rc;
    if (a.suite) {
        if (optind < argc)
            rc = cli_usage_error("compare", "--suite takes no MODEL (unexpected '%s')", argv[optind]);
        else if (a.mem.n)
            rc =
                cli_usage_error("compare", "--mem is given per instance in the suite file, not with --suite");
        else
            rc = run_suite(&a, rows);
    } else if (optind >= argc) {
        rc = cli_usage_error("compare", "missing MODEL");
    } else if (optind + 1 < argc) {
        rc = cli_usage_error("compare", "unexpected argument '%s'", argv[optind + 1]);
    } else {
        cmp_inst in = {
            .model = argv[optind], .devices = a.devices, .mem = a.mem.spec, .n_mem = a.mem.n, .best_ms = NAN};
        hsdag_buf js = {0};
        int n = 0;
        rc = run_instance(&a, &in, rows, &n, a.json ? &js : NULL);
        if (rc == CLI_OK && a.json) {
            hsdag_buf_printf(&js, "\n");
            rc = cli_write_out("compare", "-", &js);
        }
        hsdag_buf_free(&js);
    }
    hsdag_free(rows);
    return rc;
}
