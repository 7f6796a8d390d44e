/* cmd_train.c - the 'hsdag train' subcommand: trains the HSDAG placer on the simulator or an external
 * measurement command, with a progress bar, learning curve, best placement and resumable checkpoints.
 * Not here: the learner (src/learn), the simulator or placers. Entry points: cmd_train. */
#include "cli.h"
#include "hsdag/io.h"
#include "hsdag/learn.h"
#include "hsdag/measure.h"
#include "hsdag/placement.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

typedef struct train_args {
    const char *model, *devices, *out, *resume, *measure_cmd, *semantics, *warm;
    hsdag_learn_config cfg;
    int json, polish, episodes_set, entropy_end_set;
    int64_t budget, polish_evals;
    double measure_timeout, noise;
    long measure_retries;
    cli_mem mem;
} train_args;

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: hsdag train MODEL [options]\n\n"
        "Trains the HSDAG placer (features -> GCN -> graph-parsing pooling -> per-cluster device policy,\n"
        "policy gradient) and keeps the best placement seen. Reward: latency from the simulator, or from\n"
        "--measure-cmd. Every episode writes DIR/curve.csv and DIR/checkpoint.bin (atomically).\n"
        "The defaults are the project's learner (docs/hsdag.md: per-step leave-one-out advantages on the "
        "log\n"
        "latency, PPO-style clipped epochs, entropy schedule); --paper gives the paper's algorithm "
        "exactly.\n\n"
        "options:\n"
        "  --devices D        device preset or JSON file (default: cpu-gpu, or tarnawski for Tarnawski "
        "graphs)\n"
        "  --semantics S      sequential | concurrent | tarnawski | auto (default: the device "
        "set's)\n" CLI_MEM_HELP "  --paper            the paper's algorithm: REINFORCE on 1/latency, one "
        "Adam step per episode of 20\n"
        "                     placements, no baseline, dropout 0.2 while sampling, clusters re-parsed every "
        "step\n"
        "                     and the state update x += h_cluster (options after it still apply)\n"
        "  --budget N         placements to sample (sets --episodes to N / (steps x samples), rounded up)\n"
        "  --episodes N       episodes (default 25; with --resume: the new total)\n"
        "  --steps N          policy evaluations per episode (default 2; paper 20)\n"
        "  --samples N        placements sampled per policy evaluation (default 10; paper 1)\n"
        "  --update U         episode (paper: one Adam step per episode, weight R) | step (default)\n"
        "  --baseline B       none (paper) | moving (moving average) | loo (leave-one-out, default)\n"
        "  --reward R         inv (paper: 1 / latency ms) | log (default: -ln(latency / first latency))\n"
        "  --normalize N      divide advantages by the reward standard deviation: step (of the step) | run "
        "(a\n"
        "                     moving average over steps) | none (default run)\n"
        "  --epochs N         gradient epochs per step, PPO-clipped after the first (default 2)\n"
        "  --clip X           PPO ratio clip (default 0.2)\n"
        "  --entropy X        entropy bonus weight (default 0.01; paper 0); decays linearly to "
        "--entropy-end\n"
        "  --entropy-end X    the entropy weight at the last episode (default 0; = --entropy if only that "
        "is\n"
        "                     given)\n"
        "  --dropout X        dropout while sampling (default 0; paper 0.2)\n"
        "  --dynamic-clusters re-parse the GPN clusters at every step (paper); default: fixed from the "
        "initial\n"
        "                     network\n"
        "  --fixed-clusters   decide the clusters once from the initial network (default)\n"
        "  --no-inherit       every cluster samples its own device (paper); default: it keeps its main\n"
        "                     predecessor's device with a learned probability (contiguous blocks)\n"
        "  --no-memory-mask   offer every device to every cluster (paper); default: only devices with room "
        "for\n"
        "                     the static bytes (weights) of what is already there\n"
        "  --state-update     add the cluster features to the state after each step (paper)\n"
        "  --no-state-update  do not (default)\n"
        "  --seed S           random seed (default 42)\n"
        "  --lr X             Adam learning rate (default 1e-3)\n"
        "  --levels L         graph-parsing levels, 0 = none: one decision per group (default 1)\n"
        "  --min-clusters K   apply a parsing level only if it leaves >= K clusters (default 2 x devices)\n"
        "  --warm-start M     imitation warm start from method M's placement (auto = the best of every "
        "single\n"
        "                     device, heft, m-etf, greedy-tarnawski, measured); not with --resume\n"
        "  --imitate-steps N  Adam steps of the imitation (default 50)\n"
        "  --polish           local-search polish of the best placement at the end (simulator)\n"
        "  --polish-evals N   its evaluations (default 20000)\n"
        "  --noise SIGMA      every simulated measurement is multiplied by exp(SIGMA z), z ~ N(0,1) seeded;\n"
        "                     the latency printed is the noise-free one of the placement returned\n"
        "  --gnn KIND         gcn | gat | gin | sage (default gcn)\n");
    fprintf(
        f,
        "  --no-shape         ablation: drop the output-shape features\n"
        "  --no-id            ablation: drop the node-id feature\n"
        "  --no-struct        ablation: drop degree, fractal dimension and closeness\n"
        "  --no-coarsen       ablation: no co-location coarsening (one group per op)\n"
        "  --max-groups N     at most N groups: runs of consecutive groups merge (default 4096; 0 = no "
        "limit)\n"
        "  --min-groups N     coarsening groups close at ops / N ops (default 64; 0 = no limit, the paper)\n"
        "  --group-mem F      ... and at F x the smallest device capacity in weights (default 0.125; 0 = "
        "off)\n"
        "  --penalty X        infeasible placements are rewarded as X times slower (default 10)\n"
        "  --measure-cmd CMD  reward from an external program, run without a shell: CMD is split into words\n"
        "                     ('...', \"...\" and \\ as in sh; no ; | $ or #), every {placement} (or {}) in\n"
        "                     a word becomes the path of a placement JSON, else the path is appended as the\n"
        "                     last argument; the last number it prints on stdout is the latency in seconds\n"
        "  --measure-timeout S  seconds per measurement (default 600)\n"
        "  --measure-retries N  retries of a failed measurement (default 2)\n"
        "  --out DIR          output directory (default hsdag-train)\n"
        "  --resume DIR       continue from DIR/checkpoint.bin (bit-identical to an uninterrupted run)\n"
        "  --json             print a JSON summary\n"
        "  --help             this text\n");
}

static int parse_args(int argc, char **argv, train_args *a)
{
    enum {
        O_DEV = 1000,
        O_SEM,
        O_EP,
        O_STEPS,
        O_SAMPLES,
        O_SEED,
        O_LR,
        O_LEV,
        O_MINC,
        O_BASE,
        O_ENT,
        O_ENTEND,
        O_POL,
        O_POLEV,
        O_GNN,
        O_NOSHAPE,
        O_NOID,
        O_NOSTRUCT,
        O_NOCOARSEN,
        O_PEN,
        O_MCMD,
        O_MTIME,
        O_MRET,
        O_OUT,
        O_RESUME,
        O_JSON,
        O_PAPER,
        O_BUDGET,
        O_UPDATE,
        O_REWARD,
        O_NORM,
        O_EPOCHS,
        O_CLIP,
        O_DROP,
        O_DYNCL,
        O_STATE,
        O_FIXCL,
        O_NOSTATE,
        O_INH,
        O_NOINH,
        O_NOMEMMASK,
        O_MINGROUPS,
        O_GROUPMEM,
        O_MAXGROUPS,
        O_WARM,
        O_IMIT,
        O_NOISE,
        O_MEM,
        O_HELP
    };
    static const struct option opts[] = {{"devices", 1, 0, O_DEV},
                                         {"semantics", 1, 0, O_SEM},
                                         {"episodes", 1, 0, O_EP},
                                         {"steps", 1, 0, O_STEPS},
                                         {"samples", 1, 0, O_SAMPLES},
                                         {"seed", 1, 0, O_SEED},
                                         {"lr", 1, 0, O_LR},
                                         {"levels", 1, 0, O_LEV},
                                         {"min-clusters", 1, 0, O_MINC},
                                         {"baseline", 1, 0, O_BASE},
                                         {"entropy", 1, 0, O_ENT},
                                         {"entropy-end", 1, 0, O_ENTEND},
                                         {"polish", 0, 0, O_POL},
                                         {"polish-evals", 1, 0, O_POLEV},
                                         {"gnn", 1, 0, O_GNN},
                                         {"no-shape", 0, 0, O_NOSHAPE},
                                         {"no-id", 0, 0, O_NOID},
                                         {"no-struct", 0, 0, O_NOSTRUCT},
                                         {"no-coarsen", 0, 0, O_NOCOARSEN},
                                         {"penalty", 1, 0, O_PEN},
                                         {"measure-cmd", 1, 0, O_MCMD},
                                         {"measure-timeout", 1, 0, O_MTIME},
                                         {"measure-retries", 1, 0, O_MRET},
                                         {"out", 1, 0, O_OUT},
                                         {"resume", 1, 0, O_RESUME},
                                         {"json", 0, 0, O_JSON},
                                         {"paper", 0, 0, O_PAPER},
                                         {"budget", 1, 0, O_BUDGET},
                                         {"update", 1, 0, O_UPDATE},
                                         {"reward", 1, 0, O_REWARD},
                                         {"normalize", 1, 0, O_NORM},
                                         {"epochs", 1, 0, O_EPOCHS},
                                         {"clip", 1, 0, O_CLIP},
                                         {"dropout", 1, 0, O_DROP},
                                         {"dynamic-clusters", 0, 0, O_DYNCL},
                                         {"state-update", 0, 0, O_STATE},
                                         {"fixed-clusters", 0, 0, O_FIXCL},
                                         {"inherit", 0, 0, O_INH},
                                         {"no-inherit", 0, 0, O_NOINH},
                                         {"no-memory-mask", 0, 0, O_NOMEMMASK},
                                         {"min-groups", 1, 0, O_MINGROUPS},
                                         {"group-mem", 1, 0, O_GROUPMEM},
                                         {"max-groups", 1, 0, O_MAXGROUPS},
                                         {"no-state-update", 0, 0, O_NOSTATE},
                                         {"warm-start", 1, 0, O_WARM},
                                         {"imitate-steps", 1, 0, O_IMIT},
                                         {"noise", 1, 0, O_NOISE},
                                         {"mem", 1, 0, O_MEM},
                                         {"help", 0, 0, O_HELP},
                                         {0, 0, 0, 0}};
    long l;
    double d;
    int c;
    /* --paper chooses the base configuration, so it applies wherever it stands */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--paper") == 0)
            a->cfg = hsdag_learn_config_paper();
        else if (strcmp(argv[i], "--") == 0)
            break;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case O_DEV:
            a->devices = optarg;
            break;
        case O_SEM:
            a->semantics = optarg;
            break;
        case O_PAPER:
            break;
        case O_EP:
            if (cli_parse_int(optarg, 0, 10000000, &l))
                return cli_usage_error("train", "bad --episodes '%s'", optarg);
            a->cfg.episodes = (int32_t)l;
            a->episodes_set = 1;
            break;
        case O_BUDGET:
            if (cli_parse_int(optarg, 1, 1000000000L, &l))
                return cli_usage_error("train", "bad --budget '%s'", optarg);
            a->budget = l;
            break;
        case O_STEPS:
            if (cli_parse_int(optarg, 1, 100000, &l))
                return cli_usage_error("train", "bad --steps '%s'", optarg);
            a->cfg.steps = (int32_t)l;
            break;
        case O_SAMPLES:
            if (cli_parse_int(optarg, 1, 4096, &l))
                return cli_usage_error("train", "bad --samples '%s' (1..4096)", optarg);
            a->cfg.samples = (int32_t)l;
            break;
        case O_SEED:
            if (cli_parse_int(optarg, 0, 0x7fffffffffffffffL, &l))
                return cli_usage_error("train", "bad --seed '%s'", optarg);
            a->cfg.seed = (uint64_t)l;
            break;
        case O_LR:
            if (cli_parse_double(optarg, 1e-9, 10, &d))
                return cli_usage_error("train", "bad --lr '%s'", optarg);
            a->cfg.lr = (float)d;
            break;
        case O_LEV:
            if (cli_parse_int(optarg, 0, 16, &l))
                return cli_usage_error("train", "bad --levels '%s' (0..16)", optarg);
            a->cfg.levels = (int32_t)l;
            break;
        case O_MINC:
            if (cli_parse_int(optarg, 1, 1000000000, &l))
                return cli_usage_error("train", "bad --min-clusters '%s'", optarg);
            a->cfg.min_clusters = (int32_t)l;
            break;
        case O_BASE:
            if (strcmp(optarg, "none") == 0)
                a->cfg.baseline = HSDAG_LEARN_BASE_NONE;
            else if (strcmp(optarg, "moving") == 0)
                a->cfg.baseline = HSDAG_LEARN_BASE_MOVING;
            else if (strcmp(optarg, "loo") == 0)
                a->cfg.baseline = HSDAG_LEARN_BASE_LOO;
            else
                return cli_usage_error("train", "bad --baseline '%s' (none, moving, loo)", optarg);
            break;
        case O_UPDATE:
            if (strcmp(optarg, "episode") == 0)
                a->cfg.update = HSDAG_LEARN_EPISODE;
            else if (strcmp(optarg, "step") == 0)
                a->cfg.update = HSDAG_LEARN_STEP;
            else
                return cli_usage_error("train", "bad --update '%s' (episode, step)", optarg);
            break;
        case O_REWARD:
            if (strcmp(optarg, "inv") == 0)
                a->cfg.reward = HSDAG_LEARN_REWARD_INV;
            else if (strcmp(optarg, "log") == 0)
                a->cfg.reward = HSDAG_LEARN_REWARD_LOG;
            else
                return cli_usage_error("train", "bad --reward '%s' (inv, log)", optarg);
            break;
        case O_NORM:
            if (strcmp(optarg, "none") == 0)
                a->cfg.normalize = 0;
            else if (strcmp(optarg, "step") == 0)
                a->cfg.normalize = 1;
            else if (strcmp(optarg, "run") == 0)
                a->cfg.normalize = 2;
            else
                return cli_usage_error("train", "bad --normalize '%s' (none, step, run)", optarg);
            break;
        case O_EPOCHS:
            if (cli_parse_int(optarg, 1, 100, &l))
                return cli_usage_error("train", "bad --epochs '%s' (1..100)", optarg);
            a->cfg.epochs = (int32_t)l;
            break;
        case O_CLIP:
            if (cli_parse_double(optarg, 1e-6, 9.99, &d))
                return cli_usage_error("train", "bad --clip '%s'", optarg);
            a->cfg.clip = d;
            break;
        case O_DROP:
            if (cli_parse_double(optarg, 0, 0.99, &d))
                return cli_usage_error("train", "bad --dropout '%s' ([0, 0.99])", optarg);
            a->cfg.dropout = (float)d;
            break;
        case O_DYNCL:
            a->cfg.fixed_clusters = 0;
            break;
        case O_STATE:
            a->cfg.state_update = 1;
            break;
        case O_NOSTATE:
            a->cfg.state_update = 0;
            break;
        case O_FIXCL:
            a->cfg.fixed_clusters = 1;
            break;
        case O_INH:
            a->cfg.inherit = 1;
            break;
        case O_NOINH:
            a->cfg.inherit = 0;
            break;
        case O_NOMEMMASK:
            a->cfg.memory_mask = 0;
            break;
        case O_MINGROUPS:
            if (cli_parse_int(optarg, 0, 1000000000, &l))
                return cli_usage_error("train", "bad --min-groups '%s'", optarg);
            a->cfg.min_groups = (int32_t)l;
            break;
        case O_MAXGROUPS:
            if (cli_parse_int(optarg, 0, 1000000000, &l))
                return cli_usage_error("train", "bad --max-groups '%s'", optarg);
            a->cfg.max_groups = (int32_t)l;
            break;
        case O_GROUPMEM:
            if (cli_parse_double(optarg, 0, 1, &d))
                return cli_usage_error("train", "bad --group-mem '%s' ([0, 1])", optarg);
            a->cfg.group_mem_frac = d;
            break;
        case O_ENT:
            if (cli_parse_double(optarg, 0, 1e6, &d))
                return cli_usage_error("train", "bad --entropy '%s'", optarg);
            a->cfg.entropy = d;
            if (!a->entropy_end_set) a->cfg.entropy_end = d;
            break;
        case O_ENTEND:
            if (cli_parse_double(optarg, 0, 1e6, &d))
                return cli_usage_error("train", "bad --entropy-end '%s'", optarg);
            a->cfg.entropy_end = d;
            a->entropy_end_set = 1;
            break;
        case O_WARM:
            a->warm = optarg;
            break;
        case O_IMIT:
            if (cli_parse_int(optarg, 0, 100000, &l))
                return cli_usage_error("train", "bad --imitate-steps '%s'", optarg);
            a->cfg.imitate_steps = (int32_t)l;
            break;
        case O_POL:
            a->polish = 1;
            break;
        case O_POLEV:
            if (cli_parse_int(optarg, 1, 1000000000L, &l))
                return cli_usage_error("train", "bad --polish-evals '%s'", optarg);
            a->polish_evals = l;
            break;
        case O_NOISE:
            if (cli_parse_double(optarg, 0, 10, &d))
                return cli_usage_error("train", "bad --noise '%s'", optarg);
            a->noise = d;
            break;
        case O_MEM:
            if (cli_mem_add("train", &a->mem, optarg)) return CLI_BADINPUT;
            break;
        case O_GNN:
            if (hsdag_nn_gnn_kind_parse(&a->cfg.gnn, optarg, NULL) < 0)
                return cli_usage_error("train", "bad --gnn '%s' (gcn, gat, gin, sage)", optarg);
            break;
        case O_NOSHAPE:
            a->cfg.features &= ~(1u << HSDAG_FEAT_SHAPE);
            break;
        case O_NOID:
            a->cfg.features &= ~(1u << HSDAG_FEAT_ID);
            break;
        case O_NOSTRUCT:
            a->cfg.features &= ~HSDAG_FEAT_STRUCT;
            break;
        case O_NOCOARSEN:
            a->cfg.no_coarsen = 1;
            break;
        case O_PEN:
            if (cli_parse_double(optarg, 1, 1e12, &d))
                return cli_usage_error("train", "bad --penalty '%s' (>= 1)", optarg);
            a->cfg.infeasible_penalty = d;
            break;
        case O_MCMD:
            a->measure_cmd = optarg;
            break;
        case O_MTIME:
            if (cli_parse_double(optarg, 0.001, 1e6, &d))
                return cli_usage_error("train", "bad --measure-timeout '%s'", optarg);
            a->measure_timeout = d;
            break;
        case O_MRET:
            if (cli_parse_int(optarg, 0, 100, &l))
                return cli_usage_error("train", "bad --measure-retries '%s'", optarg);
            a->measure_retries = l;
            break;
        case O_OUT:
            a->out = optarg;
            break;
        case O_RESUME:
            a->resume = optarg;
            break;
        case O_JSON:
            a->json = 1;
            break;
        case O_HELP:
            usage(stdout);
            return -1;
        default:
            return cli_usage_error("train", "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (optind + 1 != argc) return cli_usage_error("train", "expected exactly one MODEL");
    a->model = argv[optind];
    if (a->resume && !a->out) a->out = a->resume;
    if (!a->out) a->out = "hsdag-train";
    if (a->budget > 0) {
        if (a->episodes_set) return cli_usage_error("train", "--budget and --episodes both given");
        a->cfg.episodes = hsdag_learn_episodes_for(&a->cfg, a->budget);
    }
    if (a->warm && a->resume)
        return cli_usage_error("train", "--warm-start with --resume (the checkpoint has it)");
    return 0;
}

/* ---- outputs ---- */

typedef struct prog_ctx {
    cli_progress bar;
    hsdag_learn *L;
    const char *dir;
    int failed;
    hsdag_err e;
} prog_ctx;

static int write_curve(const char *dir, const hsdag_learn *L, hsdag_err *e)
{
    int32_t n;
    const hsdag_learn_row *r = hsdag_learn_curve(L, &n);
    hsdag_buf b = {0};
    hsdag_buf_printf(&b, "episode,mean_latency_ms,best_latency_ms,entropy,return,clusters,feasible\n");
    for (int32_t i = 0; i < n; i++)
        hsdag_buf_printf(&b, "%d,%.9g,%.9g,%.9g,%.9g,%d,%.4g\n", (int)r[i].episode, r[i].mean_latency_s * 1e3,
                         r[i].best_latency_s * 1e3, r[i].entropy, r[i].reward, (int)r[i].clusters,
                         r[i].feasible_frac);
    char path[4096];
    snprintf(path, sizeof path, "%s/curve.csv", dir);
    int rc = b.oom ? hsdag_err_set(e, HSDAG_ENOMEM, "out of memory")
                   : hsdag_write_file_atomic(path, b.data, b.len, e);
    hsdag_buf_free(&b);
    return rc;
}

static int write_checkpoint(const char *dir, const hsdag_learn *L, hsdag_err *e)
{
    hsdag_buf b = {0};
    int rc = hsdag_learn_save(L, &b, e);
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint.bin", dir);
    if (rc == 0) rc = hsdag_write_file_atomic(path, b.data, b.len, e);
    hsdag_buf_free(&b);
    return rc;
}

static int on_episode(void *ctx, const hsdag_learn_row *row, int32_t total)
{
    prog_ctx *pc = ctx;
    char extra[96];
    snprintf(extra, sizeof extra, "best %.4g ms", row->best_latency_s * 1e3);
    cli_progress_update(&pc->bar, row->episode + 1, extra);
    (void)total;
    if (write_curve(pc->dir, pc->L, &pc->e) < 0 || write_checkpoint(pc->dir, pc->L, &pc->e) < 0) {
        pc->failed = 1;
        return 1;
    }
    return 0;
}

int cmd_train(int argc, char **argv)
{
    train_args a = {.cfg = hsdag_learn_config_default(), .measure_timeout = 600, .measure_retries = 2};
    int rc = parse_args(argc, argv, &a);
    if (rc) return rc < 0 ? CLI_OK : rc;
    hsdag_err e = {0};
    hsdag_graph *g = NULL;
    hsdag_devices *devs = NULL;
    hsdag_place_problem *p = NULL;
    hsdag_learn *L = NULL;
    hsdag_measure *meas = NULL;
    char *ck = NULL;
    int32_t *warm = NULL;
    int st;
    double t0 = hsdag_now();
    if ((st = hsdag_load_file(&g, a.model, HSDAG_FMT_UNKNOWN, &e)) < 0) goto fail;
    if ((st = hsdag_devices_load(&devs, a.devices, g, &e)) < 0) goto fail;
    hsdag_sim_config sc = hsdag_sim_config_default();
    if (a.semantics && hsdag_semantics_parse(&sc.semantics, a.semantics, NULL) < 0) {
        rc = cli_usage_error("train", "bad --semantics '%s'", a.semantics);
        goto done;
    }
    if ((st = cli_mem_apply(&a.mem, devs, g, &sc, &e)) < 0) goto fail;
    if ((st = hsdag_place_problem_create(&p, g, devs, &sc, &e)) < 0) goto fail;
    if (mkdir(a.out, 0777) < 0 && errno != EEXIST) {
        st = hsdag_err_set(&e, HSDAG_EIO, "%s: cannot create directory: %s", a.out, strerror(errno));
        goto fail;
    }
    /* --paper: the paper's learner, blind to colour classes and to ops a device may not run */
    if ((st = a.cfg.update == HSDAG_LEARN_EPISODE ? hsdag_learn_create(&L, g, devs->n, &a.cfg, &e)
                                                  : hsdag_learn_create_problem(&L, p, &a.cfg, &e)) < 0)
        goto fail;
    if (a.resume) {
        char path[4096];
        size_t len;
        snprintf(path, sizeof path, "%s/checkpoint.bin", a.resume);
        if ((st = hsdag_read_file(&ck, &len, path, 0, &e)) < 0) goto fail;
        if ((st = hsdag_learn_load(L, ck, len, &e)) < 0) {
            hsdag_err_prefix(&e, path);
            goto fail;
        }
    }
    if (a.measure_cmd) { /* the oracle is a library module: no shell, the path is an argument of its own */
        char mpath[4096];
        snprintf(mpath, sizeof mpath, "%s/measure_placement.json", a.out);
        hsdag_measure_config mcfg = hsdag_measure_config_default();
        mcfg.cmd = a.measure_cmd;
        mcfg.path = mpath;
        mcfg.timeout_s = a.measure_timeout;
        mcfg.retries = (int32_t)a.measure_retries;
        if ((st = hsdag_measure_create(&meas, &mcfg, g, devs, &e)) < 0) goto fail;
    }
    hsdag_place_oracle orc;
    hsdag_place_oracle_init(&orc, p, a.noise, a.cfg.seed);
    hsdag_learn_eval_fn evalf = a.measure_cmd ? hsdag_measure_eval : hsdag_place_oracle_eval;
    void *evalc = a.measure_cmd ? (void *)meas : (void *)&orc;
    /* imitation warm start from a heuristic's placement (measured once, counted) */
    const char *warm_from = NULL;
    double warm_lat = NAN;
    int32_t imit_steps = 0;
    int64_t warm_evals = 0;
    if (a.warm) {
        if (!(warm = hsdag_malloc(sizeof(int32_t) * (size_t)g->n_nodes))) {
            st = hsdag_err_set(&e, HSDAG_ENOMEM, "out of memory");
            goto fail;
        }
        int warm_feas = 0;
        hsdag_place_opts po = hsdag_place_opts_default();
        po.seed = a.cfg.seed;
        if (strcmp(a.warm, "auto") == 0) {
            if ((st = hsdag_learn_warm_start(p, &orc, &po, warm, &warm_lat, &warm_feas, &warm_from, &e)) < 0)
                goto fail;
            warm_evals = orc.evals;
        } else {
            hsdag_place_result wr;
            if ((st = hsdag_place_run(p, a.warm, &po, warm, &wr, &e)) < 0) goto fail;
            if ((st = evalf(evalc, warm, &warm_lat, &warm_feas, &e)) < 0) goto fail;
            warm_from = a.warm;
            warm_evals = 1;
        }
        double prob;
        if ((st = hsdag_learn_imitate(L, warm, &imit_steps, &prob, &e)) < 0) goto fail;
        if (warm_feas) hsdag_learn_offer(L, warm, warm_lat);
    }
    prog_ctx pc = {.L = L, .dir = a.out};
    int32_t done_eps;
    hsdag_learn_curve(L, &done_eps);
    cli_progress_start(&pc.bar, "train", a.cfg.episodes, a.json);
    cli_progress_update(&pc.bar, done_eps, "");
    st = hsdag_learn_train(L, evalf, evalc, on_episode, &pc, &e);
    cli_progress_end(&pc.bar);
    if (pc.failed) {
        e = pc.e;
        st = e.status ? e.status : HSDAG_EIO;
        goto fail;
    }
    if (st < 0) {
        /* keep what we have: curve, checkpoint and best placement so far */
        write_curve(a.out, L, &pc.e);
        goto fail;
    }
    double train_s = hsdag_now() - t0, polished = NAN, before;
    int64_t polish_evals = 0;
    hsdag_learn_best(L, NULL, &before, NULL);
    if (a.polish &&
        (st = hsdag_learn_polish_noisy(L, p, a.cfg.seed, a.polish_evals > 0 ? a.polish_evals : 20000, a.noise,
                                       &polished, &polish_evals, &e)) < 0)
        goto fail;
    const int32_t *best;
    double lat;
    int32_t best_ep;
    hsdag_learn_best(L, &best, &lat, &best_ep);
    if (!best) {
        st = hsdag_err_set(&e, HSDAG_EINFEASIBLE, "%s: no feasible placement among %lld sampled", a.model,
                           (long long)hsdag_learn_evals(L));
        goto fail;
    }
    /* the noise-free latency of the placement returned (with --measure-cmd: the simulator's estimate; the
     * measured one is measured_ms) */
    hsdag_place_result pr;
    if ((st = hsdag_place_score(p, best, &pr, &e)) < 0) goto fail;
    double out_ms = a.measure_cmd ? lat * 1e3 : pr.latency_s * 1e3;
    hsdag_buf b = {0};
    char path[4096];
    snprintf(path, sizeof path, "%s/best_placement.json", a.out);
    if ((st = hsdag_placement_write_json(&b, g, devs, best)) < 0 ||
        (st = hsdag_write_file_atomic(path, b.data, b.len, &e)) < 0) {
        hsdag_buf_free(&b);
        goto fail;
    }
    hsdag_buf_free(&b);
    double wall = hsdag_now() - t0;
    long long evaluated = (long long)(hsdag_learn_evals(L) + warm_evals + polish_evals);
    int32_t per[HSDAG_MAX_DEVICES] = {0};
    for (int32_t v = 0; v < g->n_nodes; v++) per[best[v]]++;
    const hsdag_learn_config *cf = hsdag_learn_get_config(L);
    if (a.json) {
        hsdag_buf_printf(&b, "{\"method\": \"hsdag\", \"model\": ");
        hsdag_buf_json_str(&b, a.model);
        hsdag_buf_printf(&b, ", \"devices\": ");
        hsdag_buf_json_str(&b, devs->name ? devs->name : "");
        hsdag_buf_printf(
            &b, ", \"semantics\": \"%s\", \"mode\": \"%s\", \"latency_ms\": ", hsdag_semantics_name(p->sem),
            cf->update == HSDAG_LEARN_EPISODE ? "paper" : "default");
        hsdag_buf_double(&b, out_ms);
        hsdag_buf_printf(&b, ", \"measured_ms\": ");
        hsdag_buf_double(&b, lat * 1e3);
        hsdag_buf_printf(&b, ", \"simulated_ms\": ");
        hsdag_buf_double(&b, pr.latency_s * 1e3);
        hsdag_buf_printf(&b, ", \"learned_ms\": ");
        hsdag_buf_double(&b, before * 1e3);
        hsdag_buf_printf(&b, ", \"polished_ms\": ");
        if (isnan(polished))
            hsdag_buf_printf(&b, "null");
        else
            hsdag_buf_double(&b, polished * 1e3);
        hsdag_buf_printf(&b, ", \"warm_start\": ");
        if (warm_from)
            hsdag_buf_json_str(&b, warm_from);
        else
            hsdag_buf_printf(&b, "null");
        hsdag_buf_printf(&b, ", \"warm_start_ms\": ");
        if (warm_from && isfinite(warm_lat))
            hsdag_buf_double(&b, warm_lat * 1e3);
        else
            hsdag_buf_printf(&b, "null");
        hsdag_buf_printf(&b, ", \"lower_bound_ms\": ");
        hsdag_buf_double(&b, pr.lower_bound_s * 1e3);
        hsdag_buf_printf(&b,
                         ", \"feasible\": %s, \"best_episode\": %d, \"placements_evaluated\": %lld, "
                         "\"learned_placements\": %lld, \"polish_evals\": %lld, \"episodes\": %d, "
                         "\"steps\": %d, \"samples\": %d, \"groups\": %d, \"params\": %zu, \"noise\": ",
                         pr.feasible ? "true" : "false", (int)best_ep, evaluated,
                         (long long)hsdag_learn_evals(L), (long long)polish_evals, (int)cf->episodes,
                         (int)cf->steps, (int)cf->samples, (int)hsdag_learn_groups(L),
                         hsdag_learn_param_count(L));
        hsdag_buf_double(&b, a.noise);
        hsdag_buf_printf(&b, ", \"train_s\": ");
        hsdag_buf_double(&b, train_s);
        hsdag_buf_printf(&b, ", \"wall_s\": ");
        hsdag_buf_double(&b, wall);
        hsdag_buf_printf(&b, ", \"out\": ");
        hsdag_buf_json_str(&b, a.out);
        hsdag_buf_printf(&b, "}\n");
        rc = cli_write_out("train", "-", &b);
        hsdag_buf_free(&b);
    } else {
        printf("method      hsdag %s (%d episodes x %d steps x %d samples, %d groups)\n",
               cf->update == HSDAG_LEARN_EPISODE ? "--paper" : "", (int)cf->episodes, (int)cf->steps,
               (int)cf->samples, (int)hsdag_learn_groups(L));
        printf("devices     %s (%s semantics)\n", devs->name ? devs->name : "", hsdag_semantics_name(p->sem));
        printf("latency     %.6g ms (best at episode %d)%s\n", out_ms, (int)best_ep,
               isnan(polished) ? "" : " after polish");
        if (warm_from)
            printf("warm start  %s, %.6g ms measured, %d imitation steps\n", warm_from, warm_lat * 1e3,
                   (int)imit_steps);
        if (!isnan(polished)) printf("learned     %.6g ms before polish\n", before * 1e3);
        printf("lower bound %.6g ms\n", pr.lower_bound_s * 1e3);
        printf("evaluated   %lld placements in %.3f s\n", evaluated, wall);
        printf("ops         ");
        for (int32_t d = 0; d < devs->n; d++)
            printf("%s%s %d", d ? ", " : "", devs->dev[d].name, (int)per[d]);
        printf("\nwrote       %s/best_placement.json, curve.csv, checkpoint.bin\n", a.out);
        rc = CLI_OK;
    }
    goto done;
fail:
    rc = cli_fail("train", st, &e);
done:
    hsdag_measure_free(meas);
    hsdag_free(ck);
    hsdag_free(warm);
    hsdag_learn_free(L);
    hsdag_place_problem_free(p);
    hsdag_devices_free(devs);
    hsdag_graph_free(g);
    return rc;
}
