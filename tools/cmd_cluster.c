/* cmd_cluster.c - 'hsdag cluster run|compare|info': PAC-ML episodes on the RAMP cluster simulator.
 * Not here: the simulator and policies (src/cluster/), the learned policy (src/learn/pacml_*.c) or training
 * (cmd_cluster_train.c); options are the table's (opt.c).
 * Entry points: cmd_cluster. */
#include "cli.h"
#include "hsdag/cluster.h"
#include "hsdag/io.h"
#include "hsdag/pacml.h"
#include "opt.h"

#include <math.h>
#include <string.h>
#include <time.h>

#define CL_MAX_GRAPHS 64
#define CL_MAX_SEEDS 64
#define CL_MAX_POLICIES 16

typedef struct cl_opts {
    const cli_args *a;
    hsdag_cluster_config c;
    uint64_t seeds[CL_MAX_SEEDS];
    int n_seeds;
    char policies[CL_MAX_POLICIES][64];
    int n_policies;
} cl_opts;

static int cl_split_list(const char *s, char out[][64], int cap, int *n)
{
    *n = 0;
    while (*s) {
        const char *c = strchr(s, ',');
        size_t len = c ? (size_t)(c - s) : strlen(s);
        if (len == 0 || len >= 64 || *n >= cap) return -1;
        memcpy(out[*n], s, len);
        out[*n][len] = 0;
        (*n)++;
        if (!c) break;
        s = c + 1;
        if (!*s) return -1;
    }
    return *n ? 0 : -1;
}

/* The options' values into o (cluster config, seed and policy lists): what the table cannot check. */
static int cl_setup(const cli_args *a, cl_opts *o)
{
    const char *cmd = a->name;
    o->a = a;
    o->c = hsdag_cluster_config_default();
    o->c.beta = a->beta[0];
    o->c.time_unit_fix = a->time_unit_fix;
    o->c.node_bw = a->bandwidth;
    o->c.interarrival = a->interarrival;
    o->c.horizon = a->horizon;
    o->c.replication = (int32_t)a->replication;
    long x, y, z;
    char extra;
    if (sscanf(a->shape, "%ld,%ld,%ld%c", &x, &y, &z, &extra) != 3 || x < 1 || y < 1 || z < 1 ||
        x * y * z > 512)
        return cli_usage_error(cmd, "--shape '%s' is not C,R,S with 1 to 512 servers in all", a->shape);
    o->c.n_cgs = (int32_t)x;
    o->c.n_racks = (int32_t)y;
    o->c.n_servers = (int32_t)z;
    if (o->c.horizon / o->c.interarrival > 1e8)
        return cli_usage_error(cmd, "--horizon / --interarrival is %.3g arrivals, above 1e8",
                               o->c.horizon / o->c.interarrival);
    char tmp[CL_MAX_SEEDS][64];
    int n;
    if (cl_split_list(a->seeds, tmp, CL_MAX_SEEDS, &n) < 0)
        return cli_usage_error(cmd, "--seeds '%s' is not a comma-separated list of at most %d seeds",
                               a->seeds, CL_MAX_SEEDS);
    for (int i = 0; i < n; i++) {
        long v;
        if (cli_parse_int(tmp[i], 0, 2147483647L, &v) < 0)
            return cli_range_error(cmd, "--seeds element", tmp[i], 1, 0, 2147483647.0);
        o->seeds[i] = (uint64_t)v;
    }
    o->n_seeds = n;
    if (cl_split_list(a->policies, o->policies, CL_MAX_POLICIES, &o->n_policies) < 0)
        return cli_usage_error(cmd, "--policies '%s' is not a comma-separated list of at most %d policies",
                               a->policies, CL_MAX_POLICIES);
    if (!*a->betas) return cli_usage_error(cmd, "--betas is empty");
    for (const char *q = a->betas; *q; q++)
        if (*q < 'A' || *q > 'D') return cli_usage_error(cmd, "--betas '%s': letters A to D only", a->betas);
    return 0;
}

/* Loads --graphs files (or none: built-in) and creates the env. */
static int cl_make_env(const cl_opts *o, hsdag_cluster **env)
{
    hsdag_err e = {0};
    hsdag_graph *gs[CL_MAX_GRAPHS];
    const char *names[CL_MAX_GRAPHS];
    char list[CL_MAX_GRAPHS][64];
    int n = 0, rc = 0;
    const char *cmd = o->a->name;
    if (o->a->graphs) {
        /* split by comma into paths */
        char buf[4096];
        if (strlen(o->a->graphs) >= sizeof buf) return cli_usage_error(cmd, "--graphs: list too long");
        strcpy(buf, o->a->graphs);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (n >= CL_MAX_GRAPHS) {
                rc = cli_usage_error(cmd, "--graphs: at most %d files", CL_MAX_GRAPHS);
                goto done;
            }
            char *data = NULL;
            size_t len = 0;
            int st = hsdag_read_file(&data, &len, t, 0, &e);
            if (st < 0) {
                rc = cli_fail(cmd, st, &e);
                goto done;
            }
            st = hsdag_pipedream_read(&gs[n], data, len, t, &e);
            hsdag_free(data);
            if (st < 0) {
                rc = cli_fail(cmd, st, &e);
                goto done;
            }
            const char *base = strrchr(t, '/');
            base = base ? base + 1 : t;
            snprintf(list[n], sizeof list[n], "%s", base);
            char *dot = strrchr(list[n], '.');
            if (dot && dot != list[n]) *dot = 0;
            names[n] = list[n];
            n++;
            if ((st = hsdag_cluster_check_graph(&o->c, gs[n - 1], t, len, &e)) < 0) {
                rc = cli_fail(cmd, st, &e);
                goto done;
            }
        }
    }
    rc = hsdag_cluster_create(env, &o->c, n ? (const hsdag_graph *const *)gs : NULL, n ? names : NULL, n, &e);
    if (rc < 0) rc = cli_fail(cmd, rc, &e);
done:
    for (int i = 0; i < n; i++) hsdag_graph_free(gs[i]);
    return rc;
}

static int cl_run(cl_opts *o)
{
    const char *cmd = o->a->name;
    if (!o->a->policy) return cli_usage_error(cmd, "missing --policy");
    hsdag_cluster_policy p;
    hsdag_err e = {0};
    int rc = hsdag_cluster_policy_parse(&p, o->a->policy, &e);
    if (rc < 0) return cli_fail(cmd, rc, &e);
    hsdag_cluster *env = NULL;
    if ((rc = cl_make_env(o, &env)) != 0) return rc;
    hsdag_cluster_metrics m;
    long reps = o->a->repeat;
    double *walls = hsdag_malloc((size_t)reps * 2 * sizeof(double));
    if (!walls) {
        hsdag_cluster_free(env);
        return cli_fail(cmd, HSDAG_ENOMEM, NULL);
    }
    double *cpus = walls + reps;
    for (long r = 0; r < reps && rc == 0; r++) {
        double t0 = hsdag_now(), c0 = (double)clock() / CLOCKS_PER_SEC;
        rc = hsdag_cluster_run(env, &p, (uint64_t)o->a->seed, &m, &e);
        walls[r] = hsdag_now() - t0;
        cpus[r] = (double)clock() / CLOCKS_PER_SEC - c0;
    }
    qsort(walls, (size_t)reps, sizeof(double), hsdag_cmp_double);
    qsort(cpus, (size_t)reps, sizeof(double), hsdag_cmp_double);
    double wall = walls[reps / 2], cpu = cpus[reps / 2];
    hsdag_free(walls);
    hsdag_cluster_free(env);
    if (rc < 0) return cli_fail(cmd, rc, &e);
    hsdag_buf b = {0};
    char pn[300];
    if (o->a->json) {
        hsdag_cluster_episode_write_json(&b, &o->c, hsdag_cluster_policy_name(&p, pn, sizeof pn),
                                         (uint64_t)o->a->seed, &m, wall, cpu, (int32_t)reps);
    } else {
        hsdag_buf_printf(&b, "policy %s, beta %c, seed %llu, %s\n",
                         hsdag_cluster_policy_name(&p, pn, sizeof pn), o->c.beta,
                         (unsigned long long)o->a->seed,
                         o->c.time_unit_fix ? "--time-unit-fix (communication in ms)" : "reference units");
        hsdag_buf_printf(&b, "  jobs_arrived     %lld  (at t = 0, %g, ..., %g)\n", (long long)m.jobs_arrived,
                         o->c.interarrival, (double)(m.jobs_arrived - 1) * o->c.interarrival);
        hsdag_buf_printf(&b, "  jobs_decided     %lld%s\n", (long long)m.jobs_decided,
                         m.jobs_decided < m.jobs_arrived
                             ? "  (the arrival at the horizon is counted but gets no decision)"
                             : "");
        hsdag_buf_printf(
            &b,
            "  jobs_blocked     %lld  (blocked_action0 %lld: action 0 or invalid; blocked_placement "
            "%lld: no block; blocked_jct %lld: JCT > beta JCT_seq; blocked_horizon %lld: running "
            "at the horizon)\n",
            (long long)m.jobs_blocked, (long long)m.blocked_action0, (long long)m.blocked_placement,
            (long long)m.blocked_jct, (long long)m.blocked_horizon);
        hsdag_buf_printf(
            &b,
            "  refusals         refused_no_worker %lld, refused_no_fit %lld (workers free, no degree "
            "both placeable and on time), refused_by_choice %lld\n",
            (long long)m.refused_no_worker, (long long)m.refused_no_fit, (long long)m.refused_by_choice);
        hsdag_buf_printf(&b, "  decisions        ");
        const char *sep = "";
        for (int a = 0; a < HSDAG_CLUSTER_N_ACTIONS; a++)
            if (m.decisions_per_degree[a]) {
                hsdag_buf_printf(&b, "%sdegree %d: %lld", sep, a, (long long)m.decisions_per_degree[a]);
                sep = ", ";
            }
        hsdag_buf_printf(&b, "  (per action taken; 0 = refuse)\n");
        hsdag_buf_printf(&b, "  jobs_completed   %lld\n", (long long)m.jobs_completed);
        hsdag_buf_printf(&b, "  blocking_rate    %.4f  (jobs_blocked / jobs_arrived; lower is better)\n",
                         m.blocking_rate);
        hsdag_buf_printf(&b, "  acceptance_rate  %.4f  (jobs_completed / jobs_arrived)\n", m.acceptance_rate);
        hsdag_buf_printf(&b,
                         "  throughput       %.4g  (B per time unit: mean demand total throughput; higher is "
                         "better)\n",
                         m.throughput);
        hsdag_buf_printf(&b, "  mean_jct         %.2f  (time units, over completed jobs)\n", m.mean_jct);
        hsdag_buf_printf(&b, "  mean_speedup     %.3f  (JCT_seq / JCT, over completed jobs)\n",
                         m.mean_speedup);
        hsdag_buf_printf(&b, "  utilisation      %.4f  (mean fraction of workers mounted)\n", m.utilisation);
        hsdag_buf_printf(&b,
                         "  return           %.0f  (+1 per job accepted at its decision, -1 per refused)\n",
                         m.return_);
        hsdag_buf_printf(&b, "  wall_s           %.5f  (one episode, median of %ld; cpu_s %.5f)\n", wall,
                         reps, cpu);
    }
    rc = cli_write_out(cmd, "-", &b);
    hsdag_buf_free(&b);
    return rc;
}

static int cl_compare(cl_opts *o)
{
    const cli_args *a = o->a;
    const char *cmd = a->name;
    const char *betas = a->betas;
    int nb = (int)strlen(betas), np = o->n_policies, ns = o->n_seeds;
    hsdag_cluster_policy pol[CL_MAX_POLICIES];
    const char *pnames[CL_MAX_POLICIES];
    hsdag_err e = {0};
    for (int i = 0; i < np; i++) {
        int rc = hsdag_cluster_policy_parse(&pol[i], o->policies[i], &e);
        if (rc < 0) return cli_fail(cmd, rc, &e);
        pnames[i] = o->policies[i];
    }
    size_t cells = (size_t)np * nb * ns;
    double *br = hsdag_calloc(cells, sizeof(double)), *tp = hsdag_calloc(cells, sizeof(double));
    double *wall = hsdag_calloc(cells, sizeof(double));
    hsdag_buf b = {0}, md = {0};
    int rc = 0;
    if (!br || !tp || !wall) {
        rc = cli_fail(cmd, HSDAG_ENOMEM, NULL);
        goto done;
    }
    cli_progress pg;
    cli_progress_start(&pg, "compare", (long)cells, a->quiet || a->json);
    long done = 0;
    for (int bi = 0; bi < nb && !rc; bi++) {
        o->c.beta = betas[bi];
        hsdag_cluster *env = NULL;
        if ((rc = cl_make_env(o, &env)) != 0) break;
        for (int pi = 0; pi < np && !rc; pi++)
            for (int si = 0; si < ns; si++) {
                hsdag_cluster_metrics m;
                double t0 = hsdag_now();
                int st = hsdag_cluster_run(env, &pol[pi], o->seeds[si], &m, &e);
                if (st < 0) {
                    rc = cli_fail(cmd, st, &e);
                    break;
                }
                size_t k = ((size_t)pi * nb + bi) * ns + si;
                wall[k] = hsdag_now() - t0;
                br[k] = m.blocking_rate;
                tp[k] = m.throughput;
                cli_progress_update(&pg, ++done, o->policies[pi]);
            }
        hsdag_cluster_free(env);
    }
    cli_progress_end(&pg);
    if (rc) goto done;
    double *sorted = hsdag_malloc(cells * sizeof *sorted);
    if (!sorted) {
        rc = cli_fail(cmd, HSDAG_ENOMEM, NULL);
        goto done;
    }
    memcpy(sorted, wall, cells * sizeof *sorted);
    qsort(sorted, cells, sizeof(double), hsdag_cmp_double);
    hsdag_cluster_comparison cmp = {.policies = pnames,
                                    .n_policies = np,
                                    .betas = betas,
                                    .seeds = o->seeds,
                                    .n_seeds = ns,
                                    .blocking = br,
                                    .throughput = tp,
                                    .median_wall_s = sorted[cells / 2]};
    hsdag_free(sorted);
    hsdag_cluster_compare_write_markdown(&md, &o->c, &cmp);
    if (a->json)
        hsdag_cluster_compare_write_json(&b, &o->c, &cmp);
    else
        hsdag_buf_append(&b, md.data ? md.data : "", md.len);
    rc = cli_write_out(cmd, "-", &b);
    if (rc == 0 && a->markdown) rc = cli_write_out(cmd, a->markdown, &md);
done:
    hsdag_buf_free(&md);
    hsdag_buf_free(&b);
    hsdag_free(br);
    hsdag_free(tp);
    hsdag_free(wall);
    return rc;
}

static int cl_info(cl_opts *o)
{
    const char *cmd = o->a->name;
    hsdag_cluster *env = NULL;
    int rc = cl_make_env(o, &env);
    if (rc) return rc;
    hsdag_buf b = {0};
    if (o->a->json)
        hsdag_cluster_models_write_json(&b, env);
    else
        for (int32_t i = 0; i < hsdag_cluster_n_models(env); i++) {
            const hsdag_cluster_model *m = hsdag_cluster_model_get(env, i);
            hsdag_buf_printf(
                &b, "%s: %d ops, %d deps, JCT_seq %.2f, op memory %.4g B, dep size %.4g B, depth %d\n",
                m->name, m->job->n_nodes, m->job->n_edges, m->jct_seq, m->total_op_mem, m->total_dep_size,
                m->max_depth);
            for (int a = 1; a <= HSDAG_CLUSTER_MAX_DEGREE; a++)
                if (isfinite(m->jct[a]))
                    hsdag_buf_printf(&b,
                                     "  degree %2d: JCT %.2f (JCT_seq/a %.2f), %d servers, %d fwd ops split, "
                                     "%d ops, %d deps\n",
                                     a, m->jct[a], m->jct_seq / a, m->n_servers_empty[a], m->n_split_ops[a],
                                     m->n_part_ops[a], m->n_part_deps[a]);
        }
    hsdag_cluster_free(env);
    rc = cli_write_out(cmd, "-", &b);
    hsdag_buf_free(&b);
    return rc;
}

/* the subcommands (from the option table), then what the metrics mean */
static void cl_usage(FILE *f)
{
    cli_group_usage(f, "cluster");
    fprintf(
        f, "\nMetrics (the same names in the text, the tables and --json):\n"
           "  blocking_rate      jobs_blocked / jobs_arrived; lower is better (the paper's headline metric)\n"
           "  acceptance_rate    jobs_completed / jobs_arrived\n"
           "  throughput         mean demand total throughput in B per time unit: op memory + dependency "
           "bytes of\n"
           "                     the accepted jobs, spread over their JCT, per time unit of the horizon\n"
           "  mean_jct, mean_speedup (JCT_seq / JCT), utilisation (mean fraction of workers mounted), "
           "return\n"
           "                     (+1 per job accepted at its decision, -1 per refused one)\n");
}

int cmd_cluster(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        cl_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_BADINPUT : CLI_OK;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "train")) return cmd_cluster_train(argc - 1, argv + 1);
    cli_cmd id = !strcmp(sub, "run")       ? CMD_CLUSTER_RUN
                 : !strcmp(sub, "compare") ? CMD_CLUSTER_COMPARE
                 : !strcmp(sub, "info")    ? CMD_CLUSTER_INFO
                                           : CMD_COUNT_;
    if (id == CMD_COUNT_)
        return cli_usage_error("cluster", "unknown subcommand '%s' (run, compare, info, train)", sub);
    cli_args a;
    cli_args_init(&a, id);
    int rc = cli_parse(&a, argc - 1, argv + 1);
    if (rc != CLI_CONTINUE) return rc;
    cl_opts o;
    memset(&o, 0, sizeof o);
    if ((rc = cl_setup(&a, &o)) != 0) return rc;
    if (id == CMD_CLUSTER_RUN) return cl_run(&o);
    if (id == CMD_CLUSTER_COMPARE) return cl_compare(&o);
    return cl_info(&o);
}
