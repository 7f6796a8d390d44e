/* opt.c - the option table of the hsdag CLI (one row per option, shared by every command), the command
 * table, the parser, the help renderer and the markdown CLI reference built from them.
 * Not here: what commands do with the values (tools/cmd_*.c). The lists shown under an option (presets,
 * methods, policies) come from the library's registries, never from strings kept here.
 * Entry points: cli_commands, cli_args_init, cli_parse, cli_given_off, cli_help, cli_reference,
 *   cli_range_error.
 */
#include "opt.h"
#include "cli.h"

#include "hsdag/cluster.h"
#include "hsdag/gen.h"
#include "hsdag/learn.h"
#include "hsdag/pacml.h"
#include "hsdag/place.h"
#include "hsdag/pretrain.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>

/* ---- commands ---- */

static const cli_command_info commands[CMD_COUNT_] = {
    [CMD_INFO] =
        {"info", "FILE", 1, -1, "summarise a computation graph (format, counts, FLOPs, depth, op histogram)",
         "Summarises a computation graph: format, node and edge counts (as in the file), op-type "
         "histogram, total FLOPs, parameter and activation bytes, depth (nodes on the longest path), "
         "maximum width (nodes sharing one longest-path level) and the number of unknown ops."},
    [CMD_CONVERT] = {"convert", "IN OUT", 2, 1, "convert a graph to hsdag JSON or Graphviz DOT",
                     "Converts a graph in any supported format to hsdag JSON (exact round trip) or Graphviz "
                     "DOT (every op). OUT may be - for standard output."},
    [CMD_SIMULATE] = {"simulate", "MODEL", 1, -1,
                      "simulate a placement on a device model: latency, busy time, memory",
                      "Simulates one inference request of MODEL placed by --placement on a device set and "
                      "prints its latency, the lower bound, busy time, transfers and peak memory per device. "
                      "A placement that exceeds a memory capacity, puts an op on a device that cannot run "
                      "it, splits a colour class or uses more accelerators than allowed is reported "
                      "infeasible (still exit status 0). For a Tarnawski split with more accelerator groups "
                      "than the model's maxFPGAs, the default device set is widened to fit and the result "
                      "is marked infeasible."},
    [CMD_PLACE] = {"place", "MODEL", 1, -1, "place a graph with one method (heuristic, exact or learned)",
                   "Places every operator of MODEL on a device with --method, scores the placement with "
                   "the simulator and prints its latency, the lower bound and the gap to it. The placers "
                   "decide; the simulator scores: its verdict (\"feasible\") is the one to trust."},
    [CMD_BOUND] = {"bound", "MODEL", 1, -1, "print a lower bound on latency (or throughput)",
                   "Prints a lower bound on the latency of one inference request of MODEL under any "
                   "placement on the device set (memory capacities ignored, so it holds for feasible "
                   "placements too): sequential - the sum of each op's cheapest cost, or the exact optimum "
                   "where the placers provide one (two devices: the min cut); concurrent - max(critical "
                   "path, total cheapest work / devices); tarnawski - the critical path at each op's "
                   "cheapest cost. With --objective throughput: a bound on the largest device load "
                   "(the costliest colour class, or the work per device). place, compare, simulate and "
                   "train report the same bound. --contiguous adds the exact solver's bound over "
                   "contiguous splits."},
    [CMD_COMPARE] = {"compare", "MODEL", 1, -1,
                     "compare every placement method in one table (--suite: on every instance of a benchmark "
                     "suite)",
                     "Runs every placement method on MODEL and prints one table: simulated latency, gap to "
                     "the lower bound, feasibility and time to place. A method that does not apply (mincut "
                     "on three devices) is a row with its reason, not a failure. With --suite NAME instead "
                     "of MODEL: one table per instance of bench/NAME.suite, then a summary of each method "
                     "against the instances' best known latencies."},
    [CMD_TRAIN] =
        {"train", "MODEL", 1, -1,
         "train the HSDAG placer (GCN + graph-parsing pooling + policy gradient; --paper: the paper's)",
         "Trains the HSDAG placer (features -> GCN -> graph-parsing pooling -> per-cluster device "
         "policy, policy gradient) and keeps the best placement seen. Reward: latency from the "
         "simulator, or from --measure-cmd. The defaults are the project's learner (docs/hsdag.md: "
         "per-step leave-one-out advantages on the log latency, PPO-style clipped epochs, an "
         "entropy schedule, self-imitation of the best placements measured, per-decision offsets); "
         "--paper gives the paper's algorithm exactly. Every episode writes "
         "curve.csv and checkpoint.bin in the run directory (atomically); the end writes "
         "best_placement.json there."},
    [CMD_PRETRAIN] =
        {"train --graphs", "LIST", 1, -1,
         "train ONE HSDAG or Placeto policy for many graphs (LIST: comma-separated models)",
         "Trains ONE policy over all the graphs of LIST (comma-separated model files): every round runs "
         "one episode on each graph (in an order shuffled per round from the seed), each continuing the "
         "same parameters. Reward: the simulator. Writes policy.bin (with the command that trained it) and "
         "progress.csv in the run directory. The policy places unseen graphs with 'hsdag place MODEL "
         "--method M --policy DIR/policy.bin' (zero-shot, or fine-tuned with --budget N). --graphs must "
         "come first."},
    [CMD_PROFILE] =
        {"profile", "MODEL", 1, -1,
         "run an ONNX model under ONNX Runtime on this CPU: per-op profile, shape check",
         "Runs MODEL (ONNX) under ONNX Runtime on this machine's CPU (random inputs of the declared "
         "shapes): warm-up runs, then the median of --runs timed runs end to end and per op. "
         "--csv writes the per-op profile (node,device,ms keyed by hsdag's node names) that "
         "--profile and 'hsdag calibrate' read. Nodes ORT fused into another kernel, "
         "constant-folded or removed get 0 ms; a fused kernel's time goes to its anchor node "
         "(comment lines in the CSV say which). Needs Node.js and onnxruntime-node "
         "(scripts/install-deps installs both); environment: HSDAG_ORT_BRIDGE (the bridge "
         "script), HSDAG_ORT_MODULES (a node_modules folder holding onnxruntime-node), HSDAG_NODE "
         "(the node executable)."},
    [CMD_CALIBRATE] =
        {"calibrate", "PROFILE.csv...", -1, -1, "fit a CPU device model to measured profiles",
         "Fits one CPU of the device schema (docs/devices.md) to measured per-op profiles of "
         "'hsdag profile': a compute rate per op class (peak FLOP/s x efficiency), memory "
         "bandwidth and per-op launch overhead, by a robust time-weighted least-squares fit of "
         "log(predicted / measured) per kernel. The i-th --model is the graph of the i-th "
         "profile. Prints the fit quality per model. With --devices D it fits nothing: it scores "
         "D's first CPU on the profiles (e.g. models it was not fitted on)."},
    [CMD_GEN_TRANSFORMER] =
        {"gen transformer", "", 0, -1, "generate a GPT-style decoder of any size as hsdag JSON",
         "Writes a GPT-style decoder as hsdag JSON (docs/formats.md, \"Generated graphs\"), op by op as "
         "torch.onnx.export writes it, with FLOPs, weight bytes, tensor bytes and the KV cache as resident "
         "memory: prefill of --seq tokens or one --decode step, GQA (--kv-heads), tied embeddings, "
         "bias-free projections."},
    [CMD_GEN_RANDOM] =
        {"gen random-dag", "", 0, -1, "generate a seeded random DAG as hsdag JSON",
         "Writes a seeded random DAG as hsdag JSON: node v takes its inputs from distinct nodes "
         "among the --window before it, about --degree of them on average; the same --seed "
         "gives the same bytes."},
    [CMD_CLUSTER_RUN] = {"cluster run", "", 0, -1, "PAC-ML: one episode of a partitioning policy",
                         "PAC-ML (Parsonson et al. 2023): jobs (DNN training graphs) arrive at a RAMP "
                         "optical cluster every --interarrival time units; a policy picks each job's "
                         "maximum partition degree (0 = do not place, 1..16); the job is split, placed "
                         "first-fit, and its lookahead JCT must be <= beta x JCT_seq or it is blocked. "
                         "Arrivals are at t = 0, T, ..., horizon (1001 by default); the one at t = horizon "
                         "is counted in jobs_arrived but gets no decision, so 1000 jobs are decided. Prints "
                         "blocking_rate (jobs_blocked / jobs_arrived; lower is better), acceptance_rate, "
                         "throughput (B per time unit) and mean_jct, named as in --json. See docs/pacml.md."},
    [CMD_CLUSTER_COMPARE] = {"cluster compare", "", 0, -1,
                             "PAC-ML: every policy x beta distribution, mean +- std over seeds",
                             "Runs every policy on every beta distribution over the seeds and prints a "
                             "paper-style table of blocking rate and throughput, mean +- std over seeds."},
    [CMD_CLUSTER_INFO] = {"cluster info", "", 0, -1, "PAC-ML: the job models of the cluster",
                          "Prints the job models: ops, dependencies, JCT_seq, and the lookahead JCT and "
                          "servers of every partition degree."},
    [CMD_CLUSTER_TRAIN] =
        {"cluster train", "", 0, -1,
         "PAC-ML: train the GNN partitioning policy (PPO, or DQN with --algo dqn)",
         "Trains the PAC-ML policy on whole episodes of the RAMP cluster for one beta "
         "distribution. --algo ppo (the default): the 2-round mean-pool GNN + policy/value "
         "heads with PPO; checkpoint.bin holds the whole training state, so --resume "
         "continues bit-identically. --algo dqn: the GNN + per-action occupancy features "
         "with a Q head (docs/pacml-learning.md), epsilon-greedy episodes, n-step double-Q "
         "targets, prioritised replay; no --resume. After every iteration the greedy policy "
         "is evaluated on the episode seeds 1799.. and the best so far is written to "
         "policy.bin in the run directory, with curve.csv. Options of the other algorithm "
         "are refused. Evaluate with: hsdag cluster run --policy learned:DIR."},
};

const cli_command_info *cli_commands(int *n)
{
    *n = CMD_COUNT_;
    return commands;
}

/* ---- the option table ---- */

typedef enum cli_kind {
    K_FLAG,   /* int = 1 */
    K_INT,    /* long, range-checked */
    K_NUM,    /* double, range-checked */
    K_STR,    /* const char * */
    K_CHOICE, /* const char *, one of choice(i) */
    K_IN,     /* an input file (never written; outputs may not name it) */
    K_OUT,    /* an output file, checked before work starts ('-' = standard output) */
    K_DIR,    /* an output directory, checked before work starts */
    K_LIST    /* cli_list: the option may be repeated, each value kept in order */
} cli_kind;

typedef struct cli_opt {
    const char *name; /* without the leading "--" */
    const char *arg;  /* metavar; NULL for a flag */
    cli_kind kind;
    size_t off; /* offsetof(cli_args, field) */
    double lo, hi;
    const char *(*choice)(int i); /* K_CHOICE: the i-th accepted value, NULL past the last */
    uint32_t cmds;                /* bit per cli_cmd */
    const char *help;
    const char *def;                          /* the default in words; NULL = print the field's value */
    void (*more)(FILE *f, const cli_args *a); /* a registry's list printed under the option, or NULL */
} cli_opt;

#define C(x) (1u << CMD_##x)
#define ALL_MODEL (C(SIMULATE) | C(PLACE) | C(BOUND) | C(COMPARE) | C(TRAIN))
#define PLACEMENT_OUT (C(SIMULATE) | C(PLACE) | C(TRAIN))
#define GEN_ALL (C(GEN_TRANSFORMER) | C(GEN_RANDOM))
#define CL_ENV (C(CLUSTER_RUN) | C(CLUSTER_COMPARE) | C(CLUSTER_INFO))
#define CL_ALL (CL_ENV | C(CLUSTER_TRAIN))
#define OFF(f) offsetof(cli_args, f)
#define TRAINS (C(TRAIN) | C(PRETRAIN))

static const char *choice_semantics(int i)
{
    return i == 0 ? "auto" : i <= HSDAG_SEM_COUNT_ ? hsdag_semantics_name((hsdag_semantics)(i - 1)) : NULL;
}
static const char *choice_costs(int i)
{
    return hsdag_costsrc_name((hsdag_costsrc)i);
}
static const char *choice_priority(int i)
{
    return hsdag_priority_name((hsdag_priority)i);
}
static const char *choice_objective(int i)
{
    return i >= 0 && i < HSDAG_OBJ_COUNT_ ? hsdag_objective_name((hsdag_objective)i) : NULL;
}
static const char *choice_format(int i)
{
    if (i == 0) return "auto";
    if (i > HSDAG_FMT_DOT) return NULL;
    return hsdag_format_name((hsdag_format)i);
}
static const char *choice_to(int i)
{
    static const char *const v[] = {"json", "dot", NULL};
    return i < 2 ? v[i] : NULL;
}
static const char *choice_gnn(int i)
{
    const char *s = hsdag_nn_gnn_kind_name((hsdag_nn_gnn_kind)i);
    return s && strcmp(s, "?") ? s : NULL;
}
static const char *choice_beta(int i)
{
    static const char *const v[] = {"A", "B", "C", "D", NULL};
    return i < 4 ? v[i] : NULL;
}
static const char *choice_algo(int i)
{
    static const char *const v[] = {"ppo", "dqn", NULL};
    return i < 2 ? v[i] : NULL;
}
static const char *choice_mask(int i)
{
    static const char *const v[] = {"spec", "place", "place-jct", NULL};
    return i < 3 ? v[i] : NULL;
}

static const char *choice_baseline(int i)
{
    static const char *const v[] = {"none", "moving", "loo", NULL}; /* hsdag_learn_baseline's order */
    return i < 3 ? v[i] : NULL;
}
static const char *choice_update(int i)
{
    static const char *const v[] = {"episode", "step", NULL}; /* hsdag_learn_update's order */
    return i < 2 ? v[i] : NULL;
}
static const char *choice_reward(int i)
{
    static const char *const v[] = {"inv", "log", NULL}; /* hsdag_learn_reward's order */
    return i < 2 ? v[i] : NULL;
}
static const char *choice_normalize(int i)
{
    static const char *const v[] = {"none", "step", "run", NULL}; /* hsdag_learn_config.normalize 0, 1, 2 */
    return i < 3 ? v[i] : NULL;
}

static const char *choice_dtype(int i)
{
    return i >= 0 && i + 1 < HSDAG_DT_COUNT_ ? hsdag_dtype_name((hsdag_dtype)(i + 1)) : NULL;
}

static int cli_choice_index(const char *(*choice)(int), const char *v)
{
    for (int i = 0; v && choice(i); i++)
        if (strcmp(choice(i), v) == 0) return i;
    return -1;
}
int cli_learn_baseline(const char *v)
{
    return cli_choice_index(choice_baseline, v);
}
int cli_learn_update(const char *v)
{
    return cli_choice_index(choice_update, v);
}
int cli_learn_reward(const char *v)
{
    return cli_choice_index(choice_reward, v);
}
int cli_learn_normalize(const char *v)
{
    return cli_choice_index(choice_normalize, v);
}

unsigned cli_learn_features(const cli_args *a, unsigned base)
{
    if (a->no_shape) base &= ~(1u << HSDAG_FEAT_SHAPE);
    if (a->no_id) base &= ~(1u << HSDAG_FEAT_ID);
    if (a->no_struct) base &= ~HSDAG_FEAT_STRUCT;
    if (a->cost_features) base |= HSDAG_LEARN_FEAT_COST;
    if (a->no_cost_features) base &= ~HSDAG_LEARN_FEAT_COST;
    return base;
}

static const char *choice_opt(int i)
{
    static const char *const v[] = {"all", "extended", "basic", "disabled", NULL};
    return i < 4 ? v[i] : NULL;
}
static const char *choice_clock(int i)
{
    static const char *const v[] = {"cpu", "wall", NULL};
    return i < 2 ? v[i] : NULL;
}
static const char *choice_weights(int i)
{
    static const char *const v[] = {"constants", "inputs", NULL};
    return i < 2 ? v[i] : NULL;
}

static void list_item(FILE *f, const char *name, const char *summary);

static void more_presets(FILE *f, const cli_args *a)
{
    (void)a;
    fprintf(f, "%24spresets:\n", "");
    for (const char *const *p = hsdag_devices_preset_names(); *p; p++)
        list_item(f, *p, hsdag_devices_preset_summary(*p));
}

static void more_methods(FILE *f, const cli_args *a)
{
    if (a->cmd == CMD_PRETRAIN) return; /* hsdag or placeto */
    int32_t cnt;
    const hsdag_place_method *m = hsdag_place_methods(&cnt);
    static const char *const resp[] = {"ignores", "respects", "partial"};
    fprintf(f, "%24smethods [memory caps / colour classes: respects, ignores or partial]%s:\n", "",
            a->cmd == CMD_COMPARE ? "; * = in the default list" : "");
    for (int32_t i = 0; i < cnt; i++) {
        char name[64], text[512];
        snprintf(name, sizeof name, "%s%s", m[i].name, a->cmd == CMD_COMPARE && m[i].in_compare ? " *" : "");
        snprintf(text, sizeof text, "[mem %s, colour %s] %s", resp[m[i].memory], resp[m[i].color],
                 m[i].summary);
        list_item(f, name, text);
    }
    list_item(f, "DEVICE-only",
              "[mem ignores, colour respects] every op on that device, even ops it may not "
              "run (then reported infeasible)");
}

static void more_policies(FILE *f, const cli_args *a)
{
    if (a->cmd != CMD_CLUSTER_RUN) return; /* place --policy takes a policy file */
    int32_t n;
    const hsdag_cluster_policy_info *p = hsdag_cluster_policies(&n);
    fprintf(f, "%24spolicies:\n", "");
    for (int32_t i = 0; i < n; i++) list_item(f, p[i].name, p[i].summary);
}

static const cli_opt table[] = {
    /* ---- info, convert ---- */
    {"format", "F", K_CHOICE, OFF(format), 0, 0, choice_format, C(INFO) | C(CONVERT),
     "the input format, skipping detection", "auto: detected from the content", NULL},
    {"mirror", NULL, K_FLAG, OFF(mirror), 0, 0, NULL, C(INFO) | C(CONVERT),
     "PipeDream only: the PAC-ML job graph (forward + mirrored backward: 2n nodes, 2E+1 edges)", NULL, NULL},
    {"top", "N", K_INT, OFF(top), 0, 1000000, NULL, C(INFO), "op types shown in the table (JSON lists all)",
     NULL, NULL},
    {"to", "F", K_CHOICE, OFF(to), 0, 0, choice_to, C(CONVERT), "the output format",
     "from OUT's extension (.json; .dot or .gv)", NULL},
    /* ---- place, compare ---- */
    {"method", "M", K_STR, OFF(method), 0, 0, NULL, C(PLACE) | C(PRETRAIN),
     "the placement method (place: required; a method of the registry, or a single device: cpu-only, "
     "gpu-only, accel-only, a device name (CPU, GPU, gpu0, acc1, ...) or DEVICE-only; train --graphs: the "
     "policy's, hsdag or placeto)",
     NULL, more_methods},
    {"policy", "P", K_STR, OFF(policy), 0, 0, NULL, C(PLACE) | C(CLUSTER_RUN),
     "the policy (cluster run: the partitioning policy, required; place: with --method hsdag or placeto, a "
     "pre-trained policy file of 'hsdag train --graphs', several HSDAG ones as FILE,FILE,... (an ensemble, "
     "e.g. "
     "of several seeds: the one-pass placement averages their log-probabilities; --budget fine-tunes the "
     "first), or 'shipped': the device preset's shipped one, policies/<method>/<preset>.bin on the data path "
     "($HSDAG_DATA first), or where an accelerator's memory cap binds (it cannot hold the whole model) and "
     "that file's directory has one, the ensemble trained under a cap there, <preset>.capped.0.bin, .1.bin, "
     "...; zero-shot (one forward pass, nothing measured; also --budget 0) unless --budget N fine-tunes "
     "it with N measurements; 'none': the method from scratch. place --method hsdag|placeto --budget N "
     "without --policy takes 'shipped' where --devices is a preset that has one, unless --max-evals (the "
     "budget of the method from scratch) is given)",
     NULL, more_policies},
    {"list", NULL, K_FLAG, OFF(list), 0, 0, NULL, C(PLACE), "list the method names and exit", NULL, NULL},
    {"methods", "LIST", K_STR, OFF(methods), 0, 0, NULL, C(COMPARE), "comma-separated methods to compare",
     "one single-device row per device kind, then every method marked *", more_methods},
    {"time-limit", "SEC", K_NUM, OFF(time_limit), 0.001, 1e6, NULL, C(PLACE) | C(COMPARE) | C(BOUND),
     "seconds for ilp, dp, pipedream and local-search (for local-search a safety stop; bound: the "
     "--contiguous solver)",
     "10 (dp: 60)", NULL},
    {"cpu-time", NULL, K_FLAG, OFF(cpu_time), 0, 0, NULL, C(PLACE) | C(COMPARE),
     "--time-limit counts the placing thread's CPU time, not wall time, in every method that reads it: ilp "
     "(every semantics and objective, with its starts, LP and branch-and-cut), dp, pipedream and "
     "local-search; the same work, and the same result, on a loaded machine as on an idle one (unless the "
     "limit is reached)",
     NULL, NULL},
    {"ilp-iterations", "N", K_INT, OFF(ilp_iterations), 1, 2e9, NULL, C(PLACE) | C(COMPARE),
     "ilp under sequential semantics: stop after N GLPK simplex iterations (LP relaxation and branch-and-cut "
     "together) instead of --time-limit, so the same input gives the same placement on any machine",
     "none: --time-limit", NULL},
    {"max-evals", "N", K_INT, OFF(max_evals), 1, 1e9, NULL, C(PLACE) | C(COMPARE),
     "local-search simulator evaluations (the reproducible stop); hsdag: the whole run's evaluations",
     "20000 (hsdag: about 60500)", NULL},
    {"budget", "N", K_INT, OFF(budget), 0, 1e9, NULL, C(PLACE) | C(COMPARE) | C(TRAIN),
     "measurements of the black-box methods (bb-random, bb-local) and placements sampled by the learned ones "
     "(0: zero-shot, only for place --method hsdag|placeto with a pre-trained policy) "
     "(hsdag*; place --method hsdag|placeto without --policy: fine-tunes the preset's shipped policy with N "
     "where it has one, see --policy; compare: every method from scratch; train: sets --episodes to N / "
     "(steps x samples), rounded up)",
     NULL, NULL},
    {"noise", "SIGMA", K_NUM, OFF(noise), 0, 10, NULL, C(PLACE) | C(COMPARE) | C(TRAIN),
     "the black-box and learned methods see every latency x exp(SIGMA z), z ~ N(0,1) seeded; the latency "
     "printed is always the noise-free one of the placement returned",
     NULL, NULL},
    {"suite", "NAME", K_STR, OFF(suite), 0, 0, NULL, C(COMPARE),
     "instead of MODEL: every instance of the benchmark suite bench/NAME.suite (or the file NAME), then each "
     "method's latency against each instance's best known (docs/hsdag.md, \"hard suite\")",
     NULL, NULL},
    {"init", "FILE", K_IN, OFF(init), 0, 0, NULL, C(PLACE),
     "local-search only: the start, a placement JSON, affinity map or Tarnawski split",
     "the best of every single device, heft, greedy-tarnawski and mincut", NULL},
    /* ---- simulate, bound ---- */
    {"placement", "P", K_STR, OFF(placement), 0, 0, NULL, C(SIMULATE),
     "the placement (required): an hsdag placement JSON, an OpenVINO affinity map, a Tarnawski split, or "
     "a device shorthand: cpu-only, gpu-only, a device name or DEVICE-only",
     NULL, NULL},
    {"priority", "R", K_CHOICE, OFF(priority), 0, 0, choice_priority, C(SIMULATE),
     "concurrent semantics only: the order in which a device picks its ready ops (rank: HEFT upward "
     "rank; topo: topological index)",
     NULL, NULL},
    {"no-exact", NULL, K_FLAG, OFF(no_exact), 0, 0, NULL, C(BOUND),
     "skip the exact solver even where it applies (the bound other commands report uses it)", NULL, NULL},
    {"contiguous", NULL, K_FLAG, OFF(contiguous), 0, 0, NULL, C(BOUND),
     "tarnawski semantics only: also run the exact solver over contiguous splits (latency: ilp, Tarnawski "
     "et al.'s IP; throughput: dp) and print its bound, which holds for every contiguous split (each "
     "accelerator one contiguous subgraph)",
     NULL, NULL},
    /* ---- train ---- */
    {"paper", NULL, K_FLAG, OFF(paper), 0, 0, NULL, TRAINS,
     "the paper's algorithm exactly: REINFORCE on 1/latency, one Adam step per episode of 20 placements, no "
     "baseline, dropout 0.2 while sampling, clusters re-parsed every step, the state update x += h_cluster "
     "(options given with it still apply; the defaults shown are the project's learner's, docs/hsdag.md)",
     NULL, NULL},
    {"episodes", "N", K_INT, OFF(episodes), 1, 1e7, NULL, C(TRAIN),
     "training episodes in total (with --resume: the new total)", NULL, NULL},
    {"steps", "N", K_INT, OFF(steps), 1, 100000, NULL, TRAINS, "policy evaluations per episode (paper: 20)",
     NULL, NULL},
    {"samples", "N", K_INT, OFF(samples), 1, 4096, NULL, TRAINS,
     "placements sampled per policy evaluation (paper: 1)", NULL, NULL},
    {"update", "U", K_CHOICE, OFF(update), 0, 0, choice_update, C(TRAIN),
     "episode: one Adam step per episode weighted by its return (paper); step: one update per step from its "
     "samples' advantages",
     NULL, NULL},
    {"reward", "R", K_CHOICE, OFF(reward), 0, 0, choice_reward, C(TRAIN),
     "inv: 1 / latency in ms (paper); log: -ln(latency / first latency)", NULL, NULL},
    {"normalize", "N", K_CHOICE, OFF(normalize), 0, 0, choice_normalize, C(TRAIN),
     "divide advantages by the reward standard deviation: of the step, of a moving average over steps "
     "(run), or not",
     NULL, NULL},
    {"dropout", "X", K_NUM, OFF(dropout), 0, 0.99, NULL, C(TRAIN), "dropout while sampling (paper: 0.2)",
     NULL, NULL},
    {"fixed-clusters", NULL, K_FLAG, OFF(fixed_clusters), 0, 0, NULL, C(TRAIN),
     "decide the graph-parsing clusters once from the initial network (the default)", NULL, NULL},
    {"dynamic-clusters", NULL, K_FLAG, OFF(dynamic_clusters), 0, 0, NULL, C(TRAIN),
     "re-parse the clusters at every step (paper)", NULL, NULL},
    {"inherit", NULL, K_FLAG, OFF(inherit), 0, 0, NULL, C(TRAIN),
     "a cluster keeps its main predecessor's device with a learned probability (contiguous blocks; the "
     "default)",
     NULL, NULL},
    {"no-inherit", NULL, K_FLAG, OFF(no_inherit), 0, 0, NULL, C(TRAIN),
     "every cluster samples its own device (paper)", NULL, NULL},
    {"state-update", NULL, K_FLAG, OFF(state_update), 0, 0, NULL, C(TRAIN),
     "add the cluster features to the state after each step (paper)", NULL, NULL},
    {"no-state-update", NULL, K_FLAG, OFF(no_state_update), 0, 0, NULL, C(TRAIN),
     "do not add them (the default)", NULL, NULL},
    {"no-memory-mask", NULL, K_FLAG, OFF(no_memory_mask), 0, 0, NULL, C(TRAIN),
     "offer every device to every cluster (paper); by default only devices with room for the static bytes "
     "(weights) of what is already there",
     NULL, NULL},
    {"lr", "X", K_NUM, OFF(lr), 1e-9, 10, NULL, TRAINS | C(CLUSTER_TRAIN), "Adam learning rate", NULL, NULL},
    {"levels", "L", K_INT, OFF(levels), 0, 16, NULL, TRAINS,
     "graph-parsing levels (0 = none: one decision per group)", NULL, NULL},
    {"min-clusters", "K", K_INT, OFF(min_clusters), 0, 1e9, NULL, TRAINS,
     "apply a further parsing level only if it leaves at least K clusters (0 = 2 x devices)",
     "32; --paper and pretraining: 0", NULL},
    {"baseline", "B", K_CHOICE, OFF(baseline), 0, 0, choice_baseline, C(TRAIN),
     "the advantage's baseline: none (paper), a moving average of step rewards, or leave-one-out over the "
     "step's samples",
     NULL, NULL},
    {"entropy", "X", K_NUM, OFF(entropy), 0, 100, NULL, TRAINS | C(CLUSTER_TRAIN),
     "entropy bonus weight (train: at the start, decaying linearly to --entropy-end; paper 0)", NULL, NULL},
    {"entropy-end", "X", K_NUM, OFF(entropy_end), 0, 100, NULL, C(TRAIN),
     "the entropy weight at the end of the decay", "--entropy's when only that is given, else 0", NULL},
    {"sil", "W", K_NUM, OFF(sil), 0, 1000, NULL, C(TRAIN),
     "self-imitation: the --sil-elite best placements measured so far join every update, each as W more "
     "samples when better than the step's mean (0 = off, paper)",
     NULL, NULL},
    {"sil-elite", "N", K_INT, OFF(sil_elite), 0, 1024, NULL, C(TRAIN),
     "with --sil: how many of the best placements are kept", NULL, NULL},
    {"offset-lr", "X", K_NUM, OFF(offset_lr), 0, 100, NULL, C(TRAIN),
     "per-decision offsets: each decision's own logits, added to the network's and trained at rate X (0 = "
     "off, paper; train --graphs: off while pre-training)",
     NULL, NULL},
    {"warm-start", "M", K_STR, OFF(warm_start), 0, 0, NULL, TRAINS,
     "imitation warm start from method M's placement (auto: the default hsdag's warm start, the best of "
     "every "
     "single device, heft, m-etf, m-sct, metis, greedy-tarnawski, on two devices mincut and, under "
     "sequential "
     "semantics with a memory cap or more than two devices on up to 2,000 ops, ilp on 20,000 simplex "
     "iterations, measured and counted); not with --resume; train --graphs: "
     "auto (default) or none: before round 0, 50 shuffled passes over the graphs, 2 imitation steps on each "
     "graph's auto placement per pass",
     NULL, more_methods},
    {"imitate-steps", "N", K_INT, OFF(imitate_steps), 0, 100000, NULL, C(TRAIN),
     "with --warm-start: Adam steps of the imitation", NULL, NULL},
    {"polish", NULL, K_FLAG, OFF(polish), 0, 0, NULL, C(TRAIN),
     "local-search polish of the best placement at the end (simulator)", NULL, NULL},
    {"polish-evals", "N", K_INT, OFF(polish_evals), 1, 1e9, NULL, C(TRAIN), "with --polish: its evaluations",
     NULL, NULL},
    {"min-groups", "N", K_INT, OFF(min_groups), 0, 1e9, NULL, C(TRAIN),
     "coarsening groups close at ops / N ops (0 = no limit, the paper)", NULL, NULL},
    {"max-groups", "N", K_INT, OFF(max_groups), 0, 1e9, NULL, C(TRAIN),
     "at most N groups: runs of consecutive groups merge (0 = no limit)", NULL, NULL},
    {"group-mem", "F", K_NUM, OFF(group_mem), 0, 1, NULL, C(TRAIN),
     "coarsening groups also close at F x the smallest device capacity in weights (0 = off)", NULL, NULL},
    {"weight-units", "F", K_NUM, OFF(weight_units), 0, 1, NULL, TRAINS,
     "under a memory cap (--mem, or a preset's own capacities), a group with no inputs holding more than F x "
     "the smallest capacity in weights (a "
     "weight fed to its consumer through an op of its own, as the Transpose before a MatMul) is a decision "
     "of "
     "its own: graph parsing never merges it, so the weight can stay on the host while its consumer runs on "
     "the accelerator (0 = off, paper; nothing to do with --levels 0)",
     NULL, NULL},
    {"gnn", "KIND", K_CHOICE, OFF(gnn), 0, 0, choice_gnn, TRAINS, "the graph network", NULL, NULL},
    {"no-shape", NULL, K_FLAG, OFF(no_shape), 0, 0, NULL, TRAINS, "ablation: drop the output-shape features",
     NULL, NULL},
    {"no-id", NULL, K_FLAG, OFF(no_id), 0, 0, NULL, TRAINS, "ablation: drop the node-id feature", NULL, NULL},
    {"no-struct", NULL, K_FLAG, OFF(no_struct), 0, 0, NULL, TRAINS,
     "ablation: drop degree, fractal dimension and closeness", NULL, NULL},
    {"cost-features", NULL, K_FLAG, OFF(cost_features), 0, 0, NULL, TRAINS,
     "add a feature kind from the cost table: each group's time per device, bytes against the caps (train "
     "--graphs: the default)",
     NULL, NULL},
    {"no-cost-features", NULL, K_FLAG, OFF(no_cost_features), 0, 0, NULL, C(PRETRAIN),
     "train --graphs: a policy without the cost feature kind (black-box features only)", NULL, NULL},
    {"no-coarsen", NULL, K_FLAG, OFF(no_coarsen), 0, 0, NULL, TRAINS,
     "ablation: no co-location coarsening (one group per op)", NULL, NULL},
    {"rounds", "N", K_INT, OFF(rounds), 1, 1000000, NULL, C(PRETRAIN),
     "passes over the graphs (each one episode per graph; 10 with --warm-start none, --paper or --method "
     "placeto)",
     NULL, NULL},
    {"units", "N", K_INT, OFF(units), 0, 1000000, NULL, C(PRETRAIN),
     "--method placeto: decision units per graph (0 = one per group)", NULL, NULL},
    {"penalty", "X", K_NUM, OFF(penalty), 1, 1e12, NULL, C(TRAIN),
     "an infeasible placement is rewarded as X times slower", NULL, NULL},
    {"measure-cmd", "CMD", K_STR, OFF(measure_cmd), 0, 0, NULL, C(TRAIN),
     "reward from an external program, run without a shell: CMD is split into words ('...', \"...\" and \\ "
     "as in sh; no ; | $ or #), every {placement} (or {}) in a word becomes the path of a placement JSON, "
     "else the path is appended as the last argument; the last number it prints on standard output is the "
     "latency in seconds",
     NULL, NULL},
    {"measure-timeout", "SEC", K_NUM, OFF(measure_timeout), 0.001, 1e6, NULL, C(TRAIN),
     "with --measure-cmd: seconds per measurement", NULL, NULL},
    {"measure-retries", "N", K_INT, OFF(measure_retries), 0, 100, NULL, C(TRAIN),
     "with --measure-cmd: retries of a failed measurement", NULL, NULL},
    {"no-measure-memo", NULL, K_FLAG, OFF(no_measure_memo), 0, 0, NULL, C(TRAIN),
     "with --measure-cmd: run the command again for a placement measured before (by default its first "
     "latency is reused: a learner that has converged samples the same placements again and again)",
     NULL, NULL},
    /* ---- profile, calibrate ---- */
    {"csv", "FILE", K_OUT, OFF(csv), 0, 0, NULL, C(PROFILE),
     "write the per-op profile CSV (node,device,ms: the file --profile and calibrate read)", NULL, NULL},
    {"runs", "N", K_INT, OFF(runs), 1, 100000, NULL, C(PROFILE), "timed runs", NULL, NULL},
    {"warmup", "N", K_INT, OFF(warmup), 0, 100000, NULL, C(PROFILE), "untimed warm-up runs", NULL, NULL},
    {"threads", "T", K_INT, OFF(threads), 0, 1024, NULL, C(PROFILE),
     "ORT intra-op threads (0 = ORT's default)", NULL, NULL},
    {"opt", "LEVEL", K_CHOICE, OFF(opt_level), 0, 0, choice_opt, C(PROFILE), "ORT's graph optimisation level",
     NULL, NULL},
    {"clock", "C", K_CHOICE, OFF(clock), 0, 0, choice_clock, C(PROFILE),
     "time runs by the process's CPU time (cpu: the latency without the time other processes held the "
     "core; needs --threads 1) or by the wall clock",
     "cpu with --threads 1, else wall", NULL},
    {"weights", "W", K_CHOICE, OFF(weights), 0, 0, choice_weights, C(PROFILE),
     "the weights of a weight-free export (graph inputs without values): random initializers as in a "
     "deployed model, so ORT prepacks and folds them (constants), or random inputs fed on every run",
     NULL, NULL},
    {"device", "NAME", K_STR, OFF(device), 0, 0, NULL, C(PROFILE) | C(CALIBRATE),
     "the device name in the profile CSV's lines", NULL, NULL},
    {"check-shapes", NULL, K_FLAG, OFF(check_shapes), 0, 0, NULL, C(PROFILE),
     "also run every node unfused and compare each output shape hsdag inferred with ORT's; exit status 1 on "
     "any difference",
     NULL, NULL},
    {"model", "FILE", K_LIST, OFF(models), 0, 0, NULL, C(CALIBRATE),
     "the graph of the next profile (once per profile, in the same order)", NULL, NULL},
    {"device-set", "FILE", K_OUT, OFF(device_set), 0, 0, NULL, C(CALIBRATE),
     "write the fitted device set as device JSON (the file --devices reads)", NULL, NULL},
    {"name", "NAME", K_STR, OFF(set_name), 0, 0, NULL, C(CALIBRATE) | GEN_ALL,
     "the name written into the output (calibrate: of the device set; gen: of the graph)", NULL, NULL},
    {"base", "SET", K_STR, OFF(base), 0, 0, NULL, C(CALIBRATE),
     "write SET (a preset or file) with its CPU replaced by the fitted one (cpu-gpu: this CPU + the "
     "preset's GPU)",
     "the fitted CPU alone", NULL},
    {"kernels", "FILE", K_OUT, OFF(kernels), 0, 0, NULL, C(CALIBRATE),
     "write the first profile's per-kernel measured and predicted times as CSV", NULL, NULL},
    {"cache-bytes", "B", K_NUM, OFF(cache_bytes), 0, 1e12, NULL, C(CALIBRATE),
     "the size of the fitted cache level in bytes", "this machine's last-level cache", NULL},
    /* ---- gen ---- */
    {"layers", "L", K_INT, OFF(layers), 1, HSDAG_MAX_NODES, NULL, C(GEN_TRANSFORMER), "decoder blocks", NULL,
     NULL},
    {"d-model", "D", K_INT, OFF(d_model), 1, 1L << 40, NULL, C(GEN_TRANSFORMER),
     "model width (a multiple of --heads)", NULL, NULL},
    {"heads", "H", K_INT, OFF(heads), 1, HSDAG_MAX_NODES, NULL, C(GEN_TRANSFORMER), "attention heads", NULL,
     NULL},
    {"kv-heads", "K", K_INT, OFF(kv_heads), 1, HSDAG_MAX_NODES, NULL, C(GEN_TRANSFORMER),
     "key/value heads (GQA; 1 = MQA; must divide --heads)", "--heads", NULL},
    {"ffn", "F", K_INT, OFF(ffn), 1, 1L << 40, NULL, C(GEN_TRANSFORMER), "MLP width", "4 x --d-model", NULL},
    {"seq", "S", K_INT, OFF(seq), 1, 1L << 40, NULL, C(GEN_TRANSFORMER),
     "prompt tokens (prefill) or tokens already in the KV cache (--decode)", NULL, NULL},
    {"vocab", "V", K_INT, OFF(vocab), 1, 1L << 40, NULL, C(GEN_TRANSFORMER), "vocabulary size", NULL, NULL},
    {"sequences", "B", K_INT, OFF(sequences), 1, 1L << 40, NULL, C(GEN_TRANSFORMER), "sequences in the batch",
     NULL, NULL},
    {"decode", NULL, K_FLAG, OFF(decode), 0, 0, NULL, C(GEN_TRANSFORMER),
     "one decode step (one new token per sequence) instead of the prefill", NULL, NULL},
    {"tied", NULL, K_FLAG, OFF(tied), 0, 0, NULL, C(GEN_TRANSFORMER),
     "the LM head reads the token-embedding table", NULL, NULL},
    {"no-bias", NULL, K_FLAG, OFF(no_bias), 0, 0, NULL, C(GEN_TRANSFORMER),
     "projections without bias (Llama style)", NULL, NULL},
    {"target-ops", "N", K_INT, OFF(target_ops), 1, HSDAG_MAX_NODES, NULL, C(GEN_TRANSFORMER),
     "set --layers to the most blocks that keep the graph at or under N ops", "off", NULL},
    {"nodes", "N", K_INT, OFF(nodes), 1, HSDAG_MAX_NODES, NULL, C(GEN_RANDOM), "nodes (required)", "", NULL},
    {"degree", "DEG", K_NUM, OFF(degree), 1, 16, NULL, C(GEN_RANDOM), "mean in-degree", NULL, NULL},
    {"window", "W", K_INT, OFF(window), 1, HSDAG_MAX_NODES, NULL, C(GEN_RANDOM),
     "how far back a node's inputs reach", NULL, NULL},
    {"dtype", "T", K_CHOICE, OFF(dtype), 0, 0, choice_dtype, GEN_ALL,
     "element type of weights, activations and the KV cache", NULL, NULL},
    /* ---- cluster ---- */
    {"beta", "X", K_CHOICE, OFF(beta), 0, 0, choice_beta, C(CLUSTER_RUN) | C(CLUSTER_TRAIN),
     "the JCT requirement distribution (A uniform, B tight, C medium, D loose)", NULL, NULL},
    {"seeds", "LIST", K_STR, OFF(seeds), 0, 0, NULL, C(CLUSTER_COMPARE), "comma-separated episode seeds",
     NULL, NULL},
    {"policies", "LIST", K_STR, OFF(policies), 0, 0, NULL, C(CLUSTER_COMPARE),
     "comma-separated policies (those of 'hsdag cluster run --help')", NULL, NULL},
    {"betas", "LETTERS", K_STR, OFF(betas), 0, 0, NULL, C(CLUSTER_COMPARE), "beta distributions to run", NULL,
     NULL},
    {"markdown", "FILE", K_OUT, OFF(markdown), 0, 0, NULL, C(CLUSTER_COMPARE),
     "also write the table as markdown to FILE", NULL, NULL},
    {"graphs", "F,F,...", K_STR, OFF(graphs), 0, 0, NULL, CL_ENV,
     "PipeDream graph.txt files for the job pool", "the five built-in PAC-ML graphs", NULL},
    {"time-unit-fix", NULL, K_FLAG, OFF(time_unit_fix), 0, 0, NULL, CL_ALL,
     "the reference uses profile ms as its time unit but computes communication in seconds, so "
     "communication weighs ~1000x too little; this converts communication to ms as well (then "
     "interarrival and horizon are in ms)",
     NULL, NULL},
    {"shape", "C,R,S", K_STR, OFF(shape), 0, 0, NULL, CL_ENV,
     "communication groups, racks per group, servers per rack (at most 512 servers)", NULL, NULL},
    {"bandwidth", "B", K_NUM, OFF(bandwidth), 1e3, 1e18, NULL, CL_ENV,
     "total node bandwidth in B/s (a channel gets B / C)", NULL, NULL},
    {"interarrival", "T", K_NUM, OFF(interarrival), 1e-6, 1e12, NULL, CL_ALL, "time between job arrivals",
     NULL, NULL},
    {"horizon", "T", K_NUM, OFF(horizon), 0, 1e15, NULL, CL_ALL,
     "simulated time (horizon / interarrival + 1 arrivals)", NULL, NULL},
    {"replication", "R", K_INT, OFF(replication), 1, HSDAG_CLUSTER_MAX_REPLICATION, NULL, CL_ENV,
     "copies of each graph in the job pool", NULL, NULL},
    /* ---- cluster train ---- */
    {"algo", "A", K_CHOICE, OFF(algo), 0, 0, choice_algo, C(CLUSTER_TRAIN),
     "the training algorithm (ppo unless given; --help shows the defaults of the one given: hsdag cluster "
     "train --algo dqn --help)",
     NULL, NULL},
    {"iterations", "N", K_INT, OFF(iterations), 1, 1000000, NULL, C(CLUSTER_TRAIN),
     "iterations in total (PPO with --resume: the new total, at least the iterations done)", NULL, NULL},
    {"batch-episodes", "N", K_INT, OFF(batch_episodes), 1, 10000, NULL, C(CLUSTER_TRAIN),
     "episodes collected per iteration (about 1000 decisions each)", NULL, NULL},
    {"epochs", "N", K_INT, OFF(epochs), 1, 1000, NULL, C(TRAIN) | C(CLUSTER_TRAIN),
     "PPO epochs: gradient passes over each batch (train: a step's samples, clipped after the first; cluster "
     "train: an iteration's, the tuned RLlib config used 50)",
     NULL, NULL},
    {"minibatch", "N", K_INT, OFF(minibatch), 1, 1000000, NULL, C(CLUSTER_TRAIN),
     "PPO: samples per Adam step", NULL, NULL},
    {"clip", "X", K_NUM, OFF(clip), 1e-6, 10, NULL, C(TRAIN) | C(CLUSTER_TRAIN), "PPO ratio clip", NULL,
     NULL},
    {"gamma", "X", K_NUM, OFF(gamma), 1e-3, 0.999999, NULL, C(CLUSTER_TRAIN), "discount", NULL, NULL},
    {"lambda", "X", K_NUM, OFF(lambda), 0, 1, NULL, C(CLUSTER_TRAIN), "PPO: GAE lambda", NULL, NULL},
    {"vf", "X", K_NUM, OFF(vf), 0, 100, NULL, C(CLUSTER_TRAIN), "PPO: value loss weight", NULL, NULL},
    {"kl", "X", K_NUM, OFF(kl), 0, 100, NULL, C(CLUSTER_TRAIN),
     "PPO: initial KL(old||new) weight, adapted towards --kl-target", NULL, NULL},
    {"kl-target", "X", K_NUM, OFF(kl_target), 0, 100, NULL, C(CLUSTER_TRAIN),
     "PPO: target KL per iteration (0 keeps --kl fixed)", NULL, NULL},
    {"grad-clip", "X", K_NUM, OFF(grad_clip), 0, 1e6, NULL, C(CLUSTER_TRAIN), "global gradient norm clip",
     NULL, NULL},
    {"hidden", "N", K_INT, OFF(hidden), 1, 4096, NULL, C(CLUSTER_TRAIN),
     "PPO: width of the policy and value hidden layers", NULL, NULL},
    {"mask", "M", K_CHOICE, OFF(mask), 0, 0, choice_mask, C(CLUSTER_TRAIN),
     "the policy's action mask (spec: the environment's; place: also drop degrees the first-fit placer "
     "cannot place now; place-jct: also drop degrees whose cached JCT misses the deadline); stored in "
     "the policy file",
     NULL, NULL},
    {"eval-episodes", "N", K_INT, OFF(eval_episodes), 0, 1000, NULL, C(CLUSTER_TRAIN),
     "greedy evaluation episodes per iteration", NULL, NULL},
    {"n-step", "N", K_INT, OFF(n_step), 1, 64, NULL, C(CLUSTER_TRAIN), "DQN: n-step returns", NULL, NULL},
    {"lr-end", "X", K_NUM, OFF(lr_end), 1e-6, 1, NULL, C(CLUSTER_TRAIN),
     "DQN: the learning rate decays linearly to --lr x X", NULL, NULL},
    {"batch", "N", K_INT, OFF(batch), 1, 65536, NULL, C(CLUSTER_TRAIN), "DQN: transitions per update", NULL,
     NULL},
    {"train-every", "N", K_INT, OFF(train_every), 1, 1000000, NULL, C(CLUSTER_TRAIN),
     "DQN: decisions per update", NULL, NULL},
    {"replay", "N", K_INT, OFF(replay), 2, 10000000, NULL, C(CLUSTER_TRAIN),
     "DQN: replay capacity in decisions", NULL, NULL},
    {"learning-starts", "N", K_INT, OFF(learning_starts), 0, 100000000, NULL, C(CLUSTER_TRAIN),
     "DQN: decisions before the first update", NULL, NULL},
    {"target-every", "N", K_INT, OFF(target_every), 1, 100000000, NULL, C(CLUSTER_TRAIN),
     "DQN: updates between target-network copies", NULL, NULL},
    {"per-alpha", "X", K_NUM, OFF(per_alpha), 0, 10, NULL, C(CLUSTER_TRAIN),
     "DQN: prioritised replay exponent (0 = uniform replay)", NULL, NULL},
    {"per-beta", "X", K_NUM, OFF(per_beta), 0, 1, NULL, C(CLUSTER_TRAIN),
     "DQN: importance-weight exponent at the start, annealed to 1", NULL, NULL},
    {"eps-start", "X", K_NUM, OFF(eps_start), 0, 1, NULL, C(CLUSTER_TRAIN),
     "DQN: exploration epsilon at the start", NULL, NULL},
    {"eps-end", "X", K_NUM, OFF(eps_end), 0, 1, NULL, C(CLUSTER_TRAIN),
     "DQN: epsilon after --eps-decay decisions", NULL, NULL},
    {"eps-decay", "N", K_INT, OFF(eps_decay), 1, 2000000000, NULL, C(CLUSTER_TRAIN),
     "DQN: decisions over which epsilon falls linearly", NULL, NULL},
    {"head", "H1,H2", K_STR, OFF(head), 0, 0, NULL, C(CLUSTER_TRAIN),
     "DQN: widths of the Q head's two hidden layers (1 to 4096 each)", NULL, NULL},
    /* ---- the model commands ---- */
    {"seed", "S", K_INT, OFF(seed), 0, 2147483647, NULL,
     C(PLACE) | C(COMPARE) | TRAINS | C(PROFILE) | C(GEN_RANDOM) | C(CLUSTER_RUN) | C(CLUSTER_TRAIN),
     "seed of every random choice (randomised methods, weights, sampling, episodes); the same input and "
     "seed give bit-identical output",
     NULL, NULL},
    {"devices", "D", K_STR, OFF(devices), 0, 0, NULL, ALL_MODEL | C(PRETRAIN) | C(CALIBRATE),
     "a device preset or a device JSON file (docs/devices.md)",
     "tarnawski for Tarnawski JSON models, cpu-gpu otherwise", more_presets},
    {"semantics", "S", K_CHOICE, OFF(semantics), 0, 0, choice_semantics, ALL_MODEL,
     "how one request runs (sequential: one op at a time, as OpenVINO HETERO; concurrent: devices in "
     "parallel, transfers overlap; tarnawski: Tarnawski et al.'s model)",
     "auto: the device set's own", NULL},
    {"objective", "O", K_CHOICE, OFF(objective), 0, 0, choice_objective,
     C(SIMULATE) | C(PLACE) | C(BOUND) | C(COMPARE),
     "what a placement is scored by (latency: one request's; throughput: the time per sample of the split "
     "run as a pipeline, the largest device load of compute + communication)",
     NULL, NULL},
    {"costs", "SRC", K_CHOICE, OFF(costs), 0, 0, choice_costs, ALL_MODEL,
     "where op costs come from (roofline: FLOPs and bytes; file: the model's measured times, an error "
     "when it has none)",
     "auto: file when every op has measured times", NULL},
    {"profile", "CSV", K_IN, OFF(profile), 0, 0, NULL, ALL_MODEL,
     "per-op per-device times (lines node,device,ms) overriding the cost model", NULL, NULL},
    {"mem", "DEV=SIZE", K_LIST, OFF(mem), 0, 0, NULL, C(SIMULATE) | C(PLACE) | C(COMPARE) | C(BOUND) | TRAINS,
     "cap DEV's memory: bytes with a K/M/G/T suffix, or P% of what the whole model needs on DEV (GPU=50%: "
     "the GPU holds about half the model)",
     NULL, NULL},
    {"mem-also", "DEV=SIZE,...", K_LIST, OFF(mem_also), 0, 0, NULL, C(PRETRAIN),
     "train on every graph once more under each of these caps of DEV, as --mem and after it; "
     "the policy sees the caps through the cost features (not with --no-cost-features)",
     NULL, NULL},
    /* ---- outputs ---- */
    {"out", "FILE", K_OUT, OFF(out), 0, 0, NULL, PLACEMENT_OUT | GEN_ALL,
     "write the placement (train: the best one) as hsdag placement JSON; gen: the graph as hsdag JSON ('-' = "
     "standard output)",
     NULL, NULL},
    {"affinity", "FILE", K_OUT, OFF(affinity), 0, 0, NULL, PLACEMENT_OUT,
     "write the placement as an OpenVINO affinity map (layer -> device) for HETERO", NULL, NULL},
    {"split", "FILE", K_OUT, OFF(split), 0, 0, NULL, PLACEMENT_OUT,
     "write the placement as a Tarnawski split {\"cpus\": [...], \"fpgas\": [...]}", NULL, NULL},
    {"dot", "FILE", K_OUT, OFF(dot), 0, 0, NULL, PLACEMENT_OUT,
     "draw the placement for Graphviz: every op up to 500 ops; above that one box per group of ops on "
     "one device, coloured by device (it lays out in seconds)",
     NULL, NULL},
    {"dot-full", "FILE", K_OUT, OFF(dot_full), 0, 0, NULL, PLACEMENT_OUT,
     "draw every op of the placement, whatever the size (Graphviz may take minutes past a few hundred "
     "ops)",
     NULL, NULL},
    {"trace", "FILE", K_OUT, OFF(trace), 0, 0, NULL, PLACEMENT_OUT,
     "write the simulated schedule as Chrome/Perfetto trace JSON (ui.perfetto.dev)", NULL, NULL},
    {"save-dir", "DIR", K_DIR, OFF(save_dir), 0, 0, NULL, C(COMPARE),
     "save every method's placement in DIR (created): METHOD.json (placement), METHOD.affinity.json, "
     "METHOD.split.json, METHOD.dot and METHOD.trace.json",
     NULL, NULL},
    {"out-dir", "DIR", K_DIR, OFF(out_dir), 0, 0, NULL, TRAINS | C(CLUSTER_TRAIN),
     "the run directory (created): curve.csv, checkpoint.bin and the best placement or policy (train "
     "--graphs: policy.bin and progress.csv); a directory that is not empty is refused unless --resume "
     "or --force",
     NULL, NULL},
    {"resume", "DIR", K_DIR, OFF(resume), 0, 0, NULL, C(TRAIN) | C(CLUSTER_TRAIN),
     "continue the run in DIR from its checkpoint (bit-identical to an uninterrupted run; the options "
     "must be the run's)",
     NULL, NULL},
    {"force", NULL, K_FLAG, OFF(force), 0, 0, NULL, TRAINS | C(CLUSTER_TRAIN),
     "start a new run in a run directory that is not empty (its files are replaced)", NULL, NULL},
    {"repeat", "N", K_INT, OFF(repeat), 1, 1e9, NULL, C(SIMULATE) | C(CLUSTER_RUN),
     "repeat the computation N times (identical results) and report its speed (evals_per_s, or the "
     "median wall_s and cpu_s of one episode)",
     "1", NULL},
    /* ---- every command ---- */
    {"json", NULL, K_FLAG, OFF(json), 0, 0, NULL,
     C(INFO) | ALL_MODEL | C(PRETRAIN) | C(PROFILE) | C(CALIBRATE) | CL_ALL,
     "print the result as one JSON object (its schema and keys: docs/formats.md)", NULL, NULL},
    {"quiet", NULL, K_FLAG, OFF(quiet), 0, 0, NULL, ALL_MODEL | C(PRETRAIN) | C(PROFILE) | CL_ALL,
     "no progress bar and no notes on standard error (errors are still printed)", NULL, NULL},
};
#define N_OPTS ((int)(sizeof table / sizeof table[0]))

/* Options that were renamed or that mean something else here: a hint instead of "unknown". */
typedef struct cli_hint {
    const char *name;
    uint32_t cmds;
    const char *hint;
} cli_hint;
static const cli_hint hints[] = {
    {"export-json", C(SIMULATE), "the placement JSON is --out FILE"},
    {"export-affinity", C(SIMULATE), "the affinity map is --affinity FILE"},
    {"export-split", C(SIMULATE), "the split is --split FILE"},
    {"out", C(CLUSTER_COMPARE), "the markdown table is --markdown FILE"},
    {"out", C(CLUSTER_TRAIN), "the run directory is --out-dir DIR"},
    {"out", C(PROFILE), "the per-op profile CSV is --csv FILE"},
    {"out", C(CALIBRATE), "the fitted device set is --device-set FILE"},
    {"episodes", C(CLUSTER_TRAIN), "episodes per iteration (PPO and DQN) are --batch-episodes N"},
    {"methods", C(PLACE), "place takes one --method M; compare takes --methods LIST"},
    {"method", C(COMPARE), "compare takes --methods LIST"},
    {"seed", C(CLUSTER_COMPARE), "compare takes --seeds LIST"},
    {"policy", C(CLUSTER_COMPARE), "compare takes --policies LIST"},
    {"beta", C(CLUSTER_COMPARE), "compare takes --betas LETTERS"},
    {"seeds", C(CLUSTER_RUN), "run takes one --seed S"},
    {"policies", C(CLUSTER_RUN), "run takes one --policy P"},
    {"betas", C(CLUSTER_RUN), "run takes one --beta X"},
    {"graphs", C(TRAIN),
     "one policy for many graphs is 'hsdag train --graphs LIST [options]' (--graphs first)"},
    {"out", C(PRETRAIN), "the run directory is --out-dir DIR"},
    {"save-dir", PLACEMENT_OUT, "this command writes its placement with --out, --affinity, --split, --dot"},
};
#define N_HINTS ((int)(sizeof hints / sizeof hints[0]))

_Static_assert(sizeof table / sizeof table[0] <= CLI_MAX_OPTS, "raise CLI_MAX_OPTS");

/* Where an option's default is another thing in one command (the meaning is the same). */
static const cli_hint own_defaults[] = {
    {"devices", C(CALIBRATE), "none: fit a CPU to the profiles"},
    {"devices", C(PRETRAIN), "cpu-gpu"},
    {"time-limit", C(BOUND), "ilp 10, dp 60"},
    {"budget", C(TRAIN), "--episodes x --steps x --samples"},
    {"out", GEN_ALL, "-: standard output"},
    {"name", GEN_ALL, "derived from the options"},
};

/* ---- defaults ---- */

static char shape_default[48];

void cli_args_init(cli_args *a, cli_cmd cmd)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->name = commands[cmd].name;
    a->seed = 0;
    a->repeat = 1;
    a->top = 12;
    a->priority = "rank";
    a->objective = "latency";
    if (cmd == CMD_PLACE || cmd == CMD_COMPARE) a->budget = 500; /* hsdag_place_opts.budget's default */
    if (cmd == CMD_TRAIN) {
        hsdag_learn_config c = hsdag_learn_config_default();
        a->episodes = c.episodes;
        a->steps = c.steps;
        a->samples = c.samples;
        a->update = choice_update((int)c.update);
        a->reward = choice_reward((int)c.reward);
        a->normalize = choice_normalize(c.normalize);
        a->baseline = choice_baseline((int)c.baseline);
        a->epochs = c.epochs;
        a->clip = c.clip;
        a->dropout = c.dropout;
        a->entropy_end = c.entropy_end;
        a->imitate_steps = c.imitate_steps;
        a->sil = c.sil;
        a->sil_elite = c.sil_elite;
        a->offset_lr = c.offset_lr;
        a->polish_evals = 20000;
        a->min_groups = c.min_groups;
        a->max_groups = c.max_groups;
        a->group_mem = c.group_mem_frac;
        a->weight_units = c.weight_unit_frac;
        a->lr = c.lr;
        a->levels = c.levels;
        a->min_clusters = c.min_clusters;
        a->entropy = c.entropy;
        a->penalty = c.infeasible_penalty;
        a->gnn = hsdag_nn_gnn_kind_name(c.gnn);
        a->measure_timeout = 600;
        a->measure_retries = 2;
        a->out_dir = "hsdag-train";
    }
    if (cmd == CMD_PRETRAIN) {
        hsdag_pretrain_config c = hsdag_pretrain_config_default();
        a->method = hsdag_policy_method_name(c.method);
        a->rounds = c.rounds;
        a->units = c.placeto.max_units;
        a->steps = c.hsdag.steps;
        a->samples = c.hsdag.samples;
        a->lr = c.hsdag.lr;
        a->entropy = c.hsdag.entropy;
        a->levels = c.hsdag.levels;
        a->min_clusters = c.hsdag.min_clusters;
        a->gnn = hsdag_nn_gnn_kind_name(c.hsdag.gnn);
        a->out_dir = "hsdag-pretrain";
    }
    if (cmd == CMD_PROFILE) {
        a->runs = 10;
        a->warmup = 3;
        a->threads = 1;
        a->opt_level = "all";
        a->weights = "constants";
        a->device = "CPU";
    }
    if (cmd == CMD_CALIBRATE) {
        a->device = "CPU";
        a->set_name = "this-cpu";
        a->cache_bytes = -1; /* this machine's */
    }
    if (cmd == CMD_GEN_TRANSFORMER) {
        hsdag_gen_transformer_config t = hsdag_gen_transformer_config_default();
        a->layers = t.layers;
        a->d_model = t.hidden;
        a->heads = t.heads;
        a->kv_heads = t.kv_heads; /* 0 = --heads */
        a->ffn = t.ffn;           /* 0 = 4 x --d-model */
        a->seq = t.seq;
        a->vocab = t.vocab;
        a->sequences = t.batch;
        a->decode = t.decode;
        a->tied = t.tied;
        a->no_bias = !t.bias;
        a->dtype = hsdag_dtype_name(t.dtype);
    }
    if (cmd == CMD_GEN_RANDOM) {
        hsdag_gen_random_config r = hsdag_gen_random_config_default();
        a->degree = r.degree;
        a->window = r.window;
        a->seed = (long)r.seed;
        a->dtype = hsdag_dtype_name(r.dtype);
    }
    if (cmd >= CMD_CLUSTER_RUN) {
        hsdag_cluster_config c = hsdag_cluster_config_default();
        static char beta[2];
        beta[0] = c.beta;
        a->beta = beta;
        snprintf(shape_default, sizeof shape_default, "%d,%d,%d", (int)c.n_cgs, (int)c.n_racks,
                 (int)c.n_servers);
        a->shape = shape_default;
        a->bandwidth = c.node_bw;
        a->interarrival = c.interarrival;
        a->horizon = c.horizon;
        a->replication = c.replication;
        a->seeds = "0,1,2";
        a->betas = "ABCD";
        a->policies = "para-max,para-min,random,para-min-jct,sequential,fixed:4,lookahead";
    }
    if (cmd == CMD_CLUSTER_TRAIN) {
        hsdag_pacml_train_config t = hsdag_pacml_train_config_default();
        a->iterations = t.iterations;
        a->batch_episodes = t.episodes_per_iter;
        a->epochs = t.epochs;
        a->minibatch = t.minibatch;
        a->lr = t.lr;
        a->clip = t.loss.clip;
        a->gamma = t.gamma;
        a->lambda = t.lambda;
        a->entropy = t.loss.ent_coeff;
        a->vf = t.loss.vf_coeff;
        a->kl = t.loss.kl_coeff;
        a->kl_target = t.kl_target;
        a->grad_clip = t.grad_clip;
        a->hidden = t.net.fc_hidden;
        a->eval_episodes = t.eval_episodes;
        a->mask = "spec";
        a->algo = "ppo";
        hsdag_pacml_dqn_config q = hsdag_pacml_dqn_config_default(); /* the DQN-only options */
        a->n_step = q.n_step;
        a->lr_end = q.lr_end;
        a->batch = q.batch;
        a->train_every = q.train_every;
        a->replay = q.replay;
        a->learning_starts = q.learning_starts;
        a->target_every = q.target_every;
        a->per_alpha = q.per_alpha;
        a->per_beta = q.per_beta;
        a->eps_start = q.eps_start;
        a->eps_end = q.eps_end;
        a->eps_decay = (long)q.eps_decay;
        static char head[32];
        snprintf(head, sizeof head, "%d,%d", (int)q.net.h1, (int)q.net.h2);
        a->head = head;
    }
}

/* ---- helpers ---- */

static void *field(cli_args *a, const cli_opt *o)
{
    return (char *)a + o->off;
}
static const void *cfield(const cli_args *a, const cli_opt *o)
{
    return (const char *)a + o->off;
}

int cli_given_off(const cli_args *a, size_t off)
{
    for (int i = 0; i < N_OPTS; i++)
        if (table[i].off == off && (table[i].cmds >> a->cmd & 1u)) return a->given[i];
    return 0;
}

int cli_range_error(const char *cmd, const char *opt, const char *value, int integer, double lo, double hi)
{
    fprintf(stderr, "hsdag %s: %s '%s' is not %s in [%.15g, %.15g] (see hsdag %s --help)\n", cmd, opt, value,
            integer ? "an integer" : "a number", lo, hi, cmd);
    return CLI_BADINPUT;
}

/* "a, b or c" of a choice option, into buf. */
static const char *choices_text(const cli_opt *o, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    int cnt = 0;
    while (o->choice(cnt)) cnt++;
    for (int i = 0; i < cnt && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s",
                              i == 0         ? ""
                              : i == cnt - 1 ? " or "
                                             : ", ",
                              o->choice(i));
    return buf;
}

static const cli_opt *find_opt(const char *name, size_t len, int *index);

int cli_check_choice(const char *cmd, const char *where, const char *opt, const char *v)
{
    const cli_opt *o = find_opt(opt, strlen(opt), NULL);
    HSDAG_ASSERT(o && o->kind == K_CHOICE);
    for (int i = 0; o->choice(i); i++)
        if (strcmp(v, o->choice(i)) == 0) return CLI_OK;
    char buf[256];
    return cli_usage_error(cmd, "%s: --%s '%s' is not %s", where, opt, v, choices_text(o, buf, sizeof buf));
}

static int applies(const cli_opt *o, cli_cmd c)
{
    return (o->cmds >> c) & 1u;
}

/* Stores one value; returns 0 or a usage error. */
static int set_value(cli_args *a, const cli_opt *o, const char *v)
{
    char opt[64];
    snprintf(opt, sizeof opt, "--%s", o->name);
    switch (o->kind) {
    case K_FLAG:
        *(int *)field(a, o) = 1;
        return 0;
    case K_INT: {
        long x;
        if (cli_parse_int(v, (long)o->lo, (long)o->hi, &x) < 0)
            return cli_range_error(a->name, opt, v, 1, o->lo, o->hi);
        *(long *)field(a, o) = x;
        return 0;
    }
    case K_NUM: {
        double x;
        if (cli_parse_double(v, o->lo, o->hi, &x) < 0)
            return cli_range_error(a->name, opt, v, 0, o->lo, o->hi);
        *(double *)field(a, o) = x;
        return 0;
    }
    case K_CHOICE: {
        for (int i = 0; o->choice(i); i++)
            if (strcmp(v, o->choice(i)) == 0) {
                *(const char **)field(a, o) = o->choice(i);
                return 0;
            }
        char buf[256];
        return cli_usage_error(a->name, "%s '%s' is not %s", opt, v, choices_text(o, buf, sizeof buf));
    }
    case K_LIST: {
        cli_list *l = field(a, o);
        if (!*v) return cli_usage_error(a->name, "%s needs a non-empty value", opt);
        if (l->n >= CLI_LIST_MAX)
            return cli_usage_error(a->name, "%s given more than %d times", opt, CLI_LIST_MAX);
        l->v[l->n++] = v;
        return 0;
    }
    default:
        if (!*v) return cli_usage_error(a->name, "%s needs a non-empty value", opt);
        *(const char **)field(a, o) = v;
        return 0;
    }
}

static const cli_opt *find_opt(const char *name, size_t len, int *index)
{
    for (int i = 0; i < N_OPTS; i++)
        if (strlen(table[i].name) == len && strncmp(table[i].name, name, len) == 0) {
            if (index) *index = i;
            return &table[i];
        }
    return NULL;
}

static const char *find_hint(const char *name, size_t len, cli_cmd c)
{
    for (int i = 0; i < N_HINTS; i++)
        if (strlen(hints[i].name) == len && strncmp(hints[i].name, name, len) == 0 &&
            ((hints[i].cmds >> c) & 1u))
            return hints[i].hint;
    return NULL;
}

/* ---- output paths ---- */

typedef struct cli_path {
    const char *what; /* "--out", "OUT", "MODEL" */
    const char *path;
} cli_path;

/* 1 if a and b name one existing file (same device and inode) or the same string. */
static int same_file(const char *a, const char *b)
{
    if (strcmp(a, b) == 0) return 1;
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static int check_outputs(cli_args *a)
{
    static cli_path outs[CLI_MAX_OPTS + 2], ins[CLI_MAX_POS + CLI_MAX_OPTS + CLI_LIST_MAX];
    int no = 0, ni = 0;
    const cli_command_info *ci = &commands[a->cmd];
    for (int i = 0; i < a->n_pos; i++) {
        if (i == ci->out_arg)
            outs[no++] = (cli_path){"OUT", a->pos[i]};
        else
            ins[ni++] = (cli_path){i == 0 ? (ci->n_args == 2 ? "IN" : ci->args) : "argument", a->pos[i]};
    }
    for (int i = 0; i < a->models.n; i++) ins[ni++] = (cli_path){"--model", a->models.v[i]};
    static char what[CLI_MAX_OPTS][40];
    for (int i = 0; i < N_OPTS; i++) {
        const cli_opt *o = &table[i];
        int path = o->kind == K_OUT || o->kind == K_IN ||
                   (o->kind == K_STR && (o->off == OFF(devices) || o->off == OFF(placement)));
        if (!a->given[i] || !path) continue;
        const char *v = *(const char *const *)cfield(a, o);
        snprintf(what[i], sizeof what[i], "--%s", o->name);
        if (o->kind == K_OUT) outs[no++] = (cli_path){what[i], v};
        if (o->kind == K_IN) ins[ni++] = (cli_path){what[i], v};
        if (o->kind == K_STR && (o->off == OFF(devices) || o->off == OFF(placement)))
            ins[ni++] = (cli_path){what[i], v}; /* a file when it is one */
    }
    hsdag_err e = {0};
    int to_stdout = 0;
    for (int i = 0; i < no; i++) {
        if (strcmp(outs[i].path, "-") == 0) {
            if (to_stdout++ || a->json)
                return cli_usage_error(a->name, "%s -: standard output is already taken by %s", outs[i].what,
                                       a->json ? "--json" : "another output");
            continue;
        }
        if (hsdag_out_check(outs[i].path, &e) < 0) {
            struct stat st;
            int dir_meant = a->cmd == CMD_TRAIN && stat(outs[i].path, &st) == 0 && S_ISDIR(st.st_mode);
            return cli_usage_error(a->name, "%s: %s%s", outs[i].what, e.msg,
                                   dir_meant ? " (the run directory is --out-dir DIR)" : "");
        }
        for (int j = 0; j < i; j++)
            if (same_file(outs[i].path, outs[j].path))
                return cli_usage_error(a->name, "%s and %s name the same file '%s'", outs[j].what,
                                       outs[i].what, outs[i].path);
        for (int j = 0; j < ni; j++)
            if (same_file(outs[i].path, ins[j].path))
                return cli_usage_error(a->name, "%s '%s' is also the input %s: refusing to overwrite it",
                                       outs[i].what, outs[i].path, ins[j].what);
    }
    for (int i = 0; i < N_OPTS; i++) {
        if (!a->given[i] || table[i].kind != K_DIR || table[i].off == OFF(resume)) continue;
        const char *dir = *(const char *const *)cfield(a, &table[i]);
        if (hsdag_out_dir_check(NULL, dir, &e) < 0)
            return cli_usage_error(a->name, "--%s: %s", table[i].name, e.msg);
    }
    return 0;
}

/* ---- run directories ---- */

/* The files a run writes before its first checkpoint (train: the curve, the measured placement; cluster
 * train: the curve, the best policy): n entries that are all of these mean a run killed before it had a
 * checkpoint (stale temp files of ours are not counted: hsdag_out_dir_check removes them). */
static int run_dir_only_early_outputs(const char *dir, int n)
{
    static const char *early[] = {"curve.csv", "measure_placement.json", "policy.bin"};
    int found = 0;
    for (size_t i = 0; i < sizeof early / sizeof early[0]; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, early[i]);
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) found++;
    }
    return found == n;
}

int cli_run_dir(const cli_args *a, const char **dir, int *resume)
{
    hsdag_err e = {0};
    int n = 0;
    *dir = a->resume ? a->resume : a->out_dir;
    if (resume) *resume = 0;
    if (!*dir) return cli_usage_error(a->name, "missing --out-dir DIR (or --resume DIR)");
    if (a->resume && cli_given(a, out_dir))
        return cli_usage_error(a->name, "--resume DIR continues the run in DIR: --out-dir does not apply");
    if (a->resume && a->force)
        return cli_usage_error(a->name, "--resume continues a run and --force starts a new one: give one");
    if (hsdag_out_dir_check(&n, *dir, &e) < 0)
        return cli_usage_error(a->name, "%s: %s", a->resume ? "--resume" : "--out-dir", e.msg);
    if (a->resume) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/checkpoint.bin", *dir);
        if (stat(path, &st) == 0) {
            if (resume) *resume = 1;
        } else if (stat(*dir, &st) == 0 && S_ISDIR(st.st_mode) && run_dir_only_early_outputs(*dir, n)) {
            /* killed before (or during) its first checkpoint write: nothing to continue, so the run starts
             * over with the options given, as --out-dir DIR --force would; what is lost is the work since
             * the run started */
            fprintf(stderr,
                    "hsdag %s: --resume %s: no checkpoint yet (the run stopped before its first one): "
                    "starting it from the beginning with this command's options\n",
                    a->name, *dir);
        } else {
            return cli_usage_error(
                a->name,
                "--resume %s: no checkpoint.bin to resume from (this is not a run directory, or holds "
                "files a run does not write); start a new run there with --out-dir %s --force",
                *dir, *dir);
        }
    } else if (n > 0 && !a->force) {
        return cli_usage_error(
            a->name,
            "--out-dir %s is not empty (an earlier run?): continue it with --resume %s, or "
            "start a new run there with --force",
            *dir, *dir);
    }
    return CLI_OK;
}

/* ---- parsing ---- */

int cli_parse(cli_args *a, int argc, char **argv)
{
    int only_pos = 0;
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (only_pos || s[0] != '-' || strcmp(s, "-") == 0) {
            if (commands[a->cmd].n_args < 0 && a->n_pos >= CLI_MAX_POS)
                return cli_usage_error(a->name, "more than %d arguments", CLI_MAX_POS);
            if (commands[a->cmd].n_args >= 0 && a->n_pos >= commands[a->cmd].n_args)
                return cli_usage_error(a->name, "unexpected argument '%s'", s);
            a->pos[a->n_pos++] = s;
            continue;
        }
        if (strcmp(s, "--") == 0) {
            only_pos = 1;
            continue;
        }
        if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
            a->help = 1;
            continue;
        }
        if (s[1] != '-') return cli_usage_error(a->name, "unknown option '%s'", s);
        const char *name = s + 2, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int idx = -1;
        const cli_opt *o = find_opt(name, len, &idx);
        const char *hint = find_hint(name, len, a->cmd);
        if (!o || !applies(o, a->cmd)) {
            if (hint) return cli_usage_error(a->name, "--%.*s does not apply here: %s", (int)len, name, hint);
            if (o) return cli_usage_error(a->name, "--%s does not apply to 'hsdag %s'", o->name, a->name);
            return cli_usage_error(a->name, "unknown option '--%.*s'", (int)len, name);
        }
        const char *v = NULL;
        if (o->arg) {
            if (eq)
                v = eq + 1;
            else if (i + 1 < argc)
                v = argv[++i];
            else
                return cli_usage_error(a->name, "--%s needs a value (%s)", o->name, o->arg);
        } else if (eq) {
            return cli_usage_error(a->name, "--%s takes no value", o->name);
        }
        int rc = set_value(a, o, v);
        if (rc) return rc;
        a->given[idx] = 1;
    }
    if (a->help) {
        cli_help(stdout, a);
        return CLI_OK;
    }
    if (a->list && a->cmd == CMD_PLACE) return CLI_CONTINUE; /* place --list needs no MODEL */
    int need = commands[a->cmd].n_args < 0 ? 1 : commands[a->cmd].n_args;
    if (a->cmd == CMD_COMPARE && a->suite) { /* the suite names its models */
        if (a->n_pos) return cli_usage_error(a->name, "--suite takes no MODEL (unexpected '%s')", a->pos[0]);
        if (a->mem.n)
            return cli_usage_error(a->name,
                                   "--mem is given per instance in the suite file, not with --suite");
        need = 0;
    }
    if (a->n_pos < need) {
        const char *args = commands[a->cmd].args;
        return cli_usage_error(a->name, "missing %s", a->n_pos == 0 ? args : strchr(args, ' ') + 1);
    }
    /* --budget 0 is the issue's "N = 0": a pre-trained policy's one forward pass, nothing measured */
    if (cli_given(a, budget) && a->budget == 0 &&
        (a->cmd != CMD_PLACE || !a->method || (strcmp(a->method, "hsdag") && strcmp(a->method, "placeto")) ||
         (a->policy && strcmp(a->policy, "none") == 0)))
        return cli_usage_error(a->name, "--budget 0 (zero-shot) goes with place --method hsdag|placeto and a "
                                        "pre-trained policy; every other use measures at least 1");
    int rc = check_outputs(a);
    return rc ? rc : CLI_CONTINUE;
}

/* ---- help ---- */

/* Prints text from the current column col (the first word goes right there), wrapping at width with
 * continuation lines indented by ind. */
static void wrap(FILE *f, const char *text, int col, int ind, int width)
{
    const char *p = text;
    int first = 1;
    while (*p) {
        const char *w = p;
        while (*w && *w != ' ') w++;
        int len = (int)(w - p);
        if (!first && col + 1 + len > width) {
            fprintf(f, "\n%*s", ind, "");
            col = ind;
        } else if (!first) {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, (size_t)len, f);
        col += len;
        first = 0;
        p = w;
        while (*p == ' ') p++;
    }
    fputc('\n', f);
}

/* One entry of a registry list under an option: the name in a column, the summary wrapped beside it. */
static void list_item(FILE *f, const char *name, const char *summary)
{
    fprintf(f, "%24s%-17s ", "", name);
    wrap(f, summary, 24 + 18 > 24 + (int)strlen(name) + 1 ? 24 + 18 : 24 + (int)strlen(name) + 1, 42, 108);
}

/* The default of o for command a->cmd as text ("" if none). */
static const char *default_text(const cli_args *a, const cli_opt *o, char *buf, size_t cap)
{
    buf[0] = 0;
    for (size_t i = 0; i < sizeof own_defaults / sizeof own_defaults[0]; i++)
        if (strcmp(own_defaults[i].name, o->name) == 0 && ((own_defaults[i].cmds >> a->cmd) & 1u))
            return own_defaults[i].hint;
    if (o->def) {
        if (o->kind == K_INT || o->kind == K_NUM) return o->def;
        if (!*(const char *const *)cfield(a, o)) return o->def;
    }
    switch (o->kind) {
    case K_INT:
        snprintf(buf, cap, "%ld", *(const long *)cfield(a, o));
        break;
    case K_NUM:
        snprintf(buf, cap, "%.4g", *(const double *)cfield(a, o));
        break;
    case K_FLAG:
    case K_LIST:
        break;
    default: {
        const char *s = *(const char *const *)cfield(a, o);
        if (s) snprintf(buf, cap, "%s", s);
    }
    }
    return buf;
}

static void help_line(FILE *f, const cli_args *a, const cli_opt *o)
{
    char head[64], def[128], text[1024], ch[256];
    snprintf(head, sizeof head, "  --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    const char *d = default_text(a, o, def, sizeof def);
    ch[0] = 0;
    if (o->kind == K_CHOICE) {
        size_t n = 0;
        for (int i = 0; o->choice(i) && n < sizeof ch; i++)
            n += (size_t)snprintf(ch + n, sizeof ch - n, "%s%s", i ? " | " : "", o->choice(i));
        if (n < sizeof ch) snprintf(ch + n, sizeof ch - n, ": ");
    }
    snprintf(text, sizeof text, "%s%s%s%s%s%s", ch, o->help, o->kind == K_LIST ? " (repeatable)" : "",
             *d ? " (default " : "", d, *d ? ")" : "");
    int col = (int)strlen(head);
    fputs(head, f);
    if (col < 22) {
        fprintf(f, "%*s", 22 - col, "");
    } else {
        fprintf(f, "\n%22s", "");
    }
    wrap(f, text, 22, 22, 108);
    if (o->more) o->more(f, a);
}

void cli_help(FILE *f, const cli_args *a)
{
    const cli_command_info *ci = &commands[a->cmd];
    fprintf(f, "usage: hsdag %s%s%s [options]\n\n", ci->name, *ci->args ? " " : "", ci->args);
    wrap(f, ci->about, 0, 0, 108);
    fprintf(f, "\noptions:\n");
    for (int i = 0; i < N_OPTS; i++)
        if (applies(&table[i], a->cmd)) help_line(f, a, &table[i]);
    fprintf(f, "  -h, --help          this help\n\n"
               "Exit status: 0 ok, 1 the computation failed, 2 bad input or usage (one line on standard "
               "error).\n");
}

void cli_group_usage(FILE *f, const char *group)
{
    size_t len = strlen(group);
    int first = 1;
    fprintf(f, "usage: hsdag %s <", group);
    for (int i = 0; i < CMD_COUNT_; i++)
        if (strncmp(commands[i].name, group, len) == 0 && commands[i].name[len] == ' ') {
            fprintf(f, "%s%s", first ? "" : "|", commands[i].name + len + 1);
            first = 0;
        }
    fprintf(f, "> [options]\n\n");
    for (int i = 0; i < CMD_COUNT_; i++)
        if (strncmp(commands[i].name, group, len) == 0 && commands[i].name[len] == ' ')
            fprintf(f, "  %-16s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun 'hsdag %s <subcommand> --help' for its options.\n", group);
}

/* ---- the machine-readable table (tests walk every command with it) ---- */

void cli_table_tsv(FILE *f)
{
    static const char *const kind[] = {"flag", "int", "number", "string", "choice",
                                       "in",   "out", "dir",    "list"};
    for (int i = 0; i < N_OPTS; i++) {
        const cli_opt *o = &table[i];
        fprintf(f, "%s\t%s\t%s\t%.15g\t%.15g\t", o->name, o->arg ? o->arg : "-", kind[o->kind], o->lo, o->hi);
        if (o->kind == K_CHOICE)
            for (int c = 0; o->choice(c); c++) fprintf(f, "%s%s", c ? "," : "", o->choice(c));
        else
            fputc('-', f);
        fputc('\t', f);
        int first = 1;
        for (int c = 0; c < CMD_COUNT_; c++)
            if (applies(o, (cli_cmd)c)) {
                fprintf(f, "%s%s", first ? "" : ",", commands[c].name);
                first = 0;
            }
        fputc('\n', f);
    }
}

/* ---- the README reference ---- */

/* Markdown-safe copy ('|' escaped). */
static void md(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputc('\\', f);
        fputc(*s, f);
    }
}

void cli_reference(FILE *f)
{
    fprintf(f, "| command | what it does |\n|---|---|\n");
    for (int c = 0; c < CMD_COUNT_; c++)
        fprintf(f, "| `hsdag %s%s%s` | %s |\n", commands[c].name, *commands[c].args ? " " : "",
                commands[c].args, commands[c].summary);
    fprintf(f, "\nEvery option has one meaning in every command that takes it (`tools/opt.c` holds the one "
               "table; `hsdag CMD --help` shows the lists of presets, methods and policies):\n\n"
               "| option | commands | meaning |\n|---|---|---|\n");
    for (int i = 0; i < N_OPTS; i++) {
        const cli_opt *o = &table[i];
        fprintf(f, "| `--%s%s%s` | ", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        int first = 1;
        for (int c = 0; c < CMD_COUNT_; c++)
            if (applies(o, (cli_cmd)c)) {
                fprintf(f, "%s%s", first ? "" : ", ", commands[c].name);
                first = 0;
            }
        fprintf(f, " | ");
        md(f, o->help);
        if (o->kind == K_CHOICE) {
            char ch[256];
            fprintf(f, ": ");
            md(f, choices_text(o, ch, sizeof ch));
        }
        /* the default, when one text holds for every command that takes the option */
        char d0[128] = "", d[128];
        int same = 1, seen = 0;
        for (int c = 0; c < CMD_COUNT_ && same; c++) {
            if (!applies(o, (cli_cmd)c)) continue;
            cli_args a;
            cli_args_init(&a, (cli_cmd)c);
            const char *dt = default_text(&a, o, d, sizeof d);
            if (!seen++)
                snprintf(d0, sizeof d0, "%s", dt);
            else if (strcmp(dt, d0) != 0)
                same = 0;
        }
        if (same && d0[0]) {
            fprintf(f, " (default ");
            md(f, d0);
            fprintf(f, ")");
        } else if (!same) {
            fprintf(f, " (defaults: see each command's --help)");
        }
        fprintf(f, " |\n");
    }
    fprintf(f, "\nExit status of every command: 0 ok, 1 the computation failed, 2 bad input or usage, with "
               "a one-line message on standard error naming the file and the element, or the option, its "
               "value and the accepted range.\n");
}
