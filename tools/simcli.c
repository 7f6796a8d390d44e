/* simcli.c - shared loading and placement outputs of the commands that take a MODEL (simulate, place,
 * bound, compare, train).
 * Not here: the commands themselves (cmd_*.c) or option parsing (opt.c).
 * Entry points: simcli_load, simcli_set_devices, simcli_problem, simcli_outputs_of, simcli_write_outputs,
 *   simcli_free, simcli_check_method_opts.
 */
#include "simcli.h"

#include <string.h>

int simcli_load(const cli_args *a, simcli *s)
{
    hsdag_err e = {0};
    memset(s, 0, sizeof *s);
    s->a = a;
    s->model = a->pos[0];
    s->sc = hsdag_sim_config_default();
    /* the values are among the table's choices, so these cannot fail */
    if (a->semantics) hsdag_semantics_parse(&s->sc.semantics, a->semantics, NULL);
    if (a->costs) hsdag_costsrc_parse(&s->sc.costs.source, a->costs, NULL);
    if (a->priority) hsdag_priority_parse(&s->sc.priority, a->priority, NULL);
    if (a->objective) hsdag_objective_parse(&s->sc.objective, a->objective, NULL);
    int rc = hsdag_load_file(&s->g, s->model, HSDAG_FMT_UNKNOWN, &e);
    if (rc < 0) return cli_fail(a->name, rc, &e);
    if (a->profile && (rc = hsdag_profile_read_file(&s->prof, a->profile, &e)) < 0)
        return cli_fail(a->name, rc, &e);
    s->sc.costs.profile = s->prof;
    s->devices_defaulted = a->devices == NULL;
    return simcli_set_devices(s, a->devices);
}

int simcli_set_devices(simcli *s, const char *spec)
{
    hsdag_err e = {0};
    hsdag_devices *d = NULL;
    int rc = hsdag_devices_load(&d, spec, s->g, &e);
    if (rc < 0) return cli_fail(s->a->name, rc, &e);
    hsdag_devices_free(s->devs);
    s->devs = d;
    return CLI_OK;
}

int simcli_mem(simcli *s)
{
    hsdag_err e = {0};
    int rc;
    for (int i = 0; i < s->a->mem.n; i++) /* --mem caps, in order */
        if ((rc = hsdag_devices_mem_override(s->devs, s->g, &s->sc, s->a->mem.v[i], &e)) < 0)
            return cli_fail(s->a->name, rc, &e);
    return CLI_OK;
}

int simcli_problem(simcli *s, hsdag_place_problem **p)
{
    hsdag_err e = {0};
    int rc = simcli_mem(s);
    if (rc != CLI_OK) return rc;
    rc = hsdag_place_problem_create(p, s->g, s->devs, &s->sc, &e);
    if (rc == HSDAG_EUNSUPPORTED && s->sc.costs.source == HSDAG_COSTSRC_FILE)
        return cli_usage_error(s->a->name, "%s: --costs file does not apply: %s", s->model, e.msg);
    if (rc < 0) return cli_fail(s->a->name, rc, &e);
    return CLI_OK;
}

void simcli_free(simcli *s)
{
    hsdag_devices_free(s->devs);
    hsdag_profile_free(s->prof);
    hsdag_graph_free(s->g);
    memset(s, 0, sizeof *s);
}

simcli_outputs simcli_outputs_of(const cli_args *a)
{
    return (simcli_outputs){a->out, a->affinity, a->split, a->dot, a->dot_full, a->trace};
}

/* One output: rc of the writer that filled b, then the atomic write. */
static int write_one(const char *cmd, const char *path, int rc, hsdag_buf *b)
{
    if (rc == 0 && b->oom) rc = HSDAG_ENOMEM;
    int out = rc < 0 ? (fprintf(stderr, "hsdag %s: %s: %s\n", cmd, path, hsdag_status_str(rc)), CLI_FAIL)
                     : cli_write_out(cmd, path, b);
    hsdag_buf_free(b);
    return out;
}

static int write_trace(const simcli *s, const hsdag_place_problem *p, const int32_t *dev, const char *path)
{
    hsdag_sim_config cfg = s->sc;
    cfg.semantics = p->sem;
    cfg.record_trace = 1;
    hsdag_sim *sim = NULL;
    hsdag_sim_result r;
    hsdag_buf b = {0};
    hsdag_err e = {0};
    int rc = hsdag_sim_create(&sim, s->g, p->devs, &cfg, &e);
    if (rc == 0) rc = hsdag_sim_run(sim, dev, &r);
    if (rc == 0) rc = hsdag_sim_trace_write(sim, &b, &e);
    hsdag_sim_free(sim);
    if (rc < 0) {
        hsdag_buf_free(&b);
        cli_fail(s->a->name, rc, &e);
        return CLI_FAIL; /* the placement is done; only its trace failed */
    }
    return write_one(s->a->name, path, 0, &b);
}

int simcli_write_outputs(const simcli *s, const hsdag_place_problem *p, const int32_t *dev,
                         const simcli_outputs *o)
{
    const char *cmd = s->a->name;
    const hsdag_devices *d = p->devs;
    hsdag_buf b = {0};
    int rc = CLI_OK;
    if (o->out) rc = write_one(cmd, o->out, hsdag_placement_write_json(&b, s->g, d, dev), &b);
    if (rc == CLI_OK && o->affinity)
        rc = write_one(cmd, o->affinity, hsdag_placement_write_affinity(&b, s->g, d, dev), &b);
    if (rc == CLI_OK && o->split)
        rc = write_one(cmd, o->split, hsdag_placement_write_split(&b, s->g, d, dev), &b);
    const char *names[HSDAG_MAX_DEVICES];
    for (int32_t k = 0; k < d->n; k++) names[k] = d->dev[k].name;
    if (rc == CLI_OK && o->dot)
        rc = write_one(cmd, o->dot,
                       s->g->n_nodes > SIMCLI_DOT_FULL_MAX
                           ? hsdag_dot_write_groups(&b, s->g, dev, names, d->n, SIMCLI_DOT_GROUPS)
                           : hsdag_dot_write(&b, s->g, dev, names, d->n),
                       &b);
    if (rc == CLI_OK && o->dot_full)
        rc = write_one(cmd, o->dot_full, hsdag_dot_write(&b, s->g, dev, names, d->n), &b);
    if (rc == CLI_OK && o->trace) rc = write_trace(s, p, dev, o->trace);
    return rc;
}

/* 1 if the registry method name (a single-device spec reads nothing) reads what flag stands for. */
static int method_uses(const char *name, size_t len, unsigned flag)
{
    int32_t n;
    const hsdag_place_method *m = hsdag_place_methods(&n);
    for (int32_t i = 0; i < n; i++)
        if (strlen(m[i].name) == len && strncmp(m[i].name, name, len) == 0) return (m[i].uses & flag) != 0;
    return 0;
}

int simcli_check_method_opts(const cli_args *a, const char *methods)
{
    static const struct {
        size_t off;
        const char *name;
        unsigned flag;
    } opts[] = {
        {offsetof(cli_args, time_limit), "time-limit", HSDAG_PLACE_USES_TIME_LIMIT},
        {offsetof(cli_args, cpu_time), "cpu-time", HSDAG_PLACE_USES_CPU_TIME},
        {offsetof(cli_args, max_evals), "max-evals", HSDAG_PLACE_USES_MAX_EVALS},
        {offsetof(cli_args, ilp_iterations), "ilp-iterations", HSDAG_PLACE_USES_ILP_ITERATIONS},
        {offsetof(cli_args, budget), "budget", HSDAG_PLACE_USES_BUDGET},
        {offsetof(cli_args, noise), "noise", HSDAG_PLACE_USES_BUDGET},
        {offsetof(cli_args, init), "init", HSDAG_PLACE_USES_INIT},
    };
    int32_t n;
    const hsdag_place_method *m = hsdag_place_methods(&n);
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        if (!cli_given_off(a, opts[k].off)) continue;
        int used = 0;
        if (methods) {
            for (const char *s = methods; *s && !used;) {
                size_t len = strcspn(s, ",");
                used = method_uses(s, len, opts[k].flag);
                s += len + (s[len] == ',');
            }
        } else { /* compare's default list: every method marked in_compare, and single devices */
            for (int32_t i = 0; i < n && !used; i++) used = m[i].in_compare && (m[i].uses & opts[k].flag);
        }
        if (used) continue;
        char readers[512];
        size_t len = 0;
        readers[0] = 0;
        for (int32_t i = 0; i < n && len < sizeof readers; i++)
            if (m[i].uses & opts[k].flag)
                len +=
                    (size_t)snprintf(readers + len, sizeof readers - len, "%s%s", len ? ", " : "", m[i].name);
        return cli_usage_error(a->name, "--%s does not apply to %s '%s': it is read by %s only", opts[k].name,
                               a->cmd == CMD_PLACE ? "--method" : "--methods", methods ? methods : "",
                               readers);
    }
    return CLI_OK;
}
