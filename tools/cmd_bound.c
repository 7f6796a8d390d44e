/* cmd_bound.c - 'hsdag bound MODEL': a valid lower bound on the latency of any placement on a device set,
 * with
 * the terms it is made of (critical path, work per device, sum of cheapest costs, the exact optimum if
 * known).
 * Not here: the bounds themselves (src/sim/bound.c) and the exact two-device solver (src/place/mincut.c).
 * Entry points: cmd_bound.
 */
#include "hsdag/place.h"
#include "simcli.h"

#include <getopt.h>
#include <math.h>
#include <string.h>

static void help(void)
{
    printf(
        "usage: hsdag bound MODEL [options]\n\n"
        "Prints a lower bound on the latency of one inference request of MODEL under any placement on the\n"
        "device set (memory capacities ignored, so it holds for feasible placements too):\n"
        "  sequential  the sum over ops of their cheapest allowed cost, or the exact optimum where the\n"
        "              placers provide one (two devices: the min cut)\n"
        "  concurrent  max(critical path with every op on its fastest device and no transfers,\n"
        "                  total cheapest work / number of devices)\n"
        "  tarnawski   the critical path with every op at min(cpuLatency, fpgaLatency where allowed)\n\n"
        "options:\n");
    simcli_help_common(stdout);
    printf("  --no-exact        skip the exact solver even when it applies\n"
           "  --help            this text\n");
}

int cmd_bound(int argc, char **argv)
{
    static const struct option lo[] = {
        {"devices", required_argument, 0, 'd'}, {"semantics", required_argument, 0, 's'},
        {"costs", required_argument, 0, 'c'},   {"profile", required_argument, 0, 'P'},
        {"json", no_argument, 0, 'j'},          {"no-exact", no_argument, 0, 'x'},
        {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
    simcli s = {0};
    hsdag_semantics sem = HSDAG_SEM_AUTO;
    hsdag_costsrc src = HSDAG_COSTSRC_AUTO;
    int json = 0, exact = 1, ch;
    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
        switch (ch) {
        case 'd':
            s.devices = optarg;
            break;
        case 's':
            if (hsdag_semantics_parse(&sem, optarg, NULL) < 0)
                return cli_usage_error("bound", "--semantics '%s': want sequential, concurrent or tarnawski",
                                       optarg);
            break;
        case 'c':
            if (simcli_parse_costs(optarg, &src) < 0)
                return cli_usage_error("bound", "--costs '%s': want auto, roofline or file", optarg);
            break;
        case 'P':
            s.profile = optarg;
            break;
        case 'j':
            json = 1;
            break;
        case 'x':
            exact = 0;
            break;
        case 'h':
            help();
            return CLI_OK;
        case ':':
            return cli_usage_error("bound", "option '%s' needs a value", argv[optind - 1]);
        default:
            return cli_usage_error("bound", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return cli_usage_error("bound", optind >= argc ? "no MODEL given" : "more than one MODEL given");
    s.model = argv[optind];
    hsdag_costs *c = NULL;
    hsdag_err e = {0};
    hsdag_buf b = {0};
    int rc = simcli_load("bound", &s);
    if (rc != CLI_OK) goto done;
    hsdag_costs_config cc = hsdag_costs_config_default();
    cc.source = src;
    cc.profile = s.prof;
    int lrc = hsdag_costs_create(&c, s.g, s.devs, &cc, &e);
    hsdag_bound bd;
    if (lrc == 0) lrc = hsdag_bound_compute(&bd, c, sem, exact ? hsdag_place_bound_exact : NULL, NULL, &e);
    if (lrc < 0) {
        rc = cli_fail("bound", lrc, &e);
        goto done;
    }
    if (json) {
        hsdag_buf_printf(&b, "{\"model\": ");
        hsdag_buf_json_str(&b, s.model);
        hsdag_buf_printf(&b, ", \"nodes\": %d, \"devices\": ", (int)s.g->n_nodes);
        hsdag_buf_json_str(&b, s.devs->name);
        hsdag_buf_printf(&b, ", \"semantics\": \"%s\", \"op_costs\": \"%s\", \"lower_bound_ms\": ",
                         hsdag_semantics_name(bd.semantics), simcli_costs_name(c->source));
        hsdag_buf_double(&b, bd.lower_s * 1e3);
        hsdag_buf_printf(&b, ", \"rule\": \"%s\", \"critical_path_ms\": ", bd.rule);
        hsdag_buf_double(&b, bd.critical_path_s * 1e3);
        hsdag_buf_printf(&b, ", \"work_ms\": ");
        hsdag_buf_double(&b, bd.work_s * 1e3);
        hsdag_buf_printf(&b, ", \"work_per_device_ms\": ");
        if (isnan(bd.work_per_device_s))
            hsdag_buf_printf(&b, "null");
        else
            hsdag_buf_double(&b, bd.work_per_device_s * 1e3);
        hsdag_buf_printf(&b, ", \"exact_ms\": ");
        if (isnan(bd.exact_s))
            hsdag_buf_printf(&b, "null");
        else
            hsdag_buf_double(&b, bd.exact_s * 1e3);
        hsdag_buf_printf(&b, "}\n");
        rc = cli_write_out("bound", "-", &b);
    } else {
        printf("model        %s (%d nodes)\n", s.model, (int)s.g->n_nodes);
        printf("devices      %s (%d), semantics %s, op costs %s\n", s.devs->name, (int)s.devs->n,
               hsdag_semantics_name(bd.semantics), simcli_costs_name(c->source));
        printf("lower bound  %.6f ms (%s)\n", bd.lower_s * 1e3, bd.rule);
        printf("  critical path          %.6f ms\n", bd.critical_path_s * 1e3);
        printf("  sum of cheapest costs  %.6f ms\n", bd.work_s * 1e3);
        if (!isnan(bd.work_per_device_s))
            printf("  work per device        %.6f ms\n", bd.work_per_device_s * 1e3);
        if (!isnan(bd.exact_s)) printf("  exact optimum          %.6f ms\n", bd.exact_s * 1e3);
        rc = CLI_OK;
    }
done:
    hsdag_buf_free(&b);
    hsdag_costs_free(c);
    simcli_free(&s);
    return rc;
}
