/* cmd_cluster.c - 'hsdag cluster run|compare|info': PAC-ML episodes on the RAMP cluster simulator.
 * Not here: the simulator (src/cluster/) or any learning ('learned[:DIR]' is a hook: exit 2 until it exists).
 * Entry points: cmd_cluster. */
#include "cli.h"
#include "hsdag/cluster.h"
#include "hsdag/io.h"
#include "hsdag/pacml.h"

#include <getopt.h>
#include <math.h>
#include <string.h>
#include <time.h>

#define CL_MAX_GRAPHS 64
#define CL_MAX_SEEDS 64
#define CL_MAX_POLICIES 16

static const char *cl_help[] = {
    "usage: hsdag cluster run     --policy P [--beta A|B|C|D] [--seed S] [--json] [--repeat N] [options]\n"
    "       hsdag cluster compare [--seeds 0,1,2] [--policies P,P,...] [--betas ABCD] [--out FILE] [--json]\n"
    "                             [options]\n"
    "       hsdag cluster info    [--json] [options]\n"
    "       hsdag cluster train   ... (trains a learned policy: hsdag cluster train --help)\n"
    "\n"
    "PAC-ML (Parsonson et al. 2023): jobs (DNN training graphs) arrive at a RAMP optical cluster every\n"
    "--interarrival time units; a policy picks each job's maximum partition degree (0 = do not place,\n"
    "1..16); the job is split, placed first-fit, and its lookahead JCT (one simulated step x 50) must be\n"
    "<= beta x JCT_seq or it is blocked. Jobs still running at the horizon are blocked too. Arrivals are at\n"
    "t = 0, T, ..., horizon: 1001 by default; the one at t = horizon is counted in jobs_arrived but gets no\n"
    "decision, so 1000 jobs are decided. See docs/pacml.md.\n"
    "\n"
    "Metrics (the same names in the text, the tables and --json):\n"
    "  blocking_rate      jobs_blocked / jobs_arrived; lower is better (the paper's headline metric)\n"
    "  acceptance_rate    jobs_completed / jobs_arrived\n"
    "  throughput         mean demand total throughput in B per time unit: op memory + dependency bytes of\n"
    "                     the accepted jobs, spread over their JCT, per time unit of the horizon\n"
    "  mean_jct, mean_speedup (JCT_seq / JCT), utilisation (mean fraction of workers mounted), return\n"
    "                     (+1 per job accepted at its decision, -1 per refused one)\n"
    "\n",
    "run: one episode\n"
    "  --policy P         para-max      the largest valid degree (the paper's Para_max)\n"
    "                     para-min      the paper's Para_min (ddls AcceptableJCT; also 'acceptable-jct'):\n"
    "                                   the smallest valid degree >= ceil(JCT_seq / (beta JCT_seq)),\n"
    "                                   ignoring communication\n"
    "                     random        uniform over the valid non-zero degrees (the paper's Random)\n"
    "                     fixed:K       always K (0 if not valid)\n"
    "                     sequential    always 1 (ddls NoParallelism)\n"
    "                     para-min-jct  the smallest valid degree whose cached lookahead JCT meets the "
    "deadline\n"
    "                     lookahead[:H:F] our heuristic (docs/pacml.md)\n"
    "                     learned[:DIR] a learned policy (PPO or DQN): DIR/policy.bin from 'hsdag cluster\n"
    "                                   train', a policy file, a directory of beta_X[_tuf].bin files, or\n"
    "                                   (no DIR) the shipped one for the run's beta (policies/pacml/); a\n"
    "                                   policy trained for another beta or time-unit setting is refused\n"
    "  --beta X           JCT requirement distribution A (uniform), B (tight), C (medium), D (loose);\n"
    "                     default A\n"
    "  --seed S           episode seed (beta samples, job order, random policy); default 0\n"
    "  --json             one JSON object with the metrics above, jobs_arrived, jobs_decided, jobs_blocked\n"
    "                     and its causes, wall_s and cpu_s\n"
    "  --repeat N         run the episode N times (identical results) and report the median wall and CPU\n"
    "                     time of one episode (wall_s, cpu_s); the env set-up is not included\n"
    "compare: every policy x beta over the seeds; mean +- std over seeds\n"
    "  --seeds LIST       comma-separated seeds; default 0,1,2\n"
    "  --policies LIST    default para-max,para-min,random,para-min-jct,sequential,fixed:4,lookahead\n"
    "  --betas LETTERS    default ABCD\n"
    "  --out FILE         also write the table as markdown to FILE (atomic)\n"
    "  --json             print the results as JSON (per policy and beta: mean, std and per-seed values)\n"
    "info: the job models: ops, deps, JCT_seq, and lookahead JCT / servers per degree\n"
    "  --json             as JSON\n"
    "\n",
    "options (run, compare, info; an option of another subcommand is refused):\n"
    "  --graphs F,F,...   PipeDream graph.txt files for the job pool (default: the five built-in PAC-ML\n"
    "                     graphs)\n"
    "  --time-unit-fix    the reference uses profile ms as its time unit but computes communication in\n"
    "                     seconds, so communication weighs ~1000x too little; this converts communication\n"
    "                     to ms as well (then interarrival and horizon are in ms)\n"
    "  --shape C,R,S      communication groups, racks per group, servers per rack; default 4,4,2\n"
    "  --bandwidth B      total node bandwidth in B/s (a channel gets B / C); default 1.6e12\n"
    "  --interarrival T   time between arrivals; default 1000\n"
    "  --horizon T        simulated time; default 1e6 (1001 arrivals)\n"
    "  --replication R    copies of each graph in the job pool; default 1000\n"
    "  --quiet            no progress bar (compare shows one on a terminal)\n"
    "  --help             this text\n",
    NULL};

static void cl_print_help(void)
{
    for (int i = 0; cl_help[i]; i++) fputs(cl_help[i], stdout);
}

/* Which subcommands take an option (bit per subcommand). */
enum { CL_RUN = 1, CL_COMPARE = 2, CL_INFO = 4, CL_ALL = 7 };

typedef struct cl_opts {
    hsdag_cluster_config c;
    const char *policy, *out, *betas;
    char graphs_arg[4096];
    uint64_t seed;
    uint64_t seeds[CL_MAX_SEEDS];
    int n_seeds;
    char policies[CL_MAX_POLICIES][64];
    int n_policies;
    int json, quiet, help;
    long repeat;
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

static int cl_parse(int argc, char **argv, cl_opts *o, const char *sub, int bit)
{
    static const struct option lo[] = {{"policy", 1, 0, 'p'},
                                       {"beta", 1, 0, 'b'},
                                       {"seed", 1, 0, 's'},
                                       {"json", 0, 0, 'j'},
                                       {"seeds", 1, 0, 'S'},
                                       {"policies", 1, 0, 'P'},
                                       {"betas", 1, 0, 'B'},
                                       {"out", 1, 0, 'o'},
                                       {"graphs", 1, 0, 'g'},
                                       {"time-unit-fix", 0, 0, 'f'},
                                       {"shape", 1, 0, 'x'},
                                       {"bandwidth", 1, 0, 'w'},
                                       {"interarrival", 1, 0, 'i'},
                                       {"horizon", 1, 0, 'H'},
                                       {"replication", 1, 0, 'r'},
                                       {"quiet", 0, 0, 'q'},
                                       {"repeat", 1, 0, 'R'},
                                       {"help", 0, 0, 'h'},
                                       {0, 0, 0, 0}};
    /* the subcommands that take each option of lo[] (same order) */
    static const int takes[] = {CL_RUN,     CL_RUN,     CL_RUN, CL_ALL, CL_COMPARE, CL_COMPARE,
                                CL_COMPARE, CL_COMPARE, CL_ALL, CL_ALL, CL_ALL,     CL_ALL,
                                CL_ALL,     CL_ALL,     CL_ALL, CL_ALL, CL_RUN,     CL_ALL};
    static const char *hint[] = {"compare takes --policies LIST",
                                 "compare takes --betas LETTERS",
                                 "compare takes --seeds LIST",
                                 "",
                                 "run takes one --seed S",
                                 "run takes one --policy P",
                                 "run takes one --beta X",
                                 "",
                                 "",
                                 "",
                                 "",
                                 "",
                                 "",
                                 "",
                                 "",
                                 "",
                                 "",
                                 ""};
    optind = 0;
    opterr = 0;
    int ch, li;
    long v;
    double d;
    while ((li = -1, ch = getopt_long(argc, argv, "h", lo, &li)) != -1) {
        if (ch == 'h') li = 17;
        if (ch != '?' && ch != ':' && li >= 0 && !(takes[li] & bit)) {
            const char *who = takes[li] == CL_RUN ? "run" : takes[li] == CL_COMPARE ? "compare" : "info";
            return cli_usage_error("cluster", "%s: --%s is an option of '%s', not of '%s'%s%s", sub,
                                   lo[li].name, who, sub, hint[li][0] && bit != CL_INFO ? "; " : "",
                                   bit != CL_INFO ? hint[li] : "");
        }
        switch (ch) {
        case 'p':
            o->policy = optarg;
            break;
        case 'b':
            if (strlen(optarg) != 1 || optarg[0] < 'A' || optarg[0] > 'D')
                return cli_usage_error("cluster", "--beta '%s': must be A, B, C or D", optarg);
            o->c.beta = optarg[0];
            break;
        case 's':
            if (cli_parse_int(optarg, 0, 2147483647L, &v) < 0)
                return cli_usage_error("cluster", "--seed '%s': not a seed (0..2^31-1)", optarg);
            o->seed = (uint64_t)v;
            break;
        case 'j':
            o->json = 1;
            break;
        case 'S': {
            char tmp[CL_MAX_SEEDS][64];
            int n;
            if (cl_split_list(optarg, tmp, CL_MAX_SEEDS, &n) < 0)
                return cli_usage_error("cluster",
                                       "--seeds '%s': expected a comma-separated list (at most %d)", optarg,
                                       CL_MAX_SEEDS);
            for (int i = 0; i < n; i++) {
                if (cli_parse_int(tmp[i], 0, 2147483647L, &v) < 0)
                    return cli_usage_error("cluster", "--seeds: '%s' is not a seed", tmp[i]);
                o->seeds[i] = (uint64_t)v;
            }
            o->n_seeds = n;
            break;
        }
        case 'P':
            if (cl_split_list(optarg, o->policies, CL_MAX_POLICIES, &o->n_policies) < 0)
                return cli_usage_error("cluster", "--policies '%s': expected a comma-separated list", optarg);
            break;
        case 'B':
            for (const char *q = optarg; *q; q++)
                if (*q < 'A' || *q > 'D')
                    return cli_usage_error("cluster", "--betas '%s': letters A-D only", optarg);
            if (!*optarg) return cli_usage_error("cluster", "--betas: empty");
            o->betas = optarg;
            break;
        case 'o':
            o->out = optarg;
            break;
        case 'g':
            if (strlen(optarg) >= sizeof o->graphs_arg)
                return cli_usage_error("cluster", "--graphs: list too long");
            strcpy(o->graphs_arg, optarg);
            break;
        case 'f':
            o->c.time_unit_fix = 1;
            break;
        case 'x': {
            long a, b, c;
            char extra;
            if (sscanf(optarg, "%ld,%ld,%ld%c", &a, &b, &c, &extra) != 3 || a < 1 || b < 1 || c < 1 ||
                a * b * c > 512)
                return cli_usage_error("cluster", "--shape '%s': expected C,R,S with 1..512 servers in all",
                                       optarg);
            o->c.n_cgs = (int32_t)a;
            o->c.n_racks = (int32_t)b;
            o->c.n_servers = (int32_t)c;
            break;
        }
        case 'w':
            if (cli_parse_double(optarg, 1e3, 1e18, &d) < 0)
                return cli_usage_error("cluster", "--bandwidth '%s': not in 1e3..1e18 B/s", optarg);
            o->c.node_bw = d;
            break;
        case 'i':
            if (cli_parse_double(optarg, 1e-6, 1e12, &d) < 0)
                return cli_usage_error("cluster", "--interarrival '%s': not a positive time", optarg);
            o->c.interarrival = d;
            break;
        case 'H':
            if (cli_parse_double(optarg, 0, 1e15, &d) < 0)
                return cli_usage_error("cluster", "--horizon '%s': not a time >= 0", optarg);
            o->c.horizon = d;
            break;
        case 'r':
            if (cli_parse_int(optarg, 1, 100000, &v) < 0)
                return cli_usage_error("cluster", "--replication '%s': not in 1..100000", optarg);
            o->c.replication = (int32_t)v;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'R':
            if (cli_parse_int(optarg, 1, 100000, &v) < 0)
                return cli_usage_error("cluster", "--repeat '%s': not in 1..100000", optarg);
            o->repeat = v;
            break;
        case 'h':
            o->help = 1;
            break;
        default:
            return cli_usage_error("cluster", "%s: unknown or incomplete option '%s'", sub, argv[optind - 1]);
        }
    }
    if (optind < argc) return cli_usage_error("cluster", "%s: unexpected argument '%s'", sub, argv[optind]);
    if (o->c.horizon / o->c.interarrival > 1e8)
        return cli_usage_error("cluster", "horizon / interarrival above 1e8 arrivals");
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
    if (o->graphs_arg[0]) {
        /* split by comma into paths */
        char buf[4096];
        strcpy(buf, o->graphs_arg);
        char *save = NULL;
        for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            if (n >= CL_MAX_GRAPHS) {
                rc = cli_usage_error("cluster", "--graphs: at most %d files", CL_MAX_GRAPHS);
                goto done;
            }
            char *data = NULL;
            size_t len = 0;
            int st = hsdag_read_file(&data, &len, t, 0, &e);
            if (st < 0) {
                rc = cli_fail("cluster", st, &e);
                goto done;
            }
            st = hsdag_pipedream_read(&gs[n], data, len, t, &e);
            hsdag_free(data);
            if (st < 0) {
                rc = cli_fail("cluster", st, &e);
                goto done;
            }
            const char *base = strrchr(t, '/');
            base = base ? base + 1 : t;
            snprintf(list[n], sizeof list[n], "%s", base);
            char *dot = strrchr(list[n], '.');
            if (dot && dot != list[n]) *dot = 0;
            names[n] = list[n];
            n++;
        }
    }
    rc = hsdag_cluster_create(env, &o->c, n ? (const hsdag_graph *const *)gs : NULL, n ? names : NULL, n, &e);
    if (rc < 0) rc = cli_fail("cluster", rc, &e);
done:
    for (int i = 0; i < n; i++) hsdag_graph_free(gs[i]);
    return rc;
}

static void cl_json_metrics(hsdag_buf *b, const hsdag_cluster_metrics *m, double wall)
{
    hsdag_buf_printf(b, "\"blocking_rate\": ");
    hsdag_buf_double(b, m->blocking_rate);
    hsdag_buf_printf(b, ", \"acceptance_rate\": ");
    hsdag_buf_double(b, m->acceptance_rate);
    hsdag_buf_printf(b, ", \"throughput\": ");
    hsdag_buf_double(b, m->throughput);
    hsdag_buf_printf(b, ", \"mean_jct\": ");
    if (isfinite(m->mean_jct))
        hsdag_buf_double(b, m->mean_jct);
    else
        hsdag_buf_printf(b, "null");
    hsdag_buf_printf(b, ", \"mean_speedup\": ");
    if (isfinite(m->mean_speedup))
        hsdag_buf_double(b, m->mean_speedup);
    else
        hsdag_buf_printf(b, "null");
    hsdag_buf_printf(b, ", \"utilisation\": ");
    hsdag_buf_double(b, m->utilisation);
    hsdag_buf_printf(b,
                     ", \"jobs_arrived\": %lld, \"jobs_decided\": %lld, \"jobs_blocked\": %lld, "
                     "\"jobs_completed\": %lld, "
                     "\"blocked_action0\": %lld, \"blocked_placement\": %lld, \"blocked_jct\": %lld, "
                     "\"blocked_horizon\": %lld, \"return\": ",
                     (long long)m->jobs_arrived, (long long)m->jobs_decided, (long long)m->jobs_blocked,
                     (long long)m->jobs_completed, (long long)m->blocked_action0,
                     (long long)m->blocked_placement, (long long)m->blocked_jct,
                     (long long)m->blocked_horizon);
    hsdag_buf_double(b, m->return_);
    hsdag_buf_printf(b, ", \"wall_s\": ");
    hsdag_buf_double(b, wall);
}

static int cl_cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cl_run(cl_opts *o)
{
    if (!o->policy) return cli_usage_error("cluster", "run: --policy is required");
    hsdag_cluster_policy p;
    hsdag_err e = {0};
    int rc = hsdag_cluster_policy_parse(&p, o->policy, &e);
    if (rc < 0) return cli_fail("cluster", rc, &e);
    hsdag_cluster *env = NULL;
    if ((rc = cl_make_env(o, &env)) != 0) return rc;
    hsdag_cluster_metrics m;
    long reps = o->repeat > 0 ? o->repeat : 1;
    double *walls = hsdag_malloc((size_t)reps * 2 * sizeof(double));
    if (!walls) {
        hsdag_cluster_free(env);
        return cli_fail("cluster", HSDAG_ENOMEM, NULL);
    }
    double *cpus = walls + reps;
    for (long r = 0; r < reps && rc == 0; r++) {
        double t0 = hsdag_now(), c0 = (double)clock() / CLOCKS_PER_SEC;
        rc = hsdag_cluster_run(env, &p, o->seed, &m, &e);
        walls[r] = hsdag_now() - t0;
        cpus[r] = (double)clock() / CLOCKS_PER_SEC - c0;
    }
    qsort(walls, (size_t)reps, sizeof(double), cl_cmp_d);
    qsort(cpus, (size_t)reps, sizeof(double), cl_cmp_d);
    double wall = walls[reps / 2], cpu = cpus[reps / 2];
    hsdag_free(walls);
    hsdag_cluster_free(env);
    if (rc < 0) return cli_fail("cluster", rc, &e);
    hsdag_buf b = {0};
    char pn[300];
    if (o->json) {
        hsdag_buf_printf(&b, "{\"policy\": ");
        hsdag_buf_json_str(&b, hsdag_cluster_policy_name(&p, pn, sizeof pn));
        hsdag_buf_printf(&b, ", \"beta\": \"%c\", \"seed\": %llu, \"time_unit_fix\": %s, ", o->c.beta,
                         (unsigned long long)o->seed, o->c.time_unit_fix ? "true" : "false");
        cl_json_metrics(&b, &m, wall);
        hsdag_buf_printf(&b, ", \"cpu_s\": ");
        hsdag_buf_double(&b, cpu);
        hsdag_buf_printf(&b, ", \"repeat\": %ld}\n", reps);
    } else {
        hsdag_buf_printf(&b, "policy %s, beta %c, seed %llu, %s\n",
                         hsdag_cluster_policy_name(&p, pn, sizeof pn), o->c.beta, (unsigned long long)o->seed,
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
    rc = cli_write_out("cluster", "-", &b);
    hsdag_buf_free(&b);
    return rc;
}

static void cl_mean_std(const double *x, int n, double *mean, double *sd)
{
    double s = 0, q = 0;
    for (int i = 0; i < n; i++) s += x[i];
    *mean = s / n;
    for (int i = 0; i < n; i++) q += (x[i] - *mean) * (x[i] - *mean);
    *sd = n > 1 ? sqrt(q / (n - 1)) : 0.0;
}

static int cl_compare(cl_opts *o)
{
    static const char *defpol[] = {"para-max",   "para-min", "random",   "para-min-jct",
                                   "sequential", "fixed:4",  "lookahead"};
    if (!o->n_policies) {
        for (int i = 0; i < 7; i++) strcpy(o->policies[i], defpol[i]);
        o->n_policies = 7;
    }
    if (!o->n_seeds) {
        for (int i = 0; i < 3; i++) o->seeds[i] = (uint64_t)i;
        o->n_seeds = 3;
    }
    const char *betas = o->betas ? o->betas : "ABCD";
    int nb = (int)strlen(betas), np = o->n_policies, ns = o->n_seeds;
    hsdag_cluster_policy pol[CL_MAX_POLICIES];
    hsdag_err e = {0};
    for (int i = 0; i < np; i++) {
        int rc = hsdag_cluster_policy_parse(&pol[i], o->policies[i], &e);
        if (rc < 0) return cli_fail("cluster", rc, &e);
    }
    size_t cells = (size_t)np * nb * ns;
    double *br = hsdag_calloc(cells, sizeof(double)), *tp = hsdag_calloc(cells, sizeof(double));
    double *wall = hsdag_calloc(cells, sizeof(double));
    if (!br || !tp || !wall) {
        hsdag_free(br);
        hsdag_free(tp);
        hsdag_free(wall);
        return cli_fail("cluster", HSDAG_ENOMEM, NULL);
    }
    cli_progress pg;
    cli_progress_start(&pg, "compare", (long)cells, o->quiet);
    long done = 0;
    int rc = 0;
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
                    rc = cli_fail("cluster", st, &e);
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
    if (rc) {
        hsdag_free(br);
        hsdag_free(tp);
        hsdag_free(wall);
        return rc;
    }
    hsdag_buf b = {0};
    long long arr = (long long)(floor(o->c.horizon / o->c.interarrival * (1 + 1e-12)) + 1);
    qsort(wall, cells, sizeof(double), cl_cmp_d);
    hsdag_buf md = {0}; /* the markdown table (text output and --out) */
    hsdag_buf_printf(
        &md,
        "PAC-ML cluster, %s: blocking_rate (jobs_blocked / jobs_arrived; lower is better) and "
        "throughput (mean demand total throughput, B per time unit; higher is better), mean ± std "
        "over seeds",
        o->c.time_unit_fix ? "--time-unit-fix (communication in ms)" : "reference units");
    for (int si = 0; si < ns; si++)
        hsdag_buf_printf(&md, "%s%llu", si ? "," : " ", (unsigned long long)o->seeds[si]);
    long long dec = (double)(arr - 1) * o->c.interarrival >= o->c.horizon ? arr - 1 : arr;
    hsdag_buf_printf(&md, ". Each episode has %lld arrivals (t = 0, %g, ..., %g)", arr, o->c.interarrival,
                     (double)(arr - 1) * o->c.interarrival);
    if (dec < arr)
        hsdag_buf_printf(&md,
                         "; the one at t = horizon is counted in jobs_arrived but gets no decision, so %lld "
                         "jobs are decided",
                         dec);
    hsdag_buf_printf(&md, ".\n\n| policy |");
    for (int bi = 0; bi < nb; bi++)
        hsdag_buf_printf(&md, " blocking_rate %c | throughput %c |", betas[bi], betas[bi]);
    hsdag_buf_printf(&md, "\n|---|");
    for (int bi = 0; bi < nb; bi++) hsdag_buf_printf(&md, "---|---|");
    hsdag_buf_printf(&md, "\n");
    for (int pi = 0; pi < np; pi++) {
        hsdag_buf_printf(&md, "| %s |", o->policies[pi]);
        for (int bi = 0; bi < nb; bi++) {
            double mb, sb, mt, st;
            size_t k = ((size_t)pi * nb + bi) * ns;
            cl_mean_std(br + k, ns, &mb, &sb);
            cl_mean_std(tp + k, ns, &mt, &st);
            hsdag_buf_printf(&md, " %.3f ± %.3f | %.3g ± %.2g |", mb, sb, mt, st);
        }
        hsdag_buf_printf(&md, "\n");
    }
    hsdag_buf_printf(&md, "\n%zu episodes; median wall time per episode %.2f ms\n", cells,
                     wall[cells / 2] * 1e3);
    if (o->json) {
        hsdag_buf_printf(&b, "{\"time_unit_fix\": %s, \"jobs_arrived\": %lld, \"seeds\": [",
                         o->c.time_unit_fix ? "true" : "false", arr);
        for (int si = 0; si < ns; si++)
            hsdag_buf_printf(&b, "%s%llu", si ? ", " : "", (unsigned long long)o->seeds[si]);
        hsdag_buf_printf(&b, "], \"results\": [");
        for (int pi = 0; pi < np; pi++)
            for (int bi = 0; bi < nb; bi++) {
                size_t k = ((size_t)pi * nb + bi) * ns;
                hsdag_buf_printf(&b, "%s{\"policy\": ", pi || bi ? ", " : "");
                hsdag_buf_json_str(&b, o->policies[pi]);
                hsdag_buf_printf(&b, ", \"beta\": \"%c\"", betas[bi]);
                const double *vals[2] = {br + k, tp + k};
                const char *key[2] = {"blocking_rate", "throughput"};
                for (int q = 0; q < 2; q++) {
                    double mu, sd;
                    cl_mean_std(vals[q], ns, &mu, &sd);
                    hsdag_buf_printf(&b, ", \"%s\": {\"mean\": ", key[q]);
                    hsdag_buf_double(&b, mu);
                    hsdag_buf_printf(&b, ", \"std\": ");
                    hsdag_buf_double(&b, sd);
                    hsdag_buf_printf(&b, ", \"per_seed\": [");
                    for (int si = 0; si < ns; si++) {
                        if (si) hsdag_buf_printf(&b, ", ");
                        hsdag_buf_double(&b, vals[q][si]);
                    }
                    hsdag_buf_printf(&b, "]}");
                }
                hsdag_buf_printf(&b, "}");
            }
        hsdag_buf_printf(&b, "], \"wall_s\": ");
        hsdag_buf_double(&b, wall[cells / 2]);
        hsdag_buf_printf(&b, "}\n");
    } else {
        hsdag_buf_append(&b, md.data, md.len);
    }
    rc = cli_write_out("cluster", "-", &b);
    if (rc == 0 && o->out) rc = cli_write_out("cluster", o->out, &md);
    hsdag_buf_free(&md);
    hsdag_buf_free(&b);
    hsdag_free(br);
    hsdag_free(tp);
    hsdag_free(wall);
    return rc;
}

static int cl_info(cl_opts *o)
{
    hsdag_cluster *env = NULL;
    int rc = cl_make_env(o, &env);
    if (rc) return rc;
    hsdag_buf b = {0};
    if (o->json) hsdag_buf_printf(&b, "{\"models\": [");
    for (int32_t i = 0; i < hsdag_cluster_n_models(env); i++) {
        const hsdag_cluster_model *m = hsdag_cluster_model_get(env, i);
        if (o->json) {
            hsdag_buf_printf(&b, "%s{\"name\": ", i ? ", " : "");
            hsdag_buf_json_str(&b, m->name);
            hsdag_buf_printf(&b, ", \"fwd_nodes\": %d, \"ops\": %d, \"deps\": %d, \"jct_seq\": ", m->n_fwd,
                             m->job->n_nodes, m->job->n_edges);
            hsdag_buf_double(&b, m->jct_seq);
            hsdag_buf_printf(&b, ", \"total_op_mem\": ");
            hsdag_buf_double(&b, m->total_op_mem);
            hsdag_buf_printf(&b, ", \"total_dep_size\": ");
            hsdag_buf_double(&b, m->total_dep_size);
            hsdag_buf_printf(&b, ", \"depth\": %d, \"jct\": {", m->max_depth);
            int first = 1;
            for (int a = 1; a <= HSDAG_CLUSTER_MAX_DEGREE; a++) {
                if (!isfinite(m->jct[a])) continue;
                hsdag_buf_printf(&b, "%s\"%d\": ", first ? "" : ", ", a);
                hsdag_buf_double(&b, m->jct[a]);
                first = 0;
            }
            hsdag_buf_printf(&b, "}}");
        } else {
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
    }
    if (o->json) hsdag_buf_printf(&b, "]}\n");
    hsdag_cluster_free(env);
    rc = cli_write_out("cluster", "-", &b);
    hsdag_buf_free(&b);
    return rc;
}

int cmd_cluster_train(int argc, char **argv); /* tools/cmd_cluster_train.c */

int cmd_cluster(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        cl_print_help();
        return argc < 2 ? CLI_BADINPUT : CLI_OK;
    }
    const char *sub = argv[1];
    if (!strcmp(sub, "train")) return cmd_cluster_train(argc - 1, argv + 1);
    if (strcmp(sub, "run") && strcmp(sub, "compare") && strcmp(sub, "info"))
        return cli_usage_error("cluster", "unknown subcommand '%s' (run, compare, info)", sub);
    cl_opts o;
    memset(&o, 0, sizeof o);
    o.c = hsdag_cluster_config_default();
    int bit = !strcmp(sub, "run") ? CL_RUN : !strcmp(sub, "compare") ? CL_COMPARE : CL_INFO;
    int rc = cl_parse(argc - 1, argv + 1, &o, sub, bit);
    if (rc) return rc;
    if (o.help) {
        cl_print_help();
        return CLI_OK;
    }
    if (!strcmp(sub, "run")) return cl_run(&o);
    if (!strcmp(sub, "compare")) return cl_compare(&o);
    return cl_info(&o);
}
