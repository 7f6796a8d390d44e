/* cmd_place.c - the 'hsdag place' subcommand: run one placement method, score it, write the placement.
 * Not here: any placement logic (src/place) or simulation (src/sim); this file parses options and prints.
 * Entry points: cmd_place. */
#include "hsdag/pretrain.h"
#include "simcli.h"

#include <math.h>
#include <string.h>

enum { POLICY_LIST_BYTES = 16384 }; /* --policy's list, or the shipped files' paths */

static void print_text(const simcli *s, const hsdag_place_problem *p, const int32_t *dev,
                       const hsdag_place_result *r)
{
    int32_t per[HSDAG_MAX_DEVICES] = {0};
    for (int32_t v = 0; v < p->n; v++) per[dev[v]]++;
    printf("method      %s\n", r->method);
    printf("devices     %s (%s semantics)\n", p->devs->name ? p->devs->name : "",
           hsdag_semantics_name(p->sem));
    printf("latency     %.6g ms%s\n", r->latency_s * 1e3, r->feasible ? "" : "  INFEASIBLE");
    if (p->obj == HSDAG_OBJ_THROUGHPUT)
        printf("throughput  %.6g ms per sample (max load: the objective)\n", r->objective_s * 1e3);
    printf("lower bound %.6g ms (%s; gap %s", r->lower_bound_s * 1e3, r->lower_bound_rule,
           isnan(r->gap) ? "n/a" : "");
    if (!isnan(r->gap)) printf("%.2f%%", 100 * r->gap);
    printf(")\n");
    printf("placed in   %.3f ms%s\n", r->place_s * 1e3,
           r->rep.optimal ? "  (proven optimal for its model)" : "");
    if (!isnan(r->rep.lp_cpu_s))
        printf("solver      CPU s: LP relaxation %.3g, branch-and-cut %.3g (of %.3g)\n", r->rep.lp_cpu_s,
               isnan(r->rep.branch_and_cut_cpu_s) ? 0.0 : r->rep.branch_and_cut_cpu_s, r->cpu_s);
    printf("ops         ");
    for (int32_t d = 0; d < p->k; d++) printf("%s%s %d", d ? ", " : "", p->devs->dev[d].name, (int)per[d]);
    printf("\n");
    if (r->rep.note[0]) printf("note        %s\n", r->rep.note);
    (void)s;
}

/* --method hsdag|placeto with a pre-trained policy (--policy FILE, FILE,FILE,... (an HSDAG ensemble), or the
 * preset's shipped one): zero-shot without --budget, fine-tuned with --budget N measurements. */
static int place_with_policy(const cli_args *a, hsdag_place_problem *p, int32_t *dev, hsdag_place_result *r,
                             hsdag_err *e)
{
    enum { MAX_MEMBERS = HSDAG_POLICY_MAX_ENSEMBLE };
    hsdag_policy_method m;
    hsdag_policy_method_parse(&m, a->method, NULL);
    char files[POLICY_LIST_BYTES];
    const char *file = a->policy, *member[MAX_MEMBERS];
    int st = 0, capped = 0;
    int32_t shipped = 0, nf = 0; /* shipped: members of the shipped ensemble, 0 = a --policy FILE list */
    int64_t budget = cli_given(a, budget) ? a->budget : 0; /* a policy alone: zero-shot */
    if (strcmp(file, "shipped") == 0) {
        if ((st = hsdag_policy_find_shipped(files, sizeof files, &shipped, &capped, m, p, e)) < 0) return st;
        for (const char *s = files; nf < shipped; s += strlen(s) + 1) member[nf++] = s;
    } else {
        if (strlen(file) >= sizeof files)
            return hsdag_err_set(e, HSDAG_EINVAL, "--policy: a list of %zu bytes, longer than %zu",
                                 strlen(file), sizeof files - 1);
        memcpy(files, file, strlen(file) + 1);
        for (char *s = files, *tok; s && (tok = strsep(&s, ","));) {
            if (nf == MAX_MEMBERS)
                return hsdag_err_set(e, HSDAG_EINVAL, "--policy: more than %d policies", MAX_MEMBERS);
            if (!*tok)
                return hsdag_err_set(e, HSDAG_EINVAL, "--policy '%.200s': an empty file name in the list",
                                     file);
            member[nf++] = tok;
        }
    }
    hsdag_policy *pol[MAX_MEMBERS] = {0};
    int32_t n = 0;
    for (int32_t i = 0; i < nf; i++) {
        if ((st = hsdag_policy_read_file(&pol[n], member[i], e)) < 0) break;
        if (hsdag_policy_method_of(pol[n++]) != m) {
            st = hsdag_err_set(e, HSDAG_EINVAL, "%s: a %s policy, not %s", member[i],
                               hsdag_policy_method_name(hsdag_policy_method_of(pol[n - 1])), a->method);
            break;
        }
    }
    if (st < 0) goto done;
    double t0 = hsdag_now();
    hsdag_policy_result pr;
    hsdag_place_oracle orc;
    hsdag_place_oracle_init(&orc, p, a->noise, (uint64_t)a->seed);
    st = hsdag_policy_place_ensemble((const hsdag_policy *const *)pol, n, p, budget, (uint64_t)a->seed,
                                     hsdag_place_oracle_eval, &orc, dev, &pr, e);
    if (st == HSDAG_EINVAL) { /* name the file, or the list: the message counts its policies from #1 */
        char pre[160];
        snprintf(pre, sizeof pre, "--policy '%.120s'", n > 1 ? file : member[0]);
        hsdag_err_prefix(e, pre);
    }
    double took = hsdag_now() - t0;
    if (st == 0) st = hsdag_place_score(p, dev, r, e);
    if (st == 0) {
        r->method = a->method;
        r->place_s = took;
        r->rep.evals = pr.evals;
        char *nt = r->rep.note;
        size_t cap = sizeof r->rep.note, l;
        /* a shipped path's last characters say most: its directory's tail and the file name */
        size_t l0 = strlen(member[0]), keep = shipped > 1 ? 48 : 90;
        const char *cut = l0 > keep ? "..." : "", *tail = member[0] + (l0 > keep ? l0 - keep : 0);
        if (shipped > 1) /* members <preset>.capped.0.bin, .1.bin, ... of one directory: show "0-(n-1)" */
            snprintf(nt, cap, "shipped ensemble of %d policies trained under a memory cap (%s%.*s0-%d.bin)",
                     (int)n, cut, (int)(strlen(tail) - strlen("0.bin")), tail, (int)n - 1);
        else if (shipped)
            snprintf(nt, cap, "shipped policy %s%s%s (%.20s)", cut, tail,
                     capped > 0   ? ", trained under a memory cap"
                     : capped < 0 ? ", uncapped: no capped one is shipped"
                                  : "",
                     hsdag_policy_preset(pol[0]));
        else if (n > 1)
            snprintf(nt, cap, "ensemble of %d pre-trained policies %.100s (%.40s)", (int)n, file,
                     hsdag_policy_preset(pol[0]));
        else
            snprintf(nt, cap, "pre-trained policy %.120s (%.40s)", file, hsdag_policy_preset(pol[0]));
        if (budget <= 0) {
            l = strlen(nt);
            snprintf(nt + l, cap - l, ": one forward pass%s, nothing measured",
                     n > 1 ? " each, log-probabilities averaged" : "");
            l = strlen(nt);
            if (pr.fit_moved > 0)
                snprintf(nt + l, cap - l, "; %d decisions moved to fit the memory caps (memory walk)",
                         (int)pr.fit_moved);
        } else {
            l = strlen(nt);
            snprintf(nt + l, cap - l,
                     " fine-tuned%s with %lld measurements: one-pass %.6g ms, best at measurement %lld",
                     n > 1 ? " (the first)" : "", (long long)pr.evals, pr.greedy_s * 1e3,
                     (long long)pr.best_at);
        }
    }
done:
    for (int32_t i = 0; i < n; i++) hsdag_policy_free(pol[i]);
    return st;
}

/* Which policy --method hsdag|placeto places with: --policy P as given ("none": the method from scratch);
 * without --policy but with --budget N on a device preset (not a file), the preset's shipped one where it has
 * one (fine-tuned with N measurements, or zero-shot with N = 0, as --policy shipped --budget N), else from
 * scratch (*none_shipped = 1; 2: a device file), which --budget 0 cannot be. --max-evals, the budget of the
 * method from scratch, keeps it and is refused with a policy (the other options of that method are refused
 * for hsdag and placeto anyway). NULL = from scratch; CLI_OK or an exit status in *rc. */
static const char *policy_of(const cli_args *a, const simcli *s, int *none_shipped, int *rc)
{
    hsdag_policy_method m;
    *none_shipped = 0;
    *rc = CLI_OK;
    if (hsdag_policy_method_parse(&m, a->method, NULL) < 0) return NULL;
    const char *pol = a->policy;
    if (pol && strcmp(pol, "none") == 0) return NULL;
    if (pol && cli_given(a, max_evals)) {
        *rc =
            cli_usage_error(a->name, "--max-evals does not apply with --policy (a pre-trained policy reads "
                                     "--budget, --noise and --seed; --policy none: the method from scratch)");
        return NULL;
    }
    if (pol || !cli_given(a, budget)) return pol;
    int st = 0;
    if (cli_given(a, max_evals)) {
        if (a->budget > 0) return NULL;
    } else if (hsdag_devices_spec_is_file(a->devices)) { /* no preset, whatever name the file gives itself */
        *none_shipped = 2;
    } else {
        char path[POLICY_LIST_BYTES];
        hsdag_err e = {0};
        st = hsdag_policy_find(path, sizeof path, m, s->devs->name, &e); /* place_with_policy goes on */
        if (st == HSDAG_EIO)
            *none_shipped = 1;
        else if (st < 0)
            *rc = cli_fail(a->name, st, &e);
        if (st == 0) return "shipped";
    }
    if (*rc == CLI_OK && a->budget == 0)
        *rc = cli_usage_error(a->name, "--budget 0 places zero-shot with a pre-trained policy, and %s",
                              cli_given(a, max_evals) ? "--max-evals is the budget of the method from scratch"
                              : *none_shipped == 2    ? "devices from a file have no shipped one"
                                                      : "this preset has no shipped one for the method");
    return NULL;
}

int cmd_place(int argc, char **argv)
{
    cli_args a;
    cli_args_init(&a, CMD_PLACE);
    int rc = cli_parse(&a, argc, argv);
    if (rc != CLI_CONTINUE) return rc;
    if (a.list) {
        int32_t cnt;
        const hsdag_place_method *m = hsdag_place_methods(&cnt);
        for (int32_t i = 0; i < cnt; i++) printf("%s\n", m[i].name);
        return CLI_OK;
    }
    if (!a.method) return cli_usage_error(a.name, "missing --method (try --list)");
    if (a.policy && strcmp(a.method, "hsdag") != 0 && strcmp(a.method, "placeto") != 0)
        return cli_usage_error(a.name, "--policy goes with --method hsdag or placeto");
    if ((rc = simcli_check_method_opts(&a, a.method)) != CLI_OK) return rc;
    simcli s = {0};
    hsdag_place_problem *p = NULL;
    int32_t *dev = NULL, *init = NULL;
    hsdag_err e = {0};
    int st;
    if ((rc = simcli_load(&a, &s)) != CLI_OK) goto done;
    if (!hsdag_place_method_find(a.method) && hsdag_place_single_device(s.devs, a.method) < 0) {
        rc = cli_usage_error(a.name,
                             "--method: unknown method '%s' (not a method nor a device of %s; try --list)",
                             a.method, s.devs->name ? s.devs->name : "the device set");
        goto done;
    }
    if ((rc = simcli_problem(&s, &p)) != CLI_OK) goto done;
    size_t n1 = (size_t)(s.g->n_nodes ? s.g->n_nodes : 1);
    dev = hsdag_malloc(n1 * sizeof *dev);
    if (!dev || (a.init && !(init = hsdag_malloc(n1 * sizeof *init)))) {
        rc = cli_fail(a.name, HSDAG_ENOMEM, NULL);
        goto done;
    }
    hsdag_place_opts po = hsdag_place_opts_default();
    po.seed = (uint64_t)a.seed;
    po.time_limit_s = a.time_limit;
    po.time_limit_cpu = a.cpu_time;
    po.max_evals = a.max_evals;
    po.ilp_iterations = a.ilp_iterations;
    po.budget = a.budget;
    po.noise = a.noise;
    if (a.init) {
        if ((st = hsdag_placement_read_file(init, NULL, a.init, s.g, s.devs, &e)) < 0) {
            rc = cli_fail(a.name, st, &e);
            goto done;
        }
        po.init = init;
    }
    int none_shipped;
    const char *policy = policy_of(&a, &s, &none_shipped, &rc);
    if (rc != CLI_OK) goto done;
    hsdag_place_result r;
    if (policy) {
        a.policy = policy;
        st = place_with_policy(&a, p, dev, &r, &e);
    } else {
        st = hsdag_place_run(p, a.method, &po, dev, &r, &e);
    }
    if (st < 0) {
        rc = cli_fail(a.name, st, &e);
        goto done;
    }
    if (none_shipped) { /* say why --budget learned from scratch: the preset has no shipped policy */
        char pre[96];
        int w = none_shipped == 2
                    ? snprintf(pre, sizeof pre, "from scratch: devices from a file have no shipped policy; ")
                    : snprintf(pre, sizeof pre, "from scratch: no shipped %s policy for '%.24s'; ", a.method,
                               s.devs->name ? s.devs->name : "these devices");
        size_t keep = sizeof r.rep.note - 1 - (size_t)w, l = strlen(r.rep.note);
        memmove(r.rep.note + w, r.rep.note, l < keep ? l : keep);
        r.rep.note[w + (l < keep ? l : keep)] = 0;
        memcpy(r.rep.note, pre, (size_t)w);
    }
    if (a.json) {
        hsdag_buf b = {0};
        hsdag_place_json_info info = {
            .model = s.model, .method = a.method, .seed = a.seed, .evals_per_s = NAN};
        hsdag_place_result_write_json(&b, p, dev, &r, &info);
        rc = cli_write_out(a.name, "-", &b);
        hsdag_buf_free(&b);
    } else {
        print_text(&s, p, dev, &r);
        rc = CLI_OK;
    }
    simcli_outputs o = simcli_outputs_of(&a);
    if (rc == CLI_OK) rc = simcli_write_outputs(&s, p, dev, &o);
done:
    hsdag_free(dev);
    hsdag_free(init);
    hsdag_place_problem_free(p);
    simcli_free(&s);
    return rc;
}
