/* cluster.h - the PAC-ML RAMP cluster environment: jobs arrive, a policy picks each job's maximum partition
 *   degree, the job is split, placed first-fit, simulated once (lookahead JCT) and blocked or run.
 * Not here: the learned GNN policy and its PPO trainer (pacml.h, src/learn/); this module only adapts the
 *   env to the learner's plain-data interface (hsdag_cluster_pacml_env) and runs learned episodes.
 * Entry points: hsdag_cluster_config_default, hsdag_cluster_create/free, hsdag_cluster_reset/step/obs,
 *   hsdag_cluster_run (one episode with a built-in or the learned policy), hsdag_cluster_policy_parse,
 *   hsdag_cluster_pacml_env/observe, hsdag_cluster_run_net, the hsdag_ramp_* and hsdag_beta_* helpers
 *   (exposed for tests).
 *
 * Usage:
 *   hsdag_cluster_config c = hsdag_cluster_config_default();
 *   hsdag_cluster *env; hsdag_err e = {0};
 *   if (hsdag_cluster_create(&env, &c, NULL, NULL, 0, &e) < 0) {   // NULL: the five built-in graphs
 *       puts(e.msg);
 *       return;
 *   }
 *   hsdag_cluster_reset(env, 0);
 *   while (!hsdag_cluster_done(env)) {
 *       const hsdag_cluster_obs *o = hsdag_cluster_observe(env);  // job graph, features, mask
 *       double r;
 *       hsdag_cluster_step(env, my_action(o), &r);
 *   }
 *   hsdag_cluster_metrics m;
 *   hsdag_cluster_metrics_get(env, &m);
 *   hsdag_cluster_free(env);
 */
#ifndef HSDAG_CLUSTER_H
#define HSDAG_CLUSTER_H

#include "hsdag/graph.h"
#include "hsdag/pacml.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HSDAG_CLUSTER_MAX_REPLICATION 100000                   /* copies of each graph in the job pool */
#define HSDAG_CLUSTER_MAX_DEGREE 16                            /* max_partitions_per_op */
#define HSDAG_CLUSTER_N_ACTIONS (HSDAG_CLUSTER_MAX_DEGREE + 1) /* 0 = do not place */
#define HSDAG_CLUSTER_NODE_FEATS 5
#define HSDAG_CLUSTER_EDGE_FEATS 2
#define HSDAG_CLUSTER_GRAPH_FEATS 17 /* followed by the 17-value action mask: 34 values */
/* Largest split graph the lookahead simulates: dependencies of one (model, degree) after splitting (each
 * edge between ops split kx- and ky-way becomes kx*ky deps, each k-way backward op adds k(k-1) sync deps).
 * The five PAC-ML graphs need at most 41,874; a graph above the limit at some degree is refused by
 * hsdag_cluster_create (HSDAG_ELIMIT naming the graph and degree). About 40 bytes per dependency. */
#define HSDAG_CLUSTER_MAX_SPLIT_DEPS (1 << 22)
/* The resource contract of a graph read from a file (docs/formats.md: 2 s of CPU and 256 MB per MB of
 * input): the lookahead's work and memory are linear in the split graphs' dependencies summed over the
 * degrees (about 0.17 us and 20 bytes each), so a graph may have at most HSDAG_CLUSTER_DEPS_BASE +
 * HSDAG_CLUSTER_DEPS_PER_BYTE x its file's bytes of them (the PAC-ML and PipeDream graphs: at most 5.2 per
 * byte). */
#define HSDAG_CLUSTER_DEPS_BASE (1 << 19)
#define HSDAG_CLUSTER_DEPS_PER_BYTE 10

typedef struct hsdag_cluster_config {
    int32_t n_cgs, n_racks,
        n_servers;       /* RAMP shape: communication groups x racks x servers per rack (4,4,2) */
    double worker_mem;   /* bytes per worker (80e9) */
    double node_bw;      /* total node bandwidth, B/s (1.6e12); a channel has node_bw / n_cgs */
    double prop_latency; /* s (50e-9) */
    double io_latency;   /* s (100e-9) */
    double interarrival; /* time units between arrivals (1000) */
    double horizon;      /* max simulated time (1e6): horizon/interarrival + 1 arrivals */
    double quantum;      /* min op run time quantum (0.01) */
    int32_t n_steps;     /* training steps per job (50) */
    int32_t replication; /* job pool = graphs x replication (1000; 1..HSDAG_CLUSTER_MAX_REPLICATION) */
    char beta;           /* 'A', 'B', 'C' or 'D' */
    /* 0 (reference): profile ms are used as the time unit but communication is computed in s, so it weighs
     * ~1000x too little. 1: communication times are converted to ms too (x1e3), so the whole simulator runs
     * in ms (interarrival and horizon are then ms) and communication weighs realistically. */
    int time_unit_fix;
    uint64_t beta_table_seed; /* seed of the 50,000 skew-normal draws that build the beta PMFs (19) */
} hsdag_cluster_config;

HSDAG_API hsdag_cluster_config hsdag_cluster_config_default(void);

/* One job model (a graph of the pool) as the env sees it; read-only. */
typedef struct hsdag_cluster_model {
    const char *name;
    const hsdag_graph *job; /* the unpartitioned mirrored job graph: 2n nodes, 2E+1 edges */
    int32_t n_fwd;          /* n */
    double jct_seq;         /* n_steps * sum of all 2n compute costs */
    double total_op_mem;    /* bytes, sum of memory over 2n nodes */
    double total_dep_size;  /* bytes, sum of edge sizes over 2E+1 edges */
    int32_t max_depth;      /* nodes on the longest shortest path from the first source (ddls max_depth) */
    double jct[HSDAG_CLUSTER_N_ACTIONS]; /* lookahead JCT per max degree (NAN where not placeable / a=0) */
    int32_t n_servers_empty[HSDAG_CLUSTER_N_ACTIONS]; /* servers used when placed on an empty cluster */
    int32_t n_split_ops[HSDAG_CLUSTER_N_ACTIONS];     /* ops (of 2n) split more than once */
    int32_t n_part_ops[HSDAG_CLUSTER_N_ACTIONS];      /* ops of the partitioned graph */
    int32_t n_part_deps[HSDAG_CLUSTER_N_ACTIONS];     /* deps of the partitioned graph */
    float *node_feat;                                 /* [2n * 5] */
    float *edge_feat;                                 /* [(2E+1) * 2], in the job graph's edge-id order */
} hsdag_cluster_model;

/* What a policy sees at a decision. */
typedef struct hsdag_cluster_obs {
    int32_t model; /* index into the env's models */
    const hsdag_cluster_model *m;
    double beta;    /* the job's JCT requirement factor */
    double max_jct; /* beta * jct_seq */
    double now;     /* arrival time */
    int32_t free_workers;
    int32_t jobs_running;
    uint8_t mask[HSDAG_CLUSTER_N_ACTIONS];                                 /* valid actions (mask[0] = 1) */
    float graph_feat[HSDAG_CLUSTER_GRAPH_FEATS + HSDAG_CLUSTER_N_ACTIONS]; /* 17 features + mask */
} hsdag_cluster_obs;

/* Arrivals are at t = 0, T, 2T, ... up to and including the horizon H; jobs_arrived counts them all
 * (floor(H / T) + 1: 1001 by default). A job arriving at exactly t = H gets no decision: it is counted in
 * jobs_arrived but is neither blocked nor completed, so jobs_decided = 1000 and jobs_blocked +
 * jobs_completed = jobs_decided (ddls counts the same way). */
typedef struct hsdag_cluster_metrics {
    int64_t jobs_arrived, jobs_decided, jobs_blocked, jobs_completed, jobs_accepted_at_decision;
    int64_t blocked_action0, blocked_placement, blocked_jct, blocked_horizon; /* by rule */
    /* blocked_action0 split by what the policy could have done: no worker free; workers free but no valid
     * degree both placeable now (first fit) and on time (cached JCT <= beta JCT_seq); or such a degree
     * existed and the policy refused anyway (admission control, or a mistake). */
    int64_t refused_no_worker, refused_no_fit, refused_by_choice;
    /* decisions per action taken, 0 (refuse) to 16 (an invalid action counts as 0) */
    int64_t decisions_per_degree[HSDAG_CLUSTER_N_ACTIONS];
    double blocking_rate;   /* blocked / arrived: lower is better */
    double acceptance_rate; /* completed / arrived */
    double throughput;   /* mean demand total throughput: bytes of op memory + dependency size of the accepted
                          * jobs, spread over their JCT, per time unit of the horizon (B per time unit) */
    double mean_jct;     /* over completed jobs */
    double mean_speedup; /* JCT_seq / JCT over completed jobs */
    double utilisation;  /* mean fraction of workers mounted */
    double return_;      /* sum of rewards */
} hsdag_cluster_metrics;

typedef struct hsdag_cluster hsdag_cluster;

/* Builds the env from PipeDream forward graphs (names[i] labels graphs[i]); graphs == NULL uses the five
 * built-in PAC-ML graphs. Precomputes every (model, degree) lookahead JCT (time and memory linear in the
 * split graphs' size; HSDAG_ELIMIT above HSDAG_CLUSTER_MAX_SPLIT_DEPS). */
HSDAG_API int hsdag_cluster_create(hsdag_cluster **out, const hsdag_cluster_config *c,
                                   const hsdag_graph *const *graphs, const char *const *names,
                                   int32_t n_graphs, hsdag_err *e);
/* Refuses (HSDAG_ELIMIT, naming the graph) a graph read from a src_bytes-byte file whose lookahead would pass
 * the resource contract (HSDAG_CLUSTER_DEPS_BASE + HSDAG_CLUSTER_DEPS_PER_BYTE x src_bytes dependencies) or
 * HSDAG_CLUSTER_MAX_SPLIT_DEPS at a degree, before hsdag_cluster_create simulates it. 0 or <0. */
HSDAG_API int hsdag_cluster_check_graph(const hsdag_cluster_config *c, const hsdag_graph *fwd,
                                        const char *name, size_t src_bytes, hsdag_err *e);
HSDAG_API void hsdag_cluster_free(hsdag_cluster *env);
HSDAG_API int32_t hsdag_cluster_n_models(const hsdag_cluster *env);
HSDAG_API const hsdag_cluster_model *hsdag_cluster_model_get(const hsdag_cluster *env, int32_t i);
HSDAG_API const hsdag_cluster_config *hsdag_cluster_config_get(const hsdag_cluster *env);

/* ---- RL-facing step API ---- */
HSDAG_API void hsdag_cluster_reset(hsdag_cluster *env,
                                   uint64_t seed); /* samples betas, shuffles the pool, first arrival */
HSDAG_API int hsdag_cluster_done(const hsdag_cluster *env);
HSDAG_API const hsdag_cluster_obs *hsdag_cluster_observe(const hsdag_cluster *env); /* valid while !done */
/* Applies action (0..16; invalid -> 0) to the waiting job, returns +1 (placed, meets its JCT) or -1 in
 * *reward, then advances to the next arrival (or to the end). Returns 0 or HSDAG_EINVAL if done. */
HSDAG_API int hsdag_cluster_step(hsdag_cluster *env, int action, double *reward);
HSDAG_API void hsdag_cluster_metrics_get(const hsdag_cluster *env, hsdag_cluster_metrics *m);
/* Scripted test hook: forces the next job's model and beta (model < 0 = keep the sampled one). */
HSDAG_API void hsdag_cluster_force_next(hsdag_cluster *env, int32_t model, double beta);
/* Servers the job being decided would occupy with action a now, or -1 if the placer finds no block. */
HSDAG_API int32_t hsdag_cluster_try_place(const hsdag_cluster *env, int a);
/* Same, and used[0..W) (W = servers of the shape) gets 1 for each server it would occupy (all 0 if none). */
HSDAG_API int32_t hsdag_cluster_try_place_servers(const hsdag_cluster *env, int a, uint8_t *used);
/* until[0..W): the time each server becomes free (the end time of the job on it; 0 if free now). */
HSDAG_API void hsdag_cluster_server_until(const hsdag_cluster *env, double *until);

/* ---- built-in policies ---- */
typedef enum hsdag_cluster_policy_kind {
    HSDAG_POL_PARA_MAX,
    HSDAG_POL_PARA_MIN,
    HSDAG_POL_RANDOM,
    HSDAG_POL_FIXED,
    HSDAG_POL_PARA_MIN_JCT,
    HSDAG_POL_SEQUENTIAL,
    HSDAG_POL_LOOKAHEAD,
    HSDAG_POL_LEARNED
} hsdag_cluster_policy_kind;
typedef struct hsdag_cluster_policy {
    hsdag_cluster_policy_kind kind;
    int fixed;     /* K of fixed:K; H (arrivals looked ahead) of lookahead:H:F */
    int floor_;    /* F (preferred minimum degree) of lookahead:H:F */
    char dir[256]; /* DIR of learned:DIR */
} hsdag_cluster_policy;
/* "para-max", "para-min", "random", "fixed:K", "acceptable-jct", "sequential", "lookahead[:H:F]" (default
 * 3:4),
 * "learned[:DIR]". lookahead: among degrees >= F (else any) that meet the job's deadline by the cached JCT,
 * place
 * now and end by the horizon, the one maximising the chance that the next H arrivals can be accepted (given
 * the
 * known end times of running jobs, block availability and the beta distribution); ties to least
 * worker-time. */
HSDAG_API int hsdag_cluster_policy_parse(hsdag_cluster_policy *p, const char *s, hsdag_err *e);
/* The policy registry in display order: the name as accepted ("fixed:K" stands for fixed:0..16) and one
 * line (for --help). */
typedef struct hsdag_cluster_policy_info {
    const char *name, *summary;
} hsdag_cluster_policy_info;
HSDAG_API const hsdag_cluster_policy_info *hsdag_cluster_policies(int32_t *n);
HSDAG_API const char *hsdag_cluster_policy_name(const hsdag_cluster_policy *p, char *buf, size_t cap);
/* Picks an action for the current job (rng used by "random"). Learned -> HSDAG_EUNSUPPORTED: its network is
 * loaded once per episode, so it acts inside hsdag_cluster_run. */
HSDAG_API int hsdag_cluster_policy_act(const hsdag_cluster_policy *p, const hsdag_cluster *env,
                                       hsdag_rng *rng, int *action, hsdag_err *e);
/* reset(seed) + policy until done; metrics out. "learned[:DIR]" loads DIR (a PPO or DQN policy file, or a
 * directory holding policy.bin or else beta_X[_tuf].bin for the env's setting; none = the shipped policy for
 * the env's beta, hsdag_pacml_policy_find) and runs it greedily (hsdag_cluster_run_net / _run_qnet); a
 * policy trained for another beta or time-unit setting is refused (HSDAG_EINVAL). */
HSDAG_API int hsdag_cluster_run(hsdag_cluster *env, const hsdag_cluster_policy *p, uint64_t seed,
                                hsdag_cluster_metrics *m, hsdag_err *e);

/* ---- result documents (src/cluster/result_json.c; docs/formats.md, "Result JSON") ---- */
/* "hsdag-cluster-episode/1": the policy (as hsdag_cluster_policy_name prints it), beta, seed, the metrics,
 * and the wall and CPU time of one episode (median of repeat runs). */
HSDAG_API int hsdag_cluster_episode_write_json(hsdag_buf *out, const hsdag_cluster_config *c,
                                               const char *policy, uint64_t seed,
                                               const hsdag_cluster_metrics *m, double wall_s, double cpu_s,
                                               int32_t repeat);
/* Every policy x beta distribution over the seeds: value [(policy * strlen(betas) + beta) * n_seeds + seed]. */
typedef struct hsdag_cluster_comparison {
    const char *const *policies; /* [n_policies] as given */
    int32_t n_policies;
    const char *betas; /* e.g. "ABCD" */
    const uint64_t *seeds;
    int32_t n_seeds;
    const double *blocking, *throughput; /* blocking_rate and throughput of each episode */
    double median_wall_s;                /* one episode */
} hsdag_cluster_comparison;
/* "hsdag-cluster-comparison/1": per policy and beta, mean, std and per-seed values. */
HSDAG_API int hsdag_cluster_compare_write_json(hsdag_buf *out, const hsdag_cluster_config *c,
                                               const hsdag_cluster_comparison *cmp);
/* The same as a paper-style markdown table (mean +- std). */
HSDAG_API int hsdag_cluster_compare_write_markdown(hsdag_buf *out, const hsdag_cluster_config *c,
                                                   const hsdag_cluster_comparison *cmp);
/* "hsdag-cluster-models/1": the job models (ops, deps, JCT_seq, memory, lookahead JCT per degree). */
HSDAG_API int hsdag_cluster_models_write_json(hsdag_buf *out, const hsdag_cluster *env);

/* ---- the learned PAC-ML policy on this env (src/cluster/pacml_env.c; the learner is pacml.h) ---- */
/* Fills *out with callbacks over env and env's job models, for hsdag_pacml_trainer_create and
 * hsdag_pacml_episode. env is borrowed: it must outlive every user of *out. */
HSDAG_API void hsdag_cluster_pacml_env(hsdag_pacml_env *out, hsdag_cluster *env);
/* The current decision as the learner sees it, with the mask of mode (valid while !done). */
HSDAG_API void hsdag_cluster_pacml_observe(hsdag_pacml_obs *out, const hsdag_cluster *env,
                                           hsdag_pacml_mask_mode mode);
/* One episode with a loaded network (greedy = 0 samples, with an rng seeded from seed); metrics out. */
HSDAG_API int hsdag_cluster_run_net(hsdag_cluster *env, hsdag_pacml_net *n, int greedy, uint64_t seed,
                                    hsdag_cluster_metrics *m, hsdag_err *e);
/* The same callbacks plus the extended observation the DQN needs (observe_x; docs/pacml-learning.md):
 *   per decision (8 + W values, W = servers): the fraction of the horizon left, the free fraction now and
 *     at now + {1, 2, 4, 8, 16, 32} interarrivals (from the running jobs' known end times), and each server's
 *     remaining busy time / the pool's largest JCT_seq (clipped to 1);
 *   per action a (16 values; action 0 = place nothing): the cached JCT(a) / largest JCT_seq, servers used /
 *     W, worker-time / (W x largest JCT_seq), whether it would end after the horizon, the free fraction
 *     after placing it, whether first fit would then still find a block of 2, 4, 6, 8 and 16 servers, the
 *     free fraction after it at now + {2, 8, 32} interarrivals and whether a 16-block would be free at now +
 *     {2, 4, 8} interarrivals.
 * Its step's reward counts a job that is accepted but would still run at the horizon as blocked (-1), as
 * the blocking rate does. */
HSDAG_API void hsdag_cluster_pacml_env_x(hsdag_pacml_env *out, hsdag_cluster *env);
/* One greedy episode with a loaded Q-network; metrics out. */
HSDAG_API int hsdag_cluster_run_qnet(hsdag_cluster *env, hsdag_pacml_qnet *n, uint64_t seed,
                                     hsdag_cluster_metrics *m, hsdag_err *e);

/* ---- PAC-ML training runs: DIR/checkpoint.bin of `hsdag cluster train` (src/cluster/train_run.c) ---- */
/* Appends a run: a codec frame "HSPACRUN" v2 (codec.h) holding the cluster configuration field by field,
 * then the trainer state (hsdag_pacml_trainer_save). */
HSDAG_API int hsdag_cluster_train_save(hsdag_buf *out, const hsdag_cluster_config *c,
                                       const hsdag_pacml_trainer *t, hsdag_err *e);
/* Reads a run written by hsdag_cluster_train_save, or the version-1 file of earlier builds: *c gets its
 * cluster configuration, *env a new env of the five built-in graphs made from it, *t the trainer continuing
 * on *env (iterations >= 0 replaces the saved total); the caller frees both. Every message starts with
 * `what` (the path). Errors: EPARSE (bad magic, truncated, checksum mismatch, a configuration out of range),
 * ENOMEM. */
HSDAG_API int hsdag_cluster_train_load(hsdag_cluster **env, hsdag_pacml_trainer **t, hsdag_cluster_config *c,
                                       const void *buf, size_t len, int32_t iterations, const char *what,
                                       hsdag_err *e);
/* The name of the first field in which a and b differ ("beta", "horizon", "interarrival", ...: the option
 * names of `hsdag cluster`), or NULL if they are equal. */
HSDAG_API const char *hsdag_cluster_config_diff(const hsdag_cluster_config *a, const hsdag_cluster_config *b);

/* ---- pieces exposed for tests ---- */
/* Per-op split degree: max(1, min(2*ceil(ceil(c/q)/2), a)). */
HSDAG_API int32_t hsdag_ramp_split(double compute, double quantum, int32_t a);
/* First block of `a` servers for the RAMP shape (nc, nr, ns) whose servers are all free (busy[idx] == 0,
 * idx = (c*nr + r)*ns + s), in the spec's shape and origin order. Writes a server indices to out;
 * returns 1 if found, 0 if not, -1 if `a` has no block shape. */
HSDAG_API int hsdag_ramp_find_block(int32_t *out, int32_t nc, int32_t nr, int32_t ns, const uint8_t *busy,
                                    int32_t a);
/* RAMP all-reduce time (s) of a collective of total size M bytes over servers spanning cgs groups, racks
 * rack indices and node_ids server indices (x = groups in the network). */
HSDAG_API double hsdag_ramp_allreduce_time(double M, int32_t node_ids, int32_t racks, int32_t cgs, int32_t x,
                                           double data_rate, double latency, double io_latency);
/* Beta sampler for distribution 'A'..'D' (PMF built from 50,000 skew-normal draws seeded by table_seed). */
typedef struct hsdag_beta_dist hsdag_beta_dist;
HSDAG_API hsdag_beta_dist *hsdag_beta_create(char which, uint64_t table_seed);
HSDAG_API double hsdag_beta_sample(const hsdag_beta_dist *d, hsdag_rng *r);
HSDAG_API void hsdag_beta_free(hsdag_beta_dist *d);
/* The built-in graphs (i = 0..4): writes the name and appends the PipeDream text (byte-identical to the
 * file). */
HSDAG_API int hsdag_cluster_builtin_graph(const char **name, hsdag_buf *text, int32_t i);

#ifdef __cplusplus
}
#endif
#endif
