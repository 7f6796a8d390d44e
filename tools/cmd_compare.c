/* cmd_compare.c - the 'hsdag compare' subcommand: every placement method on one model, one table.
 * Not here: any placement logic (src/place); a method that does not apply (mincut on three devices) is a row
 *           with its reason, not a failure of the command.
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
    fprintf(f,
            "usage: hsdag compare MODEL [--devices D] [--methods a,b,c] [--json] [options]\n\n"
            "Runs every placement method on MODEL and prints one table: simulated latency, gap to the lower\n"
            "bound, feasibility (memory, unsupported ops, colour classes) and the time each method took.\n\n"
            "options:\n"
            "  --devices D       device preset or device JSON file (default: tarnawski for Tarnawski JSON, "
            "else cpu-gpu)\n"
            "  --methods LIST    comma-separated methods (default: cpu-only / gpu-only / accel-only for each "
            "kind of\n"
            "                    device in the set, then every registered method; see hsdag place --list)\n"
            "  --semantics S     sequential | concurrent | tarnawski | auto (default auto)\n"
            "  --objective O     latency | throughput (max over devices of compute + communication)\n"
            "  --costs SRC       auto | roofline | file (default auto)\n"
            "  --seed S          seed for the stochastic methods (default 1)\n"
            "  --time-limit s    seconds for ilp and local-search each (default 10)\n"
            "  --max-evals N     local-search simulator evaluations (default 20000)\n"
            "  --json            print {\"lower_bound_ms\": x, \"methods\": [{\"method\", \"latency_ms\", "
            "\"feasible\",\n"
            "                    \"gap\", \"place_s\", ...}, ...]}\n"
            "  -h, --help        this help\n\n"
            "gap = (latency - bound) / bound. Exit status: 0 ok, 1 failure, 2 bad input or options.\n");
}

typedef struct cmp_row {
    char name[64];
    int ok;
    hsdag_place_result r;
    char err[256];
} cmp_row;

static int split_methods(const char *list, const hsdag_devices *devs, cmp_row *rows, int *n)
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
        if (!hsdag_place_method_find(rows[*n].name) && hsdag_place_single_device(devs, rows[*n].name) < 0)
            return cli_usage_error("compare", "--methods: unknown method '%s'", rows[*n].name);
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

/* The exact solvers' bounds over contiguous splits (ilp under tarnawski latency, dp under throughput): the
 * largest one is also a bound for every row whose placement is a contiguous split, so those rows take it
 * (lower_bound_s and gap) where it is tighter than the bound for every placement. Returns it, or NAN. */
static double contiguous_bound(cmp_row *rows, int n)
{
    double cb = NAN;
    for (int i = 0; i < n; i++)
        if (rows[i].ok && rows[i].r.rep.bound_contiguous && isfinite(rows[i].r.rep.bound_s) &&
            (isnan(cb) || rows[i].r.rep.bound_s > cb))
            cb = rows[i].r.rep.bound_s;
    for (int i = 0; i < n && !isnan(cb); i++) {
        hsdag_place_result *r = &rows[i].r;
        if (!rows[i].ok || !r->contiguous || !(cb > r->lower_bound_s)) continue;
        r->lower_bound_s = cb;
        r->gap = cb > 0 ? (r->objective_s - cb) / cb : (r->objective_s > 0 ? NAN : 0.0);
    }
    return cb;
}

static void print_json(const hsdag_place_problem *p, const hsdag_bound *b, double cb, const cmp_row *rows,
                       int n)
{
    hsdag_buf o = {0};
    hsdag_buf_printf(&o, "{\"devices\": ");
    hsdag_buf_json_str(&o, p->devs->name ? p->devs->name : "");
    hsdag_buf_printf(&o, ", \"semantics\": \"%s\", \"objective\": \"%s\", \"lower_bound_ms\": ",
                     hsdag_semantics_name(p->sem), hsdag_objective_name(p->obj));
    hsdag_buf_double(&o, b->lower_s * 1e3);
    hsdag_buf_printf(&o, ", \"bound_rule\": ");
    hsdag_buf_json_str(&o, b->rule ? b->rule : "");
    hsdag_buf_printf(&o, ", \"contiguous_bound_ms\": ");
    if (isnan(cb))
        hsdag_buf_printf(&o, "null");
    else
        hsdag_buf_double(&o, cb * 1e3);
    hsdag_buf_printf(&o, ", \"methods\": [");
    for (int i = 0; i < n; i++) {
        const hsdag_place_result *r = &rows[i].r;
        hsdag_buf_printf(&o, "%s\n  {\"method\": ", i ? "," : "");
        hsdag_buf_json_str(&o, rows[i].name);
        if (!rows[i].ok) {
            hsdag_buf_printf(&o, ", \"objective_ms\": null, \"latency_ms\": null, \"feasible\": false, "
                                 "\"gap\": null, \"place_s\": ");
            hsdag_buf_double(&o, r->place_s);
            hsdag_buf_printf(&o, ", \"error\": ");
            hsdag_buf_json_str(&o, rows[i].err);
            hsdag_buf_printf(&o, "}");
            continue;
        }
        hsdag_buf_printf(&o, ", \"objective_ms\": ");
        hsdag_buf_double(&o, r->objective_s * 1e3);
        hsdag_buf_printf(&o, ", \"latency_ms\": ");
        hsdag_buf_double(&o, r->latency_s * 1e3);
        hsdag_buf_printf(&o, ", \"feasible\": %s, \"contiguous\": %s, \"lower_bound_ms\": ",
                         r->feasible ? "true" : "false", r->contiguous ? "true" : "false");
        hsdag_buf_double(&o, r->lower_bound_s * 1e3);
        hsdag_buf_printf(&o, ", \"method_bound_ms\": ");
        if (isnan(r->rep.bound_s))
            hsdag_buf_printf(&o, "null");
        else
            hsdag_buf_double(&o, r->rep.bound_s * 1e3);
        hsdag_buf_printf(&o, ", \"gap\": ");
        if (isnan(r->gap))
            hsdag_buf_printf(&o, "null");
        else
            hsdag_buf_double(&o, r->gap);
        hsdag_buf_printf(&o, ", \"place_s\": ");
        hsdag_buf_double(&o, r->place_s);
        hsdag_buf_printf(&o, ", \"optimal\": %s, \"note\": ", r->rep.optimal ? "true" : "false");
        hsdag_buf_json_str(&o, r->rep.note);
        hsdag_buf_printf(&o, "}");
    }
    hsdag_buf_printf(&o, "\n]}\n");
    if (o.data) fputs(o.data, stdout);
    hsdag_buf_free(&o);
}

static void print_table(const hsdag_place_problem *p, const hsdag_bound *b, double cb, const cmp_row *rows,
                        int n)
{
    int tp = p->obj == HSDAG_OBJ_THROUGHPUT;
    printf("devices %s, %s semantics, %s objective, %d ops; lower bound %.6g ms (%s)\n\n",
           p->devs->name ? p->devs->name : "", hsdag_semantics_name(p->sem), hsdag_objective_name(p->obj),
           (int)p->n, b->lower_s * 1e3, b->rule ? b->rule : "");
    if (!isnan(cb))
        printf(
            "bound over contiguous splits %.6g ms (from the exact solvers; the gap of a row marked 'c' uses "
            "it)\n\n",
            cb * 1e3);
    printf("%-18s %12s%s %9s %-10s %11s  %s\n", "method", tp ? "max_load_ms" : "latency_ms",
           tp ? "   latency_ms" : "", "gap", "feasible", "place_ms", "note");
    for (int i = 0; i < n; i++) {
        const hsdag_place_result *r = &rows[i].r;
        if (!rows[i].ok) {
            printf("%-18s %12s%s %9s %-10s %11.3f  %s\n", rows[i].name, "-", tp ? "             " : "", "-",
                   "n/a", r->place_s * 1e3, rows[i].err);
            continue;
        }
        char gap[32];
        if (isnan(r->gap))
            snprintf(gap, sizeof gap, "n/a");
        else
            snprintf(gap, sizeof gap, "%.2f%%", 100 * r->gap);
        char lat[32] = "";
        if (tp) snprintf(lat, sizeof lat, " %12.6g", r->latency_s * 1e3);
        if (r->contiguous && !isnan(cb)) snprintf(gap + strlen(gap), sizeof gap - strlen(gap), " c");
        printf("%-18s %12.6g%s %9s %-10s %11.3f  %s\n", rows[i].name, r->objective_s * 1e3, lat, gap,
               r->feasible ? "yes" : "NO", r->place_s * 1e3, r->rep.note);
    }
}

int cmd_compare(int argc, char **argv)
{
    enum { O_DEV = 256, O_METH, O_JSON, O_SEED, O_TL, O_SEM, O_OBJ, O_COSTS, O_EVALS, O_HELP };
    static const struct option opts[] = {{"devices", required_argument, 0, O_DEV},
                                         {"methods", required_argument, 0, O_METH},
                                         {"json", no_argument, 0, O_JSON},
                                         {"seed", required_argument, 0, O_SEED},
                                         {"time-limit", required_argument, 0, O_TL},
                                         {"semantics", required_argument, 0, O_SEM},
                                         {"costs", required_argument, 0, O_COSTS},
                                         {"max-evals", required_argument, 0, O_EVALS},
                                         {"objective", required_argument, 0, O_OBJ},
                                         {"help", no_argument, 0, O_HELP},
                                         {0, 0, 0, 0}};
    const char *devspec = NULL, *methods = NULL;
    int json = 0;
    long lv;
    double dv;
    hsdag_sim_config sc = hsdag_sim_config_default();
    hsdag_place_opts po = hsdag_place_opts_default();
    optind = 1;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        switch (c) {
        case O_DEV:
            devspec = optarg;
            break;
        case O_METH:
            methods = optarg;
            break;
        case O_JSON:
            json = 1;
            break;
        case O_SEED:
            if (cli_parse_int(optarg, 0, 0x7fffffffL, &lv) < 0)
                return cli_usage_error("compare", "--seed: '%s' is not an integer in [0, 2^31)", optarg);
            po.seed = (uint64_t)lv;
            break;
        case O_TL:
            if (cli_parse_double(optarg, 1e-3, 1e6, &dv) < 0)
                return cli_usage_error(
                    "compare", "--time-limit: '%s' is not a number of seconds in [0.001, 1e6]", optarg);
            po.time_limit_s = dv;
            break;
        case O_EVALS:
            if (cli_parse_int(optarg, 1, 1000000000L, &lv) < 0)
                return cli_usage_error("compare", "--max-evals: '%s' is not an integer in [1, 1e9]", optarg);
            po.max_evals = lv;
            break;
        case O_SEM:
            if (hsdag_semantics_parse(optarg, &sc.semantics) < 0)
                return cli_usage_error("compare",
                                       "--semantics: '%s' is not sequential, concurrent, tarnawski or "
                                       "auto",
                                       optarg);
            break;
        case O_OBJ:
            if (hsdag_objective_parse(optarg, &sc.objective) < 0)
                return cli_usage_error("compare", "--objective: '%s' is not latency or throughput", optarg);
            break;
        case O_COSTS:
            if (strcmp(optarg, "auto") == 0)
                sc.costs.source = HSDAG_COSTSRC_AUTO;
            else if (strcmp(optarg, "roofline") == 0)
                sc.costs.source = HSDAG_COSTSRC_ROOFLINE;
            else if (strcmp(optarg, "file") == 0)
                sc.costs.source = HSDAG_COSTSRC_FILE;
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
    if (optind >= argc) return cli_usage_error("compare", "missing MODEL");
    if (optind + 1 < argc) return cli_usage_error("compare", "unexpected argument '%s'", argv[optind + 1]);
    const char *model = argv[optind];
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    hsdag_devices *devs = NULL;
    hsdag_place_problem *p = NULL;
    int32_t *dev = NULL;
    cmp_row *rows = hsdag_calloc(CMP_MAX_METHODS, sizeof *rows);
    int n = 0, rc = CLI_OK, st;
    hsdag_bound b;
    if (!rows) {
        st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
        goto fail;
    }
    if ((st = hsdag_load_file(model, HSDAG_FMT_UNKNOWN, &g, &e)) < 0) goto fail;
    if ((st = hsdag_devices_load(devspec, g, &devs, &e)) < 0) goto fail;
    if (methods) {
        if ((rc = split_methods(methods, devs, rows, &n)) != 0) goto done;
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
    cli_progress_start(&pr, "compare", n, json);
    for (int i = 0; i < n; i++) {
        hsdag_err me = {0};
        cli_progress_update(&pr, i, rows[i].name);
        int mr = hsdag_place_run(p, rows[i].name, &po, dev, &rows[i].r, &me);
        rows[i].ok = mr == 0;
        if (mr == HSDAG_ENOMEM) {
            st = mr;
            e = me;
            cli_progress_end(&pr);
            goto fail;
        }
        if (mr < 0)
            snprintf(rows[i].err, sizeof rows[i].err, "%.250s", me.msg[0] ? me.msg : hsdag_status_str(mr));
    }
    cli_progress_update(&pr, n, "");
    cli_progress_end(&pr);
    double cb = contiguous_bound(rows, n);
    if (json)
        print_json(p, &b, cb, rows, n);
    else
        print_table(p, &b, cb, rows, n);
    goto done;
fail:
    rc = cli_fail("compare", st, &e);
done:
    hsdag_free(dev);
    hsdag_free(rows);
    hsdag_place_problem_free(p);
    hsdag_devices_free(devs);
    hsdag_graph_free(g);
    return rc;
}
