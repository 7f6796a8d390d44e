/* cmd_bound.c - 'hsdag bound MODEL': a valid lower bound on the latency of any placement on a device set,
 * with the terms it is made of (critical path, work per device, sum of cheapest costs, the exact optimum
 * where known); the same bound place, compare, simulate and train report.
 * Not here: the bounds themselves (src/sim/bound.c, hsdag_place_bound_contiguous in src/place/ilp.c) and the
 *           exact two-device solver (src/place/mincut.c).
 * Entry points: cmd_bound.
 */
#include "simcli.h"

#include <math.h>

int cmd_bound(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, CMD_BOUND);
    int rc = cli_parse(&a, argc, argv);
    if (rc != CLI_CONTINUE) return rc;
    if (cli_given(&a, time_limit) && !a.contiguous)
        return cli_usage_error(a.name, "--time-limit does not apply without --contiguous");
    simcli s = {0};
    hsdag_costs *c = NULL;
    hsdag_err e = {0};
    hsdag_buf b = {0};
    if ((rc = simcli_load(&a, &s)) != CLI_OK || (rc = simcli_mem(&s)) != CLI_OK) goto done;
    int lrc = hsdag_costs_create(&c, s.g, s.devs, &s.sc.costs, &e);
    if (lrc == HSDAG_EUNSUPPORTED && s.sc.costs.source == HSDAG_COSTSRC_FILE) {
        rc = cli_usage_error(a.name, "%s: --costs file does not apply: %s", s.model, e.msg);
        goto done;
    }
    hsdag_bound bd;
    if (lrc == 0) lrc = hsdag_place_bound_compute(&bd, c, s.sc.semantics, s.sc.objective, !a.no_exact, &e);
    if (lrc < 0) {
        rc = cli_fail(a.name, lrc, &e);
        goto done;
    }
    if (a.contiguous && bd.semantics != HSDAG_SEM_TARNAWSKI) {
        rc = cli_usage_error(a.name, "--contiguous applies to tarnawski semantics only (here: %s)",
                             hsdag_semantics_name(bd.semantics));
        goto done;
    }
    double cb = NAN;
    const char *cb_method = NULL;
    char cb_note[256] = "";
    if (a.contiguous) {
        hsdag_place_problem *pp = NULL;
        lrc = hsdag_place_problem_create(&pp, s.g, s.devs, &s.sc, &e);
        if (lrc == 0)
            lrc =
                hsdag_place_bound_contiguous(&cb, &cb_method, cb_note, sizeof cb_note, pp, a.time_limit, &e);
        hsdag_place_problem_free(pp);
        if (lrc < 0) {
            rc = cli_fail(a.name, lrc, &e);
            goto done;
        }
    }
    if (a.json) {
        hsdag_bound_write_json(&b, c, &bd, s.model, cb, cb_method, cb_note);
        rc = cli_write_out(a.name, "-", &b);
    } else {
        printf("model        %s (%d nodes)\n", s.model, (int)s.g->n_nodes);
        printf("devices      %s (%d), semantics %s, op costs %s\n", s.devs->name, (int)s.devs->n,
               hsdag_semantics_name(bd.semantics), hsdag_costsrc_name(c->source));
        printf("objective    %s\n", hsdag_objective_name(bd.objective));
        printf("lower bound  %.6f ms (%s)\n", bd.lower_s * 1e3, bd.rule);
        if (!isnan(bd.max_class_s)) printf("  costliest class        %.6f ms\n", bd.max_class_s * 1e3);
        printf("  critical path          %.6f ms\n", bd.critical_path_s * 1e3);
        printf("  sum of cheapest costs  %.6f ms\n", bd.work_s * 1e3);
        if (!isnan(bd.work_per_device_s))
            printf("  work per device        %.6f ms\n", bd.work_per_device_s * 1e3);
        if (!isnan(bd.exact_s)) printf("  exact optimum          %.6f ms\n", bd.exact_s * 1e3);
        if (!isnan(bd.path_blocks_s)) printf("  path blocks            %.6f ms\n", bd.path_blocks_s * 1e3);
        if (!isnan(bd.memory_s)) printf("  min cut, memory caps   %.6f ms\n", bd.memory_s * 1e3);
        if (cb_method && isnan(cb)) printf("contiguous   no bound (%s: %s)\n", cb_method, cb_note);
        if (!isnan(cb))
            printf("contiguous   %.6f ms: bound over contiguous splits (%s: %s)\n", cb * 1e3, cb_method,
                   cb_note);
        rc = CLI_OK;
    }
done:
    hsdag_buf_free(&b);
    hsdag_costs_free(c);
    simcli_free(&s);
    return rc;
}
